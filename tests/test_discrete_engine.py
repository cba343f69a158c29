"""The discrete DRF / H-DRF engine (:mod:`fairalloc.engines.discrete`): named scenarios of the
papers and, on random instances, a flat tree against a one-level tree against a slow reference."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core.tolerances import FIT
from fairalloc.engines.discrete import DiscreteEngine
from fairalloc.testing import instances

SETTINGS = settings(
    max_examples=max(150, settings().max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def section_4_1(**kw) -> DiscreteEngine:
    """DRF paper, section 4.1: <9 CPUs, 18 GB>, A's tasks <1 CPU, 4 GB>, B's <3 CPUs, 1 GB>."""
    return DiscreteEngine([9.0, 18.0], [1.0, 1.0], demand=[[1.0, 4.0], [3.0, 1.0]], **kw)


def decisions(engine: DiscreteEngine) -> list[int]:
    order = []
    while (decided := engine.decide()) is not None:
        order.append(decided[0])
    return order


def test_section_4_1_gives_a_three_tasks_and_b_two():
    engine = section_4_1(tie_break="larger-task", policy="stop")
    decisions(engine)
    assert engine.launched.tolist() == [3, 2]
    assert engine.C.tolist() == [9.0, 14.0]
    assert engine.share[:2].tolist() == pytest.approx([2 / 3, 2 / 3])


def test_table_1_order():
    # Table 1: B first (equal shares 0; her task is 1/3 of the CPUs, A's 2/9 of the memory), then A, A, B, A
    assert decisions(section_4_1(tie_break="larger-task", policy="stop")) == [1, 0, 0, 1, 0]
    # ties to the user listed first instead: A opens
    assert decisions(section_4_1(tie_break="order", policy="stop"))[0] == 0


def test_two_level_tree():
    """H-DRF (Bhattacharya et al., SoCC 2013): 12 CPUs, group g (weight 1) holding users 0 and 1,
    user 2 beside it at the root; every task 1 CPU.  The root splits 6 / 6, the group 3 / 3."""
    engine = DiscreteEngine(
        [12.0],
        [1.0, 1.0, 1.0],
        parent=[3, 3, None, None],
        group_weights=[1.0],
        order=[3, 0, 1, 2],
        demand=[[1.0], [1.0], [1.0]],
    )
    order = decisions(engine)
    assert engine.launched.tolist() == [3, 3, 6]
    assert order[:4] == [0, 2, 1, 2]  # group first (listed first), then user 2, ...
    assert engine.share[3] == engine.share[2] == 0.5


def test_group_weights_split_the_parent_share():
    engine = DiscreteEngine(
        [12.0], [1.0, 1.0], parent=[2, 3, None, None], group_weights=[2.0, 1.0], demand=[[1.0], [1.0]]
    )
    decisions(engine)
    assert engine.launched.tolist() == [8, 4]


def test_pick_passes_over_without_parking():
    engine = DiscreteEngine([10.0, 10.0], [1.0, 1.0, 1.0], parent=[3, 3, None, None], group_weights=[1.0])
    engine.set_usage(2, [2.0, 0.0])
    assert engine.pick() == 0
    assert engine.pick(fits=lambda u: u == 2) == 2 and engine.passed == 3  # two owners, then their group
    assert engine.pick() == 0 and not engine.parked  # nothing moved
    engine.add(0, [1.0, 1.0])
    assert engine.pick() == 1
    engine.changed(1, active=False)
    assert engine.pick() == 0
    assert engine.pick(fits=lambda u: False) is None and engine.passed == 3


def test_release_wakes_parked_leaves():
    inst = fairalloc.Instance.from_arrays([7, 18], [[1, 2], [3, 1]], users=["A", "B"])
    engine = DiscreteEngine(inst.capacity, [1.0, 1.0], demand=inst.demand, policy="skip")
    decisions(engine)
    assert engine.launched.tolist() == [4, 1] and engine.parked == {0, 1}
    engine.release(1, [3.0, 1.0])
    assert not engine.parked and engine.decide()[0] == 1


# -- random instances -------------------------------------------------------------------------------------


def reference(inst: fairalloc.Instance, policy: str, tie_break: str) -> list[int]:
    """Algorithm 1, obviously: recompute every share each step and take the minimum key."""
    R, D, W, T = inst.capacity, inst.demand, inst.weight_matrix(), inst.bounds()
    n, m = D.shape
    RW = [[R[j] * W[i, j] if R[j] * W[i, j] > 0 else np.inf for j in range(m)] for i in range(n)]
    U = [[0.0] * m for _ in range(n)]
    C = [0.0] * m
    launched, parked, order = [0] * n, set(), []

    def key(i):
        share = max(U[i][j] / RW[i][j] for j in range(m))
        size = max(D[i, j] / RW[i][j] for j in range(m)) if tie_break == "larger-task" else 0.0
        return (share, -size, i)

    while True:
        waiting = [i for i in range(n) if launched[i] < T[i] and i not in parked]
        if not waiting:
            return order
        i = min(waiting, key=key)
        if all(C[j] + D[i, j] <= R[j] * (1 + FIT) for j in range(m)):
            for j in range(m):
                U[i][j] += D[i, j]
                C[j] += D[i, j]
            launched[i] += 1
            order.append(i)
        elif policy == "stop":
            return order
        else:
            parked.add(i)


def flat(inst, policy, tie_break) -> DiscreteEngine:
    return DiscreteEngine(
        inst.capacity, inst.weight_matrix(), demand=inst.demand, limit=inst.bounds(), policy=policy, tie_break=tie_break
    )


def one_group(inst, policy, tie_break) -> DiscreteEngine:
    """The same users as a one-level tree: all in one group (weight 1) under the root."""
    return DiscreteEngine(
        inst.capacity,
        inst.weight_matrix(),
        parent=[inst.n] * inst.n + [None],
        group_weights=[1.0],
        demand=inst.demand,
        limit=inst.bounds(),
        policy=policy,
        tie_break=tie_break,
    )


@SETTINGS
@given(
    instances(max_users=6, max_resources=3, weights="any", bounds=True, max_demand=6),
    st.sampled_from(["stop", "skip"]),
    st.sampled_from(["larger-task", "order"]),
    st.sampled_from([2, 8, 1 << 17]),
)
def test_flat_equals_one_level_tree_equals_reference(inst, policy, tie_break, chunk):
    expected = reference(inst, policy, tie_break)
    counts = np.bincount(expected, minlength=inst.n).tolist()
    assert decisions(flat(inst, policy, tie_break)) == expected
    assert decisions(one_group(inst, policy, tie_break)) == expected
    batched = flat(inst, policy, tie_break)
    assert batched.run_counts(target=chunk).tolist() == counts  # the merged batches
    stepped = flat(inst, policy, tie_break)
    assert stepped.run_counts(batch=False).tolist() == counts
    assert np.array_equal(batched.usage, stepped.usage) and np.array_equal(batched.share, stepped.share)
    if policy == "skip":  # the leaf runs, on a tree
        tree = one_group(inst, policy, tie_break)
        while (i := tree.choose()) is not None:
            tree.run_leaf(i)
        assert tree.launched.tolist() == counts
