"""The explorer's HTTP server: waitress, with a deadline on every request and every refusal in JSON.

Upstream: Pylons/waitress, tag v3.0.2 (the version ``constraints.txt`` pins), files
``src/waitress/server.py`` (``BaseWSGIServer.readable`` runs ``maintenance`` every
``cleanup_interval`` seconds; ``maintenance`` closes only channels idle for ``channel_timeout``
with no request queued), ``src/waitress/channel.py`` (``HTTPChannel.received`` feeds the bytes
to the ``parser_class`` of the request being read and hands complete requests to the thread
pool; ``error_task_class`` answers a parser's error) and ``src/waitress/parser.py``
(``HTTPRequestParser.received`` counts the request line and headers against
``max_request_header_size``, the body against ``max_request_body_size``).

Waitress reads every connection in one thread (asyncore) and gives its worker threads only
complete requests, so open or half-sent connections never hold a worker.  What it lacks, added
here: ``channel_timeout`` counts silence, so a sender of one byte a second is never idle; a request
here must arrive whole within ``EXPLORER_READ_SECONDS`` of its first byte, else its connection is
closed (:meth:`ExplorerServer.maintenance`).  Its parser has one bound for the request line and
the headers together and none on their number: the request line has its own (414) and so has the
number of header lines (431).  Its refusals are plain text: here they are the explorer's one JSON
line, with the explorer's security headers.
"""

from __future__ import annotations

import json
import socket
import threading
import time

from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask
from waitress.utilities import BadRequest, RequestHeaderFieldsTooLarge

from fairalloc.core.errors import one_line
from fairalloc.core.limits import (
    EXPLORER_CONNECTIONS,
    EXPLORER_IDLE_SECONDS,
    EXPLORER_READ_SECONDS,
    EXPLORER_THREADS,
    MAX_HEADER_BYTES,
    MAX_HEADER_COUNT,
    MAX_REQUEST_BYTES,
    MAX_REQUEST_LINE_BYTES,
)
from fairalloc.explorer.app import SECURITY_HEADERS

#: seconds between two looks at the open connections (the read deadline is kept to this)
SWEEP_SECONDS = 1


class URITooLong(BadRequest):
    code = 414
    reason = "URI Too Long"


class Parser(HTTPRequestParser):
    """Waitress's parser, with a bound on the request line alone and on the number of header lines;
    it remembers when the request's first byte came (the read deadline counts from there)."""

    def __init__(self, adj):
        super().__init__(adj)
        self.started = time.time()
        self.header_lines = 0

    def received(self, data):
        if self.body_rcv is None and not self.completed:
            head = self.header_plus + data
            line = head.lstrip()[: MAX_REQUEST_LINE_BYTES + 1].split(b"\n", 1)[0]
            if len(line.rstrip(b"\r")) > MAX_REQUEST_LINE_BYTES:
                self.parse_header(b"GET / HTTP/1.0\r\n")  # as waitress does for its own header bound
                self.error = URITooLong(
                    f"the request line has more than {MAX_REQUEST_LINE_BYTES} bytes "
                    f"(fairalloc.core.limits.MAX_REQUEST_LINE_BYTES)"
                )
                self.completed = True
                return len(data)
        consumed = super().received(data)
        if self.error is None and self.headers_finished and self.header_lines > MAX_HEADER_COUNT:
            self.error = RequestHeaderFieldsTooLarge(
                f"more than {MAX_HEADER_COUNT} header lines (fairalloc.core.limits.MAX_HEADER_COUNT)"
            )
            self.completed = True
        return consumed

    def parse_header(self, header_plus):
        self.header_lines = header_plus.count(b"\n")  # the request line's end is not a header's
        return super().parse_header(header_plus)


class JSONErrorTask(ErrorTask):
    """The server's own refusals (a request it could not read) as the explorer's JSON error."""

    def execute(self):
        error = self.request.error
        self.status = f"{error.code} {error.reason}"
        body = json.dumps({"error": one_line(f"request: {_reason(error)}")}).encode()
        self.response_headers.append(("Content-Type", "application/json"))
        self.response_headers.extend(SECURITY_HEADERS.items())
        self.set_close_on_finish()
        self.channel.refused = True
        self.content_length = len(body)
        self.write(body)


def _reason(error) -> str:
    """What was refused, with the limit it passed named as ``fairalloc.core.limits`` names it."""
    if error.code == 413:
        return f"the body may have at most {MAX_REQUEST_BYTES} bytes (fairalloc.core.limits.MAX_REQUEST_BYTES)"
    if error.code == 431 and "max_header" in str(error.body):
        where = "fairalloc.core.limits.MAX_HEADER_BYTES"
        return f"the request line and headers may have at most {MAX_HEADER_BYTES} bytes ({where})"
    return f"{error.reason.lower()}: {error.body}"


class Channel(HTTPChannel):
    """Waitress's connection, which after refusing a request closes gently: it stops sending and
    reads on, dropping what the client still sends, until the client closes or the read deadline.
    Closed with the rest of an oversize request unread, the connection would be reset, and the
    client would lose the answer."""

    parser_class = Parser
    error_task_class = JSONErrorTask
    #: a request was refused (the answer is the last): close gently
    refused = False
    #: when it stopped sending, reading on; None until then
    draining_since: float | None = None

    def handle_close(self):
        if not self.refused or self.draining_since is not None or not self.connected:
            return super().handle_close()
        try:
            self.socket.shutdown(socket.SHUT_WR)
        except OSError:
            return super().handle_close()
        self.draining_since = time.time()
        self.will_close = False
        return None

    def readable(self):
        return self.draining_since is not None or super().readable()

    def handle_read(self):
        if self.draining_since is None:
            return super().handle_read()
        self.recv(self.adj.recv_bytes)  # dropped; at its end (or a reset) wasyncore calls handle_close
        return None


class ExplorerServer(TcpWSGIServer):
    """The explorer's waitress server on a listening socket, with the interface of the standard
    library's servers: ``port``, ``app``, ``serve_forever()``, ``shutdown()``, ``server_close()``."""

    channel_class = Channel

    def __init__(self, app, sock):
        self.app = app
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()  # not serving yet
        super().__init__(
            app,
            _sock=sock,
            sockinfo=(sock.family, sock.type, sock.proto, sock.getsockname()),
            bind_socket=False,
            threads=EXPLORER_THREADS,
            connection_limit=EXPLORER_CONNECTIONS,
            channel_timeout=EXPLORER_IDLE_SECONDS,
            cleanup_interval=SWEEP_SECONDS,
            max_request_header_size=MAX_HEADER_BYTES,
            max_request_body_size=MAX_REQUEST_BYTES + 1,  # waitress refuses a body of this size or more
            asyncore_use_poll=True,  # select() fails beyond 1024 descriptors
            ident="fairalloc explorer",
            expose_tracebacks=False,
        )
        self.port = int(self.effective_port)  # waitress keeps it as text

    def maintenance(self, now):
        """Close connections silent too long, those whose request has not arrived whole within
        ``EXPLORER_READ_SECONDS`` of its first byte (however slowly it keeps coming), and those
        still sending a refused request that long after the answer."""
        super().maintenance(now)
        cutoff = now - EXPLORER_READ_SECONDS
        for channel in list(self.active_channels.values()):
            request = channel.request
            if request is not None and not request.completed and request.started < cutoff:
                channel.will_close = True
            if channel.draining_since is not None and channel.draining_since < cutoff:
                channel.will_close = True

    def serve_forever(self) -> None:
        self._stopped.clear()
        try:
            while not self._stop.is_set():
                wasyncore.loop(timeout=SWEEP_SECONDS, map=self._map, use_poll=True, count=1)
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop ``serve_forever`` (from another thread) and wait until it has returned."""
        self._stop.set()
        self.trigger.pull_trigger()
        self._stopped.wait()

    def server_close(self) -> None:
        """Close every connection and the listening socket; stop the threads."""
        for channel in list(self.active_channels.values()):
            channel.close()
        self.close()
        self.task_dispatcher.shutdown(cancel_pending=True, timeout=5)


__all__ = ["ExplorerServer"]
