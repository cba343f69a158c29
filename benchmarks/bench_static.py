"""Static-mechanism benchmark: speed as ratios to a baseline timed in the same process.

Every speed figure is a *ratio* between two timings taken in this process, interleaved rep by
rep, so the figures transfer across machines far better than absolute seconds:

1. DRF / Asset fast paths on N users x 8 resources, against one numpy pass ``(D / R).max(axis=1)``
   over the same demand array (target: <= 3x); also on a variant with ~20% zero demands, for
   which progressive filling needs several rounds.
2. CEEI fast path (dual Newton) against the Eisenberg-Gale program (cvxpy + Clarabel): Nash
   welfare agreement (each answer scaled into the capacity first) and speed ratio at 10k users,
   speed-up at 100k users (target >= 20x), and the fast path alone at 1M users (time, Newton
   iterations, ratio to the numpy pass).
3. Declarative programs at 10k users (DRF, Asset, CEEI, utilitarian) as a ratio to the same
   mechanism's fast path, with agreement of the allocations.

Each timed run gets a *fresh* :class:`fairalloc.Instance` built outside the timer, because
``share_per_task`` / ``per_task_dominant_share`` are cached on the instance and would otherwise
hide work after the first repetition.

    .venv/bin/python benchmarks/bench_static.py            # full sizes (several minutes)
    .venv/bin/python benchmarks/bench_static.py --quick    # smoke test (< 60 s)
    .venv/bin/python benchmarks/bench_static.py --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from types import SimpleNamespace

_BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _blas_threads_from_argv() -> None:
    """``--blas-threads N`` must act before numpy loads its BLAS, so it is read here, early.

    On a shared 2-core machine a second busy process makes multi-threaded OpenBLAS calls (the
    ``D @ p`` / ``x @ D`` products of the CEEI Newton step) up to 10x slower while the baseline
    pass (no BLAS) barely moves; pinning BLAS to one thread keeps the ratios meaningful there.
    """
    for k, arg in enumerate(sys.argv):
        value = (
            arg.split("=", 1)[1]
            if arg.startswith("--blas-threads=")
            else sys.argv[k + 1]
            if arg == "--blas-threads" and k + 1 < len(sys.argv)
            else None
        )
        if value is not None:
            for var in _BLAS_VARS:
                os.environ[var] = value


if __name__ == "__main__":
    _blas_threads_from_argv()

import numpy as np  # noqa: E402
from tabulate import tabulate  # noqa: E402

import fairalloc  # noqa: E402
from fairalloc import Instance, SolverError  # noqa: E402

SEED = 20110330  # fixed: every array below is drawn from generators seeded with it
M = 8  # resources
CAPACITY_PER_USER = 0.3  # R_j = n * 0.3 with demands ~ U(0.1, 1): every resource is contended
ZERO_FRACTION = 0.2  # share of zero entries in the zero-demand variant

# size sets: (full, quick)
SIZES = {
    "filling_n": (1_000_000, 100_000),
    "ceei_small_n": (10_000, 2_000),
    "ceei_mid_n": (100_000, 10_000),
    "ceei_large_n": (1_000_000, 100_000),
    "programs_n": (10_000, 2_000),
}
# repetitions: (full, quick)
REPEATS = {"fast": (7, 5), "program": (3, 2), "program_mid": (2, 1)}

TARGETS = {
    "filling_ratio": 3.0,  # fast / numpy pass, at most
    "ceei_nash_rel": 1e-9,  # |NW_fast - NW_program| / |NW_program|, at most
    "ceei_speedup_mid": 20.0,  # program / fast at ceei_mid_n, at least
}


# -- data -------------------------------------------------------------------------------------


def demands(n: int, *, zeros: bool = False, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """``(capacity, demand)``: demands ~ U(0.1, 1) (strictly positive unless ``zeros``)."""
    rng = np.random.default_rng([seed, n, int(zeros)])
    D = rng.uniform(0.1, 1.0, (n, M))
    if zeros:
        D[rng.random((n, M)) < ZERO_FRACTION] = 0.0
        empty = ~(D > 0).any(axis=1)  # a user must demand something
        D[empty, rng.integers(0, M, int(empty.sum()))] = rng.uniform(0.1, 1.0, int(empty.sum()))
    R = np.full(M, n * CAPACITY_PER_USER)
    return R, D


def fresh(R, D) -> Instance:
    """A new instance (no cached per-task shares); the copy of ``D`` happens here, untimed."""
    return Instance(R, D, validate=False)


def baseline_pass(R, D):
    """The yardstick: one numpy pass over the demand array."""
    return (D / R).max(axis=1)


# -- timing -----------------------------------------------------------------------------------


def _timed(fn, arg):
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = fn(arg)
        dt = time.perf_counter() - t0
    finally:
        gc.enable()
    return dt, out


def measure(repeats: int, fn, make_arg, ref=None, make_ref_arg=None):
    """Time ``fn(make_arg())`` ``repeats`` times, interleaved with ``ref(make_ref_arg())``.

    ``make_*`` run outside the timer.  Returns ``(times, ref_times, last_output)``.
    """
    times, ref_times, out = [], [], None
    for _ in range(repeats):
        if ref is not None:
            ref_arg = make_ref_arg()
            ref_times.append(_timed(ref, ref_arg)[0])
            del ref_arg
        arg = make_arg()
        dt, out = _timed(fn, arg)
        times.append(dt)
        del arg
    return times, ref_times, out


def rel_diff(a, b) -> float:
    """Largest ``|a - b| / max(|a|, |b|)`` (0 where both are 0)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = np.maximum(np.abs(a), np.abs(b))
    d = np.abs(a - b)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(scale > 0, d / scale, 0.0)
    return float(np.max(r))


def overuse(tasks: np.ndarray, D: np.ndarray, R: np.ndarray) -> float:
    """``max_j (x D)_j / R_j - 1``: how far ``tasks`` overuse the most used resource."""
    return float(((tasks @ D) / R).max()) - 1.0


def feasible_nash_welfare(tasks: np.ndarray, D: np.ndarray, R: np.ndarray) -> float:
    """``sum_i log x_i`` of ``tasks`` scaled down, if need be, into the capacity. A solver's answer
    may overuse a resource within its tolerance (the tight Clarabel run at 10,000 x 8: by 5.2e-8),
    and a point beyond the capacity can have a higher welfare than the optimum inside it."""
    return float(np.sum(np.log(tasks)) - len(tasks) * np.log1p(max(0.0, overuse(tasks, D, R))))


def ceei_program_default_tolerances(inst: Instance):
    """Fallback when fairalloc's CEEI program raises: the *same* cvxpy problem
    (``fairalloc.program(inst, "ceei")``) solved with Clarabel's default tolerances, bypassing
    ``fairalloc.core.backends.solve_cvxpy``.  Positive demands, no bounds, unit weights only."""
    import cvxpy as cp

    problem = fairalloc.program(inst, "ceei").models[0][1]
    problem.solve(solver=cp.CLARABEL)
    if problem.status != cp.OPTIMAL:
        raise SolverError(f"ceei fallback: Clarabel (default tolerances) returned '{problem.status}'")
    (x,) = problem.variables()
    tasks = np.clip(np.asarray(x.value, dtype=float), 0, None)
    return SimpleNamespace(
        tasks=tasks,
        info={"nash_welfare": float(np.sum(np.log(tasks)))},
        solver="cvxpy+clarabel (default tol, fallback)",
    )


def program_or_fallback(repeats, make_arg, fn, fallback=None):
    """``measure`` the program; if it raises :class:`SolverError`, note the error and (when given)
    measure ``fallback`` instead.  Returns ``(times, output, error message or "")``."""
    try:
        times, _, out = measure(repeats, fn, make_arg)
        return times, out, ""
    except SolverError as exc:
        error = str(exc)
        print(f"  ! program failed: {error}", flush=True)
        if fallback is None:
            return None, None, error
        times, _, out = measure(repeats, fallback, make_arg)
        return times, out, error


@dataclass
class Row:
    section: str
    what: str
    size: str
    time_med: float | None
    time_min: float | None
    reference: str = ""
    ref_med: float | None = None
    ref_min: float | None = None
    figure: str = ""  # what ``value`` is
    value: float | None = None
    value_min: float | None = None  # the same figure from the minimum times
    target: str = ""
    met: bool | None = None
    notes: str = ""
    repeats: int = 0
    extra: dict = field(default_factory=dict)


def _size(n):
    return f"{n:,} x {M}"


def ratio_row(
    section,
    what,
    n,
    times,
    ref_times,
    reference,
    figure="time / ref",
    target=None,
    at_least=False,
    notes="",
    extra=None,
    invert=False,
) -> Row:
    """A row whose figure is ``time / ref`` (or ``ref / time`` with ``invert``: a speed-up)."""
    tm, tn = statistics.median(times), min(times)
    rm, rn = statistics.median(ref_times), min(ref_times)
    value, value_min = (rm / tm, rn / tn) if invert else (tm / rm, tn / rn)
    met = None
    tgt = ""
    if target is not None:
        met = value >= target if at_least else value <= target
        tgt = f"{'>=' if at_least else '<='} {target:g}"
    return Row(
        section,
        what,
        _size(n),
        tm,
        tn,
        reference,
        rm,
        rn,
        figure,
        value,
        value_min,
        tgt,
        met,
        notes,
        len(times),
        extra or {},
    )


# -- the measurements -------------------------------------------------------------------------


def bench_filling(n, repeats) -> list[Row]:
    rows = []
    for zeros in (False, True):
        R, D = demands(n, zeros=zeros)
        for mech in ("drf", "asset"):
            times, ref_times, alloc = measure(
                repeats,
                lambda inst: fairalloc.solve(inst, mech, method="fast"),
                lambda R=R, D=D: fresh(R, D),  # bound now: D is deleted after the loop body
                lambda D: baseline_pass(R, D),
                lambda D=D: D,
            )
            rounds = alloc.info.get("rounds")
            zero_note = f"{(D == 0).mean():.0%} zero demands, " if zeros else ""
            rows.append(
                ratio_row(
                    "1 filling",
                    f"{mech} fast" + (" (zeros)" if zeros else ""),
                    n,
                    times,
                    ref_times,
                    "numpy (D/R).max(1)",
                    target=TARGETS["filling_ratio"],
                    notes=f"{zero_note}{rounds} round(s)",
                    extra={"rounds": rounds},
                )
            )
            del alloc
        del D
    return rows


def _failed_row(section, what, n, error) -> Row:
    return Row(
        section,
        what,
        _size(n),
        None,
        None,
        figure="program FAILED",
        met=False,
        notes=error.split(": ", 1)[-1].split(" (")[0],
        extra={"error": error},
    )


def _fallback_note(error) -> str:
    return "[fallback: Clarabel default tol] " if error else ""


def bench_ceei(n_small, n_mid, n_large, rep_fast, rep_prog, rep_prog_mid) -> list[Row]:
    rows = []
    fast = lambda inst: fairalloc.solve(inst, "ceei", method="fast")  # noqa: E731
    prog = lambda inst: fairalloc.solve(inst, "ceei", method="program")  # noqa: E731
    fallback = ceei_program_default_tolerances

    # small: agreement of the Nash welfare, and the speed ratio
    R, D = demands(n_small)
    t_fast, _, a_fast = measure(rep_fast, fast, lambda: fresh(R, D))
    t_prog, a_prog, error = program_or_fallback(rep_prog, lambda: fresh(R, D), prog, fallback)
    if error:
        rows.append(_failed_row("2 ceei", "ceei program (fairalloc)", n_small, error))
    nw_f, nw_p = feasible_nash_welfare(a_fast.tasks, D, R), feasible_nash_welfare(a_prog.tasks, D, R)
    # Both maximise the Nash welfare: what counts is how far the fast path falls *short* of the
    # program (when the program is higher), each scaled into the capacity first.  A program at
    # Clarabel's default tolerances can be the lower one by ~1e-9.
    nw_rel = max(0.0, nw_p - nw_f) / abs(nw_p)
    tasks_rel = rel_diff(a_fast.tasks, a_prog.tasks)
    program_overuse = overuse(a_prog.tasks, D, R)
    rows.append(
        Row(
            "2 ceei",
            "ceei Nash welfare: fast vs program",
            _size(n_small),
            None,
            None,
            a_prog.solver,
            None,
            None,
            "(NW_p - NW_f)+ / |NW_p|",
            nw_rel,
            None,
            f"<= {TARGETS['ceei_nash_rel']:g}",
            nw_rel <= TARGETS["ceei_nash_rel"],
            f"{_fallback_note(error)}NW within the capacity: fast {nw_f:.13g}, program {nw_p:.13g} (fast "
            f"{'higher' if nw_f > nw_p else 'lower'} by {abs(nw_f - nw_p) / abs(nw_p):.1e} relative; the program "
            f"overused it by {program_overuse:.1e}); tasks max rel diff {tasks_rel:.1e}",
            extra={
                "nw_fast": nw_f,
                "nw_program": nw_p,
                "nw_program_as_solved": a_prog.info["nash_welfare"],
                "program_overuse": program_overuse,
                "tasks_rel_diff": tasks_rel,
                "program_error": error,
            },
        )
    )
    rows.append(
        ratio_row(
            "2 ceei",
            "ceei fast vs program",
            n_small,
            t_fast,
            t_prog,
            a_prog.solver,
            figure="speed-up (program / fast)",
            invert=True,
            notes=f"{_fallback_note(error)}{a_fast.info['newton_iterations']} Newton its; "
            f"fast/program = {statistics.median(t_fast) / statistics.median(t_prog):.2e}",
            extra={"newton_iterations": a_fast.info["newton_iterations"], "program_error": error},
        )
    )
    del a_fast, a_prog

    # mid: speed-up of the fast path over the program
    R, D = demands(n_mid)
    t_fast, _, a_fast = measure(rep_fast, fast, lambda: fresh(R, D))
    t_prog, a_prog, error = program_or_fallback(rep_prog_mid, lambda: fresh(R, D), prog, fallback)
    if error:
        rows.append(_failed_row("2 ceei", "ceei program (fairalloc)", n_mid, error))
    nw_f, nw_p = feasible_nash_welfare(a_fast.tasks, D, R), feasible_nash_welfare(a_prog.tasks, D, R)
    rows.append(
        ratio_row(
            "2 ceei",
            "ceei fast vs program",
            n_mid,
            t_fast,
            t_prog,
            a_prog.solver,
            figure="speed-up (program / fast)",
            invert=True,
            target=TARGETS["ceei_speedup_mid"],
            at_least=True,
            notes=f"{_fallback_note(error)}{a_fast.info['newton_iterations']} Newton its; "
            f"NW rel diff {abs(nw_f - nw_p) / abs(nw_p):.1e}",
            extra={
                "newton_iterations": a_fast.info["newton_iterations"],
                "nw_rel_diff": abs(nw_f - nw_p) / abs(nw_p),
                "program_error": error,
            },
        )
    )
    del a_fast, a_prog, D

    # large: the fast path alone, against the numpy pass
    R, D = demands(n_large)
    t_fast, t_base, a_fast = measure(rep_fast, fast, lambda: fresh(R, D), lambda D: baseline_pass(R, D), lambda: D)
    its = a_fast.info["newton_iterations"]
    rows.append(
        ratio_row(
            "2 ceei",
            "ceei fast",
            n_large,
            t_fast,
            t_base,
            "numpy (D/R).max(1)",
            notes=f"{its} Newton its; {statistics.median(t_fast):.3f} s",
            extra={"newton_iterations": its},
        )
    )
    return rows


def bench_programs(n, rep_fast, rep_prog) -> list[Row]:
    rows = []
    R, D = demands(n)
    for mech in ("drf", "asset", "ceei", "utilitarian"):
        t_fast, _, a_fast = measure(
            rep_fast, lambda inst: fairalloc.solve(inst, mech, method="fast"), lambda: fresh(R, D)
        )
        t_prog, a_prog, error = program_or_fallback(
            rep_prog,
            lambda: fresh(R, D),
            lambda inst: fairalloc.program(inst, mech).solve(),
            ceei_program_default_tolerances if mech == "ceei" else None,
        )
        if error:
            rows.append(_failed_row("3 programs", f"{mech} program (fairalloc)", n, error))
            if t_prog is None:
                continue
        if mech == "utilitarian":
            what, agree = "welfare rel diff", rel_diff(a_fast.info["welfare"], a_prog.info["welfare"])
        else:
            what, agree = "tasks max rel diff", rel_diff(a_fast.tasks, a_prog.tasks)
        rows.append(
            ratio_row(
                "3 programs",
                f"{mech} program vs fast",
                n,
                t_prog,
                t_fast,
                f"{mech} fast",
                notes=f"{_fallback_note(error)}{what} {agree:.1e} ({a_prog.solver})",
                extra={"agreement_metric": what, "agreement": agree, "solver": a_prog.solver, "program_error": error},
            )
        )
    return rows


def warm_up():
    """Imports, first-call overheads and solver start-up, outside every timing."""
    R, D = demands(200)
    for mech in ("drf", "asset", "ceei", "utilitarian"):
        fairalloc.solve(fresh(R, D), mech, method="fast")
        try:
            fairalloc.program(fresh(R, D), mech).solve()
        except SolverError:
            pass
    ceei_program_default_tolerances(fresh(R, D))
    baseline_pass(R, D)


# -- output -----------------------------------------------------------------------------------


def _f(v, fmt):
    return "" if v is None else format(v, fmt)


def table(rows: list[Row]) -> str:
    head = [
        "section",
        "measurement",
        "n x m",
        "time med (s)",
        "reference",
        "ref med (s)",
        "figure",
        "value",
        "(from min)",
        "target",
        "met",
        "notes",
    ]
    body = [
        [
            r.section,
            r.what,
            r.size,
            _f(r.time_med, ".4g"),
            r.reference,
            _f(r.ref_med, ".4g"),
            r.figure,
            _f(r.value, ".3g"),
            _f(r.value_min, ".3g"),
            r.target,
            "" if r.met is None else ("yes" if r.met else "MISSED"),
            r.notes,
        ]
        for r in rows
    ]
    return tabulate(body, head, disable_numparse=True)


def _git() -> dict:
    """Commit and uncommitted core files: the figures belong to the code as it was at run time."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "fairalloc", "models"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.split("\n")
        return {"head": head, "uncommitted": [line[3:] for line in dirty if line.strip()]}
    except (OSError, subprocess.SubprocessError):
        return {}


def machine() -> dict:
    return {
        "git": _git(),
        "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "nproc": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "platform": platform.platform(),
        "processor": platform.processor(),
        "python": sys.version.split()[0],
        "blas_threads_env": {v: os.environ[v] for v in _BLAS_VARS if v in os.environ},
        "numpy": np.__version__,
        "fairalloc": fairalloc.__version__,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke test in under a minute")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument(
        "--blas-threads",
        type=int,
        metavar="N",
        help="limit BLAS threads (sets OPENBLAS/OMP/MKL_NUM_THREADS before numpy loads)",
    )
    ap.add_argument("--strict", action="store_true", help="exit with status 1 when a target is missed")
    ap.add_argument(
        "--only", choices=["filling", "ceei", "programs"], action="append", help="run only these sections (repeatable)"
    )
    args = ap.parse_args(argv)
    import warnings  # a failed program is reported in the table; cvxpy's own warning is noise here

    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
    k = 1 if args.quick else 0
    size = {name: v[k] for name, v in SIZES.items()}
    rep = {name: v[k] for name, v in REPEATS.items()}
    sections = args.only or ["filling", "ceei", "programs"]

    info = machine()
    print(
        f"fairalloc static benchmark ({'quick' if args.quick else 'full'}), seed {SEED}, "
        f"nproc {info['nproc']}, numpy {info['numpy']}, python {info['python']}, "
        f"git {info['git'].get('head')}"
        f"{' +' + ','.join(info['git']['uncommitted']) if info['git'].get('uncommitted') else ''}, "
        f"load {' '.join(f'{v:.2f}' for v in info['load_avg'] or [])}, "
        f"BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}",
        flush=True,
    )
    started = time.perf_counter()
    warm_up()
    rows: list[Row] = []
    if "filling" in sections:
        rows += bench_filling(size["filling_n"], rep["fast"])
        print(f"  filling done ({time.perf_counter() - started:.0f} s)", flush=True)
    if "ceei" in sections:
        rows += bench_ceei(
            size["ceei_small_n"],
            size["ceei_mid_n"],
            size["ceei_large_n"],
            rep["fast"],
            rep["program"],
            rep["program_mid"],
        )
        print(f"  ceei done ({time.perf_counter() - started:.0f} s)", flush=True)
    if "programs" in sections:
        rows += bench_programs(size["programs_n"], rep["fast"], rep["program"])
        print(f"  programs done ({time.perf_counter() - started:.0f} s)", flush=True)
    elapsed = time.perf_counter() - started

    print()
    print(table(rows))
    missed = [r for r in rows if r.met is False]
    print()
    info["load_avg_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(
        f"figures: medians of the repetitions (value from minima in brackets); total {elapsed:.0f} s; "
        f"load average at end {' '.join(f'{v:.2f}' for v in info['load_avg_end'] or [])}"
    )
    print(
        "targets missed: "
        + (
            "; ".join(
                f"{r.what} @ {r.size} ("
                + (
                    f"{r.value:.3g}, target {r.target})"
                    if r.value is not None
                    else f"{r.extra.get('error', 'failed')})"
                )
                for r in missed
            )
            if missed
            else "none"
        )
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "mode": "quick" if args.quick else "full",
                    "seed": SEED,
                    "machine": info,
                    "sizes": size,
                    "repeats": rep,
                    "targets": TARGETS,
                    "elapsed_s": elapsed,
                    "rows": [asdict(r) for r in rows],
                },
                fh,
                indent=2,
            )
        print(f"wrote {args.json}")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
