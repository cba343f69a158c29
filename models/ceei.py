"""Competitive Equilibrium from Equal Incomes (CEEI) / Nash bargaining.

Ghodsi, Zaharia, Hindman, Konwinski, Shenker, Stoica, "Dominant Resource Fairness: Fair
Allocation of Multiple Resource Types", USENIX NSDI 2011, section 5.2 (docs/formulations.md
section 3); Eisenberg and Gale, "Consensus of subjective probabilities: the pari-mutuel method",
Annals of Mathematical Statistics 1959.  With Leontief users CEEI is the Eisenberg-Gale convex
program (a Fisher market in which user ``i`` holds budget ``w_i``, 1 by default)::

    max  sum_i w_i log x_i   s.t.  sum_i x_i D_ij <= R_j,   0 <= x_i <= T_i

Its capacity multipliers are the market-clearing prices ``p_j``, and ``x_i = w_i / (p . D_i)``
(capped at ``T_i``).  The dual has only ``m`` variables::

    min_{p >= 0}  sum_j p_j R_j + sum_i phi_i(p . D_i)
    phi_i(s) = -w_i log s + w_i log w_i - w_i     if s >= w_i / T_i   (x_i = w_i / s)
             =  w_i log T_i - T_i s               otherwise          (x_i = T_i)

smooth and convex; the fast path solves it by projected Newton, ``O(n m^2)`` per iteration
(:func:`fairalloc.engines.dual_newton.alpha_fair_dual`, the engine of every alpha-fair member, at alpha = 1).

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

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, convex_legend, solve_cvxpy
from fairalloc.core.exact import solve_linear
from fairalloc.core.registry import Mechanism, register
from fairalloc.engines.dual_newton import alpha_fair_dual


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
    about = (
        "Sharing incentive, envy-free, Pareto efficient; unlike DRF, a user can gain by lying and can lose "
        "when another user leaves."
    )
    section = "3"
    #: sum_i w_i log x_i changes by a constant when a user's task unit changes: the same optimum
    scaling = "users"

    def unscaled(self, instance, scaled, tasks, prices):
        allocation = super().unscaled(instance, scaled, tasks, prices)
        if "nash_welfare" in allocation.info:  # sum_i w_i log x_i depends on the task units
            allocation.info["nash_welfare"] = nash_welfare(tasks, instance.scalar_weights(self.name), _live(instance))
        return allocation

    # -- declarative program ----------------------------------------------------------------
    def program(self, instance):
        import cvxpy as cp

        live = _live(instance)
        D, R = instance.demand[live], instance.capacity
        w_all = instance.scalar_weights(self.name)
        w, T = w_all[live], instance.bounds()[live]
        description = (
            "ceei: Eisenberg-Gale program  max sum_i w_i log x_i  s.t.  D^T x <= R, x <= T.\n"
            "Prices are the duals of the capacity constraints."
        )
        if not live.any():  # every user is bounded to 0 tasks: nothing to solve
            return Program(
                self.name,
                description + "\n(every user has max_tasks = 0)",
                [],
                lambda prog: Allocation(
                    instance,
                    np.zeros(instance.n),
                    self.name,
                    "program",
                    "none",
                    prices=np.zeros(instance.m),
                    info={"nash_welfare": 0.0},
                ),
            )
        description += f"\nx is the vector {convex_legend(instance.users, live)}"
        x = cp.Variable(D.shape[0], name="tasks")
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
            return Allocation(
                instance,
                tasks,
                self.name,
                "program",
                solver,
                prices=prices,
                info={"nash_welfare": nash_welfare(tasks, w_all, live)},
                certify=self.certify,
            )

        return Program(self.name, description, [("Eisenberg-Gale", problem)], solve)

    # -- fast path: the dual in m variables (fairalloc.engines.dual_newton, alpha = 1) ----------------
    def fast(self, instance):
        live = _live(instance)
        w = instance.scalar_weights(self.name)
        tasks, prices, iterations = alpha_fair_dual(
            instance.demand,
            instance.capacity,
            w,
            np.broadcast_to(1.0, instance.n),  # c does not enter at alpha = 1: no (n,) array for it
            instance.bounds(),
            1.0,
            name=self.name,
            check=False,
        )
        return Allocation(
            instance,
            tasks,
            self.name,
            "fast",
            "numpy dual Newton",
            prices=prices,
            info={"nash_welfare": nash_welfare(tasks, w, live), "newton_iterations": iterations},
            certify=self.certify,
        )

    # -- exact certificate: the KKT conditions in rational arithmetic -----------------------
    def certify(self, ex, x) -> bool:
        if any(v <= 0 and ex.T[i] != 0 for i, v in enumerate(x)) or not ex.feasible(x):
            return False
        w = [row[0] for row in ex.W]
        if any(any(v != row[0] for v in row) for row in ex.W):
            return False
        used = ex.used(x)
        demanded = [any(ex.D[i][j] > 0 for i in range(ex.n)) for j in range(ex.m)]
        S = [j for j in range(ex.m) if used[j] == ex.R[j] and demanded[j]]  # undemanded: price 0
        uncapped = [i for i in range(ex.n) if ex.T[i] is None or x[i] < ex.T[i]]
        p_S = (
            solve_linear([[ex.D[i][j] for j in S] for i in uncapped], [w[i] / x[i] for i in uncapped])
            if S
            else ([] if not uncapped else None)
        )
        if p_S is None or any(v < 0 for v in p_S):
            return False
        free = set(uncapped)
        capped = [i for i in range(ex.n) if i not in free]
        return all(ex.T[i] == 0 or sum(ex.D[i][j] * v for j, v in zip(S, p_S)) <= w[i] / ex.T[i] for i in capped)
