"""YARN FairScheduler online with jobs grouped into applications (issue 37): a replay settles at
every instant.  The smallest loop, by hand: a preemption pass frees room for a starved job that
cannot take it (a gang asking more containers than its starvation buys), the room goes back to the
preempted job, and the starved application, starved still, preempts again at the same instant.
Upstream's rule that stops it: ``FSPreemptionThread.run`` calls ``starvedApp.preemptionTriggered``
after each pass, and ``FSLeafQueue.fetchAppsWithDemand(false)`` leaves the application out of the
starved ones until ``waitTimeBeforeKill + 4 heartbeats + waitTimeBeforeNextStarvationCheck`` have
passed (15 + 4 + 10 s by default)."""

from __future__ import annotations

import dataclasses
import io
import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_yarn_cycle import _small

from fairalloc.core.errors import FairallocError
from fairalloc.core.registry import get
from fairalloc.engines.online import Job, Preempt, online_policy
from fairalloc.io.cases import parse_case
from fairalloc.scheduling.replay import EventLog, replay

#: the pause set to nothing: the previous cycle's rule (every starved application checked at once)
NO_PAUSE = {"waitTimeBeforeKill": 0, "heartbeatInterval": 0, "waitTimeBeforeNextStarvationCheck": 0}
LOOP_SETTINGS = {
    "preemption": True,
    "defaultFairSharePreemptionTimeout": 5,
    "applications": {f"a{i}": "a" for i in range(1, 5)},
}


def _two_leaves():
    data = {"resources": {"cpu": 4, "memory": 4}, "users": {"qa": {}, "qb": {}}, "policy": "yarn-fair"}
    return parse_case(data).instance


def _loop_jobs() -> list[Job]:
    """a1-a4: application a in qa, one (1, 1) container each from 0 for 50 s (the whole cluster);
    b1: a gang of two (1, 1) containers in qb from 1 for 10 s (its own application)."""
    return [Job(f"a{i}", "qa", (1.0, 1.0), 1, None, 0.0, 0.0, 50.0) for i in range(1, 5)] + [
        Job("b1", "qb", (1.0, 1.0), 2, None, 0.0, 1.0, 10.0)
    ]


def _events(inst, jobs, policy_settings, nodes=None) -> list[dict]:
    log = io.StringIO()
    replay(inst, jobs, get("yarn-fair"), settings=policy_settings, nodes=nodes, log=EventLog(log, inst.resources))
    return [json.loads(line) for line in log.getvalue().splitlines()]


@pytest.mark.parametrize("pause", [NO_PAUSE, {}], ids=["no-pause", "yarn-defaults"])
def test_the_smallest_loop_replays_to_the_end(pause):
    """At 6 (b's clock from 1, timeout 5): both leaves active, each (2, 2); a and b each the whole of
    their leaf's, (2, 2).  b: ``fairDemand = min((2, 2) x 0.5, (2, 2)) = (1, 1) > 0``: starved by
    (1, 1), one container of memory 1.  Before: a lost a1 (keeps (3, 3), not below (2, 2)), the
    room freed, one container, was fewer than b1's two and not given, assignment gave it back to a
    and the same pass ran again, for ever (``still deciding ... at t=6``).  Now one container is
    not asked for a gang of two: nothing is preempted, b1 starts whole when a3, a4... end at 50.
    Upstream (no gangs: b asks two containers of one) the pass at 6 marks a1, kills it at
    6 + 15 = 21 and gives its room to b (``assignPreemptedContainers``), which then holds its
    fairDemand (1, 1), starved no more; its second container waits for a's to end at 50."""
    rows = _events(_two_leaves(), _loop_jobs(), {**LOOP_SETTINGS, **pause})
    moves = [(e["time"], e["event"], e["job"]) for e in rows if e["event"] != "submit"]
    assert moves == [
        *[(0.0, "admit", f"a{i}") for i in range(1, 5)],
        *[(50.0, "finish", f"a{i}") for i in range(1, 5)],
        (50.0, "admit", "b1"),
        (60.0, "finish", "b1"),
    ]


def test_the_pause_is_read_from_the_settings():
    """``test_the_starvation_clock_runs_across_cycles``'s pass at 13 with a pause of
    1 + 4 x 0.5 + 2 = 5 s: had w1 and w2 not been admitted, they are checked again at 18."""
    pause = {"waitTimeBeforeKill": 1, "heartbeatInterval": 0.5, "waitTimeBeforeNextStarvationCheck": 2}
    case = _small(defaultFairSharePreemptionThreshold=1, applications={f"r{i}": "a" for i in range(1, 5)}, **pause)
    policy = online_policy(get("yarn-fair"), case.settings)
    later = dataclasses.replace(case.cycle, now=13.0)
    assert {d.job for d in policy.decide(later) if isinstance(d, Preempt)} == {"r1", "r2"}
    assert policy.wake(later) == 18


def test_a_bad_pause_setting_is_one_line_naming_it():
    with pytest.raises(FairallocError, match=r"^settings\.heartbeatInterval: expected a number from 0"):
        _events(_two_leaves(), _loop_jobs(), {**LOOP_SETTINGS, "heartbeatInterval": -1})


def test_a_second_container_does_not_count_the_room_of_the_first():
    """``identifyContainersToPreemptOnNode``: ``potential = unallocated - getTotalReserved()``, the
    containers already marked on the node counted there.  (8, 8), qa and qb; application a's a1-a7,
    (1, 1) each from 0 for 20 s, leave (1, 1) free; b1, a gang of two (2, 2), waits from 1;
    threshold 1.  At 6 b (fair share (4, 4)) is starved by min((4, 4), (4, 4)) - 0 = (4, 4): two
    containers of memory 2.  The first: room (1, 1) + a1 fits (a keeps (6, 6), not below (4, 4)).
    The second: room (1, 1) - (1, 1) marked = 0, + a2 + a3 (a keeps (4, 4)).  Freed (1, 1) + (3, 3)
    = (4, 4): b1 runs whole at once.  (Counting the free (1, 1) again for the second container took
    a2 only and gave b1 (4, 4) of (3, 3) free.)"""
    data = {"resources": {"cpu": 8, "memory": 8}, "users": {"qa": {}, "qb": {}}, "policy": "yarn-fair"}
    jobs = [Job(f"a{i}", "qa", (1.0, 1.0), 1, None, 0.0, 0.0, 20.0) for i in range(1, 8)]
    jobs.append(Job("b1", "qb", (2.0, 2.0), 2, None, 0.0, 1.0, 10.0))
    grouped = {**LOOP_SETTINGS, "applications": {f"a{i}": "a" for i in range(1, 8)}}
    rows = _events(parse_case(data).instance, jobs, {**grouped, "defaultFairSharePreemptionThreshold": 1})
    at6 = {(e["event"], e["job"], e.get("by", ""), e["pods"]) for e in rows if e["time"] == 6}
    assert at6 == {("preempt", f"a{i}", "b1", 1) for i in (1, 2, 3)} | {("admit", "b1", "", 2)}


# -- the property --------------------------------------------------------------------------------
workloads = st.lists(
    st.tuples(
        st.sampled_from(["q0", "q1", "q2"]),
        st.integers(0, 2),  # application within the queue
        st.integers(1, 3),  # cpu per pod
        st.integers(1, 3),  # memory per pod
        st.integers(1, 3),  # pods
        st.booleans(),  # a gang of all its pods, else of one
        st.integers(0, 30),  # submit
        st.integers(1, 40),  # runtime
    ),
    min_size=2,
    max_size=14,
)


@settings(max_examples=40, deadline=None)
@given(workloads, st.integers(0, 6), st.integers(0, 6), st.booleans())
def test_a_replay_with_grouped_applications_settles_at_every_instant(rows, fair_timeout, min_timeout, on_nodes):
    """Any workload of grouped applications, preemption on with short timeouts and YARN's default
    pause: the replay ends (no instant reaches MAX_CYCLES_PER_INSTANT), and no job is preempted
    (and readmitted) twice at one instant for the same application."""
    data = {
        "resources": {"cpu": 8, "memory": 8},
        "users": {q: {"guarantee": {"cpu": 2, "memory": 2}} for q in ("q0", "q1", "q2")},
        "policy": "yarn-fair",
    }
    inst = parse_case(data).instance
    jobs = [
        Job(f"j{k}", q, (float(c), float(m)), p, None if whole else 1, 0.0, float(s), float(r))
        for k, (q, _, c, m, p, whole, s, r) in enumerate(rows)
    ]
    grouping = {f"j{k}": f"{row[0]}-{row[1]}" for k, row in enumerate(rows)}
    policy_settings = {
        "preemption": True,
        "utilizationThreshold": 0.5,
        "defaultFairSharePreemptionTimeout": fair_timeout,
        "defaultMinSharePreemptionTimeout": min_timeout,
        "applications": grouping,
    }
    nodes = {"n1": np.array([4.0, 4.0]), "n2": np.array([4.0, 4.0])} if on_nodes else None
    events = _events(inst, jobs, policy_settings, nodes)
    _once_per_application(events, grouping)


def test_the_workload_that_found_the_loop_replays_to_the_end():
    """tests/test_cycle_speed.py's seeded workload (seed 1, one pool) with its jobs grouped into two
    applications per queue: it stopped at MAX_CYCLES_PER_INSTANT (t=65.642 on this branch's base);
    it now ends, every job finished, no job preempted twice at one instant for one application.  (A
    job may be preempted twice at one instant for two: here j58 and j153 at 813.391, j147 and j151
    at 908.55; each application's pass runs once there, then waits its pause.)"""
    from test_cycle_speed import _case, _jobs

    jobs = _jobs(1)
    policy_settings = {
        "preemption": True,
        "defaultFairSharePreemptionTimeout": 5,
        "defaultMinSharePreemptionTimeout": 3,
        "applications": {j.name: f"{j.queue}-{k % 2}" for k, j in enumerate(jobs)},
    }
    events = _events(_case("yarn-fair", 1), jobs, policy_settings)
    assert sum(e["event"] == "finish" for e in events) == len(jobs)
    _once_per_application(events, policy_settings["applications"])


def _once_per_application(events: list[dict], grouping: dict[str, str]) -> None:
    """No job preempted twice at one instant for one starved application (its pass runs once, then
    it pauses): the log's preemptions counted per (time, victim, the preemptor's application)."""
    seen = Counter((e["time"], e["job"], grouping.get(e["by"], e["by"])) for e in events if e["event"] == "preempt")
    assert max(seen.values(), default=1) == 1, seen.most_common(3)
