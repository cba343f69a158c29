"""Fluid H-DRF: the static hierarchical DRF allocation, with guarantees and limits at every node.

Bhattacharya, Culler, Friedman, Ghodsi, Shenker, Stoica, "Hierarchical scheduling for diverse
datacenter workloads", ACM SoCC 2013, sections 3 and 4 (static H-DRF): leaves grow continuously in
the direction of their demand so that, at every internal node, the non-blocked children keep equal
weighted dominant shares

    s_c / w_c,    s_c = max_j A_cj / R_j      (A_c: what c's whole subtree holds, R: the cluster)

A leaf is blocked when a resource it demands is saturated or it is at its bound; a group when all
its children are blocked or it is at its limit.  This is the fluid counterpart of the discrete
descent of :mod:`fairalloc.engines.hierarchy` (``hdrf``), which launches whole tasks.

Queue bounds, at every node ``v`` (:func:`fairalloc.core.queues.queues_of`): a *limit* ``L_v``
(resource amounts; the node stops, blocked, when its subtree reaches it on any resource; a leaf
also stops at ``max_tasks``) and a *guarantee* ``G_v`` (resource amounts on the resources it
names; what those need of the others comes with them; a guarantee naming no resource the node's
leaves ask for gives no floor): the node holds at least the largest allocation of its own growth
that fits ``G_v`` -- for a leaf, the largest multiple of its demand within ``G_v`` -- whatever its
siblings' level, as :func:`fairalloc.engines.filling.progressive_filling_bounded` does for a flat
set of users; of that growth, the least that holds as much of the named resources (a group whose
growing queues ask for none of them gets no more of the others from it).  A guarantee above a
limit counts up to the limit.

The algorithm is event-driven and exact in piecewise-linear arithmetic (no bisection).  Between
two saturations every node's allocation is a monotone *curve* of its level ``theta`` (its own
weighted dominant share cap): a polyline of points ``(theta_k, X_k)`` with ``X_k`` the task counts
of every leaf.  Bottom up:

* a leaf's *path* is the segment ``x d_i``, ``0 <= x <= T_i`` (a frozen leaf: one point);
* an internal node's path is the sum of its children's curves at a common level ``lambda``: every
  child's breakpoints merged; where children jump (below), their jumps are taken together;
* the path is cut where the subtree first exceeds the node's limit (by more than rounding,
  :func:`_past`: leaves frozen at it sum to it in another order); its *floor* is the point where
  it first exceeds the guarantee, or the first before it using as much of the resources the
  guarantee names (:func:`_floor_start`);
* the node's curve maps each point to ``theta = s / w`` (with points added where the dominant
  resource changes, so ``theta`` is linear between points).  Where ``theta`` stays flat while the
  subtree grows (its dominant resource is held by a blocked leaf, and the growing leaves use
  others) the curve has a vertical segment: at that level the node takes all that growth at once,
  as the discrete descent keeps stepping into a child whose share does not rise.

Every step above reads only what the subtree *uses* (``X_k D``, ``m`` numbers a point), so a curve
keeps its points' uses and, for each point, where it lies on the node's path; ``X_k`` itself is
rebuilt only where an event needs it, by walking down the tree (:func:`_spread`).  The merge sums
the children's uses as piecewise-linear functions: each child contributes its segments' changes of
intercept and slope at its own breakpoints, sorted once and summed cumulatively, so a node with
``P`` breakpoints below it costs ``O(P log P)`` in time and ``O(P m)`` in memory (the dense curves
were ``O(P n)``: every leaf at every breakpoint, quadratic in the queues).  An event costs
``O(n depth log n)``; there are at most ``m + 1``.

At the root the children's curves are merged the same way; the first point of the merged path
where a resource reaches its capacity is the next event: the leaves demanding it are frozen there,
and the curves are rebuilt.  At most ``m`` events; a path never saturating ends with every leaf at
a bound.  Floating-point rounding is the only error: a resource is saturated at
``(1 - SATURATION)`` of its capacity (:mod:`fairalloc.core.tolerances`).

``hdrf-volcano-2``: 30 CPUs, 30 GB; ``pg1``, ``pg2`` ``<1, 0>``, group ``pg3`` with ``pg31 <1, 0>``
and ``pg32 <0, 1>``, ``pg4 <0, 1>``.  CPU saturates at level 1/3 (10 each for ``pg1, pg2, pg31``);
``pg3``'s share is then held at 1/3 by ``pg31``, so ``pg32`` jumps to 10 GB and rises with ``pg4``
until memory saturates at 15 GB each:

>>> import fairalloc
>>> fluid_hdrf(fairalloc.load_case("hdrf-volcano-2").instance).tasks.tolist()
[10.0, 10.0, 10.0, 15.0, 15.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.decimals import shortest
from fairalloc.core.errors import CaseError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of
from fairalloc.core.tolerances import FEASIBILITY, SATURATION

_Floats = NDArray[np.float64]
_Ints = NDArray[np.intp]


@dataclass
class FluidResult:
    tasks: _Floats
    #: resources saturated at each event (indices), in order
    saturated: list[list[int]]
    #: at each event: the task counts where the resource fills, and which leaves were frozen before
    states: list[tuple[_Floats, NDArray[np.bool_]]]


@dataclass
class _Path:
    """A node's path: what its subtree uses at each point, ``A[p]`` (resource amounts), linear in
    between.  A leaf's path (``leaf`` its index) holds its task counts ``tasks[p]``; a group's is
    the merge of its ``children``'s curves: point ``p`` is their sum at level ``levels[lev[p]]``,
    approached from below, or from above where ``above[p]``."""

    A: _Floats
    leaf: int = -1
    tasks: _Floats | None = None
    children: list[_Curve] | None = None
    levels: _Floats | None = None
    lev: _Ints | None = None
    above: NDArray[np.bool_] | None = None


@dataclass
class _Curve:
    """A node's allocation as its level rises: its subtree uses ``A[k]`` at level ``theta[k]``,
    linear in between, ``A[-1]`` beyond the last level; ``theta[0] == 0``.  Point ``k`` lies on
    ``path`` at ``seg[k] + frac[k]``: ``frac[k]`` of the way from its point ``seg[k]`` to the next."""

    theta: _Floats
    A: _Floats
    seg: _Ints
    frac: _Floats
    path: _Path


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
        # which resources each subtree's leaves ask for, once (the bounds read them at every event)
        self.asks: dict[str, NDArray[np.bool_]] = {}
        self._asks(None)
        self._guarantee: dict[str, _Floats] = {}
        self._limit: dict[str, _Floats] = {}

    def _asks(self, node: str | None) -> NDArray[np.bool_]:
        if node is not None and not self.q.is_group(node):
            asks: NDArray[np.bool_] = self.D[self.index[node]] > 0
        else:
            asks = np.zeros(len(self.R), bool)
            for c in self.q.children(node):
                asks = asks | self._asks(c)
        if node is not None:
            self.asks[node] = asks
        return asks

    def guarantee(self, node: str) -> _Floats:
        """The node's guarantee on the resources it names (``inf`` elsewhere: what the named ones
        need comes with them); none (0) when it names no resource its leaves ask for.  Read at every
        event, so kept."""
        if node not in self._guarantee:
            given = np.asarray(self.q.guarantee[node], float)
            named = ~np.isnan(given)
            none = not (named & self.asks[node]).any()
            self._guarantee[node] = np.zeros_like(given) if none else np.where(named, given, np.inf)
        return self._guarantee[node]

    def limit(self, node: str) -> _Floats:
        if node not in self._limit:
            self._limit[node] = np.asarray(self.q.limit[node], float)
        return self._limit[node]


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
        path = _merge([_curve(tree, c, frozen, x) for c in tree.q.children(None)], len(tree.R))
        if first:
            _refuse_overcommitted(tree, path.A[0])
            first = False
        hit = _first_saturation(path.A, tree.R, open_res)
        if hit is None:  # every leaf stops at a bound before any resource fills
            x = np.where(frozen, x, _tasks_at(tree, path, {len(path.A) - 1: 1.0}))
            break
        (p, s), j = hit
        x = np.where(frozen, x, _tasks_at(tree, path, {p: 1.0 - s, p + 1: s} if s > 0 else {p: 1.0}))
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
        path = _merge([_curve(tree, c, frozen, x) for c in tree.q.children(node)], len(tree.R))
        where = f"groups.{node}.limit"
    else:
        i = tree.index[node]
        if frozen[i]:
            tasks = np.array([x[i]])
        else:
            mu = float(np.max(tree.D[i] / tree.scale))
            end = min(tree.T[i], tree.top * tree.weight[node] / mu) if mu > 0 else tree.T[i]
            tasks = np.array([0.0, end if np.isfinite(end) else 0.0])  # demanding nothing: no growth
        path = _Path(tasks[:, None] * tree.D[i], leaf=i, tasks=tasks)
        where = f"users.{node}.limit"
    limit = tree.limit(node)
    points = (path.A, np.arange(len(path.A)), np.zeros(len(path.A)))
    points, k = _cut(points, limit)
    need = points[0][0]
    if k == 0 and np.any(need > limit * (1 + FEASIBILITY)):
        j = int(np.argmax(need - limit))
        raise CaseError(
            f"{where}: the guarantees below it need {_amount(need[j])} {tree.q.resources[j]}, "
            f"above its limit {_amount(limit[j])}"
        )
    floor, k = _cut(points, tree.guarantee(node))
    f = _floor_start(floor[0], tree.guarantee(node))
    rest = tuple(np.concatenate([q[f:], p[k:]]) for q, p in zip(floor, points))
    # a leaf's shares are all proportional to its task count: they never cross on its path
    return _levels(rest, tree.scale * tree.weight[node], path, crossings=path.tasks is None)  # type: ignore[arg-type]


_Points = tuple[_Floats, _Ints, _Floats]  # points on a path: their uses, and where they lie on it


def _floor_start(A: _Floats, guarantee: _Floats) -> int:
    """The first of the points ``A`` (a path's prefix within ``guarantee``) that holds as much of
    the named resources as its last: the node's floor.  Growth beyond it takes only resources the
    guarantee does not name, which do not come with it -- a group guaranteed 46 GB whose only
    growing queue asks for CPUs alone is not guaranteed every CPU up to its limit, as a queue
    asking for none of the named resources is guaranteed nothing."""
    named = np.isfinite(guarantee)
    use = A[:, named]
    reached = (use >= use[-1] * (1 - SATURATION)).all(axis=1)
    return int(np.argmax(reached))


def _past(A: _Floats, bound: _Floats) -> NDArray[np.bool_]:
    """Which of the uses ``A`` pass ``bound`` (a limit, a guarantee, the capacities) by more than
    rounding (``SATURATION``, as a resource is full): a group held at its limit by frozen leaves
    sums their uses in another order than the event that froze them, and an ulp above the limit
    would stop its other leaves -- those asking only for resources the limit leaves room for --
    at their first point; bounds summing to a capacity would make an event of the ulp."""
    past: NDArray[np.bool_] = np.any(A > bound * (1 + SATURATION), axis=1)
    return past


def _between(points: _Points, k: _Ints, s: _Floats) -> _Points:
    """The points ``s`` of the way from ``points[k]`` to ``points[k + 1]`` (consecutive points lie
    on one segment of the path, or the second at its end)."""
    A, seg, frac = points
    step = (seg[k + 1] - seg[k]) + frac[k + 1] - frac[k]
    return A[k] + s[:, None] * (A[k + 1] - A[k]), seg[k], frac[k] + s * step


def _cut(points: _Points, bound: _Floats) -> tuple[_Points, int]:
    """The longest prefix of ``points`` whose use stays within ``bound`` (``inf``: none), and the
    index of the first point past it (``len``: none)."""
    A = points[0]
    over = _past(A, bound)
    if not over.any():
        return points, len(A)
    k = int(np.argmax(over))
    if k == 0:
        return tuple(p[:1] for p in points), 0  # type: ignore[return-value]
    a0, a1 = A[k - 1], A[k]
    crossing = (a1 > bound) & (a1 > a0)
    s = float(np.min((bound[crossing] - a0[crossing]) / (a1[crossing] - a0[crossing]))) if crossing.any() else 0.0
    point = _between(points, np.array([k - 1]), np.array([min(max(s, 0.0), 1.0)]))
    return tuple(np.concatenate([p[:k], q]) for p, q in zip(points, point)), k  # type: ignore[return-value]


def _levels(points: _Points, unit: _Floats, path: _Path, crossings: bool = True) -> _Curve:
    """The curve of ``points`` on ``path``: level ``max_j A_j / unit_j`` at every point, with a point
    added wherever two resources' shares cross on a segment (so the level is linear between points);
    a path whose first point has a positive level starts with that point at level 0 (the node's
    floor).  All segments at once: ``O(K m^2)`` for ``K`` points (none looked for without
    ``crossings``)."""
    shares = points[0] / unit
    if not crossings:
        theta = np.maximum.accumulate(shares.max(axis=1))
        A, seg, frac = points
        if theta[0] > 0:
            theta, A = np.concatenate([[0.0], theta]), np.vstack([A[:1], A])
            seg, frac = np.concatenate([seg[:1], seg]), np.concatenate([frac[:1], frac])
        return _Curve(theta, A, seg, frac, path)
    a0, slope = shares[:-1], np.diff(shares, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (a0[:, None, :] - a0[:, :, None]) / (slope[:, :, None] - slope[:, None, :])
    seg_k, _, _ = np.nonzero(np.isfinite(cross) & (cross > 0) & (cross < 1))
    s = cross[np.isfinite(cross) & (cross > 0) & (cross < 1)]
    # one cut per distinct crossing of a segment, in order along it; then the points themselves
    order = np.lexsort((s, seg_k))
    seg_k, s = seg_k[order], s[order]
    distinct = np.concatenate([[True], (seg_k[1:] != seg_k[:-1]) | (s[1:] != s[:-1])]) if len(s) else np.zeros(0, bool)
    seg_k, s = seg_k[distinct], s[distinct]
    cuts = _between(points, seg_k, s)
    cut_levels = (a0[seg_k] + s[:, None] * slope[seg_k]).max(axis=1) if len(s) else np.zeros(0)
    K = len(shares)
    key_k = np.concatenate([np.arange(K), seg_k])
    key_s = np.concatenate([np.zeros(K), s])
    order = np.lexsort((key_s, key_k))
    A, seg, frac = (np.concatenate([p, c])[order] for p, c in zip(points, cuts))
    levels = np.concatenate([shares.max(axis=1), cut_levels])[order]
    theta = np.maximum.accumulate(levels)  # rounding must not make it fall
    if theta[0] > 0:
        theta = np.concatenate([[0.0], theta])
        A, seg, frac = np.vstack([A[:1], A]), np.concatenate([seg[:1], seg]), np.concatenate([frac[:1], frac])
    return _Curve(theta, A, seg, frac, path)


def _merge(curves: list[_Curve], m: int) -> _Path:
    """The path of the children's curves at a common level: at every breakpoint of any child, the
    sum of the values just below it, then (if some child jumps there) of the values just above.

    A child's use is its first point plus the rise of each of its segments: all of it at levels
    past the segment (a jump: from above its level on), a share in between.  The whole rises are
    summed over the segments sorted by where they end; a share inside a segment is its slope times
    the way into it, summed as slopes and intercepts over the levels a segment spans -- except on a
    segment too narrow for that (``a + b lambda`` would cancel), where each level inside is
    computed as it is.  ``O(P log P)`` for ``P`` breakpoints."""
    if not curves:
        return _Path(
            np.zeros((1, m)), children=[], levels=np.zeros(1), lev=np.zeros(1, np.intp), above=np.zeros(1, bool)
        )
    theta = np.concatenate([c.theta for c in curves])
    A = np.vstack([c.A for c in curves])
    sizes = np.array([len(c.theta) for c in curves])
    first = np.cumsum(sizes) - sizes
    levels = np.unique(theta)
    k = np.setdiff1d(np.arange(len(theta) - 1), np.cumsum(sizes) - 1)  # each segment's first point
    t0, t1, rise = theta[k], theta[k + 1], A[k + 1] - A[k]
    jump = t1 == t0
    after = np.nextafter(t1, np.inf)
    full_below = _sums_up_to(np.where(jump, after, t1), rise, levels)
    full_above = _sums_up_to(t1, rise, levels)
    inside = _inside(levels, t0[~jump], t1[~jump], rise[~jump])
    base = A[first].sum(axis=0)
    below, above = base + full_below + inside, base + full_above + inside
    jumps = np.isin(levels, t0[jump])
    lev = np.repeat(np.arange(len(levels)), np.where(jumps, 2, 1))
    side = np.concatenate([[False], lev[1:] == lev[:-1]])
    uses = np.where(side[:, None], above[lev], below[lev])
    return _Path(uses, children=curves, levels=levels, lev=lev, above=side)


def _sums_up_to(key: _Floats, values: _Floats, levels: _Floats) -> _Floats:
    """At every level, the sum of the ``values`` whose ``key`` is at most that level."""
    order = np.argsort(key, kind="stable")
    sums = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values[order], axis=0)])
    summed: _Floats = sums[np.searchsorted(key[order], levels, "right")]
    return summed


#: a segment narrower than this share of its end level is evaluated level by level in a merge
_NARROW = 1e-3


def _inside(levels: _Floats, t0: _Floats, t1: _Floats, rise: _Floats) -> _Floats:
    """At every level, the sum over the segments ``(t0, t1)`` strictly around it of the part of
    their ``rise`` reached there (linear in the level)."""
    out = np.zeros((len(levels), rise.shape[1]))
    i0, i1 = np.searchsorted(levels, t0), np.searchsorted(levels, t1)
    narrow = (t1 - t0) <= _NARROW * t1
    # wide segments: slope b from level i0 + 1 to i1 - 1, as differences summed along the levels
    b = rise[~narrow] / (t1 - t0)[~narrow, None]
    slope, intercept = np.zeros_like(out), np.zeros_like(out)
    np.add.at(slope, i0[~narrow] + 1, b)
    np.add.at(slope, i1[~narrow], -b)
    np.add.at(intercept, i0[~narrow] + 1, -b * t0[~narrow, None])
    np.add.at(intercept, i1[~narrow], b * t0[~narrow, None])
    out += levels[:, None] * np.cumsum(slope, axis=0) + np.cumsum(intercept, axis=0)
    # narrow ones: each level inside, as the segment's own interpolation
    count = np.maximum(i1[narrow] - i0[narrow] - 1, 0)
    seg = np.repeat(np.arange(int(narrow.sum())), count)
    at = np.repeat(i0[narrow] + 1 - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    s = (levels[at] - t0[narrow][seg]) / (t1 - t0)[narrow][seg]
    np.add.at(out, at, s[:, None] * rise[narrow][seg])
    return out


# -- task counts, where an event needs them -------------------------------------------------------


def _tasks_at(tree: _Tree, path: _Path, weights: dict[int, float]) -> _Floats:
    """Every leaf's task count at ``sum_p weights[p] * X_p`` on ``path``: a point of a path is the
    sum of its children's at one level, and a point of a curve a point between two of its path's,
    so the combination is carried down the tree, a few points a node."""
    out = np.zeros(tree.n)
    _spread(path, weights, out)
    return out


def _spread(path: _Path, weights: dict[int, float], out: _Floats) -> None:
    if path.tasks is not None:
        out[path.leaf] += sum(w * path.tasks[p] for p, w in weights.items())
        return
    assert path.children is not None and path.levels is not None and path.lev is not None and path.above is not None
    for child in path.children:
        at: dict[int, float] = {}
        for p, w in weights.items():
            for k, v in _at(child.theta, float(path.levels[path.lev[p]]), bool(path.above[p])):
                at[k] = at.get(k, 0.0) + w * v
        on_path: dict[int, float] = {}
        for k, w in at.items():
            q, s = int(child.seg[k]), float(child.frac[k])
            on_path[q] = on_path.get(q, 0.0) + w * (1.0 - s)
            if s > 0:
                on_path[q + 1] = on_path.get(q + 1, 0.0) + w * s
        _spread(child.path, on_path, out)


def _at(theta: _Floats, level: float, above: bool) -> list[tuple[int, float]]:
    """A curve's point at ``level``, approached from below or from above, as weights of its points
    (the first point of a jump at ``level`` from below, the last from above)."""
    K = len(theta)
    if above:
        k = int(np.searchsorted(theta, level, "right")) - 1
    else:
        if level <= theta[0]:
            return [(0, 1.0)]
        k = int(np.searchsorted(theta, level, "left")) - 1
    if k >= K - 1:
        return [(K - 1, 1.0)]
    s = (level - theta[k]) / (theta[k + 1] - theta[k])
    return [(k, 1.0 - s), (k + 1, s)] if s > 0 else [(k, 1.0)]


# -- events -----------------------------------------------------------------------------------------


def _first_saturation(A: _Floats, R: _Floats, open_res: NDArray[np.bool_]) -> tuple[tuple[int, float], int] | None:
    """Where a path of uses ``A`` first brings an open resource to its capacity (a point, and the
    fraction of the way to the next), and that resource.  A path ending at a capacity (leaves
    stopping at bounds that sum to it) passes it only by rounding: no event (:func:`_past`)."""
    over = _past(A, np.where(open_res, R, np.inf))
    if not over.any():
        return None
    k = int(np.argmax(over))
    if k == 0:
        return (0, 0.0), int(np.argmax(np.where(open_res, A[0] - R, -np.inf)))
    a0, a1 = A[k - 1], A[k]
    crossing = open_res & (a1 > R) & (a1 > a0)
    s = np.where(crossing, (R - a0) / np.where(crossing, a1 - a0, 1.0), np.inf)
    j = int(np.argmin(s))
    return (k - 1, min(max(float(s[j]), 0.0), 1.0)), j


def _refuse_overcommitted(tree: _Tree, need: _Floats) -> None:
    over = need > tree.R * (1 + SATURATION)
    if not over.any():
        return
    j = int(np.argmax(np.where(over, need / np.where(tree.R > 0, tree.R, 1e-300), -np.inf)))
    who = [v for v in (*tree.q.groups, *tree.users) if tree.guarantee(v)[j] > 0 and tree.asks[v][j]]
    raise CaseError(
        f"guarantee: the guarantees of queues {', '.join(who)} need {_amount(need[j])} {tree.q.resources[j]}, "
        f"capacity {_amount(tree.R[j])}"
    )


def _amount(value: float) -> str:
    """An amount of a refusal, to six digits of its shortest decimal: a sum that lands an ulp off
    a tie (1055.9450000000002 against 1055.945) is worded as the sum of the same terms in any order."""
    return f"{shortest(value):.6g}"


__all__ = ["FluidResult", "fluid_hdrf"]
