"""No answer without a certificate: every allocation is checked before it leaves the library.

:meth:`fairalloc.Mechanism.allocate` passes every :class:`~fairalloc.core.allocation.Allocation` any
mechanism returns (fast path or program, static or dynamic, built-in or plug-in) through
:func:`certify`, which checks, in floating point and independently of how the answer was computed:

* every task count is finite and ``>= 0``;
* every resource is within capacity: ``used_j <= R_j (1 + FEASIBILITY)`` (nothing at all of a
  resource of capacity 0);
* every task bound holds: ``x_i <= T_i (1 + FEASIBILITY)``;
* prices, where the mechanism has them, are finite (one per resource);
* a dynamic mechanism's history holds finite levels.

A violation is a :class:`~fairalloc.core.errors.SolverError` of one line naming the mechanism, the
method and the solver, the violated constraint and its worst user or resource::

    ceei (program, cvxpy+clarabel): resource mem used 5.02 of capacity 1 (502%); the answer is not trusted

Rounding noise within the tolerance (a task count of ``-1e-15``, one a few ulps above its bound)
is clipped to the constraint; beyond the tolerance nothing is changed and the answer is refused.
The natural scale of a task count is what the user could run alone, ``min(T_i, 1 / mu_i)``
(``mu_i`` her per-task dominant share), so the test means the same in any unit.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from fairalloc.core.errors import SolverError
from fairalloc.core.tolerances import FEASIBILITY

if TYPE_CHECKING:
    from fairalloc.core.allocation import Allocation

__all__ = ["certify"]

_UNTRUSTED = "the answer is not trusted"


def _label(allocation: Allocation) -> str:
    return f"{allocation.mechanism} ({allocation.method}, {allocation.solver})"


def _num(v: float) -> str:
    return f"{float(v):.3g}"


def certify(allocation: object, name: str | None = None) -> Allocation:
    """``allocation`` if it passes the feasibility certificate (with noise within tolerance
    clipped: then a copy), else :class:`SolverError`.  ``name``: the mechanism's name for the
    message when the allocation does not carry one."""
    from fairalloc.core.allocation import Allocation

    if not isinstance(allocation, Allocation):
        raise SolverError(
            f"{name or 'mechanism'}: returned {type(allocation).__name__}, not an Allocation; {_UNTRUSTED}"
        )
    inst = allocation.instance
    label = _label(allocation) if allocation.mechanism else f"{name} ({allocation.method}, {allocation.solver})"
    if allocation.amounts is not None:
        return _certify_bundles(allocation, label)
    if _passes_plainly(allocation):
        return allocation
    resources = inst.resources  # user names are made only for a message
    x = np.asarray(allocation.tasks)
    if x.shape != (inst.n,) or not np.issubdtype(x.dtype, np.number):
        raise SolverError(f"{label}: {x.shape} task counts for {inst.n} users; {_UNTRUSTED}")
    x = x.astype(float, copy=False)
    finite = np.isfinite(x)
    if not finite.all():
        i = int(np.argmin(finite))
        raise SolverError(f"{label}: user {inst.users[i]} has {x[i]} tasks; {_UNTRUSTED}")
    D, R, T = inst.demand, inst.capacity, inst.bounds()
    with np.errstate(all="ignore"):
        mu = inst.per_task_dominant_share
        alone = np.minimum(np.where(mu > 0, 1.0 / mu, np.inf), T)  # what she could run alone
        alone = np.where(np.isfinite(alone), alone, np.abs(x))  # no scale: the value itself
        slack = FEASIBILITY * alone
        # -- non-negative ----------------------------------------------------------------
        below = np.maximum(-x, 0.0)
        bad = below > slack
        if bad.any():
            i = int(np.argmax(np.where(bad, below / np.where(alone > 0, alone, 1.0), -np.inf)))
            raise SolverError(f"{label}: user {inst.users[i]} has {_num(x[i])} tasks (below 0); {_UNTRUSTED}")
        # -- task bounds -------------------------------------------------------------------
        over_bound = np.where(np.isfinite(T), x - T, 0.0)
        bad = over_bound > FEASIBILITY * T
        if bad.any():
            ratio = np.where(bad, np.where(T > 0, x / np.where(T > 0, T, 1.0), np.inf), -np.inf)
            i = int(np.argmax(ratio))
            raise SolverError(
                f"{label}: user {inst.users[i]} has {_num(x[i])} tasks, above her max_tasks {_num(T[i])}; {_UNTRUSTED}"
            )
        clipped = np.minimum(np.maximum(x, 0.0), T)
        # -- capacities --------------------------------------------------------------------
        used = clipped @ D
        if not np.all(np.isfinite(used)):
            j = int(np.argmin(np.isfinite(used)))
            raise SolverError(f"{label}: resource {resources[j]} used {used[j]} (beyond float range); {_UNTRUSTED}")
        over = np.where(R > 0, used / np.where(R > 0, R, 1.0), np.where(used > 0, np.inf, 0.0))
        bad = over > 1 + FEASIBILITY
        if bad.any():
            j = int(np.argmax(over))
            share = "" if R[j] == 0 else f" ({over[j]:.0%})"
            raise SolverError(
                f"{label}: resource {resources[j]} used {_num(used[j])} of capacity {_num(R[j])}{share}; {_UNTRUSTED}"
            )
        # -- everything derived is finite (shares, bundles) --------------------------------
        shares = clipped * mu
        if not np.all(np.isfinite(shares)):
            i = int(np.argmin(np.isfinite(shares)))
            raise SolverError(
                f"{label}: user {inst.users[i]}'s dominant share is not a finite number "
                f"(the instance is beyond float range); {_UNTRUSTED}"
            )
    # -- prices --------------------------------------------------------------------------------
    if allocation.prices is not None:
        p = np.asarray(allocation.prices)
        if p.shape != (inst.m,):
            raise SolverError(f"{label}: {p.shape} prices for {inst.m} resources; {_UNTRUSTED}")
        p = p.astype(float, copy=False)
        if not np.all(np.isfinite(p)):
            j = int(np.argmin(np.isfinite(p)))
            raise SolverError(f"{label}: the price of resource {resources[j]} is {p[j]}; {_UNTRUSTED}")
    # -- a dynamic mechanism's history -----------------------------------------------------------
    levels = getattr(allocation.history, "M", None)
    if levels is not None and not np.all(np.isfinite(levels)):
        k = int(np.argmin(np.isfinite(levels)))
        raise SolverError(f"{label}: the level M after arrival {k + 1} is {levels[k]}; {_UNTRUSTED}")
    if np.array_equal(clipped, x) and x is allocation.tasks:
        return allocation
    return dataclasses.replace(allocation, tasks=clipped)


#: instances of at most this many cells are first certified in plain floats (:func:`_passes_plainly`)
PLAIN_CELLS = 256


def _passes_plainly(allocation: Allocation) -> bool:
    """Whether :func:`certify` passes ``allocation`` as it is, decided in plain floats on a small
    instance (numpy's cost per call on a few numbers was most of a certificate, and the verifier
    asks one per report).  The same tests on the same floats; ``False`` whenever anything is not
    plainly fine (the whole check then names the violation, or clips the noise)."""
    inst, x = allocation.instance, allocation.tasks
    if (
        type(x) is not np.ndarray
        or x.dtype != np.float64
        or x.shape != (inst.n,)
        or inst.n * inst.m > PLAIN_CELLS
        or allocation.prices is not None
        or getattr(allocation.history, "M", None) is not None
    ):
        return False
    T = inst.bounds()
    used = (np.minimum(np.maximum(x, 0.0), T) @ inst.demand).tolist()  # as the whole check computes it
    mu = inst.per_task_dominant_share.tolist()
    if not all(0.0 <= v <= t and math.isfinite(v * s) for v, t, s in zip(x.tolist(), T.tolist(), mu)):
        return False
    limit = 1 + FEASIBILITY
    return all(math.isfinite(u) and (u / r <= limit if r > 0 else u <= 0) for u, r in zip(used, inst.capacity.tolist()))


def _certify_bundles(allocation: Allocation, label: str) -> Allocation:
    """General bundles (:meth:`Allocation.from_bundles`): finite, ``>= 0`` and within capacity,
    each to :data:`FEASIBILITY` of the resource's capacity (noise within it clipped).  A policy's
    entitlement may promise more than the capacity: that is the ``no_overcommit`` property's to
    say, not a reason to refuse the answer."""
    inst = allocation.instance
    A = np.asarray(allocation.amounts, dtype=float)
    n, m = inst.n, inst.m
    if A.shape != (n, m):
        raise SolverError(f"{label}: bundles of shape {A.shape} for {n} users x {m} resources; {_UNTRUSTED}")
    if not np.all(np.isfinite(A)):
        i, j = (int(v) for v in np.argwhere(~np.isfinite(A))[0])
        raise SolverError(f"{label}: user {inst.users[i]} has {A[i, j]} {inst.resources[j]}; {_UNTRUSTED}")
    R = inst.capacity
    scale = np.where(R > 0, R, 1.0)
    if (A < -FEASIBILITY * scale).any():
        i, j = (int(v) for v in np.argwhere(A < -FEASIBILITY * scale)[0])
        amount = f"{_num(A[i, j])} {inst.resources[j]}"
        raise SolverError(f"{label}: user {inst.users[i]} has {amount} (below 0); {_UNTRUSTED}")
    clipped = np.maximum(A, 0.0)
    used = clipped.sum(axis=0)
    over = used > R + FEASIBILITY * scale
    if over.any() and not allocation.entitlement:
        j = int(np.argmax(np.where(over, used / scale, -np.inf)))
        share = "" if R[j] == 0 else f" ({used[j] / R[j]:.0%})"
        raise SolverError(
            f"{label}: resource {inst.resources[j]} used {_num(used[j])} of capacity {_num(R[j])}{share}; {_UNTRUSTED}"
        )
    if np.array_equal(clipped, A):
        return allocation
    from fairalloc.core.allocation import leontief_values

    return dataclasses.replace(allocation, amounts=clipped, tasks=leontief_values(inst, clipped))
