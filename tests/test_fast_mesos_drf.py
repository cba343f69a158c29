"""mesos-drf's one-sweep filling against the previous round-by-round filling (the oracle in
``previous_mesos_drf``) and against the mechanism's program (a sequence of LPs), on random queue
trees: flat to six levels deep, with weights, guarantees, limits, inactive queues."""

from __future__ import annotations

import numpy as np
import previous_mesos_drf
import pytest
from hypothesis import HealthCheck, given, settings

import fairalloc
from fairalloc.core.errors import FairallocError
from fairalloc.core.tolerances import AGREEMENT, SATURATION
from fairalloc.testing import assert_same_tasks, close, queue_trees, solved_or_refused


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_trees(max_queues=50))
def test_the_sweep_equals_the_rounds(inst):
    """Same bundles as the previous filling (relative SATURATION, the filling's own resolution),
    or the same refusal."""
    fast = solved_or_refused(inst, "mesos-drf")
    if isinstance(fast, FairallocError):
        with pytest.raises(type(fast)):
            previous_mesos_drf.bundles(inst)
        return
    before = previous_mesos_drf.bundles(inst)
    assert close(fast.bundles, before, SATURATION), (fast.bundles, before, inst.to_dict())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_trees(max_queues=20, max_depth=3))
def test_the_sweep_equals_the_program(inst):
    fast = solved_or_refused(inst, "mesos-drf")
    if isinstance(fast, FairallocError):
        with pytest.raises(type(fast)):
            fairalloc.solve(inst, "mesos-drf", method="program")
        return
    assert_same_tasks(fast, fairalloc.solve(inst, "mesos-drf", method="program"), AGREEMENT)


def test_a_full_resource_stops_each_child_where_it_outgrows_its_guarantee():
    """The rounds the sweep replaces, by hand: capacity (100 cpu, 12 mem); a, b, c ask (1, 1),
    a guaranteed (1, 4), b (1, 6), c nothing; d asks (1, 0).  Keys (weighted dominant share per
    task): 0.1 for a, b, c (mem), 0.01 for d.  a and b start at 1 task (their cpu guarantee), and
    their unused mem guarantees are held: mem = max(4, u_a) + max(6, u_b) + u_c.  At level 0.2
    c reaches 2 and mem is full (4 + 6 + 2): c stops.  a and b go on within their held mem until
    a reaches 4 (level 0.4) and b 6 (level 0.6), where each would take more of the full mem: a
    round each before.  d takes the cpus left: 100 - 4 - 6 - 2 = 88."""
    from fairalloc.core.queues import Queues

    nodes = {"a": {"guarantee": [1, 4]}, "b": {"guarantee": [1, 6]}, "c": {}, "d": {}}
    q = Queues.build(["cpu", "mem"], nodes, [])
    demand = [[1, 1], [1, 1], [1, 1], [1, 0]]
    inst = fairalloc.Instance([100, 12], demand, users=list(nodes), resources=["cpu", "mem"], queues=q)
    expected = [4, 6, 2, 88]
    np.testing.assert_allclose(fairalloc.solve(inst, "mesos-drf").tasks, expected, rtol=1e-12)
    np.testing.assert_allclose(previous_mesos_drf.bundles(inst)[:, 0], expected, rtol=1e-12)
    np.testing.assert_allclose(fairalloc.solve(inst, "mesos-drf", method="program").tasks, expected, rtol=1e-7)
