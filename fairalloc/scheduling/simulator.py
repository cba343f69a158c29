"""A discrete-event cluster simulator comparing multi-resource schedulers on a workload
(:class:`~fairalloc.scheduling.workloads.Workload`).

Model
-----
* Nodes with CPU, memory and any other named resources (``gpu``...), identical or in pools of
  different sizes (:class:`~fairalloc.scheduling.workloads.NodePool`), and, for slot schedulers,
  ``K`` slots. A task launches only where every resource it demands fits (CPU and memory excepted
  under ``:oc``, below); dominant shares are over every resource of the cluster. Events live in one
  ``heapq``: job arrivals, task finishes and job deadlines (``until``). All events of one instant
  are applied, then nodes are *offered* to the scheduler: a node where a task finished, and every
  node on which newly runnable work fits when work appears (a job arrives or a reduce phase is
  unlocked). For each offered node the simulator calls ``scheduler.pick(state, node)`` until it
  returns ``None``; every pick launches one task there (Mesos-style offers, one task at a time).
* A job's tasks run in phase order: its reduce tasks become runnable when all its map tasks have
  finished. Within an owner, jobs are served in submit order (the owner's *next task* is the next
  unstarted task of her earliest job that has one runnable; each owner keeps a queue of her jobs
  with a runnable task, so jobs whose tasks all run cost nothing per offer).
* Closed-loop jobs (``resubmit``) are resubmitted at their finish time while before the horizon;
  ``until`` cancels a job's unstarted tasks at that time. The run stops at ``workload.horizon``
  (tasks still running then are not finished) or when every job is done.

Schedulers (``simulate(workload, name)``: any registered mechanism, by the names ``fairalloc.get`` takes)
----------------------------------------------------------------------------------------------------------
A mechanism's task-offer face (:func:`~fairalloc.engines.offers.offers_of`) decides: its own ``offers()``
where it has one (the schedulers below: each a mechanism of kind ``online`` in ``fairalloc.models``,
except ``drf`` and ``hdrf``, whose static mechanisms give their offers), else a generic adapter (the owner
furthest below her entitlement, :class:`~fairalloc.engines.offers.EntitlementOrder`, or the policy's own
order of queues, :class:`~fairalloc.engines.offers.QueueOrder`). An unknown name is the registry's one line
with the closest known one (:class:`~fairalloc.core.errors.UnknownNameError`).

* ``drf``: offers a node to the owner with the lowest dominant share (over the whole cluster)
  whose next task fits on it; ties to the owner seen first. (As in Mesos / the paper's section 7.)
* ``cpu-fair``: the same with the CPU share instead of the dominant share (max-min on CPU only).
* ``slots:K``: ``K`` slots per node, a task takes one slot whatever its demand; owners in deficit
  order as in the Hadoop Fair Scheduler with equal weights: fewest running tasks first.
* ``capacity:K``: Capacity Scheduler over ``K`` slots per node: queues (= owners) with capacity
  fractions (``workload.queues``, equal by default), the queue with the lowest
  ``running slots / capacity fraction`` first (so an idle queue's capacity is lent out), FIFO
  inside the queue.
* ``mfs``: the MFS paper's two-level DRF (Hadoop Multi-resource Fair Scheduler): owners are
  *groups* of jobs. A job's dominant share is ``max_r (job's allocation of r / cluster's r) /
  job.weight``; a group's is ``max_r (sum of its jobs' shares of r) / group weight``
  (``workload.group_weights``, default 1). For each offered node: groups in increasing dominant
  share (ties: owner seen first), inside a group its jobs with a runnable task in increasing
  dominant share (ties: submit order); the first job whose next task fits the node (every
  resource; shares count every resource too) gets it (a map task; its reduce tasks only once
  its maps are done, as for every scheduler). If no job of a group fits, the next group is
  tried. (The paper's pseudo-code returns null at the first job that does not fit; we go on, as
  the text describes.) Cost: a pass over the groups in order (a sorted list) and a sort of one
  group's jobs per launch.
* ``hdrf``: H-DRF (Bhattacharya et al., SoCC 2013) over a tree of owners declared by their names:
  ``eng/web/alice`` is owner ``alice`` in group ``web`` in group ``eng`` (see
  :func:`fairalloc.models.hdrf.owner_tree`);
  ``workload.group_weights`` gives any node (owner or group path) its weight among its siblings
  (default 1), as for ``mfs``. For each offered node: from the root, into the child with the lowest
  ``dominant share / weight`` of what its whole subtree runs now (cluster-wide shares), skipping
  children with nothing runnable below or no next task below that fits the node, down to an owner,
  whose next task is launched. On a flat tree (no '/' in any owner name, no weights) this is
  exactly ``drf`` (same heap, keys and ties). Cost: one lazy heap per internal node, so heap
  operations along one root-to-owner path per launch (plus the children tried and declined).
  The *fairness error* is still measured against flat DRF, not against H-DRF's own shares.
* ``quincy``: a Quincy-style min-cost-flow scheduler (Isard et al., SOSP 2009; simplified, see
  :class:`fairalloc.models.quincy.Quincy`): each instant's placements from one
  ``networkx.min_cost_flow`` over owners and nodes, with DRF quotas and waiting-time costs; for small
  clusters (pure-Python flow solver).
* ``fifo``: jobs in submit order, strict head of line: only the earliest job with a runnable task
  is considered; if its next task does not fit on the node, nothing is launched there.

**Over-commitment (our choice, documented).** By default every scheduler launches a task only
where it physically fits (free CPU, memory and every other resource), so no node is ever over-committed; slots then
only *restrict* packing. The suffix ``:oc`` (``slots:K:oc``, ``capacity:K:oc``, ``cpu-fair:oc``)
gives the paper's behaviour: the scheduler checks only what it knows (slots; CPU for cpu-fair),
nodes may be over-committed, and a task launched on an over-committed node runs slower by the
factor ``max(1, max_r used_r / capacity_r)`` on that node right after its launch (a crude model
of swapping / CPU contention; tasks already running are not re-timed). Other resources (GPUs)
are never over-committed: a scheduler that picks a task whose demand of one does not fit the node
stops the simulation with an error naming it (:meth:`SimState.fits` checks every resource).

Metrics (:class:`SimulationResult`)
----------------------------------
Jobs completed (by the horizon) and mean job completion time (finish - submit) per job class,
time-averaged utilisation per resource (``cpu``, ``mem``, then the cluster's other resources by
name), samples over time of each resource's utilisation and of every owner's dominant share, and
the *fairness error*: at each sample, the mean over active owners (owners with an unfinished job)
of ``|dominant share - DRF share|``, where the DRF share comes from progressive filling over every
resource (the cluster taken as one pool) over the active owners (each with the demand of the
current phase of her earliest active job, bounded by her remaining tasks); averaged over
samples. The run is deterministic: the same
workload and scheduler give the same result (generators take the seed).

>>> from fairalloc.scheduling.workloads import drf_7_2
>>> r = simulate(drf_7_2(nodes=4, horizon=300, tasks_per_job=20), "drf")
>>> r.completed["small"] > 0 and r.max_overcommit <= 1 + 1e-9
True
"""

from __future__ import annotations

import heapq
import itertools
import time as _time
from dataclasses import dataclass, field
from typing import Any

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt
from fairalloc.engines.filling import drf_shares
from fairalloc.engines.offers import Scheduler, offers_of
from fairalloc.scheduling.workloads import PHASES, Workload, validate

__all__ = [
    "Scheduler",
    "scheduler_of",
    "SimState",
    "SimulationResult",
    "TaskRecord",
    "simulate",
    "drf_shares",
]

EPS = 1e-9
ARRIVE, FINISH, DEADLINE = 0, 1, 2

# --------------------------------------------------------------------------- state


class _JobRun:
    __slots__ = (
        "id",
        "spec",
        "name",
        "owner",
        "u",
        "submit",
        "phase",
        "next",
        "done",
        "finish",
        "cancelled",
        "job_class",
        "cpu",
        "mem",
        "extra",
        "tasks",
    )

    def __init__(self, jid, spec, name, u, submit):
        self.id, self.spec, self.name, self.u, self.submit = jid, spec, name, u, submit
        self.owner, self.job_class = spec.owner, spec.job_class or "all"
        self.phase = self.next = self.done = 0
        self.finish = None
        self.cancelled = False
        self.cpu = self.mem = 0.0  # allocated now (running tasks)
        self.extra: dict[int, float] = {}  # ... of the other resources, by resource index
        self.tasks = spec.phases[0]  # the current phase's tasks (none once the job is done)

    @property
    def running(self) -> int:
        """Its tasks running now: those of the current phase started and not finished (a phase
        starts once the one before has finished; a cancelled job starts no more)."""
        return self.next - self.done

    def runnable(self) -> bool:
        return not self.cancelled and self.next < len(self.tasks)

    def next_task(self):
        return self.tasks[self.next]


def _first_runnable(queue: list) -> _JobRun | None:
    """The earliest job with a runnable task in ``queue`` (a heap of ``(id, phase, job)``, an entry
    per job and phase that became runnable), dropping on the way the entries of jobs that have no
    runnable task any more (started in full, cancelled or done): each entry is dropped once, so
    a job whose tasks all run is never looked at again."""
    while queue:
        job = queue[0][2]
        if not job.cancelled and job.next < len(job.tasks):
            return job
        heapq.heappop(queue)
    return None


class SimState:
    """What schedulers see, over the cluster's resources ``resources`` (``cpu``, ``mem``, then the
    node pools' others) with cluster totals ``total``.

    Per node: its free amounts, ``free_vector(node)``, kept by resource as the lists
    ``free_by_resource[r]`` (so ``free_cpu`` and ``free_mem`` *are* the lists of ``cpu`` and
    ``mem``), its capacities ``capacity_by_resource[r]``, and ``slots_used``. Per owner (index
    ``u`` into ``owners``): ``used_vector(u)`` (allocated now), kept the same way
    (``used_by_resource``, with ``cpu`` and ``mem`` the lists of the first two), and ``running``
    (tasks). ``total_cpu`` / ``total_mem`` are the first two totals; ``node_cpu`` / ``node_mem``
    the largest node's CPU and memory (the node size when all nodes are identical). ``slots_used``,
    ``running`` and each job's ``cpu`` and ``mem`` are kept only for a scheduler that reads them
    (:attr:`Scheduler.reads_tallies`).
    """

    def __init__(self, workload: Workload):
        self.workload = workload
        self.resources = workload.resources
        self.index = {r: k for k, r in enumerate(self.resources)}
        self.total = workload.totals
        self.n_nodes = workload.nodes
        self.node_cpu, self.node_mem = float(workload.node_cpu), float(workload.node_mem)
        self.capacity_by_resource = [
            [float(c) for p in workload.node_pools for c in [p.capacity.get(r, 0.0)] * p.count] for r in self.resources
        ]
        self.free_by_resource = [list(col) for col in self.capacity_by_resource]
        self.free_cpu, self.free_mem = self.free_by_resource[0], self.free_by_resource[1]
        self.total_cpu, self.total_mem = self.total[0], self.total[1]
        self.slots_used = [0] * self.n_nodes
        self.owners = workload.owners
        self.owner_index = {o: i for i, o in enumerate(self.owners)}
        n = len(self.owners)
        self.used_by_resource = [[0.0] * n for _ in self.resources]
        self.cpu, self.mem = self.used_by_resource[0], self.used_by_resource[1]
        self.running = [0] * n
        self.user_jobs: list[dict[int, _JobRun]] = [{} for _ in range(n)]  # active jobs, submit order
        self.jobs: dict[int, _JobRun] = {}  # all active jobs, submit order
        # the jobs that may have a runnable task, per owner and over all (see _first_runnable;
        # the ids are the submit order)
        self.ready: list[list[tuple[int, int, _JobRun]]] = [[] for _ in range(n)]
        self.ready_all: list[tuple[int, int, _JobRun]] = []
        self.time = 0.0
        #: scheduler work so far (offers, plus owners / jobs / heap entries examined): the simulation
        #: stops at :data:`fairalloc.core.limits.MAX_SCHEDULER_STEPS`; built-in schedulers add to it
        self.steps = 0
        if len(self.resources) > 2:  # the two-resource methods stay the plain, fast ones
            self.dominant_share = self._dominant_share_any  # type: ignore[method-assign]
            self.fits = self._fits_any  # type: ignore[method-assign]

    def free_vector(self, node: int) -> tuple[float, ...]:
        """The node's free amount of each of :attr:`resources`."""
        return tuple(col[node] for col in self.free_by_resource)

    def used_vector(self, u: int) -> tuple[float, ...]:
        """What owner ``u`` holds now of each of :attr:`resources`."""
        return tuple(col[u] for col in self.used_by_resource)

    def dominant_share(self, u: int) -> float:
        """The largest of owner ``u``'s shares of the cluster's resources."""
        return max(self.cpu[u] / self.total_cpu, self.mem[u] / self.total_mem)

    def _dominant_share_any(self, u: int) -> float:
        return max(col[u] / t for col, t in zip(self.used_by_resource, self.total))

    def demand(self, task) -> tuple[float, ...]:
        """``task``'s demand of each of :attr:`resources`."""
        more = dict(task.extra)
        return (task.cpu, task.mem, *(more.get(r, 0.0) for r in self.resources[2:]))

    def owner_demand(self, u: int) -> tuple[float, ...] | None:
        """What owner ``u`` asks for per task as the fairness error sees it: a task of the current phase
        of her earliest active job (None: she has no active job)."""
        jobs = self.user_jobs[u]
        if not jobs:
            return None
        first = next(iter(jobs.values()))
        return self.demand(first.spec.phases[first.phase][0])

    def next_job(self, u: int) -> _JobRun | None:
        """The owner's earliest active job with a runnable task (its next task is hers)."""
        return _first_runnable(self.ready[u])

    def first_job(self) -> _JobRun | None:
        """The earliest active job with a runnable task, of any owner."""
        return _first_runnable(self.ready_all)

    def now_runnable(self, job: _JobRun) -> None:
        """``job``'s tasks of its current phase can start (it arrived, or its reduce phase is unlocked)."""
        entry = (job.id, job.phase, job)
        heapq.heappush(self.ready[job.u], entry)
        heapq.heappush(self.ready_all, entry)

    def fits(self, node: int, task, check_cpu: bool = True, check_mem: bool = True) -> bool:
        """Whether ``task`` fits the node's free room in every resource; with ``check_cpu`` /
        ``check_mem`` false, CPU / memory are not checked (they may be over-committed; the other
        resources never are)."""
        return (not check_cpu or task.cpu <= self.free_cpu[node] + EPS) and (
            not check_mem or task.mem <= self.free_mem[node] + EPS
        )

    def _fits_any(self, node: int, task, check_cpu: bool = True, check_mem: bool = True) -> bool:
        return (
            (not check_cpu or task.cpu <= self.free_cpu[node] + EPS)
            and (not check_mem or task.mem <= self.free_mem[node] + EPS)
            and (not task.extra or self.fits_extra(node, task.extra))
        )

    def fits_extra(self, node: int, extra) -> bool:
        """Whether the demands ``extra`` (``((resource, amount), ...)``, a task's other than cpu and
        mem) fit the node's free room."""
        free, index = self.free_by_resource, self.index
        return all(a <= free[index[r]][node] + EPS for r, a in extra)


# --------------------------------------------------------------------------- result


@dataclass
class TaskRecord:
    job: str
    owner: str
    phase: str
    index: int
    node: int
    start: float
    end: float
    cpu: float
    mem: float
    extra: dict = field(default_factory=dict)  # the task's other demands, {resource: amount}


@dataclass
class SimulationResult:
    scheduler: str
    workload: str
    horizon: float | None
    end_time: float
    completed: dict  # job class -> jobs completed by the end
    mean_completion_time: dict  # job class -> mean (finish - submit) of completed jobs
    cancelled: int
    tasks_started: int
    tasks_finished: int
    utilization: dict  # resource -> time-averaged allocated fraction
    fairness_error: float
    max_overcommit: float  # max over nodes and launches of max_r used_r / capacity_r (<= 1: never over-committed)
    samples: dict  # time, cpu, mem, shares: {owner: [...]}
    events: int
    wall_seconds: float
    tasks: list = field(default_factory=list, repr=False)  # TaskRecord, when record_tasks=True

    @property
    def events_per_second(self) -> float:
        return self.events / self.wall_seconds if self.wall_seconds > 0 else float("inf")

    def to_dict(self, *, include_tasks: bool = False) -> dict:
        d = {
            k: getattr(self, k)
            for k in (
                "scheduler",
                "workload",
                "horizon",
                "end_time",
                "completed",
                "mean_completion_time",
                "cancelled",
                "tasks_started",
                "tasks_finished",
                "utilization",
                "fairness_error",
                "max_overcommit",
                "samples",
                "events",
                "wall_seconds",
            )
        }
        d["events_per_second"] = self.events_per_second
        if include_tasks:
            d["tasks"] = [{k: v for k, v in vars(t).items() if k != "extra" or v} for t in self.tasks]
        return d


# --------------------------------------------------------------------------- the simulation


def _estimate_end(w: Workload) -> float:
    if w.horizon is not None:
        return float(w.horizon)
    # one loop over every task (not generators resumed per task): the same products, sums and
    # maxima in the same order as sum() and max() would take them
    cpu: float = 0  # (an int 0, as sum() starts from)
    mem: float = 0
    longest = -float("inf")
    for j in w.jobs:
        span: float = 0
        for p in j.phases:
            top = p[0].duration
            for t in p:
                d = t.duration
                cpu += t.cpu * d
                mem += t.mem * d
                if d > top:
                    top = d
            span += top
        if span + j.submit > longest:
            longest = span + j.submit
    totals, names = w.totals, w.resources
    work = {r: 0.0 for r in names[2:]}
    for t in (t for j in w.jobs for p in j.phases for t in p) if len(names) > 2 else ():
        for r, a in t.extra:
            work[r] += a * t.duration
    others = (work[r] / tot for r, tot in zip(names[2:], totals[2:]))
    return max(longest, cpu / totals[0], mem / totals[1], *others, 1.0)


def _mean(values) -> float:
    return sum(values) / len(values) if values else 0.0


def simulate(
    workload: Workload,
    scheduler="drf",
    *,
    samples: int = 200,
    record_tasks: bool = False,
    progress: bool | None = None,
    max_events: int | None = None,
) -> SimulationResult:
    """Run ``workload`` under ``scheduler`` (a mechanism or its name, :func:`scheduler_of`, or a
    :class:`Scheduler`).

    ``samples``: about how many timeline samples (every ``horizon / samples`` seconds, or the
    estimated makespan's when there is no horizon); ``record_tasks`` keeps a :class:`TaskRecord`
    per started task; ``progress``: progress over simulated time (default: a bar on a terminal,
    a line at most every 10 s when stderr is piped; False: none);
    ``max_events``: stop after that many events (a safety valve).
    """
    sched = scheduler_of(scheduler)
    if not isinstance(workload, Workload):
        raise CaseError(f"workload: expected a fairalloc.scheduling.workloads.Workload, got {type(workload).__name__}")
    validate(workload)  # the bounds of fairalloc.core.limits, events included
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= limits.MAX_SAMPLES:
        raise CaseError(f"samples: must be an integer in [1, {limits.MAX_SAMPLES:,}] (got {excerpt(samples)})")
    wall0 = _time.perf_counter()
    sim = _Simulation(workload, sched, samples, record_tasks, max_events)
    bar = _progress_bar(workload, sched, progress)
    end = sim.run(bar)
    sim.close(end)
    if bar is not None:
        bar.close()
    return sim.result(end, wall0)


def scheduler_of(scheduler: Any) -> Scheduler:
    """The scheduler of a run: ``scheduler`` itself, or the task-offer face of a mechanism or of the
    mechanism a name gives (``fairalloc.get``: every registered mechanism with its parameters, plug-ins
    included; the old names' capitals and spaces, ``" MFS "``, are forgiven)."""
    if isinstance(scheduler, Scheduler):
        return scheduler
    from fairalloc.core.errors import UnknownNameError
    from fairalloc.core.registry import get

    if isinstance(scheduler, str):
        text = scheduler.strip()
        try:
            return offers_of(get(text))
        except UnknownNameError:
            if text.lower() == text:
                raise
            scheduler = text.lower()
    return offers_of(get(scheduler))


def _progress_bar(workload: Workload, sched: Scheduler, progress: bool | None) -> Any:
    """Progress over the simulated seconds (:func:`fairalloc.core.progress.progress_bar`: a bar on
    a terminal, lines when piped), or None with ``progress=False``."""
    if progress is False:
        return None
    from fairalloc.core.progress import progress_bar

    return progress_bar(
        total=round(_estimate_end(workload)),
        unit="sim-s",
        desc=f"simulate {sched.name}",
        progress=progress,
        leave=False,
    )


class _Simulation:
    """One run of :func:`simulate`: the cluster the scheduler sees (:class:`SimState`), the event
    heap, the run's counters, the utilisation integral and the timeline samples.

    The hot path (:meth:`finish`, :meth:`offer`, :meth:`launch`) reaches the cluster's lists through
    attributes bound once here (one lookup each, not two through ``st``); :meth:`run` keeps its own
    per-event values in locals. The attributes are slots: an instance of more than 29 attributes in a
    dict has reads and writes that Python 3.11 specialises less well (a slot's are the fast ones).
    """

    __slots__ = (
        *("workload", "sched", "record_tasks", "max_events", "event_limit", "step_limit", "st", "horizon"),
        *("changed", "pick", "idle", "check_cpu", "check_mem", "tallies", "overcommit_possible"),
        *("cap_cpu", "cap_mem", "index", "free_by", "used_by", "cap_by", "extras", "free_cpu", "free_mem"),
        *("slots_used", "ucpu", "umem", "urunning", "events", "next_seq", "new_work", "records", "max_over"),
        *("low_cpu", "low_mem"),
        *("resubmits", "next_id", "completed", "jct_sum", "cancelled", "deadlines", "n_events"),
        # the timeline (see _start_timeline)
        *("used_cpu", "used_mem", "area_cpu", "area_mem", "used_x", "area_x", "last_t", "interval"),
        *("next_sample", "s_time", "s_cpu", "s_mem", "s_x", "s_share", "s_fair", "keep"),
    )

    def __init__(
        self, workload: Workload, sched: Scheduler, samples: int, record_tasks: bool, max_events: int | None
    ) -> None:
        self.workload, self.sched, self.record_tasks, self.max_events = workload, sched, record_tasks, max_events
        self.event_limit, self.step_limit = limits.MAX_EVENTS, limits.MAX_SCHEDULER_STEPS
        st = self.st = SimState(workload)
        sched.bind(st)
        # (bound once: called for every task)
        self.changed, self.pick, self.idle = sched.changed, sched.pick, sched.idle
        self.horizon = workload.horizon
        self.cap_cpu, self.cap_mem = st.capacity_by_resource[0], st.capacity_by_resource[1]
        self.index, self.free_by, self.used_by = st.index, st.free_by_resource, st.used_by_resource
        self.cap_by = st.capacity_by_resource
        self.extras = st.resources[2:]  # resources beyond cpu and mem: only touched by tasks demanding them
        self.free_cpu, self.free_mem, self.slots_used = st.free_cpu, st.free_mem, st.slots_used
        self.ucpu, self.umem, self.urunning = st.cpu, st.mem, st.running
        self.check_cpu, self.check_mem = sched.check_cpu, sched.check_mem
        self.tallies = sched.reads_tallies  # (kept per task only for a scheduler that reads them)
        self.overcommit_possible = not (self.check_cpu and self.check_mem)
        #: ``(time, seq, kind, payload)``; a task's finish carries its fields flat (see :meth:`finish`)
        self.events: list[tuple] = [
            (float(spec.submit), seq, ARRIVE, (spec, spec.name))
            for seq, spec in enumerate(sorted(workload.jobs, key=lambda j: j.submit))
        ]
        heapq.heapify(self.events)
        self.next_seq = itertools.count(len(self.events)).__next__  # the events' tie-break, in push order
        self.resubmits: dict[str, int] = {}
        self.next_id = 0
        self.completed: dict[str, int] = {}
        self.jct_sum: dict[str, float] = {}
        for spec in workload.jobs:
            self.completed.setdefault(spec.job_class or "all", 0)
            self.jct_sum.setdefault(spec.job_class or "all", 0.0)
        # (tasks started and finished are counted from these at the end, not per task: see result)
        self.cancelled = self.deadlines = self.n_events = 0
        self.new_work: list[_JobRun] = []  # the jobs with newly runnable tasks in this instant
        self.records: list[TaskRecord] = []
        self.max_over = 0.0  # the highest load of a node in the other resources, right after a launch
        self.low_cpu, self.low_mem = list(st.free_cpu), list(st.free_mem)  # each node's least free room so far
        self._start_timeline(samples)

    def _start_timeline(self, samples: int) -> None:
        """The utilisation integral (other resources: by their index in ``st.resources``) and the samples."""
        n = len(self.st.resources)
        self.used_cpu = self.used_mem = 0.0
        self.area_cpu = self.area_mem = 0.0
        self.used_x, self.area_x = [0.0] * n, [0.0] * n
        self.last_t = 0.0
        self.interval = _estimate_end(self.workload) / max(1, samples)
        self.next_sample = 0.0
        self.s_time: list[float] = []
        self.s_cpu: list[float] = []
        self.s_mem: list[float] = []
        self.s_x: dict[str, list[float]] = {r: [] for r in self.extras}
        self.s_share: dict[str, list[float]] = {o: [] for o in self.st.owners}
        self.s_fair: list[float | None] = []  # per sample: its fairness error, or None (no active owner)
        self.keep = 2 * samples  # a run longer than estimated: thin out, double the interval

    # ------------------------------------------------------------------ the event loop

    def run(self, bar: Any) -> float:
        """Replay the events instant by instant up to the horizon, ``max_events`` or the last one; each
        instant: its events (:meth:`arrive`, :meth:`finish`, :meth:`deadline`), then the offers of the
        nodes where a task finished or new work fits (:meth:`offer`). Returns the end time."""
        events, horizon, max_events, event_limit = self.events, self.horizon, self.max_events, self.event_limit
        pop, finish, offer, st, extras = heapq.heappop, self.finish, self.offer, self.st, self.extras
        stop_t = float("inf") if horizon is None else horizon  # (one test per instant for both bounds)
        stop_n = event_limit + 1 if max_events is None else max_events  # (an int: an int-int test is the fast one)
        area_cpu, area_mem, last_t = self.area_cpu, self.area_mem, self.last_t  # (locals until the loop ends)
        # an idle scheduler's pick declines every node: an instant without waiting work (most
        # finishes, on a cluster with room) offers nothing (a scheduler without idle() never is)
        idle, new_work = self.idle, self.new_work
        t = bar_t = 0.0
        n_events = 0
        while events:
            t = events[0][0]
            if t > stop_t or n_events >= stop_n:
                break
            if self.next_sample <= t:
                self.sample_until(t)
            dt = t - last_t  # the utilisation integral up to t
            area_cpu += self.used_cpu * dt
            area_mem += self.used_mem * dt
            if extras:
                self.integrate_extras(dt)
            last_t = st.time = t
            event = pop(events)
            if event[2] == FINISH:  # (the usual instant: one task ends, and its node is offered)
                n_events += 1
                finish(event, t)
                nodes = [event[4]]
                if events and events[0][0] == t:  # (more at this instant: its job's resubmission too)
                    n_events, nodes = self.apply(pop(events), t, n_events, nodes)
            else:
                n_events, nodes = self.apply(event, t, n_events, [])
            if n_events > event_limit:
                raise CaseError(
                    f"workload: simulating {excerpt(self.workload.name)} under {self.sched.name} takes more "
                    f"than {event_limit} events, the most fairalloc simulates"
                )
            if new_work:  # offered: the nodes where tasks ended and where the new work fits
                if not idle():
                    offer(self.offered(nodes, new_work), t)
                new_work.clear()
            elif not idle():
                offer(nodes, t)
            if bar is not None and (n_events & 1023) == 0 and t > bar_t:
                bar.update(round(t) - round(bar_t))
                bar_t = t
        self.n_events = n_events
        self.area_cpu, self.area_mem, self.last_t = area_cpu, area_mem, last_t
        return float(horizon) if horizon is not None and (not events or events[0][0] > horizon) else t

    def apply(self, event: tuple, t: float, n_events: int, dirty: list[int]) -> tuple[int, list[int]]:
        """The events of instant ``t`` from ``event`` (popped) on, in push order, after those that ended
        tasks on ``dirty``; returns the count of events so far and the nodes where tasks ended, sorted."""
        events = self.events
        while True:
            n_events += 1
            kind = event[2]
            if kind == FINISH:
                self.finish(event, t)
                dirty.append(event[4])
            elif kind == ARRIVE:
                self.arrive(event[3], t)
            else:
                self.deadline(event[3], t)
            if not events or events[0][0] != t:
                return n_events, dirty if len(dirty) < 2 else sorted(set(dirty))
            event = heapq.heappop(events)

    def integrate_extras(self, dt: float) -> None:
        """Add ``dt`` seconds at the current use of the resources beyond cpu and mem to their integral."""
        area_x, used_x = self.area_x, self.used_x
        for k in range(2, len(used_x)):
            area_x[k] += used_x[k] * dt

    def push(self, t: float, kind: int, payload: Any) -> None:
        heapq.heappush(self.events, (t, self.next_seq(), kind, payload))

    # ------------------------------------------------------------------ events

    def arrive(self, payload: tuple[Any, str | None], t: float) -> None:
        """A job is submitted (``name`` None: a resubmission, numbered ``name#k``)."""
        spec, name = payload
        if name is None:
            self.resubmits[spec.name] = self.resubmits.get(spec.name, 0) + 1
            name = f"{spec.name}#{self.resubmits[spec.name]}"
        st = self.st
        u = st.owner_index[spec.owner]
        job = _JobRun(self.next_id, spec, name, u, t)
        self.next_id += 1
        st.jobs[job.id] = job
        st.user_jobs[u][job.id] = job
        if spec.until is not None:
            if spec.until <= t:
                job.cancelled = True
                self.retire(job, t)
                return
            self.push(float(spec.until), DEADLINE, job)
        st.now_runnable(job)
        self.new_work.append(job)
        self.sched.changed(u)

    def finish(self, event: tuple, t: float) -> None:
        """A task ends (``event``: ``(time, seq, FINISH, job, node, cpu, mem, extra)``, flat: one tuple per
        task, not two): free its node's room and its owner's allocation; unlock the job's next phase
        or retire the job."""
        _, _, _, job, node, cpu, mem, extra = event
        u, changed = job.u, self.changed  # (a local: calling the attribute in place looks it up the slow way)
        self.free_cpu[node] += cpu
        self.free_mem[node] += mem
        if extra:
            index, free_by, used_by, used_x = self.index, self.free_by, self.used_by, self.used_x
            for r, a in extra:
                k = index[r]
                free_by[k][node] += a
                used_by[k][u] -= a
                used_x[k] -= a
                job.extra[k] -= a
        self.used_cpu -= cpu
        self.used_mem -= mem
        self.ucpu[u] -= cpu
        self.umem[u] -= mem
        if self.tallies:
            self.slots_used[node] -= 1
            self.urunning[u] -= 1
            job.cpu -= cpu
            job.mem -= mem
        done = job.done = job.done + 1
        if job.cancelled:
            if job.running == 0:
                self.retire(job, t)
        elif done == len(job.tasks):
            job.phase += 1
            job.next = job.done = 0
            if job.phase == len(job.spec.phases):
                job.tasks = ()
                self.retire(job, t)
            else:
                job.tasks = job.spec.phases[job.phase]
                self.st.now_runnable(job)
                self.new_work.append(job)
        changed(u)

    def deadline(self, job: _JobRun, t: float) -> None:
        """A job's ``until``: cancel its unstarted tasks, unless its last phase has started them all."""
        self.deadlines += 1
        last_phase_started = job.phase == len(job.spec.phases) - 1 and job.next == len(job.tasks)
        if job.finish is None and not job.cancelled and job.id in self.st.jobs and not last_phase_started:
            job.cancelled = True
            if job.running == 0:
                self.retire(job, t)
            self.sched.changed(job.u)

    def retire(self, job: _JobRun, t: float) -> None:
        """Drop a finished or cancelled job; count it, and resubmit a closed-loop one before the horizon."""
        del self.st.user_jobs[job.u][job.id]
        del self.st.jobs[job.id]
        if job.cancelled:
            self.cancelled += 1
        else:
            job.finish = t
            self.completed[job.job_class] += 1
            self.jct_sum[job.job_class] += t - job.submit
            if job.spec.resubmit and (self.horizon is None or t < self.horizon):
                self.push(t, ARRIVE, (job.spec, None))

    # ------------------------------------------------------------------ offers

    def offered(self, dirty: list[int], new_work: list[_JobRun]) -> list[int]:
        """The nodes to offer when work appeared (``new_work``), in order: where a task finished and
        every node where a newly runnable task fits."""
        st, n_nodes, check_cpu, check_mem = self.st, self.st.n_nodes, self.check_cpu, self.check_mem
        if not self.extras:
            free_cpu, free_mem, nodes, unchecked = self.free_cpu, self.free_mem, range(n_nodes), -float("inf")
            shapes = {(j.next_task().cpu, j.next_task().mem) for j in new_work if j.runnable()}
            fit: set[int] = set()
            for c, m in shapes:  # (an unchecked resource always fits)
                c, m = c if check_cpu else unchecked, m if check_mem else unchecked
                # (a list comprehension: cheaper per node than a generator, over an arrival's every node)
                fit.update([n for n, fc, fm in zip(nodes, free_cpu, free_mem) if c <= fc + EPS and m <= fm + EPS])
        else:
            tasks = {j.next_task() for j in new_work if j.runnable()}
            fit = set(n for n in range(n_nodes) if any(st.fits(n, task, check_cpu, check_mem) for task in tasks))
        st.steps += n_nodes
        return sorted(fit.union(dirty))

    def offer(self, nodes: list[int], t: float) -> None:
        """Offer each of ``nodes`` in turn to the scheduler until it declines; launch every task it picks.
        Once the scheduler is :meth:`~Scheduler.idle` (the work that appeared has all started), the
        rest of ``nodes`` would all decline: they are not offered."""
        st, step_limit, launch = self.st, self.step_limit, self.launch
        pick, idle, more = self.pick, self.idle, len(nodes) > 1
        for node in nodes:
            if more and idle():
                break
            while True:
                steps = st.steps = st.steps + 1
                if steps > step_limit:
                    raise CaseError(
                        f"workload: scheduling {excerpt(self.workload.name)} under {self.sched.name} takes more than "
                        f"{step_limit} scheduler steps (offers of {st.n_nodes} nodes, owners and jobs "
                        "examined), the most fairalloc simulates"
                    )
                job = pick(st, node)
                if job is None:
                    break
                launch(job, node, t)

    def launch(self, job: _JobRun, node: int, t: float) -> None:
        """Start ``job``'s next task on ``node`` at ``t``; on an over-committed node (``:oc``) it runs
        slower by the node's load."""
        position = job.next
        task = job.tasks[position]
        # (a CPU / memory task reads its extra from the class: a slow lookup, skipped without other resources)
        extra = task.extra if self.extras else ()
        if extra and not self.st.fits_extra(node, extra):
            raise CaseError(
                f"scheduler: {self.sched.name} chose a task of {excerpt(job.name)} for node {node}, "
                f"where its {', '.join(r for r, _ in extra)} demand does not fit (a scheduler "
                "must check every resource with state.fits)"
            )
        job.next = position + 1
        u, changed = job.u, self.changed  # (as in finish)
        cpu, mem = task.cpu, task.mem
        free_cpu, free_mem = self.free_cpu, self.free_mem
        free_cpu[node] -= cpu
        free_mem[node] -= mem
        self.used_cpu += cpu
        self.used_mem += mem
        self.ucpu[u] += cpu
        self.umem[u] += mem
        if self.tallies:
            self.slots_used[node] += 1
            self.urunning[u] += 1
            job.cpu += cpu
            job.mem += mem
        duration = task.duration
        # the node's least free CPU and memory so far (its highest load in them: see max_overcommit)
        low_cpu, low_mem = self.low_cpu, self.low_mem
        if free_cpu[node] < low_cpu[node]:
            low_cpu[node] = free_cpu[node]
        if free_mem[node] < low_mem[node]:
            low_mem[node] = free_mem[node]
        if extra or self.overcommit_possible:
            load = self.take_extras(extra, node, job) if extra else 0.0
            if load > self.max_over:
                self.max_over = load
            if self.overcommit_possible:  # an over-committed node runs the task slower
                load = max(load, (self.cap_cpu[node] - free_cpu[node]) / self.cap_cpu[node])
                load = max(load, (self.cap_mem[node] - free_mem[node]) / self.cap_mem[node])
                if load > 1.0 + EPS:
                    duration *= load
        next_seq = self.next_seq  # (as changed)
        heapq.heappush(self.events, (t + duration, next_seq(), FINISH, job, node, cpu, mem, extra))
        if self.record_tasks:
            self.records.append(
                TaskRecord(
                    job.name, job.owner, PHASES[job.phase], position, node, t, t + duration, cpu, mem, dict(extra)
                )
            )
        changed(u)

    def take_extras(self, extra: tuple, node: int, job: _JobRun) -> float:
        """Allocate a launched task's other resources ``extra`` on ``node`` to ``job`` (and its owner);
        returns the node's highest load in them."""
        index, free_by, used_by, used_x, cap_by = self.index, self.free_by, self.used_by, self.used_x, self.cap_by
        u, held, load = job.u, job.extra, 0.0
        for r, a in extra:
            k = index[r]
            free_by[k][node] -= a
            used_by[k][u] += a
            used_x[k] += a
            held[k] = held.get(k, 0.0) + a
            cap = cap_by[k][node]
            if cap > 0:  # (a demand within EPS fits a node without the resource)
                load = max(load, (cap - free_by[k][node]) / cap)
        return load

    # ------------------------------------------------------------------ samples and result

    def sample_until(self, t: float) -> None:
        """Take the samples due by ``t`` (sample ``k`` at ``k * interval``), none past the horizon."""
        horizon = self.horizon
        while self.next_sample <= t and (horizon is None or self.next_sample <= horizon):
            self.sample(self.next_sample)
            self.next_sample = self.interval * len(self.s_time)

    def sample(self, t: float) -> None:
        """One timeline sample: each resource's utilisation, each owner's dominant share, the
        fairness error; past ``keep`` samples, drop every other one and double the interval."""
        st = self.st
        if len(self.s_time) >= self.keep:
            del self.s_time[1::2], self.s_cpu[1::2], self.s_mem[1::2], self.s_fair[1::2]
            for values in (*self.s_share.values(), *self.s_x.values()):
                del values[1::2]
            self.interval *= 2
        self.s_time.append(round(t, 6))
        self.s_cpu.append(self.used_cpu / st.total_cpu)
        self.s_mem.append(self.used_mem / st.total_mem)
        for r in self.extras:
            k = self.index[r]
            self.s_x[r].append(self.used_x[k] / st.total[k])
        for u, o in enumerate(st.owners):
            self.s_share[o].append(st.dominant_share(u))
        self.s_fair.append(self.fairness_error())

    def fairness_error(self) -> float | None:
        """The mean over active owners of ``|dominant share - DRF share|`` (None: no active owner), the
        DRF shares by progressive filling over the demand of each one's earliest active job's current
        phase, bounded by her remaining tasks."""
        st = self.st
        act, dem, bnd = [], [], []
        for u in range(len(st.owners)):
            jobs = st.user_jobs[u]
            demand = st.owner_demand(u)
            if demand is not None:  # (she has an active job)
                remaining = sum(
                    sum(len(p) for p in j.spec.phases[j.phase :]) - j.done for j in jobs.values() if not j.cancelled
                ) + sum(j.running for j in jobs.values() if j.cancelled)
                act.append(u)
                dem.append(tuple(a / t for a, t in zip(demand, st.total)))  # (the shares of its totals)
                bnd.append(max(remaining, 0))
        if not act:
            return None
        ref = drf_shares(dem, bnd)
        return sum(abs(st.dominant_share(u) - r) for u, r in zip(act, ref)) / len(act)

    def close(self, end: float) -> None:
        """The utilisation integral and the samples up to the end time."""
        if end > self.last_t:
            dt = end - self.last_t
            self.area_cpu += self.used_cpu * dt
            self.area_mem += self.used_mem * dt
            self.integrate_extras(dt)
        self.sample_until(end)

    def max_overcommit(self) -> float:
        """The highest load of a node right after a launch: ``max_r (capacity_r - free_r) / capacity_r``
        (the other resources' kept at each launch in ``max_over``; CPU and memory from each node's least
        free room, as the load is the highest where the room is the least)."""
        loads = [self.max_over]
        for cap, low in ((self.cap_cpu, self.low_cpu), (self.cap_mem, self.low_mem)):
            loads.extend((c - f) / c for c, f in zip(cap, low) if f < c)  # (nodes without a launch: load 0)
        return max(loads)

    def result(self, end: float, wall0: float) -> SimulationResult:
        st, index, completed, span = self.st, self.index, self.completed, end if end > 0 else 1.0
        finished = self.n_events - self.next_id - self.deadlines  # the events popped but arrivals and deadlines
        started = finished + sum(1 for e in self.events if e[2] == FINISH)  # (every launch pushed its finish)
        return SimulationResult(
            scheduler=self.sched.name,
            workload=self.workload.name,
            horizon=self.horizon,
            end_time=end,
            completed=dict(completed),
            mean_completion_time={c: (self.jct_sum[c] / completed[c] if completed[c] else None) for c in completed},
            cancelled=self.cancelled,
            tasks_started=started,
            tasks_finished=finished,
            utilization={
                "cpu": self.area_cpu / (st.total_cpu * span),
                "mem": self.area_mem / (st.total_mem * span),
                **{r: self.area_x[index[r]] / (st.total[index[r]] * span) for r in self.extras},
            },
            fairness_error=_mean([f for f in self.s_fair if f is not None]),
            max_overcommit=self.max_overcommit(),
            samples={"time": self.s_time, "cpu": self.s_cpu, "mem": self.s_mem, **self.s_x, "shares": self.s_share},
            events=self.n_events,
            wall_seconds=_time.perf_counter() - wall0,
            tasks=self.records,
        )
