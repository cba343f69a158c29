"""DMFA-SRQ benchmark (issues 5 and 18), speed as ratios measured in this process.

1. The fast path against the per-arrival LP (pulp + HiGHS) on the same random arrival sequence:
   agreement of every M^k and the speed-up, at 100 and 500 users (targets: >= 100x, 1e-9 at 500).
2. Linear time: the fast path's time per arrival at 20,000 and 200,000 arrivals x 4 resources
   (target: the ratio within 1.5).
3. The former step (``threshold_step``: prefix and suffix sums over all users at every arrival,
   ``O(k m)``) on the same 20,000 arrivals: agreement of every M^k with the fast path (target
   1e-6 relative) and its time; its growth exponent from 2,000 to 10,000 arrivals, which
   extrapolates it to 670,000 arrivals.
4. 670,000 arrivals x 4 resources (the Google 2011 trace's scale) with the fast path: seconds,
   beside the former step's extrapolated seconds.

Run: .venv/bin/python benchmarks/bench_dynamic.py [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from tabulate import tabulate

import fairalloc
from fairalloc.engines.dynamic import normalised
from fairalloc.models.dmfa_srq import threshold_step

TRACE_ARRIVALS = 670_000


def sequence(n: int, m: int, seed: int) -> fairalloc.Instance:
    rng = np.random.default_rng(seed)
    demand = rng.uniform(0.05, 1.0, (n, m))
    q = rng.dirichlet(np.ones(n))
    return fairalloc.Instance(np.ones(m), demand, shared=q, name=f"random-{n}x{m}")


def timed(fn, repeat: int = 1):
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def fast_vs_lp(n: int, m: int = 2) -> dict:
    inst = sequence(n, m, seed=n)
    t_fast, fast = timed(lambda: fairalloc.solve(inst, "dmfa-srq", method="fast"), repeat=5)
    t_lp, lp = timed(lambda: fairalloc.solve(inst, "dmfa-srq", method="program"))
    a, b = fast.history.M, lp.history.M
    diff = float(np.max(np.abs(a - b) / np.maximum(1, np.maximum(np.abs(a), np.abs(b)))))
    return {
        "users": n,
        "resources": m,
        "fast_s": t_fast,
        "lp_s": t_lp,
        "speedup": t_lp / t_fast,
        "max_rel_diff_M": diff,
    }


def former_step(inst: fairalloc.Instance) -> np.ndarray:
    """Every M^k by :func:`threshold_step` over all users present (the step before issue 18)."""
    d = normalised(inst, "dmfa-srq")
    qd, pools = inst.shared[:, None] * d, np.cumsum(inst.shared)
    W, M = np.zeros(0), np.zeros(inst.n)
    for k in range(inst.n):
        W = np.append(W, 0.0)
        M[k], _ = threshold_step(W, qd[: k + 1], float(pools[k]))
        W = np.maximum(W, M[k])
    return M


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(1, np.maximum(np.abs(a), np.abs(b)))))


def per_arrival(small: int, large: int, m: int = 4) -> dict:
    """Seconds per arrival of the fast path at two sizes, interleaved rep by rep."""
    times: dict[int, list[float]] = {small: [], large: []}
    for _ in range(3):
        for n in (small, large):
            inst = sequence(n, m, seed=n)
            t, _ = timed(lambda inst=inst: fairalloc.solve(inst, "dmfa-srq", method="fast"))
            times[n].append(t / n)
    us = {n: float(np.median(v)) * 1e6 for n, v in times.items()}
    return {"arrivals": [small, large], "us_per_arrival": [us[small], us[large]], "ratio": us[large] / us[small]}


def against_former(n: int, growth_sizes: list[int], m: int = 4) -> dict:
    inst = sequence(n, m, seed=n)
    t_fast, fast = timed(lambda: fairalloc.solve(inst, "dmfa-srq", method="fast"))
    t_old, old = timed(lambda: former_step(inst))
    sizes, seconds = [], []
    for size in growth_sizes:
        small = sequence(size, m, seed=size)
        t, _ = timed(lambda small=small: former_step(small))
        sizes.append(size)
        seconds.append(t)
    slope = float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])
    return {
        "arrivals": n,
        "fast_s": t_fast,
        "former_s": t_old,
        "max_rel_diff_M": relative(fast.history.M, old),
        "former_growth_sizes": sizes,
        "former_growth_seconds": seconds,
        "former_growth_exponent": slope,
    }


def trace_scale(n: int, former: dict, m: int = 4) -> dict:
    inst = sequence(n, m, seed=n)
    t, alloc = timed(lambda: fairalloc.solve(inst, "dmfa-srq", method="fast"))
    # sharing incentive x_k^k = q_k M^k >= q_k, to 1e-12 of capacity (M^k itself is ill-set for tiny q_k)
    assert np.all(np.isfinite(alloc.tasks)) and np.all((alloc.history.M - 1) * alloc.history.q >= -1e-12)
    sizes, seconds = former["former_growth_sizes"], former["former_growth_seconds"]
    extrapolated = seconds[-1] * (n / sizes[-1]) ** former["former_growth_exponent"]
    return {"arrivals": n, "resources": m, "fast_s": t, "former_extrapolated_s": extrapolated}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    pairs = [fast_vs_lp(n) for n in ((50, 100) if args.quick else (100, 500))]
    linear = per_arrival(*((2000, 20000) if args.quick else (20_000, 200_000)))
    former = against_former(*((2000, [500, 1000, 2000]) if args.quick else (20_000, [2000, 5000, 10_000])))
    scale = trace_scale(67_000 if args.quick else TRACE_ARRIVALS, former)
    rows = [
        [
            f"fast vs LP, {p['users']} users x {p['resources']}",
            f"{p['fast_s']:.4f} s",
            f"{p['lp_s']:.2f} s",
            f"{p['speedup']:.0f}x",
            f"{p['max_rel_diff_M']:.1e}",
        ]
        for p in pairs
    ]
    rows.append(
        [
            f"fast vs former step, {former['arrivals']:,} x 4",
            f"{former['fast_s']:.2f} s",
            f"{former['former_s']:.1f} s",
            f"{former['former_s'] / former['fast_s']:.0f}x",
            f"{former['max_rel_diff_M']:.1e}",
        ]
    )
    print(tabulate(rows, ["measurement", "fast", "other", "speed-up", "max |M diff| (rel)"]))
    print()
    a, b = linear["arrivals"]
    print(
        f"time per arrival: {linear['us_per_arrival'][0]:.1f} us at {a:,}, {linear['us_per_arrival'][1]:.1f} us at "
        f"{b:,} arrivals x 4: ratio {linear['ratio']:.2f} (target <= 1.5)"
    )
    print(
        f"former step's growth exponent ({', '.join(map(str, former['former_growth_sizes']))}): "
        f"{former['former_growth_exponent']:.2f}"
    )
    print(
        f"{scale['arrivals']:,} arrivals x {scale['resources']}: fast path {scale['fast_s']:.1f} s; the former step, "
        f"extrapolated: {scale['former_extrapolated_s']:,.0f} s ({scale['former_extrapolated_s'] / 3600:.1f} h)"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"fast_vs_lp": pairs, "linear": linear, "former": former, "trace_scale": scale}, fh, indent=2)


if __name__ == "__main__":
    main()
