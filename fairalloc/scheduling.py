"""Discrete DRF: Algorithm 1 of the DRF paper (a heap of dominant shares) and machines.

Ghodsi et al., NSDI 2011, section 4.2 (Algorithm 1, Table 1) and section 6.2 (Theorem 7);
formulations.md section 1.

:class:`DRFScheduler` keeps the consumed vector ``C``, every user's allocation ``U_i`` and her
(weighted) dominant share ``s_i = max_j U_ij / (R_j w_ij)`` in a binary heap: each decision picks
the user with the lowest ``s_i`` and launches her *next* task (tasks of one user may differ) if it
fits, ``O(log n)`` per decision.  Finishing a task releases its resources.

* Tie-break (documented, deterministic): equal dominant shares go to the user whose next task has
  the larger dominant share, then to the earlier user.  This is the order of Table 1 (B, whose
  task is 1/3 of the CPUs, before A, whose task is 2/9 of the memory).
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
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

from .errors import CaseError
from .instance import Instance

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
            raise CaseError(f"--policy: unknown policy '{policy}' (policies: {', '.join(POLICIES)})")
        if tie_break not in TIE_BREAKS:
            raise CaseError(f"--tie-break: unknown rule '{tie_break}' (rules: {', '.join(TIE_BREAKS)})")
        self.tie_break = tie_break
        self.instance = instance
        self.policy = policy
        self.R = np.asarray(instance.capacity if capacity is None else capacity, dtype=float)
        self.W = instance.weight_matrix()
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
        size = 0.0 if task is None else float(np.max(task / (self.R * self.W[i])))
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
    def step(self) -> Launch | None:
        """One decision of Algorithm 1; ``None`` when nothing more can be launched."""
        while True:
            i = self._pop()
            if i is None:
                return None
            task = self.next_task(i)
            if np.all(self.C + task <= self.R * (1 + 1e-12)):
                return self._launch(i, task)
            if self.policy == "stop":                   # the pseudo-code: the cluster is full
                self.heap.clear()
                return None
            self.parked.add(i)                          # skip: others may still fit

    def _launch(self, i: int, task: np.ndarray) -> Launch:
        self.C += task
        self.U[i] += task
        self.s[i] = float(np.max(self.U[i] / (self.R * self.W[i])))
        self.launched[i] += 1
        if self.queues[i] is not None:
            self.queues[i].popleft()
        self.steps += 1
        self._push(i)
        users = self.instance.users
        return Launch(self.steps, users[i], tuple(float(v) for v in task),
                      {u: tuple(float(v) for v in self.U[k] / self.R) for k, u in enumerate(users)},
                      {u: float(self.s[k]) for k, u in enumerate(users)}, tuple(float(v) for v in self.C / self.R))

    def release(self, user, task) -> None:
        """A task of ``user`` finished: its resources return to the pool."""
        i = self.instance.user_index(user)
        task = np.asarray(task, dtype=float)
        if np.any(task > self.U[i] + 1e-9):
            raise CaseError(f"release: user {user} does not hold {task.tolist()}")
        self.C -= task
        self.U[i] -= task
        self.s[i] = float(np.max(self.U[i] / (self.R * self.W[i])))
        woken = self.parked | {i}
        self.parked.clear()
        for k in woken:
            self._push(k)

    def run(self, max_steps: int | None = None) -> list[Launch]:
        """Decisions until nothing fits (or ``max_steps``)."""
        trace = []
        while max_steps is None or len(trace) < max_steps:
            launch = self.step()
            if launch is None:
                break
            trace.append(launch)
        return trace


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
    """Theorem 7's placement: machine by machine, lowest dominant share first (see the module doc)."""
    machines = np.atleast_2d(np.asarray(machines, dtype=float))
    if machines.shape[1] != instance.m:
        raise CaseError(f"--machines: each machine needs {instance.m} capacities ({', '.join(instance.resources)})")
    D = instance.demand
    max_task = D.max(axis=0)
    small = np.flatnonzero(np.any(machines < max_task, axis=1))
    if small.size:
        raise CaseError(f"--machines: machine {int(small[0]) + 1} cannot hold a max-task "
                        f"{max_task.tolist()} (Theorem 7 assumes every machine can)")
    total = machines.sum(axis=0)
    pool = DRFScheduler(instance, capacity=total)       # dominant shares over the whole cluster
    per_machine = np.zeros((machines.shape[0], instance.n), dtype=int)
    trace = []
    for k, free in enumerate(machines.copy()):
        while np.all(free >= max_task - 1e-12):
            i = pool._pop()
            if i is None:
                break
            task = pool.next_task(i)
            free -= task
            per_machine[k, i] += 1
            launch = pool._launch(i, task)
            if keep_trace:
                launch.machine = k
                trace.append(launch)
    share = np.max(max_task / total)
    return Placement(per_machine.sum(axis=0), per_machine, pool.s.copy(), float(share), trace)
