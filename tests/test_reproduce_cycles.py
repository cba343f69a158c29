"""``fairalloc reproduce`` on a case's scheduling cycle: the admitted and preempted jobs compared
as sets, a mismatch naming the jobs missing and those not expected."""

from __future__ import annotations

import yaml

import fairalloc
from fairalloc.analysis.reproduce import reproduce_case
from fairalloc.io.cases import parse_case


def _case(admitted, preempted):
    data = yaml.safe_load(fairalloc.load_case("replay-two-teams").path.read_text())
    data["expect"] = [{"mechanism": "drf", "admitted": admitted, "preempted": preempted}]
    return parse_case(data)


def test_the_bundled_cycle_reproduces():
    rows = reproduce_case(fairalloc.load_case("replay-two-teams"))
    assert [(r.claim, r.computed, r.status) for r in rows] == [
        ("drf: cycle admitted", "b-1", "ok"),
        ("drf: cycle preempted", "none", "ok"),
    ]


def test_a_wrong_set_says_what_differs():
    rows = reproduce_case(_case(["a-2"], ["a-run"]))
    assert [(r.computed, r.status) for r in rows] == [
        ("b-1 (missing a-2; not expected b-1)", "MISMATCH"),
        ("none (missing a-run)", "MISMATCH"),
    ]


def test_order_is_not_compared_and_a_left_out_set_is_not_checked():
    rows = reproduce_case(_case(["b-1"], None))
    assert [r.claim for r in rows] == ["drf: cycle admitted"] and rows[0].status == "ok"
