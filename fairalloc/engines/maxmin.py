"""Max-min mechanisms over a linear share key, as a sequence of LPs and by progressive filling.

A subclass (DRF, Asset Fairness) only says how a user's share grows with her task count:
``key(instance)`` returns ``k_i`` with share ``s_i = k_i x_i``.  Everything else lives here once:

* ``program``: the paper's LP, solved round by round.  Round ``r``::

      max t   s.t.  k_i x_i = t                 (i still active)
                    x_i = x_i^(r-1)              (i frozen in an earlier round)
                    sum_i D_ij x_i <= R_j        (every resource j)
                    0 <= x_i <= T_i

  after which users demanding a saturated resource, or at their bound, are frozen.  In the LP
  ``x_i`` is ``tasks_<user>``, ``t`` is ``round<r>_level``, and the constraints are
  ``capacity_<resource>`` and ``share_<user>``.  Round 1 is built by ``program()``; round
  ``r + 1`` depends on round ``r``'s solution, so it is built as the sequence is solved.
* ``fast``: :func:`fairalloc.engines.filling.progressive_filling` in numpy.
* the exact certificate: :func:`fairalloc.engines.filling.bottleneck_certificate`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import numpy as np
import pulp

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, linear_expression, lp_name, lp_names, solve_lp, task_variables, values
from fairalloc.core.errors import SolverError
from fairalloc.core.exact import ExactInstance
from fairalloc.core.instance import Instance
from fairalloc.core.registry import Mechanism
from fairalloc.core.tolerances import FEASIBILITY
from fairalloc.engines.filling import bottleneck_certificate, progressive_filling


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
        return Allocation(
            instance,
            result.tasks,
            self.name,
            "fast",
            "numpy progressive filling",
            info={"rounds": result.rounds},
            certify=self.certify,
        )

    def certify(self, ex: ExactInstance, x: list[Fraction]) -> bool:
        return bottleneck_certificate(ex.D, ex.R, self.exact_key(ex), x, ex.T)

    # -- declarative program ----------------------------------------------------------------
    def program(self, instance: Instance) -> Program:
        description = f"""{self.name}: max-min fairness of the {self.share_name} k_i x_i as a sequence of LPs.
Round r:  max t  s.t.  k_i x_i = t (active users), x_i fixed (frozen users),
          sum_i D_ij x_i <= R_j (resources), 0 <= x_i <= T_i.
After each round, users demanding a saturated resource or at their bound are frozen.
In round r's LP, x_i is tasks_<user>, t is round<r>_level; constraints capacity_<resource>, share_<user>."""
        names = _Names(
            lp_names("tasks", instance.users),
            lp_names("share", instance.users),
            lp_names("capacity", instance.resources),
        )
        first = self._round_lp(instance, names, 1, np.zeros(instance.n), np.ones(instance.n, bool))
        return Program(
            self.name,
            description,
            [("round 1", first.lp)],
            solve=lambda prog: self._solve_rounds(instance, names, first, prog),
            later="later rounds are built as the sequence is solved (each starts from the one before)",
        )

    def _round_lp(self, instance: Instance, names: _Names, r: int, x: np.ndarray, active: np.ndarray) -> _Round:
        """Round ``r``'s LP: active users at a common level, frozen ones fixed at ``x``."""
        D, R = instance.demand, instance.capacity
        key = self.key(instance)
        lp = pulp.LpProblem(lp_name(f"{self.name}_round{r}"), pulp.LpMaximize)
        level = lp.add_variable(f"round{r}_level", lowBound=0)
        xs = task_variables(lp, np.where(active, 0.0, x), np.where(active, instance.bounds(), x), names.tasks)
        lp += level
        for j in range(instance.m):
            lp += linear_expression(xs, D[:, j]) <= R[j], names.capacity[j]
        for i in np.flatnonzero(active):
            lp += pulp.LpAffineExpression([(xs[i], key[i]), (level, -1.0)]) == 0, names.share[i]
        return _Round(lp, level, xs)

    def _solve_rounds(self, instance: Instance, names: _Names, first: _Round, prog: Program) -> Allocation:
        D, R = instance.demand, instance.capacity
        T = instance.bounds()
        n = instance.n
        x = np.zeros(n)
        active = np.ones(n, bool)
        levels: list[float] = []
        solver = ""
        del prog.models[1:]  # a solve that failed half-way starts again
        current = first
        while active.any():
            r = len(levels) + 1
            if r > 1:
                current = self._round_lp(instance, names, r, x, active)
                prog.models.append((f"round {r}", current.lp))
            solver = solve_lp(current.lp, f"{self.name} round {r}")
            x = np.clip(values(current.tasks), 0, None)
            levels.append(current.level.varValue)
            saturated = D.T @ x >= R * (1 - FEASIBILITY)
            at_bound = x >= T - FEASIBILITY * np.maximum(1, np.nan_to_num(T, posinf=0))
            stop = active & (at_bound | (D[:, saturated] > 0).any(axis=1))
            if not stop.any():
                raise SolverError(f"{self.name}: round {r} froze no user (numerical trouble)")
            active &= ~stop
        return Allocation(
            instance,
            x,
            self.name,
            "program",
            f"pulp+{solver}",
            info={"rounds": len(levels), "levels": levels},
            certify=self.certify,
        )


class _Names(NamedTuple):
    """The LP names of a max-min program: per user (variables, share constraints), per resource."""

    tasks: list[str]
    share: list[str]
    capacity: list[str]


class _Round(NamedTuple):
    """One round's LP and the handles its solution is read from."""

    lp: pulp.LpProblem
    level: pulp.LpVariable
    tasks: list[pulp.LpVariable]
