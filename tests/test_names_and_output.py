"""Names help (every unknown name suggests the closest known ones) and output is clean (shortest
decimals, margins within tolerance as 0, one spelling of every JSON key, counts that agree with
what ran, `mechanisms` telling what `solve` does, written cases that `reproduce` replays)."""

import json
import re

import numpy as np
import pytest
import yaml

import fairalloc
from fairalloc.analysis.manipulation import Lie, witness_case
from fairalloc.analysis.properties import PropertyResult
from fairalloc.analysis.reproduce import reproduce
from fairalloc.core.decimals import plain, shortest
from fairalloc.testing import run_cli as run

SECTION_4_1 = "drf-section-4-1"


# -- names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, suggestion",
    [
        (["solve", SECTION_4_1, "-m", "dfr"], "unknown mechanism 'dfr'; did you mean 'drf'?"),
        (["solve", SECTION_4_1, "-m", "alpha-fiar:2"], "did you mean 'alpha-fair'"),
        (["solve", "drf-sectoin-4-1"], "did you mean 'drf-section-4-1'?"),
        (["cases", "drf-thoerem-4"], "did you mean 'drf-theorem-4'"),
        (["check", SECTION_4_1, "-p", "envy_freenes"], None),  # a prefix: accepted
        (["check", SECTION_4_1, "-p", "shring_incentive"], "did you mean 'sharing_incentive'?"),
        (["check", SECTION_4_1, "--variant", "lei"], "unknown variant 'lei'"),
        (["check", "drf-theorem-4", "--variant", "lei"], "did you mean 'lie'?"),
        (["verify", SECTION_4_1, "--user", "a"], "unknown user 'a'; did you mean 'A'?"),
        (["solve", SECTION_4_1, "--method", "fats"], "did you mean 'fast'?"),
        (["solve", SECTION_4_1, "--format", "jsno"], "did you mean 'json'?"),
        (["simulate", "drf-7.2", "--scheduler", "dfr"], "did you mean 'drf'"),
        (["sovle", SECTION_4_1], "Did you mean 'solve'?"),
        (["solve", SECTION_4_1, "--formt", "json"], "Did you mean '--format'?"),
    ],
)
def test_every_unknown_name_suggests_the_closest(capsys, argv, suggestion):
    code, out, err = run(capsys, *argv)
    if suggestion is None:
        assert code == 0, err
        return
    assert code == 2 and suggestion in err and len(err.strip().splitlines()) == 1, err


def test_unknown_resource_and_user_in_a_case_file_suggest(tmp_path, capsys):
    path = tmp_path / "typo.yaml"
    path.write_text("resources: {cpu: 9, memory: 18}\nusers:\n  A: {demand: {cpu: 1, mem: 4}}\n")
    code, _, err = run(capsys, "solve", str(path))
    assert code == 2 and "users.A.demand.mem: unknown resource 'mem'; did you mean 'memory'?" in err
    inst = fairalloc.load_case(SECTION_4_1).instance
    with pytest.raises(fairalloc.UnknownNameError, match="unknown resource 'cpus'; did you mean 'cpu'"):
        inst.resource_index("cpus")


def test_a_name_with_no_close_match_lists_the_known_ones():
    with pytest.raises(fairalloc.UnknownNameError, match=r"unknown mechanism 'lottery' \(mechanisms: drf, asset"):
        fairalloc.get("lottery")


def test_cases_name_shows_one_case(capsys):
    code, out, _ = run(capsys, "cases", "drf-theorem-4")
    assert code == 0
    for part in (
        "source: Ghodsi",
        "user",
        "r1 per task",
        "capacity: r1 100, r2 100",
        "variants:",
        "lie: user 1 reports <16, 8>",
        "expectations:",
        "100/31",
        "claims:",
        "ceei violates strategy_proofness for user 1",
        "errata:",
        "1500/31 is about 48.8",
    ):
        assert part in out, part
    code, out, _ = run(capsys, "cases", "drf-theorem-4", "--format", "json")
    assert json.loads(out)["users"]["1"]["demand"] == {"r1": 16, "r2": 1}


def test_python_dash_m_runs_the_cli():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "fairalloc", "solve", SECTION_4_1, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and json.loads(done.stdout)[0]["users"]["A"]["tasks"] == 3


# -- numbers ----------------------------------------------------------------------------------------


def test_numbers_are_written_without_float_noise():
    assert shortest(0.1 * 6) == 0.6 and repr(shortest(0.1 * 6)) == "0.6"
    assert shortest(0.3999999999999999) == 0.4 and shortest(3.0) == 3 and isinstance(shortest(3.0), int)
    assert shortest(100 / 31) == 100 / 31  # no noise: the value itself
    assert plain({"x": np.float64(0.1) + np.float64(0.2), "n": np.int64(3), "a": np.array([1.5])}) == {
        "x": 0.3,
        "n": 3,
        "a": [1.5],
    }


def test_shortest_stays_within_two_ulps():
    rng = np.random.default_rng(7)
    values = rng.uniform(0, 1, 20_000) * 10.0 ** rng.integers(-12, 12, 20_000)
    assert all(abs(shortest(v) - v) <= 2 * np.spacing(v) for v in values)


def test_verify_writes_the_lie_without_noise_and_as_a_claim(tmp_path):
    inst = fairalloc.Instance.from_arrays(
        [1, 1, 1], [[0.5, 0.2, 0.1], [0.2, 0.5, 0.1]], resources=["cpu", "mem", "gpu"]
    )
    lie = Lie("1", 1.0, 1.5, {"cpu": 0.5, "mem": 0.2, "gpu": 0.1 * 6}, 10)
    case = witness_case(inst, "ceei", lie)
    text = yaml.safe_dump(plain(case), sort_keys=False)
    assert "gpu: 0.6\n" in text and "0.6000000000000001" not in text
    assert case["claims"] == ["ceei violates strategy_proofness for user 1"] and case["source"].startswith("found by")


def test_verify_and_falsify_cases_are_replayed_by_reproduce(tmp_path, capsys):
    lie, pm = tmp_path / "lie.yaml", tmp_path / "pm.yaml"
    assert (
        run(capsys, "verify", "drf-theorem-4", "-m", "ceei", "--user", "1", "--budget", "300", "--out", str(lie))[0]
        == 0
    )
    assert (
        run(
            capsys,
            "falsify",
            "-m",
            "asset",
            "-p",
            "si",
            "--trials",
            "50",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(pm),
        )[0]
        == 0
    )
    for path in (lie, pm):
        rows = reproduce([str(path)])
        assert [r.kind for r in rows] == ["claim"] and rows[0].status == "ok", rows
        assert "violates" in rows[0].claim


def test_margins_within_tolerance_are_zero(capsys):
    assert PropertyResult("x", True, -1.11e-16).margin == 0.0
    assert PropertyResult("x", True, 3e-13).margin == 0.0
    assert PropertyResult("x", False, -0.5).margin == -0.5
    code, out, _ = run(capsys, "check", "dmfa-srq-worked-example", "-m", "dmfa-srq", "-p", "si")
    assert code == 0 and "e-16" not in out and "e-17" not in out


def test_falsify_counts_the_trials_it_checked(capsys):
    code, out, _ = run(
        capsys,
        "falsify",
        "-m",
        "ceei",
        "-p",
        "pm",
        "--trials",
        "200",
        "--workers",
        "2",
        "--no-progress",
        "--format",
        "json",
    )
    data = json.loads(out)
    assert code == 0 and data["found"]
    assert data["trials"] >= data["first_trial"] + 1  # every trial up to the violation was checked
    code, out, _ = run(
        capsys,
        "falsify",
        "-m",
        "ceei",
        "-p",
        "pm",
        "--trials",
        "200",
        "--workers",
        "1",
        "--no-progress",
        "--format",
        "json",
    )
    assert json.loads(out)["first_trial"] == data["first_trial"]  # the lowest one, whatever the workers


# -- JSON -------------------------------------------------------------------------------------------


def _keys(data, names=frozenset()):
    if isinstance(data, dict):
        for k, v in data.items():
            if k not in names:
                yield k
            yield from _keys(v, names)
    elif isinstance(data, list):
        for v in data:
            yield from _keys(v, names)


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", SECTION_4_1, "-m", "drf,ceei"],
        ["solve", "dmfa-srq-worked-example", "-m", "dmfa-srq"],
        ["compare", SECTION_4_1],
        ["check", SECTION_4_1, "-m", "drf", "--budget", "30"],
        ["mechanisms"],
        ["cases"],
        ["reproduce", "drf-theorem-1"],
        ["schedule", SECTION_4_1],
        ["simulate", "drf-7.1", "--no-progress"],
        ["tradeoff", SECTION_4_1, "--properties", "si", "--no-progress"],
        ["verify", "drf-theorem-4", "-m", "ceei", "--user", "1", "--budget", "100"],
    ],
)
def test_json_keys_have_one_spelling(capsys, argv):
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    case = fairalloc.load_case(SECTION_4_1 if "drf-7.1" not in argv else "drf-section-4-1")
    names = {*case.instance.users, *case.instance.resources, "1", "2", "3", "r1", "r2", "large", "small", ""}
    odd = {k for k in _keys(data) if not re.fullmatch(r"[a-z0-9_]+", str(k)) and str(k) not in names}
    odd = {k for k in odd if not re.fullmatch(r"[A-Za-z0-9_.:-]+", str(k)) or "utilis" in str(k)}
    assert not odd, odd  # no spaces, no British spelling, nothing ad hoc
    assert not any("utilis" in str(k) for k in _keys(data))


def test_mechanisms_reports_what_solve_does(capsys):
    code, out, _ = run(capsys, "mechanisms", "--format", "json")
    inst = fairalloc.load_case(SECTION_4_1).instance
    members = {"alpha-fair:ALPHA": "alpha-fair:2", "alpha-tasks:ALPHA": "alpha-tasks:2", "fds:BETA:LAMBDA": "fds:0.5:3"}
    members |= {"slots:K[:oc]": "slots:3", "capacity:K[:oc]": "capacity:3:oc"}
    dynamic = fairalloc.load_case("dmfa-srq-worked-example").instance
    for row in json.loads(out):
        name = members.get(row["name"], row["name"])
        on = dynamic if row["kind"] == "dynamic" else inst
        if row["kind"] == "online":  # schedulers of tasks offered over time: simulate runs them, solve refuses
            assert (row["auto"], row["fast_path"], row["program"]) == ("simulate", False, False), row
            with pytest.raises(fairalloc.FairallocError, match=f"fairalloc simulate WORKLOAD --scheduler {name}"):
                fairalloc.solve(on, name)
            continue
        alloc = fairalloc.solve(on, name)
        assert (
            alloc.method
            == ("fast" if row["fast_path"] else "program")
            == ("fast" if row["auto"] == "fast path" else "program")
        ), row
        for method, has in (("fast", row["fast_path"]), ("program", row["program"])):
            if has:
                assert fairalloc.solve(on, name, method=method).method == method
            else:
                with pytest.raises(fairalloc.FairallocError):
                    fairalloc.solve(on, name, method=method)
