"""Records of what ran, as a job workload: Kubernetes Pods, Kueue Workloads, Volcano Jobs and
PodGroups, each with the times its status gives, become the jobs of a workload file
(:mod:`fairalloc.io.job_workloads`) to replay against a queue case.

Field names and meanings are the upstream types' (:mod:`.records_shapes` cites them: k8s.io/api
``core/v1/types.go``; kubernetes-sigs/kueue ff69552e79ad21652c36caa97038382e55625cf7
``apis/kueue/v1beta2/workload_types.go``; volcano-sh/apis 536f121f53656c6fb7a07b9775b7e0f22c3dc2d9
``pkg/apis/batch/v1alpha1/job.go`` and ``pkg/apis/scheduling/v1beta1/types.go``).  Each record is
one job:

* **submit**: ``metadata.creationTimestamp`` (when the API server stored the object);
* **start** and **finish**:

  - a **Pod**: ``status.startTime`` (else the earliest ``containerStatuses[].state.running.startedAt``
    or ``.terminated.startedAt``); finished when ``status.phase`` is ``Succeeded`` or ``Failed``, at
    the latest ``containerStatuses[].state.terminated.finishedAt``;
  - a Kueue **Workload**: started at the ``lastTransitionTime`` of its ``Admitted`` condition with
    status ``"True"`` (``WorkloadAdmitted``: quota reserved and every admission check passed, when
    Kueue lets the job run); finished at that of ``Finished`` (``WorkloadFinished``).  A Workload
    ``Evicted`` and not admitted again waits again: it is read as waiting, with a warning (its
    earlier run is not replayed);
  - a Volcano **Job**: started at the earliest ``status.conditions[]`` entry whose ``status`` is
    ``Running`` (the phase it entered then), else at ``status.state.lastTransitionTime`` when
    ``state.phase`` is ``Running``; finished at ``status.state.lastTransitionTime`` when the phase
    is ``Completed``, ``Failed``, ``Terminated`` or ``Aborted``;
  - a Volcano **PodGroup**: started at its ``Scheduled`` condition (status ``"True"``); a
    ``Completed`` PodGroup records no time it finished, so it is left out with a warning (its
    Volcano Job or its pods say when);

* **runtime** = finish - start; a record still running runs to the end of the window
  (``--window-end``, default: the latest submit, start or finish of the records) or for
  ``--runtime`` seconds; a record that never started needs ``--runtime``, else it is left out
  with a warning naming it.  A time that is missing where it is needed (a record that started or
  ended, without the time it did), cannot be read, or is out of order (a start before the object
  existed, a finish before the start) is a warning naming the file, the object and the field, and
  the record is left out: never a guess;
* **request**: a pod's effective request (:func:`.kubernetes.spec_request`); a Workload's pod sets
  (``count`` pods of ``template``) and a Volcano Job's tasks (``replicas`` pods of ``template``) give
  its pods when they ask the same per pod (else one pod of their sum, with a warning: a workload
  job has one request per pod); a PodGroup's ``minResources`` divided among its ``minMember`` pods;
* **gang** (``min_pods``): a Volcano Job's ``spec.minAvailable``, a Workload's pod sets'
  ``minCount`` (partial admission), a PodGroup's ``minMember`` (all its pods);
* **priority**: a pod's ``spec.priority``, a Workload's ``spec.priority``; a ``priorityClassName``
  (Volcano) is the ``value`` of the PriorityClass of that name among the files, else 0 with a warning;
* **queue**: a Workload's ``spec.queueName`` or an object's ``kueue.x-k8s.io/queue-name`` label is a
  LocalQueue of its namespace, read as the LocalQueue's ``spec.clusterQueue`` when the LocalQueue is
  among the files, else as the LocalQueue's name; a Volcano Job's or PodGroup's ``spec.queue``; a
  pod's PodGroup (annotation ``scheduling.k8s.io/group-name``) gives its queue, else the
  ``scheduling.volcano.sh/queue-name`` annotation or label; else the namespace.

One object is one record: a pod of a PodGroup among the files is read through its PodGroup, and a
PodGroup a Volcano Job among the files made (``ownerReferences``) through that Job.  Times are
seconds from the earliest submit of the jobs written, which the workload file states in a comment.

Belongs here: reading records.  Imports: ``fairalloc.core`` and ``fairalloc.io``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from fairalloc.core.errors import CaseError, excerpt
from fairalloc.core.instance import Instance
from fairalloc.io.importers import kubernetes as k8s
from fairalloc.io.importers import records_shapes as shapes
from fairalloc.io.importers.common import Document, ImportFailed, Notes, _number, number, once
from fairalloc.io.importers.kueue_shapes import LocalQueue
from fairalloc.io.importers.kueue_workloads import QUEUE_LABEL as KUEUE_LABEL
from fairalloc.io.importers.kueue_workloads import count
from fairalloc.io.importers.shapes import PodSpec, read
from fairalloc.io.importers.volcano import GROUP_ANNOTATION
from fairalloc.io.importers.volcano import QUEUE_LABEL as VOLCANO_LABEL
from fairalloc.io.job_workloads import parse_job_workload

__all__ = ["Record", "checked_workload", "latest_time", "parse_time", "read_records", "workload_of"]

KUEUE, VOLCANO_BATCH, VOLCANO_SCHEDULING = "kueue.x-k8s.io", "batch.volcano.sh", "scheduling.volcano.sh"
#: the phases in which a Volcano Job has stopped for good (``JobPhase`` of ``job.go``)
ENDED = ("Completed", "Failed", "Terminated", "Aborted")
LEFT_OUT = "left out"


@dataclass(frozen=True)
class Record:
    """One object of what ran, read: ``pods`` pods of ``request`` each (in the case's units: cores,
    bytes, counts) for ``queue``, and its times (``start``/``finish`` ``None``: not yet)."""

    name: str
    where: str
    queue: str
    request: dict[str, Decimal]
    pods: int
    min_pods: int | None
    priority: int
    submit: datetime
    start: datetime | None
    finish: datetime | None


@dataclass
class _Reading:
    """What one reading knows across objects: the warnings, the LocalQueues, PodGroups and Volcano
    Jobs among the files, the PriorityClasses, and the requests read so far."""

    notes: Notes
    local: dict[tuple[str, str], str | None] = field(default_factory=dict)
    groups: dict[tuple[str, str], str | None] = field(default_factory=dict)
    jobs: set[tuple[str, str]] = field(default_factory=set)
    priorities: dict[str, int] = field(default_factory=dict)
    #: the request of each pod spec's amounts as written (:func:`_request`)
    requests: dict[tuple, dict[str, Decimal]] = field(default_factory=dict)


#: a time as the record gives it: (value, field), the value ``None`` when the field is absent
Given = tuple[Any, str]


def parse_time(value: Any, where: str) -> datetime:
    """An RFC 3339 time (``2024-03-19T20:49:17Z``, fractions and offsets too), or the timestamp a
    YAML file gave unquoted, as an aware UTC time; else one :class:`ImportFailed` line at ``where``."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, str) and "T" in value.upper():
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if when.tzinfo is not None:  # a time without its zone is not an instant
                return when.astimezone(UTC)
    raise ImportFailed(f"{where}: {excerpt(value)} is not an RFC 3339 time (like 2024-03-19T20:49:17Z)")


def read_records(docs: list[Document], notes: Notes) -> list[Record]:
    """The records among ``docs`` (module docstring), in the files' order; the other objects
    (queues, nodes, the scheduler's configuration) are the case's and are not read here."""
    reading = _Reading(notes)
    kinds = [(d.group, d.kind or "") for d in docs]  # each a few properties of the document: read once
    _index(docs, kinds, reading)
    records: list[Record] = []
    read_at: dict[str, str] = {}
    for doc, kind in zip(docs, kinds, strict=True):
        reader = _READERS.get(kind)
        if reader is None:
            continue
        label = doc.label
        at = f"{doc.where}: {label}"
        if doc.name:  # an object listed twice would run twice
            once(read_at, label, at, "object")
        record = reader(doc, at, reading)
        if record is not None:
            records.append(record)
    return records


def _key(doc: Document) -> tuple[str, str]:
    return (doc.namespace or "default", doc.name or "")


def _index(docs: list[Document], kinds: list[tuple[str, str]], reading: _Reading) -> None:
    """The objects other records point at: LocalQueues, PodGroups, Volcano Jobs, PriorityClasses."""
    for doc, kind in zip(docs, kinds, strict=True):
        if kind not in _POINTED_AT:
            continue
        at = f"{doc.where}: {doc.label}"
        if kind == (KUEUE, "LocalQueue"):
            reading.local[_key(doc)] = read(LocalQueue, doc.data, at).spec.clusterQueue
        elif kind == (VOLCANO_SCHEDULING, "PodGroup"):
            reading.groups[_key(doc)] = read(shapes.PodGroup, doc.data, at).spec.queue
        elif kind == (VOLCANO_BATCH, "Job"):
            reading.jobs.add(_key(doc))
        else:
            given = read(shapes.PriorityClass, doc.data, at)
            reading.priorities[doc.name or ""] = _whole(given.value, f"{at}: value")


_POINTED_AT = {
    (KUEUE, "LocalQueue"),
    (VOLCANO_SCHEDULING, "PodGroup"),
    (VOLCANO_BATCH, "Job"),
    ("scheduling.k8s.io", "PriorityClass"),
}


def _whole(value: Any, where: str) -> int:
    """A priority: a whole number (``int32`` upstream), negative allowed."""
    return int(number(value, where, negative=True, whole=True))


# -- one object ------------------------------------------------------------------------------------
def _pod(doc: Document, at: str, reading: _Reading) -> Record | None:
    seen = shapes.plain_pod(doc.data) if doc.format == "json" else None
    if seen is None:
        seen = shapes.seen_of(read(shapes.Pod, doc.data, at))
    group = seen.annotations.get(GROUP_ANNOTATION)
    if group and (seen.namespace or "default", group) in reading.groups:
        return None  # its PodGroup is the record
    states = list(enumerate(seen.states))
    start: Given = (seen.start_time, "status.startTime")
    if start[0] is None:
        start = _first([(v, f"status.containerStatuses[{k}].state.*.startedAt") for k, (v, _) in states], min)
    finish = _first([(v, f"status.containerStatuses[{k}].state.terminated.finishedAt") for k, (_, v) in states], max)
    started = start[0] is not None or seen.phase in ("Running", "Succeeded", "Failed")
    if start[0] is None:
        start = (None, "status.startTime")
    if finish[0] is None:
        finish = (None, "status.containerStatuses[].state.terminated.finishedAt")
    queue = _kueue_queue(doc, seen.labels.get(KUEUE_LABEL), reading) or _volcano_queue(seen)
    priority = _pod_priority(doc, at, seen, reading)
    request = _request(seen.key, lambda: read(shapes.Pod, doc.data, at).spec, at, reading)
    ended = seen.phase in ("Succeeded", "Failed")
    shape = (queue, request, 1, None, priority)
    return _timed(doc, at, reading, shape, seen.created, start if started else None, finish if ended else None)


def _request(key: tuple | None, spec: Callable[[], PodSpec], at: str, reading: _Reading) -> dict[str, Decimal]:
    """:func:`.kubernetes.spec_request` of ``spec()``, remembered by ``key``, the amounts as written
    (:attr:`.records_shapes.PodSeen.key`): the pods of one job write the same few (100,000 pods,
    each quantity parsed anew, were half the reading).  A spec whose amounts are not plain values
    (``key`` ``None``) is read each time; a bad amount is refused at the first pod that writes it,
    before anything is remembered."""
    hit = reading.requests.get(key) if key is not None else None
    if hit is None:
        hit = k8s.spec_request(spec(), at)
        if key is not None:
            reading.requests[key] = hit
    return hit  # shared by the pods that write the same amounts: read, never changed


def _template_request(template: Any, at: str, reading: _Reading) -> dict[str, Decimal]:
    """:func:`_request` of a pod set's or task's ``template`` (read through its shape already)."""
    spec = template.spec
    return _request(shapes.spec_key(spec), lambda: spec, at, reading)


def _first(times: list[Given], pick) -> Given:
    """The earliest (``pick=min``) or latest (``max``) readable time of ``times`` (a value ``None``:
    not given); ``(None, "")`` when none gives one."""
    times = [(v, f) for v, f in times if v is not None]
    if len(times) < 2:  # nothing to choose between (one container: most pods)
        return times[0] if times else (None, "")
    readable = [(_maybe_time(v), v, f) for v, f in times]
    known = [t for t in readable if t[0] is not None]
    if len(known) < len(readable):  # the unreadable one is named by the reading that follows
        return next((v, f) for t, v, f in readable if t is None)
    _, v, f = pick(known, key=lambda t: t[0])
    return (v, f)


def _maybe_time(value: Any) -> datetime | None:
    try:
        return parse_time(value, "")
    except ImportFailed:
        return None


def _pod_priority(doc: Document, at: str, seen: shapes.PodSeen, reading: _Reading) -> int:
    if seen.priority is not None:
        return _whole(seen.priority, f"{at}: spec.priority")
    return _class_priority(doc, seen.priority_class, "spec.priorityClassName", reading)


def _class_priority(doc: Document, name: str | None, field_name: str, reading: _Reading) -> int:
    if not name:
        return 0
    if name not in reading.priorities:
        reading.notes.warn(doc, doc.label, field_name, f"no PriorityClass {name} among the files: priority 0")
        return 0
    return reading.priorities[name]


def _kueue_queue(doc: Document, local: str | None, reading: _Reading) -> str | None:
    """The ClusterQueue of LocalQueue ``local`` of ``doc``'s namespace when that LocalQueue is among
    the files, else the LocalQueue's own name (``None``: no LocalQueue named)."""
    if not local:
        return None
    key = (doc.namespace or "default", local)
    if key not in reading.local:
        return local
    return reading.local[key] or local


def _volcano_queue(seen: shapes.PodSeen) -> str:
    """A pod's queue by Volcano's annotations or label, else its namespace."""
    named = seen.annotations.get(VOLCANO_LABEL) or seen.labels.get(VOLCANO_LABEL)
    return named or seen.namespace or "default"


def _workload(doc: Document, at: str, reading: _Reading) -> Record | None:
    workload = read(shapes.Workload, doc.data, at)
    spec = workload.spec
    sets = [
        (count(ps.count, f"{at}: spec.podSets[{k}].count"), _template_request(ps.template, at, reading), ps.minCount)
        for k, ps in enumerate(spec.podSets)
    ]
    pods, request = _one_shape(doc, reading.notes, [(n, r) for n, r, _ in sets], "spec.podSets")
    least = None
    if any(m is not None for _, _, m in sets) and pods > 1:
        least = sum(n if m is None else count(m, f"{at}: spec.podSets[].minCount") for n, _, m in sets)
    priority = 0 if spec.priority is None else _whole(spec.priority, f"{at}: spec.priority")
    local = spec.queueName or workload.metadata.labels.get(KUEUE_LABEL)
    queue = _kueue_queue(doc, local, reading) or workload.metadata.namespace or "default"
    conditions = {c.type: (c, k) for k, c in enumerate(workload.status.conditions) if str(c.status) == "True"}
    start = _condition(conditions, "Admitted")
    finish = _condition(conditions, "Finished")
    if "Evicted" in conditions and "Admitted" not in conditions and "Finished" not in conditions:
        reading.notes.warn(
            doc, doc.label, "status.conditions[Evicted]",
            "evicted and not admitted again: read as waiting since its creation (its earlier run is not replayed)",
        )  # fmt: skip
    shape = (queue, request, pods, least if least is None or least < pods else None, priority)
    ended = "Finished" in conditions  # finished, its time given or not (never read as still running)
    started = ended or "Admitted" in conditions  # a finished Workload ran: when it started must be known
    created = workload.metadata.creationTimestamp
    return _timed(doc, at, reading, shape, created, start if started else None, finish if ended else None)


def _condition(conditions: dict[str | None, tuple[shapes.Condition, int]], kind: str) -> Given:
    """The time of condition ``kind`` when its status is ``"True"`` (``(None, field)`` otherwise)."""
    if kind not in conditions:
        return (None, f"status.conditions[{kind}]")
    condition, k = conditions[kind]
    return (condition.lastTransitionTime, f"status.conditions[{k}].lastTransitionTime")


def _one_shape(doc: Document, notes: Notes, sets: list[tuple[int, dict]], field_name: str) -> tuple[int, dict]:
    """``(pods, one pod's request)`` of pod sets (``count``, request): their pods when every set asks
    the same per pod, else one pod of their sum, with a warning."""
    requests = [r for n, r in sets if n]
    if all(r == requests[0] for r in requests[1:]):
        return sum(n for n, _ in sets), requests[0] if requests else {}
    notes.warn(
        doc, doc.label, field_name,
        "the pods ask different requests: read as one pod of their sum (a workload job has one request per pod)",
    )  # fmt: skip
    total: dict[str, Decimal] = {}
    for n, r in sets:
        total = k8s.add_amounts(total, {k: v * n for k, v in r.items()})
    return 1, total


def _volcano_job(doc: Document, at: str, reading: _Reading) -> Record | None:
    job = read(shapes.VolcanoJob, doc.data, at)
    spec, status = job.spec, job.status
    sets = [
        (count(t.replicas, f"{at}: spec.tasks[{k}].replicas"), _template_request(t.template, at, reading))
        for k, t in enumerate(spec.tasks)
    ]
    pods, request = _one_shape(doc, reading.notes, sets, "spec.tasks")
    least = None if spec.minAvailable is None else count(spec.minAvailable, f"{at}: spec.minAvailable")
    priority = _class_priority(doc, spec.priorityClassName, "spec.priorityClassName", reading)
    queue = spec.queue or job.metadata.annotations.get(VOLCANO_LABEL) or job.metadata.namespace or "default"
    running = [(c.lastTransitionTime, k) for k, c in enumerate(status.conditions) if c.status == "Running"]
    state = (status.state.lastTransitionTime, "status.state.lastTransitionTime")
    ended = status.state.phase in ENDED
    start: Given | None = (None, "status.conditions[Running]") if ended else None  # it ran: when must be known
    if running:
        start = (running[0][0], f"status.conditions[{running[0][1]}].lastTransitionTime")
    elif status.state.phase == "Running":
        start = state
    shape = (queue, request, pods, least if least and least < pods else None, priority)
    return _timed(doc, at, reading, shape, job.metadata.creationTimestamp, start, state if ended else None)


def _pod_group(doc: Document, at: str, reading: _Reading) -> Record | None:
    group = read(shapes.PodGroup, doc.data, at)
    meta = group.metadata
    if any(o.kind == "Job" and (meta.namespace or "default", o.name) in reading.jobs for o in meta.ownerReferences):
        return None  # its Volcano Job is the record
    if group.status.phase == "Completed":
        reading.notes.warn(
            doc, doc.label, "status.phase",
            f"Completed, and a PodGroup records no time it finished: {LEFT_OUT} (its Volcano Job or pods say when)",
        )  # fmt: skip
        return None
    members = 1 if group.spec.minMember is None else count(group.spec.minMember, f"{at}: spec.minMember", least=1)
    request = {r: v / members for r, v in _min_resources(doc, at, group, reading.notes).items()}
    priority = _class_priority(doc, group.spec.priorityClassName, "spec.priorityClassName", reading)
    conditions = {c.type: (c, k) for k, c in enumerate(group.status.conditions) if str(c.status) == "True"}
    shape = (group.spec.queue or meta.namespace or "default", request, members, None, priority)
    started = "Scheduled" in conditions or group.status.phase == "Running"  # running: when must be known
    start = _condition(conditions, "Scheduled") if started else None
    return _timed(doc, at, reading, shape, meta.creationTimestamp, start, None)


#: ``minResources`` keys that count objects or repeat a resource, not what a pod asks of a node
#: (the PodGroup a controller makes for a Deployment lists them beside ``cpu``: ``pods``,
#: ``count/pods``, ``requests.cpu``, ``limits.cpu``)
def _counted(key: str) -> bool:
    return key == "pods" or key.startswith(("count/", "limits.", "requests."))


def _min_resources(doc: Document, at: str, group: shapes.PodGroup, notes: Notes) -> dict[str, Decimal]:
    amounts = k8s.quantities(group.spec.minResources, f"{at}: spec.minResources")
    for key in (k for k in amounts if _counted(k)):
        notes.warn(doc, doc.label, f"spec.minResources.{key}", "an object count or a repeated amount: not read")
    return {r: v for r, v in amounts.items() if not _counted(r) and v}


# -- times -----------------------------------------------------------------------------------------
Shape = tuple[str, dict[str, Decimal], int, int | None, int]


def _timed(
    doc: Document, at: str, reading: _Reading, shape: Shape, created: Any, start: Given | None, finish: Given | None
) -> Record | None:
    """The record of ``doc`` with its times (``start`` ``None``: it has not started; ``finish``
    ``None``: not finished; a time ``None`` in either: it did, when is not known), or ``None`` with a
    warning naming the field whose time is missing, unreadable or out of order."""
    given = [("was submitted", (created, "metadata.creationTimestamp")), ("started", start), ("finished", finish)]
    times: list[tuple[datetime, str]] = []
    read_at: dict[str, datetime] = {}
    for why, (value, field_name) in ((why, t) for why, t in given if t is not None):
        if value is None:
            reading.notes.warn(doc, doc.label, field_name, f"missing: when it {why} is not known; {LEFT_OUT}")
            return None
        try:
            when = parse_time(value, "")
        except ImportFailed as exc:
            reading.notes.warn(doc, doc.label, field_name, f"{str(exc).removeprefix(': ')}; {LEFT_OUT}")
            return None
        if times and when < times[-1][0]:
            reading.notes.warn(
                doc, doc.label, field_name, f"before {times[-1][1]}: the times are out of order; {LEFT_OUT}"
            )
            return None
        times.append((when, field_name))
        read_at[why] = when
    queue, request, pods, least, priority = shape
    name = at.removeprefix(f"{doc.where}: ")  # the label, as read_records made ``at`` of it
    start_at, finish_at = read_at.get("started"), read_at.get("finished")
    return Record(name, at, queue, request, pods, least, priority, read_at["was submitted"], start_at, finish_at)


# -- the workload ----------------------------------------------------------------------------------
_READERS: dict[tuple[str, str], Callable[[Document, str, _Reading], Record | None]] = {
    ("", "Pod"): _pod,
    (KUEUE, "Workload"): _workload,
    (VOLCANO_BATCH, "Job"): _volcano_job,
    (VOLCANO_SCHEDULING, "PodGroup"): _pod_group,
}


def latest_time(records: list[Record]) -> datetime | None:
    """The latest time any of ``records`` gives (the default end of the window)."""
    times = [t for r in records for t in (r.submit, r.start, r.finish) if t is not None]
    return max(times, default=None)


def workload_of(
    records: list[Record], notes: Notes, *, window_end: datetime | None = None, runtime: float | None = None
) -> tuple[dict, datetime | None]:
    """The workload mapping (``jobs:``) of ``records`` and its origin (the earliest submit written):
    each record's run time as the module docstring says, or a warning naming it and the record left
    out."""
    end = window_end or latest_time(records)
    timed = [(r, _runtime(r, notes, end, runtime)) for r in records]
    kept = [(r, seconds) for r, seconds in timed if seconds is not None]
    origin = min((r.submit for r, _ in kept), default=None)
    converted: dict[int, dict] = {}  # each shared request (_request) converted once, by identity
    jobs = {r.name: _job(r, seconds, origin, converted) for r, seconds in kept if origin is not None}
    return {"jobs": jobs}, origin


def _runtime(record: Record, notes: Notes, end: datetime | None, given: float | None) -> float | None:
    """Seconds of work: finish - start; a running record's to the end of the window or ``given``; a
    waiting record's ``given``.  ``None`` (with a warning) when there is none to replay."""
    where, obj = record.where.removesuffix(f": {record.name}"), record.name  # for a warning
    if record.start is None:
        if given is None:
            notes.warn(where, obj, "", f"never started: give --runtime SECONDS to replay it; {LEFT_OUT}")
        return given
    if record.finish is None and given is not None:
        return given
    stop = record.finish or end
    seconds = (stop - record.start).total_seconds() if stop is not None else 0.0
    if seconds <= 0:
        why = "finished the second it started" if record.finish else "started at or after the end of the window"
        notes.warn(where, obj, "", f"{why}: no run time to replay; {LEFT_OUT}")
        return None
    return seconds


def _job(record: Record, seconds: float, origin: datetime, converted: dict[int, dict]) -> dict:
    request = converted.get(id(record.request))
    if request is None:
        request = converted[id(record.request)] = {r: _number(v) for r, v in record.request.items()}
    job: dict[str, Any] = {
        "queue": record.queue,
        "request": dict(request),  # a mapping of its own: YAML would write shared ones as anchors
        "pods": record.pods,
        "submit": (record.submit - origin).total_seconds(),
        "runtime": seconds,
    }
    if record.min_pods is not None:
        job["min_pods"] = record.min_pods
    if record.priority:
        job["priority"] = record.priority
    return job


def checked_workload(
    docs: list[Document],
    instance: Instance,
    notes: Notes,
    *,
    window_end: datetime | None = None,
    runtime: float | None = None,
) -> tuple[dict, datetime]:
    """The workload of the records among ``docs`` and its origin, read by
    :func:`~fairalloc.io.job_workloads.parse_job_workload` against ``instance`` (the queue case it
    is for) before anyone writes it: a job the case refuses (an unknown queue or resource, a pod
    larger than the capacity) is one line led by the file and object it was read from."""
    records = read_records(docs, notes)
    workload, origin = workload_of(records, notes, window_end=window_end, runtime=runtime)
    files = ", ".join(dict.fromkeys(d.file for d in docs))
    if origin is None:
        why = [line for line in notes.warnings if line.endswith(LEFT_OUT)]
        first = f" (the first: {why[0]})" if why else ""
        raise ImportFailed(
            f"{files}: no job to replay: {len(records)} records of Pods, Kueue Workloads, Volcano Jobs or "
            f"PodGroups read, none with the times a job needs{first}"
        )
    try:
        parse_job_workload(workload, instance, "jobs")
    except CaseError as exc:
        raise ImportFailed(_not_replayable(records, str(exc), files)) from None
    return workload, origin


def _not_replayable(records: list[Record], message: str, files: str) -> str:
    """The workload loader's refusal, led by where the job it names was read (file: object)."""
    named = [r for r in records if f"jobs.{r.name}." in message or f"jobs.{r.name}:" in message]
    where = named[0].where if named else files
    return f"{where}: the job does not fit the case: {message}"
