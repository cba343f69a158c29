"""The fast YAML reader (libyaml's events straight to data) against the composer-based reader it
replaces (tests/previous_reader.py, the reader at commit 67d9578): every text gives the same data
(same types, same key order) or the same one-line refusal, and a case file the same Case.

Random queue trees (fairalloc.testing.queue_trees) are dumped in block and in flow (JSON) style;
hostile variants add a duplicate queue, an alias, nesting beyond the limit or a number beyond what
fairalloc reads; and random flow-style texts mix every scalar YAML resolves (octal, hex, ``1_000``,
booleans, nulls, dates, ``<<``, ``=``), anchors, aliases, tags and duplicate keys.  And what
fairalloc writes with libyaml's emitter is what PyYAML's writes.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.cli.render import yaml_doc
from fairalloc.core import limits
from fairalloc.core.decimals import plain
from fairalloc.core.errors import CaseError
from fairalloc.io import cases
from fairalloc.testing import queue_trees

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the oracle beside this file (importlib mode)
import previous_reader  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def typed(value):
    """``value`` with every scalar's type kept (``1``, ``1.0`` and ``True`` are equal in Python)."""
    if isinstance(value, dict):
        return ("map", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def outcome(read, text: str, where: str = "f.yaml"):
    """What ``read`` makes of ``text``: its data (typed), or the message of its refusal."""
    try:
        return typed(read(text, where))
    except CaseError as exc:
        return ("refused", str(exc))
    except Exception as exc:  # the previous reader's tracebacks (an impossible date, ``!!int x``)
        return ("crashed", type(exc).__name__)


def same_reading(text: str) -> None:
    readers = [(cases._read_yaml, previous_reader._read_yaml)]
    readers += [(cases.read_yaml_documents, previous_reader.read_yaml_documents)]
    for new_reader, old_reader in readers:
        new, old = outcome(new_reader, text), outcome(old_reader, text)
        if old[0] == "crashed":  # now refused in one line naming the file and line
            assert new[0] == "refused" and new[1].startswith("f.yaml: line ") and "\n" not in new[1], new
        else:
            assert new == old


def case_outcome(read, text: str):
    """The Case read from ``text`` (what defines it), or the message of its refusal."""
    try:
        case = cases._parse_file(read(text, "f.yaml"), "f.yaml")
    except CaseError as exc:
        return ("refused", str(exc))
    return (case.name, case.policy, case.units, case.demand, typed(case.instance.to_dict()))


def same_case(text: str) -> None:
    new, old = case_outcome(cases._read_yaml, text), case_outcome(previous_reader._read_yaml, text)
    assert new == old


@SETTINGS
@given(queue_trees(max_queues=50), st.booleans())
def test_queue_trees_read_alike(tree, flow):
    mapping = tree.to_dict()
    text = json.dumps(mapping) if flow else yaml.safe_dump(mapping, sort_keys=False)
    assert cases._read_plain(text) == [mapping]  # the fast path read it (not the composer)
    same_reading(text)
    same_case(text)


def _hostile(mapping: dict, kind: str, k: int) -> str:
    """A queue tree's text with one hostile change."""
    users = list(mapping["users"])
    user = users[k % len(users)]
    text = yaml.safe_dump(mapping, sort_keys=False)
    if kind == "duplicate":  # the queue given twice
        return text + "\n" + yaml.safe_dump({"users": {user: mapping["users"][user]}}).split("\n", 1)[1]
    if kind == "alias":  # one queue's settings written once and referred to
        mapping["users"][users[0]]["weight"] = 2
        block = yaml.safe_dump(mapping, sort_keys=False)
        return block.replace(f"  {users[0]}:\n", f"  {users[0]}: &first\n", 1) + "  extra: *first\n"
    if kind == "deep":  # nesting at and beyond the limit
        depth = limits.MAX_YAML_DEPTH - 2 + k % 4
        return text + "description: " + "[" * depth + "]" * depth + "\n"
    if kind == "big":  # an integer of too many digits, a float beyond float64
        number = "9" * (limits.MAX_EXACT_DIGITS + k % 3 - 1) if k % 2 else ("1e400", "1e-400", "1e308")[k % 3]
        return text.replace("resources:\n", f"resources:\n  huge: {number}\n", 1)
    raise AssertionError(kind)


@SETTINGS
@given(queue_trees(max_queues=20), st.sampled_from(["duplicate", "alias", "deep", "big"]), st.integers(0, 50))
def test_hostile_cases_refused_alike(tree, kind, k):
    text = _hostile(tree.to_dict(), kind, k)
    same_reading(text)
    same_case(text)


#: plain scalars of every kind YAML 1.1 (and fairalloc's 1.2 floats) resolve, and some that look so
SCALARS = [
    *("0", "7", "-3", "+4", "010", "0o17", "0x1F", "0b101", "1_000", "190:20:30", "-0", "09"),
    *("1.5", "-2.", ".5", "1e-9", "1E+3", "6.8523015e+5", "1_0.5", "1e400", "1e-400", "0e5", ".inf", "-.Inf"),
    *(".nan", "NaN", "inf", "9" * 199, "9" * 200, "9" * 201, "-" + "9" * 200),
    *("true", "False", "yes", "NO", "on", "Off", "y", "n", "~", "null", "Null", "''", '""'),
    *("2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-13-45", "<<", "=", "cpu", "q17", "50%", '"3"'),
    *("'yes'", "!!str 5", "!!int '7'", "!!float 1", "!!python/name:os.system ''", "!custom x", "!!binary aGk="),
]


def _flow(draw, depth: int) -> str:
    kind = draw(st.sampled_from(["scalar", "scalar", "map", "seq", "alias"] if depth < 4 else ["scalar"]))
    anchor = draw(st.sampled_from(["", "", "", "&a ", "&b "]))
    if kind == "scalar":
        return anchor + draw(st.sampled_from(SCALARS))
    if kind == "alias":
        return draw(st.sampled_from(["*a", "*b"]))
    items = draw(st.integers(0, 4))
    if kind == "seq":
        return anchor + "[" + ", ".join(_flow(draw, depth + 1) for _ in range(items)) + "]"
    key_texts = SCALARS[:12] + ["a", "b", "'a'", "1.0", "true", "yes", "<<", "[x]"]
    keys = [draw(st.sampled_from(key_texts)) for _ in range(items)]
    return anchor + "{" + ", ".join(f"{key}: {_flow(draw, depth + 1)}" for key in keys) + "}"


@st.composite
def flow_texts(draw) -> str:
    documents = [_flow(draw, 0) for _ in range(draw(st.integers(1, 3)))]
    nested = draw(st.integers(0, 3))
    if nested:  # around the nesting limit
        depth = limits.MAX_YAML_DEPTH - 2 + nested
        documents[0] = "[" * depth + documents[0] + "]" * depth
    return "\n---\n".join(documents) + "\n"


@settings(max_examples=300, deadline=None)
@given(flow_texts())
def test_random_texts_read_alike(text):
    same_reading(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb:\n  c: [1, 2]\n  c: 3\n",  # a duplicate key below the top
        "1: x\n0x1: y\n",  # two spellings of one number
        "a: &x [1]\nb: *x\n",  # an alias: the composer reads it
        "a: 1\n---\nb: 2\n",  # two documents where one is read
        "a: [1, 2\n",  # not valid YAML
        "a: !!python/object/apply:os.system ['ls']\n",
        "? [a]\n: 1\n",  # a complex key
        "a: \x00\n",
        "",
        "---\n---\n",
    ],
)
def test_known_texts_read_alike(text):
    same_reading(text)


#: texts where libyaml's emitter and PyYAML's differ (line breaks, non-ASCII, empty or long keys) and
#: plain ones where they agree
TEXTS = st.one_of(
    st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=150),
    st.text(max_size=20),
    st.sampled_from(["", "yes", "a: b", "#c", "- x", "'q'", '"d"', "é", "a\nb", "x" * 130, "emoji 😀", "\x85"]),
)
DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXTS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTS, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(DATA)
def test_yaml_written_as_pyyaml_writes_it(data):
    """What fairalloc writes (cli.render.yaml_doc: libyaml's emitter where it writes the same text)
    is PyYAML's safe dump, byte for byte."""
    assert yaml_doc(data) == yaml.safe_dump(plain(data), sort_keys=False, allow_unicode=True)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 2001-13-45\n", "f.yaml: line 1: '2001-13-45' is not a valid timestamp (month must be in 1..12)"),
        ("a:\n  b: !!int x\n", "f.yaml: line 2: 'x' is not a valid int (invalid literal for int() with base 10: 'x')"),
        ("a: !!bool maybe\n", "f.yaml: line 1: 'maybe' is not a valid bool"),
    ],
)
def test_unreadable_scalars_refused_in_one_line(text, message):
    """The previous reader let the constructor's ValueError (KeyError for a bool) out as a traceback."""
    with pytest.raises(CaseError) as caught:
        cases._read_yaml(text, "f.yaml")
    assert str(caught.value) == message
    with pytest.raises((ValueError, KeyError)):
        previous_reader._read_yaml(text, "f.yaml")
