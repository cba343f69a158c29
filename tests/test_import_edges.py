"""``fairalloc import`` on objects of the right kinds with values from the edges (issue 35, the first
"Done when"): huge, tiny, NaN, infinite and long-digit numbers, text where numbers go, lists where
mappings go, null, long names and names with a newline, duplicate names, shapes cut short.

The objects are those of tests/test_import_hypothesis.py (its generators, loaded from that file),
each mutated once at a random place; the contract is that file's ``import_checked``: exit 0 with a
case the loader reads, or exit 2 with one line and no file written, never a traceback.  The values
that replace a field are tests/test_import_hostile.py's wrong shapes and the numeric edges below.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.cli import main
from fairalloc.testing import places


def _sibling(name: str):
    """A module of this folder (the test run imports files, not packages)."""
    spec = importlib.util.spec_from_file_location(f"_edges_{name}", Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WELL_FORMED = _sibling("test_import_hypothesis")
HOSTILE = _sibling("test_import_hostile")

#: numbers at the edges, as YAML or JSON numbers and as text: beyond float64, beyond the loader's
#: magnitudes, beyond Python's 4300-digit int limit, not numbers at all
NUMERIC_EDGES = [
    "1e400", "1e999999999", "-1e400", "1e-400", "1e-300", 1e-300, 1e300, 1.5e308, "1.5e308",
    float("nan"), float("inf"), float("-inf"), "NaN", "Infinity", "-Infinity", "sNaN", "nan",
    10**30, 10**40, "9" * 40, "7" * 5000, 0, -1, 0.5, "high", "1_000", "0x10", "1e3Ki",
]  # fmt: skip
#: values of the wrong kind where a name, a mapping or a list goes
SHAPE_EDGES = [*HOSTILE.WRONG, "n" * 300, "a\nb", [None], {"": None}, [[1]]]
EDGES = NUMERIC_EDGES + SHAPE_EDGES

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GENERATORS = {
    "volcano": WELL_FORMED.volcano(),
    "kueue": WELL_FORMED.kueue(),
    "yarn-xml": WELL_FORMED.yarn_xml(),
    "yarn-rest": WELL_FORMED.yarn_rest(),
    "yunikorn-config": WELL_FORMED.yunikorn_config(),
    "yunikorn-rest": WELL_FORMED.yunikorn_rest(),
    "mesos": WELL_FORMED.mesos(),
    "kubernetes": WELL_FORMED.kubernetes(),
}


def _load(text: str):
    return ("json", json.loads(text)) if text.lstrip()[:1] in "{[" else ("yaml", list(yaml.safe_load_all(text)))


def _dump(fmt: str, value) -> str:
    return json.dumps(value) if fmt == "json" else yaml.safe_dump_all(value, sort_keys=False)


def _mutated(draw, fmt: str, value) -> str:
    """``value`` with one place replaced by an edge, or one list item (a document, a queue, a role)
    repeated with another value inside (a duplicate name)."""
    paths = places(value)
    path = draw(st.sampled_from(paths))
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, list) and draw(st.booleans()):
        twin = json.loads(json.dumps(parent[path[-1]], default=str))
        leaves = places(twin)
        if leaves:  # the twin differs somewhere, so that a silent merge would lose something
            where = draw(st.sampled_from(leaves))
            target = twin
            for key in where[:-1]:
                target = target[key]
            if not isinstance(target[where[-1]], (dict, list)):
                target[where[-1]] = draw(st.sampled_from(NUMERIC_EDGES[:8] + [7, "7"]))
        parent.insert(path[-1] + 1, twin)
    else:
        parent[path[-1]] = draw(st.sampled_from(EDGES))
    return _dump(fmt, value)


def _xml_mutated(draw, text: str) -> str:
    """A fair-scheduler.xml with one number replaced by an edge, or a queue repeated by name."""
    numbers = list(re.finditer(r">([^<>]+)<", text))
    if numbers and draw(st.booleans()):
        found = draw(st.sampled_from(numbers))
        edge = str(draw(st.sampled_from([e for e in NUMERIC_EDGES if not isinstance(e, str) or len(e) < 100])))
        return text[: found.start(1)] + edge + text[found.end(1) :]
    found = draw(st.sampled_from(list(re.finditer(r'<(queue|pool) name="([^"]+)">', text))))
    twin = f'<queue name="{found.group(2)}"><weight>7.0</weight></queue>'
    return text[: found.start()] + twin + text[found.start() :]


@st.composite
def mutated(draw, system: str):
    files, _, extra = draw(GENERATORS[system])
    name = draw(st.sampled_from(sorted(files)))
    if name.endswith(".xml"):
        files[name] = _xml_mutated(draw, files[name])
    else:
        files[name] = _mutated(draw, *_load(files[name]))
    return files, extra


@pytest.mark.parametrize("system", sorted(GENERATORS))
@SETTINGS
@given(data=st.data())
def test_an_edge_anywhere_is_a_case_or_one_line(system, data):
    files, extra = data.draw(mutated(system))
    WELL_FORMED.import_checked(files, [], *extra)


def test_every_numeric_edge_reaches_the_numeric_gate(capsys, tmp_path):
    """Each edge as a Volcano Queue's capability: refused with one line naming the file, the queue
    and the field, or read (``0``, ``0.5``, ``10**30``; ``1e-300`` is below the gate's magnitudes: refused)."""
    for k, edge in enumerate(NUMERIC_EDGES):
        queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "qa"},
                 "spec": {"weight": 1, "capability": {"cpu": edge}}}  # fmt: skip
        path = tmp_path / f"q{k}.yaml"
        path.write_text(yaml.safe_dump(queue))
        code = main(["import", str(path), "--capacity", "cpu=64", "--out", str(tmp_path / f"out{k}.yaml")])
        err = capsys.readouterr().err
        if edge in (0, 0.5, 10**30):  # 10**30 is MAX_MAGNITUDE itself
            assert code == 0, err
            continue
        assert code == 2, (edge, err)
        # a YAML float beyond float64 is refused by the reader (its line), any other edge at the gate
        field = (
            r"(line \d+|Queue/qa: spec\.capability\.cpu): "
            if isinstance(edge, str)
            else "Queue/qa: spec.capability.cpu: "
        )
        assert err.count("\n") == 1 and re.match(f"fairalloc: {re.escape(str(path))}: {field}", err), err
        assert not (tmp_path / f"out{k}.yaml").exists()


# -- duplicate names: one line naming both, never a silent merge ----------------------------------

_QUEUE = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: {name}}}\nspec: {{weight: {w}}}\n"
_FAIR = '<?xml version="1.0"?><allocations>{}</allocations>'
_CS = (
    '<?xml version="1.0"?><configuration><property><name>yarn.scheduler.capacity.root.queues</name>'
    "<value>a,a</value></property></configuration>"
)
_FAIR_REST = {"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": {
    "queueName": "root", "childQueues": {"queue": [{"queueName": "root.a"}, {"queueName": "root.a"}]}}}}}  # fmt: skip
_YK = "partitions:\n- name: default\n  queues:\n  - name: root\n    queues:\n    - {name: a}\n    - {name: a}\n"
_YK_REST = {"queuename": "root", "children": [{"queuename": "root.a"}, {"queuename": "root.a"}]}
_CQ = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\nspec: {cohort: co}\n"
_NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4'}}\n"
_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c}]}\n"

#: (files, options, what the line must say twice or name): each a duplicate the importers used to merge
DUPLICATES = {
    "volcano queues": ({"v.yaml": _QUEUE.format(name="qa", w=1) + "---\n" + _QUEUE.format(name="qa", w=7)},
                       ["--capacity", "cpu=4"], ["(document 2): Queue/qa", "v.yaml: Queue/qa)"]),
    "volcano 12 and '12'": ({"v.yaml": _QUEUE.format(name="12", w=1) + "---\n" + _QUEUE.format(name="'12'", w=7)},
                            ["--capacity", "cpu=4"], ["v.yaml: Queue: metadata.name: must be text (got 12)"]),
    "yarn siblings": ({"f.xml": _FAIR.format('<queue name="a"><weight>1</weight></queue><queue name="a"/>')},
                      ["--capacity", "memory-mb=4,vcores=4"], ["<queue> 'a' under <allocations>: queue root.a",
                                                               "two objects of one name there"]),
    "yarn a.b and a/b": ({"f.xml": _FAIR.format('<queue name="a.b"/><queue name="a"><queue name="b"/></queue>')},
                         ["--capacity", "memory-mb=4,vcores=4"],
                         ["<queue> 'b' under root.a", "also at", "<queue> 'a.b' under <allocations>"]),
    "yarn rest": ({"r.json": json.dumps(_FAIR_REST)}, ["--capacity", "memory-mb=4,vcores=4"],
                  ["r.json: queue root.a: queue root.a is given twice"]),
    "capacity scheduler": ({"cs.xml": _CS}, ["--capacity", "memory-mb=4,vcores=4"],
                           ["cs.xml: queue root.a: queue root.a is given twice"]),
    "yunikorn": ({"q.yaml": _YK}, ["--capacity", "vcore=4"], ["queue root.a (queues[1])", "queue root.a (queues[0])"]),
    "yunikorn rest": ({"q.json": json.dumps(_YK_REST)}, ["--from", "yunikorn", "--capacity", "vcore=4"],
                      ["q.json: queue root.a: queue root.a is given twice"]),
    "kueue": ({"k.yaml": _CQ + "---\n" + _CQ}, [], ["(document 2): ClusterQueue/cq", "k.yaml: ClusterQueue/cq)"]),
    "mesos": ({"w.json": json.dumps([{"role": "a", "weight": 1}, {"role": "a", "weight": 3}])},
              ["--from", "mesos", "--capacity", "cpus=4"], ["w.json: [1].weight: role a", "w.json: [0].weight"]),
    "kubernetes nodes": ({"n.yaml": _NODE + "---\n" + _NODE + "---\n" + _POD}, [],
                         ["(document 2): Node/n1: object Node/n1 is given twice (also at", "n.yaml: Node/n1)"]),
    "kubernetes pods": ({"n.yaml": _NODE + "---\n" + _POD + "---\n" + _POD}, [], ["(document 3): Pod/ns/p"]),
    "namespace 12 beside default": ({"ns.yaml": "kind: Namespace\napiVersion: v1\nmetadata: {name: 12}\n"}, [
        "--capacity", "cpu=4"], ["ns.yaml: Namespace: metadata.name: must be text (got 12)"]),
    "--capacity": ({"v.yaml": _QUEUE.format(name="qa", w=1)}, ["--capacity", "cpu=4,cpu=8"],
                   ["--capacity: cpu is given twice (cpu=4 and cpu=8)"]),
}  # fmt: skip


@pytest.mark.parametrize("files, options, said", DUPLICATES.values(), ids=list(DUPLICATES))
def test_a_duplicate_name_is_one_line_naming_both(capsys, tmp_path, files, options, said):
    paths = []
    for name, content in files.items():
        (tmp_path / name).write_text(content)
        paths.append(str(tmp_path / name))
    out = tmp_path / "out" / "case.yaml"
    out.parent.mkdir()
    code = main(["import", *paths, *options, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("fairalloc: "), err
    assert all(part in err for part in said), err
    assert list(out.parent.iterdir()) == []


def test_a_kueue_weight_of_zero_is_refused_at_its_field(capsys, tmp_path):
    """Kueue reads ``fairSharing.weight: 0`` as an infinite share value (always behind the others);
    the case loader has no such weight, so the import names the source field rather than the case's."""
    path = tmp_path / "k.yaml"
    path.write_text(_CQ.replace("spec: {cohort: co}", "spec: {cohort: co, fairSharing: {weight: '0'}}"))
    assert main(["import", str(path), "--capacity", "cpu=4"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fairalloc: {path}: ClusterQueue/cq: spec.fairSharing.weight: 0 ") and err.count("\n") == 1


@pytest.mark.parametrize(
    "name, said",
    [("n" * 300, "a name of 300 characters"), ('"a\\nb"', "is not printable text on one line")],
    ids=["300 characters", "a newline"],
)
def test_a_name_the_loader_refuses_is_refused_at_its_object(capsys, tmp_path, name, said):
    path = tmp_path / "v.yaml"
    path.write_text(_QUEUE.format(name=name, w=1))
    assert main(["import", str(path), "--capacity", "cpu=4"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fairalloc: {path}: Queue/") and said in err and err.count("\n") == 1, err


def test_a_deep_tree_is_refused_at_the_queue_whose_path_is_too_long(capsys, tmp_path):
    """500 nested YARN queues: the path of the 52nd (``root.q0.q1...q51``) passes MAX_NAME_CHARS,
    refused there before any deeper element is read (no recursion to the bottom)."""
    path = tmp_path / "deep.xml"
    path.write_text(_FAIR.format("".join(f'<queue name="q{k}">' for k in range(500)) + "</queue>" * 500))
    assert main(["import", str(path), "--capacity", "memory-mb=4,vcores=4"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fairalloc: {path}: <queue> 'q51' under root.q0.q1.") and "a name of 202" in err, err


def test_a_podset_count_beyond_the_gate_is_one_line(capsys, tmp_path):
    """A Workload of 10^40 pods: refused at its count (the gate), not as a demand of the case."""
    meta = {"name": "w", "namespace": "ns"}
    workload = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "metadata": meta,
                "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 10**40, "template": {"spec": {
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}}  # fmt: skip
    local = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\n"
    path = tmp_path / "k.yaml"
    path.write_text(_CQ + "---\n" + local + "spec: {clusterQueue: cq}\n---\n" + yaml.safe_dump(workload))
    assert main(["import", str(path), "--capacity", "cpu=4"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fairalloc: {path} (document 3): Workload/ns/w: spec.podSets[0].count: "), err
    assert "out of range" in err and err.count("\n") == 1
