"""Algorithm 1 (Table 1), the stop / skip policies, releases, and Theorem 7 on random clusters."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.cli import main
from fairalloc.scheduling import DRFScheduler, fill_machines, table_1

SECTION_4_1 = fairalloc.load_case("drf-section-4-1").instance

# Table 1 of the DRF paper (fractions reduced): schedule, A shares, A dom, B shares, B dom, CPU, RAM
TABLE_1 = [
    ["User B", "<0, 0>", "0", "<1/3, 1/18>", "1/3", "1/3", "1/18"],
    ["User A", "<1/9, 2/9>", "2/9", "<1/3, 1/18>", "1/3", "4/9", "5/18"],
    ["User A", "<2/9, 4/9>", "4/9", "<1/3, 1/18>", "1/3", "5/9", "1/2"],
    ["User B", "<2/9, 4/9>", "4/9", "<2/3, 1/9>", "2/3", "8/9", "5/9"],
    ["User A", "<1/3, 2/3>", "2/3", "<2/3, 1/9>", "2/3", "1", "7/9"],
]


def test_algorithm_1_reproduces_table_1():
    trace = DRFScheduler(SECTION_4_1).run()
    assert table_1(trace, SECTION_4_1)[1] == TABLE_1


def test_schedule_command_prints_table_1(capsys):
    assert main(["schedule", "drf-section-4-1"]) == 0
    out = capsys.readouterr().out
    for row in TABLE_1:
        assert all(cell in out for cell in row)
    assert "tasks: A 3, B 2" in out


def test_stop_versus_skip():
    # B's task <3, 1> no longer fits after 2 tasks while A's small tasks still do
    inst = fairalloc.Instance.from_arrays([7, 18], [[1, 2], [3, 1]], users=["A", "B"])
    stop = DRFScheduler(inst, policy="stop")
    stop.run()
    skip = DRFScheduler(inst, policy="skip")
    skip.run()
    assert stop.launched.tolist() == [3, 1] and skip.launched.tolist() == [4, 1]
    assert np.all(skip.C <= inst.capacity)


def test_per_task_demands_weights_and_releases():
    inst = fairalloc.Instance.from_arrays([10, 10], [[1, 1], [1, 1]], users=["A", "B"], weights=[2, 1])
    s = DRFScheduler(inst, tasks={"A": [[1, 1]] * 10, "B": [[2, 1], [1, 1], [1, 1]]})
    trace = s.run()
    # B's tasks differ (<2, 1> then <1, 1>); A weighs 2: s_A = 6 / (10 * 2) = 0.3, s_B = 4 / 10 = 0.4
    assert [launch.user for launch in trace] == ["B", "A", "A", "A", "A", "B", "A", "A", "B"]
    assert s.launched.tolist() == [6, 3] and s.C.tolist() == [10, 9]
    assert s.s.tolist() == pytest.approx([0.3, 0.4])
    s.release("A", [1, 1])
    assert s.step().user == "A" and s.launched.tolist() == [7, 3]
    with pytest.raises(fairalloc.FairallocError):
        s.release("B", [5, 5])


@st.composite
def clusters(draw):
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 3))
    D = np.array(
        draw(st.lists(st.lists(st.integers(1, 6), min_size=m, max_size=m), min_size=n, max_size=n)), dtype=float
    )
    k = draw(st.integers(1, 6))
    max_task = D.max(axis=0)
    machines = max_task + np.array(
        draw(st.lists(st.lists(st.integers(0, 20), min_size=m, max_size=m), min_size=k, max_size=k)), dtype=float
    )
    return fairalloc.Instance(machines.sum(axis=0), D), machines


@settings(max_examples=max(150, settings().max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_theorem_7_bound(cluster):
    inst, machines = cluster
    placement = fill_machines(inst, machines)
    s = placement.dominant_shares
    assert s.max() - s.min() <= placement.max_task_share + 1e-12
    used = placement.per_machine @ inst.demand
    assert np.all(used <= machines + 1e-9)  # every machine within its capacity
    left = machines - used  # each machine ends with less than a max-task free
    assert np.all(np.any(left < inst.demand.max(axis=0) - 1e-9, axis=1))
