"""The simulator's shortcuts give the schedules of its general path: on random small workloads (jobs
arriving and tasks ending at the same instants, reduce phases, deadlines, closed-loop jobs), each
built-in scheduler decides as the same scheduler made to keep every tally of running tasks
(:attr:`~fairalloc.engines.offers.Scheduler.reads_tallies`) and never idle (every node offered,
as to a plug-in), and ``max_overcommit`` (kept from each node's least free room) is the highest load
a launch leaves on a node, replayed from the task records."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.engines.offers import Scheduler
from fairalloc.scheduling.simulator import scheduler_of, simulate
from fairalloc.scheduling.workloads import Job, Task, Workload

SCHEDULERS = ["drf", "cpu-fair", "cpu-fair:oc", "hdrf", "fifo", "mfs", "slots:2", "slots:2:oc", "capacity:2"]


@st.composite
def workloads(draw) -> Workload:
    """1-3 nodes, 1-6 jobs of 1-3 owners on a grid of whole seconds (so that events share instants)."""
    node_cpu, node_mem = draw(st.sampled_from([(4.0, 8.0), (6.0, 6.0)]))
    whole = st.integers(1, 4).map(float)
    jobs = []
    for k in range(draw(st.integers(1, 6))):
        phases = tuple(
            tuple(Task(draw(whole), draw(whole), draw(whole)) for _ in range(draw(st.integers(1, 4))))
            for _ in range(draw(st.integers(1, 2)))
        )
        jobs.append(
            Job(
                f"job-{k}",
                f"user-{draw(st.integers(0, 2))}",
                float(draw(st.integers(0, 6))),
                phases,
                resubmit=draw(st.booleans()),
                until=draw(st.one_of(st.none(), st.integers(1, 12).map(float))),
            )
        )
    return Workload(draw(st.integers(1, 3)), node_cpu, node_mem, tuple(jobs), "random", horizon=30.0)


def general(name: str) -> Scheduler:
    """The scheduler ``name`` with every tally kept and never idle."""
    sched = scheduler_of(name)
    kind = type(sched)
    sched.__class__ = type(f"General{kind.__name__}", (kind,), {"reads_tallies": True, "idle": Scheduler.idle})
    return sched


def highest_load(records, node_cpu: float, node_mem: float) -> float:
    """The highest ``max(used cpu / cpu, used mem / mem)`` a launch leaves on its node (tasks ending at
    an instant end before the launches of that instant)."""
    worst = 0.0
    per_node = defaultdict(list)
    for r in records:
        per_node[r.node].append(r)
    for tasks in per_node.values():
        for k, r in enumerate(tasks):  # (in launch order)
            running = [o for o in tasks[: k + 1] if o.end > r.start]
            worst = max(worst, sum(o.cpu for o in running) / node_cpu, sum(o.mem for o in running) / node_mem)
    return worst


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_shortcuts_decide_as_the_general_path(w):
    for name in SCHEDULERS:
        fast = simulate(w, name, record_tasks=True, progress=False)
        slow = simulate(w, general(name), record_tasks=True, progress=False)
        assert fast.tasks == slow.tasks, name
        facts = ("events", "tasks_started", "tasks_finished", "cancelled", "completed", "end_time", "utilization")
        assert [getattr(fast, k) for k in facts] == [getattr(slow, k) for k in facts], name
        assert fast.max_overcommit == slow.max_overcommit, name
        assert abs(fast.max_overcommit - highest_load(fast.tasks, w.node_cpu, w.node_mem)) <= 1e-9, name
