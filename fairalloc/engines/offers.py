"""The task-offer face of a mechanism: how it serves owners' tasks on nodes offered one at a time.

The offers are Algorithm 1 of Ghodsi et al., "Dominant Resource Fairness", NSDI 2011, section 4.2
(as Mesos makes them): the simulator (:mod:`fairalloc.scheduling.simulator`) offers a node, and the
scheduler picks the job whose next task launches there, until it declines.  :class:`Scheduler` is
that interface, :class:`OwnerOrder` the owners served in increasing order of a key (the descent of
:class:`~fairalloc.engines.discrete.DiscreteEngine`) that DRF, H-DRF, MFS and the slot schedulers
share.

A mechanism gives its face by one method, ``offers() -> Scheduler`` (a fresh scheduler each call:
a scheduler keeps the state of one run).  The schedulers that have no static answer (slots,
capacity, cpu-fair, fifo, quincy, mfs) are :class:`OnlineMechanism` s, of kind ``online``; any
other mechanism without ``offers()`` is served by :func:`offers_of`'s generic adapters,
:class:`EntitlementOrder` (the owner furthest below her entitlement) or :class:`QueueOrder` (the
mechanism's own ``order``).

Belongs here: the interface and what every task-offer scheduler shares.  Imports:
``fairalloc.core`` and ``fairalloc.engines`` only.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fairalloc.core.errors import CaseError, FairallocError
from fairalloc.core.instance import Instance
from fairalloc.core.registry import Mechanism
from fairalloc.engines.discrete import DiscreteEngine
from fairalloc.engines.dynamic import pool_shares

EPS = 1e-9
INF = float("inf")


class Scheduler:
    """Plug-in interface. ``pick(state, node)`` returns a job (``_JobRun``) whose next task to launch
    on ``node``, or ``None``. ``changed(u)`` is called whenever owner ``u``'s allocation or
    runnable work changes. ``check_cpu`` / ``check_mem``: whether launching requires the task to
    fit on that resource (unchecked resources may be over-committed). ``slots``: per node, or None.
    """

    name = "scheduler"
    check_cpu = True
    check_mem = True
    slots: int | None = None
    #: whether the scheduler reads the tallies of running tasks: ``state.slots_used`` and
    #: ``state.running`` (per node and per owner) and what each job holds (``job.cpu``, ``job.mem``);
    #: the simulator keeps them up to date only for a scheduler that does (a plug-in may)
    reads_tallies = True

    def bind(self, state: Any) -> None:  # (a fairalloc.scheduling.simulator.SimState)

        self.state = state

    def changed(self, u: int) -> None:
        pass

    def pick(self, state: Any, node: int) -> Any:
        raise NotImplementedError

    def idle(self) -> bool:
        """Whether :meth:`pick` would decline every node now, without side effects (a hint: the
        simulator then offers no more nodes in this instant); by default never assumed."""
        return False


class FlatOwners:
    """The descent of :class:`~fairalloc.engines.discrete.DiscreteEngine` on a flat tree in its
    default order, owners in increasing ``(key, u)`` (the engine's entries ``(key, 0.0, rank u, u,
    version)`` sort alike), kept as a sorted list of the waiting owners' ``(key, u)``: a pick reads
    it from the front, declining owners without taking them out and putting them back, and a
    change is a deletion and an insertion in C (``bisect``), for the two changes of every task."""

    def __init__(self, n: int):
        self.key = [0.0] * n
        self.entry: list[tuple[float, int] | None] = [None] * n  # per waiting owner: her place in order
        self.order: list[tuple[float, int]] = []  # the waiting owners' entries, sorted
        self.paths = [[u] for u in range(n)]  # (no groups above anyone)
        self.passed = 0  # owners declined by the last pick

    def set_share(self, u: int, value: float) -> None:
        self.key[u] = value

    def changed(self, u: int, *, active: bool) -> None:
        """Owner ``u``'s key was set; ``active``: whether she waits for a node."""
        order, old = self.order, self.entry[u]
        if old is not None:
            del order[bisect.bisect_left(order, old)]
        new = self.entry[u] = (self.key[u], u) if active else None
        if new is not None:
            bisect.insort(order, new)

    def pick(self, fits: Callable[[int], bool]) -> int | None:
        """The first waiting owner in order for which ``fits(u)`` holds (None: none)."""
        for k, (_, u) in enumerate(self.order):
            if fits(u):
                self.passed = k
                return u
        self.passed = len(self.order)
        return None


class OwnerOrder(Scheduler):
    """Owners offered a node in increasing ``key(u)`` (ties: the owner listed first) until one's next task
    fits: the descent of :class:`~fairalloc.engines.discrete.DiscreteEngine` (the heap of Algorithm 1,
    Ghodsi et al., "Dominant Resource Fairness", NSDI 2011, section 4.2), over a flat tree of owners
    or, with :meth:`_build`'s ``parent``, a tree of groups (H-DRF); on a flat tree, the same order
    kept by :class:`FlatOwners`.

    A node that no waiting owner's next task fits (the usual end of an offer) is declined at a glance
    when it cannot hold their smallest CPU and memory (``least``), else by the pass over the flat
    order, or, before a descent (a tree, more resources), from the distinct shapes of those tasks
    (``shapes``): on the flat order the pass costs no more than the shapes would.

    The scheduler computes the keys (Python floats, the very ones the simulator's totals give) and
    gives them to the engine (``engine.set_share``), then re-keys with ``engine.changed``: the engine's own
    ``set_usage`` is a few numpy operations per launch and finish, which would double the simulator's
    time. Groups' keys are ``max_r used_r / total_r / weight`` over every resource of the cluster.
    """

    def bind(self, state: Any) -> None:
        super().bind(state)
        self._build()

    def _build(
        self,
        parent: Sequence[int | None] | None = None,
        group_weights: Sequence[float] = (),
        order: Sequence[int] | None = None,
        weights: Sequence[float] | None = None,
    ) -> None:
        """The engine over the owners (``0 .. n-1``) and groups (``n ..``; ``parent``, ``group_weights``,
        ``order``: as :class:`~fairalloc.engines.discrete.DiscreteEngine`'s); ``weights``: the owners'."""
        st = self.state
        n, m = len(st.owners), len(st.resources)
        self.weight = [1.0] * n if weights is None else [float(w) for w in weights]
        self.engine: DiscreteEngine | FlatOwners = (
            FlatOwners(n)
            if parent is None and order is None
            else DiscreteEngine(
                st.total, self.weight, parent=parent, group_weights=group_weights, order=order, tie_break="order"
            )
        )
        self.group_weight = {n + k: float(w) for k, w in enumerate(group_weights)}
        self.groups_above = [self.engine.paths[u][1:] for u in range(n)]  # her groups, bottom up
        self.group_used = {v: [0.0] * m for v in self.group_weight}  # groups' running totals
        self.seen = [(0.0,) * m for _ in range(n)]  # what the groups hold of her
        #: per owner, ``state.next_job(u)`` as of the last ``changed(u)`` (the simulator calls it on every change)
        self.next_jobs: list[Any] = [None] * n
        self.next_tasks: list[Any] = [None] * n  # ... and its next task
        self.waiting = 0  # owners with a next job
        self.shape: list[tuple[float, float] | None] = [
            None
        ] * n  # per owner with a next job: her next task's (cpu, mem)
        self.shapes: dict[tuple[float, float], int] = {}  # those shapes: how many owners wait with each
        self.least: tuple[float, float] | None = None  # their smallest CPU and memory (None: to compute)
        self.more_resources = m > 2  # resources beyond CPU and memory
        for u in range(n):
            self.engine.changed(u, active=False)  # nothing to run yet
        # the owners' sorted list when they are flat (:class:`FlatOwners`), for the per-task path
        # without the tree's generality (:meth:`_changed_flat`, and :meth:`pick`'s pass on CPU and memory)
        flat = self.engine if isinstance(self.engine, FlatOwners) else None
        if flat is not None:
            self.ready = st.ready
            self.order, self.entry = flat.order, flat.entry  # (its lists, changed in place)
            self.used_cpu, self.used_mem, self.total_cpu, self.total_mem = st.cpu, st.mem, st.total_cpu, st.total_mem
            self.changed = self._changed_flat  # type: ignore[method-assign]
        #: whether the key is DRF's over CPU and memory only (computed inline by :meth:`_changed_flat`)
        self.drf_key = False
        # what pick reads on every offer, as instance attributes: a class attribute read through the
        # instance is a full lookup per read in Python 3.11 (an instance attribute's is specialised)
        self.slots, self.check_cpu, self.check_mem = self.slots, self.check_cpu, self.check_mem
        #: whether pick passes over the flat order itself (owners flat, tasks of CPU and memory only)
        self.flat_pass = flat is not None and not self.more_resources
        # (at most 29 attributes, 28 for drf: beyond, an instance's attributes move to a dict of its own,
        # whose reads and writes Python 3.11 specialises less well)

    def key(self, u: int) -> float:
        raise NotImplementedError

    def idle(self) -> bool:
        return not self.waiting  # (pick's first test)

    def changed(self, u: int) -> None:
        st, engine = self.state, self.engine
        set_share = engine.set_share
        set_share(u, self.key(u))
        above = self.groups_above[u]
        if above:
            used = st.used_vector(u)
            delta = [a - b for a, b in zip(used, self.seen[u])]
            self.seen[u] = used
            total = st.total
            for v in above:
                row = self.group_used[v]
                for k, d in enumerate(delta):
                    row[k] += d
                set_share(v, max([x / t for x, t in zip(row, total)]) / self.group_weight[v])
        job, before = st.next_job(u), self.next_jobs[u]
        self.next_jobs[u] = job
        if job is None:
            self.next_tasks[u] = None
            if self.shape[u] is not None:
                self._reshape(u, None)
        else:
            task = self.next_tasks[u] = job.tasks[job.next]
            shape = self.shape[u]
            if shape is None or shape[0] != task.cpu or shape[1] != task.mem:
                self._reshape(u, (task.cpu, task.mem))
        if job is None and before is None and not above:
            return  # out before and after: her new key waits for her work
        self.waiting += (job is not None) - (before is not None)
        engine.changed(u, active=job is not None)

    def _changed_flat(self, u: int) -> None:
        """:meth:`changed` when the owners are a :class:`FlatOwners` (no groups above anyone): the same
        updates in one function, called twice per task: the engine's ``set_share`` and
        ``changed`` inlined, her key computed only while she waits (an owner out before and after
        keeps her stale key: it is computed again when she has work), and her entry in the order
        left in place when her key is unchanged (the same place: the entries ``(key, u)`` are distinct).
        Her key is kept in her entry only (the engine's ``key`` list, for its own ``changed``, is not)."""
        queue, before = self.ready[u], self.next_jobs[u]
        job = queue[0][2] if queue else None  # (state.next_job's first test inlined: the head is usually runnable)
        if job is not None and (job.cancelled or job.next >= len(job.tasks)):
            job = self.state.next_job(u)
        if job is None:
            if before is None:
                return  # out before and after: her new key waits for her work
            self.next_jobs[u] = self.next_tasks[u] = None
            self._reshape(u, None)
            self.waiting -= 1
            order, old = self.order, self.entry[u]
            assert old is not None  # (she waited: before is her job)
            del order[bisect.bisect_left(order, old)]
            self.entry[u] = None
            return
        self.next_jobs[u] = job
        task = self.next_tasks[u] = job.tasks[job.next]
        shape = self.shape[u]
        if shape is None or shape[0] != task.cpu or shape[1] != task.mem:
            self._reshape(u, (task.cpu, task.mem))
        if self.drf_key:  # DRF's key (SimState.dominant_share) without its two calls
            c, m = self.used_cpu[u] / self.total_cpu, self.used_mem[u] / self.total_mem
            key = m if m > c else c  # (max(c, m), the same float)
        else:
            key = self.key(u)
        order, old = self.order, self.entry[u]
        if old is None:
            self.waiting += 1
        elif old[0] == key:
            return  # she keeps her place
        else:
            del order[bisect.bisect_left(order, old)]
        new = self.entry[u] = (key, u)
        bisect.insort(order, new)

    def _reshape(self, u: int, shape: tuple[float, float] | None) -> None:
        """Owner ``u``'s next task has the (cpu, mem) ``shape`` now (None: she waits for nothing)."""
        shapes, old = self.shapes, self.shape[u]
        if old is not None:
            shapes[old] -= 1
            if not shapes[old]:
                del shapes[old]
        if shape is not None:
            shapes[shape] = shapes.get(shape, 0) + 1
        self.shape[u] = shape
        self.least = None

    def _least(self) -> tuple[float, float]:
        self.least = (min(c for c, _ in self.shapes), min(m for _, m in self.shapes))
        return self.least

    def pick(self, state: Any, node: int) -> Any:
        if not self.waiting or self.slots is not None and state.slots_used[node] >= self.slots:
            return None
        # the node's room as SimState.fits compares with it (an unchecked resource: unbounded); a full
        # node is declined at a glance, usually from its CPU alone
        least = self.least or self._least()
        free_cpu = state.free_cpu[node] + EPS if self.check_cpu else INF
        if least[0] > free_cpu:
            return None
        free_mem = state.free_mem[node] + EPS if self.check_mem else INF
        if least[1] > free_mem:
            return None
        if self.flat_pass:  # the engine's pass inlined (no closure per pick; its ``passed`` is not
            # kept: only the engine's own pick, for the descent, reads it)
            tasks = self.next_tasks
            for k, (_, u) in enumerate(self.order):
                task = tasks[u]
                if task.cpu <= free_cpu and task.mem <= free_mem:
                    state.steps += k
                    return self.next_jobs[u]
            state.steps += len(self.order)
            return None
        for cpu, mem in self.shapes:
            if cpu <= free_cpu and mem <= free_mem:
                break
        else:  # no waiting owner's next task fits: the descent would decline every owner
            return None
        return self._descend(state, node, free_cpu, free_mem)

    def _descend(self, state: Any, node: int, free_cpu: float, free_mem: float) -> Any:
        """:meth:`pick`'s descent through the engine, for a tree of groups or more resources than CPU and
        memory (a method of its own: its closure would cost every pick the cells of its variables)."""
        tasks = self.next_tasks
        if self.more_resources:  # SimState.fits checks the others (GPUs...) too

            def fits(u: int) -> bool:
                return bool(state.fits(node, tasks[u], self.check_cpu, self.check_mem))

        else:

            def fits(u: int) -> bool:
                task = tasks[u]
                return bool(task.cpu <= free_cpu and task.mem <= free_mem)

        engine = self.engine
        u = engine.pick(fits)
        state.steps += engine.passed
        return None if u is None else self.next_jobs[u]


# --------------------------------------------------------------------------- mechanisms' faces


class OnlineMechanism(Mechanism):
    """A mechanism that exists only over time (a scheduler of task offers: slots, capacity, cpu-fair,
    fifo, quincy, mfs): :meth:`offers` is its face; it has no static answer, so :meth:`allocate`
    refuses with the command that runs it."""

    kind = "online"

    def offers(self) -> Scheduler:
        """A fresh scheduler for one run of the simulator."""
        raise NotImplementedError

    def allocate(self, instance: Instance, method: str = "auto") -> Any:
        raise FairallocError(
            f"mechanism: {self.name} is an online scheduler (tasks offered nodes over time) with no static "
            f"allocation; run it with 'fairalloc simulate WORKLOAD --scheduler {self.name}'"
        )


def offers_of(mechanism: Mechanism) -> Scheduler:
    """``mechanism``'s task-offer face: its own ``offers()``, else :class:`QueueOrder` when it orders
    queues by usage (``QueuePolicy.order``), else :class:`EntitlementOrder`."""
    face = getattr(mechanism, "offers", None)
    if callable(face):
        scheduler = face()
        if not isinstance(scheduler, Scheduler):
            raise FairallocError(
                f"mechanism: {mechanism.name}.offers() gave a {type(scheduler).__name__}, not a "
                "fairalloc.engines.offers.Scheduler"
            )
        return scheduler
    if getattr(mechanism, "has_order", False):
        return QueueOrder(mechanism)
    return EntitlementOrder(mechanism)


def _owners_instance(state: Any, owners: list[int], demands: list[Any], usage: bool = False) -> Instance:
    """The instance the simulator's ``owners`` make: the cluster's totals, per owner the per-task
    ``demands`` given, unbounded, weighted by the workload's ``group_weights`` of her name where given
    (as ``mfs`` and ``hdrf`` read them), bringing the cluster in proportion to those weights (a
    dynamic mechanism's shared quantities); with ``usage``, a flat queue case whose usage is what
    each owner runs now."""
    names = [state.owners[u] for u in owners]
    given = state.workload.group_weights or {}
    weights = [float(given.get(o, 1.0)) for o in names]
    instance = Instance(
        state.total,
        demands,
        resources=state.resources,
        users=names,
        weights=weights if any(w != 1.0 for w in weights) else None,
        shared=pool_shares(None, np.array(weights), len(names)),  # for a dynamic mechanism's q_i
    )
    if not usage:
        return instance
    from fairalloc.core.queues import Queues

    queues = Queues.flat(instance).with_usage({o: state.used_vector(u) for o, u in zip(names, owners)})
    return instance.with_queues(queues)


class EntitlementOrder(OwnerOrder):
    """The generic task-offer face of a mechanism with entitlements and no offers of its own: at each
    offer, the waiting owner furthest below her entitlement whose next task fits the node.

    The rule: owners are served in increasing ``d_u / e_u`` (ties: the owner listed first), skipping
    those whose next task does not fit, as ``drf`` serves them. ``d_u`` is her dominant share now (what
    her tasks hold of every resource over the cluster's totals, as ``drf``'s key); ``e_u`` the dominant
    share of her entitlement: the mechanism's ``allocate`` on the instance of the *active* owners
    (those with an unfinished job; :func:`_owners_instance`), each asking per task for the next task of
    her earliest such job (its current phase), unbounded (an owner with work could always run more).
    The entitlements are computed again only when the set of active owners changes (an owner's first
    job arrives or her last one ends), not at each launch; an owner entitled to nothing (``e_u = 0``)
    comes after every other. A dynamic mechanism's owners bring the cluster in proportion to their
    weights (:func:`~fairalloc.engines.dynamic.pool_shares`: ``dmfa-srq``'s ``q_i``). A mechanism
    that refuses that instance (a dynamic one where an owner's task asks for none of a resource)
    stops the run with its reason.

    Under ``drf`` with demands of every resource, every active owner's entitlement has one dominant
    share (progressive filling without bounds freezes everyone at the first saturated resource), so the
    keys are the dominant shares divided by one number: ``drf``'s order, hence its schedule, save where
    that division maps two different dominant shares to one float (then the owner listed first goes
    first, where ``drf`` took the lower share). tests/test_offers.py compares the two.
    """

    reads_tallies = False

    def __init__(self, mechanism: Mechanism):
        self.mechanism = mechanism
        self.name = mechanism.name

    def bind(self, state: Any) -> None:
        super().bind(state)
        n = len(state.owners)
        self.active = [False] * n
        self.entitled = [0.0] * n  # e_u as last computed
        self.stale = False  # the active owners changed since
        self.entitled_for: list[int] = []  # the active owners of the last entitlements
        self.rekey = self.changed  # OwnerOrder's (the flat one)
        self.changed = self._changed_active  # type: ignore[method-assign]

    def key(self, u: int) -> float:
        e = self.entitled[u]
        return self.state.dominant_share(u) / e if e > 0 else INF

    def _changed_active(self, u: int) -> None:
        active = bool(self.state.user_jobs[u])
        if active is not self.active[u]:
            self.active[u] = active
            self.stale = True
        self.rekey(u)

    def pick(self, state: Any, node: int) -> Any:
        if self.stale:
            self._entitle()
        return super().pick(state, node)

    def _entitle(self) -> None:
        """Every active owner's entitlement again, and every waiting owner's key with it."""
        st = self.state
        self.stale = False
        owners = [u for u, on in enumerate(self.active) if on]
        if not owners or owners == self.entitled_for:
            return  # (an owner's last job ended and her next arrived in the same instant: the same set)
        self.entitled_for = owners
        instance = _owners_instance(st, owners, [st.owner_demand(u) for u in owners])
        try:
            shares = self.mechanism.allocate(instance).dominant_shares
        except FairallocError as refused:
            raise CaseError(f"scheduler: {self.name} gives the simulator's owners no entitlement: {refused}") from None
        for u, e in zip(owners, shares):
            self.entitled[u] = float(e)
        for u in owners:
            self.rekey(u)


class QueueOrder(Scheduler):
    """The generic task-offer face of a policy that sorts queues by usage (``QueuePolicy.order``: the
    Mesos DRF sorter, Kueue's tournaments, YuniKorn's fair sort, the capacity schedulers): at each
    offer, the waiting owners in the mechanism's own order for what each runs now (the usage of a flat
    queue case of the waiting owners, each asking for her next task; :func:`_owners_instance`), and the
    first whose next task fits the node is served. The order is computed again at every offer (the
    usage changes at every launch and finish): for small set-ups.
    """

    reads_tallies = False

    def __init__(self, mechanism: Any):
        self.mechanism = mechanism
        self.name = mechanism.name

    def pick(self, state: Any, node: int) -> Any:
        waiting = {}
        for u in range(len(state.owners)):
            job = state.next_job(u)
            if job is not None:
                waiting[state.owners[u]] = (u, job)
        state.steps += len(state.owners)
        if not waiting:
            return None
        owners = [u for u, _ in waiting.values()]
        demands = [state.demand(job.next_task()) for _, job in waiting.values()]
        for name in self.mechanism.order(_owners_instance(state, owners, demands, usage=True)):
            _, job = waiting[name]
            if state.fits(node, job.next_task()):
                return job
        return None


__all__ = ["Scheduler", "FlatOwners", "OwnerOrder", "OnlineMechanism", "offers_of", "EntitlementOrder", "QueueOrder"]
