"""The schemas of what the YARN importers read (fairalloc/io/importers/yarn_shapes.py): a REST answer
(the FairScheduler's and the Capacity Scheduler's ``/ws/v1/cluster/scheduler``, ``/nodes``,
``/metrics``) or an XML file (``fair-scheduler.xml``, ``capacity-scheduler.xml``) of the wrong shape
is one line naming the file, the object and the field: never an AttributeError, never a silent skip."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.io.importers import import_files
from fairalloc.io.importers.common import ImportFailed
from fairalloc.testing import assert_imports_or_one_line, places, replaced, run_cli, wrong_values

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported" / "yarn"
CAPACITY = ["--capacity", "memory-mb=4096,vcores=4"]
PREFIX = "yarn.scheduler.capacity."


def _fair(root: dict) -> dict:
    return {"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": root}}}


def _fair_child(**child) -> dict:
    return _fair({"queueName": "root", "childQueues": {"queue": [{"queueName": "root.a", **child}]}})


def _cs(*queues) -> dict:
    return {"scheduler": {"schedulerInfo": {"type": "capacityScheduler", "queues": {"queue": list(queues)}}}}


def _cs_leaf(**fields) -> dict:
    return {"queueName": "a", "absoluteCapacity": 100.0, **fields}


def _nodes(*nodes) -> dict:
    return {"nodes": {"node": list(nodes)}}


def _metrics(**fields) -> dict:
    return {"clusterMetrics": {"totalMB": 4096, "totalVirtualCores": 4, **fields}}


def _allocations(body: str) -> str:
    return f'<?xml version="1.0"?><allocations>{body}</allocations>'


def _configuration(**props) -> str:
    rows = "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in props.items())
    return f"<?xml version='1.0'?><configuration>{rows}</configuration>"


def _cs_xml(name: str, value: str) -> str:
    return _configuration(**{f"{PREFIX}root.queues": "a", f"{PREFIX}root.a.capacity": "100"}).replace(
        "</configuration>", f"<property><name>{name}</name><value>{value}</value></property></configuration>"
    )


#: (file name, content, the line after the file name): one wrong shape of every kind the importers read
WRONG = {
    # -- the FairScheduler's REST answer (FairSchedulerInfo, FairSchedulerQueueInfo, ResourceInfo)
    "schedulerInfo a list": ("s.json", {"scheduler": {"schedulerInfo": [1]}},
                             "schedulerInfo: must be a mapping (got [1])"),
    "schedulerInfo.type a number": ("s.json", {"schedulerInfo": {"type": 3}},
                                    "schedulerInfo: type: must be text (got 3)"),
    "rootQueue a list": ("s.json", _fair([]), "schedulerInfo: rootQueue: must be a mapping (got [])"),
    "childQueues a list": ("s.json", _fair({"queueName": "root", "childQueues": [1]}),
                           "schedulerInfo: rootQueue.childQueues: must be a mapping (got [1])"),
    "childQueues.queue a mapping": ("s.json", _fair({"queueName": "root", "childQueues": {"queue": {"x": 1}}}),
                                    "schedulerInfo: rootQueue.childQueues.queue: must be a list (got {'x': 1})"),
    "a child queue null": ("s.json", _fair({"queueName": "root", "childQueues": {"queue": [None]}}),
                           "schedulerInfo: rootQueue.childQueues.queue[0]: must be a mapping (got None)"),
    "a child queue text": ("s.json", _fair({"queueName": "root", "childQueues": {"queue": ["root.a"]}}),
                           "schedulerInfo: rootQueue.childQueues.queue[0]: must be a mapping (got 'root.a')"),
    "queueName a number": ("s.json", _fair({"queueName": 7}),
                           "schedulerInfo: rootQueue.queueName: must be text (got 7)"),
    "minResources a list": ("s.json", _fair_child(minResources=[1024]),
                            "queue root: childQueues.queue[0].minResources: must be a mapping (got [1024])"),
    "usedResources text": ("s.json", _fair_child(usedResources="lots"),
                           "queue root: childQueues.queue[0].usedResources: must be a mapping (got 'lots')"),
    "schedulingPolicy a mapping": ("s.json", _fair_child(schedulingPolicy={"name": "drf"}),
                                   "queue root: childQueues.queue[0].schedulingPolicy: must be text "
                                   "(got {'name': 'drf'})"),
    "a grandchild null": ("s.json", _fair_child(childQueues={"queue": [None]}),
                          "queue root: childQueues.queue[0].childQueues.queue[0]: must be a mapping (got None)"),
    # -- the Capacity Scheduler's REST answer (CapacitySchedulerInfo, CapacitySchedulerQueueInfo)
    "cs queues a list": ("c.json", {"schedulerInfo": {"type": "capacityScheduler", "queues": []}},
                         "schedulerInfo: queues: must be a mapping (got [])"),
    "cs queue null": ("c.json", _cs(None), "schedulerInfo: queues.queue[0]: must be a mapping (got None)"),
    "cs queueName a number": ("c.json", _cs({"queueName": 5}),
                              "schedulerInfo: queues.queue[0].queueName: must be text (got 5)"),
    "cs state a list": ("c.json", _cs(_cs_leaf(state=["RUNNING"])),
                        "schedulerInfo: queues.queue[0].state: must be text (got ['RUNNING'])"),
    "cs resourcesUsed text": ("c.json", _cs(_cs_leaf(resourcesUsed="none")),
                              "schedulerInfo: queues.queue[0].resourcesUsed: must be a mapping (got 'none')"),
    "cs partition text": ("c.json", _cs(_cs_leaf(resources={"resourceUsagesByPartition": ["x"]})),
                          "schedulerInfo: queues.queue[0].resources.resourceUsagesByPartition[0]: must be a "
                          "mapping (got 'x')"),
    "cs child queue a number": ("c.json", _cs({"queueName": "a", "absoluteCapacity": 100.0, "queues": {"queue": [3]}}),
                                "schedulerInfo: queues.queue[0].queues.queue[0]: must be a mapping (got 3)"),
    # -- /ws/v1/cluster/nodes (NodesInfo, NodeInfo): the known defect, a node that is text or null
    "nodes a list": ("n.json", {"nodes": [{"id": "n1"}]}, "nodes: must be a mapping (got [{'id': 'n1'}])"),
    "nodes.node a mapping": ("n.json", {"nodes": {"node": {"id": "n1"}}},
                             "nodes.node: must be a list (got {'id': 'n1'})"),
    "a node text": ("n.json", _nodes("n1:8041"), "nodes.node[0]: must be a mapping (got 'n1:8041')"),
    "a node null": ("n.json", _nodes({"id": "n0"}, None), "nodes.node[1]: must be a mapping (got None)"),
    "a node a list": ("n.json", _nodes([1]), "nodes.node[0]: must be a mapping (got [1])"),
    "node id a number": ("n.json", _nodes({"id": 12}), "nodes.node[0].id: must be text (got 12)"),
    "node totalResource a list": ("n.json", _nodes({"totalResource": [4096, 4]}),
                                  "nodes.node[0].totalResource: must be a mapping (got [4096, 4])"),
    "node resourceInformation null": (
        "n.json", _nodes({"totalResource": {"memory": 1, "resourceInformations": {"resourceInformation": [None]}}}),
        "nodes.node[0].totalResource.resourceInformations.resourceInformation[0]: must be a mapping (got None)"),
    # -- /ws/v1/cluster/metrics (ClusterMetricsInfo)
    "metrics a list": ("m.json", {"clusterMetrics": [4096]}, "clusterMetrics: must be a mapping (got [4096])"),
    "metrics across a list": ("m.json", _metrics(totalClusterResourcesAcrossPartition=[1]),
                              "clusterMetrics.totalClusterResourcesAcrossPartition: must be a mapping (got [1])"),
    "metrics resource name a number": (
        "m.json", _metrics(totalClusterResourcesAcrossPartition={"resourceInformations": {"resourceInformation": [
            {"name": 3, "value": 1}]}}),
        "clusterMetrics.totalClusterResourcesAcrossPartition.resourceInformations.resourceInformation[0].name: "
        "must be text (got 3)"),
    # -- fair-scheduler.xml (AllocationFileParser, AllocationFileQueueParser): elements read as text
    "weight holding elements": ("f.xml", _allocations('<queue name="a"><weight><value>2</value></weight></queue>'),
                                "queue root.a: weight: must be text (got {'value': '2'})"),
    "minResources holding elements": (
        "f.xml", _allocations('<queue name="g"><queue name="b"><minResources><memory>1</memory><vcores>1</vcores>'
                              "</minResources></queue></queue>"),
        "queue root.g.b: minResources: must be text (got {'memory': '1', 'vcores': '1'})"),
    "schedulingPolicy holding elements": ("f.xml", _allocations('<queue name="a"><schedulingPolicy><drf/>'
                                                                "</schedulingPolicy></queue>"),
                                          "queue root.a: schedulingPolicy: must be text (got {'drf': ''})"),
    "a pool without a name": ("f.xml", _allocations('<queue name="a"><pool><weight>1</weight></pool></queue>'),
                              "a <pool> under root.a has no name attribute"),
    "a queue with an empty name": ("f.xml", _allocations('<queue name=""/>'), "a <queue> under  has no name attribute"),
    "queueMaxResourcesDefault holding elements": (
        "f.xml", _allocations('<queueMaxResourcesDefault><x/></queueMaxResourcesDefault><queue name="a"/>'),
        "allocations: queueMaxResourcesDefault: must be text (got {'x': ''})"),
    "defaultQueueSchedulingPolicy holding elements": (
        "f.xml", _allocations('<defaultQueueSchedulingPolicy><p>drf</p></defaultQueueSchedulingPolicy>'),
        "allocations: defaultQueueSchedulingPolicy: must be text (got {'p': 'drf'})"),
    # -- capacity-scheduler.xml (Configuration): a property's name and value are text
    "property value holding elements": ("cs.xml", _cs_xml(f"{PREFIX}root.a.state", "<v>RUNNING</v>"),
                                        "configuration: property[2].value: must be text (got {'v': 'RUNNING'})"),
    "property name holding elements": ("cs.xml", _cs_xml("<n>x</n>", "1"),
                                       "configuration: property[2].name: must be text (got {'n': 'x'})"),
}  # fmt: skip


def _write(tmp_path: Path, name: str, content) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


@pytest.mark.parametrize(("name", "content", "said"), WRONG.values(), ids=list(WRONG))
def test_a_wrong_shape_is_one_line_through_the_importer(tmp_path, name, content, said):
    path = _write(tmp_path, name, content)
    with pytest.raises(ImportFailed) as caught:
        import_files([path], system="yarn", capacity={"memory-mb": "4096", "vcores": "4"})
    assert str(caught.value) == f"{path}: {said}"


@pytest.mark.parametrize(
    "case", ["a node null", "weight holding elements", "cs queue null", "property name holding elements"]
)
def test_the_command_line_says_one_line_and_writes_nothing(tmp_path, capsys, case):
    name, content, said = WRONG[case]
    path, out = _write(tmp_path, name, content), tmp_path / "case.yaml"
    code, printed, err = run_cli(capsys, "import", path, "--from", "yarn", *CAPACITY, "--out", str(out))
    assert code == 2 and printed == "" and not out.exists()
    assert err == f"fairalloc: {path}: {said}\n"


def test_a_node_list_beside_a_scheduler_answer_is_found_by_detection(tmp_path):
    """The defect the schemas close: a node that is text beside a real answer, detected as YARN."""
    nodes = _write(tmp_path, "n.json", _nodes({"state": "RUNNING", "totalResource": {"memory": 1, "vCores": 1}}, "x"))
    answer = _write(tmp_path, "s.json", _fair_child())
    with pytest.raises(ImportFailed) as caught:
        import_files([answer, nodes])
    assert str(caught.value) == f"{nodes}: nodes.node[1]: must be a mapping (got 'x')"


def test_another_schedulers_answer_is_said_and_not_read(tmp_path):
    """A FIFO scheduler's answer (``FifoSchedulerInfo``, ``type: fifoScheduler``) has no queues to read."""
    fifo = _write(tmp_path, "fifo.json", {"scheduler": {"schedulerInfo": {"type": "fifoScheduler", "capacity": 1.0}}})
    allocations = _write(tmp_path, "f.xml", _allocations('<queue name="a"/>'))
    case, warnings = import_files([allocations, fifo], capacity={"memory-mb": "4096", "vcores": "4"})
    assert list(case["users"]) == ["root.a"]
    assert f"{fifo}: schedulerInfo: type: 'fifoScheduler' is not the FairScheduler: not read" in warnings


def test_an_empty_xml_container_reads_as_absent(tmp_path):
    """JAXB writes an empty list as an empty element (``<resourceInformations/>``): nothing, not text."""
    xml = ("<clusterMetrics><totalMB>2048</totalMB><totalVirtualCores>2</totalVirtualCores>"
           "<totalClusterResourcesAcrossPartition><memory>2048</memory><vCores>2</vCores><resourceInformations/>"
           "</totalClusterResourcesAcrossPartition></clusterMetrics>")  # fmt: skip
    allocations = _write(
        tmp_path,
        "f.xml",
        _allocations('<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy><queue name="a"/>'),
    )
    case, warnings = import_files([allocations, _write(tmp_path, "m.xml", xml)])
    assert case["resources"] == {"memory-mb": 2048, "vcores": 2} and warnings == []


# -- any one field of a real file of the wrong type: imported, or one line naming the file -------------
def _example(folder: str) -> tuple[dict[str, str], dict[str, str]]:
    spec = yaml.safe_load((GALLERY / folder / "expect.yaml").read_text())
    files = {name: (GALLERY / folder / name).read_text() for name in spec["files"]}
    return files, {r: str(v) for r, v in (spec.get("capacity") or {}).items()}


#: a RUNNING node of /ws/v1/cluster/nodes (NodeInfo), as tests/test_importers.py writes one
_GPU = {"resourceInformation": [{"name": "yarn.io/gpu", "value": 2, "units": ""}]}
_NODES = json.dumps(_nodes({"id": "n1:8041", "state": "RUNNING", "usedMemoryMB": 1024, "availMemoryMB": 7168,
                            "usedVirtualCores": 1, "availableVirtualCores": 7,
                            "totalResource": {"memory": 8192, "vCores": 8, "resourceInformations": _GPU}}))  # fmt: skip
EXAMPLES = {folder: _example(folder) for folder in sorted(p.name for p in GALLERY.iterdir() if p.is_dir())}
EXAMPLES["nodes"] = (
    {"s.json": json.dumps(_fair_child(usedResources={"memory": 1, "vCores": 1})), "n.json": _NODES},
    {},
)

#: the capacity when the example's files give it (a field changed may take it away: not what is tested here)
FALLBACK = {"memory-mb": "8192", "vcores": "8"}
#: the values of the wrong type a field is given (an XML element: emptied, text, holding one or two elements
#: named by the mapping's keys, the names YARN's answers use)
WRONG_VALUES = wrong_values(
    "",
    "x",
    "RUNNING",
    "-1",
    "drf",
    "[memory=1]",
    "1024 mb, 1 vcores",
    keys=["memory", "vCores", "queue", "name", "value"],
)


def _mutated_json(text: str, data) -> str:
    tree = json.loads(text)
    return json.dumps(replaced(tree, data.draw(st.sampled_from(places(tree))), data.draw(WRONG_VALUES)))


def _mutated_xml(text: str, data) -> str:
    root = ET.fromstring(text)
    elements = [e for e in root.iter() if e is not root]
    element = data.draw(st.sampled_from(elements))
    value = data.draw(WRONG_VALUES)
    if data.draw(st.booleans()):  # a queue's name and type go too
        element.attrib.clear()
    for child in list(element):
        element.remove(child)
    element.text = None if value is None or isinstance(value, (dict, list)) else str(value)
    for k, item in enumerate(value if isinstance(value, (dict, list)) else []):
        ET.SubElement(element, str(item) if isinstance(value, dict) else "item").text = f"{k}"
    return ET.tostring(root, encoding="unicode")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), folder=st.sampled_from(sorted(EXAMPLES)))
def test_one_field_of_the_wrong_type_imports_or_is_one_line(tmp_path, data, folder):
    files, capacity = EXAMPLES[folder]
    target = data.draw(st.sampled_from(sorted(files)))
    paths = []
    for name, text in files.items():
        if name == target:
            text = _mutated_xml(text, data) if text.lstrip().startswith("<") else _mutated_json(text, data)
        paths.append(_write(tmp_path, name, text))
    assert_imports_or_one_line(
        paths,
        lambda line: any(line.startswith((f"{p}: ", f"{p}, ")) for p in paths),
        system="yarn",
        capacity=capacity or FALLBACK,
    )
