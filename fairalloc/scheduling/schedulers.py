"""The simulator's schedulers: one interface (:class:`Scheduler`), looked up by name in
:func:`make_scheduler`.  What each one decides is described in :mod:`fairalloc.scheduling.simulator`.
"""

from __future__ import annotations

import heapq

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt, unknown
from fairalloc.engines.filling import drf_shares

EPS = 1e-9

#: the names ``make_scheduler`` accepts (K a positive integer)
SCHEDULER_NAMES = ("drf", "mfs", "hdrf", "cpu-fair", "cpu-fair:oc", "slots:K", "slots:K:oc", "capacity:K",
                   "capacity:K:oc", "fifo", "quincy")

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

    def bind(self, state) -> None:          # state: simulator.SimState

        self.state = state

    def changed(self, u: int) -> None:
        pass

    def pick(self, state, node: int):
        raise NotImplementedError


class _OwnerOrder(Scheduler):
    """Owners in increasing ``key(u)`` (ties: owner seen first), kept in a lazily updated heap (the
    heap of Algorithm 1): offer the node to each in turn until one's next task fits."""

    def bind(self, state):
        super().bind(state)
        self.version = [0] * len(state.owners)
        self.heap: list = []

    def key(self, u: int) -> float:
        raise NotImplementedError

    def changed(self, u):
        self.version[u] += 1
        if self.state.next_job(u) is not None:
            heapq.heappush(self.heap, (self.key(u), u, self.version[u], u))

    def pick(self, state, node):
        if self.slots is not None and state.slots_used[node] >= self.slots:
            return None
        return _first_taker(self.heap, self.version, state, node, self.check_cpu, self.check_mem)


_IDLE = object()


def _first_taker(heap, version, state, node, check_cpu=True, check_mem=True, group=None):
    """The first taker of an offer of ``node`` in a lazy heap of entries ``(key, tie, version, id)``.

    Entries are popped in order; stale ones (``version[id]`` moved on) are dropped. An id below
    ``len(state.owners)`` is an owner: she takes the node if her next task fits it, is idle (entry
    dropped: ``changed`` pushes her again when work appears) if she has nothing runnable, declines
    otherwise. Another id is a group, asked with ``group(id, node)``: a job, ``None`` (declines) or
    :data:`_IDLE`. Declined entries go back into the heap; the taker's entry does not (launching
    bumps its version, and ``changed`` pushes it again). Returns the job taken, or ``None``.
    """
    n = len(state.owners)
    declined = []
    found = None
    while heap:
        entry = heapq.heappop(heap)
        c = entry[3]
        if entry[2] != version[c]:
            continue
        if c < n:
            job = state.next_job(c)
            if job is None:
                continue
            if state.fits(node, job.next_task(), check_cpu, check_mem):
                found = job
                break
        else:
            found = group(c, node)
            if found is _IDLE:
                found = None
                continue
            if found is not None:
                break
        declined.append(entry)
    state.steps += len(declined)
    for entry in declined:
        heapq.heappush(heap, entry)
    return found


class DRF(_OwnerOrder):
    name = "drf"

    def key(self, u):
        return self.state.dominant_share(u)


class CPUFair(_OwnerOrder):
    name = "cpu-fair"

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


class MFS(Scheduler):
    """The MFS paper's two-level DRF: groups (owners) by weighted dominant share, then the group's
    jobs by weighted dominant share; the first job whose next task fits the node gets it."""

    name = "mfs"

    def bind(self, state):
        super().bind(state)
        weights = state.workload.group_weights or {}
        self.group_weight = [float(weights.get(o, 1.0)) for o in state.owners]

    def group_share(self, u: int) -> float:
        return self.state.dominant_share(u) / self.group_weight[u]

    def job_share(self, job) -> float:
        st = self.state
        return max(job.cpu / st.total_cpu, job.mem / st.total_mem) / job.spec.weight

    def pick(self, state, node):
        free_cpu, free_mem = state.free_cpu[node], state.free_mem[node]
        state.steps += len(state.owners)
        for u in sorted(range(len(state.owners)), key=lambda u: (self.group_share(u), u)):
            state.steps += len(state.user_jobs[u])
            jobs = [j for j in state.user_jobs[u].values() if j.runnable()]
            if not jobs:
                continue
            jobs.sort(key=lambda j: (self.job_share(j), j.id))
            for job in jobs:
                task = job.next_task()
                if task.cpu <= free_cpu + EPS and task.mem <= free_mem + EPS:
                    return job
        return None


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
            raise CaseError(f"owner {excerpt(owner)}: {len(parts)} levels of groups, more than the "
                            f"{limits.MAX_OWNER_DEPTH:,} of a hierarchy fairalloc schedules")
        if not all(parts):
            raise CaseError(f"owner {excerpt(owner)}: empty group name in the path "
                            "(hierarchical owners look like 'group/user')")
        for k in range(len(parts)):
            parent.setdefault("/".join(parts[:k + 1]), "/".join(parts[:k]) or None)
    groups = set(parent.values())
    both = [o for o in owners if o in groups]
    if both:
        child = next(n for n, p in parent.items() if p == both[0])
        raise CaseError(f"owner {excerpt(both[0])}: owns jobs and is also the group of {excerpt(child)} "
                        "(an owner must be a leaf)")
    return tree_from(list(parent), parent, weights or {})


class HDRF(Scheduler):
    """H-DRF (Bhattacharya et al., SoCC 2013) over the owners' tree (:func:`owner_tree`).

    The descent of :func:`fairalloc.engines.hierarchy.hdrf_schedule` on offers: from the root, into the
    child with the lowest weighted dominant share (of everything its subtree runs now, over the
    whole cluster), skipping blocked children (no runnable task below, or no next task below that
    fits the node), down to an owner, whose next job is served as under ``drf``. Every internal node
    keeps its children in a lazily updated heap, as ``drf`` keeps owners, so a decision costs heap
    operations along the path (a flat tree is exactly ``drf``'s heap: same keys, same ties).
    """

    name = "hdrf"

    def bind(self, state):
        from fairalloc.engines.hierarchy import ROOT
        super().bind(state)
        g = owner_tree(state.owners, state.workload.group_weights)
        n = len(state.owners)
        # node ids: owners 0..n-1 (their index u), then groups, then the root
        ids = {o: u for u, o in enumerate(state.owners)}
        for name in g:
            if name not in ids and g.out_degree(name):
                ids[name] = len(ids)
        self.n, self.root = n, ids[ROOT]
        size = len(ids)
        self.weight = [1.0] * size
        self.parent = [-1] * size
        self.rank = [0] * size                       # position among siblings: the tie-break
        for name, v in ids.items():
            self.weight[v] = g.nodes[name]["weight"]
            for k, child in enumerate(g.successors(name)):
                self.parent[ids[child]], self.rank[ids[child]] = v, k
        self.groups_above = []                       # per owner: her groups, bottom up (not the root)
        for u in range(n):
            path, v = [], self.parent[u]
            while v != self.root:
                path.append(v)
                v = self.parent[v]
            self.groups_above.append(path)
        self.cpu = [0.0] * size                      # groups' running totals (owners: state.cpu / mem)
        self.mem = [0.0] * size
        self.seen_cpu, self.seen_mem = [0.0] * n, [0.0] * n
        self.has_work = [False] * n
        self.working = [0] * size                    # groups: owners below with a runnable task
        self.version = [0] * size
        self.heaps: list[list] = [[] for _ in range(size)]

    def changed(self, u):
        st = self.state
        version, heaps, parent, rank = self.version, self.heaps, self.parent, self.rank
        version[u] += 1
        work = st.next_job(u) is not None
        delta = work - self.has_work[u]
        self.has_work[u] = work
        if work:
            heapq.heappush(heaps[parent[u]], (st.dominant_share(u) / self.weight[u], rank[u], version[u], u))
        dc, dm = st.cpu[u] - self.seen_cpu[u], st.mem[u] - self.seen_mem[u]
        self.seen_cpu[u], self.seen_mem[u] = st.cpu[u], st.mem[u]
        for v in self.groups_above[u]:
            self.cpu[v] += dc
            self.mem[v] += dm
            self.working[v] += delta
            version[v] += 1
            if self.working[v]:
                key = max(self.cpu[v] / st.total_cpu, self.mem[v] / st.total_mem) / self.weight[v]
                heapq.heappush(heaps[parent[v]], (key, rank[v], version[v], v))

    def pick(self, state, node):
        return self._group_offer(self.root, node)

    def _group_offer(self, v, node):
        """The first taker below group ``v`` (the root included), or :data:`_IDLE` if none has work."""
        if v != self.root and not self.working[v]:
            return _IDLE
        return _first_taker(self.heaps[v], self.version, self.state, node, group=self._group_offer)


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
            raise CaseError(f"scheduler: quincy: {len(state.owners)} owners x {state.n_nodes} nodes = {edges} "
                            f"flow edges, more than the {limits.MAX_QUINCY_EDGES:,} of its pure-Python flow network "
                            "(quincy is for small clusters)")
        self.plan_time = None
        self.plan: dict[int, list[int]] = {}         # node -> owners planned there, in offer order
        self.replanned: set[int] = set()             # nodes planned again in this instant

    def _fit(self, task, node) -> int:
        st = self.state
        room = [st.free_cpu[node] / task.cpu if task.cpu > 0 else float("inf"),
                st.free_mem[node] / task.mem if task.mem > 0 else float("inf")]
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
        fits = {u: {k: f for k in range(st.n_nodes) if (f := self._fit(job.next_task(), k)) > 0}
                for u, (job, _) in work.items()}
        users = list(work)
        demands = [(work[u][0].next_task().cpu / st.total_cpu, work[u][0].next_task().mem / st.total_mem)
                   for u in users]
        shares = drf_shares(demands, [work[u][1] + st.running[u] for u in users])
        wait = {u: int(st.time - work[u][0].submit) for u in users}
        above = 1 + max(wait.values())          # the cost of a task above its owner's share
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
        for u in sorted(users, key=lambda u: (st.dominant_share(u), u)):    # on a node: lowest share first
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
            self.replanned.add(node)          # the plan over-filled this node: plan again with the
            self._make_plan()                 # room really left, once per node and instant


class FIFO(Scheduler):
    name = "fifo"

    def pick(self, state, node):
        for job in state.jobs.values():
            state.steps += 1
            if job.runnable():
                return job if state.fits(node, job.next_task()) else None
        return None


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


