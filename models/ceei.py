"""Competitive Equilibrium from Equal Incomes (CEEI) / Nash bargaining.

Ghodsi et al., NSDI 2011, section 5.2 (``papers/002_f1eccfd60d506323.txt``); formulations.md
section 3.  With Leontief users CEEI is the Eisenberg-Gale convex program (a Fisher market in
which user ``i`` holds budget ``w_i``, 1 by default)::

    max  sum_i w_i log x_i   s.t.  sum_i x_i D_ij <= R_j,   0 <= x_i <= T_i

Its capacity multipliers are the market-clearing prices ``p_j``, and ``x_i = w_i / (p . D_i)``
(capped at ``T_i``).  The dual has only ``m`` variables::

    min_{p >= 0}  sum_j p_j R_j + sum_i phi_i(p . D_i)
    phi_i(s) = -w_i log s + w_i log w_i - w_i     if s >= w_i / T_i   (x_i = w_i / s)
             =  w_i log T_i - T_i s               otherwise          (x_i = T_i)

smooth and convex; the fast path solves it by projected Newton, ``O(n m^2)`` per iteration.

Properties (Table 2): sharing incentive, envy-freeness, Pareto efficiency, single-resource and
bottleneck fairness; not strategy-proof (Theorem 4), not population monotone (Theorem 5), not
resource monotone.  Section 4.1: ``x = 45/11, y = 18/11`` at prices ``(1/5, 1/90)``.

>>> import fairalloc
>>> inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], users=["A", "B"])
>>> a = fairalloc.solve(inst, "ceei")
>>> [str(v) for v in a.exact], a.prices.round(6).tolist()
(['45/11', '18/11'], [0.2, 0.011111])
"""

from __future__ import annotations

import numpy as np

from fairalloc.allocation import Allocation
from fairalloc.backends import Program, solve_cvxpy
from fairalloc.errors import SolverError
from fairalloc.exact import solve_linear
from fairalloc.registry import Mechanism, register

#: Newton stops when the projected gradient, relative to capacity, is below this.
GRADIENT_TOL = 1e-13


def nash_welfare(tasks: np.ndarray, weights: np.ndarray) -> float:
    """``sum_i w_i log x_i`` (the Eisenberg-Gale objective)."""
    with np.errstate(divide="ignore"):
        return float(weights @ np.log(tasks))


@register("ceei")
class CEEI(Mechanism):
    summary = "CEEI / Nash bargaining: maximise sum of (weighted) log task counts"

    # -- declarative program ----------------------------------------------------------------
    def program(self, instance):
        import cvxpy as cp
        D, R = instance.demand, instance.capacity
        w = instance.scalar_weights(self.name)
        T = instance.bounds()
        x = cp.Variable(instance.n, name="x")
        capacity = D.T @ x <= R
        constraints = [capacity]
        bounded = np.flatnonzero(np.isfinite(T))
        if bounded.size:
            constraints.append(x[bounded] <= T[bounded])
        problem = cp.Problem(cp.Maximize(w @ cp.log(x)), constraints)
        description = ("ceei: Eisenberg-Gale program  max sum_i w_i log x_i  s.t.  D^T x <= R, x <= T.\n"
                       "Prices are the duals of the capacity constraints.")

        def solve(prog):
            solver = solve_cvxpy(problem, "ceei")
            tasks = np.clip(np.asarray(x.value, dtype=float), 0, None)
            prices = np.clip(np.asarray(capacity.dual_value, dtype=float), 0, None)
            return Allocation(instance, tasks, self.name, "program", solver, prices=prices,
                              info={"nash_welfare": nash_welfare(tasks, w)}, certify=self.certify)
        return Program(self.name, description, [("Eisenberg-Gale", problem)], solve)

    # -- fast path: the dual in m variables -------------------------------------------------
    def fast(self, instance):
        D, R = instance.demand, instance.capacity
        w = instance.scalar_weights(self.name)
        T = instance.bounds()
        used_cols = D.any(axis=0)           # resources nobody demands carry price 0
        Du, Ru = (D, R) if used_cols.all() else (D[:, used_cols], R[used_cols])
        p, iterations = _dual_newton(Du, Ru, w, T)
        prices = np.zeros(instance.m)
        prices[used_cols] = p
        tasks = np.minimum(T, w / (Du @ p))
        over = (tasks @ Du / Ru).max()      # rounding may overshoot by an ulp: scale back
        if over > 1:
            tasks /= over
        return Allocation(instance, tasks, self.name, "fast", "numpy dual Newton", prices=prices,
                          info={"nash_welfare": nash_welfare(tasks, w), "newton_iterations": iterations},
                          certify=self.certify)

    # -- exact certificate: the KKT conditions in rational arithmetic -----------------------
    def certify(self, ex, x) -> bool:
        if any(v <= 0 for v in x) or not ex.feasible(x):
            return False
        w = [row[0] for row in ex.W]
        if any(any(v != row[0] for v in row) for row in ex.W):
            return False
        used = ex.used(x)
        S = [j for j in range(ex.m) if used[j] == ex.R[j]]
        uncapped = [i for i in range(ex.n) if ex.T[i] is None or x[i] < ex.T[i]]
        p_S = solve_linear([[ex.D[i][j] for j in S] for i in uncapped], [w[i] / x[i] for i in uncapped]) \
            if S else ([] if not uncapped else None)
        if p_S is None or any(v < 0 for v in p_S):
            return False
        free = set(uncapped)
        capped = [i for i in range(ex.n) if i not in free]
        return all(sum(ex.D[i][j] * v for j, v in zip(S, p_S)) <= w[i] / ex.T[i] for i in capped)


def _dual_objective(p, D, R, w, T, logw):
    s = D @ p
    if np.any(s <= 0):
        return np.inf
    capped = s * T < w
    val = R @ p + np.sum(np.where(capped, 0.0, -w * np.log(np.where(capped, 1.0, s)) + logw - w))
    if capped.any():
        val += np.sum(w[capped] * np.log(T[capped]) - T[capped] * s[capped])
    return val


def _dual_newton(D, R, w, T, max_iter: int = 200):
    """Minimise the CEEI dual over ``p >= 0`` by projected Newton with an Armijo search."""
    n, m = D.shape
    logw = w * np.log(w)
    p = w.sum() / (m * R)
    f = _dual_objective(p, D, R, w, T, logw)
    for it in range(1, max_iter + 1):
        s = D @ p
        x = np.minimum(T, w / s)
        g = R - x @ D
        fixed = (p <= 0) & (g > 0)          # price held at zero: that resource is not scarce
        projected = np.where(fixed, 0.0, g)
        if np.all(np.abs(projected) <= GRADIENT_TOL * R):
            return p, it
        curvature = np.where(x < T, w / s**2, 0.0)
        free = ~fixed
        Df = D[:, free]
        H = (Df * curvature[:, None]).T @ Df
        step = np.zeros(m)
        try:
            step[free] = np.linalg.solve(H + 1e-300 * np.eye(H.shape[0]), -g[free])
        except np.linalg.LinAlgError:
            step[free] = np.linalg.lstsq(H, -g[free], rcond=None)[0]
        if not np.all(np.isfinite(step)) or g @ step >= 0:
            step = np.where(fixed, 0.0, -g * p / R)   # fall back to a scaled gradient step
        alpha = 1.0
        while alpha > 1e-20:
            p_new = np.maximum(p + alpha * step, 0.0)
            f_new = _dual_objective(p_new, D, R, w, T, logw)
            if f_new <= f + 1e-4 * g @ (p_new - p):
                break
            alpha *= 0.5
        else:
            if np.all(np.abs(projected) <= 1e-9 * R):
                return p, it               # at the limit of float precision
            raise SolverError("ceei: the dual Newton line search stalled (numerical trouble)")
        if np.array_equal(p_new, p):
            return p, it
        p, f = p_new, f_new
    raise SolverError(f"ceei: the dual Newton method did not converge in {max_iter} iterations")
