"""Table-2 benchmark: how long ``fairalloc table2 --trials 200`` takes on this machine.

Issue 18's figure: the whole empirical Table 2 (every static mechanism, the production policies
included, so the queue instances and all twelve properties: 14 mechanisms x 12 properties = 168
cells) with 200 random instances per cell, under 5 minutes on 2 cores. Unlike the ratios of the
other benchmarks this target is a wall-clock time, because it is what a user waits for; the
script therefore also prints the load average at the start and the end, and the trials per second.

The command runs as a user runs it, in a fresh process (``python -m fairalloc table2 --trials N
--format json``, all cores), its standard error (the progress lines) passed through. ``--quick``
runs 20 trials per cell and extrapolates the 200-trial time from its trials per second (marked
as extrapolated: the start-up of the workers is then counted ten times over, so the figure errs
on the slow side).

    .venv/bin/python benchmarks/bench_table2.py                 # 200 trials per cell
    .venv/bin/python benchmarks/bench_table2.py --quick         # 20, and extrapolate
    .venv/bin/python benchmarks/bench_table2.py --json benchmarks/results_table2.json
    .venv/bin/python benchmarks/bench_table2.py --table table.json   # keep the table to compare

A missed target prints ``TARGET MISSED``; the exit status stays 0 (``--strict``: 1).
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import time
from pathlib import Path

from provenance import commit, load_average, machine

ROOT = Path(__file__).resolve().parent.parent
TRIALS = 200
TARGET_SECONDS = 300.0  # 5 minutes, on 2 cores


def run_table2(trials: int) -> tuple[float, list[dict]]:
    """(wall seconds, the JSON table) of ``fairalloc table2 --trials trials`` in a fresh process."""
    args = [sys.executable, "-m", "fairalloc", "table2", "--trials", str(trials), "--format", "json", "--no-progress"]
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[1:])} failed with exit code {proc.returncode}")
    return seconds, json.loads(proc.stdout)


def trials_run(table: list[dict]) -> int:
    """How many random instances the JSON table's cells were checked on, together."""
    return sum(int(cell["trials"]) for cell in table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="20 trials per cell, the 200-trial time extrapolated")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--strict", action="store_true", help="exit status 1 when the target is missed")
    ap.add_argument("--table", metavar="FILE", help="also write the table's JSON (to compare two commits' cells)")
    args = ap.parse_args()
    trials = 20 if args.quick else TRIALS
    load = load_average()
    seconds, table = run_table2(trials)
    n_cells, done = len(table), trials_run(table)
    per_second = done / seconds
    full = seconds if trials == TRIALS else n_cells * TRIALS / per_second
    met = full < TARGET_SECONDS
    end = load_average()
    if args.table:
        Path(args.table).write_text(json.dumps(table, indent=2) + "\n")
    print(f"table2 --trials {trials}: {n_cells} cells, {done:,} trials in {seconds:.1f} s ({per_second:.1f} trials/s)")
    label = "measured" if trials == TRIALS else "extrapolated"
    verdict = "" if met else "  TARGET MISSED"
    print(f"table2 --trials {TRIALS}: {full / 60:.1f} min ({label}; target < {TARGET_SECONDS / 60:.0f} min){verdict}")
    print(f"load average: {load} at the start, {end} at the end (commit {commit()})")
    if args.json:
        out = {
            "benchmark": "table2",
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "commit": commit(),
            "machine": machine(),
            "load_average": {"start": load, "end": end},
            "trials_per_cell": trials,
            "cells": n_cells,
            "seconds": round(seconds, 1),
            "trials_per_second": round(per_second, 1),
            "seconds_at_200": round(full, 1),
            "extrapolated": trials != TRIALS,
            "target_seconds": TARGET_SECONDS,
            "met": met,
        }
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    if args.strict and not met:
        sys.exit(1)


if __name__ == "__main__":
    main()
