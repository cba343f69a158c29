"""The ``kueue`` model at commit 67d95780b050f820062e6e4721ec000a5f9a1f0b, the oracle of the fast one.

tests/test_fast_kueue.py holds :mod:`fairalloc.models.kueue` equal to it on random trees.  It is
``models/kueue.py`` of that commit verbatim but for three things: this docstring (the original's
follows), the class is not registered (``Kueue`` here is ``kueue-previous``, called directly), and
its tree is memoized under its own key, so the two implementations never share a ``_Tree``.

Kueue fair sharing: dominant resource shares of borrowed quota over a tree of cohorts.

Source read: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7 (2026-08-22),
Apache-2.0, and its KEP-1714 (``keps/1714-fair-sharing/README.md``, "Share value function and
weights", "Nominal-first admission ordering"):

* ``pkg/cache/scheduler/resource_node.go``: every ClusterQueue (a leaf queue here) and Cohort (a
  group) has a ``SubtreeQuota``: a ClusterQueue's is its nominal quota (``guarantee``), a cohort's
  is its own nominal quota plus, over its children, ``SubtreeQuota - localQuota``
  (``accumulateFromChild``), where ``localQuota = max(0, SubtreeQuota - lendingLimit)`` is what a
  lending limit keeps out of the parent's sight (0 without one).  A cohort's ``Usage`` is the sum
  of its children's usage above their local quotas.  ``potentialAvailable(v)`` is the root's
  ``SubtreeQuota`` at the root, else ``localQuota(v) + potentialAvailable(parent)``, capped at
  ``SubtreeQuota(v) + borrowingLimit(v)`` where a borrowing limit is set;
* ``pkg/cache/scheduler/fair_sharing.go``, ``dominantResourceShare``: a node without a parent has
  share 0; otherwise, per resource, ``borrowed_j = Usage_j - SubtreeQuota_j`` where positive (then
  the node ``IsBorrowing``), ``lendable_j = potentialAvailable(parent)_j`` (``calculateLendable``)
  and, over the resources with ``lendable_j > 0``,
  ``unweighted = max_j float64(borrowed_j) * 1000 / float64(lendable_j)`` (ties to the
  alphabetically first resource).  ``PreciseWeightedShare = unweighted / weight`` (0 when
  ``unweighted`` is 0, ``+inf`` for weight 0); Kueue's integer (``roundedWeightedShare``) is
  ``int64(math.Ceil(precise))``, or ``math.MaxInt64`` when a zero-weight node borrows.
  ``CompareDRS``: zero-weight borrowers come after every other node (among themselves by
  ``unweighted``), the others by the precise value;
* ``pkg/scheduler/fair_sharing_iterator.go``, ``runTournament`` and ``entryComparer.less``: at
  every cohort, root to leaves, the child (ClusterQueue or cohort) whose nominated workload wins
  is the one (1) not borrowing on the workload's resources (``FairSharingPrioritizeNonBorrowing``,
  on by default), then (2) with the lowest share (``CompareDRS``) *after* admitting the workload,
  then (3) with the highest priority (``PrioritySortingWithinCohort``, on by default), then (4)
  FIFO.  Only siblings are compared, each with its own share.

Kueue's quotas are per (flavor, resource); the Kueue importer names a resource given in several
flavors ``resource@flavor`` (``cpu@spot``), and the share adds a resource's flavors up, as
``dominantResourceShare`` (``borrowing[fr.Resource]``) and ``calculateLendable`` do: what is
borrowed over the flavors of ``cpu``, over what the parent could lend of them all
(:func:`kueue_resource`; ``TestDominantResourceShare``'s "multiple flavors").

So unlike DRF, a share counts only what a queue uses *above* its nominal quota, over what the
parent cohort could lend it (quotas, not the cluster's capacity: Kueue never sees the capacity),
and it is compared only among siblings of the cohort tree.

**Shares** (:meth:`Kueue.shares`, :func:`node_shares`): Kueue's integer of every leaf queue and
group for the case's ``usage``; :func:`dominant_resource_share` gives the integer, the precise
value and the dominant resource.  Values are read in the case's units: Kueue's quantities are
integers (milli-CPU for ``cpu``), and ``b * 1000 / L`` of integers is the same double in any unit.

**Order** (:meth:`Kueue.order`): the leaf queues in the order the iterator pops them when each
queue's nominated workload is empty (its share is that of its ``usage``): repeated tournaments
with fixed shares.  "Borrowing on the workload's resources" reads the resources the queue
requests (every resource for a queue without a request); FIFO is the file order.  Queues of
different cohort trees and queues without a cohort (Kueue serves them in map order) are
compared as siblings of share 0.

**Entitlement** (:meth:`Kueue.entitlement`).  Kueue only orders queues; what it entitles a queue
to is defined here as the fair-sharing equilibrium its admission loop (and fair-sharing
preemption) drives a cohort tree to when every queue asks for its ``request``.  Kueue admits
whole workloads, so a queue's usage grows in the shape of its request (Leontief): ``x_i D_i``.
Every queue first gets the largest multiple of its request within its nominal quota (its
workloads there are "not borrowing" and admitted first; ``min(request, guarantee)`` when the
request fits).  Then, at every cohort, the children still borrowing grow keeping their precise
shares equal (a child cohort's share is that of its subtree's usage), the lowest first::

    at every cohort v, over its growing children c:  DRS_c(x) = lambda_v
    0 <= x_i <= T_i,   U_j(root) <= SubtreeQuota_j(root),
    U_j(v) <= SubtreeQuota_j(v) + borrowingLimit_j(v)   (every node with a borrowing limit)

until a queue's request is met or a constraint it feeds becomes tight (then it stops: the events).
A queue's response to a level inverts its share: per Kubernetes resource, the largest ``x_i`` whose
borrowing summed over the resource's flavors stays within the level (:func:`_largest_within`).
The capacity in ``resources`` is not a constraint: Kueue admits against quotas only, so a tree
whose quotas exceed the capacity is entitled beyond it (``info["warnings"]`` says so).  ``limit``
(no Kueue field) is ignored.  A queue case's leaf without a group is a ClusterQueue without a
cohort (its nominal quota, nothing more); a paper case (no queue configuration) is one cohort
whose nominal quota is the capacity, so ``kueue`` there is weighted DRF.  Weight 0 borrows after
everyone else: the filling reads it as a weight of 1e-9 (zero-weight borrowers then compare by
their unweighted ratios, as in ``CompareDRS``).

``fast`` computes it event by event: the levels of all cohorts are monotone functions of the root
level ``t`` (a cohort's level is the largest one at which its own share stays <= its parent's
level; inside a chain of single-child cohorts only the top's share binds); the next event is the
largest ``t`` at which every constraint holds.  Both are found by :func:`_sup_at_most`: a share
and a constraint's excess are nondecreasing and piecewise linear in the level, so secants find
each in about nine evaluations where no lower cohort's level jumps (a bisection's 64 steps where
one does).  Where a cohort's share stays flat while its queues grow (in a resource that is not
its dominant one), its level jumps at the event; the jump is followed by a bisection of its own.
``info["levels"]``: each root cohort's level at every event (``inf``: every queue stopped by its
request or limits).  The searches nest, one per level of branching cohorts, so the cost grows
about tenfold with each level: on this machine a root over two levels of cohorts (8 queues)
takes 0.4 s, over three levels (16 queues) 6.5 s, and over four (32 queues) 3 minutes.
:func:`simulate` is the independent check: it admits small pieces of request one at a time to the
tournament's winner, as Kueue's scheduler does.

Worked example (``usage above nominal`` of ``TestDominantResourceShare``): nominal gpu 5 and 5 in
one cohort, lendable 10; using 7 gpus is borrowing 2: ``ceil(2 * 1000 / 10) = 200``.

>>> dominant_resource_share([7.0], [5.0], [10.0], 1.0, ("gpu",))
DRS(rounded=200, precise=200.0, unweighted=200.0, resource='gpu', borrowing=True)
>>> dominant_resource_share([7.0], [5.0], [10.0], 0.5, ("gpu",)).rounded
400
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from fairalloc.core import limits
from fairalloc.core.errors import CaseError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import queues_of
from fairalloc.core.registry import refuse_beyond
from fairalloc.engines.queue_policy import QueuePolicy

#: ``math.MaxInt64``: Kueue's integer share of a zero-weight node that borrows
MAX_INT64 = 2**63 - 1
#: what the filling reads a zero weight as (borrows after every positive weight)
ZERO_WEIGHT = 1e-9
#: bisection steps (on ``u`` in [0, 1), level ``= 1000 u / (1 - u)``)
STEPS = 64
#: relative width at which a nested cohort's level is found (:func:`_sup_at_most`)
LEVEL_RTOL = 1e-14
#: a constraint holds while its relative excess (:meth:`_Tree.excess`) is at most this
FITS = 1e-12
#: relative slack under which a constraint is tight (an event)
TIGHT = 1e-7
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


def dominant_resource_share(usage, quota, lendable, weight: float, resources) -> DRS:
    """Kueue's ``dominantResourceShare`` of a node with a parent: ``usage`` and ``quota``
    (``SubtreeQuota``) of the node, ``lendable`` (``potentialAvailable`` of its parent), per
    resource; ``weight`` its fair-sharing weight.  Kueue adds up, per Kubernetes resource, what is
    borrowed and what is lendable over its flavors (``borrowing[fr.Resource]``,
    ``calculateLendable``): ``cpu@on-demand`` and ``cpu@spot`` make one ratio, named ``cpu``."""
    borrowed: dict[str, float] = {}
    lend: dict[str, float] = {}
    for u, q, lent, name in zip(usage, quota, lendable, resources, strict=True):
        base = kueue_resource(name)
        lend[base] = lend.get(base, 0.0) + float(lent)
        b = float(u) - float(q)
        if b > 0:
            borrowed[base] = borrowed.get(base, 0.0) + b
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
        self.nominal = {v: np.nan_to_num(np.asarray(q.guarantee[v], float), nan=0.0) for v in self.parent}
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
        self.quota: dict[str, np.ndarray] = {}
        self.local: dict[str, np.ndarray] = {}
        for v in self.postorder():
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
            p = self.parent[v]
            if p is None:
                self.potential[v] = self.quota[v]
            else:
                self.potential[v] = np.minimum(
                    self.local[v] + self.potential[p], self.quota[v] + self.borrowing_limit[v]
                )
        self.lendable = {v: self.potential[p] if (p := self.parent[v]) is not None else zero for v in self.parent}
        self._bounds: dict[str, list[tuple[int, float, float]]] = {}
        self._locals = {v: [float(a) for a in self.local[v]] for v in self.parent}

    def postorder(self, node: str | None = None) -> list[str]:
        out: list[str] = []
        for c in self.kids[node]:
            out += [*self.postorder(c), c]
        return out

    def _usage_plan(self) -> list[tuple[str, int, list[str]]]:
        if not hasattr(self, "_plan"):
            self._plan = [(v, self.index.get(v, -1), self.kids[v]) for v in self.postorder()]
        return self._plan

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

    def drs(self, v: str, U: dict[str, np.ndarray]) -> DRS:
        if self.parent[v] is None:
            return DRS(0, 0.0, 0.0, "", False)
        return dominant_resource_share(U[v], self.quota[v], self.lendable[v], self.weight[v], self.resources)

    def violation(self, U: dict[str, np.ndarray], nodes: list[str]) -> list[tuple[str, int, float]]:
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

    def excess(self, leaf_usage: list[list[float]], nodes: list[str]) -> float:
        """The largest excess ``(used - bound) / max(1, |bound|)`` over the constraints of ``nodes``
        at ``leaf_usage`` (plain floats; ``-inf``: none), the negated slack of :meth:`violation`:
        they hold when it is at most :data:`FITS`.  On :meth:`float_usage`, since the filling asks
        it at every step and numpy's per-call cost on a few numbers was most of that."""
        U = self.float_usage(leaf_usage)
        return max(
            ((U[v][j] - bound) / scale for v in nodes for j, bound, scale in self._constraints(v)), default=-math.inf
        )

    def float_usage(self, leaf_usage: list[list[float]]) -> dict[str, list[float]]:
        """:meth:`usage` on plain floats: the same operations in the same order."""
        U: dict[str, list[float]] = {}
        for v, i, kids in self._usage_plan():
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
    return instance.queues.memo(
        "kueue-previous", (instance.users, instance.capacity.tobytes()), lambda: _Tree(instance)
    )


def node_shares(instance: Instance) -> dict[str, DRS]:
    """:class:`DRS` of every leaf queue and group for the case's ``usage``."""
    tree = _tree_of(instance)
    q = queues_of(instance)
    U = tree.usage(np.array([q.usage[u] for u in instance.users]).reshape(instance.n, len(q.resources)))
    return {v: tree.drs(v, U) for v in (*instance.users, *q.groups)}


class Kueue(QueuePolicy):
    name = "kueue-previous"
    summary = "Kueue fair sharing: weighted DRF of borrowed quota over lendable quota, among cohort siblings"
    about = (
        "Only usage above nominal quota counts, against what the parent cohort can lend; quotas beyond the "
        "capacity are promised, with a warning."
    )
    section = "9.5"
    solver = "numpy event-driven filling"
    zero_unguaranteed = True  # _Tree: nominal = nan_to_num(guarantee): no nominalQuota is a quota of 0

    def refuse(self, instance: Instance) -> None:
        super().refuse(instance)
        if queues_of(instance).groups:  # flat, the fill is fast
            most = limits.MAX_KUEUE_COHORT_QUEUES
            refuse_beyond(instance.n, "users (queues)", f"{self.name} with cohorts", most, "MAX_KUEUE_COHORT_QUEUES")

    def shares(self, instance: Instance) -> dict[str, float]:
        """Kueue's integer share (``roundedWeightedShare``) of every leaf queue and group."""
        return {v: d.rounded for v, d in node_shares(instance).items()}

    def precise_shares(self, instance: Instance) -> dict[str, float]:
        """``PreciseWeightedShare`` of every leaf queue and group."""
        return {v: d.precise for v, d in node_shares(instance).items()}

    def order(self, instance: Instance) -> list[str]:
        """Leaf queues as repeated tournaments pop them, shares fixed at ``usage`` (module docstring)."""
        instance.scalar_weights(self.name)
        tree = _tree_of(instance)
        q = queues_of(instance)
        usage = np.array([q.usage[u] for u in instance.users]).reshape(instance.n, tree.m)
        U = tree.usage(usage)
        drs = {v: tree.drs(v, U) for v in tree.parent}
        req = _request_rows(instance)
        wants = {u: (req[i] > 0) if (req[i] > 0).any() else np.ones(tree.m, bool) for i, u in enumerate(tree.leaves)}
        borrowed = {v: (U[v] - tree.quota[v] > 0) & (tree.parent[v] is not None) for v in tree.parent}
        remaining = set(tree.leaves)

        def key(child: str, leaf: str) -> tuple:
            return (bool((borrowed[child] & wants[leaf]).any()), drs[child], tree.weight[child], leaf)

        def less(a: tuple, b: tuple) -> bool:
            (ab, ad, aw, al), (bb, bd, bw, bl) = a, b
            if ab != bb:
                return not ab
            if (c := compare_drs(ad, bd, aw, bw)) != 0:
                return c < 0
            if tree.priority[al] != tree.priority[bl]:
                return tree.priority[al] > tree.priority[bl]
            return tree.index[al] < tree.index[bl]

        def tournament(node: str | None) -> str | None:
            candidates = []
            for c in tree.kids[node]:
                leaf = tournament(c) if c not in tree.index else (c if c in remaining else None)
                if leaf is not None:
                    candidates.append((c, leaf))
            if not candidates:
                return None
            best = candidates[0]
            for cur in candidates[1:]:
                if less(key(*cur), key(*best)):
                    best = cur
            return best[1]

        out = []
        while remaining:
            winner = tournament(None)
            assert winner is not None
            out.append(winner)
            remaining.discard(winner)
        return out

    def entitlement(self, instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
        """Each ClusterQueue's usage in the fair-sharing equilibrium (module docstring); ``info``:
        ``levels`` per root cohort at each event, ``warnings``."""
        instance.scalar_weights(self.name)
        fluid = _Fluid(instance)
        x, levels = fluid.fill()
        info: dict[str, Any] = {"levels": levels}
        if fluid.warnings:
            info["warnings"] = fluid.warnings
        return x[:, None] * instance.demand, info


def _request_rows(instance: Instance) -> np.ndarray:
    D = instance.demand
    return np.where(D > 0, D * np.where(np.isinf(instance.bounds()), 1.0, instance.bounds())[:, None], 0.0)


class _Fluid:
    """The equilibrium filling over the tree (module docstring, "Entitlement")."""

    def __init__(self, instance: Instance) -> None:
        self.tree = t = _tree_of(instance)
        self.D = np.asarray(instance.demand, float)
        self.T = np.asarray(instance.bounds(), float)
        n = len(t.leaves)
        self.w = {v: (t.weight[v] if t.weight[v] > 0 else ZERO_WEIGHT) for v in t.parent}
        scale = max([1.0, *(float(np.max(t.quota[v][np.isfinite(t.quota[v])], initial=0)) for v in t.parent)])
        # a resource nothing lends is an instant (steep) share, so the level stays continuous at 0
        self.lend = {v: np.where(t.lendable[v] > 0, t.lendable[v], 1e-12 * scale) for v in t.parent}
        # Kueue's share adds a resource's flavors up (dominant_resource_share): the groups of
        # resource indices it adds, and each group's lendable (the same tiny one where none)
        bases = [kueue_resource(r) for r in t.resources]
        self.flavored = [[j for j, b in enumerate(bases) if b == base] for base in dict.fromkeys(bases)]
        self.merged = any(len(g) > 1 for g in self.flavored)
        self.lend_of = {
            v: [lent if (lent := float(t.lendable[v][g].sum())) > 0 else 1e-12 * scale for g in self.flavored]
            for v in t.parent
        }
        self.x0, self.cap = np.zeros(n), np.zeros(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            for i, u in enumerate(t.leaves):
                pos = self.D[i] > 0
                if not pos.any():
                    continue
                self.x0[i] = min(self.T[i], float(np.min(t.nominal[u][pos] / self.D[i][pos])))
                room = t.nominal[u] + t.borrowing_limit[u] if t.parent[u] is not None else t.nominal[u]
                self.cap[i] = min(self.T[i], float(np.min(room[pos] / self.D[i][pos])))
        # leaf_at's operands as floats, on the resources each leaf requests: it runs at every
        # bisection step, where numpy's per-call cost on a few numbers was most of its time
        self._rows = [
            (
                self.w[u],
                [
                    (lent, [(float(t.nominal[u][j]), float(self.D[i, j])) for j in g if self.D[i, j] > 0])
                    for g, lent in zip(self.flavored, self.lend_of[u])
                    if (self.D[i, g] > 0).any()
                ],
            )
            for i, u in enumerate(t.leaves)
        ]
        self._demand_rows = self.D.tolist()
        self.frozen = np.zeros(n, bool)
        self._leaves_under: dict[str, list[int]] = {}
        self.x = self.x0.copy()
        self.warnings: list[str] = []
        self._quota_warning(instance)

    def _quota_warning(self, instance: Instance) -> None:
        t = self.tree
        total = sum((t.quota[v] for v in t.parent if t.parent[v] is None), np.zeros(t.m))
        over = [r for j, r in enumerate(t.resources) if total[j] > instance.capacity[j] * (1 + TIGHT)]
        if over and queues_of(instance).configured:
            self.warnings.append(f"quotas exceed the capacity of {', '.join(over)}: entitlements are against quotas")

    # -- responses to a level -------------------------------------------------------------
    def leaf_at(self, u: str, s: float) -> float:
        i = self.tree.index[u]
        if self.frozen[i] or self.cap[i] <= self.x0[i]:
            return self.x[i] if self.frozen[i] else self.x0[i]
        if math.isinf(s):
            return self.cap[i]
        w, rows = self._rows[i]
        sw = s * w  # numpy's order: (s w) lend / 1000, plus the nominal quota, over the demand
        fit = min(_largest_within(pairs, sw * lend / 1000.0) for lend, pairs in rows)
        return float(min(self.cap[i], max(self.x0[i], fit)))

    def grow(self, v: str, s: float, x: np.ndarray, seen: dict | None = None, force: dict | None = None) -> None:
        """Fill ``x`` for the leaves under cohort ``v`` at its level ``s``; ``seen`` records the
        levels of the cohorts below, ``force`` imposes some."""
        for c in self.tree.kids[v]:
            if c in self.tree.index:
                x[self.tree.index[c]] = self.leaf_at(c, s)
                continue
            end = self.chain_end(c)
            level = force[c] if force is not None and c in force else self.level_of(c, s)
            if seen is not None:
                seen[c] = level
            self.grow(end, level, x, seen, force)

    def chain_end(self, g: str) -> str:
        """The last cohort of the chain of single-child cohorts from ``g``: the levels inside a
        chain are free (nothing competes there), so only ``g``'s share binds its end's level."""
        kids = self.tree.kids
        while len(kids[g]) == 1 and kids[g][0] not in self.tree.index:
            g = kids[g][0]
        return g

    def level_of(self, g: str, t: float) -> float:
        """The largest level of the end of ``g``'s chain at which ``g``'s own share stays <= its
        parent's level ``t``."""
        x = self.x.copy()
        end = self.chain_end(g)
        if math.isinf(t) or not any(
            not self.frozen[i] and self.cap[i] > self.x0[i] for i in self._under(g)
        ):  # nothing under g can grow: its level does not matter
            return math.inf

        def share(s: float) -> float:
            self.grow(end, s, x)
            U = self.tree.usage(_bundles(x, self.D))
            return self._weighted(g, U)

        if share(math.inf) <= t:
            return math.inf
        return _sup_at_most(share, t)[0]

    def _under(self, g: str) -> list[int]:
        if g not in self._leaves_under:
            self._leaves_under[g] = [self.tree.index[u] for u in self.tree.postorder(g) if u in self.tree.index]
        return self._leaves_under[g]

    def _weighted(self, v: str, U: dict[str, np.ndarray]) -> float:
        b = U[v] - self.tree.quota[v]
        if not self.merged:
            return float(np.max(np.where(b > 0, b * 1000.0 / self.lend[v], 0.0), initial=0.0)) / self.w[v]
        over = np.maximum(b, 0.0)
        return max(float(over[g].sum()) * 1000.0 / lent for g, lent in zip(self.flavored, self.lend_of[v])) / self.w[v]

    def at(self, root: str, t: float, seen: dict | None = None, force: dict | None = None) -> np.ndarray:
        x = self.x.copy()
        self.grow(root, t, x, seen, force)
        return x

    # -- events ---------------------------------------------------------------------------
    def fill(self) -> tuple[np.ndarray, dict[str, list[float]]]:
        t = self.tree
        levels: dict[str, list[float]] = {}
        for root in t.kids[None]:
            if root in t.index:  # a ClusterQueue without a cohort: its nominal quota
                self.frozen[t.index[root]] = True
                continue
            levels[root] = self._fill_tree(root)
        return self.x, levels

    def _fill_tree(self, root: str) -> list[float]:
        t = self.tree
        under = [t.index[u] for u in t.postorder(root) if u in t.index]
        nodes = [root, *t.postorder(root)]
        levels = []
        for _ in range(2 * len(nodes) * t.m + 2):
            growing = [i for i in under if not self.frozen[i] and self.x[i] < self.cap[i]]
            if not growing:
                break
            unbounded = self.at(root, math.inf)
            if self._feasible(unbounded, nodes):
                self.x = unbounded
                levels.append(math.inf)
                break
            lo, hi = _sup_at_most(lambda s: self._excess(self.at(root, s), nodes), FITS)
            x = self._across_jump(root, lo, hi, nodes)
            levels.append(lo)
            self._freeze(root, x, growing, nodes)
        return levels

    def _across_jump(self, root: str, lo: float, hi: float, nodes: list[str]) -> np.ndarray:
        """The allocation at the event level ``lo`` (``hi``: just above it, where a constraint
        fails).  A cohort's level may jump there: its share stays flat while some of its queues
        grow (in a resource that is not its dominant one, or within local quota), and the root's
        winner takes all of that growth at once (``CompareDRS`` prefers the lower share): then the
        topmost jumping cohorts move through the jump together, by bisection, until a constraint
        becomes tight."""
        below: dict[str, float] = {}
        above: dict[str, float] = {}
        x = self.at(root, lo, below)
        self.at(root, hi, above)
        jumping = [g for g in below if above[g] > below[g] * (1 + 1e-9) + 1e-12]
        top = [g for g in jumping if self.tree.parent[g] not in jumping]
        if not top:
            return x
        ends = {g: (_unlevel(below[g]), _unlevel(above[g])) for g in top}

        def forced(theta: float) -> dict[str, float]:
            return {g: _level(a + theta * (b - a)) for g, (a, b) in ends.items()}

        through = self.at(root, lo, force=forced(1.0))
        if self._feasible(through, nodes):
            return through
        a, _ = _bisect(lambda theta: self._feasible(self.at(root, lo, force=forced(theta)), nodes))
        return self.at(root, lo, force=forced(a))

    def _feasible(self, x: np.ndarray, nodes: list[str]) -> bool:
        return self._excess(x, nodes) <= FITS

    def _excess(self, x: np.ndarray, nodes: list[str]) -> float:
        return self.tree.excess(self.bundle_rows(x), nodes)

    def bundle_rows(self, x: np.ndarray) -> list[list[float]]:
        """:func:`_bundles` in plain floats."""
        return [[u * d if d > 0 else 0.0 for d in row] for u, row in zip(x.tolist(), self._demand_rows)]

    def _freeze(self, root: str, x: np.ndarray, growing: list[int], nodes: list[str]) -> None:
        t = self.tree
        U = t.usage(_bundles(x, self.D))
        hit = np.zeros(len(x), bool)
        for i in growing:
            if x[i] >= self.cap[i] * (1 - TIGHT) - 1e-15:
                hit[i] = True
        for v, j, slack in t.violation(U, nodes):
            if slack > TIGHT:
                continue
            for u in t.leaves:
                i = t.index[u]
                if i in growing and self.D[i, j] > 0 and self._feeds(u, v, j, U):
                    hit[i] = True
        if not hit.any():  # numerically stuck: stop everyone rather than loop
            hit[growing] = True
            self.warnings.append(f"{root}: an event without a tight constraint; growth stopped")
        self.frozen |= hit
        # frozen queues stay where the event found them; the others restart from their response
        self.x = np.where(hit, x, self.x)

    def _feeds(self, leaf: str, v: str, j: int, U: dict[str, np.ndarray]) -> bool:
        """Whether ``leaf``'s growth in resource ``j`` reaches node ``v`` (above every local quota)."""
        node: str | None = leaf
        while node is not None and node != v:
            if U[node][j] < self.tree.local[node][j] * (1 - TIGHT):
                return False
            node = self.tree.parent[node]
        return node == v


def _largest_within(rows: list[tuple[float, float]], budget: float) -> float:
    """The largest ``x`` with ``sum_j max(0, x d_j - n_j) <= budget`` over ``rows`` of ``(n_j, d_j)``,
    ``d_j > 0``: a leaf's borrowing of one resource over its flavors, at most ``budget``.  One row:
    ``(n + budget) / d``; several: the flavors start borrowing in the order of ``n_j / d_j``, and
    the answer lies on the first piece whose end is past it."""
    if len(rows) == 1:
        nominal, demand = rows[0]
        return (nominal + budget) / demand
    ordered = sorted(rows, key=lambda r: r[0] / r[1])
    nominal = demand = 0.0
    for k, (n, d) in enumerate(ordered):
        nominal, demand = nominal + n, demand + d
        x = (nominal + budget) / demand
        if k + 1 == len(ordered) or x <= ordered[k + 1][0] / ordered[k + 1][1]:
            return x
    raise AssertionError("unreachable: the last piece returns")


def _bundles(x: np.ndarray, D: np.ndarray) -> np.ndarray:
    """``x_i D_i``, with ``inf * 0 = 0`` (a queue without a resource uses none of it)."""
    with np.errstate(invalid="ignore"):
        return np.where(D > 0, x[:, None] * D, 0.0)


def _above(used: float, local: float) -> float:
    """``np.maximum(0.0, used - local)`` on floats (a NaN kept, as numpy keeps it)."""
    d = used - local
    return 0.0 if 0.0 >= d else d


def _bisect(holds: Callable[[float], bool]) -> tuple[float, float]:
    """``[lo, hi]`` after :data:`STEPS` halvings of ``[0, 1]`` that keep ``holds(lo)`` (``hi``: where it
    failed last, 1 untested).  It stops once a halving changes nothing: the interval is then two
    adjacent floats (or one), and every later halving would repeat the same test and the same
    result, since ``holds`` depends on its argument alone."""
    lo, hi = 0.0, 1.0
    for _ in range(STEPS):
        mid = (lo + hi) / 2
        new = (mid, hi) if holds(mid) else (lo, mid)
        if new == (lo, hi):
            break
        lo, hi = new
    return lo, hi


def _sup_at_most(share: Callable[[float], float], t: float) -> tuple[float, float]:
    """``(lo, hi)``: the largest level ``lo >= 0`` with ``share(lo) <= t``, and ``hi`` just above it
    (``share(hi) > t``; ``hi - lo`` at most :data:`LEVEL_RTOL` of ``hi``, or of 1 below 1), for a
    share (or a constraint's excess) that is nondecreasing and piecewise linear in the level,
    with ``share(0) <= t`` and ``t`` below its top.

    The bracket is found by doubling.  Then each step tries where the line through the two
    nearest levels above ``t`` meets ``t`` (exact once both lie on the piece that crosses ``t``,
    a flat piece at ``t`` included), or else where the chord of the bracket does (exact once no
    knot is left inside it); a probe just above a level found exactly closes the bracket, and a
    step that did not halve the bracket is followed by one that does.  Where the share is
    continuous near the answer that takes a handful of shares against a bisection's 64; where it
    jumps there (a lower cohort's level jumps), about as many as a bisection."""
    lo, f_lo, hi = 0.0, None, 1000.0  # share(0) <= t: assumed (not evaluated), as a bisection does
    f_hi = share(hi)
    while f_hi <= t:  # share(inf) > t: a finite level passes t
        lo, f_lo, hi = hi, f_hi, 2 * hi + 1000.0
        f_hi = share(hi)
    above: tuple[float, float] | None = None  # the level above t next beyond hi, and its share
    halve = False
    for _ in range(4 * STEPS):
        width, tolerance = hi - lo, LEVEL_RTOL * max(hi, 1.0)
        if width <= tolerance:
            break
        s = (lo + hi) / 2
        if not halve:
            guesses = []
            if above is not None and above[1] > f_hi:
                guesses.append(hi - (f_hi - t) * (above[0] - hi) / (above[1] - f_hi))
            if f_lo is not None and f_hi > f_lo:
                guesses.append(lo + (t - f_lo) * (hi - lo) / (f_hi - f_lo))
            inside = [g for g in guesses if lo < g < hi]
            if inside:
                s = inside[0]
            elif guesses and min(guesses) <= lo:  # found exactly at lo: probe just above it
                s = min(lo + tolerance, s)
        f_s = share(s)
        if f_s <= t:
            lo, f_lo = s, f_s
        else:
            above, hi, f_hi = (hi, f_hi), s, f_s
        halve = not halve and hi - lo > width / 2
    return lo, hi


def _level(u: float) -> float:
    return math.inf if u >= 1 else 1000.0 * u / (1.0 - u)


def _unlevel(level: float) -> float:
    return 1.0 if math.isinf(level) else level / (1000.0 + level)


def simulate(instance: Instance, pieces: int = 200) -> np.ndarray:
    """Kueue's admission loop in small steps: ``(n, m)`` bundles.  From empty usage, again and
    again every queue nominates ``1/pieces`` of its request; among those that fit (the root's
    quota, every borrowing limit) the tournament's winner is admitted: at each cohort, not
    borrowing on its resources first, then the lowest share after admission (``CompareDRS``),
    priority, file order.  Unbounded requests (``T_i = inf``) are not simulated."""
    tree = _tree_of(instance)
    D, T = np.asarray(instance.demand, float), np.asarray(instance.bounds(), float)
    if np.isinf(T[(D > 0).any(axis=1)]).any():
        raise CaseError("users: simulate needs bounded requests (max_tasks)")
    x = np.zeros(len(tree.leaves))
    step = T / pieces
    floor = step / 2**12
    nodes = tree.postorder()
    open_ = {i for i in range(len(x)) if step[i] > 0 and (D[i] > 0).any()}
    while open_:
        fits: dict[int, dict[str, np.ndarray]] = {}
        for i in sorted(open_):
            while i not in fits and step[i] >= floor[i]:
                y = x.copy()
                y[i] = min(T[i], y[i] + step[i])
                U = tree.usage(y[:, None] * D)
                if all(s >= -1e-12 for _, _, s in tree.violation(U, nodes)):
                    fits[i] = U
                else:  # a smaller workload may still fit (what Kueue admits next)
                    step[i] /= 2
        open_ = set(fits)
        if not fits:
            break
        winner = _simulated_winner(tree, fits, D)
        x[winner] = min(T[winner], x[winner] + step[winner])
        if x[winner] >= T[winner] * (1 - 1e-12):
            open_.discard(winner)
    return x[:, None] * D


def _simulated_winner(tree: _Tree, fits: dict[int, dict[str, np.ndarray]], D: np.ndarray) -> int:
    def key(c: str, i: int) -> tuple:
        U = fits[i]
        drs = tree.drs(c, U)
        borrowing = bool(((U[c] - tree.quota[c] > 0) & (D[i] > 0)).any()) and tree.parent[c] is not None
        return (borrowing, drs, tree.weight[c], -tree.priority[tree.leaves[i]], i)

    def better(a: tuple, b: tuple) -> bool:
        if a[0] != b[0]:
            return not a[0]
        if (c := compare_drs(a[1], b[1], a[2], b[2])) != 0:
            return c < 0
        return (a[3], a[4]) < (b[3], b[4])

    def tournament(node: str | None) -> tuple[str, int] | None:
        best: tuple[str, int] | None = None
        for c in tree.kids[node]:
            if c in tree.index:
                cand = (c, tree.index[c]) if tree.index[c] in fits else None
            else:
                inner = tournament(c)
                cand = None if inner is None else (c, inner[1])
            if cand is not None and (best is None or better(key(*cand), key(*best))):
                best = cand
        return best

    found = tournament(None)
    assert found is not None
    return found[1]


__all__ = [
    "DRS",
    "MAX_INT64",
    "Kueue",
    "compare_drs",
    "dominant_resource_share",
    "kueue_resource",
    "node_shares",
    "simulate",
]
