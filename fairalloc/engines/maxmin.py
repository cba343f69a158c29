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

A queue case with guarantees or limits on its leaf queues (:mod:`fairalloc.core.queues`) bounds
every user: ``g_i <= x_i <= u_i`` (:func:`queue_task_bounds`), and a user with ``k_i g_i`` above
the level sits at her floor ``g_i``.  The fast path is then
:func:`~fairalloc.engines.filling.progressive_filling_bounded`; the program's rounds distinguish
*growing* users (``k_i x_i = t``) from *floored* ones (``x_i = g_i`` and ``t <= k_i g_i``, constraint
``floor_<user>``), so a round ends when a resource saturates, a user reaches ``u_i`` (both freeze
users, as above; a floored user demanding a saturated resource is frozen at ``g_i``) or the level
reaches a floor (that user grows from the next round on).  The certificate then takes the lower
bounds into account.  An instance without them runs exactly the code above.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, linear_expression, lp_name, lp_names, solve_lp, task_variables, values
from fairalloc.core.deferred import deferred
from fairalloc.core.errors import CaseError, SolverError
from fairalloc.core.exact import ExactInstance, as_fraction
from fairalloc.core.instance import Instance
from fairalloc.core.registry import Mechanism
from fairalloc.core.tolerances import FEASIBILITY, SATURATION
from fairalloc.engines.filling import bottleneck_certificate, progressive_filling, progressive_filling_bounded

if TYPE_CHECKING:
    import pulp
else:
    pulp = deferred("pulp")


class TaskBounds(NamedTuple):
    """Per user: the floor ``g_i`` and the cap ``u_i`` on her task count a queue case sets."""

    lower: np.ndarray
    upper: np.ndarray


def queue_task_bounds(instance: Instance) -> TaskBounds | None:
    """The task bounds of a queue case's leaf guarantees and limits; ``None`` when it has neither.

    ``g_i = min(T_i, min_{j: D_ij > 0, G_ij given} G_ij / D_ij)``: the largest multiple of her
    demand that fits her guarantee on the resources it names (the other resources she needs come
    with it, as in Mesos' first allocation stage), never above ``max_tasks``; a guarantee naming
    none of the resources she asks for gives no floor; ``u_i = min(T_i, min_{j: D_ij > 0} L_ij / D_ij)`` (no limit:
    ``inf``).  A guarantee above the limit counts up to the limit (``g_i <= u_i``).  Groups' bounds
    are not read (``drf`` is flat; ``hdrf-fluid`` honours them).  Refused with :class:`CaseError`
    when the floors together need more of a resource than its capacity.

    >>> from fairalloc.io.cases import parse_case
    >>> case = parse_case({"resources": {"cpu": 10, "mem": 40}, "users": {
    ...     "a": {"request": {"cpu": 8, "mem": 8}, "guarantee": {"cpu": 4, "mem": 2}},
    ...     "b": {"request": {"cpu": 8, "mem": 8}, "limit": {"cpu": 2}}}})
    >>> b = queue_task_bounds(case.instance); b.lower.tolist(), b.upper.tolist()
    ([0.25, 0.0], [1.0, 0.25])

    Computed once per instance (``refuse`` and ``fast`` both read it; the bounds are read-only).
    """
    return instance.memo("queue_task_bounds", _queue_task_bounds)


def _queue_task_bounds(instance: Instance) -> TaskBounds | None:
    queues = instance.queues
    if queues is None:
        return None
    users, D, T = instance.users, instance.demand, instance.bounds()
    G = queues.leaf_array("guarantee", users)
    named = ~np.isnan(G) & (D > 0)
    L = queues.leaf_array("limit", users)
    if not named.any() and not (np.isfinite(L) & (D > 0)).any():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = np.minimum(T, np.where(D > 0, L / np.where(D > 0, D, 1.0), np.inf).min(axis=1))
        lower = np.minimum(T, np.where(named, G / np.where(D > 0, D, 1.0), np.inf).min(axis=1))
    lower = np.minimum(np.where(named.any(axis=1), lower, 0.0), upper)  # nothing guaranteed: no floor
    _refuse_overcommitted(instance, lower)
    lower.flags.writeable = upper.flags.writeable = False
    return TaskBounds(lower, upper)


def _refuse_overcommitted(instance: Instance, lower: np.ndarray) -> None:
    need = lower @ instance.demand
    over = need > instance.capacity * (1 + SATURATION)
    if over.any():
        j = int(np.argmax(np.where(over, need / np.maximum(instance.capacity, 1e-300), -np.inf)))
        who = [u for u, g, d in zip(instance.users, lower, instance.demand[:, j]) if g * d > 0]
        name = instance.resources[j]
        raise CaseError(
            f"guarantee: the guarantees of queues {', '.join(who)} need {need[j]:.6g} {name}, "
            f"capacity {instance.capacity[j]:.6g}"
        )


class MaxMinMechanism(Mechanism):
    """Max-min fairness (leximin) of the shares ``key(instance) * x``."""

    share_name = "share"

    def key(self, instance: Instance) -> np.ndarray:
        raise NotImplementedError

    def exact_key(self, ex: ExactInstance) -> list[Fraction]:
        raise NotImplementedError

    def refuse(self, instance: Instance) -> None:
        """Over-committed queue guarantees (:func:`queue_task_bounds`)."""
        queue_task_bounds(instance)

    # -- fast path --------------------------------------------------------------------------
    def fast(self, instance: Instance) -> Allocation:
        bounds = queue_task_bounds(instance)
        if bounds is not None:
            result = progressive_filling_bounded(
                instance.demand, instance.capacity, self.key(instance), bounds.lower, bounds.upper
            )
            return Allocation(
                instance,
                result.tasks,
                self.name,
                "fast",
                "numpy progressive filling with queue bounds",
                info={"rounds": result.rounds},
                certify=self._bounded_certifier(instance),
            )
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

    def _bounded_certifier(self, instance: Instance) -> Any:
        """The exact certificate with ``instance``'s queue bounds, recomputed in fractions."""
        assert instance.queues is not None
        G = instance.queues.leaf_array("guarantee", instance.users)
        L = instance.queues.leaf_array("limit", instance.users)

        def fitting(ex: ExactInstance, i: int, amounts: np.ndarray, missing: Fraction | None) -> Fraction | None:
            """The most tasks of user ``i`` within ``amounts`` (``None``: no bound)."""
            fits = [missing if np.isnan(a) else as_fraction(a) for a in amounts]  # as_fraction(inf) is None
            options = [f / ex.D[i][j] for j, f in enumerate(fits) if ex.D[i][j] > 0 and f is not None]
            bound = ex.T[i]
            if bound is not None:
                options.append(bound)
            return min(options) if options else None

        def certify(ex: ExactInstance, x: list[Fraction]) -> bool:
            upper = [fitting(ex, i, L[i], None) for i in range(ex.n)]
            lower = [fitting(ex, i, G[i], Fraction(0)) or Fraction(0) for i in range(ex.n)]
            lower = [g if u is None else min(g, u) for g, u in zip(lower, upper)]
            return bottleneck_certificate(ex.D, ex.R, self.exact_key(ex), x, upper, lower)

        return certify

    def unscaled(
        self, instance: Instance, scaled: Allocation, tasks: np.ndarray, prices: np.ndarray | None
    ) -> Allocation:
        allocation = super().unscaled(instance, scaled, tasks, prices)
        if queue_task_bounds(instance) is None:
            return allocation
        # the certificate of the instance's own bounds, not of its rescaled copy's
        return dataclasses.replace(allocation, certify=self._bounded_certifier(instance))

    # -- declarative program ----------------------------------------------------------------
    def program(self, instance: Instance) -> Program:
        bounds = queue_task_bounds(instance)
        if bounds is not None:
            return self._bounded_program(instance, bounds)
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

    # -- the program with queue bounds ---------------------------------------------------------
    def _bounded_program(self, instance: Instance, bounds: TaskBounds) -> Program:
        description = f"""{self.name}: max-min fairness of the {self.share_name} k_i x_i with queue bounds (LPs).
Round r:  max t  s.t.  k_i x_i = t, g_i <= x_i <= u_i (growing users),
          x_i = g_i and t <= k_i g_i (floored users: their floor is above the level),
          x_i fixed (frozen users), sum_i D_ij x_i <= R_j (resources).
g_i: the largest multiple of the demand within the queue's guarantee; u_i: within its limit; both <= T_i.
After each round, users demanding a saturated resource or at u_i are frozen; floored users whose
floor the level reached grow from the next round on.
In round r's LP, x_i is tasks_<user>, t is round<r>_level; constraints capacity_<resource>, share_<user>,
floor_<user>."""
        names = _Names(
            lp_names("tasks", instance.users),
            lp_names("share", instance.users),
            lp_names("capacity", instance.resources),
        )
        floors = lp_names("floor", instance.users)
        key = self.key(instance)
        growing = key * bounds.lower <= 0
        if not growing.any():  # every user has a floor: the first round starts at the lowest
            growing = key * bounds.lower <= np.min(key * bounds.lower)
        first = self._bounded_round_lp(instance, names, floors, bounds, 1, bounds.lower, growing, ~growing)
        return Program(
            self.name,
            description,
            [("round 1", first.lp)],
            solve=lambda prog: self._solve_bounded_rounds(instance, names, floors, bounds, prog),
            later="later rounds are built as the sequence is solved (each starts from the one before)",
        )

    def _bounded_round_lp(
        self,
        instance: Instance,
        names: _Names,
        floors: list[str],
        bounds: TaskBounds,
        r: int,
        x: np.ndarray,
        growing: np.ndarray,
        floored: np.ndarray,
    ) -> _Round:
        """Round ``r``'s LP: growing users at a common level not above a floored user's floor."""
        key = self.key(instance)
        lp = pulp.LpProblem(lp_name(f"{self.name}_round{r}"), pulp.LpMaximize)
        level = lp.add_variable(f"round{r}_level", lowBound=0)
        low, high = np.where(growing, bounds.lower, x), np.where(growing, bounds.upper, x)
        xs = task_variables(lp, low, high, names.tasks)
        lp += level
        for j in range(instance.m):
            lp += linear_expression(xs, instance.demand[:, j]) <= instance.capacity[j], names.capacity[j]
        for i in np.flatnonzero(growing):
            lp += pulp.LpAffineExpression([(xs[i], key[i]), (level, -1.0)]) == 0, names.share[i]
        for i in np.flatnonzero(floored):
            lp += pulp.LpAffineExpression([(level, 1.0)]) <= float(key[i] * bounds.lower[i]), floors[i]
        return _Round(lp, level, xs)

    def _solve_bounded_rounds(
        self, instance: Instance, names: _Names, floors: list[str], bounds: TaskBounds, prog: Program
    ) -> Allocation:
        D, R, key = instance.demand, instance.capacity, self.key(instance)
        start = key * bounds.lower  # the level at which a user leaves her floor
        upper = bounds.upper
        x = bounds.lower.copy()
        frozen = np.zeros(instance.n, bool)
        level, solver = 0.0, "none (every user at a bound)"
        levels: list[float] = []
        del prog.models[1:]
        while not frozen.all():
            floored = ~frozen & (start - level > FEASIBILITY * np.maximum(level, start))
            if not (~frozen & ~floored).any():  # nobody at the level: it jumps to the next floor
                level = float(np.min(start[floored]))
                continue
            r = len(levels) + 1
            current = self._bounded_round_lp(instance, names, floors, bounds, r, x, ~frozen & ~floored, floored)
            prog.models[r - 1 :] = [(f"round {r}", current.lp)]
            solver = solve_lp(current.lp, f"{self.name} round {r}")
            x = np.clip(values(current.tasks), 0, None)
            level = float(current.level.varValue)
            levels.append(level)
            saturated = D.T @ x >= R * (1 - FEASIBILITY)
            at_bound = x >= upper - FEASIBILITY * np.maximum(1, np.nan_to_num(upper, posinf=0))
            stop = ~frozen & ((at_bound & ~floored) | (D[:, saturated] > 0).any(axis=1))
            reached = floored & (start - level <= FEASIBILITY * np.maximum(level, start))
            if not stop.any() and not reached.any():
                raise SolverError(f"{self.name}: round {r} froze no user and reached no floor (numerical trouble)")
            frozen |= stop
        return Allocation(
            instance,
            x,
            self.name,
            "program",
            f"pulp+{solver}",
            info={"rounds": len(levels), "levels": levels},
            certify=self._bounded_certifier(instance),
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
