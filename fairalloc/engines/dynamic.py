"""The machinery every dynamic mechanism shares (DMFA-SRQ paper, section 4; docs/formulations.md
section 6): users arrive one at a time and allocations are never taken back.

* :func:`normalised`: demands as shares of capacity scaled so each user's dominant share per
  task is 1 (``d_ij = (D_ij / R_j) / mu_i``), so an allocation ``x_i`` *is* her dominant share,
  and resources are normalised to 1;
* :func:`shared_quantities`: the users' shared quantities ``q_i``, checked to sum to 1;
* :func:`pool_shares`: the shared quantities of users who bring a running cluster between them
  (how the simulator's adapters give a dynamic mechanism its ``q_i``);
* :class:`History`: the allocation after every arrival, ``x^k`` for ``k = 1..n``; step tables and
  JSON are views of it;
* :func:`binding_resources`: the resources a threshold step saturates.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.errors import CaseError
from fairalloc.core.instance import Instance
from fairalloc.core.tolerances import SATURATION

SHARED_SUM_TOLERANCE = 1e-9


def normalised(instance: Instance, mechanism: str) -> NDArray[np.float64]:
    """``d_ij = (D_ij / R_j) / max_j (D_ij / R_j)``; dynamic mechanisms need every ``D_ij > 0``."""
    D = instance.demand
    zero = D <= 0
    if zero.any():
        i, j = (int(v) for v in np.argwhere(zero)[0])
        raise CaseError(
            f"users.{instance.users[i]}.demand.{instance.resources[j]}: {mechanism} needs strictly "
            f"positive demands (got {D[i, j]:g}); every user must demand every resource"
        )
    share = instance.share_per_task
    dominant: NDArray[np.float64] = share.max(axis=1, keepdims=True)
    return share / dominant


def shared_quantities(instance: Instance, mechanism: str) -> NDArray[np.float64]:
    """The users' shared quantities ``q_i``; they must be given for everyone and sum to 1."""
    q = instance.shared
    if q is None or np.isnan(q).any():
        i = 0 if q is None else int(np.argmax(np.isnan(q)))
        raise CaseError(
            f"users.{instance.users[i]}.shared: {mechanism} needs every user's shared quantity "
            f"(use ddrf for equal shares 1/n)"
        )
    total = float(q.sum())
    if abs(total - 1.0) > SHARED_SUM_TOLERANCE:
        raise CaseError(
            f"users: shared quantities must sum to 1 over all users (they sum to {total:.12g}); "
            f"fairalloc does not rescale them silently"
        )
    return q


def pool_shares(shared: NDArray[np.float64] | None, weights: NDArray[np.float64] | None, n: int) -> NDArray[np.float64]:
    """``q_i`` for ``n`` users who between them bring the whole pool: in proportion to their given
    shared quantities when every one is given, else to their weights (none: equal, ``1/n``).

    The simulator's reading of DMFA-SRQ's ``q_i`` (the quantity of every resource a user brings):
    the cluster is a fixed pool, shared by the owners with work, so their quantities are scaled to
    sum to 1 over those owners. With no quantities and no weights DMFA-SRQ is then dynamic DRF.

    >>> pool_shares(None, None, 4).tolist(), pool_shares(np.array([.2, .2]), None, 2).tolist()
    ([0.25, 0.25, 0.25, 0.25], [0.5, 0.5])
    >>> pool_shares(np.array([np.nan, .5]), np.array([3., 1.]), 2).tolist()
    [0.75, 0.25]
    """
    if shared is not None and not np.isnan(shared).any():
        base = np.asarray(shared, float)
    elif weights is not None:
        base = np.asarray(weights, float)
    else:
        base = np.ones(n)
    out: NDArray[np.float64] = base / base.sum()
    return out


@dataclass
class History:
    """Dominant shares after every arrival.

    Either *compact* (``M``: ``x_i^k = q_i max(M^i .. M^k)``, Lemma 1 of DMFA-SRQ, O(n) memory) or
    *explicit* (``steps[k-1]`` is the array ``x^k``, for mechanisms without that structure).
    ``used[k-1]`` is the share of every resource in use after arrival ``k`` (``sum_i x_i^k d_ij``),
    when the mechanism recorded it; it makes the per-arrival table linear in the arrivals.
    """

    instance: Instance
    mu: NDArray[np.float64]  # unweighted per-task dominant share (tasks = x / mu)
    q: NDArray[np.float64]
    M: NDArray[np.float64] | None = None
    steps: list[NDArray[np.float64]] | None = None
    binding: list[list[int]] | None = None
    used: NDArray[np.float64] | None = None

    @property
    def n(self) -> int:
        return self.instance.n

    def x_at(self, k: int) -> NDArray[np.float64]:
        """Dominant shares of users 1..k after the k-th arrival (``O(k)``)."""
        if self.steps is not None:
            return self.steps[k - 1]
        assert self.M is not None, "History: needs M (compact) or steps (explicit)"
        return self.q[:k] * np.maximum.accumulate(self.M[:k][::-1])[::-1]

    def path(self, i: int) -> NDArray[np.float64]:
        """User ``i``'s (0-based) dominant share after arrivals ``i+1 .. n`` (``O(n)``, not ``O(n^2)``)."""
        if self.steps is not None:
            return np.array([x[i] for x in self.steps[i:]], dtype=float)
        assert self.M is not None, "History: needs M (compact) or steps (explicit)"
        shares: NDArray[np.float64] = self.q[i] * np.maximum.accumulate(self.M[i:])
        return shares

    def final(self) -> NDArray[np.float64]:
        return self.x_at(self.n)

    def step_dicts(self, limit: int | None = None, users: int | None = None) -> list[dict[str, Any]]:
        """:meth:`step_rows` as a list."""
        return list(self.step_rows(limit, users))

    def step_rows(self, limit: int | None = None, users: int | None = None) -> Iterator[dict[str, Any]]:
        """One dict per arrival (the first ``limit``): M, the pool, the tasks and dominant shares
        of the first ``users`` users (all by default), utilization and what binds.  With
        ``users`` bounded and ``used`` recorded, each row costs ``O(users + m)``: the whole
        table is linear in the arrivals."""
        inst = self.instance
        last = self.n if limit is None else min(limit, self.n)
        shown = self.n if users is None else min(users, self.n)
        pools = np.cumsum(self.q)  # Q_k, as the fast path sums them
        for k, x in zip(range(1, last + 1), self._shares_of_first(shown, last)):
            step: dict[str, Any] = {"k": k, "arrived": inst.users[k - 1]}
            if self.M is not None:
                step["M"] = float(self.M[k - 1])
            step["pool"] = float(pools[k - 1])
            step["tasks"] = {u: float(v) for u, v in zip(inst.users, x / self.mu[: len(x)])}
            step["dominant_shares"] = {u: float(v) for u, v in zip(inst.users, x)}
            step["utilization"] = {r: float(v) for r, v in zip(inst.resources, self._used_at(k))}
            if self.binding is not None:
                step["binding"] = [inst.resources[j] for j in self.binding[k - 1]]
            yield step

    def _shares_of_first(self, shown: int, last: int) -> Iterator[NDArray[np.float64]]:
        """``x^k`` restricted to the first ``shown`` users, for ``k = 1..last``, built incrementally."""
        if self.steps is not None:
            yield from (x[:shown] for x in self.steps[:last])
            return
        assert self.M is not None, "History: needs M (compact) or steps (explicit)"
        levels = np.zeros(shown)  # Lemma 1: the running maximum of M since each user arrived
        for k in range(1, last + 1):
            np.maximum(levels[: min(k, shown)], self.M[k - 1], out=levels[: min(k, shown)])
            yield self.q[: min(k, shown)] * levels[: min(k, shown)]

    def _used_at(self, k: int) -> NDArray[np.float64]:
        if self.used is not None:
            recorded: NDArray[np.float64] = self.used[k - 1]
            return recorded
        inst, x = self.instance, self.x_at(k)
        used: NDArray[np.float64] = (x / self.mu[:k]) @ inst.demand[:k] / inst.capacity
        return used


def binding_resources(used: NDArray[np.float64], pool: float) -> list[int]:
    return [int(j) for j in np.flatnonzero(used >= pool * (1 - SATURATION))]


def binding_per_arrival(used: NDArray[np.float64], pools: NDArray[np.float64]) -> list[list[int]]:
    """:func:`binding_resources` of every arrival: ``used`` ``(n, m)``, ``pools`` ``(n,)``."""
    return [np.flatnonzero(row).tolist() for row in used >= pools[:, None] * (1 - SATURATION)]
