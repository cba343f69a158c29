"""The explorer's server beside half-open connections: how long a real request waits.

Issue 35 asks that a legitimate request be answered within 2 s while 200 connections hold half a
request or nothing at all.  tests/test_explorer_http.py checks that it *is* answered (no worker is
held by a half-open connection); how fast is measured here, as a ratio against the same request on
an idle server in the same process (median of ``--repeat``), with the seconds beside it.

Run: .venv/bin/python benchmarks/bench_explorer_http.py [--connections N] [--repeat K] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from provenance import commit, load_average, machine  # noqa: E402

from fairalloc.explorer import close_app, make_server  # noqa: E402

TARGET_SECONDS = 2.0
TIMEOUT = 600.0  # a hang, not a figure


def answer_seconds(port: int) -> float:
    """One ``GET /api/cases`` on a new connection, until the server closes it."""
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(f"GET /api/cases HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        status = sock.recv(12)
        while sock.recv(65536):
            pass
    if not status.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"MEASUREMENT FAILED: the server answered {status!r}")
    return time.perf_counter() - start


def half_open(port: int, count: int) -> list[socket.socket]:
    """``count`` connections, every other one holding half a request line, the rest nothing."""
    held = []
    for k in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        if k % 2:
            sock.sendall(b"GET /api/cases HTTP/1.1\r\nHost: 127.0.0.1")
        held.append(sock)
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=200, help="half-open connections (default 200)")
    parser.add_argument("--repeat", type=int, default=5, help="requests timed per condition (median)")
    parser.add_argument("--json", metavar="FILE", help="write the figures to this JSON file")
    args = parser.parse_args()
    server = make_server(None, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    start_load = load_average()
    try:
        idle = statistics.median(answer_seconds(server.port) for _ in range(args.repeat))
        held = half_open(server.port, args.connections)
        try:
            busy = statistics.median(answer_seconds(server.port) for _ in range(args.repeat))
        finally:
            for sock in held:
                sock.close()
    finally:
        server.shutdown()
        server.server_close()
        close_app(server.app)
    verdict = "met" if busy < TARGET_SECONDS else "TARGET MISSED"
    print(
        f"GET /api/cases: {idle * 1000:.1f} ms idle, {busy * 1000:.1f} ms beside {args.connections} half-open "
        f"connections (ratio {busy / idle:.2f}); target < {TARGET_SECONDS:g} s: {verdict}"
    )
    if args.json:
        figures = {
            "commit": commit(),
            "machine": machine(),
            "load_average": {"start": start_load, "end": load_average()},
            "connections": args.connections,
            "repeat": args.repeat,
            "idle_seconds": idle,
            "half_open_seconds": busy,
            "ratio": busy / idle,
            "target_seconds": TARGET_SECONDS,
        }
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2)


if __name__ == "__main__":
    main()
