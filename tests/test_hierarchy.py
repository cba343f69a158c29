"""H-DRF on trees: the Volcano tests, flat instances, the discrete bound, bad group input, empty groups,
launch caps and the batched runs (bit for bit the single steps)."""

import networkx as nx
import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.cli import main
from fairalloc.engines.hierarchy import ROOT, hdrf_schedule, occupied_tree, tree
from fairalloc.scheduling import DRFScheduler
from fairalloc.testing import instances


@pytest.mark.parametrize(
    "name, expected",
    [
        ("hdrf-volcano-1", {"sci": 5, "dev": 5, "prod": 5}),
        ("hdrf-volcano-2", {"pg1": 10, "pg2": 10, "pg31": 10, "pg32": 15, "pg4": 15}),
    ],
)
def test_volcano_tests(name, expected):
    case = fairalloc.load_case(name)
    alloc = fairalloc.solve(case, "hdrf")
    assert {u: alloc[u] for u in expected} == expected


def test_tree_is_built_with_networkx():
    g = tree(fairalloc.load_case("hdrf-volcano-2").instance)
    assert sorted(g.successors(ROOT)) == ["pg1", "pg2", "pg3", "pg4"]
    assert sorted(g.successors("pg3")) == ["pg31", "pg32"]


def test_group_weights_split_the_parent_share():
    # two groups of weights 2 and 1 over one resource, one user each: 2/3 and 1/3 of 12 units
    case = fairalloc.parse_case(
        {
            "resources": {"cpu": 12},
            "groups": {"big": {"weight": 2}, "small": {}},
            "users": {"a": {"demand": {"cpu": 1}, "group": "big"}, "b": {"demand": {"cpu": 1}, "group": "small"}},
        }
    )
    assert fairalloc.solve(case, "hdrf").tasks.tolist() == [8, 4]


@settings(max_examples=max(100, settings().max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_users=5, max_resources=3, zeros=True, weights="scalar", bounds=True, max_demand=6))
def test_flat_hdrf_is_algorithm_1_with_skipping(inst):
    """Two implementations: the tree descent and the heap scheduler (skip policy, same tie-break)."""
    tasks = fairalloc.solve(inst, "hdrf").tasks
    heap = DRFScheduler(inst, policy="skip", tie_break="order")
    heap.run()
    assert tasks.tolist() == heap.launched.tolist()
    assert np.all(tasks @ inst.demand <= inst.capacity + 1e-9)
    # no user's next task still fits (or she reached her bound): the pool is used up for everyone
    room = inst.capacity - tasks @ inst.demand
    fits = np.all(inst.demand <= room + 1e-9, axis=1) & (tasks < inst.bounds())
    assert not np.any(fits)


@pytest.mark.parametrize(
    "groups, users, message",
    [
        (
            {"g": {"parent": "nope"}},
            {"a": {"demand": {"cpu": 1}, "group": "g"}},
            "groups.g.parent: unknown group 'nope' (groups: g)",
        ),
        ({"g": {}}, {"a": {"demand": {"cpu": 1}, "group": "h"}}, "users.a.group: unknown group 'h' (groups: g)"),
        (
            {"g": {"parent": "h"}, "h": {"parent": "g"}},
            {"a": {"demand": {"cpu": 1}, "group": "g"}},
            "groups.g.parent: the groups form a cycle",
        ),
        ({"a": {}}, {"a": {"demand": {"cpu": 1}}}, "groups.a: a group cannot have a user's name"),
        (
            {"g": {"weight": 0}},
            {"a": {"demand": {"cpu": 1}, "group": "g"}},
            "groups.g.weight: input should be greater than 0",
        ),
    ],
)
def test_bad_groups(tmp_path, capsys, groups, users, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"resources": {"cpu": 4}, "groups": groups, "users": users}))
    assert main(["solve", str(path), "-m", "hdrf"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"fairalloc: {message}"), err


def test_naive_and_collapsed_variants_match_their_definitions_on_flat_instances():
    """Without groups the naive variant is continuous weighted DRF and the collapsed one too."""
    inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], users=["A", "B"], weights=[2, 1])
    drf = fairalloc.solve(inst, "drf").tasks
    assert np.allclose(fairalloc.solve(inst, "hdrf-naive").tasks, drf)
    flat_collapsed = fairalloc.solve(inst, "hdrf-collapsed").tasks  # weights 2/3, 1/3: same ratio
    assert np.allclose(flat_collapsed, drf)


@pytest.mark.parametrize(
    "name, leaf, starved, hdrf",
    [
        ("hdrf-starvation-naive", "g2", "hdrf-naive", 10.0),
        ("hdrf-starvation-collapsed", "dev", "hdrf-collapsed", 5.0),
    ],
)
def test_the_variants_starve_where_hdrf_does_not(name, leaf, starved, hdrf):
    case = fairalloc.load_case(name)
    assert fairalloc.solve(case, "hdrf")[leaf] == hdrf
    assert fairalloc.solve(case, starved)[leaf] < hdrf


# -- empty groups ----------------------------------------------------------------------------------------

_USERS = {
    "a": {"demand": {"cpu": 1, "mem": 3}, "group": "eng"},
    "b": {"demand": {"cpu": 2, "mem": 1}, "group": "eng"},
    "c": {"demand": {"cpu": 1}, "group": "ops"},
    "d": {"demand": {"mem": 2}},
}
_GROUPS = {"eng": {"weight": 2}, "ops": {}}


@pytest.mark.parametrize("mechanism", ["hdrf", "hdrf-naive", "hdrf-collapsed"])
@pytest.mark.parametrize(
    "empty",
    [
        {"empty": {}},  # an empty group under the root
        {"empty": {"weight": 5}},  # ... of a large weight
        {"e1": {"weight": 3}, "e2": {"parent": "e1"}, "e3": {"parent": "e2", "weight": 2}},  # only empty below
        {"sub": {"parent": "eng", "weight": 4}, "subsub": {"parent": "sub"}},  # empty groups inside a group
    ],
)
@pytest.mark.parametrize("first", [True, False])
def test_empty_groups_receive_nothing_and_change_nothing(mechanism, empty, first):
    """Groups without users (Volcano's hdrf_test declares one) must neither crash nor block: the
    answer is the one of the same instance without them (listed before or after the others)."""
    resources = {"cpu": 12, "mem": 24}
    groups = {**empty, **_GROUPS} if first else {**_GROUPS, **empty}
    with_empty = fairalloc.parse_case({"resources": resources, "groups": groups, "users": _USERS})
    without = fairalloc.parse_case({"resources": resources, "groups": _GROUPS, "users": _USERS})
    got = fairalloc.solve(with_empty, mechanism).tasks
    assert got.tolist() == fairalloc.solve(without, mechanism).tasks.tolist()
    assert got.sum() > 0


@pytest.mark.parametrize("mechanism", ["hdrf", "hdrf-naive", "hdrf-collapsed"])
def test_empty_groups_next_to_users_only_in_one_group(mechanism):
    """groups {eng: {}, empty: {}} with every user in eng: as if there were only eng."""
    users = {"x": {"demand": {"cpu": 1, "mem": 2}, "group": "eng"}, "y": {"demand": {"cpu": 3}, "group": "eng"}}
    resources = {"cpu": 9, "mem": 18}
    case = fairalloc.parse_case({"resources": resources, "groups": {"eng": {}, "empty": {}}, "users": users})
    bare = fairalloc.parse_case({"resources": resources, "groups": {"eng": {}}, "users": users})
    assert fairalloc.solve(case, mechanism).tasks.tolist() == fairalloc.solve(bare, mechanism).tasks.tolist()


def test_occupied_tree_drops_exactly_the_empty_groups():
    case = fairalloc.parse_case(
        {
            "resources": {"cpu": 4},
            "groups": {"e": {}, "f": {"parent": "e"}, "g": {}},
            "users": {"a": {"demand": {"cpu": 1}, "group": "g"}},
        }
    )
    assert set(tree(case.instance)) == {ROOT, "e", "f", "g", "a"}
    assert list(occupied_tree(case.instance).edges) == [(ROOT, "g"), ("g", "a")]


# -- the schedule at scale, launch caps, batches -----------------------------------------------------------


def test_twelve_million_tasks_of_one_user():
    """One user, task <1 CPU>, 12M CPUs: all 12M tasks (the old loop stopped at 10^7, after minutes)."""
    inst = fairalloc.Instance.from_arrays([12_000_000], [[1]], users=["a"], resources=["cpu"])
    assert hdrf_schedule(inst).tolist() == [12_000_000]
    assert fairalloc.solve(inst, "hdrf").tasks.tolist() == [12_000_000]


@pytest.mark.parametrize("eng_first", [True, False])
@pytest.mark.parametrize("bound, expected", [(None, [6_500_000, 6]), (3, [9_500_000, 3])])
def test_a_big_and_a_small_user_in_two_groups(eng_first, bound, expected):
    """12.5M CPUs; groups eng and ops of weight 1; big (in eng) runs <1 CPU>, small (in ops) <1M CPU>.

    By hand, eng listed first (ties go to eng): after small's k-th task eng runs until its share
    passes hers, to k*1M + 1 tasks; small's 6th task brings the use to 11,000,001 CPUs, big goes on
    to 6,000,001 (12,000,001 CPUs), small's 7th no longer fits and big takes the rest: 6,500,000.
    ops listed first: big stops at k*1M (a tie goes to small), then small's 6th task (11M CPUs),
    big to 6M (12M), small's 7th does not fit: again 6,500,000 and 6.  With max_tasks 3, small is
    blocked at her 4th choice and big takes the rest: 12.5M - 3M = 9,500,000.
    """
    small = {"demand": {"cpu": 1_000_000}, "group": "ops"}
    if bound is not None:
        small["max_tasks"] = bound
    groups = {"eng": {}, "ops": {}} if eng_first else {"ops": {}, "eng": {}}
    case = fairalloc.parse_case(
        {
            "resources": {"cpu": 12_500_000},
            "groups": groups,
            "users": {"big": {"demand": {"cpu": 1}, "group": "eng"}, "small": small},
        }
    )
    assert fairalloc.solve(case, "hdrf").tasks.tolist() == expected


def test_max_launches_counts_launches_and_never_truncates_silently():
    # b and c are blocked at once (bound 0, a task larger than the pool): passes without a launch
    inst = fairalloc.Instance.from_arrays(
        [10, 10], [[1, 1], [1, 0], [11, 0], [0, 1]], users=list("abcd"), max_tasks=[np.inf, 0, np.inf, 3]
    )
    full = hdrf_schedule(inst)
    total = int(full.sum())
    assert full.tolist() == [7, 0, 0, 3] and total == 10
    for batch in (True, False):
        assert hdrf_schedule(inst, total, batch=batch).tolist() == full.tolist()  # the cap is just enough
        with pytest.raises(
            fairalloc.SolverError,
            match=f"max_launches={total - 1} reached after {total - 1} "
            "launches while more tasks could still be launched",
        ):
            hdrf_schedule(inst, total - 1, batch=batch)
    with pytest.raises(fairalloc.FairallocError, match="max_launches=5 reached after 5 launches"):
        hdrf_schedule(fairalloc.Instance.from_arrays([12_000_000], [[1]]), 5)


def test_a_user_demanding_nothing_is_refused_or_bounded():
    """Instance refuses an all-zero demand; an unvalidated one must not make H-DRF loop forever."""
    with pytest.raises(fairalloc.CaseError, match="users.z.demand: all zero"):
        fairalloc.Instance.from_arrays([4, 4], [[1, 2], [0, 0]], users=["a", "z"])
    loose = fairalloc.Instance([4, 4], [[1, 2], [0, 0]], users=["a", "z"], validate=False)
    with pytest.raises(fairalloc.CaseError, match="users.z.demand: all zero"):
        fairalloc.solve(loose, "hdrf")
    bounded = fairalloc.Instance([4, 4], [[1, 2], [0, 0]], users=["a", "z"], max_tasks=[np.inf, 7], validate=False)
    assert hdrf_schedule(bounded).tolist() == hdrf_schedule(bounded, batch=False).tolist() == [2, 7]
    huge = fairalloc.Instance([4, 4], [[1, 2], [0, 0]], users=["a", "z"], max_tasks=[np.inf, 1e12], validate=False)
    assert hdrf_schedule(huge).tolist() == [2, 1e12]


_AMOUNTS = st.sampled_from([0, 0, 0.1, 0.25, 1 / 3, 0.7, 1, 2, 3, 5])
_WEIGHTS = st.sampled_from([1, 1, 2, 3, 0.5, 1.5, 2 / 3])


@st.composite
def trees(draw):
    """Random cases with groups (some empty, some nested), weights, demands with zeros, bounds."""
    m = draw(st.integers(1, 3))
    k = draw(st.integers(0, 5))
    groups = {}
    for g in range(k):
        spec = {"weight": draw(_WEIGHTS)}
        if g and draw(st.booleans()):
            spec["parent"] = f"g{draw(st.integers(0, g - 1))}"
        groups[f"g{g}"] = spec
    users = {}
    for i in range(draw(st.integers(1, 7))):
        demand = {f"r{j}": draw(_AMOUNTS) for j in range(m)}
        if not any(demand.values()):
            demand[f"r{draw(st.integers(0, m - 1))}"] = draw(_AMOUNTS.filter(bool))
        spec = {"demand": demand}
        if k and draw(st.integers(0, 4)):
            spec["group"] = f"g{draw(st.integers(0, k - 1))}"
        if draw(st.integers(0, 3)) == 0:
            spec["weight"] = draw(_WEIGHTS)
        if draw(st.integers(0, 3)) == 0:
            spec["max_tasks"] = draw(st.integers(0, 200))
        users[f"u{i}"] = spec
    capacity = {f"r{j}": draw(st.sampled_from([1, 3, 10, 30.5, 100, 120])) for j in range(m)}
    return fairalloc.parse_case({"resources": capacity, "groups": groups, "users": users}).instance


def reference_descent(instance):
    """The single-step descent written plainly (the pre-batch loop; a childless group is blocked)."""
    g = tree(instance)
    users = {u: i for i, u in enumerate(instance.users)}
    R, D, bounds = instance.capacity, instance.demand, instance.bounds()
    usage = {v: np.zeros(instance.m) for v in g}
    safe_R = np.where(R > 0, R, np.inf)
    tasks, blocked = np.zeros(instance.n), set()

    def is_blocked(v):
        return v in blocked or v not in users and all(is_blocked(c) for c in g.successors(v))

    def share(v):
        return float(np.max(usage[v] / (safe_R * g.nodes[v]["weight"])))

    while True:
        node = ROOT
        while node not in users:
            open_kids = [c for c in g.successors(node) if not is_blocked(c)]
            if not open_kids:
                return tasks
            node = min(open_kids, key=share)
        i = users[node]
        if tasks[i] >= bounds[i] or np.any(usage[ROOT] + D[i] > R * (1 + 1e-12)):
            blocked.add(node)
            continue
        tasks[i] += 1
        for v in nx.shortest_path(g, ROOT, node):
            usage[v] = usage[v] + D[i]


@settings(max_examples=max(100, settings().max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_batched_runs_are_the_single_steps_bit_for_bit(inst):
    batched = hdrf_schedule(inst)
    single = hdrf_schedule(inst, batch=False)
    assert batched.tolist() == single.tolist()
    assert single.tolist() == reference_descent(inst).tolist()
    assert np.all(batched @ inst.demand <= inst.capacity * (1 + 1e-12))


def _collapsed_on_the_graph(instance):
    """The collapsed weights read off :func:`occupied_tree` (the networkx graph): the reference."""
    g = occupied_tree(instance)
    out = np.ones(instance.n)
    for i, u in enumerate(instance.users):
        path = nx.shortest_path(g, ROOT, u)
        for parent, child in zip(path, path[1:]):
            out[i] *= g.nodes[child]["weight"] / sum(g.nodes[c]["weight"] for c in g.successors(parent))
    return out


@settings(deadline=None, max_examples=300)
@given(st.integers(0, 2**32 - 1))
def test_collapsed_weights_walked_in_dictionaries_are_the_graphs(seed):
    """hdrf-collapsed walks the tree in dictionaries (the verifier collapses one tree per report):
    bit for bit the weights of the graph, on random queue trees with weights and empty groups."""
    from fairalloc.analysis.falsify import InstanceSpace, random_queue_instance
    from fairalloc.engines.hierarchy import collapsed_weights

    inst = random_queue_instance(
        InstanceSpace(queues=True, weights=True), "strategy_proofness", np.random.default_rng(seed)
    )
    assert collapsed_weights(inst).tolist() == _collapsed_on_the_graph(inst).tolist()


@pytest.mark.parametrize("name", ["hdrf-volcano-1", "hdrf-volcano-2", "hdrf-starvation-collapsed"])
def test_collapsed_weights_of_the_library_cases_are_the_graphs(name):
    from fairalloc.engines.hierarchy import collapsed_weights

    inst = fairalloc.load_case(name).instance
    assert collapsed_weights(inst).tolist() == _collapsed_on_the_graph(inst).tolist()


def test_groups_that_are_no_tree_are_refused_by_the_collapse():
    from fairalloc.engines.hierarchy import collapsed_weights

    cycle = {"parent": {"g": "h", "h": "g", "a": "g"}, "weight": {}}
    with pytest.raises(AssertionError, match="groups must form a tree"):
        # an instance refuses such groups when validated (tests/test_deep_trees.py); the engine checks too
        collapsed_weights(fairalloc.Instance([10.0], [[1.0], [1.0]], users=["a", "b"], groups=cycle, validate=False))
