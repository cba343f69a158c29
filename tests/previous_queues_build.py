"""``Queues.build`` (with the helpers it calls), ``Queues.ceiling`` and ``Instance.backlogged`` at
commit 2a536d18d022e0aea2095f8153f60de5f995c242 (main's HEAD when issue 36's build part
started), kept as the oracle for the vectorised ones that replaced them: verbatim from fairalloc/core/queues.py and
fairalloc/core/instance.py, ``cls``/``self`` passed explicitly.  tests/test_fast_queues_build.py
holds the new ones equal to them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import NDArray

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt, unknown
from fairalloc.core.queues import _ALSO_ALLOWED, _MAY_BE_INF, _MAY_BE_NAN, RESOURCE_FIELDS

if TYPE_CHECKING:
    from fairalloc.core.instance import Instance
    from fairalloc.core.queues import Queues

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
