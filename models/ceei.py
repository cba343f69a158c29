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
#: ... or below this when the objective stops changing in floating point (degenerate prices).
STALL_TOL = 1e-9


def nash_welfare(tasks: np.ndarray, weights: np.ndarray, live: np.ndarray) -> float:
    """``sum_i w_i log x_i`` over the users who may run tasks (the Eisenberg-Gale objective)."""
    with np.errstate(divide="ignore"):
        return float(weights[live] @ np.log(tasks[live]))


def _live(instance) -> np.ndarray:
    """Users with ``max_tasks > 0``; a user bounded to 0 tasks gets 0 and leaves the program
    (her ``log x`` would be ``-inf`` for every allocation)."""
    return instance.bounds() > 0


@register("ceei")
class CEEI(Mechanism):
    summary = "CEEI / Nash bargaining: maximise sum of (weighted) log task counts"

    # -- declarative program ----------------------------------------------------------------
    def program(self, instance):
        import cvxpy as cp
        live = _live(instance)
        D, R = instance.demand[live], instance.capacity
        w_all = instance.scalar_weights(self.name)
        w, T = w_all[live], instance.bounds()[live]
        description = ("ceei: Eisenberg-Gale program  max sum_i w_i log x_i  s.t.  D^T x <= R, x <= T.\n"
                       "Prices are the duals of the capacity constraints.")
        if not live.any():                  # every user is bounded to 0 tasks: nothing to solve
            return Program(self.name, description + "\n(every user has max_tasks = 0)", [],
                           lambda prog: Allocation(instance, np.zeros(instance.n), self.name, "program", "none",
                                                   prices=np.zeros(instance.m), info={"nash_welfare": 0.0}))
        x = cp.Variable(D.shape[0], name="x")
        capacity = D.T @ x <= R
        constraints = [capacity]
        bounded = np.flatnonzero(np.isfinite(T))
        if bounded.size:
            constraints.append(x[bounded] <= T[bounded])
        problem = cp.Problem(cp.Maximize(w @ cp.log(x)), constraints)

        def solve(prog):
            solver = solve_cvxpy(problem, "ceei")
            tasks = np.zeros(instance.n)
            tasks[live] = np.clip(np.asarray(x.value, dtype=float), 0, None)
            prices = np.clip(np.asarray(capacity.dual_value, dtype=float), 0, None)
            return Allocation(instance, tasks, self.name, "program", solver, prices=prices,
                              info={"nash_welfare": nash_welfare(tasks, w_all, live)}, certify=self.certify)
        return Program(self.name, description, [("Eisenberg-Gale", problem)], solve)

    # -- fast path: the dual in m variables -------------------------------------------------
    def fast(self, instance):
        live = _live(instance)
        everyone = live.all()
        D = instance.demand if everyone else instance.demand[live]
        w_all = instance.scalar_weights(self.name)
        w, T = (w_all, instance.bounds()) if everyone else (w_all[live], instance.bounds()[live])
        tasks, prices = np.zeros(instance.n), np.zeros(instance.m)
        iterations = 0
        if live.any():
            used_cols = D.any(axis=0)       # resources nobody demands carry price 0
            Du, Ru = (D, instance.capacity) if used_cols.all() else (D[:, used_cols], instance.capacity[used_cols])
            p, iterations = _dual_newton(Du, Ru, w, T)
            prices[used_cols] = p
            x, _ = _tasks_at(p, Du, w, T)
            over = (x @ Du / Ru).max()      # rounding may overshoot by an ulp: scale back
            tasks[live] = x / over if over > 1 else x
        return Allocation(instance, tasks, self.name, "fast", "numpy dual Newton", prices=prices,
                          info={"nash_welfare": nash_welfare(tasks, w_all, live), "newton_iterations": iterations},
                          certify=self.certify)

    # -- exact certificate: the KKT conditions in rational arithmetic -----------------------
    def certify(self, ex, x) -> bool:
        if any(v <= 0 and ex.T[i] != 0 for i, v in enumerate(x)) or not ex.feasible(x):
            return False
        w = [row[0] for row in ex.W]
        if any(any(v != row[0] for v in row) for row in ex.W):
            return False
        used = ex.used(x)
        demanded = [any(ex.D[i][j] > 0 for i in range(ex.n)) for j in range(ex.m)]
        S = [j for j in range(ex.m) if used[j] == ex.R[j] and demanded[j]]   # undemanded: price 0
        uncapped = [i for i in range(ex.n) if ex.T[i] is None or x[i] < ex.T[i]]
        p_S = solve_linear([[ex.D[i][j] for j in S] for i in uncapped], [w[i] / x[i] for i in uncapped]) \
            if S else ([] if not uncapped else None)
        if p_S is None or any(v < 0 for v in p_S):
            return False
        free = set(uncapped)
        capped = [i for i in range(ex.n) if i not in free]
        return all(ex.T[i] == 0 or sum(ex.D[i][j] * v for j, v in zip(S, p_S)) <= w[i] / ex.T[i] for i in capped)


def _dual_objective(p, D, R, w, T, logw):
    s = D @ p
    with np.errstate(invalid="ignore"):     # 0 * inf: an unbounded user at price 0 is not capped
        capped = s * T < w                  # includes s = 0 for a bounded user: she takes T_i
    if np.any(~capped & (s <= 0)):
        return np.inf                       # an unbounded user facing price 0 would take infinity
    safe = np.where(capped, 1.0, s)
    val = R @ p + np.sum(np.where(capped, 0.0, -w * np.log(safe) + logw - w))
    if capped.any():
        val += np.sum(w[capped] * np.log(T[capped]) - T[capped] * s[capped])
    return val


def _tasks_at(p, D, w, T):
    """``x_i = min(T_i, w_i / (p . D_i))`` (``T_i`` where the price of her task is 0)."""
    s = D @ p
    with np.errstate(divide="ignore"):
        return np.minimum(T, w / s), s


def _kkt_residual(p, D, R, w, T, g=None) -> float:
    """Largest violation of the dual optimality conditions, relative to capacity."""
    if g is None:
        g = R - _tasks_at(p, D, w, T)[0] @ D
    return float(np.max(np.where(p == 0, np.maximum(-g, 0), np.abs(g)) / R))


def _dual_newton(D, R, w, T, max_iter: int = 200):
    """Minimise the CEEI dual over ``p >= 0`` by projected Newton (Bertsekas, 1982).

    Prices within ``eps`` of zero whose gradient pushes them down form the epsilon-active set:
    they take a scaled gradient step, the others a Newton step on their block of the Hessian,
    and an Armijo search runs along the projection arc ``max(p + a d, 0)``.  (Treating only
    prices exactly at zero as active lets the projection cut Newton steps and stalls the search.)
    """
    n, m = D.shape
    logw = w * np.log(w)
    p0 = w.sum() / (m * R)                  # a positive start at the scale of the prices
    p = p0.copy()
    f = _dual_objective(p, D, R, w, T, logw)
    for it in range(1, max_iter + 1):
        x, s = _tasks_at(p, D, w, T)
        g = R - x @ D
        at_zero = p == 0
        residual = _kkt_residual(p, D, R, w, T, g)
        if residual <= GRADIENT_TOL:
            return p, it
        gap = np.linalg.norm((p - np.maximum(p - g * p0 / R, 0.0)) / p0, np.inf)
        active = (p <= min(1e-3, gap) * p0) & (g > 0)
        free = ~active
        curvature = np.where(x < T, w / np.where(x < T, s, 1.0) ** 2, 0.0)
        Df = D if free.all() else D[:, free]   # no copy of the (n, m) array in the usual case
        H = (Df * curvature[:, None]).T @ Df
        H[np.diag_indices_from(H)] += 1e-12 * max(float(np.max(np.diag(H), initial=0.0)), 1e-300)
        step = np.where(active, -g * p0 / R, 0.0)
        try:
            step[free] = np.linalg.solve(H, -g[free])
        except np.linalg.LinAlgError:
            step[free] = -g[free] * p0[free] / R[free]
        if not np.all(np.isfinite(step)) or g[free] @ step[free] > 0:
            step[free] = -g[free] * p0[free] / R[free]   # not a descent direction: gradient step
        # Armijo along the projection arc.  Near the optimum the decrease of f falls below its
        # float resolution; there a step is judged by the KKT residual instead (Newton's
        # quadratic convergence shows in the gradient long after f stops changing).
        # f sums terms much larger than itself (R.p, w log s): its rounding error scales with them
        with np.errstate(divide="ignore"):
            terms = R @ p + np.sum(w * (1 + np.abs(np.log(np.where(x < T, s, 1.0)))))
        flat = 64 * np.finfo(float).eps * terms
        alpha = 1.0
        while alpha > 1e-30:
            p_new = np.maximum(p + alpha * step, 0.0)
            f_new = _dual_objective(p_new, D, R, w, T, logw)
            if f - f_new > flat:            # a measurable decrease: the Armijo test decides
                if f_new <= f + 1e-4 * (g @ (p_new - p)):
                    break
            elif f_new - f <= flat and _kkt_residual(p_new, D, R, w, T) < 0.5 * residual:
                break
            alpha *= 0.5
        else:
            if residual <= STALL_TOL:       # degenerate prices: as good as floats allow
                return p, it
            raise SolverError("ceei: the dual Newton line search stalled (numerical trouble)")
        p, f = p_new, f_new
    raise SolverError(f"ceei: the dual Newton method did not converge in {max_iter} iterations")
