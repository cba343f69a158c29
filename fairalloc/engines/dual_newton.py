"""Alpha-fair allocation by projected Newton on the dual in ``m`` variables (CEEI is alpha = 1).

docs/formulations.md sections 3 and 5.  For ``0 < alpha < inf`` the alpha-fair program is::

    max  sum_i w_i U_alpha(c_i x_i)   s.t.  sum_i x_i D_ij <= R_j,   0 <= x_i <= T_i
    U_alpha(z) = z^(1-alpha) / (1-alpha)   (alpha != 1),      log z   (alpha = 1)

with weights ``w_i > 0``, utility per task ``c_i > 0`` and task bounds ``T_i`` in ``(0, inf]``.
Pricing the capacities at ``p >= 0`` separates the users: with ``s = p . D_i`` (the price of
her task) and ``k_i = w_i c_i^(1-alpha)``, user ``i`` buys::

    x_i(s) = min(T_i, (k_i / s)^(1/alpha))          (T_i where s = 0)

(``w_i U'(c_i x) c_i = k_i x^-alpha = s``), and the dual in ``m`` variables is convex and
continuously differentiable (its Hessian jumps where a user reaches her bound)::

    min_{p >= 0}  p . R + sum_i phi_i(p . D_i),   phi_i(s) = max_{0 <= x <= T_i} w_i U_alpha(c_i x) - x s
    phi_i(s) = x_i s alpha / (1 - alpha)          uncapped, alpha != 1
             = w_i log(c_i w_i / s) - w_i         uncapped, alpha = 1    (x_i = w_i / s)
             = w_i U_alpha(c_i T_i) - T_i s       capped (x_i = T_i)
    gradient  R - sum_i x_i D_i                   (phi_i'(s) = -x_i, the envelope theorem)
    Hessian   sum_{i uncapped} D_i D_i^T x_i / (alpha s_i)      (x_i' = -x_i / (alpha s))

(uncapped, ``w_i U_alpha(c_i x) = k_i x^(1-alpha) / (1-alpha) = x s / (1-alpha)``).

An unbounded user facing the price 0 would take infinitely many tasks; the dual counts such
prices as ``+inf`` (for ``alpha > 1`` its true value there is finite, but its slope is
infinite, so no optimum lies there).  At the optimum ``p`` are the capacity multipliers:
``p_j`` is the marginal welfare of a unit of resource ``j``; for alpha = 1 they are CEEI's
market-clearing prices.  :func:`alpha_fair_dual` solves this dual by projected Newton
(``O(n m^2)`` per iteration) and reads the allocation off the prices.

Numerical range.  Prices scale like ``w c (c x)^-alpha``: ``n^alpha`` with ``n`` users near
an equal split, far beyond float range at ``alpha = 50``.  So ``k_i`` is kept as ``log k_i``,
``x_i = exp((log k_i - log s) / alpha)``, and the welfare is rescaled by a power of two that
puts the starting prices near 1.  Within one instance prices may still lie hundreds of orders
of magnitude apart (a user alone on a resource, at large alpha), and the search is built for
that: the starting prices come from a guessed allocation (:func:`_price_guess`, scaled on
their ray in closed form by :func:`_ray_scale`), the Newton system is solved in the Jacobi
scaling, the line search compares the dual through its change summed user by user (not as a
difference of two values, which would be rounding noise), and prices that would leave a user
with nothing to pay fall geometrically instead of to zero.

Measured on random instances of up to 5 users and 4 resources (integer demands, some zero,
some users bounded, scalar weights; 6,000 to 12,000 per alpha): alpha from 0.05 to 100 converges on
all, in a median of 6 to 7 iterations (99th percentile 12 to 16 for alpha in [0.05, 20], 22
at 50, 31 at 100); at 0.02, 1 in 12,000 does not, at 200 about 1 in 200: a
:class:`SolverError`.  The reachable KKT residual grows as ``1 / alpha`` below 1 (the
response ``s^(-1/alpha)`` magnifies rounding), and the tolerance with it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairalloc.core.errors import SolverError
from fairalloc.core.limits import DUAL_NEWTON_ITERATIONS, LINE_SEARCH_STEPS

_Floats = NDArray[np.float64]
_Mask = NDArray[np.bool_]

#: Newton stops when the projected gradient, relative to capacity, is below this.
GRADIENT_TOL = 1e-13
#: ... or below this when the objective stops changing in floating point (degenerate prices).
STALL_TOL = 1e-9
#: Newton iterations before giving up (:data:`fairalloc.core.limits.DUAL_NEWTON_ITERATIONS`).
MAX_ITER = DUAL_NEWTON_ITERATIONS
#: Where a full step would leave an unbounded user with price 0, prices fall by this factor
#: instead (and by more at large alpha, so her tasks may double: ``2**-alpha``).
SHRINK = 1e-3


def alpha_fair_dual(
    D: ArrayLike,
    R: ArrayLike,
    w: ArrayLike,
    c: ArrayLike,
    T: ArrayLike,
    alpha: float,
    *,
    max_iter: int = MAX_ITER,
    name: str = "alpha-fair",
    check: bool = True,
) -> tuple[_Floats, _Floats, int]:
    """Solve the alpha-fair program exactly through its dual: ``(tasks, prices, iterations)``.

    ``D`` ``(n, m)`` demands per task, ``R`` ``(m,)`` capacities, ``w`` ``(n,)`` weights > 0,
    ``c`` ``(n,)`` utility per task > 0, ``T`` ``(n,)`` task bounds ``>= 0`` (``inf`` for
    none), ``0 < alpha < inf``.  Maximises ``sum_i w_i U_alpha(c_i x_i)`` subject to
    ``x @ D <= R`` and ``0 <= x <= T`` (see the module docstring).

    * ``tasks`` ``(n,)``: the optimal ``x``.  Users with ``T_i = 0`` get 0 and take no part
      (their utility would be ``-inf`` or 0 whatever the others get); rounding never makes
      ``x @ D`` exceed ``R`` (an ulp overshoot is scaled back).
    * ``prices`` ``(m,)``: the capacity multipliers, in welfare per unit of resource; 0 for a
      resource no live user demands.  With alpha = 1 they are CEEI's market-clearing prices
      (``x_i = w_i / (p . D_i)``).  At extreme alpha they may overflow to ``inf`` or underflow
      to 0 in float (the tasks, computed from rescaled prices, are not affected).
    * ``iterations``: Newton iterations (0 when nobody is live).

    ``c`` does not enter at alpha = 1 (``log c_i`` is a constant).  ``name`` starts the
    messages.  Raises :class:`fairalloc.SolverError` when the search stalls or does not
    converge in ``max_iter`` iterations, and ``ValueError`` for malformed arguments
    (``check=False`` skips the ``O(n m)`` checks of ``D``, for data an :class:`Instance`
    has validated already).

    Iterations measured on 1,000 users x 8 resources (demands ~ U(0.1, 1), capacity 30% of
    what everybody asks for, ``c`` the dominant share per task): 5 to 9 for alpha from 0.05
    to 200; 100,000 users: 4 to 7, in 35 to 75 ms.

    >>> D, R = [[1, 4], [3, 1]], [9, 18]
    >>> tasks, prices, _ = alpha_fair_dual(D, R, [1, 1], [1 / 4.5, 1 / 3], [np.inf, np.inf], 2)
    >>> tasks.round(4).tolist()
    [3.7279, 1.7574]
    >>> tasks, prices, _ = alpha_fair_dual(D, R, [1, 1], [1, 1], [np.inf, np.inf], 1)   # CEEI
    >>> (tasks * 11).round(12).tolist(), prices.round(6).tolist()
    ([45.0, 18.0], [0.2, 0.011111])
    """
    Da, Ra, wa, ca, Ta, alpha = _checked(D, R, w, c, T, alpha, check)
    n, m = Da.shape
    live = Ta > 0
    everyone = live.all()
    tasks, prices = np.zeros(n), np.zeros(m)
    if not live.any():
        return tasks, prices, 0
    if not everyone:
        Da, wa, ca, Ta = Da[live], wa[live], ca[live], Ta[live]
    # resources nobody demands carry price 0; D >= 0, so a column is zero where its sum is (one
    # matrix-vector product: a sixth of the time of any(axis=0), which casts every entry to bool)
    used_cols = np.ones(len(Da)) @ Da > 0
    if not used_cols.all():
        Da, Ra = Da[:, used_cols], Ra[used_cols]
    with np.errstate(all="ignore"):  # what an overflow spoils is not finite: refused below
        dual = _Dual(Da, Ra, wa, ca, Ta, alpha, name)
        if not np.all(np.isfinite(dual.p0)):
            raise SolverError(
                f"{name}: the dual Newton method found no starting prices in floating-point range "
                f"(the instance's numbers span too many orders of magnitude)"
            )
        p, iterations, x = _projected_newton(dual, max_iter)
    if not np.all(np.isfinite(x)):
        raise SolverError(
            f"{name}: the dual Newton method ended with task counts that are not finite numbers (numerical trouble)"
        )
    over = (x @ Da / Ra).max()  # rounding may overshoot by an ulp: scale back
    tasks[live] = x / over if over > 1 else x
    with np.errstate(over="ignore", under="ignore"):
        prices[used_cols] = np.ldexp(p, dual.shift)  # back from the rescaled welfare
    return tasks, prices, iterations


def _checked(
    D_in: ArrayLike, R_in: ArrayLike, w_in: ArrayLike, c_in: ArrayLike, T_in: ArrayLike, alpha: float, check: bool
) -> tuple[_Floats, _Floats, _Floats, _Floats, _Floats, float]:
    D, R = np.asarray(D_in, dtype=float), np.asarray(R_in, dtype=float)
    w, c, T = (np.asarray(v, dtype=float) for v in (w_in, c_in, T_in))
    if D.ndim != 2 or R.shape != (D.shape[1],) or any(v.shape != (D.shape[0],) for v in (w, c, T)):
        raise ValueError(
            f"alpha_fair_dual: shapes D {D.shape}, R {R.shape}, w {w.shape}, c {c.shape}, "
            f"T {T.shape}; expected (n, m), (m,), (n,), (n,), (n,)"
        )
    alpha = float(alpha)
    if not 0 < alpha < math.inf:
        raise ValueError(f"alpha_fair_dual: alpha must be positive and finite (got {alpha})")
    for field, v, positive in (("R", R, False), ("w", w, True), ("c", c, True), ("T", T, False)):
        if not np.all((v > 0 if positive else v >= 0) & (np.isfinite(v) | (field == "T"))):
            raise ValueError(
                f"alpha_fair_dual: {field} must be {'positive' if positive else 'non-negative'} "
                f"and finite{' or inf' if field == 'T' else ''} (and not nan)"
            )
    if check:
        live = T > 0
        if not np.all(np.isfinite(D) & (D >= 0)):
            raise ValueError("alpha_fair_dual: D must be non-negative and finite")
        if np.any(live & ~D.any(axis=1)):
            raise ValueError("alpha_fair_dual: a user with T_i > 0 demands nothing (her row of D is zero)")
        if np.any((R == 0) & D[live].any(axis=0)):
            raise ValueError("alpha_fair_dual: a resource of zero capacity is demanded")
    return D, R, w, c, T, alpha


def _price_guess(D: _Floats, R: _Floats, T: _Floats, logk: _Floats, alpha: float) -> _Floats:
    """Relative prices (``p . R = 1``) near the optimum's, for ``alpha != 1``.

    The prices of one instance may span hundreds of orders of magnitude (a user alone on a
    resource takes all of it; at ``alpha = 10`` her price is ``n^10`` times below the others').
    Guess the allocation: each resource split equally among the users demanding it, each user
    taking what her scarcest resource (her bottleneck) allows, within ``T``.  She would pay
    ``k_i x_i^-alpha`` a task for that; charge it to her bottleneck and average each resource's
    charges geometrically, weighted by the share of it each user takes.  A resource nobody
    is short of starts 1000 times below the cheapest charged one (it is likely free).
    """
    n, m = D.shape
    positive = D > 0
    crowd = positive.sum(axis=0)
    with np.errstate(divide="ignore"):
        room = np.where(positive, R / (np.maximum(crowd, 1) * np.where(positive, D, 1)), np.inf)
    neck = room.argmin(axis=1)
    split = room[np.arange(n), neck]
    x0 = np.minimum(T, split)
    log_task = logk - alpha * np.log(x0)
    short = split <= T  # the bottleneck binds before the bound
    if short.any():
        j, d = neck[short], D[short, neck[short]]
        weight = x0[short] * d / R[j]
        total = np.bincount(j, weight, m)
        charged = total > 0
        log_p = np.bincount(j, weight * (log_task[short] - np.log(d)), m) / np.where(charged, total, 1)
        log_p[~charged] = log_p[charged].min() - math.log(1e3)
    else:  # every user at her bound: spread over shares
        shares = D / R
        weight = x0[:, None] * shares
        log_p = ((log_task - np.log(shares.sum(axis=1))) @ weight) / weight.sum(axis=0) - np.log(R)
    log_p = np.maximum(log_p, log_p.max() - 600)  # keep the spread within float range
    direction: _Floats = np.exp(log_p - log_p.max())
    return direction / (direction @ R)


def _ray_scale(a: _Floats, b: _Floats, alpha: float) -> float:
    """``log t`` where the users' spending at prices ``t * direction`` meets the budget
    ``direction . R = 1``: ``sum_i min(exp(b_i), exp(a_i - log t / alpha)) = 1``, with
    ``a_i = log k_i / alpha + (1 - 1/alpha) log s_i`` (her spending uncapped at ``t = 1``) and
    ``b_i = log(T_i s_i)`` (capped), ``s = D . direction``.

    Spending falls as ``t`` grows; user ``i`` is capped for ``log t <= L_i = alpha (a_i - b_i)``.
    Nobody capped: ``log t = alpha * logsumexp(a)``.  Otherwise, with the users sorted by
    ``L_i``, each run of capped users gives the root in closed form; where none does (bounds
    that fit within the budget), the largest ``L_i``, where everybody is just capped.
    """
    top: float = a.max()
    tau = alpha * (top + math.log(np.exp(a - top).sum()))
    with np.errstate(invalid="ignore"):
        L = alpha * (a - b)  # -inf for unbounded users
    if not np.any(L > tau):
        return tau
    order = np.argsort(-L)
    L, a, b = L[order], a[order], b[order]
    with np.errstate(over="ignore"):
        capped = np.concatenate(([0.0], np.cumsum(np.exp(np.minimum(b, 700.0)))))  # k first capped
    free = np.concatenate((np.logaddexp.accumulate(a[::-1])[::-1], [-np.inf]))  # the rest
    with np.errstate(divide="ignore", invalid="ignore"):
        roots = alpha * (free - np.log1p(-capped))
    upper = np.concatenate(([np.inf], L))
    lower = np.concatenate((L, [-np.inf]))
    ok = (capped < 1) & np.isfinite(roots) & (roots <= upper) & (roots >= lower)
    return float(roots[np.argmax(ok)]) if ok.any() else float(L[0])


class _Dual:
    """The dual in welfare rescaled by ``2**-shift`` (alpha = 1 keeps the scale and ``x = w / s``).

    Rescaling the welfare by ``lambda`` scales ``k_i`` and the prices by ``lambda`` and leaves
    the tasks alone.  The line search compares the dual at two prices through its *change*,
    summed user by user from ``ds = D . dp``: the dual's value sums terms far larger than the
    change (and prices of one instance may lie many orders of magnitude apart), so the
    difference of two values would be rounding noise.  With ``cap_i`` the price at which user
    ``i`` reaches ``T_i`` and ``u = max(s, cap_i)``, ``phi_i(s) = phi_uncapped(u) - T_i (s - u)``,
    and ``ds = du + de`` changes it by::

        alpha / (1-alpha) * x(u) u * expm1((1 - 1/alpha) log1p(du / u)) - T_i de     (alpha != 1)
        -w_i log1p(du / u) - T_i de                                                (alpha = 1)
    """

    #: alpha = 1 only: the weights (``x = w / s``); otherwise ``log k_i`` in the rescaled welfare
    w: _Floats
    logk: _Floats

    def __init__(self, D: _Floats, R: _Floats, w: _Floats, c: _Floats, T: _Floats, alpha: float, name: str) -> None:
        self.D, self.R, self.T, self.alpha, self.name = D, R, T, alpha, name
        self.unbounded = ~np.isfinite(T)
        self.everyone_unbounded = bool(self.unbounded.all())
        self.shrink = min(SHRINK, 2.0**-alpha)
        n, m = D.shape
        if alpha == 1:
            self.shift, self.w = 0, w
            self.p0 = w.sum() / (m * R)  # the best prices t / (m R) when nobody is capped
            self.cap = w / T  # 0 where unbounded
            self.cap_value = w  # x(u) u where u = cap
            return
        logk = np.log(w) + (1 - alpha) * np.log(c)
        direction = _price_guess(D, R, T, logk, alpha)
        # the best prices t * direction on that ray: where the spending meets the budget
        s0 = D @ direction
        with np.errstate(divide="ignore"):
            log_t = _ray_scale(logk / alpha + (1 - 1 / alpha) * np.log(s0), np.log(T * s0), alpha)
        if not math.isfinite(log_t):
            raise SolverError(f"{name}: no starting prices in floating-point range (alpha = {alpha:g})")
        # rescale the welfare by 2**-shift so those prices are near 1 (exactly: a power of two)
        self.shift = round(log_t / math.log(2))
        self.logk = logk - self.shift * math.log(2)
        self.p0 = math.exp(log_t - self.shift * math.log(2)) * direction
        with np.errstate(over="ignore"):
            self.cap = np.exp(self.logk - alpha * np.log(T))  # k T^-alpha
            self.cap_value = np.exp(self.logk + (1 - alpha) * np.log(T))  # T cap

    def tasks(self, s: _Floats) -> _Floats:
        """Every user's response ``min(T_i, (k_i / s_i)^(1/alpha))`` to the price ``s_i`` of her task."""
        with np.errstate(divide="ignore", over="ignore"):
            if self.alpha == 1:
                x = np.divide(self.w, s)
                return np.minimum(self.T, x, out=x)  # in place: one (n,) array less on a large instance
            return np.minimum(self.T, np.exp((self.logk - np.log(s)) / self.alpha))

    def response(self, p: _Floats) -> tuple[_Floats, _Floats]:
        """``(x, s)``: every user's tasks at prices ``p`` and the price ``s_i = p . D_i`` of her task."""
        s = self.D @ p
        return self.tasks(s), s

    def curvature(self, x: _Floats, s: _Floats) -> _Floats:
        """``-dx_i/ds_i`` for uncapped users (0 for capped ones): the Hessian's per-user weight."""
        free = x < self.T
        with np.errstate(over="ignore"):
            if self.alpha == 1:  # w / s**2 where free, in place (the same numbers, fewer (n,) arrays)
                out = np.where(free, s, 1.0)
                np.square(out, out=out)
                np.divide(self.w, out, out=out)
                out[~free] = 0.0
                return out
            return np.where(free, x / (self.alpha * np.where(free, s, 1.0)), 0.0)

    def change(self, s: _Floats, x: _Floats, dp: _Floats) -> tuple[float, float, _Floats]:
        """``(df, noise, s_new)``: the change of the dual from prices with task prices ``s`` (and
        responses ``x``) to those prices plus ``dp``, the size of its rounding error, and the new
        task prices.  ``df = inf`` where an unbounded user would face price 0."""
        ds = self.D @ dp
        s_new = s + ds
        a = self.alpha
        if self.everyone_unbounded:  # nobody is ever capped: u = s, du = ds
            if np.any(s_new <= 0):
                return np.inf, 0.0, s_new
            with np.errstate(over="ignore"):
                ratio = np.divide(ds, s, out=ds)  # ds is not needed after this
                np.log1p(ratio, out=ratio)
                if a == 1:  # -w * ratio, in place
                    dphi = np.multiply(self.w, ratio, out=ratio)
                    np.negative(dphi, out=dphi)
                else:
                    dphi = a / (1 - a) * (x * s) * np.expm1((1 - 1 / a) * ratio)
        else:
            cap = self.cap
            free, free_new = s > cap, s_new > cap
            if np.any(~free_new & self.unbounded):
                return np.inf, 0.0, s_new
            u = np.where(free, s, cap)
            du = np.where(free, np.where(free_new, ds, cap - s), np.where(free_new, s_new - cap, 0.0))
            de = ds - du
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                ratio = np.log1p(du / u)
                if a == 1:
                    dphi = -self.w * ratio
                else:
                    dphi = a / (1 - a) * np.where(free, x * s, self.cap_value) * np.expm1((1 - 1 / a) * ratio)
                dphi = np.where(du != 0, dphi, 0.0) - np.where(de != 0, self.T * de, 0.0)
        supply = self.R * dp
        df = float(supply.sum() + dphi.sum())
        noise = 64 * np.finfo(float).eps * float(np.abs(supply).sum() + np.abs(dphi, out=dphi).sum())
        return df, noise, s_new

    def kkt(self, p: _Floats, g: _Floats) -> float:
        """Largest violation of the dual optimality conditions, relative to capacity."""
        return float(np.max(np.where(p == 0, np.maximum(-g, 0), np.abs(g)) / self.R, initial=0.0))


def _to_kink(dual: _Dual, p: _Floats, s: _Floats, g: _Floats, linear: _Mask) -> _Floats:
    """Steps for the prices ``linear`` only capped users pay, along which the dual is linear:
    to 0 where the gradient pushes the price down; up to where the first of its users reaches
    her cap price (and the dual bends) where it pushes it up, and at least a gradient step."""
    up = g[linear] < 0
    step = -p[linear]
    if up.any():
        cols = np.flatnonzero(linear)[up]
        Dl = dual.D[:, cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(Dl > 0, (dual.cap - s)[:, None] / np.where(Dl > 0, Dl, 1.0), np.inf).min(axis=0)
        gradient = -g[cols] * dual.p0[cols] / dual.R[cols]
        step[up] = np.where(np.isfinite(room), np.maximum(room * (1 + 1e-9), gradient), gradient)
    return step


def _can_vanish(dual: _Dual, p: _Floats, s: _Floats, candidates: _Mask) -> _Mask:
    """The candidates for the active set, less those some unbounded user would be left with
    nothing else to pay for: were all her prices 0, she would take infinitely many tasks.
    For each such user the candidate she pays most for stays free (a user alone on a resource,
    at a large alpha: a price small, not zero), and takes Newton steps with the others."""
    unbounded = dual.unbounded
    if not unbounded.any():
        return candidates
    if dual.everyone_unbounded:  # no copy of the (n, m) array
        D = dual.D
    else:
        D, s = dual.D[unbounded], s[unbounded]
    candidates = candidates.copy()
    for _ in range(candidates.size + 1):  # every pass frees one candidate at least
        if not candidates.any():
            break
        stranded = s - D[:, candidates] @ p[candidates] <= 0
        if not stranded.any():
            break
        pays = D[stranded][:, candidates] * p[candidates]
        candidates[np.flatnonzero(candidates)[np.argmax(pays, axis=1)]] = False
    return candidates


#: rows of the Hessian's sum taken at a time (in cells): a block and its weighted copy stay in a
#: core's L2 cache (256 KB each; with 4 MB blocks the same sum took twice the time at 10^6 x 8)
GRAM_CELLS = 2**15


def _weighted_gram(D: _Floats, c: _Floats) -> _Floats:
    """``(D * c[:, None]).T @ D``, the Hessian block; on a large ``D`` summed over blocks of rows
    (:data:`GRAM_CELLS` cells) weighted into one buffer, so that no ``(n, m)`` temporary is made
    and each block is read from cache (the sums then differ from the one product in the last
    bits only)."""
    n, m = D.shape
    if n * m <= GRAM_CELLS:
        return (D * c[:, None]).T @ D
    H = np.zeros((m, m))
    step = max(1, GRAM_CELLS // m)
    weighted = np.empty((step, m))
    for a in range(0, n, step):
        block = D[a : a + step]
        rows = weighted[: len(block)]
        np.multiply(block, c[a : a + step, None], out=rows)
        H += rows.T @ block
    return H


def _projected_newton(dual: _Dual, max_iter: int) -> tuple[_Floats, int, _Floats]:
    """Minimise the dual over ``p >= 0`` by projected Newton (Bertsekas, 1982): the prices, the
    iterations, and the users' responses at those prices (as the last iteration computed them).

    Prices within ``eps`` of zero whose gradient pushes them down form the epsilon-active set:
    they take a scaled gradient step, the others a Newton step on their block of the Hessian,
    and an Armijo search runs along the projection arc ``max(p + a d, 0)``.  (Treating only
    prices exactly at zero as active lets the projection cut Newton steps and stalls the search.)
    """
    D, R = dual.D, dual.R
    p0 = dual.p0
    p = p0.copy()
    # the response s^(-1/alpha) magnifies rounding 1/alpha times: so does the reachable residual
    tol = GRADIENT_TOL * max(1.0, 1 / dual.alpha)
    best, best_p, best_x, idle = np.inf, p, p, 0
    for it in range(1, max_iter + 1):
        x, s = dual.response(p)
        g = R - x @ D
        residual = dual.kkt(p, g)
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(g)) and math.isfinite(residual)):
            raise SolverError(
                f"{dual.name}: the dual Newton iterate is not finite at iteration {it} "
                f"(numerical trouble: the instance's numbers span too many orders of magnitude)"
            )
        if residual <= tol:
            return p, it, x
        best, best_p, best_x, idle = (residual, p, x, 0) if residual < best else (best, best_p, best_x, idle + 1)
        if idle >= 5 and best <= STALL_TOL:  # no progress at float resolution: as good as it gets
            return best_p, it, best_x
        gap = np.linalg.norm((p - np.maximum(p - g * p0 / R, 0.0)) / p0, np.inf)
        active = (p <= min(1e-3, gap) * p0) & (g > 0)
        if active.any():
            active = _can_vanish(dual, p, s, active)
        curvature = dual.curvature(x, s)
        step = np.where(active, -g * p0 / R, 0.0)
        free = ~active
        if (curvature == 0).any():  # a price only capped users pay: the dual is linear in it
            linear = free & (curvature @ D <= 0)
            if linear.any():
                free &= ~linear
                step[linear] = _to_kink(dual, p, s, g, linear)
        newton = free.any()
        if newton:
            Df = D if free.all() else D[:, free]  # no copy of the (n, m) array in the usual case
            # prices may differ by many orders of magnitude: solve in the Jacobi scaling (unit
            # diagonal), regularised by 1e-12; overflow (extreme alpha) falls back to a gradient step
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                H = _weighted_gram(Df, curvature)
                scale = 1 / np.sqrt(np.diag(H))
                H *= scale[:, None] * scale
                H[np.diag_indices_from(H)] = 1.0 + 1e-12
                try:
                    step[free] = np.linalg.solve(H, -g[free] * scale) * scale
                    newton = bool(np.all(np.isfinite(step)) and g[free] @ step[free] <= 0)
                except np.linalg.LinAlgError:
                    newton = False
            if not newton:  # not a descent direction: a gradient step
                step[free] = -g[free] * p0[free] / R[free]
        # a positive price that clears its market already stays: its wobble would swamp, in the
        # dual's rounding, the progress of prices many orders of magnitude smaller
        step[(np.abs(g) <= GRADIENT_TOL * R) & (p > 0)] = 0.0
        if not np.all(np.isfinite(step)):
            raise SolverError(f"{dual.name}: the dual Newton step is not finite at iteration {it} (numerical trouble)")
        found = _line_search(dual, p, s, x, g, step, residual, expand=not newton)
        if newton and (found is None or np.all(np.abs(found[0] - p) <= 1e-12 * p)):
            # a Newton step cut back to nothing is no model of the dual (a nearly singular
            # Hessian): a gradient step instead, lengthened while the dual falls
            gradient = -g * p0 / R
            gradient[(np.abs(g) <= GRADIENT_TOL * R) & (p > 0)] = 0.0
            found = _line_search(dual, p, s, x, g, gradient, residual, expand=True) or found
        if found is None:
            if residual <= STALL_TOL:  # degenerate prices: as good as floats allow
                return p, it, x
            raise SolverError(
                f"{dual.name}: the dual Newton line search stalled (numerical trouble; KKT residual {residual:.2g})"
            )
        p = found[0]
    raise SolverError(
        f"{dual.name}: the dual Newton method did not converge in {max_iter} iterations (KKT residual {residual:.2g})"
    )


def _line_search(
    dual: _Dual, p: _Floats, s: _Floats, x: _Floats, g: _Floats, step: _Floats, residual: float, expand: bool
) -> tuple[_Floats, float] | None:
    """Armijo along the projection arc ``max(p + a step, 0)``, halving ``a`` from 1: the new
    prices and ``a``, or None if no step is accepted.

    Where the projection leaves an unbounded user with price 0 (the dual is infinite there),
    the prices fall to ``shrink**a * p`` instead: they may lie many orders of magnitude below
    the start, and a step far past zero would otherwise be cut back (with every other price's
    step) until it stays positive.

    Near the optimum the decrease of the dual falls below its rounding error (and so does all
    change of prices many orders of magnitude below the others); there a step is judged by the
    gradient at the new prices ``q``.  The dual is convex along the segment from ``p`` to ``q``,
    so a slope there ``g_q . (q - p) <= 1e-4 g . (q - p)`` implies the Armijo decrease; or the
    KKT residual must fall by ``a / 2`` of itself (Newton's quadratic convergence shows in the
    gradient long after the dual stops changing).
    ``expand``: the step is a gradient step, whose length means nothing (where every user is
    capped the dual is linear); if the full step passes, it is doubled while the dual keeps
    falling (at most ``2**60``).
    """

    def trial(a: float) -> tuple[_Floats, float, float, _Floats]:
        q = np.maximum(p + a * step, 0.0)
        df, noise, s_q = dual.change(s, x, q - p)
        if df == np.inf:
            q = np.maximum(q, dual.shrink**a * p)
            df, noise, s_q = dual.change(s, x, q - p)
        return q, df, noise, s_q

    a = 1.0
    for _ in range(LINE_SEARCH_STEPS):  # a halves each pass: below 2**-1074 the step is 0
        q, df, noise, s_q = trial(a)
        if np.array_equal(q, p):  # the step vanished in rounding: nothing accepted
            return None
        if not (math.isfinite(df) or df == np.inf) or not math.isfinite(noise) or not np.all(np.isfinite(q)):
            raise SolverError(
                f"{dual.name}: the dual Newton line search met a value that is not a finite "
                f"number (numerical trouble: the instance's numbers span too many orders of magnitude)"
            )
        if -df > noise:  # a measurable decrease: the Armijo test decides
            if df <= 1e-4 * (g @ (q - p)):
                break
        elif df <= noise:  # lost in rounding: judge by the gradient at q
            g_q = dual.R - dual.tasks(s_q) @ dual.D
            slope_ok = g_q @ (q - p) <= 1e-4 * (g @ (q - p))
            if slope_ok or dual.kkt(q, g_q) < (1 - 0.5 * max(a, 2.0**-20)) * residual:
                return q, a
        a *= 0.5
    else:
        raise SolverError(
            f"{dual.name}: the dual Newton line search found no step in {LINE_SEARCH_STEPS} halvings "
            f"(fairalloc.core.limits.LINE_SEARCH_STEPS; numerical trouble)"
        )
    if expand and a == 1.0:
        while a < 2.0**60:
            far, df_far, _, _ = trial(2 * a)
            if not (df_far < df and df_far <= 1e-4 * (g @ (far - p))):
                break
            a, q, df = 2 * a, far, df_far
    return q, a
