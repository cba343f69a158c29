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
check by the workload loader against the case).  Best of ``--rounds`` each.

Run: .venv/bin/python benchmarks/bench_import_records.py [--pods N] [--rounds R] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from provenance import commit, load_average, machine, update_json

from fairalloc.io.cases import parse_case
from fairalloc.io.importers.common import Notes, read_documents
from fairalloc.io.importers.records import checked_workload

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


def best(rounds: int, run) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the results to this file (keeping its other keys)")
    args = ap.parse_args()
    start = {"commit_measured": commit(), "load_average": {"start": load_average()}, "machine": machine()}
    instance = case().instance
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pods.json"
        path.write_text(json.dumps(pods(args.pods, args.seed), separators=(",", ":")))
        size = path.stat().st_size

        def load() -> None:
            with open(path) as f:
                json.load(f)

        jobs: dict = {}

        def imported() -> None:
            workload, _ = checked_workload(read_documents([str(path)]), instance, Notes())
            jobs["n"] = len(workload["jobs"])

        json_seconds = best(args.rounds, load)
        import_seconds = best(args.rounds, imported)
    ratio = import_seconds / json_seconds
    row = {
        "pods": args.pods,
        "file_bytes": size,
        "jobs": jobs["n"],
        "json_load_seconds": round(json_seconds, 4),
        "import_seconds": round(import_seconds, 4),
        "ratio": round(ratio, 2),
        "target": TARGET,
    }
    print(
        f"{args.pods:,} pods ({size / 2**20:.1f} MiB): json.load {json_seconds:.3f} s, import --jobs "
        f"{import_seconds:.3f} s ({jobs['n']:,} jobs): {ratio:.2f}x (target {TARGET:g}x)"
    )
    start["load_average"]["end"] = load_average()
    if args.json:
        update_json(args.json, start | {"import_records": row}, indent=1)


if __name__ == "__main__":
    main()
