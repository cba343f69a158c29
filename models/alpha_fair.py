"""Alpha-fairness and the FDS family: the road from utilitarian efficiency to DRF.

Mo and Walrand's alpha-fairness (docs/formulations.md section 5) on a utility ``u_i`` per user::

    max  sum_i w_i U_alpha(u_i / w_i)   s.t.  sum_i x_i D_ij <= R_j,   0 <= x_i <= T_i
    U_alpha(z) = z^(1-alpha) / (1-alpha)      (alpha != 1),    log z    (alpha = 1)

with two choices of utility, each a family registered under one name and named with its alpha:

* ``alpha-fair:ALPHA``: the dominant share ``u_i = s_i = mu_i x_i``;
* ``alpha-tasks:ALPHA``: the task count ``u_i = x_i``.

A weight ``w_i`` is an entitlement, as in weighted DRF: user ``i`` counts as ``w_i`` unit users
who split her utility.  The ends are solved exactly, by the mechanisms they are equal to:

* ``alpha = 0``: ``max sum_i s_i`` (resp. ``sum_i x_i``): an LP.  With unequal weights this is
  the utilitarian of the *unweighted* instance: weights only shape the fair end of the family;
* ``alpha = 1``: ``max sum_i w_i log x_i`` (the constants ``log mu_i`` and ``log w_i`` drop
  out), which is CEEI exactly, on shares and on tasks alike;
* ``alpha = inf``: weighted max-min of ``u_i / w_i``: DRF on shares, task max-min on tasks,
  by progressive filling.

In between, the program is a convex power-cone program (cvxpy + Clarabel), and the fast path is
the projected Newton method on its ``m``-variable dual (:mod:`fairalloc.engines.dual_newton`, shared
with CEEI).  On section 4.1 (9 CPUs, 18 GB, A = <1, 4>, B = <3, 1>): alpha = 2 gives
``x = 3/sqrt(2) y`` on the CPU line, ``(3.7279, 1.7574)``; alpha = 5 gives ``(3.2834, 1.9055)``.

FDS (Joe-Wong, Sen, Lan, Chiang, ToN 2013), ``fds:BETA:LAMBDA`` on unweighted dominant shares::

    F(s) = f_beta(s) * (sum_i s_i)^lambda,
    f_beta(s) = sgn(1-beta) * [sum_i (s_i / sum_k s_k)^(1-beta)]^(1/beta)

Writing ``S = sum_i s_i`` and ``lambda_0 = (1-beta)/beta``, ``|F| = S^(lambda - lambda_0) *
(sum_i s_i^(1-beta))^(1/beta)``, so maximising ``F`` is the convex program

* ``0 < beta < 1`` and ``lambda >= lambda_0``: max ``(lambda - lambda_0) log S + (1/beta) log sum_i s_i^(1-beta)``
* ``beta > 1`` and ``lambda <= lambda_0``: min ``(lambda - lambda_0) log S + (1/beta) log sum_i s_i^(1-beta)``

(sums of concave, resp. convex, terms).  That is the domain fairalloc accepts: outside it the
objective is not log-concave and a solver would return a local answer, so it is refused.
``lambda = lambda_0`` is alpha-fairness with ``alpha = beta`` (tested).  ``beta = 1`` is
degenerate (``sgn 0``); use ``alpha-fair:1``.

>>> import fairalloc
>>> inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], users=["A", "B"])
>>> fairalloc.solve(inst, "alpha-fair:2").tasks.round(4).tolist()
[3.7279, 1.7574]
>>> [str(v) for v in fairalloc.solve(inst, "alpha-fair:inf").exact]      # DRF
['3', '2']
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, convex_legend, convex_task_variables, solve_cvxpy
from fairalloc.core.errors import CaseError, SolverError, UnknownNameError
from fairalloc.core.limits import MAX_FAST_ALPHA, MIN_FAST_ALPHA
from fairalloc.core.registry import Mechanism, register
from fairalloc.engines.maxmin import MaxMinMechanism

from .ceei import CEEI
from .drf import DRF
from .utilitarian import Utilitarian

INF_WORDS = ("inf", "infinity", "∞")


def parse_parameter(text: str, what: str, mechanism: str) -> float:
    """A number (or ``inf``) from a mechanism name, with a clear error naming it."""
    word = text.strip().lower()
    try:
        value = math.inf if word in INF_WORDS else float(word)
    except ValueError:
        raise UnknownNameError(f"mechanism: {mechanism}: {what} must be a number or 'inf' (got '{text}')") from None
    if math.isnan(value):
        raise UnknownNameError(f"mechanism: {mechanism}: {what} must be a number or 'inf' (got '{text}')")
    return value


def format_parameter(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


def alpha_utility(z: np.ndarray, alpha: float) -> np.ndarray:
    """``U_alpha(z)``; at ``alpha = inf`` the limit ordering is that of ``min z``, reported as such."""
    z = np.asarray(z, dtype=float)
    with np.errstate(divide="ignore"):
        if alpha == 1:
            return np.log(z)
        if math.isinf(alpha):
            return np.full_like(z, z.min(initial=np.inf))
        return z ** (1 - alpha) / (1 - alpha)


class _LinearWelfare(Utilitarian):
    """``max sum_i v_i x_i``: the alpha = 0 end (``v_i = mu_i`` on shares, 1 on tasks)."""

    def __init__(self, name: str, on: str):
        self.name, self.on = name, on
        # the sum of task counts depends on each user's task unit; that of shares does not
        self.scaling = "users" if on == "shares" else "resources"
        self.value_text = "v_i = mu_i: dominant share per task" if on == "shares" else "v_i = 1: one per task"

    def task_value(self, instance):
        return instance.per_task_dominant_share.copy() if self.on == "shares" else np.ones(instance.n)

    def exact_task_value(self, ex):
        return [Fraction(1)] * ex.n if self.on == "tasks" else ex.dominant_share_per_task()


class _TaskMaxMin(MaxMinMechanism):
    """Weighted max-min of task counts ``x_i / w_i``: the alpha = inf end on tasks."""

    share_name = "weighted task count"

    def __init__(self, name: str):
        self.name = name

    def key(self, instance):
        return 1.0 / instance.scalar_weights(self.name)

    def exact_key(self, ex):
        return [1 / ex.W[i][0] for i in range(ex.n)]


class AlphaFair(Mechanism):
    """Alpha-fairness of weighted dominant shares (``on = "shares"``) or task counts."""

    parameters = "ALPHA"
    on = "shares"

    def __init__(self, alpha: float | None = None):
        self.alpha = alpha
        # utilities of dominant shares are the same in any unit of a task; task counts are not
        # (but at alpha = 1, CEEI, a task unit only adds a constant to the welfare)
        self.scaling = "users" if self.on == "shares" or alpha == 1 else "resources"
        self.scale_fast = alpha == 0  # the LP end: its fast path is HiGHS

    def unscaled(self, instance, scaled, tasks, prices):
        end = self._end()
        if end is not None:
            return end.unscaled(instance, scaled, tasks, prices)
        return super().unscaled(instance, scaled, tasks, prices)

    def with_parameters(self, text):
        alpha = parse_parameter(text, "alpha", self.name)
        if alpha < 0:
            raise UnknownNameError(f"mechanism: {self.name}: alpha must be >= 0 (got {text})")
        member = type(self)(alpha)
        member.name = f"{self.name}:{format_parameter(alpha)}"
        member.parameters = ""
        return member

    # -- the utility and the exact ends ----------------------------------------------------
    def utility_per_task(self, instance) -> np.ndarray:
        """``c_i``: utility per task, per unit of entitlement (``u_i / w_i = c_i x_i``)."""
        per_task = instance.per_task_dominant_share if self.on == "shares" else np.ones(instance.n)
        return per_task / instance.scalar_weights(self.name)

    def _end(self) -> Mechanism | None:
        """The mechanism this member equals, at alpha = 0, 1 and infinity (None in between)."""
        alpha = self._member_alpha()
        end: Mechanism
        if alpha == 0:
            end = _LinearWelfare(self.name, self.on)
        elif alpha == 1:
            end = CEEI()
        elif math.isinf(alpha):
            end = DRF() if self.on == "shares" else _TaskMaxMin(self.name)
        else:
            return None
        end.name = self.name
        return end

    def _check(self, instance) -> np.ndarray:
        """The utility per task; a family without alpha, and per-resource weights (refused by
        ``scalar_weights`` with the field named), fail here, at the ends too."""
        self._member_alpha()
        return self.utility_per_task(instance)

    def _member_alpha(self) -> float:
        """``alpha``; a family without one is refused."""
        if self.alpha is None:
            raise UnknownNameError(f"mechanism: '{self.name}' is a family; name a member as {self.name}:ALPHA")
        return self.alpha

    def _allocation(self, instance, tasks, method, solver, prices=None, info=None):
        c, w = self.utility_per_task(instance), instance.scalar_weights(self.name)
        live = instance.bounds() > 0
        welfare = float(w[live] @ alpha_utility(c[live] * tasks[live], self.alpha)) if live.any() else 0.0
        return Allocation(
            instance,
            tasks,
            self.name,
            method,
            solver,
            prices=prices,
            info={"alpha": self.alpha, "welfare": welfare, **(info or {})},
        )

    # -- declarative program ---------------------------------------------------------------
    def program(self, instance):
        c_all = self._check(instance)
        end = self._end()
        if end is not None:
            return end.program(instance)
        import cvxpy as cp

        a = self.alpha
        live, x, capacity, constraints = convex_task_variables(instance)
        if not live.any():
            return _nobody_runs(
                self.name, instance, lambda: self._allocation(instance, np.zeros(instance.n), "program", "none")
            )
        D, R, T = instance.demand[live], instance.capacity, instance.bounds()[live]
        w, c = instance.scalar_weights(self.name)[live], c_all[live]
        # The objective is scaled by u0^(alpha-1), u0 a typical utility (that of an equal split of
        # every resource), which leaves the optimum unchanged and keeps the power terms near 1.
        equal_split = np.min(np.where(D > 0, (R / max(instance.n, 1)) / np.where(D > 0, D, 1), np.inf), axis=1)
        u0 = float(np.median(c * np.minimum(equal_split, T))) if live.any() else 1.0
        log_coef = np.log(w) + (1 - a) * np.log(c / u0) - np.log(abs(1 - a))
        if a < 1:  # a concave power: power cones
            problem = cp.Problem(cp.Maximize(np.exp(log_coef) @ cp.power(x, 1 - a)), constraints)
        else:  # min sum coef x^(1-a) as min log sum exp(log coef + (1-a) log x): same optimum,
            # and exponential cones stay accurate where x^(-19) in power cones does not
            problem = cp.Problem(cp.Minimize(cp.log_sum_exp(log_coef + (1 - a) * cp.log(x))), constraints)
        utility = "dominant share s_i = mu_i x_i" if self.on == "shares" else "task count x_i"
        description = (
            f"{self.name}: max sum_i w_i U(c_i x_i), U(z) = z^(1-{a:g})/(1-{a:g}), "
            f"c_i x_i = {utility} / w_i\n  s.t. D^T x <= R, 0 <= x <= T  (power-cone program)\n"
            f"x is the vector {convex_legend(instance.users, live)}"
        )

        def solve(prog):
            solver = solve_cvxpy(problem, self.name)
            tasks = np.zeros(instance.n)
            tasks[live] = np.clip(np.asarray(x.value, dtype=float), 0, None)
            # the objective was scaled by u0^(a-1): undo it so prices are in welfare per unit
            log_scale = (1 - a) * np.log(u0)
            if a > 1:  # d log G = dG / G: multiply by G at the optimum
                with np.errstate(divide="ignore"):
                    log_scale += _logsumexp(log_coef + (1 - a) * np.log(tasks[live]))
            # prices in welfare per unit of resource; beyond float range (alpha in the hundreds)
            # they are not reported
            prices = (
                np.clip(np.asarray(capacity.dual_value, dtype=float), 0, None) * np.exp(log_scale)
                if abs(log_scale) < 700
                else None
            )
            return self._allocation(instance, tasks, "program", solver, prices)

        return Program(self.name, description, [("alpha-fair", problem)], solve)

    # -- fast path: Newton on the dual ------------------------------------------------------
    def fast(self, instance):
        c = self._check(instance)
        end = self._end()
        if end is not None:
            return end.fast(instance)
        if not MIN_FAST_ALPHA <= self.alpha <= MAX_FAST_ALPHA:
            raise SolverError(
                f"{self.name}: the fast path (dual Newton) computes {MIN_FAST_ALPHA:g} <= alpha <= "
                f"{MAX_FAST_ALPHA:g} (fairalloc.core.limits); use method='program'"
            )
        from fairalloc.engines.dual_newton import alpha_fair_dual

        tasks, prices, iterations = alpha_fair_dual(
            instance.demand,
            instance.capacity,
            instance.scalar_weights(self.name),
            c,
            instance.bounds(),
            self.alpha,
            name=self.name,
            check=False,
        )  # a validated Instance
        return self._allocation(instance, tasks, "fast", "numpy dual Newton", prices, {"newton_iterations": iterations})


@register("alpha-fair")
class AlphaFairShares(AlphaFair):
    summary = "alpha-fairness of (weighted) dominant shares: 0 utilitarian, 1 CEEI, inf DRF"
    about = (
        "Higher alpha trades efficiency for fairness; on the paper's example only alpha = inf (DRF) is "
        "strategy-proof, none resource monotonic."
    )
    section = "5"
    on = "shares"


@register("alpha-tasks")
class AlphaFairTasks(AlphaFair):
    summary = "alpha-fairness of (weighted) task counts: 0 most tasks, 1 CEEI, inf task max-min"
    about = (
        "Like alpha-fair but on task counts, not dominant shares: alpha = 1 is still CEEI, alpha = inf evens "
        "out task counts (not DRF)."
    )
    section = "5"
    on = "tasks"


@register("fds")
class FDS(Mechanism):
    summary = "FDS family of Joe-Wong et al.: fairness f_beta times efficiency (sum of shares)^lambda"
    about = (
        "beta weighs fairness, lambda efficiency; lambda = (1-beta)/beta is alpha-fair:beta; parameters "
        "without a convex program are refused."
    )
    section = "5"
    parameters = "BETA:LAMBDA"
    #: a function of dominant shares only: the same in any unit of a resource or a task
    scaling = "users"

    def __init__(self, beta: float | None = None, lam: float | None = None):
        self.beta, self.lam = beta, lam

    def with_parameters(self, text):
        parts = text.split(":")
        if len(parts) != 2:
            raise UnknownNameError(f"mechanism: fds: write fds:BETA:LAMBDA, e.g. fds:0.5:2 (got 'fds:{text}')")
        beta, lam = (parse_parameter(p, what, "fds") for p, what in zip(parts, ("beta", "lambda")))
        lam0 = (1 - beta) / beta if beta > 0 else math.nan
        if not (beta > 0 and beta != 1 and math.isfinite(beta) and math.isfinite(lam)):
            raise UnknownNameError(
                f"mechanism: fds: beta must be a finite number > 0 other than 1 "
                f"(beta = 1 is degenerate: use alpha-fair:1), and lambda finite (got fds:{text})"
            )
        if (beta < 1 and lam < lam0) or (beta > 1 and lam > lam0):
            side = ">=" if beta < 1 else "<="
            raise UnknownNameError(
                f"mechanism: fds:{text}: not a convex program; with beta = {beta:g} lambda must be "
                f"{side} (1-beta)/beta = {lam0:.6g}"
            )
        member = FDS(beta, lam)
        member.name, member.parameters = f"fds:{format_parameter(beta)}:{format_parameter(lam)}", ""
        return member

    def program(self, instance):
        import cvxpy as cp

        if instance.weights is not None:
            raise CaseError(
                "weight: the FDS family is defined on unweighted dominant shares; use alpha-fair for weighted users"
            )
        beta, lam = self.beta, self.lam
        lam0 = (1 - beta) / beta
        live, x, capacity, constraints = convex_task_variables(instance)
        if not live.any():
            return _nobody_runs(
                self.name, instance, lambda: Allocation(instance, np.zeros(instance.n), self.name, "program", "none")
            )
        mu = instance.per_task_dominant_share[live]
        s = cp.multiply(mu, x)
        total = cp.sum(s)
        if beta < 1:
            objective = cp.Maximize((lam - lam0) * cp.log(total) + cp.log(cp.sum(cp.power(s, 1 - beta))) / beta)
        else:
            objective = cp.Minimize((lam - lam0) * cp.log(total) + cp.log_sum_exp((1 - beta) * cp.log(s)) / beta)
        problem = cp.Problem(objective, constraints)
        description = (
            f"{self.name}: max F = f_beta(s) (sum s)^lambda, beta = {beta:g}, lambda = {lam:g}, "
            f"as the convex program  {'max' if beta < 1 else 'min'} (lambda - lambda_0) log S "
            f"+ (1/beta) log sum_i s_i^(1-beta)\n  s.t. D^T x <= R, 0 <= x <= T\n"
            f"x is the vector {convex_legend(instance.users, live)}"
        )

        def solve(prog):
            solver = solve_cvxpy(problem, self.name)
            tasks = np.zeros(instance.n)
            tasks[live] = np.clip(np.asarray(x.value, dtype=float), 0, None)
            return Allocation(
                instance,
                tasks,
                self.name,
                "program",
                solver,
                info={"beta": beta, "lambda": lam, "fds": fds_value(tasks[live] * mu, beta, lam)},
            )

        return Program(self.name, description, [("FDS", problem)], solve)


def _nobody_runs(name, instance, empty) -> Program:
    """Every user is bounded to 0 tasks: ``empty()`` builds the empty allocation, nothing to solve."""
    return Program(name, f"{name}: every user has max_tasks = 0", [], lambda prog: empty())


def fds_value(shares: np.ndarray, beta: float, lam: float) -> float:
    """``F(s) = f_beta(s) (sum s)^lambda`` as Joe-Wong et al. write it."""
    total = float(np.sum(shares))
    fairness = np.sign(1 - beta) * np.sum((shares / total) ** (1 - beta)) ** (1 / beta)
    return float(fairness * total**lam)


__all__ = ["AlphaFair", "AlphaFairShares", "AlphaFairTasks", "FDS", "alpha_utility", "fds_value"]


def _logsumexp(a: np.ndarray) -> float:
    """``log(sum(exp(a)))`` without overflow (shifted by the largest term): scipy.special's
    ``logsumexp`` on a vector, which would cost this module scipy's import for one line."""
    a = np.asarray(a, dtype=float)
    if a.size == 0:
        return -math.inf
    top = float(np.max(a))
    if not math.isfinite(top):  # all -inf gives -inf; an inf gives inf; a nan gives nan
        return top
    return top + math.log(float(np.sum(np.exp(a - top))))
