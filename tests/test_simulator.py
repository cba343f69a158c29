"""fairalloc.simulator: scheduler names, invariants (capacity, slots, every task once, maps before
reduces, FIFO order), determinism, over-commitment, the DRF paper's 7.1 and 7.2 set-ups in small."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from fairalloc.errors import CaseError
from fairalloc.simulator import SCHEDULER_NAMES, Scheduler, drf_shares, make_scheduler, simulate
from fairalloc.workloads import Job, Task, Workload, drf_7_1, drf_7_2, mfs_workload

STRICT = ["drf", "cpu-fair", "slots:3", "slots:6", "capacity:4", "fifo"]
ALL = STRICT + ["cpu-fair:oc", "slots:6:oc", "capacity:4:oc"]


def small_mfs():
    w = mfs_workload("mixed", nodes=3, seed=2)
    # keep it small: 10 small jobs of A, 3 large jobs of B
    jobs = [j for j in w.jobs if j.job_class == "small"][:10] + [j for j in w.jobs if j.job_class == "large"][:3]
    return Workload(w.nodes, w.node_cpu, w.node_mem, tuple(jobs), "mfs-mixed-small")


def peak_load(records, node_cpu, node_mem):
    """Max over nodes and instants of max(used cpu / cap, used mem / cap) and of running tasks."""
    per_node = defaultdict(list)
    for r in records:
        per_node[r.node].append((r.start, 1, r))
        per_node[r.node].append((r.end, 0, r))             # ends before starts at the same instant
    worst, most = 0.0, 0
    for evs in per_node.values():
        cpu = mem = 0.0
        n = 0
        for _, kind, r in sorted(evs, key=lambda e: (e[0], e[1])):
            sign = 1 if kind else -1
            cpu += sign * r.cpu
            mem += sign * r.mem
            n += sign
            worst = max(worst, cpu / node_cpu, mem / node_mem)
            most = max(most, n)
    return worst, most


def test_unknown_scheduler_lists_known_ones():
    for bad in ("lottery", "slots", "slots:0", "slots:x", "capacity:3:zz", "drf:oc"):
        with pytest.raises(CaseError) as info:
            simulate(drf_7_2(nodes=2, horizon=10), bad)
        msg = str(info.value)
        assert msg.startswith("scheduler:") and "\n" not in msg and "drf, mfs, cpu-fair" in msg and "fifo" in msg


def test_names_round_trip():
    assert [make_scheduler(n).name for n in ("drf", "cpu-fair:oc", "slots:5", "capacity:2:oc", "FIFO")] == \
        ["drf", "cpu-fair:oc", "slots:5", "capacity:2:oc", "fifo"]
    assert len(SCHEDULER_NAMES) == 9


@pytest.mark.parametrize("name", STRICT)
def test_invariants_on_a_map_reduce_workload(name):
    w = small_mfs()
    r = simulate(w, name, record_tasks=True)
    # every task runs exactly once, and all finish (no horizon)
    keys = Counter((t.job, t.phase, t.index) for t in r.tasks)
    expected = {(j.name, ph, i) for j in w.jobs for ph, tasks in zip(("map", "reduce"), j.phases)
                for i in range(len(tasks))}
    assert set(keys) == expected and max(keys.values()) == 1
    assert r.tasks_started == r.tasks_finished == w.n_tasks
    assert sum(r.completed.values()) == len(w.jobs) and r.cancelled == 0
    # capacity never exceeded (independently of the simulator's own counter), slots respected
    worst, most = peak_load(r.tasks, w.node_cpu, w.node_mem)
    assert worst <= 1 + 1e-9 and r.max_overcommit <= 1 + 1e-9
    k = make_scheduler(name).slots
    if k is not None:
        assert most <= k
    # reduces start only after all the job's maps finished
    by_job = defaultdict(lambda: {"map": [], "reduce": []})
    for t in r.tasks:
        by_job[t.job][t.phase].append(t)
    for tasks in by_job.values():
        assert min(t.start for t in tasks["reduce"]) >= max(t.end for t in tasks["map"]) - 1e-9
    # the task records match the demands
    demand = {(j.name, ph, i): t for j in w.jobs for ph, tasks in zip(("map", "reduce"), j.phases)
              for i, t in enumerate(tasks)}
    for t in r.tasks:
        spec = demand[(t.job, t.phase, t.index)]
        assert (t.cpu, t.mem) == (spec.cpu, spec.mem) and t.end - t.start == pytest.approx(spec.duration)


def test_fifo_serves_jobs_in_submit_order():
    tasks = (Task(1, 1, 3.0),) * 5
    jobs = tuple(Job(f"j{k}", f"u{k % 2}", float(k), (tasks, (Task(2, 1, 1.0),))) for k in range(6))
    w = Workload(2, 2.0, 2.0, jobs, "fifo")
    r = simulate(w, "fifo", record_tasks=True)
    maps = defaultdict(list)
    for t in r.tasks:
        if t.phase == "map":
            maps[t.job].append(t.start)
    for a in range(5):
        # every map task of an earlier job starts before any map task of a later one
        assert max(maps[f"j{a}"]) <= min(maps[f"j{a + 1}"])


def test_overcommit_variants_overcommit_and_strict_ones_do_not():
    w = drf_7_2(nodes=4, horizon=200)
    assert simulate(w, "slots:6").max_overcommit <= 1 + 1e-9
    oc = simulate(w, "slots:6:oc", record_tasks=True)
    assert oc.max_overcommit > 1.3                    # 6 large tasks (12 GB) on a 6 GB node
    assert any(t.end - t.start > 40.0 + 1e-9 for t in oc.tasks)   # ... and they run slower
    cpu_oc = simulate(drf_7_2(horizon=200), "cpu-fair:oc")       # 48 nodes
    assert cpu_oc.max_overcommit > 1                  # memory ignored, as in the paper


def test_deterministic_and_json():
    w = drf_7_2(nodes=4, horizon=150, spread=0.3, seed=5)
    a, b = simulate(w, "drf").to_dict(), simulate(w, "drf").to_dict()
    for d in (a, b):
        d.pop("wall_seconds"), d.pop("events_per_second")
    assert a == b
    json.dumps(a)
    assert set(a["samples"]) == {"time", "cpu", "mem", "shares"} and len(a["samples"]["shares"]) == 8


def test_drf_is_fairer_than_slots_on_7_2():
    w = drf_7_2(nodes=8, horizon=300)
    drf = simulate(w, "drf")
    for k in (3, 4, 5, 6):
        assert drf.fairness_error < simulate(w, f"slots:{k}").fairness_error
    assert drf.fairness_error < 0.02


@pytest.mark.parametrize("name", ALL)
def test_7_2_comparison_every_scheduler(name):
    w = drf_7_2(nodes=4, horizon=300, tasks_per_job=20)       # 4 nodes: jobs of 20 tasks, not 80
    r = simulate(w, name)
    assert r.completed["small"] + r.completed["large"] > 0 and r.end_time == 300
    assert all(0 < u for u in r.utilisation.values())
    if not name.endswith(":oc"):
        assert all(u <= 1 + 1e-9 for u in r.utilisation.values())
    for cls, jct in r.mean_completion_time.items():
        assert jct is None or 20 <= jct <= 300
    assert len(r.samples["time"]) >= 100 and r.samples["time"] == sorted(r.samples["time"])


def test_drf_beats_slots_on_7_2_throughput():
    w = drf_7_2(nodes=8, horizon=600)
    drf = sum(simulate(w, "drf").completed.values())
    for k in (3, 4, 5):
        assert drf > sum(simulate(w, f"slots:{k}").completed.values())


def test_7_1_dominant_shares_track_each_other():
    w = drf_7_1(nodes=8)
    r = simulate(w, "drf", samples=72)
    s = r.samples
    gaps = [abs(a - b) for t, a, b in zip(s["time"], s["shares"]["job1"], s["shares"]["job2"])
            if t % 120 >= 30]                                  # away from the switches
    assert max(gaps) < 0.1 and min(s["shares"]["job1"][5:]) > 0.3
    assert r.cancelled == 6 and sum(r.completed.values()) == 0   # every segment cut at its deadline


def test_resubmitted_jobs_and_custom_scheduler():
    class Greedy(Scheduler):                                   # the plug-in interface
        name = "greedy"

        def pick(self, state, node):
            for job in state.jobs.values():
                if job.runnable() and state.fits(node, job.next_task()):
                    return job
            return None

    r = simulate(drf_7_2(nodes=2, horizon=400, tasks_per_job=8), Greedy(), record_tasks=True)
    assert r.scheduler == "greedy" and any("#" in t.job for t in r.tasks)


def test_progress_bar_runs(capsys):
    simulate(drf_7_2(nodes=2, horizon=60), "drf", progress=True)


def test_drf_reference_shares():
    assert drf_shares([(1 / 9, 4 / 18), (3 / 9, 1 / 18)], [100, 100]) == pytest.approx([2 / 3, 2 / 3])
    # bounded user: the other takes the rest (max-min)
    assert drf_shares([(0.1, 0.1), (0.1, 0.05)], [2, 100]) == pytest.approx([0.2, 0.8])


def test_capacity_queues_follow_their_fractions():
    base = drf_7_2(nodes=4, horizon=300, tasks_per_job=20)
    share = {}
    for queues in ({}, {f"small-{i}": 3.0 for i in range(1, 5)} | {f"large-{i}": 1.0 for i in range(1, 5)}):
        w = Workload(base.nodes, base.node_cpu, base.node_mem, base.jobs, "q", base.horizon, queues)
        r = simulate(w, "capacity:6")
        share[bool(queues)] = sum(sum(r.samples["shares"][f"small-{i}"]) for i in range(1, 5))
    assert share[True] > share[False]
    bad = Workload(base.nodes, base.node_cpu, base.node_mem, base.jobs, "q", base.horizon, {"small-1": 1.0})
    with pytest.raises(CaseError, match=r"^queues\.small-2: owner has no queue capacity"):
        simulate(bad, "capacity:6")
