"""volcano-capacity's queue attributes built for every queue of a tree level at once (issue 36) are
those of the previous implementation, which built them queue by queue (the oracle in
``previous_volcano_capacity``), on random queue trees flat to six levels deep, with guarantees,
capabilities, deserved amounts and inactive queues.  The plug-in divides nothing (``deserved`` is
the operator's number, clamped and floored): it has no program to hold it to."""

from __future__ import annotations

import numpy as np
import previous_volcano_capacity
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core.errors import FairallocError
from fairalloc.core.queues import Queues
from fairalloc.core.tolerances import SATURATION
from fairalloc.models.volcano_capacity import VolcanoCapacity, _usage, capacity_attrs, share
from fairalloc.models.volcano_proportion import IGNORED, volcano_units
from fairalloc.testing import close, queue_trees


@st.composite
def trees_with_deserved(draw, max_queues: int = 50):
    """``queue_trees`` (which configures no ``deserved``) with a deserved amount on some queues and
    groups: a drawn share of the capacity, or of the guarantee (below it: the floor then binds)."""
    inst = draw(queue_trees(max_queues=max_queues))
    q = inst.queues
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nodes = {}
    for v in q.parent:
        spec = {f: getattr(q, f)[v] for f in ("parent", "weight", "priority", "guarantee", "limit", "usage")}
        if rng.random() < 0.6:
            base = np.where(np.isnan(q.guarantee[v]), inst.capacity, q.guarantee[v])
            spec["deserved"] = np.round(base * rng.uniform(0.0, 1.5, len(base)), 3)
        nodes[v] = spec
    queues = Queues.build(q.resources, nodes, q.groups)
    return fairalloc.Instance(
        inst.capacity, inst.demand, users=list(inst.users), resources=list(inst.resources),
        max_tasks=inst.bounds(), queues=queues,
    )  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees_with_deserved())
def test_the_levels_at_once_equal_the_queues_one_by_one(inst):
    try:
        fast = fairalloc.solve(inst, "volcano-capacity")
    except FairallocError as refused:
        with pytest.raises(type(refused)):
            previous_volcano_capacity.bundles_as_solved(inst)
        return
    before, info = previous_volcano_capacity.bundles_as_solved(inst)
    assert close(fast.bundles, before, SATURATION), (fast.bundles, before, inst.to_dict())
    assert fast.info["hierarchical"] == info["hierarchical"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees_with_deserved(max_queues=30))
def test_the_attributes_are_the_queue_by_queue_ones(inst):
    """What shares, order and admission read: every queue's deserved, real capability (where
    Volcano's resource has the key; ``inf`` where nothing caps it) and ancestors."""
    before = previous_volcano_capacity.capacity_attrs(inst)
    now = capacity_attrs(inst)
    assert now.hierarchical == before.hierarchical and now.ancestors == before.ancestors
    assert set(now.deserved) == set(before.deserved) and set(now.real) == set(before.real)
    for v in before.deserved:
        assert close(now.deserved[v], before.deserved[v], SATURATION), v
    for v in before.real:
        assert np.array_equal(now.present[v], before.present[v]), v
        assert np.array_equal(np.isinf(now.real[v]), np.isinf(before.real[v])), v
        finite = np.isfinite(before.real[v])
        assert close(now.real[v][finite], before.real[v][finite], SATURATION), v
    assert VolcanoCapacity().shares(inst) == pytest.approx(_previous_shares(inst, before), rel=SATURATION)


def _previous_shares(inst, attrs):
    """``VolcanoCapacity.shares`` on the oracle's attributes."""
    q = inst.queues
    unit = volcano_units(tuple(inst.resources))
    ignored = np.array([r in IGNORED for r in inst.resources])
    nodes = [*inst.users, *q.groups]
    return {v: share(attrs.deserved[v], _usage(q, v, unit), ignored) for v in nodes if v in attrs.deserved}
