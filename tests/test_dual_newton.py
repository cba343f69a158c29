"""The alpha-fair dual Newton engine (fairalloc.engines.dual_newton) against an independent cvxpy program,
its KKT conditions, the worked example of docs/formulations.md section 5, and its numerical range."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import fairalloc
from fairalloc import Instance, SolverError
from fairalloc.core.backends import solve_cvxpy
from fairalloc.core.tolerances import SATURATION
from fairalloc.engines.dual_newton import alpha_fair_dual
from fairalloc.testing import close, instances

SETTINGS = settings(
    max_examples=max(100, settings().max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

#: Interior-point precision (see CEEI_PROGRAM_TASKS_TOL in test_static_mechanisms.py): Clarabel
#: pins x to about the square root of its duality gap, the welfare (flat at the optimum) far better.
PROGRAM_TASKS_TOL = 1e-4
WELFARE_TOL = 1e-7
#: ... but a user whose marginal welfare per task (the price of her task) is below MINOR of the
#: largest far worse: the objective is that much flatter in her tasks (at alpha = 5 a user alone
#: on a resource of 18 has 1e-11 of the others' marginal; Clarabel gives her 17.68 for 18).
#: Her tasks must agree in what they are worth: |dx_i| times her price, against p . R.
MINOR, WORTH_TOL = 1e-3, 1e-6
#: The Newton answer satisfies the optimality conditions to rounding.
KKT_TOL = 1e-9


def utility(z, alpha):
    """``U_alpha(z)`` (``-inf`` at 0 for alpha >= 1)."""
    with np.errstate(divide="ignore"):
        return np.log(z) if alpha == 1 else z ** (1 - alpha) / (1 - alpha)


def welfare(x, w, c, alpha):
    return float(w @ utility(c * x, alpha))


def per_task(inst, on):
    """``c_i``: dominant share per task over weight, or one per task over weight."""
    w = inst.scalar_weights("test")
    return (inst.per_task_dominant_share if on == "shares" else np.ones(inst.n)) / w


def cvxpy_alpha_fair(D, R, w, c, T, alpha):
    """``max sum_i w_i U_alpha(c_i x_i)`` as a conic program (Clarabel), written here
    independently of fairalloc; None if Clarabel ends 'optimal_inaccurate' every way.

    In the variables ``y_i = x_i / b_i``, ``b_i`` the most tasks user ``i`` could run alone,
    ``y`` lies in ``[0, 1]`` and the objective is ``sum_i w_i (c_i b_i)^(1-alpha) U_alpha(y_i)``;
    its coefficients, divided by the largest, stay near 1 (unscaled, Clarabel ends inaccurate
    on as little as ``R = 1``, ``D = (7), (1)``).  Power cones; for alpha > 1 first the log of
    ``sum coef y^(1-alpha)`` (same minimiser) in exponential cones, which stay accurate where
    ``y^(1-alpha)`` in power cones often does not."""
    import cvxpy as cp

    with np.errstate(divide="ignore"):
        b = np.minimum(T, np.min(np.where(D > 0, R / np.where(D > 0, D, 1), np.inf), axis=1))
    log_coef = np.log(w) + (1 - alpha) * np.log(c * b)
    coef = np.exp(log_coef - log_coef.max())
    y = cp.Variable(len(w))
    constraints = [(D * b[:, None]).T @ y <= R, y >= 0, y <= 1]
    if alpha < 1:
        objectives = [cp.Maximize(coef @ cp.power(y, 1 - alpha))]
    else:
        objectives = [
            cp.Minimize(cp.log_sum_exp(np.log(coef) + (1 - alpha) * cp.log(y))),
            cp.Minimize(coef @ cp.power(y, 1 - alpha)),
        ]
    for objective in objectives:
        try:
            solve_cvxpy(cp.Problem(objective, constraints), f"alpha-fair {alpha} (test)")
        except SolverError:
            continue
        return np.clip(np.asarray(y.value, dtype=float), 0, None) * b
    return None


def kkt_violation(D, R, w, c, T, alpha, tasks, prices) -> float:
    """Largest violation of the KKT conditions of the alpha-fair program at ``(tasks, prices)``,
    relative (capacity for the resources, the task count for the users).

    Primal feasibility, ``p >= 0``, complementary slackness (a priced resource is used up) and
    stationarity: every user takes ``min(T_i, (k_i / p . D_i)^(1/alpha))`` at those prices."""
    live = T > 0
    used = tasks @ D
    worst = max(0.0, float(np.max((used - R) / R)), float(-prices.min()))
    priced = prices > 0
    if priced.any():
        worst = max(worst, float(np.max((R - used)[priced] / R[priced])))
    s = D[live] @ prices
    logk = np.log(w[live]) + (1 - alpha) * np.log(c[live])
    with np.errstate(divide="ignore", over="ignore"):
        want = np.minimum(T[live], np.exp((logk - np.log(s)) / alpha))
    stationarity = np.abs(tasks[live] - want) / np.maximum(want, 1.0)
    return max(worst, float(stationarity.max(initial=0.0)), float(np.abs(tasks[~live]).max(initial=0.0)))


def arrays(inst, on="shares"):
    return inst.demand, inst.capacity, inst.scalar_weights("test"), per_task(inst, on), inst.bounds()


# -- against the convex program --------------------------------------------------------------------


@SETTINGS
@given(inst=instances(weights="scalar", bounds=True), on=st.sampled_from(["shares", "tasks"]))
@pytest.mark.parametrize("alpha", [0.25, 0.5, 2, 5])
def test_matches_the_convex_program(alpha, inst, on):
    D, R, w, c, T = arrays(inst, on)
    tasks, prices, iterations = alpha_fair_dual(D, R, w, c, T, alpha)
    live = T > 0
    assert np.all(tasks[~live] == 0)
    assert np.all(tasks @ D <= R * (1 + 1e-12))  # an ulp overshoot is scaled back
    assert np.all(prices[~D[live].any(axis=0)] == 0)  # nobody demands it: price 0
    assert kkt_violation(D, R, w, c, T, alpha, tasks, prices) <= KKT_TOL
    if not live.any():
        assert iterations == 0
        return
    reference = cvxpy_alpha_fair(D[live], R, w[live], c[live], T[live], alpha)
    assume(reference is not None)  # Clarabel's trouble, not ours: rare (< 1 in 1000)
    program = np.zeros(inst.n)
    program[live] = reference
    price = D @ prices  # marginal welfare of a task of each user
    minor = live & (price < MINOR * price[live].max())
    assert close(tasks[~minor], program[~minor], PROGRAM_TASKS_TOL)
    assert np.all(price[minor] * np.abs(tasks - program)[minor] <= WORTH_TOL * (prices @ R))
    ours, theirs = welfare(tasks[live], w[live], c[live], alpha), welfare(program[live], w[live], c[live], alpha)
    assert close(ours, theirs, WELFARE_TOL)


# -- docs/formulations.md section 5: the 9 CPU / 18 GB example ---------------------------------------


def tasks_at(instance, alpha):
    D, R, w, c, T = arrays(instance)
    return alpha_fair_dual(D, R, w, c, T, alpha)[0]


@pytest.mark.parametrize("alpha, expected", [(2, [3.7279, 1.7574]), (5, [3.2834, 1.9055])])
def test_section_4_1_alpha(section_4_1, alpha, expected):
    assert tasks_at(section_4_1, alpha).round(4).tolist() == expected


def test_alpha_1_is_the_ceei_fast_path(section_4_1):
    ceei = fairalloc.solve(section_4_1, "ceei", method="fast")
    D, R, w, c, T = arrays(section_4_1)
    tasks, prices, _ = alpha_fair_dual(D, R, w, c, T, 1)
    assert tasks.tolist() == ceei.tasks.tolist() and prices.tolist() == ceei.prices.tolist()
    assert close(tasks, [45 / 11, 18 / 11], 1e-12)


def test_large_alpha_approaches_drf(section_4_1):
    drf = fairalloc.solve(section_4_1, "drf").tasks  # (3, 2)
    gaps = [np.abs(tasks_at(section_4_1, alpha) - drf).max() for alpha in (2, 5, 10, 50, 200)]
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[-2] < 0.03 and gaps[-1] < 0.01


def test_small_alpha_approaches_the_utilitarian_optimum(section_4_1):
    # on section 4.1 the utilitarian optimum is the vertex (45/11, 18/11) itself
    assert close(tasks_at(section_4_1, 0.05), [45 / 11, 18 / 11], 1e-12)
    # three users, two resources: the LP optimum gives the third user nothing; at alpha = 0.05
    # she gets 0.02 tasks and the linear welfare is within 0.05% of the optimum
    inst = Instance.from_arrays([10, 10], [[1, 2], [2, 1], [1, 1]])
    D, R, w, c, T = arrays(inst)
    lp = linprog(-c, A_ub=D.T, b_ub=R, method="highs")
    gaps = []
    for alpha in (0.5, 0.2, 0.05):
        tasks = alpha_fair_dual(D, R, w, c, T, alpha)[0]
        gaps.append(1 - float(c @ tasks) / -lp.fun)
    assert gaps == sorted(gaps, reverse=True) and 0 <= gaps[-1] < 1e-3


# -- numerical range ---------------------------------------------------------------------------------


def test_alpha_50_many_users_does_not_overflow():
    rng = np.random.default_rng(50)
    n, m = 5000, 4
    D = rng.uniform(0.1, 1.0, (n, m))
    D[:50] *= 1e-3  # tiny tasks: c_i ~ 1e-7, k_i = c_i^-49 ~ 1e340
    R = np.full(m, 0.3 * n)
    w = rng.integers(1, 4, n).astype(float)
    T = np.where(rng.random(n) < 0.2, 0.5, np.inf)
    c = (D / R).max(axis=1) / w
    with np.errstate(over="ignore"):
        assert np.isinf(w * c ** (1 - 50.0)).any()  # the naive k_i would overflow
    tasks, prices, iterations = alpha_fair_dual(D, R, w, c, T, 50)
    assert np.all(np.isfinite(tasks)) and np.all(tasks > 0) and np.all(tasks @ D <= R * (1 + 1e-12))
    assert np.all(np.isfinite(prices)) and iterations < 50
    assert kkt_violation(D, R, w, c, T, 50, tasks, prices) <= KKT_TOL
    # near the max-min end: the weighted dominant shares of the uncapped users nearly equal.  A user
    # at her bound may sit an ulp below it (the scale-back of an ulp overshoot of x @ D, which
    # depends on the BLAS's rounding): below the bound means below it by more than SATURATION.
    shares = (c * tasks)[tasks < T * (1 - SATURATION)]
    assert shares.max() / shares.min() < 1.2


@pytest.mark.parametrize("alpha", [0.05, 0.1, 20, 100])
def test_extreme_alpha_converges(alpha):
    rng = np.random.default_rng(7)
    n, m = 300, 5
    D = rng.uniform(0.1, 1.0, (n, m)) * (rng.random((n, m)) < 0.7)
    D[~D.any(axis=1), 0] = 0.5
    R = np.full(m, 0.3 * n)
    w, T = np.ones(n), np.where(rng.random(n) < 0.3, rng.uniform(0.05, 0.5, n), np.inf)
    c = (D / R).max(axis=1)
    tasks, prices, iterations = alpha_fair_dual(D, R, w, c, T, alpha)
    assert kkt_violation(D, R, w, c, T, alpha, tasks, prices) <= KKT_TOL
    assert iterations <= 60


# -- edges and errors --------------------------------------------------------------------------------


def test_bounded_to_zero_and_undemanded_resources():
    D = np.array([[1.0, 0, 2], [2, 0, 1], [1, 5, 0]])
    R = np.array([10.0, 3, 10])
    T = np.array([np.inf, np.inf, 0.0])  # the only user of resource 2 may run nothing
    tasks, prices, _ = alpha_fair_dual(D, R, np.ones(3), np.ones(3), T, 2)
    assert tasks[2] == 0 and prices[1] == 0 and close(tasks[:2], [10 / 3, 10 / 3], 1e-12)
    tasks, prices, iterations = alpha_fair_dual(D, R, np.ones(3), np.ones(3), np.zeros(3), 2)
    assert tasks.tolist() == [0, 0, 0] and prices.tolist() == [0, 0, 0] and iterations == 0


def test_slack_bounds_give_every_user_her_bound():
    D, R = np.array([[1.0, 1], [2, 1]]), np.array([10.0, 10])
    tasks, prices, _ = alpha_fair_dual(D, R, np.ones(2), np.ones(2), np.array([1.0, 2]), 3)
    assert tasks.tolist() == [1, 2] and prices.tolist() == [0, 0]


def test_failure_is_a_solver_error(section_4_1):
    D, R, w, c, T = arrays(section_4_1)
    with pytest.raises(SolverError, match=r"alpha-fair: the dual Newton method did not converge in 1 iter"):
        alpha_fair_dual(D, R, w, c, T, 5, max_iter=1)


@pytest.mark.parametrize("alpha", [0, -1, np.inf, np.nan])
def test_alpha_out_of_range(section_4_1, alpha):
    D, R, w, c, T = arrays(section_4_1)
    with pytest.raises(ValueError, match="alpha must be positive and finite"):
        alpha_fair_dual(D, R, w, c, T, alpha)


def test_malformed_arrays(section_4_1):
    D, R, w, c, T = arrays(section_4_1)
    with pytest.raises(ValueError, match="shapes"):
        alpha_fair_dual(D, R[:1], w, c, T, 2)
    with pytest.raises(ValueError, match="c must be positive"):
        alpha_fair_dual(D, R, w, np.zeros(2), T, 2)
    with pytest.raises(ValueError, match="D must be non-negative"):
        alpha_fair_dual(-D, R, w, c, T, 2)


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_a_hessian_summed_block_by_block_solves_alike(alpha):
    """Above GRAM_CELLS cells the Hessian is summed over blocks of rows (the last one short) in
    one buffer: it is the one product to rounding, and the answer satisfies the KKT conditions.
    Bounds on some users and a resource only they demand exercise the sub-matrix of free prices."""
    from fairalloc.engines.dual_newton import GRAM_CELLS, _weighted_gram

    rng = np.random.default_rng(36)
    n, m = 3 * GRAM_CELLS // 6 + 17, 6
    D = rng.uniform(0.1, 1.0, (n, m))
    D[rng.random(n) < 0.5, 5] = 0.0
    c = rng.uniform(0.5, 2.0, n)
    one = (D * c[:, None]).T @ D
    assert np.all(np.abs(_weighted_gram(D, c) - one) <= 1e-12 * np.abs(one))
    R, w = np.full(m, 0.3 * n), rng.uniform(0.5, 2.0, n)
    T = np.where(rng.random(n) < 0.2, rng.uniform(0.1, 1.0, n), np.inf)
    tasks, prices, _ = alpha_fair_dual(D, R, w, c, T, alpha)
    assert kkt_violation(D, R, w, c, T, alpha, tasks, prices) <= KKT_TOL
