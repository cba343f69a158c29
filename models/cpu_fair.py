"""CPU-only fair sharing on offers (``cpu-fair``, ``cpu-fair:oc``): max-min fairness on CPU alone.

The baseline of the DRF paper's section 7.2 (Ghodsi et al., "Dominant Resource Fairness", NSDI 2011,
Figures 10 to 12: "CPU-only max-min fairness"): a node offered to the owner holding the least CPU
whose next task fits it; ``cpu-fair:oc`` checks CPU only (memory may be over-committed, and an
over-committed node runs the task slower; :mod:`fairalloc.scheduling.simulator`). A scheduler of task
offers only (kind ``online``): ``fairalloc simulate WORKLOAD --scheduler cpu-fair``.
"""

from __future__ import annotations

from fairalloc.core.errors import UnknownNameError
from fairalloc.core.registry import register
from fairalloc.engines.offers import OnlineMechanism, OwnerOrder


class CPUFair(OwnerOrder):
    name = "cpu-fair"
    reads_tallies = False

    def __init__(self, overcommit: bool = False):
        self.check_mem = not overcommit
        self.name = "cpu-fair:oc" if overcommit else "cpu-fair"

    def key(self, u):
        return self.state.cpu[u]


@register("cpu-fair")
class CPUFairMechanism(OnlineMechanism):
    summary = "CPU-only max-min fairness on task offers (the DRF paper's 7.2 baseline); cpu-fair:oc over-commits memory"
    about = "Ignores memory when it compares owners, so an owner of memory-heavy tasks takes more than her share of it."
    section = "8"

    def __init__(self, overcommit: bool = False):
        self.overcommit = overcommit

    def with_parameters(self, text):
        if text.strip().lower() != "oc":
            raise UnknownNameError(
                f"mechanism: cpu-fair takes only ':oc' (memory over-committed; got 'cpu-fair:{text}')"
            )
        member = type(self)(overcommit=True)
        member.name = f"{self.name}:oc"
        return member

    def offers(self):
        return CPUFair(overcommit=self.overcommit)


__all__ = ["CPUFair", "CPUFairMechanism"]
