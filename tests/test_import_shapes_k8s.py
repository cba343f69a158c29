"""Shape checks of the plain Kubernetes and Volcano importers (issue 35, item 3): every object they
read (Pod, Node, ResourceQuota, Namespace; Volcano's Queue, PodGroup, Job, the scheduler's
configuration and its ConfigMap) goes through its schema (fairalloc.io.importers.shapes,
fairalloc.io.importers.volcano_shapes), so a wrong shape is one line naming the file, the object and
the field, exit 2, no file written; never an AttributeError.

Also the two defects fixed with the schemas: a Volcano Queue ``spec.weight`` that is not a whole
number is refused (Volcano declares it ``int32``), and two ResourceQuotas of one namespace cap each
resource at the smaller of their ``hard`` amounts (Kubernetes enforces every quota of a namespace).
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.cli import main
from fairalloc.io.importers import import_files
from fairalloc.testing import assert_imports_or_one_line, places, replaced, wrong_values

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported"

V1BETA1 = "apiVersion: scheduling.volcano.sh/v1beta1\n"
QUEUE = V1BETA1 + "kind: Queue\nmetadata: {name: q}\n"
PODGROUP = V1BETA1 + "kind: PodGroup\nmetadata: {name: pg, namespace: ns}\n"
JOB = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, namespace: ns}\n"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: volcano-scheduler-configmap, namespace: vs}\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
QUOTA = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: rq, namespace: ns}\n"


def _conf(text: str) -> str:
    """A ConfigMap holding ``text`` as its ``volcano-scheduler.conf``."""
    return CONFIGMAP + "data:\n  volcano-scheduler.conf: |\n" + "".join(f"    {line}\n" for line in text.splitlines())


#: (system, file text, the line after "fairalloc: FILE: "): each kind's wrong shapes
WRONG_SHAPES = {
    # -- Volcano Queue ------------------------------------------------------------------------------
    "queue spec a list": ("volcano", QUEUE + "spec: [1]\n", "Queue/q: spec: must be a mapping (got [1])"),
    "queue capability text": (
        "volcano",
        QUEUE + "spec: {capability: x}\n",
        "Queue/q: spec.capability: must be a mapping (got 'x')",
    ),
    "queue guarantee a list": (
        "volcano",
        QUEUE + "spec: {guarantee: [1]}\n",
        "Queue/q: spec.guarantee: must be a mapping (got [1])",
    ),
    "queue guarantee.resource a number": (
        "volcano",
        QUEUE + "spec: {guarantee: {resource: 3}}\n",
        "Queue/q: spec.guarantee.resource: must be a mapping (got 3)",
    ),
    "queue parent a number": ("volcano", QUEUE + "spec: {parent: 7}\n", "Queue/q: spec.parent: must be text (got 7)"),
    "queue reclaimable text": (
        "volcano",
        QUEUE + "spec: {reclaimable: 'false'}\n",
        "Queue/q: spec.reclaimable: must be true or false (got 'false')",
    ),
    "queue name a number": (
        "volcano",
        V1BETA1 + "kind: Queue\nmetadata: {name: 12}\n",
        "Queue: metadata.name: must be text (got 12)",
    ),
    "queue annotations a list": (
        "volcano",
        V1BETA1 + "kind: Queue\nmetadata: {name: q, annotations: [a]}\n",
        "Queue/q: metadata.annotations: must be a mapping (got ['a'])",
    ),
    "queue allocated a list": (
        "volcano",
        QUEUE + "status: {allocated: [1]}\n",
        "Queue/q: status.allocated: must be a mapping (got [1])",
    ),
    # -- Volcano PodGroup ---------------------------------------------------------------------------
    "podgroup minResources a list": (
        "volcano",
        PODGROUP + "spec: {minResources: [cpu]}\n",
        "PodGroup/ns/pg: spec.minResources: must be a mapping (got ['cpu'])",
    ),
    "podgroup queue a number": (
        "volcano",
        PODGROUP + "spec: {queue: 5}\n",
        "PodGroup/ns/pg: spec.queue: must be text (got 5)",
    ),
    "podgroup status text": (
        "volcano",
        PODGROUP + "status: Running\n",
        "PodGroup/ns/pg: status: must be a mapping (got 'Running')",
    ),
    # -- Volcano Job --------------------------------------------------------------------------------
    "job tasks a mapping": (
        "volcano",
        JOB + "spec: {tasks: {a: 1}}\n",
        "Job/ns/j: spec.tasks: must be a list (got {'a': 1})",
    ),
    "job task null": (
        "volcano",
        JOB + "spec: {tasks: [null]}\n",
        "Job/ns/j: spec.tasks[0]: must be a mapping (got None)",
    ),
    "job template a list": (
        "volcano",
        JOB + "spec: {tasks: [{template: [1]}]}\n",
        "Job/ns/j: spec.tasks[0].template: must be a mapping (got [1])",
    ),
    "job containers text": (
        "volcano",
        JOB + "spec: {tasks: [{template: {spec: {containers: c}}}]}\n",
        "Job/ns/j: spec.tasks[0].template.spec.containers: must be a list (got 'c')",
    ),
    "job requests a list": (
        "volcano",
        JOB + "spec: {tasks: [{template: {spec: {containers: [{resources: {requests: [1]}}]}}}]}\n",
        "Job/ns/j: spec.tasks[0].template.spec.containers[0].resources.requests: must be a mapping (got [1])",
    ),
    "job state text": (
        "volcano",
        JOB + "status: {state: Running}\n",
        "Job/ns/j: status.state: must be a mapping (got 'Running')",
    ),
    # -- the scheduler's configuration, in its ConfigMap or as the file itself ----------------------
    "configmap conf a number": (
        "volcano",
        CONFIGMAP + "data: {volcano-scheduler.conf: 5}\n",
        "ConfigMap/vs/volcano-scheduler-configmap: data.volcano-scheduler.conf: must be text (got 5)",
    ),
    "configmap data a list": (
        "volcano",
        CONFIGMAP + "data: [1]\n",
        "ConfigMap/vs/volcano-scheduler-configmap: data: must be a mapping (got [1])",
    ),
    "conf a list": (
        "volcano",
        _conf("- a\n- b"),
        "ConfigMap/vs/volcano-scheduler-configmap: data.volcano-scheduler.conf: the object must be a mapping "
        "(got ['a', 'b'])",
    ),
    "conf tiers a mapping": (
        "volcano",
        _conf('actions: "enqueue, allocate"\ntiers: {plugins: []}'),
        "ConfigMap/vs/volcano-scheduler-configmap: data.volcano-scheduler.conf: tiers: must be a list "
        "(got {'plugins': []})",
    ),
    "conf plugin null": (
        "volcano",
        _conf('actions: "allocate"\ntiers:\n- plugins: [null]'),
        "ConfigMap/vs/volcano-scheduler-configmap: data.volcano-scheduler.conf: tiers[0].plugins[0]: must be a "
        "mapping (got None)",
    ),
    "conf plugin name a number": (
        "volcano",
        _conf('actions: "allocate"\ntiers:\n- plugins: [{name: 3}]'),
        "ConfigMap/vs/volcano-scheduler-configmap: data.volcano-scheduler.conf: tiers[0].plugins[0].name: must be "
        "text (got 3)",
    ),
    "conf enableHierarchy text": (
        "volcano",
        _conf('actions: "allocate"\ntiers:\n- plugins: [{name: capacity, enableHierarchy: "true"}]'),
        "ConfigMap/vs/volcano-scheduler-configmap: data.volcano-scheduler.conf: tiers[0].plugins[0]."
        "enableHierarchy: must be true or false (got 'true')",
    ),
    "conf file plugins text": (
        "volcano",
        'actions: "allocate"\ntiers:\n- plugins: proportion\n',
        "document 1: tiers[0].plugins: must be a list (got 'proportion')",
    ),
    "conf file actions a list": (
        "volcano",
        "actions: [allocate]\ntiers: []\n",
        "document 1: actions: must be text (got ['allocate'])",
    ),
    # -- Kubernetes core objects, through the plain Kubernetes importer ------------------------------
    "pod containers text": (
        "kubernetes",
        POD + "spec: {containers: c}\n",
        "Pod/ns/p: spec.containers: must be a list (got 'c')",
    ),
    "pod init container null": (
        "kubernetes",
        POD + "spec: {initContainers: [null]}\n",
        "Pod/ns/p: spec.initContainers[0]: must be a mapping (got None)",
    ),
    "pod overhead a list": (
        "kubernetes",
        POD + "spec: {overhead: [1]}\n",
        "Pod/ns/p: spec.overhead: must be a mapping (got [1])",
    ),
    "pod phase a number": ("kubernetes", POD + "status: {phase: 1}\n", "Pod/ns/p: status.phase: must be text (got 1)"),
    "pod namespace a number": (
        "kubernetes",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: 3}\n",
        "Pod/p: metadata.namespace: must be text (got 3)",
    ),
    "node allocatable a list": (
        "kubernetes",
        NODE + "status: {allocatable: [1]}\n",
        "Node/n1: status.allocatable: must be a mapping (got [1])",
    ),
    "node labels a list": (
        "kubernetes",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: [a]}\n",
        "Node/n1: metadata.labels: must be a mapping (got ['a'])",
    ),
    "quota hard a list": (
        "kubernetes",
        QUOTA + "spec: {hard: [cpu]}\n",
        "ResourceQuota/ns/rq: spec.hard: must be a mapping (got ['cpu'])",
    ),
    "namespace metadata a list": (
        "kubernetes",
        "apiVersion: v1\nkind: Namespace\nmetadata: [1]\n",
        "Namespace: metadata: must be a mapping (got [1])",
    ),
    # -- the Volcano Queue's weight is an int32: anything else is refused (defect 1) -----------------
    "queue weight 1.5": (
        "volcano",
        QUEUE + "spec: {weight: 1.5}\n",
        "Queue/q: spec.weight: must be a whole number, Volcano's weight is an int32 (got 1.5)",
    ),
    "queue weight '2'": (
        "volcano",
        QUEUE + "spec: {weight: '2'}\n",
        "Queue/q: spec.weight: must be a whole number, Volcano's weight is an int32 (got '2')",
    ),
    "queue weight true": (
        "volcano",
        QUEUE + "spec: {weight: true}\n",
        "Queue/q: spec.weight: must be a whole number, Volcano's weight is an int32 (got True)",
    ),
}


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("system", "text", "message"), WRONG_SHAPES.values(), ids=list(WRONG_SHAPES))
def test_a_wrong_shape_is_one_line_naming_file_object_and_field(tmp_path, system, text, message):
    path = tmp_path / "in.yaml"
    path.write_text(text)
    out = tmp_path / "case.yaml"
    code, _, err = run("import", path, "--from", system, "--capacity", "cpu=8", "--out", out)
    assert (code, err) == (2, f"fairalloc: {path}: {message}\n")
    assert not out.exists()


def _warnings(err: str) -> list[str]:
    return [
        line.removeprefix("fairalloc: warning: ") for line in err.splitlines() if line.startswith("fairalloc: warning")
    ]


def test_a_weight_of_zero_is_volcanos_default_and_a_whole_weight_is_read(tmp_path):
    """Volcano's queue webhook sets a weight of 0 to 1 (``mutate_queue.go``); 3 is read as 3."""
    path = tmp_path / "q.yaml"
    path.write_text(QUEUE + "spec: {weight: 0}\n---\n" + QUEUE.replace("name: q", "name: r") + "spec: {weight: 3}\n")
    case, warnings = import_files([str(path)], system="volcano", capacity={"cpu": "8"})
    assert case["users"]["r"]["weight"] == 3 and "weight" not in case["users"]["q"]
    assert warnings == [f"{path}: Queue/q: spec.weight: 0 is not a positive integer: weight 1 used"]


TWO_QUOTAS = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: team}
spec: {hard: {requests.cpu: "4", requests.memory: 8Gi, requests.nvidia.com/gpu: "2"}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: small, namespace: team}
spec: {hard: {cpu: "2", requests.memory: 16Gi, requests.nvidia.com/gpu: "2"}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: other, namespace: lab}
spec: {hard: {requests.cpu: "6"}}
"""


def test_two_quotas_of_one_namespace_cap_each_resource_at_the_smaller(tmp_path):
    """Kubernetes checks a pod against every quota of its namespace (``CheckRequest``), so team's cap
    is, per resource, the smaller: cpu min(4, 2) = 2 (small), memory min(8Gi, 16Gi) = 8Gi = 8589934592
    bytes (compute), gpu 2 (both say 2: nothing to warn about).  lab's one quota is its cap."""
    path = tmp_path / "quotas.yaml"
    path.write_text(TWO_QUOTAS)
    code, _, err = run("import", path, "--capacity", "cpu=8,memory=64Gi,nvidia.com/gpu=4", "--out", tmp_path / "c.yaml")
    assert code == 0, err
    users = yaml.safe_load((tmp_path / "c.yaml").read_text())["users"]
    assert users["team"]["limit"] == {"cpu": 2, "memory": 8589934592, "nvidia.com/gpu": 2}
    assert users["lab"]["limit"] == {"cpu": 6}
    assert _warnings(err) == [
        f"{path} (document 2): ResourceQuota/team/small: spec.hard.cpu: caps cpu at 2 cores and "
        "ResourceQuota/team/compute's spec.hard.requests.cpu at 4 cores: Kubernetes enforces every cap of a "
        "namespace's quotas, so the smaller, 2 cores, is kept",
        f"{path} (document 2): ResourceQuota/team/small: spec.hard.requests.memory: caps memory at 17179869184 "
        "bytes and ResourceQuota/team/compute's spec.hard.requests.memory at 8589934592 bytes: Kubernetes enforces "
        "every cap of a namespace's quotas, so the smaller, 8589934592 bytes, is kept",
    ]


def test_the_smaller_cap_is_kept_whichever_quota_comes_first(tmp_path):
    """The same two quotas in the other order: the same caps, the warnings now on compute."""
    first, second, third = TWO_QUOTAS.split("---\n")
    path = tmp_path / "quotas.yaml"
    path.write_text("---\n".join([second, first, third]))
    case, warnings = import_files([str(path)], capacity={"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "4"})
    assert case["users"]["team"]["limit"] == {"cpu": 2, "memory": 8589934592, "nvidia.com/gpu": 2}
    assert [w.split(": ")[2] for w in warnings] == ["spec.hard.requests.cpu", "spec.hard.requests.memory"]
    assert all("ResourceQuota/team/compute: " in w and "ResourceQuota/team/small's spec.hard." in w for w in warnings)


def test_cpu_beside_requests_cpu_in_one_quota_is_the_smaller(tmp_path):
    """``cpu`` and ``requests.cpu`` both cap the pods' cpu requests (``podComputeUsageHelper`` counts a
    request under both), so one quota giving 3 and 5 caps cpu at min(3, 5) = 3, whichever key is
    written first; before, ``requests.cpu`` won and the cap read 5."""
    for hard in ("{cpu: '3', requests.cpu: '5'}", "{requests.cpu: '5', cpu: '3'}"):
        path = tmp_path / "quota.yaml"
        path.write_text(QUOTA + f"spec: {{hard: {hard}}}\n")
        case, warnings = import_files([str(path)], capacity={"cpu": "8"})
        assert case["users"]["ns"]["limit"] == {"cpu": 3}
        assert len(warnings) == 1 and "ResourceQuota/ns/rq's spec.hard." in warnings[0], warnings
        assert warnings[0].endswith("so the smaller, 3 cores, is kept"), warnings


# -- any field of a valid object given a value of the wrong type ----------------------------------

#: a valid object of each kind the gallery lacks: PodGroups (one a pod names), a Namespace, a pod with a
#: sidecar and an ordinary init container, a node, two quotas of one namespace
FIXTURES = {
    "volcano": {
        "conf.yaml": 'actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: priority}, {name: proportion}]\n',
        "objects.yaml": QUEUE
        + "spec: {weight: 2, capability: {cpu: '6'}, guarantee: {resource: {cpu: '1'}}}\n"
        + "status: {allocated: {cpu: '1'}}\n---\n"
        + PODGROUP
        + "spec: {queue: q, minResources: {cpu: '2'}}\nstatus: {phase: Running}\n---\n"
        + PODGROUP.replace("name: pg", "name: pg2")
        + "spec: {queue: q, minResources: {cpu: '3'}}\n---\n"
        + "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n"
        + "  annotations: {scheduling.k8s.io/group-name: pg2}\n"
        + "spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}\nstatus: {phase: Running}\n---\n"
        + NODE
        + "status: {allocatable: {cpu: '8', pods: '110'}}\n",
    },
    "kubernetes": {
        "objects.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\n"
        + POD
        + "spec:\n  initContainers:\n  - {name: side, restartPolicy: Always, resources: {requests: {cpu: 100m}}}\n"
        + "  - {name: init, resources: {limits: {cpu: '1'}}}\n"
        + "  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}]\n"
        + "  overhead: {cpu: 10m}\nstatus: {phase: Pending}\n---\n"
        + NODE
        + "spec: {unschedulable: false}\nstatus: {allocatable: {cpu: '8', memory: 16Gi}}\n---\n"
        + QUOTA
        + "spec: {hard: {requests.cpu: '4', limits.cpu: '8', pods: '10'}}\n---\n"
        + QUOTA.replace("name: rq", "name: rq2")
        + "spec: {hard: {cpu: '2'}}\n",
    },
}


def _examples() -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """(system, files, capacity): the gallery's Volcano and Kubernetes examples and the fixtures above,
    each with a capacity for every resource it names (a mutation never leaves the cluster unsized)."""
    out = []
    for expect in sorted(GALLERY.glob("*/*/expect.yaml")):
        spec = yaml.safe_load(expect.read_text())
        if spec["system"] in ("volcano", "kubernetes"):
            files = {name: (expect.parent / name).read_text() for name in spec["files"]}
            capacity = {r: str(v) for r, v in spec["case"]["resources"].items()}
            out.append((spec["system"], files, capacity))
    out += [(system, files, {"cpu": "8", "memory": "16Gi"}) for system, files in FIXTURES.items()]
    return out


EXAMPLES = _examples()


#: values of every type but the right one somewhere, with texts Volcano's objects hold; a mapping's
#: values no quantity, so a mutation never names a resource the capacity lacks
WRONG_VALUES = wrong_values("Running", "capacity", "true", keys=["a", "resource", "plugins"], amounts=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_wrong_type_at_any_field_reads_or_is_one_line(data):
    """One field of one object of a valid example replaced by a value of another type: the import
    gives a case the case loader reads, or one ImportFailed line starting with a file's name."""
    system, files, capacity = data.draw(st.sampled_from(EXAMPLES))
    name = data.draw(st.sampled_from(sorted(files)))
    docs = [d for d in yaml.safe_load_all(files[name]) if d is not None]
    k = data.draw(st.integers(0, len(docs) - 1))
    where = places(docs[k])
    if where:
        docs[k] = replaced(docs[k], data.draw(st.sampled_from(where)), data.draw(WRONG_VALUES))
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for each, text in files.items():
            paths.append(str(Path(folder) / each))
            Path(paths[-1]).write_text(yaml.safe_dump_all(docs) if each == name else text)
        assert_imports_or_one_line(paths, system=system, capacity=capacity)
