"""The vectorised ``Queues.build``, ``Queues.ceiling`` and ``Instance.backlogged`` against the ones
they replace (tests/previous_queues_build.py, verbatim at main's HEAD when issue 36's build part
started): every node specification gives the same tree (same names in the same order, the same
numbers of the same types, read-only arrays), or the same refusal (same class, same message: the
first bad node and field, in file order).

The specifications are drawn from random queue trees (fairalloc.testing.queue_trees, up to 50
queues, flat to six levels deep, with weights, guarantees, limits, borrowing and lending limits),
then broken at one or more nodes: negative, NaN and infinite amounts and weights, wrong lengths,
text, mappings, booleans, a specification that is not a mapping, unknown parents, cycles among the
groups, a group that is not a node; and changed in ways that are right but unusual (numpy scalars,
integers, numpy rows), which the one-by-one read takes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.core.queues import RESOURCE_FIELDS, Queues
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.testing import close, queue_trees

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the oracle beside this file (importlib mode)
import previous_queues_build  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELDS = ("weight", "priority", *RESOURCE_FIELDS)
#: values a field may be broken with (some are right for some fields: NaN for a guarantee, inf for a limit)
WRONG = st.sampled_from(
    [-1.0, np.nan, np.inf, -np.inf, "x", {}, True, None, [1.0], [[1.0, 2.0]], [-0.5, 1, 2], ["1", "2", "3"],
     [None, 1.0, 2.0], [np.inf, 1.0, 1.0], [np.nan, 0.0, 0.0], 10**400, np.int64(3), np.float32(0.5)]
)  # fmt: skip


def specs(tree) -> tuple[list[str], dict[str, dict[str, object]], list[str]]:
    """A drawn tree's resources, node specifications (as a case file gives them: lists of floats,
    fields left out where not given) and groups."""
    q = tree.queues
    nodes: dict[str, dict[str, object]] = {}
    for n in q.parent:
        spec = q._spec(n)
        nodes[n] = {"parent": spec["parent"], "weight": spec["weight"], "priority": spec["priority"]}
        for f, missing in RESOURCE_FIELDS.items():
            a = spec[f]
            if not np.array_equal(a, np.full(len(q.resources), missing), equal_nan=True):
                nodes[n][f] = a.tolist()
    return list(q.resources), nodes, list(q.groups)


#: how ``broken`` changes a node (a field thrice as often: most of what a case file gets wrong)
HOW = ["field", "field", "field", "row", "parent", "cycle", "not a mapping", "drop group"]


@st.composite
def broken(draw, nodes: dict[str, dict[str, object]], groups: list[str]) -> dict[str, object]:
    """``nodes`` with one to three nodes broken or changed (see the module docstring)."""
    out: dict[str, object] = {n: dict(spec) for n, spec in nodes.items()}
    names = list(out)
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(names))
        how = draw(st.sampled_from(HOW))
        spec = out[name]
        if how == "not a mapping":
            out[name] = draw(st.sampled_from([None, 3, ["parent"]]))
        elif not isinstance(spec, dict):
            continue
        elif how == "field":
            spec[draw(st.sampled_from(FIELDS))] = draw(WRONG)
        elif how == "row":  # right, but a numpy row of numpy scalars
            f = draw(st.sampled_from(list(RESOURCE_FIELDS)))
            if isinstance(spec.get(f), list):
                spec[f] = np.array(spec[f], dtype=draw(st.sampled_from([float, np.float32, object])))
        elif how == "parent":
            spec["parent"] = draw(st.sampled_from([f"{name}x", name, *groups[:3]]))
        elif how == "cycle" and groups:
            a, b = draw(st.sampled_from(groups)), draw(st.sampled_from(groups))
            for one, other in ((a, b), (b, a)):
                if isinstance(out.get(one), dict):
                    out[one]["parent"] = other  # type: ignore[index]
        elif how == "drop group" and groups:
            out.pop(draw(st.sampled_from(groups)), None)
            names = list(out)
            if not names:
                break
    return out


def outcome(build, resources, nodes, groups):
    """The tree ``build`` makes (every table as (name, value) pairs in order), or its refusal."""
    try:
        q = build(Queues, resources, nodes, groups)
    except Exception as exc:  # the class and message are the outcome compared
        return ("refused", type(exc).__name__, str(exc))
    tables = {f: list(getattr(q, f).items()) for f in ("parent", "weight", "priority", *RESOURCE_FIELDS)}
    return q.resources, q.groups, q.leaf_names, tables


def same_amounts(a: np.ndarray, b: np.ndarray) -> bool:
    """The same NaN and infinite entries, the finite ones equal within the agreement tolerance."""
    return bool(
        a.shape == b.shape
        and np.array_equal(np.isnan(a), np.isnan(b))
        and np.array_equal(a[np.isinf(a)], b[np.isinf(b)])
        and np.array_equal(np.isinf(a), np.isinf(b))
        and close(a[np.isfinite(a)], b[np.isfinite(b)], AGREEMENT)
    )


def assert_same(new, old) -> None:
    if new[0] == "refused" or old[0] == "refused":
        assert new == old
        return
    assert new[:3] == old[:3]
    for f, pairs in new[3].items():
        assert [n for n, _ in pairs] == [n for n, _ in old[3][f]], f
        for (n, v), (_, w) in zip(pairs, old[3][f]):
            if f in RESOURCE_FIELDS:
                assert not v.flags.writeable and v.dtype == w.dtype and same_amounts(v, w), (f, n, v, w)
            elif f == "parent":
                assert v == w, (f, n)
            else:
                assert type(v) is type(w) and close(v, w, AGREEMENT), (f, n, v, w)


def fast(cls, resources, nodes, groups):
    return cls.build(resources, nodes, groups)


@SETTINGS
@given(queue_trees(max_queues=50))
def test_drawn_trees_build_the_same(tree):
    resources, nodes, groups = specs(tree)
    assert_same(outcome(fast, resources, nodes, groups), outcome(previous_queues_build.build, resources, nodes, groups))


@SETTINGS
@given(st.data(), queue_trees(max_queues=50))
def test_broken_specifications_are_refused_the_same(data, tree):
    resources, nodes, groups = specs(tree)
    drawn = data.draw(broken(nodes, groups))
    assert_same(outcome(fast, resources, drawn, groups), outcome(previous_queues_build.build, resources, drawn, groups))


@SETTINGS
@given(queue_trees(max_queues=50))
def test_ceilings_and_backlog_are_the_same(tree):
    q = tree.queues
    for node in q.parent:
        assert same_amounts(q.ceiling(node), previous_queues_build.ceiling(q, node))
    rows = q.ceilings(tree.users)
    for i, u in enumerate(tree.users):
        assert same_amounts(rows[i], previous_queues_build.ceiling(q, u))
    new, old = tree.backlogged(), previous_queues_build.backlogged(tree)
    assert same_amounts(new.demand, old.demand)
    assert np.array_equal(new.max_tasks, old.max_tasks)


def test_a_flat_instance_backlogs_the_same():
    """A paper case (no queues): a row without tasks becomes the capacity, as before; by hand, ``a``'s
    dominant share per task is 4/20, so its backlog is its row over 0.2: (5, 20)."""
    from fairalloc.core.instance import Instance

    inst = Instance.from_arrays([10, 20], [[1, 4], [2, 0]], users=["a", "b"], max_tasks=[2, 0])
    new, old = inst.backlogged(), previous_queues_build.backlogged(inst)
    assert new.demand.tolist() == old.demand.tolist() == [[5.0, 20.0], [10.0, 20.0]]
