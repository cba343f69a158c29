"""The browser explorer behind ``fairalloc explore``: a local page to edit a case, solve it with
any mechanism, check its properties, probe its manipulability, play back dynamic mechanisms, and
replay a job workload against it (``explore CASE --workload W``: the charts of ``simulate --report``).

* :mod:`~fairalloc.explorer.form`: the page's form of a case and back, every field kept;
* :mod:`~fairalloc.explorer.views`: what the page shows, one function of its request each;
* :mod:`~fairalloc.explorer.workers`: the worker processes that compute under time limits;
* :mod:`~fairalloc.explorer.app`: the web app, its API and its guards (``docs/explorer.md``);
* :mod:`~fairalloc.explorer.server`: the HTTP server (waitress) and its bounds on connections;
* :mod:`~fairalloc.explorer.docs`: the documentation pages and the chart library it serves;
* ``static/``: the page (HTML, CSS and JavaScript; charts drawn in the browser by plotly.js).

Belongs here: the web app.  Imports: any layer below; nothing imports the explorer.
"""

from __future__ import annotations

from fairalloc.core.errors import FairallocError, shown
from fairalloc.core.limits import EXPLORER_QUICK_SECONDS, EXPLORER_SLOW_SECONDS, EXPLORER_WAIT_SECONDS
from fairalloc.explorer.app import close_app, create_app
from fairalloc.explorer.form import case_from_page, case_mapping, page_form, start_workload


def _listening_socket(host: str, port: int):
    """A socket bound to ``host:port`` and listening; one clear error when it cannot be."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        address = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)[0][4]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise FairallocError(
            f"host: cannot listen on {shown(host)} ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise FairallocError(f"port: cannot listen on {shown(host)} port {port} ({exc.strerror or exc})") from None
    return sock


def make_server(
    case: str | None,
    host: str = "127.0.0.1",
    port: int = 8050,
    allow_hosts: tuple[str, ...] = (),
    *,
    workload: str | None = None,
    quick_seconds: float = EXPLORER_QUICK_SECONDS,
    slow_seconds: float = EXPLORER_SLOW_SECONDS,
    wait_seconds: float = EXPLORER_WAIT_SECONDS,
):
    """The explorer's server (:class:`~fairalloc.explorer.server.ExplorerServer`, waitress) bound to
    ``host:port`` (port 0: any free port), not yet serving; its app answers to the address it is
    bound to.  ``serve_forever()`` serves, ``shutdown()`` stops it, ``server_close()`` frees it.
    ``quick_seconds``, ``slow_seconds``, ``wait_seconds``: the lanes' time limits, ``workload`` what
    the Replay panel replays (:func:`create_app`)."""
    import logging

    from fairalloc.explorer.server import ExplorerServer

    logging.getLogger("waitress").setLevel(logging.ERROR)  # a refused connection is not the user's news
    app = create_app(
        case,
        workload=workload,
        host=host,
        allow_hosts=allow_hosts,
        quick_seconds=quick_seconds,
        slow_seconds=slow_seconds,
        wait_seconds=wait_seconds,
    )
    sock = _listening_socket(host, port)
    try:
        server = ExplorerServer(app, sock)
    except BaseException:
        sock.close()
        raise
    app.config["FAIRALLOC_GUARD"].port = server.port
    return server


def serve(
    case: str | None,
    host: str = "127.0.0.1",
    port: int = 8050,
    open_browser: bool = False,
    allow_hosts: tuple[str, ...] = (),
    workload: str | None = None,
) -> None:
    """Serve the explorer until interrupted (Ctrl-C)."""
    server = make_server(case, host, port, allow_hosts, workload=workload)
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{server.port}/"
    print(f"fairalloc explorer on {url}  (Ctrl-C to stop)", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        close_app(server.app)


__all__ = [
    "case_from_page",
    "case_mapping",
    "close_app",
    "create_app",
    "make_server",
    "page_form",
    "serve",
    "start_workload",
]
