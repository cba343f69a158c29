"""Apache Mesos: the master's operator JSON (quota, weights, roles, state) as a ``mesos-drf`` case.

Source read: apache/mesos at commit c1b42f79d157aa900be5cbb0c1023f1479962aa7 (Apache-2.0), for the
exact JSON of every endpoint:

* quota: ``src/master/quota_handler.cpp``, ``QuotaHandler::_status`` (``GET /quota`` and the v1
  ``GET_QUOTA`` answer a ``QuotaStatus``: legacy ``infos`` (role and ``guarantee``, a list of
  ``Resource``) beside ``configs`` (``QuotaConfig``: ``guarantees`` and ``limits``, maps of
  ``Value.Scalar``, ``include/mesos/quota/quota.proto``)); ``QuotaHandler::update`` (v1
  ``UPDATE_QUOTA``, ``update_quota.quota_configs``); ``QuotaHandler::_set`` (``POST /quota`` and
  v1 ``SET_QUOTA`` take a ``QuotaRequest``: role and ``guarantee``; the master stores it as
  ``guarantees`` and ``limits`` both equal to the guarantee, as docs/quota.md says of Mesos < 1.9:
  "Setting guarantees also set implicit quota limits");
* weights: docs/weights.md (``GET``/``PUT /weights``: ``[{"role": ..., "weight": ...}]``) and
  docs/operator-http-api.md (``GET_WEIGHTS`` / ``UPDATE_WEIGHTS``: ``weight_infos``);
* roles: ``src/master/readonly_handler.cpp``, ``ReadOnlyHandler::roles`` (``GET /roles``: per role
  ``name``, ``weight``, ``quota`` (``guarantee``, ``limit``, ``consumed``), ``allocated``,
  ``offered``, ``reserved``, ``resources`` (= allocated + offered, deprecated), ``frameworks``) and
  ``ReadOnlyHandler::getRoles`` (v1 ``GET_ROLES``: ``resources`` = allocated + offered as a list).
  Both are *subtree* amounts: ``RoleResourceBreakdown::allocated`` (``src/master/master.cpp``) sums
  ``allocatedToRoleSubtree(role)``, and ``Master::knownRoles`` lists every ancestor of a known role;
* state: ``SlaveWriter`` (``slaves[].resources``: the agent's total, ``reserved_resources``,
  ``unreserved_resources``) and ``json(Summary<Framework>)`` / ``FullFrameworkWriter``
  (``frameworks[].used_resources`` of the framework's ``role``, or ``roles`` when multi-role); v1
  ``GET_STATE`` / ``GET_AGENTS`` (``agents[].total_resources``) and ``get_tasks.tasks[]``;
* resources in two shapes: a list of ``Resource`` (``{"name": "cpus", "type": "SCALAR", "scalar":
  {"value": 4}}``) and the map ``src/common/http.cpp`` writes (``json(ObjectWriter*, Resources)``:
  scalars as numbers, RANGES and SETs as text such as ``"[31000-32000]"``, revocable resources as
  ``<name>_revocable``).  Mesos' JSON carries numbers only: a text amount or a negative one is an
  error.  Units: ``cpus`` in cores, ``mem`` and ``disk`` in MiB (Mesos' "MB"), others counts.

Every object is read through its schema (``importers/mesos_shapes.py``: the fields above, by their
names in Mesos' protos and writers) before a field of it is used, so a wrong shape is one line naming
the file, the object and the field; amounts go through the numeric gate.

How the case reads them (``models/mesos_drf.py``): role ``eng/dev`` is the leaf ``eng/dev`` in
group ``eng``; a role that has sub-roles is a group, and when it also holds resources itself it is
also the leaf ``<role>/.`` (the sorter's virtual leaf, weight 1) in its own group.  A role's weight
is its node's ``weight``; quota ``guarantees`` -> ``guarantee``, ``limits`` -> ``limit``.  The
master knows what a role *holds*, not what its frameworks still want: a role's ``request`` is its
usage (with a warning), so the entitlement says how the current holdings would be shared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from fairalloc.core.errors import excerpt, shown
from fairalloc.io.importers.common import Document, Draft, ImportFailed, Notes, once
from fairalloc.io.importers.common import number as gate
from fairalloc.io.importers.mesos_shapes import (
    Framework,
    GetAgents,
    GetQuota,
    GetState,
    QuotaConfig,
    QuotaInfo,
    QuotaStatus,
    Resource,
    Role,
    RoleQuota,
    Roles,
    SetQuota,
    State,
    StateTask,
    Task,
    UpdateQuota,
    V1Agent,
    WeightInfo,
    WeightInfos,
    fields_shown,
)
from fairalloc.io.importers.shapes import read
from fairalloc.io.quantities import tidy

SYSTEM = "mesos"

#: Mesos' units (``cpus`` in cores; ``mem`` and ``disk`` in MB, which Mesos counts as MiB)
UNITS = {"cpus": "cores", "mem": "MiB", "disk": "MiB", "gpus": "count"}

#: the v1 operator API's calls and answers this importer reads (docs/operator-http-api.md)
_V1 = ("GET_QUOTA", "UPDATE_QUOTA", "SET_QUOTA", "GET_WEIGHTS", "UPDATE_WEIGHTS", "GET_ROLES", "GET_STATE",
       "GET_AGENTS")  # fmt: skip

#: task states whose resources a framework holds (``include/mesos/v1/mesos.proto``, TaskState)
_HOLDING = ("TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING")

Amounts = dict[str, Decimal]


@dataclass
class _Said:
    """A value and the document (and field) it was read from: later documents win, with a warning."""

    value: Any
    doc: Document
    field: str


@dataclass
class _Role:
    weight: _Said | None = None
    guarantee: _Said | None = None
    limit: _Said | None = None
    subtree: _Said | None = None  # /roles and GET_ROLES: what the role's subtree holds
    own: Amounts = field(default_factory=dict)  # state: what the role's own frameworks hold
    own_from: Document | None = None


@dataclass
class _Import:
    """What the documents say, gathered before the role tree is built."""

    notes: Notes
    roles: dict[str, _Role] = field(default_factory=dict)
    capacity: Amounts = field(default_factory=dict)
    agents: int = 0
    state_read: bool = False
    kinds: dict[str, int] = field(default_factory=dict)

    def role(self, name: Any, doc: Document, where: str) -> _Role:
        return self.roles.setdefault(_role_name(name, doc, where), _Role())

    def said(self, role: str, attr: str, value: Any, doc: Document, where: str) -> None:
        """Record ``role``'s ``attr``; a different earlier value is replaced with a warning."""
        entry = self.roles.setdefault(role, _Role())
        old: _Said | None = getattr(entry, attr)
        if old is not None and old.doc is doc:  # one answer naming a role twice: a duplicate, not a later snapshot
            once({role: f"{doc.where}: {old.field}"}, role, f"{doc.where}: {where}", "role")
        if old is not None and old.value != value:
            self.notes.warn(
                doc, f"role {role}", where,
                f"{_shown(value)} replaces the {_shown(old.value)} of {old.doc.where} ({old.field})",
            )  # fmt: skip
        setattr(entry, attr, _Said(value, doc, where))

    def seen(self, kind: str) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1


# -- detection ----------------------------------------------------------------------------------
def detect(docs: list[Document]) -> int:
    """How many documents are Mesos operator JSON (quota, weights, roles, state, agents)."""
    return sum(_shape(d.data) is not None for d in docs)


def _shape(data: Any) -> str | None:
    """Which endpoint's JSON ``data`` is, or ``None``."""
    if isinstance(data, list):
        ok = any(isinstance(e, dict) and "role" in e and "weight" in e for e in data)  # the rest: their schema's
        return "weights" if ok else None
    if not isinstance(data, dict) or "kind" in data or "apiVersion" in data:
        return None
    if data.get("type") in _V1:
        return "v1"
    if isinstance(data.get("infos"), list) or isinstance(data.get("configs"), list):
        return "quota-status"
    if isinstance(data.get("quota_configs"), list):
        return "quota-configs"
    if "role" in data and ("guarantees" in data or "limits" in data):
        return "quota-config"
    if "role" in data and isinstance(data.get("guarantee"), list):
        return "quota-request"
    if isinstance(data.get("weight_infos"), list):
        return "weight-infos"
    roles = data.get("roles")
    if isinstance(roles, list) and any(isinstance(r, dict) and "name" in r for r in roles):
        return "roles"
    if "slaves" in data:  # a wrong shape of its list is its schema's to name
        return "state"
    return None


# -- conversion ---------------------------------------------------------------------------------
def convert(docs: list[Document], notes: Notes) -> Draft:
    """The roles of ``docs`` as a ``mesos-drf`` draft (see the module doc for the mapping)."""
    seen = _Import(notes)
    for doc in docs:
        _read(seen, doc)
    draft = Draft(SYSTEM, "mesos-drf", list(dict.fromkeys(d.file for d in docs)))
    _build_tree(seen, draft)
    named = set(draft.named_resources())
    draft.capacity = {r: v for r, v in seen.capacity.items() if v > 0 or r in named}
    if draft.capacity:
        draft.capacity_from = "nodes"
    draft.name_units(lambda r: UNITS.get(r, "count"))
    draft.description = _description(seen, draft)
    return draft


_KINDS = {"quota-status": "quota", "quota-configs": "quota", "quota-config": "quota", "quota-request": "quota",
          "weight-infos": "weights"}  # fmt: skip


def _read(seen: _Import, doc: Document) -> None:
    shape = _shape(doc.data)
    data = doc.data
    if shape is None:
        seen.notes.warn(
            doc, doc.label, "", "not a Mesos operator endpoint's JSON (quota, weights, roles, state): skipped"
        )
        return
    seen.seen(data["type"] if shape == "v1" else _KINDS.get(shape, shape))
    where = f"{doc.where}: {_KINDS.get(shape, shape)}"
    if shape == "v1":
        _read_v1(seen, doc, data)
    elif shape == "quota-status":
        _quota_status(seen, doc, read(QuotaStatus, data, where), "")
    elif shape == "quota-configs":
        _quota_configs(seen, doc, read(UpdateQuota, data, where).quota_configs, "quota_configs")
    elif shape == "quota-config":
        _quota_config(seen, doc, read(QuotaConfig, data, where), "")
    elif shape == "quota-request":
        _quota_info(seen, doc, read(QuotaInfo, data, where), "")
    elif shape == "weights":
        _weights(seen, doc, [read(WeightInfo, w, where, f"[{k}]") for k, w in enumerate(data)], "")
    elif shape == "weight-infos":
        _weights(seen, doc, read(WeightInfos, data, where).weight_infos, "weight_infos")
    elif shape == "roles":
        _roles(seen, doc, read(Roles, data, where).roles, "roles")
    else:
        _state(seen, doc, read(State, data, where))


def _read_v1(seen: _Import, doc: Document, data: dict) -> None:
    """A v1 operator API call or answer (``{"type": "GET_QUOTA", "get_quota": {...}}``)."""
    kind = data["type"]
    key = kind.lower()
    body = data.get(key)
    if body is None:
        if kind.startswith("UPDATE_") or kind == "SET_QUOTA":
            raise ImportFailed(f"{doc.where}: {kind}: {key}: missing (the call's body)")
        seen.notes.warn(doc, kind, key, "missing: a call, not the master's answer? nothing to read")
        return
    where = f"{doc.where}: {kind}"
    if kind == "GET_QUOTA":
        _quota_status(seen, doc, read(GetQuota, body, where, key).status, f"{key}.status")
    elif kind == "UPDATE_QUOTA":
        _quota_configs(seen, doc, read(UpdateQuota, body, where, key).quota_configs, f"{key}.quota_configs")
    elif kind == "SET_QUOTA":
        _quota_info(seen, doc, read(SetQuota, body, where, key).quota_request, f"{key}.quota_request")
    elif kind in ("GET_WEIGHTS", "UPDATE_WEIGHTS"):
        _weights(seen, doc, read(WeightInfos, body, where, key).weight_infos, f"{key}.weight_infos")
    elif kind == "GET_ROLES":
        _roles(seen, doc, read(Roles, body, where, key).roles, f"{key}.roles")
    elif kind == "GET_AGENTS":
        _agents(seen, doc, read(GetAgents, body, where, key).agents, f"{key}.agents")
    else:
        _v1_state(seen, doc, read(GetState, body, where, key), key)


# -- quota --------------------------------------------------------------------------------------
def _quota_status(seen: _Import, doc: Document, status: QuotaStatus, at: str) -> None:
    """A ``QuotaStatus``: ``configs`` (guarantees and limits) when given, else the legacy ``infos``
    (the master writes both; ``infos`` only repeats the guarantees)."""
    for k, info in enumerate(status.infos):
        if info.configs is not None:  # docs/operator-http-api.md and docs/quota.md nest them so
            where = _dot(at, f"infos[{k}].configs")
            seen.notes.warn(
                doc, "quota", where,
                "the master writes configs beside infos (QuotaStatus, quota.proto), not inside them: read as configs",
            )  # fmt: skip
            _quota_configs(seen, doc, info.configs, where)
    if status.configs:
        _quota_configs(seen, doc, status.configs, _dot(at, "configs"))
        return
    for k, info in enumerate(status.infos):
        if "configs" not in info.model_fields_set:
            _quota_info(seen, doc, info, _dot(at, f"infos[{k}]"))


def _quota_configs(seen: _Import, doc: Document, configs: list[QuotaConfig], at: str) -> None:
    for k, config in enumerate(configs):
        _quota_config(seen, doc, config, f"{at}[{k}]")


def _quota_config(seen: _Import, doc: Document, config: QuotaConfig, at: str) -> None:
    """A ``QuotaConfig``: ``guarantees`` and ``limits``, maps of resource to ``{"value": x}`` (or x)."""
    role = _role_name(config.role, doc, _dot(at, "role"))
    seen.roles.setdefault(role, _Role())
    for name, attr in (("guarantees", "guarantee"), ("limits", "limit")):
        if name in config.model_fields_set:
            amounts = _amounts(seen.notes, doc, f"role {role}", _dot(at, name), getattr(config, name), keep_zero=True)
            _quota(seen, doc, role, attr, amounts, _dot(at, name))


def _quota_info(seen: _Import, doc: Document, info: QuotaInfo, at: str) -> None:
    """A legacy ``QuotaInfo`` / ``QuotaRequest``: its role and ``guarantee``."""
    role = _role_name(info.role, doc, _dot(at, "role"))
    seen.roles.setdefault(role, _Role())
    _legacy_guarantee(seen, doc, role, info.guarantee, _dot(at, "guarantee"))


def _legacy_guarantee(seen: _Import, doc: Document, role: str, guarantee: Any, at: str) -> None:
    """A ``QuotaInfo``'s ``guarantee`` is also the role's limit (``QuotaHandler::_set`` stores both)."""
    amounts = _amounts(seen.notes, doc, f"role {role}", at, guarantee, keep_zero=True)
    _quota(seen, doc, role, "guarantee", amounts, at)
    _quota(seen, doc, role, "limit", amounts, at)


def _quota(seen: _Import, doc: Document, role: str, attr: str, amounts: Amounts, at: str) -> None:
    if not amounts:
        return
    if "/" in role:
        seen.notes.warn(
            doc, f"role {role}", at,
            "Mesos refuses quota on nested roles (QuotaHandler::update); the model honours it anyway",
        )  # fmt: skip
    seen.said(role, attr, amounts, doc, at)


# -- weights ------------------------------------------------------------------------------------
def _weights(seen: _Import, doc: Document, infos: list[WeightInfo], at: str) -> None:
    for k, info in enumerate(infos):
        where = f"{at}[{k}]" if at else f"[{k}]"
        role = _role_name(info.role, doc, f"{where}.role")
        _weight(seen, doc, role, info.weight, f"{where}.weight")


def _weight(seen: _Import, doc: Document, role: str, value: Any, at: str) -> None:
    weight = _number(value, doc, f"role {role}", at)
    if weight <= 0:  # the /weights handler refuses them (docs/weights.md: "non-positive weights")
        raise ImportFailed(f"{doc.where}: role {role}: {at}: must be positive (got {excerpt(value)})")
    seen.said(role, "weight", weight, doc, at)


# -- roles --------------------------------------------------------------------------------------
def _roles(seen: _Import, doc: Document, roles: list[dict[str, Any]], at: str) -> None:
    """``GET /roles`` or ``GET_ROLES``: weights, quota, and what each role's subtree holds.  Each
    role is read through its schema once its name is known, so that its errors name it."""
    for k, given in enumerate(roles):
        role = _role_name(given.get("name"), doc, f"{at}[{k}].name")
        obj = f"role {role}"
        entry = read(Role, given, f"{doc.where}: {obj}")
        seen.roles.setdefault(role, _Role())
        if "weight" in entry.model_fields_set:
            _weight(seen, doc, role, entry.weight, "weight")
        if entry.quota is not None:
            _roles_quota(seen, doc, role, entry.quota)
        held = _held(seen.notes, doc, obj, entry)
        if held is not None:
            seen.said(role, "subtree", held, doc, "allocated" if "allocated" in entry.model_fields_set else "resources")
        if any(_positive(v) for v in entry.reserved.values()):
            seen.notes.warn(doc, obj, "reserved", "reservations are not modelled (counted as shared capacity)")


def _roles_quota(seen: _Import, doc: Document, role: str, quota: RoleQuota) -> None:
    """``/roles`` quota: ``guarantee`` and ``limit`` maps (Mesos >= 1.9), or a ``QuotaInfo`` whose
    ``guarantee`` is a list (Mesos < 1.9: the guarantee is also the limit)."""
    if isinstance(quota.guarantee, list):
        _legacy_guarantee(seen, doc, role, quota.guarantee, "quota.guarantee")
        return
    for name in ("guarantee", "limit"):
        if name in quota.model_fields_set:
            amounts = _amounts(seen.notes, doc, f"role {role}", f"quota.{name}", getattr(quota, name), keep_zero=True)
            _quota(seen, doc, role, name, amounts, f"quota.{name}")


def _held(notes: Notes, doc: Document, obj: str, entry: Role) -> Amounts | None:
    """What a role's subtree holds: ``allocated``; else ``resources`` (allocated + offered)."""
    if "allocated" in entry.model_fields_set:
        return _amounts(notes, doc, obj, "allocated", entry.allocated)
    if "resources" not in entry.model_fields_set:
        return None
    held = _amounts(notes, doc, obj, "resources", entry.resources)
    if held:
        notes.warn(doc, obj, "resources", "allocated plus offered resources (the master's sum): read as usage")
    return held


# -- state and agents ---------------------------------------------------------------------------
def _state(seen: _Import, doc: Document, state: State) -> None:
    """``GET /master/state`` (or ``/state``, ``/slaves``): agents' totals, frameworks' usage."""
    for k, agent in enumerate(state.slaves):
        obj = f"agent {agent.hostname or agent.id or k}"
        total = agent.resources if "resources" in agent.model_fields_set else agent.unreserved_resources
        _agent_total(seen, doc, obj, f"slaves[{k}].resources", total)
        if agent.reserved_resources:
            seen.notes.warn(
                doc, obj, f"slaves[{k}].reserved_resources",
                f"reservations for {', '.join(sorted(agent.reserved_resources))} are not modelled "
                "(counted as shared capacity)",
            )  # fmt: skip
    if state.frameworks is not None:
        seen.state_read = True
        for k, fw in enumerate(state.frameworks):
            _framework(seen, doc, fw, f"frameworks[{k}]")


#: a framework that names no role is in the default role (``FrameworkInfo.role``, default ``"*"``,
#: ``include/mesos/v1/mesos.proto``)
_NO_ROLE = "names no role: read in Mesos' default role '*' (FrameworkInfo.role)"


def _framework(seen: _Import, doc: Document, fw: Framework, at: str) -> None:
    """A framework's ``used_resources`` belong to its role (``offered_resources`` are not held)."""
    obj = f"framework {fw.name or fw.id or at}"
    roles = fw.roles if fw.roles is not None else [fw.role or "*"]
    if fw.role is None and fw.roles is None:
        seen.notes.warn(doc, obj, at, _NO_ROLE)
    used = _amounts(seen.notes, doc, obj, f"{at}.used_resources", fw.used_resources)
    if not used:
        return
    if len(roles) != 1:
        by_role = _tasks_by_role(seen, doc, fw.tasks, f"{at}.tasks", roles[0] if roles else "*")
        seen.notes.warn(
            doc, obj, f"{at}.used_resources",
            "a multi-role framework's usage is not split by role: read from its tasks (executors' resources left out)",
        )  # fmt: skip
        for role, amounts in by_role.items():
            _add_own(seen, doc, role, amounts)
        return
    role = _role_name(roles[0], doc, f"{at}.role")
    seen.roles.setdefault(role, _Role())
    _add_own(seen, doc, role, used)


def _tasks_by_role(seen: _Import, doc: Document, tasks: list[StateTask], at: str, default: str) -> dict[str, Amounts]:
    out: dict[str, Amounts] = {}
    for k, task in enumerate(tasks):
        if task.state not in _HOLDING:
            continue
        obj = f"task {task.name or task.id or k}"
        role = _role_name(_task_role(doc, obj, f"{at}[{k}]", task, default), doc, f"{at}[{k}].role")
        held = out.setdefault(role, {})
        for r, v in _amounts(seen.notes, doc, obj, f"{at}[{k}].resources", task.resources).items():
            held[r] = held.get(r, Decimal(0)) + v
    return out


def _task_role(doc: Document, obj: str, at: str, task: StateTask | Task, default: str) -> str:
    """A task's ``role`` (v0), else the ``allocation_info`` of its resources, else its framework's."""
    if task.role is not None:
        return task.role
    listed = _resources(doc, obj, f"{at}.resources", task.resources)
    for res in listed if isinstance(listed, list) else []:
        if res.allocation_info is not None and res.allocation_info.role is not None:
            return res.allocation_info.role
    return default


def _add_own(seen: _Import, doc: Document, role: str, amounts: Amounts) -> None:
    entry = seen.roles.setdefault(role, _Role())
    for r, v in amounts.items():
        entry.own[r] = entry.own.get(r, Decimal(0)) + v
    entry.own_from = entry.own_from or doc


def _agents(seen: _Import, doc: Document, agents: list[V1Agent], at: str) -> None:
    """v1 agents: ``total_resources`` (else ``agent_info.resources``), lists of ``Resource``."""
    for k, agent in enumerate(agents):
        obj = f"agent {agent.agent_info.hostname or k}"
        if "total_resources" in agent.model_fields_set:
            _agent_total(seen, doc, obj, f"{at}[{k}].total_resources", agent.total_resources)
        else:
            _agent_total(seen, doc, obj, f"{at}[{k}].agent_info.resources", agent.agent_info.resources)


def _agent_total(seen: _Import, doc: Document, obj: str, at: str, total: Any) -> None:
    seen.agents += 1
    for r, v in _amounts(seen.notes, doc, obj, at, total, keep_zero=True).items():
        seen.capacity[r] = seen.capacity.get(r, Decimal(0)) + v


def _v1_state(seen: _Import, doc: Document, body: GetState, key: str) -> None:
    """v1 ``GET_STATE``: agents, and the resources of the tasks frameworks hold, by their role."""
    if body.get_agents is not None:
        _agents(seen, doc, body.get_agents.agents, f"{key}.get_agents.agents")
    fw_role: dict[str, str] = {}
    for fw in body.get_frameworks.frameworks if body.get_frameworks is not None else []:
        info = fw.framework_info
        if info.id.value:
            fw_role[info.id.value] = info.role or "*"
            if info.role is None and info.roles is None:
                seen.notes.warn(doc, f"framework {info.name or info.id.value}", "framework_info", _NO_ROLE)
    if body.get_tasks is not None:
        seen.state_read = True
        at = f"{key}.get_tasks.tasks"
        for k, task in enumerate(body.get_tasks.tasks):
            if task.state not in _HOLDING:
                continue
            obj = f"task {task.name or k}"
            given = _task_role(doc, obj, f"{at}[{k}]", task, fw_role.get(task.framework_id.value or "", "*"))
            role = _role_name(given, doc, f"{at}[{k}]")
            _add_own(seen, doc, role, _amounts(seen.notes, doc, obj, f"{at}[{k}].resources", task.resources))
    for k, ex in enumerate(body.get_executors.executors if body.get_executors is not None else []):
        if ex.executor_info.resources:
            where = f"{key}.get_executors.executors[{k}].executor_info.resources"
            seen.notes.warn(doc, "executor", where, "executors' own resources are not counted as usage")


# -- the role tree ------------------------------------------------------------------------------
def _build_tree(seen: _Import, draft: Draft) -> None:
    """Groups for roles with sub-roles, users for the others and for virtual leaves ``<role>/.``."""
    names = set(seen.roles)
    for role in list(names):
        parts = role.split("/")
        names.update("/".join(parts[:k]) for k in range(1, len(parts)))
    internal = {r.rsplit("/", 1)[0] for r in names if "/" in r}
    usage = _usages(seen, names, internal)
    for role in sorted(names, key=lambda r: (r.count("/"), r)):
        entry = seen.roles.get(role, _Role())
        parent = role.rsplit("/", 1)[0] if "/" in role else None
        spec = _configured(entry)
        if role in internal:
            draft.groups[role] = {"parent": parent, **spec}
            if usage.get(role):
                draft.users[f"{role}/."] = {"group": role, **_held_fields(seen, entry, role, usage[role])}
        else:
            draft.users[role] = {"group": parent, **spec, **_held_fields(seen, entry, role, usage.get(role, {}))}
    for spec in [*draft.groups.values(), *draft.users.values()]:
        for key in [k for k, v in spec.items() if v is None or v == {}]:
            del spec[key]


def _configured(entry: _Role) -> dict:
    weight = entry.weight.value if entry.weight and entry.weight.value != 1 else None
    return {
        "weight": weight,
        "guarantee": entry.guarantee.value if entry.guarantee else None,
        "limit": entry.limit.value if entry.limit else None,
    }


def _held_fields(seen: _Import, entry: _Role, role: str, usage: Amounts) -> dict:
    """``usage`` and ``request``: the master shows what a role holds, not what it still wants."""
    if not usage:
        return {}
    doc = entry.own_from or (entry.subtree.doc if entry.subtree else None)
    seen.notes.warn(
        doc or "", f"role {role}", "request",
        "the master's JSON shows no pending demand: request = usage (what the role holds)",
    )  # fmt: skip
    return {"usage": dict(usage), "request": dict(usage)}


def _usages(seen: _Import, names: set[str], internal: set[str]) -> dict[str, Amounts]:
    """Each role's own holdings: from ``/roles`` (the master's accounting, executors included) when
    read, whose amounts are per subtree (own = subtree - the direct sub-roles' subtrees); else from
    the state's frameworks and tasks.  Where both are read and differ, a warning."""
    from_state = {r: {k: v for k, v in e.own.items() if v > 0} for r, e in seen.roles.items() if e.own}
    if not any(e.subtree is not None for e in seen.roles.values()):
        return from_state
    out: dict[str, Amounts] = {}
    for role in sorted(names):
        entry = seen.roles.get(role)
        if entry is None or entry.subtree is None:
            if from_state.get(role):  # e.g. '*': the roles file leaves it out, the state's frameworks hold it
                seen.notes.warn(
                    entry.own_from if entry and entry.own_from else "", f"role {role}", "",
                    "not in the roles file: its usage read from the state's frameworks",
                )  # fmt: skip
                out[role] = from_state[role]
            continue
        own = dict(entry.subtree.value)
        kids = [r for r in names if "/" in r and r.rsplit("/", 1)[0] == role]
        for kid in kids:
            sub = seen.roles.get(kid)
            for r, v in (sub.subtree.value if sub and sub.subtree else {}).items():
                own[r] = own.get(r, Decimal(0)) - v
        short = {r: -v for r, v in own.items() if v < 0}
        if short:
            seen.notes.warn(
                entry.subtree.doc, f"role {role}", entry.subtree.field,
                f"less than its sub-roles hold ({_shown(short)} short): its own usage read as 0 there",
            )  # fmt: skip
        out[role] = {r: tidy(v) for r, v in own.items() if v > 0}
        state = from_state.get(role, {})
        if seen.state_read and state != out[role]:
            seen.notes.warn(
                entry.subtree.doc, f"role {role}", entry.subtree.field,
                f"{_shown(out[role])} held, the state's frameworks hold {_shown(state)}: this file's numbers read",
            )  # fmt: skip
    return out


# -- resources ----------------------------------------------------------------------------------
def _resources(doc: Document, obj: str, at: str, value: Any) -> list[Resource] | dict[str, Any]:
    """A resources field (its schema let through a list or a map): each listed ``Resource`` read
    through :class:`~fairalloc.io.importers.mesos_shapes.Resource`."""
    if not isinstance(value, list):
        return value
    return [read(Resource, res, f"{doc.where}: {obj}", f"{at}[{k}]") for k, res in enumerate(value)]


def _amounts(notes: Notes, doc: Document, obj: str, at: str, value: Any, keep_zero: bool = False) -> Amounts:
    """Scalar resources of a ``Resource`` list or a ``{name: amount}`` map (amounts as numbers or
    ``{"value": x}``); RANGES, SETs and revocable resources are warned about and skipped."""
    out: Amounts = {}
    listed = _resources(doc, obj, at, value)
    got: list[tuple[str, Decimal] | None]
    if isinstance(listed, list):
        got = [_resource(notes, doc, obj, f"{at}[{k}]", res) for k, res in enumerate(listed)]
    else:
        got = [_entry(notes, doc, obj, f"{at}.{name}", str(name), amount) for name, amount in listed.items()]
    for name, amount in filter(None, got):
        out[name] = out.get(name, Decimal(0)) + amount
    return {r: tidy(v) for r, v in out.items() if keep_zero or v > 0}


def _resource(notes: Notes, doc: Document, obj: str, at: str, res: Resource) -> tuple[str, Decimal] | None:
    """One ``Resource`` message (``include/mesos/v1/mesos.proto``)."""
    if not res.name:
        raise ImportFailed(f"{doc.where}: {obj}: {at}: a Resource needs a name (got {fields_shown(res)})")
    name = res.name
    given = res.model_fields_set
    kind = res.type if "type" in given else ("SCALAR" if "scalar" in given else None)
    if kind != "SCALAR":
        notes.warn(doc, obj, f"{at} ({name})", f"{kind or 'untyped'} resources are not shared by quantity: skipped")
        return None
    if "revocable" in given:
        notes.warn(doc, obj, f"{at} ({name})", "revocable resources are not modelled: skipped")
        return None
    reserved = _reservation(res)
    if reserved:
        notes.warn(doc, obj, f"{at} ({name})", f"reserved for {reserved}: reservations are not modelled")
    if res.scalar is None or "value" not in res.scalar.model_fields_set:
        raise ImportFailed(f"{doc.where}: {obj}: {at}.scalar.value: missing for the SCALAR resource {name}")
    return name, _number(res.scalar.value, doc, obj, f"{at}.scalar.value")


def _reservation(res: Resource) -> str:
    if res.reservations:  # refinements: the last is the most specific
        return f"role {res.reservations[-1].role or '?'}"
    return f"role {res.role}" if res.role is not None and res.role != "*" else ""


#: how ``src/common/http.cpp`` writes RANGES (``[31000-32000]``) and SETs (``{a, b}``)
_TEXT_VALUE = re.compile(r"\s*(\[.*\]|\{.*\})\s*", re.S)


def _entry(notes: Notes, doc: Document, obj: str, at: str, name: str, amount: Any) -> tuple[str, Decimal] | None:
    if name.endswith("_revocable"):
        notes.warn(doc, obj, at, "revocable resources are not modelled: skipped")
        return None
    if isinstance(amount, str) and _TEXT_VALUE.fullmatch(amount):
        notes.warn(doc, obj, at, f"a RANGES or SET resource ({excerpt(amount)}) is not shared by quantity: skipped")
        return None
    if isinstance(amount, dict) and set(amount) == {"value"}:  # Value.Scalar, as QuotaConfig maps write it
        amount = amount["value"]
    return name, _number(amount, doc, obj, at)


def _number(value: Any, doc: Document, obj: str, at: str) -> Decimal:
    """A JSON number, not negative: Mesos writes amounts as plain numbers (no units)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        hint = " (Mesos amounts are plain numbers, no unit suffixes)" if isinstance(value, str) else ""
        raise ImportFailed(f"{doc.where}: {obj}: {at}: must be a number, got {excerpt(value)}{hint}")
    return gate(value, f"{doc.where}: {obj}: {at}")


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool) and value > 0


# -- small readers ------------------------------------------------------------------------------
def _role_name(name: Any, doc: Document, at: str) -> str:
    """A role name as ``roles::validate`` (``src/common/roles.cpp``) allows: path components that
    are not empty, ``.`` or ``..``."""
    if not isinstance(name, str) or not name:
        raise ImportFailed(f"{doc.where}: role: {at or 'role'}: must be a role name (got {excerpt(name)})")
    bad = [p for p in name.split("/") if p in ("", ".", "..")]
    if bad or any(c.isspace() for c in name):
        raise ImportFailed(f"{doc.where}: role {shown(name)}: {at or 'role'}: not a valid Mesos role name")
    return name


def _dot(at: str, key: str) -> str:
    return f"{at}.{key}" if at else key


def _shown(value: Any) -> str:
    if value == {}:
        return "nothing"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {tidy(v)}" for k, v in value.items()) + "}"
    return str(tidy(value)) if isinstance(value, Decimal) else str(value)


def _description(seen: _Import, draft: Draft) -> list[str]:
    read = ", ".join(f"{k} ({n} document{'s' if n > 1 else ''})" for k, n in seen.kinds.items())
    out = [f"Mesos master JSON read: {read}." if read else "Mesos master JSON read."]
    out.append(f"{len(draft.users)} roles as leaf queues, {len(draft.groups)} parent roles as groups.")
    if seen.agents:
        out.append(f"Capacity: the total of {seen.agents} agent{'s' if seen.agents > 1 else ''}.")
    if any("request" in u for u in draft.users.values()):
        out.append("Requests are the roles' current usage (the master does not show pending demand).")
    return out


__all__ = ["SYSTEM", "detect", "convert"]
