"""Exact rational allocations: recovered from floats, then *verified* in rational arithmetic.

A float allocation is turned into nearby fractions with small denominators; the result is kept
only if the mechanism's certificate (optimality conditions checked with
:class:`fractions.Fraction`, no rounding anywhere) holds for it on the instance's own numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Protocol, SupportsFloat

from fairalloc.core.tolerances import EXACT_MAX_USERS, MAX_DENOMINATOR

if TYPE_CHECKING:
    from fairalloc.core.instance import Instance


def as_fraction(v: SupportsFloat) -> Fraction | None:
    """A float as the short decimal a person typed (``0.1`` -> ``1/10``); ``inf`` -> ``None``."""
    f = float(v)
    if f != f or f in (float("inf"), float("-inf")):
        return None
    return Fraction(repr(f))


def _finite_fraction(v: SupportsFloat) -> Fraction:
    """:func:`as_fraction` of a number a validated instance holds finite (a capacity, a demand, a
    weight); ``ValueError`` if it is not (``Instance(validate=False)``): then there is no exact form."""
    f = as_fraction(v)
    if f is None:
        raise ValueError(f"{float(v)}: not a finite number")
    return f


class ExactInstance:
    """The instance's numbers as fractions: ``R``, ``D``, ``W`` (n x m weights), ``T`` (None = no bound)."""

    def __init__(self, instance: Instance) -> None:
        self.n, self.m = instance.n, instance.m
        self.R = [_finite_fraction(v) for v in instance.capacity]
        self.D = [[_finite_fraction(v) for v in row] for row in instance.demand]
        self.W = [[_finite_fraction(v) for v in row] for row in instance.weight_matrix()]
        self.T = [as_fraction(v) for v in instance.bounds()]

    def dominant_share_per_task(self) -> list[Fraction]:
        """``mu_i = max_j D_ij / R_j`` (unweighted), as :attr:`Instance.per_task_dominant_share`."""
        return [max(self.D[i][j] / self.R[j] for j in range(self.m) if self.R[j] > 0) for i in range(self.n)]

    def used(self, x: Sequence[Fraction]) -> list[Fraction]:
        return [sum((x[i] * self.D[i][j] for i in range(self.n)), Fraction(0)) for j in range(self.m)]

    def feasible(self, x: Sequence[Fraction]) -> bool:
        return (
            all(v >= 0 for v in x)
            and all(t is None or x[i] <= t for i, t in enumerate(self.T))
            and all(u <= r for u, r in zip(self.used(x), self.R))
        )


class _Certifiable(Protocol):
    """What :func:`recover` reads of an :class:`~fairalloc.core.allocation.Allocation` (a protocol:
    allocation.py imports this module, so this one does not import it back)."""

    @property
    def instance(self) -> Instance: ...
    @property
    def tasks(self) -> Iterable[SupportsFloat]: ...
    @property
    def certify(self) -> Callable[[ExactInstance, list[Fraction]], bool] | None: ...


def recover(allocation: _Certifiable) -> list[Fraction] | None:
    """Verified exact form of ``allocation`` (see the module docstring), or ``None``."""
    if allocation.certify is None or allocation.instance.n > EXACT_MAX_USERS:
        return None
    tasks = [float(v) for v in allocation.tasks]
    if not all(math.isfinite(v) for v in tasks):  # NaN or inf has no exact form (and no certificate)
        return None
    try:
        ex = ExactInstance(allocation.instance)
    except (ValueError, OverflowError, ZeroDivisionError):
        return None
    for denominator in (1000, MAX_DENOMINATOR):
        candidate = [Fraction(v).limit_denominator(denominator) for v in tasks]
        try:
            if allocation.certify(ex, candidate):
                return candidate
        except (ArithmeticError, TypeError, ValueError):  # a certificate meeting a non-number: none
            return None
    return None


def solve_linear(A: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    """The unique solution of ``A p = b`` (any number of rows), or ``None`` if there is none.

    Gauss-Jordan elimination in exact arithmetic.
    """
    rows, cols = len(A), (len(A[0]) if A else 0)
    M = [list(r) + [v] for r, v in zip(A, b)]
    pivots: list[int] = []
    r = 0
    for c in range(cols):
        p = next((k for k in range(r, rows) if M[k][c] != 0), None)
        if p is None:
            return None  # a free variable: not unique
        M[r], M[p] = M[p], M[r]
        M[r] = [v / M[r][c] for v in M[r]]
        for k in range(rows):
            if k != r and M[k][c] != 0:
                f = M[k][c]
                M[k] = [a - f * e for a, e in zip(M[k], M[r])]
        pivots.append(c)
        r += 1
    if any(M[k][cols] != 0 for k in range(r, rows)):
        return None  # inconsistent
    return [M[k][cols] for k in range(cols)]
