"""The shapes of what the YARN importers read (:mod:`~fairalloc.io.importers.yarn`,
:mod:`~fairalloc.io.importers.yarn_capacity`): the ResourceManager's REST answers and the two
schedulers' XML files, each object checked against its schema (:mod:`.shapes`) before a field is used.

**REST answers** (JSON, or XML turned into its JSON twin by :func:`rest_twin`): one schema per DAO
class of apache/hadoop (Apache-2.0), field names as JAXB writes them, in
``hadoop-yarn-project/hadoop-yarn/hadoop-yarn-server/hadoop-yarn-server-resourcemanager/src/main/java/
org/apache/hadoop/yarn/server/resourcemanager/webapp/dao/`` (each schema names its class and commit).
A queue is an object of its own: a queue list holds mappings, and the importer reads each through the
queue's schema as it walks the tree, so a message names the queue (``queue root.a: childQueues.queue[1]:
minResources: must be a mapping``), not a path from the root of the answer.

**XML files** (``fair-scheduler.xml``, ``capacity-scheduler.xml``): the schema is the table of
elements Hadoop's loader reads as text (``getTrimmedTextData``: the element's first child, a text node;
``AllocationFileQueueParser``, ``AllocationFileParser``, ``Configuration``).  :func:`xml_fields`
turns one element into the mapping of its child elements by tag, each its text, or, when it holds
elements of its own, their mapping: a field that must be text and was given structure is then one
line naming the file, the queue and the element.  Three things stay outside the mapping, each for a
reason: attributes (``name``, ``type``) are text by XML's own grammar, so they have no shape to check
(a missing or empty ``name`` is a value the importer refuses, naming the parent); nested ``<queue>``
and ``<pool>`` elements are queues of their own, read through the same schema under their own name;
and elements the loader does not know are kept as extra fields, for the importer's warnings.  A
repeated element reads as its last, as Hadoop's loaders keep the last value they meet.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar
from xml.etree.ElementTree import Element

from pydantic import BeforeValidator

from fairalloc.io.importers.shapes import Items, Maybe, Shape, read

__all__ = [
    "read_items",
    "xml_fields",
    "rest_twin",
    "AllocationQueue",
    "Allocations",
    "ConfigurationProperty",
    "ResourceInfo",
    "SchedulerTypeInfo",
    "SchedulerInfo",
    "FairSchedulerInfo",
    "FairSchedulerQueueInfo",
    "CapacitySchedulerInfo",
    "CapacitySchedulerQueueInfo",
    "NodesAnswer",
    "NodeInfo",
    "MetricsAnswer",
]

T = TypeVar("T")
S = TypeVar("S", bound=Shape)

#: a list that older ResourceManagers write as its one item when it has one (Jersey's "mapped" JSON)
OneOrMany = Annotated[list[T], BeforeValidator(lambda v: [] if v is None else [v] if isinstance(v, dict) else v)]


def read_items(shape: type[S], items: list, where: str, field: str) -> list[S]:
    """Each object of the list ``field`` (child queues, nodes) read as ``shape``, named by its index
    (``queue root: childQueues.queue[1].name: ...``; a null item is refused): the objects are read
    one by one as the tree is walked."""
    return [read(shape, item, where, f"{field}[{k}]") for k, item in enumerate(items)]


# -- XML as mappings --------------------------------------------------------------------------------
def xml_fields(element: Element, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The child elements of ``element`` by tag (those in ``skip`` left out): each its stripped
    text, or the mapping of its own child elements (see the module docstring)."""
    out: dict[str, Any] = {}
    for child in element:
        if isinstance(child.tag, str) and child.tag not in skip:  # comments have no tag
            out[child.tag] = xml_fields(child) if len(child) else (child.text or "").strip()
    return out


#: the elements a JSON REST answer writes as a list, which its XML twin repeats
_LISTED = ("queue", "resourceInformation", "resourceUsagesByPartition")


def rest_twin(element: Element) -> Any:
    """An XML REST answer as its JSON twin: the repeated elements JSON lists as a list, the
    ``xsi:type`` attribute as ``type``; an empty element is absent (JAXB writes an empty list so)."""
    children = list(element)
    if not children:
        return (element.text or "").strip() or None
    out: dict = {}
    for child in children:
        value = rest_twin(child)
        if child.tag in _LISTED:
            out.setdefault(child.tag, []).append(value)
        else:
            out[child.tag] = value
    for key, value in element.attrib.items():
        if key.endswith("}type"):
            out["type"] = value
    return out


# -- the allocation file (FairScheduler) ------------------------------------------------------------
class AllocationQueue(Shape):
    """A ``<queue>`` (or ``<pool>``) of ``fair-scheduler.xml``: the elements the importer reads, each
    text (``AllocationFileQueueParser.loadQueue``, ``scheduler/fair/allocation/
    AllocationFileQueueParser.java`` at d4f968b6b13acc4d2a5198033e46e76ee23478e6)."""

    weight: Maybe = None
    minResources: Maybe = None
    maxResources: Maybe = None
    maxChildResources: Maybe = None
    schedulingPolicy: Maybe = None


class Allocations(Shape):
    """The top ``<allocations>`` element: the defaults the importer reads, each text
    (``AllocationFileParser.parse``, ``scheduler/fair/allocation/AllocationFileParser.java`` at
    ee91492f16528292c4ad173dd018807a63fe6106)."""

    queueMaxResourcesDefault: Maybe = None
    defaultQueueSchedulingPolicy: Maybe = None


# -- capacity-scheduler.xml -------------------------------------------------------------------------
class ConfigurationProperty(Shape):
    """A ``<property>`` of a Hadoop configuration file: ``name`` and ``value``, each text
    (hadoop-common ``org/apache/hadoop/conf/Configuration.java``, ``Parser``, at
    f6de2b741ed75aecdd5244ce4a360b9780b53251)."""

    name: Maybe = None
    value: Maybe = None


# -- REST: resources --------------------------------------------------------------------------------
class ResourceInformation(Shape):
    """One resource type of a ``ResourceInfo`` (hadoop-yarn-api ``records/ResourceInformation.java``
    at 5b55a74bad2fe02bc41ffc3e13d46468d4c92d22): its amount a number for the numeric gate."""

    name: Maybe = None
    value: Any = None
    units: Maybe = None


class ResourceInformationsInfo(Shape):
    """``ResourceInformationsInfo.java`` at 9193ed22dd9eb00f82573a9ba763db72ee65aad0."""

    resourceInformation: OneOrMany[ResourceInformation] = []


class ResourceInfo(Shape):
    """``ResourceInfo.java`` (``memory``, ``vCores``; ``resourceInformations`` in the versions with
    resource types), its amounts numbers for the numeric gate."""

    memory: Any = None
    vCores: Any = None
    resourceInformations: ResourceInformationsInfo | None = None


# -- REST: /ws/v1/cluster/scheduler ---------------------------------------------------------------
class SchedulerTypeInfo(Shape):
    """The answer of ``/ws/v1/cluster/scheduler`` (``SchedulerTypeInfo.java`` at
    a5cf985bf501fd032124d121dcae80538db9e380; its root element ``scheduler`` unwrapped): the
    ``schedulerInfo``, a mapping read by its scheduler's schema."""

    schedulerInfo: dict[str, Any] | None = None


class SchedulerInfo(Shape):
    """A ``schedulerInfo`` (``SchedulerInfo.java``): its ``type`` (JAXB's ``xsi:type``:
    ``fairScheduler``, ``capacityScheduler``) says which scheduler's schema reads the rest."""

    type: Maybe = None


class FairSchedulerQueueInfoList(Shape):
    """``FairSchedulerQueueInfoList.java`` (6b9b63eef41c158f0760131945a4ef80714f17c4): the child
    queues, mappings each read in turn as a :class:`FairSchedulerQueueInfo`."""

    queue: Items[dict[str, Any]] = []


class FairSchedulerQueueInfo(Shape):
    """``FairSchedulerQueueInfo.java`` at b286cbba3b6ad481a7299ae51d6d5aa4aa4aae0b."""

    queueName: Maybe = None
    schedulingPolicy: Maybe = None
    minResources: ResourceInfo | None = None
    maxResources: ResourceInfo | None = None
    usedResources: ResourceInfo | None = None
    demandResources: ResourceInfo | None = None
    clusterResources: ResourceInfo | None = None
    childQueues: FairSchedulerQueueInfoList = FairSchedulerQueueInfoList()


class FairSchedulerInfo(SchedulerInfo):
    """``FairSchedulerInfo.java`` at fa80ca49bdd741823ff012ddbd7a0f1aecf26195: the root queue."""

    rootQueue: FairSchedulerQueueInfo | None = None


class CapacitySchedulerQueueInfoList(Shape):
    """``CapacitySchedulerQueueInfoList.java`` (bb51cba87a56d6c59d7cdea3d565a123f667197c): the child
    queues, each read in turn as a :class:`CapacitySchedulerQueueInfo`."""

    queue: OneOrMany[dict[str, Any]] = []


class CapacitySchedulerInfo(SchedulerInfo):
    """``CapacitySchedulerInfo.java`` at 1aefd4dab31c95792ff7906031fff78a9e425224: root's children."""

    queues: CapacitySchedulerQueueInfoList = CapacitySchedulerQueueInfoList()


class PartitionResourcesInfo(Shape):
    """``PartitionResourcesInfo.java`` at 3f1ec2023780e3660b8dd269c862a733aa708db3."""

    partitionName: Maybe = None
    pending: ResourceInfo | None = None


class ResourcesInfo(Shape):
    """``ResourcesInfo.java`` at ad145c3789ce53935c86fd4ac22701eaf6bc8b95."""

    resourceUsagesByPartition: OneOrMany[PartitionResourcesInfo] = []


class CapacitySchedulerQueueInfo(Shape):
    """``CapacitySchedulerQueueInfo.java`` (9be4131082c67772142764577d73d39e6e3c6b60) with the fields of
    ``CapacitySchedulerLeafQueueInfo.java`` (ee91492f16528292c4ad173dd018807a63fe6106) a leaf adds;
    percentages and counts are numbers for the numeric gate."""

    queuePath: Maybe = None
    queueName: Maybe = None
    state: Maybe = None
    absoluteCapacity: Any = None
    absoluteMaxCapacity: Any = None
    queues: CapacitySchedulerQueueInfoList = CapacitySchedulerQueueInfoList()
    resourcesUsed: ResourceInfo | None = None
    resources: ResourcesInfo = ResourcesInfo()
    userLimit: Any = None
    userLimitFactor: Any = None
    numPendingApplications: Any = None


# -- REST: /ws/v1/cluster/nodes and /ws/v1/cluster/metrics ------------------------------------------
class NodeInfo(Shape):
    """``NodeInfo.java`` at 67f5f9097076a0c8e2c5956863b2d5ec94979031."""

    id: Maybe = None
    state: Maybe = None
    totalResource: ResourceInfo | None = None
    usedMemoryMB: Any = None
    availMemoryMB: Any = None
    usedVirtualCores: Any = None
    availableVirtualCores: Any = None


class NodesInfo(Shape):
    """``NodesInfo.java`` (ee91492f16528292c4ad173dd018807a63fe6106): the nodes, mappings each read in
    turn as a :class:`NodeInfo`."""

    node: Items[dict[str, Any]] = []


class NodesAnswer(Shape):
    """The answer of ``/ws/v1/cluster/nodes`` (``NodesInfo``'s root element is ``nodes``)."""

    nodes: NodesInfo = NodesInfo()


class ClusterMetricsInfo(Shape):
    """``ClusterMetricsInfo.java`` (0233a4570b99cd6af8ca3458721808997b75ef64): the totals."""

    totalMB: Any = None
    totalVirtualCores: Any = None
    totalClusterResourcesAcrossPartition: ResourceInfo | None = None


class MetricsAnswer(Shape):
    """The answer of ``/ws/v1/cluster/metrics`` (``ClusterMetricsInfo``'s root element is
    ``clusterMetrics``)."""

    clusterMetrics: ClusterMetricsInfo = ClusterMetricsInfo()
