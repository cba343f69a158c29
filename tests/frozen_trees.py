"""Random queue trees kept as the tests that pin them first drew them: each test found its case in
``fairalloc.analysis.falsify.random_queue_tree`` at a seed, and the generator has changed since
(it now holds its guarantees), so the tree is kept in ``tests/data/trees/`` rather than the seed.

The file is the tree's ``Instance.to_dict()``; :func:`frozen` reads it back as drawn, without the
bound on each queue's tasks that a case file gives by its request (amounts are exact: YAML keeps
a float's shortest round-trip form).
"""

from __future__ import annotations

from pathlib import Path

import fairalloc

TREES = Path(__file__).parent / "data" / "trees"


def frozen(name: str) -> fairalloc.Instance:
    """The tree ``tests/data/trees/<name>.yaml`` as ``random_queue_tree`` drew it."""
    return as_drawn(fairalloc.load_case(TREES / f"{name}.yaml").instance)


def as_drawn(case: fairalloc.Instance) -> fairalloc.Instance:
    """A tree read from its ``to_dict()`` as ``random_queue_tree`` drew it: without the bound on
    each queue's tasks that a case gives by its request."""
    return fairalloc.Instance(
        case.capacity, case.demand, resources=case.resources, users=case.users, weights=case.weights,
        queues=case.queues, name=case.name,
    )  # fmt: skip
