"""Fluid H-DRF: the continuous (divisible) counterpart of ``hdrf``, with queue bounds at every node.

Bhattacharya, Culler, Friedman, Ghodsi, Shenker, Stoica, "Hierarchical scheduling for diverse
datacenter workloads", ACM SoCC 2013, sections 3 and 4 (static H-DRF); docs/formulations.md
section 7.  Leaves grow continuously in the direction of their demand so that at every internal
node the non-blocked children keep equal weighted dominant shares ``max_j A_cj / R_j / w_c``
(``A_c``: what the child's whole subtree holds, as a share of the whole cluster).  In a queue case
every node's ``limit`` stops it and its ``guarantee`` is a floor (the largest allocation of its own
growth within the guarantee); leaves stop at ``max_tasks``.  Computed by the exact event-driven
algorithm of :mod:`fairalloc.engines.fluid_hierarchy`.  On a flat instance it is ``drf`` (with the
same bounds; section 3: at the root alone H-DRF is DRF), so a flat instance is filled by ``drf``'s
progressive filling, O(n log n), instead of the event-driven merge of every queue's curve; an
instance ``drf`` refuses goes to the fluid algorithm, which refuses it in its own words.  Where
``hdrf``'s whole tasks land on the fluid allocation, the two agree.

>>> import fairalloc
>>> case = fairalloc.load_case("hdrf-starvation-naive")
>>> fairalloc.solve(case, "hdrf-fluid").tasks.tolist()
[5.0, 5.0, 10.0]
"""

from __future__ import annotations

from fairalloc.core.allocation import Allocation
from fairalloc.core.errors import CaseError
from fairalloc.core.queues import queues_of
from fairalloc.core.registry import Mechanism, get, register
from fairalloc.engines.fluid_hierarchy import fluid_hdrf


@register("hdrf-fluid")
class FluidHDRF(Mechanism):
    summary = "fluid H-DRF (hierarchical DRF, SoCC 2013): continuous, with guarantees and limits at every node"
    about = (
        "Siblings keep equal weighted dominant shares of their subtrees; equals hdrf on the four hierarchy "
        "cases, drf on a flat instance."
    )
    section = "9.1"

    def fast(self, instance):
        if not queues_of(instance).groups:
            try:
                flat = get("drf").allocate(instance, "fast")
            except CaseError:  # refused: the fluid algorithm says why, in H-DRF's terms
                pass
            else:
                solver = "drf's progressive filling (flat: H-DRF is DRF)"
                return Allocation(instance, flat.tasks, self.name, "fast", solver, info={"flat": True})
        result = fluid_hdrf(instance)
        return Allocation(
            instance,
            result.tasks,
            self.name,
            "fast",
            "event-driven fluid H-DRF (numpy)",
            info={"events": len(result.saturated)},
        )


__all__ = ["FluidHDRF"]
