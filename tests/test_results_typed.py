"""Typed witnesses and results (fairalloc.analysis.results): one dataclass per property kind whose
``to_dict()`` is the dict the checkers produced when witnesses were plain dicts (same keys, same
order), whose ``describe()`` is the line ``describe_witness`` gave, and which still reads as that
dict (``w["user"]``, ``w.get``, ``w == {...}``)."""

import json

import numpy as np
import pytest

import fairalloc
from fairalloc.analysis import results as R
from fairalloc.analysis.falsify import FalsifyResult, case_for
from fairalloc.analysis.manipulation import probe, verify
from fairalloc.analysis.properties import check, check_property
from fairalloc.core.decimals import json_text

#: the keys, in order, of the dict each checker built before witnesses were typed
OLD_KEYS = {
    R.SharingIncentiveWitness: ["user", "tasks", "fair_share_tasks", "fair_share_bundle"],
    R.DynamicSharingIncentiveWitness: ["step", "user", "dominant_share", "shared"],
    R.EnvyWitness: ["user", "envies", "tasks", "tasks_from_other_bundle", "other_bundle"],
    R.InfeasibleWitness: ["infeasible", "used", "capacity"],
    R.ParetoWitness: ["total_gain", "better_off", "tasks", "improvement"],
    R.SingleResourceWitness: ["resource", "user", "tasks", "max_min_fair_tasks", "allocation", "max_min_fair"],
    R.BottleneckWitness: ["resource", "user", "tasks", "max_min_fair_tasks", "allocation", "max_min_fair"],
    R.PopulationWitness: ["removed_user", "user", "tasks_before", "tasks_after"],
    R.ResourceWitness: [
        "resource",
        "factor",
        "capacity_before",
        "capacity_after",
        "user",
        "tasks_before",
        "tasks_after",
    ],
    R.Lie: [
        "user",
        "reported_demand",
        "truthful_tasks",
        "manipulated_tasks",
        "gain",
        "relative_gain",
        "evaluations",
        "shrunk",
    ],
    R.ShrunkLie: ["reported_demand", "manipulated_tasks", "gain", "rounding"],
    R.DynamicLieWitness: ["user", "reported_demand", "gain_in_tasks_at_some_later_step"],
    R.IrreversibilityWitness: ["step", "arrived", "user", "dominant_share_before", "dominant_share_after"],
    R.DynamicParetoWitness: ["step", "total_gain", "better_off"],
    R.SharedMonotonicityWitness: [
        "step",
        "user",
        "shared",
        "dominant_share",
        "other",
        "other_shared",
        "other_dominant_share",
    ],
    R.DynamicEnvyWitness: ["step", "user", "envies", "dominant_share", "value_of_other_bundle", "other_arrived_first"],
}

#: violations the case library shows: (case, mechanism, property, witness class)
LIBRARY = [
    ("drf-theorem-1", "asset", "sharing_incentive", R.SharingIncentiveWitness),
    ("drf-theorem-2", "asset", "bottleneck_fairness", R.BottleneckWitness),
    ("drf-theorem-3", "asset", "resource_monotonicity", R.ResourceWitness),
    ("drf-theorem-5", "ceei", "population_monotonicity", R.PopulationWitness),
    ("single-resource", "utilitarian", "single_resource_fairness", R.SingleResourceWitness),
    ("drf-theorem-4", "ceei", "strategy_proofness", R.Lie),
    ("dmfa-srq-shared-monotonicity", "dmfa-srq", "shared_monotonicity", R.SharedMonotonicityWitness),
]


def keys_as_before(w: R.Witness) -> None:
    expected = OLD_KEYS[type(w)]
    got = list(w.to_dict())
    # the shrunk lie is optional, as it was
    assert got == (expected if "shrunk" in got or "shrunk" not in expected else expected[:-1])
    assert dict(w) == w.to_dict() and w == w.to_dict()
    if not isinstance(w, R.ShrunkLie):  # a part of a witness, not one
        assert w.describe() == R.describe_witness(_prop_of(w), w.to_dict()) != ""


def _prop_of(w: R.Witness) -> str:
    if isinstance(w, R.InfeasibleWitness):
        return "pareto_efficiency"
    return next(p for p, choices in R.WITNESS_TYPES.items() if any(cls is type(w) for _, cls in choices))


@pytest.mark.parametrize("case, mechanism, prop, kind", LIBRARY, ids=[f"{c}-{m}-{p}" for c, m, p, _ in LIBRARY])
def test_library_witnesses_keep_their_dict_shape(case, mechanism, prop, kind):
    result = check_property(mechanism, fairalloc.load_case(case), prop, budget=300)
    assert not result.holds and type(result.witness) is kind
    keys_as_before(result.witness)
    assert result.to_dict()["witness"] == result.witness.to_dict()
    assert list(result.to_dict()) == ["holds", "margin", "witness", "applicable", "evaluations"]
    if kind is R.Lie and result.witness.shrunk is not None:
        keys_as_before(result.witness.shrunk)


def test_the_papers_numbers_read_as_attributes_and_as_keys():
    w = check_property("asset", fairalloc.load_case("drf-theorem-1"), "si").witness
    assert (
        (w.user, w.tasks, w.fair_share_tasks) == ("2", 12.0, 15.0) == (w["user"], w["tasks"], w.get("fair_share_tasks"))
    )
    assert "user" in w and "envies" not in w and w.get("envies") is None
    with pytest.raises(KeyError):
        w["envies"]
    with pytest.raises(TypeError):
        w["user"] = "1"  # read-only view
    assert w.describe() == "user 2 gets 12 tasks, her fair share runs 15"


class FavourFirst(fairalloc.Mechanism):
    """DRF, then user 1 takes what is left and the others lose 10 % (envy; tests)."""

    name, summary = "favour-first-typed", "broken on purpose (tests)"

    def fast(self, instance):
        x = fairalloc.solve(instance, "drf").tasks.copy()
        x[1:] *= 0.9
        room = instance.capacity - x @ instance.demand
        d = instance.demand[0]
        x[0] += np.min(room[d > 0] / d[d > 0])
        return fairalloc.Allocation(instance, x, self.name, "fast")


class Idle(fairalloc.Mechanism):
    name, summary = "idle-typed", "DRF leaving 10 % idle (tests)"

    def fast(self, instance):
        return fairalloc.Allocation(instance, fairalloc.solve(instance, "drf").tasks * 0.9, self.name, "fast")


def test_envy_and_pareto_witnesses_of_broken_mechanisms():
    inst = fairalloc.Instance.from_arrays([10, 10], [[1, 1], [1, 1], [1, 1]])
    ef = check(FavourFirst(), inst, ["ef"])["envy_freeness"]
    assert type(ef.witness) is R.EnvyWitness and ef.witness.envies == "1"
    keys_as_before(ef.witness)
    pe = check(Idle(), inst, "pe")["pareto_efficiency"]
    assert type(pe.witness) is R.ParetoWitness and pe.witness.total_gain == pytest.approx(1.0)
    keys_as_before(pe.witness)


# the dicts the dynamic checkers (and the feasibility test of Pareto efficiency) built, with the
# lines describe_witness gave for them
DICTS = [
    (
        "pareto_efficiency",
        {"infeasible": "cpu", "used": 12.0, "capacity": 10.0},
        R.InfeasibleWitness,
        "resource cpu over capacity (12 > 10)",
    ),
    (
        "sharing_incentive",
        {"step": 2, "user": "b", "dominant_share": 0.25, "shared": 0.5},
        R.DynamicSharingIncentiveWitness,
        "at step 2 user b has dominant share 0.25 < her shared quantity 0.5",
    ),
    (
        "strategy_proofness",
        {"user": "a", "reported_demand": {"r1": 2.0, "r2": 1.0}, "gain_in_tasks_at_some_later_step": 0.5},
        R.DynamicLieWitness,
        "user a reporting <r1: 2, r2: 1> gains 0.5 true tasks at a later step",
    ),
    (
        "irreversibility",
        {"step": 3, "arrived": "3", "user": "1", "dominant_share_before": 0.5, "dominant_share_after": 0.25},
        R.IrreversibilityWitness,
        "when user 3 arrives (step 3) user 1 drops from 0.5 to 0.25",
    ),
    (
        "dynamic_pareto_optimality",
        {"step": 2, "total_gain": 0.125, "better_off": ["a", "b"]},
        R.DynamicParetoWitness,
        "at step 2 users a, b can gain 0.125 in all within the pool",
    ),
    (
        "dynamic_envy_freeness",
        {
            "step": 2,
            "user": "b",
            "envies": "a",
            "dominant_share": 0.25,
            "value_of_other_bundle": 0.5,
            "other_arrived_first": True,
        },
        R.DynamicEnvyWitness,
        "at step 2 user b envies user a (0.5 > 0.25)",
    ),
]


@pytest.mark.parametrize("prop, data, kind, text", DICTS, ids=[d[0] for d in DICTS])
def test_a_dict_becomes_its_witness_and_back(prop, data, kind, text):
    result = R.PropertyResult(prop, False, -1.0, dict(data))
    assert type(result.witness) is kind and result.witness.to_dict() == data
    assert list(result.to_dict()["witness"]) == list(data) == OLD_KEYS[kind]
    assert R.describe_witness(prop, data) == R.describe_witness(prop, result.witness) == text
    assert R.describe_witness(prop, None) == ""


def test_dynamic_checkers_give_typed_witnesses():
    from fairalloc.analysis.dynamic_properties import irreversibility
    from fairalloc.engines.dynamic import History

    inst = fairalloc.Instance(np.array([1.0, 1.0]), np.array([[1.0, 1.0], [1.0, 1.0]]), shared=np.array([0.5, 0.5]))
    mu = inst.per_task_dominant_share
    history = History(inst, mu, np.array([0.5, 0.5]), steps=[np.array([0.8]), np.array([0.4, 0.4])])
    result = irreversibility(history)
    assert type(result.witness) is R.IrreversibilityWitness
    assert (result.witness.step, result.witness.arrived, result.witness.user) == (2, "2", "1")
    keys_as_before(result.witness)


def test_lies_are_typed_and_keep_the_verifier_json():
    inst = fairalloc.load_case("drf-theorem-4")
    result = verify("ceei", inst, user="1", budget=300)
    best = result.best
    assert isinstance(best, R.Lie) and best.profitable and isinstance(best.shrunk, R.ShrunkLie)
    keys_as_before(best)
    keys_as_before(best.shrunk)
    data = result.to_dict()
    assert data["best"] == best.to_dict() and data["best"]["shrunk"] == best.shrunk.to_dict()
    json.loads(json_text(data))
    told = probe("ceei", inst.instance, "1", best.reported_demand)
    assert isinstance(told, R.Lie) and told.manipulated_tasks == pytest.approx(best.manipulated_tasks)


def test_falsify_results_serialise_their_witness():
    inst = fairalloc.load_case("drf-theorem-3").instance
    result = check_property("asset", inst, "rm")
    case = case_for("asset", "resource_monotonicity", inst, result, "tests")
    assert case["variants"] == [{"name": "more-capacity", "capacity": result.witness.capacity_after}]
    assert case["claims"] == ["asset violates resource_monotonicity for user A"]
    found = FalsifyResult("asset", "resource_monotonicity", 1, True, 0.0, case, result.witness, "x", 0)
    data = found.to_dict()
    assert list(data) == [
        "mechanism",
        "property",
        "trials",
        "found",
        "seconds",
        "case",
        "witness",
        "summary",
        "first_trial",
        "shrink_checks",
        "skipped",
        "extra",
    ]
    assert data["witness"] == result.witness.to_dict() and isinstance(data["witness"], dict)


def test_a_mechanism_object_is_resolved_once(monkeypatch):
    """Inside the checkers, the verifier and the finder, mechanisms travel as objects: the
    registry is asked once, at the public entry point."""
    from fairalloc.core import registry

    calls = []
    real = registry.get

    def counting(name):
        calls.append(name)
        return real(name)

    for module in ("fairalloc.analysis.properties", "fairalloc.analysis.manipulation", "fairalloc.analysis.falsify"):
        monkeypatch.setattr(f"{module}.get", counting)
    check_property("ceei", fairalloc.load_case("drf-theorem-4"), "sp", budget=40)
    assert calls == ["ceei"]
