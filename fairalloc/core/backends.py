"""Solving declarative programs: solver choice, statuses as clear errors, duals, export.

LPs are pulp models (HiGHS through ``highspy`` when it is installed, CBC otherwise); convex
programs are cvxpy problems solved with Clarabel.  A :class:`Program` is what ``program()``
returns: one or more models, built before any solving, that you can print, inspect, export and
then solve; LP names are those of the users and resources (:func:`lp_name`).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairalloc.core.deferred import deferred
from fairalloc.core.errors import FairallocError, SolverError, one_line
from fairalloc.core.files import write_atomically

if TYPE_CHECKING:
    import cvxpy as cp
    import pulp

    from fairalloc.core.allocation import Allocation
    from fairalloc.core.instance import Instance
else:
    pulp = deferred("pulp")

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
        except Exception:  # no highspy: CBC is used, which prints nothing with msg=False
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
                    highspy.Highs()  # type: ignore[no-untyped-call]  # highspy's Highs.__init__ is unannotated
                except Exception:
                    pass
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def lp_solver(msg: bool = False) -> pulp.LpSolver:
    """The best LP solver pulp can reach here: HiGHS (in-process) or the bundled CBC.

    HiGHS's feasibility tolerances are tightened from 1e-7 to 1e-10: the programs are checked
    against the fast paths to 1e-9.  Matrix entries below 1e-12 (HiGHS's smallest setting; its
    default drops those below 1e-9) are dropped; the programs :meth:`fairalloc.Mechanism.allocate`
    solves are built on instances scaled so that every user's largest entry is 1.
    """
    highs = pulp.HiGHS(
        msg=msg, primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10, small_matrix_value=1e-12
    )
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
    except Exception as exc:  # only the solver call is guarded: its library's failure is an error of the solve
        raise SolverError(
            f"{what}: LP solver {solver.name} failed ({type(exc).__name__}: {_reason(exc)}); "
            f"the numbers may be beyond what it handles"
        ) from None
    if status != pulp.LpStatusOptimal:
        raise SolverError(f"{what}: LP solver {solver.name} returned status '{pulp.LpStatus[status]}'")
    name: str = solver.name  # pulp has no type information
    return name


def _reason(exc: BaseException) -> str:
    """What a solver library said, on one bounded line (its own type when it said nothing)."""
    return one_line(exc, 160) or type(exc).__name__


#: A name every LP reader takes (CPLEX LP format, which pulp writes): ASCII letters, digits and
#: ``_``, not starting with a digit.  pulp itself would turn ``-+[] ->/`` into ``_`` silently,
#: which makes ``a-b`` and ``a_b`` one name and the export fail.
_LEGAL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ILLEGAL_CHAR = re.compile(r"[^A-Za-z0-9_]")
#: Words the LP format reads as keywords (sections, bounds, infinity), whatever their case.
_LP_KEYWORDS = frozenset(
    (
        "max",
        "maximize",
        "maximise",
        "maximum",
        "min",
        "minimize",
        "minimise",
        "minimum",
        "st",
        "subject",
        "such",
        "bound",
        "bounds",
        "end",
        "free",
        "inf",
        "infinity",
        "gen",
        "general",
        "generals",
        "bin",
        "binary",
        "binaries",
        "int",
        "semi",
        "semis",
        "sos",
    )
)
_MAX_NAME = 200  # CPLEX reads names up to 255 characters; room is left for a ``_k`` suffix


def lp_name(text: str, taken: set[str] | None = None) -> str:
    """``text`` (a user's or a resource's name, usually with a prefix: ``tasks_user 1``) as a legal
    LP-format name: ``tasks_user_1``.

    Characters other than ASCII letters, digits and ``_`` become ``_`` (accents are dropped first,
    other non-ASCII letters are spelled by code point: ``α`` -> ``u3b1``); a name starting with a
    digit (``1abc``), an LP keyword (``inf``) or ``e`` + digit (``e1``, read as a number) gets a
    leading ``_``; an empty name is ``_``.  A legal name is its own image.  With ``taken`` (the
    names given so far, updated) the name is also unique there: ``a b`` after ``a_b`` is ``a_b_2``.

    >>> lp_name("tasks_user 1"), lp_name("1abc"), lp_name("a-b"), lp_name("+-")
    ('tasks_user_1', '_1abc', 'a_b', '__')
    >>> taken = set(); [lp_name(t, taken) for t in ("a_b", "a b", "a-b")]
    ['a_b', 'a_b_2', 'a_b_3']
    """
    name = text if _LEGAL.fullmatch(text) else _sanitised(text)
    if not name or name[0].isdigit() or name.lower() in _LP_KEYWORDS or re.match(r"[eE][0-9eE]", name):
        name = "_" + name
    name = name[:_MAX_NAME]
    if taken is not None:
        base, k = name, 2
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
    return name


def _sanitised(text: str) -> str:
    """``text`` in ASCII letters, digits and ``_`` (see :func:`lp_name`)."""
    out = []
    for char in unicodedata.normalize("NFKD", str(text)):
        if char.isascii():
            out.append(char)
        elif unicodedata.combining(char):
            continue  # the accent of a decomposed letter: e + ´ -> e
        elif char.isalnum():
            out.append(f"u{ord(char):x}")
        else:
            out.append("_")
    return _ILLEGAL_CHAR.sub("_", "".join(out))


def lp_names(prefix: str, texts: Iterable[str]) -> list[str]:
    """``prefix_text`` for every text, legal (:func:`lp_name`) and unique among themselves.  Names
    legal as written are given first, so a user called ``a_b`` keeps ``tasks_a_b`` whatever her
    place, and ``a b`` gets ``tasks_a_b_2``."""
    wanted = [f"{prefix}_{t}" for t in texts]
    taken = {w for w in wanted if _LEGAL.fullmatch(w) and lp_name(w) == w}
    first = {w: w for w in taken}
    return [first.pop(w) if w in first else lp_name(w, taken) for w in wanted]


def task_variables(
    problem: pulp.LpProblem, lower: Iterable[float], upper: Iterable[float], names: Iterable[str]
) -> list[pulp.LpVariable]:
    """One variable per name (legal LP names, :func:`lp_names`) with bounds ``lower <= x <= upper``
    (inf = none)."""

    def bound(v: float) -> float | None:
        return None if np.isinf(v) else float(v)

    return [problem.add_variable(name, bound(lo), bound(up)) for name, lo, up in zip(names, lower, upper)]


def values(variables: Iterable[pulp.LpVariable]) -> NDArray[np.float64]:
    return np.array([v.varValue if v.varValue is not None else np.nan for v in variables], dtype=float)


def linear_expression(variables: Sequence[pulp.LpVariable], coefficients: ArrayLike) -> pulp.LpAffineExpression:
    """``sum_k c_k v_k`` over the non-zero coefficients, built in one call (no per-term loop here)."""
    c = np.asarray(coefficients, dtype=float)
    nz = np.flatnonzero(c)
    return pulp.LpAffineExpression(zip([variables[k] for k in nz.tolist()], c[nz].tolist()))


#: Clarabel settings tried in turn: tight first (the fast paths are checked against the program),
#: then Clarabel's own defaults when the tight ones end in 'optimal_inaccurate'.  The defaults are
#: spelled out: cvxpy keeps a problem's last Clarabel settings, so an empty dict would re-use the
#: tight ones (measured: 'optimal_inaccurate' twice on an instance that solves at the defaults).
CLARABEL_DEFAULTS = {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8}
CLARABEL_SETTINGS = ({"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}, CLARABEL_DEFAULTS)


class ConvexProblem(Protocol):
    """What :func:`solve_cvxpy` uses of a cvxpy ``Problem`` (cvxpy's own methods are unannotated)."""

    @property
    def status(self) -> str: ...

    def solve(self, *args: Any, **kwargs: Any) -> object: ...


def solve_cvxpy(problem: ConvexProblem, what: str) -> str:
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
        except Exception as exc:  # only the solver call: cvxpy's or Clarabel's failure is an error of the solve
            raise SolverError(
                f"{what}: cvxpy+Clarabel failed ({type(exc).__name__}: {_reason(exc)}); "
                f"the numbers may be beyond what it handles"
            ) from None
        if problem.status == cp.OPTIMAL:
            return "cvxpy+clarabel" + ("" if settings is not CLARABEL_DEFAULTS else " (default tolerances)")
    raise SolverError(
        f"{what}: Clarabel returned status '{problem.status}'"
        + (" (numerical trouble: the answer is not trusted)" if "inaccurate" in problem.status else "")
    )


def convex_task_variables(
    instance: Instance,
) -> tuple[NDArray[np.bool_], cp.Variable, cp.Constraint, list[cp.Constraint]]:
    """The feasible set of a convex program over the users who may run tasks (``T_i > 0``).

    Returns ``(live, x, capacity, constraints)``: the mask of those users, the cvxpy variable of
    their task counts (``tasks``, one vector: :func:`convex_legend` says which entry is whose),
    the capacity constraint (its duals are the prices) and every constraint (capacity,
    ``x >= 0``, ``x <= T`` where bounded).
    """
    import cvxpy as cp

    live = instance.bounds() > 0
    T = instance.bounds()[live]
    x = cp.Variable(int(live.sum()), name="tasks")
    capacity = instance.demand[live].T @ x <= instance.capacity
    constraints = [capacity, x >= 0]
    bounded = np.flatnonzero(np.isfinite(T))
    if bounded.size:
        constraints.append(x[bounded] <= T[bounded])
    return live, x, capacity, constraints


def convex_legend(users: Iterable[str], live: Iterable[bool]) -> str:
    """Which entry of the cvxpy vector ``tasks`` is whose: ``tasks = (A, B, ...)`` (the first 20).

    A convex program keeps one vector variable, however many users: cvxpy builds it in one piece
    (a variable per user would be canonicalised one by one), and cvxpy names no constraint.
    """
    names = [u for u, on in zip(users, live) if on]
    return f"tasks = ({', '.join(map(str, names[:20]))}{', ...' if len(names) > 20 else ''})"


class Program:
    """The declarative program behind an allocation.

    ``models`` is a list of ``(title, model)``: pulp ``LpProblem`` or cvxpy ``Problem`` objects,
    built by ``program()`` before anything is solved, so that they can be printed, inspected
    (variables, constraints, objective) and exported first; :meth:`solve` is a separate step.
    LP variables and constraints are named after the users and resources (``tasks_A``,
    ``capacity_cpu``: :func:`lp_name`).

    A *sequence* of LPs (the max-min rounds of progressive filling, one LP per arrival of
    DMFA-SRQ) holds its first LP from the start; each later LP depends on the solution of the
    one before, so it is built, and appended to ``models``, as the sequence is solved.  ``later``
    says so (empty for a program built whole); :attr:`pending` is true until then.
    """

    def __init__(
        self,
        mechanism: str,
        description: str,
        models: Iterable[tuple[str, object]] | None = None,
        solve: Callable[[Program], Allocation] | None = None,
        later: str = "",
    ):
        self.mechanism = mechanism
        self.description = description
        #: pulp ``LpProblem`` or cvxpy ``Problem`` objects (neither library has type information)
        self.models: list[tuple[str, object]] = list(models or [])
        self.later = later
        self._solve = solve
        self.allocation: Allocation | None = None

    def solve(self) -> Allocation:
        """Solve (every round of) the program and return the :class:`Allocation`."""
        if self.allocation is None:
            if self._solve is None:
                raise FairallocError(f"solve: the program of {self.mechanism} was built without a solver")
            self.allocation = self._solve(self)
        return self.allocation

    @property
    def pending(self) -> bool:
        """A sequence whose later models are not built yet (they are built as it is solved)."""
        return bool(self.later) and self.allocation is None

    @property
    def is_convex(self) -> bool:
        """A cvxpy program (as opposed to pulp LPs)."""
        return any(not isinstance(model, pulp.LpProblem) for _, model in self.models)

    def text(self) -> str:
        parts = [self.description.strip(), ""]
        for title, model in self.models:
            parts += [f"--- {title} ---", str(model), ""]
        if self.pending:
            parts += [f"--- {self.later} ---", ""]
        return "\n".join(parts)

    def __repr__(self) -> str:
        titles = ", ".join(title for title, _ in self.models)
        state = f"; {self.later}" if self.pending else ("; solved" if self.allocation is not None else "")
        return f"<Program {self.mechanism}: {len(self.models)} built ({titles}){state}>"

    def check_target(self, path: Path) -> str:
        """The export format of ``path`` (checked before any solving)."""
        suffix = path.suffix.lower()
        if suffix not in (".lp", ".mps", ".txt"):
            raise FairallocError(f"path: unknown format '{path.suffix}' (use .lp, .mps or .txt)")
        if suffix != ".txt" and self.is_convex:
            raise FairallocError(f"path: {self.mechanism} is a convex program, not an LP; write it as .txt")
        return suffix

    def write(self, path: str | Path) -> list[Path]:
        """Export every model: ``.lp`` / ``.mps`` for LPs, ``.txt`` for any program.

        A sequence of LPs is written as ``NAME.round1.lp``, ``NAME.round2.lp``, ... (the rounds built
        so far: solve it first for them all).
        """
        path = Path(path)
        suffix = self.check_target(path)
        if suffix == ".txt":
            write_atomically(path, lambda tmp: tmp.write_text(self.text()))
            return [path]
        # check_target refused a convex program: every model is an LP
        lps = [model for _, model in self.models if isinstance(model, pulp.LpProblem)]
        written = []
        single = len(lps) == 1 and not self.pending
        for k, lp in enumerate(lps, 1):
            target = path if single else path.with_name(f"{path.stem}.round{k}{path.suffix}")
            write_atomically(target, functools.partial(_write_lp, lp, suffix))
            written.append(target)
        return written

    def __str__(self) -> str:
        return self.text()


def _write_lp(lp: pulp.LpProblem, suffix: str, tmp: Path) -> None:
    """Write the pulp model ``lp`` to ``tmp`` in the format of ``suffix`` (``.lp`` or ``.mps``)."""
    if suffix == ".lp":
        lp.writeLP(str(tmp))
    else:
        lp.writeMPS(str(tmp))
