"""The YARN allocation-file importer at commit e2bcc7bc9b154b08d9af2832505bb318823062bf, kept as the
oracle for the fast one (tests/test_fast_yarn_import.py): each queue element read through its pydantic
schema, each resource string and number through the numeric gate and ``tidy``, and the draft made a
case mapping by ``finish``.  The functions are verbatim (fairalloc/io/importers/yarn.py,
fairalloc/io/quantities.py, fairalloc/io/importers/common.py); only the imports are gathered here,
and :func:`import_files` is the driver (``fairalloc.io.importers.import_files`` with this
``convert``), the REST readers, which did not change, imported from the current module.  At its end,
the XML reader ``_xml`` at a later commit (2f85c17), the oracle of the one that followed it."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any
from xml.etree.ElementTree import Element

from fairalloc.core.errors import CaseError, excerpt, one_line
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import _not_loading, default_name
from fairalloc.io.importers import yarn_capacity as cs
from fairalloc.io.importers.common import (
    _AMOUNT_FIELDS,
    Document,
    Draft,
    ImportFailed,
    Notes,
    _amount,
    _warn_disagreements,
    capacity_read,
    read_documents,
)
from fairalloc.io.importers.common import number as quantity_number
from fairalloc.io.importers.shapes import read
from fairalloc.io.importers.yarn import (
    FAIR,
    SYSTEM,
    _kind,
    _metrics,
    _read_metrics,
    _read_nodes,
    _read_scheduler,
    _role,
    unit_of,
)
from fairalloc.io.importers.yarn_shapes import AllocationQueue, Allocations, xml_fields
from fairalloc.io.quantities import Percent, QuantityError, number, tidy


def import_files(paths, *, capacity=None, name: str | None = None):
    """The driver: ``fairalloc.io.importers.import_files`` of YARN files, through this module."""
    notes = Notes()
    draft = convert(read_documents(paths), notes)
    case = finish(draft, name=name or default_name(paths), capacity=capacity, notes=notes)
    try:
        parse_case(case, case["name"])
    except CaseError as exc:
        raise ImportFailed(_not_loading(draft, str(exc))) from None
    return case, notes.warnings


# -- fairalloc/io/quantities.py ----------------------------------------------------------------------
MEMORY, VCORES = "memory-mb", "vcores"
_NUMBER = r"(\d+(?:\.\d+)?)"
_OLD = {MEMORY: re.compile(_NUMBER + r"\s*mb\b", re.I), VCORES: re.compile(_NUMBER + r"\s*vcores?\b", re.I)}
_OLD_PERCENT = {
    MEMORY: re.compile(_NUMBER + r"\s*%\s*memory\b", re.I),
    VCORES: re.compile(_NUMBER + r"\s*%\s*(?:cpu|vcores?)\b", re.I),
}
#: YARN unit suffixes (UnitsConversionUtil.KNOWN_UNITS) in bytes, for memory-mb values (kept in MiB)
_BYTES = {
    **{u: Decimal(1024) ** (k + 1) for k, u in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi"))},
    **{u: Decimal(1000) ** (k + 1) for k, u in enumerate(("k", "M", "G", "T", "P"))},
}


def parse_yarn_resources(text: str, where: str) -> dict[str, Decimal | Percent]:
    """A YARN FairScheduler resource string in any of its three syntaxes (module docstring)."""
    if not isinstance(text, str) or not text.strip():
        raise QuantityError(f"{where}: {excerpt(text)} is not a YARN resource string (like '1024 mb, 2 vcores')")
    value = text.strip()
    if "=" in value:
        return _yarn_new(value, where)
    whole = re.fullmatch(_NUMBER + r"\s*%", value)
    if whole:
        share = Percent(tidy(number(whole.group(1), where)))
        return {MEMORY: share, VCORES: share}
    if "%" in value:
        return {name: Percent(_one(pattern, value, name, where)) for name, pattern in _OLD_PERCENT.items()}
    return {name: _one(pattern, value, name, where) for name, pattern in _OLD.items()}


def _one(pattern: re.Pattern[str], text: str, name: str, where: str) -> Decimal:
    found = pattern.findall(text)
    if len(found) != 1:
        what = "missing" if not found else "given twice"
        raise QuantityError(f"{where}: {excerpt(text)}: {name} is {what} (YARN writes '1024 mb, 2 vcores')")
    return tidy(number(found[0], f"{where}: {name}"))


def _yarn_new(text: str, where: str) -> dict[str, Decimal | Percent]:
    """``name=value[unit]`` pairs, comma-separated; a value may be a percentage."""
    out: dict[str, Decimal | Percent] = {}
    for part in (p.strip() for p in text.split(",")):
        match = re.fullmatch(r"([A-Za-z][\w./-]*)\s*=\s*" + _NUMBER + r"\s*(%|[A-Za-z]*)", part)
        if not match:
            raise QuantityError(f"{where}: {excerpt(part)} is not name=value (YARN writes 'memory-mb=4096, vcores=1')")
        name, unit = match.group(1), match.group(3)
        amount = tidy(number(match.group(2), f"{where}: {name}"))
        if name in out:
            raise QuantityError(f"{where}: {name} is given twice in {excerpt(text)}")
        if unit == "%":
            out[name] = Percent(amount)
        elif unit == "":
            out[name] = amount  # a resource's own unit (MiB for memory-mb)
        elif name == MEMORY and unit in _BYTES:
            out[name] = tidy(amount * _BYTES[unit] / _BYTES["Mi"])
        else:
            raise QuantityError(f"{where}: {name}={amount}{unit}: unit {unit!r} is not one fairalloc converts")
    return out


# -- fairalloc/io/importers/yarn.py -----------------------------------------------------------------
_SILENT = {
    "maxRunningApps",
    "maxAMShare",
    "aclSubmitApps",
    "aclAdministerApps",
    "minSharePreemptionTimeout",
    "fairSharePreemptionTimeout",
    "fairSharePreemptionThreshold",
    "allowPreemptionFrom",
    "reservation",
    "maxContainerAllocation",
    "aclAdministerReservations",
    "aclListReservations",
    "aclSubmitReservations",
}
_TOP_SILENT = {
    "queueMaxAMShareDefault",
    "queueMaxAppsDefault",
    "userMaxAppsDefault",
    "queuePlacementPolicy",
    "defaultFairSharePreemptionTimeout",
    "defaultMinSharePreemptionTimeout",
    "defaultFairSharePreemptionThreshold",
    "reservation-agent",
    "reservation-policy",
    "reservation-planner",
}
#: the elements that are queues (``<pool>``: the MapReduce 1 Fair Scheduler's name, still read)
_QUEUES = ("queue", "pool")


def _resources(text: str | None, doc: Document, obj: str, field: str) -> dict[str, Decimal | Percent]:
    try:
        return parse_yarn_resources(text or "", f"{doc.where}: {obj}: {field}")
    except QuantityError as exc:
        raise ImportFailed(str(exc)) from None


#: the queue elements the importer reads (the others are read silently or warned about)
_READ = set(AllocationQueue.model_fields)


def _xml_queue(doc: Document, element: Element, parent: str, draft: Draft, notes: Notes, default_max) -> None:
    name = element.get("name")
    if not name:  # an attribute is text (no shape to check), but it may be missing or empty
        raise ImportFailed(f"{doc.where}: a <{element.tag}> under {parent} has no name attribute")
    path = name if name.startswith("root") and parent == "" else f"{parent}.{name}" if parent else f"root.{name}"
    obj = f"queue {path}"
    fields = xml_fields(element, skip=_QUEUES)
    queue = read(AllocationQueue, fields, f"{doc.where}: {obj}")
    if element.tag == "pool":
        why = "the older name of <queue> (AllocationFileLoaderService reads both): read as a queue"
        notes.warn(doc, obj, "<pool>", why)
    children = [c for c in element if c.tag in _QUEUES]
    leaf = not children and element.get("type") != "parent" and path != "root"
    _queue_warnings(doc, obj, fields, queue, leaf, notes)
    spec = _queue_spec(doc, obj, queue)
    if "limit" not in spec and default_max:
        spec["limit"] = default_max
    group = None if parent in ("", "root") else parent
    if path == "root":
        if spec:
            notes.warn(doc, obj, "", "root's own properties are not modelled (its share is the cluster)")
    elif children:
        draft.add(draft.groups, path, {"parent": group, **spec}, _written(doc, element, parent))
    else:
        if element.get("type") == "parent":
            notes.warn(doc, obj, "type", _CHILDLESS)
        draft.add(draft.users, path, {"group": group, **spec}, _written(doc, element, parent))
    for child in children:
        _xml_queue(doc, child, path, draft, notes, default_max)


def _queue_spec(doc: Document, obj: str, queue: AllocationQueue) -> dict:
    """``weight``, ``minResources`` (the guarantee) and ``maxResources`` (the limit) of a queue."""
    spec: dict = {}
    if queue.weight is not None:
        spec["weight"] = _weight(queue.weight, doc, obj)
    if queue.minResources is not None:
        spec["guarantee"] = _resources(queue.minResources, doc, obj, "minResources")
    if queue.maxResources is not None:
        spec["limit"] = _resources(queue.maxResources, doc, obj, "maxResources")
    return spec


def _queue_warnings(doc: Document, obj: str, fields: dict, queue: AllocationQueue, leaf: bool, notes: Notes) -> None:
    """What a queue's elements say that fairalloc does not model, in the order they are written."""
    for tag in fields:
        if tag == "schedulingPolicy" and queue.schedulingPolicy != "drf":
            notes.warn(doc, obj, tag, _APPS if leaf else _policy_said(queue.schedulingPolicy or ""))
        elif tag == "maxChildResources":
            notes.warn(doc, obj, tag, "limits queues created at run time: not modelled")
        elif tag not in _READ | _SILENT:
            notes.warn(doc, obj, tag, "not an allocation-file queue property fairalloc knows: not read")


def _written(doc: Document, element: Element, parent: str) -> str:
    """Where a queue element is, as written (``f.xml: <queue> 'a.b' under root``): a dotted
    name and a nested one name the same queue, and a message names both."""
    return f"{doc.where}: <{element.tag}> {element.get('name')!r} under {parent or '<allocations>'}"


#: a parent queue whose children are all created at run time (FSParentQueue, queue placement rules)
#: still takes part in the fair share (FSParentQueue.recomputeSteadyShares counts every child queue)
_CHILDLESS = (
    "'parent' with no configured child queue: imported as one queue, standing for the queues created "
    "under it at run time (their work is its request and usage)"
)


def _weight(text: str, doc: Document, obj: str) -> Decimal:
    weight = quantity_number(text, f"{doc.where}: {obj}: weight")
    if not weight > 0:
        raise ImportFailed(f"{doc.where}: {obj}: weight: {text} (fairalloc needs a weight > 0)")
    return weight


def _read_allocations(doc: Document, draft: Draft, notes: Notes) -> None:
    top = doc.data
    fields = xml_fields(top, skip=(*_QUEUES, "user"))
    allocations = read(Allocations, fields, f"{doc.where}: allocations")
    default = allocations.queueMaxResourcesDefault
    default_max = _resources(default, doc, "allocations", "queueMaxResourcesDefault") if default is not None else {}
    policy = allocations.defaultQueueSchedulingPolicy
    if policy is None:  # SchedulingPolicy.DEFAULT_POLICY
        said = "not given: the default is 'fair'; " + _policy_said("fair")
        notes.warn(doc, "allocations", "defaultQueueSchedulingPolicy", said)
    elif policy != "drf":
        notes.warn(doc, "allocations", "defaultQueueSchedulingPolicy", _policy_said(policy))
    for tag in fields:
        if tag not in _TOP_SILENT | set(Allocations.model_fields):
            notes.warn(doc, "allocations", tag, "not an allocation-file element fairalloc knows: not read")
    for child in top:
        if child.tag in _QUEUES:
            _xml_queue(doc, child, "", draft, notes, default_max)
        elif child.tag == "user":
            notes.warn(doc, f"user {child.get('name')}", "", "per-user limits are not modelled")


#: a leaf queue's policy divides it among its applications (FSLeafQueue), not among queues
_APPS = "a leaf queue's policy divides it among its applications, which fairalloc does not model"


def _policy_said(policy: str) -> str:
    """What fairalloc's DRF shares mean under another policy: ``fair`` (``FairSharePolicy
    .computeShares``) calls ``ComputeFairShares`` for memory alone, where DRF calls it for memory
    and each other resource in turn: the memory shares are the same, the others YARN leaves
    uncomputed."""
    if policy == "fair":
        return (
            "'fair' (FairSharePolicy) divides memory only: the memory shares are YARN's, the other "
            "resources' are those the 'drf' policy would give"
        )
    return f"{policy!r}: fairalloc computes the DRF policy's fair shares"


def convert(docs: list[Document], notes: Notes) -> Draft:
    """The FairScheduler's files make a ``yarn-fair`` case, the Capacity Scheduler's (handed to
    :mod:`fairalloc.io.importers.yarn_capacity`) a ``yarn-capacity`` one; not both at once."""
    roles = [_role(doc) for doc in docs]
    capacity = [d for d, role in zip(docs, roles) if role in ("configuration", cs.REST_TYPE)]
    fair = [d for d, role in zip(docs, roles) if role in ("allocations", FAIR)]
    if capacity and fair:
        raise ImportFailed(
            f"{capacity[0].where} is the Capacity Scheduler's, {fair[0].where} the FairScheduler's: import them apart"
        )
    draft = Draft(SYSTEM, cs.POLICY if capacity else "yarn-fair", list(dict.fromkeys(d.file for d in docs)))
    for doc in docs:
        kind = _kind(doc)
        if kind == "allocations":
            _read_allocations(doc, draft, notes)
        elif kind == "configuration":
            cs.read_configuration(doc, cs.properties(doc), draft, notes)
        elif kind == "scheduler":
            _read_scheduler(doc, draft, notes)
        elif kind == "metrics":
            _read_metrics(doc, _metrics(doc), draft, notes)
    _read_nodes([d for d in docs if _kind(d) == "nodes"], draft, notes)
    draft.name_units(unit_of)
    draft.description.append(f"{len(draft.users)} leaf queues and {len(draft.groups)} parent queues.")
    return draft


# -- fairalloc/io/importers/common.py ---------------------------------------------------------------
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


# -- fairalloc/io/importers/common.py at commit 2f85c17f0241795e657fc11caff739fade20afe6 -------------
# (main's HEAD when issue 36's load part started): the XML reader, every text through the defused
# parser, kept as the oracle for the one that reads a text without a document type with expat's C
# tree builder (tests/test_fast_yarn_import.py)


def _xml(text: str, where: str) -> Element:
    import defusedxml.ElementTree as safe_xml  # refuses entity expansion and external entities
    from defusedxml import DefusedXmlException

    try:
        return safe_xml.fromstring(text)
    except DefusedXmlException as exc:
        raise ImportFailed(f"{where}: refused: {one_line(exc, 200)} (entities are not read)") from None
    except safe_xml.ParseError as exc:
        raise ImportFailed(f"{where}: not valid XML: {one_line(exc, 200)}") from None
