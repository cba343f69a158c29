"""The properties of dynamic allocation (users arrive one at a time and allocations are never
taken back; docs/formulations.md section 6), checked on a :class:`~fairalloc.engines.dynamic.History`:
dynamic Pareto optimality (an LP at each step), sharing incentive (``x_i^k >= q_i``), dynamic
envy-freeness, strategy-proofness (a misreport at arrival never raises the true value at any
later step, searched by the verifier), irreversibility and shared monotonicity.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fairalloc.analysis.results import (
    DynamicEnvyWitness,
    DynamicLieWitness,
    DynamicParetoWitness,
    DynamicSharingIncentiveWitness,
    IrreversibilityWitness,
    Lie,
    PropertyResult,
    SharedMonotonicityWitness,
)
from fairalloc.analysis.valuation import tolerance
from fairalloc.core.registry import Mechanism
from fairalloc.core.vocabulary import DYNAMIC_PROPERTIES
from fairalloc.engines.dynamic import History, normalised, shared_quantities  # noqa: F401  (re-exported)

# -- dynamic properties ---------------------------------------------------------------------------


def _steps_to_check(n: int, limit: int = 200) -> list[int]:
    return list(range(1, n + 1)) if n <= limit else sorted(set(np.linspace(1, n, limit).astype(int)))


def irreversibility(history: History, **_) -> PropertyResult:
    """No user's share ever falls: the smallest ``x_i^k - x_i^(k-1)`` over every step and earlier user."""
    change, where = _smallest_change(history)
    if where is None or change >= -tolerance(1.0) * 1e-3:
        return PropertyResult("irreversibility", True, None if where is None else change)
    k, i = where
    inst = history.instance
    return PropertyResult(
        "irreversibility",
        False,
        change,
        IrreversibilityWitness(
            k, inst.users[k - 1], inst.users[i], float(history.x_at(k - 1)[i]), float(history.x_at(k)[i])
        ),
    )


def _smallest_change(history: History) -> tuple[float, tuple[int, int] | None]:
    """The smallest ``x_i^k - x_i^(k-1)`` (``i < k``) and where: linear in the size of the history.

    An explicit history is compared step by step.  A compact one (``x_i^k = q_i W_i^k`` with the
    levels ``W_i^k = max(M^i .. M^k)``) is walked with its stack of equal-level blocks, oldest
    first: arrival ``k`` changes only the blocks whose level is below ``M^k``, by
    ``q_i (M^k - level)``, and merges them (each block is merged away once), so the smallest
    change of a step is 0 when the oldest block is left alone and otherwise the least of
    ``min(q in block) * (M^k - level)``.
    """
    worst: tuple[float, tuple[int, int] | None] = (np.inf, None)
    if history.steps is not None:
        for k in range(2, history.n + 1):
            drop = history.x_at(k)[: k - 1] - history.x_at(k - 1)
            i = int(np.argmin(drop))
            if drop[i] < worst[0]:
                worst = (float(drop[i]), (k, i))
        return worst
    assert history.M is not None, "irreversibility: a history needs M or steps"
    M, q = history.M, history.q
    blocks: list[tuple[float, int]] = []  # (level, the block's user with the least q), oldest first
    for k in range(history.n):
        merged = k  # the newcomer, and then the blocks it merges with: one block at level M^k
        if blocks:
            change, who = (0.0, blocks[0][1]) if blocks[0][0] >= M[k] else (np.inf, -1)
            while blocks and not blocks[-1][0] >= M[k]:  # a NaN level or M merges, and shows
                level, i = blocks.pop()
                if not q[i] * (M[k] - level) >= change:
                    change, who = float(q[i] * (M[k] - level)), i
                merged = i if q[i] < q[merged] else merged
            if not change >= worst[0] and not np.isnan(worst[0]):  # the first NaN stays
                worst = (change, (k + 1, who))
        blocks.append((float(M[k]), merged))
    return worst


def dynamic_sharing_incentive(history: History, **_) -> PropertyResult:
    worst: tuple[float, tuple[int, int] | None] = (np.inf, None)
    for k in _steps_to_check(history.n):
        slack = history.x_at(k) - history.q[:k]
        i = int(np.argmin(slack))
        if slack[i] < worst[0]:
            worst = (float(slack[i]), (k, i))
    margin, where = worst
    # an instance has a user, so some step's slack is finite unless the shares are NaN
    assert where is not None, "dynamic_sharing_incentive: no step with a finite slack (NaN shares?)"
    k, i = where
    if margin >= -1e-9:
        return PropertyResult("sharing_incentive", True, margin)
    inst = history.instance
    return PropertyResult(
        "sharing_incentive",
        False,
        margin,
        DynamicSharingIncentiveWitness(k, inst.users[i], float(history.x_at(k)[i]), float(history.q[i])),
    )


def dynamic_pareto_optimality(history: History, d: np.ndarray, **_) -> PropertyResult:
    """At step k, no allocation within the pool ``Q_k`` gives everyone as much and someone more."""
    from fairalloc.core.highs import solve_lp

    worst: tuple[float, tuple[int, np.ndarray] | None] = (-np.inf, None)
    for k in _steps_to_check(history.n):
        x = history.x_at(k)
        pool = float(history.q[:k].sum())
        res = solve_lp(-np.ones(k), d[:k].T, np.full(d.shape[1], pool * (1 + 1e-12)), x, np.inf)
        solved = res.status == 0 and res.fun is not None and res.x is not None
        gain = float(-res.fun - x.sum()) if solved and res.fun is not None else 0.0
        if gain > worst[0]:
            worst = (gain, (k, res.x if solved and res.x is not None else x))
    gain, where = worst
    assert where is not None, "dynamic_pareto_optimality: no step with a finite gain (NaN shares?)"
    k, y = where
    if gain <= 1e-7 * max(1.0, history.n):
        return PropertyResult("dynamic_pareto_optimality", True, 0.0 - gain)
    inst = history.instance
    return PropertyResult(
        "dynamic_pareto_optimality",
        False,
        -gain,
        DynamicParetoWitness(k, gain, [inst.users[i] for i in range(k) if y[i] > history.x_at(k)[i] + 1e-9]),
    )


def dynamic_envy_freeness(history: History, d: np.ndarray, **_) -> PropertyResult:
    """If i envies h at step k (weighted by q), h arrived first and got nothing since i arrived."""
    inst = history.instance
    for k in _steps_to_check(history.n, 60):
        x = history.x_at(k)
        for i in range(k):
            value = np.min(x[:k, None] * d[:k] / d[i], axis=1) * history.q[i] / history.q[:k]
            envied = np.flatnonzero(value > x[i] + 1e-9 * max(1.0, x[i]))
            for h in envied:
                if h == i:
                    continue
                before = history.x_at(i)[h] if i > 0 and h < i else None  # h's share when i arrived
                if h > i or before is None or x[h] > before + 1e-9 * max(1.0, before):
                    return PropertyResult(
                        "dynamic_envy_freeness",
                        False,
                        float(x[i] - value[h]),
                        DynamicEnvyWitness(k, inst.users[i], inst.users[h], float(x[i]), float(value[h]), bool(h < i)),
                    )
    return PropertyResult("dynamic_envy_freeness", True)


def dynamic_strategy_proofness(
    history: History, mechanism: Mechanism, *, budget: int = 300, seed: int = 0, method="auto", focus=None, **_
) -> PropertyResult:
    """No user raises her true value at any step after her arrival by misreporting on arrival."""
    from fairalloc.analysis.manipulation import search_lie

    inst = history.instance
    worst: Lie | None = None
    users = range(inst.n) if focus is None else [focus]
    evaluations = 0
    for i in users:
        truthful = history.path(i) / history.mu[i]

        def gain_of(report: np.ndarray, i=i, truthful=truthful) -> float:
            alloc = mechanism.allocate(inst.with_demand(i, report), method)
            lied = alloc.history
            true_d = inst.demand[i]
            values = lied.path(i) / lied.mu[i] * np.min(report / true_d)
            return float(np.max(values - truthful))

        lie = search_lie(mechanism, inst, i, budget=budget, seed=seed, method=method, evaluate=gain_of)
        evaluations += lie.evaluations
        if worst is None or lie.manipulated_tasks > worst.manipulated_tasks:
            worst = lie
    gain = worst.manipulated_tasks if worst else 0.0
    note = f"no profitable lie found in {evaluations} evaluations (a search, not a proof)"
    if worst is None or gain <= 1e-7 * max(1.0, float(np.max(history.final() / history.mu))):
        return PropertyResult("strategy_proofness", True, 0.0 - gain, note=note, evaluations=evaluations)
    return PropertyResult(
        "strategy_proofness",
        False,
        -gain,
        DynamicLieWitness(worst.user, worst.reported_demand, gain),
        evaluations=evaluations,
    )


def shared_monotonicity(history: History, **_) -> PropertyResult:
    """A larger shared quantity never ends with a smaller dominant share: ``q_i > q_h`` implies
    ``x_i^k >= x_h^k`` at every step ``k``. Zhang et al. (2016) read this off their Figures 3 and
    4; it is not a property of DMFA-SRQ (case ``dmfa-srq-shared-monotonicity``)."""
    worst: tuple[float, tuple[int, int, int] | None] = (np.inf, None)
    for k in _steps_to_check(history.n):
        x, q = history.x_at(k), history.q[:k]
        order = np.argsort(q, kind="stable")
        qs, xs = q[order], x[order]
        starts = np.searchsorted(qs, qs, side="left")  # users before this index have smaller q
        later = np.flatnonzero(starts > 0)
        if later.size == 0:
            continue
        slack = xs[later] - np.maximum.accumulate(xs)[starts[later] - 1]
        t = int(later[np.argmin(slack)])
        if slack.min() < worst[0]:
            worst = (float(slack.min()), (k, int(order[t]), int(order[int(np.argmax(xs[: starts[t]]))])))
    if worst[1] is None or worst[0] >= -tolerance(1.0) * 1e-3:
        return PropertyResult("shared_monotonicity", True, None if worst[1] is None else worst[0])
    k, i, h = worst[1]
    inst, x = history.instance, history.x_at(k)
    return PropertyResult(
        "shared_monotonicity",
        False,
        worst[0],
        SharedMonotonicityWitness(
            k, inst.users[i], float(history.q[i]), float(x[i]), inst.users[h], float(history.q[h]), float(x[h])
        ),
    )


DYNAMIC_CHECKERS: dict[str, Callable] = {
    "sharing_incentive": dynamic_sharing_incentive,
    "strategy_proofness": dynamic_strategy_proofness,
    "dynamic_pareto_optimality": dynamic_pareto_optimality,
    "dynamic_envy_freeness": dynamic_envy_freeness,
    "irreversibility": irreversibility,
    "shared_monotonicity": shared_monotonicity,
}
assert tuple(DYNAMIC_CHECKERS) == DYNAMIC_PROPERTIES
