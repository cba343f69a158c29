"""H-DRF on trees: the Volcano tests, flat instances, the discrete bound, bad group input."""

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings

import fairalloc
from fairalloc.cli import main
from fairalloc.hierarchy import ROOT, tree
from fairalloc.scheduling import DRFScheduler
from fairalloc.testing import instances


@pytest.mark.parametrize("name, expected", [
    ("hdrf-volcano-1", {"sci": 5, "dev": 5, "prod": 5}),
    ("hdrf-volcano-2", {"pg1": 10, "pg2": 10, "pg31": 10, "pg32": 15, "pg4": 15}),
])
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
    case = fairalloc.parse_case({"resources": {"cpu": 12}, "groups": {"big": {"weight": 2}, "small": {}},
                                 "users": {"a": {"demand": {"cpu": 1}, "group": "big"},
                                           "b": {"demand": {"cpu": 1}, "group": "small"}}})
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


@pytest.mark.parametrize("groups, users, message", [
    ({"g": {"parent": "nope"}}, {"a": {"demand": {"cpu": 1}, "group": "g"}},
     "groups.g.parent: unknown group 'nope' (groups: g)"),
    ({"g": {}}, {"a": {"demand": {"cpu": 1}, "group": "h"}}, "users.a.group: unknown group 'h' (groups: g)"),
    ({"g": {"parent": "h"}, "h": {"parent": "g"}}, {"a": {"demand": {"cpu": 1}, "group": "g"}},
     "groups.g.parent: the groups form a cycle"),
    ({"a": {}}, {"a": {"demand": {"cpu": 1}}}, "groups.a: a group cannot have a user's name"),
    ({"g": {"weight": 0}}, {"a": {"demand": {"cpu": 1}, "group": "g"}}, "groups.g.weight: input should be greater than 0"),
])
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
    flat_collapsed = fairalloc.solve(inst, "hdrf-collapsed").tasks       # weights 2/3, 1/3: same ratio
    assert np.allclose(flat_collapsed, drf)


@pytest.mark.parametrize("name, leaf, starved, hdrf", [
    ("hdrf-starvation-naive", "g2", "hdrf-naive", 10.0),
    ("hdrf-starvation-collapsed", "dev", "hdrf-collapsed", 5.0),
])
def test_the_variants_starve_where_hdrf_does_not(name, leaf, starved, hdrf):
    case = fairalloc.load_case(name)
    assert fairalloc.solve(case, "hdrf")[leaf] == hdrf
    assert fairalloc.solve(case, starved)[leaf] < hdrf
