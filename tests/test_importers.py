"""The Kubernetes, Volcano, YARN and YuniKorn importers (fairalloc/io/importers/): field by field, on
objects hypothesis writes (numbers formatted as each system writes them, read back exactly), with
warnings naming file, object and field, and one-line errors.  Kueue and Mesos have files of their own.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fairalloc.io.importers import import_files
from fairalloc.io.importers.common import Document, ImportFailed, Notes
from fairalloc.io.importers.kubernetes import pod_request
from fairalloc.io.quantities import format_kube

amounts = st.integers(0, 10**6).map(lambda k: Decimal(k).scaleb(-3))  # milli-precision
memory = st.integers(0, 2**20).map(lambda k: Decimal(k * 1024 * 1024))


def _dump(tmp_path, name, docs) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return str(path)


# -- Kubernetes: the pod request rule --------------------------------------------------------------


def _container(cpu, restart=None):
    c = {"name": "c", "resources": {"requests": {"cpu": format_kube(cpu)}}}
    if restart:
        c["restartPolicy"] = restart
    return c


def test_pod_request_examples_of_kubernetes():
    """component-helpers/resource/helpers_test.go, TestPodRequestsAndLimits-style cases: init
    containers run one at a time before the app containers; sidecars keep running."""
    pod = {
        "spec": {
            "initContainers": [_container(Decimal(2)), _container(Decimal(1), "Always"), _container(Decimal(3))],
            "containers": [_container(Decimal(1)), _container(Decimal("0.5"))],
            "overhead": {"cpu": "100m"},
        }
    }
    # apps 1.5 + sidecar 1 = 2.5; init peaks: 2, sidecar 1, 3 + 1 = 4; max 4, plus overhead 0.1
    assert pod_request(pod, "p") == {"cpu": Decimal("4.1")}
    only_limits = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"memory": "1Gi"}}}]}}
    assert pod_request(only_limits, "p") == {"memory": 2**30}


@given(
    apps=st.lists(amounts, min_size=1, max_size=4),
    inits=st.lists(st.tuples(amounts, st.booleans()), max_size=4),
    overhead=amounts,
)
def test_pod_request_is_kubernetes_rule(apps, inits, overhead):
    pod = {
        "spec": {
            "containers": [_container(a) for a in apps],
            "initContainers": [_container(a, "Always" if side else None) for a, side in inits],
            "overhead": {"cpu": format_kube(overhead)},
        }
    }
    # the rule, written out independently: the largest of the steps a pod goes through
    sidecars, peak = Decimal(0), Decimal(0)
    for a, side in inits:
        peak = max(peak, sidecars + a)
        if side:
            sidecars += a
    expected = max(sum(apps) + sidecars, peak) + overhead
    assert pod_request(pod, "p").get("cpu", Decimal(0)) == expected


def test_kubernetes_namespaces_quotas_pods_and_nodes(tmp_path):
    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}, "spec": {"unschedulable": True}, "status": {"capacity": {"cpu": "8", "memory": "16Gi"}}},
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "a"}, "spec": {"hard": {"requests.cpu": "4", "count/jobs.batch": "3"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "a"}, "spec": {"containers": [_container(Decimal(2))]}, "status": {"phase": "Running"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2", "namespace": "a"}, "spec": {"containers": [_container(Decimal(3))]}, "status": {"phase": "Pending"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p3", "namespace": "b"}, "spec": {"containers": [_container(Decimal(9))]}, "status": {"phase": "Succeeded"}},
    ]  # fmt: skip
    path = _dump(tmp_path, "k.yaml", docs)
    case, warnings = import_files([path])
    assert case["resources"] == {"cpu": 16, "memory": 32 * 2**30}
    assert case["users"]["a"] == {"limit": {"cpu": 4}, "request": {"cpu": 5}, "usage": {"cpu": 2}}
    assert "b" not in case["users"]  # a finished pod holds nothing
    assert any("Node/n2: status.allocatable: missing" in w for w in warnings)
    assert any("Node/n2: spec.unschedulable" in w for w in warnings)
    assert any(f"{path} (document 3): ResourceQuota/a/q: spec.hard.count/jobs.batch" in w for w in warnings)


def test_a_kubectl_json_list(tmp_path):
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "x"},
             "spec": {"containers": [_container(Decimal("0.25"))]}},
        ],
    }  # fmt: skip
    path = tmp_path / "all.json"
    path.write_text(json.dumps(listing))
    case, _ = import_files([str(path)])
    assert case["users"]["x"]["request"] == {"cpu": 0.25} and case["resources"] == {"cpu": 4}


def test_a_bad_quantity_is_one_line(tmp_path):
    docs = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "two"}}}]}}]  # fmt: skip
    with pytest.raises(ImportFailed) as err:
        import_files([_dump(tmp_path, "p.yaml", docs)], capacity={"cpu": "4"})
    assert "Pod/p: spec.containers[0].resources.requests.cpu: 'two' is not a Kubernetes quantity" in str(err.value)


# -- Volcano -----------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(
    queues=st.lists(
        st.tuples(st.integers(1, 100), amounts, memory, amounts, memory), min_size=1, max_size=5, unique_by=lambda q: q
    )
)
def test_volcano_queues_read_back_exactly(tmp_path_factory, queues):
    docs = []
    for k, (weight, g_cpu, g_mem, c_cpu, c_mem) in enumerate(queues):
        spec = {
            "weight": weight,
            "guarantee": {"resource": {"cpu": format_kube(g_cpu), "memory": format_kube(g_mem, binary=True)}},
            "capability": {"cpu": format_kube(c_cpu), "memory": format_kube(c_mem, binary=True)},
        }
        docs.append(
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": f"q{k}"},
                "spec": spec,
            }
        )
    docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {"scheduling.volcano.sh/queue-name": "q0"}},
                 "spec": {"containers": [_container(Decimal(1))]}})  # fmt: skip
    path = _dump(tmp_path_factory.mktemp("v"), "q.yaml", docs)
    case, warnings = import_files([path], capacity={"cpu": "1000", "memory": "1Ti"})
    assert case["policy"] == "volcano-proportion" and not warnings
    for k, (weight, g_cpu, g_mem, c_cpu, c_mem) in enumerate(queues):
        q = case["users"][f"q{k}"]
        assert q.get("weight", 1) == weight
        assert Decimal(str(q["guarantee"]["cpu"])) == g_cpu and q["guarantee"]["memory"] == g_mem
        assert Decimal(str(q["limit"]["cpu"])) == c_cpu and q["limit"]["memory"] == c_mem
    assert case["users"]["q0"]["request"] == {"cpu": 1}


def test_volcano_guarantee_without_its_resource_level_is_a_warning(tmp_path):
    docs = [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "a"},
             "spec": {"weight": 2, "guarantee": {"cpu": "4"}}}]  # fmt: skip
    path = _dump(tmp_path, "q.yaml", docs)
    case, warnings = import_files([path], capacity={"cpu": "8"})
    assert warnings == [
        f"{path}: Queue/a: spec.guarantee: written without its 'resource:' level (Volcano reads nothing): not read"
    ]
    assert "guarantee" not in case["users"]["a"]


def test_volcano_configmap_without_proportion(tmp_path):
    conf = yaml.safe_dump({"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}, {"name": "drf"}]}]})
    docs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap"}, "data": {"volcano-scheduler.conf": conf}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "a"}, "spec": {"weight": 1}},
    ]  # fmt: skip
    _, warnings = import_files([_dump(tmp_path, "c.yaml", docs)], capacity={"cpu": "8"})
    assert any(
        "ConfigMap/volcano-scheduler-configmap: data.volcano-scheduler.conf: no tier enables 'proportion'" in w
        for w in warnings
    )


def _volcano_queue(name, **spec):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def _capacity_conf(hierarchy: bool) -> dict:
    plugin = {"name": "capacity", **({"enableHierarchy": True} if hierarchy else {})}
    return {"actions": "enqueue, allocate, reclaim", "tiers": [{"plugins": [{"name": "gang"}, plugin]}]}


def test_volcano_scheduler_conf_file_with_hierarchical_capacity(tmp_path):
    conf = _dump(tmp_path, "volcano-scheduler.conf", [_capacity_conf(hierarchy=True)])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {"scheduling.volcano.sh/queue-name": "dev"}},
           "spec": {"containers": [_container(Decimal(2))]}}  # fmt: skip
    queues = _dump(tmp_path, "q.yaml", [
        _volcano_queue("eng", weight=3, deserved={"cpu": "6"}, capability={"cpu": "8"}, guarantee={"resource": {"cpu": "1"}}),
        _volcano_queue("dev", parent="eng", deserved={"cpu": "4"}),
        _volcano_queue("ops", parent="root", deserved={"cpu": "2"}),
        pod,
    ])  # fmt: skip
    case, warnings = import_files([conf, queues], capacity={"cpu": "16"})
    assert case["policy"] == "volcano-capacity"
    assert warnings == [f"{queues}: Queue/eng: spec.weight: read by the proportion plug-in, not capacity: not read"]
    assert case["groups"] == {
        "root": {},
        "eng": {"parent": "root", "limit": {"cpu": 8}, "guarantee": {"cpu": 1}, "deserved": {"cpu": 6}},
    }
    assert case["users"] == {
        "dev": {"group": "eng", "deserved": {"cpu": 4}, "request": {"cpu": 2}},
        "ops": {"group": "root", "deserved": {"cpu": 2}},
    }


def test_volcano_capacity_without_hierarchy_is_flat_and_says_so(tmp_path):
    docs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap"},
         "data": {"volcano-scheduler.conf": yaml.safe_dump(_capacity_conf(hierarchy=False))}},
        _volcano_queue("a", parent="b", deserved={"cpu": "2"}), _volcano_queue("b", reclaimable=False),
    ]  # fmt: skip
    path = _dump(tmp_path, "c.yaml", docs)
    case, warnings = import_files([path], capacity={"cpu": "8"})
    assert case["policy"] == "volcano-capacity" and "groups" not in case
    assert case["users"]["a"] == {"deserved": {"cpu": 2}}
    assert warnings == [
        f"{path} (document 2): Queue/a: spec.parent: the capacity plug-in's enableHierarchy is off: not read",
        f"{path} (document 3): Queue/b: spec.reclaimable: reclaim is not modelled (the entitlement is the same): not read",
    ]


def test_volcano_proportion_warns_about_deserved_and_parent(tmp_path):
    conf = {"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "proportion"}]}]}
    path = _dump(
        tmp_path, "q.yaml", [conf, _volcano_queue("a", parent="b", deserved={"cpu": "2"}), _volcano_queue("b")]
    )
    case, warnings = import_files([path], capacity={"cpu": "8"})
    assert case["policy"] == "volcano-proportion" and "deserved" not in case["users"]["a"]
    assert [w.split(": ", 2)[2] for w in warnings] == [
        "spec.deserved: read by the capacity plug-in, not proportion: not read",
        "spec.parent: proportion is flat: not read",
    ]


def test_volcano_hierarchy_refuses_an_unknown_parent_and_a_cycle(tmp_path):
    conf = _capacity_conf(hierarchy=True)
    path = _dump(tmp_path, "q.yaml", [conf, _volcano_queue("a", parent="engg"), _volcano_queue("eng")])
    with pytest.raises(ImportFailed, match=r"Queue/a: spec.parent: unknown queue 'engg'; did you mean 'eng'\?"):
        import_files([path], capacity={"cpu": "8"})
    path = _dump(tmp_path, "c.yaml", [conf, _volcano_queue("a", parent="b"), _volcano_queue("b", parent="a")])
    with pytest.raises(ImportFailed, match="Queue/a: spec.parent: a cycle: a -> b -> a"):
        import_files([path], capacity={"cpu": "8"})


def test_volcano_jobs_in_a_parent_queue_are_a_warning(tmp_path):
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
             "spec": {"queue": "eng", "minResources": {"cpu": "1"}}}  # fmt: skip
    docs = [_capacity_conf(hierarchy=True), _volcano_queue("eng"), _volcano_queue("dev", parent="eng"), group]
    path = _dump(tmp_path, "q.yaml", docs)
    case, warnings = import_files([path], capacity={"cpu": "8"})
    assert "request" not in case["groups"]["eng"]
    assert warnings == [
        f"{path} (document 2): Queue/eng: jobs or pods in a queue with children (the capacity plug-in then "
        "schedules nothing): not read"
    ]


def test_volcano_root_queue_sums_its_children_and_both_plugins_read_as_capacity(tmp_path):
    conf = _capacity_conf(hierarchy=True)
    conf["tiers"][0]["plugins"].append({"name": "proportion"})
    root = _volcano_queue("root", deserved={"cpu": "9"}, capability={"cpu": "12"})
    path = _dump(tmp_path, "q.yaml", [conf, root, _volcano_queue("a", deserved={"cpu": "2"})])
    case, warnings = import_files([path], capacity={"cpu": "16"})
    assert case["policy"] == "volcano-capacity" and case["groups"] == {"root": {"limit": {"cpu": 12}}}
    assert warnings == [
        f"{path}: document 1: tiers: enables both capacity and proportion: capacity read",
        f"{path} (document 2): Queue/root: spec.deserved: the root's is the sum of its children's: not read",
    ]


def test_volcano_scheduler_conf_without_a_dividing_plugin(tmp_path):
    path = _dump(
        tmp_path, "q.yaml", [{"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}]}]}, _volcano_queue("a")]
    )
    _, warnings = import_files([path], capacity={"cpu": "8"})
    assert warnings == [f"{path}: document 1: tiers: no tier enables 'proportion' or 'capacity'"]


# -- YARN ---------------------------------------------------------------------------------------------


def _yarn_string(mem: int, cores: int, syntax: int) -> str:
    return [f"{mem} mb, {cores} vcores", f"memory-mb={mem}, vcores={cores}", f"vcores={cores},memory-mb={mem}"][syntax]


@settings(max_examples=40)
@given(
    tree=st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 512), st.integers(1, 9), st.integers(0, 2), st.booleans()),
        min_size=1,
        max_size=5,
    )
)
def test_yarn_allocation_files_read_back(tmp_path_factory, tree):
    """A parent queue holding the generated leaves; every min/max in one of the three syntaxes."""
    leaves = "".join(
        f'<queue name="q{k}"><weight>{w}.0</weight><minResources>{_yarn_string(m, c, s)}</minResources>'
        f"<maxResources>{_yarn_string(2 * m, 2 * c, s)}</maxResources>"
        f"<schedulingPolicy>{'drf' if drf else 'fair'}</schedulingPolicy></queue>"
        for k, (m, c, w, s, drf) in enumerate(tree)
    )
    path = tmp_path_factory.mktemp("y") / "fair-scheduler.xml"
    path.write_text(f'<?xml version="1.0"?><allocations><queue name="eng">{leaves}</queue></allocations>')
    case, warnings = import_files([str(path)], capacity={"memory-mb": "1000000", "vcores": "1000"})
    assert case["groups"] == {"root.eng": {}}
    for k, (m, c, w, *_) in enumerate(tree):
        q = case["users"][f"root.eng.q{k}"]
        assert q["group"] == "root.eng" and q.get("weight", 1) == w
        assert q["guarantee"] == {"memory-mb": m, "vcores": c} and q["limit"] == {"memory-mb": 2 * m, "vcores": 2 * c}
    # each leaf's 'fair' orders its applications; the file names no default policy, so it is 'fair'
    assert len(warnings) == sum(not drf for *_, drf in tree) + 1


def test_yarn_rest_json_with_the_documentation_trailing_comma_is_one_line(tmp_path):
    """ResourceManagerRest.md's Fair Scheduler JSON example has '],' before '}' (not JSON)."""
    path = tmp_path / "scheduler.json"
    path.write_text('{"scheduler": {"schedulerInfo": {"rootQueue": {"childQueues": {"queue": [],\n}}}}}')
    with pytest.raises(ImportFailed) as err:
        import_files([str(path)])
    assert (
        str(err.value)
        == f"{path}: not valid JSON: Expecting property name enclosed in double quotes at line 2, column 1"
    )


def test_yarn_rest_json_and_nodes(tmp_path):
    answer = {"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": {
        "queueName": "root", "clusterResources": {"memory": 8192, "vCores": 8},
        "childQueues": {"queue": [{"queueName": "root.a", "minResources": {"memory": 1024, "vCores": 1},
                                   "usedResources": {"memory": 2048, "vCores": 2},
                                   "demandResources": {"memory": 4096, "vCores": 4}}]}}}}}  # fmt: skip
    nodes = {"nodes": {"node": [{"state": "RUNNING", "usedMemoryMB": 1024, "availMemoryMB": 3072,
                                 "usedVirtualCores": 1, "availableVirtualCores": 3},
                                {"state": "LOST", "usedMemoryMB": 0, "availMemoryMB": 4096}]}}  # fmt: skip
    (tmp_path / "s.json").write_text(json.dumps(answer))
    (tmp_path / "n.json").write_text(json.dumps(nodes))
    case, _ = import_files([str(tmp_path / "s.json"), str(tmp_path / "n.json")])
    assert case["resources"] == {"memory-mb": 4096, "vcores": 4}  # the running node, not the lost one
    assert case["users"]["root.a"]["request"] == {"memory-mb": 4096, "vcores": 4}
    assert case["users"]["root.a"]["usage"] == {"memory-mb": 2048, "vcores": 2}


def test_yarn_entity_expansion_is_refused(tmp_path):
    path = tmp_path / "fair-scheduler.xml"
    path.write_text(
        '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "xxxx"><!ENTITY y "&x;&x;">]><allocations>&y;</allocations>'
    )
    with pytest.raises(ImportFailed, match="refused"):
        import_files([str(path)])


def test_yarn_bad_resource_string_names_the_queue(tmp_path):
    path = tmp_path / "fair-scheduler.xml"
    path.write_text('<allocations><queue name="a"><minResources>1024 mb</minResources></queue></allocations>')
    with pytest.raises(ImportFailed) as err:
        import_files([str(path)])
    assert str(err.value).startswith(f"{path}: queue root.a: minResources: '1024 mb': vcores is missing")


# -- YuniKorn -----------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(queues=st.lists(st.tuples(st.integers(0, 10**4), st.integers(0, 2**12)), min_size=1, max_size=5))
def test_yunikorn_queue_trees_read_back_with_vcore_in_cores(tmp_path_factory, queues):
    """``vcore: 1000`` is 1000 cores and ``{c}m`` is c/1000 of a core, as YuniKorn's ParseVCore reads them."""
    config = {
        "partitions": [
            {
                "name": "default",
                "queues": [
                    {
                        "name": "root",
                        "resources": {"max": {"vcore": "1000", "memory": "1Ti"}},
                        "queues": [
                            {
                                "name": "team",
                                "queues": [
                                    {
                                        "name": f"q{k}",
                                        "resources": {"guaranteed": {"vcore": f"{c}m", "memory": f"{g}Gi"}},
                                    }
                                    for k, (c, g) in enumerate(queues)
                                ],
                            }
                        ],
                    }
                ],
            }
        ]
    }
    docs = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "yunikorn-configs"},
             "data": {"queues.yaml": yaml.safe_dump(config)}}]  # fmt: skip
    path = _dump(tmp_path_factory.mktemp("yk"), "cm.yaml", docs)
    case, warnings = import_files([path])
    assert warnings == [
        f"{path}: ConfigMap/yunikorn-configs: data.queues.yaml: queue root: resources.max: YuniKorn refuses a root "
        "queue with resource limits: read as a capacity all the same"
    ]
    assert case["resources"] == {"vcore": 1000, "memory": 2**40}
    assert case["units"] == {"vcore": "cores", "memory": "bytes"}
    assert case["groups"] == {"root.team": {}}
    for k, (c, g) in enumerate(queues):
        assert case["users"][f"root.team.q{k}"]["guarantee"] == {"vcore": c / 1000, "memory": g * 2**30}


@pytest.mark.parametrize("value", ["1.5", "10 cores", "-1", "1e3"])
def test_yunikorn_quantities_are_whole_numbers(tmp_path, value):
    config = {"partitions": [{"name": "default", "queues": [{"name": "root", "queues": [
        {"name": "a", "resources": {"max": {"memory": value}}}]}]}]}  # fmt: skip
    path = tmp_path / "queues.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ImportFailed, match=r"queue root.a: resources.max.memory: .* is not a YuniKorn quantity"):
        import_files([str(path)], capacity={"memory": "1Gi"})


def test_notes_keep_the_document_number():
    notes = Notes()
    notes.warn(Document("f.yaml", 2, {}, "yaml"), "Queue/a", "spec.x", "why")
    assert notes.warnings == ["f.yaml (document 3): Queue/a: spec.x: why"]


def test_import_case_hands_back_the_case_the_loader_reads():
    """``import_case`` gives the mapping and warnings of ``import_files`` and the loaded case it
    checked, the case ``parse_case`` reads from that mapping (a caller need not load it again)."""
    from fairalloc.io.cases import parse_case
    from fairalloc.io.importers import import_case

    path = str(Path(__file__).resolve().parent.parent / "cases/imported/yarn/allocation-file/fair-scheduler.xml")
    capacity = {"memory-mb": "65536", "vcores": "32"}
    case, loaded, warnings = import_case([path], capacity=capacity)
    assert (case, warnings) == import_files([path], capacity=capacity)
    again = parse_case(case, case["name"])
    assert loaded.raw is case and loaded.instance.to_dict() == again.instance.to_dict()
