"""Alpha-fairness benchmark: the dual Newton fast path against the cvxpy program, same process.

For alpha in {0.5, 2, 5} on N users x 8 resources (random demands, fixed seed): the program's
time (cvxpy + Clarabel) divided by the fast path's (median of repetitions, interleaved), and the
relative difference of their welfare (the fast path should be at least as good).  Also the time
of one ``fairalloc tradeoff``-style frontier (6 alphas + 4 reference mechanisms, no properties)
against the same 10 solves without the measures (envy is an n x n comparison).

    .venv/bin/python benchmarks/bench_alpha.py                 # 10,000 users
    .venv/bin/python benchmarks/bench_alpha.py --users 1000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from tabulate import tabulate

import fairalloc
from fairalloc.analysis.tradeoff import frontier

SEED = 7


def instance(n: int, m: int = 8) -> fairalloc.Instance:
    rng = np.random.default_rng(SEED)
    demand = rng.uniform(0.1, 4.0, size=(n, m))
    capacity = demand.sum(axis=0) * 3  # 3 tasks of every user; they want unbounded tasks
    return fairalloc.Instance.from_arrays(capacity, demand)


def timed(fn, repeats: int):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    inst = instance(args.users)
    rows, figures = [], []
    for alpha in (0.5, 2.0, 5.0):
        name = f"alpha-fair:{alpha:g}"
        t_fast, fast = timed(lambda: fairalloc.solve(inst, name, "fast"), args.repeats)
        figure = {"alpha": alpha, "users": args.users, "fast_s": t_fast,
                  "newton_iterations": fast.info.get("newton_iterations")}  # fmt: skip
        try:
            t_prog, prog = timed(lambda: fairalloc.solve(inst, name, "program"), max(1, args.repeats - 1))
        except fairalloc.FairallocError as exc:  # the solver's numerical trouble is a figure, not a crash
            figure["program_failed"] = str(exc).splitlines()[0]
            figures.append(figure)
            rows.append([name, f"{t_fast:.3f}", "FAILED", "-", "-", "-", figure["newton_iterations"]])
            continue
        welfare_gap = (fast.info["welfare"] - prog.info["welfare"]) / max(1.0, abs(prog.info["welfare"]))
        task_gap = float(np.max(np.abs(fast.tasks - prog.tasks) / np.maximum(1.0, np.abs(prog.tasks))))
        figure.update(program_s=t_prog, speedup=t_prog / t_fast, welfare_fast_minus_program_rel=welfare_gap,
                      max_task_diff_rel=task_gap)  # fmt: skip
        figures.append(figure)
        rows.append(
            [
                name,
                f"{t_fast:.3f}",
                f"{t_prog:.3f}",
                f"{t_prog / t_fast:.0f}x",
                f"{welfare_gap:+.1e}",
                f"{task_gap:.1e}",
                figure["newton_iterations"],
            ]
        )
    points = [f"alpha-fair:{a}" for a in ("0", "0.5", "1", "2", "5", "inf")] + ["drf", "ceei", "asset", "utilitarian"]
    small = instance(min(args.users, 1000))  # envy is O(n^2 m): the frontier at 1,000 users at most
    t_solves, _ = timed(lambda: [fairalloc.solve(small, p) for p in points], 1)
    t_front, _ = timed(lambda: frontier(small), 1)
    figures.append(
        {
            "frontier_users": small.n,
            "frontier_s": t_front,
            "solves_s": t_solves,
            "frontier_over_solves": t_front / t_solves,
        }
    )
    print(f"alpha-fair on {args.users:,} users x 8 resources (fast = dual Newton, program = cvxpy + Clarabel)")
    print(
        tabulate(
            rows,
            [
                "mechanism",
                "fast s",
                "program s",
                "program / fast",
                "welfare fast - program (rel)",
                "max task diff (rel)",
                "Newton its",
            ],
            disable_numparse=True,
        )
    )
    print(
        f"frontier on {small.n:,} users (6 alphas + drf, ceei, asset, utilitarian, with every measure): "
        f"{t_front:.2f} s = "
        f"{t_front / t_solves:.2f}x the same 10 solves alone ({t_solves:.2f} s)"
    )
    for f in figures:
        if "program_failed" in f:
            print(f"alpha-fair:{f['alpha']:g} program FAILED: {f['program_failed']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
