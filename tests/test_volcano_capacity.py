"""volcano-capacity: Volcano's configured ``deserved``, flat and hierarchical, its quirks, and its ported cases."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
import fairalloc.models.volcano_capacity as vc
import fairalloc.models.volcano_proportion as vp
from fairalloc.analysis.reproduce import reproduce_case
from fairalloc.core.queues import Queues
from fairalloc.core.registry import get
from fairalloc.core.tolerances import FIT

HERE = Path(__file__).resolve().parent.parent / "cases"
CASES = sorted(HERE.glob("volcano-capacity-*.yaml"))
#: what the Go tests assert of each ported scenario: the queue that asks, and whether it gets in
ADMITS = {
    "volcano-capacity-enqueue-and-allocatable-case0": {"q1": True},
    "volcano-capacity-enqueue-and-allocatable-case1": {"q2": True},
    "volcano-capacity-enqueue-and-allocatable-case2": {"q1": False},
    "volcano-capacity-without-hierarchy-case0": {"q1": True},
    "volcano-capacity-without-hierarchy-case1": {"q2": False},
    "volcano-capacity-without-hierarchy-case4": {"q8": True, "q9": True},
    "volcano-capacity-without-hierarchy-case10": {"queue21": False},
    "volcano-capacity-hierarchy-case0": {"q11": True},
    "volcano-capacity-hierarchy-case2": {"q31": True},
    "volcano-capacity-hierarchy-case4": {"q33": False},
    "volcano-capacity-hierarchy-case5": {"q51": True},
    "volcano-capacity-hierarchy-case8": {"q81": True},
    "volcano-capacity-hierarchy-case9": {"q91": True},
    "volcano-capacity-hierarchy-case11": {"case11_queue11": True, "case11_queue12": True},
}
CPU_MEM = ("cpu", "memory")


def _instance(capacity, nodes, groups=(), resources=CPU_MEM):
    """``nodes``: ``{name: {request: [...], usage, deserved, guarantee, limit, parent, priority}}``
    over groups and leaf queues (``request`` only on leaves)."""
    users = [n for n in nodes if n not in groups]
    m = len(resources)
    demand = [nodes[u].get("request") or [0.0] * m for u in users]
    bound = [1.0 if nodes[u].get("request") is not None else 0.0 for u in users]
    specs = {n: {k: v for k, v in spec.items() if k != "request"} for n, spec in nodes.items()}
    q = Queues.build(list(resources), specs, list(groups))
    return fairalloc.Instance(capacity, demand, users=users, resources=list(resources), max_tasks=bound, queues=q)


def _bundles(inst):
    return fairalloc.solve(inst, "volcano-capacity").bundles


# -- the worked examples and the ported cases -------------------------------------------------------
def test_the_docstring_example():
    assert doctest.testmod(vc).failed == 0
    assert doctest.testmod(vc).attempted >= 5


def test_the_ported_cases_are_there():
    names = {p.stem for p in CASES}
    assert set(ADMITS) <= names and "volcano-capacity-update-queue-attr-share" in names
    for path in CASES:
        case = fairalloc.load_case(path)
        assert "capacity/capacity_test.go" in case.source and "ed72c7c815a9" in case.source, path.stem


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_every_ported_case_reproduces(path):
    rows = reproduce_case(fairalloc.load_case(path))
    assert rows and all(r.status == "ok" for r in rows), [r for r in rows if r.status != "ok"]


@pytest.mark.parametrize("name", sorted(ADMITS))
def test_the_go_tests_binds_and_enqueues_are_what_the_queues_admit(name):
    assert vc.admits(fairalloc.load_case(name).instance) == ADMITS[name]


def test_a_hand_computed_tree():
    """A root queue of capability 12 cpus over ``org`` (capability 8, guarantee 2, deserved 6) and
    ``c`` (guarantee 4, deserved 2); ``org`` over ``a`` (guarantee 3, deserved 1) and ``b``
    (deserved 5, capability 4).  By hand:

    * deserved: a ``max(1, 3) = 3``, b ``5`` (above its capability 4: the hierarchical mode does not
      cap it), c ``max(2, 4) = 4``; org ``max(6, 2) = 6``; the root the sum of its children's, 10;
    * realCapability: root 12; below it the guarantees 2 + 4 leave ``12 - 6 = 6``: org
      ``min(6 + 2, 8) = 8``, c ``min(6 + 4, 12 inherited) = 10``; below org the guarantee 3 leaves
      ``8 - 3 = 5``: a ``min(5 + 3, 8 inherited) = 8``, b ``min(5 + 0, 4) = 4``;
    * shares for usage a 3, b 2, c 0: a 3/3 = 1, b 2/5 = 0.4, c 0, org 5/6;
    * order: a and b share org, so they compare by their own shares (b first); a or b against c
      compare org (5/6) with c (0): c, b, a;
    * admission of pending 2 (a), 2 (b), 11 (c): a 5 <= 8, org 7 <= 8, root 7 <= 12; b 4 <= 4;
      c 11 > 10.
    The cluster's 16 cpus enter nowhere."""
    inst = _instance(
        [16],
        {
            "root": {"limit": [12]},
            "org": {"parent": "root", "limit": [8], "guarantee": [2], "deserved": [6]},
            "a": {"parent": "org", "guarantee": [3], "deserved": [1], "request": [5], "usage": [3]},
            "b": {"parent": "org", "deserved": [5], "limit": [4], "request": [4], "usage": [2]},
            "c": {"parent": "root", "guarantee": [4], "deserved": [2], "request": [11]},
        },
        groups=("root", "org"),
        resources=("cpu",),
    )
    assert _bundles(inst)[:, 0].tolist() == [3, 5, 4]
    attrs = vc.capacity_attrs(inst)
    real = {v: attrs.real[v][0] / 1000 for v in ("root", "org", "a", "b", "c")}
    assert real == {"root": 12, "org": 8, "a": 8, "b": 4, "c": 10}
    assert attrs.deserved["root"][0] / 1000 == 10 and attrs.deserved["org"][0] / 1000 == 6
    m = get("volcano-capacity")
    assert m.shares(inst) == pytest.approx({"a": 1, "b": 0.4, "c": 0, "root": 0.5, "org": 5 / 6}, rel=1e-12)
    assert m.order(inst) == ["c", "b", "a"]
    assert vc.admits(inst) == {"a": True, "b": True, "c": False}


# -- what Volcano's arithmetic does -----------------------------------------------------------------
def test_deserved_can_promise_more_than_the_cluster():
    inst = _instance(
        [10, 10], {"a": {"deserved": [8, 1], "request": [1, 1]}, "b": {"deserved": [8, 1], "request": [1, 1]}}
    )
    assert _bundles(inst)[:, 0].tolist() == [8, 8]


def test_the_guarantee_floor_comes_after_the_capability():
    inst = _instance([10, 10], {"a": {"deserved": [1, 1], "limit": [2, 10], "guarantee": [3, 0], "request": [1, 1]}})
    assert _bundles(inst)[0].tolist() == [3, 1]


def test_flat_a_queue_without_a_job_deserves_nothing_hierarchical_every_queue_deserves():
    nodes = {"a": {"deserved": [2, 2], "request": [1, 1]}, "b": {"deserved": [3, 3]}}
    assert _bundles(_instance([10, 10], nodes)).tolist() == [[2, 2], [0, 0]]
    tree = {"root": {}, **{n: {**spec, "parent": "root"} for n, spec in nodes.items()}}
    assert _bundles(_instance([10, 10], tree, groups=("root",))).tolist() == [[2, 2], [3, 3]]


def test_a_cpu_capability_of_zero_is_unlimited_flat_and_the_parents_in_a_tree():
    flat = _instance([10, 10], {"a": {"deserved": [9, 1], "limit": [0, 5], "request": [1, 1]}})
    assert _bundles(flat)[0].tolist() == [9, 1]
    tree = _instance(
        [10, 10],
        {"root": {"limit": [4, 4]}, "a": {"parent": "root", "limit": [0, 5], "request": [5, 1]}},
        groups=("root",),
    )
    assert vc.capacity_attrs(tree).real["a"].tolist() == [4000, 4]
    assert vc.admits(tree) == {"a": False}


def test_a_root_capability_without_cpu_gives_no_queue_any_cpu():
    res = ("cpu", "nvidia.com/gpu")
    leaf = {"parent": "root", "request": [1, 1]}
    gpus_only = _instance([8, 4], {"root": {"limit": [np.inf, 4]}, "a": leaf}, groups=("root",), resources=res)
    assert vc.admits(gpus_only) == {"a": False}
    unlimited = _instance([8, 4], {"root": {}, "a": leaf}, groups=("root",), resources=res)
    assert vc.admits(unlimited) == {"a": True}


def test_registered_and_a_queue_policy():
    m = get("volcano-capacity")
    assert m.per_resource and m.has_shares and m.has_order and m.section == "9.2.1"


# -- random configurations: against independent computations, and what holds everywhere --------------
@st.composite
def _flat(draw):
    n = draw(st.integers(1, 5))
    cap = [draw(st.integers(1, 100)) for _ in CPU_MEM]
    nodes = {}
    for k in range(n):
        spec: dict = {}
        if draw(st.integers(0, 4)) > 0:
            spec["request"] = [draw(st.sampled_from([0.5, 1, 3, 10, 40])) for _ in CPU_MEM]
        for field, values in (
            ("deserved", [0, 1, 5, 30, 120]),
            ("limit", [0, 2, 20, 60]),
            ("guarantee", [0, 1, 4, 30]),
        ):
            if draw(st.booleans()):
                spec[field] = [draw(st.sampled_from(values)) for _ in CPU_MEM]
        nodes[f"q{k}"] = spec
    return _instance(cap, nodes)


@settings(max_examples=80, deadline=None)
@given(_flat())
def test_flat_matches_proportions_real_capability_and_holds_its_bounds(inst):
    q = inst.queues
    users = list(inst.users)
    p = vp.proportion_input(inst, np.ones(inst.n))
    real = vp.real_capability(p) / vp.volcano_units(CPU_MEM)
    d = np.nan_to_num(q.leaf_array("deserved", users))
    g = np.nan_to_num(q.leaf_array("guarantee", users))
    cap = np.where(q.leaf_array("limit", users) <= 0, np.inf, q.leaf_array("limit", users))
    got = _bundles(inst)
    live = p.active
    # a second computation: proportion's realCapability, then the cap and the floor
    assert np.allclose(got[live], np.maximum(np.minimum(d, real), g)[live], rtol=FIT, atol=0)
    assert np.all(got[~live] == 0)
    assert np.all(got[live] >= g[live])  # guarantees are met when demanded
    assert np.all(got <= np.maximum(cap, g))  # no queue above its capability but for its guarantee
    assert np.all(got <= np.maximum(d, g))
    if np.all(np.maximum(d, g)[live].sum(axis=0) <= inst.capacity):  # promises within the cluster stay so
        assert np.all(got.sum(axis=0) <= inst.capacity)


@st.composite
def _tree(draw):
    """A root queue (with or without a capability, or the case's root), one or two groups, leaves."""
    cap = [draw(st.integers(1, 100)) for _ in CPU_MEM]
    amounts = st.sampled_from([np.nan, 0, 1, 3, 10, 40])
    nodes: dict[str, dict] = {}
    groups = []
    top = None
    if draw(st.booleans()):
        top = "root"
        groups.append(top)
        nodes[top] = {"limit": [draw(st.sampled_from([np.inf, 20, 60])) for _ in CPU_MEM]}
    for k in range(draw(st.integers(1, 2))):
        groups.append(f"g{k}")
        nodes[f"g{k}"] = {"parent": top}
    for k in range(draw(st.integers(1, 5))):
        nodes[f"q{k}"] = {"parent": draw(st.sampled_from(groups[1:] if top else groups))}
    for name, spec in nodes.items():
        for field in ("deserved", "guarantee"):
            spec[field] = [draw(amounts) for _ in CPU_MEM]
        if name != top:
            spec["limit"] = [draw(st.sampled_from([np.inf, 0, 2, 20, 60])) for _ in CPU_MEM]
        if name not in groups and draw(st.integers(0, 3)) > 0:
            spec["request"] = [draw(st.sampled_from([1, 3, 10])) for _ in CPU_MEM]
            spec["usage"] = [draw(st.sampled_from([0, 1, 3])) for _ in CPU_MEM]
    return _instance(cap, nodes, groups=tuple(groups))


def _reference(q: Queues) -> tuple[dict, dict]:
    """deserved and realCapability (cpu and memory, the case's units) by plain recursion."""
    top = q.children(None)
    root = top[0] if len(top) == 1 and q.is_group(top[0]) else None
    given = [] if root is None else [v for v in q.limit[root] if np.isfinite(v)]
    root_cap = (
        [np.inf, np.inf]
        if not any(v * u >= 0.1 for v, u in zip(given, (1000, 1)))
        else [v if np.isfinite(v) else 0.0 for v in q.limit[root]]
    )
    deserved: dict = {}
    real: dict = {root: root_cap}

    def walk(node, capability):
        kids = q.children(node)
        taken = [sum(0.0 if np.isnan(q.guarantee[c][j]) else q.guarantee[c][j] for c in kids) for j in range(2)]
        for c in kids:
            g = [0.0 if np.isnan(v) else v for v in q.guarantee[c]]
            own = [v if np.isfinite(v) and v > 0 else capability[j] for j, v in enumerate(q.limit[c])]
            left = [real[node][j] - taken[j] if real[node][j] > taken[j] else 0.0 for j in range(2)]
            real[c] = [min(left[j] + g[j], own[j]) for j in range(2)]
            deserved[c] = [max(0.0 if np.isnan(v) else v, g[j]) for j, v in enumerate(q.deserved[c])]
            walk(c, own)

    walk(root, root_cap)
    return deserved, real


@settings(max_examples=80, deadline=None)
@given(_tree())
def test_hierarchical_matches_a_plain_recursion_and_holds_its_bounds(inst):
    q = inst.queues
    unit = vp.volcano_units(CPU_MEM)
    attrs = vc.capacity_attrs(inst)
    deserved, real = _reference(q)
    for v in real:
        assert np.allclose(attrs.real[v] / unit, real[v], rtol=FIT, atol=0), v
    got = _bundles(inst)
    for i, u in enumerate(inst.users):
        assert np.allclose(got[i], deserved[u], rtol=FIT, atol=0), u
        assert np.all(got[i] >= np.nan_to_num(q.guarantee[u]))  # guarantees met, demanded or not
    for v in (*q.groups, *inst.users):
        parent = q.parent[v]
        if parent is None and v in q.groups and len(q.children(None)) == 1:
            continue  # the root queue itself
        own = q.limit[v]
        assert np.all((attrs.real[v] / unit <= own) | ~(own > 0))  # never above its own capability
        siblings = np.nansum([q.guarantee[c] for c in q.children(parent)], axis=0)
        fits = attrs.real[parent] / unit >= siblings
        assert np.all((attrs.real[v] <= attrs.real[parent]) | ~fits)  # a child within its parent
    admitted = [u for u, ok in vc.admits(inst).items() if ok]
    for u in admitted:  # an admitted request fits every queue above it
        i = list(inst.users).index(u)
        pending = np.maximum(inst.demand[i] * inst.bounds()[i] - q.usage[u], 0)
        asked = pending > 0  # only what the request asks for is checked
        for v in [u, *q.path(u)]:
            assert np.all(((q.subtree_usage(v) + pending) * unit <= attrs.real[v] + FIT)[asked])
