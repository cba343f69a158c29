"""yarn-fair and yarn-fair-steady's entitlement at commit e2bcc7b (fairalloc/models/yarn_fair.py),
kept as the oracle for the fast one: each sibling set's binary search of
``ComputeFairShares.computeSharesInternal`` run queue by queue in Python integers, one parent and
one resource at a time.  Its functions are copied verbatim; the registered classes and the program
are left out: :func:`bundles` is ``YarnFair.entitlement`` (``steady``: ``YarnFairSteady``'s).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, active, queues_of

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
    """The integer configuration of every node: what YARN's queues hold."""

    q: Queues
    capacity: list[int]  # (m,) whole units
    weight: dict[str, float]
    min_share: dict[str, list[int]]
    max_share: dict[str, list[int]]
    active: dict[str, bool]

    def sched(self, node: str, j: int) -> YarnSchedulable:
        return YarnSchedulable(self.weight[node], self.min_share[node][j], self.max_share[node][j], self.active[node])


def _whole(v: float, missing: int) -> int:
    return missing if not math.isfinite(v) else max(java_long(math.floor(v)), 0)


def yarn_tree(instance: Instance, name: str = "yarn-fair") -> _Tree:
    """The configuration YARN would hold for ``instance``: whole units, float weights."""
    instance.scalar_weights(name)  # per-resource weights are refused
    q = queues_of(instance)
    on = dict(zip(instance.users, active(instance).tolist(), strict=True))
    nodes = [*q.groups, *q.leaf_names]
    lo = {v: [_whole(float(g), 0) for g in q.guarantee[v]] for v in nodes}
    hi = {v: [max(_whole(float(h), LONG_MAX), lo[v][j]) for j, h in enumerate(q.limit[v])] for v in nodes}
    alive = {v: (any(on[u] for u in q.leaves(v)) if q.is_group(v) else on[v]) for v in nodes}
    capacity = [_whole(float(c), 0) for c in instance.capacity]
    return _Tree(q, capacity, {v: java_float(q.weight[v]) for v in nodes}, lo, hi, alive)


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


def _yarn_split(steady: bool) -> _Split:
    def split(tree: _Tree, kids: list[str], j: int, share: float) -> list[float]:
        scheds = [tree.sched(c, j) for c in kids]
        return [float(v) for v in yarn_compute_shares(scheds, java_long(share), steady)]

    return split


def yarn_fair_shares(instance: Instance, steady: bool = False, name: str = "yarn-fair") -> dict[str, np.ndarray]:
    """Every queue's (group's and leaf's) fair share per resource, as YARN computes it."""
    return _down(yarn_tree(instance, name), _yarn_split(steady))


def _leaf_bundles(instance: Instance, shares: dict[str, np.ndarray]) -> np.ndarray:
    return np.array([shares[u] for u in instance.users], dtype=float).reshape(instance.n, instance.m)


def _group_info(tree: _Tree, shares: dict[str, np.ndarray]) -> dict[str, Any]:
    return {"group_shares": {g: shares[g].tolist() for g in tree.q.groups if g in shares}}


def bundles(instance: Instance, steady: bool = False) -> tuple[np.ndarray, dict[str, Any]]:
    """``YarnFair.entitlement`` (``YarnFairSteady``'s when ``steady``)."""
    name = "yarn-fair-steady" if steady else "yarn-fair"
    tree = yarn_tree(instance, name)
    shares = _down(tree, _yarn_split(steady))
    return _leaf_bundles(instance, shares), _group_info(tree, shares)


def bundles_as_solved(instance: Instance, steady: bool = False) -> tuple[np.ndarray, dict[str, Any]]:
    """:func:`bundles` as ``fairalloc.solve`` calls an entitlement: under ``np.errstate(all="ignore")``
    (a request of 0 memory with an unbounded ``max_tasks`` multiplies 0 by ``inf``)."""
    with np.errstate(all="ignore"):
        return bundles(instance, steady)
