"""Job-level replay throughput (``fairalloc.scheduling.replay``): the generic online adapter over
``drf`` at 10^4 and 10^5 jobs, in events per second, as a ratio to a bare ``heapq`` loop of the same
events timed in the same process, and how the cost grows from 10^4 to 10^5 jobs.

Workload (synthetic, deterministic for --seed): a flat queue case of ``--queues`` queues (default 20)
on one pool of 400 CPUs and 800 GB (no nodes; ``--nodes K`` splits it into K equal nodes); jobs owned
round-robin, each of 1..4 pods of (1..4 CPUs, 1..8 GB), run times exponential (mean 30 s), Poisson
arrivals at about 90% of the CPUs.  Events: every submission and every end (no preemption: the
adapter never preempts).

The floor (``heapq_events_per_second``): the same events popped from one ``heapq`` in plain Python
(the heap starts with the submissions, a submission pushes its end at submit + run time), timed right
before and right after the replay and averaged; ``ratio`` = heapq events/s / replay events/s.
``growth`` = (seconds at 10^5 / seconds at 10^4) / 10: 1 for linear cost, 10 for quadratic.

Kueue's online form (issue 37's 100 ClusterQueues in 10 cohorts) comes with its own helper; this
measures the adapter only.  Not wired into ``make bench`` (quick runs only so far).

Run: .venv/bin/python benchmarks/bench_replay.py [--quick] [--jobs N ...] [--json FILE]
"""

from __future__ import annotations

import argparse
import heapq
import random
import time

from provenance import commit, load_average, update_json

import fairalloc
from fairalloc.engines.online import Job
from fairalloc.scheduling.replay import replay


def build(n_jobs: int, queues: int, seed: int) -> tuple[fairalloc.Instance, list[Job]]:
    rng = random.Random(seed)
    cpu, mem, mean = 400.0, 800.0, 30.0
    names = [f"q{k}" for k in range(queues)]
    inst = fairalloc.Instance([cpu, mem], [[1, 1]] * queues, users=names, resources=["cpu", "mem"])
    gap = 2.5 * 2.5 * mean / (cpu * 0.9)  # mean pods x mean cpu x mean run time / 90% of the cpus
    jobs, t = [], 0.0
    for k in range(n_jobs):
        request = (float(rng.randint(1, 4)), float(rng.randint(1, 8)))
        runtime = round(max(0.5, rng.expovariate(1 / mean)), 3)
        jobs.append(Job(f"job-{k}", names[k % queues], request, rng.randint(1, 4), None, 0.0, round(t, 3), runtime))
        t += rng.expovariate(1 / gap)
    return inst, jobs


def heap_floor(jobs: list[Job]) -> tuple[int, float]:
    start = time.perf_counter()
    heap = [(j.submit, k, k) for k, j in enumerate(jobs)]
    heapq.heapify(heap)
    n, seq, done = len(jobs), len(jobs), 0
    while heap:
        t, _, payload = heapq.heappop(heap)
        done += 1
        if payload < n:
            heapq.heappush(heap, (t + jobs[payload].runtime, seq, n))
            seq += 1
    return done, done / (time.perf_counter() - start)


def nodes_of(count: int) -> dict | None:
    import numpy as np

    if not count:
        return None
    return {f"n{k}": np.array([400.0 / count, 800.0 / count]) for k in range(count)}


def measure(n_jobs: int, queues: int, nodes: int, seed: int) -> dict:
    inst, jobs = build(n_jobs, queues, seed)
    _, before = heap_floor(jobs)
    t0 = time.perf_counter()
    r = replay(inst, jobs, fairalloc.get("drf"), nodes=nodes_of(nodes))
    seconds = time.perf_counter() - t0
    floor_events, after = heap_floor(jobs)
    floor = (before + after) / 2
    return {
        "mechanism": "drf (generic adapter)",
        "jobs": n_jobs,
        "queues": queues,
        "nodes": nodes,
        "events": r.events,
        "heapq_events": floor_events,
        "cycles": r.cycles,
        "wall_seconds": round(seconds, 2),
        "events_per_second": round(r.events / seconds),
        "heapq_events_per_second": round(floor),
        "ratio": round(floor / (r.events / seconds), 1),
        "utilization": {k: round(v, 3) for k, v in r.utilization.items()},
    }


#: the production policies' online forms timed by :func:`policy_rows`, with the settings they run under
POLICY_SETTINGS: dict[str, dict] = {
    "yarn-fair": {"preemption": True, "defaultFairSharePreemptionTimeout": 30, "defaultMinSharePreemptionTimeout": 15},
    "yunikorn-fair": {},
    "volcano-proportion": {},
    "mesos-drf": {},
}


def policy_rows(quick: bool, seed: int, queues: int = 40) -> list[dict]:
    """YARN, YuniKorn, Volcano and Mesos cycles replaying :func:`build`'s workload (10^3 and 10^4
    jobs; ``quick``: 10^3) on a queue case of ``queues`` leaves in groups of 10: each leaf guaranteed
    80% of an even split and limited to 30% of the cluster, each group to 60%.  Seconds per event,
    and ``growth`` = (seconds per event at 10^4) / (at 10^3): 1 when a cycle costs the same however
    many jobs came before."""
    from fairalloc.io.cases import parse_case

    cpu, mem = 400.0, 800.0
    share = {"cpu": 0.8 * cpu / queues, "mem": 0.8 * mem / queues}
    case = {
        "resources": {"cpu": cpu, "mem": mem},
        "groups": {
            f"g{g}": {"parent": None, "limit": {"cpu": 0.6 * cpu, "mem": 0.6 * mem}} for g in range(queues // 10)
        },
        "users": {
            f"q{k}": {"group": f"g{k // 10}", "guarantee": share, "limit": {"cpu": 0.3 * cpu, "mem": 0.3 * mem}}
            for k in range(queues)
        },
    }
    rows = []
    for name, settings in POLICY_SETTINGS.items():
        inst = parse_case({**case, "policy": name, "settings": settings}).instance
        per_event: dict[int, float] = {}
        for n in [1_000] if quick else [1_000, 10_000]:
            jobs = build(n, queues, seed)[1]
            t0 = time.perf_counter()
            r = replay(inst, jobs, fairalloc.get(name), settings=settings)
            seconds = time.perf_counter() - t0
            per_event[n] = seconds / r.events
            row = {"mechanism": name, "jobs": n, "queues": queues, "events": r.events, "cycles": r.cycles}
            row |= {"wall_seconds": round(seconds, 2), "ms_per_event": round(1000 * per_event[n], 3)}
            rows.append(row)
            print(
                f"{name:>18} {n:>7,} jobs on {queues} queues: {r.events:,} events, {r.cycles:,} cycles in "
                f"{seconds:.1f} s = {row['ms_per_event']:.3f} ms/event",
                flush=True,
            )
        if len(per_event) == 2:
            rows[-1]["growth"] = round(per_event[10_000] / per_event[1_000], 2)
            print(f"{name:>18} growth 10^3 -> 10^4 jobs: {rows[-1]['growth']:.2f} x per event (1: flat)")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10^4 jobs only (a smoke test)")
    ap.add_argument("--jobs", type=int, nargs="+", help="job counts instead of 10^4 10^5")
    ap.add_argument("--queues", type=int, default=20)
    ap.add_argument("--nodes", type=int, default=0, help="split the pool into this many nodes (0: one pool)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args()
    sizes = args.jobs or ([10_000] if args.quick else [10_000, 100_000])
    out: dict = {"commit_measured": commit(), "load_average": {"start": load_average()}, "runs": []}
    for n in sizes:
        row = measure(n, args.queues, args.nodes, args.seed)
        out["runs"].append(row)
        print(
            f"drf adapter {n:>8,} jobs: {row['events']:,} events in {row['wall_seconds']:.1f} s = "
            f"{row['events_per_second']:,} events/s; bare heapq {row['heapq_events_per_second']:,} events/s: "
            f"ratio {row['ratio']:.1f}; cpu utilisation {row['utilization']['cpu']:.3f}",
            flush=True,
        )
    runs = {r["jobs"]: r for r in out["runs"]}
    if 10_000 in runs and 100_000 in runs:
        out["growth"] = round(runs[100_000]["wall_seconds"] / runs[10_000]["wall_seconds"] / 10, 2)
        print(f"growth 10^4 -> 10^5 jobs: {out['growth']:.2f} x linear (1: linear, 10: quadratic)")
    out["policies"] = policy_rows(args.quick, args.seed)
    out["load_average"]["end"] = load_average()
    if args.json:
        update_json(args.json, out, indent=1)


if __name__ == "__main__":
    main()
