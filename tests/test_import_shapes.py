"""The schema base every importer reads its objects through (fairalloc.io.importers.shapes): a
wrong shape is one line naming the file, the object and the field; ``null`` reads as empty."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairalloc.io.importers.common import ImportFailed
from fairalloc.io.importers.shapes import Items, Maybe, Shape, Table, read
from fairalloc.testing import places, replaced, wrong_values


class Resources(Shape):
    requests: Table[Any] = {}


class Container(Shape):
    name: Maybe = None
    resources: Resources = Resources()


class Spec(Shape):
    containers: Items[Container] = []


class Pod(Shape):
    spec: Spec = Spec()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"spec": {"containers": "x"}}, "f.yaml: Pod/p: spec.containers: must be a list (got 'x')"),
        ({"spec": {"containers": [None]}}, "f.yaml: Pod/p: spec.containers[0]: must be a mapping (got None)"),
        ({"spec": {"containers": [{"name": 7}]}}, "f.yaml: Pod/p: spec.containers[0].name: must be text (got 7)"),
        (
            {"spec": {"containers": [{"resources": {"requests": [1]}}]}},
            "f.yaml: Pod/p: spec.containers[0].resources.requests: must be a mapping (got [1])",
        ),
        ([1, 2], "f.yaml: Pod/p: the object must be a mapping (got [1, 2])"),
    ],
)
def test_a_wrong_shape_is_one_line_naming_the_field(data, message):
    with pytest.raises(ImportFailed) as caught:
        read(Pod, data, "f.yaml: Pod/p")
    assert str(caught.value) == message


def test_null_reads_as_empty_and_unknown_fields_are_kept():
    pod = read(Pod, {"spec": {"containers": None}, "status": {"phase": "Running"}}, "f")
    assert pod.spec.containers == []
    assert pod.model_extra == {"status": {"phase": "Running"}}
    assert read(Pod, None, "f") == Pod()


def test_an_inner_object_is_named_by_its_place_in_the_document():
    with pytest.raises(ImportFailed, match=r"^f: items\[1\]: must be a mapping \(got .x.\)$"):
        read(Pod, "x", "f", "items[1]")
    with pytest.raises(ImportFailed, match=r"^f: items\[1\].spec.containers: must be a list"):
        read(Pod, {"spec": {"containers": 1}}, "f", "items[1]")
    with pytest.raises(ImportFailed, match=r"^f: items\[1\]: must be a mapping \(got None\)$"):
        read(Pod, None, "f", "items[1]")


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(st.sampled_from(["spec", "containers", "name", "resources", "requests"]), c, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_any_value_reads_or_fails_in_one_line(data):
    try:
        read(Pod, data, "f")
    except ImportFailed as exc:
        assert "\n" not in str(exc) and str(exc).startswith("f: ")


def test_a_node_cordoned_by_text_is_refused_as_the_api_server_refuses_it():
    from fairalloc.io.importers.shapes import Node

    assert read(Node, {"spec": {"unschedulable": True}}, "f").spec.unschedulable is True
    with pytest.raises(ImportFailed, match=r"^f: spec.unschedulable: must be true or false \(got 'yes'\)$"):
        read(Node, {"spec": {"unschedulable": "yes"}}, "f")


# -- the helpers the importers' shape tests mutate documents with (fairalloc.testing) -----------------


def test_places_are_every_key_and_index_below_the_document():
    document = {"spec": {"containers": [{"name": "c"}, None]}, "kind": "Pod", "items": []}
    assert places(document) == [
        ("spec",),
        ("spec", "containers"),
        ("spec", "containers", 0),
        ("spec", "containers", 0, "name"),
        ("spec", "containers", 1),
        ("kind",),
        ("items",),
    ]
    assert places([[1]]) == [(0,), (0, 0)] and places(7) == [] and places({}) == []


def test_replaced_is_a_copy_and_leaves_the_original_as_it_was():
    document = {"spec": {"containers": [{"name": "c"}]}, "kind": "Pod"}
    before = copy.deepcopy(document)
    changed = replaced(document, ("spec", "containers", 0, "name"), 3)
    assert changed == {"spec": {"containers": [{"name": 3}]}, "kind": "Pod"}
    assert document == before
    changed["kind"] = "Node"  # nothing shared with the original, however deep
    assert document == before and replaced(document, (), None) is None
    assert replaced([0, [1]], [1, 0], "x") == [0, ["x"]]


@given(st.data())
def test_a_wrong_value_at_any_place_changes_that_place_only(data):
    """The value is where the path says; every place outside its subtree is as it was."""
    document = {"a": [1, {"b": "x"}], "c": {"d": None}}
    path = data.draw(st.sampled_from(places(document)))
    value = data.draw(wrong_values("Running", keys=["cpu"]))
    changed = replaced(document, path, value)
    at = changed
    for key in path:
        at = at[key]
    assert at == value  # no NaN is drawn
    assert {p for p in places(changed) if p[: len(path)] != path} == {
        p for p in places(document) if p[: len(path)] != path
    }
