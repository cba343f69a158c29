"""Kueue's quota tree and dominant resource share: the arithmetic Kueue's fair-sharing entitlement
(:mod:`fairalloc.models.kueue`) and its scheduling cycle (:mod:`fairalloc.models.kueue_cycle`)
both read, kept in one place.

Source read: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7 (2026-08-22),
Apache-2.0: ``pkg/cache/scheduler/resource_node.go`` (``SubtreeQuota``, ``localQuota``, a
cohort's usage as its children's usage above their local quotas, ``potentialAvailable``:
``updateCohortResourceNode``, ``accumulateFromChild``) and ``pkg/cache/scheduler/fair_sharing.go``
(``dominantResourceShare``, ``calculateLendable``, ``CompareDRS``).  The formulas, and how a case
reads into them, are written out in :mod:`fairalloc.models.kueue`'s docstring.

Belongs here: the tree and the share.  Imports: ``fairalloc.core`` only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from fairalloc.core.instance import Instance
from fairalloc.core.queues import queues_of
from fairalloc.core.tolerances import FIT

#: ``math.MaxInt64``: Kueue's integer share of a zero-weight node that borrows
MAX_INT64 = 2**63 - 1
#: the name of the cohort a paper case's queues are read in (it lends the capacity)
_SYNTHETIC_ROOT = ""


class DRS(NamedTuple):
    """Kueue's ``DRS`` of a node: ``rounded`` (``roundedWeightedShare``), ``precise``
    (``PreciseWeightedShare``), ``unweighted`` (``x1000``), the dominant resource ("" if none)."""

    rounded: int
    precise: float
    unweighted: float
    resource: str
    borrowing: bool


def kueue_resource(name: str) -> str:
    """The Kubernetes resource of a case resource: ``cpu`` of ``cpu@spot`` (the Kueue importer's
    spelling of a resource given per flavor; Kubernetes resource and flavor names have no ``@``)."""
    return name.partition("@")[0]


class SharePlan(NamedTuple):
    """What a node's share reads besides its usage, fixed for the tree: its quota per resource,
    each resource's Kubernetes resource, and the lendable summed per Kubernetes resource."""

    quota: list[float]
    bases: list[str]
    lend: dict[str, float]


def share_plan(quota, lendable, resources) -> SharePlan:
    """:class:`SharePlan` of a node (``calculateLendable``: per Kubernetes resource, over its flavors)."""
    bases = [kueue_resource(name) for name in resources]
    lend: dict[str, float] = {}
    for lent, base in zip(lendable, bases, strict=True):
        lend[base] = lend.get(base, 0.0) + float(lent)
    return SharePlan([float(q) for q in quota], bases, lend)


def dominant_resource_share(usage, quota, lendable, weight: float, resources) -> DRS:
    """Kueue's ``dominantResourceShare`` of a node with a parent: ``usage`` and ``quota``
    (``SubtreeQuota``) of the node, ``lendable`` (``potentialAvailable`` of its parent), per
    resource; ``weight`` its fair-sharing weight.  Kueue adds up, per Kubernetes resource, what is
    borrowed and what is lendable over its flavors (``borrowing[fr.Resource]``,
    ``calculateLendable``): ``cpu@on-demand`` and ``cpu@spot`` make one ratio, named ``cpu``."""
    return planned_share([float(u) for u in usage], share_plan(quota, lendable, resources), weight)


def planned_share(usage: list[float], plan: SharePlan, weight: float) -> DRS:
    """:func:`dominant_resource_share` of ``usage`` (plain floats) with the rest read from ``plan``
    (a cycle asks for millions of shares of a few nodes)."""
    if len(usage) != len(plan.quota):
        raise ValueError(f"usage of {len(usage)} resources, quota of {len(plan.quota)}")
    borrowed: dict[str, float] = {}
    for u, q, base in zip(usage, plan.quota, plan.bases):
        b = u - q
        if b > 0:
            borrowed[base] = borrowed.get(base, 0.0) + b
    lend = plan.lend
    unweighted, dominant = 0.0, ""
    for name, b in borrowed.items():
        if lend[name] > 0:
            ratio = b * 1000.0 / lend[name]
            if ratio > unweighted or (ratio == unweighted and name < dominant):
                unweighted, dominant = ratio, name
    borrowing = bool(borrowed)
    if unweighted == 0:
        return DRS(0, 0.0, 0.0, dominant, borrowing)
    if weight == 0:
        return DRS(MAX_INT64, math.inf, unweighted, dominant, borrowing)
    precise = unweighted / weight
    return DRS(int(math.ceil(precise)), precise, unweighted, dominant, borrowing)


def compare_drs(a: DRS, b: DRS, weight_a: float, weight_b: float) -> int:
    """``CompareDRS``: -1 when ``a`` is preferred for admission, 1 when ``b`` is, 0 on a tie."""
    za, zb = weight_a == 0 and a.unweighted > 0, weight_b == 0 and b.unweighted > 0
    if za and zb:
        return (a.unweighted > b.unweighted) - (a.unweighted < b.unweighted)
    if za or zb:
        return 1 if za else -1
    return (a.precise > b.precise) - (a.precise < b.precise)


class _Tree:
    """The cohort tree of an instance with Kueue's quota arithmetic (``resource_node.go``)."""

    def __init__(self, instance: Instance) -> None:
        q = queues_of(instance)
        self.resources, self.m = q.resources, len(q.resources)
        self.leaves = list(instance.users)
        self.index = {u: i for i, u in enumerate(self.leaves)}
        self.parent: dict[str, str | None] = dict(q.parent)
        zero = np.zeros(self.m)
        # no nominalQuota is a quota of 0: read for every node at once (a call per node was a
        # fifth of a flat tree's cost at 10^4 queues)
        names = list(self.parent)
        guarantees = np.array([q.guarantee[v] for v in names], float).reshape(len(names), self.m)
        self.nominal = dict(zip(names, np.nan_to_num(guarantees, nan=0.0)))
        if not q.configured:  # a paper case: one cohort lending the capacity
            for v, p in list(self.parent.items()):
                self.parent[v] = _SYNTHETIC_ROOT if p is None else p
            self.parent[_SYNTHETIC_ROOT] = None
            self.nominal[_SYNTHETIC_ROOT] = np.asarray(instance.capacity, float)
        self.groups = [g for g in self.parent if g not in self.index]
        self.weight = {v: float(q.weight.get(v, 1.0)) for v in self.parent}
        self.priority = {v: float(q.priority.get(v, 0.0)) for v in self.parent}
        inf = np.full(self.m, np.inf)
        self.borrowing_limit = {v: np.asarray(q.borrowing_limit.get(v, inf), float) for v in self.parent}
        self.lending_limit = {v: np.asarray(q.lending_limit.get(v, inf), float) for v in self.parent}
        self.kids: dict[str | None, list[str]] = {None: []}
        for v in [*self.groups, *self.leaves]:  # groups first, then leaves, file order
            self.kids.setdefault(self.parent[v], []).append(v)
            self.kids.setdefault(v, [])
        # a leaf's quota is its nominal quota (it has no children): the leaves' quotas, local
        # quotas and potentials as matrices, at once (numpy calls per leaf were half of a flat
        # tree's cost at 10^4 queues); the same operations per element, so the same numbers
        n, leaves = len(self.leaves), self.leaves
        quota = np.array([self.nominal[u] for u in leaves], float).reshape(n, self.m)
        lending = np.array([self.lending_limit[u] for u in leaves], float).reshape(n, self.m)
        with np.errstate(invalid="ignore"):
            local = np.where(np.isinf(lending), 0.0, np.maximum(0.0, quota - lending))
        self.quota: dict[str, np.ndarray] = dict(zip(leaves, quota))
        self.local: dict[str, np.ndarray] = dict(zip(leaves, local))
        for v in self.postorder():
            if v in self.index:
                continue
            sq = self.nominal[v].copy()
            for c in self.kids[v]:
                sq += self.quota[c] - self.local[c]
            self.quota[v] = sq
            with np.errstate(invalid="ignore"):
                self.local[v] = np.where(
                    np.isinf(self.lending_limit[v]), 0.0, np.maximum(0.0, sq - self.lending_limit[v])
                )
        self.potential: dict[str, np.ndarray] = {}
        for v in self.preorder():
            if v in self.index:
                continue
            p = self.parent[v]
            if p is None:
                self.potential[v] = self.quota[v]
            else:
                self.potential[v] = np.minimum(
                    self.local[v] + self.potential[p], self.quota[v] + self.borrowing_limit[v]
                )
        above = np.array([self.potential[p] if (p := self.parent[u]) is not None else zero for u in leaves], float)
        room = quota + np.array([self.borrowing_limit[u] for u in leaves], float).reshape(n, self.m)
        held = np.array([self.parent[u] is not None for u in leaves], bool)[:, None]
        self.potential |= dict(zip(leaves, np.where(held, np.minimum(local + above.reshape(n, self.m), room), quota)))
        self.lendable = {v: self.potential[p] if (p := self.parent[v]) is not None else zero for v in self.parent}
        self._bounds: dict[str, list[tuple[int, float, float]]] = {}
        self._plans: dict[str | None, list[tuple[str, int, list[str]]]] = {}
        self._shares: dict[str, SharePlan] = {}
        self._kid_locals: dict[str, np.ndarray] = {}
        self._kid_rows: dict[str, slice | None] = {}
        self._subtree_rows: dict[str, np.ndarray] = {}
        self._ceilings: dict[str, np.ndarray] = {}
        self._ancestors: dict[str, tuple[str, ...]] = {}
        self._locals = dict(zip(leaves, local.tolist()))
        self._locals |= {v: [float(a) for a in self.local[v]] for v in self.groups}

    def postorder(self, node: str | None = None) -> list[str]:
        out: list[str] = []
        for c in self.kids[node]:
            out += [*self.postorder(c), c]
        return out

    def _usage_plan(self, root: str | None = None) -> list[tuple[str, int, list[str]]]:
        """The nodes of the tree (of ``root``'s subtree, ``root`` last), children first."""
        if root not in self._plans:
            below = self.postorder(root) + ([] if root is None else [root])
            self._plans[root] = [(v, self.index.get(v, -1), self.kids[v]) for v in below]
        return self._plans[root]

    def preorder(self, node: str | None = None) -> list[str]:
        out: list[str] = []
        for c in self.kids[node]:
            out += [c, *self.preorder(c)]
        return out

    def root_of(self, v: str) -> str:
        while (p := self.parent[v]) is not None:
            v = p
        return v

    def usage(self, leaf_usage: np.ndarray) -> dict[str, np.ndarray]:
        """Every node's ``Usage``: a leaf's own, a cohort's children's usage above local quota."""
        U: dict[str, np.ndarray] = {}
        for v, i, kids in self._usage_plan():
            if i >= 0:
                U[v] = np.asarray(leaf_usage[i], float)
            else:
                total = np.zeros(self.m)
                for c in kids:
                    total += np.maximum(0.0, U[c] - self.local[c])
                U[v] = total
        return U

    def drs(self, v: str, U: Mapping[str, np.ndarray]) -> DRS:
        return self.share_of(v, U[v])

    def share_of(self, v: str, used: np.ndarray) -> DRS:
        """Node ``v``'s share when it uses ``used`` (:func:`dominant_resource_share`; none at a root)."""
        if self.parent[v] is None:
            return DRS(0, 0.0, 0.0, "", False)
        plan = self._shares.get(v)
        if plan is None:
            plan = self._shares[v] = share_plan(self.quota[v], self.lendable[v], self.resources)
        return planned_share(used.tolist(), plan, self.weight[v])

    def ancestors(self, v: str) -> tuple[str, ...]:
        """``v``'s ancestors, parent first (``PathParentToRoot``)."""
        path = self._ancestors.get(v)
        if path is None:
            p = self.parent[v]
            path = self._ancestors[v] = () if p is None else (p, *self.ancestors(p))
        return path

    def ceiling(self, v: str) -> np.ndarray:
        """``v``'s quota (``SubtreeQuota``) with the rounding of sums of floats allowed above it
        (:data:`~fairalloc.core.tolerances.FIT`): ``a <= ceiling`` is ``a`` within the quota."""
        top = self._ceilings.get(v)
        if top is None:
            q = self.quota[v]
            top = self._ceilings[v] = q + FIT * np.maximum(1.0, np.abs(q))
        return top

    def kid_rows(self, v: str) -> slice | None:
        """The rows of ``v``'s children in a leaf-usage matrix, when they are all leaves listed
        one after another (then the rows are a view, not a copy)."""
        if v not in self._kid_rows:
            rows = [self.index.get(c, -1) for c in self.kids[v]]
            plain = rows and rows[0] >= 0 and rows == list(range(rows[0], rows[0] + len(rows)))
            self._kid_rows[v] = slice(rows[0], rows[0] + len(rows)) if plain else None
        return self._kid_rows[v]

    def subtree_rows(self, v: str) -> np.ndarray:
        """The rows of the ClusterQueues of ``v``'s subtree in a leaf-usage matrix, in the tree's order."""
        rows = self._subtree_rows.get(v)
        if rows is None:
            rows = self._subtree_rows[v] = np.array([self.index[u] for u in self.postorder(v) if u in self.index], int)
        return rows

    def kid_locals(self, v: str) -> np.ndarray:
        """``(k, m)``: the local quotas of ``v``'s children, in their order."""
        rows = self._kid_locals.get(v)
        if rows is None:
            rows = self._kid_locals[v] = np.array([self.local[c] for c in self.kids[v]], float).reshape(-1, self.m)
        return rows

    def violation(self, U: Mapping[str, Any], nodes: list[str]) -> list[tuple[str, int, float]]:
        """``(node, resource, slack)`` of the constraints of ``nodes``: the root's quota, every
        borrowing limit; ``slack`` relative to the bound (negative: violated)."""
        out = []
        for v in nodes:
            used = U[v]
            for j, bound, scale in self._constraints(v):
                out.append((v, j, float((bound - used[j]) / scale)))
        return out

    def _constraints(self, v: str) -> list[tuple[int, float, float]]:
        """``(resource, bound, max(1, |bound|))`` of node ``v``'s finite bounds: fixed for the tree,
        and read at every bisection step of the filling."""
        if v not in self._bounds:
            bound = self.quota[v] if self.parent[v] is None else self.quota[v] + self.borrowing_limit[v]
            finite = np.flatnonzero(np.isfinite(bound))
            self._bounds[v] = [(int(j), float(bound[j]), float(max(1.0, abs(bound[j])))) for j in finite]
        return self._bounds[v]

    def excess(self, leaf_usage, nodes: list[str], root: str | None = None) -> float:
        """The largest excess ``(used - bound) / max(1, |bound|)`` over the constraints of ``nodes``
        at ``leaf_usage`` (plain floats; ``-inf``: none), the negated slack of :meth:`violation`:
        they hold when it is at most :data:`fairalloc.models.kueue.FITS`.  On :meth:`float_usage`,
        since the filling asks it at every step and numpy's per-call cost on a few numbers was most
        of that.  With
        ``root``, ``nodes`` lie in its subtree, and only that subtree's usage is summed."""
        U = self.float_usage(leaf_usage, root)
        return max(
            ((U[v][j] - bound) / scale for v in nodes for j, bound, scale in self._constraints(v)), default=-math.inf
        )

    def float_usage(self, leaf_usage, root: str | None = None) -> dict[str, list[float]]:
        """:meth:`usage` on plain floats: the same operations in the same order (of the nodes of
        ``root``'s subtree, with ``leaf_usage`` indexed by leaf index, where given)."""
        U: dict[str, list[float]] = {}
        for v, i, kids in self._usage_plan(root):
            if i >= 0:
                U[v] = leaf_usage[i]
                continue
            total = [0.0] * self.m
            for c in kids:
                total = [t + _above(u, lo) for t, u, lo in zip(total, U[c], self._locals[c])]
            U[v] = total
        return U


def _tree_of(instance: Instance) -> _Tree:
    """The :class:`_Tree` of the instance's queue tree, users and capacity, kept with the tree: it
    does not depend on the requests, and the verifier solves hundreds of reports on one tree."""
    if instance.queues is None:  # a paper case's flat tree is made anew at each call: nothing to keep it with
        return _Tree(instance)
    return instance.queues.memo("kueue", (instance.users, instance.capacity.tobytes()), lambda: _Tree(instance))


def _above(used: float, local: float) -> float:
    """``np.maximum(0.0, used - local)`` on floats (a NaN kept, as numpy keeps it)."""
    d = used - local
    return 0.0 if 0.0 >= d else d


__all__ = ["DRS", "MAX_INT64", "compare_drs", "dominant_resource_share", "kueue_resource"]
