"""fairalloc.models.kueue_cycle at commit f2f0d7d, kept verbatim as the oracle for the faster cycle:
both its forms (``KueueCycle(fast=True)`` and the plain ``fast=False``) as they were before the work
that followed (tests/test_kueue_cycle_speed.py replays seeded workloads through this module and
the current one and compares the event logs).  Its docstring then:

Kueue online: one scheduling cycle (``Scheduler.schedule``) with its admission, borrowing and
preemption rules.

Source read: kubernetes-sigs/kueue at commit ff69552e79ad21652c36caa97038382e55625cf7 (2026-08-22),
Apache-2.0.  The rules followed, file and function:

* ``pkg/scheduler/scheduler.go``, ``schedule``: one head per ClusterQueue (``Manager.heads`` in
  ``pkg/cache/queue/manager.go`` pops one workload per queue), every head nominated against one
  snapshot (``nominate``), the entries ordered (``makeClassicalIterator``: lower borrowing level,
  then higher priority, then older; or, with fair sharing, ``fairSharingIterator``), then each
  processed in order (``processEntry``): ``fits`` is checked again against the snapshot as earlier
  entries changed it (their usage added, every victim taken so far removed), a workload that needs
  preemption and has targets reserves its quota and has its victims evicted but is **not admitted
  in this cycle** (``issuePreemptions``), one that needs preemption and has none reserves what
  ``quotaResourcesToReserve`` says unless its ClusterQueue can always reclaim
  (``reserveCapacityForUnreclaimablePreempt``), and targets taken by an earlier entry make the
  assignment be computed again without them (``updateAssignmentIfNeeded``, gate
  ``RecomputeAssignmentUponPreemptionTargetsOverlap``: a fit then waits, ``DeferredFit``);
* ``pkg/cache/queue/cluster_queue.go``, ``baseCompareFunc`` and ``requeueIfNotPresent``: a queue's
  heads by priority, then the time it entered the queue; ``StrictFIFO`` keeps a head that failed as
  the head; ``BestEffortFIFO`` parks it (``inadmissibleWorkloads``) until a workload of its root
  cohort releases its quota, finishing or evicted (``QueueAssociatedInadmissibleWorkloadsAfter`` in
  ``pkg/cache/queue/manager.go``, called by ``pkg/controller/core/workload_controller.go`` on a
  finished, deleted or evicted workload; ``requeueWorkloadsCohort``,
  ``pkg/cache/queue/inadmissible_workloads.go``, puts back those of the whole root cohort), and
  keeps a preemptor waiting for its victims at the head (``preemptorWorkload``);
* ``pkg/scheduler/flavorassigner/flavorassigner.go``, ``fitsResourceQuota``: above
  ``PotentialAvailable`` no fit; within ``Available`` a fit at the borrowing level
  ``FindHeightOfLowestSubtreeThatFits`` (``preemption/classical/hierarchical_preemption.go``);
  otherwise preemption is looked for only if the request is within nominal quota, fits in a
  sub-cohort below the root, or the queue may preempt while borrowing (``canPreemptWhileBorrowing``);
* ``pkg/scheduler/preemption/preemption.go``, ``classicalPreemptions``, ``fillBackWorkloads``,
  ``workloadFits``, with ``classical/candidate_generator.go`` (``NewCandidateIterator``,
  ``candidateIsValid``) and ``classical/hierarchical_preemption.go``
  (``collectCandidatesForHierarchicalReclaim``, ``classifyPreemptionVariant``): the policies
  ``withinClusterQueue``, ``reclaimWithinCohort`` and ``borrowWithinCohort`` with
  ``maxPriorityThreshold``; ``common/ordering.go``, ``CandidatesOrdering``;
* ``preemption.go``, ``fairPreemptions``, ``runFirstFsStrategy``, ``runSecondFsStrategy``, with
  ``fairsharing/ordering.go`` (``nextTarget``), ``fairsharing/target.go`` and
  ``fairsharing/strategy.go``: ``LessThanOrEqualToFinalShare`` and ``LessThanInitialShare`` on the
  shares of the almost least common ancestors, and the preemptor within nominal quota reclaiming
  unconditionally (gate ``FairSharingPreemptWithinNominal``).

The gates are at their defaults of that commit (``PrioritySortingWithinCohort``,
``FairSharingPrioritizeNonBorrowing``, ``FairSharingPreemptWithinNominal``,
``RecomputeAssignmentUponPreemptionTargetsOverlap`` on; ``PrioritizePreemptorWorkloads`` off).

Quota is the case's: a leaf queue is a ClusterQueue (``guarantee`` its nominal quota,
``borrowing_limit``, ``lending_limit``), a group a Cohort, the tree's ``SubtreeQuota``,
``localQuota``, usage and ``potentialAvailable`` are :mod:`fairalloc.models.kueue_tree`'s
(``_Tree``, factored out of :mod:`fairalloc.models.kueue` so that the entitlement and the cycle
read the same arithmetic); this module adds
``available`` and the borrowing heights on top of it.  A job is a workload: its pods times its
per-pod request, admitted whole (Kueue's partial admission needs ``minCount``, which a job's
``min_pods`` is not read as here); its priority is the effective priority; its submit time is its
creation time, the queue-order timestamp (``GetQueueOrderTimestamp``, ``pkg/workload/workload.go``)
even after a preemption (with ``PrioritySortingWithinCohort`` on, a preempted workload keeps its
place: the time it entered the queue again, ``since``, is not read); a running job's start is its
quota reservation time (``CandidatesOrdering``: the most recently reserved first).

Flavors: a case names a resource given in several flavors ``resource@flavor`` (the Kueue
importer's spelling), and a job's request names those resources, so the flavor of every job is
given by the case: there is no flavor assignment (no ``findFlavorForPodSets``, no fungibility
``whenCanBorrow`` / ``whenCanPreempt``, no ``BorrowingOverPreemption`` preference).  Each
``resource@flavor`` is one (flavor, resource) quota, as upstream; the fair-sharing shares add
flavors up per resource, as :func:`fairalloc.models.kueue.dominant_resource_share` does.  Also
out: admission checks, topology-aware scheduling, admission fair sharing, namespace selectors,
LimitRanges, already evicted candidates (a running job here is never half evicted).  Nodes, when
the cycle gives them, are not read: Kueue admits against quota and leaves placement to the
kube-scheduler, so an :class:`~fairalloc.engines.online.Admit` names no nodes.

**Next cycle** (what a simulator does with the decisions).  Upstream, a victim gives its quota back
only when the eviction completes, and its preemptor waits in its queue
(``RequeueReasonPendingPreemption``); the upstream tests stop there.  A simulator applies the
:class:`~fairalloc.engines.online.Preempt` decisions at once (the victims wait again in their
queues, :meth:`~fairalloc.engines.online.ClusterState.after`), and in the next cycle the preemptor
(at its queue's head: by priority and time, and sticky under BestEffortFIFO) finds the room and is
admitted, unless a higher entry of that cycle took it first.  A victim is back in its queue's
cycle only at a later instant (the next arrival or end): upstream it holds its quota until its
pods are gone and is requeued then, and with the gates at their defaults it may win the fair
sharing tournament against its waiting preemptor (``fair_sharing_iterator.go``,
``entryComparer.less``: the lower share with the workload admitted; the preemptor first only
under ``PrioritizePreemptorWorkloads``, alpha, off), be admitted, and be preempted again, a
thrash upstream knows (kubernetes-sigs/kueue issue 13662).  Evicted at once and requeued at
once, the simulator would repeat that at one instant for ever; a victim held out until the clock
moves on lets its preemptor be admitted first and bounds an instant's cycles (each job preempted
at most once in it).

Settings (the case's ``settings:``; every key optional)::

    fair_sharing: false                 # Kueue's Configuration.fairSharing set (enabled)
    preemption_strategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]   # the default
    cluster_queues:                     # per ClusterQueue (a leaf queue of the case)
      cq-a:
        queueing_strategy: BestEffortFIFO          # or StrictFIFO
        preemption:
          within_cluster_queue: Never              # LowerPriority, LowerOrNewerEqualPriority
          reclaim_within_cohort: Never             # LowerPriority, Any
          borrow_within_cohort: {policy: Never, max_priority_threshold: null}   # policy LowerPriority

The API's validation forbids ``borrow_within_cohort`` beside ``reclaim_within_cohort: Never``; the
scheduler reads the pair as given (``TestSchedule``'s "multiple preemptions skip preemption when
shared limited resource" sets it), and so does this module.

Worked example (``TestPreemption`` "preempt lowest priority"): ClusterQueue ``standalone`` (6 CPU,
no cohort, ``within_cluster_queue: LowerPriority``) runs low (priority -1), mid (0) and high (1),
2 CPU each; an incoming workload of priority 1 and 2 CPU does not fit (6 used).  Its candidates,
lower priority first, are low and mid (high is not lower); removing low leaves room for 2: low is
preempted, and fill-back has nothing to put back.  The incoming workload waits for low to go.

Belongs here: Kueue's online rules.  Imports: ``fairalloc.core``, ``fairalloc.engines`` and
:mod:`fairalloc.models.kueue_tree`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairalloc.core.errors import CaseError, unknown
from fairalloc.core.tolerances import FIT
from fairalloc.engines.online import Admit, ClusterState, Decision, Job, Preempt, check_settings, fits
from fairalloc.models.kueue_tree import DRS, _Tree, _tree_of, compare_drs

QUEUEING = ("BestEffortFIFO", "StrictFIFO")
WITHIN = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM = ("Never", "LowerPriority", "Any")
BORROW = ("Never", "LowerPriority")
STRATEGIES = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
SETTINGS = {
    "fair_sharing": "Configuration.fairSharing enabled (bool)",
    "preemption_strategies": "fairSharing.preemptionStrategies (one, or both in Kueue's order)",
    "cluster_queues": "per ClusterQueue: queueing_strategy, preemption",
}
QUEUE_SETTINGS = {"queueing_strategy": QUEUEING, "preemption": None}
PREEMPTION_SETTINGS = {"within_cluster_queue": WITHIN, "reclaim_within_cohort": RECLAIM, "borrow_within_cohort": None}
BORROW_SETTINGS = {"policy": BORROW, "max_priority_threshold": None}

# preemption reasons (``kueue.InClusterQueueReason`` and its siblings)
IN_CQ, RECLAMATION, WHILE_BORROWING, FAIR_SHARING = (
    "InClusterQueue",
    "InCohortReclamation",
    "InCohortReclaimWhileBorrowing",
    "InCohortFairSharing",
)


@dataclass(frozen=True)
class Policies:
    """A ClusterQueue's ``preemption`` and ``queueingStrategy`` (the API's defaults)."""

    within: str = "Never"
    reclaim: str = "Never"
    borrow: str = "Never"
    threshold: float | None = None
    queueing: str = "BestEffortFIFO"


def _choice(value: Any, allowed: tuple[str, ...], where: str) -> str:
    if value not in allowed:
        raise CaseError(f"{where}: {unknown('value', value, allowed)}")
    return str(value)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise CaseError(f"{where}: must be a mapping (got {type(value).__name__})")
    return value


def read_policies(spec: Any, where: str) -> Policies:
    """A ClusterQueue's settings (``settings.cluster_queues.<name>``), each value checked."""
    spec = _mapping(spec, where)
    check_settings(spec, QUEUE_SETTINGS, where)
    queueing = _choice(spec.get("queueing_strategy", "BestEffortFIFO"), QUEUEING, f"{where}.queueing_strategy")
    pre = _mapping(spec.get("preemption", {}), f"{where}.preemption")
    check_settings(pre, PREEMPTION_SETTINGS, f"{where}.preemption")
    within = _choice(pre.get("within_cluster_queue", "Never"), WITHIN, f"{where}.preemption.within_cluster_queue")
    reclaim = _choice(pre.get("reclaim_within_cohort", "Never"), RECLAIM, f"{where}.preemption.reclaim_within_cohort")
    bwc_where = f"{where}.preemption.borrow_within_cohort"
    bwc = _mapping(pre.get("borrow_within_cohort", {}), bwc_where)
    check_settings(bwc, BORROW_SETTINGS, bwc_where)
    borrow = _choice(bwc.get("policy", "Never"), BORROW, f"{bwc_where}.policy")
    threshold = bwc.get("max_priority_threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise CaseError(f"{bwc_where}.max_priority_threshold: must be a number (got {threshold!r})")
    return Policies(within, reclaim, borrow, None if threshold is None else float(threshold), queueing)


def satisfies(policy: str, preemptor: Job, candidate: Job) -> bool:
    """``SatisfiesPreemptionPolicy`` (``preemption/common/preemption_policy.go``): the preemptor's
    priority against the candidate's, and for equal priorities their queue-order timestamps (the
    creation times)."""
    p, q = preemptor.priority, candidate.priority
    if policy == "LowerPriority":
        return p > q
    if policy == "LowerOrNewerEqualPriority":
        return p > q or (p == q and preemptor.submit < candidate.submit)
    return policy == "Any"


@dataclass
class Target:
    """A victim: running job ``name`` of ClusterQueue ``cq``, preempted for ``reason``; ``lca``: the
    cohort whose subtree it was found in (classic reclaim), ``variant`` its preemption variant."""

    name: str
    cq: str
    reason: str
    lca: str | None = None
    variant: str = ""


@dataclass
class Entry:
    """A nominated head: its usage, mode (``fit``, ``preempt``, ``nofit``), borrowing level, targets."""

    job: Job
    usage: np.ndarray
    mode: str = "nofit"
    borrow: int = 0
    targets: list[Target] = field(default_factory=list)
    why: str = ""


class Held:
    """The running jobs of each ClusterQueue, their usage and each queue's sum, kept from one cycle
    to the next and changed by what changed: a queue that lost a job sums its jobs again, in their
    order, and a job admitted since is added at the end; the sums are then those of adding the
    running jobs one by one in admission order, as :class:`Snapshot` does (the same numbers).  A
    :class:`Running` is frozen, so a job is the same while its object is; a state whose new jobs
    are not the last ones admitted is read from scratch."""

    def __init__(self, tree: _Tree) -> None:
        self.tree = tree
        self.leaf = np.zeros((len(tree.leaves), tree.m))
        self.jobs: dict[str, list[str]] = {q: [] for q in tree.leaves}
        self.usage: dict[str, np.ndarray] = {}
        self.masks: dict[str, int] = {}  # the resources each job uses (:func:`mask`)
        self.seen: dict[int, tuple[str, Any]] = {}  # id of a Running held -> (its name, it)
        self.order: list[int] = []  # the ids, in admission order
        self.cohorts = {v: u for v, u in tree.usage(self.leaf).items() if v not in tree.index}
        self.lost: set[str] = set()  # by the last update: the queues a running job left
        self.changed: set[str] = set()  # and the queues whose running jobs changed at all

    def update(self, state: ClusterState) -> Held:
        items = list(state.running.items())
        ids = [id(run) for _, run in items]
        now = set(ids)
        gone = set(self.seen).difference(now)
        kept = [i for i in self.order if i not in gone] if gone else self.order
        if ids[: len(kept)] != kept:  # not the jobs held, in their order, then the new ones
            left = {run.job.queue for key, (_, run) in self.seen.items() if key in gone}
            self.__init__(self.tree)  # type: ignore[misc]
            kept, gone = [], set()
            self.lost = left
        else:
            self.lost = set()
        lost = set()
        for key in gone:
            name, run = self.seen.pop(key)
            del self.usage[name], self.masks[name]
            lost.add(run.job.queue)
        for q in lost:
            i = self.tree.index[q]
            self.jobs[q] = [n for n in self.jobs[q] if n in self.usage]
            self.leaf[i] = 0.0
            for n in self.jobs[q]:
                self.leaf[i] += self.usage[n]
        changed = set(lost)
        for name, run in items[len(kept) :]:
            self.seen[id(run)] = (name, run)
            self.usage[name] = run.usage
            self.masks[name] = mask(run.usage)
            self.leaf[self.tree.index[run.job.queue]] += self.usage[name]
            self.jobs[run.job.queue].append(name)
            changed.add(run.job.queue)
        self.order = ids
        self._cohorts_above(changed)
        self.lost |= lost
        self.changed = changed | self.lost
        return self

    def _cohorts_above(self, queues: set[str]) -> None:
        """The usage of the cohorts above ``queues`` summed again, children first, as
        :meth:`~fairalloc.models.kueue_tree._Tree.usage` sums it."""
        tree = self.tree
        above = {v for q in queues for v in path_to_root(tree, q)}
        if not above:
            return
        U = self.usage_of(self.leaf)
        for v, _, _ in tree._usage_plan():  # children first
            if v in above:
                U[v] = self.cohorts[v] = cohort_usage(tree, v, U, self.leaf)

    def usage_of(self, leaf: np.ndarray) -> dict[str, np.ndarray]:
        """Every node's usage, the ClusterQueues' rows of ``leaf`` (views) and the cohorts' held."""
        return {**self.cohorts, **dict(zip(self.tree.leaves, leaf))}


class Snapshot:
    """The cycle's quota usage (``schdcache.Snapshot``): every ClusterQueue's admitted usage, the
    jobs each holds, changed as the cycle adds usage and simulates removals.

    ``held``: the running jobs per ClusterQueue kept from one cycle to the next (:class:`Held`),
    else summed here.  ``incremental``: a change of a ClusterQueue's usage marks the cohorts above
    it, and a read sums the marked ones again, children first, each as the whole tree's pass sums
    it (the same sums in the same order, so the same numbers), instead of the whole tree; a
    removal simulated and undone between two reads of a cohort costs no sum (the searches for
    victims do that for every candidate, and read the queues, not the cohorts, in between)."""

    def __init__(self, tree: _Tree, state: ClusterState, held: Held | None = None, incremental: bool = False) -> None:
        self.tree, self.state, self.incremental = tree, state, incremental
        self.out: set[str] = set()  # running jobs simulated as removed
        self._usage: dict[str, np.ndarray] | None = None
        self._stale: set[str] = set()  # (incremental) cohorts whose usage is to be summed again
        self._shares: dict[str, DRS] = {}  # the nodes' shares read since their usage last changed
        self.masks: dict[str, int]
        if held is not None:
            self.leaf, self.jobs, self.held, self.masks = held.leaf.copy(), held.jobs, held.usage, held.masks
            self._usage = held.usage_of(self.leaf)
            return
        self.leaf = np.zeros((len(tree.leaves), tree.m))
        self.jobs = {q: [] for q in tree.leaves}
        self.held = {}
        self.masks = {}
        for name, run in state.running.items():
            self.held[name] = run.usage
            self.masks[name] = mask(run.usage)
            self.leaf[tree.index[run.job.queue]] += self.held[name]
            self.jobs[run.job.queue].append(name)

    # -- usage -----------------------------------------------------------------------------------
    def usage(self) -> dict[str, np.ndarray]:
        if self._usage is None:
            self._usage = self.tree.usage(self.leaf)
        elif self._stale:
            tree, U = self.tree, self._usage
            for v in sorted(self._stale, key=lambda c: -len(tree.ancestors(c))):  # children first
                U[v] = cohort_usage(tree, v, U, self.leaf)
            self._stale.clear()
        return self._usage

    def of(self, v: str) -> np.ndarray:
        """Node ``v``'s usage (the cohorts summed again only when ``v`` is one that changed)."""
        if self._usage is None or v in self._stale:
            return self.usage()[v]
        return self._usage[v]

    def add(self, cq: str, amount: np.ndarray) -> None:
        self.leaf[self.tree.index[cq]] += amount  # the usage's leaf rows are views of these
        if self._usage is None:
            return
        if not self.incremental:
            self._usage = None
            self._shares.clear()
            return
        above = self.tree.ancestors(cq)
        self._stale.update(above)
        shares = self._shares
        for v in (cq, *above):
            shares.pop(v, None)

    def remove(self, name: str) -> None:
        self.out.add(name)
        self.add(self.state.running[name].job.queue, -self.held[name])

    def restore(self, name: str) -> None:
        self.out.discard(name)
        self.add(self.state.running[name].job.queue, self.held[name])

    def workloads(self, cq: str) -> list[str]:
        return [w for w in self.jobs[cq] if w not in self.out]

    # -- quota (``resource_node.go``, ``clusterqueue_snapshot.go``) --------------------------------
    def available(self, v: str) -> np.ndarray:
        """``Available``: ``max(0, available(v))``, the recursion of ``resource_node.go``."""
        return np.maximum(0.0, self._available(v, self.usage()))

    def _available(self, v: str, U: dict[str, np.ndarray]) -> np.ndarray:
        t, p = self.tree, self.tree.parent[v]
        if p is None:
            return t.quota[v] - U[v]
        local = np.maximum(0.0, t.local[v] - U[v])
        above = self._available(p, U)
        cap = (t.quota[v] - t.local[v]) - np.maximum(0.0, U[v] - t.local[v]) + t.borrowing_limit[v]
        return local + np.minimum(above, cap)

    def borrowing_with(self, v: str, amount: np.ndarray) -> np.ndarray:
        """``BorrowingWith`` per resource: usage plus ``amount`` above the node's quota."""
        return ~(self.of(v) + amount <= self.tree.ceiling(v))

    def within_nominal(self, v: str, need: np.ndarray) -> bool:
        """``IsWithinNominalInResources`` on the resources ``need`` marks."""
        return bool((self.of(v) <= self.tree.ceiling(v))[need].all())

    def local_available(self, v: str) -> np.ndarray:
        return np.maximum(0.0, self.tree.local[v] - self.of(v))

    def height(self, cq: str, val: np.ndarray) -> tuple[int, bool]:
        """``FindHeightOfLowestSubtreeThatFits`` over the requested resources (the largest height;
        ``mayReclaimInHierarchy`` when every resource fits below the root)."""
        heights, reclaim = [0], True
        for j in np.flatnonzero(val > 0):
            h, r = self._height(cq, int(j), float(val[j]))
            heights.append(h)
            reclaim = reclaim and r
        return max(heights), reclaim

    def _height(self, cq: str, j: int, val: float) -> tuple[int, bool]:
        t, U = self.tree, self.usage()
        has_parent = t.parent[cq] is not None
        if U[cq][j] + val <= t.ceiling(cq)[j] or not has_parent:
            return 0, has_parent
        remaining = val - max(0.0, t.local[cq][j] - U[cq][j])
        node = t.parent[cq]
        while node is not None:
            if U[node][j] + remaining <= t.ceiling(node)[j]:
                return node_height(t, node), t.parent[node] is not None
            remaining -= max(0.0, t.local[node][j] - U[node][j])
            node = t.parent[node]
        return node_height(t, t.root_of(cq)), False

    def fits_in_quota(self, v: str, request: np.ndarray) -> tuple[bool, np.ndarray]:
        """``QuantitiesFitInQuota``: whether ``request`` fits in ``v``'s subtree quota, and what
        remains of it beyond ``v``'s local quota."""
        asked = request > 0
        fits = bool((self.of(v) + request <= self.tree.ceiling(v))[asked].all())
        return fits, np.where(asked, np.maximum(0.0, request - self.local_available(v)), 0.0)

    def drs(self, v: str) -> DRS:
        share = self._shares.get(v)
        if share is None:
            share = self._shares[v] = self.tree.share_of(v, self.of(v))
        return share


def _le(a: np.ndarray | float, b: np.ndarray | float) -> Any:
    """``a <= b`` up to the rounding of sums of floats (:data:`~fairalloc.core.tolerances.FIT`)."""
    return a <= b + FIT * np.maximum(1.0, np.abs(b))


def mask(amounts: np.ndarray) -> int:
    """The resources of which ``amounts`` are positive (or ``True``), as the bits of an integer."""
    return sum(1 << int(j) for j in np.flatnonzero(amounts > 0))


def cohort_usage(tree: _Tree, v: str, U: Mapping[str, np.ndarray], leaf: np.ndarray) -> np.ndarray:
    """Cohort ``v``'s usage from its children's in ``U`` (whose leaves' rows are ``leaf``'s): the
    sum, in their order, of what each uses above its local quota, as
    :meth:`~fairalloc.models.kueue_tree._Tree.usage` sums it."""
    kids = tree.kids[v]
    if not kids:
        return np.zeros(tree.m)
    rows = tree.kid_rows(v)
    used = leaf[rows] if rows is not None else np.array([U[c] for c in kids])
    above = np.maximum(0.0, used - tree.kid_locals(v))
    return above.cumsum(axis=0)[-1]  # a running sum, row after row: the loop's additions, in its order


def node_height(tree: _Tree, cohort: str) -> int:
    """``getNodeHeight``: 1 for a cohort with children, plus the height of its tallest child cohort."""
    kids = tree.kids.get(cohort, [])
    height = min(len(kids), 1)
    for c in kids:
        if c not in tree.index:
            height = max(height, node_height(tree, c) + 1)
    return height


def path_to_root(tree: _Tree, v: str) -> tuple[str, ...]:
    """``PathParentToRoot``: the ancestors of ``v``, parent first."""
    return tree.ancestors(v)


def subtree_queues(tree: _Tree, v: str) -> list[str]:
    return [u for u in tree.postorder(v) if u in tree.index]


class KueueCycle:
    """Kueue's scheduler online: :meth:`decide` is one ``Scheduler.schedule`` cycle.

    It keeps, across cycles, what Kueue's queues keep: the BestEffortFIFO heads parked as
    inadmissible (with the count of the quota releases in their root cohort when they were parked:
    any release since, a job finishing or evicted, puts them back), each BestEffortFIFO queue's
    preemptor waiting for its
    victims (sticky at the head), and the victims of the current instant (out of their queues
    until the clock moves on: the module docstring's "Next cycle").

    ``fast`` (the default) keeps, also across cycles, what a replay would otherwise compute again
    at every cycle: the tree of the case, the usage of each running job, the cohorts' usage
    changed along one path only (:class:`Snapshot`); ``fast=False`` computes everything anew in
    each cycle, the straightforward form the tests replay against it (the same decisions); and
    each head's nomination, used again while no running job of its root cohort changed (a
    StrictFIFO head that needs preemption and finds no victims is nominated at every cycle, and
    a nomination reads nothing but the head and its root cohort's running jobs and quota)."""

    def __init__(self, settings: Mapping[str, Any], fast: bool = True) -> None:
        check_settings(settings, SETTINGS, "settings")
        fair = settings.get("fair_sharing", False)
        if not isinstance(fair, bool):
            raise CaseError(f"settings.fair_sharing: must be true or false (got {fair!r})")
        strategies = settings.get("preemption_strategies", list(STRATEGIES))
        if not isinstance(strategies, list) or not 1 <= len(strategies) <= 2:
            raise CaseError("settings.preemption_strategies: must be a list of one or two strategies")
        where = "settings.preemption_strategies"
        self.strategies = [_choice(s, STRATEGIES, f"{where}[{k}]") for k, s in enumerate(strategies)]
        if len(self.strategies) == 2 and self.strategies != list(STRATEGIES):  # Kueue's validation
            raise CaseError(f"{where}: {self.strategies} is not a list Kueue accepts (one strategy, or "
                            f"{list(STRATEGIES)} in that order)")  # fmt: skip
        self.fair_sharing = fair
        queues = _mapping(settings.get("cluster_queues", {}), "settings.cluster_queues")
        self.policies = {q: read_policies(spec, f"settings.cluster_queues.{q}") for q, spec in queues.items()}
        self.parked: dict[str, tuple[str, int]] = {}  # a parked head -> (its root cohort, releases then)
        self._parks = 0  # the heads parked so far
        self.again = False  # the last cycle parked a head and decided nothing (the next may decide)
        self.released: dict[str, int] = {}  # per root cohort: the running jobs that left it so far
        self.touched: dict[str, int] = {}  # per root cohort: the changes of its running jobs so far
        self._running: dict[str, tuple[int, str]] = {}  # (fast=False) each running job's id and queue
        self._nominated: dict[str, tuple[int, Entry]] = {}  # (fast) each head's entry, and touched then
        self.preemptors: dict[str, str] = {}
        self.evicted: dict[str, float] = {}  # a victim -> the instant it was preempted at
        self.fast = fast
        self._tree: tuple[Any, _Tree] | None = None  # (the case it is of, the tree)
        self._held: Held | None = None

    def wake(self, state: ClusterState) -> float | None:
        return None  # Kueue decides when something arrives or ends, never on a timer

    def policy(self, cq: str) -> Policies:
        return self.policies.get(cq, Policies())

    def decide(self, state: ClusterState) -> list[Decision]:
        """One ``Scheduler.schedule``: heads, nominations, entries processed in order.  ``again``
        after a cycle that decided nothing but parked a head: upstream the next cycle runs as soon
        as a queue has a head (``Manager.Heads`` waits for one), and a parked BestEffortFIFO head
        leaves the next workload at its queue's head (each such cycle parks a job not parked
        before, so they end)."""
        parks = self._parks
        decisions = self._decide(state)
        self.again = not decisions and self._parks > parks
        return decisions

    def _decide(self, state: ClusterState) -> list[Decision]:
        tree = self.tree(state)
        if self.fast:
            if self._held is None or self._held.tree is not tree:
                self._held = Held(tree)
            held = self._held.update(state)
            snap = Snapshot(tree, state, held, incremental=True)
            lost, changed = held.lost, held.changed
        else:
            snap = Snapshot(tree, state)
            lost, changed = self._changes(state)
        for queues, counts in ((lost, self.released), (changed, self.touched)):
            for root in {tree.root_of(q) for q in queues}:
                counts[root] = counts.get(root, 0) + 1
        before, self._nominated = self._nominated, {}
        entries = [self.nominated(snap, head, before) for head in self.heads(state, tree)]
        return _Cycle(self, snap, entries).run()

    def _changes(self, state: ClusterState) -> tuple[set[str], set[str]]:
        """The queues a running job left since the last cycle, and those whose running jobs changed
        (a job preempted and admitted again is another :class:`Running`): :class:`Held`'s
        ``lost`` and ``changed``, from a pass over every running job."""
        now = {n: (id(run), run.job.queue) for n, run in state.running.items()}
        before, self._running = self._running, now
        lost = {q for n, (i, q) in before.items() if now.get(n, (None, q))[0] != i}
        return lost, lost | {q for n, (i, q) in now.items() if before.get(n, (None, q))[0] != i}

    def nominated(self, snap: Snapshot, job: Job, before: dict[str, tuple[int, Entry]]) -> Entry:
        """:meth:`nominate`; with ``fast``, the head's entry of the last cycle if no running job of its
        root cohort changed since (a copy: the cycle's lists are its own)."""
        if not self.fast:
            return self.nominate(snap, job)
        count = self.touched.get(snap.tree.root_of(job.queue), 0)
        kept = before.get(job.name)
        if kept is None or kept[0] != count:
            kept = (count, self.nominate(snap, job))
        self._nominated[job.name] = kept
        return dataclasses.replace(kept[1], targets=list(kept[1].targets))

    def tree(self, state: ClusterState) -> _Tree:
        """The case's quota tree, its settings' queues checked (once per case when ``fast``)."""
        if self.fast and self._tree is not None and self._tree[0] is state.case:
            return self._tree[1]
        tree = _tree_of(state.case)
        for q in self.policies:
            if q not in tree.index:
                raise CaseError(f"settings.cluster_queues.{q}: {unknown('queue', q, tree.leaves)}")
        self._tree = (state.case, tree)
        return tree

    # -- heads (``Manager.heads``, ``cluster_queue.go``) ------------------------------------------
    def heads(self, state: ClusterState, tree: _Tree) -> list[Job]:
        """One head per ClusterQueue, in the case's order of the queues."""
        for name, (root, count) in list(self.parked.items()):
            if name not in state.pending or self.released.get(root, 0) != count:
                del self.parked[name]  # a job of its root cohort finished or was evicted
        if self.evicted:  # evictions complete when the clock moves on
            self.evicted = {n: t for n, t in self.evicted.items() if t == state.now}
        queues: dict[str, list[Job]] = {}
        for job in state.pending.values():  # once, not a pass over the jobs per queue
            if job.name not in self.parked and job.name not in self.evicted:
                queues.setdefault(job.queue, []).append(job)
        out = []
        for cq in tree.leaves:
            sticky = self.preemptors.get(cq)
            waiting = queues.get(cq, [])
            if not waiting:
                continue
            order = {j.name: k for k, j in enumerate(waiting)}
            head = min(waiting, key=lambda j: (j.name != sticky, -j.priority, j.submit, order[j.name]))
            out.append(head)
        return out

    # -- nominate (``getInitialAssignments``, ``fitsResourceQuota``) -------------------------------
    def nominate(self, snap: Snapshot, job: Job) -> Entry:
        cq, usage = job.queue, job.total()
        entry = Entry(job, usage)
        asked = usage > 0
        if (~_le(usage, snap.tree.potential[cq]))[asked].any():
            entry.why = "the request exceeds the most the ClusterQueue could ever get (ExceedsMaxQuota)"
            return entry
        avail = snap.available(cq)
        need = asked & ~_le(usage, avail)
        borrow, reclaim_below = snap.height(cq, usage)
        if not need.any():
            entry.mode, entry.borrow = "fit", borrow
            return entry
        pol = self.policy(cq)
        may_borrow = pol.borrow != "Never" or (self.fair_sharing and pol.reclaim != "Never")
        nominal = usage <= snap.tree.ceiling(cq)
        if not (nominal[need].all() or reclaim_below or may_borrow):
            entry.why = "insufficient unused quota, and no preemption while borrowing"
            return entry
        entry.mode = "preempt"
        entry.targets = self.targets(snap, job, need)
        for t in entry.targets:
            snap.remove(t.name)
        entry.borrow = snap.height(cq, usage)[0]
        for t in entry.targets:
            snap.restore(t.name)
        entry.why = "preempting" if entry.targets else "needs preemption, no candidates"
        return entry

    def targets(self, snap: Snapshot, job: Job, need: np.ndarray) -> list[Target]:
        if self.fair_sharing:
            return _Fair(self, snap, job, need).targets()
        return _Classic(self, snap, job, need).targets()


def workload_fits(snap: Snapshot, cq: str, usage: np.ndarray, borrowing: bool) -> bool:
    """``workloadFits``: within ``Available`` on every requested resource, and without borrowing
    when ``borrowing`` is false."""
    asked = usage > 0
    if not borrowing and snap.borrowing_with(cq, usage)[asked].any():
        return False
    return bool(_le(usage, snap.available(cq))[asked].all())


def fill_back(snap: Snapshot, targets: list[Target], fits) -> list[Target]:
    """``fillBackWorkloads``: put the victims back, the last one removed excepted, newest first,
    keeping out only those without which the workload no longer fits."""
    targets = list(targets)
    for i in range(len(targets) - 2, -1, -1):
        snap.restore(targets[i].name)
        if fits():
            targets[i] = targets[-1]
            targets.pop()
        else:
            snap.remove(targets[i].name)
    return targets


class _Search:
    """What both preemption searches share: the preemptor, its queue, the resources needing
    preemption, and ``CandidatesOrdering``."""

    def __init__(self, owner: KueueCycle, snap: Snapshot, job: Job, need: np.ndarray) -> None:
        self.owner, self.snap, self.job, self.need = owner, snap, job, need
        self.needed = mask(need)
        self.cq, self.usage = job.queue, job.total()
        self.pol = owner.policy(self.cq)

    def uses(self, name: str) -> bool:
        return bool(self.snap.masks[name] & self.needed)  # its usage, not multiplied out again

    def order_key(self, name: str) -> tuple:
        """``CandidatesOrdering``: other ClusterQueues first, lower priority, most recently reserved."""
        run = self.snap.state.running[name]
        return (run.job.queue == self.cq, run.job.priority, -run.start, name)

    def allowed(self, name: str, policy: str) -> bool:
        return self.uses(name) and satisfies(policy, self.job, self.snap.state.running[name].job)

    def _restore(self, targets: list[Target]) -> None:
        for t in targets:
            self.snap.restore(t.name)


class _Classic(_Search):
    """``classicalPreemptions``: candidates of the own queue and, walking up the cohort tree, of
    queues above their quota; removed in order until the workload fits; then fill-back."""

    def targets(self) -> list[Target]:
        same = self.same_queue()
        hier, prio = self.hierarchical()
        for group in (same, hier, prio):
            group.sort(key=lambda t: self.order_key(t.name))
        candidates = hier + prio + same
        forbidden = self.pol.borrow == "Never"
        if not hier and not prio or (forbidden and not self.under_nominal()):
            attempts = [True]
        elif forbidden and not hier:
            attempts = [False, True]
        else:
            attempts = [True, False]
        for borrowing in attempts:
            taken: list[Target] = []
            for cand in candidates:
                if not self.valid(cand, borrowing):
                    continue
                self.snap.remove(cand.name)
                taken.append(cand)
                if workload_fits(self.snap, self.cq, self.usage, borrowing):
                    kept = fill_back(
                        self.snap, taken, lambda b=borrowing: workload_fits(self.snap, self.cq, self.usage, b)
                    )
                    self._restore(kept)
                    return kept
            self._restore(taken)
        return []

    def under_nominal(self) -> bool:
        """``queueUnderNominalInResourcesNeedingPreemption``: usage strictly below nominal."""
        U, quota = self.snap.usage()[self.cq], self.snap.tree.quota[self.cq]
        return bool((quota > U)[self.need].all())

    def same_queue(self) -> list[Target]:
        if self.pol.within == "Never":
            return []
        return [self.classify(w, self.cq, None, False) for w in self.snap.workloads(self.cq) if self.classifiable(w)]

    def classifiable(self, name: str) -> bool:
        policy = self.pol.within if self.snap.state.running[name].job.queue == self.cq else self.pol.reclaim
        return self.allowed(name, policy)

    def classify(self, name: str, cq: str, lca: str | None, advantage: bool) -> Target:
        """``classifyPreemptionVariant`` (the candidate satisfies its policy)."""
        if cq == self.cq:
            return Target(name, cq, IN_CQ, lca, "WithinCQ")
        if advantage:
            return Target(name, cq, RECLAMATION, lca, "HierarchicalReclaim")
        q = self.snap.state.running[name].job.priority
        above = q >= self.job.priority or (self.pol.threshold is not None and q > self.pol.threshold)
        if self.pol.borrow == "Never" or above:
            return Target(name, cq, RECLAMATION, lca, "ReclaimWithoutBorrowing")
        return Target(name, cq, WHILE_BORROWING, lca, "ReclaimWhileBorrowing")

    def hierarchical(self) -> tuple[list[Target], list[Target]]:
        """``collectCandidatesForHierarchicalReclaim``: (with hierarchical advantage, without)."""
        tree = self.snap.tree
        hier: list[Target] = []
        prio: list[Target] = []
        if tree.parent[self.cq] is None or self.pol.reclaim == "Never":
            return hier, prio
        advantage, remaining = self.snap.fits_in_quota(self.cq, self.usage)
        previous = None
        for node in path_to_root(tree, self.cq):
            self.collect(node, node, previous, advantage, hier if advantage else prio)
            fits, remaining = self.snap.fits_in_quota(node, remaining)
            advantage, previous = advantage or fits, node
        return hier, prio

    def collect(self, cohort: str, root: str, skip: str | None, advantage: bool, out: list[Target]) -> None:
        """``collectCandidatesInSubtree``: queues above their quota below ``cohort``."""
        tree = self.snap.tree
        kids = tree.kids[cohort]
        for c in kids:
            if c not in tree.index and c != skip and not self.snap.within_nominal(c, self.need):
                self.collect(c, root, skip, advantage, out)
        for c in kids:
            if c in tree.index and c != self.cq and not self.snap.within_nominal(c, self.need):
                out += [self.classify(w, c, root, advantage) for w in self.snap.workloads(c) if self.classifiable(w)]

    def valid(self, cand: Target, borrowing: bool) -> bool:
        """``candidateIsValid``: another queue's candidate while it (and its cohorts below the
        common ancestor) stay above quota."""
        if cand.cq == self.cq:
            return True
        if borrowing and cand.variant == "ReclaimWithoutBorrowing":
            return False
        if self.snap.within_nominal(cand.cq, self.need):
            return False
        for node in path_to_root(self.snap.tree, cand.cq):
            if node == cand.lca:
                break
            if self.snap.within_nominal(node, self.need):
                return False
        return True


class _Fair(_Search):
    """``fairPreemptions``: own-queue candidates and those of borrowing queues of the root cohort,
    taken per target queue of the fair-sharing ordering as the strategies allow."""

    def targets(self) -> list[Target]:
        candidates = self.candidates()
        if not candidates:
            return []
        candidates.sort(key=self.order_key)
        snap = self.snap
        snap.add(self.cq, self.usage)
        fits, taken, retry = self.first(candidates, self.owner.strategies[0])
        if not fits and len(self.owner.strategies) > 1:
            fits, taken = self.second(retry, taken)
        snap.add(self.cq, -self.usage)
        if not fits:
            self._restore(taken)
            return []
        kept = fill_back(snap, taken, lambda: workload_fits(snap, self.cq, self.usage, True))
        self._restore(kept)
        return kept

    def candidates(self) -> list[str]:
        """``findCandidates``."""
        tree, snap = self.snap.tree, self.snap
        out = []
        if self.pol.within != "Never":
            out += [w for w in snap.workloads(self.cq) if self.allowed(w, self.pol.within)]
        if tree.parent[self.cq] is not None and self.pol.reclaim != "Never":
            for cq in subtree_queues(tree, tree.root_of(self.cq)):
                if cq != self.cq and snap.borrowing_with(cq, np.zeros(tree.m))[self.need].any():
                    out += [w for w in snap.workloads(cq) if self.allowed(w, self.pol.reclaim)]
        return out

    def fits(self) -> bool:
        """``workloadFitsForFairSharing``: the incoming usage taken out again for the check."""
        self.snap.add(self.cq, -self.usage)
        ok = workload_fits(self.snap, self.cq, self.usage, True)
        self.snap.add(self.cq, self.usage)
        return ok

    def take(self, name: str, reason: str, taken: list[Target]) -> bool:
        self.snap.remove(name)
        taken.append(Target(name, self.snap.state.running[name].job.queue, reason))
        return self.fits()

    def first(self, candidates: list[str], strategy: str) -> tuple[bool, list[Target], list[str]]:
        """``runFirstFsStrategy``."""
        order = _TargetOrder(self, candidates)
        taken: list[Target] = []
        retry: list[str] = []
        within = not self.snap.borrowing_with(self.cq, np.zeros(self.snap.tree.m))[self.need].any()
        for target in order:
            if target == self.cq:
                if self.take(order.pop(target), IN_CQ, taken):
                    return True, taken, []
                continue
            if within:  # FairSharingPreemptWithinNominal
                if self.take(order.pop(target), RECLAMATION, taken):
                    return True, taken, []
                continue
            mine, theirs = self.almost_lcas(target)
            new_share, old_share = self.share(mine), self.share(theirs)
            if np.isinf(new_share[0].precise) and not np.isinf(old_share[0].precise):
                while order.has(target):
                    retry.append(order.pop(target))
                continue
            while order.has(target):
                name = order.pop(target)
                self.snap.remove(name)
                after = self.share(theirs)
                self.snap.restore(name)
                if passes(strategy, new_share, old_share, after):
                    if self.take(name, FAIR_SHARING, taken):
                        return True, taken, []
                    break
                retry.append(name)
        return False, taken, retry

    def second(self, retry: list[str], taken: list[Target]) -> tuple[bool, list[Target]]:
        """``runSecondFsStrategy``: ``LessThanInitialShare`` once per target queue."""
        order = _TargetOrder(self, retry)
        for target in order:
            mine, theirs = self.almost_lcas(target)
            passed = passes("LessThanInitialShare", self.share(mine), self.share(theirs), None)
            name = order.pop(target)
            if passed and self.take(name, FAIR_SHARING, taken):
                return True, taken
            order.drop(target)
        return False, taken

    def share(self, v: str) -> tuple[DRS, float]:
        return self.snap.drs(v), self.snap.tree.weight[v]

    def almost_lcas(self, target: str) -> tuple[str, str]:
        """``getAlmostLCAs``: the children of the least common ancestor on the preemptor's side and
        on the target's."""
        tree = self.snap.tree
        mine = [self.cq, *path_to_root(tree, self.cq)]
        theirs = [target, *path_to_root(tree, target)]
        common = set(mine) & set(theirs)
        return (
            next(v for v in mine if tree.parent[v] in common),
            next(v for v in theirs if tree.parent[v] in common),
        )


def passes(strategy: str, preemptor: tuple[DRS, float], old: tuple[DRS, float], new: tuple[DRS, float] | None) -> bool:
    """``fairsharing/strategy.go``: S2-a ``LessThanOrEqualToFinalShare`` (the preemptor's share
    after admission at most the target's after the removal), S2-b ``LessThanInitialShare`` (below
    the target's before it)."""
    if strategy == "LessThanOrEqualToFinalShare":
        assert new is not None
        return compare_drs(preemptor[0], new[0], preemptor[1], new[1]) <= 0
    return compare_drs(preemptor[0], old[0], preemptor[1], old[1]) < 0


class _TargetOrder:
    """``TargetClusterQueueOrdering``: from the root, into the child with the highest share, the
    queues not borrowing (the preemptor's excepted) or without candidates pruned."""

    def __init__(self, search: _Fair, candidates: list[str]) -> None:
        self.search, self.snap, self.tree = search, search.snap, search.snap.tree
        self.queue: dict[str, list[str]] = {}
        for name in candidates:
            self.queue.setdefault(self.snap.state.running[name].job.queue, []).append(name)
        self.ancestors = set(path_to_root(self.tree, search.cq))
        self.pruned: set[str] = set()

    def has(self, cq: str) -> bool:
        return bool(self.queue.get(cq))

    def pop(self, cq: str) -> str:
        return self.queue[cq].pop(0)

    def drop(self, cq: str) -> None:
        self.pruned.add(cq)

    def __iter__(self) -> Iterator[str]:
        cq = self.search.cq
        if self.tree.parent[cq] is None:
            while cq not in self.pruned and self.has(cq):
                yield cq
            return
        root = self.tree.root_of(cq)
        while root not in self.pruned:
            target = self.next_target(root)
            if target is not None:
                yield target

    def _higher(self, a: tuple[DRS, float], b: tuple[DRS, float] | None) -> int:
        if b is None:
            return 1
        return compare_drs(a[0], b[0], a[1], b[1])

    def next_target(self, cohort: str) -> str | None:
        tree, snap = self.tree, self.snap
        best_cq: str | None = None
        best_cq_drs: tuple[DRS, float] | None = None
        for c in tree.kids[cohort]:
            if c not in tree.index or c in self.pruned:
                continue
            drs = (snap.drs(c), tree.weight[c])
            if (not drs[0].borrowing and c != self.search.cq) or not self.has(c):
                self.pruned.add(c)
            elif best_cq is not None and self._higher(drs, best_cq_drs) == 0:
                if self.search.order_key(self.queue[c][0]) < self.search.order_key(self.queue[best_cq][0]):
                    best_cq = c
            elif self._higher(drs, best_cq_drs) == 1:
                best_cq, best_cq_drs = c, drs
        best_cohort: str | None = None
        best_cohort_drs: tuple[DRS, float] | None = None
        for c in tree.kids[cohort]:
            if c in tree.index or c in self.pruned:
                continue
            drs = (snap.drs(c), tree.weight[c])
            if not drs[0].borrowing and c not in self.ancestors:
                self.pruned.add(c)
            elif self._higher(drs, best_cohort_drs) >= 0:
                best_cohort, best_cohort_drs = c, drs
        if best_cohort is None and best_cq is None:
            self.pruned.add(cohort)
            return None
        if best_cohort is not None and best_cohort_drs is not None and self._higher(best_cohort_drs, best_cq_drs) >= 0:
            return self.next_target(best_cohort)
        return best_cq


class _Cycle:
    """The entries of one cycle processed in Kueue's order (``processEntry``)."""

    def __init__(self, owner: KueueCycle, snap: Snapshot, entries: list[Entry]) -> None:
        self.owner, self.snap, self.entries = owner, snap, entries
        self.victims: dict[str, Target] = {}
        self.decisions: list[Decision] = []
        self.room: np.ndarray | None = None  # the capacity free for this cycle's admissions

    def run(self) -> list[Decision]:
        pending = list(self.entries)
        while pending:
            entry = self.pop_fair(pending) if self.owner.fair_sharing else self.pop_classic(pending)
            self.process(entry)
        return self.decisions

    def pop_classic(self, pending: list[Entry]) -> Entry:
        """``makeClassicalIterator``: lower borrowing level, higher priority, older."""
        entry = min(pending, key=lambda e: (e.borrow, -e.job.priority, e.job.submit))
        pending.remove(entry)
        return entry

    def pop_fair(self, pending: list[Entry]) -> Entry:
        """``fairSharingIterator.pop``: a queue without a cohort directly, else the tournament of
        the first remaining queue's root cohort, shares computed with each entry admitted."""
        tree = self.snap.tree
        first = pending[0]
        if tree.parent[first.job.queue] is None:
            pending.remove(first)
            return first
        root = tree.root_of(first.job.queue)
        by_cq = {e.job.queue: e for e in pending if tree.root_of(e.job.queue) == root}
        keys = {e.job.queue: self.tournament_keys(e) for e in by_cq.values()}
        winner = self.tournament(root, by_cq, keys)
        assert winner is not None
        pending.remove(winner)
        return winner

    def tournament_keys(self, e: Entry) -> dict[str, tuple[bool, DRS, float]]:
        """``computeDRS``: per ancestor cohort, the share (and borrowing on the workload's resources)
        of the child on the entry's path, the entry's usage added."""
        tree, snap = self.snap.tree, self.snap
        snap.add(e.job.queue, e.usage)
        U = snap.usage()
        asked = e.usage > 0
        out = {}
        child = e.job.queue
        for node in path_to_root(tree, child):
            borrowing = bool((~(U[child] <= tree.ceiling(child)))[asked].any())
            out[node] = (borrowing, tree.drs(child, U), tree.weight[child])
            child = node
        snap.add(e.job.queue, -e.usage)
        return out

    def tournament(self, cohort: str, by_cq: dict[str, Entry], keys: dict) -> Entry | None:
        """``runTournament``: child cohorts' winners, then child queues' entries; ``entryComparer.less``."""
        tree = self.snap.tree
        candidates = [w for c in tree.kids[cohort] if c not in tree.index if (w := self.tournament(c, by_cq, keys))]
        candidates += [by_cq[c] for c in tree.kids[cohort] if c in by_cq]
        if not candidates:
            return None

        def less(a: Entry, b: Entry) -> bool:
            ab, ad, aw = keys[a.job.queue][cohort]
            bb, bd, bw = keys[b.job.queue][cohort]
            if ab != bb:
                return not ab
            if (c := compare_drs(ad, bd, aw, bw)) != 0:
                return c < 0
            if a.job.priority != b.job.priority:
                return a.job.priority > b.job.priority
            return a.job.submit < b.job.submit

        best = candidates[0]
        for current in candidates[1:]:
            if less(current, best):
                best = current
        return best

    def fits(self, entry: Entry) -> bool:
        """``fits``: against the snapshot with every victim of the cycle and the entry's removed."""
        out = [n for n in {**self.victims, **{t.name: t for t in entry.targets}} if n not in self.snap.out]
        for name in out:
            self.snap.remove(name)
        ok = bool(_le(entry.usage, self.snap.available(entry.job.queue))[entry.usage > 0].all())
        for name in out:
            self.snap.restore(name)
        return ok

    def process(self, entry: Entry, recomputed: bool = False) -> None:
        owner, cq = self.owner, entry.job.queue
        if entry.mode == "nofit":
            return self.fail(entry, park=True)
        if entry.mode == "preempt" and not entry.targets:
            self.reserve(entry)
            return self.fail(entry, park=True)
        overlap = any(t.name in self.victims for t in entry.targets)
        if overlap and not recomputed:  # RecomputeAssignmentUponPreemptionTargetsOverlap
            for name in self.victims:
                self.snap.remove(name)
            again = owner.nominate(self.snap, entry.job)
            for name in self.victims:
                self.snap.restore(name)
            if again.mode == "fit":  # DeferredFit: quota reserved, the workload waits for the victims
                self.snap.add(cq, again.usage)
                self.wait_for_victims(entry)
                return
            return self.process(again, recomputed=True)
        if overlap or not self.fits(entry):
            return  # skipped: requeued at once (FailedAfterNomination), not parked
        self.victims |= {t.name: t for t in entry.targets}
        self.snap.add(cq, entry.usage)
        if entry.targets:
            self.wait_for_victims(entry)
            self.decisions += [Preempt(t.name, entry.job.name, t.reason) for t in entry.targets]
            self.owner.evicted.update((t.name, self.snap.state.now) for t in entry.targets)
            return None
        if not self.runs(entry):
            return None  # its quota stays reserved for this cycle, as upstream's would
        if owner.preemptors.get(cq) == entry.job.name:
            del owner.preemptors[cq]
        self.decisions.append(Admit(entry.job.name, why=f"fits at borrowing level {entry.borrow}"))
        return None

    def runs(self, entry: Entry) -> bool:
        """Whether the cluster has room for the workload beside those admitted in this cycle.
        Kueue admits by quota and leaves the pods to the kube-scheduler; where the case's quotas
        add up to more than its capacity, pods that find no room pend, holding their quota.  The
        simulator runs what it admits, so such a workload is not admitted: it waits at its
        queue's head (not parked) until the capacity is there (docs/online.md)."""
        if self.room is None:
            self.room = self.snap.state.free()
        if not fits(entry.usage, self.room):
            return False
        self.room = self.room - entry.usage
        return True

    def wait_for_victims(self, entry: Entry) -> None:
        """``RequeueReasonPendingPreemption``: under BestEffortFIFO the workload stays its queue's
        head (``preemptorWorkload``) until it is admitted."""
        if self.owner.policy(entry.job.queue).queueing == "BestEffortFIFO":
            self.owner.preemptors[entry.job.queue] = entry.job.name

    def reserve(self, entry: Entry) -> None:
        """``reserveCapacityForUnreclaimablePreempt`` with ``quotaResourcesToReserve``."""
        cq = entry.job.queue
        if self.owner.policy(cq).reclaim == "Any":  # CanAlwaysReclaim
            return
        tree = self.snap.tree
        used, nominal = self.snap.usage()[cq], tree.quota[cq]
        if entry.borrow > 0:
            room = nominal + tree.borrowing_limit[cq] - used
            amount = np.where(np.isinf(room), entry.usage, np.minimum(entry.usage, room))
        else:
            amount = np.maximum(0.0, np.minimum(entry.usage, nominal - used))
        self.snap.add(cq, amount)

    def fail(self, entry: Entry, park: bool) -> None:
        """A head that cannot be admitted: BestEffortFIFO parks it (with its root cohort's count of
        quota releases), StrictFIFO keeps it at the head."""
        cq = entry.job.queue
        if park and self.owner.policy(cq).queueing == "BestEffortFIFO":
            root = self.snap.tree.root_of(cq)
            self.owner.parked[entry.job.name] = (root, self.owner.released.get(root, 0))
            self.owner._parks += 1


__all__ = ["KueueCycle", "Policies", "read_policies", "satisfies"]
