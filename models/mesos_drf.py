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
freeze.  :meth:`MesosDRF.fast` finds each round's level exactly from the breakpoints of the
piecewise-linear charges; :meth:`MesosDRF.program` solves the same rounds as pulp LPs.  With no
group, guarantee or limit it is DRF (``drf``) exactly.

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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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

if TYPE_CHECKING:
    import pulp
else:
    pulp = deferred("pulp")


@dataclass
class _Node:
    """A node of the role tree for the equilibrium: its shape, weight, bounds (in units of shape)."""

    name: str
    shape: np.ndarray  # leaf: D_i; group: sum_c (w_c / kappa_c) A_c over its growing children
    weight: float
    cap: float  # units the request allows (a group: until its last child reaches its bound)
    guarantee: np.ndarray  # 0 where not guaranteed
    limit: np.ndarray  # inf where none
    owed: np.ndarray  # (m,) its guarantee or its children's, whichever is more, per resource
    leaf: int | None = None
    kids: list[_Node] = field(default_factory=list)
    lo: float = 0.0
    hi: float = 0.0


#: a round's highest level at a node (exact breakpoints, or an LP)
_Level = Callable[["_Round"], float]


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

    # -- the sorter ---------------------------------------------------------------------------
    def shares(self, instance: Instance) -> dict[str, float]:
        """Each queue's weighted dominant share of its ``usage`` (``DRFSorter::calculateShare``);
        groups too, on their subtree's usage and with their own weight."""
        q = _queues(self, instance)
        return {v: _share(q.subtree_usage(v), instance.capacity, q.weight[v]) for v in (*instance.users, *q.groups)}

    def order(self, instance: Instance, allocations: Mapping[str, int] | None = None) -> list[str]:
        """Active leaf queues in the sorter's order (``DRFSorter::sort``): at every node its
        children by weighted dominant share of their subtree's usage, then by ``allocations``
        (times allocated; a group's default is its leaves' total; default 0), then by name."""
        q = _queues(self, instance)
        counts = dict(allocations or {})
        on = dict(zip(instance.users, (instance.demand > 0).any(axis=1) & (instance.bounds() > 0)))

        def count(v: str) -> float:
            if v in counts:
                return counts[v]
            return sum(counts.get(u, 0) for u in q.leaves(v)) if q.is_group(v) else 0

        def listed(node: str | None) -> list[str]:
            kids = [c for c in q.children(node) if q.is_group(c) or on[c]]  # inactive leaves: not sorted
            key = {c: (_share(q.subtree_usage(c), instance.capacity, q.weight[c]), count(c), c) for c in kids}
            out: list[str] = []
            for c in sorted(kids, key=key.__getitem__):
                out += listed(c) if q.is_group(c) else [c]
            return out

        return listed(None)

    # -- the equilibrium ----------------------------------------------------------------------
    def entitlement(self, instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
        units, rounds, cut = _equilibrium(self, instance, _exact_level)
        return units[:, None] * instance.demand, {"rounds": rounds, "guarantees_cut": cut}

    def program(self, instance: Instance) -> Program:
        description = f"""{self.name}: the Mesos allocator's equilibrium as a sequence of LPs, node by node of the
role tree from the root, round by round at each node (children c of the node, units u_c of their shape A_c):
  max t  s.t.  k_c u_c >= t (active children), u_c fixed (frozen), lo_c <= u_c <= hi_c,
               h_cj >= g_cj, h_cj >= A_cj u_c, sum_c h_cj <= C_j   (root: guarantees g held back)
               sum_c A_cj u_c <= C_j                                  (below: C = the node's bundle)
k_c = max_j A_cj / R_j / w_c; after each round children at hi or needing a saturated resource freeze."""

        root = _tree(self, instance)
        first = _round_lp(self.name, _opening_round(instance, root, instance.capacity.astype(float), True))
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
            units, rounds, cut = _equilibrium(self, instance, lambda rd: level(rd, p, solvers))
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
    for node in q.limit:
        above = np.nan_to_num(q.guarantee[node], nan=0.0) > q.limit[node]
        if above.any():
            r = int(np.argmax(above))
            table = "groups" if q.is_group(node) else "users"
            raise CaseError(
                f"{table}.{node}.guarantee.{q.resources[r]}: {q.guarantee[node][r]:g} is above the limit "
                f"{q.limit[node][r]:g}: "
                "Mesos refuses such a quota (src/master/quota.cpp, validate(QuotaConfig): the guarantees must lie "
                "within the limits)"
            )


def _share(usage: np.ndarray, capacity: np.ndarray, weight: float) -> float:
    on = capacity > 0
    return float(np.max(usage[on] / capacity[on], initial=0.0)) / weight


# -- the tree ---------------------------------------------------------------------------------
def _tree(mech: MesosDRF, instance: Instance) -> _Node:
    """The role tree, every node with its shape and bounds, built from the leaves up."""
    q = _queues(mech, instance)
    D, T, R = instance.demand, instance.bounds(), instance.capacity
    index = {u: i for i, u in enumerate(instance.users)}

    def build(name: str | None) -> _Node:
        if name is not None and not q.is_group(name):
            i = index[name]
            on = bool((D[i] > 0).any() and T[i] > 0)
            leaf = _node(q, name, D[i] if on else np.zeros(instance.m), q.weight[name], float(T[i]) if on else 0.0, i)
            return _bounded(leaf, R, [])
        kids = [build(c) for c in q.children(name)]
        # one unit of a group: every growing child at one unit of weighted dominant share
        per_unit = [(k.weight / _dominant(k.shape, R), k) for k in kids if k.hi > 0 and _dominant(k.shape, R) > 0]
        shape = np.sum([a * k.shape for a, k in per_unit], axis=0) if per_unit else np.zeros(instance.m)
        cap = max((k.hi / a for a, k in per_unit), default=0.0)
        node = _node(q, name, shape, 1.0 if name is None else q.weight[name], cap, None)
        node.kids = kids
        node.owed = np.maximum(node.guarantee, np.sum([k.owed for k in kids], axis=0))
        return _bounded(node, R, per_unit)

    return build(None)


def _dominant(shape: np.ndarray, R: np.ndarray) -> float:
    on = R > 0
    return float(np.max(shape[on] / R[on], initial=0.0))


def _node(q: Queues, name: str | None, shape: np.ndarray, weight: float, cap: float, leaf: int | None) -> _Node:
    m = len(q.resources)
    g = np.zeros(m) if name is None else np.nan_to_num(np.asarray(q.guarantee[name], dtype=float), nan=0.0)
    lim = np.full(m, np.inf) if name is None else np.asarray(q.limit[name], dtype=float)
    return _Node(name or "root", np.asarray(shape, dtype=float), weight, cap, g, lim, g, leaf)


def _bounded(node: _Node, R: np.ndarray, per_unit: list[tuple[float, _Node]]) -> _Node:
    """``hi``: request and limit (nothing when it needs a resource of capacity 0); ``lo``: its
    guarantee, or for a group what holds its children's lower bounds, added up resource by
    resource (a guarantee is a quantity per resource: each child's ``lo_c / a_c`` would scale
    every other child up with it); never above ``hi``."""
    A = node.shape
    need = A > 0
    hi = 0.0 if (need & (R <= 0)).any() else node.cap
    hi = min(hi, float(np.min(node.limit[need] / A[need], initial=np.inf)))
    guaranteed = need & (node.guarantee > 0)
    lo = float(np.min(node.guarantee[guaranteed] / A[guaranteed])) if guaranteed.any() else 0.0
    held = np.sum([k.lo * k.shape for _, k in per_unit], axis=0) if per_unit else np.zeros_like(A)
    lo = max(lo, float(np.max(held[need] / A[need], initial=0.0)))
    node.lo, node.hi = min(lo, hi), hi
    return node


# -- the filling, node by node ----------------------------------------------------------------
def _equilibrium(mech: MesosDRF, instance: Instance, level: _Level) -> tuple[np.ndarray, int, list[str]]:
    """Each leaf's units, the rounds, and the nodes whose children's guarantees did not fit together."""
    root = _tree(mech, instance)
    _refuse_guarantees_beyond(root, instance)
    units = np.zeros(instance.n)
    rounds = 0
    cut: list[str] = []

    def split(node: _Node, capacity: np.ndarray, at_root: bool) -> None:
        nonlocal rounds
        if not node.kids:
            return
        u, r, shared = _fill_node(instance, node, capacity, at_root, level)
        rounds += r
        cut.extend([node.name] if shared else [])
        for k, uk in zip(node.kids, u):
            if k.leaf is not None:
                units[k.leaf] = uk
            else:
                split(k, uk * k.shape, False)

    split(root, instance.capacity.astype(float), True)
    return units, rounds, cut


def _refuse_guarantees_beyond(root: _Node, instance: Instance) -> None:
    """Guarantees beyond the capacity, per resource, are refused: Mesos' headroom
    (``__generateOffers``, ``requiredHeadroom``) could never hold them."""
    need, capacity = np.sum([k.owed for k in root.kids], axis=0), instance.capacity
    over = need > capacity * (1 + FEASIBILITY)
    if over.any():
        j = int(np.argmax(over))
        raise CaseError(
            f"guarantee: the guarantees under root need {need[j]:g} {instance.resources[j]}, "
            f"more than the {capacity[j]:g} there are"
        )


def _fill_node(
    instance: Instance, node: _Node, capacity: np.ndarray, at_root: bool, level: _Level
) -> tuple[np.ndarray, int, bool]:
    """The units of ``node``'s children and the rounds: from their lower bounds, or, when those
    do not fit together (then also ``True``), from what a first filling up to them reaches."""
    rd = _opening_round(instance, node, capacity, at_root)
    units, rounds = _fill(rd, level)
    if not rd.guarantees:
        return units, rounds, False
    rest = _first_round(instance, node, capacity, at_root)
    rest.lo, rest.units, rest.index = units, units, rounds
    units, more = _fill(rest, level)
    return units, rounds + more, True


def _opening_round(instance: Instance, node: _Node, capacity: np.ndarray, at_root: bool) -> _Round:
    """The first round at ``node``: its children at their lower bounds, or, when those bundles
    do not fit together (a guarantee on one resource brings the others its shape needs), a first
    filling from 0 up to them."""
    rd = _first_round(instance, node, capacity, at_root)
    if (_charges(rd, 0.0) <= capacity * (1 + FEASIBILITY)).all():
        return rd
    rd.active, rd.guarantees = rd.active & (rd.lo > 0), True
    rd.lo, rd.hi, rd.units = np.zeros_like(rd.lo), np.where(rd.active, rd.lo, 0.0), np.zeros_like(rd.lo)
    return rd


def _first_round(instance: Instance, node: _Node, capacity: np.ndarray, at_root: bool) -> _Round:
    """The filling among ``node``'s children before its first round: every child at its guarantee."""
    R = instance.capacity
    kids = node.kids
    A = np.array([k.shape for k in kids])
    on = R > 0
    key = np.array([np.max(k.shape[on] / R[on], initial=0.0) / k.weight for k in kids])
    lo, hi = np.array([k.lo for k in kids]), np.array([k.hi for k in kids])
    held = np.array([k.guarantee for k in kids]) if at_root else np.zeros_like(A)
    active = (key > 0) & (hi > 0)
    names = [k.name for k in kids]
    leaves = [k.leaf is not None for k in kids]
    units = np.where(active, lo, 0.0)
    resources = list(instance.resources)
    return _Round(node.name, 0, A, key, lo, hi, held, capacity, units, active, names, leaves, resources, at_root)


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


def _exact_level(rd: _Round) -> float:
    """The highest level whose charges fit: the charges are piecewise linear in the level, with
    breakpoints where a child leaves a bound or starts using more than its guarantee."""
    act = rd.active
    k, A = rd.key[act], rd.shapes[act]
    with np.errstate(divide="ignore", invalid="ignore"):
        over = k[:, None] * rd.held[act] / A
    points = np.concatenate([k * rd.lo[act], k * rd.hi[act], over[np.isfinite(over)]])
    # beyond every finite breakpoint some active child alone outgrows the capacity
    need = A > 0
    grow = np.where(need, (rd.capacity + rd.held.sum(axis=0) + 1.0) / np.where(need, A, 1.0), np.inf).min(axis=1)
    points = np.unique(np.concatenate([points[np.isfinite(points)], k * np.maximum(grow, rd.lo[act]) * 2 + 1.0]))
    prev = 0.0
    fits = rd.capacity * (1 + SATURATION)
    c_prev = _charges(rd, prev)
    for t in points[points > 0]:
        c = _charges(rd, t)
        if (c > fits).any():
            slope = (c - c_prev) / (t - prev)
            with np.errstate(divide="ignore", invalid="ignore"):
                cross = np.where(c > fits, prev + (rd.capacity - c_prev) / slope, np.inf)
            return float(max(prev, cross.min()))
        prev, c_prev = float(t), c
    return prev


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
