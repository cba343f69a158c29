"""fairalloc.scheduling.simulator on named resources and node pools: the plain ``nodes: {count, cpu, mem}``
form and its one-pool ``resources:`` spelling simulate identically; a GPU workload on two pools
(``paper_examples/workloads/gpu-two-pools.yaml``) differs from the same workload without GPU demands
exactly as the pools dictate; undeclared resources and tasks fitting no node are one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fairalloc.core.errors import CaseError
from fairalloc.scheduling.simulator import Scheduler, simulate
from fairalloc.scheduling.workloads import Job, Task, Workload, load_yaml, parse_workload
from fairalloc.testing import run_cli

GPU_EXAMPLE = Path(__file__).resolve().parents[1] / "paper_examples" / "workloads" / "gpu-two-pools.yaml"
SCHEDULERS = ["drf", "hdrf", "mfs", "cpu-fair", "slots:3", "capacity:4", "fifo", "quincy", "slots:2:oc"]

JOBS = [
    {
        "name": "a1",
        "owner": "alice",
        "submit": 0,
        "class": "small",
        "phases": {
            "map": {"count": 30, "cpu": 1, "mem": 0.5, "duration": 20},
            "reduce": {"tasks": [{"cpu": 1, "mem": 1, "duration": 30}]},
        },
    },
    {
        "name": "b1",
        "owner": "bob",
        "submit": 5,
        "class": "large",
        "phases": {"map": {"count": 12, "cpu": 2, "mem": 2, "duration": 40}},
    },
    {
        "name": "a2",
        "owner": "alice",
        "submit": 30,
        "resubmit": True,
        "phases": {"map": {"tasks": [{"cpu": 3, "mem": 1, "duration": 15}, {"cpu": 1, "mem": 5, "duration": 10}]}},
    },
]


def comparable(result) -> dict:
    d = result.to_dict(include_tasks=True)
    for key in ("wall_seconds", "events_per_second"):
        d.pop(key)
    return d


@pytest.mark.parametrize(
    "nodes",
    [
        {"count": 3, "resources": {"cpu": 8, "mem": 6}},
        [{"count": 3, "resources": {"cpu": 8, "mem": 6}}],
        [{"count": 3, "cpu": 8, "resources": {"mem": 6}}],
    ],
)
def test_one_pool_resources_form_simulates_as_the_plain_form(nodes):
    plain = parse_workload({"name": "w", "nodes": {"count": 3, "cpu": 8, "mem": 6}, "horizon": 300, "jobs": JOBS})
    pooled = parse_workload({"name": "w", "nodes": nodes, "horizon": 300, "jobs": JOBS})
    assert pooled == plain and pooled.pools == () and pooled.resources == ("cpu", "mem")
    for name in SCHEDULERS:
        assert comparable(simulate(pooled, name, record_tasks=True)) == comparable(
            simulate(plain, name, record_tasks=True)
        ), name


def test_from_pools_one_pool_is_the_plain_workload():
    jobs = (Job("j", "u", 0.0, ((Task(1.0, 1.0, 5.0),) * 4,)),)
    assert Workload.from_pools([(4, {"cpu": 8, "mem": 6})], jobs) == Workload(4, 8.0, 6.0, jobs)


def test_heterogeneous_pools_place_each_task_within_its_node():
    """Pool 0: 2 nodes <4 CPU, 8 GB>; pool 1: 1 node <16 CPU, 8 GB>. The 8-CPU tasks fit only node 2,
    so they run one at a time there (4 tasks of 10 s: the job takes 40 s), while the 1-CPU tasks
    may go anywhere; no node ever holds more than its own capacity."""
    w = Workload.from_pools(
        [(2, {"cpu": 4, "mem": 8}), (1, {"cpu": 16, "mem": 8})],
        (Job("big", "u", 0.0, ((Task(8.0, 6.0, 10.0),) * 4,)), Job("small", "v", 0.0, ((Task(1.0, 1.0, 10.0),) * 8,))),
    )
    assert (w.nodes, w.node_cpu, w.node_mem, w.totals) == (3, 16.0, 8.0, (24.0, 24.0))
    r = simulate(w, "drf", record_tasks=True)
    assert {t.node for t in r.tasks if t.job == "big"} == {2}
    assert max(t.end for t in r.tasks if t.job == "big") == 40.0
    caps = [(4.0, 8.0), (4.0, 8.0), (16.0, 8.0)]
    for rec in r.tasks:
        running = [t for t in r.tasks if t.node == rec.node and t.start <= rec.start < t.end]
        assert sum(t.cpu for t in running) <= caps[rec.node][0] and sum(t.mem for t in running) <= caps[rec.node][1]
    assert r.max_overcommit <= 1 + 1e-9


def without_gpu(data: dict) -> dict:
    """The same workload with every task's GPU demand removed (the nodes keep their GPUs)."""
    data = json.loads(json.dumps(data))
    for job in data["jobs"]:
        for phase in job["phases"].values():
            phase.get("resources", {}).pop("gpu", None)
    return data


def test_gpu_workload_on_two_pools_via_the_cli(capsys, tmp_path):
    """``gpu-two-pools.yaml``: one GPU node <16 CPU, 64 GB, 2 GPU> and three CPU nodes <16 CPU, 64 GB>;
    vision's 8 tasks <1 CPU, 4 GB, 1 GPU> and etl's 8 tasks <4 CPU, 8 GB>, all 100 s, submitted at 0.

    With GPUs: vision's tasks fit only the GPU node and only two at a time (2 GPUs), whatever the
    scheduler, so her job runs in four waves and finishes at exactly 400 s; her dominant share is her
    GPU share, 2/2 = 1 while she runs, and the 2 GPUs are busy all the run (GPU utilisation 1).
    etl's 32 CPUs fit the CPU pool at once (48 CPUs; vision never holds more than 2), so it ends at 100 s.

    Without the GPU demands, the 16 tasks (40 of 64 CPUs) all fit at once: a node refusing a task
    would need more than 12 of its 16 CPUs used, 52 in all, more than the 40 demanded. Both jobs
    finish at 100 s, vision's dominant share is 8/64 = 32/256 = 0.125, and no GPU is used.
    """
    code, out, err = run_cli(
        capsys, "simulate", str(GPU_EXAMPLE), "--scheduler", "drf", "--format", "json", "--no-progress"
    )
    assert code == 0, err
    (gpu,) = json.loads(out)
    plain_path = tmp_path / "no-gpu.yaml"
    plain_path.write_text(yaml.safe_dump(without_gpu(yaml.safe_load(GPU_EXAMPLE.read_text()))))
    code, out, err = run_cli(
        capsys, "simulate", str(plain_path), "--scheduler", "drf", "--format", "json", "--no-progress"
    )
    assert code == 0, err
    (plain,) = json.loads(out)

    assert gpu["mean_completion_time"] == {"gpu": 400, "cpu": 100} and gpu["end_time"] == 400
    assert plain["mean_completion_time"] == {"gpu": 100, "cpu": 100} and plain["end_time"] == 100
    assert gpu["utilization"]["gpu"] == 1 and plain["utilization"]["gpu"] == 0
    assert set(gpu["utilization"]) == {"cpu", "mem", "gpu"} and set(gpu["samples"]) == {
        "time",
        "cpu",
        "mem",
        "gpu",
        "shares",
    }
    assert max(gpu["samples"]["shares"]["vision"]) == 1 and max(plain["samples"]["shares"]["vision"]) == 0.125
    assert gpu["completed"] == plain["completed"] == {"gpu": 1, "cpu": 1}
    assert gpu["max_overcommit"] == 1


def test_gpu_tasks_run_only_on_the_gpu_pool():
    w = load_yaml(GPU_EXAMPLE)
    assert w.resources == ("cpu", "mem", "gpu") and w.totals == (64.0, 256.0, 2.0) and w.nodes == 4
    for name in ("drf", "hdrf", "slots:4", "capacity:4", "cpu-fair", "fifo", "quincy"):
        r = simulate(w, name, record_tasks=True)
        vision = [t for t in r.tasks if t.owner == "vision"]
        assert len(vision) == 8 and {t.node for t in vision} == {0} and all(t.extra == {"gpu": 1.0} for t in vision)
        assert max(sum(1 for o in vision if o.start <= t.start < o.end) for t in vision) == 2, name


def workload_text(
    task: str,
    nodes: str = "[{count: 1, resources: {cpu: 8, mem: 16, gpu: 4}}, {count: 2, resources: {cpu: 16, mem: 32}}]",
) -> str:
    return f"nodes: {nodes}\njobs:\n  - {{name: train, owner: u, submit: 0, phases: {{map: {task}}}}}\n"


@pytest.mark.parametrize(
    "task, nodes, field, words",
    [
        (
            "{count: 1, duration: 5, resources: {cpu: 1, tpu: 1}}",
            None,
            "jobs[0] (train).phases.map[0].resources.tpu",
            "unknown resource 'tpu'",
        ),
        (
            "{count: 1, duration: 5, resources: {cpu: 1, gpus: 1}}",
            None,
            "jobs[0] (train).phases.map[0].resources.gpus",
            "did you mean 'gpu'",
        ),
        (
            "{count: 1, cpu: 1, mem: 1, duration: 5, resources: {gpu: 1}}",
            "{count: 2, cpu: 8, mem: 8}",
            "jobs[0] (train).phases.map[0].resources.gpu",
            "unknown resource 'gpu'",
        ),
        (
            "{count: 1, duration: 5, resources: {cpu: 12, gpu: 1}}",
            None,
            "jobs[0] (train).phases.map[0]",
            "fits no node of any pool",
        ),
        (
            "{tasks: [{duration: 5, resources: {mem: 20, gpu: 1}}]}",
            None,
            "jobs[0] (train).phases.map[0]",
            "task <20 GB, 1 gpu> fits no node",
        ),
        (
            "{count: 1, duration: 5, cpu: 1, resources: {cpu: 2}}",
            None,
            "jobs[0].phases.map.resources.cpu",
            "given twice",
        ),
        ("{count: 1, duration: 5, resources: {gpu: -1}}", None, "jobs[0].phases.map.resources.gpu", "must be >= 0"),
        ("{count: 1, duration: 5, cpu: 1}", "[{count: 1, cpu: 8, mem: 8, gpu: 2}]", "nodes[0].gpu", "unknown field"),
        ("{count: 1, duration: 5, cpu: 1}", "[{count: 1, resources: {cpu: 8, gpu: 2}}]", "nodes[0].mem", "missing"),
        (
            "{count: 1, duration: 5, cpu: 1}",
            "[{count: 1, resources: {cpu: 8, mem: 8, time: 2}}]",
            "nodes[0].resources.time",
            "reserved name",
        ),
    ],
)
def test_resource_errors_are_one_line_naming_the_field(tmp_path, capsys, task, nodes, field, words):
    path = tmp_path / "bad.yaml"
    path.write_text(workload_text(task, *([nodes] if nodes else [])))
    with pytest.raises(CaseError) as info:
        load_yaml(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(field + ":") and words in msg, msg
    code, out, err = run_cli(capsys, "simulate", str(path), "--scheduler", "drf", "--no-progress")
    assert code == 2 and out == "" and err == f"fairalloc: {msg}\n", err


class CPUAndMemoryOnly(Scheduler):
    """A plug-in that checks only CPU and memory (as schedulers written before named resources)."""

    name = "cpu-mem-only"

    def pick(self, state, node):
        job = next((j for j in state.jobs.values() if j.runnable()), None)
        if job is None:
            return None
        task = job.next_task()
        return job if task.cpu <= state.free_cpu[node] and task.mem <= state.free_mem[node] else None


def test_a_scheduler_ignoring_a_resource_is_stopped_not_trusted():
    """Offered the GPU node (node 0), the plug-in takes vision's tasks while CPU and memory last:
    the third does not fit the 2 GPUs, and the simulator refuses to over-commit a GPU."""
    with pytest.raises(CaseError, match=r"^scheduler: cpu-mem-only chose a task of 'train' for node 0, where its gpu "):
        simulate(load_yaml(GPU_EXAMPLE), CPUAndMemoryOnly())
