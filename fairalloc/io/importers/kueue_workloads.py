"""The Workloads Kueue makes of the jobs and serving objects it queues (its job integrations).

Source read: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7 (Apache-2.0),
``pkg/controller/jobs``.  An object labelled ``kueue.x-k8s.io/queue-name`` (a LocalQueue of its
namespace) becomes the Workloads below, each read by the Kueue importer as a Workload object
(``count`` pods of a pod template per pod set):

* a batch **Job** (``job/job_controller.go``, ``PodSets``): one Workload, one pod set of
  ``parallelism`` pods (fewer when ``completions`` is smaller); admitted when not suspended
  (``spec.suspend: false``; Kueue unsuspends the Jobs it admits);
* a **Deployment** (``deployment/deployment_webhook.go``, ``Default``: the queue label is copied
  to the pod template, so each pod is a plain pod of the pod integration,
  ``pod/pod_controller.go``): ``replicas`` Workloads of one pod each; the first
  ``status.readyReplicas`` are admitted (Kueue gates a pod until it is admitted);
* a **StatefulSet** (``statefulset/statefulset_webhook.go``, ``Default``: its pods are one pod
  group of ``replicas`` pods): one Workload of ``replicas`` pods, admitted when
  ``status.readyReplicas`` is above 0 (the webhook's ``ValidateUpdate`` reads a StatefulSet
  without ready replicas as suspended);
* a **LeaderWorkerSet** (``leaderworkerset/leaderworkerset_reconciler.go``, ``podSets``: each of
  its ``replicas`` groups is one Workload of a ``leader`` pod set of 1 pod and a ``worker`` pod
  set of ``size - 1`` pods, or one ``main`` pod set of ``size`` pods without a leader
  template): the first ``status.readyReplicas`` groups are admitted.

``replicas`` and ``size`` default to 1, as in the Kubernetes and LeaderWorkerSet APIs.

A plain **Pod** labelled with a LocalQueue (``pod/pod_controller.go``, ``PodSets``: a single pod is
one Workload of one pod; the pods of a pod group are read one by one) is admitted when
``Running``; a ``Pending`` pod is read as waiting (Kueue gates the pods it has not admitted,
``kueue.x-k8s.io/admission``), and a ``Succeeded`` or ``Failed`` one as finished (not counted).

Each object is read through its schema (:mod:`.kueue_shapes`) first, so a wrong shape is named at
the object's own field (``spec.template``), not at the Workload made of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fairalloc.core.errors import excerpt
from fairalloc.io.importers import kueue_shapes as shapes
from fairalloc.io.importers.common import Document, ImportFailed, Notes
from fairalloc.io.importers.kueue_shapes import PodTemplate
from fairalloc.io.importers.shapes import read

GROUP = "kueue.x-k8s.io"
#: the label an object names its LocalQueue with (``constants.QueueLabel``)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
LWS_GROUP = "leaderworkerset.x-k8s.io"

PodSets = list[dict[str, Any]]


def labelled(doc: Document) -> bool:
    labels = doc.metadata.get("labels")
    return isinstance(labels, dict) and bool(labels.get(QUEUE_LABEL))


def count(value: Any, where: str, least: int = 0) -> int:
    """A pod or replica count: a whole number >= ``least``, else one line."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ImportFailed(f"{where}: must be a whole number >= {least} (got {excerpt(value)})")
    return value


def _where(doc: Document) -> str:
    return f"{doc.where}: {doc.label}"


def _template(template: PodTemplate) -> dict:
    """A pod template as a pod set's ``template``, as the schema read it."""
    return template.model_dump()


def _ready(doc: Document, status: shapes.ReplicatedStatus) -> int:
    return count(status.readyReplicas, f"{_where(doc)}: status.readyReplicas")


def _job(doc: Document, notes: Notes) -> list[tuple[str, PodSets, bool]]:
    job = read(shapes.Job, doc.data, _where(doc))
    spec = job.spec
    parallelism = count(spec.parallelism, f"{_where(doc)}: spec.parallelism")
    completions = spec.completions
    pods = min(parallelism, completions) if isinstance(completions, int) else parallelism
    if "suspend" not in spec.model_fields_set:
        notes.warn(doc, doc.label, "spec.suspend", "not given: read as admitted (Kueue unsuspends admitted Jobs)")
    return [("", [{"name": "main", "count": pods, "template": _template(spec.template)}], spec.suspend is False)]


def _replicas(doc: Document, replicas: Any) -> int:
    return count(replicas, f"{_where(doc)}: spec.replicas")


def _deployment(doc: Document, notes: Notes) -> list[tuple[str, PodSets, bool]]:
    deployment = read(shapes.Replicated, doc.data, _where(doc))
    template = _template(deployment.spec.template)
    ready = _ready(doc, deployment.status)
    return [(f"-{k}", [{"name": "main", "count": 1, "template": template}], k < ready)
            for k in range(_replicas(doc, deployment.spec.replicas))]  # fmt: skip


def _statefulset(doc: Document, notes: Notes) -> list[tuple[str, PodSets, bool]]:
    sts = read(shapes.Replicated, doc.data, _where(doc))
    group = [{"name": "main", "count": _replicas(doc, sts.spec.replicas), "template": _template(sts.spec.template)}]
    return [("", group, _ready(doc, sts.status) > 0)]


def _leader_worker_set(doc: Document, notes: Notes) -> list[tuple[str, PodSets, bool]]:
    lws = read(shapes.LeaderWorkerSet, doc.data, _where(doc))
    lwt = lws.spec.leaderWorkerTemplate
    size = count(lwt.size, f"{_where(doc)}: spec.leaderWorkerTemplate.size", least=1)
    worker = _template(lwt.workerTemplate)
    group: PodSets = [{"name": "main", "count": size, "template": worker}]
    if lwt.leaderTemplate is not None:
        group = [{"name": "leader", "count": 1, "template": _template(lwt.leaderTemplate)},
                 {"name": "worker", "count": size - 1, "template": worker}]  # fmt: skip
    ready = _ready(doc, lws.status)
    return [(f"-{k}", group, k < ready) for k in range(_replicas(doc, lws.spec.replicas))]


def _pod(doc: Document, notes: Notes) -> list[tuple[str, PodSets, bool]]:
    pod = read(shapes.Pod, doc.data, _where(doc))
    phase = pod.status.phase or "Pending"
    if phase in ("Succeeded", "Failed"):
        return []
    if phase not in ("Running", "Pending"):
        notes.warn(doc, doc.label, "status.phase", f"{phase!r} is not Running or Pending: counted as waiting")
    return [("", [{"name": "main", "count": 1, "template": {"spec": pod.spec.model_dump()}}], phase == "Running")]


#: (API group, kind) -> the Workloads of one object: (name suffix, pod sets, admitted)
INTEGRATIONS: dict[tuple[str, str], Callable[[Document, Notes], list[tuple[str, PodSets, bool]]]] = {
    ("batch", "Job"): _job,
    ("apps", "Deployment"): _deployment,
    ("apps", "StatefulSet"): _statefulset,
    (LWS_GROUP, "LeaderWorkerSet"): _leader_worker_set,
}


def integrated(doc: Document) -> bool:
    """Whether ``doc`` is an object of a job integration labelled with a LocalQueue."""
    return (doc.group, doc.kind or "") in INTEGRATIONS and labelled(doc)


def workloads_of(doc: Document, notes: Notes) -> list[Document]:
    """The Workloads Kueue makes of ``doc`` (module docstring), as Workload documents: a job or
    serving object of :data:`INTEGRATIONS`, or a labelled Pod."""
    name = doc.name or doc.metadata.get("generateName") or (doc.kind or "object").lower()
    made = _pod if (doc.group, doc.kind) == ("", "Pod") else INTEGRATIONS[(doc.group, doc.kind or "")]
    out = []
    for suffix, podsets, admitted in made(doc, notes):
        data = {
            "apiVersion": f"{GROUP}/v1beta2",
            "kind": "Workload",
            "metadata": {**doc.metadata, "name": f"{name}{suffix}"},
            "spec": {"queueName": doc.metadata["labels"][QUEUE_LABEL], "podSets": podsets},
            "status": {"conditions": [{"type": "Admitted", "status": "True"}]} if admitted else {},
        }
        out.append(Document(doc.file, doc.index, data, doc.format))
    return out


__all__ = ["GROUP", "INTEGRATIONS", "QUEUE_LABEL", "count", "integrated", "labelled", "workloads_of"]
