"""The faster YARN FairScheduler cycle decides as the one it replaced (the oracle
``previous_yarn_fair_cycle``: :mod:`fairalloc.models.yarn_cycle` at commit f2f0d7d, verbatim): a seeded
workload replayed under each, on one pool and on nodes, gives the same event log line for line and
the same per-queue report.

Unlike ``tests/test_cycle_speed.py`` (whose oracle predates the pause after a preemption pass, and
whose jobs are each their own application) the workloads here reach what that comparison leaves out:
jobs grouped into applications of several containers (an application's usage, its fair share split
with the others of its leaf, its starvation clocks), AM containers (set last when containers are
chosen), the pause after a preemption pass at YARN's defaults and shorter, per-queue rules (a queue
that may not lose containers, its own threshold and timeouts), a leaf with no guarantee (``NaN``
read as 0), amounts that are not whole (0.5 cpu, 1.25 GB: sums whose order shows in the last bits)
and a utilization threshold the cluster crosses both ways."""

from __future__ import annotations

import io
import random

import numpy as np
import previous_yarn_fair_cycle as previous
import pytest

from fairalloc.core.registry import get
from fairalloc.engines.online import Job
from fairalloc.io.cases import parse_case
from fairalloc.models.yarn_fair import YarnSchedulable, yarn_compute_shares, yarn_fair_shares
from fairalloc.scheduling.replay import EventLog, replay

#: (the pause's settings, the utilization threshold) of each variant
VARIANTS = {
    "defaults": ({}, 0.0),
    "short-pause": ({"waitTimeBeforeKill": 1, "heartbeatInterval": 0.5, "waitTimeBeforeNextStarvationCheck": 1}, 0.6),
    "threshold": ({"waitTimeBeforeKill": 3}, 0.8),
}


class Previous:
    """yarn-fair with its online form built by the oracle module from the same arithmetic."""

    def __init__(self, mechanism):
        self.mechanism, self.name = mechanism, mechanism.name

    def __getattr__(self, attr):
        return getattr(self.mechanism, attr)

    def online(self, settings):
        return previous.YarnCycle(settings, previous.Arithmetic(yarn_fair_shares, _split))


def _split(apps: int, total: int) -> list[int]:
    """A leaf's share among ``apps`` applications of weight 1, as ``YarnFair.online`` hands it over."""
    return yarn_compute_shares([YarnSchedulable(1.0)] * apps, total)


def _jobs(seed: int, count: int) -> list[Job]:
    """Poisson arrivals at about 130% of the cpus, 1..3 pods of 0.5..3 cpu and 1.25..6 GB, some gangs,
    priorities 0..2, run times exponential (mean 40 s); the first half mostly for q0..q2, the second
    mostly for q3..q5 (so that leaves above their share meet starved ones)."""
    rng, t, out = random.Random(seed), 0.0, []
    for k in range(count):
        pods = rng.randint(1, 3)
        gang = rng.randint(1, pods) if rng.random() < 0.3 else None
        request = (rng.choice([0.5, 1.0, 2.0, 3.0]), rng.choice([1.25, 2.0, 4.5, 6.0]))
        runtime = round(max(0.5, rng.expovariate(1 / 40)), 3)
        half = 2 * k // count
        queue = f"q{rng.randrange(3) + 3 * (half if rng.random() < 0.8 else 1 - half)}"
        out.append(Job(f"j{k}", queue, request, pods, gang, float(rng.randint(0, 2)), round(t, 3), runtime))
        t += rng.expovariate(1 / (2 * 1.7 * 40 / (40 * 1.3)))
    return out


def _settings(seed: int, jobs: list[Job], variant: str) -> dict:
    """Preemption on with short timeouts; each job in an application of up to three jobs of its queue
    (in submit order); one job in five an AM container; q4 never loses a container; g1 preempts for
    a starvation read at a threshold of 0.8, q2 after its own timeouts."""
    rng, apps, open_app = random.Random(seed), {}, {}
    for job in jobs:
        name, size = open_app.get(job.queue, (None, 3))
        if size == 3 or rng.random() < 0.2:
            name, size = f"app-{job.name}", 0
        apps[job.name], open_app[job.queue] = name, (name, size + 1)
    pause, threshold = VARIANTS[variant]
    return {
        "preemption": True,
        "utilizationThreshold": threshold,
        "defaultFairSharePreemptionTimeout": 5,
        "defaultMinSharePreemptionTimeout": 3,
        "applications": apps,
        "amContainers": [j.name for j in jobs if rng.random() < 0.2],
        "queues": {
            "q4": {"allowPreemptionFrom": False},
            "g1": {"fairSharePreemptionThreshold": 0.8},
            "q2": {"fairSharePreemptionTimeout": 2, "minSharePreemptionTimeout": 8},
        },
        **pause,
    }


def _case(settings: dict):
    """Six leaves in two groups of 24 cpu / 48 GB at most each on 40 cpu and 80 GB; every leaf but q5
    guaranteed 5 cpu / 10 GB, each at most 12 / 24."""
    users = {
        f"q{k}": {"group": f"g{k % 2}", "guarantee": {"cpu": 5, "memory": 10}, "limit": {"cpu": 12, "memory": 24}}
        for k in range(5)
    }
    users["q5"] = {"group": "g1", "limit": {"cpu": 12, "memory": 24}}
    data = {
        "resources": {"cpu": 40, "memory": 80},
        "groups": {g: {"parent": None, "limit": {"cpu": 24, "memory": 48}} for g in ("g0", "g1")},
        "users": users,
        "policy": "yarn-fair",
        "settings": settings,
    }
    return parse_case(data).instance


def _replay(mechanism, inst, jobs, settings, nodes):
    log = io.StringIO()
    result = replay(inst, jobs, mechanism, settings=settings, nodes=nodes, log=EventLog(log, inst.resources))
    return log.getvalue(), result.to_dict()


@pytest.mark.parametrize("on_nodes", [False, True], ids=["pool", "nodes"])
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seed", [3, 4])
def test_the_faster_cycle_replays_as_the_previous_one(seed, variant, on_nodes):
    jobs = _jobs(seed, 100)
    settings = _settings(seed, jobs, variant)
    inst = _case(settings)
    nodes = {f"n{k}": np.array([10.0, 20.0]) for k in range(4)} if on_nodes else None
    fast_log, fast = _replay(get("yarn-fair"), inst, jobs, settings, nodes)
    before_log, before = _replay(Previous(get("yarn-fair")), inst, jobs, settings, nodes)
    assert fast_log.splitlines() == before_log.splitlines()
    assert fast == before
    assert '"preempt"' in fast_log  # the preemption paths are reached
