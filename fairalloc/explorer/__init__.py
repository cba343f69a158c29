"""The browser explorer behind ``fairalloc explore``: a local Flask app and its JSON API.

The page (``fairalloc/explorer/static/explorer.html`` and ``explorer.js``) holds the instance being edited
and asks the server for everything it shows; the server does no state-keeping of its own, so
every answer is a function of the request.  Every instance from the page goes through the same
validation as a YAML case (:func:`fairalloc.io.cases.parse_case`), so a negative demand or an empty
user name is answered with the same one-line message, naming the field, as on the command line
(HTTP 400, ``{"error": ...}``); nothing the page sends can stop the server.

Endpoints (POST bodies and answers are JSON):

* ``GET /api/cases``, ``GET /api/case/NAME``: the bundled cases, one in the page's form;
* ``GET /api/mechanisms``: what the page offers;
* ``POST /api/solve``: allocations of the chosen mechanisms, their measures, Figure-4 charts;
* ``POST /api/properties``: the property badges of one mechanism, with their witnesses;
* ``POST /api/frontier``: the alpha-fair frontier with the current point;
* ``POST /api/probe``: one user's reported demand and what it buys her (and the best lie found);
* ``POST /api/playback``: a dynamic mechanism arrival by arrival;
* ``POST /api/yaml``: the current instance as a YAML case file.

Every request is bounded (:mod:`fairalloc.core.limits`): a body of at most ``MAX_REQUEST_BYTES``
(413 beyond), at most ``MAX_EXPLORER_USERS`` users and ``MAX_EXPLORER_RESOURCES`` resources,
``MAX_EXPLORER_MECHANISMS`` mechanisms, a verifier budget of ``MAX_EXPLORER_BUDGET`` and
searches of ``MAX_EXPLORER_SEARCH_WORK`` (400 beyond), and at most
``MAX_EXPLORER_CONCURRENT`` requests computed at once (503 when no slot frees within
``EXPLORER_WAIT_SECONDS``).  Every error is one JSON object ``{"error": "one line"}``; every
answer is standard JSON (no ``NaN``).  ``GET /api/case/NAME`` serves bundled cases only, never a
file of the server's disk.

Belongs here: the web app (this server, ``static/`` holds the page and its charts).  Imports:
any layer below; nothing imports the explorer.
"""

from __future__ import annotations

import io
import json
import math
import sys
import threading
import traceback
from pathlib import Path

import numpy as np
import yaml

from fairalloc.core import registry
from fairalloc.core.decimals import finite
from fairalloc.core.errors import CaseError, FairallocError, excerpt, one_line, shown, unknown
from fairalloc.core.limits import (
    EXPLORER_WAIT_SECONDS,
    MAX_EXPLORER_BUDGET,
    MAX_EXPLORER_CONCURRENT,
    MAX_EXPLORER_MECHANISMS,
    MAX_EXPLORER_RESOURCES,
    MAX_EXPLORER_USERS,
    MAX_REQUEST_BYTES,
)
from fairalloc.io.cases import Case, bundled_cases, load_case, parse_case

STATIC = Path(__file__).with_name("static")
#: the reference mechanisms the page offers, beside the alpha-fair family
OFFERED = ("drf", "asset", "ceei", "utilitarian")
#: matplotlib's figure machinery is not thread-safe; the server answers requests in threads
_PLOT_LOCK = threading.Lock()
MAX_PLAYBACK_STEPS = 40


# -- the page's instance <-> a case ------------------------------------------------------------
def _names(rows, what: str) -> list[str]:
    names: list[str] = []
    seen: dict[str, int] = {}
    for k, row in enumerate(rows):
        name = str(row.get("name", "") if isinstance(row, dict) else "").strip()
        if not name:
            raise CaseError(f"{what}[{k}].name: must not be empty")
        if name in seen:
            raise CaseError(f"{what}[{k}].name: duplicate name '{name}' (also {what}[{seen[name]}])")
        seen[name] = k
        names.append(name)
    return names


def case_from_page(data) -> Case:
    """The page's ``{"name", "resources": [{name, capacity}], "users": [{name, weight, demand}]}``
    as a validated :class:`Case` (names are checked here, because a mapping would merge
    duplicates silently; values by the case schema)."""
    if not isinstance(data, dict):
        raise CaseError("case: expected an object with 'resources' and 'users'")
    resources, users = data.get("resources"), data.get("users")
    if not isinstance(resources, list) or not resources:
        raise CaseError("resources: give at least one resource")
    if not isinstance(users, list) or not users:
        raise CaseError("users: give at least one user")
    for what, rows, limit in (("resources", resources, MAX_EXPLORER_RESOURCES), ("users", users, MAX_EXPLORER_USERS)):
        if len(rows) > limit:
            raise CaseError(
                f"{what}: the explorer takes at most {limit} {what} (got {len(rows)}; "
                f"fairalloc.core.limits.MAX_EXPLORER_{what.upper()}); use the command line for larger cases"
            )
    resource_names, user_names = _names(resources, "resources"), _names(users, "users")
    specs: dict[str, dict] = {}
    mapping = {
        "name": str(data.get("name") or "explorer"),
        "resources": {r: row.get("capacity") for r, row in zip(resource_names, resources)},
        "users": specs,
    }
    for name, row in zip(user_names, users):
        demand = row.get("demand") or {}
        if not isinstance(demand, dict):
            raise CaseError(f"users.{name}.demand: expected a mapping resource -> amount")
        spec = {"demand": demand}
        if row.get("weight") not in (None, "", 1):
            spec["weight"] = row["weight"]
        if row.get("max_tasks") not in (None, ""):
            spec["max_tasks"] = row["max_tasks"]
        specs[name] = spec
    return parse_case(mapping, where="page")


def page_form(case: Case) -> dict:
    """A case in the page's editable form (what :func:`case_from_page` reads back)."""
    inst = case.instance
    users = []
    for i, u in enumerate(inst.users):
        row = {
            "name": u,
            "demand": {r: float(inst.demand[i, j]) for j, r in enumerate(inst.resources)},
            "weight": 1.0 if inst.weights is None else float(np.ravel(inst.weights[i])[0]),
        }
        if inst.max_tasks is not None and np.isfinite(inst.max_tasks[i]):
            row["max_tasks"] = float(inst.max_tasks[i])
        users.append(row)
    return {
        "name": case.name,
        "source": case.source or "",
        "description": case.description or "",
        "resources": [{"name": r, "capacity": float(c)} for r, c in zip(inst.resources, inst.capacity)],
        "users": users,
    }


# -- what the page shows -----------------------------------------------------------------------
def _alpha_name(body) -> str:
    from fairalloc.analysis.tradeoff import FAMILIES

    alpha = body.get("alpha", 2)
    family = FAMILIES.get(body.get("on", "shares"))
    if family is None:
        raise FairallocError(f"on: unknown utility '{body.get('on')}' (choose: shares, tasks)")
    text = "inf" if alpha in ("inf", None) or (isinstance(alpha, (int, float)) and math.isinf(alpha)) else alpha
    return f"{family}:{text}"


def _mechanism_names(body) -> list[str]:
    asked = body.get("mechanisms", list(OFFERED))
    if not isinstance(asked, list) or not all(isinstance(n, str) for n in asked):
        raise FairallocError(f"mechanisms: expected a list of mechanism names (got {excerpt(asked)})")
    if len(asked) > MAX_EXPLORER_MECHANISMS:
        raise FairallocError(
            f"mechanisms: at most {MAX_EXPLORER_MECHANISMS} per request (got {len(asked)}; "
            f"fairalloc.core.limits.MAX_EXPLORER_MECHANISMS)"
        )
    names = list(dict.fromkeys(asked))
    if body.get("alpha") is not None:
        names.append(_alpha_name(body))
    for name in names:
        registry.get(name)
    return names


def allocation_view(allocation) -> dict:
    from fairalloc.analysis.tradeoff import measures

    inst = allocation.instance
    exact = allocation.exact
    return {
        "mechanism": allocation.mechanism,
        "method": allocation.method,
        "solver": allocation.solver,
        "tasks": dict(zip(inst.users, map(float, allocation.tasks))),
        "exact": None if exact is None else dict(zip(inst.users, map(str, exact))),
        "dominant_shares": dict(zip(inst.users, map(float, allocation.dominant_shares))),
        "bundles": {u: dict(zip(inst.resources, map(float, allocation.bundles[i]))) for i, u in enumerate(inst.users)},
        "prices": None if allocation.prices is None else dict(zip(inst.resources, map(float, allocation.prices))),
        "measures": measures(allocation),
    }


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]


def figure4_svg(allocations) -> str:
    """Figure 4 of the DRF paper for each allocation: per resource, a bar stacked with each
    user's share of it."""
    import matplotlib
    from matplotlib.figure import Figure

    with _PLOT_LOCK, matplotlib.rc_context({"svg.fonttype": "none", "font.size": 9}):
        fig = Figure(figsize=(2.3 * len(allocations) + 0.6, 2.9))
        axes = np.atleast_1d(fig.subplots(1, len(allocations), sharey=True))
        colours = matplotlib.colormaps["tab10"]
        for ax, a in zip(axes, allocations):
            inst = a.instance
            shares = a.bundles / np.where(inst.capacity > 0, inst.capacity, 1.0)
            bottom = np.zeros(inst.m)
            for i, u in enumerate(inst.users):
                ax.bar(
                    inst.resources,
                    shares[i],
                    bottom=bottom,
                    color=colours(i % 10),
                    edgecolor="white",
                    label=u,
                    width=0.6,
                )
                for j in range(inst.m):
                    if shares[i, j] >= 0.06:
                        ax.text(
                            j,
                            bottom[j] + shares[i, j] / 2,
                            f"{u} {shares[i, j]:.0%}",
                            ha="center",
                            va="center",
                            fontsize=7,
                            color="white",
                        )
                bottom += shares[i]
            ax.set_title(a.mechanism, fontsize=9)
            ax.set_ylim(0, 1)
            ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
            ax.grid(axis="y", alpha=0.3)
        if allocations and allocations[0].instance.n <= 10:
            axes[-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return _svg(fig)


def solve_view(body) -> dict:
    case = case_from_page(body.get("case"))
    allocations = [registry.get(n).allocate(case.instance) for n in _mechanism_names(body)]
    return {
        "instance": case.instance.to_dict(),
        "results": [allocation_view(a) for a in allocations],
        "chart": figure4_svg(allocations) if allocations else "",
    }


def _one_name(body, default: str) -> str:
    name = body.get("mechanism") or default
    if not isinstance(name, str):
        raise FairallocError(f"mechanism: expected a mechanism name (got {excerpt(name)})")
    return name


def _budget(body, default: int) -> int:
    """The verifier's evaluation budget from a request, bounded so one request stays short."""
    budget = body.get("budget", default)
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_EXPLORER_BUDGET:
        raise FairallocError(
            f"budget: must be a whole number between 1 and {MAX_EXPLORER_BUDGET} (got {excerpt(budget)})"
        )
    return budget


def properties_view(body) -> dict:
    from fairalloc.analysis.manipulation import check_search
    from fairalloc.analysis.properties import check
    from fairalloc.analysis.results import describe_witness

    case = case_from_page(body.get("case"))
    name = _one_name(body, "drf")
    budget = _budget(body, 150)
    # dynamic mechanisms search lies too (their own checkers): the same bound, before any work
    check_search(
        case.instance,
        case.instance.n,
        budget,
        "strategy_proofness",
        "MAX_EXPLORER_SEARCH_WORK",
        hint="lower the verifier budget or use fewer users",
    )
    report = check(name, case.instance, budget=budget)
    return {
        "mechanism": name,
        "properties": [
            {
                "name": p,
                "holds": r.holds,
                "applicable": r.applicable,
                "margin": r.margin,
                "note": r.note,
                "text": r.summary() if r.holds or not r.applicable else describe_witness(p, r.witness),
                "witness": r.witness.to_dict() if r.witness else None,
            }
            for p, r in report.items()
        ],
    }


def frontier_view(body) -> dict:
    from fairalloc.analysis.tradeoff import DEFAULT_ALPHAS, frontier, plot_frontier
    from fairalloc.models.alpha_fair import AlphaFair

    case = case_from_page(body.get("case"))
    on = body.get("on", "shares")
    points = frontier(case.instance, DEFAULT_ALPHAS, on=on)
    current = None
    if body.get("alpha") is not None:
        member = registry.get(_alpha_name(body))
        assert isinstance(member, AlphaFair), f"{member.name}: _alpha_name names an alpha-fair member"
        current = frontier(case.instance, [member.alpha], on=on, references=[])[0]
    with _PLOT_LOCK:
        import matplotlib

        with matplotlib.rc_context({"svg.fonttype": "none"}):
            svg = _svg(plot_frontier(points, current=current))
    keys = ("total_dominant_share", "min_dominant_share", "jain_index")
    return {
        "svg": svg,
        "points": [{"label": p.label, **{k: p.metrics[k] for k in keys}} for p in points],
        "current": None if current is None else {"label": current.label, **{k: current.metrics[k] for k in keys}},
    }


def probe_view(body) -> dict:
    from fairalloc.analysis.manipulation import best_lie, probe

    case = case_from_page(body.get("case"))
    inst, name = case.instance, _one_name(body, "drf")
    user = str(body.get("user", ""))
    if user not in inst.users:
        raise CaseError(f"probe.user: {unknown('user', user, inst.users)}")
    report = body.get("report") or {}
    checked = {"resources": {r: 1.0 for r in inst.resources}, "users": {user: {"demand": report}}}
    try:  # the reported demand is validated like a case's demand (its own field names)
        parse_case(checked, where="probe")
    except CaseError as exc:
        raise CaseError(str(exc).replace(f"users.{user}.demand", "probe.report", 1)) from None
    lie = probe(name, inst, user, report)
    out = {"mechanism": name, "user": user, **lie.to_dict()}
    if body.get("search"):
        best = best_lie(name, inst, user, budget=_budget(body, 300))
        out["best"] = best.to_dict()
    return out


def playback_view(body) -> dict:
    case = case_from_page(body.get("case"))
    name = _one_name(body, "dmfa-srq")
    mech = registry.get(name)
    if mech.kind != "dynamic":
        raise FairallocError(
            f"mechanism: '{name}' is static; playback is for dynamic mechanisms "
            f"({', '.join(registry.available('dynamic'))})"
        )
    history = mech.allocate(case.instance).history
    steps = history.step_dicts(limit=MAX_PLAYBACK_STEPS)
    return {
        "mechanism": name,
        "users": case.instance.users,
        "steps": steps,
        "truncated": case.instance.n > MAX_PLAYBACK_STEPS,
    }


def yaml_text(body) -> str:
    case = case_from_page(body.get("case"))
    head = f"# {case.name}: written by the fairalloc explorer; 'fairalloc solve FILE' reads it back\n"
    return head + yaml.safe_dump(case.instance.to_dict(), sort_keys=False)


# -- the app -----------------------------------------------------------------------------------
class RequestError(FairallocError):
    """A request the explorer refuses as a whole (too large, too many at once): its HTTP status."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def _refuse_constant(token: str):
    raise FairallocError(f"request: {token} is not JSON (write numbers as numbers)")


def read_body(request) -> dict:
    """The request's JSON object, read within :data:`~fairalloc.core.limits.MAX_REQUEST_BYTES`;
    a :class:`RequestError` (413) beyond, a :class:`FairallocError` (400) if it is not a JSON
    object (``NaN`` and nesting deeper than Python parses included)."""
    from werkzeug.exceptions import RequestEntityTooLarge

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
        raise FairallocError("request: the JSON body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        raise FairallocError("request: the body must be a JSON object")
    return body


def _too_large(size) -> str:
    got = "" if size is None else f" (got {size} bytes)"
    return f"request: the body may have at most {MAX_REQUEST_BYTES} bytes{got}"


def create_app(case: str | None = None):
    """The Flask app; ``case`` (a bundled name or a YAML file) is what the page opens with."""
    from flask import Flask, Response, jsonify, request, send_from_directory
    from flask.json.provider import DefaultJSONProvider
    from werkzeug.exceptions import HTTPException

    class StrictJSON(DefaultJSONProvider):
        """Standard JSON only: a NaN or an infinity is an error, never the token ``NaN``."""

        def dumps(self, obj, **kwargs):
            kwargs.setdefault("default", self.default)
            kwargs["allow_nan"] = False
            return json.dumps(finite(obj, "answer"), **kwargs)

    app = Flask(__name__, static_folder=None)
    app.json = StrictJSON(app)
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    start = page_form(load_case(case)) if case else None
    slots = threading.BoundedSemaphore(MAX_EXPLORER_CONCURRENT)

    def error(message: str, status: int):
        return jsonify({"error": one_line(message)}), status

    def computed(produce):
        """Run ``produce(body)`` in one of the bounded slots; every failure is one JSON line."""
        try:
            body = read_body(request)
        except RequestError as exc:
            return error(str(exc), exc.status)
        except FairallocError as exc:
            return error(str(exc), 400)
        if not slots.acquire(timeout=EXPLORER_WAIT_SECONDS):
            return error(f"server busy: {MAX_EXPLORER_CONCURRENT} requests are being computed; try again", 503)
        try:
            return produce(body)
        except FairallocError as exc:
            return error(str(exc), 400)
        except (RecursionError, MemoryError) as exc:
            return error(f"request: too large to compute ({type(exc).__name__})", 400)
        except Exception as exc:  # a bug must not take the page down: report it, keep serving
            traceback.print_exc(file=sys.stderr)
            return error(f"internal error ({type(exc).__name__}: {shown(exc)}); please report it", 500)
        finally:
            slots.release()

    def answer(view):
        return computed(lambda body: jsonify(view(body)))

    @app.errorhandler(HTTPException)
    def http_error(exc):
        if exc.code == 413:
            return error(_too_large(request.content_length), 413)
        return error(f"{exc.code} {exc.name}", exc.code or 500)

    @app.get("/")
    def index():
        return send_from_directory(STATIC, "explorer.html")

    @app.get("/favicon.ico")
    def favicon():
        return "", 204

    @app.get("/static/<path:name>")
    def static_file(name):
        return send_from_directory(STATIC, name)

    @app.get("/api/start")
    def start_case():
        return jsonify(start or page_form(load_case("drf-section-4-1")))

    @app.get("/api/cases")
    def cases():
        return jsonify([{"name": n, "users": load_case(n).instance.n} for n in bundled_cases()])

    @app.get("/api/case/<name>")
    def one_case(name):
        known = bundled_cases()
        if name not in known:  # bundled cases only: never a file of the server's disk
            return error(f"case: {unknown('bundled case', name, known)}", 404)
        try:
            return jsonify(page_form(load_case(name)))
        except FairallocError as exc:
            return error(str(exc), 400)

    @app.get("/api/mechanisms")
    def mechanisms():
        return jsonify({"static": list(OFFERED), "dynamic": registry.available("dynamic")})

    for route, view in (
        ("solve", solve_view),
        ("properties", properties_view),
        ("frontier", frontier_view),
        ("probe", probe_view),
        ("playback", playback_view),
    ):
        app.add_url_rule(f"/api/{route}", route, (lambda v: lambda: answer(v))(view), methods=["POST"])

    def yaml_answer(body):
        text = yaml_text(body)
        name = (body.get("case") or {}).get("name") or "case"
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in str(name)[:100]) or "case"
        return Response(
            text, mimetype="application/x-yaml", headers={"Content-Disposition": f'attachment; filename="{safe}.yaml"'}
        )

    @app.post("/api/yaml")
    def download_yaml():
        return computed(yaml_answer)

    return app


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


def serve(case: str | None, host: str = "127.0.0.1", port: int = 8050, open_browser: bool = False) -> None:
    """Serve the explorer until interrupted (Ctrl-C)."""
    from werkzeug.serving import make_server

    app = create_app(case)
    sock = _listening_socket(host, port)
    try:
        server = make_server(host, port, app, threaded=True, fd=sock.fileno())
    finally:
        sock.close()  # the server holds its own duplicate of the socket
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


__all__ = ["case_from_page", "create_app", "figure4_svg", "page_form", "serve"]
