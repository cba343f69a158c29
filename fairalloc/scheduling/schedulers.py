"""The simulator's schedulers: one interface (:class:`Scheduler`), looked up by name in
:func:`make_scheduler`.  What each one decides is described in :mod:`fairalloc.scheduling.simulator`.
"""

from __future__ import annotations

import bisect

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt, unknown
from fairalloc.engines.discrete import DiscreteEngine
from fairalloc.engines.filling import drf_shares

EPS = 1e-9
INF = float("inf")

#: the names ``make_scheduler`` accepts (K a positive integer)
SCHEDULER_NAMES = (
    "drf",
    "mfs",
    "hdrf",
    "cpu-fair",
    "cpu-fair:oc",
    "slots:K",
    "slots:K:oc",
    "capacity:K",
    "capacity:K:oc",
    "fifo",
    "quincy",
)

# --------------------------------------------------------------------------- schedulers


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

    def bind(self, state) -> None:  # state: simulator.SimState

        self.state = state

    def changed(self, u: int) -> None:
        pass

    def pick(self, state, node: int):
        raise NotImplementedError

    def idle(self) -> bool:
        """Whether :meth:`pick` would decline every node now, without side effects (a hint: the
        simulator then offers no more nodes in this instant); by default never assumed."""
        return False


class _FlatOwners:
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

    def pick(self, fits) -> int | None:
        """The first waiting owner in order for which ``fits(u)`` holds (None: none)."""
        for k, (_, u) in enumerate(self.order):
            if fits(u):
                self.passed = k
                return u
        self.passed = len(self.order)
        return None


class _OwnerOrder(Scheduler):
    """Owners offered a node in increasing ``key(u)`` (ties: the owner listed first) until one's next task
    fits: the descent of :class:`~fairalloc.engines.discrete.DiscreteEngine` (the heap of Algorithm 1,
    Ghodsi et al., "Dominant Resource Fairness", NSDI 2011, section 4.2), over a flat tree of owners
    or, with :meth:`_build`'s ``parent``, a tree of groups (H-DRF); on a flat tree, the same order
    kept by :class:`_FlatOwners`.

    A node that no waiting owner's next task fits (the usual end of an offer) is declined at a glance
    when it cannot hold their smallest CPU and memory (``least``), else by the pass over the flat
    order, or, before a descent (a tree, more resources), from the distinct shapes of those tasks
    (``shapes``): on the flat order the pass costs no more than the shapes would.

    The scheduler computes the keys (Python floats, the very ones the simulator's totals give) and
    gives them to the engine (``engine.set_share``), then re-keys with ``engine.changed``: the engine's own
    ``set_usage`` is a few numpy operations per launch and finish, which would double the simulator's
    time. Groups' keys are ``max_r used_r / total_r / weight`` over every resource of the cluster.
    """

    def bind(self, state):
        super().bind(state)
        self._build()

    def _build(self, parent=None, group_weights=(), order=None, weights=None) -> None:
        """The engine over the owners (``0 .. n-1``) and groups (``n ..``; ``parent``, ``group_weights``,
        ``order``: as :class:`~fairalloc.engines.discrete.DiscreteEngine`'s); ``weights``: the owners'."""
        st = self.state
        n, m = len(st.owners), len(st.resources)
        self.weight = [1.0] * n if weights is None else [float(w) for w in weights]
        self.engine: DiscreteEngine | _FlatOwners = (
            _FlatOwners(n)
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
        self.next_jobs: list = [None] * n
        self.next_tasks: list = [None] * n  # ... and its next task
        self.waiting = 0  # owners with a next job
        self.shape: list = [None] * n  # per owner with a next job: her next task's (cpu, mem)
        self.shapes: dict[tuple[float, float], int] = {}  # those shapes: how many owners wait with each
        self.least: tuple[float, float] | None = None  # their smallest CPU and memory (None: to compute)
        self.more_resources = m > 2  # resources beyond CPU and memory
        for u in range(n):
            self.engine.changed(u, active=False)  # nothing to run yet
        # the owners' sorted list when they are flat (:class:`_FlatOwners`), for the per-task path
        # without the tree's generality (:meth:`_changed_flat`, and :meth:`pick`'s pass on CPU and memory)
        flat = self.engine if isinstance(self.engine, _FlatOwners) else None
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

    def changed(self, u):
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
        """:meth:`changed` when the owners are a :class:`_FlatOwners` (no groups above anyone): the same
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

    def _reshape(self, u: int, shape) -> None:
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

    def pick(self, state, node):
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

    def _descend(self, state, node: int, free_cpu: float, free_mem: float):
        """:meth:`pick`'s descent through the engine, for a tree of groups or more resources than CPU and
        memory (a method of its own: its closure would cost every pick the cells of its variables)."""
        tasks = self.next_tasks
        if self.more_resources:  # SimState.fits checks the others (GPUs...) too

            def fits(u):
                return state.fits(node, tasks[u], self.check_cpu, self.check_mem)

        else:

            def fits(u):
                task = tasks[u]
                return task.cpu <= free_cpu and task.mem <= free_mem

        engine = self.engine
        u = engine.pick(fits)
        state.steps += engine.passed
        return None if u is None else self.next_jobs[u]


class DRF(_OwnerOrder):
    name = "drf"
    reads_tallies = False  # (its keys: what each owner holds)

    def bind(self, state):
        super().bind(state)
        self.key = state.dominant_share  # (one call less per launch and finish)
        self.drf_key = not self.more_resources

    def key(self, u):
        return self.state.dominant_share(u)


class CPUFair(_OwnerOrder):
    name = "cpu-fair"
    reads_tallies = False

    def __init__(self, overcommit: bool = False):
        self.check_mem = not overcommit
        self.name = "cpu-fair:oc" if overcommit else "cpu-fair"

    def key(self, u):
        return self.state.cpu[u]


class Slots(_OwnerOrder):
    def __init__(self, k: int, overcommit: bool = False):
        self.slots = k
        self.check_cpu = self.check_mem = not overcommit
        self.name = f"slots:{k}" + (":oc" if overcommit else "")

    def key(self, u):
        return self.state.running[u]


class Capacity(_OwnerOrder):
    def __init__(self, k: int, overcommit: bool = False):
        self.slots = k
        self.check_cpu = self.check_mem = not overcommit
        self.name = f"capacity:{k}" + (":oc" if overcommit else "")

    def bind(self, state):
        super().bind(state)
        queues = state.workload.queues
        if queues:
            missing = [o for o in state.owners if o not in queues]
            if missing:
                raise CaseError(f"queues.{missing[0]}: owner has no queue capacity (queues: {', '.join(queues)})")
            total = sum(queues[o] for o in state.owners)
            self.capacity = [queues[o] / total for o in state.owners]
        else:
            self.capacity = [1.0 / len(state.owners)] * len(state.owners)

    def key(self, u):
        return self.state.running[u] / self.capacity[u]


class MFS(_OwnerOrder):
    """The MFS paper's two-level DRF: groups (owners) by weighted dominant share (the engine's descent),
    then the group's jobs by weighted dominant share; the first job whose next task fits the node
    gets it (if none does, the next group is tried).

    A job's share counts every resource, from the simulator's per-job totals of its running tasks
    (``job.cpu``, ``job.mem`` and ``job.extra`` for GPUs and the other resources)."""

    name = "mfs"

    def bind(self, state):
        Scheduler.bind(self, state)
        weights = state.workload.group_weights or {}
        self._build(weights=[weights.get(o, 1.0) for o in state.owners])
        self.extra = len(state.resources) > 2

    def key(self, u):
        return self.state.dominant_share(u) / self.weight[u]

    def group_share(self, u: int) -> float:
        return self.key(u)

    def job_share(self, job) -> float:
        st = self.state
        share = max(job.cpu / st.total_cpu, job.mem / st.total_mem)
        if self.extra:
            share = max([share, *(a / st.total[k] for k, a in job.extra.items())])
        return share / job.spec.weight

    def pick(self, state, node):
        taken = []

        def fits(u):
            jobs = state.user_jobs[u]
            state.steps += len(jobs)
            for job in sorted((j for j in jobs.values() if j.runnable()), key=lambda j: (self.job_share(j), j.id)):
                if state.fits(node, job.next_task()):
                    taken.append(job)
                    return True
            return False

        if not self.waiting:
            return None
        u = self.engine.pick(fits)
        state.steps += self.engine.passed
        if u is None:
            return None
        return taken[0]


def owner_tree(owners, weights: dict | None = None):
    """The hierarchy a workload declares in its owner names: a networkx tree from
    :func:`fairalloc.engines.hierarchy.tree_from`.

    An owner ``eng/web/alice`` is the leaf ``alice`` of group ``web`` inside group ``eng`` (the
    '/'-separated paths of Mesos' hierarchical roles); node names are the full paths (``eng``,
    ``eng/web``, ``eng/web/alice``), an owner without '/' hangs from the root, and ``weights``
    (the workload's ``group_weights``, as for ``mfs``) maps any node's path to its weight among its
    siblings (default 1). Children are listed in order of first appearance in ``owners``. An owner
    cannot also be a group (``eng`` owning jobs next to ``eng/web``), nor have an empty path part.

    >>> g = owner_tree(["eng/alice", "ops", "eng/bob"], {"eng": 2})
    >>> list(g.successors("__root__")), list(g.successors("eng")), g.nodes["eng"]["weight"]
    (['eng', 'ops'], ['eng/alice', 'eng/bob'], 2.0)
    """
    from fairalloc.engines.hierarchy import tree_from

    owners = list(owners)
    parent: dict[str, str | None] = {}
    for owner in owners:
        parts = owner.split("/")
        if len(parts) > limits.MAX_OWNER_DEPTH:
            raise CaseError(
                f"owner {excerpt(owner)}: {len(parts)} levels of groups, more than the "
                f"{limits.MAX_OWNER_DEPTH:,} of a hierarchy fairalloc schedules"
            )
        if not all(parts):
            raise CaseError(
                f"owner {excerpt(owner)}: empty group name in the path (hierarchical owners look like 'group/user')"
            )
        for k in range(len(parts)):
            parent.setdefault("/".join(parts[: k + 1]), "/".join(parts[:k]) or None)
    groups = set(parent.values())
    both = [o for o in owners if o in groups]
    if both:
        child = next(n for n, p in parent.items() if p == both[0])
        raise CaseError(
            f"owner {excerpt(both[0])}: owns jobs and is also the group of {excerpt(child)} (an owner must be a leaf)"
        )
    return tree_from(list(parent), parent, weights or {})


class HDRF(_OwnerOrder):
    """H-DRF (Bhattacharya et al., SoCC 2013) over the owners' tree (:func:`owner_tree`).

    The descent of :func:`fairalloc.engines.hierarchy.hdrf_schedule` on offers, made by
    :class:`~fairalloc.engines.discrete.DiscreteEngine`: from the root, into the child with the
    lowest weighted dominant share (of everything its subtree runs now of every resource, over the
    whole cluster), skipping blocked children (no runnable task below, or no next task below that
    fits the node), down to an owner, whose next job is served as under ``drf``. A decision costs
    heap operations along the path (a flat tree is exactly ``drf``'s: same keys, same ties).
    """

    name = "hdrf"
    reads_tallies = False

    def bind(self, state):
        from fairalloc.engines.hierarchy import ROOT

        Scheduler.bind(self, state)
        g = owner_tree(state.owners, state.workload.group_weights)
        n = len(state.owners)
        # engine node ids: owners 0..n-1 (their index u), then the groups, then the root
        ids = {o: u for u, o in enumerate(state.owners)}
        groups = [name for name in g if name not in ids and name != ROOT and g.out_degree(name)]
        ids.update({name: n + k for k, name in enumerate(groups)})
        ids[ROOT] = n + len(groups)
        parent = [None] * (n + len(groups))
        order = []  # siblings in order of first appearance: the tie-break
        for name in [ROOT, *groups]:
            for child in g.successors(name):
                order.append(ids[child])
                if name != ROOT:
                    parent[ids[child]] = ids[name]
        self._build(
            parent=parent,
            group_weights=[g.nodes[name]["weight"] for name in groups],
            order=order,
            weights=[g.nodes[o]["weight"] for o in state.owners],
        )

    def key(self, u):
        return self.state.dominant_share(u) / self.weight[u]


class Quincy(Scheduler):
    """A Quincy-style scheduler (Isard et al., SOSP 2009): each instant's placements from one min-cost flow.

    At the first offer of an instant, one flow problem (``networkx.min_cost_flow``) is solved over
    every owner with runnable work and every node with free room; the offers of that instant then
    hand out its placements. The network, per owner ``u`` (supply: her runnable tasks, at most
    as many as fit the free room):

    * ``u -> unscheduled -> sink``: cost ``B + 1 + w_u``, ``w_u`` the whole seconds since her next
      job was submitted (Quincy's unscheduled edge: leaving work waiting costs more the longer it
      has waited), ``B = 1 + max_u w_u``;
    * ``u -> fair_u -> G_u``: capacity ``max(0, F_u - running_u)``, cost 0, ``F_u`` the whole tasks
      of her DRF share among the owners with work (:func:`drf_shares`, as the fairness error); and
      ``u -> G_u``: uncapped, cost ``B`` (above her share). Placing a task within its owner's share
      saves at least ``B + 1``, above it at most ``B``: quota tasks are placed first, and spare room
      goes to the owners waiting longest (the fairness bounds as costs, not as hard lower / upper
      flow bounds, which could make the problem infeasible);
    * ``G_u -> node k``: capacity how many of her next task fit the node's free CPU and memory;
      ``node k -> sink``: capacity the most any owner fits there.

    Simplifications (OUR choices): every runnable task of an owner is treated as having the shape of
    her next task (the owner is the flow node, not each task, so the graph has owners x nodes edges);
    a node's capacity is one number of tasks, so a plan may put more on a node than fits together:
    each offer checks the real fit, launches only what fits (no node is ever over-committed), and
    when a node's planned tasks did not all fit, the flow is solved again (once per node and
    instant) with the room actually left. No preemption, no data locality (Quincy's preferred racks
    and machines). Cost: a min-cost flow per instant with offers (more when plans over-fill nodes),
    in pure Python: for small clusters only.
    """

    name = "quincy"

    def bind(self, state):
        super().bind(state)
        edges = len(state.owners) * state.n_nodes
        if edges > limits.MAX_QUINCY_EDGES:
            raise CaseError(
                f"scheduler: quincy: {len(state.owners)} owners x {state.n_nodes} nodes = {edges} "
                f"flow edges, more than the {limits.MAX_QUINCY_EDGES:,} of its pure-Python flow network "
                "(quincy is for small clusters)"
            )
        self.plan_time = None
        self.plan: dict[int, list[int]] = {}  # node -> owners planned there, in offer order
        self.replanned: set[int] = set()  # nodes planned again in this instant

    def _fit(self, task, node) -> int:
        st = self.state
        room = [
            st.free_cpu[node] / task.cpu if task.cpu > 0 else float("inf"),
            st.free_mem[node] / task.mem if task.mem > 0 else float("inf"),
        ]
        return max(0, int(min(room) + EPS))

    def _make_plan(self):
        import networkx as nx

        st = self.state
        work = {}
        st.steps += len(st.owners) * (1 + st.n_nodes) + len(st.jobs)
        for u in range(len(st.owners)):
            job = st.next_job(u)
            if job is not None:
                runnable = sum(len(j.spec.phases[j.phase]) - j.next for j in st.user_jobs[u].values() if j.runnable())
                work[u] = (job, runnable)
        self.plan = {}
        if not work:
            return
        fits = {
            u: {k: f for k in range(st.n_nodes) if (f := self._fit(job.next_task(), k)) > 0}
            for u, (job, _) in work.items()
        }
        users = list(work)
        demands = [
            (work[u][0].next_task().cpu / st.total_cpu, work[u][0].next_task().mem / st.total_mem) for u in users
        ]
        shares = drf_shares(demands, [work[u][1] + st.running[u] for u in users])
        wait = {u: int(st.time - work[u][0].submit) for u in users}
        above = 1 + max(wait.values())  # the cost of a task above its owner's share
        g = nx.DiGraph()
        total = 0
        for u, d, share in zip(users, demands, shares):
            supply = min(work[u][1], sum(fits[u].values()))
            if supply == 0:
                continue
            total += supply
            quota = max(0, int(share / max(d) + 1e-9) - st.running[u])
            g.add_node(("u", u), demand=-supply)
            g.add_edge(("u", u), "unscheduled", weight=above + 1 + wait[u])
            g.add_edge(("u", u), ("fair", u), capacity=quota, weight=0)
            g.add_edge(("fair", u), ("G", u), weight=0)
            g.add_edge(("u", u), ("G", u), weight=above)
            for k, f in fits[u].items():
                g.add_edge(("G", u), ("node", k), capacity=f, weight=0)
                cap = g.edges[("node", k), "sink"]["capacity"] if g.has_edge(("node", k), "sink") else 0
                g.add_edge(("node", k), "sink", capacity=max(cap, f), weight=0)
        if total == 0:
            return
        g.add_edge("unscheduled", "sink", weight=0)
        g.nodes["sink"]["demand"] = total
        flow = nx.min_cost_flow(g)
        for u in sorted(users, key=lambda u: (st.dominant_share(u), u)):  # on a node: lowest share first
            for (_, k), units in flow.get(("G", u), {}).items():
                self.plan.setdefault(k, []).extend([u] * units)

    def pick(self, state, node):
        if self.plan_time != state.time:
            self.plan_time = state.time
            self.replanned = set()
            self._make_plan()
        while True:
            queue = self.plan.get(node, [])
            declined = False
            while queue:
                u = queue.pop(0)
                job = state.next_job(u)
                if job is not None and state.fits(node, job.next_task()):
                    return job
                declined = True
            if not declined or node in self.replanned:
                return None
            self.replanned.add(node)  # the plan over-filled this node: plan again with the
            self._make_plan()  # room really left, once per node and instant


class FIFO(Scheduler):
    name = "fifo"
    reads_tallies = False

    def pick(self, state, node):
        state.steps += 1
        job = state.first_job()
        return job if job is not None and state.fits(node, job.next_task()) else None


def make_scheduler(name: str) -> Scheduler:
    """A scheduler from its name (:data:`SCHEDULER_NAMES`)."""
    if isinstance(name, Scheduler):
        return name
    known = ", ".join(SCHEDULER_NAMES)
    text = str(name).strip().lower()
    parts = text.split(":")
    if text == "drf":
        return DRF()
    if text == "mfs":
        return MFS()
    if text == "hdrf":
        return HDRF()
    if text == "quincy":
        return Quincy()
    if text == "fifo":
        return FIFO()
    if parts[0] == "cpu-fair" and (len(parts) == 1 or parts[1:] == ["oc"]):
        return CPUFair(overcommit=len(parts) == 2)
    if parts[0] in ("slots", "capacity") and len(parts) in (2, 3) and (len(parts) == 2 or parts[2] == "oc"):
        try:
            k = int(parts[1])
        except ValueError:
            k = 0
        if k < 1:
            raise CaseError(f"scheduler: {excerpt(name)}: K must be a positive integer (schedulers: {known})")
        cls = Slots if parts[0] == "slots" else Capacity
        return cls(k, overcommit=len(parts) == 3)
    raise CaseError(f"scheduler: {unknown('scheduler', name, SCHEDULER_NAMES)}")
