"""Kueue's flavor assigner on imported quotas: the flavor a pending workload's pod set would get.

Source read: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7 (Apache-2.0):

* ``pkg/cache/scheduler/resource_node.go``: ``SubtreeQuota`` (a node's nominal quota plus its
  children's ``SubtreeQuota - localQuota``), ``localQuota`` (``max(0, SubtreeQuota - lendingLimit)``
  with a lending limit, else 0), ``addUsage`` (a node's usage past its local available quota goes
  up to its parent), ``available`` and ``potentialAvailable`` (the largest request a node could
  ever get, from empty usage), all per (flavor, resource);
* ``pkg/cache/scheduler/clusterqueue_snapshot.go``: ``Available`` (``available`` at least 0),
  ``PotentialAvailable``, ``BorrowingWith`` (a ClusterQueue borrows past its nominal quota, a
  cohort past its ``SubtreeQuota``: ``cohort_snapshot.go``);
* ``pkg/scheduler/preemption/classical/hierarchical_preemption.go``:
  ``FindHeightOfLowestSubtreeThatFits`` and ``getNodeHeight`` (the borrowing level: 0 within the
  ClusterQueue's nominal quota, else the height of the lowest cohort whose subtree has room);
* ``pkg/scheduler/flavorassigner/flavorassigner.go``: ``findFlavorForPodSets`` (the flavors of the
  resource group in the ClusterQueue's order; a flavor's mode is the worst over the group's
  requested resources; the search stops at the first flavor ``shouldTryNextFlavor`` accepts, else
  keeps the ``isPreferred`` best), ``checkFlavorForPodSets`` (untolerated ``NoSchedule`` /
  ``NoExecute`` taints of the flavor, the pod's ``nodeSelector`` on the flavor's label keys),
  ``fitsResourceQuota`` (no fit past ``PotentialAvailable``; fit within ``Available``; else
  preemption when the request is within the nominal quota, or fits a subtree lower than the whole
  cohort tree, or the ClusterQueue may preempt while borrowing: ``canPreemptWhileBorrowing``).

What a static import cannot know is assumed: where Kueue would simulate preemption
(``SimulatePreemption``) the assigner assumes it finds candidates (mode ``preempt``); the
flavor of an earlier attempt (``LastAssignment``) is not known, so every search starts at the
first flavor; required node affinity is not matched against the flavors (the importer warns).

>>> t = Tree({"cq": None}, {"cq": {("on-demand", "cpu"): (Decimal(4), None, None),
...                                 ("spot", "cpu"): (Decimal(8), None, None)}})
>>> t.assign("cq", ["on-demand", "spot"], {"cpu": Decimal(3)}, {}, Fungibility())
('on-demand', Mode(preemption=4, borrow=0))

Once it is admitted, 1 on-demand core is left: a second one would preempt there (its nominal
quota holds it), and ``whenCanPreempt: TryNextFlavor`` (the default) takes spot, where it fits;
nine cores fit no flavor ever (more than either quota):

>>> t.add_usage("cq", ("on-demand", "cpu"), Decimal(3))
>>> t.assign("cq", ["on-demand", "spot"], {"cpu": Decimal(3)}, {}, Fungibility())
('spot', Mode(preemption=4, borrow=0))
>>> t.assign("cq", ["on-demand", "spot"], {"cpu": Decimal(3)}, {}, Fungibility(when_can_preempt="MayStopSearch"))
('on-demand', Mode(preemption=2, borrow=0))
>>> t.assign("cq", ["on-demand", "spot"], {"cpu": Decimal(9)}, {}, Fungibility())[0] is None
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import NamedTuple

from fairalloc.io.importers.kueue_shapes import PodSpec, ResourceFlavorSpec, Taint, Toleration

FR = tuple[str, str]  # (flavor, resource)
Quota = tuple[Decimal, Decimal | None, Decimal | None]  # nominal, borrowing limit, lending limit

#: ``preemptionMode`` of ``flavorassigner.go``, worst to best
NO_FIT, NO_CANDIDATES, PREEMPT, RECLAIM, FIT = range(5)
_ZERO = Decimal(0)


class Mode(NamedTuple):
    """``granularMode``: a preemption mode and a borrowing level (0: within nominal quota)."""

    preemption: int
    borrow: int


WORST, BEST = Mode(NO_FIT, 2**31), Mode(FIT, 0)


@dataclass(frozen=True)
class Fungibility:
    """A ClusterQueue's ``spec.flavorFungibility`` (defaults of ``clusterqueue_types.go``) and
    whether it may preempt while borrowing (``canPreemptWhileBorrowing``)."""

    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: str | None = None
    preempt_while_borrowing: bool = False

    def try_next(self, mode: Mode) -> bool:
        """``shouldTryNextFlavor``."""
        if mode.preemption in (NO_FIT, NO_CANDIDATES):
            return True
        if mode.preemption in (PREEMPT, RECLAIM) and self.when_can_preempt == "TryNextFlavor":
            return True
        return mode.borrow != 0 and self.when_can_borrow == "TryNextFlavor"

    def preferred(self, a: Mode, b: Mode) -> bool:
        """``isPreferred``: whether ``a`` is better than ``b``."""
        if a.preemption == NO_FIT:
            return False
        if b.preemption == NO_FIT:
            return True
        if (a.preemption == NO_CANDIDATES) != (b.preemption == NO_CANDIDATES):
            return b.preemption == NO_CANDIDATES
        if self.preference == "PreemptionOverBorrowing":
            if a.borrow != b.borrow:
                return a.borrow < b.borrow
            return a.preemption > b.preemption
        if a.preemption != b.preemption:
            return a.preemption > b.preemption
        return a.borrow < b.borrow


@dataclass
class Tree:
    """ClusterQueues and cohorts (``parent``: node -> its cohort or None) with their quotas per
    (flavor, resource), and the usage Kueue's cache would hold."""

    parent: dict[str, str | None]
    quotas: dict[str, dict[FR, Quota]]
    subtree: dict[str, dict[FR, Decimal]] = field(default_factory=dict)
    usage: dict[str, dict[FR, Decimal]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kids: dict[str | None, list[str]] = {}
        for v, p in self.parent.items():
            kids.setdefault(p, []).append(v)
        self.kids = kids
        for v in self._postorder(None):
            sq = {fr: q[0] for fr, q in self.quotas.get(v, {}).items()}
            for c in kids.get(v, []):
                for fr, amount in self.subtree[c].items():
                    sq[fr] = sq.get(fr, _ZERO) + amount - self.local_quota(c, fr)
            self.subtree[v] = sq
            self.usage[v] = {}

    def _postorder(self, v: str | None) -> list[str]:
        out: list[str] = []
        for c in self.kids.get(v, []):
            out += [*self._postorder(c), c]
        return out

    def _limit(self, v: str, fr: FR, k: int) -> Decimal | None:
        q = self.quotas.get(v, {}).get(fr)
        return None if q is None else q[k]

    def local_quota(self, v: str, fr: FR) -> Decimal:
        lending = self._limit(v, fr, 2)
        return _ZERO if lending is None else max(_ZERO, self.subtree[v].get(fr, _ZERO) - lending)

    def _used(self, v: str, fr: FR) -> Decimal:
        return self.usage[v].get(fr, _ZERO)

    def local_available(self, v: str, fr: FR) -> Decimal:
        return max(_ZERO, self.local_quota(v, fr) - self._used(v, fr))

    def add_usage(self, v: str, fr: FR, amount: Decimal) -> None:
        """``addUsage``."""
        room = self.local_available(v, fr)
        self.usage[v][fr] = self._used(v, fr) + amount
        p = self.parent[v]
        if p is not None and amount > room:
            self.add_usage(p, fr, amount - room)

    def available(self, v: str, fr: FR) -> Decimal:
        """``available`` (may be negative when over-admitted)."""
        p = self.parent[v]
        if p is None:
            return self.subtree[v].get(fr, _ZERO) - self._used(v, fr)
        from_parent = self.available(p, fr)
        borrowing = self._limit(v, fr, 1)
        if borrowing is not None:
            lq = self.local_quota(v, fr)
            stored = self.subtree[v].get(fr, _ZERO) - lq
            used = max(_ZERO, self._used(v, fr) - lq)
            from_parent = min(stored - used + borrowing, from_parent)
        return self.local_available(v, fr) + from_parent

    def potential(self, v: str, fr: FR) -> Decimal:
        """``potentialAvailable``."""
        p = self.parent[v]
        if p is None:
            return self.subtree[v].get(fr, _ZERO)
        out = self.local_quota(v, fr) + self.potential(p, fr)
        borrowing = self._limit(v, fr, 1)
        if borrowing is not None:
            out = min(self.subtree[v].get(fr, _ZERO) + borrowing, out)
        return out

    def _borrowing_with(self, v: str, fr: FR, amount: Decimal, queue: bool) -> bool:
        own = self._limit(v, fr, 0) if queue else self.subtree[v].get(fr, _ZERO)
        return (own or _ZERO) < self._used(v, fr) + amount

    def _height(self, v: str) -> int:
        """``getNodeHeight`` of a cohort."""
        cohorts = [c for c in self.kids.get(v, []) if self.kids.get(c)]
        return max([min(len(self.kids.get(v, [])), 1), *(self._height(c) + 1 for c in cohorts)])

    def _lowest_fit(self, cq: str, fr: FR, amount: Decimal) -> tuple[int, bool]:
        """``FindHeightOfLowestSubtreeThatFits``: (borrowing level, whether that subtree is lower
        than the whole cohort tree)."""
        p = self.parent[cq]
        if p is None or not self._borrowing_with(cq, fr, amount, True):
            return 0, p is not None
        remaining = amount - self.local_available(cq, fr)
        path = [p]
        while (up := self.parent[path[-1]]) is not None:
            path.append(up)
        for node in path:
            if not self._borrowing_with(node, fr, remaining, False):
                return self._height(node), self.parent[node] is not None
            remaining -= self.local_available(node, fr)
        return self._height(path[-1]), False

    def fits(self, cq: str, fr: FR, amount: Decimal, fungibility: Fungibility) -> Mode:
        """``fitsResourceQuota`` of ``amount`` (this pod set's request plus the earlier pod sets'
        in the flavor), preemption assumed to find candidates (module docstring)."""
        if amount > self.potential(cq, fr):
            return Mode(NO_FIT, 0)
        borrow, reclaim = self._lowest_fit(cq, fr, amount)
        if amount <= max(_ZERO, self.available(cq, fr)):
            return Mode(FIT, borrow)
        nominal = self._limit(cq, fr, 0) or _ZERO
        if nominal >= amount or reclaim or fungibility.preempt_while_borrowing:
            return Mode(PREEMPT, borrow)
        return Mode(NO_FIT, borrow)

    def assign(self, cq: str, flavors: list[str], requests: dict[str, Decimal], assumed: dict[FR, Decimal],
               fungibility: Fungibility) -> tuple[str | None, Mode]:  # fmt: skip
        """``findFlavorForPodSets`` for one resource group: the flavor (None: none fits) and its
        mode.  ``flavors``: the group's flavors in order, less those ``checkFlavorForPodSets``
        refuses (:func:`flavor_admits`); ``assumed``: what the workload's earlier pod sets take of
        each (flavor, resource)."""
        best: tuple[str | None, Mode] = (None, WORST)
        for flavor in flavors:
            mode = BEST
            for resource, amount in requests.items():
                fr = (flavor, resource)
                if fr not in self.quotas.get(cq, {}):
                    mode = Mode(NO_FIT, 0)  # a covered resource without a quota in this flavor
                else:
                    got = self.fits(cq, fr, assumed.get(fr, _ZERO) + amount, fungibility)
                    mode = got if fungibility.preferred(mode, got) else mode
                if mode.preemption == NO_FIT:
                    break
            if not fungibility.try_next(mode):
                return flavor, mode
            if fungibility.preferred(mode, best[1]):
                best = (flavor, mode)
        return best


def tolerated(taint: Taint, tolerations: list[Toleration]) -> bool:
    """Whether one of ``tolerations`` tolerates ``taint`` (Kubernetes' ``ToleratesTaint``)."""
    for t in tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.key and t.key != taint.key:
            continue
        if not t.key and t.operator != "Exists":
            continue
        if t.operator == "Exists" or (t.value or "") == (taint.value or ""):
            return True
    return False


def affinity_keys(pod_spec: PodSpec) -> set[str]:
    """The node label keys a pod's required node affinity names (``affinity`` is read as written:
    only its ``matchExpressions`` keys matter here)."""
    affinity = pod_spec.affinity.get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(affinity, dict) else None
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    return {
        str(e.get("key"))
        for t in (terms if isinstance(terms, list) else [])
        if isinstance(t, dict) and isinstance(t.get("matchExpressions"), list)
        for e in t["matchExpressions"]
        if isinstance(e, dict)
    }


def flavor_admits(flavor: ResourceFlavorSpec, pod_spec: PodSpec) -> bool:
    """``checkFlavorForPodSets`` without node affinity: every ``NoSchedule`` / ``NoExecute`` taint
    of the flavor tolerated (the pod's tolerations and the flavor's), and the pod's
    ``nodeSelector`` on the flavor's label keys matching the flavor's labels."""
    tolerations = [*pod_spec.tolerations, *flavor.tolerations]
    for taint in flavor.nodeTaints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerated(taint, tolerations):
            return False
    labels = flavor.nodeLabels
    return all(labels[k] == v for k, v in pod_spec.nodeSelector.items() if k in labels)


__all__ = ["FIT", "NO_FIT", "PREEMPT", "Fungibility", "Mode", "Tree", "affinity_keys", "flavor_admits", "tolerated"]
