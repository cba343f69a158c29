"""YARN FairScheduler online (:mod:`fairalloc.models.yarn_cycle`): the ported
``TestFairSchedulerPreemption`` scenarios decided as upstream asserts, the starvation clocks across
cycles, assignment by the DRF comparator, bad settings, and a property: nothing is preempted before
the timeout, nor from an application that would fall below its fair share."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from library_cycles import LIBRARY, check_as_upstream_asserts, cycle_cases, decided

from fairalloc.core.errors import CaseError
from fairalloc.core.registry import get
from fairalloc.engines.online import Preempt, online_policy
from fairalloc.io.cases import load_case, parse_case
from fairalloc.models.yarn_cycle import below, view_of

CASES = cycle_cases("yarn")


def test_at_least_five_upstream_scenarios_are_ported():
    assert len(CASES) >= 5


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_each_ported_scenario_is_decided_as_upstream_asserts(path):
    check_as_upstream_asserts(path, "yarn-fair", "TestFairSchedulerPreemption.java")


def test_the_fair_shares_a_cycle_reads():
    """testPreemptionWithinSameLeafQueue (fair-share mode): child-1 is the only active leaf, so it
    holds the whole cluster, 8192 MB and 24 vcores, and its two applications 4096 and 12 each
    (``ComputeFairShares`` over two apps of weight 1).  The greedy app holds 8 x (1024, 1):
    dominant share 8192 / 8192 = 1, above its 0.5; the starving app 0, below."""
    case = load_case(LIBRARY / "yarn-preemption-within-same-leaf-queue-fair.yaml")
    policy = online_policy(get("yarn-fair"), case.settings)
    view = view_of(case.cycle, policy.grouping, policy.arith)
    assert np.allclose(view.shares["preemptable.child-1"], [8192, 24])
    assert np.allclose(view.shares["greedy"], [4096, 12]) and np.allclose(view.shares["starving"], [4096, 12])
    cap = case.cycle.capacity
    assert below(view.apps["starving"].usage, view.shares["starving"], cap)
    assert not below(view.apps["greedy"].usage, view.shares["greedy"], cap)


SMALL = """
name: two-leaves
resources: {cpu: 4}
users:
  a: {guarantee: {cpu: 0}}
  b: {guarantee: {cpu: 0}}
settings: {preemption: true, utilizationThreshold: 0, defaultFairSharePreemptionTimeout: 10}
cycle:
  now: 4
  running:
    r1: {queue: a, request: {cpu: 1}, start: 0}
    r2: {queue: a, request: {cpu: 1}, start: 0}
    r3: {queue: a, request: {cpu: 1}, start: 0}
    r4: {queue: a, request: {cpu: 1}, start: 0}
  pending:
    w1: {queue: b, request: {cpu: 1}, submit: 3}
    w2: {queue: b, request: {cpu: 1}, submit: 3}
"""


def _small(**settings_changes):
    data = yaml.safe_load(SMALL)
    data["settings"].update(settings_changes)
    return parse_case(data)


def test_the_starvation_clock_runs_across_cycles():
    """Application a (r1-r4, grouped) holds the 4 cpus; b's jobs w1, w2 (an application each) wait
    since 3.  Both leaves are active: 2 cpus each; a's one application 2, each b application 1.  With
    threshold 1, fairDemand = min(1, 1) = 1 > 0 = usage: both b applications are starved.  At 4 the
    timeout (10) has not run: nothing, and ``wake`` says 3 + 10 = 13.  At 13 each is starved by 1
    cpu, one 1-cpu container each, taken from a, which keeps 2 (= its fair share, not below).  Once
    they run nothing waits for a timeout; had they not been admitted, their starvation is not
    checked again before 13 + 15 + 4 + 10 = 42 (``preemptionTriggered``)."""
    case = _small(defaultFairSharePreemptionThreshold=1, applications={f"r{i}": "a" for i in range(1, 5)})
    policy = online_policy(get("yarn-fair"), case.settings)
    assert policy.decide(case.cycle) == []
    assert policy.wake(case.cycle) == 13
    later = dataclasses.replace(case.cycle, now=13.0)
    decisions = policy.decide(later)
    admitted, preempted = decided(decisions)
    assert admitted == {"w1", "w2"} and preempted == {"r1", "r2"}
    assert policy.wake(later.after(decisions)) is None
    assert policy.wake(later) == 42
    idle = dataclasses.replace(case.cycle, pending={}, since={})  # nobody starved: no timeout to wait for
    assert online_policy(get("yarn-fair"), case.settings).wake(idle) is None


def test_without_the_grouping_every_container_is_an_application_at_its_share():
    """The same at 13 with r1-r4 as four applications: each holds 1 cpu against a fair share of
    2 / 4 = 0.5; losing it would leave 0, below 0.5, so none may be preempted."""
    case = _small(defaultFairSharePreemptionThreshold=1)
    assert online_policy(get("yarn-fair"), case.settings).decide(dataclasses.replace(case.cycle, now=13.0)) == []


def test_below_the_threshold_no_whole_container_is_starved():
    """The default threshold 0.5: each b application is starved by min(1 x 0.5, 1) - 0 = 0.5 cpu,
    less than one 1-cpu container (``getStarvedResourceRequests``: floor(0.5 / 1) = 0), so nothing
    is preempted."""
    case = _small(applications={f"r{i}": "a" for i in range(1, 5)})
    policy = online_policy(get("yarn-fair"), case.settings)
    assert policy.decide(dataclasses.replace(case.cycle, now=13.0)) == []


def test_free_room_goes_by_the_drf_comparator():
    """Nothing runs on 4 cpus; a (min share 1) and b (none) each wait with two 1-cpu jobs.  a is
    needy (0 < 1) and goes first: a1; then a uses 1 of 4 (0.25) and is no longer needy, b (0) goes:
    b1; then a and b tie at 0.25 and a's name is first: a2; then b2."""
    data = yaml.safe_load(SMALL)
    data["users"]["a"]["guarantee"] = {"cpu": 1}
    data["cycle"]["running"] = {}
    data["cycle"]["pending"] = {
        n: {"queue": n[0], "request": {"cpu": 1}, "submit": 0} for n in ("a1", "a2", "b1", "b2")
    }
    decisions = online_policy(get("yarn-fair"), data["settings"]).decide(parse_case(data).cycle)
    assert [d.job for d in decisions] == ["a1", "b1", "a2", "b2"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"preemptoin": True}, "settings.preemptoin: unknown setting 'preemptoin'; did you mean 'preemption'?"),
        ({"queues": {"aa": {}}}, "settings.queues.aa: unknown setting 'aa'; did you mean 'a'?"),
        (
            {"queues": {"a": {"fairSharePreemptionTimout": 1}}},
            "settings.queues.a.fairSharePreemptionTimout: unknown setting",
        ),
        ({"defaultFairSharePreemptionThreshold": 2}, "settings.defaultFairSharePreemptionThreshold: expected a number"),
        (
            {"queues": {"a": {"allowPreemptionFrom": "no"}}},
            "settings.queues.a.allowPreemptionFrom: expected true or false",
        ),
        (
            {"applications": {"r1": "app", "w1": "app"}},
            "settings.applications.w1: application 'app' is in queue 'a', the job in 'b'",
        ),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(change, message):
    case = _small(**change)
    with pytest.raises(CaseError) as err:
        online_policy(get("yarn-fair"), case.settings).decide(case.cycle)
    assert str(err.value).startswith(message) and "\n" not in str(err.value), str(err.value)


# -- the property ------------------------------------------------------------------------------
@st.composite
def _starving(draw):
    """Three leaves of one application each (its jobs grouped), on 12 cpus: some leaves full of
    1-cpu containers, the others waiting with 1- or 2-cpu jobs submitted at 0."""
    held = draw(st.lists(st.integers(0, 8), min_size=3, max_size=3).filter(lambda h: 0 < sum(h) <= 12))
    asks = draw(st.lists(st.integers(0, 4), min_size=3, max_size=3))
    size = draw(st.integers(1, 2))
    running, pending, apps = {}, {}, {}
    for k, q in enumerate("abc"):
        for i in range(held[k]):
            running[f"{q}r{i}"] = {"queue": q, "request": {"cpu": 1}, "start": 0}
            apps[f"{q}r{i}"] = q
        for i in range(asks[k]):
            pending[f"{q}w{i}"] = {"queue": q, "request": {"cpu": size}, "submit": 0}
            apps[f"{q}w{i}"] = q
    timeout = draw(st.sampled_from([0, 5, 30]))
    data = {
        "name": "starving",
        "resources": {"cpu": 12},
        "users": {q: {"guarantee": {"cpu": draw(st.integers(0, 4))}} for q in "abc"},
        "settings": {
            "preemption": True,
            "utilizationThreshold": 0,
            "applications": apps,
            "defaultFairSharePreemptionTimeout": timeout,
            "defaultMinSharePreemptionTimeout": timeout,
            "defaultFairSharePreemptionThreshold": draw(st.sampled_from([0.5, 1.0])),
        },
        "cycle": {"now": draw(st.sampled_from([0, 4, 5, 40])), "running": running, "pending": pending},
    }
    return parse_case(data), timeout


@given(_starving())
@settings(max_examples=60, deadline=None)
def test_nothing_is_preempted_before_the_timeout_nor_below_a_fair_share(drawn):
    """With one application per queue: before the timeout (every job waiting since 0, a fresh
    policy) nothing is preempted; after it, a queue that loses a container keeps at least its fair
    share (dominant share, ``canContainerBePreempted``), so a queue at or below its fair share loses
    none.  Each preemption is judged on the state the cycle's earlier decisions left: the cycle may
    first give a queue a container (its waiting job fits), which takes it above its fair share."""
    case, timeout = drawn
    state = case.cycle
    policy = online_policy(get("yarn-fair"), case.settings)
    decisions = policy.decide(state)
    if state.now < timeout:
        assert not any(isinstance(d, Preempt) for d in decisions)
    for k, d in enumerate(decisions):
        if not isinstance(d, Preempt):
            continue
        then = state.after(decisions[:k])
        view = view_of(then, policy.grouping, policy.arith)
        q = then.running[d.job].job.queue
        before = view.apps[q].usage
        assert not below(before - then.running[d.job].usage, view.shares[q], state.capacity)
        assert below(view.shares[q], before, state.capacity)  # it was above its fair share


def test_a_queue_given_a_container_in_the_cycle_may_then_lose_one():
    """Hypothesis's example: b (fair share 4 of 12 cpus) holds 3 and its waiting 2-cpu job fits the
    3 free cpus, so the cycle first gives it (b holds 5), then preempts one of b's containers for a's
    starved job (b keeps 4, its fair share), and gives a the room: b is never below 4."""
    data = yaml.safe_load(
        """
        name: starving
        resources: {cpu: 12}
        users: {a: {guarantee: {cpu: 0}}, b: {guarantee: {cpu: 4}}, c: {guarantee: {cpu: 0}}}
        settings: {preemption: true, utilizationThreshold: 0, defaultFairSharePreemptionTimeout: 0,
                   defaultMinSharePreemptionTimeout: 0, defaultFairSharePreemptionThreshold: 0.5}
        cycle:
          pending: {aw0: {queue: a, request: {cpu: 2}}, bw0: {queue: b, request: {cpu: 2}}}
        """
    )
    running = {f"{q}r{i}": {"queue": q, "request": {"cpu": 1}} for q, n in (("b", 3), ("c", 6)) for i in range(n)}
    data["cycle"]["running"] = running
    data["settings"]["applications"] = {job: job[0] for job in [*running, "aw0", "bw0"]}
    case = parse_case(data)
    decisions = online_policy(get("yarn-fair"), case.settings).decide(case.cycle)
    assert [(type(d).__name__, d.job) for d in decisions] == [("Admit", "bw0"), ("Preempt", "br0"), ("Admit", "aw0")]
