"""fairalloc.scheduling.workloads: the YAML / CSV formats and their one-line errors, the paper generators,
the Alibaba cluster-trace-v2018 batch_task loader and the Google 2011 adapter."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from fairalloc.core.errors import CaseError
from fairalloc.scheduling.workloads import (
    Job,
    Task,
    Workload,
    drf_7_1,
    drf_7_2,
    load_alibaba_batch_task,
    load_csv,
    load_yaml,
    mfs_workload,
    validate,
    workload_from_google,
)

GOOD = """
name: tiny
nodes: {count: 2, cpu: 4, mem: 8}
horizon: 100
jobs:
  - {name: a, owner: alice, submit: 0, class: small,
     phases: {map: {count: 3, cpu: 1, mem: 1, duration: 5}, reduce: {tasks: [{cpu: 2, mem: 1, duration: 7}]}}}
  - {name: b, user: bob, submit: 1.5, phases: {map: {tasks: [{cpu: 1, mem: 2, duration: 3}]}}}
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_yaml_round_trip(tmp_path):
    w = load_yaml(write(tmp_path, "w.yaml", GOOD))
    assert (w.name, w.nodes, w.node_cpu, w.node_mem, w.horizon) == ("tiny", 2, 4.0, 8.0, 100.0)
    a, b = w.jobs
    assert a.owner == "alice" and a.job_class == "small" and [len(p) for p in a.phases] == [3, 1]
    assert a.phases[1][0] == Task(2.0, 1.0, 7.0)
    assert b.owner == "bob" and b.submit == 1.5 and len(b.phases) == 1
    assert w.owners == ("alice", "bob") and w.n_tasks == 5


def job(phases="{map: {count: 1, cpu: 1, mem: 1, duration: 5}}"):
    return f"nodes: {{count: 2, cpu: 4, mem: 8}}\njobs:\n  - {{name: j, owner: u, submit: 0, phases: {phases}}}\n"


@pytest.mark.parametrize(
    "text, field",
    [
        (job("{map: {count: 1, cpu: 1, mem: 1, duration: 0}}"), "jobs[0].phases.map.duration"),
        (job("{map: {count: 1, cpu: 1, mem: 1, duration: -3}}"), "jobs[0].phases.map.duration"),
        (job("{map: {count: 1, cpu: -1, mem: 1, duration: 3}}"), "jobs[0].phases.map.cpu"),
        (job("{map: {tasks: [{cpu: 1, mem: -2, duration: 3}]}}"), "jobs[0].phases.map.tasks[0].mem"),
        (job("{map: {count: 1, cpu: 5, mem: 1, duration: 3}}"), "jobs[0] (j).phases.map[0]"),
        (job("{reduce: {count: 1, cpu: 1, mem: 1, duration: 3}}"), "jobs[0].phases.reduce"),
        (
            job("{map: {count: 1, cpu: 1, mem: 1, duration: 3}, shuffle: {count: 1, duration: 1}}"),
            "jobs[0].phases.shuffle",
        ),
        ("nodes: {count: 2, cpu: 4, mem: 8}\njobs: []\n", "jobs"),
        ("nodes: {count: 2, cpu: 4, mem: 8}\n", "jobs"),
        ("nodes: {count: 0, cpu: 4, mem: 8}\njobs: []\n", "nodes.count"),
        (job().replace("owner: u, ", ""), "jobs[0].owner"),
    ],
)
def test_yaml_errors_are_one_line_and_name_the_field(tmp_path, text, field):
    with pytest.raises(CaseError) as info:
        load_yaml(write(tmp_path, "bad.yaml", text))
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(field), msg


def test_yaml_messages_say_what_is_wrong(tmp_path):
    cases = {
        "{map: {count: 1, cpu: 1, mem: 1, duration: 0}}": "must be > 0",
        "{reduce: {count: 1, cpu: 1, mem: 1, duration: 3}}": "without a map phase",
        "{map: {count: 1, cpu: 5, mem: 1, duration: 3}}": "larger than every node",
        "{map: {count: 1, cpu: 1, mem: 1, duration: 3}, sort: {count: 1, duration: 1}}": "unknown phase name",
    }
    for phases, words in cases.items():
        with pytest.raises(CaseError, match=words):
            load_yaml(write(tmp_path, "bad.yaml", job(phases)))


def test_yaml_safe_loader_refuses_python_tags(tmp_path):
    with pytest.raises(CaseError, match="tags that build Python objects are refused"):
        load_yaml(write(tmp_path, "evil.yaml", "!!python/object/apply:os.system ['true']\n"))


CSV = """job,user,submit,phase,cpu,mem,duration
j1,alice,0,map,1,0.5,10
j1,alice,0,map,1,0.5,12
j1,alice,0,reduce,2,1,20
j2,bob,5,map,2,2,8
"""


def test_csv_loader(tmp_path):
    w = load_csv(write(tmp_path, "w.csv", CSV), nodes=3, node_cpu=8, node_mem=6)
    assert [j.name for j in w.jobs] == ["j1", "j2"] and [len(p) for p in w.jobs[0].phases] == [2, 1]
    assert w.jobs[1].submit == 5 and w.jobs[1].owner == "bob" and w.nodes == 3


@pytest.mark.parametrize(
    "row, words",
    [
        ("j3,carol,0,map,1,1,0", "row 6: task.duration: must be > 0"),
        ("j3,carol,0,map,-1,1,3", "row 6: task.cpu: must be >= 0"),
        ("j3,carol,0,combine,1,1,3", "row 6: phase: unknown phase name"),
        ("j3,carol,0,reduce,1,1,3", "row 6: phase: job 'j3' has a reduce phase without a map phase"),
        ("j3,carol,0,map,9,1,3", "larger than every node"),
        ("j3,carol,0,map,1,1", "row 6: 6 columns"),
    ],
)
def test_csv_errors_name_the_row_and_field(tmp_path, row, words):
    with pytest.raises(CaseError) as info:
        load_csv(write(tmp_path, "bad.csv", CSV + row + "\n"), nodes=3, node_cpu=8, node_mem=6)
    assert "\n" not in str(info.value) and words in str(info.value), str(info.value)


def test_csv_empty(tmp_path):
    with pytest.raises(CaseError, match="empty workload"):
        load_csv(write(tmp_path, "e.csv", "job,user,submit,phase,cpu,mem,duration\n"), nodes=1, node_cpu=1, node_mem=1)


def test_validate_python_built_workload():
    with pytest.raises(CaseError, match=r"^jobs: empty workload"):
        validate(Workload(1, 1.0, 1.0, ()))
    bad = Job("x", "u", 0.0, ((Task(1, 1, 1),), (Task(1, 1, 0),)))
    with pytest.raises(CaseError, match=r"^jobs\[0\] \(x\)\.phases\.reduce\[0\]\.duration: must be > 0"):
        validate(Workload(1, 1.0, 1.0, (bad,)))


# --------------------------------------------------------------------------- generators


def test_drf_7_2_shape():
    w = drf_7_2()
    assert (w.nodes, w.node_cpu, w.node_mem, w.horizon) == (48, 8.0, 6.0, 600.0)
    small = [j for j in w.jobs if j.job_class == "small"]
    large = [j for j in w.jobs if j.job_class == "large"]
    assert len(small) == len(large) == 4 and len({j.owner for j in w.jobs}) == 8
    assert all(j.resubmit and len(j.phases) == 1 and len(j.phases[0]) == 80 for j in w.jobs)
    assert {(t.cpu, t.mem) for j in small for t in j.phases[0]} == {(1.0, 0.5)}
    assert {(t.cpu, t.mem) for j in large for t in j.phases[0]} == {(2.0, 2.0)}
    jittered = drf_7_2(spread=0.25, seed=3)
    assert jittered == drf_7_2(spread=0.25, seed=3) and jittered != drf_7_2(spread=0.25, seed=4)


def test_drf_7_1_shape():
    w = drf_7_1()
    assert (w.nodes, w.node_cpu, w.node_mem, w.horizon) == (48, 4.0, 14.0, 360.0)
    demands = {o: [(j.phases[0][0].cpu, j.phases[0][0].mem) for j in w.jobs if j.owner == o] for o in ("job1", "job2")}
    assert demands == {"job1": [(1, 10), (2, 4), (1, 7)], "job2": [(1, 1), (1, 3), (1, 4)]}
    assert sorted({(j.submit, j.until) for j in w.jobs}) == [(0, 120), (120, 240), (240, 360)]


@pytest.mark.parametrize(
    "kind, classes", [("small", {"small": 80}), ("large", {"large": 40}), ("mixed", {"small": 40, "large": 20})]
)
def test_mfs_sets(kind, classes):
    w = mfs_workload(kind, seed=1)
    assert w == mfs_workload(kind, seed=1)
    got = {c: sum(j.job_class == c for j in w.jobs) for c in ("small", "large")}
    assert {c: n for c, n in got.items() if n} == classes
    for j in w.jobs:
        maps, reduces = len(j.phases[0]), len(j.phases[1])
        if j.job_class == "small":
            assert 1 <= maps <= 10 and reduces == 1
        else:
            assert 70 <= maps <= 160 and 7 <= reduces <= 16
        t = j.phases[0][0]
        assert t.cpu in (1.0, 2.0) and 0.5 <= t.mem <= 2.0 and j.submit == 0
    if kind == "mixed":
        assert {j.owner for j in w.jobs if j.job_class == "small"} == {"A"}
        assert {j.owner for j in w.jobs if j.job_class == "large"} == {"B"}
    else:
        assert len({j.owner for j in w.jobs}) == 4
    with pytest.raises(CaseError, match="^kind: unknown MFS set"):
        mfs_workload("huge")


# --------------------------------------------------------------------------- traces

# task_name, instance_num, job_name, task_type, status, start_time, end_time, plan_cpu, plan_mem
ALIBABA = """M1,10,j_1,1,Terminated,86517,86537,100.0,0.59
R2_1,1,j_1,1,Terminated,86540,86570,200.0,1.18
M1,3,j_2,1,Terminated,86520,86525,50.0,0.3
task_Nzg3ODAwNDgzMTAwNTc2NTQ2Mw==,2,j_3,12,Terminated,86600,86660,100.0,0.49
M1,5,j_4,1,Failed,86500,86560,100.0,0.39
M2,5,j_5,1,Terminated,86700,86700,100.0,0.39
M3,4,j_6,1,Terminated,86800,86900,,
J3_1_2,2,j_7,1,Terminated,86900,86950,100.0,0.2
"""


def test_alibaba_batch_task_loader(tmp_path):
    w = load_alibaba_batch_task(write(tmp_path, "batch_task.csv", ALIBABA), nodes=4)
    assert [j.name for j in w.jobs] == ["j_1", "j_2", "j_3", "j_7"]  # failed, zero-length, no-plan rows dropped
    j1 = w.jobs[0]
    assert j1.submit == 0 and j1.owner == "j_1" and [len(p) for p in j1.phases] == [10, 1]
    assert j1.phases[0][0] == Task(1.0, 0.59, 20.0) and j1.phases[1][0] == Task(2.0, 1.18, 30.0)
    assert w.jobs[1].submit == 3 and w.jobs[2].phases[0][0].duration == 60
    assert len(w.jobs[3].phases) == 1 and len(w.jobs[3].phases[0]) == 2  # only J tasks: one phase
    assert (w.nodes, w.node_cpu, w.node_mem) == (4, 96.0, 100.0)
    assert [j.name for j in load_alibaba_batch_task(tmp_path / "batch_task.csv", max_jobs=2).jobs] == ["j_1", "j_2"]


def test_alibaba_errors(tmp_path):
    with pytest.raises(CaseError, match=r"line 2: 8 columns, expected 9"):
        load_alibaba_batch_task(write(tmp_path, "b.csv", ALIBABA.splitlines()[0] + "\nM1,1,j,1,Terminated,1,2,100\n"))
    with pytest.raises(CaseError, match="empty workload"):
        load_alibaba_batch_task(write(tmp_path, "c.csv", "M1,5,j_4,1,Failed,86500,86560,100.0,0.39\n"))
    with pytest.raises(CaseError, match="no such file"):
        load_alibaba_batch_task(tmp_path / "missing.csv")


def test_google_adapter(tmp_path):
    lines = [
        "0,2,3418309,0,,0,u,3,9,0.125,0.07446,0.0004244,0",
        "0,2,3418309,1,,0,u,3,9,0.25,0.1,0.0004244,0",
        "5,,6251639646,0,,0,v,0,2,0.0125,0.0159,0,0",
        "6,,6251639646,0,,4,v,0,2,0.0125,0.0159,0,0",
    ]
    path = write(tmp_path, "part-00000-of-00500.csv", "\n".join(lines) + "\n")
    w = workload_from_google(path, users=2, tasks_per_job=2, nodes=3, seed=1)
    assert [len(j.phases[0]) for j in w.jobs] == [2, 1] and [j.owner for j in w.jobs] == ["user-1", "user-2"]
    assert w.jobs[0].phases[0][1].cpu == 0.25 and (w.node_cpu, w.node_mem) == (1.0, 1.0)
    assert all(t.duration >= 1 for j in w.jobs for t in j.phases[0]) and w == workload_from_google(
        path, users=2, tasks_per_job=2, nodes=3, seed=1
    )
    arr = workload_from_google(np.array([[0.1, 0.2]] * 5), tasks_per_job=2)
    assert len(arr.jobs) == 3 and arr.jobs[1].submit > 0
