"""DRF with queue guarantees and limits (issue 15): the fast bounded progressive filling against
the LP sequence, the bounds honoured, the exact certificate with lower bounds, the refusal of
over-committed guarantees, and instances without bounds on the code path they always took."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core.errors import CaseError
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.engines.filling import bottleneck_certificate, progressive_filling
from fairalloc.engines.maxmin import queue_task_bounds
from fairalloc.io.cases import parse_case

RESOURCES = ("cpu", "mem", "gpu")


@st.composite
def queue_cases(draw, guarantees=True, limits=True):
    """A flat queue case: 2-5 queues, 1-3 resources, integer requests; guarantees (their shares of
    each resource summing to at most 1, so they fit) and limits on some queues."""
    m = draw(st.integers(1, 3))
    n = draw(st.integers(2, 5))
    res = RESOURCES[:m]
    capacity = {r: draw(st.integers(5, 60)) for r in res}
    fractions = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    total = max(sum(fractions), 4)
    users = {}
    for k in range(n):
        request = {r: draw(st.integers(0, 40)) for r in res}
        if not any(request.values()):
            request[res[0]] = 1
        spec: dict = {"request": request}
        if guarantees and fractions[k] and draw(st.booleans()):
            spec["guarantee"] = {r: capacity[r] * fractions[k] / total for r in res}
        if limits and draw(st.booleans()):
            spec["limit"] = {r: draw(st.integers(1, 40)) for r in draw(st.sets(st.sampled_from(res), min_size=1))}
        if draw(st.booleans()):
            spec["weight"] = draw(st.sampled_from([0.5, 1, 2, 3]))
        users[f"q{k}"] = spec
    return parse_case({"resources": capacity, "users": users}).instance


def _bounds(inst):
    """g_i and u_i computed here from the definition, independently of queue_task_bounds."""
    q = inst.queues
    lower, upper = [], []
    for i, u in enumerate(inst.users):
        d, T = inst.demand[i], inst.bounds()[i]
        G, L = np.nan_to_num(q.guarantee[u], nan=0.0), q.limit[u]
        g = min([T] + [G[j] / d[j] for j in range(inst.m) if d[j] > 0])
        cap = min([T] + [L[j] / d[j] for j in range(inst.m) if d[j] > 0])
        lower.append(min(g, cap))
        upper.append(cap)
    return np.array(lower), np.array(upper)


@settings(max_examples=25, deadline=None)
@given(queue_cases())
def test_fast_filling_equals_the_lp_sequence(inst):
    fast = fairalloc.solve(inst, "drf", method="fast").tasks
    lp = fairalloc.solve(inst, "drf", method="program").tasks
    assert np.allclose(fast, lp, rtol=AGREEMENT * 10, atol=AGREEMENT * 10), (fast, lp)


@settings(max_examples=40, deadline=None)
@given(queue_cases())
def test_guarantees_are_honoured_and_limits_respected(inst):
    x = fairalloc.solve(inst, "drf").tasks
    lower, upper = _bounds(inst)
    assert np.all(x >= lower * (1 - 1e-9) - 1e-12)
    assert np.all(x <= upper * (1 + 1e-9) + 1e-12)
    L = inst.queues.leaf_array("limit", inst.users)
    assert np.all(x[:, None] * inst.demand <= L * (1 + 1e-9))


@settings(max_examples=40, deadline=None)
@given(queue_cases())
def test_every_unbounded_user_has_a_bottleneck(inst):
    """The float form of the certificate: a user below her cap demands a saturated resource on
    which no user above her floor has a larger weighted dominant share."""
    alloc = fairalloc.solve(inst, "drf")
    x, lower, upper = alloc.tasks, *_bounds(inst)
    key = inst.per_task_dominant_share / inst.scalar_weights("drf")
    share = key * x
    full = alloc.saturated
    movable = x > lower * (1 + 1e-7) + 1e-12
    for i in range(inst.n):
        if x[i] >= upper[i] * (1 - 1e-7) or not inst.demand[i].any():
            continue
        ok = [
            j
            for j in np.flatnonzero(full & (inst.demand[i] > 0))
            if all(
                share[k] <= share[i] * (1 + 1e-6) + 1e-12 for k in range(inst.n) if movable[k] and inst.demand[k, j] > 0
            )
        ]
        assert ok, f"user {inst.users[i]} has no bottleneck"


def test_a_worked_example_and_its_exact_certificate():
    # a's floor: 6/8 of her request (share 0.6); b's cap 2/8; c grows until memory fills at level 0.65
    inst = parse_case(
        {
            "resources": {"cpu": 10, "mem": 40},
            "users": {
                "a": {"request": {"cpu": 8, "mem": 8}, "guarantee": {"cpu": 6, "mem": 6}},
                "b": {"request": {"cpu": 8, "mem": 30}, "limit": {"cpu": 2}},
                "c": {"request": {"cpu": 1, "mem": 30}},
            },
        }
    ).instance
    for method in ("fast", "program"):
        alloc = fairalloc.solve(inst, "drf", method=method)
        assert alloc.tasks.tolist() == pytest.approx([13 / 16, 1 / 4, 13 / 15])
        assert alloc.exact == [Fraction(13, 16), Fraction(1, 4), Fraction(13, 15)]


def test_the_certificate_with_lower_bounds_can_fail():
    D = [[Fraction(1), Fraction(0)], [Fraction(1), Fraction(1)]]
    R, key = [Fraction(10), Fraction(10)], [Fraction(1, 10), Fraction(1, 10)]
    lower = [Fraction(0), Fraction(6)]
    # b at her floor 6, a takes the rest of the cpu: max-min fair within the bounds
    assert bottleneck_certificate(D, R, key, [Fraction(4), Fraction(6)], None, lower)
    # without the floor the equal split is the answer, and 4 / 6 is not
    assert not bottleneck_certificate(D, R, key, [Fraction(4), Fraction(6)], None, None)
    # below the floor: infeasible
    assert not bottleneck_certificate(D, R, key, [Fraction(5), Fraction(5)], None, lower)
    # b above her floor while a is poorer on the saturated cpu: not max-min fair
    assert not bottleneck_certificate(D, R, key, [Fraction(3), Fraction(7)], None, lower)


def test_over_committed_guarantees_are_refused_naming_the_resource_and_the_amounts():
    inst = parse_case(
        {
            "resources": {"cpu": 100, "mem": 400},
            "users": {
                "a": {"request": {"cpu": 80}, "guarantee": {"cpu": 60}},
                "b": {"request": {"cpu": 80}, "guarantee": {"cpu": 60}},
                "c": {"request": {"mem": 10}},
            },
        }
    ).instance
    for method in ("fast", "program"):
        with pytest.raises(CaseError) as err:
            fairalloc.solve(inst, "drf", method=method)
        assert str(err.value) == "guarantee: the guarantees of queues a, b need 120 cpu, capacity 100"


def test_instances_without_bounds_take_the_unbounded_path():
    paper = fairalloc.load_case("drf-section-4-1").instance
    assert queue_task_bounds(paper) is None
    plain = parse_case({"resources": {"cpu": 9, "mem": 18}, "users": {"A": {"request": {"cpu": 1, "mem": 4}}}})
    assert queue_task_bounds(plain.instance) is None
    alloc = fairalloc.solve(paper, "drf", method="fast")
    assert alloc.solver == "numpy progressive filling"
    key = paper.per_task_dominant_share
    assert alloc.tasks.tolist() == progressive_filling(paper.demand, paper.capacity, key).tasks.tolist() == [3, 2]


@settings(max_examples=20, deadline=None)
@given(queue_cases(guarantees=False, limits=False))
def test_a_queue_case_without_bounds_is_plain_drf(inst):
    assert queue_task_bounds(inst) is None
    x = fairalloc.solve(inst, "drf", method="fast").tasks
    key = inst.per_task_dominant_share / inst.scalar_weights("drf")
    assert x.tolist() == progressive_filling(inst.demand, inst.capacity, key, inst.max_tasks).tasks.tolist()
