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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from fairalloc.core.errors import CaseError, FairallocError, unknown
from fairalloc.core.instance import Instance
from fairalloc.core.registry import Mechanism

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

    def usage(self) -> dict[str, np.ndarray]:
        """What each leaf queue's running jobs hold, per resource (every leaf, zeros included)."""
        m = len(self.resources)
        out = {q: np.zeros(m) for q in self.case.users}
        for run in self.running.values():
            out[run.job.queue] = out[run.job.queue] + run.usage
        return out

    def free(self) -> np.ndarray:
        """The capacity no running job holds."""
        free = self.capacity.copy()
        for run in self.running.values():
            free -= run.usage
        return free

    def free_on_nodes(self) -> dict[str, np.ndarray]:
        """Each node's room left by the pods running on it (``{}`` without nodes)."""
        if self.nodes is None:
            return {}
        free = {k: np.asarray(v, float).copy() for k, v in self.nodes.items()}
        for run in self.running.values():
            for node in run.nodes:
                free[node] -= run.job.request
        return free

    def waiting(self, queue: str) -> list[Job]:
        """``queue``'s waiting jobs in the order they entered it."""
        return [job for job in self.pending.values() if job.queue == queue]

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


@runtime_checkable
class OnlinePolicy(Protocol):
    """A scheduler seen online.  ``decide``: one scheduling cycle's decisions, in the order the
    scheduler takes them.  ``wake``: the next time the policy must be asked even if no job arrives
    or ends (a preemption timeout), or ``None``."""

    def decide(self, state: ClusterState) -> list[Decision]: ...

    def wake(self, state: ClusterState) -> float | None: ...


def online_policy(mechanism: Mechanism, settings: Mapping[str, Any] | None = None) -> OnlinePolicy:
    """``mechanism``'s online form with ``settings`` (the policy's own options): the scheduler's
    own rules where the mechanism defines ``online(settings)``."""
    make = getattr(mechanism, "online", None)
    if make is None:
        raise FairallocError(f"mechanism: {mechanism.name} has no online form")
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


__all__ = [
    "Admit",
    "ClusterState",
    "Decision",
    "Job",
    "OnlinePolicy",
    "Preempt",
    "Running",
    "check_settings",
    "online_policy",
]
