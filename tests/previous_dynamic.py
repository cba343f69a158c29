"""The DMFA-SRQ / DDRF threshold step at commit 67d95780b050f820062e6e4721ec000a5f9a1f0b (main's
HEAD when issue 36's dynamic part started), kept as the oracle for the step that replaced it:
:func:`threshold_levels` (the block stack) and :func:`threshold_step` (prefix and suffix sums over
all users), verbatim from fairalloc/models/dmfa_srq.py.  Their feasibility test accepted
``pool * (1 + 1e-12)``, which moves ``M^k`` by up to ``1e-12 Q_k / q_k`` at an arrival with a tiny
share; tests/test_fast_dynamic.py holds the new step equal to them where that slack cannot act
(ordinary shares) and shows them off an exact reference where it does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fairalloc.engines.dynamic import binding_per_arrival


def threshold_step(W: np.ndarray, qd: np.ndarray, pool: float) -> tuple[float, np.ndarray]:
    """``M^k`` for breakpoints ``W`` (non-increasing, last = 0) and rows ``q_i d_i``; and ``g(M^k)``."""
    k, m = qd.shape
    suffix = np.zeros((k + 1, m))
    suffix[:k] = np.cumsum(qd[::-1], axis=0)[::-1]  # sum_{i >= p} q_i d_ij
    prefix = np.zeros((k + 1, m))
    prefix[1:] = np.cumsum(W[:, None] * qd, axis=0)  # sum_{i < p} W_i q_i d_ij
    at_breakpoints = W[:, None] * suffix[:k] + prefix[:k]  # g(W_p), users p.. at M = W_p
    feasible = (at_breakpoints <= pool * (1 + 1e-12)).all(axis=1)
    p = int(np.argmax(feasible))  # first feasible breakpoint
    rate = suffix[p]
    room = pool - prefix[p]
    M = float(np.min(room[rate > 0] / rate[rate > 0]))
    used = M * rate + prefix[p]
    return M, used


def threshold_levels(
    qd: np.ndarray, pools: np.ndarray, progress: Callable[[int], object] | None = None
) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Every arrival's ``M^k``, resource use ``g(M^k)`` and binding resources, for rows ``q_i d_i``
    and pools ``Q_k``: :func:`threshold_step` on *blocks* of users instead of users.

    The levels ``W_i = max(M^i .. M^k)`` are non-increasing in ``i``, and an arrival sets every
    level below ``M^k`` to ``M^k``: users with equal levels form blocks, a stack from the oldest
    (highest level) to the newest, and an arrival merges the blocks at or below the threshold
    into one.  With each block's sum of ``q_i d_i`` and the running totals from the oldest block
    (which a merge at the top leaves valid), the first feasible block is found by galloping
    down from the newest: ``O(m log b)`` for an arrival that merges ``b`` blocks, and each block
    is merged away once, so a history costs amortised ``O(m)`` per arrival.  Plain Python floats,
    because with a handful of resources numpy's per-call overhead is most of the work.
    ``progress(done)`` is called every :data:`PROGRESS_EVERY` arrivals.
    """
    n, m = qd.shape
    M, used = np.zeros(n), np.zeros((n, m))
    stack = _Blocks(m)
    for k, (row, pool) in enumerate(zip(qd.tolist(), pools.tolist())):
        stack.push(row)
        p = stack.first_feasible(pool * (1 + 1e-12))
        rate, prefix = stack.rate_from(p), stack.below_w[p]
        M[k] = min((pool - w) / r for w, r in zip(prefix, rate) if r > 0)
        used[k] = [M[k] * r + w for r, w in zip(rate, prefix)]
        stack.merge(p, float(M[k]), rate)
        if progress is not None and (k + 1) % PROGRESS_EVERY == 0:
            progress(PROGRESS_EVERY)
    if progress is not None:
        progress(n % PROGRESS_EVERY)
    return M, used, binding_per_arrival(used, pools)


PROGRESS_EVERY = 8192  # arrivals between two calls of threshold_levels' progress


class _Blocks:
    """The stack of :func:`threshold_levels`: per block (oldest first) its level and its sum of
    ``q_i d_i``; ``below[b]`` / ``below_w[b]`` sum the blocks before ``b`` (weighted by level)."""

    def __init__(self, m: int) -> None:
        self.level: list[float] = []
        self.block: list[list[float]] = []
        self.below: list[list[float]] = [[0.0] * m]
        self.below_w: list[list[float]] = [[0.0] * m]

    def push(self, row: list[float]) -> None:
        """The newcomer: a block at level 0."""
        self.level.append(0.0)
        self.block.append(row)
        self.below.append([a + b for a, b in zip(self.below[-1], row)])
        self.below_w.append(self.below_w[-1])

    def feasible(self, b: int, limit: float) -> bool:
        """``g(level_b) <= Q_k`` on every resource: the blocks from ``b`` on raised to ``level_b``."""
        lv, total = self.level[b], self.below[-1]
        return all(w + lv * (t - u) <= limit for w, t, u in zip(self.below_w[b], total, self.below[b]))

    def first_feasible(self, limit: float) -> int:
        """Gallop down from the newest block (level 0: feasible), then bisect."""
        lo, hi, step = 0, len(self.level) - 1, 1
        while hi - step >= 0:
            if not self.feasible(hi - step, limit):
                lo = hi - step + 1
                break
            hi, step = hi - step, 2 * step
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if self.feasible(mid, limit) else (mid + 1, hi)
        return lo

    def rate_from(self, p: int) -> list[float]:
        """``sum_{i in blocks p..} q_i d_i``: how fast ``g`` grows above ``level_p``."""
        return [sum(column) for column in zip(*self.block[p:])] if len(self.block) - p > 1 else self.block[p]

    def merge(self, p: int, level: float, rate: list[float]) -> None:
        """Blocks ``p..`` become one block at ``max(M^k, level_p)``."""
        level = max(level, self.level[p])
        del self.level[p + 1 :], self.block[p + 1 :], self.below[p + 2 :], self.below_w[p + 2 :]
        self.level[p], self.block[p] = level, rate
        self.below[p + 1] = [a + b for a, b in zip(self.below[p], rate)]
        self.below_w[p + 1] = [a + level * b for a, b in zip(self.below_w[p], rate)]
