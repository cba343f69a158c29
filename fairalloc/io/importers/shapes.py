"""The shapes of the objects importers read: one pydantic schema per kind, checked at the boundary.

An importer reads a scheduler's objects (a Volcano ``Queue``, a Kueue ``ClusterQueue``, YARN's
``/ws/v1/cluster/scheduler`` answer, ...) through :func:`read`: the object is validated against the
kind's schema (a :class:`Shape`) before any field is used, so an object of the wrong shape (a
``null`` init container list, plugins written as names, a node that is a string) is one
:class:`~fairalloc.io.importers.common.ImportFailed` line naming the file, the object and the field,
never an ``AttributeError`` deep inside.

What a schema checks is the *structure* the importer relies on: which fields are mappings, lists or
text.  Numbers stay as written (``Any``) and go through the one numeric gate
(:func:`fairalloc.io.importers.common.number`), which parses them exactly and bounds them.  Fields
the importer does not read are kept (``extra="allow"``): real objects carry many, and new scheduler
versions add more; what matters for a reading is said by the importer as a warning.  A ``null``
where a mapping or a list is expected reads as empty, as the schedulers' own decoders read it (a
Go ``nil`` map or slice).
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, StrictBool, ValidationError

from fairalloc.core.errors import excerpt, field_path, one_line
from fairalloc.io.importers.common import ImportFailed

__all__ = [
    "Shape",
    "Maybe",
    "Items",
    "Table",
    "Part",
    "read",
    "ObjectMeta",
    "ResourceRequirements",
    "Container",
    "PodSpec",
    "PodTemplate",
    "Pod",
    "Node",
    "ResourceQuota",
    "Namespace",
]


class Shape(BaseModel):
    """The schema of one kind of object (or of a part of one): the fields an importer reads, by
    their names in the scheduler's own files (``nominalQuota``, ``maxResource``)."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=False, coerce_numbers_to_str=False)


def _empty_if_null(kind: type):
    def convert(value: Any) -> Any:
        return kind() if value is None else value

    return BeforeValidator(convert)


T = TypeVar("T")

#: a list whose ``null`` reads as empty
Items = Annotated[list[T], _empty_if_null(list)]
#: a mapping of names to values whose ``null`` reads as empty (labels, resource amounts)
Table = Annotated[dict[str, T], _empty_if_null(dict)]
#: a part of an object (a struct in the scheduler's Go types) whose ``null`` reads as empty, as Go's
#: decoders leave a struct they are given ``null`` for (``resources:`` with nothing after it)
Part = Annotated[T, _empty_if_null(dict)]
#: text or nothing (``null`` and absent alike)
Maybe = str | None

S = TypeVar("S", bound=Shape)


def read(shape: type[S], data: Any, where: str, at: str = "") -> S:
    """``data`` validated as ``shape``, or one :class:`~fairalloc.io.importers.common.ImportFailed`
    line at ``where`` (file: object) naming the field and what it must be.

    ``at``: where ``data`` sits inside its document (``slaves[0].resources[2]``), so that a wrong
    field's path starts there; such an inner object must be there (``null`` is refused), while a
    whole document of ``null`` reads as an empty object."""
    if data is None and at:
        raise ImportFailed(f"{where}: {at}: must be a mapping (got None)")
    try:
        return shape.model_validate({} if data is None else data)
    except ValidationError as exc:
        raise ImportFailed(f"{where}: {_message(exc, at)}") from None
    except RecursionError:
        raise ImportFailed(f"{where}: {at + ': ' if at else ''}nested too deeply for fairalloc to read") from None


#: what each of pydantic's error types says a field must be, in the words of the importers' messages
_MUST = {
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "model_attributes_type": "must be a mapping",
    "list_type": "must be a list",
    "string_type": "must be text",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
}


def _message(exc: ValidationError, at: str) -> str:
    """The first error as ``field: must be ... (got ...)``: the field's path in the document as the
    scheduler's files write it (``spec.tasks[0].template``), the offending value bounded."""
    err = exc.errors()[0]
    loc = field_path([p for p in err["loc"] if p != "[key]"])
    loc = at + ("." if at and loc and not loc.startswith("[") else "") + loc
    if err["type"] == "missing":
        return f"{loc}: required field is missing"
    must = _MUST.get(err["type"]) or one_line(err["msg"].removeprefix("Value error, "), 200)
    said = f"{must[0].lower() + must[1:]} (got {excerpt(err.get('input'))})"
    return f"{loc}: {said}" if loc else f"the object {said}"


# -- Kubernetes core objects: read by the plain Kubernetes, Volcano and Kueue importers ------------
# Field names as in k8s.io/api/core/v1/types.go (kubernetes/kubernetes, staging/src/k8s.io/api).


class ObjectMeta(Shape):
    """``metadata`` (``ObjectMeta``): what the importers read of any object."""

    name: Maybe = None
    namespace: Maybe = None
    labels: Table[Maybe] = {}
    annotations: Table[Maybe] = {}


class ResourceRequirements(Shape):
    """A container's ``resources``: ``requests`` and ``limits`` are resource lists (quantities,
    read by the numeric gate)."""

    requests: Table[Any] = {}
    limits: Table[Any] = {}


class Container(Shape):
    name: Maybe = None
    resources: ResourceRequirements = ResourceRequirements()
    #: ``Always`` on an init container makes it a sidecar (``ContainerRestartPolicy``)
    restartPolicy: Maybe = None


class PodSpec(Shape):
    containers: Items[Container] = []
    initContainers: Items[Container] = []
    overhead: Table[Any] = {}


class PodTemplate(Shape):
    """A ``PodTemplateSpec`` (a job's task, a Kueue pod set's ``template``)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()


class PodStatus(Shape):
    phase: Maybe = None


class Pod(Shape):
    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()


class NodeSpec(Shape):
    unschedulable: StrictBool | None = None  # the API server refuses "yes" as text


class NodeStatus(Shape):
    allocatable: Table[Any] | None = None
    capacity: Table[Any] = {}


class Node(Shape):
    metadata: ObjectMeta = ObjectMeta()
    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()


class Namespace(Shape):
    """A ``Namespace``: only its ``metadata`` is read."""

    metadata: ObjectMeta = ObjectMeta()


class ResourceQuotaSpec(Shape):
    hard: Table[Any] = {}


class ResourceQuota(Shape):
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceQuotaSpec = ResourceQuotaSpec()
