"""H-DRF: hierarchical Dominant Resource Fairness.

Bhattacharya, Culler, Friedman, Ghodsi, Shenker, Stoica, "Hierarchical scheduling for diverse
datacenter workloads", ACM SoCC 2013; docs/formulations.md section 7.  Users are leaves of a tree of
weighted groups (``groups:`` in a case, ``group:`` on a user); every internal node's non-blocked
children receive equal dominant share per unit of weight of what the node receives.  The
allocation is computed by the discrete H-DRF descent of :mod:`fairalloc.engines.hierarchy` (whole tasks:
from the root, always into the child with the lowest weighted dominant share, skipping blocked
subtrees), which runs the one discrete DRF / H-DRF engine, :mod:`fairalloc.engines.discrete`.  On a
flat instance it is discrete DRF (Algorithm 1, skipping users whose task no longer fits).

The two tests of the Volcano scheduler's DRF plug-in are cases (``hdrf-volcano-1``, ``-2``):

>>> import fairalloc
>>> case = fairalloc.load_case("hdrf-volcano-1")
>>> fairalloc.solve(case, "hdrf").tasks.tolist()
[5.0, 5.0, 5.0]
"""

from __future__ import annotations

from fairalloc.core import limits
from fairalloc.core.allocation import Allocation
from fairalloc.core.errors import CaseError, excerpt
from fairalloc.core.registry import Mechanism, register
from fairalloc.engines.hierarchy import hdrf_schedule
from fairalloc.engines.offers import OwnerOrder, Scheduler


@register("hdrf")
class HDRF(Mechanism):
    summary = "H-DRF (hierarchical DRF, SoCC 2013): discrete descent over a tree of weighted groups"
    about = (
        "A group that still has work gets its weighted share of its parent's; it launches whole tasks, so "
        "properties hold only up to one task."
    )
    section = "7"

    def fast(self, instance):
        return Allocation(instance, hdrf_schedule(instance), self.name, "fast", "H-DRF descent (whole tasks)")

    def offers(self) -> HDRFOffers:
        """H-DRF's task-offer face: the descent on the simulator's offers, over the owners' tree."""
        return HDRFOffers()


@register("hdrf-naive")
class NaiveHierarchicalDRF(Mechanism):
    summary = "naive hierarchical DRF: DRF among each node's children on their summed tasks (starves leaves)"
    about = (
        "DRF on a flat instance; in a tree a group stops at a resource only some of its users need, and the "
        "others starve."
    )
    section = "7"

    def fast(self, instance):
        from fairalloc.engines.hierarchy import naive_hierarchical_drf

        return Allocation(instance, naive_hierarchical_drf(instance), self.name, "fast", "numpy, level by level")


@register("hdrf-collapsed")
class CollapsedHierarchicalDRF(Mechanism):
    summary = "the tree collapsed into leaf weights, then weighted DRF (ignores the groups' own shares)"
    about = (
        "DRF on a flat instance; in a tree a group can end below its entitlement (1/3 instead of 1/2 on "
        "hdrf-volcano-1)."
    )
    section = "7"

    def fast(self, instance):
        from fairalloc.core.registry import get
        from fairalloc.engines.hierarchy import collapsed_weights

        drf = get("drf").allocate(instance.flat_with_weights(collapsed_weights(instance)))
        return Allocation(instance, drf.tasks.copy(), self.name, "fast", "weighted DRF on collapsed weights")


def owner_tree(owners, weights: dict | None = None):
    """The hierarchy a workload declares in its owner names: a networkx tree from
    :func:`fairalloc.engines.hierarchy.tree_from`.

    An owner ``eng/web/alice`` is the leaf ``alice`` of group ``web`` inside group ``eng`` (the
    '/'-separated paths of Mesos' hierarchical roles); node names are the full paths (``eng``,
    ``eng/web``, ``eng/web/alice``), an owner without '/' hangs from the root, and ``weights``
    (the workload's ``group_weights``, as for ``mfs``) maps any node's path to its weight among its
    siblings (default 1). Children are listed in order of first appearance in ``owners``. An owner
    cannot also be a group (``eng`` owning jobs next to ``eng/web``), nor have an empty path part.

    >>> g = owner_tree(["eng/alice", "ops", "eng/bob"], {"eng": 2})
    >>> list(g.successors("__root__")), list(g.successors("eng")), g.nodes["eng"]["weight"]
    (['eng', 'ops'], ['eng/alice', 'eng/bob'], 2.0)
    """
    from fairalloc.engines.hierarchy import tree_from

    owners = list(owners)
    parent: dict[str, str | None] = {}
    for owner in owners:
        parts = owner.split("/")
        if len(parts) > limits.MAX_OWNER_DEPTH:
            raise CaseError(
                f"owner {excerpt(owner)}: {len(parts)} levels of groups, more than the "
                f"{limits.MAX_OWNER_DEPTH:,} of a hierarchy fairalloc schedules"
            )
        if not all(parts):
            raise CaseError(
                f"owner {excerpt(owner)}: empty group name in the path (hierarchical owners look like 'group/user')"
            )
        for k in range(len(parts)):
            parent.setdefault("/".join(parts[: k + 1]), "/".join(parts[:k]) or None)
    groups = set(parent.values())
    both = [o for o in owners if o in groups]
    if both:
        child = next(n for n, p in parent.items() if p == both[0])
        raise CaseError(
            f"owner {excerpt(both[0])}: owns jobs and is also the group of {excerpt(child)} (an owner must be a leaf)"
        )
    return tree_from(list(parent), parent, weights or {})


class HDRFOffers(OwnerOrder):
    """H-DRF (Bhattacharya et al., SoCC 2013) over the owners' tree (:func:`owner_tree`).

    The descent of :func:`fairalloc.engines.hierarchy.hdrf_schedule` on offers, made by
    :class:`~fairalloc.engines.discrete.DiscreteEngine`: from the root, into the child with the
    lowest weighted dominant share (of everything its subtree runs now of every resource, over the
    whole cluster), skipping blocked children (no runnable task below, or no next task below that
    fits the node), down to an owner, whose next job is served as under ``drf``. A decision costs
    heap operations along the path (a flat tree is exactly ``drf``'s: same keys, same ties).
    """

    name = "hdrf"
    reads_tallies = False

    def bind(self, state):
        from fairalloc.engines.hierarchy import ROOT

        Scheduler.bind(self, state)
        g = owner_tree(state.owners, state.workload.group_weights)
        n = len(state.owners)
        # engine node ids: owners 0..n-1 (their index u), then the groups, then the root
        ids = {o: u for u, o in enumerate(state.owners)}
        groups = [name for name in g if name not in ids and name != ROOT and g.out_degree(name)]
        ids.update({name: n + k for k, name in enumerate(groups)})
        ids[ROOT] = n + len(groups)
        parent = [None] * (n + len(groups))
        order = []  # siblings in order of first appearance: the tie-break
        for name in [ROOT, *groups]:
            for child in g.successors(name):
                order.append(ids[child])
                if name != ROOT:
                    parent[ids[child]] = ids[name]
        self._build(
            parent=parent,
            group_weights=[g.nodes[name]["weight"] for name in groups],
            order=order,
            weights=[g.nodes[o]["weight"] for o in state.owners],
        )

    def key(self, u):
        return self.state.dominant_share(u) / self.weight[u]
