"""The shapes of the Volcano objects the Volcano importer reads (fairalloc.io.importers.volcano).

Field names as in Volcano's own types, read at volcano-sh/volcano commit
ed72c7c815a9fd547a787134676f73d42e9d049c (Apache-2.0):

* ``staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/types.go`` (the same file as
  volcano-sh/apis ``pkg/apis/scheduling/v1beta1/types.go`` at 536f121f53656c6fb7a07b9775b7e0f22c3dc2d9):
  ``Queue``, ``QueueSpec``, ``Guarantee``, ``QueueStatus``, ``PodGroup``, ``PodGroupSpec``,
  ``PodGroupStatus``;
* ``staging/src/volcano.sh/apis/pkg/apis/batch/v1alpha1/job.go``: ``Job``, ``JobSpec``,
  ``TaskSpec``, ``JobStatus``, ``JobState``;
* ``pkg/scheduler/conf/scheduler_conf.go``: ``SchedulerConfiguration``, ``Tier``,
  ``Configuration``, ``PluginOption`` (the ``volcano-scheduler.conf`` file);
* the ``volcano-scheduler-configmap`` ConfigMap that holds that file (k8s.io/api core/v1
  ``ConfigMap.Data``, a ``map[string]string``).

Only the fields the importer reads; numbers stay ``Any`` for the numeric gate
(:func:`fairalloc.io.importers.common.number`, :func:`fairalloc.io.importers.kubernetes.quantities`).
The ``*bool`` switches Volcano decodes (``enableHierarchy``, ``reclaimable``) are strict: Go's
decoders refuse the text ``"true"`` where a bool is declared, so fairalloc does not read it as one.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, Strict

from fairalloc.io.importers.shapes import Items, Maybe, ObjectMeta, PodTemplate, Shape, Table

__all__ = [
    "Flag",
    "Guarantee",
    "QueueSpec",
    "QueueStatus",
    "Queue",
    "PodGroupSpec",
    "PodGroupStatus",
    "PodGroup",
    "TaskSpec",
    "JobSpec",
    "JobState",
    "JobStatus",
    "Job",
    "PluginOption",
    "Tier",
    "Configuration",
    "SchedulerConfiguration",
    "ConfigMapData",
    "ConfigMap",
]

#: a Go ``*bool``: true, false or nothing; text is refused
Flag = Annotated[bool, Strict()] | None


class Guarantee(Shape):
    """``QueueSpec.guarantee`` (``Guarantee``): ``resource`` is the guaranteed resource list.
    ``None`` when absent, so that a guarantee written without its ``resource:`` level is told apart."""

    resource: Table[Any] | None = None


class QueueSpec(Shape):
    """``QueueSpec``: ``weight`` and ``priority`` are ``int32`` (read by the numeric gate and the
    importer's whole-number check), the resource lists are quantities."""

    weight: Any = None
    capability: Table[Any] = {}
    reclaimable: Flag = None
    guarantee: Guarantee = Guarantee()
    parent: Maybe = None
    deserved: Table[Any] = {}
    priority: Any = None


class QueueStatus(Shape):
    """``QueueStatus.allocated`` (a resource list)."""

    allocated: Table[Any] = {}


class Queue(Shape):
    """A ``Queue`` (``scheduling.volcano.sh/v1beta1``)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: QueueSpec = QueueSpec()
    status: QueueStatus = QueueStatus()


class PodGroupSpec(Shape):
    """``PodGroupSpec``: the ``queue`` it is in and ``minResources`` (a resource list)."""

    queue: Maybe = None
    minResources: Table[Any] = {}


class PodGroupStatus(Shape):
    phase: Maybe = None


class PodGroup(Shape):
    """A ``PodGroup`` (``scheduling.volcano.sh/v1beta1``)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: PodGroupSpec = PodGroupSpec()
    status: PodGroupStatus = PodGroupStatus()


class TaskSpec(Shape):
    """``TaskSpec``: ``replicas`` (``int32``, checked by the importer) copies of ``template`` (a
    ``PodTemplateSpec``)."""

    name: Maybe = None
    replicas: Any = 1
    template: PodTemplate = PodTemplate()


class JobSpec(Shape):
    queue: Maybe = None
    tasks: Items[TaskSpec] = []


class JobState(Shape):
    phase: Maybe = None


class JobStatus(Shape):
    state: JobState = JobState()


class Job(Shape):
    """A Volcano ``Job`` (``batch.volcano.sh/v1alpha1``)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: JobSpec = JobSpec()
    status: JobStatus = JobStatus()


class PluginOption(Shape):
    """``PluginOption``: a plug-in of a tier, by ``name``; ``enableHierarchy`` (Go field
    ``EnabledHierarchy``) makes ``capacity`` hierarchical; ``arguments`` are the plug-in's own."""

    name: Maybe = None
    enableHierarchy: Flag = None
    arguments: Table[Any] = {}


class Tier(Shape):
    plugins: Items[PluginOption] = []


class Configuration(Shape):
    """``Configuration``: the ``arguments`` of the action ``name``."""

    name: Maybe = None
    arguments: Table[Any] = {}


class SchedulerConfiguration(Shape):
    """``SchedulerConfiguration``, the ``volcano-scheduler.conf`` file: ``actions`` is one text
    (``"enqueue, allocate, backfill"``), ``tiers`` the plug-ins in order."""

    actions: Maybe = None
    tiers: Items[Tier] = []
    configurations: Items[Configuration] = []


class ConfigMapData(Shape):
    """The ``data`` of the scheduler's ConfigMap: ``volcano-scheduler.conf`` is the text of the file."""

    conf: Maybe = Field(default=None, alias="volcano-scheduler.conf")


class ConfigMap(Shape):
    metadata: ObjectMeta = ObjectMeta()
    data: ConfigMapData = ConfigMapData()
