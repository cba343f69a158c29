"""Apache YuniKorn: ``queues.yaml`` (or the ConfigMap holding it) and the REST queue tree.

Read as ``models/yunikorn_fair.py`` reads a queue case (apache/yunikorn-core at
be3bb487298956dd70906fca15e577bbc12d23cb, Apache-2.0):

* **configuration** (``pkg/common/configs/config.go``, ``QueueConfig``): one partition (``default``,
  else the first; the others are warned about), its queue tree from ``root``: a queue with
  ``queues`` or ``parent: true`` is a group, the others leaf queues, named by their full path
  (``root.sandbox.alice``).  ``resources.guaranteed`` is the ``guarantee``, ``resources.max`` the
  ``limit``; the property ``priority.offset`` is the ``priority``.  Root's ``max`` is read as a
  capacity, with a warning: YuniKorn itself refuses such a configuration
  (``checkQueuesStructure``).  ``limits`` (per user and group), ``maxapplications``,
  ``placementrules``, the partition's ``preemption`` and the preemption properties
  (``preemption.policy``, ``preemption.delay``, ``quota.preemption.delay``;
  ``pkg/common/configs/configvalidator.go``) are not modelled: warned about, as is a property
  YuniKorn does not define; the properties that order a queue's own applications
  (``application.sort.policy``, ``priority.policy``, ...) are read silently (they do not change
  its share).  The ``yunikorn-configs`` / ``yunikorn-defaults`` ConfigMap's ``queues.yaml`` is
  read the same way;
* **quantities** (``pkg/common/resources/quantity.go``, ``ParseQuantity`` and ``ParseVCore``):
  whole numbers with an SI suffix (``k M G T P E``, ``Ki ... Ei``); ``vcore`` is a number of cores
  (``10`` is 10 cores, ``500m`` half a core: YuniKorn keeps 10000 and 500 milli-vcores), everything
  else in its own unit (memory in bytes).  The case counts ``vcore`` in cores, the unit its
  configuration is written in, which a bare ``--capacity vcore=16`` is read in too;
* **REST** (``pkg/webservice/dao/queue_info.go``, ``PartitionQueueDAOInfo``): the answer of
  ``/ws/v1/partition/{name}/queues`` (``queuename``, ``children``, ``isLeaf``, ``maxResource``,
  ``guaranteedResource``, ``allocatedResource`` the ``usage``, ``pendingResource``: the request is
  allocated plus pending), in YuniKorn's units (``vcore`` in milli-vcores, divided by 1000 here);
* **capacity** (``pkg/webservice/dao/node_info.go`` and ``partition_info.go``): the nodes'
  ``capacity`` summed (``/ws/v1/partition/{name}/nodes``, a list or ``nodesInfo``), the default
  partition's ``capacity.capacity`` (``/ws/v1/partitions``), root's ``maxResource`` (set by YuniKorn
  to the partition's total, ``PartitionContext.updatePartitionResource``) and a configured root
  ``max``; where they disagree the nodes count
  (:func:`fairalloc.io.importers.common.chosen_source`).

Each object is read through its schema (:mod:`fairalloc.io.importers.yunikorn_shapes`) before any
field is used, a queue tree one level at a time after its depth is bounded (``check_depth``), so a
wrong shape is one line naming the file, the queue and the field.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from fairalloc.core.errors import excerpt, shown
from fairalloc.io.importers.common import (
    CONFIGURED,
    NODES,
    TOTALS,
    Document,
    Draft,
    ImportFailed,
    Notes,
    embedded,
    number,
)
from fairalloc.io.importers.shapes import Shape, read
from fairalloc.io.importers.yunikorn_shapes import (
    NodeDAOInfo,
    NodesDAOInfo,
    PartitionConfig,
    PartitionInfo,
    PartitionQueueDAOInfo,
    QueueConfig,
    QueuesConfigMap,
    SchedulerConfig,
    check_depth,
)
from fairalloc.io.quantities import tidy

SYSTEM = "yunikorn"
VCORE = "vcore"
_QUANTITY = re.compile(r"([0-9]+)\s*((?:[kMGTPE]|[KMGTPE]i|m)?)")
_SCALE = {"": 1, "m": 1, **{s: 1000 ** (k + 1) for k, s in enumerate("kMGTPE")}}
_SCALE |= {f"{s}i": 1024 ** (k + 1) for k, s in enumerate("KMGTPE")}
_CONFIGMAPS = ("yunikorn-configs", "yunikorn-defaults")
#: queue properties (``pkg/common/configs/configvalidator.go``, read by ``Queue.applyConf`` in
#: ``pkg/scheduler/objects/queue.go``): when a queue preempts, which the fair share does not model ...
_PREEMPTION = ("preemption.policy", "preemption.delay", "quota.preemption.delay")
#: ... and how it orders its own applications, which does not change its share
_ORDERING = (
    "application.sort.policy",
    "application.sort.priority",
    "application.unschedasks.backoff",
    "application.unschedasks.backoff.delay",
    "priority.policy",
)
_QUEUE_KEYS = {"name", "parent", "resources", "properties", "queues", "submitacl", "adminacl", "childtemplate"}


def unit_of(resource: str) -> str:
    return "cores" if resource == VCORE else "bytes" if resource in ("memory", "ephemeral-storage") else "count"


def quantity(value, resource: str, where: str) -> Decimal:
    """A YuniKorn configuration quantity in the case's unit (cores for ``vcore``)."""
    match = _QUANTITY.fullmatch(str(value).strip()) if isinstance(value, (str, int)) else None
    if match is None or isinstance(value, bool) or (match.group(2) == "m" and resource != VCORE):
        raise ImportFailed(f"{where}: {value!r} is not a YuniKorn quantity (whole number, suffix such as G or Gi)")
    amount = int(number(match.group(1), where)) * _SCALE[match.group(2)]
    return tidy(Decimal(amount) / 1000) if resource == VCORE and match.group(2) == "m" else Decimal(amount)


def _amounts(mapping: dict[str, Any], where: str, rest: bool) -> dict[str, Decimal]:
    """Quantities by resource (their shape read by the schema): YuniKorn's configuration
    quantities, or (``rest``) the REST answers' whole numbers."""
    if rest:  # REST answers are integers in YuniKorn's units: milli-vcores, bytes
        bad = [r for r, v in mapping.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0]
        if bad:
            raise ImportFailed(f"{where}.{bad[0]}: {excerpt(mapping[bad[0]])} is not a whole number >= 0")
        read = {r: number(v, f"{where}.{r}") for r, v in mapping.items()}
        return {r: tidy(v / 1000) if r == VCORE else v for r, v in read.items()}
    return {r: quantity(v, r, f"{where}.{r}") for r, v in mapping.items()}


def _configs(docs: list[Document]) -> list[Document]:
    out = []
    for doc in docs:
        if doc.kind == "ConfigMap" and doc.name in _CONFIGMAPS:
            read(QueuesConfigMap, doc.data, f"{doc.where}: {doc.label}")
            out += embedded(doc, "queues.yaml")
        elif isinstance(doc.data, dict) and isinstance(doc.data.get("partitions"), list):
            out.append(doc)
    return out


def _items(docs: list[Document], key: str) -> list[tuple[Document, dict]]:
    """The REST objects with ``key`` (an answer is one object or a list of them)."""
    out = []
    for doc in docs:
        items = doc.data if isinstance(doc.data, list) else [doc.data]
        out += [(doc, item) for item in items if isinstance(item, dict) and key in item]
    return out


def _rest_trees(docs: list[Document]) -> list[tuple[Document, dict]]:
    """The queue trees (``PartitionQueueDAOInfo``), by the field that tells them apart."""
    return _items(docs, "queuename")


def _rest_nodes(docs: list[Document]) -> list[tuple[Document, dict]]:
    """The nodes of ``/ws/v1/partition/{name}/nodes``: a list, or ``nodesInfo`` of ``NodesDAOInfo``."""
    wrapped = [
        Document(d.file, d.index, read(NodesDAOInfo, d.data, d.where).nodesInfo, d.format)
        for d in docs
        if isinstance(d.data, dict) and "nodesInfo" in d.data
    ]
    return _items([*docs, *wrapped], "nodeID")


def _rest_partitions(docs: list[Document]) -> list[tuple[Document, dict]]:
    return [(d, p) for d, p in _items(docs, "clusterId") if "capacity" in p]


def detect(docs: list[Document]) -> int:
    return len(_configs(docs)) + len(_rest_trees(docs)) + len(_rest_nodes(docs)) + len(_rest_partitions(docs))


def _config_queue(doc: Document, q: QueueConfig, parent: str | None, draft: Draft, notes: Notes, k: int = 0) -> None:
    path = q.name if parent is None else f"{parent}.{q.name}"
    where, obj = doc.where, f"queue {path}"
    for key in _given(q):
        if key not in _QUEUE_KEYS:
            notes.warn(doc, obj, key, "not modelled by fairalloc (YuniKorn's fair sorting does not read it)")
    spec: dict = {}
    for field, key in (("guarantee", "guaranteed"), ("limit", "max")):
        if getattr(q.resources, key):
            spec[field] = _amounts(getattr(q.resources, key), f"{where}: {obj}: resources.{key}", rest=False)
    offset = _properties(doc, obj, q.properties, notes)
    if offset is not None:
        spec["priority"] = int(number(offset, f"{where}: {obj}: properties.priority.offset", negative=True, whole=True))
    if parent is None:  # root: its max is a capacity; it is not a node of the case
        draft.offer_capacity(CONFIGURED, f"{where}: {obj}: resources.max", spec.get("limit", {}))
        if spec.get("limit"):  # configvalidator.go, Validate -> checkQueuesStructure
            notes.warn(doc, obj, "resources.max", _ROOT_MAX)
        if spec.get("guarantee"):
            notes.warn(doc, obj, "resources.guaranteed", "root's guarantee means nothing: not read")
    elif q.queues or q.parent:
        draft.add(draft.groups, path, {"parent": _parent(parent), **spec}, f"{where}: {obj} (queues[{k}])")
    else:
        draft.add(draft.users, path, {"group": _parent(parent), **spec}, f"{where}: {obj} (queues[{k}])")
    for j, child in enumerate(q.queues):  # each a mapping with a name (NamedQueue)
        below = read(QueueConfig, child.model_dump(), f"{where}: queue {shown(f'{path}.{child.name}')}")
        _config_queue(doc, below, path, draft, notes, j)


def _given(shape: Shape) -> list[str]:
    """The fields an object gives (its schema's, in their order, then the others as written)."""
    return [f for f in type(shape).model_fields if f in shape.model_fields_set] + list(shape.model_extra or {})


def _properties(doc: Document, obj: str, properties: dict[str, Any], notes: Notes) -> Any:
    """The queue's ``priority.offset``; its preemption settings and unknown keys are warned about,
    the application-ordering ones (inside the queue, not its share) read silently."""
    for key in properties:
        if key in _PREEMPTION:
            notes.warn(doc, obj, f"properties.{key}", "preemption is not modelled: the entitlement is the fair share")
        elif key not in _ORDERING and key != "priority.offset":
            notes.warn(doc, obj, f"properties.{key}", "not a queue property YuniKorn defines: not read")
    return properties.get("priority.offset")


#: YuniKorn rejects a configuration whose root queue has resources (``checkQueuesStructure``)
_ROOT_MAX = "YuniKorn refuses a root queue with resource limits: read as a capacity all the same"


def _parent(path: str | None) -> str | None:
    return None if path in (None, "root") else path


def _read_config(doc: Document, draft: Draft, notes: Notes) -> None:
    partitions = read(SchedulerConfig, doc.data, doc.where).partitions  # not recursive: NamedQueue
    if not partitions:
        raise ImportFailed(f"{doc.where}: partitions: no partition")
    check_depth(doc.data["partitions"], "queues", doc.where, "name", above=-2)  # before any queue is read
    chosen = next((p for p in partitions if p.name == "default"), partitions[0])
    for p in partitions:
        if p is not chosen:
            notes.warn(doc, f"partition {p.name}", "", "fairalloc imports one partition (default): not read")
    for key in ("limits", "placementrules", "preemption"):  # preemption: enabled, quotapreemptionenabled
        if getattr(chosen, key) != PartitionConfig.model_fields[key].default:
            notes.warn(doc, f"partition {chosen.name}", key, "not modelled by fairalloc: not read")
    for top in chosen.queues:
        if top.name != "root":
            raise ImportFailed(f"{doc.where}: partition {chosen.name}: the top queue must be 'root'")
        _config_queue(doc, read(QueueConfig, top.model_dump(), f"{doc.where}: queue root"), None, draft, notes)


def _rest_queue(doc: Document, q: PartitionQueueDAOInfo, draft: Draft, notes: Notes) -> None:
    path = q.queuename
    if not path:
        raise ImportFailed(f"{doc.where}: a queue without queuename")
    where = f"{doc.where}: queue {path}"
    if path != "root" and q.guaranteedResource and not q.parent and "." not in path:
        raise ImportFailed(f"{where}: a queue below root needs a dotted path name")
    spec: dict = {}
    if q.guaranteedResource:
        spec["guarantee"] = _amounts(q.guaranteedResource, f"{where}: guaranteedResource", rest=True)
    if q.maxResource:
        spec["limit"] = _amounts(q.maxResource, f"{where}: maxResource", rest=True)
    if q.priorityOffset:
        spec["priority"] = int(number(q.priorityOffset, f"{where}: priorityOffset", negative=True, whole=True))
    _properties(doc, f"queue {path}", q.properties, notes)
    usage = _amounts(q.allocatedResource, f"{where}: allocatedResource", rest=True)
    pending = _amounts(q.pendingResource, f"{where}: pendingResource", rest=True)
    parent = q.parent or ".".join(path.split(".")[:-1]) or None
    if path == "root":
        draft.offer_capacity(CONFIGURED, f"{where}: maxResource", spec.get("limit", {}))
    elif q.children or not q.isLeaf:
        draft.add(draft.groups, path, {"parent": _parent(parent), **spec}, where)
    else:
        request = {r: usage.get(r, Decimal(0)) + pending.get(r, Decimal(0)) for r in {**usage, **pending}}
        spec |= {"request": request or None, "usage": usage or None}
        draft.add(draft.users, path, {"group": _parent(parent), **spec}, where)
    for child in q.children:  # each a mapping with a text queuename (NamedQueueDAO)
        below = read(PartitionQueueDAOInfo, child.model_dump(), f"{doc.where}: queue {shown(child.queuename)}")
        _rest_queue(doc, below, draft, notes)


def _rest_capacity(docs: list[Document], draft: Draft, notes: Notes) -> None:
    """The nodes' capacities summed, and the default partition's capacity."""
    total: dict[str, Decimal] = {}
    nodes = _rest_nodes(docs)
    for doc, raw in nodes:
        node = read(NodeDAOInfo, raw, f"{doc.where}: node {shown(raw.get('nodeID'))}")
        where = f"{doc.where}: node {node.nodeID}: capacity"
        for r, v in _amounts(node.capacity, where, rest=True).items():
            total[r] = total.get(r, Decimal(0)) + v
    files = ", ".join(dict.fromkeys(doc.where for doc, _ in nodes))
    draft.offer_capacity(NODES, f"{files}: {len(nodes)} nodes' capacity", total)
    partitions = [
        (doc, read(PartitionInfo, raw, f"{doc.where}: partition {shown(raw.get('name'))}"))
        for doc, raw in _rest_partitions(docs)
    ]
    chosen = next((p for p in partitions if p[1].name == "default"), partitions[0] if partitions else None)
    for doc, p in partitions:
        if chosen is None or p is not chosen[1]:
            notes.warn(doc, f"partition {p.name}", "capacity", "fairalloc imports one partition (default)")
    if chosen is not None:
        doc, p = chosen
        where = f"{doc.where}: partition {p.name}: capacity.capacity"
        draft.offer_capacity(TOTALS, where, _amounts(p.capacity.capacity, where, rest=True))


def convert(docs: list[Document], notes: Notes) -> Draft:
    draft = Draft(SYSTEM, "yunikorn-fair", list(dict.fromkeys(d.file for d in docs)))
    for doc in _configs(docs):
        _read_config(doc, draft, notes)
    for doc, tree in _rest_trees(docs):
        check_depth([tree], "children", doc.where, "queuename")
        _rest_queue(
            doc, read(PartitionQueueDAOInfo, tree, f"{doc.where}: queue {shown(tree['queuename'])}"), draft, notes
        )
    _rest_capacity(docs, draft, notes)
    draft.users = {u: {k: v for k, v in spec.items() if v is not None} for u, spec in draft.users.items()}
    draft.name_units(unit_of)
    draft.description.append(f"{len(draft.users)} leaf queues and {len(draft.groups)} parent queues.")
    return draft
