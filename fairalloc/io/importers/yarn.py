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
"""

from __future__ import annotations

from decimal import Decimal
from xml.etree.ElementTree import Element

from fairalloc.io.importers import yarn_capacity as cs
from fairalloc.io.importers.common import NODES, TOTALS, Document, Draft, ImportFailed, Notes, listing, mapping
from fairalloc.io.importers.common import number as quantity_number
from fairalloc.io.importers.yarn_capacity import number, rest_amounts
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
#: ClusterMetricsInfo's totals, by resource
_METRICS = {"totalMB": MEMORY, "totalVirtualCores": VCORES}
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
    """An XML REST answer as its JSON twin: repeated ``queue`` (and ``resourceInformation``) elements
    as a list."""
    children = list(element)
    if not children:
        return (element.text or "").strip()
    out: dict = {}
    for child in children:
        value = _plain(child)
        if child.tag in ("queue", "resourceInformation"):  # the elements a JSON answer lists
            out.setdefault(child.tag, []).append(value)
        else:
            out[child.tag] = value
    for key, value in element.attrib.items():
        if key.endswith("}type"):
            out["type"] = value
    return out


def _metrics(doc: Document) -> dict | None:
    """The ``clusterMetrics`` of a ``/ws/v1/cluster/metrics`` answer (JSON, or XML as its JSON twin)."""
    if isinstance(doc.data, Element):
        return _plain(doc.data) if doc.data.tag == "clusterMetrics" else None
    metrics = doc.data.get("clusterMetrics") if isinstance(doc.data, dict) else None
    return metrics if isinstance(metrics, dict) else None


def detect(docs: list[Document]) -> int:
    return sum(
        1
        for d in docs
        if _is_allocations(d)
        or _scheduler_info(d) is not None
        or _nodes(d)
        or _metrics(d) is not None
        or cs.properties(d) is not None
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
    if element.tag == "pool":
        why = "the older name of <queue> (AllocationFileLoaderService reads both): read as a queue"
        notes.warn(doc, obj, "<pool>", why)
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
                leaf = not children and element.get("type") != "parent" and path != "root"
                notes.warn(doc, obj, tag, _APPS if leaf else _policy_said(text))
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
    elif children:
        draft.add(draft.groups, path, {"parent": group, **spec}, _written(doc, element, parent))
    else:
        if element.get("type") == "parent":
            notes.warn(doc, obj, "type", _CHILDLESS)
        draft.add(draft.users, path, {"group": group, **spec}, _written(doc, element, parent))
    for child in children:
        _xml_queue(doc, child, path, draft, notes, default_max)


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
    top = doc.data
    default = top.find("queueMaxResourcesDefault")
    default_max = (
        _resources(default.text, doc, "allocations", "queueMaxResourcesDefault") if default is not None else {}
    )
    if top.find("defaultQueueSchedulingPolicy") is None:  # SchedulingPolicy.DEFAULT_POLICY
        notes.warn(
            doc,
            "allocations",
            "defaultQueueSchedulingPolicy",
            "not given: the default is 'fair'; " + _policy_said("fair"),
        )
    for child in top:
        if child.tag in ("queue", "pool"):
            _xml_queue(doc, child, "", draft, notes, default_max)
        elif child.tag == "user":
            notes.warn(doc, f"user {child.get('name')}", "", "per-user limits are not modelled")
        elif child.tag == "defaultQueueSchedulingPolicy":
            if (child.text or "").strip() != "drf":
                notes.warn(doc, "allocations", child.tag, _policy_said((child.text or "").strip()))
        elif isinstance(child.tag, str) and child.tag not in _TOP_SILENT | {"queueMaxResourcesDefault"}:
            notes.warn(doc, "allocations", child.tag, "not an allocation-file element fairalloc knows: not read")


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


def _rest_queue(doc: Document, q: dict, draft: Draft, notes: Notes) -> None:
    path = q.get("queueName")
    if not isinstance(path, str):
        raise ImportFailed(f"{doc.where}: a queue without queueName")
    obj = f"queue {path}"
    policy = q.get("schedulingPolicy")
    kids = mapping(q.get("childQueues"), f"{doc.where}: {obj}: childQueues")
    children = [mapping(c, f"{doc.where}: {obj}: childQueues.queue[{k}]") for k, c in enumerate(
        listing(kids.get("queue"), f"{doc.where}: {obj}: childQueues.queue"))]  # fmt: skip
    if isinstance(policy, str) and policy != "drf":
        notes.warn(doc, obj, "schedulingPolicy", _policy_said(policy) if children or path == "root" else _APPS)
    spec: dict = {}
    guarantee = rest_amounts(q.get("minResources"), doc, obj, "minResources")
    if any(guarantee.values()):
        spec["guarantee"] = guarantee
    if q.get("maxResources"):
        spec["limit"] = rest_amounts(q.get("maxResources"), doc, obj, "maxResources")
    parent = path.rsplit(".", 1)[0] if "." in path else None
    group = None if parent in (None, "root") else parent
    if path == "root":
        cluster = rest_amounts(q.get("clusterResources"), doc, obj, "clusterResources")
        draft.offer_capacity(TOTALS, f"{doc.where}: {obj}: clusterResources", cluster)
    elif children:
        draft.add(draft.groups, path, {"parent": group, **spec}, f"{doc.where}: {obj}")
    else:
        usage = rest_amounts(q.get("usedResources"), doc, obj, "usedResources")
        demand = rest_amounts(q.get("demandResources"), doc, obj, "demandResources") or usage
        draft.add(draft.users, path, {"group": group, **spec}, f"{doc.where}: {obj}")
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


def _read_nodes(docs: list[Document], draft: Draft, notes: Notes) -> None:
    """The RUNNING nodes' resources summed (:func:`_node_amounts`)."""
    total: dict[str, Decimal] = {}
    counted: dict[str, int] = {}
    for doc in docs:
        for k, node in enumerate(_nodes(doc)):
            if not isinstance(node, dict):
                raise ImportFailed(f"{doc.where}: nodes.node[{k}]: must be a mapping (got {node!r:.40})")
            if node.get("state", "RUNNING") == "RUNNING":
                counted[doc.file] = counted.get(doc.file, 0) + 1
                amounts = _node_amounts(node, doc, f"node {node.get('id', k)}", notes)
                total = {r: total.get(r, Decimal(0)) + amounts.get(r, Decimal(0)) for r in {**total, **amounts}}
    where = ", ".join(f"{file}: {n} running nodes" for file, n in counted.items())
    draft.offer_capacity(NODES, where, total)


def _node_amounts(node: dict, doc: Document, obj: str, notes: Notes) -> dict[str, Decimal]:
    """A node's ``totalResource`` (its whole capability, with the other resource types of its
    ``resourceInformations``), else what it uses plus what it has free (older answers)."""
    if isinstance(node.get("totalResource"), dict):
        return _capacity(node["totalResource"], doc, obj, "totalResource", notes)
    return {r: sum((number(node.get(f, 0), doc, obj, f) for f in fs), Decimal(0)) for r, fs in _NODE_FIELDS.items()}


def _read_metrics(doc: Document, metrics: dict, draft: Draft, notes: Notes) -> None:
    """The cluster metrics' totals: the scheduler's cluster resource, then the root queue's totals."""
    obj, field = "clusterMetrics", "totalClusterResourcesAcrossPartition"
    across = _capacity(metrics.get(field), doc, obj, field, notes)
    draft.offer_capacity(TOTALS, f"{doc.where}: {obj}: {field}", across)
    given = [k for k in _METRICS if metrics.get(k) is not None]
    totals = {_METRICS[k]: number(metrics[k], doc, obj, k) for k in given}
    draft.offer_capacity(TOTALS, f"{doc.where}: {obj}: {', '.join(given)}", totals)


def _capacity(info, doc: Document, obj: str, field: str, notes: Notes) -> dict[str, Decimal]:
    """A ``ResourceInfo`` as a capacity: ``memory`` and ``vCores``, and every other resource type
    its ``resourceInformations`` name (a GPU, ``yarn.io/gpu``), a count: one with a unit is warned
    about (fairalloc converts memory's only)."""
    out = rest_amounts(info, doc, obj, field)
    listed = (info.get("resourceInformations") or {}) if isinstance(info, dict) else {}
    entries = listed.get("resourceInformation") if isinstance(listed, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or name in (MEMORY, VCORES):
            continue
        at = f"{field}.resourceInformations.{name}"
        if entry.get("units") not in (None, ""):
            notes.warn(doc, obj, at, f"counted in {entry['units']!r}: not converted, not read")
        else:
            out[name] = number(entry.get("value", 0), doc, obj, at)
    return out


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
        elif (metrics := _metrics(doc)) is not None:
            _read_metrics(doc, metrics, draft, notes)
    _read_nodes(docs, draft, notes)
    draft.name_units(unit_of)
    draft.description.append(f"{len(draft.users)} leaf queues and {len(draft.groups)} parent queues.")
    return draft
