"""yarn-capacity's water levels filled for every parent of a tree level at once (issue 36) give the
fixed point of the previous implementation, which walked each parent's breakpoints alone (the
oracle in ``previous_yarn_capacity``), and of the program (LP rounds), on random queue trees flat
to six levels deep, with guarantees, limits and inactive queues."""

from __future__ import annotations

import previous_yarn_capacity
import pytest
from hypothesis import HealthCheck, given, settings

from fairalloc.core.errors import FairallocError
from fairalloc.core.tolerances import AGREEMENT, SATURATION
from fairalloc.testing import assert_same_tasks, close, queue_trees, solved_or_refused


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_trees(max_queues=50))
def test_the_levels_at_once_equal_the_parents_one_by_one(inst):
    fast = solved_or_refused(inst, "yarn-capacity")
    if isinstance(fast, FairallocError):
        with pytest.raises(type(fast)):
            previous_yarn_capacity.bundles_as_solved(inst)
        return
    before, info = previous_yarn_capacity.bundles_as_solved(inst)
    assert close(fast.bundles, before, SATURATION), (fast.bundles, before, inst.to_dict())
    levels = fast.info["group_used_capacity"]
    assert levels.keys() == info["group_used_capacity"].keys()
    assert close(list(levels.values()), list(info["group_used_capacity"].values()), SATURATION)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_trees(max_queues=15, max_depth=3))
def test_the_levels_at_once_equal_the_program(inst):
    """The same tasks as the LP rounds, or the same refusal."""
    fast, program = (solved_or_refused(inst, "yarn-capacity", method) for method in ("fast", "program"))
    if isinstance(fast, FairallocError) or isinstance(program, FairallocError):
        assert type(fast) is type(program), (fast, program)
    else:
        assert_same_tasks(fast, program, AGREEMENT)
