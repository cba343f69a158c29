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

from fairalloc.core.allocation import Allocation
from fairalloc.core.registry import Mechanism, register
from fairalloc.engines.hierarchy import hdrf_schedule


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
