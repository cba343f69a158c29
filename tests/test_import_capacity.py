"""The cluster's capacity as the imported files state it (fairalloc/io/importers/common.py
``Draft.offer_capacity``, ``chosen_source``, ``capacity_read``): every source read (YARN's cluster
metrics and node list, YuniKorn's partitions, nodes and root maximum), a warning naming both sources
and both amounts where two disagree, and ``--capacity`` in explicit units with the unit of a bare
number said in the case's description and the import summary.

The YARN metrics answers are the examples of ResourceManagerRest.md ("Cluster Metrics API", apache/hadoop
at e55bdefdab3c8a7f1e51451bb8280e61f2c6f0db, Apache-2.0), cut to the fields that matter.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
import yaml

from fairalloc.cli import main
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import import_files
from fairalloc.io.importers.common import ImportFailed
from fairalloc.io.quantities import QuantityError

ALLOCATIONS = """<?xml version="1.0"?>
<allocations>
  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
  <queue name="a"><weight>1.0</weight></queue>
  <queue name="b"><weight>3.0</weight></queue>
</allocations>
"""
#: ResourceManagerRest.md's JSON example: one node of 17408 MiB and 8 vcores
METRICS = {"clusterMetrics": {"availableMB": 17408, "allocatedMB": 0, "availableVirtualCores": 7,
                              "allocatedVirtualCores": 1, "totalMB": 17408, "totalVirtualCores": 8,
                              "totalNodes": 1, "activeNodes": 1}}  # fmt: skip
#: the same answer as XML (Accept: application/xml)
METRICS_XML = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<clusterMetrics>
  <availableMB>17408</availableMB>
  <allocatedMB>0</allocatedMB>
  <totalMB>17408</totalMB>
  <totalVirtualCores>8</totalVirtualCores>
  <activeNodes>1</activeNodes>
</clusterMetrics>
"""


def _write(tmp_path, name: str, text) -> str:
    path = tmp_path / name
    path.write_text(text if isinstance(text, str) else json.dumps(text))
    return str(path)


def _yarn(tmp_path, *more) -> list[str]:
    return [_write(tmp_path, "fair-scheduler.xml", ALLOCATIONS), *more]


def _nodes(*sizes) -> dict:
    """A /ws/v1/cluster/nodes answer: RUNNING nodes of (MiB, vcores), half used, half available."""
    return {"nodes": {"node": [{"state": "RUNNING", "usedMemoryMB": m // 2, "availMemoryMB": m - m // 2,
                                "usedVirtualCores": c // 2, "availableVirtualCores": c - c // 2}
                               for m, c in sizes]}}  # fmt: skip


# -- YARN: the cluster metrics and the node list ----------------------------------------------------


@pytest.mark.parametrize("answer", [("metrics.json", METRICS), ("metrics.xml", METRICS_XML)], ids=["json", "xml"])
def test_yarn_metrics_beside_an_allocation_file_need_no_capacity(tmp_path, answer):
    """totalMB 17408 and totalVirtualCores 8 are the capacity; a and b (weights 1 and 3, no limits)
    share it 1 : 3 in steady fair shares: 4352 and 13056 MiB, 2 and 6 vcores."""
    case, warnings = import_files(_yarn(tmp_path, _write(tmp_path, *answer)))
    assert not warnings
    assert case["resources"] == {"memory-mb": 17408, "vcores": 8}
    assert case["units"] == {"memory-mb": "MiB", "vcores": "cores"}
    assert "Capacity from cluster totals." in case["description"]
    inst = parse_case(case).instance
    from fairalloc.core import registry

    bundles = registry.get("yarn-fair-steady").allocate(inst).bundles
    a, b = inst.users.index("root.a"), inst.users.index("root.b")
    assert bundles[a].tolist() == pytest.approx([4352, 2]) and bundles[b].tolist() == pytest.approx([13056, 6])


def test_yarn_metrics_newer_cluster_resource_is_read(tmp_path):
    """Hadoop 3.3's ``totalClusterResourcesAcrossPartition`` (the scheduler's cluster resource)."""
    metrics = {"clusterMetrics": {"totalClusterResourcesAcrossPartition": {"memory": 8192, "vCores": 4,
                                  "resourceInformations": {"resourceInformation": []}}}}  # fmt: skip
    case, warnings = import_files(_yarn(tmp_path, _write(tmp_path, "metrics.json", metrics)))
    assert case["resources"] == {"memory-mb": 8192, "vcores": 4} and not warnings


def test_yarn_metrics_and_node_list_disagree_the_nodes_count(tmp_path):
    """Two RUNNING nodes of 8192 MiB and 4 vcores: 16384 MiB and 8 vcores; the metrics say 17408 MiB
    and 8 vcores.  Memory disagrees: one warning naming both sources and amounts; vcores agree."""
    metrics = _write(tmp_path, "metrics.json", METRICS)
    nodes = _write(tmp_path, "nodes.json", _nodes((8192, 4), (8192, 4)))
    case, warnings = import_files(_yarn(tmp_path, metrics, nodes))
    assert case["resources"] == {"memory-mb": 16384, "vcores": 8}
    assert warnings == [
        f"capacity: memory-mb: {nodes}: 2 running nodes gives 16384 MiB, {metrics}: clusterMetrics: totalMB, "
        "totalVirtualCores gives 17408 MiB: 16384 MiB used (nodes count before cluster totals; "
        "--capacity memory-mb=N to choose)"
    ]
    assert "Capacity from nodes." in case["description"]


def test_two_cluster_totals_that_disagree_the_first_read_counts(tmp_path):
    """The scheduler answer's root clusterResources (8192 MiB, 8 vcores) read before the metrics
    (17408 MiB, 8 vcores): both are the scheduler's totals, so the first file given counts."""
    answer = {"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": {
        "queueName": "root", "clusterResources": {"memory": 8192, "vCores": 8},
        "childQueues": {"queue": [{"queueName": "root.a"}]}}}}}  # fmt: skip
    scheduler = _write(tmp_path, "scheduler.json", answer)
    metrics = _write(tmp_path, "metrics.json", METRICS)
    case, warnings = import_files([scheduler, metrics])
    assert case["resources"] == {"memory-mb": 8192, "vcores": 8}
    assert warnings[1:] == [
        f"capacity: memory-mb: {scheduler}: queue root: clusterResources gives 8192 MiB, {metrics}: clusterMetrics: "
        "totalMB, totalVirtualCores gives 17408 MiB: 8192 MiB used (both are cluster totals: the first read counts; "
        "--capacity memory-mb=N to choose)"
    ]  # the first warning: the REST answer carries no weights


def test_a_capacity_given_is_the_users_choice_no_disagreement_warned(tmp_path):
    metrics = _write(tmp_path, "metrics.json", METRICS)
    nodes = _write(tmp_path, "nodes.json", _nodes((8192, 4), (8192, 4)))
    case, warnings = import_files(_yarn(tmp_path, metrics, nodes), capacity={"memory-mb": "16Gi"})
    assert case["resources"]["memory-mb"] == 16384
    assert warnings == []  # 16Gi is 16384 MiB: what the files' chosen source says, nothing replaced


def _gpu_info(memory, vcores, gpus, extra=()) -> dict:
    """A ResourceInfo as Hadoop 3 writes it: memory and vCores, and every type in resourceInformations."""
    listed = [{"name": "memory-mb", "value": memory, "units": "Mi"}, {"name": "vcores", "value": vcores, "units": ""},
              {"name": "yarn.io/gpu", "value": gpus, "units": ""}, *extra]  # fmt: skip
    return {"memory": memory, "vCores": vcores, "resourceInformations": {"resourceInformation": listed}}


def test_yarn_nodes_total_resource_with_a_gpu_type(tmp_path):
    """Hadoop 3's NodeInfo.totalResource: two RUNNING nodes of 8192 MiB, 4 vcores and 2 GPUs (a
    third, LOST, is not counted): 16384 MiB, 8 vcores, 4 GPUs.  A type counted in a unit (a
    memory-like custom resource in Gi) is warned about and not read."""
    fpga = ({"name": "example.com/scratch", "value": 1, "units": "Gi"},)
    node = {"state": "RUNNING", "totalResource": _gpu_info(8192, 4, 2, fpga)}
    lost = {"state": "LOST", "totalResource": _gpu_info(8192, 4, 2)}
    nodes = _write(tmp_path, "nodes.json", {"nodes": {"node": [{**node, "id": "n1"}, {**node, "id": "n2"}, lost]}})
    path = _write(tmp_path, "f.xml", '<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>'
                  '<queue name="a"><minResources>memory-mb=1024, vcores=1, '
                  "yarn.io/gpu=1</minResources></queue></allocations>")  # fmt: skip
    case, warnings = import_files([path, nodes])
    assert case["resources"] == {"memory-mb": 16384, "vcores": 8, "yarn.io/gpu": 4}
    assert case["units"]["yarn.io/gpu"] == "count"
    assert warnings == [
        f"{nodes}: node n1: totalResource.resourceInformations.example.com/scratch: counted in 'Gi': not converted, "
        "not read",
        f"{nodes}: node n2: totalResource.resourceInformations.example.com/scratch: counted in 'Gi': not converted, "
        "not read",
    ]


def test_yarn_metrics_xml_resource_informations_are_a_list(tmp_path):
    """The XML twin of totalClusterResourcesAcrossPartition repeats <resourceInformation>."""
    xml = """<clusterMetrics><totalClusterResourcesAcrossPartition><memory>4096</memory><vCores>2</vCores>
      <resourceInformations>
        <resourceInformation><name>memory-mb</name><value>4096</value><units>Mi</units></resourceInformation>
        <resourceInformation><name>yarn.io/gpu</name><value>3</value><units></units></resourceInformation>
      </resourceInformations></totalClusterResourcesAcrossPartition></clusterMetrics>"""
    case, warnings = import_files(_yarn(tmp_path, _write(tmp_path, "metrics.xml", xml)))
    assert case["resources"] == {"memory-mb": 4096, "vcores": 2, "yarn.io/gpu": 3} and not warnings


def test_yarn_bad_metrics_number_is_one_line(tmp_path):
    path = _write(tmp_path, "metrics.json", {"clusterMetrics": {"totalMB": "lots", "totalVirtualCores": 8}})
    with pytest.raises(ImportFailed) as err:
        import_files(_yarn(tmp_path, path))
    assert str(err.value) == f"{path}: clusterMetrics: totalMB: 'lots' is not a number"


# -- YuniKorn: the configured root maximum, the partition and the nodes ------------------------------


def _queues_yaml(tmp_path, root_max: dict | None) -> str:
    root: dict = {"name": "root", "queues": [{"name": "a"}, {"name": "b", "resources": {"guaranteed": {"vcore": 1}}}]}
    if root_max:
        root["resources"] = {"max": root_max}
    return _write(tmp_path, "queues.yaml", yaml.safe_dump({"partitions": [{"name": "default", "queues": [root]}]}))


def _yk_nodes(*millicores) -> list[dict]:
    """A /ws/v1/partition/default/nodes answer: vcore in millicores, memory in bytes."""
    return [{"nodeID": f"n{k}", "capacity": {"vcore": m, "memory": 2**34}} for k, m in enumerate(millicores)]


def test_yunikorn_root_max_and_nodes_disagree_the_nodes_count(tmp_path):
    """The root max is 2 cores (``vcore: 2``); two nodes of 8000 millicores are 16 cores: the nodes
    are used, and the warning names both sources with both amounts in the case's unit (cores)."""
    config = _queues_yaml(tmp_path, {"vcore": 2})
    nodes = _write(tmp_path, "nodes.json", _yk_nodes(8000, 8000))
    case, warnings = import_files([config, nodes])
    assert case["resources"] == {"vcore": 16, "memory": 2**35}
    assert case["units"] == {"vcore": "cores", "memory": "bytes"}
    assert case["users"]["root.b"]["guarantee"] == {"vcore": 1}  # vcore: 1 in queues.yaml is one core
    assert warnings == [
        f"{config}: queue root: resources.max: YuniKorn refuses a root queue with resource limits: read as a "
        "capacity all the same",
        f"capacity: vcore: {nodes}: 2 nodes' capacity gives 16 cores, {config}: queue root: resources.max gives "
        "2 cores: 16 cores used (nodes count before the root queue's maximum; --capacity vcore=N to choose)",
    ]


def test_yunikorn_nodes_info_answer_and_partition_disagree(tmp_path):
    """NodesDAOInfo (``nodesInfo``) of one 4000-millicore node against a partition capacity of 6000."""
    nodes = _write(tmp_path, "nodes.json", {"partitionName": "default", "nodesInfo": _yk_nodes(4000)})
    partition = [{"clusterId": "c", "name": "default", "capacity": {"capacity": {"vcore": 6000, "memory": 2**34}}}]
    partitions = _write(tmp_path, "partitions.json", partition)
    case, warnings = import_files([_queues_yaml(tmp_path, None), nodes, partitions])
    assert case["resources"] == {"vcore": 4, "memory": 2**34}
    assert len(warnings) == 1 and "partition default: capacity.capacity gives 6 cores: 4 cores used" in warnings[0]
    assert "(nodes count before cluster totals;" in warnings[0]


def test_yunikorn_sources_that_agree_say_nothing_of_the_capacity(tmp_path):
    """Root max 8 cores, one node of 8000 millicores: they agree (only the refused root max is warned)."""
    case, warnings = import_files([_queues_yaml(tmp_path, {"vcore": 8}), _write(tmp_path, "n.json", _yk_nodes(8000))])
    assert case["resources"]["vcore"] == 8
    assert [w for w in warnings if "capacity:" in w] == [] and len(warnings) == 1


# -- --capacity: explicit units, and the unit of a bare number said ----------------------------------


@pytest.mark.parametrize(
    ("given", "amount", "said"),
    [
        ("16", 16, "16 cores (a bare number is read in cores, the unit of vcore in this case)"),
        ("16000m", 16, "16000m = 16 cores"),
        ("1500m", 1.5, "1500m = 1.5 cores"),
        ("1", 1, "1 core (a bare number is read in cores, the unit of vcore in this case)"),
    ],
)
def test_yunikorn_vcore_capacity_forms(tmp_path, given, amount, said):
    """A bare number is cores, as ``vcore: 16`` in queues.yaml is; ``m`` is a thousandth of a core."""
    case, _ = import_files([_queues_yaml(tmp_path, None)], capacity={"vcore": given, "memory": "64Gi"})
    assert case["resources"]["vcore"] == amount
    assert f"Capacity of vcore from --capacity: {said}." in case["description"]


@pytest.mark.parametrize(
    ("given", "amount", "said"),
    [
        ("64Gi", 64 * 2**30, "64Gi = 68719476736 bytes"),
        ("64G", 64 * 10**9, "64G = 64000000000 bytes"),
        ("1024", 1024, "1024 bytes (a bare number is read in bytes, the unit of memory in this case)"),
    ],
)
def test_memory_capacity_forms_in_bytes(tmp_path, given, amount, said):
    case, _ = import_files([_queues_yaml(tmp_path, None)], capacity={"vcore": "4", "memory": given})
    assert case["resources"]["memory"] == amount
    assert f"Capacity of memory from --capacity: {said}." in case["description"]


@pytest.mark.parametrize(
    ("given", "amount", "said"),
    [
        ("65536", 65536, "65536 MiB (a bare number is read in MiB, the unit of memory-mb in this case)"),
        ("64Gi", 65536, "64Gi = 65536 MiB"),
        ("1Ti", 1048576, "1Ti = 1048576 MiB"),
    ],
)
def test_yarn_memory_capacity_forms_in_mib(tmp_path, given, amount, said):
    """YARN counts memory-mb in MiB: 64Gi is 64 x 1024 MiB."""
    path = _write(tmp_path, "f.xml", '<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>'
                  '<queue name="a"><minResources>1 mb, 1 vcores</minResources>'
                  "</queue></allocations>")  # fmt: skip
    case, _ = import_files([path], capacity={"memory-mb": given, "vcores": "16"})
    assert case["resources"] == {"memory-mb": amount, "vcores": 16}
    assert f"Capacity of memory-mb from --capacity: {said}." in case["description"]
    assert "Capacity of vcores from --capacity: 16 cores (a bare number is read in cores" in case["description"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("64GiB", "--capacity: memory: '64GiB': write a Kubernetes quantity such as 64Gi (no 'B')"),
        ("64 GB", "--capacity: memory: '64 GB': write a Kubernetes quantity such as 64 G (no 'B')"),
        ("lots", "--capacity: memory: 'lots' is not a Kubernetes quantity (like 500m, 4Gi or 2)"),
        ("-1", "--capacity: memory: '-1' is negative"),
    ],
)
def test_a_capacity_not_in_a_known_form_is_one_line(tmp_path, given, message):
    with pytest.raises((ImportFailed, QuantityError)) as err:
        import_files([_queues_yaml(tmp_path, None)], capacity={"vcore": "4", "memory": given})
    assert str(err.value) == message


def test_cli_summary_says_the_unit_of_a_bare_number(tmp_path, capsys):
    out = tmp_path / "case.yaml"
    code = main(["import", _queues_yaml(tmp_path, None), "--capacity", "vcore=16,memory=64Gi", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "capacity vcore 16 cores, memory 68719476736 bytes" in printed
    assert "Capacity of vcore from --capacity: 16 cores (a bare number is read in cores, the unit of vcore" in printed
    assert "Capacity of memory from --capacity: 64Gi = 68719476736 bytes." in printed
    written = yaml.safe_load(out.read_text())
    assert written["resources"] == {"vcore": 16, "memory": 64 * 2**30}
    parse_case(written)


def test_cli_bad_capacity_unit_exits_2_with_one_line(tmp_path, capsys):
    out = tmp_path / "case.yaml"
    args = ["import", _queues_yaml(tmp_path, None), "--capacity", "vcore=16,memory=64GiB", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "write a Kubernetes quantity such as 64Gi" in err
    assert not out.exists()


def test_mesos_mem_capacity_in_mib_and_counts_as_given():
    """Mesos counts mem in MiB: 4Gi is 4096; a count takes a suffix as Kubernetes reads it."""
    from fairalloc.io.importers.common import capacity_read

    assert capacity_read("mem", "4Gi", "MiB") == (Decimal(4096), "4Gi = 4096 MiB")
    assert capacity_read("gpus", "2k", "count") == (Decimal(2000), "2000 (a count, read as given)")
