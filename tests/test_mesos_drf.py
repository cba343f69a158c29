"""mesos-drf: the Mesos DRF sorter's shares and order, and the allocator's equilibrium."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from frozen_trees import frozen
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.analysis.reproduce import reproduce_case
from fairalloc.core.errors import CaseError
from fairalloc.core.queues import Queues
from fairalloc.models.mesos_drf import MesosDRF

CASES = sorted(Path(__file__).resolve().parent.parent.joinpath("cases").glob("mesos-*.yaml"))
MESOS = MesosDRF()


def test_the_ported_cases_are_there():
    assert len(CASES) >= 60


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_ported_case_reproduces(path):
    rows = reproduce_case(fairalloc.load_case(path))
    assert rows and all(r.status == "ok" for r in rows), [r for r in rows if r.status != "ok"]


def _queues(resources, nodes, groups=()):
    return Queues.build(resources, nodes, list(groups))


def _instance(capacity, requests, nodes, groups=(), resources=("cpus", "mem")):
    """Leaf queues in the order of ``requests`` (``None``: inactive), nodes: ``{name: spec}``."""
    users = list(requests)
    demand = [requests[u] if requests[u] is not None else [0.0] * len(capacity) for u in users]
    bound = [1.0 if requests[u] is not None else 0.0 for u in users]
    q = _queues(
        list(resources), {**{g: nodes.get(g, {}) for g in groups}, **{u: nodes.get(u, {}) for u in users}}, groups
    )
    weights = [q.weight[u] for u in users]
    return fairalloc.Instance(
        capacity, demand, users=users, resources=list(resources), max_tasks=bound, weights=weights, queues=q
    )


def test_a_wrong_order_or_share_is_caught(tmp_path):
    first = CASES[0].with_name("mesos-drf-1.yaml")
    text, source = first.read_text(), first.stem
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(text.replace(f"name: {source}", "name: wrong").replace("order: [a, b]", "order: [b, a]"))
    assert "order: [b, a]" in wrong.read_text()
    statuses = {r.claim: r.status for r in reproduce_case(fairalloc.load_case(wrong))}
    assert statuses["mesos-drf: order"] != "ok"
    assert statuses["mesos-drf: share a"] == "ok"


def test_allocation_count_tie_break():
    """DRFSorterTest.AllocationCountTieBreak (apache/mesos src/tests/sorter_tests.cpp, commit
    c1b42f79d157aa900be5cbb0c1023f1479962aa7, Apache-2.0): equal shares, ordered by how many times
    each role was allocated.  Ported here: a case file has no field for allocation counts."""
    usage = {u: {"usage": [3, 3]} for u in "abcde"}
    inst = _instance([100, 100], {u: [1, 1] for u in "abcde"}, usage)
    assert MESOS.order(inst, {"a": 1, "b": 1, "c": 3, "d": 2, "e": 1}) == ["a", "b", "e", "d", "c"]
    emptied = _instance([100, 100], {u: [1, 1] for u in "abcde"}, {**usage, "c": {}})
    assert MESOS.order(emptied, {"a": 1, "b": 1, "c": 3, "d": 2, "e": 1}) == ["c", "a", "b", "e", "d"]
    assert MESOS.order(inst, {"a": 1, "b": 1, "c": 4, "d": 2, "e": 1}) == ["a", "b", "e", "d", "c"]
    assert MESOS.order(inst, {"a": 1, "b": 1, "c": 5, "d": 2, "e": 1}) == ["a", "b", "e", "d", "c"]
    a_off = _instance([100, 100], {"a": None, **{u: [1, 1] for u in "bcde"}}, usage)
    assert MESOS.order(a_off, {"a": 2, "b": 1, "c": 5, "d": 2, "e": 1}) == ["b", "e", "d", "c"]
    assert MESOS.order(inst, {"a": 2, "b": 1, "c": 5, "d": 2, "e": 1}) == ["b", "e", "a", "d", "c"]


def test_a_group_counts_its_leaves_allocations_unless_given():
    nodes = {"g/x": {"parent": "g", "usage": [1, 0]}, "y": {"usage": [1, 0]}}
    inst = _instance([10, 10], {"g/x": [1, 1], "y": [1, 1]}, nodes, groups=["g"])
    assert MESOS.order(inst) == ["g/x", "y"]  # tie: by name
    assert MESOS.order(inst, {"g/x": 2, "y": 1}) == ["y", "g/x"]
    assert MESOS.order(inst, {"g/x": 2, "g": 0, "y": 1}) == ["g/x", "y"]


def test_shares_of_groups_are_their_subtrees():
    nodes = {"g": {"weight": 2}, "g/x": {"parent": "g", "usage": [4, 1]}, "g/y": {"parent": "g", "usage": [2, 5]}}
    inst = _instance([10, 20], {"g/x": [1, 1], "g/y": [1, 1]}, nodes, groups=["g"])
    assert MESOS.shares(inst) == pytest.approx({"g/x": 0.4, "g/y": 0.25, "g": 0.3})


def test_guarantees_beyond_the_capacity_are_refused():
    nodes = {"a": {"guarantee": [60, np.nan]}, "b": {"guarantee": [50, np.nan]}}
    inst = _instance([100, 100], {"a": [1, 1], "b": None}, nodes)
    with pytest.raises(CaseError, match="^guarantee: "):
        MESOS.fast(inst)


def test_guarantees_under_groups_beyond_the_capacity_are_refused():
    nodes = {"g/x": {"parent": "g", "guarantee": [6, np.nan]}, "g/y": {"parent": "g", "guarantee": [6, np.nan]}}
    inst = _instance([10, 10], {"g/x": [1, 1], "g/y": [1, 1]}, nodes, groups=["g"])
    with pytest.raises(CaseError, match="^guarantee: the guarantees under root need 12 cpus, more than the 10"):
        MESOS.fast(inst)


def test_a_guarantee_is_a_quantity_not_a_bundle():
    """Regression (issue 36, item 4): 10 cpus of 15 guaranteed to a and 10 mem of 15 to b were
    refused as needing 20 cpus, a's guarantee being counted as its bundle of 10 cpus and 10 mem.
    In Mesos the guarantee is a quantity per resource (apache/mesos at c1b42f79,
    ``src/master/allocator/mesos/hierarchical.cpp``, ``__generateOffers`` stage 1: the
    guaranteed resources are offered unconditionally, the others only from the surplus over
    ``requiredHeadroom``).  By hand: a and b grow alike (keys 20/15), each holding its unused
    guarantee back: cpus ``max(10, 20 u) + 20 u <= 15`` gives u = 1/4, 5 cpus and 5 mem each,
    and both resources are then full or held (a's 5 unused cpus, b's 5 unused mem)."""
    nodes = {"a": {"guarantee": [10, np.nan]}, "b": {"guarantee": [np.nan, 10]}}
    inst = _instance([15, 15], {"a": [20, 20], "b": [20, 20]}, nodes)
    fast = MESOS.fast(inst)
    np.testing.assert_allclose(fast.bundles, [[5, 5], [5, 5]], rtol=1e-12)
    assert fast.info["guarantees_cut"] == ["root"]
    np.testing.assert_allclose(MESOS.program(inst).solve().bundles, [[5, 5], [5, 5]], rtol=1e-7)


def test_a_group_holds_its_childrens_guarantees_resource_by_resource():
    """Regression (issue 36, item 4), from ``random_queue_tree(default_rng(0), 50, 3)``, refused
    as "the guarantees under root need 7701.94 cpu" with 866 guaranteed: a group's lower bound
    was its children's ``lo_c / a_c``, which scales every other child up with the guaranteed
    one.  Here g holds x (4 cpus guaranteed) and y (none), each asking (20, 20): one unit of g
    is (20, 20) (x and y half each), so g was held at 0.4 units, (8, 8), and with z's 5 mem
    guaranteed (z at (5, 5)) 13 cpus were needed of 10.  Resource by resource g needs x's (4, 4),
    0.2 units.  By hand: g and z both have key 2; g grows from t = 0.4, z from t = 0.5, where
    ``20 u_g + 20 u_z = 5 + 5`` fills cpus: g (5, 5), z (5, 5); inside g, x stays at (4, 4) and y
    grows to (1, 1)."""
    nodes = {"g/x": {"parent": "g", "guarantee": [4, np.nan]}, "g/y": {"parent": "g"}, "z": {"guarantee": [np.nan, 5]}}
    inst = _instance([10, 10], {"g/x": [20, 20], "g/y": [20, 20], "z": [20, 20]}, nodes, groups=["g"])
    expected = [[4, 4], [1, 1], [5, 5]]
    np.testing.assert_allclose(MESOS.fast(inst).bundles, expected, rtol=1e-12)
    np.testing.assert_allclose(MESOS.program(inst).solve().bundles, expected, rtol=1e-7)


def test_the_tree_of_the_issue_is_answered_within_its_guarantees():
    """The tree of the report: answered, every node within its limit, nothing over the capacity,
    and its guarantees' bundles fit together (none had to be shared)."""
    tree = frozen("tree-50-3-2-seed0")
    fast = MESOS.fast(tree)
    assert fast.info["guarantees_cut"] == []
    assert (fast.bundles.sum(axis=0) <= tree.capacity * (1 + 1e-9)).all()
    q = tree.queues
    for v in [*tree.users, *q.groups]:
        rows = [tree.users.index(leaf) for leaf in (q.leaves(v) if q.is_group(v) else [v])]
        assert (fast.bundles[rows].sum(axis=0) <= q.limit[v] * (1 + 1e-9) + 1e-12).all()


@pytest.mark.parametrize("node", ["a", "g"])
def test_a_guarantee_above_its_limit_is_refused_as_mesos_refuses_it(node):
    """QuotaConfig validation (src/master/quota.cpp): guarantees must lie within the limits."""
    nodes = {"g": {}, "a": {"parent": "g"}, node: {"guarantee": [6, np.nan], "limit": [2, np.inf]}}
    nodes[node].update({"parent": "g"} if node == "a" else {})
    inst = _instance([10, 10], {"a": [1, 1], "b": [1, 1]}, nodes, ["g"])
    table = "groups" if node == "g" else "users"
    with pytest.raises(CaseError, match=rf"^{table}\.{node}\.guarantee\.cpus: 6 is above the limit 2: Mesos refuses"):
        MESOS.fast(inst)


def test_a_limit_caps_and_the_rest_goes_to_the_others():
    inst = _instance([10, 10], {"a": [10, 10], "b": [10, 10]}, {"a": {"limit": [2, np.inf]}})
    assert MESOS.fast(inst).bundles.tolist() == [[2, 2], [8, 8]]


# -- equilibrium: fast filling against the LP sequence, and against drf ------------------------------
@st.composite
def queue_instances(draw):
    m = draw(st.integers(1, 3))
    R = np.array(draw(st.lists(st.integers(1, 20), min_size=m, max_size=m)), dtype=float)
    groups = [f"g{k}" for k in range(draw(st.integers(0, 2)))]
    n = draw(st.integers(1, 5))
    amounts = st.lists(st.integers(0, 6), min_size=m, max_size=m)

    def bound(frac, missing):
        given = draw(st.lists(st.sampled_from([None, 0.1, 0.25, 0.5, 0.9]), min_size=m, max_size=m))
        return [missing if g is None else g * frac * R[j] for j, g in enumerate(given)] if draw(st.booleans()) else None

    nodes = {}
    for name in [*groups, *(f"u{k}" for k in range(n))]:
        spec: dict = {"weight": draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))}
        if name.startswith("u") and groups:
            spec["parent"] = draw(st.sampled_from([None, *groups]))
        g, lim = bound(0.5 if name.startswith("g") else 0.3, np.nan), bound(1.0, np.inf)
        if g is not None and lim is not None:  # Mesos refuses a guarantee above its limit
            lim = [max(b, 0.0 if np.isnan(a) else a) for a, b in zip(g, lim, strict=True)]
        spec.update({k: v for k, v in (("guarantee", g), ("limit", lim)) if v is not None})
        nodes[name] = spec
    requests = {}
    for k in range(n):
        row = draw(amounts)
        requests[f"u{k}"] = None if not any(row) or draw(st.integers(0, 5)) == 0 else row
    res = [f"r{j}" for j in range(m)]
    return _instance(R, requests, nodes, groups, res)


@settings(max_examples=100, deadline=None)
@given(queue_instances())
def test_fast_filling_equals_the_lp_sequence(inst):
    try:
        fast = MESOS.fast(inst).bundles
    except CaseError:
        with pytest.raises(CaseError):
            MESOS.program(inst).solve()
        return
    program = MESOS.program(inst).solve().bundles
    scale = float(inst.capacity.max())
    np.testing.assert_allclose(fast, program, rtol=1e-6, atol=1e-7 * scale)
    assert (fast.sum(axis=0) <= inst.capacity * (1 + 1e-9) + 1e-12).all()
    _check_guarantees_and_limits(inst, fast)


def _check_guarantees_and_limits(inst, bundles):
    """Every leaf gets the multiple of its request its guarantee allows (unless its limit or a
    group's limit is lower, or the guarantees' bundles did not fit together and were shared);
    no node exceeds its limit."""
    q = inst.queues
    fast = MESOS.fast(inst)
    tasks = fast.tasks
    for i, u in enumerate(inst.users):
        r, g = inst.demand[i] * inst.bounds()[i], np.nan_to_num(q.guarantee[u], nan=0.0)
        owed = (r > 0) & (g > 0)
        capped = any(np.isfinite(q.limit[v]).any() for v in [u, *q.path(u)])
        if owed.any() and not capped and not fast.info["guarantees_cut"]:
            assert tasks[i] >= min(1.0, float(np.min(g[owed] / r[owed]))) * (1 - 1e-9)
    for v in [*inst.users, *q.groups]:
        rows = [inst.users.index(leaf) for leaf in q.leaves(v)] if q.is_group(v) else [inst.users.index(v)]
        assert (bundles[rows].sum(axis=0) <= q.limit[v] * (1 + 1e-9) + 1e-12).all()


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 3).flatmap(
        lambda m: st.tuples(
            st.lists(st.integers(1, 30), min_size=m, max_size=m),
            st.lists(
                st.tuples(
                    st.lists(st.integers(0, 5), min_size=m, max_size=m).filter(any),
                    st.sampled_from([None, 1.0, 2.5, 4.0]),
                    st.sampled_from([0.5, 1.0, 3.0]),
                ),
                min_size=1,
                max_size=5,
            ),
        )
    )
)
def test_flat_without_bounds_is_drf(data):
    capacity, rows = data
    bounds = [np.inf if t is None else t for _, t, _ in rows]
    inst = fairalloc.Instance(capacity, [d for d, _, _ in rows], max_tasks=bounds, weights=[w for _, _, w in rows])
    drf = fairalloc.solve(inst, "drf").tasks
    np.testing.assert_allclose(MESOS.fast(inst).tasks, drf, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(MESOS.program(inst).solve().tasks, drf, rtol=1e-6, atol=1e-9)


def test_a_group_grows_with_its_children_at_equal_shares():
    """g holds a cpu-only and a mem-only role; z needs both: g and z get half each, and inside g
    each child gets its half of the resource it needs (nothing idle)."""
    nodes = {"g/x": {"parent": "g"}, "g/y": {"parent": "g"}}
    inst = _instance([10, 10], {"g/x": [10, 0], "g/y": [0, 10], "z": [10, 10]}, nodes, groups=["g"])
    expected = [[5, 0], [0, 5], [5, 5]]
    np.testing.assert_allclose(MESOS.fast(inst).bundles, expected, rtol=1e-12)
    np.testing.assert_allclose(MESOS.program(inst).solve().bundles, expected, rtol=1e-7)


def test_the_program_is_a_sequence_of_named_lps():
    case = fairalloc.load_case("mesos-quota-headroom")
    prog = MESOS.program(case.instance)
    assert prog.pending
    prog.solve()
    assert prog.models and "level" in str(prog.models[0][1])
