"""The shapes of the Mesos master's operator JSON the Mesos importer reads (``importers/mesos.py``).

Field names as apache/mesos writes them, at commit c1b42f79d157aa900be5cbb0c1023f1479962aa7
(Apache-2.0): the v1 messages of ``include/mesos/v1/mesos.proto``, ``include/mesos/v1/master/master.proto``
and ``include/mesos/quota/quota.proto`` (the v1 operator API answers them as JSON with the proto's
field names), and the v0 endpoints' writers: ``src/master/readonly_handler.cpp``
(``SlaveWriter::operator()``, ``FullFrameworkWriter::operator()``, ``json(ObjectWriter*,
Summary<Framework>)``, ``ReadOnlyHandler::roles``) and ``src/common/http.cpp`` (``model(const
Resources&)``, ``json(ObjectWriter*, const Task&)``).

A resources field is written in two shapes: a list of ``Resource`` messages (v1, ``QuotaInfo``) or
the map ``model(const Resources&)`` writes (``{"cpus": 4, "ports": "[31000-32000]"}``; a
``QuotaConfig`` writes ``{"cpus": {"value": 4}}``).  :data:`Resources` checks that it is one or the
other; the importer reads each listed ``Resource`` through :class:`Resource` (``read`` with its
place in the document), and the map's amounts through its numeric gate.  A role a quota, a weight
or a ``/roles`` entry names is kept as written (``Any``): the importer checks it by Mesos' own rule
for role names
(``roles::validate``, ``src/common/roles.cpp``), which also refuses text such as ``a/../b``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from fairalloc.core.errors import excerpt
from fairalloc.io.importers.shapes import Items, Maybe, Shape, Table

__all__ = [
    "Resources",
    "fields_shown",
    "Scalar",
    "ReservationInfo",
    "AllocationInfo",
    "RevocableInfo",
    "Resource",
    "QuotaConfig",
    "QuotaInfo",
    "QuotaStatus",
    "UpdateQuota",
    "SetQuota",
    "GetQuota",
    "WeightInfo",
    "WeightInfos",
    "RoleQuota",
    "Role",
    "Roles",
    "Agent",
    "StateTask",
    "Framework",
    "State",
    "AgentInfo",
    "V1Agent",
    "GetAgents",
    "ID",
    "FrameworkInfo",
    "V1Framework",
    "GetFrameworks",
    "Task",
    "GetTasks",
    "ExecutorInfo",
    "Executor",
    "GetExecutors",
    "GetState",
]


def _list_or_map(value: Any) -> Any:
    if value is None:  # as a protobuf decoder reads a null repeated field or map: empty
        return {}
    if not isinstance(value, (list, dict)):
        raise ValueError("must be a list or map of resources")
    return value


#: a resources field: a list of ``Resource`` or a ``{name: amount}`` map (``null``: none)
Resources = Annotated[Any, BeforeValidator(_list_or_map)]


def fields_shown(data: Any) -> str:
    """An object's fields as written, bounded: for a message about an object that lacks one."""
    return excerpt(data.model_dump(exclude_unset=True, exclude_defaults=True) if isinstance(data, Shape) else data)


# -- resources: include/mesos/v1/mesos.proto --------------------------------------------------------


class Scalar(Shape):
    """``Value.Scalar``: ``value`` (a double; read by the numeric gate)."""

    value: Any = None


class ReservationInfo(Shape):
    """``Resource.ReservationInfo``: the ``role`` a refinement reserves for."""

    role: Maybe = None


class AllocationInfo(Shape):
    """``Resource.AllocationInfo``: the ``role`` the resource is allocated to."""

    role: Maybe = None


class RevocableInfo(Shape):
    """``Resource.RevocableInfo``: an empty message; its presence makes a resource revocable."""


class Resource(Shape):
    """``Resource``: ``name``, ``type`` (``Value.Type``), ``scalar``, the deprecated ``role``,
    ``reservations`` (refinements, the last the most specific), ``allocation_info`` and
    ``revocable``."""

    name: Maybe = None
    type: Maybe = None
    scalar: Scalar | None = None
    role: Maybe = None
    reservations: Items[ReservationInfo] = []
    allocation_info: AllocationInfo | None = None
    revocable: RevocableInfo | None = None


# -- quota: include/mesos/quota/quota.proto -----------------------------------------------------------


class QuotaConfig(Shape):
    """``QuotaConfig``: ``role``, and ``guarantees`` and ``limits`` (``map<string, Value.Scalar>``)."""

    role: Any = None
    guarantees: Resources = {}
    limits: Resources = {}


class QuotaInfo(Shape):
    """``QuotaInfo`` (deprecated) and ``QuotaRequest``: ``role`` and ``guarantee`` (a list of
    ``Resource``).  ``configs`` is not the master's (docs/operator-http-api.md nests them so)."""

    role: Any = None
    guarantee: Resources = []
    configs: list[QuotaConfig] | None = None


class QuotaStatus(Shape):
    """``QuotaStatus``: the legacy ``infos`` beside the ``configs`` (``GET /quota``)."""

    infos: Items[QuotaInfo] = []
    configs: Items[QuotaConfig] = []


class UpdateQuota(Shape):
    """``master.Call.UpdateQuota``: ``quota_configs``."""

    quota_configs: Items[QuotaConfig] = []


class SetQuota(Shape):
    """``master.Call.SetQuota`` (deprecated): ``quota_request`` (a ``QuotaRequest``)."""

    quota_request: QuotaInfo = QuotaInfo()


class GetQuota(Shape):
    """``master.Response.GetQuota``: ``status``."""

    status: QuotaStatus = QuotaStatus()


# -- weights and roles ----------------------------------------------------------------------------


class WeightInfo(Shape):
    """``WeightInfo`` (``mesos.proto``; ``GET /weights`` writes a list of them): ``role`` and
    ``weight`` (a double, read by the numeric gate)."""

    role: Any = None
    weight: Any = None


class WeightInfos(Shape):
    """``master.Response.GetWeights`` and ``master.Call.UpdateWeights``: ``weight_infos``."""

    weight_infos: Items[WeightInfo] = []


class RoleQuota(Shape):
    """``/roles``' ``quota`` (``ReadOnlyHandler::roles``): ``guarantee`` and ``limit`` maps (Mesos >=
    1.9; before, a ``QuotaInfo`` whose ``guarantee`` is a list)."""

    guarantee: Resources = {}
    limit: Resources = {}


class Role(Shape):
    """A role of ``GET /roles`` (``ReadOnlyHandler::roles``: ``name``, ``weight``, ``quota``,
    ``resources``, ``allocated``, ``offered``, ``reserved``) or of ``GET_ROLES`` (``Role`` of
    ``mesos.proto``: ``name``, ``weight``, ``resources``)."""

    name: Any = None
    weight: Any = None
    quota: RoleQuota | None = None
    allocated: Resources = {}
    resources: Resources = {}
    reserved: Table[Any] = {}


class Roles(Shape):
    """``GET /roles`` and ``master.Response.GetRoles``: ``roles`` (each read as a :class:`Role`
    once its name is known, so that its errors name it)."""

    roles: Items[dict[str, Any]] = []


# -- v0 state: src/master/readonly_handler.cpp -------------------------------------------------------


class Agent(Shape):
    """An agent of ``GET /state`` or ``/slaves`` (``SlaveWriter``): ``id``, ``hostname``, the total
    ``resources``, ``reserved_resources`` (role -> resources) and ``unreserved_resources``."""

    id: Maybe = None
    hostname: Maybe = None
    resources: Resources = {}
    unreserved_resources: Resources = {}
    reserved_resources: Table[Any] = {}


class StateTask(Shape):
    """A task of a framework in ``GET /state`` (``json(ObjectWriter*, const Task&)``): ``id``,
    ``name``, ``state``, ``resources`` and the ``role`` its resources are allocated to."""

    id: Maybe = None
    name: Maybe = None
    state: Maybe = None
    role: Maybe = None
    resources: Resources = []


class Framework(Shape):
    """A framework of ``GET /state`` (``json(Summary<Framework>)``, ``FullFrameworkWriter``):
    ``id``, ``name``, ``role`` (single-role) or ``roles`` (multi-role), ``used_resources`` and
    ``tasks``."""

    id: Maybe = None
    name: Maybe = None
    role: Maybe = None
    roles: list[str] | None = None
    used_resources: Resources = {}
    tasks: Items[StateTask] = []


class State(Shape):
    """``GET /master/state`` (also ``/state``, ``/slaves``): ``slaves`` and ``frameworks``."""

    slaves: Items[Agent] = []
    frameworks: Items[Framework] | None = None


# -- v1 GET_STATE and GET_AGENTS: include/mesos/v1/master/master.proto -------------------------------


class AgentInfo(Shape):
    """``AgentInfo`` (``mesos.proto``): ``hostname`` and ``resources``."""

    hostname: Maybe = None
    resources: Resources = []


class V1Agent(Shape):
    """``Response.GetAgents.Agent``: ``agent_info`` and ``total_resources``."""

    agent_info: AgentInfo = AgentInfo()
    total_resources: Resources = []


class GetAgents(Shape):
    """``Response.GetAgents``: ``agents``."""

    agents: Items[V1Agent] = []


class ID(Shape):
    """``FrameworkID`` (and the other ``*ID`` messages): ``value``."""

    value: Maybe = None


class FrameworkInfo(Shape):
    """``FrameworkInfo`` (``mesos.proto``): ``id``, ``name``, ``role`` (deprecated) and ``roles``."""

    id: ID = ID()
    name: Maybe = None
    role: Maybe = None
    roles: list[str] | None = None


class V1Framework(Shape):
    """``Response.GetFrameworks.Framework``: ``framework_info``."""

    framework_info: FrameworkInfo = FrameworkInfo()


class GetFrameworks(Shape):
    """``Response.GetFrameworks``: ``frameworks``."""

    frameworks: Items[V1Framework] = []


class Task(Shape):
    """``Task`` (``mesos.proto``): ``name``, ``framework_id``, ``state`` and ``resources`` (whose
    ``allocation_info`` names the role; a ``role`` as the v0 writer adds it is read too)."""

    name: Maybe = None
    framework_id: ID = ID()
    state: Maybe = None
    role: Maybe = None
    resources: Resources = []


class GetTasks(Shape):
    """``Response.GetTasks``: ``tasks`` (the current ones; completed and unreachable tasks hold nothing)."""

    tasks: Items[Task] = []


class ExecutorInfo(Shape):
    """``ExecutorInfo`` (``mesos.proto``): its own ``resources``."""

    resources: Resources = []


class Executor(Shape):
    """``Response.GetExecutors.Executor``: ``executor_info``."""

    executor_info: ExecutorInfo = ExecutorInfo()


class GetExecutors(Shape):
    """``Response.GetExecutors``: ``executors``."""

    executors: Items[Executor] = []


class GetState(Shape):
    """``Response.GetState``: ``get_tasks``, ``get_executors``, ``get_frameworks``, ``get_agents``
    (each absent when not asked for)."""

    get_tasks: GetTasks | None = None
    get_executors: GetExecutors | None = None
    get_frameworks: GetFrameworks | None = None
    get_agents: GetAgents | None = None
