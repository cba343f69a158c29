"""The queue vocabulary of a case (issue 15): loading, percentages, inactive queues, general
bundles, their certificate, and the YAML round trip."""

from __future__ import annotations

import numpy as np
import pytest

import fairalloc
from fairalloc.core.allocation import Allocation
from fairalloc.core.errors import CaseError, SolverError
from fairalloc.core.queues import queues_of, request
from fairalloc.io.cases import parse_case

CASE = {
    "resources": {"cpu": 100, "memory": 400},
    "groups": {
        "org": {
            "parent": None,
            "weight": 1,
            "guarantee": {"cpu": 50},
            "limit": {"cpu": "90%"},
            "borrowing_limit": {"cpu": 20},
            "lending_limit": {"cpu": 10},
            "priority": 0,
        }
    },
    "users": {
        "team-a": {
            "group": "org",
            "request": {"cpu": 30, "memory": 120},
            "weight": 2,
            "priority": 1,
            "guarantee": {"cpu": 25},
            "limit": {"cpu": "75%"},
            "borrowing_limit": {"cpu": 10},
            "lending_limit": {"cpu": 5},
            "usage": {"cpu": 10, "memory": 40},
        },
        "team-b": {"group": "org"},
        "solo": {"request": {"cpu": 200}},
    },
}


@pytest.fixture(scope="module")
def case():
    return parse_case(CASE)


def test_the_issue_vocabulary_loads_with_percentages_resolved(case):
    q = case.instance.queues
    assert q.limit["org"].tolist() == [90.0, np.inf]
    assert q.limit["team-a"].tolist() == [75.0, np.inf]
    assert q.guarantee["team-a"][0] == 25 and np.isnan(q.guarantee["team-a"][1])
    assert q.borrowing_limit["team-a"].tolist() == [10.0, np.inf]
    assert q.lending_limit["org"].tolist() == [10.0, np.inf]
    assert q.usage["team-a"].tolist() == [10.0, 40.0]
    assert q.priority["team-a"] == 1 and q.weight["team-a"] == 2
    assert q.children(None) == ["org", "solo"] and q.children("org") == ["team-a", "team-b"]
    assert q.path("team-a") == ["org"] and q.leaves("org") == ["team-a", "team-b"]


def test_request_is_the_leontief_reading_and_no_request_is_inactive(case):
    inst = case.instance
    assert inst.demand.tolist() == [[30, 120], [0, 0], [200, 0]]
    assert inst.max_tasks.tolist() == [1, 0, 1]
    assert request(inst).tolist() == [[30, 120], [0, 0], [200, 0]]


@pytest.mark.parametrize("mechanism", ["drf", "asset", "ceei", "utilitarian", "alpha-fair:2", "hdrf-naive"])
def test_every_paper_mechanism_runs_on_a_queue_case_and_gives_inactive_queues_nothing(case, mechanism):
    alloc = fairalloc.solve(case.instance, mechanism)
    assert alloc.tasks[1] == 0 and not alloc.bundles[1].any()
    assert alloc.tasks[0] == pytest.approx(1.0)  # team-a's request fits beside solo's share
    assert alloc.used[0] <= 100 * (1 + 1e-9)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"users": {"x": {"request": {"cpu": 1}, "demand": {"cpu": 1}}}}, "users.x.demand: a queue case gives"),
        ({"users": {"x": {"request": {"cpu": 1}, "max_tasks": 3}}}, "users.x.max_tasks: a queue case gives"),
        ({"users": {"x": {"request": {"cpu": 1}, "limit": {"cpu": "lots"}}}}, "users.x.limit.cpu: must be a number"),
        ({"users": {"x": {"request": {"cpu": 1}, "limit": {"gpu": 3}}}}, "users.x.limit.gpu: unknown resource"),
        ({"users": {"x": {"request": {"cpu": 1}, "guarantee": {"cpu": -1}}}}, "users.x.guarantee.cpu"),
        ({"users": {"x": {"demand": {"cpu": 1}}, "y": {}}}, "users.y.demand: required field is missing"),
        ({"groups": {"g": {"priorty": 1}}, "users": {"x": {"request": {"cpu": 1}}}}, "groups.g.priorty: unknown"),
    ],
)
def test_bad_queue_fields_are_one_line_naming_the_field(change, message):
    data = {"resources": {"cpu": 10}, **change}
    with pytest.raises(CaseError) as err:
        parse_case(data)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_general_bundles_are_valued_with_the_leontief_utility_of_the_request(case):
    inst = case.instance
    A = np.array([[15.0, 120.0], [0.0, 0.0], [50.0, 0.0]])
    alloc = Allocation.from_bundles(inst, A, "by-hand", "fast")
    assert alloc.tasks.tolist() == [0.5, 0.0, 0.25]  # min(15/30, 120/120); 50/200
    assert alloc.bundles is alloc.amounts and alloc.used.tolist() == [65.0, 120.0]
    assert alloc.dominant_shares.tolist() == pytest.approx([0.3, 0.0, 0.5])
    assert alloc.to_dict()["users"]["team-a"]["allocation"] == {"cpu": 15.0, "memory": 120.0}


def test_the_certificate_refuses_general_bundles_beyond_capacity(case):
    from fairalloc.core.certificate import certify

    over = np.array([[60.0, 0.0], [0.0, 0.0], [50.0, 0.0]])
    with pytest.raises(SolverError, match="resource cpu used 110 of capacity 100"):
        certify(Allocation.from_bundles(case.instance, over, "by-hand", "fast"))
    # a policy's entitlement may promise beyond capacity: no_overcommit says so, not the certificate
    promised = Allocation.from_bundles(case.instance, over, "by-hand", "fast", entitlement=True)
    assert certify(promised) is promised
    negative = np.array([[-1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    with pytest.raises(SolverError, match="below 0"):
        certify(Allocation.from_bundles(case.instance, negative, "by-hand", "fast"))


def test_a_queue_case_round_trips_through_its_yaml_mapping(case):
    again = parse_case(case.instance.to_dict()).instance
    assert np.array_equal(again.demand, case.instance.demand)
    assert np.array_equal(again.max_tasks, case.instance.max_tasks)
    q, r = case.instance.queues, again.queues
    for field in ("guarantee", "limit", "borrowing_limit", "lending_limit", "usage"):
        for node in q.parent:
            assert np.array_equal(getattr(q, field)[node], getattr(r, field)[node], equal_nan=True), (field, node)
    assert q.parent == r.parent and q.weight == r.weight and q.priority == r.priority


def test_derived_instances_keep_the_queue_configuration_in_step(case):
    inst = case.instance
    assert list(inst.without_user("solo").queues.leaf_names) == ["team-a", "team-b"]
    assert inst.with_user("new", {"cpu": 1}).queues.limit["new"].tolist() == [np.inf, np.inf]
    assert inst.without_resource("memory").queues.usage["team-a"].tolist() == [10.0]
    assert inst.with_demand("team-a", {"cpu": 40, "memory": 1}).queues is inst.queues
    # a misreported request is the instance's row: the verifier perturbs it like a demand
    assert request(inst.with_demand("team-a", {"cpu": 40}))[0].tolist() == [40.0, 0.0]


def test_a_usage_variant_changes_only_the_usage():
    data = {
        **CASE,
        "variants": [{"name": "later", "usage": {"solo": {"cpu": 70}}}],
    }
    case = parse_case(data)
    later = case.variants["later"].queues
    assert later.usage["solo"].tolist() == [70.0, 0.0] and later.usage["team-a"].tolist() == [10.0, 40.0]


def test_a_paper_case_has_the_flat_queue_configuration():
    inst = fairalloc.load_case("drf-section-4-1").instance
    q = queues_of(inst)
    assert inst.queues is None and q.children(None) == ["A", "B"] and not q.configured
    assert np.isnan(q.guarantee["A"]).all() and np.isinf(q.limit["B"]).all()


def test_the_readme_queue_case_loads_and_reproduces():
    from pathlib import Path

    from fairalloc.analysis.reproduce import reproduce_case

    text = (Path(__file__).parents[1] / "README.md").read_text()
    block = text.split("### Queue cases", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    import yaml

    case = parse_case(yaml.safe_load(block), "README")
    rows = reproduce_case(case)
    assert len(rows) == 3 and {r.status for r in rows} == {"ok"}, rows
