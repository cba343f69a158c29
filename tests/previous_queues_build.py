"""``Queues.build`` (with the helpers it calls), ``Queues.ceiling`` and ``Instance.backlogged`` at
commit 2a536d18d022e0aea2095f8153f60de5f995c242 (main's HEAD when issue 36's build part
started), kept as the oracle for the vectorised ones that replaced them: verbatim from fairalloc/core/queues.py and
fairalloc/core/instance.py, ``cls``/``self`` passed explicitly.  tests/test_fast_queues_build.py
holds the new ones equal to them.

Below them, ``parse_case`` with the per-queue reads it made (``_names``, ``_request_row``, ``_queues``,
``_plain_amounts``) at commit 2f85c17f0241795e657fc11caff739fade20afe6 (main's HEAD when issue 36's
load part started), kept as the oracle for the column-by-column read of a queue case's users:
tests/test_fast_case_build.py holds the new ones equal to them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt, quoted, unknown
from fairalloc.core.instance import Instance
from fairalloc.core.queues import _ALSO_ALLOWED, _MAY_BE_INF, _MAY_BE_NAN, RESOURCE_FIELDS, Queues
from fairalloc.io.cases import (
    Case,
    CaseSpec,
    UserSpec,
    _check_expectations,
    _claim,
    _derive,
    _hierarchy,
    _in_arrival_order,
    _is_queue_case,
    _known_mechanism,
    _name,
    _pydantic_message,
    _refuse_too_many_cells,
    _units,
    _user_expectation,
)

_Floats = NDArray[np.float64]


def _frozen(a: _Floats) -> _Floats:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def build(
    cls,
    resources: Sequence[str],
    nodes: Mapping[str, Mapping[str, object]],
    groups: Iterable[str],
    configured: bool = True,
) -> Queues:
    """From ``{name: {parent, weight, priority, guarantee: (m,), ...}}`` over every node;
    ``groups`` names the internal nodes, the others are leaves (in instance user order)."""
    resources, groups = _names("resources", resources), _names("groups", groups)
    if not isinstance(nodes, Mapping):
        raise TypeError(f"nodes: expected a mapping {{name: {{field: value}}}}, got {type(nodes).__name__}")
    m = len(resources)
    tables: dict[str, dict[str, object]] = {f: {} for f in ("parent", "weight", "priority", *RESOURCE_FIELDS)}
    # one read-only "not given" row per field, shared by every node that leaves the field out
    blank = {f: _frozen(np.full(m, missing)) for f, missing in RESOURCE_FIELDS.items()}
    for name, spec in nodes.items():
        if not isinstance(spec, Mapping):
            raise TypeError(f"nodes.{name}: expected a mapping {{field: value}}, got {type(spec).__name__}")
        tables["parent"][name] = spec.get("parent")
        tables["weight"][name] = _scalar(spec.get("weight", 1.0), f"nodes.{name}.weight", signed=False)
        tables["priority"][name] = _scalar(spec.get("priority", 0.0), f"nodes.{name}.priority", signed=True)
        for f, none_given in blank.items():
            given = spec.get(f)
            tables[f][name] = none_given if given is None else _amounts(given, f"nodes.{name}.{f}", m)
    _check_tree(cast("dict[str, str | None]", tables["parent"]), groups)
    internal = set(groups)  # a set: a tuple's `in` made building a deep tree quadratic
    return cls(
        resources,
        groups,
        tuple(n for n in nodes if n not in internal),
        **tables,  # type: ignore[arg-type]
        configured=configured,
    )


def ceiling(self, leaf: str) -> _Floats:
    """The most ``leaf`` may hold of each resource: the smallest limit on its path (``inf``: none)."""
    out: _Floats = np.min([self.limit[node] for node in [leaf, *self.path(leaf)]], axis=0)
    return out


def backlogged(self) -> Instance:
    """The instance in which every user keeps wanting more than she can get: each row scaled, in
    its own shape, to the whole of its dominant resource (``D_i / max_j D_ij / R_j``, one task);
    a row of zeros (an inactive queue) becomes all the queue may hold, ``min(R, limits)``.

    This is a policy's *steady state*, the entitlements a configuration promises when every
    queue is backlogged: what ``fairalloc import`` computes for a configuration-only file.  No
    bundle can exceed a row with dominant share 1 (nor a queue's limits), so every queue stays
    unsatisfied; a queue's shape is kept, so DRF-like policies still see what it asks for, and
    a resource a queue may not hold (a limit of 0) is not in the shape of its backlog.

    >>> inst = Instance.from_arrays([10, 20], [[1, 4], [2, 0]], users=["a", "b"], max_tasks=[2, 3])
    >>> b = inst.backlogged()
    >>> b.demand.tolist(), b.max_tasks.tolist()
    ([[5.0, 20.0], [10.0, 0.0]], [1.0, 1.0])
    """
    R = self.capacity
    D = self.demand * (self.bounds()[:, None] > 0)
    reach = np.array([R if self.queues is None else np.minimum(R, ceiling(self.queues, u)) for u in self.users])
    with np.errstate(divide="ignore", invalid="ignore"):
        top = np.where(R > 0, D / R, 0.0).max(axis=1, initial=0.0)
        rows = np.where(top[:, None] > 0, D / top[:, None], reach)
    return self._replace(demand=rows, max_tasks=(rows > 0).any(axis=1).astype(float))


def _names(what: str, names: object) -> tuple[str, ...]:
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise TypeError(f"{what}: expected a sequence of names, got {type(names).__name__}")
    out = tuple(names)
    for name in out:
        if not isinstance(name, str):
            raise TypeError(f"{what}: expected names (str), got {excerpt(name)} ({type(name).__name__})")
    return out


def _scalar(value: object, where: str, *, signed: bool) -> float:
    """A weight (finite, >= 0: YARN's weight 0, TestFairScheduler's zero-weight tests, is built here,
    though a case file asks for a positive one) or a priority (finite, any sign)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{where}: expected a number, got {type(value).__name__}")
    number = float(value)
    if not np.isfinite(number) or not signed and number < 0:
        raise CaseError(f"{where}: must be a finite {'' if signed else 'non-negative '}number, got {number}")
    return number


def _amounts(given: object, where: str, m: int) -> _Floats:
    """One amount per resource, read-only; NaN only where it means "not given", ``inf`` only for a limit."""
    try:
        a = np.array(given, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: expected {m} numbers (one per resource), got {excerpt(given)}") from None
    if a.shape != (m,):
        raise CaseError(f"{where}: expected {m} numbers (one per resource), got shape {a.shape}")
    field_name = where.rpartition(".")[2]
    bad = (a < 0) | np.isnan(a) & (field_name not in _MAY_BE_NAN) | np.isposinf(a) & (field_name not in _MAY_BE_INF)
    if bad.any():
        allowed = _ALSO_ALLOWED.get(field_name, "")
        raise CaseError(f"{where}: must be {allowed}a finite amount >= 0, got {a[bad][0]} (entry {np.argmax(bad)})")
    return _frozen(a)


def _check_tree(parent: Mapping[str, str | None], groups: Sequence[str]) -> None:
    """Every parent is a group, every group a node, and the groups form a tree of bounded depth."""
    known = set(groups)
    for g in groups:
        if g not in parent:
            raise CaseError(f"groups.{g}: a group that is not one of the nodes")
    for name, p in parent.items():
        if p is not None and p not in known:
            raise CaseError(f"nodes.{name}.parent: {unknown('group', p, groups)}")
    check_depth({g: parent[g] for g in groups}, "nodes")


def check_depth(parent: Mapping[str, str | None], where: str) -> None:
    """``parent``: each group's parent group.  Refuse a cycle, or a group below more than
    :data:`~fairalloc.core.limits.MAX_TREE_DEPTH` others (the policies walk trees recursively, as
    the schedulers they model do).  Each node is walked
    once (its depth remembered) and a walk stops at the limit: linear in the nodes."""
    above: dict[str, int] = {}  # groups above each node walked
    for start in parent:
        path: list[str] = []
        node: str | None = start
        while node is not None and node not in above and len(path) <= limits.MAX_TREE_DEPTH:
            if node in path:
                raise CaseError(f"{where}.{start}.parent: the groups form a cycle")
            path.append(node)
            node = parent.get(node)
        base = -1 if node is None else above.get(node, limits.MAX_TREE_DEPTH)
        for k, v in enumerate(reversed(path), start=1):
            above[v] = base + k
        if above[start] > limits.MAX_TREE_DEPTH:
            raise CaseError(
                f"{where}.{start}.parent: more than {limits.MAX_TREE_DEPTH} groups above {excerpt(start)}; "
                f"fairalloc walks hierarchies recursively and refuses deeper ones (MAX_TREE_DEPTH)"
            )


# -- reading a case's queues: fairalloc/io/cases.py at commit 2f85c178 ------------------------------
# (main's HEAD when issue 36's load part started), verbatim but for ``_names``, renamed
# ``case_names`` beside queues.py's ``_names`` above; what they call and did not change is imported.


def case_names(mapping):
    """The one place where the keys of every name -> value mapping of a case become text (``{1: 3}``
    demands of the resource named ``1``); two keys naming the same name are refused."""
    if not isinstance(mapping, dict):
        return mapping  # pydantic says it is not a mapping
    out = {}
    for key, value in mapping.items():
        name = _name(key)
        if name in out:
            raise ValueError(f"{quoted(name)} is given twice")
        out[name] = value
    return out


def parse_case(data: Any, where: str = "case") -> Case:
    """Validate a case mapping (as read from YAML) and build its :class:`Case`."""
    if not isinstance(where, str):
        raise TypeError(f"where: expected the name of the case's source (str), got {type(where).__name__}")
    if data is None:
        raise CaseError(f"{where}: empty file (a case needs 'resources' and 'users')")
    if not isinstance(data, dict):
        raise CaseError(f"{where}: a case must be a mapping with 'resources' and 'users' (got {type(data).__name__})")
    try:
        spec = CaseSpec.model_validate(data)
    except ValidationError as exc:
        raise CaseError(_pydantic_message(exc)) from None
    resources = list(spec.resources)
    known = set(resources)
    _refuse_too_many_cells(len(spec.users), len(resources), len(spec.variants))
    if spec.arrivals is not None:
        spec = spec.model_copy(update={"users": _in_arrival_order(spec.users, spec.arrivals)})

    def vector(mapping: dict[str, float], field_name: str, default: float) -> list[float]:
        for r in mapping:
            if r not in known:
                raise CaseError(f"{field_name}.{r}: {unknown('resource', r, resources)}")
        return [mapping.get(r, default) for r in resources]

    demand: list[list[float]] = []
    weights: list[list[float] | float] = []  # per-resource rows, or one weight per user
    bounds: list[float] = []
    shared: list[float] = []
    per_resource = any(isinstance(u.weight, dict) for u in spec.users.values())
    queue_case = _is_queue_case(spec)
    for name, user in spec.users.items():
        if queue_case:
            row, bound = _request_row(name, user, vector)
            demand.append(row)
            bounds.append(bound)
        elif user.demand is None:
            raise CaseError(f"users.{name}.demand: required field is missing")
        else:
            demand.append(vector(user.demand, f"users.{name}.demand", 0.0))
        if isinstance(user.weight, dict):
            weights.append(vector(user.weight, f"users.{name}.weight", 1.0))
        else:
            w = 1.0 if user.weight is None else user.weight
            weights.append([w] * len(resources) if per_resource else w)
        if not queue_case:
            bounds.append(np.inf if user.max_tasks is None else user.max_tasks)
        shared.append(np.nan if user.shared is None else user.shared)
    name = spec.name or (Path(where).stem if where != "case" else "case")
    instance = Instance(
        list(spec.resources.values()),
        demand,
        resources=resources,
        users=list(spec.users),
        weights=weights,
        max_tasks=bounds,
        shared=shared,
        name=name,
        groups=_hierarchy(spec) if spec.groups or any(u.group is not None for u in spec.users.values()) else None,
        queues=_queues(spec, vector) if queue_case else None,
    )
    observed = None
    if spec.demand == "backlogged":
        if not queue_case:
            raise CaseError("demand: backlogged is for queue cases (users with request, usage, guarantee, ...)")
        observed, instance = instance, instance.backlogged()
    variants = {}
    for k, variant in enumerate(spec.variants):
        where_v = f"variants[{k}]"
        if variant.name in variants:
            raise CaseError(f"{where_v}.name: duplicate variant name '{variant.name}'")
        variants[variant.name] = _derive(instance, variant, where_v, vector)
    case = Case(
        name,
        instance,
        spec.source,
        spec.description,
        raw=data,
        variants=variants,
        expect=spec.expect,
        errata=spec.errata,
        policy=None if spec.policy is None else _known_mechanism("policy", spec.policy),
        units=_units(spec, known, resources),
        user_expectation=_user_expectation(spec, instance, vector),
        demand=spec.demand,
        observed=observed,
    )
    _check_expectations(case)
    return dataclasses.replace(case, claims=[_claim(c, f"claims[{k}]", case) for k, c in enumerate(spec.claims)])


def _plain_amounts(mapping: dict, capacity: dict) -> dict[str, float]:
    """Amounts with percentages read as shares of the capacity (an unknown resource is left for
    the caller to name)."""
    return {
        r: float(v.strip().rstrip("%")) / 100 * capacity.get(r, 0.0) if isinstance(v, str) else v
        for r, v in mapping.items()
    }


def _request_row(name: str, user: UserSpec, vector) -> tuple[list[float], float]:
    """A queue's row: ``demand: request, max_tasks: 1`` (the Leontief reading), or an inactive
    queue's zero row with ``max_tasks: 0``."""
    for wrong in ("demand", "max_tasks", "shared"):
        if getattr(user, wrong) is not None:
            raise CaseError(
                f"users.{name}.{wrong}: a queue case gives each queue's request (and usage, guarantee, "
                f"limit, ...), not {wrong}; write request: {{...}}"
            )
    if user.request is None:
        return vector({}, f"users.{name}.request", 0.0), 0.0
    row = vector(user.request, f"users.{name}.request", 0.0)
    return row, (1.0 if any(v > 0 for v in row) else 0.0)


def _queues(spec, vector) -> Queues:
    """The queue configuration of every node, percentages read as shares of the capacity."""
    capacity = dict(spec.resources)  # once, not per node and field (100,000 queues: 600,000 copies)

    def amounts(mapping, where: str, missing: float):
        if mapping is None:
            return None
        return vector(_plain_amounts(mapping, capacity), where, missing)  # Queues.build makes the array

    nodes: dict[str, dict[str, object]] = {}
    for kind, table in (("groups", spec.groups), ("users", spec.users)):
        for name, node in table.items():
            entry: dict[str, object] = {"parent": node.parent if kind == "groups" else node.group}
            weight = node.weight if isinstance(node.weight, (int, float)) else None
            entry["weight"] = 1.0 if weight is None else float(weight)
            if node.priority is not None:
                entry["priority"] = node.priority
            for f, missing in RESOURCE_FIELDS.items():
                if f == "usage" and kind == "groups":
                    continue
                entry[f] = amounts(getattr(node, f), f"{kind}.{name}.{f}", missing)
            nodes[name] = entry
    return Queues.build(list(spec.resources), nodes, list(spec.groups))
