"""volcano-capacity's queue attributes at commit e2bcc7b (fairalloc/models/volcano_capacity.py), kept
as the oracle for the fast ones: ``buildHierarchicalQueueAttrs`` node by node from the root down,
``buildQueueAttrs`` over the leaf queues.  Its functions are copied verbatim; the registered class
is left out: :func:`bundles` is ``VolcanoCapacity.entitlement``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, active, queues_of
from fairalloc.models.volcano_proportion import (
    CPU_NAMES,
    IGNORED,
    MEMORY_NAMES,
    MIN_RESOURCE,
    exceeded_part,
    volcano_units,
)

_Floats = NDArray[np.float64]
_Mask = NDArray[np.bool_]


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
    """``buildHierarchicalQueueAttrs`` and ``checkHierarchicalQueue``, from the root down."""
    root = _root(q)
    cap0, present0 = _root_capability(q, root, unit, scalar)
    deserved: dict[str | None, _Floats] = {}
    real: dict[str | None, _Floats] = {root: cap0}
    present: dict[str | None, _Mask] = {root: present0}
    capability: dict[str | None, _Floats] = {root: cap0}
    ancestors: dict[str | None, list[str | None]] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        kids = q.children(node)
        if not kids:
            continue
        g = np.array([q.guarantee[c] for c in kids]) * unit
        values, keys = exceeded_part(real[node], present[node], g, scalar)
        for k, c in enumerate(kids):
            own = q.limit[c] * unit
            inherit = ~np.isfinite(own) | (~scalar & (own <= 0))
            capability[c] = np.where(inherit, capability[node], own)
            real[c], present[c] = np.minimum(values[k], capability[c]), keys[k]
            deserved[c] = np.maximum(_nan0(q.deserved[c] * unit), _nan0(g[k]))
            ancestors[c] = [*(ancestors[node] if node in ancestors else []), node]  # the root: nobody's child
            stack.append(c)
        if node == root:
            deserved[root] = np.sum([deserved[c] for c in kids], axis=0)
    return CapacityAttrs(True, deserved, real, present, ancestors)


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


def bundles(instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
    """``VolcanoCapacity.entitlement``."""
    attrs = capacity_attrs(instance)
    unit = volcano_units(tuple(instance.resources))
    out = np.array([attrs.deserved[u] for u in instance.users]).reshape(instance.n, len(unit)) / unit
    if not attrs.hierarchical:  # a queue without a job has no attributes: it deserves nothing
        out = np.where(active(instance)[:, None], out, 0.0)
    return out, {"hierarchical": attrs.hierarchical}


def bundles_as_solved(instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
    """:func:`bundles` as ``fairalloc.solve`` calls an entitlement: under ``np.errstate(all="ignore")``
    (a request of 0 memory with an unbounded ``max_tasks`` multiplies 0 by ``inf``)."""
    with np.errstate(all="ignore"):
        return bundles(instance)
