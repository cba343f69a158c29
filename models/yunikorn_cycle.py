"""Apache YuniKorn online: queues sorted by fairness (and priority), applications first in first
out (and by priority) within a leaf, and preemption for an ask whose queue is below its guarantee
(:meth:`YuniKornFair.online`).

Source read: apache/yunikorn-core at commit be3bb487298956dd70906fca15e577bbc12d23cb (2026-07-02),
Apache-2.0:

* ``pkg/scheduler/objects/queue.go``, ``Queue.TryAllocate`` / ``sortQueues``: the leaves with pending
  resources in the order the fair queue sort gives (the model's own :meth:`YuniKornFair.order`);
  ``getHeadroom``: an ask fits when it fits ``max - allocated`` of every queue on its path (the root's
  max is the partition's total).
* ``pkg/scheduler/objects/sorters.go``, ``sortApplications``: ``fifo`` (the default
  ``application.sort.policy``) orders applications by submission time; with ``application.sort.priority``
  enabled (the default) the higher priority goes first.
* ``pkg/scheduler/objects/application.go``, ``tryAllocate``: an ask that does not fit the headroom,
  or fits it but no node, tries preemption (``tryPreemption``, ``nodesTried`` false or true); the
  partition's ``preemption.enabled`` (default true).
* ``pkg/scheduler/objects/preemption.go``: ``CheckPreconditions`` (the ask has not triggered
  preemption before, waited ``preemption.delay`` -- default 30 s, ``configs.DefaultPreemptionDelay``
  -- and was not checked in the last ``preemptAttemptFrequency``, 15 s); ``TryPreemption``:
  ``checkPreemptionQueueGuarantees``, ``initWorkingState`` (nodes at least as large as the ask; the
  victims on each sorted by ``sortVictimsForPreemption``: newest first), ``tryNodes`` with
  ``calculateVictimsByNode`` (two passes, a victim kept only if its queue stays over its guarantee,
  ``isVictimQueueOverGuaranteed``, and the ask's queue can take it within its remaining guarantee),
  ``checkPreemptionPredicates`` (no resource-manager callback: the check with the fewest victims
  before the ask fits, then the lowest node ID), ``calculateAdditionalVictims`` (victims anywhere,
  newest first, while the ask's queue's remaining guarantee changes), and the final cut (victims on
  the chosen node unless the ask already fits there, until the ask is covered; a shortfall
  preempts nothing); the ask then reserves the node; ``QueuePreemptionSnapshot``
  (``GetRemainingGuaranteedResource``, ``GetPreemptableResource``, ``AddAllocation``, ``RemoveAllocation``).
* ``queue.go``, ``FindEligiblePreemptionVictims``, ``findPreemptionFenceRoot`` (up from the ask's
  queue to the first queue with ``preemption.policy: fence``, the root, or whose max the ask would
  exceed), ``findEligiblePreemptionVictims`` (leaves other than the ask's, not ``disabled``, not at
  or within their remaining guarantee; their allocations sharing a resource type with the ask and
  of priority at most the ask's, queue priority offsets added up the ask's path and subtracted
  down another).
* ``queue.go``, ``mergeProperties`` and ``filterParentProperty``: a property a queue does not set is
  its parent's, except that ``preemption.policy`` passes down only as ``disabled`` (priority offsets
  are not inherited); ``convertDelay``: a delay must be positive.
* ``pkg/common/resources/resources.go``: the map arithmetic (a resource type absent from a map is
  not a zero): ``SubOnlyExisting``, ``ComponentWiseMin``, ``ComponentWiseMinOnlyExisting``,
  ``MergeIfNotPresent``, ``StrictlyGreaterThanOrEquals``, ``FitIn``, ``FitInActual``,
  ``StrictlyGreaterThanOnlyExisting``; kept here on ``dict`` maps, step for step.

**Here.** A job is an application with one ask: its pods (each ``request``) together; a running job
is one allocation, created at its ``start``.  Victims chosen in a cycle keep running until the
simulator stops them (YuniKorn asks the shim to); the ask reserves its node and is admitted on it
first in a later cycle (the reservation is the policy's memory), not in the cycle that preempted.
A leaf's priority in the queue sort is its ``priority`` (the offset) plus its waiting jobs' highest.

Not modelled: the ``fence`` *priority* policy, ``allowPreemptSelf`` / ``allowPreemptOther`` (all
allowed), originator tasks, required nodes, placeholders, the per-queue budget of attempts, node
reservations held against other asks, the ``fair`` application sort, preemption for an ask of several
pods on nodes (such an ask waits).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairalloc.core.errors import CaseError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of
from fairalloc.core.tolerances import FIT
from fairalloc.engines.online import Admit, ClusterState, Decision, Job, Preempt, Running, check_settings
from fairalloc.models.yarn_cycle import demand_instance, place

#: ``configs.DefaultPreemptionDelay`` (seconds)
PREEMPTION_DELAY = 30.0
#: ``preemptAttemptFrequency`` (seconds)
ATTEMPT_FREQUENCY = 15.0
QUEUE_SETTINGS: dict[str, Any] = {
    "preemption.policy": "default",  # default | fence | disabled
    "preemption.delay": PREEMPTION_DELAY,
    "application.sort.policy": "fifo",
    "application.sort.priority": "enabled",
}
SETTINGS: dict[str, Any] = {"preemption.enabled": True, "queues": {}}
POLICIES = ("default", "fence", "disabled")

Res = dict[str, float]


# -- resources.go on dict maps -----------------------------------------------------------------
def sub_only_existing(base: Res | None, delta: Res | None) -> Res | None:
    if base is None or delta is None:
        return None if base is None else dict(base)
    return {k: v - delta.get(k, 0.0) for k, v in base.items()}


def min_wise(left: Res | None, right: Res | None) -> Res | None:
    """``ComponentWiseMin``: a type in one map only keeps its value."""
    if left is None:
        return None if right is None else dict(right)
    if right is None:
        return dict(left)
    out = {**right, **left}
    for k in left.keys() & right.keys():
        out[k] = min(left[k], right[k])
    return out


def min_only_existing(left: Res | None, right: Res | None) -> Res | None:
    if left is None:
        return None
    return dict(left) if right is None else {k: min(v, right.get(k, v)) for k, v in left.items()}


def merge_if_not_present(left: Res | None, right: Res | None) -> Res | None:
    if left is None:
        return None if right is None else dict(right)
    return dict(left) if right is None else {**right, **left}


def at_least_zero(r: Res | None) -> bool:
    """``StrictlyGreaterThanOrEquals(r, Zero)``."""
    return all(v >= -FIT for v in (r or {}).values())


def fit_in(larger: Res | None, smaller: Res, actual: bool = False) -> bool:
    """``FitIn`` (``actual``: ``FitInActual``, types absent from ``larger`` skipped, negatives kept)."""
    larger = larger or {}
    for k, v in smaller.items():
        if actual and k not in larger:
            continue
        have = larger.get(k, 0.0)
        if v > (have if actual else max(0.0, have)) + FIT:
            return False
    return True


def greater_only_existing(r: Res, smaller: Res) -> bool:
    """``StrictlyGreaterThanOnlyExisting``: larger in some type of ``r``, smaller in none."""
    bigger = False
    for k, v in r.items():
        if v < smaller.get(k, 0.0) - FIT:
            return False
        bigger |= v > smaller.get(k, 0.0) + FIT
    return bigger


def add_to(r: Res, delta: Res, sign: float = 1.0) -> None:
    for k, v in delta.items():
        r[k] = r.get(k, 0.0) + sign * v


def as_res(amounts: np.ndarray, names: tuple[str, ...], keep: Callable[[float], bool] = lambda v: v != 0) -> Res:
    return {n: float(v) for n, v in zip(names, amounts, strict=True) if keep(float(v))}


def queue_property(rules: Mapping[str, Mapping[str, Any]], q: Queues, node: str | None, key: str) -> Any:
    """A queue's property: its own, else its parent's (``mergeProperties``) as
    ``filterParentProperty`` passes it down (``preemption.policy`` only when ``disabled``), else the
    default."""
    if node is None:
        return QUEUE_SETTINGS[key]
    if key in rules.get(node, {}):
        return rules[node][key]
    up = queue_property(rules, q, q.parent[node], key)
    return "default" if key == "preemption.policy" and up != "disabled" else up


# -- the queue snapshots -----------------------------------------------------------------------
@dataclass
class Snapshot:
    """``QueuePreemptionSnapshot``."""

    path: str
    parent: Snapshot | None
    leaf: bool
    allocated: Res
    preempting: Res
    max: Res | None
    guaranteed: Res | None
    victims: list[Running] = field(default_factory=list)
    ask_queue: Snapshot | None = None

    def remaining(self) -> Res | None:
        """``GetRemainingGuaranteedResource``."""
        parent = None if self.parent is None else self.parent.remaining()
        if not parent and not self.guaranteed:
            return None
        used = sub_only_existing(self.allocated, self.preempting)
        left = sub_only_existing(self.guaranteed, used)
        ask = self.ask_queue
        if ask is not None:
            if ask.path == self.path and left:
                return merge_if_not_present(left, parent)
            ask_left = sub_only_existing(ask.guaranteed, sub_only_existing(ask.allocated, ask.preempting))
            if left and ask.path.startswith(self.path) and ask_left:
                return None
        return min_wise(left, parent)

    def preemptable(self) -> Res | None:
        """``GetPreemptableResource``."""
        if not self.allocated:
            return None
        parent = None if self.parent is None else self.parent.preemptable()
        actual = sub_only_existing(sub_only_existing(self.allocated, self.preempting), self.guaranteed) or {}
        over = {k: v for k, v in actual.items() if v > 0}
        return over if not over else min_only_existing(over, parent)

    def add(self, r: Res, sign: float = 1.0) -> None:
        """``AddAllocation`` (``sign`` -1: ``RemoveAllocation``), up to the root."""
        node: Snapshot | None = self
        while node is not None:
            add_to(node.allocated, r, sign)
            node = node.parent


def copy_snapshots(snaps: Mapping[str, Snapshot]) -> dict[str, Snapshot]:
    """``duplicateQueueSnapshots``: fresh usage, the same victims."""
    out: dict[str, Snapshot] = {}

    def dup(s: Snapshot) -> Snapshot:
        if s.path not in out:
            up = None if s.parent is None else dup(s.parent)
            out[s.path] = Snapshot(
                s.path, up, s.leaf, dict(s.allocated), dict(s.preempting), s.max, s.guaranteed, s.victims
            )
        return out[s.path]

    for s in snaps.values():
        dup(s)
    for path, s in snaps.items():
        out[path].ask_queue = None if s.ask_queue is None else out[s.ask_queue.path]
    return out


# -- the tree as YuniKorn holds it -------------------------------------------------------------
@dataclass
class Tree:
    """Each queue's path, rules and usage at the cycle; ``preempting``: victims chosen and not gone."""

    state: ClusterState
    q: Queues
    rules: Mapping[str, Mapping[str, Any]]
    preempting: set[str] = field(default_factory=set)

    @property
    def names(self) -> tuple[str, ...]:
        return self.state.resources

    def path(self, node: str | None) -> str:
        return "root" if node is None else f"{self.path(self.q.parent[node])}.{node}"

    @functools.cached_property
    def leaf_usage(self) -> dict[str, np.ndarray]:
        return self.state.usage()

    @functools.cached_property
    def running_in(self) -> dict[str, list[Running]]:
        """Each leaf's running jobs, in admission order."""
        out: dict[str, list[Running]] = {}
        for run in self.state.running.values():
            out.setdefault(run.job.queue, []).append(run)
        return out

    def usage(self, node: str | None) -> np.ndarray:
        leaves = self.q.leaves(node) if node is None or self.q.is_group(node) else [node]
        return np.sum([self.leaf_usage[u] for u in leaves], axis=0) if leaves else np.zeros(len(self.names))

    def max(self, node: str | None) -> Res | None:
        if node is None:  # the partition's total (partition.go)
            return as_res(self.state.capacity, self.names, lambda v: True)
        return as_res(np.asarray(self.q.limit[node], float), self.names, math.isfinite) or None

    def guaranteed(self, node: str | None) -> Res | None:
        return (
            None
            if node is None
            else as_res(np.asarray(self.q.guarantee[node], float), self.names, lambda v: not math.isnan(v)) or None
        )

    def rule(self, node: str | None, key: str) -> Any:
        return queue_property(self.rules, self.q, node, key)

    def snapshot(self, cache: dict[str, Snapshot], node: str | None, ask_path: str) -> Snapshot:
        """``createPreemptionSnapshot``."""
        path = self.path(node)
        if path not in cache:
            up = None if node is None else self.snapshot(cache, self.q.parent[node], ask_path)
            gone = [
                r
                for r in self.state.running.values()
                if r.job.name in self.preempting and self._under(r.job.queue, node)
            ]
            held = sum((r.usage for r in gone), np.zeros(len(self.names)))
            cache[path] = Snapshot(
                path,
                up,
                node is not None and not self.q.is_group(node),
                as_res(self.usage(node), self.names),
                as_res(held, self.names),
                self.max(node),
                self.guaranteed(node),
                ask_queue=cache.get(ask_path),
            )
        return cache[path]

    def _under(self, leaf: str, node: str | None) -> bool:
        return node is None or leaf == node or node in self.q.path(leaf)

    def headroom_fits(self, job: Job) -> bool:
        """``getHeadroom``: the ask within ``max - allocated`` of every queue on its path."""
        ask = as_res(job.total(), self.names)
        for node in [None, *self.q.path(job.queue), job.queue]:
            cap = self.max(node)
            if cap is not None and not fit_in(
                sub_only_existing(cap, as_res(self.usage(node), self.names)), ask, actual=True
            ):
                return False
        return True


# -- finding victims ---------------------------------------------------------------------------
def fence_root(tree: Tree, job: Job, prio: dict[str, float]) -> str | None:
    """``findPreemptionFenceRoot``: up from the ask's queue, each queue's priority recorded; the
    first with ``preemption.policy: fence``, whose max the ask would pass, or the root."""
    ask = as_res(job.total(), tree.names)
    current, node = job.priority, job.queue  # type: float, str | None
    while True:
        current += 0.0 if node is None else tree.q.priority[node]
        prio[tree.path(node)] = current
        cap = tree.max(node)
        projected = as_res(tree.usage(node), tree.names)
        add_to(projected, ask)
        over = cap is not None and not all(cap[k] >= projected.get(k, 0.0) - FIT for k in cap)
        if node is None or tree.rule(node, "preemption.policy") == "fence" or over:
            return node
        node = tree.q.parent[node]


def eligible(tree: Tree, job: Job) -> dict[str, Snapshot]:
    """``FindEligiblePreemptionVictims``: the snapshots of the ask's path and of the leaves with
    victims (and their paths), pruned as ``prunePreemptionSnapshots`` does."""
    prio: dict[str, float] = {}
    fence = fence_root(tree, job, prio)
    ask_path = tree.path(job.queue)
    snaps: dict[str, Snapshot] = {}
    tree.snapshot(snaps, job.queue, ask_path)
    node: Snapshot | None = snaps[ask_path]
    while node is not None and node.parent is not None:
        node.ask_queue = snaps[ask_path]
        node = node.parent
    _walk(tree, snaps, fence, job, prio[tree.path(fence)], ask_path, prio)
    keep = {s.path for s in _chain(snaps[ask_path])}
    for s in list(snaps.values()):
        if s.leaf and s.victims:
            keep |= {c.path for c in _chain(s)}
    return {p: s for p, s in snaps.items() if p in keep}


def _chain(s: Snapshot | None) -> list[Snapshot]:
    out = []
    while s is not None:
        out.append(s)
        s = s.parent
    return out


def _walk(
    tree: Tree,
    snaps: dict[str, Snapshot],
    node: str | None,
    job: Job,
    priority: float,
    ask_path: str,
    prio: dict[str, float],
) -> None:
    """``findEligiblePreemptionVictims`` below ``node`` (default priority policy)."""
    if tree.path(node) == ask_path:
        return
    if node is not None and not tree.q.is_group(node):
        if tree.rule(node, "preemption.policy") == "disabled":
            return
        snap = tree.snapshot(snaps, node, ask_path)
        left = snap.remaining()
        if left is not None and at_least_zero(left):
            del snaps[snap.path]
            return
        ask = as_res(job.total(), tree.names)
        for run in tree.running_in.get(node, []):
            if run.job.name not in tree.preempting and run.job.priority <= priority:
                if ask.keys() & {r for r, v in zip(tree.names, run.job.request, strict=True) if v}:
                    snap.victims.append(run)
        if not snap.victims:
            del snaps[snap.path]
        return
    for child in tree.q.children(node):  # on the ask's path: its own priority; elsewhere less the offset
        below = prio.get(tree.path(child), priority - tree.q.priority[child])
        _walk(tree, snaps, child, job, below, ask_path, prio)


# -- the preemptor -----------------------------------------------------------------------------
@dataclass
class Preemptor:
    """``Preemptor`` for one ask."""

    tree: Tree
    job: Job
    nodes_tried: bool
    snaps: dict[str, Snapshot] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)  # victim -> its queue's path

    @functools.cached_property
    def ask(self) -> Res:
        return as_res(self.job.total(), self.tree.names)

    @property
    def ask_path(self) -> str:
        return self.tree.path(self.job.queue)

    def guarantees_allow(self) -> bool:
        """``checkPreemptionQueueGuarantees``."""
        queues = copy_snapshots(self.snaps)
        mine = queues[self.ask_path]
        old = mine.remaining()
        if old is not None and fit_in(old, self.ask, actual=True):
            return True
        mine.add(self.ask)
        for s in queues.values():
            for run in s.victims:
                s.add(self._res(run), -1.0)
                left = mine.remaining()
                if left is not None and _under_guaranteed(self.ask, left):
                    return True
        return False

    def _res(self, run: Running) -> Res:
        return self.held[run.job.name]

    @functools.cached_property
    def held(self) -> dict[str, Res]:
        """Each candidate's allocation as a map."""
        return {r.job.name: as_res(r.usage, self.tree.names) for s in self.snaps.values() for r in s.victims}

    def rooms(self) -> dict[str, tuple[Res, list[Running]]]:
        """``initWorkingState``: per usable node, its free room and its victims, newest first."""
        state = self.tree.state
        if state.nodes is None:
            total = {"": state.capacity}
            free = {"": state.free()}
        else:
            total, free = dict(state.nodes), state.free_on_nodes()
        out: dict[str, tuple[Res, list[Running]]] = {}
        for node in sorted(total):
            if not fit_in(as_res(total[node], self.tree.names, lambda v: True), self.ask):
                continue
            here = [r for s in self.snaps.values() for r in s.victims if not node or node in r.nodes]
            here.sort(key=lambda r: -r.start)  # stable: newest first
            out[node] = (as_res(free[node], self.tree.names, lambda v: True), here)
        return out

    def _keeps(self, queues: dict[str, Snapshot], run: Running) -> bool:
        """A victim's queue stays over its guarantee without it (``RemoveAllocation`` done, and undone
        when not)."""
        snap = queues[self.owner[run.job.name]]
        left = snap.remaining()
        snap.add(self._res(run), -1.0)
        if at_least_zero(snap.preemptable()) and (left is None or _over_guaranteed(self.ask, left)):
            return True
        snap.add(self._res(run))
        return False

    def _take(self, queues: dict[str, Snapshot], run: Running) -> tuple[str, Res | None]:
        """Move a victim from its queue to the ask's: ``taken`` (with the ask queue's remaining
        guarantee before), ``kept`` (its queue cannot spare it), or ``full`` (the ask's queue cannot
        take it: the search stops)."""
        if not self._keeps(queues, run):
            return "kept", None
        mine = queues[self.ask_path]
        left = mine.remaining()
        if not (left is not None and fit_in(left, self._res(run), actual=True)):
            queues[self.owner[run.job.name]].add(self._res(run))
            return "full", None
        mine.add(self._res(run))
        return "taken", left

    def _give_back(self, queues: dict[str, Snapshot], run: Running) -> None:
        queues[self.ask_path].add(self._res(run), -1.0)
        queues[self.owner[run.job.name]].add(self._res(run))

    def by_node(self, room: Res, victims: list[Running]) -> tuple[int, list[Running]] | None:
        """``calculateVictimsByNode``: (index of the victim after which the ask fits, victims)."""
        if fit_in(room, self.ask):
            return -1, []
        queues = copy_snapshots(self.snaps)
        head, tail, avail = [], [], dict(room)
        for run in victims:
            took, _ = self._take(queues, run)
            if took == "full":
                break
            if took == "kept":
                continue
            before = _shortfall(self.ask, avail)
            after_ = dict(avail)
            add_to(after_, self._res(run))
            if _same(before, _shortfall(self.ask, after_)):  # it does not help on this node: last resort
                self._give_back(queues, run)
                tail.append(run)
            else:
                avail = after_
                head.append(run)
        return self._second_pass(room, head + tail)

    def _second_pass(self, room: Res, ordered: list[Running]) -> tuple[int, list[Running]] | None:
        if not ordered:
            return None
        queues, avail = copy_snapshots(self.snaps), dict(room)
        results: list[Running] = []
        index = -1
        for run in ordered:
            if self._keeps(queues, run):
                add_to(avail, self._res(run))
                if index < 0 and fit_in(avail, self.ask):
                    index = len(results)
                results.append(run)
        return None if index < 0 else (index, results)

    def additional(self, chosen: list[Running]) -> tuple[list[Running], bool]:
        """``calculateAdditionalVictims``."""
        queues = copy_snapshots(self.snaps)
        mine = queues[self.ask_path]
        seen = {r.job.name for r in chosen}
        for run in chosen:
            queues[self.owner[run.job.name]].add(self._res(run), -1.0)
        rest = [r for s in self.snaps.values() for r in s.victims if r.job.name not in seen]
        rest.sort(key=lambda r: -r.start)
        found: list[Running] = []
        for run in rest:
            took, left = self._take(queues, run)
            if took == "full":
                break
            if took == "kept":
                continue
            if _same(left, mine.remaining()):  # the ask's queue is no nearer its guarantee
                self._give_back(queues, run)
            else:
                found.append(run)
        if not found:
            return [], True
        final = mine.remaining()
        return found, final is not None and _under_guaranteed(self.ask, final)

    def run(self) -> tuple[str, list[Running]] | None:
        """``TryPreemption``: the node and the victims, or ``None``."""
        self.snaps = eligible(self.tree, self.job)
        self.owner = {r.job.name: s.path for s in self.snaps.values() for r in s.victims}
        if self.ask_path not in self.snaps or not self.guarantees_allow():
            return None
        rooms = self.rooms()
        checks = []
        for node, (room, victims) in rooms.items():
            found = self.by_node(room, victims)
            if found is not None and (found[1] or not self.nodes_tried):
                checks.append((found[0], node, found[1]))
        if not checks:
            return None
        _, node, victims = min(checks, key=lambda c: (c[0], c[1]))  # no shim: the first after sorting
        extra, ok = self.additional(victims)
        if not ok or not victims + extra:
            return None
        return self._final(node, rooms[node][0], victims + extra)

    def _final(self, node: str, room: Res, victims: list[Running]) -> tuple[str, list[Running]] | None:
        fits, total, final = fit_in(room, self.ask), dict[str, float](), list[Running]()
        for run in victims:
            if not fits and node and node not in run.nodes:
                continue
            if greater_only_existing(self.ask, total):
                final.append(run)
            add_to(total, self._res(run))
        if greater_only_existing(self.ask, total):
            return None  # PreemptionShortfall
        return node, final


def _shortfall(ask: Res, avail: Res) -> Res:
    """``SubEliminateNegative(ask, avail)`` without the zeros."""
    return {k: v - avail.get(k, 0.0) for k, v in ask.items() if v - avail.get(k, 0.0) > FIT}


def _same(a: Res | None, b: Res | None) -> bool:
    """``EqualsOrEmpty``."""
    za, zb = not any(abs(v) > FIT for v in (a or {}).values()), not any(abs(v) > FIT for v in (b or {}).values())
    if za and zb:
        return True
    a, b = a or {}, b or {}
    return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= FIT for k in a)


def _under_guaranteed(ask: Res, left: Res) -> bool:
    """``isAskQueueUnderGuaranteed``."""
    return all(left[k] >= -FIT for k in ask if k in left)


def _over_guaranteed(ask: Res, left: Res) -> bool:
    """``isVictimQueueOverGuaranteed``."""
    return any(left[k] < -FIT for k in ask if k in left)


# -- the cycle ---------------------------------------------------------------------------------
@dataclass
class Memory:
    """What the scheduler remembers of asks across cycles."""

    reserved: dict[str, str] = field(default_factory=dict)  # ask -> node it reserved after preempting
    triggered: set[str] = field(default_factory=set)  # ``HasTriggeredPreemption``
    checked: dict[str, float] = field(default_factory=dict)  # ``preemptCheckTime``
    #: ask -> what the preemptor read when it last found nothing (:func:`_preemptor_input`)
    failed: dict[str, tuple[object, ...]] = field(default_factory=dict)
    #: the last queue sort and its input
    sorted: tuple[tuple[object, ...], list[str]] | None = None


class YuniKornCycle:
    """YuniKorn's scheduling cycle (:class:`~fairalloc.engines.online.OnlinePolicy`)."""

    def __init__(
        self, settings: Mapping[str, Any], order: Callable[[Instance], list[str]], priority_first: bool
    ) -> None:
        check_settings(settings, SETTINGS, "settings")
        self.enabled = settings.get("preemption.enabled", True)
        if not isinstance(self.enabled, bool):
            raise CaseError(f"settings.preemption.enabled: expected true or false (got {self.enabled!r})")
        self.rules = _queue_rules(settings.get("queues", {}))
        self.order, self.priority_first = order, priority_first
        self.memory = Memory()

    def decide(self, state: ClusterState) -> list[Decision]:
        q = queues_of(state.case)
        for name in self.rules:
            check_settings({name: 0}, dict.fromkeys([*q.groups, *q.leaf_names]), "settings.queues")
        failed = self.memory.failed  # of the jobs still waiting only: memory bounded by the jobs alive
        self.memory.failed = {name: seen for name, seen in failed.items() if name in state.pending}
        decisions: list[Decision] = self._reserved(state)
        state = state.after(decisions)
        tree = Tree(state, q, self.rules)
        skip: set[str] = set()
        while (step := self._step(tree, skip)) is not None:
            decisions += step
            admitted: list[Decision] = [d for d in step if isinstance(d, Admit)]
            tree = Tree(tree.state.after(admitted), q, self.rules, tree.preempting)
        return decisions

    def _reserved(self, state: ClusterState) -> list[Decision]:
        """``tryReservedAllocate``: an ask that preempted runs first on the node it reserved."""
        out: list[Decision] = []
        for name, node in list(self.memory.reserved.items()):
            job = state.pending.get(name)
            if job is None:
                del self.memory.reserved[name]
                continue
            room = None if state.nodes is None else {node: state.free_on_nodes()[node]}
            admit = place(job, room, state.after(out).free())
            if (
                admit is not None
                and admit.pods is None
                and Tree(state.after(out), queues_of(state.case), self.rules).headroom_fits(job)
            ):
                out.append(Admit(name, None, admit.nodes, "tryReservedAllocate: on the node it reserved by preempting"))
                del self.memory.reserved[name]
        return out

    def _step(self, tree: Tree, skip: set[str]) -> list[Decision] | None:
        """One allocation (or one preemption) from the first leaf in the queue sort that has one."""
        state = tree.state
        waiting = waiting_by_leaf(state)
        room = state.free_on_nodes() if state.nodes is not None else None
        free = state.free()  # read-only below: one copy for the whole step
        for leaf in self._queue_order(state, waiting):
            for job in self._apps(state, leaf, waiting.get(leaf, [])):
                if job.name in skip:
                    continue
                skip.add(job.name)
                admit = place(job, room, free)
                headroom = tree.headroom_fits(job)
                if admit is not None and admit.pods is None and headroom:
                    return [Admit(job.name, None, admit.nodes, "TryAllocate: first in the queue sort that fits")]
                if self._may_preempt(tree, job):
                    found = self._try_preemption(tree, job, headroom)
                    if found is not None:
                        return self._preempted(tree, job, *found)
        return None

    def _queue_order(self, state: ClusterState, waiting: Mapping[str, list[Job]]) -> list[str]:
        """``sortQueues``; kept for the next step while its input is the same (the cycle after one
        that admitted sorts the very state that cycle's last step sorted)."""
        given = sort_input(state, waiting)
        key = (given.key(), state.case)
        if self.memory.sorted is None or self.memory.sorted[0] != key:
            self.memory.sorted = (key, self.order(_sort_instance(state, given)))
        return self.memory.sorted[1]

    def _try_preemption(self, tree: Tree, job: Job, headroom: bool) -> tuple[str, list[Running]] | None:
        """``TryPreemption``, unless it found nothing for this ask on the same input before (the
        preemptor reads only the running jobs, the victims chosen and the ask: the same input is the
        same nothing, and waiting asks retried every few seconds were most of a busy cycle)."""
        seen = _preemptor_input(tree, headroom)
        if self.memory.failed.get(job.name) == seen:
            return None
        found = Preemptor(tree, job, nodes_tried=headroom).run()
        if found is None:
            self.memory.failed[job.name] = seen
        else:
            self.memory.failed.pop(job.name, None)
        return found

    def _apps(self, state: ClusterState, leaf: str, jobs: list[Job]) -> list[Job]:
        """``sortApplications`` (``fifo``) of the leaf's waiting ``jobs``: entry time, the higher
        priority first when enabled."""
        first = queue_property(self.rules, queues_of(state.case), leaf, "application.sort.priority") == "enabled"
        return sorted(jobs, key=lambda j: (-j.priority if first else 0.0, state.since.get(j.name, j.submit)))

    def _may_preempt(self, tree: Tree, job: Job) -> bool:
        """``CheckPreconditions`` (and the partition's switch); a check is recorded."""
        state, mem = tree.state, self.memory
        if not self.enabled or job.name in mem.triggered or (state.nodes is not None and job.pods > 1):
            return False
        delay = float(tree.rule(job.queue, "preemption.delay"))
        if state.now < state.since.get(job.name, job.submit) + delay:
            return False
        if state.now < mem.checked.get(job.name, -math.inf) + ATTEMPT_FREQUENCY:
            return False
        mem.checked[job.name] = state.now
        return True

    def _preempted(self, tree: Tree, job: Job, node: str, victims: list[Running]) -> list[Decision]:
        self.memory.triggered.add(job.name)
        self.memory.reserved[job.name] = node
        tree.preempting |= {r.job.name for r in victims}
        why = "TryPreemption: its queue below its guarantee, the victims' above theirs"
        return [Preempt(r.job.name, job.name, why) for r in victims]

    def wake(self, state: ClusterState) -> float | None:
        """When a waiting ask's preemption delay (or its next attempt) comes due."""
        if not self.enabled:
            return None
        times = []
        for job in state.pending.values():
            if job.name in self.memory.triggered:
                continue
            delay = queue_property(self.rules, queues_of(state.case), job.queue, "preemption.delay")
            due = state.since.get(job.name, job.submit) + float(delay)
            times.append(max(due, self.memory.checked.get(job.name, -math.inf) + ATTEMPT_FREQUENCY))
        return min((t for t in times if t > state.now), default=None)


def waiting_by_leaf(state: ClusterState) -> dict[str, list[Job]]:
    """Each leaf's waiting jobs in the order they entered it (``state.waiting`` for all leaves in
    one pass)."""
    out: dict[str, list[Job]] = {}
    for job in state.pending.values():
        out.setdefault(job.queue, []).append(job)
    return out


def _preemptor_input(tree: Tree, headroom: bool) -> tuple[object, ...]:
    """What :class:`Preemptor` reads besides its ask and the case: the running jobs (in admission
    order, by value: a job readmitted is another entry), the victims already chosen, and whether
    the headroom check passed (``nodes_tried``)."""
    return tuple(tree.state.running.values()), frozenset(tree.preempting), headroom


@dataclass(frozen=True)
class SortInput:
    """What the queue sort reads of a state: each leaf's usage (running jobs), request (usage and
    its waiting jobs) and the highest priority of its waiting jobs (``Application.askMaxPriority``)."""

    usage: dict[str, np.ndarray]
    rows: dict[str, np.ndarray]
    asks: dict[str, float]

    def key(self) -> tuple[object, ...]:
        return b"".join(a.tobytes() + self.rows[u].tobytes() for u, a in self.usage.items()), tuple(self.asks.items())


def sort_input(state: ClusterState, waiting: Mapping[str, list[Job]]) -> SortInput:
    """The sort's input, ``waiting`` being each leaf's waiting jobs."""
    usage = state.usage()
    rows = {u: usage[u] + sum((j.total() for j in waiting.get(u, [])), np.zeros(len(state.resources))) for u in usage}
    asks = {u: max(j.priority for j in jobs) for u, jobs in waiting.items() if jobs}
    return SortInput(usage, rows, asks)


def _sort_instance(state: ClusterState, given: SortInput) -> Instance:
    """The queue case as the queue sort reads it: each leaf's usage, request and current priority,
    its ``priority.offset`` plus its waiting jobs' highest priority (``Queue.recalculatePriority``,
    ``priorityValueByPolicy``)."""
    q = queues_of(state.case)
    priority = dict(q.priority)
    for leaf in q.leaf_names:
        if leaf in given.asks:
            priority[leaf] = q.priority[leaf] + given.asks[leaf]
    # the tree as it is with the leaves' usage and priorities replaced (the sort only reads them:
    # Queues.with_usage would check and copy every node's fields again, at every step)
    sorted_q = dataclasses.replace(q, usage={**q.usage, **given.usage}, priority=priority)
    return demand_instance(state, given.rows, sorted_q)


def _queue_rules(per: object) -> dict[str, dict[str, Any]]:
    if not isinstance(per, Mapping) or not all(isinstance(v, Mapping) for v in per.values()):
        raise CaseError(f"settings.queues: expected a mapping queue -> its properties (got {per!r})")
    out: dict[str, dict[str, Any]] = {}
    for name, own in per.items():
        where = f"settings.queues.{name}"
        check_settings(own, QUEUE_SETTINGS, where)
        policy = own.get("preemption.policy", "default")
        if policy not in POLICIES:
            raise CaseError(f"{where}.preemption.policy: expected one of {', '.join(POLICIES)} (got {policy!r})")
        delay = own.get("preemption.delay", PREEMPTION_DELAY)
        if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not delay > 0:  # convertDelay
            raise CaseError(f"{where}.preemption.delay: expected seconds > 0 (got {delay!r})")
        if own.get("application.sort.policy", "fifo") != "fifo":
            raise CaseError(
                f"{where}.application.sort.policy: only fifo is modelled (got {own['application.sort.policy']!r})"
            )
        if own.get("application.sort.priority", "enabled") not in ("enabled", "disabled"):
            raise CaseError(f"{where}.application.sort.priority: expected enabled or disabled")
        out[str(name)] = dict(own)
    return out


__all__ = ["PREEMPTION_DELAY", "QUEUE_SETTINGS", "SETTINGS", "Preemptor", "Snapshot", "YuniKornCycle"]
