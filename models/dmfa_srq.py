"""DMFA-SRQ: dynamic multi-resource fair allocation based on shared resource quantities.

Zhang, Liu, Li, Zhang, "Dynamic fair allocation of multi-resources based on shared resource
quantity" (基于共享资源量的动态多资源公平分配策略), Journal on Communications 2016,
doi:10.11959/j.issn.1000-436x.2016144: the program of section 3 (Eq. 4), its properties and fast
algorithm in the sections after it (the text we worked from lost its formulas; docs/formulations.md
section 6 reconstructs them).  Dynamic DRF (Kash, Procaccia, Shah,
"No Agent Left Behind: Dynamic Fair Division of Multiple Resources", JAIR 2014) is the special
case of equal shares ``q_i = 1/n``.

Users arrive in order; user ``i`` brings a quantity ``q_i`` of every resource (``sum q_i = 1``),
so after ``k`` arrivals the pool holds ``Q_k = q_1 + ... + q_k`` of each (normalised) resource.
Demands are normalised so ``x_i`` is user i's dominant share (:func:`fairalloc.analysis.dynamic_properties.normalised`).
At arrival ``k`` (Eq. 4 of the paper)::

    max M^k  s.t.  x_i^k >= M^k q_i                 (i <= k)
                   x_i^k >= x_i^(k-1)               (i <  k)   irreversibility
                   sum_{i<=k} x_i^k d_ij <= Q_k     (every resource j)

**Lemma 1** (the allocation is the smallest point reaching ``M^k``): ``x_i^k = max(M^k q_i,
x_i^(k-1))``, hence ``x_i^k = q_i max(M^i, ..., M^k)``: a whole history is the vector ``M``.

**Fast step.** With ``W_i = x_i^(k-1) / q_i`` (``W_k = 0``), ``g_j(M) = sum_i max(M, W_i) q_i d_ij``
is piecewise linear and non-decreasing, with breakpoints ``W``.  ``W_i`` is a running maximum of
``M`` over ``[i, k-1]``, so it is already sorted (non-increasing in arrival order): prefix sums of
``W_i q_i d_ij`` and suffix sums of ``q_i d_ij`` give ``g`` at every breakpoint, the first feasible
breakpoint brackets ``M^k``, and the linear piece gives it exactly: ``O(k m)`` per arrival (the
paper's bisection is ``O(k log k)``; no sort is needed here).  :func:`threshold_levels` does
the same on blocks of users with equal levels, tracking each resource's free room ``Q_k - g_j``
instead of sums of size ``Q_k``: amortised ``O(m)`` per arrival, so a history of the Google
trace's 670k arrivals takes seconds, and each ``M^k`` is exact to a few roundings of itself
whatever ``q_k`` (its docstring states the bound).

**Static optimum** (Eq. 5, weighted DRF with weights ``q``): ``x_i = q_i / max_j sum_l q_l d_lj``.

Properties: dynamic Pareto optimality, sharing incentive (``x_i^k >= q_i``), dynamic envy-freeness,
strategy-proofness, irreversibility (``fairalloc check CASE -m dmfa-srq``).

Worked example (constructed for fairalloc; docs/formulations.md section 6):
``d = [[1, 1/2], [1/3, 1], [1, 1]]``, ``q = (.5, .3, .2)``:

>>> import fairalloc
>>> inst = fairalloc.Instance.from_arrays([1, 1], [[1, .5], [1/3, 1], [1, 1]], shared=[.5, .3, .2])
>>> a = fairalloc.solve(inst, "dmfa-srq")
>>> a.history.M.round(6).tolist(), a.history.x_at(2).round(6).tolist()
([1.0, 1.333333, 1.0], [0.666667, 0.4])
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program, linear_expression, lp_name, lp_names, solve_lp, task_variables
from fairalloc.core.deferred import deferred
from fairalloc.core.errors import CaseError, FairallocError
from fairalloc.core.limits import MAX_DYNAMIC_PROGRAM_USERS
from fairalloc.core.registry import Mechanism, register
from fairalloc.core.tolerances import ROOM_ULPS
from fairalloc.engines.dynamic import History, binding_per_arrival, binding_resources, normalised, shared_quantities

if TYPE_CHECKING:
    import pulp
else:
    pulp = deferred("pulp")


def threshold_step(W: np.ndarray, qd: np.ndarray, pool: float) -> tuple[float, np.ndarray]:
    """``M^k`` for breakpoints ``W`` (non-increasing, last = 0) and rows ``q_i d_i``; and ``g(M^k)``.

    The former ``O(k m)`` step, kept for benchmarks and tests: it finds a room of size ``q_k`` as
    the difference of two sums of size ``Q_k``, so its ``M^k`` is exact to about ``eps Q_k / q_k``
    only (:func:`threshold_levels` is exact to a few ``eps`` relative).  The first breakpoint
    within the pool brackets ``M^k``; the level is kept below the breakpoint above it."""
    k, m = qd.shape
    suffix = np.zeros((k + 1, m))
    suffix[:k] = np.cumsum(qd[::-1], axis=0)[::-1]  # sum_{i >= p} q_i d_ij
    prefix = np.zeros((k + 1, m))
    prefix[1:] = np.cumsum(W[:, None] * qd, axis=0)  # sum_{i < p} W_i q_i d_ij
    at_breakpoints = W[:, None] * suffix[:k] + prefix[:k]  # g(W_p), users p.. at M = W_p
    # W_k = 0 raises nothing: feasible, whatever the rounding of the pool
    feasible = np.append((at_breakpoints[:-1] <= pool).all(axis=1), True)
    p = int(np.argmax(feasible))  # first feasible breakpoint
    rate = suffix[p]
    room = pool - prefix[p]
    M = float(np.min(room[rate > 0] / rate[rate > 0]))
    if p > 0:
        M = min(M, float(W[p - 1]))  # g(W_(p-1)) exceeds the pool: M^k is below it
    used = M * rate + prefix[p]
    return M, used


def threshold_levels(
    qd: np.ndarray, q: np.ndarray, progress: Callable[[int], object] | None = None
) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Every arrival's ``M^k``, resource use ``g(M^k)`` and binding resources, for rows ``q_i d_i``
    and shares ``q_i`` (the pool grows by ``q_k`` at arrival ``k``): the threshold step on
    *blocks* of users, walking from the newest block and tracking each resource's free room.

    The levels ``W_i = max(M^i .. M^k)`` are non-increasing in ``i``, and an arrival sets every
    level below ``M^k`` to ``M^k``: users with equal levels form blocks, a stack from the oldest
    (highest level) to the newest, and an arrival merges the blocks at or below the threshold
    into one.  Walking down from the newest block, raising the blocks walked to the level of the
    next one costs ``(level_(b-1) - level_b) * rate`` of each resource; the walk stops at the
    first block whose level the room ``Q_k - g`` cannot pay, and ``M^k`` is on that linear piece.
    Every block walked is merged away, so a history costs amortised ``O(m)`` per arrival.
    Plain Python floats, because with a handful of resources numpy's per-call overhead is most
    of the work.  ``progress(done)`` is called every :data:`PROGRESS_EVERY` arrivals.

    **Error bound.**  The step never subtracts sums of size ``Q_k``: the room it divides is the
    room left after the last arrival plus ``q_k``, the costs are sums of non-negative terms, and
    the resource that sets ``M^k`` is left with a room of exactly 0 (as it is by definition), so
    the computed ``M^k`` is within about ``(b + 3) eps M^k`` of the exact level for the computed
    room (``b`` blocks merged, ``eps`` the double's unit roundoff), whatever ``q_k``: the error
    does not grow with ``1 / q_k``.  A resource that does not bind carries the rounding of its
    room's updates (relative to that room, never to ``Q_k``) into the steps where it binds later;
    a room within :data:`~fairalloc.core.tolerances.ROOM_ULPS` roundings of the numbers it was
    computed from is a tie with the binding resource and is zero.  Measured against a 50-digit
    reference on synthetic Google-like histories (Dirichlet(1) shares, 4 resources): 3.0e-15
    relative at 20k arrivals, 4.3e-14 at 200k, 1.6e-14 at 670k.  (The former step found a room
    of size ``q_k`` as a difference of sums of size ``Q_k`` and accepted ``1e-12 Q_k`` of
    overshoot: ``M^k`` off by up to ``1e-12 Q_k / q_k``; 6.1e-9, 3.7e-7 and 1.4e-6 absolute on
    those histories, 6.7e-2 on the 670k history of issue 36.)  tests/test_fast_dynamic.py holds
    every ``M^k`` to :data:`~fairalloc.core.tolerances.DYNAMIC_STEP` of an exact rational
    reference on histories with shares down to 1e-15.
    """
    n, m = qd.shape
    M, free = np.zeros(n), np.zeros((n, m))
    stack = _Blocks(m)
    for k, (row, share) in enumerate(zip(qd.tolist(), q.tolist())):
        M[k] = stack.arrive(row, share)
        free[k] = stack.room
        if progress is not None and (k + 1) % PROGRESS_EVERY == 0:
            progress(PROGRESS_EVERY)
    if progress is not None:
        progress(n % PROGRESS_EVERY)
    pools = np.cumsum(q)  # Q_k, as History sums them
    used = pools[:, None] - free
    return M, used, binding_per_arrival(used, pools)


PROGRESS_EVERY = 8192  # arrivals between two calls of threshold_levels' progress

_TIE = ROOM_ULPS * sys.float_info.epsilon  # a room this close to 0 (relative) is a rounding of 0


class _Blocks:
    """The stack of :func:`threshold_levels`: per block (oldest first) its level and its sum of
    ``q_i d_i``; ``room`` is ``Q_k - g_j`` on every resource after the last arrival."""

    def __init__(self, m: int) -> None:
        self.level: list[float] = []
        self.block: list[list[float]] = []
        self.room: list[float] = [0.0] * m

    def arrive(self, row: list[float], share: float) -> float:
        """The newcomer joins at level 0 with ``share`` more room on every resource; the blocks
        the room can lift to the level above them merge, and the last piece gives ``M^k``."""
        level, block = self.level, self.block
        room = [r + share for r in self.room]
        rate, cost, b = row, [0.0] * len(row), len(level)  # the newcomer: block b, level 0
        floor = 0.0
        while b > 0:
            lift = level[b - 1] - floor
            dearer = [c + lift * r for c, r in zip(cost, rate)]
            if any(c > f for c, f in zip(dearer, room)):
                break
            b, floor, cost = b - 1, level[b - 1], dearer
            rate = [r + s for r, s in zip(rate, block[b])]
        left = [f - c for f, c in zip(room, cost)]
        j = min(range(len(rate)), key=lambda i: left[i] / rate[i])
        M = floor + left[j] / rate[j]
        if b > 0:
            M = min(M, level[b - 1])  # its cost exceeded the room: M^k is below it
        for i, (f, c, r) in enumerate(zip(room, cost, rate)):
            spent = c + (M - floor) * r
            room[i] = 0.0 if i == j or f - spent <= _TIE * (f + spent) else f - spent
        del level[b:], block[b:]
        level.append(M)
        block.append(rate)
        self.room = room
        return M


def static_optimum(instance, q: np.ndarray | None = None) -> np.ndarray:
    """Eq. 5: the static weighted-DRF dominant shares ``x_i = q_i / max_j sum_l q_l d_lj``."""
    d = normalised(instance, "dmfa-srq")
    q = shared_quantities(instance, "dmfa-srq") if q is None else q
    return q / np.max(q @ d)


@register("dmfa-srq")
class DMFASRQ(Mechanism):
    summary = "DMFA-SRQ (dynamic, shared quantities; JoC 2016): raise M^k q_i at each arrival"
    about = (
        "Users arrive over time; nothing granted is taken back, each gets at least what her own contribution "
        "runs, and lying never pays."
    )
    section = "6"
    kind = "dynamic"

    def shares(self, instance) -> np.ndarray:
        return shared_quantities(instance, self.name)

    def _unbounded(self, instance) -> None:
        """The dynamic mechanisms have no task bounds: an instance with one is refused, not ignored."""
        if instance.max_tasks is not None and np.isfinite(instance.max_tasks).any():
            i = int(np.argmax(np.isfinite(instance.max_tasks)))
            raise CaseError(
                f"users.{instance.users[i]}.max_tasks: {self.name} takes no task bounds "
                f"(remove max_tasks, or use a static mechanism)"
            )

    def _allocation(self, instance, M, binding, used, method, solver, extra=None):
        q = self.shares(instance)
        mu = instance.per_task_dominant_share
        history = History(instance, mu, q, M=np.asarray(M), binding=binding, used=used)
        info = {"arrivals": instance.n, "final_M": float(M[-1]), **(extra or {})}
        return Allocation(instance, history.final() / mu, self.name, method, solver, info=info, history=history)

    # -- fast path ------------------------------------------------------------------------------
    def fast(self, instance, progress: Callable[[int], object] | None = None):
        """:func:`threshold_levels`: every arrival's ``M^k`` in amortised ``O(m)`` time;
        ``progress(arrivals)`` as they are done (a long replay's bar)."""
        self._unbounded(instance)
        d = normalised(instance, self.name)
        q = self.shares(instance)
        M, used, binding = threshold_levels(q[:, None] * d, q, progress)
        return self._allocation(instance, M, binding, used, "fast", "block-stack threshold step")

    # -- declarative program: one LP per arrival ------------------------------------------------
    def program(self, instance):
        description = (
            f"{self.name}: one LP per arrival k, in levels y_i = x_i / q_i (the same program, "
            "well scaled when some q_i are tiny):\n"
            "  max M  s.t.  y_i >= M (i <= k),  y_i >= y_i^(k-1) (i < k),  sum_i q_i d_ij y_i <= Q_k;\n"
            "then x_i^k = q_i max(M, y_i^(k-1)) (Lemma 1: the smallest allocation reaching M).\n"
            "In arrival k's LP, y_i is level_<user>, M is arrival<k>_M; constraints at_M_<user>, "
            "pool_<resource>."
        )
        self._unbounded(instance)
        d = normalised(instance, self.name)
        q = self.shares(instance)
        names = (
            lp_names("level", instance.users),
            lp_names("at_M", instance.users),
            lp_names("pool", instance.resources),
        )
        first = self._arrival_lp(q[:, None] * d, q, names, np.zeros(0))
        return Program(
            self.name,
            description,
            [("arrival 1", first[0])],
            solve=lambda prog: self._solve_lps(instance, q, d, names, first, prog),
            later="later arrivals are built as the sequence is solved (each starts from the one before)",
        )

    def _arrival_lp(self, qd, q, names, W):
        """Arrival ``k = len(W) + 1``'s LP over users ``1..k``, above the levels ``W`` of the others."""
        k, m = len(W) + 1, qd.shape[1]
        levels, at_level, pools = names
        lp = pulp.LpProblem(lp_name(f"{self.name}_arrival{k}"), pulp.LpMaximize)
        level = lp.add_variable(f"arrival{k}_M", 0, None)
        ys = task_variables(lp, np.append(W, 0.0), np.full(k, np.inf), levels[:k])  # y_i >= y_i^(k-1)
        lp += level
        for i in range(k):
            lp += pulp.LpAffineExpression([(ys[i], 1.0), (level, -1.0)]) >= 0, at_level[i]
        for j in range(m):
            lp += linear_expression(ys, qd[:k, j]) <= float(q[:k].sum()), pools[j]
        return lp, level

    def _solve_lps(self, instance, q, d, names, first, prog):
        if instance.n > MAX_DYNAMIC_PROGRAM_USERS:
            raise FairallocError(
                f"method: {self.name} as a program solves one LP per arrival, the k-th with k "
                f"variables; {instance.n:,} users are more than {MAX_DYNAMIC_PROGRAM_USERS:,} "
                f"(fairalloc.core.limits.MAX_DYNAMIC_PROGRAM_USERS): use method='fast'"
            )
        n = instance.n
        qd = q[:, None] * d
        W = np.zeros(0)  # levels y_i^(k-1)
        M, binding, used, solver = np.zeros(n), [], np.zeros((n, d.shape[1])), ""
        del prog.models[1:]  # a solve that failed half-way starts again
        for k in range(1, n + 1):
            pool = float(q[:k].sum())
            lp, level = first if k == 1 else self._arrival_lp(qd, q, names, W)
            if k > 1:
                prog.models.append((f"arrival {k}", lp))
            solver = solve_lp(lp, f"{self.name} arrival {k}")
            M[k - 1] = level.varValue
            W = np.maximum(np.append(W, 0.0), M[k - 1])  # Lemma 1, in levels
            used[k - 1] = (q[:k] * W) @ d[:k]
            binding.append(binding_resources(used[k - 1], pool))
        return self._allocation(instance, M, binding, used, "program", f"pulp+{solver}")


@register("ddrf")
class DynamicDRF(DMFASRQ):
    summary = "Dynamic DRF (Kash, Procaccia, Shah 2014): DMFA-SRQ with equal shares 1/n"
    about = (
        "Every user brings 1/n of the pool; nothing granted is taken back, each keeps at least a 1/n "
        "dominant share, lying never pays."
    )
    section = "6"

    def shares(self, instance) -> np.ndarray:
        return np.full(instance.n, 1.0 / instance.n)


__all__ = ["DMFASRQ", "DynamicDRF", "static_optimum", "threshold_step"]
