"""The shapes of the records of what ran (:mod:`.records`): the objects the other importers read,
with the fields that say *when*.

Field names are the JSON names of the upstream Go types:

* Kubernetes (k8s.io/api ``core/v1/types.go``, kubernetes/kubernetes ``staging/src/k8s.io/api``):
  ``ObjectMeta.creationTimestamp`` and ``ownerReferences``; ``PodSpec.priority`` (an ``*int32``
  the priority admission plug-in sets from ``priorityClassName``); ``PodStatus.startTime`` and
  ``containerStatuses[]`` (``ContainerStatus.state``: ``ContainerStateRunning.startedAt``,
  ``ContainerStateTerminated.startedAt`` and ``finishedAt``); ``scheduling/v1`` ``PriorityClass.value``;
* Kueue, kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7 (Apache-2.0),
  ``apis/kueue/v1beta2/workload_types.go``: ``WorkloadSpec.priority``, ``PodSet.count`` and
  ``minCount``, ``WorkloadStatus.conditions`` (``metav1.Condition``: ``type``, ``status``,
  ``lastTransitionTime``) of the types ``WorkloadQuotaReserved`` (``QuotaReserved``),
  ``WorkloadAdmitted`` (``Admitted``), ``WorkloadEvicted`` (``Evicted``) and ``WorkloadFinished``
  (``Finished``);
* Volcano, volcano-sh/apis at commit 536f121f53656c6fb7a07b9775b7e0f22c3dc2d9 (Apache-2.0):
  ``pkg/apis/batch/v1alpha1/job.go`` (``JobSpec.minAvailable``, ``priorityClassName``;
  ``JobStatus.state``, a ``JobState`` of ``phase`` and ``lastTransitionTime``;
  ``JobStatus.conditions``, ``JobCondition`` of ``status`` (a ``JobPhase``) and
  ``lastTransitionTime``) and ``pkg/apis/scheduling/v1beta1/types.go`` (``PodGroupSpec.minMember``,
  ``priorityClassName``; ``PodGroupStatus.conditions``, ``PodGroupCondition`` of ``type``,
  ``status`` and ``lastTransitionTime``).

Times stay ``Any``: :mod:`.records` reads them (RFC 3339 text, or the timestamp a YAML file left
unquoted) and says, naming the field, what it cannot read.  Counts and priorities stay ``Any`` for
the numeric checks of the importer, as in :mod:`.shapes`.
"""

from __future__ import annotations

from typing import Any

from fairalloc.io.importers import kueue_shapes, shapes, volcano_shapes
from fairalloc.io.importers.shapes import Items, Maybe, Shape

__all__ = ["Meta", "Pod", "Workload", "VolcanoJob", "PodGroup", "PriorityClass"]


class Owner(Shape):
    """``OwnerReference``: the object that made this one (a Volcano Job's PodGroup)."""

    apiVersion: Maybe = None
    kind: Maybe = None
    name: Maybe = None


class Meta(shapes.ObjectMeta):
    creationTimestamp: Any = None
    ownerReferences: Items[Owner] = []


# -- Kubernetes pods --------------------------------------------------------------------------------
class Started(Shape):
    """``ContainerStateRunning``."""

    startedAt: Any = None


class Terminated(Shape):
    """``ContainerStateTerminated``."""

    startedAt: Any = None
    finishedAt: Any = None


class ContainerState(Shape):
    running: Started | None = None
    terminated: Terminated | None = None


class ContainerStatus(Shape):
    name: Maybe = None
    state: ContainerState = ContainerState()


class PodStatus(shapes.PodStatus):
    startTime: Any = None
    containerStatuses: Items[ContainerStatus] = []


class PodSpec(shapes.PodSpec):
    priority: Any = None
    priorityClassName: Maybe = None


class Pod(shapes.Pod):
    metadata: Meta = Meta()
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()


class PriorityClass(Shape):
    """``scheduling.k8s.io/v1`` ``PriorityClass``: ``value`` is the priority its name stands for."""

    metadata: Meta = Meta()
    value: Any = None


# -- conditions ------------------------------------------------------------------------------------
class Condition(Shape):
    """``metav1.Condition`` (Kueue) and ``PodGroupCondition`` (Volcano): ``status`` is ``"True"``."""

    type: Maybe = None
    status: Any = None
    lastTransitionTime: Any = None


# -- Kueue Workloads -------------------------------------------------------------------------------
class PodSet(kueue_shapes.PodSet):
    minCount: Any = None


class WorkloadSpec(Shape):
    """``WorkloadSpec``: the fields read of a record (:class:`.kueue_shapes.WorkloadSpec` has the others)."""

    podSets: Items[PodSet] = []
    queueName: Maybe = None
    priority: Any = None


class WorkloadStatus(Shape):
    conditions: Items[Condition] = []


class Workload(Shape):
    metadata: Meta = Meta()
    spec: WorkloadSpec = WorkloadSpec()
    status: WorkloadStatus = WorkloadStatus()


# -- Volcano Jobs and PodGroups --------------------------------------------------------------------
class JobSpec(volcano_shapes.JobSpec):
    minAvailable: Any = None
    priorityClassName: Maybe = None


class JobState(volcano_shapes.JobState):
    lastTransitionTime: Any = None


class JobCondition(Shape):
    """``JobCondition``: the phase ``status`` the job entered at ``lastTransitionTime``."""

    status: Maybe = None
    lastTransitionTime: Any = None


class JobStatus(volcano_shapes.JobStatus):
    state: JobState = JobState()
    conditions: Items[JobCondition] = []


class VolcanoJob(volcano_shapes.Job):
    metadata: Meta = Meta()
    spec: JobSpec = JobSpec()
    status: JobStatus = JobStatus()


class PodGroupSpec(volcano_shapes.PodGroupSpec):
    minMember: Any = None
    priorityClassName: Maybe = None


class PodGroupStatus(volcano_shapes.PodGroupStatus):
    conditions: Items[Condition] = []


class PodGroup(volcano_shapes.PodGroup):
    metadata: Meta = Meta()
    spec: PodGroupSpec = PodGroupSpec()
    status: PodGroupStatus = PodGroupStatus()
