"""yarn-fair and yarn-fair-steady: YARN FairScheduler's fair shares (DRF policy), to the unit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.analysis.reproduce import reproduce_case
from fairalloc.core.queues import Queues
from fairalloc.models.yarn_fair import (
    LONG_MAX,
    YarnSchedulable,
    java_float,
    java_long,
    yarn_compute_shares,
    yarn_fair_shares,
)

#: the fair-share cases (the scheduling cycles, ``yarn-preemption-*``, are tests/test_yarn_cycle.py's)
CASES = sorted(
    p
    for p in Path(__file__).resolve().parent.parent.joinpath("cases").glob("yarn-*.yaml")
    if "\ncycle:" not in p.read_text()
)
S = YarnSchedulable


def test_the_ported_cases_are_there():
    assert len(CASES) >= 27


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_ported_case_reproduces(path):
    rows = reproduce_case(fairalloc.load_case(path))
    assert rows and all(r.status in ("ok", "erratum") for r in rows), [r for r in rows if r.status != "ok"]


def test_a_wrong_share_is_caught(tmp_path):
    text = CASES[0].with_name("yarn-simple-fair-share-calculation.yaml").read_text()
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(text.replace("queue1: {memory: 3414}, queue2", "queue1: {memory: 3413}, queue2", 1))
    statuses = [r.status for r in reproduce_case(fairalloc.load_case(wrong))]
    assert statuses.count("ok") == len(statuses) - 1


def _instance(capacity, leaves, groups=None, resources=("memory", "vcores")):
    """``leaves``: ``{name: (request or None, spec)}`` in order; ``groups``: ``{name: spec}``."""
    groups = groups or {}
    users = list(leaves)
    m = len(capacity)
    demand = [leaves[u][0] if leaves[u][0] is not None else [0.0] * m for u in users]
    bound = [1.0 if leaves[u][0] is not None else 0.0 for u in users]
    nodes = {**groups, **{u: leaves[u][1] for u in users}}
    q = Queues.build(list(resources)[:m], nodes, list(groups))
    return fairalloc.Instance(capacity, demand, users=users, resources=list(resources)[:m], max_tasks=bound, queues=q)


# -- the arithmetic, as the upstream tests and the Java semantics have it ------------------------
def test_empty_list():
    """TestComputeFairShares.testEmptyList (a case has at least one queue): nothing to share."""
    assert yarn_compute_shares([], 40) == []


def test_zero_weights():
    """TestFairScheduler.testFairShareWithZeroWeight and ...WithZeroWeightNoneZeroMinRes (apache/hadoop,
    TestFairScheduler.java, commit a3b61baf94b37786c9b5b56eba36ffb092ae3e68, Apache-2.0): a queue of weight 0
    gets its minResources, or 0.  Ported here: a case refuses weight 0."""
    zero = {"weight": 0.0}
    inst = _instance([8192], {"queueA": ([2048], zero), "queueB": ([6144], zero), "default": (None, {})})
    assert [yarn_fair_shares(inst)[u][0] for u in ("queueA", "queueB")] == [0.0, 0.0]
    min1 = {"weight": 0.0, "guarantee": [1.0]}
    inst = _instance([8192], {"queueA": ([2048], min1), "queueB": ([6144], min1), "default": (None, {})})
    assert [yarn_fair_shares(inst)[u][0] for u in ("queueA", "queueB")] == [1.0, 1.0]


def test_truncation_overshoots_the_total():
    # three truncated shares of R jump from 9 to 12: the search ends just above R = 4
    assert yarn_compute_shares([S(1.0)] * 3, 10) == [4, 4, 4]
    # TestFairSchedulerFairShare's steady shares, exactly: 0.2 and 0.05 of 16 GB, and 1 vcore each under parentB
    inst = fairalloc.load_case("yarn-fair-share-with-drf-multiple-active-queues-under-different-parent").instance
    steady = yarn_fair_shares(inst, steady=True)
    assert steady["childA1"].tolist() == [3277, 2] and steady["childB1"].tolist() == [819, 1]
    assert steady["parentB"].tolist() == [1638, 1] and steady["childB2"].tolist() == [819, 1]


def test_java_numbers():
    assert java_float(0.1) == 0.10000000149011612 and java_float(0.75) == 0.75
    assert java_long(2.0**70) == LONG_MAX and java_long(float("nan")) == 0 and java_long(3.99) == 3
    # minShare above maxShare: FSQueue.getMaxShare raises the max to the min
    inst = _instance([100], {"a": ([1], {"guarantee": [30], "limit": [10]}), "b": ([1], {})}, resources=["memory"])
    shares = yarn_fair_shares(inst)
    assert shares["a"].tolist() == [30] and shares["b"].tolist() == [70]  # a's max share is max(10, 30)
    # a max share of 0 fixes the share at 0; the rest is the others'
    assert yarn_compute_shares([S(1.0, 0, 0), S(1.0), S(1.0)], 10) == [0, 5, 5]
    # minShares beyond the total: each still gets its minShare
    assert yarn_compute_shares([S(1.0, 30), S(1.0, 30)], 40) == [30, 30]


def test_fair_share_ignores_the_request():
    """YARN's fair share is independent of demand (ComputeFairShares class comment): a queue asking for 1 MB is
    entitled to half the cluster, and the paper mechanisms' reading of request does not cap it."""
    inst = _instance([100], {"a": ([1], {}), "b": ([100], {})}, resources=["memory"])
    alloc = fairalloc.solve(inst, "yarn-fair")
    assert alloc.bundles[:, 0].tolist() == [50.0, 50.0] and alloc.tasks[0] == 1.0


def test_steady_counts_inactive_queues_and_instantaneous_does_not():
    leaves = {"a": ([10, 1], {}), "b": (None, {"parent": "g"}), "c": ([10, 1], {"parent": "g"})}
    inst = _instance([90, 9], leaves, {"g": {"weight": 2}})
    now, steady = yarn_fair_shares(inst), yarn_fair_shares(inst, steady=True)
    assert now["b"].tolist() == [0, 0] and now["c"].tolist() == [60, 6] and now["a"].tolist() == [30, 3]
    assert steady["b"].tolist() == [30, 3] and steady["c"].tolist() == [30, 3] and steady["a"].tolist() == [30, 3]
    both = [fairalloc.solve(inst, name).bundles for name in ("yarn-fair", "yarn-fair-steady")]
    assert both[0].tolist() == [[30, 3], [0, 0], [60, 6]] and both[1].tolist() == [[30, 3], [30, 3], [30, 3]]


def test_the_program_is_readable_before_it_is_solved():
    inst = fairalloc.load_case("yarn-simple-hierarchical-fair-share-calculation").instance
    program = fairalloc.program(inst, "yarn-fair")
    assert program.pending and [t for t, _ in program.models] == ["root memory round 1"]
    assert "level_default" in program.text() and "capacity_memory" in program.text()
    alloc = program.solve()
    assert alloc.bundles[:, 0].tolist() == [120, 60, 60] and alloc.method == "program"
    assert any("pool_memory" in str(lp) for _, lp in program.models)


# -- random queue trees --------------------------------------------------------------------------
@st.composite
def trees(draw):
    m = draw(st.integers(1, 2))
    capacity = draw(st.lists(st.integers(1, 300), min_size=m, max_size=m))
    amount = st.one_of(st.none(), st.lists(st.integers(0, 120), min_size=m, max_size=m))
    weight = st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])
    groups: dict[str, dict] = {}
    for k in range(draw(st.integers(0, 2))):
        parent = draw(st.sampled_from([None, *groups]))
        groups[f"g{k}"] = {"parent": parent, "weight": draw(weight), "guarantee": draw(amount), "limit": draw(amount)}
    leaves = {}
    for k in range(draw(st.integers(1, 5))):
        spec = {"parent": draw(st.sampled_from([None, *groups])), "weight": draw(weight)}
        spec |= {"guarantee": draw(amount), "limit": draw(amount)}
        request = draw(st.one_of(st.none(), st.lists(st.integers(1, 50), min_size=m, max_size=m)))
        leaves[f"q{k}"] = (request, spec)
    return capacity, leaves, groups


def _truncation_bound(inst, leaf):
    """How far YARN's share of ``leaf`` may be from the water level, per resource.

    In one sibling set of k queues sharing T units, YARN's ratio ``right`` is where the truncated shares
    first reach T, so it is at least the water level R* (each share at most 1 unit below its level) and the
    untruncated shares at ``right`` exceed T by at most k - 1 (every queue loses less than 1 unit to the
    truncation just below ``right``): a share is within max(1, k - 1) of the level.  A parent's error moves
    its children's levels by at most as much (water-filling is 1-Lipschitz in the total), so the bounds add
    up along the path from the root.  k counts every sibling (fixed ones included: a looser bound)."""
    q = inst.queues
    bound = 0.0
    node = leaf
    while node is not None:
        bound += max(1, len(q.children(q.parent[node])) - 1)
        node = q.parent[node]
    return bound + 1e-6 * float(inst.capacity.max())


@settings(max_examples=25, deadline=None)
@given(trees(), st.booleans())
def test_the_fast_path_is_the_program_up_to_truncation(tree, steady):
    inst = _instance(*tree)
    name = "yarn-fair-steady" if steady else "yarn-fair"
    fast = fairalloc.solve(inst, name, method="fast").bundles
    program = fairalloc.solve(inst, name, method="program").bundles
    assert np.all(fast == np.floor(fast))  # whole units
    for i, u in enumerate(inst.users):
        assert np.all(np.abs(fast[i] - program[i]) <= _truncation_bound(inst, u)), (u, fast[i], program[i])


@settings(max_examples=40, deadline=None)
@given(trees())
def test_limits_parents_and_inactive_queues(tree):
    inst = _instance(*tree)
    q = inst.queues
    for steady in (False, True):
        shares = yarn_fair_shares(inst, steady)
        for node, x in shares.items():
            top = np.maximum(np.floor(q.limit[node]), np.nan_to_num(q.guarantee[node]))
            assert np.all(x <= top)  # maxResources, raised to minResources as FSQueue.getMaxShare does
            kids = q.children(node) if q.is_group(node) else []
            if kids:  # children within the parent's share, up to their minShares and the truncation
                mins = sum(np.nan_to_num(q.guarantee[c]) for c in kids)
                within = np.maximum(x, mins) + max(0, len(kids) - 1)
                assert np.all(sum(shares[c] for c in kids) <= within)
        if not steady:
            idle = [u for i, u in enumerate(inst.users) if tree[1][u][0] is None]
            assert all(not shares[u].any() for u in idle)


@settings(max_examples=40, deadline=None)
@given(trees())
def test_instantaneous_is_steady_without_the_inactive_queues(tree):
    capacity, leaves, groups = tree
    inst = _instance(capacity, leaves, groups)
    active = {u: spec for u, spec in leaves.items() if spec[0] is not None}
    if not active:
        return
    q = inst.queues
    alive = {g: spec for g, spec in groups.items() if any(u in active for u in q.leaves(g))}
    now = yarn_fair_shares(inst)
    steady = yarn_fair_shares(_instance(capacity, active, alive), steady=True)
    assert all(now[u].tolist() == steady[u].tolist() for u in active)
