"""Hadoop YARN FairScheduler (and, by their shape, the Capacity Scheduler's files: see
:mod:`fairalloc.io.importers.yarn_capacity`): the allocation file (``fair-scheduler.xml``) and the ResourceManager's
REST answers (``/ws/v1/cluster/scheduler`` in JSON or XML, ``/ws/v1/cluster/nodes``,
``/ws/v1/cluster/metrics``).

Read as ``models/yarn_fair.py`` reads a queue case (apache/hadoop, Apache-2.0;
``hadoop-yarn-site/src/site/markdown/FairScheduler.md``, "Allocation file format", and
``ResourceManagerRest.md``, "Fair Scheduler API"):

* **allocation file** (``AllocationFileQueueParser.loadQueue``): ``<queue>`` (or the older
  ``<pool>``, the MapReduce 1 Fair Scheduler's name, which ``AllocationFileLoaderService``'s
  reader still takes as a queue: read so, with a warning) elements nest; every queue is named by
  its full path from ``root`` (the implicit top: a top-level ``<queue name="root">`` is that
  root).  A queue with child queues is a group, the others leaf queues; a ``type="parent"`` queue
  without configured children is one queue too (with a warning), standing for the queues
  placement rules create under it at run time.  ``weight`` is the weight, ``minResources``
  the ``guarantee``, ``maxResources`` the ``limit`` (else ``queueMaxResourcesDefault``), in the three
  resource-string syntaxes (:func:`fairalloc.io.quantities.parse_yarn_resources`).  A
  ``schedulingPolicy`` other than ``drf`` is warned about: fairalloc computes the DRF policy's
  shares.  So is a file without ``defaultQueueSchedulingPolicy``: the default is ``fair``
  (``SchedulingPolicy.DEFAULT_POLICY`` is ``FairSharePolicy``), whose ``computeShares`` divides
  memory only (``policies/FairSharePolicy.java`` at commit
  0815704fea18f8006aa36ea2d6d04e459f199574): its memory shares are the ones fairalloc computes,
  the other resources' are DRF's.  Limits on applications, ACLs, preemption and placement
  rules do not enter the fair share and are read silently; ``maxChildResources``, ``<user>`` and
  anything unknown are warned about.
* **REST** (``FairSchedulerQueueInfo``): ``queueName`` (a full path), ``minResources``,
  ``maxResources``, ``usedResources`` (the ``usage``), ``demandResources`` (the request; without it
  the request is the usage), ``childQueues``; ``clusterResources`` of the root the capacity.  The
  answer carries no weights: weight 1 is assumed, with one warning.
* **capacity**: the node list (``/ws/v1/cluster/nodes``: of every RUNNING node its
  ``totalResource``, ``NodeInfo`` at 67f5f9097076a0c8e2c5956863b2d5ec94979031, with the resource
  types of its ``resourceInformations``; in older answers its used plus available resources), the
  cluster metrics (``/ws/v1/cluster/metrics``, ``ClusterMetricsInfo`` at
  0233a4570b99cd6af8ca3458721808997b75ef64: ``totalMB`` and ``totalVirtualCores``, the root
  queue's available plus allocated resources, and ``totalClusterResourcesAcrossPartition``, the
  scheduler's cluster resource, in the versions that write it) and the REST root's
  ``clusterResources``; where they disagree the node list counts
  (:func:`fairalloc.io.importers.common.chosen_source`).
* Memory is ``memory-mb`` in MiB, cores ``vcores`` (REST ``memory`` and ``vCores``).

Which file or answer a document is, is told by its root element or top key alone; every object in it
is then read through its schema (:mod:`fairalloc.io.importers.yarn_shapes`), so a wrong shape is one
line naming the file, the object and the field.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from xml.etree.ElementTree import Element

from fairalloc.io.importers import yarn_capacity as cs
from fairalloc.io.importers.common import NODES, TOTALS, Document, Draft, ImportFailed, Notes
from fairalloc.io.importers.common import number as quantity_number
from fairalloc.io.importers.shapes import read
from fairalloc.io.importers.yarn_capacity import number, rest_amounts
from fairalloc.io.importers.yarn_shapes import (
    AllocationQueue,
    Allocations,
    ClusterMetricsInfo,
    FairSchedulerInfo,
    FairSchedulerQueueInfo,
    MetricsAnswer,
    NodeInfo,
    NodesAnswer,
    ResourceInfo,
    SchedulerInfo,
    SchedulerTypeInfo,
    read_items,
    rest_twin,
    xml_fields,
)
from fairalloc.io.quantities import MEMORY, VCORES, Percent, QuantityError, parse_yarn_resources

SYSTEM = "yarn"
FAIR = "fairScheduler"
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
#: the elements that are queues (``<pool>``: the MapReduce 1 Fair Scheduler's name, still read)
_QUEUES = ("queue", "pool")
#: ClusterMetricsInfo's totals, by resource
_METRICS = {"totalMB": MEMORY, "totalVirtualCores": VCORES}
#: a node of /ws/v1/cluster/nodes: its resources are what it uses plus what it has free
_NODE_FIELDS = {MEMORY: ("usedMemoryMB", "availMemoryMB"), VCORES: ("usedVirtualCores", "availableVirtualCores")}
#: the documents by their root element (XML)
_ROOTS = {"allocations": "allocations", "scheduler": "scheduler", "clusterMetrics": "metrics"}


def unit_of(resource: str) -> str:
    return "MiB" if resource == MEMORY else "cores" if resource == VCORES else "count"


def _kind(doc: Document) -> str | None:
    """Which of YARN's files or REST answers ``doc`` is, by its root element or top key alone: the
    shape of the rest is for its schema to check (never raises: detection calls it)."""
    data = doc.data
    if isinstance(data, Element):
        if data.tag == "configuration":
            return "configuration" if cs.is_configuration(data) else None
        return _ROOTS.get(data.tag)
    if not isinstance(data, dict):
        return None
    if "schedulerInfo" in _unwrapped(data):
        return "scheduler"
    # a list where the answer's mapping belongs is a wrong shape of it (said), not another file
    if isinstance(data.get("nodes"), (dict, list)):
        return "nodes"
    return "metrics" if isinstance(data.get("clusterMetrics"), (dict, list)) else None


def _unwrapped(data: dict) -> dict:
    """A JSON scheduler answer inside its root ``scheduler`` (which some clients leave out)."""
    inner = data.get("scheduler")
    return inner if isinstance(inner, dict) else data


def detect(docs: list[Document]) -> int:
    return sum(1 for d in docs if _kind(d) is not None)


def _scheduler(doc: Document) -> tuple[str | None, dict]:
    """The ``type`` and the ``schedulerInfo`` of a scheduler answer (JSON, or XML as its JSON twin)."""
    data = rest_twin(doc.data) if isinstance(doc.data, Element) else _unwrapped(doc.data)
    info = read(SchedulerTypeInfo, data, doc.where).schedulerInfo or {}
    return read(SchedulerInfo, info, f"{doc.where}: schedulerInfo").type, info


def _metrics(doc: Document) -> ClusterMetricsInfo:
    """The ``clusterMetrics`` of a ``/ws/v1/cluster/metrics`` answer (JSON, or XML as its JSON twin)."""
    data = {"clusterMetrics": rest_twin(doc.data)} if isinstance(doc.data, Element) else doc.data
    return read(MetricsAnswer, data, doc.where).clusterMetrics


def _resources(text: str | None, doc: Document, obj: str, field: str) -> dict[str, Decimal | Percent]:
    try:
        return parse_yarn_resources(text or "", f"{doc.where}: {obj}: {field}")
    except QuantityError as exc:
        raise ImportFailed(str(exc)) from None


#: the queue elements the importer reads (the others are read silently or warned about)
_READ = set(AllocationQueue.model_fields)
#: the queue elements not warned about
_KNOWN = _READ | _SILENT


@dataclasses.dataclass
class _File:
    """One allocation file being read: where, the draft and warnings it adds to, the default
    maximum, and each resource string and weight read so far by its text: a file of 10,000 queues
    writes a few thousand distinct ones, each read once (a wrong one is refused when first met,
    naming its queue and field as before)."""

    doc: Document
    draft: Draft
    notes: Notes
    default_max: dict = dataclasses.field(default_factory=dict)
    amounts: dict[str, dict[str, Decimal | Percent]] = dataclasses.field(default_factory=dict)
    weights: dict[str, Decimal] = dataclasses.field(default_factory=dict)

    def resources(self, text: str, obj: str, field: str) -> dict[str, Decimal | Percent]:
        if text not in self.amounts:
            self.amounts[text] = _resources(text, self.doc, obj, field)
        return self.amounts[text]  # shared, as queueMaxResourcesDefault's always was: nothing changes them

    def weight(self, text: str, obj: str) -> Decimal:
        if text not in self.weights:
            self.weights[text] = _weight(text, self.doc, obj)
        return self.weights[text]


def _xml_queue(f: _File, element: Element, parent: str) -> None:
    """A ``<queue>`` and, depth first, the queues under it.  Cost: O(its elements) per queue, the
    amounts of a text already read a look-up."""
    doc, draft, notes = f.doc, f.draft, f.notes
    name = element.get("name")
    if not name:  # an attribute is text (no shape to check), but it may be missing or empty
        raise ImportFailed(f"{doc.where}: a <{element.tag}> under {parent} has no name attribute")
    path = name if name.startswith("root") and parent == "" else f"{parent}.{name}" if parent else f"root.{name}"
    obj = f"queue {path}"
    fields = xml_fields(element, skip=_QUEUES)
    queue = read(AllocationQueue, fields, f"{doc.where}: {obj}")
    if element.tag == "pool":
        why = "the older name of <queue> (AllocationFileLoaderService reads both): read as a queue"
        notes.warn(doc, obj, "<pool>", why)
    children = [c for c in element if c.tag in _QUEUES]
    leaf = not children and element.get("type") != "parent" and path != "root"
    _queue_warnings(doc, obj, fields, queue, leaf, notes)
    spec = _queue_spec(f, obj, queue)
    if "limit" not in spec and f.default_max:
        spec["limit"] = f.default_max
    group = None if parent in ("", "root") else parent
    if path == "root":
        if spec:
            notes.warn(doc, obj, "", "root's own properties are not modelled (its share is the cluster)")
    elif children:
        draft.add(draft.groups, path, {"parent": group, **spec}, _written(doc, element, parent))
    else:
        if element.get("type") == "parent":
            notes.warn(doc, obj, "type", _CHILDLESS)
        draft.add(draft.users, path, {"group": group, **spec}, _written(doc, element, parent))
    for child in children:
        _xml_queue(f, child, path)


def _queue_spec(f: _File, obj: str, queue: AllocationQueue) -> dict:
    """``weight``, ``minResources`` (the guarantee) and ``maxResources`` (the limit) of a queue."""
    spec: dict = {}
    if queue.weight is not None:
        spec["weight"] = f.weight(queue.weight, obj)
    if queue.minResources is not None:
        spec["guarantee"] = f.resources(queue.minResources, obj, "minResources")
    if queue.maxResources is not None:
        spec["limit"] = f.resources(queue.maxResources, obj, "maxResources")
    return spec


def _queue_warnings(doc: Document, obj: str, fields: dict, queue: AllocationQueue, leaf: bool, notes: Notes) -> None:
    """What a queue's elements say that fairalloc does not model, in the order they are written."""
    for tag in fields:
        if tag == "schedulingPolicy" and queue.schedulingPolicy != "drf":
            notes.warn(doc, obj, tag, _APPS if leaf else _policy_said(queue.schedulingPolicy or ""))
        elif tag == "maxChildResources":
            notes.warn(doc, obj, tag, "limits queues created at run time: not modelled")
        elif tag not in _KNOWN:
            notes.warn(doc, obj, tag, "not an allocation-file queue property fairalloc knows: not read")


def _written(doc: Document, element: Element, parent: str) -> str:
    """Where a queue element is, as written (``f.xml: <queue> 'a.b' under root``): a dotted
    name and a nested one name the same queue, and a message names both."""
    return f"{doc.where}: <{element.tag}> {element.get('name')!r} under {parent or '<allocations>'}"


#: a parent queue whose children are all created at run time (FSParentQueue, queue placement rules)
#: still takes part in the fair share (FSParentQueue.recomputeSteadyShares counts every child queue)
_CHILDLESS = (
    "'parent' with no configured child queue: imported as one queue, standing for the queues created "
    "under it at run time (their work is its request and usage)"
)


def _weight(text: str, doc: Document, obj: str) -> Decimal:
    weight = quantity_number(text, f"{doc.where}: {obj}: weight")
    if not weight > 0:
        raise ImportFailed(f"{doc.where}: {obj}: weight: {text} (fairalloc needs a weight > 0)")
    return weight


def _read_allocations(doc: Document, draft: Draft, notes: Notes) -> None:
    """The queues of an allocation file into ``draft``.  Cost: O(the file's elements); each queue
    element is still read through its schema (a few microseconds, less than reading its strings
    was), each distinct resource string and weight once (:class:`_File`)."""
    top = doc.data
    fields = xml_fields(top, skip=(*_QUEUES, "user"))
    allocations = read(Allocations, fields, f"{doc.where}: allocations")
    f = _File(doc, draft, notes)
    default = allocations.queueMaxResourcesDefault
    if default is not None:
        f.default_max = _resources(default, doc, "allocations", "queueMaxResourcesDefault")
    policy = allocations.defaultQueueSchedulingPolicy
    if policy is None:  # SchedulingPolicy.DEFAULT_POLICY
        said = "not given: the default is 'fair'; " + _policy_said("fair")
        notes.warn(doc, "allocations", "defaultQueueSchedulingPolicy", said)
    elif policy != "drf":
        notes.warn(doc, "allocations", "defaultQueueSchedulingPolicy", _policy_said(policy))
    for tag in fields:
        if tag not in _TOP_SILENT | set(Allocations.model_fields):
            notes.warn(doc, "allocations", tag, "not an allocation-file element fairalloc knows: not read")
    for child in top:
        if child.tag in _QUEUES:
            _xml_queue(f, child, "")
        elif child.tag == "user":
            notes.warn(doc, f"user {child.get('name')}", "", "per-user limits are not modelled")


#: a leaf queue's policy divides it among its applications (FSLeafQueue), not among queues
_APPS = "a leaf queue's policy divides it among its applications, which fairalloc does not model"


def _policy_said(policy: str) -> str:
    """What fairalloc's DRF shares mean under another policy: ``fair`` (``FairSharePolicy
    .computeShares``) calls ``ComputeFairShares`` for memory alone, where DRF calls it for memory
    and each other resource in turn: the memory shares are the same, the others YARN leaves
    uncomputed."""
    if policy == "fair":
        return (
            "'fair' (FairSharePolicy) divides memory only: the memory shares are YARN's, the other "
            "resources' are those the 'drf' policy would give"
        )
    return f"{policy!r}: fairalloc computes the DRF policy's fair shares"


def _rest_queue(doc: Document, q: FairSchedulerQueueInfo, draft: Draft, notes: Notes) -> None:
    path = q.queueName
    if path is None:
        raise ImportFailed(f"{doc.where}: a queue without queueName")
    obj = f"queue {path}"
    children = read_items(FairSchedulerQueueInfo, q.childQueues.queue, f"{doc.where}: {obj}", "childQueues.queue")
    if q.schedulingPolicy is not None and q.schedulingPolicy != "drf":
        why = _policy_said(q.schedulingPolicy) if children or path == "root" else _APPS
        notes.warn(doc, obj, "schedulingPolicy", why)
    spec: dict = {}
    guarantee = rest_amounts(q.minResources, doc, obj, "minResources")
    if any(guarantee.values()):
        spec["guarantee"] = guarantee
    limit = rest_amounts(q.maxResources, doc, obj, "maxResources")
    if limit:
        spec["limit"] = limit
    parent = path.rsplit(".", 1)[0] if "." in path else None
    group = None if parent in (None, "root") else parent
    if path == "root":
        cluster = rest_amounts(q.clusterResources, doc, obj, "clusterResources")
        draft.offer_capacity(TOTALS, f"{doc.where}: {obj}: clusterResources", cluster)
    elif children:
        draft.add(draft.groups, path, {"parent": group, **spec}, f"{doc.where}: {obj}")
    else:
        _rest_leaf(doc, q, path, {"group": group, **spec}, draft)
    for child in children:
        _rest_queue(doc, child, draft, notes)


def _rest_leaf(doc: Document, q: FairSchedulerQueueInfo, path: str, spec: dict, draft: Draft) -> None:
    """A leaf queue: its ``usedResources`` the usage, its ``demandResources`` (else the usage) the request."""
    obj = f"queue {path}"
    usage = rest_amounts(q.usedResources, doc, obj, "usedResources")
    demand = rest_amounts(q.demandResources, doc, obj, "demandResources") or usage
    draft.add(draft.users, path, spec, f"{doc.where}: {obj}")
    if any(demand.values()):
        draft.users[path]["request"] = demand
    if any(usage.values()):
        draft.users[path]["usage"] = usage


def _read_rest(doc: Document, info: dict, draft: Draft, notes: Notes) -> None:
    """The queues of a FairScheduler REST answer (its ``schedulerInfo``) into ``draft``."""
    fair = read(FairSchedulerInfo, info, f"{doc.where}: schedulerInfo")
    if fair.rootQueue is None:
        raise ImportFailed(f"{doc.where}: schedulerInfo: rootQueue is missing")
    notes.warn(doc, "schedulerInfo", "rootQueue", "the REST answer gives no queue weights: weight 1 assumed")
    _rest_queue(doc, fair.rootQueue, draft, notes)


def _read_nodes(docs: list[Document], draft: Draft, notes: Notes) -> None:
    """The RUNNING nodes' resources summed (:func:`_node_amounts`)."""
    total: dict[str, Decimal] = {}
    counted: dict[str, int] = {}
    for doc in docs:
        listed = read(NodesAnswer, doc.data, doc.where).nodes.node
        for k, node in enumerate(read_items(NodeInfo, listed, doc.where, "nodes.node")):
            if (node.state or "RUNNING") == "RUNNING":
                counted[doc.file] = counted.get(doc.file, 0) + 1
                amounts = _node_amounts(node, doc, f"node {node.id if node.id is not None else k}", notes)
                total = {r: total.get(r, Decimal(0)) + amounts.get(r, Decimal(0)) for r in {**total, **amounts}}
    where = ", ".join(f"{file}: {n} running nodes" for file, n in counted.items())
    draft.offer_capacity(NODES, where, total)


def _node_amounts(node: NodeInfo, doc: Document, obj: str, notes: Notes) -> dict[str, Decimal]:
    """A node's ``totalResource`` (its whole capability, with the other resource types of its
    ``resourceInformations``), else what it uses plus what it has free (older answers)."""
    if node.totalResource is not None:
        return _capacity(node.totalResource, doc, obj, "totalResource", notes)
    fields = _NODE_FIELDS.items()
    return {r: sum((_amount(getattr(node, f), doc, obj, f) for f in fs), Decimal(0)) for r, fs in fields}


def _amount(value, doc: Document, obj: str, field: str) -> Decimal:
    """A REST answer's amount, absent (or ``null``) read as 0, as ``NodeInfo`` and
    ``ResourceInformation`` start them."""
    return number(0 if value is None else value, doc, obj, field)


def _read_metrics(doc: Document, metrics: ClusterMetricsInfo, draft: Draft, notes: Notes) -> None:
    """The cluster metrics' totals: the scheduler's cluster resource, then the root queue's totals."""
    obj, field = "clusterMetrics", "totalClusterResourcesAcrossPartition"
    across = _capacity(metrics.totalClusterResourcesAcrossPartition, doc, obj, field, notes)
    draft.offer_capacity(TOTALS, f"{doc.where}: {obj}: {field}", across)
    given = {k: getattr(metrics, k) for k in _METRICS if getattr(metrics, k) is not None}
    totals = {_METRICS[k]: number(v, doc, obj, k) for k, v in given.items()}
    draft.offer_capacity(TOTALS, f"{doc.where}: {obj}: {', '.join(given)}", totals)


def _capacity(info: ResourceInfo | None, doc: Document, obj: str, field: str, notes: Notes) -> dict[str, Decimal]:
    """A ``ResourceInfo`` as a capacity: ``memory`` and ``vCores``, and every other resource type
    its ``resourceInformations`` name (a GPU, ``yarn.io/gpu``), a count: one with a unit is warned
    about (fairalloc converts memory's only)."""
    out = rest_amounts(info, doc, obj, field)
    listed = info.resourceInformations if info is not None else None
    for entry in listed.resourceInformation if listed is not None else []:
        if entry.name is None or entry.name in (MEMORY, VCORES):
            continue
        at = f"{field}.resourceInformations.{entry.name}"
        if entry.units not in (None, ""):
            notes.warn(doc, obj, at, f"counted in {entry.units!r}: not converted, not read")
        else:
            out[entry.name] = _amount(entry.value, doc, obj, at)
    return out


def _read_scheduler(doc: Document, draft: Draft, notes: Notes) -> None:
    """A scheduler answer, read by its scheduler's schema: the FairScheduler's, the Capacity
    Scheduler's (:func:`fairalloc.io.importers.yarn_capacity.read_rest`); another's is not read."""
    scheduler, info = _scheduler(doc)
    if scheduler == cs.REST_TYPE:
        cs.read_rest(doc, info, draft, notes)
    elif scheduler == FAIR:
        _read_rest(doc, info, draft, notes)
    else:
        notes.warn(doc, "schedulerInfo", "type", f"{scheduler!r} is not the FairScheduler: not read")


def _role(doc: Document) -> str | None:
    """What ``doc`` is: a scheduler answer by its scheduler's ``type`` (``fairScheduler``,
    ``capacityScheduler``, another's), the others by :func:`_kind`."""
    kind = _kind(doc)
    return (_scheduler(doc)[0] or "scheduler") if kind == "scheduler" else kind


def convert(docs: list[Document], notes: Notes) -> Draft:
    """The FairScheduler's files make a ``yarn-fair`` case, the Capacity Scheduler's (handed to
    :mod:`fairalloc.io.importers.yarn_capacity`) a ``yarn-capacity`` one; not both at once."""
    roles = [_role(doc) for doc in docs]
    capacity = [d for d, role in zip(docs, roles) if role in ("configuration", cs.REST_TYPE)]
    fair = [d for d, role in zip(docs, roles) if role in ("allocations", FAIR)]
    if capacity and fair:
        raise ImportFailed(
            f"{capacity[0].where} is the Capacity Scheduler's, {fair[0].where} the FairScheduler's: import them apart"
        )
    draft = Draft(SYSTEM, cs.POLICY if capacity else "yarn-fair", list(dict.fromkeys(d.file for d in docs)))
    for doc in docs:
        kind = _kind(doc)
        if kind == "allocations":
            _read_allocations(doc, draft, notes)
        elif kind == "configuration":
            cs.read_configuration(doc, cs.properties(doc), draft, notes)
        elif kind == "scheduler":
            _read_scheduler(doc, draft, notes)
        elif kind == "metrics":
            _read_metrics(doc, _metrics(doc), draft, notes)
    _read_nodes([d for d in docs if _kind(d) == "nodes"], draft, notes)
    draft.name_units(unit_of)
    draft.description.append(f"{len(draft.users)} leaf queues and {len(draft.groups)} parent queues.")
    return draft
