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
of one level of cohorts are compared end to end.  (End to end, deep trees may also part where two
sibling cohorts' shares stay flat at the same value while their queues grow in a resource that is
not dominant: the equilibrium leaves the split between them open, and the cohorts' levels jump
together along a path a rounding decides.)

The oracle is known wrong where its step ends "an event without a tight constraint": its search
stops every growing queue there (:func:`test_the_oracle_stops_a_queue_that_a_constraint_does_not_stop`);
from such a state on only the fast filling is followed (it stops some queue, and none below the
oracle's).  Deep trees of 50 queues are out of the oracle's reach (nested searches, about tenfold
the cost a level): event by event they are drawn up to 8 queues.  Measured on the loaded machine,
50 queues event by event: two levels of cohorts 0.3 to 0.8 s of CPU a tree, three 9 s or over a
minute's cap, four and six over it (12 to 14 s of CPU within the minute; six deep, 48 queues still
unchecked after 92 s of CPU).  At two levels, 31 queues (``random_queue_tree(default_rng(0), 31,
2, 2)``) part from the oracle by 0.05 at an event where a cohort's level jumps (0 to 21.6), as the
filling before this one did: not compared here until that is understood (end to end the two give
the same bundles, to 2e-13).  Deeper trees of 30 to 50 queues are compared end to end against the
oracle's answers computed once (tests/test_kueue_deep_oracle.py).
"""

from __future__ import annotations

import math

import previous_kueue as previous
from frozen_trees import frozen
from hypothesis import given, settings

from fairalloc.core.errors import FairallocError
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.io.cases import parse_case
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
            oracle.x, oracle.frozen, oracle.warnings = fast.x.copy(), fast.frozen.copy(), []
            level = fast.step(root, nodes, growing)
            _previous_step(oracle, root, nodes, growing)
            if oracle.warnings and not fast.warnings:  # the oracle is known wrong there (below)
                assert fast.frozen[growing].any() and not (fast.x < oracle.x * (1 - REL)).any()
                break
            assert close(fast.x, oracle.x, REL), (inst.to_dict(), fast.x, oracle.x)
            assert (fast.frozen == oracle.frozen).all(), (inst.to_dict(), fast.frozen, oracle.frozen)
            checked += 1
            if math.isinf(level):
                break
    return checked


@settings(max_examples=40, deadline=None)
@given(queue_trees(max_queues=50, max_depth=1))
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


@settings(max_examples=30, deadline=None)
@given(queue_trees(max_queues=8, max_depth=6))
def test_each_event_on_deep_trees_is_the_previous_ones(inst):
    _events_agree(inst)


def test_events_are_checked_on_a_tree_four_levels_deep():
    """A fixed 8-queue tree four levels deep whose filling has events to check (the hypothesis test
    above may draw trees that are filled without one)."""
    assert _events_agree(frozen("tree-8-4-1-seed12")) >= 1


def test_a_queue_stopped_by_its_borrowing_limit_below_a_cohort_stops_growing():
    """The 2-5 % difference of the fast filling on two-level trees, shrunk.  Root cohort ``r``
    (nominal 90 CPUs) over cohort ``g`` and queue ``c``; ``g`` over queues ``a`` (borrowing limit
    7, request 60) and ``b``; no queue has a nominal quota and every weight is 1.  By hand: ``g``
    and ``c`` borrow from ``r``'s 90 (``lendable`` 90 for both: ``potentialAvailable(r)``), their
    shares ``1000 U / 90`` equal, so 45 each when ``r``'s quota is full; inside ``g``, ``a`` and ``b``
    borrow from the same 90 at equal shares until ``a`` meets its borrowing limit at 7, so ``b``
    takes the other 38.  The fast filling's response of ``a`` met its limit at a knot read (by
    interpolation) one rounding below it, so ``a`` kept growing past it in ``g``'s share: ``g``'s
    level came out low and ``b`` got 27.67, ``c`` 55.33.  The oracle is right here."""
    data = {
        "resources": {"cpu": 90},
        "groups": {"r": {"guarantee": {"cpu": 90}}, "g": {"parent": "r"}},
        "users": {
            "a": {"group": "g", "request": {"cpu": 60}, "borrowing_limit": {"cpu": 7}},
            "b": {"group": "g", "request": {"cpu": 90}},
            "c": {"group": "r", "request": {"cpu": 90}},
        },
    }
    inst = parse_case(data).instance
    got, _ = kueue.Kueue().entitlement(inst)
    expected, _ = previous.Kueue().entitlement(inst)
    assert close(got[:, 0], [7.0, 38.0, 45.0], AGREEMENT) and close(got, expected, REL)


def test_a_cohort_whose_share_starts_at_its_quota_jumps_there_in_its_parents_sum():
    """The other difference found on deep trees (4 queues, three levels of cohorts): cohort
    ``g3_0``'s usage met its quota at a knot read by interpolation a unit above it, so its share
    there was 4e-15 instead of 0 and its response, which jumps from 0 to 5 CPUs at share 0, rose
    over a ramp of slope 1e15; summed with its sibling's, the running slope kept 0.1 of it
    (cancellation), and ``g2_1``'s usage grew 0.5 CPU per unit level instead of 0.42 (by hand:
    0.068 / (0.068 * 1000 / 204) = 0.204 for ``g3_0``, 0.2903 / (0.3236 * 1000 / 243) = 0.218
    for ``g3_2``, whose memory binds).  The oracle is right here."""
    inst = frozen("tree-4-3-2-seed16")
    got, _ = kueue.Kueue().entitlement(inst)
    expected, _ = previous.Kueue().entitlement(inst)
    assert close(got, expected, REL), (got, expected)


def test_the_oracle_stops_a_queue_that_a_constraint_does_not_stop():
    """A case where the oracle is wrong: cohorts six deep, the root's quota 142 CPUs, 123 GPUs and
    no memory (its queues' nominal quotas summed).  ``q1``, ``q2``, ``q3`` ask for memory, so
    they get nothing (the root's memory is full at once, the first event); ``q4`` (54 CPUs, 6 GPUs
    a unit) asks for none and grows alone until the root's CPUs are full, by hand at
    ``142 / 54 = 2.6296`` units (15.8 GPUs, within 123).  The oracle's second event ends "an event
    without a tight constraint" and leaves ``q4`` at 0 (not run here: its stuck search takes a
    minute)."""
    inst = frozen("tree-4-6-3-seed3041")
    got, info = kueue.Kueue().entitlement(inst)
    assert close(got[:, 0], [0.0, 0.0, 0.0, 142.0], AGREEMENT) and "warnings" not in info
