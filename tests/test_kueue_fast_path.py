"""Kueue's cycle kept across cycles (``KueueCycle(fast=True)``, the default) decides as the
straightforward form that computes everything anew in each cycle (``fast=False``, the oracle): a
seeded workload of benchmarks/bench_replay.py (100 ClusterQueues in 10 cohorts, borrowing and
lending limits, priorities, classic and fair-sharing preemption) replayed under both writes the
same event log, byte for byte; and the running jobs kept per ClusterQueue (:class:`Held`) sum to
the very numbers the straightforward :class:`Snapshot` sums, and name the queues a job left as its
pass over every running job names them, whatever changed between two cycles."""

from __future__ import annotations

import io
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import fairalloc
from fairalloc.engines.online import ClusterState, Job, Running
from fairalloc.models.kueue import _tree_of
from fairalloc.models.kueue_cycle import Held, KueueCycle, Snapshot
from fairalloc.scheduling.replay import EventLog, replay

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_replay  # noqa: E402


def _kueue(fast: bool):
    """The registered ``kueue`` with its online form built ``fast`` or not."""
    kueue = fairalloc.get("kueue")
    return types.SimpleNamespace(
        name=kueue.name, kind=kueue.kind, allocate=kueue.allocate, online=lambda s: KueueCycle(s, fast=fast)
    )


def _log(inst, jobs, settings, fast: bool) -> str:
    out = io.StringIO()
    replay(inst, jobs, _kueue(fast), settings=settings, log=EventLog(out, tuple(inst.resources), "csv"))
    return out.getvalue()


@pytest.mark.parametrize("fair", [False, True], ids=["classic", "fair-sharing"])
def test_a_seeded_workload_replays_to_the_same_event_log_either_way(fair):
    inst, settings = bench_replay.kueue_case(3, fair)
    jobs = bench_replay.kueue_jobs(inst, 800, 4, load=1.6)
    fast = _log(inst, jobs, settings, True)
    assert fast == _log(inst, jobs, settings, False)
    events = [line.split(",")[2] for line in fast.splitlines()[1:]]
    assert events.count("submit") == 800 and events.count("preempt") >= 3  # the preemption paths ran


def _state(inst, running: dict[str, Running]) -> ClusterState:
    return ClusterState(inst, running=running)


def test_the_jobs_held_sum_as_the_snapshot_sums_whatever_changed():
    inst, _ = bench_replay.kueue_case(0, False)
    tree = _tree_of(inst)
    rng = np.random.default_rng(5)
    queues = list(inst.users)
    held, running, diff = Held(tree), {}, KueueCycle({}, fast=False)
    for step in range(60):
        names = list(running)
        for name in rng.choice(names, size=min(len(names), int(rng.integers(0, 4))), replace=False):
            del running[name]  # jobs finish or are preempted
        if step % 7 == 3 and names:  # a job moved to the end: read from scratch
            name = next(iter(running), None)
            if name is not None:
                running[name] = running.pop(name)
        for k in range(int(rng.integers(0, 5))):  # jobs admitted, at the end
            cpu = float(rng.choice([0.1, 0.5, 1.3, 2.7]))
            job = Job(f"j{step}-{k}", str(rng.choice(queues)), (cpu, 3.1 * cpu), int(rng.integers(1, 4)))
            running[job.name] = Running(job, job.pods, float(step))
        state = _state(inst, dict(running))
        plain, kept = Snapshot(tree, state), Snapshot(tree, state, held.update(state), incremental=True)
        lost, changed = diff._changes(state)  # the straightforward form's pass over every job
        assert held.lost == lost and held.changed >= changed  # (read from scratch: every queue changed)
        assert np.array_equal(plain.leaf, kept.leaf) and plain.jobs == kept.jobs
        U, V = plain.usage(), kept.usage()
        assert all(np.array_equal(U[v], V[v]) for v in U)


def test_a_change_within_a_cycle_recomputes_the_cohorts_above_to_the_same_numbers():
    inst, _ = bench_replay.kueue_case(0, False)
    tree = _tree_of(inst)
    jobs = [Job(f"j{k}", q, (1.5, 6.0), 2) for k, q in enumerate(list(inst.users)[::3])]
    state = _state(inst, {j.name: Running(j, j.pods, 0.0) for j in jobs})
    plain, kept = Snapshot(tree, state), Snapshot(tree, state, Held(tree).update(state), incremental=True)
    for snap in (plain, kept):
        snap.usage()
        snap.remove("j3")
        snap.add("cq-4-2", np.array([5.5, 0.25]))  # no lending limit: all of it counts in cohort-4
    U, V = plain.usage(), kept.usage()
    assert all(np.array_equal(U[v], V[v]) for v in U)
    assert (U["cohort-4"] - Snapshot(tree, state).usage()["cohort-4"]).tolist() == [5.5, 0.25]  # sums of halves: exact
