"""Hadoop YARN FairScheduler (and, by their shape, the Capacity Scheduler's files: see
:mod:`fairalloc.io.importers.yarn_capacity`): the allocation file (``fair-scheduler.xml``) and the ResourceManager's
REST answers (``/ws/v1/cluster/scheduler`` in JSON or XML, ``/ws/v1/cluster/nodes``,
``/ws/v1/cluster/metrics``).

Read as ``models/yarn_fair.py`` reads a queue case (apache/hadoop, Apache-2.0;
``hadoop-yarn-site/src/site/markdown/FairScheduler.md``, "Allocation file format", and
``ResourceManagerRest.md``, "Fair Scheduler API"):

* **allocation file** (``AllocationFileQueueParser.loadQueue``): ``<queue>`` (or the older
  ``<pool>``) elements nest; every queue is named by its full path from ``root`` (the implicit top:
  a top-level ``<queue name="root">`` is that root).  A queue with child queues or
  ``type="parent"`` is a group, the others leaf queues.  ``weight`` is the weight, ``minResources``
  the ``guarantee``, ``maxResources`` the ``limit`` (else ``queueMaxResourcesDefault``), in the three
  resource-string syntaxes (:func:`fairalloc.io.quantities.parse_yarn_resources`).  A
  ``schedulingPolicy`` other than ``drf`` is warned about: fairalloc computes the DRF policy's
  shares (``fair`` divides memory only).  Limits on applications, ACLs, preemption and placement
  rules do not enter the fair share and are read silently; ``maxChildResources``, ``<user>`` and
  anything unknown are warned about.
* **REST** (``FairSchedulerQueueInfo``): ``queueName`` (a full path), ``minResources``,
  ``maxResources``, ``usedResources`` (the ``usage``), ``demandResources`` (the request; without it
  the request is the usage), ``childQueues``; ``clusterResources`` of the root the capacity.  The
  answer carries no weights: weight 1 is assumed, with one warning.
* Memory is ``memory-mb`` in MiB, cores ``vcores`` (REST ``memory`` and ``vCores``).
"""

from __future__ import annotations

from decimal import Decimal
from xml.etree.ElementTree import Element

from fairalloc.io.importers import yarn_capacity as cs
from fairalloc.io.importers.common import Document, Draft, ImportFailed, Notes
from fairalloc.io.importers.yarn_capacity import rest_amounts
from fairalloc.io.quantities import MEMORY, VCORES, Percent, QuantityError, parse_yarn_resources

SYSTEM = "yarn"
_SILENT = {
    "maxRunningApps",
    "maxAMShare",
    "aclSubmitApps",
    "aclAdministerApps",
    "minSharePreemptionTimeout",
    "fairSharePreemptionTimeout",
    "fairSharePreemptionThreshold",
    "allowPreemptionFrom",
    "reservation",
    "maxContainerAllocation",
    "aclAdministerReservations",
    "aclListReservations",
    "aclSubmitReservations",
}
_TOP_SILENT = {
    "queueMaxAMShareDefault",
    "queueMaxAppsDefault",
    "userMaxAppsDefault",
    "queuePlacementPolicy",
    "defaultFairSharePreemptionTimeout",
    "defaultMinSharePreemptionTimeout",
    "defaultFairSharePreemptionThreshold",
    "reservation-agent",
    "reservation-policy",
    "reservation-planner",
}
#: a node of /ws/v1/cluster/nodes: its resources are what it uses plus what it has free
_NODE_FIELDS = {MEMORY: ("usedMemoryMB", "availMemoryMB"), VCORES: ("usedVirtualCores", "availableVirtualCores")}


def unit_of(resource: str) -> str:
    return "MiB" if resource == MEMORY else "cores" if resource == VCORES else "count"


def _is_allocations(doc: Document) -> bool:
    return isinstance(doc.data, Element) and doc.data.tag == "allocations"


def _scheduler_info(doc: Document) -> dict | None:
    """The ``schedulerInfo`` of a REST answer (JSON, or XML turned into the same shape)."""
    data = _plain(doc.data) if isinstance(doc.data, Element) and doc.data.tag == "scheduler" else doc.data
    if isinstance(data, dict) and "scheduler" in data and not isinstance(doc.data, Element):
        data = data["scheduler"]
    info = data.get("schedulerInfo") if isinstance(data, dict) else None
    return info if isinstance(info, dict) else None


def _plain(element: Element):
    """An XML REST answer as its JSON twin: repeated ``queue`` elements as a list."""
    children = list(element)
    if not children:
        return (element.text or "").strip()
    out: dict = {}
    for child in children:
        value = _plain(child)
        if child.tag == "queue":
            out.setdefault("queue", []).append(value)
        else:
            out[child.tag] = value
    for key, value in element.attrib.items():
        if key.endswith("}type"):
            out["type"] = value
    return out


def detect(docs: list[Document]) -> int:
    return sum(
        1
        for d in docs
        if _is_allocations(d) or _scheduler_info(d) is not None or _nodes(d) or cs.properties(d) is not None
    )


def _nodes(doc: Document) -> list:
    data = doc.data if isinstance(doc.data, dict) else {}
    nodes = (data.get("nodes") or {}).get("node") if isinstance(data.get("nodes"), dict) else None
    return nodes if isinstance(nodes, list) else []


def _resources(text: str | None, doc: Document, obj: str, field: str) -> dict[str, Decimal | Percent]:
    try:
        return parse_yarn_resources(text or "", f"{doc.where}: {obj}: {field}")
    except QuantityError as exc:
        raise ImportFailed(str(exc)) from None


def _xml_queue(doc: Document, element: Element, parent: str, draft: Draft, notes: Notes, default_max) -> None:
    name = element.get("name")
    if not name:
        raise ImportFailed(f"{doc.where}: a <{element.tag}> under {parent} has no name attribute")
    path = name if name.startswith("root") and parent == "" else f"{parent}.{name}" if parent else f"root.{name}"
    obj = f"queue {path}"
    children = [c for c in element if c.tag in ("queue", "pool")]
    spec: dict = {}
    for child in element:
        tag, text = child.tag, (child.text or "").strip()
        if tag in ("queue", "pool") or not isinstance(tag, str):
            continue
        if tag == "weight":
            spec["weight"] = _weight(text, doc, obj)
        elif tag == "minResources":
            spec["guarantee"] = _resources(text, doc, obj, tag)
        elif tag == "maxResources":
            spec["limit"] = _resources(text, doc, obj, tag)
        elif tag == "schedulingPolicy":
            if text != "drf":
                notes.warn(doc, obj, tag, f"{text!r}: fairalloc computes the DRF policy's fair shares")
        elif tag == "maxChildResources":
            notes.warn(doc, obj, tag, "limits queues created at run time: not modelled")
        elif tag not in _SILENT:
            notes.warn(doc, obj, tag, "not an allocation-file queue property fairalloc knows: not read")
    if "limit" not in spec and default_max:
        spec["limit"] = default_max
    group = None if parent in ("", "root") else parent
    if path == "root":
        if spec:
            notes.warn(doc, obj, "", "root's own properties are not modelled (its share is the cluster)")
    elif children or element.get("type") == "parent":
        draft.groups[path] = {"parent": group, **spec}
    else:
        draft.users[path] = {"group": group, **spec}
    for child in children:
        _xml_queue(doc, child, path, draft, notes, default_max)


def _weight(text: str, doc: Document, obj: str) -> Decimal:
    try:
        weight = Decimal(text)
    except ArithmeticError:
        raise ImportFailed(f"{doc.where}: {obj}: weight: {text!r} is not a number") from None
    if not weight > 0:
        raise ImportFailed(f"{doc.where}: {obj}: weight: {text} (fairalloc needs a weight > 0)")
    return weight


def _read_allocations(doc: Document, draft: Draft, notes: Notes) -> None:
    top = doc.data
    default = top.find("queueMaxResourcesDefault")
    default_max = (
        _resources(default.text, doc, "allocations", "queueMaxResourcesDefault") if default is not None else {}
    )
    for child in top:
        if child.tag in ("queue", "pool"):
            _xml_queue(doc, child, "", draft, notes, default_max)
        elif child.tag == "user":
            notes.warn(doc, f"user {child.get('name')}", "", "per-user limits are not modelled")
        elif child.tag == "defaultQueueSchedulingPolicy" and (child.text or "").strip() != "drf":
            notes.warn(doc, "allocations", child.tag, "fairalloc computes the DRF policy's fair shares")
        elif isinstance(child.tag, str) and child.tag not in _TOP_SILENT | {"queueMaxResourcesDefault"}:
            notes.warn(doc, "allocations", child.tag, "not an allocation-file element fairalloc knows: not read")


def _rest_queue(doc: Document, q: dict, draft: Draft, notes: Notes) -> None:
    path = q.get("queueName")
    if not isinstance(path, str):
        raise ImportFailed(f"{doc.where}: a queue without queueName")
    obj = f"queue {path}"
    spec: dict = {}
    guarantee = rest_amounts(q.get("minResources"), doc, obj, "minResources")
    if any(guarantee.values()):
        spec["guarantee"] = guarantee
    if q.get("maxResources"):
        spec["limit"] = rest_amounts(q.get("maxResources"), doc, obj, "maxResources")
    children = (q.get("childQueues") or {}).get("queue") or []
    parent = path.rsplit(".", 1)[0] if "." in path else None
    group = None if parent in (None, "root") else parent
    if path == "root":
        cluster = rest_amounts(q.get("clusterResources"), doc, obj, "clusterResources")
        if cluster and not draft.capacity:
            draft.capacity, draft.capacity_from = cluster, "configuration"
    elif children:
        draft.groups[path] = {"parent": group, **spec}
    else:
        usage = rest_amounts(q.get("usedResources"), doc, obj, "usedResources")
        demand = rest_amounts(q.get("demandResources"), doc, obj, "demandResources") or usage
        draft.users[path] = {"group": group, **spec}
        if any(demand.values()):
            draft.users[path]["request"] = demand
        if any(usage.values()):
            draft.users[path]["usage"] = usage
    for child in children:
        _rest_queue(doc, child, draft, notes)


def _read_rest(doc: Document, info: dict, draft: Draft, notes: Notes) -> None:
    if info.get("type") != "fairScheduler":
        notes.warn(doc, "schedulerInfo", "type", f"{info.get('type')!r} is not the FairScheduler: not read")
        return
    root = info.get("rootQueue")
    if not isinstance(root, dict):
        raise ImportFailed(f"{doc.where}: schedulerInfo: rootQueue is missing")
    notes.warn(doc, "schedulerInfo", "rootQueue", "the REST answer gives no queue weights: weight 1 assumed")
    _rest_queue(doc, root, draft, notes)


def _read_nodes(docs: list[Document], draft: Draft) -> None:
    total: dict[str, Decimal] = {}
    for doc in docs:
        for node in _nodes(doc):
            if node.get("state", "RUNNING") != "RUNNING":
                continue
            for key, field in (
                (MEMORY, ("usedMemoryMB", "availMemoryMB")),
                (VCORES, ("usedVirtualCores", "availableVirtualCores")),
            ):
                total[key] = total.get(key, Decimal(0)) + sum(Decimal(str(node.get(f, 0))) for f in field)
    if total:
        draft.capacity, draft.capacity_from = total, "nodes"


def convert(docs: list[Document], notes: Notes) -> Draft:
    """The FairScheduler's files make a ``yarn-fair`` case, the Capacity Scheduler's (handed to
    :mod:`fairalloc.io.importers.yarn_capacity`) a ``yarn-capacity`` one; not both at once."""
    capacity = [d for d in docs if cs.properties(d) is not None or cs.is_capacity_rest(_scheduler_info(d) or {})]
    fair = [d for d in docs if _is_allocations(d) or (_scheduler_info(d) or {}).get("type") == "fairScheduler"]
    if capacity and fair:
        raise ImportFailed(
            f"{capacity[0].where} is the Capacity Scheduler's, {fair[0].where} the FairScheduler's: import them apart"
        )
    draft = Draft(SYSTEM, cs.POLICY if capacity else "yarn-fair", list(dict.fromkeys(d.file for d in docs)))
    for doc in docs:
        info = _scheduler_info(doc)
        props = cs.properties(doc)
        if _is_allocations(doc):
            _read_allocations(doc, draft, notes)
        elif props is not None:
            cs.read_configuration(doc, props, draft, notes)
        elif info is not None and cs.is_capacity_rest(info):
            cs.read_rest(doc, info, draft, notes)
        elif info is not None:
            _read_rest(doc, info, draft, notes)
    _read_nodes(docs, draft)
    draft.name_units(unit_of)
    draft.description.append(f"{len(draft.users)} leaf queues and {len(draft.groups)} parent queues.")
    return draft
