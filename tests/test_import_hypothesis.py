"""``fairalloc import`` on random well-formed objects of every kind the importers read: Volcano
(Queue, PodGroup, Job), Kueue (ClusterQueue, Cohort, LocalQueue, Workload, batch Job), YARN
(fair-scheduler.xml, the REST scheduler answer), YuniKorn (queues.yaml, the REST queue tree), Mesos
(state, roles, quota) and Kubernetes (Node, Pod, ResourceQuota), through the command line with
``--out``.  Whatever hypothesis writes: exit 0 or 2 and never a traceback; on 2 one line and no
file; on 0 a file the case loader reads; and every unknown or unsupported field it slips in is
named by a warning (issue 34: settings were dropped without one)."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.cli import main
from fairalloc.io.cases import parse_case

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True)
#: field names no importer knows (every one starts with "zz", which no scheduler's API uses)
unknown = st.from_regex(r"zz[a-z]{1,5}", fullmatch=True)
cpu = st.one_of(st.integers(0, 64).map(str), st.integers(1, 64000).map(lambda m: f"{m}m"))
memory = st.one_of(st.integers(0, 512).map(lambda g: f"{g}Gi"), st.integers(1, 4096).map(lambda m: f"{m}Mi"))
gpu = st.integers(0, 8).map(str)
K8S = {"cpu": cpu, "memory": memory, "nvidia.com/gpu": gpu}
#: the capacity given when the files give none (every resource the generators name)
CAPACITY = "cpu=512,memory=4Ti,nvidia.com/gpu=64"


@st.composite
def k8s_resources(draw, min_size: int = 0) -> dict:
    keys = draw(st.lists(st.sampled_from(sorted(K8S)), min_size=min_size, max_size=3, unique=True))
    return {k: draw(K8S[k]) for k in keys}


def _pod_spec(draw) -> dict:
    containers = [
        {"name": f"c{k}", "image": "busybox", "resources": {"requests": draw(k8s_resources())}}
        for k in range(draw(st.integers(1, 2)))
    ]
    return {"containers": containers}


def import_checked(files: dict[str, str], expected: list[str], *extra: str) -> None:
    """Import ``files`` (name -> text) with ``--out`` and check the contract of the module doc;
    ``expected``: the field names some warning must name."""
    with tempfile.TemporaryDirectory() as folder:  # a fresh path per example: warnings are never deduplicated
        paths = []
        for name, text in files.items():
            (Path(folder) / name).write_text(text)
            paths.append(str(Path(folder) / name))
        target = Path(folder) / "out" / "case.yaml"
        target.parent.mkdir()
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["import", *paths, *extra, "--out", str(target)])
        out, err = stdout.getvalue(), stderr.getvalue()
        assert code in (0, 2), (code, err)
        assert "Traceback" not in out + err
        lines = [line for line in err.splitlines() if not line.startswith("fairalloc: warning: ")]
        if code == 2:
            assert len(lines) == 1 and lines[0].startswith("fairalloc: "), err
            assert list(target.parent.iterdir()) == []
            return
        assert lines == [], err
        parse_case(yaml.safe_load(target.read_text()))
        warned = [line for line in err.splitlines() if line.startswith("fairalloc: warning: ")]
        for field in expected:
            assert any(field in w for w in warned), (field, warned)


def _yaml(docs: list[dict]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


def _nodes(draw) -> list[dict]:
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{k}"},
         "status": {"allocatable": draw(k8s_resources(min_size=1)), "capacity": {"pods": "110"}}}
        for k in range(draw(st.integers(0, 2)))
    ]  # fmt: skip


def _slip_unknown(draw, fields: dict, expected: list[str], prefix: str) -> None:
    """Now and then a field no importer knows in ``fields``; a warning must name it (``prefix`` + key)."""
    if draw(st.booleans()):
        key = draw(unknown)
        fields[key] = "x"
        expected.append(prefix + key)


def _capacity(draw) -> tuple[str, ...]:
    return ("--capacity", CAPACITY) if draw(st.booleans()) else ()


# -- Volcano ------------------------------------------------------------------------------------


@st.composite
def volcano(draw):
    queues = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    docs, expected = [], []
    for q in queues:
        spec: dict = {"weight": draw(st.integers(1, 10))}
        if draw(st.booleans()):
            spec["capability"] = draw(k8s_resources())
        if draw(st.booleans()):
            spec["guarantee"] = {"resource": draw(k8s_resources())}
        _slip_unknown(draw, spec, expected, "spec.")
        docs.append(
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": q}, "spec": spec}
        )
    for k in range(draw(st.integers(0, 3))):
        spec = {"queue": draw(st.sampled_from(queues)), "minMember": draw(st.integers(1, 4))}
        if draw(st.booleans()):
            spec["minResources"] = draw(k8s_resources())
        docs.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                     "metadata": {"name": f"pg{k}", "namespace": "ns"}, "spec": spec,
                     "status": {"phase": draw(st.sampled_from(["Pending", "Running", "Inqueue"]))}})  # fmt: skip
    for k in range(draw(st.integers(0, 2))):
        tasks = [{"name": f"t{t}", "replicas": draw(st.integers(0, 4)), "template": {"spec": _pod_spec(draw)}}
                 for t in range(draw(st.integers(1, 2)))]  # fmt: skip
        docs.append({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                     "metadata": {"name": f"job{k}", "namespace": "ns"},
                     "spec": {"queue": draw(st.sampled_from(queues)), "tasks": tasks}})  # fmt: skip
    return {"volcano.yaml": _yaml(docs + _nodes(draw))}, expected, _capacity(draw)


@SETTINGS
@given(example=volcano())
def test_volcano_objects(example):
    import_checked(*example[:2], *example[2])


# -- Kueue --------------------------------------------------------------------------------------


@st.composite
def kueue(draw):
    cohorts = draw(st.lists(names.map(lambda n: f"co-{n}"), min_size=1, max_size=2, unique=True))
    queues = draw(st.lists(names.map(lambda n: f"cq-{n}"), min_size=1, max_size=3, unique=True))
    docs, expected = [], []
    for c in cohorts[1:]:
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Cohort", "metadata": {"name": c},
                     "spec": {"parentName": cohorts[0]}})  # fmt: skip
    for q in queues:
        covered = draw(st.lists(st.sampled_from(sorted(K8S)), min_size=1, max_size=3, unique=True))
        quotas = [{"name": r, "nominalQuota": draw(K8S[r])} for r in covered]
        spec: dict = {"cohort": draw(st.sampled_from(cohorts)),
                      "resourceGroups": [{"coveredResources": covered,
                                          "flavors": [{"name": "default", "resources": quotas}]}]}  # fmt: skip
        if draw(st.booleans()):
            spec["fairSharing"] = {"weight": str(draw(st.integers(1, 5)))}
        _slip_unknown(draw, spec, expected, "spec.")
        docs.append(
            {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": q}, "spec": spec}
        )
        lq = {"clusterQueue": q}
        docs.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                     "metadata": {"name": f"lq-{q}", "namespace": "ns"}, "spec": lq})  # fmt: skip
    for k in range(draw(st.integers(0, 3))):
        lq = f"lq-{draw(st.sampled_from(queues))}"
        template = {"spec": _pod_spec(draw)}
        if draw(st.booleans()):
            docs.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
                         "metadata": {"name": f"wl{k}", "namespace": "ns"},
                         "spec": {"queueName": lq, "podSets": [{"name": "main", "count": draw(st.integers(1, 4)),
                                                                "template": template}]}})  # fmt: skip
        else:
            docs.append({"apiVersion": "batch/v1", "kind": "Job",
                         "metadata": {"name": f"job{k}", "namespace": "ns",
                                      "labels": {"kueue.x-k8s.io/queue-name": lq}},
                         "spec": {"parallelism": draw(st.integers(0, 3)), "suspend": draw(st.booleans()),
                                  "template": template}})  # fmt: skip
    return {"kueue.yaml": _yaml(docs + _nodes(draw))}, expected, ()


@SETTINGS
@given(example=kueue())
def test_kueue_objects(example):
    import_checked(*example[:2], *example[2])


# -- YARN ---------------------------------------------------------------------------------------


def _yarn_resources(draw) -> str:
    return f"{draw(st.integers(0, 10**6))} mb, {draw(st.integers(0, 512))} vcores"


@st.composite
def yarn_xml(draw):
    expected: list[str] = []

    def queue(depth: int) -> str:
        name = draw(names)
        tag = draw(st.sampled_from(["queue", "queue", "pool"]))
        body = f"<weight>{draw(st.integers(1, 9))}.0</weight>"
        if draw(st.booleans()):
            body += f"<minResources>{_yarn_resources(draw)}</minResources>"
        if draw(st.booleans()):
            body += f"<maxResources>{_yarn_resources(draw)}</maxResources>"
        if draw(st.booleans()):
            key = draw(unknown)
            body += f"<{key}>1</{key}>"
            expected.append(key)
        if tag == "pool":
            expected.append("<pool>")
        if depth < 2 and draw(st.booleans()):
            body += "".join(queue(depth + 1) for _ in range(draw(st.integers(1, 2))))
        return f'<{tag} name="{name}">{body}</{tag}>'

    policy = draw(st.sampled_from(["", "drf", "fair"]))
    top = f"<defaultQueueSchedulingPolicy>{policy}</defaultQueueSchedulingPolicy>" if policy else ""
    if policy != "drf":
        expected.append("defaultQueueSchedulingPolicy")
    queues = "".join(queue(0) for _ in range(draw(st.integers(1, 3))))
    text = f'<?xml version="1.0"?><allocations>{top}{queues}</allocations>'
    return {"fair-scheduler.xml": text}, expected, ("--capacity", "memory-mb=1000000,vcores=1024")


@st.composite
def yarn_rest(draw):
    expected: list[str] = []

    def queue(path: str, depth: int) -> dict:
        amounts = st.fixed_dictionaries({"memory": st.integers(0, 8192), "vCores": st.integers(0, 8)})
        policy = draw(st.sampled_from(["drf", "fair", "fifo"]))
        q: dict = {"queueName": path, "schedulingPolicy": policy, "minResources": draw(amounts),
                   "maxResources": draw(amounts), "usedResources": draw(amounts)}  # fmt: skip
        if policy != "drf":
            expected.append(f"queue {path}: schedulingPolicy")
        if depth < 2 and (depth == 0 or draw(st.booleans())):
            kids = draw(st.lists(names, min_size=1, max_size=3, unique=True))
            q["childQueues"] = {"queue": [queue(f"{path}.{k}", depth + 1) for k in kids]}
        return q

    root = queue("root", 0)
    root["clusterResources"] = {"memory": 16384, "vCores": 16}
    answer = {"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": root}}}
    return {"scheduler.json": json.dumps(answer)}, expected, ()


@SETTINGS
@given(example=st.one_of(yarn_xml(), yarn_rest()))
def test_yarn_files(example):
    import_checked(*example[:2], *example[2])


# -- YuniKorn -----------------------------------------------------------------------------------

YUNIKORN_QUANTITY = {"vcore": st.integers(0, 64).map(str), "memory": st.integers(0, 512).map(lambda g: f"{g}Gi")}


#: queue properties of yunikorn-core's configvalidator.go: the preemption ones are warned about
PROPERTIES = ["preemption.policy", "preemption.delay", "quota.preemption.delay", "priority.offset"]


@st.composite
def yunikorn_config(draw):
    expected: list[str] = []

    def queue(name: str, depth: int) -> dict:
        q: dict = {"name": name}
        for key in draw(st.lists(st.sampled_from(["guaranteed", "max"]), unique=True)):
            q.setdefault("resources", {})[key] = {r: draw(s) for r, s in YUNIKORN_QUANTITY.items()}
        properties = draw(st.lists(st.sampled_from(PROPERTIES), unique=True))
        if properties:
            q["properties"] = {p: "1" for p in properties}
            expected.extend(f"properties.{p}" for p in properties if p != "priority.offset")
        _slip_unknown(draw, q, expected, "")
        if depth < 2 and draw(st.booleans()):
            q["queues"] = children(depth + 1)
        return q

    def children(depth: int) -> list[dict]:  # siblings differ: YuniKorn refuses duplicate names
        return [queue(n, depth) for n in draw(st.lists(names, min_size=1, max_size=2, unique=True))]

    config = {"partitions": [{"name": "default", "queues": [{"name": "root", "queues": children(1)}]}]}
    return {"queues.yaml": yaml.safe_dump(config)}, expected, ("--capacity", "vcore=512000,memory=4Ti")


@st.composite
def yunikorn_rest(draw):
    expected: list[str] = []

    def queue(path: str, depth: int) -> dict:
        amounts = st.fixed_dictionaries({"vcore": st.integers(0, 64000), "memory": st.integers(0, 2**34)})
        q: dict = {"queuename": path, "maxResource": draw(amounts), "guaranteedResource": draw(amounts),
                   "allocatedResource": draw(amounts), "pendingResource": draw(amounts), "isLeaf": True}  # fmt: skip
        properties = draw(st.lists(st.sampled_from([*PROPERTIES, "application.sort.policy"]), unique=True))
        q["properties"] = {p: "1" for p in properties}
        expected.extend(f"queue {path}: properties.{p}" for p in properties if p.startswith(("preemption", "quota")))
        if depth < 2 and draw(st.booleans()):
            kids = draw(st.lists(names, min_size=1, max_size=3, unique=True))
            q["isLeaf"] = False
            q["children"] = [queue(f"{path}.{k}", depth + 1) for k in kids]
        return q

    root = queue("root", 0)
    root["isLeaf"] = False
    if "children" not in root:
        root["children"] = [queue("root.default", 1)]
    return {"queues.json": json.dumps(root)}, expected, ()


@SETTINGS
@given(example=st.one_of(yunikorn_config(), yunikorn_rest()))
def test_yunikorn_files(example):
    import_checked(*example[:2], *example[2])


# -- Mesos --------------------------------------------------------------------------------------


@st.composite
def mesos(draw):
    roles = draw(st.lists(st.one_of(names, st.tuples(names, names).map("/".join)), min_size=1, max_size=4, unique=True))
    scalars = st.fixed_dictionaries({"cpus": st.integers(0, 16), "mem": st.integers(0, 65536)})
    expected: list[str] = []
    frameworks = []
    for k, role in enumerate(draw(st.lists(st.sampled_from([*roles, "*"]), max_size=4))):
        fw: dict = {"name": f"fw{k}", "used_resources": draw(scalars)}
        if draw(st.booleans()) or role != "*":
            fw["role"] = role
        else:
            expected.append(f"framework fw{k}: frameworks[{k}]: names no role")
        if draw(st.booleans()):
            fw["used_resources"]["ports"] = "[31000-32000]"
            expected.append(f"frameworks[{k}].used_resources.ports")
        frameworks.append(fw)
    state = {"slaves": [{"hostname": "a1", "resources": {"cpus": 64, "mem": 262144, "disk": 1000}}],
             "frameworks": frameworks}  # fmt: skip
    files = {"state.json": json.dumps(state)}
    if draw(st.booleans()):
        files["roles.json"] = json.dumps(
            {"roles": [{"name": r, "weight": draw(st.integers(1, 4)), "allocated": draw(scalars)} for r in roles]}
        )
    if draw(st.booleans()):
        files["quota.json"] = json.dumps(
            {"infos": [{"role": r, "guarantee": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}}]}
                       for r in roles if "/" not in r]}
        )  # fmt: skip
    return files, expected, ()


@SETTINGS
@given(example=mesos())
def test_mesos_files(example):
    import_checked(*example[:2], *example[2])


# -- Kubernetes ---------------------------------------------------------------------------------


#: ResourceQuota keys that are not a namespace's request limit: each is warned about
UNSUPPORTED_QUOTA = ["limits.cpu", "pods", "count/jobs.batch", "gold.storageclass.storage.k8s.io/requests.storage"]


@st.composite
def kubernetes(draw):
    namespaces = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    docs, expected = [], []
    for ns in namespaces:
        hard = {f"requests.{r}": v for r, v in draw(k8s_resources()).items()}
        for key in draw(st.lists(st.sampled_from(UNSUPPORTED_QUOTA), unique=True)):
            hard[key] = "10"
            expected.append(f"spec.hard.{key}")
        docs.append({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": ns},
                     "spec": {"hard": hard}})  # fmt: skip
    for k in range(draw(st.integers(0, 4))):
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"p{k}", "namespace": draw(st.sampled_from(namespaces))},
                     "spec": _pod_spec(draw),
                     "status": {"phase": draw(st.sampled_from(["Running", "Pending", "Succeeded"]))}})  # fmt: skip
    return {"cluster.yaml": _yaml(docs + _nodes(draw))}, expected, _capacity(draw)


@SETTINGS
@given(example=kubernetes())
def test_kubernetes_objects(example):
    import_checked(*example[:2], *example[2])
