"""DMFA-SRQ benchmark (issue 5), speed as ratios measured in this process.

1. The fast threshold step against the per-arrival LP (pulp + HiGHS) on the same random arrival
   sequence: agreement of every M^k and the speed-up, at 100 and 500 users (target >= 100x at 500).
2. 10,000 arrivals x 4 resources with the fast path: time, and the growth exponent of the time
   from 1,000 to 10,000 users (slope of log time against log n; O(n^2 m) predicts 2).

Run: .venv/bin/python benchmarks/bench_dynamic.py [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from tabulate import tabulate

import fairalloc


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


def scaling(sizes: list[int], m: int = 4) -> dict:
    times = []
    for n in sizes:
        inst = sequence(n, m, seed=7)
        t, alloc = timed(lambda: fairalloc.solve(inst, "dmfa-srq", method="fast"), repeat=1 if n > 4000 else 2)
        assert np.all(np.isfinite(alloc.tasks))
        times.append(t)
    slope = float(np.polyfit(np.log(sizes), np.log(times), 1)[0])
    return {"sizes": sizes, "seconds": times, "growth_exponent": slope, "resources": m}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    pairs = [fast_vs_lp(n) for n in ((50, 100) if args.quick else (100, 500))]
    growth = scaling([250, 500, 1000] if args.quick else [1000, 2000, 4000, 7000, 10000])
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
    print(tabulate(rows, ["measurement", "fast", "per-arrival LP", "speed-up", "max |M diff| (rel)"]))
    print()
    print(
        tabulate(
            [[n, f"{t:.3f}"] for n, t in zip(growth["sizes"], growth["seconds"])],
            [f"arrivals (x {growth['resources']} resources)", "fast path seconds"],
        )
    )
    print(
        f"growth exponent (log-log slope, {growth['sizes'][0]}..{growth['sizes'][-1]}): {growth['growth_exponent']:.2f}"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"fast_vs_lp": pairs, "scaling": growth}, fh, indent=2)


if __name__ == "__main__":
    main()
