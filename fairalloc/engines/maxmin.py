"""Max-min mechanisms over a linear share key, as a sequence of LPs and by progressive filling.

A subclass (DRF, Asset Fairness) only says how a user's share grows with her task count:
``key(instance)`` returns ``k_i`` with share ``s_i = k_i x_i``.  Everything else lives here once:

* ``program``: the paper's LP, solved round by round.  Round ``r``::

      max t   s.t.  k_i x_i = t                 (i still active)
                    x_i = x_i^(r-1)              (i frozen in an earlier round)
                    sum_i D_ij x_i <= R_j        (every resource j)
                    0 <= x_i <= T_i

  after which users demanding a saturated resource, or at their bound, are frozen.
* ``fast``: :func:`fairalloc.engines.filling.progressive_filling` in numpy.
* the exact certificate: :func:`fairalloc.engines.filling.bottleneck_certificate`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pulp

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, linear_expression, solve_lp, task_variables, values
from fairalloc.core.errors import SolverError
from fairalloc.core.exact import ExactInstance
from fairalloc.engines.filling import bottleneck_certificate, progressive_filling
from fairalloc.core.instance import Instance
from fairalloc.core.registry import Mechanism
from fairalloc.core.tolerances import FEASIBILITY


class MaxMinMechanism(Mechanism):
    """Max-min fairness (leximin) of the shares ``key(instance) * x``."""

    share_name = "share"

    def key(self, instance: Instance) -> np.ndarray:
        raise NotImplementedError

    def exact_key(self, ex: ExactInstance) -> list[Fraction]:
        raise NotImplementedError

    # -- fast path --------------------------------------------------------------------------
    def fast(self, instance: Instance) -> Allocation:
        bound = instance.max_tasks
        result = progressive_filling(instance.demand, instance.capacity, self.key(instance), bound)
        return Allocation(instance, result.tasks, self.name, "fast", "numpy progressive filling",
                          info={"rounds": result.rounds}, certify=self.certify)

    def certify(self, ex: ExactInstance, x: list[Fraction]) -> bool:
        return bottleneck_certificate(ex.D, ex.R, self.exact_key(ex), x, ex.T)

    # -- declarative program ----------------------------------------------------------------
    def program(self, instance: Instance) -> Program:
        description = f"""{self.name}: max-min fairness of the {self.share_name} k_i x_i as a sequence of LPs.
Round r:  max t  s.t.  k_i x_i = t (active users), x_i fixed (frozen users),
          sum_i D_ij x_i <= R_j (resources), 0 <= x_i <= T_i.
After each round, users demanding a saturated resource or at their bound are frozen.
Variables x_k are users in order: {', '.join(f'x_{k}={u}' for k, u in enumerate(instance.users[:20]))}{' ...' if instance.n > 20 else ''}"""
        return Program(self.name, description, solve=lambda prog: self._solve_rounds(instance, prog))

    def _solve_rounds(self, instance: Instance, prog: Program) -> Allocation:
        D, R = instance.demand, instance.capacity
        key = self.key(instance)
        T = instance.bounds()
        n, m = D.shape
        x = np.zeros(n)
        active = np.ones(n, bool)
        levels, solver = [], ""
        while active.any():
            lp = pulp.LpProblem(f"{self.name}_round{len(prog.models) + 1}", pulp.LpMaximize)
            t = lp.add_variable("t", lowBound=0)
            xs = task_variables(lp, np.where(active, 0.0, x), np.where(active, T, x))
            lp += t
            for j in range(m):
                lp += linear_expression(xs, D[:, j]) <= R[j], f"capacity_{j}"
            for i in np.flatnonzero(active):
                lp += pulp.LpAffineExpression([(xs[i], key[i]), (t, -1.0)]) == 0, f"share_{i}"
            prog.models.append((f"round {len(prog.models) + 1}", lp))
            solver = solve_lp(lp, f"{self.name} round {len(prog.models)}")
            x = np.clip(values(xs), 0, None)
            levels.append(t.varValue)
            saturated = D.T @ x >= R * (1 - FEASIBILITY)
            at_bound = x >= T - FEASIBILITY * np.maximum(1, np.nan_to_num(T, posinf=0))
            stop = active & (at_bound | (D[:, saturated] > 0).any(axis=1))
            if not stop.any():
                raise SolverError(f"{self.name}: round {len(prog.models)} froze no user (numerical trouble)")
            active &= ~stop
        return Allocation(instance, x, self.name, "program", f"pulp+{solver}",
                          info={"rounds": len(prog.models), "levels": levels}, certify=self.certify)
