"""Kueue's cycle as it is decides as it did before it was made faster (the oracle
``previous_kueue_cycle``: models/kueue_cycle.py at commit f2f0d7d, verbatim): seeded workloads
replayed under both write the same event log, byte for byte (every admission, preemption with its
preemptor and reason's order, and end, at the same time).

The workloads reach what the faster cycle keeps or skips: nested cohorts (the fair-sharing target
order walks into child cohorts, the almost least common ancestors sit below the root), a
ClusterQueue without a cohort, borrowing and lending limits on queues and cohorts, weights,
both queueing strategies, every
preemption policy, each list of fair-sharing strategies, requests of one resource or two (the
resources needing preemption), and a load of one and a half times the quota so queues back up;
plus issue 37's benchmark case (100 ClusterQueues in 10 cohorts) at a higher load."""

from __future__ import annotations

import io
import random
import sys
import types
from pathlib import Path

import previous_kueue_cycle
import pytest

import fairalloc
from fairalloc.engines.online import ClusterState, Job, Preempt
from fairalloc.io.cases import parse_case
from fairalloc.models.kueue_cycle import FAIR_SHARING, IN_CQ, RECLAMATION, WHILE_BORROWING, KueueCycle
from fairalloc.models.kueue_tree import _tree_of
from fairalloc.scheduling.replay import EventLog, replay

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_replay  # noqa: E402

WITHIN = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM = ("Never", "LowerPriority", "Any")
STRATEGIES = (
    ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
    ["LessThanOrEqualToFinalShare"],
    ["LessThanInitialShare"],
)


def _kueue(online):
    """The registered ``kueue`` with its online form built by ``online(settings)``."""
    kueue = fairalloc.get("kueue")
    return types.SimpleNamespace(name=kueue.name, kind=kueue.kind, allocate=kueue.allocate, online=online)


def _log(inst, jobs, settings, online) -> str:
    out = io.StringIO()
    replay(inst, jobs, _kueue(online), settings=settings, log=EventLog(out, tuple(inst.resources), "csv"))
    return out.getvalue()


def _limits(rng: random.Random, quota: float) -> dict:
    out: dict = {}
    if rng.random() < 0.4:
        out["borrowing_limit"] = {"cpu": rng.choice([0.0, quota / 2, quota]), "memory": 4 * quota}
    if rng.random() < 0.4:
        out["lending_limit"] = {"cpu": rng.choice([0.0, quota / 2]), "memory": 2 * quota}
    return out


def _case(seed: int, fair: bool):
    """Two root cohorts, the first with two sub-cohorts (one with its own quota and limits), nine
    ClusterQueues spread over the four cohorts and one without a cohort; CPU and memory."""
    rng = random.Random(seed)
    groups: dict[str, dict] = {"r0": {"parent": None}, "r1": {"parent": None}}
    groups["r0-a"] = {"parent": "r0", "guarantee": {"cpu": 4.0, "memory": 16.0}, **_limits(rng, 4.0)}
    groups["r0-b"] = {"parent": "r0", "weight": rng.choice([1.0, 2.0])}
    users: dict[str, dict] = {}
    queues: dict[str, dict] = {}
    for k in range(10):
        cpu = float(rng.choice([4, 8, 8, 12]))
        parent = None if k == 9 else rng.choice(["r0", "r0-a", "r0-b", "r1"])
        user = {"group": parent, "guarantee": {"cpu": cpu, "memory": 4 * cpu}, **_limits(rng, cpu)}
        user["weight"] = rng.choice([1.0, 1.0, 2.0, 0.5]) if fair else 1.0
        users[f"cq{k}"] = user
        pre: dict = {"within_cluster_queue": rng.choice(WITHIN), "reclaim_within_cohort": rng.choice(RECLAIM)}
        if not fair and rng.random() < 0.4:
            threshold = rng.choice([None, 0, 5])
            pre["borrow_within_cohort"] = {"policy": "LowerPriority", "max_priority_threshold": threshold}
        strategy = rng.choice(["BestEffortFIFO", "BestEffortFIFO", "StrictFIFO"])
        queues[f"cq{k}"] = {"queueing_strategy": strategy, "preemption": pre}
    total = sum(u["guarantee"]["cpu"] for u in users.values()) + 4.0
    settings: dict = {"fair_sharing": fair, "cluster_queues": queues}
    if fair:
        settings["preemption_strategies"] = rng.choice(STRATEGIES)
    case = {"name": f"nested-{seed}", "resources": {"cpu": total, "memory": 4 * total}, "groups": groups}
    case |= {"users": users, "settings": settings}
    return parse_case(case, "test_kueue_cycle_speed").instance, settings


def _jobs(inst, seed: int, count: int, load: float = 1.5) -> list[Job]:
    """Poisson arrivals at ``load`` times the CPUs (run times exponential, mean 60 s), 1 to 3 pods of
    0.5 to 4 CPUs, a third of them asking for no memory, priorities 0, 5 or 10."""
    rng, t, out = random.Random(seed), 0.0, []
    names, cpus = list(inst.users), float(inst.capacity[0])
    for k in range(count):
        cpu = rng.choice([0.5, 1.0, 2.0, 4.0])
        memory = 0.0 if rng.random() < 1 / 3 else rng.choice([1.0, 4.0, 8.0])
        pods, runtime = rng.randint(1, 3), round(max(0.5, rng.expovariate(1 / 60)), 3)
        priority = float(rng.choice([0, 0, 5, 10]))
        out.append(Job(f"j{k}", rng.choice(names), (cpu, memory), pods, None, priority, round(t, 3), runtime))
        t += rng.expovariate(load * cpus / (2 * 2 * 60))
    return out


def _same(inst, jobs, settings) -> str:
    """The event log under the oracle, after checking the current cycle's two forms write it too."""
    before = _log(inst, jobs, settings, lambda s: previous_kueue_cycle.KueueCycle(s, fast=False))
    assert _log(inst, jobs, settings, lambda s: KueueCycle(s, fast=True)) == before
    assert _log(inst, jobs, settings, lambda s: KueueCycle(s, fast=False)) == before
    return before


def _events(log: str) -> list[str]:
    return [line.split(",")[2] for line in log.splitlines()[1:]]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fair", [False, True], ids=["classic", "fair-sharing"])
def test_a_nested_workload_replays_to_the_oracle_event_log(fair, seed):
    inst, settings = _case(seed, fair)
    events = _events(_same(inst, _jobs(inst, seed, 200), settings))
    assert events.count("submit") == 200 and events.count("finish") >= 1


class _Recorded(KueueCycle):
    """The current cycle, recording the reasons of its preemptions."""

    reasons: set[str] = set()

    def decide(self, state):
        decisions = super().decide(state)
        self.reasons.update(d.why for d in decisions if isinstance(d, Preempt))
        return decisions


def test_the_nested_workloads_reach_every_preemption_reason():
    """Over the seeds, each reason a search gives is decided: the comparisons above ran through
    the own queue's search, classic reclaim with and without borrowing, and fair sharing's."""
    _Recorded.reasons = set()
    for fair in (False, True):
        for seed in range(6):
            inst, settings = _case(seed, fair)
            _log(inst, _jobs(inst, seed, 200), settings, _Recorded)
    assert _Recorded.reasons == {IN_CQ, RECLAMATION, WHILE_BORROWING, FAIR_SHARING}


@pytest.mark.parametrize("fair", [False, True], ids=["classic", "fair-sharing"])
def test_the_benchmark_case_replays_to_the_oracle_event_log(fair):
    inst, settings = bench_replay.kueue_case(7, fair)
    events = _events(_same(inst, bench_replay.kueue_jobs(inst, 800, 8, load=1.6), settings))
    assert events.count("submit") == 800 and events.count("preempt") >= 5


def test_the_waiting_jobs_kept_give_the_heads_a_pass_over_every_job_gives():
    """Random changes between cycles (jobs leaving from anywhere, entering at the end, one moved to
    the end: read from scratch; equal priorities and submit times, so the order they entered in
    decides), heads parked, evicted and waiting preemptors: the heads of :class:`Waiting` are
    those of the plain cycle's pass over every waiting job."""
    inst, _ = bench_replay.kueue_case(0, False)
    rng = random.Random(9)
    queues = list(inst.users)[:6]
    fast, plain = KueueCycle({}, fast=True), KueueCycle({}, fast=False)
    pending: dict[str, Job] = {}
    for step in range(80):
        for name in rng.sample(list(pending), min(len(pending), rng.randint(0, 3))):
            del pending[name]
        if step % 9 == 4 and pending:
            name = rng.choice(list(pending))
            pending[name] = pending.pop(name)
        for k in range(rng.randint(0, 4)):
            job = Job(
                f"j{step}-{k}",
                rng.choice(queues),
                (1.0, 4.0),
                1,
                None,
                float(rng.choice([0, 5])),
                rng.choice([0.0, 1.0]),
            )
            pending[job.name] = job
        names = list(pending)
        aside = {n: ("cohort-0", 0) for n in rng.sample(names, min(len(names), 3))}
        evicted = {n: float(step) for n in rng.sample(names, min(len(names), 2))}
        sticky = {pending[n].queue: n for n in rng.sample(names, min(len(names), 2))}
        state = ClusterState(inst, now=float(step), pending=dict(pending))
        heads = []
        for cycle in (fast, plain):
            cycle.parked, cycle.evicted, cycle.preemptors = dict(aside), dict(evicted), dict(sticky)
            heads.append([j.name for j in cycle.heads(state, _tree_of(inst))])
        free = {pending[n].queue for n in names if n not in aside and n not in evicted}
        assert heads[0] == heads[1] and len(heads[0]) == len(free)  # a head per queue with a job not set aside
