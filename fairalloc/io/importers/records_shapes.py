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

from typing import Any, NamedTuple

from fairalloc.io.importers import kueue_shapes, shapes, volcano_shapes
from fairalloc.io.importers.shapes import Items, Maybe, Shape

__all__ = [
    "Meta",
    "Pod",
    "Workload",
    "VolcanoJob",
    "PodGroup",
    "PriorityClass",
    "PodSeen",
    "plain_pod",
    "seen_of",
    "spec_key",
]


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


# -- what the reader uses of a pod, read fast ------------------------------------------------------
class PodSeen(NamedTuple):
    """What the reader uses of a pod: its metadata, phase and times, and its request's amounts as
    written (``key``: :func:`spec_key`).  ``states``: per container status, the
    time it started (``running.startedAt``, else ``terminated.startedAt``) and finished
    (``terminated.finishedAt``)."""

    namespace: str | None
    labels: dict
    annotations: dict
    created: Any
    phase: str | None
    start_time: Any
    states: list[tuple[Any, Any]]
    priority: Any
    priority_class: str | None
    key: tuple | None


def seen_of(pod: Pod) -> PodSeen:
    """:class:`PodSeen` of a pod read through its shape."""
    meta, spec, status = pod.metadata, pod.spec, pod.status
    states = []
    for s in status.containerStatuses:
        running, ended = s.state.running, s.state.terminated
        started = running.startedAt if running is not None else ended.startedAt if ended is not None else None
        states.append((started, ended.finishedAt if ended is not None else None))
    key = spec_key(spec)
    created, phase, started = meta.creationTimestamp, status.phase, status.startTime
    priority, named = spec.priority, spec.priorityClassName
    return PodSeen(meta.namespace, meta.labels, meta.annotations, created, phase, started, states, priority, named, key)


def spec_key(spec: shapes.PodSpec) -> tuple | None:
    """What :func:`.kubernetes.spec_request` reads of ``spec`` as written, as a key (``None``: not
    hashable): the containers' restart policies, requests and limits, the init containers', the
    overhead."""

    def written(containers: list[shapes.Container]) -> tuple:
        return tuple(
            (c.restartPolicy, tuple(c.resources.requests.items()), tuple(c.resources.limits.items()))
            for c in containers
        )

    return _hashable((written(spec.containers), written(spec.initContainers), tuple(spec.overhead.items())))


def _hashable(key: tuple) -> tuple | None:
    try:
        hash(key)
    except TypeError:
        return None
    return key


def plain_pod(data: Any) -> PodSeen | None:
    """:func:`seen_of` the pod ``data`` (a JSON object: its keys are text) when every field the
    :class:`Pod` shape checks is of the plain type it must be, as ``kubectl get -o json`` writes a
    pod, read by dictionary look-ups (the shape's validation took three times ``json.load`` of
    the pods); ``None`` for anything else, to be read through the shape (and its messages).  The
    tests hold the two equal on generated pods."""
    if type(data) is not dict:
        return None
    meta, spec, status = data.get("metadata", _NONE), data.get("spec", _NONE), data.get("status", _NONE)
    if not (type(meta) is dict and type(spec) is dict and type(status) is dict):
        return None
    labels, annotations = _texts(meta.get("labels")), _texts(meta.get("annotations"))
    if labels is None or annotations is None or not _maybe(meta.get("name"), meta.get("namespace")):
        return None
    if not _items(meta.get("ownerReferences"), _owner):
        return None
    containers, init = spec.get("containers"), spec.get("initContainers")
    overhead = spec.get("overhead")
    if not (_items(containers, _container) and _items(init, _container) and _table(overhead)):
        return None
    statuses = status.get("containerStatuses")
    if not (_maybe(spec.get("priorityClassName"), status.get("phase")) and _items(statuses, _status)):
        return None
    key = _hashable((_written(containers), _written(init), tuple((overhead or _NONE).items())))  # as spec_key
    states = [_times(s.get("state", _NONE)) for s in statuses or ()]
    created, phase, started = meta.get("creationTimestamp"), status.get("phase"), status.get("startTime")
    priority, named = spec.get("priority"), spec.get("priorityClassName")
    return PodSeen(meta.get("namespace"), labels, annotations, created, phase, started, states, priority, named, key)


_NONE: dict = {}


def _maybe(*values: Any) -> bool:
    """:data:`Maybe`: text or nothing."""
    for v in values:  # a loop, not all() of a generator: called a few times per pod
        if v is not None and type(v) is not str:
            return False
    return True


def _table(value: Any) -> bool:
    """:data:`Table` of anything: a mapping (its keys are JSON's text) or ``null``."""
    return value is None or type(value) is dict


def _texts(value: Any) -> dict | None:
    """A ``Table[Maybe]`` (labels, annotations) as the shape reads it (``null``: empty), else ``None``."""
    if value is None:
        return {}
    return value if type(value) is dict and _maybe(*value.values()) else None


def _items(value: Any, item) -> bool:
    """:data:`Items`: a list (or ``null``) of objects each of which ``item`` accepts."""
    if value is None:
        return True
    if type(value) is not list:
        return False
    for x in value:
        if type(x) is not dict or not item(x):
            return False
    return True


def _owner(owner: dict) -> bool:
    return _maybe(owner.get("apiVersion"), owner.get("kind"), owner.get("name"))


def _container(c: dict) -> bool:
    resources = c.get("resources", _NONE)
    return (
        _maybe(c.get("name"), c.get("restartPolicy"))
        and type(resources) is dict
        and _table(resources.get("requests"))
        and _table(resources.get("limits"))
    )


def _status(s: dict) -> bool:
    state = s.get("state", _NONE)
    if not (_maybe(s.get("name")) and type(state) is dict):
        return False
    running, ended = state.get("running"), state.get("terminated")
    return (running is None or type(running) is dict) and (ended is None or type(ended) is dict)


def _written(containers: list | None) -> tuple:
    """:func:`spec_key`'s part of ``containers`` (checked by :func:`_container`), from the JSON."""
    out = []
    for c in containers or ():
        resources = c.get("resources", _NONE)
        requests, limits = resources.get("requests") or _NONE, resources.get("limits") or _NONE
        out.append((c.get("restartPolicy"), tuple(requests.items()), tuple(limits.items())))
    return tuple(out)


def _times(state: dict) -> tuple[Any, Any]:
    running, ended = state.get("running"), state.get("terminated")
    started = running.get("startedAt") if running is not None else ended.get("startedAt") if ended is not None else None
    return (started, ended.get("finishedAt") if ended is not None else None)
