"""The explorer is a server on the user's machine that any web page they visit can send requests to:
it must answer only its own page, read no file but the ones the user gave it, and let no request
take the others down (docs/explorer.md, "What the server refuses")."""

from __future__ import annotations

import http.client
import json
import os
import threading
import time

import pytest

from fairalloc.core import limits
from fairalloc.explorer import close_app, create_app, make_server, page_form
from fairalloc.explorer.app import Guard
from fairalloc.explorer.workers import Busy, Lane, TimeLimit
from fairalloc.io.cases import load_bundled, load_case

PORT = 8050


@pytest.fixture(scope="module")
def app():
    app = create_app("drf-section-4-1")
    app.config["FAIRALLOC_GUARD"].port = PORT
    yield app
    close_app(app)


@pytest.fixture(scope="module")
def client(app):
    return app.test_client()


def s41():
    return page_form(load_case("drf-section-4-1"))


def post(client, path, body, **headers):
    return client.post(path, json=body, headers={"Host": f"127.0.0.1:{PORT}", **headers})


# -- who may ask ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bound, allow, host, ok",
    [
        ("127.0.0.1", (), f"127.0.0.1:{PORT}", True),
        ("127.0.0.1", (), f"localhost:{PORT}", True),
        ("127.0.0.1", (), f"[::1]:{PORT}", True),
        ("127.0.0.1", (), f"evil.example:{PORT}", False),  # DNS rebinding: a site's name pointed at 127.0.0.1
        ("127.0.0.1", (), f"127.0.0.1.nip.io:{PORT}", False),
        ("127.0.0.1", (), "127.0.0.1:8051", False),
        ("127.0.0.1", (), "127.0.0.1", False),
        ("127.0.0.1", (), "", False),
        ("127.0.0.1", (), "[::1", False),
        ("0.0.0.0", (), f"192.168.1.5:{PORT}", True),  # on every interface: any address, no name
        ("0.0.0.0", (), f"evil.example:{PORT}", False),
        ("0.0.0.0", ("lab.example",), f"LAB.example:{PORT}", True),
        ("10.0.0.2", (), f"10.0.0.2:{PORT}", True),
        ("10.0.0.2", (), f"10.0.0.3:{PORT}", False),
    ],
)
def test_only_the_explorers_own_address_is_answered(bound, allow, host, ok):
    assert Guard(bound, PORT, allow).host_ok(host) is ok


@pytest.mark.parametrize("method, path", [("GET", "/api/case/drf-theorem-1"), ("GET", "/"), ("POST", "/api/solve")])
def test_a_foreign_host_is_refused_for_every_request(client, method, path):
    response = client.open(path, method=method, json={"case": s41()}, headers={"Host": f"evil.example:{PORT}"})
    assert response.status_code == 403
    assert response.get_json() == {"error": f"request: this explorer does not answer to host 'evil.example:{PORT}'"}


@pytest.mark.parametrize(
    "headers, status",
    [
        ({"Origin": f"http://127.0.0.1:{PORT}"}, 200),
        ({"Origin": f"http://localhost:{PORT}"}, 200),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": f"https://127.0.0.1:{PORT}"}, 403),
        ({"Origin": "null"}, 403),  # a sandboxed frame or a file:// page
        ({"Origin": f"http://127.0.0.1:{PORT}", "Sec-Fetch-Site": "cross-site"}, 403),
        ({}, 200),  # not a browser's cross-site request
    ],
)
def test_pages_of_other_sites_are_refused(client, headers, status):
    assert post(client, "/api/check", {"case": s41()}, **headers).status_code == status


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
def test_only_json_bodies_are_read(client, content_type):
    """A page of another site can post text/plain or a form without asking the browser first."""
    headers = {"Host": f"127.0.0.1:{PORT}"} | ({"Content-Type": content_type} if content_type else {})
    response = client.post("/api/solve", data=json.dumps({"case": s41()}), headers=headers)
    assert response.status_code == 415
    assert response.get_json() == {"error": "request: send JSON (Content-Type: application/json)"}


def test_answers_forbid_framing_and_sniffing(client):
    response = client.get("/", headers={"Host": f"127.0.0.1:{PORT}"})
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert "Access-Control-Allow-Origin" not in response.headers


def test_the_server_listens_on_loopback_unless_told_otherwise():
    import inspect

    from fairalloc.cli.frontier import explore
    from fairalloc.explorer import serve

    assert inspect.signature(serve).parameters["host"].default == "127.0.0.1"
    assert inspect.signature(make_server).parameters["host"].default == "127.0.0.1"
    assert next(p for p in explore.params if p.name == "host").default == "127.0.0.1"


# -- files ---------------------------------------------------------------------------------------------------
def test_cases_are_bundled_ones_by_name_never_files_of_the_working_directory(client, tmp_path, monkeypatch):
    (tmp_path / "config.yaml").write_text("resources: {cpu: 1}\nusers:\n  A: {demand: {cpu: 1}, secret: hunter2}\n")
    (tmp_path / "drf-theorem-1").write_text("resources: {cpu: 1}\nusers:\n  Z: {demand: {cpu: 1}}\n")
    (tmp_path / "drf-theorem-1.yaml").write_text("resources: {cpu: 1}\nusers:\n  Z: {demand: {cpu: 1}}\n")
    monkeypatch.chdir(tmp_path)
    for name in ("config", "config.yaml", "./config.yaml", "..%2Fconfig.yaml", str(tmp_path / "config.yaml")):
        response = client.get(f"/api/case/{name}", headers={"Host": f"127.0.0.1:{PORT}"})
        assert response.status_code == 404, name
        assert "hunter2" not in response.get_data(as_text=True)
    bundled = client.get("/api/case/drf-theorem-1", headers={"Host": f"127.0.0.1:{PORT}"}).get_json()["case"]
    assert "Z" not in [u["name"] for u in bundled["users"]]  # the library's, not the working directory's
    assert [u["name"] for u in bundled["users"]] == list(load_bundled("drf-theorem-1").instance.users)


def test_no_request_names_a_path(client):
    """Every endpoint that takes a case takes its contents (a form or a file's text), never a path."""
    answer = post(
        client,
        "/api/upload",
        {"text": "resources: {cpu: 1}\nusers: {A: {demand: {cpu: 1}}}", "filename": "../../etc/x"},
    )
    assert answer.get_json()["valid"] and answer.get_json()["case"]["name"] == "x"
    bad = post(client, "/api/solve", {"case": "/etc/passwd"})
    assert bad.status_code == 400 and bad.get_json()["error"].startswith("case: input should be a valid dictionary")


# -- size ------------------------------------------------------------------------------------------------------
def test_a_huge_body_is_refused_before_it_is_read(client):
    """The reported request: 3.5 MB naming drf 500,000 times."""
    body = json.dumps({"case": s41(), "mechanisms": ["drf"] * 500_000})
    assert len(body) > 3_000_000
    response = client.post(
        "/api/solve", data=body, content_type="application/json", headers={"Host": f"127.0.0.1:{PORT}"}
    )
    assert response.status_code == 413 and "MAX_REQUEST_BYTES" in response.get_json()["error"]


@pytest.mark.parametrize("depth", [limits.MAX_REQUEST_DEPTH + 1, 10_000])
def test_deep_nesting_is_refused(client, depth):
    body = '{"case": ' + "[" * depth + "]" * depth + "}"
    response = client.post(
        "/api/solve", data=body, content_type="application/json", headers={"Host": f"127.0.0.1:{PORT}"}
    )
    assert response.status_code == 400
    assert response.get_json()["error"].startswith(
        f"request: the JSON body is nested deeper than {limits.MAX_REQUEST_DEPTH}"
    )


def test_a_frontier_of_20000_users_is_refused_at_once(client):
    """The reported request: a frontier of 20,000 users took 220 s of CPU."""
    case = {
        "resources": [{"name": "cpu", "capacity": 1}],
        "users": [{"name": f"u{i}", "demand": {"cpu": 1}} for i in range(20_000)],
    }
    response = post(client, "/api/frontier", {"case": case})
    assert response.status_code in (400, 413)
    assert "MAX_EXPLORER_USERS" in response.get_json()["error"] or "MAX_REQUEST_BYTES" in response.get_json()["error"]


# -- time, and no request holding what another needs ----------------------------------------------------------------
def test_a_request_is_stopped_at_its_time_limit_and_the_worker_replaced():
    app = create_app(slow_seconds=0.05)
    try:
        client = app.test_client()
        many = {
            "resources": [{"name": "cpu", "capacity": 10}, {"name": "mem", "capacity": 10}],
            "users": [{"name": f"u{i}", "demand": {"cpu": 1 + i % 3, "mem": 1 + i % 5}} for i in range(20)],
        }
        response = client.post("/api/properties", json={"case": many, "mechanism": "ceei", "budget": 1000})
        assert response.status_code == 503
        assert response.get_json()["error"].startswith("properties: stopped after 0.05 s, the explorer's limit")
        assert "EXPLORER_SLOW_SECONDS" in response.get_json()["error"]
        assert client.post("/api/solve", json={"case": s41()}).status_code == 200  # the quick lane is untouched
        lane = app.config["FAIRALLOC_LANES"]["slow"]
        assert lane._started == 0  # the stopped worker is gone; the next request starts a new one
    finally:
        close_app(app)


def _blocking_properties(flag):
    """A view that reports progress once, then waits until ``flag`` (a file) exists."""

    def view(body, progress=None):
        progress(0, 1, "waiting")
        while not os.path.exists(flag):
            time.sleep(0.01)
        return {"done": True}

    return view


def _first_word(response) -> str:
    """The first progress a streamed response reports, past the heartbeats the server sends while the
    worker is silent (on a loaded machine, a forked worker may start after the first heartbeat)."""
    while True:
        what = json.loads(response.readline())["progress"]["what"]
        if what:
            return what


def test_a_slow_request_holds_nothing_the_others_need(monkeypatch, tmp_path):
    """While both slow workers compute, the page's edits are still answered; a third slow request
    waits for a worker, then is told the server is busy."""
    from fairalloc.explorer import views

    flag = str(tmp_path / "go")
    monkeypatch.setitem(views.VIEWS, "properties", _blocking_properties(flag))
    server = make_server(None, "127.0.0.1", 0)
    app = server.app
    lanes = app.config["FAIRALLOC_LANES"]
    for lane in lanes.values():  # workers forked from this process: they see the blocking view
        lane.__init__(lane.name, lane.size, lane.seconds, start_method="fork", wait=0.2)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def request(path, body, stream=False):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        headers = {"Content-Type": "application/json", **({"Accept": "application/x-ndjson"} if stream else {})}
        conn.request("POST", path, body=json.dumps(body), headers=headers)
        return conn.getresponse()

    try:
        slow = [request("/api/properties", {"case": s41()}, stream=True) for _ in range(2)]
        for response in slow:  # both are computing: each has said so
            assert _first_word(response) == "waiting"
        quick = request("/api/solve", {"case": s41(), "mechanisms": ["drf"]})
        assert quick.status == 200 and json.loads(quick.read())["results"][0]["tasks"] == {"A": 3.0, "B": 2.0}
        third = request("/api/properties", {"case": s41()}, stream=True)
        assert json.loads(third.read().splitlines()[-1])["error"].startswith("server busy: the 2 slow workers")
        open(flag, "w").close()
        for response in slow:
            lines = [json.loads(line) for line in response.read().splitlines() if line.strip()]
            assert lines[-1] == {"result": {"done": True}}
    finally:
        open(flag, "w").close()
        server.shutdown()
        server.server_close()
        close_app(app)


def test_a_client_that_goes_away_stops_its_computation(monkeypatch, tmp_path):
    from fairalloc.explorer import views

    monkeypatch.setitem(views.VIEWS, "properties", _blocking_properties(str(tmp_path / "never")))
    lane = Lane("slow", 1, 30, start_method="fork", wait=0.1)
    try:
        stream = lane.stream("properties", {})
        assert next(stream) == ("progress", {"done": 0, "total": 1, "what": "waiting"})
        process = lane._idle.qsize(), lane._started
        stream.close()  # what werkzeug does when the page aborts the request
        assert process == (0, 1) and lane._started == 0
        with pytest.raises(Busy):  # nothing was given back: the stopped worker is not reused
            lane._idle.get_nowait() if lane._idle.qsize() else (_ for _ in ()).throw(Busy("empty"))
    finally:
        lane.close()


def test_time_limit_is_an_error_of_its_own():
    assert issubclass(TimeLimit, Exception) and issubclass(Busy, Exception)
