"""Hostile input to the commands, the property checkers and the explorer: one line
``fairalloc: ...`` and exit code 2 (or one JSON error and a 4xx), before any work starts,
nothing written, no folder created, bounded work and memory (fairalloc.core.limits)."""

import errno
import json
import socket
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc import limits
from fairalloc.cli import main
from fairalloc.core.errors import FairallocError
from fairalloc.testing import instances


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err, message):
    assert code == 2, (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fairalloc: "), err
    assert message in lines[0], lines[0]
    assert "Traceback" not in out + err
    return lines[0]


def tree(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.fixture
def no_work(monkeypatch):
    """Any trial or simulation that starts fails the test: refusals come before the work."""
    import fairalloc.analysis.sweep
    import fairalloc.scheduling.simulator

    def started(*args, **kwargs):
        raise AssertionError("the work started before the options were checked")

    monkeypatch.setattr(fairalloc.analysis.sweep, "run_sweep", started)
    monkeypatch.setattr(fairalloc.scheduling.simulator, "simulate", started)


# -- 1. output paths ---------------------------------------------------------------------------------

OUTPUTS = [
    pytest.param(
        ["model", "drf-section-4-1", "--write", "{missing}/dir/f.lp"],
        "--write: folder {missing}/dir does not exist",
        id="model-write-missing-folder",
    ),
    pytest.param(
        ["model", "drf-section-4-1", "--write", "{tmp}"], "File 'folder' is a directory", id="model-write-folder"
    ),
    pytest.param(
        ["verify", "drf-theorem-4", "--user", "1", "--budget", "50", "--out", "{missing}/x.yaml"],
        "--out: folder {missing} does not exist",
        id="verify-out-missing-folder",
    ),
    pytest.param(
        ["falsify", "-m", "asset", "-p", "si", "--workers", "1", "--out", "{missing}/x.yaml"],
        "--out: folder {missing} does not exist",
        id="falsify-out-missing-folder",
    ),
    pytest.param(
        ["falsify", "-m", "asset", "-p", "si", "--workers", "1", "--results", "{missing}/r.jsonl"],
        "--results: folder {missing} does not exist",
        id="falsify-results-missing-folder",
    ),
    pytest.param(
        ["table2", "-m", "drf", "-p", "si", "--workers", "1", "--out-dir", "{abs_missing}/a/b"],
        "does not exist",
        id="table2-out-dir-two-levels",
    ),
    pytest.param(
        ["table2", "-m", "drf", "-p", "si", "--workers", "1", "--out-dir", "../{base}/missing/a/b"],
        "--out-dir: folder ../{base}/missing/a does not exist",
        id="table2-out-dir-leaves-the-folder",
    ),
    pytest.param(
        ["table2", "-m", "drf", "-p", "si", "--workers", "1", "--out-dir", "{file}"],
        "Directory 'file' is a file",
        id="table2-out-dir-is-a-file",
    ),
    pytest.param(
        ["simulate", "drf-7.2", "--plot", "{abs_missing}/a/sim"], "does not exist", id="simulate-plot-two-levels"
    ),
    pytest.param(
        ["tradeoff", "drf-section-4-1", "--plot", "{missing}/deep/f.png"],
        "--plot: folder {missing}/deep does not exist",
        id="tradeoff-plot-missing-folder",
    ),
    pytest.param(
        ["tradeoff", "drf-section-4-1", "--plot", "{file}/f.png"], "is not a folder", id="tradeoff-plot-under-a-file"
    ),
    pytest.param(
        ["verify", "drf-theorem-4", "--out", "/dev/null"], "exists and is not a regular file", id="verify-out-device"
    ),
]


@pytest.mark.parametrize("argv, message", OUTPUTS)
def test_output_paths_are_checked_before_any_work(argv, message, tmp_path, capsys, no_work, monkeypatch):
    monkeypatch.chdir(tmp_path)  # short paths: messages quote them whole
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    before = tree(tmp_path)
    fill = {
        "missing": "missing",
        "tmp": "folder",
        "file": "file",
        "abs_missing": tmp_path / "missing",
        "base": tmp_path.name,
    }
    code, out, err = run(capsys, *[a.format(**fill) for a in argv])
    one_line_error(code, out, err, message.format(**fill))
    assert out == "" and tree(tmp_path) == before  # nothing written, no folder created


def test_a_named_folder_is_created_but_only_its_last_level(tmp_path, monkeypatch):
    from pathlib import Path

    from fairalloc.cli import _make_folder, _output_path

    monkeypatch.chdir(tmp_path)
    assert _output_path("new", "--out-dir", folder=True) == Path("new")
    _make_folder(Path("new"))
    assert (tmp_path / "new").is_dir()
    _output_path("a/b/c", "--out-dir", folder=True)  # inside the working directory: with its parents
    _make_folder(Path("a/b/c"))
    assert (tmp_path / "a" / "b" / "c").is_dir()
    with pytest.raises(FairallocError, match="does not exist$"):
        _output_path(tmp_path / "x" / "y", "--out-dir", folder=True)  # elsewhere: the last level only
    (tmp_path / "f").write_text("")
    with pytest.raises(FairallocError, match="^--out-dir: f is a file, not a folder$"):
        _output_path("f", "--out-dir", folder=True)
    with pytest.raises(FairallocError, match="^--out: new is a folder; give a file name$"):
        _output_path("new", "--out")


def test_writes_are_atomic_and_a_failed_write_is_one_line(tmp_path, capsys, monkeypatch):
    import pathlib

    monkeypatch.chdir(tmp_path)
    target = pathlib.Path("lie.yaml")
    code, out, err = run(
        capsys, "verify", "drf-theorem-4", "-m", "ceei", "--user", "1", "--budget", "200", "--out", target
    )
    assert code == 0 and target.is_file() and tree(tmp_path) == ["lie.yaml"]

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(pathlib.Path, "write_text", full)
    other = pathlib.Path("other.yaml")
    code, out, err = run(
        capsys, "verify", "drf-theorem-4", "-m", "ceei", "--user", "1", "--budget", "200", "--out", other
    )
    one_line_error(code, "", err, f"{other}: cannot write (No space left on device)")
    assert tree(tmp_path) == ["lie.yaml"]  # no other.yaml, no other.yaml.part


def test_tradeoff_plot_writes_the_file_and_nothing_else(tmp_path, capsys):
    code, out, err = run(
        capsys,
        "tradeoff",
        "drf-section-4-1",
        "--properties",
        "none",
        "--alphas",
        "0,inf",
        "--references",
        "drf",
        "--plot",
        tmp_path / "f.svg",
    )
    assert code == 0 and tree(tmp_path) == ["f.svg"]


# -- 2. explore --host / --port ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, message",
    [
        pytest.param("256.1.1.1", "--host: '256.1.1.1' is not a valid IP address", id="octet-too-large"),
        pytest.param("bad host!", "--host: 'bad host!' is neither an IP address nor a host name", id="not-a-name"),
        pytest.param("unix:///tmp/x", "is neither an IP address nor a host name", id="unix-socket"),
        pytest.param("no-such-host.invalid", "--host: cannot resolve 'no-such-host.invalid'", id="does-not-resolve"),
    ],
)
def test_explore_refuses_a_bad_host(host, message, capsys):
    one_line_error(*run(capsys, "explore", "--host", host), message)


def test_explore_refuses_a_port_in_use(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        one_line_error(*run(capsys, "explore", "--port", port), f"--port: cannot listen on 127.0.0.1 port {port}")


# -- 3. size options ------------------------------------------------------------------------------

FALSIFY = ["falsify", "-m", "asset", "-p", "si"]
LIMITS = [
    pytest.param([*FALSIFY, "--workers", "1000"], "--workers: must be between 1 and 64", id="falsify-workers-1000"),
    pytest.param([*FALSIFY, "--workers", "0"], "--workers: must be between 1 and 64", id="falsify-workers-0"),
    pytest.param(["table2", "--workers", "-3"], "--workers: must be between 1 and 64", id="table2-workers-negative"),
    pytest.param([*FALSIFY, "--trials", "2000000"], "--trials: must be between 1 and 1000000", id="falsify-trials"),
    pytest.param(["table2", "--trials", "200000"], "trials, above the limit of 1000000", id="table2-cells-x-trials"),
    pytest.param([*FALSIFY, "--users", "2..1000"], "--users: at most 100", id="falsify-users"),
    pytest.param([*FALSIFY, "--resources", "500"], "--resources: at most 20", id="falsify-resources"),
    pytest.param([*FALSIFY, "--budget", "100001"], "--budget: at most 100000 evaluations", id="falsify-budget"),
    pytest.param(["table2", "--budget", "100001"], "--budget: at most 100000 evaluations", id="table2-budget"),
    pytest.param(["check", "drf-theorem-4", "--budget", "100001"], "--budget: at most 100000", id="check-budget"),
    pytest.param(["verify", "drf-theorem-4", "--budget", "100001"], "--budget: at most 100000", id="verify-budget"),
    pytest.param(["tradeoff", "drf-theorem-4", "--budget", "100001"], "--budget: at most 100000", id="tradeoff-budget"),
    pytest.param(["verify", "drf-theorem-4", "--seed", "-1"], "--seed: must be between 0 and", id="verify-seed"),
    pytest.param([*FALSIFY, "--seed", "-1"], "--seed: must be between 0 and", id="falsify-seed"),
    pytest.param(
        ["tradeoff", "drf-theorem-4", "--alphas", ",".join(map(str, range(101)))],
        "--alphas: at most 100",
        id="tradeoff-alphas",
    ),
    pytest.param(
        ["schedule", "drf-section-4-1", "--machines", "1000000000000x4,8"],
        "--machines: at most 100000",
        id="schedule-machines",
    ),
    pytest.param(
        ["simulate", "drf-7.2", "--nodes", "1000000000"], "--nodes: must be between 1 and 100000", id="simulate-nodes"
    ),
]


@pytest.mark.parametrize("argv, message", LIMITS)
def test_size_options_are_bounded(argv, message, capsys, no_work):
    code, out, err = run(capsys, *argv)
    one_line_error(code, out, err, message)
    assert out == ""


def test_a_claim_budget_above_the_limit_is_refused():
    from fairalloc.analysis.manipulation import verify

    with pytest.raises(FairallocError, match="--budget: at most 100000 evaluations"):
        verify("ceei", fairalloc.load_case("drf-theorem-4"), "1", budget=limits.MAX_BUDGET + 1)


# -- 4. pairwise properties and searches on big instances -----------------------------------------


def big_case(tmp_path, n=40):
    rng = np.random.default_rng(0)
    inst = fairalloc.Instance.from_arrays([1e3, 1e3], rng.integers(1, 9, (n, 2)).astype(float))
    import yaml

    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(inst.to_dict(), sort_keys=False))
    return path


@pytest.mark.parametrize(
    "argv, message",
    [
        pytest.param(
            ["check", "{case}", "-p", "ef"],
            "envy_freeness: 40 users x 40 users x 2 resources = 3.2e+03 comparisons, above the limit of 1e+03",
            id="check-ef",
        ),
        pytest.param(
            ["check", "{case}", "-p", "sp"],
            "strategy_proofness: 40 users attacked x 500 evaluations x 40 users "
            "per evaluation = 8e+05, above the limit of 1e+03",
            id="check-sp",
        ),
        pytest.param(
            ["check", "{case}", "-p", "pm"],
            "population_monotonicity: 40 solves (one per user leaving) x 40 users = 1.6e+03, above the limit of 1e+03",
            id="check-pm",
        ),
        pytest.param(
            ["verify", "{case}"],
            "verify: 40 users attacked x 2000 evaluations x 40 users per evaluation = "
            "3.2e+06, above the limit of 1e+03 (fairalloc.core.limits.MAX_SEARCH_WORK); attack one user (--user) "
            "or lower --budget",
            id="verify",
        ),
        pytest.param(
            ["verify", "{case}", "--user", "1", "--budget", "5000"],
            "verify: 1 user attacked x 5000",
            id="verify-one-user",
        ),
        pytest.param(["tradeoff", "{case}"], "above the limit", id="tradeoff-all-properties"),
    ],
)
def test_work_of_a_check_is_bounded_before_it_starts(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(limits, "MAX_PAIRWISE_CELLS", 1000)
    monkeypatch.setattr(limits, "MAX_SEARCH_WORK", 1000)
    case = big_case(tmp_path)
    one_line_error(*run(capsys, *[a.format(case=case) for a in argv]), message)


def test_tradeoff_above_the_pairwise_limit_reports_envy_as_null(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(limits, "MAX_PAIRWISE_CELLS", 1000)
    case = big_case(tmp_path)
    code, out, err = run(
        capsys, "tradeoff", case, "--properties", "none", "--alphas", "0,inf", "--references", "drf", "--format", "json"
    )
    assert code == 0 and [p["envious_users"] for p in json.loads(out)] == [None, None, None]
    code, out, err = run(capsys, "tradeoff", case, "--properties", "none", "--alphas", "inf", "--references", "")
    assert code == 0 and "alpha=inf" in out


def reference_envy_values(inst, x):
    """The full-matrix implementation the blocks replace (fairalloc 0.1.0), kept as the oracle."""
    w = inst.scalar_weights("envy_freeness")
    D, T = inst.demand, inst.bounds()
    scaled = x[:, None] * D / w[:, None]
    need = D > 0
    inv = np.where(need, 1.0 / np.where(need, D, 1.0), 0.0)
    runs = np.min(np.where(need[:, None, :], scaled[None, :, :] * inv[:, None, :], np.inf), axis=2)
    values = np.minimum(runs * w[:, None], T[:, None])
    np.fill_diagonal(values, -np.inf)
    return values


def reference_envy_freeness(inst, x, focus=None):
    from fairalloc.analysis.properties import tolerance

    values = reference_envy_values(inst, x)
    slacks = x[:, None] - values
    if focus is not None:
        slacks = np.where(np.arange(inst.n)[:, None] == focus, slacks, np.inf)
    i, k = np.unravel_index(np.argmin(slacks), slacks.shape)
    holds = slacks[i, k] >= -tolerance(x[i], values[i, k])
    return bool(holds), float(slacks[i, k]), (int(i), int(k), float(values[i, k]))


@settings(max_examples=150, deadline=None)
@given(instances(weights="scalar"), st.data())
def test_blockwise_envy_is_the_full_matrix_result(inst, data):
    from fairalloc.analysis.properties import PropertyResult, envious_users, envy_freeness, envy_values, tolerance

    if inst.n < 2:
        return
    x = np.array(data.draw(st.lists(st.floats(0, 10) | st.just(0.0), min_size=inst.n, max_size=inst.n)))
    block = data.draw(st.integers(1, 3 * inst.n))  # blocks of one row up to all rows at once
    full = reference_envy_values(inst, x)
    assert np.array_equal(envy_values(inst, x), full)
    worst = full.max(axis=1)
    expected = [u for i, u in enumerate(inst.users) if x[i] - worst[i] < -tolerance(x[i], worst[i])]
    assert envious_users(inst, x, block_cells=block) == expected
    for focus in (None, data.draw(st.integers(0, inst.n - 1))):
        holds, slack, (i, k, value) = reference_envy_freeness(inst, x, focus)
        got = envy_freeness(lambda _: x, inst, focus=focus, block_cells=block)
        assert got.holds == holds and got.margin == PropertyResult("envy_freeness", holds, slack).margin
        if not holds:
            assert (got.witness["user"], got.witness["envies"], got.witness["tasks_from_other_bundle"]) == (
                inst.users[i],
                inst.users[k],
                value,
            )


def test_envy_blocks_bound_memory():
    from fairalloc.analysis.properties import _envy_blocks

    inst = fairalloc.Instance.from_arrays([10, 10], np.ones((50, 2)))
    sizes = [block.shape for _, block in _envy_blocks(inst, np.ones(50), block_cells=120)]
    assert all(shape == (2, 50) for shape in sizes) and len(sizes) == 25


# -- 5. JSON output --------------------------------------------------------------------------------


def test_json_output_never_holds_nan(capsys, monkeypatch):
    from fairalloc.analysis.manipulation import Lie, VerifyResult
    from fairalloc.core.decimals import json_text

    with pytest.raises(FairallocError, match=r"output\[1\].x: not a finite number \(nan\)"):
        json_text([1, {"x": float("nan")}])
    lie = Lie("1", 0.0, 2.0, {"r": 1.0}, 3)  # a gain over nothing: no relative gain
    assert lie.to_dict()["relative_gain"] is None
    assert json.loads(json_text(VerifyResult("m", "c", [lie], 0.0, 0, 3).to_dict()))["evaluations_per_second"] is None
    monkeypatch.setattr(VerifyResult, "to_dict", lambda self: {"gain": float("inf")})
    code, out, err = run(capsys, "verify", "drf-theorem-4", "--user", "1", "--budget", "20", "--format", "json")
    one_line_error(code, out, err, "output.gain: not a finite number (inf)")
    assert "NaN" not in out and "Infinity" not in out


# -- 6. one line, whatever goes wrong ---------------------------------------------------------------


@pytest.mark.parametrize(
    "error, message",
    [
        pytest.param(RecursionError("maximum recursion depth exceeded"), "cases: nested too deeply", id="recursion"),
        pytest.param(MemoryError(), "cases: input too large", id="memory"),
        pytest.param(
            PermissionError(errno.EACCES, "Permission denied", "/root/x"), "/root/x: Permission denied", id="permission"
        ),
    ],
)
def test_unexpected_errors_are_one_line(error, message, capsys, monkeypatch):
    import fairalloc.cli

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(fairalloc.cli, "load_case", fail)
    one_line_error(*run(capsys, "cases", "drf-theorem-4"), message)


def test_warnings_are_one_line_and_numpy_noise_is_dropped(capsys, monkeypatch):
    import fairalloc.cli
    from fairalloc.core.errors import FairallocWarning

    real = fairalloc.cli.load_case

    def noisy(name):
        warnings.warn("plug-in 'x' is broken:\nskipped", FairallocWarning, stacklevel=2)
        np.log(np.zeros(1))  # divide by zero encountered in log
        return real(name)

    monkeypatch.setattr(fairalloc.cli, "load_case", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as outside the test suite
        code, out, err = run(capsys, "solve", "drf-section-4-1")
    assert code == 0 and err == "fairalloc: warning: plug-in 'x' is broken: skipped\n"


# -- 7. explorer requests -------------------------------------------------------------------------


def page_case(users=2, resources=2):
    names = [f"r{j}" for j in range(resources)]
    return {
        "name": "t",
        "resources": [{"name": r, "capacity": 10} for r in names],
        "users": [{"name": f"u{i}", "demand": {r: 1 for r in names}} for i in range(users)],
    }


def extreme_case(capacity: float, demand: float) -> dict:
    return {
        "name": "t",
        "resources": [{"name": "cpu", "capacity": capacity}, {"name": "mem", "capacity": 1}],
        "users": [{"name": "A", "demand": {"cpu": demand, "mem": 1}}, {"name": "B", "demand": {"cpu": 1, "mem": 0.5}}],
    }


@pytest.fixture(scope="module")
def client():
    from fairalloc.explorer import close_app, create_app

    app = create_app()
    yield app.test_client()
    close_app(app)


REQUESTS = [
    pytest.param(
        "/api/solve",
        {"case": page_case(), "pad": "x" * limits.MAX_REQUEST_BYTES},
        413,
        "request: the body may have at most 1048576 bytes",
        id="body-too-large",
    ),
    pytest.param(
        "/api/solve",
        {"case": page_case(users=limits.MAX_EXPLORER_USERS + 1)},
        400,
        "users: the explorer takes at most 50 users (got 51",
        id="too-many-users",
    ),
    pytest.param(
        "/api/properties",
        {"case": page_case(resources=limits.MAX_EXPLORER_RESOURCES + 1)},
        400,
        "resources: the explorer takes at most 16 resources",
        id="too-many-resources",
    ),
    pytest.param(
        "/api/solve",
        {"case": page_case(), "mechanisms": ["drf"] * 9},
        400,
        "mechanisms: list should have at most 8 items",
        id="too-many-mechanisms",
    ),
    pytest.param(
        "/api/solve",
        {"case": page_case(), "mechanisms": {"drf": 1}},
        400,
        "mechanisms: input should be a valid list",
        id="mechanisms-not-a-list",
    ),
    pytest.param(
        "/api/properties",
        {"case": page_case(), "budget": 10**9},
        400,
        "budget: input should be less than or equal to 5000",
        id="budget-too-large",
    ),
    pytest.param(
        "/api/properties",
        {"case": page_case(users=50), "budget": 5000},
        400,
        "strategy_proofness: 50 users attacked x 5000 evaluations x 50 users per evaluation = 1.25e+07, "
        "above the limit of 1e+06 (fairalloc.core.limits.MAX_EXPLORER_SEARCH_WORK)",
        id="search-too-long",
    ),
    pytest.param(
        "/api/probe",
        {"case": page_case(), "mechanism": ["drf"], "user": "u0"},
        400,
        "mechanism: input should be a valid string",
        id="mechanism-not-a-name",
    ),
    pytest.param(
        "/api/yaml",
        {"case": page_case(users=limits.MAX_EXPLORER_USERS + 1)},
        400,
        "users: the explorer takes at most 50 users",
        id="yaml-too-many-users",
    ),
    pytest.param(
        "/api/solve",
        "[" * 100_000 + "]" * 100_000,
        400,
        "request: the JSON body is nested deeper than 32 levels",
        id="deep-nesting",
    ),
    pytest.param("/api/solve", '{"case": NaN}', 400, "request: NaN is not JSON", id="nan-token"),
    # the fuzzing pass's ~256-byte request that kept a server thread at 100 % CPU (CEEI's line search)
    *(
        pytest.param(
            route,
            {"case": extreme_case(cap, dem), "mechanisms": ["ceei"]},
            400,
            f"resources.cpu: {text} is outside the range fairalloc computes with",
            id=f"{route[5:]}-{text}",
        )
        for route in ("/api/solve", "/api/frontier")
        for cap, dem, text in ((1.7e308, 1e308, "1.7e308"), (1e-320, 1e-320, "1e-320"))
    ),
]


@pytest.mark.parametrize("route, body, status, message", REQUESTS)
def test_explorer_refuses_what_it_cannot_bound(client, route, body, status, message):
    data = body if isinstance(body, str) else json.dumps(body)
    response = client.post(route, data=data, content_type="application/json")
    assert response.status_code == status
    answer = response.get_json()
    assert set(answer) == {"error"} and "\n" not in answer["error"] and answer["error"].startswith(message), answer
    assert client.post("/api/solve", json={"case": page_case(), "mechanisms": ["drf"]}).status_code == 200


def test_explorer_serves_bundled_cases_only(client, tmp_path, monkeypatch):
    (tmp_path / "secret.yaml").write_text("resources: {cpu: 1}\nusers:\n  A: {demand: {cpu: 1}}\n")
    monkeypatch.chdir(tmp_path)
    response = client.get("/api/case/secret.yaml")
    assert response.status_code == 404 and response.get_json()["error"].startswith("case: unknown bundled case")
    assert client.get("/api/case/drf-theorem-4").status_code == 200


def test_explorer_answers_standard_json(monkeypatch):
    from fairalloc.explorer import close_app, create_app, views

    monkeypatch.setitem(views.VIEWS, "solve", lambda body, progress=None: {"x": float("nan")})
    app = create_app(start_method="fork")  # its workers inherit the patched view
    try:
        response = app.test_client().post("/api/solve", json={"case": page_case()})
    finally:
        close_app(app)
    assert response.status_code == 400 and response.get_json() == {
        "error": "answer.x: not a finite number (nan); JSON has no NaN or infinity"
    }


def test_a_real_server_on_port_0_bounds_the_body():
    import http.client
    import threading

    from fairalloc.explorer import close_app, make_server

    server = make_server(None, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request(
            "POST",
            "/api/solve",
            body=b"{" + b" " * (limits.MAX_REQUEST_BYTES + 10) + b"}",
            headers={"Content-Type": "application/json"},
        )
        response = conn.getresponse()
        assert response.status == 413
        assert json.loads(response.read())["error"].startswith("request: the body may have at most")
    finally:
        server.shutdown()
        server.server_close()
        close_app(server.app)
