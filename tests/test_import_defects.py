"""Defects found by importing real files (issue 34, item 3), each with the file shape that showed it:
files naming no resource, audits of cases where no queue has work, Mesos role ``*`` beside a roles
file, settings dropped without a warning, and float noise and blame in ``explain``."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import yaml

from fairalloc.analysis.explain import explain
from fairalloc.cli import main
from fairalloc.core import registry
from fairalloc.core.errors import FairallocError
from fairalloc.core.queues import queues_of, request
from fairalloc.core.tolerances import PROPERTY
from fairalloc.core.units import SIZES
from fairalloc.core.vocabulary import PAPER_PROPERTIES, QUEUE_PROPERTIES
from fairalloc.io.cases import bundled_cases, load_bundled, load_case, parse_case

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported"


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
    # configuration alone is imported backlogged (every queue wants more): the properties apply there
    code, out, err = run("audit", two, "--format", "json")
    assert code == 0 and json.loads(out)["properties"]["sharing_incentive"]["applicable"] is True, err
    two.write_text(two.read_text().replace("demand: backlogged", "demand: observed"))  # the idle reading
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


# -- e. explain: no noise, no blame where a quota is zero, never a sentence the numbers deny ---------

#: a Kueue cohort where queue a has a memory quota but no cpu quota, and b holds all the cpu
KUEUE_NO_CPU_QUOTA = """\
name: no-cpu-quota
policy: kueue
resources: {cpu: 10, memory: 68719476736}
units: {cpu: cores, memory: bytes}
groups:
  co: {}
users:
  a: {group: co, guarantee: {cpu: 0, memory: 4294967296}, request: {cpu: 2, memory: 1073741824}}
  b: {group: co, guarantee: {cpu: 10, memory: 64424509440}, request: {cpu: 10, memory: 64424509440}}
  c: {group: co, guarantee: {memory: 1073741824}, request: {cpu: 3, memory: 536870912}}
"""


def test_explain_prints_noise_as_zero_and_names_the_zero_quota(tmp_path):
    """b takes all 10 cores (its nominal quota). a and c may only borrow cpu and none is left, so
    kueue's numerical answer for them (about 5e-12 cores, 0.003 bytes) is 0, and the reason is
    their missing cpu quota, not a guarantee kueue fails to honour: under guarantee_honoured
    (which reads no nominal quota as 0 for kueue) both are honoured."""
    path = write(tmp_path, "kueue.yaml", KUEUE_NO_CPU_QUOTA)
    code, text, err = run("explain", path)
    assert code == 0, err
    assert "0.0000" not in text and "e-" not in text and "does not honour" not in text, text
    code, out, _ = run("explain", path, "--format", "json")
    queues = json.loads(out)["queues"]
    for q in ("a", "c"):
        assert queues[q]["entitlement"] == {"cpu": 0.0, "memory": 0.0}, queues[q]
        assert queues[q]["gap"] == {"cpu": 0.0, "memory": 0.0}
        assert queues[q]["binding"][0] == "zero_guarantee:cpu", queues[q]
        assert "of which it has no nominal quota" in queues[q]["why"][1]
        assert "The zero quota binds here, not kueue." in queues[q]["why"][1]
    assert "its guarantee of 4 GiB of memory covers none of its request" in queues["a"]["why"][1]
    from fairalloc.analysis.properties import check_property

    case = load_case(path)
    for q in ("a", "c"):
        assert check_property("kueue", case, "guarantee_honoured", user=q).holds


#: an amount as ``readable`` prints it, and the resource it is of: "5.455 cores of cpu", "64 GiB of memory"
AMOUNT = re.compile(r"(-?\d+(?:\.\d+)?) ?(cores?|bytes|[KMGTPE]i?B|kB)? of ([^\s,;:()]+?)[.,;:)]?(?=\s|$)")
PRINTED = {"core": 1.0, "cores": 1.0, "bytes": 1.0, "kB": 1e3}
PRINTED |= {f"{p}iB": 1024.0 ** (k + 1) for k, p in enumerate("KMGTPE")}
PRINTED |= {f"{p}B": 1000.0 ** (k + 1) for k, p in enumerate("MGTPE")}


def _printed(sentence: str, units: dict, resources) -> dict[str, float]:
    """The amounts a sentence states, per resource, in the case's units (the first of each)."""
    out: dict[str, float] = {}
    for number, unit, resource in AMOUNT.findall(sentence):
        if resource in resources and resource not in out:
            size = SIZES[units[resource]][1] if resource in units else 1.0
            out[resource] = float(number) * PRINTED.get(unit, 1.0) / size
    return out


def _close(said: float, value: float, tol: float) -> bool:
    """Equal as 4 significant digits print it (readable), or within the noise of the resource."""
    return abs(said - value) <= max(tol, 6e-4 * abs(value))


def contradictions(case, report) -> list[str]:
    """The sentences of ``report`` (explain of ``case``) that its own numbers deny."""
    from fairalloc.analysis.properties import check_property

    inst, units = case.instance, dict(case.units or {})
    res = list(inst.resources)
    R = np.asarray(inst.capacity, dtype=float)
    tol = {r: PROPERTY * max(R[j], 1.0) for j, r in enumerate(res)}
    req = dict(zip(inst.users, request(inst)))
    Q = queues_of(inst)
    mech = registry.get(report.policy)
    out = []
    for q, e in report.queues.items():
        G = np.nan_to_num(Q.guarantee[q], nan=0.0 if mech.zero_unguaranteed else np.nan)
        for s in e.why:
            said = _printed(s, units, res)
            bad = ""
            if s.startswith("Entitled to "):
                wrong = [r for r in res if r in said and not _close(said[r], e.entitlement[r], tol[r])]
                bad = f"entitlement {e.entitlement}" if wrong or set(said) != set(res) else ""
            elif s.startswith("Its request binds"):
                bad = (
                    "below its request" if any(e.entitlement[r] < req[q][j] - tol[r] for j, r in enumerate(res)) else ""
                )
            elif "gives it nothing" in s:
                bad = "it is given something" if any(v > tol[r] for r, v in e.entitlement.items()) else ""
            elif "does not honour the guarantee" in s:
                (r,) = [r for r in said if f"of {r}, less than" in s]
                honoured = check_property(mech, case, "guarantee_honoured", user=q).holds
                bad = "the guarantee is honoured or zero" if honoured or not G[res.index(r)] > tol[r] else ""
            elif s.startswith("It holds exactly its guarantee"):
                (r,) = said
                bad = "not its guarantee" if abs(e.entitlement[r] - G[res.index(r)]) > tol[r] else ""
            elif s.startswith("Its limit binds"):
                (r, *_) = said
                bad = "below its limit" if e.entitlement[r] < Q.limit[q][res.index(r)] - tol[r] else ""
            elif s.startswith("Its request needs") and "binds here" in s:
                zero = s.removeprefix("Its request needs ").split(", of which")[0].split(", ")
                bad = (
                    "not a zero guarantee"
                    if any(G[res.index(r)] > tol[r] or not req[q][res.index(r)] > 0 for r in zero)
                    else ""
                )
            elif s.startswith("It uses "):
                bad = "not its usage" if any(not _close(v, e.usage[r], tol[r]) for r, v in said.items()) else ""
            computed = s.startswith(("Entitled to ", "For contrast", "It is owed", "That is "))
            for r, v in said.items():  # no computed amount within the noise of 0 printed other than as 0
                if computed and 0 < abs(v) <= tol[r] and not _close(v, req[q][res.index(r)], 0.0):
                    bad = bad or f"noise printed: {v} of {r}"
            if bad:
                out.append(f"{case.instance.name}: {q}: {s!r}: {bad}")
    return out


def _gallery_cases():
    from fairalloc.io.importers import import_files

    for expect in sorted(GALLERY.glob("*/*/expect.yaml")):
        spec = yaml.safe_load(expect.read_text())
        capacity = {r: str(v) for r, v in (spec.get("capacity") or {}).items()} or None
        case, _ = import_files(
            [str(expect.parent / f) for f in spec["files"]], capacity=capacity, name=expect.parent.name
        )
        yield parse_case(case)


def test_explain_never_contradicts_its_numbers_on_any_bundled_or_gallery_case():
    """Every bundled case (``fairalloc cases``) and every gallery case with queues, explained under
    its own policy: each sentence that states a number or a binding cause is checked against the
    numbers (entitlement, request, guarantee, limit, usage, guarantee_honoured)."""
    cases = [load_bundled(name) for name in bundled_cases()] + list(_gallery_cases())
    cases.append(parse_case(yaml.safe_load(KUEUE_NO_CPU_QUOTA)))  # the case that showed the defects
    found, explained = [], 0
    for case in cases:
        try:
            report = explain(case)
        except FairallocError:  # a case its policy refuses (guarantees beyond the capacity): one line, no report
            continue
        explained += 1
        found += contradictions(case, report)
    assert explained >= len(bundled_cases()) and not found, "\n".join(found)


# -- f. found by tests/test_import_hypothesis.py ---------------------------------------------------

GPU_PODS_WITHOUT_GPUS = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", nvidia.com/gpu: "0"}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
"""


def test_a_request_of_a_resource_the_nodes_have_none_of_is_one_line(tmp_path):
    """A pending pod asks for a GPU of nodes that have 0: the case loader refuses a request of a
    zero-capacity resource, so the import says so in the importer's words, and writes nothing."""
    out = tmp_path / "case.yaml"
    code, _, err = run("import", write(tmp_path, "cluster.yaml", GPU_PODS_WITHOUT_GPUS), "--out", out)
    assert code == 2 and not out.exists(), err
    assert "nvidia.com/gpu is 0 (from nodes) but queue ml requests 1 of it" in err and "--capacity" in err
    code, _, err = run("import", write(tmp_path, "c.yaml", GPU_PODS_WITHOUT_GPUS), "--capacity", "nvidia.com/gpu=2")
    assert code == 0, err


def test_a_v1_framework_without_a_role_is_said_to_be_in_the_default_role(tmp_path):
    """v1 GET_STATE: a FrameworkInfo without role (its task holds 2 of the 8 cpus) is read in '*'."""
    cpus = lambda n: [{"name": "cpus", "type": "SCALAR", "scalar": {"value": n}}]
    state = {"type": "GET_STATE", "get_state": {
        "get_agents": {"agents": [{"agent_info": {"hostname": "a1"}, "total_resources": cpus(8)}]},
        "get_frameworks": {"frameworks": [{"framework_info": {"id": {"value": "f1"}, "name": "batch"}}]},
        "get_tasks": {"tasks": [{"name": "t", "framework_id": {"value": "f1"}, "state": "TASK_RUNNING",
                                 "resources": cpus(2)}]}}}  # fmt: skip
    case, said = _import_warnings(tmp_path, "state.json", json.dumps(state))
    assert case["users"]["*"]["usage"] == {"cpus": 2}
    assert any("framework batch: framework_info: names no role: read in Mesos' default role '*'" in w for w in said)
