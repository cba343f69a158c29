"""Hierarchies of users: the tree of groups, built with networkx, and the H-DRF descent.

A case declares groups (internal nodes, each with a weight among its siblings and an optional
parent) and puts users (leaves) into groups; anything without a parent hangs from the root.

:func:`hdrf_schedule` is the discrete H-DRF of Bhattacharya, Culler, Friedman, Ghodsi, Shenker,
Stoica, "Hierarchical scheduling for diverse datacenter workloads", SoCC 2013: to launch a task,
start at the root and repeatedly step into the child with the lowest weighted dominant share
``s_c / w_c`` (``s_c``: the largest share of any resource used by c's whole subtree), skipping
*blocked* children (a leaf whose next task no longer fits, or that reached ``max_tasks``; a group
all of whose children are blocked), until a leaf is reached; launch its next task.  Ties go to the
child listed first.  A group holding no user (not even in a subgroup) is blocked from the start: the
mechanisms use :func:`occupied_tree`, without such groups, so they receive nothing and change
nothing (not even the collapsed variant's sibling weights).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from fairalloc.core.deferred import deferred
from fairalloc.core.errors import CaseError, FairallocError, SolverError
from fairalloc.core.instance import Instance
from fairalloc.core.limits import MAX_HDRF_DECISIONS, MAX_HDRF_LAUNCHES
from fairalloc.core.tolerances import FIT
from fairalloc.engines.discrete import DiscreteEngine

if TYPE_CHECKING:
    import networkx as nx
else:
    nx = deferred("networkx")

ROOT = "__root__"


def tree(instance: Instance) -> nx.DiGraph:
    """The hierarchy as a directed tree from :data:`ROOT` (flat instances: users under the root)."""
    return tree_from(*_tree_parts(instance))


def _tree_parts(instance: Instance) -> tuple[list[str], Mapping[str, str | None], dict[str, float]]:
    """The hierarchy's nodes in the tree's order (groups, then users), their parents (missing or
    ``None``: the root) and their weights, as :func:`tree_from` takes them."""
    groups = instance.groups or {"parent": {}, "weight": {}}
    users = instance.users
    weight = {**groups["weight"], **dict(zip(users, instance.scalar_weights("hdrf").tolist()))}
    named = set(users)
    return [n for n in groups["parent"] if n not in named] + list(users), groups["parent"], weight


def tree_from(nodes: Sequence[str], parent: Mapping[str, str | None], weight: Mapping[str, float]) -> nx.DiGraph:
    """A tree from :data:`ROOT` over ``nodes`` (groups and leaves), each under ``parent[node]`` (missing
    or ``None``: the root) with the attribute ``weight`` (``weight[node]``, default 1). Every node's
    children are listed in the order of ``nodes``, which is the descent's tie-break order.
    (:func:`tree` builds a case's tree with it, the simulator's ``hdrf`` scheduler a workload's.)
    """
    g = nx.DiGraph()
    g.add_node(ROOT, weight=1.0)
    for node in nodes:
        g.add_node(node, weight=float(weight.get(node, 1.0)))
    for node in nodes:
        g.add_edge(parent.get(node) or ROOT, node)
    assert nx.is_arborescence(g), "groups must form a tree"
    return g


def occupied_tree(instance: Instance) -> nx.DiGraph:
    """:func:`tree` without its empty groups: a group that holds no user, directly or in a subgroup,
    can never receive a task (it is blocked from the start), so the mechanisms leave it out.  Every
    leaf of the result is a user; children keep their order."""
    g = tree(instance)
    keep = {ROOT}
    for u in instance.users:
        node = u
        while node not in keep:
            keep.add(node)
            node = next(iter(g.predecessors(node)))
    if len(keep) < g.number_of_nodes():
        g.remove_nodes_from([v for v in list(g) if v not in keep])
    return g


def hdrf_schedule(instance: Instance, max_launches: int | None = None, *, batch: bool = True) -> np.ndarray:
    """Task counts per user from the H-DRF descent (see the module docstring).

    ``max_launches``: ``None`` (default, or ``inf``) runs until every leaf is blocked.  A cap counts
    launches; when it is reached while a further task could still be launched, :class:`SolverError`
    is raised (a truncated schedule is never returned as if it were complete).

    The descent is :class:`fairalloc.engines.discrete.DiscreteEngine`'s over :func:`occupied_tree`
    (every group keeps its children in a heap keyed ``(share, position)``, so a decision costs heap
    operations along the path, not a scan of every sibling; a blocked leaf is parked for good).

    ``batch=True`` launches the runs of identical decisions in one go (the same floats as one by
    one, see :meth:`~fairalloc.engines.discrete.DiscreteEngine.run_leaf`); ``batch=False`` makes every
    decision with a descent from the root (the reference: both give the same task counts, bit for bit).

    A user demanding nothing (of any resource of finite capacity) and without ``max_tasks`` would
    receive tasks without end: refused with :class:`CaseError`, as :class:`Instance` refuses an
    all-zero demand.

    At most :data:`fairalloc.core.limits.MAX_HDRF_LAUNCHES` tasks are launched (a task taking 1e-8 of
    a resource would need 10^8): an instance whose launches provably exceed it is refused before
    the descent starts (:func:`launches_lower_bound`), and reaching it is a :class:`FairallocError`;
    a schedule is never cut short silently.
    """
    R = np.asarray(instance.capacity, dtype=float)
    D = instance.demand
    bounds = instance.bounds()
    endless = ~np.any((D > 0) & np.isfinite(R), axis=1) & np.isposinf(bounds)
    if endless.any():
        u = instance.users[int(np.argmax(endless))]
        raise CaseError(
            f"users.{u}.demand: all zero; a user must demand some resource (or have max_tasks): "
            f"H-DRF would launch her tasks without end"
        )
    cap = None if max_launches is None or max_launches == np.inf else int(max_launches)
    if cap is not None and cap < 0:
        raise CaseError(f"max_launches: must be >= 0 (got {max_launches})")
    need, who, what = launches_lower_bound(instance)
    if need > MAX_HDRF_LAUNCHES and (cap is None or cap > MAX_HDRF_LAUNCHES):
        raise FairallocError(_too_many_launches(instance, f"needs at least {need:.3g}", who, what))
    engine = hdrf_engine(instance)
    idle = (~np.any(D != 0, axis=1)).tolist()
    launches = decisions = free = 0  # free: tasks of users demanding nothing (one batch)
    while True:
        i = engine.choose()  # a leaf at her bound or whose task no longer fits: parked
        if i is None:
            break
        if launches - free >= MAX_HDRF_LAUNCHES and (cap is None or cap > MAX_HDRF_LAUNCHES):
            raise FairallocError(
                _too_many_launches(
                    instance, f"needs more than {MAX_HDRF_LAUNCHES:,}", int(np.argmax(engine.launched)), None
                )
            )
        decisions += 1
        if decisions > MAX_HDRF_DECISIONS and (cap is None or cap > launches):
            raise FairallocError(
                _too_many_launches(
                    instance,
                    f"needs more than {MAX_HDRF_DECISIONS:,} scheduling decisions for its",
                    int(np.argmax(engine.launched)),
                    None,
                    "MAX_HDRF_DECISIONS",
                    MAX_HDRF_DECISIONS,
                )
            )
        if cap is not None and launches >= cap:
            raise SolverError(
                f"hdrf: max_launches={cap} reached after {launches} launches while more tasks "
                f"could still be launched (user {instance.users[i]}); pass max_launches=None "
                f"for no cap"
            )
        done = engine.run_leaf(i, np.inf if cap is None else cap - launches, batch=batch)
        launches += done
        free += done if idle[i] else 0
    return engine.launched.astype(float)


def hdrf_engine(instance: Instance) -> DiscreteEngine:
    """The discrete engine over :func:`occupied_tree` (leaves: the users, by index), with H-DRF's
    rules: ties to the child listed first, whole tasks within ``max_tasks`` (``floor``), the skip policy."""
    g = occupied_tree(instance)
    n = instance.n
    index = {u: i for i, u in enumerate(instance.users)}
    groups = [v for v in g if v != ROOT and v not in index]
    index.update({v: n + k for k, v in enumerate(groups)})
    parent: list[int | None] = [None] * (n + len(groups))
    for v, k in index.items():
        above = next(iter(g.predecessors(v)))
        parent[k] = None if above == ROOT else index[above]
    order = [index[c] for v in g for c in g.successors(v)]  # every node's children in their order
    weights = [g.nodes[u]["weight"] for u in instance.users]
    return DiscreteEngine(
        instance.capacity,
        weights,
        parent=parent,
        group_weights=[g.nodes[v]["weight"] for v in groups],
        order=order,
        demand=instance.demand,
        limit=np.floor(instance.bounds()),
        tie_break="order",
        policy="skip",
    )


def launches_lower_bound(instance: Instance) -> tuple[float, int, int | None]:
    """``(L, i, j)``: the H-DRF descent launches at least ``L`` tasks on ``instance``.

    It stops only when every user is blocked: user ``i`` at her bound ``T_i``, or with a resource
    ``j`` she demands so used that her next task does not fit, ``U_j > R_j (1 + FIT) - D_ij``; and
    ``U_j <= L max_k D_kj``.  So ``L >= min(T_i, min_j (R_j (1 + FIT) - D_ij) / max_k D_kj)`` for
    every ``i``: the largest of these, its user and resource (``None``: her bound)."""
    D, R, T = instance.demand, np.asarray(instance.capacity, dtype=float), instance.bounds()
    with np.errstate(all="ignore"):
        top = D.max(axis=0)
        room = np.where(D > 0, (R * (1 + FIT) - D) / np.where(top > 0, top, 1.0), np.inf)
        room = np.maximum(np.floor(room), 0.0)
        j = room.argmin(axis=1)
        by_resource = room[np.arange(instance.n), j]
        bound = np.ceil(T)
        per_user = np.where(D.any(axis=1), np.minimum(bound, by_resource), 0.0)  # no demand: one batch
    i = int(np.argmax(per_user))
    return float(per_user[i]), i, (None if bound[i] <= by_resource[i] else int(j[i]))


def _too_many_launches(
    instance: Instance,
    amount: str,
    i: int,
    j: int | None,
    limit: str = "MAX_HDRF_LAUNCHES",
    value: int = MAX_HDRF_LAUNCHES,
) -> str:
    user = instance.users[i]
    if j is None:
        d = instance.demand[i]
        k = int(
            np.argmax(np.where(instance.capacity > 0, d / np.where(instance.capacity > 0, instance.capacity, 1), 0))
        )
        why = (
            f"user {user}'s task takes {d[k] / instance.capacity[k]:.3g} of {instance.resources[k]}"
            if instance.capacity[k] > 0 and d[k] > 0
            else f"user {user} may run {instance.bounds()[i]:.3g} tasks"
        )
    else:
        why = f"user {user}'s task takes {instance.demand[i, j] / instance.capacity[j]:.3g} of {instance.resources[j]}"
    what = "launches" if limit == "MAX_HDRF_LAUNCHES" else "decisions"
    return (
        f"hdrf: this instance {amount} task launches ({why}); H-DRF launches whole tasks and stops at "
        f"{value:,} {what} (the launch limit, fairalloc.core.limits.{limit}); for the divisible "
        f"allocation use drf"
    )


# -- the two variants that starve (docs/formulations.md section 7) --------------------------------------


def _leaves(g: nx.DiGraph, node: str) -> list[str]:
    return [v for v in nx.dfs_preorder_nodes(g, node) if g.out_degree(v) == 0 and v != ROOT]


def naive_hierarchical_drf(instance: Instance) -> np.ndarray:
    """Naive hierarchical DRF (continuous): at every internal node, weighted DRF among its children,
    each child acting as one user whose task is the *sum* of its leaves' tasks; a child's bundle is
    then split among its own children the same way.  A group whose aggregate task needs a saturated
    resource stops growing, even when some of its leaves do not need that resource: they starve.
    """
    from fairalloc.engines.filling import progressive_filling

    g = occupied_tree(instance)  # an empty group takes no part (and gets nothing)
    index = {u: i for i, u in enumerate(instance.users)}
    tasks = np.zeros(instance.n)

    def split(node: str, capacity: np.ndarray) -> None:
        kids = list(g.successors(node))
        if not kids:
            d = instance.demand[index[node]]
            need = d > 0
            tasks[index[node]] = min(float(np.min(capacity[need] / d[need])), float(instance.bounds()[index[node]]))
            return
        aggregate = np.array([sum(instance.demand[index[u]] for u in _leaves(g, k)) for k in kids])
        weights = np.array([g.nodes[k]["weight"] for k in kids])
        share = aggregate / np.where(capacity > 0, capacity, np.inf)
        usable = ~np.any((aggregate > 0) & (capacity <= 0), axis=1)  # a child needing an empty resource gets 0
        x = np.zeros(len(kids))
        if usable.any():
            x[usable] = progressive_filling(
                aggregate[usable], capacity, share[usable].max(axis=1) / weights[usable]
            ).tasks
        for k, units in zip(kids, x):
            split(k, units * aggregate[kids.index(k)])

    split(ROOT, instance.capacity.astype(float))
    return tasks


def collapsed_weights(instance: Instance) -> np.ndarray:
    """Leaf weights of the collapsed tree: the product, along the path from the root, of each node's
    weight over its siblings' total weight (empty groups are no siblings: they are left out).

    The same tree as :func:`occupied_tree`, walked in plain dictionaries: the verifier collapses
    the same tree for every report it tries, and building the graph was most of that."""
    order, links, weight = _tree_parts(instance)
    parent = {node: links.get(node) or ROOT for node in order}
    paths = [_path_from_root(parent, u) for u in instance.users]
    occupied = {node for path in paths for node in path}
    siblings: dict[str, float] = {}  # (summed in the tree's order of children)
    for node in order:
        if node in occupied:
            siblings[parent[node]] = siblings.get(parent[node], 0) + float(weight.get(node, 1.0))
    out = np.ones(instance.n)
    for i, path in enumerate(paths):
        for above, node in zip(path, path[1:]):
            out[i] *= float(weight.get(node, 1.0)) / siblings[above]
    return out


def _path_from_root(parent: Mapping[str, str], node: str) -> list[str]:
    """``[ROOT, ..., node]`` up the ``parent`` links; a cycle, or a parent that is no node, is no tree."""
    path = [node]
    while path[-1] != ROOT:
        up = parent.get(path[-1])
        assert up is not None and len(path) <= len(parent), "groups must form a tree"
        path.append(up)
    return path[::-1]
