"""The schemas of the YuniKorn importer (fairalloc/io/importers/yunikorn_shapes.py): queues.yaml,
the ConfigMap holding it and the REST answers of a wrong shape are one line naming the file, the
queue and the field (exit 2, nothing written); a queue tree deeper than MAX_TREE_DEPTH is refused
before it is read, never a RecursionError; any one field of a valid object replaced by a value of
the wrong type gives a case the loader reads or one such line."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.cli import main
from fairalloc.core import limits
from fairalloc.core.errors import shown
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import import_files
from fairalloc.testing import assert_imports_or_one_line, places, replaced, wrong_values

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported" / "yunikorn"

#: queues.yaml (``SchedulerConfig``): root with a leaf, and a parent with one leaf below it
CONFIG = {"partitions": [{"name": "default", "queues": [{"name": "root", "queues": [
    {"name": "a", "resources": {"guaranteed": {"vcore": 2}, "max": {"vcore": 4}}, "properties": {"priority.offset": 1}},
    {"name": "b", "queues": [{"name": "c"}]},
]}]}]}  # fmt: skip
#: /ws/v1/partition/default/queues (``PartitionQueueDAOInfo``), amounts in milli-vcores
REST = {"queuename": "root", "children": [{
    "queuename": "root.a", "isLeaf": True, "guaranteedResource": {"vcore": 1000},
    "allocatedResource": {"vcore": 500}, "pendingResource": {"vcore": 500}, "properties": {"priority.offset": "1"},
}]}  # fmt: skip
#: /ws/v1/partition/default/nodes, as a list of ``NodeDAOInfo`` and as one ``NodesDAOInfo``
NODES = [{"nodeID": "n1", "capacity": {"vcore": 8000}}]
NODES_INFO = {"partitionName": "default", "nodesInfo": NODES}
#: /ws/v1/partitions (``PartitionInfo``)
PARTITIONS = [{"clusterId": "c", "name": "default", "capacity": {"capacity": {"vcore": 8000}}}]
#: the ConfigMap holding queues.yaml
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "yunikorn-configs"},
             "data": {"queues.yaml": yaml.safe_dump(CONFIG)}}  # fmt: skip

ROOT = ["partitions", 0, "queues", 0]
CM = "ConfigMap/yunikorn-configs"

#: (file, object, path to the field, wrong value, the message after "FILE: ")
WRONG_SHAPES = [
    # queues.yaml: SchedulerConfig, PartitionConfig (and its parts), QueueConfig at each level
    ("q.yaml", CONFIG, ["partitions", 0], "x", "partitions[0]: must be a mapping (got 'x')"),
    ("q.yaml", CONFIG, ["partitions", 0, "queues"], {"name": "root"},
     "partitions[0].queues: must be a list (got {'name': 'root'})"),
    ("q.yaml", CONFIG, ["partitions", 0, "queues", 0], None, "partitions[0].queues[0]: must be a mapping (got None)"),
    ("q.yaml", CONFIG, [*ROOT, "name"], 7, "partitions[0].queues[0].name: must be text (got 7)"),
    ("q.yaml", CONFIG, ["partitions", 0, "name"], ["default"], "partitions[0].name: must be text (got ['default'])"),
    ("q.yaml", CONFIG, ["partitions", 0, "limits"], {"limit": "x"},
     "partitions[0].limits: must be a list (got {'limit': 'x'})"),
    ("q.yaml", CONFIG, ["partitions", 0, "placementrules"], [None],
     "partitions[0].placementrules[0]: must be a mapping (got None)"),
    ("q.yaml", CONFIG, ["partitions", 0, "preemption"], [True],
     "partitions[0].preemption: must be a mapping (got [True])"),
    ("q.yaml", CONFIG, ["partitions", 0, "nodesortpolicy"], "binpacking",
     "partitions[0].nodesortpolicy: must be a mapping (got 'binpacking')"),
    ("q.yaml", CONFIG, [*ROOT, "queues"], "a", "queue root: queues: must be a list (got 'a')"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 1], None, "queue root: queues[1]: must be a mapping (got None)"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 1], "b", "queue root: queues[1]: must be a mapping (got 'b')"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "name"], 7, "queue root: queues[0].name: must be text (got 7)"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "resources"], [1], "queue root.a: resources: must be a mapping (got [1])"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "resources", "max"], "4",
     "queue root.a: resources.max: must be a mapping (got '4')"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "properties"], ["priority.offset"],
     "queue root.a: properties: must be a mapping (got ['priority.offset'])"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "properties", "priority.offset"], [1],
     "queue root.a: properties.priority.offset: must be one value (text or a number) (got [1])"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "properties", "priority.offset"], {"x": 1},
     "queue root.a: properties.priority.offset: must be one value (text or a number) (got {'x': 1})"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "parent"], "maybe",
     "queue root.a: parent: must be true or false (got 'maybe')"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "parent"], "true",
     "queue root.a: parent: must be true or false (got 'true')"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "submitacl"], 7, "queue root.a: submitacl: must be text (got 7)"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "childtemplate"], 1,
     "queue root.a: childtemplate: must be a mapping (got 1)"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 0, "limits"], [3], "queue root.a: limits[0]: must be a mapping (got 3)"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 1, "queues", 0], None,
     "queue root.b: queues[0]: must be a mapping (got None)"),
    ("q.yaml", CONFIG, [*ROOT, "queues", 1, "queues", 0, "resources"], {"guaranteed": [1]},
     "queue root.b.c: resources.guaranteed: must be a mapping (got [1])"),
    # the ConfigMap holding queues.yaml, and queues.yaml in it
    ("cm.yaml", CONFIGMAP, ["data"], ["queues.yaml"], f"{CM}: data: must be a mapping (got ['queues.yaml'])"),
    ("cm.yaml", CONFIGMAP, ["data", "queues.yaml"], 7, f"{CM}: data.queues.yaml: must be text (got 7)"),
    ("cm.yaml", CONFIGMAP, ["data", "queues.yaml"], "[1, 2]",
     f"{CM}: data.queues.yaml: the object must be a mapping (got [1, 2])"),
    ("cm.yaml", CONFIGMAP, ["data", "queues.yaml"], "partitions:\n- name: default\n  queues: x\n",
     f"{CM}: data.queues.yaml: partitions[0].queues: must be a list (got 'x')"),
    # /ws/v1/partition/:p/queues
    ("q.json", REST, ["children"], {"queuename": "root.a"},
     "queue root: children: must be a list (got {'queuename': 'root.a'})"),
    ("q.json", REST, ["children", 0], None, "queue root: children[0]: must be a mapping (got None)"),
    ("q.json", REST, ["children", 0, "queuename"], 7, "queue root: children[0].queuename: must be text (got 7)"),
    ("q.json", REST, ["children", 0, "guaranteedResource"], [1000],
     "queue root.a: guaranteedResource: must be a mapping (got [1000])"),
    ("q.json", REST, ["children", 0, "properties"], "x", "queue root.a: properties: must be a mapping (got 'x')"),
    ("q.json", REST, ["children", 0, "properties", "priority.offset"], {"a": 1},
     "queue root.a: properties.priority.offset: must be one value (text or a number) (got {'a': 1})"),
    ("q.json", REST, ["children", 0, "isLeaf"], "perhaps",
     "queue root.a: isLeaf: must be true or false (got 'perhaps')"),
    ("q.json", REST, ["children", 0, "isLeaf"], 1, "queue root.a: isLeaf: must be true or false (got 1)"),
    ("q.json", REST, ["children", 0, "parent"], 1, "queue root.a: parent: must be text (got 1)"),
    ("q.json", REST, ["children", 0, "priorityOffset"], [1],
     "queue root.a: priorityOffset: must be one value (text or a number) (got [1])"),
    # /ws/v1/partition/:p/nodes and /ws/v1/partitions
    ("n.json", NODES, [0, "capacity"], [8000], "node n1: capacity: must be a mapping (got [8000])"),
    ("n.json", NODES, [0, "nodeID"], ["n1"], "node ['n1']: nodeID: must be text (got ['n1'])"),
    ("n.json", NODES_INFO, ["nodesInfo"], "n1", "nodesInfo: must be a list (got 'n1')"),
    ("n.json", NODES_INFO, ["nodesInfo", 0, "capacity"], 8, "node n1: capacity: must be a mapping (got 8)"),
    ("p.json", PARTITIONS, [0, "capacity"], [1], "partition default: capacity: must be a mapping (got [1])"),
    ("p.json", PARTITIONS, [0, "capacity", "capacity"], "8000",
     "partition default: capacity.capacity: must be a mapping (got '8000')"),
    ("p.json", PARTITIONS, [0, "name"], {"n": 1}, "partition {'n': 1}: name: must be text (got {'n': 1})"),
]  # fmt: skip

#: priority.offset that is one value but not a whole number: the numeric gate's line
WRONG_NUMBERS = [
    ("q.yaml", "high", "queue root.a: properties.priority.offset: 'high' is not a number"),
    ("q.json", "1e400", "queue root.a: properties.priority.offset: "),
]


def _write(folder: Path, name: str, data) -> str:
    path = folder / name
    path.write_text(json.dumps(data) if name.endswith(".json") else yaml.safe_dump(data))
    return str(path)


def _refused(path: str) -> str:
    """The one line ``fairalloc import PATH`` writes on refusing it: exit 2, no traceback, no file."""
    out = Path(path).parent / "out" / "case.yaml"
    out.parent.mkdir(exist_ok=True)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["import", path, "--from", "yunikorn", "--capacity", "vcore=8", "--out", str(out)])
    lines = err.getvalue().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err.getvalue(), err.getvalue()
    assert list(out.parent.iterdir()) == []
    return lines[0]


@pytest.mark.parametrize(("name", "data", "path", "value", "message"), WRONG_SHAPES)
def test_a_wrong_shape_is_one_line_naming_file_queue_and_field(tmp_path, name, data, path, value, message):
    path_given = _write(tmp_path, name, replaced(data, path, value))
    assert _refused(path_given) == f"fairalloc: {path_given}: {message}"


@pytest.mark.parametrize("name", ["q.yaml", "q.json", "n.json", "p.json"])
@pytest.mark.parametrize("whole", [[[1]], "text", 7])
def test_the_whole_object_of_the_wrong_shape_is_one_line(tmp_path, name, whole):
    """Named ``--from yunikorn``, a file holding nothing YuniKorn writes has no queues."""
    path = _write(tmp_path, name, whole)
    assert _refused(path) == f"fairalloc: {path}: no queues found for yunikorn"


@pytest.mark.parametrize(("name", "offset", "message"), WRONG_NUMBERS)
def test_a_priority_offset_that_is_no_whole_number_is_one_line(tmp_path, name, offset, message):
    path = _write(tmp_path, name, replaced(CONFIG, [*ROOT, "queues", 0, "properties", "priority.offset"], offset))
    assert _refused(path).startswith(f"fairalloc: {path}: {message}")


def test_the_shapes_pass_a_valid_object_of_each_kind(tmp_path):
    """The fixtures themselves import: root.a guaranteed 2 cores (config) and 1 core (REST: 1000
    milli-vcores), the nodes' 8000 milli-vcores are 8 cores, root.b.c a leaf under parent root.b."""
    files = [_write(tmp_path, n, d) for n, d in (("q.yaml", CONFIG), ("n.json", NODES), ("p.json", PARTITIONS))]
    case, _ = import_files(files)
    assert case["users"]["root.a"]["guarantee"] == {"vcore": 2} and case["users"]["root.a"]["priority"] == 1
    assert case["groups"] == {"root.b": {}} and case["users"]["root.b.c"]["group"] == "root.b"
    assert case["resources"] == {"vcore": 8}
    rest, _ = import_files([_write(tmp_path, "q.json", REST), _write(tmp_path, "m.json", NODES_INFO)])
    assert rest["users"]["root.a"]["guarantee"] == {"vcore": 1} and rest["users"]["root.a"]["request"] == {"vcore": 1}
    (cm, _) = import_files([_write(tmp_path, "cm.yaml", CONFIGMAP)], capacity={"vcore": "8"})
    assert cm["users"] == case["users"]
    parse_case(case), parse_case(rest), parse_case(cm)


# -- depth: bounded before any queue is read --------------------------------------------------------


def _chain(queues: int, key: str, name: str) -> dict:
    """root with ``queues`` queues below it in one chain (``q``, ``root.q.q`` ...), the last a leaf
    guaranteed one core; built without recursion."""
    root: dict = {name: "root"}
    node, path = root, "root"
    for _ in range(queues):
        path += ".q"
        child = {name: path if key == "children" else "q"}
        node[key] = [child]
        node = child
    node["guaranteedResource" if key == "children" else "resources"] = (
        {"vcore": 1000} if key == "children" else {"guaranteed": {"vcore": 1}}
    )
    return root


def _config(queues: int) -> dict:
    return {"partitions": [{"name": "default", "queues": [_chain(queues, "queues", "name")]}]}


@pytest.mark.timeout(60)
def test_a_1000_level_queues_yaml_is_one_line_naming_the_limit(tmp_path):
    """YAML nests a queue two levels (its mapping, its ``queues`` list): refused by the reader's
    depth limit, 64, before any schema."""
    path = tmp_path / "queues.yaml"
    lines = ["partitions:", "- name: default", "  queues:"]
    for depth in range(1001):
        pad = "  " * (depth + 1)
        lines += [f"{pad}- name: {'root' if depth == 0 else 'q'}", f"{pad}  queues:"]
    lines[-1] = lines[-1].replace("queues:", "resources: {guaranteed: {vcore: 1}}")
    path.write_text("\n".join(lines) + "\n")
    line = _refused(str(path))
    assert line.startswith(f"fairalloc: {path}: ") and f"fairalloc reads at most {limits.MAX_YAML_DEPTH}" in line


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("name", "data", "queue"), [
    ("q.json", lambda n: _config(n), "q"),
    ("r.json", lambda n: _chain(n, "children", "queuename"), shown("root" + ".q" * (limits.MAX_TREE_DEPTH + 2))),
])  # fmt: skip
@pytest.mark.parametrize("queues", [limits.MAX_TREE_DEPTH + 3, 300])
def test_a_json_tree_deeper_than_max_tree_depth_is_one_line_naming_it(tmp_path, name, data, queue, queues):
    """JSON nests deeper than YAML is read: the tree's depth is checked, iteratively, before its
    queues are.  With ``MAX_TREE_DEPTH + 3`` queues in a chain below root, the second last has
    ``MAX_TREE_DEPTH + 1`` queues above it (root aside) and children: refused, named as messages
    name a long path (its first and last characters)."""
    path = _write(tmp_path, name, data(queues))
    line = _refused(path)
    assert line == (
        f"fairalloc: {path}: queue {queue}: more than {limits.MAX_TREE_DEPTH} queues above it (root aside); "
        "fairalloc walks hierarchies recursively and refuses deeper ones (MAX_TREE_DEPTH)"
    )


@pytest.mark.timeout(60)
def test_a_1000_level_rest_tree_is_one_line(tmp_path):
    """1,000 queues nest 2,000 JSON levels: refused by the JSON reader (its recursion), one line."""
    path = _write(tmp_path, "r.json", {"queuename": "root"})
    Path(path).write_text('{"queuename": "root", "children": [' * 1000 + "{}" + "]}" * 1000)
    assert _refused(path) == f"fairalloc: {path}: nested too deeply for fairalloc to read"


def test_the_deepest_tree_allowed_is_read(tmp_path):
    """``MAX_TREE_DEPTH + 2`` queues in a chain below root: the last parent has ``MAX_TREE_DEPTH``
    queues above it, as deep as the case loader takes; its leaf is guaranteed one core, of 8."""
    case, _ = import_files([_write(tmp_path, "q.json", _config(limits.MAX_TREE_DEPTH + 2))], capacity={"vcore": "8"})
    leaf = "root" + ".q" * (limits.MAX_TREE_DEPTH + 2)
    assert case["users"] == {leaf: {"group": leaf[:-2], "guarantee": {"vcore": 1}}}
    assert len(case["groups"]) == limits.MAX_TREE_DEPTH + 1
    parse_case(case)


# -- any one field of a valid object replaced by a value of the wrong type --------------------------


def _examples() -> list[list[tuple[str, object]]]:
    """The files (name, object) of one import: the fixtures above and each gallery example."""
    out: list[list[tuple[str, object]]] = [
        [("q.yaml", CONFIG), ("n.json", NODES), ("p.json", PARTITIONS)], [("q.json", REST), ("m.json", NODES_INFO)],
        [("cm.yaml", CONFIGMAP)],
    ]  # fmt: skip
    for expect in sorted(GALLERY.glob("*/expect.yaml")):
        files = [expect.parent / f for f in yaml.safe_load(expect.read_text())["files"]]
        out.append([(f.name, json.loads(f.read_text()) if f.suffix == ".json" else yaml.safe_load(f.read_text()))
                    for f in files])  # fmt: skip
    return out


EXAMPLES = _examples()
#: what the mutated files cannot say: a resource they name only in a wrong value is the case's
CAPACITY = {"vcore": "64", "memory": "1Ti", "pods": "100", "ephemeral-storage": "1Ti"}
WRONG_TYPES = wrong_values()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=st.sampled_from(range(len(EXAMPLES))), data=st.data())
def test_a_field_of_the_wrong_type_anywhere_is_a_case_or_one_line(tmp_path, example, data):
    """Either the case the loader reads, or one line naming the file (or, for a resource no
    capacity is given for, ``capacity:``, a statement of the whole case)."""
    files = list(EXAMPLES[example])
    k = data.draw(st.sampled_from(range(len(files))))
    name, value = files[k]
    files[k] = (name, replaced(value, data.draw(st.sampled_from(places(value))), data.draw(WRONG_TYPES)))
    written = [_write(tmp_path, n, v) for n, v in files]

    def named(line: str) -> bool:
        return line.startswith((written[k], "capacity: ")) or written[k] in line.split(": ")[0]

    assert_imports_or_one_line(written, named, system="yunikorn", capacity=CAPACITY)
