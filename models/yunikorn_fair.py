"""Apache YuniKorn's fair queue sorting: usage over guarantee (or fair max), priority first.

Source read: apache/yunikorn-core at commit be3bb487298956dd70906fca15e577bbc12d23cb (2026-07-02),
Apache-2.0:

* ``pkg/common/resources/resources.go``, ``getFairShare`` and ``getShareFairForDenominator``: a
  queue's share of its allocation ``U`` is ``max_j U_j / d_j`` over the resources it uses, where
  ``d_j`` is its *guaranteed* quantity of ``j`` when the guarantee names ``j``, else its *fair max*
  of ``j`` (a resource named by neither does not count).  An explicit ``d_j <= 0`` gives share 1
  when ``U_j > 0`` (0 otherwise); the maximum starts at 0;
* ``CompUsageRatioSeparately``: two queues compare by these shares (``<``, ``>``, ``==``);
* ``pkg/scheduler/objects/queue.go``, ``GetFairMaxResource``: the root's max is the cluster's size;
  descending the tree, a queue's configured ``max`` overrides its parent's fair max resource by
  resource ("child wins every collision", even above the parent's);
* ``queue.go``, ``Queue.sortQueues``: a parent sorts its children *with pending resources*
  (``StrictlyGreaterThanZero(pending)``), and the scheduler descends the tree in that order;
  parent queues always sort ``fair`` (``resetProperties``), with ``application.sort.priority``
  enabled by default;
* ``pkg/scheduler/objects/sorters.go``, ``sortQueue``: ``sortQueuesByPriorityAndFairness``
  (priority enabled: higher current priority first, then lower share, then the queue whose
  pending resources are ``StrictlyGreaterThan`` the other's) or ``sortQueuesByFairnessAndPriority``
  (``application.sort.priority: disabled``, the member ``yunikorn-fair:priority-disabled``:
  share, then priority, then pending), both by
  ``sort.SliceStable``;
* ``queue.go``, ``recalculatePriority`` and ``priorityValueByPolicy``: a parent's current priority
  is its ``priority.offset`` plus the highest current priority of its children with applications.

**Shares** (:meth:`YuniKornFair.shares`): ``s_v = max_j U_vj / d_vj`` as above, for every leaf and
group (``U_v``: the usage of ``v``'s subtree; ``d_vj``: ``guarantee`` where given, else the fair
max: the ``limit`` of the nearest node on the path from ``v`` up that sets one, else the capacity).

**Order** (:meth:`YuniKornFair.order`): the active leaves (``pending = request - usage`` not zero)
depth first, each parent's children sorted as ``sortQueue`` sorts them.  A leaf's ``priority`` is
its current priority (its applications' highest plus its offset); a group's ``priority`` is its
``priority.offset`` (default policy).  The comparison is not a strict weak order (the pending
tie-break is a partial order), so the result depends on the sorting algorithm: Go's
``sort.SliceStable`` (insertion sort on blocks of 20, then ``symMerge``) is followed step by step.
Upstream quirk kept: ``sortQueue``'s ``less(i, j)`` reads ``fairMaxResources[i]`` by *position*
while only ``queues`` is swapped, so after a swap a queue may be compared with another queue's
fair max (``positional_fair_max=False`` gives the intended comparison).  Go feeds the children from
a map (random order): here they come in file order (groups first).

**Entitlement** (:meth:`YuniKornFair.entitlement`).  YuniKorn only orders queues; what it entitles
a queue to is defined here as the fluid limit of its scheduling loop when every queue asks for its
``request`` from an empty cluster: again and again a small piece of its request (Leontief: the
queue grows in the shape ``D_i`` of its request, at most ``T_i`` units, ``T_i = 1`` in a queue
case) goes to the first queue in the order whose piece fits the headroom (every ``limit`` on its
path, and the capacity).  In that limit, at every node the children of the highest current priority
that can still grow (``priority-disabled``: all of them) grow keeping their shares ``s_v`` equal
(the lowest first), while the other children wait; a queue stops at its request, or when a limit on
its path or the capacity saturates a resource it requests.  The queues' units ``x`` are then::

    at every node v, over the served children c:  s_c(x) = lambda_v   (or s_c > lambda_v, not grown)
    0 <= x_i <= T_i,  sum_{i under v} x_i D_i <= limit_v (every node),  sum_i x_i D_i <= R

reached by growing ``lambda`` from 0 and freezing, at every event, the queues that stop.

``fast`` computes it event by event: between two events the allocation is a monotone,
piecewise-linear function of the level of the top-level children; a group's response to a level is
built exactly, bottom-up, as a piecewise-linear function of its share (its children's responses
summed knot by knot, then re-read at the breakpoints of ``max_j U_j / d_j``), and the next event is
found exactly too: on the first segment between two knots of the root's growth where a queue reaches
its request or a cap binds (a bisection over the knots, then a linear step).  At an event
(a queue reaching its request, a limit or the capacity saturating a resource) the affected queues
freeze.  The test suite cross-checks it with :func:`simulate`, the discrete loop itself in pieces of
1/300 of each request (agreement within the crumbs a piece leaves).

Cost: about ``0.45 n`` events.  At each, a group ``v`` builds its response by its bundles
(:class:`_Knots`): its served children are read at the ``K_v`` knots of their own responses (``O(K_v
log K_v)`` per child group, ``O(K_v)`` per leaf child, ``m`` numbers each), then cut at its share's
breakpoints (all segments at once); the units of its leaves at a knot are rebuilt only where the
root's bisection reads them (``O(log K)`` knots, each ``O(n)`` down the tree).  A response is kept
from the previous event when none of its leaves moved or stopped, and the caps a growing queue
asks for are found in one pass over the caps' members (``O(n x depth x m)``).  So an event costs
``O(n log n)`` per level of the tree, where a group used to carry the units of all its leaves at all
its knots (``O(sum_v L_v^2)`` per event, ``L_v`` the leaves below ``v``: quadratic in the largest
group) and before that every group and the root built ``K x n`` arrays (cubic).  With ``0.45 n``
events that is quadratic in the queues; a flat tree keeps it (one numpy pass over the leaves per
event, few events), and so does a tree whose shares jump (below).

A tree of groups is filled event by event instead (:class:`_Events`): between two events every
growing node's bundle is linear in its children's level, and a growing group's level is a linear
function of its parent's (its share, read on one resource, equals its parent's level), so each
node keeps its bundle at one level and its slope, and a heap of its next events in its own level
(a queue at its request or its own limit, a waiting child reached, its share read on another
resource, its limit reached, and each growing child group's next event read as that child's
share).  The next event of the tree is found down the root's heap, and applied by moving the
nodes on that path and refreshing them bottom-up: ``O(depth (m^2 + log d))`` for a queue reaching
its request (``d`` the largest number of children), where the knot filling rebuilt every response.
A group whose share is flat in its level (its share read on a resource no growing queue below
requests) moves at its parent's level, and what it moves there is one jump for its parent, whose
share may then rise: that parent holds the jump until its own parent's level reaches its new
share; the jumps at one level of the root are taken together on a straight line, cut where the
first limit binds, as the knot filling takes a jump (:meth:`_Events.finish`).  A limit or the
capacity binding, or a jump cut, rebuilds the nodes from the allocation (``O(n)``, as the knot
filling restarts at each event; a few per tree).  Not yet linear on random trees six deep
(1,000 queues 0.05 s, 10,000 0.5 s, 30,000 2.1 s, 100,000 26 s): their shares switch resource
and their held jumps rejoin more often than in proportion to the queues (724 switches and 185
joins at 10,000, 3,396 and 1,494 at 30,000), at about half a millisecond each (a flat group's run
records where the queues under it are, a jump walks its ancestors, each reading its level from
the root down).  The two fillings agree to rounding
(``tests/test_fast_yunikorn.py``).  A share that jumps (an explicit 0 guarantee or max on a
requested resource: any use gives share 1) is not linear in a level: such a tree keeps the knot
filling, and its size is bounded (``MAX_YUNIKORN_QUEUE_GROUPS``).

Ties: levels within ``LEVEL_TIE`` of each other are one level (:meth:`_Fluid.knots`).  When a cap
freezes some queues of groups that were growing at one share, the groups whose frozen queues set
their share all wait at that share while their other queues catch up: they jump at one level and
share the jump in proportion (:meth:`_Fluid.step`).  Their shares, summed over different subtrees,
differ in their last bits; the previous filling let the lower rounding jump first and take what
the others would have had, an answer that followed the bits (``test_two_groups_waiting_at_one_share_jump_together``).
YuniKorn itself serves first whichever its sort puts first among equal shares (pending, then the
order of a Go map: random); the fluid model's proportion is the one answer that does not depend on
the queues' names or order.

How it differs from DRF (Ghodsi et al., NSDI 2011): the denominator of a share is the queue's own
guarantee, not the cluster, so queues fill in proportion to their guarantees (all reach their
guarantee together when the cluster allows); a queue without a guarantee is measured against its
fair max (its ``max``, or the cluster); guarantees are not reserved (only sorted first); there are
no weights; priorities are strict; groups compare by their aggregate usage over their own guarantee.

Not modelled: the ``fence`` priority policy, stopped queues,
preemption, placeholders, node fit (resources are pooled).  A jump of the share (an explicit 0
guarantee, where any usage gives share 1) is filled in proportion in the fluid model.

``TestSortQueuesWithGuarantees``, "fair first": guaranteed 500, 300, 200, 200, allocated 300, 200,
100, 100, q3 of priority 3:

>>> import fairalloc
>>> from fairalloc.core.queues import Queues
>>> g = {"q0": 500, "q1": 300, "q2": 200, "q3": 200}
>>> u = {"q0": 300, "q1": 200, "q2": 100, "q3": 100}
>>> nodes = {q: {"guarantee": [g[q]], "usage": [u[q]], "priority": 3 if q == "q3" else 1} for q in g}
>>> inst = fairalloc.Instance([1000], [[1000]] * 4, users=list(g), resources=["memory"], max_tasks=[1] * 4,
...                           queues=Queues.build(["memory"], nodes, []))
>>> m = YuniKornFair()
>>> [round(v, 4) for v in m.shares(inst).values()], m.order(inst)
([0.6, 0.6667, 0.5, 0.5], ['q3', 'q2', 'q0', 'q1'])
>>> m.entitlement(inst)[0][:, 0].round(1).tolist()     # priority first: q3 takes all it asks
[0.0, 0.0, 0.0, 1000.0]
>>> fair = m.with_parameters("priority-disabled")     # in proportion to the guarantees
>>> fair.entitlement(inst)[0][:, 0].round(1).tolist()
[416.7, 250.0, 166.7, 166.7]
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np

from fairalloc.core import limits
from fairalloc.core.errors import UnknownNameError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of, request
from fairalloc.core.registry import refuse_beyond, register
from fairalloc.core.tolerances import LEVEL_TIE, SATURATION
from fairalloc.engines.online import OnlinePolicy
from fairalloc.engines.queue_policy import QueuePolicy

#: ``configs.MinPriority`` / ``MaxPriority``: a parent without applications below has the minimum
MIN_PRIORITY, MAX_PRIORITY = float(-(2**31)), float(2**31 - 1)
#: knots x leaves of a group's response up to which it keeps its leaves' units at every knot: numpy on
#: a small table costs less than rebuilding its knots one by one where the root reads them
DENSE_CELLS = 2**16
#: the parameter of ``yunikorn-fair:priority-disabled`` (``application.sort.priority: disabled``)
PRIORITY_DISABLED = "priority-disabled"


def fair_share(usage: np.ndarray, guarantee: np.ndarray, fair_max: np.ndarray) -> float:
    """``getFairShare``: ``max_j usage_j / d_j``, ``d`` the guarantee (NaN: not given) else the fair
    max (inf: not given; then ``j`` does not count); ``d_j <= 0`` gives 1 if used, else 0.

    >>> fair_share(np.array([100, 2500.0]), np.array([1000, 5000.0]), np.array([99999, 99999.0]))
    0.5
    >>> fair_share(np.array([10, 1000.0]), np.array([0, np.nan]), np.array([5000, 5000.0]))
    1.0
    """
    d = np.where(np.isnan(guarantee), fair_max, guarantee)
    counted = np.isfinite(d) & (usage >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(d > 0, usage / np.where(d > 0, d, 1.0), np.where(usage > 0, 1.0, 0.0))
    return float(max(0.0, ratio[counted].max(initial=0.0)))


def fair_max(q: Queues, capacity: np.ndarray) -> dict[str, np.ndarray]:
    """``GetFairMaxResource`` of every node: the capacity, overridden down the tree by each
    ``limit`` a node sets (resource by resource, the child's value wins).  A level of the tree at
    a time, one ``np.where`` for all its nodes (one per node cost a flat tree of 10,000 queues
    half of its solve); the nodes depth first, as the tree is read."""
    R = np.asarray(capacity, dtype=float)
    nodes, up = _depth_first(q)
    limit = np.array([q.limit[v] for v in nodes], dtype=float).reshape(len(nodes), len(R))
    out = np.empty_like(limit)
    done = up < 0  # the top level reads the capacity
    out[done] = np.where(np.isfinite(limit[done]), limit[done], R)
    while not done.all():
        rows = np.flatnonzero(~done & done[np.maximum(up, 0)])  # the next level down
        out[rows] = np.where(np.isfinite(limit[rows]), limit[rows], out[up[rows]])
        done[rows] = True
    return dict(zip(nodes, out))


def _depth_first(q: Queues) -> tuple[list[str], np.ndarray]:
    """Every node depth first (each group's children in file order), and the row of each one's
    parent in that list (-1: the root)."""
    nodes: list[str] = []
    up: list[int] = []
    stack: list[tuple[str, int]] = [(c, -1) for c in reversed(q.children(None))]
    while stack:
        node, parent = stack.pop()
        up.append(parent)
        if q.is_group(node):
            stack += [(c, len(nodes)) for c in reversed(q.children(node))]
        nodes.append(node)
    return nodes, np.array(up, dtype=int)


def current_priority(q: Queues, active: dict[str, bool]) -> dict[str, float]:
    """Every node's current priority: a leaf's own, a group's offset plus its active children's
    highest (``recalculatePriority``; no active child: the minimum).  Children before their
    parents, each read once (a group used to read its leaves again for each group above it)."""
    out = {u: _clamped(q.priority[u]) for u in q.leaf_names}
    live = dict(active)  # a leaf active, or a group with one below
    for node in reversed(_depth_first(q)[0]):
        if node in out:
            continue
        kids = [c for c in q.children(node) if live[c]]
        live[node] = bool(kids)
        top = max((out[c] for c in kids), default=MIN_PRIORITY)
        out[node] = top if top == MIN_PRIORITY else _clamped(q.priority[node] + top)
    return out


def _clamped(priority: float) -> float:
    """``priority`` within [MIN_PRIORITY, MAX_PRIORITY] (``np.clip`` on one number, without its
    per-call cost: a tree of 10,000 queues took a third of a second)."""
    return float(min(max(priority, MIN_PRIORITY), MAX_PRIORITY))


def go_stable_sort(items: list[Any], less: Callable[[list[Any], int, int], bool]) -> list[Any]:
    """Go's ``sort.SliceStable`` (``stable_func``: insertion sort on blocks of 20, then
    ``symMerge``), step for step, so that a comparison that is not a strict weak order gives
    Go's answer; ``less(data, i, j)`` compares positions ``i`` and ``j`` of the current ``data``."""
    data = list(items)
    n = len(data)

    def lt(i: int, j: int) -> bool:
        return less(data, i, j)

    def swap(i: int, j: int) -> None:
        data[i], data[j] = data[j], data[i]

    def insertion(a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and lt(j, j - 1):
                swap(j, j - 1)
                j -= 1

    def rotate(a: int, m: int, b: int) -> None:
        data[a:b] = data[m:b] + data[a:m]

    def sym_merge(a: int, m: int, b: int) -> None:
        if m - a == 1:  # insert data[a] into the sorted data[m:b] by binary search
            i, j = m, b
            while i < j:
                h = (i + j) // 2
                i, j = (h + 1, j) if lt(h, a) else (i, h)
            for k in range(a, i - 1):
                swap(k, k + 1)
            return
        if b - m == 1:
            i, j = a, m
            while i < j:
                h = (i + j) // 2
                i, j = (h + 1, j) if not lt(m, h) else (i, h)
            for k in range(m, i, -1):
                swap(k, k - 1)
            return
        mid = (a + b) // 2
        n_ = mid + m
        start, r = (n_ - b, mid) if m > mid else (a, m)
        p = n_ - 1
        while start < r:
            c = (start + r) // 2
            start, r = (c + 1, r) if not lt(p - c, c) else (start, c)
        end = n_ - start
        if start < m < end:
            rotate(start, m, end)
        if a < start < mid:
            sym_merge(a, start, mid)
        if mid < end < b:
            sym_merge(mid, end, b)

    block = 20
    a, b = 0, block
    while b <= n:
        insertion(a, b)
        a, b = b, b + block
    insertion(a, n)
    while block < n:
        a, b = 0, 2 * block
        while b <= n:
            sym_merge(a, a + block, b)
            a, b = b, b + 2 * block
        if a + block < n:
            sym_merge(a, a + block, n)
        block *= 2
    return data


def _strictly_greater(left: np.ndarray, right: np.ndarray) -> bool:
    """``StrictlyGreaterThan(Sub(left, right), Zero)``: no smaller anywhere, larger somewhere."""
    diff = left - right
    diff = np.where(np.isnan(diff), 0.0, diff)  # inf - inf: both unbounded, equal
    return bool((diff >= 0).all() and (diff != 0).any())


@register("yunikorn-fair")
class YuniKornFair(QueuePolicy):
    summary = "Apache YuniKorn: queues sorted by usage over guarantee (or max), priority first"
    about = (
        "Queues fill in proportion to their guarantees; no weights, strict priorities, and guarantees are "
        "only sorted first, not reserved."
    )
    section = "9.6"
    solver = "numpy event-driven filling"
    #: ``application.sort.priority`` (enabled by default): priority before fairness
    priority_first = True

    def with_parameters(self, text: str) -> YuniKornFair:
        if text != PRIORITY_DISABLED:
            raise UnknownNameError(
                f"mechanism: {self.name}: the only member is {self.name}:{PRIORITY_DISABLED} (got '{self.name}:{text}')"
            )
        member = type(self)()
        member.name, member.priority_first = f"{self.name}:{text}", False
        return member

    def refuse(self, instance: Instance) -> None:
        super().refuse(instance)
        groups = len(queues_of(instance).groups)
        if groups and _shares_jump(instance):  # the knot filling (:class:`_Fluid`), quadratic
            what = f"queues x groups ({instance.n:,} x {groups:,}) where a share jumps"
            refuse_beyond(
                instance.n * groups, what, self.name, limits.MAX_YUNIKORN_QUEUE_GROUPS, "MAX_YUNIKORN_QUEUE_GROUPS"
            )

    def online(self, settings: dict[str, Any]) -> OnlinePolicy:
        """YuniKorn's scheduling cycle (this queue sort, FIFO applications, preemption toward a
        queue's guarantee): :class:`fairalloc.models.yunikorn_cycle.YuniKornCycle`."""
        from fairalloc.models.yunikorn_cycle import YuniKornCycle

        return YuniKornCycle(settings, self.order, self.priority_first)

    # -- the sort ---------------------------------------------------------------------------
    def shares(self, instance: Instance) -> dict[str, float]:
        """``getFairShare`` of every leaf queue and group for the case's ``usage``."""
        q = queues_of(instance)
        fm = fair_max(q, instance.capacity)
        return {v: fair_share(q.subtree_usage(v), q.guarantee[v], fm[v]) for v in (*instance.users, *q.groups)}

    def order(self, instance: Instance, positional_fair_max: bool = True) -> list[str]:
        """Leaf queues with pending resources in the order the scheduler visits them (``sortQueues``
        at every parent, depth first).  ``positional_fair_max``: keep ``sortQueue``'s reading of
        the fair max by slice position (see the module docstring)."""
        instance.scalar_weights(self.name)
        q = queues_of(instance)
        fm = fair_max(q, instance.capacity)
        req = request(instance)
        usage = np.array([q.usage[u] for u in instance.users], dtype=float).reshape(req.shape)
        with np.errstate(invalid="ignore"):  # all leaves at once: the same numbers, row by row
            rows = np.maximum(np.nan_to_num(req - usage, nan=0.0), 0.0)
        leaf_pending = dict(zip(instance.users, rows, strict=True))
        pending = {v: self._subtree(q, v, leaf_pending) for v in (*instance.users, *q.groups)}
        asking = np.asarray((req > 0).any(axis=1), dtype=bool)
        prio = current_priority(q, dict(zip(instance.users, map(bool, asking), strict=True)))
        used = {v: q.subtree_usage(v) for v in pending}  # read at every comparison
        share = {v: fair_share(used[v], q.guarantee[v], fm[v]) for v in pending} if not positional_fair_max else {}

        def listed(node: str | None) -> list[str]:
            kids = [c for c in q.children(node) if (pending[c] > 0).any()]
            by_position = [fm[c] for c in kids]

            def less(data: list[str], i: int, j: int) -> bool:
                left, right = data[i], data[j]
                if positional_fair_max:
                    ls = fair_share(used[left], q.guarantee[left], by_position[i])
                    rs = fair_share(used[right], q.guarantee[right], by_position[j])
                else:
                    ls, rs = share[left], share[right]
                return self._less((prio[left], ls, pending[left]), (prio[right], rs, pending[right]))

            out: list[str] = []
            for c in go_stable_sort(kids, less):
                out += listed(c) if q.is_group(c) else [c]
            return out

        return listed(None)

    def _less(self, left: tuple[float, float, np.ndarray], right: tuple[float, float, np.ndarray]) -> bool:
        """``sortQueuesByPriorityAndFairness`` / ``sortQueuesByFairnessAndPriority``."""
        (lp, ls, lpend), (rp, rs, rpend) = left, right
        if self.priority_first and lp != rp:
            return lp > rp
        if ls != rs:
            return ls < rs
        if not self.priority_first and lp != rp:
            return lp > rp
        return _strictly_greater(lpend, rpend)

    @staticmethod
    def _subtree(q: Queues, v: str, leaf_values: dict[str, np.ndarray]) -> np.ndarray:
        if not q.is_group(v):
            return leaf_values[v]
        return np.sum([leaf_values[u] for u in q.leaves(v)], axis=0) if q.leaves(v) else np.zeros(len(q.resources))

    # -- the equilibrium --------------------------------------------------------------------
    def entitlement(self, instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
        instance.scalar_weights(self.name)  # YuniKorn has no weights; per-resource ones are refused
        by_events = bool(queues_of(instance).groups) and not _shares_jump(instance)
        fluid = (_Events if by_events else _Fluid)(instance, self.priority_first)
        x, events = fluid.fill()
        return x[:, None] * instance.demand, {"events": events, "ties": fluid.ties}


#: a group's response: the knots of its share level ``(K,)`` and of its leaves' units ``(K, leaves)``
Response = tuple[np.ndarray, np.ndarray]


class _Shape:
    """What the filling reads of a queue tree and a capacity, whatever the demands: every node's
    leaves, fair max, share denominators and caps.  Kept per tree (:func:`_shape_of`): the
    verifier solves hundreds of reports of one instance, and building this took a tenth of each."""

    def __init__(self, q: Queues, users: list[str], R: np.ndarray) -> None:
        self.index = {u: i for i, u in enumerate(users)}
        fm = fair_max(q, R)
        self.guarantee = {v: np.asarray(q.guarantee[v]) for v in fm}
        self.fair_max = fm
        self.under = {v: np.array([self.index[u] for u in q.leaves(v)], dtype=int) for v in q.groups}
        self.under.update(zip(users, np.arange(len(users)).reshape(-1, 1)))  # one row each, not an array each
        # caps: (leaves under, limit vector) of every node with a limit, and the root's capacity
        self.caps = [(np.arange(len(users)), R)]
        nodes = list(fm)
        limit = np.array([q.limit[v] for v in nodes]).reshape(len(nodes), len(R))
        self.caps += [(self.under[nodes[k]], limit[k]) for k in np.flatnonzero(np.isfinite(limit).any(axis=1))]
        #: the leaves under each cap, one after another (``starts``: where each cap's begin): linear
        #: in the tree's size, where a (caps, n) table was quadratic
        self.members = np.concatenate([leaves for leaves, _ in self.caps])
        self.starts = np.cumsum([0] + [len(leaves) for leaves, _ in self.caps[:-1]])
        self.bounds = np.array([cap for _, cap in self.caps]).reshape(len(self.caps), len(R))  #: (caps, m)
        self.finite = np.isfinite(self.bounds)

        # fair_share's arithmetic, precomputed per node (one row each, computed for all nodes at
        # once): 1 / d_j where d_j > 0, and where d_j <= 0
        guarantee = np.array([self.guarantee[v] for v in nodes]).reshape(len(nodes), len(R))
        d = np.where(np.isnan(guarantee), np.array([fm[v] for v in nodes]).reshape(len(nodes), len(R)), guarantee)
        self.inverse: dict[str, np.ndarray] = dict(zip(nodes, np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)))
        self.zero: dict[str, np.ndarray] = dict(zip(nodes, d <= 0))
        row = {v: k for k, v in enumerate(nodes)}
        self.leaf_d = d[[row[u] for u in users]].reshape(len(users), len(R))  #: (n, m)
        self.priorities: dict[bytes, dict[str, float]] = {}  #: current_priority per set of active leaves


def _shares_jump(instance: Instance) -> bool:
    """Whether a node's share can jump: an explicit 0 (or negative) guarantee or max on a resource
    that a queue under it requests, where any use gives share 1 (:func:`fair_share`).  The
    event-driven filling (:class:`_Events`) follows shares that grow linearly between events;
    such a tree keeps the knot filling (:class:`_Fluid`)."""
    q, D = queues_of(instance), np.asarray(instance.demand, dtype=float)
    shape = _shape_of(q, list(instance.users), np.asarray(instance.capacity, dtype=float))
    if ((D > 0) & (shape.leaf_d <= 0)).any():
        return True
    return any((shape.zero[g] & (D[shape.under[g]] > 0).any(axis=0)).any() for g in q.groups if shape.zero[g].any())


def _shape_of(q: Queues, users: list[str], R: np.ndarray) -> _Shape:
    """The :class:`_Shape` of a queue tree, capacity and users, kept with the tree."""
    return q.memo("yunikorn-fair", (R.tobytes(), tuple(users)), lambda: _Shape(q, users, R))


class _Tree:
    """What the filling and the simulation read of an instance: the tree, the leaves' shapes and
    bounds, every node's share denominators, priorities and caps."""

    def __init__(self, instance: Instance, priority_first: bool) -> None:
        self.q = q = queues_of(instance)
        self.priority_first = priority_first
        self.users = list(instance.users)
        self.D = np.asarray(instance.demand, dtype=float)
        self.R = np.asarray(instance.capacity, dtype=float)
        self.n, self.m = self.D.shape
        shape = self.shape = _shape_of(q, self.users, self.R)
        self.index, self.guarantee, self.fair_max = shape.index, shape.guarantee, shape.fair_max
        self.under, self.caps, self.inverse, self.zero = shape.under, shape.caps, shape.inverse, shape.zero
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(self.D > 0, self.R / np.where(self.D > 0, self.D, 1.0), np.inf).min(axis=1)
        self.T = np.where((self.D > 0).any(axis=1), np.minimum(instance.bounds(), fit), 0.0)
        active = self.T > 0
        if (key := active.tobytes()) not in shape.priorities:
            shape.priorities[key] = current_priority(q, dict(zip(self.users, active.tolist())))
        self.prio = shape.priorities[key]

    def share(self, v: str, x: np.ndarray) -> float:
        """:func:`fair_share` of node ``v``'s subtree when the leaves hold ``x`` units."""
        leaves = self.under[v]
        bundle = x[leaves] @ self.D[leaves]
        s = float((bundle * self.inverse[v]).max(initial=0.0))
        return max(s, 1.0) if (self.zero[v] & (bundle > 0)).any() else s

    def growing_children(self, node: str | None, growable: np.ndarray) -> list[str]:
        """The children served at ``node``: those with a leaf that can grow, of the highest
        current priority among them when priority comes first."""
        index, under = self.index, self.under  # a leaf's own flag is read without a numpy call
        kids = [c for c in self.q.children(node) if (growable[index[c]] if c in index else growable[under[c]].any())]
        if self.priority_first and kids:
            top = max(self.prio[c] for c in kids)
            kids = [c for c in kids if self.prio[c] == top]
        return kids


class _Knots:
    """A group's response kept by its bundles: at knot ``k`` the group's share is ``levels[k]`` and
    its leaves hold ``bundles[k]`` together; their units there (:meth:`_Fluid.units`) lie ``t[k]``
    of the way from row ``a[k]`` of its children's growth to the next, a row being the children at
    one level (``row_points``: the value there, or its limit from below where ``row_side`` is 0),
    rebuilt from ``x0``, the served leaves (their levels of reaching T: ``full``) and the served
    child groups (``parts``: name, levels as tied here, response), and kept once read; a small
    response keeps them all (``dense``, at most ``DENSE_CELLS``)."""

    def __init__(
        self,
        levels: np.ndarray,
        bundles: np.ndarray,
        a: np.ndarray,
        t: np.ndarray,
        row_points: np.ndarray,
        row_side: np.ndarray,
        x0: np.ndarray,
        v: str,
        served: np.ndarray,
        full: np.ndarray,
        parts: list[tuple[str, np.ndarray, _Knots]],
    ) -> None:
        self.levels, self.bundles, self.a, self.t = levels, bundles, a, t
        self.row_points, self.row_side, self.x0, self.v = row_points, row_side, x0, v
        self.served, self.full, self.parts = served, full, parts
        self.units: dict[int, np.ndarray] = {}
        self.rows: dict[int, np.ndarray] = {}
        self.dense: np.ndarray | None = None  #: the units at every knot, for a small response


class _Fluid(_Tree):
    """The event-driven filling of :meth:`YuniKornFair.entitlement`."""

    def __init__(self, instance: Instance, priority_first: bool) -> None:
        super().__init__(instance, priority_first)
        d, asks = self.shape.leaf_d, self.D > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            self.k = np.where(asks & (d > 0), self.D / d, 0.0).max(axis=1)
        self._responses: dict[tuple[str, bytes, bytes], _Knots] = {}
        self._previous: dict[tuple[str, bytes, bytes], _Knots] = {}  #: the previous event's
        self._columns: dict[bytes, list[tuple[float, list[tuple[int, float]]]]] = {}
        self._cap_arrays: dict[bytes, _Caps] = {}
        self._terms: dict[tuple[int, int], list[tuple[int, float]]] = {}
        self._leaves_served: dict[tuple[str | None, bytes], tuple[np.ndarray, list[str]]] = {}
        self._order: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.jump = np.asarray((asks & (d <= 0)).any(axis=1))
        self.full = self.T * self.k  #: the level at which each leaf reaches its bound
        self.ties = 0  #: levels :meth:`knots` took as one with another

    @cached_property
    def top(self) -> float:
        """A level above every share any node can reach (the tests' bisection of the level starts there)."""
        return 1.0 + max([self.share(v, self.T) for v in [*self.q.groups, *self.users]], default=0.0)

    def leaves_at(
        self, idx: np.ndarray, points: np.ndarray, x0: np.ndarray, full: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(K, len(idx))`` twice: the most of its shape each leaf ``idx`` holds at each share of
        ``points`` (at least ``x0``, at most ``T``; ``level / k`` between, 0 below 1 where the share
        jumps), its limits from below and its values.  ``full``: the levels at which they reach
        ``T`` (default ``T k``; :meth:`knots` gives them tied to the others)."""
        k, p, jump = self.k[idx], points[:, None], self.jump[idx]
        full = self.full[idx] if full is None else full
        grows = np.where(k > 0, p / np.where(k > 0, k, 1.0), np.inf)
        high = self.T[idx]

        def held(reached: np.ndarray, below_jump: np.ndarray) -> np.ndarray:
            # compared with the knot T k itself: (T k) / k may fall short of T
            most = np.where(jump & below_jump, 0.0, np.where(reached, np.inf, grows))
            return np.minimum(high, np.maximum(x0[idx], most))

        return held(p > full, p <= 1.0), held(p >= full, p < 1.0)

    def leaf_knots(self, idx: np.ndarray, x0: np.ndarray) -> list[np.ndarray]:
        """Where :meth:`leaves_at` bends or jumps: ``x0 k``, ``T k`` and 1 for a jumping share."""
        return [x0[idx] * self.k[idx], self.full[idx], np.where(self.jump[idx], 1.0, 0.0)]

    def response_of(self, v: str, x0: np.ndarray, growable: np.ndarray) -> Response:
        """Group ``v``'s response whole: ``(levels (K,), units (K, leaves under v))``, every knot's
        units rebuilt (for a reader of all of them; the filling reads the knots it needs only)."""
        r = self.knots_of(v, x0, growable)
        return r.levels, np.array([self.units(r, k) for k in range(len(r.levels))])

    def knots_of(self, v: str, x0: np.ndarray, growable: np.ndarray) -> _Knots:
        """:meth:`response`, kept while the leaves under ``v`` neither move nor stop: from one event
        to the next (:meth:`fill` keeps the previous event's), a subtree that waits (a lower
        priority, a group not served) or has stopped is not built again."""
        under = self.under[v]
        key = (v, x0[under].tobytes(), growable[under].tobytes())
        if key not in self._responses:
            kept = self._previous.pop(key, None)
            self._responses[key] = kept if kept is not None else self.response(v, x0, growable)
        return self._responses[key]

    def response(self, v: str, x0: np.ndarray, growable: np.ndarray) -> _Knots:
        """What group ``v``'s leaves hold when ``v``'s share is brought to a level (the largest
        allocation whose share is within it; right-continuous, two knots at one level where it
        jumps), by its bundles: the served children brought to a common share at every knot of
        theirs (a served leaf's holding is closed-form, a child group's bundle is read on its own
        knots), then re-read at ``v``'s share (:meth:`as_share_of`).  A point where the bundle
        jumps gives two rows, its limit from below and its value."""
        served, groups, points, full, parts = self._children(v, x0, growable)
        D = self.D[served]
        left, right = (held @ D for held in self.leaves_at(served, points, x0, full))
        for _, levels, child in parts:
            left += _left_at(levels, child.bundles, points)
            right += _right_at(levels, child.bundles, points)
        waiting = self._waiting(v, served, groups)
        left += x0[waiting] @ self.D[waiting]
        right += x0[waiting] @ self.D[waiting]
        counts = np.where((left == right).all(axis=1), 1, 2)
        row_point = np.repeat(np.arange(len(points)), counts)
        row_side = np.ones(len(row_point), dtype=int)
        row_side[np.cumsum(counts)[counts == 2] - 2] = 0  # a jump: its left limit, then its value
        rows = np.where(row_side[:, None] == 1, right[row_point], left[row_point])
        levels, bundles, a, t = self.as_share_of(v, points[row_point], rows)
        r = _Knots(levels, bundles, a, t, points[row_point], row_side, x0, v, served, full, parts)
        if len(levels) * len(self.under[v]) <= DENSE_CELLS and all(c.dense is not None for _, _, c in parts):
            r.dense = self._dense(r)
        return r

    def _dense(self, r: _Knots) -> np.ndarray:
        """``(K, leaves under r's group)``: the units at every knot of a small response at once
        (its children's small too)."""
        rows = np.empty((len(r.row_points), len(self.under[r.v])))
        rows[:] = r.x0[self.under[r.v]]
        value = r.row_side[:, None] == 1
        left, right = self.leaves_at(r.served, r.row_points, r.x0, r.full)
        rows[:, self._local(r.v, r.served)] = np.where(value, right, left)
        for g, levels, child in r.parts:
            at, units = self._local(r.v, self.under[g]), child.dense
            assert units is not None  # a small response's children are small
            rows[:, at] = np.where(value, _right_at(levels, units, r.row_points), _left_at(levels, units, r.row_points))
        lo, hi = rows[r.a], rows[np.minimum(r.a + 1, len(rows) - 1)]
        return np.where(r.t[:, None] == 0.0, lo, lo + r.t[:, None] * (hi - lo))

    def _children(
        self, v: str | None, x0: np.ndarray, growable: np.ndarray
    ) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray, list[tuple[str, np.ndarray, _Knots]]]:
        """The children served at ``v`` (the root: ``None``): the leaves, the groups, and
        :meth:`knots` of the leaves and of the groups' responses."""
        served, groups = self._served_leaves(v, growable)
        responses = [self.knots_of(g, x0, growable) for g in groups]
        return served, groups, *self.knots(served, [(g, r.levels, r) for g, r in zip(groups, responses)], x0)

    def _waiting(self, v: str, served: np.ndarray, groups: list[str]) -> np.ndarray:
        """The leaves under ``v`` that keep their holding: under none of its served children."""
        waiting = np.ones(len(self.under[v]), dtype=bool)
        waiting[self._local(v, served)] = False
        for g in groups:
            waiting[self._local(v, self.under[g])] = False
        return self.under[v][waiting]

    def units(self, r: _Knots, k: int) -> np.ndarray:
        """The units of the leaves under ``r``'s group at its knot ``k`` (kept with ``r``)."""
        if r.dense is not None:
            return r.dense[k]
        if k not in r.units:
            lo = self._row(r, int(r.a[k]))
            t = float(r.t[k])
            r.units[k] = lo if t == 0.0 else lo + t * (self._row(r, int(r.a[k]) + 1) - lo)
        return r.units[k]

    def _row(self, r: _Knots, j: int) -> np.ndarray:
        """The units of the leaves under ``r``'s group at row ``j`` of its children's growth."""
        if j not in r.rows:
            point, side = r.row_points[j : j + 1], int(r.row_side[j])
            x = r.x0[self.under[r.v]]
            x[self._local(r.v, r.served)] = self.leaves_at(r.served, point, r.x0, r.full)[side][0]
            for g, levels, child in r.parts:
                x[self._local(r.v, self.under[g])] = self._read(levels, child, point, side)
            r.rows[j] = x
        return r.rows[j]

    def _read(self, levels: np.ndarray, r: _Knots, point: np.ndarray, side: int) -> np.ndarray:
        """The units of ``r``'s leaves at one level of its group's share (knots at ``levels``):
        its limit from below (``side`` 0) or its value (1)."""
        p = point[0]  # :func:`_position` of one point, without its arrays (read at every part at every knot)
        k = int(levels.searchsorted(p, side="right" if side else "left")) - 1
        if 0 <= k < len(levels) - 1:
            lo = self.units(r, k)
            return lo + (p - levels[k]) / (levels[k + 1] - levels[k]) * (self.units(r, k + 1) - lo)
        return self.units(r, min(max(k, 0), len(levels) - 1))

    def knots(
        self, served: np.ndarray, parts: list[tuple[str, np.ndarray, _Knots]], x0: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[tuple[str, np.ndarray, _Knots]]]:
        """The levels at which the served leaves (``served``) and groups (``parts``: their
        responses) bend or jump, levels within ``LEVEL_TIE`` of each other taken as one (the first):
        ``(points, the leaves' levels of reaching T, the parts with their levels so tied)``.  Two
        groups whose shares were equal when a cap froze some of their queues both wait at that
        share; computed over different subtrees, the two numbers differ in their last bits, and
        which group jumps first (taking what the other would have had) must not follow them."""
        full = self.full[served]
        values = _distinct(np.concatenate([[0.0], *self.leaf_knots(served, x0), full, *[p[1] for p in parts]]))
        first = np.ones(len(values), dtype=bool)
        first[1:] = np.diff(values) > LEVEL_TIE * np.maximum(1.0, np.abs(values[1:]))
        points = values[first]
        cluster = np.cumsum(first) - 1
        self.ties += len(values) - len(points)

        def tied(levels: np.ndarray) -> np.ndarray:
            return points[cluster[np.searchsorted(values, levels)]]

        return points, tied(full), [(g, tied(levels), r) for g, levels, r in parts]

    def _local(self, v: str | None, leaves: np.ndarray) -> np.ndarray:
        """The positions of ``leaves`` among the leaves under ``v``."""
        if v is None:
            return leaves
        if v not in self._order:
            columns = self.under[v]
            by = np.argsort(columns, kind="stable")
            self._order[v] = columns[by], by
        ordered, by = self._order[v]
        return by[np.searchsorted(ordered, leaves)]

    def _served_leaves(self, v: str | None, growable: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """The children served at ``v``: the leaves among them (indices) and the groups."""
        key = (v, growable.tobytes() if v is None else growable[self.under[v]].tobytes())
        if key not in self._leaves_served:
            served = self.growing_children(v, growable)
            leaves = np.array([self.index[c] for c in served if not self.q.is_group(c)], dtype=int)
            self._leaves_served[key] = leaves, [c for c in served if self.q.is_group(c)]
        return self._leaves_served[key]

    def as_share_of(
        self, v: str, points: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Re-parametrise ``v``'s bundle from its children's level (knots ``points``, bundles
        ``rows``) to ``v``'s own share, every segment between two knots at once: a jump (two knots
        at one level) jumps the share too, the allocation waiting below it; elsewhere the share is
        the largest of ``v``'s resources' lines, cut where the largest may change (and where an
        explicit 0 denominator makes it jump to 1 just after the segment's start).  Returns
        ``(levels, bundles, a, t)``: knot ``k`` lies ``t_k`` of the way from row ``a_k`` to the next."""
        inv, zero = self.inverse[v], self.zero[v]
        delta = rows[1:] - rows[:-1]
        jump = points[:-1] == points[1:]
        seg, t, level = self._cuts(rows[:-1], delta, inv, zero, jump)
        levels = np.maximum.accumulate(np.concatenate([_shares(rows[:1], inv, zero), level]))
        bundles = np.concatenate([rows[:1], rows[seg] + t[:, None] * delta[seg]])
        ends = np.flatnonzero(jump[seg] & (t == 1.0))  # a jump's value, as given
        bundles[ends + 1] = rows[seg[ends] + 1]
        a, t = np.concatenate([[0], seg]), np.concatenate([[0.0], t])
        a[ends + 1], t[ends + 1] = seg[ends] + 1, 0.0
        return levels, bundles, a, t

    @staticmethod
    def _cuts(
        base: np.ndarray, delta: np.ndarray, inv: np.ndarray, zero: np.ndarray, jump: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(segment, t, share)`` of every knot of :meth:`as_share_of` after the first, in order."""
        S = len(base)
        lines = np.flatnonzero(inv > 0)
        a, b = base[:, lines] * inv[lines], delta[:, lines] * inv[lines]
        if zero.any():
            a = np.concatenate([a, np.ones((S, 1))], axis=1)
            b = np.concatenate([b, np.zeros((S, 1))], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):  # where the largest line may change
            cross = (a[:, None, :] - a[:, :, None]) / (b[:, :, None] - b[:, None, :])
        inside = (b[:, :, None] != b[:, None, :]) & (cross > 0) & (cross < 1) & ~jump[:, None, None]
        seg_c, _, _ = np.nonzero(inside)
        seg = np.concatenate([np.arange(S), np.arange(S), seg_c])
        t = np.concatenate([np.zeros(S), np.ones(S), cross[inside]])
        seg, t = _distinct_pairs(seg, t)
        end = base + delta
        bundles = np.where(jump[seg, None], end[seg], base[seg] + t[:, None] * delta[seg])
        starts = (zero & (base <= 0) & (delta > 0)).any(axis=1) & ~jump
        level = np.maximum(_shares(bundles, inv, zero), np.where(starts[seg], 1.0, 0.0))
        waits = np.flatnonzero(starts & (_shares(base, inv, zero) < 1.0))  # the share jumps to 1 at once
        seg = np.concatenate([seg, waits])
        t = np.concatenate([t, np.zeros(len(waits))])
        level = np.concatenate([level, np.ones(len(waits))])
        order = np.lexsort((t, np.concatenate([np.ones(len(seg) - len(waits)), np.zeros(len(waits))]), seg))
        return seg[order], t[order], level[order]

    def over(self, x: np.ndarray, x0: np.ndarray, growable: np.ndarray) -> bool:
        """An event has happened at ``x``: a growing leaf at its bound, or a cap exceeded."""
        if (growable & (x >= self.T) & (x0 < self.T)).any():
            return True
        caps = self._caps(growable)
        return bool((caps.loads(x) > caps.bounds).any())

    def _caps(self, growable: np.ndarray) -> _Caps:
        """:meth:`_cap_columns` as arrays (:class:`_Caps`), kept per ``growable``."""
        key = growable.tobytes()
        if key not in self._cap_arrays:
            self._cap_arrays[key] = _Caps(self, growable)
        return self._cap_arrays[key]

    def _cap_columns(self, growable: np.ndarray) -> list[tuple[float, list[tuple[int, float]]]]:
        """The caps in play, as plain floats: ``(cap_j, [(leaf, D_leaf_j)])`` for each limited
        resource ``j`` of a cap that a growable leaf under it requests (kept per ``growable``): the
        sums :class:`_Caps` takes, term by term (:func:`_load`), in the order it adds them."""
        key = growable.tobytes()
        if key not in self._columns:
            self._columns[key] = [
                (float(self.caps[k][1][j]), self._column(k, j)) for k, j in zip(*np.nonzero(self._asks(growable)))
            ]
        return self._columns[key]

    def _column(self, k: int, j: int) -> list[tuple[int, float]]:
        """``[(leaf, D_leaf_j)]`` under cap ``k`` (the same whatever grows)."""
        if (k, j) not in self._terms:
            leaves = self.caps[k][0]
            self._terms[k, j] = list(zip(leaves.tolist(), self.D[leaves, j].tolist()))
        return self._terms[k, j]

    def _asks(self, growable: np.ndarray) -> np.ndarray:
        """``(caps, m)``: the limited resources of each cap that a growable leaf under it requests."""
        members, starts = self.shape.members, self.shape.starts
        asks = np.zeros((len(members) + 1, self.m), dtype=bool)  # a last row: a cap without leaves
        asks[:-1] = (self.D[members] > 0) & growable[members, None]
        some = np.logical_or.reduceat(asks, starts, axis=0)
        some[np.diff(np.append(starts, len(members))) == 0] = False  # reduceat reads one row there
        return some & self.shape.finite

    def fill(self) -> tuple[np.ndarray, int]:
        x = np.zeros(self.n)
        growable = self.T > 0
        events = 0
        while growable.any() and events <= 4 * self.n + 8:
            events += 1
            x0 = x.copy()
            self._previous, self._responses, self._leaves_served = self._responses, {}, {}
            x = self.step(*self.event(x0, growable), growable)
            growable = self.freeze(x, growable)
        return x, events

    def event(self, x0: np.ndarray, growable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Two allocations with the next event between them on one line: the holdings are linear
        between the root's knots and :meth:`over` is monotone in the level, so a bisection over
        the knots finds the first one at or past the event; the event is on the segment up to it,
        or at its jump (then :meth:`step` shares the jump).  The holdings are evaluated at the
        knots the bisection reads only (:meth:`root_at`), each in O(n)."""
        served, _, points, full, parts = self._children(None, x0, growable)

        def at(k: int, side: int) -> np.ndarray:
            return self.root_at(points[k : k + 1], side, x0, served, full, parts)

        lo, hi = -1, len(points) - 1  # past the last knot nothing changes: as if over there
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if self.over(at(mid, 1), x0, growable) else (mid, hi)
        if hi == 0 or not self.over(at(hi, 0), x0, growable):
            return at(hi, 0), at(hi, 1)
        return at(lo, 1), at(hi, 0)

    def root_at(
        self,
        point: np.ndarray,
        side: int,
        x0: np.ndarray,
        served: np.ndarray,
        full: np.ndarray,
        parts: list[tuple[str, np.ndarray, _Knots]],
    ) -> np.ndarray:
        """Every leaf's holding when the root's served children are at ``point`` (one level):
        its limit from below (``side`` 0) or its value (1); ``full``: the served leaves' levels
        of reaching their bounds, as :meth:`knots` ties them."""
        x = x0.copy()
        x[served] = self.leaves_at(served, point, x0, full)[side][0]
        for g, levels, r in parts:
            x[self.under[g]] = self._read(levels, r, point, side)
        return x

    def step(self, x_lo: np.ndarray, x_hi: np.ndarray, growable: np.ndarray) -> np.ndarray:
        """The point between ``x_lo`` and ``x_hi`` where the first cap binds (all of the way if
        none does): across a jump of the allocation (a share that jumps) the queues jumping
        share what is left in proportion."""
        theta = 1.0
        caps = self._caps(growable)
        hi = caps.loads(x_hi)
        if (over := hi > caps.bounds).any():
            bound, lo, hi = caps.bounds[over], caps.loads(x_lo)[over], hi[over]
            with np.errstate(divide="ignore", invalid="ignore"):
                cut = np.where(hi != lo, (bound - lo) / (hi - lo), -math.inf)  # over already: stay
            theta = min(theta, float(cut.min()))
        return np.minimum(x_lo + max(theta, 0.0) * (x_hi - x_lo), self.T)

    def freeze(self, x: np.ndarray, growable: np.ndarray) -> np.ndarray:
        """Growable leaves that stop at ``x``: at their bound, or requesting a saturated resource
        under a saturated cap."""
        done = growable & (x >= self.T * (1 - SATURATION))
        caps = self._caps(growable)
        saturated = caps.loads(x) >= caps.bounds * (1 - SATURATION)
        done[caps.askers[saturated[caps.asking]]] = True
        if not (done & growable).any():  # numerical safety: the queue closest to a stop stops
            done[np.flatnonzero(growable)[np.argmax(x[growable] / self.T[growable])]] = True
        return growable & ~done


#: a child's state in :class:`_Events`: no growable leaf below; growable but not served (a lower
#: priority); growing at its parent's level; served but above it (joins when the level reaches
#: its share); at its bound within a jump not yet taken
_FROZEN, _IDLE, _GROW, _WAIT, _STOPPED = range(5)
#: the kinds of a node's events in :class:`_Events` (see there)
_STOP, _JOIN, _CHILD, _SWITCH, _CAP, _LCAP = range(6)


#: a jump's record: its leaves' units and its capped nodes' bundles where it started, and the
#: leaves that reached their bounds within it (at them once the jump is taken)
_Jump = tuple[dict[int, float], dict[int, list[float]], list[int]]


def _merge(into: _Jump, rec: _Jump, stopped: bool = True) -> None:
    """A jump's record into another's, the earliest start of each leaf and bundle kept."""
    for i, units in rec[0].items():
        into[0].setdefault(i, units)
    for v, bundle in rec[1].items():
        into[1].setdefault(v, bundle)
    if stopped:
        into[2].extend(rec[2])


class _Window:
    """The events at one level of the root: the jumps taken there (their leaves' units and their
    capped nodes' bundles where they started, and how many reached the root), the leaves at
    their bounds, the limits met by growth."""

    def __init__(self) -> None:
        self.jump = False
        self.releases = 0
        self.leaves: dict[int, float] = {}
        self.bundles: dict[int, list[float]] = {}
        self.stopped: list[int] = []
        self.caps: list[tuple[int, int]] = []


class _Events(_Fluid):
    """The event-driven filling of :meth:`YuniKornFair.entitlement` on a tree of groups (see the
    module docstring: the same answers as :class:`_Fluid`'s knots, found one event at a time).

    Nodes are numbered: the leaves ``0..n-1`` (as the users), the groups ``n..``, the root last.
    Each group keeps its children's level ``l0`` and bundle ``b0`` there, the slope ``beta`` of
    its bundle in its level (and ``cnt``: how many growing leaves below request each resource, so
    that a slope is exactly 0 when none does), the resource ``js`` its share is read on and
    whether that share is ``flat`` in its level, and a heap of its next events in its own level:
    a leaf at its bound (``_STOP``) or its own limit (``_LCAP``), a waiting child reached
    (``_JOIN``), a child group's next event read as its share (``_CHILD``), its share read on
    another resource (``_SWITCH``), its limit reached (``_CAP``).  An event costs the depth of its
    node (a heap push or two per level); the root's capacity or a group's limit binding, or a
    jump cut by one, rebuilds the nodes from the allocation as the knot filling restarts."""

    def __init__(self, instance: Instance, priority_first: bool) -> None:
        super().__init__(instance, priority_first)
        q, n, m = self.q, self.n, self.m
        groups = list(q.groups)
        self.root = root = n + len(groups)
        self.N = N = root + 1
        ident = {**self.index, **{g: n + k for k, g in enumerate(groups)}}
        names = [*self.users, *groups]
        self.parent = [root] * N
        for name, c in ident.items():
            p = q.parent[name]
            self.parent[c] = root if p is None else ident[p]
        self.kids: list[list[int]] = [[] for _ in range(N)]
        for v, node in [(root, None), *((ident[g], g) for g in groups)]:
            self.kids[v] = [ident[c] for c in q.children(node)]
        depth = {root: 0, **{ident[g]: len(q.path(g)) + 1 for g in groups}}
        self.downward = sorted(depth, key=depth.__getitem__)  #: the groups, parents before children
        self.up_of = np.array(self.parent, dtype=int)
        #: the groups a level at a time, from the root down
        self.by_depth = [
            np.array([v for v in self.downward if depth[v] == d], dtype=int) for d in range(max(depth.values()) + 1)
        ]
        # each node's children by current priority, highest first (one class: priority-disabled)
        self.cls_of = [0] * N
        self.classes: list[list[list[int]]] = [[] for _ in range(N)]
        for v in self.downward:
            kids = self.kids[v]
            if not self.priority_first:
                self.classes[v] = [list(kids)]
                continue
            ranks = sorted({self.prio[names[c]] for c in kids}, reverse=True)
            self.classes[v] = [[c for c in kids if self.prio[names[c]] == p] for p in ranks]
            for k, cl in enumerate(self.classes[v]):
                for c in cl:
                    self.cls_of[c] = k
        D = self.D
        self.Dl: list[list[float]] = D.tolist()
        self.req: list[list[int]] = (D > 0).astype(int).tolist()
        self.kl: list[float] = self.k.tolist()
        # a leaf stops at its bound; its own limit is a cap (a jump passing it is cut at its end)
        self.stop: list[float] = self.T.tolist()
        self.stopl: list[float] = (self.T * self.k).tolist()
        own = np.array([q.limit[u] for u in self.users], dtype=float).reshape(n, m)
        with np.errstate(divide="ignore", invalid="ignore"):
            at_cap = np.where((D > 0) & np.isfinite(own), own / np.where(D > 0, D, 1.0), np.inf).min(axis=1)
        self.llim: list[list[float]] = own.tolist()
        self.capstop: list[float] = at_cap.tolist()
        self.capl: list[float] = (at_cap * self.k).tolist()
        self.inv: list[list[float]] = [[]] * N
        self.lim: list[list[float]] = [[]] * N
        for g in groups:
            self.inv[ident[g]] = self.inverse[g].tolist()
            self.lim[ident[g]] = np.asarray(q.limit[g], dtype=float).tolist()
        self.lim[root] = self.R.tolist()
        self.capped = [any(math.isfinite(b) for b in self.lim[v]) for v in range(N)]
        self.leaves_of = {ident[g]: self.under[g].tolist() for g in groups}  #: each group's leaves
        self.above: list[list[int]] = [[ident[g] for g in q.path(name)] for name in names]  #: groups above
        self.above.append([])

    # -- a node's numbers ----------------------------------------------------------------------
    def push(self, v: int, val: float, kind: int, a: int, t: int) -> None:
        """An event of ``kind`` at level ``val`` of node ``v`` (``a``: its child, leaf or
        resource; ``t``: the token it holds valid while the child's or node's own matches)."""
        self.seq += 1
        heapq.heappush(self.heap[v], (val, self.seq, kind, a, t))

    def push_stops(self, v: int, i: int) -> None:
        """Growing leaf ``i``'s stops under ``v``: its bound, and its own limit if that comes first."""
        self.push(v, self.stopl[i], _STOP, i, self.tok[i])
        if self.capl[i] < self.stopl[i]:
            self.push(v, self.capl[i], _LCAP, i, self.tok[i])

    def valid(self, v: int, e: tuple[float, int, int, int, int]) -> bool:
        kind, a, t = e[2], e[3], e[4]
        if kind == _STOP or kind == _CHILD or kind == _LCAP:
            return self.st[a] == _GROW and self.tok[a] == t
        if kind == _JOIN:
            return self.st[a] == _WAIT and self.tok[a] == t
        return self.stok[v] == t

    def nxt(self, v: int) -> float:
        """The level of ``v``'s next event (its heap cleared of events no longer valid)."""
        h = self.heap[v]
        while h and not self.valid(v, h[0]):
            heapq.heappop(h)
        return h[0][0] if h else math.inf

    def _share_at(self, v: int, lv: float) -> float:
        """:func:`fair_share` of group ``v`` when its children are at level ``lv`` (on this segment)."""
        b, bt, l0, iv = self.b0[v], self.beta[v], self.l0[v], self.inv[v]
        return max(iv[j] * (b[j] + bt[j] * (lv - l0)) for j in range(self.m))

    def bundle(self, v: int, lv: float) -> list[float]:
        """Group ``v``'s bundle when its children are at level ``lv`` (on this segment)."""
        b, bt, d = self.b0[v], self.beta[v], lv - self.l0[v]
        return [b[j] + bt[j] * d for j in range(self.m)]

    def level_of(self, c: int, lp: float) -> float:
        """The level of growing group ``c``'s children when its parent's are at ``lp``: its share
        is ``lp`` (read on ``js``, linear on this segment)."""
        j = self.js[c]
        return self.l0[c] + (lp / self.inv[c][j] - self.b0[c][j]) / self.beta[c][j]

    def level_now(self, v: int) -> float:
        """Where ``v``'s children are now: derived from its parent's while it grows with it,
        else where it was left (a flat, collecting, waiting or idle node moves by itself)."""
        if v == self.root:
            return self.l0[v]
        if self.st[v] == _GROW and not self.flat[v] and v not in self.collect:
            return self.level_of(v, self.level_now(self.parent[v]))
        return self.l0[v]

    def child_share(self, c: int) -> float:
        """A child's share where it is (a leaf's units are ``x``; a group's children at ``l0``)."""
        if c < self.n:
            return self.x[c] * self.kl[c]
        return self._share_at(c, self.l0[c])

    # -- a node's own events and its entry in its parent ---------------------------------------
    def refresh(self, v: int) -> None:
        """``v``'s share read on the highest line (of two within rounding, the steeper: it leads
        from here), flat when no growing leaf requests that resource, and its own events again:
        where another line overtakes it, where its limit (the root: the capacity) is reached."""
        m = self.m
        self.stok[v] += 1
        t = self.stok[v]
        b, bt, cnt, lv = self.b0[v], self.beta[v], self.cnt[v], self.l0[v]
        if v != self.root:
            iv = self.inv[v]
            vals = [iv[j] * b[j] for j in range(m)]
            slopes = [iv[j] * bt[j] if cnt[j] else 0.0 for j in range(m)]
            top = max(vals)
            near = top - LEVEL_TIE * max(1.0, abs(top))  # lines as high within rounding: the steeper leads
            js = max(range(m), key=lambda j: (vals[j] >= near, slopes[j], vals[j]))
            self.ties += vals[js] != top
            self.js[v], self.flat[v] = js, cnt[js] == 0
            cross = math.inf
            for j in range(m):
                if slopes[j] > slopes[js]:
                    cross = min(cross, lv + (vals[js] - vals[j]) / (slopes[j] - slopes[js]))
            if cross < math.inf:
                self.push(v, cross, _SWITCH, v, t)
        if self.capped[v]:
            lim = self.lim[v]
            for j in range(m):
                if cnt[j] and bt[j] > 0 and math.isfinite(lim[j]) and (v, j) not in self.hit:
                    self.push(v, lv + (lim[j] - b[j]) / bt[j], _CAP, j, t)

    def contribution(self, c: int) -> tuple[list[float], list[int]] | None:
        """What growing group ``c`` adds to its parent's slope and counts (``None``: it does not
        grow with its parent's level: flat, collecting, or not growing)."""
        if self.st[c] != _GROW or self.flat[c] or c in self.collect:
            return None
        j = self.js[c]
        sigma = self.inv[c][j] * self.beta[c][j]
        return [b / sigma for b in self.beta[c]], list(self.cnt[c])

    def set_contribution(self, c: int) -> None:
        """``c``'s parent's slope with ``c``'s contribution as it now is (an exact 0 where no
        growing leaf below requests a resource)."""
        p = self.parent[c]
        old, new = self.contrib[c], self.contribution(c)
        bt, cnt = self.beta[p], self.cnt[p]
        for j in range(self.m):
            if old is not None:
                bt[j] -= old[0][j]
                cnt[j] -= old[1][j]
            if new is not None:
                bt[j] += new[0][j]
                cnt[j] += new[1][j]
        for j in range(self.m):
            if cnt[j] == 0:
                bt[j] = 0.0
        self.contrib[c] = new

    def enter(self, c: int) -> None:
        """Growing group ``c``'s next event in its parent's heap, at the parent's level where it
        happens: ``c``'s share there (flat: its share now, the event happens at once)."""
        if self.st[c] != _GROW:
            return
        self.tok[c] += 1
        e = self.nxt(c)
        if e == math.inf:
            return
        if c in self.collect:  # what remains at its level happens now
            val = self.l0[self.parent[c]]  # the parent is anchored where it is
        else:
            val = self._share_at(c, self.l0[c]) if self.flat[c] else self._share_at(c, e)
        self.push(self.parent[c], val, _CHILD, c, self.tok[c])

    def up(self, v: int) -> None:
        """After ``v``'s growth changed: ``v`` and its ancestors refreshed, each anchored where it is."""
        while True:
            self.refresh(v)
            if v == self.root:
                return
            p = self.parent[v]
            self.anchor(p, self.level_now(p))
            self.set_contribution(v)
            self.enter(v)
            v = p

    def anchor(self, v: int, lv: float) -> None:
        """``v``'s bundle kept at level ``lv`` (where it is: the slope is about to change)."""
        d = lv - self.l0[v]
        if d:
            self.b0[v] = self.bundle(v, lv)
            self.l0[v] = lv

    # -- the nodes from an allocation ----------------------------------------------------------
    def rebuild(self, x: np.ndarray, growable: np.ndarray) -> None:
        """Every node from the leaves' units ``x``: what the knot filling does at each event."""
        N = self.N
        self.x: list[float] = x.tolist()
        self.st = [_FROZEN] * N  #: each node's state in its parent
        self.tok = [0] * N  #: the token of its events in its parent's heap
        self.stok = [0] * N  #: the token of its own events (switch, limits)
        self.heap: list[list[tuple[float, int, int, int, int]]] = [[] for _ in range(N)]
        self.l0 = [0.0] * N
        self.b0: list[list[float]] = [[] for _ in range(N)]
        self.beta: list[list[float]] = [[] for _ in range(N)]
        self.cnt: list[list[int]] = [[] for _ in range(N)]
        self.js = [0] * N
        self.flat = [False] * N
        self.contrib: list[tuple[list[float], list[int]] | None] = [None] * N
        self.ngrow: list[list[int]] = [[] for _ in range(N)]  #: growable children per class
        self.cls = [0] * N  #: the class served
        self.seq = 0
        self.hit: set[tuple[int, int]] = set()  #: limits met in this window (not pushed again)
        #: flat nodes moving at their parents' levels: their runs ``[moved, where they started,
        #: their children's level, moved at that level, those jumps' record]``
        self.run: dict[int, list[Any]] = {}
        self.held: dict[int, tuple[list[float], _Jump]] = {}  #: jumps held, waiting for a level
        #: nodes whose share a jump raised, taking the other jumps at their level: ``[moved,
        #: record, level]``
        self.collect: dict[int, list[Any]] = {}
        gl = growable.tolist()
        for i in range(self.n):
            self.st[i] = _IDLE if gl[i] else _FROZEN
        self.build(x)

    def build(self, x: np.ndarray) -> None:
        """Every group from the leaves' units ``x``, children first: the groups' bundles summed a
        level of the tree at a time (numpy), then each seated."""
        bundles = np.zeros((self.N, self.m))
        bundles[: self.n] = x[:, None] * self.D
        np.add.at(bundles, self.up_of[: self.n], bundles[: self.n])
        for level in self.by_depth[:0:-1]:  # the deepest groups first, the root's children last
            np.add.at(bundles, self.up_of[level], bundles[level])
        rows: list[list[float]] = bundles.tolist()
        for v in reversed(self.downward):
            self.ngrow[v] = [sum(1 for c in cl if self.st[c] != _FROZEN) for cl in self.classes[v]]
            self.cls[v] = next((k for k, g in enumerate(self.ngrow[v]) if g), len(self.ngrow[v]))
            self.b0[v] = rows[v]
            self.seat(v)
            if v != self.root:
                self.st[v] = _IDLE if self.cls[v] < len(self.classes[v]) else _FROZEN

    def seat(self, v: int) -> None:
        """Serve v's current class: its growable children at the lowest share grow, the others wait."""
        m = self.m
        self.beta[v], self.cnt[v] = [0.0] * m, [0] * m
        self.heap[v] = []
        served = []
        for c in self.kids[v]:
            self.contrib[c] = None
        if self.cls[v] < len(self.classes[v]):
            served = [c for c in self.classes[v][self.cls[v]] if self.st[c] != _FROZEN]
        shares = [self.child_share(c) for c in served]
        lev = min(shares, default=0.0)
        self.l0[v] = lev
        for c, s in zip(served, shares):
            self.tok[c] += 1
            if s <= lev + LEVEL_TIE * max(1.0, abs(lev)):
                self.ties += s != lev
                self.st[c] = _GROW
                if c < self.n:
                    d, k = self.Dl[c], self.kl[c]
                    for j in range(m):
                        self.beta[v][j] += d[j] / k
                        self.cnt[v][j] += self.req[c][j]
                    self.push_stops(v, c)
                else:
                    self.set_contribution(c)
                    self.enter(c)
            else:
                self.st[c] = _WAIT
                self.push(v, s, _JOIN, c, self.tok[c])
        for cl in self.classes[v][self.cls[v] + 1 :]:
            for c in cl:
                if self.st[c] != _FROZEN:
                    self.st[c] = _IDLE
        self.refresh(v)

    # -- the filling -----------------------------------------------------------------------------
    def fill(self) -> tuple[np.ndarray, int]:
        """Event by event until nothing grows.  The events at one level of the root (within
        ``LEVEL_TIE``) are one window: its jumps are taken together, in a straight line from
        where they started, as the knot filling takes them (:meth:`finish`)."""
        x = np.zeros(self.n)
        growable = self.T > 0
        self.rebuild(x, growable)
        events = windows = 0
        limit = 50 * self.N + 100
        while self.ngrow_any(self.root) and windows < limit:
            start = self.nxt(self.root)
            if start == math.inf:
                break
            start = max(start, self.l0[self.root])
            end = start + LEVEL_TIE * max(1.0, abs(start))
            self.window = _Window()
            first = True
            while (val := self.nxt(self.root)) <= end and windows < limit:
                windows += 1
                if not first and val > start:
                    self.ties += 1
                first = False
                self.process()
            self.ties += max(0, self.window.releases - 1)
            events += self.finish()
        return self.materialize(), events

    def ngrow_any(self, v: int) -> bool:
        """Whether ``v`` has a growable child left."""
        return self.cls[v] < len(self.classes[v])

    def process(self) -> None:
        """The next event: down the root's heap to the node it is at, each node on the way moved
        to its level there; a flat node on the way moves at its parent's level (its run); the
        event applied, the way refreshed bottom-up, a run that ended released."""
        path: list[int] = []
        levels: list[float] = []
        v = self.root
        while True:
            self.nxt(v)
            e = self.heap[v][0]
            path.append(v)
            levels.append(e[0])
            if e[2] != _CHILD:
                break
            v = e[3]
        levels[0] = max(levels[0], self.l0[self.root])
        for idx in range(1, len(path)):  # an event already passed happens where the node is
            c = path[idx]
            now = self.l0[c] if self.flat[c] or c in self.collect else self.level_of(c, levels[idx - 1])
            levels[idx] = max(levels[idx], now)
        # a flat node on the path moves at its parent's level: its run, released when it ends
        for idx in range(1, len(path)):
            f = path[idx]
            if self.flat[f] and f not in self.run:
                self.run[f] = [[0.0] * self.m, self.snapshot(f), self.l0[f], [0.0] * self.m, ({}, {}, [])]
        for idx in range(len(path) - 1, -1, -1):
            v, lv = path[idx], levels[idx]
            d = [b * (lv - self.l0[v]) for b in self.beta[v]]
            b0 = self.b0[v]
            self.b0[v] = [b0[j] + d[j] for j in range(self.m)]
            self.l0[v] = lv
            if v in self.collect:
                at = self.collect[v][0]
                for j in range(self.m):
                    at[j] += d[j]
            if v in self.run:
                r = self.run[v]
                for j in range(self.m):
                    r[0][j] += d[j]
                self.ties += r[2] < lv <= r[2] + LEVEL_TIE * max(1.0, abs(lv))
                if lv > r[2] + LEVEL_TIE * max(1.0, abs(lv)):  # its children moved on: earlier jumps are behind
                    r[1][2].extend(r[4][2])
                    r[2], r[3], r[4] = lv, [0.0] * self.m, ({}, {}, [])
        node = path[-1]
        e = heapq.heappop(self.heap[node])
        kind, a = e[2], e[3]
        w = self.window
        running = [v for v in path if v in self.run or v in self.collect]  # jumps under way
        if kind == _LCAP and running:
            pass  # a jump passes a queue's own limit: the jump is cut at its end (finish)
        elif kind == _STOP or kind == _LCAP:
            self.x[a] = self.stop[a] if kind == _STOP else self.capstop[a]
            self.st[a] = _STOPPED
            d, k = self.Dl[a], self.kl[a]
            bt, cnt = self.beta[node], self.cnt[node]
            for j in range(self.m):
                bt[j] -= d[j] / k
                cnt[j] -= self.req[a][j]
                if cnt[j] == 0:
                    bt[j] = 0.0
            if not running:
                w.stopped.append(a)
            else:  # the stop is real once the innermost jump under way is taken
                inner = running[-1]
                (self.run[inner][1][2] if inner in self.run else self.collect[inner][1][2]).append(a)
        elif kind == _JOIN:
            self.st[a] = _GROW
            self.tok[a] += 1
            if a < self.n:
                d, k = self.Dl[a], self.kl[a]
                for j in range(self.m):
                    self.beta[node][j] += d[j] / k
                    self.cnt[node][j] += self.req[a][j]
                self.push_stops(node, a)
            else:
                self.contrib[a] = None
                self.set_contribution(a)
                self.enter(a)
                if a in self.held:
                    dB, rec = self.held.pop(a)
                    self.release(a, dB, rec)
        elif kind == _CAP:
            self.hit.add((node, a))
            if not running:
                w.caps.append((node, a))
        # refresh the path bottom-up; a run that has ended is released
        for idx in range(len(path) - 1, -1, -1):
            v = path[idx]
            self.refresh(v)
            if idx > 0:
                self.set_contribution(v)
                self.enter(v)
                self.check_collect(v)
                if v in self.run and (not self.flat[v] or self.st[v] != _GROW or self.nxt(v) == math.inf):
                    r = self.run.pop(v)
                    r[1][2].extend(r[4][2])
                    self.release(v, r[0], r[1])

    def release(self, u: int, dB: list[float], rec: _Jump) -> None:
        """The jump ``dB`` of u's bundle (its leaves before it: ``rec``) passes to u's ancestors,
        each taking it at its parent's level while its share does not rise; one whose share
        rises holds it, waiting until its parent's level reaches its new share."""
        a = self.parent[u]
        while True:
            la = self.level_now(a)
            if self.capped[a] and a not in rec[1]:
                rec[1][a] = self.bundle(a, la)
            self.anchor(a, la)
            self.b0[a] = [self.b0[a][j] + dB[j] for j in range(self.m)]
            if a == self.root:
                w = self.window
                w.jump = True
                for i, units in rec[0].items():
                    w.leaves.setdefault(i, units)
                for v, bundle in rec[1].items():
                    w.bundles.setdefault(v, bundle)
                w.stopped += rec[2]
                w.releases += 1
                self.refresh(a)
                return
            p = self.parent[a]
            rises = self.st[a] == _GROW and self._share_at(a, la) > self.level_now(p) + LEVEL_TIE * max(1.0, abs(la))
            if a in self.collect:  # rising already: it takes every jump at its level
                at, at_rec, _ = self.collect[a]
                _merge(at_rec, rec)
                for j in range(self.m):
                    at[j] += dB[j]
                return
            if a in self.run:
                acc, run_rec, _, at, at_rec = self.run[a]
                _merge(at_rec, rec)  # the jumps at its children's present level, this one too
                for j in range(self.m):
                    at[j] += dB[j]
                if rises:  # its run ends below that level; it collects the jumps there, then holds them
                    del self.run[a]
                    self.release(a, [acc[j] - at[j] + dB[j] for j in range(self.m)], run_rec)
                    self.collect[a] = [at, at_rec, self.l0[a]]
                    self.check_collect(a)
                    return
                _merge(run_rec, rec, stopped=False)
                for j in range(self.m):
                    acc[j] += dB[j]
                return
            if rises:
                self.collect[a] = [list(dB), ({**rec[0]}, {**rec[1]}, list(rec[2])), la]
                self.up(a)
                self.check_collect(a)
                return
            a = p

    def check_collect(self, a: int) -> None:
        """A collecting node holds its jumps once nothing more happens at its level."""
        if a not in self.collect:
            return
        at, rec, lv = self.collect[a]
        if self.nxt(a) > lv + LEVEL_TIE * max(1.0, abs(lv)):
            del self.collect[a]
            self.hold(a, at, rec)
        else:
            self.enter(a)

    def hold(self, a: int, dB: list[float], rec: _Jump) -> None:
        """``a`` holds the jump ``dB`` (its bundle has it, its ancestors not): it waits at its
        new share, and takes the jump when its parent's level reaches it (:meth:`process`)."""
        p = self.parent[a]
        self.anchor(p, self.level_now(p))
        self.st[a] = _WAIT
        self.set_contribution(a)
        self.tok[a] += 1
        self.push(p, self._share_at(a, self.l0[a]), _JOIN, a, self.tok[a])
        self.held[a] = (dB, rec)
        self.refresh(a)
        self.up(p)

    def snapshot(self, f: int) -> _Jump:
        """The growable leaves under f where they are, and the bundles of its capped nodes."""
        leaves: dict[int, float] = {}
        bundles: dict[int, list[float]] = {}

        def walk(v: int, lv: float) -> None:
            if self.capped[v]:
                bundles[v] = self.bundle(v, lv)
            for c in self.kids[v]:
                s = self.st[c]
                if s not in (_GROW, _WAIT):
                    continue
                if c < self.n:
                    leaves[c] = lv / self.kl[c] if s == _GROW else self.x[c]
                else:
                    walk(c, self.level_of(c, lv) if s == _GROW and not self.flat[c] else self.l0[c])
                    if c in self.held:  # its jump not taken yet: where it was
                        for i, units in self.held[c][1][0].items():
                            leaves[i] = min(leaves.get(i, units), units)
                        for u, was in self.held[c][1][1].items():
                            bundles[u] = [min(a, b) for a, b in zip(bundles.get(u, was), was)]

        walk(f, self.l0[f])
        return leaves, bundles, []

    def finish(self) -> int:
        """The end of a window: its jumps taken in a straight line from where they started,
        cut where the first limit or the capacity binds (a queue's own limit too), as
        :meth:`_Fluid.step` cuts them; a limit reached or a jump cut: the nodes rebuilt from the
        allocation after :meth:`_Fluid.freeze`; leaves at their bounds: frozen, their parents
        serving their next classes.  1 if it was an event."""
        w = self.window
        theta = 1.0
        if w.jump:
            hi_x = self.materialize()
            for i, units in w.leaves.items():
                for j, bound in enumerate(self.llim[i]):
                    lo_j, hi_j = units * self.Dl[i][j], hi_x[i] * self.Dl[i][j]
                    if hi_j > bound and hi_j != lo_j:
                        theta = min(theta, (bound - lo_j) / (hi_j - lo_j))
            waiting: dict[int, list[float]] = {}  # held jumps' bundles: where they were, the earliest holding
            for _, rec in self.held.values():
                for v, was in rec[1].items():
                    waiting[v] = [min(a, b) for a, b in zip(waiting[v], was)] if v in waiting else was
            for v, lo in w.bundles.items():
                hi = waiting[v] if v in waiting else self.bundle(v, self.level_now(v))
                for j, bound in enumerate(self.lim[v]):
                    if hi[j] > bound and hi[j] != lo[j]:
                        theta = min(theta, (bound - lo[j]) / (hi[j] - lo[j]))
        if w.caps and not w.jump and all(v != self.root for v, _ in w.caps):
            self.restart_under(w.caps, w.stopped)
            return 1
        if theta < 1.0 or w.caps:
            x = self.materialize()
            if w.jump and theta < 1.0:
                # a jump cut: the knot filling reads it between two knots whose levels, one jump
                # apart, it computes by different sums (apart by their rounding): a tie
                self.ties += 1
                theta = max(theta, 0.0)
                for i, units in w.leaves.items():
                    x[i] = min(self.T[i], units + theta * (x[i] - units))
            growable = np.array([s != _FROZEN for s in self.st[: self.n]])
            self.rebuild(x, self.freeze(x, growable))
            return 1
        hit, self.hit = self.hit, set()
        for v, _ in hit:
            self.up(v)
        if w.stopped:
            for i in w.stopped:
                self.st[i] = _FROZEN
                self.drop(i)
            return 1
        return 0

    def restart_under(self, caps: list[tuple[int, int]], stopped: list[int]) -> None:
        """Groups' limits met by growth (no jump, not the capacity): the queues requesting the
        resource under each freeze, as :meth:`_Fluid.freeze` freezes them, and the subtrees
        below are rebuilt from the allocation (the rest of the tree is where the knot filling's
        restart puts it: every growing node at its parent's level)."""
        x = self.materialize()
        frozen = set(stopped)
        for v, j in caps:
            frozen.update(i for i in self.leaves_of[v] if self.Dl[i][j] > 0)
        tops = {v for v, _ in caps}
        tops = {v for v in tops if not any(a in tops for a in self.above[v])}  # the outermost
        for i in stopped:
            if not any(a in tops for a in self.above[i]):  # elsewhere: at its bound
                self.st[i] = _FROZEN
                self.drop(i)
        for top in sorted(tops, key=lambda v: len(self.above[v])):
            for i in self.leaves_of[top]:
                self.x[i] = float(x[i])
                if self.st[i] != _FROZEN:
                    self.st[i] = _FROZEN if i in frozen else _IDLE
            self.anchor(self.parent[top], self.level_now(self.parent[top]))
            self.build_under(top)
            if self.cls[top] < len(self.classes[top]):
                self.set_contribution(top)
                self.enter(top)
                self.up(self.parent[top])
            else:
                self.drop(top)
        hit, self.hit = self.hit, set()
        for v, _ in hit:
            if self.st[v] != _FROZEN:
                self.up(v)

    def build_under(self, top: int) -> None:
        """The groups under ``top`` and ``top`` from the leaves' units, children first."""
        order = [top]
        for v in order:
            order += [c for c in self.kids[v] if c >= self.n]
        for v in reversed(order):
            bundle = [0.0] * self.m
            for c in self.kids[v]:
                b = self.b0[c] if c >= self.n else [self.x[c] * d for d in self.Dl[c]]
                for j in range(self.m):
                    bundle[j] += b[j]
            self.ngrow[v] = [sum(1 for c in cl if self.st[c] != _FROZEN) for cl in self.classes[v]]
            self.cls[v] = next((k for k, g in enumerate(self.ngrow[v]) if g), len(self.ngrow[v]))
            self.b0[v] = bundle
            self.seat(v)
            if v != top:
                self.st[v] = _IDLE if self.cls[v] < len(self.classes[v]) else _FROZEN
            self.run.pop(v, None)
            self.held.pop(v, None)

    def drop(self, c: int) -> None:
        """Child c has no growable leaf left: its parent serves its next class, or drops too."""
        p = self.parent[c]
        self.anchor(p, self.level_now(p))  # where it is, before its slope changes
        self.st[c] = _FROZEN
        if c >= self.n and self.contrib[c] is not None:
            self.set_contribution(c)
        k = self.cls_of[c]
        self.ngrow[p][k] -= 1
        if self.ngrow[p][k] or k != self.cls[p]:
            self.up(p)
            return
        while self.cls[p] < len(self.classes[p]) and not self.ngrow[p][self.cls[p]]:
            self.cls[p] += 1
        if self.cls[p] == len(self.classes[p]):
            if p != self.root:
                self.drop(p)
            return
        self.seat(p)  # its bundle is kept where it is (anchored above)
        if p != self.root:
            self.up(p)

    def materialize(self) -> np.ndarray:
        """Every leaf's units now (a held jump's leaves where they were)."""
        level = [0.0] * self.N
        for v in self.downward:  # parents first: each level read once
            grows = v != self.root and self.st[v] == _GROW and not self.flat[v] and v not in self.collect
            level[v] = self.level_of(v, level[self.parent[v]]) if grows else self.l0[v]
        x = np.array(self.x)
        for i in range(self.n):
            if self.st[i] == _GROW:
                x[i] = level[self.parent[i]] / self.kl[i]
        for _, (leaves, _, _) in self.held.values():  # held jumps not taken: the earliest holds
            for i, lo in leaves.items():
                x[i] = min(x[i], lo)
        return np.minimum(x, self.T)


class _Caps:
    """The caps in play for one set of growable leaves (:meth:`_Fluid._cap_columns`) as arrays:
    their ``bounds``; a cap over one leaf (a queue's own ``limit``: most caps of a flat tree) is
    read in one product for all of them, a cap over more by ``np.add.accumulate``, which adds in
    order as :func:`_load` does, so the loads are the same floats; ``askers``: the leaves each cap
    freezes when saturated (those requesting its resource), beside their caps (``asking``).
    :meth:`_Fluid.over` runs at every step of an event's search, :meth:`_Fluid.step` and
    :meth:`_Fluid.freeze` at every event: a sum in Python over every cap's members cost a flat tree
    of 10,000 queues more than the rest of its filling."""

    def __init__(self, fluid: _Fluid, growable: np.ndarray) -> None:
        members, starts = fluid.shape.members, fluid.shape.starts
        caps, resources = np.nonzero(fluid._asks(growable))
        self.bounds = fluid.shape.bounds[caps, resources]
        sizes = np.diff(np.append(starts, len(members)))[caps]
        self.single = np.flatnonzero(sizes == 1)
        self.single_leaf = members[starts[caps[self.single]]]
        self.single_d = fluid.D[self.single_leaf, resources[self.single]]
        self.multi = []
        for c in np.flatnonzero(sizes > 1).tolist():
            leaves = fluid.caps[caps[c]][0]
            self.multi.append((c, leaves, fluid.D[leaves, resources[c]]))
        askers = [self.single_leaf, *[leaves[d > 0] for _, leaves, d in self.multi]]
        asking = [self.single, *[np.full(int((d > 0).sum()), c) for c, _, d in self.multi]]
        self.askers, self.asking = np.concatenate(askers).astype(int), np.concatenate(asking).astype(int)

    def loads(self, x: np.ndarray) -> np.ndarray:
        """Each cap's load when the leaves hold ``x`` units."""
        out = np.empty(len(self.bounds))
        out[self.single] = x[self.single_leaf] * self.single_d
        for c, leaves, d in self.multi:
            out[c] = np.add.accumulate(x[leaves] * d)[-1]
        return out


def _load(units: list[float], terms: list[tuple[int, float]]) -> float:
    """``sum(units[i] * d for i, d in terms)`` added in order, as numpy's ``sum(axis=0)`` adds the
    rows of ``x[leaves, None] * D`` (the same floats)."""
    (i, d), *rest = terms
    load = units[i] * d
    for i, d in rest:
        load += units[i] * d
    return load


def _shares(bundles: np.ndarray, inv: np.ndarray, zero: np.ndarray) -> np.ndarray:
    """:func:`fair_share` of each row of ``bundles`` (``inv``: ``1 / d_j`` where ``d_j > 0``, else 0;
    ``zero``: ``d_j <= 0``, where any use gives share 1)."""
    s = (bundles * inv).max(axis=1, initial=0.0)
    return np.where((zero & (bundles > 0)).any(axis=1), np.maximum(s, 1.0), s)


def _distinct_pairs(seg: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs ``(seg, t)``, ordered by ``seg`` then ``t``."""
    order = np.lexsort((t, seg))
    seg, t = seg[order], t[order]
    keep = np.ones(len(seg), dtype=bool)
    keep[1:] = (seg[1:] != seg[:-1]) | (t[1:] != t[:-1])
    return seg[keep], t[keep]


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` for values without NaN, without its general machinery (the event
    search calls it on a few numbers at every knot)."""
    values = np.sort(values)
    keep = np.empty(len(values), dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _right_at(levels: np.ndarray, units: np.ndarray, points: np.ndarray) -> np.ndarray:
    """A piecewise-linear function given by knots, right-continuous, constant beyond its ends, at
    each of ``points`` (rows)."""
    return _between(units, *_position(levels, points, 1))


def _left_at(levels: np.ndarray, units: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Its limits from the left at ``points``."""
    return _between(units, *_position(levels, points, 0))


def _position(levels: np.ndarray, points: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where ``points`` fall among knots at ``levels`` (``side`` 1: the value there, 0: the limit
    from the left): ``(k, t, inner)``, on the segment from knot ``k`` at ``t`` of its length where
    ``inner`` (``levels[k] <= point <= levels[k + 1]``, the two apart), else at the nearest end ``k``."""
    k = np.searchsorted(levels, points, side="right" if side else "left") - 1
    inner = (k >= 0) & (k < len(levels) - 1)
    k = np.minimum(np.maximum(k, 0), len(levels) - 1)  # np.clip's wrapper costs more
    t = np.zeros(len(points))
    a = k[inner]
    t[inner] = (points[inner] - levels[a]) / (levels[a + 1] - levels[a])
    return k, t, inner


def _between(units: np.ndarray, k: np.ndarray, t: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """``units`` at the positions :func:`_position` gives."""
    out = units[k]
    if inner.any():
        a = k[inner]
        out[inner] = units[a] + t[inner, None] * (units[a + 1] - units[a])
    return out


def simulate(instance: Instance, pieces: int = 500, priority_first: bool = True) -> np.ndarray:
    """YuniKorn's scheduling loop in pieces of ``1 / pieces`` of each queue's request: again and
    again the first queue in the sort (descending the tree: priority, then share of the current
    allocation) whose next piece fits every limit on its path and the capacity receives it; until
    no piece fits.  Bundles ``(n, m)``; the fluid :meth:`YuniKornFair.entitlement` is its limit."""
    t = _Tree(instance, priority_first)
    x = np.zeros(t.n)
    piece = t.T / pieces
    room = np.array([c.copy() for _, c in t.caps], dtype=float)
    member = np.array([np.isin(np.arange(t.n), leaves) for leaves, _ in t.caps])  # (caps, n)
    while True:
        need = piece[:, None] * t.D  # (n, m)
        fits = (piece > 0) & (x + piece <= t.T * (1 + 1e-12))
        for k in range(len(t.caps)):
            fits &= ~member[k] | ((need <= room[k] * (1 + 1e-12)) | (need == 0)).all(axis=1)
        if not fits.any():
            break
        i = _first_fitting(t, None, x, fits)
        x[i] += piece[i]
        room -= member[:, i, None] * need[i]
    return x[:, None] * t.D


def _first_fitting(t: _Tree, node: str | None, x: np.ndarray, fits: np.ndarray) -> int:
    kids = [c for c in t.q.children(node) if fits[t.under[c]].any()]

    def key(c: str) -> tuple[float, float, float]:
        s = t.share(c, x)
        return (-t.prio[c], s, 0.0) if t.priority_first else (s, -t.prio[c], 0.0)

    best = min(kids, key=key)
    return _first_fitting(t, best, x, fits) if t.q.is_group(best) else t.index[best]


__all__ = [
    "PRIORITY_DISABLED",
    "YuniKornFair",
    "current_priority",
    "fair_max",
    "fair_share",
    "go_stable_sort",
    "simulate",
]
