"""The base class of production fair-share policies: an entitlement per queue per resource.

A cluster scheduler's fair-share policy (Volcano ``proportion``, Kueue fair sharing, YARN's
FairScheduler, Mesos' DRF sorter, YuniKorn's fair queue sort) decides, for queues with
guarantees, limits, weights and priorities (:mod:`fairalloc.core.queues`), how much of each
resource a queue is entitled to.  Its answer is a general bundle per queue, not necessarily a
multiple of the queue's request: :meth:`QueuePolicy.entitlement` returns it, and the fast path
wraps it with :meth:`~fairalloc.core.allocation.Allocation.from_bundles`, whose ``tasks`` are the
fraction of its request each queue receives (the Leontief value the property checkers use).

Schedulers that only *order* queues by their current usage also say that order
(:meth:`QueuePolicy.order`) and the share value they sort on (:meth:`QueuePolicy.shares`).

Belongs here: what every policy shares.  Imports: ``fairalloc.core`` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairalloc.core.allocation import Allocation
from fairalloc.core.errors import FairallocError
from fairalloc.core.instance import Instance
from fairalloc.core.registry import Mechanism


class QueuePolicy(Mechanism):
    """A production policy: :meth:`entitlement` gives each queue's bundle."""

    takes_inactive = True  # YARN's steady share counts inactive queues
    #: what computes the entitlement, as output shows it
    solver = "numpy"

    def entitlement(self, instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
        """``(bundles (n, m), info)``: each queue's entitlement per resource."""
        raise NotImplementedError

    def fast(self, instance: Instance) -> Allocation:
        bundles, info = self.entitlement(instance)
        return Allocation.from_bundles(instance, bundles, self.name, "fast", self.solver, info, entitlement=True)

    def order(self, instance: Instance) -> list[str]:
        """Leaf queues in the order the scheduler serves them for their ``usage``."""
        raise FairallocError(f"mechanism: {self.name} does not order queues by usage")

    def shares(self, instance: Instance) -> dict[str, float]:
        """The share value the scheduler sorts on, per leaf queue, for their ``usage``."""
        raise FairallocError(f"mechanism: {self.name} has no share of usage")

    @property
    def has_order(self) -> bool:
        return type(self).order is not QueuePolicy.order

    @property
    def has_shares(self) -> bool:
        return type(self).shares is not QueuePolicy.shares


__all__ = ["QueuePolicy"]
