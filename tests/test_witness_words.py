"""Witnesses in words, and witnesses as case-file variants (fairalloc.analysis.results).

``words()`` is what the explorer shows a newcomer: full sentences from the witness's fields, numbers
to four significant digits.  ``variant()`` turns a witness that is a change of the instance (a lie,
a user leaving, more capacity) into a ``variants:`` entry of the case file; the end-to-end tests
append it to a bundled case, parse the case again and solve the derived instance, which must show
the violation the checker found, with the same numbers.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from fairalloc.analysis import results as R
from fairalloc.analysis.manipulation import probe
from fairalloc.analysis.properties import check
from fairalloc.analysis.valuation import tolerance
from fairalloc.core.registry import get
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.io.cases import Case, load_case, parse_case

SHRUNK = R.ShrunkLie({"cpu": 3.0, "mem": 0.0}, 4.6875, 1.4617, "sig 1")

#: one hand-built witness per class, and the names and numbers (formatted :.4g) its words must contain
ROWS: list[tuple[R.Witness, list[str]]] = [
    (
        R.SharingIncentiveWitness("A", 2.0, 3.0, {"cpu": 4.5, "mem": 9.0}),
        ["User A gets 2 tasks", "would run 3", "<cpu: 4.5, mem: 9>", "static partition"],
    ),
    (R.DynamicSharingIncentiveWitness(3, "C", 0.15, 0.2), ["After 3 arrivals", "user C", "0.15", "0.2"]),
    (R.EnvyWitness("B", "A", 2.0, 3.0, {"cpu": 3.0}), ["User B would rather have A's bundle: 3 tasks instead of 2."]),
    (R.InfeasibleWitness("cpu", 10.5, 9.0), ["10.5 cpu", "the 9 the cluster has"]),
    (
        R.ParetoWitness(1.2, ["A", "B"], {"A": 1.0, "B": 1.0}, {"A": 1.7, "B": 1.5}),
        ["users A, B could run 1.2 more tasks in all without anyone running fewer"],
    ),
    (
        R.SingleResourceWitness("cpu", "A", 2.0, 1500 / 31, {"A": 2.0}, {"A": 1500 / 31}),
        ["With cpu the only resource", "user A gets 2 tasks", "fewer", "48.39"],
    ),
    (
        R.BottleneckWitness("r1", "1", 3.5, 3.0, {"1": 3.5}, {"1": 3.0}),
        ["Every user's dominant resource is r1", "user 1 gets 3.5 tasks", "more", "the 3 of"],
    ),
    (
        R.PopulationWitness("C", "A", 2.5, 2.0),
        ["When user C leaves, user A gets fewer tasks (2 instead of 2.5), although more is left for everyone."],
    ),
    (
        R.ResourceWitness("cpu", 2.0, {"cpu": 9.0, "mem": 18.0}, {"cpu": 18.0, "mem": 18.0}, "B", 2.0, 1.5),
        ["With 2x the capacity of cpu, user B gets fewer tasks (1.5 instead of 2)."],
    ),
    (SHRUNK, ["<cpu: 3, mem: 0>", "sig 1", "4.688", "1.462"]),
    (
        R.Lie("A", 3.0, 3.5, {"cpu": 2.0, "mem": 4.0}, 10),
        [
            "User A gains by lying: reporting <cpu: 2, mem: 4> instead of her true demand, she runs 3.5 true "
            "tasks instead of 3."
        ],
    ),
    (R.DynamicLieWitness("A", {"r1": 0.5, "r2": 1.0}, 0.25), ["User A", "<r1: 0.5, r2: 1>", "0.25 more"]),
    (R.IrreversibilityWitness(3, "C", "A", 0.5, 0.4), ["user C arrives (3rd arrival)", "user A", "0.5 to 0.4"]),
    (R.DynamicParetoWitness(2, 0.1, ["A"]), ["After 2 arrivals", "user A could", "0.1 more"]),
    (
        R.SharedMonotonicityWitness(3, "C", 0.4, 0.4, "A", 0.3, 6 / 11),
        ["user C brought more", "user A", "0.4 of every resource against 0.3", "0.4 against 0.5455"],
    ),
    (R.DynamicEnvyWitness(3, "B", "A", 0.4, 0.5, False), ["user B", "A's bundle", "0.5", "0.4", "A arrived after"]),
    (R.DynamicEnvyWitness(3, "B", "A", 0.4, 0.5, True), ["A arrived first but has received more since B arrived"]),
    (
        R.GuaranteeWitness("q", "cpu", 4.0, 5.0, 3.0),
        ["Queue q receives 3 cpu, below its guarantee of 4 (it requests 5)."],
    ),
    (R.LimitWitness("team-a", "cpu", 4.0, 5.0), ["The limit of team-a is 4 cpu, but it receives 5."]),
    (R.OvercommitWitness("cpu", 32 / 3, 10.0), ["promised 10.67 cpu", "the 10 the cluster has"]),
    (R.IdleWitness("q", 0.6, {"cpu": 3.0, "mem": 1.25}), ["Queue q gets 0.6 of its request", "3 cpu, 1.25 mem"]),
]
IDS = [type(w).__name__ + ("-first" if getattr(w, "other_arrived_first", False) else "") for w, _ in ROWS]

#: the property each witness class answers (InfeasibleWitness: any static one; ShrunkLie: none, part of a Lie)
PROPERTY_OF = {cls: prop for prop, pairs in R.WITNESS_TYPES.items() for _, cls in pairs}
PROPERTY_OF[R.InfeasibleWitness] = "pareto_efficiency"


def witness_classes() -> set[type]:
    """Every witness class fairalloc.analysis.results defines."""
    return {c for c in vars(R).values() if isinstance(c, type) and issubclass(c, R.Witness) and c is not R.Witness}


def test_every_witness_class_has_a_row():
    covered = {type(w) for w, _ in ROWS}
    listed = set(PROPERTY_OF)  # the classes of WITNESS_TYPES, and InfeasibleWitness
    assert listed <= witness_classes()
    # a new witness class without words (or without a row here) fails
    assert covered == listed | {R.ShrunkLie} == witness_classes()


@pytest.mark.parametrize("cls", sorted(witness_classes(), key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_every_witness_class_writes_its_own_words(cls):
    assert "words" in vars(cls), f"{cls.__name__} inherits words() instead of saying what it witnesses"


@pytest.mark.parametrize(("witness", "expected"), ROWS, ids=IDS)
def test_words_name_the_users_and_numbers(witness, expected):
    text = witness.words()
    for piece in expected:
        assert piece in text, f"{piece!r} not in {text!r}"
    # full sentences on one line: a capital first, a full stop last
    assert "\n" not in text and text[0].isupper() and text.endswith("."), text
    if type(witness) in PROPERTY_OF:  # more than the terse line (a shrunk lie has none)
        assert text != witness.describe()


@pytest.mark.parametrize("witness", [w for w, _ in ROWS if type(w) in PROPERTY_OF], ids=lambda w: type(w).__name__)
def test_witness_words_reads_a_dict_too(witness):
    prop = PROPERTY_OF[type(witness)]
    assert R.witness_words(prop, witness) == witness.words()
    assert R.witness_words(prop, witness.to_dict()) == witness.words()
    assert R.witness_variant(prop, witness.to_dict()) == witness.variant()


def test_nothing_to_say_without_a_witness():
    assert R.witness_words("envy_freeness", None) == "" and R.witness_variant("envy_freeness", None) is None
    assert R.Witness().variant() is None
    with pytest.raises(NotImplementedError):
        R.Witness().words()


# -- variants ------------------------------------------------------------------------------------------


def test_only_changes_of_the_instance_are_variants():
    changes = {type(w) for w, _ in ROWS if w.variant() is not None}
    assert changes == {R.Lie, R.DynamicLieWitness, R.PopulationWitness, R.ResourceWitness}


def test_variant_shapes():
    lie = R.Lie("A", 3.0, 3.5, {"cpu": 2.0, "mem": 0.0}, 10)
    assert lie.variant() == {
        "name": "lie-A",
        "description": lie.words(),
        "misreport": {"user": "A", "demand": {"cpu": 2}},  # the zero entry is left out, as case files do
    }
    lie.shrunk = SHRUNK  # the rounder report is the one to replay, as describe() shows it
    assert lie.variant()["misreport"] == {"user": "A", "demand": {"cpu": 3}}
    assert "<cpu: 3, mem: 0>" in lie.words() and "4.688 true tasks instead of 3" in lie.words()
    dynamic = R.DynamicLieWitness("B", {"cpu": 0.1, "mem": 0.0}, 0.25)
    assert dynamic.variant() == {
        "name": "lie-B",
        "description": dynamic.words(),
        "misreport": {"user": "B", "demand": {"cpu": 0.1}},
    }
    leaves = R.PopulationWitness("B", "A", 2.5, 2.0)
    assert leaves.variant() == {"name": "without-B", "description": leaves.words(), "remove_user": "B"}
    more = R.ResourceWitness("all", 1.25, {"cpu": 9.0, "mem": 18.0}, {"cpu": 11.25, "mem": 22.5}, "B", 2.0, 1.5)
    assert more.variant() == {"name": "all-x1.25", "description": more.words(), "capacity": {"cpu": 11.25, "mem": 22.5}}
    assert "capacity of every resource" in more.words()


def with_variant(case: Case, variant: dict) -> Case:
    """The case parsed again with ``variant`` appended to its ``variants``."""
    raw = copy.deepcopy(case.raw)
    raw["variants"] = [*raw.get("variants", []), variant]
    return parse_case(raw, case.name)


#: the variant-making witnesses, on the running example (users A, B; cpu and mem)
ON_RUNNING_EXAMPLE = [
    R.Lie("B", 1.636, 2.182, {"cpu": 0.8, "mem": 1.0}, 10),
    R.DynamicLieWitness("A", {"cpu": 1.0, "mem": 0.0}, 0.25),
    R.PopulationWitness("B", "A", 3.0, 2.5),
    R.ResourceWitness("mem", 2.0, {"cpu": 9.0, "mem": 18.0}, {"cpu": 9.0, "mem": 36.0}, "B", 2.0, 1.5),
]


@pytest.mark.parametrize("witness", ON_RUNNING_EXAMPLE, ids=lambda w: type(w).__name__)
def test_variants_are_valid_case_entries(witness):
    variant = witness.variant()
    assert yaml.safe_load(yaml.safe_dump(variant)) == variant  # plain YAML: no numpy scalars
    case = with_variant(load_case("drf-section-4-1"), variant)
    assert variant["name"] in case.variants


# -- end to end: the checkers' witnesses, replayed from the case file -----------------------------------

#: (case, mechanism, property) violations the bundled cases claim (docs/formulations.md section 4.2)
VIOLATIONS = [
    ("drf-theorem-4", "ceei", "strategy_proofness"),
    ("drf-section-4-1", "ceei", "strategy_proofness"),
    ("drf-theorem-5", "ceei", "population_monotonicity"),
    ("zero-demands-population-monotonicity", "drf", "population_monotonicity"),
    ("drf-section-4-1", "drf", "resource_monotonicity"),
    ("drf-theorem-3", "asset", "resource_monotonicity"),
    ("drf-theorem-6", "drf", "resource_monotonicity"),
    ("drf-theorem-6", "ceei", "resource_monotonicity"),
]


def same(expected):
    # two task counts agree to AGREEMENT, relative with a floor of 1 (fairalloc.core.tolerances)
    return pytest.approx(expected, rel=AGREEMENT, abs=AGREEMENT)


def replayed(name: str, mechanism: str, prop: str):
    """The case, the checker's witness of ``prop``, and the instance of the variant the witness makes."""
    case = load_case(name)
    result = check(mechanism, case, [prop], budget=300)[prop]
    assert not result.holds, f"{mechanism} should violate {prop} on {name}"
    variant = R.witness_variant(prop, result.witness)
    assert variant is not None and variant["description"] == result.witness.words()
    return case, result.witness, with_variant(case, variant).variants[variant["name"]]


LIES = [v for v in VIOLATIONS if v[2] == "strategy_proofness"]
CHANGES = [v for v in VIOLATIONS if v not in LIES]


@pytest.mark.parametrize(("name", "mechanism", "prop"), LIES, ids=["-".join(v) for v in LIES])
def test_a_lie_replayed_gains_what_the_witness_says(name, mechanism, prop):
    case, lie, derived = replayed(name, mechanism, prop)
    i = derived.user_index(lie.user)
    others = np.arange(derived.n) != i
    assert np.array_equal(derived.demand[others], case.instance.demand[others])  # only the liar's report changed
    reported = dict(zip(derived.resources, map(float, derived.demand[i])))
    replay = probe(mechanism, case.instance, lie.user, reported)
    told = lie.shrunk or lie
    assert replay.profitable and replay.gain > 0
    assert replay.truthful_tasks == same(lie.truthful_tasks)
    assert replay.manipulated_tasks == same(told.manipulated_tasks)
    assert replay.gain == same(told.manipulated_tasks - lie.truthful_tasks)


@pytest.mark.parametrize(("name", "mechanism", "prop"), CHANGES, ids=["-".join(v) for v in CHANGES])
def test_a_change_replayed_lowers_the_user_as_the_witness_says(name, mechanism, prop):
    case, w, derived = replayed(name, mechanism, prop)
    mech = get(mechanism)
    before = mech.allocate(case.instance).tasks[case.instance.user_index(w.user)]
    after = mech.allocate(derived).tasks[derived.user_index(w.user)]
    assert before == same(w.tasks_before) and after == same(w.tasks_after)
    assert after < before - tolerance(before, after)  # a violation, beyond the properties' tolerance
    if prop == "population_monotonicity":
        assert w.removed_user not in derived.users and derived.n == case.instance.n - 1
    else:
        assert dict(zip(derived.resources, derived.capacity)) == same(w.capacity_after)
