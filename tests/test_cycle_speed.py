"""The fast YARN, YuniKorn, Volcano and Mesos cycles decide as the straightforward ones they replaced
(the oracles ``previous_yarn_cycle``, ``previous_yunikorn_cycle``, ``previous_volcano_cycle``: the
modules at commit bf9a739, verbatim; ``previous_mesos_cycle``: at f2f0d7d): a seeded workload
replayed under each, on one pool and on nodes, gives the same event log line for line (every
admission, preemption with its preemptor, and end, at the same time with the same pods) and the
same per-queue report.

The workloads are made to reach the paths the fast cycles skip work on: queues at their limits
(jobs waiting that fit the free room but not their queue), guarantees (YuniKorn and YARN's min share
preemption), priorities, gangs, and YARN's preemption on with short timeouts (its starvation, the
search for containers and ``canContainerBePreempted`` run at every busy cycle; each job is its own
application here, which never loses its only container: grouped into applications, this workload
drove the YARN cycle, before and after, into preempting and readmitting the same containers for
ever at one instant, refused at MAX_CYCLES_PER_INSTANT; settled since by YARN's pause after a
preemption pass, which the comparison sets to nothing: tests/test_yarn_livelock.py)."""

from __future__ import annotations

import dataclasses
import io
import random

import numpy as np
import previous_mesos_cycle
import previous_volcano_cycle
import previous_yarn_cycle
import previous_yunikorn_cycle
import pytest

from fairalloc.core.registry import get
from fairalloc.engines.online import Job
from fairalloc.io.cases import parse_case
from fairalloc.models.yarn_fair import YarnSchedulable, yarn_compute_shares, yarn_fair_shares
from fairalloc.scheduling.replay import EventLog, replay

#: YARN's pause after a preemption pass (``preemptionTriggered``) is set to nothing: the previous
#: cycle had none (each starved application was checked again at once), and the preemption paths
#: are compared at every busy cycle; the pause is tested on its own in tests/test_yarn_livelock.py
NO_PAUSE = {"waitTimeBeforeKill": 0, "heartbeatInterval": 0, "waitTimeBeforeNextStarvationCheck": 0}
SETTINGS = {
    "yarn-fair": {
        "preemption": True,
        "defaultFairSharePreemptionTimeout": 5,
        "defaultMinSharePreemptionTimeout": 3,
        **NO_PAUSE,
    },
    "yunikorn-fair": {"queues": {g: {"preemption.delay": 5} for g in ("g0", "g1")}},
    "volcano-proportion": {},
    "mesos-drf": {},
}


class Previous:
    """``mechanism`` with its online form built by the oracle module from the same arithmetic
    (YARN's as the mechanism gives it, without the fast cycle's memory of it)."""

    def __init__(self, mechanism):
        self.mechanism, self.name = mechanism, mechanism.name

    def __getattr__(self, attr):
        return getattr(self.mechanism, attr)

    def online(self, settings):
        fast = self.mechanism.online(settings)
        if self.name == "yarn-fair":
            before = {k: v for k, v in settings.items() if k not in NO_PAUSE}  # settings it did not know
            return previous_yarn_cycle.YarnCycle(before, previous_yarn_cycle.Arithmetic(yarn_fair_shares, _split))
        if self.name == "yunikorn-fair":
            return previous_yunikorn_cycle.YuniKornCycle(settings, fast.order, fast.priority_first)
        if self.name == "mesos-drf":
            return previous_mesos_cycle.MesosCycle(settings)
        return previous_volcano_cycle.VolcanoCycle(
            settings, previous_volcano_cycle.Proportion(*_fields(fast.proportion))
        )


def _split(apps: int, total: int) -> list[int]:
    """A leaf's share among ``apps`` applications of weight 1, as ``YarnFair.online`` hands it over
    (the fast cycle keeps the queues' shares per set of active leaves; the oracle computes them)."""
    return yarn_compute_shares([YarnSchedulable(1.0)] * apps, total)


def _fields(arithmetic) -> list:
    return [getattr(arithmetic, f.name) for f in dataclasses.fields(arithmetic)]


def _case(policy: str, seed: int, settings: dict | None = None):
    """Six leaves in two groups of 24 cpu / 48 GB at most each; every leaf guaranteed 5 cpu / 10 GB
    (yet at most 12 / 24), on 40 cpu and 80 GB."""
    data = {
        "resources": {"cpu": 40, "memory": 80},
        "groups": {g: {"parent": None, "limit": {"cpu": 24, "memory": 48}} for g in ("g0", "g1")},
        "users": {
            f"q{k}": {"group": f"g{k % 2}", "guarantee": {"cpu": 5, "memory": 10}, "limit": {"cpu": 12, "memory": 24}}
            for k in range(6)
        },
        "policy": policy,
        "settings": SETTINGS[policy] if settings is None else settings,
    }
    return parse_case(data).instance


def _jobs(seed: int, count: int = 160) -> list[Job]:
    """Poisson arrivals at about 130% of the cpus (so queues back up), 1..3 pods of 1..3 cpu and
    1..6 GB, some gangs, priorities 0..2, run times exponential (mean 60 s); the first half mostly
    for q0..q2, the second mostly for q3..q5 (so that queues above their share meet starved ones)."""
    rng, t, out = random.Random(seed), 0.0, []
    for k in range(count):
        pods = rng.randint(1, 3)
        gang = rng.randint(1, pods) if rng.random() < 0.3 else None
        request = (float(rng.randint(1, 3)), float(rng.randint(1, 6)))
        runtime = round(max(0.5, rng.expovariate(1 / 60)), 3)
        priority = float(rng.randint(0, 2))
        out.append(Job(f"j{k}", _queue(rng, 2 * k // count), request, pods, gang, priority, round(t, 3), runtime))
        t += rng.expovariate(1 / (2 * 2 * 60 / (40 * 1.3)))
    return out


def _queue(rng: random.Random, half: int) -> str:
    return f"q{rng.randrange(3) + 3 * (half if rng.random() < 0.8 else 1 - half)}"


def _replay(mechanism, inst, jobs, nodes, settings: dict | None = None):
    log = io.StringIO()
    settings = SETTINGS[mechanism.name] if settings is None else settings
    result = replay(inst, jobs, mechanism, settings=settings, nodes=nodes, log=EventLog(log, inst.resources))
    return log.getvalue(), result.to_dict()


@pytest.mark.parametrize("on_nodes", [False, True], ids=["pool", "nodes"])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("policy", list(SETTINGS))
def test_the_fast_cycle_replays_as_the_straightforward_one(policy, seed, on_nodes):
    inst, jobs = _case(policy, seed), _jobs(seed)
    nodes = {f"n{k}": np.array([10.0, 20.0]) for k in range(4)} if on_nodes else None
    fast_log, fast = _replay(get(policy), inst, jobs, nodes)
    before_log, before = _replay(Previous(get(policy)), inst, jobs, nodes)
    assert fast_log.splitlines() == before_log.splitlines()
    assert fast == before
    # the preemption paths are reached (Mesos' allocator never preempts)
    assert policy in ("yarn-fair", "mesos-drf") or '"preempt"' in fast_log


#: Volcano's settings the session reads on the paths the fast one shortens: queues that are not
#: reclaimable (passed over as owners of victims), jobs that are not preemptable (passed over as
#: victims while their queue is still above deserved), ``allocate`` beyond deserved, and reclaim
#: before allocate (every job let in starves at reclaim's turn)
VOLCANO_SETTINGS = {
    "not-reclaimable": {"queues": {"q1": {"reclaimable": False}, "q4": {"reclaimable": False}}},
    "not-preemptable": {"jobs": {f"j{k}": {"preemptable": False} for k in range(0, 160, 3)}},
    "beyond-deserved": {"allocatable": False},
    "reclaim-first": {"actions": "enqueue, reclaim, allocate, preempt"},
}
#: on the nodes this workload under reclaim-first does not settle at one instant, before and after
#: alike (refused at MAX_CYCLES_PER_INSTANT): not compared here
VOLCANO_RUNS = [(v, False) for v in VOLCANO_SETTINGS] + [(v, True) for v in VOLCANO_SETTINGS if v != "reclaim-first"]


@pytest.mark.parametrize(("variant", "on_nodes"), VOLCANO_RUNS)
def test_the_fast_volcano_session_replays_as_the_straightforward_one_under_its_settings(variant, on_nodes):
    settings = VOLCANO_SETTINGS[variant]
    nodes = {f"n{k}": np.array([10.0, 20.0]) for k in range(4)} if on_nodes else None
    inst, jobs = _case("volcano-proportion", 3, settings), _jobs(3)
    mechanism = get("volcano-proportion")
    fast_log, fast = _replay(mechanism, inst, jobs, nodes, settings)
    before_log, before = _replay(Previous(mechanism), inst, jobs, nodes, settings)
    assert fast_log.splitlines() == before_log.splitlines()
    assert fast == before
    assert '"preempt"' in fast_log
