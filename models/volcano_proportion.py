"""Volcano's ``proportion`` plug-in: each queue's ``deserved`` resources, per resource, in rounds.

Source read: volcano-sh/volcano (Apache-2.0) at commit ed72c7c815a9fd547a787134676f73d42e9d049c
(2026-08-20):

* ``pkg/scheduler/plugins/proportion/proportion.go``, ``proportionPlugin.OnSessionOpen``: the
  queues taking part are those with a job in the session (here: a queue with a ``request``);
  ``totalGuarantee`` sums the ``guarantee`` of *every* queue, active or not; each queue's
  ``realCapability = ExceededPart(total, totalGuarantee) + guarantee``, then
  ``MinDimensionResource(capability, Infinity)``; a ``capability`` of 0 (or less) for cpu or
  memory is read as unlimited (``math.MaxFloat64``).  Then the rounds (the ``for`` loop over
  ``remaining``) described below.
* ``pkg/scheduler/api/resource_info.go``: ``Resource`` (cpu in millicores, memory in bytes,
  other ("scalar") resources in milli-units, a map whose missing keys mean 0 or infinity
  depending on the operation), ``LessEqual`` (``l < r or |l - r| < minResource = 0.1``),
  ``MinDimensionResource``, ``Diff``, ``ExceededPart``, ``IsEmpty`` (every resource but ``pods``
  below 0.1); ``pkg/scheduler/api/helpers/helpers.go``, ``Max``.

**The rounds.**  ``deserved_i = 0``, ``remaining = R`` (the cluster's capacity).  In each round,
with ``W`` the weight of the queues not yet *met*, every such queue ``i`` (all from the same
``remaining``, so their order does not matter) takes::

    deserved_i <- max( min( deserved_i + remaining * w_i / W,  realCap_i,  request_i ),  guarantee_i )
    realCap_i   = min( max(R - sum_k guarantee_k, 0) + guarantee_i,  capability_i )

per resource, and is *met* when ``request_i <= deserved_i + 0.1`` in every resource, or (from the
second round on) when its ``deserved`` did not change at all.  Then
``remaining <- max(remaining - sum_i increase_i, 0)`` per resource, and the rounds stop when no
queue is left (``W = 0``), when every resource of ``remaining`` is below 0.1, or when
``remaining`` did not change.  Without guarantees this converges to the weighted water-filling of
each resource separately, capped by ``min(request, capability)``: ``deserved_ij = min(w_i
lambda_j, request_ij, capability_ij)`` with ``lambda_j`` filling ``R_j``, up to Volcano's 0.1
tolerances.  A queue without a request (no job in the session) deserves nothing.

**How it differs from DRF.**  DRF equalises one number per queue (the dominant share) and gives
a queue its request in proportion; proportion splits *each resource separately* by weight: a
queue asking mostly for memory gets its weighted share of cpu too (capped by its cpu request),
and its bundle is generally not a multiple of its request.  Volcano's queues are flat: the
``groups`` of a queue case are not read.

**What Volcano's arithmetic does that a fair share would not** (reproduced here, checked in
``tests/test_volcano_proportion.py``):

* the guarantee floor is applied *after* the weighted split, so the ``deserved`` of all queues can
  add up to more than the cluster (three queues of weight 1 on 10 cpus, one guaranteed 4: 4,
  10/3, 10/3) and a queue guaranteed more than it requests deserves its guarantee;
* a guarantee of an inactive queue still shrinks every other queue's ``realCapability``;
* for a resource other than cpu and memory, when the guarantees add up to the whole cluster,
  a queue without a guarantee on it has no ``realCapability`` key: neither it nor the queue's
  ``capability`` caps that resource (cpu and memory are capped at 0 instead).

**Units.**  Numbers are taken as Kubernetes writes them: ``cpu`` in cores (Volcano: x1000),
``memory`` (or ``mem``) in bytes, any other resource in units (Volcano: x1000).  The unit only
matters for Volcano's 0.1 tolerances.  Volcano's weights are ``int32``; any positive weight is
taken here.  Volcano sums the queues in Go map order (random), so its last bits can vary between
runs; here they are summed in case order.

Three queues of weight 2, 1 and 1 on 12 cpus and 12 GiB, ``c`` asking for only 1 cpu: round 1
gives 6, 3 and 1 cpus (and 6, 3, 3 GiB: all the memory); round 2 gives ``a`` and ``b`` 1 and 1/2
of the 2 cpus left (``c``, whose memory is not met, still counts for a quarter), round 3 the last
1/2, 2:1; in all 22/3, 11/3 and 1 cpus:

>>> import fairalloc
>>> G = 2**30
>>> inst = fairalloc.Instance.from_arrays([12, 12 * G], [[12, 12 * G], [12, 12 * G], [1, 12 * G]],
...                                       users=["a", "b", "c"], max_tasks=[1, 1, 1],
...                                       weights=[2, 1, 1], resources=["cpu", "memory"])
>>> a = fairalloc.solve(inst, "volcano-proportion")
>>> [round(float(x), 4) for x in a.bundles[:, 0]], (a.bundles[:, 1] / G).tolist(), a.info
([7.3333, 3.6667, 1.0], [6.0, 3.0, 3.0], {'rounds': 3})
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.errors import FairallocError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import active, queues_of, request, runs
from fairalloc.core.registry import register
from fairalloc.engines.online import OnlinePolicy
from fairalloc.engines.queue_policy import QueuePolicy

_Floats = NDArray[np.float64]

#: ``resource_info.go``: ``minResource``, the tolerance of ``LessEqual`` and ``IsEmpty``
MIN_RESOURCE = 0.1
#: the resources Volcano keeps in fields (the others are map entries, "scalar resources")
CPU_NAMES = ("cpu",)
MEMORY_NAMES = ("memory", "mem")
#: ``ignoredScalarResources``: not looked at by ``IsEmpty``
IGNORED = ("pods",)
#: a guard, not Volcano's: the rounds end when ``remaining`` stops shrinking, which can take
#: long (volcano-sh/volcano issue #2549: a scheduler stuck in this loop, before queues whose
#: deserved did not change were counted as met)
MAX_ROUNDS = 100_000


def volcano_units(resources: tuple[str, ...]) -> _Floats:
    """What one unit of each resource is in Volcano's ``Resource``: 1000 millicores, 1 byte,
    1000 milli-units (``NewResource`` reads ``MilliValue`` for cpu and scalar resources)."""
    return np.array([1.0 if r in MEMORY_NAMES else 1000.0 for r in resources])


@dataclass(frozen=True)
class ProportionInput:
    """One session of the plug-in, in Volcano's units; ``guarantee`` is NaN where not given and
    ``capability`` ``inf``; ``active`` marks the queues with a job (the others only count in
    ``totalGuarantee``)."""

    total: _Floats  # (m,)
    weight: _Floats  # (n,)
    request: _Floats  # (n, m)
    guarantee: _Floats  # (n, m)
    capability: _Floats  # (n, m)
    active: NDArray[np.bool_]  # (n,)
    scalar: NDArray[np.bool_]  # (m,): not cpu or memory
    ignored: NDArray[np.bool_]  # (m,): left out of IsEmpty


def exceeded_part(
    total: _Floats,
    present: NDArray[np.bool_],
    guarantee: _Floats,
    scalar: NDArray[np.bool_],
    owner: NDArray[np.intp] | None = None,
) -> tuple[_Floats, NDArray[np.bool_]]:
    """``ExceededPart(total, sum of guarantee).Add(guarantee_i)`` for each row ``i`` of
    ``guarantee`` (NaN: not given): ``(values, present)``, ``present`` False where Volcano's
    ``Resource`` has no such key (``total`` has keys where ``present``; cpu and memory always).
    With ``owner`` (each row's sibling set, numbered 0, 1, ... in runs) the rows are several sets,
    each summing its own guarantees, and ``total`` and ``present`` are given per row."""
    given = ~np.isnan(guarantee)
    g = np.where(given, guarantee, 0.0)
    if owner is None:
        total_guarantee = g.sum(axis=0)
    else:
        total_guarantee = np.add.reduceat(g, runs(owner), axis=0)[owner]
    # ExceededPart (Diff with Zero) keeps a resource only where the total exceeds the guarantees
    exceeded = present & (total > total_guarantee)
    values = np.where(exceeded, total - total_guarantee, 0.0) + g
    return values, ~scalar | exceeded | given


def real_capability(p: ProportionInput) -> _Floats:
    """``(n, m)``: ``realCapability``, ``inf`` where Volcano's ``Resource`` has no such key."""
    real, present = exceeded_part(p.total, np.ones(p.total.shape, dtype=bool), p.guarantee, p.scalar)
    # a cpu or memory capability of 0 or less is "unlimited"
    cap = np.where(~p.scalar & (p.capability <= 0), np.inf, p.capability)
    # a scalar key missing from realCapability caps nothing (MinDimensionResource with Infinity)
    return np.where(present, np.minimum(real, cap), np.inf)


def _met(req: _Floats, d: _Floats) -> NDArray[np.bool_]:
    """Per row: ``request.LessEqual(deserved, Zero)``."""
    return np.asarray(((req < d) | (np.abs(req - d) < MIN_RESOURCE)).all(axis=1), dtype=bool)


def proportion_rounds(p: ProportionInput, max_rounds: int = MAX_ROUNDS) -> tuple[_Floats, int]:
    """``(deserved (n, m), rounds)``: the loop of ``OnSessionOpen``, in Volcano's units.

    Every queue of a round reads the same ``remaining`` and total weight, so a round is computed
    for all of them at once; the increases are summed in queue order."""
    n, m = p.request.shape
    real = real_capability(p)
    floor = np.where(np.isnan(p.guarantee), 0.0, p.guarantee)
    deserved = np.zeros((n, m))
    met = ~p.active
    remaining = p.total.astype(float).copy()
    rounds = 0
    while True:
        total_weight = float(p.weight[~met].sum())
        if total_weight == 0:
            break
        if rounds == max_rounds:
            raise FairallocError(f"mechanism: volcano-proportion did not settle in {max_rounds} rounds")
        rounds += 1
        live = np.flatnonzero(~met)
        old = deserved[live]
        d = old + remaining * (p.weight[live] / total_weight)[:, None]
        d = np.maximum(np.minimum(np.minimum(d, real[live]), p.request[live]), floor[live])
        deserved[live] = d
        # in the first round the old deserved is an empty Resource, never DeepEqual to the new one
        # (which holds the cluster's scalar keys: every node reports ``pods``)
        unchanged = (d == old).all(axis=1) & (rounds > 1)
        met[live] = _met(p.request[live], d) | unchanged
        increased = np.where(d > old, d - old, 0.0).sum(axis=0)
        decreased = np.where(d > old, 0.0, old - d).sum(axis=0)
        old_remaining = remaining
        left = remaining + decreased
        remaining = np.where(left > increased, left - increased, 0.0)
        empty = bool(np.all((remaining < MIN_RESOURCE) | p.ignored))
        if empty or np.array_equal(remaining, old_remaining):
            break
    return deserved, rounds


def proportion_input(instance: Instance, weights: _Floats) -> ProportionInput:
    """The session the plug-in would see for a queue case (groups ignored)."""
    q = queues_of(instance)
    res = tuple(instance.resources)
    unit = volcano_units(res)
    users = list(instance.users)
    return ProportionInput(
        total=np.asarray(instance.capacity, dtype=float) * unit,
        weight=np.asarray(weights, dtype=float),
        request=request(instance) * unit,
        guarantee=q.leaf_array("guarantee", users) * unit,
        capability=q.leaf_array("limit", users) * unit,
        active=active(instance),
        scalar=np.array([r not in CPU_NAMES + MEMORY_NAMES for r in res]),
        ignored=np.array([r in IGNORED for r in res]),
    )


@register("volcano-proportion")
class VolcanoProportion(QueuePolicy):
    summary = "Volcano proportion: each resource split by queue weight in rounds, capped and floored"
    about = (
        "Unlike DRF, bundles are not multiples of the request, and guarantees floor after the split, so "
        "promises can exceed the cluster."
    )
    section = "9.2"
    solver = "numpy (Volcano's rounds)"
    per_resource = True

    def entitlement(self, instance: Instance) -> tuple[np.ndarray, dict[str, Any]]:
        p = proportion_input(instance, instance.scalar_weights(self.name))
        deserved, rounds = proportion_rounds(p)
        unit = volcano_units(tuple(instance.resources))
        return deserved / unit, {"rounds": rounds}

    def online(self, settings: dict[str, Any]) -> OnlinePolicy:
        """Volcano's session of actions (enqueue, allocate, preempt, reclaim) with this plug-in:
        :mod:`fairalloc.models.volcano_cycle`."""
        from fairalloc.models.volcano_cycle import Proportion, VolcanoCycle

        def rounds(
            instance: Instance, total: _Floats, request: _Floats, active_: NDArray[np.bool_]
        ) -> tuple[_Floats, _Floats]:
            # the session's own total, requests and queues with a job, in Volcano's units
            given = proportion_input(instance, instance.scalar_weights(self.name))
            p = replace(given, total=total, request=request, active=active_)
            return proportion_rounds(p)[0], real_capability(p)

        return VolcanoCycle(settings, Proportion(rounds, volcano_units, MIN_RESOURCE))


__all__ = [
    "MAX_ROUNDS",
    "MIN_RESOURCE",
    "ProportionInput",
    "VolcanoProportion",
    "exceeded_part",
    "proportion_input",
    "proportion_rounds",
    "real_capability",
    "volcano_units",
]
