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
rebuilt only where an event needs it, by walking down the tree (:func:`_tasks_at`).  The merge sums
the children's uses as piecewise-linear functions: each child contributes its segments' changes of
intercept and slope at its own breakpoints, summed along the levels (the dense curves were
``O(P n)``: every leaf at every breakpoint, quadratic in the queues).

Every step is done for a whole *generation* at once (the nodes at one depth, :class:`_Generation`),
from the deepest up: all its nodes' points in one array, node by node, each step numpy over all of
them (sorts, cumulative sums kept within each node's run, :func:`_accumulate`), never a Python loop
over the nodes -- which had cost some 70 microseconds a node a pass, 3.8 s for 10,000 queues six
levels deep.  A generation with ``P`` points costs ``O(P log P)`` in time (its sorts) and
``O(P m^2)`` in memory (the crossings of ``m`` shares on each segment); its ``P`` is about the
number of leaves below it (a node's curve has about as many points as its children's together), so
an event costs ``O(n depth log n)`` and ``O(n m^2)`` memory; there are at most ``m + 1``.

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
from functools import cached_property, reduce
from itertools import compress, repeat
from typing import Any, cast

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
class _Generation:
    """The nodes at one depth of the tree (depth 0: the root alone), parent by parent, each
    parent's children in :meth:`Queues.children` order, with what a pass reads of each: bounds,
    the unit of its level, and where its children lie in the next generation."""

    names: list[str | None]
    #: each node's parent (its index in the generation above; 0 at the root)
    parent: _Ints
    group: NDArray[np.bool_]
    #: the user index of a leaf (-1: a group), and the end of its path (``T_i`` or far enough)
    leaf: _Ints
    end: _Floats
    limit: _Floats
    guarantee: _Floats
    unit: _Floats
    #: where each node's children begin in the next generation, and how many
    first_child: _Ints
    children: _Ints


@dataclass
class _Points:
    """Points on the paths of a generation's nodes, node by node (``node`` ascending): their uses
    ``A``, and where each lies on its node's path (``frac`` of the way from path point ``seg`` to
    the next; indices into the generation's whole path)."""

    A: _Floats
    seg: _Ints
    frac: _Floats
    node: _Ints

    def take(self, keep: NDArray[np.bool_] | _Ints) -> _Points:
        return _Points(self.A[keep], self.seg[keep], self.frac[keep], self.node[keep])

    def insert(self, where: _Ints, new: _Points) -> _Points:
        """These points with the ``new`` ones before positions ``where`` (ascending; those at one
        position in their order)."""
        order = np.insert(np.arange(len(self.A)), where, np.arange(len(self.A), len(self.A) + len(new.A)))
        return _Points(
            np.concatenate([self.A, new.A])[order],
            np.concatenate([self.seg, new.seg])[order],
            np.concatenate([self.frac, new.frac])[order],
            np.concatenate([self.node, new.node])[order],
        )


@dataclass
class _Paths:
    """Every path of a generation: uses ``A`` of node ``node``'s points.  A leaf's point holds
    ``tasks``; a group's point ``p`` is the sum of its children's curves at level ``levels[lev[p]]``
    (approached from above where ``above[p]``).  ``tasks`` is NaN on a group's points, ``lev``
    -1 on a leaf's."""

    A: _Floats
    node: _Ints
    tasks: _Floats
    lev: _Ints
    above: NDArray[np.bool_]
    levels: _Floats


@dataclass
class _Curves:
    """Every curve of a generation: node ``node[k]`` uses ``A[k]`` at level ``theta[k]`` (linear
    in between; ``theta`` is 0 at each node's first point), which lies on the generation's paths at
    ``seg[k] + frac[k]``."""

    theta: _Floats
    A: _Floats
    seg: _Ints
    frac: _Floats
    node: _Ints


class _Tree:
    """The instance's tree, a generation at a time, with what every pass reads."""

    def __init__(self, instance: Instance) -> None:
        weights = instance.scalar_weights("hdrf-fluid")
        self.q: Queues = queues_of(instance)
        self.users = instance.users
        self.index: dict[str | None, int] = {u: i for i, u in enumerate(instance.users)}
        self.D, self.R, self.T = instance.demand, np.asarray(instance.capacity, float), instance.bounds()
        self.n, self.m = instance.n, len(self.R)
        self.scale = np.where(self.R > 0, self.R, np.inf)  # a resource of capacity 0 has no share
        self.user_weight = np.asarray(weights, float)
        self.group_weight: dict[str | None, float] = {g: float(self.q.weight[g]) for g in self.q.groups}
        # far enough that an unbounded leaf's path passes every capacity (its share passes 1 / w)
        self.top = 4.0 / min(self.user_weight.min(initial=np.inf), *self.group_weight.values(), np.inf)
        self.gens = self._generations()
        self._asks_below()

    def _generations(self) -> list[_Generation]:
        """The generations from the root down (:meth:`Queues.generations`, whose parents are the
        nodes with children of the generation above)."""
        names: list[str | None] = [None]
        gens = [self._generation(names, np.zeros(1, np.intp))]
        for parents, children, owner in self.q.generations():
            where = {v: i for i, v in enumerate(names)}
            full = np.array([where[p] for p in parents], np.intp)  # the parents among all of them
            count = np.zeros(len(names), np.intp)
            count[full] = np.bincount(owner, minlength=len(parents))
            gens[-1].first_child, gens[-1].children = np.cumsum(count) - count, count
            names = list(children)
            gens.append(self._generation(names, full[owner]))
        return gens

    def _generation(self, names: list[str | None], parent: _Ints) -> _Generation:
        """One generation's nodes read from the tree, in maps over their names (a Python expression
        a node had been most of the tree's cost); where its children lie is filled in after."""
        m, size = self.m, len(names)
        leaf = np.fromiter(map(self.index.get, names, repeat(-1)), np.intp, size)
        group = leaf < 0
        weight = np.ones(size)
        weight[group] = np.fromiter(map(self.group_weight.get, compress(names, group), repeat(1.0)), np.float64)
        weight[~group] = self.user_weight[leaf[~group]]
        limit, given = np.full((size, m), np.inf), np.full((size, m), np.nan)
        if names[0] is not None:  # the root has no bounds
            nodes = cast("list[str]", names)
            limit[:] = np.concatenate(list(map(self.q.limit.__getitem__, nodes))).reshape(size, m)
            given[:] = np.concatenate(list(map(self.q.guarantee.__getitem__, nodes))).reshape(size, m)
        end = np.zeros(size)
        i = leaf[~group]
        mu = _rows(np.maximum, self.D[i] / self.scale)
        with np.errstate(divide="ignore"):
            reach = np.where(
                mu > 0, np.minimum(self.T[i], self.top * weight[~group] / np.where(mu > 0, mu, 1.0)), self.T[i]
            )
        end[~group] = np.where(np.isfinite(reach), reach, 0.0)  # demanding nothing: no growth
        none = np.zeros(size, np.intp)
        return _Generation(names, parent, group, leaf, end, limit, given, self.scale * weight[:, None], none, none)

    def _asks_below(self) -> None:
        """Which resources each node's leaves ask for (bottom up, a generation at a time), and so
        each node's guarantee: on the resources it names (``inf`` elsewhere: what the named ones need
        comes with them); none (0) when it names no resource its leaves ask for."""
        below = np.zeros((0, self.m), bool)
        self.asks: list[NDArray[np.bool_]] = []
        for gen in reversed(self.gens):
            asks = np.zeros((len(gen.names), self.m), bool)
            asks[~gen.group] = self.D[gen.leaf[~gen.group]] > 0
            has = gen.children > 0
            if has.any():
                asks[has] = np.logical_or.reduceat(below, gen.first_child[has], axis=0)
            named = ~np.isnan(gen.guarantee)
            none: NDArray[np.bool_] = ~_rows(np.logical_or, named & asks)
            gen.guarantee = np.where(none[:, None], 0.0, np.where(named, gen.guarantee, np.inf))
            self.asks.insert(0, asks)
            below = asks

    def guarantee(self, name: str) -> _Floats:
        d, i = self._where[name]
        guarantee: _Floats = self.gens[d].guarantee[i]
        return guarantee

    def asks_of(self, name: str) -> NDArray[np.bool_]:
        d, i = self._where[name]
        asks: NDArray[np.bool_] = self.asks[d][i]
        return asks

    @cached_property
    def _where(self) -> dict[str | None, tuple[int, int]]:
        """The generation and index of every node (for a refusal's words)."""
        return {v: (d, i) for d, gen in enumerate(self.gens) for i, v in enumerate(gen.names)}


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
        paths, curves = _pass(tree, frozen, x)
        root = paths[0]
        if first:
            _refuse_overcommitted(tree, root.A[0])
            first = False
        hit = _first_saturation(root.A, tree.R, open_res)
        if hit is None:  # every leaf stops at a bound before any resource fills
            x = np.where(frozen, x, _tasks_at(tree, paths, curves, [len(root.A) - 1], [1.0]))
            break
        (p, s), j = hit
        at = ([p, p + 1], [1.0 - s, s]) if s > 0 else ([p], [1.0])
        x = np.where(frozen, x, _tasks_at(tree, paths, curves, *at))
        used = x @ tree.D
        newly = open_res & (used >= tree.R * (1 - SATURATION))
        newly[j] = True
        log.append([int(k) for k in np.flatnonzero(newly)])
        states.append((x.copy(), frozen.copy()))
        open_res &= ~newly
        frozen |= (tree.D[:, newly] > 0).any(axis=1)
    return FluidResult(x, log, states)


# -- a pass: every node's curve, a generation at a time ------------------------------------------------


def _pass(tree: _Tree, frozen: NDArray[np.bool_], x: _Floats) -> tuple[list[_Paths], list[_Curves]]:
    """Every generation's paths and curves given the frozen leaves, from the deepest up: a
    generation's groups merge the curves of the one below, its leaves start their own paths.
    The root's path (``paths[0]``) is the merge of its children's curves; ``curves[0]`` is unused."""
    depth = len(tree.gens)
    paths: list[_Paths] = [None] * depth  # type: ignore[list-item]
    curves: list[_Curves] = [None] * depth  # type: ignore[list-item]
    below: _Curves | None = None
    refusals: list[tuple[str, str]] = []
    for d in reversed(range(depth)):
        gen = tree.gens[d]
        paths[d] = _paths(tree, gen, below, tree.gens[d + 1].parent if below is not None else None, frozen, x)
        if d == 0:
            break
        below = curves[d] = _curves(tree, gen, paths[d], refusals)
    if refusals:
        raise CaseError(_first_in_post_order(tree, refusals))
    return paths, curves


def _paths(
    tree: _Tree, gen: _Generation, below: _Curves | None, parent: _Ints | None, frozen: NDArray[np.bool_], x: _Floats
) -> _Paths:
    """The generation's paths: each leaf's segment ``x d_i``, ``0 <= x <= T_i`` (a frozen leaf: one
    point), each group's merge of its children's curves (:func:`_merge`), node by node."""
    i = gen.leaf[~gen.group]
    nodes = np.flatnonzero(~gen.group)
    still = ~frozen[i]
    count = np.where(still, 2, 1)
    node = np.repeat(nodes, count)
    start = np.cumsum(count) - count
    tasks = np.zeros(len(node))
    tasks[start] = np.where(still, 0.0, x[i])
    tasks[start[still] + 1] = gen.end[nodes[still]]
    leaves = _Paths(
        tasks[:, None] * tree.D[gen.leaf[node]],
        node,
        tasks,
        np.full(len(node), -1, np.intp),
        np.zeros(len(node), bool),
        np.zeros(0),
    )
    groups = _merge(below, parent, np.flatnonzero(gen.group), tree.m)
    order = np.argsort(np.concatenate([groups.node, leaves.node]), kind="stable")
    cat = [
        np.concatenate([a, b])[order]
        for a, b in zip(
            (groups.A, groups.node, groups.tasks, groups.lev, groups.above),
            (leaves.A, leaves.node, leaves.tasks, leaves.lev, leaves.above),
        )
    ]
    A, node, tasks, lev, above = cat
    return _Paths(A, node, tasks, lev, above, groups.levels)


def _curves(tree: _Tree, gen: _Generation, paths: _Paths, refusals: list[tuple[str, str]]) -> _Curves:
    """Every node's curve: its path cut where it first exceeds its limit; its floor, the first point
    past its guarantee or the first before it using as much of the resources the guarantee names
    (:func:`_floor_starts`); then levels (:func:`_levels`).  A node whose guarantees below it need
    more than its limit is noted in ``refusals`` (the pass refuses the first, in the tree's order)."""
    P = len(paths.A)
    points = _Points(paths.A, np.arange(P), np.zeros(P), paths.node)
    count = len(gen.names)
    points, k = _cut(points, gen.limit, count)
    need, limit = paths.A[_starts(paths.node, count)], gen.limit
    for v in np.flatnonzero((k == 0) & _rows(np.logical_or, need > limit * (1 + FEASIBILITY))):
        j = int(np.argmax(need[v] - limit[v]))
        where = f"{'groups' if gen.group[v] else 'users'}.{gen.names[v]}.limit"
        refusals.append(
            (
                str(gen.names[v]),
                f"{where}: the guarantees below it need {_amount(need[v, j])} {tree.q.resources[j]}, "
                f"above its limit {_amount(limit[v, j])}",
            )
        )
    floor, kg = _cut(points, gen.guarantee, count)
    f = _floor_starts(floor.A, gen.guarantee[floor.node], floor.node, count)
    keep_floor = _local(floor.node, count) >= f[floor.node]
    keep_rest = _local(points.node, count) >= kg[points.node]
    both = _Points(*(np.concatenate([a, b]) for a, b in zip(
        (floor.A[keep_floor], floor.seg[keep_floor], floor.frac[keep_floor], floor.node[keep_floor]),
        (points.A[keep_rest], points.seg[keep_rest], points.frac[keep_rest], points.node[keep_rest]),
    )))  # fmt: skip
    rest = both.take(np.argsort(both.node, kind="stable"))
    return _levels(rest.take(~_repeated(rest)), gen.unit, gen.group, count)


def _repeated(points: _Points) -> NDArray[np.bool_]:
    """The points that are their predecessor again (the same place on the same path): a floor
    ending where the rest begins -- every node without a guarantee has its first point twice.  Kept,
    it is a jump of nothing at its level, and the parent's path a point twice (as below and from
    above), in every generation."""
    same = (points.node[1:] == points.node[:-1]) & (points.seg[1:] == points.seg[:-1])
    same &= (points.frac[1:] == points.frac[:-1]) & _rows(np.logical_and, points.A[1:] == points.A[:-1])
    repeated: NDArray[np.bool_] = np.r_[False, same]
    return repeated


def _first_in_post_order(tree: _Tree, refusals: list[tuple[str, str]]) -> str:
    """The refusal the recursive descent raised first: a node's after its children's, children in
    order."""
    order: dict[str | None, int] = {}
    stack: list[tuple[str | None, bool]] = [(None, False)]
    while stack:
        v, done = stack.pop()
        if done:
            order[v] = len(order)
            continue
        stack.append((v, True))
        if v is None or tree.q.is_group(v):
            stack.extend((c, False) for c in reversed(tree.q.children(v)))
    return min(refusals, key=lambda r: order[r[0]])[1]


def _rows(ufunc: np.ufunc, a: NDArray[Any]) -> NDArray[Any]:
    """``ufunc.reduce(a, axis=1)`` column by column: numpy reduces along rows of two or three
    numbers ten times slower than it combines whole columns."""
    out: NDArray[Any] = reduce(ufunc, (a[:, j] for j in range(a.shape[1])))
    return out


# -- segmented arrays: a generation's nodes each own a run of rows ----------------------------------


def _starts(node: _Ints, count: int) -> _Ints:
    """Where each of ``count`` nodes' rows begin (rows sorted by ``node``; every node has one)."""
    starts: _Ints = np.searchsorted(node, np.arange(count))
    return starts


def _local(node: _Ints, count: int) -> _Ints:
    """Each row's index among its node's rows."""
    local: _Ints = np.arange(len(node)) - _starts(node, count)[node]
    return local


def _first_true(mask: NDArray[np.bool_], node: _Ints, count: int, default: _Ints) -> _Ints:
    """Per node, the index among its rows of its first row in ``mask`` (``default`` where none)."""
    rows = np.flatnonzero(mask)
    first = rows[np.r_[True, node[rows[1:]] != node[rows[:-1]]]] if len(rows) else rows
    out = default.copy()
    out[node[first]] = first - _starts(node, count)[node[first]]
    return out


def _accumulate(ufunc: np.ufunc, values: _Floats, node: _Ints) -> _Floats:
    """``ufunc.accumulate`` along each node's rows, separately, so one node's sums never pass
    through another's (a running sum over all nodes would carry their rounding into it): runs of
    up to ``_SHORT`` rows position by position, all at once; longer ones padded to a power of two
    and accumulated as one array (at most twice their rows)."""
    out = values.copy()
    starts = np.flatnonzero(np.r_[True, node[1:] != node[:-1]]) if len(node) else np.zeros(0, np.intp)
    lengths = np.diff(np.r_[starts, len(node)])
    short = lengths <= _SHORT
    by_length = np.argsort(-lengths[short], kind="stable")
    first, sizes = starts[short][by_length], lengths[short][by_length]
    for j in range(1, int(sizes.max(initial=0))):
        rows = first[: np.searchsorted(-sizes, -j, "left")] + j
        out[rows] = ufunc(out[rows - 1], out[rows])
    long = np.flatnonzero(~short)
    width = np.ceil(np.log2(lengths[long])).astype(np.intp)
    for w in np.unique(width):
        runs = long[width == w]
        offsets = np.arange(2**w)
        valid = offsets < lengths[runs, None]
        rows = starts[runs, None] + np.minimum(offsets, lengths[runs, None] - 1)
        out[rows[valid]] = ufunc.accumulate(values[rows], axis=1)[valid]
    return out


#: runs of at most this many rows are accumulated position by position (:func:`_accumulate`)
_SHORT = 16


def _rising(levels: _Floats, node: _Ints) -> _Floats:
    """Each node's levels made never to fall (rounding must not make them: a path's uses only
    grow); the running maximum of the few nodes whose levels fall somewhere."""
    falls = np.flatnonzero((levels[1:] < levels[:-1]) & (node[1:] == node[:-1]))
    if not len(falls):
        return levels
    rows = np.flatnonzero(np.isin(node, node[falls]))
    out = levels.copy()
    out[rows] = _accumulate(np.maximum, levels[rows], node[rows])
    return out


# -- one generation's curves ------------------------------------------------------------------------


def _floor_start(A: _Floats, guarantee: _Floats) -> int:
    """The first of the points ``A`` (a path's prefix within ``guarantee``) that holds as much of
    the named resources as its last: the node's floor.  Growth beyond it takes only resources the
    guarantee does not name, which do not come with it -- a group guaranteed 46 GB whose only
    growing queue asks for CPUs alone is not guaranteed every CPU up to its limit, as a queue
    asking for none of the named resources is guaranteed nothing."""
    return int(_floor_starts(A, np.broadcast_to(guarantee, A.shape), np.zeros(len(A), np.intp), 1)[0])


def _floor_starts(A: _Floats, guarantee: _Floats, node: _Ints, count: int) -> _Ints:
    """:func:`_floor_start` of every node's run of points, ``guarantee`` given at every point."""
    last = A[np.r_[_starts(node, count)[1:], len(A)] - 1]
    named = np.isfinite(guarantee)
    reached = _rows(np.logical_and, (A >= last[node] * (1 - SATURATION)) | ~named)
    return _first_true(reached, node, count, np.zeros(count, np.intp))


def _past(A: _Floats, bound: _Floats) -> NDArray[np.bool_]:
    """Which of the uses ``A`` pass ``bound`` (a limit, a guarantee, the capacities) by more than
    rounding (``SATURATION``, as a resource is full): a group held at its limit by frozen leaves
    sums their uses in another order than the event that froze them, and an ulp above the limit
    would stop its other leaves -- those asking only for resources the limit leaves room for --
    at their first point; bounds summing to a capacity would make an event of the ulp."""
    past: NDArray[np.bool_] = _rows(np.logical_or, A > bound * (1 + SATURATION))
    return past


def _between(points: _Points, k: _Ints, s: _Floats) -> _Points:
    """The points ``s`` of the way from ``points[k]`` to ``points[k + 1]`` (consecutive points of a
    node lie on one segment of its path, or the second at its end)."""
    A, seg, frac = points.A, points.seg, points.frac
    step = (seg[k + 1] - seg[k]) + frac[k + 1] - frac[k]
    return _Points(A[k] + s[:, None] * (A[k + 1] - A[k]), seg[k], frac[k] + s * step, points.node[k])


def _cut(points: _Points, bound: _Floats, count: int) -> tuple[_Points, _Ints]:
    """Each node's longest prefix of ``points`` whose use stays within its ``bound`` (``inf``:
    none), and the index of its first point past it (the number of its points: none)."""
    starts = _starts(points.node, count)
    sizes = np.r_[starts[1:], len(points.A)] - starts
    k = _first_true(_past(points.A, bound[points.node]), points.node, count, sizes)
    local = _local(points.node, count)
    kk = k[points.node]
    keep = (local < kk) | (local == 0)
    cut = np.flatnonzero((k > 0) & (k < sizes))
    at = starts[cut] + k[cut]
    a0, a1, b = points.A[at - 1], points.A[at], bound[cut]
    crossing = (a1 > b) & (a1 > a0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = _rows(np.minimum, np.where(crossing, (b - a0) / np.where(crossing, a1 - a0, 1.0), np.inf))
    s = np.where(_rows(np.logical_or, crossing), s, 0.0)
    new = _between(points, at - 1, np.minimum(np.maximum(s, 0.0), 1.0))
    kept = points.take(keep)
    return kept.insert(np.searchsorted(kept.node, cut, "right"), new), k  # after the node's kept points


def _levels(points: _Points, unit: _Floats, group: NDArray[np.bool_], count: int) -> _Curves:
    """The curves of ``points``: level ``max_j A_j / unit_j`` at every point, with a point added
    wherever two resources' shares cross on a group's segment (so the level is linear between
    points; a leaf's shares are all proportional to its task count and never cross); a path whose
    first point has a positive level starts with that point at level 0 (the node's floor).  All
    segments at once: ``O(K m^2)`` for ``K`` points."""
    shares = points.A / unit[points.node]
    segs = np.flatnonzero((points.node[1:] == points.node[:-1]) & group[points.node[:-1]])
    a0, slope = shares[segs], shares[segs + 1] - shares[segs]
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (a0[:, None, :] - a0[:, :, None]) / (slope[:, :, None] - slope[:, None, :])
    inside = np.isfinite(cross) & (cross > 0) & (cross < 1)
    which, _, _ = np.nonzero(inside)
    s = cross[inside]
    # one cut per distinct crossing of a segment, in order along it; then the points themselves
    order = np.lexsort((s, which))
    which, s = which[order], s[order]
    distinct = np.r_[True, (which[1:] != which[:-1]) | (s[1:] != s[:-1])] if len(s) else np.zeros(0, bool)
    which, s = which[distinct], s[distinct]
    levels = _rows(np.maximum, shares)
    if len(s):
        after = segs[which] + 1
        levels = np.insert(levels, after, _rows(np.maximum, a0[which] + s[:, None] * slope[which]))
        points = points.insert(after, _between(points, segs[which], s))
    theta = _rising(levels, points.node)
    starts = _starts(points.node, count)
    floor = starts[theta[starts] > 0]  # a node held at a floor: from level 0 at its first point
    if len(floor):
        theta = np.insert(theta, floor, 0.0)
        points = points.insert(floor, points.take(floor))
    return _Curves(theta, points.A, points.seg, points.frac, points.node)


# -- a generation's groups: their children's curves merged -----------------------------------------


def _merge(curves: _Curves | None, parent: _Ints | None, groups: _Ints, m: int) -> _Paths:
    """Every group's path: its children's curves at a common level, at every breakpoint of any
    child the sum of the values just below it, then (if some child jumps there) of the values just
    above (a group without children: one point, nothing used).

    A child's use is its first point plus the rise of each of its segments: all of it at levels
    past the segment (a jump: from above its level on), a share in between.  Each group's levels
    are its children's breakpoints (one sort over the generation); a segment adds its whole rise at
    the level where it ends (after it, for a jump), and a share inside it as a slope and an
    intercept where it starts, taken back where it ends: summed along each group's levels
    (:func:`_accumulate`) -- except on a segment too narrow for that (``a + b lambda`` would
    cancel), where each level inside is computed as it is.  ``O(P log P)`` for the generation's
    ``P`` breakpoints, ``O(P m)`` memory."""
    if curves is None or parent is None:
        curves = _Curves(np.zeros(0), np.zeros((0, m)), np.zeros(0, np.intp), np.zeros(0), np.zeros(0, np.intp))
        parent = np.zeros(0, np.intp)
    theta, A = curves.theta, curves.A
    owner = parent[curves.node]
    values, rank = np.unique(np.r_[theta, 0.0], return_inverse=True)
    width = len(values)
    key = np.r_[owner * width + rank[:-1], groups * width + rank[-1]]  # every group has level 0
    order = np.argsort(key, kind="stable")  # runs: each child's curve is sorted
    new = np.r_[len(key) > 0, key[order[1:]] != key[order[:-1]]][: len(key)]
    level_keys = key[order[new]]
    group_of, levels = level_keys // width, values[level_keys % width]
    lvl = np.empty(len(key), np.intp)
    lvl[order] = np.cumsum(new) - 1
    # segments: consecutive points of one child
    k = np.flatnonzero(curves.node[1:] == curves.node[:-1])
    t0, t1, rise = theta[k], theta[k + 1], A[k + 1] - A[k]
    i0, i1 = lvl[k], lvl[k + 1]
    jump = t1 == t0
    L = len(levels)
    ends = np.cumsum(np.bincount(group_of, minlength=len(groups) and int(groups.max()) + 1))[owner[k]]
    past = np.where(jump, i1 + 1, i1)
    past = np.where(past < ends, past, L)  # a jump at a group's last level: nowhere below
    narrow = jump | ((t1 - t0) <= _NARROW * t1)
    wide = ~narrow
    b = rise[wide] / (t1 - t0)[wide, None]
    inner = np.r_[i0[wide] + 1, i1[wide]]
    steps = np.zeros((L, 4, m))
    for j in range(m):  # whole rises from above the end on, from below after it; slopes, intercepts
        steps[:, 0, j] = np.bincount(i1, rise[:, j], L)
        steps[:, 1, j] = np.bincount(past, rise[:, j], L + 1)[:L]
        steps[:, 2, j] = np.bincount(inner, np.r_[b[:, j], -b[:, j]], L)
        steps[:, 3, j] = np.bincount(inner, np.r_[-b[:, j] * t0[wide], b[:, j] * t0[wide]], L)
    sums = _accumulate(np.add, steps.reshape(L, 4 * m), group_of).reshape(L, 4, m)
    inside = levels[:, None] * sums[:, 2] + sums[:, 3]
    # narrow ones: each level inside, as the segment's own interpolation
    few = narrow & ~jump
    count = np.maximum(i1[few] - i0[few] - 1, 0)
    each = np.repeat(np.arange(int(few.sum())), count)
    at = np.repeat(i0[few] + 1 - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    s = (levels[at] - t0[few][each]) / (t1 - t0)[few][each]
    np.add.at(inside, at, s[:, None] * rise[few][each])
    base = np.zeros((len(groups) and int(groups.max()) + 1, m))
    first = np.flatnonzero(np.r_[True, curves.node[1:] != curves.node[:-1]]) if len(theta) else np.zeros(0, np.intp)
    np.add.at(base, owner[first], A[first])
    jumps = np.zeros(L, bool)
    jumps[i0[jump]] = True
    lev = np.repeat(np.arange(L), np.where(jumps, 2, 1))
    side = np.r_[False, lev[1:] == lev[:-1]][: len(lev)]
    full = sums[lev, 1]  # the whole rises below a level, and from above it where a child jumps
    full[side] = sums[lev[side], 0]
    uses = base[group_of[lev]] + full + inside[lev]
    return _Paths(uses, group_of[lev], np.full(len(lev), np.nan), lev, side, levels)


#: a segment narrower than this share of its end level is evaluated level by level in a merge
_NARROW = 1e-3


# -- task counts, where an event needs them -------------------------------------------------------


def _tasks_at(
    tree: _Tree, paths: list[_Paths], curves: list[_Curves], points: list[int], weights: list[float]
) -> _Floats:
    """Every leaf's task count at ``sum weights[i] * X[points[i]]`` on the root's path: a point of a
    group's path is the sum of its children's at one level, and a point of a curve a point between
    two of its path's, so the combination is carried down the tree, a few points a node, a
    generation at a time."""
    out = np.zeros(tree.n)
    at, w = np.asarray(points, np.intp), np.asarray(weights, float)
    for d, gen in enumerate(tree.gens):
        path = paths[d]
        leaf = path.lev[at] < 0
        np.add.at(out, gen.leaf[path.node[at[leaf]]], w[leaf] * path.tasks[at[leaf]])
        if d + 1 == len(tree.gens):
            break
        at, w = _down(path, at[~leaf], w[~leaf], gen, curves[d + 1], len(tree.gens[d + 1].names), len(paths[d + 1].A))
    return out


def _down(
    path: _Paths, at: _Ints, w: _Floats, gen: _Generation, child: _Curves, nodes: int, size: int
) -> tuple[_Ints, _Floats]:
    """The combination of a group's path points ``at`` (weights ``w``) as its children's path
    points: each child's curve at the point's level, from below or from above (the first point of
    a jump at the level from below, the last from above), then its curve points on its path."""
    v = path.node[at]
    count = gen.children[v]
    c = np.repeat(gen.first_child[v], count) + np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    level, above, w = np.repeat(path.levels[path.lev[at]], count), np.repeat(path.above[at], count), np.repeat(w, count)
    theta = child.theta
    first = _starts(child.node, nodes)
    starts, sizes = first[c], np.r_[first[1:], len(theta)][c] - first[c]
    k = _search(theta, starts, starts + sizes, level, above) - 1
    k = np.where(~above & (level <= theta[starts]), starts, k)
    last = k >= starts + sizes - 1
    k = np.where(last, starts + sizes - 1, k)
    nxt = np.minimum(k + 1, len(theta) - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(last | (~above & (level <= theta[starts])), 0.0, (level - theta[k]) / (theta[nxt] - theta[k]))
    s = np.where(s > 0, s, 0.0)
    # a point reached twice has its weights summed: on the curve, then on the path (as the walk did)
    ks, ws = _summed(np.r_[k, nxt[s > 0]], np.r_[w * (1.0 - s), (w * s)[s > 0]], len(theta))
    q, f = child.seg[ks], child.frac[ks]
    return _summed(np.r_[q, q[f > 0] + 1], np.r_[ws * (1.0 - f), (ws * f)[f > 0]], size)


def _summed(at: _Ints, weights: _Floats, size: int) -> tuple[_Ints, _Floats]:
    """The points ``at`` (of ``size``) reached with a weight, each once with its weights summed."""
    summed: _Floats = np.bincount(at, weights, size).astype(np.float64, copy=False)
    points: _Ints = np.flatnonzero(summed > 0)
    return points, summed[points]


def _search(theta: _Floats, lo: _Ints, hi: _Ints, level: _Floats, right: NDArray[np.bool_]) -> _Ints:
    """``np.searchsorted`` of each ``level`` in its own run ``theta[lo:hi]`` (sorted), from the
    right where ``right``: a bisection of every run at once, ``O(log K)`` steps."""
    lo, hi = lo.copy(), hi.copy()
    for _ in range(int(np.max(hi - lo, initial=0)).bit_length()):
        mid = (lo + hi) // 2
        at = theta[np.minimum(mid, len(theta) - 1)]
        up = (lo < hi) & np.where(right, at <= level, at < level)
        hi = np.where((lo < hi) & ~up, mid, hi)
        lo = np.where(up, mid + 1, lo)
    return lo


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
    who = [v for v in (*tree.q.groups, *tree.users) if tree.guarantee(v)[j] > 0 and tree.asks_of(v)[j]]
    raise CaseError(
        f"guarantee: the guarantees of queues {', '.join(who)} need {_amount(need[j])} {tree.q.resources[j]}, "
        f"capacity {_amount(tree.R[j])}"
    )


def _amount(value: float) -> str:
    """An amount of a refusal, to six digits of its shortest decimal: a sum that lands an ulp off
    a tie (1055.9450000000002 against 1055.945) is worded as the sum of the same terms in any order."""
    return f"{shortest(value):.6g}"


__all__ = ["FluidResult", "fluid_hdrf"]
