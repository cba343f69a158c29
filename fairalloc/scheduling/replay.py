"""A job workload replayed against a queue case under a policy's scheduling cycles, event by event.

The policy is any registered mechanism's online form (:func:`fairalloc.engines.online.online_policy`:
the scheduler's own rules where the mechanism has them, else the generic
:class:`~fairalloc.engines.online.Entitled` adapter).  The loop:

* events are a job's submission, a job's end (its run time after its admission) and the policy's
  own wake-up (:meth:`~fairalloc.engines.online.OnlinePolicy.wake`, a preemption timeout); at one
  instant the ends come first (their room is free), then the submissions;
* after the events of an instant the policy is shown the cluster (a
  :class:`~fairalloc.engines.online.ClusterState` over read-only views of the simulator's own
  tables) and its decisions are applied in its order, each checked: an :class:`Admit` names a
  waiting job and fits the free capacity (and, with nodes, names one node per pod, each with room);
  a :class:`Preempt` names a running job.  Anything else is one :class:`FairallocError` naming the
  policy, the time and the decision.  The policy is asked again at the same instant while it
  decides something (or says it has more to consider: ``again``, a head it set aside), at most
  :data:`~fairalloc.core.limits.MAX_CYCLES_PER_INSTANT` times;
* a preempted job loses the work since its start (per queue: job-seconds, and resource-seconds
  of what it held), enters its queue again at that instant and, readmitted, runs its whole run time
  again.

Memory is bounded by the jobs alive: the event log is written as it goes (``log``: a
:class:`EventLog`), and the statistics are running sums, except one wait time per admission for
the percentiles (8 bytes each).

Per queue the run reports wait times (mean, p50, p95, max over admissions: from entering the queue
to admission), jobs completed, preemptions and the work they lost, the time-average usage, the
time-average entitlement (the mechanism's allocation of the queues' work, as the adapter computes
it: :func:`~fairalloc.engines.online.requested`) and the guarantee, and two gaps: the time-average
dominant share by which the queue held less than its entitlement (resp. its guarantee) while it
had jobs waiting (0 when it was never short while it waited).  Cluster utilisation: the
time-average usage over the capacity, per resource.

Belongs here: the job-level simulator.  Imports: ``core``, ``engines``, ``io`` and the models
(through the registry).
"""

from __future__ import annotations

import csv
import heapq
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TextIO

import numpy as np

from fairalloc.core import limits
from fairalloc.core.decimals import json_text, shortest
from fairalloc.core.errors import CaseError, FairallocError, unknown
from fairalloc.core.instance import Instance
from fairalloc.core.registry import Mechanism
from fairalloc.engines.online import (
    Admit,
    ClusterState,
    Decision,
    Entitled,
    Job,
    OnlinePolicy,
    Preempt,
    Running,
    dominant_shares,
    fits,
    online_policy,
)

#: event kinds, in the order they are handled at one instant
FINISH, SUBMIT, WAKE = 0, 1, 2
EVENT_FIELDS = ("scheduler", "time", "event", "job", "queue", "pods", "by")


class EventLog:
    """The event log written as it goes, to ``stream``: CSV (``fmt="csv"``: the columns of
    :data:`EVENT_FIELDS` then one per resource) or JSON lines (``"jsonl"``: one object per event,
    ``resources`` a mapping: what the event's pods hold).  ``scheduler``: the run's, set before
    each run when one log holds several."""

    def __init__(self, stream: TextIO, resources: tuple[str, ...], fmt: str = "jsonl", scheduler: str = ""):
        self.stream, self.resources, self.fmt, self.scheduler = stream, resources, fmt, scheduler
        self.writer = csv.writer(stream, lineterminator="\n") if fmt == "csv" else None
        if self.writer is not None:
            self.writer.writerow([*EVENT_FIELDS, *resources])

    def write(self, time: float, event: str, job: Job, pods: int, by: str = "") -> None:
        amounts = job.total(pods).tolist()
        if self.writer is not None:
            self.writer.writerow(
                [self.scheduler, shortest(time), event, job.name, job.queue, pods, by, *map(shortest, amounts)]
            )
            return
        row: dict[str, Any] = {
            "scheduler": self.scheduler,
            "time": time,
            "event": event,
            "job": job.name,
            "queue": job.queue,
            "pods": pods,
        }
        if by:
            row["by"] = by
        row["resources"] = dict(zip(self.resources, amounts))
        self.stream.write(json_text(row) + "\n")


def guarantee(queues: Any, node: str) -> np.ndarray:
    """A queue's (or group's) guarantee per resource, 0 where none is given: what the replay's
    guarantee statistics, its charts and the what-if's waiting reasons read."""
    return np.nan_to_num(np.asarray(queues.guarantee[node], float), nan=0.0)


def guarantees(instance: Instance) -> np.ndarray | None:
    """``(n, m)``: every leaf queue's :func:`guarantee` (``None`` for a paper case, without queues)."""
    q = instance.queues
    return None if q is None else np.array([guarantee(q, u) for u in instance.users])


@dataclass
class QueueReport:
    """One queue's outcome over a replay (amounts per resource, in the case's units)."""

    queue: str
    submitted: int = 0
    completed: int = 0
    running: int = 0
    waiting: int = 0
    admissions: int = 0
    preemptions: int = 0
    lost_job_seconds: float = 0.0
    lost_resource_seconds: dict[str, float] = field(default_factory=dict)
    wait_mean: float | None = None
    wait_p50: float | None = None
    wait_p95: float | None = None
    wait_max: float | None = None
    usage: dict[str, float] = field(default_factory=dict)
    entitlement: dict[str, float] = field(default_factory=dict)
    #: the dominant shares (of the capacity) of the time-average usage and entitlement
    usage_share: float = 0.0
    entitlement_share: float = 0.0
    guarantee: dict[str, float] | None = None
    entitlement_gap: float = 0.0
    guarantee_gap: float | None = None


@dataclass
class ReplayResult:
    """A replay's outcome: per queue, the cluster's utilization, and the run's size."""

    scheduler: str
    workload: str
    end: float
    events: int
    cycles: int
    decisions: int
    utilization: dict[str, float]
    queues: list[QueueReport]

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("scheduler", "workload", "end", "events", "cycles", "decisions")}
        out["utilization"] = self.utilization
        out["queues"] = {q.queue: {k: v for k, v in vars(q).items() if k != "queue"} for q in self.queues}
        return out


def replay(
    instance: Instance,
    jobs: list[Job],
    mechanism: Mechanism,
    *,
    settings: Mapping[str, Any] | None = None,
    nodes: Mapping[str, np.ndarray] | None = None,
    log: EventLog | None = None,
    workload: str = "workload",
    progress: Callable[[int], object] | None = None,
    watch: Callable[[ClusterState, list[Decision]], object] | None = None,
) -> ReplayResult:
    """Replay ``jobs`` (taken in submit order) on ``instance``'s cluster (or ``nodes``) under
    ``mechanism``'s online form with ``settings`` (the case's).  ``watch`` is shown each cycle's
    state and the decisions taken on it, before they are applied (the state is read during the
    call, not kept: :mod:`fairalloc.scheduling.whatif` reads a job's wait off it)."""
    if len(jobs) > limits.MAX_WORKLOAD_JOBS:
        raise CaseError(
            f"jobs: {len(jobs):,} jobs; fairalloc replays at most {limits.MAX_WORKLOAD_JOBS:,} (MAX_WORKLOAD_JOBS)"
        )
    policy = online_policy(mechanism, settings)
    run = _Replay(instance, policy, mechanism, dict(settings or {}), nodes, log, progress)
    run.watch = watch
    end = run.run(sorted(jobs, key=lambda j: j.submit))  # stable: the given order among equal times
    return run.result(end, workload)


@dataclass(frozen=True)
class _Tallied(ClusterState):
    """The state as the replay shows it: what each queue holds and what is free are the replay's
    running sums (kept as jobs start and stop), not summed again over the running jobs at each
    cycle.  Like its views of the running and waiting jobs it follows the replay's tables, so it is
    read during its cycle, not kept; a state derived from it (:meth:`after`) is a plain one."""

    tallies: Any = None

    def usage(self) -> dict[str, np.ndarray]:
        run = self.tallies
        return dict(zip(run.index, run.U.copy()))  # the rows of one copy (index: the case's order)

    def free(self) -> np.ndarray:
        return np.asarray(self.tallies.free, float).copy()

    def free_on_nodes(self) -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in self.tallies.node_free.items()} if self.nodes is not None else {}

    def queues_waiting(self) -> list[str]:
        return [self.case.users[i] for i in np.flatnonzero(self.tallies.waiting_count)]

    def queues_with_work(self) -> frozenset[str]:
        run = self.tallies
        busy = (run.waiting_count + run.running_count) != 0
        key = busy.tobytes()
        if run.work[0] != key:  # asked at every cycle and instant: built again only when it changed
            users = self.case.users
            run.work = (key, frozenset(users[i] for i in np.flatnonzero(busy).tolist()))
        return run.work[1]

    def served(self, queue: str) -> Iterator[Job]:
        buckets = self.tallies.buckets[self.tallies.index[queue]]
        return (job for p in sorted(buckets, reverse=True) for job in list(buckets[p].values()))

    def after(self, decisions: list[Decision]) -> ClusterState:
        plain = ClusterState(self.case, self.now, self.running, self.pending, self.since, self.nodes, self.settings)
        return plain.after(decisions)


def check_decisions(state: ClusterState, decisions: list[Decision], policy: str) -> None:
    """Apply ``decisions`` to ``state`` as the replay does, each checked (an admission names a
    waiting job and fits the capacity and the nodes, a preemption names a running job); the first
    wrong one is a :class:`FairallocError` naming ``policy`` and the decision."""
    run = _Replay(state.case, None, None, dict(state.settings), state.nodes, None, None)  # type: ignore[arg-type]
    run.name = policy
    for name, job in state.pending.items():
        run.epoch[name] = 0
        run._enqueue(state.since.get(name, state.now), job)
    for name, running in state.running.items():
        run.epoch[name] = 0
        run.running[name] = running
        run.free -= running.usage
        run.U[run.index[running.job.queue]] += running.usage
        for node in running.nodes:
            run.node_free[node] -= running.job.request
    for d in decisions:
        run._apply(state.now, d)


class _Replay:
    """One replay: the simulator's tables (the jobs running and waiting, the free room), the event
    heap, the statistics' running sums."""

    def __init__(self, instance, policy: OnlinePolicy, mechanism: Mechanism, settings, nodes, log, progress):
        self.instance, self.policy, self.mechanism, self.settings, self.log = instance, policy, mechanism, settings, log
        self.name = str(getattr(policy, "name", None) or getattr(mechanism, "name", ""))
        self.entitled = policy if isinstance(policy, Entitled) else Entitled(mechanism)
        self.nodes = None if nodes is None else {k: np.asarray(v, float) for k, v in nodes.items()}
        self.node_free = {} if self.nodes is None else {k: v.copy() for k, v in self.nodes.items()}
        self.progress = progress
        self.watch: Callable[[ClusterState, list[Decision]], object] | None = None
        self.capacity = np.asarray(instance.capacity, float)
        self.free = self.capacity.copy()
        self.index = {q: i for i, q in enumerate(instance.users)}
        n, m = len(self.index), len(self.capacity)
        self.running: dict[str, Running] = {}
        self.pending: dict[str, Job] = {}
        self.since: dict[str, float] = {}
        self.epoch: dict[str, int] = {}  # a job's admissions: an end scheduled before a preemption is stale
        self.heap: list[tuple[float, int, int, str, int]] = []
        self.seq = 0
        self.wake_at: float | None = None
        self.U, self.E = np.zeros((n, m)), np.zeros((n, m))
        self.waiting_count = np.zeros(n, dtype=np.int64)
        self.running_count = np.zeros(n, dtype=np.int64)
        #: the queues with work, and the mask they were read from (:meth:`_Tallied.queues_with_work`)
        self.work: tuple[bytes, frozenset[str]] = (b"", frozenset())
        #: per queue, its waiting jobs by priority, each bucket in entry order (what ``served`` reads)
        self.buckets: list[dict[float, dict[str, Job]]] = [{} for _ in range(n)]
        self.G = guarantees(instance)
        self.U_int, self.E_int = np.zeros((n, m)), np.zeros((n, m))
        self.gap_E, self.gap_G = np.zeros(n), np.zeros(n)
        self.waits: list[list[float]] = [[] for _ in range(n)]
        self.counts = {k: np.zeros(n, dtype=np.int64) for k in ("submitted", "completed", "preempted")}
        self.lost_seconds, self.lost_amounts = np.zeros(n), np.zeros((n, m))
        self.events = self.cycles = self.decisions = self.steps = 0

    # -- the loop -----------------------------------------------------------------------------
    def run(self, jobs: list[Job]) -> float:
        upcoming = iter(jobs)
        nxt = next(upcoming, None)
        now = 0.0
        while nxt is not None or self.heap:
            t = min(nxt.submit if nxt is not None else math.inf, self.heap[0][0] if self.heap else math.inf)
            self._integrate(t - now)
            now = t
            while self.heap and self.heap[0][0] == now and self.heap[0][1] == FINISH:
                self._finish(now, *heapq.heappop(self.heap)[3:])
            while nxt is not None and nxt.submit == now:
                self._submit(now, nxt)
                nxt = next(upcoming, None)
            while self.heap and self.heap[0][0] == now and self.heap[0][1] == WAKE:
                heapq.heappop(self.heap)
                self.events += 1
            self._cycles(now)
        return now

    def _push(self, t: float, kind: int, name: str = "", epoch: int = 0) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, kind, self.seq, name, epoch))  # at one instant: ends first

    def _submit(self, now: float, job: Job) -> None:
        if job.name in self.pending or job.name in self.running:
            raise CaseError(f"jobs.{job.name}: submitted while it is still waiting or running (a name is one job)")
        if job.queue not in self.index:
            raise CaseError(f"jobs.{job.name}.queue: {unknown('queue', job.queue, list(self.index))}")
        self.events += 1
        self.epoch[job.name] = 0
        self._enqueue(now, job)
        self.counts["submitted"][self.index[job.queue]] += 1
        if self.log is not None:
            self.log.write(now, "submit", job, job.pods)
        if self.progress is not None:
            self.progress(1)

    def _enqueue(self, now: float, job: Job) -> None:
        self.pending[job.name], self.since[job.name] = job, now
        q = self.index[job.queue]
        self.waiting_count[q] += 1
        self.buckets[q].setdefault(job.priority, {})[job.name] = job

    def _finish(self, now: float, name: str, epoch: int) -> None:
        self.events += 1
        if self.epoch.get(name) != epoch or name not in self.running:
            return  # preempted since: this end was not reached
        run = self._stop(name)
        del self.epoch[name]  # the job is gone: the tables hold the jobs alive only
        self.counts["completed"][self.index[run.job.queue]] += 1
        if self.log is not None:
            self.log.write(now, "finish", run.job, run.pods)

    def _stop(self, name: str) -> Running:
        run = self.running.pop(name)
        usage, i = run.usage, self.index[run.job.queue]
        self.free += usage
        self.U[i] -= usage
        self.running_count[i] -= 1
        if not self.running_count[i]:
            # nothing held: exactly 0, not what is left of adding and taking away rounded amounts
            # (a trace's 0.0625 and 0.02499 pods left -5.8e-16, which the queue tables refuse)
            self.U[i] = 0.0
        if not self.running:
            self.free = self.capacity.copy()
        for node in run.nodes:
            self.node_free[node] += run.job.request
        return run

    def _cycles(self, now: float) -> None:
        for _ in range(limits.MAX_CYCLES_PER_INSTANT):
            state = self._state(now)
            self.steps += len(self.running) + len(self.pending)
            if self.steps > limits.MAX_REPLAY_STEPS:
                raise FairallocError(
                    f"{self.name}: the replay showed its policy more than {limits.MAX_REPLAY_STEPS:,} jobs over "
                    f"its cycles at t={now:g} (MAX_REPLAY_STEPS); replay fewer jobs"
                )
            self.cycles += 1
            decisions = self.policy.decide(state)
            if self.watch is not None:
                self.watch(state, decisions)
            if not decisions and not getattr(self.policy, "again", False):
                break
            for d in decisions:
                self._apply(now, d)
        else:
            raise FairallocError(
                f"{self.name}: still deciding after {limits.MAX_CYCLES_PER_INSTANT:,} cycles at t={now:g} "
                f"(MAX_CYCLES_PER_INSTANT): the policy never settles"
            )
        self._entitle(self._state(now))
        wake = self.policy.wake(self._state(now))
        if wake is not None and wake > now and wake != self.wake_at:
            self.wake_at = wake
            self._push(wake, WAKE)

    def _state(self, now: float) -> ClusterState:
        return _Tallied(
            self.instance,
            now,
            MappingProxyType(self.running),
            MappingProxyType(self.pending),
            MappingProxyType(self.since),
            self.nodes,
            self.settings,
            self,
        )

    # -- decisions ----------------------------------------------------------------------------
    def _apply(self, now: float, d: Decision) -> None:
        self.decisions += 1
        if isinstance(d, Admit):
            self._admit(now, d)
        elif isinstance(d, Preempt):
            self._preempt(now, d)
        else:
            raise FairallocError(f"{self.name}: at t={now:g} decided {d!r}, which is neither Admit nor Preempt")

    def _refuse(self, now: float, d: Decision, why: str) -> FairallocError:
        return FairallocError(f"{self.name}: at t={now:g} decided {d!r}: {why}")

    def _admit(self, now: float, d: Admit) -> None:
        job = self.pending.get(d.job)
        if job is None:
            raise self._refuse(now, d, f"'{d.job}' is not a waiting job")
        pods = job.pods if d.pods is None else d.pods
        if not job.least <= pods <= job.pods:
            raise self._refuse(now, d, f"{pods} pods, but the job runs {job.least} to {job.pods}")
        need = job.total(pods)
        if not fits(need, self.free):
            raise self._refuse(now, d, "it does not fit the free capacity")
        self._place(now, d, job, pods)
        del self.pending[d.job]
        q = self.index[job.queue]
        self.waits[q].append(now - self.since.pop(d.job))
        self.waiting_count[q] -= 1
        self.running_count[q] += 1
        bucket = self.buckets[q][job.priority]
        del bucket[d.job]
        if not bucket:
            del self.buckets[q][job.priority]
        self.free -= need
        self.U[q] += need
        self.running[d.job] = Running(job, pods, now, tuple(d.nodes))
        self.epoch[d.job] += 1
        if math.isfinite(job.runtime):
            self._push(now + job.runtime, FINISH, d.job, self.epoch[d.job])
        if self.log is not None:
            self.log.write(now, "admit", job, pods)

    def _place(self, now: float, d: Admit, job: Job, pods: int) -> None:
        if self.nodes is None:
            if d.nodes:
                raise self._refuse(now, d, "the cluster has no nodes, but the decision names some")
            return
        if len(d.nodes) != pods:
            raise self._refuse(now, d, f"{len(d.nodes)} nodes for {pods} pods (one node per pod)")
        request = np.asarray(job.request, float)
        taken: dict[str, np.ndarray] = {}
        for node in d.nodes:
            if node not in self.node_free:
                raise self._refuse(now, d, f"unknown node '{node}'")
            taken[node] = taken.get(node, 0.0) + request
            if not fits(taken[node], self.node_free[node]):
                raise self._refuse(now, d, f"its pods do not fit node '{node}'")
        for node, amount in taken.items():
            self.node_free[node] -= amount

    def _preempt(self, now: float, d: Preempt) -> None:
        if d.job not in self.running:
            raise self._refuse(now, d, f"'{d.job}' is not a running job")
        run = self._stop(d.job)
        q = self.index[run.job.queue]
        self.counts["preempted"][q] += 1
        self.lost_seconds[q] += now - run.start
        self.lost_amounts[q] += run.usage * (now - run.start)
        self._enqueue(now, run.job)
        if self.log is not None:
            self.log.write(now, "preempt", run.job, run.pods, d.by)

    # -- statistics ---------------------------------------------------------------------------
    def _entitle(self, state: ClusterState) -> None:
        """The entitlement of the work after this instant's decisions (solved again only when the
        queues with work change)."""
        self.E = self.entitled.bundles(state)

    def _integrate(self, dt: float) -> None:
        if dt <= 0:
            return
        self.U_int += self.U * dt
        self.E_int += self.E * dt
        waiting = self.waiting_count > 0
        self.gap_E += dominant_shares(np.maximum(self.E - self.U, 0.0), self.capacity) * waiting * dt
        if self.G is not None:
            self.gap_G += dominant_shares(np.maximum(self.G - self.U, 0.0), self.capacity) * waiting * dt

    def result(self, end: float, workload: str) -> ReplayResult:
        resources = tuple(self.instance.resources)
        span = end if end > 0 else 1.0

        def per(row: np.ndarray) -> dict[str, float]:
            return dict(zip(resources, (row / span).tolist()))

        queues = []
        for q, i in self.index.items():
            waits = np.asarray(self.waits[i])
            rep = QueueReport(
                q,
                submitted=int(self.counts["submitted"][i]),
                completed=int(self.counts["completed"][i]),
                waiting=int(self.waiting_count[i]),
                admissions=len(waits),
                preemptions=int(self.counts["preempted"][i]),
                lost_job_seconds=float(self.lost_seconds[i]),
                lost_resource_seconds=dict(zip(resources, self.lost_amounts[i].tolist())),
                usage=per(self.U_int[i]),
                usage_share=float(dominant_shares(self.U_int[i][None, :] / span, self.capacity)[0]),
                entitlement_share=float(dominant_shares(self.E_int[i][None, :] / span, self.capacity)[0]),
                entitlement=per(self.E_int[i]),
                guarantee=None if self.G is None else dict(zip(resources, self.G[i].tolist())),
                entitlement_gap=float(self.gap_E[i] / span),
                guarantee_gap=None if self.G is None else float(self.gap_G[i] / span),
            )
            rep.running = sum(1 for r in self.running.values() if r.job.queue == q)
            if len(waits):
                rep.wait_mean, rep.wait_max = float(waits.mean()), float(waits.max())
                rep.wait_p50, rep.wait_p95 = (float(v) for v in np.percentile(waits, [50, 95]))
            queues.append(rep)
        R = np.where(self.capacity > 0, self.capacity, np.inf)
        utilization = dict(zip(resources, (self.U_int.sum(axis=0) / span / R).tolist()))
        return ReplayResult(self.name, workload, end, self.events, self.cycles, self.decisions, utilization, queues)


__all__ = ["EVENT_FIELDS", "EventLog", "QueueReport", "ReplayResult", "check_decisions", "replay"]
