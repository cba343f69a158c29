"""Public traces as job workloads (:mod:`fairalloc.scheduling.trace_jobs`): the small hand-made files of
tests/data/traces (one per schema, their README) read into the jobs derived by hand below, rows in any
order or with fields missing never crashing, and the offline generator's workloads read, measured
against the shapes it states, and replayed."""

from __future__ import annotations

import gzip
import json
import math
import random

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core.errors import CaseError
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.io.cases import parse_case
from fairalloc.io.job_workloads import load_job_workload, parse_job_workload
from fairalloc.scheduling.replay import replay
from fairalloc.scheduling.trace_jobs import (
    SHAPES,
    generate_trace_jobs,
    priority_band,
    read_trace_jobs,
    trace_workload,
)
from fairalloc.testing import run_cli

DATA = __import__("pathlib").Path(__file__).parent / "data" / "traces"
GOOGLE_2011 = DATA / "google-2011-task_events.csv"
COLLECTIONS = DATA / "google-2019-collection_events.json"
INSTANCES = DATA / "google-2019-instance_events.json"
ALIBABA = DATA / "alibaba-2018-batch_task.csv"


def case(queues, cpu=100, memory=100):
    """Leaf queues ``queues`` sharing ``cpu`` and ``memory`` equally as guarantees (Kueue's nominal quotas)."""
    share = {"cpu": cpu / len(queues), "memory": memory / len(queues)}
    users = {q: {"guarantee": share, "request": {"cpu": 1}} for q in queues}
    return parse_case({"name": "trace-case", "resources": {"cpu": cpu, "memory": memory}, "users": users}).instance


def same_jobs(got: dict, expected: dict) -> None:
    """The same jobs in the same order, numbers equal to the project's AGREEMENT tolerance."""
    assert list(got["jobs"]) == list(expected["jobs"])
    for name, job in expected["jobs"].items():
        mine = got["jobs"][name]
        assert set(mine) == set(job), name
        for key, value in job.items():
            if isinstance(value, dict):
                assert set(mine[key]) == set(value)
                assert all(math.isclose(mine[key][r], v, rel_tol=AGREEMENT) for r, v in value.items()), (name, key)
            elif isinstance(value, str):
                assert mine[key] == value, (name, key)
            else:
                assert math.isclose(mine[key], value, rel_tol=AGREEMENT, abs_tol=AGREEMENT), (name, key)


def left_out(warnings: list[str]) -> list[str]:
    """What each warning says was left out, without where (the file and line) and the count's tail."""
    return [w.split(": ", 1)[1].removesuffix(", the first at this line") for w in warnings]


def read_as_derived(kind, paths, expected: dict, left: list[str], **options):
    """The trace read: the jobs ``expected`` and, in order, the kinds ``left`` out."""
    found = read_trace_jobs(kind, paths, **options)
    same_jobs(found.data, expected)
    assert left_out(found.warnings) == left
    return found


def job(queue, cpu, memory, pods, submit, runtime, priority=None):
    spec = {"queue": queue, "request": {"cpu": cpu, "memory": memory}, "pods": pods, "submit": submit}
    spec["runtime"] = runtime
    return spec if priority is None else {**spec, "priority": priority}


GOOGLE_2011_JOBS = {
    "jobs": {
        "100": job("alice", 0.125, 0.03, 2, 0, 90, 9),
        "200": job("bob", 0.25, 0.15, 1, 30, 120),
        "300": job("alice", 0.01, 0.01, 1, 100, 5, 2),
    }
}


def test_google_2011_task_events_by_hand():
    """google-2011-task_events.csv (times in microseconds; the first SUBMIT, 600 s, becomes 0):

    * job 100 (alice, priority 9): task 0 SUBMIT 600 s, SCHEDULE 601, FINISH 661: a run of 60 s;
      task 1 SUBMIT 600, SCHEDULE 602, EVICT 612 (10 s), SUBMIT 613, SCHEDULE 615, FINISH 705
      (90 s).  Longest run 90 s, 2 pods, request max(0.0625, 0.125) = 0.125 CPU and
      max(0.03, 0.02) = 0.03 memory, submit 600 - 600 = 0;
    * job 200 (bob, priority 0, so no priority written): SUBMIT 630, UPDATE_PENDING 635 raising
      memory 0.1 -> 0.15, SCHEDULE 640, KILL 760: 1 pod of 0.25 / 0.15 for 120 s, submit 30;
    * job 300 (alice, priority 2): SUBMIT 700 for tasks 0, 1, 2; task 0 SCHEDULE 700.5, FAIL 705.5
      (5 s); task 1 never scheduled (left out: no run); task 2 ran 701-711 without a CPU request
      (left out): 1 pod of 0.01 / 0.01 for 5 s, submit 100;
    * job 400 (carol): SCHEDULE 801 and nothing after: no task ran, the job is left out (its task
      is the second without a run); job 500 (dave): SCHEDULE and FINISH but no SUBMIT: left out;
      line 14 has no job ID: left out.
    """
    left = [
        "a row without job ID: 1 left out",
        "a job without a SUBMIT event: 1 left out",
        "a task without a run (a SCHEDULE, then EVICT, FAIL, FINISH or KILL): 2 left out",
        "a task without a CPU and a memory request: 1 left out",
        "a job none of whose tasks ran with a request: 1 left out",
    ]
    found = read_as_derived("google-2011", GOOGLE_2011, GOOGLE_2011_JOBS, left)
    assert [w.split(": ", 1)[0] for w in found.warnings] == [f"{GOOGLE_2011}, line {n}" for n in (14, 11, 16, 17, 24)]
    assert all(w.endswith(" left out, the first at this line") for w in found.warnings)


def test_google_2011_queues_by_priority_band():
    """Priorities 9, 0 and 2 are the bands production, free and middle (ClusterData2011_2.md)."""
    found = read_trace_jobs("google-2011", [GOOGLE_2011], queue_by="priority-band")
    assert [j["queue"] for j in found.data["jobs"].values()] == ["production", "free", "middle"]
    assert [priority_band("google-2019", p) for p in (0, 105, 110, 117, 200, 360)] == [
        "free",
        "other",
        "best-effort-batch",
        "mid",
        "production",
        "monitoring",
    ]


GOOGLE_2019_JOBS = {
    "jobs": {
        "7001": job("u1", 0.04, 0.01, 2, 0, 300, 200),
        "7002": job("u2", 0.1, 0.05, 1, 60, 60, 110),
    }
}


def test_google_2019_collection_and_instance_events_by_hand():
    """The two tables (a BigQuery JSON export; times in microseconds, the first SUBMIT 1000 s -> 0):

    * collection 7001 (user u1, priority 200): SUBMIT 1000 s; instance 0 SCHEDULE 1002, FINISH 1302
      (300 s); instance 1 (0.04 CPU) SCHEDULE 1003, FINISH 1103 (100 s): 2 pods of
      max(0.02, 0.04) = 0.04 / 0.01 for 300 s, submit 0; its FINISH collection row has no time
      (left out);
    * collection 7002 (u2, priority 110): SUBMIT 1060; one instance SCHEDULE 1070, EVICT 1080
      (10 s), SCHEDULE 1090, FAIL 1150 (60 s): 1 pod of 0.1 / 0.05 for 60 s, submit 60;
    * 7003 is an alloc set (collection_type 1): not a job; 7004's instance ends at 2**63 - 1 (after
      the trace): no run, no job; 7005 has instance rows only: no user, so no queue by user.
    """
    left = [
        "a row without time: 1 left out",
        "an alloc set, not a job (collection_type 1): 1 left out",
        "a task without a run (a SCHEDULE, then EVICT, FAIL, FINISH or KILL): 1 left out",
        "a job none of whose tasks ran with a request: 1 left out",
        "a job without a user: 1 left out",
    ]
    found = read_as_derived("google-2019", [COLLECTIONS, INSTANCES], GOOGLE_2019_JOBS, left)
    assert found.warnings[0].startswith(f"{COLLECTIONS}, line 5: ")


def test_google_2019_by_priority_band_or_name_in_either_file_order():
    """By band, 7005 (priority 25, instance rows SUBMIT and SCHEDULE at 1300 s, FINISH 1310) is a free
    job of 10 s submitted at 300; by collection name 7001 is svc-a and 7002 batch-b."""
    bands = read_trace_jobs("google-2019", [INSTANCES, COLLECTIONS], queue_by="priority-band").data
    assert {n: j["queue"] for n, j in bands["jobs"].items()} == {
        "7001": "production",
        "7002": "best-effort-batch",
        "7005": "free",
    }
    same_jobs({"jobs": {"7005": bands["jobs"]["7005"]}}, {"jobs": {"7005": job("free", 0.01, 0.01, 1, 300, 10, 25)}})
    names = read_trace_jobs("google-2019", [INSTANCES, COLLECTIONS], queue_by="collection-name").data
    assert [j["queue"] for j in names["jobs"].values()] == ["svc-a", "batch-b"]


ALIBABA_JOBS = {
    "jobs": {
        "j_1": job("batch", 2, 0.5, 3, 0, 100),
        "j_2": job("other", 0.5, 0.2, 4, 30, 60),
        "j_3": job("batch", 1, 1, 1, 50, 5),
    }
}


def test_alibaba_2018_batch_task_by_hand(tmp_path):
    """alibaba-2018-batch_task.csv (seconds; the first start, 100, becomes 0):

    * j_1: M1 2 instances of plan_cpu 100 (1 core) and plan_mem 0.5, 100-160; R2_1 1 instance of
      200 (2 cores), 0.3, 160-200: 3 pods of max(1, 2) = 2 cores and max(0.5, 0.3) = 0.5, from 100
      to 200: runtime 100, submit 0; task type 1;
    * j_2: one non-DAG task of 4 instances of 0.5 core, 0.2, 130-190: submit 30, runtime 60; type 12;
    * j_3: M1 Failed (it ran) 1 instance of 1 core, 1.0, 150-155: submit 50, runtime 5; its M2_1 is
      Waiting: left out;
    * j_4 ends when it starts, j_5 has no plan_cpu, j_6's tasks are Running and Waiting: left out.

    Queues by task type through a map file: type 1 -> batch, 12 -> other.
    """
    mapping = tmp_path / "queues.yaml"
    mapping.write_text("'1': batch\n'12': other\n")
    left = [
        "a task with status 'Waiting', not Terminated or Failed: 2 left out",
        "a task whose end_time is not after its start_time: 1 left out",
        "a row without plan_cpu: 1 left out",
        "a task with status 'Running', not Terminated or Failed: 1 left out",
    ]
    read_as_derived("alibaba-2018", ALIBABA, ALIBABA_JOBS, left, queue_map=mapping)
    by_job = read_trace_jobs("alibaba-2018", ALIBABA, queue_by="job", queue_map={"j_1": "batch"})
    assert list(by_job.data["jobs"]) == ["j_1"]
    assert by_job.warnings[-1].endswith("a job whose job is not in the queue map: 2 left out, the first at this line")


def test_gzip_compressed_tables_read_alike(tmp_path):
    """The part files come gzip-compressed: the same jobs from the compressed copies."""
    copies = []
    for source in (COLLECTIONS, INSTANCES):
        copies.append(tmp_path / f"{source.name}.gz")
        copies[-1].write_bytes(gzip.compress(source.read_bytes()))
    same_jobs(read_trace_jobs("google-2019", copies).data, GOOGLE_2019_JOBS)
    alibaba = tmp_path / "batch_task.csv.gz"
    alibaba.write_bytes(gzip.compress(ALIBABA.read_bytes()))
    same_jobs(read_trace_jobs("alibaba-2018", alibaba, queue_map={"1": "batch", "12": "other"}).data, ALIBABA_JOBS)


def test_the_workload_passes_the_case_and_its_written_yaml_reads_back(tmp_path):
    inst = case(["alice", "bob"], cpu=2, memory=2)
    found = trace_workload("google-2011", [GOOGLE_2011], case=inst)
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump(found.data, sort_keys=False))
    read = load_job_workload(path, inst)
    assert [(j.name, j.queue, j.pods, j.submit) for j in read.jobs] == [
        ("100", "alice", 2, 0),
        ("200", "bob", 1, 30),
        ("300", "alice", 1, 100),
    ]
    assert read.jobs[1].request == pytest.approx((0.25, 0.15), rel=AGREEMENT)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: trace_workload("google-2011", GOOGLE_2011, case=case(["alice", "bobby"])),
            "jobs.200.queue: unknown queue 'bob'; did you mean 'bobby'",
        ),
        (
            lambda: trace_workload("google-2011", GOOGLE_2011, case=case(["alice", "bob"], cpu=0.1)),
            "jobs.100.request.cpu: a pod of 0.125 is larger than the capacity (0.1)",
        ),
        (lambda: read_trace_jobs("google-2012", GOOGLE_2011), "trace: unknown trace kind 'google-2012'; did you mean"),
        (lambda: read_trace_jobs("alibaba-2018", ALIBABA, queue_by="user"), "queue_by: unknown queue key 'user'"),
        (lambda: read_trace_jobs("alibaba-2018", GOOGLE_2011), "line 1: 13 columns, expected 9 (batch_task: task_name"),
        (lambda: read_trace_jobs("google-2019", GOOGLE_2011), "google-2011-task_events.csv, line 1: not JSON"),
        (lambda: read_trace_jobs("google-2011", DATA / "nothing.csv"), "nothing.csv: no such file"),
        (lambda: read_trace_jobs("alibaba-2018", ALIBABA, queue_map=["a"]), "queue_map: a queue map is a mapping"),
    ],
)
def test_bad_input_is_one_line(call, message):
    with pytest.raises(CaseError) as info:
        call()
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_bad_number_names_the_file_line_and_column(tmp_path):
    path = tmp_path / "task_events.csv"
    path.write_text(GOOGLE_2011.read_text().replace("630000000,,200", "soon,,200", 1))
    with pytest.raises(CaseError, match=r"task_events.csv, line 8: timestamp 'soon' is not an integer$"):
        read_trace_jobs("google-2011", path)
    empty = tmp_path / "empty.csv"
    empty.write_text("M1,1,j,1,Waiting,0,0,100,0.5\n")
    with pytest.raises(CaseError, match=r"empty.csv: no job with what a job needs \(.*status 'Waiting'"):
        read_trace_jobs("alibaba-2018", empty)


# --------------------------------------------------------------------------- rows in any order, fields missing


def _lines(path):
    return path.read_text().splitlines()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.randoms(use_true_random=False))
def test_shuffled_rows_give_the_same_jobs(tmp_path, rnd: random.Random):
    """Each task's events are taken in time order, so the order of the rows does not matter (the
    Alibaba queue by task type is the first row's; its tasks here agree within a job)."""
    for kind, files, expected in (
        ("google-2011", [GOOGLE_2011], GOOGLE_2011_JOBS),
        ("google-2019", [COLLECTIONS, INSTANCES], GOOGLE_2019_JOBS),
    ):
        lines = [line for f in files for line in _lines(f)]
        rnd.shuffle(lines)
        path = tmp_path / f"{kind}.txt"
        path.write_text("\n".join(lines) + "\n")
        same_jobs(read_trace_jobs(kind, path).data, expected)
    lines = _lines(ALIBABA)
    rnd.shuffle(lines)
    path = tmp_path / "batch_task.csv"
    path.write_text("\n".join(lines) + "\n")
    same_jobs(read_trace_jobs("alibaba-2018", path, queue_map={"1": "batch", "12": "other"}).data, ALIBABA_JOBS)


def _blank_csv(lines, rnd, share):
    return [",".join("" if rnd.random() < share else f for f in line.split(",")) for line in lines]


def _blank_json(lines, rnd, share):
    out = []
    for line in lines:
        row = json.loads(line)
        out.append(json.dumps({k: v for k, v in row.items() if rnd.random() >= share}))
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.randoms(use_true_random=False),
    st.floats(0, 0.6),
    st.sampled_from(["google-2011", "google-2019", "alibaba-2018"]),
)
def test_missing_fields_never_crash(tmp_path, rnd: random.Random, share: float, kind: str):
    """Fields blanked (CSV) or keys dropped (JSON) at random, rows shuffled: either a workload that
    the case reads, with a warning per kind left out, or one line saying no job was left."""
    files = {"google-2011": [GOOGLE_2011], "google-2019": [COLLECTIONS, INSTANCES], "alibaba-2018": [ALIBABA]}[kind]
    lines = [line for f in files for line in _lines(f)]
    lines = (_blank_json if kind == "google-2019" else _blank_csv)(lines, rnd, share)
    rnd.shuffle(lines)
    path = tmp_path / "rows.txt"
    path.write_text("\n".join(lines) + "\n")
    try:
        found = read_trace_jobs(kind, path, queue_by="priority-band" if kind != "alibaba-2018" else "job")
    except CaseError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))
        return
    queues = {j["queue"] for j in found.data["jobs"].values()}
    parse_job_workload(found.data, case(sorted(queues), cpu=1e4, memory=1e4))
    assert all(w.startswith(f"{path}, line ") for w in found.warnings)


# --------------------------------------------------------------------------- the generator


@pytest.mark.parametrize("shape", list(SHAPES))
def test_generated_workloads_read_and_have_the_stated_shape(shape):
    """Bounds from the parameters (SHAPES): a log-normal's median is ``runtime_median`` and its mean
    ``median * exp(sigma^2 / 2)`` (google-2019: 300 s and 300 e^2 = 2217 s; alibaba-2018: 60 s and
    60 e^1.125 = 185 s; the clip at 1 s and at the trace's length moves these by well under 1%);
    the single-pod share is ``single_pod`` (0.6, 0.2).  With 20,000 jobs the sample median and the
    share are within a few standard errors of 1% (bounds 10% and 0.03); the heavy tail's mean
    within 25%.  Arrivals: over whole days, the half-day when the sine is positive gets
    ``(1 + a 2/pi) / (1 - a 2/pi)`` times the arrivals of the other (a = 0.3: 1.47; 0.4: 1.68)."""
    p = SHAPES[shape]
    queues = ["q1", "q2", "q3"]
    data = generate_trace_jobs(20_000, queues, seed=7, shape=shape)
    assert data == generate_trace_jobs(20_000, queues, seed=7, shape=shape)
    assert data != generate_trace_jobs(20_000, queues, seed=8, shape=shape)
    workload = parse_job_workload(data, case(queues, cpu=1e4, memory=1e4))
    assert len(workload.jobs) == 20_000
    runtimes = np.array([j.runtime for j in workload.jobs])
    pods = np.array([j.pods for j in workload.jobs])
    assert abs(np.median(runtimes) / p["runtime_median"] - 1) < 0.1
    assert abs(runtimes.mean() / (p["runtime_median"] * math.exp(p["runtime_sigma"] ** 2 / 2)) - 1) < 0.25
    assert abs((pods == 1).mean() - p["single_pod"]) < 0.03 and pods.max() <= p["max_pods"]
    submits = np.array([j.submit for j in workload.jobs])
    whole = submits[submits < (submits.max() // 86400) * 86400]
    day_half = (whole % 86400) < 43200
    a = p["diurnal_amplitude"] * 2 / math.pi
    assert len(whole) > 5000 and abs(day_half.sum() / (~day_half).sum() / ((1 + a) / (1 - a)) - 1) < 0.1


def test_the_generator_refuses_bad_arguments():
    with pytest.raises(CaseError, match="shape: unknown trace shape 'google-2018'; did you mean"):
        generate_trace_jobs(3, ["a"], seed=0, shape="google-2018")
    with pytest.raises(CaseError, match="n: a number of jobs from 1"):
        generate_trace_jobs(0, ["a"], seed=0)
    with pytest.raises(CaseError, match="mean_interarrival: a positive number"):
        generate_trace_jobs(3, ["a"], seed=0, mean_interarrival=0)


@pytest.mark.parametrize("mechanism", ["drf", "kueue"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_generated_workload_replays(mechanism, shape):
    """60 jobs on a cluster large enough for the largest job (max_pods pods of at most 1 CPU and 1
    memory unit for google-2019; alibaba-2018's, at most 5,000 pods of a few cores, may wait for
    room): every job submitted is completed, running or waiting, none twice, and the cluster was used."""
    queues = ["team-a", "team-b"]
    data = generate_trace_jobs(60, queues, seed=3, shape=shape, mean_interarrival=30)
    inst = case(queues, cpu=5000, memory=5000)
    workload = parse_job_workload(data, inst)
    result = replay(inst, workload.jobs, fairalloc.get(mechanism), workload=shape)
    reports = {q.queue: q for q in result.queues}
    assert sum(q.submitted for q in reports.values()) == 60
    assert all(q.completed + q.running + q.waiting == q.submitted for q in reports.values())
    assert sum(q.completed for q in reports.values()) > 0 and max(result.utilization.values()) > 0
    if shape == "google-2019":
        assert sum(q.completed for q in reports.values()) == 60


def test_the_cli_writes_a_trace_as_a_workload_simulate_replays(capsys, tmp_path):
    """``fairalloc import --trace google-2011 FILE --jobs OUT --case CASE`` writes what
    :func:`trace_workload` gives (the hand-derived jobs above), with its warnings, and the file
    replays; without --case, or with --runtime, it is one line and exit 2, nothing written."""
    case = tmp_path / "case.yaml"
    case.write_text(
        yaml.safe_dump(
            {
                "name": "trace-case",
                "resources": {"cpu": 2, "memory": 2},
                "users": {q: {"guarantee": {"cpu": 1, "memory": 1}, "request": {"cpu": 1}} for q in ("alice", "bob")},
            }
        )
    )
    out = tmp_path / "jobs.yaml"
    code, printed, err = run_cli(
        capsys, "import", "--trace", "google-2011", str(GOOGLE_2011), "--jobs", str(out), "--case", str(case)
    )
    expected = trace_workload("google-2011", [GOOGLE_2011], case=parse_case(yaml.safe_load(case.read_text())).instance)
    assert code == 0 and printed.startswith(f"wrote {len(expected.data['jobs'])} jobs to {out}")
    assert yaml.safe_load(out.read_text()) == expected.data
    assert all(line in err for line in expected.warnings)
    code, printed, _ = run_cli(capsys, "simulate", str(out), "--case", str(case), "--scheduler", "drf")
    assert code == 0 and "ended at" in printed
    for extra in ([], ["--case", str(case), "--runtime", "5"]):
        bad = tmp_path / "bad.yaml"
        code, printed, err = run_cli(
            capsys, "import", "--trace", "google-2011", str(GOOGLE_2011), "--jobs", str(bad), *extra
        )
        assert code == 2 and err.count("\n") == 1 and not bad.exists()
