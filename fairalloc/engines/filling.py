"""Progressive filling: one engine for every max-min mechanism over a linear share key.

A user's share is ``key_i * x_i`` (DRF: weighted per-task dominant share; Asset Fairness: the
weighted sum of per-task shares).  Progressive filling raises every *active* user's share at the
same rate (``x_i = t / key_i``).  When a resource saturates, every active user that demands it
(``D_ij > 0``) is frozen; a user that reaches her task bound ``T_i`` is frozen too.  Users that
demand none of the saturated resources go on (Appendix A.1 of the DRF paper; the zero-demand
generalisation of Parkes, Procaccia and Shah).

The numpy engine runs at most ``m + 1`` rounds, each a handful of vectorised passes over the
active users; task bounds are handled inside a round by sorting the users' bound levels
``T_i * key_i`` and locating the first resource to saturate with prefix sums.

:func:`bottleneck_certificate` is the independent check: an allocation is the max-min fair one
iff it is feasible and every user has a *bottleneck* (she is at her bound, or she demands a
saturated resource on which no other user of it has a larger share).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import SupportsFloat

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.tolerances import SATURATION

_Floats = NDArray[np.float64]
#: :func:`bottleneck_certificate` runs on exact fractions or on floats alike
_Number = Fraction | float


@dataclass
class FillingResult:
    tasks: _Floats
    rounds: int
    #: resources in the order they saturated (indices), one list per round
    saturated: list[list[int]]


def progressive_filling(
    demand: _Floats, capacity: _Floats, key: _Floats, bound: _Floats | None = None
) -> FillingResult:
    """Max-min fair task counts for shares ``key * x`` under ``demand @ x <= capacity``.

    >>> D = np.array([[1., 4.], [3., 1.]]); R = np.array([9., 18.])
    >>> progressive_filling(D, R, (D / R).max(axis=1)).tasks.tolist()
    [3.0, 2.0]
    """
    n, m = demand.shape
    x = np.zeros(n)
    inv = 1.0 / key
    frozen_use = np.zeros(m)  # resources taken by frozen users
    active = np.arange(n)
    if bound is not None and np.isposinf(bound).all():
        bound = None
    open_res = capacity > 0  # resources that have not saturated
    saturated_log: list[list[int]] = []
    rounds = 0
    while active.size:
        rounds += 1
        whole = active.size == n  # first round: no copies of the (n, m) array
        Da = demand if whole else demand[active]
        inv_a = inv if whole else inv[active]
        rate = inv_a @ Da  # resource use per unit of share level
        room = capacity - frozen_use
        if bound is None:
            t, capped = _saturation_level(room, rate, open_res), np.zeros(active.size, bool)
        else:
            t, capped = _level_with_bounds(Da, inv_a, bound[active] * key[active], bound[active], room, rate, open_res)
        if np.isinf(t):  # only bounds remain: every active user is capped
            # without bounds some open resource is in use (validated demands), so t is finite
            assert bound is not None, "progressive filling: no resource to saturate and no bound"
            x[active] = bound[active]
            break
        xa = t * inv_a if bound is None else np.where(capped, bound[active], t * inv_a)
        x[active] = xa
        use = frozen_use + xa @ Da
        newly = open_res & (use >= capacity * (1 - SATURATION))
        saturated_log.append([int(j) for j in np.flatnonzero(newly)])
        open_res &= ~newly
        # one matrix-vector pass each (demands are >= 0, so a positive sum means "demands one")
        stop = capped | (Da @ newly.astype(float) > 0) if newly.any() else capped
        if stop.all() or not stop.any():  # done (or a numerical corner where nothing froze)
            break
        frozen_use += np.where(stop, xa, 0.0) @ Da
        active = active[~stop]
    return FillingResult(x, rounds, saturated_log)


def _saturation_level(room: _Floats, rate: _Floats, open_res: NDArray[np.bool_]) -> float:
    """Smallest level ``t`` at which an open resource fills (``inf`` if none is used)."""
    using = open_res & (rate > 0)
    if not using.any():
        return np.inf
    return float(np.min(np.maximum(room[using], 0.0) / rate[using]))


def _level_with_bounds(
    Da: _Floats,
    inv: _Floats,
    level_cap: _Floats,
    bound: _Floats,
    room: _Floats,
    rate: _Floats,
    open_res: NDArray[np.bool_],
) -> tuple[float, NDArray[np.bool_]]:
    """Level at which the next resource saturates when users stop growing at their bounds.

    Sort users by the level ``T_i key_i`` at which they hit their bound.  Past the first ``k``
    of them the use of resource ``j`` is ``sum_{<=k} T_i D_ij + t * sum_{>k} D_ij / key_i``;
    prefix sums give it at every breakpoint, and the first breakpoint that overfills a resource
    brackets the saturation level.
    """
    order = np.argsort(level_cap, kind="stable")
    finite = np.isfinite(level_cap[order])
    order = order[finite]
    if order.size == 0:
        return _saturation_level(room, rate, open_res), np.zeros(Da.shape[0], bool)
    Ds = Da[order]
    capped_use = np.cumsum(bound[order, None] * Ds, axis=0)  # users 1..k capped
    gone_rate = np.cumsum(inv[order, None] * Ds, axis=0)
    levels = level_cap[order]
    use_at = capped_use + levels[:, None] * (rate - gone_rate)  # at breakpoint k
    over = (use_at > room * (1 + SATURATION)) & open_res
    hit = np.flatnonzero(over.any(axis=1))
    k = int(hit[0]) if hit.size else order.size  # users before k capped
    base_use = capped_use[k - 1] if k else np.zeros_like(room)
    base_rate = rate - (gone_rate[k - 1] if k else 0.0)
    t = _saturation_level(room - base_use, base_rate, open_res)
    if k == order.size and np.isinf(t):
        t = np.inf
    elif k < order.size:
        t = min(t, float(levels[k]))
    capped = np.zeros(Da.shape[0], bool)
    capped[order[levels <= t * (1 + SATURATION)]] = True
    return t, capped


# -- lower and upper bounds (queue guarantees and limits) ------------------------------------------


def progressive_filling_bounded(
    demand: _Floats, capacity: _Floats, key: _Floats, lower: _Floats, upper: _Floats
) -> FillingResult:
    """Max-min fair task counts for shares ``key * x`` under capacity and ``lower <= x <= upper``.

    At water level ``t`` an active user holds ``x_i(t) = clip(t / k_i, g_i, u_i)``: she stays at her
    floor ``g_i`` until the level reaches ``k_i g_i``, then grows with it, up to ``u_i``.  When a
    resource saturates, every active user demanding it is frozen where she is (at her floor, too:
    her share is then above the level, and growing her would take from a user at the level or at
    her own floor); a user at ``u_i`` is frozen.  The floors must fit (``lower @ demand <=
    capacity``, checked by the caller).  At most ``m + 1`` rounds: each ends at a saturation.

    >>> D = np.array([[1., 4.], [3., 1.]]); R = np.array([9., 18.]); k = (D / R).max(axis=1)
    >>> progressive_filling_bounded(D, R, k, np.array([0., 2.5]), np.array([np.inf, np.inf])).tasks.tolist()
    [1.5, 2.5]
    """
    n, m = demand.shape
    x = np.array(lower, dtype=float)
    frozen = np.zeros(n, bool)
    open_res = capacity > 0
    saturated_log: list[list[int]] = []
    rounds = 0
    while not frozen.all():
        rounds += 1
        act = np.flatnonzero(~frozen)
        Da = demand[act]
        room = capacity - x[frozen] @ demand[frozen]
        t, j = _bounded_level(Da, key[act], lower[act], upper[act], room, open_res)
        if np.isinf(t):  # no open resource can fill: every active user goes to her bound
            x[act] = upper[act]
            break
        xa = np.clip(t / key[act], lower[act], upper[act])
        x[act] = xa
        use = x @ demand
        newly = open_res & (use >= capacity * (1 - SATURATION))
        newly[j] = True  # the resource that bounded the level, whatever the rounding
        saturated_log.append([int(k) for k in np.flatnonzero(newly)])
        open_res &= ~newly
        stop = (xa >= upper[act]) | (Da @ newly.astype(float) > 0)
        frozen[act[stop]] = True
    return FillingResult(x, rounds, saturated_log)


def _bounded_level(
    Da: _Floats, key: _Floats, lower: _Floats, upper: _Floats, room: _Floats, open_res: NDArray[np.bool_]
) -> tuple[float, int]:
    """``(t, j)``: the smallest level at which an open resource ``j`` fills, users at ``clip(t / k_i,
    g_i, u_i)``; ``(inf, -1)`` if none does.  The use of resource ``j`` is piecewise linear in ``t``:
    ``sum_i D_ij g_i + sum_{a_i < t} r_ij (t - a_i) - sum_{b_i < t} r_ij (t - b_i)`` with
    ``a_i = k_i g_i``, ``b_i = k_i u_i``, ``r_ij = D_ij / k_i``; prefix sums over the sorted ``a``
    and ``b`` give it at every breakpoint, and the first breakpoint past ``room`` brackets ``t``."""
    r = Da / key[:, None]
    a, b = key * lower, key * upper
    base = lower @ Da
    a_order, b_order = np.argsort(a, kind="stable"), np.argsort(b, kind="stable")
    finite_b = np.isfinite(b[b_order])
    b_order = b_order[finite_b]
    a_sorted, b_sorted = a[a_order], b[b_order]
    zero = np.zeros((1, Da.shape[1]))
    Sa = np.vstack([zero, np.cumsum(r[a_order], axis=0)])
    Wa = np.vstack([zero, np.cumsum(r[a_order] * a_sorted[:, None], axis=0)])
    Sb = np.vstack([zero, np.cumsum(r[b_order], axis=0)])
    Wb = np.vstack([zero, np.cumsum(r[b_order] * b_sorted[:, None], axis=0)])
    points = np.unique(np.concatenate([[0.0], a_sorted, b_sorted]))
    ka, kb = np.searchsorted(a_sorted, points, "left"), np.searchsorted(b_sorted, points, "left")
    use = base + points[:, None] * (Sa[ka] - Sb[kb]) - (Wa[ka] - Wb[kb])  # at each breakpoint
    over = ((use > room) & open_res).any(axis=1)
    if over.any() and over[0]:  # the floors alone fill a resource (at the tolerance of the caller's check)
        return 0.0, int(np.argmax(np.where(open_res, use[0] - room, -np.inf)))
    if over.any():
        k = int(np.argmax(over))
        t0, u0 = points[k - 1], use[k - 1]
        slope = (use[k] - u0) / (points[k] - t0)
    else:  # past the last breakpoint: every floor passed, every finite bound reached
        t0, u0 = points[-1], use[-1]
        slope = Sa[-1] - Sb[-1]
    grows = open_res & (slope > 0)
    if not grows.any():
        return np.inf, -1
    with np.errstate(divide="ignore", invalid="ignore"):
        level = np.where(grows, t0 + np.maximum(room - u0, 0.0) / np.where(grows, slope, 1.0), np.inf)
    j = int(np.argmin(level))
    return float(level[j]), j


# -- exact certificate --------------------------------------------------------------------------


def bottleneck_certificate(
    demand: Sequence[Sequence[_Number]],
    capacity: Sequence[_Number],
    key: Sequence[_Number],
    tasks: Sequence[_Number],
    bound: Sequence[_Number | None] | None = None,
    lower: Sequence[_Number] | None = None,
) -> bool:
    """Decide *exactly* whether ``tasks`` is the max-min fair allocation on shares ``key * x``.

    All arguments may hold :class:`fractions.Fraction` values (then the answer is exact) or floats.
    Feasible, and every user either sits at her bound or demands a saturated resource ``j`` on
    which her share is the largest among the users demanding ``j``.

    With lower bounds ``lower`` (queue guarantees): feasible also means ``tasks >= lower``, and the
    largest share on ``j`` is taken among the users of ``j`` *above* their lower bound (only they
    could give up some of ``j``).  Then no user can grow without shrinking one whose share is no
    larger: the max-min fair allocation of the bounded set, which is its leximin.
    """
    n, m = len(demand), len(capacity)
    used = [sum(tasks[i] * demand[i][j] for i in range(n)) for j in range(m)]
    if any(t < 0 for t in tasks) or any(used[j] > capacity[j] for j in range(m)):
        return False
    if bound is not None and any(b is not None and t > b for t, b in zip(tasks, bound)):
        return False
    if lower is not None and any(t < g for t, g in zip(tasks, lower)):
        return False
    share = [key[i] * tasks[i] for i in range(n)]
    saturated = [used[j] == capacity[j] for j in range(m)]
    movable = [lower is None or tasks[i] > lower[i] for i in range(n)]
    top = [max((share[i] for i in range(n) if demand[i][j] > 0 and movable[i]), default=None) for j in range(m)]
    for i in range(n):
        if bound is not None and bound[i] is not None and tasks[i] == bound[i]:
            continue
        if not any(saturated[j] and demand[i][j] > 0 and _at_least(share[i], top[j]) for j in range(m)):
            return False
    return True


def _at_least(share: _Number, top: _Number | None) -> bool:
    """``share >= top``; no top (no user of the resource can give any of it up): true."""
    return top is None or share >= top


def exact_key(values: Iterable[SupportsFloat]) -> list[Fraction]:
    """Floats as the short decimal fractions a person typed (``0.1`` -> ``1/10``)."""
    return [Fraction(repr(float(v))) for v in values]


def drf_shares(demands: Sequence[Sequence[float]], bounds: Sequence[float]) -> list[float]:
    """Continuous DRF (progressive filling) dominant shares on a cluster of capacity 1 per resource.

    ``demands``: per owner a tuple of per-task demands as fractions of the cluster; ``bounds``:
    per owner the maximum number of tasks (her remaining work). Owners demanding nothing get 0.

    >>> [round(s, 4) for s in drf_shares([(1/9, 4/18), (3/9, 1/18)], [100, 100])]   # section 4.1
    [0.6667, 0.6667]
    """
    n = len(demands)
    m = len(demands[0]) if n else 0
    mu = [max(d) for d in demands]
    share = [0.0] * n
    alive = [mu[i] > 0 and bounds[i] > 0 for i in range(n)]
    left = sum(alive)
    # O(n log n + n m): owners leave at their bound level (sorted once) or when a resource they
    # demand saturates (each resource once); the rates drop as they leave
    level = [bounds[i] * mu[i] if alive[i] else 0.0 for i in range(n)]
    order = sorted((i for i in range(n) if alive[i]), key=lambda i: level[i])
    users_of = [[i for i in range(n) if alive[i] and demands[i][j] > 0] for j in range(m)]
    count = [len(users_of[j]) for j in range(m)]
    rate = [sum(demands[i][j] / mu[i] for i in users_of[j]) for j in range(m)]
    used = [0.0] * m
    full = [False] * m
    s = 0.0
    ptr = 0

    def leave(i: int) -> None:
        nonlocal left
        share[i] = s
        alive[i] = False
        left -= 1
        for j in range(m):
            if demands[i][j] > 0:
                count[j] -= 1
                rate[j] = rate[j] - demands[i][j] / mu[i] if count[j] else 0.0

    while left:
        while not alive[order[ptr]]:
            ptr += 1
        ds = level[order[ptr]] - s
        for j in range(m):
            if rate[j] > 0:
                ds = min(ds, (1.0 - used[j]) / rate[j])
        ds = max(ds, 0.0)
        s += ds
        used = [used[j] + ds * rate[j] for j in range(m)]
        for j in range(m):
            if not full[j] and used[j] >= 1.0 - 1e-12:
                full[j] = True
                for i in users_of[j]:
                    if alive[i]:
                        leave(i)
        while ptr < len(order) and level[order[ptr]] <= s + 1e-12:
            if alive[order[ptr]]:
                leave(order[ptr])
            ptr += 1
    return share
