"""Time seen online: what a policy is told at one moment of a simulation, and what it answers.

A scheduler decides in cycles.  At each cycle it is shown the cluster as it is (a
:class:`ClusterState`: the queue case, the jobs running and the jobs waiting, the nodes' free
room) and it answers with decisions: admit a waiting job (:class:`Admit`), or preempt a running
one (:class:`Preempt`) to make room for another.  A policy is anything with a
:meth:`OnlinePolicy.decide`: Kueue's scheduling cycle, Volcano's session of actions, YARN's
container assignment and preemption, YuniKorn's queue sort and preemption, Mesos' offers; each
lives in ``models/`` beside the policy's entitlement arithmetic and cites the upstream function
it follows.  :func:`online_policy` finds a registered mechanism's online form.

A job is admitted whole or, for a gang, with at least ``min_pods`` of its pods; once admitted it
runs for its ``runtime`` unless preempted, and a preempted job loses the work since its start and
waits again in its queue (the simulator's rules, :mod:`fairalloc.scheduling`).  The state is the
simulator's; a policy reads it and never changes it: :meth:`ClusterState.after` gives the state
a policy's own decisions lead to, for the policies that reason about them within a cycle.

Belongs here: the interface every online policy shares.  Imports: ``fairalloc.core`` only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from fairalloc.core.errors import CaseError, FairallocError, unknown
from fairalloc.core.instance import Instance
from fairalloc.core.queues import queues_of
from fairalloc.core.registry import Mechanism
from fairalloc.core.tolerances import FIT
from fairalloc.engines.dynamic import pool_shares

INF = math.inf


@dataclass(frozen=True, slots=True)
class Job:
    """A job as submitted: ``pods`` pods of ``request`` each (one amount per resource of the case,
    in the case's units) for ``queue`` (a leaf of the case).  ``min_pods``: a gang's fewest pods
    that may run (``None``: all of them, the job is admitted whole).  ``runtime``: seconds of work
    when it runs uninterrupted."""

    name: str
    queue: str
    request: tuple[float, ...]
    pods: int = 1
    min_pods: int | None = None
    priority: float = 0.0
    submit: float = 0.0
    runtime: float = INF

    @property
    def least(self) -> int:
        """The fewest pods the job may run with."""
        return self.pods if self.min_pods is None else self.min_pods

    def total(self, pods: int | None = None) -> np.ndarray:
        """What ``pods`` of its pods hold (all of them by default), per resource."""
        return np.asarray(self.request, float) * (self.pods if pods is None else pods)


@dataclass(frozen=True, slots=True)
class Running:
    """A job running since ``start`` with ``pods`` pods (on ``nodes``, one per pod, when the
    cluster has nodes)."""

    job: Job
    pods: int
    start: float
    nodes: tuple[str, ...] = ()

    @property
    def usage(self) -> np.ndarray:
        return self.job.total(self.pods)


@dataclass(frozen=True, slots=True)
class Admit:
    """Start waiting job ``job`` with ``pods`` pods (``None``: all of them), on ``nodes`` (one per
    pod) when the cluster has nodes; ``why``: the rule that admitted it, as a sentence."""

    job: str
    pods: int | None = None
    nodes: tuple[str, ...] = ()
    why: str = ""


@dataclass(frozen=True, slots=True)
class Preempt:
    """Stop running job ``job`` to make room for waiting job ``by``; ``why``: the rule."""

    job: str
    by: str
    why: str = ""


Decision = Admit | Preempt


@dataclass(frozen=True)
class ClusterState:
    """The cluster at time ``now``: the queue case (``case.queues``: the tree, guarantees, limits,
    weights, priorities), the jobs running (in the order they were admitted) and the jobs waiting
    (in the order they entered their queue: submitted, or preempted and back), the nodes'
    allocatable amounts when the cluster has nodes (else the case's capacity is one pool), and the
    policy's own settings (as the scenario or workload gives them)."""

    case: Instance
    now: float = 0.0
    running: Mapping[str, Running] = field(default_factory=dict)
    pending: Mapping[str, Job] = field(default_factory=dict)
    #: per waiting job, when it entered its queue (its submit time, or when it was preempted)
    since: Mapping[str, float] = field(default_factory=dict)
    nodes: Mapping[str, np.ndarray] | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def resources(self) -> tuple[str, ...]:
        return tuple(self.case.resources)

    @property
    def capacity(self) -> np.ndarray:
        return np.asarray(self.case.capacity, float)

    # The three sums below add the running jobs in admission order, in Python floats: the same
    # IEEE operations in the same order as numpy's per job (``request * pods`` then the sum), a
    # few resources each, without numpy's cost per call (a cycle reads them for every state).

    def usage(self) -> dict[str, np.ndarray]:
        """What each leaf queue's running jobs hold, per resource (every leaf, zeros included)."""
        m = len(self.resources)
        out = {q: [0.0] * m for q in self.case.users}
        for run in self.running.values():
            _take(out[run.job.queue], run.job.request, run.pods)
        return {q: np.array(v, float) for q, v in out.items()}

    def free(self) -> np.ndarray:
        """The capacity no running job holds."""
        free = self.capacity.tolist()
        for run in self.running.values():
            _take(free, run.job.request, -run.pods)
        return np.array(free, float)

    def free_on_nodes(self) -> dict[str, np.ndarray]:
        """Each node's room left by the pods running on it (``{}`` without nodes)."""
        if self.nodes is None:
            return {}
        free = {k: np.asarray(v, float).tolist() for k, v in self.nodes.items()}
        for run in self.running.values():
            for node in run.nodes:
                _take(free[node], run.job.request, -1)
        return {k: np.array(v, float) for k, v in free.items()}

    def waiting(self, queue: str) -> list[Job]:
        """``queue``'s waiting jobs in the order they entered it."""
        return [job for job in self.pending.values() if job.queue == queue]

    def queues_waiting(self) -> list[str]:
        """The leaf queues with a waiting job, in the case's order."""
        busy = {job.queue for job in self.pending.values()}
        return [q for q in self.case.users if q in busy]

    def queues_with_work(self) -> frozenset[str]:
        """The leaf queues with a job running or waiting."""
        return frozenset(job.queue for job in self.pending.values()) | {r.job.queue for r in self.running.values()}

    def served(self, queue: str) -> Iterator[Job]:
        """``queue``'s waiting jobs, highest priority first, then in the order they entered it (read
        lazily: a policy that stops at a queue's head costs no more than the head)."""
        return iter(sorted(self.waiting(queue), key=lambda job: -job.priority))  # stable: entry order

    def after(self, decisions: list[Decision]) -> ClusterState:
        """The state these decisions lead to at the same instant: a preempted job waits again (its
        queue entered now), an admitted one runs from now."""
        running, pending, since = dict(self.running), dict(self.pending), dict(self.since)
        for d in decisions:
            if isinstance(d, Preempt):
                run = running.pop(d.job)
                pending[d.job], since[d.job] = run.job, self.now
            else:
                job = pending.pop(d.job)
                since.pop(d.job, None)
                running[d.job] = Running(job, job.pods if d.pods is None else d.pods, self.now, d.nodes)
        return dataclasses.replace(self, running=running, pending=pending, since=since)


def _take(row: list[float], request: tuple[float, ...], pods: int) -> None:
    """``row += request * pods`` (``pods`` < 0: less), element by element in Python floats."""
    if len(request) != len(row):  # numpy's broadcast, or its refusal
        row[:] = (np.asarray(row) + np.asarray(request, float) * pods).tolist()
        return
    for j, amount in enumerate(request):
        row[j] += float(amount) * pods


@runtime_checkable
class OnlinePolicy(Protocol):
    """A scheduler seen online.  ``decide``: one scheduling cycle's decisions, in the order the
    scheduler takes them.  ``wake``: the next time the policy must be asked even if no job arrives
    or ends (a preemption timeout), or ``None``.  A policy may also set ``again`` (true after a
    cycle that decided nothing but left its next cycle other work, e.g. a head set aside): the
    replay asks again at the same instant after a cycle that decided something, or set it."""

    def decide(self, state: ClusterState) -> list[Decision]: ...

    def wake(self, state: ClusterState) -> float | None: ...


def replays_jobs(mechanism: Mechanism) -> bool:
    """Whether ``mechanism`` has a form for a queue case's jobs: its own ``online(settings)``, or a
    static allocation for :class:`Entitled` to follow (not a scheduler of tasks offered node by node)."""
    return hasattr(mechanism, "online") or mechanism.kind != "online"


def online_policy(mechanism: Mechanism, settings: Mapping[str, Any] | None = None) -> OnlinePolicy:
    """``mechanism``'s online form with ``settings`` (the policy's own options): the scheduler's
    own rules where the mechanism defines ``online(settings)``, else the generic
    :class:`Entitled` adapter over its static allocation."""
    if not replays_jobs(mechanism):
        raise FairallocError(
            f"mechanism: {mechanism.name} schedules tasks offered node by node (a task workload, without "
            "--case); it has no form for a queue case's jobs"
        )
    make = getattr(mechanism, "online", None)
    if make is None:
        return Entitled(mechanism)
    policy = make(dict(settings or {}))
    if not isinstance(policy, OnlinePolicy):
        raise TypeError(f"{mechanism.name}.online() returned {type(policy).__name__}, which has no decide() and wake()")
    return policy


def check_settings(settings: Mapping[str, Any], known: Mapping[str, Any], where: str) -> None:
    """Refuse a setting a policy does not know (``known``: its names, a mapping or a set),
    suggesting the closest; nested mappings are the policies' own to check."""
    for key in settings:
        if key not in known:
            raise CaseError(f"{where}.{key}: {unknown('setting', key, sorted(known))}")


# -- the generic adapter: any static mechanism, online ---------------------------------------------


class Entitled:
    """Any static mechanism online: each queue is entitled to what ``mechanism.allocate`` gives it
    on the case whose requests are the queues' work (what they run plus what waits), and at each
    cycle the queue furthest below its entitlement is served first.

    The rules (a fair-share scheduler's, with no preemption and no policy settings of its own; the
    case's ``settings`` belong to its scheduler's online form and are not read):

    * *entitlement*: :func:`requested` (each leaf's request = its running and waiting jobs' pods)
      allocated by the mechanism, per queue a bundle ``E_i`` (a dynamic mechanism, which takes no
      task bounds, allocates among the queues with work, each asking for more of its request's
      shape and bringing the cluster in proportion to its shared quantity, else its weight:
      :func:`~fairalloc.engines.dynamic.pool_shares`); computed again only when the set of
      queues with work changes (the simulator asks at every event, the allocation is the cost);
    * *order*: queues with waiting work in increasing ``u_i / e_i``, the dominant share of what they
      hold over the dominant share of their entitlement (``max_j U_ij / R_j`` over
      ``max_j E_ij / R_j``; a queue entitled to nothing comes last; ties in the case's queue order);
    * *head*: a queue's waiting job of highest priority, the earliest to enter the queue among
      equals (:attr:`ClusterState.pending` order);
    * *admission*: the head is admitted if its pods fit the free capacity (with nodes: placed pod by
      pod on the first node with room); a gang with ``min_pods`` takes as many pods as fit, at least
      ``min_pods``.  A head that does not fit blocks its queue for the rest of the cycle (FIFO within
      a queue, no head-of-line bypass); after each admission the order is taken again.

    >>> import fairalloc
    >>> inst = fairalloc.Instance([10, 10], [[1, 0], [0, 1]], users=["a", "b"], resources=["cpu", "mem"])
    >>> jobs = {"a1": Job("a1", "a", (4, 0)), "a2": Job("a2", "a", (4, 0)), "b1": Job("b1", "b", (0, 4))}
    >>> state = ClusterState(inst, pending=jobs, since=dict.fromkeys(jobs, 0.0))
    >>> [d.job for d in Entitled(fairalloc.get("drf")).decide(state)]
    ['a1', 'b1', 'a2']
    """

    def __init__(self, mechanism: Mechanism):
        self.mechanism = mechanism
        self._key: tuple[int, frozenset[str]] | None = None
        self._entitled: dict[str, float] = {}
        self._bundles = np.zeros((0, 0))

    def wake(self, state: ClusterState) -> float | None:
        return None

    def bundles(self, state: ClusterState) -> np.ndarray:
        """``(n, m)``: each leaf's entitlement for the state's work (zeros without work)."""
        work = state.queues_with_work()
        key = (id(state.case), work)
        if key != self._key:
            if work:
                self._bundles = self._allocate(requested(state))
            else:
                self._bundles = np.zeros((len(state.case.users), len(state.resources)))
            shares = dominant_shares(self._bundles, state.capacity)
            self._key, self._entitled = key, dict(zip(state.case.users, shares.tolist()))
        return self._bundles

    def _allocate(self, inst: Instance) -> np.ndarray:
        """``(n, m)`` bundles; a dynamic mechanism (arrivals, no task bounds) allocates among the
        queues with work, in the case's order, each asking for more of its request's shape."""
        if getattr(self.mechanism, "kind", "static") != "dynamic":
            return np.asarray(self.mechanism.allocate(inst).bundles, float)
        keep = inst.bounds() > 0
        sub = Instance(
            inst.capacity,
            inst.demand[keep],
            resources=inst.resources,
            users=[u for u, k in zip(inst.users, keep) if k],
            weights=None if inst.weights is None else inst.weights[keep],
            shared=pool_shares(
                None if inst.shared is None else inst.shared[keep],
                None if inst.weights is None else inst.weights[keep],
                int(keep.sum()),
            ),
            name=inst.name,
        )
        out = np.zeros(inst.demand.shape)
        out[keep] = np.asarray(self.mechanism.allocate(sub).bundles, float)
        return out

    def entitlement(self, state: ClusterState) -> dict[str, float]:
        """Each leaf's dominant share of its entitlement for the state's work."""
        self.bundles(state)
        return self._entitled

    def decide(self, state: ClusterState) -> list[Decision]:
        entitled = self.entitlement(state)
        heads = {q: state.served(q) for q in state.queues_waiting()}
        usage = state.usage()
        R = np.where(state.capacity > 0, state.capacity, INF)
        held = {q: float((usage[q] / R).max(initial=0.0)) for q in heads}
        free, rooms = state.free(), state.free_on_nodes()
        rank = {q: k for k, q in enumerate(state.case.users)}
        decisions: list[Decision] = []
        while heads:
            q = min(heads, key=lambda q: (_ratio(held[q], entitled.get(q, 0.0)), rank[q]))
            job = next(heads[q], None)
            if job is None:
                del heads[q]
                continue
            placed = _fit(job, free, rooms if state.nodes is not None else None)
            if placed is None:
                del heads[q]  # its head waits: the queue is served in order
                continue
            pods, nodes = placed
            free -= job.total(pods)
            usage[q] = usage[q] + job.total(pods)
            held[q] = float((usage[q] / R).max(initial=0.0))
            decisions.append(
                Admit(job.name, pods, nodes, f"queue {q} furthest below its {self.mechanism.name} entitlement")
            )
        return decisions


def requested(state: ClusterState) -> Instance:
    """The case with each leaf's request = the pods its running jobs hold plus those its waiting
    jobs ask for (a queue without work is inactive), and each queue's usage = what it holds: the
    queue case a static mechanism entitles for this state."""
    case = state.case
    m = len(case.resources)
    usage = state.usage()
    wanted = {q: u.copy() for q, u in usage.items()}
    for job in state.pending.values():
        wanted[job.queue] = wanted[job.queue] + job.total()
    D = np.array([wanted.get(u, np.zeros(m)) for u in case.users])
    queues = queues_of(case).with_usage(usage)  # a paper case read as flat queues: a queue may be idle
    return Instance(
        case.capacity,
        D,
        resources=case.resources,
        users=case.users,
        weights=case.weights,
        shared=case.shared,
        max_tasks=(D > 0).any(axis=1).astype(float),
        name=case.name,
        groups=case.groups,
        queues=queues,
    )


def dominant_shares(amounts: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Each row's largest share of a resource (a resource of no capacity is not counted)."""
    R = np.where(capacity > 0, capacity, INF)
    return np.asarray((amounts / R).max(axis=1, initial=0.0))


def _ratio(held: float, entitled: float) -> float:
    if entitled <= 0:
        return INF
    return held / entitled


def fits(amount: np.ndarray, room: np.ndarray) -> bool:
    """Whether ``amount`` fits ``room`` in every resource, within :data:`~fairalloc.core.tolerances.FIT`
    (a sum of whole pods may overshoot a room it equals by a few roundings)."""
    return bool((np.asarray(amount, float) <= np.asarray(room, float) * (1 + FIT) + FIT).all())


def pods_fitting(job: Job, room: np.ndarray) -> int:
    """How many of ``job``'s pods fit ``room`` together (all of them at most), within ``FIT``."""
    request = np.asarray(job.request, float)
    need = request > 0
    if not need.any():
        return job.pods
    slack = np.asarray(room, float) * (1 + FIT) + FIT
    return min(job.pods, int(np.floor((slack[need] / request[need]).min())))


def _fit(job: Job, free: np.ndarray, rooms: dict[str, np.ndarray] | None) -> tuple[int, tuple[str, ...]] | None:
    """The pods of ``job`` that fit (all, or a gang's most, at least ``min_pods``), and their nodes
    (first fit, one per pod) when the cluster has nodes; ``rooms`` is updated.  ``None``: too few."""
    request = np.asarray(job.request, float)
    pods = pods_fitting(job, free)
    if pods < job.least:
        return None
    if rooms is None:
        return pods, ()
    nodes = place(request, pods, rooms)
    if len(nodes) < job.least:
        return None
    for node in nodes:
        rooms[node] -= request
    return len(nodes), tuple(nodes)


def place(request: np.ndarray, pods: int, rooms: Mapping[str, np.ndarray]) -> list[str]:
    """Up to ``pods`` pods of ``request`` placed first fit on ``rooms`` (node -> free amounts, in
    their order; not changed): the node of each pod placed."""
    left = {k: np.asarray(v, float).copy() for k, v in rooms.items()}
    nodes: list[str] = []
    for name, room in left.items():
        while len(nodes) < pods and fits(request, room):
            room -= request
            nodes.append(name)
        if len(nodes) == pods:
            break
    return nodes


__all__ = [
    "Admit",
    "ClusterState",
    "Decision",
    "Entitled",
    "Job",
    "OnlinePolicy",
    "Preempt",
    "Running",
    "check_settings",
    "dominant_shares",
    "fits",
    "online_policy",
    "place",
    "pods_fitting",
    "replays_jobs",
    "requested",
]
