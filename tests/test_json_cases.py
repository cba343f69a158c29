"""JSON cases (issue 36): a JSON text is read by the standard library's C decoder
(fairalloc.io.cases._read_json) wherever YAML is read, and must give what the YAML reader gives for
the same text (JSON is YAML): the same data (same types, same key order), the same Case, or the same
one-line refusal.  The oracle is the YAML reader at commit 67d9578 (tests/previous_reader.py), the
one the libyaml-events reader is held to; random queue trees (fairalloc.testing.queue_trees) are
dumped as JSON, compact and indented, and hostile variants add a duplicate key, nesting beyond the
limit, numbers beyond what fairalloc reads, NaN, escapes and characters YAML refuses.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.cli import main
from fairalloc.core import limits
from fairalloc.core.errors import CaseError
from fairalloc.io import cases
from fairalloc.testing import queue_trees

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the oracles beside this file (importlib mode)
import previous_reader  # noqa: E402
from test_fast_reading import case_outcome, outcome, typed  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def same_as_yaml(text: str) -> None:
    """``text`` read by fairalloc (the JSON decoder when it can) as the YAML reader reads it."""
    assert outcome(cases._read_yaml, text) == outcome(previous_reader._read_yaml, text)
    assert outcome(cases.read_yaml_documents, text) == outcome(previous_reader.read_yaml_documents, text)
    assert case_outcome(cases._read_yaml, text) == case_outcome(previous_reader._read_yaml, text)


@SETTINGS
@given(queue_trees(max_queues=50), st.sampled_from([None, 1, 2]))
def test_json_queue_trees_read_as_yaml(tree, indent):
    mapping = tree.to_dict()
    text = json.dumps(mapping, indent=indent)
    assert cases._read_json(text) == mapping  # the JSON decoder read it (not the YAML reader)
    same_as_yaml(text)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_trees(max_queues=30))
def test_json_file_loads_the_yaml_files_case(tmp_path_factory, tree):
    """load_case of the case written as JSON and as YAML: the same instance (to_dict, types kept)."""
    folder = tmp_path_factory.mktemp("cases")
    mapping = tree.to_dict()
    (folder / "c.json").write_text(json.dumps(mapping, indent=1))
    (folder / "c.yaml").write_text(cases.yaml.safe_dump(mapping, sort_keys=False))
    from_json, from_yaml = cases.load_case(folder / "c.json"), cases.load_case(folder / "c.yaml")
    assert repr(from_json.instance.to_dict()) == repr(from_yaml.instance.to_dict())
    assert from_json.raw == from_yaml.raw


def _hostile(mapping: dict, kind: str, k: int) -> str:
    """A queue tree's JSON text with one hostile change."""
    users = list(mapping["users"])
    user = users[k % len(users)]
    text = json.dumps(mapping, indent=1)
    if kind == "duplicate":  # the queue given twice
        return text.replace(f'\n  "{user}": ', f'\n  "{user}": {{}},\n  "{user}": ', 1)
    if kind == "deep":  # nesting at and beyond the limit
        depth = limits.MAX_YAML_DEPTH - 3 + k % 4
        return text.replace('"name": ', '"description": ' + "[" * depth + "]" * depth + ', "name": ', 1)
    if kind == "big":  # an integer of too many digits, floats beyond float64, exponents of 3 digits
        numbers = ("9" * (limits.MAX_EXACT_DIGITS + k % 3 - 1), "1e400", "-1E-400", "1e308", "2.5e-300", "NaN")
        return text.replace('"resources": {', f'"resources": {{"huge": {numbers[k % len(numbers)]}, ', 1)
    if kind == "text":  # escapes and characters in a description
        texts = ('"\\ud800"', '"\\ud83d\\ude00"', '"\\u0000\\"\\\\"', '"\x7f"', '"\x85é"', '"\\/"', '"\\"[{"')
        return text.replace('"name": ', f'"description": {texts[k % len(texts)]}, "name": ', 1)
    raise AssertionError(kind)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_trees(max_queues=10), st.sampled_from(["duplicate", "deep", "big", "text"]), st.integers(0, 50))
def test_hostile_json_read_as_yaml(tree, kind, k):
    text = _hostile(tree.to_dict(), kind, k)
    if "\\ud83d\\ude00" in text:  # a whole surrogate pair: JSON's emoji (libyaml refuses the escape)
        assert cases._read_yaml(text, "f.json")["description"] == "\U0001f600"
        return
    same_as_yaml(text)


#: JSON values of every kind: numbers near fairalloc's bounds, strings with escapes, nested containers
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**210), 10**210)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=4) | st.lists(JSON_VALUES, max_size=4), st.booleans())
def test_json_values_read_as_yaml(value, ascii_only):
    """Every JSON text reads as YAML reads it, but for a character beyond the BMP written as a
    surrogate pair (``ensure_ascii``): libyaml refuses the escape, the JSON decoder reads the
    character (where the text is the YAML reader's, an exponent of three digits, it is refused)."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    if re.search(r"\\u[dD][89abAB]", text) and cases._json_keys(text) is not None:
        assert outcome(cases._read_yaml, text) == typed(json.loads(text))
    else:
        assert outcome(cases._read_yaml, text) == outcome(previous_reader._read_yaml, text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"resources": {"cpu": 1},\n "users": {"a": {}, "a": {}}}',
            "users.a: duplicate key (lines 2 and 2 of f.json)",
        ),
        ('{"resources": {"cpu": 1e999}}', "f.json: line 1: the number 1e999 is beyond what a float holds"),
        ('{"resources": {"cpu": 1,}', "f.json: not valid YAML: "),
    ],
)
def test_bad_json_refused_in_one_line(text, message):
    with pytest.raises(CaseError) as caught:
        cases._read_yaml(text, "f.json")
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_cli_solves_a_json_case(tmp_path, capsys):
    """``fairalloc solve case.json``: the JSON file's answer is the YAML file's; a bad field in a JSON
    file is one line naming the file and the field, exit code 2."""
    case = cases.load_bundled("drf-section-4-1").raw
    (tmp_path / "c.json").write_text(json.dumps(case))
    (tmp_path / "c.yaml").write_text(cases.yaml.safe_dump(case, sort_keys=False))
    answers = []
    for suffix in ("json", "yaml"):
        assert main(["solve", str(tmp_path / f"c.{suffix}"), "-m", "drf", "--format", "json"]) == 0
        answers.append(capsys.readouterr().out)
    assert answers[0] == answers[1] and json.loads(answers[0])
    case["users"]["A"]["weight"] = -1
    (tmp_path / "bad.json").write_text(json.dumps(case))
    assert main(["solve", str(tmp_path / "bad.json"), "-m", "drf"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "users.A.weight: must be a finite number > 0" in err and "bad.json" in err
