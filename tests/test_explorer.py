"""The explorer's JSON API through Flask's test client (the browser test drives the page)."""

import pytest
import yaml

import fairalloc
from fairalloc.analysis.manipulation import probe
from fairalloc.explorer import case_from_page, create_app, page_form
from fairalloc.io.cases import parse_case
from fairalloc.testing import run_cli


@pytest.fixture(scope="module")
def client():
    return create_app("drf-section-4-1").test_client()


def section_4_1(**changes):
    case = {
        "name": "s41",
        "resources": [{"name": "cpu", "capacity": 9}, {"name": "mem", "capacity": 18}],
        "users": [
            {"name": "A", "weight": 1, "demand": {"cpu": 1, "mem": 4}},
            {"name": "B", "weight": 1, "demand": {"cpu": 3, "mem": 1}},
        ],
    }
    for path, value in changes.items():
        *head, last = path.split("__")
        node = case
        for key in head:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    return case


def test_start_case_and_cases(client):
    start = client.get("/api/start").get_json()
    assert start["name"] == "drf-section-4-1" and [u["name"] for u in start["users"]] == ["A", "B"]
    assert (
        case_from_page(start).instance.to_dict()["users"]
        == fairalloc.load_case("drf-section-4-1").instance.to_dict()["users"]
    )
    names = [c["name"] for c in client.get("/api/cases").get_json()]
    assert "drf-theorem-4" in names and len(names) == len(fairalloc.io.cases.bundled_cases())


def test_solve_gives_the_papers_numbers_and_figure_4(client):
    answer = client.post(
        "/api/solve", json={"case": section_4_1(), "mechanisms": ["drf", "asset", "ceei"], "alpha": 2}
    ).get_json()
    tasks = {r["mechanism"]: r["tasks"] for r in answer["results"]}
    assert tasks["drf"] == {"A": 3.0, "B": 2.0}
    assert tasks["asset"] == pytest.approx({"A": 63 / 25, "B": 54 / 25})
    assert tasks["ceei"] == pytest.approx({"A": 45 / 11, "B": 18 / 11})
    assert tasks["alpha-fair:2"] == pytest.approx({"A": 3.72792, "B": 1.75736}, abs=1e-5)
    assert answer["results"][0]["exact"] == {"A": "3", "B": "2"}
    assert answer["chart"].startswith("<svg") and answer["chart"].count('<g id="patch_') >= 4 * 2 * 2
    # a changed demand: B = <1, 1> gives DRF 3 and 6 (2x/9 = y/9, both resources bind)
    answer = client.post(
        "/api/solve", json={"case": section_4_1(users__1__demand__cpu=1), "mechanisms": ["drf"]}
    ).get_json()
    assert answer["results"][0]["tasks"] == {"A": 3.0, "B": 6.0}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"users__1__demand__cpu": -3}, "users.B.demand.cpu: input should be greater than or equal to 0 (got -3)"),
        ({"users__1__name": ""}, "users[1].name: must not be empty"),
        ({"users__1__name": "  "}, "users[1].name: must not be empty"),
        ({"users__1__name": "A"}, "users[1].name: duplicate name 'A' (also users[0])"),
        ({"resources__0__name": ""}, "resources[0].name: must not be empty"),
        ({"resources__0__capacity": "lots"}, "resources.cpu: input should be a valid number (got 'lots')"),
        ({"resources__0__capacity": None}, "resources.cpu: input should be a valid number (got None)"),
        ({"users__0__weight": 0}, "users.A.weight: must be a finite number > 0 (got 0)"),
        ({"users__0__demand__cpu": "NaN"}, "users.A.demand.cpu: input should be a valid number (got 'NaN')"),
        ({"users__0__demand": {"cpu": 0, "mem": 0}}, "users.A.demand: all zero"),
        ({"users__0__demand": {"gpu": 1}}, "users.A.demand.gpu: unknown resource 'gpu'"),
        ({"users": []}, "users: give at least one user"),
    ],
)
def test_bad_input_is_one_message_and_the_server_goes_on(client, change, message):
    response = client.post("/api/solve", json={"case": section_4_1(**change), "mechanisms": ["drf"]})
    assert response.status_code == 400 and response.get_json()["error"].startswith(message)
    assert client.post("/api/solve", json={"case": section_4_1(), "mechanisms": ["drf"]}).status_code == 200


@pytest.mark.parametrize(
    "body, status, message",
    [
        ("not json", 400, "request: the body must be a JSON object"),
        ([1, 2], 400, "request: the body must be a JSON object"),
        ({"case": section_4_1(), "mechanisms": ["nope"]}, 400, "mechanism: unknown mechanism 'nope'"),
        ({"case": section_4_1(), "alpha": -1}, 400, "alpha must be >= 0"),
        ({"case": section_4_1(), "on": "votes", "alpha": 1}, 400, "on: unknown utility 'votes'"),
    ],
)
def test_bad_requests(client, body, status, message):
    response = client.post("/api/solve", data=body) if isinstance(body, str) else client.post("/api/solve", json=body)
    assert response.status_code == status and message in response.get_json()["error"]


def test_properties_badges_with_witnesses(client):
    theorem_1 = page_form(fairalloc.load_case("drf-theorem-1"))
    report = client.post("/api/properties", json={"case": theorem_1, "mechanism": "asset", "budget": 50}).get_json()
    by_name = {p["name"]: p for p in report["properties"]}
    assert not by_name["sharing_incentive"]["holds"]
    assert by_name["sharing_incentive"]["witness"]["user"] == "2" and "12" in by_name["sharing_incentive"]["text"]
    assert by_name["envy_freeness"]["holds"]
    response = client.post("/api/properties", json={"case": theorem_1, "mechanism": "asset", "budget": 0})
    assert (
        response.status_code == 400
        and "budget: must be a whole number between 1 and 5000" in response.get_json()["error"]
    )


def test_frontier_marks_the_current_point(client):
    answer = client.post("/api/frontier", json={"case": section_4_1(), "alpha": 5}).get_json()
    assert answer["current"]["label"] == "alpha=5"
    assert answer["current"]["min_dominant_share"] == pytest.approx(1.90555 / 3, abs=1e-5)
    assert [p["label"] for p in answer["points"]][-4:] == ["drf", "ceei", "asset", "utilitarian"]
    assert answer["svg"].startswith("<svg") and "current (alpha=5)" in answer["svg"]


def test_probe_measures_true_gain(client):
    theorem_4 = fairalloc.load_case("drf-theorem-4")
    inst = theorem_4.instance
    user = inst.users[0]
    lie = {r: float(v) for r, v in zip(inst.resources, inst.demand[0])}
    lie[inst.resources[-1]] *= 2
    answer = client.post(
        "/api/probe",
        json={
            "case": page_form(theorem_4),
            "mechanism": "ceei",
            "user": user,
            "report": lie,
            "search": True,
            "budget": 100,
        },
    ).get_json()
    expected = probe("ceei", inst, user, lie)
    assert answer["truthful_tasks"] == pytest.approx(expected.truthful_tasks)
    assert answer["manipulated_tasks"] == pytest.approx(expected.manipulated_tasks)
    assert answer["best"]["gain"] > 0.5  # Theorem 4: CEEI is manipulable
    bad = client.post(
        "/api/probe",
        json={"case": page_form(theorem_4), "mechanism": "ceei", "user": user, "report": {inst.resources[0]: -1}},
    )
    assert bad.status_code == 400 and bad.get_json()["error"].startswith(f"probe.report.{inst.resources[0]}: input")
    bad = client.post("/api/probe", json={"case": page_form(theorem_4), "mechanism": "ceei", "user": "nobody"})
    assert bad.status_code == 400 and "probe.user: unknown user 'nobody'" in bad.get_json()["error"]


def test_playback_of_a_dynamic_mechanism(client):
    case = page_form(fairalloc.load_case("ddrf-kash-example"))
    answer = client.post("/api/playback", json={"case": case, "mechanism": "ddrf"}).get_json()
    inst = case_from_page(case).instance
    history = fairalloc.solve(inst, "ddrf").history
    assert len(answer["steps"]) == inst.n
    for step, expected in zip(answer["steps"], history.step_dicts()):
        assert step["tasks"] == pytest.approx(expected["tasks"])
    static = client.post("/api/playback", json={"case": case, "mechanism": "drf"})
    assert static.status_code == 400 and "playback is for dynamic mechanisms" in static.get_json()["error"]


def test_yaml_download_round_trips(client):
    edited = section_4_1(users__1__demand__cpu=1, users__0__weight=2)
    response = client.post("/api/yaml", json={"case": edited})
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="s41.yaml"'
    case = parse_case(yaml.safe_load(response.get_data(as_text=True)))
    assert case.instance.demand.tolist() == [[1, 4], [1, 1]] and case.instance.weights.tolist() == [2, 1]
    bad = client.post("/api/yaml", json={"case": section_4_1(users__1__name="")})
    assert bad.status_code == 400 and "users[1].name" in bad.get_json()["error"]


def test_page_and_static_files(client):
    page = client.get("/").get_data(as_text=True)
    assert '<script src="/static/explorer.js">' in page and 'id="alpha-slider"' in page
    assert client.get("/static/explorer.js").status_code == 200
    assert client.get("/static/../cli.py").status_code == 404


def test_explore_cli_refuses_bad_case_and_port(capsys):
    code, out, err = run_cli(capsys, "explore", "no-such-case")
    assert code == 2 and out == "" and "no-such-case: no such file" in err
    code, out, err = run_cli(capsys, "explore", "--port", "70000")
    assert code == 2 and "--port: must be between 0 and 65535" in err


def test_a_bug_answers_500_and_the_server_goes_on(monkeypatch, capsys):
    import fairalloc.explorer as explorer

    def broken(body):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(explorer, "frontier_view", broken)
    app = explorer.create_app().test_client()
    response = app.post("/api/frontier", json={"case": section_4_1()})
    assert response.status_code == 500
    assert response.get_json()["error"] == "internal error (ZeroDivisionError: division by zero); please report it"
    assert "ZeroDivisionError" in capsys.readouterr().err  # the traceback goes to the server's log
    assert app.post("/api/solve", json={"case": section_4_1(), "mechanisms": ["drf"]}).status_code == 200
