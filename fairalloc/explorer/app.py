"""The explorer's local web server: the page, its JSON API, and the guards that keep it the user's.

The server keeps no state of its own: every answer is a function of its request.  What it guards
against, because any web page the user visits can send requests to a server on their machine:

* **other sites.**  A request whose ``Host``, or whose target's authority when it names one
  (``GET http://host/``), is not the explorer's own address (DNS rebinding: a
  site's name pointed at 127.0.0.1) or whose ``Origin`` is another site's is refused (403);
  ``POST`` bodies must be JSON (``Content-Type: application/json``, 415 otherwise), which a page
  of another site cannot send without the browser asking first, and the server never allows it.
  Answers forbid framing and sniffing.
* **files.**  The page opens the bundled cases by name, the file named on the command line, and
  a file the user uploads through the page: never a path of the server's disk.
* **size and time.**  A body of at most ``MAX_REQUEST_BYTES`` (413), nested at most
  ``MAX_REQUEST_DEPTH`` levels, instances of at most ``MAX_EXPLORER_USERS`` users and so on (400);
  computations run in worker processes (:mod:`fairalloc.explorer.workers`) with a time limit each
  (503 beyond), and no request holds a lock another needs while it computes.

Every error is one JSON object ``{"error": "one line"}``: 400 for a client's mistake (the field it
names first), 403, 404, 405, 413, 415 for what their names say (and 414, 431 and a request that
cannot be parsed, 400, from :mod:`fairalloc.explorer.server`, in the same form), 409 for a request a newer edit of
its page superseded (:data:`ROUND_HEADER`), 503 when the server is busy or a request passed its
time limit, 500 only for a bug.  Every answer is standard JSON (no ``NaN``).

Endpoints (``docs/explorer.md`` gives each request and answer):

* ``GET /api/start``, ``GET /api/cases``, ``GET /api/case/NAME``: the case the page opens with,
  the bundled cases, one bundled case, as forms (:mod:`fairalloc.explorer.form`);
* ``GET /api/meta``: every registered mechanism with its description and documentation, the units;
* ``POST /api/check``: whether a form is a valid case (an invalid case is an answer here, not an error);
* ``POST /api/solve``, ``/api/properties``, ``/api/frontier``, ``/api/probe``, ``/api/playback``,
  ``/api/tree``, ``/api/replay``: the views of :mod:`fairalloc.explorer.views`; with ``Accept:
  application/x-ndjson`` the slow ones stream ``{"progress": ...}`` lines before the ``{"result": ...}``
  line (a replay's workload of more than ``MAX_EXPLORER_WORKLOAD_JOBS`` jobs: 400 before any worker);
* ``POST /api/yaml``: the form as a case file; ``POST /api/upload``: a case file's text as a form.
"""

from __future__ import annotations

import ipaddress
import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fairalloc.core import registry
from fairalloc.core.decimals import finite
from fairalloc.core.errors import CaseError, FairallocError, one_line, unknown
from fairalloc.core.limits import (
    EXPLORER_QUICK_SECONDS,
    EXPLORER_QUICK_WORKERS,
    EXPLORER_SLOW_SECONDS,
    EXPLORER_SLOW_WORKERS,
    EXPLORER_WAIT_SECONDS,
    MAX_EXPLORER_UPLOAD_NODES,
    MAX_REQUEST_BYTES,
    MAX_REQUEST_DEPTH,
)
from fairalloc.explorer import workers
from fairalloc.explorer.form import case_mapping, check_table_size, page_form
from fairalloc.io.cases import Case, bundled_cases, load_bundled, load_case, parse_case, read_yaml_text

STATIC = Path(__file__).with_name("static")
#: the views each lane computes (the rest of the API answers in the request's own thread); a probe
#: is quick, unless it searches lies
QUICK = ("check", "solve", "playback", "tree", "probe")
SLOW = ("properties", "frontier", "probe", "replay")
#: ``X-Explorer-Round: PAGE:ROUND``: the page's id (random per page load) and its edit; a request
#: of an older round than the page's newest is dropped (its worker freed) as soon as that one arrives
ROUND_HEADER = "X-Explorer-Round"
#: pages whose newest round is remembered (the oldest is forgotten beyond)
MAX_PAGES = 256
LOOPBACK = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("0.0.0.0", "::", "")
#: on every answer: no framing (clickjacking), no type sniffing, no referrer, same-origin resources
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
}


class Rounds:
    """The newest round of every page: a request knows whether a newer edit has made it stale."""

    def __init__(self):
        self._newest: dict[str, int] = {}
        self._lock = threading.Lock()  # held for a dict update, never during a computation

    def stale_test(self, header: str | None):
        """A ``stale()`` for the request carrying ``header`` (``PAGE:ROUND``; without one, never stale)."""
        page, _, text = (header or "").rpartition(":")
        if not page or not text.isdigit() or len(page) > 64:
            return lambda: False
        number = int(text)
        with self._lock:
            if number > self._newest.get(page, -1):
                self._newest.pop(page, None)
                self._newest[page] = number  # the most recently active page last
                while len(self._newest) > MAX_PAGES:
                    self._newest.pop(next(iter(self._newest)))
        return lambda: self._newest.get(page, number) > number


class RequestError(FairallocError):
    """A request refused as a whole, with its HTTP status."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


# -- the request's JSON ---------------------------------------------------------------------------------------
def _refuse_constant(token: str):
    raise FairallocError(f"request: {token} is not JSON (write numbers as numbers)")


def _depth(value: Any) -> int:
    """Levels of nesting of a JSON value, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in node)
    return deepest


def read_json(request) -> Any:
    """The request's JSON body, within the bounds of size and nesting; JSON only."""
    from werkzeug.exceptions import RequestEntityTooLarge

    if request.mimetype != "application/json":
        raise RequestError("request: send JSON (Content-Type: application/json)", 415)
    if request.content_length is not None and request.content_length > MAX_REQUEST_BYTES:
        raise RequestError(_too_large(request.content_length), 413)
    try:
        data = request.get_data(cache=True)
    except RequestEntityTooLarge:
        raise RequestError(_too_large(None), 413) from None
    if len(data) > MAX_REQUEST_BYTES:
        raise RequestError(_too_large(len(data)), 413)
    try:
        body = json.loads(data, parse_constant=_refuse_constant)
    except RecursionError:
        body = None
        deep = True
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestError(f"request: the body is not valid JSON ({one_line(exc, 120)})", 400) from None
    else:
        deep = _depth(body) > MAX_REQUEST_DEPTH
    if deep:
        raise RequestError(
            f"request: the JSON body is nested deeper than {MAX_REQUEST_DEPTH} levels "
            f"(fairalloc.core.limits.MAX_REQUEST_DEPTH)",
            400,
        )
    if not isinstance(body, dict):
        raise RequestError("request: the body must be a JSON object", 400)
    return body


def _too_large(size) -> str:
    got = "" if size is None else f" (got {size} bytes)"
    where = "fairalloc.core.limits.MAX_REQUEST_BYTES"
    return f"request: the body may have at most {MAX_REQUEST_BYTES} bytes{got} ({where})"


# -- who may ask -------------------------------------------------------------------------------------------
def _split_host(text: str) -> tuple[str, int | None] | None:
    """``name:port`` or ``[v6]:port`` -> (name, port); None when it cannot be read."""
    try:
        parts = urlsplit(f"//{text}")
        return (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None


class Guard:
    """The addresses the explorer answers to: its own (the host it listens on, and loopback names
    when it listens on loopback), the names given with ``--allow-host``, and, when it listens on
    every interface, any IP address (DNS rebinding needs a name)."""

    def __init__(self, host: str, port: int | None, allow: tuple[str, ...] = ()):
        self.host, self.port = host.strip("[]").lower(), port
        self.names = {self.host, *LOOPBACK, *(a.lower() for a in allow)} - set(WILDCARDS)

    def host_ok(self, text: str | None) -> bool:
        split = _split_host(text or "")
        if split is None or not split[0]:
            return False
        name, port = split
        if self.port is not None and port != self.port:
            return False
        if name in self.names:
            return True
        if self.host in WILDCARDS:
            try:
                ipaddress.ip_address(name)
                return True
            except ValueError:
                return False
        return False

    def target_ok(self, target: str) -> bool:
        """A request target in absolute form (``GET http://host:port/path``, which a server may
        prefer to the ``Host`` header) names an address this explorer answers to."""
        try:
            parts = urlsplit(target)
        except ValueError:
            return False
        if not parts.scheme and not target.startswith("//"):
            return True  # the usual form, a path: the Host header says where it was sent
        return parts.scheme in ("http", "") and self.host_ok(parts.netloc)

    def origin_ok(self, origin: str | None) -> bool:
        if origin is None:
            return True  # not a browser's cross-site request (those always say where they come from)
        parts = urlsplit(origin)
        return parts.scheme == "http" and self.host_ok(parts.netloc)


# -- cases ----------------------------------------------------------------------------------------------------
def upload_form(body: dict) -> dict:
    """A case file's text, uploaded through the page, as a form (``valid: false`` and the error
    for a file that is not a case: the user's file is judged, not the request)."""
    text, name = body.get("text"), body.get("filename") or "uploaded.yaml"
    if not isinstance(text, str) or not isinstance(name, str):
        raise FairallocError("request: give the file's 'text' and its 'filename' as strings")
    where = Path(name).name or "uploaded.yaml"
    try:
        upload_bounds(text, where)
    except CaseError as exc:
        raise RequestError(f"{where}: {one_line(exc)}", 400) from None
    try:
        case = parse_case(read_yaml_text(text, where), where)
        form = page_form(case)
        for table in ("resources", "users", "groups"):  # an alias can hide a table from the count above
            check_table_size(table, len(form[table]))
        return {"valid": True, "case": form}
    except CaseError as exc:
        return {"valid": False, "error": one_line(exc)}


def upload_bounds(text: str, where: str) -> None:
    """Refuse a case file too large for the explorer before it is read (a :class:`CaseError`, without
    the file's name): its YAML nodes (aliases expanded, ``MAX_EXPLORER_UPLOAD_NODES``) and its
    top-level resources, users and groups (``MAX_EXPLORER_USERS`` and so on), counted from the
    parser's events in one pass that stops at the first bound passed.  Text that is not YAML is
    left to the reader, which says why."""
    import yaml

    from fairalloc.io.cases import CaseLoader

    nodes = 0
    sizes: dict[str, int] = {}  # an anchor's nodes, which each alias to it repeats
    stack: list[_Open] = []
    try:
        for event in yaml.parse(text, Loader=CaseLoader):
            if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.CollectionStartEvent)):
                nodes += sizes.get(event.anchor or "", 1) if isinstance(event, yaml.AliasEvent) else 1
                table = stack[-1].child(event, len(stack) == 1) if stack else None
                if nodes > MAX_EXPLORER_UPLOAD_NODES:
                    raise CaseError(
                        f"{_where(event)}more than {MAX_EXPLORER_UPLOAD_NODES:,} "
                        f"YAML nodes (fairalloc.core.limits.MAX_EXPLORER_UPLOAD_NODES); use the command line "
                        f"for larger cases"
                    )
            if isinstance(event, yaml.ScalarEvent) and event.anchor:
                sizes[event.anchor] = 1
            elif isinstance(event, yaml.CollectionStartEvent):
                stack.append(_Open(nodes - 1, event.anchor, table, isinstance(event, yaml.MappingStartEvent)))
            elif isinstance(event, yaml.CollectionEndEvent):
                done = stack.pop()
                if done.anchor:
                    sizes[done.anchor] = nodes - done.start
                if done.table:
                    check_table_size(done.table, done.children // 2 if done.mapping else done.children)
    except yaml.YAMLError:
        return


def _where(event) -> str:
    return f"line {event.start_mark.line + 1}: " if event.start_mark is not None else ""


class _Open:
    """A collection of :func:`upload_bounds` not yet closed: where it started, its anchor, its
    children so far, and the table it is the value of (``users: ...`` at the top level)."""

    def __init__(self, start: int, anchor: str | None, table: str | None, mapping: bool):
        self.start, self.anchor, self.table, self.mapping = start, anchor, table, mapping
        self.children, self.key = 0, None

    def child(self, event, top: bool) -> str | None:
        """Count a node; at the top level, the table a value opens (after its key, kept here)."""
        self.children += 1
        if not (top and self.mapping):
            return None
        if self.children % 2 == 1:
            self.key = getattr(event, "value", None)
            return None
        return self.key if self.key in ("resources", "users", "groups") else None


def yaml_text(body: dict) -> tuple[str, str]:
    """The form as a case file's text (validated first), and a safe file name for it."""
    import yaml

    from fairalloc.explorer.form import case_from_page

    case = case_from_page(body.get("case"))
    mapping = case_mapping(body.get("case"))
    head = f"# {case.name}: written by the fairalloc explorer; 'fairalloc solve FILE' reads it back\n"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in case.name[:100]) or "case"
    return head + yaml.safe_dump(mapping, sort_keys=False, allow_unicode=True), f"{safe}.yaml"


def meta_view() -> dict:
    """What the page offers: every registered mechanism with its two lines and its section of
    docs/formulations.md, and the units a resource may be counted in."""
    from fairalloc.core.units import UNITS

    out = []
    for name in registry.available():
        mech = registry.family(name) or registry.get(name)
        out.append(
            {
                "name": name,
                "kind": mech.kind,
                "family": registry.family(name) is not None,
                "parameters": mech.parameters,
                "summary": mech.summary,
                "about": getattr(mech, "about", ""),
                "docs": _section_link(getattr(mech, "section", "")),
            }
        )
    return {"mechanisms": out, "units": list(UNITS)}


def _section_link(section: str) -> str | None:
    from fairalloc.explorer.docs import anchor_of_section

    anchor = anchor_of_section("formulations", section) if section else None
    return None if anchor is None else f"/docs/formulations#{anchor}"


# -- the app ----------------------------------------------------------------------------------------------------
def create_app(
    case: str | None = None,
    *,
    workload: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    allow_hosts: tuple[str, ...] = (),
    start_method: str | None = None,
    quick_seconds: float = EXPLORER_QUICK_SECONDS,
    slow_seconds: float = EXPLORER_SLOW_SECONDS,
    wait_seconds: float = EXPLORER_WAIT_SECONDS,
):
    """The Flask app; ``case`` (a bundled name or a YAML file) is what the page opens with, and
    ``workload`` (a job workload file or a bundled workload's name) what its Replay panel replays
    against it (:func:`~fairalloc.explorer.form.start_workload`; no panel without one).

    The lanes' time limits and their wait for a free worker can be set here (tests make them short).
    ``host`` and ``port`` are the address it is served on (``port=None``: not known yet; set
    ``app.config["FAIRALLOC_GUARD"].port`` once it is); ``allow_hosts`` are further names it
    answers to.  ``app.config["FAIRALLOC_LANES"]`` holds its worker lanes (``close_app`` stops them).
    """
    from flask import Flask

    app = Flask(__name__, static_folder=None)
    app.json = _strict_json_provider()(app)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    guard = Guard(host, port, allow_hosts)
    lanes = {
        name: workers.Lane(name, size, seconds, start_method=start_method, wait=wait_seconds)
        for name, size, seconds in (
            ("quick", EXPLORER_QUICK_WORKERS, quick_seconds),
            ("slow", EXPLORER_SLOW_WORKERS, slow_seconds),
        )
    }
    app.config.update(FAIRALLOC_GUARD=guard, FAIRALLOC_LANES=lanes)
    _guard(app, guard)
    _page_routes(app)
    _case_routes(app, case, workload)
    _compute_routes(app, lanes)
    return app


def _strict_json_provider():
    """Flask's JSON provider, made strict (a class made here: flask is imported only by the explorer)."""
    from flask.json.provider import DefaultJSONProvider

    class StrictJSON(DefaultJSONProvider):
        """Standard JSON only: a NaN or an infinity is an error, never the token ``NaN``."""

        def dumps(self, obj, **kwargs):
            kwargs.setdefault("default", self.default)
            kwargs["allow_nan"] = False
            try:
                return json.dumps(obj, **kwargs)
            except ValueError:  # a NaN or an infinity: finite() names where, in one line
                return json.dumps(finite(obj, "answer"), **kwargs)

    return StrictJSON


def _error(message: str, status: int):
    from flask import jsonify

    return jsonify({"error": one_line(message)}), status


def _status(exc: FairallocError) -> int:
    """The HTTP status of an error: the client's mistake unless it is the server's state or a bug."""
    if isinstance(exc, RequestError):
        return exc.status
    if isinstance(exc, workers.Superseded):
        return 409
    if isinstance(exc, (workers.Busy, workers.TimeLimit)):
        return 503
    if isinstance(exc, workers.InternalError):
        return 500
    return 400


def _guard(app, guard: Guard) -> None:
    """Who may ask, what every answer carries, and HTTP's own errors as one JSON line."""
    from flask import request
    from werkzeug.exceptions import HTTPException

    @app.before_request
    def who_asks():
        if not guard.host_ok(request.host):
            return _error(f"request: this explorer does not answer to host {request.host!r}", 403)
        target = request.environ.get("REQUEST_URI") or request.environ.get("RAW_URI") or "/"
        if not guard.target_ok(target):
            return _error(f"request: this explorer does not answer to {one_line(target, 100)!r}", 403)
        if not guard.origin_ok(request.headers.get("Origin")):
            return _error(f"request: this explorer does not answer to pages of {request.headers['Origin']!r}", 403)
        if request.headers.get("Sec-Fetch-Site") == "cross-site":
            return _error("request: this explorer does not answer to other sites", 403)
        return None

    @app.after_request
    def headers(response):
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.errorhandler(HTTPException)
    def http_error(exc):
        if exc.code == 413:
            return _error(_too_large(request.content_length), 413)
        return _error(f"{exc.code} {exc.name}", exc.code or 500)


def _page_routes(app) -> None:
    """The page, its files, the chart library and the documentation."""
    from flask import send_file, send_from_directory

    @app.get("/")
    def index():
        return send_from_directory(STATIC, "explorer.html")

    @app.get("/favicon.ico")
    def favicon():
        return "", 204

    @app.get("/static/<path:name>")
    def static_file(name):
        return send_from_directory(STATIC, name)

    @app.get("/vendor/plotly.min.js")
    def plotly_js():
        from fairalloc.explorer.docs import plotly_bundle

        return send_file(plotly_bundle(), mimetype="text/javascript", max_age=86400)

    @app.get("/docs/<name>")
    def docs(name):
        from fairalloc.explorer.docs import page_html

        html = page_html(name)
        return (html, 200) if html is not None else _error(f"docs: no page '{name}'", 404)


def _case_routes(app, case: str | None, workload: str | None) -> None:
    """The cases the page may open: the one it starts with (and the workload it replays), the
    bundled ones by name, uploads; and the case as a file."""
    from flask import Response, jsonify, request

    from fairalloc.explorer.form import start_workload
    from fairalloc.explorer.views import replay_schedulers

    start: Case = load_case(case) if case else load_bundled("drf-section-4-1")
    # the picker shows a bundled case by name, a file by its name beside them
    origin = "file" if case and Path(case).exists() else "bundled"
    start_answer = {
        "case": page_form(start),
        "origin": origin,
        "label": Path(case).name if origin == "file" and case else start.name,
        "workload": None
        if workload is None
        else {**start_workload(workload, start), "schedulers": replay_schedulers()},
    }

    @app.get("/api/start")
    def start_case():
        return jsonify(start_answer)

    @app.get("/api/cases")
    def cases():
        return jsonify({"cases": bundled_cases()})

    @app.get("/api/case/<name>")
    def one_case(name):
        known = bundled_cases()
        if name not in known:  # bundled cases only, by name: never a file of the server's disk
            return _error(f"case: {unknown('bundled case', name, known)}", 404)
        return jsonify({"case": page_form(load_bundled(name))})

    @app.get("/api/meta")
    def meta():
        return jsonify(meta_view())

    @app.post("/api/upload")
    def upload():
        try:
            return jsonify(upload_form(read_json(request)))
        except FairallocError as exc:
            return _error(str(exc), _status(exc))

    @app.post("/api/yaml")
    def download_yaml():
        try:
            text, filename = yaml_text(read_json(request))
        except FairallocError as exc:
            return _error(str(exc), _status(exc))
        disposition = {"Content-Disposition": f'attachment; filename="{filename}"'}
        return Response(text, mimetype="application/x-yaml", headers=disposition)


def _compute_routes(app, lanes: dict[str, workers.Lane]) -> None:
    """The views, computed by the lanes' workers: one JSON answer, or with ``Accept:
    application/x-ndjson`` a stream of progress lines then the result (an error found once the
    stream began is a last line ``{"error": ..., "status": ...}``)."""
    from flask import Response, jsonify, request, stream_with_context

    rounds = Rounds()

    def lines(lane, view, body, stale):
        try:
            for kind, value in lane.stream(view, body, stale):
                yield app.json.dumps({kind: value}) + "\n"
        except FairallocError as exc:
            yield app.json.dumps({"error": one_line(exc), "status": _status(exc)}) + "\n"

    def computed(view: str):
        streamed = "application/x-ndjson" in request.headers.get("Accept", "")
        try:
            body = read_json(request)
            _precheck(view, body, streamed)
        except FairallocError as exc:
            return _error(str(exc), _status(exc))
        slow = view in SLOW and (view != "probe" or body.get("search") is True)
        lane = lanes["slow" if slow else "quick"]
        stale = rounds.stale_test(request.headers.get(ROUND_HEADER))
        if streamed:
            return Response(stream_with_context(lines(lane, view, body, stale)), mimetype="application/x-ndjson")
        try:
            return jsonify(lane.run(view, body, stale=stale))
        except FairallocError as exc:
            return _error(str(exc), _status(exc))

    for view in dict.fromkeys((*QUICK, *SLOW)):
        app.add_url_rule(f"/api/{view}", view, (lambda v: lambda: computed(v))(view), methods=["POST"])


def _precheck(view: str, body: dict, streamed: bool) -> None:
    """A client's mistake is a 400 before any worker is asked: the request's fields; and before a
    stream starts (which answers 200 at once), the case itself (but for ``check``, whose answer
    it is).  Unstreamed, the worker's own validation answers 400 as early."""
    from fairalloc.explorer import views

    models: dict[str, type[views.BaseModel]] = {
        "check": views.CheckRequest,
        "solve": views.SolveRequest,
        "properties": views.PropertiesRequest,
        "frontier": views.FrontierRequest,
        "probe": views.ProbeRequest,
        "playback": views.PlaybackRequest,
        "tree": views.TreeRequest,
        "replay": views.ReplayRequest,
    }
    request = views.validated(models[view], body)
    if view == "replay":
        views.workload_bounds(body)
    if streamed and view != "check":
        views.scenario(request)


def close_app(app) -> None:
    """Stop the app's worker processes."""
    for lane in app.config["FAIRALLOC_LANES"].values():
        lane.close()


__all__ = ["Guard", "close_app", "create_app", "read_json"]
