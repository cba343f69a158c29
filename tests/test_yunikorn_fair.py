"""yunikorn-fair: YuniKorn's fair share and queue order, and the fluid equilibrium of its loop."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.analysis.reproduce import reproduce_case
from fairalloc.core.errors import UnknownNameError
from fairalloc.core.queues import Queues
from fairalloc.core.registry import get
from fairalloc.models.yunikorn_fair import YuniKornFair, go_stable_sort, simulate
from fairalloc.testing import queue_trees

#: the queue-sort cases (the scheduling cycles, ``yunikorn-try-preemption-*``, are tests/test_yunikorn_cycle.py's)
CASES = sorted(
    p
    for p in Path(__file__).resolve().parent.parent.joinpath("cases").glob("yunikorn-*.yaml")
    if "\ncycle:" not in p.read_text()
)
FAIR = YuniKornFair()
FAIRNESS_FIRST = FAIR.with_parameters("priority-disabled")
RESOURCES = ("cpu", "mem")


def test_the_ported_cases_are_there():
    assert len(CASES) >= 6


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_ported_case_reproduces(path):
    rows = reproduce_case(fairalloc.load_case(path))
    assert rows and all(r.status in ("ok", "erratum") for r in rows), [
        r for r in rows if r.status not in ("ok", "erratum")
    ]
    assert any(r.status == "ok" for r in rows)


def test_a_wrong_order_or_share_is_caught(tmp_path):
    path = next(p for p in CASES if p.stem == "yunikorn-sort-queues-no-guarantees")
    text = path.read_text()
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(
        text.replace("order: [q3, q2, q1, q0]", "order: [q2, q3, q1, q0]").replace("q2: 0.1, q3", "q2: 0.11, q3", 1)
    )
    bad = [r for r in reproduce_case(fairalloc.load_case(wrong)) if r.status != "ok"]
    assert len(bad) == 2, bad


def test_the_member_and_a_wrong_parameter():
    assert get("yunikorn-fair:priority-disabled").name == "yunikorn-fair:priority-disabled"
    assert not get("yunikorn-fair:priority-disabled").priority_first and get("yunikorn-fair").priority_first
    with pytest.raises(UnknownNameError, match="priority-disabled"):
        get("yunikorn-fair:fifo")


def _instance(capacity, requests, nodes, groups=()):
    """Leaf queues in the order of ``requests`` (``None``: inactive); ``nodes``: ``{name: spec}``."""
    users = list(requests)
    demand = [requests[u] if requests[u] is not None else [0.0] * len(capacity) for u in users]
    bound = [1.0 if requests[u] is not None else 0.0 for u in users]
    specs = {**{g: nodes.get(g, {}) for g in groups}, **{u: nodes.get(u, {}) for u in users}}
    q = Queues.build(list(RESOURCES), specs, list(groups))
    return fairalloc.Instance(capacity, demand, users=users, resources=list(RESOURCES), max_tasks=bound, queues=q)


def test_the_fair_max_is_read_by_position_as_sortqueue_does():
    # q0's own max is 100 (share 0.5); after the first swap sortQueue compares q0 with the cluster's
    # fair max of position 1 (share 0.05) and leaves it before q2 (share 0.3)
    inst = _instance(
        [1000, 1000],
        {"q0": [1000, 1000], "q1": [1000, 1000], "q2": [1000, 1000]},
        {"q0": {"usage": [50, 0], "limit": [100, 1000]}, "q1": {"usage": [200, 0]}, "q2": {"usage": [300, 0]}},
    )
    assert FAIR.shares(inst) == {"q0": 0.5, "q1": 0.2, "q2": 0.3}
    assert FAIR.order(inst) == ["q1", "q0", "q2"]
    assert FAIR.order(inst, positional_fair_max=False) == ["q1", "q2", "q0"]


def test_groups_sort_by_their_own_guarantee_and_their_leaves_inside():
    inst = _instance(
        [100, 100],
        {"a1": [50, 50], "a2": [50, 50], "b1": [50, 50], "idle": None},
        {
            "A": {"guarantee": [80, 80]},
            "B": {"guarantee": [10, 10]},
            "a1": {"parent": "A", "usage": [20, 0]},
            "a2": {"parent": "A", "usage": [10, 0]},
            "b1": {"parent": "B", "usage": [5, 0]},
            "idle": {"parent": "B"},
        },
        groups=("A", "B"),
    )
    shares = FAIR.shares(inst)
    assert shares["A"] == pytest.approx(30 / 80) and shares["B"] == pytest.approx(0.5)
    assert FAIR.order(inst) == ["a2", "a1", "b1"]  # A (0.375) before B (0.5); idle has no pending


def test_a_parent_takes_the_highest_priority_of_its_children_plus_its_offset():
    inst = _instance(
        [100, 100],
        {"a1": [50, 50], "b1": [50, 50], "b2": [50, 50]},
        {
            "A": {"priority": 1},
            "a1": {"parent": "A", "priority": 2},
            "b1": {"parent": "B", "priority": 0, "usage": [1, 0]},
            "b2": {"parent": "B", "priority": 4, "usage": [2, 0]},
            "B": {},
        },
        groups=("A", "B"),
    )
    assert FAIR.order(inst) == ["b2", "b1", "a1"]  # B at 4 beats A at 1 + 2
    assert FAIRNESS_FIRST.order(inst) == ["a1", "b1", "b2"]  # A's usage 0 is lowest


def test_equal_shares_are_broken_by_larger_pending():
    inst = _instance([100, 100], {"q0": [10, 10], "q1": [20, 20]}, {})
    assert FAIR.order(inst) == ["q1", "q0"]  # both at share 0: q1's pending dominates q0's


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=60))
@settings(max_examples=60, deadline=None)
def test_go_stable_sort_is_a_stable_sort_for_a_strict_weak_order(items):
    out = go_stable_sort(items, lambda data, i, j: data[i][0] < data[j][0])
    assert out == sorted(items, key=lambda t: t[0])


@st.composite
def flat_usage(draw):
    n = draw(st.integers(2, 7))
    nodes, requests = {}, {}
    for k in range(n):
        spec = {"usage": [draw(st.integers(0, 50)), draw(st.integers(0, 50))], "priority": draw(st.integers(0, 2))}
        if draw(st.booleans()):
            spec["guarantee"] = [draw(st.integers(1, 60)), draw(st.integers(1, 60))]
        if draw(st.booleans()):
            spec["limit"] = [draw(st.integers(50, 100)), float("inf")]
        nodes[f"q{k}"], requests[f"q{k}"] = spec, [100.0, 100.0]
    return _instance([100, 100], requests, nodes)


@given(flat_usage())
@settings(max_examples=60, deadline=None)
def test_order_sorts_by_share_where_priorities_are_equal(inst):
    for mech in (FAIR, FAIRNESS_FIRST):
        shares, q = mech.shares(inst), inst.queues
        order = mech.order(inst, positional_fair_max=False)
        assert sorted(order) == sorted(inst.users)
        for a, b in zip(order, order[1:]):
            if q.priority[a] == q.priority[b] or not mech.priority_first:
                assert shares[a] <= shares[b], (mech.name, order, shares)
            else:
                assert q.priority[a] > q.priority[b]


@st.composite
def trees(draw, groups=True):
    n = draw(st.integers(2, 4))
    gs = ["g0", "g1"] if groups and draw(st.booleans()) else []
    nodes: dict = {}
    for g in gs:
        nodes[g] = {"parent": "g0"} if g == "g1" and draw(st.booleans()) else {}  # sometimes nested
        if draw(st.booleans()):
            nodes[g]["limit"] = [draw(st.integers(20, 100)), draw(st.integers(20, 100))]
        if draw(st.booleans()):
            nodes[g]["guarantee"] = [draw(st.integers(10, 60)), draw(st.integers(10, 60))]
    requests = {}
    for k in range(n):
        u = f"q{k}"
        requests[u] = [draw(st.integers(1, 60)), draw(st.integers(0, 60))]
        nodes[u] = {"priority": draw(st.integers(0, 1))}
        if gs:
            nodes[u]["parent"] = draw(st.sampled_from(gs))
        if draw(st.booleans()):
            nodes[u]["guarantee"] = [draw(st.integers(5, 60)), draw(st.integers(5, 60))]
        if draw(st.booleans()):
            nodes[u]["limit"] = [draw(st.integers(5, 60)), draw(st.integers(5, 60))]
    return _instance([100, 100], requests, nodes, groups=tuple(gs))


def _fractions(inst, bundles):
    return (bundles / np.where(inst.demand > 0, inst.demand, 1.0)).max(axis=1)


@given(trees())
@settings(max_examples=12, deadline=None)
def test_the_fluid_equilibrium_is_the_limit_of_the_discrete_loop(inst):
    pieces = 300
    # the loop ends when no piece fits: a queue of small pieces then takes the crumbs another
    # queue's piece left, up to (largest piece on a resource it asks for) / (its own use of it)
    D = inst.demand
    crumbs = np.array(
        [max((D[:, j].max() / D[i, j] for j in range(inst.m) if D[i, j] > 0), default=0) for i in range(inst.n)]
    )
    tolerance = (2.0 + inst.n * crumbs) / pieces
    for mech in (FAIR, FAIRNESS_FIRST):
        fluid = _fractions(inst, mech.entitlement(inst)[0])
        loop = _fractions(inst, simulate(inst, pieces, mech.priority_first))
        assert (np.abs(fluid - loop) <= tolerance).all(), (mech.priority_first, fluid, loop, tolerance)


@given(trees(groups=False))
@settings(max_examples=40, deadline=None)
def test_queues_stopped_only_by_the_cluster_hold_equal_shares(inst):
    # requests asking for both resources: the cluster saturates for every growing queue at once
    # (the fairness-first member: priorities would serve one class before the other)
    demand = np.maximum(inst.demand, 1.0)
    inst = fairalloc.Instance(
        [40.0, 40.0],  # a small cluster: most queues stop at its capacity
        demand,
        users=list(inst.users),
        resources=list(RESOURCES),
        max_tasks=[1.0] * inst.n,
        queues=inst.queues,
    )
    bundles = FAIRNESS_FIRST.entitlement(inst)[0]
    x = _fractions(inst, bundles)
    limit = inst.queues.leaf_array("limit", inst.users)
    free = (x < 1 - 1e-9) & ~(bundles >= limit * (1 - 1e-9)).any(axis=1)
    if free.any():
        assert (bundles.sum(axis=0) >= inst.capacity * (1 - 1e-9)).any()
        shares = FAIRNESS_FIRST.shares(inst.with_queues(inst.queues.with_usage(dict(zip(inst.users, bundles)))))
        level = [shares[u] for u, f in zip(inst.users, free) if f]
        assert max(level) - min(level) <= 1e-9 * max(1.0, max(level)), level


def test_guarantees_split_the_cluster_in_proportion():
    inst = _instance(
        [120, 120],
        {"a": [100, 100], "b": [100, 100], "c": [100, 100]},
        {"a": {"guarantee": [60, 60]}, "b": {"guarantee": [40, 40]}, "c": {"guarantee": [20, 20]}},
    )
    assert FAIR.entitlement(inst)[0][:, 0] == pytest.approx([60, 40, 20], rel=1e-12)


def test_a_group_limit_caps_its_subtree_and_the_rest_goes_elsewhere():
    inst = _instance(
        [100, 100],
        {"a1": [80, 80], "a2": [80, 80], "b": [60, 60]},
        {"A": {"limit": [30, 100]}, "a1": {"parent": "A"}, "a2": {"parent": "A"}},
        groups=("A",),
    )
    # A and b grow at equal shares until b has its request (A then at 18), then A to its limit
    assert FAIR.entitlement(inst)[0][:, 0] == pytest.approx([15, 15, 60], rel=1e-12)


def _two_groups_tied(fpga: float) -> fairalloc.Instance:
    """Groups A and B, each a queue on a resource of its own under a guarantee (a1: gpu, 40; b1:
    fpga, 4 x its capacity) and a queue on the shared cpu (a2, b2), 7 cpu, 10 gpu."""
    specs = {
        "A": {}, "B": {}, "a1": {"parent": "A", "guarantee": [np.nan, 40, np.nan]}, "a2": {"parent": "A"},
        "b1": {"parent": "B", "guarantee": [np.nan, np.nan, 4 * fpga]}, "b2": {"parent": "B"},
    }  # fmt: skip
    resources = ["cpu", "gpu", "fpga"]
    return fairalloc.Instance(
        [7, 10, fpga], [[0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0]], users=["a1", "a2", "b1", "b2"],
        resources=resources, max_tasks=[6, 7, 0.6 * fpga, 7], queues=Queues.build(resources, specs, ["A", "B"]),
    )  # fmt: skip


@pytest.mark.parametrize("fpga", [3, 10, 30, 70])
def test_two_groups_waiting_at_one_share_jump_together(fpga):
    """At a share level mu of their children, a1 holds 40 mu gpu (its share gpu / 40) and a2 7 mu
    cpu, so A's share is max(7 mu / 7, 40 mu / 10) = 4 mu; B likewise.  a1 and b1 reach their
    requests (6 gpu, 0.6 fpga's capacity) at mu = 0.15: A and B at share 0.6, a2 and b2 at
    1.05 cpu.  A's share then stays 0.6 (its gpu) while a2 grows to 0.6 x 7 = 4.2 cpu, and so for
    B: the two jump at one level, to 8.4 cpu of 7, and share the jump in proportion: 3.5 each.
    0.6 fpga / fpga rounds to 0.6 or one ulp away depending on fpga: the previous filling let the
    lower of the two roundings jump first (4.2 and 2.8, or 2.8 and 4.2)."""
    bundles = FAIR.entitlement(_two_groups_tied(fpga))[0]
    assert bundles[:, 0] == pytest.approx([0, 3.5, 0, 3.5], rel=1e-12, abs=1e-12)
    assert bundles[[0, 2], [1, 2]] == pytest.approx([6, 0.6 * fpga], rel=1e-12)


def test_priority_first_serves_the_higher_priority_to_its_request():
    inst = _instance([100, 100], {"lo": [80, 10], "hi": [60, 60]}, {"hi": {"priority": 1}})
    assert FAIR.entitlement(inst)[0].ravel() == pytest.approx([40, 5, 60, 60], rel=1e-12)
    assert FAIRNESS_FIRST.entitlement(inst)[0][:, 0] == pytest.approx([50, 50], rel=1e-12)


def test_the_order_of_a_random_tree_is_every_active_leaf_once():
    rng = random.Random(7)
    for _ in range(20):
        reqs = {f"q{k}": ([rng.randint(1, 9), 0] if rng.random() < 0.8 else None) for k in range(6)}
        nodes = {u: {"parent": rng.choice(["A", "B"]), "usage": [rng.randint(0, 5), 0]} for u in reqs}
        inst = _instance([100, 100], reqs, nodes, groups=("A", "B"))
        pending = {u for u, r in reqs.items() if r is not None and r[0] > nodes[u]["usage"][0]}
        assert sorted(FAIR.order(inst)) == sorted(pending)


@given(
    st.integers(2, 6).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.integers(0, 9), min_size=3, max_size=3).filter(any), min_size=n, max_size=n),
            st.lists(st.integers(1, 20), min_size=n, max_size=n),
        )
    )
)
@settings(max_examples=40, deadline=None)
def test_without_guarantees_limits_groups_or_priorities_it_is_drf(rows):
    demand, bounds = rows
    inst = fairalloc.Instance([30, 40, 50], demand, max_tasks=bounds)
    yunikorn, drf = fairalloc.solve(inst, "yunikorn-fair"), fairalloc.solve(inst, "drf")
    assert yunikorn.tasks == pytest.approx(drf.tasks, rel=1e-9, abs=1e-9)


@given(trees(), st.lists(st.floats(0, 2), min_size=4, max_size=4), st.lists(st.booleans(), min_size=4, max_size=4))
@settings(max_examples=60, deadline=None)
def test_the_fillings_cap_check_in_floats_is_numpys(inst, scale, grows):
    # _Fluid.over, step and freeze sum the caps' loads in plain floats: the same floats as numpy's
    # sum over rows, on the caps and resources a growable leaf under them requests
    from fairalloc.models.yunikorn_fair import _Fluid, _load

    fluid = _Fluid(inst, True)
    x = np.minimum(fluid.T, np.array(scale[: inst.n]) * fluid.T.max(initial=1.0))
    growable = np.array(grows[: inst.n]) & (fluid.T > 0)
    loads, bounds = [], []
    for leaves, cap in fluid.caps:
        asks = (fluid.D[leaves[growable[leaves]]] > 0).any(axis=0) & np.isfinite(cap)
        loads += (x[leaves, None] * fluid.D[leaves]).sum(axis=0)[asks].tolist()
        bounds += cap[asks].tolist()
    columns = fluid._cap_columns(growable)
    assert [_load(x.tolist(), terms) for _, terms in columns] == loads
    assert [bound for bound, _ in columns] == bounds
    x0 = np.zeros(inst.n)
    numpy_over = bool((growable & (x >= fluid.T) & (x0 < fluid.T)).any()) or any(
        load > bound for load, bound in zip(loads, bounds)
    )
    assert fluid.over(x, x0, growable) == numpy_over


@given(queue_trees(max_queues=40), st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_fair_max_and_priority_a_level_at_a_time_are_the_path_walks(inst, seed):
    # fair_max and current_priority read the tree a level at a time; walked path by path, from the
    # root down (a child's limit wins) and from each group's leaves up, they are the same
    from fairalloc.models.yunikorn_fair import MIN_PRIORITY, current_priority, fair_max

    q = inst.queues
    walked = {}
    for v in (*q.groups, *inst.users):
        fm, path = np.asarray(inst.capacity, dtype=float), [v]
        while q.parent[path[-1]] is not None:
            path.append(q.parent[path[-1]])
        for node in reversed(path):
            fm = np.where(np.isfinite(q.limit[node]), q.limit[node], fm)
        walked[v] = fm
    got = fair_max(q, inst.capacity)
    assert set(got) == set(walked) and all(np.array_equal(got[v], walked[v]) for v in walked)
    active = dict(zip(inst.users, (np.random.default_rng(seed).random(inst.n) < 0.6).tolist()))
    prio = current_priority(q, active)

    def expected(v):
        if not q.is_group(v):
            return min(max(q.priority[v], MIN_PRIORITY), 2.0**31 - 1)
        live = [expected(c) for c in q.children(v) if any(active[u] for u in q.leaves(c))]
        return max(live) + q.priority[v] if live else MIN_PRIORITY

    assert prio == {v: expected(v) for v in walked}


@given(queue_trees(max_queues=30), st.floats(0, 1.5), st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_the_cap_arrays_add_as_the_plain_sums(inst, scale, seed):
    # _Caps reads a one-leaf cap in one product and a larger one by np.add.accumulate: the same
    # floats as _load's sum in order over _cap_columns, and the same leaves frozen
    from fairalloc.core.tolerances import SATURATION
    from fairalloc.models.yunikorn_fair import _Fluid, _load

    fluid = _Fluid(inst, True)
    rng = np.random.default_rng(seed)
    x = np.minimum(fluid.T, rng.uniform(0, scale, inst.n) * fluid.T.max(initial=1.0))
    growable = (rng.random(inst.n) < 0.7) & (fluid.T > 0)
    columns, caps = fluid._cap_columns(growable), fluid._caps(growable)
    assert caps.loads(x).tolist() == [_load(x.tolist(), terms) for _, terms in columns]
    assert caps.bounds.tolist() == [bound for bound, _ in columns]
    frozen = {
        i for bound, terms in columns if _load(x.tolist(), terms) >= bound * (1 - SATURATION) for i, d in terms if d > 0
    }
    saturated = caps.loads(x) >= caps.bounds * (1 - SATURATION)
    assert set(caps.askers[saturated[caps.asking]].tolist()) == frozen


def _bisected(priority_first: bool):
    """The filling with each event found by bisecting the level (47 halvings) on the root's growth
    evaluated at any level: the search the knot bisection of ``_Fluid.event`` replaced."""
    from fairalloc.models.yunikorn_fair import _Fluid, _right_at

    class Bisected(_Fluid):
        def grow(self, level, x0, growable):
            x = x0.copy()
            leaves, groups = self._served_leaves(None, growable)
            x[leaves] = self.leaves_at(leaves, np.array([level]), x0)[1][0]
            for g in groups:
                x[self.under[g]] = _right_at(*self.response_of(g, x0, growable), np.array([level]))[0]
            return x

        def event(self, x0, growable):
            lo, hi = 0.0, self.top
            while hi - lo > 1e-14 * self.top:
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if self.over(self.grow(mid, x0, growable), x0, growable) else (mid, hi)
            return self.grow(lo, x0, growable), self.grow(hi, x0, growable)

    return lambda inst: Bisected(inst, priority_first).fill()[0]


def _same_filling(inst, priority_first: bool) -> None:
    from fairalloc.core.errors import FairallocError
    from fairalloc.core.tolerances import AGREEMENT
    from fairalloc.models.yunikorn_fair import _Fluid

    try:
        x = _Fluid(inst, priority_first).fill()[0]
    except FairallocError:  # a configuration YuniKorn refuses (guarantees beyond the capacity)
        return
    assert np.abs(x - _bisected(priority_first)(inst)).max() <= AGREEMENT * max(1.0, np.abs(x).max())


@pytest.mark.parametrize("priority_first", [True, False])
def test_the_events_found_on_the_knots_are_the_bisections(priority_first):
    # the event search reads the growth at its knots only; a bisection of the level finds the same
    # events (on the verifier's random queue instances)
    from fairalloc.analysis.falsify import InstanceSpace, random_queue_instance

    for seed in range(200):
        rng = np.random.default_rng(seed)
        _same_filling(random_queue_instance(InstanceSpace(queues=True), "strategy_proofness", rng), priority_first)


@given(trees(), st.booleans())
@settings(max_examples=60, deadline=None)
def test_the_events_found_on_the_knots_are_the_bisections_on_trees(inst, priority_first):
    _same_filling(inst, priority_first)
