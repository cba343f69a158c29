"""volcano-proportion: Volcano's per-resource weighted rounds, its quirks, and its ported cases."""

from __future__ import annotations

import doctest
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
import fairalloc.models.volcano_proportion as vp
from fairalloc.analysis.reproduce import reproduce_case
from fairalloc.core.errors import FairallocError
from fairalloc.core.queues import Queues
from fairalloc.core.registry import get

HERE = Path(__file__).resolve().parent.parent / "cases"
#: the cases of the plug-in's arithmetic (the ported action tests, with a 'cycle', are
#: tests/test_volcano_cycle.py's)
CASES = sorted(
    p
    for p in [*HERE.glob("volcano-*.yaml"), *HERE.glob("report-volcano-*.yaml")]
    if fairalloc.load_case(p).cycle is None
)
RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
#: Volcano's 0.1 tolerance in the case's units: 1e-4 cpu, 0.1 byte, 1e-4 gpu
TOL = vp.MIN_RESOURCE / vp.volcano_units(RESOURCES)


def _instance(capacity, queues, resources=RESOURCES):
    """``queues``: ``{name: {request: [...] or None, weight, guarantee: [...], limit: [...]}}``."""
    users = list(queues)
    m = len(resources)
    demand = [queues[u].get("request") or [0.0] * m for u in users]
    bound = [1.0 if queues[u].get("request") is not None else 0.0 for u in users]
    specs = {u: {k: v for k, v in queues[u].items() if k in ("guarantee", "limit")} for u in users}
    q = Queues.build(list(resources), specs, [])
    weights = [queues[u].get("weight", 1) for u in users]
    return fairalloc.Instance(
        capacity, demand, users=users, resources=list(resources), max_tasks=bound, weights=weights, queues=q
    )


def _deserved(inst):
    return fairalloc.solve(inst, "volcano-proportion").bundles


# -- the worked example and the ported cases -------------------------------------------------------
def test_the_docstring_example():
    assert doctest.testmod(vp).failed == 0
    assert doctest.testmod(vp).attempted >= 3


def test_the_ported_cases_are_there():
    names = {p.stem for p in CASES}
    assert {"report-volcano-1619", "report-volcano-4165", "volcano-enqueue-and-allocable-case3"} <= names


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_ported_case_reproduces(path):
    case = fairalloc.load_case(path)
    rows = reproduce_case(case)
    assert rows and all(r.status == "ok" for r in rows), [r for r in rows if r.status != "ok"]
    # and directly: the bundles of the base scenario are the expected allocation
    for e in case.expect:
        if e.mechanism != "volcano-proportion" or e.variant is not None:
            continue
        got = fairalloc.solve(case.instance, "volcano-proportion").bundles
        users, res = list(case.instance.users), list(case.instance.resources)
        for user, amounts in e.allocation.items():
            for r, value in amounts.items():
                want = float(Fraction(value)) if isinstance(value, str) else float(value)
                assert got[users.index(user), res.index(r)] == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_a_wrong_deserved_is_caught(tmp_path):
    text = (HERE / "report-volcano-4165.yaml").read_text()
    wrong = tmp_path / "wrong.yaml"
    head, expect = text.split("\nexpect:", 1)  # the expectation, not the reporter's user_expectation
    wrong.write_text(head + "\nexpect:" + expect.replace("tenant-c: {cpu: 25,", "tenant-c: {cpu: 25.5,", 1))
    bad = [r for r in reproduce_case(fairalloc.load_case(wrong)) if r.status != "ok"]
    assert len(bad) == 1, bad


# -- Volcano's arithmetic, by hand --------------------------------------------------------------------
def test_rounds_redistribute_what_a_capped_queue_leaves():
    # 12 cpus, weights 2/1/1, c asks for 1: round 1 gives 6, 3, 1 (c capped), remaining 2; round 2
    # gives 1 and 1/2 (c still counts: its memory is not met), round 3 the last 1/2 split 2:1
    G = 2**30
    inst = _instance(
        [12, 12 * G, 0],
        {
            "a": {"request": [12, 12 * G, 0], "weight": 2},
            "b": {"request": [12, 12 * G, 0]},
            "c": {"request": [1, 12 * G, 0]},
        },
    )
    a = fairalloc.solve(inst, "volcano-proportion")
    assert a.bundles[:, 0] == pytest.approx([22 / 3, 11 / 3, 1], abs=1e-3)
    assert a.bundles[:, 1].tolist() == [6 * G, 3 * G, 3 * G]
    assert a.info == {"rounds": 3}


def test_guarantees_are_a_floor_after_the_split_and_can_overcommit():
    # three queues of weight 1 on 10 cpus, a guaranteed 4: round 1 gives 10/3 each, a is raised
    # to 4, remaining is clamped at 0 and the rounds stop: 4 + 10/3 + 10/3 > 10
    inst = _instance(
        [10, 0, 0],
        {
            "a": {"request": [10, 0, 0], "guarantee": [4, np.nan, np.nan]},
            "b": {"request": [10, 0, 0]},
            "c": {"request": [10, 0, 0]},
        },
    )
    d = _deserved(inst)[:, 0]
    assert d == pytest.approx([4, 10 / 3, 10 / 3], rel=1e-12)
    assert d.sum() > 10


def test_a_guarantee_above_the_request_is_deserved_whole():
    inst = _instance(
        [10, 0, 0], {"a": {"request": [1, 0, 0], "guarantee": [3, np.nan, np.nan]}, "b": {"request": [10, 0, 0]}}
    )
    assert _deserved(inst)[:, 0] == pytest.approx([3, 7], rel=1e-12)


def test_an_idle_queue_guarantee_still_shrinks_the_others_real_capability():
    # idle reserves 6 of 10 cpus: a's realCapability is 4, b's 4 (neither has a guarantee)
    inst = _instance(
        [10, 0, 0],
        {"a": {"request": [10, 0, 0]}, "b": {"request": [10, 0, 0]}, "idle": {"guarantee": [6, np.nan, np.nan]}},
    )
    assert _deserved(inst)[:, 0] == pytest.approx([4, 4, 0], rel=1e-12)


def test_a_scalar_resource_fully_guaranteed_is_uncapped_for_the_others():
    # gpus: a is guaranteed all 8, so b has no realCapability key for gpu and its capability of 1
    # gpu is not applied either (cpu, a field, would be capped at 0 instead)
    inst = _instance(
        [8, 0, 8],
        {
            "a": {"request": [4, 0, 8], "guarantee": [np.nan, np.nan, 8]},
            "b": {"request": [4, 0, 8], "limit": [np.inf, np.inf, 1]},
        },
    )
    d = _deserved(inst)
    assert d[1, 2] > 1  # above b's capability: Volcano's arithmetic, not a fair share
    assert d[0, 2] == 8


def test_a_cpu_capability_of_zero_is_unlimited():
    inst = _instance([10, 0, 4], {"a": {"request": [10, 0, 4], "limit": [0, np.inf, 0]}})
    assert _deserved(inst)[0].tolist() == [10, 0, 0]  # cpu unlimited, gpu capped at 0


def test_the_round_guard():
    inst = _instance([12, 0, 0], {"a": {"request": [12, 0, 0], "weight": 2}, "c": {"request": [1, 0, 0]}})
    p = vp.proportion_input(inst, inst.scalar_weights("x"))
    assert vp.proportion_rounds(p)[1] == 2
    with pytest.raises(FairallocError, match="did not settle in 1 rounds"):
        vp.proportion_rounds(p, max_rounds=1)


def test_registered_and_a_queue_policy():
    mech = get("volcano-proportion")
    assert isinstance(mech, vp.VolcanoProportion) and not mech.has_order


# -- properties -----------------------------------------------------------------------------------------
@st.composite
def _cases(draw, guarantees=True):
    n = draw(st.integers(1, 5))
    cap = [draw(st.integers(1, 100)) for _ in RESOURCES]
    queues = {}
    for i in range(n):
        spec = {"weight": draw(st.integers(1, 5))}
        request = [draw(st.sampled_from([0, 0.5, 1, 3, 10, 40, 150])) for _ in RESOURCES]
        if any(request) and draw(st.integers(0, 5)) > 0:  # else an idle queue
            spec["request"] = request
        if draw(st.booleans()):
            spec["limit"] = [draw(st.sampled_from([np.inf, 2, 20, 60])) for _ in RESOURCES]
        if guarantees and draw(st.booleans()):
            # fractions < 1 of an n-th of the cluster: the guarantees never add up to all of it
            spec["guarantee"] = [draw(st.sampled_from([np.nan, 0, 0.3, 0.9])) * c / n for c in cap]
        queues[f"q{i}"] = spec
    return _instance(cap, queues)


def _arrays(inst):
    p = vp.proportion_input(inst, inst.scalar_weights("x"))
    unit = vp.volcano_units(RESOURCES)
    g = np.where(np.isnan(p.guarantee), 0.0, p.guarantee) / unit
    return p.request / unit, g, p.capability / unit, p.active


@settings(max_examples=60, deadline=None)
@given(_cases())
def test_deserved_is_capped_by_request_and_capability_and_floored_by_guarantee(inst):
    d = _deserved(inst)
    req, g, cap, act = _arrays(inst)
    assert np.all(np.isfinite(d)) and np.all(d >= 0)
    assert np.all(d[~act] == 0)
    assert np.all(d <= np.maximum(req, g) + TOL)  # <= request wherever the guarantee is not above it
    assert np.all(d <= np.maximum(cap, g) + TOL)
    assert np.all(d[act] >= g[act])  # the guarantee is a floor, even above the request
    assert np.all(d[act] >= np.minimum(g, req)[act])
    # guarantees can push the sum past the cluster, by at most the guarantees
    assert np.all(d.sum(axis=0) <= inst.capacity + g.sum(axis=0) + len(d) * TOL)


def _water_fill(capacity, weights, caps):
    """Per resource: ``min(w_i L, c_i)`` with the level ``L`` filling the capacity (bisection)."""
    out = np.zeros_like(caps)
    for j, total in enumerate(capacity):
        c = caps[:, j]
        if c.sum() <= total:
            out[:, j] = c
            continue
        lo, hi = 0.0, float(total / weights.min())
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if np.minimum(weights * mid, c).sum() < total else (lo, mid)
        out[:, j] = np.minimum(weights * hi, c)
    return out


@settings(max_examples=60, deadline=None)
@given(_cases(guarantees=False))
def test_without_guarantees_the_rounds_converge_to_the_weighted_water_fill(inst):
    d = _deserved(inst)
    req, _, cap, act = _arrays(inst)
    w = inst.scalar_weights("x")
    caps = np.where(act[:, None], np.minimum(np.minimum(req, cap), inst.capacity), 0.0)
    want = _water_fill(inst.capacity, w, caps)
    slack = (len(d) + 1) * TOL + 1e-9 * inst.capacity
    assert np.all(np.abs(d - want) <= slack), (d, want)
    assert np.all(d.sum(axis=0) <= inst.capacity + slack)
    # among queues below their cap on a resource, deserved is proportional to weight
    for j in range(len(RESOURCES)):
        free = act & (d[:, j] < caps[:, j] - slack[j])
        if free.sum() > 1:
            level = d[free, j] / w[free]
            assert level.max() - level.min() <= slack[j] / w[free].min()
