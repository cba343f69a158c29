"""The fluid H-DRF engine (:mod:`fairalloc.engines.fluid_hierarchy`) as it was at commit
67d95780b050f820062e6e4721ec000a5f9a1f0b, kept verbatim as the oracle for the fast one: its curves
hold every leaf's task count at every breakpoint of every node (dense, quadratic in the queues).
One amendment (issue 36, the floor of a group's guarantee): a node's floor starts at the engine's
``_floor_start``, the first point holding as much of the named resources as the cut, not at the cut
itself (the floor had taken every CPU a group's growth reached within a guarantee of memory alone).
A second (issue 36, a bound met exactly): a point passes a limit, a guarantee or a capacity
only by more than rounding (the engine's ``_past``): leaves frozen at a group's limit sum an ulp
above it about as often as below, and above it the group's other leaves had been stopped at their
first point; bounds summing to a capacity made an event of an ulp above it.
A third (the words of a refusal): its amounts are the engine's ``_amount``, six digits of the
shortest decimal, so sums of the same terms in another order are worded alike.
Not collected by pytest (no ``test_`` prefix); tests/test_fast_hdrf_fluid.py imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.errors import CaseError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of
from fairalloc.core.tolerances import FEASIBILITY, SATURATION
from fairalloc.engines.fluid_hierarchy import _amount, _floor_start, _past

_Floats = NDArray[np.float64]


@dataclass
class FluidResult:
    tasks: _Floats
    #: resources saturated at each event (indices), in order
    saturated: list[list[int]]
    #: at each event: the task counts where the resource fills, and which leaves were frozen before
    states: list[tuple[_Floats, NDArray[np.bool_]]]


@dataclass
class _Curve:
    """A node's allocation as its level rises: ``X[k]`` (leaf task counts) at level ``theta[k]``,
    linear in between, ``X[-1]`` beyond the last level; ``theta[0] == 0``."""

    theta: _Floats
    X: _Floats


class _Tree:
    """The instance's tree with what every phase reads: demands, capacities, weights, bounds."""

    def __init__(self, instance: Instance) -> None:
        weights = instance.scalar_weights("hdrf-fluid")
        self.q: Queues = queues_of(instance)
        self.users = instance.users
        self.index = {u: i for i, u in enumerate(instance.users)}
        self.D, self.R, self.T = instance.demand, np.asarray(instance.capacity, float), instance.bounds()
        self.n = instance.n
        self.scale = np.where(self.R > 0, self.R, np.inf)  # a resource of capacity 0 has no share
        self.weight = {u: float(w) for u, w in zip(instance.users, weights)}
        for g in self.q.groups:
            self.weight[g] = float(self.q.weight[g])
        # far enough that an unbounded leaf's path passes every capacity (its share passes 1 / w)
        self.top = 4.0 / min(self.weight.values())

    def guarantee(self, node: str) -> _Floats:
        """The node's guarantee on the resources it names (``inf`` elsewhere: what the named ones
        need comes with them); none (0) when it names no resource its leaves ask for."""
        given = np.asarray(self.q.guarantee[node], float)
        named = ~np.isnan(given)
        leaves = [self.index[u] for u in self.q.leaves(node)] if self.q.is_group(node) else [self.index[node]]
        if not (named & (self.D[leaves] > 0).any(axis=0)).any():
            return np.zeros_like(given)
        bound: _Floats = np.where(named, given, np.inf)
        return bound

    def limit(self, node: str) -> _Floats:
        return np.asarray(self.q.limit[node], float)


def fluid_hdrf(instance: Instance) -> FluidResult:
    """Task counts of the fluid H-DRF (module docstring) and the resources each event saturated."""
    tree = _Tree(instance)
    frozen = np.zeros(tree.n, bool)
    x = np.zeros(tree.n)
    open_res = tree.R > 0
    log: list[list[int]] = []
    states: list[tuple[_Floats, NDArray[np.bool_]]] = []
    first = True
    while not frozen.all():
        path = _merge([_curve(tree, c, frozen, x) for c in tree.q.children(None)], tree.n)
        if first:
            _refuse_overcommitted(tree, path[0])
            first = False
        hit = _first_saturation(path, tree.D, tree.R, open_res)
        if hit is None:  # every leaf stops at a bound before any resource fills
            x = np.where(frozen, x, path[-1])
            break
        point, j = hit
        x = np.where(frozen, x, point)
        used = x @ tree.D
        newly = open_res & (used >= tree.R * (1 - SATURATION))
        newly[j] = True
        log.append([int(k) for k in np.flatnonzero(newly)])
        states.append((x.copy(), frozen.copy()))
        open_res &= ~newly
        frozen |= (tree.D[:, newly] > 0).any(axis=1)
    return FluidResult(x, log, states)


# -- one node's curve -----------------------------------------------------------------------------


def _curve(tree: _Tree, node: str, frozen: NDArray[np.bool_], x: _Floats) -> _Curve:
    """``node``'s curve given the frozen leaves (recursively over its subtree)."""
    if tree.q.is_group(node):
        path = _merge([_curve(tree, c, frozen, x) for c in tree.q.children(node)], tree.n)
        where = f"groups.{node}.limit"
    else:
        i = tree.index[node]
        path = np.zeros((1 if frozen[i] else 2, tree.n))
        if frozen[i]:
            path[0, i] = x[i]
        else:
            mu = float(np.max(tree.D[i] / tree.scale))
            end = min(tree.T[i], tree.top * tree.weight[node] / mu) if mu > 0 else tree.T[i]
            path[1, i] = end if np.isfinite(end) else 0.0  # demanding nothing: no growth
        where = f"users.{node}.limit"
    limit = tree.limit(node)
    path, k = _cut(path, tree.D, limit)
    need = path[0] @ tree.D
    if k == 0 and np.any(need > limit * (1 + FEASIBILITY)):
        j = int(np.argmax(need - limit))
        raise CaseError(
            f"{where}: the guarantees below it need {_amount(need[j])} {tree.q.resources[j]}, "
            f"above its limit {_amount(limit[j])}"
        )
    floor, k = _cut(path, tree.D, tree.guarantee(node))
    floor = floor[_floor_start(floor @ tree.D, tree.guarantee(node)) :]  # the amendment
    rest = np.vstack([floor, path[k:]]) if k < len(path) else floor
    return _levels(rest, tree.D, tree.scale * tree.weight[node])


def _cut(path: _Floats, D: _Floats, bound: _Floats) -> tuple[_Floats, int]:
    """The longest prefix of ``path`` whose use ``X @ D`` stays within ``bound`` (``inf``: none),
    and the index of the first point past it (``len(path)``: none)."""
    A = path @ D
    over = _past(A, bound)  # the second amendment
    if not over.any():
        return path, len(path)
    k = int(np.argmax(over))
    if k == 0:
        return path[:1], 0
    a0, a1 = A[k - 1], A[k]
    crossing = (a1 > bound) & (a1 > a0)
    s = float(np.min((bound[crossing] - a0[crossing]) / (a1[crossing] - a0[crossing])))
    point = path[k - 1] + min(max(s, 0.0), 1.0) * (path[k] - path[k - 1])
    return np.vstack([path[:k], point]), k


def _levels(path: _Floats, D: _Floats, unit: _Floats) -> _Curve:
    """The curve of a path: level ``max_j A_j / unit_j`` at every point, with a point added wherever
    two resources' shares cross on a segment (so the level is linear between points); a path whose
    first point has a positive level starts with that point at level 0 (the node's floor)."""
    shares = (path @ D) / unit
    points, levels = [path[0]], [float(shares[0].max())]
    for k in range(1, len(path)):
        a0, a1 = shares[k - 1], shares[k]
        slope = a1 - a0
        with np.errstate(divide="ignore", invalid="ignore"):
            cross = (a0[None, :] - a0[:, None]) / (slope[:, None] - slope[None, :])
        cuts = np.unique(cross[np.isfinite(cross) & (cross > 0) & (cross < 1)])
        for s in cuts:
            points.append(path[k - 1] + s * (path[k] - path[k - 1]))
            levels.append(float((a0 + s * slope).max()))
        points.append(path[k])
        levels.append(float(a1.max()))
    theta = np.maximum.accumulate(np.array(levels))  # rounding must not make it fall
    X = np.array(points)
    if theta[0] > 0:
        theta, X = np.concatenate([[0.0], theta]), np.vstack([X[:1], X])
    return _Curve(theta, X)


def _merge(curves: list[_Curve], n: int) -> _Floats:
    """The path of the children's curves at a common level: at every breakpoint of any child, the
    sum of the values just below it, then (if some child jumps there) of the values just above."""
    if not curves:
        return np.zeros((1, n))
    levels = np.unique(np.concatenate([c.theta for c in curves]))
    values = [_values(c, levels) for c in curves]
    below = sum(v[0] for v in values)
    above = sum(v[1] for v in values)
    path = np.empty((2 * len(levels), n))
    path[0::2], path[1::2] = below, above
    keep = np.concatenate([[True], np.any(path[1:] != path[:-1], axis=1)])
    merged: _Floats = path[keep]
    return merged


def _values(c: _Curve, levels: _Floats) -> tuple[_Floats, _Floats]:
    """The curve's points at ``levels``, approached from below and from above.  (``np.minimum`` of
    ``np.maximum`` rather than ``np.clip``: the same numbers, without clip's cost per call, which
    on these few numbers was most of it.)"""
    K = len(c.theta)
    if K == 1:
        same = np.repeat(c.X, len(levels), axis=0)
        return same, same
    sides = []
    for side in ("left", "right"):
        k = np.minimum(np.maximum(np.searchsorted(c.theta, levels, side) - 1, 0), K - 2)
        t0, t1 = c.theta[k], c.theta[k + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.minimum(np.maximum(np.where(t1 > t0, (levels - t0) / (t1 - t0), 1.0), 0.0), 1.0)
        if side == "left":
            s = np.where(levels <= c.theta[0], 0.0, s)
        sides.append(c.X[k] + s[:, None] * (c.X[k + 1] - c.X[k]))
    return sides[0], sides[1]


# -- events -----------------------------------------------------------------------------------------


def _first_saturation(path: _Floats, D: _Floats, R: _Floats, open_res: NDArray[np.bool_]) -> tuple[_Floats, int] | None:
    """The first point of ``path`` where an open resource reaches its capacity, and that resource."""
    A = path @ D
    over = _past(A, np.where(open_res, R, np.inf))  # the second amendment
    if not over.any():
        return None
    k = int(np.argmax(over))
    if k == 0:
        return path[0], int(np.argmax(np.where(open_res, A[0] - R, -np.inf)))
    a0, a1 = A[k - 1], A[k]
    crossing = open_res & (a1 > R) & (a1 > a0)
    s = np.where(crossing, (R - a0) / np.where(crossing, a1 - a0, 1.0), np.inf)
    j = int(np.argmin(s))
    return path[k - 1] + min(max(float(s[j]), 0.0), 1.0) * (path[k] - path[k - 1]), j


def _refuse_overcommitted(tree: _Tree, floors: _Floats) -> None:
    need = floors @ tree.D
    over = need > tree.R * (1 + SATURATION)
    if not over.any():
        return
    j = int(np.argmax(np.where(over, need / np.where(tree.R > 0, tree.R, 1e-300), -np.inf)))
    who = [
        v
        for v in (*tree.q.groups, *tree.users)
        if tree.guarantee(v)[j] > 0 and any(tree.D[tree.index[u], j] > 0 for u in tree.q.leaves(v))
    ]
    raise CaseError(
        f"guarantee: the guarantees of queues {', '.join(who)} need {_amount(need[j])} {tree.q.resources[j]}, "
        f"capacity {_amount(tree.R[j])}"
    )


__all__ = ["FluidResult", "fluid_hdrf"]
