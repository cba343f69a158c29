"""Volcano's scheduling session online: the configured actions in order, with the ``proportion``
plug-in's ``deserved``, queue order, ``overused`` and reclaim rules, job priority and gang.

Source read: volcano-sh/volcano (Apache-2.0) at commit ed72c7c815a9fd547a787134676f73d42e9d049c
(2026-08-20):

* ``pkg/scheduler/scheduler.go``, ``Scheduler.runOnce``: one session opens a snapshot, runs the
  actions in the configured order and closes; only binds and evictions survive it.  A task placed
  by ``preempt`` or ``reclaim`` is only *pipelined* (``framework/statement.go``,
  ``Statement.Pipeline``): it is bound by a later session's ``allocate``, so those two actions
  answer :class:`~fairalloc.engines.online.Preempt` only.
* ``pkg/scheduler/plugins/proportion/proportion.go``, ``OnSessionOpen``: ``deserved`` per queue
  (:func:`~fairalloc.models.volcano_proportion.proportion_rounds`, over the session's total, the
  queues with a job, and ``request = allocated + pending``), ``share = max_r allocated/deserved``
  (``updateQueueAttrShare``), ``QueueOrderFn`` (higher queue priority, then lower share),
  ``OverusedFn`` (``deserved <= allocated`` in every resource), ``queueAllocatable`` (``allocated +
  request <= deserved`` where the request is positive; ``Allocatable`` and ``Preemptive``),
  ``ReclaimableFn`` (a task is a victim while its queue's allocated is *not* ``<= deserved``,
  tested before it is subtracted: the last victim may take its queue below deserved) and
  ``JobEnqueueableFn`` (``minResources + allocated + inqueue - elastic <= realCapability``).
* ``pkg/scheduler/framework/session.go``, ``openSession``: the session's total is the allocatable
  of every node in the snapshot, whether a pod may land on it or not.
* ``actions/enqueue/enqueue.go``, ``Execute``; ``actions/allocate/allocate.go``, ``Execute``,
  ``allocateResources``, ``allocateResourcesForTasks`` (a queue pop serves one job: its gang of
  ``minAvailable`` pods, or one more pod once the job is ready; the queue goes back with its new
  share); ``actions/preempt/preempt.go``, ``Execute``, ``normalPreempt``, ``preemptorFitsOnNode``
  (within a queue: lower-priority jobs' pods, evicted until the preemptor is allocatable and fits
  the node); ``actions/reclaim/reclaim.go``, ``Execute``, ``reclaimForTask`` (across queues: a queue
  not overused takes from reclaimable queues above deserved, victims in reverse queue order).
* ``plugins/priority/priority.go`` (job order by priority; a victim's job has lower priority),
  ``plugins/gang/gang.go`` (``JobReady``: ``minAvailable`` pods placed; ``JobStarving``: fewer),
  ``plugins/drf/drf.go`` (job order: lower dominant share), ``framework/session_plugins.go``
  (``JobOrderFn``: creation time, then UID; ``Reclaimable``: a tier's plug-ins intersect).

**What is modelled and how.**  A job of the vocabulary is a PodGroup: its pods are alike, it
runs ``min_pods`` (``minAvailable``) to ``pods`` of them.  Job order is priority, then gang
readiness (not-ready first), then the dominant share of what the session placed, then submit time,
then name (for creation time and UID).  Queue order ties break on the queue name (Volcano's UID).
Pods are placed **first fit, in the order the nodes are listed** (Volcano scores nodes with its
``nodeorder``/``binpack`` plug-ins and picks at random among the best); without nodes the capacity
is one pool.  Victims are **whole running jobs** (the vocabulary preempts jobs): Volcano evicts
pods one by one, and its gang plug-in offers only the pods a job has above ``minAvailable``; in the
default tiers (gang in tier 1, ``proportion`` in tier 2) gang's empty answer for jobs at their
minimum defers to tier 2, which is what is followed here, without gang's victim filter.  Reclaim
walks a node's pods in victim order (Volcano: Go map order, at random), so the newest jobs of the
queue above deserved are its victims.  Pods a job did not get when admitted never join it later
(the vocabulary has no decision for it).

**Not modelled**: pods the scheduler only pipelines onto releasing room in ``allocate`` (they are
placed one session later, when the room is free), the ``overcommit`` plug-in's enqueue vote, queue
state (``Closed``), BestEffort pods, ``PreemptionPolicy: Never``, task priorities inside a job,
per-role minimums, node selectors and affinities, the intra-job pass of ``preempt``; ``enqueue``
is decided afresh each session (Volcano keeps the ``Inqueue`` phase).

Settings (``settings:`` of a case, checked when the policy is built):

* ``actions``: the actions in order (a list, or Volcano's comma-separated text; default
  ``enqueue, allocate, preempt, reclaim``; Volcano's own default ``enqueue, allocate, backfill``
  has neither preempt nor reclaim, and backfill only places pods that ask for nothing);
* ``queues: {queue: {reclaimable: false}}``: the queue's ``spec.reclaimable``;
* ``jobs: {job: {preemptable: false}}``: the ``volcano.sh/preemptable`` annotation of its pods;
* ``allocatable: false``: ``proportion`` registered with ``enableAllocatable: false`` (as in
  ``TestFareShareAllocate``): ``allocate`` may place pods beyond ``deserved``;
* ``tainted_nodes: [node, ...]``: nodes counted in the session's total that no pod of the queues
  tolerates (a control-plane node): nothing is placed on them.

Belongs here: the session's rules.  Imports: ``fairalloc.core`` and ``fairalloc.engines``; the
``proportion`` arithmetic comes from the mechanism's ``online`` (:class:`Proportion`), once.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.errors import CaseError, unknown
from fairalloc.core.instance import Instance
from fairalloc.core.queues import queues_of
from fairalloc.engines.online import Admit, ClusterState, Decision, Job, Preempt, Running, check_settings

_Floats = NDArray[np.float64]
_T = TypeVar("_T")
#: a statement: how to undo each of its operations (``Statement.Discard``)
_Ops = list[Callable[[], None]]

#: the actions this model runs (``backfill`` places only pods with an empty request: none here)
ACTIONS = ("enqueue", "allocate", "preempt", "reclaim")
DEFAULT_ACTIONS = ACTIONS
SETTINGS = {"actions": None, "queues": None, "jobs": None, "allocatable": None, "tainted_nodes": None}
#: the key of the one pool when the cluster has no nodes
POOL = ""


@dataclass(frozen=True)
class Proportion:
    """What a session needs of the ``proportion`` arithmetic, handed over by
    ``VolcanoProportion.online`` (:mod:`fairalloc.models.volcano_proportion`), which imports this
    module: the rules use that arithmetic without importing it back."""

    #: ``(case, total (m,), request (n, m), active (n,)) -> (deserved, realCapability)``, both
    #: ``(n, m)`` in Volcano's units, for the leaf queues in case order
    rounds: Callable[[Instance, _Floats, _Floats, NDArray[np.bool_]], tuple[_Floats, _Floats]]
    #: one unit of each resource in Volcano's ``Resource`` (``volcano_units``)
    units: Callable[[tuple[str, ...]], _Floats]
    #: ``minResource``: the tolerance of ``LessEqual``, in Volcano's units
    tolerance: float


# The three tests below read a few resources at a time, for every pod and victim of a session: on
# Python floats (the same IEEE operations as numpy's, element by element), not on tiny arrays.
def less_equal(left: _Floats, right: _Floats, tolerance: float) -> bool:
    """``Resource.LessEqual(right, Zero)``: every resource, with Volcano's ``minResource``
    tolerance (in Volcano's units)."""
    for a, b in zip(left.tolist(), right.tolist(), strict=True):
        if not (a < b or abs(a - b) < tolerance):
            return False
    return True


def within(left: _Floats, right: _Floats, request: _Floats) -> bool:
    """``LessEqualWithDimensionAndResourcesName(right, request)``: ``left <= right`` exactly (no
    tolerance there), in the resources the request asks for."""
    for a, b, r in zip(left.tolist(), right.tolist(), request.tolist(), strict=True):
        if r > 0 and not a <= b:
            return False
    return True


def share(allocated: _Floats, deserved: _Floats) -> float:
    """``updateQueueAttrShare``: the largest ``allocated / deserved`` (``helpers.Share``: 0/0 is 0,
    x/0 is 1)."""
    ratios = [a / d if d > 0 else float(a > 0) for a, d in zip(allocated.tolist(), deserved.tolist(), strict=True)]
    return max([0.0, *ratios])


def _actions(value: object) -> tuple[str, ...]:
    names = [a.strip() for a in value.split(",")] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(a, str) for a in names):
        raise CaseError("settings.actions: must be a list of action names or Volcano's comma-separated text")
    if not names:
        raise CaseError(f"settings.actions: no action (give some of {', '.join(ACTIONS)})")
    for k, name in enumerate(names):
        if name not in ACTIONS:
            raise CaseError(f"settings.actions[{k}]: {unknown('action', name, ACTIONS)}")
    return tuple(names)


def _flags(value: object, field: str, flag: str) -> dict[str, bool]:
    """``{name: {flag: bool}}`` (``settings.queues``, ``settings.jobs``) as ``{name: bool}``."""
    if not isinstance(value, Mapping):
        raise CaseError(f"settings.{field}: must be a mapping {field[:-1]} -> {{{flag}: true|false}}")
    out = {}
    for name, spec in value.items():
        where = f"settings.{field}.{name}"
        if not isinstance(spec, Mapping):
            raise CaseError(f"{where}: must be a mapping {{{flag}: true|false}}")
        check_settings(spec, dict.fromkeys([flag]), where)
        if not isinstance(spec.get(flag, True), bool):
            raise CaseError(f"{where}.{flag}: must be true or false")
        out[str(name)] = bool(spec.get(flag, True))
    return out


class VolcanoCycle:
    """One Volcano session per :meth:`decide`; nothing is remembered between sessions."""

    def __init__(self, settings: Mapping[str, Any], proportion: Proportion):
        check_settings(settings, SETTINGS, "settings")
        self.proportion = proportion
        self.actions = _actions(settings.get("actions", list(DEFAULT_ACTIONS)))
        self.reclaimable = _flags(settings.get("queues", {}), "queues", "reclaimable")
        self.preemptable = _flags(settings.get("jobs", {}), "jobs", "preemptable")
        self.allocatable = settings.get("allocatable", True)
        if not isinstance(self.allocatable, bool):
            raise CaseError("settings.allocatable: must be true or false")
        tainted = settings.get("tainted_nodes", [])
        if not isinstance(tainted, list) or not all(isinstance(n, str) for n in tainted):
            raise CaseError("settings.tainted_nodes: must be a list of node names")
        self.tainted = tuple(tainted)

    def decide(self, state: ClusterState) -> list[Decision]:
        session = Session(state, self)
        for action in self.actions:
            getattr(session, action)()
        return session.decisions()

    def wake(self, state: ClusterState) -> float | None:
        return None  # a session runs when something arrives or ends; no clock of its own


class Session:
    """The snapshot one session works on (in Volcano's units: millicores, bytes), and its actions."""

    def __init__(self, state: ClusterState, policy: VolcanoCycle):
        self.state, self.policy = state, policy
        inst = state.case
        self.leaves = list(inst.users)
        for name in policy.reclaimable:
            if name not in self.leaves:
                raise CaseError(f"settings.queues.{name}: {unknown('queue', name, self.leaves)}")
        self.unit = policy.proportion.units(tuple(inst.resources))
        self.total = self._total()
        self.nodes, self.idle = self._nodes()
        self.releasing = {n: np.zeros_like(v) for n, v in self.idle.items()}
        self.pipelined_room = {n: np.zeros_like(v) for n, v in self.idle.items()}
        self.on_nodes = {name: self._pods_on_nodes(run) for name, run in state.running.items()}
        #: each queue's running jobs, in the order they run (``preempt``'s victims are read from it)
        self.runs_of: dict[str, list[Running]] = {}
        for run in state.running.values():
            self.runs_of.setdefault(run.job.queue, []).append(run)
        self.allocated = {q: u * self.unit for q, u in state.usage().items()}
        self._req: dict[str, _Floats] = {}
        self.victim_order: dict[str, list[Running]] = {}  # per queue, set by reclaim
        self._owner_lists: dict[str, tuple[list[tuple[str, _Floats]], list[tuple[str, list[Running]]]]] = {}
        #: what the plug-ins and actions read of a queue, with the queue's allocated array they
        #: read it at (:meth:`_fact`)
        self._facts: dict[tuple[str, Any], tuple[_Floats, Any]] = {}
        self.deserved, self.real = self._proportion()
        q = queues_of(inst)
        self.priority = {leaf: float(q.priority.get(leaf, 0.0)) for leaf in self.leaves}
        #: pending jobs allocate, preempt and reclaim may serve (all of them without ``enqueue``)
        self.inqueue = "enqueue" not in policy.actions
        self.enqueued: set[str] = set()
        self.placed: dict[str, list[str]] = {}  # pods bound this session, per job, by node
        self.pipelined: dict[str, list[str]] = {}  # pods pipelined this session (preempt, reclaim)
        self.evicted: dict[str, tuple[str, str]] = {}  # victim -> (preemptor, why)
        self.seq: dict[str, int] = {}  # the order decisions were taken in
        self.why: dict[str, str] = {}

    # -- the snapshot ---------------------------------------------------------------------
    def _nodes(self) -> tuple[list[str], dict[str, _Floats]]:
        state = self.state
        if state.nodes is None:
            return [POOL], {POOL: state.free() * self.unit}
        for k, name in enumerate(self.policy.tainted):
            if name not in state.nodes:
                raise CaseError(f"settings.tainted_nodes[{k}]: {unknown('node', name, list(state.nodes))}")
        free = state.free_on_nodes()
        usable = [n for n in state.nodes if n not in self.policy.tainted]
        return usable, {n: free[n] * self.unit for n in usable}

    def _pods_on_nodes(self, run: Running) -> dict[str, int]:
        if not run.nodes:
            return {POOL: run.pods}
        counts: dict[str, int] = {}
        for node in run.nodes:
            counts[node] = counts.get(node, 0) + 1
        return counts

    def _total(self) -> _Floats:
        """``ssn.TotalResource``: every node's allocatable (tainted ones too), or the capacity."""
        if self.state.nodes is None:
            return self.state.capacity * self.unit
        return np.sum([np.asarray(v, float) for v in self.state.nodes.values()], axis=0) * self.unit

    def _proportion(self) -> tuple[dict[str, _Floats], dict[str, _Floats]]:
        """``deserved`` and ``realCapability`` per queue, from the session's jobs (the plug-in's
        rounds, :func:`~fairalloc.models.volcano_proportion.proportion_rounds`)."""
        state, inst = self.state, self.state.case
        request = {q: a.copy() for q, a in self.allocated.items()}
        has_job = dict.fromkeys(self.leaves, False)
        for run in state.running.values():
            has_job[run.job.queue] = True
        for job in state.pending.values():
            request[job.queue] = request[job.queue] + self.req(job) * job.pods
            has_job[job.queue] = True
        rows = np.array([request[q] for q in self.leaves])
        active = np.array([has_job[q] for q in self.leaves])
        deserved, real = self.policy.proportion.rounds(inst, self.total, rows, active)
        return dict(zip(self.leaves, deserved, strict=True)), dict(zip(self.leaves, real, strict=True))

    def req(self, job: Job) -> _Floats:
        """One pod's request, in Volcano's units (never changed in place: kept per job)."""
        req = self._req.get(job.name)
        if req is None:
            req = self._req[job.name] = np.asarray(job.request, float) * self.unit
        return req

    # -- the plug-ins ---------------------------------------------------------------------
    def less_equal(self, left: _Floats, right: _Floats) -> bool:
        return less_equal(left, right, self.policy.proportion.tolerance)

    def share(self, queue: str) -> float:
        return self._fact(queue, "share", lambda: share(self.allocated[queue], self.deserved[queue]))

    def _fact(self, queue: str, what: Any, find: Callable[[], _T]) -> _T:
        """``find()``, which reads ``queue``'s allocated or its jobs' evictions (``what``: which fact
        and what else it reads, fixed in the session), found again only once the queue's allocated
        changed: every change of it binds a new array, and every eviction of the queue's jobs (and
        its undoing) changes it; the plug-ins' tests and the victims of the queues no pod touched
        since are read once, not for every pod of every starving job."""
        allocated = self.allocated[queue]
        known = self._facts.get((queue, what))
        if known is None or known[0] is not allocated:
            known = self._facts[queue, what] = (allocated, find())
        return known[1]

    def queue_key(self, queue: str) -> tuple[float, float, str]:
        """``QueueOrderFn``: higher priority, lower share, then the name (Volcano's UID)."""
        return (-self.priority[queue], self.share(queue), queue)

    def victim_queue_key(self, queue: str) -> tuple[float, float, str]:
        """``VictimQueueOrderFn`` (the reverse of the queue order): lowest priority, highest share."""
        return (self.priority[queue], -self.share(queue), _reverse(queue))

    def job_key(self, job: Job) -> tuple[float, bool, float, float, str]:
        """``JobOrderFn``: priority, gang (not ready first), drf (lower dominant share of the
        session's total), then creation (submit) and UID (name)."""
        placed = len(self.placed.get(job.name, ()))
        dominant = 0.0  # nothing held yet (most jobs, in every action)
        if placed:
            held = self.req(job) * placed
            dominant = float(np.max(held / np.where(self.total > 0, self.total, 1.0), initial=0.0))
        return (-job.priority, self.ready(job), dominant, job.submit, job.name)

    def overused(self, queue: str) -> bool:
        return self._fact(queue, "overused", lambda: self.less_equal(self.deserved[queue], self.allocated[queue]))

    def queue_allocatable(self, queue: str, request: _Floats) -> bool:
        """``queueAllocatable``: ``allocated + request <= deserved`` where the request is positive."""
        return within(self.allocated[queue] + request, self.deserved[queue], request)

    def ready(self, job: Job) -> bool:
        return len(self.placed.get(job.name, ())) >= job.least

    def starving(self, job: Job) -> bool:
        """gang's ``JobStarving``: fewer than ``minAvailable`` pods placed or pipelined."""
        return len(self.placed.get(job.name, ())) + len(self.pipelined.get(job.name, ())) < job.least

    def waiting(self) -> list[Job]:
        """The pending jobs the actions may serve (``Inqueue``), not yet admitted in this session."""
        return [
            j
            for j in self.state.pending.values()
            if (self.inqueue or j.name in self.enqueued) and j.name not in self.placed
        ]

    def _mark(self, name: str, why: str) -> None:
        self.seq.setdefault(name, len(self.seq))
        self.why.setdefault(name, why)

    # -- enqueue --------------------------------------------------------------------------
    def enqueue(self) -> None:
        """``enqueue.Execute`` with ``proportion``'s ``JobEnqueueable``: per queue, in job order,
        a job enters when its gang's resources fit the queue's ``realCapability`` beside what
        the queue holds and has already let in (less its elastic pods, those above the minimum)."""
        inqueue = {q: np.zeros_like(self.unit) for q in self.leaves}
        elastic = {q: np.zeros_like(self.unit) for q in self.leaves}
        for run in self.state.running.values():
            elastic[run.job.queue] += self.req(run.job) * max(run.pods - run.job.least, 0)
        for job in sorted(self.state.pending.values(), key=self.job_key):
            q, need = job.queue, self.req(job) * job.least
            if within(need + self.allocated[q] + inqueue[q] - elastic[q], self.real[q], need):
                self.enqueued.add(job.name)
                inqueue[q] += need
        self.inqueue = False

    # -- allocate -------------------------------------------------------------------------
    def allocate(self) -> None:
        """``allocateResources``: pop the first queue; skip it if overused; pop its first job and
        place its pods (its gang, or one more once it is ready); commit if ready, else roll back;
        push the job back while pods remain, and the queue with its new share."""
        jobs: dict[str, list[tuple[Any, Job]]] = {}
        for job in self.waiting():
            jobs.setdefault(job.queue, []).append((self.job_key(job), job))
        for heap in jobs.values():
            heapq.heapify(heap)
        queues = [(self.queue_key(q), q) for q in jobs]
        heapq.heapify(queues)
        while queues:
            _, q = heapq.heappop(queues)
            if self.overused(q) or not jobs[q]:
                continue
            _, job = heapq.heappop(jobs[q])
            if self._allocate_job(job) and len(self.placed[job.name]) < job.pods:
                heapq.heappush(jobs[q], (self.job_key(job), job))
            heapq.heappush(queues, (self.queue_key(q), q))

    def _allocate_job(self, job: Job) -> bool:
        req, q = self.req(job), job.queue
        new: list[str] = []
        have = len(self.placed.get(job.name, ()))
        for _ in range(job.pods - have):
            if self.policy.allocatable and not self.queue_allocatable(q, req):
                continue
            node = next((n for n in self.nodes if self.less_equal(req, self.idle[n])), None)
            if node is None:
                break  # the job's pods are alike: no other pod fits either
            self.idle[node] = self.idle[node] - req
            self.allocated[q] = self.allocated[q] + req
            new.append(node)
            if have + len(new) >= job.least:
                break
        if have + len(new) >= job.least and new:
            self.placed.setdefault(job.name, []).extend(new)
            self._mark(job.name, f"allocate: queue {q} (share {self.share(q):.3g} of deserved)")
            return True
        for node in new:  # not ready: the statement is discarded
            self.idle[node] = self.idle[node] + req
            self.allocated[q] = self.allocated[q] - req
        return False

    # -- preempt and reclaim: statements of evictions and pipelined pods --------------------
    def _future_idle(self, node: str) -> _Floats:
        return self.idle[node] + self.releasing[node] - self.pipelined_room[node]

    def _evict(self, victim: str, by: str, why: str, ops: _Ops) -> None:
        run = self.state.running[victim]
        req, q = self.req(run.job), run.job.queue
        self.allocated[q] = self.allocated[q] - run.usage * self.unit
        for node, pods in self.on_nodes[victim].items():
            if node in self.releasing:
                self.releasing[node] = self.releasing[node] + req * pods
        self.evicted[victim] = (by, why)
        self.seq.setdefault(victim, len(self.seq))

        def undo() -> None:
            self.allocated[q] = self.allocated[q] + run.usage * self.unit
            for node, pods in self.on_nodes[victim].items():
                if node in self.releasing:
                    self.releasing[node] = self.releasing[node] - req * pods
            del self.evicted[victim]

        ops.append(undo)

    def _pipeline(self, job: Job, node: str, ops: _Ops) -> None:
        req = self.req(job)
        self.allocated[job.queue] = self.allocated[job.queue] + req
        self.pipelined_room[node] = self.pipelined_room[node] + req
        self.pipelined.setdefault(job.name, []).append(node)

        def undo() -> None:
            self.allocated[job.queue] = self.allocated[job.queue] - req
            self.pipelined_room[node] = self.pipelined_room[node] - req
            self.pipelined[job.name].pop()

        ops.append(undo)

    @staticmethod
    def _discard(ops: _Ops) -> None:
        for undo in reversed(ops):
            undo()
        ops.clear()

    def _on_node(self, victim: str, node: str) -> int:
        return self.on_nodes[victim].get(node, 0)

    def _victim(self, run: Running, node: str) -> bool:
        """A running job with a pod on ``node``, preemptable, not yet evicted (jobs bound in this
        session are ``Allocated``, not ``Running``: never victims)."""
        name = run.job.name
        return name not in self.evicted and bool(self._on_node(name, node)) and self.policy.preemptable.get(name, True)

    def _validate(self, job: Job, node: str, victims: list[Running]) -> bool:
        """``util.ValidateVictims``: the node's future idle room with the victims' holds the pod (no
        victim at all is valid: the pod may fit without)."""
        if not victims:  # most pods: adding zeros changes no comparison (-0.0 and 0.0 compare equal)
            return self.less_equal(self.req(job), self._future_idle(node))
        freed = sum((self.req(v.job) * self._on_node(v.job.name, node) for v in victims), np.zeros_like(self.unit))
        return self.less_equal(self.req(job), self._future_idle(node) + freed)

    def _for_jobs(
        self,
        jobs: dict[str, list[Job]],
        queues: list[str],
        place: Callable[[Job, _Ops], None],
        skip: Callable[[str], bool],
    ) -> None:
        """Each queue's starving jobs in job order (a queue ``skip`` refuses at its turn is passed):
        ``place`` pod after pod while the job starves; keep the job's statement if it is then
        pipelined (gang's ``JobPipelined``), else discard it.  A pod ``place`` could not place leaves
        the session as it found it (its evictions undone, in whole Volcano units: exactly), so the
        job's next pod would fail alike: the job's turn ends there; and so would a pod of another
        job of the same queue, request and priority (all ``place`` reads of a job) while nothing
        was placed or discarded since: that job is passed."""
        failed: dict[tuple[str, tuple[float, ...], float], int] = {}
        changes = 0
        for q in queues:
            if skip(q):
                continue
            for job in sorted(jobs.get(q, ()), key=self.job_key):
                alike = (job.queue, job.request, job.priority)
                if failed.get(alike) == changes:
                    continue
                ops: _Ops = []
                for _ in range(job.pods):
                    if not self.starving(job):
                        break
                    before = len(ops)
                    place(job, ops)
                    if len(ops) == before:
                        failed[alike] = changes
                        break
                    changes += 1
                if self.starving(job) and ops:
                    self._discard(ops)
                    changes += 1

    # -- preempt --------------------------------------------------------------------------
    def preempt(self) -> None:
        """``preempt.Execute``: per queue (queue order) each starving job (job order) takes, pod by
        pod, lower-priority preemptable pods of *its own* queue, on the first node where evicting
        them (lowest job priority first) lets it be allocatable and fit."""
        jobs: dict[str, list[Job]] = {}
        for job in self.waiting():
            if self.starving(job):
                jobs.setdefault(job.queue, []).append(job)
        self._for_jobs(jobs, sorted(jobs, key=self.queue_key), self._preempt_pod, lambda q: False)

    def _preempt_pod(self, job: Job, ops: _Ops) -> None:
        req, q = self.req(job), job.queue

        def fits(node: str) -> bool:
            return self.queue_allocatable(q, req) and self.less_equal(req, self._future_idle(node))

        for node in self.nodes:
            lower = self._fact(q, ("lower", job.priority, node), functools.partial(self._lower, job, node))
            if not self._validate(job, node, lower):
                continue
            here: _Ops = []
            for victim in sorted(lower, key=lambda run: self._reverse_job_key(run.job)):
                if fits(node):
                    break
                self._evict(victim.job.name, job.name, f"preempt: lower priority than {job.name} in queue {q}", here)
            if fits(node):
                self._pipeline(job, node, here)
                ops.extend(here)
                return
            self._discard(here)

    def _lower(self, job: Job, node: str) -> list[Running]:
        """``job``'s queue's victims on ``node`` of a lower priority, in the order they run."""
        return [
            run
            for run in self.runs_of.get(job.queue, ())
            if run.job.priority < job.priority and self._victim(run, node)
        ]

    # -- reclaim --------------------------------------------------------------------------
    def reclaim(self) -> None:
        """``reclaim.Execute``: per queue not overused (queue order) each starving job (job order)
        takes, pod by pod while the queue stays within deserved (``Preemptive``), pods of other,
        reclaimable queues that are above their deserved, evicted on one node until the pod fits."""
        jobs: dict[str, list[Job]] = {}
        for job in self.waiting():
            if self.starving(job):
                jobs.setdefault(job.queue, []).append(job)
        owners = {run.job.queue for run in self.state.running.values()} | set(jobs)
        # Volcano walks the node's tasks in map order (at random); here in the victims' order:
        # their queues' order (``VictimQueueOrderFn``, :meth:`_owners`) and, within a queue, the reverse
        # of the job order
        self.victim_order = {
            u: sorted(runs, key=lambda run: self._reverse_job_key(run.job)) for u, runs in self.runs_of.items()
        }
        self._for_jobs(jobs, sorted(owners, key=self.queue_key), self._reclaim_pod, self.overused)

    def _reclaim_pod(self, job: Job, ops: _Ops) -> None:
        req, q = self.req(job), job.queue
        if not self.queue_allocatable(q, req):
            return
        for node in self.nodes:
            owners = self._owners(q, node)
            if not owners:
                continue  # no reclaimee on the node
            victims = [run for _, of_queue in owners for run in of_queue]
            if not self._validate(job, node, victims):
                continue
            here: _Ops = []
            for victim in victims:
                if self.less_equal(req, self._future_idle(node)):
                    break
                why = f"reclaim: queue {victim.job.queue} above its deserved, for {job.name} of queue {q}"
                self._evict(victim.job.name, job.name, why, here)
            if self.less_equal(req, self._future_idle(node)):
                self._pipeline(job, node, here)
                ops.extend(here)
                return
            self._discard(here)

    def _owners(self, queue: str, node: str) -> list[tuple[str, list[Running]]]:
        """The reclaimable queues other than ``queue`` with a reclaimee on ``node``, in victim
        queue order, each with its victims there (:meth:`_above_deserved`).  Kept per node with
        the allocated each queue had: the next pod of the same queue (its own count changed, which
        neither its victims nor the other queues' order reads) reads the same list."""
        known = self._owner_lists.get(node)
        if known is None or any(self.allocated[u] is not seen for u, seen in known[0] if u != queue):
            known = self._owner_lists[node] = self._list_owners(node)
        return [(u, victims) for u, victims in known[1] if u != queue]

    def _list_owners(self, node: str) -> tuple[list[tuple[str, _Floats]], list[tuple[str, list[Running]]]]:
        """The reclaimable queues with their allocated, and those with a reclaimee on ``node`` with
        their victims there, in victim queue order."""
        seen = [(u, self.allocated[u]) for u in self.victim_order if self.policy.reclaimable.get(u, True)]
        owners = []
        for u, _ in seen:
            victims = self._fact(u, ("victims", node), functools.partial(self._above_deserved, u, node))
            if victims is not None:
                owners.append((u, victims))
        return seen, sorted(owners, key=lambda owner: self.victim_queue_key(owner[0]))

    def _above_deserved(self, queue: str, node: str) -> list[Running] | None:
        """``proportion``'s ``ReclaimableFn`` over ``queue``'s reclaimees on ``node`` in victim
        order (``None``: it has none there): a victim while the queue's allocated is not within
        deserved, counted down victim by victim (the test comes before the subtraction).  Once
        within, no later task of the queue is a victim (nothing else lowers its count): the walk
        stops there."""
        if not any(self._victim(run, node) for run in self.victim_order[queue]):
            return None
        allocated = self.allocated[queue]  # counted down into new arrays: the session's is not changed
        within = self.less_equal(allocated, self.deserved[queue])
        victims: list[Running] = []
        for run in self.victim_order[queue]:
            if within:
                break
            if self._victim(run, node):
                allocated = allocated - run.usage * self.unit
                victims.append(run)
                within = self.less_equal(allocated, self.deserved[queue])
        return victims

    def _reverse_job_key(self, job: Job) -> tuple[float, float, str]:
        return (job.priority, -job.submit, _reverse(job.name))

    # -- the answer -----------------------------------------------------------------------
    def decisions(self) -> list[Decision]:
        """Admissions (bound pods) and evictions, in the order they were taken."""
        out: list[tuple[int, Decision]] = []
        nodes_known = self.state.nodes is not None
        for name, nodes in self.placed.items():
            admit = Admit(name, len(nodes), tuple(nodes) if nodes_known else (), self.why[name])
            out.append((self.seq[name], admit))
        for name, (by, why) in self.evicted.items():
            out.append((self.seq[name], Preempt(name, by, why)))
        return [d for _, d in sorted(out, key=lambda pair: pair[0])]


@functools.lru_cache(maxsize=1 << 16)  # the same running jobs are sorted as victims at every pod
def _reverse(name: str) -> str:
    """A key that sorts names in reverse (victims: the reverse of ``JobOrderFn``'s UID order)."""
    return "".join(chr(0x10FFFE - ord(c)) for c in name) + chr(0x10FFFF)  # a prefix sorts after


__all__ = ["ACTIONS", "DEFAULT_ACTIONS", "Proportion", "Session", "VolcanoCycle", "less_equal", "share", "within"]
