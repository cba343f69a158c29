"""Simulator throughput: replay ~1,000,000 tasks on 400 nodes with DRF and report events per second.

Workload (synthetic, deterministic for --seed): 400 nodes of 16 CPU / 32 GB (the DRF paper's
section 7.3 node); ``--tasks`` tasks in jobs of ``--tasks-per-job`` (default 100, so 10,000 jobs)
owned round-robin by ``--users`` users; per job one task shape (CPU uniform in 1..4, memory
uniform in 1..8 GB); task durations exponential, mean 30 s; Poisson job arrivals with the mean
inter-arrival chosen so the offered CPU load is about 90% of the cluster. Single-phase jobs.

Reported: workload build + validation time, simulation wall time, events (arrivals + task
finishes) and events per second, tasks launched per second, and as a floor for comparison a
plain-Python baseline (no numpy anywhere, like the simulator): the same number of events pushed
through a bare ``heapq`` with no scheduling at all. Also a smaller run with ``slots:12``.

Run: .venv/bin/python benchmarks/bench_simulator.py [--tasks N] [--nodes N] [--json FILE]
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import time

from fairalloc.scheduling.simulator import simulate
from fairalloc.scheduling.workloads import Job, Task, Workload, validate


def build(tasks: int, nodes: int, users: int, per_job: int, seed: int) -> Workload:
    rng = random.Random(seed)
    n_jobs = -(-tasks // per_job)
    node_cpu, node_mem, mean_dur = 16.0, 32.0, 30.0
    mean_cpu = 2.5
    # offered CPU work per job / (capacity * 0.9) = mean inter-arrival
    gap = per_job * mean_cpu * mean_dur / (nodes * node_cpu * 0.9)
    jobs, t, left = [], 0.0, tasks
    for k in range(n_jobs):
        n = min(per_job, left)
        left -= n
        cpu, mem = float(rng.randint(1, 4)), float(rng.randint(1, 8))
        jobs.append(
            Job(
                f"job-{k}",
                f"user-{k % users}",
                round(t, 3),
                (tuple(Task(cpu, mem, round(max(0.5, rng.expovariate(1 / mean_dur)), 3)) for _ in range(n)),),
            )
        )
        t += rng.expovariate(1 / gap)
    return Workload(nodes, node_cpu, node_mem, tuple(jobs), f"synthetic-{tasks}")


def heap_baseline(n_events: int, nodes: int, seed: int) -> float:
    """Events per second of a bare heapq replay: push every task's finish, pop them in order."""
    rng = random.Random(seed)
    start = time.perf_counter()
    heap, seq = [], 0
    for _ in range(min(n_events, 4 * nodes * 16)):  # keep ~ as many in flight as the cluster holds
        heapq.heappush(heap, (rng.random() * 30, seq, None))
        seq += 1
    done = 0
    while heap and done < n_events:
        t, _, _ = heapq.heappop(heap)
        done += 1
        if seq < n_events:
            heapq.heappush(heap, (t + rng.random() * 60, seq, None))
            seq += 1
    return done / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=1_000_000)
    ap.add_argument("--nodes", type=int, default=400)
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--tasks-per-job", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--slots-tasks", type=int, default=200_000, help="tasks for the slots:12 run (0: skip)")
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args()

    t0 = time.perf_counter()
    w = build(args.tasks, args.nodes, args.users, args.tasks_per_job, args.seed)
    t1 = time.perf_counter()
    validate(w)
    t2 = time.perf_counter()
    out = {
        "tasks": w.n_tasks,
        "jobs": len(w.jobs),
        "nodes": w.nodes,
        "users": args.users,
        "build_seconds": round(t1 - t0, 2),
        "validate_seconds": round(t2 - t1, 2),
        "runs": [],
    }
    print(
        f"workload: {w.n_tasks:,} tasks, {len(w.jobs):,} jobs, {args.users} users, {w.nodes} nodes "
        f"(build {t1 - t0:.1f} s, validate {t2 - t1:.1f} s)"
    )
    runs = [("drf", w)]
    if args.slots_tasks:
        runs.append(
            (
                "slots:12",
                build(min(args.slots_tasks, args.tasks), args.nodes, args.users, args.tasks_per_job, args.seed),
            )
        )
    for name, wl in runs:
        r = simulate(wl, name, samples=200)
        row = {
            "scheduler": name,
            "tasks": wl.n_tasks,
            "events": r.events,
            "wall_seconds": round(r.wall_seconds, 2),
            "events_per_second": round(r.events_per_second),
            "tasks_per_second": round(r.tasks_started / r.wall_seconds),
            "simulated_seconds": round(r.end_time),
            "tasks_finished": r.tasks_finished,
            "utilization": {k: round(v, 3) for k, v in r.utilization.items()},
            "fairness_error": round(r.fairness_error, 4),
            "mean_completion_time": round(r.mean_completion_time["all"], 1),
        }
        out["runs"].append(row)
        print(
            f"{name:9s}: {wl.n_tasks:,} tasks, {r.events:,} events in {r.wall_seconds:.1f} s = "
            f"{r.events_per_second:,.0f} events/s ({row['tasks_per_second']:,} tasks/s); simulated "
            f"{r.end_time:,.0f} s, utilisation cpu {r.utilization['cpu']:.3f} mem {r.utilization['mem']:.3f}, "
            f"fairness error {r.fairness_error:.4f}, mean JCT {row['mean_completion_time']} s"
        )
    base = heap_baseline(out["runs"][0]["events"], args.nodes, args.seed)
    out["heapq_baseline_events_per_second"] = round(base)
    print(f"baseline : bare heapq replay (no scheduling) {base:,.0f} events/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
