"""YuniKorn online (:mod:`fairalloc.models.yunikorn_cycle`): the ported ``preemption_test.go``
scenarios decided as upstream asserts, the queue sort and FIFO order of one cycle, the preemption
delay and the node reserved across cycles, the map arithmetic, bad settings, and a property: a
victim's queue never goes below its guarantee."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from library_cycles import LIBRARY, check_as_upstream_asserts, cycle_cases, decided

from fairalloc.core.errors import CaseError
from fairalloc.core.registry import get
from fairalloc.engines.online import Preempt, online_policy
from fairalloc.io.cases import load_case, parse_case
from fairalloc.io.jobs import cycle_decisions
from fairalloc.models.yunikorn_cycle import Snapshot, min_wise, sub_only_existing

CASES = cycle_cases("yunikorn")


def test_at_least_five_upstream_scenarios_are_ported():
    assert len(CASES) >= 5


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_each_ported_scenario_is_decided_as_upstream_asserts(path):
    check_as_upstream_asserts(path, "yunikorn-fair", "preemption_test.go")


def _ported(name):
    return yaml.safe_load((LIBRARY / f"{name}.yaml").read_text())


def test_preemption_stops_at_the_ask_queues_guarantee():
    """TestTryPreemption_VictimsAvailable_InsufficientResource with two allocations of 3 (6 >= the
    ask's 5): still nothing, because child2's remaining guarantee (5) takes alloc2 (3 -> 2 left) but
    not alloc1 (3 > 2), and 3 alone does not cover 5.  With child2 guaranteed 6 it takes both (6 ->
    3 -> 0), and the final cut needs both: 3 < 5 <= 6."""
    data = _ported("yunikorn-try-preemption-victims-available-insufficient-resource")
    for a in ("alloc1", "alloc2"):
        data["cycle"]["running"][a]["request"]["first"] = 3
    assert cycle_decisions(parse_case(data), "yunikorn-fair") == []
    data["users"]["child2"]["guarantee"] = {"first": 6}
    assert decided(cycle_decisions(parse_case(data), "yunikorn-fair")) == (set(), {"alloc1", "alloc2"})


def test_the_delay_the_reservation_and_the_next_cycle():
    """TestTryPreemptionOnQueue: an ask submitted at 61 has not waited 30 s at 90: nothing, and
    ``wake`` says 91.  At 91 alloc2 is preempted and the ask reserves node-1; in the next cycle
    (alloc2 gone) the ask is admitted on node-1 first, and never preempts again."""
    data = _ported("yunikorn-try-preemption-on-queue")
    data["cycle"]["pending"]["alloc3"]["submit"] = 61
    state = parse_case(data).cycle
    policy = online_policy(get("yunikorn-fair"), {})
    assert policy.decide(state) == [] and policy.wake(state) == 91
    at = dataclasses.replace(state, now=91.0)
    decisions = policy.decide(at)
    assert decided(decisions) == (set(), {"alloc2"}) and policy.memory.reserved == {"alloc3": "node-1"}
    assert policy.decide(dataclasses.replace(at, now=92.0)) == []  # alloc2 not gone yet; no second preemption
    gone = dataclasses.replace(at.after(decisions), now=95.0)  # alloc2 stopped, waiting again since 91
    [admit] = policy.decide(gone)  # alloc2 itself has not waited 30 s: it may not preempt yet
    assert admit.job == "alloc3" and admit.nodes == ("node-1",) and "reserved" in admit.why
    assert policy.memory.reserved == {}


_TWO_QUEUES = {
    "name": "two-queues",
    "resources": {"cpu": 10},
    "users": {"a": {"guarantee": {"cpu": 4}}, "b": {"guarantee": {"cpu": 2}}},
    "cycle": {
        "now": 5,
        "pending": {
            "a1": {"queue": "a", "request": {"cpu": 2}, "submit": 0},
            "b2": {"queue": "b", "request": {"cpu": 2}, "submit": 2},
            "b1": {"queue": "b", "request": {"cpu": 2}, "submit": 1},
            "a2": {"queue": "a", "request": {"cpu": 2}, "submit": 0},
            "a3": {"queue": "a", "request": {"cpu": 2}, "submit": 0},
        },
    },
}


def test_queues_sorted_by_fairness_then_fifo_within_a_leaf():
    """Empty cluster of 10 cpus; a (guaranteed 4) and b (guaranteed 2) wait with jobs of 2 cpus.
    Shares (usage / guarantee) 0 and 0, a's pending 6 strictly above b's 4: a1.  Then a 2/4 = 0.5,
    b 0: b1 (FIFO within b: b1 entered at 1, b2 at 2, whatever the file order).  Then a 0.5 < b 1:
    a2.  Then a 1 = b 1 with equal pending (2 and 2): neither is less, the stable sort keeps the
    file order: a3.  Then a 1.5 > b 1: b2, and the 10 cpus are full."""
    data = yaml.safe_load(yaml.safe_dump(_TWO_QUEUES))
    decisions = cycle_decisions(parse_case(data), "yunikorn-fair")
    assert [d.job for d in decisions] == ["a1", "b1", "a2", "a3", "b2"]


def test_a_queue_with_a_higher_priority_job_goes_first():
    """The same queues with b already running b0 (2 cpus) and b2 of priority 5.  Priority first: b's
    current priority is 0 + 5 (its waiting jobs' highest) above a's 0: b2 (before b1: priority
    first within b); then both at 0 and a's share 0 < b's 4/2: a1, a2 (0.5), a3 (1 < 2), and the 10
    cpus are full.  ``yunikorn-fair:priority-disabled``: a 0 < b 1: a1, a2; a 1 = b 1, b's priority
    5 breaks the tie: b2; a 1 < b 2: a3."""
    data = yaml.safe_load(yaml.safe_dump(_TWO_QUEUES))
    data["cycle"]["pending"]["b2"]["priority"] = 5
    data["cycle"]["running"] = {"b0": {"queue": "b", "request": {"cpu": 2}, "start": 0}}
    case = parse_case(data)
    assert [d.job for d in cycle_decisions(case, "yunikorn-fair")] == ["b2", "a1", "a2", "a3"]
    assert [d.job for d in cycle_decisions(case, "yunikorn-fair:priority-disabled")] == ["a1", "a2", "b2", "a3"]


def test_the_map_arithmetic_keeps_absent_types_apart():
    """``SubOnlyExisting`` keeps the base's types only; ``ComponentWiseMin`` keeps a type of one
    side; a snapshot's remaining guarantee is nil when neither it nor its parents guarantee."""
    assert sub_only_existing({"first": 5}, {"first": 2, "pods": 1}) == {"first": 3}
    assert min_wise({"first": 5}, {"pods": 1}) == {"first": 5, "pods": 1}
    root = Snapshot("root", None, False, {"first": 4}, {}, {"first": 10}, None)
    leaf = Snapshot("root.a", root, True, {"first": 4}, {}, None, None)
    assert leaf.remaining() is None
    leaf.guaranteed = {"first": 3}
    assert leaf.remaining() == {"first": -1}


@pytest.mark.parametrize(
    ("settings_", "message"),
    [
        ({"preemption.enabeld": True}, "settings.preemption.enabeld: unknown setting"),
        (
            {"queues": {"child2": {"preemption.policy": "never"}}},
            "settings.queues.child2.preemption.policy: expected one of",
        ),
        ({"queues": {"child2": {"preemption.dealy": 1}}}, "settings.queues.child2.preemption.dealy: unknown setting"),
        ({"queues": {"child9": {}}}, "settings.queues.child9: unknown setting 'child9'; did you mean"),
        (
            {"queues": {"child2": {"preemption.delay": 0}}},
            "settings.queues.child2.preemption.delay: expected seconds > 0",
        ),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(settings_, message):
    state = load_case(LIBRARY / "yunikorn-try-preemption-on-queue.yaml").cycle
    with pytest.raises(CaseError) as err:
        online_policy(get("yunikorn-fair"), settings_).decide(state)
    assert str(err.value).startswith(message) and "\n" not in str(err.value), str(err.value)


@pytest.mark.parametrize(
    ("queues", "preempted"),
    [
        ({"child1": {"preemption.policy": "disabled"}}, set()),
        ({"parent": {"preemption.policy": "disabled"}}, set()),  # disabled passes down to child1
        ({"parent": {"preemption.policy": "fence"}}, {"alloc2"}),  # fence does not; the fence is the parent anyway
        ({"parent": {"preemption.delay": 60}}, set()),  # inherited: the ask has waited 30 s of 60
    ],
)
def test_queue_properties_and_what_a_child_inherits(queues, preempted):
    """TestTryPreemptionOnQueue (alloc2 preempted as upstream) under queue properties."""
    data = _ported("yunikorn-try-preemption-on-queue")
    data["settings"] = {"queues": queues}
    assert decided(cycle_decisions(parse_case(data), "yunikorn-fair")) == (set(), preempted)


# -- the property ------------------------------------------------------------------------------
@st.composite
def _crowded(draw):
    """Three queues under the root, each guaranteed some cpus and running 1-cpu allocations (some
    over their guarantee), the cluster full; one queue waits with an ask, long enough."""
    guarantees = draw(st.lists(st.integers(0, 6), min_size=3, max_size=3))
    held = draw(st.lists(st.integers(0, 8), min_size=3, max_size=3).filter(lambda h: sum(h) > 0))
    ask_queue = draw(st.sampled_from("abc"))
    running = {
        f"{q}{i}": {"queue": q, "request": {"cpu": 1}, "start": i, "priority": draw(st.integers(0, 1))}
        for k, q in enumerate("abc")
        for i in range(held[k])
    }
    data = {
        "name": "crowded",
        "resources": {"cpu": max(sum(held), 3)},
        "users": {q: {"guarantee": {"cpu": guarantees[k]}, "request": {"cpu": 1}} for k, q in enumerate("abc")},
        "cycle": {
            "now": 100,
            "running": running,
            "pending": {"ask": {"queue": ask_queue, "request": {"cpu": draw(st.integers(1, 3))}, "submit": 0}},
        },
    }
    return parse_case(data)


@given(_crowded())
@settings(max_examples=80, deadline=None)
def test_a_victims_queue_never_goes_below_its_guarantee(case):
    """Leaves directly under the root (no parent guarantee to borrow) with allocations of one unit:
    every queue that loses allocations keeps at least its guarantee, the ask's queue does not pass
    its own, and no victim's priority is above the ask's.  (With coarser allocations YuniKorn can
    take a queue below its guarantee: a victim is eligible when its queue is over its guarantee
    before the removal, ``isVictimQueueOverGuaranteed``, and ``GetPreemptableResource`` drops the
    negative part.)"""
    state = case.cycle
    decisions = cycle_decisions(case, "yunikorn-fair")
    lost: dict[str, float] = {}
    for d in decisions:
        if isinstance(d, Preempt):
            run = state.running[d.job]
            lost[run.job.queue] = lost.get(run.job.queue, 0.0) + float(run.usage[0])
            assert run.job.priority <= state.pending["ask"].priority
    usage = state.usage()
    q = state.case.queues
    for queue, amount in lost.items():
        assert usage[queue][0] - amount >= q.guarantee[queue][0]
    if lost:
        ask = state.pending["ask"]
        assert usage[ask.queue][0] + ask.request[0] <= q.guarantee[ask.queue][0]
