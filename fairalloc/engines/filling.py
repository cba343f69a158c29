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


# -- exact certificate --------------------------------------------------------------------------


def bottleneck_certificate(
    demand: Sequence[Sequence[_Number]],
    capacity: Sequence[_Number],
    key: Sequence[_Number],
    tasks: Sequence[_Number],
    bound: Sequence[_Number | None] | None = None,
) -> bool:
    """Decide *exactly* whether ``tasks`` is the max-min fair allocation on shares ``key * x``.

    All arguments may hold :class:`fractions.Fraction` values (then the answer is exact) or floats.
    Feasible, and every user either sits at her bound or demands a saturated resource ``j`` on
    which her share is the largest among the users demanding ``j``.
    """
    n, m = len(demand), len(capacity)
    used = [sum(tasks[i] * demand[i][j] for i in range(n)) for j in range(m)]
    if any(t < 0 for t in tasks) or any(used[j] > capacity[j] for j in range(m)):
        return False
    if bound is not None and any(b is not None and t > b for t, b in zip(tasks, bound)):
        return False
    share = [key[i] * tasks[i] for i in range(n)]
    saturated = [used[j] == capacity[j] for j in range(m)]
    top = [max((share[i] for i in range(n) if demand[i][j] > 0), default=None) for j in range(m)]
    for i in range(n):
        if bound is not None and bound[i] is not None and tasks[i] == bound[i]:
            continue
        if not any(saturated[j] and demand[i][j] > 0 and share[i] == top[j] for j in range(m)):
            return False
    return True


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
