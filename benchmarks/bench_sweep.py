"""Sweep benchmark: the speed-up from 2 local Dask workers over 1, on the same CPU-bound trials.

Each trial solves ``INSTANCES`` small random CEEI instances (20-199 users, 2-8 resources, drawn
from ``(SEED, trial)``) with fairalloc's fast path, the dual Newton method. That is about 30 ms
of numpy and Python work per trial. The script times ``run_sweep(..., out=None)`` with
``workers=1`` and with ``workers=2`` in this process, alternating them repetition by repetition.
Each timing covers the whole call: local cluster start-up, the trials, shutdown. The figure is
the ratio ``time(1 worker) / time(2 workers)``, with a target of >= 1.7 on 2 cores. The script
also times the same trials in a plain loop in this process as a reference, and it checks that
all three give identical results.

    .venv/bin/python benchmarks/bench_sweep.py                  # 200 trials, 3 repetitions
    .venv/bin/python benchmarks/bench_sweep.py --quick          # 60 trials, 1 repetition
    .venv/bin/python benchmarks/bench_sweep.py --json out.json  # also write the figures as JSON

Workers can run ``ceei_trial`` although they may not be able to import this file: when the
script runs as ``__main__``, Dask pickles the function by value.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from functools import partial

import numpy as np
from tabulate import tabulate

import fairalloc
from fairalloc.analysis.sweep import run_sweep

SEED = 20110330
INSTANCES = 48  # small CEEI instances per trial: ~30 ms on the 2-core reference machine
TARGET = 1.7  # time(1 worker) / time(2 workers)


def ceei_trial(trial: int, seed: int = SEED, instances: int = INSTANCES) -> dict:
    """Solve ``instances`` small random CEEI instances. The result is a function of ``(seed, trial)`` alone."""
    rng = np.random.default_rng([seed, trial])
    welfare, iterations = [], 0
    for _ in range(instances):
        n, m = int(rng.integers(20, 200)), int(rng.integers(2, 9))
        demand = rng.uniform(0.1, 1.0, (n, m))
        alloc = fairalloc.solve(fairalloc.Instance.from_arrays(rng.uniform(0.2, 0.5, m) * n, demand), "ceei")
        welfare.append(float(np.log(alloc.tasks).sum()))
        iterations += int(alloc.info.get("newton_iterations", 0))
    return {"nash_welfare_mean": float(np.mean(welfare)), "newton_iterations": iterations}


def trivial_trial(trial: int) -> dict:
    """No work: a sweep of these measures the engine's fixed cost (cluster start-up and shutdown)."""
    return {}


def _git() -> dict:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=os.path.dirname(os.path.abspath(__file__)),
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "fairalloc", "models", "benchmarks"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=os.path.dirname(os.path.abspath(__file__)),
        ).stdout.split("\n")
        return {"head": head or None, "uncommitted": sorted(line[3:] for line in dirty if line.strip())}
    except (OSError, subprocess.SubprocessError):
        return {}


def machine() -> dict:
    import dask
    import distributed

    return {
        "git": _git(),
        "nproc": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "dask": dask.__version__,
        "distributed": distributed.__version__,
        "fairalloc": fairalloc.__version__,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="60 trials, 1 repetition: a smoke test (the target is not judged)"
    )
    ap.add_argument("--trials", type=int, help="number of trials (default 200, 60 with --quick)")
    ap.add_argument("--repeats", type=int, help="timed repetitions of each configuration (default 3, 1 with --quick)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--strict", action="store_true", help="exit with status 1 when the target is missed")
    args = ap.parse_args(argv)
    n = args.trials or (60 if args.quick else 200)
    repeats = args.repeats or (1 if args.quick else 3)
    ids = range(n)
    info = machine()
    print(
        f"fairalloc sweep benchmark: {n} trials x {INSTANCES} CEEI instances, {repeats} repetitions, "
        f"seed {SEED}, nproc {info['nproc']}, dask {info['distributed']}, git {info['git'].get('head')}, "
        f"load {' '.join(f'{v:.2f}' for v in info['load_avg'] or [])}",
        flush=True,
    )

    # Warm-up, not timed: imports in this process (dask, distributed, tqdm) and fairalloc's solvers.
    run_sweep(partial(ceei_trial, instances=1), range(2), workers=1, progress=False)
    reference = [{"trial": t, **ceei_trial(t)} for t in range(min(n, 5))]

    serial_times, times, fixed = [], {1: [], 2: []}, {1: [], 2: []}
    results = {}
    for rep in range(repeats):
        started = time.perf_counter()
        serial = [json.loads(json.dumps({"trial": t, **ceei_trial(t)})) for t in ids]
        serial_times.append(time.perf_counter() - started)
        for workers in (1, 2):
            started = time.perf_counter()
            results[workers] = run_sweep(ceei_trial, ids, None, workers=workers, progress=False)
            times[workers].append(time.perf_counter() - started)
            started = time.perf_counter()  # the fixed cost: cluster start-up and shutdown
            run_sweep(trivial_trial, range(2 * workers), None, workers=workers, progress=False)
            fixed[workers].append(time.perf_counter() - started)
        print(
            f"  repetition {rep + 1}: serial {serial_times[-1]:.2f} s, 1 worker {times[1][-1]:.2f} s, "
            f"2 workers {times[2][-1]:.2f} s",
            flush=True,
        )
    identical = results[1] == results[2] == serial and serial[: len(reference)] == reference

    med = {w: statistics.median(t) for w, t in times.items()}
    ratio, ratio_min = med[1] / med[2], min(times[1]) / min(times[2])
    serial_med = statistics.median(serial_times)
    rows = [
        [
            "plain loop in this process (reference)",
            f"{serial_med:.2f}",
            f"{min(serial_times):.2f}",
            f"{serial_med / n * 1e3:.1f} ms per trial",
            "",
        ],
        [
            "run_sweep, 1 worker",
            f"{med[1]:.2f}",
            f"{min(times[1]):.2f}",
            f"{med[1] / serial_med:.2f}x the plain loop",
            "",
        ],
        [
            "run_sweep, 2 workers",
            f"{med[2]:.2f}",
            f"{min(times[2]):.2f}",
            f"{med[2] / serial_med:.2f}x the plain loop",
            "",
        ],
        ["speed-up: 1 worker / 2 workers", f"{ratio:.2f}x", f"{ratio_min:.2f}x", "", f">= {TARGET}x"],
        *(
            [
                f"fixed cost, {w} worker{'s' if w > 1 else ''} (trivial trials)",
                f"{statistics.median(fixed[w]):.2f}",
                f"{min(fixed[w]):.2f}",
                "cluster start-up and shutdown",
                "",
            ]
            for w in (1, 2)
        ),
    ]
    print()
    print(tabulate(rows, headers=["what", "median s", "min s", "note", "target"]))
    met = ratio >= TARGET if not args.quick else None  # --quick: too few trials to judge
    info["load_avg_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    print()
    print(
        f"results identical (serial, 1 worker, 2 workers): {identical}; target "
        f"{'not judged (--quick)' if met is None else 'met' if met else 'MISSED'}; load average at end "
        f"{' '.join(f'{v:.2f}' for v in info['load_avg_end'] or [])}"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "trials": n,
                    "instances_per_trial": INSTANCES,
                    "repeats": repeats,
                    "seed": SEED,
                    "machine": info,
                    "serial_s": serial_times,
                    "one_worker_s": times[1],
                    "two_workers_s": times[2],
                    "fixed_cost_s": {"1": fixed[1], "2": fixed[2]},
                    "speedup_median": ratio,
                    "speedup_min": ratio_min,
                    "target": TARGET,
                    "met": met,
                    "identical": identical,
                },
                fh,
                indent=2,
            )
        print(f"wrote {args.json}")
    if not identical:
        return 1
    return 1 if args.strict and met is False else 0


if __name__ == "__main__":
    sys.exit(main())
