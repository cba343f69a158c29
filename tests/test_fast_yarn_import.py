"""The fast YARN allocation-file importer against the one it replaces (tests/previous_yarn_import.py,
the importer at commit e2bcc7b): every file gives the same case mapping (same keys in the same order,
same number types), the same warnings in the same order and the same loaded instance, or the same
one-line refusal.

The files are drawn: random queue trees (fairalloc.testing.queue_trees, up to 50 queues, flat to six
levels deep) written as ``fair-scheduler.xml`` with every queue's weight, ``minResources`` (the
guarantee) and ``maxResources`` (the limit) in one of YARN's resource-string syntaxes (old, new, with
units, percentages), ``<queue>`` or ``<pool>``, policies, properties read silently or warned about,
and hostile variants (markup inside a property, a weight that is not a number or not > 0, a resource
string missing a resource, a queue without a name, one queue written twice).  And every file of the
YARN gallery (cases/imported/yarn*/) imports as it did.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.core.errors import CaseError
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import import_files
from fairalloc.testing import queue_trees

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the oracle beside this file (importlib mode)
import previous_yarn_import  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported"
#: fairalloc's resources as YARN names them (a third resource is a resource type such as a GPU)
YARN_NAMES = {"cpu": "vcores", "memory": "memory-mb"}


def typed(value):
    """``value`` with every scalar's type kept (``1`` and ``1.0`` are equal in Python, not in a case)."""
    if isinstance(value, dict):
        return ("map", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return ("seq", [typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def outcome(importer, paths: list[str], capacity: dict | None):
    """What ``importer`` makes of ``paths``: the case mapping, the warnings and the loaded
    instance (typed), or the class and the message of its refusal."""
    try:
        case, warnings = importer(paths, capacity=capacity, name="drawn")
    except CaseError as exc:
        return ("refused", type(exc).__name__, str(exc))
    return typed(case), list(warnings), typed(parse_case(case, "drawn").instance.to_dict())


def same_import(paths: list[str], capacity: dict | None = None) -> tuple:
    now = outcome(import_files, paths, capacity)
    assert now == outcome(previous_yarn_import.import_files, paths, capacity)
    return now


def _amount(value) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def resource_string(amounts: dict, style: str) -> str:
    """``amounts`` (fairalloc's resource names) as one of YARN's resource strings."""
    named = {YARN_NAMES.get(r, "yarn.io/gpu"): _amount(v) for r, v in amounts.items()}
    mb, cores = named.get("memory-mb", "0"), named.get("vcores", "0")
    if style == "old":  # the old syntax names memory and cores only (0 when not given)
        return f"{mb} mb, {cores} vcores"
    if style == "spaces":
        return f"  {cores}VCORES ,{mb}MB  "
    if style == "missing":
        return f"{mb} mb"
    if style == "percent":
        return f"{cores}% memory, {mb}% cpu"
    if style == "units":
        return ", ".join(f"{k}={v}Gi" if k == "memory-mb" else f"{k}={v}" for k, v in named.items())
    return ",".join(f"{k}={v}" for k, v in named.items())


#: a queue's elements drawn beside its weight, guarantee and limit
EXTRAS = [
    "<schedulingPolicy>drf</schedulingPolicy>",
    "<schedulingPolicy>fair</schedulingPolicy>",
    "<schedulingPolicy>fifo</schedulingPolicy>",
    "<maxRunningApps>10</maxRunningApps>",
    "<maxChildResources>1024 mb, 1 vcores</maxChildResources>",
    "<aclSubmitApps>alice</aclSubmitApps>",
    "<colour>blue</colour>",
    "<!-- a comment -->",
]
#: what makes a file hostile, drawn once per file for one queue
HOSTILE = {
    "weight 0": "<weight>0</weight>",
    "weight x": "<weight>x</weight>",
    "weight huge": "<weight>1e400</weight>",
    "markup": "<weight><nested>2</nested></weight>",
    "empty": "<minResources/>",
    "missing": "<maxResources>1024 mb</maxResources>",
    "nameless": "",
    "twice": "",
}


@st.composite
def properties(draw, spec: dict, styles: list[str], hostile: str | None) -> list[str]:
    """The property elements of one queue (its weight, guarantee and limit, and drawn others)."""
    out = []
    if "weight" in spec:
        weight = draw(st.sampled_from([_amount(spec["weight"]), f" {_amount(spec['weight'])}.0 "]))
        out.append(f"<weight>{weight}</weight>")
    for tag, key in (("minResources", "guarantee"), ("maxResources", "limit")):
        if spec.get(key):
            out.append(f"<{tag}>{resource_string(spec[key], draw(st.sampled_from(styles)))}</{tag}>")
    out += draw(st.lists(st.sampled_from(EXTRAS), max_size=2))
    if hostile and HOSTILE[hostile]:
        out.append(HOSTILE[hostile])
    return draw(st.permutations(out))


@st.composite
def allocation_files(draw) -> tuple[str, dict]:
    """A drawn ``fair-scheduler.xml`` and the capacity to import it with."""
    inst = draw(queue_trees(max_queues=50))
    data = inst.to_dict()
    groups, users = data.get("groups", {}), data["users"]
    children: dict = {}
    for name, spec in [*groups.items(), *users.items()]:
        children.setdefault(spec.get("parent", spec.get("group")), []).append(name)
    hostile = draw(st.sampled_from([None, *HOSTILE])) if draw(st.integers(0, 3)) == 3 else None
    victim = draw(st.sampled_from(list(users)))
    styles = draw(st.lists(st.sampled_from(["old", "spaces", "new", "units", "percent"]), min_size=1, unique=True))

    def element(name: str) -> list[str]:
        spec = groups[name] if name in groups else users[name]
        harm = hostile if name == victim else None
        tag = draw(st.sampled_from(["queue", "queue", "queue", "pool"]))
        kind = ' type="parent"' if name in groups and draw(st.booleans()) else ""
        named = "" if harm == "nameless" else f' name="{name}"'
        lines = [f"<{tag}{named}{kind}>", *draw(properties(spec, styles, harm))]
        return [*lines, *written(children.get(name, [])), f"</{tag}>"]

    def written(names: list[str]) -> list[str]:
        twice = [victim] if hostile == "twice" and victim in names else []
        return [line for name in [*names, *twice] for line in element(name)]

    top = draw(st.lists(st.sampled_from([
        "<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>",
        "<defaultQueueSchedulingPolicy>fair</defaultQueueSchedulingPolicy>",
        "<queueMaxResourcesDefault>memory-mb=4096, vcores=2</queueMaxResourcesDefault>",
        "<queueMaxAppsDefault>5</queueMaxAppsDefault>",
        '<user name="sample_user"><maxRunningApps>30</maxRunningApps></user>',
        "<mystery>1</mystery>",
    ]), max_size=3, unique=True))  # fmt: skip
    body = written(children.get(None, []))
    if draw(st.booleans()):
        body = ['<queue name="root">', *body, "</queue>"]
    capacity = {"memory-mb": "1", "vcores": "1"}  # both: the old syntax names both
    capacity.update({YARN_NAMES.get(r, "yarn.io/gpu"): _amount(v) for r, v in data["resources"].items()})
    return "\n".join(["<?xml version='1.0'?>", "<allocations>", *top, *body, "</allocations>"]), capacity


@SETTINGS
@given(allocation_files())
def test_drawn_allocation_files_import_as_before(tmp_path_factory, drawn):
    text, capacity = drawn
    path = tmp_path_factory.mktemp("yarn") / "fair-scheduler.xml"
    path.write_text(text)
    same_import([str(path)], capacity)


def test_a_plain_file_imports_as_before(tmp_path):
    """A file without hostile parts imports (not only refusals agree): two levels, every syntax."""
    path = tmp_path / "fair-scheduler.xml"
    path.write_text(
        "<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>"
        '<queue name="a"><weight>2.0</weight><minResources>1024 mb, 2 vcores</minResources>'
        '<queue name="b"><maxResources>memory-mb=4Gi, vcores=3</maxResources></queue>'
        '<queue name="c"><minResources>memory-mb=0012, vcores=1.50</minResources></queue></queue>'
        '<pool name="d"><maxResources>50%</maxResources></pool></allocations>'
    )
    case, warnings, _ = same_import([str(path)], {"memory-mb": "65536", "vcores": "16"})
    assert case[0] == "map" and ("str", "users") in [k for k, _ in case[1]]
    assert warnings == [f"{path}: queue root.d: <pool>: the older name of <queue> (AllocationFileLoaderService "
                        "reads both): read as a queue"]  # fmt: skip


def _gallery_files():
    for spec_path in sorted(GALLERY.glob("yarn*/*/expect.yaml")):
        spec = yaml.safe_load(spec_path.read_text())
        capacity = {r: str(v) for r, v in (spec.get("capacity") or {}).items()} or None
        yield pytest.param([str(spec_path.parent / f) for f in spec["files"]], capacity, id=spec_path.parent.name)


@pytest.mark.parametrize(("paths", "capacity"), list(_gallery_files()))
def test_the_gallery_imports_as_before(paths, capacity):
    assert same_import(paths, capacity)[0] != "refused"


def test_a_wrong_string_written_twice_is_refused_at_its_first_queue(tmp_path):
    """Each distinct resource string and weight is read once: a wrong one is still refused naming
    the first queue that writes it, the message the previous importer gave."""
    path = tmp_path / "fair-scheduler.xml"
    queue = '<queue name="{}"><weight>{}</weight><minResources>{}</minResources></queue>'
    for weight, amounts, field in (("2", "1024 mb", "minResources"), ("0", "1024 mb, 1 vcores", "weight")):
        good = queue.format("a", "2", "1024 mb, 1 vcores")
        path.write_text(f"<allocations>{good}{queue.format('b', weight, amounts)}{queue.format('c', weight, amounts)}"
                        "</allocations>")  # fmt: skip
        refused = same_import([str(path)], {"memory-mb": "4096", "vcores": "4"})
        assert refused[0] == "refused" and f"{path}: queue root.b: {field}: " in refused[2]


def tree_of(read, text: str):
    """What ``read`` (an XML reader) makes of ``text``: every element's tag, attributes (in order),
    text and tail, depth first; or its refusal's message."""
    try:
        root = read(text, "f.xml")
    except CaseError as exc:
        return ("refused", type(exc).__name__, str(exc))
    return [(e.tag, list(e.attrib.items()), e.text, e.tail) for e in root.iter()]


#: XML texts beside the drawn files: entities (declared, undefined, predefined, by number), a document
#: type (and one in lower case, which XML does not have), namespaces, comments, CDATA, processing
#: instructions, text that only mentions a declaration, encodings declared, malformed texts
XML_TEXTS = [
    '<!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>',
    '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "xxxx"><!ENTITY y "&x;&x;">]><allocations>&y;</allocations>',
    '<!DOCTYPE x SYSTEM "http://example.com/x.dtd"><x/>',
    "<!DOCTYPE x><x/>",
    "<x>&undefined;</x>",
    "<x>&amp;&lt;&#65;&#x42;</x>",
    '<a xmlns="urn:x" xmlns:b="urn:b"><b:c b:d="1">t</b:c>tail</a>',
    "<a><!-- <!ENTITY e 'no'> --><b/><![CDATA[<!DOCTYPE in text>]]><?pi data?></a>",
    "<a>&lt;!DOCTYPE&gt;</a>",
    "<a><b></a>",
    "<a>",
    "<a/><b/>",
    "< a/>",
    "<a b='1' b='2'/>",
    "<a>\x00</a>",
    "\ufeff<a>é</a>",
    '<?xml version="1.0" encoding="ISO-8859-1"?><a>é</a>',
    '<?xml version="1.0" encoding="bogus"?><a/>',
    "<!doctype a><a/>",
    "<a>\r\n&#13;</a>",
]


@pytest.mark.parametrize("text", XML_TEXTS)
def test_xml_texts_read_as_before(text):
    """The XML reader against the previous one (every text through the defused parser): the same
    tree, or the same refusal (a document type with entities is refused, as before)."""
    from fairalloc.io.importers.common import _xml

    assert tree_of(_xml, text) == tree_of(previous_yarn_import._xml, text)


@SETTINGS
@given(allocation_files(), st.sampled_from(["", "<!DOCTYPE allocations>\n", "<!-- c -->\n"]))
def test_drawn_allocation_files_read_as_before(drawn, before):
    from fairalloc.io.importers.common import _xml

    text = drawn[0].replace("<allocations>", before + "<allocations>", 1)
    assert tree_of(_xml, text) == tree_of(previous_yarn_import._xml, text)
