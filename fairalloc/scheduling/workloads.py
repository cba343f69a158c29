"""Cluster workloads for the discrete-event simulator (:mod:`fairalloc.scheduling.simulator`).

A :class:`Workload` is a cluster of identical nodes (``count`` nodes of ``cpu`` cores and ``mem``
GB), or of node *pools* (:class:`NodePool`: ``count`` nodes with capacities of any named resources,
``cpu`` and ``mem`` always among them, e.g. ``gpu``; a pool without a resource has none of it), and
a list of :class:`Job` s. A job has an ``owner`` (the user / queue / group fairness is
computed over), a ``submit`` time (seconds), an optional ``job_class`` (``small`` / ``large``...,
used only to group metrics) and its phases **in order**: ``map`` then optionally ``reduce``; a
reduce task starts only after every map task of its job finished. A phase is a tuple of
:class:`Task` (``cpu``, ``mem``, ``duration`` seconds, and ``extra``: its demands of the cluster's
other resources).

Two extra job fields express the DRF paper's experiments:

* ``resubmit`` (closed loop, section 7.2): when the job finishes, its owner submits an identical
  copy at that instant (needs a workload ``horizon``, the end of the run);
* ``until`` (section 7.1): no task of the job starts at or after this time; tasks not started by
  then are abandoned and the job counts as *cancelled*, not completed.

``queues`` (optional) maps owners to capacity fractions for the Capacity Scheduler (missing:
equal fractions).

Weights for the two-level MFS scheduler (``mfs`` in :mod:`fairalloc.scheduling.simulator`; other schedulers
ignore them): a job's ``weight`` (default 1; its dominant share is divided by it inside its
group) and the workload's ``group_weights`` mapping owners (= groups) to weights (missing: 1; a
group's dominant share is divided by its weight). Both must be > 0.

Hierarchies for ``hdrf`` (H-DRF): an owner's name is its path in the tree, ``/``-separated as
Mesos hierarchical roles are (``eng/web/alice`` is user ``alice`` in group ``web`` inside group
``eng``); ``group_weights`` then weighs any owner or group path (default 1).  An owner without
``/`` hangs from the root, so a workload without paths runs under ``hdrf`` exactly as under ``drf``.

YAML format (read with ``yaml.safe_load``)::

    name: example                  # optional
    nodes: {count: 4, cpu: 8, mem: 6}
    horizon: 600                   # optional: stop simulating at this time (seconds)
    queues: {alice: 0.5, bob: 0.5} # optional
    group_weights: {alice: 2}      # optional (MFS): weight of an owner / group, default 1
    jobs:
      - name: j1                   # optional (default job-<index>)
        owner: alice               # or user: / queue: / group:
        submit: 0
        class: small               # optional
        resubmit: false            # optional
        until: 120                 # optional
        weight: 1                  # optional (MFS): the job's weight inside its group, default 1
        phases:                    # in order; only 'map' and 'reduce'
          map: {count: 80, cpu: 1, mem: 0.5, duration: 20}        # count + one task shape
          reduce: {tasks: [{cpu: 1, mem: 1, duration: 30}]}      # or an explicit list

Node pools and named resources: ``nodes`` may give its capacities in ``resources:`` (``cpu`` and
``mem`` there or as fields, not both), and may be a list of such pools; a task (a ``count`` shape
or an item of ``tasks``) demands any declared resource the same way. One pool of CPU and memory
only is the plain cluster (it simulates exactly as ``{count, cpu, mem}``)::

    nodes:
      - {count: 30, resources: {cpu: 32, mem: 256, gpu: 8}}
      - {count: 100, resources: {cpu: 64, mem: 512}}
    jobs:
      - {owner: vision, submit: 0, phases: {map: {count: 40, duration: 60, resources: {cpu: 4, mem: 16, gpu: 1}}}}

A demand of a resource no pool declares is refused with the resource named (and a did-you-mean),
so is a task fitting no node of any pool (the job and task named); ``time`` and ``shares`` are
not resource names (they name series of the simulation's samples).

CSV format (:func:`load_csv`): a header and one row per task with the columns ``job, user,
submit, phase, cpu, mem, duration``; the rows of one job must agree on ``user`` and ``submit``;
the cluster comes from the arguments.

Every loader raises :class:`fairalloc.core.errors.CaseError` with a one-line message starting with the
field (or file and row) at fault: a zero or negative duration, a negative demand (or a task
demanding nothing), a task larger than every node (fitting no node of any pool), a demand of an
undeclared resource, a reduce phase without a map phase, an unknown phase name, an empty workload.

Generators: :func:`drf_7_2` (the DRF paper's section 7.2), :func:`drf_7_1` (section 7.1),
:func:`mfs_workload` (the MFS paper's small / large / mixed sets). Trace adapters:
:func:`load_alibaba_batch_task` (Alibaba cluster-trace-v2018 ``batch_task``) and
:func:`workload_from_google` (Google 2011 ``task_events`` through
:func:`fairalloc.scheduling.traces.load_google_task_events`).

>>> w = drf_7_2(nodes=4, horizon=60)
>>> w.nodes, w.node_cpu, w.node_mem, len(w.jobs), w.jobs[0].phases[0][0]
(4, 8.0, 6.0, 8, Task(cpu=1.0, mem=0.5, duration=20.0))
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt, shown, unknown

__all__ = [
    "PHASES",
    "Task",
    "NodePool",
    "Job",
    "Workload",
    "RESERVED_RESOURCE_NAMES",
    "validate",
    "check_limits",
    "event_bound",
    "parse_workload",
    "load_yaml",
    "load_csv",
    "drf_7_1",
    "drf_7_2",
    "mfs_workload",
    "ALIBABA_BATCH_TASK_COLUMNS",
    "load_alibaba_batch_task",
    "workload_from_google",
]

PHASES = ("map", "reduce")


@dataclass(frozen=True, init=False)
class Task:
    """One task: its CPU and memory demands, its duration (seconds) and, in ``extra``, its demands
    of the cluster's other named resources as ``((name, amount), ...)`` (non-zero amounts only)."""

    cpu: float
    mem: float
    duration: float
    extra: tuple = ()

    def __init__(self, cpu: float, mem: float, duration: float, extra: tuple = ()):
        # written out so that a CPU / memory task stores three fields, not four (``extra`` then
        # reads the class default): traces build millions of tasks
        setter = object.__setattr__
        setter(self, "cpu", cpu)
        setter(self, "mem", mem)
        setter(self, "duration", duration)
        if extra:
            setter(self, "extra", tuple(extra))

    def __repr__(self) -> str:  # the two-resource form reads as it always did
        more = f", extra={self.extra!r}" if self.extra else ""
        return f"Task(cpu={self.cpu!r}, mem={self.mem!r}, duration={self.duration!r}{more})"

    @property
    def resources(self) -> dict:
        """Every demand by resource name: ``{'cpu': ..., 'mem': ..., **extra}``."""
        return {"cpu": self.cpu, "mem": self.mem, **dict(self.extra)}


@dataclass(frozen=True)
class NodePool:
    """``count`` identical nodes with the capacities ``resources``, ``((name, capacity), ...)``:
    ``cpu`` and ``mem`` first, then the pool's other named resources."""

    count: int
    resources: tuple

    @property
    def capacity(self) -> dict:
        return dict(self.resources)


@dataclass(frozen=True)
class Job:
    name: str
    owner: str
    submit: float
    phases: tuple[tuple[Task, ...], ...]  # phases[0] = map, phases[1] = reduce (optional)
    job_class: str = ""
    resubmit: bool = False
    until: float | None = None
    weight: float = 1.0  # MFS job weight (inside its owner's group)

    @property
    def n_tasks(self) -> int:
        return sum(len(p) for p in self.phases)


@dataclass(frozen=True)
class Workload:
    nodes: int
    node_cpu: float
    node_mem: float
    jobs: tuple[Job, ...]
    name: str = "workload"
    horizon: float | None = None
    queues: dict = field(default_factory=dict)
    group_weights: dict = field(default_factory=dict)  # MFS group (= owner) weights, default 1
    #: node pools (:class:`NodePool`), or ``()``: ``nodes`` identical nodes of ``node_cpu`` / ``node_mem``.
    #: With pools, ``nodes`` is their total count and ``node_cpu`` / ``node_mem`` the largest node's
    #: (:meth:`from_pools` computes them)
    pools: tuple = ()

    @classmethod
    def from_pools(
        cls,
        pools,
        jobs,
        name: str = "workload",
        horizon: float | None = None,
        queues: dict | None = None,
        group_weights: dict | None = None,
    ) -> Workload:
        """A workload on node pools: ``pools`` is a list of :class:`NodePool` or of ``(count,
        {resource: capacity})`` pairs (``cpu`` and ``mem`` in every pool). One pool of CPU and memory
        only is the plain form (``pools == ()``), so it simulates exactly as ``Workload(count, cpu, mem, ...)``.

        >>> w = Workload.from_pools([(2, {"cpu": 8, "mem": 64, "gpu": 4}), (6, {"cpu": 16, "mem": 64})], ())
        >>> w.nodes, w.node_cpu, w.resources, w.totals
        (8, 16.0, ('cpu', 'mem', 'gpu'), (112.0, 512.0, 8.0))
        """
        built = []
        total = 0
        for k, pool in enumerate(pools):
            count, caps = (pool.count, pool.capacity) if isinstance(pool, NodePool) else pool
            total += _count(count, f"nodes[{k}].count", limits.MAX_NODES, "nodes")
            if total > limits.MAX_NODES:
                raise CaseError(
                    f"nodes[{k}].count: the pools up to this one have {total:,} nodes, more than the "
                    f"{limits.MAX_NODES:,} fairalloc simulates"
                )
            if not isinstance(caps, dict):
                raise CaseError(f"nodes[{k}].resources: expected a mapping {{resource: capacity}}")
            for key in ("cpu", "mem"):
                if key not in caps:
                    raise CaseError(f"nodes[{k}].resources.{key}: missing (every node has cpu and mem)")
            order = ["cpu", "mem"] + [str(r) for r in caps if r not in ("cpu", "mem")]
            values = {str(r): v for r, v in caps.items()}
            built.append(
                NodePool(
                    count,
                    tuple(
                        (r, _num(values[r], f"nodes[{k}].resources.{_short(r)}", positive=r in ("cpu", "mem")))
                        for r in order
                    ),
                )
            )
        if not built:
            raise CaseError("nodes: no node pool")
        jobs, queues, group_weights = tuple(jobs), dict(queues or {}), dict(group_weights or {})
        plain = len(built) == 1 and len(built[0].resources) == 2
        cpu = max(p.capacity["cpu"] for p in built)
        mem = max(p.capacity["mem"] for p in built)
        return cls(total, cpu, mem, jobs, name, horizon, queues, group_weights, () if plain else tuple(built))

    @property
    def node_pools(self) -> tuple[NodePool, ...]:
        """The pools, the plain form included (one pool of ``nodes`` nodes of ``node_cpu`` / ``node_mem``)."""
        return self.pools or (NodePool(self.nodes, (("cpu", self.node_cpu), ("mem", self.node_mem))),)

    @property
    def resources(self) -> tuple[str, ...]:
        """The cluster's resource names: ``cpu``, ``mem``, then the others in order of appearance."""
        seen = {"cpu": None, "mem": None}
        for pool in self.pools:
            seen.update((r, None) for r, _ in pool.resources if r not in seen)
        return tuple(seen)

    @property
    def totals(self) -> tuple[float, ...]:
        """The cluster's capacity of each of :attr:`resources` (count x capacity, summed over pools)."""
        return tuple(sum(p.count * float(p.capacity.get(r, 0.0)) for p in self.node_pools) for r in self.resources)

    @property
    def n_tasks(self) -> int:
        return sum(j.n_tasks for j in self.jobs)

    @property
    def owners(self) -> tuple[str, ...]:
        """Owners in order of first appearance (by submit time, then job order)."""
        seen: dict[str, None] = {}
        for j in sorted(self.jobs, key=lambda j: j.submit):
            seen.setdefault(j.owner, None)
        return tuple(seen)


# --------------------------------------------------------------------------- validation


def _num(value, where: str, *, positive: bool = False, allow_zero: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise CaseError(f"{where}: {excerpt(value)} is not a number") from None
        else:
            raise CaseError(f"{where}: {excerpt(value)} is not a number")
    try:
        value = float(value)
    except OverflowError:  # a huge YAML integer
        raise CaseError(f"{where}: {excerpt(value)} is not a finite number") from None
    if not math.isfinite(value):
        raise CaseError(f"{where}: {excerpt(value)} is not a finite number")
    if positive and value <= 0:
        raise CaseError(f"{where}: must be > 0 (got {value:g})")
    if value < 0:
        raise CaseError(f"{where}: must be >= 0 (got {value:g})")
    if value != 0 and not limits.MIN_MAGNITUDE <= value <= limits.MAX_MAGNITUDE:
        raise CaseError(
            f"{where}: {value:g} is outside [{limits.MIN_MAGNITUDE:g}, {limits.MAX_MAGNITUDE:g}] "
            "(the magnitudes fairalloc computes with)"
        )
    return value


def _short(text) -> str:
    """A name for a field path, cut at a few dozen characters (unquoted, unlike :func:`excerpt`)."""
    text = str(text)
    return text if len(text) <= 40 else text[:37] + "..."


def _count(value, where: str, limit: int, what: str) -> int:
    """A positive integer count of at most ``limit`` (a constant of :mod:`fairalloc.core.limits`)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise CaseError(f"{where}: must be a positive integer (got {excerpt(value)})")
    if value > limit:
        raise CaseError(f"{where}: {int(value):,} {what}, more than the {limit:,} fairalloc simulates")
    return int(value)


def _task(cpu, mem, duration, where: str, extra=()) -> Task:
    """A checked task; ``extra``: its other demands ``((name, amount), ...)`` (zeros are dropped)."""
    return Task(*_task_values(cpu, mem, duration, where, extra))


def _task_values(cpu, mem, duration, where: str, extra=()) -> tuple:
    """The checked fields of :func:`_task` (:func:`validate` checks tasks without building them)."""
    c = _num(cpu, f"{where}.cpu")
    m = _num(mem, f"{where}.mem")
    d = _num(duration, f"{where}.duration", positive=True)
    more = (
        tuple((r, a) for r, a in ((r, _num(a, f"{where}.resources.{_short(r)}")) for r, a in extra) if a != 0)
        if extra
        else ()
    )
    if c == 0 and m == 0 and not more:
        raise CaseError(
            f"{where}: demands nothing (cpu and mem both 0)"
            if not extra
            else f"{where}: demands nothing (every resource 0)"
        )
    return c, m, d, more


def _show(demands: dict) -> str:
    """``<1 CPU, 2 GB, 1 gpu>``: a task's demands or a node's capacities in a message."""
    names = {"cpu": "CPU", "mem": "GB"}
    return "<" + ", ".join(f"{v:g} {names.get(r, _short(r))}" for r, v in demands.items()) + ">"


def event_bound(w: Workload) -> float:
    """An upper bound on the events simulating ``w`` takes (arrivals, deadlines, task finishes):
    the sum of :func:`_job_events`."""
    return sum(_job_events(j, w.horizon) for j in w.jobs)


def _shortest_run(j: Job) -> float:
    """No copy of ``j`` finishes sooner: the longest task of each phase, phase after phase."""
    return sum(max(t.duration for t in p) for p in j.phases)


def _job_events(j: Job, horizon) -> float:
    """A job copy takes one arrival, one deadline (with ``until``) and one finish per task; a
    resubmitting job runs at most ``(horizon - submit) / shortest run + 1`` copies (a copy is
    resubmitted only when it finishes before the horizon)."""
    copies = 1.0
    if j.resubmit and horizon is not None:
        copies = math.floor(max(0.0, float(horizon) - float(j.submit)) / _shortest_run(j)) + 1.0
    return copies * (j.n_tasks + 1 + (j.until is not None))


def _tally(n: int, total: int, where: str) -> int:
    """``total + n`` tasks, refused beyond the limits of a job (``n``) or of a workload."""
    if n > limits.MAX_TASKS_PER_JOB:
        raise CaseError(
            f"{where}.phases: {n} tasks, more than the {limits.MAX_TASKS_PER_JOB:,} of a job fairalloc simulates"
        )
    if total + n > limits.MAX_TASKS:
        raise CaseError(
            f"{where}.phases: the jobs up to this one have {total + n} tasks, more than the "
            f"{limits.MAX_TASKS:,} of a workload fairalloc simulates"
        )
    return total + n


def check_limits(w: Workload, *, events: bool = True) -> Workload:
    """Refuse a workload beyond the bounds of :mod:`fairalloc.core.limits` (nodes, jobs, owners, tasks,
    and with ``events`` the events of its simulation: :func:`event_bound`) with one line naming the
    field; :func:`validate` calls it (the events once every duration is known to be positive)."""
    _count(w.nodes, "nodes.count", limits.MAX_NODES, "nodes")
    if len(w.jobs) > limits.MAX_JOBS:
        raise CaseError(f"jobs: {len(w.jobs)} jobs, more than the {limits.MAX_JOBS:,} fairalloc simulates")
    total = 0
    owners = set()
    for k, j in enumerate(w.jobs):
        total = _tally(j.n_tasks, total, f"jobs[{k}] ({_short(j.name)})")
        owners.add(j.owner)
        if len(owners) > limits.MAX_OWNERS:
            raise CaseError(
                f"jobs[{k}] ({_short(j.name)}).owner: more than {limits.MAX_OWNERS:,} owners "
                "(fairness is computed over every owner at every sample)"
            )
    if not events:
        return w
    bound = event_bound(w)
    if bound > limits.MAX_EVENTS:
        worst = max(range(len(w.jobs)), key=lambda k: _job_events(w.jobs[k], w.horizon))
        j = w.jobs[worst]
        run = _shortest_run(j)
        why = (
            (
                f"; a resubmitting job with a run of {run:g} s runs up to "
                f"{(float(w.horizon) - float(j.submit)) / run:.3g} times before the horizon {float(w.horizon):g}"
            )
            if j.resubmit and w.horizon is not None
            else ""
        )
        field = f"jobs[{worst}] ({_short(j.name)})" + (".resubmit" if why else "")
        raise CaseError(
            f"{field}: simulating this workload takes up to {bound:.4g} events, more than the "
            f"{limits.MAX_EVENTS:,} fairalloc simulates{why}"
        )
    return w


def validate(w: Workload) -> Workload:
    """Check a :class:`Workload` built in Python (the loaders call it too); returns it."""
    check_limits(w, events=False)
    _num(w.node_cpu, "nodes.cpu", positive=True)
    _num(w.node_mem, "nodes.mem", positive=True)
    pools = _check_pools(w)
    resource_names = w.resources
    if w.horizon is not None:
        _num(w.horizon, "horizon", positive=True)
    if not w.jobs:
        raise CaseError("jobs: empty workload (no job)")
    names = set()
    for k, j in enumerate(w.jobs):
        where = f"jobs[{k}] ({_short(j.name)})"
        if j.name in names:
            raise CaseError(f"{where}.name: duplicate job name {excerpt(j.name)}")
        names.add(j.name)
        if not j.owner:
            raise CaseError(f"{where}.owner: missing")
        _num(j.submit, f"{where}.submit")
        if not j.phases or not j.phases[0]:
            raise CaseError(f"{where}.phases.map: a job needs a non-empty map phase")
        if len(j.phases) > 2:
            raise CaseError(f"{where}.phases: at most two phases (map, reduce), got {len(j.phases)}")
        if len(j.phases) == 2 and not j.phases[1]:
            raise CaseError(f"{where}.phases.reduce: empty phase (leave it out instead)")
        for p, tasks in enumerate(j.phases):
            checked = None
            for t, task in enumerate(tasks):
                if task is checked:  # ``count`` tasks: one object, checked once
                    continue
                tw = f"{where}.phases.{PHASES[p]}[{t}]"
                if pools is None and not task.extra:  # the plain cluster: one node shape, cpu and mem
                    _task_values(task.cpu, task.mem, task.duration, tw)
                    if task.cpu > w.node_cpu or task.mem > w.node_mem:
                        raise CaseError(
                            f"{tw}: task <{task.cpu:g} CPU, {task.mem:g} GB> is larger than every node "
                            f"(<{w.node_cpu:g} CPU, {w.node_mem:g} GB>)"
                        )
                else:
                    _check_task_on_pools(task, tw, w, pools, resource_names)
                checked = task
        if j.resubmit and w.horizon is None:
            raise CaseError(f"{where}.resubmit: a closed-loop job needs a workload horizon")
        if j.until is not None:
            _num(j.until, f"{where}.until")
        _num(j.weight, f"{where}.weight", positive=True)
    for q, frac in w.queues.items():
        _num(frac, f"queues.{excerpt(q)}", positive=True)
    for g, weight in w.group_weights.items():
        _num(weight, f"group_weights.{excerpt(g)}", positive=True)
    return check_limits(w)


def _check_pools(w: Workload) -> list[dict] | None:
    """The capacities of ``w``'s node pools, checked (``None`` for the plain form)."""
    if not w.pools:
        return None
    names = w.resources
    if len(names) > limits.MAX_SIM_RESOURCES:
        raise CaseError(
            f"nodes: {len(names):,} resources, more than the {limits.MAX_SIM_RESOURCES:,} of a cluster "
            "fairalloc simulates"
        )
    caps, total = [], 0
    for k, pool in enumerate(w.pools):
        if not isinstance(pool, NodePool):
            raise CaseError(f"nodes[{k}]: expected a NodePool, got {type(pool).__name__} (use Workload.from_pools)")
        total += _count(pool.count, f"nodes[{k}].count", limits.MAX_NODES, "nodes")
        cap = pool.capacity
        for r in ("cpu", "mem"):
            _num(cap.get(r), f"nodes[{k}].resources.{r}", positive=True)
        for r, v in cap.items():
            _resource_name(r, f"nodes[{k}].resources")
            _num(v, f"nodes[{k}].resources.{_short(r)}")
        caps.append(cap)
    if total != w.nodes or w.node_cpu != max(c["cpu"] for c in caps) or w.node_mem != max(c["mem"] for c in caps):
        raise CaseError(
            f"nodes: count {excerpt(w.nodes)}, cpu {excerpt(w.node_cpu)}, mem {excerpt(w.node_mem)} differ "
            "from the pools' total count and largest cpu / mem (build it with Workload.from_pools)"
        )
    for r, t in zip(names, w.totals):
        if t <= 0:
            raise CaseError(f"nodes: no pool has any {_short(r)} (a resource of the cluster needs a capacity)")
    return caps


def _resource_name(name, where: str) -> str:
    """A resource name: text on one line of at most :data:`~fairalloc.core.limits.MAX_NAME_CHARS`
    characters, not one of the sample series' names."""
    if not isinstance(name, str) or not name.strip() or not name.isprintable() or len(name) > limits.MAX_NAME_CHARS:
        raise CaseError(
            f"{where}: resource name {excerpt(name)} must be printable text on one line of 1 to "
            f"{limits.MAX_NAME_CHARS} characters"
        )
    if name in RESERVED_RESOURCE_NAMES:
        raise CaseError(
            f"{where}.{name}: a reserved name (the simulation's samples hold "
            f"{', '.join(RESERVED_RESOURCE_NAMES)}); name the resource otherwise"
        )
    return name


#: names no resource may have: keys of :attr:`SimulationResult.samples` beside the resources' series
RESERVED_RESOURCE_NAMES = ("time", "shares")


def _check_task_on_pools(task: Task, where: str, w: Workload, pools, names: tuple[str, ...]) -> None:
    """A task's demands are declared resources (``names``) and fit the nodes of at least one pool."""
    _task_values(task.cpu, task.mem, task.duration, where, task.extra)
    for r, _ in task.extra:
        if r in ("cpu", "mem") or r not in names:
            what = "given twice (as a field and in resources)" if r in ("cpu", "mem") else unknown("resource", r, names)
            raise CaseError(f"{where}.resources.{_short(r)}: {what}")
    demand = task.resources
    for cap in pools or [{"cpu": w.node_cpu, "mem": w.node_mem}]:
        if all(a <= cap.get(r, 0.0) for r, a in demand.items()):
            return
    listed = [_show(c) for c in (pools or [{"cpu": w.node_cpu, "mem": w.node_mem}])]
    listing = ", ".join(listed[:3]) + (f", ... ({len(listed)} pools)" if len(listed) > 3 else "")
    raise CaseError(
        f"{where}: task {_show({r: a for r, a in demand.items() if a})} fits no node of any pool (nodes: {listing})"
    )


# --------------------------------------------------------------------------- YAML

_JOB_KEYS = {"name", "owner", "user", "queue", "group", "submit", "class", "resubmit", "until", "weight", "phases"}


def _phase(spec, where: str) -> tuple[Task, ...]:
    if isinstance(spec, list):
        spec = {"tasks": spec}
    if not isinstance(spec, dict):
        raise CaseError(f"{where}: expected a mapping {{count, cpu, mem, duration}} or {{tasks: [...]}}")
    if "tasks" in spec:
        extra = set(spec) - {"tasks"}
        if extra:
            raise CaseError(f"{where}: 'tasks' cannot be combined with {', '.join(sorted(extra))}")
        tasks = spec["tasks"]
        if not isinstance(tasks, list) or not tasks:
            raise CaseError(f"{where}.tasks: expected a non-empty list of tasks")
        _count(len(tasks), f"{where}.tasks", limits.MAX_TASKS_PER_JOB, "tasks")
        out = []
        for t, item in enumerate(tasks):
            if not isinstance(item, dict):
                raise CaseError(f"{where}.tasks[{t}]: expected a mapping {{cpu, mem, resources, duration}}")
            extra = set(item) - {"cpu", "mem", "resources", "duration"}
            if extra:
                raise CaseError(f"{where}.tasks[{t}]: unknown field {excerpt(sorted(map(str, extra))[0])}")
            if "duration" not in item:
                raise CaseError(f"{where}.tasks[{t}].duration: missing")
            out.append(_task_spec(item, f"{where}.tasks[{t}]"))
        return tuple(out)
    extra = set(spec) - {"count", "cpu", "mem", "resources", "duration"}
    if extra:
        raise CaseError(f"{where}: unknown field {excerpt(sorted(map(str, extra))[0])}")
    for key in ("count", "duration"):
        if key not in spec:
            raise CaseError(f"{where}.{key}: missing")
    count = _count(spec["count"], f"{where}.count", limits.MAX_TASKS_PER_JOB, "tasks")
    return (_task_spec(spec, where),) * count


def _amounts(spec: dict, where: str) -> dict:
    """The ``cpu:`` / ``mem:`` fields of a task or node pool and its ``resources:`` mapping, merged
    (``resources.cpu`` beside ``cpu:`` is refused): ``{name: value}`` as written, in that order."""
    amounts = {k: spec[k] for k in ("cpu", "mem") if k in spec}
    more = spec.get("resources")
    if more is None:
        return amounts
    if not isinstance(more, dict):
        raise CaseError(f"{where}.resources: expected a mapping {{resource: amount}}")
    if len(more) > limits.MAX_SIM_RESOURCES:
        raise CaseError(
            f"{where}.resources: {len(more):,} resources, more than the {limits.MAX_SIM_RESOURCES:,} "
            "of a cluster fairalloc simulates"
        )
    for r, v in more.items():
        name = _resource_name(
            str(r) if isinstance(r, (int, float)) and not isinstance(r, bool) else r, f"{where}.resources"
        )
        if name in amounts:
            raise CaseError(f"{where}.resources.{name}: given twice (as {name}: and in resources)")
        amounts[name] = v
    return amounts


def _task_spec(spec: dict, where: str) -> Task:
    amounts = _amounts(spec, where)
    extra = tuple((r, v) for r, v in amounts.items() if r not in ("cpu", "mem"))
    return _task(amounts.get("cpu", 0), amounts.get("mem", 0), spec["duration"], where, extra)


_POOL_KEYS = ("count", "cpu", "mem", "resources")


def _parse_nodes(nodes):
    """``nodes:`` of a workload file: ``{count, cpu, mem}`` (identical nodes), the same with
    ``resources: {name: capacity}``, or a list of such pools. Returns ``(count, cpu, mem, pools)``,
    the arguments of :class:`Workload` (pools ``()`` for one pool of CPU and memory only)."""
    if isinstance(nodes, dict):
        specs, wheres = [nodes], ["nodes"]
    elif isinstance(nodes, list) and nodes:
        specs, wheres = nodes, [f"nodes[{k}]" for k in range(len(nodes))]
    else:
        raise CaseError(
            "nodes: expected a mapping {count, cpu, mem} or a list of node pools {count, resources: {cpu, mem, ...}}"
        )
    pools = []
    total = 0
    for spec, where in zip(specs, wheres):
        if not isinstance(spec, dict):
            raise CaseError(f"{where}: expected a node pool {{count, resources: {{cpu, mem, ...}}}}")
        extra = [k for k in spec if k not in _POOL_KEYS]
        if extra:
            raise CaseError(
                f"{where}.{shown(extra[0])}: unknown field (a node pool has "
                f"{', '.join(_POOL_KEYS)}; name other resources in resources:)"
            )
        if "count" not in spec:
            raise CaseError(f"{where}.count: missing")
        total += _count(spec["count"], f"{where}.count", limits.MAX_NODES, "nodes")
        if total > limits.MAX_NODES:
            raise CaseError(
                f"{where}.count: the pools up to this one have {total:,} nodes, more than the "
                f"{limits.MAX_NODES:,} fairalloc simulates"
            )
        amounts = _amounts(spec, where)
        for key in ("cpu", "mem"):
            if key not in amounts:
                raise CaseError(f"{where}.{key}: missing")
        caps = {
            r: _num(
                v,
                f"{where}.{r}" if r in ("cpu", "mem") and r in spec else f"{where}.resources.{r}",
                positive=r in ("cpu", "mem"),
            )
            for r, v in amounts.items()
        }
        pools.append((spec["count"], caps))
    w = Workload.from_pools(pools, ())
    return w.nodes, w.node_cpu, w.node_mem, w.pools


def parse_workload(data, name: str = "workload") -> Workload:
    """A :class:`Workload` from the mapping a YAML file holds (see the module docstring)."""
    if not isinstance(data, dict):
        raise CaseError(f"{name}: expected a mapping with 'nodes' and 'jobs'")
    unknown = set(data) - {"name", "nodes", "jobs", "horizon", "queues", "group_weights", "description", "source"}
    if unknown:
        raise CaseError(
            f"{excerpt(sorted(map(str, unknown))[0])}: unknown field (fields: name, nodes, jobs, horizon, queues, "
            "group_weights)"
        )
    count, node_cpu, node_mem, pools = _parse_nodes(data.get("nodes"))
    horizon = None if data.get("horizon") is None else _num(data["horizon"], "horizon", positive=True)
    queues = data.get("queues") or {}
    if not isinstance(queues, dict):
        raise CaseError("queues: expected a mapping {owner: capacity fraction}")
    queues = {str(q): _num(v, f"queues.{q}", positive=True) for q, v in queues.items()}
    group_weights = data.get("group_weights") or {}
    if not isinstance(group_weights, dict):
        raise CaseError("group_weights: expected a mapping {owner: weight}")
    group_weights = {str(g): _num(v, f"group_weights.{g}", positive=True) for g, v in group_weights.items()}
    jobs_data = data.get("jobs")
    if jobs_data is None or (isinstance(jobs_data, list) and not jobs_data):
        raise CaseError("jobs: empty workload (no job)")
    if not isinstance(jobs_data, list):
        raise CaseError("jobs: expected a list of jobs")
    _count(len(jobs_data), "jobs", limits.MAX_JOBS, "jobs")
    jobs = []
    total = 0
    for k, jd in enumerate(jobs_data):
        where = f"jobs[{k}]"
        if not isinstance(jd, dict):
            raise CaseError(f"{where}: expected a mapping")
        unknown = set(jd) - _JOB_KEYS
        if unknown:
            raise CaseError(f"{where}.{excerpt(sorted(map(str, unknown))[0])}: unknown field")
        owners = [jd[key] for key in ("owner", "user", "queue", "group") if key in jd]
        if len(owners) != 1:
            raise CaseError(f"{where}.owner: give exactly one of owner / user / queue / group")
        if "submit" not in jd:
            raise CaseError(f"{where}.submit: missing")
        phases = jd.get("phases")
        if not isinstance(phases, dict) or not phases:
            raise CaseError(f"{where}.phases: expected a mapping {{map: ..., reduce: ...}}")
        for p in phases:
            if p not in PHASES:
                raise CaseError(f"{where}.phases.{p}: unknown phase name (phases: map, reduce)")
        if "reduce" in phases and "map" not in phases:
            raise CaseError(f"{where}.phases.reduce: a reduce phase without a map phase")
        if "map" not in phases:
            raise CaseError(f"{where}.phases.map: missing")
        built = tuple(_phase(phases[p], f"{where}.phases.{p}") for p in PHASES if p in phases)
        total = _tally(sum(len(b) for b in built), total, where)  # before a huge job is built
        until = jd.get("until")
        jobs.append(
            Job(
                name=str(jd.get("name", f"job-{k}")),
                owner=str(owners[0]),
                submit=_num(jd["submit"], f"{where}.submit"),
                phases=built,
                job_class=str(jd.get("class", "")),
                resubmit=bool(jd.get("resubmit", False)),
                until=None if until is None else _num(until, f"{where}.until"),
                weight=_num(jd.get("weight", 1.0), f"{where}.weight", positive=True),
            )
        )
    return validate(
        Workload(
            count, node_cpu, node_mem, tuple(jobs), str(data.get("name", name)), horizon, queues, group_weights, pools
        )
    )


def load_yaml(path) -> Workload:
    """Read a workload YAML file (safe loader, duplicate keys refused: :func:`fairalloc.io.cases.read_yaml_file`)."""
    from fairalloc.io.cases import read_yaml_file

    return parse_workload(read_yaml_file(path, "a workload needs nodes and jobs"), Path(path).stem)


CSV_COLUMNS = ("job", "user", "submit", "phase", "cpu", "mem", "duration")


def load_csv(path, *, nodes: int, node_cpu: float, node_mem: float, horizon: float | None = None) -> Workload:
    """One row per task (header ``job,user,submit,phase,cpu,mem,duration``); jobs in first-row order."""
    path = Path(path)
    nodes = _count(nodes, "--nodes", limits.MAX_NODES, "nodes")
    try:
        stream = open(path, encoding="utf-8", newline="")
    except FileNotFoundError:
        raise CaseError(f"{path}: no such file") from None
    except OSError as exc:
        raise CaseError(f"{path}: {exc.strerror or exc}") from None
    jobs: dict[str, dict] = {}
    try:
        with stream:
            _read_csv_rows(stream, path, jobs)
    except UnicodeDecodeError:
        raise CaseError(f"{path}: not UTF-8 text") from None
    except csv.Error as exc:
        raise CaseError(f"{path}: unreadable CSV ({excerpt(str(exc))})") from None
    if not jobs:
        raise CaseError(f"{path}: empty workload (no task rows)")
    built = []
    for name, j in jobs.items():
        if j["reduce"] and not j["map"]:
            raise CaseError(
                f"{path}, row {j['row']}: phase: job {excerpt(name)} has a reduce phase without a map phase"
            )
        phases = (tuple(j["map"]),) + ((tuple(j["reduce"]),) if j["reduce"] else ())
        built.append(Job(name, j["user"], j["submit"], phases))
    return validate(Workload(int(nodes), float(node_cpu), float(node_mem), tuple(built), path.stem, horizon))


def _read_csv_rows(stream, path, jobs: dict) -> None:
    tasks = 0
    reader = csv.reader(stream)
    header = next(reader, None)
    if header is None:
        raise CaseError(f"{path}: empty workload (no header, no task)")
    header = [h.strip() for h in header]
    if tuple(header) != CSV_COLUMNS:
        raise CaseError(f"{path}, row 1: header must be {','.join(CSV_COLUMNS)} (got {excerpt(','.join(header))})")
    for row_no, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        where = f"{path}, row {row_no}"
        if len(row) != len(CSV_COLUMNS):
            raise CaseError(f"{where}: {len(row)} columns, expected {len(CSV_COLUMNS)} ({','.join(CSV_COLUMNS)})")
        job, user, submit, phase, cpu, mem, duration = (c.strip() for c in row)
        if not job:
            raise CaseError(f"{where}: job: missing")
        if not user:
            raise CaseError(f"{where}: user: missing")
        if phase not in PHASES:
            raise CaseError(f"{where}: phase: unknown phase name {excerpt(phase)} (phases: map, reduce)")
        s = _num(submit, f"{where}: submit")
        task = _task(cpu, mem, duration, f"{where}: task")
        tasks += 1
        if tasks > limits.MAX_TASKS:
            raise CaseError(
                f"{where}: more than {limits.MAX_TASKS:,} task rows, the most of a workload fairalloc simulates"
            )
        j = jobs.get(job)
        if j is None:
            if len(jobs) >= limits.MAX_JOBS:
                raise CaseError(
                    f"{where}: job: more than {limits.MAX_JOBS:,} jobs, the most of a workload fairalloc simulates"
                )
            j = jobs[job] = {"user": user, "submit": s, "map": [], "reduce": [], "row": row_no}
        if j["user"] != user or j["submit"] != s:
            raise CaseError(f"{where}: user/submit of job {excerpt(job)} differ from its row {j['row']}")
        j[phase].append(task)


# --------------------------------------------------------------------------- generators


def _jitter(rng: np.random.Generator, mean: float, n: int, spread: float) -> tuple[float, ...]:
    if spread == 0:
        return (float(mean),) * n
    return tuple(float(x) for x in np.round(mean * rng.uniform(1 - spread, 1 + spread, n), 3))


def drf_7_2(
    *,
    nodes: int = 48,
    horizon: float = 600.0,
    tasks_per_job: int = 80,
    small_users: int = 4,
    large_users: int = 4,
    small_duration: float = 20.0,
    large_duration: float = 40.0,
    spread: float = 0.0,
    seed: int = 0,
) -> Workload:
    """The DRF paper's section 7.2 set-up (docs/formulations.md section 8).

    ``nodes`` nodes of 8 CPU / 6 GB; ``small_users`` users (``small-1``...) run jobs of
    ``tasks_per_job`` tasks ``<1 CPU, 0.5 GB>``, ``large_users`` users (``large-1``...) jobs of tasks
    ``<2 CPU, 2 GB>``; each user has one job at a time and submits an identical one as soon as it
    finishes (closed loop) until ``horizon`` (the paper: 10 minutes). Single-phase (map-only) jobs.

    Durations are OUR choice (the paper does not give them): small-job tasks ``small_duration``
    = 20 s, large-job tasks ``large_duration`` = 40 s, optionally each multiplied by a uniform
    factor in ``[1 - spread, 1 + spread]`` drawn from ``seed`` (default ``spread = 0``: exact).
    """
    _count(tasks_per_job, "tasks_per_job", limits.MAX_TASKS_PER_JOB, "tasks")
    for what, users in (("small_users", small_users), ("large_users", large_users)):
        if users != 0:
            _count(users, what, limits.MAX_OWNERS, "users")
    rng = np.random.default_rng(seed)
    jobs = []
    for cls, users, cpu, mem, dur in (
        ("small", small_users, 1.0, 0.5, small_duration),
        ("large", large_users, 2.0, 2.0, large_duration),
    ):
        for u in range(1, users + 1):
            tasks = tuple(Task(cpu, mem, d) for d in _jitter(rng, dur, tasks_per_job, spread))
            jobs.append(Job(f"{cls}-{u}", f"{cls}-{u}", 0.0, (tasks,), cls, resubmit=True))
    return validate(Workload(nodes, 8.0, 6.0, tuple(jobs), "drf-7.2", float(horizon)))


def drf_7_1(
    *, nodes: int = 48, period: float = 120.0, task_duration: float = 10.0, tasks_per_segment: int | None = None
) -> Workload:
    """The DRF paper's section 7.1 set-up: two jobs whose task demands switch every ``period``.

    ``nodes`` nodes of 4 CPU / 14 GB. Owner ``job1`` runs tasks <1 CPU, 10 GB>, then <2, 4>, then
    <1, 7>; owner ``job2`` <1, 1>, then <1, 3>, then <1, 4>, each for ``period`` seconds (the
    paper: 2 minutes, 6 minutes in all). Each segment is a job submitted at ``k * period`` with
    ``until = (k + 1) * period`` (no task starts after its segment; unstarted tasks are
    abandoned), so owners always have work. Task durations: ``task_duration`` = 10 s, OUR choice.
    ``tasks_per_segment`` (default: enough to keep the whole cluster busy for the segment) tasks.
    """
    demands = {"job1": [(1, 10), (2, 4), (1, 7)], "job2": [(1, 1), (1, 3), (1, 4)]}
    _num(period, "period", positive=True)
    _num(task_duration, "task_duration", positive=True)
    if tasks_per_segment is None:
        need = math.ceil(_count(nodes, "nodes.count", limits.MAX_NODES, "nodes") * 4 * period / task_duration)
        if need > limits.MAX_TASKS_PER_JOB:
            raise CaseError(
                f"period: a segment needs {need:.4g} tasks of {task_duration:g} s to keep the cluster "
                f"busy, more than the {limits.MAX_TASKS_PER_JOB:,} of a job fairalloc simulates"
            )
        tasks_per_segment = int(need)
    _count(tasks_per_segment, "tasks_per_segment", limits.MAX_TASKS_PER_JOB, "tasks")
    jobs = []
    for owner, segs in demands.items():
        for k, (cpu, mem) in enumerate(segs):
            jobs.append(
                Job(
                    f"{owner}-seg{k + 1}",
                    owner,
                    k * period,
                    ((Task(float(cpu), float(mem), float(task_duration)),) * tasks_per_segment,),
                    f"seg{k + 1}",
                    until=(k + 1) * period,
                )
            )
    return validate(Workload(nodes, 4.0, 14.0, tuple(jobs), "drf-7.1", 3 * period))


#: the MFS paper's Table 1 ("A Multi-resource Fair Scheduler of Hadoop"; docs/formulations.md section 7):
#: jobs, maps per job, reduces per job
MFS_SETS = {"small": {"small": 80}, "large": {"large": 40}, "mixed": {"small": 40, "large": 20}}
MFS_SHAPES = {"small": ((1, 10), (1, 1)), "large": ((70, 160), (7, 16))}


def mfs_workload(
    kind: str = "mixed",
    *,
    nodes: int = 10,
    node_cpu: float = 16.0,
    node_mem: float = 32.0,
    seed: int = 0,
    map_duration: tuple[float, float] = (10.0, 30.0),
    reduce_duration: tuple[float, float] = (20.0, 60.0),
) -> Workload:
    """The MFS paper's job sets (docs/formulations.md section 7), all jobs submitted at time 0.

    * ``small``: 80 jobs, 1-10 maps and 1 reduce each; ``large``: 40 jobs, 70-160 maps and 7-16
      reduces; both in four job classes of equal size, one owner per class (``group-1``..``group-4``);
    * ``mixed``: 40 small jobs owned by ``A`` and 20 large jobs owned by ``B``.

    Per job (as in the paper's set-up): demand vector CPU 1 or 2, memory uniform in 0.5-2 GB,
    shared by all its tasks; map and reduce counts uniform in the table's ranges.
    OUR choices (the paper's text lost them): the cluster (``nodes`` nodes of 16 CPU / 32 GB;
    the paper's slot counts 13-17 suggest about 16 cores), task durations uniform in
    ``map_duration`` / ``reduce_duration`` seconds per job. Deterministic for ``seed``.
    """
    if kind not in MFS_SETS:
        raise CaseError(f"kind: unknown MFS set {excerpt(kind)} (sets: {', '.join(MFS_SETS)})")
    rng = np.random.default_rng(seed)
    jobs = []
    for cls, n in MFS_SETS[kind].items():
        (m_lo, m_hi), (r_lo, r_hi) = MFS_SHAPES[cls]
        for k in range(n):
            maps, reduces = int(rng.integers(m_lo, m_hi + 1)), int(rng.integers(r_lo, r_hi + 1))
            cpu = float(rng.integers(1, 3))
            mem = round(float(rng.uniform(0.5, 2.0)), 3)
            md = round(float(rng.uniform(*map_duration)), 3)
            rd = round(float(rng.uniform(*reduce_duration)), 3)
            owner = ("A" if cls == "small" else "B") if kind == "mixed" else f"group-{k % 4 + 1}"
            jobs.append(
                Job(f"{cls}-{k + 1}", owner, 0.0, ((Task(cpu, mem, md),) * maps, (Task(cpu, mem, rd),) * reduces), cls)
            )
    return validate(Workload(nodes, node_cpu, node_mem, tuple(jobs), f"mfs-{kind}"))


# --------------------------------------------------------------------------- Alibaba cluster-trace-v2018

#: the columns of cluster-trace-v2018 ``batch_task.csv``, in file order (the file has no header)
ALIBABA_BATCH_TASK_COLUMNS = (
    "task_name",
    "instance_num",
    "job_name",
    "task_type",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
)


def load_alibaba_batch_task(
    path,
    *,
    nodes: int = 100,
    node_cpu: float = 96.0,
    node_mem: float = 100.0,
    max_jobs: int | None = None,
    horizon: float | None = None,
) -> Workload:
    """A workload from Alibaba cluster-trace-v2018 ``batch_task`` rows (CSV, no header, 9 columns).

    Assumptions (documented, the table does not say everything a workload needs):

    * kept: rows with ``status == Terminated``, ``end_time > start_time`` and both plans > 0;
      other rows are skipped (the trace has many zero / missing plans);
    * each row is ``instance_num`` identical tasks: ``cpu = plan_cpu / 100`` cores (plan_cpu is
      per cent of a core), ``mem = plan_mem / 100 * node_mem`` (plan_mem is normalised to a
      machine's memory, 0-100; default ``node_mem = 100`` so mem is in those units), ``duration =
      end_time - start_time`` seconds (the task's wall-clock time, not its instances');
    * a job's submit time is the earliest ``start_time`` of its rows, shifted so the first job
      submits at 0 (``batch_task`` has no submit time);
    * the task DAG is flattened to two phases: tasks whose name starts with ``M`` (and names that
      are not DAG names, e.g. ``task_...``) are the map phase; ``R`` and ``J`` tasks the reduce
      phase; a job with no map task keeps its tasks as one (map) phase;
    * the trace has no user column: each job is its own owner (``owner = job_name``);
    * the cluster (``nodes`` machines of 96 cores, 100 memory units) is a parameter; a task
      larger than a node is an error, as for any workload.

    Jobs in order of submit time; ``max_jobs`` keeps the first ones.
    """
    path = Path(path)
    from fairalloc.scheduling.traces import table_rows

    _count(nodes, "nodes", limits.MAX_NODES, "nodes")
    if max_jobs is not None:
        _count(max_jobs, "max_jobs", limits.MAX_JOBS, "jobs")
    rows: dict[str, dict] = {}
    kept = 0
    for where, fields in table_rows([path], ALIBABA_BATCH_TASK_COLUMNS, "batch_task"):
        task_name, inst, job, _type, status, start, end, pcpu, pmem = fields
        if status != "Terminated" or not pcpu or not pmem or not start or not end:
            continue
        try:
            n_inst = int(float(inst))
        except (ValueError, OverflowError):
            raise CaseError(f"{where}: instance_num {excerpt(inst)} is not an integer") from None
        s = _num(start, f"{where}: start_time")
        e = _num(end, f"{where}: end_time")
        c = _num(pcpu, f"{where}: plan_cpu") / 100.0
        m = _num(pmem, f"{where}: plan_mem") / 100.0 * node_mem
        if e <= s or c <= 0 or m <= 0 or n_inst < 1:
            continue
        phase = "reduce" if task_name[:1] in ("R", "J") and task_name[1:2].isdigit() else "map"
        j = rows.setdefault(job, {"submit": s, "map": [], "reduce": [], "tasks": 0})
        j["submit"] = min(j["submit"], s)
        j["tasks"] += n_inst
        if j["tasks"] > limits.MAX_TASKS_PER_JOB:
            raise CaseError(
                f"{where}: instance_num: job {excerpt(job)} has more than "
                f"{limits.MAX_TASKS_PER_JOB:,} tasks, the most of a job fairalloc simulates"
            )
        kept += 1
        if kept > limits.MAX_TRACE_TASKS:
            raise CaseError(
                f"{where}: more than {limits.MAX_TRACE_TASKS:,} usable rows; cut the file first (e.g. with head)"
            )
        j[phase].append((Task(c, m, e - s), n_inst))
    if not rows:
        raise CaseError(f"{path}: empty workload (no Terminated task with start < end and plans > 0)")
    order = sorted(rows.items(), key=lambda kv: (kv[1]["submit"], kv[0]))
    if max_jobs is not None:
        order = order[:max_jobs]
    if len(order) > limits.MAX_JOBS:
        raise CaseError(
            f"{path}: {len(order)} jobs, more than the {limits.MAX_JOBS:,} fairalloc simulates; "
            "keep the first ones with max_jobs"
        )
    total = sum(j["tasks"] for _, j in order)
    if total > limits.MAX_TASKS:
        raise CaseError(
            f"{path}: instance_num: the jobs kept have {total} tasks, more than the {limits.MAX_TASKS:,} "
            "of a workload fairalloc simulates; keep fewer jobs with max_jobs"
        )

    def expand(pairs):
        return tuple(t for task, n in pairs for t in (task,) * n)

    t0 = order[0][1]["submit"]
    jobs = []
    for name, j in order:
        phases = (
            (expand(j["map"]), expand(j["reduce"])) if j["map"] and j["reduce"] else (expand(j["map"] or j["reduce"]),)
        )
        jobs.append(Job(name, name, j["submit"] - t0, phases))
    return validate(Workload(nodes, float(node_cpu), float(node_mem), tuple(jobs), path.stem, horizon))


# --------------------------------------------------------------------------- Google 2011


def workload_from_google(
    source,
    *,
    users: int = 10,
    tasks_per_job: int = 50,
    nodes: int = 100,
    mean_duration: float = 60.0,
    mean_interarrival: float = 10.0,
    seed: int = 0,
    max_tasks: int | None = None,
    horizon: float | None = None,
) -> Workload:
    """A workload from Google cluster trace 2011 ``task_events`` requests.

    ``source``: task_events file path(s), read with :func:`fairalloc.scheduling.traces.load_google_task_events`
    (which keeps one ``<CPU, memory>`` request per task, in trace order), or a ``(k, 2)`` array of
    such requests. That loader returns requests only, so the rest is ASSUMED:

    * nodes: ``nodes`` machines of capacity 1 CPU / 1 memory (requests are normalised to the
      largest machine);
    * jobs: consecutive tasks in trace order, ``tasks_per_job`` per job, single (map) phase;
      owners ``user-1``..``user-<users>`` round-robin over jobs;
    * submit times: a Poisson process with mean inter-arrival ``mean_interarrival`` seconds;
    * durations: exponential with mean ``mean_duration`` seconds, floored at 1 s.

    Deterministic for ``seed``.
    """
    from fairalloc.scheduling.traces import load_google_task_events

    _count(users, "users", limits.MAX_OWNERS, "users")
    _count(tasks_per_job, "tasks_per_job", limits.MAX_TASKS_PER_JOB, "tasks")
    _count(nodes, "nodes", limits.MAX_NODES, "nodes")
    if max_tasks is not None:
        _count(max_tasks, "max_tasks", limits.MAX_TASKS, "tasks")
    if isinstance(source, (str, os.PathLike)) or (
        isinstance(source, (list, tuple)) and source and isinstance(source[0], (str, os.PathLike))
    ):
        demands = load_google_task_events(source, max_tasks=max_tasks)
    else:
        demands = np.asarray(source, dtype=float)
        if demands.ndim != 2 or demands.shape[1] != 2:
            raise CaseError(f"source: expected task_events path(s) or a (k, 2) array, got shape {demands.shape}")
        if max_tasks is not None:
            demands = demands[:max_tasks]
    if len(demands) == 0:
        raise CaseError("source: empty workload (no task)")
    if len(demands) > limits.MAX_TASKS:
        raise CaseError(
            f"source: {len(demands)} tasks, more than the {limits.MAX_TASKS:,} of a workload fairalloc "
            "simulates; pass max_tasks"
        )
    if -(-len(demands) // tasks_per_job) > limits.MAX_JOBS:
        raise CaseError(
            f"tasks_per_job: {len(demands)} tasks in jobs of {tasks_per_job} make more than "
            f"{limits.MAX_JOBS:,} jobs, the most of a workload fairalloc simulates"
        )
    rng = np.random.default_rng(seed)
    n_jobs = -(-len(demands) // tasks_per_job)
    submits = np.concatenate([[0.0], np.cumsum(rng.exponential(mean_interarrival, n_jobs - 1))])
    durations = np.maximum(1.0, np.round(rng.exponential(mean_duration, len(demands)), 3))
    jobs = []
    for k in range(n_jobs):
        lo, hi = k * tasks_per_job, min(len(demands), (k + 1) * tasks_per_job)
        tasks = tuple(Task(float(demands[t, 0]), float(demands[t, 1]), float(durations[t])) for t in range(lo, hi))
        jobs.append(Job(f"job-{k + 1}", f"user-{k % users + 1}", round(float(submits[k]), 3), (tasks,)))
    return validate(Workload(nodes, 1.0, 1.0, tuple(jobs), "google-2011", horizon))
