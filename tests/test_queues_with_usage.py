"""``Queues.with_usage`` shares the tree and checks only the new amounts (the replay asks for it at
every change of the queues with work): on random queue trees it gives the tree :meth:`Queues.build`
gives from every node's fields with the usage replaced (the way it was made before), field by field;
amounts build refuses are refused with build's message, and an unknown queue as before."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairalloc.core.errors import CaseError
from fairalloc.core.queues import RESOURCE_FIELDS, Queues
from fairalloc.testing import queue_trees

FIELDS = ("parent", "weight", "priority", *RESOURCE_FIELDS)


def _built(q: Queues, usage) -> Queues:
    """The tree built again from every node's fields, ``usage`` replacing some leaves' usage."""
    nodes = {n: {"parent": q.parent[n], "weight": q.weight[n], "priority": q.priority[n]} for n in q.parent}
    for n, spec in nodes.items():
        spec.update({f: getattr(q, f)[n] for f in RESOURCE_FIELDS})
    for n, amounts in usage.items():
        nodes[n]["usage"] = amounts
    return Queues.build(q.resources, nodes, q.groups, q.configured)


def _same(a: Queues, b: Queues) -> None:
    assert (a.resources, a.groups, a.leaf_names, a.configured) == (b.resources, b.groups, b.leaf_names, b.configured)
    for f in FIELDS:
        mine, theirs = getattr(a, f), getattr(b, f)
        assert list(mine) == list(theirs), f
        for n in mine:
            if f in RESOURCE_FIELDS:
                assert np.array_equal(mine[n], theirs[n], equal_nan=True), (f, n)
                assert not mine[n].flags.writeable, (f, n)
            else:
                assert mine[n] == theirs[n], (f, n)


@settings(max_examples=80, deadline=None)
@given(queue_trees(max_queues=30), st.data())
def test_with_usage_is_the_tree_built_again(inst, data):
    q = inst.queues
    m = len(q.resources)
    leaves = data.draw(st.lists(st.sampled_from(list(q.leaf_names)), unique=True, min_size=1))
    usage = {u: data.draw(st.lists(st.floats(0, 1e6), min_size=m, max_size=m)) for u in leaves}
    fast = q.with_usage(usage)
    _same(fast, _built(q, usage))
    for u in q.leaf_names:
        expect = usage.get(u, q.usage[u])
        assert np.array_equal(fast.usage[u], np.asarray(expect, float))


@pytest.mark.parametrize(
    "amounts",
    [[-1.0, 0.0], [np.nan, 0.0], [np.inf, 0.0], [1.0], [[1.0, 2.0]], ["a", 1.0]],
    ids=["negative", "nan", "inf", "short", "nested", "text"],
)
def test_amounts_build_refuses_are_refused_with_builds_message(amounts):
    q = Queues.build(["cpu", "mem"], {"a": {}, "b": {}}, [])
    with pytest.raises((CaseError, TypeError, ValueError)) as fast:
        q.with_usage({"a": amounts})
    with pytest.raises(type(fast.value)) as built:
        _built(q, {"a": amounts})
    assert str(fast.value) == str(built.value)


def test_an_unknown_queue_is_refused_as_before():
    q = Queues.build(["cpu"], {"a": {}}, [])
    with pytest.raises(KeyError):
        q.with_usage({"zz": [1.0]})
