"""A queue case's users read field by field (``parse_case``'s ``_queue_rows``, ``_queues_at_once``,
``Queues.from_columns``) and the keys of its mappings read at once (``_names``), against the
per-queue reads they replace (tests/previous_queues_build.py, ``parse_case`` verbatim at main's HEAD
when issue 36's load part started): every case gives the same instance (names, demand, weights,
bounds, the same queue tree: every table in order, amounts within the agreement tolerance) or the
same refusal (same class, same message: the first bad queue and field, in file order).

The cases are random queue trees (fairalloc.testing.queue_trees, up to 50 queues, flat to six levels
deep, with weights, guarantees, limits, borrowing and lending limits) written as a case file, then
changed at one or more queues or groups: amounts written as percentages of the capacity or as
integers, weights per resource, priorities, usage, a queue without a request, resource names written
as numbers; and broken: a resource that does not exist, a paper case's field in a queue case (demand,
max_tasks, shared), a negative, infinite or text amount, a group's usage, an unknown group.
"""

from __future__ import annotations

import copy
import math
import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.core.errors import FairallocError
from fairalloc.core.queues import RESOURCE_FIELDS
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.io import cases
from fairalloc.testing import close, queue_trees

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the oracle beside this file (importlib mode)
import previous_queues_build  # noqa: E402

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
AMOUNT_FIELDS = [f for f in RESOURCE_FIELDS if f != "usage"]
#: changes a case file may make that are right: percentages, integers, per-resource weights, ...
RIGHT = ["percent", "integer", "weight per resource", "priority", "usage", "no request", "group amounts"]
#: and that are wrong (a message names the first queue and field)
WRONG = ["unknown resource", "paper field", "bad amount", "group usage", "unknown group", "unknown weight resource"]


def outcome(parse, data: dict):
    """What ``parse`` builds of ``data``: the instance's and its queue tree's fields in order, or the
    class and message of its refusal."""
    try:
        case = parse(copy.deepcopy(data), "f.yaml")
    except (FairallocError, ValueError, TypeError) as exc:  # the class and message are compared
        return ("refused", type(exc).__name__, str(exc))
    inst = case.instance
    arrays = {"demand": inst.demand, "weights": inst.weights, "max_tasks": inst.max_tasks, "shared": inst.shared}
    q = inst.queues
    tables = {f: list(getattr(q, f).items()) for f in ("parent", "weight", "priority", *RESOURCE_FIELDS)}
    return (inst.users, inst.resources, case.demand), arrays, (q.resources, q.groups, q.leaf_names), tables


def same_floats(a, b) -> bool:
    """The same NaN and infinite entries, the finite ones equal within the agreement tolerance."""
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    finite = np.isfinite(a)
    return bool(
        a.shape == b.shape
        and a.dtype == b.dtype
        and np.array_equal(np.isnan(a), np.isnan(b))
        and np.array_equal(np.isinf(a), np.isinf(b))
        and np.array_equal(a[np.isinf(a)], b[np.isinf(b)])
        and close(a[finite], b[finite], AGREEMENT)
    )


def assert_same(new, old) -> None:
    if new[0] == "refused" or old[0] == "refused":
        assert new == old
        return
    assert new[0] == old[0] and new[2] == old[2]
    for name, a in new[1].items():
        assert same_floats(a, old[1][name]), name
    for f, pairs in new[3].items():
        assert [n for n, _ in pairs] == [n for n, _ in old[3][f]], f
        for (n, v), (_, w) in zip(pairs, old[3][f]):
            if f in RESOURCE_FIELDS:
                assert not v.flags.writeable and same_floats(v, w), (f, n, v, w)
            elif f == "parent":
                assert v == w, (f, n)
            else:
                assert type(v) is type(w) and close(v, w, AGREEMENT), (f, n, v, w)


def same_case(data: dict) -> None:
    assert_same(outcome(cases.parse_case, data), outcome(previous_queues_build.parse_case, data))


@st.composite
def changed(draw, data: dict, kinds: list[str]) -> dict:
    """``data`` changed at one to three queues or groups, each change drawn from ``kinds``."""
    out = copy.deepcopy(data)
    users, groups, resources = out["users"], out.get("groups", {}), list(out["resources"])
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(kinds))
        name = draw(st.sampled_from(list(users)))
        user = users[name]
        r = draw(st.sampled_from(resources))
        f = draw(st.sampled_from(AMOUNT_FIELDS))
        if how == "percent":
            user[f] = {**user.get(f, {}), r: f"{draw(st.integers(0, 150))}%"}
        elif how == "integer":
            user.setdefault("request", {})[r] = draw(st.integers(0, 10**6))
        elif how == "weight per resource":
            user["weight"] = {r: draw(st.sampled_from([0.5, 2, 3.25]))}
        elif how == "priority":
            user["priority"] = draw(st.sampled_from([-3, 0, 2.5]))
        elif how == "usage":
            user["usage"] = {r: draw(st.sampled_from([0, 1.5, 40]))}
        elif how == "no request":
            user.pop("request", None)
        elif how == "group amounts" and groups:
            groups[draw(st.sampled_from(list(groups)))][f] = {r: draw(st.sampled_from([1, "20%", 7.5]))}
        elif how == "unknown resource":
            user[draw(st.sampled_from(["request", *AMOUNT_FIELDS, "usage"]))] = {f"{r}x": 1}
        elif how == "paper field":
            wrong = draw(st.sampled_from(["demand", "max_tasks", "shared"]))
            user[wrong] = {"demand": {r: 1}, "max_tasks": 1, "shared": 0.5}[wrong]
        elif how == "bad amount":
            user[f] = {r: draw(st.sampled_from([-1, math.inf, "lots", True, None]))}
        elif how == "group usage" and groups:
            groups[draw(st.sampled_from(list(groups)))]["usage"] = {r: 1}
        elif how == "unknown group":
            user["group"] = "nowhere"
        elif how == "unknown weight resource":
            user["weight"] = {f"{r}x": 2}
    return out


@SETTINGS
@given(queue_trees(max_queues=50), st.booleans())
def test_drawn_trees_read_the_same(tree, backlogged):
    data = tree.to_dict()
    if backlogged:
        data["demand"] = "backlogged"
    same_case(data)
    spec = cases.CaseSpec.model_validate(data)  # read field by field, not left to the per-queue read
    assert cases._queue_rows(spec.users, list(spec.resources), set(spec.resources)) is not None
    assert cases._queues_at_once(spec) is not None


@SETTINGS
@given(st.data(), queue_trees(max_queues=50))
def test_changed_trees_read_the_same(data, tree):
    same_case(data.draw(changed(tree.to_dict(), RIGHT)))


@SETTINGS
@given(st.data(), queue_trees(max_queues=50))
def test_broken_trees_are_refused_the_same(data, tree):
    same_case(data.draw(changed(tree.to_dict(), RIGHT + WRONG)))


def test_resources_named_by_numbers_read_the_same():
    """Keys written as numbers are the names of their text (``1`` is the resource ``"1"``), and two
    keys naming one name are refused, as before: by hand, q's request of 2 of resource 1 out of 4."""
    data = {"resources": {1: 4, "mem": 8}, "users": {"q": {"request": {1: 2}, "limit": {"1": 3}}, 2: {"usage": {}}}}
    same_case(data)
    new = cases.parse_case(copy.deepcopy(data), "f.yaml").instance
    assert new.users == ("q", "2") and new.demand.tolist() == [[2.0, 0.0], [0.0, 0.0]]
    twice = {"resources": {1: 4, "1": 8}, "users": {"q": {"request": {1: 2}}}}
    same_case(twice)


#: keys a mapping of a case may have: text (blank, long, on two lines, ...), numbers, other values
KEYS = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["cpu", " ", "", "a\nb", "x" * 300, "\x85", "é"]),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([True, None, (1, 2)]),
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(KEYS, st.integers(0, 3), max_size=6) | st.sampled_from([None, 3, ["cpu"]]))
def test_mapping_keys_read_the_same(mapping):
    """``_names`` against the previous ``_names`` (``case_names``): the same names, or the same
    message, whether a mapping's keys were seen before or not (each mapping is read twice)."""
    for _ in range(2):
        try:
            old = ("read", previous_queues_build.case_names(mapping))
        except ValueError as exc:
            old = ("refused", str(exc))
        try:
            new = ("read", cases._names(mapping))
        except ValueError as exc:
            new = ("refused", str(exc))
        assert new == old
        if old[0] == "read" and isinstance(mapping, dict):
            assert [type(k) for k in new[1]] == [str] * len(mapping)
