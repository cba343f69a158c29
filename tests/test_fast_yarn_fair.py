"""yarn-fair's searches run side by side for every sibling set of a tree level (issue 36) give the
shares of the previous implementation, which ran each set's search alone (the oracle in
``previous_yarn_fair``), on random queue trees flat to six levels deep, with weights, guarantees,
limits and inactive queues; and they stay within YARN's truncation of the program's water levels.

Both repeat YARN's integer arithmetic step for step, so they are compared exactly (whole units);
the relative SATURATION of the other fast paths would allow nothing more here."""

from __future__ import annotations

import numpy as np
import previous_yarn_fair
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core.errors import FairallocError
from fairalloc.core.queues import Queues
from fairalloc.core.tolerances import SATURATION
from fairalloc.models.yarn_fair import LONG_MAX
from fairalloc.testing import close, queue_trees, solved_or_refused


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_trees(max_queues=50), st.booleans())
def test_the_side_by_side_searches_equal_the_one_by_one_searches(inst, steady):
    name = "yarn-fair-steady" if steady else "yarn-fair"
    fast = solved_or_refused(inst, name)
    if isinstance(fast, FairallocError):
        with pytest.raises(type(fast)):
            previous_yarn_fair.bundles_as_solved(inst, steady)
        return
    before, info = previous_yarn_fair.bundles_as_solved(inst, steady)
    assert np.array_equal(fast.bundles, before), (fast.bundles, before, inst.to_dict())
    assert fast.info["group_shares"] == info["group_shares"]
    assert close(fast.bundles, before, SATURATION)


def _truncation_bound(inst, leaf):
    """``tests/test_yarn_fair.py``'s bound: max(1, k - 1) units per sibling set of k on the path."""
    q = inst.queues
    bound, node = 0.0, leaf
    while node is not None:
        bound += max(1, len(q.children(q.parent[node])) - 1)
        node = q.parent[node]
    return bound + 1e-6 * float(inst.capacity.max())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_trees(max_queues=12, max_depth=3))
def test_the_side_by_side_searches_are_the_program_up_to_truncation(inst):
    fast = solved_or_refused(inst, "yarn-fair")
    if isinstance(fast, FairallocError):
        with pytest.raises(type(fast)):
            fairalloc.solve(inst, "yarn-fair", method="program")
        return
    program = fairalloc.solve(inst, "yarn-fair", method="program").bundles
    for i, u in enumerate(inst.users):
        assert np.all(np.abs(fast.bundles[i] - program[i]) <= _truncation_bound(inst, u)), (u, inst.to_dict())


def test_sums_past_long_max_saturate_as_safe_add_does():
    """Three siblings of weight 1 with minShares of 2^62 on a cluster of 2^62 + 2^61 units: the
    minShares alone add up past Long.MAX_VALUE, so every resourceUsed is saturated, the doubling
    stops at once (rMax = 1) and every halving finds "used >= total": each queue keeps its minShare
    (as the one-by-one search, which sums in Python integers, gives)."""
    big = float(2**62)
    nodes = {u: {"guarantee": [big]} for u in ("a", "b", "c")}
    q = Queues.build(["memory"], nodes, [])
    inst = fairalloc.Instance([big + 2**61], [[1.0]] * 3, users=list(nodes), resources=["memory"], queues=q)
    fast = fairalloc.solve(inst, "yarn-fair").bundles
    before, _ = previous_yarn_fair.bundles(inst)
    assert np.array_equal(fast, before) and fast[:, 0].tolist() == [big] * 3
    assert 3 * 2**62 > LONG_MAX
