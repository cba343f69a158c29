"""Reading what ran (``fairalloc import --jobs``): 100,000 pods with their times, in one
``kubectl get pods -o json`` List, read into a checked job workload, as a ratio to ``json.load`` of
the same file timed in the same process (target: within 3x).

The pods (deterministic for --seed): in 20 namespaces (the queues of the case they are checked
against), one container each requesting 100m..4 CPUs and 128Mi..8Gi; created over a day, started
0..120 s after, a third still Running (they run to the end of the window), the others Succeeded
0.5..60 min after their start (``containerStatuses[0].state.terminated.finishedAt``).  Timed: the
whole reading of ``--jobs`` short of writing the YAML: the file read and parsed
(:func:`~fairalloc.io.importers.common.read_documents`), every pod read through its shape and its
times (:func:`~fairalloc.io.importers.records.checked_workload`: the records, the workload and its
check by the workload loader against the case), each phase timed on its own: ``parse`` (the file
into documents, the code every import shares), ``records`` (this reader), ``workload`` (run times
and the mapping) and ``check`` (:func:`~fairalloc.io.job_workloads.parse_job_workload`).  Best of
``--rounds`` each, twice: with the garbage collector as a command runs it (``gc_on``: its passes over
the 100,000s of objects alive count, and they slow ``json.load`` too), and collected before and
disabled during each timing (``gc_off``, as bench_static.py and bench_queues.py time: steadier).

Run: .venv/bin/python benchmarks/bench_import_records.py [--pods N] [--rounds R] [--json FILE]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from provenance import commit, load_average, machine, update_json

from fairalloc.io.cases import parse_case
from fairalloc.io.importers.common import Notes, read_documents
from fairalloc.io.importers.records import read_records, workload_of
from fairalloc.io.job_workloads import parse_job_workload

NAMESPACES = 20
TARGET = 3.0
ORIGIN = datetime(2024, 3, 1, tzinfo=UTC)


def stamp(seconds: float) -> str:
    return (ORIGIN + timedelta(seconds=int(seconds))).isoformat().replace("+00:00", "Z")


def pods(n: int, seed: int) -> dict:
    """``n`` pods as one List (module docstring)."""
    rng = random.Random(seed)
    items = []
    for k in range(n):
        created = rng.uniform(0, 86_400)
        started = created + rng.uniform(0, 120)
        running = rng.random() < 1 / 3
        state = {"running": {"startedAt": stamp(started)}}
        if not running:
            state = {"terminated": {"startedAt": stamp(started), "finishedAt": stamp(started + rng.uniform(30, 3600))}}
        requests = {"cpu": f"{rng.randint(1, 40) * 100}m", "memory": f"{rng.choice([128, 256, 512, 1024, 8192])}Mi"}
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"job-{k}",
                    "namespace": f"team-{k % NAMESPACES}",
                    "creationTimestamp": stamp(created),
                    "labels": {"app": "batch"},
                },
                "spec": {"containers": [{"name": "main", "image": "busybox", "resources": {"requests": requests}}]},
                "status": {
                    "phase": "Running" if running else "Succeeded",
                    "startTime": stamp(started),
                    "containerStatuses": [{"name": "main", "state": state}],
                },
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items}


def case():
    users = {f"team-{k}": {} for k in range(NAMESPACES)}
    return parse_case({"name": "teams", "resources": {"cpu": 1000, "memory": 2**42}, "users": users}, "teams")


def best(rounds: int, run, collector: bool) -> dict[str, float]:
    """The fastest of ``rounds`` runs of ``run`` (which returns its phases' seconds, or ``None``:
    timed whole), collector on or off."""
    times = []
    for _ in range(rounds):
        gc.collect()
        if not collector:
            gc.disable()
        try:
            t = time.perf_counter()
            phases = run() or {}
            times.append({"total": time.perf_counter() - t, **phases})
        finally:
            gc.enable()
    return min(times, key=lambda row: row["total"])


def importer(path: Path, instance, jobs: dict):
    def run() -> dict[str, float]:
        t0 = time.perf_counter()
        docs = read_documents([str(path)])
        t1 = time.perf_counter()
        notes = Notes()
        records = read_records(docs, notes)
        t2 = time.perf_counter()
        workload, _ = workload_of(records, notes)
        t3 = time.perf_counter()
        parse_job_workload(workload, instance, "jobs")
        t4 = time.perf_counter()
        jobs["n"] = len(workload["jobs"])
        return {"parse": t1 - t0, "records": t2 - t1, "workload": t3 - t2, "check": t4 - t3}

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the results to this file (keeping its other keys)")
    args = ap.parse_args()
    start = {"commit_measured": commit(), "load_average": {"start": load_average()}, "machine": machine()}
    instance = case().instance
    row: dict = {"pods": args.pods, "target": TARGET}
    jobs: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pods.json"
        path.write_text(json.dumps(pods(args.pods, args.seed), separators=(",", ":")))
        row["file_bytes"] = path.stat().st_size

        def load() -> None:
            with open(path) as f:
                json.load(f)

        for mode, collector in (("gc_on", True), ("gc_off", False)):
            json_seconds = best(args.rounds, load, collector)["total"]
            phases = best(args.rounds, importer(path, instance, jobs), collector)
            row[mode] = {
                "json_load_seconds": round(json_seconds, 4),
                **{f"{k}_seconds": round(v, 4) for k, v in phases.items()},
                "ratio": round(phases["total"] / json_seconds, 2),
                **{f"{k}_ratio": round(v / json_seconds, 2) for k, v in phases.items() if k != "total"},
            }
            print(
                f"{args.pods:,} pods ({row['file_bytes'] / 2**20:.1f} MiB), collector {mode[3:]}: json.load "
                f"{json_seconds:.3f} s, import --jobs {phases['total']:.3f} s: {row[mode]['ratio']:.2f}x "
                f"(target {TARGET:g}x; parse {row[mode]['parse_ratio']}x, records {row[mode]['records_ratio']}x, "
                f"workload {row[mode]['workload_ratio']}x, check {row[mode]['check_ratio']}x)"
            )
    row["jobs"] = jobs["n"]
    start["load_average"]["end"] = load_average()
    if args.json:
        update_json(args.json, start | {"import_records": row}, indent=1)


if __name__ == "__main__":
    main()
