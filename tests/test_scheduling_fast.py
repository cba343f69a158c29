"""``DRFScheduler.run_counts``: exactly the decisions of ``step()`` one by one, in batches."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.scheduling import DRFScheduler
from fairalloc.testing import instances

SETTINGS = settings(
    max_examples=max(150, settings().max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def same_state(a: DRFScheduler, b: DRFScheduler) -> None:
    """Bit for bit: the batched path must not even round differently."""
    assert a.launched.tolist() == b.launched.tolist()
    assert np.array_equal(a.U, b.U) and np.array_equal(a.C, b.C) and np.array_equal(a.s, b.s)
    assert a.steps == b.steps and a.parked == b.parked


def stepped(s: DRFScheduler, limit: int | None) -> list[str]:
    users = []
    while limit is None or len(users) < limit:
        launch = s.step()
        if launch is None:
            break
        users.append(launch.user)
    return users


@st.composite
def scenarios(draw):
    inst = draw(instances(max_users=6, max_resources=3, weights="any", bounds=True, max_demand=6))
    if draw(st.booleans()):  # fractional demands: sums that round
        inst = fairalloc.Instance(
            inst.capacity,
            inst.demand * draw(st.sampled_from([0.1, 0.3, 1 / 7])),
            weights=inst.weights,
            max_tasks=inst.max_tasks,
        )
    tasks = None
    if draw(st.booleans()):  # explicit task lists, with runs of equal tasks
        row = st.lists(st.integers(0, 6).map(float), min_size=inst.m, max_size=inst.m)
        tasks = {}
        for i, u in enumerate(inst.users):
            if draw(st.booleans()):
                runs = draw(st.lists(st.tuples(st.one_of(st.just(None), row), st.integers(1, 12)), max_size=5))
                tasks[u] = [inst.demand[i] if t is None else t for t, k in runs for _ in range(k)]
    return dict(
        inst=inst,
        tasks=tasks,
        policy=draw(st.sampled_from(["stop", "skip"])),
        tie_break=draw(st.sampled_from(["larger-task", "order"])),
        chunk=draw(st.sampled_from([2, 3, 8, 64, 1 << 17])),
        first=draw(st.one_of(st.none(), st.integers(0, 60))),
        release=draw(st.booleans()),
    )


@SETTINGS
@given(scenarios())
def test_run_counts_is_step_by_step(case):
    inst, tasks = case["inst"], case["tasks"]
    kw = dict(policy=case["policy"], tie_break=case["tie_break"])
    fast, slow = DRFScheduler(inst, tasks, **kw), DRFScheduler(inst, tasks, **kw)
    fast.chunk_target = case["chunk"]
    counts = fast.run_counts(case["first"])
    users = stepped(slow, case["first"])
    assert counts.tolist() == [users.count(u) for u in inst.users]
    same_state(fast, slow)
    if case["release"] and tasks is None and slow.launched.any():
        # a task finishes in the middle: set-aside users wake up, both go on the same way
        i = int(np.flatnonzero(slow.launched)[-1])
        fast.release(i, inst.demand[i])
        slow.release(i, inst.demand[i])
    more = fast.run_counts()
    rest = stepped(slow, None)
    assert more.tolist() == [rest.count(u) for u in inst.users]
    same_state(fast, slow)
    assert fast.step() is None


@SETTINGS
@given(scenarios(), st.lists(st.integers(1, 7), min_size=1, max_size=6))
def test_run_counts_in_pieces_keeps_the_sequence(case, pieces):
    """The counts after each piece give the users chosen one by one: the same sequence."""
    inst, tasks = case["inst"], case["tasks"]
    kw = dict(policy=case["policy"], tie_break=case["tie_break"])
    fast, slow = DRFScheduler(inst, tasks, **kw), DRFScheduler(inst, tasks, **kw)
    fast.chunk_target = case["chunk"]
    for k in pieces:
        users = stepped(slow, k)
        assert fast.run_counts(k).tolist() == [users.count(u) for u in inst.users]
        same_state(fast, slow)


def test_table_1_order_one_launch_at_a_time():
    inst = fairalloc.load_case("drf-section-4-1").instance
    s = DRFScheduler(inst)
    order = [inst.users[int(np.argmax(s.run_counts(1)))] for _ in range(5)]
    assert order == ["B", "A", "A", "B", "A"] and s.run_counts().tolist() == [0, 0]


def test_lean_single_steps_are_the_same():
    inst = fairalloc.Instance.from_arrays([7, 18], [[1, 2], [3, 1]], users=["A", "B"])
    for policy, expected in (("stop", [3, 1]), ("skip", [4, 1])):
        assert DRFScheduler(inst, policy=policy).run_counts(batch=False).tolist() == expected
        assert DRFScheduler(inst, policy=policy).run_counts().tolist() == expected


@pytest.mark.parametrize("policy", ["stop", "skip"])
def test_tiny_task_user_is_batched(policy):
    """One user's tasks are 1000 times smaller: she gets long runs, launched in a few batches."""
    demand = np.array([[0.001, 0.002], [1.0, 0.5], [0.5, 1.0], [0.7, 0.7]])
    inst = fairalloc.Instance([200.0, 200.0], demand)
    fast, slow = DRFScheduler(inst, policy=policy), DRFScheduler(inst, policy=policy)
    counts = fast.run_counts()
    slow.run_counts(batch=False)
    same_state(fast, slow)
    total = int(counts.sum())
    assert counts[0] > 0.9 * total and total > 20_000
    assert fast.stats["batched"] + fast.stats["single"] == total
    assert fast.stats["chunks"] < 20 and fast.stats["single"] < 200  # not one decision at a time
    assert slow.stats["single"] == total and slow.stats["batched"] == 0


@pytest.mark.parametrize("tie_break", ["larger-task", "order"])
def test_equal_shares_at_the_batch_boundary(tie_break):
    """Shares that coincide across users (tasks in ratio 1:2:3), every small batch size and every
    small capacity (so that the task that does not fit falls anywhere): the tie-break must hold
    where a batch ends, too."""
    for demand in (
        [[1], [2]],
        [[2], [1]],
        [[1], [3]],
        [[3], [1]],
        [[1], [2], [3]],
        [[3], [2], [1]],
        [[2, 1], [1, 2], [1, 1]],
    ):
        m = len(demand[0])
        for cap in range(4, 31):
            inst = fairalloc.Instance([float(cap)] * m, np.array(demand, dtype=float))
            for chunk in range(2, 11):
                for policy in ("stop", "skip"):
                    fast = DRFScheduler(inst, policy=policy, tie_break=tie_break)
                    slow = DRFScheduler(inst, policy=policy, tie_break=tie_break)
                    fast.chunk_target = chunk
                    for k in (2, 5, None):
                        users = stepped(slow, k)
                        assert fast.run_counts(k).tolist() == [users.count(u) for u in inst.users], (
                            demand,
                            cap,
                            chunk,
                            policy,
                        )
                        same_state(fast, slow)
