"""yunikorn-fair's faster filling against the previous one (``previous_yunikorn``, the oracle).

The filling is the same algorithm, built without the ``knots x n`` arrays at every group and the
root: the two agree to the filling's own resolution of a stop (``SATURATION``, relative) wherever
the previous answer is a function of its input.  It is not everywhere: where a group's share stays
exactly flat while its children grow, or a limit is met exactly at a knot, the previous filling
moves its queues along a chord or a path depending on the last bit of a share (a BLAS sum whose
order follows the arrays' alignment in memory), and a change of the capacity or the demands in
their last bits moves its answer by up to 90 % (:func:`test_the_previous_filling_jumps_at_a_tie`).
There no second computation can agree with it bit for bit, and the comparison asks instead that
such a change moves the previous answer too.  ``yunikorn-fair`` has no declarative program.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.analysis.falsify import random_queue_tree
from fairalloc.core.errors import FairallocError
from fairalloc.core.instance import Instance
from fairalloc.core.tolerances import SATURATION
from fairalloc.models.yunikorn_fair import YuniKornFair
from fairalloc.testing import close, queue_trees

sys.path.insert(0, str(Path(__file__).resolve().parent))
import previous_yunikorn  # noqa: E402

#: a relative change of the capacity or the demands in their last bits (about 9e-16)
ULPS = 2.0**-50


def _fill(inst: Instance, priority_first: bool) -> np.ndarray:
    mech = YuniKornFair() if priority_first else YuniKornFair().with_parameters("priority-disabled")
    return mech.entitlement(inst)[0]


def _nudged(inst: Instance, capacity: float, demand: float) -> Instance:
    return fairalloc.Instance(
        inst.capacity * capacity,
        inst.demand * demand,
        users=list(inst.users),
        resources=list(inst.resources),
        max_tasks=inst.bounds(),
        queues=inst.queues,
    )


def _previous_moves(inst: Instance, priority_first: bool, before: np.ndarray) -> float:
    """How far the previous answer moves (relative, floor 1) when the capacity or the demands
    change in their last bits (bundles scaled back with the demands)."""
    scale = max(1.0, float(np.abs(before).max(initial=0.0)))
    moves = []
    for capacity, demand in ((1 + ULPS, 1.0), (1 - ULPS, 1.0), (1.0, 1 + ULPS), (1.0, 1 - ULPS)):
        nudged = previous_yunikorn.entitlement(_nudged(inst, capacity, demand), priority_first) / demand
        moves.append(float(np.abs(nudged - before).max(initial=0.0)) / scale)
    return max(moves)


def _same_as_before(inst: Instance, priority_first: bool) -> None:
    try:
        before = previous_yunikorn.entitlement(inst, priority_first)
    except FairallocError as refused:
        with pytest.raises(type(refused)):
            _fill(inst, priority_first)
        return
    after = _fill(inst, priority_first)
    if not close(after, before, SATURATION):
        moves = _previous_moves(inst, priority_first, before)
        assert moves > SATURATION, (inst.name, after, before, moves)


@given(queue_trees(max_queues=50), st.booleans())
@settings(max_examples=40, deadline=None)
def test_the_filling_is_the_previous_one_on_random_trees(inst, priority_first):
    _same_as_before(inst, priority_first)


@pytest.mark.parametrize("priority_first", [True, False])
def test_the_filling_is_the_previous_one_on_operator_trees(priority_first):
    # flat to six levels deep, 10 to 39 queues: most agree to SATURATION, the rest where the
    # previous answer jumps in the last bits
    agree = 0
    for seed in range(0, 30, 3):
        for depth in (0, 1, 3, 6):
            inst = random_queue_tree(np.random.default_rng(seed), 10 + seed, depth=depth)
            _same_as_before(inst, priority_first)
            agree += close(_fill(inst, priority_first), previous_yunikorn.entitlement(inst, priority_first), SATURATION)
    assert agree >= 32, agree


def test_the_previous_filling_jumps_at_a_tie():
    """37 queues six levels deep (seed 27): the capacity 1 + 2**-50 times larger moves the
    previous answer by more than 10 % of its largest bundle."""
    inst = random_queue_tree(np.random.default_rng(27), 37, depth=6)
    before = previous_yunikorn.entitlement(inst, True)
    assert _previous_moves(inst, True, before) > 0.1


def test_the_hand_cases_are_the_previous_ones():
    """The module's ``TestSortQueuesWithGuarantees`` case: guarantees 500, 300, 200, 200 of 1000,
    every queue asking for 1000; priority first q3 takes all, fairness first in proportion to the
    guarantees (1000 * 5/12, 3/12, 2/12, 2/12)."""
    from fairalloc.core.queues import Queues

    g = {"q0": 500, "q1": 300, "q2": 200, "q3": 200}
    nodes = {q: {"guarantee": [g[q]], "priority": 3 if q == "q3" else 1} for q in g}
    inst = fairalloc.Instance(
        [1000], [[1000]] * 4, users=list(g), resources=["memory"], max_tasks=[1] * 4,
        queues=Queues.build(["memory"], nodes, []),
    )  # fmt: skip
    for priority_first, hand in ((True, [0, 0, 0, 1000]), (False, [5000 / 12, 250, 500 / 3, 500 / 3])):
        after = _fill(inst, priority_first)[:, 0]
        assert close(after, hand, SATURATION)
        assert close(after, previous_yunikorn.entitlement(inst, priority_first)[:, 0], SATURATION)
