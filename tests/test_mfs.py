"""The MFS two-level scheduler (``mfs`` in fairalloc.scheduling.simulator): invariants, groups (not jobs) share a
node fairly, group and job weights, the weights' YAML fields and their validation."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

import fairalloc
from fairalloc.core.errors import CaseError, UnknownNameError
from fairalloc.models.mfs import MFS
from fairalloc.scheduling.simulator import scheduler_of, simulate
from fairalloc.scheduling.workloads import Job, Task, Workload, load_yaml, mfs_workload, validate


def peak_load(records, node_cpu, node_mem):
    """Max over nodes and instants of max(used cpu / cap, used mem / cap)."""
    per_node = defaultdict(list)
    for r in records:
        per_node[r.node].append((r.start, 1, r))
        per_node[r.node].append((r.end, 0, r))  # ends before starts at the same instant
    worst = 0.0
    for evs in per_node.values():
        cpu = mem = 0.0
        for _, kind, r in sorted(evs, key=lambda e: (e[0], e[1])):
            sign = 1 if kind else -1
            cpu += sign * r.cpu
            mem += sign * r.mem
            worst = max(worst, cpu / node_cpu, mem / node_mem)
    return worst


def strip(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in ("wall_seconds", "events_per_second")}


def first_wave(w: Workload) -> Counter:
    """Tasks started at time 0, per job."""
    r = simulate(w, "mfs", record_tasks=True)
    return Counter(t.job for t in r.tasks if t.start == 0)


def long_job(name, owner, *, n=20, cpu=1.0, mem=1.0, weight=1.0):
    return Job(name, owner, 0.0, ((Task(cpu, mem, 100.0),) * n,), weight=weight)


def test_name_and_registry():
    assert "mfs" in fairalloc.available("online")
    assert isinstance(scheduler_of("mfs"), MFS) and scheduler_of(" MFS ").name == "mfs"
    with pytest.raises(UnknownNameError, match="'mfs' takes no parameters"):
        scheduler_of("mfs:3")


@pytest.mark.parametrize("kind", ["small", "mixed"])
def test_invariants_capacity_every_task_once_maps_before_reduces(kind):
    w = mfs_workload(kind, nodes=3, seed=4)
    r = simulate(w, "mfs", record_tasks=True)
    assert r.max_overcommit <= 1 + 1e-9
    assert peak_load(r.tasks, w.node_cpu, w.node_mem) <= 1 + 1e-9
    assert sum(r.completed.values()) == len(w.jobs) and r.cancelled == 0
    assert r.tasks_started == r.tasks_finished == w.n_tasks
    started = Counter((t.job, t.phase, t.index) for t in r.tasks)
    assert set(started.values()) == {1}
    by_job = defaultdict(lambda: defaultdict(list))
    for t in r.tasks:
        by_job[t.job][t.phase].append(t)
    for job in w.jobs:
        maps, reduces = by_job[job.name]["map"], by_job[job.name]["reduce"]
        assert len(maps) == len(job.phases[0]) and len(reduces) == len(job.phases[1])
        assert min(t.start for t in reduces) >= max(t.end for t in maps) - 1e-9
    again = simulate(w, "mfs", record_tasks=True)
    assert strip(again.to_dict(include_tasks=True)) == strip(r.to_dict(include_tasks=True))


def test_groups_not_jobs_share_a_node():
    """One node <4 CPU, 4 GB>, tasks <1, 1>: group A has one job, group B three. Groups alternate
    (A first on ties): A, B, A, B -> 2 tasks each; inside B the job with the lowest share gets
    the next task, so b1 and b2 one each (per-job fairness would give A 1 task and B 3)."""
    w = validate(
        Workload(1, 4.0, 4.0, (long_job("a1", "A"), long_job("b1", "B"), long_job("b2", "B"), long_job("b3", "B")))
    )
    assert first_wave(w) == Counter({"a1": 2, "b1": 1, "b2": 1})


def test_group_weights_take_effect():
    """8 CPU node, tasks <1, 1>, group weights A 3, B 1: shares a/24 against b/8 -> A 6, B 2."""
    jobs = (long_job("a1", "A"), long_job("a2", "A"), long_job("b1", "B"))
    w = validate(Workload(1, 8.0, 8.0, jobs, group_weights={"A": 3}))
    wave = first_wave(w)
    assert wave["a1"] + wave["a2"] == 6 and wave["b1"] == 2
    assert (wave["a1"], wave["a2"]) == (3, 3)
    plain = first_wave(validate(Workload(1, 8.0, 8.0, jobs)))
    assert plain["a1"] + plain["a2"] == 4 and plain["b1"] == 4


def test_job_weights_take_effect_inside_a_group():
    """One group, two jobs with weights 1 and 3 on an 8-CPU node: 2 and 6 tasks."""
    w = validate(Workload(1, 8.0, 8.0, (long_job("j1", "A"), long_job("j3", "A", weight=3.0))))
    assert first_wave(w) == Counter({"j1": 2, "j3": 6})


def test_skips_to_a_job_or_group_whose_task_fits():
    """A's only job wants <3, 3> on a <4, 4> node; after it, only 1 CPU is free: B's small task fits."""
    w = validate(Workload(1, 4.0, 4.0, (long_job("big", "A", cpu=3, mem=3), long_job("small", "B"))))
    assert first_wave(w) == Counter({"big": 1, "small": 1})


def test_weights_in_yaml_and_validation(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(
        "nodes: {count: 1, cpu: 8, mem: 8}\ngroup_weights: {A: 3}\njobs:\n"
        "  - {name: a, owner: A, submit: 0, weight: 2, phases: {map: {count: 9, cpu: 1, mem: 1, duration: 50}}}\n"
        "  - {name: b, owner: B, submit: 0, phases: {map: {count: 9, cpu: 1, mem: 1, duration: 50}}}\n"
    )
    w = load_yaml(path)
    assert w.group_weights == {"A": 3.0} and [j.weight for j in w.jobs] == [2.0, 1.0]
    assert first_wave(w) == Counter({"a": 6, "b": 2})
    path.write_text(path.read_text().replace("{A: 3}", "{A: 0}"))
    with pytest.raises(CaseError, match=r"^group_weights\.A: must be > 0"):
        load_yaml(path)
    with pytest.raises(CaseError, match=r"^jobs\[0\] \(x\)\.weight: must be > 0"):
        validate(Workload(1, 1.0, 1.0, (Job("x", "u", 0.0, ((Task(1, 1, 1),),), weight=-1.0),)))


def test_other_schedulers_ignore_weights():
    jobs = (long_job("a1", "A", weight=5.0), long_job("b1", "B"))
    plain = simulate(validate(Workload(1, 8.0, 8.0, jobs)), "drf").to_dict()
    weighted = simulate(validate(Workload(1, 8.0, 8.0, jobs, group_weights={"A": 4})), "drf").to_dict()
    assert strip(plain) == strip(weighted)
