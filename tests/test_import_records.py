"""Records of what ran (``fairalloc import --jobs``): Pods, Kueue Workloads, Volcano Jobs and
PodGroups become the jobs of a workload, each time read from the field the upstream types name.

The real examples are Volcano's and Kubernetes' documentation (tests/data/records/*/SOURCE.md); the
Kueue Workloads below are written for these tests in the shape of Kueue's troubleshooting page
(site/content/en/docs/tasks/troubleshooting/troubleshooting_jobs.md at kubernetes-sigs/kueue
ff69552e79ad21652c36caa97038382e55625cf7: its conditions and times, with the metadata and spec the
page elides), since no complete Workload with its times is published there.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fairalloc.core.tolerances import AGREEMENT
from fairalloc.io.importers.common import Document, ImportFailed, Notes, parse_text, read_documents
from fairalloc.io.importers.records import parse_time, read_records, workload_of
from fairalloc.testing import run_cli as run

DATA = Path(__file__).parent / "data" / "records"
VOLCANO = DATA / "volcano-website"
KUBERNETES = DATA / "kubernetes-website"


def jobs_of(*texts: str, window_end: str | None = None, runtime: float | None = None) -> tuple[dict, list[str]]:
    docs = [d for k, t in enumerate(texts) for d in parse_text(t, f"f{k}.yaml")]
    notes = Notes()
    end = None if window_end is None else parse_time(window_end, "--window-end")
    workload, _ = workload_of(read_records(docs, notes), notes, window_end=end, runtime=runtime)
    return workload["jobs"], notes.warnings


def read(path: Path) -> str:
    return path.read_text()


# -- the real examples ------------------------------------------------------------------------------
def test_kubernetes_debug_running_pod_runs_from_its_start_time():
    """debug-running-pod.md's pod: created 21:51:01, ``status.startTime`` 21:51:01 (its container
    running since 21:51:05: ``startTime`` is read first), still Running.  With the window ending at
    22:51:01 it runs 3600 s; requests cpu 500m = 0.5 cores, memory 128Mi = 128 * 2^20 =
    134,217,728 bytes; no scheduler label, so its namespace, default, is its queue; priority 0."""
    jobs, warnings = jobs_of(read(KUBERNETES / "running-pod.yaml"), window_end="2022-02-17T22:51:01Z")
    assert jobs == {
        "Pod/default/nginx-deployment-67d4bdd6f5-w6kd7": {
            "queue": "default",
            "request": {"cpu": 0.5, "memory": 134217728},
            "pods": 1,
            "submit": 0.0,
            "runtime": 3600.0,
        }
    }
    assert warnings == []


def test_volcano_concepts_podgroup_runs_to_the_end_of_the_window():
    """docs/Concepts/PodGroup.md: created 12:28:55, ``Scheduled`` (True) at 12:29:02, still Running;
    minMember 1, minResources cpu 3, memory 2048Mi = 2048 * 2^20 = 2,147,483,648 bytes, queue default.
    With the window ending at 13:28:55 it runs 3600 - 7 = 3593 s; submit 0 (the only job).
    priorityClassName high-priority: no PriorityClass among the files, so priority 0 and a warning."""
    jobs, warnings = jobs_of(read(VOLCANO / "podgroup.yaml"), window_end="2020-08-11T13:28:55Z")
    assert jobs == {
        "PodGroup/default/test": {
            "queue": "default",
            "request": {"cpu": 3, "memory": 2147483648},
            "pods": 1,
            "submit": 0.0,
            "runtime": 3593.0,
        }
    }
    assert warnings == [
        "f0.yaml: PodGroup/default/test: spec.priorityClassName: no PriorityClass high-priority among the files: "
        "priority 0"
    ]


def test_volcano_podgroup_with_its_priority_class_and_the_default_window():
    """The window ends by default at the latest time given, 12:29:02, the PodGroup's own start: it
    has not run a second in it, and is left out, said; with ``--runtime 600`` it runs 600 s; the
    PriorityClass high-priority (value 1000) gives its priority."""
    klass = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high-priority}\nvalue: 1000\n"
    jobs, warnings = jobs_of(read(VOLCANO / "podgroup.yaml"), klass)
    assert jobs == {}
    assert warnings == [
        "f0.yaml: PodGroup/default/test: started at or after the end of the window: no run time to replay; left out"
    ]
    jobs, warnings = jobs_of(read(VOLCANO / "podgroup.yaml"), klass, runtime=600)
    assert jobs["PodGroup/default/test"]["runtime"] == 600 and jobs["PodGroup/default/test"]["priority"] == 1000
    assert warnings == []


def test_volcano_tutorial_records_without_creation_time_are_named_not_guessed():
    """docs/GettingStarted/Tutorials.md elides both objects' metadata: neither has
    ``metadata.creationTimestamp``, so neither is a job (the Job's first condition, Pending at
    08:39:22, is not its submit).  The Deployment's PodGroup lists object counts and repeated
    amounts in ``minResources`` (count/pods, limits.cpu, pods, requests.cpu): each is named."""
    jobs, warnings = jobs_of(read(VOLCANO / "quickstart-job.yaml"), read(VOLCANO / "deployment-podgroup.yaml"))
    assert jobs == {}
    pg = "f1.yaml: PodGroup/default/podgroup-09e95eb0-e520-4b50-a15c-c14cad844674"
    assert warnings == [
        "f0.yaml: Job/default/quickstart-job: metadata.creationTimestamp: missing: when it was submitted is not "
        "known; left out",
        *(
            f"{pg}: spec.minResources.{k}: an object count or a repeated amount: not read"
            for k in ("count/pods", "limits.cpu", "pods", "requests.cpu")
        ),
        f"{pg}: metadata.creationTimestamp: missing: when it was submitted is not known; left out",
    ]


def test_volcano_tutorial_job_given_its_creation_time_finishes_in_101_seconds():
    """The same Job with a creation time (08:39:20, added) and the page's later status, Completed
    at 08:41:11: started at its first ``Running`` condition, 08:39:30, so it ran 101 s; three tasks
    of cpu 1 (requests "1"); minAvailable 3 = all its pods, so no ``min_pods``; submit 0."""
    job = yaml.safe_load(read(VOLCANO / "quickstart-job.yaml"))
    job["metadata"]["creationTimestamp"] = "2025-05-28T08:39:20Z"
    job["status"]["state"] = {"lastTransitionTime": "2025-05-28T08:41:11Z", "phase": "Completed"}
    jobs, warnings = jobs_of(yaml.safe_dump(job))
    assert jobs == {
        "Job/default/quickstart-job": {
            "queue": "default",
            "request": {"cpu": 1},
            "pods": 3,
            "submit": 0.0,
            "runtime": 101.0,
        }
    }
    assert warnings == []


# -- Kueue Workloads --------------------------------------------------------------------------------
def workload(name: str, created: str, conditions: list[tuple[str, str, str]], queue: str = "user-queue") -> dict:
    """A Workload of ``troubleshooting_jobs.md``'s job: one pod set ``main`` of 3 pods of cpu 1,
    memory 200Mi (its admission charges cpu 3, memory 600Mi)."""
    container = {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "200Mi"}}}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "my-namespace", "creationTimestamp": created},
        "spec": {
            "queueName": queue,
            "priority": 5,
            "podSets": [{"name": "main", "count": 3, "template": {"spec": {"containers": [container]}}}],
        },
        "status": {
            "conditions": [{"type": t, "status": s, "lastTransitionTime": at, "reason": t} for t, s, at in conditions]
        },
    }


LOCAL_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "LocalQueue",
    "metadata": {"name": "user-queue", "namespace": "my-namespace"},
    "spec": {"clusterQueue": "cluster-queue"},
}
CLUSTER_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "ClusterQueue",
    "metadata": {"name": "cluster-queue"},
    "spec": {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "default-flavor",
                        "resources": [{"name": "cpu", "nominalQuota": 9}, {"name": "memory", "nominalQuota": "36Gi"}],
                    }
                ],
            }
        ],
    },
}
FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}}
ADMITTED = [("QuotaReserved", "True", "2024-03-19T20:49:17Z"), ("Admitted", "True", "2024-03-19T20:49:17Z")]
FINISHED = [*ADMITTED, ("Finished", "True", "2024-03-19T20:52:17Z")]
#: the page's preempted Workload: reserved again but not admitted
PREEMPTED = [
    ("QuotaReserved", "False", "2024-03-21T15:49:56Z"),
    ("Evicted", "True", "2024-03-21T15:49:55Z"),
    ("Admitted", "False", "2024-03-21T15:49:56Z"),
]


def records_yaml(*objects: dict) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)


def test_kueue_workloads_finished_running_and_preempted():
    """finished: created 20:49:10, Admitted 20:49:17, Finished 20:52:17: 180 s, submit 0;
    running: created 20:50:00 (submit 50), Admitted 20:49:17 + ... at 20:50:30, runs to the window
    end 21:00:00: 570 s; preempted: created 20:51:00 (submit 110), Evicted and not admitted again:
    waiting, so it needs ``--runtime`` (60 here); all three in ClusterQueue cluster-queue through
    LocalQueue my-namespace/user-queue; 3 pods of cpu 1, memory 200Mi = 209,715,200 bytes; priority 5."""
    running = [("QuotaReserved", "True", "2024-03-19T20:50:30Z"), ("Admitted", "True", "2024-03-19T20:50:30Z")]
    text = records_yaml(
        LOCAL_QUEUE,
        workload("done", "2024-03-19T20:49:10Z", FINISHED),
        workload("running", "2024-03-19T20:50:00Z", running),
        workload("preempted", "2024-03-19T20:51:00Z", PREEMPTED),
    )
    jobs, warnings = jobs_of(text, window_end="2024-03-19T21:00:00Z", runtime=None)
    shape = {"queue": "cluster-queue", "request": {"cpu": 1, "memory": 209715200}, "pods": 3, "priority": 5}
    assert jobs == {
        "Workload/my-namespace/done": {**shape, "submit": 0.0, "runtime": 180.0},
        "Workload/my-namespace/running": {**shape, "submit": 50.0, "runtime": 570.0},
    }
    assert warnings == [
        "f0.yaml (document 4): Workload/my-namespace/preempted: status.conditions[Evicted]: evicted and not admitted "
        "again: read as waiting since its creation (its earlier run is not replayed)",
        "f0.yaml (document 4): Workload/my-namespace/preempted: never started: give --runtime SECONDS to replay it; "
        "left out",
    ]
    jobs, _ = jobs_of(text, window_end="2024-03-19T21:00:00Z", runtime=60)
    assert jobs["Workload/my-namespace/preempted"] == {**shape, "submit": 110.0, "runtime": 60.0}
    assert jobs["Workload/my-namespace/running"]["runtime"] == 60.0  # --runtime replaces the window for a running job


def test_kueue_local_queue_not_among_the_files_is_the_queue():
    jobs, _ = jobs_of(records_yaml(workload("done", "2024-03-19T20:49:10Z", FINISHED)))
    assert jobs["Workload/my-namespace/done"]["queue"] == "user-queue"


def test_finished_without_admission_and_out_of_order_times_are_named():
    """A Workload Finished with no Admitted condition has no start; one admitted before it existed
    has its times out of order: each is one warning naming the field, and no job."""
    early = [("Admitted", "True", "2024-03-19T20:49:00Z"), ("Finished", "True", "2024-03-19T20:52:17Z")]
    jobs, warnings = jobs_of(
        records_yaml(
            workload("unstarted", "2024-03-19T20:49:10Z", [("Finished", "True", "2024-03-19T20:52:17Z")]),
            workload("early", "2024-03-19T20:49:10Z", early),
        )
    )
    assert jobs == {}
    assert warnings == [
        "f0.yaml: Workload/my-namespace/unstarted: status.conditions[Admitted]: missing: when it started is not known; "
        "left out",
        "f0.yaml (document 2): Workload/my-namespace/early: status.conditions[0].lastTransitionTime: before "
        "metadata.creationTimestamp: the times are out of order; left out",
    ]


# -- pods ------------------------------------------------------------------------------------------
def pod(name: str, *, created=None, started=None, finished=None, phase="Running", **meta) -> dict:
    state = {"terminated": {"startedAt": started, "finishedAt": finished}} if finished else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "team-a", "creationTimestamp": created, **meta},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]},
        "status": {"phase": phase, "startTime": started, "containerStatuses": [{"name": "c", "state": state}]},
    }


def test_pods_by_their_times():
    """a: created 10:00:00, started 10:00:05, Succeeded with its container finished 10:01:05: 60 s;
    b: created 10:00:30 (submit 30), Running since 10:00:40, window end 10:02:00: 80 s; c: Pending,
    no start: left out without --runtime; d: no times at all: named.  cpu 500m = 0.5 cores,
    memory 1Gi = 1,073,741,824 bytes; queue: the namespace team-a."""
    jobs, warnings = jobs_of(
        records_yaml(
            pod(
                "a",
                created="2024-01-01T10:00:00Z",
                started="2024-01-01T10:00:05Z",
                finished="2024-01-01T10:01:05Z",
                phase="Succeeded",
            ),
            pod("b", created="2024-01-01T10:00:30Z", started="2024-01-01T10:00:40Z"),
            pod("c", created="2024-01-01T10:00:50Z", phase="Pending"),
            pod("d", phase="Succeeded"),
        ),
        window_end="2024-01-01T10:02:00Z",
    )
    shape = {"queue": "team-a", "request": {"cpu": 0.5, "memory": 1073741824}, "pods": 1}
    assert jobs == {
        "Pod/team-a/a": {**shape, "submit": 0.0, "runtime": 60.0},
        "Pod/team-a/b": {**shape, "submit": 30.0, "runtime": 80.0},
    }
    assert warnings == [
        "f0.yaml (document 4): Pod/team-a/d: metadata.creationTimestamp: missing: when it was submitted is not known; "
        "left out",
        "f0.yaml (document 3): Pod/team-a/c: never started: give --runtime SECONDS to replay it; left out",
    ]


def test_pod_queue_by_scheduler_label_and_podgroup():
    """A pod labelled with a Kueue LocalQueue is in that LocalQueue's ClusterQueue; one annotated
    with Volcano's queue is in that queue; a pod of a PodGroup among the files is read through the
    PodGroup (one record, not two)."""
    group = yaml.safe_load(read(VOLCANO / "podgroup.yaml"))
    times = {"created": "2020-08-11T12:28:55Z", "started": "2020-08-11T12:29:00Z"}
    jobs, _ = jobs_of(
        records_yaml(
            LOCAL_QUEUE,
            pod("k", **times, namespace="my-namespace", labels={"kueue.x-k8s.io/queue-name": "user-queue"}),
            pod("v", **times, annotations={"scheduling.volcano.sh/queue-name": "research"}),
            group,
            pod("member", **times, namespace="default", annotations={"scheduling.k8s.io/group-name": "test"}),
        ),
        window_end="2020-08-11T13:00:00Z",
    )
    assert {name: job["queue"] for name, job in jobs.items()} == {
        "Pod/my-namespace/k": "cluster-queue",
        "Pod/team-a/v": "research",
        "PodGroup/default/test": "default",
    }


def test_unreadable_time_is_named():
    jobs, warnings = jobs_of(records_yaml(pod("a", created="yesterday")))
    assert jobs == {}
    assert warnings == [
        "f0.yaml: Pod/team-a/a: metadata.creationTimestamp: 'yesterday' is not an RFC 3339 time (like "
        "2024-03-19T20:49:17Z); left out"
    ]


# -- generated records: never a crash, never a guess ------------------------------------------------
BASE = datetime(2024, 1, 1, tzinfo=UTC)
offsets = st.one_of(st.none(), st.integers(0, 600), st.sampled_from(["soon", 7, [], {"a": 1}]))


def stamp(value):
    return (BASE + timedelta(seconds=value)).isoformat().replace("+00:00", "Z") if isinstance(value, int) else value


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(offsets, offsets, offsets, st.sampled_from(["Pending", "Running", "Succeeded", "Failed", None])),
        min_size=1,
        max_size=6,
    ),
    st.one_of(st.none(), st.floats(1, 1e4)),
)
def test_generated_pods_give_their_times_or_a_warning(times, runtime):
    """Each pod is either a job whose run time is the one its times give (finish - start when it
    finished, the given --runtime or the window when not) or named in a warning; a time of the
    wrong type is one ImportFailed line, never a traceback."""
    objects = [
        pod(f"p{k}", created=stamp(c), started=stamp(s), finished=stamp(f), phase=phase)
        for k, (c, s, f, phase) in enumerate(times)
    ]
    try:
        jobs, warnings = jobs_of(records_yaml(*objects), window_end="2024-01-01T01:00:00Z", runtime=runtime)
    except ImportFailed as exc:
        assert "Pod/team-a/p" in str(exc) and "\n" not in str(exc)
        return
    origin = min((BASE + timedelta(seconds=times[int(n.rsplit("p", 1)[1])][0]) for n in jobs), default=BASE)
    for k, (c, s, f, phase) in enumerate(times):
        name = f"Pod/team-a/p{k}"
        if name not in jobs:
            assert any(f": {name}: " in w or w.endswith(f": {name}") for w in warnings), (name, warnings)
            continue
        job = jobs[name]
        assert isinstance(c, int) and job["submit"] == pytest.approx((BASE + timedelta(seconds=c) - origin).seconds)
        ended = phase in ("Succeeded", "Failed")
        if ended:
            assert isinstance(s, int) and isinstance(f, int) and c <= s < f
            assert abs(job["runtime"] - (f - s)) <= AGREEMENT
        elif isinstance(s, int) and s >= c:
            assert abs(job["runtime"] - (runtime if runtime is not None else 3600 - s)) <= AGREEMENT
        else:
            assert s is None and runtime is not None and job["runtime"] == runtime


# -- the command line ------------------------------------------------------------------------------
@pytest.fixture
def kueue_files(tmp_path) -> list[str]:
    queues = tmp_path / "queues.yaml"
    queues.write_text(records_yaml(CLUSTER_QUEUE, FLAVOR, LOCAL_QUEUE))
    running = [("QuotaReserved", "True", "2024-03-19T20:50:30Z"), ("Admitted", "True", "2024-03-19T20:50:30Z")]
    records = tmp_path / "records.yaml"
    records.write_text(
        records_yaml(
            workload("done", "2024-03-19T20:49:10Z", FINISHED),
            workload("running", "2024-03-19T20:50:00Z", running),
            workload("preempted", "2024-03-19T20:51:00Z", PREEMPTED),
        )
    )
    return [str(queues), str(records)]


def test_import_jobs_then_simulate_kueue(capsys, tmp_path, kueue_files):
    """import -> workload file -> ``fairalloc simulate WORKLOAD --case CASE --scheduler kueue``."""
    week, case = tmp_path / "week.yaml", tmp_path / "team.yaml"
    code, out, err = run(
        capsys,
        "import",
        *kueue_files,
        "--jobs",
        str(week),
        "--out",
        str(case),
        "--window-end",
        "2024-03-19T21:00:00Z",
        "--runtime",
        "120",
    )
    assert code == 0, err
    assert f"wrote 3 jobs to {week} and the case to {case}" in out
    text = week.read_text()
    assert "# Times are seconds from 2024-03-19T20:49:10Z" in text
    jobs = yaml.safe_load(text)["jobs"]
    assert {n: (j["submit"], j["runtime"]) for n, j in jobs.items()} == {
        "Workload/my-namespace/done": (0, 180),
        "Workload/my-namespace/running": (50, 120),
        "Workload/my-namespace/preempted": (110, 120),
    }
    code, out, err = run(capsys, "simulate", str(week), "--case", str(case), "--scheduler", "kueue")
    assert code == 0, err
    assert "cluster-queue" in out


def test_import_jobs_refuses_a_job_the_case_cannot_hold(capsys, tmp_path, kueue_files):
    """Against a case whose queue is another, the job is one line naming its file and object, exit
    2, and nothing is written."""
    case = tmp_path / "other.yaml"
    case.write_text(
        yaml.safe_dump(
            {"name": "other", "policy": "kueue", "resources": {"cpu": 9, "memory": 9e10}, "users": {"team-b": {}}}
        )
    )
    week = tmp_path / "week.yaml"
    code, _, err = run(capsys, "import", *kueue_files, "--jobs", str(week), "--case", str(case))
    assert code == 2
    lines = [line for line in err.splitlines() if not line.startswith("fairalloc: warning:")]
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(f"fairalloc: {kueue_files[1]}: Workload/my-namespace/done: the job does not fit")
    assert "queue" in lines[0] and not week.exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--window-end", "tomorrow"], "--window-end: 'tomorrow' is not an RFC 3339 time"),
        (["--runtime", "-5"], "--runtime: must be a number of seconds > 0"),
        (["--out", "x.yaml", "--case", "y.yaml"], "--out: with --case the case is given"),
        (["--out", "WEEK"], "--jobs and --out name the same file"),
    ],
)
def test_import_jobs_bad_options(capsys, tmp_path, kueue_files, args, message):
    week = tmp_path / "week.yaml"
    args = [str(week) if a == "WEEK" else a for a in args]
    code, _, err = run(capsys, "import", *kueue_files, "--jobs", str(week), *args)
    assert code == 2 and message in err and not week.exists()


def test_import_jobs_json_summary(capsys, tmp_path, kueue_files):
    """``--format json``: how many jobs were written, where, and every warning (here the preempted
    Workload's two: evicted, and never started without --runtime)."""
    week = tmp_path / "week.yaml"
    code, out, err = run(capsys, "import", *kueue_files, "--jobs", str(week), "--format", "json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["jobs"] == 2 and summary["out"] == str(week)
    assert [w.split(": ")[2] for w in summary["warnings"] if "preempted" in w] == [
        "status.conditions[Evicted]",
        "never started",
    ]


def test_jobs_options_need_jobs(capsys, kueue_files):
    code, _, err = run(capsys, "import", *kueue_files, "--runtime", "5")
    assert code == 2 and "--runtime: only with --jobs OUT.yaml" in err


def test_documents_read_once_from_a_list(tmp_path):
    """A ``kubectl get -o json`` list is read as its items (what the benchmark imports)."""
    path = tmp_path / "pods.json"
    items = [pod(f"p{k}", created="2024-01-01T10:00:00Z", started="2024-01-01T10:00:01Z") for k in range(3)]
    path.write_text(json.dumps({"kind": "List", "items": items}))
    docs: list[Document] = read_documents([str(path)])
    notes = Notes()
    assert [r.name for r in read_records(docs, notes)] == ["Pod/team-a/p0", "Pod/team-a/p1", "Pod/team-a/p2"]


def test_the_benchmark_records_its_commit_and_load(tmp_path):
    """benchmarks/bench_import_records.py at 200 pods: every pod a job, the figures beside the
    commit and the load they were measured at (no figure is asserted: speed lives in benchmarks/)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = tmp_path / "records.json"
    script = root / "benchmarks" / "bench_import_records.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--pods", "200", "--rounds", "1", "--json", str(out)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["import_records"]["pods"] == 200 and data["import_records"]["jobs"] == 200
    assert len(data["load_average"]["start"]) == 3 and len(data["load_average"]["end"]) == 3
    assert data["commit_measured"] not in ("", "?")


# -- the plain reading of a JSON pod equals its shape's ------------------------------------------------
odd = st.one_of(
    st.none(),
    st.text(max_size=3),
    st.integers(-2, 2),
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.text(max_size=2), st.one_of(st.none(), st.text(max_size=2), st.integers(0, 2)), max_size=2),
)


def maybe_field(good):
    """A field as a pod may give it: well formed, absent (``...``) or of any type."""
    return st.one_of(good, st.just(...), odd)


def obj(**fields):
    return st.fixed_dictionaries({k: v for k, v in fields.items()}).map(
        lambda d: {k: v for k, v in d.items() if v is not ...}
    )


texts = st.dictionaries(st.sampled_from(["a", "kueue.x-k8s.io/queue-name"]), st.one_of(st.none(), st.text(max_size=3)))
amounts = st.dictionaries(st.sampled_from(["cpu", "memory"]), st.sampled_from(["1", "500m", 2, "1Gi"]), max_size=2)
container = obj(
    name=maybe_field(st.text(max_size=2)),
    restartPolicy=maybe_field(st.sampled_from(["Always", None])),
    resources=maybe_field(obj(requests=maybe_field(amounts), limits=maybe_field(amounts))),
)
when = st.sampled_from(["2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z", None, 5])
state = obj(running=maybe_field(obj(startedAt=when)), terminated=maybe_field(obj(startedAt=when, finishedAt=when)))
generated_pod = obj(
    apiVersion=st.just("v1"),
    kind=st.just("Pod"),
    metadata=maybe_field(
        obj(
            name=maybe_field(st.text(max_size=3)),
            namespace=maybe_field(st.text(max_size=3)),
            labels=maybe_field(texts),
            annotations=maybe_field(texts),
            creationTimestamp=when,
            ownerReferences=maybe_field(st.lists(obj(kind=maybe_field(st.just("Job"))), max_size=2)),
        )
    ),
    spec=maybe_field(
        obj(
            containers=maybe_field(st.lists(maybe_field(container), max_size=2)),
            initContainers=maybe_field(st.lists(container, max_size=1)),
            overhead=maybe_field(amounts),
            priority=maybe_field(st.integers(-3, 3)),
            priorityClassName=maybe_field(st.text(max_size=2)),
        )
    ),
    status=maybe_field(
        obj(
            phase=maybe_field(st.sampled_from(["Running", "Succeeded"])),
            startTime=when,
            containerStatuses=maybe_field(
                st.lists(obj(name=maybe_field(st.text(max_size=2)), state=maybe_field(state)), max_size=2)
            ),
        )
    ),
)


@settings(max_examples=400, deadline=None)
@given(generated_pod)
def test_plain_reading_of_a_json_pod_is_the_shapes(data):
    """:func:`plain_pod` reads a pod only when its shape would, and reads it the same; anything
    else is left to the shape (which gives the message)."""
    from fairalloc.io.importers import records_shapes as shapes
    from fairalloc.io.importers.shapes import read as read_shape

    plain = shapes.plain_pod(data)
    try:
        shaped = shapes.seen_of(read_shape(shapes.Pod, data, "f.json: Pod"))
    except ImportFailed:
        assert plain is None
        return
    assert plain is None or plain == shaped


def test_the_benchmarks_pods_are_read_plainly():
    """kubectl's JSON of a pod (the benchmark's) takes the plain reading, not the shape's."""
    import importlib.util

    from fairalloc.io.importers import records_shapes as shapes

    spec = importlib.util.spec_from_file_location(
        "bench", Path(__file__).parent.parent / "benchmarks" / "bench_import_records.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    import sys

    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    try:
        spec.loader.exec_module(bench)
    finally:
        sys.path.pop(0)
    items = json.loads(json.dumps(bench.pods(50, 1)))["items"]
    assert all(shapes.plain_pod(item) == shapes.seen_of(shapes.Pod.model_validate(item)) for item in items)
    assert all(shapes.plain_pod(item) is not None for item in items)


#: mostly readable times, so that many objects become jobs; now and then one missing or unreadable
moments = st.integers(0, 340).map(lambda v: v if v <= 300 else [None, "later", 3, {"t": 1}][v % 4])
statuses = st.sampled_from(["True", "True", "True", "False", True, None])


def conditions_in_any_order():
    """At most one condition of each type (as Kueue and Volcano write them), each of any status and
    time, in any order (a Volcano Job's ``Running`` is its phase; Kueue's types are not)."""
    kinds = ("QuotaReserved", "Admitted", "Evicted", "Finished", "Running")
    one = [st.one_of(st.none(), st.tuples(st.just(kind), statuses, moments)) for kind in kinds]
    return st.tuples(*one).map(lambda given: [c for c in given if c]).flatmap(st.permutations)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(moments, conditions_in_any_order(), st.sampled_from(["Running", "Completed", None])),
        min_size=1,
        max_size=4,
    ),
    st.one_of(st.none(), st.floats(1, 1e4)),
)
def test_generated_workloads_and_volcano_jobs_give_their_times_or_a_warning(objects, runtime):
    """Kueue Workloads and Volcano Jobs with conditions in any order, of any status, with times
    missing or unreadable: each is a job of the run time its conditions give or named in a
    warning, and nothing raises but one ImportFailed line."""
    docs = []
    for k, (created, conditions, phase) in enumerate(objects):
        w = workload(f"w{k}", stamp(created), [(t, s, stamp(at)) for t, s, at in conditions])
        job = yaml.safe_load(read(VOLCANO / "quickstart-job.yaml"))
        job["metadata"] |= {"name": f"j{k}", "creationTimestamp": stamp(created)}
        job["status"] = {
            "conditions": [{"status": t, "lastTransitionTime": stamp(at)} for t, _, at in conditions],
            "state": {"phase": phase, "lastTransitionTime": stamp(conditions[-1][2]) if conditions else None},
        }
        docs += [w, job]
    try:
        jobs, warnings = jobs_of(records_yaml(*docs), window_end="2024-01-01T01:00:00Z", runtime=runtime)
    except ImportFailed as exc:
        assert "\n" not in str(exc) and ("Workload/" in str(exc) or "Job/" in str(exc))
        return
    for doc in docs:
        name = f"{doc['kind']}/{doc['metadata']['namespace']}/{doc['metadata']['name']}"
        if name not in jobs:
            assert any(f": {name}: " in w or w.endswith(f": {name}") for w in warnings), (name, warnings)
            continue
        assert jobs[name]["runtime"] > 0 and jobs[name]["submit"] >= 0
        if doc["kind"] == "Workload":
            admitted = [
                c for c in doc["status"]["conditions"] if c["type"] == "Admitted" and str(c["status"]) == "True"
            ]
            finished = [
                c for c in doc["status"]["conditions"] if c["type"] == "Finished" and str(c["status"]) == "True"
            ]
            if not admitted:  # waiting: only --runtime gives it a run time
                assert jobs[name]["runtime"] == runtime
            elif finished:
                start, end = (parse_time(c[-1]["lastTransitionTime"], "") for c in (admitted, finished))
                assert abs(jobs[name]["runtime"] - (end - start).total_seconds()) <= AGREEMENT


def test_started_without_its_time_is_named_not_replayed_as_waiting():
    """A Running pod without ``startTime`` or container times, and a Workload ``Admitted`` without
    its ``lastTransitionTime``, did start: replaying them as waiting (with --runtime) would be a
    guess, so each is one warning naming the field, and no job."""
    admitted = workload("w", "2024-03-19T20:49:10Z", [("Admitted", "True", None)])
    jobs, warnings = jobs_of(records_yaml(pod("p", created="2024-01-01T10:00:00Z"), admitted), runtime=60)
    assert jobs == {}
    assert warnings == [
        "f0.yaml: Pod/team-a/p: status.startTime: missing: when it started is not known; left out",
        "f0.yaml (document 2): Workload/my-namespace/w: status.conditions[0].lastTransitionTime: missing: when it "
        "started is not known; left out",
    ]
