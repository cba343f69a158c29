"""Slot schedulers on offers (``slots:K``, ``capacity:K``, and ``:oc`` after either).

``slots:K``: ``K`` slots per node, a task takes one slot whatever its demand; owners in deficit order
as the Hadoop Fair Scheduler with equal weights (fewest running tasks first): the slot baseline of the
DRF paper's section 7.2 (Ghodsi et al., NSDI 2011, Figures 10 to 12). ``capacity:K``: the Capacity
Scheduler over ``K`` slots per node: queues (= owners) with capacity fractions (the workload's
``queues``, equal by default), the queue with the lowest ``running slots / capacity fraction`` first
(an idle queue's capacity is lent out), FIFO inside the queue: the MFS paper's Capacity Scheduler
baseline. ``:oc``: the scheduler checks slots only, and nodes may be over-committed (see
:mod:`fairalloc.scheduling.simulator`). Schedulers of task offers only (kind ``online``).
"""

from __future__ import annotations

from fairalloc.core.errors import CaseError, UnknownNameError
from fairalloc.core.registry import register
from fairalloc.engines.offers import OnlineMechanism, OwnerOrder


class Slots(OwnerOrder):
    def __init__(self, k: int, overcommit: bool = False):
        self.slots = k
        self.check_cpu = self.check_mem = not overcommit
        self.name = f"slots:{k}" + (":oc" if overcommit else "")

    def key(self, u):
        return self.state.running[u]


class Capacity(OwnerOrder):
    def __init__(self, k: int, overcommit: bool = False):
        self.slots = k
        self.check_cpu = self.check_mem = not overcommit
        self.name = f"capacity:{k}" + (":oc" if overcommit else "")

    def bind(self, state):
        super().bind(state)
        queues = state.workload.queues
        if queues:
            missing = [o for o in state.owners if o not in queues]
            if missing:
                raise CaseError(f"queues.{missing[0]}: owner has no queue capacity (queues: {', '.join(queues)})")
            total = sum(queues[o] for o in state.owners)
            self.capacity = [queues[o] / total for o in state.owners]
        else:
            self.capacity = [1.0 / len(state.owners)] * len(state.owners)

    def key(self, u):
        return self.state.running[u] / self.capacity[u]


def slot_parameters(name: str, text: str) -> tuple[int, bool]:
    """``(K, overcommit)`` from what follows ``name:`` (``K`` or ``K:oc``, K a positive integer)."""
    parts = text.strip().lower().split(":")
    if len(parts) not in (1, 2) or parts[1:] not in ([], ["oc"]):
        raise UnknownNameError(f"mechanism: write {name}:K or {name}:K:oc, e.g. {name}:3 (got '{name}:{text}')")
    try:
        k = int(parts[0])
    except ValueError:
        k = 0
    if k < 1:
        raise UnknownNameError(f"mechanism: {name}:{text}: K (slots per node) must be a positive integer")
    return k, len(parts) == 2


class _SlotFamily(OnlineMechanism):
    """A family of slot schedulers named ``<name>:K[:oc]``."""

    parameters = "K[:oc]"
    #: the scheduler class of the family's members
    scheduler: type[Slots] | type[Capacity]

    def __init__(self, slots: int = 0, overcommit: bool = False):
        self.slots, self.overcommit = slots, overcommit

    def with_parameters(self, text):
        k, overcommit = slot_parameters(self.name, text)
        member = type(self)(k, overcommit)
        member.name = f"{self.name}:{k}" + (":oc" if overcommit else "")
        member.parameters = ""
        return member

    def offers(self):
        return self.scheduler(self.slots, overcommit=self.overcommit)


@register("slots")
class SlotsMechanism(_SlotFamily):
    summary = "K slots per node, fewest running tasks first (Hadoop Fair Scheduler, the DRF paper's 7.2 baseline)"
    about = "Counts tasks, not resources: a large task costs one slot like a small one."
    section = "8"
    scheduler = Slots


@register("capacity")
class CapacityMechanism(_SlotFamily):
    summary = "Capacity Scheduler over K slots per node: the queue lowest below its capacity fraction first"
    about = "Queues are the owners, with the workload's capacity fractions; an idle queue's slots are lent out."
    section = "7.5"
    scheduler = Capacity


__all__ = ["Slots", "Capacity", "SlotsMechanism", "CapacityMechanism", "slot_parameters"]
