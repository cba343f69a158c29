"""What every importer shares: reading the files, warnings, and the case an importer's draft becomes.

An importer (one module per system) turns :class:`Document` objects into a :class:`Draft`: the
queues, their configuration, requests and usage, in the system's own resource names and units.
:func:`finish` makes the draft a case mapping (the production vocabulary of a queue case, with
``policy``, ``units`` and ``source``).  Whatever an importer does not understand is a warning of
:class:`Notes`, naming the file, the object and the field; a file that cannot be read at all is one
:class:`ImportFailed` line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from fairalloc.core.errors import CaseError, excerpt, one_line
from fairalloc.io.cases import _file, read_limited, read_text_file, read_yaml_documents, too_large_message
from fairalloc.io.quantities import Percent, parse_kube, tidy

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
    "finish",
    "mapping",
    "listing",
    "text",
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
    import defusedxml.ElementTree as safe_xml  # refuses entity expansion and external entities
    from defusedxml import DefusedXmlException

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


class Notes:
    """The warnings of one import, in the order they were found."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, doc: Document | str, obj: str, field: str, message: str) -> None:
        where = doc.where if isinstance(doc, Document) else doc
        line = ": ".join(p for p in (where, obj, field, message) if p)
        if line not in self.warnings:
            self.warnings.append(line)


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

    def named_resources(self) -> list[str]:
        """The resources any group or queue names (guarantees, limits, requests, usage), in order."""
        named: dict[str, None] = {}
        for spec in [*self.groups.values(), *self.users.values()]:
            for key in _AMOUNT_FIELDS:
                for r in spec.get(key) or {}:
                    named[r] = None
        return list(named)

    def name_units(self, unit_of) -> None:
        """``units`` of every resource the draft names (capacity first), by ``unit_of(resource)``."""
        self.units = {r: unit_of(r) for r in dict.fromkeys([*self.capacity, *self.named_resources()])}


_AMOUNT_FIELDS = ("guarantee", "limit", "deserved", "borrowing_limit", "lending_limit", "request", "usage")


def capacity_amounts(given: dict[str, str], units: dict[str, str]) -> dict[str, Decimal]:
    """``--capacity`` values in the case's units: a plain number is already in the resource's unit;
    a Kubernetes quantity (``256Gi``, ``500m``) is converted to it (bytes to MiB, cores to millicores)."""
    from fairalloc.core.units import SIZES

    out = {}
    for r, text in given.items():
        plain = re.fullmatch(r"\d+(\.\d+)?", text.strip())
        amount = parse_kube(text, f"--capacity: {r}")
        unit = units.get(r)
        if not plain and unit in SIZES and SIZES[unit][0] != "count":
            amount = tidy(amount / Decimal(repr(SIZES[unit][1])))
        out[r] = amount
    return out


def finish(draft: Draft, *, name: str, capacity: dict[str, str] | None, notes: Notes) -> dict:
    """The case mapping of ``draft``: ``capacity`` (``--capacity``, as given) fills or overrides the
    cluster's resources; a resource named by any queue needs a capacity."""
    if not draft.users:
        raise ImportFailed(f"{', '.join(draft.files)}: no queues found for {draft.system}")
    given = capacity_amounts(capacity, draft.units) if capacity else {}
    total = dict(draft.capacity)
    said = [f"capacity from {draft.capacity_from}"] if draft.capacity and draft.capacity_from else []
    if given:
        overridden = sorted(r for r in given if r in total and total[r] != given[r])
        total.update(given)
        said.append("capacity of " + ", ".join(sorted(given)) + " from --capacity")
        for r in overridden:
            notes.warn("--capacity", r, "", f"replaces the capacity {tidy(draft.capacity[r])} the files give")
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
        raise ImportFailed(
            f"capacity: the files give no capacity for {', '.join(missing)} (no Node objects or node "
            f"list, no cluster total in the configuration): give --capacity {hint}"
        )
    _refuse_requests_of_nothing(draft, total)
    resources = {r: _number(total[r]) for r in [*total, *(r for r in named if r not in total)]}
    case: dict[str, Any] = {
        "name": name,
        "source": f"imported by 'fairalloc import' ({draft.system}) from " + ", ".join(draft.files),
        "description": " ".join([*draft.description, *(s[:1].upper() + s[1:] + "." for s in said)]) or None,
        "policy": draft.policy,
        "resources": resources,
        "units": {r: draft.units[r] for r in resources if r in draft.units},
    }
    if draft.groups:
        case["groups"] = {g: _fields(spec) for g, spec in draft.groups.items()}
    case["users"] = {u: _fields(spec) for u, spec in draft.users.items()}
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


def _fields(spec: dict) -> dict:
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if value is None:
            continue
        if key in _AMOUNT_FIELDS:
            out[key] = {r: _number(v) for r, v in value.items()}
        elif isinstance(value, Decimal):
            out[key] = _number(value)
        else:
            out[key] = value
    return out


def _number(value: Decimal | Percent | float | int) -> int | float | str:
    """A YAML number: whole numbers as integers (exact), others as the nearest float; a percentage as
    ``"50%"``."""
    if isinstance(value, Percent):
        return str(value)
    d = tidy(Decimal(value)) if not isinstance(value, float) else Decimal(repr(value))
    return int(d) if d == d.to_integral_value() else float(d)


def default_name(paths) -> str:
    """The case's name when none is given: the first file's stem (``stdin`` for ``-``)."""
    if not paths:
        return "imported"
    return "stdin" if str(paths[0]) == STDIN else Path(str(paths[0])).stem
