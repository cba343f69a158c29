"""Fairness properties of any mechanism on any instance (docs/formulations.md section 4).

Every checker takes a mechanism (registered name or object) and an instance and returns a
:class:`PropertyResult`: whether the property holds, the *margin* (the smallest slack, in tasks;
negative when violated) and, when it fails, a typed *witness* (which user, which other user,
removed user, capacity change or lie, and the numbers before and after; one dataclass per property
kind in :mod:`fairalloc.analysis.results`, read as ``witness.user`` or, as before, ``witness["user"]``).

Bundles are always valued with the Leontief utility of the user's *true* demand, capped by her
task bound: ``u_i(B) = min(T_i, min_{j: D_ij > 0} B_j / D_ij)``.  A production policy's general
bundles (:meth:`~fairalloc.core.allocation.Allocation.from_bundles`: an amount per queue per
resource, not proportional to the request) are valued the same way, with the Leontief utility of
the queue's request: a queue's "tasks" are the fraction of its request its bundle serves
(``allocation.tasks``), and envy compares the bundles themselves.  On a queue case the eight
properties of the DRF paper are read for queues (inactive queues, which receive nothing, are left
out of the comparisons that need a demand), and four more say whether a policy keeps its promises
(issue 15): ``guarantee_honoured``, ``limit_respected``, ``no_overcommit`` and
``work_conserving``; their margins are in units of the resource (``work_conserving``: in tasks).

>>> import fairalloc
>>> theorem_1 = fairalloc.Instance.from_arrays([30, 30], [[1, 3], [1, 1]])
>>> r = check_property("asset", theorem_1, "sharing_incentive")
>>> r.holds, r.witness["user"], r.witness["tasks"], r.witness["fair_share_tasks"]
(False, '2', 12.0, 15.0)
>>> check_property("drf", theorem_1, "sharing_incentive").holds
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from fairalloc.analysis.results import (
    BottleneckWitness,
    EnvyWitness,
    GuaranteeWitness,
    IdleWitness,
    InfeasibleWitness,
    LimitWitness,
    OvercommitWitness,
    ParetoWitness,
    PopulationWitness,
    PropertyReport,
    PropertyResult,
    ResourceWitness,
    SharingIncentiveWitness,
    SingleResourceWitness,
    describe_witness,
)
from fairalloc.analysis.valuation import leontief, tolerance
from fairalloc.core.allocation import Allocation
from fairalloc.core.errors import FairallocError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import queues_of, request
from fairalloc.core.registry import Mechanism, get
from fairalloc.core.tolerances import PROPERTY, SATURATION
from fairalloc.core.vocabulary import PAPER_PROPERTIES, PROPERTIES, property_names
from fairalloc.engines.filling import progressive_filling

if TYPE_CHECKING:  # a loaded case stands for its instance (and lends its misreport variants as hints)
    from fairalloc.io.cases import Case

# -- the checkers -------------------------------------------------------------------------------

Allocate = Callable[[Instance], np.ndarray]
CHECKERS: dict[str, Callable] = {}


def _checker(name: str):
    def add(fn):
        CHECKERS[name] = fn
        return fn

    return add


def _worst(slack: np.ndarray, focus: int | None) -> int:
    """The user with the least slack, or the focus user when a claim names one."""
    return int(np.argmin(slack)) if focus is None else focus


def _names(instance: Instance, values) -> dict:
    return {u: float(v) for u, v in zip(instance.users, values)}


def general_bundles(allocate: Allocate, inst: Instance) -> np.ndarray | None:
    """The general bundles ``(n, m)`` of the allocation ``allocate`` last made of ``inst``, when it
    made one of a per-resource policy (``allocation.amounts``); ``None`` when the bundles are
    ``x_i D_i`` (every paper mechanism: no ``(n, m)`` array is built for them)."""
    last = getattr(allocate, "last", None)
    if last is None or last[0] is not inst:
        return None
    return last[1].amounts


def bundles_of(allocate: Allocate, inst: Instance, x: np.ndarray) -> np.ndarray:
    """``(n, m)``: the bundles of the allocation ``x = allocate(inst)``, general or ``x_i D_i``."""
    general = general_bundles(allocate, inst)
    if general is not None:
        return general
    with np.errstate(invalid="ignore"):  # an inactive queue: 0 tasks of a zero row
        return np.nan_to_num(x[:, None] * inst.demand)


def _value(inst: Instance, i: int, bundle: np.ndarray) -> float:
    """:func:`leontief`, and 0 for an inactive queue (no request: it runs nothing)."""
    return 0.0 if not (inst.demand[i] > 0).any() else leontief(inst, i, bundle)


#: what a paper property says of a queue case where no queue has work
IDLE = "no queue has a request (no pending or running work): nothing to compare, so it holds vacuously"


def _active_mask(inst: Instance) -> np.ndarray | None:
    """A queue case's active queues (those with a request), or ``None`` when every user is."""
    if inst.queues is None:
        return None
    mask: np.ndarray = np.asarray((inst.demand > 0).any(axis=1))
    return None if mask.all() else mask


def _on_active(inst: Instance, x: np.ndarray, focus):
    """``(instance, x, focus)`` restricted to the active queues (the paper's properties compare
    demands; an inactive queue has none); ``focus`` is ``-1`` when it names an inactive queue."""
    mask = _active_mask(inst)
    if mask is None:
        return inst, x, focus
    if focus is not None:
        focus = int(np.sum(mask[:focus])) if mask[focus] else -1
    return inst.only(mask), x[mask], focus


@_checker("sharing_incentive")
def sharing_incentive(allocate: Allocate, inst: Instance, focus=None, **_) -> PropertyResult:
    """``x_i >= u_i(R w_i / sum w)``: nobody prefers her (weighted) slice of a static partition."""
    x = allocate(inst)
    W = inst.weight_matrix()
    fair_bundles = inst.capacity * W / W.sum(axis=0)  # per resource: R_j w_ij / sum_k w_kj
    fair = np.array([_value(inst, i, fair_bundles[i]) for i in range(inst.n)])
    slack = x - fair
    i = _worst(slack, focus)
    if slack[i] >= -tolerance(x[i], fair[i]):
        return PropertyResult("sharing_incentive", True, float(slack[i]))
    return PropertyResult(
        "sharing_incentive",
        False,
        float(slack[i]),
        SharingIncentiveWitness(
            inst.users[i], float(x[i]), float(fair[i]), dict(zip(inst.resources, map(float, fair_bundles[i])))
        ),
    )


def _envy_blocks(inst: Instance, x: np.ndarray, rows=None, block_cells: int | None = None, bundles=None):
    """``(start, V)`` for consecutive blocks of rows of the envy matrix ``V`` (see
    :func:`envy_values`): ``V`` is ``(rows in the block, n)``, the diagonal ``-inf``.  A block has
    at most ``block_cells`` cells (default :data:`~fairalloc.core.limits.ENVY_BLOCK_CELLS`), so memory
    stays bounded whatever ``n``; within a block the work is vectorised, one resource at a time.

    ``rows``: only these rows (indices, in order), e.g. the one user a claim names.
    ``bundles``: a per-resource policy's general bundles ``(n, m)`` (default ``x_i D_i``).
    """
    from fairalloc.core.limits import ENVY_BLOCK_CELLS

    w = inst.scalar_weights("envy_freeness")
    D, T = inst.demand, inst.bounds()
    n, m = inst.n, inst.m
    scaled = (x[:, None] * D if bundles is None else bundles) / w[:, None]  # bundle of k per unit of weight
    need = D > 0
    # 1 / D_ij where user i needs j; +inf elsewhere, so that the product is +inf (never the
    # minimum) or NaN (0 * inf; skipped by fmin): the same minimum over needed j as a masked min
    inv = np.where(need, 1.0 / np.where(need, D, 1.0), np.inf)
    order = np.arange(n) if rows is None else np.asarray(rows, dtype=int)
    size = max(1, (block_cells or ENVY_BLOCK_CELLS) // max(1, n))
    with np.errstate(invalid="ignore"):  # 0 * inf, dropped by fmin on purpose
        for start in range(0, len(order), size):
            i = order[start : start + size]
            # tasks i runs from k's scaled bundle: min_j (w_i x_k D_kj / w_k) / D_ij, over the j i needs
            runs = np.multiply.outer(inv[i, 0], scaled[:, 0])
            if m > 1:
                term = np.empty_like(runs)
                for j in range(1, m):
                    np.multiply.outer(inv[i, j], scaled[:, j], out=term)
                    np.fmin(runs, term, out=runs)
            np.multiply(runs, w[i, None], out=runs)
            np.minimum(runs, T[i, None], out=runs)
            runs[np.arange(len(i)), i] = -np.inf
            yield start, runs


def envy_values(inst: Instance, x: np.ndarray) -> np.ndarray:
    """``V[i, k]``: tasks user ``i`` would run from user ``k``'s bundle scaled by ``w_i / w_k``
    (``-inf`` on the diagonal, so that ``x_i - V[i, i]`` never counts as envy).

    The whole ``n x n`` matrix: for small instances and tests; the checkers never build it (they
    go through the same blocks of rows, keeping only each row's worst pair).
    """
    check_pairwise(inst)
    values = np.empty((inst.n, inst.n))
    for start, block in _envy_blocks(inst, x):
        values[start : start + len(block)] = block
    return values


def pairwise_cells(inst: Instance) -> int:
    """Cells ``n * n * m`` that envy-freeness compares."""
    return inst.n * inst.n * inst.m


def check_pairwise(inst: Instance, what: str = "envy_freeness") -> None:
    """Refuse, before any work, an instance whose user pairs are too many to compare
    (:data:`~fairalloc.core.limits.MAX_PAIRWISE_CELLS`)."""
    from fairalloc.core.limits import MAX_PAIRWISE_CELLS

    cells = pairwise_cells(inst)
    if cells > MAX_PAIRWISE_CELLS:
        raise FairallocError(
            f"{what}: {inst.n} users x {inst.n} users x {inst.m} resources = {cells:.3g} "
            f"comparisons, above the limit of {MAX_PAIRWISE_CELLS:.3g} "
            f"(fairalloc.core.limits.MAX_PAIRWISE_CELLS)"
        )


def worst_envy(inst: Instance, x: np.ndarray, rows=None, block_cells: int | None = None, bundles=None):
    """Per row ``i`` (all users, or ``rows``): the smallest slack ``x_i - V[i, k]``, the first
    ``k`` attaining it, and ``V[i, k]``; in bounded memory (see :func:`_envy_blocks`).
    ``bundles``: general bundles (default ``x_i D_i``)."""
    order = np.arange(inst.n) if rows is None else np.asarray(rows, dtype=int)
    slack, other, value = np.empty(len(order)), np.empty(len(order), dtype=int), np.empty(len(order))
    for start, block in _envy_blocks(inst, x, order, block_cells, bundles):
        i = order[start : start + len(block)]
        np.subtract(x[i, None], block, out=block)  # the slacks, in place
        k = np.argmin(block, axis=1)
        stop = start + len(block)
        other[start:stop] = k
        slack[start:stop] = block[np.arange(len(block)), k]
        value[start:stop] = x[i] - slack[start:stop]
    # V[i, k] again, not x_i - slack: the same number as the full matrix, bit for bit
    if len(order):
        value = _pair_values(inst, x, order, other, bundles)
    return slack, other, value


def _pair_values(inst: Instance, x: np.ndarray, rows: np.ndarray, others: np.ndarray, bundles=None) -> np.ndarray:
    """``V[rows[t], others[t]]`` for each t, computed as :func:`_envy_blocks` does."""
    w = inst.scalar_weights("envy_freeness")
    D, T = inst.demand, inst.bounds()
    scaled = (x[:, None] * D if bundles is None else bundles) / w[:, None]
    need = D > 0
    inv = np.where(need, 1.0 / np.where(need, D, 1.0), np.inf)
    with np.errstate(invalid="ignore"):
        prods = inv[rows] * scaled[others]
    runs = prods[:, 0].copy()
    for j in range(1, inst.m):
        np.fmin(runs, prods[:, j], out=runs)
    return np.minimum(runs * w[rows], T[rows])


def envious_users(inst: Instance, x: np.ndarray, block_cells: int | None = None) -> list[str]:
    """The users who prefer some other user's (weight-scaled) bundle to their own."""
    if inst.n < 2:
        return []
    check_pairwise(inst, "envious users")
    worst = np.empty(inst.n)
    for start, block in _envy_blocks(inst, x, block_cells=block_cells):
        worst[start : start + len(block)] = block.max(axis=1)
    bound = PROPERTY * np.maximum(1.0, np.maximum(np.abs(x), np.abs(worst)))
    return [inst.users[i] for i in np.flatnonzero(x - worst < -bound)]


@_checker("envy_freeness")
def envy_freeness(
    allocate: Allocate, inst: Instance, focus=None, block_cells: int | None = None, **_
) -> PropertyResult:
    """``u_i(A_k) w_i / w_k <= x_i``: nobody prefers another's (weight-scaled) bundle ``A_k``
    (``x_k D_k``, or a per-resource policy's general bundle); an inactive queue envies nobody."""
    if inst.weights is not None and inst.weights.ndim == 2:
        return PropertyResult(
            "envy_freeness",
            True,
            applicable=False,
            note="per-resource weights: envy-freeness is defined for scalar weights",
        )
    if inst.n < 2:
        return PropertyResult("envy_freeness", True, applicable=False, note="one user")
    if focus is None:
        check_pairwise(inst)
    x = allocate(inst)
    general = general_bundles(allocate, inst)
    active = _active_mask(inst)
    if focus is not None and active is not None and not active[focus]:
        return PropertyResult("envy_freeness", True, 0.0, note="an inactive queue envies nobody")
    rows = [focus] if focus is not None else None if active is None else np.flatnonzero(active)
    slacks, others, values = worst_envy(inst, x, rows, block_cells, general)
    t = int(np.argmin(slacks))  # the first row with the smallest slack
    i = int(rows[t]) if rows is not None else t
    k, slack, value = int(others[t]), slacks[t], values[t]
    if slack >= -tolerance(x[i], value):
        return PropertyResult("envy_freeness", True, float(slack))
    return PropertyResult(
        "envy_freeness",
        False,
        float(slack),
        EnvyWitness(
            inst.users[i],
            inst.users[k],
            float(x[i]),
            float(value),
            dict(zip(inst.resources, map(float, x[k] * inst.demand[k] if general is None else general[k]))),
        ),
    )


def pareto_improvement(inst: Instance, x: np.ndarray) -> tuple[float, np.ndarray]:
    """``(gain, y)``: ``y`` maximises ``sum_i mu_i (y_i - x_i)`` over feasible ``y >= x`` (an LP,
    HiGHS), ``gain`` is that maximum, in dominant shares: > 0 iff ``x`` is not efficient.

    The LP is written in shares (each resource in units of its capacity, each user's task in
    units of her dominant share), so that capacities of 1e9 and 1e-9 in one instance give HiGHS
    coefficients between 0 and 1 instead of ones it would drop as zero.
    """
    from fairalloc.core.highs import solve_lp

    mu = inst.per_task_dominant_share
    T = inst.bounds()
    lower = np.minimum(np.clip(x, 0, None), T)
    over = np.max(np.divide(lower @ inst.demand, inst.capacity, out=np.zeros(inst.m), where=inst.capacity > 0))
    if over > 1:  # solver noise above capacity: compare from a feasible point
        lower = lower / over
    shares = (inst.share_per_task / mu[:, None]).T  # (m, n), entries in [0, 1]
    rows, rhs, T = _limit_rows(inst, shares, lower * mu, T)
    res = solve_lp(
        -np.ones(inst.n),
        np.vstack([shares, *rows]),
        np.concatenate([np.where(inst.capacity > 0, 1.0, 0.0), rhs]),
        lower * mu,
        np.maximum(T, lower) * mu,
    )
    if res.status != 0 or res.x is None:
        raise FairallocError(f"pareto_efficiency: the LP failed: {res.message}")
    y = np.maximum(res.x / mu, lower)
    return float(np.sum(res.x - lower * mu)), y


def _limit_rows(inst: Instance, shares: np.ndarray, z: np.ndarray, T: np.ndarray):
    """A queue case's limits as constraints of the Pareto LP (in shares of capacity): a queue's
    own limit caps its tasks, a group's limit its leaves' use; configuration is not improvable.
    A limit the allocation already exceeds is not tightened below what it holds."""
    if inst.queues is None:
        return [], np.zeros(0), T
    q, D, R = inst.queues, inst.demand, inst.capacity
    L = q.leaf_array("limit", inst.users)
    with np.errstate(divide="ignore", invalid="ignore"):
        T = np.minimum(T, np.where(D > 0, L / np.where(D > 0, D, 1.0), np.inf).min(axis=1))
    rows, rhs = [], []
    index = {u: i for i, u in enumerate(inst.users)}
    for g in q.groups:
        members = np.zeros(inst.n)
        members[[index[u] for u in q.leaves(g)]] = 1.0
        for j in np.flatnonzero(np.isfinite(q.limit[g]) & (R > 0)):
            row = shares[j] * members
            rows.append(row)
            rhs.append(max(q.limit[g][j] / R[j], float(row @ z)))
    return rows, np.array(rhs), T


@_checker("pareto_efficiency")
def pareto_efficiency(allocate: Allocate, inst: Instance, **_) -> PropertyResult:
    """No feasible allocation gives everyone at least as much and someone more (decided by an LP).

    With general bundles the LP compares their Leontief values (``allocation.tasks``): a bundle
    holding more than its request's shape uses is waste another queue could run with."""
    x = allocate(inst)
    inst, x, _ = _on_active(inst, x, None)
    used = x @ inst.demand
    if np.any(used > inst.capacity * (1 + SATURATION) + 1e-12):
        j = int(np.argmax(used - inst.capacity))
        return PropertyResult(
            "pareto_efficiency",
            False,
            None,
            InfeasibleWitness(inst.resources[j], float(used[j]), float(inst.capacity[j])),
        )
    gain, y = pareto_improvement(inst, x)  # in dominant shares: unit-free
    better = [u for u, a, b in zip(inst.users, x, y) if b > a + tolerance(a)]
    if gain <= PROPERTY * max(1.0, float(np.sum(x * inst.per_task_dominant_share))) or not better:
        return PropertyResult("pareto_efficiency", True, 0.0 - gain)
    return PropertyResult(
        "pareto_efficiency",
        False,
        float(-gain),
        ParetoWitness(float(np.sum(y - x)), better, _names(inst, x), _names(inst, y)),
    )


def _max_min_on(inst: Instance, j: int) -> np.ndarray:
    """The (weighted, bounded) max-min fair task counts on resource ``j`` alone."""
    D = inst.demand[:, [j]]
    key = D[:, 0] / (inst.capacity[j] * inst.weight_matrix()[:, j])
    return progressive_filling(D, inst.capacity[[j]], key, inst.max_tasks).tasks


def _compare_to_max_min(name: str, x: np.ndarray, ref: np.ndarray, inst: Instance, resource: str, focus=None):
    diff = x - ref
    i = _worst(-np.abs(diff), focus)
    margin = 0.0 - float(np.abs(diff[i]))
    if abs(diff[i]) <= tolerance(x[i], ref[i]):
        return PropertyResult(name, True, margin)
    kind = BottleneckWitness if name == "bottleneck_fairness" else SingleResourceWitness
    return PropertyResult(
        name,
        False,
        margin,
        kind(resource, inst.users[i], float(x[i]), float(ref[i]), _names(inst, x), _names(inst, ref)),
    )


@_checker("single_resource_fairness")
def single_resource_fairness(allocate: Allocate, inst: Instance, focus=None, **_) -> PropertyResult:
    """With one resource the allocation is (weighted) max-min fair on it."""
    if inst.m != 1:
        return PropertyResult("single_resource_fairness", True, applicable=False, note=f"{inst.m} resources")
    inst, x, focus = _on_active(inst, allocate(inst), focus)
    if focus == -1:
        return PropertyResult("single_resource_fairness", True, applicable=False, note="an inactive queue")
    return _compare_to_max_min("single_resource_fairness", x, _max_min_on(inst, 0), inst, inst.resources[0], focus)


def common_bottleneck(inst: Instance) -> int | None:
    """A resource that is every user's dominant (weighted-share) resource, if there is one."""
    share = inst.share_per_task / inst.weight_matrix()
    dominant = share >= share.max(axis=1, keepdims=True) * (1 - 1e-12)
    common = np.flatnonzero(dominant.all(axis=0))
    return int(common[0]) if common.size else None


@_checker("bottleneck_fairness")
def bottleneck_fairness(allocate: Allocate, inst: Instance, focus=None, **_) -> PropertyResult:
    """If one resource is every user's dominant resource, the allocation is max-min fair on it."""
    x = allocate(inst) if inst.queues is not None else None  # a queue case: decided on its active queues
    if x is not None:
        inst, x, focus = _on_active(inst, x, focus)
        if focus == -1:
            return PropertyResult("bottleneck_fairness", True, applicable=False, note="an inactive queue")
    j = common_bottleneck(inst)
    if j is None:
        return PropertyResult(
            "bottleneck_fairness", True, applicable=False, note="no resource is every user's dominant resource"
        )
    return _compare_to_max_min(
        "bottleneck_fairness", allocate(inst) if x is None else x, _max_min_on(inst, j), inst, inst.resources[j], focus
    )


@_checker("population_monotonicity")
def population_monotonicity(allocate: Allocate, inst: Instance, focus=None, **_) -> PropertyResult:
    """Removing a user (she relinquishes her bundle) lowers no other user's task count."""
    if inst.n < 2:
        return PropertyResult("population_monotonicity", True, applicable=False, note="one user")
    x = allocate(inst)
    worst: tuple[float, tuple[int, int, float, float] | None] = (np.inf, None)
    for k in range(inst.n):
        if k == focus:
            continue
        counts = allocate(inst.without_user(k))
        others = np.delete(x, k)
        slack = counts - others
        i = _worst(slack, None if focus is None else focus - (focus > k))
        if slack[i] < worst[0]:
            worst = (float(slack[i]), (k, i, others[i], counts[i]))
    slack, where = worst
    # two users or more: some user leaves, and her slack is finite unless the counts are NaN
    assert where is not None, "population_monotonicity: no removal with a finite slack (NaN task counts?)"
    k, i, before, after = where
    if slack >= -tolerance(before, after):
        return PropertyResult("population_monotonicity", True, slack)
    user = [u for u in inst.users if u != inst.users[k]][i]
    return PropertyResult(
        "population_monotonicity", False, slack, PopulationWitness(inst.users[k], user, float(before), float(after))
    )


#: capacity factors tried per resource (and for all resources at once) by resource_monotonicity
RM_FACTORS = (1.25, 1.5, 2.0, 4.0)


@_checker("resource_monotonicity")
def resource_monotonicity(allocate: Allocate, inst: Instance, factors=RM_FACTORS, focus=None, **_) -> PropertyResult:
    """More capacity (of one resource, or of all) lowers no user's task count."""
    x = allocate(inst)
    worst: tuple[float, tuple[int | None, float, int, float] | None] = (np.inf, None)
    for j in [*range(inst.m), None]:
        for f in factors:
            R = inst.capacity * f if j is None else np.where(np.arange(inst.m) == j, inst.capacity * f, inst.capacity)
            counts = allocate(inst.with_capacity(R))
            i = _worst(counts - x, focus)
            if counts[i] - x[i] < worst[0]:
                worst = (float(counts[i] - x[i]), (j, f, i, counts[i]))
    slack, where = worst
    assert where is not None, "resource_monotonicity: no capacity change with a finite slack (no factors?)"
    j, f, i, after = where
    if slack >= -tolerance(x[i], after):
        return PropertyResult("resource_monotonicity", True, slack)
    changed = "all" if j is None else inst.resources[j]
    more = inst.capacity * f if j is None else np.where(np.arange(inst.m) == j, inst.capacity * f, inst.capacity)
    return PropertyResult(
        "resource_monotonicity",
        False,
        slack,
        ResourceWitness(
            changed,
            f,
            dict(zip(inst.resources, map(float, inst.capacity))),
            dict(zip(inst.resources, map(float, more))),
            inst.users[i],
            float(x[i]),
            float(after),
        ),
    )


@_checker("strategy_proofness")
def strategy_proofness(
    allocate: Allocate,
    inst: Instance,
    *,
    mechanism: Mechanism,
    budget: int = 500,
    seed: int = 0,
    method: str = "auto",
    hints=None,
    focus=None,
    **_,
) -> PropertyResult:
    """No user gains true tasks by reporting another demand (searched by the verifier)."""
    from fairalloc.analysis.manipulation import search_lies

    return searched(search_lies(mechanism, inst, focus, budget=budget, seed=seed, method=method, hints=hints or {}))


def searched(result) -> PropertyResult:
    """Strategy-proofness as the verifier's search ``result`` (a ``VerifyResult``) answers it: a
    profitable lie found violates it; none found holds it, within the evaluations spent."""
    note = f"no profitable lie found in {result.evaluations} evaluations (a search, not a proof)"
    best = result.best
    if best is None or not best.profitable:
        return PropertyResult(
            "strategy_proofness", True, 0.0 - (best.gain if best else 0.0), note=note, evaluations=result.evaluations
        )
    return PropertyResult("strategy_proofness", False, -best.gain, best, evaluations=result.evaluations)


# -- the promises of policies with guarantees and limits (issue 15) ------------------------------------


def _amount_tolerance(*values) -> float:
    """Absolute slack allowed when comparing amounts of a resource of this magnitude."""
    return tolerance(*values)


@_checker("guarantee_honoured")
def guarantee_honoured(allocate: Allocate, inst: Instance, focus=None, mechanism=None, **_) -> PropertyResult:
    """Every active queue ``i`` gets ``A_ij >= min(G_ij, r_ij, L_ij)`` of every resource ``j`` it is
    guaranteed (``G``: its guarantee, ``r``: its request, ``L``: its own limit): a queue asking for
    at least its guarantee gets it, one asking for less gets what it asks for.

    Valued with the Leontief utility of the request, a queue is also served its guarantee when it
    runs the largest multiple of its request within it, ``x_i >= min(1, min_j G_ij / r_ij)`` (what
    a Leontief mechanism such as ``drf`` promises): memory beyond what its cpu lets it use is worth
    nothing to it.  A queue honoured either way counts as honoured (slack 0 if only the second).
    Under a policy that reads no guarantee as 0 (``Mechanism.zero_unguaranteed``: Kueue) every
    resource is guaranteed, most of them 0.  Margin: the smallest slack, in units of the resource."""
    G = queues_of(inst).leaf_array("guarantee", inst.users)
    if getattr(mechanism, "zero_unguaranteed", False):
        G = np.nan_to_num(G, nan=0.0)
    r = request(inst)
    asks: np.ndarray = np.asarray((r > 0).any(axis=1))
    given = ~np.isnan(G) & asks[:, None]
    if focus is not None:
        given[np.arange(inst.n) != focus] = False
    if not given.any():
        return PropertyResult("guarantee_honoured", True, 0.0, note="no guarantees")
    x = allocate(inst)
    A = bundles_of(allocate, inst, x)
    # a queue's own limit below its guarantee caps what it can be owed (its configuration conflicts)
    L = queues_of(inst).leaf_array("limit", inst.users)
    owed = np.where(given, np.minimum(np.minimum(np.nan_to_num(G), r), L), 0.0)
    slack = np.where(given, A - owed, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):  # the Leontief multiple within guarantee and limit
        within = np.where(given & (r > 0), np.nan_to_num(G) / r, np.inf)
        capped = np.where(r > 0, L / np.where(r > 0, r, 1.0), np.inf)
        multiple = np.minimum(1.0, np.minimum(within, capped).min(axis=1))
    leontief_ok = x >= multiple - PROPERTY * np.maximum(1.0, multiple)
    slack[leontief_ok] = np.maximum(slack[leontief_ok], 0.0)
    i, j = np.unravel_index(int(np.argmin(slack)), slack.shape)
    if slack[i, j] >= -_amount_tolerance(A[i, j], owed[i, j]):
        return PropertyResult("guarantee_honoured", True, float(slack[i, j]))
    return PropertyResult(
        "guarantee_honoured",
        False,
        float(slack[i, j]),
        GuaranteeWitness(inst.users[i], inst.resources[j], float(G[i, j]), float(r[i, j]), float(A[i, j])),
    )


def _node_bundles(inst: Instance, A: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Every node of the queue tree (leaf queues, then groups) and what it receives: a leaf its
    bundle, a group the sum of its leaves' bundles."""
    q = queues_of(inst)
    index = {u: k for k, u in enumerate(inst.users)}
    groups = [g for g in q.groups]
    rows = [A[[index[u] for u in q.leaves(g)]].sum(axis=0) for g in groups]
    return [*inst.users, *groups], np.vstack([A, *rows]) if rows else A


@_checker("limit_respected")
def limit_respected(allocate: Allocate, inst: Instance, focus=None, **_) -> PropertyResult:
    """``A_ij <= L_ij`` for every leaf queue, and for every group the sum of its leaves' bundles
    stays within the group's limit.  Margin: the smallest slack, in units of the resource."""
    q = queues_of(inst)
    x = allocate(inst)
    nodes, received = _node_bundles(inst, bundles_of(allocate, inst, x))
    L = np.array([q.limit[v] for v in nodes], dtype=float).reshape(len(nodes), inst.m)
    if focus is not None:
        L[[v not in (inst.users[focus], *q.path(inst.users[focus])) for v in nodes]] = np.inf
    if not np.isfinite(L).any():
        return PropertyResult("limit_respected", True, 0.0, note="no limits")
    slack = L - received
    v, j = np.unravel_index(int(np.argmin(slack)), slack.shape)
    if slack[v, j] >= -_amount_tolerance(L[v, j], received[v, j]):
        return PropertyResult("limit_respected", True, float(slack[v, j]))
    return PropertyResult(
        "limit_respected",
        False,
        float(slack[v, j]),
        LimitWitness(nodes[v], inst.resources[j], float(L[v, j]), float(received[v, j])),
    )


@_checker("no_overcommit")
def no_overcommit(allocate: Allocate, inst: Instance, **_) -> PropertyResult:
    """The bundles fit the capacity: ``sum_i A_ij <= R_j``.  A policy's entitlement may promise
    more (``Allocation.entitlement``: its certificate lets it through); this property says so.
    Margin: the smallest idle amount, in units of the resource."""
    x = allocate(inst)
    promised = bundles_of(allocate, inst, x).sum(axis=0)
    slack = inst.capacity - promised
    j = int(np.argmin(slack))
    if slack[j] >= -_amount_tolerance(promised[j], inst.capacity[j]):
        return PropertyResult("no_overcommit", True, float(slack[j]))
    return PropertyResult(
        "no_overcommit",
        False,
        float(slack[j]),
        OvercommitWitness(inst.resources[j], float(promised[j]), float(inst.capacity[j])),
    )


def _room(inst: Instance, A: np.ndarray) -> np.ndarray:
    """``(n, m)``: how much more of each resource each queue may receive under its own limit and
    its groups' (``inf`` where nothing limits it)."""
    q = queues_of(inst)
    nodes, received = _node_bundles(inst, A)
    slack = np.array([q.limit[v] for v in nodes], dtype=float).reshape(len(nodes), inst.m) - received
    where = {v: k for k, v in enumerate(nodes)}
    room = slack[: inst.n].copy()
    for i, u in enumerate(inst.users):
        for g in q.path(u):
            np.minimum(room[i], slack[where[g]], out=room[i])
    return room


@_checker("work_conserving")
def work_conserving(allocate: Allocate, inst: Instance, focus=None, **_) -> PropertyResult:
    """No resource idle while a queue that could use it has unmet request.

    Queue ``i`` could use more when it is active, its request is not met (``x_i < T_i``: below 1
    on a queue case) and every resource ``j`` that stops it (``A_ij / D_ij == x_i``, ``D_ij > 0``)
    has idle capacity (``sum_k A_kj < R_j``) and room under the limits of ``i`` and of its groups.
    For Leontief-shaped mechanisms this is non-wastefulness; for per-resource policies it catches
    a resource left idle that a queue's request asks for.  Margin: minus the most tasks a queue
    could still run from the idle resources (0 when it holds)."""
    x = allocate(inst)
    A = bundles_of(allocate, inst, x)
    D, T, R = inst.demand, inst.bounds(), inst.capacity
    idle = R - A.sum(axis=0)
    free = idle > SATURATION * np.maximum(1.0, R)
    room = _room(inst, A)
    worst: tuple[float, int] = (0.0, -1)
    enough = room > SATURATION * np.maximum(1.0, R)
    for i in range(inst.n) if focus is None else [focus]:
        need = D[i] > 0
        if not need.any() or np.isfinite(T[i]) and x[i] >= T[i] - tolerance(x[i], T[i]):
            continue
        ratio = A[i, need] / D[i, need]
        stops = np.flatnonzero(need)[ratio <= x[i] + tolerance(x[i])]
        if not stops.size or not (free[stops] & enough[i, stops]).all():
            continue
        more = float(min(T[i] - x[i], np.min(np.minimum(idle[stops], room[i, stops]) / D[i, stops])))
        if more > max(worst[0], tolerance(x[i])):
            worst = (more, i)
    more, i = worst
    if i < 0:
        return PropertyResult("work_conserving", True, 0.0)
    need = D[i] > 0
    stops = np.flatnonzero(need)[A[i, need] / D[i, need] <= x[i] + tolerance(x[i])]
    return PropertyResult(
        "work_conserving",
        False,
        -more,
        IdleWitness(inst.users[i], float(x[i]), {inst.resources[j]: float(idle[j]) for j in stops}),
    )


def check_work(names, inst: Instance, *, budget: int = 500, focus=None) -> None:
    """Refuse, before any work, properties whose checking cannot stay within the bounds of
    :mod:`fairalloc.core.limits` on this instance: envy-freeness compares every pair of users
    (``MAX_PAIRWISE_CELLS``); strategy-proofness searches ``budget`` reports per user and
    population monotonicity solves once per user, each solve over every user (``MAX_SEARCH_WORK``)."""
    from fairalloc.analysis.manipulation import check_search
    from fairalloc.core import limits

    if "envy_freeness" in names and focus is None and inst.n >= 2:
        check_pairwise(inst)
    if "strategy_proofness" in names:
        check_search(inst, 1 if focus is not None else inst.n, budget, "strategy_proofness")
    if "population_monotonicity" in names and inst.n * inst.n > limits.MAX_SEARCH_WORK:
        raise FairallocError(
            f"population_monotonicity: {inst.n} solves (one per user leaving) x {inst.n} users = "
            f"{inst.n * inst.n:.3g}, above the limit of {limits.MAX_SEARCH_WORK:.3g} "
            f"(fairalloc.core.limits.MAX_SEARCH_WORK); leave population_monotonicity out"
        )


class _Allocator:
    """The checkers' :data:`Allocate`: task counts (Leontief values) of an instance, keeping the
    last allocation so that a checker can read its general bundles (:func:`general_bundles`)."""

    def __init__(self, mechanism: Mechanism, method: str):
        self.mechanism, self.method = mechanism, method
        self.last: tuple[Instance, Allocation] | None = None

    def __call__(self, inst: Instance) -> np.ndarray:
        allocation = self.mechanism.allocate(inst, self.method)
        self.last = (inst, allocation)
        return allocation.tasks


def allocator(mechanism: Mechanism, method: str = "auto") -> Allocate:
    return _Allocator(mechanism, method)


def _instance_of(instance: Instance | Case) -> Instance:
    """The instance itself, a loaded case's, or a case mapping's (a TypeError naming ``instance`` else)."""
    from fairalloc.io.cases import as_instance

    return as_instance(instance)


def check_property(
    mechanism,
    instance: Instance | Case,
    prop: str,
    *,
    method: str = "auto",
    budget: int = 500,
    seed: int = 0,
    user=None,
) -> PropertyResult:
    """Check one property (see :data:`PROPERTIES`) of ``mechanism`` (a registered name or a
    :class:`~fairalloc.core.registry.Mechanism`) on ``instance``.

    ``instance`` may be a loaded case; its ``misreport`` variants are the verifier's first guesses.
    ``user``: check the property for this user only ("violates P for user U"; Pareto efficiency,
    a property of the whole allocation, ignores it).
    """
    from fairalloc.analysis.manipulation import check_seed

    check_seed(seed)
    return check_one(get(mechanism), instance, prop, method=method, budget=budget, seed=seed, user=user)


def check_one(
    mech: Mechanism,
    instance: Instance | Case,
    prop: str,
    *,
    method: str = "auto",
    budget: int = 500,
    seed: int = 0,
    user=None,
    checked: bool = False,
) -> PropertyResult:
    """:func:`check_property` for a resolved mechanism; ``checked``: :func:`check_work` already ran."""
    from fairalloc.analysis.manipulation import case_hints

    inst = _instance_of(instance)
    focus = None if user is None else inst.user_index(user)
    if mech.kind == "dynamic":
        from fairalloc.analysis.dynamic_properties import DYNAMIC_CHECKERS, normalised

        (name,) = property_names(prop, dynamic=True)
        history = mech.allocate(inst, method).history
        return DYNAMIC_CHECKERS[name](
            history, mechanism=mech, d=normalised(inst, mech.name), budget=budget, seed=seed, method=method, focus=focus
        )
    (name,) = property_names(prop)
    active = _active_mask(inst)
    if name in PAPER_PROPERTIES and active is not None and not active.any():
        # the paper's properties compare the demands of users who have them: here nobody has one
        return PropertyResult(name, True, applicable=False, note=IDLE)
    if not checked:
        check_work([name], inst, budget=budget, focus=focus)
    return CHECKERS[name](
        allocator(mech, method),
        inst,
        mechanism=mech,
        budget=budget,
        seed=seed,
        method=method,
        hints=case_hints(instance),
        focus=focus,
    )


def check(
    mechanism,
    instance: Instance | Case,
    properties=None,
    *,
    method: str = "auto",
    budget: int = 500,
    seed: int = 0,
) -> PropertyReport:
    """Check several properties (default: the DRF paper's eight; all twelve on a queue case) of
    ``mechanism`` (a registered name or a :class:`~fairalloc.core.registry.Mechanism`) on ``instance``.

    The :class:`PropertyReport` is a ``dict`` ``{property: PropertyResult}``; Jupyter shows it as
    a table.
    """
    from fairalloc.analysis.manipulation import check_seed

    mech = get(mechanism)
    check_seed(seed)
    if not isinstance(properties, (str, type(None))):
        properties = list(properties) if isinstance(properties, Iterable) else [properties]
        if not all(isinstance(p, str) for p in properties):
            raise TypeError("properties: expected property names (a str as 'si,ef', or a list of str) or None")
    names = property_names(
        properties if isinstance(properties, (str, type(None))) else ",".join(properties),
        mech.kind == "dynamic",
        queues=_instance_of(instance).queues is not None,
    )
    if mech.kind != "dynamic":
        check_work(names, _instance_of(instance), budget=budget)
    return PropertyReport(
        {p: check_one(mech, instance, p, method=method, budget=budget, seed=seed, checked=True) for p in names},
        mechanism=mech.name,
        instance=getattr(_instance_of(instance), "name", ""),
    )


assert set(PROPERTIES) == set(CHECKERS)

__all__ = [
    "CHECKERS",
    "PROPERTIES",
    "PropertyReport",
    "PropertyResult",
    "check",
    "check_one",
    "check_property",
    "check_work",
    "describe_witness",
    "envious_users",
    "envy_values",
    "leontief",
    "property_names",
    "worst_envy",
]
