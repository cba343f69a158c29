"""Peak memory of the static fast paths (issue 18): DRF, Asset Fairness and CEEI on 1M x 8.

Each measurement runs in a fresh subprocess, which imports fairalloc and warms every code path up
on a small instance (lazy imports, BLAS buffers), then fills the demand matrix in place (no
temporaries: 1,000,000 x 8 float64 = 64 MB) and reads its peak resident set size
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, a high-water mark).  It then builds the
:class:`fairalloc.Instance` from that matrix and allocates with ``method="fast"`` (certificate
included), and reads the peak again.  The figure is the growth of the peak: the memory the
Instance and the mechanism needed beyond the demand matrix the caller already holds, as a ratio
to the matrix's size (target: <= 2.5).

    .venv/bin/python benchmarks/bench_memory.py                                  # 1M x 8
    .venv/bin/python benchmarks/bench_memory.py --users 200000                   # smaller
    .venv/bin/python benchmarks/bench_memory.py --json benchmarks/results_memory.json

The JSON file keeps the figures under ``current``; a ``previous`` key already in the file (the
figures before the issue-18 changes, measured the same way at commit 1ea22ea) is kept as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from provenance import update_json
from tabulate import tabulate

MECHANISMS = ("drf", "asset", "ceei")
TARGET = 2.5

_CHILD = r"""
import gc, json, resource, sys
import numpy as np
import fairalloc

mech, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux

def fill(D):
    rng = np.random.default_rng(0)
    rng.random(out=D)  # U(0.1, 1), in place
    D *= 0.9
    D += 0.1

small = np.empty((2000, m))
fill(small)
fairalloc.solve(fairalloc.Instance(np.full(m, 0.3 * 2000), small), mech, method="fast")  # warm-up
del small
gc.collect()
D = np.empty((n, m))
fill(D)
R = np.full(m, 0.3 * n)
gc.collect()
before = peak()
allocation = fairalloc.solve(fairalloc.Instance(R, D), mech, method="fast")
after = peak()
print(json.dumps({"matrix": D.nbytes, "before": before, "after": after, "tasks_sum": float(allocation.tasks.sum())}))
"""


def measure(mechanism: str, n: int, m: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, mechanism, str(n), str(m)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1")},
    )
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["peak_growth"] = row["after"] - row["before"]
    row["ratio"] = row["peak_growth"] / row["matrix"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--resources", type=int, default=8)
    parser.add_argument("--json", metavar="FILE", help="write the figures (keeps a 'previous' key already there)")
    parser.add_argument("--strict", action="store_true", help="exit status 1 when a ratio is above the target")
    args = parser.parse_args()
    rows = {mech: measure(mech, args.users, args.resources) for mech in MECHANISMS}
    mib = 2**20
    print(
        tabulate(
            [
                [
                    f"{mech} fast ({args.users:,} x {args.resources})",
                    f"{r['matrix'] / mib:.0f}",
                    f"{r['peak_growth'] / mib:.0f}",
                    f"{r['ratio']:.2f}",
                    f"<= {TARGET}",
                    r["ratio"] <= TARGET,
                ]
                for mech, r in rows.items()
            ],
            ["measurement", "matrix MiB", "peak growth MiB", "ratio", "target", "met"],
        )
    )
    if args.json:
        current = {"users": args.users, "resources": args.resources, "target": TARGET, "rows": rows}
        update_json(args.json, {"current": current})
    if args.strict and any(r["ratio"] > TARGET for r in rows.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
