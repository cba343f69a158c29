"""Utilitarian allocation: the efficiency end of the fairness / efficiency trade-off.

Maximise the (weighted) sum of dominant shares, alpha-fairness at ``alpha = 0``
(docs/formulations.md section 5)::

    max  sum_i w_i mu_i x_i    s.t.  sum_i x_i D_ij <= R_j,   0 <= x_i <= T_i
    mu_i = max_j D_ij / R_j

An LP.  Its optimal *welfare* is unique; when several allocations reach it, the one returned is
the vertex the simplex method stops at (HiGHS), so compare utilitarian allocations by welfare.
The program is a pulp model; the fast path hands the same LP as sparse arrays straight to
HiGHS through scipy, skipping the modelling layer.  Exact form: the rational allocation is
accepted when rational capacity prices prove it optimal (equal primal and dual objectives).

It gives up every fairness property that needs balance (sharing incentive, envy-freeness);
users that bring the most dominant share per unit of scarce resource take everything.

>>> import fairalloc
>>> inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], users=["A", "B"])
>>> a = fairalloc.solve(inst, "utilitarian")
>>> round(a.info["welfare"], 9), [str(v) for v in a.exact]   # 2/9 * 45/11 + 1/3 * 18/11 = 16/11
(1.454545455, ['45/11', '18/11'])
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, linear_expression, lp_names, solve_lp, task_variables, values
from fairalloc.core.deferred import deferred
from fairalloc.core.errors import SolverError
from fairalloc.core.registry import Mechanism, register
from fairalloc.core.tolerances import MAX_DENOMINATOR

if TYPE_CHECKING:
    import pulp
else:
    pulp = deferred("pulp")


@register("utilitarian")
class Utilitarian(Mechanism):
    summary = "Utilitarian: maximise the (weighted) sum of dominant shares"
    about = (
        "Keeps only Pareto efficiency: no sharing incentive or envy-freeness; users with the most dominant "
        "share per scarce unit take all."
    )
    section = "5"

    value_text = "v_i = w_i mu_i: weighted dominant share per task"
    #: sum_i w_i mu_i x_i (dominant shares) is the same in any unit of a resource or a task
    scaling = "users"
    #: the fast path is an LP solver too (HiGHS through scipy): it gets the scaled instance
    scale_fast = True

    def unscaled(self, instance, scaled, tasks, prices):
        """Welfare and the exact certificate's dual prices on the instance's own units."""
        prices = np.zeros(instance.m) if prices is None else prices
        return self._allocation(instance, tasks, scaled.method, scaled.solver, prices)

    def task_value(self, instance) -> np.ndarray:
        """What one task of each user adds to the objective: ``w_i mu_i``."""
        return instance.scalar_weights(self.name) * instance.per_task_dominant_share

    def exact_task_value(self, ex) -> list[Fraction]:
        """:meth:`task_value` in rational arithmetic (for the certificate)."""
        return [ex.W[i][0] * mu for i, mu in enumerate(ex.dominant_share_per_task())]

    def program(self, instance):
        D, R, T = instance.demand, instance.capacity, instance.bounds()
        v = self.task_value(instance)
        lp = pulp.LpProblem("linear_welfare", pulp.LpMaximize)
        xs = task_variables(lp, np.zeros(instance.n), T, lp_names("tasks", instance.users))
        lp += linear_expression(xs, v)
        capacity = []
        for j, name in enumerate(lp_names("capacity", instance.resources)):
            capacity.append(linear_expression(xs, D[:, j]) <= R[j])
            lp += capacity[-1], name
        description = (
            f"{self.name}: max sum_i v_i x_i  s.t.  D^T x <= R, 0 <= x <= T   ({self.value_text})\n"
            "x_i is tasks_<user>; the constraints are capacity_<resource>."
        )

        def solve(prog):
            solver = solve_lp(lp, self.name)
            tasks = np.clip(values(xs), 0, None)
            prices = np.array([c.pi or 0.0 for c in capacity])
            return self._allocation(instance, tasks, "program", f"pulp+{solver}", np.abs(prices))

        return Program(self.name, description, [("LP", lp)], solve)

    def fast(self, instance):
        # scipy's linprog, not the direct HiGHS call (fairalloc.core.highs): the LP may have several
        # optimal vertices, and highspy's newer HiGHS picks another one than scipy's on some
        # instances; the same call keeps the same allocation (issue 18)
        from scipy.optimize import linprog
        from scipy.sparse import csr_matrix

        D, R, T = instance.demand, instance.capacity, instance.bounds()
        v = self.task_value(instance)
        A_ub, bounds = csr_matrix(D.T), np.column_stack([np.zeros(instance.n), T])
        try:
            res = linprog(-v, A_ub=A_ub, b_ub=R, bounds=bounds, method="highs")
        except Exception as exc:  # only the solver call: a failure inside scipy's HiGHS is an error of the solve
            raise SolverError(
                f"{self.name}: HiGHS (scipy) failed ({type(exc).__name__}: {' '.join(str(exc).split())[:160]})"
            ) from None
        if res.status != 0:
            raise SolverError(f"{self.name}: HiGHS (scipy) failed: {res.message}")
        prices = -np.asarray(res.ineqlin.marginals)
        return self._allocation(instance, np.clip(res.x, 0, None), "fast", "scipy+HiGHS", prices)

    def _allocation(self, instance, tasks, method, solver, prices):
        v = self.task_value(instance)
        return Allocation(
            instance,
            tasks,
            self.name,
            method,
            solver,
            prices=prices,
            info={"welfare": float(v @ tasks)},
            certify=self._certifier(prices),
        )

    def _certifier(self, prices):
        """LP duality in rationals: feasible ``x`` and dual ``(y, z)`` with equal objectives."""
        y = [Fraction(float(p)).limit_denominator(MAX_DENOMINATOR) for p in prices]

        def certify(ex, x):
            if not ex.feasible(x) or any(v < 0 for v in y):
                return False
            value = self.exact_task_value(ex)
            z = [max(Fraction(0), value[i] - sum(ex.D[i][j] * y[j] for j in range(ex.m))) for i in range(ex.n)]
            if any(z[i] > 0 and ex.T[i] is None for i in range(ex.n)):
                return False
            dual = sum(r * p for r, p in zip(ex.R, y)) + sum(z[i] * ex.T[i] for i in range(ex.n) if z[i] > 0)
            return sum(value[i] * x[i] for i in range(ex.n)) == dual

        return certify
