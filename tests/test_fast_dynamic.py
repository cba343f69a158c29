"""The DMFA-SRQ / DDRF threshold step at any share (issue 36): every level ``M^k`` against an exact
rational reference on adversarial histories with tiny shares, the allocations against the
per-arrival LP, and the step against the one it replaced (tests/previous_dynamic.py) where that
one was right.

The former step accepted a pool overshoot of ``1e-12 Q_k`` and found a room of size ``q_k`` as a
difference of sums of size ``Q_k``: at an arrival with a tiny share its ``M^k`` was off by up to
``1e-12 Q_k / q_k`` (33 % in the hand-computed case below; 6.7e-2 absolute after 670k arrivals).
"""

from fractions import Fraction

import numpy as np
import previous_dynamic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.core.tolerances import AGREEMENT, DYNAMIC_STEP
from fairalloc.engines.dynamic import normalised
from fairalloc.models.dmfa_srq import threshold_levels, threshold_step

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def exact_levels(instance: fairalloc.Instance, shares: np.ndarray | None = None) -> list[Fraction]:
    """Every ``M^k`` in rational arithmetic on the instance's (float) shares (or ``shares``: DDRF's
    1/n) and normalised demands, straight from the definition and independent of the block stack:
    ``M^k`` is the largest ``M`` with ``sum_i max(M, W_i) q_i d_ij <= Q_k`` on every resource,
    where ``W_i`` is user i's level before arrival k; on each resource, it is on the linear piece
    of ``g_j`` between two consecutive distinct levels that reaches ``Q_k``."""
    q = [Fraction(v) for v in (instance.shared if shares is None else shares).tolist()]
    d = [[Fraction(v) for v in row] for row in normalised(instance, "dmfa-srq").tolist()]
    W: list[Fraction] = []
    levels = []
    for k in range(instance.n):
        W.append(Fraction(0))
        pool = sum(q[: k + 1], Fraction(0))
        M = min(_inverse(W, q, [row[j] for row in d], pool) for j in range(len(d[0])))
        levels.append(M)
        W = [max(w, M) for w in W]
    return levels


def _inverse(W: list[Fraction], q: list[Fraction], dj: list[Fraction], pool: Fraction) -> Fraction:
    """The ``M`` at which ``g_j(M) = sum_i max(M, W_i) q_i d_ij`` reaches ``pool``."""
    breakpoints = sorted(set(W))
    for low, high in zip(breakpoints, breakpoints[1:] + [None]):
        rate = sum((q[i] * dj[i] for i, w in enumerate(W) if w <= low), Fraction(0))
        fixed = sum((w * q[i] * dj[i] for i, w in enumerate(W) if w > low), Fraction(0))
        M = low + (pool - fixed - low * rate) / rate
        if high is None or M <= high:
            return M
    raise AssertionError("unreachable: the last piece is unbounded")


@st.composite
def tiny_share_histories(draw, max_users=9, max_resources=3, scales=(9, 15)):
    """Integer demands (ties between resources happen) and shares of which some are
    ``10^-scales[1] .. 10^-scales[0]`` of the others: arrivals whose room is far below the pool's
    rounding (by default)."""
    n = draw(st.integers(2, max_users))
    m = draw(st.integers(1, max_resources))
    D = draw(st.lists(st.lists(st.integers(1, 9), min_size=m, max_size=m), min_size=n, max_size=n))
    weights = [
        draw(st.integers(1, 9)) * (10.0 ** -draw(st.integers(*scales)) if draw(st.booleans()) else 1.0)
        for _ in range(n)
    ]
    shares = np.array(weights) / sum(weights)
    return fairalloc.Instance(np.ones(m), np.array(D, dtype=float), shared=shares, name="tiny shares")


def relative_gap(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


def test_a_tiny_share_onto_a_saturated_pool_gets_exactly_its_own_level():
    """Hand computation.  d = [(1, 1/2), (1/2, 1), (1, 1)], q = (1/2, 1/2 - t, t), t = 1e-13.
    Arrival 1: M q_1 d_1 <= 1/2 gives M^1 = 1.  Arrival 2: both users at M, resource 1 binds:
    M (1/2 + (1/2 - t)/2) = 1 - t, M^2 = (1 - t) / (3/4 - t/2) ~ 4/3, and resource 1 is full.
    Arrival 3 brings room t on resource 1 and demands (1, 1): only the newcomer can rise, to
    M t = t, so M^3 = 1 (she gets exactly her own contribution).  The former step took the
    breakpoint 4/3 as feasible (its use exceeds the pool by t/3 < 1e-12) and gave M^3 = 4/3."""
    t = 1e-13
    inst = fairalloc.Instance.from_arrays([1, 1], [[1, 0.5], [0.5, 1], [1, 1]], shared=[0.5, 0.5 - t, t])
    M = fairalloc.solve(inst, "dmfa-srq", method="fast").history.M
    assert relative_gap(M, [1.0, 4 / 3, 1.0]) <= 1e-12  # t moves M^2 by 1e-13
    assert relative_gap(M, exact_levels(inst)) <= DYNAMIC_STEP
    q, d = inst.shared, normalised(inst, "dmfa-srq")
    before, _, _ = previous_dynamic.threshold_levels(q[:, None] * d, np.cumsum(q))
    assert relative_gap(before[2], 4 / 3) <= 1e-12  # the wrong answer this replaces


@SETTINGS
@given(tiny_share_histories())
def test_every_level_is_the_exact_rational_level(inst):
    for name in ("dmfa-srq", "ddrf"):
        fast = fairalloc.solve(inst, name, method="fast").history
        assert relative_gap(fast.M, exact_levels(inst, fast.q)) <= DYNAMIC_STEP, name


@SETTINGS
@given(tiny_share_histories())
def test_the_former_step_agrees_with_the_exact_levels_too(inst):
    """:func:`threshold_step` (all users at every arrival) no longer takes an overshooting
    breakpoint: its levels are exact to its own cancellation, ``eps Q_k / q_k``."""
    q, d = inst.shared, normalised(inst, "dmfa-srq")
    exact = exact_levels(inst)
    W = np.zeros(0)
    for k in range(inst.n):
        W = np.append(W, 0.0)
        M, _ = threshold_step(W, (q[:, None] * d)[: k + 1], float(np.sum(q[: k + 1])))
        assert abs(M - exact[k]) <= 16 * np.finfo(float).eps * float(np.sum(q[: k + 1]) / q[k]) * float(exact[k])
        W = np.maximum(W, float(exact[k]))


@SETTINGS
@given(tiny_share_histories(scales=(2, 5)))
def test_the_allocations_are_the_per_arrival_lps(inst):
    """Shares down to 1e-5 of the others: the LP (HiGHS, in levels) has a feasibility tolerance of
    1e-10, which moves an arrival's ``M`` by ~1e-10 / q, so the levels it passes on to the next
    arrival's LP may be just infeasible there (with shares of 1e-9 it reported an arrival
    infeasible), and it drops coefficients below 1e-12: the exact reference above covers the
    tinier shares.  What users get, ``x^k``, agrees to AGREEMENT of capacity."""
    fast = fairalloc.solve(inst, "dmfa-srq", method="fast").history
    lp = fairalloc.solve(inst, "dmfa-srq", method="program").history
    for k in range(1, inst.n + 1):
        assert np.max(np.abs(fast.x_at(k) - lp.x_at(k))) <= AGREEMENT


@SETTINGS
@given(st.integers(2, 400), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_ordinary_histories_are_unchanged(n, m, seed):
    """Where the slack could not act (Dirichlet(1) shares, so every q_k is far above 1e-12 / M),
    the new step gives the previous one's levels, use and binding resources."""
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.ones(n))
    d = rng.uniform(0.05, 1, (n, m))
    d /= d.max(axis=1, keepdims=True)
    M, used, binding = threshold_levels(q[:, None] * d, q)
    before, used_before, binding_before = previous_dynamic.threshold_levels(q[:, None] * d, np.cumsum(q))
    assert relative_gap(M, before) <= 1e-9
    assert relative_gap(used, used_before) <= 1e-9
    assert binding == binding_before
