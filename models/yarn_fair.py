"""Hadoop YARN FairScheduler fair shares under the DRF policy: instantaneous and steady.

Source read: apache/hadoop (Apache-2.0), ``hadoop-yarn-project/hadoop-yarn/hadoop-yarn-server/
hadoop-yarn-server-resourcemanager/src/main/java/org/apache/hadoop/yarn/server/resourcemanager/
scheduler/fair/``:

* ``policies/ComputeFairShares.java`` at commit 3c22fd7d0282b082af35f94cdde0d977ca435d13:
  ``computeShares`` (instantaneous) and ``computeSteadyShares`` (steady) both call
  ``computeSharesInternal``, which first sets the *fixed* shares (``handleFixedFairShares``,
  ``getFairShareIfFixed``: a queue whose maxShare is ``<= 0`` gets 0; for the instantaneous share
  an inactive queue gets 0; a queue of weight ``<= 0`` gets its minShare, or 0), then splits
  ``totalResource = min(sum of the others' maxShares, max(parent's share - fixed, 0))`` among the
  others by a binary search on the weight-to-resource ratio ``R``: ``rMax`` doubles from 1 until
  ``resourceUsedWithWeightToResourceRatio(rMax) >= totalResource``, then
  ``COMPUTE_FAIR_SHARES_ITERATIONS = 25`` halvings of ``[left, right]`` (stopping early when the
  resources used equal ``totalResource`` exactly), and every queue gets
  ``computeShare(right)``: ``(long) min(max(weight * R, minShare), maxShare)``, the cast
  truncating to a whole unit.  Sums saturate at ``Long.MAX_VALUE`` (``safeAdd``).
* ``policies/DominantResourceFairnessPolicy.java`` (commit
  0951726233270fe1f30a303305a2f6f354a93d14; newer versions loop over every resource type the
  same way): ``computeShares`` / ``computeSteadyShares`` call ``ComputeFairShares`` once per
  resource type, *each resource separately*.
* ``FSParentQueue.java`` (commit 03a55131e163dc6929f0b76aac892668ad9ca538): ``updateInternal``
  computes the children's fair shares from the parent's fair share, then recurses;
  ``recomputeSteadyShares`` does the same for steady shares.  The root's share is the cluster's
  resources (``FairScheduler.update``).  ``updateDemand`` caps a parent's demand (the sum of its
  children's) at its maxShare, but demand does not enter the fair share: a queue's fair share
  is independent of how much it asks for.
* ``FSQueue.java`` (commit 4c4f28c9e7f76762346d990b043c6b77d3ac627a): ``getMaxShare`` returns
  ``componentwiseMax(maxResources, minResources)``; ``isActive`` is "has a runnable app" (a
  parent: one below it).  Weights are Java ``float``.

**The model.**  ``guarantee`` is minResources, ``limit`` maxResources (none: ``Long.MAX_VALUE``),
``weight`` the queue weight at every node, ``groups`` the parent queues; a queue is active when
it or a queue below it has a ``request``.  Every number is floored to a whole unit first (YARN's
resources are ``long`` counts: MB, vcores), weights are rounded to ``float32`` as Java stores
them, and the arithmetic above is repeated step for step in Python doubles (the same IEEE
operations as Java's), so the shares are YARN's to the unit.  ``yarn-fair`` gives the
instantaneous fair share (inactive queues get 0, their siblings share what they leave),
``yarn-fair-steady`` the steady fair share (every configured queue counts).

**Cost.**  The sibling sets of one generation of the tree (every parent at one depth, every
resource) are searched side by side, step for step as each would be alone: numpy over their
queues, sums of ``long`` values exact (two 31-bit halves, saturating as ``safeAdd``), so
O(queues x (doublings + 25)) per generation, linear in the queues for any shape of tree (searching
each set alone cost a Python loop per queue per step, and a parent's call per set).

**The program** (:meth:`YarnFair.program`) is the water level YARN approximates, as a sequence
of pulp LPs, for each resource separately, for each parent from the root down (``x`` the
children's shares, ``P`` the parent's share, the fixed children as above)::

    max-min_q  x_q / w_q   s.t.  minShare_q <= x_q <= max(maxShare_q, minShare_q),
                                 sum_q x_q <= min(sum_q maxShare_q, P - fixed)

(every child at its minShare when those already exceed the total, as YARN's search gives).  It
differs from the fast path only by YARN's truncation: YARN stops at a ratio ``R`` where the
*truncated* shares reach the total, so its shares are whole units, a share can be below the
water level by less than one unit, and above it when the truncated sum jumps past the total
(three equal queues on 10 vcores get 4 each: 12 of 10).  The search's 25 halvings leave ``R``
within ``rMax / 2^25`` of that point.  Fair shares are entitlements, not an allocation: YARN's
can exceed the parent's share (by truncation, or when minShares do).

Three queues of weight 2, 1 and 1 on 40 units (``TestComputeFairShares`` style):

>>> yarn_compute_shares([YarnSchedulable(2.0), YarnSchedulable(1.0), YarnSchedulable(1.0)], 40)
[20, 10, 10]
>>> yarn_compute_shares([YarnSchedulable(1.0)] * 3, 10)  # truncation overshoots: 12 of 10
[4, 4, 4]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, lp_name, lp_names, solve_lp
from fairalloc.core.deferred import deferred
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, active, queues_of
from fairalloc.core.registry import register
from fairalloc.core.tolerances import SATURATION
from fairalloc.engines.online import OnlinePolicy
from fairalloc.engines.queue_policy import QueuePolicy

if TYPE_CHECKING:
    import pulp
else:
    pulp = deferred("pulp")

#: ``ComputeFairShares.COMPUTE_FAIR_SHARES_ITERATIONS``
ITERATIONS = 25
#: ``Long.MAX_VALUE``: an unset maxResources, and where ``safeAdd`` saturates
LONG_MAX = 2**63 - 1


# -- ComputeFairShares, one resource -------------------------------------------------------
@dataclass(frozen=True)
class YarnSchedulable:
    """One queue for one resource: its weight, minShare, maxShare (already ``>= minShare``, as
    ``FSQueue.getMaxShare`` makes it) and whether it is active."""

    weight: float
    min_share: int = 0
    max_share: int = LONG_MAX
    active: bool = True


def java_long(x: float) -> int:
    """Java's ``(long)`` cast of a double: toward zero, saturating, NaN to 0."""
    if math.isnan(x):
        return 0
    if x >= 2.0**63:
        return LONG_MAX
    if x <= -(2.0**63):
        return -(2**63)
    return int(x)


def java_float(w: float) -> float:
    """A weight as Java's ``float`` holds it (``0.1`` is ``0.10000000149011612``)."""
    return float(np.float32(w))


def _safe_add(a: int, b: int) -> int:
    s = a + b
    return LONG_MAX if s > LONG_MAX or s < -(2**63) else s


def compute_share(s: YarnSchedulable, ratio: float) -> int:
    """``ComputeFairShares.computeShare``: ``(long) min(max(weight * R, minShare), maxShare)``."""
    share = s.weight * ratio
    share = max(share, float(s.min_share))
    share = min(share, float(s.max_share))
    return java_long(share)


def resource_used(ratio: float, scheds: Sequence[YarnSchedulable]) -> int:
    """``ComputeFairShares.resourceUsedWithWeightToResourceRatio``."""
    taken = 0
    for s in scheds:
        taken = _safe_add(taken, compute_share(s, ratio))
        if taken == LONG_MAX:
            break
    return taken


def fixed_share(s: YarnSchedulable, steady: bool) -> int | None:
    """``ComputeFairShares.getFairShareIfFixed`` (``None`` where YARN returns -1)."""
    if s.max_share <= 0:
        return 0
    if not steady and not s.active:
        return 0
    if s.weight <= 0:
        return max(s.min_share, 0)
    return None


def search_ratio(scheds: Sequence[YarnSchedulable], total: int) -> float:
    """The ratio ``right`` the binary search of ``computeSharesInternal`` ends at."""
    r_max = 1.0
    while resource_used(r_max, scheds) < total:
        r_max *= 2.0
    left, right = 0.0, r_max
    for _ in range(ITERATIONS):
        mid = (left + right) / 2.0
        used = resource_used(mid, scheds)
        if used == total:
            right = mid
            break
        if used < total:
            left = mid
        else:
            right = mid
    return right


def yarn_compute_shares(scheds: Sequence[YarnSchedulable], total: int, steady: bool = False) -> list[int]:
    """``ComputeFairShares.computeSharesInternal``: the shares of ``scheds`` of ``total`` units."""
    shares: list[int | None] = [fixed_share(s, steady) for s in scheds]
    taken = 0
    for v in shares:
        if v is not None:
            taken = _safe_add(taken, v)
    free = [s for s, v in zip(scheds, shares, strict=True) if v is None]
    if not free:
        return [int(v or 0) for v in shares]
    total_max = 0
    for s in free:
        total_max = _safe_add(s.max_share, total_max)
        if total_max == LONG_MAX:
            break
    target = min(total_max, max(total - taken, 0))
    ratio = search_ratio(free, target)
    return [compute_share(s, ratio) if v is None else v for s, v in zip(scheds, shares, strict=True)]


# -- the queue tree --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Tree:
    """The integer configuration of every node: what YARN's queues hold, one row per node
    (``index``), whole units as ``int64`` (``LONG_MAX`` fits)."""

    q: Queues
    capacity: list[int]  # (m,) whole units
    index: dict[str, int]
    weight: NDArray[np.float64]  # (N,) as Java's float
    min_share: NDArray[np.int64]  # (N, m)
    max_share: NDArray[np.int64]  # (N, m), >= min_share
    active: NDArray[np.bool_]  # (N,)

    def sched(self, node: str, j: int) -> YarnSchedulable:
        i = self.index[node]
        lo, hi = int(self.min_share[i, j]), int(self.max_share[i, j])
        return YarnSchedulable(float(self.weight[i]), lo, hi, bool(self.active[i]))


def _long(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """:func:`java_long` of non-negative doubles, elementwise."""
    big = x >= 2.0**63
    return np.where(big, LONG_MAX, np.where(big, 0.0, x).astype(np.int64))


def _whole(v: NDArray[np.float64], missing: int) -> NDArray[np.int64]:
    """Each amount floored to a whole unit as Java's ``(long)`` cast saturates it, at least 0 (not
    finite: ``missing``)."""
    finite = np.isfinite(v)
    return np.where(finite, _long(np.maximum(np.floor(np.where(finite, v, 0.0)), 0.0)), missing)


def yarn_tree(instance: Instance, name: str = "yarn-fair") -> _Tree:
    """The configuration YARN would hold for ``instance``: whole units, float weights."""
    instance.scalar_weights(name)  # per-resource weights are refused
    q = queues_of(instance)
    nodes = [*q.groups, *q.leaf_names]
    index = {v: i for i, v in enumerate(nodes)}
    m = len(q.resources)
    lo = _whole(np.array([q.guarantee[v] for v in nodes], dtype=float).reshape(-1, m), 0)
    hi = np.maximum(_whole(np.array([q.limit[v] for v in nodes], dtype=float).reshape(-1, m), LONG_MAX), lo)
    alive = np.zeros(len(nodes), dtype=bool)
    alive[[index[u] for u in instance.users]] = active(instance)
    for parents, kids, owner in reversed(list(q.generations())):  # a group is active when a child is
        if parents != [None]:  # the root has no row
            up = np.bincount(owner, weights=alive[[index[c] for c in kids]], minlength=len(parents)) > 0
            alive[[index[p] for p in parents if p is not None]] |= up
    weight = np.array([q.weight[v] for v in nodes], dtype=float).astype(np.float32).astype(float)  # java_float
    capacity = [int(c) for c in _whole(np.asarray(instance.capacity, dtype=float), 0)]
    return _Tree(q, capacity, index, weight, lo, hi, alive)


# -- every sibling set of a generation at once -----------------------------------------------
#: the low 31 bits of a ``long``
_LOW = 2**31 - 1


def _sums(values: NDArray[np.int64], seg: NDArray[np.intp], sets: int) -> NDArray[np.int64]:
    """Per set, ``safeAdd`` over its non-negative values: ``min(sum, Long.MAX_VALUE)``, exact.  The
    values are added as two 31-bit halves (each half's sum fits ``int64`` up to 2^31 values), so an
    unset maxResources (``Long.MAX_VALUE``) saturates its set as YARN's sum does."""
    high, low = np.zeros(sets, dtype=np.int64), np.zeros(sets, dtype=np.int64)
    np.add.at(high, seg, values >> 31)
    np.add.at(low, seg, values & _LOW)
    high += low >> 31
    over = high > LONG_MAX >> 31  # the low half is below 2^31 now: past LONG_MAX only by the high half
    return np.where(over, LONG_MAX, (np.where(over, 0, high) << 31) + (low & _LOW))


@dataclass(frozen=True)
class _Free:
    """The queues whose share is not fixed, of every sibling set being searched (``seg``)."""

    weight: NDArray[np.float64]
    lo: NDArray[np.float64]  # minShare as a double, as computeShare compares it
    hi: NDArray[np.float64]
    seg: NDArray[np.intp]

    def share(self, ratio: NDArray[np.float64]) -> NDArray[np.int64]:
        """:func:`compute_share` of each queue at its set's ratio."""
        return _long(np.minimum(np.maximum(self.weight * ratio[self.seg], self.lo), self.hi))

    def used(self, ratio: NDArray[np.float64], which: NDArray[np.bool_]) -> NDArray[np.int64]:
        """:func:`resource_used` of the sets ``which`` (the others: 0)."""
        on = which[self.seg]
        sub = _Free(self.weight[on], self.lo[on], self.hi[on], self.seg[on])
        return _sums(sub.share(ratio), sub.seg, len(ratio))


def search_ratios(free: _Free, target: NDArray[np.int64]) -> NDArray[np.float64]:
    """:func:`search_ratio` for every set at once, step for step: each set doubles ``rMax`` until its
    resources used reach its target, then halves ``[left, right]`` 25 times or until they equal it.
    Each step costs O(queues of the sets still searching)."""
    r_max = np.ones(len(target))
    going = np.ones(len(target), dtype=bool)
    while going.any():
        going &= free.used(r_max, going) < target
        r_max[going] *= 2.0
    left, right = np.zeros(len(target)), r_max
    going[:] = True
    for _ in range(ITERATIONS):
        if not going.any():
            break
        mid = (left + right) / 2.0
        used = free.used(mid, going)
        hit, low = going & (used == target), going & (used < target)
        left = np.where(low, mid, left)
        right = np.where(going & ~low, mid, right)  # equal (then stop) or above
        going &= ~hit
    return right


def _generation(
    tree: _Tree, rows: NDArray[np.intp], owner: NDArray[np.intp], held: NDArray[np.float64], steady: bool
) -> NDArray[np.float64]:
    """:func:`yarn_compute_shares` of every sibling set of a generation, every resource: ``held``
    the parents' shares ``(P, m)``, the result the children's ``(K, m)``."""
    m = held.shape[1]
    seg = (owner[:, None] * m + np.arange(m)).ravel()  # one set per parent and resource
    w = np.repeat(tree.weight[rows], m)
    lo, hi = tree.min_share[rows].ravel(), tree.max_share[rows].ravel()
    idle = hi <= 0
    if not steady:  # the instantaneous share: an inactive queue gets 0
        idle |= ~np.repeat(tree.active[rows], m)
    free = ~idle & (w > 0)  # getFairShareIfFixed returns -1
    fixed = np.where(idle, 0, lo)  # weight <= 0: the minShare
    sets = held.size
    taken = _sums(np.where(free, 0, fixed), seg, sets)
    total_max = _sums(np.where(free, hi, 0), seg, sets)
    target = np.minimum(total_max, np.maximum(_long(held.ravel()) - taken, 0))
    searched = _Free(w[free], lo[free].astype(float), hi[free].astype(float), seg[free])
    ratio = search_ratios(searched, np.where(np.bincount(seg[free], minlength=sets) > 0, target, 0))
    out = fixed.copy()
    out[free] = searched.share(ratio)
    return out.reshape(len(rows), m).astype(float)


def _at_once(tree: _Tree, steady: bool) -> dict[str, NDArray[np.float64]]:
    """Every node's share per resource, as :func:`_down` with YARN's split gives it, a generation at
    a time: O(queues x (doublings + 25)) numpy work per generation, whatever the tree's shape."""
    share = np.zeros((len(tree.index), len(tree.capacity)))
    for parents, kids, owner in tree.q.generations():
        if parents == [None]:  # the root's share is the cluster
            held = np.array([[float(c) for c in tree.capacity]])
        else:
            held = share[[tree.index[p] for p in parents if p is not None]]
        rows = np.array([tree.index[c] for c in kids], dtype=np.intp)
        share[rows] = _kept_generation(tree, rows, owner, held, steady)
    return dict(zip(tree.index, share, strict=True))


#: sibling sets whose shares are kept (a replay asks again and again for the same few; the bound caps memory)
MEMO = 4096
_SETS: dict[tuple[object, ...], NDArray[np.float64]] = {}


def _kept_generation(
    tree: _Tree, rows: NDArray[np.intp], owner: NDArray[np.intp], held: NDArray[np.float64], steady: bool
) -> NDArray[np.float64]:
    """:func:`_generation`, each sibling set's shares kept: a set's search reads only its parent's
    share and its children's weights, min and max shares and activity (each set is searched on its
    own, step for step, whatever else is searched beside it), so only the sets not seen before are
    searched (one leaf gaining its first job changes its own set, not its cousins')."""
    bounds = np.searchsorted(owner, np.arange(len(held) + 1))  # each parent's children are consecutive
    spans = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    keys = [_set_key(tree, rows[a:b], held[p], steady) for p, (a, b) in enumerate(spans)]
    found = {p: _SETS.get(key) for p, key in enumerate(keys)}
    missing = [p for p, got in found.items() if got is None]
    if missing:
        sel = np.concatenate([np.arange(*spans[p]) for p in missing])
        counts = [spans[p][1] - spans[p][0] for p in missing]
        got = _generation(tree, rows[sel], np.repeat(np.arange(len(missing)), counts), held[missing], steady)
        if len(_SETS) + len(missing) > MEMO:
            _SETS.clear()
        start = 0
        for p, count in zip(missing, counts):
            found[p] = _SETS[keys[p]] = got[start : start + count]
            start += count
    return np.concatenate([found[p] for p in range(len(spans))])


def _set_key(tree: _Tree, rows: NDArray[np.intp], held: NDArray[np.float64], steady: bool) -> tuple[object, ...]:
    """All that one sibling set's search reads (an inactive child counts only for the instantaneous share)."""
    active = b"" if steady else tree.active[rows].tobytes()
    return (
        steady,
        len(rows),
        held.tobytes(),
        tree.weight[rows].tobytes(),
        tree.min_share[rows].tobytes(),
        tree.max_share[rows].tobytes(),
        active,
    )


#: how one sibling set is split: (tree, children, resource j, the parent's share) -> shares
_Split = Callable[[_Tree, list[str], int, float], list[float]]


def _down(tree: _Tree, split: _Split) -> dict[str, np.ndarray]:
    """Every node's share per resource, from the root down, each parent's split by ``split``."""
    m = len(tree.q.resources)
    out: dict[str, np.ndarray] = {}
    stack: list[tuple[str | None, np.ndarray]] = [(None, np.array([float(c) for c in tree.capacity]))]
    while stack:
        node, share = stack.pop()
        kids = tree.q.children(node)
        if not kids:
            continue
        got = np.array([split(tree, kids, j, float(share[j])) for j in range(m)], dtype=float).T
        for k, child in enumerate(kids):
            out[child] = got[k]
            stack.append((child, got[k]))
    return out


def yarn_fair_shares(instance: Instance, steady: bool = False, name: str = "yarn-fair") -> dict[str, np.ndarray]:
    """Every queue's (group's and leaf's) fair share per resource, as YARN computes it."""
    return _at_once(yarn_tree(instance, name), steady)


# -- the water level as LPs ------------------------------------------------------------------
@dataclass
class _Level:
    """One sibling set's water level for one resource, as LP rounds."""

    name: str
    resource: str
    parent: str | None
    kids: list[str]
    weight: list[float]
    lo: list[float]
    hi: list[float]
    total: float
    record: Callable[[str, pulp.LpProblem], None]

    def lp(self, frozen: dict[int, float], rnd: int) -> tuple[pulp.LpProblem, pulp.LpVariable]:
        where = "root" if self.parent is None else self.parent
        prob = pulp.LpProblem(lp_name(f"{self.name}_{where}_{self.resource}_round{rnd}"), pulp.LpMaximize)
        ratio = prob.add_variable("ratio", lowBound=0)
        names = lp_names("level", self.kids)
        x = [
            prob.add_variable(n, lowBound=self.lo[k], upBound=max(min(self.hi[k], self.total), self.lo[k]))
            for k, n in enumerate(names)
        ]
        prob += ratio
        for k in range(len(self.kids)):
            if k in frozen:
                prob += x[k] == frozen[k], lp_name(f"frozen_{self.kids[k]}")
            else:
                prob += x[k] >= self.weight[k] * ratio, lp_name(f"share_{self.kids[k]}")
        pool = "capacity" if self.parent is None else "pool"
        prob += pulp.lpSum(x) <= self.total, lp_name(f"{pool}_{self.resource}")
        return prob, ratio

    def solve(self) -> list[float]:
        """Progressive filling: raise the ratio, freeze children at their maxShare, until the
        total binds."""
        if sum(self.lo) >= self.total * (1 - SATURATION):
            return list(self.lo)  # minShares take it all: YARN's search ends at R ~ 0
        frozen: dict[int, float] = {}
        for rnd in range(1, len(self.kids) + 2):
            prob, ratio = self.lp(frozen, rnd)
            self.record(f"{self.parent or 'root'} {self.resource} round {rnd}", prob)
            solve_lp(prob, f"{self.name} {self.parent or 'root'} {self.resource} round {rnd}")
            t = float(ratio.varValue or 0.0)
            x = [frozen.get(k, min(max(w * t, lo), hi)) for k, (w, lo, hi) in enumerate(self._bounds())]
            at_max = [self.weight[k] * t >= self.hi[k] * (1 - SATURATION) for k in range(len(x))]
            capped = [k for k in range(len(x)) if k not in frozen and at_max[k]]
            if not capped or sum(x) >= self.total * (1 - SATURATION):
                return x
            frozen.update({k: self.hi[k] for k in capped})
        return x  # every child frozen at its maxShare

    def _bounds(self) -> list[tuple[float, float, float]]:
        return list(zip(self.weight, self.lo, self.hi, strict=True))


def _program_split(name: str, steady: bool, record: Callable[[str, pulp.LpProblem], None]) -> _Split:
    def split(tree: _Tree, kids: list[str], j: int, share: float) -> list[float]:
        scheds = [tree.sched(c, j) for c in kids]
        fixed = [fixed_share(s, steady) for s in scheds]
        free = [k for k, v in enumerate(fixed) if v is None]
        out = [float(v or 0) for v in fixed]
        if not free:
            return out
        total = min(float(sum(scheds[k].max_share for k in free)), max(share - sum(out), 0.0))
        level = _Level(
            name,
            tree.q.resources[j],
            tree.q.parent[kids[0]],
            [kids[k] for k in free],
            [scheds[k].weight for k in free],
            [float(scheds[k].min_share) for k in free],
            [float(scheds[k].max_share) for k in free],
            total,
            record,
        )
        for k, v in zip(free, level.solve(), strict=True):
            out[k] = v
        return out

    return split


def _leaf_bundles(instance: Instance, shares: dict[str, np.ndarray]) -> np.ndarray:
    return np.array([shares[u] for u in instance.users], dtype=float).reshape(instance.n, instance.m)


def _group_info(tree: _Tree, shares: dict[str, np.ndarray]) -> dict[str, Any]:
    return {"group_shares": {g: shares[g].tolist() for g in tree.q.groups if g in shares}}


@register("yarn-fair")
class YarnFair(QueuePolicy):
    """YARN's instantaneous fair share under DRF (only active queues count)."""

    summary = "Hadoop YARN FairScheduler (DRF): instantaneous fair share per resource, whole units"
    about = (
        "Only active queues count; unlike DRF, demand never enters, and whole-unit truncation can promise "
        "siblings more than their parent holds."
    )
    section = "9.3"
    solver = "numpy"
    steady = False
    per_resource = True  # DominantResourceFairnessPolicy.computeShares: one resource type at a time
    #: for fairalloc.testing.check_mechanism: the program is the water level YARN truncates
    program_differs = (
        "the program is the water level; YARN truncates to whole units and stops its search where the "
        "truncated shares reach the total (tests/test_yarn_fair.py bounds the gap by max(1, k - 1) units)"
    )

    def online(self, settings: dict[str, Any]) -> OnlinePolicy:
        """YARN's scheduling cycle (assignment by the DRF comparator, preemption for starved
        applications): :class:`fairalloc.models.yarn_cycle.YarnCycle`."""
        from fairalloc.models.yarn_cycle import Arithmetic, YarnCycle

        def split(apps: int, total: int) -> list[int]:  # FSLeafQueue.updateInternal: apps of weight 1
            return yarn_compute_shares([YarnSchedulable(1.0)] * apps, total)

        return YarnCycle(settings, Arithmetic(yarn_fair_shares, split))

    def entitlement(self, instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
        tree = yarn_tree(instance, self.name)
        shares = _at_once(tree, self.steady)
        return _leaf_bundles(instance, shares), _group_info(tree, shares)

    def program(self, instance: Instance) -> Program:
        kind = "steady (every queue)" if self.steady else "instantaneous (active queues)"
        description = f"""{self.name}: YARN's {kind} fair share as water levels, one LP sequence per resource per
parent queue from the root down (x: the children's shares, P: the parent's share, fixed children set aside):
  max-min_q x_q / w_q  s.t.  minShare_q <= x_q <= max(maxShare_q, minShare_q),
                             sum_q x_q <= min(sum_q maxShare_q, P - fixed)
round by round: max ratio s.t. x_q >= w_q ratio (unfrozen); children at their maxShare freeze."""
        tree = yarn_tree(instance, self.name)
        first: list[tuple[str, object]] = []

        def record(title: str, lp: pulp.LpProblem) -> None:
            first.append((title, lp))

        # build the root's first LP now, so the program can be read before it is solved
        kids = tree.q.children(None)
        if kids:
            _opening_lp(self.name, tree, kids, self.steady, record)

        def solve(p: Program) -> Allocation:
            p.models.clear()
            shares = _down(tree, _program_split(self.name, self.steady, lambda t, lp: p.models.append((t, lp))))
            bundles = _leaf_bundles(instance, shares)
            info = {**_group_info(tree, shares), "lps": len(p.models)}
            return Allocation.from_bundles(instance, bundles, self.name, "program", "pulp", info, entitlement=True)

        return Program(
            self.name,
            description,
            first,
            solve=solve,
            later="the later rounds, and the LPs of every parent below the root, are built as the sequence is solved",
        )


def _opening_lp(
    name: str, tree: _Tree, kids: list[str], steady: bool, record: Callable[[str, pulp.LpProblem], None]
) -> None:
    """The root's first LP for the first resource, built (not solved) for reading: over the children
    whose share is not fixed (every child, if all are)."""
    scheds = [tree.sched(c, 0) for c in kids]
    fixed = [fixed_share(s, steady) for s in scheds]
    free = [k for k, v in enumerate(fixed) if v is None] or list(range(len(kids)))
    taken = float(sum(v or 0 for v in fixed))
    total = min(float(sum(scheds[k].max_share for k in free)), max(float(tree.capacity[0]) - taken, 0.0))
    level = _Level(
        name,
        tree.q.resources[0],
        None,
        [kids[k] for k in free],
        [scheds[k].weight for k in free],
        [float(scheds[k].min_share) for k in free],
        [float(scheds[k].max_share) for k in free],
        total,
        record,
    )
    prob, _ = level.lp({}, 1)
    record(f"root {tree.q.resources[0]} round 1", prob)


@register("yarn-fair-steady")
class YarnFairSteady(YarnFair):
    """YARN's steady fair share under DRF (every queue counts, active or not)."""

    summary = "Hadoop YARN FairScheduler (DRF): steady fair share per resource (all queues), whole units"
    about = (
        "Every configured queue counts, active or not; unlike DRF, demand never enters, and truncation can "
        "promise more than the parent holds."
    )
    section = "9.3"
    steady = True


__all__ = [
    "ITERATIONS",
    "LONG_MAX",
    "YarnFair",
    "YarnFairSteady",
    "YarnSchedulable",
    "compute_share",
    "fixed_share",
    "java_float",
    "java_long",
    "resource_used",
    "search_ratio",
    "yarn_compute_shares",
    "yarn_fair_shares",
    "yarn_tree",
]
