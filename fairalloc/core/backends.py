"""Solving declarative programs: solver choice, statuses as clear errors, duals, export.

LPs are pulp models (HiGHS through ``highspy`` when it is installed, CBC otherwise); convex
programs are cvxpy problems solved with Clarabel.  A :class:`Program` is what ``program()``
returns: one or more models you can print, export and solve.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pulp

from fairalloc.core.errors import FairallocError, SolverError, one_line
from fairalloc.core.files import write_atomically


_banner_lock = threading.Lock()
_banner_done = False


def _quiet_highs_banner() -> None:
    """highspy 1.16 prints a two-line banner to the process's stdout (file descriptor 1, not
    ``sys.stdout``) when the first ``Highs`` object of the process is built, whatever
    ``output_flag`` says afterwards: it would precede the JSON of ``--format json``.  Build that
    first object once with descriptor 1 pointed at the null device."""
    global _banner_done
    if _banner_done:
        return
    with _banner_lock:
        if _banner_done:
            return
        _banner_done = True
        try:
            import highspy
        except Exception:       # no highspy: CBC is used, which prints nothing with msg=False
            return
        try:
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, ValueError, AttributeError):
            return
        try:
            with open(os.devnull, "wb") as null:
                os.dup2(null.fileno(), 1)
                try:
                    highspy.Highs()
                except Exception:
                    pass
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def lp_solver(msg: bool = False):
    """The best LP solver pulp can reach here: HiGHS (in-process) or the bundled CBC.

    HiGHS's feasibility tolerances are tightened from 1e-7 to 1e-10: the programs are checked
    against the fast paths to 1e-9.  Matrix entries below 1e-12 (HiGHS's smallest setting; its
    default drops those below 1e-9) are dropped; the programs :meth:`fairalloc.Mechanism.allocate`
    solves are built on instances scaled so that every user's largest entry is 1.
    """
    highs = pulp.HiGHS(msg=msg, primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10,
                       small_matrix_value=1e-12)
    if highs.available():
        _quiet_highs_banner()
        return highs
    return pulp.PULP_CBC_CMD(msg=msg)


def solve_lp(problem: pulp.LpProblem, what: str) -> str:
    """Solve a pulp model; anything but an optimal status is a :class:`SolverError`, and so is
    any exception raised inside the solver library (HiGHS's Python API fails with an
    ``IndexError`` on coefficients near 1e308)."""
    solver = lp_solver()
    try:
        status = problem.solve(solver)
    except pulp.PulpSolverError as exc:
        raise SolverError(f"{what}: LP solver {solver.name} failed: {_reason(exc)}") from None
    except Exception as exc:    # only the solver call is guarded: its library's failure is an error of the solve
        raise SolverError(f"{what}: LP solver {solver.name} failed ({type(exc).__name__}: {_reason(exc)}); "
                          f"the numbers may be beyond what it handles") from None
    if status != pulp.LpStatusOptimal:
        raise SolverError(f"{what}: LP solver {solver.name} returned status '{pulp.LpStatus[status]}'")
    return solver.name


def _reason(exc: BaseException) -> str:
    """What a solver library said, on one bounded line (its own type when it said nothing)."""
    return one_line(exc, 160) or type(exc).__name__


def task_variables(problem: pulp.LpProblem, lower, upper) -> list[pulp.LpVariable]:
    """Variables ``x_0 .. x_{n-1}`` of ``problem`` with bounds ``lower <= x <= upper`` (inf = none)."""
    def bound(v):
        return None if np.isinf(v) else float(v)
    return [problem.add_variable(f"x_{i}", bound(lo), bound(up)) for i, (lo, up) in enumerate(zip(lower, upper))]


def values(variables) -> np.ndarray:
    return np.array([v.varValue if v.varValue is not None else np.nan for v in variables], dtype=float)


def linear_expression(variables, coefficients) -> pulp.LpAffineExpression:
    """``sum_k c_k v_k`` over the non-zero coefficients, built in one call (no per-term loop here)."""
    coefficients = np.asarray(coefficients, dtype=float)
    nz = np.flatnonzero(coefficients)
    return pulp.LpAffineExpression(zip([variables[k] for k in nz], coefficients[nz].tolist()))


#: Clarabel settings tried in turn: tight first (the fast paths are checked against the program),
#: then Clarabel's own defaults when the tight ones end in 'optimal_inaccurate'.  The defaults are
#: spelled out: cvxpy keeps a problem's last Clarabel settings, so an empty dict would re-use the
#: tight ones (measured: 'optimal_inaccurate' twice on an instance that solves at the defaults).
CLARABEL_DEFAULTS = {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8}
CLARABEL_SETTINGS = ({"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}, CLARABEL_DEFAULTS)


def solve_cvxpy(problem, what: str) -> str:
    """Solve a cvxpy problem with Clarabel; a status other than optimal is a :class:`SolverError`."""
    import cvxpy as cp
    for settings in CLARABEL_SETTINGS:
        try:
            with warnings.catch_warnings():  # the status below is what decides, not a warning
                warnings.simplefilter("ignore", UserWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                problem.solve(solver=cp.CLARABEL, **settings)
        except cp.error.SolverError as exc:
            raise SolverError(f"{what}: Clarabel failed: {_reason(exc)}") from None
        except Exception as exc:    # only the solver call: cvxpy's or Clarabel's failure is an error of the solve
            raise SolverError(f"{what}: cvxpy+Clarabel failed ({type(exc).__name__}: {_reason(exc)}); "
                              f"the numbers may be beyond what it handles") from None
        if problem.status == cp.OPTIMAL:
            return "cvxpy+clarabel" + ("" if settings is not CLARABEL_DEFAULTS else " (default tolerances)")
    raise SolverError(f"{what}: Clarabel returned status '{problem.status}'"
                      + (" (numerical trouble: the answer is not trusted)" if "inaccurate" in problem.status else ""))


def convex_task_variables(instance):
    """The feasible set of a convex program over the users who may run tasks (``T_i > 0``).

    Returns ``(live, x, capacity, constraints)``: the mask of those users, the cvxpy variable of
    their task counts, the capacity constraint (its duals are the prices) and every constraint
    (capacity, ``x >= 0``, ``x <= T`` where bounded).
    """
    import cvxpy as cp
    live = instance.bounds() > 0
    T = instance.bounds()[live]
    x = cp.Variable(int(live.sum()), name="x")
    capacity = instance.demand[live].T @ x <= instance.capacity
    constraints = [capacity, x >= 0]
    bounded = np.flatnonzero(np.isfinite(T))
    if bounded.size:
        constraints.append(x[bounded] <= T[bounded])
    return live, x, capacity, constraints


class Program:
    """The declarative program behind an allocation.

    ``models`` is a list of ``(title, model)``: pulp ``LpProblem`` objects, or cvxpy ``Problem``
    objects.  Mechanisms that solve a *sequence* of LPs (progressive filling) fill the list as
    they go; :meth:`solve` runs the sequence.
    """

    def __init__(self, mechanism: str, description: str, models=None, solve=None):
        self.mechanism = mechanism
        self.description = description
        self.models: list[tuple[str, object]] = list(models or [])
        self._solve = solve
        self.allocation = None

    def solve(self):
        """Solve (every round of) the program and return the :class:`Allocation`."""
        if self.allocation is None:
            self.allocation = self._solve(self)
        return self.allocation

    @property
    def is_convex(self) -> bool:
        """A cvxpy program (as opposed to pulp LPs, which may not be built until solved)."""
        return any(not isinstance(model, pulp.LpProblem) for _, model in self.models)

    def text(self) -> str:
        parts = [self.description.strip(), ""]
        for title, model in self.models:
            parts += [f"--- {title} ---", str(model), ""]
        return "\n".join(parts)

    def check_target(self, path: Path) -> str:
        """The export format of ``path`` (checked before any solving)."""
        suffix = path.suffix.lower()
        if suffix not in (".lp", ".mps", ".txt"):
            raise FairallocError(f"--write: unknown format '{path.suffix}' (use .lp, .mps or .txt)")
        if suffix != ".txt" and self.is_convex:
            raise FairallocError(f"--write: {self.mechanism} is a convex program, not an LP; write it as .txt")
        return suffix

    def write(self, path: str | Path) -> list[Path]:
        """Export every model: ``.lp`` / ``.mps`` for LPs, ``.txt`` for any program.

        A sequence of LPs is written as ``NAME.round1.lp``, ``NAME.round2.lp``, ...
        """
        path = Path(path)
        suffix = self.check_target(path)
        if suffix == ".txt":
            write_atomically(path, lambda tmp: tmp.write_text(self.text()))
            return [path]
        written = []
        for k, (_, model) in enumerate(self.models, 1):
            target = path if len(self.models) == 1 else path.with_name(f"{path.stem}.round{k}{path.suffix}")
            write_atomically(target, lambda tmp: (model.writeLP if suffix == ".lp" else model.writeMPS)(str(tmp)))
            written.append(target)
        return written

    def __str__(self) -> str:
        return self.text()
