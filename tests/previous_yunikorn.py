"""The fluid filling of ``yunikorn-fair`` as it was at commit 67d95780b050f820062e6e4721ec000a5f9a1f0b,
kept as the oracle for the fast one (``tests/test_fast_yunikorn.py``): ``_Shape``, ``_Tree``,
``_Fluid`` and their helpers, verbatim from ``fairalloc/models/yunikorn_fair.py`` (its docstring has
the semantics and the sources read) but for the key of the shape kept with the tree, its own so that
the two never share one.  Not collected by pytest; :func:`entitlement` is the entry point.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of
from fairalloc.core.tolerances import SATURATION
from fairalloc.models.yunikorn_fair import current_priority, fair_max


def entitlement(instance: Instance, priority_first: bool) -> np.ndarray:
    """``YuniKornFair.entitlement``'s bundles as they were computed: ``(n, m)``."""
    instance.scalar_weights("yunikorn-fair")
    x, _ = _Fluid(instance, priority_first).fill()
    return x[:, None] * instance.demand


class _Shape:
    """What the filling reads of a queue tree and a capacity, whatever the demands: every node's
    leaves, fair max, share denominators and caps.  Kept per tree (:func:`_shape_of`): the
    verifier solves hundreds of reports of one instance, and building this took a tenth of each."""

    def __init__(self, q: Queues, users: list[str], R: np.ndarray) -> None:
        self.index = {u: i for i, u in enumerate(users)}
        fm = fair_max(q, R)
        self.guarantee = {v: np.asarray(q.guarantee[v]) for v in fm}
        self.fair_max = fm
        self.under = {v: np.array([self.index[u] for u in q.leaves(v)], dtype=int) for v in q.groups}
        self.under.update({u: np.array([i]) for u, i in self.index.items()})
        # caps: (leaves under, limit vector) of every node with a limit, and the root's capacity
        self.caps = [(np.arange(len(users)), R)]
        self.caps += [(self.under[v], np.asarray(q.limit[v])) for v in fm if np.isfinite(q.limit[v]).any()]
        self.member = np.zeros((len(self.caps), len(users)), dtype=bool)  #: (caps, n): the leaves under each cap
        for k, (leaves, _) in enumerate(self.caps):
            self.member[k, leaves] = True
        self.finite = np.array([np.isfinite(cap) for _, cap in self.caps])  #: (caps, m)

        # fair_share's arithmetic, precomputed per node: 1 / d_j where d_j > 0, and where d_j <= 0
        self.inverse: dict[str, np.ndarray] = {}
        self.zero: dict[str, np.ndarray] = {}
        denominators: dict[str, np.ndarray] = {}
        for v in fm:
            denominators[v] = d = np.where(np.isnan(self.guarantee[v]), fm[v], self.guarantee[v])
            self.inverse[v] = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
            self.zero[v] = d <= 0
        self.leaf_d = np.array([denominators[u] for u in users]).reshape(len(users), len(R))  #: (n, m)
        self.priorities: dict[bytes, dict[str, float]] = {}  #: current_priority per set of active leaves


def _shape_of(q: Queues, users: list[str], R: np.ndarray) -> _Shape:
    """The :class:`_Shape` of a queue tree, capacity and users, kept with the tree."""
    return q.memo("previous-yunikorn-fair", (R.tobytes(), tuple(users)), lambda: _Shape(q, users, R))


class _Tree:
    """What the filling and the simulation read of an instance: the tree, the leaves' shapes and
    bounds, every node's share denominators, priorities and caps."""

    def __init__(self, instance: Instance, priority_first: bool) -> None:
        self.q = q = queues_of(instance)
        self.priority_first = priority_first
        self.users = list(instance.users)
        self.D = np.asarray(instance.demand, dtype=float)
        self.R = np.asarray(instance.capacity, dtype=float)
        self.n, self.m = self.D.shape
        shape = self.shape = _shape_of(q, self.users, self.R)
        self.index, self.guarantee, self.fair_max = shape.index, shape.guarantee, shape.fair_max
        self.under, self.caps, self.inverse, self.zero = shape.under, shape.caps, shape.inverse, shape.zero
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(self.D > 0, self.R / np.where(self.D > 0, self.D, 1.0), np.inf).min(axis=1)
        self.T = np.where((self.D > 0).any(axis=1), np.minimum(instance.bounds(), fit), 0.0)
        active = self.T > 0
        if (key := active.tobytes()) not in shape.priorities:
            shape.priorities[key] = current_priority(q, dict(zip(self.users, active.tolist())))
        self.prio = shape.priorities[key]

    def share(self, v: str, x: np.ndarray) -> float:
        """:func:`fair_share` of node ``v``'s subtree when the leaves hold ``x`` units."""
        leaves = self.under[v]
        bundle = x[leaves] @ self.D[leaves]
        s = float((bundle * self.inverse[v]).max(initial=0.0))
        return max(s, 1.0) if (self.zero[v] & (bundle > 0)).any() else s

    def growing_children(self, node: str | None, growable: np.ndarray) -> list[str]:
        """The children served at ``node``: those with a leaf that can grow, of the highest
        current priority among them when priority comes first."""
        kids = [c for c in self.q.children(node) if growable[self.under[c]].any()]
        if self.priority_first and kids:
            top = max(self.prio[c] for c in kids)
            kids = [c for c in kids if self.prio[c] == top]
        return kids


class _Fluid(_Tree):
    """The event-driven filling of :meth:`YuniKornFair.entitlement`."""

    def __init__(self, instance: Instance, priority_first: bool) -> None:
        super().__init__(instance, priority_first)
        d, asks = self.shape.leaf_d, self.D > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            self.k = np.where(asks & (d > 0), self.D / d, 0.0).max(axis=1)
        self._responses: dict[tuple[str, bytes, bytes], tuple[np.ndarray, np.ndarray]] = {}
        self._columns: dict[bytes, list[tuple[float, list[tuple[int, float]]]]] = {}
        self._terms: dict[tuple[int, int], list[tuple[int, float]]] = {}
        self._leaves_served: dict[tuple[str | None, bytes], tuple[np.ndarray, list[str]]] = {}
        self.jump = np.asarray((asks & (d <= 0)).any(axis=1))
        self.full = self.T * self.k  #: the level at which each leaf reaches its bound

    @cached_property
    def top(self) -> float:
        """A level above every share any node can reach (the tests' bisection of the level starts there)."""
        return 1.0 + max([self.share(v, self.T) for v in [*self.q.groups, *self.users]], default=0.0)

    def leaves_at(self, idx: np.ndarray, points: np.ndarray, x0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(K, len(idx))`` twice: the most of its shape each leaf ``idx`` holds at each share of
        ``points`` (at least ``x0``, at most ``T``; ``level / k`` between, 0 below 1 where the share
        jumps), its limits from below and its values."""
        k, full, p, jump = self.k[idx], self.full[idx], points[:, None], self.jump[idx]
        grows = np.where(k > 0, p / np.where(k > 0, k, 1.0), np.inf)
        high = self.T[idx]

        def held(reached: np.ndarray, below_jump: np.ndarray) -> np.ndarray:
            # compared with the knot T k itself: (T k) / k may fall short of T
            most = np.where(jump & below_jump, 0.0, np.where(reached, np.inf, grows))
            return np.minimum(high, np.maximum(x0[idx], most))

        return held(p > full, p <= 1.0), held(p >= full, p < 1.0)

    def leaf_knots(self, idx: np.ndarray, x0: np.ndarray) -> list[np.ndarray]:
        """Where :meth:`leaves_at` bends or jumps: ``x0 k``, ``T k`` and 1 for a jumping share."""
        return [x0[idx] * self.k[idx], self.full[idx], np.where(self.jump[idx], 1.0, 0.0)]

    def response_of(self, v: str, x0: np.ndarray, growable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`response`, kept for the event (cleared by :meth:`fill` when ``x0`` changes)."""
        key = (v, x0.tobytes(), growable.tobytes())
        if key not in self._responses:
            self._responses[key] = self.response(v, x0, growable)
        return self._responses[key]

    def response(self, v: str, x0: np.ndarray, growable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(levels (K,), units (K, leaves under v))``: the knots of what group ``v``'s leaves hold
        when ``v``'s share is brought to a level (the largest allocation whose share is within it;
        right-continuous, two knots at one level where it jumps)."""
        points, left, right = self.children_at(v, x0, growable)
        knots: list[tuple[float, np.ndarray]] = []
        for p, a, b in zip(points, left, right):
            knots += [(p, b)] if np.array_equal(a, b) else [(p, a), (p, b)]
        return self.as_share_of(v, knots)

    def children_at(
        self, v: str | None, x0: np.ndarray, growable: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The children served at ``v`` (the root: ``None``) brought to a common share, at every
        knot of theirs: ``(points (K,), left limits (K, leaves), values (K, leaves))`` over the
        leaves under ``v``, which are linear in the share between two points (the others keep ``x0``)."""
        served, groups = self._served_leaves(v, growable)
        parts = [(self.under[g], *self.response_of(g, x0, growable)) for g in groups]
        points = _distinct(np.concatenate([[0.0], *self.leaf_knots(served, x0), *[p[1] for p in parts]]))
        left = np.empty((len(points), self.n))  # every leaf's column; those under v are returned
        left[:] = x0
        right = left.copy()
        left[:, served], right[:, served] = self.leaves_at(served, points, x0)
        for sub, levels, units in parts:
            left[:, sub], right[:, sub] = _left_at(levels, units, points), _right_at(levels, units, points)
        if v is None:
            return points, left, right
        return points, left[:, self.under[v]], right[:, self.under[v]]

    def _served_leaves(self, v: str | None, growable: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """The children served at ``v``: the leaves among them (indices) and the groups."""
        key = (v, growable.tobytes())
        if key not in self._leaves_served:
            served = self.growing_children(v, growable)
            leaves = np.array([self.index[c] for c in served if not self.q.is_group(c)], dtype=int)
            self._leaves_served[key] = leaves, [c for c in served if self.q.is_group(c)]
        return self._leaves_served[key]

    def as_share_of(self, v: str, knots: list[tuple[float, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        """Re-parametrise ``v``'s allocation from its children's level to ``v``'s own share."""
        leaves, inv, zero = self.under[v], self.inverse[v], self.zero[v]
        D = self.D[leaves]
        out: list[tuple[float, np.ndarray]] = [(self.share(v, self._full(v, knots[0][1])), knots[0][1])]
        for (pa, xa), (pb, xb) in zip(knots, knots[1:]):
            ba, db = xa @ D, (xb - xa) @ D
            if pa == pb:  # a jump: the share jumps too, the allocation waits below it
                out += [(self._s(ba + db, inv, zero), xa), (self._s(ba + db, inv, zero), xb)]
                continue
            cuts = {0.0, 1.0}
            lines = [(ba[j] * inv[j], db[j] * inv[j]) for j in range(len(inv)) if inv[j] > 0]
            lines += [(1.0, 0.0)] if zero.any() else []
            for a1, b1 in lines:  # where the largest line may change
                for a2, b2 in lines:
                    if b1 != b2 and 0 < (a2 - a1) / (b1 - b2) < 1:
                        cuts.add((a2 - a1) / (b1 - b2))
            starts = bool((zero & (ba <= 0) & (db > 0)).any())  # the share jumps to 1 just after t = 0
            if starts and self._s(ba, inv, zero) < 1.0:
                out.append((1.0, xa))
            for t in sorted(cuts):
                b = ba + t * db
                out.append((max(self._s(b, inv, zero), 1.0 if starts else 0.0), xa + t * (xb - xa)))
        levels = np.maximum.accumulate(np.array([lv for lv, _ in out]))
        return levels, np.array([u for _, u in out])

    def _full(self, v: str, units: np.ndarray) -> np.ndarray:
        x = np.zeros(self.n)
        x[self.under[v]] = units
        return x

    @staticmethod
    def _s(bundle: np.ndarray, inv: np.ndarray, zero: np.ndarray) -> float:
        s = float((bundle * inv).max(initial=0.0))
        return max(s, 1.0) if (zero & (bundle > 0)).any() else s

    def over(self, x: np.ndarray, x0: np.ndarray, growable: np.ndarray) -> bool:
        """An event has happened at ``x``: a growing leaf at its bound, or a cap exceeded."""
        if (growable & (x >= self.T) & (x0 < self.T)).any():
            return True
        units = x.tolist()
        return any(_load(units, terms) > bound for bound, terms in self._cap_columns(growable))

    def _cap_columns(self, growable: np.ndarray) -> list[tuple[float, list[tuple[int, float]]]]:
        """The caps in play, as plain floats: ``(cap_j, [(leaf, D_leaf_j)])`` for each limited
        resource ``j`` of a cap that a growable leaf under it requests (kept per ``growable``).
        :meth:`over` runs at every step of an event's search, :meth:`step` and :meth:`freeze` at
        every event, where numpy's per-call cost on a few numbers was most of the time."""
        key = growable.tobytes()
        if key not in self._columns:
            self._columns[key] = [
                (float(self.caps[k][1][j]), self._column(k, j)) for k, j in zip(*np.nonzero(self._asks(growable)))
            ]
        return self._columns[key]

    def _column(self, k: int, j: int) -> list[tuple[int, float]]:
        """``[(leaf, D_leaf_j)]`` under cap ``k`` (the same whatever grows)."""
        if (k, j) not in self._terms:
            leaves = self.caps[k][0]
            self._terms[k, j] = list(zip(leaves.tolist(), self.D[leaves, j].tolist()))
        return self._terms[k, j]

    def _asks(self, growable: np.ndarray) -> np.ndarray:
        """``(caps, m)``: the limited resources of each cap that a growable leaf under it requests."""
        under = self.shape.member & growable
        return (under[:, :, None] & (self.D > 0)).any(axis=1) & self.shape.finite

    def fill(self) -> tuple[np.ndarray, int]:
        x = np.zeros(self.n)
        growable = self.T > 0
        events = 0
        while growable.any() and events <= 4 * self.n + 8:
            events += 1
            x0 = x.copy()
            self._responses = {}
            x = self.step(*self.event(x0, growable), growable)
            growable = self.freeze(x, growable)
        return x, events

    def event(self, x0: np.ndarray, growable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Two allocations with the next event between them on one line: the holdings are linear
        between the root's knots (:meth:`children_at`) and :meth:`over` is monotone in the level,
        so a bisection over the knots finds the first one at or past the event; the event is on
        the segment up to it, or at its jump (then :meth:`step` shares the jump)."""
        _, left, right = self.children_at(None, x0, growable)
        lo, hi = -1, len(right) - 1  # past the last knot nothing changes: as if over there
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if self.over(right[mid], x0, growable) else (mid, hi)
        if hi == 0 or not self.over(left[hi], x0, growable):
            return left[hi], right[hi]
        return right[lo], left[hi]

    def step(self, x_lo: np.ndarray, x_hi: np.ndarray, growable: np.ndarray) -> np.ndarray:
        """The point between ``x_lo`` and ``x_hi`` where the first cap binds (all of the way if
        none does): across a jump of the allocation (a share that jumps) the queues jumping
        share what is left in proportion."""
        theta = 1.0
        lo_units, hi_units = x_lo.tolist(), x_hi.tolist()
        for bound, terms in self._cap_columns(growable):
            if (hi := _load(hi_units, terms)) > bound:
                lo = _load(lo_units, terms)
                theta = min(theta, (bound - lo) / (hi - lo) if hi != lo else -math.inf)  # over already: stay
        return np.minimum(x_lo + max(theta, 0.0) * (x_hi - x_lo), self.T)

    def freeze(self, x: np.ndarray, growable: np.ndarray) -> np.ndarray:
        """Growable leaves that stop at ``x``: at their bound, or requesting a saturated resource
        under a saturated cap."""
        done = growable & (x >= self.T * (1 - SATURATION))
        units = x.tolist()
        for bound, terms in self._cap_columns(growable):
            if _load(units, terms) >= bound * (1 - SATURATION):
                done[[i for i, d in terms if d > 0]] = True
        if not (done & growable).any():  # numerical safety: the queue closest to a stop stops
            done[np.flatnonzero(growable)[np.argmax(x[growable] / self.T[growable])]] = True
        return growable & ~done


def _load(units: list[float], terms: list[tuple[int, float]]) -> float:
    """``sum(units[i] * d for i, d in terms)`` added in order, as numpy's ``sum(axis=0)`` adds the
    rows of ``x[leaves, None] * D`` (the same floats)."""
    (i, d), *rest = terms
    load = units[i] * d
    for i, d in rest:
        load += units[i] * d
    return load


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` for values without NaN, without its general machinery (the event
    search calls it on a few numbers at every knot)."""
    values = np.sort(values)
    keep = np.empty(len(values), dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _right_at(levels: np.ndarray, units: np.ndarray, points: np.ndarray) -> np.ndarray:
    """A piecewise-linear function given by knots, right-continuous, constant beyond its ends, at
    each of ``points`` (rows)."""
    k = np.searchsorted(levels, points, side="right") - 1
    return _between(levels, units, points, k, (k >= 0) & (k < len(levels) - 1))


def _left_at(levels: np.ndarray, units: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Its limits from the left at ``points``."""
    k = np.searchsorted(levels, points, side="left")
    return _between(levels, units, points, k - 1, (k > 0) & (k < len(levels)))


def _between(levels: np.ndarray, units: np.ndarray, points: np.ndarray, k: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """``units`` at ``points``: on the segment from knot ``k`` where ``inner`` (``levels[k] <= point
    <= levels[k + 1]``, the two apart), else at the nearest end."""
    out = units[np.minimum(np.maximum(k, 0), len(levels) - 1)]  # np.clip's wrapper costs more
    if inner.any():
        a = k[inner]
        t = (points[inner] - levels[a]) / (levels[a + 1] - levels[a])
        out[inner] = units[a] + t[:, None] * (units[a + 1] - units[a])
    return out
