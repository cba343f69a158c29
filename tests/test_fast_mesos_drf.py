"""mesos-drf's fast filling (a sweep at the root, every group of a depth at once below it) against
the previous round-by-round filling (the oracle in ``previous_mesos_drf``), against the filling
node by node with a sweep at each (as at 2f85c17) and against the mechanism's program (a sequence
of LPs), on random queue trees: flat to six levels deep, with weights, guarantees, limits,
inactive queues."""

from __future__ import annotations

import copy

import numpy as np
import previous_mesos_drf
import pytest
from hypothesis import HealthCheck, given, settings

import fairalloc
from fairalloc.core.errors import FairallocError
from fairalloc.core.queues import Queues
from fairalloc.core.tolerances import AGREEMENT, SATURATION
from fairalloc.models import mesos_drf
from fairalloc.testing import assert_same_tasks, close, queue_trees, solved_or_refused

SLOW = [HealthCheck.too_slow]


def _same_as_the_rounds(inst) -> None:
    """Same bundles as the previous filling (relative SATURATION, the filling's own resolution)
    and the same nodes whose guarantees were shared, or the same refusal."""
    fast = solved_or_refused(copy.deepcopy(inst), "mesos-drf")
    if isinstance(fast, FairallocError):
        with pytest.raises(type(fast)):
            previous_mesos_drf.bundles(inst)
        return
    before, cut = previous_mesos_drf.equilibrium(inst)
    assert close(fast.bundles, before, SATURATION), (fast.bundles, before, inst.to_dict())
    assert fast.info["guarantees_cut"] == cut


def _same_as_the_program(inst) -> None:
    fast = solved_or_refused(copy.deepcopy(inst), "mesos-drf")
    if isinstance(fast, FairallocError):
        with pytest.raises(type(fast)):
            fairalloc.solve(inst, "mesos-drf", method="program")
        return
    assert_same_tasks(fast, fairalloc.solve(inst, "mesos-drf", method="program"), AGREEMENT)


def _on_trees(check, examples: int, min_depth: int) -> None:
    """``check`` on random trees of up to 50 queues, ``min_depth`` to six levels deep."""
    trees = queue_trees(max_queues=50, min_depth=min_depth)
    settings(max_examples=examples, deadline=None, suppress_health_check=SLOW)(given(trees)(check))()


@pytest.mark.parametrize(("min_depth", "examples"), [(0, 200), (6, 100)])
def test_the_fast_filling_equals_the_rounds(min_depth, examples):
    _on_trees(_same_as_the_rounds, examples, min_depth)


@pytest.mark.parametrize(("min_depth", "examples"), [(0, 80), (6, 40)])
def test_the_fast_filling_equals_the_program(min_depth, examples):
    _on_trees(_same_as_the_program, examples, min_depth)


@settings(max_examples=150, deadline=None, suppress_health_check=SLOW)
@given(queue_trees(max_queues=50))
def test_a_depth_at_once_equals_node_by_node(inst):
    """The groups of a depth filled together give what a sweep at each of them gives: the units,
    the rounds (distinct freezing levels, node by node) and the nodes whose guarantees were
    shared, in the order of the walk."""
    mech = mesos_drf.MesosDRF()
    try:
        units, rounds, cut = mesos_drf._equilibrium_by_level(mech, copy.deepcopy(inst))
    except FairallocError as refused:
        with pytest.raises(type(refused)):
            mesos_drf._equilibrium(mech, copy.deepcopy(inst), mesos_drf._sweep)
        return
    node_units, node_rounds, node_cut = mesos_drf._equilibrium(mech, copy.deepcopy(inst), mesos_drf._sweep)
    assert close(units, node_units, SATURATION), (units, node_units, inst.to_dict())
    assert (rounds, cut) == (node_rounds, node_cut)


def test_a_full_resource_stops_each_child_where_it_outgrows_its_guarantee():
    """The rounds the sweep replaces, by hand: capacity (100 cpu, 12 mem); a, b, c ask (1, 1),
    a guaranteed (1, 4), b (1, 6), c nothing; d asks (1, 0).  Keys (weighted dominant share per
    task): 0.1 for a, b, c (mem), 0.01 for d.  a and b start at 1 task (their cpu guarantee), and
    their unused mem guarantees are held: mem = max(4, u_a) + max(6, u_b) + u_c.  At level 0.2
    c reaches 2 and mem is full (4 + 6 + 2): c stops.  a and b go on within their held mem until
    a reaches 4 (level 0.4) and b 6 (level 0.6), where each would take more of the full mem: a
    round each before.  d takes the cpus left: 100 - 4 - 6 - 2 = 88."""
    nodes = {"a": {"guarantee": [1, 4]}, "b": {"guarantee": [1, 6]}, "c": {}, "d": {}}
    q = Queues.build(["cpu", "mem"], nodes, [])
    demand = [[1, 1], [1, 1], [1, 1], [1, 0]]
    inst = fairalloc.Instance([100, 12], demand, users=list(nodes), resources=["cpu", "mem"], queues=q)
    expected = [4, 6, 2, 88]
    np.testing.assert_allclose(fairalloc.solve(inst, "mesos-drf").tasks, expected, rtol=1e-12)
    np.testing.assert_allclose(previous_mesos_drf.bundles(inst)[:, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(fairalloc.solve(inst, "mesos-drf", method="program").tasks, expected, rtol=1e-7)


def test_two_groups_of_one_depth_filled_together():
    """By hand, 100 cpu, every queue asking 100: group g (limit 50) holds c (weight 3, guarantee
    40) and d (guarantee 40); group h holds x (limit 10) and y.  g's shape is 3 * 100 + 100 = 400
    cpu a unit, its limit 1/8 unit; h's 200 cpu a unit.  At the root g starts at its lower bound,
    which its limit caps (50 cpu: frozen at once), and h takes the other 50.  g and h are then
    filled together: in g the guarantees (40 + 40) do not fit in 50, so a first filling shares
    them: u_c = 3 t, u_d = t, 100 (3 t + t) = 50 at t = 1/8: c 37.5, d 12.5, both below 40 and
    nothing left for the filling on from there.  In h x stops at its limit 10 (t = 0.1) and y
    goes on to 40 (t = 0.4).  Rounds: the root 2 (levels 0 and h's), g 1 + 1, h 2."""
    nodes = {
        "g": {"limit": [50]},
        "h": {},
        "c": {"parent": "g", "weight": 3, "guarantee": [40]},
        "d": {"parent": "g", "guarantee": [40]},
        "x": {"parent": "h", "limit": [10]},
        "y": {"parent": "h"},
    }
    q = Queues.build(["cpu"], nodes, ["g", "h"])
    inst = fairalloc.Instance([100], [[100]] * 4, users=["c", "d", "x", "y"], resources=["cpu"], queues=q)
    expected = [37.5, 12.5, 10, 40]
    fast = fairalloc.solve(inst, "mesos-drf")
    np.testing.assert_allclose(fast.bundles[:, 0], expected, rtol=1e-12)
    assert fast.info == {"rounds": 6, "guarantees_cut": ["g"]}
    np.testing.assert_allclose(previous_mesos_drf.bundles(inst)[:, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(fairalloc.solve(inst, "mesos-drf", method="program").bundles[:, 0], expected, rtol=1e-7)
