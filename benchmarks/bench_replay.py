"""Job-level replay throughput (``fairalloc.scheduling.replay``), in events per second, as a ratio
to a bare ``heapq`` loop of the same events timed in the same process, and how the cost grows with
the jobs: the generic online adapter over ``drf`` (``runs``), and Kueue's scheduling cycle on issue
37's 100 ClusterQueues in 10 cohorts (``kueue``).

drf workload (synthetic, deterministic for --seed): a flat queue case of ``--queues`` queues
(default 20) on one pool of 400 CPUs and 800 GB (no nodes; ``--nodes K`` splits it into K equal
nodes); jobs owned round-robin, each of 1..4 pods of (1..4 CPUs, 1..8 GB), run times exponential
(mean 30 s), Poisson arrivals at about 90% of the CPUs.  Events: every submission and every end (no
preemption: the adapter never preempts).  ``growth`` = (seconds at 10^5 / seconds at 10^4) / 10: 1
for linear cost, 10 for quadratic.

Kueue case (:func:`kueue_case`, seeded): 10 cohorts of 10 ClusterQueues, nominal quota 8, 16 or 32
CPUs (4 GB per CPU), every third queue with a borrowing limit of its quota, every fourth (from the
second) lending half of it; the capacity is the sum of the quotas.  Every queue preempts within
itself (``LowerPriority``) and reclaims within its cohort (``Any`` or ``LowerPriority``, alternating),
one in seven is StrictFIFO; two rows: fair sharing on, and classic preemption (every fifth queue
also ``borrowWithinCohort: LowerPriority`` with ``maxPriorityThreshold`` 100).  Workload
(:func:`kueue_jobs`, seeded): arrivals Poisson with a daily cycle (rate ``1 + sin``, thinned), at
75% of the CPUs on average, 1.5 times that at the daily peak (above the cohorts' quotas there, so
queues borrow, wait and preempt), about a week at 10^5 jobs; each job to a queue drawn in proportion to
its quota times U(0.5, 1.5), of 1, 2 or 4 pods of 0.5..4 CPUs, run times lognormal (median about
9 min, mean 30 min, capped at a day: heavy-tailed), priority 0, 100 or 1000 (70/25/5%).  Each size
runs in a child process (``fork``), timed in CPU seconds of that process (``time.process_time``:
waiting for a core on a shared machine excluded), the ``heapq`` floor too.  ``exponent``: of the
CPU seconds between the sizes (log of the ratio of times over log of the ratio of jobs; target
:data:`GROWTH_TARGET`).  Memory: the child's peak RSS (``ru_maxrss``) beyond its RSS before the
replay, against the most jobs alive at once (waiting or running, counted from the event stream):
the replay keeps the jobs alive, running sums, and 8 bytes per admission (the wait times), and
writes the event log as it goes (here to a counter).

The week (``week``, issue 38's Speed section; run only when named): ``--week-jobs`` jobs (default a
million) of :func:`kueue_jobs` with the arrivals spanning 7 days (the run times scaled down to keep
the 75% load: mean 3.5 minutes at a million jobs on the ClusterQueues' 1,744 CPUs) over 100 queues,
under each production policy's online form (:data:`WEEK_POLICIES`): Kueue's two on
:func:`kueue_case`, the others on :func:`policy_case` with 100 leaves in 10 groups and the same
capacity.  Each workload is written once to a temporary ``.jsonl`` file (as ``import --jobs
OUT.jsonl`` writes it) and each policy, in a child process of its own, loads it with
``load_job_workload`` and replays it until it ends or ``--week-budget`` CPU seconds are spent (the
replay's ``watch`` hook stops it between cycles): its events, the day reached, CPU seconds, the
ratio to the ``heapq`` floor of the same jobs, the week projected at the measured rate (seconds per
event times every submission and end), and its peak RSS beyond its RSS before the load against the
file's bytes.  ``--week-at-once K`` runs K policies' children side by side (each timed in its own
CPU seconds; a child's peak RSS stays its own).

Run: .venv/bin/python benchmarks/bench_replay.py [--quick] [--jobs N ...] [--kueue-jobs N ...] [--json FILE]
[--sections runs kueue policies week] [--week-jobs N] [--week-budget SECONDS] [--week-at-once K]
(a partial run writes its sections, each with ``<section>_measured``: the commit and load it was
measured at, and keeps the file's others)
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import multiprocessing
import random
import resource
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from provenance import commit, load_average, update_json

import fairalloc
from fairalloc.core.errors import FairallocError
from fairalloc.engines.online import Job
from fairalloc.io.cases import parse_case
from fairalloc.io.job_workloads import job_spec, jsonl_lines, load_job_workload
from fairalloc.scheduling.replay import EventLog, replay

#: Kueue: heapq events/s over replay events/s at 10^5 jobs (a full scheduling cycle in Python, every
#: head nominated against the quota tree, twice an instant, and the entitlement statistic solved
#: again as the queues with work change; benchmarks/README.md)
KUEUE_RATIO_TARGET = 1000.0
#: Kueue: exponent of the CPU seconds from 10^4 to 10^5 jobs (1: linear, 2: quadratic)
GROWTH_TARGET = 1.2
COHORTS, PER_COHORT = 10, 10
#: what a run may be limited to (--sections): the drf adapter's rows, Kueue's, the other policies',
#: and the week of every production policy (hours at a million jobs: run only when named)
SECTIONS = ("runs", "kueue", "policies", "week")
DEFAULT_SECTIONS = SECTIONS[:3]
DAY = 86_400.0


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


# -- Kueue: 100 ClusterQueues in 10 cohorts ----------------------------------------------------------


def kueue_case(seed: int, fair: bool) -> tuple[fairalloc.Instance, dict]:
    """The case and its settings: 10 cohorts of 10 ClusterQueues (module docstring)."""
    rng = random.Random(seed)
    users: dict[str, dict] = {}
    queues: dict[str, dict] = {}
    for c in range(COHORTS):
        for k in range(PER_COHORT):
            name, cpu = f"cq-{c}-{k}", float(rng.choice([8, 16, 16, 32]))
            user: dict = {"group": f"cohort-{c}", "guarantee": {"cpu": cpu, "memory": 4 * cpu}, "request": {"cpu": 1}}
            if k % 3 == 0:
                user["borrowing_limit"] = {"cpu": cpu, "memory": 4 * cpu}
            if k % 4 == 1:
                user["lending_limit"] = {"cpu": cpu / 2, "memory": 2 * cpu}
            users[name] = user
            pre: dict = {
                "within_cluster_queue": "LowerPriority",
                "reclaim_within_cohort": "Any" if k % 2 else "LowerPriority",
            }
            if not fair and k % 5 == 0:
                pre["borrow_within_cohort"] = {"policy": "LowerPriority", "max_priority_threshold": 100}
            queues[name] = {"queueing_strategy": "StrictFIFO" if k % 7 == 3 else "BestEffortFIFO", "preemption": pre}
    total = sum(u["guarantee"]["cpu"] for u in users.values())
    settings = {"fair_sharing": fair, "cluster_queues": queues}
    case = {
        "name": f"kueue-{COHORTS * PER_COHORT}-cluster-queues",
        "resources": {"cpu": total, "memory": 4 * total},
        "groups": {f"cohort-{c}": {"parent": None} for c in range(COHORTS)},
        "users": users,
        "settings": settings,
    }
    return parse_case(case, "bench_replay.kueue_case").instance, settings


def kueue_jobs(
    instance: fairalloc.Instance, n_jobs: int, seed: int, load: float = 0.75, days: float | None = None
) -> list[Job]:
    """``n_jobs`` jobs over the case's ClusterQueues (module docstring); ``days``: the arrivals span
    that many days whatever the count, the run times scaled to keep the load (the week)."""
    rng = random.Random(seed)
    names = list(instance.users)
    weights = [float(instance.queues.guarantee[q][0]) * rng.uniform(0.5, 1.5) for q in names]
    mean_cpu, mean_run, sigma = 3.8, 1800.0, 1.5  # pods x CPUs per pod; lognormal mean run time
    if days is not None:
        mean_run = load * float(instance.capacity[0]) * days * DAY / (mean_cpu * n_jobs)
    rate = load * float(instance.capacity[0]) / (mean_cpu * mean_run)
    mu = math.log(mean_run) - sigma * sigma / 2
    jobs, t = [], 0.0
    for k in range(n_jobs):
        while True:  # thinning: rate x (1 + sin / 2) over the day, drawn at 1.5 times the mean rate
            t += rng.expovariate(1.5 * rate)
            if rng.random() < (1 + math.sin(2 * math.pi * t / DAY) / 2) / 1.5:
                break
        cpu = rng.choice([0.5, 1.0, 2.0, 2.0, 4.0])
        runtime = round(min(DAY, max(1.0, rng.lognormvariate(mu, sigma))), 3)
        priority = float(rng.choices([0, 100, 1000], [0.70, 0.25, 0.05])[0])
        queue = rng.choices(names, weights)[0]
        jobs.append(
            Job(f"job-{k}", queue, (cpu, 4 * cpu), rng.choice([1, 1, 2, 4]), None, priority, round(t, 3), runtime)
        )
    return jobs


class Alive(EventLog):
    """The event log as a counter: the jobs alive (submitted, not finished) and their most, the
    submissions and ends seen (the events a replay stopped early reached) and the time of the last."""

    def __init__(self) -> None:
        self.alive = self.peak = self.events = 0
        self.time = 0.0

    def write(self, time: float, event: str, job: Job, pods: int, by: str = "") -> None:
        if event == "submit":
            self.alive += 1
            self.peak = max(self.peak, self.alive)
        elif event == "finish":
            self.alive -= 1
        self.events += event in ("submit", "finish")
        self.time = time


def cpu_floor(jobs: list[Job]) -> float:
    """:func:`heap_floor`'s events per CPU second."""
    t0 = time.process_time()
    done, _ = heap_floor(jobs)
    return done / (time.process_time() - t0)


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def kueue_measure(n_jobs: int, fair: bool, seed: int) -> dict:
    inst, settings = kueue_case(seed, fair)
    jobs = kueue_jobs(inst, n_jobs, seed + 1)
    before = cpu_floor(jobs)
    log, rss = Alive(), rss_bytes()
    t0, w0 = time.process_time(), time.perf_counter()
    r = replay(inst, jobs, fairalloc.get("kueue"), settings=settings, log=log)
    seconds, wall = time.process_time() - t0, time.perf_counter() - w0
    floor = (before + cpu_floor(jobs)) / 2
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss
    return {
        "mechanism": _mechanism(fair),
        "jobs": n_jobs,
        "cluster_queues": COHORTS * PER_COHORT,
        "cohorts": COHORTS,
        "days": round(jobs[-1].submit / DAY, 2),
        "events": r.events,
        "cycles": r.cycles,
        "decisions": r.decisions,
        "preemptions": sum(q.preemptions for q in r.queues),
        "cpu_seconds": round(seconds, 2),
        "wall_seconds": round(wall, 2),
        "events_per_second": round(r.events / seconds),
        "heapq_events_per_second": round(floor),
        "ratio": round(floor / (r.events / seconds), 1),
        "peak_jobs_alive": log.peak,
        "rss_growth_mb": round(max(grown, 0) / 2**20, 1),
        "utilization": {k: round(v, 3) for k, v in r.utilization.items()},
    }


def _child(conn, measure: Callable[..., dict], args: tuple, name: dict) -> None:
    try:
        conn.send(measure(*args))
    except FairallocError as exc:  # a replay refused is a row saying so, not a lost run
        conn.send({**name, "failed": str(exc)})
    conn.close()


def _mechanism(fair: bool) -> str:
    return "kueue, " + ("fair sharing" if fair else "classic preemption")


def forked(measure: Callable[..., dict], *args, name: dict) -> dict:
    """``measure(*args)`` in a child process of its own (``fork``: its peak RSS is the run's); a
    refusal, or a child that died (out of memory), is the row ``name`` with ``failed``."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, measure, args, name))
    proc.start()
    child.close()  # the parent's copy: the pipe ends when the child's does
    try:
        row = parent.recv()
    except EOFError:
        row = None
    proc.join()
    return row if row is not None else {**name, "failed": f"the child process died (exit code {proc.exitcode})"}


def kueue_run(n_jobs: int, fair: bool, seed: int) -> dict:
    """:func:`kueue_measure` in a child process of its own (its peak RSS is the run's)."""
    return forked(kueue_measure, n_jobs, fair, seed, name={"mechanism": _mechanism(fair), "jobs": n_jobs})


def exponent(a: dict, b: dict) -> float:
    return round(math.log(b["cpu_seconds"] / a["cpu_seconds"]) / math.log(b["jobs"] / a["jobs"]), 2)


def kueue_section(sizes: list[int], seed: int) -> dict:
    rows = []
    for fair in (True, False):
        for n in sizes:
            row = kueue_run(n, fair, seed)
            rows.append(row)
            if "failed" in row:
                print(f"{row['mechanism']:<30} {n:>9,} jobs: FAILED: {row['failed']}", flush=True)
                break  # the larger sizes replay the same start
            print(
                f"{row['mechanism']:<30} {n:>9,} jobs ({row['days']:g} days): {row['events']:,} events, "
                f"{row['preemptions']:,} preemptions, {row['cpu_seconds']:.1f} CPU s = {row['events_per_second']:,} "
                f"events/s; bare heapq {row['heapq_events_per_second']:,}/s: ratio {row['ratio']:.0f}; "
                f"peak {row['peak_jobs_alive']:,} jobs alive, RSS +{row['rss_growth_mb']:.0f} MB",
                flush=True,
            )
    growth = []
    for mech in dict.fromkeys(r["mechanism"] for r in rows):
        mine = [r for r in rows if r["mechanism"] == mech and "failed" not in r]
        for a, b in zip(mine, mine[1:]):
            growth.append({"mechanism": mech, "from": a["jobs"], "to": b["jobs"], "exponent": exponent(a, b)})
            print(f"{mech}: growth {a['jobs']:,} -> {b['jobs']:,} jobs: exponent {growth[-1]['exponent']:.2f}")
    return {"rows": rows, "growth": growth, "targets": {"ratio": KUEUE_RATIO_TARGET, "exponent": GROWTH_TARGET}}


#: the production policies' online forms timed by :func:`policy_rows`, with the settings they run under
POLICY_SETTINGS: dict[str, dict] = {
    "yarn-fair": {"preemption": True, "defaultFairSharePreemptionTimeout": 30, "defaultMinSharePreemptionTimeout": 15},
    "yunikorn-fair": {},
    "volcano-proportion": {},
    "mesos-drf": {},
}


def policy_case(queues: int, cpu: float = 400.0, mem: float = 800.0, mem_name: str = "mem") -> dict:
    """:func:`policy_rows`'s queue case (no policy yet): ``queues`` leaves in groups of 10, each leaf
    guaranteed 80% of an even split and limited to 30% of the cluster, each group to 60%."""
    share = {"cpu": 0.8 * cpu / queues, mem_name: 0.8 * mem / queues}
    return {
        "resources": {"cpu": cpu, mem_name: mem},
        "groups": {
            f"g{g}": {"parent": None, "limit": {"cpu": 0.6 * cpu, mem_name: 0.6 * mem}} for g in range(queues // 10)
        },
        "users": {
            f"q{k}": {"group": f"g{k // 10}", "guarantee": share, "limit": {"cpu": 0.3 * cpu, mem_name: 0.3 * mem}}
            for k in range(queues)
        },
    }


def policy_rows(sizes: list[int], seed: int, queues: int = 40) -> list[dict]:
    """YARN, YuniKorn, Volcano and Mesos cycles replaying :func:`build`'s workload (``sizes`` jobs:
    10^3 and 10^4 by default) on a queue case of ``queues`` leaves in groups of 10: each leaf
    guaranteed 80% of an even split and limited to 30% of the cluster, each group to 60%.  Seconds
    per event, and ``growth`` = (seconds per event at the largest size) / (at the smallest): 1 when a
    cycle costs the same however many jobs came before."""
    case = policy_case(queues)
    rows = []
    for name, settings in POLICY_SETTINGS.items():
        inst = parse_case({**case, "policy": name, "settings": settings}).instance
        per_event: dict[int, float] = {}
        for n in sizes:
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
        if len(per_event) >= 2:
            low, high = min(per_event), max(per_event)
            rows[-1]["growth"] = round(per_event[high] / per_event[low], 2)
            print(f"{name:>18} growth {low:,} -> {high:,} jobs: {rows[-1]['growth']:.2f} x per event (1: flat)")
    return rows


# -- the week: a million jobs over 100 queues under each production policy (issue 38, Speed) ---------

#: the target stated beside each policy's week: its replay within 10 minutes of CPU (2 cores)
WEEK_TARGET_SECONDS = 600.0
WEEK_DAYS = 7.0
WEEK_QUEUES = COHORTS * PER_COHORT
#: the production policies' online forms replaying the week: Kueue's two on :func:`kueue_case`, the
#: others on :func:`policy_case` with 100 leaves (settings from :data:`POLICY_SETTINGS`, else none)
WEEK_POLICIES = (
    "kueue, classic preemption",
    "kueue, fair sharing",
    "yarn-fair",
    "yarn-capacity",
    "yunikorn-fair",
    "volcano-proportion",
    "volcano-capacity",
    "mesos-drf",
)


class _Spent(Exception):
    """The replay's CPU budget is spent: raised by its ``watch`` hook to stop it between cycles."""


def week_case(policy: str, seed: int) -> tuple[fairalloc.Instance, dict, str]:
    """The policy's case, its settings and which workload it replays (``kueue``: the ClusterQueues';
    ``queues``: the 100 leaves', with the ClusterQueues' total capacity, 4 GB per CPU)."""
    if policy.startswith("kueue"):
        return *kueue_case(seed, policy == _mechanism(True)), "kueue"
    cpu = float(kueue_case(seed, False)[0].capacity[0])
    settings = POLICY_SETTINGS.get(policy, {})
    case = policy_case(WEEK_QUEUES, cpu, 4 * cpu, "memory") | {"name": "week-100-queues", "policy": policy}
    return parse_case(case | {"settings": settings}, "bench_replay.week_case").instance, settings, "queues"


def write_week(path: Path, instance: fairalloc.Instance, n_jobs: int, seed: int) -> dict:
    """:func:`kueue_jobs` over ``instance``'s queues, spanning :data:`WEEK_DAYS`, written to ``path``
    as a JSON Lines workload (what ``import --jobs OUT.jsonl`` writes): its bytes and CPU seconds."""
    t0 = time.process_time()
    jobs = kueue_jobs(instance, n_jobs, seed + 1, days=WEEK_DAYS)
    workload = {"jobs": {j.name: job_spec(j, instance.resources) for j in jobs}}
    with path.open("w", encoding="ascii") as stream:
        stream.writelines(jsonl_lines(workload))
    return {
        "path": str(path),
        "bytes": path.stat().st_size,
        "days": round(jobs[-1].submit / DAY, 2),
        "write_cpu_seconds": round(time.process_time() - t0, 1),
    }


def week_measure(policy: str, seed: int, file: dict, budget: float) -> dict:
    """One policy's week, in its child process: the file loaded (``load_job_workload``), then
    replayed until it ends or ``budget`` CPU seconds are spent (module docstring, README)."""
    instance, settings, _ = week_case(policy, seed)
    rss, t0 = rss_bytes(), time.process_time()
    w = load_job_workload(file["path"], instance)
    loaded = time.process_time() - t0
    before, log = cpu_floor(w.jobs), Alive()
    start = time.process_time()

    def watch(state, decisions) -> None:
        if time.process_time() - start > budget:
            raise _Spent

    mechanism = fairalloc.get(policy.split(",")[0])
    refused = ""
    try:
        r = replay(instance, w.jobs, mechanism, settings=settings, nodes=w.nodes, log=log, watch=watch)
        events, reached = r.events, r.end
    except _Spent:
        events, reached = log.events, log.time
    except FairallocError as exc:  # a limit of the replay met on the way: where, and the rate until then
        refused, events, reached = str(exc), log.events, log.time
    seconds = max(time.process_time() - start, 1e-6)  # a zero budget stops at the first cycle
    events = max(events, 1)
    grown = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss, 0)
    floor = (before + cpu_floor(w.jobs)) / 2
    total = 2 * len(w.jobs)  # every submission and every end: the heapq floor's events
    return {
        "mechanism": policy,
        "jobs": len(w.jobs),
        "queues": WEEK_QUEUES,
        "file_bytes": file["bytes"],
        "load_cpu_seconds": round(loaded, 1),
        "finished": events >= total and not refused,
        "refused": refused,
        "events": events,
        "total_events": total,
        "days_reached": round(reached / DAY, 1),
        "cpu_seconds": round(seconds, 1),
        "events_per_second": round(events / seconds),
        "heapq_events_per_second": round(floor),
        "ratio": round(floor / (events / seconds), 1),
        "projected_cpu_seconds": round(seconds / events * total),
        "peak_jobs_alive": log.peak,
        "rss_growth_mb": round(grown / 2**20, 1),
        "rss_per_file_byte": round(grown / file["bytes"], 2),
    }


def week_section(
    n_jobs: int, budget: float, seed: int, at_once: int = 1, policies: tuple[str, ...] = WEEK_POLICIES
) -> dict:
    """Each policy's week in a child process (``at_once`` side by side), the workloads they replay
    written once to a temporary folder; each row with the commit and load it was measured at."""
    files: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-week-") as folder:
        for policy in policies:
            instance, _, kind = week_case(policy, seed)
            if kind not in files:
                files[kind] = write_week(Path(folder) / f"week-{kind}.jsonl", instance, n_jobs, seed)
                f = files[kind]
                print(f"week, {kind} workload: {n_jobs:,} jobs over {f['days']:g} days, {f['bytes']:,} bytes of JSON "
                      f"Lines written in {f['write_cpu_seconds']:g} CPU s", flush=True)  # fmt: skip

        def one(policy: str) -> dict:
            kind = week_case(policy, seed)[2]
            start = {"commit_measured": commit(), "load_average": {"start": load_average()}}
            row = forked(week_measure, policy, seed, files[kind], budget, name={"mechanism": policy, "jobs": n_jobs})
            print(f"week, {policy:<26} {week_said(row)}", flush=True)
            start["load_average"]["end"] = load_average()
            return row | start

        # threads only wait on their child processes: the work is in the children
        with ThreadPoolExecutor(max_workers=max(1, at_once)) as pool:
            rows = list(pool.map(one, policies))
    for f in files.values():
        del f["path"]  # a temporary file, gone
    return {
        "jobs": n_jobs,
        "queues": WEEK_QUEUES,
        "days": WEEK_DAYS,
        "budget_cpu_seconds": budget,
        "target_cpu_seconds": WEEK_TARGET_SECONDS,
        "at_once": at_once,
        "files": files,
        "rows": rows,
    }


def kept_week_rows(path: str | None, week: dict) -> dict:
    """``week`` with the rows of ``path``'s week section for the other policies kept, when it
    replayed the same jobs under the same budget (a run of some policies completes an earlier one)."""
    if not path or not Path(path).exists():
        return week
    earlier = json.loads(Path(path).read_text()).get("week") or {}
    same = all(earlier.get(k) == week[k] for k in ("jobs", "queues", "days", "budget_cpu_seconds"))
    if not same:
        return week
    mine = {r["mechanism"] for r in week["rows"]}
    rows = [r for r in earlier.get("rows", []) if r["mechanism"] not in mine] + week["rows"]
    order = {name: k for k, name in enumerate(WEEK_POLICIES)}
    rows.sort(key=lambda r: order[r["mechanism"]])
    return week | {"files": earlier.get("files", {}) | week["files"], "rows": rows}


def week_stop(r: dict) -> str:
    """Why a week ended early: its budget, or a limit of the replay (its message)."""
    return f"refused ({r['refused']})" if r.get("refused") else "stopped"


def week_said(r: dict) -> str:
    """A week's row in a sentence (the console's and, shortened, the README table's)."""
    if "failed" in r:
        return f"FAILED: {r['failed']}"
    head = (
        f"finished the {r['total_events']:,} events"
        if r["finished"]
        else f"{week_stop(r)} at day {r['days_reached']:.1f} of {WEEK_DAYS:g} after {r['events']:,} events"
    )
    return (
        f"{head} in {r['cpu_seconds']:g} CPU s = {r['events_per_second']:,} events/s; bare heapq "
        f"{r['heapq_events_per_second']:,}/s: ratio {r['ratio']:g}; projected {r['projected_cpu_seconds']:,} CPU s "
        f"for the week; RSS +{r['rss_growth_mb']:g} MB ({r['rss_per_file_byte']:g} bytes per byte of the "
        f"{r['file_bytes']:,}-byte file, loaded in {r['load_cpu_seconds']:g} CPU s)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10^4 jobs only (a smoke test)")
    ap.add_argument("--jobs", type=int, nargs="+", help="job counts instead of 10^4 10^5 (both sections)")
    ap.add_argument("--kueue-jobs", type=int, nargs="+", help="job counts of the Kueue rows (instead of --jobs)")
    ap.add_argument(
        "--policy-jobs", type=int, nargs="+", help="job counts of the YARN/YuniKorn/Volcano/Mesos rows (10^3 10^4)"
    )
    ap.add_argument("--week-jobs", type=int, default=1_000_000, help="jobs of the week (section week)")
    ap.add_argument(
        "--week-budget",
        type=float,
        default=WEEK_TARGET_SECONDS,
        help="CPU seconds a policy's week may take before it is stopped (default: the target)",
    )
    ap.add_argument("--week-at-once", type=int, default=1, help="policies' weeks replayed side by side (section week)")
    ap.add_argument(
        "--week-policies",
        nargs="+",
        choices=WEEK_POLICIES,
        default=list(WEEK_POLICIES),
        help="only these policies' weeks (their rows replace theirs in --json's week, the others kept)",
    )
    ap.add_argument("--queues", type=int, default=20)
    ap.add_argument("--nodes", type=int, default=0, help="split the pool into this many nodes (0: one pool)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the results to this file (keeping the sections not run)")
    ap.add_argument(
        "--sections",
        nargs="+",
        choices=SECTIONS,
        default=list(DEFAULT_SECTIONS),
        help="run only these sections (default: all but week)",
    )
    args = ap.parse_args()
    sizes = args.jobs or ([10_000] if args.quick else [10_000, 100_000])
    start = {"commit_measured": commit(), "load_average": {"start": load_average()}}
    out: dict = {}
    if "runs" in args.sections:
        out |= adapter_section(sizes, args)
    if "kueue" in args.sections:
        out["kueue"] = kueue_section(args.kueue_jobs or sizes, args.seed)
    if "policies" in args.sections:
        out["policies"] = policy_rows(args.policy_jobs or ([1_000] if args.quick else [1_000, 10_000]), args.seed)
    if "week" in args.sections:
        week = week_section(args.week_jobs, args.week_budget, args.seed, args.week_at_once, tuple(args.week_policies))
        out["week"] = kept_week_rows(args.json, week)
    start["load_average"]["end"] = load_average()
    if set(args.sections) >= set(DEFAULT_SECTIONS):
        out = start | out
    else:  # a partial run: its sections' commit and load beside them, the file's others kept
        out |= {f"{key}_measured": start for key in args.sections}
    if args.json:
        update_json(args.json, out, indent=1)


def adapter_section(sizes: list[int], args: argparse.Namespace) -> dict:
    """The generic adapter over ``drf`` at each size (``runs``) and its growth."""
    out: dict = {"runs": []}
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
    return out


if __name__ == "__main__":
    main()
