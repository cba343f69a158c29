"""Kueue fair sharing: dominant resource shares of borrowed quota over a tree of cohorts.

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

The tree and the share (``_Tree``, :func:`dominant_resource_share`, :func:`compare_drs`) live in
:mod:`fairalloc.models.kueue_tree`, which Kueue's scheduling cycle (:meth:`Kueue.online`,
:mod:`fairalloc.models.kueue_cycle`) reads too.

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
largest ``t`` at which every constraint holds, found by :func:`_sup_at_most` (a constraint's
excess is nondecreasing and piecewise linear in ``t``, so secants find it in about nine
evaluations where no cohort's level jumps, a bisection's 64 steps where one does).  A cohort's
level is read off its share, built once per event bottom-up as a piecewise linear function of its
level (:meth:`_Fluid.prepare`): a queue's response has a knot where a flavor starts borrowing, two
resources' responses cross or its request or limit stops it; a cohort's usage is the sum of its
children's usage above their local quotas (their slope changes and jumps sorted together,
:func:`_sum`), its share gains knots where a resource passes its quota or two resources' shares
cross, and its response to its parent's level is its usage read at the inverse of its share.  So
an event costs ``O(K log K)`` per level of cohorts for ``K`` knots (a few per queue), and
evaluating the tree at a root level ``O(n log K)``; memory is linear in the knots.  The functions
are kept from one event to the next, and only those of the queues an event stops and of the
cohorts above them are built again.  The searches for the event read a constraint's usage off
those functions (:meth:`_Fluid._excess_at`): only the cohorts on the way from the root to a
constraint (the root's quota, a cohort's borrowing limit) add their children up, the others are
read at their levels, so a step of the searches costs ``O(c d log K)`` for ``c`` constraints ``d``
deep, not a walk over the tree's ``n`` queues (about 70 walks an event, most of the cost, before);
the tree is walked a handful of times an event, to place the queues.  Where a
cohort's share stays flat while its queues grow (in a resource that is not its dominant one, or
within local quota), its level jumps at the event; the jump is followed by a bisection of its own.
Where a cohort's share jumps (a lower cohort's level jumps), its level stays just below the jump.
``info["levels"]``: each root cohort's level at every event (``inf``: every queue stopped by its
request or limits).  (The levels were found by nested searches before, one per level of branching
cohorts, about tenfold the cost per level: 3 minutes for 32 queues under four levels.)
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
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple

import numpy as np

from fairalloc.core.errors import CaseError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import queues_of
from fairalloc.core.registry import register
from fairalloc.core.tolerances import KNOT_ULPS
from fairalloc.engines.online import OnlinePolicy
from fairalloc.engines.queue_policy import QueuePolicy
from fairalloc.models.kueue_cycle import KueueCycle
from fairalloc.models.kueue_tree import (
    DRS,
    MAX_INT64,
    _Tree,
    _tree_of,
    compare_drs,
    dominant_resource_share,
    kueue_resource,
)

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


def node_shares(instance: Instance) -> dict[str, DRS]:
    """:class:`DRS` of every leaf queue and group for the case's ``usage``."""
    tree = _tree_of(instance)
    q = queues_of(instance)
    U = tree.usage(np.array([q.usage[u] for u in instance.users]).reshape(instance.n, len(q.resources)))
    return {v: tree.drs(v, U) for v in (*instance.users, *q.groups)}


@register("kueue")
class Kueue(QueuePolicy):
    summary = "Kueue fair sharing: weighted DRF of borrowed quota over lendable quota, among cohort siblings"
    about = (
        "Only usage above nominal quota counts, against what the parent cohort can lend; quotas beyond the "
        "capacity are promised, with a warning."
    )
    section = "9.5"
    solver = "numpy event-driven filling"
    zero_unguaranteed = True  # _Tree: nominal = nan_to_num(guarantee): no nominalQuota is a quota of 0

    def shares(self, instance: Instance) -> dict[str, float]:
        """Kueue's integer share (``roundedWeightedShare``) of every leaf queue and group."""
        return {v: d.rounded for v, d in node_shares(instance).items()}

    def precise_shares(self, instance: Instance) -> dict[str, float]:
        """``PreciseWeightedShare`` of every leaf queue and group."""
        return {v: d.precise for v, d in node_shares(instance).items()}

    def online(self, settings: dict[str, Any]) -> OnlinePolicy:
        """Kueue's scheduling cycle (``Scheduler.schedule``): admission in the ClusterQueues'
        queueing strategies, borrowing and lending limits, classic and fair-sharing preemption
        (:mod:`fairalloc.models.kueue_cycle`), with the case's ``settings``."""
        return KueueCycle(settings)

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
        # the nodes' quotas and lendables as matrices, read at once (numpy calls per node were a
        # third of a flat tree's cost at 10^4 queues)
        names = list(t.parent)
        quota = np.array([t.quota[v] for v in names], float).reshape(len(names), t.m)
        lendable = np.array([t.lendable[v] for v in names], float).reshape(len(names), t.m)
        scale = max(1.0, float(np.max(np.where(np.isfinite(quota), quota, 0.0), initial=0.0)))
        # a resource nothing lends is an instant (steep) share, so the level stays continuous at 0
        self.lend = dict(zip(names, np.where(lendable > 0, lendable, 1e-12 * scale)))
        # Kueue's share adds a resource's flavors up (dominant_resource_share): the groups of
        # resource indices it adds, and each group's lendable (the same tiny one where none)
        bases = [kueue_resource(r) for r in t.resources]
        self.flavored = [[j for j, b in enumerate(bases) if b == base] for base in dict.fromkeys(bases)]
        self.merged = any(len(g) > 1 for g in self.flavored)
        grouped = np.stack([lendable[:, g].sum(axis=1) for g in self.flavored], axis=1).tolist()
        self.lend_of = {v: [lent if lent > 0 else 1e-12 * scale for lent in row] for v, row in zip(names, grouped)}
        # each queue's largest multiple of its request within its nominal quota (x0) and within its
        # borrowing limits (cap), for all queues at once: a numpy call per queue was most of the
        # cost of a flat tree of 10^4 queues
        N = np.array([t.nominal[u] for u in t.leaves], float).reshape(n, t.m)
        room = N + np.array(
            [t.borrowing_limit[u] if t.parent[u] is not None else np.zeros(t.m) for u in t.leaves], float
        ).reshape(n, t.m)
        pos = self.D > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            within = np.where(pos, N / self.D, np.inf).min(axis=1, initial=np.inf)
            limit = np.where(pos, room / self.D, np.inf).min(axis=1, initial=np.inf)
        requests = pos.any(axis=1)
        self.x0 = np.where(requests, np.minimum(self.T, within), 0.0)
        self.cap = np.where(requests, np.minimum(self.T, limit), 0.0)
        self._nominal_rows = N.tolist()
        self._rows: dict[int, tuple[float, list[tuple[float, list[tuple[float, float]]]]]] = {}
        self._demand_rows = self.D.tolist()
        self.frozen = np.zeros(n, bool)
        self._leaves_under: dict[str, list[int]] = {}
        # the functions of the level :meth:`prepare` builds, kept from one event to the next: an
        # event changes only the queues it stops and the cohorts above them (:meth:`_stop`)
        self._shares: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}
        self._leaf_fns: dict[str, _Piecewise] = {}
        self._usage_fns: dict[str, _Piecewise] = {}
        self._responses: dict[str, _Piecewise] = {}
        self._live: dict[str, int] = {}
        self._marked: dict[str, frozenset[str]] = {}
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
    def _row(self, i: int) -> tuple[float, list[tuple[float, list[tuple[float, float]]]]]:
        """Leaf ``i``'s weight and, per Kubernetes resource it requests, the lendable and its
        flavors' ``(nominal, demand)``: :meth:`leaf_at`'s operands as floats (it runs at every
        bisection step, where numpy's per-call cost on a few numbers was most of its time), built
        the first time asked (a queue without a cohort never is)."""
        if i not in self._rows:
            nominal, demand = self._nominal_rows[i], self._demand_rows[i]
            self._rows[i] = (
                self.w[self.tree.leaves[i]],
                [
                    (lent, [(nominal[j], demand[j]) for j in g if demand[j] > 0])
                    for g, lent in zip(self.flavored, self.lend_of[self.tree.leaves[i]])
                    if any(demand[j] > 0 for j in g)
                ],
            )
        return self._rows[i]

    def leaf_at(self, u: str, s: float) -> float:
        i = self.tree.index[u]
        if self.frozen[i] or self.cap[i] <= self.x0[i]:
            return self.x[i] if self.frozen[i] else self.x0[i]
        if math.isinf(s):
            return self.cap[i]
        w, rows = self._row(i)
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
        parent's level ``t``: read off the share :meth:`prepare` built (``O(log K)``)."""
        if math.isinf(t) or not self._live_under(g):  # nothing under g can grow: its level does not matter
            return math.inf
        s, h, sigma = self._shares[g]
        if h[-1] <= t and sigma <= 0:
            return math.inf
        if h[0] > t:
            return 0.0
        k = int(np.searchsorted(h, t, "right")) - 1
        if k == len(s) - 1:
            return float(s[-1] + (t - h[-1]) / sigma)
        if s[k + 1] == s[k]:  # the share jumps past t at s[k]: just below it
            return float(np.nextafter(s[k], 0.0))
        return float(s[k] + (t - h[k]) * (s[k + 1] - s[k]) / (h[k + 1] - h[k]))

    # -- the cohorts' shares as functions of their levels ------------------------------------
    def prepare(self, root: str) -> None:
        """The share of every cohort under ``root`` whose level :meth:`level_of` asks, as a
        piecewise linear function of the level of the end of its chain (:meth:`_response`), for
        the queues frozen so far: bottom-up, each cohort's usage the sum of its children's
        responses, so the whole tree costs ``O(K log K)`` per level of cohorts for ``K`` knots (a
        few per queue under it).  The functions are kept across events: after the first, only the
        cohorts above a queue the last event stopped are built again (:meth:`_stop`)."""
        for c in self.tree.kids[root]:
            if c not in self.tree.index:
                self._response(c)

    def _stop(self, hit: np.ndarray, x: np.ndarray) -> None:
        """Freeze the queues ``hit`` at ``x``, and drop the functions that change with them: each
        one's own and those of the cohorts above it (``O(depth)`` a queue)."""
        t = self.tree
        for i in np.flatnonzero(hit & ~self.frozen).tolist():
            u = t.leaves[i]
            live = self.cap[i] > self.x0[i]
            self._leaf_fns.pop(u, None)
            v = t.parent[u]
            while v is not None:
                for kept in (self._usage_fns, self._responses, self._shares):
                    kept.pop(v, None)
                if live and v in self._live:
                    self._live[v] -= 1
                v = t.parent[v]
        self.frozen |= hit
        self.x = np.where(hit, x, self.x)

    def _live_under(self, g: str) -> int:
        """How many queues under ``g`` can still grow (counted once, then kept by :meth:`_stop`)."""
        if g not in self._live:
            self._live[g] = sum(1 for i in self._under(g) if not self.frozen[i] and self.cap[i] > self.x0[i])
        return self._live[g]

    def _usage_fn(self, v: str) -> _Piecewise:
        """Cohort ``v``'s usage as a function of the level of the end of its chain."""
        if v not in self._usage_fns:
            t = self.tree
            kids = t.kids[v]
            if len(kids) == 1 and kids[0] not in t.index:  # inside a chain: the same level below
                self._usage_fns[v] = _above_bound(self._usage_fn(kids[0]), t.local[kids[0]])
            else:
                parts = [
                    _above_bound(self._leaf_fn(c) if c in t.index else self._response(c), t.local[c]) for c in kids
                ]
                self._usage_fns[v] = _sum(parts, t.m)
        return self._usage_fns[v]

    def _leaf_fn(self, u: str) -> _Piecewise:
        """Leaf ``u``'s usage ``x(s) D`` as a function of its parent's level (:meth:`_leaf_piecewise`), kept."""
        if u not in self._leaf_fns:
            self._leaf_fns[u] = self._leaf_piecewise(u)
        return self._leaf_fns[u]

    def _leaf_piecewise(self, u: str) -> _Piecewise:
        """Leaf ``u``'s usage ``x(s) D`` as a function of its parent's level: :meth:`leaf_at` at
        its knots (where a flavor starts borrowing, two resources' responses cross, or the request
        or a limit stops it), linear between them."""
        i = self.tree.index[u]
        d = np.where(self.D[i] > 0, self.D[i], 0.0)
        if self.frozen[i] or self.cap[i] <= self.x0[i]:
            return _Piecewise(np.zeros(1), (self.leaf_at(u, 0.0) * d)[None], np.zeros(len(d)))
        w, rows = self._row(i)
        knots = [0.0]
        for lend, pairs in rows:  # where one more flavor starts borrowing
            ordered = sorted(pairs, key=lambda r: r[0] / r[1])
            for k in range(len(ordered) - 1):
                start = ordered[k + 1][0] / ordered[k + 1][1]
                budget = sum(max(0.0, start * dj - nj) for nj, dj in ordered[: k + 1])
                knots.append(budget * 1000.0 / (lend * w))
        knots = sorted(set(knots))
        fits = np.array([self._fits(i, s) for s in [*knots, knots[-1] + max(1.0, knots[-1])]])
        slopes = (fits[-1] - fits[-2]) / max(1.0, knots[-1])
        f = _Piecewise(np.array(knots), fits[:-1], slopes)
        f = _insert(f, _max_crossings(f.s, -f.y, -slopes))  # the lowest response binds
        past = f.y[-1] + slopes * max(1.0, f.s[-1])  # past every crossing: the lowest there binds
        env = _Piecewise(f.s, f.y.min(axis=1, keepdims=True), slopes[np.argmin(past)][None])
        env, stop = _through(env, np.array([self.cap[i]]))
        # the knot where the response meets its cap is read by interpolation, which may round just
        # below the cap: past that knot the queue is stopped all the same
        capped = (env.y[:, 0] >= self.cap[i]) | (env.s >= min(stop, default=math.inf))
        s, tail = (env.s[: int(np.argmax(capped)) + 1], 0.0) if capped.any() else (env.s, env.tail[0])
        x = np.array([self.leaf_at(u, v) for v in s])
        return _Piecewise(s, x[:, None] * d, tail * d)

    def _fits(self, i: int, s: float) -> list[float]:
        """Each Kubernetes resource's response of leaf ``i`` to level ``s``, as :meth:`leaf_at`."""
        w, rows = self._row(i)
        sw = s * w
        return [_largest_within(pairs, sw * lend / 1000.0) for lend, pairs in rows]

    def _response(self, g: str) -> _Piecewise:
        """Cohort ``g``'s usage as a function of its parent's level (:meth:`_response_piecewise`), kept."""
        if g not in self._responses:
            self._responses[g] = self._response_piecewise(g)
        return self._responses[g]

    def _response_piecewise(self, g: str) -> _Piecewise:
        """Cohort ``g``'s usage as a function of its parent's level ``t``: its usage at its level
        ``sup {s: share_g(s) <= t}``.  Its share's knots are its usage's, with those where a
        resource passes ``g``'s quota or two resources' shares cross added; ``g``'s level jumps
        where its share is flat, and stays where its share jumps (just below, as the search did)."""
        t = self.tree
        U = self._usage_fn(g)
        U, _ = _through(U, t.quota[g])
        over, weights = self._over(g, U)
        U = _insert(U, _max_crossings(U.s, over @ weights, (np.where(np.isfinite(t.quota[g]), U.tail, 0.0)) @ weights))
        over, weights = self._over(g, U)
        cols = over @ weights
        h = np.maximum.accumulate(cols.max(axis=1))
        tails = np.where(np.isfinite(t.quota[g]), U.tail, 0.0) @ weights
        sigma = float(tails[np.argmax(cols[-1] + tails * max(1.0, U.s[-1]))])  # past every crossing
        self._shares[g] = (U.s, h, sigma)
        # the response: the usage at each knot, read at that knot's share
        knots, values = h, U.y
        stay = np.flatnonzero((np.diff(U.s) == 0) & (np.diff(h) > 0))
        knots = np.insert(knots, stay + 1, h[stay + 1])
        values = np.insert(values, stay + 1, U.y[stay], axis=0)
        if knots[0] > 0:
            knots, values = np.r_[0.0, knots], np.vstack([values[:1], values])
        tail = U.tail / sigma if sigma > 0 else np.zeros(t.m)
        return _Piecewise(knots, values, tail)

    def _over(self, g: str, U: _Piecewise) -> tuple[np.ndarray, np.ndarray]:
        """``max(0, U - quota_g)`` and the matrix adding it up into ``g``'s weighted shares of each
        Kubernetes resource (:meth:`_weighted`)."""
        t = self.tree
        with np.errstate(invalid="ignore"):
            over = np.maximum(0.0, U.y - t.quota[g])
        weights = np.zeros((t.m, len(self.flavored)))
        for b, (group, lent) in enumerate(zip(self.flavored, self.lend_of[g])):
            weights[group, b] = 1000.0 / lent / self.w[g]
        return over, weights

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
        levels: list[float] = []
        for _ in range(2 * len(nodes) * t.m + 2):
            growing = [i for i in under if not self.frozen[i] and self.x[i] < self.cap[i]]
            if not growing:
                break
            levels.append(self.step(root, nodes, growing))
            if math.isinf(levels[-1]):
                break
        return levels

    def step(self, root: str, nodes: list[str], growing: list[int]) -> float:
        """One event of the filling of ``root``'s tree: the root's level where a constraint becomes
        tight, the queues it stops frozen there (``inf``: none does, and every queue gets its
        response to ``inf``)."""
        self.prepare(root)
        unbounded = self.at(root, math.inf)
        if self._feasible(unbounded, nodes):
            self.x = unbounded
            return math.inf
        lo, hi = _sup_at_most(lambda s: self._excess_at(root, s), FITS)
        if not self._feasible(self.at(root, lo), nodes):
            # read off the functions, the bound was met a rounding past where the queues' own usage
            # meets it (and the frozen queues would hold the constraint over it): the walks decide
            lo, hi = _sup_at_most(lambda s: self._excess(self.at(root, s), nodes), FITS)
        x = self._across_jump(root, lo, hi, nodes)
        self._freeze(root, x, growing, nodes)
        return lo

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
        a, _ = _bisect(lambda theta: self._excess_at(root, lo, forced(theta)) <= FITS)
        x = self.at(root, lo, force=forced(a))
        if self._feasible(x, nodes):
            return x
        # the functions' rounding let a constraint pass its bound: the walks decide, as above
        a, _ = _bisect(lambda theta: self._feasible(self.at(root, lo, force=forced(theta)), nodes))
        return self.at(root, lo, force=forced(a))

    def _excess_at(self, root: str, s: float, force: dict[str, float] | None = None) -> float:
        """:meth:`_excess` of the allocation at ``root``'s level ``s`` (``force`` as :meth:`grow`),
        read off the cohorts' usage functions: only the cohorts on the way to a constraint (the
        root's quota, a cohort's borrowing limit) or to a forced level add their children's usage
        up, every other cohort's usage is read off its function at its level (``O(log K)``), so a
        step of the searches costs those paths, not a walk over the tree.  A queue's own borrowing
        limit is left out: its response stops there (``cap``), so its excess is never above
        rounding."""
        force = force or {}
        marked: AbstractSet[str] = self._marked_under(root)
        if force:
            marked = set(marked)
            for g in force:
                self._mark_up(marked, self.tree.parent[g])
        U: dict[str, np.ndarray] = {}
        self._usage_at(root, s, marked, force, U)
        constraints = self.tree._constraints
        return float(
            max(((U[v][j] - bound) / scale for v in U for j, bound, scale in constraints(v)), default=-math.inf)
        )

    def _marked_under(self, root: str) -> frozenset[str]:
        """The cohorts of ``root``'s tree with a constraint, and those above them."""
        if root not in self._marked:
            t = self.tree
            marked = {root}
            for v in t.postorder(root):
                if v not in t.index and t._constraints(v):
                    self._mark_up(marked, v)
            self._marked[root] = frozenset(marked)
        return self._marked[root]

    def _mark_up(self, marked: set[str], v: str | None) -> None:
        """``v`` and the cohorts above it into ``marked``, up to the first one there already."""
        while v is not None and v not in marked:
            marked.add(v)
            v = self.tree.parent[v]

    def _usage_at(
        self, v: str, s: float, marked: AbstractSet[str], force: dict[str, float], U: dict[str, np.ndarray]
    ) -> np.ndarray:
        """Cohort ``v``'s usage at the level ``s`` of the end of its chain, as :meth:`grow` reaches
        it; a ``marked`` cohort's recorded in ``U``."""
        t = self.tree
        if v not in marked and not math.isinf(s):
            return self._usage_fn(v).at(np.array([s]))[0]
        kids = t.kids[v]
        chain = t.parent[v] is not None and len(kids) == 1 and kids[0] not in t.index
        total = np.zeros(t.m)
        for c in kids:
            if c in t.index:
                i = t.index[c]
                x = self.leaf_at(c, s)
                used = np.array([x * d if d > 0 else 0.0 for d in self._demand_rows[i]])
            else:
                level = s if chain else force[c] if c in force else self.level_of(c, s)
                used = self._usage_at(c, level, marked, force, U)
            total += np.maximum(0.0, used - t.local[c])
        if v in marked:
            U[v] = total
        return total

    def _feasible(self, x: np.ndarray, nodes: list[str]) -> bool:
        return self._excess(x, nodes) <= FITS

    def _excess(self, x: np.ndarray, nodes: list[str]) -> float:
        """The largest excess of the constraints of ``nodes``; where they are a root's tree
        (``root`` first, as the filling asks), from that tree's queues alone."""
        return self.tree.excess(*self._used_under(x, nodes))

    def _used_under(self, x: np.ndarray, nodes: list[str]) -> tuple[Any, list[str], str | None]:
        """:meth:`_Tree.float_usage`'s arguments for the constraints of ``nodes``: where they are a
        root's tree (``root`` first, as the filling asks), that tree's queues' usage alone."""
        root = nodes[0]
        if self.tree.parent[root] is not None:
            return self.bundle_rows(x), nodes, None
        xs = x.tolist()
        rows = {i: [xs[i] * d if d > 0 else 0.0 for d in self._demand_rows[i]] for i in self._under(root)}
        return rows, nodes, root

    def bundle_rows(self, x: np.ndarray) -> list[list[float]]:
        """:func:`_bundles` in plain floats."""
        return [[u * d if d > 0 else 0.0 for d in row] for u, row in zip(x.tolist(), self._demand_rows)]

    def _freeze(self, root: str, x: np.ndarray, growing: list[int], nodes: list[str]) -> None:
        t = self.tree
        rows, _, under = self._used_under(x, nodes)
        U = t.float_usage(rows, under)  # plain floats: numpy's cost per call on a node's few numbers
        hit = np.zeros(len(x), bool)
        for i in growing:
            if x[i] >= self.cap[i] * (1 - TIGHT) - 1e-15:
                hit[i] = True
        for v, j, slack in t.violation(U, nodes):
            if slack > TIGHT:
                continue
            for i in growing:
                if self.D[i, j] > 0 and self._feeds(t.leaves[i], v, j, U):
                    hit[i] = True
        if not hit.any():  # numerically stuck: stop everyone rather than loop
            hit[growing] = True
            self.warnings.append(f"{root}: an event without a tight constraint; growth stopped")
        # frozen queues stay where the event found them; the others restart from their response
        self._stop(hit, x)

    def _feeds(self, leaf: str, v: str, j: int, U: Mapping[str, Any]) -> bool:
        """Whether ``leaf``'s growth in resource ``j`` reaches node ``v`` (above every local quota)."""
        node: str | None = leaf
        while node is not None and node != v:
            if U[node][j] < self.tree.local[node][j] * (1 - TIGHT):
                return False
            node = self.tree.parent[node]
        return node == v


class _Piecewise(NamedTuple):
    """A nondecreasing, right-continuous, piecewise linear function of a level ``s >= 0`` into
    ``R^m``: knots ``s`` from 0 up (a knot repeated where the function jumps, the last of them its
    value), the values ``y`` (K, m) there, linear between distinct knots, and the slope ``tail``
    past the last knot."""

    s: np.ndarray
    y: np.ndarray
    tail: np.ndarray

    def at(self, points: np.ndarray) -> np.ndarray:
        """The values at ``points`` (P,): (P, m)."""
        s, y = self.s, self.y
        k = np.maximum(np.searchsorted(s, points, "right") - 1, 0)
        last = k == len(s) - 1
        nxt = np.minimum(k + 1, len(s) - 1)
        width = np.where(last, 1.0, s[nxt] - s[k])
        inside = y[k] + (y[nxt] - y[k]) * ((points - s[k]) / width)[:, None]
        return np.where(last[:, None], y[k] + self.tail * (points - s[k])[:, None], inside)


def _insert(f: _Piecewise, points: list[float]) -> _Piecewise:
    """``f`` with knots added at ``points`` (inside its linear pieces or past its last knot)."""
    if not points:  # most calls: numpy's set operations on nothing were a sixth of a deep tree's cost
        return f
    new = np.unique(np.asarray(points, float))
    new = new[np.isfinite(new) & ~np.isin(new, f.s)]
    if not len(new):
        return f
    at = np.searchsorted(f.s, new, "right")
    return _Piecewise(np.insert(f.s, at, new), np.insert(f.y, at, f.at(new), axis=0), f.tail)


def _crossings(f: _Piecewise, bound: np.ndarray) -> list[tuple[float, int]]:
    """``(level, column)`` where each column of ``f`` passes its ``bound`` inside a linear piece or
    past the last knot (once at most: ``f`` is nondecreasing)."""
    s, y = f.s, f.y
    out = []
    for j in np.flatnonzero(np.isfinite(bound) & (bound > 0)):
        a, col = bound[j], y[:, j]
        c = int(np.argmax(col > a))
        if col[c] > a:
            if c > 0 and s[c] > s[c - 1] and col[c - 1] < a:
                out.append((s[c - 1] + (a - col[c - 1]) * (s[c] - s[c - 1]) / (col[c] - col[c - 1]), int(j)))
        elif f.tail[j] > 0 and col[-1] < a:
            out.append((s[-1] + (a - col[-1]) / f.tail[j], int(j)))
    return out


def _through(f: _Piecewise, bound: np.ndarray) -> tuple[_Piecewise, list[float]]:
    """``f`` with a knot where each column passes its ``bound``, valued at the bound exactly there;
    and those knots.  Read by interpolation the value may round a unit above the bound: then
    ``max(0, f - bound)``, or a share, is a few 1e-15 there instead of 0, and a cohort's response
    that jumps at that share (its share flat while its usage grows) becomes a ramp of slope 1e15,
    whose cancellation in :func:`_sum`'s running slope left errors of 0.1 per unit level."""
    points = _crossings(f, bound)
    g = _insert(f, [level for level, _ in points])
    y = g.y.copy()
    for level, j in points:
        if level not in f.s:  # a knot of its own: the bound is its value (to rounding)
            y[int(np.searchsorted(g.s, level)), j] = bound[j]
    return _Piecewise(g.s, y, g.tail), [level for level, _ in points]


def _above_bound(f: _Piecewise, bound: np.ndarray) -> _Piecewise:
    """``max(0, f - bound)``, a knot added where a column passes its bound."""
    if (bound == 0).all():  # no local quota (most nodes): no knot to add
        return _Piecewise(f.s, np.maximum(0.0, f.y - bound), f.tail)
    f, _ = _through(f, bound)
    with np.errstate(invalid="ignore"):
        y = np.maximum(0.0, f.y - bound)
    return _Piecewise(f.s, y, np.where(np.isfinite(bound), f.tail, 0.0))


def _max_crossings(s: np.ndarray, cols: np.ndarray, tail: np.ndarray) -> list[float]:
    """Where two columns of ``cols`` (K, B) cross inside a linear piece or past the last knot."""
    out: list[float] = []
    ramp = np.diff(s) > 0
    for b in range(cols.shape[1]):
        for c in range(b + 1, cols.shape[1]):
            d = cols[:, b] - cols[:, c]
            cross = np.flatnonzero(ramp & (d[:-1] * d[1:] < 0))
            out += (s[cross] + d[cross] * (s[cross + 1] - s[cross]) / (d[cross] - d[cross + 1])).tolist()
            slope = tail[b] - tail[c]
            if d[-1] * slope < 0:
                out.append(s[-1] - d[-1] / slope)
    return out


def _sum(parts: list[_Piecewise], m: int) -> _Piecewise:
    """The sum of ``parts``, by their slope changes and jumps sorted together: ``O(K log K)`` for
    ``K`` knots in all, however many parts (a merge evaluating each part at every knot would be
    ``O(parts K)``).  A step narrower than :data:`~fairalloc.core.tolerances.KNOT_ULPS` roundings
    of its knot is a jump: a response's knots are shares, and where a cohort's level jumps its
    equal shares, summed in another order, may part by an ulp; read as a ramp, its slope of 1e15
    and back cancelled the slope of another part in the running sum (3.205 came out 3.0 past a
    jump of 9.4 over 1.8e-15, and the usage read off the sum missed what its queues use)."""
    if len(parts) <= 1:  # a cohort without children uses nothing
        return parts[0] if parts else _Piecewise(np.zeros(1), np.zeros((1, m)), np.zeros(m))
    s = np.concatenate([p.s for p in parts])
    y = np.concatenate([p.y for p in parts])
    ends = np.cumsum([len(p.s) for p in parts]) - 1
    inner = np.ones(len(s) - 1, bool)
    inner[ends[:-1]] = False  # the step from one part's last knot to the next part's first
    ds, dy = np.diff(s)[inner], np.diff(y, axis=0)[inner]
    left = np.flatnonzero(inner)
    ramp = ds > KNOT_ULPS * np.finfo(float).eps * s[left + 1]
    slope = np.zeros_like(dy)
    slope[ramp] = dy[ramp] / ds[ramp, None]
    jump = np.where(ramp[:, None], 0.0, dy)
    tails = np.array([p.tail for p in parts])
    at = np.concatenate([s[left], s[left + 1], s[ends]])
    jumps = np.concatenate([jump, np.zeros_like(dy), np.zeros_like(tails)])
    turns = np.concatenate([slope, -slope, tails])
    order = np.argsort(at, kind="stable")
    at, jumps, turns = at[order], jumps[order], turns[order]
    first = np.flatnonzero(np.concatenate([[True], at[1:] != at[:-1]]))
    knots = at[first]
    J = np.add.reduceat(jumps, first, axis=0)
    # every part is nondecreasing: a negative slope is the rounding of slopes that cancel
    slope_after = np.maximum(np.cumsum(np.add.reduceat(turns, first, axis=0), axis=0), 0.0)
    f0 = y[np.concatenate([[0], ends[:-1] + 1])].sum(axis=0)
    rise = np.vstack([np.zeros((1, m)), np.cumsum(slope_after[:-1] * np.diff(knots)[:, None], axis=0)])
    right = f0 + np.cumsum(J, axis=0) + rise
    jumped = (J != 0).any(axis=1)
    count = 1 + jumped
    pos = np.cumsum(count) - 1
    out_y = np.empty((int(count.sum()), m))
    out_y[pos] = right
    out_y[pos[jumped] - 1] = (right - J)[jumped]
    return _Piecewise(np.repeat(knots, count), np.maximum.accumulate(out_y, axis=0), slope_after[-1])


def _scaled(f: _Piecewise, k: float) -> _Piecewise:
    return _Piecewise(f.s, f.y * k, f.tail * k)


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
