"""Kueue fair sharing replayed: a preempted job does not come back at the instant it was preempted
(issue 37's livelock: cq-9-0's job-1207 preempting cq-9-6's job-2582, which the next cycle of the
same instant admitted again, until MAX_CYCLES_PER_INSTANT stopped the replay).  The smallest case
that looped, replayed to its end, and (hypothesis) no job preempted and admitted again at one
instant on small seeded workloads, fair sharing or classic."""

from __future__ import annotations

import dataclasses
import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st
from test_kueue_cycle import cycles

import fairalloc
from fairalloc.engines.online import Job
from fairalloc.io.cases import parse_case
from fairalloc.scheduling.replay import EventLog, replay

KUEUE = fairalloc.get("kueue")


def _cohort(queues: dict[str, dict]) -> fairalloc.Instance:
    case = {
        "name": "livelock",
        "resources": {"cpu": 24},
        "groups": {"co": {"parent": None}},
        "users": queues,
    }
    return parse_case(case, "test_kueue_livelock").instance


def _events(inst: fairalloc.Instance, jobs: list[Job], settings_: dict) -> list[tuple[float, str, str, str]]:
    out = io.StringIO()
    replay(inst, sorted(jobs, key=lambda j: j.submit), KUEUE, settings=settings_, log=EventLog(out, ("cpu",)))
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    return [(e["time"], e["event"], e["job"], e.get("by", "")) for e in rows if e["event"] != "submit"]


def test_the_smallest_looping_sequence_ends_with_the_preemptor_admitted():
    """Cohort co: ClusterQueues a, b, c, 8 CPU of nominal quota each (24 in the cohort), fair
    sharing, a with withinClusterQueue and reclaimWithinCohort LowerPriority.  At 0: hi-a
    (priority 100, 6 CPU) and low-a (0, 2) run in a (8: at its quota), b1 (100, 9) and v (0, 4) in
    b (13: borrowing 5); the cohort uses 21, 3 are free.  Shares are borrowed CPU x 1000 / 24.

    t=1, p (a, priority 100, 6 CPU) arrives.  Cycle 1: 6 > 3 free, so p searches (fairPreemptions):
    with p counted a borrows 6 (250) against b's 5 (208), so a, the preemptor's own queue, is the
    first target (nextTarget, highest share): low-a is taken (InClusterQueue), 5 free < 6; then b
    (a now borrows 4: 167 < 208): LessThanOrEqualToFinalShare 167 <= b's 42 after removing v fails,
    LessThanInitialShare 167 < 208 passes: v is taken, 9 free >= 6.  Fill-back puts low-a back
    (7 >= 6): p preempts v alone.  The simulator evicts v at once.

    Cycle 2 before the fix: p (a borrowing 6: 250) and v (b borrowing 5: 208) are both heads and
    both fit in the 7 free; the tournament takes the lower share with the workload admitted
    (entryComparer.less, both borrowing): v is admitted first, p no longer fits (3 < 6) and is
    skipped; cycle 3 is cycle 1 again, forever at t=1.  Upstream, with Kueue's default gates, does
    the same over time: v's quota is released when its pods are gone, it is requeued beside p, wins
    the tournament again and is preempted again (kubernetes-sigs/kueue issue 13662; the fix,
    PrioritizePreemptorWorkloads, is an alpha gate off by default).  The simulator's rule: a job
    preempted at an instant is back in its queue's cycle only at a later instant, so in cycle 2 p
    is admitted (9 free) and v waits; at 100 hi-a, b1 and low-a end and v is admitted."""
    queues = {q: {"group": "co", "guarantee": {"cpu": 8}, "request": {"cpu": 1}} for q in ("a", "b", "c")}
    pre = {"within_cluster_queue": "LowerPriority", "reclaim_within_cohort": "LowerPriority"}
    settings_ = {"fair_sharing": True, "cluster_queues": {"a": {"preemption": pre}}}
    jobs = [
        Job("hi-a", "a", (6.0,), 1, None, 100.0, 0.0, 100.0),
        Job("low-a", "a", (2.0,), 1, None, 0.0, 0.0, 100.0),
        Job("b1", "b", (9.0,), 1, None, 100.0, 0.0, 100.0),
        Job("v", "b", (4.0,), 1, None, 0.0, 0.0, 100.0),
        Job("p", "a", (6.0,), 1, None, 100.0, 1.0, 100.0),
    ]
    events = _events(_cohort(queues), jobs, settings_)
    assert [e for e in events if e[0] == 1] == [(1, "preempt", "v", "p"), (1, "admit", "p", "")]
    assert (100, "admit", "v", "") in events
    assert sum(e[1] == "finish" for e in events) == 5


@st.composite
def workloads(draw):
    """test_kueue_cycle's cohort of three ClusterQueues (quotas, limits, policies, fair sharing or
    not) with its running and waiting jobs all submitted, each at one of few instants (so that
    they meet in cycles) and running a few seconds."""
    case = draw(cycles())
    jobs = [r.job for r in case.cycle.running.values()] + list(case.cycle.pending.values())
    times = st.integers(0, 3).map(float)
    jobs = [dataclasses.replace(j, submit=draw(times), runtime=draw(st.integers(1, 6).map(float))) for j in jobs]
    return case.instance, jobs, case.settings


@settings(max_examples=120, deadline=None)
@given(workloads())
def test_no_job_is_preempted_and_admitted_again_at_one_instant(case):
    """The replay ends (no MAX_CYCLES_PER_INSTANT), and at each instant a job is preempted at most
    once and, once preempted, not admitted again before the clock moves on."""
    inst, jobs, settings_ = case
    preempted: set[tuple[float, str]] = set()
    for time, event, job, _ in _events(inst, jobs, settings_):
        if event == "preempt":
            assert (time, job) not in preempted
            preempted.add((time, job))
        elif event == "admit":
            assert (time, job) not in preempted
