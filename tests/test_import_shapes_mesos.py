"""The schemas of the Mesos master's JSON (fairalloc/io/importers/mesos_shapes.py) at the Mesos
importer's boundary: every object of a wrong shape (a field that must be a mapping given a list or
text, a list given a mapping, a name given a number, a ``null`` list item, a whole object a list) is
one line naming the file, the object and the field, through the CLI (exit 2, nothing written); and
any one field of a real answer (the gallery, cases/imported/mesos, and a v0 ``/master/state``)
replaced by a value of the wrong type either still imports to a case the case loader takes, or is
that one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.cli import main
from fairalloc.io.importers import import_files
from fairalloc.testing import assert_imports_or_one_line, places, replaced, wrong_values

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported" / "mesos"


def _cpus(value=1, **extra):
    return {"name": "cpus", "type": "SCALAR", "scalar": {"value": value}, **extra}


#: ``GET /master/state`` as SlaveWriter and FullFrameworkWriter write it (src/master/readonly_handler.cpp):
#: agents' resources as the map of ``model(const Resources&)``, a single-role framework, a multi-role
#: one whose usage is read from its tasks (``json(ObjectWriter*, const Task&)`` adds each task's role)
STATE = {
    "slaves": [
        {
            "id": "S0",
            "hostname": "a1",
            "resources": {"cpus": 8, "mem": 8192, "disk": 0, "ports": "[31000-32000]"},
            "reserved_resources": {"ops": {"cpus": 1}},
            "unreserved_resources": {"cpus": 7, "mem": 8192},
        },
        {"id": "S1", "hostname": "a2", "unreserved_resources": {"cpus": 4, "mem": 4096}},
    ],
    "frameworks": [
        {"id": "F0", "name": "spark", "role": "eng/dev", "used_resources": {"cpus": 2, "mem": 1024}},
        {
            "id": "F1",
            "name": "multi",
            "roles": ["eng/ml", "ops"],
            "used_resources": {"cpus": 3, "mem": 2048},
            "tasks": [
                {"id": "t0", "name": "a", "state": "TASK_RUNNING", "role": "eng/ml", "resources": {"cpus": 1}},
                {"id": "t1", "name": "b", "state": "TASK_RUNNING", "role": "ops", "resources": {"cpus": 2}},
                {"id": "t2", "name": "c", "state": "TASK_FINISHED", "role": "ops", "resources": {"cpus": 5}},
            ],
        },
    ],
}

#: a v1 ``GET_STATE`` answer (master.proto ``Response.GetState``) with tasks whose role is in their
#: resources' ``allocation_info``, a framework's ``framework_info`` and an executor
V1_STATE = {
    "type": "GET_STATE",
    "get_state": {
        "get_agents": {"agents": [{"agent_info": {"hostname": "h"}, "total_resources": [_cpus(6)]}]},
        "get_frameworks": {
            "frameworks": [{"framework_info": {"id": {"value": "F"}, "name": "fw", "roles": ["eng"], "role": "eng"}}]
        },
        "get_tasks": {
            "tasks": [
                {
                    "name": "t",
                    "framework_id": {"value": "F"},
                    "state": "TASK_RUNNING",
                    "resources": [_cpus(2, allocation_info={"role": "eng"})],
                }
            ]
        },
        "get_executors": {"executors": [{"executor_info": {"resources": [_cpus(1)]}}]},
    },
}


# -- (a) every kind: a wrong shape is one line naming file, object and field ----------------------
_WRONG = [
    # QuotaStatus (GET /quota) and its QuotaInfo and QuotaConfig parts
    ({"infos": [], "configs": {"role": "a"}}, "quota: configs: must be a list (got {'role': 'a'})"),
    ({"infos": [], "configs": [None]}, "quota: configs[0]: must be a mapping (got None)"),
    ({"configs": [{"role": "a", "guarantees": "cpus"}]},
     "quota: configs[0].guarantees: must be a list or map of resources (got 'cpus')"),
    ({"configs": [{"role": 3, "limits": {"cpus": 1}}]}, "role: configs[0].role: must be a role name (got 3)"),
    ({"infos": [{"role": "a", "guarantee": [{"name": "cpus", "type": "SCALAR", "scalar": "2"}]}]},
     "role a: infos[0].guarantee[0].scalar: must be a mapping (got '2')"),
    ({"infos": [{"role": "a", "guarantee": [{"name": 5, "type": "SCALAR"}]}]},
     "role a: infos[0].guarantee[0].name: must be text (got 5)"),
    ({"infos": [{"role": "a", "guarantee": [_cpus(reservations={"role": "x"})]}]},
     "role a: infos[0].guarantee[0].reservations: must be a list (got {'role': 'x'})"),
    ({"infos": [{"role": "a", "guarantee": [_cpus(reservations=[{"role": 9}])]}]},
     "role a: infos[0].guarantee[0].reservations[0].role: must be text (got 9)"),
    ({"infos": [{"role": "a", "guarantee": [_cpus(revocable=[])]}]},
     "role a: infos[0].guarantee[0].revocable: must be a mapping (got [])"),
    ({"infos": [{"role": "a", "configs": {"role": "a"}}]},
     "quota: infos[0].configs: must be a list (got {'role': 'a'})"),
    # a QuotaConfig and a QuotaRequest alone
    ({"role": "a", "limits": [5]}, "role a: limits[0]: must be a mapping (got 5)"),
    ({"role": "a", "guarantee": [None]}, "role a: guarantee[0]: must be a mapping (got None)"),
    # the v1 quota calls and answer
    ({"type": "GET_QUOTA", "get_quota": {"status": [1]}}, "GET_QUOTA: get_quota.status: must be a mapping (got [1])"),
    ({"type": "GET_QUOTA", "get_quota": []}, "GET_QUOTA: get_quota: must be a mapping (got [])"),
    ({"type": "UPDATE_QUOTA", "update_quota": {"quota_configs": {"role": "a"}}},
     "UPDATE_QUOTA: update_quota.quota_configs: must be a list (got {'role': 'a'})"),
    ({"type": "SET_QUOTA", "set_quota": {"quota_request": "a"}},
     "SET_QUOTA: set_quota.quota_request: must be a mapping (got 'a')"),
    # WeightInfo (GET /weights, GET_WEIGHTS, UPDATE_WEIGHTS)
    ([{"role": "a", "weight": 2}, None], "weights: [1]: must be a mapping (got None)"),
    ([{"role": "a", "weight": 2}, {"role": ["a"], "weight": 1}], "role: [1].role: must be a role name (got ['a'])"),
    ({"type": "GET_WEIGHTS", "get_weights": {"weight_infos": {"a": 1}}},
     "GET_WEIGHTS: get_weights.weight_infos: must be a list (got {'a': 1})"),
    ({"type": "UPDATE_WEIGHTS", "update_weights": {"weight_infos": [None]}},
     "UPDATE_WEIGHTS: update_weights.weight_infos[0]: must be a mapping (got None)"),
    # Role (GET /roles, GET_ROLES)
    ({"roles": [{"name": "a"}, ["b"]]}, "roles: roles[1]: must be a mapping (got ['b'])"),
    ({"roles": [{"name": 3}]}, "role: roles[0].name: must be a role name (got 3)"),
    ({"roles": [{"name": "a", "quota": "x"}]}, "role a: quota: must be a mapping (got 'x')"),
    ({"roles": [{"name": "a", "quota": {"limit": 4}}]},
     "role a: quota.limit: must be a list or map of resources (got 4)"),
    ({"roles": [{"name": "a", "allocated": 5}]}, "role a: allocated: must be a list or map of resources (got 5)"),
    ({"roles": [{"name": "a", "reserved": [1]}]}, "role a: reserved: must be a mapping (got [1])"),
    ({"type": "GET_ROLES", "get_roles": {"roles": {"a": 1}}},
     "GET_ROLES: get_roles.roles: must be a list (got {'a': 1})"),
    ({"type": "GET_ROLES", "get_roles": {"roles": [{"name": "a", "resources": [_cpus(allocation_info="x")]}]}},
     "role a: resources[0].allocation_info: must be a mapping (got 'x')"),
    # v0 state: agents, frameworks, tasks
    ({"slaves": {"a1": {}}}, "state: slaves: must be a list (got {'a1': {}})"),
    ({"slaves": [None]}, "state: slaves[0]: must be a mapping (got None)"),
    ({"slaves": [{"hostname": 5}]}, "state: slaves[0].hostname: must be text (got 5)"),
    ({"slaves": [{"resources": 5}]}, "state: slaves[0].resources: must be a list or map of resources (got 5)"),
    ({"slaves": [{"reserved_resources": [1]}]}, "state: slaves[0].reserved_resources: must be a mapping (got [1])"),
    ({"slaves": [{"resources": [_cpus(role=4)]}]}, "agent 0: slaves[0].resources[0].role: must be text (got 4)"),
    ({"slaves": [], "frameworks": {"id": "x"}}, "state: frameworks: must be a list (got {'id': 'x'})"),
    ({"slaves": [], "frameworks": [{"role": 3}]}, "state: frameworks[0].role: must be text (got 3)"),
    ({"slaves": [], "frameworks": [{"roles": "a"}]}, "state: frameworks[0].roles: must be a list (got 'a')"),
    ({"slaves": [], "frameworks": [{"roles": ["a", 2]}]}, "state: frameworks[0].roles[1]: must be text (got 2)"),
    ({"slaves": [], "frameworks": [{"used_resources": "x"}]},
     "state: frameworks[0].used_resources: must be a list or map of resources (got 'x')"),
    ({"slaves": [], "frameworks": [{"role": "a", "tasks": [{"state": 1}]}]},
     "state: frameworks[0].tasks[0].state: must be text (got 1)"),
    ({"slaves": [], "frameworks": [{"role": "a", "tasks": "t"}]},
     "state: frameworks[0].tasks: must be a list (got 't')"),
    # v1 GET_STATE and GET_AGENTS
    ({"type": "GET_STATE", "get_state": []}, "GET_STATE: get_state: must be a mapping (got [])"),
    ({"type": "GET_STATE", "get_state": {"get_agents": [1]}},
     "GET_STATE: get_state.get_agents: must be a mapping (got [1])"),
    ({"type": "GET_STATE", "get_state": {"get_frameworks": {"frameworks": [{"framework_info": "x"}]}}},
     "GET_STATE: get_state.get_frameworks.frameworks[0].framework_info: must be a mapping (got 'x')"),
    ({"type": "GET_STATE", "get_state": {"get_frameworks": {"frameworks": [{"framework_info": {"id": "F"}}]}}},
     "GET_STATE: get_state.get_frameworks.frameworks[0].framework_info.id: must be a mapping (got 'F')"),
    ({"type": "GET_STATE", "get_state": {"get_frameworks": {"frameworks": [{"framework_info": {"role": 1}}]}}},
     "GET_STATE: get_state.get_frameworks.frameworks[0].framework_info.role: must be text (got 1)"),
    ({"type": "GET_STATE", "get_state": {"get_tasks": {"tasks": [{"framework_id": "F"}]}}},
     "GET_STATE: get_state.get_tasks.tasks[0].framework_id: must be a mapping (got 'F')"),
    ({"type": "GET_STATE", "get_state": {"get_tasks": {"tasks": [None]}}},
     "GET_STATE: get_state.get_tasks.tasks[0]: must be a mapping (got None)"),
    ({"type": "GET_STATE", "get_state": {"get_executors": {"executors": [{"executor_info": {"resources": 3}}]}}},
     "GET_STATE: get_state.get_executors.executors[0].executor_info.resources: "
     "must be a list or map of resources (got 3)"),
    ({"type": "GET_AGENTS", "get_agents": {"agents": [{"agent_info": {"hostname": ["h"]}}]}},
     "GET_AGENTS: get_agents.agents[0].agent_info.hostname: must be text (got ['h'])"),
    ({"type": "GET_AGENTS", "get_agents": {"agents": [{"total_resources": [_cpus("2")]}]}},
     "agent 0: get_agents.agents[0].total_resources[0].scalar.value: must be a number, got '2' "
     "(Mesos amounts are plain numbers, no unit suffixes)"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), _WRONG)
def test_a_wrong_shape_is_one_line_through_the_cli(tmp_path, capsys, data, message):
    path = tmp_path / "master.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "case.yaml"
    code = main(["import", str(path), "--from", "mesos", "--capacity", "cpus=8", "--out", str(out)])
    err = capsys.readouterr().err
    assert (code, err) == (2, f"fairalloc: {path}: {message}\n")
    assert not out.exists()


def test_the_fixtures_import(tmp_path):
    """The v0 and v1 state fixtures the hypothesis test mutates import as they are: agent a1's 8
    cpus (its ports range skipped) and a2's 4 unreserved; spark's 2 cpus to eng/dev, the multi-role
    framework's running tasks' 1 and 2 cpus to eng/ml and ops (the finished task's 5 left out)."""
    case, _ = _import([STATE], tmp_path)
    assert case["resources"] == {"cpus": 12, "mem": 12288}
    usage = {u: spec["usage"]["cpus"] for u, spec in case["users"].items()}
    assert usage == {"eng/dev": 2, "eng/ml": 1, "ops": 2}
    case, _ = _import([V1_STATE], tmp_path)
    assert case["resources"] == {"cpus": 6} and case["users"]["eng"]["usage"] == {"cpus": 2}


# -- (b) one field of a real answer given the wrong type ------------------------------------------
def _gallery() -> list[tuple[list, dict | None]]:
    """Each example's documents and the ``--capacity`` its expect.yaml gives (if any)."""
    out = []
    for expect in sorted(GALLERY.glob("*/expect.yaml")):
        spec = yaml.safe_load(expect.read_text())
        docs = [json.loads((expect.parent / f).read_text()) for f in spec["files"]]
        out.append((docs, {r: str(v) for r, v in (spec.get("capacity") or {}).items()} or None))
    return out


EXAMPLES = [*_gallery(), ([STATE], None), ([V1_STATE], None)]


def _written(docs, folder: Path) -> list[str]:
    files = []
    for j, value in enumerate(docs):
        f = folder / f"m{j}.json"
        f.write_text(json.dumps(value))
        files.append(str(f))
    return files


def _import(docs, folder: Path, capacity=None):
    return import_files(_written(docs, folder), system="mesos", capacity=capacity)


#: every type, and the values a Mesos answer's fields hold: a quantity with a unit, a resource map, a
#: scalar; a role name with a line break (shown bounded, so the message stays one line)
_WRONG_TYPE = wrong_values(
    None, 0, 2.5, -1, "x", "4Gi", [], [1], [None], {}, {"cpus": []}, {"value": "1"}, "a\nb", "\n"
)  # fmt: skip
#: a wrong field can leave the case's capacity short (a resource name the agents do not offer, an
#: agent's cpus gone below what a role holds): said once for the case, whose capacity no one file gives
_CAPACITY = "capacity: "


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=st.sampled_from(range(len(EXAMPLES))), data=st.data())
def test_a_wrong_type_anywhere_imports_or_is_one_line(tmp_path, example, data):
    docs, capacity = list(EXAMPLES[example][0]), EXAMPLES[example][1]
    k = data.draw(st.sampled_from(range(len(docs))))
    docs[k] = replaced(docs[k], data.draw(st.sampled_from(places(docs[k]))), data.draw(_WRONG_TYPE))
    paths = _written(docs, tmp_path)
    assert_imports_or_one_line(
        paths, lambda said: said.startswith((*paths, _CAPACITY)), system="mesos", capacity=capacity
    )


def test_a_set_quota_call_names_its_request_in_the_path(tmp_path, capsys):
    """``SET_QUOTA``'s role and guarantee are inside ``quota_request`` (master.proto ``Call.SetQuota``)."""
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"type": "SET_QUOTA", "set_quota": {"quota_request": {"role": "a", "guarantee": 3}}}))
    assert main(["import", str(path), "--from", "mesos", "--capacity", "cpus=8"]) == 2
    said = "set_quota.quota_request.guarantee: must be a list or map of resources (got 3)"
    assert capsys.readouterr().err == f"fairalloc: {path}: SET_QUOTA: {said}\n"
