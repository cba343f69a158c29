"""yarn-capacity's entitlement at commit e2bcc7b (fairalloc/models/yarn_capacity.py), kept as the
oracle for the fast one: the queue tree read node by node, and each parent's water level filled by
its own breakpoint walk, from the root down.  Its functions are copied verbatim; the registered
class and the program are left out: :func:`bundles` is ``YarnCapacity.entitlement``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of

#: the names the memory resource goes by (``DefaultResourceCalculator`` compares memory only)
MEMORY_NAMES = ("memory-mb", "memory", "mem")


def memory_index(resources: tuple[str, ...] | list[str]) -> int:
    """The resource ``DefaultResourceCalculator`` looks at: memory, or the first resource."""
    return next((j for j, r in enumerate(resources) if r in MEMORY_NAMES), 0)


#: one sibling set's water level: (their names, rates, caps, amount, which level) -> amounts
#: ``min(lambda rate, cap)``; "which" is "" for the children with a capacity, "capacity 0" after them
Water = Callable[[list[str], list[float], list[float], float, str], list[float]]


def level_fill(
    guarantee: list[float], cap: list[float], amount: float, water: Water | None = None, names: list[str] | None = None
) -> list[float]:
    """``x_c = min(lambda g_c, cap_c)`` with ``sum x_c = min(amount, sum cap_c)``: the common used
    capacity ``lambda`` of children ``g_c > 0``; the children of capacity 0 then share what is left
    equally (each up to its cap).  ``water`` computes each of the two levels (default: exactly, by the
    breakpoints ``cap_c / g_c`` in order; the program: as LP rounds).

    >>> level_fill([6.0, 14.0], [12.0, 4.0], 20.0)
    [12.0, 4.0]
    >>> level_fill([6.0, 14.0, 0.0, 0.0], [2.0, 4.0, 100.0, 1.0], 20.0)
    [2.0, 4.0, 13.0, 1.0]
    """
    x = [0.0] * len(cap)
    left = max(amount, 0.0)
    names = names or [str(c) for c in range(len(cap))]
    for members, key, which in (
        ([c for c, g in enumerate(guarantee) if g > 0], guarantee, ""),
        ([c for c, g in enumerate(guarantee) if g <= 0], [1.0] * len(cap), "capacity 0"),
    ):
        if not members:
            continue
        rates, caps = [key[c] for c in members], [cap[c] for c in members]
        got = (water or _water)([names[c] for c in members], rates, caps, left, which)
        for c, v in zip(members, got, strict=True):
            x[c] = v
        left = max(left - sum(got), 0.0)
    return x


def _water(members: list[str], rate: list[float], cap: list[float], amount: float, which: str = "") -> list[float]:
    """``min(lambda rate_k, cap_k)`` summing to ``min(amount, sum cap)``."""
    if sum(cap) <= amount:
        return list(cap)
    order = sorted(range(len(members)), key=lambda k: cap[k] / rate[k])
    fixed, rest = 0.0, sum(rate)
    level = 0.0
    for k in order:
        stop = cap[k] / rate[k]
        if fixed + stop * rest >= amount:  # the level is reached before k is capped
            level = (amount - fixed) / rest
            break
        fixed += cap[k]
        rest -= rate[k]
    return [min(level * r, c) for r, c in zip(rate, cap, strict=True)]


@dataclass(frozen=True)
class CapacityTree:
    """What the Capacity Scheduler holds of a queue case, in memory units."""

    q: Queues
    resource: str  # the memory resource's name
    total: float  # the cluster's memory
    guarantee: dict[str, float]  # absolute capacity (0 when not given)
    cap: dict[str, float]  # min(absolute maximum, what the subtree asks for)


def capacity_tree(instance: Instance) -> CapacityTree:
    q = queues_of(instance)
    j = memory_index(instance.resources)
    total = float(instance.capacity[j])
    asks = dict(zip(instance.users, (instance.demand[:, j] * instance.bounds()).tolist(), strict=True))
    guarantee = {v: float(np.nan_to_num(q.guarantee[v][j])) for v in q.parent}
    cap: dict[str, float] = {}

    def walk(node: str) -> float:
        want = sum(walk(c) for c in q.children(node)) if q.is_group(node) else asks[node]
        cap[node] = max(min(float(q.limit[node][j]), want, total), 0.0)
        return cap[node]

    for top in q.children(None):
        walk(top)
    return CapacityTree(q, instance.resources[j], total, guarantee, cap)


def fixed_point(tree: CapacityTree, water: Callable[[str | None], Water] | None = None) -> dict[str, float]:
    """Every queue's memory where container assignment stops, from the root down; ``water(parent)``
    computes the levels of ``parent``'s children (default: exactly)."""
    out: dict[str, float] = {}
    stack: list[tuple[str | None, float]] = [(None, tree.total)]
    while stack:
        node, amount = stack.pop()
        kids = tree.q.children(node)
        rule = water(node) if water is not None else None
        got = level_fill([tree.guarantee[c] for c in kids], [tree.cap[c] for c in kids], amount, rule, kids)
        for c, v in zip(kids, got, strict=True):
            out[c] = v
            if tree.q.is_group(c):
                stack.append((c, v))
    return out


def used_capacity(usage: float, guarantee: float, total: float) -> float:
    """What ``PriorityQueueComparator`` sorts a queue on: its used capacity (used over guaranteed
    memory, ``CSQueueUtils.updateUsedCapacity``), or for a queue of capacity 0 (sorted after the
    others) its absolute used capacity, used over the cluster's memory."""
    if guarantee > 0:
        return usage / guarantee
    return usage / total if total > 0 else 0.0


def _bundles(instance: Instance, tree: CapacityTree, memory: dict[str, float]) -> tuple[np.ndarray, dict[str, Any]]:
    """Each leaf's request scaled to its memory; the groups' used capacities."""
    j = memory_index(instance.resources)
    bundles = np.zeros((instance.n, instance.m))
    for i, u in enumerate(instance.users):
        d = instance.demand[i]
        if d[j] > 0:
            bundles[i] = d * (memory[u] / d[j])
        elif np.isfinite(instance.bounds()[i]):  # no memory asked: the calculator sees nothing to limit
            bundles[i] = d * instance.bounds()[i]
    levels = {v: used_capacity(memory[v], tree.guarantee[v], tree.total) for v in tree.q.groups if v in memory}
    return bundles, {"group_used_capacity": levels}


def bundles(instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
    """``YarnCapacity.entitlement``."""
    tree = capacity_tree(instance)
    return _bundles(instance, tree, fixed_point(tree))


def bundles_as_solved(instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
    """:func:`bundles` as ``fairalloc.solve`` calls an entitlement: under ``np.errstate(all="ignore")``
    (a request of 0 memory with an unbounded ``max_tasks`` multiplies 0 by ``inf``)."""
    with np.errstate(all="ignore"):
        return bundles(instance)
