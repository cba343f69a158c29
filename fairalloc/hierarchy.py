"""Hierarchies of users: the tree of groups, built with networkx, and the H-DRF descent.

A case declares groups (internal nodes, each with a weight among its siblings and an optional
parent) and puts users (leaves) into groups; anything without a parent hangs from the root.

:func:`hdrf_schedule` is the discrete H-DRF of Bhattacharya, Culler, Friedman, Ghodsi, Shenker,
Stoica, "Hierarchical scheduling for diverse datacenter workloads", SoCC 2013: to launch a task,
start at the root and repeatedly step into the child with the lowest weighted dominant share
``s_c / w_c`` (``s_c``: the largest share of any resource used by c's whole subtree), skipping
*blocked* children (a leaf whose next task no longer fits, or that reached ``max_tasks``; a group
all of whose children are blocked), until a leaf is reached; launch its next task.  Ties go to the
child listed first.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from .instance import Instance

ROOT = "__root__"


def tree(instance: Instance) -> nx.DiGraph:
    """The hierarchy as a directed tree from :data:`ROOT` (flat instances: users under the root)."""
    groups = instance.groups or {"parent": {}, "weight": {}}
    user_weight = dict(zip(instance.users, instance.scalar_weights("hdrf")))
    order = [n for n in groups["parent"] if n not in instance.users] + list(instance.users)
    return tree_from(order, groups["parent"], {**groups["weight"], **user_weight})


def tree_from(nodes, parent: dict, weight: dict) -> nx.DiGraph:
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


def hdrf_schedule(instance: Instance, max_launches: int = 10**7) -> np.ndarray:
    """Task counts per user from the H-DRF descent (see the module docstring)."""
    g = tree(instance)
    users = {u: i for i, u in enumerate(instance.users)}
    R, D = instance.capacity, instance.demand
    bounds = instance.bounds()
    # every node's subtree usage, and the path from the root to every leaf
    usage = {node: np.zeros(instance.m) for node in g}
    paths = {u: nx.shortest_path(g, ROOT, u) for u in users}
    children = {node: list(g.successors(node)) for node in g}
    used = np.zeros(instance.m)
    tasks = np.zeros(instance.n)
    blocked: set[str] = set()

    def is_blocked(node: str) -> bool:
        if node in blocked:
            return True
        kids = children[node]
        if kids and all(is_blocked(c) for c in kids):
            blocked.add(node)
            return True
        return False

    safe_R = np.where(R > 0, R, np.inf)

    def share(node: str) -> float:
        # the same arithmetic as Algorithm 1 (U / (R w)): exact ties must compare equal in both
        return float(np.max(usage[node] / (safe_R * g.nodes[node]["weight"])))

    for _ in range(max_launches):
        node = ROOT
        while children[node]:
            open_kids = [c for c in children[node] if not is_blocked(c)]
            if not open_kids:
                break
            node = min(open_kids, key=share)                 # min() keeps the first of equals
        if node == ROOT or children[node]:
            break                                            # everything is blocked
        i = users[node]
        if tasks[i] >= bounds[i] or np.any(used + D[i] > R * (1 + 1e-12)):
            blocked.add(node)
            continue
        tasks[i] += 1
        used += D[i]
        for v in paths[node]:
            usage[v] = usage[v] + D[i]
    return tasks


# -- the two variants that starve (formulations.md section 7) -------------------------------------------

def _leaves(g: nx.DiGraph, node: str) -> list[str]:
    return [v for v in nx.dfs_preorder_nodes(g, node) if g.out_degree(v) == 0 and v != ROOT]


def naive_hierarchical_drf(instance: Instance) -> np.ndarray:
    """Naive hierarchical DRF (continuous): at every internal node, weighted DRF among its children,
    each child acting as one user whose task is the *sum* of its leaves' tasks; a child's bundle is
    then split among its own children the same way.  A group whose aggregate task needs a saturated
    resource stops growing, even when some of its leaves do not need that resource: they starve.
    """
    from .filling import progressive_filling
    g = tree(instance)
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
        usable = ~np.any((aggregate > 0) & (capacity <= 0), axis=1)     # a child needing an empty resource gets 0
        x = np.zeros(len(kids))
        if usable.any():
            x[usable] = progressive_filling(aggregate[usable], capacity, share[usable].max(axis=1) / weights[usable]).tasks
        for k, units in zip(kids, x):
            split(k, units * aggregate[kids.index(k)])

    split(ROOT, instance.capacity.astype(float))
    return tasks


def collapsed_weights(instance: Instance) -> np.ndarray:
    """Leaf weights of the collapsed tree: the product, along the path from the root, of each node's
    weight over its siblings' total weight."""
    g = tree(instance)
    out = np.ones(instance.n)
    for i, u in enumerate(instance.users):
        path = nx.shortest_path(g, ROOT, u)
        for parent, child in zip(path, path[1:]):
            siblings = sum(g.nodes[c]["weight"] for c in g.successors(parent))
            out[i] *= g.nodes[child]["weight"] / siblings
    return out
