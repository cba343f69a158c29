"""The Kueue importer (fairalloc/io/importers/kueue.py): detection, every field of ClusterQueues,
Cohorts, LocalQueues, ResourceFlavors and Workloads in v1beta1 and v1beta2 spellings, flavors,
requests and usage from Workloads, Jobs and pods, capacity from Nodes, warnings and one-line errors,
the gallery (cases/imported/kueue, with KEP-1714's Story 3 checked against Kueue's admission loop
simulated), and generated cohort trees whose quotas must come back as written.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.core import registry
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import import_files, kueue, kueue_flavors
from fairalloc.io.importers.common import Document, ImportFailed, Notes, read_documents
from fairalloc.io.quantities import format_kube
from fairalloc.models.kueue import simulate

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported" / "kueue"
B2, B1 = "kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1"


def _docs(*objects, file="kueue.yaml") -> list[Document]:
    return [Document(file, k, o, "yaml") for k, o in enumerate(objects)]


def _convert(*objects, file="kueue.yaml"):
    notes = Notes()
    draft = kueue.convert(_docs(*objects, file=file), notes)
    return draft, notes.warnings


def _quota(name, nominal, flavor="default", **limits):
    entry = {"name": name, "nominalQuota": nominal, **limits}
    return {"coveredResources": [name], "flavors": [{"name": flavor, "resources": [entry]}]}


def cq(name, *groups, version=B2, cohort=None, weight=None, **spec):
    body: dict = {"resourceGroups": list(groups), **spec}
    if cohort is not None:
        body["cohortName" if version == B2 else "cohort"] = cohort
    if weight is not None:
        body["fairSharing"] = {"weight": weight}
    return {"apiVersion": version, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def cohort(name, *groups, parent=None, weight=None, version=B2):
    body: dict = {"resourceGroups": list(groups)} if groups else {}
    if parent is not None:
        body["parentName"] = parent
    if weight is not None:
        body["fairSharing"] = {"weight": weight}
    return {"apiVersion": version, "kind": "Cohort", "metadata": {"name": name}, "spec": body}


def lq(namespace, name, target):
    return {"apiVersion": B2, "kind": "LocalQueue", "metadata": {"namespace": namespace, "name": name},
            "spec": {"clusterQueue": target}}  # fmt: skip


def template(**requests):
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}}


def workload(namespace, name, queue, count, status=None, **requests):
    data = {
        "apiVersion": B2,
        "kind": "Workload",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"queueName": queue, "podSets": [{"name": "main", "count": count, "template": template(**requests)}]},
    }
    if status is not None:
        data["status"] = status
    return data


# -- detection ----------------------------------------------------------------------------------
def test_detect_counts_kueue_objects_and_labelled_pods_only():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {kueue.QUEUE_LABEL: "q"}}}
    plain = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    volcano = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}}
    config = {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration"}
    assert kueue.detect(_docs(cq("a"), cohort("c"), lq("ns", "q", "a"), pod, plain, volcano, config)) == 5
    assert kueue.detect(_docs(plain, volcano)) == 0


# -- quotas, cohorts, weights -------------------------------------------------------------------
def test_v1beta2_cluster_queues_and_cohorts_map_onto_the_models_fields():
    draft, warnings = _convert(
        cohort("root", _quota("cpu", "10")),
        cohort("org", _quota("cpu", 0, lendingLimit=0), parent="root", weight="0.75"),
        cq("a", _quota("cpu", "500m", borrowingLimit="1500m", lendingLimit=0), cohort="org", weight="3"),
        cq("b", {"coveredResources": ["cpu", "memory"], "flavors": [{"name": "default", "resources": [
            {"name": "cpu", "nominalQuota": 2}, {"name": "memory", "nominalQuota": "36Gi"}]}]}, cohort="org"),
    )  # fmt: skip
    assert warnings == []
    assert draft.system == "kueue" and draft.policy == "kueue"
    assert draft.groups["root"] == {"guarantee": {"cpu": Decimal(10)}}
    assert draft.groups["org"] == {
        "parent": "root", "weight": Decimal("0.75"), "guarantee": {"cpu": 0}, "lending_limit": {"cpu": 0}
    }  # fmt: skip
    assert draft.users["a"] == {
        "group": "org", "weight": Decimal(3), "guarantee": {"cpu": Decimal("0.5")},
        "borrowing_limit": {"cpu": Decimal("1.5")}, "lending_limit": {"cpu": Decimal(0)},
    }  # fmt: skip
    assert draft.users["b"]["guarantee"] == {"cpu": 2, "memory": 36 * 2**30}
    assert draft.units == {"cpu": "cores", "memory": "bytes"}
    # Kueue never sees the capacity: the nominal quotas of the whole forest
    assert draft.capacity == {"cpu": Decimal("12.5"), "memory": 36 * 2**30}
    assert draft.capacity_from == "configuration"
    assert any("sum of the nominal quotas" in s for s in draft.description)


def test_v1beta1_spells_the_cohort_cohort_and_a_mixed_spelling_is_a_warning():
    draft, warnings = _convert(cq("a", _quota("cpu", 1), version=B1, cohort="team"))
    assert draft.users["a"]["group"] == "team" and draft.groups == {"team": {}}  # an implicit cohort
    assert warnings == []
    wrong = cq("b", _quota("cpu", 1), version=B1)
    wrong["spec"]["cohortName"] = "team"
    draft, warnings = _convert(wrong, file="queues.yaml")
    assert draft.users["b"]["group"] == "team"
    assert len(warnings) == 1
    assert warnings[0].startswith("queues.yaml: ClusterQueue/b: spec.cohortName: is not a v1beta1 field")


def test_an_older_api_version_is_a_warning_read_only_when_its_fields_are_v1beta1s():
    old_cohort = {"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "Cohort", "metadata": {"name": "child"},
                  "spec": {"parent": "root"}}  # fmt: skip
    old_cq = {"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "ClusterQueue", "metadata": {"name": "x"},
              "spec": {"resourceGroups": [], "queueingPolicy": "Fair"}}  # fmt: skip
    draft, warnings = _convert(old_cohort, old_cq, cq("a", _quota("cpu", 1), cohort="child"), file="old.yaml")
    assert draft.groups["child"] == {"parent": "root"}
    assert "x" not in draft.users
    read = [w for w in warnings if "Cohort/child" in w]
    skipped = [w for w in warnings if "ClusterQueue/x" in w]
    assert read and read[0].startswith("old.yaml: Cohort/child: apiVersion: kueue.x-k8s.io/v1alpha1")
    assert skipped and skipped[0].startswith(
        "old.yaml (document 2): ClusterQueue/x: apiVersion: kueue.x-k8s.io/v1alpha1"
    )
    assert "not mapped" in skipped[0] and "queueingPolicy" in skipped[0]


def test_a_cluster_queue_and_a_cohort_of_one_name_stay_apart():
    draft, warnings = _convert(cohort("team"), cq("team", _quota("cpu", 1), cohort="team"))
    assert draft.users["team"]["group"] == "team (cohort)" and "team (cohort)" in draft.groups
    assert any("Cohort/team: metadata.name" in w for w in warnings)


# -- flavors ------------------------------------------------------------------------------------
def test_one_flavor_keeps_the_name_several_flavors_split_the_resource():
    two = {"coveredResources": ["nvidia.com/gpu"], "flavors": [
        {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]},
        {"name": "t4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 16, "borrowingLimit": 4}]},
    ]}  # fmt: skip
    admitted = {"admission": {"clusterQueue": "a", "podSetAssignments": [
        {"name": "main", "flavors": {"nvidia.com/gpu": "t4"}, "resourceUsage": {"nvidia.com/gpu": 6}}]}}  # fmt: skip
    draft, warnings = _convert(
        cq("a", two, _quota("cpu", 4)), lq("ns", "q", "a"),
        workload("ns", "w1", "q", 2, **{"nvidia.com/gpu": 1}),  # pending: the first flavor, a100
        workload("ns", "w2", "q", 3, status=admitted, **{"nvidia.com/gpu": 2}),  # admitted on t4
    )  # fmt: skip
    user = draft.users["a"]
    assert user["guarantee"] == {"nvidia.com/gpu@a100": 8, "nvidia.com/gpu@t4": 16, "cpu": 4}
    assert user["borrowing_limit"] == {"nvidia.com/gpu@t4": 4}
    assert user["request"] == {"nvidia.com/gpu@a100": 2, "nvidia.com/gpu@t4": 6}
    assert user["usage"] == {"nvidia.com/gpu@t4": 6}
    assert draft.units["nvidia.com/gpu@a100"] == "count"
    assert len(warnings) == 2 and "nvidia.com/gpu@a100, nvidia.com/gpu@t4" in warnings[0]
    assert warnings[0].startswith("quotas: nvidia.com/gpu: flavors: 2 flavors (a100, t4)")
    assert warnings[1].startswith("flavors: a100, t4: ResourceFlavor: not in the files")


def test_nodes_give_the_capacity_per_flavor_by_the_flavors_node_labels():
    def node(name, pool, gpus):
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"pool": pool}},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": gpus}}}  # fmt: skip

    def flavor(name, pool):
        return {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": name},
                "spec": {"nodeLabels": {"pool": pool}}}  # fmt: skip

    two = {"coveredResources": ["nvidia.com/gpu"], "flavors": [
        {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]},
        {"name": "t4", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]}]}  # fmt: skip
    draft, _ = _convert(
        flavor("a100", "big"), flavor("t4", "small"), cq("a", two),
        node("n1", "big", 8), node("n2", "small", 4), node("n3", "small", 4),
    )  # fmt: skip
    assert draft.capacity_from == "nodes"
    assert draft.capacity["nvidia.com/gpu@a100"] == 8 and draft.capacity["nvidia.com/gpu@t4"] == 8
    assert "nvidia.com/gpu" not in draft.capacity
    assert draft.capacity["cpu"] == 24 and draft.capacity["memory"] == 96 * 2**30


# -- requests and usage -------------------------------------------------------------------------
def test_workloads_count_admitted_in_usage_and_request_pending_in_request_finished_nowhere():
    quota = {"coveredResources": ["cpu", "memory", "pods"], "flavors": [{"name": "default", "resources": [
        {"name": "cpu", "nominalQuota": 10}, {"name": "memory", "nominalQuota": "64Gi"},
        {"name": "pods", "nominalQuota": 20}]}]}  # fmt: skip
    admitted = {"conditions": [{"type": "Admitted", "status": "True"}]}
    finished = {"conditions": [{"type": "Finished", "status": "True"}]}
    reclaim = {"admission": {"clusterQueue": "a", "podSetAssignments": [{"name": "main", "count": 4}]},
               "reclaimablePods": [{"name": "main", "count": 1}]}  # fmt: skip
    draft, warnings = _convert(
        cq("a", quota), lq("ns", "q", "a"),
        workload("ns", "run", "q", 2, status=admitted, cpu="500m", memory="1Gi"),
        workload("ns", "wait", "q", 3, cpu="2", memory="1Gi"),
        workload("ns", "done", "q", 5, status=finished, cpu="2"),
        workload("ns", "partly", "q", 4, status=reclaim, cpu="1"),
    )  # fmt: skip
    assert warnings == []
    user = draft.users["a"]
    # run: 1 cpu, 2Gi, 2 pods; wait: 6 cpu, 3Gi, 3 pods; partly: 3 of 4 pods of 1 cpu
    assert user["usage"] == {"cpu": 4, "memory": 2 * 2**30, "pods": 5}
    assert user["request"] == {"cpu": 10, "memory": 5 * 2**30, "pods": 8}


def test_a_workload_asking_for_a_resource_its_queue_does_not_cover_is_not_counted():
    draft, warnings = _convert(cq("a", _quota("cpu", 4)), lq("ns", "q", "a"),
                               workload("ns", "w", "q", 1, cpu="1", memory="1Gi"), file="w.yaml")  # fmt: skip
    assert "request" not in draft.users["a"]
    assert warnings == [
        "w.yaml (document 3): Workload/ns/w: spec.podSets: requests memory, which ClusterQueue a does not cover "
        "('resource unavailable in ClusterQueue'): Kueue never admits it: not counted"
    ]


def test_a_workload_of_an_unknown_local_queue_is_a_warning():
    _, warnings = _convert(cq("a", _quota("cpu", 4)), workload("ns", "w", "nope", 1, cpu="1"), file="w.yaml")
    assert warnings == ["w.yaml (document 2): Workload/ns/w: spec.queueName: no LocalQueue ns/nope in the files: "
                        "not counted"]  # fmt: skip


def test_labelled_jobs_are_the_workloads_kueue_makes_of_them():
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "j", "namespace": "ns", "labels": {kueue.QUEUE_LABEL: "q"}},
           "spec": {"parallelism": 4, "completions": 3, "suspend": True, "template": template(cpu="2")}}  # fmt: skip
    draft, warnings = _convert(cq("a", _quota("cpu", 4)), lq("ns", "q", "a"), job)
    assert warnings == [] and draft.users["a"]["request"] == {"cpu": 6} and "usage" not in draft.users["a"]


def test_labelled_pods_count_through_their_local_queue():
    def pod(name, phase, queue=None, cpu="1"):
        labels = {kueue.QUEUE_LABEL: queue} if queue else {}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "labels": labels},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
                "status": {"phase": phase}}  # fmt: skip

    draft, warnings = _convert(
        cq("a", _quota("cpu", 4)), lq("ns", "q", "a"),
        pod("p1", "Running", "q"), pod("p2", "Pending", "q", "500m"), pod("p3", "Succeeded", "q"), pod("p4", "Running"),
    )  # fmt: skip
    assert draft.users["a"]["usage"] == {"cpu": 1}
    assert draft.users["a"]["request"] == {"cpu": Decimal("1.5")}
    assert any("without a Kueue queue" in w for w in warnings)  # p4 is not Kueue's


# -- warnings and errors ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("resource", "amount", "says"),
    [
        ("nvidia.com/gpu", "1Gi", "1Gi nvidia.com/gpu: a binary (memory) suffix on a count (1073741824"),
        ("nvidia.com/gpu", "1.5", "1.5 nvidia.com/gpu: a fraction of a count (1.5)"),
        ("cpu", "2Ki", "2Ki cpu: a binary (memory) suffix on cores"),
        ("memory", "0.5", "0.5 memory: a fraction of a byte"),
    ],
)
def test_a_quota_that_makes_no_sense_for_its_resource_is_a_warning(resource, amount, says):
    _, warnings = _convert(cq("gpus", _quota(resource, amount)), file="cq.yaml")
    field = "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"
    assert len(warnings) == 1
    assert warnings[0].startswith(f"cq.yaml: ClusterQueue/gpus: {field}: {says}")


def test_unknown_fields_that_matter_are_warnings_naming_file_object_and_field():
    odd = cq("a", _quota("cpu", 1, maxQuota=3), stopPolicy="Hold", spreadPolicy="x")
    _, warnings = _convert(odd, file="cq.yaml")
    assert "cq.yaml: ClusterQueue/a: spec.resourceGroups[0].flavors[0].resources[0].maxQuota: not a resource quota " \
           "field fairalloc knows: not read" in warnings  # fmt: skip
    assert any(w.startswith("cq.yaml: ClusterQueue/a: spec.stopPolicy: Hold") for w in warnings)
    assert any(w.startswith("cq.yaml: ClusterQueue/a: spec.spreadPolicy: not a ClusterQueue field") for w in warnings)
    # what does not change the entitlement is read silently
    _, above = _convert(cq("c", _quota("cpu", 1, lendingLimit=2)), file="cq.yaml")
    assert above == ["cq.yaml: ClusterQueue/c: spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: 2 is above "
                     "the nominal quota (Kueue's validation refuses it): read as written"]  # fmt: skip
    _, quiet = _convert(cq("b", _quota("cpu", 1), preemption={"reclaimWithinCohort": "Any"}, namespaceSelector={}))
    assert quiet == []


def test_fair_sharing_off_in_kueues_configuration_is_a_warning():
    config = {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration", "fairSharing": {"enable": False}}
    _, warnings = _convert(config, cq("a", _quota("cpu", 1)), file="config.yaml")
    assert warnings[0].startswith("config.yaml: Configuration: fairSharing.enable: fair sharing is off")


@pytest.mark.parametrize(
    ("obj", "says"),
    [
        (cq("a", _quota("cpu", "abc")),
         "k.yaml: ClusterQueue/a: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: 'abc' is not a "
         "Kubernetes quantity"),
        (cq("a", _quota("cpu", 1), weight="heavy"), "k.yaml: ClusterQueue/a: spec.fairSharing.weight: 'heavy'"),
        (cq("a", _quota("cpu", "-1")), "k.yaml: ClusterQueue/a: spec.resourceGroups[0].flavors[0].resources[0]."
         "nominalQuota: '-1' is negative"),
        (cq("a", {"coveredResources": ["cpu"], "flavors": "default"}),
         "k.yaml: ClusterQueue/a: spec.resourceGroups[0].flavors: must be a list"),
        ({"apiVersion": B2, "kind": "ClusterQueue", "metadata": {}}, "k.yaml: ClusterQueue: metadata.name: missing"),
    ],
)  # fmt: skip
def test_malformed_objects_are_one_line_errors(obj, says):
    with pytest.raises(ImportFailed) as caught:
        _convert(obj, file="k.yaml")
    assert str(caught.value).startswith(says) and "\n" not in str(caught.value)


def test_a_cycle_of_cohorts_is_an_error():
    cycle = "k.yaml: Cohort/a: spec.parentName: the cohorts form a cycle (a -> b -> a)"
    with pytest.raises(ImportFailed) as caught:
        _convert(cohort("a", parent="b"), cohort("b", parent="a"), file="k.yaml")
    assert str(caught.value) == cycle


# -- the gallery --------------------------------------------------------------------------------
def _gallery(name: str):
    spec = yaml.safe_load((GALLERY / name / "expect.yaml").read_text())
    files = [str(GALLERY / name / f) for f in spec["files"]]
    assert kueue.detect(read_documents(files)) > 0
    case, warnings = import_files(files, system="kueue", name=name)
    return spec, case, warnings


@pytest.mark.parametrize("name", sorted(p.parent.name for p in GALLERY.glob("*/expect.yaml")))
def test_gallery_entitlements(name):
    spec, case, warnings = _gallery(name)
    assert len(warnings) == len(spec.get("warnings") or [])
    inst = parse_case(case).instance
    bundles = registry.get("kueue").allocate(inst).bundles
    for queue, amounts in spec["entitlements"]["kueue"].items():
        for r, amount in amounts.items():
            got = bundles[inst.users.index(queue), inst.resources.index(r)]
            assert got == pytest.approx(amount, rel=1e-6, abs=1e-9), (queue, r)


def test_kep_1714_story_3_cohorts_split_150_150_and_kueues_admission_loop_agrees():
    """The story's numbers at the cohort level (c1 = 1a + 1b + 1c, c2 = 2a), and the same split by an
    independent computation: Kueue's admission loop, small pieces of backlog to the tournament's winner."""
    _, case, _ = _gallery("kep-1714-story-3")
    inst = parse_case(case).instance
    bundles = registry.get("kueue").allocate(inst).bundles[:, 0]
    got = dict(zip(inst.users, bundles, strict=True))
    assert got["1a"] + got["1b"] + got["1c"] == pytest.approx(150, rel=1e-6)
    assert got["2a"] == pytest.approx(150, rel=1e-6)
    admitted = dict(zip(inst.users, simulate(inst, pieces=180)[:, 0], strict=True))
    for queue, amount in {"1a": 30, "1b": 30, "1c": 90, "2a": 150}.items():
        assert admitted[queue] == pytest.approx(amount, abs=2.0), queue  # one piece of 1 GPU either way


# -- generated cohort trees ---------------------------------------------------------------------
_amounts = st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False, allow_infinity=False)


@st.composite
def _trees(draw):
    """A forest of cohorts and ClusterQueues with random quotas, as Kubernetes quantities."""
    n_cohorts = draw(st.integers(1, 4))
    cohorts = [f"c{k}" for k in range(n_cohorts)]
    parents = {c: (draw(st.sampled_from([None, *cohorts[:k]])) if k else None) for k, c in enumerate(cohorts)}
    queues = [f"q{k}" for k in range(draw(st.integers(1, 5)))]
    groups = {q: draw(st.sampled_from([None, *cohorts])) for q in queues}
    numbers = {}
    for node in [*cohorts, *queues]:
        numbers[node] = {}
        for r in ("cpu", "memory", "example.com/gpu"):
            if draw(st.booleans()):
                nominal = draw(_amounts)
                if r != "cpu":
                    nominal = nominal.to_integral_value()
                whole = _amounts.map(lambda d: d.to_integral_value())
                limits = {k: draw(st.none() | whole) for k in ("borrowing", "lending")}
                lending = None if limits["lending"] is None else min(limits["lending"], nominal)
                numbers[node][r] = (nominal, limits["borrowing"], lending)
    # weight 0 (Kueue's infinite share value) is refused by the importer: test_import_edges.py
    weights = {
        node: draw(st.none() | st.decimals(min_value=Decimal("0.001"), max_value=100, places=3))
        for node in [*cohorts, *queues]
    }
    return parents, groups, numbers, weights


def _group_of(numbers):
    if not numbers:
        return []
    resources = []
    for r, (nominal, borrowing, lending) in numbers.items():
        entry = {"name": r, "nominalQuota": format_kube(nominal, binary=r == "memory")}
        if borrowing is not None:
            entry["borrowingLimit"] = format_kube(borrowing)
        if lending is not None:
            entry["lendingLimit"] = format_kube(lending)
        resources.append(entry)
    return [{"coveredResources": list(numbers), "flavors": [{"name": "default", "resources": resources}]}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_trees())
def test_generated_trees_come_back_with_their_numbers(tree):
    parents, groups, numbers, weights = tree
    objects = []
    for c, p in parents.items():
        w = None if weights[c] is None else format_kube(weights[c])
        objects.append(cohort(c, *_group_of(numbers[c]), parent=p, weight=w))
    for q, g in groups.items():
        w = None if weights[q] is None else format_kube(weights[q])
        objects.append(cq(q, *_group_of(numbers[q]), cohort=g, weight=w))
    draft, warnings = _convert(*objects)
    assert warnings == []
    for node, table in [*((c, draft.groups) for c in parents), *((q, draft.users) for q in groups)]:
        spec = table[node]
        assert spec.get("parent" if node in parents else "group") == (parents.get(node) or groups.get(node))
        assert spec.get("weight") == weights[node]
        for r, (nominal, borrowing, lending) in numbers[node].items():
            assert spec["guarantee"][r] == nominal
            assert spec.get("borrowing_limit", {}).get(r) == borrowing
            assert spec.get("lending_limit", {}).get(r) == lending
        assert set(spec.get("guarantee", {})) == set(numbers[node])
    totals = {}
    for table in numbers.values():
        for r, (nominal, _, _) in table.items():
            totals[r] = totals.get(r, Decimal(0)) + nominal
    assert draft.capacity == {r: v for r, v in totals.items() if v > 0 or any(r in t for t in numbers.values())}
    assert np.isfinite([float(v) for v in draft.capacity.values()]).all()


# -- flavor assignment: flavorassigner_test.go's TestAssignFlavors, ported ----------------------
# kubernetes-sigs/kueue ff69552e79ad21652c36caa97038382e55625cf7, pkg/scheduler/flavorassigner/
# flavorassigner_test.go: each test names its row; the quotas, usage and request are the row's (cpu in
# cores), and the flavor (and mode) are what the row wants.
D = Decimal


def _assigner_tree(cq_quotas, secondary=None, usage=None, secondary_usage=None):
    """ClusterQueue "cq" (and "secondary") in "test-cohort" when ``secondary`` is given, else alone;
    quotas ``{(flavor, resource): (nominal, borrowing, lending)}``; usage as admitted workloads'."""
    parent = {"cq": "test-cohort" if secondary is not None else None}
    quotas = {"cq": cq_quotas}
    if secondary is not None:
        parent |= {"test-cohort": None, "secondary": "test-cohort"}
        quotas["secondary"] = secondary
    tree = kueue_flavors.Tree(parent, quotas)
    for node, used in (("cq", usage), ("secondary", secondary_usage)):
        for fr, amount in (used or {}).items():
            tree.add_usage(node, fr, D(amount))
    return tree


def _q(nominal, borrowing=None, lending=None):
    return (D(nominal), None if borrowing is None else D(borrowing), None if lending is None else D(lending))


_ONE_TWO = {("one", "pods"): _q(10), ("one", "cpu"): _q(10), ("two", "pods"): _q(10), ("two", "cpu"): _q(10)}
_BORROW_ONE = {("one", "pods"): _q(10), ("one", "cpu"): _q(10, borrowing=1), ("two", "pods"): _q(10)}
_NINE_CPUS = {"cpu": D(9), "pods": D(1)}


@pytest.mark.parametrize(
    "row, quotas, secondary, fungibility, flavor, mode",
    [
        ("preempt before try next flavor", _ONE_TWO, None,
         kueue_flavors.Fungibility("MayStopSearch", "MayStopSearch"), "one", (kueue_flavors.PREEMPT, 0)),
        ("preempt try next flavor", _ONE_TWO, None, kueue_flavors.Fungibility(), "two", (kueue_flavors.FIT, 0)),
        ("borrow try next flavor, found the first flavor", {**_BORROW_ONE, ("two", "cpu"): _q(1)},
         {("one", "cpu"): _q(1)}, kueue_flavors.Fungibility("TryNextFlavor", "TryNextFlavor"), "one",
         (kueue_flavors.FIT, 1)),
        ("borrow try next flavor, found the second flavor", {**_BORROW_ONE, ("two", "cpu"): _q(10)},
         {("one", "cpu"): _q(1)}, kueue_flavors.Fungibility("TryNextFlavor", "TryNextFlavor"), "two",
         (kueue_flavors.FIT, 0)),
        ("borrow before try next flavor", {**_BORROW_ONE, ("two", "cpu"): _q(10)}, {("one", "cpu"): _q(1)},
         kueue_flavors.Fungibility(), "one", (kueue_flavors.FIT, 1)),
    ],
)  # fmt: skip
def test_flavor_fungibility_rows_of_test_assign_flavors(row, quotas, secondary, fungibility, flavor, mode):
    """Usage 2 CPUs of flavor one; a pod set of one pod asking 9 CPUs.  Within one's 10 CPUs with
    nothing borrowed it would fit; here 2 + 9 > 10: preemption within the ClusterQueue (its nominal
    quota holds 9), or borrowing 1 from the secondary ClusterQueue's flavor one."""
    tree = _assigner_tree(quotas, secondary, usage={("one", "cpu"): 2})
    got = tree.assign("cq", ["one", "two"], _NINE_CPUS, {}, fungibility)
    assert got == (flavor, mode), row


def test_not_enough_space_to_borrow_and_multiple_specs_fits_borrowing():
    """ "not enough space to borrow": 1 CPU of its own, the secondary lends none of its 10 (lending
    limit 0) and uses 9: 2 CPUs never fit (maximum capacity 1).  "multiple specs, fits borrowing":
    nominal 2 CPUs (borrowing limit 98) and 2Gi beside a secondary with 198 of each; a driver of 4
    CPUs and 1Gi and a worker of 6 CPUs and 4Gi both fit borrowing (level 1), the worker counted on
    top of the driver (``assignmentUsage``)."""
    tree = _assigner_tree({("one", "cpu"): _q(1)}, {("one", "cpu"): _q(10, lending=0)},
                          secondary_usage={("one", "cpu"): 9})  # fmt: skip
    assert tree.assign("cq", ["one"], {"cpu": D(2)}, {}, kueue_flavors.Fungibility())[0] is None
    gi = D(2**30)
    tree = _assigner_tree(
        {("default", "cpu"): _q(2, borrowing=98), ("default", "memory"): _q(2 * gi)},
        {("default", "cpu"): _q(198), ("default", "memory"): _q(198 * gi)},
    )
    driver = tree.assign("cq", ["default"], {"cpu": D(4), "memory": gi}, {}, kueue_flavors.Fungibility())
    assumed = {("default", "cpu"): D(4), ("default", "memory"): gi}
    worker = tree.assign("cq", ["default"], {"cpu": D(6), "memory": 4 * gi}, assumed, kueue_flavors.Fungibility())
    assert driver == worker == ("default", (kueue_flavors.FIT, 1))


def _flavor(name, labels=None, taints=None, **spec):
    body = {**({"nodeLabels": labels} if labels else {}), **({"nodeTaints": taints} if taints else {}), **spec}
    return {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": body}


def _cpu_flavors(*named):
    """One resource group covering cpu, a flavor per ``(name, nominal)``."""
    return {"coveredResources": ["cpu"], "flavors": [
        {"name": f, "resources": [{"name": "cpu", "nominalQuota": n}]} for f, n in named]}  # fmt: skip


def test_the_importer_skips_a_tainted_flavor_and_one_the_node_selector_excludes():
    """ "multiple flavors, fits while skipping tainted flavor" (3 CPUs, flavor tainted instance=spot:
    NoSchedule first: two) and "multiple flavors, fits a node selector" (1 CPU, nodeSelector
    type=two and a key no flavor has, and node affinity on a key no flavor has, both ignored: two)."""
    taint = [{"key": "instance", "value": "spot", "effect": "NoSchedule"}]
    wl = workload("ns", "w", "q", 1, cpu="3")
    draft, warnings = _convert(_flavor("tainted", taints=taint), _flavor("two", {"type": "two"}),
                               cq("a", _cpu_flavors(("tainted", 4), ("two", 4))), lq("ns", "q", "a"), wl)  # fmt: skip
    assert draft.users["a"]["request"] == {"cpu@two": 3} and len(warnings) == 1  # the flavors warning
    selective = workload("ns", "w", "q", 1, cpu="1")
    pod = selective["spec"]["podSets"][0]["template"]["spec"]
    pod["nodeSelector"] = {"type": "two", "ignored1": "foo"}
    term = {"matchExpressions": [{"key": "ignored2", "operator": "In", "values": ["bar"]}]}
    required = {"nodeSelectorTerms": [term]}
    pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    one_two = (_flavor("one", {"type": "one"}), _flavor("two", {"type": "two"}),
               cq("a", _cpu_flavors(("one", 4), ("two", 4))), lq("ns", "q", "a"))  # fmt: skip
    draft, warnings = _convert(*one_two, selective)
    assert draft.users["a"]["request"] == {"cpu@two": 1} and len(warnings) == 1
    term["matchExpressions"][0]["key"] = "type"  # now the affinity names a flavor's label: not matched, a warning
    _, warnings = _convert(*one_two, selective)
    assert any("required node affinity is not matched" in w for w in warnings)


def test_a_flavors_toleration_lets_tainted_pods_in_and_no_usable_flavor_is_never_admitted():
    taint = [{"key": "instance", "value": "spot", "effect": "NoSchedule"}]
    tolerated = _flavor("spot", taints=taint, tolerations=[{"key": "instance", "operator": "Equal", "value": "spot",
                                                           "effect": "NoSchedule"}])  # fmt: skip
    draft, _ = _convert(tolerated, cq("a", _cpu_flavors(("spot", 4))), lq("ns", "q", "a"),
                        workload("ns", "w", "q", 1, cpu="1"))  # fmt: skip
    assert draft.users["a"]["request"] == {"cpu": 1}
    draft, warnings = _convert(_flavor("spot", taints=taint), cq("a", _cpu_flavors(("spot", 4))), lq("ns", "q", "a"),
                               workload("ns", "w", "q", 1, cpu="1"), file="k.yaml")  # fmt: skip
    assert "request" not in draft.users["a"]
    assert warnings == ["k.yaml (document 4): Workload/ns/w: spec.podSets: no flavor of ClusterQueue a (spot) "
                        "admits its pods (the flavors' taints and node labels): Kueue never admits it, not "
                        "counted"]  # fmt: skip


def test_pending_workloads_spill_over_to_the_next_flavor_in_file_order():
    """Reservation 4 CPUs, on-demand 8, spot 16 (the order of Kueue's concurrent-admission example);
    five pending jobs of 3 CPUs: the first on reservation (3 of 4; 3 more do not fit there), the
    next two on on-demand (6 of 8), the last two on spot."""
    group = _cpu_flavors(("reservation", 4), ("on-demand", 8), ("spot", 16))
    wls = [workload("ns", f"w{k}", "q", 1, cpu="3") for k in range(5)]
    draft, _ = _convert(cq("a", group), lq("ns", "q", "a"), *wls)
    assert draft.users["a"]["request"] == {"cpu@reservation": 3, "cpu@on-demand": 6, "cpu@spot": 6}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=3), st.lists(st.integers(1, 9), min_size=1, max_size=8))
def test_a_lone_cluster_queue_gives_the_first_flavor_with_enough_unused_quota(nominals, requests):
    """cluster_queue.md: "Kueue assigns the first flavor ... that has enough unused nominalQuota";
    a request no flavor has room for now waits for the first flavor whose quota could hold it (a
    request larger than every flavor is charged to the first).  Computed here by hand, in order."""
    names = [f"f{k}" for k in range(len(nominals))]
    draft, _ = _convert(cq("a", _cpu_flavors(*zip(names, nominals))), lq("ns", "q", "a"),
                        *(workload("ns", f"w{k}", "q", 1, cpu=str(r)) for k, r in enumerate(requests)))  # fmt: skip
    free = dict(zip(names, nominals))
    expected: dict[str, int] = {}
    for r in requests:
        fits = [f for f in names if free[f] >= r]
        flavor = fits[0] if fits else next((f for f in names if dict(zip(names, nominals))[f] >= r), names[0])
        if fits:
            free[flavor] -= r
        key = f"cpu@{flavor}" if len(names) > 1 else "cpu"
        expected[key] = expected.get(key, 0) + r
    assert draft.users["a"]["request"] == expected


# -- serving workloads ----------------------------------------------------------------------------
def _serving(kind, name, spec, status=None, group="apps/v1"):
    data = {"apiVersion": group, "kind": kind, "spec": spec,
            "metadata": {"name": name, "namespace": "ns", "labels": {kueue.QUEUE_LABEL: "q"}}}  # fmt: skip
    if status is not None:
        data["status"] = status
    return data


def test_deployments_statefulsets_and_leader_worker_sets_are_the_workloads_kueue_makes_of_them():
    """A Deployment of 3 replicas of 1 CPU, 1 ready: 3 one-pod workloads, 1 admitted.  A StatefulSet
    of 2 replicas of 2 CPUs with a ready replica: one admitted group of 4 CPUs.  A LeaderWorkerSet of
    2 groups of size 3, leader 1 CPU and workers 2 CPUs, none ready: 2 x (1 + 2 x 2) = 10 CPUs
    pending.  Request 3 + 4 + 10 = 17, usage 1 + 4 = 5; pods 3 + 2 + 6 = 11 of which 1 + 2 admitted."""
    quota = {"coveredResources": ["cpu", "pods"], "flavors": [{"name": "default", "resources": [
        {"name": "cpu", "nominalQuota": 100}, {"name": "pods", "nominalQuota": 100}]}]}  # fmt: skip
    lws = {"replicas": 2, "leaderWorkerTemplate": {"size": 3, "leaderTemplate": template(cpu="1"),
                                                   "workerTemplate": template(cpu="2")}}  # fmt: skip
    draft, warnings = _convert(
        cq("a", quota), lq("ns", "q", "a"),
        _serving("Deployment", "web", {"replicas": 3, "template": template(cpu="1")}, {"readyReplicas": 1}),
        _serving("StatefulSet", "db", {"replicas": 2, "template": template(cpu="2")}, {"readyReplicas": 1}),
        _serving("LeaderWorkerSet", "llm", lws, group="leaderworkerset.x-k8s.io/v1"),
    )  # fmt: skip
    assert warnings == []
    assert draft.users["a"]["request"] == {"cpu": 17, "pods": 11}
    assert draft.users["a"]["usage"] == {"cpu": 5, "pods": 3}
    assert kueue.detect(_docs(_serving("Deployment", "web", {}))) == 1


def test_a_leader_worker_set_without_a_leader_template_is_one_pod_set_of_size_pods():
    lws = {"leaderWorkerTemplate": {"size": 4, "workerTemplate": template(cpu="1")}}
    draft, _ = _convert(cq("a", _quota("cpu", 10)), lq("ns", "q", "a"),
                        _serving("LeaderWorkerSet", "w", lws, group="leaderworkerset.x-k8s.io/v1"))  # fmt: skip
    assert draft.users["a"]["request"] == {"cpu": 4}  # replicas default to 1


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"replicas": -1}, "spec.replicas: must be a whole number >= 0 (got -1)"),
        ({"replicas": "two"}, "spec.replicas: must be a whole number >= 0 (got 'two')"),
        ({"template": [1]}, "spec.template: must be a mapping (got [1])"),
    ],
)
def test_a_bad_serving_object_is_one_line(spec, message):
    with pytest.raises(ImportFailed) as failed:
        _convert(cq("a", _quota("cpu", 4)), _serving("Deployment", "d", spec), file="k.yaml")
    assert str(failed.value) == f"k.yaml (document 2): Deployment/ns/d: {message}"


def test_resource_flavor_fields_not_modelled_are_warnings():
    flavor = _flavor("tas", {"pool": "a"}, topologyName="default", nodeAffinity={})
    _, warnings = _convert(flavor, file="rf.yaml")
    assert warnings == [
        "rf.yaml: ResourceFlavor/tas: spec.topologyName: default: Topology Aware Scheduling (where in the topology "
        "pods go) is not modelled: the flavor's quota is read as one pool",
        "rf.yaml: ResourceFlavor/tas: spec.nodeAffinity: not a ResourceFlavor field fairalloc knows: not read",
    ]
    with pytest.raises(ImportFailed, match=r"rf.yaml: ResourceFlavor/x: spec.nodeTaints: must be a list"):
        _convert(_flavor("x", nodeTaints={"key": "a"}), file="rf.yaml")


def test_assign_multiple_resources_and_flavors_of_test_schedule():
    """kubernetes-sigs/kueue ff69552e, pkg/scheduler/scheduler_test.go, TestSchedule, "assign multiple
    resources and flavors": ClusterQueue eng-beta (on-demand cpu 50, borrowing limit 10; spot cpu 0,
    borrowing limit 100; model-a gpu 20) beside eng-alpha (on-demand 50, spot 100, borrowing limit
    0) in cohort eng.  Pod set one, 10 pods of 6 CPUs and 1 GPU, gets on-demand by borrowing 10
    (60 <= 50 + 10); pod set two, 40 pods of 1 CPU, cannot add 40 on-demand CPUs to those 60 and gets
    spot, all of it borrowed from eng-alpha: the admission the row wants, on-demand 60, spot 40,
    model-a 10."""

    def flavor(name, resource, nominal, borrowing):
        return {"name": name, "resources": [{"name": resource, "nominalQuota": nominal, "borrowingLimit": borrowing}]}

    def cpu_group(*flavors):
        return {"coveredResources": ["cpu"], "flavors": list(flavors)}

    beta = cq("eng-beta", cpu_group(flavor("on-demand", "cpu", 50, 10), flavor("spot", "cpu", 0, 100)),
              {"coveredResources": ["example.com/gpu"], "flavors": [flavor("model-a", "example.com/gpu", 20, 0)]},
              cohort="eng")  # fmt: skip
    alpha = cq("eng-alpha", cpu_group(flavor("on-demand", "cpu", 50, 50), flavor("spot", "cpu", 100, 0)), cohort="eng")
    new = workload("eng-beta", "new", "main", 10, cpu="6", **{"example.com/gpu": "1"})
    new["spec"]["podSets"].append({"name": "two", "count": 40, "template": template(cpu="1")})
    draft, _ = _convert(alpha, beta, lq("eng-beta", "main", "eng-beta"), new)
    assert draft.users["eng-beta"]["request"] == {"cpu@on-demand": 60, "example.com/gpu": 10, "cpu@spot": 40}


def test_labelled_pods_are_single_pod_workloads_given_flavors_like_any_other():
    """Flavors a (2 CPUs) then b (4).  A Running pod of 1 CPU is admitted (on a, the first flavor:
    a pod names none).  Three Pending pods of 1.5 CPUs: the first finds 1 CPU unused on a (a
    preemption mode: the next flavor is tried) and fits b, so does the second (3 <= 4); the third
    fits neither now, both by preemption alike, and stays on the first, a."""

    def pod(name, phase, cpu):
        return {"apiVersion": "v1", "kind": "Pod", "status": {"phase": phase},
                "metadata": {"name": name, "namespace": "ns", "labels": {kueue.QUEUE_LABEL: "q"}},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}  # fmt: skip

    pods = [pod("run", "Running", "1"), *(pod(f"wait{k}", "Pending", "1500m") for k in range(3))]
    draft, _ = _convert(cq("a", _cpu_flavors(("a", 2), ("b", 4))), lq("ns", "q", "a"), *pods)
    assert draft.users["a"]["usage"] == {"cpu@a": 1}
    assert draft.users["a"]["request"] == {"cpu@a": D("2.5"), "cpu@b": 3}


@pytest.mark.parametrize(
    "row, other_usage, flavor",
    [("Select the first flavor which fits", {}, "two"), ("Select the top flavor", {("two", "cpu"): 4}, "three")],
)
def test_hierarchical_rows_of_the_flavor_assigner(row, other_usage, flavor):
    """flavorassigner_test.go, TestHierarchical: cohorts three (root, 4 CPUs of flavor three) > two (4 of
    flavor two) > one (4 of flavor one); the test ClusterQueue in one and another in two hold no quota of
    their own.  The test queue uses 4 CPUs of flavor one, so 4 more never fit there (no preemption while
    borrowing: fair sharing is off in the test); flavor two fits by borrowing from cohort two (level 2)
    unless the other queue already uses it, then flavor three from the root (level 3)."""
    cpu = {(f, "cpu"): _q(0) for f in ("one", "two", "three")}
    tree = kueue_flavors.Tree(
        {"three": None, "two": "three", "one": "two", "test": "one", "other": "two"},
        {"three": {("three", "cpu"): _q(4)}, "two": {("two", "cpu"): _q(4)}, "one": {("one", "cpu"): _q(4)},
         "test": cpu, "other": cpu},
    )  # fmt: skip
    tree.add_usage("test", ("one", "cpu"), D(4))
    for fr, amount in other_usage.items():
        tree.add_usage("other", fr, D(amount))
    got = tree.assign("test", ["one", "two", "three"], {"cpu": D(4)}, {}, kueue_flavors.Fungibility())
    assert got == (flavor, (kueue_flavors.FIT, 2 if flavor == "two" else 3)), row


def test_prefer_flavor_with_most_local_capacity_of_test_schedule_for_fair_sharing():
    """scheduler_fs_test.go, TestScheduleForFairSharing, "prefer flavor with most local capacity":
    root-cohort (gpu on-demand 2, spot 0) > child-cohort (on-demand 5, spot 7) > queue1 (on-demand 3,
    spot 3; whenCanBorrow and whenCanPreempt TryNextFlavor), with 8 on-demand GPUs admitted (a1,
    past the child cohort's 8) and 3 spot (a2).  a3, 1 GPU, fits on-demand only by borrowing from the
    root (level 2) and spot from the child cohort (level 1): spot, as the row wants."""

    def gpus(on_demand, spot):
        return {"coveredResources": ["gpu"], "flavors": [
            {"name": "on-demand", "resources": [{"name": "gpu", "nominalQuota": on_demand}]},
            {"name": "spot", "resources": [{"name": "gpu", "nominalQuota": spot}]}]}  # fmt: skip

    def admitted(flavor, amount):
        return {"admission": {"clusterQueue": "queue1", "podSetAssignments": [
            {"name": "main", "flavors": {"gpu": flavor}, "resourceUsage": {"gpu": amount}}]}}  # fmt: skip

    queue1 = cq("queue1", gpus(3, 3), cohort="child-cohort",
                flavorFungibility={"whenCanPreempt": "TryNextFlavor", "whenCanBorrow": "TryNextFlavor"})  # fmt: skip
    draft, _ = _convert(
        cohort("root-cohort", gpus(2, 0)), cohort("child-cohort", gpus(5, 7), parent="root-cohort"), queue1,
        lq("default", "queue1", "queue1"),
        workload("default", "a1", "queue1", 1, status=admitted("on-demand", 8), gpu="8"),
        workload("default", "a2", "queue1", 1, status=admitted("spot", 3), gpu="3"),
        workload("default", "a3", "queue1", 1, gpu="1"),
    )  # fmt: skip
    assert draft.users["queue1"]["usage"] == {"gpu@on-demand": 8, "gpu@spot": 3}
    assert draft.users["queue1"]["request"] == {"gpu@on-demand": 8, "gpu@spot": 4}


def test_flavor_fungibility_spellings_and_an_unknown_one():
    """The deprecated ``Borrow`` and ``Preempt`` read as ``MayStopSearch`` (cluster_queue.md,
    FlavorFungibility); an unknown value is a warning and the default is read."""
    old = cq("a", _cpu_flavors(("x", 1)), flavorFungibility={"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"})
    bad = cq("b", _cpu_flavors(("x", 1)), flavorFungibility={"whenCanBorrow": "Sometimes"})
    notes = Notes()
    seen = kueue._Import(notes)
    for doc in _docs(old, bad, file="f.yaml"):
        kueue._read(seen, doc)
    assert seen.queues["a"].fungibility == kueue_flavors.Fungibility("MayStopSearch", "MayStopSearch")
    assert seen.queues["b"].fungibility == kueue_flavors.Fungibility()
    assert notes.warnings == ["f.yaml (document 2): ClusterQueue/b: spec.flavorFungibility.whenCanBorrow: 'Sometimes' "
                              "is not a flavorFungibility setting fairalloc knows: the default is read"]  # fmt: skip


@pytest.mark.parametrize(
    "row, two, flavor, borrow",
    [("lend try next flavor, found the second flavor", _q(10, lending=0), "two", 0),
     ("lend try next flavor, found the first flavor", _q(1, lending=0), "one", 1)],
)  # fmt: skip
def test_lending_limit_rows_of_test_assign_flavors(row, two, flavor, borrow):
    """Flavor one: nominal 10 CPUs, lending limit 1 (9 stay local), 2 used; the secondary queue adds
    1 CPU of one to the cohort.  9 CPUs fit one only by borrowing (7 local + 2 from the cohort, level
    1); whenCanBorrow TryNextFlavor tries two, which holds 9 within its own quota unless it has 1."""
    quotas = {("one", "pods"): _q(10), ("one", "cpu"): _q(10, lending=1), ("two", "pods"): _q(10), ("two", "cpu"): two}
    tree = _assigner_tree(quotas, {("one", "cpu"): _q(1)}, usage={("one", "cpu"): 2})
    got = tree.assign("cq", ["one", "two"], _NINE_CPUS, {}, kueue_flavors.Fungibility("TryNextFlavor", "TryNextFlavor"))
    assert got == (flavor, (kueue_flavors.FIT, borrow)), row


@pytest.mark.parametrize(
    "reclaim, flavor, mode", [("Any", "one", kueue_flavors.PREEMPT), ("Never", "two", kueue_flavors.FIT)]
)
def test_borrowing_while_preemption_is_needed_with_fair_sharing(reclaim, flavor, mode):
    """ "when borrowing while preemption is needed for flavor one, fair sharing enabled,
    reclaimWithinCohort=Any" / "=Never": no quota of one, 12 of two; the secondary queue holds 12 of
    one and uses 10.  12 CPUs on one need borrowing and preemption: allowed when the queue may
    preempt while borrowing (reclaimWithinCohort not Never, fair sharing on), and whenCanPreempt
    MayStopSearch keeps one; with Never, one does not fit and two does.  The ClusterQueue's
    preemption field is read by the importer."""
    spec = cq("cq", _cpu_flavors(("one", 0), ("two", 12)), preemption={"reclaimWithinCohort": reclaim},
              flavorFungibility={"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"})  # fmt: skip
    seen = kueue._Import(Notes())
    kueue._read(seen, _docs(spec)[0])
    tree = _assigner_tree({("one", "cpu"): _q(0), ("two", "cpu"): _q(12)}, {("one", "cpu"): _q(12)},
                          secondary_usage={("one", "cpu"): 10})  # fmt: skip
    got = tree.assign("cq", ["one", "two"], {"cpu": D(12)}, {}, seen.queues["cq"].fungibility)
    assert (got[0], got[1].preemption) == (flavor, mode)
