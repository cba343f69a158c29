"""Hadoop YARN Capacity Scheduler: where its container assignment settles, queue by queue.

Source read: apache/hadoop (Apache-2.0), ``hadoop-yarn-project/hadoop-yarn/hadoop-yarn-server/
hadoop-yarn-server-resourcemanager/src/main/java/org/apache/hadoop/yarn/server/resourcemanager/
scheduler/capacity/``:

* ``CSQueueUtils.java`` at commit 1e3a6efcef2924a7966c44ca63476c853956691d:
  ``updateAbsoluteCapacitiesByNodeLabels`` (a queue's absolute capacity is its ``capacity``
  times its parent's absolute capacity, its absolute maximum its ``maximum-capacity`` times its
  parent's absolute maximum: products of the percentages down the tree) and
  ``updateUsedCapacity`` (a queue's *used capacity* is its used resources divided by its
  guaranteed resources, the guarantee raised to the minimum allocation first; its *absolute used
  capacity* its used resources over the cluster's).
* ``policy/PriorityUtilizationQueueOrderingPolicy.java`` at commit
  ee91492f16528292c4ad173dd018807a63fe6106, ``PriorityQueueComparator.compare``: a parent offers
  each container to its children with a capacity first, least used capacity first (ties: the
  larger absolute capacity), then to its children of capacity 0, least absolute used capacity
  first.  (Queue priorities count only under the ``priority-utilization`` ordering policy, not the
  default ``utilization``: they are not modelled.)
* ``ParentQueue.java`` at commit 74b2c5a433384b609dcd7ba326942c2917b2471a,
  ``assignContainers`` and ``getResourceLimitsOfChild`` (a child's limit is
  ``min(parent limit - parent used + child used, child's absolute maximum)``: children share
  what their parent may still take, each within its own maximum), and ``AbstractCSQueue.java``
  at commit 114d41aeb26291c035dea27590eb6119d1f2d15e, ``canAssignToThisQueue`` (no container
  past the queue's limit).  So a queue above its capacity goes on taking containers others leave
  idle, up to its maximum capacity: *elasticity*.
* ``UsersManager.java`` at commit 2378764142d913003f6b75f6cd9d840f0a45b549,
  ``computeUserLimit``: a user's limit is ``max(currentCapacity / active users,
  currentCapacity * minimum-user-limit-percent / 100)``, capped at ``queue capacity *
  user-limit-factor``.

**The model.**  The Capacity Scheduler's default ``DefaultResourceCalculator`` compares
resources by memory alone: every used capacity, limit and comparison is on memory (the resource
named ``memory-mb``, ``memory`` or ``mem``; else the first resource).  A queue case's
``guarantee`` is a queue's absolute capacity in memory units (``"30%"`` of the cluster), its
``limit`` the absolute maximum capacity (none: its parent's), its ``request`` the leaf queue's
outstanding demand.  The entitlement is the fixed point of assigning arbitrarily small containers
from an empty cluster (the fluid limit: containers much smaller than the queues; ``usage`` enters
:meth:`YarnCapacity.order` and :meth:`YarnCapacity.shares` only, since containers running above
the fixed point stay there until they end or are preempted): at every parent, from the root down,
with ``A`` what the parent holds, each child ``c`` of capacity ``g_c > 0`` reaches the common used
capacity ``lambda`` or its cap::

    x_c = min(lambda g_c, cap_c),   sum_c x_c = min(A, sum_c cap_c)
    cap_c = min(limit_c, request_c)            (a leaf)
    cap_c = min(limit_c, sum_k cap_k)          (a parent, over its children k)

and children of capacity 0 share what is left equally (they come after every sibling with a
capacity, and among themselves by absolute used capacity; a queue without a ``guarantee`` has
capacity 0).  A leaf's bundle is its request scaled to its memory (a request without memory, which
the calculator never limits, is granted whole when it is bounded).  (The preemption monitor's ideal assignment,
``AbstractPreemptableResourceCalculator.computeFixpointAllocation``, is a similar water-filling but
starts from the current usage: it is not this fixed point and is not modelled.)

**Cost.**  The fast path fills every parent of one generation of the tree at once
(:func:`fixed_point_at_once`: the breakpoints of all its sibling sets sorted together, numpy over
the generation's queues), and reads the caps from the leaves up the same way: O(n log n) over the
tree, whatever its shape (a parent's own Python call cost more than its children's numbers).

**The program** (:meth:`YarnCapacity.program`) states each level as LP rounds, for each parent
from the root down: ``max level`` s.t. ``x_c >= G_c level`` (children not frozen), ``0 <= x_c <=
cap_c``, ``sum_c x_c <= A``; the children reaching their cap freeze and the next round raises the
rest, until ``A`` binds; then the same with rate 1 over the children of capacity 0.  It equals the
breakpoint computation (``tests/test_yarn_capacity.py``).

**User limits.**  A leaf queue of a queue case is one tenant, read as *one active user*: the
user limit is then ``queue capacity * user-limit-factor`` (``minimum-user-limit-percent`` never
binds one user).  The importer folds that cap into the leaf's ``limit``; several users sharing a
leaf queue, application limits, reservations, node labels, the ``DominantResourceCalculator``,
queue priorities and preemption are not modelled.

Queues a and b of capacity 30% and 70% (maximum 100%) on 20 GiB, a asking for 12 GiB and b for
4 GiB: b is capped at 4, a takes the rest (elasticity), 12 of its 6 guaranteed:

>>> import fairalloc
>>> from fairalloc.core.queues import Queues
>>> q = Queues.build(["memory-mb"], {"a": {"guarantee": [6144]}, "b": {"guarantee": [14336]}}, [])
>>> inst = fairalloc.Instance([20480], [[12288], [4096]], users=["a", "b"], max_tasks=[1, 1],
...                           resources=["memory-mb"], queues=q)
>>> fairalloc.solve(inst, "yarn-capacity").bundles[:, 0].tolist()
[12288.0, 4096.0]
>>> [round(v, 4) for v in YarnCapacity().shares(inst).values()]  # nothing used yet
[0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, lp_name, lp_names, solve_lp
from fairalloc.core.deferred import deferred
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of, runs
from fairalloc.core.registry import register
from fairalloc.core.tolerances import SATURATION
from fairalloc.engines.queue_policy import QueuePolicy

if TYPE_CHECKING:
    import pulp
else:
    pulp = deferred("pulp")


_Floats = NDArray[np.float64]

#: what a program holds before it is solved
LATER = "the later rounds, and those of the parents below the root, are built as the levels are solved"
#: the names the memory resource goes by (``DefaultResourceCalculator`` compares memory only)
MEMORY_NAMES = ("memory-mb", "memory", "mem")


def memory_index(resources: tuple[str, ...] | list[str]) -> int:
    """The resource ``DefaultResourceCalculator`` looks at: memory, or the first resource."""
    return next((j for j, r in enumerate(resources) if r in MEMORY_NAMES), 0)


#: one sibling set's water level: (their names, rates, caps, amount, which level) -> amounts
#: ``min(lambda rate, cap)``; "which" is "" for the children with a capacity, "capacity 0" after them
Water = Callable[[list[str], list[float], list[float], float, str], list[float]]


def level_fill(
    guarantee: list[float], cap: list[float], amount: float, water: Water | None = None, names: list[str] | None = None
) -> list[float]:
    """``x_c = min(lambda g_c, cap_c)`` with ``sum x_c = min(amount, sum cap_c)``: the common used
    capacity ``lambda`` of children ``g_c > 0``; the children of capacity 0 then share what is left
    equally (each up to its cap).  ``water`` computes each of the two levels (default: exactly, by the
    breakpoints ``cap_c / g_c`` in order; the program: as LP rounds).

    >>> level_fill([6.0, 14.0], [12.0, 4.0], 20.0)
    [12.0, 4.0]
    >>> level_fill([6.0, 14.0, 0.0, 0.0], [2.0, 4.0, 100.0, 1.0], 20.0)
    [2.0, 4.0, 13.0, 1.0]
    """
    x = [0.0] * len(cap)
    left = max(amount, 0.0)
    names = names or [str(c) for c in range(len(cap))]
    for members, key, which in (
        ([c for c, g in enumerate(guarantee) if g > 0], guarantee, ""),
        ([c for c, g in enumerate(guarantee) if g <= 0], [1.0] * len(cap), "capacity 0"),
    ):
        if not members:
            continue
        rates, caps = [key[c] for c in members], [cap[c] for c in members]
        got = (water or _water)([names[c] for c in members], rates, caps, left, which)
        for c, v in zip(members, got, strict=True):
            x[c] = v
        left = max(left - sum(got), 0.0)
    return x


def _water(members: list[str], rate: list[float], cap: list[float], amount: float, which: str = "") -> list[float]:
    """``min(lambda rate_k, cap_k)`` summing to ``min(amount, sum cap)``."""
    if sum(cap) <= amount:
        return list(cap)
    order = sorted(range(len(members)), key=lambda k: cap[k] / rate[k])
    fixed, rest = 0.0, sum(rate)
    level = 0.0
    for k in order:
        stop = cap[k] / rate[k]
        if fixed + stop * rest >= amount:  # the level is reached before k is capped
            level = (amount - fixed) / rest
            break
        fixed += cap[k]
        rest -= rate[k]
    return [min(level * r, c) for r, c in zip(rate, cap, strict=True)]


@dataclass(frozen=True)
class CapacityTree:
    """What the Capacity Scheduler holds of a queue case, in memory units."""

    q: Queues
    resource: str  # the memory resource's name
    total: float  # the cluster's memory
    guarantee: dict[str, float]  # absolute capacity (0 when not given)
    cap: dict[str, float]  # min(absolute maximum, what the subtree asks for)


def capacity_tree(instance: Instance) -> CapacityTree:
    """The tree in memory units: caps from the leaves up, a generation at a time (each group's
    want the sum of its children's caps, in their order): O(queues)."""
    q = queues_of(instance)
    j = memory_index(instance.resources)
    total = float(instance.capacity[j])
    nodes = list(q.parent)
    row = {v: i for i, v in enumerate(nodes)}
    guarantee = np.nan_to_num(np.array([q.guarantee[v][j] for v in nodes], dtype=float))
    limit = np.array([q.limit[v][j] for v in nodes], dtype=float)
    want = np.zeros(len(nodes))  # a group without children wants nothing
    want[[row[u] for u in instance.users]] = instance.demand[:, j] * instance.bounds()
    cap = np.zeros(len(nodes))
    leaves = np.array([row[u] for u in q.leaf_names], dtype=np.intp)
    cap[leaves] = _clamp(limit[leaves], want[leaves], total)
    above = set(q.parent.values())
    childless = np.array([row[g] for g in q.groups if g not in above], dtype=np.intp)
    cap[childless] = _clamp(limit[childless], want[childless], total)
    for parents, kids, owner in reversed(list(q.generations())):
        if parents == [None]:
            continue  # the root has no cap
        up = np.array([row[p] for p in parents if p is not None], dtype=np.intp)
        want[up] = np.add.reduceat(cap[[row[c] for c in kids]], runs(owner))
        cap[up] = _clamp(limit[up], want[up], total)
    return CapacityTree(
        q, instance.resources[j], total, dict(zip(nodes, guarantee.tolist())), dict(zip(nodes, cap.tolist()))
    )


def _clamp(limit: _Floats, want: _Floats, total: float) -> _Floats:
    """``max(min(limit, want, total), 0)`` as Python's ``min`` takes it: a NaN want (0 memory of an
    unbounded request) is passed over."""
    return np.maximum(np.minimum(np.fmin(limit, want), total), 0.0)


def fixed_point(tree: CapacityTree, water: Callable[[str | None], Water] | None = None) -> dict[str, float]:
    """Every queue's memory where container assignment stops, from the root down; ``water(parent)``
    computes the levels of ``parent``'s children (default: exactly)."""
    out: dict[str, float] = {}
    stack: list[tuple[str | None, float]] = [(None, tree.total)]
    while stack:
        node, amount = stack.pop()
        kids = tree.q.children(node)
        rule = water(node) if water is not None else None
        got = level_fill([tree.guarantee[c] for c in kids], [tree.cap[c] for c in kids], amount, rule, kids)
        for c, v in zip(kids, got, strict=True):
            out[c] = v
            if tree.q.is_group(c):
                stack.append((c, v))
    return out


def fixed_point_at_once(tree: CapacityTree) -> dict[str, float]:
    """:func:`fixed_point` with the exact levels, every parent of a generation of the tree at once:
    each sibling set's breakpoints sorted together (O(k log k) for the generation's k queues), so
    O(n log n) over the tree, in numpy."""
    nodes = list(tree.cap)
    row = {v: i for i, v in enumerate(nodes)}
    g = np.array(list(tree.guarantee.values()))
    cap = np.array(list(tree.cap.values()))
    memory = np.zeros(len(nodes))
    for parents, kids, owner in tree.q.generations():
        if parents == [None]:
            amount = np.array([tree.total])
        else:
            amount = memory[[row[p] for p in parents if p is not None]]
        rows = np.array([row[c] for c in kids], dtype=np.intp)
        left = np.maximum(amount, 0.0)
        x = np.zeros(len(kids))
        for members, rate in ((g[rows] > 0, g[rows]), (g[rows] <= 0, np.ones(len(kids)))):
            if members.any():
                x[members] = _waters(rate[members], cap[rows][members], owner[members], left)
                used = np.zeros(len(left))
                used[owner[members][runs(owner[members])]] = np.add.reduceat(x[members], runs(owner[members]))
                left = np.where(
                    np.bincount(owner[members], minlength=len(left)) > 0, np.maximum(left - used, 0.0), left
                )
        memory[rows] = x
    return dict(zip(nodes, memory.tolist()))


def _waters(rate: _Floats, cap: _Floats, owner: NDArray[np.intp], amount: _Floats) -> _Floats:
    """:func:`_water` of every set (``owner``, in runs) at once, on ``amount[owner]``: each set's
    breakpoints ``cap / rate`` in order; its level where the filling first reaches its amount."""
    starts = runs(owner)
    sets = owner[starts]
    whole = np.zeros(len(amount))
    whole[sets] = np.add.reduceat(cap, starts)
    order = np.lexsort((cap / rate, owner))  # stable: ties in configuration order, as sorted() keeps them
    o, c, r = owner[order], cap[order], rate[order]
    stop = c / r
    first = np.zeros(len(amount), dtype=np.intp)
    first[sets] = starts  # the sets' runs start at the same places in sorted order
    fixed = np.cumsum(c) - c
    fixed -= fixed[first[o]]  # the caps below each breakpoint, within its set
    below = np.cumsum(r) - r
    rest = np.zeros(len(amount))
    rest[sets] = np.add.reduceat(r, starts)
    rest = rest[o] - (below - below[first[o]])
    reached = fixed + stop * rest >= amount[o]
    level = np.zeros(len(amount))
    past = np.flatnonzero(reached)
    hit = past[np.unique(o[past], return_index=True)[1]]  # each set's first breakpoint past its amount
    level[o[hit]] = (amount[o[hit]] - fixed[hit]) / rest[hit]
    x = np.minimum(level[owner] * rate, cap)
    return np.where(whole[owner] <= amount[owner], cap, x)


def used_capacity(usage: float, guarantee: float, total: float) -> float:
    """What ``PriorityQueueComparator`` sorts a queue on: its used capacity (used over guaranteed
    memory, ``CSQueueUtils.updateUsedCapacity``), or for a queue of capacity 0 (sorted after the
    others) its absolute used capacity, used over the cluster's memory."""
    if guarantee > 0:
        return usage / guarantee
    return usage / total if total > 0 else 0.0


@register("yarn-capacity")
class YarnCapacity(QueuePolicy):
    """The YARN Capacity Scheduler's fixed point (memory, ``DefaultResourceCalculator``)."""

    summary = "Hadoop YARN Capacity Scheduler: least used capacity first, elastic up to maximum capacity"
    about = (
        "Unlike DRF, demand shapes nothing but caps: queues fill to one used/configured ratio, busy ones "
        "borrowing idle memory up to their maximum."
    )
    section = "9.7"
    solver = "numpy (water level per parent)"

    def entitlement(self, instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
        tree = capacity_tree(instance)
        return _bundles(instance, tree, fixed_point_at_once(tree))

    def program(self, instance: Instance) -> Program:
        description = f"""{self.name}: the YARN Capacity Scheduler's fixed point (memory), one LP sequence per parent
queue from the root down (x: the children's memory, A: the parent's, G: capacities, cap = min(maximum, request)):
  max-min_c x_c / G_c  s.t.  0 <= x_c <= cap_c,  sum_c x_c <= A          (children with G_c > 0)
then the same with G_c = 1 over the children of capacity 0, on what is left;
round by round: max level s.t. x_c >= G_c level (unfrozen); children at their cap freeze."""
        tree = capacity_tree(instance)
        first: list[tuple[str, object]] = []
        kids = tree.q.children(None)
        positive = [c for c in kids if tree.guarantee[c] > 0] or kids
        rates = [tree.guarantee[c] or 1.0 for c in positive]
        caps = [tree.cap[c] for c in positive]
        opening = _round_lp(self.name, tree.resource, None, positive, rates, caps, {}, tree.total, 1)
        first.append(("root round 1", opening))

        def solve(p: Program) -> Allocation:
            p.models.clear()
            memory = fixed_point(tree, lambda parent: _lp_water(self.name, tree.resource, parent, p.models.append))
            bundles, info = _bundles(instance, tree, memory)
            info["lps"] = len(p.models)
            return Allocation.from_bundles(instance, bundles, self.name, "program", "pulp", info, entitlement=True)

        return Program(self.name, description, first, solve=solve, later=LATER)

    def shares(self, instance: Instance) -> dict[str, float]:
        """Each queue's used capacity for its ``usage`` (groups: their leaves' sum); a queue of
        capacity 0: its absolute used capacity (:func:`used_capacity`)."""
        q = queues_of(instance)
        j = memory_index(instance.resources)
        total = float(instance.capacity[j])
        g = {v: float(np.nan_to_num(q.guarantee[v][j])) for v in q.parent}
        return {v: used_capacity(float(q.subtree_usage(v)[j]), g[v], total) for v in (*instance.users, *q.groups)}

    def order(self, instance: Instance) -> list[str]:
        """Leaf queues with a request, in the order the parents offer containers: at every parent
        its children with a capacity by used capacity, ties to the larger capacity, then those of
        capacity 0 by absolute used capacity (then configuration order)."""
        q = queues_of(instance)
        share = self.shares(instance)
        j = memory_index(instance.resources)
        on = dict(zip(instance.users, ((instance.demand > 0).any(axis=1) & (instance.bounds() > 0)).tolist()))

        def listed(node: str | None) -> list[str]:
            kids = [c for c in q.children(node) if q.is_group(c) or on[c]]
            capacity = {c: float(np.nan_to_num(q.guarantee[c][j])) for c in kids}
            key = {c: (capacity[c] <= 0, share[c], -capacity[c]) for c in kids}
            out: list[str] = []
            for c in sorted(kids, key=key.__getitem__):  # stable: configuration order breaks ties
                out += listed(c) if q.is_group(c) else [c]
            return out

        return listed(None)


def _bundles(instance: Instance, tree: CapacityTree, memory: dict[str, float]) -> tuple[np.ndarray, dict[str, Any]]:
    """Each leaf's request scaled to its memory; the groups' used capacities."""
    j = memory_index(instance.resources)
    d, bound = instance.demand, instance.bounds()
    held = np.array([memory[u] for u in instance.users], dtype=float)
    asks = d[:, j] > 0
    scale = np.where(asks, held / np.where(asks, d[:, j], 1.0), 0.0)
    bundles = np.where(asks[:, None], d * scale[:, None], 0.0)
    # no memory asked: the calculator sees nothing to limit
    bundles = np.where(
        (~asks & np.isfinite(bound))[:, None], d * np.where(np.isfinite(bound), bound, 0.0)[:, None], bundles
    )
    levels = {v: used_capacity(memory[v], tree.guarantee[v], tree.total) for v in tree.q.groups if v in memory}
    return bundles, {"group_used_capacity": levels}


# -- the program: each water level as LP rounds ------------------------------------------------------
def _round_lp(
    name: str,
    resource: str,
    parent: str | None,
    kids: list[str],
    rate: list[float],
    cap: list[float],
    frozen: dict[int, float],
    amount: float,
    rnd: int,
    which: str = "",
) -> pulp.LpProblem:
    """One round: the children's memory ``level_<queue>``, their common used capacity ``ratio``."""
    where = "root" if parent is None else parent
    prob = pulp.LpProblem(lp_name(f"{name}_{where}_{which}_round{rnd}".replace("__", "_")), pulp.LpMaximize)
    ratio = prob.add_variable("ratio", lowBound=0)
    x = [prob.add_variable(n, lowBound=0, upBound=cap[k]) for k, n in enumerate(lp_names("level", kids))]
    prob += ratio
    for k, kid in enumerate(kids):
        if k in frozen:
            prob += x[k] == frozen[k], lp_name(f"frozen_{kid}")
        else:
            prob += x[k] >= rate[k] * ratio, lp_name(f"used_capacity_{kid}")
    pool = "capacity" if parent is None else "pool"
    prob += pulp.lpSum(x) <= amount, lp_name(f"{pool}_{resource}")
    return prob


def _lp_water(name: str, resource: str, parent: str | None, record: Callable[[tuple[str, object]], None]) -> Water:
    """The water level of ``parent``'s children as LP rounds: raise the common level, freeze the
    children that reach their cap, until the parent's amount binds or every child is frozen."""
    where = "root" if parent is None else parent

    def water(kids: list[str], rate: list[float], cap: list[float], amount: float, which: str) -> list[float]:
        frozen: dict[int, float] = {}
        x = [0.0] * len(kids)
        for rnd in range(1, len(kids) + 1):
            prob = _round_lp(name, resource, parent, kids, rate, cap, frozen, amount, rnd, which)
            title = " ".join(p for p in (where, which, f"round {rnd}") if p)
            record((title, prob))
            solve_lp(prob, f"{name} {title}")
            t = float(prob.variablesDict()["ratio"].varValue or 0.0)
            x = [frozen.get(k, min(rate[k] * t, cap[k])) for k in range(len(kids))]
            capped = [k for k in range(len(kids)) if k not in frozen and rate[k] * t >= cap[k] * (1 - SATURATION)]
            if not capped or sum(x) >= amount * (1 - SATURATION):
                break
            frozen.update({k: cap[k] for k in capped})
            x = [frozen.get(k, v) for k, v in enumerate(x)]
            if len(frozen) == len(kids):  # every child at its cap
                break
        return x

    return water


def within(tree: CapacityTree, memory: dict[str, float]) -> bool:
    """The fixed point's invariants: every queue within its cap, children within their parent."""
    slack = SATURATION * max(tree.total, 1.0)
    ok = all(memory[v] <= tree.cap[v] + slack for v in memory)
    parents: list[str | None] = [None, *tree.q.groups]
    held: dict[str | None, float] = {None: tree.total, **{g: memory.get(g, 0.0) for g in tree.q.groups}}
    return ok and all(sum(memory[c] for c in tree.q.children(p)) <= held[p] + slack for p in parents)


__all__ = [
    "LATER",
    "MEMORY_NAMES",
    "CapacityTree",
    "YarnCapacity",
    "capacity_tree",
    "fixed_point",
    "fixed_point_at_once",
    "level_fill",
    "memory_index",
    "used_capacity",
    "within",
]
