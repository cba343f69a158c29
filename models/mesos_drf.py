"""Apache Mesos' DRF allocator: weighted DRF over the role tree, with quota guarantees and limits.

Source read: apache/mesos at commit c1b42f79d157aa900be5cbb0c1023f1479962aa7 (2024-08-23), Apache-2.0:

* ``src/master/allocator/mesos/sorter/drf/sorter.cpp``, ``DRFSorter::calculateShare``: a node's
  share is ``max_j allocation_j / total_j / weight`` over the *scalar* resources of the cluster's
  total (``total_.totals``; a resource of total 0, or excluded from fairness, is skipped).  The
  allocation of an internal node is the sum of its subtree's (``DRFSorter::allocated`` walks up
  the tree), inactive leaves included;
* ``DRFSorter::sort`` and ``Node::compareDRF`` (``sorter.hpp``): at every node of the role tree
  (role ``"a/b"`` is child ``b`` of ``a``) the children are sorted by share, then by allocation
  count (``Allocation::count``: how many times ``allocated`` was called on the subtree, never
  decreased), then by path; the result lists the active leaves in pre-order.  A role that has
  sub-roles competes with them as the virtual leaf ``"a/."`` of weight 1, while ``a``'s weight
  is the internal node's;
* ``src/master/allocator/mesos/hierarchical.cpp``, ``HierarchicalAllocatorProcess::
  __generateOffers``: stage 1 offers, in sort order, only to roles below their quota guarantee
  (what they are owed, plus the non-guaranteed resources that come with it), stage 2 to every
  role in sort order; both cap a role at its quota limit and hold back ``requiredHeadroom =
  sum over top-level roles of (guarantee - consumed)^+`` for guarantees not yet used (also of
  roles without frameworks).  Quota is set on top-level roles only (``quota_handler.cpp``).

**Order and shares** (:meth:`MesosDRF.order`, :meth:`MesosDRF.shares`): the sorter for the
case's ``usage``: weighted dominant share ``s_v = max_j U_vj / R_j / w_v`` (``U_v``: the usage of
``v``'s subtree, ``R``: the cluster's capacity), the tie by allocation count (optional; a group's
count is its leaves' total) then by name; queues without a request are inactive, not listed.

**Entitlement** (:meth:`MesosDRF.entitlement`): the allocator's fluid equilibrium, what the roles
converge to when every role asks for its ``request`` (Leontief: it grows in the shape of its
request ``D_i``, at most ``T_i`` units) and offers go, bit by bit, to the role first in the sort:

* level by level of the tree from the root, the children of a node share what the node gets by
  weighted DRF on the cluster's totals: ``max-min_c  k_c u_c``, ``k_c = max_j A_cj / R_j / w_c``
  over resources with ``R_j > 0``, child ``c`` holding ``u_c`` units of its shape ``A_c``.  A
  leaf's shape is its request; a group's is what it takes when each of its growing children
  holds one unit of weighted dominant share, ``A_g = sum_c (w_c / kappa_c) A_c`` with
  ``kappa_c = max_j A_cj / R_j`` (the sorter compares a subtree by its aggregate allocation, and
  inside it the children keep equal weighted shares).  A group's bundle ``u_g A_g`` is then split
  among its own children the same way;
* a child's units are bounded below by its *guarantee* ``lo_c`` (the largest multiple of ``A_c``
  within its guarantee on the resources it guarantees, and for a group at least what holds its
  children's lower bounds, ``sum_c lo_c A_c``, resource by resource: stage 1, guarantees come
  before the rest is shared) and above by its request (a group: until its last child's) and its
  *limit* ``hi_c`` (the largest multiple of ``A_c`` within the limit);
* a guarantee is a quantity per resource, not a bundle (``__generateOffers`` stage 1 offers the
  guaranteed resources unconditionally, the non-guaranteed ones that come with them only from the
  headroom's surplus): when the children's bundles at ``lo`` do not fit together, a first filling
  up to ``lo`` (bounds ``0 .. lo``) decides how far each gets, and the filling goes on from there;
* at the root every top-level queue is charged ``max(guarantee, usage)`` per resource: what a
  guarantee leaves unused is held back as headroom and stays idle (Mesos' ``requiredHeadroom``),
  also for a queue without request.  Guarantees that exceed the capacity (a group's: its own or
  its children's, whichever is more, per resource) are refused.

One round at a node::

    max t  s.t.  k_c u_c >= t (active children),  u_c fixed (frozen),  lo_c <= u_c <= hi_c,
                 sum_c max(g_c, u_c A_c) <= C          (root: g = guarantees; below: g = 0,
                                                        C = the node's bundle)

after which children at ``hi`` or needing a saturated resource (beyond their own guarantee)
freeze.  :meth:`MesosDRF.program` solves these rounds as pulp LPs.  :meth:`MesosDRF.fast` passes
them all in one sweep: the charges are piecewise linear in the level, with breakpoints where a
child reaches ``hi`` or starts taking more of a resource than it holds, a resource that fills
freezing the children taking more of it.  At the root (guarantees held back, a breakpoint per
child and resource) :func:`_sweep` passes the sorted breakpoints one by one: O(k m log(k m)) for k
children.  Below the root nothing is held back, a child's charges all start and stop growing
together, and every group of one depth is filled at once (:func:`_fill_level`): per round, the
charges at every group's sorted breakpoints come from prefix sums over the whole level's arrays,
the first resource to fill is found in each group, and the children there freeze; a round fills a
resource in each group still filling, so there are at most m + 1 rounds per depth, each O(k m) on
the depth's k children after one O(k log k) sort.  In all O(n m log n) time and O(n m) memory, in
O(depth m) passes of numpy over arrays instead of a pass of Python per group (six levels deep,
10^4 queues had some 3,600 groups of 4 children each, a sweep each: 30 times ``drf``'s solve).  The
rounds before were a pass over every breakpoint each, O(k^2 m), and their number grew with the
queues.  With no group, guarantee or limit it is DRF (``drf``) exactly.

Limits of the model: in the real sorter a subtree's allocation takes whatever shape its children's
allocations give it; one shape per group, fixed for the whole filling, is the level-by-level
reading that LPs express.  It follows the sorter while a group's children all grow, and can leave part of a
group's bundle idle once some of them stop (at their request or limit) before the others.
Not modelled: reservations, revocable and shared resources, offer filters,
``min_allocatable_resources``, agents (quantities are pooled).  Mesos accepts quota on top-level
roles only (``quota_handler.cpp``); the model honours ``guarantee`` and ``limit`` at every node.

How it differs from textbook DRF (Ghodsi et al., NSDI 2011, section 4): guarantees are served
first and unused ones stay idle (not work-conserving); limits cap roles; shares are compared
between subtrees on their aggregate usage (not H-DRF's, SoCC 2013); ties go to the role allocated
fewer times, then to the name.

The sorter of ``DRFSorterTest.WDRF`` (b weighs 2):

>>> import fairalloc
>>> from fairalloc.core.queues import Queues
>>> q = Queues.build(["cpu", "mem"], {"a": {"usage": [5, 5]}, "b": {"weight": 2, "usage": [6, 6]}}, [])
>>> inst = fairalloc.Instance([100, 100], [[1, 4], [3, 1]], users=["a", "b"], resources=["cpu", "mem"], queues=q)
>>> m = MesosDRF()
>>> m.order(inst), m.shares(inst)
(['b', 'a'], {'a': 0.05, 'b': 0.03})

The equilibrium of case ``mesos-quota-headroom``: a's guarantee first, c's unused guarantee of 20
CPUs held back, the rest shared by DRF (both a and b at 8/9 of their request):

>>> case = fairalloc.load_case("mesos-quota-headroom")
>>> m.fast(case.instance).bundles.round(2).tolist()
[[53.33, 17.78], [26.67, 53.33], [0.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, lp_name, lp_names, solve_lp, task_variables
from fairalloc.core.deferred import deferred
from fairalloc.core.errors import CaseError, SolverError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of
from fairalloc.core.registry import register
from fairalloc.core.tolerances import FEASIBILITY, SATURATION
from fairalloc.engines.queue_policy import QueuePolicy
from fairalloc.models.mesos_cycle import MesosCycle, role_share, sorted_roles

if TYPE_CHECKING:
    import pulp
else:
    pulp = deferred("pulp")


#: a round's highest level at a node (an LP)
_Level = Callable[["_Round"], float]
#: the filling at a node: its children's units and the rounds (a sweep, or rounds of LPs)
_Filling = Callable[["_Round"], tuple[np.ndarray, int]]


@dataclass
class _Round:
    """One round of the filling at a node: its children's shapes, keys, bounds, what is held."""

    node: str
    index: int
    shapes: np.ndarray  # (k, m)
    key: np.ndarray  # (k,)
    lo: np.ndarray
    hi: np.ndarray
    held: np.ndarray  # (k, m) guarantees held back (root only; zeros elsewhere)
    capacity: np.ndarray  # (m,)
    units: np.ndarray  # (k,) current units (fixed for frozen kids)
    active: np.ndarray  # (k,) bool
    names: list[str]
    leaves: list[bool]  # which children are leaf queues (their LP variables are tasks_<queue>)
    resources: list[str]
    at_root: bool
    guarantees: bool = False  # a first filling up to the lower bounds (they do not fit together)


@register("mesos-drf")
class MesosDRF(QueuePolicy):
    summary = "Apache Mesos DRF allocator: weighted DRF over the role tree, quota guarantees (headroom) and limits"
    about = (
        "Unused guarantees are held back as idle headroom, so unlike drf it is not work conserving; without "
        "groups, guarantees or limits it is drf."
    )
    section = "9.4"
    solver = "numpy (exact breakpoints)"

    def online(self, settings: dict) -> MesosCycle:
        """The allocation cycle at the level of jobs (:mod:`fairalloc.models.mesos_cycle`)."""
        return MesosCycle(settings)

    # -- the sorter ---------------------------------------------------------------------------
    def shares(self, instance: Instance) -> dict[str, float]:
        """Each queue's weighted dominant share of its ``usage`` (``DRFSorter::calculateShare``);
        groups too, on their subtree's usage and with their own weight."""
        q = _queues(self, instance)
        return {v: role_share(q.subtree_usage(v), instance.capacity, q.weight[v]) for v in (*instance.users, *q.groups)}

    def order(self, instance: Instance, allocations: Mapping[str, int] | None = None) -> list[str]:
        """Active leaf queues in the sorter's order (``DRFSorter::sort``): at every node its
        children by weighted dominant share of their subtree's usage, then by ``allocations``
        (times allocated; a group's default is its leaves' total; default 0), then by name."""
        q = _queues(self, instance)
        on = dict(zip(instance.users, (instance.demand > 0).any(axis=1) & (instance.bounds() > 0)))
        return sorted_roles(q, instance.capacity, q.subtree_usage, on, allocations or {})

    # -- the equilibrium ----------------------------------------------------------------------
    def entitlement(self, instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
        """Info: ``rounds``, the levels at which children froze, counted node by node (the
        program's are its LP rounds), and ``guarantees_cut``, the nodes whose children's guaranteed
        bundles did not fit together, in the order of a walk of the tree from the root."""
        units, rounds, cut = _equilibrium_by_level(self, instance)
        return units[:, None] * instance.demand, {"rounds": rounds, "guarantees_cut": cut}

    def program(self, instance: Instance) -> Program:
        description = f"""{self.name}: the Mesos allocator's equilibrium as a sequence of LPs, node by node of the
role tree from the root, round by round at each node (children c of the node, units u_c of their shape A_c):
  max t  s.t.  k_c u_c >= t (active children), u_c fixed (frozen), lo_c <= u_c <= hi_c,
               h_cj >= g_cj, h_cj >= A_cj u_c, sum_c h_cj <= C_j   (root: guarantees g held back)
               sum_c A_cj u_c <= C_j                                  (below: C = the node's bundle)
k_c = max_j A_cj / R_j / w_c; after each round children at hi or needing a saturated resource freeze."""

        tree = _tree(self, instance)
        first = _round_lp(self.name, _opening_round(instance, tree, tree.root, instance.capacity.astype(float), True))
        title = "root round 1"

        def level(rd: _Round, p: Program, solvers: set[str]) -> float:
            opening = rd.at_root and rd.index == 1
            lp, t = first if opening else _round_lp(self.name, rd)
            where = f"{'root' if rd.at_root else rd.node} round {rd.index}"
            if not opening:
                p.models.append((where, lp))
            solvers.add(solve_lp(lp, f"{self.name} {where}"))
            return float(t.varValue or 0.0)

        def solve(p: Program) -> Allocation:
            del p.models[1:]  # a solve that failed half-way starts again
            solvers: set[str] = set()
            units, rounds, cut = _equilibrium(self, instance, lambda rd: _fill(rd, lambda r: level(r, p, solvers)))
            bundles = units[:, None] * instance.demand
            info = {"rounds": rounds, "lps": len(p.models), "guarantees_cut": cut}
            return Allocation.from_bundles(instance, bundles, self.name, "program", "pulp+" + "/".join(solvers), info)

        return Program(
            self.name,
            description,
            [(title, first[0])],
            solve=solve,
            later="later rounds, and the rounds below the root, are built as the sequence is solved",
        )


def _queues(mech: MesosDRF, instance: Instance) -> Queues:
    instance.scalar_weights(mech.name)  # per-resource weights are refused
    q = queues_of(instance)
    _refuse_guarantee_above_limit(q)
    return q


def _refuse_guarantee_above_limit(q: Queues) -> None:
    """A quota whose guarantee exceeds its limit is one Mesos refuses (apache/mesos at c1b42f79,
    ``src/master/quota.cpp``, ``validate(const QuotaConfig&)``: "'QuotaConfig.guarantees' ... is not
    contained within the 'QuotaConfig.limits'"), so no answer is given for it."""
    names = list(q.limit)
    g, lim = _quota(q, names, len(q.resources))
    above = g > lim
    if above.any():
        v, r = divmod(int(np.argmax(above)), len(q.resources))  # the first node, as listed
        node = names[v]
        table = "groups" if q.is_group(node) else "users"
        raise CaseError(
            f"{table}.{node}.guarantee.{q.resources[r]}: {q.guarantee[node][r]:g} is above the limit "
            f"{q.limit[node][r]:g}: "
            "Mesos refuses such a quota (src/master/quota.cpp, validate(QuotaConfig): the guarantees must lie "
            "within the limits)"
        )


# -- the tree ---------------------------------------------------------------------------------
def _tree(mech: MesosDRF, instance: Instance) -> _Table:
    """The role tree, every node with its shape and bounds, built from the leaves up: the leaves
    in one pass over arrays, then the groups a level of depth at a time, deepest first, each level
    in one pass over its children's rows (O(n m) in all)."""
    instance.scalar_weights(mech.name)  # per-resource weights are refused
    q = queues_of(instance)
    t = _Table(q, instance)
    if (t.g > t.lim).any():  # refused, the first such node as listed named
        _refuse_guarantee_above_limit(q)
    for rows in t.levels():
        t.gather(rows)
    return t


class _Table:
    """Every node of the tree as a row (leaves, then groups, then the root): shape, weight, cap,
    guarantee, limit, owed (its guarantee or its children's, whichever is more, per resource),
    bounds (``lo``, ``hi``, in units of its shape), and each group's children's rows."""

    def __init__(self, q: Queues, instance: Instance) -> None:
        n, m, R = instance.n, instance.m, instance.capacity
        self.names = [*instance.users, *q.groups]
        self.row = {v: r for r, v in enumerate(self.names)}
        self.root, self.n, self.R = len(self.names), n, R
        top = self.root
        up = [q.parent[v] for v in self.names]
        self.parent: np.ndarray = np.array([top if p is None else self.row[p] for p in up] + [-1], dtype=int)
        D, T = instance.demand, instance.bounds()
        on = (D > 0).any(axis=1) & (T > 0)
        self.shape = np.zeros((top + 1, m))
        self.shape[:n] = np.where(on[:, None], D, 0.0)
        self.cap = np.zeros(top + 1)
        self.cap[:n] = np.where(on, T, 0.0)
        self.weight = np.array([q.weight[v] for v in self.names] + [1.0], dtype=float)
        g, lim = _quota(q, self.names, m)
        self.g, self.lim = np.vstack([g, np.zeros((1, m))]), np.vstack([lim, np.full((1, m), np.inf)])
        self.lo, self.hi = np.zeros(top + 1), np.zeros(top + 1)
        self.lo[:n], self.hi[:n] = _bounds(self.shape[:n], self.cap[:n], g[:n], lim[:n], np.zeros((n, m)), R)
        self.held, self.owed = np.zeros((top + 1, m)), self.g.copy()
        # each node's children in file order (groups first, as Queues.children), as one array
        # sorted by parent: row r's are kid_rows[start[r]:start[r + 1]]
        listed = np.array([self.row[v] for v in (*q.groups, *q.leaf_names)], dtype=int)
        self.kid_rows = listed[np.argsort(self.parent[listed], kind="stable")]
        self.start = np.concatenate([[0], np.cumsum(np.bincount(self.parent[listed], minlength=top + 1))])

    def name(self, r: int) -> str:
        return "root" if r == self.root else self.names[r]

    def children(self, r: int) -> np.ndarray:
        return self.kid_rows[self.start[r] : self.start[r + 1]]

    def kids_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The children of the nodes ``rows``, each node's in a run, and how many each has."""
        count = self.start[rows + 1] - self.start[rows]
        first = np.cumsum(count) - count
        return self.kid_rows[np.repeat(self.start[rows] - first, count) + np.arange(count.sum())], count

    def levels(self) -> list[np.ndarray]:
        """The groups' rows by depth, deepest first, the root last: each group's depth counted by
        walking every group's path up together, a step per level."""
        rows = np.arange(self.n, self.root + 1)
        depth, up = np.zeros(len(rows), dtype=int), self.parent[rows]
        while (up >= 0).any():
            depth += up >= 0
            up = np.where(up >= 0, self.parent[up], -1)
        return [rows[depth == d] for d in range(int(depth.max(initial=0)), -1, -1)]

    def gather(self, rows: np.ndarray) -> None:
        """The groups ``rows`` from their children: one unit of a group is every growing child at
        one unit of weighted dominant share; its lower bound holds its children's, per resource."""
        kids, count = self.kids_of(rows)
        up, S, hi = np.repeat(rows, count), self.shape[kids], self.hi[kids]
        kappa = _dominant(S, self.R)
        grow = (hi > 0) & (kappa > 0)
        per_unit = np.where(grow, self.weight[kids] / np.where(grow, kappa, 1.0), 0.0)
        np.add.at(self.shape, up, per_unit[:, None] * S)
        np.maximum.at(self.cap, up[grow], hi[grow] / per_unit[grow])
        np.add.at(self.held, up, np.where(grow, self.lo[kids], 0.0)[:, None] * S)
        under = np.zeros((len(self.owed), self.owed.shape[1]))
        np.add.at(under, up, self.owed[kids])
        self.owed[rows] = np.maximum(self.g[rows], under[rows])
        bounds = _bounds(self.shape[rows], self.cap[rows], self.g[rows], self.lim[rows], self.held[rows], self.R)
        self.lo[rows], self.hi[rows] = bounds


def _quota(q: Queues, names: Sequence[str], m: int) -> tuple[np.ndarray, np.ndarray]:
    """``(k, m)`` guarantees (0 where none) and limits (inf where none) of ``names`` (none: the root)."""
    if not names:
        return np.zeros((1, m)), np.full((1, m), np.inf)
    g = np.array([q.guarantee[v] for v in names], dtype=float).reshape(len(names), m)
    return np.nan_to_num(g, nan=0.0), np.array([q.limit[v] for v in names], dtype=float).reshape(len(names), m)


def _dominant(shapes: np.ndarray, R: np.ndarray) -> np.ndarray:
    """``(k,)``: each row's dominant share of the capacity (resources of capacity 0 left out)."""
    on = R > 0
    return np.max(shapes[:, on] / R[on], axis=1, initial=0.0)


def _bounds(
    A: np.ndarray, cap: np.ndarray, g: np.ndarray, lim: np.ndarray, held: np.ndarray, R: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``lo, hi`` of nodes of shapes ``A`` (rows).  ``hi``: request and limit (nothing when it
    needs a resource of capacity 0); ``lo``: its guarantee, or for a group what holds its
    children's lower bounds ``held``, added up resource by resource (a guarantee is a quantity
    per resource: each child's ``lo_c / a_c`` would scale every other child up with it); never
    above ``hi``."""
    need = A > 0
    safe = np.where(need, A, 1.0)
    hi = np.where((need & (R <= 0)).any(axis=1), 0.0, cap)
    hi = np.minimum(hi, np.min(np.where(need, lim / safe, np.inf), axis=1))
    guaranteed = need & (g > 0)
    lo = np.where(guaranteed.any(axis=1), np.min(np.where(guaranteed, g / safe, np.inf), axis=1), 0.0)
    lo = np.maximum(lo, np.max(np.where(need, held / safe, 0.0), axis=1))
    return np.minimum(lo, hi), hi


# -- the filling, node by node ----------------------------------------------------------------
def _equilibrium(mech: MesosDRF, instance: Instance, fill: _Filling) -> tuple[np.ndarray, int, list[str]]:
    """Each leaf's units, the rounds, and the nodes whose children's guarantees did not fit together."""
    tree = _tree(mech, instance)
    _refuse_guarantees_beyond(tree, instance)
    units = np.zeros(instance.n)
    rounds = 0
    cut: list[str] = []

    def split(row: int, capacity: np.ndarray, at_root: bool) -> None:
        nonlocal rounds
        kids = tree.children(row)
        if not len(kids):
            return
        u, r, shared = _fill_node(instance, tree, row, capacity, at_root, fill)
        rounds += r
        cut.extend([tree.name(row)] if shared else [])
        leaf = kids < tree.n
        units[kids[leaf]] = u[leaf]
        for k, uk in zip(kids[~leaf].tolist(), u[~leaf].tolist()):
            split(k, uk * tree.shape[k], False)

    split(tree.root, instance.capacity.astype(float), True)
    return units, rounds, cut


def _refuse_guarantees_beyond(tree: _Table, instance: Instance) -> None:
    """Guarantees beyond the capacity, per resource, are refused: Mesos' headroom
    (``__generateOffers``, ``requiredHeadroom``) could never hold them."""
    need, capacity = tree.owed[tree.children(tree.root)].sum(axis=0), instance.capacity
    over = need > capacity * (1 + FEASIBILITY)
    if over.any():
        j = int(np.argmax(over))
        raise CaseError(
            f"guarantee: the guarantees under root need {need[j]:g} {instance.resources[j]}, "
            f"more than the {capacity[j]:g} there are"
        )


def _fill_node(
    instance: Instance, tree: _Table, row: int, capacity: np.ndarray, at_root: bool, fill: _Filling
) -> tuple[np.ndarray, int, bool]:
    """The units of ``node``'s children and the rounds: from their lower bounds, or, when those
    do not fit together (then also ``True``), from what a first filling up to them reaches."""
    rd = _opening_round(instance, tree, row, capacity, at_root)
    units, rounds = fill(rd)
    if not rd.guarantees:
        return units, rounds, False
    rest = _first_round(instance, tree, row, capacity, at_root)
    rest.lo, rest.units, rest.index = units, units, rounds
    units, more = fill(rest)
    return units, rounds + more, True


def _opening_round(instance: Instance, tree: _Table, row: int, capacity: np.ndarray, at_root: bool) -> _Round:
    """The first round at ``node``: its children at their lower bounds, or, when those bundles
    do not fit together (a guarantee on one resource brings the others its shape needs), a first
    filling from 0 up to them."""
    rd = _first_round(instance, tree, row, capacity, at_root)
    if (_charges(rd, 0.0) <= capacity * (1 + FEASIBILITY)).all():
        return rd
    rd.active, rd.guarantees = rd.active & (rd.lo > 0), True
    rd.lo, rd.hi, rd.units = np.zeros_like(rd.lo), np.where(rd.active, rd.lo, 0.0), np.zeros_like(rd.lo)
    return rd


def _first_round(instance: Instance, tree: _Table, row: int, capacity: np.ndarray, at_root: bool) -> _Round:
    """The filling among ``row``'s children before its first round: every child at its guarantee."""
    kids = tree.children(row)
    A = tree.shape[kids]
    key = _dominant(A, instance.capacity) / tree.weight[kids]
    lo, hi = tree.lo[kids], tree.hi[kids]
    held = tree.g[kids] if at_root else np.zeros_like(A)
    active = (key > 0) & (hi > 0)
    names = [tree.names[k] for k in kids.tolist()]
    leaves = (kids < tree.n).tolist()
    units = np.where(active, lo, 0.0)
    resources = list(instance.resources)
    return _Round(tree.name(row), 0, A, key, lo, hi, held, capacity, units, active, names, leaves, resources, at_root)


def _charges(rd: _Round, t: float) -> np.ndarray:
    """``(m,)``: what the children take at level ``t`` (frozen ones fixed), guarantees held back."""
    u = np.where(rd.active, np.clip(t / np.where(rd.key > 0, rd.key, np.inf), rd.lo, rd.hi), rd.units)
    return np.maximum(rd.held, u[:, None] * rd.shapes).sum(axis=0)


def _fill(rd: _Round, level: _Level) -> tuple[np.ndarray, int]:
    """Max-min of ``key * u`` over the children of a node, with bounds and held-back guarantees."""
    A, key, lo, hi, held, capacity, node = rd.shapes, rd.key, rd.lo, rd.hi, rd.held, rd.capacity, rd.node
    rounds = 0
    while rd.active.any():
        rounds += 1
        rd.index += 1
        t = level(rd)
        u = np.clip(t / np.where(key > 0, key, np.inf), lo, hi)
        u = np.where(rd.active, u, rd.units)
        use = u[:, None] * A
        saturated = np.maximum(held, use).sum(axis=0) >= capacity * (1 - SATURATION)
        own = use >= held * (1 - SATURATION)  # growing on j takes from the others
        stop = rd.active & ((u >= hi * (1 - SATURATION)) | ((A > 0) & saturated & own).any(axis=1))
        if not stop.any():
            raise SolverError(f"mesos-drf: round {rounds} at {node} froze no queue (numerical trouble)")
        rd.units = np.where(stop, u, rd.units)
        rd.active = rd.active & ~stop
    return rd.units, rounds


def _sweep(rd: _Round) -> tuple[np.ndarray, int]:
    """The filling at a node in one sweep of its breakpoints (the same answer as its rounds, each
    round's level found exactly; the fast filling's at the root, where guarantees are held back,
    and the filling node by node of the tests): the charges are piecewise linear in the level ``t``, with
    breakpoints where a child starts taking more of resource ``j`` than it holds
    (``t = k_c max(lo_c, g_cj / A_cj)``) and where it reaches ``hi_c``.  They are sorted once and
    passed in order, each resource's charge and slope kept up to date; when a resource fills
    (``capacity - charge`` over the slope comes before the next breakpoint) the children taking
    more of it freeze, and a child that would start taking more of a full resource freezes there.
    Cost: O(k m log(k m)) for the sort, O(m) per breakpoint, O(k m) per resource that fills."""
    sw = _Sweep(rd)
    times, codes = sw.breakpoints()
    m = rd.shapes.shape[1]
    for te, code in zip(times.tolist(), codes.tolist()):
        c, j = divmod(code, m + 1)
        if not sw.active[c]:
            continue
        sw.fill_until(te)
        if not sw.active[c]:
            continue
        if j == m:
            sw.freeze(c, float(rd.hi[c]))
        elif sw.saturated[j]:  # taking more of a full resource: it stops here
            sw.freeze(c, min(max(te / float(rd.key[c]), float(rd.lo[c])), float(rd.hi[c])))
        else:
            sw.rise(c, j)
    sw.fill_until(np.inf)
    return sw.units, len(sw.moments)


class _Sweep:
    """The state of :func:`_sweep`: the level, each resource's charge and slope (Python lists: a
    breakpoint touches one or a few resources), who still grows on what."""

    def __init__(self, rd: _Round) -> None:
        self.rd = rd
        self.active = rd.active.copy()
        self.units = rd.units.astype(float).copy()
        self.key = np.where(self.active, rd.key, 1.0)
        self.rate = (rd.shapes / self.key[:, None]).tolist()  # d charge_j / d level while c grows on j
        self.capacity = rd.capacity.astype(float).tolist()
        self.t = 0.0
        self.moments: set[float] = set()
        self.growing = np.zeros(rd.shapes.shape, dtype=bool)  # (c, j): c's charge on j grows with t
        self.saturated = np.zeros(rd.shapes.shape[1], dtype=bool)
        self.resaturate()

    def breakpoints(self) -> tuple[np.ndarray, np.ndarray]:
        """Every child's rises (``(c, j)`` coded ``c (m + 1) + j``) and stop at ``hi`` (``j = m``),
        in order of level (a rise at or after ``hi`` never happens)."""
        rd, key = self.rd, self.key
        top = np.where(self.active, key * rd.hi, np.inf)
        A = rd.shapes
        with np.errstate(divide="ignore", invalid="ignore"):
            start = key[:, None] * np.maximum(np.where(A > 0, rd.held / A, np.inf), rd.lo[:, None])
        start[~(A > 0) | (start >= top[:, None]) | ~self.active[:, None]] = np.inf
        times = np.concatenate([start, top[:, None]], axis=1).ravel()
        order = np.argsort(times, kind="stable")
        order = order[np.isfinite(times[order])]
        return times[order], order

    def resaturate(self) -> None:
        """At the current level: mark the full resources, freeze the children at ``hi`` or taking
        more of a full resource (the rule of a round's end), and recount the slopes."""
        rd = self.rd
        u = np.where(self.active, np.clip(self.t / self.key, rd.lo, rd.hi), self.units)
        use = u[:, None] * rd.shapes
        charge = np.maximum(rd.held, use).sum(axis=0)
        self.saturated |= charge >= rd.capacity * (1 - SATURATION)
        own = use >= rd.held * (1 - SATURATION)
        stop = self.active & ((u >= rd.hi * (1 - SATURATION)) | ((rd.shapes > 0) & self.saturated & own).any(axis=1))
        if stop.any():
            self.units[stop] = u[stop]
            self.active &= ~stop
            self.moments.add(self.t)
        self.growing &= self.active[:, None]
        self.charge = charge.tolist()
        self.slope = (rd.shapes / self.key[:, None] * self.growing).sum(axis=0).tolist()
        self.count = self.growing.sum(axis=0).tolist()

    def fill_until(self, te: float) -> None:
        """Raise the level to ``te``, stopping where a resource fills."""
        m = len(self.capacity)
        while True:
            ts = np.inf
            for j in range(m):
                if self.slope[j] > 0:
                    ts = min(ts, self.t + (self.capacity[j] - self.charge[j]) / self.slope[j])
            if ts > te or ts == np.inf:
                break
            self.t = max(self.t, ts)
            self.resaturate()
        if te < np.inf:
            dt = te - self.t
            self.charge = [c + s * dt for c, s in zip(self.charge, self.slope)]
            self.t = te

    def rise(self, c: int, j: int) -> None:
        if not self.growing[c, j]:
            self.growing[c, j] = True
            self.slope[j] += self.rate[c][j]
            self.count[j] += 1

    def freeze(self, c: int, u: float) -> None:
        self.units[c] = u
        self.active[c] = False
        self.moments.add(self.t)
        for j, on in enumerate(self.growing[c].tolist()):
            if on:
                self.count[j] -= 1
                self.slope[j] = self.slope[j] - self.rate[c][j] if self.count[j] else 0.0
        self.growing[c] = False


# -- the filling below the root, a level of the tree at a time ----------------------------------
def _equilibrium_by_level(mech: MesosDRF, instance: Instance) -> tuple[np.ndarray, int, list[str]]:
    """What :func:`_equilibrium` gives with :func:`_sweep`, the groups of each depth filled
    together: the root's children by :func:`_sweep` (it holds guarantees back), then every group
    of depth 1, 2, ... at once (:func:`_fill_level`), from the bundles the level above gave them."""
    tree = _tree(mech, instance)
    _refuse_guarantees_beyond(tree, instance)
    got = np.zeros(tree.root + 1)  # every node's units
    top = tree.children(tree.root)
    got[top], rounds, shared = _fill_node(instance, tree, tree.root, instance.capacity.astype(float), True, _sweep)
    cut = [tree.root] if shared else []
    for rows in tree.levels()[-2::-1]:
        more, where = _fill_level(tree, rows, got)
        rounds += more
        cut += where
    return got[: tree.n], rounds, [tree.name(r) for r in _preorder(tree, cut)]


def _preorder(tree: _Table, rows: list[int]) -> list[int]:
    """``rows`` in the order the node-by-node walk (:func:`_equilibrium`) meets them."""
    if len(rows) < 2:
        return rows
    rank: dict[int, int] = {}
    stack = [tree.root]
    while stack:
        r = stack.pop()
        rank[r] = len(rank)
        kids = tree.children(r)
        stack += kids[kids >= tree.n][::-1].tolist()
    return sorted(rows, key=rank.__getitem__)


def _fill_level(tree: _Table, rows: np.ndarray, got: np.ndarray) -> tuple[int, list[int]]:
    """The units of the children of the groups ``rows`` (one depth), written into ``got``, from
    their groups' units there; the rounds, and the groups whose children's lower bounds did not
    fit together (those are first filled up to them, as :func:`_opening_round`, then on from
    there, as :func:`_fill_node`)."""
    rows = rows[tree.start[rows + 1] > tree.start[rows]]
    if not len(rows):
        return 0, []
    kids, count = tree.kids_of(rows)
    first = np.cumsum(count) - count  # each group's first child in the level's arrays
    seg = np.repeat(np.arange(len(rows)), count)
    A, lo, hi = tree.shape[kids], tree.lo[kids], tree.hi[kids]
    key = _dominant(A, tree.R) / tree.weight[kids]
    active = (key > 0) & (hi > 0)
    units = np.where(active, lo, 0.0)
    level = _Groups(A, key, seg, first, got[rows, None] * tree.shape[rows], lambda g: tree.name(int(rows[g])))
    cut = np.asarray(~(level.charges(units) <= level.capacity * (1 + FEASIBILITY)).all(axis=1))
    if not cut.any():
        got[kids], rounds = level.fill(lo, hi, active, units)
        return rounds, []
    opening = active & (lo > 0) & cut[seg]
    shared = cut[seg]
    bound = np.where(shared, 0.0, lo), np.where(shared, np.where(opening, lo, 0.0), hi)
    u, rounds = level.fill(*bound, np.where(shared, opening, active), np.where(shared, 0.0, units))
    sub = level.subset(cut)
    u[shared], more = sub.fill(u[shared], hi[shared], active[shared], u[shared])
    got[kids] = u
    return rounds + more, rows[cut].tolist()


class _Groups:
    """The groups of one depth filled together (:meth:`fill`): their children in one set of
    arrays, each group's a contiguous run (``seg``: the group of each child, ``first``: where each
    group's run starts), their key, shape and each group's capacity (its bundle)."""

    def __init__(
        self,
        A: np.ndarray,
        key: np.ndarray,
        seg: np.ndarray,
        first: np.ndarray,
        capacity: np.ndarray,
        name: Callable[[int], str],
    ) -> None:
        self.A, self.key, self.seg, self.first, self.capacity, self.name = A, key, seg, first, capacity, name

    def subset(self, keep: np.ndarray) -> _Groups:
        """The groups where ``keep`` (by group) holds."""
        kids = keep[self.seg]
        count = np.bincount(self.seg, minlength=len(self.first))[keep]
        seg = np.repeat(np.arange(len(count)), count)
        names = np.flatnonzero(keep)
        return _Groups(
            self.A[kids], self.key[kids], seg, np.cumsum(count) - count, self.capacity[keep],
            lambda g: self.name(int(names[g])),
        )  # fmt: skip

    def charges(self, units: np.ndarray) -> np.ndarray:
        """``(groups, m)``: what the children take at ``units``."""
        return np.add.reduceat(units[:, None] * self.A, self.first, axis=0)

    def fill(self, lo: np.ndarray, hi: np.ndarray, active: np.ndarray, units: np.ndarray) -> tuple[np.ndarray, int]:
        """Each child's units and the rounds (distinct levels at which children froze, summed over
        the groups), as :func:`_sweep` at each group without guarantees held back.  Per round, at
        every group still filling: the charge of each resource is piecewise linear in the level
        ``t`` (a child grows from ``t = k_c lo_c`` to ``t = k_c hi_c``), its breakpoints sorted
        once; the first level where an unfilled resource fills is found from the charges at the
        breakpoints (prefix sums run group by group); there, as at a round's end, the children at
        ``hi`` or taking a full resource freeze.  A round fills at least one more resource of each
        group, so there are at most m + 1 of them, each O(k m) on the level's k children (plus the
        sort, O(k log k))."""
        run = _Run(self, lo, hi, active, units)
        run.freeze_at(np.zeros(len(self.first)), check=False)
        while run.active.any():
            run.freeze_at(run.next_filled(), check=True)
        return run.units, run.rounds()


class _Run:
    """The state of :meth:`_Groups.fill`: who still grows, each child's units, the full resources,
    the breakpoints (a child's start at ``k lo`` and stop at ``k hi``, two per child, sorted by
    group then level: group ``g``'s are ``2 first[g] ..``), the freezing levels."""

    def __init__(self, gr: _Groups, lo: np.ndarray, hi: np.ndarray, active: np.ndarray, units: np.ndarray) -> None:
        self.gr, self.lo, self.hi = gr, lo, hi
        self.active, self.units = active.copy(), units.astype(float)
        self.key = np.where(active, gr.key, 1.0)
        self.top = self.key * hi  # where a child reaches hi (inf: never)
        self.full = np.zeros(gr.capacity.shape, dtype=bool)
        self.frozen: list[tuple[np.ndarray, np.ndarray]] = []  # (group, level) of each freeze
        k = len(gr.seg)
        start, limited = self.key * lo, np.isfinite(self.top)
        times = np.concatenate([start, np.where(limited, self.top, start)])
        order = np.lexsort((times, np.concatenate([gr.seg, gr.seg])))
        self.kid = np.concatenate([np.arange(k), np.arange(k)])[order]
        self.sign = np.concatenate([np.ones(k), np.where(limited, -1.0, 0.0)])[order]
        self.times = times[order]
        self.efirst = 2 * gr.first
        self.eseg = gr.seg[self.kid]  # both halves hold every group's events: sorted by group, runs of 2 k_g
        last = np.zeros(2 * k, dtype=bool)
        last[self.efirst[1:] - 1] = True
        last[-1] = True
        self.last = last
        self.step = np.where(last, 0.0, np.diff(self.times, append=0.0))  # to the group's next breakpoint
        self.rate = gr.A / self.key[:, None]  # d charge / d level while growing

    def next_filled(self) -> np.ndarray:
        """``(groups,)``: the level at which each group's next resource fills (inf: none does);
        only the breakpoints of the groups still filling are looked at (``pick``)."""
        gr = self.gr
        filling = np.add.reduceat(self.active, gr.first) > 0
        runs = 2 * np.bincount(gr.seg, minlength=len(gr.first))[filling]
        pick = np.flatnonzero(filling[self.eseg])
        first = np.cumsum(runs) - runs
        slope, at, after = self.charges_at(pick, first, np.repeat(np.arange(len(runs)), runs))
        group = self.eseg[pick]
        fills = (after >= gr.capacity[group]) & ~self.full[group]
        where = np.minimum.reduceat(np.where(fills, np.arange(len(pick))[:, None], len(pick)), first, axis=0)
        found = where < len(pick)
        i, j = np.where(found, where, 0), np.arange(gr.A.shape[1])
        with np.errstate(divide="ignore", invalid="ignore"):
            t = self.times[pick][i] + (gr.capacity[filling] - at[i, j]) / slope[i, j]
        out = np.full(len(gr.first), np.inf)
        out[filling] = np.where(found, t, np.inf).min(axis=1)
        return out

    def charges_at(self, pick: np.ndarray, first: np.ndarray, seg: np.ndarray) -> tuple[np.ndarray, ...]:
        """At the breakpoints ``pick`` (whole groups' runs, starting at ``first``): each resource's
        slope after it, its charge there and at the group's next breakpoint (inf after the last
        one while still growing)."""
        gr, kid = self.gr, self.kid[pick]
        d = (self.sign[pick] * self.active[kid])[:, None]
        m = gr.A.shape[1]
        both = _run_cumsum(np.concatenate([d * self.rate[kid], d * (gr.A[kid] > 0)], axis=1), first, seg)
        slope = np.where(both[:, m:] > 0.5, both[:, :m], 0.0)  # nobody left growing (a count): exactly flat
        gain = slope * self.step[pick, None]
        start = gr.charges(np.where(self.active, self.lo, self.units))
        at = start[self.eseg[pick]] + _run_cumsum(gain, first, seg) - gain
        after = np.where(self.last[pick, None], np.where(slope > 0, np.inf, at), at + gain)
        return slope, at, after

    def freeze_at(self, t: np.ndarray, check: bool) -> None:
        """At level ``t`` (per group) mark the full resources and freeze the children at ``hi`` or
        taking a full resource (the rule of a round's end, as :meth:`_Sweep.resaturate`)."""
        gr = self.gr
        level = t[gr.seg]
        with np.errstate(invalid="ignore"):
            u = np.where(self.active, np.clip(level / self.key, self.lo, self.hi), self.units)
        self.full |= gr.charges(u) >= gr.capacity * (1 - SATURATION)
        takes = ((gr.A > 0) & self.full[gr.seg]).any(axis=1)
        stop = self.active & ((u >= self.hi * (1 - SATURATION)) | takes)
        if check:
            idle = (np.add.reduceat(self.active, gr.first) > 0) & ~(np.add.reduceat(stop, gr.first) > 0)
            if idle.any():
                raise SolverError(
                    f"mesos-drf: a round at {gr.name(int(np.argmax(idle)))} froze no queue (numerical trouble)"
                )
        self.frozen.append((gr.seg[stop], np.minimum(self.top[stop], level[stop])))  # at hi before t: when it got there
        self.units[stop] = u[stop]
        self.active &= ~stop

    def rounds(self) -> int:
        """The distinct (group, level) of the freezes: each group's rounds, summed."""
        g = np.concatenate([f[0] for f in self.frozen])
        t = np.concatenate([f[1] for f in self.frozen])
        order = np.lexsort((t, g))
        g, t = g[order], t[order]
        return int(len(g) and 1 + ((np.diff(g) != 0) | (np.diff(t) != 0)).sum())


def _run_cumsum(x: np.ndarray, first: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Prefix sums of the rows of ``x`` within each run (runs start at rows ``first``; ``seg``: each
    row's run), from one running sum over all rows, corrected by its own rounding errors (each
    step's error found exactly, Knuth's TwoSum): otherwise a run carries the rounding of every run
    before it (six deep at 10^5 queues the plain sum put a group's fill where none of its resources
    was full, and the round froze nobody).  In place where it can: these are the level's largest
    arrays."""
    s = np.cumsum(x, axis=0)
    before = np.empty_like(s)
    before[0], before[1:] = 0.0, s[:-1]
    b = s - before
    err = s - b
    np.subtract(before, err, out=err)
    np.subtract(x, b, out=b)
    err += b
    del b
    np.cumsum(err, axis=0, out=err)
    start_err = np.zeros((len(first), *x.shape[1:]))
    start_err[first > 0] = err[first[first > 0] - 1]  # the correction before each run
    s -= before[first][seg]
    err -= start_err[seg]
    s += err
    return s


def _round_lp(name: str, rd: _Round) -> tuple[pulp.LpProblem, pulp.LpVariable]:
    """One round at a node as an LP: variables ``tasks_<queue>`` (leaves) and ``units_<group>``."""
    lp = pulp.LpProblem(lp_name(f"{name}_{rd.node}_round{rd.index}"), pulp.LpMaximize)
    t = lp.add_variable(lp_name(f"round{rd.index}_level"), lowBound=0)
    lower = np.where(rd.active, rd.lo, rd.units)
    upper = np.where(rd.active, rd.hi, rd.units)
    labels = [("tasks_" if leaf else "units_") + v for v, leaf in zip(rd.names, rd.leaves)]
    taken = {t.name}
    u = task_variables(lp, lower, upper, [lp_name(label, taken) for label in labels])
    lp += t
    shares = lp_names("share", rd.names)
    for c in np.flatnonzero(rd.active).tolist():
        lp += pulp.LpAffineExpression([(u[c], float(rd.key[c])), (t, -1.0)]) >= 0, shares[c]
    held = [(c, j) for c in range(len(rd.names)) for j in range(rd.shapes.shape[1]) if rd.held[c, j] > 0]
    charge = dict(zip(held, lp_names("charge", [f"{rd.names[c]}_{rd.resources[j]}" for c, j in held])))
    capacity = lp_names("capacity", rd.resources)
    for j in range(rd.shapes.shape[1]):
        terms = []
        for c in range(len(rd.names)):
            if (c, j) in charge:  # max(g_cj, A_cj u_c), as h >= g and h >= A_cj u_c
                h = lp.add_variable(charge[c, j], float(rd.held[c, j]))
                lp += pulp.LpAffineExpression([(h, 1.0), (u[c], -float(rd.shapes[c, j]))]) >= 0
                terms.append((h, 1.0))
            elif rd.shapes[c, j] > 0:
                terms.append((u[c], float(rd.shapes[c, j])))
        if terms:
            lp += pulp.LpAffineExpression(terms) <= float(rd.capacity[j]), capacity[j]
    return lp, t


__all__ = ["MesosDRF"]
