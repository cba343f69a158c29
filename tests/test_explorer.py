"""The explorer's JSON API through Flask's test client (the browser test drives the page)."""

import json

import numpy as np
import pytest
import yaml

import fairalloc
from fairalloc.analysis.manipulation import probe
from fairalloc.explorer import close_app, create_app, page_form
from fairalloc.io.cases import load_case, parse_case
from fairalloc.testing import run_cli


@pytest.fixture(scope="module")
def client():
    app = create_app("drf-section-4-1")
    yield app.test_client()
    close_app(app)


def section_4_1(**changes):
    case = {
        "name": "s41",
        "resources": [{"name": "cpu", "capacity": 9}, {"name": "mem", "capacity": 18}],
        "users": [{"name": "A", "demand": {"cpu": 1, "mem": 4}}, {"name": "B", "demand": {"cpu": 3, "mem": 1}}],
    }
    for path, value in changes.items():
        *head, last = path.split("__")
        node = case
        for key in head:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    return case


def form(name):
    return page_form(load_case(name))


def test_start_case_cases_and_one_case(client):
    start = client.get("/api/start").get_json()
    assert start["origin"] == "bundled" and start["label"] == "drf-section-4-1"
    assert [u["name"] for u in start["case"]["users"]] == ["A", "B"]
    names = client.get("/api/cases").get_json()["cases"]
    assert "drf-theorem-4" in names and len(names) == len(fairalloc.io.cases.bundled_cases())
    one = client.get("/api/case/drf-theorem-1").get_json()["case"]
    assert one == json.loads(json.dumps(form("drf-theorem-1")))


def test_start_with_a_file_names_the_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(fairalloc.load_case("drf-section-4-1").instance.to_dict()))
    app = create_app(str(path))
    try:
        start = app.test_client().get("/api/start").get_json()
    finally:
        close_app(app)
    assert start["origin"] == "file" and start["label"] == "mine.yaml"


def test_meta_describes_every_mechanism_with_a_working_docs_link(client):
    meta = client.get("/api/meta").get_json()
    assert {m["name"] for m in meta["mechanisms"]} == set(fairalloc.core.registry.available())
    assert "cores" in meta["units"]
    for m in meta["mechanisms"]:
        assert m["summary"] and m["about"] and m["docs"], m["name"]
        page, anchor = m["docs"].split("#")
        html = client.get(page).get_data(as_text=True)
        assert f'id="{anchor}"' in html, m["name"]


def test_check_says_what_a_case_allows(client):
    answer = client.post("/api/check", json={"case": form("dmfa-srq-worked-example")}).get_json()
    assert answer["valid"] and answer["dynamic"] == {"dmfa-srq": None, "ddrf": None}
    # a user demanding none of a resource: no playback, and the reason (not a failed request)
    answer = client.post("/api/check", json={"case": form("hdrf-volcano-1")}).get_json()
    assert answer["valid"] and answer["hierarchy"]
    assert "needs strictly positive demands" in answer["dynamic"]["ddrf"]
    queue = client.post("/api/check", json={"case": form("report-volcano-1619")}).get_json()
    assert queue["queues"] and queue["policy"] == "volcano-proportion"


def test_check_answers_an_invalid_case_with_its_error(client):
    answer = client.post("/api/check", json={"case": section_4_1(users__1__demand__cpu=-3)})
    assert answer.status_code == 200
    assert answer.get_json() == {
        "valid": False,
        "error": "users.B.demand.cpu: input should be greater than or equal to 0 (got -3)",
    }


def test_solve_gives_the_papers_numbers(client):
    answer = client.post(
        "/api/solve", json={"case": section_4_1(), "mechanisms": ["drf", "asset", "ceei"], "alpha": 2}
    ).get_json()
    tasks = {r["mechanism"]: r["tasks"] for r in answer["results"]}
    assert tasks["drf"] == {"A": 3.0, "B": 2.0}
    assert tasks["asset"] == pytest.approx({"A": 63 / 25, "B": 54 / 25})
    assert tasks["ceei"] == pytest.approx({"A": 45 / 11, "B": 18 / 11})
    assert tasks["alpha-fair:2"] == pytest.approx({"A": 3.72792, "B": 1.75736}, abs=1e-5)
    assert answer["results"][0]["exact"] == {"A": "3", "B": "2"}
    assert answer["results"][0]["bundles"]["A"] == {"cpu": 3.0, "mem": 12.0}
    # B = <1, 1>: DRF 3 and 6 (2x/9 = y/9, both resources bind)
    answer = client.post("/api/solve", json={"case": section_4_1(users__1__demand__cpu=1), "mechanisms": ["drf"]})
    assert answer.get_json()["results"][0]["tasks"] == {"A": 3.0, "B": 6.0}


def test_solve_on_a_variant_and_a_mechanism_that_cannot(client):
    case = form("drf-section-4-1")
    case["variants"] = [*case["variants"], {"name": "no-B", "remove_user": "B"}]
    answer = client.post("/api/solve", json={"case": case, "variant": "no-B", "mechanisms": ["drf"]}).get_json()
    assert answer["results"][0]["tasks"] == {"A": 4.5}  # 18 GB / 4 GB
    bad = client.post("/api/solve", json={"case": case, "variant": "no-b"})
    assert bad.status_code == 400 and "variant: unknown variant 'no-b'; did you mean 'no-B'" in bad.get_json()["error"]
    answer = client.post("/api/solve", json={"case": section_4_1(), "mechanisms": ["drf", "dmfa-srq"]}).get_json()
    assert answer["results"][1] == {"mechanism": "dmfa-srq", "dynamic": True}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"users__1__demand__cpu": -3}, "users.B.demand.cpu: input should be greater than or equal to 0 (got -3)"),
        ({"users__1__name": ""}, "users[1].name: must not be empty"),
        ({"users__1__name": "  "}, "users[1].name: must not be empty"),
        ({"users__1__name": "A"}, "users[1].name: duplicate name 'A' (also users[0])"),
        ({"resources__0__name": ""}, "resources[0].name: must not be empty"),
        ({"resources__0__capacity": "lots"}, "resources.cpu: input should be a valid number (got 'lots')"),
        ({"users__0__weight": 0}, "users.A.weight: must be a finite number > 0 (got 0)"),
        ({"users__0__demand__cpu": "NaN"}, "users.A.demand.cpu: input should be a valid number (got 'NaN')"),
        ({"users__0__demand": {"cpu": 0, "mem": 0}}, "users.A.demand: all zero"),
        ({"users__0__demand": {"gpu": 1}}, "users.A.demand.gpu: unknown resource 'gpu'"),
        ({"users__0__colour": "red"}, "users[0].colour: unknown field 'colour'"),
        ({"users": []}, "users: give at least one user"),
        ({"resources": []}, "resources: give at least one resource"),
    ],
)
def test_a_bad_case_is_one_message_naming_the_field(client, change, message):
    response = client.post("/api/solve", json={"case": section_4_1(**change), "mechanisms": ["drf"]})
    assert response.status_code == 400 and response.get_json()["error"].startswith(message)
    assert client.post("/api/check", json={"case": section_4_1(**change)}).get_json()["error"].startswith(message)
    assert client.post("/api/solve", json={"case": section_4_1(), "mechanisms": ["drf"]}).status_code == 200


@pytest.mark.parametrize(
    "path, body, message",
    [
        ("solve", {"mechanisms": 3}, "mechanisms: input should be a valid list (got 3)"),
        ("solve", {"mechanisms": ["nope"]}, "mechanism: unknown mechanism 'nope'"),
        ("solve", {"mechanisms": ["drf"] * 9}, "mechanisms: list should have at most 8 items"),
        ("solve", {"on": []}, "on: input should be 'shares' or 'tasks' (got [])"),
        ("solve", {"alpha": -1}, "alpha: input should be greater than or equal to 0 (got -1)"),
        ("solve", {"alpha": "x"}, "alpha: input should be a valid number (got 'x')"),
        ("solve", {"colour": 1}, "colour: unknown field 'colour'"),
        ("solve", {"case": 3}, "case: input should be a valid dictionary (got 3)"),
        ("properties", {"budget": 0}, "budget: input should be greater than or equal to 1 (got 0)"),
        ("properties", {"budget": True}, "budget: input should be a valid integer (got True)"),
        ("properties", {"budget": 10**9}, "budget: input should be less than or equal to 5000"),
        ("probe", {"mechanism": "ceei"}, "user: field required"),
        ("probe", {"mechanism": "ddrf", "user": "A"}, "mechanism: 'ddrf' is dynamic"),
        ("probe", {"mechanism": "ceei", "user": "nobody"}, "user: unknown user 'nobody'"),
        ("probe", {"mechanism": "ceei", "user": "A", "report": {"cpu": -1}}, "report.cpu: input should be greater"),
        ("playback", {"mechanism": "drf"}, "mechanism: 'drf' is static"),
        ("playback", {"mechanism": "dmfa-srq"}, "users.A.shared: dmfa-srq needs every user's shared quantity"),
    ],
)
def test_client_mistakes_are_400_with_a_message(client, path, body, message):
    response = client.post(f"/api/{path}", json={"case": section_4_1(), **body})
    assert response.status_code == 400, response.get_json()
    assert message in response.get_json()["error"]


def test_properties_with_witnesses_in_words_and_variants(client):
    report = client.post(
        "/api/properties", json={"case": form("drf-section-4-1"), "mechanism": "drf", "budget": 50}
    ).get_json()
    by_name = {p["name"]: p for p in report["properties"]}
    rm = by_name["resource_monotonicity"]
    assert not rm["holds"] and rm["text"] == "With 2x the capacity of mem, user B gets fewer tasks (1.5 instead of 2)."
    assert rm["variant"]["capacity"] == {"cpu": 9.0, "mem": 36.0}
    assert by_name["sharing_incentive"]["holds"] and by_name["sharing_incentive"]["variant"] is None
    # the witness as a variant reproduces the violation
    case = form("drf-section-4-1")
    case["variants"] = [*case["variants"], rm["variant"]]
    solved = client.post("/api/solve", json={"case": case, "variant": rm["variant"]["name"], "mechanisms": ["drf"]})
    assert solved.get_json()["results"][0]["tasks"]["B"] == pytest.approx(1.5)


def test_properties_stream_progress_then_the_result(client):
    response = client.post(
        "/api/properties",
        json={"case": form("drf-theorem-1"), "mechanism": "asset", "budget": 50},
        headers={"Accept": "application/x-ndjson"},
    )
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    assert response.mimetype == "application/x-ndjson"
    assert all("progress" in line for line in lines[:-1]) and len(lines) >= 2
    names = {p["name"]: p for p in lines[-1]["result"]["properties"]}
    assert not names["sharing_incentive"]["holds"] and names["sharing_incentive"]["witness"]["user"] == "2"


def test_frontier_points_carry_their_allocations(client):
    answer = client.post("/api/frontier", json={"case": section_4_1(), "alpha": 5}).get_json()
    points = {p["label"]: p for p in answer["points"]}
    assert points["alpha=5"]["current"] and points["alpha=5"]["min_dominant_share"] == pytest.approx(
        1.90555 / 3, abs=1e-5
    )
    assert points["drf"]["tasks"] == {"A": 3.0, "B": 2.0}
    assert [p["label"] for p in answer["points"]][-4:] == ["drf", "ceei", "asset", "utilitarian"]


def test_probe_measures_the_true_gain_and_finds_a_lie(client):
    theorem_4 = load_case("drf-theorem-4")
    inst = theorem_4.instance
    user = inst.users[0]
    lie = {r: float(v) for r, v in zip(inst.resources, inst.demand[0])}
    lie[inst.resources[-1]] *= 2
    body = {
        "case": page_form(theorem_4),
        "mechanism": "ceei",
        "user": user,
        "report": lie,
        "search": True,
        "budget": 100,
    }
    answer = client.post("/api/probe", json=body).get_json()
    expected = probe("ceei", inst, user, lie)
    assert answer["truthful_tasks"] == pytest.approx(expected.truthful_tasks)
    assert answer["manipulated_tasks"] == pytest.approx(expected.manipulated_tasks)
    best = answer["best"]
    assert best["profitable"] and best["gain"] > 0.5  # Theorem 4: CEEI is manipulable
    assert best["text"].startswith(f"User {user} gains by lying") and best["variant"]["misreport"]["user"] == user


def test_playback_of_dmfa_srq_shows_its_three_arrivals(client):
    case = form("dmfa-srq-worked-example")
    answer = client.post("/api/playback", json={"case": case, "mechanism": "dmfa-srq"}).get_json()
    history = fairalloc.solve(load_case("dmfa-srq-worked-example").instance, "dmfa-srq").history
    assert [s["arrived"] for s in answer["steps"]] == ["1", "2", "3"]
    for step, expected in zip(answer["steps"], history.step_dicts()):
        assert step["tasks"] == pytest.approx(expected["tasks"])
        assert step["M"] == pytest.approx(expected["M"])
    assert [s["M"] for s in answer["steps"]] == pytest.approx([1.0, 4 / 3, 1.0])  # the module's doctest


def test_tree_of_a_hierarchy(client):
    answer = client.post("/api/tree", json={"case": form("hdrf-volcano-1"), "mechanism": "hdrf"}).get_json()
    nodes = {n["name"]: n for n in answer["nodes"]}
    assert nodes["eng"]["entitled"] == pytest.approx(0.5) and nodes["dev"]["entitled"] == pytest.approx(0.25)
    allocation = fairalloc.solve(load_case("hdrf-volcano-1").instance, "hdrf")
    shares = dict(zip(allocation.instance.users, allocation.dominant_shares))
    assert nodes["eng"]["received"] == pytest.approx(shares["dev"] + shares["prod"])


def test_yaml_download_and_upload(client):
    edited = section_4_1(users__1__demand__cpu=1, users__0__weight=2)
    response = client.post("/api/yaml", json={"case": edited})
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="s41.yaml"'
    text = response.get_data(as_text=True)
    case = parse_case(yaml.safe_load(text))
    assert case.instance.demand.tolist() == [[1, 4], [1, 1]] and case.instance.weights.tolist() == [2, 1]
    again = client.post("/api/upload", json={"text": text, "filename": "s41.yaml"}).get_json()
    assert again["valid"] and again["case"]["users"][0]["weight"] == 2
    bad = client.post("/api/upload", json={"text": "users: [", "filename": "x.yaml"}).get_json()
    assert not bad["valid"] and bad["error"].startswith("x.yaml: not valid YAML")
    bad = client.post("/api/yaml", json={"case": section_4_1(users__1__name="")})
    assert bad.status_code == 400 and "users[1].name" in bad.get_json()["error"]


def test_page_static_files_docs_and_chart_library(client):
    page = client.get("/").get_data(as_text=True)
    assert '<script type="module" src="/static/main.js">' in page and 'src="/vendor/plotly.min.js"' in page
    for name in ("main.js", "api.js", "form.js", "editor.js", "views.js", "explorer.css"):
        assert client.get(f"/static/{name}").status_code == 200, name
    plotly = client.get("/vendor/plotly.min.js")
    assert plotly.status_code == 200 and b"plotly" in plotly.get_data()[:2000].lower()
    assert client.get("/static/../app.py").status_code == 404
    assert client.get("/docs/explorer").status_code == 200
    assert client.get("/docs/..%2Fexplorer").status_code == 404


def test_explore_cli_refuses_bad_case_and_port(capsys):
    code, out, err = run_cli(capsys, "explore", "no-such-case")
    assert code == 2 and out == "" and "no-such-case: no such file" in err
    code, out, err = run_cli(capsys, "explore", "--port", "70000")
    assert code == 2 and "--port: must be between 0 and 65535" in err


def test_a_bug_answers_500_and_the_server_goes_on(monkeypatch, capfd):
    from fairalloc.explorer import views

    def broken(body, progress=None):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setitem(views.VIEWS, "frontier", broken)
    app = create_app(start_method="fork")  # the workers inherit the broken view
    try:
        client = app.test_client()
        response = client.post("/api/frontier", json={"case": section_4_1()})
        assert response.status_code == 500
        assert response.get_json()["error"] == "internal error (ZeroDivisionError: division by zero); please report it"
        assert "ZeroDivisionError" in capfd.readouterr().err  # the traceback goes to the server's log
        assert client.post("/api/solve", json={"case": section_4_1(), "mechanisms": ["drf"]}).status_code == 200
        assert client.post("/api/frontier", json={"case": section_4_1()}).status_code == 500  # same worker, still up
    finally:
        close_app(app)


def test_answers_are_standard_json(client):
    answer = client.post("/api/solve", json={"case": form("edge-zero-capacity-resource"), "mechanisms": ["drf"]})
    text = answer.get_data(as_text=True)
    assert answer.status_code == 200 and "NaN" not in text and "Infinity" not in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert np.isfinite(list(answer.get_json()["results"][0]["tasks"].values())).all()


def test_the_readmes_explore_command_serves_the_page():
    """``fairalloc explore drf-section-4-1`` (the README's command; port 0 here: any free one)
    prints its address, serves the page and the case, and stops on Ctrl-C."""
    import signal
    import subprocess
    import sys
    import urllib.request
    from pathlib import Path

    fairalloc_cli = str(Path(sys.executable).parent / "fairalloc")
    with subprocess.Popen(
        [fairalloc_cli, "explore", "drf-section-4-1", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        # Ctrl-C as at a terminal: a test run started in the background of a shell without job
        # control hands its children SIGINT ignored, and Python then raises no KeyboardInterrupt
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    ) as server:
        try:
            line = server.stdout.readline()
            assert line.startswith("fairalloc explorer on http://127.0.0.1:") and "(Ctrl-C to stop)" in line
            url = line.split()[3]
            with urllib.request.urlopen(url, timeout=30) as page:
                assert b'<script type="module" src="/static/main.js">' in page.read()
            with urllib.request.urlopen(url + "api/start", timeout=30) as start:
                assert json.loads(start.read())["case"]["name"] == "drf-section-4-1"
        finally:
            server.send_signal(signal.SIGINT)
            try:
                code = server.wait(timeout=30)
            except subprocess.TimeoutExpired:  # leaving the with block would wait for it forever
                server.kill()
                pytest.fail("fairalloc explore did not stop within 30 s of Ctrl-C")
            assert code == 0
