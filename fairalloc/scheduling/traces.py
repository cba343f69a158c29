"""Workload traces for the dynamic experiments: the Google cluster trace 2011, a synthetic stand-in,
and the DMFA-SRQ experiment's trial (Zhang et al., Journal on Communications 2016, section 6).

* :func:`load_google_task_events` reads per-task ``<CPU request, memory request>`` from the
  ``task_events`` table of the Google cluster trace 2011 (clusterdata-2011-2: ``part-?????-of-00500.csv.gz``).
* :func:`synthetic_google_like` is a SYNTHETIC generator shaped like that trace's requests, for
  when the trace is not at hand. It is not the trace.
* :func:`dmfa_instance` builds the two-resource instance the experiment solves.
* :func:`dmfa_srq_trial` is one run of the experiment: DMFA-SRQ against the static weighted-DRF
  optimum (Eq. 5) for one user count. It lives here, in an installed module, so that Dask worker
  processes (local or remote) can import it; ``paper_examples/dmfa_srq_2016.py`` runs it through
  :func:`fairalloc.analysis.sweep.run_sweep`.

>>> import numpy as np
>>> demands = synthetic_google_like(4, np.random.default_rng(0))
>>> demands.shape, bool(((demands > 0) & (demands <= 1)).all())
((4, 2), True)
>>> inst = dmfa_instance(demands, [0.4, 0.3, 0.2, 0.1], "example")
>>> inst.resources, inst.users
(('cpu', 'mem'), ('1', '2', '3', '4'))
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, UnknownNameError, excerpt, unknown
from fairalloc.core.instance import Instance

__all__ = [
    "TASK_EVENTS_COLUMNS",
    "RUN_STRIDE",
    "decode_trial",
    "dmfa_instance",
    "dmfa_srq_trial",
    "load_google_task_events",
    "replay_arrivals",
    "table_rows",
    "synthetic_google_like",
    "trial_id",
]

#: the columns of the 2011 trace's task_events table, in file order (the files have no header)
TASK_EVENTS_COLUMNS = (
    "timestamp",
    "missing info",
    "job ID",
    "task index",
    "machine ID",
    "event type",
    "user",
    "scheduling class",
    "priority",
    "CPU request",
    "memory request",
    "disk space request",
    "different machine restrictions",
)
_JOB, _TASK, _EVENT = 2, 3, 5
SUBMIT = 0  # event type of a SUBMIT event
#: the requests a task_events line carries, by the resource name the loader gives them
REQUESTS = {"cpu": 9, "mem": 10, "disk": 11}


# --------------------------------------------------------------------------- the real trace


def _open_text(path: Path):
    """A text stream over ``path``, gzip-compressed or not (decided by the gzip magic bytes)."""
    try:
        with open(path, "rb") as raw:
            magic = raw.read(2)
    except FileNotFoundError:
        raise CaseError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CaseError(f"{path}: is a directory; pass the task_events part files themselves") from None
    except OSError as exc:
        raise CaseError(f"{path}: {exc.strerror or exc}") from None
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


class _LineBudget:
    """Counts the lines one call reads from trace files (:data:`fairalloc.core.limits.MAX_TRACE_LINES`)."""

    def __init__(self, path):
        self.path, self.base, self.lineno = path, 0, 0

    def tick(self, lineno: int) -> None:
        self.lineno = lineno
        if self.base + lineno > limits.MAX_TRACE_LINES:
            raise CaseError(
                f"{self.path}, line {lineno}: more than {limits.MAX_TRACE_LINES:,} lines read, the most "
                "fairalloc reads from trace files in one go; cut the files first"
            )

    def next_file(self, path) -> None:
        self.base += self.lineno
        self.path, self.lineno = path, 0


@contextlib.contextmanager
def _reading(path=None, budget: _LineBudget | None = None, hint: str = ""):
    """A :class:`_LineBudget` (``budget``, or a new one for ``path``); damaged gzip, non-UTF-8
    text (``hint`` added to that message) and unreadable CSV become one-line errors."""
    budget = budget or _LineBudget(path)
    try:
        yield budget
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise CaseError(
            f"{budget.path}: damaged gzip file after line {budget.lineno} "
            f"({excerpt(str(exc)) if str(exc) else type(exc).__name__})"
        ) from None
    except UnicodeDecodeError:
        raise CaseError(f"{budget.path}, line {budget.lineno + 1}: not UTF-8 text{hint}") from None
    except csv.Error as exc:
        raise CaseError(f"{budget.path}, line {budget.lineno + 1}: unreadable CSV ({excerpt(str(exc))})") from None
    except OSError as exc:
        raise CaseError(f"{budget.path}: {exc.strerror or excerpt(str(exc))}") from None


def _number(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not np.isfinite(value):
        shown = text if len(text) <= 30 else text[:27] + "..."
        raise CaseError(f"{where}: {what} {shown!r} is not a number")
    return value


def _integer(text: str, what: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        shown = text if len(text) <= 30 else text[:27] + "..."
        raise CaseError(f"{where}: {what} {shown!r} is not an integer") from None


def table_rows(paths: list[Path], columns: tuple[str, ...], table: str) -> Iterator[tuple[str, list[str]]]:
    """The rows of headerless CSV trace files (gzip-compressed or not), in file and line order:
    ``(where, fields)`` with ``where`` the file and line number and the fields stripped; blank
    lines are skipped.  A row without exactly ``len(columns)`` fields is one line naming the file,
    the line and ``table``'s columns; the lines read count against
    :data:`fairalloc.core.limits.MAX_TRACE_LINES` over all the files."""
    budget = _LineBudget(paths[0])
    for path in paths:
        budget.next_file(path)
        stream = _open_text(path)
        with _reading(budget=budget, hint=f" (is this a {table} file?)"), stream:
            for lineno, fields in enumerate(csv.reader(stream), start=1):
                budget.tick(lineno)
                if not fields:  # a blank line
                    continue
                where = f"{path}, line {lineno}"
                if len(fields) != len(columns):
                    raise CaseError(
                        f"{where}: {len(fields)} columns, expected {len(columns)} ({table}: {', '.join(columns)})"
                    )
                yield where, [f.strip() for f in fields]


def load_google_task_events(
    path_or_paths, *, max_tasks: int | None = None, resources: tuple[str, ...] = ("cpu", "mem")
) -> np.ndarray:
    """Per-task ``<CPU request, memory request>`` from Google cluster trace 2011 ``task_events`` files;
    ``resources`` picks other requests of :data:`REQUESTS` (``("cpu", "mem", "disk")``).

    Each file is a CSV without a header (gzip-compressed or not) with the 13 columns of
    :data:`TASK_EVENTS_COLUMNS`. Requests are as published: normalised to the largest machine's
    capacity, so in ``[0, 1]``; an empty field is a missing value.

    Kept: SUBMIT events (event type 0) whose requests (of ``resources``) are all present and ``> 0``,
    one row per task ``(job ID, task index)``: the task's first such SUBMIT event, in the order of
    the files and of their lines (a task resubmitted after an eviction or failure is counted once;
    a SUBMIT without usable requests is skipped, so a later usable one of the same task counts).
    Reading stops after ``max_tasks`` tasks.

    Returns a ``(k, len(resources))`` float array. Raises :class:`fairalloc.core.errors.CaseError` (one line) for a
    missing file, a line without exactly 13 columns (its file and line number), a non-numeric
    event type or request, a damaged gzip file, or when no usable task is found.
    """
    if isinstance(path_or_paths, (str, os.PathLike)):
        paths = [Path(path_or_paths)]
    else:
        paths = [Path(p) for p in path_or_paths]
    if not paths:
        raise CaseError("trace: no task_events file given")
    if max_tasks is not None and (isinstance(max_tasks, bool) or not isinstance(max_tasks, int) or max_tasks < 1):
        raise CaseError(f"max_tasks: must be a positive integer (got {excerpt(max_tasks)})")
    if max_tasks is not None and max_tasks > limits.MAX_TRACE_TASKS:
        raise CaseError(
            f"max_tasks: {max_tasks} tasks, more than the {limits.MAX_TRACE_TASKS:,} fairalloc keeps from a trace"
        )
    for name in resources:
        if name not in REQUESTS:
            raise UnknownNameError(f"resources: {unknown('request', name, REQUESTS)}")
    columns = [(REQUESTS[name], TASK_EVENTS_COLUMNS[REQUESTS[name]]) for name in resources]
    cap = limits.MAX_TRACE_TASKS if max_tasks is None else max_tasks
    seen: set[tuple[str, str]] = set()
    rows: list[tuple[float, ...]] = []
    for where, fields in table_rows(paths, TASK_EVENTS_COLUMNS, "Google 2011 task_events"):
        event_type = _integer(fields[_EVENT], "event type", where)
        texts = [fields[c] for c, _ in columns]
        request = tuple(_number(t, what, where) if t else 0.0 for t, (_, what) in zip(texts, columns))
        if event_type != SUBMIT or min(request) <= 0:  # a missing request counts as 0
            continue
        key = (fields[_JOB], fields[_TASK])
        if key in seen:
            continue
        if len(rows) >= cap:
            if max_tasks is not None:
                return np.array(rows, dtype=float)
            raise CaseError(
                f"{where}: more than {cap:,} usable tasks, the most fairalloc keeps from a trace; pass max_tasks"
            )
        seen.add(key)
        rows.append(request)
        if max_tasks is not None and len(rows) >= max_tasks:
            return np.array(rows, dtype=float)
    if not rows:
        names = ", ".join(str(p) for p in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        wanted = " and ".join(what for _, what in columns)
        raise CaseError(f"{names}: no usable task (no SUBMIT event with {wanted} all > 0)")
    return np.array(rows, dtype=float)


# --------------------------------------------------------------------------- the synthetic stand-in

#: parameters of :func:`synthetic_google_like` (medians as fractions of the largest machine)
SYNTHETIC = {"cpu_median": 0.025, "mem_median": 0.02, "cpu_sigma": 0.9, "mem_sigma": 1.0, "correlation": 0.5}
#: the names of :func:`synthetic_google_like`'s columns, in order (``disk`` and ``net``: synthetic)
SYNTHETIC_RESOURCES = ("cpu", "mem", "disk", "net")


def synthetic_google_like(n: int, rng: np.random.Generator, resources: int = 2) -> np.ndarray:
    """SYNTHETIC ``(n, resources)`` requests shaped like the Google 2011 trace's; NOT the trace.

    This is a stand-in for when the trace (``task_events``, about 40 GB uncompressed) is not
    available. It imitates the qualitative shape reported for the trace's task requests (Reiss
    et al., SoCC 2012): requests normalised to the largest machine, most tasks asking for a few
    per cent of a machine or less, a heavy right tail, CPU and memory requests positively
    correlated. Concretely, ``(log cpu, log mem)`` is bivariate normal with the medians, log
    standard deviations and correlation of :data:`SYNTHETIC` (CPU median 0.025, memory median
    0.02, sigmas 0.9 and 1.0, correlation 0.5), and values are clipped to ``[1e-6, 1]``. These
    parameters are chosen by hand to match that shape, not fitted to the trace; results obtained
    with them are not trace results.  Columns beyond the second (``resources`` up to 4: named
    ``disk`` and ``net`` by :data:`SYNTHETIC_RESOURCES`) are drawn after the first two, with the
    memory column's marginal and the same correlation with CPU; the first two columns do not
    depend on ``resources``.

    Deterministic for a given ``rng`` state:

    >>> a = synthetic_google_like(1000, np.random.default_rng(1))
    >>> bool((a == synthetic_google_like(1000, np.random.default_rng(1))).all())
    True
    >>> bool(np.median(a[:, 0]) < 0.05 and a[:, 0].max() > 10 * np.median(a[:, 0]))
    True
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise CaseError(f"n: must be a non-negative integer (got {excerpt(n)})")
    if n > limits.MAX_TRACE_TASKS:
        raise CaseError(f"n: {n} tasks, more than the {limits.MAX_TRACE_TASKS:,} fairalloc generates")
    if isinstance(resources, bool) or resources not in range(1, len(SYNTHETIC_RESOURCES) + 1):
        raise CaseError(f"resources: between 1 and {len(SYNTHETIC_RESOURCES)} (got {excerpt(resources)})")
    p = SYNTHETIC
    sc, sm, rho = p["cpu_sigma"], p["mem_sigma"], p["correlation"]
    z = rng.standard_normal((int(n), 2))
    if resources > 2:  # after the first two, so those stay what they were
        z = np.column_stack([z, rng.standard_normal((int(n), resources - 2))])
    log_cpu = np.log(p["cpu_median"]) + sc * z[:, :1]
    log_rest = np.log(p["mem_median"]) + sm * (rho * z[:, :1] + np.sqrt(1 - rho * rho) * z[:, 1:])
    return np.clip(np.exp(np.column_stack([log_cpu, log_rest])), 1e-6, 1.0)[:, :resources]


# --------------------------------------------------------------------------- a trace-scale replay

#: a replay's CSV columns, before one ``util_<resource>`` per resource and ``binding``
REPLAY_COLUMNS = ("k", "user", "q", "M", "pool", "dominant_share", "tasks")
REPLAY_CHUNK = 20_000  # rows formatted and written at a time


def replay_arrivals(
    demands, shared, out, *, resources, mechanism: str = "dmfa-srq", progress: bool | None = None
) -> dict[str, Any]:
    """One long arrival sequence solved by a dynamic mechanism's fast path, one CSV row per arrival
    streamed to ``out`` (written whole or not at all).

    Users ``"1".."n"`` with per-task ``demands`` ``(n, m)`` (fractions of one machine; capacity 1
    per resource, named ``resources``) and shared quantities ``shared`` arrive in row order.
    Row ``k``: the arrival's ``q``, ``M^k``, the pool ``Q_k``, her dominant share and tasks on
    arrival (``x_k^k = q_k M^k``, Lemma 1), every resource's share in use after the arrival, and
    the resources that bind.  Progress (:func:`fairalloc.core.progress.progress_bar`) for the
    solve and the writing.  Returns a summary: arrivals, resources, seconds to solve and to
    write, the last ``M``, the smallest sharing-incentive slack ``min_k (M^k - 1) q_k``, and the
    final utilisation.
    """
    import time

    from fairalloc.core.certificate import certify
    from fairalloc.core.files import write_atomically
    from fairalloc.core.progress import progress_bar
    from fairalloc.core.registry import get
    from fairalloc.models.dmfa_srq import DMFASRQ

    mech = get(mechanism)
    if not isinstance(mech, DMFASRQ):
        raise CaseError(f"mechanism: {mechanism} has no threshold step to replay (dmfa-srq or ddrf)")
    demands = np.asarray(demands, dtype=float)
    resources = tuple(resources)
    n = len(demands)
    inst = Instance.from_arrays(np.ones(len(resources)), demands, resources=resources, shared=shared, name="replay")
    start = time.perf_counter()
    with progress_bar(total=n, desc=f"{mechanism} replay", unit="arrival", progress=progress) as bar:
        alloc = certify(mech.fast(inst, progress=bar.update), mech.name)
    solved = time.perf_counter() - start
    history = alloc.history
    q, M = history.q, history.M
    arrival_share = q * M  # x_k^k
    columns = [*REPLAY_COLUMNS, *(f"util_{r}" for r in resources), "binding"]

    def write(path: Path) -> None:
        pools = np.cumsum(q)
        with (
            open(path, "w", newline="") as f,
            progress_bar(total=n, desc="writing rows", unit="row", progress=progress) as bar,
        ):
            rows = csv.writer(f)
            rows.writerow(columns)
            for lo in range(0, n, REPLAY_CHUNK):
                hi = min(n, lo + REPLAY_CHUNK)
                block = np.column_stack(
                    [q[lo:hi], M[lo:hi], pools[lo:hi], arrival_share[lo:hi], arrival_share[lo:hi] / history.mu[lo:hi]]
                )
                for k, numbers, used in zip(range(lo, hi), block.tolist(), history.used[lo:hi].tolist()):
                    binding = " ".join(resources[j] for j in history.binding[k])
                    rows.writerow([k + 1, inst.users[k], *numbers, *used, binding])
                bar.update(hi - lo)

    start = time.perf_counter()
    write_atomically(out, write)
    return {
        "arrivals": n,
        "resources": list(resources),
        "mechanism": mechanism,
        "solve_seconds": solved,
        "write_seconds": time.perf_counter() - start,
        "final_M": float(M[-1]),
        "sharing_incentive_slack": float(np.min((M - 1) * q)),
        "utilization": dict(zip(resources, map(float, history.used[-1]))),
        "out": str(out),
    }


# --------------------------------------------------------------------------- the experiment


def dmfa_instance(demands, shared, name: str = "dmfa-srq-trial") -> Instance:
    """The DMFA-SRQ instance: resources ``cpu`` and ``mem`` of capacity 1, users ``"1".."n"`` in
    arrival order with per-task demands ``demands`` ``(n, 2)`` and shared quantities ``q = shared``."""
    demands = np.asarray(demands, dtype=float)
    if demands.ndim != 2 or demands.shape[1] != 2:
        raise CaseError(f"demand: expected an (n, 2) array of <cpu, mem>, got shape {demands.shape}")
    return Instance.from_arrays([1.0, 1.0], demands, resources=["cpu", "mem"], shared=shared, name=name)


#: trial ids encode ``(users, run)`` as ``users * RUN_STRIDE + run``, so a results file can be
#: extended with more runs or user counts and resumed
RUN_STRIDE = 1_000_000
SAMPLE_USERS = 20  # users sampled for the dominant-share-against-q figures (Figs 3-4)


def trial_id(users: int, run: int) -> int:
    """The trial id of run ``run`` with ``users`` users (:func:`decode_trial` inverts it).

    >>> trial_id(500, 7), decode_trial(trial_id(500, 7))
    (500000007, (500, 7))
    """
    if not 0 <= run < RUN_STRIDE or users < 1:
        raise CaseError(f"trial: run must be in [0, {RUN_STRIDE}) and users >= 1 (got run {run}, users {users})")
    return int(users) * RUN_STRIDE + int(run)


def decode_trial(trial: int) -> tuple[int, int]:
    return int(trial) // RUN_STRIDE, int(trial) % RUN_STRIDE


def _discordant_fraction(q: np.ndarray, x: np.ndarray) -> float:
    """Share of user pairs with ``q_i < q_h`` but ``x_i > x_h``: 0 when x is non-decreasing in q."""
    n = len(q)
    if n < 2:
        return 0.0
    order = np.argsort(q, kind="stable")
    qs, xs = q[order], x[order]
    bad = 0
    block = max(1, (1 << 22) // n)  # rows at a time: memory O(n) blocks, not O(n^2)
    for lo in range(0, n - 1, block):
        hi = min(n - 1, lo + block)
        rows = np.arange(lo, hi)[:, None]
        cols = np.arange(n)[None, :]
        bad += int(
            np.count_nonzero(
                (rows < cols) & (qs[lo:hi, None] < qs[None, :]) & (xs[lo:hi, None] > xs[None, :] * (1 + 1e-12))
            )
        )
    return float(bad) / (n * (n - 1) / 2)


def dmfa_srq_trial(
    trial: int, *, seed: int = 0, trace_rows: np.ndarray | None = None, sample: int = SAMPLE_USERS
) -> dict:
    """One run of the DMFA-SRQ experiment; ``trial = trial_id(users, run)``.

    Drawn from ``numpy.random.default_rng([seed, users, run])``, in this order: ``users`` demand
    vectors (rows of ``trace_rows`` sampled without replacement, or :func:`synthetic_google_like`),
    shared quantities ``q ~ Dirichlet(1, ..., 1)`` (uniform on the simplex, sum 1), a random
    arrival order (a permutation applied to both), and ``min(sample, users)`` users sampled
    without replacement for Figs 3-4. DMFA-SRQ is solved with its fast path; the static
    weighted-DRF optimum is Eq. 5 (:func:`fairalloc.models.dmfa_srq.static_optimum`).

    Returns, for ``dmfa`` (DMFA-SRQ after the last arrival) and ``static`` (weighted DRF): the
    minimum and the sum of the dominant shares, CPU and memory utilisation, the sharing-incentive
    slack ``min_i (x_i - q_i)``, the minimum weighted dominant share ``min_i x_i / q_i`` (what
    weighted DRF maximises: ``M*`` for the static optimum, ``M^n`` for DMFA-SRQ); the share of user
    pairs ordered against ``q`` (``*_discordant``);
    the number of decreases along the sample sorted by ``q``; ``min_q``; and for run 0 the sample
    itself as ``[q, dmfa share, static share, arrival position]`` rows sorted by ``q``.

    >>> r = dmfa_srq_trial(trial_id(20, 0), seed=3)
    >>> r == dmfa_srq_trial(trial_id(20, 0), seed=3), r["users"], len(r["sample"])
    (True, 20, 20)
    >>> r["dmfa_si_slack"] >= -1e-12 and r["static_si_slack"] >= -1e-12
    True
    """
    from fairalloc.core.registry import get
    from fairalloc.engines.dynamic import normalised, shared_quantities
    from fairalloc.models.dmfa_srq import static_optimum

    n, run = decode_trial(trial)
    if not 1 <= n <= limits.MAX_TRIAL_USERS:
        raise CaseError(
            f"trial: {trial} means {n} users, outside [1, {limits.MAX_TRIAL_USERS:,}] "
            "(trial ids are users * RUN_STRIDE + run)"
        )
    rng = np.random.default_rng([int(seed), n, run])
    if trace_rows is not None:
        rows = np.asarray(trace_rows, dtype=float)
        if len(rows) < n:
            raise CaseError(f"trace: {len(rows)} usable tasks, fewer than the {n} users of a run")
        demands = rows[rng.choice(len(rows), size=n, replace=False)]
    else:
        demands = synthetic_google_like(n, rng)
    q = rng.dirichlet(np.ones(n))
    while (q <= 0).any():  # a gamma variate underflowing to 0: vanishingly rare
        q = rng.dirichlet(np.ones(n))
    arrival = rng.permutation(n)
    demands, q = demands[arrival], q[arrival]
    picked = rng.choice(n, size=min(sample, n), replace=False)

    inst = dmfa_instance(demands, q, f"dmfa-srq-{n}-users-run-{run}")
    q = shared_quantities(inst, "dmfa-srq")  # exactly what the mechanism sees
    alloc = get("dmfa-srq").allocate(inst, "fast")
    x_dyn = np.asarray(alloc.dominant_shares, dtype=float)
    u_dyn = np.asarray(alloc.utilization, dtype=float)
    x_sta = static_optimum(inst)
    u_sta = x_sta @ normalised(inst, "dmfa-srq")  # capacities are 1
    result: dict[str, Any] = {
        "users": n,
        "run": run,
        "seed": int(seed),
        "source": "synthetic" if trace_rows is None else "trace",
        "min_q": float(q.min()),
        "final_M": float(alloc.history.M[-1]),
        "static_M": float(x_sta[0] / q[0]),
    }
    for name, x, u in (("dmfa", x_dyn, u_dyn), ("static", x_sta, u_sta)):
        result.update(
            {
                f"{name}_min_share": float(x.min()),
                f"{name}_sum_shares": float(x.sum()),
                f"{name}_util_cpu": float(u[0]),
                f"{name}_util_mem": float(u[1]),
                f"{name}_si_slack": float((x - q).min()),
                f"{name}_min_weighted": float((x / q).min()),
                f"{name}_discordant": _discordant_fraction(q, x),
            }
        )
    order = picked[np.argsort(q[picked], kind="stable")]
    result["sample_decreases"] = int(np.sum(x_dyn[order][1:] < x_dyn[order][:-1] * (1 - 1e-12)))
    if run == 0:
        result["sample"] = [[float(q[i]), float(x_dyn[i]), float(x_sta[i]), int(i) + 1] for i in order]
    return result
