"""Kueue's filling with each cohort's share built as a piecewise linear function (issue 36) gives
the answers of the nested level searches it replaced (tests/previous_kueue.py, the oracle) on
random queue trees, flat to six levels deep, with guarantees, limits and borrowing and lending
limits; ``kueue`` has no declarative program to hold it to (:func:`fairalloc.models.kueue.simulate`,
the admission loop in small pieces, is checked in tests/test_kueue.py).

The oracle finds a cohort's level to ``1e-14`` of ``max(level, 1)``: absolutely below 1, so where a
resource nothing lends makes a share steep (its lendable read as ``1e-12`` of the largest quota),
levels of ``1e-10`` are found to a few parts in ``1e4``, and a constraint met within ``FITS`` of
its bound at such an event may then be met or missed at the next by a rounding.  The fast levels
are exact to rounding, so on deep trees the answers are compared event by event: from the fast
filling's state before each event, the oracle's step gives the fast filling's next state.  Trees
of one level of cohorts are compared end to end.
"""

from __future__ import annotations

import math

import numpy as np
import previous_kueue as previous
from hypothesis import given, settings

from fairalloc.core.errors import FairallocError
from fairalloc.models import kueue
from fairalloc.testing import close, queue_trees

#: relative agreement asked of the two implementations (the brief: 1e-9)
REL = 1e-9


def _previous_step(fluid: previous._Fluid, root: str, nodes: list[str], growing: list[int]) -> None:
    """The oracle's event (its ``_fill_tree`` loop body), from the state ``fluid`` holds."""
    unbounded = fluid.at(root, math.inf)
    if fluid._feasible(unbounded, nodes):
        fluid.x = unbounded
        return
    lo, hi = previous._sup_at_most(lambda s: fluid._excess(fluid.at(root, s), nodes), previous.FITS)
    fluid._freeze(root, fluid._across_jump(root, lo, hi, nodes), growing, nodes)


def _events_agree(inst) -> int:
    """Fill ``inst`` with the fast filling event by event, checking each event against the oracle's
    from the same state; the number of events checked."""
    fast, oracle = kueue._Fluid(inst), previous._Fluid(inst)
    tree, checked = fast.tree, 0
    for root in tree.kids[None]:
        if root in tree.index:
            continue
        nodes = [root, *tree.postorder(root)]
        under = [tree.index[u] for u in nodes if u in tree.index]
        for _ in range(2 * len(nodes) * tree.m + 2):
            growing = [i for i in under if not fast.frozen[i] and fast.x[i] < fast.cap[i]]
            if not growing:
                break
            oracle.x, oracle.frozen = fast.x.copy(), fast.frozen.copy()
            level = fast.step(root, nodes, growing)
            _previous_step(oracle, root, nodes, growing)
            assert close(fast.x, oracle.x, REL), (inst.to_dict(), fast.x, oracle.x)
            assert (fast.frozen == oracle.frozen).all(), (inst.to_dict(), fast.frozen, oracle.frozen)
            checked += 1
            if math.isinf(level):
                break
    return checked


@settings(max_examples=25, deadline=None)
@given(queue_trees(max_queues=30, max_depth=1))
def test_one_level_of_cohorts_gives_the_previous_entitlement(inst):
    try:
        expected, _ = previous.Kueue().entitlement(inst)
    except FairallocError as refused:
        try:
            kueue.Kueue().entitlement(inst)
        except FairallocError as error:
            assert type(error) is type(refused)
            return
        raise AssertionError(f"the previous implementation refused: {refused}") from None
    got, _ = kueue.Kueue().entitlement(inst)
    assert close(got, expected, REL), (inst.to_dict(), got, expected)


@settings(max_examples=6, deadline=None)
@given(queue_trees(max_queues=8, max_depth=6))
def test_each_event_on_deep_trees_is_the_previous_ones(inst):
    _events_agree(inst)


def test_events_are_checked_on_a_tree_four_levels_deep():
    """A fixed 8-queue tree four levels deep whose filling has events to check (the hypothesis test
    above may draw trees that are filled without one)."""
    from fairalloc.analysis.falsify import random_queue_tree

    assert _events_agree(random_queue_tree(np.random.default_rng(12), 8, 4, 1)) >= 1
