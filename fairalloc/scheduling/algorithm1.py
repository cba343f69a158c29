"""Discrete DRF: Algorithm 1 of the DRF paper (a heap of dominant shares) and machines.

Ghodsi, Zaharia, Hindman, Konwinski, Shenker, Stoica, "Dominant Resource Fairness: Fair
Allocation of Multiple Resource Types", USENIX NSDI 2011, section 4.2 (Algorithm 1, Table 1) and
section 6.2 (Theorem 7); docs/formulations.md section 1.

:class:`DRFScheduler` keeps the consumed vector ``C``, every user's allocation ``U_i`` and her
(weighted) dominant share ``s_i = max_j U_ij / (R_j w_ij)`` in a binary heap: each decision picks
the user with the lowest ``s_i`` and launches her *next* task (tasks of one user may differ) if it
fits, ``O(log n)`` per decision.  Finishing a task releases its resources.

* Tie-break (documented, deterministic): equal dominant shares go to the user whose next task has
  the larger dominant share, then to the earlier user.  This is the order of Table 1 (B, whose
  task is 1/3 of the CPUs, before A, whose task is 2/9 of the memory).
* :meth:`DRFScheduler.run_counts` makes the same decisions as :meth:`~DRFScheduler.step` one by
  one (bit for bit: the same sums, divisions and tie-break), without a record per decision and in
  batches: the keys every user will have are computed in advance with ``np.cumsum`` and merged by
  one sort up to a level below which the heap's order is provably that merge.
* ``policy="stop"``: the pseudo-code, which stops at the first task that does not fit;
  ``policy="skip"``: the text's variant, which sets aside users whose next task does not fit and
  goes on with the others (until a release makes room again).

:func:`fill_machines` places tasks machine by machine as in the proof of Theorem 7: always the
user with the lowest dominant share (over the whole cluster), moving to the next machine when
less than a *max-task* (``max_i D_ij`` for every ``j``) is free there.  Theorem 7: any two users'
dominant shares then differ by at most the max-task's dominant share.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from itertools import islice
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt, unknown
from fairalloc.core.instance import Instance
from fairalloc.core.tolerances import FIT

POLICIES = ("stop", "skip")
#: equal dominant shares: the larger next task first (Table 1's order), or simply the earlier user
TIE_BREAKS = ("larger-task", "order")


@dataclass
class Launch:
    """One scheduling decision: who got a task, and the state right after it."""

    step: int
    user: str
    task: tuple[float, ...]
    shares: dict[str, tuple[float, ...]]          # every user's share of every resource
    dominant_shares: dict[str, float]
    consumed: tuple[float, ...]                   # share of each resource in use
    machine: int | None = None


class DRFScheduler:
    """Algorithm 1 over a pool of capacity ``R`` (see the module docstring).

    ``tasks``: per user, either one demand vector (repeated, up to ``max_tasks`` launches) or an
    explicit sequence of task demands.
    """

    def __init__(self, instance: Instance, tasks: dict[str, Sequence] | None = None, *, policy: str = "stop",
                 capacity=None, tie_break: str = "larger-task"):
        if policy not in POLICIES:
            raise CaseError(f"--policy: {unknown('policy', policy, POLICIES, 'policies')}")
        if tie_break not in TIE_BREAKS:
            raise CaseError(f"--tie-break: {unknown('tie-break rule', tie_break, TIE_BREAKS)}")
        self.tie_break = tie_break
        self.instance = instance
        self.policy = policy
        self.R = np.asarray(instance.capacity if capacity is None else capacity, dtype=float)
        self.W = instance.weight_matrix()
        # R_j w_ij, the denominators of shares; a zero-capacity resource (nobody demands it) gets
        # inf, so that its share is 0 instead of 0/0 (a division all the same: the same floats)
        RW = self.R * self.W
        self.RW = np.where(RW > 0, RW, np.inf)
        self._R_div = np.where(self.R > 0, self.R, np.inf)
        #: what the fit test compares ``C + task`` with (fill_machines, whose machines decide, sets inf)
        self.fit_R = self.R * (1 + FIT)
        n, m = instance.n, instance.m
        self.U = np.zeros((n, m))
        self.C = np.zeros(m)
        self.s = np.zeros(n)
        self.launched = np.zeros(n, dtype=int)
        bounds = instance.bounds()
        self.queues: list[deque | None] = []
        for i, u in enumerate(instance.users):
            given = None if tasks is None else tasks.get(u)
            # no explicit list: identical tasks of her demand, up to max_tasks (unbounded without one)
            self.queues.append(None if given is None else deque(np.asarray(t, dtype=float) for t in given))
        self.limit = np.where(np.isfinite(bounds), bounds, np.inf)
        self.heap: list[tuple] = []
        self.version = np.zeros(n, dtype=int)
        self.parked: set[int] = set()                   # skip policy: users whose task did not fit
        self.steps = 0
        #: counters: decisions made one by one ("single"), decisions made in batches ("batched"),
        #: batches ("chunks"); see :meth:`run_counts`
        self.stats = {"single": 0, "batched": 0, "chunks": 0}
        self._nonneg = bool(np.all(instance.demand >= 0))
        for i in range(n):
            self._push(i)

    # -- the heap -----------------------------------------------------------------------------------
    def next_task(self, i: int) -> np.ndarray | None:
        if self.launched[i] >= self.limit[i]:
            return None
        q = self.queues[i]
        if q is None:
            return self.instance.demand[i]
        return q[0] if q else None

    def _key(self, i: int):
        if self.tie_break == "order":
            return (self.s[i], 0.0, i)
        task = self.next_task(i)
        size = 0.0 if task is None else float(np.max(task / self.RW[i]))
        return (self.s[i], -size, i)

    def _push(self, i: int) -> None:
        if self.next_task(i) is None:
            return
        self.version[i] += 1
        heapq.heappush(self.heap, (*self._key(i), int(self.version[i])))

    def _pop(self) -> int | None:
        while self.heap:
            *_, i, version = heapq.heappop(self.heap)
            if version == self.version[i] and i not in self.parked:
                return int(i)
        return None

    # -- decisions ----------------------------------------------------------------------------------
    def _decide(self) -> tuple[int, np.ndarray] | None:
        """One decision of Algorithm 1 without a :class:`Launch` record: ``(user index, task)``."""
        while True:
            i = self._pop()
            if i is None:
                return None
            task = self.next_task(i)
            if np.all(self.C + task <= self.fit_R):
                self._apply(i, task)
                return i, task
            if self.policy == "stop":                   # the pseudo-code: the cluster is full
                self.heap.clear()
                return None
            self.parked.add(i)                          # skip: others may still fit

    def step(self) -> Launch | None:
        """One decision of Algorithm 1; ``None`` when nothing more can be launched."""
        decided = self._decide()
        return None if decided is None else self._record(*decided)

    def _apply(self, i: int, task: np.ndarray) -> None:
        self.C += task
        self.U[i] += task
        self.s[i] = float(np.max(self.U[i] / self.RW[i]))
        self.launched[i] += 1
        if self.queues[i] is not None:
            self.queues[i].popleft()
        self.steps += 1
        self.stats["single"] += 1
        self._push(i)

    def _record(self, i: int, task: np.ndarray) -> Launch:
        users = self.instance.users
        return Launch(self.steps, users[i], tuple(float(v) for v in task),
                      {u: tuple(float(v) for v in self.U[k] / self._R_div) for k, u in enumerate(users)},
                      {u: float(self.s[k]) for k, u in enumerate(users)}, tuple(float(v) for v in self.C / self._R_div))

    def _launch(self, i: int, task: np.ndarray) -> Launch:
        self._apply(i, task)
        return self._record(i, task)

    def release(self, user, task) -> None:
        """A task of ``user`` finished: its resources return to the pool."""
        i = self.instance.user_index(user)
        task = np.asarray(task, dtype=float)
        if np.any(task > self.U[i] + 1e-9):
            raise CaseError(f"release: user {user} does not hold {task.tolist()}")
        self.C -= task
        self.U[i] -= task
        self.s[i] = float(np.max(self.U[i] / self.RW[i]))
        woken = self.parked | {i}
        self.parked.clear()
        for k in woken:
            self._push(k)

    def run(self, max_steps: int | None = None) -> list[Launch]:
        """Decisions until nothing fits (or ``max_steps``), each recorded as a :class:`Launch`.

        A trace is bounded (:data:`fairalloc.core.limits.MAX_TRACE_LAUNCHES` launches and
        :data:`~fairalloc.core.limits.MAX_TRACE_CELLS` launches x users): beyond, :class:`CaseError`
        (``--trace``), or the launch limit's error when the run would also exceed
        :data:`~fairalloc.core.limits.MAX_LAUNCHES`; :meth:`run_counts` keeps counts only.
        """
        cap = max(1, min(limits.MAX_TRACE_LAUNCHES, limits.MAX_TRACE_CELLS // max(1, self.instance.n)))
        trace = []
        while max_steps is None or len(trace) < max_steps:
            if len(trace) >= cap:
                if self._decide() is None:          # the run ends just at the cap
                    break
                self.run_counts()                   # the launch limit's error, if the run passes it
                raise CaseError(f"--trace: Algorithm 1 makes more than {cap:,} launches on this case, the most "
                                f"fairalloc records one by one ({limits.MAX_TRACE_LAUNCHES:,} launches, "
                                f"{limits.MAX_TRACE_CELLS:,} launches x users); use --no-trace for the counts")
            launch = self.step()
            if launch is None:
                break
            trace.append(launch)
        return trace

    def _too_many(self) -> CaseError:
        i = int(np.argmax(self.launched))
        user = self.instance.users[i]
        return CaseError(f"users.{user}.demand: Algorithm 1 makes more than {limits.MAX_LAUNCHES:,} launches on this "
                         f"case ({int(self.launched[i])} of them user {user}'s: demands tiny beside the capacity), "
                         "the most fairalloc schedules")

    # -- many decisions at once -----------------------------------------------------------------------
    #: candidate launches generated per batch at most; see :meth:`run_counts`
    chunk_target = 1 << 17

    def run_counts(self, max_launches: int | None = None, *, batch: bool = True) -> np.ndarray:
        """Decisions until nothing fits (or ``max_launches``); returns the tasks launched per user.

        Exactly the decisions of calling :meth:`step` that many times (same tie-break, policies,
        floating-point values of ``U``, ``C`` and ``s``), without a :class:`Launch` record per
        decision, and in batches where that is provably identical (see :meth:`_batch`).
        ``batch=False``: one decision at a time (the lean single step, for comparison).
        Launches are bounded: a run that would make more than :data:`fairalloc.core.limits.MAX_LAUNCHES`
        (``max_launches`` larger or ``None``) stops there with :class:`CaseError`.
        """
        if max_launches is None or max_launches > limits.MAX_LAUNCHES - self.steps:
            budget = max(0, limits.MAX_LAUNCHES - self.steps)
            counts = self._run_counts(budget, batch)
            if self._decide() is not None:          # one more would pass the limit
                raise self._too_many()
            return counts
        return self._run_counts(max_launches, batch)

    def _run_counts(self, max_launches, batch: bool) -> np.ndarray:
        before = self.launched.copy()
        left = np.inf if max_launches is None else int(max_launches)
        while not batch and left > 0:
            if self._decide() is None:
                return self.launched - before
            left -= 1
        target = self.chunk_target
        while left > 0:
            parked = len(self.parked)
            got = self._batch(left, target)
            if got is None:                             # no user is waiting
                break
            left -= got
            # skip: users set aside near the end make long batches wasteful; grow back otherwise
            target = max(256, target // 4) if len(self.parked) > parked else min(self.chunk_target, 2 * target)
            if got < 8:                                 # batches do not pay here: a few single steps
                for _ in range(int(min(left, 32))):
                    if self._decide() is None:
                        return self.launched - before
                    left -= 1
        return self.launched - before

    def _batch(self, budget, target: int) -> int | None:
        """Launch, in one go, every next decision whose dominant share is below a level ``theta``.

        Each waiting user's keys ``(s_i, -next task's dominant share, i)`` before her 1st, 2nd, ...
        further task are computed in advance (``U_i`` by ``np.cumsum`` along her launches: the same
        sequential additions as one by one, hence the same floats; ``s_i`` the same divisions and
        maximum).  While no user's keys decrease, the heap pops them in the order of the sorted
        union of all these sequences (a k-way merge), so the next decisions with ``s < theta`` are
        those keys in sorted order, provided ``theta`` is at most the first key not computed of
        every user.  A user whose keys decrease (explicit tasks: an equal share and a larger next
        task) lowers ``theta`` to her share there.  ``C`` before every decision is again a sequential
        ``np.cumsum`` (``C + task`` is its next row, the very float the fit test compares); the
        first task that does not fit ends the run (``stop``) or sets that user aside (``skip``: the
        others go on, in the same order).  Returns the number of launches (0: none below ``theta``,
        ``None``: nobody is waiting).
        """
        waiting = {}
        for entry in self.heap:
            i = entry[2]
            if entry[3] == self.version[i] and i not in self.parked:
                waiting[i] = entry
        if not waiting:
            return None
        self.stats["chunks"] += 1
        act = np.fromiter(sorted(waiting), dtype=np.int64, count=len(waiting))
        na, m = act.size, self.C.size
        keys = [waiting[i] for i in act.tolist()]
        s0 = np.array([e[0] for e in keys], dtype=float)
        ns0 = np.array([e[1] for e in keys], dtype=float)
        RW = self.RW[act]
        rem = self.limit[act] - self.launched[act]
        first = self.instance.demand[act]
        queued = [k for k in range(na) if self.queues[act[k]] is not None]
        if queued:
            first = first.copy()
            for k in queued:
                q = self.queues[act[k]]
                rem[k] = min(rem[k], len(q))
                first[k] = q[0]
        nonneg = self._nonneg
        # how many further keys of each user: up to a level where about ``target`` lie below
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
        # buckets of users with about as many keys (powers of two): one padded cumsum each
        bucket = np.ceil(np.log2(c)).astype(np.int64)
        level = np.inf
        groups = []
        qset = set(queued)
        for b in np.unique(bucket).tolist():
            ks = np.flatnonzero(bucket == b)
            cb = int(c[ks].max())
            A = np.empty((m, cb + 1, ks.size))
            A[:, 0, :] = self.U[act[ks]].T
            A[:, 1:, :] = first[ks].T[:, None, :]
            NS = np.repeat(ns0[ks][None, :], cb, axis=0)
            qs = [(j, k) for j, k in enumerate(ks.tolist()) if k in qset]
            for j, k in qs:
                rows = np.array(list(islice(self.queues[act[k]], int(c[k]))), dtype=float).reshape(-1, m)
                A[:, 1:1 + len(rows), j] = rows.T
                nonneg = nonneg and bool(np.all(rows >= 0))
                if self.tie_break == "larger-task":
                    NS[:len(rows), j] = -np.max(rows / RW[k], axis=1)
            cum = np.cumsum(A, axis=1)                  # U_i after t launches: sequential sums
            S = np.max(cum / RW[ks].T[:, None, :], axis=0)
            S[0] = s0[ks]
            NS[0] = ns0[ks]
            nb = c[ks].copy()
            fin = unfinished[ks]
            if fin.any():
                level = min(level, float(S[nb[fin], np.flatnonzero(fin)].min()))
            for j, k in qs:                             # keys must not decrease
                n = int(nb[j])
                if n > 1:
                    down = np.flatnonzero((S[1:n, j] == S[:n - 1, j]) & (NS[1:n, j] < NS[:n - 1, j]))
                    if down.size:
                        nb[j] = down[0] + 1
                        level = min(level, float(S[down[0], j]))
            groups.append((ks, nb, A, cum, S, NS))
        parts = []
        for ks, nb, A, cum, S, NS in groups:
            tt, jj = np.nonzero((np.arange(S.shape[0] - 1)[:, None] < nb[None, :]) & (S[:-1] < level))
            parts.append((S[tt, jj], NS[tt, jj], ks[jj], tt, A[:, tt + 1, jj].T))
        Sc = np.concatenate([p[0] for p in parts])
        if Sc.size == 0:
            return 0
        kc = np.concatenate([p[2] for p in parts])
        tc = np.concatenate([p[3] for p in parts])
        order = np.argsort(Sc)
        sorted_s = Sc[order]
        if np.any(sorted_s[1:] == sorted_s[:-1]):       # equal shares: the full tie-break
            NSc = np.concatenate([p[1] for p in parts])
            order = np.lexsort((tc, act[kc], NSc, Sc))
        kc = kc[order]
        tasks = np.concatenate([p[4] for p in parts])[order]
        C = self.C
        Rtol = self.fit_R
        done_k = []
        left = budget
        stopped = False
        while kc.size and left > 0:
            if kc.size > left:
                kc, tasks = kc[:int(left)], tasks[:int(left)]
            Cc = np.cumsum(np.concatenate([C[None, :], tasks]), axis=0)
            after = Cc[1:]                              # C + task at each decision, as compared
            if nonneg:                                  # C only grows: first excess per resource
                over = np.flatnonzero(Cc[-1] > Rtol)
                p = min((int(np.searchsorted(after[:, j], Rtol[j], side="right")) for j in over.tolist()),
                        default=kc.size)
            else:
                bad = np.flatnonzero(~np.all(after <= Rtol, axis=1))
                p = int(bad[0]) if bad.size else kc.size
            done_k.append(kc[:p])
            C = Cc[p]
            left -= p
            if p == kc.size or left <= 0:
                break
            k = kc[p]                                   # the task at p does not fit
            if self.policy == "stop":
                stopped = True
                break
            self.parked.add(int(act[k]))
            keep = np.flatnonzero(kc[p + 1:] != k)[:2 * na] + p + 1   # the others go on (a window)
            kc, tasks = kc[keep], tasks[keep]
        done = np.concatenate(done_k) if done_k else np.zeros(0, dtype=np.int64)
        counts = np.bincount(done, minlength=na)
        self.C = np.array(C, dtype=float)
        for ks, nb, A, cum, S, NS in groups:
            cnt = counts[ks]
            sel = np.flatnonzero(cnt)
            if sel.size:
                users = act[ks[sel]]
                self.U[users] = cum[:, cnt[sel], sel].T
                self.s[users] = S[cnt[sel], sel]
        self.launched[act] += counts
        for k in queued:
            q = self.queues[act[k]]
            for _ in range(int(counts[k])):
                q.popleft()
        total = int(done.size)
        self.steps += total
        self.stats["batched"] += total
        if stopped:
            self.heap.clear()
            return total
        heap = []
        moved = counts > 0
        for k in np.flatnonzero(~moved).tolist():
            i = int(act[k])
            if i not in self.parked:
                heap.append(keys[k])
        again = moved & (self.launched[act] < self.limit[act])
        for k in np.flatnonzero(again).tolist():
            i = int(act[k])
            if i in self.parked or self.next_task(i) is None:
                continue
            self.version[i] += 1
            heap.append((float(self.s[i]), float(ns0[k]) if k not in qset else self._key(i)[1], i,
                         int(self.version[i])))
        heapq.heapify(heap)
        self.heap = heap
        return total

def table_1(trace: Iterable[Launch], instance: Instance, exact: bool = True) -> tuple[list[str], list[list[str]]]:
    """Rows in the layout of the paper's Table 1: who was scheduled, each user's resource shares and
    dominant share, and the share of each resource allocated in total."""
    def show(v: float) -> str:
        return str(Fraction(v).limit_denominator(1000)) if exact else f"{v:.4g}"
    head = ["schedule"]
    for u in instance.users:
        head += [f"user {u} res. shares", f"user {u} dom. share"]
    head += [f"{r} total alloc." for r in instance.resources]
    rows = []
    for launch in trace:
        row = [f"User {launch.user}"]
        for u in instance.users:
            row += ["<" + ", ".join(show(v) for v in launch.shares[u]) + ">", show(launch.dominant_shares[u])]
        row += [show(v) for v in launch.consumed]
        rows.append(row)
    return head, rows


# -- machines (Theorem 7) -------------------------------------------------------------------------------

@dataclass
class Placement:
    tasks: np.ndarray                   # tasks per user
    per_machine: np.ndarray             # (machines, users) task counts
    dominant_shares: np.ndarray
    max_task_share: float               # the max-task's dominant share of the whole cluster
    trace: list[Launch] = field(default_factory=list)


def fill_machines(instance: Instance, machines: np.ndarray, *, keep_trace: bool = False) -> Placement:
    """Theorem 7's placement: machine by machine, lowest dominant share first (see the module doc).

    Bounded: at most :data:`fairalloc.core.limits.MAX_MACHINES` machines and
    :data:`~fairalloc.core.limits.MAX_PLACEMENT_CELLS` machines x users (refused before any placement),
    :data:`~fairalloc.core.limits.MAX_LAUNCHES` launches (the run stops there), and with ``keep_trace``
    the trace limits of :meth:`DRFScheduler.run`.  Without a trace, each machine takes its
    launches in batches (:meth:`DRFScheduler.run_counts`, the same decisions) as long as they
    surely leave a max-task free, then one by one.
    """
    machines = np.asarray(machines, dtype=float)
    if machines.ndim == 1:
        machines = machines[None, :]
    if machines.ndim != 2 or machines.shape[1] != instance.m:
        raise CaseError(f"--machines: each machine needs {instance.m} capacities ({', '.join(instance.resources)})")
    count, n = machines.shape[0], instance.n
    if count == 0:
        raise CaseError("--machines: no machine given")
    if count > limits.MAX_MACHINES:
        raise CaseError(f"--machines: {count} machines, more than the {limits.MAX_MACHINES:,} fairalloc places tasks on")
    if count * n > limits.MAX_PLACEMENT_CELLS:
        raise CaseError(f"--machines: {count} machines x {n} users = {count * n}, more than the "
                        f"{limits.MAX_PLACEMENT_CELLS:,} of a placement fairalloc computes")
    bad = ~(np.isfinite(machines) & (machines >= 0))
    if bad.any():
        k, j = (int(v) for v in np.argwhere(bad)[0])
        raise CaseError(f"--machines: machine {k + 1} has capacity {machines[k, j]:g} of {instance.resources[j]} "
                        "(capacities are finite numbers >= 0)")
    D = instance.demand
    max_task = D.max(axis=0)
    small = np.flatnonzero(np.any(machines < max_task, axis=1))
    if small.size:
        raise CaseError(f"--machines: machine {int(small[0]) + 1} cannot hold a max-task "
                        f"{max_task.tolist()} (Theorem 7 assumes every machine can)")
    total = machines.sum(axis=0)
    if not np.all(np.isfinite(total)):
        raise CaseError("--machines: the machines' capacities add up to more than a float holds")
    pool = DRFScheduler(instance, capacity=total)       # dominant shares over the whole cluster
    pool.fit_R = np.full(instance.m, np.inf)            # the machines decide what fits
    per_machine = np.zeros((count, n), dtype=np.int64)
    trace = []
    trace_cap = max(1, min(limits.MAX_TRACE_LAUNCHES, limits.MAX_TRACE_CELLS // max(1, n)))
    pos = max_task > 0
    for k in range(count):
        free = machines[k].copy()
        while np.all(free >= max_task - 1e-12):
            if pool.steps >= limits.MAX_LAUNCHES:
                if pool._pop() is None:
                    break
                raise pool._too_many()
            if not keep_trace:
                # launches that surely leave a max-task free before each of them (one to spare)
                with np.errstate(divide="ignore", invalid="ignore"):
                    safe = np.floor(np.min((free[pos] - max_task[pos]) / max_task[pos])) - 1
                if safe >= 4:
                    batch = int(min(safe, limits.MAX_LAUNCHES - pool.steps))
                    got = pool._run_counts(batch, True)
                    if not got.any():
                        break
                    per_machine[k] += got
                    free -= got @ D
                    continue
            i = pool._pop()
            if i is None:
                break
            task = pool.next_task(i)
            free -= task
            per_machine[k, i] += 1
            if keep_trace:
                if len(trace) >= trace_cap:
                    raise CaseError(f"--trace: the placement makes more than {trace_cap} launches, the most "
                                    f"fairalloc records one by one ({limits.MAX_TRACE_LAUNCHES:,} launches, "
                                    f"{limits.MAX_TRACE_CELLS:,} launches x users); use --no-trace for the counts")
                launch = pool._launch(i, task)
                launch.machine = k
                trace.append(launch)
            else:
                pool._apply(i, task)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.max(np.where(total > 0, max_task / np.where(total > 0, total, 1.0), 0.0))
    return Placement(per_machine.sum(axis=0), per_machine, pool.s.copy(), float(share), trace)
