"""The Python API checks its arguments: a wrong type is a ``TypeError`` naming the argument and what
it expects; the right type with a value that cannot be used is a :class:`CaseError` (or, for a
name, an :class:`UnknownNameError`) naming the field.  Never an AttributeError from deep inside.

``solve`` (and ``program``, ``check_property``, ``verify``) take a case mapping as a case: it is
read by :func:`fairalloc.parse_case`, as a YAML file would be.
"""

from __future__ import annotations

import numpy as np
import pytest

import fairalloc
from fairalloc.analysis.falsify import falsify
from fairalloc.analysis.manipulation import verify
from fairalloc.analysis.properties import check, check_property
from fairalloc.core.errors import CaseError, FairallocError, UnknownNameError
from fairalloc.core.queues import Queues
from fairalloc.core.registry import Mechanism

#: the DRF paper's section 4.1 example as a mapping: <9 CPU, 18 GB>, A <1, 4>, B <3, 1>
PAPER = {
    "resources": {"cpu": 9, "mem": 18},
    "users": {"A": {"demand": {"cpu": 1, "mem": 4}}, "B": {"demand": {"cpu": 3, "mem": 1}}},
}
CASE = fairalloc.load_case("drf-section-4-1")


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: fairalloc.load_case(123), "path_or_name"),
        (lambda: fairalloc.load_case(b"drf-section-4-1"), "path_or_name"),
        (lambda: fairalloc.load_case(None), "path_or_name"),
        (lambda: fairalloc.parse_case(PAPER, where=5), "where"),
        (lambda: fairalloc.solve(None, "drf"), "instance"),
        (lambda: fairalloc.solve(np.ones((2, 2)), "drf"), "instance"),
        (lambda: fairalloc.solve("drf-section-4-1", "drf"), "instance"),
        (lambda: fairalloc.solve(CASE, 5), "mechanism"),
        (lambda: fairalloc.solve(CASE, None), "mechanism"),
        (lambda: fairalloc.solve(CASE, "drf", 5), "method"),
        (lambda: fairalloc.program(None, "drf"), "instance"),
        (lambda: fairalloc.get(5), "mechanism"),
        (lambda: fairalloc.register(5), "name"),
        (lambda: fairalloc.register("x")(5), "register"),
        (lambda: fairalloc.available(5), "kind"),
        (lambda: fairalloc.Instance(None, [[1.0]]), "resources"),
        (lambda: fairalloc.Instance("9", [[1.0]]), "resources"),
        (lambda: fairalloc.Instance.from_arrays([9.0], None), "demand"),
        (lambda: fairalloc.Instance([9.0], [[1.0]], weights="2"), "weight"),
        (lambda: Queues.build(5, {}, []), "resources"),
        (lambda: Queues.build("cpu", {}, []), "resources"),
        (lambda: Queues.build(["cpu"], [("a", {})], []), "nodes"),
        (lambda: Queues.build(["cpu"], {"a": 5}, []), "nodes.a"),
        (lambda: Queues.build(["cpu"], {"a": {"weight": "2"}}, []), "nodes.a.weight"),
        (lambda: Queues.build(["cpu"], {"a": {"priority": None}}, []), "nodes.a.priority"),
        (lambda: Queues.build(["cpu"], {"a": {"limit": "x"}}, []), "nodes.a.limit"),
        (lambda: Queues.build(["cpu"], {"a": {}}, 5), "groups"),
        (lambda: check_property("drf", None, "sp"), "instance"),
        (lambda: check_property(5, CASE, "sp"), "mechanism"),
        (lambda: check_property("drf", CASE, 5), "property"),
        (lambda: check_property("drf", CASE, "sp", seed="x"), "seed"),
        (lambda: check("drf", None), "instance"),
        (lambda: check("drf", CASE, 5), "properties"),
        (lambda: check("drf", CASE, ["si", 5]), "properties"),
        (lambda: verify("drf", None), "instance"),
        (lambda: verify("drf", CASE, seed=1.5), "seed"),
        (lambda: falsify(5, "sp", trials=1), "mechanism"),
        (lambda: falsify("drf", 5, trials=1), "property"),
        (lambda: falsify("drf", "sp", trials="3"), "trials"),
        (lambda: falsify("drf", "sp", trials=1, space="x"), "space"),
    ],
)
def test_a_wrong_type_is_a_type_error_naming_the_argument(call, argument):
    with pytest.raises(TypeError, match=rf"^{argument}: expected"):
        call()


@pytest.mark.parametrize(
    "call, error, field",
    [
        (lambda: fairalloc.load_case("no-such-case"), CaseError, "no-such-case: no such file"),
        (lambda: fairalloc.parse_case(5), CaseError, "case: a case must be a mapping"),
        (lambda: fairalloc.solve({"resources": {"cpu": 1}}, "drf"), CaseError, "users: required field"),
        (lambda: fairalloc.solve({**PAPER, "users": {"A": {"demand": {"gpu": 1}}}}, "drf"), CaseError, "demand.gpu"),
        (lambda: fairalloc.solve(CASE, "no-such-mechanism"), UnknownNameError, "mechanism: unknown mechanism"),
        (lambda: fairalloc.solve(CASE, "drf", "fastest"), UnknownNameError, "method: unknown method"),
        (lambda: fairalloc.available("dynamc"), UnknownNameError, "kind: unknown kind 'dynamc'.*dynamic"),
        (lambda: fairalloc.Instance([9.0, 1.0], [[1.0]]), CaseError, "demand: has 1 columns for 2 resources"),
        (
            lambda: fairalloc.Instance.from_arrays([9.0], np.array([[1.0 + 2j]])),
            CaseError,
            r"demand: must be real numbers \(got complex values\)",
        ),
        (lambda: fairalloc.Instance([9.0j], [[1.0]]), CaseError, "resources: must be real numbers"),
        (lambda: Queues.build(["cpu"], {"a": {"guarantee": [-1.0]}}, []), CaseError, "nodes.a.guarantee: must be NaN"),
        (lambda: Queues.build(["cpu"], {"a": {"limit": [np.nan]}}, []), CaseError, "nodes.a.limit: must be inf"),
        (lambda: Queues.build(["cpu"], {"a": {"usage": [np.inf]}}, []), CaseError, "nodes.a.usage: must be a finite"),
        (lambda: Queues.build(["cpu"], {"a": {"limit": [1, 2]}}, []), CaseError, r"nodes.a.limit: expected 1 numbers"),
        (
            lambda: Queues.build(["cpu"], {"a": {"weight": -1}}, []),
            CaseError,
            "nodes.a.weight: must be a finite non-negative",
        ),
        (lambda: Queues.build(["cpu"], {"a": {"weight": np.nan}}, []), CaseError, "nodes.a.weight"),
        (lambda: Queues.build(["cpu"], {"a": {"parent": "g"}}, []), CaseError, "nodes.a.parent: unknown group 'g'"),
        (lambda: Queues.build(["cpu"], {"a": {}}, ["g"]), CaseError, "groups.g: a group that is not one of the nodes"),
        (lambda: check_property("drf", CASE, "sp", seed=-1), FairallocError, "seed: must lie in"),
    ],
)
def test_a_wrong_value_is_an_error_naming_the_field(call, error, field):
    with pytest.raises(error, match=field):
        call()


def test_a_case_mapping_is_solved_as_its_file_would_be():
    """Section 4.1 of the DRF paper: A gets 3 tasks <3 CPU, 12 GB>, B 2 tasks <6 CPU, 2 GB>."""
    assert fairalloc.solve(PAPER, "drf").tasks.tolist() == pytest.approx([3.0, 2.0])
    assert fairalloc.solve(PAPER, "drf").tasks.tolist() == pytest.approx(fairalloc.solve(CASE, "drf").tasks.tolist())
    assert check_property("drf", PAPER, "sharing_incentive").holds


def test_a_not_given_guarantee_is_nan_and_is_allocated():
    """NaN in a guarantee means "not given" for that resource (as a case file leaving it out): the
    queue is configured with a guarantee on mem only.  By hand: a <2, 4> and b <4, 2> of <10, 10>
    both fit (6 of each), so each gets its whole request under the policies that share the whole
    cluster (Volcano capacity and Kueue give only what quotas configure: nothing here)."""
    q = Queues.build(["cpu", "mem"], {"a": {"guarantee": [np.nan, 5.0]}, "b": {}}, [])
    inst = fairalloc.Instance(
        [10, 10], [[2, 4], [4, 2]], users=["a", "b"], max_tasks=[1, 1], resources=["cpu", "mem"], queues=q
    )
    for policy in ("yunikorn-fair", "mesos-drf", "hdrf-fluid", "yarn-fair", "drf"):
        assert fairalloc.solve(inst, policy).tasks.tolist() == pytest.approx([1.0, 1.0]), policy


def test_a_mechanism_object_is_taken_as_is():
    mech = fairalloc.get("drf")
    assert isinstance(mech, Mechanism) and fairalloc.get(mech) is mech
