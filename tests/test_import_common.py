"""What every importer shares (fairalloc/io/importers/common.py): reading files, warnings, the case.

The ``fairalloc import`` command itself: one-line errors with exit code 2, warnings on stderr, and
no output file unless the import succeeded.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
import yaml

from fairalloc.cli import main
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import detect
from fairalloc.io.importers.common import (
    Draft,
    ImportFailed,
    Notes,
    capacity_amounts,
    embedded,
    finish,
    read_documents,
)
from fairalloc.io.quantities import Percent


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_multi_document_yaml_and_kubernetes_lists(tmp_path):
    path = _write(
        tmp_path,
        "objs.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n---\n"
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: a}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: q, namespace: a}}\n",
    )
    docs = read_documents([path])
    assert [d.label for d in docs] == ["Namespace/a", "Pod/a/p", "Pod/a/q"]
    assert docs[1].where.endswith("(document 2)") and docs[0].group == "" and docs[1].api_version == "v1"


def test_json_and_xml_are_told_apart_by_content(tmp_path):
    j = _write(tmp_path, "a.txt", '{"kind": "PodList", "apiVersion": "v1", "items": [{"kind": "Pod"}], "x": 1.5}')
    x = _write(tmp_path, "b.conf", "<allocations><queue name='a'/></allocations>")
    docs = read_documents([j, x])
    assert [d.format for d in docs] == ["json", "xml"] and docs[0].kind == "Pod"
    assert docs[1].data.tag == "allocations"
    assert json.loads('{"x": 1.5}', parse_float=Decimal)["x"] == Decimal("1.5")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1,}', "not valid JSON: Expecting property name enclosed in double quotes at line 1, column 9"),
        ('{"a": NaN}', "not valid JSON: NaN is not a number JSON allows"),
        ("<a><b></a>", "not valid XML: mismatched tag"),
        ('<!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>', "refused:"),
        ("a: [1, 2\n", "not valid YAML"),
        ("a: 1\na: 2\n", "duplicate key"),
    ],
)
def test_invalid_files_are_one_line_errors(tmp_path, text, message):
    path = _write(tmp_path, "bad.json", text)
    with pytest.raises(ImportFailed) as err:
        read_documents([path])
    assert path in str(err.value) and message in str(err.value) and "\n" not in str(err.value)


def test_a_configmap_holds_a_file(tmp_path):
    path = _write(
        tmp_path,
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\ndata:\n"
        "  queues.yaml: |\n    partitions:\n    - name: default\n",
    )
    (cm,) = read_documents([path])
    (inner,) = embedded(cm, "queues.yaml")
    assert inner.data == {"partitions": [{"name": "default"}]}
    assert inner.where.endswith("ConfigMap/yunikorn-configs: data.queues.yaml")
    assert embedded(cm, "other") == []


def test_notes_name_file_object_and_field_once():
    notes = Notes()
    notes.warn("q.yaml", "Queue/a", "spec.guarantee", "written without its resource: level")
    notes.warn("q.yaml", "Queue/a", "spec.guarantee", "written without its resource: level")
    assert notes.warnings == ["q.yaml: Queue/a: spec.guarantee: written without its resource: level"]


def _draft(**kw):
    base = dict(
        system="kueue",
        policy="kueue",
        files=["a.yaml"],
        units={"cpu": "cores", "memory": "bytes", "memory-mb": "MiB"},
        users={"a": {"request": {"cpu": Decimal("1.5")}, "guarantee": {"memory": Percent(Decimal(50))}}},
    )
    base.update(kw)
    return Draft(**base)


def test_finish_writes_a_case_that_loads(tmp_path):
    notes = Notes()
    case = finish(
        _draft(capacity={"cpu": Decimal(8)}, capacity_from="nodes"),
        name="c",
        capacity={"memory": "1Gi"},
        notes=notes,
    )
    assert case["resources"] == {"cpu": 8, "memory": 1073741824}
    assert case["users"]["a"] == {"request": {"cpu": 1.5}, "guarantee": {"memory": "50%"}}
    assert case["policy"] == "kueue" and case["units"] == {"cpu": "cores", "memory": "bytes"}
    assert "Capacity from nodes." in case["description"]
    loaded = parse_case(case)
    assert loaded.policy == "kueue" and loaded.instance.queues.guarantee["a"][1] == 1073741824 / 2


def test_a_resource_without_capacity_asks_for_it():
    with pytest.raises(
        ImportFailed,
        match=r"no capacity for memory, cpu .*: give --capacity memory=N,cpu=N "
        r"\(a bare N is read in bytes for memory, cores for cpu; a quantity such as 64Gi or 16000m is converted\)$",
    ):
        finish(_draft(), name="c", capacity=None, notes=Notes())


def test_capacity_override_is_a_warning():
    notes = Notes()
    finish(_draft(capacity={"cpu": Decimal(8), "memory": Decimal(64)}), name="c", capacity={"cpu": "16"}, notes=notes)
    assert notes.warnings == ["--capacity: cpu: replaces the capacity 8 cores the files give"]


def test_capacity_in_the_case_units():
    units = {"cpu": "cores", "memory": "bytes", "memory-mb": "MiB", "vcore": "millicores", "gpu": "count"}
    given = {"cpu": "500m", "memory": "2Gi", "memory-mb": "2Gi", "vcore": "4", "gpu": "2"}
    assert capacity_amounts(given, units) == {
        "cpu": Decimal("0.5"),
        "memory": 2 * 1024**3,
        "memory-mb": 2048,
        "vcore": 4,
        "gpu": 2,
    }


def test_nothing_recognised_names_the_files(tmp_path):
    path = _write(tmp_path, "x.yaml", "hello: world\n")
    with pytest.raises(ImportFailed, match="no Volcano, Kueue, YARN, YuniKorn, Mesos or Kubernetes objects"):
        detect(read_documents([path]))


def test_cli_errors_are_one_line_and_write_nothing(tmp_path, capsys):
    bad = _write(tmp_path, "bad.json", '{"a": 1,}')
    out = tmp_path / "case.yaml"
    assert main(["import", bad, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not valid JSON" in err
    assert not out.exists()
    assert main(["import", bad, "--from", "kueu"]) == 2
    assert "did you mean 'kueue'" in capsys.readouterr().err
    assert main(["import", bad, "--capacity", "cpu"]) == 2
    assert "--capacity: expected resource=amount pairs" in capsys.readouterr().err


def test_cli_help_teaches_with_an_example(capsys):
    assert main(["import", "--help"]) == 0
    text = capsys.readouterr().out
    assert "Example:" in text and "fairalloc import" in text and "--capacity" in text


def test_solve_shows_amounts_in_the_case_units(capsys):
    assert main(["solve", "report-volcano-4165", "-m", "volcano-proportion"]) == 0
    out = capsys.readouterr().out
    assert "24.41 GiB" in out and "25 cores" in out and "73.24 GiB" in out
    assert main(["solve", "report-volcano-4165", "-m", "volcano-proportion", "--format", "json"]) == 0
    assert "26214400000" in capsys.readouterr().out  # JSON keeps the case's numbers


def test_a_case_the_loader_refuses_is_refused_at_import_naming_the_source_objects(tmp_path, capsys):
    """YARN weights 1e-13 and 1 are floats the Fair Scheduler reads, but beyond the loader's weight
    ratio (1e12): the refusal names the file's <queue> elements, not only the case's fields."""
    queues = "".join(f'<queue name="{q}"><weight>{w}</weight></queue>' for q, w in (("a", "1e-13"), ("b", "1")))
    xml = f"<allocations>{queues}</allocations>"
    source, out = _write(tmp_path, "fair-scheduler.xml", xml), tmp_path / "case.yaml"
    assert main(["import", source, "--capacity", "vcores=4,memory-mb=100", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    head = f"fairalloc: {source}: <queue> 'a' under <allocations>: the imported case does not load: users.root.a.weight"
    assert err.startswith(head), err
    assert err.rstrip().endswith(f"(root.b read at {source}: <queue> 'b' under <allocations>)"), err
    assert err.count("\n") == 1 and not out.exists()


def test_the_summary_of_a_large_import_shows_its_first_rows(tmp_path, capsys):
    """10,000 queues are written to the case whole; the summary on the screen stops after
    SUMMARY_ROWS rows and says how many more there are."""
    from fairalloc.cli.imports import SUMMARY_ROWS

    xml = "<allocations>" + "".join(f'<queue name="q{i}"/>' for i in range(10_000)) + "</allocations>"
    source, out = _write(tmp_path, "fair-scheduler.xml", xml), tmp_path / "case.yaml"
    assert main(["import", source, "--capacity", "vcores=4,memory-mb=100", "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    assert f"root.q{SUMMARY_ROWS - 1} " in shown and f"root.q{SUMMARY_ROWS} " not in shown
    assert f"... and {10_000 - SUMMARY_ROWS:,} more groups and queues (all are in the case)" in shown
    assert len(yaml.safe_load(out.read_text())["users"]) == 10_000
