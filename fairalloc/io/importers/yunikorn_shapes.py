"""The shapes of the objects the YuniKorn importer reads (:mod:`fairalloc.io.importers.yunikorn`).

Field names as YuniKorn writes them (apache/yunikorn-core at be3bb487298956dd70906fca15e577bbc12d23cb,
Apache-2.0): the configuration's structs in ``pkg/common/configs/config.go`` (``PartitionConfig``,
``QueueConfig``, ``Resources``, ``Limit``, ``PlacementRule``, ``NodeSortingPolicy``,
``PartitionPreemptionConfig``; yaml.v3 reads a field by its lowercased Go name, ``placementrules``,
``maxresources``), the REST answers' in ``pkg/webservice/dao/`` (``queue_info.go``
``PartitionQueueDAOInfo``, ``node_info.go`` ``NodesDAOInfo`` and ``NodeDAOInfo``,
``partition_info.go`` ``PartitionInfo`` and ``PartitionCapacity``; their ``json`` tags).

Queues nest (``queues`` of a ``QueueConfig``, ``children`` of a ``PartitionQueueDAOInfo``): a queue's
shape holds its child queues as named mappings only (:class:`NamedQueue`, :class:`NamedQueueDAO`),
and the importer reads each child through the full shape in turn, one level at a time and named by
its path, after :func:`check_depth` has bounded the tree without recursion; so a tree of any depth
never nests a validation.  Quantities stay as written, for the importer's quantity parser and the
numeric gate; a property's value is one value (text or a number: YuniKorn's ``map[string]string``,
which a YAML number also fills), never a list or a mapping.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BeforeValidator, Field, StrictBool

from fairalloc.core import limits
from fairalloc.core.errors import shown
from fairalloc.io.importers.common import ImportFailed
from fairalloc.io.importers.shapes import Items, Maybe, ObjectMeta, Part, Shape, Table

__all__ = [
    "SchedulerConfig",
    "PartitionConfig",
    "NamedQueue",
    "QueueConfig",
    "QueuesConfigMap",
    "NamedQueueDAO",
    "PartitionQueueDAOInfo",
    "NodesDAOInfo",
    "NodeDAOInfo",
    "PartitionInfo",
    "check_depth",
]


def _one_value(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        raise ValueError("must be one value (text or a number)")
    return value


T = TypeVar("T")


def _true_or_false(value: Any) -> Any:
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


#: a REST boolean: ``true``/``false``, the only values Go's JSON decoder takes, or the same as text
#: (YuniKorn's documented examples write ``"isLeaf": "true"``); not ``"yes"``, not 1
RestBool = Annotated[StrictBool, BeforeValidator(_true_or_false)]

#: a property's value (``map[string]string``): text or a number, for the numeric gate to read
Value = Annotated[Any, AfterValidator(_one_value)]


# -- queues.yaml: pkg/common/configs/config.go -----------------------------------------------------


class Resources(Shape):
    """``Resources``: quantities by resource name (``map[string]string``), read by the importer's
    quantity parser."""

    guaranteed: Table[Any] = {}
    max: Table[Any] = {}


class Limit(Shape):
    """``Limit`` (per user and group; warned about, not modelled)."""

    limit: Maybe = None
    users: Items[Maybe] = []
    groups: Items[Maybe] = []
    maxresources: Table[Any] = {}


class ChildTemplate(Shape):
    """``ChildTemplate`` (what a placement rule's new queues get; not modelled)."""

    properties: Table[Value] = {}
    resources: Part[Resources] = Resources()


class NamedQueue(Shape):
    """A ``QueueConfig`` as its parent (or the partition) lists it: a mapping with a ``name``; the
    importer reads the rest as a :class:`QueueConfig` named by the queue's path."""

    name: str


class QueueConfig(Shape):
    """``QueueConfig``: one queue; its ``queues`` are :class:`NamedQueue` here, each read as a
    ``QueueConfig`` in turn by the importer (one level at a time)."""

    name: str
    parent: StrictBool | None = None  # yaml.v3 refuses text for a bool
    resources: Part[Resources] = Resources()
    properties: Table[Value] = {}
    submitacl: Maybe = None
    adminacl: Maybe = None
    childtemplate: Part[ChildTemplate] = ChildTemplate()
    limits: Items[Limit] = []
    queues: Items[NamedQueue] = []


class Filter(Shape):
    """``Filter`` of a placement rule."""

    type: Maybe = None
    users: Items[Maybe] = []
    groups: Items[Maybe] = []


class PlacementRule(Shape):
    """``PlacementRule`` (not modelled): its ``parent`` rule is a mapping, not read further."""

    name: Maybe = None
    create: StrictBool | None = None
    filter: Part[Filter] = Filter()
    parent: Table[Any] | None = None
    value: Maybe = None


class PartitionPreemptionConfig(Shape):
    """``PartitionPreemptionConfig`` (not modelled)."""

    enabled: StrictBool | None = None
    quotapreemptionenabled: StrictBool | None = None


class NodeSortingPolicy(Shape):
    """``NodeSortingPolicy`` (where YuniKorn places pods; not a share)."""

    type: Maybe = None
    resourceweights: Table[Any] = {}


class PartitionConfig(Shape):
    """``PartitionConfig``: its ``queues`` (root) are :class:`NamedQueue`, read as ``QueueConfig``."""

    name: Maybe = None
    queues: Items[NamedQueue] = []
    placementrules: Items[PlacementRule] = []
    limits: Items[Limit] = []
    preemption: Part[PartitionPreemptionConfig] = PartitionPreemptionConfig()
    nodesortpolicy: Part[NodeSortingPolicy] = NodeSortingPolicy()


class SchedulerConfig(Shape):
    """``SchedulerConfig``: the whole ``queues.yaml``."""

    partitions: Items[PartitionConfig] = []


class ConfigMapData(Shape):
    """The data of the ``yunikorn-configs`` / ``yunikorn-defaults`` ConfigMap (apache/yunikorn-k8shim
    at 010e23b51fad31fa238233abbc038428bd673ee5, ``pkg/conf/schedulerconf.go``,
    ``FlattenConfigMaps``: the ConfigMaps' data as one map of text): ``queues.yaml`` (the default
    policy group's key) is the configuration's text; the other keys (``log.level``, ``service.*``)
    are not read."""

    queues_yaml: Maybe = Field(None, alias="queues.yaml")


class QueuesConfigMap(Shape):
    """The ConfigMap holding ``queues.yaml`` (``k8s.io/api/core/v1`` ``ConfigMap``)."""

    metadata: Part[ObjectMeta] = ObjectMeta()
    data: Part[ConfigMapData] = ConfigMapData.model_validate({})


# -- REST answers: pkg/webservice/dao/ -------------------------------------------------------------


class NamedQueueDAO(Shape):
    """A ``PartitionQueueDAOInfo`` as its parent lists it in ``children``: a mapping whose
    ``queuename`` (the queue's path) is text; the importer reads the rest as a
    ``PartitionQueueDAOInfo``."""

    queuename: Maybe = None


class PartitionQueueDAOInfo(Shape):
    """``PartitionQueueDAOInfo`` (``/ws/v1/partition/{name}/queues``): amounts are whole numbers in
    YuniKorn's units (``map[string]int64``, read by the numeric gate); its ``children`` are
    :class:`NamedQueueDAO` here, each read as a ``PartitionQueueDAOInfo`` in turn.  YuniKorn's
    documented examples write ``isLeaf`` as the text "true" or "false", which reads as the boolean
    (:data:`RestBool`)."""

    queuename: Maybe = None
    parent: Maybe = None
    #: ``null`` reads as false, as Go's decoder leaves it
    isLeaf: RestBool | None = True
    maxResource: Table[Any] = {}
    guaranteedResource: Table[Any] = {}
    allocatedResource: Table[Any] = {}
    pendingResource: Table[Any] = {}
    properties: Table[Value] = {}
    priorityOffset: Value = None
    children: Items[NamedQueueDAO] = []


class NodeDAOInfo(Shape):
    """``NodeDAOInfo`` (one node of ``/ws/v1/partition/{name}/nodes``)."""

    nodeID: Maybe = None
    capacity: Table[Any] = {}


class NodesDAOInfo(Shape):
    """``NodesDAOInfo``: a partition's nodes as one object (``nodesInfo``)."""

    nodesInfo: Items[Table[Any]] = []


class PartitionCapacity(Shape):
    """``PartitionCapacity``: the partition's ``capacity`` (the nodes' total)."""

    capacity: Table[Any] = {}


class PartitionInfo(Shape):
    """``PartitionInfo`` (one partition of ``/ws/v1/partitions``)."""

    name: Maybe = None
    capacity: Part[PartitionCapacity] = PartitionCapacity()


# -- the depth of a queue tree, bounded before it is read --------------------------------------------


def check_depth(tops: Any, key: str, where: str, label: str, above: int = -1) -> None:
    """Refuse a queue tree in which a queue with children has more than
    :data:`~fairalloc.core.limits.MAX_TREE_DEPTH` queues above it (root aside), before any of it is
    validated: one line at ``where`` naming the queue (its ``label`` field) and the limit.  The
    objects ``tops`` (a list; anything else is left for the schemas to name) and their ``key`` lists
    are walked without recursion, the first ``above`` levels below the count (-1: ``tops`` are root
    queues, -2: partitions holding them).  The case loader refuses such a tree (its groups' depth),
    and the importer walks it recursively, as YuniKorn does (``Queue.GetPartitionQueueDAOInfo``)."""
    stack = [(top, above) for top in tops] if isinstance(tops, list) else []
    while stack:
        queue, depth = stack.pop()
        children = queue.get(key) if isinstance(queue, dict) else None
        if not isinstance(children, list) or not children:
            continue
        if depth > limits.MAX_TREE_DEPTH:
            raise ImportFailed(
                f"{where}: queue {shown(queue.get(label))}: more than {limits.MAX_TREE_DEPTH} queues above it "
                "(root aside); fairalloc walks hierarchies recursively and refuses deeper ones (MAX_TREE_DEPTH)"
            )
        stack += [(child, depth + 1) for child in children]
