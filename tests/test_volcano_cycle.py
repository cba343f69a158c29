"""Volcano's session online (:mod:`fairalloc.models.volcano_cycle`): the ported upstream action
tests decided as they assert, small sessions worked by hand, the gang and reclaim rules as
properties, and the #4165 story (29/29/17) replayed by the simulator from its bundled workloads."""

from __future__ import annotations

import csv
import dataclasses
import io

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core.errors import CaseError
from fairalloc.engines.online import Admit, ClusterState, Job, Preempt, Running, online_policy
from fairalloc.io.cases import bundled_cases, parse_case
from fairalloc.io.job_workloads import load_job_workload
from fairalloc.io.jobs import cycle_decisions
from fairalloc.models.volcano_cycle import Session
from fairalloc.scheduling.replay import EventLog, replay

CYCLE_CASES = [n for n in bundled_cases() if n.startswith("volcano-") and fairalloc.load_case(n).cycle is not None]

#: pods bound per admitted job, from the upstream tests' ExpectBindMap (the expectation rows
#: compare the sets of jobs only)
BOUND_PODS = {
    "volcano-allocate-one-job-two-pods": {"pg1": 2},
    "volcano-allocate-two-jobs-on-one-node": {"pg1": 1, "pg2": 1},
    "volcano-fair-share-allocate-low-share-first": {"pg-large-2": 1},
    "volcano-fair-share-allocate-share-updated": {"pg-large-1": 1, "pg-large-2": 1},
    "volcano-fair-share-allocate-next-job": {"pg-2": 1},
}


def _policy(settings):
    """volcano-proportion's online form (it hands the session the plug-in's arithmetic)."""
    return fairalloc.get("volcano-proportion").online(settings)


def _sets(decisions):
    admitted = {d.job for d in decisions if isinstance(d, Admit)}
    preempted = {d.job for d in decisions if isinstance(d, Preempt)}
    return admitted, preempted


def test_the_library_ports_at_least_eight_volcano_action_tests():
    actions = {fairalloc.load_case(n).settings["actions"][0] for n in CYCLE_CASES}
    assert len(CYCLE_CASES) >= 8 and actions == {"allocate", "preempt", "reclaim"}


@pytest.mark.parametrize("name", CYCLE_CASES)
def test_every_volcano_cycle_case_is_decided_as_upstream_asserts(name):
    case = fairalloc.load_case(name)
    admitted, preempted = _sets(cycle_decisions(case, "volcano-proportion"))
    rows = [e for e in case.expect if e.mechanism == "volcano-proportion"]
    assert rows
    for e in rows:
        assert admitted == set(e.admitted or []) and preempted == set(e.preempted or []), e.note


@pytest.mark.parametrize("name", sorted(BOUND_PODS))
def test_the_allocate_cases_bind_the_pods_upstream_binds(name):
    decisions = cycle_decisions(fairalloc.load_case(name), "volcano-proportion")
    assert {d.job: d.pods for d in decisions if isinstance(d, Admit)} == BOUND_PODS[name]


CASE = """
name: hand
resources: {cpu: 6, memory: 6}
users:
  a: {}
  b: {}
settings: {}
cycle:
  now: 10
  running: {}
  pending: {}
"""


def _case(settings=None, running=None, pending=None, nodes=None, users=None):
    data = yaml.safe_load(CASE)
    data["settings"] = settings or {}
    data["cycle"]["running"] = running or {}
    data["cycle"]["pending"] = pending or {}
    if nodes is not None:
        data["cycle"]["nodes"] = nodes
    if users is not None:
        data["users"] = users
    return parse_case(data)


@pytest.mark.parametrize("actions", ["enqueue, allocate", "allocate"])
def test_a_gang_is_admitted_with_its_minimum_or_not_at_all(actions):
    """6 cpus in one pool, queue a alone: g1 asks 4 pods of 2 cpus, at least 2; g2 4 pods of 1
    cpu, all 4.  deserved(a) = min(6, request 8 + 4) = 6 = realCapability.

    With ``enqueue``: g1's gang (4 cpus) enters, g2's does not (4 + 4 > 6).  allocate pops a:
    g1 places 2 pods (the gang: ready, committed); a (share 4/6) again: g1 one more pod (6 <= 6);
    a is then overused.  g1 runs 3 of its 4 pods.

    Without: every waiting job is served.  After g1's gang, the job order puts the not-ready g2
    first: it places 2 pods (5, 6 cpus), the third is not Allocatable (7 > 6), the gang is short
    (2 < 4): rolled back.  Then g1 takes its third pod: the same answer."""
    case = _case(
        pending={
            "g1": {"queue": "a", "request": {"cpu": 2}, "pods": 4, "min_pods": 2},
            "g2": {"queue": "a", "request": {"cpu": 1}, "pods": 4, "min_pods": 4},
        },
        settings={"actions": actions},
    )
    decisions = cycle_decisions(case, "volcano-proportion")
    assert decisions == [Admit("g1", 3, (), decisions[0].why)]


def test_allocate_serves_the_lowest_share_one_pod_per_pop():
    """6 cpus, queues a and b of weight 1, each asking 4 one-cpu single pods.  deserved 3 and 3;
    pops alternate a, b (share 0 vs 0: name; then 1/3 vs 0; ...) until both hold 3: a1, b1, a2,
    b2, a3, b3 admitted, a4 and b4 refused (Allocatable: 3 + 1 > 3)."""
    pending = {f"{q}{k}": {"queue": q, "request": {"cpu": 1}, "submit": k} for k in (1, 2, 3, 4) for q in "ab"}
    decisions = cycle_decisions(_case(pending=pending, settings={"actions": ["allocate"]}), "volcano-proportion")
    assert [d.job for d in decisions] == ["a1", "b1", "a2", "b2", "a3", "b3"]


def test_a_reclaimer_is_pipelined_and_bound_by_the_next_session():
    """Session 1 (6 cpus, only a has jobs): deserved(a) = 6, a runs 6 single pods.  b submits 2:
    session 2 gives deserved 3 and 3 in round 1, b capped at its request 2, a takes the last cpu in
    round 2: a 4, b 2.  allocate finds no room; reclaim (b: share 0, not overused) takes a's newest
    jobs (the reverse job order) while a holds more than 4: a5 (6 > 4), then a4 (5 > 4), one for
    each of b's pods, which are pipelined, not admitted.  Session 3: allocate serves b (share 0)
    twice into the freed cpus; a (4 = deserved: overused) waits with a4 and a5.  a 4, b 2."""
    a = {f"a{k}": {"queue": "a", "request": {"cpu": 1}, "submit": k} for k in range(6)}
    first = _case(pending=a).cycle
    policy = online_policy(fairalloc.get("volcano-proportion"), {})
    state = first.after(policy.decide(first))
    assert len(state.running) == 6
    b = {f"b{k}": Job(f"b{k}", "b", (1.0, 0.0), submit=1) for k in range(2)}
    state = dataclasses.replace(state, now=1, pending={**state.pending, **b}, since=dict.fromkeys(b, 1.0))
    second = policy.decide(state)
    assert {d.job for d in second if isinstance(d, Preempt)} == {"a4", "a5"}
    assert not [d for d in second if isinstance(d, Admit)] and all(d.by in b for d in second)
    state = dataclasses.replace(state.after(second), now=2)
    third = policy.decide(state)
    assert {d.job for d in third} == {"b0", "b1"} and all(isinstance(d, Admit) for d in third)
    usage = state.after(third).usage()
    assert usage["a"][0] == 4 and usage["b"][0] == 2


def test_preempt_takes_only_lower_priority_jobs_of_the_same_queue():
    """Queue a has capability 2 cpus and runs lo (priority 1, 2 cpus); hi (priority 9, 2 cpus)
    waits in a, and same (priority 1) in a too.  deserved(a) = 2: hi is not Allocatable; preempt
    evicts lo (lower priority, same queue); same (equal priority) may not preempt anyone."""
    case = _case(
        users={"a": {"limit": {"cpu": 2}}, "b": {}},
        running={"lo": {"queue": "a", "request": {"cpu": 2}, "priority": 1}},
        pending={
            "hi": {"queue": "a", "request": {"cpu": 2}, "priority": 9},
            "same": {"queue": "a", "request": {"cpu": 2}, "priority": 1},
        },
        settings={"actions": ["preempt"]},
    )
    decisions = cycle_decisions(case, "volcano-proportion")
    assert [(d.job, d.by) for d in decisions] == [("lo", "hi")]


def test_a_queue_that_is_not_reclaimable_keeps_its_jobs():
    """As a reclaim case where a (6 single pods, deserved 3) is above deserved, but a is
    ``reclaimable: false``: nothing is evicted for b."""
    running = {f"a{k}": {"queue": "a", "request": {"cpu": 1}} for k in range(6)}
    pending = {"b0": {"queue": "b", "request": {"cpu": 1}}}
    open_ = cycle_decisions(_case(running=running, pending=pending), "volcano-proportion")
    assert [d.job for d in open_] == ["a5"]
    closed = _case(running=running, pending=pending, settings={"queues": {"a": {"reclaimable": False}}})
    assert cycle_decisions(closed, "volcano-proportion") == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"action": ["allocate"]}, "settings.action: unknown setting 'action'; did you mean 'actions'?"),
        ({"actions": ["allocate", "reclam"]}, "settings.actions[1]: unknown action 'reclam'; did you mean 'reclaim'?"),
        ({"actions": "enqueue, backfill"}, "settings.actions[1]: unknown action 'backfill'"),
        ({"actions": []}, "settings.actions: no action (give some of enqueue, allocate, preempt, reclaim)"),
        ({"queues": {"a": {"reclaimabel": False}}}, "settings.queues.a.reclaimabel: unknown setting 'reclaimabel'"),
        ({"jobs": {"j": {"preemptable": "no"}}}, "settings.jobs.j.preemptable: must be true or false"),
        ({"allocatable": 1}, "settings.allocatable: must be true or false"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(settings, message):
    with pytest.raises(CaseError) as err:
        _policy(settings)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_names_in_settings_are_checked_against_the_cycle():
    pending = {"b0": {"queue": "b", "request": {"cpu": 1}}}
    with pytest.raises(CaseError, match=r"settings.queues.aa: unknown queue 'aa'; did you mean 'a'\?"):
        cycle_decisions(
            _case(pending=pending, settings={"queues": {"aa": {"reclaimable": False}}}), "volcano-proportion"
        )
    nodes = {"n1": {"cpu": 6, "memory": 6}}
    bad = _case(pending=pending, nodes=nodes, settings={"tainted_nodes": ["n2"]})
    with pytest.raises(CaseError, match=r"settings.tainted_nodes\[0\]: unknown node 'n2'"):
        cycle_decisions(bad, "volcano-proportion")


# -- properties -----------------------------------------------------------------------------


@st.composite
def _cycles(draw):
    """Two or three queues on one to three nodes of 4 cpus, some jobs running (placed first fit),
    some waiting (gangs among them)."""
    queues = ["q0", "q1", "q2"][: draw(st.integers(2, 3))]
    nodes = {f"n{k}": np.array([4.0]) for k in range(draw(st.integers(1, 3)))}
    free = {n: 4.0 for n in nodes}
    running: dict[str, Running] = {}
    for k in range(draw(st.integers(0, 6))):
        q, size = draw(st.sampled_from(queues)), float(draw(st.integers(1, 2)))
        node = next((n for n in nodes if free[n] >= size), None)
        if node is None:
            break
        free[node] -= size
        running[f"r{k}"] = Running(Job(f"r{k}", q, (size,), priority=draw(st.integers(0, 2))), 1, 0.0, (node,))
    pending = {}
    for k in range(draw(st.integers(1, 5))):
        pods = draw(st.integers(1, 3))
        least = draw(st.integers(1, pods))
        job = Job(f"p{k}", draw(st.sampled_from(queues)), (1.0,), pods, least, draw(st.integers(0, 2)), 0.0)
        pending[job.name] = job
    weights = {q: draw(st.integers(1, 3)) for q in queues}
    case = parse_case(
        {
            "name": "prop",
            "resources": {"cpu": 4.0 * len(nodes)},
            "users": {q: {"weight": w} for q, w in weights.items()},
        }
    ).instance
    return ClusterState(case, 0.0, running, pending, dict.fromkeys(pending, 0.0), nodes, {})


@settings(max_examples=80, deadline=None)
@given(_cycles())
def test_gang_no_job_ever_runs_fewer_than_its_minimum(state):
    """And allocate (the only action that binds) never takes a queue beyond its deserved."""
    policy = _policy({})
    decisions = policy.decide(state)
    deserved = Session(state, policy).deserved
    for d in decisions:
        if isinstance(d, Admit):
            job = state.pending[d.job]
            assert job.least <= d.pods <= job.pods and len(d.nodes) == d.pods
    after = state.after(decisions)
    assert all(run.pods >= run.job.least for run in after.running.values())
    for node, room in after.free_on_nodes().items():
        assert room[0] >= -1e-9, node  # nothing bound beyond a node
    for q in {state.pending[d.job].queue for d in decisions if isinstance(d, Admit)}:
        assert after.usage()[q][0] * 1000 <= deserved[q][0] + 1e-9, q  # Volcano's millicores


@settings(max_examples=80, deadline=None)
@given(_cycles())
def test_reclaim_takes_only_from_queues_above_deserved(state):
    """Each reclaim victim's queue holds more than its deserved when the victim is taken (Volcano
    tests before it subtracts, so the last victim may take its queue below deserved: the rule is
    "above deserved before", not "never below after"); the reclaimer's queue is not overused (by
    what it holds once the evictions before are counted: a queue overused when the session opens
    may fall below deserved as a victim and then reclaim in its turn, Volcano's ping-pong)."""
    policy = _policy({"actions": ["reclaim"]})
    decisions = policy.decide(state)
    session = Session(state, policy)
    held = {q: v.copy() for q, v in session.allocated.items()}
    for d in decisions:
        assert isinstance(d, Preempt)
        victim = state.running[d.job].job
        assert victim.queue != state.pending[d.by].queue
        assert not session.less_equal(held[victim.queue], session.deserved[victim.queue]), (d, held, session.deserved)
        reclaimer = state.pending[d.by].queue
        assert not session.less_equal(session.deserved[reclaimer], held[reclaimer])  # not overused
        held[victim.queue] = held[victim.queue] - session.req(victim)


# -- Volcano #4165 ----------------------------------------------------------------------------

MI = 1048576


def _replay_4165(workload: str, nodes=None, together: bool = False):
    """The bundled ``workload`` replayed against ``report-volcano-4165`` (its settings: the thread's
    actions ``enqueue, allocate, reclaim``, the tainted control-plane node) under volcano-proportion,
    as ``fairalloc simulate WORKLOAD --case report-volcano-4165`` runs it; ``nodes`` replaces the
    workload's, ``together`` submits every job at 0.  Returns the result and the event log's rows."""
    case = fairalloc.load_case("report-volcano-4165")
    w = load_job_workload(workload, case.instance)
    jobs = [dataclasses.replace(j, submit=0.0) for j in w.jobs] if together else w.jobs
    stream = io.StringIO()
    log = EventLog(stream, case.instance.resources, "csv")
    mechanism = fairalloc.get("volcano-proportion")
    result = replay(case.instance, jobs, mechanism, settings=case.settings, nodes=nodes or w.nodes, log=log)
    return result, list(csv.DictReader(io.StringIO(stream.getvalue())))


def _pods(result, events) -> dict[str, int]:
    """Pods running per tenant at the end, from the event log (admitted minus preempted and
    finished), checked against the jobs the result counts running (every job is one pod)."""
    sign = {"admit": 1, "preempt": -1, "finish": -1, "submit": 0}
    out = {q: 0 for q in ("tenant-a", "tenant-b", "tenant-c")}
    for row in events:
        out[row["queue"]] += sign[row["event"]] * int(row["pods"])
    assert out == {q.queue: q.running for q in result.queues if q.queue in out}
    return out


def _at(events, time: str, kind: str) -> list[dict]:
    return [row for row in events if row["time"] == time and row["event"] == kind]


def test_4165_with_75_cpus_counted_allocate_and_reclaim_give_25_each():
    """The thread's cluster as counted there: 75 cpus (``volcano-4165-75``: one pool, the case's
    capacity).  guarantees 3 x 25 = 75, so every realCapability is 0 + 25 and deserved is 25
    whatever the requests.  t = 0: tenants a and b submit 40 jobs each; enqueue lets 25 of each in,
    allocate binds 25 + 25.  t = 10: c submits 40; allocate binds 25 of c's into the 25 cpus left.
    25/25/25 and no eviction: the observed 29/29/17 cannot come out of 75 counted cpus."""
    result, events = _replay_4165("volcano-4165-75")
    assert _pods(result, events) == {"tenant-a": 25, "tenant-b": 25, "tenant-c": 25}
    assert len(_at(events, "0", "admit")) == 50 and len(_at(events, "10", "admit")) == 25
    assert not [row for row in events if row["event"] == "preempt"]
    assert all(q.preemptions == 0 for q in result.queues)


def test_4165_with_a_tainted_12_cpu_node_counted_29_29_17_comes_from_allocate_then_reclaim():
    """Volcano's session total adds every node's allocatable, a tainted control-plane node too.
    With one of 12 cpus and 12000Mi that no tenant pod tolerates, T = 87 cpus, realCapability =
    87 - 75 + 25 = 37.

    t = 0, a and b submit 40 jobs each (c has none: it takes no share): deserved 37 and 37 (87/2
    capped at 37); enqueue admits 37 of each; allocate binds a and b alternately to 37 + 37 = 74 of
    the 75 usable cpus.  The replay asks again at once: a and b are at deserved, nothing more.
    t = 10, c submits 40: three active queues, deserved 87/3 = 29 each.  allocate binds one c pod
    in the last free cpu (a and b are overused: 37 >= 29); reclaim, for c (1 < 29, not overused),
    evicts a's and b's newest jobs, the higher share first, while each holds more than 29: 8 + 8
    evictions, 16 c pods pipelined.  The next session (the replay asks again at t = 10, as Volcano
    opens its next session) binds c's 16 jobs in the freed room (c's share is lowest; a and b are
    at 29 = deserved, overused): c holds 17.  reclaim finds no queue above deserved, and the last
    session decides nothing.  29/29/17, as observed."""
    result, events = _replay_4165("volcano-4165")
    first = _at(events, "0", "admit")
    assert len(first) == 74 and {row["queue"] for row in first[:2]} == {"tenant-a", "tenant-b"}
    later = [row for row in events if row["time"] == "10" and row["event"] != "submit"]
    assert [(row["event"], row["job"]) for row in later[:1]] == [("admit", "c-job00")]
    evicted = later[1:17]
    assert all(row["event"] == "preempt" and row["by"].startswith("c-") for row in evicted)
    assert sum(row["queue"] == "tenant-a" for row in evicted) == 8
    assert all(row["event"] == "admit" and row["queue"] == "tenant-c" for row in later[17:])
    assert len(later) == 33
    assert _pods(result, events) == {"tenant-a": 29, "tenant-b": 29, "tenant-c": 17}
    preempted = {q.queue: q.preemptions for q in result.queues}
    assert preempted == {"tenant-a": 8, "tenant-b": 8, "tenant-c": 0, "default": 0}


def test_4165_needs_c_to_arrive_late_and_87_to_89_cpus_counted():
    """The same 12-cpu tainted node, but c submits with a and b: allocate alternates a, b, c,
    each capped at deserved 29, until the 75 usable cpus are full at 25 each; nobody is above
    deserved, so reclaim has nothing to take.  And a tainted node of 16 cpus (T = 91): deserved
    30, the split becomes 30/30/15: the observed 29 needs 87 <= T < 90."""
    result, events = _replay_4165("volcano-4165", together=True)
    assert _pods(result, events) == {"tenant-a": 25, "tenant-b": 25, "tenant-c": 25}
    bigger = {f"worker-{k}": np.array([15.0, 15000.0 * MI]) for k in range(1, 6)}
    bigger["control-plane"] = np.array([16.0, 16000.0 * MI])
    result, events = _replay_4165("volcano-4165", nodes=bigger)
    assert _pods(result, events) == {"tenant-a": 30, "tenant-b": 30, "tenant-c": 15}
