"""The Apache Mesos importer (fairalloc/io/importers/mesos.py): the master's operator JSON in every
shape it is written (``/quota``, ``GET_QUOTA``, ``UPDATE_QUOTA``, ``/weights``, ``GET_WEIGHTS``,
``/roles``, ``GET_ROLES``, ``/master/state``, ``/slaves``, ``GET_STATE``, ``GET_AGENTS``), role trees
with virtual leaves, warnings, one-line errors, the gallery (cases/imported/mesos), and generated
quota and weights JSON for random role trees.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fairalloc.core import registry
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import import_files, mesos
from fairalloc.io.importers.common import Document, ImportFailed, Notes, read_documents

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported" / "mesos"


def _doc(data, file="master.json") -> Document:
    return Document(file, 0, data, "json")


def _convert(*datas):
    notes = Notes()
    draft = mesos.convert([_doc(d, f"f{k}.json") for k, d in enumerate(datas)], notes)
    return draft, notes.warnings


def _write(tmp_path, name, data) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def _entitlements(case: dict, mechanism: str = "mesos-drf") -> dict[str, dict[str, float]]:
    inst = parse_case(case).instance
    bundles = registry.get(mechanism).allocate(inst).bundles
    return {u: dict(zip(inst.resources, bundles[i].tolist())) for i, u in enumerate(inst.users)}


def _scalar(name, value, **extra):
    return {"name": name, "type": "SCALAR", "scalar": {"value": value}, **extra}


# -- detection ----------------------------------------------------------------------------------
def test_detect_counts_every_operator_shape_and_nothing_else():
    shapes = [
        {"infos": []},
        {"type": "GET_QUOTA", "get_quota": {"status": {}}},
        {"type": "UPDATE_QUOTA", "update_quota": {"quota_configs": []}},
        {"role": "a", "guarantee": [_scalar("cpus", 1)]},
        {"role": "a", "limits": {"cpus": 1}},
        [{"role": "a", "weight": 2}],
        {"type": "GET_WEIGHTS", "get_weights": {"weight_infos": []}},
        {"roles": [{"name": "a", "weight": 1}]},
        {"slaves": [], "frameworks": []},
        {"type": "GET_AGENTS", "get_agents": {"agents": []}},
    ]
    assert mesos.detect([_doc(s) for s in shapes]) == len(shapes)
    others = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "roles": [{"name": "x"}]},
        {"scheduler": {"schedulerInfo": {}}},
        [],
        [{"role": "a"}],
        {"type": "GET_HEALTH", "get_health": {"healthy": True}},
    ]
    assert mesos.detect([_doc(o) for o in others]) == 0


def test_an_unrecognised_document_is_a_warning():
    _, warnings = _convert([{"role": "a", "weight": 2}], {"hello": 1})
    assert warnings == [
        "f1.json: document: not a Mesos operator endpoint's JSON (quota, weights, roles, state): skipped"
    ]


# -- quota --------------------------------------------------------------------------------------
def test_legacy_quota_request_guarantee_is_also_the_limit():
    """``POST /quota`` (QuotaRequest): ``QuotaHandler::_set`` stores guarantees and limits alike."""
    draft, warnings = _convert({"role": "r", "guarantee": [_scalar("cpus", 12), _scalar("mem", 6144.5)]})
    assert draft.users["r"]["guarantee"] == {"cpus": Decimal(12), "mem": Decimal("6144.5")}
    assert draft.users["r"]["limit"] == draft.users["r"]["guarantee"]
    assert warnings == [] and draft.policy == "mesos-drf" and draft.system == "mesos"
    assert draft.units == {"cpus": "cores", "mem": "MiB"}


def test_quota_status_configs_win_over_the_infos_beside_them():
    """The master writes both (``QuotaHandler::_status``); ``infos`` only repeat the guarantees."""
    status = {
        "infos": [{"role": "a", "guarantee": [_scalar("cpus", 2)]}],
        "configs": [{"role": "a", "guarantees": {"cpus": {"value": 2}}, "limits": {"cpus": {"value": 8}}}],
    }
    draft, warnings = _convert({"type": "GET_QUOTA", "get_quota": {"status": status}})
    assert draft.users["a"] == {"guarantee": {"cpus": 2}, "limit": {"cpus": 8}}
    assert warnings == []


def test_quota_config_maps_with_plain_numbers_and_update_quota():
    draft, _ = _convert(
        {"role": "a", "guarantees": {"cpus": 1, "gpus": 2}, "limits": {"mem": 4096}},
        {"type": "UPDATE_QUOTA", "update_quota": {"quota_configs": [{"role": "b", "limits": {"disk": {"value": 0}}}]}},
        {"quota_configs": [{"role": "c", "limits": {"foo": {"value": 3}}}]},
    )
    assert draft.users["a"] == {"guarantee": {"cpus": 1, "gpus": 2}, "limit": {"mem": 4096}}
    assert draft.users["b"] == {"limit": {"disk": 0}}  # a limit of 0 means something: kept
    assert draft.users["c"] == {"limit": {"foo": 3}}
    assert draft.units == {"cpus": "cores", "disk": "MiB", "foo": "count", "gpus": "count", "mem": "MiB"}


def test_v1_set_quota_call():
    body = {"quota_request": {"role": "a", "guarantee": [_scalar("cpus", 3)]}}
    draft, _ = _convert({"type": "SET_QUOTA", "set_quota": body})
    assert draft.users["a"] == {"guarantee": {"cpus": 3}, "limit": {"cpus": 3}}


def test_a_conflicting_second_value_replaces_the_first_with_a_warning():
    draft, warnings = _convert({"role": "a", "limits": {"cpus": 4}}, {"role": "a", "limits": {"cpus": 6}})
    assert draft.users["a"]["limit"] == {"cpus": 6}
    assert warnings == ["f1.json: role a: limits: {cpus: 6} replaces the {cpus: 4} of f0.json (limits)"]


def test_quota_on_a_nested_role_is_kept_with_a_warning():
    draft, warnings = _convert({"role": "eng/dev", "limits": {"cpus": 2}})
    assert draft.groups == {"eng": {}} and draft.users["eng/dev"] == {"group": "eng", "limit": {"cpus": 2}}
    assert warnings == [
        "f0.json: role eng/dev: limits: Mesos refuses quota on nested roles (QuotaHandler::update); "
        "the model honours it anyway"
    ]


# -- weights ------------------------------------------------------------------------------------
def test_weights_in_every_shape():
    draft, warnings = _convert(
        [{"role": "role1", "weight": 2.0}, {"role": "role2", "weight": 3.5}],
        {"type": "GET_WEIGHTS", "get_weights": {"weight_infos": [{"role": "r3", "weight": 4}]}},
        {"type": "UPDATE_WEIGHTS", "update_weights": {"weight_infos": [{"role": "r4", "weight": 1.0}]}},
    )
    assert {u: s.get("weight") for u, s in draft.users.items()} == {"role1": 2, "role2": 3.5, "r3": 4, "r4": None}
    assert warnings == []


# -- roles --------------------------------------------------------------------------------------
def test_roles_endpoint_subtree_amounts_and_virtual_leaves():
    """``/roles`` gives subtree amounts (``allocatedToRoleSubtree``); a role's own allocation is
    its subtree's less its sub-roles', and a role with sub-roles holding some itself is ``<role>/.``."""
    roles = {
        "roles": [
            {"name": "eng", "weight": 3.0, "allocated": {"cpus": 6, "mem": 3}, "quota": {"guarantee": {}, "limit": {}}},
            {"name": "eng/dev", "weight": 1.0, "allocated": {"cpus": 4, "mem": 1}},
            {"name": "eng/ml", "weight": 1.0, "allocated": {"cpus": 1, "mem": 1, "gpus": 0}},
            {"name": "ops", "weight": 1.0, "allocated": {"cpus": 1, "mem": 4}},
            {"name": "a/b/c", "weight": 2, "allocated": {}},
        ]
    }
    draft, warnings = _convert(roles)
    assert draft.groups == {"a": {}, "a/b": {"parent": "a"}, "eng": {"weight": 3}}
    assert draft.users["eng/."] == {"group": "eng", "usage": {"cpus": 1, "mem": 1}, "request": {"cpus": 1, "mem": 1}}
    assert draft.users["eng/dev"]["usage"] == {"cpus": 4, "mem": 1} and draft.users["eng/dev"]["group"] == "eng"
    assert draft.users["a/b/c"] == {"group": "a/b", "weight": 2}
    assert "weight" not in draft.users["eng/."]  # the virtual leaf weighs 1 (models/mesos_drf.py)
    assert all("request: the master's JSON shows no pending demand" in w for w in warnings)
    assert sorted(w.split(": ")[1] for w in warnings) == ["role eng", "role eng/dev", "role eng/ml", "role ops"]


def test_roles_endpoint_quota_and_reserved_and_deprecated_resources():
    roles = {
        "roles": [
            {
                "name": "dev",
                "weight": 1.0,
                "quota": {"role": "dev", "guarantee": {"cpus": 1.0}, "limit": {"cpus": 10.0}, "consumed": {"cpus": 2}},
                "resources": {"cpus": 2.0, "mem": 1024.0, "ports": "[31000-31001]"},
                "reserved": {"cpus": 2.0},
                "frameworks": [],
            },
            {"name": "old", "weight": 1.0, "quota": {"role": "old", "guarantee": [_scalar("cpus", 5)]}},
        ]
    }
    draft, warnings = _convert(roles)
    assert draft.users["dev"]["guarantee"] == {"cpus": 1} and draft.users["dev"]["limit"] == {"cpus": 10}
    assert draft.users["dev"]["usage"] == {"cpus": 2, "mem": 1024}
    assert draft.users["old"] == {"guarantee": {"cpus": 5}, "limit": {"cpus": 5}}  # Mesos < 1.9's QuotaInfo
    assert warnings == [
        "f0.json: role dev: resources.ports: a RANGES or SET resource ('[31000-31001]') is not shared by quantity: "
        "skipped",
        "f0.json: role dev: resources: allocated plus offered resources (the master's sum): read as usage",
        "f0.json: role dev: reserved: reservations are not modelled (counted as shared capacity)",
        "f0.json: role dev: request: the master's JSON shows no pending demand: request = usage (what the role holds)",
    ]


def test_a_role_holding_less_than_its_sub_roles_is_warned():
    draft, warnings = _convert(
        {"roles": [{"name": "a", "allocated": {"cpus": 1}}, {"name": "a/b", "allocated": {"cpus": 3}}]}
    )
    assert "a/." not in draft.users
    assert (
        "f0.json: role a: allocated: less than its sub-roles hold ({cpus: 2} short): its own usage read as 0 there"
        in warnings
    )


# -- state --------------------------------------------------------------------------------------
def _state():
    agent = {"hostname": "h1", "resources": {"cpus": 4, "gpus": 0, "mem": 4096, "disk": 100, "ports": "[31000-32000]"}}
    agent2 = {
        "hostname": "h2",
        "resources": {"cpus": 4.5, "gpus": 0, "mem": 2048, "disk": 0, "cpus_revocable": 2},
        "reserved_resources": {"eng": {"cpus": 1}},
    }
    fws = [
        {"name": "spark", "role": "eng/dev", "used_resources": {"cpus": 2, "mem": 512, "gpus": 0},
         "offered_resources": {"cpus": 1}},
        {"name": "marathon", "role": "eng/dev", "used_resources": {"cpus": 1, "mem": 512}},
        {"name": "idle", "role": "ops", "used_resources": {"cpus": 0, "mem": 0}},
        {"name": "multi", "roles": ["eng", "ops"], "used_resources": {"cpus": 3, "mem": 3},
         "tasks": [{"name": "t1", "role": "eng", "state": "TASK_RUNNING", "resources": {"cpus": 1, "mem": 1}},
                   {"name": "t2", "role": "ops", "state": "TASK_RUNNING", "resources": {"cpus": 2, "mem": 2}},
                   {"name": "t3", "role": "ops", "state": "TASK_FINISHED", "resources": {"cpus": 9, "mem": 9}}]},
    ]  # fmt: skip
    return {"slaves": [agent, agent2], "frameworks": fws}


def test_state_capacity_from_agents_and_usage_from_frameworks():
    draft, warnings = _convert(_state())
    assert draft.capacity == {"cpus": Decimal("8.5"), "mem": 6144, "disk": 100}  # zero gpus dropped
    assert draft.capacity_from == "nodes"
    assert draft.users["eng/dev"]["usage"] == {"cpus": 3, "mem": 1024}  # offered_resources are not held
    assert draft.users["eng/."]["usage"] == {"cpus": 1, "mem": 1} and draft.groups == {"eng": {}}
    assert draft.users["ops"]["usage"] == {"cpus": 2, "mem": 2}
    expected = [
        "f0.json: agent h1: slaves[0].resources.ports: a RANGES or SET resource",
        "f0.json: agent h2: slaves[1].resources.cpus_revocable: revocable resources are not modelled",
        "f0.json: agent h2: slaves[1].reserved_resources: reservations for eng are not modelled",
        "f0.json: framework multi: frameworks[3].used_resources: a multi-role framework's usage is not split",
    ]
    for text in expected:
        assert any(w.startswith(text) for w in warnings), (text, warnings)
    assert len([w for w in warnings if "request = usage" in w]) == 3


def test_v1_state_agents_and_tasks():
    res = [_scalar("cpus", 2.0, role="*"), _scalar("mem", 1024.0), {"name": "ports", "type": "RANGES", "ranges": {}}]
    task_res = [_scalar("cpus", 1.0, allocation_info={"role": "web"}), _scalar("mem", 128.0)]
    state = {
        "type": "GET_STATE",
        "get_state": {
            "get_agents": {"agents": [{"agent_info": {"hostname": "x", "resources": res}, "total_resources": res}]},
            "get_frameworks": {"frameworks": [{"framework_info": {"id": {"value": "f"}, "role": "batch"}}]},
            "get_tasks": {
                "tasks": [
                    {"name": "a", "framework_id": {"value": "f"}, "state": "TASK_RUNNING", "resources": task_res},
                    {"name": "b", "framework_id": {"value": "f"}, "state": "TASK_RUNNING", "resources": [task_res[1]]},
                ]
            },
        },
    }
    agents = {"type": "GET_AGENTS", "get_agents": {"agents": [{"agent_info": {"hostname": "y", "resources": res}}]}}
    draft, warnings = _convert(state, agents)
    assert draft.capacity == {"cpus": 4, "mem": 2048}
    assert draft.users["web"]["usage"] == {"cpus": 1, "mem": 128} and draft.users["batch"]["usage"] == {"mem": 128}
    assert "f0.json: agent x: get_state.get_agents.agents[0].total_resources[2] (ports): RANGES resources are not " \
        "shared by quantity: skipped" in warnings  # fmt: skip
    assert "f1.json: agent y: get_agents.agents[0].agent_info.resources[2] (ports): RANGES resources are not " \
        "shared by quantity: skipped" in warnings  # fmt: skip


def test_reserved_and_revocable_resource_messages():
    res = [
        _scalar("cpus", 1, reservations=[{"type": "STATIC", "role": "eng"}]),
        _scalar("mem", 1, revocable={}),
        {"name": "zones", "type": "SET", "set": {"item": ["a"]}},
    ]
    draft, warnings = _convert({"role": "eng", "guarantee": res})
    assert draft.users["eng"]["guarantee"] == {"cpus": 1}
    assert warnings == [
        "f0.json: role eng: guarantee[0] (cpus): reserved for role eng: reservations are not modelled",
        "f0.json: role eng: guarantee[1] (mem): revocable resources are not modelled: skipped",
        "f0.json: role eng: guarantee[2] (zones): SET resources are not shared by quantity: skipped",
    ]


# -- one-line errors ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"role": "a", "limits": {"mem": "4Gi"}},
            "f0.json: role a: limits.mem: must be a number, got '4Gi' "
            "(Mesos amounts are plain numbers, no unit suffixes)",
        ),
        ({"role": "a", "limits": {"cpus": -1}}, "f0.json: role a: limits.cpus: -1 is negative"),
        (
            {"role": "a", "guarantee": [_scalar("cpus", "2")]},
            "f0.json: role a: guarantee[0].scalar.value: must be a number, got '2'",
        ),
        ({"role": "a", "guarantee": [{"type": "SCALAR"}]}, "f0.json: role a: guarantee[0]: a Resource needs a name"),
        (
            {"role": "a", "guarantee": [{"name": "cpus", "type": "SCALAR"}]},
            "f0.json: role a: guarantee[0].scalar.value: missing for the SCALAR resource cpus",
        ),
        ([{"role": "a", "weight": 0}], "f0.json: role a: [0].weight: must be positive (got 0)"),
        ([{"role": "a", "weight": True}], "f0.json: role a: [0].weight: must be a number, got True"),
        ({"roles": [{"name": "a/./b"}]}, "f0.json: role a/./b: roles[0].name: not a valid Mesos role name"),
        ({"roles": [{"name": 3}]}, "f0.json: role: roles[0].name: must be a role name (got 3)"),
        ({"roles": [{"name": "a", "allocated": 5}]}, "f0.json: role a: allocated: must be a list or map of resources"),
        ({"type": "UPDATE_QUOTA"}, "f0.json: UPDATE_QUOTA: update_quota: missing (the call's body)"),
        (
            {"slaves": [{"resources": {"cpus": {"x": 1}}}]},
            "f0.json: agent 0: slaves[0].resources.cpus: must be a number",
        ),
    ],  # fmt: skip
)
def test_bad_values_are_one_line_errors(data, message):
    with pytest.raises(ImportFailed) as info:
        _convert(data)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_a_json_trailing_comma_is_the_readers_one_line_error(tmp_path):
    path = _write(tmp_path, "weights.json", '[{"role": "a", "weight": 2.0},]')
    with pytest.raises(ImportFailed) as info:
        read_documents([path])
    assert str(info.value) == f"{path}: not valid JSON: Expecting value at line 1, column 31"


def test_a_zero_capacity_resource_named_by_a_role_is_kept(tmp_path):
    paths = [_write(tmp_path, "slaves.json", {"slaves": [{"resources": {"cpus": 4, "gpus": 0}}]}),
             _write(tmp_path, "quota.json", {"role": "a", "limits": {"gpus": 0}})]  # fmt: skip
    case, _ = import_files(paths, system="mesos")
    assert case["resources"] == {"cpus": 4, "gpus": 0} and case["users"]["a"] == {"limit": {"gpus": 0}}


# -- entitlements worked by hand ----------------------------------------------------------------
_TREE = {
    "roles": [
        {"name": "eng", "weight": 3.0, "allocated": {"cpus": 6, "mem": 3}},
        {"name": "eng/dev", "weight": 1.0, "allocated": {"cpus": 4, "mem": 1}},
        {"name": "eng/ml", "weight": 1.0, "allocated": {"cpus": 1, "mem": 1}},
        {"name": "ops", "weight": 1.0, "allocated": {"cpus": 1, "mem": 4}},
    ]
}
_AGENTS = {
    "slaves": [
        {"hostname": "a", "resources": {"cpus": 3, "mem": 3}},
        {"hostname": "b", "resources": {"cpus": 3, "mem": 3}},
    ]
}


def _fr(x: Fraction) -> float:
    return x.numerator / x.denominator


def test_hierarchical_entitlement_by_hand(tmp_path):
    """Capacity R = (6 cpus, 6 mem); requests = usage: eng/dev (4, 1), eng/ml (1, 1), eng/. (1, 1),
    ops (1, 4); eng weighs 3.

    Root: ops's key k = max(1/6, 4/6) / 1 = 2/3.  Group eng's shape A = sum_c (w_c / kappa_c) A_c
    with kappa_dev = 4/6, kappa_ml = kappa_. = 1/6: 1.5 (4, 1) + 6 (1, 1) + 6 (1, 1) = (18, 13.5),
    k_eng = max(18/6, 13.5/6) / 3 = 1.  At level t: u_eng = t, u_ops = 1.5 t; cpus 18 t + 1.5 t <= 6
    and mem 13.5 t + 6 t <= 6 both give t = 4/13: ops gets 6/13 (1, 4), eng the bundle (72/13, 54/13).
    Inside eng (keys 2/3, 1/6, 1/6, units 1.5 t, 6 t, 6 t): ml and eng/. reach their request at
    t = 1/6, dev holding 1/4 unit; dev then grows alone on the cpus left, 72/13 - 3 = 33/13, by
    33/52 units: 23/26 units, (46/13, 23/26).
    """
    paths = [_write(tmp_path, "roles.json", _TREE), _write(tmp_path, "slaves.json", _AGENTS)]
    case, _ = import_files(paths, system="mesos")
    got = _entitlements(case)
    want = {
        "ops": (Fraction(6, 13), Fraction(24, 13)),
        "eng/dev": (Fraction(46, 13), Fraction(23, 26)),
        "eng/ml": (Fraction(1), Fraction(1)),
        "eng/.": (Fraction(1), Fraction(1)),
    }
    for queue, (cpus, mem) in want.items():
        assert got[queue]["cpus"] == pytest.approx(_fr(cpus), rel=1e-9), queue
        assert got[queue]["mem"] == pytest.approx(_fr(mem), rel=1e-9), queue


def test_hierarchical_entitlement_with_a_quota_guarantee_by_hand(tmp_path):
    """As above, with GET_QUOTA guaranteeing ops 3 mem (real form: configs beside infos).

    ops's guarantee is 3/4 unit of (1, 4), held first: (0.75, 3).  eng then grows at u = t while
    mem 13.5 t + 3 <= 6: t = 2/9, bundle (4, 3), mem saturated.  Inside eng: ml and eng/. reach
    (1, 1) at t = 1/6 with dev at 1/4 unit (1, 0.25); dev grows on the 1 cpu left by 1/4 unit:
    (2, 0.5).
    """
    quota = {
        "type": "GET_QUOTA",
        "get_quota": {
            "status": {
                "infos": [{"role": "ops", "guarantee": [_scalar("mem", 3)]}],
                "configs": [{"role": "ops", "guarantees": {"mem": {"value": 3}}}],
            }
        },
    }
    paths = [_write(tmp_path, n, d) for n, d in (("roles.json", _TREE), ("slaves.json", _AGENTS), ("q.json", quota))]
    case, _ = import_files(paths, system="mesos")
    assert case["users"]["ops"]["guarantee"] == {"mem": 3} and "limit" not in case["users"]["ops"]
    got = _entitlements(case)
    want = {"ops": (0.75, 3), "eng/dev": (2, 0.5), "eng/ml": (1, 1), "eng/.": (1, 1)}
    for queue, (cpus, mem) in want.items():
        assert got[queue]["cpus"] == pytest.approx(cpus, rel=1e-9), queue
        assert got[queue]["mem"] == pytest.approx(mem, rel=1e-9), queue


# -- the gallery --------------------------------------------------------------------------------
EXAMPLES = sorted(p.parent for p in GALLERY.glob("*/expect.yaml"))


def test_the_gallery_has_two_or_more_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("folder", EXAMPLES, ids=lambda p: p.name)
def test_gallery_example(folder):
    """The same checks as tests/test_import_gallery.py, with the system named (the other importers'
    detection is theirs to test) and Mesos' own detection of every file."""
    spec = yaml.safe_load((folder / "expect.yaml").read_text())
    files = [str(folder / f) for f in spec["files"]]
    docs = read_documents(files)
    assert mesos.detect(docs) == len(docs) and spec["system"] == "mesos"
    capacity = {r: str(v) for r, v in (spec.get("capacity") or {}).items()} or None
    case, warnings = import_files(files, system="mesos", capacity=capacity, name=folder.name)
    for text in spec["warnings"]:
        assert any(text in w for w in warnings), (text, warnings)
    assert len(warnings) == len(spec["warnings"]), warnings
    for key in ("policy", "resources", "units"):
        assert case[key] == spec["case"][key]
    for queue, fields in spec["case"]["users"].items():
        assert case["users"][queue] == fields, queue
    got = _entitlements(case)
    for queue, amounts in spec["entitlements"]["mesos-drf"].items():
        for resource, amount in amounts.items():
            assert got[queue][resource] == pytest.approx(amount, rel=1e-6, abs=1e-9), (queue, resource)


# -- generated quota and weights ----------------------------------------------------------------
_component = st.sampled_from(["a", "b", "c", "dev", "prod"])
_paths = st.lists(_component, min_size=1, max_size=3).map("/".join)
_amount = st.one_of(st.integers(0, 10**6), st.decimals(0, 10**5, places=3, allow_nan=False, allow_infinity=False))
_amounts = st.dictionaries(st.sampled_from(["cpus", "mem", "disk", "gpus", "fpga"]), _amount, min_size=1)


@settings(max_examples=60, deadline=None)
@given(
    weights=st.dictionaries(_paths, st.decimals("0.001", 1000, places=3), max_size=6),
    quotas=st.dictionaries(_paths, st.tuples(_amounts, _amounts), max_size=6),
    as_list=st.booleans(),
)
def test_generated_quota_and_weights_for_random_role_trees(weights, quotas, as_list):
    """Every role's weight, guarantee and limit arrive where the role tree puts it (a role with
    sub-roles is a group), whatever shape the JSON is written in."""
    weights_json = [{"role": r, "weight": float(w)} for r, w in weights.items()]
    configs = []
    for role, (g, lim) in quotas.items():
        if as_list:
            configs.append({"role": role, "guarantees": {k: {"value": float(v)} for k, v in g.items()},
                            "limits": {k: {"value": float(v)} for k, v in lim.items()}})  # fmt: skip
        else:
            configs.append({"role": role, "guarantees": {k: float(v) for k, v in g.items()},
                            "limits": {k: float(v) for k, v in lim.items()}})  # fmt: skip
    docs = [
        _doc(weights_json, "w.json"),
        _doc({"type": "UPDATE_QUOTA", "update_quota": {"quota_configs": configs}}, "q.json"),
    ]
    notes = Notes()
    draft = mesos.convert(docs if weights_json else docs[1:], notes)
    roles = set(weights) | set(quotas)
    every = roles | {"/".join(r.split("/")[:k]) for r in roles for k in range(1, r.count("/") + 1)}
    internal = {r.rsplit("/", 1)[0] for r in every if "/" in r}
    assert set(draft.groups) == internal and set(draft.users) == every - internal
    for role in every:
        spec = draft.groups[role] if role in internal else draft.users[role]
        parent = role.rsplit("/", 1)[0] if "/" in role else None
        assert spec.get("parent" if role in internal else "group") == parent
        w = weights.get(role)
        if w is None or float(w) == 1.0:
            assert "weight" not in spec
        else:
            assert float(spec["weight"]) == pytest.approx(float(w), rel=1e-12)
        g, lim = quotas.get(role, ({}, {}))
        assert {k: float(v) for k, v in spec.get("guarantee", {}).items()} == pytest.approx(
            {k: float(v) for k, v in g.items()}
        )
        assert {k: float(v) for k, v in spec.get("limit", {}).items()} == pytest.approx(
            {k: float(v) for k, v in lim.items()}
        )
    nested = [f"role {r}" for r in quotas if "/" in r for _ in ("guarantees", "limits")]
    assert sorted(w.split(": ")[1] for w in notes.warnings if "nested roles" in w) == sorted(nested)
