"""Job workload files (:mod:`fairalloc.io.job_workloads`): the jobs as the case's cycle reads
them, in submit order, and one line naming the file, the job and the field for bad input."""

from __future__ import annotations

import pytest
import yaml

from fairalloc.core import limits
from fairalloc.core.errors import CaseError
from fairalloc.io.cases import parse_case
from fairalloc.io.job_workloads import load_job_workload, parse_job_workload

CASE = parse_case(
    yaml.safe_load("""
name: two-queues
resources: {cpu: 10, memory: 40}
users:
  team-a: {guarantee: {cpu: 5}, request: {cpu: 1}}
  team-b: {guarantee: {cpu: 5}, request: {cpu: 1}}
""")
).instance

WORKLOAD = """
nodes: {n1: {cpu: 6, memory: 20}, n2: {cpu: 4, memory: 20}}
jobs:
  late: {queue: team-a, request: {cpu: 2}, submit: 30, runtime: 10}
  early: {queue: team-b, request: {cpu: 1, memory: 2}, pods: 3, min_pods: 2, submit: 0, runtime: 5, priority: 2}
  also-early: {queue: team-a, request: {cpu: 1}, submit: 0}
"""


def test_jobs_in_submit_order_and_the_nodes(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD)
    w = load_job_workload(path, CASE)
    assert [j.name for j in w.jobs] == ["early", "also-early", "late"]
    early = w.jobs[0]
    assert early.queue == "team-b" and early.request == (1.0, 2.0) and early.least == 2 and early.priority == 2
    assert w.jobs[1].runtime == float("inf") and w.nodes is not None and w.nodes["n2"].tolist() == [4, 20]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("jobs/late/queue", "team-c", "jobs.late.queue: unknown queue 'team-c'; did you mean 'team-b' or 'team-a'?"),
        ("jobs/late/request", {"cpu": 7}, "jobs.late.request.cpu: a pod of 7 is larger than any node (6 at most)"),
        ("jobs/late/submit", -1, "jobs.late.submit: input should be greater than or equal to 0"),
        ("jobs/late/runtime", 0, "jobs.late.runtime: input should be greater than 0"),
        ("jobs/late/podz", 2, "jobs.late.podz: unknown field 'podz'"),
        ("nodes/n1", {"cpus": 2}, "nodes.n1.cpus: unknown resource 'cpus'; did you mean 'cpu'?"),
        ("jobs/late/pods", limits.MAX_JOB_PODS + 1, "jobs.late.pods: 100,001 pods; a replayed job has at most"),
    ],
)
def test_bad_input_is_one_line_naming_the_file_job_and_field(tmp_path, path, value, message):
    data = yaml.safe_load(WORKLOAD)
    *above, last = path.split("/")
    node = data
    for key in above:
        node = node[key]
    node[last] = value
    file = tmp_path / "w.yaml"
    file.write_text(yaml.safe_dump(data))
    with pytest.raises(CaseError) as err:
        load_job_workload(file, CASE)
    text = str(err.value)
    assert text.startswith(message) and text.endswith(f"(in {file})") and "\n" not in text, text


def test_without_nodes_a_pod_larger_than_the_capacity_is_refused():
    data = {"jobs": {"big": {"queue": "team-a", "request": {"memory": 41}}}}
    with pytest.raises(CaseError, match=r"jobs.big.request.memory: a pod of 41 is larger than the capacity \(40\)"):
        parse_job_workload(data, CASE)


def test_a_workload_beyond_the_job_limit_is_refused_before_any_job_is_read(monkeypatch):
    monkeypatch.setattr(limits, "MAX_WORKLOAD_JOBS", 2)
    data = {"jobs": {f"j{k}": {"queue": "nowhere"} for k in range(3)}}  # bad jobs: never read
    with pytest.raises(CaseError, match=r"jobs: 3 jobs; fairalloc replays at most 2 \(MAX_WORKLOAD_JOBS\)"):
        parse_job_workload(data, CASE)
