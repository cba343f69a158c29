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

import heapq

import networkx as nx
import numpy as np

from fairalloc.core.errors import CaseError, FairallocError, SolverError
from fairalloc.core.instance import Instance
from fairalloc.core.limits import MAX_HDRF_DECISIONS, MAX_HDRF_LAUNCHES
from fairalloc.core.tolerances import FIT

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


#: leaf runs launched in one go by :func:`hdrf_schedule` grow geometrically up to this many rows
HDRF_CHUNK = 1 << 17
#: ... and to about this many floats per run (deep trees, many resources)
_CHUNK_CELLS = 1 << 20
#: a run is launched in chunks (the first of at least ``_RUN_START`` rows) when it is expected to
#: last ``_RUN_START`` launches, or when the leaf was chosen ``_RUN_AFTER`` times in a row
_RUN_AFTER, _RUN_START = 8, 16


def hdrf_schedule(instance: Instance, max_launches: int | None = None, *, batch: bool = True) -> np.ndarray:
    """Task counts per user from the H-DRF descent (see the module docstring).

    ``max_launches``: ``None`` (default, or ``inf``) runs until every leaf is blocked.  A cap counts
    launches; when it is reached while a further task could still be launched, :class:`SolverError`
    is raised (a truncated schedule is never returned as if it were complete).

    Every group keeps its children in a heap keyed ``(share, position)``, so a decision costs heap
    operations along the path, not a scan of every sibling.

    ``batch=True`` launches the runs of identical decisions in one go (the same floats as one by
    one, see :func:`_leaf_run`); ``batch=False`` makes every decision with a descent from the root
    (the reference: both give the same task counts, bit for bit).

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
        raise CaseError(f"users.{u}.demand: all zero; a user must demand some resource (or have max_tasks): "
                        f"H-DRF would launch her tasks without end")
    cap = None if max_launches is None or max_launches == np.inf else int(max_launches)
    if cap is not None and cap < 0:
        raise CaseError(f"max_launches: must be >= 0 (got {max_launches})")
    need, who, what = launches_lower_bound(instance)
    if need > MAX_HDRF_LAUNCHES and (cap is None or cap > MAX_HDRF_LAUNCHES):
        raise FairallocError(_too_many_launches(instance, f"needs at least {need:.3g}", who, what))
    g = occupied_tree(instance)
    nodes = list(g)                                   # the root first, children in their order
    ids = {v: k for k, v in enumerate(nodes)}
    kids = [[ids[c] for c in g.successors(v)] for v in nodes]
    parent = [-1] * len(nodes)
    for k, ch in enumerate(kids):
        for c in ch:
            parent[c] = k
    user = [-1] * len(nodes)
    for i, u in enumerate(instance.users):
        user[ids[u]] = i
    safe_R = np.where(R > 0, R, np.inf)
    # the same arithmetic as Algorithm 1 (U / (R w)): exact ties must compare equal in both
    denom = [safe_R * g.nodes[v]["weight"] for v in nodes]
    usage = [np.zeros(instance.m) for _ in nodes]    # every node's subtree usage
    share = [float(np.max(usage[k] / denom[k])) for k in range(len(nodes))]
    open_kids = [len(ch) for ch in kids]
    blocked = [False] * len(nodes)
    Rtol = R * (1 + FIT)
    tasks = np.zeros(instance.n)
    idle = (~np.any(D != 0, axis=1)).tolist()
    paths: dict[int, list[int]] = {}
    steps: dict[int, list[float]] = {}

    def path_to(leaf: int) -> list[int]:
        if leaf not in paths:
            p, v = [], leaf
            while v >= 0:
                p.append(v)
                v = parent[v]
            paths[leaf] = p[::-1]
            # at most how much one of her tasks raises the share of each node below the root
            steps[leaf] = [float(np.max(D[user[leaf]] / denom[v])) for v in paths[leaf][1:]]
        return paths[leaf]

    def block(v: int) -> None:
        # a group is blocked when all its children are (nothing ever unblocks)
        blocked[v] = True
        p = parent[v]
        while p >= 0:
            open_kids[p] -= 1
            if open_kids[p]:
                break
            blocked[p] = True
            p = parent[p]

    # every group's children in a heap of (share, rank among siblings, child, version): its valid top
    # is min() over the open children by share, ties to the first listed; entries of blocked children
    # and of updated ones (an older version) are dropped when they surface
    rank = [0] * len(nodes)
    for ch in kids:
        for k, c in enumerate(ch):
            rank[c] = k
    version = [0] * len(nodes)
    heaps = [[(share[c], rank[c], c, 0) for c in ch] for ch in kids]
    for h in heaps:
        heapq.heapify(h)

    def top(h: list) -> tuple:
        for _ in range(len(h)):                       # stale entries are dropped: at most all of them
            entry = h[0]
            if entry[3] == version[entry[2]] and not blocked[entry[2]]:
                return entry
            heapq.heappop(h)
        raise SolverError("hdrf: a group that is not blocked has no open child (internal error)")

    def updated(v: int) -> None:
        version[v] += 1
        p = parent[v]
        h = heaps[p]
        heapq.heappush(h, (share[v], rank[v], v, version[v]))
        if len(h) > 2 * len(kids[p]) + 64:            # too many stale entries: rebuild
            h[:] = [(share[c], rank[c], c, version[c]) for c in kids[p] if not blocked[c]]
            heapq.heapify(h)

    def runner_up(v: int) -> tuple[float, float]:
        """``(before, after)`` for the chosen child of ``v`` (the valid top of its heap): the smallest
        share of the open siblings listed before it, and after it -- as far as the decision goes: it
        stays chosen while its share stays below the runner-up's, or equal to it if the runner-up is
        listed after it."""
        if open_kids[v] < 2:
            return np.inf, np.inf
        h = heaps[v]
        first = heapq.heappop(h)
        second = top(h)
        heapq.heappush(h, first)
        return (second[0], second[0]) if second[1] < first[1] else (np.inf, second[0])

    launches = decisions = free = 0                   # free: tasks of users demanding nothing (one batch)
    last, streak, size = -1, 0, _RUN_START            # the current run's leaf, launches, next chunk
    while not blocked[0]:
        node = 0
        while kids[node]:
            node = top(heaps[node])[2]
        i = user[node]
        d = D[i]
        if tasks[i] + 1 > bounds[i] or np.any(usage[0] + d > Rtol):   # whole tasks within max_tasks
            block(node)
            continue
        if launches - free >= MAX_HDRF_LAUNCHES and (cap is None or cap > MAX_HDRF_LAUNCHES):
            raise FairallocError(_too_many_launches(instance, f"needs more than {MAX_HDRF_LAUNCHES:,}",
                                                    int(np.argmax(tasks)), None))
        decisions += 1
        if decisions > MAX_HDRF_DECISIONS and (cap is None or cap > launches):
            raise FairallocError(_too_many_launches(instance, f"needs more than {MAX_HDRF_DECISIONS:,} scheduling "
                                                    f"decisions for its", int(np.argmax(tasks)), None,
                                                    "MAX_HDRF_DECISIONS", MAX_HDRF_DECISIONS))
        if cap is not None and launches >= cap:
            raise SolverError(f"hdrf: max_launches={cap} reached after {launches} launches while more tasks "
                              f"could still be launched (user {instance.users[i]}); pass max_launches=None "
                              f"for no cap")
        path = path_to(node)
        limits = None
        if not batch:
            room = 1
        elif idle[i]:                                 # no demand (so a bound): nothing ever changes
            room = int(np.floor(bounds[i] - tasks[i]))
        elif node != last:                            # a new run: its first launch is a single step
            last, streak, size = node, 0, _RUN_START
            room = 1
        else:
            limits = [runner_up(v) for v in path[:-1]]
            # a share grows by at most its step per launch: about this many more launches keep the
            # leaf chosen (a guess; _leaf_run checks every one); short runs go one step at a time
            expect = min([(min(lim) - share[v]) / step if step > 0 else np.inf
                          for lim, v, step in zip(limits, path[1:], steps[node])])
            if expect >= _RUN_START or streak >= _RUN_AFTER:
                room = int(min(max(size, expect + 2), HDRF_CHUNK,
                               max(256, _CHUNK_CELLS // (len(path) * instance.m))))
                size = min(2 * size, HDRF_CHUNK)
            else:
                room = 1
        if cap is not None:
            room = min(room, cap - launches)
        if room <= 1:
            usage[0] = usage[0] + d
            for v in path[1:]:
                usage[v] = usage[v] + d
                share[v] = float(np.max(usage[v] / denom[v]))
            done = 1
        else:
            done = _leaf_run(path, d, usage, share, denom, limits, Rtol, bounds[i] - tasks[i], room)
        for v in path[1:]:
            updated(v)
        tasks[i] += done
        launches += done
        free += done if idle[i] else 0
        streak += done
    return tasks


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
        per_user = np.where(D.any(axis=1), np.minimum(bound, by_resource), 0.0)   # no demand: one batch
    i = int(np.argmax(per_user))
    return float(per_user[i]), i, (None if bound[i] <= by_resource[i] else int(j[i]))


def _too_many_launches(instance: Instance, amount: str, i: int, j: int | None,
                       limit: str = "MAX_HDRF_LAUNCHES", value: int = MAX_HDRF_LAUNCHES) -> str:
    user = instance.users[i]
    if j is None:
        d = instance.demand[i]
        k = int(np.argmax(np.where(instance.capacity > 0, d / np.where(instance.capacity > 0, instance.capacity, 1), 0)))
        why = f"user {user}'s task takes {d[k] / instance.capacity[k]:.3g} of {instance.resources[k]}" \
            if instance.capacity[k] > 0 and d[k] > 0 else f"user {user} may run {instance.bounds()[i]:.3g} tasks"
    else:
        why = f"user {user}'s task takes {instance.demand[i, j] / instance.capacity[j]:.3g} of {instance.resources[j]}"
    what = "launches" if limit == "MAX_HDRF_LAUNCHES" else "decisions"
    return (f"hdrf: this instance {amount} task launches ({why}); H-DRF launches whole tasks and stops at "
            f"{value:,} {what} (the launch limit, fairalloc.core.limits.{limit}); for the divisible "
            f"allocation use drf")


def _leaf_run(path, d, usage, share, denom, limits, Rtol, left, room) -> int:
    """Launch up to ``room`` tasks of the leaf at the end of ``path`` in one go; the first is decided.

    The descent chose the leaf ``path[-1]`` (``path[0]`` is the root) and her task fits.  The next
    decision chooses her again iff at every level ``l >= 1`` the node ``path[l]``'s new share stays
    strictly below ``limits[l-1][0]`` (the smallest share of its open siblings listed before it) and
    at most ``limits[l-1][1]`` (those listed after it: min() keeps the first of equals), and launches
    her task iff it still fits and she is below her bound.  Nothing else changes meanwhile: the
    siblings' usages and blocked states do not.  The usages after 1, 2, ... further launches are a
    sequential ``np.cumsum`` of rows ``[U_v, d, d, ...]`` (the very floats of ``U_v + d`` one at a
    time; ``np.sum`` would add pairwise) and the shares the same division and maximum as one step,
    so the first launch whose decision could differ is found exactly; the ones before it are
    applied.  Returns the number of launches (>= 1).
    """
    if left < room:                                   # her bound: launch t needs t <= left
        room = max(1, int(np.floor(left)))
    if room == 1 or not np.any(d):                    # (no demand: nothing changes, all the same)
        for v in path:
            usage[v] = usage[v] + d
            share[v] = float(np.max(usage[v] / denom[v]))
        return room
    L, m = len(path), d.size
    A = np.empty((L, m, room + 1))                    # launches along the last (contiguous) axis
    for k, v in enumerate(path):
        A[k, :, 0] = usage[v]
    A[:, :, 1:] = d[None, :, None]
    cum = np.cumsum(A, axis=2)                        # cum[k, :, t]: usage of path[k] after t launches
    den = np.stack([denom[v] for v in path[1:]])
    S = np.max(cum[1:] / den[:, :, None], axis=1)    # S[k - 1, t]: share of path[k] after t launches
    before = np.array([b for b, _ in limits])[:, None]
    after = np.array([a for _, a in limits])[:, None]
    # decision t + 1 (t = 1 .. room - 1) chooses this leaf again and launches her task
    ok = np.all((S[:, 1:room] < before) & (S[:, 1:room] <= after), axis=0)
    ok &= ~np.any(cum[0, :, 2:room + 1] > Rtol[:, None], axis=0)
    bad = np.flatnonzero(~ok)
    done = int(bad[0]) + 1 if bad.size else room
    for k, v in enumerate(path):
        usage[v] = cum[k, :, done].copy()
        if k:
            share[v] = float(S[k - 1, done])
    return done


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
    g = occupied_tree(instance)                       # an empty group takes no part (and gets nothing)
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
    weight over its siblings' total weight (empty groups are no siblings: they are left out)."""
    g = occupied_tree(instance)
    out = np.ones(instance.n)
    for i, u in enumerate(instance.users):
        path = nx.shortest_path(g, ROOT, u)
        for parent, child in zip(path, path[1:]):
            siblings = sum(g.nodes[c]["weight"] for c in g.successors(parent))
            out[i] *= g.nodes[child]["weight"] / siblings
    return out
