"""Hadoop YARN Capacity Scheduler: ``capacity-scheduler.xml`` and the ResourceManager's REST answer
(``/ws/v1/cluster/scheduler`` whose ``schedulerInfo.type`` is ``capacityScheduler``).

The ``yarn`` importer (:mod:`fairalloc.io.importers.yarn`) hands these files here by their shape;
the case it writes has ``policy: yarn-capacity`` (``models/yarn_capacity.py``).  Read as
apache/hadoop (Apache-2.0) documents them (``hadoop-yarn-site/src/site/markdown/
CapacityScheduler.md``, "Setting up queues" and "Queue Properties"; ``ResourceManagerRest.md``,
"Capacity Scheduler API") and as ``CapacitySchedulerConfiguration.java`` reads them:

* **configuration file**: ``yarn.scheduler.capacity.<path>.queues`` lists a queue's children
  (comma-separated, from ``root``); a queue with children is a group, the others leaf queues,
  named by their full path (``root.a.a1``).  ``capacity`` is a percentage of the parent (absolute
  capacity: the product down the tree, ``CSQueueUtils.updateAbsoluteCapacitiesByNodeLabels``), a
  weight ``2w`` (siblings split their parent by weight), or an absolute resource
  ``[memory=1024,vcores=2]``; ``maximum-capacity`` likewise (default 100%).  The case's
  ``guarantee`` is the absolute capacity (``"12.5%"`` of the cluster, or the absolute amounts),
  its ``limit`` the absolute maximum.
* **user limits**: a leaf queue is read as one active user, whose limit is ``capacity *
  user-limit-factor`` (``UsersManager.computeUserLimit``; default factor 1, ``-1`` none): the
  leaf's ``limit`` is the smaller of that and its maximum.  ``minimum-user-limit-percent`` does
  not bind one user: a value other than 100 is warned about.
* **REST** (``CapacitySchedulerQueueInfo``, ``CapacitySchedulerLeafQueueInfo``):
  ``absoluteCapacity`` the guarantee, ``absoluteMaxCapacity`` the limit (with
  ``userLimitFactor`` folded in as above), ``resourcesUsed`` the usage, and the request is the
  usage plus the default partition's ``pending`` (``resources.resourceUsagesByPartition``); an
  answer without it (older ResourceManagers) gives requests equal to the usage, with a warning
  when applications are pending.

Whatever changes where assignment settles and is not modelled (node labels, queue priorities,
the ``DominantResourceCalculator``, queue creation at run time, stopped queues) is warned about,
naming file, queue and property; what does not (ACLs, application limits, locality, mappings) is
read silently.  Each object (a ``<property>``, a REST queue, a resource amount) is read through its
schema (:mod:`fairalloc.io.importers.yarn_shapes`) before a field is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from xml.etree.ElementTree import Element

from fairalloc.io.importers.common import Document, Draft, ImportFailed, Notes
from fairalloc.io.importers.common import number as gate
from fairalloc.io.importers.shapes import read
from fairalloc.io.importers.yarn_shapes import (
    CapacitySchedulerInfo,
    CapacitySchedulerQueueInfo,
    ConfigurationProperty,
    ResourceInfo,
    ResourcesInfo,
    read_items,
    xml_fields,
)
from fairalloc.io.quantities import MEMORY, VCORES, Percent, QuantityError, parse_yarn_resources, tidy

PREFIX = "yarn.scheduler.capacity."
POLICY = "yarn-capacity"
#: the ``schedulerInfo.type`` of the Capacity Scheduler's REST answer
REST_TYPE = "capacityScheduler"
_HUNDRED = Decimal(100)
#: queue properties that do not move where assignment settles: read silently
_QUEUE_SILENT = {
    "maximum-applications",
    "maximum-am-resource-percent",
    "acl_submit_applications",
    "acl_administer_queue",
    "acl_administer_reservations",
    "acl_list_reservations",
    "acl_submit_reservations",
    "maximum-allocation-mb",
    "maximum-allocation-vcores",
    "maximum-allocation",
    "maximum-application-lifetime",
    "default-application-lifetime",
    "default-application-priority",
    "disable_preemption",
    "intra-queue-preemption.disable_preemption",
    "reservable",
    "show-reservations-as-queues",
    "ordering-policy",
    "ordering-policy.fair.enable-size-based-weight",
    "max-parallel-apps",
    "user-settings",
}
#: properties of the scheduler (no queue) read silently
_TOP_SILENT = {
    "maximum-applications",
    "maximum-am-resource-percent",
    "node-locality-delay",
    "rack-locality-additional-delay",
    "queue-mappings",
    "queue-mappings-override.enable",
    "per-node-heartbeat.maximum-offswitch-assignments",
    "per-node-heartbeat.multiple-assignments-enabled",
    "per-node-heartbeat.maximum-container-assignments",
    "schedule-asynchronously.enable",
    "application.fail-fast",
    "workflow-priority-mappings",
    "workflow-priority-mappings-override.enable",
    "lazy-preemption-enabled",
    "legacy-queue-mode.enabled",
}
#: queue properties that change the answer and are not modelled, with why
_QUEUE_WARNED = {
    "priority": "queue priorities (priority-utilization ordering) are not modelled",
    "accessible-node-labels": "node labels are not modelled (the default partition only)",
    "default-node-label-expression": "node labels are not modelled (the default partition only)",
    "auto-create-child-queue.enabled": "queues created at run time are not modelled",
    "auto-queue-creation-v2.enabled": "queues created at run time are not modelled",
    "user-weights": "one user per leaf queue: user weights are not modelled",
}


@dataclass(frozen=True)
class _Share:
    """A capacity as Capacity Scheduler holds it: a fraction of the cluster, or absolute amounts."""

    percent: Decimal | None = None  # of the cluster, 0..100
    amounts: dict[str, Decimal] | None = None

    def field(self) -> dict[str, Decimal | Percent]:
        if self.amounts is not None:
            return dict(self.amounts)
        share = Percent(tidy(self.percent or Decimal(0)))
        return {MEMORY: share, VCORES: share}

    def scaled(self, factor: Decimal) -> _Share:
        """``factor`` times this capacity (a fraction of a parent's, a user-limit-factor)."""
        if self.amounts is not None:
            return _Share(amounts={r: tidy(v * factor) for r, v in self.amounts.items()})
        return _Share(percent=tidy((self.percent or Decimal(0)) * factor))

    def smaller(self, other: _Share) -> _Share | None:
        """The smaller of two capacities of the same kind (``None``: a percentage and amounts)."""
        if self.amounts is not None and other.amounts is not None:
            keys = dict.fromkeys([*self.amounts, *other.amounts])
            inf = Decimal("Infinity")
            return _Share(amounts={r: min(self.amounts.get(r, inf), other.amounts.get(r, inf)) for r in keys})
        if self.percent is not None and other.percent is not None:
            return _Share(percent=min(self.percent, other.percent))
        return None


WHOLE = _Share(percent=_HUNDRED)


# -- detection and the properties -----------------------------------------------------------------
def is_configuration(root: Element) -> bool:
    """A Hadoop ``<configuration>`` naming a Capacity Scheduler property (never raises: detection
    calls it; :func:`properties` reads the file)."""
    names = ((p.findtext("name") or "").strip() for p in root.iter("property"))
    return root.tag == "configuration" and any(n.startswith(PREFIX) for n in names)


def properties(doc: Document) -> dict[str, str]:
    """The ``{name: value}`` of a Hadoop ``<configuration>``, each ``<property>`` read through its
    schema (a property without a name is skipped, as Hadoop's ``Configuration`` skips it)."""
    out: dict[str, str] = {}
    for k, element in enumerate(doc.data.iter("property")):
        prop = read(ConfigurationProperty, xml_fields(element), f"{doc.where}: configuration", f"property[{k}]")
        if prop.name is not None:
            out[prop.name] = prop.value or ""
    return out


# -- capacity-scheduler.xml -----------------------------------------------------------------------
class _Config:
    """One ``capacity-scheduler.xml``: its properties, and what has been read of them."""

    def __init__(self, doc: Document, props: dict[str, str], notes: Notes) -> None:
        self.doc, self.props, self.notes = doc, props, notes
        self.read: set[str] = set()

    def get(self, path: str, key: str) -> str | None:
        name = f"{PREFIX}{path}.{key}"
        self.read.add(name)
        return self.props.get(name)

    def fail(self, path: str, key: str, message: str) -> ImportFailed:
        return ImportFailed(f"{self.doc.where}: queue {path}: {key}: {message}")

    def children(self, path: str) -> list[str]:
        text = self.get(path, "queues")
        return [f"{path}.{c.strip()}" for c in (text or "").split(",") if c.strip()]

    def capacity(self, path: str, key: str, text: str, parent: _Share) -> _Share | Decimal:
        """A capacity value: a share, or a weight (``Decimal``) for the caller to normalise."""
        value = text.strip()
        if value.endswith("w"):
            return self.number(path, key, value[:-1])
        if value.startswith("["):
            return _Share(amounts=self._amounts(path, key, value))
        percent = self.number(path, key, value)
        if percent > _HUNDRED:
            raise self.fail(path, key, f"{value} is above 100%")
        return parent.scaled(percent / _HUNDRED)

    def number(self, path: str, key: str, text: str) -> Decimal:
        try:
            return gate(text, "")
        except ImportFailed as exc:
            raise self.fail(path, key, str(exc).removeprefix(": ")) from None

    def _amounts(self, path: str, key: str, text: str) -> dict[str, Decimal]:
        inner = text.strip()[1:-1] if text.strip().endswith("]") else None
        if inner is None:
            raise self.fail(path, key, f"{text!r} has no closing ']'")
        try:
            parsed = parse_yarn_resources(inner, f"{self.doc.where}: queue {path}: {key}")
        except QuantityError as exc:
            raise ImportFailed(str(exc)) from None
        out: dict[str, Decimal] = {}
        for name, amount in parsed.items():
            if isinstance(amount, Percent):
                raise self.fail(path, key, f"{name}={amount}: a percentage inside an absolute resource")
            out[MEMORY if name == "memory" else name] = amount
        return out


def read_configuration(doc: Document, props: dict[str, str], draft: Draft, notes: Notes) -> None:
    """The queues of a ``capacity-scheduler.xml`` into ``draft``."""
    conf = _Config(doc, props, notes)
    if not conf.children("root"):
        raise ImportFailed(f"{doc.where}: {PREFIX}root.queues: no queues under root")
    _read_tree(conf, "root", WHOLE, WHOLE, draft)
    _scheduler_properties(conf)
    for name in props:
        if name.startswith(PREFIX) and name not in conf.read:
            _queue_property(conf, name)


def _read_tree(conf: _Config, path: str, guaranteed: _Share, maximum: _Share, draft: Draft) -> None:
    kids = conf.children(path)
    raw = {k: conf.capacity(k, "capacity", conf.get(k, "capacity") or "0", guaranteed) for k in kids}
    weights = {k: v for k, v in raw.items() if isinstance(v, Decimal)}
    total_weight = sum(weights.values(), Decimal(0))
    shares: dict[str, _Share] = {}
    for k, v in raw.items():
        if isinstance(v, Decimal):  # weight mode: siblings split the parent by weight
            shares[k] = guaranteed.scaled(v / total_weight if total_weight else Decimal(0))
        else:
            shares[k] = v
    _check_sum(conf, path, kids, raw, weights)
    for k in kids:
        top = conf.get(k, "maximum-capacity")
        cap = conf.capacity(k, "maximum-capacity", top, maximum) if top and top != "-1" else maximum
        limit = cap if isinstance(cap, _Share) else maximum  # a weight is no maximum
        if isinstance(cap, Decimal):
            conf.notes.warn(conf.doc, f"queue {k}", "maximum-capacity", "a weight is not a maximum: not read")
        _state(conf, k)
        if conf.children(k):
            draft.add(draft.groups, k, _spec(path, shares[k], limit, "parent"), f"{conf.doc.where}: queue {k}")
            _read_tree(conf, k, shares[k], limit, draft)
        else:
            spec = _spec(path, shares[k], _user_cap(conf, k, shares[k], limit), "group")
            draft.add(draft.users, k, spec, f"{conf.doc.where}: queue {k}")


def _spec(parent: str, guarantee: _Share, limit: _Share, key: str) -> dict:
    return {key: None if parent == "root" else parent, "guarantee": guarantee.field(), "limit": limit.field()}


def _check_sum(conf: _Config, path: str, kids: list[str], raw: dict, weights: dict) -> None:
    percents = [conf.get(k, "capacity") for k in kids if not isinstance(raw[k], Decimal)]
    if weights or not percents or any((p or "").startswith("[") for p in percents):
        return
    total = sum((Decimal(p or "0") for p in percents), Decimal(0))
    if abs(total - _HUNDRED) > Decimal("0.05") and total != 0:  # CapacitySchedulerConfiguration: 0.05% slack
        conf.notes.warn(conf.doc, f"queue {path}", "queues", f"the children's capacities add up to {tidy(total)}%")


def _user_cap(conf: _Config, path: str, guarantee: _Share, limit: _Share) -> _Share:
    """A leaf's limit: its maximum, and ``capacity * user-limit-factor`` for its one user."""
    percent = conf.get(path, "minimum-user-limit-percent")
    if percent is not None and percent.strip() not in ("100", "100.0"):
        conf.notes.warn(
            conf.doc, f"queue {path}", "minimum-user-limit-percent", "one user per leaf queue: does not bind"
        )
    text = conf.get(path, "user-limit-factor")
    if text is not None and text.strip() == "-1":  # no user limit (the queue's maximum)
        return limit
    factor = Decimal(1) if text is None else conf.number(path, "user-limit-factor", text)
    both = limit.smaller(guarantee.scaled(factor))
    if both is None:
        conf.notes.warn(
            conf.doc, f"queue {path}", "user-limit-factor", "absolute and percentage capacities mixed: not read"
        )
        return limit
    return both


def _state(conf: _Config, path: str) -> None:
    state = conf.get(path, "state")
    if state is not None and state.strip().upper() != "RUNNING":
        conf.notes.warn(conf.doc, f"queue {path}", "state", f"{state}: read as a running queue")


def _scheduler_properties(conf: _Config) -> None:
    calculator = conf.props.get(f"{PREFIX}resource-calculator", "")
    conf.read.add(f"{PREFIX}resource-calculator")
    if calculator and not calculator.endswith("DefaultResourceCalculator"):
        conf.notes.warn(
            conf.doc,
            "scheduler",
            f"{PREFIX}resource-calculator",
            f"{calculator.rsplit('.', 1)[-1]}: fairalloc compares memory only, as the DefaultResourceCalculator",
        )
    for key in _TOP_SILENT:
        conf.read.add(PREFIX + key)


def _queue_property(conf: _Config, name: str) -> None:
    """A property not read on the way down: silent, warned about, or unknown."""
    rest = name[len(PREFIX) :]
    path, key = _split(rest, conf)
    if path is None:
        conf.notes.warn(conf.doc, "scheduler", name, "not a Capacity Scheduler property fairalloc knows: not read")
        return
    if path == "root" or key in _QUEUE_SILENT or key.startswith("ordering-policy"):
        if key == "ordering-policy" and "priority" in conf.props[name]:
            conf.notes.warn(conf.doc, f"queue {path}", key, _QUEUE_WARNED["priority"])
        return
    reason = next((why for k, why in _QUEUE_WARNED.items() if key == k or key.startswith(k + ".")), None)
    if reason is None and key.startswith("accessible-node-labels"):
        reason = _QUEUE_WARNED["accessible-node-labels"]
    if reason is None and key.startswith(("leaf-queue-template", "auto-queue-creation")):
        reason = _QUEUE_WARNED["auto-create-child-queue.enabled"]
    conf.notes.warn(conf.doc, f"queue {path}", key, reason or "not a queue property fairalloc knows: not read")


def _split(rest: str, conf: _Config) -> tuple[str | None, str]:
    """``root.a.capacity`` -> (``root.a``, ``capacity``): the longest configured queue path."""
    known = {"root", *_all_paths(conf)}
    parts = rest.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        path = ".".join(parts[:cut])
        if path in known:
            return path, ".".join(parts[cut:])
    return None, rest


def _all_paths(conf: _Config) -> list[str]:
    out, stack = [], ["root"]
    while stack:
        path = stack.pop()
        text = conf.props.get(f"{PREFIX}{path}.queues") or ""
        kids = [f"{path}.{c.strip()}" for c in text.split(",") if c.strip()]
        out += kids
        stack += kids
    return out


# -- the REST answer ----------------------------------------------------------------------------
def read_rest(doc: Document, info: dict, draft: Draft, notes: Notes) -> None:
    """The queues of a Capacity Scheduler REST answer (its ``schedulerInfo``) into ``draft``."""
    where = f"{doc.where}: schedulerInfo"
    top = read(CapacitySchedulerInfo, info, where)
    kids = read_items(CapacitySchedulerQueueInfo, top.queues.queue, where, "queues.queue")
    if not kids:
        raise ImportFailed(f"{where}: queues is missing")
    for q in kids:
        _rest_queue(doc, q, "root", draft, notes)


def _percent(doc: Document, obj: str, value, field: str, default: Decimal | None = None) -> Decimal:
    if value is None and default is not None:
        return default
    return tidy(gate(value, f"{doc.where}: {obj}: {field}"))


def _rest_queue(doc: Document, q: CapacitySchedulerQueueInfo, parent: str, draft: Draft, notes: Notes) -> None:
    name = q.queuePath or (f"{parent}.{q.queueName}" if q.queueName is not None else None)
    if name is None:
        raise ImportFailed(f"{doc.where}: a queue under {parent} without queueName")
    obj = f"queue {name}"
    guarantee = _Share(percent=_percent(doc, obj, q.absoluteCapacity, "absoluteCapacity"))
    limit = _Share(percent=_percent(doc, obj, q.absoluteMaxCapacity, "absoluteMaxCapacity", _HUNDRED))
    if (q.state or "RUNNING").upper() != "RUNNING":
        notes.warn(doc, obj, "state", f"{q.state}: read as a running queue")
    group = None if parent == "root" else parent
    kids = read_items(CapacitySchedulerQueueInfo, q.queues.queue, f"{doc.where}: {obj}", "queues.queue")
    if kids:
        tree = {"parent": group, "guarantee": guarantee.field(), "limit": limit.field()}
        draft.add(draft.groups, name, tree, f"{doc.where}: {obj}")
        for child in kids:
            _rest_queue(doc, child, name, draft, notes)
        return
    factor = _percent(doc, obj, q.userLimitFactor, "userLimitFactor", Decimal(1)) if q.userLimitFactor != -1 else None
    cap = limit if factor is None else (limit.smaller(guarantee.scaled(factor)) or limit)
    if q.userLimit not in (None, 100, 100.0, "100"):
        notes.warn(doc, obj, "userLimit", "one user per leaf queue: minimum-user-limit-percent does not bind")
    spec: dict = {"group": group, "guarantee": guarantee.field(), "limit": cap.field()}
    usage = rest_amounts(q.resourcesUsed, doc, obj, "resourcesUsed")
    pending = _pending(doc, obj, q.resources)
    if pending is None and number(q.numPendingApplications or 0, doc, obj, "numPendingApplications") > 0:
        notes.warn(doc, obj, "numPendingApplications", "the answer gives no pending resources: request = usage")
    request = {r: usage.get(r, Decimal(0)) + (pending or {}).get(r, Decimal(0)) for r in (*usage, *(pending or {}))}
    if any(usage.values()):
        spec["usage"] = usage
    if any(request.values()):
        spec["request"] = request
    draft.add(draft.users, name, spec, f"{doc.where}: {obj}")


def _pending(doc: Document, obj: str, resources: ResourcesInfo) -> dict[str, Decimal] | None:
    """The default partition's ``pending`` of ``resources.resourceUsagesByPartition``."""
    for row in resources.resourceUsagesByPartition:
        if row.partitionName in ("", None):
            return rest_amounts(row.pending, doc, obj, "pending")
    return None


def rest_amounts(info: ResourceInfo | None, doc: Document, obj: str, field: str) -> dict[str, Decimal]:
    """Memory and vcores of a ResourceManager REST ``ResourceInfo`` (either scheduler's answer; its
    ``resourceInformations`` repeats them in another shape)."""
    given = {MEMORY: ("memory", info.memory), VCORES: ("vCores", info.vCores)} if info is not None else {}
    return {r: number(v, doc, obj, f"{field}.{key}") for r, (key, v) in given.items() if v is not None}


def number(value, doc: Document, obj: str, field: str) -> Decimal:
    """A REST answer's number, exactly (either scheduler's answer)."""
    return gate(value, f"{doc.where}: {obj}: {field}", negative=True)


__all__ = [
    "POLICY",
    "PREFIX",
    "REST_TYPE",
    "is_configuration",
    "properties",
    "read_configuration",
    "read_rest",
    "rest_amounts",
    "number",
]
