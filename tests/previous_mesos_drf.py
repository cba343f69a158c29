"""The mesos-drf equilibrium at commit 67d9578 (fairalloc/models/mesos_drf.py), kept as the oracle
for the fast filling: round by round at each node of the role tree, each round's level found by
evaluating the charges at every breakpoint.  Its functions are copied verbatim, with one change made
the same way as in the module, so that it stays an oracle of the right answers: a guarantee is a
quantity per resource, not a bundle (a group's lower bound adds its children's up resource by
resource; when the children's guaranteed bundles do not fit together a first filling shares them;
only guarantees beyond the capacity are refused).
The registered class is left out; :func:`bundles` is its ``entitlement``, :func:`equilibrium` adds
its ``guarantees_cut``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairalloc.core.errors import CaseError, SolverError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of
from fairalloc.core.tolerances import FEASIBILITY, SATURATION


def bundles(instance: Instance) -> np.ndarray:
    """``(n, m)``: the equilibrium's bundles (``MesosDRF.entitlement`` at that commit)."""
    return equilibrium(instance)[0]


def equilibrium(instance: Instance) -> tuple[np.ndarray, list[str]]:
    """The bundles and the nodes whose children's guarantees did not fit together
    (``info["guarantees_cut"]``)."""
    units, _, cut = _equilibrium(_Named(), instance, _exact_level)
    return units[:, None] * instance.demand, cut


class _Named:
    name = "mesos-drf"


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


def _queues(mech: Any, instance: Instance) -> Queues:
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
def _tree(mech: Any, instance: Instance) -> _Node:
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
def _equilibrium(mech: Any, instance: Instance, level: _Level) -> tuple[np.ndarray, int, list[str]]:
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
