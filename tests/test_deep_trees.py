"""Deep and wide trees: a hierarchy deeper than ``MAX_TREE_DEPTH`` (groups, Kueue cohorts, an
instance's groups, a :class:`Queues` built in Python) is refused with one error naming the limit,
before any policy walks it recursively; a tree at the limit is allocated.  Never a RecursionError.
A size a policy cannot allocate fast (``MAX_YUNIKORN_QUEUE_GROUPS``, trees where a share jumps)
is refused before any work: never a hang, never a MemoryError.

The timeouts only detect a hang (a refusal comes before any work); nothing asserts elapsed time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import fairalloc
from fairalloc.core import limits
from fairalloc.core.errors import CaseError
from fairalloc.core.queues import Queues
from fairalloc.core.tolerances import AGREEMENT, NOISE
from fairalloc.io.cases import parse_case
from fairalloc.io.importers.common import ImportFailed

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_import_kueue import _convert, _quota, cohort, cq  # noqa: E402

#: the mechanisms that walk a tree recursively, and explain (which runs them)
TREE_POLICIES = ["kueue", "mesos-drf", "yunikorn-fair", "hdrf-fluid", "hdrf", "yarn-capacity", "volcano-capacity"]
DEPTH = "MAX_TREE_DEPTH"


def _chain(groups: int) -> dict:
    """A case whose ``groups`` groups form one chain ``g0 > g1 > ...``: queue ``a`` at the bottom,
    ``b`` under the top."""
    tree = {f"g{k}": ({"parent": f"g{k - 1}"} if k else {}) for k in range(groups)}
    users = {
        "a": {"group": f"g{groups - 1}", "request": {"cpu": 3, "mem": 1}},
        "b": {"group": "g0", "request": {"cpu": 1, "mem": 4}},
    }
    return {"resources": {"cpu": 10, "mem": 10}, "groups": tree, "users": users}


@pytest.mark.timeout(60)
def test_a_1000_level_hierarchy_is_refused_naming_the_limit():
    with pytest.raises(CaseError, match=f"groups.g{limits.MAX_TREE_DEPTH + 1}.parent: more than 64 groups.*{DEPTH}"):
        parse_case(_chain(1000))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy", TREE_POLICIES)
def test_the_deepest_tree_allowed_is_allocated_and_explained(policy):
    """65 groups in a chain: the bottom one has 64 above it, the most allowed.  By hand, for the
    policies that share the cluster between the two queues by their requests (a: <3, 1>,
    b: <1, 4> of <10, 10>, each wanting one request): both fit, so each gets its whole request."""
    from fairalloc.analysis.explain import explain

    case = parse_case(_chain(limits.MAX_TREE_DEPTH + 1))
    alloc = fairalloc.solve(case, policy)
    assert alloc.tasks.shape == (2,)
    if policy not in ("kueue", "volcano-capacity"):  # these give nothing beyond configured quotas
        assert alloc.tasks.tolist() == pytest.approx([1.0, 1.0])
    assert set(explain(case, policy).queues) == {"a", "b"}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy", TREE_POLICIES)
def test_one_level_more_is_refused_before_any_policy_runs(policy):
    with pytest.raises(CaseError, match=DEPTH):
        fairalloc.solve(_chain(limits.MAX_TREE_DEPTH + 2), policy)


@pytest.mark.timeout(60)
def test_a_1000_deep_cohort_chain_is_refused_by_the_kueue_importer():
    chain = [cohort(f"c{k}", parent=f"c{k - 1}" if k else None) for k in range(1000)]
    with pytest.raises(
        ImportFailed, match=f"Cohort/c{limits.MAX_TREE_DEPTH + 1}: spec.parentName: more than 64 cohorts.*{DEPTH}"
    ):
        _convert(*chain, cq("q", _quota("cpu", 10), cohort="c999"), file="k.yaml")


def test_a_cohort_chain_at_the_limit_imports_and_allocates():
    chain = [cohort(f"c{k}", parent=f"c{k - 1}" if k else None) for k in range(limits.MAX_TREE_DEPTH + 1)]
    draft, _ = _convert(*chain, cq("q", _quota("cpu", 10), cohort=f"c{limits.MAX_TREE_DEPTH}"), file="k.yaml")
    assert len(draft.groups) == limits.MAX_TREE_DEPTH + 1


@pytest.mark.timeout(60)
def test_an_instance_with_deep_groups_is_refused():
    parent: dict[str, str | None] = {f"g{k}": (f"g{k - 1}" if k else None) for k in range(1000)}
    parent["a"], parent["b"] = "g999", "g0"
    groups = {"parent": parent, "weight": {}}
    with pytest.raises(CaseError, match=f"groups.g{limits.MAX_TREE_DEPTH + 1}.parent: .*{DEPTH}"):
        fairalloc.Instance([10.0], [[1.0], [1.0]], users=["a", "b"], groups=groups)


def test_an_instance_whose_groups_form_a_cycle_is_refused():
    cycle = {"parent": {"g": "h", "h": "g", "a": "g"}, "weight": {}}
    with pytest.raises(CaseError, match="groups.g.parent: the groups form a cycle"):
        fairalloc.Instance([10.0], [[1.0], [1.0]], users=["a", "b"], groups=cycle)


@pytest.mark.timeout(60)
def test_queues_built_in_python_are_refused_when_too_deep():
    nodes: dict[str, dict[str, object]] = {f"g{k}": ({"parent": f"g{k - 1}"} if k else {}) for k in range(1000)}
    nodes["a"] = {"parent": "g999"}
    with pytest.raises(CaseError, match=f"nodes.g{limits.MAX_TREE_DEPTH + 1}.parent: .*{DEPTH}"):
        Queues.build(["cpu"], nodes, [f"g{k}" for k in range(1000)])


def test_the_depth_limit_is_documented():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert f"| `{DEPTH}` | {limits.MAX_TREE_DEPTH} |" in readme


def _queues_instance(n: int, groups: int, g0: dict[str, object] | None = None) -> fairalloc.Instance:
    """``n`` queues with small requests on <3n CPU, 2n GB>, spread over ``groups`` groups (0: flat);
    ``g0``: the first group's configuration."""
    nodes: dict[str, dict[str, object]] = {f"g{k}": {} for k in range(groups)}
    if g0 is not None:
        nodes["g0"] = g0
    for i in range(n):
        nodes[f"q{i}"] = {"parent": f"g{i % groups}"} if groups else {}
    queues = Queues.build(["cpu", "mem"], nodes, [f"g{k}" for k in range(groups)])
    demand = np.array([[1 + i % 7, 1 + i % 5] for i in range(n)], dtype=float)
    users = [f"q{i}" for i in range(n)]
    return fairalloc.Instance([3.0 * n, 2.0 * n], demand, users=users, max_tasks=np.ones(n), queues=queues)


@pytest.mark.timeout(120)
def test_yunikorn_refuses_more_queues_times_groups_than_its_limit_where_a_share_jumps():
    """5,001 queues in 100 groups, 500,100 queues x groups, just above 500,000, with an explicit 0
    guarantee of g0's cpu (its share jumps to 1 at its first cpu: the knot filling)."""
    jumps = _queues_instance(5001, 100, {"guarantee": [0.0, np.nan]})
    with pytest.raises(CaseError, match=r"500,100 queues x groups \(5,001 x 100\) where a share jumps.*MAX_YUNIKORN"):
        fairalloc.solve(jumps, "yunikorn-fair")


@pytest.mark.timeout(120)
def test_yunikorn_allocates_thousands_of_queues_in_groups():
    """The same 5,001 queues in 100 groups without the 0 guarantee (the former
    ``MAX_YUNIKORN_QUEUE_GROUPS`` refused every tree of this size): within the capacity, and
    every queue at its request or asking for a resource the cluster has used up (no guarantee
    or limit: the fluid's stops are the capacity's and the requests')."""
    inst = _queues_instance(5001, 100)
    bundles = fairalloc.solve(inst, "yunikorn-fair").bundles
    load, capacity = bundles.sum(axis=0), np.asarray(inst.capacity)
    assert (load <= capacity * (1 + AGREEMENT)).all()
    used_up = load >= capacity * (1 - AGREEMENT)
    at_request = (bundles >= inst.demand * (1 - AGREEMENT)).all(axis=1)
    assert (at_request | (inst.demand[:, used_up] > 0).any(axis=1)).all()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("groups", [0, 100])
def test_kueue_allocates_thousands_of_queues_with_or_without_cohorts(groups):
    """3,001 queues, flat or in 100 cohorts (the former ``MAX_KUEUE_COHORT_QUEUES`` refused the
    latter).  Without any nominalQuota every queue's quota is 0 and Kueue admits nothing: all zero,
    as by hand (to :data:`NOISE`: in cohorts a resource nothing lends makes a share steep, and
    the root's quota of 0 holds to the filling's ``FITS``)."""
    alloc = fairalloc.solve(_queues_instance(3001, groups), "kueue")
    assert alloc.tasks.shape == (3001,) and float(np.max(np.abs(alloc.tasks))) <= NOISE


def test_explain_shows_a_refused_contrast_as_not_available():
    """explain contrasts every policy with hdrf-fluid: where it refuses the case (here the
    guarantees of ``g``'s queues, 2 + 2 CPUs, above ``g``'s limit of 3), that column is absent;
    at 5,001 queues (above the former ``MAX_FLUID_USERS``) it is given, as ``drf`` on a flat case."""
    from fairalloc.analysis.explain import _contrast

    queue = {"request": {"cpu": 10}, "group": "g", "guarantee": {"cpu": 2}}
    data = {"resources": {"cpu": 10}, "groups": {"g": {"limit": {"cpu": 3}}}, "users": {"a": queue, "b": queue}}
    assert _contrast("hdrf-fluid", parse_case(data).instance, "auto") is None
    inst = _queues_instance(5001, 0)
    assert np.allclose(_contrast("hdrf-fluid", inst, "auto"), _contrast("drf", inst, "auto"), rtol=AGREEMENT)
