"""Sweeps: many independent, deterministic trials run in parallel on Dask distributed, with results
streamed to a JSON-lines file and resumable after any interruption, a SIGKILL included.

    from functools import partial
    from fairalloc.analysis.sweep import demo_trial, run_sweep

    results = run_sweep(partial(demo_trial, seed=1), range(10_000), "out.jsonl", meta={"seed": 1})

By default the trials run on a local cluster of ``workers`` processes, one thread each.
``dask_address="tcp://host:8786"`` runs the same code on a running Dask scheduler and its
workers instead. Remote workers must be able to import the task's module, with fairalloc
installed there.

The ``out`` file starts with a header line, ``{"sweep": desc, "meta": meta, "format": ...}``,
followed by one line per finished trial, ``{"trial": id, ...}``. The engine appends each finished
chunk of trials with a single write, then calls ``fsync``, so a kill loses only the chunks still
in flight. When a sweep starts and the file already exists, it keeps every result in the file
and runs only the missing trials. A truncated last line (from a kill during a write) is removed
from the file before anything is appended, so the file never holds a trial twice. A file whose
header names a different ``desc`` or ``meta`` is refused, so the results of two sweeps never mix.
While a sweep runs it holds an exclusive ``flock`` on the file, so a second sweep on the same
file fails at once instead of appending duplicates.

Every returned result, new or read back from the file, has been through one JSON round trip.
A resumed sweep therefore returns exactly what an uninterrupted one returns.

The results file is this append stream, not rewritten whole (:func:`fairalloc.core.files.write_atomically`
writes every other file): it is the user's own path, opened as given.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import math
import operator
import os
import socket
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Sized
from pathlib import Path
from typing import Any, cast

import numpy as np

from fairalloc.core import limits
from fairalloc.core.errors import FairallocError, excerpt, one_line
from fairalloc.core.files import fsync_directory

__all__ = ["TrialError", "demo_followup", "demo_trial", "read_results", "run_sweep"]

FORMAT = "fairalloc-sweep/1"  # the header's "format" value; bump when the line format changes
CONNECT_TIMEOUT = 5.0  # seconds to reach a remote scheduler (TCP connect, then handshake)
MAX_CHUNK = 50  # the automatic chunk size never exceeds this many trials...
CHUNKS_PER_WORKER = 6  # ...and otherwise aims at this many chunks per worker
IN_FLIGHT_PER_WORKER = 3  # chunks submitted but not yet collected, per worker (bounded memory)
#: a sweep that stops at hits sizes each group's chunks to about this many seconds once it has timed
#: a few of its trials: a chunk cannot be interrupted, so the one running beside a hit is wasted
CHUNK_SECONDS = 1.0


class TrialError(FairallocError):
    """A trial raised an exception, or returned something that cannot be written as JSON.

    ``trial`` is the trial's id. ``remote_traceback`` holds the traceback text from the worker,
    which ``--debug`` can show.
    """

    def __init__(self, message: str, trial: int, remote_traceback: str = ""):
        super().__init__(message)
        self.trial = trial
        self.remote_traceback = remote_traceback


# --------------------------------------------------------------------------- a demo task


def demo_trial(
    trial: int, seed: int = 0, sleep: float = 0.0, fail: Iterable[int] = (), record: str | None = None
) -> dict:
    """A deterministic example trial: DRF on a small random instance drawn from ``(seed, trial)``.

    It sleeps ``sleep`` seconds first, to stand in for a slow trial. It raises ``ValueError`` when
    ``trial`` is in ``fail``, to exercise error reporting. When ``record`` names a directory, each
    call creates an empty file there, named ``<trial>-<random>``, so a test can count the calls
    the workers made. The function lives in an importable module so that worker processes can
    unpickle it, for example as ``partial(demo_trial, seed=3)``.

    >>> r = demo_trial(7, seed=1)
    >>> sorted(r), r == demo_trial(7, seed=1)
    (['min_dominant_share', 'resources', 'seed', 'total_tasks', 'users'], True)
    """
    from fairalloc.core.instance import Instance
    from fairalloc.core.registry import get

    if record is not None:
        Path(record, f"{trial}-{uuid.uuid4().hex}").touch()
    if sleep > 0:
        time.sleep(sleep)
    if trial in set(fail):
        raise ValueError(f"demo failure requested for trial {trial}")
    rng = np.random.default_rng([seed, trial])
    n, m = int(rng.integers(2, 7)), int(rng.integers(2, 5))
    demand = rng.uniform(0.1, 1.0, (n, m))
    alloc = get("drf").allocate(Instance.from_arrays(rng.uniform(0.2, 0.5, m) * n, demand))
    return {
        "seed": seed,
        "users": n,
        "resources": m,
        "min_dominant_share": float(alloc.dominant_shares.min()),
        "total_tasks": float(alloc.tasks.sum()),
    }


# --------------------------------------------------------------------------- the file


def _header(desc: str, meta: Any) -> dict:
    return {"sweep": desc, "meta": meta, "format": FORMAT}


def _header_bytes(header: dict) -> bytes:
    return (json.dumps(header) + "\n").encode()


def _parse(data: bytes, path: str | os.PathLike) -> tuple[dict | None, dict[int, dict], int]:
    """Parse a sweep file: ``(header or None, {trial: result}, end of the last good line)``.

    The last line may be truncated or corrupt, from a kill in the middle of a write. It is left
    out, and the returned offset lets the caller cut it off. Damage anywhere else is an error.
    A file without a valid header is an error, unless its whole content could be the beginning
    of a header cut short by a kill (``header`` is then None and the offset is 0).
    """
    header: dict | None = None
    results: dict[int, dict] = {}
    pos = good_end = 0
    lineno = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl == -1:  # no newline: a write cut short; drop it
            break
        lineno += 1
        final = nl + 1 == len(data)
        try:
            obj = json.loads(data[pos:nl])
        except ValueError:
            obj = None
        if lineno == 1:
            if not (isinstance(obj, dict) and "sweep" in obj and "trial" not in obj):
                break  # judged below: a cut-short header or not a sweep file
            header = obj
        else:
            trial = obj.get("trial") if isinstance(obj, dict) else None
            if not isinstance(trial, int) or isinstance(trial, bool):
                if final:
                    break  # a corrupt last line: drop it
                raise FairallocError(
                    f"{path}: line {lineno} is not a trial result (damaged file?); refusing to resume from it"
                )
            if trial in results:
                raise FairallocError(f"{path}: trial {trial} appears twice (line {lineno}); refusing to resume from it")
            results[trial] = obj
        pos = good_end = nl + 1
    if header is None and data:
        if not b'{"sweep": '.startswith(data[:10]) or b"\n" in data:
            raise FairallocError(f"{path}: not a sweep results file (no sweep header line); refusing to overwrite it")
        good_end = 0
    return header, results, good_end


def read_results(path: str | os.PathLike) -> list[dict]:
    """The results in a sweep file, sorted by trial id. A truncated last line is skipped."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(limits.MAX_SWEEP_FILE_BYTES + 1)
    except OSError as exc:
        raise FairallocError(f"{path}: {exc.strerror or exc}") from None
    _too_big(data, path)
    _, results, _ = _parse(data, path)
    return [results[t] for t in sorted(results)]


def _too_big(data: bytes, path) -> None:
    if len(data) > limits.MAX_SWEEP_FILE_BYTES:
        raise FairallocError(
            f"{path}: a sweep results file larger than {limits.MAX_SWEEP_FILE_BYTES} bytes, the "
            "most fairalloc reads back; split the sweep into several files"
        )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _SweepFile:
    """An exclusively locked sweep file, open for appending after its last good line."""

    def __init__(self, path: str | os.PathLike, header: dict):
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise FairallocError(f"{path}: {exc.strerror or exc}") from None
        try:
            self._lock()
            parts = []
            size = 0
            while size <= limits.MAX_SWEEP_FILE_BYTES and (part := os.read(self.fd, 1 << 22)):
                parts.append(part)
                size += len(part)
            data = b"".join(parts)
            _too_big(data, path)
            found, self.results, good_end = _parse(data, path)
            if found is not None and (found.get("sweep"), found.get("meta"), found.get("format")) != (
                header["sweep"],
                header["meta"],
                header["format"],
            ):
                raise FairallocError(
                    f"{path}: written by another sweep ({_brief(found)}), not this one ({_brief(header)}); "
                    f"use another file or delete this one"
                )
            if good_end < len(data):  # cut off a truncated last line before appending
                os.ftruncate(self.fd, good_end)
            os.lseek(self.fd, good_end, os.SEEK_SET)
            if found is None:
                _write_all(self.fd, _header_bytes(header))
            os.fsync(self.fd)
            if found is None:
                fsync_directory(os.path.dirname(os.path.abspath(self.path)))
        except BaseException:
            os.close(self.fd)
            raise

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            return
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FairallocError(f"{self.path}: another sweep is writing to this file") from None
        except OSError:  # a file system without locks
            pass

    def append(self, lines: list[str]) -> None:
        if lines:
            _write_all(self.fd, "".join(line + "\n" for line in lines).encode())
            os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)  # releases the lock


def _brief(header: dict) -> str:
    text = f"desc {header.get('sweep')!r}, meta {json.dumps(header.get('meta'))}"
    return text if len(text) <= 160 else text[:157] + "..."


# --------------------------------------------------------------------------- the worker side


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def demo_followup(row: dict, sleep: float = 0.0) -> dict:
    """An example follow-up (``run_sweep(followup=...)``) of a :func:`demo_trial` hit: it sleeps
    ``sleep`` seconds, to stand in for a slow one (a shrink), then doubles the hit's tasks.

    >>> demo_followup({"trial": 3, "total_tasks": 1.5})
    {'trial': 3, 'total_tasks': 3.0}
    """
    if sleep > 0:
        time.sleep(sleep)
    return {"trial": row["trial"], "total_tasks": 2 * row["total_tasks"]}


def _failure(trial: int, what: str, exc: Exception) -> tuple[int, str, str]:
    """``(trial, one line naming what failed and where, the traceback)``, sent back by a worker."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)[1:]  # without the caller's frame
    if frames:
        where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno} in {frames[-1].name})"
    message = one_line(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    return trial, f"{what} failed: {message}{where}", traceback.format_exc()


def _follow_up(followup: Callable[[dict], Any], row: dict) -> tuple[Any, tuple | None]:
    """Run ``followup(row)`` on a worker: ``(its result, None)`` or ``(None, the failure)``."""
    try:
        return followup(row), None
    except Exception as exc:
        return None, _failure(row["trial"], f"the follow-up of trial {row['trial']}", exc)


def _run_chunk(
    task: Callable[[int], dict], trial_ids: list[int], stops: _Stops | None = None
) -> tuple[list[str], tuple | None, float]:
    """Run trials on a worker: ``(JSON lines of the finished trials, None or (trial, message,
    traceback), the seconds they took)``.

    Trials run in order and the chunk stops at the first failure. The lines finished before it
    are still returned, so the caller can write them before it reports the failure.  With
    ``stops`` (a fresh :class:`_Stops`), a hit among the chunk's own results leaves out its later
    trials that the hit makes unwanted, as the collector would (all of them without a stop group):
    a chunk of 50 trials of a cell whose first counterexample is its trial 0 used to run all 50.
    """
    lines: list[str] = []
    start = time.perf_counter()
    failure = _run_trials(task, trial_ids, stops, lines)
    return lines, failure, time.perf_counter() - start


def _run_trials(
    task: Callable[[int], dict], trial_ids: list[int], stops: _Stops | None, lines: list[str]
) -> tuple | None:
    """:func:`_run_chunk`'s trials: each one's JSON line appended to ``lines``; the failure or None."""
    for trial in trial_ids:
        if stops is not None and not stops.wanted([trial]):
            continue
        try:
            result = task(trial)
        except Exception as exc:
            return _failure(trial, f"trial {trial}", exc)
        if not isinstance(result, dict):
            return (trial, f"trial {trial} failed: the task returned a {type(result).__name__}, not a dict", "")
        row = {"trial": trial}
        row.update((k, v) for k, v in result.items() if k != "trial")
        try:
            lines.append(json.dumps(row, default=_json_default))
        except (TypeError, ValueError) as exc:
            return (
                trial,
                f"trial {trial} failed: its result is not JSON-serialisable ({one_line(exc)})",
                traceback.format_exc(),
            )
        if stops is not None and stops.see([row]):
            break
    return None


# --------------------------------------------------------------------------- the cluster


def _not_a_cancelled_chunk(record: logging.LogRecord) -> bool:
    """False for the scheduler's error on gathering keys it has forgotten: chunks the sweep
    cancelled (a group's hit left them unwanted) while their results were being gathered."""
    states = record.args  # (logging keeps a lone mapping argument as the args themselves)
    forgotten = isinstance(states, dict) and bool(states) and set(states.values()) == {"forgotten"}
    return not (str(record.msg).startswith("Couldn't gather keys") and forgotten)


@contextlib.contextmanager
def _quiet_distributed() -> Iterator[None]:
    """Distributed's loggers at ERROR for the sweep (restored afterwards): no chatter on stderr."""
    names = ["distributed"] + [n for n in logging.root.manager.loggerDict if n.startswith("distributed.")]
    saved = {n: logging.getLogger(n).level for n in names}
    for n in names:
        logging.getLogger(n).setLevel(logging.ERROR)
    scheduler = logging.getLogger("distributed.scheduler")
    scheduler.addFilter(_not_a_cancelled_chunk)
    try:
        yield
    finally:
        scheduler.removeFilter(_not_a_cancelled_chunk)
        for n, level in saved.items():
            logging.getLogger(n).setLevel(level)


@contextlib.contextmanager
def _restored_environ() -> Iterator[None]:
    """Undo the variables Dask's nanny sets in this process (OMP_NUM_THREADS, PYTHONHASHSEED, ...)."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for key in set(os.environ) - set(saved):
            del os.environ[key]
        for key, value in saved.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


def _unreachable(address: str, reason: str) -> FairallocError:
    return FairallocError(f"--dask: cannot reach the Dask scheduler at {address}: {one_line(reason)}")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower() if exc.strerror[:1].isupper() and exc.strerror[1:2].islower() else exc.strerror
    return str(exc) or type(exc).__name__


async def _identity(address: str, timeout: float) -> Any:
    from distributed.comm import connect

    comm = await connect(address, timeout=timeout)
    try:
        await comm.write({"op": "identity", "reply": True})
        return await asyncio.wait_for(comm.read(), timeout)
    finally:
        comm.abort()


def _probe(address: str) -> None:
    """Fail fast, with a clear reason, unless a Dask scheduler answers at a ``tcp://`` address.

    Left alone, ``distributed.Client`` retries a refused connection until its timeout and then
    reports only "timed out". It can also fail with odd errors, such as a ``MemoryError`` when a
    non-Dask server answers. A failed Client then leaves a noisy ``__del__`` behind at exit.
    """
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location)
        if not 0 < int(port) < 65536:
            raise ValueError(f"port {port} out of range")
    except (ValueError, TypeError) as exc:
        raise _unreachable(address, f"invalid address ({exc})") from None
    if scheme != "tcp":  # tls://, ucx://, ...: leave it to the Client
        return
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise _unreachable(
            address, _reason(exc) if not isinstance(exc, TimeoutError) else f"no answer within {CONNECT_TIMEOUT:g} s"
        ) from None
    try:  # a thread of its own: asyncio.run also works when the caller runs an event loop
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            reply = pool.submit(asyncio.run, _identity(address, CONNECT_TIMEOUT)).result()
    except Exception as exc:
        raise _unreachable(address, f"no Dask scheduler answered ({type(exc).__name__}: {exc})") from None
    if not (isinstance(reply, dict) and reply.get("type") == "Scheduler"):
        raise _unreachable(address, f"the server there is not a Dask scheduler ({str(reply)[:80]})")


def _connect(address: str):
    from distributed import Client

    _probe(address)
    client = Client.__new__(Client)  # a handle even if __init__ fails, to close it now: otherwise
    try:  # its __del__ times out at exit with a traceback on stderr
        Client.__init__(client, address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except Exception as exc:
        with contextlib.suppress(Exception):
            client.close(timeout=CONNECT_TIMEOUT)
        raise _unreachable(address, _reason(exc)) from None
    return client


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT while worker processes start, so that they inherit SIG_IGN.

    A Ctrl-C on a terminal reaches the whole foreground process group. Without this, every worker
    would print a KeyboardInterrupt traceback. With it, only this process sees the Ctrl-C, and it
    closes the cluster.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGINT"):
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _local_client(workers: int):
    from distributed import Client, LocalCluster

    try:
        with _sigint_ignored():
            # Without the dashboard, the scheduler still serves a few HTTP routes, by default on
            # port 8787. When another cluster already holds that port, it warns on stderr. A free
            # port on localhost avoids that.
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            )
    except Exception as exc:
        raise FairallocError(f"cannot start a local Dask cluster of {workers} workers: {_reason(exc)}") from None
    try:
        return Client(cluster, set_as_default=False), cluster
    except BaseException:
        cluster.close()
        raise


# --------------------------------------------------------------------------- the engine


def _trial_ids(trial_ids: Iterable[int]) -> list[int]:
    try:
        size = len(cast(Sized, trial_ids))  # a range of 10**12 ids is refused without a list
    except TypeError:  # an iterable without a length (a generator)
        size = None
    if size is not None and size > limits.MAX_TRIALS:
        raise FairallocError(f"trial_ids: {size} trials, more than the {limits.MAX_TRIALS} of one sweep")
    ids: list[int] = []
    for t in trial_ids:
        if len(ids) >= limits.MAX_TRIALS:
            raise FairallocError(f"trial_ids: more than the {limits.MAX_TRIALS} trials of one sweep")
        if isinstance(t, bool):
            raise FairallocError(f"trial_ids: {excerpt(t)} is not an integer")
        try:
            ids.append(operator.index(t))
        except TypeError:
            raise FairallocError(f"trial_ids: {excerpt(t)} is not an integer") from None
    seen: set[int] = set()
    for t in ids:
        if t in seen:
            raise FairallocError(f"trial_ids: trial {t} appears twice")
        seen.add(t)
    return ids


class _Stops:
    """When a sweep stops early: ``stop_when`` is a predicate on a result (a *hit*). Without
    ``stop_group`` a hit stops the whole sweep; with it (a trial id -> its group), a hit stops only
    the trials of its group numbered above it, so the rest of the sweep goes on (``table2``: a cell
    stops at its first counterexample, the other cells do not)."""

    def __init__(self, stop_when: Callable[[dict], bool] | None, stop_group: Callable[[int], Any] | None):
        self.when, self.group = stop_when, stop_group
        self.first: dict[Any, int] = {}  # a group -> its lowest hit seen so far

    def see(self, results: Iterable[dict]) -> bool:
        """Note the hits among ``results``; True when the whole sweep stops."""
        if self.when is None:
            return False
        hits = [r["trial"] for r in results if self.when(r)]
        if self.group is None:
            return bool(hits)
        for t in hits:
            g = self.group(t)
            self.first[g] = min(t, self.first.get(g, t))
        return False

    def wanted(self, trials: list[int]) -> list[int]:
        """``trials`` without those of a group above its first hit.  Chunks go out in increasing
        order, so every trial below a hit has been sent before the hit is seen, and the lowest hit
        of each group is the one an uninterrupted, unstopped sweep finds."""
        if not self.first:
            return trials
        group, first = cast(Callable[[int], Any], self.group), self.first
        return [t for t in trials if t < first.get(group(t), t + 1)]


class _FollowUps:
    """``followup`` of each group's lowest hit, due once every trial of the group below it has run
    (no lower hit can come then)."""

    def __init__(self, followup: Callable[[dict], Any], stops: _Stops, todo: list[int], label: str):
        self.fn, self.stops, self.label = followup, stops, label
        self.below: dict[Any, list[int]] = {}  # a group -> its trials in this run
        for t in todo:
            self.below.setdefault(cast(Callable[[int], Any], stops.group)(t), []).append(t)
        self.sent: set = set()  # groups followed up

    def due(self, results: dict[int, dict]) -> list[int]:
        """The hits to follow up now (each once)."""
        out = []
        for g, hit in self.stops.first.items():
            if g not in self.sent and all(t in results for t in self.below.get(g, ()) if t < hit):
                self.sent.add(g)
                out.append(hit)
        return out


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FairallocError(f"{name}: must be a positive integer, not {excerpt(value)}")
    return value


def run_sweep(
    task,
    trial_ids,
    out=None,
    *,
    workers=None,
    dask_address=None,
    progress=None,
    desc="trials",
    stop_when=None,
    stop_group=None,
    chunk_size=None,
    meta=None,
    followup=None,
    followup_desc="follow-ups",
    order=None,
) -> list[dict]:
    """Run ``task(trial)`` for every id in ``trial_ids`` on Dask, and return the results sorted by trial.

    task: a picklable callable, either a top-level function or a ``functools.partial`` of one. It
        takes an ``int`` and returns a JSON-serialisable dict; numpy scalars and arrays are
        converted. The engine sets the key ``"trial"`` to the trial's id.
    trial_ids: unique integers.
    out: a JSON-lines file, or None. The engine writes each finished chunk to it and fsyncs it.
        Trials already in the file are not run again, and their results are returned with the
        rest. Only the requested ids are returned, although the file keeps every result it holds.
    workers: the number of local worker processes, one thread each (default ``os.cpu_count()``).
        It is ignored when ``dask_address`` is given.
    dask_address: a Dask scheduler's address, such as ``"tcp://host:8786"``, to use instead of
        a local cluster.
    progress: show a bar on stderr (:func:`fairalloc.core.progress.progress_bar`): None means a bar
        on a terminal and a line at most every 10 s when stderr is piped; False, nothing.
    desc: the bar's label, also stored in the file's header.
    stop_when: a predicate on a result. When it is true for a finished result, the remaining work
        is cancelled and the finished results are returned. This includes results already in the
        file, so a resumed search that already has its hit returns at once without a cluster.
        A chunk stops at its own hits as well: the trials after a hit in the same chunk do not run.
    stop_group: with ``stop_when``, a function of a trial id (its group): a hit then stops only the
        trials of its group numbered above it, and the sweep goes on with the others. Trials
        below a hit always run, so each group's lowest hit is the same as in a full sweep. A
        chunk in flight whose trials are all above its group's hit is cancelled (and dropped if
        it had finished unseen); one collected first, or holding trials still wanted, returns
        every trial it ran (each group's up to the chunk's own first hit in it). Skipped trials
        count as done on the progress bar.
    chunk_size: the number of trials per Dask task. By default about ``CHUNKS_PER_WORKER`` chunks
        per worker, and at most ``MAX_CHUNK`` trials each; with ``stop_when``, each group's chunks
        then start at one trial and double up to that size.
    meta: JSON-serialisable parameters of the sweep, stored in the file's header. A file
        written with another ``desc`` or ``meta`` is refused with :class:`FairallocError`.
    followup: with ``stop_group``, a picklable ``followup(row)``, run on a worker for each
        group's lowest hit as soon as every trial of the group below it has run, while the sweep
        goes on (``table2`` shrinks each cell's counterexample so). Its result is added to the
        returned row as ``"followup"``, not to the file; a hit is followed up only by a sweep
        that starts workers (a resumed sweep with nothing left to run does not), and one that
        fails stops the sweep as a failing trial does.
    followup_desc: the label of the follow-ups' bar (``"<desc>: <followup_desc>"``), shown when
        every trial is in and follow-ups are still running.
    order: a key on trial ids: the trials are sent in its order (default: by id), the costliest
        first, say, so that the longest follow-up does not run alone at the end. With
        ``stop_when`` it must keep each stop group's trials (all of them, without ``stop_group``)
        in increasing order: each group's lowest hit relies on it.

    A trial that raises stops the sweep with :class:`TrialError`, a :class:`FairallocError`
    that names the trial. The finished results are written first.
    """
    ids = _trial_ids(trial_ids)
    if workers is not None:
        _positive("workers", workers)
        if workers > limits.MAX_WORKERS:
            raise FairallocError(
                f"workers: {workers} worker processes, more than the {limits.MAX_WORKERS} fairalloc starts"
            )
    if chunk_size is not None:
        _positive("chunk_size", chunk_size)
        chunk_size = min(chunk_size, limits.MAX_TRIALS)
    if followup is not None and (stop_when is None or stop_group is None):
        raise FairallocError("followup: needs stop_when and stop_group (it follows each group's lowest hit)")
    try:
        meta = json.loads(json.dumps(meta))
    except (TypeError, ValueError) as exc:
        raise FairallocError(f"meta: not JSON-serialisable ({exc})") from None

    sweep_file = _SweepFile(out, _header(str(desc), meta)) if out is not None else None
    try:
        wanted = set(ids)
        results = {t: r for t, r in (sweep_file.results.items() if sweep_file else ()) if t in wanted}
        stops = _Stops(stop_when, stop_group)
        todo = [] if stops.see(results.values()) else stops.wanted(sorted(wanted - results.keys()))
        if order is not None:
            todo = _ordered(todo, order, stop_group) if stop_when is not None else sorted(todo, key=order)
        if todo:
            _run(
                task,
                todo,
                results,
                sweep_file,
                len(ids),
                workers=workers,
                dask_address=dask_address,
                progress=progress,
                desc=str(desc),
                stops=stops,
                chunk_size=chunk_size,
                follow=_FollowUps(followup, stops, todo, followup_desc) if followup is not None else None,
            )
    finally:
        if sweep_file is not None:
            sweep_file.close()
    return [results[t] for t in sorted(results)]


def _ordered(todo: list[int], order: Callable[[int], Any], group: Callable[[int], Any] | None) -> list[int]:
    """``todo`` sorted by ``order``, checked to keep each stop group's trials increasing."""
    todo = sorted(todo, key=order)
    last: dict[Any, int] = {}
    for t in todo:
        g = group(t) if group is not None else None
        if last.get(g, t) > t:
            raise FairallocError(
                f"order: sends trial {t} after trial {last[g]} of its stop group; keep each group increasing"
            )
        last[g] = t
    return todo


def _unsendable(exc: BaseException, name: str = "task") -> FairallocError:
    return FairallocError(
        f"{name}: cannot be sent to the workers ({type(exc).__name__}: {one_line(exc)}); "
        f"it must be picklable, and importable on the workers: a top-level function of an "
        f"installed module, or a functools.partial of one"
    )


def _run(
    task,
    todo: list[int],
    results: dict[int, dict],
    sweep_file: _SweepFile | None,
    total: int,
    *,
    workers,
    dask_address,
    progress,
    desc,
    stops: _Stops,
    chunk_size,
    follow: _FollowUps | None,
) -> None:
    import cloudpickle

    from fairalloc.core.progress import progress_bar

    # checked before a cluster starts (Dask itself would log tracebacks on stderr first); the
    # chunks apply the stops too
    sent = (("task", task), ("stop_when", stops.when), ("stop_group", stops.group), ("followup", follow and follow.fn))
    for name, value in sent:
        try:
            cloudpickle.dumps(value)
        except Exception as exc:
            raise _unsendable(exc, name) from None
    bar = progress_bar(total=total, initial=total - len(todo), desc=desc, unit="trial", progress=progress)
    client = cluster = None
    outstanding: set = set()
    try:
        with _quiet_distributed(), _restored_environ():
            try:
                if dask_address is not None:
                    client = _connect(dask_address)
                    n_workers = max(1, sum(client.nthreads().values()))
                else:
                    n_workers = workers or os.cpu_count() or 1
                    client, cluster = _local_client(n_workers)
                size = chunk_size or max(1, min(MAX_CHUNK, math.ceil(len(todo) / (CHUNKS_PER_WORKER * n_workers))))
                pace = _Pace(stops.group)
                chunks = _chunks(todo, size, stops.group, stops.when is not None and chunk_size is None, pace)
                _collect(
                    client,
                    task,
                    chunks,
                    pace,
                    IN_FLIGHT_PER_WORKER * n_workers,
                    outstanding,
                    results,
                    sweep_file,
                    bar,
                    stops,
                    follow,
                )
            finally:
                if client is not None:
                    if outstanding:
                        with contextlib.suppress(Exception):
                            client.cancel(list(outstanding))
                    with contextlib.suppress(Exception):
                        client.close()
                if cluster is not None:
                    with contextlib.suppress(Exception):
                        cluster.close()
    finally:
        bar.close()


def _tail_bar(bar, total: int, label: str):
    """Close the trials' bar (its last line says they are all in) and show the follow-ups still
    running on their own: they can take minutes after the last trial (a slow shrink)."""
    from fairalloc.core.progress import progress_bar

    if bar.disable:  # --no-progress (a disabled bar has no desc)
        return progress_bar(total=total, progress=False)
    bar.close()
    return progress_bar(total=total, desc=f"{bar.desc}: {label}", unit="hit")


def _lost(what: str, value) -> FairallocError:
    """A future that did not finish (a worker died, the scheduler went away, ...)."""
    exc = value[1] if isinstance(value, tuple) else value
    return FairallocError(f"{what} could not run on Dask: {type(exc).__name__}: {one_line(exc) or 'no details'}")


def _chunks(
    todo: list[int],
    size: int,
    group: Callable[[int], Any] | None,
    grow: bool,
    pace: Callable[[Any], float | None] = lambda g: None,
) -> Iterator[list[int]]:
    """``todo`` in chunks of ``size`` trials, in order.  With ``grow`` (a sweep that stops at hits),
    each run of one stop group's trials goes in chunks of one trial until ``pace(group)`` (read as
    each chunk is cut) gives the seconds its trials have taken each; then they double up to
    ``size`` and to about ``CHUNK_SECONDS``.  A chunk in flight cannot be interrupted, so the one
    running beside the chunk that finds a group's first hit is then short: at a fixed 50,
    ``table2`` ran on for up to 50 trials past a cell's counterexample at its trial 0, and by
    doubling alone, 37 strategy-proofness trials of ``yunikorn-fair`` (30 s) past its trial 114
    and 17 of ``hdrf-fluid`` past its trial 13 (cut before its first chunk came back)."""
    if not grow:
        yield from (todo[k : k + size] for k in range(0, len(todo), size))
        return
    chunk: list[int] = []
    step, current = 1, None
    for t in todo:
        g = group(t) if group is not None else None
        if chunk and (g != current or len(chunk) == step):
            yield chunk
            step = 1 if g != current else min(2 * step, size, _timed_size(pace(g)))
            chunk = []
        current = g
        chunk.append(t)
    if chunk:
        yield chunk


def _timed_size(seconds_per_trial: float | None) -> int:
    if seconds_per_trial is None:  # not timed yet: one trial at a time
        return 1
    return max(1, int(CHUNK_SECONDS / seconds_per_trial)) if seconds_per_trial > 0 else limits.MAX_TRIALS


class _Pace:
    """Seconds per trial of each stop group, from its finished chunks (:func:`_chunks` reads it)."""

    def __init__(self, group: Callable[[int], Any] | None):
        self.group = group
        self.spent: dict[Any, tuple[int, float]] = {}

    def add(self, trial: int, count: int, seconds: float) -> None:
        g = self.group(trial) if self.group is not None else None
        done, spent = self.spent.get(g, (0, 0.0))
        self.spent[g] = (done + count, spent + seconds)

    def __call__(self, g: Any) -> float | None:
        done, spent = self.spent.get(g, (0, 0.0))
        return spent / done if done else None


def _collect(
    client,
    task,
    chunks: Iterator[list[int]],
    pace: _Pace,
    max_in_flight: int,
    outstanding: set,
    results: dict[int, dict],
    sweep_file: _SweepFile | None,
    bar,
    stops: _Stops,
    follow: _FollowUps | None,
) -> None:
    """Keep at most ``max_in_flight`` chunks submitted, write each as it finishes, stop on a hit
    (or leave out the trials a hit makes unwanted, :class:`_Stops`), send the follow-ups due."""
    from distributed import as_completed

    token = uuid.uuid4().hex[:12]
    try:
        task_ref = client.scatter(task, broadcast=True, hash=False)  # pickled and shipped once
    except Exception as exc:
        raise _unsendable(exc) from None
    follow_ref = client.scatter(follow.fn, broadcast=True, hash=False) if follow is not None else None
    # with_results: chunks are fetched in the background, no blocking round trip per chunk here
    finished = as_completed(loop=client.loop, with_results=True, raise_errors=False)
    spans: dict[str, list[int]] = {}  # future key -> its trial ids
    follows: dict[str, int] = {}  # follow-up future key -> its hit's trial

    def send_follow_ups() -> None:
        for hit in follow.due(results) if follow is not None else ():
            future = client.submit(_follow_up, follow_ref, results[hit], key=f"fairalloc-followup-{token}-{hit}")
            follows[future.key] = hit
            outstanding.add(future)
            finished.add(future)

    def record_follow_up(future, value) -> FairallocError | None:
        outstanding.discard(future)
        hit = follows.pop(future.key)
        if future.status != "finished":
            return _lost(f"the follow-up of trial {hit}", value)
        result, failure = value
        if failure:
            return TrialError(failure[1], failure[0], failure[2])
        results[hit] = {**results[hit], "followup": result}
        return None

    def submit() -> None:
        for whole in chunks:
            chunk = stops.wanted(whole)
            bar.update(len(whole) - len(chunk))  # left out: settled
            if chunk:
                own = _Stops(stops.when, stops.group) if stops.when is not None else None
                future = client.submit(_run_chunk, task_ref, chunk, own, key=f"fairalloc-sweep-{token}-{chunk[0]}")
                spans[future.key] = chunk
                outstanding.add(future)
                finished.add(future)
                return

    def record(future, value) -> tuple[FairallocError | None, bool]:
        """Write and keep a finished chunk's results: (the error it reports or None, stop_when hit)."""
        outstanding.discard(future)
        chunk = spans.pop(future.key)
        if future.status != "finished":  # a worker died, the scheduler went away, ...
            return _lost(f"trial {chunk[0]}" if len(chunk) == 1 else f"trials {chunk[0]}..{chunk[-1]}", value), False
        lines, failure, seconds = value
        pace.add(chunk[0], len(lines), seconds)
        if sweep_file is not None:
            sweep_file.append(lines)
        new = [json.loads(line) for line in lines]
        for r in new:
            results[r["trial"]] = r
        bar.update(len(new) if failure else len(chunk))  # the trials a hit left out are settled
        hit = stops.see(new)
        return (TrialError(failure[1], failure[0], failure[2]) if failure else None), hit

    def drop_unwanted() -> None:
        """Cancel the chunks in flight that a group's hit left wholly unwanted (settled, as the
        chunks not yet sent are) and send others in their place."""
        for future in [f for f in outstanding if f.key in spans and not stops.wanted(spans[f.key])]:
            outstanding.discard(future)
            bar.update(len(spans.pop(future.key)))
            client.cancel([future])
            submit()

    for _ in range(max_in_flight):
        submit()
    send_follow_ups()  # hits read back from the file, settled already
    tail = None  # the follow-ups' own bar, once every trial is in and some are still running
    try:
        for future, value in finished:
            if future.key in follows:
                if (error := record_follow_up(future, value)) is not None:
                    raise error
                if tail is not None:
                    tail.update(1)
                continue
            if future.key not in spans:  # cancelled by drop_unwanted: settled already
                continue
            error, hit = record(future, value)
            del future, value
            if error is not None or hit:
                while finished.has_ready():  # chunks that finished meanwhile are kept and written too
                    future, value = next(finished)
                    if future.key in spans:
                        record(future, value)
                if error is not None:
                    raise error
                return
            drop_unwanted()
            submit()
            send_follow_ups()
            if tail is None and follows and not spans:
                tail = _tail_bar(bar, len(follows), cast(_FollowUps, follow).label)
    finally:
        if tail is not None:
            tail.close()
