"""One discrete DRF / H-DRF engine: a heap of weighted dominant shares over a group tree.

Ghodsi, Zaharia, Hindman, Konwinski, Shenker, Stoica, "Dominant Resource Fairness: Fair Allocation
of Multiple Resource Types", USENIX NSDI 2011, section 4.2 (Algorithm 1, Table 1): launch one task
at a time to the user with the lowest (weighted) dominant share.  Bhattacharya, Culler, Friedman,
Ghodsi, Shenker, Stoica, "Hierarchical Scheduling for Diverse Datacenter Workloads", ACM SoCC 2013,
section 4 (H-DRF): from the root, repeatedly step into the child with the lowest weighted dominant
share, skipping blocked children, down to a leaf.  A flat instance is a one-level tree, so both are
one descent here.

:class:`DiscreteEngine` numbers its nodes: leaves (users, owners) ``0 .. n-1``, then groups
``n .. n+G-1``, then the root ``n+G``.  Every node ``v`` has a usage vector ``usage[v]`` (a group's:
the sum over its subtree; the root's: everything in use, ``C``) and a share
``share[v] = max_j usage[v, j] / (R_j w_vj)`` (zero capacity: the share of that resource is 0).
Every group keeps its children in a lazy heap of entries ``(share, tie, rank, node, version)``:

* ``rank`` is the child's position among its siblings (the order given, leaves by index on a flat
  tree): equal shares go to the child listed first;
* ``tie`` (between the two) is ``-`` the dominant share of the leaf's next task with
  ``tie_break="larger-task"`` (Table 1's order: B, whose task is 1/3 of the CPUs, before A, whose
  task is 2/9 of the memory), else 0;
* an entry is stale when its node was re-keyed since (an older ``version``) or is *out*; stale
  entries are dropped when they surface (and the heap is compacted when they pile up).

A leaf is *out* when it has nothing to run (``active=False``, its tasks or ``max_tasks`` used up)
or is *parked* (its next task did not fit: ``park``, until ``unpark``); a group is out when all its
children are.  :meth:`~DiscreteEngine.top` descends along valid heap tops: ``O(depth log k)``.

Decisions with tasks (Algorithm 1, the H-DRF descent).  Given ``demand`` (and optional explicit
task lists ``tasks`` and bounds ``limit``), :meth:`~DiscreteEngine.choose` picks the leaf whose next
task is launched next (``policy="stop"``: the pseudo-code, the first task that does not fit ends
the run; ``"skip"``: its leaf is parked and the next one tried), :meth:`~DiscreteEngine.launch`
launches it.  Two batched fast paths make the very same decisions (the same sums, divisions and
tie-breaks, bit for bit) many at a time:

* :meth:`~DiscreteEngine.run_counts` on a flat tree: the keys every leaf will have are computed
  in advance with ``np.cumsum`` and merged by one sort up to a level below which the heap's order
  is provably that merge (many users, each a few launches);
* :meth:`~DiscreteEngine.run_leaf` on any tree: a run of launches of one leaf, while at every level
  of her path her share stays below the runner-up's (one user launching on and on).

Use by a simulator scheduler (offers of one node at a time; tasks live in the simulator).  Build
the engine over the owners (and groups), without ``demand``; keep every owner's usage in it with
:meth:`~DiscreteEngine.set_usage` (or :meth:`~DiscreteEngine.add`) and her waiting state with
``changed(u, active=...)``; on an offer, :meth:`~DiscreteEngine.pick` with a ``fits`` predicate
descends in key order and *passes over* any owner whose next task does not fit (and any group
none of whose owners fits), without parking anyone; ``passed`` counts the entries passed over:

>>> import numpy as np
>>> engine = DiscreteEngine([9.0, 18.0], [1.0, 1.0, 1.0], parent=[3, 3, None, None],
...                         group_weights=[2.0])          # owners 0, 1 in group 3 (weight 2), owner 2
>>> engine.set_usage(0, [3.0, 2.0]); engine.set_usage(2, [1.0, 4.0])
>>> engine.pick()                                          # group 3: (3/9)/2 = 1/6 < owner 2: 4/18
1
>>> engine.pick(fits=lambda u: u != 1), engine.passed       # owner 1's task does not fit the node
(0, 1)
>>> engine.changed(1, active=False); engine.changed(0, active=False)   # nothing runnable below 3
>>> engine.pick()
2

A caller that keeps the usages itself writes the shares with :meth:`~DiscreteEngine.set_share` (no
numpy per step) and re-keys with ``changed``:

>>> engine.set_share(3, 0.25); engine.changed(0, active=True)   # group 3: 0.25 > owner 2: 4/18
>>> engine.pick()
2

In a scheduler: ``bind`` builds the engine (``weights`` 1 per owner for ``drf``, the tree's
weights for ``hdrf``; ``tie_break="order"``, so equal shares go to the owner or group listed first);
``changed(u)`` becomes ``engine.set_usage(u, [cpu_u, mem_u])`` and
``engine.changed(u, active=state.next_job(u) is not None)``; ``pick(state, node)`` is
``u = engine.pick(lambda u: state.fits(node, state.next_job(u).next_task()))`` (``None``: nobody
takes the node), then ``state.steps += engine.passed``.  Shares are ``max_j U_j / (R_j w)``: with
weight 1 the very floats of ``max(cpu / total_cpu, mem / total_mem)``.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from itertools import islice

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairalloc.core.errors import SolverError
from fairalloc.core.tolerances import FIT

#: equal dominant shares: the larger next task first (Table 1's order), or simply the child listed first
TIE_BREAKS = ("larger-task", "order")
POLICIES = ("stop", "skip")

#: leaf runs launched in one go by :meth:`DiscreteEngine.run_leaf` grow geometrically up to this many rows
RUN_CHUNK = 1 << 17
#: ... and to about this many floats per run (deep trees, many resources)
_RUN_CELLS = 1 << 20
#: a leaf's launches go in runs (the first of at least ``_RUN_START`` rows) when a run is expected to
#: last ``_RUN_START`` launches, or when the leaf was chosen ``_RUN_AFTER`` times in a row
_RUN_AFTER, _RUN_START = 8, 16

_Floats = NDArray[np.float64]
#: a heap entry: ``(share, tie, rank, node, version)``
_Entry = tuple[float, float, int, int, int]
#: a bucket of :meth:`DiscreteEngine._key_runs`: positions in ``act``, keys per leaf, the rows, their
#: sequential sums, the shares and the ties after 0, 1, ... launches
_Bucket = tuple[NDArray[np.intp], NDArray[np.int64], _Floats, _Floats, _Floats, _Floats]


class DiscreteEngine:
    """Weighted dominant shares of leaves and groups in per-group lazy heaps (see the module docstring).

    ``capacity``: the totals ``R`` (``m`` resources).  ``weights``: per leaf, a scalar or a vector of
    per-resource weights.  ``parent``: per leaf then per group, the parent group's node id (``None``:
    the root); default, a flat tree.  ``group_weights``: per group.  ``order``: the nodes (leaves and
    groups) in listing order, which ranks siblings (default: by id).  ``demand`` / ``tasks`` /
    ``limit``: the task model of :meth:`choose` and the batched runs (per leaf: one repeated demand
    vector, or an explicit task list; at most ``limit`` launches).
    """

    #: candidate launches generated per batch at most by the flat batch of :meth:`run_counts`
    chunk_target = 1 << 17

    def __init__(
        self,
        capacity: ArrayLike,
        weights: ArrayLike,
        *,
        parent: Sequence[int | None] | None = None,
        group_weights: Sequence[float] = (),
        order: Sequence[int] | None = None,
        demand: ArrayLike | None = None,
        tasks: Sequence[Iterable[ArrayLike] | None] | None = None,
        limit: ArrayLike | None = None,
        tie_break: str = "order",
        policy: str = "skip",
        fit: ArrayLike | None = None,
    ):
        R = np.asarray(capacity, dtype=float)
        W = np.asarray(weights, dtype=float)
        n, m, G = int(W.shape[0]), R.size, len(group_weights)
        if W.ndim == 1:
            W = W[:, None] * np.ones(m)
        self.n, self.m, self.root = n, m, n + G
        N = n + G + 1
        self.R = R
        safe_R = np.where(R > 0, R, np.inf)
        # R_j w_ij: a zero-capacity resource gets inf, so that its share is 0 instead of 0/0
        RW = R * W
        self.denom = np.vstack(
            [np.where(RW > 0, RW, np.inf).reshape(n, m)] + [safe_R * float(w) for w in group_weights] + [safe_R]
        )
        self.usage = np.zeros((N, m))
        self._u, self._d = list(self.usage), list(self.denom)  # row views, for single steps
        self.share = np.zeros(N)
        self.parent = [self.root] * (N - 1) + [-1]
        if parent is not None:
            for v, p in enumerate(parent):
                self.parent[v] = self.root if p is None or p < 0 else int(p)
        self.kids: list[list[int]] = [[] for _ in range(N)]
        self.rank = [0] * N
        for v in range(N - 1) if order is None else order:
            p = self.parent[v]
            self.rank[v] = len(self.kids[p])
            self.kids[p].append(v)
        self.paths: list[list[int]] = []  # per leaf: her nodes from the leaf up, not the root
        for i in range(n):
            path, v = [], i
            while v != self.root:
                path.append(v)
                v = self.parent[v]
            self.paths.append(path)
        self.flat = G == 0
        self.tie_break, self.policy = tie_break, policy
        self.fit = R * (1 + FIT) if fit is None else np.asarray(fit, dtype=float)
        self.demand = None if demand is None else np.asarray(demand, dtype=float)
        self.queues: list[deque[_Floats] | None] = [None] * n
        if tasks is not None:
            for i in range(n):
                listed = tasks[i]
                if listed is not None:
                    self.queues[i] = deque(np.asarray(t, dtype=float) for t in listed)
        self.limit = np.full(n, np.inf) if limit is None else np.asarray(limit, dtype=float)
        self.launched = np.zeros(n, dtype=int)
        self.active = [True] * n
        self.parked: set[int] = set()
        self.steps = 0
        #: decisions made one by one ("single"), in batches ("batched"), batches ("chunks")
        self.stats = {"single": 0, "batched": 0, "chunks": 0}
        self.passed = 0
        self._nonneg = self.demand is None or bool(np.all(self.demand >= 0))
        self._idle = [False] * n if self.demand is None else (~np.any(self.demand != 0, axis=1)).tolist()
        if self.demand is not None and tie_break == "larger-task":
            self._tie: list[float] = [-float(np.max(self.demand[i] / self._d[i])) for i in range(n)]
        self.version = [0] * N
        self.out = [True] * N
        self.open_kids = [0] * N
        self.heaps: list[list[_Entry]] = [[] for _ in range(N)]
        self._run = (-1, 0, _RUN_START)  # the current leaf run: leaf, launches, next chunk
        self._step_cache: dict[int, list[float]] = {}
        for i in range(n):
            if self._available(i):
                self._set_in(i)

    # -- the tree of heaps ------------------------------------------------------------------------------
    @property
    def C(self) -> _Floats:
        """Everything in use (the root's usage), a view."""
        row: _Floats = self.usage[self.root]
        return row

    def next_task(self, i: int) -> _Floats | None:
        """Leaf ``i``'s next task (``None``: none left, or no task model)."""
        if self.demand is None or self.launched[i] >= self.limit[i]:
            return None
        q = self.queues[i]
        if q is None:
            row: _Floats = self.demand[i]
            return row
        return q[0] if q else None

    def _task_model(self) -> _Floats:
        """``demand`` (the batched runs are only made with a task model)."""
        if self.demand is None:
            raise SolverError("discrete engine: no task model (demand) for a run (internal error)")
        return self.demand

    def _next(self, i: int) -> _Floats:
        """Leaf ``i``'s next task, which the descent just chose her for."""
        task = self.next_task(i)
        if task is None:
            raise SolverError("discrete engine: a chosen leaf has no next task (internal error)")
        return task

    def _available(self, i: int) -> bool:
        return self.active[i] and i not in self.parked and (self.demand is None or self.next_task(i) is not None)

    def _key(self, v: int) -> _Entry:
        tie = 0.0
        if v < self.n and self.tie_break == "larger-task":
            if self.queues[v] is None and self.demand is not None:
                tie = self._tie[v]  # her tasks are all alike
            else:
                task = self.next_task(v)
                tie = 0.0 if task is None else -float(np.max(task / self._d[v]))
        return (self.share.item(v), tie, self.rank[v], v, self.version[v])

    def _push(self, v: int) -> None:
        self.version[v] += 1
        p = self.parent[v]
        h = self.heaps[p]
        heapq.heappush(h, self._key(v))
        if len(h) > 2 * len(self.kids[p]) + 64:  # stale entries pile up: keep the current ones
            version, out = self.version, self.out
            h[:] = [e for e in h if e[4] == version[e[3]] and not out[e[3]]]
            heapq.heapify(h)

    def _set_in(self, v: int) -> None:
        self.out[v] = False
        p = self.parent[v]
        if p < 0:
            return
        self._push(v)
        self.open_kids[p] += 1
        if self.out[p]:
            self._set_in(p)

    def _set_out(self, v: int) -> None:
        self.out[v] = True
        p = self.parent[v]
        if p < 0:
            return
        self.open_kids[p] -= 1
        if not self.open_kids[p]:
            self._set_out(p)

    def _top_entry(self, g: int) -> _Entry | None:
        h, version, out = self.heaps[g], self.version, self.out
        while h:
            e = h[0]
            if e[4] == version[e[3]] and not out[e[3]]:
                return e
            heapq.heappop(h)
        return None

    def top(self) -> int | None:
        """The leaf of the descent: from the root, into the valid heap top, down to a leaf."""
        v = self.root
        if self.out[v]:
            return None
        n = self.n
        while v >= n:
            e = self._top_entry(v)
            if e is None:
                raise SolverError("discrete engine: a group that is not out has no open child (internal error)")
            v = e[3]
        return v

    def pick(self, fits: Callable[[int], bool] | None = None) -> int | None:
        """The first leaf in descent order for which ``fits(leaf)`` holds (every leaf without ``fits``).

        Leaves (and groups) passed over stay where they were; ``self.passed`` counts them."""
        self.passed = 0
        if fits is None or self.out[self.root]:
            return self.top()
        return self._search(self.root, fits)

    def _search(self, g: int, fits: Callable[[int], bool]) -> int | None:
        h, found = self.heaps[g], None
        declined: list[_Entry] = []
        while self._top_entry(g) is not None:
            v = h[0][3]
            found = (v if fits(v) else None) if v < self.n else self._search(v, fits)
            if found is not None:
                break
            declined.append(heapq.heappop(h))
        self.passed += len(declined)
        for e in declined:
            heapq.heappush(h, e)
        return found

    # -- usage and waiting state ---------------------------------------------------------------------------
    def add(self, i: int, delta: ArrayLike) -> None:
        """Leaf ``i`` (and so every group above her) uses ``delta`` more; the path is re-keyed."""
        more = np.asarray(delta, dtype=float)
        usage, share, denom = self._u, self.share, self._d
        for v in self.paths[i]:
            row = usage[v]
            row += more
            share[v] = (row / denom[v]).max()
        usage[self.root] += more
        self._rekey(i)

    def set_usage(self, i: int, usage: ArrayLike) -> None:
        """Leaf ``i`` now uses ``usage`` (her groups change by the difference)."""
        now = np.asarray(usage, dtype=float)
        delta = now - self.usage[i]
        for v in self.paths[i][1:]:
            self.usage[v] += delta
            self.share[v] = float(np.max(self.usage[v] / self.denom[v]))
        self.usage[self.root] += delta
        self.usage[i] = now
        self.share[i] = float(np.max(now / self.denom[i]))
        self._rekey(i)

    def set_share(self, v: int, value: float) -> None:
        """Node ``v``'s (a leaf's or a group's) share is ``value``, computed by the caller from usages
        it keeps itself (a simulator's scheduler: plain floats, cheaper than :meth:`set_usage`'s numpy
        steps).  Nothing is re-keyed: call :meth:`changed` on the leaf below afterwards, which
        re-keys her and her groups."""
        self.share[v] = value

    def changed(self, i: int, *, active: bool | None = None) -> None:
        """Re-key leaf ``i`` (her next task changed); ``active``: whether she has anything to run."""
        if active is not None:
            self.active[i] = bool(active)
        self._rekey(i)

    def _rekey(self, i: int) -> None:
        """Leaf ``i`` in or out as she is available, then her path re-keyed (the groups still in)."""
        path = self.paths[i]
        if self.active[i] and i not in self.parked and (self.demand is None or self.next_task(i) is not None):
            if self.out[i]:
                self._set_in(i)
            else:
                self._push(i)
        elif not self.out[i]:
            self._set_out(i)
        out = self.out
        for v in path[1:]:
            if not out[v]:
                self._push(v)

    def park(self, i: int) -> None:
        """Leaf ``i``'s next task does not fit: she is passed over until :meth:`unpark`."""
        self.parked.add(i)
        if not self.out[i]:
            self._set_out(i)

    def unpark(self, leaves: Iterable[int] | None = None) -> None:
        """Parked leaves (all by default) wait again."""
        woken = set(self.parked) if leaves is None else set(leaves) & self.parked
        self.parked -= woken
        for i in sorted(woken):
            self._rekey(i)

    def stop(self) -> None:
        """Algorithm 1's pseudo-code stops at the first task that does not fit: every leaf out."""
        for i in range(self.n):
            if not self.out[i]:
                self._set_out(i)

    # -- decisions with tasks ------------------------------------------------------------------------------
    def choose(self) -> int | None:
        """The leaf whose next task is launched next (not launched yet); ``None``: nothing more fits.

        A next task that does not fit ends everything (``policy="stop"``) or parks its leaf."""
        while True:
            i = self.top()
            if i is None:
                return None
            if (self._u[self.root] + self._next(i) <= self.fit).all():
                return i
            if self.policy == "stop":
                self.stop()
                return None
            self.park(i)

    def decide(self) -> tuple[int, np.ndarray] | None:
        """One decision: ``(leaf, task)`` launched, or ``None``."""
        i = self.choose()
        if i is None:
            return None
        task = self._next(i)
        self.launch(i, task)
        return i, task

    def launch(self, i: int, task: _Floats) -> None:
        """Launch ``task`` (leaf ``i``'s next one) without a fit test."""
        self.launched[i] += 1
        q = self.queues[i]
        if q is not None:
            q.popleft()
        self.steps += 1
        self.stats["single"] += 1
        self.add(i, task)

    def release(self, i: int, task: ArrayLike) -> None:
        """A task of leaf ``i`` finished: its resources return, and parked leaves wait again."""
        back = np.asarray(task, dtype=float)
        usage, share, denom = self.usage, self.share, self.denom
        for v in self.paths[i]:
            usage[v] -= back
            share[v] = float(np.max(usage[v] / denom[v]))
        usage[self.root] -= back
        woken = self.parked | {i}
        self.parked.clear()
        for k in woken:
            self._rekey(k)

    # -- many decisions at once: a flat tree --------------------------------------------------------------
    def run_counts(
        self, max_launches: float | None = None, *, batch: bool = True, target: int | None = None
    ) -> NDArray[np.int_]:
        """Decisions until nothing fits (or ``max_launches``); returns the launches per leaf.

        Exactly the decisions of :meth:`decide` one by one; on a flat tree in batches where that is
        provably identical (:meth:`_merge_batch`, at most ``target`` candidates each, default
        :attr:`chunk_target`), on a tree one by one.  ``batch=False``: one decision at a time."""
        before = self.launched.copy()
        left = np.inf if max_launches is None else int(max_launches)
        if not (batch and self.flat):
            while left > 0 and self.decide() is not None:
                left -= 1
            return self.launched - before
        top = self.chunk_target if target is None else target
        size = top
        while left > 0:
            parked = len(self.parked)
            got = self._merge_batch(left, size)
            if got is None:  # no leaf is waiting
                break
            left -= got
            # skip: leaves set aside near the end make long batches wasteful; grow back otherwise
            size = max(256, size // 4) if len(self.parked) > parked else min(top, 2 * size)
            if got < 8:  # batches do not pay here: a few single steps
                for _ in range(int(min(left, 32))):
                    if self.decide() is None:
                        return self.launched - before
                    left -= 1
        return self.launched - before

    def _waiting(self) -> dict[int, _Entry]:
        """Flat tree: every waiting leaf's current heap entry."""
        version, out = self.version, self.out
        return {e[3]: e for e in self.heaps[self.root] if e[4] == version[e[3]] and not out[e[3]]}

    def _merge_batch(self, budget: float, target: int) -> int | None:
        """Launch, in one go, every next decision whose dominant share is below a level ``theta``.

        Each waiting leaf's keys ``(s_i, tie, i)`` before her 1st, 2nd, ... further task are computed
        in advance (``U_i`` by ``np.cumsum`` along her launches: the same sequential additions as one
        by one, hence the same floats; ``s_i`` the same divisions and maximum).  While no leaf's keys
        decrease, the heap pops them in the order of the sorted union of all these sequences (a k-way
        merge), so the next decisions with ``s < theta`` are those keys in sorted order, provided
        ``theta`` is at most the first key not computed of every leaf.  A leaf whose keys decrease
        (explicit tasks: an equal share and a larger next task) lowers ``theta`` to her share there.
        ``C`` before every decision is again a sequential ``np.cumsum`` (``C + task`` is its next row,
        the very float the fit test compares); the first task that does not fit ends the run
        (``stop``) or parks that leaf (``skip``: the others go on, in the same order).  Returns the
        number of launches (0: none below ``theta``, ``None``: nobody is waiting).
        """
        waiting = self._waiting()
        if not waiting:
            return None
        self.stats["chunks"] += 1
        act = np.fromiter(sorted(waiting), dtype=np.int64, count=len(waiting))
        keys = [waiting[i] for i in act.tolist()]
        first, rem, queued = self._first_tasks(act)
        groups, level, nonneg = self._key_runs(act, keys, first, rem, queued, budget, target)
        parts = []
        for ks, nb, A, _cum, S, NS in groups:
            tt, jj = np.nonzero((np.arange(S.shape[0] - 1)[:, None] < nb[None, :]) & (S[:-1] < level))
            parts.append((S[tt, jj], NS[tt, jj], ks[jj], tt, A[:, tt + 1, jj].T))
        Sc = np.concatenate([p[0] for p in parts])
        if Sc.size == 0:
            return 0
        kc = np.concatenate([p[2] for p in parts])
        tc = np.concatenate([p[3] for p in parts])
        order = np.argsort(Sc)
        sorted_s = Sc[order]
        if np.any(sorted_s[1:] == sorted_s[:-1]):  # equal shares: the full tie-break
            NSc = np.concatenate([p[1] for p in parts])
            order = np.lexsort((tc, np.asarray(self.rank)[act[kc]], NSc, Sc))
        kc = kc[order]
        tasks = np.concatenate([p[4] for p in parts])[order]
        done, stopped = self._fit_prefix(act, kc, tasks, budget, nonneg)
        counts = np.bincount(done, minlength=act.size)
        self._apply_counts(act, keys, groups, counts, queued, stopped)
        return int(done.size)

    def _first_tasks(self, act: NDArray[np.int64]) -> tuple[_Floats, _Floats, list[int]]:
        """The waiting leaves' next tasks, launches left, and which have explicit task lists."""
        rem = self.limit[act] - self.launched[act]
        first = self._task_model()[act]
        queued = [k for k in range(act.size) if self.queues[act[k]] is not None]
        if queued:
            first = first.copy()
            for k in queued:
                q = self.queues[act[k]]
                if q is not None:  # (queued)
                    rem[k] = min(rem[k], len(q))
                    first[k] = q[0]
        return first, rem, queued

    def _key_runs(
        self,
        act: NDArray[np.int64],
        keys: list[_Entry],
        first: _Floats,
        rem: _Floats,
        queued: list[int],
        budget: float,
        target: int,
    ) -> tuple[list[_Bucket], float, bool]:
        """Every waiting leaf's next keys, in buckets: ``(groups, theta, nonneg)`` (see :meth:`_merge_batch`)."""
        m = self.m
        s0 = np.array([e[0] for e in keys], dtype=float)
        ns0 = np.array([e[1] for e in keys], dtype=float)
        RW = self.denom[act]
        nonneg = self._nonneg
        # how many further keys of each leaf: up to a level where about ``target`` lie below
        d = np.max(first / RW, axis=1)
        want = int(min(target, budget))
        pos = d > 0
        theta = np.inf
        if pos.any():
            use = pos.copy()
            for _ in range(4):
                inv = 1.0 / d[use]
                theta = (want + float(np.sum(s0[use] * inv))) / float(np.sum(inv))
                use = pos & (s0 < theta)
                if not use.any():
                    break
        with np.errstate(invalid="ignore", divide="ignore"):
            c = np.where(pos, np.floor((theta - s0) / np.where(pos, d, 1.0)) + 2, 64.0)
        c = np.minimum(np.maximum(c, 1), np.minimum(rem, want + 1)).astype(np.int64)
        unfinished = c < rem
        # buckets of leaves with about as many keys (powers of two): one padded cumsum each
        bucket = np.ceil(np.log2(c)).astype(np.int64)
        level = np.inf
        groups: list[_Bucket] = []
        qset = set(queued)
        for b in np.unique(bucket).tolist():
            ks = np.flatnonzero(bucket == b)
            cb = int(c[ks].max())
            A = np.empty((m, cb + 1, ks.size))
            A[:, 0, :] = self.usage[act[ks]].T
            A[:, 1:, :] = first[ks].T[:, None, :]
            NS = np.repeat(ns0[ks][None, :], cb, axis=0)
            qs = [(j, k) for j, k in enumerate(ks.tolist()) if k in qset]
            for j, k in qs:
                rows = np.array(list(islice(self.queues[act[k]], int(c[k]))), dtype=float).reshape(-1, m)
                A[:, 1 : 1 + len(rows), j] = rows.T
                nonneg = nonneg and bool(np.all(rows >= 0))
                if self.tie_break == "larger-task":
                    NS[: len(rows), j] = -np.max(rows / RW[k], axis=1)
            cum = np.cumsum(A, axis=1)  # U_i after t launches: sequential sums
            S = np.max(cum / RW[ks].T[:, None, :], axis=0)
            S[0] = s0[ks]
            NS[0] = ns0[ks]
            nb = c[ks].copy()
            fin = unfinished[ks]
            if fin.any():
                level = min(level, float(S[nb[fin], np.flatnonzero(fin)].min()))
            for j, _k in qs:  # keys must not decrease
                n = int(nb[j])
                if n > 1:
                    down = np.flatnonzero((S[1:n, j] == S[: n - 1, j]) & (NS[1:n, j] < NS[: n - 1, j]))
                    if down.size:
                        nb[j] = down[0] + 1
                        level = min(level, float(S[down[0], j]))
            groups.append((ks, nb, A, cum, S, NS))
        return groups, level, nonneg

    def _fit_prefix(
        self, act: NDArray[np.int64], kc: NDArray[np.intp], tasks: _Floats, budget: float, nonneg: bool
    ) -> tuple[NDArray[np.intp], bool]:
        """The merged decisions that launch (fit tests on a sequential ``np.cumsum`` of ``C``):
        ``(positions in act launched, in order; whether the run stopped)``; sets ``C``."""
        C = self.C
        Rtol = self.fit
        done_k = []
        left = budget
        stopped = False
        while kc.size and left > 0:
            if kc.size > left:
                kc, tasks = kc[: int(left)], tasks[: int(left)]
            Cc = np.cumsum(np.concatenate([C[None, :], tasks]), axis=0)
            after = Cc[1:]  # C + task at each decision, as compared
            if nonneg:  # C only grows: first excess per resource
                over = np.flatnonzero(Cc[-1] > Rtol)
                p = min(
                    (int(np.searchsorted(after[:, j], Rtol[j], side="right")) for j in over.tolist()), default=kc.size
                )
            else:
                bad = np.flatnonzero(~np.all(after <= Rtol, axis=1))
                p = int(bad[0]) if bad.size else kc.size
            done_k.append(kc[:p])
            C = Cc[p]
            left -= p
            if p == kc.size or left <= 0:
                break
            k = kc[p]  # the task at p does not fit
            if self.policy == "stop":
                stopped = True
                break
            self.parked.add(int(act[k]))
            keep = np.flatnonzero(kc[p + 1 :] != k)[: 2 * act.size] + p + 1  # the others go on (a window)
            kc, tasks = kc[keep], tasks[keep]
        self.usage[self.root] = C
        return (np.concatenate(done_k) if done_k else np.zeros(0, dtype=np.int64)), stopped

    def _apply_counts(
        self,
        act: NDArray[np.int64],
        keys: list[_Entry],
        groups: list[_Bucket],
        counts: NDArray[np.intp],
        queued: list[int],
        stopped: bool,
    ) -> None:
        """The state after a merged batch: usages, shares, launches, task lists, the root's heap."""
        for ks, _nb, _A, cum, S, _NS in groups:
            cnt = counts[ks]
            sel = np.flatnonzero(cnt)
            if sel.size:
                users = act[ks[sel]]
                self.usage[users] = cum[:, cnt[sel], sel].T
                self.share[users] = S[cnt[sel], sel]
        self.launched[act] += counts
        for k in queued:
            q = self.queues[act[k]]
            for _ in range(int(counts[k])):
                q.popleft()
        total = int(counts.sum())
        self.steps += total
        self.stats["batched"] += total
        heap = []
        if not stopped:
            qset = set(queued)
            for k, i in enumerate(act.tolist()):
                if i in self.parked:
                    continue
                if not counts[k]:
                    heap.append(keys[k])
                elif self.launched[i] < self.limit[i] and self.next_task(i) is not None:
                    self.version[i] += 1
                    tie = keys[k][1] if k not in qset else self._key(i)[1]
                    heap.append((self.share.item(i), tie, self.rank[i], i, self.version[i]))
        heapq.heapify(heap)
        self.heaps[self.root] = heap
        inside = {e[3] for e in heap}
        for i in act.tolist():
            self.out[i] = i not in inside
        self.open_kids[self.root] = sum(not self.out[i] for i in range(self.n))
        self.out[self.root] = not self.open_kids[self.root]

    # -- many decisions at once: one leaf's run ---------------------------------------------------------------
    def run_leaf(self, i: int, most: float = np.inf, *, batch: bool = True) -> int:
        """Launch leaf ``i``'s next task (chosen and fitting: :meth:`choose`) and, with ``batch``, a
        run of her further tasks as long as the descent would choose her again and they fit: the
        decisions of :meth:`choose` one by one, bit for bit.  At most ``most`` launches (>= 1);
        returns the number launched.

        Run lengths are a guess (a share grows by at most its step per launch; :meth:`_leaf_run` checks
        every launch): a new leaf's first launch is a single step; then runs of geometrically
        growing size once one is expected to last ``_RUN_START`` launches or the leaf was chosen
        ``_RUN_AFTER`` times in a row.  A leaf demanding nothing launches up to her bound at once.
        """
        d = self._next(i)
        path = self.paths[i]
        limits: list[tuple[float, float]] | None = None
        last, streak, size = self._run
        if not batch or self.queues[i] is not None or self.tie_break != "order":
            room = 1  # (runs compare shares and ranks only)
        elif self._idle[i]:  # no demand (so a bound): nothing ever changes
            room = int(self.limit[i] - self.launched[i])
        elif i != last:  # a new run: its first launch is a single step
            last, streak, size = i, 0, _RUN_START
            room = 1
        else:
            limits = [self._runner_up(v) for v in path[::-1]]
            expect = min(
                [
                    (min(lim) - self.share[v]) / step if step > 0 else np.inf
                    for lim, v, step in zip(limits, path[::-1], self._steps(i))
                ]
            )
            if expect >= _RUN_START or streak >= _RUN_AFTER:
                cells = max(256, _RUN_CELLS // ((len(path) + 1) * self.m))
                room = int(min(max(size, expect + 2), RUN_CHUNK, cells))
                size = min(2 * size, RUN_CHUNK)
            else:
                room = 1
        if room > 1:
            room = int(min(room, most, max(1, self.limit[i] - self.launched[i])))  # and her bound
        if room <= 1:
            self.launch(i, d)
            done = 1
        else:
            done = self._leaf_run(i, d, limits, room)
            self.launched[i] += done
            self.steps += done
            self.stats["batched"] += done
            self._rekey(i)
        self._run = (last, streak + done, size)
        return done

    def _steps(self, i: int) -> list[float]:
        """At most how much one task of leaf ``i`` raises the share of each node on her path, root down."""
        if i not in self._step_cache:
            d = self._task_model()[i]
            self._step_cache[i] = [float(np.max(d / self.denom[v])) for v in self.paths[i][::-1]]
        return self._step_cache[i]

    def _runner_up(self, g: int) -> tuple[float, float]:
        """``(before, after)`` for node ``g``, the valid top of its parent's heap: the smallest share of
        its open siblings listed before it, and after it -- as far as the decision goes: it stays
        chosen while its share stays below the runner-up's, or equal to it if the runner-up is
        listed after it (ties to the first listed; ``tie`` is 0 on these paths)."""
        p = self.parent[g]
        if self.open_kids[p] < 2:
            return np.inf, np.inf
        h = self.heaps[p]
        first = heapq.heappop(h)
        second = self._top_entry(p)
        heapq.heappush(h, first)
        if second is None:  # two open children: a second valid entry
            raise SolverError("discrete engine: an open sibling has no heap entry (internal error)")
        return (second[0], second[0]) if second[2] < first[2] else (np.inf, second[0])

    def _leaf_run(self, i: int, d: _Floats, limits: list[tuple[float, float]] | None, room: int) -> int:
        """Launch up to ``room`` (>= 2, within her bound) tasks ``d`` of leaf ``i`` in one go; the first is decided.

        The next decision chooses her again iff at every level the node on her path keeps a share
        strictly below ``limits[l][0]`` (the smallest share of its open siblings listed before it)
        and at most ``limits[l][1]`` (those listed after it), and launches her task iff it still fits
        and she is below her bound.  Nothing else changes meanwhile.  The usages after 1, 2, ...
        further launches are a sequential ``np.cumsum`` of rows ``[U_v, d, d, ...]`` (the very floats
        of ``U_v + d`` one at a time) and the shares the same division and maximum as one step, so
        the first launch whose decision could differ is found exactly.  Returns the launches (>= 1).
        """
        nodes = [self.root] + self.paths[i][::-1]
        if not np.any(d):  # no demand: nothing changes, all the same
            for v in nodes:
                self.usage[v] = self.usage[v] + d
            for v in nodes[1:]:
                self.share[v] = float(np.max(self.usage[v] / self.denom[v]))
            return room
        if limits is None:  # (run_leaf computes them for every run of a leaf with demand)
            raise SolverError("discrete engine: a leaf run without its runners-up (internal error)")
        L, m = len(nodes), d.size
        A = np.empty((L, m, room + 1))  # launches along the last (contiguous) axis
        A[:, :, 0] = self.usage[nodes]
        A[:, :, 1:] = d[None, :, None]
        cum = np.cumsum(A, axis=2)  # cum[k, :, t]: usage of nodes[k] after t launches
        den = self.denom[nodes[1:]]
        S = np.max(cum[1:] / den[:, :, None], axis=1)  # S[k - 1, t]: share of nodes[k] after t launches
        before = np.array([b for b, _ in limits])[:, None]
        after = np.array([a for _, a in limits])[:, None]
        # decision t + 1 (t = 1 .. room - 1) chooses this leaf again and launches her task
        ok = np.all((S[:, 1:room] < before) & (S[:, 1:room] <= after), axis=0)
        ok &= ~np.any(cum[0, :, 2 : room + 1] > self.fit[:, None], axis=0)
        bad = np.flatnonzero(~ok)
        done = int(bad[0]) + 1 if bad.size else room
        self.usage[nodes] = cum[:, :, done]
        self.share[nodes[1:]] = S[:, done]
        return done
