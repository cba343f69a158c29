"""Queues: the configuration production schedulers attach to their tenants.

A *queue case* describes leaf queues (the users of an :class:`~fairalloc.core.instance.Instance`)
and groups above them (cohorts, parent queues, roles) with what cluster schedulers configure:

* ``guarantee``: a minimum or nominal quota per resource (Volcano ``guarantee``, Kueue
  ``nominalQuota``, YARN ``minResources``, Mesos quota guarantee, YuniKorn ``guaranteed``);
* ``limit``: a maximum (Volcano ``capability``, YARN ``maxResources``, Mesos quota limit,
  YuniKorn ``max``);
* ``deserved``: a configured entitlement between the two (Volcano ``deserved``, read by the
  ``capacity`` plug-in);
* ``borrowing_limit`` and ``lending_limit``: how far above its quota a queue may borrow, how much
  of its quota others may borrow (Kueue);
* ``priority``, ``weight``, and ``usage``: what the queue holds now (for the schedulers' sort
  orders).

A queue's ``request`` (its total outstanding demand) is its instance row read the Leontief way:
``demand: request, max_tasks: 1``, so every mechanism of fairalloc runs on a queue case and a
queue's "tasks" are the fraction of its request it receives.  A queue without a request is
inactive: a zero row with ``max_tasks: 0``.

>>> from fairalloc.core.instance import Instance
>>> q = Queues.build(["cpu", "mem"], {"org": {}, "a": {"parent": "org", "limit": [6, 12]}, "b": {}}, ["org"])
>>> inst = Instance([10, 20], [[2, 4], [0, 0]], users=["a", "b"], max_tasks=[1, 0],
...                 resources=["cpu", "mem"], queues=q)
>>> request(inst).tolist()
[[2.0, 4.0], [0.0, 0.0]]
>>> q.children(None), q.leaves("org"), q.limit["a"].tolist(), q.limit["b"].tolist()
(['org', 'b'], ['a'], [6.0, 12.0], [inf, inf])
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt, unknown

_Floats = NDArray[np.float64]
_T = TypeVar("_T")


class Instance(Protocol):
    """What this module reads of an :class:`fairalloc.core.instance.Instance` (which imports it)."""

    demand: _Floats
    weights: _Floats | None
    groups: dict[str, dict[str, Any]] | None
    queues: Queues | None

    @property
    def users(self) -> tuple[str, ...]: ...

    @property
    def resources(self) -> tuple[str, ...]: ...

    @property
    def n(self) -> int: ...

    def bounds(self) -> _Floats: ...


#: the per-resource fields of a queue or group, and what "not given" is for each
RESOURCE_FIELDS: dict[str, float] = {
    "guarantee": np.nan,
    "limit": np.inf,
    "deserved": np.nan,
    "borrowing_limit": np.inf,
    "lending_limit": np.inf,
    "usage": 0.0,
}
#: what each per-resource field may hold beyond finite non-negative amounts: NaN (not given) for
#: the quotas read as "none configured", ``inf`` (no bound) for the limits
_MAY_BE_NAN = ("guarantee", "deserved")
_MAY_BE_INF = ("limit", "borrowing_limit", "lending_limit")
_ALSO_ALLOWED = {**{f: "NaN (not given) or " for f in _MAY_BE_NAN}, **{f: "inf (no bound) or " for f in _MAY_BE_INF}}
#: the fields a queue case may give per queue or group (beyond ``request``, ``group``, ``parent``)
QUEUE_FIELDS = ("weight", "priority", *RESOURCE_FIELDS)


def _frozen(a: _Floats) -> _Floats:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Queues:
    """The queue tree of an instance: every node (groups and leaf queues) by name.

    ``parent[name]`` is a node's group (``None``: it hangs from the root).  ``guarantee`` and
    ``deserved`` hold NaN where a resource is not given; ``limit``, ``borrowing_limit`` and ``lending_limit`` hold
    ``inf`` where not given; ``usage`` is 0 where not given (and for groups: a group's usage is the
    sum of its leaves', :meth:`subtree_usage`).  Arrays are read-only.
    """

    resources: tuple[str, ...]
    groups: tuple[str, ...]
    leaf_names: tuple[str, ...]
    parent: Mapping[str, str | None]
    weight: Mapping[str, float]
    priority: Mapping[str, float]
    guarantee: Mapping[str, _Floats]
    limit: Mapping[str, _Floats]
    deserved: Mapping[str, _Floats]
    borrowing_limit: Mapping[str, _Floats]
    lending_limit: Mapping[str, _Floats]
    usage: Mapping[str, _Floats]
    #: whether the case configured anything beyond a flat set of weighted queues
    configured: bool = field(default=True)

    # -- building -------------------------------------------------------------------------
    @classmethod
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
        # every node checked at once; a refusal (or a value only the one-by-one read takes) is read
        # again node by node, which raises the first node's error as it always did
        tables = _tables_at_once(nodes, m)
        if tables is None:
            tables = _tables_one_by_one(nodes, m)
        return cls._of_tables(resources, groups, tables, configured)

    @classmethod
    def from_columns(
        cls,
        resources: Sequence[str],
        names: Sequence[str],
        columns: Mapping[str, object],
        groups: Iterable[str],
        configured: bool = True,
    ) -> Queues | None:
        """:meth:`build`'s tree from its fields given column by column over the nodes ``names``
        (a case file's queues read field by field): ``parent``, ``weight`` and ``priority`` one value
        per node; each per-resource field a pair ``(at, amounts)``, the indices of the nodes that
        give it and their ``(len(at), m)`` float amounts (read-only views of it become their rows).
        ``None`` where a value is not plainly right: the caller reads its nodes one by one then, with
        :meth:`build`'s messages.  The same checks as :meth:`build` makes, without a mapping per node."""
        resources, groups = _names("resources", resources), _names("groups", groups)
        tables = _tables_of_columns(list(names), columns, len(resources))
        return None if tables is None else cls._of_tables(resources, groups, tables, configured)

    @classmethod
    def _of_tables(
        cls, resources: tuple[str, ...], groups: tuple[str, ...], tables: dict[str, dict[str, object]], configured: bool
    ) -> Queues:
        _check_tree(cast("dict[str, str | None]", tables["parent"]), groups)
        internal = set(groups)  # a set: a tuple's `in` made building a deep tree quadratic
        return cls(
            resources,
            groups,
            tuple(n for n in tables["parent"] if n not in internal),
            **tables,  # type: ignore[arg-type]
            configured=configured,
        )

    @classmethod
    def flat(cls, instance: Instance) -> Queues:
        """The configuration of a paper case: flat, weighted queues, nothing else."""
        w = instance.weights
        weight = np.ones(instance.n) if w is None else (w if w.ndim == 1 else w.max(axis=1))
        nodes = {u: {"weight": float(weight[i])} for i, u in enumerate(instance.users)}
        if instance.groups:  # a hierarchy of a paper case keeps its parents and weights
            for node, parent in instance.groups["parent"].items():
                nodes.setdefault(node, {})["parent"] = parent
                nodes[node].setdefault("weight", instance.groups["weight"][node])
        users = set(instance.users)
        return cls.build(instance.resources, nodes, [g for g in nodes if g not in users], configured=False)

    # -- derived configurations (kept in step with the instance's derived instances) ----------
    def without(self, *leaves: str) -> Queues:
        """The tree without these leaf queues: the same object each time for the same leaves (a
        policy's :meth:`memo` then serves every report the verifier tries with the same idle queues)."""
        gone = frozenset(leaves)
        return self.memo("without", gone, lambda: self._select([n for n in self.parent if n not in gone]))

    def memo(self, name: str, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()``, once per tree and ``key``: for what a policy derives from the tree alone
        (the verifier solves hundreds of reports on one tree).  Kept as long as the tree is."""
        table = self.__dict__.setdefault(f"memo:{name}", {})
        if key not in table:
            table[key] = compute()
        return cast(_T, table[key])

    def with_leaf(self, leaf: str, weight: float = 1.0) -> Queues:
        nodes = {n: self._spec(n) for n in self.parent}
        nodes[leaf] = {"weight": weight}
        return Queues.build(self.resources, nodes, self.groups, self.configured)

    def without_resource(self, j: int) -> Queues:
        keep = [k for k in range(len(self.resources)) if k != j]
        nodes = {n: self._spec(n, keep) for n in self.parent}
        return Queues.build([self.resources[k] for k in keep], nodes, self.groups, self.configured)

    def with_resource(self, name: str) -> Queues:
        nodes = {n: self._spec(n) for n in self.parent}
        for spec in nodes.values():
            for f, missing in RESOURCE_FIELDS.items():
                spec[f] = np.append(spec[f], missing)  # type: ignore[call-overload]
        return Queues.build([*self.resources, name], nodes, self.groups, self.configured)

    def with_usage(self, usage: Mapping[str, _Floats]) -> Queues:
        """The configuration with some leaf queues' usage replaced.  The tree and the other fields are
        this one's, checked already, and shared: only the new amounts are checked, as :meth:`build`
        checks them (a replay asks at every change of the queues with work; building the whole tree
        again was most of it).  Anything not plainly right is built again, for build's message."""
        names = list(usage)
        amounts = _floats(list(usage.values()))
        m = len(self.resources)
        if (
            amounts is not None
            and amounts.shape == (len(names), m)
            and names
            and all(n in self.parent for n in names)
            and not _bad(amounts, "usage").any()
        ):
            amounts.flags.writeable = False
            table = {**self.usage, **dict(zip(names, amounts))}
            fields = ("parent", "weight", "priority", *RESOURCE_FIELDS)
            tables = {f: getattr(self, f) for f in fields} | {"usage": table}
            return Queues(self.resources, self.groups, self.leaf_names, **tables, configured=self.configured)
        nodes = {n: self._spec(n) for n in self.parent}
        for n, amounts in usage.items():
            nodes[n]["usage"] = amounts
        return Queues.build(self.resources, nodes, self.groups, self.configured)

    def scaled(self, unit: _Floats) -> Queues:
        """Every amount measured in ``unit`` (one number per resource): for a rescaled instance."""
        nodes = {n: self._spec(n) for n in self.parent}
        for spec in nodes.values():
            for f in RESOURCE_FIELDS:
                spec[f] = np.asarray(spec[f]) / unit
        return Queues.build(self.resources, nodes, self.groups, self.configured)

    def _spec(self, n: str, keep: list[int] | None = None) -> dict[str, object]:
        spec: dict[str, object] = {"parent": self.parent[n], "weight": self.weight[n], "priority": self.priority[n]}
        for f in RESOURCE_FIELDS:
            a = getattr(self, f)[n]
            spec[f] = a if keep is None else a[keep]
        return spec

    def _select(self, names: list[str]) -> Queues:
        """The tree of these nodes.  Without a group among the nodes left out, every node kept is as
        checked and its parent still a node, so the read-only arrays are shared, not built again
        (``build`` made ``6 n`` small arrays for each idle-queue set the policies and the verifier try):
        O(n) dictionary entries."""
        kept = set(names)
        if not all(g in kept for g in self.groups):  # a group left out: build says which
            return Queues.build(self.resources, {n: self._spec(n) for n in names}, self.groups, self.configured)
        fields = ("parent", "weight", "priority", *RESOURCE_FIELDS)
        tables = {f: _restricted(getattr(self, f), names) for f in fields}
        leaf_names = tuple(n for n in names if n not in self._children)
        return Queues(self.resources, self.groups, leaf_names, **tables, configured=self.configured)

    # -- the tree -----------------------------------------------------------------------------
    @cached_property
    def _children(self) -> dict[str | None, list[str]]:
        out: dict[str | None, list[str]] = {None: [], **{g: [] for g in self.groups}}
        for n in (*self.groups, *self.leaf_names):
            out[self.parent[n]].append(n)
        return out

    def children(self, node: str | None) -> list[str]:
        """The children of ``node`` (``None``: the root) in file order, groups first."""
        return list(self._children.get(node, []))

    def is_group(self, name: str) -> bool:
        return name in self._children and name is not None

    @cached_property
    def _leaves(self) -> dict[str, tuple[str, ...]]:
        """Every group's leaf queues in user order, from one walk of each leaf's path: O(n depth),
        once per tree (a tree is immutable; policies ask at every group)."""
        out: dict[str, list[str]] = {g: [] for g in self.groups}
        for u in self.leaf_names:
            node = self.parent[u]
            while node is not None:
                out[node].append(u)
                node = self.parent[node]
        return {g: tuple(under) for g, under in out.items()}

    def leaves(self, node: str | None = None) -> list[str]:
        """The leaf queues under ``node`` (``None``: all), in instance user order."""
        if node is None:
            return list(self.leaf_names)
        if node in self._leaves:
            return list(self._leaves[node])
        return [node] if node in self.parent else []

    def generations(self, top: str | None = None) -> Iterator[tuple[list[str | None], list[str], NDArray[np.intp]]]:
        """From ``top`` (``None``: the root) down, one generation at a time: ``(parents, children,
        owner)``, the parents with children, all their children (parent by parent, each in
        :meth:`children` order) and the index in ``parents`` of each child's parent.  For policies
        that treat every sibling set of a generation at once (numpy over the children, segmented by
        ``owner``): O(n) over the whole tree.

        >>> q = Queues.build(["cpu"], {"org": {}, "a": {"parent": "org"}, "b": {}, "c": {"parent": "org"}}, ["org"])
        >>> [(parents, children, owner.tolist()) for parents, children, owner in q.generations()]
        [([None], ['org', 'b'], [0, 0]), (['org'], ['a', 'c'], [0, 0])]
        """
        parents: list[str | None] = [top]
        while parents:
            parents = [p for p in parents if self._children.get(p)]
            counts = [len(self._children[p]) for p in parents]
            children = [c for p in parents for c in self._children[p]]
            if not children:
                return
            yield parents, children, np.repeat(np.arange(len(parents)), counts)
            parents = list(children)

    def path(self, leaf: str) -> list[str]:
        """The groups above ``leaf``, root-most first."""
        out: list[str] = []
        node = self.parent[leaf]
        while node is not None:
            out.append(node)
            node = self.parent[node]
        return out[::-1]

    def ceiling(self, leaf: str) -> _Floats:
        """The most ``leaf`` may hold of each resource: the smallest limit on its path (``inf``: none)."""
        return np.minimum(self.limit[leaf], self._ceilings[self.parent[leaf]])

    def ceilings(self, leaves: Sequence[str]) -> _Floats:
        """:meth:`ceiling` of each of ``leaves``, ``(n, m)``: one minimum over all of them."""
        above = np.array([self._ceilings[self.parent[u]] for u in leaves], dtype=float).reshape(len(leaves), -1)
        out: _Floats = np.minimum(self.leaf_array("limit", leaves), above)
        return out

    @cached_property
    def _ceilings(self) -> dict[str | None, _Floats]:
        """Every group's ceiling (``None``: the root's, no bound), each from its parent's: O(groups m)
        once per tree, where a ceiling per leaf walked its path (a minimum is exact: the same floats)."""
        out: dict[str | None, _Floats] = {None: np.full(len(self.resources), np.inf)}
        for g in self.groups:
            above: list[str] = []
            node: str | None = g
            while node not in out:
                above.append(cast(str, node))
                node = self.parent[cast(str, node)]
            for v in reversed(above):
                out[v] = np.minimum(self.limit[v], out[self.parent[v]])
        return out

    def leaf_array(self, name: str, users: Sequence[str]) -> _Floats:
        """A per-resource field over leaf queues, ``(n, m)`` in the order of ``users``."""
        table = getattr(self, name)
        return np.array([table[u] for u in users], dtype=float).reshape(len(users), len(self.resources))

    def subtree_usage(self, node: str) -> _Floats:
        """A node's usage: its own for a leaf, its leaves' sum for a group."""
        if not self.is_group(node):
            return np.array(self.usage[node])
        under = self._leaves[node]
        return np.sum([self.usage[u] for u in under], axis=0) if under else np.zeros(len(self.resources))


def runs(owner: NDArray[np.intp]) -> NDArray[np.intp]:
    """Where each sibling set of a generation (:meth:`Queues.generations`' ``owner``) begins: the
    ``indices`` of ``np.add.reduceat`` over the children.

    >>> runs(np.array([0, 0, 1, 2, 2])).tolist()
    [0, 2, 3]
    """
    return np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])


def _restricted(table: Mapping[str, _T], names: list[str]) -> dict[str, _T]:
    return {n: table[n] for n in names}


def _names(what: str, names: object) -> tuple[str, ...]:
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise TypeError(f"{what}: expected a sequence of names, got {type(names).__name__}")
    out = tuple(names)
    for name in out:
        if not isinstance(name, str):
            raise TypeError(f"{what}: expected names (str), got {excerpt(name)} ({type(name).__name__})")
    return out


def _blank(m: int) -> dict[str, _Floats]:
    """One read-only "not given" row per field, shared by every node that leaves the field out."""
    return {f: _frozen(np.full(m, missing)) for f, missing in RESOURCE_FIELDS.items()}


def _tables_one_by_one(nodes: Mapping[str, object], m: int) -> dict[str, dict[str, object]]:
    """The fields of every node, read node by node: the first bad node and field raises."""
    tables: dict[str, dict[str, object]] = {f: {} for f in ("parent", "weight", "priority", *RESOURCE_FIELDS)}
    blank = _blank(m)
    for name, spec in nodes.items():
        if not isinstance(spec, Mapping):
            raise TypeError(f"nodes.{name}: expected a mapping {{field: value}}, got {type(spec).__name__}")
        tables["parent"][name] = spec.get("parent")
        tables["weight"][name] = _scalar(spec.get("weight", 1.0), f"nodes.{name}.weight", signed=False)
        tables["priority"][name] = _scalar(spec.get("priority", 0.0), f"nodes.{name}.priority", signed=True)
        for f, none_given in blank.items():
            given = spec.get(f)
            tables[f][name] = none_given if given is None else _amounts(given, f"nodes.{name}.{f}", m)
    return tables


def _tables_at_once(nodes: Mapping[str, object], m: int) -> dict[str, dict[str, object]] | None:
    """The fields of every node, each field checked for all nodes in one array operation; ``None``
    when any node or value is not plainly right (:func:`_tables_one_by_one` then says which).

    O(n m) in a few numpy calls per field: the one-by-one read made ``8 n`` small numpy checks, 0.7 s
    of reading an operator's 10,000 queues.  The values are those of the one-by-one read: the same
    conversion (``float``), each node's amounts a read-only row of its field's array."""
    given_specs = list(nodes.values())
    if not all(isinstance(spec, Mapping) for spec in given_specs):
        return None
    specs = cast("list[Mapping[str, object]]", given_specs)
    columns: dict[str, object] = {f: [spec.get(f, default) for spec in specs] for f, default in _DEFAULTS.items()}
    for f in RESOURCE_FIELDS:
        values = cast("list[object]", columns[f])
        at = [k for k, v in enumerate(values) if v is not None]
        a = _floats([values[k] for k in at]) if at else np.empty((0, m))
        if a is None:
            return None
        columns[f] = (at, a)
    return _tables_of_columns(list(nodes), columns, m)


#: what a node that leaves a field out gives (a per-resource field: its "not given" row, later)
_DEFAULTS: dict[str, object] = {"parent": None, "weight": 1.0, "priority": 0.0, **dict.fromkeys(RESOURCE_FIELDS)}


def _tables_of_columns(names: list[str], columns: Mapping[str, object], m: int) -> dict[str, dict[str, object]] | None:
    """:func:`_tables_at_once` of fields given column by column (:meth:`Queues.from_columns`)."""
    tables: dict[str, dict[str, object]] = {"parent": dict(zip(names, cast("list[object]", columns["parent"])))}
    for f, signed in (("weight", False), ("priority", True)):
        values = cast("list[object]", columns[f])
        kinds = {type(v) for v in values}
        if bool in kinds or not all(issubclass(k, _NUMBER) for k in kinds):
            return None
        w = _floats(values)
        if w is None or not (np.isfinite(w) & (signed | (w >= 0))).all():
            return None
        tables[f] = dict(zip(names, w.tolist()))
    for f, none_given in _blank(m).items():
        at, a = cast("tuple[list[int], _Floats]", columns[f])
        table: dict[str, object] = dict.fromkeys(names, none_given)
        if len(at):
            if a.shape != (len(at), m) or _bad(a, f).any():
                return None
            a.flags.writeable = False
            # iterating an array gives its rows, read-only views
            table.update(zip([names[k] for k in at], a))
        tables[f] = table
    return tables


#: the types of a weight or priority (``bool`` excepted)
_NUMBER = (int, float, np.integer, np.floating)


def _floats(values: list[object]) -> _Floats | None:
    """``values`` as one float array (a row per value), or ``None`` where numpy cannot convert them."""
    try:
        return np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return None


def _bad(a: _Floats, field_name: str) -> NDArray[np.bool_]:
    """Where amounts of ``field_name`` are wrong: negative, NaN or ``inf`` where that field may not
    hold them."""
    nan, inf = field_name not in _MAY_BE_NAN, field_name not in _MAY_BE_INF
    out: NDArray[np.bool_] = (a < 0) | np.isnan(a) & nan | np.isposinf(a) & inf
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
    bad = _bad(a, field_name)
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


def queues_of(instance: Instance) -> Queues:
    """The instance's queue configuration, or the flat one of a paper case."""
    return instance.queues if instance.queues is not None else Queues.flat(instance)


def request(instance: Instance) -> _Floats:
    """``(n, m)``: each queue's request ``D_i T_i`` (``inf`` where ``T_i`` is unbounded and
    ``D_ij > 0``; 0 for an inactive queue and for a resource it does not ask for)."""
    T = instance.bounds()[:, None]
    D = instance.demand
    with np.errstate(invalid="ignore"):
        return np.where(D > 0, D * T, 0.0)


def active(instance: Instance) -> NDArray[np.bool_]:
    """Queues with a request (the others receive nothing)."""
    mask: NDArray[np.bool_] = np.asarray((request(instance) > 0).any(axis=1))
    return mask


__all__ = ["QUEUE_FIELDS", "RESOURCE_FIELDS", "Queues", "active", "queues_of", "request", "runs"]
