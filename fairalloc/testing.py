"""Helpers for testing mechanisms: hypothesis strategies for instances and agreement checks.

Useful for your own mechanisms too::

    from hypothesis import given
    from fairalloc.testing import instances, assert_same_tasks

    @given(instances())
    def test_my_mechanism(inst):
        assert_same_tasks(solve(inst, "mine", method="fast"), solve(inst, "mine", method="program"))

Requires ``hypothesis`` (the ``dev`` extra).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fairalloc.core.instance import Instance
from fairalloc.core.tolerances import AGREEMENT


@st.composite
def instances(draw, max_users: int = 5, max_resources: int = 4, *, zeros: bool = True,
              weights: str | None = "any", bounds: bool = True, max_demand: int = 10) -> Instance:
    """Small instances with integer data.

    ``zeros``: demands may contain zeros (never a whole row).  ``weights``: ``None`` (none),
    ``"scalar"`` or ``"any"`` (scalar or per resource).  ``bounds``: some users get ``max_tasks``.
    """
    n = draw(st.integers(1, max_users))
    m = draw(st.integers(1, max_resources))
    low = 0 if zeros else 1
    demand = np.array(draw(st.lists(st.lists(st.integers(low, max_demand), min_size=m, max_size=m),
                                    min_size=n, max_size=n)), dtype=float)
    for i in np.flatnonzero(~(demand > 0).any(axis=1)):      # every user demands something
        demand[i, draw(st.integers(0, m - 1))] = draw(st.integers(1, max_demand))
    capacity = np.array(draw(st.lists(st.integers(1, 60), min_size=m, max_size=m)), dtype=float)
    w = None
    if weights is not None and draw(st.booleans()):
        per_resource = weights == "any" and m > 1 and draw(st.booleans())
        shape = (n, m) if per_resource else (n,)
        w = np.array(draw(st.lists(st.integers(1, 4), min_size=int(np.prod(shape)),
                                   max_size=int(np.prod(shape)))), dtype=float).reshape(shape)
    T = None
    if bounds and draw(st.booleans()):
        T = np.array([draw(st.one_of(st.just(np.inf), st.integers(0, 12).map(float))) for _ in range(n)])
    return Instance(capacity, demand, weights=w, max_tasks=T, name="hypothesis")


def close(a, b, tol: float = AGREEMENT) -> bool:
    """Elementwise ``|a - b| <= tol * max(1, |a|, |b|)``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))))


def assert_same_tasks(first, second, tol: float = AGREEMENT) -> None:
    """Two allocations give every user the same task count (relative ``tol``, floor 1)."""
    if not close(first.tasks, second.tasks, tol):
        diff = np.abs(first.tasks - second.tasks)
        i = int(np.argmax(diff))
        raise AssertionError(f"{first.mechanism}: {first.method} and {second.method} differ for user "
                             f"{first.instance.users[i]}: {first.tasks[i]!r} vs {second.tasks[i]!r}\n"
                             f"{first.tasks}\n{second.tasks}\ninstance: {first.instance.to_dict()}")


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Run the ``fairalloc`` command in-process; return (exit code, stdout, stderr).

    ``capsys`` is pytest's fixture capturing the two streams.
    """
    from fairalloc.cli import main
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err
