"""Small LPs straight to HiGHS (``highspy``), without scipy's ``linprog`` around the call.

The property checkers (Pareto efficiency, static and dynamic) solve many tiny LPs (a few users, a
few resources): there ``scipy.optimize.linprog`` spends most of its time checking and converting
its arguments, not in HiGHS.  They use the optimum's value, which is unique; the utilitarian fast
path, whose LP may have several optimal vertices, stays on ``linprog`` (highspy's newer HiGHS may
pick another vertex than scipy's own).  :func:`solve_lp` passes the arrays to HiGHS as they are, with the
options ``linprog(method="highs")`` sets (presolve on, dual simplex, HiGHS's own tolerances), and
answers in ``linprog``'s terms: ``status`` 0 when optimal, ``x``, ``fun`` and the inequality
rows' ``marginals`` (the derivative of the optimum by the right-hand side, ``linprog``'s sign).

It solves ``min c x`` subject to ``A_ub x <= b_ub`` and ``lower <= x <= upper`` (``inf`` for no
bound).  The test ``tests/test_highs_lp.py`` checks it against ``linprog`` on random LPs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["LPResult", "solve_lp"]


@dataclass
class LPResult:
    """``status``: 0 optimal, 2 infeasible, 3 unbounded, 4 anything else (``linprog``'s codes)."""

    status: int
    message: str
    x: NDArray[np.float64] | None = None
    fun: float | None = None
    marginals: NDArray[np.float64] | None = None


@functools.cache
def _highspy():  # type: ignore[no-untyped-def]  # highspy is unannotated
    import highspy

    from fairalloc.core.backends import _quiet_highs_banner

    _quiet_highs_banner()  # the first Highs object of the process prints a banner to fd 1
    return highspy


def solve_lp(c: ArrayLike, A_ub: ArrayLike, b_ub: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> LPResult:
    """``min c x`` s.t. ``A_ub x <= b_ub``, ``lower <= x <= upper`` (dense ``A_ub``), by HiGHS."""
    highspy = _highspy()
    cost = np.ascontiguousarray(c, dtype=float)
    A = np.asarray(A_ub, dtype=float)
    rhs = np.ascontiguousarray(b_ub, dtype=float)
    n, rows = cost.shape[0], rhs.shape[0]
    if A.shape != (rows, n):
        raise ValueError(f"solve_lp: A_ub has shape {A.shape}, expected ({rows}, {n})")
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, rows
    lp.col_cost_ = cost
    lp.col_lower_ = np.ascontiguousarray(np.broadcast_to(np.asarray(lower, dtype=float), (n,)))
    lp.col_upper_ = np.ascontiguousarray(np.broadcast_to(np.asarray(upper, dtype=float), (n,)))
    lp.row_lower_ = np.full(rows, -np.inf)
    lp.row_upper_ = rhs
    cols, row_index = np.nonzero(A.T)  # column-wise: by column, then by row
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.concatenate(([0], np.cumsum(np.bincount(cols, minlength=n)))).astype(np.int32)
    lp.a_matrix_.index_ = row_index.astype(np.int32)
    lp.a_matrix_.value_ = A.T[cols, row_index]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "on")
    h.setOptionValue("simplex_strategy", 1)  # dual simplex, as linprog(method="highs") asks
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    message = h.modelStatusToString(status)
    statuses = highspy.HighsModelStatus
    if status != statuses.kOptimal:
        code = {statuses.kInfeasible: 2, statuses.kUnbounded: 3}.get(status, 4)
        return LPResult(code, message)
    solution = h.getSolution()
    return LPResult(
        0,
        message,
        np.array(solution.col_value, dtype=float),
        float(h.getInfo().objective_function_value),
        np.array(solution.row_dual, dtype=float),
    )
