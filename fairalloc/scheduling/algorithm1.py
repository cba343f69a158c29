"""Discrete DRF: Algorithm 1 of the DRF paper (a heap of dominant shares) and machines.

Ghodsi, Zaharia, Hindman, Konwinski, Shenker, Stoica, "Dominant Resource Fairness: Fair
Allocation of Multiple Resource Types", USENIX NSDI 2011, section 4.2 (Algorithm 1, Table 1) and
section 6.2 (Theorem 7); docs/formulations.md section 1.

:class:`DRFScheduler` keeps the consumed vector ``C``, every user's allocation ``U_i`` and her
(weighted) dominant share ``s_i = max_j U_ij / (R_j w_ij)`` in a binary heap (the discrete engine
:class:`fairalloc.engines.discrete.DiscreteEngine` on a flat tree of the users): each decision picks
the user with the lowest ``s_i`` and launches her *next* task (tasks of one user may differ) if it
fits, ``O(log n)`` per decision.  Finishing a task releases its resources.

* Tie-break (documented, deterministic): equal dominant shares go to the user whose next task has
  the larger dominant share, then to the earlier user.  This is the order of Table 1 (B, whose
  task is 1/3 of the CPUs, before A, whose task is 2/9 of the memory).
* :meth:`DRFScheduler.run_counts` makes the same decisions as :meth:`~DRFScheduler.step` one by
  one (bit for bit: the same sums, divisions and tie-break), without a record per decision and in
  the engine's batches: the keys every user will have are computed in advance with ``np.cumsum``
  and merged by one sort up to a level below which the heap's order is provably that merge.
* ``policy="stop"``: the pseudo-code, which stops at the first task that does not fit;
  ``policy="skip"``: the text's variant, which sets aside users whose next task does not fit and
  goes on with the others (until a release makes room again).

:func:`fill_machines` places tasks machine by machine as in the proof of Theorem 7: always the
user with the lowest dominant share (over the whole cluster), moving to the next machine when
less than a *max-task* (``max_i D_ij`` for every ``j``) is free there.  Theorem 7: any two users'
dominant shares then differ by at most the max-task's dominant share.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, SolverError, unknown
from fairalloc.core.instance import Instance
from fairalloc.engines.discrete import POLICIES, TIE_BREAKS, DiscreteEngine


@dataclass
class Launch:
    """One scheduling decision: who got a task, and the state right after it."""

    step: int
    user: str
    task: tuple[float, ...]
    shares: dict[str, tuple[float, ...]]  # every user's share of every resource
    dominant_shares: dict[str, float]
    consumed: tuple[float, ...]  # share of each resource in use
    machine: int | None = None


class DRFScheduler:
    """Algorithm 1 over a pool of capacity ``R`` (see the module docstring): the decisions are
    :class:`fairalloc.engines.discrete.DiscreteEngine`'s on a flat tree of the users.

    ``tasks``: per user, either one demand vector (repeated, up to ``max_tasks`` launches) or an
    explicit sequence of task demands.
    """

    def __init__(
        self,
        instance: Instance,
        tasks: dict[str, Sequence] | None = None,
        *,
        policy: str = "stop",
        capacity=None,
        tie_break: str = "larger-task",
    ):
        if policy not in POLICIES:
            raise CaseError(f"policy: {unknown('policy', policy, POLICIES, 'policies')}")
        if tie_break not in TIE_BREAKS:
            raise CaseError(f"tie_break: {unknown('tie-break rule', tie_break, TIE_BREAKS)}")
        self.tie_break = tie_break
        self.instance = instance
        self.policy = policy
        self.R = np.asarray(instance.capacity if capacity is None else capacity, dtype=float)
        self.W = instance.weight_matrix()
        self._R_div = np.where(self.R > 0, self.R, np.inf)
        bounds = instance.bounds()
        # no explicit list: identical tasks of her demand, up to max_tasks (unbounded without one)
        queues = [None if tasks is None else tasks.get(u) for u in instance.users]
        self.engine = DiscreteEngine(
            self.R,
            self.W,
            demand=instance.demand,
            tasks=queues,
            limit=np.where(np.isfinite(bounds), bounds, np.inf),
            tie_break=tie_break,
            policy=policy,
        )
        n = instance.n
        #: views of the engine's state: allocations ``U``, dominant shares ``s``, consumed ``C``
        self.U = self.engine.usage[:n]
        self.s = self.engine.share[:n]
        self.C = self.engine.C
        self.launched = self.engine.launched
        self.parked = self.engine.parked  # skip policy: users whose task did not fit
        #: counters: decisions made one by one ("single"), decisions made in batches ("batched"),
        #: batches ("chunks"); see :meth:`run_counts`
        self.stats = self.engine.stats

    #: R_j w_ij, the denominators of shares (a zero-capacity resource: inf, so that its share is 0)
    RW = property(lambda self: self.engine.denom[: self.instance.n])
    #: what the fit test compares ``C + task`` with (fill_machines, whose machines decide, sets inf)
    fit_R = property(lambda self: self.engine.fit, lambda self, value: setattr(self.engine, "fit", value))
    steps = property(lambda self: self.engine.steps)
    queues = property(lambda self: self.engine.queues)
    limit = property(lambda self: self.engine.limit)

    def next_task(self, i: int) -> np.ndarray | None:
        return self.engine.next_task(i)

    # -- decisions ----------------------------------------------------------------------------------
    def _decide(self) -> tuple[int, np.ndarray] | None:
        """One decision of Algorithm 1 without a :class:`Launch` record: ``(user index, task)``."""
        return self.engine.decide()

    def step(self) -> Launch | None:
        """One decision of Algorithm 1; ``None`` when nothing more can be launched."""
        decided = self.engine.decide()
        return None if decided is None else self._record(*decided)

    def _record(self, i: int, task: np.ndarray) -> Launch:
        users = self.instance.users
        return Launch(
            self.steps,
            users[i],
            tuple(float(v) for v in task),
            {u: tuple(float(v) for v in self.U[k] / self._R_div) for k, u in enumerate(users)},
            {u: float(self.s[k]) for k, u in enumerate(users)},
            tuple(float(v) for v in self.C / self._R_div),
        )

    def _launch(self, i: int, task: np.ndarray) -> Launch:
        self.engine.launch(i, task)
        return self._record(i, task)

    def release(self, user, task) -> None:
        """A task of ``user`` finished: its resources return to the pool."""
        i = self.instance.user_index(user)
        task = np.asarray(task, dtype=float)
        if np.any(task > self.U[i] + 1e-9):
            raise CaseError(f"release: user {user} does not hold {task.tolist()}")
        self.engine.release(i, task)

    def run(self, max_steps: int | None = None) -> list[Launch]:
        """Decisions until nothing fits (or ``max_steps``), each recorded as a :class:`Launch`.

        A trace is bounded (:data:`fairalloc.core.limits.MAX_TRACE_LAUNCHES` launches and
        :data:`~fairalloc.core.limits.MAX_TRACE_CELLS` launches x users): beyond, :class:`CaseError`
        (``--trace``), or the launch limit's error when the run would also exceed
        :data:`~fairalloc.core.limits.MAX_LAUNCHES`; :meth:`run_counts` keeps counts only.
        """
        cap = max(1, min(limits.MAX_TRACE_LAUNCHES, limits.MAX_TRACE_CELLS // max(1, self.instance.n)))
        trace: list[Launch] = []
        while max_steps is None or len(trace) < max_steps:
            if len(trace) >= cap:
                if self._decide() is None:  # the run ends just at the cap
                    break
                self.run_counts()  # the launch limit's error, if the run passes it
                raise CaseError(
                    f"--trace: Algorithm 1 makes more than {cap:,} launches on this case, the most "
                    f"fairalloc records one by one ({limits.MAX_TRACE_LAUNCHES:,} launches, "
                    f"{limits.MAX_TRACE_CELLS:,} launches x users); use --no-trace for the counts"
                )
            launch = self.step()
            if launch is None:
                break
            trace.append(launch)
        return trace

    def _too_many(self) -> CaseError:
        i = int(np.argmax(self.launched))
        user = self.instance.users[i]
        return CaseError(
            f"users.{user}.demand: Algorithm 1 makes more than {limits.MAX_LAUNCHES:,} launches on this "
            f"case ({int(self.launched[i])} of them user {user}'s: demands tiny beside the capacity), "
            "the most fairalloc schedules"
        )

    # -- many decisions at once -----------------------------------------------------------------------
    #: candidate launches generated per batch at most; see :meth:`run_counts`
    chunk_target = DiscreteEngine.chunk_target

    def run_counts(self, max_launches: int | None = None, *, batch: bool = True) -> np.ndarray:
        """Decisions until nothing fits (or ``max_launches``); returns the tasks launched per user.

        Exactly the decisions of calling :meth:`step` that many times (same tie-break, policies,
        floating-point values of ``U``, ``C`` and ``s``), without a :class:`Launch` record per
        decision, and in batches where that is provably identical
        (:meth:`fairalloc.engines.discrete.DiscreteEngine.run_counts`).
        ``batch=False``: one decision at a time (the lean single step, for comparison).
        Launches are bounded: a run that would make more than :data:`fairalloc.core.limits.MAX_LAUNCHES`
        (``max_launches`` larger or ``None``) stops there with :class:`CaseError`.
        """
        if max_launches is None or max_launches > limits.MAX_LAUNCHES - self.steps:
            budget = max(0, limits.MAX_LAUNCHES - self.steps)
            counts = self._run_counts(budget, batch)
            if self._decide() is not None:  # one more would pass the limit
                raise self._too_many()
            return counts
        return self._run_counts(max_launches, batch)

    def _run_counts(self, max_launches, batch: bool) -> np.ndarray:
        return self.engine.run_counts(max_launches, batch=batch, target=self.chunk_target)


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
    tasks: np.ndarray  # tasks per user
    per_machine: np.ndarray  # (machines, users) task counts
    dominant_shares: np.ndarray
    max_task_share: float  # the max-task's dominant share of the whole cluster
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
        raise CaseError(f"machines: each machine needs {instance.m} capacities ({', '.join(instance.resources)})")
    count, n = machines.shape[0], instance.n
    if count == 0:
        raise CaseError("machines: no machine given")
    if count > limits.MAX_MACHINES:
        raise CaseError(
            f"--machines: {count} machines, more than the {limits.MAX_MACHINES:,} fairalloc places tasks on"
        )
    if count * n > limits.MAX_PLACEMENT_CELLS:
        raise CaseError(
            f"--machines: {count} machines x {n} users = {count * n}, more than the "
            f"{limits.MAX_PLACEMENT_CELLS:,} of a placement fairalloc computes"
        )
    bad = ~(np.isfinite(machines) & (machines >= 0))
    if bad.any():
        k, j = (int(v) for v in np.argwhere(bad)[0])
        raise CaseError(
            f"machines: machine {k + 1} has capacity {machines[k, j]:g} of {instance.resources[j]} "
            "(capacities are finite numbers >= 0)"
        )
    D = instance.demand
    max_task = D.max(axis=0)
    small = np.flatnonzero(np.any(machines < max_task, axis=1))
    if small.size:
        raise CaseError(
            f"machines: machine {int(small[0]) + 1} cannot hold a max-task "
            f"{max_task.tolist()} (Theorem 7 assumes every machine can)"
        )
    total = machines.sum(axis=0)
    if not np.all(np.isfinite(total)):
        raise CaseError("machines: the machines' capacities add up to more than a float holds")
    pool = DRFScheduler(instance, capacity=total)  # dominant shares over the whole cluster
    pool.fit_R = np.full(instance.m, np.inf)  # the machines decide what fits
    per_machine = np.zeros((count, n), dtype=np.int64)
    trace: list[Launch] = []
    trace_cap = max(1, min(limits.MAX_TRACE_LAUNCHES, limits.MAX_TRACE_CELLS // max(1, n)))
    pos = max_task > 0
    for k in range(count):
        free = machines[k].copy()
        while np.all(free >= max_task - 1e-12):
            if pool.steps >= limits.MAX_LAUNCHES:
                if pool.engine.top() is None:
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
            i = pool.engine.top()
            if i is None:
                break
            task = pool.next_task(i)
            if task is None:  # the engine's top is a user with a task left
                raise SolverError(
                    f"fill_machines: user {instance.users[i]} is on top with no task left (internal error)"
                )
            free -= task
            per_machine[k, i] += 1
            if keep_trace:
                if len(trace) >= trace_cap:
                    raise CaseError(
                        f"--trace: the placement makes more than {trace_cap} launches, the most "
                        f"fairalloc records one by one ({limits.MAX_TRACE_LAUNCHES:,} launches, "
                        f"{limits.MAX_TRACE_CELLS:,} launches x users); use --no-trace for the counts"
                    )
                launch = pool._launch(i, task)
                launch.machine = k
                trace.append(launch)
            else:
                pool.engine.launch(i, task)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.max(np.where(total > 0, max_task / np.where(total > 0, total, 1.0), 0.0))
    return Placement(per_machine.sum(axis=0), per_machine, pool.s.copy(), float(share), trace)
