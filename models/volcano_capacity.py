"""Volcano's ``capacity`` plug-in: each queue's ``deserved``, configured, clamped and floored.

Source read: volcano-sh/volcano (Apache-2.0) at commit ed72c7c815a9fd547a787134676f73d42e9d049c
(2026-08-20), ``pkg/scheduler/plugins/capacity/capacity.go``:

* ``capacityPlugin.OnSessionOpen``: with the plug-in's ``enableHierarchy`` option
  (``ssn.HierarchyEnabled``) ``buildHierarchicalQueueAttrs``, else ``buildQueueAttrs``.  A case
  with groups is read as the first, a case without groups as the second;
* ``buildQueueAttrs`` (flat): the queues with a job in the session (here: with a ``request``);
  ``totalGuarantee`` sums the ``guarantee`` of *every* queue; ``realCapability`` is proportion's
  (``ExceededPart(total, totalGuarantee) + guarantee``, then ``MinDimensionResource(capability,
  Infinity)``, a cpu or memory capability of 0 or less read as unlimited); then
  ``deserved.MinDimensionResource(realCapability, Infinity)`` and ``helpers.Max(deserved,
  guarantee)``;
* ``buildHierarchicalQueueAttrs``, ``newQueueAttr``, ``updateAncestors`` and
  ``checkHierarchicalQueue`` (hierarchical): every queue, ``spec.parent`` (empty: ``root``) its
  parent; the ``root`` queue's ``capability`` is infinite when empty and is its
  ``realCapability``; then, down the tree, each child's ``deserved = Max(deserved, guarantee)``,
  its ``capability`` inherits the parent's cpu and memory where not above 0 and the parent's
  other resources where not given, and ``realCapability = ExceededPart(parent.realCapability,
  sum of the siblings' guarantees) + guarantee``, capped by that capability; the root's
  ``deserved`` and ``guarantee`` become the sums of its children's;
* ``updateQueueAttrShare`` (the share), ``compareShareWithDeserved`` and the ``QueueOrderFn`` of
  both builds (the order); ``queueAllocatable``, ``checkQueueAllocatableHierarchically`` and
  ``jobEnqueueable`` (what the queue admits).  ``pkg/scheduler/api/resource_info.go``:
  ``NewResource``, ``ResourceNames``, ``IsEmpty``, ``MinDimensionResource``, ``ExceededPart``,
  ``LessEqualWithDimensionAndResourcesName``; ``pkg/scheduler/api/helpers/helpers.go``: ``Max``,
  ``Share``.

**Flat.**  For a queue ``i`` with a request, per resource (``D`` deserved, ``G`` guarantee, ``C``
capability, ``R`` the cluster)::

    realCap_i  = min( max(R - sum_k G_k, 0) + G_i,  C_i )
    deserved_i = max( min(D_i, realCap_i),  G_i )

and a queue without a request deserves nothing.  **Hierarchical.**  With ``realCap_root = C_root``
(``inf`` when the root gives no capability), for every child ``c`` of a node ``p``::

    C_c        = C_p where C_c is not given (cpu, memory: where C_c <= 0)
    realCap_c  = min( max(realCap_p - sum_{s child of p} G_s, 0) + G_c,  C_c )
    deserved_c = max( D_c, G_c )

for every queue, with a request or not.  The top group of a case whose top level is one group is
Volcano's ``root`` queue; otherwise the case's root is, without a capability.

**Cost.**  The hierarchical attributes are built a generation of the tree at a time (numpy over
every sibling set of a depth) and a queue's attributes are read from those tables when asked:
O(queues x resources), linear in the queues whatever the tree's shape.

**Shares and order** (:meth:`VolcanoCapacity.shares`, :meth:`VolcanoCapacity.order`): a queue's
share is ``max_j usage_j / deserved_j`` over the resources it deserves (at least 0.1 in Volcano's
units), and 1 when it deserves nothing (a *best-effort* queue).  Queues are served by priority
(higher first), then share (lower first), a queue that deserves something before a best-effort one
on equal shares; in the hierarchical mode two leaves compare by the shares of their ancestors just
below the deepest ancestor they share.  Ties keep case order (Volcano's heap leaves them open).

**Admission** (:func:`admits`): a queue admits its pending request (``request - usage``, as one job
whose ``minResources`` it is) when, on each resource it asks for (``pods`` aside), its usage plus
the request is at most its ``realCapability``, and in the hierarchical mode the same holds at
every ancestor for the ancestor's usage.  A resource ``realCapability`` has no key for counts 0.

**Not modelled**: reclaim and preemption (``AddReclaimableFn``, ``AddPreemptiveFn``: a queue below
its ``deserved`` on some resource may reclaim from queues above theirs, never below a guarantee;
``ancestorReclaimLevel``), the ``inqueue`` and ``elastic`` accounting of PodGroups, closed queues,
and DRA device-class quotas: they decide who is evicted when, not what a queue is entitled to.

**What Volcano's arithmetic does that a fair share would not** (checked in
``tests/test_volcano_capacity.py``):

* nothing is divided: the entitlements are the operator's numbers, clamped one queue at a time,
  so they can add up to more than the cluster (and less: the rest is not handed out);
* the guarantee floor comes after the cap, so a queue guaranteed more than its ``capability``
  deserves its guarantee;
* in the hierarchical mode ``deserved`` is not capped at all (neither by ``capability`` nor by the
  parent's ``deserved``: Volcano only logs children adding up to more), and ``realCapability``
  never looks at the cluster: the root queue's capability is infinite unless given, so a leaf's
  limit is the capabilities above it minus its siblings' guarantees;
* a root ``capability`` that gives some resource but not cpu (or memory) gives 0 of it, which
  every child inherits: no queue then admits anything asking for cpu.

**Units** as ``models/volcano_proportion.py`` (cpu and other resources x1000, memory in bytes);
they matter for the 0.1 of ``ResourceNames`` and ``IsEmpty`` only.

Twelve cpus and 12 GiB; ``a`` deserves 8 cpus and 10 GiB and is capped at 6 cpus, ``b`` deserves
4 cpus and 4 GiB and is guaranteed 5 cpus, ``c`` asks for nothing.  The guarantee leaves
``12 - 5 = 7`` cpus to ``a``'s ``realCapability`` (6 with its capability); ``b`` is floored at
its guarantee.  The memory promised, 14 GiB, is more than the cluster's 12:

>>> import fairalloc
>>> from fairalloc.core.queues import Queues
>>> G = 2**30
>>> q = Queues.build(["cpu", "memory"], {"a": {"deserved": [8, 10 * G], "limit": [6, np.inf]},
...     "b": {"deserved": [4, 4 * G], "guarantee": [5, np.nan]}, "c": {"deserved": [2, 2 * G]}}, [])
>>> inst = fairalloc.Instance([12, 12 * G], [[9, 9 * G], [1, G], [0, 0]], users=["a", "b", "c"],
...                           max_tasks=[1, 1, 0], resources=["cpu", "memory"], queues=q)
>>> a = fairalloc.solve(inst, "volcano-capacity")
>>> a.bundles[:, 0].tolist(), (a.bundles[:, 1] / G).tolist()
([6.0, 5.0, 0.0], [10.0, 4.0, 0.0])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, active, queues_of, request
from fairalloc.core.registry import register
from fairalloc.engines.queue_policy import QueuePolicy

from .volcano_proportion import CPU_NAMES, IGNORED, MEMORY_NAMES, MIN_RESOURCE, exceeded_part, volcano_units

_Floats = NDArray[np.float64]
_Mask = NDArray[np.bool_]
_V = TypeVar("_V")


@dataclass(frozen=True)
class CapacityAttrs:
    """What the plug-in builds per queue (every node of the tree, in Volcano's units):
    ``deserved``, ``real`` (``realCapability``, meaningful where ``present``) and the ancestors
    (root-most first; ``None`` is the case's root standing for Volcano's ``root`` queue)."""

    hierarchical: bool
    deserved: Mapping[str | None, _Floats]
    real: Mapping[str | None, _Floats]
    present: Mapping[str | None, _Mask]
    ancestors: Mapping[str | None, list[str | None]]


def _nan0(a: _Floats) -> _Floats:
    return np.where(np.isnan(a), 0.0, a)


def flat_attrs(q: Queues, users: list[str], total: _Floats, unit: _Floats, scalar: _Mask) -> CapacityAttrs:
    """``buildQueueAttrs`` for every leaf queue (as if each had a job: nothing else depends on it)."""
    g = q.leaf_array("guarantee", users) * unit
    real, present = exceeded_part(total, np.ones(total.shape, dtype=bool), g, scalar)
    cap = q.leaf_array("limit", users) * unit
    real = np.minimum(real, np.where(~scalar & (cap <= 0), np.inf, cap))
    capped = np.minimum(_nan0(q.leaf_array("deserved", users) * unit), np.where(present, real, np.inf))
    deserved = np.maximum(capped, _nan0(g))
    ancestors: dict[str | None, list[str | None]] = {u: [] for u in users}
    return CapacityAttrs(
        False, dict(zip(users, deserved)), dict(zip(users, real)), dict(zip(users, present)), ancestors
    )


def _root(q: Queues) -> str | None:
    """Volcano's ``root`` queue: the case's one top group, or the case's root."""
    top = q.children(None)
    return top[0] if len(top) == 1 and q.is_group(top[0]) else None


def _root_capability(q: Queues, root: str | None, unit: _Floats, scalar: _Mask) -> tuple[_Floats, _Mask]:
    """The root's ``capability`` (= its ``realCapability``) and its keys: infinite when empty; else
    ``NewResource`` of what is given, cpu and memory 0 where not given."""
    m = len(unit)
    cap = np.full(m, np.inf) if root is None else q.limit[root] * unit
    given = np.isfinite(cap)
    if not (given & (cap >= MIN_RESOURCE) & ~_ignored(q.resources)).any():
        return np.full(m, np.inf), np.ones(m, dtype=bool)
    return np.where(given, cap, np.where(scalar, np.inf, 0.0)), ~scalar | given


def hierarchical_attrs(q: Queues, unit: _Floats, scalar: _Mask) -> CapacityAttrs:
    """``buildHierarchicalQueueAttrs`` and ``checkHierarchicalQueue``, from the root down, every
    queue of a generation of the tree at once (one row per queue; the root's row last): O(queues x
    resources) numpy work and O(queues x depth) for the ancestor lists."""
    root = _root(q)
    names: list[str | None] = [*q.groups, *q.leaf_names]
    if root is None:
        names.append(None)
    row = {v: i for i, v in enumerate(names)}
    m = len(unit)

    def table(field: str) -> _Floats:
        return np.array([getattr(q, field)[v] for v in names[: len(q.parent)]], dtype=float).reshape(-1, m) * unit

    guarantee, limit, configured = table("guarantee"), table("limit"), table("deserved")
    real, present = np.zeros((len(names), m)), np.zeros((len(names), m), dtype=bool)
    capability, deserved = np.zeros((len(names), m)), np.zeros((len(names), m))
    real[row[root]], present[row[root]] = _root_capability(q, root, unit, scalar)
    capability[row[root]] = real[row[root]]
    below: list[str] = []  # every queue under the root, generation by generation
    for parents, kids, owner in q.generations(root):
        up = np.array([row[p] for p in parents])[owner]
        rows = np.array([row[c] for c in kids])
        g = guarantee[rows]
        values, keys = exceeded_part(real[up], present[up], g, scalar, owner)
        own = limit[rows]
        inherit = ~np.isfinite(own) | (~scalar & (own <= 0))
        capability[rows] = np.where(inherit, capability[up], own)
        real[rows], present[rows] = np.minimum(values, capability[rows]), keys
        deserved[rows] = np.maximum(_nan0(configured[rows]), _nan0(g))
        below += kids
        if parents == [root]:
            deserved[row[root]] = np.sum(deserved[rows], axis=0)
    tops = [root] if below else []  # the root deserves its children's sum once it has children

    def ancestors(v: str | None) -> list[str | None]:
        return [*([None] if root is None else []), *q.path(cast(str, v))]

    return CapacityAttrs(
        True,
        _Rows([*below, *tops], lambda v: deserved[row[v]]),
        _Rows([root, *below], lambda v: real[row[v]]),
        _Rows([root, *below], lambda v: present[row[v]]),
        _Rows(below, ancestors),
    )


class _Rows(Mapping[str | None, _V]):
    """A read-only mapping over ``keys`` whose values are made when read (a row of a table, a path):
    the attributes of 10^5 queues are not made as 10^5 objects for the few the caller reads."""

    def __init__(self, keys: list[str | None] | list[str], value: Callable[[str | None], _V]) -> None:
        self._keys = dict.fromkeys(keys)
        self._value = value

    def __getitem__(self, key: str | None) -> _V:
        if key not in self._keys:
            raise KeyError(key)
        return self._value(key)

    def __iter__(self) -> Iterator[str | None]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _ignored(resources: tuple[str, ...]) -> _Mask:
    return np.array([r in IGNORED for r in resources])


def capacity_attrs(instance: Instance) -> CapacityAttrs:
    """The queue attributes of the plug-in for a queue case (hierarchical when it has groups)."""
    q = queues_of(instance)
    res = tuple(instance.resources)
    unit = volcano_units(res)
    scalar = np.array([r not in CPU_NAMES + MEMORY_NAMES for r in res])
    if q.groups:
        return hierarchical_attrs(q, unit, scalar)
    return flat_attrs(q, list(instance.users), np.asarray(instance.capacity, dtype=float) * unit, unit, scalar)


def share(deserved: _Floats, used: _Floats, ignored: _Mask) -> float:
    """``updateQueueAttrShare``: 1 for a best-effort queue (``deserved.IsEmpty()``), else
    ``max_j Share(used_j, deserved_j)`` over ``deserved.ResourceNames()``."""
    if not ((deserved >= MIN_RESOURCE) & ~ignored).any():
        return 1.0
    names = deserved >= MIN_RESOURCE
    return float(max(0.0, float(np.max(used[names] / deserved[names]))))


def _usage(q: Queues, node: str | None, unit: _Floats) -> _Floats:
    if node is None:
        return np.sum([q.usage[u] for u in q.leaves()], axis=0) * unit
    return q.subtree_usage(node) * unit


def admits(instance: Instance) -> dict[str, bool]:
    """Per leaf queue with a pending request: whether the plug-in lets it in
    (``jobEnqueueable`` / ``queueAllocatable`` for that request as one job, up the tree)."""
    q = queues_of(instance)
    attrs = capacity_attrs(instance)
    unit = volcano_units(tuple(instance.resources))
    ignored = _ignored(tuple(instance.resources))
    asking = request(instance)
    out = {}
    for i, u in enumerate(instance.users):
        pending = np.maximum(asking[i] * unit - q.usage[u] * unit, 0.0)
        if not (pending > 0).any():
            continue
        asked = (pending > 0) & ~ignored
        chain = [u, *reversed(attrs.ancestors[u])] if attrs.hierarchical else [u]
        out[u] = all(_fits(_usage(q, v, unit) + pending, attrs, v, asked) for v in chain)
    return out


def _fits(future: _Floats, attrs: CapacityAttrs, node: str | None, asked: _Mask) -> bool:
    """``LessEqualWithDimensionAndResourcesName``: a missing key of ``realCapability`` is 0."""
    cap = np.where(attrs.present[node], attrs.real[node], 0.0)
    return bool(not (future[asked] > cap[asked]).any())


@register("volcano-capacity")
class VolcanoCapacity(QueuePolicy):
    summary = (
        "Volcano capacity: each queue's configured deserved, capped by its real capability, floored by its guarantee"
    )
    about = (
        "Nothing is divided: entitlements are the operator's numbers clamped one queue at a time, so they may exceed "
        "the cluster."
    )
    section = "9.2.1"
    solver = "numpy (Volcano's queue attributes)"
    per_resource = True

    def entitlement(self, instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
        attrs = capacity_attrs(instance)
        unit = volcano_units(tuple(instance.resources))
        bundles = np.array([attrs.deserved[u] for u in instance.users]).reshape(instance.n, len(unit)) / unit
        if not attrs.hierarchical:  # a queue without a job has no attributes: it deserves nothing
            bundles = np.where(active(instance)[:, None], bundles, 0.0)
        return bundles, {"hierarchical": attrs.hierarchical}

    def shares(self, instance: Instance) -> dict[str, float]:
        """``updateQueueAttrShare`` of every leaf queue (and group) for the case's ``usage``."""
        q = queues_of(instance)
        attrs = capacity_attrs(instance)
        unit = volcano_units(tuple(instance.resources))
        ignored = _ignored(tuple(instance.resources))
        nodes = [*instance.users, *q.groups]
        return {v: share(attrs.deserved[v], _usage(q, v, unit), ignored) for v in nodes if v in attrs.deserved}

    def order(self, instance: Instance) -> list[str]:
        """Leaf queues in the order of the plug-in's ``QueueOrderFn`` for the case's ``usage``."""
        q = queues_of(instance)
        attrs = capacity_attrs(instance)
        shares = self.shares(instance)
        ignored = _ignored(tuple(instance.resources))

        def by_share(left: str | None, right: str | None) -> int:
            # compareShareWithDeserved: the lower share first; on a tie, a queue that deserves first
            ls, rs = (1.0 if v is None else shares[v] for v in (left, right))  # the root never compares
            if ls != rs:
                return -1 if ls < rs else 1
            has = [bool(((attrs.deserved[v] >= MIN_RESOURCE) & ~ignored).any()) for v in (left, right)]
            return 0 if has[0] == has[1] else (-1 if has[0] else 1)

        def compare(left: str, right: str) -> int:
            if q.priority[left] != q.priority[right]:
                return -1 if q.priority[left] > q.priority[right] else 1
            if not attrs.hierarchical:
                return by_share(left, right)
            la, ra = attrs.ancestors[left], attrs.ancestors[right]
            level = _queue_level(la, ra)
            lp = la[level + 1] if level + 1 < len(la) else left
            rp = ra[level + 1] if level + 1 < len(ra) else right
            return by_share(lp, rp)

        return sorted(instance.users, key=functools.cmp_to_key(compare))


def _queue_level(left: list[str | None], right: list[str | None]) -> int:
    """``getQueueLevel``: the index of the deepest common ancestor (0 when only the root)."""
    level = 0
    for i in range(min(len(left), len(right))):
        if left[i] != right[i]:
            return level
        level = i
    return level


__all__ = ["CapacityAttrs", "VolcanoCapacity", "admits", "capacity_attrs", "flat_attrs", "hierarchical_attrs", "share"]
