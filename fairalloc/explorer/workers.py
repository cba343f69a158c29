"""Worker processes for the explorer: every answer computed under a time limit, none behind a lock.

A thread cannot be stopped in Python, so the explorer computes in processes: a :class:`Lane` keeps
a few workers (started from a clean ``forkserver`` that has imported the views once, so a new
worker is ready in milliseconds), hands each request to an idle one, forwards the worker's
progress, and kills and replaces a worker whose request passes the lane's time limit or whose
client went away.  Two lanes, quick and slow (:data:`~fairalloc.core.limits.EXPLORER_QUICK_WORKERS`
and the others), keep a long property check or lie search from delaying the page's edits.

A request waits at most :data:`~fairalloc.core.limits.EXPLORER_WAIT_SECONDS` for an idle worker
(then :class:`Busy`); beyond its time limit it ends with :class:`TimeLimit`; a user's mistake in
the request is a :class:`~fairalloc.core.errors.FairallocError` as in-process, and a bug in a view
an :class:`InternalError` whose traceback goes to the server's stderr.
"""

from __future__ import annotations

import multiprocessing
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from fairalloc.core.errors import FairallocError, one_line, shown
from fairalloc.core.limits import EXPLORER_WAIT_SECONDS
from fairalloc.models import MECHANISMS

#: how often a worker reports progress at most (seconds), and how often a lane says it is alive
#: while a worker is silent (so a streaming client that went away is noticed)
PROGRESS_EVERY = 0.1
HEARTBEAT_EVERY = 0.25
#: how often a waiting or computing request asks whether a newer edit of its page made it stale
STALE_EVERY = 0.05


#: imported once by the forkserver, so that a new worker (after a time limit, a page gone) is warm
PRELOAD = [
    "fairalloc.explorer.views",
    *(f"fairalloc.models.{module}" for module in dict.fromkeys(MECHANISMS.values())),  # each loads on demand
    "pulp",  # what the mechanisms import when they first build a program or a tree
    "networkx",
    "fairalloc.analysis.properties",
    "fairalloc.analysis.manipulation",
    "fairalloc.analysis.tradeoff",
    "fairalloc.scheduling.replay_charts",
    "fairalloc.scheduling.replay_plotly",
]


class Busy(FairallocError):
    """Every worker of the lane stayed busy for the whole wait."""


class TimeLimit(FairallocError):
    """The request computed for longer than its lane allows; its worker was replaced."""


class Superseded(FairallocError):
    """A newer edit of the same page made the request pointless: dropped, its worker freed."""


class InternalError(FairallocError):
    """A bug in a view (not the user's mistake): reported as such, the server goes on."""


# -- in the worker process ------------------------------------------------------------------------------
def _work(conn, module: str) -> None:
    """A worker's loop: receive ``(view, body)``, send progress, then the answer or the error."""
    import importlib

    views = importlib.import_module(module).VIEWS
    while True:
        try:
            name, body = conn.recv()
        except (EOFError, OSError):
            return
        try:
            conn.send(("result", views[name](body, _Progress(conn))))
        except FairallocError as exc:
            conn.send(("error", "user", one_line(exc)))
        except (RecursionError, MemoryError) as exc:
            conn.send(("error", "user", f"request: too large to compute ({type(exc).__name__})"))
        except Exception as exc:  # a bug must not end the worker: report it, keep serving
            traceback.print_exc(file=sys.stderr)
            conn.send(("error", "internal", f"internal error ({type(exc).__name__}: {shown(exc)}); please report it"))


class _Progress:
    """The ``progress(done, total, what)`` a view calls: sent to the server at most every
    :data:`PROGRESS_EVERY` seconds (and at the end)."""

    def __init__(self, conn):
        self.conn, self.last = conn, 0.0

    def __call__(self, done: int, total: int, what: str = "") -> None:
        now = time.monotonic()
        if now - self.last >= PROGRESS_EVERY or done == total:
            self.last = now
            self.conn.send(("progress", {"done": done, "total": total, "what": what}))


# -- in the server -----------------------------------------------------------------------------------------
def _unless_stale(stale: Callable[[], bool]) -> None:
    if stale():
        raise Superseded("request: superseded by a newer edit of the same page")


_STARTING = threading.Lock()


def _start(process) -> None:
    """Start a worker without running the server's main script again in it: multiprocessing
    (spawn, forkserver) re-imports ``__main__`` in every child, which fails for a script read from
    stdin and re-runs one without an ``if __name__ == "__main__"`` guard; a worker needs only
    :func:`_work`, which its module gives."""
    from multiprocessing import spawn

    prepare = spawn.get_preparation_data

    def without_main(name):
        data = prepare(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data

    with _STARTING:
        spawn.get_preparation_data = without_main
        try:
            process.start()
        finally:
            spawn.get_preparation_data = prepare


class _Worker:
    def __init__(self, context, module: str):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_work, args=(child, module), daemon=True, name="fairalloc-explorer")
        _start(self.process)
        child.close()

    def stop(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


def context(start_method: str | None = None):
    """A multiprocessing context for the workers: ``forkserver`` where there is one (a clean
    process that imported the views once), else ``spawn``."""
    methods = multiprocessing.get_all_start_methods()
    method = start_method or ("forkserver" if "forkserver" in methods else "spawn")
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(PRELOAD)
    return ctx


class Lane:
    """``size`` workers; each request runs on one of them for at most ``seconds``."""

    def __init__(
        self,
        name: str,
        size: int,
        seconds: float,
        *,
        start_method: str | None = None,
        module: str = "fairalloc.explorer.views",
        wait: float = EXPLORER_WAIT_SECONDS,
    ):
        self.name, self.size, self.seconds, self.module, self.wait = name, size, seconds, module, wait
        self._context = context(start_method)
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()  # only around starting and stopping workers, never a computation
        self._started = 0
        self._closed = False

    def _take(self, stale: Callable[[], bool]) -> _Worker:
        deadline = time.monotonic() + self.wait
        while True:
            with self._lock:
                if self._closed:
                    raise Busy(f"server: the {self.name} lane is shut down")
                if self._idle.empty() and self._started < self.size:
                    self._started += 1
                    return _Worker(self._context, self.module)
            _unless_stale(stale)
            left = deadline - time.monotonic()
            if left <= 0:
                raise Busy(
                    f"server busy: the {self.size} {self.name} workers stayed busy for {self.wait:g} s "
                    f"(fairalloc.core.limits.EXPLORER_WAIT_SECONDS); try again"
                )
            try:
                return self._idle.get(timeout=min(left, STALE_EVERY))
            except queue.Empty:
                continue

    def _give_back(self, worker: _Worker | None) -> None:
        with self._lock:
            if worker is None:  # replaced: a new one starts on the next request
                self._started -= 1
            elif self._closed:
                worker.stop()
            else:
                self._idle.put(worker)

    def stream(self, view: str, body: Any, stale: Callable[[], bool] | None = None) -> Iterator[tuple[str, Any]]:
        """``("progress", {done, total, what})`` items as the worker reports them (and every
        :data:`HEARTBEAT_EVERY` seconds of silence), then ``("result", answer)``; errors raised.

        Closing the generator early (the client went away), or ``stale()`` turning true (a newer
        edit of the same page), stops the worker's computation."""
        stale = stale or (lambda: False)
        worker = self._take(stale)
        deadline = time.monotonic() + self.seconds
        finished = False
        last: dict[str, Any] = {"done": 0, "total": 0, "what": ""}
        quiet = time.monotonic()
        try:
            worker.conn.send((view, body))
            while True:
                _unless_stale(stale)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeLimit(
                        f"{view}: stopped after {self.seconds:g} s, the explorer's limit for a {self.name} "
                        f"request (fairalloc.core.limits.EXPLORER_{self.name.upper()}_SECONDS); try a smaller "
                        f"case or budget, or the command line"
                    )
                if not worker.conn.poll(min(left, STALE_EVERY)):
                    if time.monotonic() - quiet >= HEARTBEAT_EVERY:
                        quiet = time.monotonic()
                        yield "progress", last
                    continue
                kind, *payload = worker.conn.recv()
                if kind == "progress":
                    last, quiet = payload[0], time.monotonic()
                    yield "progress", last
                    continue
                finished = True
                if kind == "result":
                    yield "result", payload[0]
                    return
                who, message = payload
                raise InternalError(message) if who == "internal" else FairallocError(message)
        except (EOFError, OSError):
            finished = False
            raise InternalError(f"internal error ({view}: the worker process ended); please report it") from None
        finally:
            if not finished:  # a time limit, a client gone, a dead worker: this worker is spent
                worker.stop()
            self._give_back(worker if finished else None)

    def run(
        self,
        view: str,
        body: Any,
        progress: Callable[[dict], None] | None = None,
        stale: Callable[[], bool] | None = None,
    ) -> Any:
        """The view's answer (progress items passed to ``progress``)."""
        for kind, value in self.stream(view, body, stale):
            if kind == "result":
                return value
            if progress is not None:
                progress(value)
        raise InternalError(f"internal error ({view}: no answer); please report it")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            while not self._idle.empty():
                self._idle.get_nowait().stop()


__all__ = ["Busy", "InternalError", "Lane", "Superseded", "TimeLimit", "context"]
