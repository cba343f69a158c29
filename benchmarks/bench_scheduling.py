"""Algorithm 1 (DRF paper) at scale: ``DRFScheduler.run_counts`` against a plain ``heapq`` loop.

The plain loop is written here, in pure Python over lists of floats: a heap of
``(dominant share, -next task's dominant share, index)`` (the scheduler's documented tie-break),
pop the lowest, launch her task if it fits (``C + d <= R (1 + 1e-12)``), ``stop`` at the first
task that does not fit (or set the user aside: ``skip``), push her new key.  Its floating-point
operations are the scheduler's (``U_ij / (R_j w_ij)``, sequential sums), so both must give the
*same* decisions, not merely close ones:

* the task counts per user must be equal (exactly) after every run;
* the sequence of the first decisions (``--prefix``) must be equal, decision by decision, and the
  scheduler, continued from there with ``run_counts``, must still end with the same counts.

Speed: launches per second of both, measured in this process, interleaved rep by rep (median and
best of ``--repeat``); the ratio ``run_counts / plain loop`` has the target >= 2 for 1,000 users,
4 resources and 10^6 launches.  Also reported (no target): the scheduler's lean single step
(``run_counts(batch=False)``), and a ``skip`` run to exhaustion (every user is set aside one by
one at the end: the worst case for batches), a weighted run and one with a few tiny-task users.

Run: .venv/bin/python benchmarks/bench_scheduling.py [--quick] [--json FILE] [--repeat K]
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import statistics
import sys
import time

import numpy as np
from tabulate import tabulate

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import fairalloc  # noqa: E402
from fairalloc.scheduling import DRFScheduler  # noqa: E402

SEED = 20110330


# -- the plain loop ---------------------------------------------------------------------------------
def plain_loop(inst: fairalloc.Instance, max_launches: float = np.inf, policy: str = "stop", record: int = 0):
    """Algorithm 1 on ``heapq``: task counts per user (and the first ``record`` users chosen)."""
    R = [float(r) for r in inst.capacity]
    W = inst.weight_matrix().tolist()
    D = inst.demand.tolist()
    T = inst.bounds().tolist()
    n, m = len(D), len(R)
    cols = range(m)
    RW = [[R[j] * W[i][j] for j in cols] for i in range(n)]
    Rtol = [r * (1 + 1e-12) for r in R]
    neg = [-max(D[i][j] / RW[i][j] for j in cols) for i in range(n)]
    U = [[0.0] * m for _ in range(n)]
    C = [0.0] * m
    counts = [0] * n
    order = []
    heap = [(0.0, neg[i], i) for i in range(n) if T[i] > 0]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    launched = 0
    while heap and launched < max_launches:
        _, ns, i = pop(heap)
        d = D[i]
        fits = True
        for j in cols:
            if C[j] + d[j] > Rtol[j]:
                fits = False
                break
        if not fits:
            if policy == "stop":
                break
            continue  # skip: set aside for good (no releases here)
        u, rw = U[i], RW[i]
        share = 0.0
        for j in cols:
            C[j] += d[j]
            u[j] += d[j]
            v = u[j] / rw[j]
            if v > share:
                share = v
        counts[i] += 1
        launched += 1
        if len(order) < record:
            order.append(i)
        if counts[i] < T[i]:
            push(heap, (share, ns, i))
    return np.array(counts), order


# -- instances ----------------------------------------------------------------------------------------
def instance(
    n: int, m: int, launches: int, *, seed: int = SEED, weights: bool = False, tiny: int = 0, room: float = 1.0
) -> fairalloc.Instance:
    """Random demands ``U(0.1, 1)``; capacity about what ``room * launches`` average tasks use."""
    rng = np.random.default_rng(seed)
    demand = rng.uniform(0.1, 1.0, (n, m))
    if tiny:
        demand[:tiny] *= 1e-3  # a few users with tiny tasks
    capacity = room * launches * demand.mean(axis=0)
    w = rng.integers(1, 5, n).astype(float) if weights else None
    return fairalloc.Instance(capacity, demand, weights=w, name=f"random-{n}x{m}")


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def compare(label: str, inst: fairalloc.Instance, launches: float, policy: str, repeat: int, single: bool) -> dict:
    """Interleaved timings of the plain loop, ``run_counts`` (and the lean single step)."""
    times = {"plain": [], "run_counts": [], "single": []}
    counts = {}
    stats = None
    limit = None if not np.isfinite(launches) else int(launches)
    for rep in range(repeat):
        t, (counts["plain"], _) = timed(lambda: plain_loop(inst, launches, policy))
        times["plain"].append(t)
        sched = DRFScheduler(inst, policy=policy)
        t, counts["run_counts"] = timed(lambda: sched.run_counts(limit))
        times["run_counts"].append(t)
        stats = dict(sched.stats)
        if single and rep < 2:  # slow: two runs are enough
            lean = DRFScheduler(inst, policy=policy)
            t, counts["single"] = timed(lambda: lean.run_counts(limit, batch=False))
            times["single"].append(t)
    total = int(counts["plain"].sum())
    same = all(np.array_equal(counts["plain"], c) for c in counts.values())
    rate = {k: total / statistics.median(v) for k, v in times.items() if v}
    best = {k: total / min(v) for k, v in times.items() if v}
    return {
        "case": label,
        "policy": policy,
        "users": inst.n,
        "resources": inst.m,
        "launches": total,
        "same_counts": bool(same),
        "plain_per_s": rate["plain"],
        "run_counts_per_s": rate["run_counts"],
        "single_per_s": rate.get("single"),
        "ratio": rate["run_counts"] / rate["plain"],
        "ratio_best": best["run_counts"] / best["plain"],
        "single_ratio": rate["single"] / rate["plain"] if "single" in rate else None,
        "batches": stats["chunks"],
        "batched": stats["batched"],
        "single_steps": stats["single"],
        "seconds": {k: v for k, v in times.items() if v},
    }


def prefix_check(inst: fairalloc.Instance, launches: float, policy: str, prefix: int) -> dict:
    """The first ``prefix`` decisions one by one, then ``run_counts`` for the rest: against the loop."""
    counts, order = plain_loop(inst, launches, policy, record=prefix)
    sched = DRFScheduler(inst, policy=policy)
    mine = []
    for _ in range(min(prefix, int(counts.sum()))):
        mine.append(sched._decide()[0])  # the lean single step (no Launch record)
    rest = None if not np.isfinite(launches) else int(launches) - len(mine)
    sched.run_counts(rest)
    return {
        "prefix": len(order),
        "same_prefix": mine == order,
        "same_counts_after": bool(np.array_equal(sched.launched, counts)),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller runs (10^5 launches), a smoke test")
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    ap.add_argument("--repeat", type=int, default=None, help="repetitions per timing (default 5, quick 3)")
    args = ap.parse_args(argv)
    n, m = 1000, 4
    launches = 10**5 if args.quick else 10**6
    repeat = args.repeat or (3 if args.quick else 5)
    prefix = 5000 if args.quick else 20000
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)

    warm = instance(50, m, 2000)
    plain_loop(warm, 2000)
    DRFScheduler(warm).run_counts(2000)

    rows = []
    # headline: 1,000 users, 4 resources, 10^6 launches (capacity for about 1.2x that many)
    main_inst = instance(n, m, launches, room=1.2)
    rows.append(compare("headline (max_launches)", main_inst, launches, "stop", repeat, single=True))
    # the capacity ends the run (stop at the first task that does not fit)
    full = instance(n, m, launches, seed=SEED + 1)
    rows.append(compare("capacity-bound", full, np.inf, "stop", repeat, single=False))
    # skip: every user set aside one by one at the end
    rows.append(compare("capacity-bound", full, np.inf, "skip", max(1, repeat // 2), single=False))
    rows.append(
        compare(
            "weighted",
            instance(n, m, launches, seed=SEED + 2, weights=True, room=1.2),
            launches,
            "stop",
            max(1, repeat // 2),
            single=False,
        )
    )
    rows.append(
        compare(
            "10 tiny-task users",
            instance(n, m, launches, seed=SEED + 3, tiny=10, room=1.2),
            launches,
            "stop",
            max(1, repeat // 2),
            single=False,
        )
    )

    checks = [
        dict(case="headline", **prefix_check(main_inst, launches, "stop", prefix)),
        dict(case="capacity-bound skip", **prefix_check(full, np.inf, "skip", prefix)),
    ]

    table = [
        [
            r["case"],
            r["policy"],
            f"{r['users']}x{r['resources']}",
            r["launches"],
            r["same_counts"],
            f"{r['plain_per_s']:,.0f}",
            f"{r['run_counts_per_s']:,.0f}",
            f"{r['ratio']:.1f}x ({r['ratio_best']:.1f}x)",
            "-" if r["single_per_s"] is None else f"{r['single_per_s']:,.0f} ({r['single_ratio']:.2f}x)",
            f"{r['batches']} / {r['batched']} / {r['single_steps']}",
        ]
        for r in rows
    ]
    print(
        tabulate(
            table,
            headers=[
                "case",
                "policy",
                "n x m",
                "launches",
                "same counts",
                "plain loop /s",
                "run_counts /s",
                "ratio median (best)",
                "lean step /s (ratio)",
                "batches / batched / single",
            ],
        )
    )
    print()
    print(
        tabulate(
            [[c["case"], c["prefix"], c["same_prefix"], c["same_counts_after"]] for c in checks],
            headers=["prefix check", "decisions", "same sequence", "same counts after run_counts"],
        )
    )
    head = rows[0]
    ok = all(r["same_counts"] for r in rows) and all(c["same_prefix"] and c["same_counts_after"] for c in checks)
    met = head["ratio"] >= 2
    print(
        f"\nheadline: {head['ratio']:.1f}x the plain loop (target >= 2x): {'met' if met else 'MISSED'}; "
        f"decisions identical: {ok}"
    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "quick": args.quick,
                    "repeat": repeat,
                    "rows": rows,
                    "checks": checks,
                    "target_met": met,
                    "identical": ok,
                },
                fh,
                indent=2,
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
