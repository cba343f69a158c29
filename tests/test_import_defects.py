"""Defects found by importing real files (issue 34, item 3), each with the file shape that showed it:
files naming no resource, audits of cases where no queue has work, Mesos role ``*`` beside a roles
file, settings dropped without a warning, and float noise and blame in ``explain``."""

from __future__ import annotations

import contextlib
import io
import json

import yaml

from fairalloc.cli import main
from fairalloc.core.vocabulary import PAPER_PROPERTIES, QUEUE_PROPERTIES
from fairalloc.io.cases import load_case


def run(*argv) -> tuple[int, str, str]:
    """``fairalloc ARGV``: the exit code, stdout and stderr (warnings included)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("fairalloc: warning: ")]


# -- a. files that name no resource ----------------------------------------------------------------

WEIGHT_ONLY_QUEUES = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 2}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: batch}
spec: {weight: 1}
"""

#: a MapReduce 1 Fair Scheduler allocation file (pools, slot counts): the shape of the hadoop-1
#: documentation's example, written here
MR1_POOLS = """\
<?xml version="1.0"?>
<allocations>
  <pool name="sample_pool">
    <minMaps>5</minMaps>
    <weight>2.0</weight>
  </pool>
  <pool name="other"><weight>1.0</weight></pool>
</allocations>
"""


def test_a_file_naming_no_resource_is_one_line_and_writes_nothing(tmp_path):
    for name, text in (("queues.yaml", WEIGHT_ONLY_QUEUES), ("fair-scheduler.xml", MR1_POOLS)):
        out = tmp_path / f"{name}.case.yaml"
        code, stdout, err = run("import", write(tmp_path, name, text), "--out", out)
        lines = [line for line in err.splitlines() if not line.startswith("fairalloc: warning: ")]
        assert code == 2, (stdout, err)
        assert len(lines) == 1 and "no resource named" in lines[0] and "--capacity" in lines[0], err
        assert "Traceback" not in stdout + err
        assert not out.exists()


def test_weights_alone_divide_the_capacity_given(tmp_path):
    """With --capacity the weight-only queues are a valid case (the weights and the capacity given)."""
    out = tmp_path / "case.yaml"
    code, _, err = run("import", write(tmp_path, "q.yaml", WEIGHT_ONLY_QUEUES), "--capacity", "cpu=30", "--out", out)
    assert code == 0, err
    case = load_case(str(out))
    assert tuple(case.instance.resources) == ("cpu",) and case.instance.capacity[0] == 30
    assert yaml.safe_load(out.read_text())["users"] == {"research": {"weight": 2}, "batch": {}}


def test_a_pool_is_read_as_a_queue_with_a_warning(tmp_path):
    out = tmp_path / "case.yaml"
    path = write(tmp_path, "fair-scheduler.xml", MR1_POOLS)
    code, _, err = run("import", path, "--capacity", "memory-mb=1000,vcores=10", "--out", out)
    assert code == 0, err
    case = yaml.safe_load(out.read_text())
    assert case["users"]["root.sample_pool"]["weight"] == 2 and "root.other" in case["users"]
    said = _warnings(err)
    assert any("queue root.sample_pool: <pool>: the older name of <queue>" in w for w in said), said
    assert any("queue root.sample_pool: minMaps:" in w for w in said), said


def test_a_case_that_would_not_load_is_refused_before_it_is_written(tmp_path, monkeypatch):
    """The import checks its case with the case loader: a draft gone wrong (here a weight the loader
    refuses) is one line, exit 2, no file."""
    import fairalloc.io.importers as importers

    finish = importers.finish
    monkeypatch.setattr(importers, "finish", lambda *a, **k: {**finish(*a, **k), "users": {"q": {"weight": -1}}})
    out = tmp_path / "case.yaml"
    code, _, err = run("import", write(tmp_path, "q.yaml", WEIGHT_ONLY_QUEUES), "--capacity", "cpu=3", "--out", out)
    assert code == 2 and "the imported case does not load" in err and "Traceback" not in err, err
    assert not out.exists()


# -- b. audits of a case where no queue has work ---------------------------------------------------


def test_audit_of_an_idle_imported_case_says_the_properties_do_not_apply(tmp_path):
    """Two weight-only queues (and one alone): no request anywhere. The paper's properties compare
    demands, so each is n/a with the reason; the queue promises (guarantees, limits) hold."""
    two = tmp_path / "two.yaml"
    assert run("import", write(tmp_path, "q.yaml", WEIGHT_ONLY_QUEUES), "--capacity", "cpu=8", "--out", two)[0] == 0
    one = tmp_path / "one.yaml"
    one.write_text("name: one\npolicy: volcano-proportion\nresources: {cpu: 8}\nusers:\n  a: {weight: 2}\n")
    for case in (two, one):
        code, out, err = run("audit", case, "--format", "json")
        assert code == 0, err
        report = json.loads(out)
        for name in (p for p in PAPER_PROPERTIES if p != "strategy_proofness"):  # the audit's lies stand for it
            said = report["properties"][name]
            assert said["applicable"] is False and said["holds"] is None, (name, said)
            assert "no queue has a request" in said["why"]
        for name in QUEUE_PROPERTIES:
            assert report["properties"][name]["holds"] is True, name
        assert report["manipulation"] == {}
        code, out, _ = run("audit", case)
        assert code == 0 and "no queue has a request: no misreport to search" in out


# -- c. Mesos: the default role beside a roles file ------------------------------------------------

MESOS_STATE = """\
{"slaves": [{"hostname": "a1", "resources": {"cpus": 10, "mem": 10240}}],
 "frameworks": [
   {"name": "spark", "role": "eng", "used_resources": {"cpus": 4, "mem": 4096}},
   {"name": "marathon", "role": "*", "used_resources": {"cpus": 6, "mem": 6144}},
   {"name": "legacy", "used_resources": {}}
 ]}
"""
#: ``GET /roles`` as ReadOnlyHandler::roles writes it, listing eng only (no framework of '*' subscribed)
MESOS_ROLES = '{"roles": [{"name": "eng", "weight": 1.0, "allocated": {"cpus": 4, "mem": 4096}}]}'


def test_mesos_default_role_keeps_its_usage_when_a_roles_file_is_given(tmp_path):
    """Marathon in role '*' holds 6 of the 10 cpus (60%); the roles file does not list '*'. Its
    usage is the state's, with a warning, and explain does not call it inactive: with requests =
    usage (4 + 6 = 10 cpus, 10 GiB), DRF gives each role what it holds."""
    out = tmp_path / "case.yaml"
    files = [write(tmp_path, "state.json", MESOS_STATE), write(tmp_path, "roles.json", MESOS_ROLES)]
    code, _, err = run("import", *files, "--out", out)
    assert code == 0, err
    case = yaml.safe_load(out.read_text())
    assert case["users"]["*"]["usage"] == {"cpus": 6, "mem": 6144}
    said = _warnings(err)
    assert any("role *: not in the roles file: its usage read from the state's frameworks" in w for w in said), said
    assert any("framework legacy: frameworks[2]: names no role: read in Mesos' default role '*'" in w for w in said)
    code, text, _ = run("explain", out, "--queue", "*", "--format", "json")
    star = json.loads(text)["queues"]["*"]
    assert "inactive" not in star["binding"] and star["entitlement"] == {"cpus": 6.0, "mem": 6144.0}


# -- d. settings that were dropped without a warning -----------------------------------------------

#: queues.yaml with the queue properties of yunikorn-core's configvalidator.go (PreemptionPolicy,
#: PreemptionDelay, QuotaPreemptionDelay) and the partition's preemption block (PartitionPreemptionConfig)
YUNIKORN_PREEMPTION = """\
partitions:
  - name: default
    preemption: {enabled: true, quotapreemptionenabled: true}
    queues:
      - name: root
        queues:
          - name: batch
            resources: {guaranteed: {vcore: 4}}
            properties:
              preemption.policy: fence
              preemption.delay: 30s
              quota.preemption.delay: 1m
              application.sort.policy: fifo
              priority.offset: "5"
              preemption.polcy: disabled
"""


def _import_warnings(tmp_path, name: str, text: str, *extra: str) -> tuple[dict, list[str]]:
    out = tmp_path / f"{name}.case.yaml"
    code, _, err = run("import", write(tmp_path, name, text), *extra, "--out", out)
    assert code == 0, err
    return yaml.safe_load(out.read_text()), _warnings(err)


def test_yunikorn_preemption_settings_are_warned_about(tmp_path):
    case, said = _import_warnings(tmp_path, "queues.yaml", YUNIKORN_PREEMPTION, "--capacity", "vcore=8")
    assert case["users"]["root.batch"]["priority"] == 5
    for key in ("preemption.policy", "preemption.delay", "quota.preemption.delay"):
        assert any(f"queue root.batch: properties.{key}: preemption is not modelled" in w for w in said), (key, said)
    assert any("properties.preemption.polcy: not a queue property YuniKorn defines" in w for w in said), said
    assert any("partition default: preemption: not modelled" in w for w in said), said
    assert not any("application.sort.policy" in w or "priority.offset" in w for w in said), said


def test_yarn_default_policy_is_fair_and_said_so(tmp_path):
    """No defaultQueueSchedulingPolicy: YARN's default is 'fair' (FairSharePolicy), memory only."""
    queue = '<queue name="a"><minResources>1024 mb, 1 vcores</minResources></queue>'
    xml = f'<?xml version="1.0"?><allocations>{queue}</allocations>'
    _, said = _import_warnings(tmp_path, "fair-scheduler.xml", xml, "--capacity", "memory-mb=4096,vcores=4")
    assert any("allocations: defaultQueueSchedulingPolicy: not given: the default is 'fair'" in w for w in said), said
    drf = xml.replace("<allocations>", "<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>")
    _, said = _import_warnings(tmp_path, "drf.xml", drf, "--capacity", "memory-mb=4096,vcores=4")
    assert said == []


VOLCANO_JOBS_WITHOUT_REQUESTS = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec: {queue: research, minMember: 2}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: job, namespace: ns}
spec:
  queue: research
  tasks:
    - replicas: 2
      template: {spec: {containers: [{name: c, image: busybox}]}}
    - replicas: 1
      template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
"""


def test_volcano_jobs_without_requests_are_warned_about(tmp_path):
    case, said = _import_warnings(tmp_path, "jobs.yaml", VOLCANO_JOBS_WITHOUT_REQUESTS, "--capacity", "cpu=8")
    assert case["users"]["research"]["request"] == {"cpu": 1}
    assert any("PodGroup/ns/pg: spec.minResources: not given: counted as a request of nothing" in w for w in said)
    assert any("Job/ns/job: spec.tasks[0].template: no container requests" in w for w in said), said
    assert not any("spec.tasks[1]" in w for w in said), said


def test_a_storage_class_quota_is_not_called_an_object_count(tmp_path):
    quota = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: storage, namespace: team}
spec:
  hard:
    requests.cpu: "4"
    gold.storageclass.storage.k8s.io/requests.storage: 500Gi
    gold.storageclass.storage.k8s.io/persistentvolumeclaims: "10"
"""
    _, said = _import_warnings(tmp_path, "quota.yaml", quota, "--capacity", "cpu=8")
    storage = [w for w in said if "requests.storage" in w]
    assert len(storage) == 1 and "storage class gold" in storage[0] and "object count" not in storage[0], said
    assert any("persistentvolumeclaims: an object count" in w for w in said), said
