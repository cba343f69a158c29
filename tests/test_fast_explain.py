"""The fast ``explain`` and Queues queries against the implementation they replace (tests/previous_explain.py).

On random queue trees (flat to six levels deep, with guarantees, limits, borrowing and lending
limits) under every production policy, the new :func:`~fairalloc.analysis.explain.explain` gives
the same sentences, tags and numbers (relative 1e-9) as the old one, and refuses where it refused
with the same error class; the new tree queries (cached leaves, ``without`` sharing the checked
arrays) give what the old ones gave, field by field.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from fairalloc.analysis.explain import explain
from fairalloc.analysis.falsify import QUEUE_POLICIES
from fairalloc.core.errors import FairallocError
from fairalloc.core.queues import RESOURCE_FIELDS, Queues
from fairalloc.io.cases import parse_case
from fairalloc.testing import queue_trees

sys.path.insert(0, str(Path(__file__).resolve().parent))
import previous_explain  # noqa: E402

POLICIES = QUEUE_POLICIES
#: the largest tree each policy's explanations are compared on: 50 queues, but for the fluid solvers
#: whose solve takes about a minute at 50 queues today (issue 36; their own oracle tests hold them
#: to their previous implementations at 50): explain solves twice per example here
MAX_QUEUES = {"kueue": 6, "yunikorn-fair": 20, "hdrf-fluid": 20, "mesos-drf": 20}
#: relative agreement of every number (floor 1, as the project's ``close``)
SAME = 1e-9


def _same(old, new, where: str = "") -> None:
    """Equal documents: text and tags exactly, numbers to :data:`SAME` relative (NaN equal to NaN)."""
    if isinstance(old, dict):
        assert isinstance(new, dict) and list(old) == list(new), where
        for k in old:
            _same(old[k], new[k], f"{where}.{k}")
    elif isinstance(old, list | tuple):
        assert isinstance(new, list | tuple) and len(old) == len(new), where
        for k, (a, b) in enumerate(zip(old, new)):
            _same(a, b, f"{where}[{k}]")
    elif isinstance(old, float) and not isinstance(old, bool):
        assert isinstance(new, float), where
        assert (
            (math.isnan(old) and math.isnan(new)) or old == new or abs(old - new) <= SAME * max(1.0, abs(old), abs(new))
        ), f"{where}: {old!r} vs {new!r}"
    else:
        assert old == new, f"{where}: {old!r} vs {new!r}"


def _explained(module_explain, case, policy: str, demand: str):
    try:
        return module_explain(case, policy, demand=demand).to_dict()
    except FairallocError as exc:
        return type(exc)


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=5)
@given(data=st.data(), demand=st.sampled_from(["observed", "backlogged"]))
def test_explain_says_what_the_previous_explain_said(policy, data, demand):
    inst = data.draw(queue_trees(max_queues=MAX_QUEUES.get(policy, 50)), label="tree")
    case = parse_case(inst.to_dict())  # as a case file gives it: a queue's request is its row, once
    old = _explained(previous_explain.explain, case, policy, demand)
    new = _explained(explain, case, policy, demand)
    if isinstance(old, type):
        assert new is old  # the same refusal
        return
    _same(old, new, policy)


def _fields_equal(old: Queues, new: Queues) -> None:
    assert (old.resources, old.groups, old.leaf_names, old.configured) == (
        new.resources,
        new.groups,
        new.leaf_names,
        new.configured,
    )
    for name in ("parent", "weight", "priority"):
        assert dict(getattr(old, name)) == dict(getattr(new, name)), name
        assert list(getattr(old, name)) == list(getattr(new, name)), name  # the same node order
    for name in RESOURCE_FIELDS:
        a, b = getattr(old, name), getattr(new, name)
        assert list(a) == list(b), name
        for node in a:
            np.testing.assert_array_equal(a[node], b[node], err_msg=f"{name}.{node}")
            assert not b[node].flags.writeable


@settings(max_examples=30)
@given(inst=queue_trees(max_queues=50), data=st.data())
def test_tree_queries_answer_as_before(inst, data):
    Q = inst.queues
    nodes = [None, *Q.parent, "no-such-node"]
    for node in nodes:
        assert Q.leaves(node) == previous_explain.leaves(Q, node)
        assert Q.children(node) == previous_explain.children(Q, node)
        if node is not None:
            assert Q.is_group(node) == previous_explain.is_group(Q, node)
    for node in Q.parent:
        np.testing.assert_array_equal(Q.subtree_usage(node), previous_explain.subtree_usage(Q, node))
    gone = data.draw(st.lists(st.sampled_from(Q.leaf_names), unique=True), label="idle queues")
    new = Q.without(*gone)
    _fields_equal(previous_explain.without(Q, *gone), new)
    assert Q.without(*reversed(gone)) is new  # one tree per set of idle queues, as before
    for node in [None, *new.parent]:
        assert new.leaves(node) == previous_explain.leaves(new, node)
        assert new.children(node) == previous_explain.children(new, node)


@settings(max_examples=20)
@given(inst=queue_trees(max_queues=20, max_depth=3), data=st.data())
def test_without_a_group_refuses_as_before(inst, data):
    Q = inst.queues
    if not Q.groups:
        return
    group = data.draw(st.sampled_from(Q.groups), label="group")
    with pytest.raises(FairallocError) as old:
        previous_explain.without(Q, group)
    with pytest.raises(FairallocError) as new:
        Q.without(group)
    assert type(new.value) is type(old.value) and str(new.value) == str(old.value)


@settings(max_examples=10)
@given(inst=queue_trees(max_queues=50), data=st.data())
def test_the_active_queues_instance_solves_as_the_previous_tree(inst, data):
    """``Instance.only`` (what every policy runs on a case with idle queues) with the new tree
    gives the allocation it gave with the tree ``build`` made."""
    from fairalloc.core import registry

    keep = np.array(data.draw(st.lists(st.booleans(), min_size=inst.n, max_size=inst.n)), dtype=bool)
    if not keep.any():
        return
    fast = inst.only(keep)
    built = fast.with_queues(previous_explain.without(inst.queues, *[u for u, k in zip(inst.users, keep) if not k]))
    for policy in ("drf", "yarn-fair", "volcano-proportion"):
        mech = registry.get(policy)
        np.testing.assert_allclose(
            mech.allocate(fast).bundles, mech.allocate(built).bundles, rtol=SAME, atol=SAME, err_msg=policy
        )


@settings(max_examples=15)
@given(inst=queue_trees(max_queues=50, max_depth=4))
def test_lending_sentences_as_before_on_larger_cohorts(inst):
    """The Kueue lending sentences (cubic before) on trees of 50 queues: Kueue's solve is slow at
    that size today, so both explanations read one DRF answer as if Kueue had given it."""
    from fairalloc.analysis import explain as fast
    from fairalloc.core import registry

    case = parse_case(inst.to_dict())
    inst = case.instance
    try:
        B = np.asarray(registry.get("drf").allocate(inst).bundles, dtype=float)
    except FairallocError:  # guarantees beyond the capacity: no answer to explain
        reject()
    for module in (previous_explain, fast):
        facts = module._Facts(inst, "kueue", B, {}, {}, "observed")
        said = [module._explain_queue(facts, q, {}, None).to_dict() for q in inst.users]
        if module is previous_explain:
            old = said
    _same(old, said, "kueue lending")
