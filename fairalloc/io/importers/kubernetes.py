"""Plain Kubernetes: namespaces as queues, ResourceQuotas as limits, pods as requests, nodes as capacity.

Also the Kubernetes reading the other importers share (Volcano, Kueue): :func:`node_capacity`,
:func:`pod_request` and :func:`pods_by_queue`.

* **A pod's request** is Kubernetes' effective request (kubernetes/kubernetes,
  ``staging/src/k8s.io/component-helpers/resource/helpers.go``, ``PodRequests``): the sum of its
  containers' requests plus its restartable init containers (sidecars, ``restartPolicy: Always``),
  or, if larger per resource, the largest request of an ordinary init container plus the sidecars
  started before it; plus ``spec.overhead``.  Requests, not limits: a container that gives only a
  limit has its request defaulted to the limit (``pkg/apis/core/v1/defaults.go``,
  ``SetDefaults_Pod``).
* **Phases**: a Running pod counts in its queue's ``usage`` and ``request``; a Pending one in
  ``request``; Succeeded and Failed pods hold nothing.
* **Capacity**: the sum over Node objects of ``status.allocatable`` (what the scheduler may place),
  else ``status.capacity`` with a warning.  Cordoned nodes count (their pods still run) with a warning.
* **The importer**: each namespace with pods or a ResourceQuota is a queue (policy ``drf``: plain
  Kubernetes has no fair share; DRF is the reference); ``ResourceQuota.spec.hard`` of
  ``requests.cpu``/``cpu``, ``requests.memory``/``memory`` and ``requests.<extended>`` is the
  namespace's ``limit``.  ``limits.*`` (container limits, not requests), the storage a storage
  class may claim and object counts are warned about and skipped.  Where two caps bound one resource
  (two quotas of a namespace, or ``cpu`` beside ``requests.cpu``), the smaller is its limit
  (Kubernetes enforces every one), with a warning.
* **Shapes**: each object is read through its schema (:mod:`fairalloc.io.importers.shapes`) before
  any field is used: a wrong shape is one line naming the file, the object and the field.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from fairalloc.io.importers.common import Document, Draft, ImportFailed, Notes, once
from fairalloc.io.importers.shapes import (
    Container,
    Namespace,
    Node,
    Pod,
    PodSpec,
    PodTemplate,
    ResourceQuota,
    read,
)
from fairalloc.io.quantities import QuantityError, parse_kube

SYSTEM = "kubernetes"
_KINDS = ("Node", "Pod", "Namespace", "ResourceQuota")
#: resources counted in bytes; cpu in cores; every other resource a count
BYTES = ("memory", "ephemeral-storage", "storage")


#: ResourceQuota keys per storage class: ``<class>.storageclass.storage.k8s.io/requests.storage`` (bytes
#: of storage) and ``.../persistentvolumeclaims`` (a count) (kubernetes/kubernetes,
#: ``pkg/quota/v1/evaluator/core/persistent_volume_claims.go``, ``V1ResourceByStorageClass``)
_STORAGE_CLASS = ".storageclass.storage.k8s.io/"


def unit_of(resource: str) -> str:
    """The unit a Kubernetes resource is counted in, in a case."""
    if resource == "cpu":
        return "cores"
    return "bytes" if resource in BYTES or resource.startswith("hugepages-") else "count"


def quantities(mapping, where: str) -> dict[str, Decimal]:
    """A Kubernetes resource list (``{cpu: 500m, memory: 1Gi}``), exactly; one line if malformed."""
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise ImportFailed(f"{where}: must be a mapping resource -> quantity")
    try:
        return {str(r): parse_kube(v, f"{where}.{r}") for r, v in mapping.items()}
    except QuantityError as exc:
        raise ImportFailed(str(exc)) from None


def add_amounts(total: dict[str, Decimal], more: dict[str, Decimal]) -> dict[str, Decimal]:
    return {r: total.get(r, Decimal(0)) + more.get(r, Decimal(0)) for r in {**total, **more}}


def _max(a: dict[str, Decimal], b: dict[str, Decimal]) -> dict[str, Decimal]:
    return {r: max(a.get(r, Decimal(0)), b.get(r, Decimal(0))) for r in {**a, **b}}


def node_capacity(docs: list[Document], notes: Notes) -> dict[str, Decimal]:
    """The cluster's resources: every Node's allocatable (else capacity), summed."""
    total: dict[str, Decimal] = {}
    read_at: dict[str, str] = {}
    for doc in (d for d in docs if d.kind == "Node"):
        at = f"{doc.where}: {doc.label}"
        node = read(Node, doc.data, at)
        if doc.name:  # a node listed twice would be counted twice
            once(read_at, doc.label, at, "object")
        allocatable = node.status.allocatable
        if allocatable is None:
            notes.warn(doc, doc.label, "status.allocatable", "missing: status.capacity counted instead")
        if node.spec.unschedulable:
            notes.warn(doc, doc.label, "spec.unschedulable", "cordoned: its resources are counted all the same")
        field = "status.capacity" if allocatable is None else "status.allocatable"
        amounts = quantities(node.status.capacity if allocatable is None else allocatable, f"{at}: {field}")
        amounts.pop("pods", None)  # a node's pod slots are not a resource queues share
        total = add_amounts(total, amounts)
    return total


def _requests(container: Container, where: str) -> dict[str, Decimal]:
    limits = quantities(container.resources.limits, f"{where}.resources.limits")
    requests = quantities(container.resources.requests, f"{where}.resources.requests")
    return {**limits, **requests}  # a request defaults to the limit


def pod_request(pod: dict, where: str, notes: Notes | None = None) -> dict[str, Decimal]:
    """The effective request (module docstring) of a pod or pod template given as read from its file
    (Kueue's pod sets, Volcano's tasks); its shape is checked here."""
    return spec_request(read(PodTemplate, pod, where).spec, where)


def spec_request(spec: PodSpec, where: str) -> dict[str, Decimal]:
    """The effective request of a pod's ``spec`` by Kubernetes' rule (module docstring)."""
    apps: dict[str, Decimal] = {}
    for k, c in enumerate(spec.containers):
        apps = add_amounts(apps, _requests(c, f"{where}: spec.containers[{k}]"))
    sidecars: dict[str, Decimal] = {}
    init_peak: dict[str, Decimal] = {}
    for k, c in enumerate(spec.initContainers):
        need = _requests(c, f"{where}: spec.initContainers[{k}]")
        if c.restartPolicy == "Always":
            sidecars = add_amounts(sidecars, need)
            init_peak = _max(init_peak, sidecars)
        else:
            init_peak = _max(init_peak, add_amounts(need, sidecars))
    total = _max(add_amounts(apps, sidecars), init_peak)
    total = add_amounts(total, quantities(spec.overhead, f"{where}: spec.overhead"))
    return {r: v for r, v in total.items() if v != 0}


def pods_by_queue(
    docs: list[Document], notes: Notes, queue_of: Callable[[Pod], str | None]
) -> dict[str, dict[str, dict[str, Decimal]]]:
    """``{queue: {"request": ..., "usage": ...}}`` over the Pod objects of ``docs``.  ``queue_of`` names
    each pod's queue (``None``: its namespace); it is asked of every pod, finished ones too, once the
    pod's shape is checked."""
    out: dict[str, dict[str, dict[str, Decimal]]] = {}
    read_at: dict[str, str] = {}
    for doc in (d for d in docs if d.kind == "Pod"):
        at = f"{doc.where}: {doc.label}"
        pod = read(Pod, doc.data, at)
        if doc.name:  # a pod listed twice would ask twice
            once(read_at, doc.label, at, "object")
        queue = queue_of(pod) or pod.metadata.namespace or "default"
        phase = pod.status.phase or "Pending"
        if phase in ("Succeeded", "Failed"):
            continue
        if phase not in ("Running", "Pending"):
            notes.warn(doc, doc.label, "status.phase", f"{phase!r} is not Running or Pending: counted as pending")
        need = spec_request(pod.spec, at)
        entry = out.setdefault(queue, {"request": {}, "usage": {}})
        entry["request"] = add_amounts(entry["request"], need)
        if phase == "Running":
            entry["usage"] = add_amounts(entry["usage"], need)
    return out


def detect(docs: list[Document]) -> int:
    return sum(1 for d in docs if d.kind in _KINDS and d.group == "")


def _quota_caps(doc: Document, quota: ResourceQuota, notes: Notes) -> list[tuple[str, str, Decimal]]:
    """``(key, resource, cap)`` for each key of ``spec.hard`` that caps what pods request: ``cpu`` and
    ``requests.cpu`` alike (the quota evaluator counts a pod's request under both: kubernetes/kubernetes,
    ``pkg/quota/v1/evaluator/core/pods.go``, ``podComputeUsageHelper``); the others are warned about."""
    hard = quantities(quota.spec.hard, f"{doc.where}: {doc.label}: spec.hard")
    out: list[tuple[str, str, Decimal]] = []
    for key, value in hard.items():
        if key.startswith("requests."):
            out.append((key, key.removeprefix("requests."), value))
        elif key in ("cpu", "memory", "ephemeral-storage"):
            out.append((key, key, value))
        elif key.startswith("limits."):
            notes.warn(doc, doc.label, f"spec.hard.{key}", "caps container limits, not requests: not modelled")
        elif _STORAGE_CLASS in key and key.endswith("/requests.storage"):
            storage_class = key.split(".", 1)[0]
            notes.warn(
                doc, doc.label, f"spec.hard.{key}",
                f"caps the storage claimed of storage class {storage_class} (PersistentVolumeClaims), not a "
                "node resource queues share: not modelled",
            )  # fmt: skip
        else:
            notes.warn(doc, doc.label, f"spec.hard.{key}", "an object count, not a resource: not modelled")
    return out


def _amount(value: Decimal, resource: str) -> str:
    return f"{format(value.normalize(), 'f')} {unit_of(resource)}"


def _namespace_limits(docs: list[Document], notes: Notes) -> dict[str, dict[str, Decimal]]:
    """Each namespace's request limit from its ResourceQuotas.  Kubernetes checks a pod against every
    quota of its namespace (kubernetes/kubernetes, ``staging/src/k8s.io/apiserver/pkg/admission/plugin/
    resourcequota/controller.go``, ``CheckRequest``: each quota's ``hard`` must hold), so where two
    caps bound one resource (two quotas, or ``cpu`` beside ``requests.cpu``) the smaller is the
    namespace's, with a warning naming both."""
    limits: dict[str, dict[str, Decimal]] = {}
    capped_by: dict[tuple[str, str], str] = {}  # (namespace, resource) -> where the cap kept is written
    read_at: dict[str, str] = {}
    for doc in (d for d in docs if d.kind == "ResourceQuota"):
        quota = read(ResourceQuota, doc.data, f"{doc.where}: {doc.label}")
        if doc.name:  # two quotas of one name: one would hide the other
            once(read_at, doc.label, f"{doc.where}: {doc.label}", "object")
        namespace = quota.metadata.namespace or "default"
        limit = limits.setdefault(namespace, {})
        for key, resource, cap in _quota_caps(doc, quota, notes):
            held = limit.get(resource)
            if held is not None and held != cap:
                notes.warn(
                    doc, doc.label, f"spec.hard.{key}",
                    f"caps {resource} at {_amount(cap, resource)} and {capped_by[namespace, resource]} at "
                    f"{_amount(held, resource)}: Kubernetes enforces every cap of a namespace's quotas, so the "
                    f"smaller, {_amount(min(held, cap), resource)}, is kept",
                )  # fmt: skip
            if held is None or cap < held:
                limit[resource], capped_by[namespace, resource] = cap, f"{doc.label}'s spec.hard.{key}"
    return limits


def convert(docs: list[Document], notes: Notes) -> Draft:
    draft = Draft(SYSTEM, "drf", list(dict.fromkeys(d.file for d in docs)))
    for doc in docs:
        if doc.kind not in _KINDS or doc.group != "":
            notes.warn(doc, doc.label, "kind", "not a Node, Pod, Namespace or ResourceQuota: not read")
    for doc in (d for d in docs if d.kind == "Namespace"):
        draft.users.setdefault(read(Namespace, doc.data, f"{doc.where}: {doc.label}").metadata.name or "default", {})
    for ns, limit in _namespace_limits(docs, notes).items():
        draft.users.setdefault(ns, {})["limit"] = limit
    for ns, amounts in pods_by_queue(docs, notes, lambda pod: None).items():
        queue = draft.users.setdefault(ns, {})
        queue["request"] = amounts["request"]
        if amounts["usage"]:
            queue["usage"] = amounts["usage"]
    draft.capacity = node_capacity(docs, notes)
    draft.capacity_from = "nodes" if draft.capacity else ""
    draft.name_units(unit_of)
    pods = sum(1 for d in docs if d.kind == "Pod")
    nodes = sum(1 for d in docs if d.kind == "Node")
    draft.description.append(f"{len(draft.users)} namespaces, {pods} pods, {nodes} nodes.")
    return draft
