"""The schemas of the Kueue importer (fairalloc/io/importers/kueue_shapes.py): every object it reads
(ClusterQueue, Cohort, LocalQueue, ResourceFlavor, Workload, the manager Configuration and its
ConfigMap, and the Job, Deployment, StatefulSet, LeaderWorkerSet and Pod of Kueue's integrations)
is read through its schema, so a wrong shape is one line naming the file, the object and the field,
and a valid object with any one field of the wrong type imports or fails in that one line."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.cli import main
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import import_files
from fairalloc.io.importers import kueue_shapes as shapes
from fairalloc.io.importers.common import ImportFailed
from fairalloc.io.importers.shapes import read
from fairalloc.testing import assert_imports_or_one_line, places, replaced, wrong_values

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported" / "kueue"
B1, B2 = "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def _template(cpu: str = "1") -> dict:
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def _meta(name: str, namespace: str | None = None, queue: str | None = None) -> dict:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if queue is not None:
        meta["labels"] = {QUEUE_LABEL: queue}
    return meta


#: the ClusterQueue every file begins with (document 1): the objects below feed it
QUEUE = {
    "apiVersion": B2,
    "kind": "ClusterQueue",
    "metadata": {"name": "cq"},
    "spec": {
        "cohortName": "co",
        "fairSharing": {"weight": "2"},
        "preemption": {"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "Never"}},
        "flavorFungibility": {"whenCanBorrow": "MayStopSearch"},
        "resourceGroups": [
            {"coveredResources": ["cpu"],
             "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "8", "borrowingLimit": "2",
                                                            "lendingLimit": "1"}]}]},
        ],
    },
}  # fmt: skip
LOCAL = {"apiVersion": B2, "kind": "LocalQueue", "metadata": _meta("lq", "ns"), "spec": {"clusterQueue": "cq"}}

#: one valid object of each kind, fed by QUEUE (a kind's wrong shapes below mutate a copy of it)
VALID = {
    "ClusterQueue": QUEUE,
    "Cohort": {"apiVersion": B2, "kind": "Cohort", "metadata": {"name": "co"},
               "spec": {"parentName": "root", "fairSharing": {"weight": "1"},
                        "resourceGroups": [{"coveredResources": ["cpu"],
                                            "flavors": [{"name": "default",
                                                         "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}]}},
    "v1alpha1 Cohort": {"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "Cohort", "metadata": {"name": "co"},
                        "spec": {"parent": "root"}},
    "LocalQueue": LOCAL,
    "ResourceFlavor": {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": "default"},
                       "spec": {"nodeLabels": {"pool": "a"},
                                "nodeTaints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}],
                                "tolerations": [{"key": "gpu", "operator": "Exists"}]}},
    "Workload": {"apiVersion": B1, "kind": "Workload", "metadata": _meta("w", "ns"),
                 "spec": {"queueName": "lq", "active": True,
                          "podSets": [{"name": "main", "count": 2, "template": _template()}]},
                 "status": {"conditions": [{"type": "QuotaReserved", "status": "True"}],
                            "admission": {"clusterQueue": "cq",
                                          "podSetAssignments": [{"name": "main", "flavors": {"cpu": "default"},
                                                                 "resourceUsage": {"cpu": "2"}, "count": 2}]},
                            "reclaimablePods": [{"name": "main", "count": 0}]}},
    "Configuration": {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration",
                      "fairSharing": {"enable": True}, "resources": {"transformations": []}},
    "Job": {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta("j", "ns", "lq"),
            "spec": {"parallelism": 2, "completions": 4, "suspend": False, "template": _template()}},
    "Deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("d", "ns", "lq"),
                   "spec": {"replicas": 2, "template": _template()}, "status": {"readyReplicas": 1}},
    "StatefulSet": {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": _meta("s", "ns", "lq"),
                    "spec": {"replicas": 2, "template": _template()}, "status": {"readyReplicas": 2}},
    "LeaderWorkerSet": {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                        "metadata": _meta("l", "ns", "lq"),
                        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": _template(),
                                                                         "leaderTemplate": _template()}}},
    "Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": _meta("p", "ns", "lq"),
            "spec": {**_template()["spec"], "nodeSelector": {"pool": "a"},
                     "tolerations": [{"key": "gpu", "operator": "Exists"}]},
            "status": {"phase": "Running"}},
}  # fmt: skip


def _config_map(config: Any) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("kueue-manager-config", "kueue-system"),
            "data": {"controller_manager_config.yaml": yaml.safe_dump(config)}}  # fmt: skip


def _files(kind: str, obj: Any) -> list[dict]:
    """The documents of a file that shows ``obj`` (of ``kind``) to the Kueue importer: the
    ClusterQueue first, then the objects that feed it."""
    if kind == "ClusterQueue":
        return [obj, LOCAL]
    feeds = [] if kind in ("LocalQueue", "Cohort", "v1alpha1 Cohort") else [LOCAL]
    return [QUEUE, obj, *feeds]


def _where(kind: str) -> str:
    return "" if kind == "ClusterQueue" else " (document 2)"


#: (kind, field path, wrong value, the message after "FILE (document N): ")
WRONG_SHAPES = [
    ("ClusterQueue", ("spec",), [1], "ClusterQueue/cq: spec: must be a mapping (got [1])"),
    ("ClusterQueue", ("spec", "resourceGroups"), {"a": 1},
     "ClusterQueue/cq: spec.resourceGroups: must be a list (got {'a': 1})"),
    ("ClusterQueue", ("spec", "resourceGroups", 0), None,
     "ClusterQueue/cq: spec.resourceGroups[0]: must be a mapping (got None)"),
    ("ClusterQueue", ("spec", "resourceGroups", 0, "flavors", 0, "resources"), "cpu",
     "ClusterQueue/cq: spec.resourceGroups[0].flavors[0].resources: must be a list (got 'cpu')"),
    ("ClusterQueue", ("spec", "resourceGroups", 0, "flavors", 0, "resources", 0), 8,
     "ClusterQueue/cq: spec.resourceGroups[0].flavors[0].resources[0]: must be a mapping (got 8)"),
    ("ClusterQueue", ("spec", "cohortName"), 7, "ClusterQueue/cq: spec.cohortName: must be text (got 7)"),
    ("ClusterQueue", ("spec", "fairSharing"), "2", "ClusterQueue/cq: spec.fairSharing: must be a mapping (got '2')"),
    ("ClusterQueue", ("spec", "preemption", "borrowWithinCohort"), "Never",
     "ClusterQueue/cq: spec.preemption.borrowWithinCohort: must be a mapping (got 'Never')"),
    ("ClusterQueue", ("spec", "flavorFungibility"), ["TryNextFlavor"],
     "ClusterQueue/cq: spec.flavorFungibility: must be a mapping (got ['TryNextFlavor'])"),
    ("ClusterQueue", ("metadata",), "cq", "ClusterQueue: metadata: must be a mapping (got 'cq')"),
    ("Cohort", ("spec", "parentName"), 7, "Cohort/co: spec.parentName: must be text (got 7)"),
    ("Cohort", ("spec", "resourceGroups", 0, "coveredResources"), "cpu",
     "Cohort/co: spec.resourceGroups[0].coveredResources: must be a list (got 'cpu')"),
    ("Cohort", ("spec", "resourceGroups", 0, "coveredResources", 0), 1,
     "Cohort/co: spec.resourceGroups[0].coveredResources[0]: must be text (got 1)"),
    ("Cohort", ("spec", "fairSharing"), [1], "Cohort/co: spec.fairSharing: must be a mapping (got [1])"),
    ("v1alpha1 Cohort", ("spec", "parent"), ["root"], "Cohort/co: spec.parent: must be text (got ['root'])"),
    ("LocalQueue", ("spec", "clusterQueue"), ["cq"], "LocalQueue/ns/lq: spec.clusterQueue: must be text (got ['cq'])"),
    ("LocalQueue", ("metadata", "labels"), [1], "LocalQueue/ns/lq: metadata.labels: must be a mapping (got [1])"),
    ("ResourceFlavor", ("spec", "nodeLabels"), ["pool"],
     "ResourceFlavor/default: spec.nodeLabels: must be a mapping (got ['pool'])"),
    ("ResourceFlavor", ("spec", "nodeTaints"), {"key": "gpu"},
     "ResourceFlavor/default: spec.nodeTaints: must be a list (got {'key': 'gpu'})"),
    ("ResourceFlavor", ("spec", "tolerations", 0), None,
     "ResourceFlavor/default: spec.tolerations[0]: must be a mapping (got None)"),
    ("ResourceFlavor", ("spec", "nodeTaints", 0, "effect"), 1,
     "ResourceFlavor/default: spec.nodeTaints[0].effect: must be text (got 1)"),
    ("Workload", ("spec", "podSets"), {"main": 1}, "Workload/ns/w: spec.podSets: must be a list (got {'main': 1})"),
    ("Workload", ("spec", "podSets", 0), None, "Workload/ns/w: spec.podSets[0]: must be a mapping (got None)"),
    ("Workload", ("spec", "podSets", 0, "template"), "pod",
     "Workload/ns/w: spec.podSets[0].template: must be a mapping (got 'pod')"),
    ("Workload", ("spec", "podSets", 0, "template", "spec", "containers"), {"name": "c"},
     "Workload/ns/w: spec.podSets[0].template.spec.containers: must be a list (got {'name': 'c'})"),
    ("Workload", ("spec", "queueName"), 5, "Workload/ns/w: spec.queueName: must be text (got 5)"),
    ("Workload", ("spec", "active"), "false", "Workload/ns/w: spec.active: must be true or false (got 'false')"),
    ("Workload", ("status", "admission"), ["cq"], "Workload/ns/w: status.admission: must be a mapping (got ['cq'])"),
    ("Workload", ("status", "admission", "podSetAssignments", 0, "flavors"), ["default"],
     "Workload/ns/w: status.admission.podSetAssignments[0].flavors: must be a mapping (got ['default'])"),
    ("Workload", ("status", "conditions"), "Admitted",
     "Workload/ns/w: status.conditions: must be a list (got 'Admitted')"),
    ("Configuration", ("fairSharing",), True, "Configuration: fairSharing: must be a mapping (got True)"),
    ("Configuration", ("fairSharing", "enable"), "yes",
     "Configuration: fairSharing.enable: must be true or false (got 'yes')"),
    ("Configuration", ("resources", "transformations"), {"input": "cpu"},
     "Configuration: resources.transformations: must be a list (got {'input': 'cpu'})"),
    ("Job", ("spec", "template"), [1], "Job/ns/j: spec.template: must be a mapping (got [1])"),
    ("Job", ("spec", "suspend"), "false", "Job/ns/j: spec.suspend: must be true or false (got 'false')"),
    ("Job", ("spec", "template", "spec", "tolerations"), {"key": "gpu"},
     "Job/ns/j: spec.template.spec.tolerations: must be a list (got {'key': 'gpu'})"),
    ("Deployment", ("spec", "template", "spec", "containers", 0, "resources"), [1],
     "Deployment/ns/d: spec.template.spec.containers[0].resources: must be a mapping (got [1])"),
    ("StatefulSet", ("status",), "Ready", "StatefulSet/ns/s: status: must be a mapping (got 'Ready')"),
    ("LeaderWorkerSet", ("spec", "leaderWorkerTemplate"), [1],
     "LeaderWorkerSet/ns/l: spec.leaderWorkerTemplate: must be a mapping (got [1])"),
    ("LeaderWorkerSet", ("spec", "leaderWorkerTemplate", "leaderTemplate"), "leader",
     "LeaderWorkerSet/ns/l: spec.leaderWorkerTemplate.leaderTemplate: must be a mapping (got 'leader')"),
    ("Pod", ("spec", "nodeSelector"), ["pool=a"], "Pod/ns/p: spec.nodeSelector: must be a mapping (got ['pool=a'])"),
    ("Pod", ("spec", "containers", 0, "name"), 3, "Pod/ns/p: spec.containers[0].name: must be text (got 3)"),
]  # fmt: skip


def _run(tmp_path: Path, docs: list) -> tuple[int, str, Path, Path]:
    path = tmp_path / "k.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = tmp_path / "out" / "case.yaml"
    out.parent.mkdir()
    code = main(["import", str(path), "--capacity", "cpu=64", "--out", str(out)])
    return code, "", path, out


@pytest.mark.parametrize(("kind", "path", "value", "message"), WRONG_SHAPES,
                         ids=[f"{k} {'.'.join(map(str, p))}" for k, p, _, _ in WRONG_SHAPES])  # fmt: skip
def test_a_wrong_shape_is_one_line_naming_the_field(capsys, tmp_path, kind, path, value, message):
    code, _, file, out = _run(tmp_path, _files(kind, replaced(VALID[kind], path, value)))
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"fairalloc: {file}{_where(kind)}: {message}\n"
    assert list(out.parent.iterdir()) == []


def test_a_configuration_in_its_config_map_is_read_through_its_schema(capsys, tmp_path):
    """The Configuration a ConfigMap holds is checked as one, named by the ConfigMap's field."""
    code, _, file, out = _run(tmp_path, [QUEUE, _config_map(["fairSharing"])])
    err = capsys.readouterr().err
    where = f"{file} (document 2): ConfigMap/kueue-system/kueue-manager-config: data.controller_manager_config.yaml"
    said = "document 2: the object must be a mapping (got ['fairSharing'])"  # documents numbered as in the file
    assert code == 2 and err == f"fairalloc: {where} (document 2): {said}\n"
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize(
    "shape",
    [shapes.ClusterQueue, shapes.Cohort, shapes.LocalQueue, shapes.ResourceFlavor, shapes.Workload,
     shapes.Configuration, shapes.ConfigMap, shapes.Job, shapes.Replicated, shapes.LeaderWorkerSet, shapes.Pod],
)  # fmt: skip
def test_a_whole_object_that_is_a_list_is_one_line(shape):
    """At the top of a file a list is no Kubernetes object (the importer skips it with a warning);
    an object handed to a schema as a list is refused in one line."""
    with pytest.raises(ImportFailed) as caught:
        read(shape, [{"kind": "x"}], "k.yaml: X/x")
    assert str(caught.value) == "k.yaml: X/x: the object must be a mapping (got [{'kind': 'x'}])"


def test_the_valid_objects_import():
    """The objects the wrong shapes start from import as they are (a wrong shape is what fails)."""
    with tempfile.TemporaryDirectory() as folder:
        for kind, obj in VALID.items():
            path = Path(folder) / f"{kind.replace(' ', '-')}.yaml"
            path.write_text(yaml.safe_dump_all(_files(kind, obj)))
            case, _ = import_files([str(path)], capacity={"cpu": "64"})
            parse_case(case)


# -- any one field of the wrong type ---------------------------------------------------------------
def _gallery() -> list[tuple[dict[str, list], dict[str, str] | None]]:
    """The gallery's examples: (file name -> its documents, --capacity)."""
    out = []
    for folder in sorted(p for p in GALLERY.iterdir() if p.is_dir()):
        spec = yaml.safe_load((folder / "expect.yaml").read_text())
        files = {f: list(yaml.safe_load_all((folder / f).read_text())) for f in spec["files"]}
        capacity = {r: str(v) for r, v in (spec.get("capacity") or {}).items()} or None
        out.append((files, capacity))
    return out


#: every valid example: the gallery's, and one file per kind of :data:`VALID`
EXAMPLES = _gallery() + [({"k.yaml": _files(kind, obj)}, {"cpu": "64"}) for kind, obj in VALID.items()]


#: values of every type, mappings keyed by any text (a resource the capacity lacks is the capacity line)
WRONG_TYPE = wrong_values()


@st.composite
def mutated(draw):
    """A valid example with one field, at a random path of one of its objects, of a random wrong type."""
    files, capacity = draw(st.sampled_from(EXAMPLES))
    name = draw(st.sampled_from(sorted(files)))
    k = draw(st.integers(min_value=0, max_value=len(files[name]) - 1))
    path = draw(st.sampled_from([(), *places(files[name][k])]))  # the whole object too
    docs = list(files[name])
    docs[k] = replaced(docs[k], path, draw(WRONG_TYPE))
    return {**files, name: docs}, capacity


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(example=mutated())
def test_one_field_of_the_wrong_type_imports_or_is_one_line(example):
    """Either the import succeeds and its case passes the case loader, or it is one ImportFailed line
    starting with the file it names; never another exception.  The one exception to the file name:
    the capacity check, made over the whole import (its line starts with ``capacity:``), which a
    renamed resource or a request without a quota can reach."""
    files, capacity = example
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, docs in files.items():
            path = Path(folder) / name
            path.write_text(yaml.safe_dump_all(docs))
            paths.append(str(path))
        assert_imports_or_one_line(paths, lambda said: said.startswith((*paths, "capacity: ")), capacity=capacity)
