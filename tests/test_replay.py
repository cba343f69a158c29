"""The job-level replay (:mod:`fairalloc.scheduling.replay`): hand-computed runs, the checks on a
policy's decisions, and (hypothesis) what holds on every workload."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core import limits
from fairalloc.core.errors import FairallocError
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.engines.online import Admit, ClusterState, Job, Preempt
from fairalloc.scheduling.replay import EventLog, replay

INST = fairalloc.Instance([10, 10], [[1, 1], [1, 1]], users=["a", "b"], resources=["cpu", "mem"])
DRF = fairalloc.get("drf")


class Toy:
    """A mechanism whose online form admits each waiting job that fits (highest priority first) and
    preempts the lowest-priority running job when a higher-priority one cannot fit but would once
    the lower-priority jobs are gone; its static face is DRF's."""

    name = "toy-priority"

    def allocate(self, inst, method="auto"):
        return DRF.allocate(inst, method)

    def online(self, settings):
        return _ToyPolicy()


class _ToyPolicy:
    def wake(self, state):
        return None

    def decide(self, state: ClusterState):
        waiting = sorted(state.pending.values(), key=lambda j: -j.priority)
        free = state.free()
        for job in waiting:
            if (job.total() <= free + 1e-9).all():
                return [Admit(job.name)]
            victims = [r for r in state.running.values() if r.job.priority < job.priority]
            if victims and (job.total() <= free + sum(r.usage for r in victims) + 1e-9).all():
                victim = min(victims, key=lambda r: r.job.priority)
                return [Preempt(victim.job.name, by=job.name)]
        return []


def _events(log: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in log.getvalue().splitlines()]


def _run(jobs, mechanism=DRF, inst=INST, **kw):
    log = io.StringIO()
    result = replay(inst, sorted(jobs, key=lambda j: j.submit), mechanism, log=EventLog(log, inst.resources), **kw)
    return result, _events(log)


def test_a_hand_computed_run_under_the_drf_adapter():
    """a1 (a, 6 cpu, t 0, 10 s), b1 (b, 6 cpu, t 1, 5 s), a2 (a, 2 cpu, t 2, 4 s), capacity 10 cpu.
    t=0 a1 runs (free 4). t=1 b1 waits (6 > 4). t=2: requests a 8, b 6 cpu: DRF entitles 5 each;
    b (0/0.5) is served before a (0.6/0.5) but b1 does not fit, so b waits; a2 fits (free 2).
    t=6 a2 ends (free 4: b1 still waits). t=10 a1 ends, b1 runs (waited 9 s). t=15 b1 ends.
    cpu-seconds: 6*2 + 8*4 + 6*4 + 6*5 = 98 over 15 s of 10 cpu: 0.65333."""
    jobs = [Job("a1", "a", (6, 0), runtime=10), Job("b1", "b", (6, 0), submit=1, runtime=5)]
    jobs.append(Job("a2", "a", (2, 0), submit=2, runtime=4))
    result, events = _run(jobs)
    assert [(e["time"], e["event"], e["job"]) for e in events if e["event"] != "submit"] == [
        (0, "admit", "a1"),
        (2, "admit", "a2"),
        (6, "finish", "a2"),
        (10, "finish", "a1"),
        (10, "admit", "b1"),
        (15, "finish", "b1"),
    ]
    a, b = result.queues
    assert (a.wait_max, b.wait_mean, b.wait_p50, b.wait_p95) == (0, 9, 9, 9)
    assert a.completed == 2 and b.completed == 1 and result.end == 15
    assert result.utilization["cpu"] == pytest.approx(98 / 150, rel=AGREEMENT)
    # a: 6*10 + 2*4 = 68 cpu-seconds over 15 s
    assert a.usage["cpu"] == pytest.approx(68 / 15, rel=AGREEMENT)


def test_a_preempted_job_loses_its_work_and_runs_whole_again():
    """lo (a, 10 cpu, prio 0, 10 s) runs at 0; hi (b, 10 cpu, prio 5, 2 s) arrives at 4: lo is
    preempted (4 job-seconds, 40 cpu-seconds lost), hi runs 4-6, lo again 6-16 (waited 2 s)."""
    jobs = [Job("lo", "a", (10, 0), runtime=10), Job("hi", "b", (10, 0), priority=5, submit=4, runtime=2)]
    result, events = _run(jobs, Toy())
    assert [(e["time"], e["event"], e["job"], e.get("by")) for e in events if e["event"] != "submit"] == [
        (0, "admit", "lo", None),
        (4, "preempt", "lo", "hi"),
        (4, "admit", "hi", None),
        (6, "finish", "hi", None),
        (6, "admit", "lo", None),
        (16, "finish", "lo", None),
    ]
    a, b = result.queues
    assert (a.preemptions, a.lost_job_seconds, a.lost_resource_seconds["cpu"]) == (1, 4, 40)
    assert a.completed == 1 and a.admissions == 2 and a.wait_max == 2 and result.end == 16


class _Bad:
    name = "bad"

    def __init__(self, decision):
        self.decision = decision

    def allocate(self, inst, method="auto"):
        return DRF.allocate(inst, method)

    def online(self, settings):
        outer = self

        class P:
            def wake(self, state):
                return None

            def decide(self, state):
                return [outer.decision] if state.pending else []

        return P()


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (Admit("nope"), "'nope' is not a waiting job"),
        (Preempt("a1", by="a1"), "'a1' is not a running job"),
        (Admit("a1", pods=3), "3 pods, but the job runs 1 to 1"),
        (Admit("a1", nodes=("n1",)), "the cluster has no nodes, but the decision names some"),
    ],
)
def test_a_wrong_decision_is_one_line_naming_the_policy_and_the_decision(decision, message):
    with pytest.raises(FairallocError, match=r"^bad: at t=0 decided .*: " + message):
        _run([Job("a1", "a", (20, 0))][:1] if "fit" in message else [Job("a1", "a", (1, 0))], _Bad(decision))


def test_an_admission_beyond_the_free_capacity_is_refused():
    with pytest.raises(FairallocError, match="it does not fit the free capacity"):
        _run([Job("a1", "a", (11, 0))], _Bad(Admit("a1")))


def test_a_policy_that_never_settles_stops_at_the_bound(monkeypatch):
    monkeypatch.setattr(limits, "MAX_CYCLES_PER_INSTANT", 5)

    class Flip(_ToyPolicy):
        def decide(self, state):
            if state.pending:
                return [Admit(next(iter(state.pending)))]
            return [Preempt(next(iter(state.running)), by="x")]

    toy = Toy()
    toy.online = lambda settings: Flip()  # type: ignore[method-assign]
    with pytest.raises(FairallocError, match=r"still deciding after 5 cycles at t=0 \(MAX_CYCLES_PER_INSTANT\)"):
        _run([Job("a1", "a", (1, 0), runtime=1)], toy)


def test_nodes_are_checked_and_released():
    """Two nodes of 5 cpu; a1 (2 pods of 3 cpu) needs both; a2 (1 pod of 5) waits until a1 ends."""
    nodes = {"n1": np.array([5.0, 10]), "n2": np.array([5.0, 10])}
    jobs = [Job("a1", "a", (3, 0), pods=2, runtime=1), Job("a2", "b", (5, 0), runtime=1)]
    result, events = _run(jobs, nodes=nodes)
    admits = [(e["time"], e["job"]) for e in events if e["event"] == "admit"]
    assert admits == [(0, "a1"), (1, "a2")]


# -- what holds everywhere --------------------------------------------------------------------

job_lists = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.integers(1, 6),  # cpu per pod
        st.integers(0, 6),  # mem per pod
        st.integers(1, 3),  # pods
        st.integers(0, 20),  # submit
        st.integers(1, 10),  # runtime
        st.integers(0, 3),  # priority
    ),
    min_size=1,
    max_size=15,
)
NODES = {"n1": np.array([6.0, 6.0]), "n2": np.array([4.0, 4.0])}


def _jobs(rows):
    return [
        Job(
            f"j{k}",
            q,
            (float(c), float(m)),
            pods=p,
            min_pods=1 if p > 1 and k % 2 else None,
            priority=pr,
            submit=s,
            runtime=r,
        )
        for k, (q, c, m, p, s, r, pr) in enumerate(rows)
        if c <= 4 and m <= 4 and c * p <= 10 and m * p <= 10
    ]


class _Watch:
    """Wraps a mechanism so that every cycle's state is checked: usage within the capacity, and the
    replay's kept views of the waiting jobs (per queue, by priority) as a plain state reads them."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name

    def allocate(self, inst, method="auto"):
        return self.inner.allocate(inst, method)

    def online(self, settings):
        policy = fairalloc.engines.online.online_policy(self.inner, settings)

        class Checked:
            def wake(self, state):
                return policy.wake(state)

            def decide(self, state):
                assert (state.free() >= -1e-9).all()
                assert all((room >= -1e-9).all() for room in state.free_on_nodes().values())
                plain = ClusterState(state.case, state.now, state.running, state.pending, state.since)
                assert state.queues_waiting() == plain.queues_waiting()
                assert state.queues_with_work() == plain.queues_with_work()
                for q in plain.queues_waiting():
                    assert [j.name for j in state.served(q)] == [j.name for j in plain.served(q)]
                return policy.decide(state)

        return Checked()


@settings(max_examples=40, deadline=None)
@given(job_lists, st.sampled_from(["drf", "toy", "mesos-drf"]), st.booleans())
def test_what_holds_on_every_workload(rows, which, on_nodes):
    jobs = _jobs(rows)
    if not jobs or (which == "toy" and on_nodes):  # the toy policy places no pods on nodes
        return
    mechanism = {"drf": DRF, "toy": Toy(), "mesos-drf": fairalloc.get("mesos-drf")}[which]
    result, events = _run(jobs, _Watch(mechanism), nodes=NODES if on_nodes else None)
    state: dict[str, str] = {}
    for e in events:  # submit -> admit -> (preempt -> admit)* -> finish
        before = state.get(e["job"])
        allowed = {"submit": [None], "admit": ["submit", "preempt"], "preempt": ["admit"], "finish": ["admit"]}
        assert before in allowed[e["event"]], (e, before)
        state[e["job"]] = e["event"]
    for q in result.queues:
        assert q.lost_job_seconds >= 0 and all(v >= 0 for v in q.lost_resource_seconds.values())
        assert q.completed + q.running + q.waiting == q.submitted
        assert q.admissions == q.completed + q.running + q.preemptions
    assert sum(q.submitted for q in result.queues) == len(jobs)
    assert all(0 <= u <= 1 + 1e-9 for u in result.utilization.values())


def test_the_work_shown_to_policies_is_bounded(monkeypatch):
    monkeypatch.setattr(limits, "MAX_REPLAY_STEPS", 3)
    jobs = [Job(f"j{k}", "a", (1, 0), runtime=1) for k in range(3)]
    with pytest.raises(
        FairallocError, match=r"^drf: the replay showed its policy more than 3 jobs .*\(MAX_REPLAY_STEPS\)"
    ):
        _run(jobs)


def test_too_many_jobs_are_refused_before_the_replay(monkeypatch):
    monkeypatch.setattr(limits, "MAX_WORKLOAD_JOBS", 2)
    jobs = [Job(f"j{k}", "a", (1, 0), runtime=1) for k in range(3)]
    with pytest.raises(
        fairalloc.core.errors.CaseError, match=r"3 jobs; fairalloc replays at most 2 \(MAX_WORKLOAD_JOBS\)"
    ):
        _run(jobs)


def test_the_policys_wake_up_is_a_cycle_of_its_own():
    """A policy that admits nothing before t=5 and asks to be woken then: a1 (submitted at 0, the
    only event) starts at 5, though nothing arrives or ends at 5."""

    class Late(_ToyPolicy):
        def wake(self, state):
            return 5.0 if state.now < 5 else None

        def decide(self, state):
            return [Admit(j) for j in state.pending] if state.now >= 5 else []

    toy = Toy()
    toy.online = lambda settings: Late()  # type: ignore[method-assign]
    result, events = _run([Job("a1", "a", (1, 0), runtime=1)], toy)
    assert [(e["time"], e["event"]) for e in events] == [(0, "submit"), (5, "admit"), (6, "finish")]
    assert result.queues[0].wait_max == 5 and result.events == 3


def test_a_job_named_twice_while_alive_or_an_unknown_queue_is_one_line():
    jobs = [Job("j", "a", (1, 0), runtime=5), Job("j", "b", (1, 0), submit=1, runtime=1)]
    with pytest.raises(fairalloc.core.errors.CaseError, match=r"^jobs\.j: submitted while it is still waiting"):
        _run(jobs)
    with pytest.raises(fairalloc.core.errors.CaseError, match=r"^jobs\.j\.queue: unknown queue 'c'"):
        _run([Job("j", "c", (1, 0))])


def test_the_tables_hold_the_jobs_alive_only(monkeypatch):
    """1,000 short jobs one after another: at the end nothing is kept per job but its wait."""
    from fairalloc.scheduling import replay as module

    jobs = [Job(f"j{k}", "a", (1, 0), submit=float(k), runtime=0.5) for k in range(1000)]
    seen = []
    real = module._Replay.result

    def spy(self, end, workload):
        seen.append((len(self.running), len(self.pending), len(self.since), len(self.epoch), len(self.heap)))
        return real(self, end, workload)

    monkeypatch.setattr(module._Replay, "result", spy)
    replay(INST, jobs, DRF, log=EventLog(io.StringIO(), INST.resources))
    assert seen == [(0, 0, 0, 0, 0)]
