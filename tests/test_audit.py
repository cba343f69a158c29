"""``fairalloc audit``: the properties agree with ``check``, a lie found replays and is re-valued
independently, JSON keys, one-line errors and no file written on error."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fairalloc.analysis.audit import audit
from fairalloc.analysis.properties import check
from fairalloc.analysis.valuation import leontief
from fairalloc.cli import main
from fairalloc.core import registry
from fairalloc.io.cases import load_case


def test_properties_agree_with_check_on_a_queue_case():
    case = load_case("report-volcano-4165")
    report = audit(case, budget=50)
    assert report.policy == "volcano-proportion"
    expected = check("volcano-proportion", case.instance, budget=50)
    assert {n: r.holds for n, r in report.properties.items()} == {n: r.holds for n, r in expected.items()}
    assert {"guarantee_honoured", "no_overcommit", "work_conserving"} <= set(report.properties)
    assert set(report.lies) == {"tenant-a", "tenant-b", "tenant-c"}  # the idle default queue is not searched


def test_a_lie_found_is_replayed_and_revalued_independently(tmp_path):
    case = load_case("drf-theorem-4")
    report = audit(case, "ceei", budget=200)
    assert report.properties["strategy_proofness"].holds is False
    lie = report.lies["1"]
    assert lie.profitable and "raises its entitlement of" in lie.why and "by shrinking its request of r1" in lie.why
    # the bundle the lie buys, valued with the true demand, beats the truthful bundle
    inst = case.instance
    report_row = np.array([lie.lie.shrunk.reported_demand.get(r, 0.0) for r in inst.resources])
    lied = registry.get("ceei").allocate(inst.with_demand(0, report_row)).bundles[0]
    truthful = registry.get("ceei").allocate(inst).bundles[0]
    assert leontief(inst, 0, lied) > leontief(inst, 0, truthful) * (1 + 1e-6)
    assert lie.manipulated == pytest.approx(dict(zip(inst.resources, lied)))
    out = tmp_path / "lie.yaml"
    assert main(["audit", "drf-theorem-4", "-m", "ceei", "--budget", "200", "--out", str(out)]) == 0
    replay = load_case(str(out))
    assert "lie" in replay.variants
    assert main(["verify", str(out), "-m", "ceei", "--user", "1", "--budget", "20"]) == 0


def test_json_keys(capsys):
    assert main(["audit", "report-volcano-1619", "--budget", "30", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"policy", "case", "properties", "manipulation", "out"}
    assert set(doc["manipulation"]["test"]) == {
        "profitable",
        "request",
        "report",
        "truthful",
        "manipulated",
        "gain",
        "evaluations",
        "why",
    }
    assert doc["properties"]["no_overcommit"]["holds"] is True


def test_errors_are_one_line_and_write_nothing(tmp_path, capsys):
    out = tmp_path / "lie.yaml"
    assert main(["audit", "report-volcano-1619", "-m", "volcano-proprtion", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'volcano-proportion'" in err and not out.exists()
    assert main(["audit", "report-volcano-1619", "--budget", "0"]) == 2
    assert "--budget" in capsys.readouterr().err


def test_no_lie_writes_nothing(tmp_path, capsys):
    out = tmp_path / "lie.yaml"
    assert main(["audit", "report-volcano-4165", "--budget", "30", "--out", str(out)]) == 0
    assert "no profitable lie found: nothing written" in capsys.readouterr().out and not out.exists()


def test_help_teaches_with_an_example(capsys):
    assert main(["audit", "--help"]) == 0
    assert "Example:" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "policy"), [("drf-theorem-4", "ceei"), ("report-volcano-4165", "volcano-proportion")])
def test_each_queue_is_searched_once_and_every_step_is_shown(name, policy):
    """Strategy-proofness is read off the queues' own searches (the same seed and budget as the
    check's search, which the audit used to run a second time): the same answer as ``check``'s,
    with the same evaluations; ``progress`` sees each property, then each active queue, with the
    number of steps."""
    case = load_case(name)
    seen = []
    report = audit(case, policy, budget=60, progress=lambda step, steps: seen.append((step, steps)))
    expected = check(policy, case.instance, budget=60)
    assert list(report.properties) == [n for n in expected if n != "strategy_proofness" or expected[n].applicable]
    for n, r in expected.items():
        if n in report.properties:
            got = report.properties[n]
            assert (got.holds, got.margin, got.evaluations, got.note) == (r.holds, r.margin, r.evaluations, r.note), n
    searched = [q for q in case.instance.users if q in report.lies]
    assert [s for s, _ in seen] == [*(n for n in expected if n != "strategy_proofness"), *searched]
    assert {steps for _, steps in seen} == {len(seen)}
    assert sum(lie.lie.evaluations for lie in report.lies.values()) == expected["strategy_proofness"].evaluations
