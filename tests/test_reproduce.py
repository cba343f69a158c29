"""The case library and `fairalloc reproduce`: everything reproduces, a wrong number is caught,
and malformed claims fail with one line naming the field."""

import json

import pytest
import yaml

import fairalloc
from fairalloc.analysis.reproduce import reproduce
from fairalloc.testing import run_cli as run

LIBRARY = fairalloc.bundled_cases()


def test_the_whole_library_reproduces(capsys):
    code, out, err = run(capsys, "reproduce", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["mismatches"] == 0, [r for r in data["rows"] if r["status"] == "MISMATCH"]
    assert data["checked"] >= 150 and data["errata"] >= 5
    assert {r["case"] for r in data["rows"]} == set(LIBRARY)


@pytest.mark.parametrize("name", LIBRARY)
def test_every_case_is_sourced_and_every_variant_is_checked(name):
    case = fairalloc.load_case(name)
    assert case.source and case.description
    used = {e.variant for e in case.expect} | {c.variant for c in case.claims}
    assert set(case.variants) <= used, f"variants never solved: {set(case.variants) - used}"
    assert case.expect or case.claims


def test_a_mutated_expectation_fails(tmp_path, capsys):
    data = yaml.safe_load((fairalloc.load_case("drf-theorem-4").path).read_text())
    data["expect"][0]["tasks"]["1"] = "100/30"  # the paper says 100/31
    path = tmp_path / "mutated.yaml"
    path.write_text(yaml.safe_dump(data))
    code, out, _ = run(capsys, "reproduce", str(path))
    assert code == 1
    bad = [line for line in out.splitlines() if "MISMATCH" in line]
    assert len(bad) == 1 and "10/3" in bad[0] and "3.225806452" in bad[0]  # 100/30, shown reduced


def test_a_wrong_claim_fails(tmp_path):
    data = yaml.safe_load((fairalloc.load_case("drf-theorem-1").path).read_text())
    data["claims"] = [
        "asset satisfies sharing_incentive",
        "drf violates sharing_incentive",
        "asset violates sharing_incentive for user 1",
    ]
    path = tmp_path / "wrong.yaml"
    path.write_text(yaml.safe_dump(data))
    rows = [r for r in reproduce([str(path)]) if r.kind == "claim"]
    assert [r.status for r in rows] == ["MISMATCH", "MISMATCH", "MISMATCH"]


BASE = {
    "resources": {"cpu": 9, "mem": 18},
    "users": {"A": {"demand": {"cpu": 1, "mem": 4}}, "B": {"demand": {"cpu": 3, "mem": 1}}},
}


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            {"variants": [{"name": "x", "shrink_user": "A"}]},
            "variants[0].shrink_user: unknown field 'shrink_user' (fields: name, description, misreport, remove_user, "
            "add_user, capacity, usage)",
        ),
        ({"variants": [{"name": "x"}]}, "variants[0]: a variant makes exactly one change"),
        (
            {"variants": [{"name": "x", "misreport": {"user": "Z", "demand": {"cpu": 1}}}]},
            "variants[0].misreport.user: unknown user 'Z' (users: A, B)",
        ),
        ({"claims": ["drf satisfies fairness"]}, "claims[0].property: unknown property 'fairness'"),
        ({"claims": ["drf is fair"]}, "claims[0]: cannot read claim 'drf is fair'"),
        ({"claims": ["drf satisfies si for user Z"]}, "claims[0].user: unknown user 'Z' (users: A, B)"),
        ({"claims": ["nope satisfies si"]}, "claims[0].mechanism: unknown mechanism 'nope'"),
        ({"expect": [{"mechanism": "drf", "tasks": {"Z": 3}}]}, "expect[0].tasks.Z: unknown user 'Z' (users: A, B)"),
        (
            {"expect": [{"mechanism": "drf", "tasks": {"A": "3/0"}}]},
            "expect[0].tasks.A: expected a number or a fraction",
        ),
        (
            {"expect": [{"mechanism": "drf", "tasks": {"A": "__import__('os')"}}]},
            "expect[0].tasks.A: expected a number or a fraction",
        ),
        (
            {"expect": [{"mechanism": "drf", "variant": "v", "tasks": {"A": 3}}]},
            "expect[0].variant: unknown variant 'v'",
        ),
        ({"expect": [{"mechanism": "drf", "taks": {"A": 3}}]}, "expect[0].taks: unknown field 'taks'"),
        ({"errata": [{"where": "x", "says": "y"}]}, "errata[0].value: required field is missing"),
    ],
)
def test_malformed_cases_fail_with_one_line(tmp_path, capsys, extra, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**BASE, **extra}))
    code, out, err = run(capsys, "reproduce", str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"fairalloc: {message}"), err
