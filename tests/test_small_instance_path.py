"""The verifier's cheap misreport (Instance.with_demand checks only the changed row and reuses the
cached shares) gives the instance, shares and errors a full construction gives; validation in
blocks of rows names the same first offending entry as one pass (issue 18)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core import instance as instance_module
from fairalloc.core.errors import CaseError

ENTRIES = st.one_of(
    st.integers(0, 20).map(float),
    st.sampled_from([0.0, -1.0, np.nan, np.inf, 1e-40, 1e40, 1e-13, 0.5]),
)


@st.composite
def misreports(draw):
    n, m = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    D = rng.integers(0, 10, (n, m)).astype(float)
    R = rng.integers(1, 100, m).astype(float)
    if draw(st.booleans()) and m > 1:  # a resource of zero capacity nobody demands
        R[-1] = 0.0
        D[:, -1] = 0.0
    D[~(D > 0).any(axis=1), 0] = 1.0
    row = np.array([draw(ENTRIES) for _ in range(m)])
    return R, D, draw(st.integers(0, n - 1)), row, draw(st.booleans())


def _outcome(build):
    try:
        inst = build()
    except CaseError as error:
        return str(error)
    return inst


@settings(deadline=None, max_examples=300)
@given(misreports())
def test_with_demand_is_a_full_construction(case):
    R, D, i, row, warm = case
    inst = fairalloc.Instance(R, D)
    if warm:  # the shares cached on the instance are reused, with her row recomputed
        _ = (inst.share_per_task, inst.per_task_dominant_share)
    D2 = D.copy()
    D2[i] = row
    fast = _outcome(lambda: inst.with_demand(i, row))
    full = _outcome(lambda: fairalloc.Instance(R, D2))
    if isinstance(full, str):
        assert fast == full
        return
    assert not isinstance(fast, str), fast
    assert np.array_equal(fast.demand, full.demand) and not fast.demand.flags.writeable
    assert np.array_equal(fast.share_per_task, full.share_per_task)
    assert np.array_equal(fast.per_task_dominant_share, full.per_task_dominant_share)
    assert fast.users == full.users and fast.resources == full.resources
    assert np.array_equal(inst.demand, D)  # the original is untouched


@settings(deadline=None, max_examples=100)
@given(st.integers(1, 40), st.integers(1, 5), st.integers(0, 2**32 - 1), st.sampled_from([np.nan, -2.0, 0.0, 1e40]))
def test_blocks_of_rows_find_the_first_bad_entry(n, m, seed, bad):
    rng = np.random.default_rng(seed)
    D = rng.integers(1, 10, (n, m)).astype(float)
    for _ in range(int(rng.integers(1, 4))):  # a few bad entries, anywhere
        i, j = int(rng.integers(n)), int(rng.integers(m))
        D[i, j] = bad if bad != 0.0 else 0.0
        if bad == 0.0:
            D[i] = 0.0  # an all-zero user
    R = np.full(m, 100.0)
    one_pass = _outcome(lambda: fairalloc.Instance(R, D))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(instance_module, "CHUNK_CELLS", m * 3)  # blocks of 3 rows
        blocks = _outcome(lambda: fairalloc.Instance(R, D))
    if isinstance(one_pass, str):
        assert blocks == one_pass
    else:
        assert not isinstance(blocks, str)
        assert np.array_equal(blocks.per_task_dominant_share, one_pass.per_task_dominant_share)
        assert np.array_equal(blocks.share_rows(np.sum), one_pass.share_per_task.sum(axis=1))


def test_read_only_float_input_is_not_copied_and_writeable_input_is():
    D = np.array([[1.0, 2.0], [3.0, 1.0]])
    R = np.array([10.0, 10.0])
    copied = fairalloc.Instance(R, D)
    assert not np.shares_memory(copied.demand, D) and D.flags.writeable
    D.flags.writeable = False
    shared = fairalloc.Instance(R, D)
    assert np.shares_memory(shared.demand, D)
    derived = shared.with_capacity([20.0, 20.0])
    assert derived.capacity.tolist() == [20.0, 20.0]


@settings(deadline=None, max_examples=25)
@given(st.integers(2, 60), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_dual_newton_in_blocks_of_rows_agrees(n, m, seed):
    """The Hessian summed over blocks of rows (a large instance) gives CEEI's answer to AGREEMENT."""
    from fairalloc.core.tolerances import AGREEMENT
    from fairalloc.engines import dual_newton

    rng = np.random.default_rng(seed)
    inst = fairalloc.Instance(rng.integers(10, 100, m).astype(float), rng.integers(1, 10, (n, m)).astype(float))
    whole = fairalloc.solve(inst, "ceei", method="fast").tasks
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dual_newton, "GRAM_CELLS", m * 3)
        blocks = fairalloc.solve(fairalloc.Instance(inst.capacity, inst.demand), "ceei", method="fast").tasks
    assert blocks == pytest.approx(whole, rel=AGREEMENT, abs=AGREEMENT)


def _same_instance(a, b):
    """Every field and every cached share of two instances, bit for bit."""
    for field in ("capacity", "demand", "weights", "max_tasks", "shared"):
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None and y is None) or (np.array_equal(x, y, equal_nan=True) and not x.flags.writeable), field
    assert a.users == b.users and a.resources == b.resources and a.groups == b.groups
    assert np.array_equal(a.share_per_task, b.share_per_task)
    assert np.array_equal(a.per_task_dominant_share, b.per_task_dominant_share)


@settings(deadline=None, max_examples=200)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_dropping_idle_queues_is_a_full_construction(seed, warm):
    """``Instance.only`` of a checked instance checks nothing again (the verifier drops the idle
    queues of every report): the same instance, shares and queue tree a checked construction of the
    kept rows gives."""
    from fairalloc.analysis.falsify import InstanceSpace, random_queue_instance

    rng = np.random.default_rng(seed)
    inst = random_queue_instance(InstanceSpace(queues=True, weights=True), "strategy_proofness", rng)
    if warm:
        _ = (inst.share_per_task, inst.per_task_dominant_share)
    keep = rng.random(inst.n) < 0.7
    keep[int(rng.integers(inst.n))] = True
    fast = inst.only(keep)
    names = [u for u, k in zip(inst.users, keep) if k]
    full = fairalloc.Instance(
        inst.capacity,
        inst.demand[keep],
        users=names,
        resources=inst.resources,
        weights=None if inst.weights is None else inst.weights[keep],
        max_tasks=None if inst.max_tasks is None else inst.max_tasks[keep],
        name=inst.name,
        groups=fast.groups,
        queues=fast.queues,
    )
    _same_instance(fast, full)
    assert fast.queues.leaf_names == tuple(names)
    assert inst.only(keep).queues is fast.queues  # one tree per set of dropped queues


@settings(deadline=None, max_examples=200)
@given(misreports(), st.sampled_from([1.0, 2.5, 1e-7, 1e7, np.nan, -1.0, 0.0]))
def test_a_collapsed_tree_checks_only_its_weights(case, spread):
    """``Instance.flat_with_weights`` checks only the new weights: the instance and errors of a
    checked construction with those weights."""
    R, D, _, _, warm = case
    inst = _outcome(lambda: fairalloc.Instance(R, D))
    if isinstance(inst, str):
        return
    if warm:
        _ = (inst.share_per_task, inst.per_task_dominant_share)
    weights = np.linspace(1.0, 1.0 if np.isnan(spread) else spread, inst.n)
    if np.isnan(spread):
        weights[-1] = np.nan
    fast = _outcome(lambda: inst.flat_with_weights(weights))
    full = _outcome(lambda: fairalloc.Instance(R, D, weights=weights))
    if isinstance(full, str):
        assert fast == full
    else:
        _same_instance(fast, full)
