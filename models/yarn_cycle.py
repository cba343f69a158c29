"""Hadoop YARN FairScheduler online: container assignment by the DRF comparator, and preemption of
containers for applications starved past their timeouts (:meth:`YarnFair.online`).

Source read: apache/hadoop (Apache-2.0), ``hadoop-yarn-project/hadoop-yarn/hadoop-yarn-server/
hadoop-yarn-server-resourcemanager/src/main/java/org/apache/hadoop/yarn/server/resourcemanager/
scheduler/fair/``:

* ``FairScheduler.java`` at 6e74039a1a0fa7334946c8f15ce5cbcc9bbe17db: ``update`` (fair shares,
  then, if ``shouldAttemptPreemption`` -- preemption on and the cluster's most used resource above
  ``preemption.cluster-utilization-threshold`` -- ``FSLeafQueue.updateStarvedApps`` for every
  leaf); ``attemptScheduling`` (first the containers freed by preemption to the application that
  preempted them, ``assignPreemptedContainers``, then ``root.assignContainer`` again and again).
* ``FSParentQueue.java`` at 03a55131e163dc6929f0b76aac892668ad9ca538 and ``FSLeafQueue.java`` at
  6e953eb6a3dfcb8da19470e98ffcf1d43bf1887c, ``assignContainer``: children (a leaf: its
  applications with pending demand, ``fetchAppsWithDemand``) sorted by the policy's comparator,
  the node offered to each in turn, the first that takes a container wins; a queue takes nothing
  beyond its maxShare on its path (``FSQueue.fitsInMaxShare``, 4c4f28c9e7f76762346d990b043c6b77d3ac627a).
* ``policies/DominantResourceFairnessPolicy.java`` at 0951726233270fe1f30a303305a2f6f354a93d14,
  ``DominantResourceFairnessComparator.compare``: a schedulable using less of its dominant resource
  than its minShare of it is *needy* and goes first; two needy ones by ``usage / minShare`` read in
  dominant order, two others by their weighted shares of the cluster sorted dominant first
  (lexicographically); ties by start time, then name.
* ``FSAppAttempt.java`` (the newer form, 51,791 characters): ``fairShareStarvation`` (``fairDemand =
  min(fairShare * fairSharePreemptionThreshold, demand)``; starved while ``usage`` is below it by the
  policy's calculator, ``isUsageBelowShare``: DRF compares the dominant shares; ``lastTimeAtFairShare``
  reset while not starved; starvation ``fairDemand - usage`` once starved for
  ``fairSharePreemptionTimeout``); ``getStarvedResourceRequests`` (per request ``floor(starvation /
  capability)`` containers by the *scheduler's* calculator, memory only); ``canContainerBePreempted``
  (the owner's queue allows preemption and the owner's usage after losing the container, and those
  already chosen, is not below its fair share).
* ``FSLeafQueue.java`` (6e953eb6): ``updateStarvedApps``, ``updateStarvedAppsFairshare`` (applications
  with demand in comparator order, starved ones added until the first that is not),
  ``minShareStarvation`` (``min(minShare, demand) - usage`` once starved for
  ``minSharePreemptionTimeout``), ``updateStarvedAppsMinshare`` (that minus the fair-share
  starvation handed out in the same order; upstream quirk kept: an application whose pending demand
  exceeds what is left gets ``pendingDemand - left``, not ``left``).  Each application's fair share is
  its leaf's split among the leaf's applications (weight 1, ``recomputeShares``).
* ``FSPreemptionThread.java`` at 049279bb66b036b4767fe6a0283a6f334ac91440: ``identifyContainersToPreempt``
  (per container needed, the nodes in turn, keeping the set with fewest AM containers, stopping at a
  set with none), ``identifyContainersToPreemptOnNode`` (the node's containers, non-AM first, not
  already chosen; add each that may be preempted until the request fits the node's room).
* ``FSQueue.java`` (4c4f28c9): ``fairSharePreemptionTimeout`` and ``minSharePreemptionTimeout``
  default to never, ``fairSharePreemptionThreshold`` to 0.5, each inherited from the parent when
  unset; ``allowPreemptionFrom: false`` holds for the whole subtree.

**Here.** A job is an application's request: ``pods`` containers of ``request`` each; the setting
``applications`` groups jobs into one application (left out: a job is its own application), so a
running container that can be preempted alone is a running job of one pod.  A preempted running job
loses all its pods at once.  Fair shares are the model's own arithmetic
(:func:`~fairalloc.models.yarn_fair.yarn_fair_shares`, :func:`~fairalloc.models.yarn_fair.yarn_compute_shares`),
with every leaf that holds an application active.  The starvation clocks are the policy's memory
across cycles; a clock first seen starts at the application's (queue's) earliest waiting job's
``since``.  One cycle: assignment, then the preemption pass (with the containers it frees handed to
the starved application at once: the test's node updates), then assignment again.

``FSPreemptionThread.run`` (049279bb): after a pass the application is told ``preemptionTriggered``
and ``FSLeafQueue.fetchAppsWithDemand(false)`` leaves it out of the starved ones until
``waitTimeBeforeKill + 4 heartbeats + waitTimeBeforeNextStarvationCheck`` (``delayBeforeNextStarvationCheck``,
29 s by default): without it a replay with grouped applications could preempt and readmit the same
containers at one instant for ever (issue 37).  Here, not upstream (no gangs there): a gang is
asked for only when its starvation buys at least its fewest pods.

Not modelled: locality, reservations, the kill delay itself (a victim is preempted at once; the delay
counts in the pause only), continuous scheduling's ``allocDelay``, ``maxAMShare``, ``assignMultiple``
limits, size-based weights, the ``fair`` and ``fifo`` policies (the comparator here is DRF's at every
queue).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from fairalloc.core.errors import CaseError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues, queues_of
from fairalloc.core.tolerances import FIT
from fairalloc.engines.online import Admit, ClusterState, Decision, Job, Preempt, Running, check_settings, fits

#: sets of active leaves whose fair shares are kept (a replay visits few; the bound caps memory)
MEMO = 4096
#: ``FSQueue``: an unset timeout never expires
NEVER = math.inf
#: per queue (or parent queue), as the allocation file names them; ``None``: the parent's
QUEUE_SETTINGS = {
    "fairSharePreemptionTimeout": None,
    "minSharePreemptionTimeout": None,
    "fairSharePreemptionThreshold": None,
    "allowPreemptionFrom": True,
}
#: the scheduler's own, with YARN's defaults
SETTINGS: dict[str, Any] = {
    "preemption": False,  # yarn.scheduler.fair.preemption
    "utilizationThreshold": 0.8,  # yarn.scheduler.fair.preemption.cluster-utilization-threshold
    "defaultFairSharePreemptionTimeout": NEVER,  # seconds
    "defaultMinSharePreemptionTimeout": NEVER,
    "defaultFairSharePreemptionThreshold": 0.5,
    "applications": {},  # job -> application
    "amContainers": [],  # running jobs that are AM containers
    "queues": {},  # queue -> QUEUE_SETTINGS
    "waitTimeBeforeKill": 15.0,  # yarn.scheduler.fair.waitTimeBeforeKill (15000 ms), seconds
    "waitTimeBeforeNextStarvationCheck": 10.0,  # yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck (10000 ms)
    "heartbeatInterval": 1.0,  # yarn.resourcemanager.nodemanagers.heartbeat-interval-ms (1000 ms)
}
#: ``FSPreemptionThread``'s ``allocDelay`` without continuous scheduling: this many node heartbeats
ALLOC_HEARTBEATS = 4


@dataclass(frozen=True)
class QueueRules:
    """One queue's preemption settings with inheritance resolved."""

    fair_timeout: float
    min_timeout: float
    threshold: float
    preemptable: bool


def _number(value: object, where: str, low: float, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise CaseError(f"{where}: expected a number from {low:g} to {high:g} (got {value!r})")
    return float(value)


def _flag(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise CaseError(f"{where}: expected true or false (got {value!r})")
    return value


def queue_rules(settings: Mapping[str, Any], q: Queues) -> dict[str, QueueRules]:
    """Every queue's rules: its own setting, else its parent's, else the default
    (``FSQueue.updatePreemptionVariables``); not preemptable below a queue that is not."""
    per = settings.get("queues", {})
    nodes = [*q.groups, *q.leaf_names]
    for name in per:
        check_settings({name: 0}, dict.fromkeys(nodes), "settings.queues")
    top = QueueRules(
        _number(
            settings.get("defaultFairSharePreemptionTimeout", NEVER), "settings.defaultFairSharePreemptionTimeout", 0
        ),
        _number(
            settings.get("defaultMinSharePreemptionTimeout", NEVER), "settings.defaultMinSharePreemptionTimeout", 0
        ),
        _number(
            settings.get("defaultFairSharePreemptionThreshold", 0.5),
            "settings.defaultFairSharePreemptionThreshold",
            0,
            1,
        ),
        True,
    )
    out: dict[str, QueueRules] = {}

    def resolve(node: str) -> QueueRules:
        if node not in out:
            up = top if q.parent[node] is None else resolve(str(q.parent[node]))
            own, where = per.get(node, {}), f"settings.queues.{node}"
            out[node] = QueueRules(
                _number(
                    own.get("fairSharePreemptionTimeout", up.fair_timeout), f"{where}.fairSharePreemptionTimeout", 0
                ),
                _number(own.get("minSharePreemptionTimeout", up.min_timeout), f"{where}.minSharePreemptionTimeout", 0),
                _number(
                    own.get("fairSharePreemptionThreshold", up.threshold), f"{where}.fairSharePreemptionThreshold", 0, 1
                ),
                up.preemptable and _flag(own.get("allowPreemptionFrom", True), f"{where}.allowPreemptionFrom"),
            )
        return out[node]

    for node in nodes:
        resolve(node)
    return out


# -- applications and their shares ------------------------------------------------------------
@dataclass
class App:
    """An application: its jobs running (containers) and waiting (requests), in the state's order."""

    name: str
    queue: str
    m: int  # resources
    running: list[Running] = field(default_factory=list)
    waiting: list[Job] = field(default_factory=list)
    since: float = math.inf  # when its earliest waiting job entered the queue
    start: float = math.inf  # its earliest submit time (``getStartTime``)

    @functools.cached_property
    def usage(self) -> np.ndarray:
        """What its running jobs hold (read again and again in a cycle; its jobs are all in by then)."""
        return np.sum([r.usage for r in self.running], axis=0) if self.running else np.zeros(self.m)

    @functools.cached_property
    def pending(self) -> np.ndarray:
        """What its waiting jobs ask for."""
        return np.sum([j.total() for j in self.waiting], axis=0) if self.waiting else np.zeros(self.m)


def applications(state: ClusterState, grouping: Mapping[str, str]) -> dict[str, App]:
    """The state's applications (``grouping``: job -> application), each in one queue: those with a
    running job first, in the order of their first one, then the others (the order the leaf sums of
    :func:`_min_starvation` add them in)."""
    apps: dict[str, App] = {}
    m, since = len(state.case.resources), state.since
    jobs = [(r.job, r) for r in state.running.values()] + [(j, None) for j in state.pending.values()]
    for job, run in jobs:
        name = grouping.get(job.name, job.name)
        app = apps.get(name)
        if app is None:
            app = apps[name] = App(name, job.queue, m)
        if app.queue != job.queue:
            raise CaseError(
                f"settings.applications.{job.name}: application '{name}' is in queue '{app.queue}', "
                f"the job in '{job.queue}'"
            )
        app.start = min(app.start, job.submit)
        if run is not None:
            app.running.append(run)
        else:
            app.waiting.append(job)
            app.since = min(app.since, since.get(job.name, job.submit))
    return apps


def demand_instance(state: ClusterState, rows: Mapping[str, np.ndarray], queues: Queues | None = None) -> Instance:
    """The queue case (or ``queues`` in its place) with each leaf's ``request`` replaced by ``rows``
    (per leaf, the amounts its jobs hold and ask for): the instance the policies' arithmetic reads
    (a leaf with a positive row is active, the others ask for nothing)."""
    case = state.case
    demand = np.array([rows.get(u, np.zeros(len(case.resources))) for u in case.users], float)
    return Instance(
        case.capacity,
        demand,
        users=case.users,
        resources=case.resources,
        max_tasks=(demand > 0).any(axis=1).astype(float),
        queues=case.queues if queues is None else queues,
        validate=False,
    )


@dataclass(frozen=True)
class Arithmetic:
    """The fair-share arithmetic of :mod:`fairalloc.models.yarn_fair`, handed in by
    :meth:`YarnFair.online` (so that this module does not import it back): every queue's share of an
    instance, and one leaf's share of one resource split among ``k`` applications of weight 1."""

    queues: Callable[[Instance], Mapping[str, np.ndarray]]
    split: Callable[[int, int], list[int]]


@dataclass(frozen=True)
class Facts:
    """What a cycle reads of a queue tree again and again, read once per tree: each queue's
    guarantee (0 where none is given), the cap ``fitsInMaxShare`` checks (``max(maxResources,
    minResources)``), a group's leaves, and a leaf's path with itself last."""

    q: Queues
    guarantee: dict[str, np.ndarray]
    cap: dict[str, np.ndarray]
    leaves: dict[str, frozenset[str]]
    up: dict[str, list[str]]


#: the trees whose :class:`Facts` are kept (a replay reads one; a flat paper case is a new tree per call)
_FACTS: dict[int, Facts] = {}


def facts_of(q: Queues) -> Facts:
    hit = _FACTS.get(id(q))
    if hit is None or hit.q is not q:  # an id of a tree since collected is another tree
        if len(_FACTS) >= 64:
            _FACTS.clear()
        nodes = [*q.groups, *q.leaf_names]
        guarantee = {v: np.nan_to_num(np.asarray(q.guarantee[v], float)) for v in nodes}
        cap = {v: np.fmax(np.asarray(q.limit[v], float), guarantee[v]) for v in nodes}
        leaves = {g: frozenset(q.leaves(g)) for g in q.groups}
        hit = _FACTS[id(q)] = Facts(q, guarantee, cap, leaves, {u: [*q.path(u), u] for u in q.leaf_names})
    return hit


@dataclass
class View:
    """What one cycle reads: the applications, every queue's and application's fair share.  What it
    reads of them again and again is kept on it: the leaves' usage, the free room, a queue's usage,
    a leaf's applications in comparator order (a view is of one state and is not changed; the
    state after one more container is :func:`admitted`'s new view)."""

    state: ClusterState
    apps: dict[str, App]
    shares: dict[str, np.ndarray]  # queue or application -> fair share (whole units)
    kept: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def m(self) -> int:
        return len(self.state.resources)

    @functools.cached_property
    def facts(self) -> Facts:
        return facts_of(queues_of(self.state.case))

    @functools.cached_property
    def leaf_usage(self) -> dict[str, np.ndarray]:
        return self.kept.pop("usage", None) or self.state.usage()

    @functools.cached_property
    def free(self) -> np.ndarray:
        """``state.free()`` (read-only: one copy for every search of the view)."""
        free = self.kept.pop("free", None)
        return self.state.free() if free is None else free

    @functools.cached_property
    def rooms(self) -> dict[str, np.ndarray] | None:
        """``state.free_on_nodes()`` (``None`` without nodes; read-only)."""
        if self.state.nodes is None:
            return None
        return self.kept.pop("rooms", None) or self.state.free_on_nodes()

    @functools.cached_property
    def by_leaf(self) -> dict[str, list[App]]:
        """Each leaf's applications in the view's order (read once per leaf and per assignment)."""
        out: dict[str, list[App]] = {}
        for app in self.apps.values():
            out.setdefault(app.queue, []).append(app)
        return out

    @functools.cached_property
    def owner(self) -> dict[str, str]:
        """Each running job's application."""
        return self.kept.pop("owner", None) or {r.job.name: a.name for a in self.apps.values() for r in a.running}

    @functools.cached_property
    def busy(self) -> set[str]:
        """The leaves with a waiting job."""
        return {a.queue for a in self.apps.values() if a.waiting}

    @functools.cached_property
    def held(self) -> dict[str, np.ndarray]:
        """Per queue (group or leaf) read so far, what its leaves hold."""
        return self.kept.pop("held", None) or {}

    @functools.cached_property
    def ordered(self) -> dict[str, list[App]]:
        """Per leaf read so far, its applications with demand in comparator order."""
        return self.kept.pop("ordered", None) or {}

    def usage_of(self, node: str) -> np.ndarray:
        """What ``node``'s leaves hold (a group: their sum, in the tree's order)."""
        if node not in self.held:
            q = self.facts.q
            self.held[node] = (
                sum((self.leaf_usage[u] for u in q.leaves(node)), np.zeros(self.m))
                if q.is_group(node)
                else self.leaf_usage[node]
            )
        return self.held[node]


def by_active_leaves(
    shares: Callable[[Instance], Mapping[str, np.ndarray]],
) -> Callable[[Instance], Mapping[str, np.ndarray]]:
    """``shares`` kept per queue tree, capacity and set of active leaves: the only things the
    instances of :func:`view_of` differ in (each active leaf asks for one unit of everything), so
    the fair shares are computed again only when a leaf gains its first application or loses its
    last, not at every container assigned."""
    return ActiveShares(shares)


class ActiveShares:
    """:func:`by_active_leaves`' memory; :meth:`of` reads it without building the instance first."""

    def __init__(self, shares: Callable[[Instance], Mapping[str, np.ndarray]]) -> None:
        self.shares = shares
        self.memo: dict[tuple[int, bytes, bytes], tuple[object, Mapping[str, np.ndarray]]] = {}

    def __call__(self, inst: Instance) -> Mapping[str, np.ndarray]:
        key = (id(inst.queues), np.asarray(inst.capacity, float).tobytes(), np.asarray(inst.max_tasks).tobytes())
        return self._kept(key, inst.queues, lambda: inst)

    def of(self, state: ClusterState, active: set[str]) -> Mapping[str, np.ndarray]:
        """The shares of :func:`demand_instance` with each leaf in ``active`` asking for one unit."""
        case = state.case
        mask = np.array([u in active for u in case.users], float)
        key = (id(case.queues), np.asarray(case.capacity, float).tobytes(), mask.tobytes())
        m = len(case.resources)
        return self._kept(key, case.queues, lambda: demand_instance(state, {u: np.ones(m) for u in active}))

    def _kept(
        self, key: tuple[int, bytes, bytes], queues: object, inst: Callable[[], Instance]
    ) -> Mapping[str, np.ndarray]:
        hit = self.memo.get(key)
        if hit is None or hit[0] is not queues:  # an id of a tree since collected is another tree
            if len(self.memo) >= MEMO:
                self.memo.clear()
            hit = self.memo[key] = (queues, self.shares(inst()))
        return hit[1]


def view_of(state: ClusterState, grouping: Mapping[str, str], arith: Arithmetic) -> View:
    """Fair shares as ``FairScheduler.update`` computes them: a leaf is active when it holds an
    application; each leaf's share split among its applications (weight 1, no minShare)."""
    apps = applications(state, grouping)
    active = {app.queue for app in apps.values()}  # demand does not enter the shares
    if isinstance(arith.queues, ActiveShares):
        shares = dict(arith.queues.of(state, active))
    else:
        m = len(state.resources)
        shares = dict(arith.queues(demand_instance(state, {u: np.ones(m) for u in active})))
    by_leaf: dict[str, list[str]] = {}
    for app in apps.values():
        by_leaf.setdefault(app.queue, []).append(app.name)
    for leaf, names in by_leaf.items():
        for name, share in zip(names, _split_shares(arith.split, len(names), shares[leaf])):
            shares[name] = share
    return View(state, apps, shares)


def _split_shares(split: Callable[[int, int], list[int]], count: int, share: np.ndarray) -> list[np.ndarray]:
    """Each of ``count`` applications' share of a leaf holding ``share`` (read-only arrays, kept per
    count and share: the split is asked again at every view)."""
    key = (split, count, share.tobytes())  # amounts whose whole units are equal split equally, kept apart
    hit = _SPLITS.get(key)
    if hit is None:
        if len(_SPLITS) >= MEMO:
            _SPLITS.clear()
        cols = [split(count, int(s)) for s in share]
        hit = _SPLITS[key] = [np.array([float(col[k]) for col in cols]) for k in range(count)]
        for row in hit:
            row.flags.writeable = False
    return hit


_SPLITS: dict[tuple[object, int, bytes], list[np.ndarray]] = {}


def admitted(view: View, admit: Admit, grouping: Mapping[str, str]) -> View:
    """The view of ``view.state.after([admit])``, built from ``view``: the admitted job's application
    made again, the others, the shares and each other leaf's comparator order kept.  Its sums are
    those the new state gives: a plain state adds its running jobs in order, so the new job's are
    added last to what the view held (a replay's state keeps its own sums: read again)."""
    state = view.state.after([admit])
    run = state.running[admit.job]
    job, name = run.job, grouping.get(admit.job, admit.job)
    old = view.apps[name]
    waiting = [j for j in old.waiting if j.name != admit.job]
    app = App(name, old.queue, old.m, [*old.running, run], waiting, start=old.start)
    app.since = min((state.since.get(j.name, j.submit) for j in waiting), default=math.inf)
    apps = dict(view.apps)
    apps[name] = app
    if not old.running:  # its first container: it now comes after every application holding one
        apps = {k: a for k, a in apps.items() if view.apps[k].running}
        apps[name] = app
        apps.update((k, a) for k, a in view.apps.items() if k not in apps)
    ordered = {leaf: v for leaf, v in view.ordered.items() if leaf != job.queue}
    kept: dict[str, Any] = {"owner": {**view.owner, admit.job: name}, "ordered": ordered}
    if type(view.state) is ClusterState:
        usage = run.usage
        kept["usage"] = {**view.leaf_usage, job.queue: view.leaf_usage[job.queue] + usage}
        kept["free"] = view.free - usage
        if view.rooms is not None:
            rooms = dict(view.rooms)
            for node in run.nodes:
                rooms[node] = rooms[node] - np.asarray(job.request, float)
            kept["rooms"] = rooms
        up = set(view.facts.up[job.queue])
        kept["held"] = {k: v for k, v in view.held.items() if k not in up}
    return View(state, apps, view.shares, kept)


def plain(view: View) -> View:
    """The view of ``view.state.after([])``: a plain state, whose sums are added from its jobs (a
    replay's state keeps its own, which may differ from them in the last bits)."""
    if type(view.state) is ClusterState:
        return view
    return View(view.state.after([]), view.apps, view.shares, {"owner": view.owner, "ordered": view.ordered})


def dominant(amount: np.ndarray, capacity: np.ndarray) -> float:
    """The largest share of the cluster ``amount`` holds (resources of capacity 0 left out)."""
    if (capacity > 0).all():  # the same quotients without the masks (read millions of times in a replay)
        return float((amount / capacity).max(initial=0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(capacity > 0, amount / np.where(capacity > 0, capacity, 1.0), 0.0)
    return float(s.max(initial=0.0))


def below(usage: np.ndarray, share: np.ndarray, capacity: np.ndarray) -> bool:
    """``isUsageBelowShare`` under DRF: ``DominantResourceCalculator.compare(..., singleType=true) < 0``."""
    return dominant(usage, capacity) < dominant(share, capacity) - FIT


# -- the DRF comparator ------------------------------------------------------------------------
@dataclass(frozen=True)
class Schedulable:
    """What the comparator reads of a queue or an application."""

    name: str
    usage: np.ndarray
    min_share: np.ndarray
    weight: float
    start: float


def drf_key(s: Schedulable, capacity: np.ndarray) -> tuple[bool, list[float], float, str]:
    """``DominantResourceFairnessComparator.compare`` as a sort key: needy first (its usage of its
    dominant resource below its minShare of it); needy ones by ``usage / minShare``, the others by
    their weighted shares of the cluster, each read in its own dominant order; then start time, name."""
    return _drf_key_floats(s, capacity.tolist()) or _drf_key_numpy(s, capacity)


def _drf_key_numpy(s: Schedulable, capacity: np.ndarray) -> tuple[bool, list[float], float, str]:
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(capacity > 0, s.usage / (np.where(capacity > 0, capacity, 1.0) * s.weight), 0.0)
        ratio = np.where(s.min_share > 0, s.usage / np.where(s.min_share > 0, s.min_share, 1.0), math.inf)
    order = np.argsort(-shares, kind="stable")
    needy = bool(s.usage[order[0]] < s.min_share[order[0]])
    read = ratio if needy else shares
    return not needy, [float(read[j]) for j in order], s.start, s.name


def _drf_key_floats(s: Schedulable, capacity: list[float]) -> tuple[bool, list[float], float, str] | None:
    """:func:`drf_key` in Python floats (the same IEEE quotients, a few resources: numpy's calls cost
    more than the arithmetic); ``None`` where a quotient is not finite (a weight or capacity of 0,
    whose ``nan`` numpy's sort places), for numpy to read."""
    usage, low = s.usage.tolist(), s.min_share.tolist()
    shares = []
    for u, c in zip(usage, capacity):
        if c > 0:
            d = c * s.weight
            if not d > 0 or not math.isfinite(u / d):
                return None
            shares.append(u / d)
        else:
            shares.append(0.0)
    order = sorted(range(len(shares)), key=lambda j: -shares[j])  # stable, as argsort's
    needy = usage[order[0]] < low[order[0]]
    if needy:
        return False, [usage[j] / low[j] if low[j] > 0 else math.inf for j in order], s.start, s.name
    return True, [shares[j] for j in order], s.start, s.name


def sorted_by_drf(items: Iterable[Schedulable], capacity: np.ndarray) -> list[Schedulable]:
    cap = capacity.tolist()
    return sorted(items, key=lambda s: _drf_key_floats(s, cap) or _drf_key_numpy(s, capacity))


def _queue_schedulable(view: View, node: str) -> Schedulable:
    q = view.facts.q
    return Schedulable(node, view.usage_of(node), view.facts.guarantee[node], q.weight[node], 0.0)


def _app_schedulable(view: View, app: App) -> Schedulable:
    return Schedulable(app.name, app.usage, np.zeros(view.m), 1.0, app.start)


def apps_by_drf(view: View, leaf: str, with_demand: bool = True) -> list[App]:
    """A leaf's applications (with pending demand) in comparator order (``fetchAppsWithDemand``)."""
    if with_demand and leaf in view.ordered:
        return view.ordered[leaf]
    if leaf not in view.by_leaf:  # most leaves of a starvation pass hold nothing
        return []
    mine = {a.name: a for a in view.by_leaf.get(leaf, ()) if a.waiting or not with_demand}
    ordered = sorted_by_drf((_app_schedulable(view, a) for a in mine.values()), view.state.capacity)
    out = [mine[s.name] for s in ordered]
    if with_demand:
        view.ordered[leaf] = out
    return out


def leaves_by_drf(view: View, node: str | None = None) -> list[str]:
    """The leaves with waiting jobs in the order ``root.assignContainer`` offers them a node: each
    parent's children sorted by the comparator, depth first."""
    q, busy, leaves = view.facts.q, view.busy, view.facts.leaves
    kids = [c for c in q.children(node) if (c in busy if c not in leaves else not busy.isdisjoint(leaves[c]))]
    out: list[str] = []
    for s in sorted_by_drf((_queue_schedulable(view, c) for c in kids), view.state.capacity):
        out += leaves_by_drf(view, s.name) if s.name in leaves else [s.name]
    return out


# -- placing a job -----------------------------------------------------------------------------
def place(job: Job, room: Mapping[str, np.ndarray] | None, pool: np.ndarray) -> Admit | None:
    """As many of ``job``'s pods as fit, first fit over the nodes in name order (``room``: each
    node's free amounts; ``None``: the pool ``pool``), if at least its fewest; else ``None``."""
    need = np.asarray(job.request, float)
    if room is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(need > 0, np.floor(pool / np.where(need > 0, need, 1.0) + FIT), math.inf)
        pods = int(min(float(fit.min(initial=math.inf)), job.pods))
        return None if pods < job.least else Admit(job.name, None if pods == job.pods else pods)
    free = {k: v.copy() for k, v in room.items()}
    nodes: list[str] = []
    for node in sorted(free):
        while len(nodes) < job.pods and (need <= free[node] + FIT).all():
            free[node] -= need
            nodes.append(node)
    if len(nodes) < job.least:
        return None
    return Admit(job.name, None if len(nodes) == job.pods else len(nodes), tuple(nodes))


def fits_max_share(state: ClusterState, job: Job, pods: int, usage: Mapping[str, np.ndarray] | None = None) -> bool:
    """``FSQueue.fitsInMaxShare`` on the leaf and every queue above it: usage (``state.usage()``
    unless given) plus the containers within ``max(maxResources, minResources)``."""
    view = View(state, {}, {}, {} if usage is None else {"usage": usage})
    return _fits_max_share(view, job, pods)


def _fits_max_share(view: View, job: Job, pods: int) -> bool:
    extra, cap = job.total(pods), view.facts.cap
    return all(fits(view.usage_of(node) + extra, cap[node]) for node in view.facts.up[job.queue])


def assign(state: ClusterState, grouping: Mapping[str, str], arith: Arithmetic, why: str) -> list[Decision]:
    """``attemptScheduling``'s ``root.assignContainer`` until nothing more is taken: the first leaf
    in comparator order whose first application (in comparator order) can place a waiting job."""
    return assigned(view_of(state, grouping, arith), grouping, why)[0]


def assigned(view: View, grouping: Mapping[str, str], why: str) -> tuple[list[Decision], View]:
    """:func:`assign` from ``view``, and the view of the state its decisions lead to."""
    decisions: list[Decision] = []
    while True:
        admit = _first_placeable(view)
        if admit is None:
            return decisions, view
        admit = replace(admit, why=why)
        decisions.append(admit)
        view = admitted(view, admit, grouping)


def _first_placeable(view: View) -> Admit | None:
    room, free = view.rooms, view.free
    for leaf in leaves_by_drf(view):
        for app in apps_by_drf(view, leaf):
            for job in app.waiting:
                admit = place(job, room, free)
                pods = job.pods if admit is None or admit.pods is None else admit.pods
                if admit is not None and _fits_max_share(view, job, pods):
                    return admit
    return None


# -- starvation --------------------------------------------------------------------------------
@dataclass
class Starvation:
    """What the update thread found: each starved application's starvation (fair plus min share),
    in the order they were found, and the clocks as they now stand."""

    starved: dict[str, np.ndarray]
    at_fair: dict[str, float]
    at_min: dict[str, float]
    #: when the timeouts of the applications (queues) starved but not yet for long enough run out
    due: list[float] = field(default_factory=list)


def starvation(
    view: View,
    rules: Mapping[str, QueueRules],
    at_fair: Mapping[str, float],
    at_min: Mapping[str, float],
    paused: Mapping[str, float] | None = None,
) -> Starvation:
    """``FSLeafQueue.updateStarvedApps`` for every leaf (the clocks read and moved on a copy).  An
    application in ``paused`` (application -> its ``nextStarvationCheck``) until that time is left
    out of the starved ones (``fetchAppsWithDemand(false)`` keeps only those that
    ``shouldCheckForStarvation``), its clock untouched; its leaf's demand still counts it."""
    out = Starvation({}, dict(at_fair), dict(at_min))
    now, paused = view.state.now, paused or {}
    for leaf in view.facts.q.leaf_names:
        every = apps_by_drf(view, leaf)
        if not every:  # nothing asked for: not starved, its min-share clock at now (min(minShare, usage) - usage <= 0)
            out.at_min[leaf] = now
            continue
        apps = [a for a in every if paused.get(a.name, -math.inf) <= now]
        out.due += [paused[a.name] for a in every if paused.get(a.name, -math.inf) > now]
        fair = _fair_starvation(view, apps, rules[leaf], out)
        left = np.maximum(
            _min_starvation(view, leaf, every, rules[leaf], out) - sum(fair.values(), np.zeros(view.m)), 0.0
        )
        for app in apps:  # updateStarvedAppsMinshare
            if not (left > 0).any():
                break
            own = np.maximum(app.pending - fair.get(app.name, 0.0), 0.0)
            if dominant(own, view.state.capacity) > dominant(left, view.state.capacity):
                own, left = np.maximum(own - left, 0.0), np.zeros(view.m)  # upstream: pendingDemand - left
            else:
                left = np.maximum(left - own, 0.0)
            out.starved[app.name] = fair.get(app.name, np.zeros(view.m)) + own
        for name, amount in fair.items():
            out.starved.setdefault(name, amount)
    return out


def _fair_starvation(view: View, apps: list[App], rules: QueueRules, out: Starvation) -> dict[str, np.ndarray]:
    """``updateStarvedAppsFairshare``: each application's ``fairShareStarvation`` in comparator order,
    until the first that is not starved."""
    now, cap = view.state.now, view.state.capacity
    found: dict[str, np.ndarray] = {}
    for app in apps:
        usage = app.usage
        fair_demand = np.minimum(view.shares[app.name] * rules.threshold, usage + app.pending)
        starved = below(usage, fair_demand, cap)
        if not starved:
            out.at_fair[app.name] = now
        since = out.at_fair.setdefault(app.name, app.since)
        if starved and now - since < rules.fair_timeout:
            out.due.append(since + rules.fair_timeout)
        if not starved or now - since < rules.fair_timeout:
            break
        found[app.name] = np.maximum(fair_demand - usage, 0.0)
    return found


def _min_starvation(view: View, leaf: str, apps: list[App], rules: QueueRules, out: Starvation) -> np.ndarray:
    """``FSLeafQueue.minShareStarvation``: ``min(minShare, demand) - usage`` once starved for the timeout."""
    now = view.state.now
    usage = sum((a.usage for a in view.by_leaf.get(leaf, ())), np.zeros(view.m))
    demand = usage + sum((a.pending for a in apps), np.zeros(view.m))
    need = np.maximum(np.minimum(view.facts.guarantee[leaf], demand) - usage, 0.0)
    if not (need > FIT).any():
        out.at_min[leaf] = now
    since = out.at_min.setdefault(leaf, min((a.since for a in apps), default=now))
    if (need > FIT).any() and now - since < rules.min_timeout:
        out.due.append(since + rules.min_timeout)
    if not (need > FIT).any() or now - since < rules.min_timeout:
        return np.zeros(view.m)
    return need


# -- the preemption thread ---------------------------------------------------------------------
@dataclass
class Marks:
    """What the preemption pass has chosen so far: victims, and per application the amount."""

    victims: dict[str, str] = field(default_factory=dict)  # victim job -> the job it is preempted for
    taken: dict[str, np.ndarray] = field(default_factory=dict)  # application -> chosen so far
    given: list[tuple[str, str]] = field(default_factory=list)  # (waiting job, node) the room went to
    marked: dict[str, np.ndarray] = field(default_factory=dict)  # node ("": the pool) -> chosen there


def starved_requests(app: App, amount: np.ndarray, memory: int) -> list[tuple[Job, int]]:
    """``getStarvedResourceRequests``: per waiting job, ``floor(starvation / capability)`` containers by
    the scheduler's calculator (memory only), at most its pods, until the starvation is covered.
    Here, not upstream (whose requests are single containers): a job is asked for only if that is
    at least its fewest pods, as fewer cannot run (the room freed for them went back to the
    containers preempted, again and again)."""
    out: list[tuple[Job, int]] = []
    pending = amount.copy()
    for job in app.waiting:
        if not (pending > FIT).any():
            break
        need = job.request[memory]
        fit = job.pods if need <= 0 else int(math.floor(pending[memory] / need + FIT))
        count = min(fit, job.pods)
        if count == 0 or count < job.least:
            continue
        out.append((job, count))
        pending = np.maximum(pending - job.total(count), 0.0)
    return out


def preempt(
    view: View, starved: Mapping[str, np.ndarray], rules: Mapping[str, QueueRules], am: set[str], memory: int
) -> list[Decision]:
    """``FSPreemptionThread``: for each starved application, containers identified for each container
    it needs, then the freed room given to it (``assignPreemptedContainers``)."""
    marks = Marks()
    for name, amount in starved.items():
        for job, count in starved_requests(view.apps[name], amount, memory):
            for _ in range(count):
                _one_container(view, job, rules, am, marks)
    decisions: list[Decision] = [
        Preempt(v, by, "FSPreemptionThread: over its fair share, for a starved app") for v, by in marks.victims.items()
    ]
    return decisions + _given(view.state.after(decisions), marks)


def _one_container(view: View, job: Job, rules: Mapping[str, QueueRules], am: set[str], marks: Marks) -> None:
    """``identifyContainersToPreempt`` for one container: over the nodes, the set with fewest AMs;
    each node's room is what is free less what is already chosen there (``potential = unallocated -
    getTotalReserved()``, which counts the containers marked for preemption on the node), so the
    room one container was found in is not counted again for the next."""
    state = view.state
    free = state.free_on_nodes() if state.nodes is not None else {"": state.free()}
    rooms = {n: np.maximum(room - marks.marked.get(n, 0.0), 0.0) for n, room in free.items()}
    best: tuple[int, str, list[Running]] | None = None
    for node in sorted(rooms):
        found = _on_node(view, job, node, rooms[node], rules, am, marks, best[0] if best else None)
        if found is not None and (best is None or found[0] < best[0]):
            best = (found[0], node, found[1])
            if best[0] == 0:
                break
    if best is None:
        return
    _, node, victims = best
    if not victims:  # the room was there already: nothing to preempt, nothing reserved
        return
    for run in victims:
        marks.victims[run.job.name] = job.name
        owner = view.owner[run.job.name]
        marks.taken[owner] = marks.taken.get(owner, np.zeros(view.m)) + run.usage
        marks.marked[node] = marks.marked.get(node, np.zeros(view.m)) + _held_on(run, node)
    marks.given.append((job.name, node))


def _held_on(run: Running, node: str) -> np.ndarray:
    """What ``run`` holds on ``node`` (``""``: the pool, all of it)."""
    return np.asarray(run.job.request, float) * (run.nodes.count(node) if node else run.pods)


def _on_node(
    view: View,
    job: Job,
    node: str,
    room: np.ndarray,
    rules: Mapping[str, QueueRules],
    am: set[str],
    marks: Marks,
    most: int | None,
) -> tuple[int, list[Running]] | None:
    """``identifyContainersToPreemptOnNode``: the node's containers (non-AM first) not yet chosen, each
    added if its application may lose it, until the request fits; ``None`` if it never does (or
    takes more AM containers than the best set so far)."""
    state, need = view.state, np.asarray(job.request, float)
    here = [r for r in state.running.values() if (not node or node in r.nodes) and r.job.name not in marks.victims]
    here.sort(key=lambda r: r.job.name in am)  # stable: admission order, AMs last
    potential, chosen, ams, taken = room.copy(), [], 0, dict(marks.taken)
    for run in here:
        owner = view.apps[view.owner[run.job.name]]
        if _may_lose(view, owner, run, taken, rules):
            ams += run.job.name in am
            if most is not None and ams >= most:
                return None
            chosen.append(run)
            taken[owner.name] = taken.get(owner.name, np.zeros(view.m)) + run.usage
            potential = potential + _held_on(run, node)
        if (need <= potential + FIT).all():  # checked after every container, as upstream
            return ams, chosen
    return None


def _may_lose(
    view: View, owner: App, run: Running, taken: Mapping[str, np.ndarray], rules: Mapping[str, QueueRules]
) -> bool:
    """``canContainerBePreempted``: its queue allows preemption and its application stays at or above
    its fair share without it and what is already chosen from it."""
    if not rules[owner.queue].preemptable:
        return False
    after = owner.usage - taken.get(owner.name, 0.0) - run.usage
    return not below(after, view.shares[owner.name], view.state.capacity)


def _given(state: ClusterState, marks: Marks) -> list[Decision]:
    """``assignPreemptedContainers``: the room the preemption freed (``state``: after it), to the jobs
    it was freed for in turn, on the nodes it was freed on, as many of a job's identified
    containers as fit there (at least its fewest pods).  Each container's victims were found
    against the same free room, so a later job may find less than it was promised: upstream's
    ``app.assignContainer`` then takes what fits and stops."""
    nodes: dict[str, list[str]] = {}
    for name, node in marks.given:
        nodes.setdefault(name, []).append(node)
    out: list[Decision] = []
    for name, where in nodes.items():
        waiting = state.pending[name]
        if len(where) < waiting.least:
            continue
        asked = replace(waiting, pods=len(where), min_pods=waiting.least)
        room = state.free_on_nodes() if state.nodes is not None else None
        admit = place(asked, None if room is None else {n: room[n] for n in set(where)}, state.free())
        if admit is not None:
            pods = len(where) if admit.pods is None else admit.pods
            admit = Admit(
                name,
                None if pods == waiting.pods else pods,
                admit.nodes,
                "assignPreemptedContainers: the room preempted for it",
            )
            out.append(admit)
            state = state.after([admit])
    return out


# -- the policy --------------------------------------------------------------------------------
class YarnCycle:
    """YARN's FairScheduler cycle with its starvation clocks (:class:`~fairalloc.engines.online.OnlinePolicy`)."""

    def __init__(self, settings: Mapping[str, Any], arith: Arithmetic) -> None:
        # a leaf's split among k applications of weight 1 depends on (k, share) only: asked again
        # at every container assigned, so kept (a 25-step search each time cost most of a cycle)
        self.arith = Arithmetic(by_active_leaves(arith.queues), functools.lru_cache(maxsize=4096)(arith.split))
        check_settings(settings, SETTINGS, "settings")
        self.settings = {**SETTINGS, **settings}
        self.enabled = _flag(self.settings["preemption"], "settings.preemption")
        self.utilization = _number(self.settings["utilizationThreshold"], "settings.utilizationThreshold", 0, 1)
        self.grouping = _text_map(self.settings["applications"], "settings.applications")
        self.am = set(_text_list(self.settings["amContainers"], "settings.amContainers"))
        per = self.settings["queues"]
        if not isinstance(per, Mapping) or not all(isinstance(v, Mapping) for v in per.values()):
            raise CaseError(f"settings.queues: expected a mapping queue -> its settings (got {per!r})")
        for name, own in per.items():
            check_settings(own, QUEUE_SETTINGS, f"settings.queues.{name}")
        #: ``FSPreemptionThread``'s ``delayBeforeNextStarvationCheck``
        self.pause = (
            _number(self.settings["waitTimeBeforeKill"], "settings.waitTimeBeforeKill", 0)
            + ALLOC_HEARTBEATS * _number(self.settings["heartbeatInterval"], "settings.heartbeatInterval", 0)
            + _number(
                self.settings["waitTimeBeforeNextStarvationCheck"], "settings.waitTimeBeforeNextStarvationCheck", 0
            )
        )
        self._rules: dict[int, dict[str, QueueRules]] = {}
        self.at_fair: dict[str, float] = {}
        self.at_min: dict[str, float] = {}
        #: ``nextStarvationCheck`` of the applications a preemption pass was run for, until it passes
        self.next_check: dict[str, float] = {}
        #: the state a cycle that decided nothing left, and the timeouts its starvation found
        self._settled: tuple[tuple[object, ...], list[float]] | None = None

    def rules(self, q: Queues) -> dict[str, QueueRules]:
        if id(q) not in self._rules:
            self._rules = {id(q): queue_rules(self.settings, q)}
        return self._rules[id(q)]

    def decide(self, state: ClusterState) -> list[Decision]:
        rules = self.rules(queues_of(state.case))
        why = "assignContainer: first in DRF comparator order that fits"
        decisions, view = assigned(view_of(state, self.grouping, self.arith), self.grouping, why)
        view = plain(view)  # the view of state.after(decisions), without building it again
        after = view.state
        self._settled = None
        if self._should_preempt(after, view.free):
            found = starvation(view, rules, self.at_fair, self.at_min, self.next_check)
            self.at_fair, self.at_min = found.at_fair, found.at_min
            more = preempt(view, found.starved, rules, self.am, _memory(state))
            self._triggered(state.now, found)
            # nothing preempted nor given: the state assignment just left, where it places nothing
            decisions += more + (assign(after.after(more), self.grouping, self.arith, why) if more else [])
            if not decisions:
                self._settled = (_seen(after), found.due)
        return decisions

    def wake(self, state: ClusterState) -> float | None:
        if not self._should_preempt(state):
            return None
        if self._settled is not None and self._settled[0] == _seen(state):
            due = self._settled[1]  # the cycle that settled read this state with these clocks
        else:
            view = view_of(state, self.grouping, self.arith)
            due = starvation(view, self.rules(queues_of(state.case)), self.at_fair, self.at_min, self.next_check).due
        return min((t for t in due if state.now < t < math.inf), default=None)

    def _triggered(self, now: float, found: Starvation) -> None:
        """``FSPreemptionThread.run``: every starved application taken, whether or not containers
        were found for it, is told ``preemptionTriggered``: not starved again until the kill delay,
        four heartbeats and ``waitTimeBeforeNextStarvationCheck`` have passed (without it the
        room freed for a starved job that cannot take it would be preempted and readmitted again
        and again at one instant)."""
        self.next_check = {name: t for name, t in self.next_check.items() if t > now}
        for name in found.starved:
            self.next_check[name] = now + self.pause
            found.due.append(now + self.pause)

    def _should_preempt(self, state: ClusterState, free: np.ndarray | None = None) -> bool:
        """``shouldAttemptPreemption``: on, and the most used resource above the threshold (``free``:
        ``state.free()`` when the caller has it)."""
        if not self.enabled:
            return False
        return dominant(state.capacity - (state.free() if free is None else free), state.capacity) > self.utilization


def _seen(state: ClusterState) -> tuple[object, ...]:
    """All that :func:`view_of` and :func:`starvation` read of a state besides the case."""
    return state.now, tuple(state.running.values()), tuple(state.pending.items()), tuple(state.since.items())


def _memory(state: ClusterState) -> int:
    """The resource the scheduler's ``DefaultResourceCalculator`` reads: memory (else the first)."""
    names = [r.lower() for r in state.resources]
    return names.index("memory") if "memory" in names else 0


def _text_map(value: object, where: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise CaseError(f"{where}: expected a mapping job -> application name (got {value!r})")
    return {str(k): v for k, v in value.items()}


def _text_list(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CaseError(f"{where}: expected a list of running job names (got {value!r})")
    return value


__all__ = [
    "Arithmetic",
    "QUEUE_SETTINGS",
    "SETTINGS",
    "YarnCycle",
    "below",
    "dominant",
    "place",
    "queue_rules",
    "view_of",
]
