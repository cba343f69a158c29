"""Kueue online (:mod:`fairalloc.models.kueue_cycle`): every ported scheduling cycle of the library
decided as its upstream test asserts, small cycles worked by hand, what the policy remembers from
one cycle to the next, bad settings, and properties of every admission and preemption."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core.errors import CaseError
from fairalloc.core.registry import get
from fairalloc.engines.online import Admit, Job, Preempt, online_policy
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import import_files
from fairalloc.io.jobs import cycle_decisions
from fairalloc.models.kueue import _tree_of
from fairalloc.models.kueue_cycle import KueueCycle, Snapshot
from fairalloc.scheduling.replay import EventLog, replay

LIBRARY = Path(__file__).resolve().parent.parent / "cases"
CYCLES = sorted(p for p in LIBRARY.glob("kueue-*.yaml") if fairalloc.load_case(p).cycle is not None)


def _sets(decisions):
    admitted = {d.job for d in decisions if isinstance(d, Admit)}
    preempted = {d.job for d in decisions if isinstance(d, Preempt)}
    return admitted, preempted


def test_the_library_ports_the_upstream_tests():
    tests = {fairalloc.load_case(p).source.split(", ")[2] for p in CYCLES}
    assert len(CYCLES) >= 20
    assert {"TestSchedule", "TestScheduleForFairSharing", "TestPreemption", "TestFairPreemptions"} <= tests


@pytest.mark.parametrize("path", CYCLES, ids=lambda p: p.stem)
def test_every_ported_cycle_is_decided_as_upstream_asserts(path):
    case = fairalloc.load_case(path)
    assert "ff69552e79ad21652c36caa97038382e55625cf7" in case.source and "Apache-2.0" in case.source
    (expect,) = case.expect
    admitted, preempted = _sets(cycle_decisions(case, "kueue"))
    assert admitted == set(expect.admitted) and preempted == set(expect.preempted), (admitted, preempted)


FLAT = """
name: flat
resources: {cpu: 10}
groups: {co: {parent: null}}
users:
  a: {group: co, guarantee: {cpu: 4}, request: {cpu: 1}}
  b: {group: co, guarantee: {cpu: 6}, request: {cpu: 1}}
cycle:
  running: {}
  pending: {}
"""


# the reasons the upstream tests assert (their notes), which the admitted/preempted sets do not compare
REASONS = {
    "kueue-schedule-multiple-cqs-need-preemption": {"use-all": "InCohortReclamation"},
    "kueue-schedule-minimal-preemptions-target-exhausted": {"a1": "InClusterQueue", "a2": "InClusterQueue"},
    "kueue-schedule-preempt-in-cluster-queue-and-cohort": {
        "borrower": "InCohortReclamation",
        "low-2": "InClusterQueue",
    },
    "kueue-preemption-borrow-within-cohort-own-and-others": {
        "b_standard_mid": "InClusterQueue",
        "a_best_effort_lower": "InCohortReclaimWhileBorrowing",
    },
    "kueue-preemption-borrow-within-cohort-not-borrowing-after": {"b_standard": "InCohortReclamation"},
    "kueue-fair-preemptions-reclaim-nominal-from-user-using-most": {"b1": "InCohortReclamation"},
    "kueue-fair-preemptions-reclaim-borrowable-quota-from-user-using-most": {"b1": "InCohortFairSharing"},
    "kueue-fair-preemptions-preempt-one-from-each-cq-borrowing": {
        "a1": "InCohortReclamation",
        "b1": "InCohortReclamation",
    },
    "kueue-fair-preemptions-same-cq-and-highest-user": {"a_low": "InClusterQueue", "b1": "InCohortFairSharing"},
    "kueue-hierarchical-preemptions-hierarchical-advantage": {"admitted2": "InCohortReclamation"},
}


@pytest.mark.parametrize("name", sorted(REASONS))
def test_each_victim_is_preempted_for_the_reason_upstream_asserts(name):
    decisions = cycle_decisions(fairalloc.load_case(name), "kueue")
    assert {d.job: d.why for d in decisions if isinstance(d, Preempt)} == REASONS[name]


def _flat(running, pending, **settings_):
    data = yaml.safe_load(FLAT)
    data["cycle"] = {"now": 10, "running": running, "pending": pending}
    data["settings"] = settings_
    return parse_case(data)


def test_available_and_borrowing_level_by_hand():
    """Cohort co: a (4 CPU, lendingLimit 1: it keeps 3) and b (6 CPU, borrowingLimit 2).  The
    cohort's SubtreeQuota is 1 + 6 = 7.  With a using 2 and b 6, the cohort's usage is
    max(0, 2 - 3) + 6 = 6: a may take its local 3 - 2 = 1 plus min(7 - 6, ...) = 1, 2 in all;
    b min(7 - 6, 6 - 6 + 2) = 1.  A request of 2 in a is within a's quota (2 + 2 <= 4): level 0.
    A request of 3 in b borrows (6 + 3 > 6) and does not fit in the cohort either (6 + 3 > 7):
    its level is the root's height, 1, and it cannot be reclaimed below the root."""
    data = yaml.safe_load(FLAT)
    data["users"]["a"]["lending_limit"] = {"cpu": 1}
    data["users"]["b"]["borrowing_limit"] = {"cpu": 2}
    data["cycle"]["running"] = {
        "x": {"queue": "a", "request": {"cpu": 2}},
        "y": {"queue": "b", "request": {"cpu": 6}},
    }
    case = parse_case(data)
    snap = Snapshot(_tree_of(case.cycle.case), case.cycle)
    assert np.allclose(snap.available("a"), [2]) and np.allclose(snap.available("b"), [1])
    assert snap.height("a", np.array([2.0])) == (0, True)
    assert snap.height("b", np.array([3.0])) == (1, False)


def test_a_borrowing_head_waits_behind_one_within_nominal():
    """a (4) and b (6) in one cohort, nothing running.  a's head asks 5 (borrows 1: level 1,
    priority 10), b's head 6 (within nominal: level 0, priority 0).  Classic order: level first,
    so b is admitted first; then 10 - 6 = 4 < 5 and a's head is skipped."""
    case = _flat(
        {},
        {"big": {"queue": "a", "request": {"cpu": 5}, "priority": 10}, "own": {"queue": "b", "request": {"cpu": 6}}},
    )
    assert _sets(cycle_decisions(case, "kueue")) == ({"own"}, set())


def test_the_preemptor_is_admitted_in_the_next_cycle():
    """a runs low (priority 0, 4 CPU: its nominal); b's 6 are used by other (priority 0).  high
    (priority 5, 4 CPU) arrives in a, withinClusterQueue LowerPriority: low is preempted, high
    waits.  The simulator applies the preemption (low waits again), and in the next cycle high, at
    the head of a (priority 5 before low's 0), fits and is admitted; low then finds no room."""
    case = _flat(
        {"low": {"queue": "a", "request": {"cpu": 4}}, "other": {"queue": "b", "request": {"cpu": 6}}},
        {"high": {"queue": "a", "request": {"cpu": 4}, "priority": 5}},
        cluster_queues={"a": {"preemption": {"within_cluster_queue": "LowerPriority"}}},
    )
    policy = online_policy(get("kueue"), case.settings)
    first = policy.decide(case.cycle)
    assert first == [Preempt("low", "high", "InClusterQueue")]
    second = policy.decide(case.cycle.after(first))
    assert _sets(second) == ({"high"}, set())


def test_a_preempted_job_keeps_its_place_in_the_queue():
    """old (created at 0) was preempted at 10 and waits again; new was created at 5.  Equal
    priorities, room for one of them (a's 4 CPU): Kueue orders by the creation time, not by when a
    workload entered the queue again (GetQueueOrderTimestamp, PrioritySortingWithinCohort on), so
    old is the head and is admitted."""
    pending = {
        "old": {"queue": "a", "request": {"cpu": 4}, "submit": 0},
        "new": {"queue": "a", "request": {"cpu": 4}, "submit": 5},
    }
    case = _flat({"other": {"queue": "b", "request": {"cpu": 6}}}, pending)
    state = dataclasses.replace(case.cycle, since={"old": 10.0, "new": 5.0})
    assert _sets(online_policy(get("kueue"), case.settings).decide(state)) == ({"old"}, set())


def test_strict_fifo_blocks_and_best_effort_fifo_moves_on():
    """a (4 CPU) runs x (3 CPU, priority 0) until it ends.  Its queue holds big (4 CPU, older) and
    small (1 CPU).  Cycle 1: big does not fit (1 free) in either strategy.  Cycle 2 (nothing
    changed): StrictFIFO pops big again and blocks small; BestEffortFIFO parked big as
    inadmissible (and says so: ``again``, the replay asks at once), so small is the head and is
    admitted.  Cycle 3, after x ends: big is back (a workload of its cohort finished) and
    admitted."""
    running = {"x": {"queue": "a", "request": {"cpu": 3}}, "y": {"queue": "b", "request": {"cpu": 6}}}
    pending = {
        "big": {"queue": "a", "request": {"cpu": 4}, "submit": 1},
        "small": {"queue": "a", "request": {"cpu": 1}, "submit": 2},
    }
    for strategy, admitted in (("StrictFIFO", set()), ("BestEffortFIFO", {"small"})):
        case = _flat(running, pending, cluster_queues={"a": {"queueing_strategy": strategy}})
        policy = online_policy(get("kueue"), case.settings)
        assert policy.decide(case.cycle) == []
        assert policy.again is (strategy == "BestEffortFIFO")
        second = policy.decide(case.cycle)
        assert _sets(second) == (admitted, set()), strategy
    state = case.cycle.after(second)
    ended = dataclasses.replace(state, running={"y": state.running["y"]})
    assert _sets(policy.decide(ended)) == ({"big"}, set())


def test_any_release_in_the_root_cohort_puts_a_parked_head_back():
    """BestEffortFIFO: a (4 CPU) holds x (3 CPU).  Cycle 1 parks big (4 CPU); cycle 2 admits small
    (1 CPU; a has one CPU free); cycle 3: tiny (1 CPU) does not fit beside small and is parked too.
    small then finishes: Kueue puts back every inadmissible workload of the root cohort on *any*
    release of quota there (workload_controller.go calls QueueAssociatedInadmissibleWorkloadsAfter
    for a finished, deleted or evicted workload; requeueWorkloadsCohort), not only on the release
    of a job that ran when big was parked.  So cycle 4 has big as a's head again: it fails and is
    parked, and cycle 5 admits tiny.  (Had only the jobs running at big's parking counted, big
    would have stayed parked and cycle 4 admitted tiny.)"""
    running = {"x": {"queue": "a", "request": {"cpu": 3}}, "y": {"queue": "b", "request": {"cpu": 6}}}
    pending = {
        "big": {"queue": "a", "request": {"cpu": 4}, "submit": 1},
        "small": {"queue": "a", "request": {"cpu": 1}, "submit": 2},
        "tiny": {"queue": "a", "request": {"cpu": 1}, "submit": 3},
    }
    case = _flat(running, pending, cluster_queues={"a": {"queueing_strategy": "BestEffortFIFO"}})
    policy = online_policy(get("kueue"), case.settings)
    assert policy.decide(case.cycle) == [] and set(policy.parked) == {"big"}
    second = policy.decide(case.cycle)
    assert _sets(second) == ({"small"}, set())
    state = case.cycle.after(second)
    assert policy.decide(state) == [] and set(policy.parked) == {"big", "tiny"}
    ended = dataclasses.replace(state, running={k: v for k, v in state.running.items() if k != "small"})
    assert policy.decide(ended) == [] and set(policy.parked) == {"big"}  # big again, not tiny
    assert _sets(policy.decide(ended)) == ({"tiny"}, set())


def test_a_parked_head_leaves_its_queue_to_the_next_job_within_the_same_instant():
    """a (2 CPU nominal, borrowing limit 0) in cohort org with b (4 CPU, idle).  a1 (2 CPU) runs and
    ends at 100; a5 (4 CPU, more than a may ever use) and y (2 CPU) wait in a.  At t=100 a1 ends:
    a5 is the head, never fits, and is parked; y, next in a, is admitted at t=100 in the same
    instant (upstream the scheduler runs its next cycle at once: the cycle that parks a5 sets
    ``again``).  Before, the replay asked again only after a cycle that decided something, and y
    waited for an event that never came."""
    data = {
        "name": "parked-head",
        "resources": {"cpu": 6},
        "groups": {"org": {"parent": None}},
        "users": {
            "a": {"group": "org", "guarantee": {"cpu": 2}, "borrowing_limit": {"cpu": 0}, "request": {"cpu": 1}},
            "b": {"group": "org", "guarantee": {"cpu": 4}, "request": {"cpu": 1}},
        },
        "settings": {"cluster_queues": {"a": {"queueing_strategy": "BestEffortFIFO"}}},
    }
    inst = parse_case(data).instance
    jobs = [
        Job("a1", "a", (2.0,), 1, None, 0.0, 0.0, 100.0),
        Job("a5", "a", (4.0,), 1, None, 0.0, 1.0, 50.0),
        Job("y", "a", (2.0,), 1, None, 0.0, 1.0, 50.0),
    ]
    out = io.StringIO()
    replay(inst, jobs, get("kueue"), settings=data["settings"], log=EventLog(out, ("cpu",), "csv"))
    starts = {
        row.split(",")[3]: float(row.split(",")[1]) for row in out.getvalue().splitlines()[1:] if ",admit," in row
    }
    assert starts == {"a1": 0.0, "y": 100.0}


def test_quotas_above_the_capacity_admit_only_what_the_cluster_can_run():
    """a and b, no cohort, nominal quota 4 CPU each on a 6-CPU cluster (quotas add up to more than
    the capacity).  b runs 4; a's job of 4 is within a's quota, so Kueue would admit it and its
    pods would pend for lack of room (2 CPU free).  The simulator runs what it admits: the job waits
    at a's head, not parked; once b's job ends, it is admitted."""
    data = {
        "name": "over-quota",
        "resources": {"cpu": 6},
        "users": {
            "a": {"guarantee": {"cpu": 4}, "request": {"cpu": 1}},
            "b": {"guarantee": {"cpu": 4}, "request": {"cpu": 1}},
        },
        "cycle": {
            "now": 5,
            "running": {"b1": {"queue": "b", "request": {"cpu": 4}}},
            "pending": {"a1": {"queue": "a", "request": {"cpu": 4}, "submit": 1}},
        },
    }
    case = parse_case(data)
    policy = online_policy(get("kueue"), {})
    assert policy.decide(case.cycle) == [] and not policy.parked  # waits at the head, not parked
    ended = dataclasses.replace(case.cycle, running={})
    assert _sets(policy.decide(ended)) == ({"a1"}, set())


def test_a_preemptor_without_candidates_reserves_unless_it_can_always_reclaim():
    """a (2 GPU) runs one GPU; b (0) borrows.  a2 (2 GPU, in a, older) needs preemption and has no
    candidate (nobody borrows).  With reclaimWithinCohort LowerPriority a cannot always reclaim:
    it reserves min(2, 2 - 1) = 1, and b1 (1 GPU, in b) no longer fits; with Any it reserves
    nothing and b1 borrows the free GPU (TestSchedule's "capacity (not) blocked" pair)."""
    base = fairalloc.load_case("kueue-schedule-capacity-blocked-reclaim-lower-priority")
    assert _sets(cycle_decisions(base, "kueue")) == (set(), set())
    data = yaml.safe_load(base.path.read_text())
    data["settings"]["cluster_queues"]["ClusterQueueA"]["preemption"]["reclaim_within_cohort"] = "Any"
    assert _sets(cycle_decisions(parse_case(data), "kueue")) == ({"b1-pending"}, set())


def test_the_policy_does_not_change_the_state():
    case = fairalloc.load_case("kueue-schedule-minimal-preemptions-target-exhausted")
    running, pending = dict(case.cycle.running), dict(case.cycle.pending)
    cycle_decisions(case, "kueue")
    assert dict(case.cycle.running) == running and dict(case.cycle.pending) == pending


@pytest.mark.parametrize(
    ("settings_", "message"),
    [
        ({"fair_sharng": True}, "settings.fair_sharng: unknown setting 'fair_sharng'; did you mean 'fair_sharing'?"),
        ({"fair_sharing": "yes"}, "settings.fair_sharing: must be true or false"),
        ({"preemption_strategies": ["LessThanFinalShare"]}, "settings.preemption_strategies[0]: unknown value"),
        (
            {"preemption_strategies": ["LessThanInitialShare", "LessThanInitialShare"]},
            "settings.preemption_strategies: ['LessThanInitialShare', 'LessThanInitialShare'] is not a list Kueue "
            "accepts",
        ),
        (
            {"cluster_queues": {"a": {"queueing_strategy": "StrictFifo"}}},
            "settings.cluster_queues.a.queueing_strategy: unknown value 'StrictFifo'; did you mean 'StrictFIFO'",
        ),
        (
            {"cluster_queues": {"a": {"preemption": {"within_cluster_queue": "Any"}}}},
            "settings.cluster_queues.a.preemption.within_cluster_queue: unknown value 'Any'",
        ),
        (
            {"cluster_queues": {"a": {"preemption": {"borrow_within_cohort": {"policy": "LowerPriority", "max": 1}}}}},
            "settings.cluster_queues.a.preemption.borrow_within_cohort.max: unknown setting 'max'",
        ),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(settings_, message):
    with pytest.raises(CaseError) as err:
        KueueCycle(settings_)
    assert str(err.value).startswith(message) and "\n" not in str(err.value), str(err.value)


def test_settings_for_an_unknown_queue_suggest_the_closest():
    case = _flat({}, {"p": {"queue": "a", "request": {"cpu": 1}}}, cluster_queues={"aa": {}})
    with pytest.raises(CaseError, match=r"settings.cluster_queues.aa: unknown queue 'aa'; did you mean 'a'\?"):
        cycle_decisions(case, "kueue")


# -- properties -----------------------------------------------------------------------------------
POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")


@st.composite
def cycles(draw):
    """A cohort (two ClusterQueues, one of them maybe in a sub-cohort) and a third ClusterQueue,
    quotas, limits, running jobs that fit them, waiting jobs, and each queue's policies."""
    queues = ["q0", "q1", "q2"]
    users, running, pending, cqs = {}, {}, {}, {}
    for k, q in enumerate(queues):
        user = {
            "group": "sub" if k == 1 and draw(st.booleans()) else "co",
            "guarantee": {"cpu": draw(st.integers(0, 6))},
        }
        if draw(st.booleans()):
            user["borrowing_limit"] = {"cpu": draw(st.integers(0, 4))}
        if draw(st.booleans()):
            user["lending_limit"] = {"cpu": draw(st.integers(0, 6))}
        user["request"] = {"cpu": 1}
        users[q] = user
        cqs[q] = {
            "queueing_strategy": draw(st.sampled_from(("StrictFIFO", "BestEffortFIFO"))),
            "preemption": {
                "within_cluster_queue": draw(st.sampled_from(POLICIES)),
                "reclaim_within_cohort": draw(st.sampled_from(("Never", "LowerPriority", "Any"))),
                "borrow_within_cohort": {"policy": draw(st.sampled_from(("Never", "LowerPriority")))},
            },
        }
        for j in range(draw(st.integers(0, 3))):
            running[f"r{k}{j}"] = {
                "queue": q,
                "request": {"cpu": draw(st.integers(1, 4))},
                "priority": draw(st.integers(0, 3)),
            }
        for j in range(draw(st.integers(0, 2))):
            pending[f"p{k}{j}"] = {
                "queue": q,
                "request": {"cpu": draw(st.integers(1, 5))},
                "priority": draw(st.integers(0, 3)),
            }
    data = {
        "name": "property",
        "resources": {"cpu": 30},
        "groups": {"co": {"parent": None}, "sub": {"parent": "co"}},
        "users": users,
        "settings": {"fair_sharing": draw(st.booleans()), "cluster_queues": cqs},
        "cycle": {"running": running, "pending": pending},
    }
    return parse_case(data)


def _within_quota(state) -> bool:
    """Every ClusterQueue and cohort within its quota plus borrowing limit, the root within its
    quota: the constraints written directly on the tree's SubtreeQuota and usage."""
    tree = _tree_of(state.case)
    usage = tree.usage(np.array([state.usage()[q] for q in tree.leaves]))
    for v, parent in tree.parent.items():
        bound = tree.quota[v] if parent is None else tree.quota[v] + tree.borrowing_limit[v]
        if (usage[v] > bound + 1e-9).any():
            return False
    return True


@settings(max_examples=150, deadline=None)
@given(cycles())
def test_admissions_stay_within_quota_and_preemption_spares_higher_priorities(case):
    state = case.cycle
    assume(_within_quota(state))
    decisions = cycle_decisions(case, "kueue")
    assert _within_quota(state.after(decisions))
    fair = case.settings["fair_sharing"]
    for d in decisions:
        if isinstance(d, Preempt) and not fair:
            victim, preemptor = state.running[d.job].job, state.pending[d.by]
            if victim.queue == preemptor.queue:
                assert victim.priority <= preemptor.priority
                policy = case.settings["cluster_queues"][victim.queue]["preemption"]["within_cluster_queue"]
                assert victim.priority < preemptor.priority or policy == "LowerOrNewerEqualPriority"


# -- the settings the Kueue importer writes ---------------------------------------------------------
def _write(tmp_path, objects) -> list[str]:
    path = tmp_path / "kueue.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return [str(path)]


def _cq(name: str, **spec) -> dict:
    quota = {
        "coveredResources": ["cpu"],
        "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": 4}]}],
    }
    body = {"cohortName": "co", "resourceGroups": [quota], **spec}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def test_the_importer_writes_the_queues_policies_and_fair_sharing_as_settings(tmp_path):
    """A v1beta2 Configuration with a fairSharing section turns fair sharing on (v1beta2 has no
    ``enable``); its strategies, each ClusterQueue's queueingStrategy and preemption become the
    settings the cycle reads, and the case they are written in loads and decides."""
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "fairSharing": {"preemptionStrategies": ["LessThanInitialShare"]},
    }
    preemption = {
        "withinClusterQueue": "LowerPriority",
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
    }
    files = _write(tmp_path, [config, _cq("a", queueingStrategy="StrictFIFO", preemption=preemption), _cq("b")])
    case, warnings = import_files(files, name="imported")
    assert warnings == []
    assert case["settings"] == {
        "fair_sharing": True,
        "preemption_strategies": ["LessThanInitialShare"],
        "cluster_queues": {
            "a": {
                "queueing_strategy": "StrictFIFO",
                "preemption": {
                    "within_cluster_queue": "LowerPriority",
                    "reclaim_within_cohort": "Any",
                    "borrow_within_cohort": {"policy": "LowerPriority", "max_priority_threshold": 100},
                },
            }
        },
    }
    policy = KueueCycle(parse_case(case).settings)
    assert policy.fair_sharing and policy.strategies == ["LessThanInitialShare"]
    assert policy.policy("a").queueing == "StrictFIFO" and policy.policy("b").queueing == "BestEffortFIFO"


def test_the_importer_warns_of_values_kueue_does_not_know_and_reads_the_default(tmp_path):
    config = {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration", "fairSharing": {"enable": True}}
    odd = _cq("a", queueingStrategy="Strict", preemption={"withinClusterQueue": "Any"})
    case, warnings = import_files(_write(tmp_path, [config, odd]), name="imported")
    assert case["settings"] == {"fair_sharing": True}
    assert [w.split(" (document 2): ")[1] for w in warnings] == [
        "ClusterQueue/a: spec.queueingStrategy: 'Strict' is not a value Kueue knows (BestEffortFIFO, "
        "StrictFIFO): the default, BestEffortFIFO, is read",
        "ClusterQueue/a: spec.preemption.withinClusterQueue: 'Any' is not a value Kueue knows (Never, "
        "LowerPriority, LowerOrNewerEqualPriority): the default, Never, is read",
    ]
