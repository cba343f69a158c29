"""The direct HiGHS call (fairalloc.core.highs.solve_lp) answers as scipy's linprog(method="highs")
did at the three places it replaced: same status, same optimum, and (for an optimum) a point and
row duals that satisfy the LP to the project's feasibility tolerance (issue 18)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from fairalloc.core.highs import solve_lp
from fairalloc.core.tolerances import AGREEMENT, FEASIBILITY


@st.composite
def random_lps(draw):
    n = draw(st.integers(1, 7))
    rows = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 10, (rows, n)).astype(float) * (rng.random((rows, n)) < draw(st.floats(0.3, 1.0)))
    b = rng.integers(0, 100, rows).astype(float)
    c = -rng.random(n) * rng.integers(0, 2, n) if draw(st.booleans()) else -rng.random(n)
    lower = rng.random(n) * rng.integers(0, 2, n) * draw(st.sampled_from([0.0, 1.0, 20.0]))
    upper = np.where(rng.random(n) < 0.5, np.inf, lower + rng.random(n) * 10)
    return c, A, b, lower, upper


@settings(deadline=None, max_examples=150)
@given(random_lps())
def test_solve_lp_agrees_with_linprog(lp):
    c, A, b, lower, upper = lp
    ref = linprog(c, A_ub=A, b_ub=b, bounds=np.column_stack([lower, upper]), method="highs")
    got = solve_lp(c, A, b, lower, upper)
    assert got.status == ref.status, (got.message, ref.message)
    if ref.status != 0:
        return
    assert got.fun == pytest.approx(ref.fun, rel=AGREEMENT, abs=AGREEMENT)
    x = got.x
    assert np.all(A @ x <= b + FEASIBILITY * np.maximum(1.0, np.abs(b)))
    assert np.all(x >= lower - FEASIBILITY) and np.all(x <= upper + FEASIBILITY * np.maximum(1.0, upper))
    # the row duals prove the optimum: linprog's sign (<= 0 for a minimum over A x <= b)
    assert np.all(got.marginals <= FEASIBILITY)


def test_statuses_of_infeasible_and_unbounded():
    infeasible = solve_lp([-1.0], [[1.0]], [1.0], [2.0], [np.inf])
    assert infeasible.status == 2 and infeasible.x is None
    unbounded = solve_lp([-1.0, 0.0], [[0.0, 1.0]], [1.0], [0.0, 0.0], [np.inf, np.inf])
    assert unbounded.status == 3


def test_shape_mismatch_is_refused():
    with pytest.raises(ValueError, match="shape"):
        solve_lp([1.0, 1.0], [[1.0, 2.0, 3.0]], [1.0], 0.0, np.inf)
