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
  unstarted task of her earliest job that has one runnable).
* Closed-loop jobs (``resubmit``) are resubmitted at their finish time while before the horizon;
  ``until`` cancels a job's unstarted tasks at that time. The run stops at ``workload.horizon``
  (tasks still running then are not finished) or when every job is done.

Schedulers (``simulate(workload, name)``; unknown names raise :class:`~fairalloc.core.errors.CaseError`)
---------------------------------------------------------------------------------------------------
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
  the text describes.) Cost: a descent of the discrete engine's heap of groups and a sort of one
  group's jobs per launch.
* ``hdrf``: H-DRF (Bhattacharya et al., SoCC 2013) over a tree of owners declared by their names:
  ``eng/web/alice`` is owner ``alice`` in group ``web`` in group ``eng`` (see :func:`owner_tree`);
  ``workload.group_weights`` gives any node (owner or group path) its weight among its siblings
  (default 1), as for ``mfs``. For each offered node: from the root, into the child with the lowest
  ``dominant share / weight`` of what its whole subtree runs now (cluster-wide shares), skipping
  children with nothing runnable below or no next task below that fits the node, down to an owner,
  whose next task is launched. On a flat tree (no '/' in any owner name, no weights) this is
  exactly ``drf`` (same heap, keys and ties). Cost: one lazy heap per internal node, so heap
  operations along one root-to-owner path per launch (plus the children tried and declined).
  The *fairness error* is still measured against flat DRF, not against H-DRF's own shares.
* ``quincy``: a Quincy-style min-cost-flow scheduler (Isard et al., SOSP 2009; simplified, see
  :class:`Quincy`): each instant's placements from one ``networkx.min_cost_flow`` over owners and
  nodes, with DRF quotas and waiting-time costs; for small clusters (pure-Python flow solver).
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
import sys
import time as _time
from dataclasses import dataclass, field

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt
from fairalloc.engines.filling import drf_shares
from fairalloc.scheduling.schedulers import (
    DRF,
    FIFO,
    HDRF,
    MFS,
    SCHEDULER_NAMES,
    Capacity,
    CPUFair,
    Quincy,
    Scheduler,
    Slots,
    make_scheduler,
    owner_tree,
)
from fairalloc.scheduling.workloads import PHASES, Workload, validate

__all__ = [
    "Scheduler",
    "DRF",
    "CPUFair",
    "Slots",
    "Capacity",
    "FIFO",
    "MFS",
    "HDRF",
    "Quincy",
    "owner_tree",
    "make_scheduler",
    "SCHEDULER_NAMES",
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
        "running",
        "done",
        "finish",
        "cancelled",
        "job_class",
        "cpu",
        "mem",
    )

    def __init__(self, jid, spec, name, u, submit):
        self.id, self.spec, self.name, self.u, self.submit = jid, spec, name, u, submit
        self.owner, self.job_class = spec.owner, spec.job_class or "all"
        self.phase = self.next = self.running = self.done = 0
        self.finish = None
        self.cancelled = False
        self.cpu = self.mem = 0.0  # allocated now (running tasks)

    def runnable(self) -> bool:
        return not self.cancelled and self.next < len(self.spec.phases[self.phase])

    def next_task(self):
        return self.spec.phases[self.phase][self.next]


class SimState:
    """What schedulers see, over the cluster's resources ``resources`` (``cpu``, ``mem``, then the
    node pools' others) with cluster totals ``total``.

    Per node: its free amounts, ``free_vector(node)``, kept by resource as the lists
    ``free_by_resource[r]`` (so ``free_cpu`` and ``free_mem`` *are* the lists of ``cpu`` and
    ``mem``), its capacities ``capacity_by_resource[r]``, and ``slots_used``. Per owner (index
    ``u`` into ``owners``): ``used_vector(u)`` (allocated now), kept the same way
    (``used_by_resource``, with ``cpu`` and ``mem`` the lists of the first two), and ``running``
    (tasks). ``total_cpu`` / ``total_mem`` are the first two totals; ``node_cpu`` / ``node_mem``
    the largest node's CPU and memory (the node size when all nodes are identical).
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
        self.time = 0.0
        #: scheduler work so far (offers, plus owners / jobs / heap entries examined): the simulation
        #: stops at :data:`fairalloc.core.limits.MAX_SCHEDULER_STEPS`; built-in schedulers add to it
        self.steps = 0
        if len(self.resources) > 2:  # the two-resource methods stay the plain, fast ones
            self.dominant_share = self._dominant_share_any
            self.fits = self._fits_any

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

    def next_job(self, u: int) -> _JobRun | None:
        """The owner's earliest active job with a runnable task (its next task is hers)."""
        for job in self.user_jobs[u].values():
            if job.runnable():
                return job
        return None

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


def _demand(task, st: SimState) -> tuple[float, ...]:
    """``task``'s demand of each of ``st.resources``."""
    more = dict(task.extra)
    return (task.cpu, task.mem, *(more.get(r, 0.0) for r in st.resources[2:]))


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
    cpu = sum(t.cpu * t.duration for j in w.jobs for p in j.phases for t in p)
    mem = sum(t.mem * t.duration for j in w.jobs for p in j.phases for t in p)
    longest = max(sum(max(t.duration for t in p) for p in j.phases) + j.submit for j in w.jobs)
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
    """Run ``workload`` under ``scheduler`` (a name of :data:`SCHEDULER_NAMES` or a :class:`Scheduler`).

    ``samples``: about how many timeline samples (every ``horizon / samples`` seconds, or the
    estimated makespan's when there is no horizon); ``record_tasks`` keeps a :class:`TaskRecord`
    per started task; ``progress``: a tqdm bar over simulated time (default: only on a TTY);
    ``max_events``: stop after that many events (a safety valve).
    """
    sched = make_scheduler(scheduler)
    if not isinstance(workload, Workload):
        raise CaseError(f"workload: expected a fairalloc.scheduling.workloads.Workload, got {type(workload).__name__}")
    validate(workload)  # the bounds of fairalloc.core.limits, events included
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= limits.MAX_SAMPLES:
        raise CaseError(f"samples: must be an integer in [1, {limits.MAX_SAMPLES:,}] (got {excerpt(samples)})")
    event_limit = limits.MAX_EVENTS
    step_limit = limits.MAX_SCHEDULER_STEPS
    wall0 = _time.perf_counter()
    st = SimState(workload)
    sched.bind(st)
    horizon = workload.horizon
    n_nodes = st.n_nodes
    cap_cpu, cap_mem = st.capacity_by_resource[0], st.capacity_by_resource[1]
    owner_index = st.owner_index
    index, free_by, cap_by, used_by = st.index, st.free_by_resource, st.capacity_by_resource, st.used_by_resource
    extras = st.resources[2:]  # resources beyond cpu and mem: only touched by tasks demanding them
    free_cpu, free_mem, slots_used = st.free_cpu, st.free_mem, st.slots_used
    ucpu, umem, urunning = st.cpu, st.mem, st.running
    check_cpu, check_mem = sched.check_cpu, sched.check_mem
    overcommit_possible = not (check_cpu and check_mem)

    events: list = []
    seq = 0
    for spec in sorted(workload.jobs, key=lambda j: j.submit):
        events.append((float(spec.submit), seq, ARRIVE, (spec, spec.name)))
        seq += 1
    heapq.heapify(events)
    resubmits: dict[str, int] = {}
    next_id = 0

    completed: dict[str, int] = {}
    jct_sum: dict[str, float] = {}
    for spec in workload.jobs:
        completed.setdefault(spec.job_class or "all", 0)
        jct_sum.setdefault(spec.job_class or "all", 0.0)
    cancelled = started = finished = n_events = 0
    records: list[TaskRecord] = []
    max_over = 0.0

    # utilisation integral and samples (other resources: by their index in st.resources)
    used_cpu = used_mem = 0.0
    area_cpu = area_mem = 0.0
    used_x = [0.0] * len(st.resources)
    area_x = [0.0] * len(st.resources)
    last_t = 0.0
    interval = _estimate_end(workload) / max(1, samples)
    next_sample = 0.0
    s_time: list[float] = []
    s_cpu: list[float] = []
    s_mem: list[float] = []
    s_x: dict[str, list[float]] = {r: [] for r in extras}
    s_share: dict[str, list[float]] = {o: [] for o in st.owners}
    s_fair: list = []  # per sample: its fairness error, or None (no active owner)
    keep = 2 * samples  # a run longer than estimated: thin out, double the interval

    def sample(t):
        nonlocal interval
        if len(s_time) >= keep:
            del s_time[1::2], s_cpu[1::2], s_mem[1::2], s_fair[1::2]
            for values in (*s_share.values(), *s_x.values()):
                del values[1::2]
            interval *= 2
        s_time.append(round(t, 6))
        s_cpu.append(used_cpu / st.total_cpu)
        s_mem.append(used_mem / st.total_mem)
        for r in extras:
            k = index[r]
            s_x[r].append(used_x[k] / st.total[k])
        act, dem, bnd = [], [], []
        for u, o in enumerate(st.owners):
            s_share[o].append(st.dominant_share(u))
            jobs = st.user_jobs[u]
            if jobs:
                first = next(iter(jobs.values()))
                task = first.spec.phases[first.phase][0]
                remaining = sum(
                    sum(len(p) for p in j.spec.phases[j.phase :]) - j.done for j in jobs.values() if not j.cancelled
                ) + sum(j.running for j in jobs.values() if j.cancelled)
                act.append(u)
                dem.append(
                    (task.cpu / st.total_cpu, task.mem / st.total_mem)
                    if not extras
                    else tuple(a / t for a, t in zip(_demand(task, st), st.total))
                )
                bnd.append(max(remaining, 0))
        if act:
            ref = drf_shares(dem, bnd)
            s_fair.append(sum(abs(st.dominant_share(u) - r) for u, r in zip(act, ref)) / len(act))
        else:
            s_fair.append(None)

    if progress is None:
        progress = sys.stderr.isatty()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=round(_estimate_end(workload)),
            unit="sim-s",
            desc=f"simulate {sched.name}",
            disable=not progress,
            leave=False,
        )
    bar_t = 0.0

    def retire(job: _JobRun, t: float):
        nonlocal cancelled, seq
        u = job.u
        del st.user_jobs[u][job.id]
        del st.jobs[job.id]
        if job.cancelled:
            cancelled += 1
        else:
            job.finish = t
            completed[job.job_class] += 1
            jct_sum[job.job_class] += t - job.submit
            if job.spec.resubmit and (horizon is None or t < horizon):
                heapq.heappush(events, (t, seq, ARRIVE, (job.spec, None)))
                seq += 1

    t = 0.0
    while events:
        t = events[0][0]
        if horizon is not None and t > horizon:
            break
        if max_events is not None and n_events >= max_events:
            break
        while next_sample <= t and (horizon is None or next_sample <= horizon):
            sample(next_sample)
            next_sample = interval * len(s_time)  # sample k at k * interval
        dt = t - last_t
        area_cpu += used_cpu * dt
        area_mem += used_mem * dt
        if extras:
            for k in range(2, len(used_x)):
                area_x[k] += used_x[k] * dt
        last_t = t
        st.time = t
        dirty = set()
        new_work: list[_JobRun] = []
        while events and events[0][0] == t:
            _, _, kind, payload = heapq.heappop(events)
            n_events += 1
            if n_events > event_limit:
                raise CaseError(
                    f"workload: simulating {excerpt(workload.name)} under {sched.name} takes more than "
                    f"{event_limit} events, the most fairalloc simulates"
                )
            if kind == FINISH:
                job, node, cpu, mem, extra = payload
                free_cpu[node] += cpu
                free_mem[node] += mem
                if extra:
                    for r, a in extra:
                        k = index[r]
                        free_by[k][node] += a
                        used_by[k][job.u] -= a
                        used_x[k] -= a
                slots_used[node] -= 1
                used_cpu -= cpu
                used_mem -= mem
                u = job.u
                ucpu[u] -= cpu
                umem[u] -= mem
                urunning[u] -= 1
                job.cpu -= cpu
                job.mem -= mem
                job.running -= 1
                job.done += 1
                finished += 1
                dirty.add(node)
                if job.cancelled:
                    if job.running == 0:
                        retire(job, t)
                elif job.done == len(job.spec.phases[job.phase]):
                    job.phase += 1
                    job.next = job.done = 0
                    if job.phase == len(job.spec.phases):
                        retire(job, t)
                    else:
                        new_work.append(job)
                sched.changed(u)
            elif kind == ARRIVE:
                spec, name = payload
                if name is None:
                    resubmits[spec.name] = resubmits.get(spec.name, 0) + 1
                    name = f"{spec.name}#{resubmits[spec.name]}"
                u = owner_index[spec.owner]
                job = _JobRun(next_id, spec, name, u, t)
                next_id += 1
                st.jobs[job.id] = job
                st.user_jobs[u][job.id] = job
                if spec.until is not None:
                    if spec.until <= t:
                        job.cancelled = True
                        retire(job, t)
                        continue
                    heapq.heappush(events, (float(spec.until), seq, DEADLINE, job))
                    seq += 1
                new_work.append(job)
                sched.changed(u)
            else:  # DEADLINE
                job = payload
                last_phase_started = job.phase == len(job.spec.phases) - 1 and job.next == len(
                    job.spec.phases[job.phase]
                )
                if job.finish is None and not job.cancelled and job.id in st.jobs and not last_phase_started:
                    job.cancelled = True
                    if job.running == 0:
                        retire(job, t)
                    sched.changed(job.u)
        # offers
        if new_work and not extras:
            shapes = {(j.next_task().cpu, j.next_task().mem) for j in new_work if j.runnable()}
            offer = sorted(
                set(
                    n
                    for n in range(n_nodes)
                    if any(
                        (not check_cpu or c <= free_cpu[n] + EPS) and (not check_mem or m <= free_mem[n] + EPS)
                        for c, m in shapes
                    )
                )
                | dirty
            )
            st.steps += n_nodes
        elif new_work:
            shapes = {j.next_task() for j in new_work if j.runnable()}
            offer = sorted(
                set(n for n in range(n_nodes) if any(st.fits(n, task, check_cpu, check_mem) for task in shapes)) | dirty
            )
            st.steps += n_nodes
        else:
            offer = sorted(dirty)
        for node in offer:
            while True:
                st.steps += 1
                if st.steps > step_limit:
                    raise CaseError(
                        f"workload: scheduling {excerpt(workload.name)} under {sched.name} takes more than "
                        f"{step_limit} scheduler steps (offers of {n_nodes} nodes, owners and jobs "
                        "examined), the most fairalloc simulates"
                    )
                job = sched.pick(st, node)
                if job is None:
                    break
                task = job.next_task()
                extra = task.extra
                if extra and not st.fits_extra(node, extra):
                    raise CaseError(
                        f"scheduler: {sched.name} chose a task of {excerpt(job.name)} for node {node}, "
                        f"where its {', '.join(r for r, _ in extra)} demand does not fit (a scheduler "
                        "must check every resource with state.fits)"
                    )
                position = job.next
                job.next += 1
                job.running += 1
                u = job.u
                cpu, mem = task.cpu, task.mem
                free_cpu[node] -= cpu
                free_mem[node] -= mem
                slots_used[node] += 1
                used_cpu += cpu
                used_mem += mem
                ucpu[u] += cpu
                umem[u] += mem
                urunning[u] += 1
                job.cpu += cpu
                job.mem += mem
                started += 1
                duration = task.duration
                nc, nm = cap_cpu[node], cap_mem[node]
                load = max((nc - free_cpu[node]) / nc, (nm - free_mem[node]) / nm)
                if extra:
                    for r, a in extra:
                        k = index[r]
                        free_by[k][node] -= a
                        used_by[k][u] += a
                        used_x[k] += a
                        cap = cap_by[k][node]
                        if cap > 0:  # (a demand within EPS fits a node without the resource)
                            load = max(load, (cap - free_by[k][node]) / cap)
                if load > max_over:
                    max_over = load
                if overcommit_possible and load > 1.0 + EPS:
                    duration *= load
                heapq.heappush(events, (t + duration, seq, FINISH, (job, node, cpu, mem, extra)))
                seq += 1
                if record_tasks:
                    records.append(
                        TaskRecord(
                            job.name,
                            job.owner,
                            PHASES[job.phase],
                            position,
                            node,
                            t,
                            t + duration,
                            cpu,
                            mem,
                            dict(extra),
                        )
                    )
                sched.changed(u)
        if bar is not None and (n_events & 1023) == 0 and t > bar_t:
            bar.update(round(t) - round(bar_t))
            bar_t = t
    end = float(horizon) if horizon is not None and (not events or events[0][0] > horizon) else t
    if end > last_t:
        area_cpu += used_cpu * (end - last_t)
        area_mem += used_mem * (end - last_t)
        for k in range(2, len(used_x)):
            area_x[k] += used_x[k] * (end - last_t)
    while next_sample <= end and (horizon is None or next_sample <= horizon):
        sample(next_sample)
        next_sample = interval * len(s_time)
    if bar is not None:
        bar.close()
    span = end if end > 0 else 1.0
    return SimulationResult(
        scheduler=sched.name,
        workload=workload.name,
        horizon=horizon,
        end_time=end,
        completed=dict(completed),
        mean_completion_time={c: (jct_sum[c] / completed[c] if completed[c] else None) for c in completed},
        cancelled=cancelled,
        tasks_started=started,
        tasks_finished=finished,
        utilization={
            "cpu": area_cpu / (st.total_cpu * span),
            "mem": area_mem / (st.total_mem * span),
            **{r: area_x[index[r]] / (st.total[index[r]] * span) for r in extras},
        },
        fairness_error=_mean([f for f in s_fair if f is not None]),
        max_overcommit=max_over,
        samples={"time": s_time, "cpu": s_cpu, "mem": s_mem, **s_x, "shares": s_share},
        events=n_events,
        wall_seconds=_time.perf_counter() - wall0,
        tasks=records,
    )
