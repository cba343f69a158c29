"""Volcano: Queues, PodGroups, Volcano Jobs, pods and nodes, for the ``proportion`` plug-in.

Read as ``models/volcano_proportion.py`` reads a queue case (volcano-sh/volcano,
``pkg/scheduler/plugins/proportion/proportion.go``, ``OnSessionOpen``; the API in
``staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/types.go``, ``QueueSpec``):

* a ``Queue`` (``scheduling.volcano.sh/v1beta1``) is a queue: ``spec.weight`` the weight,
  ``spec.capability`` the ``limit``, ``spec.guarantee.resource`` the ``guarantee``, ``spec.priority``
  the priority.  ``spec.deserved`` is read by the ``capacity`` plug-in, not by ``proportion``, and
  ``spec.parent`` (hierarchical queues) by neither: both are warned about and left out (the
  proportion model is flat).  ``status.allocated`` is the queue's ``usage`` when no pod says more;
* requests come from PodGroups (``spec.minResources`` of a PodGroup in its ``spec.queue``; phase
  Running counts in usage), Volcano Jobs (``batch.volcano.sh/v1alpha1``: ``spec.tasks[].replicas``
  times the task's pod request, in ``spec.queue``) and pods (the queue their PodGroup names, else
  the ``scheduling.volcano.sh/queue-name`` annotation or label, else ``default``).  When pods are
  given they win over the PodGroups and Jobs they belong to (what runs, not what was declared);
* capacity: the Node objects; Volcano queues carry no cluster total (``--capacity`` otherwise);
* the ``volcano-scheduler-configmap`` ConfigMap's ``volcano-scheduler.conf``: a warning when no tier
  enables ``proportion`` (the cluster would not divide by this policy).
"""

from __future__ import annotations

from decimal import Decimal

from fairalloc.io.importers import kubernetes as k8s
from fairalloc.io.importers.common import Document, Draft, ImportFailed, Notes, embedded, listing, mapping, text

SYSTEM = "volcano"
GROUP = "scheduling.volcano.sh"
QUEUE_LABEL = "scheduling.volcano.sh/queue-name"
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
#: the kinds this importer reads (a Deployment's pods are read as pods, not from its template)
_READ = {"Queue", "PodGroup", "Job", "Pod", "Node", "ConfigMap"}
#: a PodGroup or a Job task that names no request (a queue's request is what its jobs ask for)
_NOTHING = "not given: counted as a request of nothing"
_KNOWN_SPEC = {"weight", "capability", "guarantee", "deserved", "reclaimable", "priority", "parent", "affinity", "type"}


def detect(docs: list[Document]) -> int:
    ours = sum(1 for d in docs if d.group in (GROUP, "batch.volcano.sh"))
    ours += sum(1 for d in docs if d.kind == "ConfigMap" and embedded(d, "volcano-scheduler.conf"))
    return ours


def _queue(doc: Document, notes: Notes) -> dict:
    where, label = f"{doc.where}: {doc.label}", doc.label
    spec = mapping(doc.data.get("spec"), f"{where}: spec")
    if doc.api_version != f"{GROUP}/v1beta1":
        notes.warn(doc, label, "apiVersion", f"{doc.api_version!r} is not {GROUP}/v1beta1: read as v1beta1")
    out: dict = {}
    weight = spec.get("weight", 1)
    if not isinstance(weight, int) or isinstance(weight, bool) or weight <= 0:
        notes.warn(doc, label, "spec.weight", f"{weight!r} is not a positive integer: weight 1 used")
    elif weight != 1:
        out["weight"] = weight
    if spec.get("capability"):
        out["limit"] = k8s.quantities(spec["capability"], f"{where}: spec.capability")
    guarantee = spec.get("guarantee")
    if isinstance(guarantee, dict) and guarantee:
        if "resource" in guarantee:
            out["guarantee"] = k8s.quantities(guarantee["resource"], f"{where}: spec.guarantee.resource")
        else:
            notes.warn(
                doc, label, "spec.guarantee", "written without its 'resource:' level (Volcano reads nothing): not read"
            )
    if spec.get("priority") is not None:
        out["priority"] = spec["priority"]
    for key in ("deserved", "parent"):
        if spec.get(key) not in (None, "", "root"):
            why = "read by the capacity plug-in, not proportion" if key == "deserved" else "proportion is flat"
            notes.warn(doc, label, f"spec.{key}", f"{why}: not read")
    for key in spec:
        if key not in _KNOWN_SPEC:
            notes.warn(doc, label, f"spec.{key}", "not a Volcano Queue field fairalloc knows: not read")
    for key in ("volcano.sh/hierarchy", "volcano.sh/hierarchy-weights"):
        if key in mapping(doc.metadata.get("annotations"), f"{where}: metadata.annotations"):
            notes.warn(doc, label, f"metadata.annotations.{key}", "read by the drf plug-in's hierarchy, not proportion")
            break
    allocated = mapping(doc.data.get("status"), f"{where}: status").get("allocated")
    if allocated:
        out["usage"] = k8s.quantities(allocated, f"{where}: status.allocated")
    return out


def _declared(docs: list[Document], notes: Notes, covered: set[str]) -> dict[str, dict[str, dict]]:
    """Requests and usage that PodGroups and Jobs declare (those whose pods are not given)."""
    out: dict[str, dict[str, dict]] = {}
    for doc in docs:
        at = f"{doc.where}: {doc.label}"
        spec = mapping(doc.data.get("spec"), f"{at}: spec") if isinstance(doc.data, dict) else {}
        key = f"{doc.namespace or 'default'}/{doc.name}"
        if doc.kind == "PodGroup" and doc.group == GROUP and key not in covered:
            need = k8s.quantities(spec.get("minResources"), f"{doc.where}: {doc.label}: spec.minResources")
            if not any(need.values()):
                notes.warn(doc, doc.label, "spec.minResources", _NOTHING)
            running = mapping(doc.data.get("status"), f"{at}: status").get("phase") == "Running"
        elif doc.kind == "Job" and doc.group == "batch.volcano.sh" and key not in covered:
            need = {}
            for k, task in enumerate(listing(spec.get("tasks"), f"{at}: spec.tasks")):
                task = mapping(task, f"{at}: spec.tasks[{k}]")
                pod = k8s.pod_request(
                    mapping(task.get("template"), f"{at}: spec.tasks[{k}].template"), f"{at}: spec.tasks[{k}]", notes
                )
                replicas = _replicas(task.get("replicas", 1), f"{at}: spec.tasks[{k}].replicas")
                if not pod and replicas:
                    notes.warn(doc, doc.label, f"spec.tasks[{k}].template", f"no container requests: {_NOTHING}")
                need = k8s.add_amounts(need, {r: v * replicas for r, v in pod.items()})
            state = mapping(mapping(doc.data.get("status"), f"{at}: status").get("state"), f"{at}: status.state")
            running = state.get("phase") == "Running"
        else:
            continue
        entry = out.setdefault(_spec_queue(doc), {"request": {}, "usage": {}})
        entry["request"] = k8s.add_amounts(entry["request"], need)
        if running:
            entry["usage"] = k8s.add_amounts(entry["usage"], need)
    return out


def _spec_queue(doc: Document) -> str:
    """The queue a PodGroup or a Job names (``default`` when none)."""
    at = f"{doc.where}: {doc.label}"
    return text(mapping(doc.data.get("spec"), f"{at}: spec").get("queue"), f"{at}: spec.queue") or "default"


def _replicas(value, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ImportFailed(f"{where}: must be a whole number >= 0 (got {value!r})")
    return Decimal(value)


def _check_configmap(docs: list[Document], notes: Notes, draft: Draft) -> None:
    for doc in (d for d in docs if d.kind == "ConfigMap"):
        for conf in embedded(doc, "volcano-scheduler.conf"):
            tiers = conf.data.get("tiers") if isinstance(conf.data, dict) else None
            plugins = [p.get("name") for t in tiers or [] for p in (t.get("plugins") or [])]
            if "proportion" in plugins:
                draft.description.append("The scheduler's configuration enables the proportion plug-in.")
            else:
                notes.warn(doc, doc.label, "data.volcano-scheduler.conf", "no tier enables 'proportion'")


def convert(docs: list[Document], notes: Notes) -> Draft:
    draft = Draft(SYSTEM, "volcano-proportion", list(dict.fromkeys(d.file for d in docs)))
    for doc in docs:
        if doc.kind not in _READ:
            notes.warn(doc, doc.label, "kind", f"{doc.kind or 'an object without kind'} is not read by the importer")
    queues = [d for d in docs if d.kind == "Queue" and d.group == GROUP]
    for doc in queues:
        draft.users[doc.name or "default"] = _queue(doc, notes)
    group_queue = {
        f"{d.namespace or 'default'}/{d.name}": _spec_queue(d)
        for d in docs
        if d.kind == "PodGroup" and d.group == GROUP
    }

    def queue_of(pod: dict) -> str | None:
        meta = mapping(pod.get("metadata"), "pod: metadata")
        annotations = mapping(meta.get("annotations"), "pod: metadata.annotations")
        labels = mapping(meta.get("labels"), "pod: metadata.labels")
        group = annotations.get(GROUP_ANNOTATION)
        if group and f"{meta.get('namespace') or 'default'}/{group}" in group_queue:
            return group_queue[f"{meta.get('namespace') or 'default'}/{group}"]
        return annotations.get(QUEUE_LABEL) or labels.get(QUEUE_LABEL) or "default"

    pods = [d for d in docs if d.kind == "Pod"]
    covered = {
        f"{d.namespace or 'default'}/{(d.metadata.get('annotations') or {}).get(GROUP_ANNOTATION)}" for d in pods
    }
    amounts = k8s.pods_by_queue(docs, notes, queue_of)
    for queue, more in _declared(docs, notes, covered).items():
        entry = amounts.setdefault(queue, {"request": {}, "usage": {}})
        entry["request"] = k8s.add_amounts(entry["request"], more["request"])
        entry["usage"] = k8s.add_amounts(entry["usage"], more["usage"])
    for queue, entry in amounts.items():
        if queue not in draft.users:
            notes.warn(docs[0].file, f"Queue/{queue}", "", "named by pods or jobs but not given: weight 1 assumed")
        spec = draft.users.setdefault(queue, {})
        spec["request"] = entry["request"]
        if entry["usage"]:
            spec["usage"] = entry["usage"]
    _check_configmap(docs, notes, draft)
    draft.capacity = k8s.node_capacity(docs, notes)
    draft.capacity_from = "nodes" if draft.capacity else ""
    draft.name_units(k8s.unit_of)
    draft.description.insert(0, f"{len(queues)} Volcano Queues, {len(pods)} pods.")
    return draft
