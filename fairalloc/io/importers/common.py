"""What every importer shares: reading the files, warnings, and the case an importer's draft becomes.

An importer (one module per system) turns :class:`Document` objects into a :class:`Draft`: the
queues, their configuration, requests and usage, in the system's own resource names and units.
:func:`finish` makes the draft a case mapping (the production vocabulary of a queue case, with
``policy``, ``units`` and ``source``).  Whatever an importer does not understand is a warning of
:class:`Notes`, naming the file, the object and the field; a file that cannot be read at all is one
:class:`ImportFailed` line.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from xml.etree import ElementTree
from xml.etree.ElementTree import Element

from fairalloc.core.errors import CaseError, excerpt, one_line
from fairalloc.io.cases import _file, _name, read_limited, read_text_file, read_yaml_documents, too_large_message
from fairalloc.io.quantities import Percent, QuantityError, parse_kube, tidy
from fairalloc.io.quantities import number as _number_gate

__all__ = [
    "ImportFailed",
    "Document",
    "STDIN",
    "read_documents",
    "read_stdin",
    "parse_text",
    "parse_json",
    "embedded",
    "Notes",
    "Draft",
    "CapacitySource",
    "NODES",
    "TOTALS",
    "CONFIGURED",
    "finish",
    "mapping",
    "listing",
    "text",
    "number",
    "once",
]


class ImportFailed(CaseError):
    """A file fairalloc cannot import: one line naming the file, the object and the field."""


@dataclass(frozen=True)
class Document:
    """One object of an input file: a YAML document, a JSON value or an XML root element."""

    file: str
    index: int
    data: Any
    format: str

    @property
    def where(self) -> str:
        return self.file if self.index == 0 else f"{self.file} (document {self.index + 1})"

    @property
    def kind(self) -> str | None:
        return _text(self.data.get("kind")) if isinstance(self.data, dict) else None

    @property
    def api_version(self) -> str | None:
        return _text(self.data.get("apiVersion")) if isinstance(self.data, dict) else None

    @property
    def group(self) -> str:
        """The API group of ``apiVersion`` (``kueue.x-k8s.io``; ``""`` for the core group)."""
        version = self.api_version or ""
        return version.rsplit("/", 1)[0] if "/" in version else ""

    @property
    def metadata(self) -> dict:
        meta = self.data.get("metadata") if isinstance(self.data, dict) else None
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str | None:
        return _text(self.metadata.get("name"))

    @property
    def namespace(self) -> str | None:
        return _text(self.metadata.get("namespace"))

    @property
    def label(self) -> str:
        """``Kind/name`` (``Kind/namespace/name`` for a namespaced object), as messages name it."""
        if self.kind is None:
            return f"document {self.index + 1}" if self.format == "yaml" else "document"
        parts = [self.kind, *(p for p in (self.namespace, self.name) if p)]
        return "/".join(parts)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


#: the file name that stands for standard input (``kubectl get nodes -o json | fairalloc import -``)
STDIN = "-"


def read_documents(paths) -> list[Document]:
    """The documents of ``paths`` (``-``: standard input): XML, JSON or (multi-document) YAML, told
    apart by their first character; a Kubernetes list (``kind: List``, ``PodList``, ...) becomes one
    document per item."""
    documents: list[Document] = []
    if [str(p) for p in paths].count(STDIN) > 1:
        raise ImportFailed("-: standard input is given more than once (it can be read once)")
    for path in paths:
        if str(path) == STDIN:
            documents += parse_text(read_stdin(), "stdin")
            continue
        where = _file(path)
        text = read_text_file(path, "nothing to import", expected="YAML, JSON or XML")
        documents += parse_text(text, where)
    return documents


def read_stdin() -> str:
    """The text of standard input, bounded as a file is (what a pipe gives: ``kubectl``, ``curl``)."""
    import sys

    try:
        text = read_limited(sys.stdin.buffer, too_large_message("stdin")).decode("utf-8")
    except UnicodeDecodeError:
        raise ImportFailed("stdin: not text (expected YAML, JSON or XML)") from None
    except OSError as exc:
        raise ImportFailed(f"stdin: cannot read: {exc.strerror or one_line(exc, 200)}") from None
    if not text.strip():
        raise ImportFailed("stdin: empty (nothing to import)")
    return text


def parse_text(text: str, where: str, index: int = 0) -> list[Document]:
    head = text.lstrip()[:1]
    if head == "<":
        return [Document(where, index, _xml(text, where), "xml")]
    if head in ("{", "["):
        return _expanded([Document(where, index, parse_json(text, where), "json")])
    try:
        data = read_yaml_documents(text, where)
    except CaseError as exc:
        raise ImportFailed(str(exc)) from None
    return _expanded([Document(where, index + k, d, "yaml") for k, d in enumerate(data)])


def parse_json(text: str, where: str) -> Any:
    """JSON text, its non-integers exact (:class:`~decimal.Decimal`); every problem one line at ``where``."""
    try:
        return json.loads(text, parse_float=Decimal, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"{where}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except ValueError as exc:
        raise ImportFailed(f"{where}: not valid JSON: {one_line(exc, 200)}") from None
    except RecursionError:
        raise ImportFailed(f"{where}: nested too deeply for fairalloc to read") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _xml(text: str, where: str) -> Element:
    """The element tree of an XML text; entities and a document type are refused.

    A text without ``<!DOCTYPE`` declares no entity and no external reference (XML has them in
    its document type only), so expat's C tree builder reads it as the defused parser would, at
    about half its cost (the defused parser is ElementTree's Python one); any other text, and any
    text the C parser refuses, is read by the defused parser, with its messages."""
    import defusedxml.ElementTree as safe_xml  # refuses entity expansion and external entities
    from defusedxml import DefusedXmlException

    if "<!DOCTYPE" not in text and "<!ENTITY" not in text:
        try:
            return ElementTree.fromstring(text)
        except ElementTree.ParseError:
            pass  # the defused parser's message
    try:
        return safe_xml.fromstring(text)
    except DefusedXmlException as exc:
        raise ImportFailed(f"{where}: refused: {one_line(exc, 200)} (entities are not read)") from None
    except safe_xml.ParseError as exc:
        raise ImportFailed(f"{where}: not valid XML: {one_line(exc, 200)}") from None


def _expanded(documents: list[Document]) -> list[Document]:
    """Items of Kubernetes lists as documents of their own (same file and index)."""
    out: list[Document] = []
    for doc in documents:
        items = doc.data.get("items") if isinstance(doc.data, dict) else None
        kind = doc.kind or ""
        if kind.endswith("List") and isinstance(items, list):
            out += _expanded([Document(doc.file, doc.index, item, doc.format) for item in items])
        else:
            out.append(doc)
    return out


def embedded(doc: Document, key: str) -> list[Document]:
    """The documents of a ConfigMap's ``data[key]`` (a configuration file held in a ConfigMap)."""
    data = doc.data.get("data") if isinstance(doc.data, dict) else None
    text = data.get(key) if isinstance(data, dict) else None
    if text is None:
        return []
    if not isinstance(text, str):
        raise ImportFailed(f"{doc.where}: {doc.label}: data.{key}: must be the text of a file (got {excerpt(text)})")
    return parse_text(text, f"{doc.where}: {doc.label}: data.{key}", doc.index)


def mapping(value: Any, where: str) -> dict:
    """``value`` if it is a mapping (``None``: empty), else one :class:`ImportFailed` line at ``where``."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ImportFailed(f"{where}: must be a mapping (got {excerpt(value)})")
    return value


def listing(value: Any, where: str) -> list:
    """``value`` if it is a list (``None``: empty), else one :class:`ImportFailed` line at ``where``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ImportFailed(f"{where}: must be a list (got {excerpt(value)})")
    return value


def text(value: Any, where: str) -> str | None:
    """``value`` if it is text (``None`` stays ``None``), else one :class:`ImportFailed` line at ``where``."""
    if value is None or isinstance(value, str):
        return value
    raise ImportFailed(f"{where}: must be text (got {excerpt(value)})")


def number(value: Any, where: str, *, negative: bool = False, whole: bool = False) -> Decimal:
    """A quantity, weight, count or priority an importer reads, through the one numeric gate
    (:func:`fairalloc.io.quantities.number`: exact, bounded, no NaN or infinity), or one
    :class:`ImportFailed` line at ``where`` (file: object: field)."""
    try:
        return _number_gate(value, where, negative=negative, whole=whole)
    except QuantityError as exc:
        raise ImportFailed(str(exc)) from None


def once(first: dict[str, str], name: str, where: str, kind: str = "queue") -> None:
    """Record that ``kind`` ``name`` is given at ``where`` (file: object); a second one is one
    :class:`ImportFailed` line naming both.  fairalloc never merges two objects of one name: which
    one a scheduler keeps is its own rule (the last applied, the first listed, a refusal), and a
    case that silently kept either would misstate the other."""
    if name in first:
        also = "two objects of one name there" if first[name] == where else f"also at {first[name]}"
        raise ImportFailed(
            f"{where}: {kind} {name} is given twice ({also}): fairalloc does not merge them; remove or rename one"
        )
    first[name] = where


class Notes:
    """The warnings of one import, in the order they were found."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        #: the lines said, for the check that each is said once (a scan of the list made a file of
        #: 10,000 queues, each warned about, take 10,000 x 10,000 comparisons)
        self._said: set[str] = set()

    def warn(self, doc: Document | str, obj: str, field: str, message: str) -> None:
        where = doc.where if isinstance(doc, Document) else doc
        line = ": ".join(p for p in (where, obj, field, message) if p)
        if line not in self._said:
            self._said.add(line)
            self.warnings.append(line)


#: the kinds of capacity a system's files state, the more direct first: what the nodes report, the
#: totals the scheduler reports for the whole cluster, a maximum configured on the root queue
NODES, TOTALS, CONFIGURED = "nodes", "cluster totals", "the root queue's maximum"
_RANK = {NODES: 0, TOTALS: 1, CONFIGURED: 2}


@dataclass(frozen=True)
class CapacitySource:
    """One statement of the cluster's resources in the files: its kind (:data:`NODES`,
    :data:`TOTALS` or :data:`CONFIGURED`), where it was read (file: object: field) and the amounts."""

    kind: str
    where: str
    amounts: dict[str, Decimal]


@dataclass
class Draft:
    """An importer's answer: the queues in the system's own names and units (see the module doc)."""

    system: str
    policy: str
    files: list[str]
    capacity: dict[str, Decimal] = field(default_factory=dict)
    capacity_from: str = ""
    units: dict[str, str] = field(default_factory=dict)
    groups: dict[str, dict] = field(default_factory=dict)
    users: dict[str, dict] = field(default_factory=dict)
    description: list[str] = field(default_factory=list)
    sources: list[CapacitySource] = field(default_factory=list)
    unit_of: Callable[[str], str] | None = None
    #: the policy's own options the files configure (the case's ``settings:``)
    settings: dict[str, Any] = field(default_factory=dict)
    #: where each queue and group was read (:meth:`add`)
    read_at: dict[str, str] = field(default_factory=dict)

    def add(self, table: dict[str, dict], name: str, spec: dict, where: str) -> None:
        """Queue or group ``name`` (``table``: :attr:`users` or :attr:`groups`) read at ``where``;
        a name read twice (two objects, two siblings, a dotted name beside a nested one) is one
        line naming both (:func:`once`); a name the case loader refuses (too long: a deep tree's
        path, or not on one line) is one line here, where its source is known."""
        try:
            _name(name)
        except ValueError as exc:
            raise ImportFailed(f"{where}: {exc}") from None
        once(self.read_at, name, where)
        table[name] = spec

    def offer_capacity(self, kind: str, where: str, amounts: dict[str, Decimal]) -> None:
        """One more statement of the cluster's resources; ``capacity`` becomes, per resource, the
        amount of the most direct source naming it (:func:`chosen_source`)."""
        if not amounts:
            return
        self.sources.append(CapacitySource(kind, where, dict(amounts)))
        chosen = {r: chosen_source(self.sources, r) for s in self.sources for r in s.amounts}
        self.capacity = {r: s.amounts[r] for r, s in chosen.items()}
        self.capacity_from = " and ".join(dict.fromkeys(s.kind for s in chosen.values()))

    def named_resources(self) -> list[str]:
        """The resources any group or queue names (guarantees, limits, requests, usage), in order.
        Each mapping is read once: queues share one for the same text (an allocation file of
        10,000 queues writes a few thousand), and a mapping's names were all met where it was first."""
        mappings = [spec.get(key) for spec in [*self.groups.values(), *self.users.values()] for key in _AMOUNT_FIELDS]
        first = {id(m): m for m in mappings if m}  # in the order each was first met
        return list(dict.fromkeys(itertools.chain.from_iterable(first.values())))

    def name_units(self, unit_of) -> None:
        """``units`` of every resource the draft names (capacity first), by ``unit_of(resource)``, kept
        for the resources only ``--capacity`` names."""
        self.units = {r: unit_of(r) for r in dict.fromkeys([*self.capacity, *self.named_resources()])}
        self.unit_of = unit_of


def chosen_source(sources: list[CapacitySource], resource: str) -> CapacitySource:
    """The source whose amount of ``resource`` is the cluster's: a node list before the cluster
    totals, the totals before a configured maximum; among sources of one kind, the first read.

    Why this order: the nodes are what there is to share, and a scheduler's totals are derived from
    them (YARN's ``ClusterMetricsInfo`` sums the root queue's available and allocated resources;
    YuniKorn's ``PartitionContext.updatePartitionResource`` sums the nodes and sets the root queue's
    maximum to that sum), so a total that differs is a snapshot of another moment.  A maximum on
    the root queue is not a size at all: YuniKorn refuses one in its configuration
    (``checkQueuesStructure``: "root queue must not have resource limits set") and reports the
    nodes' sum as root's ``maxResource``."""
    naming = [s for s in sources if resource in s.amounts]
    return min(naming, key=lambda s: _RANK[s.kind])


_AMOUNT_FIELDS = ("guarantee", "limit", "deserved", "borrowing_limit", "lending_limit", "request", "usage")


#: a bare number of ``--capacity``: read in the case's unit of the resource
_BARE = re.compile(r"\d+(?:\.\d+)?")


def capacity_amounts(given: dict[str, str], units: dict[str, str]) -> dict[str, Decimal]:
    """``--capacity`` values in the case's units (:func:`capacity_read`)."""
    return {r: capacity_read(r, text, units.get(r))[0] for r, text in given.items()}


def capacity_read(resource: str, text: str, unit: str | None) -> tuple[Decimal, str]:
    """One ``--capacity`` value in the case's ``unit`` and how it was read, for the case's description.

    A bare number (``16``) is in the case's unit of the resource, the unit its files' numbers are
    read in (cores for YuniKorn's ``vcore`` as for ``cpu``, MiB for YARN's ``memory-mb``); a
    Kubernetes quantity (``16000m``, ``64Gi``, ``64G``) is converted to it from cores or bytes.
    ``64GiB`` is refused with the quantity to write: one grammar, the one the files use."""
    from fairalloc.core.units import SIZES

    where, text = f"--capacity: {resource}", text.strip()
    if not _BARE.fullmatch(text) and re.fullmatch(r"[\d.]+\s*[kKMGTPE]i?B", text):
        raise ImportFailed(f"{where}: {text!r}: write a Kubernetes quantity such as {text[:-1]} (no 'B')")
    amount = parse_kube(text, where)
    if unit not in SIZES or SIZES[unit][0] == "count":
        return amount, f"{tidy(amount)} ({'a count' if unit else 'no unit'}, read as given)"
    if _BARE.fullmatch(text):
        return amount, f"{_amount(amount, unit)} (a bare number is read in {unit}, the unit of {resource} in this case)"
    converted = tidy(amount / Decimal(repr(SIZES[unit][1])))
    return converted, f"{text} = {_amount(converted, unit)}"


def _warn_disagreements(draft: Draft, given: set[str], notes: Notes) -> None:
    """One warning per source that disagrees with the one used, naming both and their amounts (a
    resource ``--capacity`` gives is the user's choice already)."""
    for r in (r for r in draft.capacity if r not in given):
        naming = [s for s in draft.sources if r in s.amounts]
        if not naming:
            continue
        chosen = chosen_source(naming, r)
        used, unit = chosen.amounts[r], draft.units.get(r, "")
        for other in (s for s in naming if s.amounts[r] != used):
            notes.warn(
                "capacity",
                r,
                "",
                f"{chosen.where} gives {_amount(used, unit)}, {other.where} gives {_amount(other.amounts[r], unit)}: "
                f"{_amount(used, unit)} used ({_why(chosen, other)}; --capacity {r}=N to choose)",
            )


def _why(chosen: CapacitySource, other: CapacitySource) -> str:
    if chosen.kind == other.kind:
        return f"both are {chosen.kind}: the first read counts"
    return f"{chosen.kind} count before {other.kind}"  # the rule of chosen_source


def _amount(value: Decimal, unit: str) -> str:
    """``16 cores``, ``1 core``, ``65536 MiB``: the exact number and the case's unit."""
    return f"{tidy(value)} {unit[:-1] if value == 1 and unit.endswith('s') else unit}".strip()


def finish(draft: Draft, *, name: str, capacity: dict[str, str] | None, notes: Notes) -> dict:
    """The case mapping of ``draft``: ``capacity`` (``--capacity``, as given) fills or overrides the
    cluster's resources; a resource named by any queue needs a capacity."""
    if not draft.users:
        raise ImportFailed(f"{', '.join(draft.files)}: no queues found for {draft.system}")
    units = {**{r: draft.unit_of(r) for r in capacity or {} if draft.unit_of}, **draft.units}
    read = {r: capacity_read(r, text, units.get(r)) for r, text in (capacity or {}).items()}
    given = {r: amount for r, (amount, _) in read.items()}
    total = dict(draft.capacity)
    said = [f"capacity from {draft.capacity_from}"] if draft.capacity and draft.capacity_from else []
    _warn_disagreements(draft, set(given), notes)
    if given:
        overridden = sorted(r for r in given if r in total and total[r] != given[r])
        total.update(given)
        said += [f"capacity of {r} from --capacity: {how}" for r, (_, how) in read.items()]
        for r in overridden:
            notes.warn(
                "--capacity",
                r,
                "",
                f"replaces the capacity {_amount(draft.capacity[r], units.get(r, ''))} the files give",
            )
    named = draft.named_resources()
    if not total and not named:
        raise ImportFailed(
            f"{', '.join(draft.files)}: no resource named: no queue gives a guarantee, limit, request or usage, "
            "and no node or cluster total gives a capacity; give --capacity (such as cpu=N,memory=N) for the "
            "queues' weights to divide"
        )
    missing = [r for r in named if r not in total]
    if missing:
        hint = ",".join(f"{r}=N" for r in missing)
        read_in = ", ".join(f"{units[r]} for {r}" for r in missing if r in units)
        raise ImportFailed(
            f"capacity: the files give no capacity for {', '.join(missing)} (no Node objects or node "
            f"list, no cluster total in the configuration): give --capacity {hint}"
            + (f" (a bare N is read in {read_in}; a quantity such as 64Gi or 16000m is converted)" if read_in else "")
        )
    _refuse_requests_of_nothing(draft, total)
    resources = {r: _number(total[r]) for r in [*total, *(r for r in named if r not in total)]}
    case: dict[str, Any] = {
        "name": name,
        "source": f"imported by 'fairalloc import' ({draft.system}) from " + ", ".join(draft.files),
        "description": " ".join([*draft.description, *(s[:1].upper() + s[1:] + "." for s in said)]) or None,
        "policy": draft.policy,
        "resources": resources,
        "units": {r: units[r] for r in resources if r in units},
    }
    converted: dict[int, tuple[dict, dict]] = {}  # the draft's amounts by identity, each converted once
    if draft.groups:
        case["groups"] = {g: _fields(spec, converted) for g, spec in draft.groups.items()}
    case["users"] = {u: _fields(spec, converted) for u, spec in draft.users.items()}
    case["settings"] = draft.settings
    if not any(spec.get("request") for spec in draft.users.values()):
        case["demand"] = "backlogged"
        case["description"] = " ".join(filter(None, [case["description"], BACKLOGGED]))
    return {k: v for k, v in case.items() if v not in (None, {})}


#: what an imported case of configuration alone says of its demand
BACKLOGGED = (
    "The files give no queue a request (configuration only), so every queue is taken as backlogged "
    "(demand: backlogged): the entitlements are the policy's steady state, what each queue gets when every "
    "queue wants more; write 'demand: observed' for the recorded requests."
)


def _refuse_requests_of_nothing(draft: Draft, total: dict) -> None:
    """A queue asking for a resource the cluster has none of (pods wanting GPUs on nodes without
    them) can never run: one line naming both, since the case loader refuses such a request."""
    for queue, spec in draft.users.items():
        for r, amount in (spec.get("request") or {}).items():
            if amount and not total.get(r):
                source = draft.capacity_from if r in draft.capacity else "--capacity"
                raise ImportFailed(
                    f"capacity: {r} is 0 (from {source}) but queue {queue} requests {tidy(Decimal(amount))} of it, "
                    f"which could never run; give the cluster's {r} with --capacity {r}=N"
                )


def _fields(spec: dict, converted: dict[int, tuple[dict, dict]]) -> dict:
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if value is None:
            continue
        if key in _AMOUNT_FIELDS:
            out[key] = _amounts(value, converted)
        elif isinstance(value, Decimal):
            out[key] = _number(value)
        else:
            out[key] = value
    return out


def _amounts(value: dict, converted: dict[int, tuple[dict, dict]]) -> dict:
    """``value``'s amounts as YAML numbers, in a mapping of the queue's own (a case written with
    shared mappings would get YAML anchors).  An importer shares one mapping among the queues that
    write the same text (an allocation file of 10,000 queues writes a few thousand), so each mapping
    is converted once, remembered by identity (beside the mapping itself: its id stays its own)."""
    hit = converted.get(id(value))
    if hit is None or hit[0] is not value:
        hit = converted[id(value)] = (value, {r: _number(v) for r, v in value.items()})
    return dict(hit[1])


def _number(value: Decimal | Percent | float | int) -> int | float | str:
    """A YAML number: whole numbers as integers (exact), others as the nearest float; a percentage as
    ``"50%"``."""
    if isinstance(value, Percent):
        return str(value)
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)  # what tidy's whole number would give, without its copies (a case has 100,000s)
    d = tidy(Decimal(value)) if not isinstance(value, float) else Decimal(repr(value))
    return int(d) if d == d.to_integral_value() else float(d)


def default_name(paths) -> str:
    """The case's name when none is given: the first file's stem (``stdin`` for ``-``)."""
    if not paths:
        return "imported"
    return "stdin" if str(paths[0]) == STDIN else Path(str(paths[0])).stem
