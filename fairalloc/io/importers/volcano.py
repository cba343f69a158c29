"""Volcano: Queues, PodGroups, Volcano Jobs, pods, nodes and the scheduler's configuration.

Read as ``models/volcano_proportion.py`` or ``models/volcano_capacity.py`` reads a queue case
(volcano-sh/volcano, ``pkg/scheduler/plugins/proportion/proportion.go`` and
``pkg/scheduler/plugins/capacity/capacity.go``, ``OnSessionOpen``; the API in
``staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/types.go``, ``QueueSpec``):

* the scheduler's configuration, ``volcano-scheduler.conf`` (in the
  ``volcano-scheduler-configmap`` ConfigMap, or as the file itself: a YAML document with
  ``actions:`` and ``tiers:``), names the policy: ``volcano-capacity`` when a tier enables the
  ``capacity`` plug-in, else ``volcano-proportion`` (a warning when no tier enables either);
  ``enableHierarchy: true`` on ``capacity`` makes the queues a tree (``pkg/scheduler/conf``,
  ``PluginOption``);
* a ``Queue`` (``scheduling.volcano.sh/v1beta1``) is a queue: ``spec.capability`` the ``limit``,
  ``spec.guarantee.resource`` the ``guarantee``, ``spec.priority`` the priority; ``spec.weight``
  the weight (read by ``proportion``, not by ``capacity``; a whole number, as Volcano's ``int32``
  declares it: ``1.5`` or ``"2"`` is refused, 0 is Volcano's default 1); ``spec.deserved`` the ``deserved``
  (read by ``capacity``, not by ``proportion``); ``spec.parent`` the parent queue (empty:
  ``root``) when ``capacity`` runs with ``enableHierarchy``: a queue with children is a group, and
  the ``root`` queue (Volcano creates it) the top group.  Otherwise ``spec.parent`` is warned
  about and left out (the model is flat).  ``status.allocated`` is the queue's ``usage`` when no
  pod says more;
* requests come from PodGroups (``spec.minResources`` of a PodGroup in its ``spec.queue``; phase
  Running counts in usage), Volcano Jobs (``batch.volcano.sh/v1alpha1``: ``spec.tasks[].replicas``
  times the task's pod request, in ``spec.queue``) and pods (the queue their PodGroup names, else
  the ``scheduling.volcano.sh/queue-name`` annotation or label, else ``default``).  When pods are
  given they win over the PodGroups and Jobs they belong to (what runs, not what was declared);
* capacity: the Node objects; Volcano queues carry no cluster total (``--capacity`` otherwise).

Each object is read through its schema (:mod:`fairalloc.io.importers.volcano_shapes`) before any
field is used: a wrong shape is one line naming the file, the object and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from fairalloc.core.errors import excerpt, unknown
from fairalloc.io.importers import kubernetes as k8s
from fairalloc.io.importers.common import Document, Draft, ImportFailed, Notes, embedded, number
from fairalloc.io.importers.shapes import Pod, read
from fairalloc.io.importers.volcano_shapes import ConfigMap, Job, PluginOption, PodGroup, Queue, SchedulerConfiguration

SYSTEM = "volcano"
GROUP = "scheduling.volcano.sh"
QUEUE_LABEL = "scheduling.volcano.sh/queue-name"
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
#: the kinds this importer reads (a Deployment's pods are read as pods, not from its template)
_READ = {"Queue", "PodGroup", "Job", "Pod", "Node", "ConfigMap"}
#: a PodGroup or a Job task that names no request (a queue's request is what its jobs ask for)
_NOTHING = "not given: counted as a request of nothing"
_KNOWN_SPEC = {"weight", "capability", "guarantee", "deserved", "reclaimable", "priority", "parent", "affinity", "type"}
#: the queue Volcano's hierarchy hangs from (``capacity.go``, ``rootQueueID``)
ROOT = "root"
CONF = "volcano-scheduler.conf"


@dataclass(frozen=True)
class Policy:
    """What the scheduler's configuration says: the plug-in that divides, and whether in a tree."""

    name: str = "volcano-proportion"
    hierarchy: bool = False

    @property
    def capacity(self) -> bool:
        return self.name == "volcano-capacity"


def detect(docs: list[Document]) -> int:
    ours = sum(1 for d in docs if d.group in (GROUP, "batch.volcano.sh"))
    ours += sum(1 for d in docs if d.kind == "ConfigMap" and embedded(d, CONF))
    return ours + sum(1 for d in docs if _is_conf(d))


def _is_conf(doc: Document) -> bool:
    """A ``volcano-scheduler.conf`` given as a file: no ``kind``, ``actions`` and ``tiers``."""
    return doc.kind is None and isinstance(doc.data, dict) and {"actions", "tiers"} <= set(doc.data)


def _queue(doc: Document, queue: Queue, notes: Notes, policy: Policy) -> dict:
    where, label = f"{doc.where}: {doc.label}", doc.label
    spec = queue.spec
    if doc.api_version != f"{GROUP}/v1beta1":
        notes.warn(doc, label, "apiVersion", f"{doc.api_version!r} is not {GROUP}/v1beta1: read as v1beta1")
    out: dict = {}
    weight = _weight(spec.weight, f"{where}: spec.weight")
    if (
        weight <= 0
    ):  # Volcano's queue webhook sets a weight of 0 to 1 (mutate_queue.go); a negative one breaks proportion
        notes.warn(doc, label, "spec.weight", f"{weight} is not a positive integer: weight 1 used")
    elif weight != 1 and policy.capacity:
        notes.warn(doc, label, "spec.weight", "read by the proportion plug-in, not capacity: not read")
    elif weight != 1:
        out["weight"] = weight
    if spec.capability:
        out["limit"] = k8s.quantities(spec.capability, f"{where}: spec.capability")
    if spec.guarantee.resource is not None:
        out["guarantee"] = k8s.quantities(spec.guarantee.resource, f"{where}: spec.guarantee.resource")
    elif spec.guarantee.model_extra:
        notes.warn(
            doc, label, "spec.guarantee", "written without its 'resource:' level (Volcano reads nothing): not read"
        )
    if spec.priority is not None:
        out["priority"] = int(number(spec.priority, f"{where}: spec.priority", negative=True, whole=True))
    if spec.deserved and policy.capacity:
        out["deserved"] = k8s.quantities(spec.deserved, f"{where}: spec.deserved")
    elif spec.deserved:
        notes.warn(doc, label, "spec.deserved", "read by the capacity plug-in, not proportion: not read")
    parent = spec.parent or None
    if policy.hierarchy:
        out["parent"] = None if doc.name == ROOT else parent or ROOT
    elif parent not in (None, ROOT):
        why = "the capacity plug-in's enableHierarchy is off" if policy.capacity else "proportion is flat"
        notes.warn(doc, label, "spec.parent", f"{why}: not read")
    if spec.reclaimable is False:
        notes.warn(doc, label, "spec.reclaimable", "reclaim is not modelled (the entitlement is the same): not read")
    for key in spec.model_extra or {}:
        if key not in _KNOWN_SPEC:
            notes.warn(doc, label, f"spec.{key}", "not a Volcano Queue field fairalloc knows: not read")
    for key in ("volcano.sh/hierarchy", "volcano.sh/hierarchy-weights"):
        if key in queue.metadata.annotations:
            plugin = "capacity" if policy.capacity else "proportion"
            notes.warn(doc, label, f"metadata.annotations.{key}", f"read by the drf plug-in's hierarchy, not {plugin}")
            break
    if queue.status.allocated:
        out["usage"] = k8s.quantities(queue.status.allocated, f"{where}: status.allocated")
    return out


def _weight(value, where: str) -> int:
    """``spec.weight``: Volcano declares it ``int32`` (``QueueSpec.Weight``), so the API server refuses
    anything but a whole number (``1.5``, ``"2"``, ``true``); absent or ``null``: 1, Volcano's default."""
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int):
        raise ImportFailed(f"{where}: must be a whole number, Volcano's weight is an int32 (got {excerpt(value)})")
    return int(number(value, where, negative=True, whole=True))  # the gate: 10^40 is one line


def _declared(
    declared: list[tuple[Document, PodGroup | Job]], notes: Notes, covered: set[str]
) -> dict[str, dict[str, dict]]:
    """Requests and usage that PodGroups and Jobs declare (those whose pods are not given)."""
    out: dict[str, dict[str, dict]] = {}
    for doc, group in declared:
        at = f"{doc.where}: {doc.label}"
        if f"{doc.namespace or 'default'}/{doc.name}" in covered:
            continue
        if isinstance(group, PodGroup):
            need = k8s.quantities(group.spec.minResources, f"{at}: spec.minResources")
            if not any(need.values()):
                notes.warn(doc, doc.label, "spec.minResources", _NOTHING)
            running, queue = group.status.phase == "Running", group.spec.queue
        else:
            job = group
            need = {}
            for k, task in enumerate(job.spec.tasks):
                pod = k8s.spec_request(task.template.spec, f"{at}: spec.tasks[{k}]")
                replicas = _replicas(task.replicas, f"{at}: spec.tasks[{k}].replicas")
                if not pod and replicas:
                    notes.warn(doc, doc.label, f"spec.tasks[{k}].template", f"no container requests: {_NOTHING}")
                need = k8s.add_amounts(need, {r: v * replicas for r, v in pod.items()})
            running, queue = job.status.state.phase == "Running", job.spec.queue
        entry = out.setdefault(queue or "default", {"request": {}, "usage": {}})
        entry["request"] = k8s.add_amounts(entry["request"], need)
        if running:
            entry["usage"] = k8s.add_amounts(entry["usage"], need)
    return out


def _jobs(docs: list[Document]) -> list[tuple[Document, PodGroup | Job]]:
    """The PodGroups and Volcano Jobs of ``docs``, in their order, each read through its shape."""
    out: list[tuple[Document, PodGroup | Job]] = []
    for doc in docs:
        if doc.kind == "PodGroup" and doc.group == GROUP:
            out.append((doc, read(PodGroup, doc.data, f"{doc.where}: {doc.label}")))
        elif doc.kind == "Job" and doc.group == "batch.volcano.sh":
            out.append((doc, read(Job, doc.data, f"{doc.where}: {doc.label}")))
    return out


def _replicas(value, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ImportFailed(f"{where}: must be a whole number >= 0 (got {excerpt(value)})")
    return number(value, where)


def _confs(docs: list[Document]) -> list[tuple[Document, str, Document]]:
    """Every ``volcano-scheduler.conf`` given: the document holding it, its field there, its content."""
    out = []
    for doc in docs:
        if doc.kind == "ConfigMap":
            read(ConfigMap, doc.data, f"{doc.where}: {doc.label}")
            out += [(doc, f"data.{CONF}", conf) for conf in embedded(doc, CONF)]
        elif _is_conf(doc):
            out.append((doc, "", doc))
    return out


def _plugins(conf: Document, at: str) -> list[PluginOption]:
    return [p for tier in read(SchedulerConfiguration, conf.data, at).tiers for p in tier.plugins]


def _policy(docs: list[Document], notes: Notes, draft: Draft) -> Policy:
    """The policy the scheduler's configuration names (``proportion`` when none is given)."""
    policy = Policy()
    for doc, key, conf in _confs(docs):
        at = ": ".join(p for p in (doc.where, doc.label, key) if p)
        plugins = {p.name: p for p in _plugins(conf, at)}
        if "capacity" in plugins:
            hierarchy = plugins["capacity"].enableHierarchy is True
            policy = Policy("volcano-capacity", hierarchy)
            tree = " with enableHierarchy (the queues form a tree)" if hierarchy else " (flat)"
            draft.description.append(f"The scheduler's configuration enables the capacity plug-in{tree}.")
            if "proportion" in plugins:
                notes.warn(doc, doc.label, key or "tiers", "enables both capacity and proportion: capacity read")
        elif "proportion" in plugins:
            draft.description.append("The scheduler's configuration enables the proportion plug-in.")
        else:
            notes.warn(doc, doc.label, key or "tiers", "no tier enables 'proportion' or 'capacity'")
    return policy


def _tree(docs: list[Document], draft: Draft, notes: Notes) -> None:
    """``spec.parent`` as groups: the queues with children (and ``root``) become groups."""
    draft.users.setdefault(ROOT, {"parent": None})
    names = list(draft.users)
    parent = {q: spec.pop("parent", ROOT) for q, spec in draft.users.items()}
    parent[ROOT] = None
    given = {d.name: d for d in docs if d.kind == "Queue" and d.group == GROUP}

    def at(q: str) -> tuple[Document | str, str]:
        """Where a warning about queue ``q`` points: its Queue object, or (not given) the first file."""
        return (given[q], given[q].label) if q in given else (docs[0].file, f"Queue/{q}")

    for q, p in parent.items():
        where = ": ".join(str(w.where if isinstance(w, Document) else w) for w in at(q))
        if p is not None and p not in parent:
            raise ImportFailed(f"{where}: spec.parent: {unknown('queue', p, names)}")
        seen = [q]
        while (p := parent[seen[-1]]) is not None:
            if p in seen:
                raise ImportFailed(f"{where}: spec.parent: a cycle: {' -> '.join([*seen, p])}")
            seen.append(p)
    for g in dict.fromkeys([ROOT, *(p for p in parent.values() if p is not None)]):
        spec = draft.users.pop(g)
        spec.pop("usage", None)  # a parent's usage is its leaves' (Queues.subtree_usage)
        if spec.pop("request", None):
            why = "jobs or pods in a queue with children (the capacity plug-in then schedules nothing): not read"
            notes.warn(*at(g), "", why)
        for key in ("deserved", "guarantee") if g == ROOT else ():
            if spec.pop(key, None):
                notes.warn(*at(g), f"spec.{key}", "the root's is the sum of its children's: not read")
        draft.groups[g] = {"parent": parent[g], **spec}
    for q, spec in draft.users.items():
        spec["group"] = parent[q]
    draft.description.append(f"{len(draft.users)} leaf queues and {len(draft.groups)} parent queues.")


def convert(docs: list[Document], notes: Notes) -> Draft:
    draft = Draft(SYSTEM, "volcano-proportion", list(dict.fromkeys(d.file for d in docs)))
    for doc in docs:
        if doc.kind not in _READ and not _is_conf(doc):
            notes.warn(doc, doc.label, "kind", f"{doc.kind or 'an object without kind'} is not read by the importer")
    policy = _policy(docs, notes, draft)
    draft.policy = policy.name
    queues = [d for d in docs if d.kind == "Queue" and d.group == GROUP]
    for doc in queues:
        at = f"{doc.where}: {doc.label}"
        given = read(Queue, doc.data, at)
        draft.add(draft.users, given.metadata.name or "default", _queue(doc, given, notes, policy), at)
    declared = _jobs(docs)
    group_queue = {
        f"{d.namespace or 'default'}/{d.name}": g.spec.queue or "default"
        for d, g in declared
        if isinstance(g, PodGroup)
    }
    covered: set[str] = set()  # the PodGroups some pod names: their pods are read, not their minResources

    def queue_of(pod: Pod) -> str | None:
        meta = pod.metadata
        group = f"{meta.namespace or 'default'}/{meta.annotations.get(GROUP_ANNOTATION)}"
        covered.add(group)
        if meta.annotations.get(GROUP_ANNOTATION) and group in group_queue:
            return group_queue[group]
        return meta.annotations.get(QUEUE_LABEL) or meta.labels.get(QUEUE_LABEL) or "default"

    pods = [d for d in docs if d.kind == "Pod"]
    amounts = k8s.pods_by_queue(docs, notes, queue_of)
    for queue, more in _declared(declared, notes, covered).items():
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
    if policy.hierarchy:
        _tree(docs, draft, notes)
    draft.capacity = k8s.node_capacity(docs, notes)
    draft.capacity_from = "nodes" if draft.capacity else ""
    draft.name_units(k8s.unit_of)
    draft.description.insert(0, f"{len(queues)} Volcano Queues, {len(pods)} pods.")
    return draft
