"""Kueue: ClusterQueues, Cohorts, LocalQueues, ResourceFlavors, Workloads (and pods, Nodes) as a ``kueue`` case.

Source read: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7 (Apache-2.0):
the API types of ``apis/kueue/v1beta1`` and ``apis/kueue/v1beta2`` (``clusterqueue_types.go``,
``cohort_types.go``, ``localqueue_types.go``, ``resourceflavor_types.go``, ``workload_types.go``,
``fairsharing_types.go``), the Cohort of ``apis/kueue/v1alpha1/cohort_types.go`` before
"Promote Cohort API to v1beta1" (#5595), and ``site/content/en/docs/concepts/cluster_queue.md`` and
``cohort.md`` for the meaning of the quotas; ``pkg/scheduler/flavorassigner/flavorassigner.go``
(:mod:`.kueue_flavors`) and ``pkg/controller/jobs`` (:mod:`.kueue_workloads`).

How the case reads them (``models/kueue.py``, which computes Kueue's fair sharing on it):

* a **ClusterQueue** is a leaf queue (a user) named as in Kueue; its cohort (``spec.cohort`` in
  v1beta1, ``spec.cohortName`` in v1beta2) is its ``group``; ``nominalQuota`` -> ``guarantee``,
  ``borrowingLimit`` -> ``borrowing_limit``, ``lendingLimit`` -> ``lending_limit``,
  ``spec.fairSharing.weight`` (a Kubernetes quantity: ``"3"``, ``"500m"``) -> ``weight``;
* a **Cohort** is a group: ``spec.parentName`` (``spec.parent`` in v1alpha1) -> ``parent``, its
  own ``resourceGroups`` (its own nominal quota: a shared pool on top of its children's, cohort.md
  "Configuring Quotas") -> ``guarantee``, ``borrowing_limit``, ``lending_limit``, and its fair
  sharing weight -> ``weight``.  A cohort a ClusterQueue or Cohort names without a Cohort object is
  an implicit cohort (Kueue creates it): a group without quota;
* a workload asking for a resource its ClusterQueue's ``resourceGroups`` do not cover is one Kueue
  never admits ("resource X unavailable in ClusterQueue", ``flavorassigner.go``,
  ``findFlavorForPodSets``): it is not counted, with a warning (pods: the resource is left out);
* **flavors**: Kueue's quota is per (flavor, resource).  A resource that only one flavor provides
  anywhere in the files keeps its name (``cpu``).  A resource that several flavors provide becomes
  one resource per flavor, ``<resource>@<flavor>`` (``nvidia.com/gpu@a100``; neither Kubernetes
  resource names nor flavor names have an ``@``), with a warning; ``models/kueue.py`` adds a
  resource's flavors up in the share, as Kueue does.  An admitted workload is charged to the
  flavors its admission names (the first flavor of its ClusterQueue where it names none); the
  pending ones, one at a time in file order, to the flavor Kueue's flavor assigner would give
  each from the usage so far (:mod:`.kueue_flavors`: ``flavorassigner.go``,
  ``findFlavorForPodSets``, with the ClusterQueue's ``flavorFungibility`` and ``preemption``, and
  the ResourceFlavors' ``nodeTaints``, ``tolerations`` and ``nodeLabels`` against the pod's
  tolerations and ``nodeSelector``), and those that fit count in the usage later ones find.  One
  that fits no flavor now waits for the first whose quota could ever hold it; one that no flavor
  admits (taints, labels) is never admitted: not counted, with a warning.  Not modelled, with a
  warning: Kueue's order among pending workloads (priority, fair sharing), required node
  affinity on a flavor's label keys, a flavor's ``topologyName`` (Topology Aware Scheduling), a
  ClusterQueue's ``concurrentAdmissionPolicy``, and a flavor missing from the files (read as one
  without labels or taints);
* **requests and usage**: a Workload (``spec.queueName``, a LocalQueue of the workload's namespace,
  whose ``spec.clusterQueue`` is the queue) asks ``count`` times its pod template's request
  (Kubernetes' rule: :func:`fairalloc.io.importers.kubernetes.pod_request`) per pod set, plus
  ``count`` ``pods`` when the ClusterQueue has a ``pods`` quota (Kueue counts pods itself).  Jobs,
  Deployments, StatefulSets and LeaderWorkerSets labelled ``kueue.x-k8s.io/queue-name`` are the
  Workloads Kueue's integrations make of them (:mod:`.kueue_workloads`).  An
  admitted one (``status.admission`` or condition ``Admitted``/``QuotaReserved`` true) counts in
  ``usage`` and ``request`` (``status.admission.podSetAssignments[].resourceUsage`` when given,
  minus ``status.reclaimablePods``), a pending one in ``request``; finished (``Finished``) and
  deactivated (``spec.active: false``) ones in neither.  Without Workloads, pods labelled
  ``kueue.x-k8s.io/queue-name`` (a LocalQueue of their namespace) are the Workloads of Kueue's pod
  integration (:mod:`.kueue_workloads`);
* **capacity**: Kueue never sees the cluster's capacity.  With Node objects it is their allocatable
  total (per flavor ``<resource>@<flavor>``: the nodes that match the ResourceFlavor's
  ``spec.nodeLabels``); without, the sum of every nominal quota over the whole cohort forest
  (``capacity_from: configuration``), which is what the root cohorts can lend;
* **settings** (the case's ``settings:``, read by the kueue policy's scheduling cycle,
  :mod:`fairalloc.models.kueue_cycle`; they do not change the entitlement): a ClusterQueue's
  ``queueingStrategy`` and ``preemption`` (``withinClusterQueue``, ``reclaimWithinCohort``,
  ``borrowWithinCohort.policy`` and ``maxPriorityThreshold``) under
  ``settings.cluster_queues.<name>``, and the manager Configuration's fair sharing (on with
  ``fairSharing.enable: true`` in v1beta1, with a ``fairSharing`` section in v1beta2) and its
  ``preemptionStrategies``; a value Kueue does not know is a warning, and its default is read
  (the flavor assigner reads of ``preemption`` whether the queue may preempt while borrowing);
* ignored, because they do not change the entitlement ``models/kueue.py`` defines (the
  fair-sharing equilibrium of the admission loop from an empty cluster): ``namespaceSelector``,
  ``admissionChecks``, ``admissionChecksStrategy``, ``admissionScope`` and a LocalQueue's fair
  sharing (both order workloads inside one ClusterQueue).  A ``stopPolicy`` other than ``None``
  is a warning; every other field is a warning.

Units (the importers' convention): Kubernetes resource names, ``cpu`` in cores, ``memory``,
``ephemeral-storage`` and ``hugepages-*`` in bytes, the rest counts.  A quota that makes no sense
for its resource (``nvidia.com/gpu: 1Gi``, a fractional GPU count, cpu in ``Ki``) is a warning
naming the file, the object and the field; a quota that is not a quantity at all is an error.

Shapes: every object is read through its schema (:mod:`.kueue_shapes`, the fields of Kueue's own
types) before any field is used, so a field of the wrong shape (a list where Kueue has a mapping,
a number where it has a name, a ``null`` pod set) is one line naming the file, the object and the
field; a ``null`` list or mapping reads as empty, as Kueue's decoder reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt
from fairalloc.io.importers import kubernetes as k8s
from fairalloc.io.importers import kueue_flavors as flavors_
from fairalloc.io.importers import kueue_shapes as shapes
from fairalloc.io.importers.common import Document, Draft, ImportFailed, Notes, embedded, number, once
from fairalloc.io.importers.kueue_workloads import GROUP, QUEUE_LABEL, integrated, labelled, workloads_of
from fairalloc.io.importers.shapes import Shape, read
from fairalloc.io.quantities import parse_kube, tidy

SYSTEM = "kueue"
#: the API versions read as they are; older ones are read only when their fields are the same
VERSIONS = ("v1beta1", "v1beta2")
KINDS = ("ClusterQueue", "Cohort", "LocalQueue", "ResourceFlavor", "Workload")

#: spec fields of a ClusterQueue that do not change the entitlement (module docstring)
_CQ_IGNORED = ("namespaceSelector", "queueingStrategy", "preemption", "admissionChecks", "admissionChecksStrategy",
               "admissionScope", "concurrentAdmissionPolicy", "flavorFungibility")  # fmt: skip
_BYTES = ("memory", "ephemeral-storage", "storage")
_BINARY_SUFFIX = re.compile(r"[KMGTPE]i$")

Amounts = dict[str, Decimal]
#: the flavor assigner's node names: ClusterQueues and cohorts may share a name (``_group_names``)
_CQ, _COHORT = "ClusterQueue/", "Cohort/"


@dataclass
class _Quota:
    """One ``resources[]`` entry of a ClusterQueue's or Cohort's ``resourceGroups``."""

    flavor: str
    resource: str
    nominal: Decimal
    borrowing: Decimal | None
    lending: Decimal | None


@dataclass
class _Node:
    """A ClusterQueue or a Cohort as read."""

    doc: Document
    name: str
    parent: str | None = None
    weight: Decimal | None = None
    quotas: list[_Quota] = field(default_factory=list)
    groups: list[list[str]] = field(default_factory=list)  # flavors of each resource group, in order
    covered: dict[str, int] = field(default_factory=dict)  # resource -> its resource group
    fungibility: flavors_.Fungibility = field(default_factory=flavors_.Fungibility)
    settings: dict[str, Any] = field(default_factory=dict)  # a ClusterQueue's queueing and preemption


@dataclass
class _Flavor:
    """A ResourceFlavor as read."""

    doc: Document
    spec: shapes.ResourceFlavorSpec


@dataclass
class _Workload:
    """A Workload as read: given, or made of a job or pod by Kueue's integrations."""

    doc: Document
    shape: shapes.Workload

    @classmethod
    def of(cls, doc: Document) -> _Workload:
        return cls(doc, _named(shapes.Workload, doc)[0])


@dataclass
class _Import:
    notes: Notes
    queues: dict[str, _Node] = field(default_factory=dict)
    cohorts: dict[str, _Node] = field(default_factory=dict)
    local: dict[tuple[str, str], str] = field(default_factory=dict)  # (namespace, name) -> ClusterQueue
    flavors: dict[str, _Flavor] = field(default_factory=dict)
    workloads: list[_Workload] = field(default_factory=list)
    pods: list[Document] = field(default_factory=list)
    nodes: list[Document] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    missing_flavors: set[str] = field(default_factory=set)  # flavors named but not given (warned once)
    fair_sharing: bool = False  # the manager's Configuration turns fair sharing on
    strategies: list[str] = field(default_factory=list)  # its fairSharing.preemptionStrategies

    def seen(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1


# -- detection ----------------------------------------------------------------------------------
def detect(docs: list[Document]) -> int:
    """How many documents are Kueue's: objects of the ``kueue.x-k8s.io`` group, Kueue's manager
    Configuration, and pods labelled with a Kueue queue name."""
    return sum(_is_kueue(d) for d in docs)


def _is_kueue(doc: Document) -> bool:
    if not isinstance(doc.data, dict):
        return False
    if doc.group in (GROUP, "config." + GROUP):
        return True
    labels = doc.metadata.get("labels")
    return integrated(doc) or (doc.kind == "Pod" and isinstance(labels, dict) and QUEUE_LABEL in labels)


# -- conversion ---------------------------------------------------------------------------------
def convert(docs: list[Document], notes: Notes) -> Draft:
    """The queues of ``docs`` as a ``kueue`` draft (see the module doc for the mapping)."""
    seen = _Import(notes)
    for doc in docs:
        _read(seen, doc)
    _implicit_cohorts(seen)
    _check_tree(seen)
    names = _resource_names(seen)
    draft = Draft(SYSTEM, "kueue", list(dict.fromkeys(d.file for d in docs)))
    group_name = _group_names(seen)
    for c in seen.cohorts.values():
        draft.groups[group_name[c.name]] = _fields(c, names, {"parent": group_name.get(c.parent or "")}, notes)
    for q in seen.queues.values():
        draft.users[q.name] = _fields(q, names, {"group": group_name.get(q.parent or "")}, notes)
    demand = _demand(seen, names)
    for q in seen.queues.values():
        _add_demand(draft.users[q.name], demand.get(q.name, _Demand()))
    draft.settings = _settings(seen)
    named = draft.named_resources()
    draft.capacity, draft.capacity_from = _capacity(seen, names, named)
    draft.name_units(unit_of)
    draft.description = _description(seen, draft)
    return draft


def unit_of(resource: str) -> str:
    """The unit of a Kubernetes resource (``nvidia.com/gpu@a100``: that of ``nvidia.com/gpu``)."""
    base = resource.split("@", 1)[0]
    if base == "cpu":
        return "cores"
    if base in _BYTES or base.startswith("hugepages-"):
        return "bytes"
    return "count"


def _read(seen: _Import, doc: Document) -> None:
    data, kind = doc.data, doc.kind
    if not isinstance(data, dict):
        seen.notes.warn(doc, doc.label, "", "not a Kubernetes object: skipped")
        return
    if doc.group == "config." + GROUP or (kind == "ConfigMap" and _manager_config(doc)):
        _configuration(seen, doc)
        return
    if doc.group == "" and kind == "Node":
        seen.nodes.append(doc)
        seen.seen("Node")
        return
    if doc.group == "" and kind == "Pod":
        seen.pods.append(doc)
        seen.seen("Pod")
        return
    if integrated(doc):
        seen.workloads += [_Workload.of(w) for w in workloads_of(doc, seen.notes)]
        seen.seen(kind or "")
        return
    if doc.group != GROUP or kind not in KINDS:
        seen.notes.warn(doc, doc.label, "kind", f"{kind or 'no kind'} ({doc.api_version}) is not read for Kueue")
        return
    version = (doc.api_version or "").rsplit("/", 1)[-1]
    if version not in VERSIONS and not _older_readable(seen, doc, version):
        return
    seen.seen(kind)
    if kind == "ClusterQueue":
        _cluster_queue(seen, doc, version)
    elif kind == "Cohort":
        _cohort(seen, doc, version)
    elif kind == "LocalQueue":
        _local_queue(seen, doc)
    elif kind == "ResourceFlavor":
        _resource_flavor(seen, doc)
    else:
        seen.workloads.append(_Workload.of(doc))


#: the fields of a kind in v1beta1 (what an older version may carry to be read as one); v1alpha1
#: Cohorts spelled ``parentName`` as ``parent``
_SPEC_FIELDS = {
    "ClusterQueue": {"resourceGroups", "cohort", "fairSharing", "stopPolicy", *_CQ_IGNORED},
    "Cohort": {"parentName", "parent", "resourceGroups", "fairSharing"},
    "LocalQueue": {"clusterQueue", "stopPolicy", "fairSharing"},
    "ResourceFlavor": {"nodeLabels", "nodeTaints", "tolerations", "topologyName"},
    "Workload": {"podSets", "queueName", "priorityClassName", "priority", "priorityClassSource", "active",
                 "maximumExecutionTimeSeconds"},
}  # fmt: skip


def _older_readable(seen: _Import, doc: Document, version: str) -> bool:
    """An object of an API version fairalloc does not map: read as v1beta1 when its fields are
    v1beta1's (a warning either way)."""
    spec = doc.data.get("spec")
    keys = set(spec) if isinstance(spec, dict) else set()
    extra = sorted(keys - _SPEC_FIELDS[doc.kind or ""])
    where = f"{doc.label}", "apiVersion"
    if extra or doc.kind == "Workload":
        seen.notes.warn(doc, *where, f"{doc.api_version} is not mapped (fairalloc reads {GROUP}/v1beta1 and "
                        f"v1beta2; spec fields {', '.join(extra) or 'of another shape'}): skipped")  # fmt: skip
        return False
    seen.notes.warn(doc, *where, f"{doc.api_version} is older than v1beta1; its fields are v1beta1's: read as v1beta1")
    return True


S = TypeVar("S", bound=Shape)


def _named(shape: type[S], doc: Document) -> tuple[S, str]:
    """``doc`` read as ``shape`` (one line when its shape is wrong), and its name (one line when it
    has none)."""
    obj = read(shape, doc.data, _at(doc))
    name = doc.name
    if not name:
        raise ImportFailed(f"{_at(doc)}: metadata.name: missing (a {doc.kind} needs a name)")
    return obj, name


def _at(doc: Document) -> str:
    """Where ``doc`` is, as messages begin: ``file: Kind/name``."""
    return f"{doc.where}: {doc.label}"


def _cluster_queue(seen: _Import, doc: Document, version: str) -> None:
    cq, name = _named(shapes.ClusterQueue, doc)
    spec = cq.spec
    node = _Node(doc, name)
    own, other = ("cohortName", "cohort") if version == "v1beta2" else ("cohort", "cohortName")
    node.parent = getattr(spec, own) or None
    if getattr(spec, other):
        seen.notes.warn(doc, doc.label, f"spec.{other}", f"is not a {version} field (it spells it spec.{own}): read "
                        f"as the cohort")  # fmt: skip
        node.parent = node.parent or getattr(spec, other)
    node.weight = _weight(doc, spec.fairSharing)
    _resource_groups(seen, doc, spec.resourceGroups, node)
    node.fungibility = _fungibility(seen, doc, spec)
    node.settings = _queue_settings(seen, doc, spec)
    if spec.concurrentAdmissionPolicy:
        seen.notes.warn(doc, doc.label, "spec.concurrentAdmissionPolicy", "concurrent admission (a workload pursues "
                        "several flavors at once and migrates to a more preferred one as it frees up) is not "
                        "modelled: each pending workload gets the one flavor the flavor assigner gives it")  # fmt: skip
    if spec.stopPolicy not in (None, "None"):
        seen.notes.warn(doc, doc.label, "spec.stopPolicy", f"{spec.stopPolicy}: Kueue admits nothing new to this "
                        "ClusterQueue; fairalloc computes its entitlement as if it were running")  # fmt: skip
    for key in spec.model_extra or {}:
        if key not in _CQ_IGNORED:
            seen.notes.warn(doc, doc.label, f"spec.{key}", "not a ClusterQueue field fairalloc knows: not read")
    if name in seen.queues:
        first = seen.queues[name].doc
        once({name: _at(first)}, name, _at(doc), "ClusterQueue")
    seen.queues[name] = node


def _cohort(seen: _Import, doc: Document, version: str) -> None:
    cohort, name = _named(shapes.Cohort, doc)
    spec = cohort.spec
    node = _Node(doc, name)
    own, other = ("parentName", "parent") if version in VERSIONS else ("parent", "parentName")
    node.parent = getattr(spec, own) or None
    if getattr(spec, other):
        seen.notes.warn(doc, doc.label, f"spec.{other}", f"is not a {version} field (it spells it spec.{own}): read "
                        "as the parent cohort")  # fmt: skip
        node.parent = node.parent or getattr(spec, other)
    node.weight = _weight(doc, spec.fairSharing)
    _resource_groups(seen, doc, spec.resourceGroups, node)
    for key in spec.model_extra or {}:
        seen.notes.warn(doc, doc.label, f"spec.{key}", "not a Cohort field fairalloc knows: not read")
    if name in seen.cohorts:
        first = seen.cohorts[name].doc
        once({name: _at(first)}, name, _at(doc), "Cohort")
    seen.cohorts[name] = node


#: ``flavorFungibility`` values and the deprecated spellings Kueue still accepts for them
_FUNGIBILITY = {"whenCanBorrow": {"MayStopSearch": "MayStopSearch", "Borrow": "MayStopSearch",
                                  "TryNextFlavor": "TryNextFlavor"},
                "whenCanPreempt": {"MayStopSearch": "MayStopSearch", "Preempt": "MayStopSearch",
                                   "TryNextFlavor": "TryNextFlavor"},
                "preference": {"BorrowingOverPreemption": "BorrowingOverPreemption",
                               "PreemptionOverBorrowing": "PreemptionOverBorrowing"}}  # fmt: skip


def _fungibility(seen: _Import, doc: Document, spec: shapes.ClusterQueueSpec) -> flavors_.Fungibility:
    """``spec.flavorFungibility`` and whether the ClusterQueue may preempt while borrowing
    (``canPreemptWhileBorrowing``: ``borrowWithinCohort`` other than ``Never``, or fair sharing
    with ``reclaimWithinCohort`` other than ``Never``), for the flavor assigner."""
    chosen: dict[str, str | None] = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor",
                                     "preference": None}  # fmt: skip
    for key, value in spec.flavorFungibility.items():
        known = _FUNGIBILITY.get(key)
        if known is None or not isinstance(value, str) or value not in known:
            seen.notes.warn(doc, doc.label, f"spec.flavorFungibility.{key}", f"{value!r} is not a flavorFungibility "
                            "setting fairalloc knows: the default is read")  # fmt: skip
            continue
        chosen[key] = known[value]
    borrow = spec.preemption.borrowWithinCohort
    reclaim = spec.preemption.reclaimWithinCohort or "Never"
    while_borrowing = (borrow is not None and (borrow.policy or "Never") != "Never") or reclaim != "Never"
    return flavors_.Fungibility(str(chosen["whenCanBorrow"]), str(chosen["whenCanPreempt"]), chosen["preference"],
                                while_borrowing)  # fmt: skip


#: the values Kueue's API allows (``clusterqueue_types.go``, ``configuration_types.go``)
_QUEUEING = ("BestEffortFIFO", "StrictFIFO")
_POLICIES = {"withinClusterQueue": ("Never", "LowerPriority", "LowerOrNewerEqualPriority"),
             "reclaimWithinCohort": ("Never", "LowerPriority", "Any")}  # fmt: skip
_BORROW = ("Never", "LowerPriority")
#: the only preemptionStrategies lists the Configuration's validation accepts
_STRATEGIES = (["LessThanOrEqualToFinalShare"], ["LessThanInitialShare"],
               ["LessThanOrEqualToFinalShare", "LessThanInitialShare"])  # fmt: skip


def _queue_settings(seen: _Import, doc: Document, spec: shapes.ClusterQueueSpec) -> dict[str, Any]:
    """``spec.queueingStrategy`` and ``spec.preemption`` as the kueue policy's settings of this
    ClusterQueue (``settings.cluster_queues.<name>``: :mod:`fairalloc.models.kueue_cycle`); a value
    Kueue does not know is a warning, and its default is read."""
    out: dict[str, Any] = {}
    if spec.queueingStrategy is not None:
        if _known_value(seen, doc, "spec.queueingStrategy", spec.queueingStrategy, _QUEUEING):
            out["queueing_strategy"] = spec.queueingStrategy
    preemption: dict[str, Any] = {}
    for field_, key in (
        ("withinClusterQueue", "within_cluster_queue"),
        ("reclaimWithinCohort", "reclaim_within_cohort"),
    ):
        value = getattr(spec.preemption, field_)
        if value is not None and _known_value(seen, doc, f"spec.preemption.{field_}", value, _POLICIES[field_]):
            preemption[key] = value
    borrow = spec.preemption.borrowWithinCohort
    if borrow is not None:
        at, within = "spec.preemption.borrowWithinCohort", dict[str, Any]()
        if borrow.policy is not None and _known_value(seen, doc, f"{at}.policy", borrow.policy, _BORROW):
            within["policy"] = borrow.policy
        threshold = borrow.maxPriorityThreshold
        if threshold is not None:
            if isinstance(threshold, int) and not isinstance(threshold, bool):
                within["max_priority_threshold"] = threshold
            else:
                seen.notes.warn(doc, doc.label, f"{at}.maxPriorityThreshold", f"{excerpt(threshold)} is not a "
                                "priority (an integer): no threshold is read")  # fmt: skip
        if within:
            preemption["borrow_within_cohort"] = within
    if preemption:
        out["preemption"] = preemption
    return out


def _known_value(seen: _Import, doc: Document, at: str, value: Any, known: tuple[str, ...]) -> bool:
    if value in known:
        return True
    seen.notes.warn(doc, doc.label, at, f"{excerpt(value)} is not a value Kueue knows ({', '.join(known)}): the "
                    f"default, {known[0]}, is read")  # fmt: skip
    return False


def _strategies(seen: _Import, config: Document, given: Any) -> list[str]:
    """``fairSharing.preemptionStrategies`` when it is a list Kueue accepts (else a warning, and
    Kueue's default is left to the policy)."""
    if isinstance(given, list) and given in _STRATEGIES:
        return list(given)
    accepted = "; ".join(map(str, _STRATEGIES))
    seen.notes.warn(config, config.label, "fairSharing.preemptionStrategies", f"{excerpt(given)} is not a list "
                    f"Kueue's validation accepts ({accepted}): the default is read")  # fmt: skip
    return []


def _settings(seen: _Import) -> dict[str, Any]:
    """The case's ``settings:`` for the kueue policy's scheduling cycle: fair sharing and its
    preemption strategies (the manager's Configuration), each ClusterQueue's queueing strategy and
    preemption policies (what Kueue's defaults leave unsaid is left out)."""
    out: dict[str, Any] = {}
    if seen.fair_sharing:
        out["fair_sharing"] = True
    if seen.strategies:
        out["preemption_strategies"] = seen.strategies
    queues = {q.name: q.settings for q in seen.queues.values() if q.settings}
    if queues:
        out["cluster_queues"] = queues
    return out


#: ResourceFlavor spec fields the flavor assigner does not model
_FLAVOR_UNMODELLED = {"topologyName": "Topology Aware Scheduling (where in the topology pods go) is not modelled: "
                                      "the flavor's quota is read as one pool"}  # fmt: skip


def _resource_flavor(seen: _Import, doc: Document) -> None:
    """A ResourceFlavor: its node labels (capacity from matching nodes, a pod's ``nodeSelector``),
    taints and tolerations (which pods may use it) are read; the rest is a warning."""
    flavor, name = _named(shapes.ResourceFlavor, doc)
    spec = flavor.spec
    for key, why in _FLAVOR_UNMODELLED.items():
        if getattr(spec, key) is not None:
            seen.notes.warn(doc, doc.label, f"spec.{key}", f"{getattr(spec, key)}: {why}")
    for key in spec.model_extra or {}:
        seen.notes.warn(doc, doc.label, f"spec.{key}", "not a ResourceFlavor field fairalloc knows: not read")
    seen.flavors[name] = _Flavor(doc, spec)


def _local_queue(seen: _Import, doc: Document) -> None:
    local, name = _named(shapes.LocalQueue, doc)
    spec = local.spec
    if not spec.clusterQueue:
        seen.notes.warn(doc, doc.label, "spec.clusterQueue", "missing: the LocalQueue feeds no ClusterQueue")
        return
    if spec.stopPolicy not in (None, "None"):
        seen.notes.warn(doc, doc.label, "spec.stopPolicy", f"{spec.stopPolicy}: its workloads are counted all the same")
    for key in spec.model_extra or {}:
        seen.notes.warn(doc, doc.label, f"spec.{key}", "not a LocalQueue field fairalloc knows: not read")
    seen.local[(doc.namespace or "default", name)] = spec.clusterQueue


def _weight(doc: Document, fair: shapes.FairSharing | None) -> Decimal | None:
    if fair is None or fair.weight is None:
        return None
    weight = _quantity(doc, "spec.fairSharing.weight", fair.weight)
    if weight == 0:  # Kueue's FairSharing.Weight doc: 0 is an infinite share value, always behind the others
        raise ImportFailed(
            f"{_at(doc)}: spec.fairSharing.weight: 0 (Kueue: an infinite share value, always behind "
            "the others) is not a weight fairalloc models: give a weight > 0"
        )
    return weight


def _quantity(doc: Document, where: str, value: Any) -> Decimal:
    try:
        return parse_kube(value, f"{doc.where}: {doc.label}: {where}")
    except CaseError as exc:
        raise ImportFailed(str(exc)) from None


def _resource_groups(seen: _Import, doc: Document, groups: list[shapes.ResourceGroup], node: _Node) -> None:
    """``spec.resourceGroups``: every (flavor, resource) quota, in order."""
    for g, group in enumerate(groups):
        at = f"spec.resourceGroups[{g}]"
        covered = group.coveredResources
        flavors: list[str] = []
        for key in group.model_extra or {}:
            seen.notes.warn(doc, doc.label, f"{at}.{key}", "not a resource group field fairalloc knows: not read")
        for f, flavor in enumerate(group.flavors):
            fat = f"{at}.flavors[{f}]"
            if not isinstance(flavor.name, str) or not flavor.name:
                raise ImportFailed(f"{_at(doc)}: {fat}.name: missing (a flavor needs a name)")
            flavors.append(flavor.name)
            for k, entry in enumerate(flavor.resources):
                quota = _quota(seen, doc, f"{fat}.resources[{k}]", flavor.name, entry)
                if covered and quota.resource not in covered:
                    seen.notes.warn(doc, doc.label, f"{fat}.resources[{k}].name", f"{quota.resource} is not among "
                                    f"{at}.coveredResources ({', '.join(covered)}): read all the same")  # fmt: skip
                node.quotas.append(quota)
                node.covered.setdefault(quota.resource, g)
        node.groups.append(flavors)
        for r in covered:
            node.covered.setdefault(r, g)


def _quota(seen: _Import, doc: Document, at: str, flavor: str, entry: shapes.Quota) -> _Quota:
    name = entry.name
    if not isinstance(name, str) or not name:
        raise ImportFailed(f"{_at(doc)}: {at}.name: missing (a quota needs its resource's name)")
    for key in entry.model_extra or {}:
        seen.notes.warn(doc, doc.label, f"{at}.{key}", "not a resource quota field fairalloc knows: not read")
    amounts: dict[str, Decimal | None] = {}
    for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
        value = getattr(entry, key)
        if value is None:
            amounts[key] = None
            continue
        amounts[key] = _quantity(doc, f"{at}.{key}", value)
        _sensible(seen, doc, f"{at}.{key}", name, value, amounts[key])
    lending = amounts["lendingLimit"]
    if lending is not None and lending > (amounts["nominalQuota"] or 0):
        seen.notes.warn(doc, doc.label, f"{at}.lendingLimit", f"{tidy(lending)} is above the nominal quota (Kueue's "
                        "validation refuses it): read as written")  # fmt: skip
    return _Quota(flavor, name, amounts["nominalQuota"] or Decimal(0), amounts["borrowingLimit"],
                  amounts["lendingLimit"])  # fmt: skip


def _sensible(seen: _Import, doc: Document, at: str, resource: str, text: Any, amount: Decimal | None) -> None:
    """Warn of a quantity that makes no sense for its resource: a binary suffix on a count or on cpu
    (``nvidia.com/gpu: 1Gi``), a fractional count, a fraction of a byte."""
    unit = unit_of(resource)
    written = str(text).strip()
    if amount is None:
        return
    if unit in ("count", "cores") and _BINARY_SUFFIX.search(written):
        what = "a count" if unit == "count" else "cores"
        seen.notes.warn(doc, doc.label, at, f"{written} {resource}: a binary (memory) suffix on {what} "
                        f"({tidy(amount)} {resource})")  # fmt: skip
    elif unit == "count" and amount != amount.to_integral_value():
        seen.notes.warn(doc, doc.label, at, f"{written} {resource}: a fraction of a count ({tidy(amount)})")
    elif unit == "bytes" and amount != amount.to_integral_value():
        seen.notes.warn(doc, doc.label, at, f"{written} {resource}: a fraction of a byte ({tidy(amount)})")


def _manager_config(doc: Document) -> bool:
    data = doc.data.get("data")
    return isinstance(data, dict) and "controller_manager_config.yaml" in data


def _configuration(seen: _Import, doc: Document) -> None:
    """Kueue's manager Configuration (or the ConfigMap that holds it): fair sharing must be on for
    the ``kueue`` policy to be Kueue's; resource transformations are not applied."""
    if doc.kind == "ConfigMap":
        read(shapes.ConfigMap, doc.data, _at(doc))
    for config in embedded(doc, "controller_manager_config.yaml") if doc.kind == "ConfigMap" else [doc]:
        read_config = read(shapes.Configuration, config.data, _at(config))
        seen.seen("Configuration")
        fair = read_config.fairSharing
        v1beta1 = (config.api_version or "").endswith("/v1beta1")
        seen.fair_sharing = fair is not None and (fair.enable is True if v1beta1 else fair.enable is not False)
        if not seen.fair_sharing:
            seen.notes.warn(config, config.label, "fairSharing.enable", "fair sharing is off: Kueue admits in "
                            "queueing order, not by the fair sharing fairalloc's kueue policy computes")  # fmt: skip
        elif fair is not None and fair.preemptionStrategies is not None:
            seen.strategies = _strategies(seen, config, fair.preemptionStrategies)
        for key in ("transformations", "excludeResourcePrefixes", "deviceClassMappings"):
            if getattr(read_config.resources, key):
                seen.notes.warn(config, config.label, f"resources.{key}", "not applied: requests are read as "
                                "the pods give them")  # fmt: skip


# -- the tree -----------------------------------------------------------------------------------
def _implicit_cohorts(seen: _Import) -> None:
    """Cohorts named but never defined: Kueue creates them without quota."""
    for node in [*seen.queues.values(), *seen.cohorts.values()]:
        if node.parent is not None and node.parent not in seen.cohorts:
            seen.cohorts[node.parent] = _Node(node.doc, node.parent)
            seen.seen("implicit Cohort")


def _check_tree(seen: _Import) -> None:
    for start in seen.cohorts.values():
        where = f"{start.doc.where}: {start.doc.label}: {'spec.parentName' if start.doc.kind == 'Cohort' else 'spec'}"
        path = [start.name]
        parent = start.parent
        while parent is not None:
            if parent in path:
                cycle = " -> ".join([*path[path.index(parent) :], parent])
                raise ImportFailed(f"{where}: the cohorts form a cycle ({cycle})")
            path.append(parent)
            parent = seen.cohorts[parent].parent
            if len(path) > limits.MAX_TREE_DEPTH + 1:  # walked no further: the case would be refused
                raise ImportFailed(
                    f"{where}: more than {limits.MAX_TREE_DEPTH} cohorts above it; fairalloc walks "
                    f"hierarchies recursively and refuses deeper ones (MAX_TREE_DEPTH)"
                )


def _group_names(seen: _Import) -> dict[str, str]:
    """Cohort -> group name: its own, unless a ClusterQueue has it too (Kueue keeps the kinds apart)."""
    out = {}
    for name, node in seen.cohorts.items():
        if name in seen.queues:
            out[name] = f"{name} (cohort)"
            seen.notes.warn(node.doc, f"Cohort/{name}", "metadata.name", f"a ClusterQueue is named {name} too: the "
                            f"cohort is the group '{name} (cohort)'")  # fmt: skip
        else:
            out[name] = name
    return out


def _resource_names(seen: _Import) -> dict[tuple[str, str], str]:
    """(flavor, resource) -> the case's resource: the resource's own name when one flavor provides
    it, ``resource@flavor`` when several do (module docstring), with a warning."""
    providers: dict[str, list[str]] = {}
    for node in [*seen.cohorts.values(), *seen.queues.values()]:
        for q in node.quotas:
            if q.flavor not in providers.setdefault(q.resource, []):
                providers[q.resource].append(q.flavor)
    names = {}
    for resource, flavors in providers.items():
        for f in flavors:
            names[(f, resource)] = resource if len(flavors) == 1 else f"{resource}@{f}"
        if len(flavors) > 1:
            split = ", ".join(f"{resource}@{f}" for f in flavors)
            seen.notes.warn("quotas", resource, "flavors", f"{len(flavors)} flavors ({', '.join(flavors)}) give quota "
                            f"for {resource}: one resource per flavor ({split}); a pending workload is charged to "
                            "the flavor Kueue's flavor assigner would give it, the pending workloads taken one at a "
                            "time in file order (Kueue's order, by priority and fair sharing, is not "
                            "modelled)")  # fmt: skip
    return names


def _fields(node: _Node, names: dict[tuple[str, str], str], head: dict, notes: Notes) -> dict:
    """A group's or a user's case fields from its quotas."""
    spec: dict[str, Any] = {k: v for k, v in head.items() if v is not None}
    if node.weight is not None:
        spec["weight"] = node.weight
    guarantee: Amounts = {}
    borrowing: Amounts = {}
    lending: Amounts = {}
    for q in node.quotas:
        r = names[(q.flavor, q.resource)]
        if r in guarantee:  # Kueue's validation refuses duplicates; the later entry is read
            notes.warn(node.doc, node.doc.label, "spec.resourceGroups", f"{q.resource} of flavor {q.flavor} is given "
                       "twice: the last one is read")  # fmt: skip
        guarantee[r] = q.nominal
        if q.borrowing is not None:
            borrowing[r] = q.borrowing
        if q.lending is not None:
            lending[r] = q.lending
    for key, amounts in (("guarantee", guarantee), ("borrowing_limit", borrowing), ("lending_limit", lending)):
        if amounts:
            spec[key] = amounts
    return spec


# -- requests and usage -------------------------------------------------------------------------
@dataclass
class _Demand:
    request: Amounts = field(default_factory=dict)
    usage: Amounts = field(default_factory=dict)


@dataclass
class _PodSet:
    amounts: Amounts  # resource -> the pod set's total
    flavors: dict[str, str]  # resource -> the flavor its admission names
    pod: shapes.PodSpec  # the pod template's spec: what the flavor's taints and labels are checked against


@dataclass
class _Charge:
    """A counted workload: its ClusterQueue, whether admitted, its pod sets."""

    doc: Document
    queue: str
    admitted: bool
    podsets: list[_PodSet]


def _demand(seen: _Import, names: dict[tuple[str, str], str]) -> dict[str, _Demand]:
    """Requests and usage per ClusterQueue: the admitted workloads on the flavors their admissions
    name, then the pending ones, in file order, on the flavor Kueue's flavor assigner would give
    each (``kueue_flavors``) were they admitted one at a time."""
    out: dict[str, _Demand] = {}
    workloads = seen.workloads
    if seen.pods and seen.workloads:
        seen.notes.warn(seen.pods[0], "pods", "", f"{len(seen.pods)} pods beside Workloads: Kueue makes a Workload of "
                        "every job or pod it manages, so the pods are not counted again")  # fmt: skip
    elif seen.pods:
        workloads = _pod_workloads(seen)
    charges = [c for w in workloads if (c := _workload(seen, w)) is not None]
    tree = _quota_tree(seen)
    for c in charges:
        if c.admitted:
            placed = [(r, v, ps.flavors.get(r) or _first_flavor(seen.queues[c.queue], r))
                      for ps in c.podsets for r, v in ps.amounts.items()]  # fmt: skip
            _place(tree, c, placed, names, out)
    for c in charges:
        if not c.admitted:
            _assign(seen, tree, c, names, out)
    return out


def _pod_workloads(seen: _Import) -> list[_Workload]:
    """The Workloads of the pods labelled with a LocalQueue (:mod:`.kueue_workloads`); the others
    are not Kueue's (one warning)."""
    queued = [p for p in seen.pods if labelled(p)]
    if len(queued) < len(seen.pods):
        seen.notes.warn("pods", "", f"labels.{QUEUE_LABEL}", "pods without a Kueue queue are not counted")
    return [_Workload.of(w) for p in queued for w in workloads_of(p, seen.notes)]


def _place(tree: flavors_.Tree, c: _Charge, placed: list[tuple[str, Decimal, str]],
           names: dict[tuple[str, str], str], out: dict[str, _Demand], admit: bool = True) -> None:  # fmt: skip
    """Charge ``(resource, amount, flavor)`` to ``c``'s queue: its request, and its usage when
    admitted; ``admit``: the quota tree's usage too (what later pending workloads find taken)."""
    demand = out.setdefault(c.queue, _Demand())
    for r, amount, flavor in placed:
        name = names.get((flavor, r), r)
        demand.request[name] = demand.request.get(name, Decimal(0)) + amount
        if c.admitted:
            demand.usage[name] = demand.usage.get(name, Decimal(0)) + amount
        if admit and (flavor, r) in tree.quotas.get(_CQ + c.queue, {}):
            tree.add_usage(_CQ + c.queue, (flavor, r), amount)


def _quota_tree(seen: _Import) -> flavors_.Tree:
    """The cohort forest with every quota per (flavor, resource), for the flavor assigner."""
    parent: dict[str, str | None] = {}
    quotas: dict[str, dict[flavors_.FR, flavors_.Quota]] = {}
    for prefix, nodes in ((_COHORT, seen.cohorts), (_CQ, seen.queues)):
        for node in nodes.values():
            parent[prefix + node.name] = None if node.parent is None else _COHORT + node.parent
            quotas[prefix + node.name] = {(q.flavor, q.resource): (q.nominal, q.borrowing, q.lending)
                                          for q in node.quotas}  # fmt: skip
    return flavors_.Tree(parent, quotas)


def _assign(seen: _Import, tree: flavors_.Tree, c: _Charge, names: dict[tuple[str, str], str],
            out: dict[str, _Demand]) -> None:  # fmt: skip
    """A pending workload: each pod set's resource groups on the flavor the assigner picks, else
    on :func:`_waiting_flavor`; when no flavor admits its pods (taints, labels), not counted, with a
    warning.  Only a workload that fits everywhere takes quota from those after it."""
    cq = seen.queues[c.queue]
    assumed: dict[flavors_.FR, Decimal] = {}
    placed: list[tuple[str, Decimal, str]] = []
    fit = True
    for ps in c.podsets:
        for g, group in enumerate(cq.groups):
            requests = {r: v for r, v in ps.amounts.items() if cq.covered.get(r) == g}
            if not requests:
                continue
            if len(group) > 1:
                _unmodelled_selection(seen, c.doc, ps.pod, group)
            usable = [f for f in group if _admits(seen, f, ps.pod)]
            flavor, mode = tree.assign(_CQ + c.queue, usable, requests, assumed, cq.fungibility)
            if flavor is None:
                flavor = _waiting_flavor(seen, c, tree, usable, requests, assumed)
                mode = flavors_.Mode(flavors_.NO_FIT, 0)
            if flavor is None:
                seen.notes.warn(c.doc, c.doc.label, "spec.podSets", f"no flavor of ClusterQueue {c.queue} "
                                f"({', '.join(group)}) admits its pods (the flavors' taints and node labels): Kueue "
                                "never admits it, not counted")  # fmt: skip
                return
            fit = fit and mode.preemption == flavors_.FIT
            for r, v in requests.items():
                assumed[(flavor, r)] = assumed.get((flavor, r), Decimal(0)) + v
                placed.append((r, v, flavor))
    _place(tree, c, placed, names, out, admit=fit)


def _listed(amounts: Amounts) -> str:
    return ", ".join(f"{tidy(v)} {r}" for r, v in amounts.items())


def _waiting_flavor(seen: _Import, c: _Charge, tree: flavors_.Tree, usable: list[str], requests: Amounts,
                    assumed: dict[flavors_.FR, Decimal]) -> str | None:  # fmt: skip
    """A pod set no flavor of ``usable`` (those its pods may use) fits now: the first one whose
    quota could ever hold it (``PotentialAvailable``: Kueue admits it there once quota frees up),
    else the first one (the request counts as demand all the same; a warning when there was a
    choice)."""
    cq = _CQ + c.queue

    def could_hold(fr: flavors_.FR, amount: Decimal) -> bool:
        return fr in tree.quotas[cq] and assumed.get(fr, Decimal(0)) + amount <= tree.potential(cq, fr)

    for flavor in usable:
        if all(could_hold((flavor, r), v) for r, v in requests.items()):
            return flavor
    if len(usable) > 1:
        seen.notes.warn(c.doc, c.doc.label, "spec.podSets", f"asks {_listed(requests)}, more than any flavor of "
                        f"ClusterQueue {c.queue} can ever give it (Kueue never admits it whole): charged to its first "
                        f"flavor, {usable[0]}, as demand")  # fmt: skip
    return usable[0] if usable else None


def _admits(seen: _Import, flavor: str, pod: shapes.PodSpec) -> bool:
    given = seen.flavors.get(flavor)
    return given is None or flavors_.flavor_admits(given.spec, pod)


def _unmodelled_selection(seen: _Import, doc: Document, pod: shapes.PodSpec, group: list[str]) -> None:
    """Warn of what a flavor choice depends on that the assigner does not read."""
    missing = [f for f in group if f not in seen.flavors and f not in seen.missing_flavors]
    if missing:
        seen.missing_flavors.update(missing)
        seen.notes.warn("flavors", ", ".join(missing), "ResourceFlavor", "not in the files: read as flavors without "
                        "node labels or taints (Kueue admits nothing to a flavor it does not have)")  # fmt: skip
    keys = {k for f in group if f in seen.flavors for k in seen.flavors[f].spec.nodeLabels}
    if keys & flavors_.affinity_keys(pod):  # Kueue ignores the terms on keys no flavor has (flavorSelector)
        seen.notes.warn(doc, doc.label, "spec.podSets", "required node affinity is not matched against the flavors' "
                        "node labels (nodeSelector is): the flavor is chosen without it")  # fmt: skip


def _queue_of_workload(seen: _Import, doc: Document, workload: shapes.Workload) -> str | None:
    admission = workload.status.admission
    if admission is not None and admission.clusterQueue:
        return admission.clusterQueue
    lq = workload.spec.queueName
    if not lq:
        seen.notes.warn(doc, doc.label, "spec.queueName", "missing: the workload is in no queue, not counted")
        return None
    target = seen.local.get((doc.namespace or "default", lq))
    if target is None:
        seen.notes.warn(doc, doc.label, "spec.queueName", f"no LocalQueue {doc.namespace or 'default'}/{lq} in the "
                        "files: not counted")  # fmt: skip
    return target


def _condition(status: shapes.WorkloadStatus, kind: str) -> bool:
    return any(c.type == kind and str(c.status) == "True" for c in status.conditions)


def _workload(seen: _Import, read_as: _Workload) -> _Charge | None:
    """A Workload as counted (None: not counted, with a warning unless it finished)."""
    doc, workload = read_as.doc, read_as.shape
    status = workload.status
    if _condition(status, "Finished"):
        seen.seen("finished Workload")
        return None
    if workload.spec.active is False:
        seen.notes.warn(doc, doc.label, "spec.active", "false: a deactivated workload, not counted")
        return None
    queue = _queue_of_workload(seen, doc, workload)
    if queue is None:
        return None
    if queue not in seen.queues:
        seen.notes.warn(doc, doc.label, "spec.queueName", f"ClusterQueue {queue} is not in the files: not counted")
        return None
    admitted = status.admission is not None or _condition(status, "Admitted") or _condition(status, "QuotaReserved")
    seen.seen("admitted Workload" if admitted else "pending Workload")
    cq = seen.queues[queue]
    assignments = _assignments(status.admission)
    reclaimable = {r.name or "main": int(r.count) for r in status.reclaimablePods if isinstance(r.count, int)}
    podsets: list[_PodSet] = []
    for k, podset in enumerate(workload.spec.podSets):
        at = f"spec.podSets[{k}]"
        ps_name = podset.name or "main"
        count = podset.count
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ImportFailed(f"{_at(doc)}: {at}.count: must be a whole number >= 0 (got {excerpt(count)})")
        number(count, f"{_at(doc)}: {at}.count")  # the gate's bounds: 10^30 pods is one line
        assigned = assignments.get(ps_name)
        amounts, flavors = _podset_amounts(seen, doc, at, podset, count, assigned, reclaimable.get(ps_name, 0))
        if "pods" in cq.covered:
            amounts["pods"] = amounts.get("pods", Decimal(0)) + count - reclaimable.get(ps_name, 0)
        podsets.append(_PodSet(amounts, flavors, podset.template.spec))
    uncovered = sorted({r for ps in podsets for r in ps.amounts if r not in cq.covered})
    if uncovered:
        what = "it is admitted all the same: counted" if admitted else "Kueue never admits it: not counted"
        seen.notes.warn(doc, doc.label, "spec.podSets", f"requests {', '.join(uncovered)}, which ClusterQueue "
                        f"{queue} does not cover ('resource unavailable in ClusterQueue'): {what}")  # fmt: skip
        if not admitted:
            return None
    return _Charge(doc, queue, admitted, podsets)


#: a pod set's assignment and where it is (``status.admission.podSetAssignments[k]``)
_Assignment = tuple[str, shapes.PodSetAssignment]


def _assignments(admission: shapes.Admission | None) -> dict[str, _Assignment]:
    if admission is None:
        return {}
    return {a.name or "main": (f"status.admission.podSetAssignments[{k}]", a)
            for k, a in enumerate(admission.podSetAssignments)}  # fmt: skip


def _podset_amounts(seen: _Import, doc: Document, at: str, podset: shapes.PodSet, count: int,
                    given: _Assignment | None, reclaimable: int) -> tuple[Amounts, dict[str, str]]:  # fmt: skip
    """A pod set's total: ``resourceUsage`` of its admission when given (what Kueue charged), else
    ``count`` times the pod template's request; less the reclaimable pods' share."""
    flavors: dict[str, str] = {}
    if given is not None:
        where, assignment = given
        flavors = {r: f for r, f in assignment.flavors.items() if f}
        if assignment.resourceUsage:
            total = {r: _quantity(doc, f"{where}.resourceUsage.{r}", v) for r, v in assignment.resourceUsage.items()}
            kept = Decimal(count - reclaimable) / count if count else Decimal(0)
            return {r: tidy(v * kept) for r, v in total.items() if r != "pods"}, flavors
        if isinstance(assignment.count, int):
            count = assignment.count
    per_pod = k8s.pod_request(podset.template.model_dump(), f"{_at(doc)}: {at}.template", seen.notes)
    return {r: tidy(v * (count - reclaimable)) for r, v in per_pod.items()}, flavors


def _first_flavor(node: _Node, resource: str) -> str:
    """The first flavor of ``node``'s resource group covering ``resource`` ("" when none covers it)."""
    g = node.covered.get(resource)
    if g is None:
        return ""
    provided = [q.flavor for q in node.quotas if q.resource == resource]
    return next((f for f in node.groups[g] if f in provided), node.groups[g][0] if node.groups[g] else "")


def _add_demand(spec: dict, demand: _Demand) -> None:
    if demand.request:
        spec["request"] = demand.request
    if demand.usage:
        spec["usage"] = demand.usage


# -- capacity -----------------------------------------------------------------------------------
def _capacity(seen: _Import, names: dict[tuple[str, str], str], named: list[str]) -> tuple[Amounts, str]:
    if seen.nodes:
        return _node_capacity(seen, names), "nodes"
    total: Amounts = {}
    for node in [*seen.cohorts.values(), *seen.queues.values()]:
        for q in node.quotas:
            r = names[(q.flavor, q.resource)]
            total[r] = total.get(r, Decimal(0)) + q.nominal
    return {r: v for r, v in total.items() if v > 0 or r in named}, "configuration" if total else ""


def _node_capacity(seen: _Import, names: dict[tuple[str, str], str]) -> Amounts:
    """The Nodes' allocatable total; a resource given per flavor counts the nodes matching the
    ResourceFlavor's ``spec.nodeLabels`` for each flavor."""
    total = dict(k8s.node_capacity(seen.nodes, seen.notes))
    split = {(f, r): name for (f, r), name in names.items() if name != r}
    for (flavor, resource), name in split.items():
        total.pop(resource, None)
        labels = _flavor_labels(seen, flavor, resource)
        if labels is None:
            continue
        matching = [n for n in seen.nodes if _matches(n, labels)]
        total[name] = k8s.node_capacity(matching, Notes()).get(resource, Decimal(0)) if matching else Decimal(0)
    return total


def _flavor_labels(seen: _Import, flavor: str, resource: str) -> dict[str, str | None] | None:
    given = seen.flavors.get(flavor)
    if given is None:
        seen.notes.warn("nodes", f"ResourceFlavor/{flavor}", "spec.nodeLabels", f"the flavor is not in the files: "
                        f"no capacity for {resource}@{flavor} from the nodes")  # fmt: skip
        return None
    if not given.spec.nodeLabels:
        doc = given.doc
        seen.notes.warn(doc, doc.label, "spec.nodeLabels", f"none: every node counts for {resource}@{flavor}")
    return given.spec.nodeLabels


def _matches(node: Document, labels: dict) -> bool:
    have = node.metadata.get("labels") or {}
    return all(str(have.get(k)) == str(v) for k, v in labels.items())


# -- description --------------------------------------------------------------------------------
def _description(seen: _Import, draft: Draft) -> list[str]:
    order = ("ClusterQueue", "Cohort", "implicit Cohort", "LocalQueue", "ResourceFlavor", "Job", "Deployment",
             "StatefulSet", "LeaderWorkerSet", "admitted Workload", "pending Workload", "finished Workload", "Pod",
             "Node", "Configuration")  # fmt: skip
    parts = [f"{seen.counts[k]} {k}{'s' if seen.counts[k] != 1 else ''}" for k in order if seen.counts.get(k)]
    out = [f"Read {', '.join(parts)}." if parts else "Read nothing Kueue knows."]
    if draft.capacity_from == "configuration":
        out.append("Kueue never sees the cluster's capacity: the capacity is the sum of the nominal quotas over the "
                   "whole cohort forest.")  # fmt: skip
    return out


__all__ = ["SYSTEM", "detect", "convert", "unit_of"]
