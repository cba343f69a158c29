"""The counterexample finder and the empirical Table 2.

:func:`falsify` draws random and adversarial instances until a property fails, shrinks the
failing instance (fewer users, fewer resources, small integers) while it keeps failing, and
returns it as a YAML case that reproduces the violation.  :func:`table2` does it for every
(mechanism, property) pair.  Trials are independent and deterministic (trial ``t`` of seed ``s``
always draws the same instance), so they run on the sweep engine: all cores by default, a Dask
cluster with one option, streamed to a JSON-lines file and resumable.

Instance styles (the "adversarial" part: structures under which the papers' counterexamples live):

* ``uniform``: integer demands 1..10, capacities 10..100;
* ``scarce``: one resource much scarcer than the others (contention drives CEEI's prices);
* ``bottleneck``: one resource is every user's dominant resource;
* ``mirror``: users with mirrored demands on equal capacities (Theorem 6's shape).

Queue instances (``InstanceSpace(queues=True)``, issue 15): the configurations production
schedulers run (:func:`random_queue_instance`): 2-6 queues with integer requests over 2-3
resources, weights, guarantees on about half of the queues (together within the capacity in most
draws, not all), limits on about half, sometimes a two-level tree of groups with their own weight,
guarantee and limit, sometimes an inactive queue, sometimes Kueue's borrowing and lending limits.
Their counterexamples are written as queue cases; the default property list is all twelve.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass, field, fields
from functools import partial
from typing import Any

import numpy as np

from fairalloc.analysis.properties import PROPERTIES, check_one, property_names
from fairalloc.analysis.results import (
    DynamicLieWitness,
    Lie,
    PopulationWitness,
    PropertyResult,
    ResourceWitness,
    Witness,
    describe_witness,
    witness_from_dict,
)
from fairalloc.core.errors import FairallocError
from fairalloc.core.instance import Instance
from fairalloc.core.queues import Queues
from fairalloc.core.registry import Mechanism, get

STYLES = ("uniform", "scarce", "bottleneck", "mirror")


@dataclass(frozen=True)
class InstanceSpace:
    """Where random instances come from."""

    users: tuple[int, int] = (2, 6)
    resources: tuple[int, int] = (2, 4)
    zeros: bool = False  # allow zero demands (the DRF paper assumes positive demands)
    weights: bool = False  # draw scalar weights 1..4
    bounds: bool = False  # give some users max_tasks
    queues: bool = False  # queue instances (random_queue_instance): guarantees, limits, groups

    def __post_init__(self):
        from fairalloc.core import limits

        for name, (lo, hi), most in (
            ("users", self.users, limits.MAX_SPACE_USERS),
            ("resources", self.resources, limits.MAX_SPACE_RESOURCES),
        ):
            if lo < 1 or hi < lo:
                raise FairallocError(f"{name}: need 1 <= low <= high (got {lo}..{hi})")
            if hi > most:
                raise FairallocError(
                    f"{name}: at most {most} (got {hi}; fairalloc.core.limits.MAX_SPACE_{name.upper()})"
                )


def random_instance(space: InstanceSpace, prop: str, rng: np.random.Generator, name: str = "random") -> Instance:
    """One instance of the space, shaped so that ``prop`` applies to it."""
    n = int(rng.integers(space.users[0], space.users[1] + 1))
    m = (
        1
        if prop == "single_resource_fairness"
        else int(rng.integers(max(2, space.resources[0]) if space.resources[1] >= 2 else 1, space.resources[1] + 1))
    )
    style = "bottleneck" if prop == "bottleneck_fairness" else STYLES[int(rng.integers(len(STYLES)))]
    low = 0 if space.zeros else 1
    D = rng.integers(low, 11, (n, m)).astype(float)
    D[~(D > 0).any(axis=1), 0] = float(rng.integers(1, 11))
    R = rng.integers(10, 101, m).astype(float)
    if style == "scarce" and m > 1:
        R[int(rng.integers(m))] = float(rng.integers(3, 15))
    elif style == "bottleneck":
        R[:] = float(rng.integers(20, 101))
        D[:, 0] = D.max(axis=1) + rng.integers(0, 4, n)
    elif style == "mirror" and m > 1:
        R[:] = float(rng.integers(10, 101))
        D[1::2] = D[0::2][: D[1::2].shape[0], ::-1]
    weights = rng.integers(1, 5, n).astype(float) if space.weights else None
    bounds = np.where(rng.random(n) < 0.4, rng.integers(1, 21, n), np.inf) if space.bounds else None
    return Instance(R, D, weights=weights, max_tasks=bounds, name=name)


#: the production policies, the schedulers' own: what operator-sized queue trees
#: (:func:`random_queue_tree`) are solved and explained with in the speed work's tests and benchmarks
QUEUE_POLICIES = (
    "drf",
    "volcano-proportion",
    "volcano-capacity",
    "yarn-fair",
    "yarn-capacity",
    "kueue",
    "yunikorn-fair",
    "mesos-drf",
    "hdrf-fluid",
)

#: resource names of random queue instances (as schedulers name them)
QUEUE_RESOURCES = ("cpu", "memory", "gpu")


def _amounts(rng: np.random.Generator, R: np.ndarray, low: float, high: float, some: float = 0.7) -> np.ndarray:
    """Whole amounts between ``low`` and ``high`` times each capacity on some resources (at least
    one), NaN on the others (not given)."""
    m = len(R)
    given = rng.random(m) < some
    given[int(rng.integers(m))] = True
    values = np.maximum(1.0, np.floor(R * rng.uniform(low, high, m)))
    return np.where(given, values, np.nan)


def _limit(values: np.ndarray, floor=np.nan) -> np.ndarray:
    """A limit drawn by :func:`_amounts`, raised to ``floor`` where both are given (a limit below
    a guarantee is no configuration), ``inf`` (not given) where it is NaN."""
    return np.where(np.isnan(values), np.inf, np.fmax(values, floor))


def _queue_config(rng: np.random.Generator, R: np.ndarray, n: int) -> dict[str, dict[str, Any]]:
    """Weight, guarantee, limit and (sometimes) Kueue's borrowing and lending limits per queue."""
    spec: dict[str, dict[str, Any]] = {}
    guaranteed = rng.random(n) < 0.5
    share = R / max(1, int(guaranteed.sum()))
    for i in range(n):
        node: dict[str, Any] = {"weight": float(rng.integers(1, 5))}
        if guaranteed[i]:
            node["guarantee"] = _amounts(rng, share, 0.2, 1.0)
        if rng.random() < 0.5:
            # a limit below the guarantee is no configuration
            node["limit"] = _limit(_amounts(rng, R, 0.2, 0.9), node.get("guarantee", np.nan))
        if guaranteed[i] and rng.random() < 0.3:
            node["borrowing_limit"] = _limit(_amounts(rng, R, 0.0, 0.5))
            node["lending_limit"] = _limit(np.fmin(_amounts(rng, R, 0.0, 0.5), node["guarantee"]))
        spec[f"q{i + 1}"] = node
    if rng.random() < 0.2:  # most draws keep the guarantees within the capacity, the others promise more
        for s in spec.values():
            if "guarantee" in s:
                s["guarantee"] = np.floor(s["guarantee"] * 2.5)
                if "limit" in s:
                    s["limit"] = np.fmax(s["limit"], s["guarantee"])
    return spec


def _groups(rng: np.random.Generator, R: np.ndarray, spec: dict[str, dict[str, Any]]) -> list[str]:
    """Sometimes a two-level tree: 1-2 groups at the root, some queues under them (set as their
    ``parent``), each group with a weight and perhaps a guarantee and a limit."""
    if rng.random() >= 0.35:
        return []
    names = [f"g{k + 1}" for k in range(int(rng.integers(1, 3)))]
    for q in spec:
        if rng.random() < 0.6:
            spec[q]["parent"] = names[int(rng.integers(len(names)))]
    groups = [g for g in names if any(s.get("parent") == g for s in spec.values())]
    for g in groups:
        node: dict[str, Any] = {"parent": None, "weight": float(rng.integers(1, 4))}
        if rng.random() < 0.4:
            node["guarantee"] = _amounts(rng, R / 2, 0.2, 1.0)
        if rng.random() < 0.4:
            under = [s["guarantee"] for s in spec.values() if s.get("parent") == g and "guarantee" in s]
            floor = np.nansum(under, axis=0) if under else 0.0
            node["limit"] = _limit(_amounts(rng, R, 0.3, 0.9), np.fmax(floor, node.get("guarantee", 0.0)))
        spec[g] = node
    return groups


def random_queue_instance(space: InstanceSpace, prop: str, rng: np.random.Generator, name: str = "random") -> Instance:
    """One queue instance (see the module docstring), built as :func:`fairalloc.io.cases.parse_case`
    builds a loaded queue case, so that ``inst.to_dict()`` loads back as the same instance.

    >>> inst = random_queue_instance(InstanceSpace(queues=True), "work_conserving", np.random.default_rng(3))
    >>> inst.queues is not None and set(inst.bounds()) <= {0.0, 1.0}
    True
    """
    n = int(rng.integers(space.users[0], space.users[1] + 1))
    top = min(3, space.resources[1])
    m = 1 if prop == "single_resource_fairness" or top < 2 else int(rng.integers(max(2, space.resources[0]), top + 1))
    R = rng.integers(10, 101, m).astype(float)
    D = np.floor(R * rng.uniform(0.05, 0.6, (n, m))) + 1
    if m > 1:  # a queue may leave a resource out of its request
        D[rng.random((n, m)) < 0.15] = 0.0
        D[~(D > 0).any(axis=1), 0] = 1.0
    if prop == "bottleneck_fairness":
        R[:] = float(rng.integers(20, 101))
        D[:, 0] = D.max(axis=1) + rng.integers(0, 4, n)
    live = np.ones(n, dtype=bool)
    if n > 2 and rng.random() < 0.25:  # an inactive queue: no request, nothing to receive
        live[int(rng.integers(n))] = False
        D[~live] = 0.0
    spec = _queue_config(rng, R, n)
    groups = _groups(rng, R, spec)
    users = [f"q{i + 1}" for i in range(n)]
    return _queue_instance(R, D, spec, users, groups, name, max_tasks=live.astype(float))


def _queue_instance(
    R: np.ndarray, D: np.ndarray, spec: dict, users: list[str], groups: list[str], name: str, max_tasks=None
) -> Instance:
    """The instance of queues ``users`` under ``groups``, configured by ``spec``, as a loaded case is."""
    m = len(R)
    nodes = {g: spec[g] for g in groups} | {u: spec[u] for u in users}
    hierarchy = None
    if groups:
        hierarchy = {
            "parent": {v: nodes[v].get("parent") for v in nodes},
            "weight": {v: nodes[v]["weight"] for v in nodes},
        }
    return Instance(
        R, D, resources=QUEUE_RESOURCES[:m], users=users, weights=[spec[u]["weight"] for u in users], name=name,
        max_tasks=max_tasks, groups=hierarchy, queues=Queues.build(QUEUE_RESOURCES[:m], nodes, groups),
    )  # fmt: skip


def random_queue_tree(
    rng: np.random.Generator, queues: int, depth: int = 0, resources: int = 2, name: str = "tree"
) -> Instance:
    """A random queue tree of an operator's size: ``queues`` leaf queues under ``depth`` levels of
    groups (0: flat), over ``resources`` resources, every queue with a request, most with a weight,
    guarantee, limit and some with Kueue's borrowing and lending limits (:func:`_queue_config`),
    groups with weights and some with guarantees and limits that hold their children's guarantees.
    The capacity grows with the queues so that about half of what is requested fits: the policies'
    bounds, not the capacity alone, decide the answer.

    Level ``l`` of ``depth`` has about ``queues ** (l / (depth + 1))`` groups, each under a random
    group of the level above; every leaf is under a random group of the deepest level.

    >>> tree = random_queue_tree(np.random.default_rng(1), 40, depth=3)
    >>> tree.n, len(tree.queues.groups) > 3, {len(tree.queues.path(u)) for u in tree.users}
    (40, True, {3})
    """
    m = min(resources, len(QUEUE_RESOURCES))
    R = rng.integers(10 * queues, 40 * queues + 1, m).astype(float)
    D = np.floor(rng.uniform(2, 60, (queues, m))) + 1
    if m > 1:  # a queue may leave a resource out of its request
        D[rng.random((queues, m)) < 0.15] = 0.0
        D[~(D > 0).any(axis=1), 0] = 1.0
    spec = _queue_config(rng, R, queues)
    levels = [[f"g{level}_{k}" for k in range(max(1, round(queues ** (level / (depth + 1)))))]
              for level in range(1, depth + 1)]  # fmt: skip
    parents: dict[str, str | None] = {g: None for g in levels[0]} if levels else {}
    for upper, lower in zip(levels, levels[1:], strict=False):
        parents |= {g: upper[int(rng.integers(len(upper)))] for g in lower}
    users = [f"q{i + 1}" for i in range(queues)]
    for u in users:
        spec[u]["parent"] = levels[-1][int(rng.integers(len(levels[-1])))] if levels else None
    groups = _tree_groups(rng, R, spec, parents, [g for level in levels for g in level], _leaf_needs(spec, users, D))
    return _queue_instance(R, D, spec, users, groups, name)


def _leaf_needs(spec: dict[str, dict[str, Any]], users: list[str], D: np.ndarray) -> dict[str, np.ndarray]:
    """What each queue's guarantee holds for it, on every resource: the guarantee itself, or the
    whole tasks it guarantees where a policy reads a guarantee as tasks (hdrf-fluid, mesos-drf: the
    largest multiple of the request within the guarantee), whichever is more."""
    out = {}
    for i, u in enumerate(users):
        g = np.nan_to_num(spec[u].get("guarantee", np.zeros(D.shape[1])), nan=0.0)
        on = (g > 0) & (D[i] > 0)
        tasks = float(np.min(g[on] / D[i][on])) if on.any() else 0.0
        out[u] = np.fmax(g, tasks * D[i])
    return out


def _tree_groups(
    rng: np.random.Generator,
    R: np.ndarray,
    spec: dict[str, dict[str, Any]],
    parents: dict,
    order: list[str],
    leaf_need: dict[str, np.ndarray],
) -> list[str]:
    """The groups that hold a queue (empty ones dropped), each with a weight and perhaps a
    guarantee and a limit.  A group's limit holds what its subtree is guaranteed (no configuration
    has less): per child the larger of its own guarantee and what its subtree needs (a queue:
    ``leaf_need``), summed, from the deepest level up, each node visited once."""
    held = {spec[u]["parent"] for u in spec if spec[u].get("parent")}
    for g in reversed(order):  # a group is kept when a kept group or a queue is under it
        if g in held and parents[g]:
            held.add(parents[g])
    groups = [g for g in order if g in held]
    need: dict[str, np.ndarray] = {g: np.zeros(len(R)) for g in groups}
    for u, queue in spec.items():  # the queues (groups are not in spec yet)
        if queue.get("parent"):
            need[queue["parent"]] += leaf_need[u]
    for g in reversed(groups):  # deepest first: a group's need is whole when it is reached
        node: dict[str, Any] = {"parent": parents[g], "weight": float(rng.integers(1, 4))}
        if rng.random() < 0.3:
            node["guarantee"] = _amounts(rng, R / len(groups), 0.2, 1.0)
        if rng.random() < 0.3:
            floor = np.fmax(need[g], np.nan_to_num(node.get("guarantee", np.zeros(len(R))), nan=0.0))
            node["limit"] = _limit(_amounts(rng, R, 0.3, 0.9), floor)
        if parents[g]:
            need[parents[g]] += np.fmax(need[g], np.nan_to_num(node.get("guarantee", np.zeros(len(R))), nan=0.0))
        spec[g] = node
    return groups


def falsify_trial(
    trial: int, *, mechanism: Mechanism, prop: str, space: InstanceSpace, seed: int, budget: int, method: str
) -> dict:
    """Trial ``trial``: draw an instance, check the property; a violation carries its case."""
    rng = np.random.default_rng([seed, trial])
    draw = random_queue_instance if space.queues else random_instance
    inst = draw(space, prop, rng, name=f"{mechanism.name}-{prop}-seed{seed}-trial{trial}")
    try:
        result = check_one(mechanism, inst, prop, method=method, budget=budget, seed=trial)
    except FairallocError as refused:
        if not space.queues:
            raise
        # a policy may refuse a configuration (guarantees beyond the capacity): not an instance of the cell
        result = PropertyResult(prop, True, applicable=False, note=f"{mechanism.name} refuses it: {refused}")
    out = {
        "mechanism": mechanism.name,
        "property": prop,
        "violated": not result.holds,
        "applicable": result.applicable,
        "margin": result.margin,
    }
    if not result.holds:
        out["case"] = inst.to_dict()
    return out


# -- shrinking ----------------------------------------------------------------------------------------


def _fails(mech: Mechanism, prop, inst, budget, method, seed, liar=None) -> PropertyResult | None:
    try:
        if liar is not None:  # shrinking a lie: only the liar's reports matter
            from fairalloc.analysis.manipulation import search_lie

            lie = search_lie(
                mech, inst, liar[0], budget=budget, seed=seed, method=method, hints=[liar[1]], first_profit=True
            )
            return PropertyResult(prop, False, -lie.gain, lie) if lie.profitable else None
        result = check_one(mech, inst, prop, method=method, budget=budget, seed=seed)
    except FairallocError:
        return None
    return None if result.holds else result


def _smaller_numbers(v: float) -> list[float]:
    out = (
        {1.0, float(np.floor(v / 2)), float(v - 1), float(np.round(v, -int(np.floor(np.log10(v)))))} if v > 1 else set()
    )
    return sorted(x for x in out if 0 < x < v)


def shrink(
    mechanism,
    prop: str,
    inst: Instance,
    *,
    budget: int = 200,
    method: str = "auto",
    seed: int = 0,
    max_checks: int = 400,
):
    """Fewer users, fewer resources, smaller integers, while the property still fails.

    ``mechanism``: a registered name or a :class:`~fairalloc.core.registry.Mechanism`.
    """
    return _shrink(get(mechanism), prop, inst, budget=budget, method=method, seed=seed, max_checks=max_checks)


def _guarantees_fit(inst: Instance) -> bool:
    """Whether a queue case's guarantees fit its capacity: the leaves' together, and each group's
    (always true for a paper case).  The shrinker keeps a configuration that fits fitting."""
    q = inst.queues
    if q is None:
        return True
    leaves = np.nansum(q.leaf_array("guarantee", inst.users), axis=0)
    groups = [np.nan_to_num(q.guarantee[g]) for g in q.groups]
    return bool(np.all(leaves <= inst.capacity) and all(np.all(g <= inst.capacity) for g in groups))


def _shrink(mech: Mechanism, prop: str, inst: Instance, *, budget: int, method: str, seed: int, max_checks: int):
    result = _fails(mech, prop, inst, budget, method, seed)
    if result is None:
        raise FairallocError(f"shrink: {prop} does not fail on this instance")
    w = result.witness
    # a failed strategy-proofness check's witness is the lie (Lie, or DynamicLieWitness for a dynamic mechanism)
    liar = (
        (w.user, w.reported_demand) if prop == "strategy_proofness" and isinstance(w, Lie | DynamicLieWitness) else None
    )
    checks = 0
    fit = _guarantees_fit(inst)

    def attempt(candidate):
        nonlocal checks, inst, result, liar
        if checks >= max_checks:
            return False
        if fit and not _guarantees_fit(candidate):  # a smaller capacity must still hold the guarantees
            return False
        checks += 1
        if liar is not None and liar[0] not in candidate.users:
            return False
        found = _fails(mech, prop, candidate, budget, method, seed, liar)
        if found is not None:
            inst, result = candidate, found
            if liar is not None:
                liar = (liar[0], found.witness.reported_demand)
            return True
        return False

    changed = True
    while changed and checks < max_checks:
        changed = False
        for i in reversed(range(inst.n)):
            if inst.n > 1 and attempt(inst.without_user(i)):
                changed = True
        for j in reversed(range(inst.m)):
            if inst.m > 1:
                try:
                    smaller = inst.without_resource(j)  # fails if a user demanded only j
                except FairallocError:
                    continue
                if attempt(smaller):
                    changed = True
        for j in range(inst.m):
            for v in _smaller_numbers(inst.capacity[j]):
                R = inst.capacity.copy()
                R[j] = v
                if attempt(inst.with_capacity(R)):
                    changed = True
                    break
        for i in range(inst.n):
            for j in range(inst.m):
                for v in _smaller_numbers(inst.demand[i, j]):
                    d = inst.demand[i].copy()
                    d[j] = v
                    try:
                        candidate = inst.with_demand(i, d)
                    except FairallocError:
                        continue
                    if attempt(candidate):
                        changed = True
                        break
    if liar is not None:  # the final lie: a full search from the one that worked, rounded
        from fairalloc.analysis.manipulation import search_lie

        lie = search_lie(mech, inst, liar[0], budget=budget, seed=seed, method=method, hints=[liar[1]])
        result = PropertyResult(prop, False, -lie.gain, lie)
    return inst, result, checks


# -- the finder -------------------------------------------------------------------------------------------


@dataclass
class FalsifyResult:
    """What :func:`falsify` returns (and :func:`table2`, per cell): the shrunk counterexample as a
    YAML ``case`` and its typed ``witness``, or how many instances the property held on."""

    mechanism: str
    property: str
    trials: int
    found: bool
    seconds: float
    case: dict | None = None
    witness: Witness | None = None
    summary: str = ""
    first_trial: int | None = None
    shrink_checks: int = 0
    skipped: int = 0
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The JSON shape: every field in order, the witness as its ``to_dict()``."""
        return {
            f.name: getattr(self, f.name).to_dict()
            if f.name == "witness" and self.witness is not None
            else copy.deepcopy(getattr(self, f.name))
            for f in fields(self)
        }


def case_for(mechanism: str, prop: str, inst: Instance, result, source: str) -> dict:
    """A YAML case reproducing a violation (with the variant that shows it, where there is one)."""
    case = inst.to_dict()
    case["name"] = f"{mechanism}-violates-{prop.replace('_', '-')}"
    case["source"] = source
    case["description"] = f"{mechanism} violates {prop}: {describe_witness(prop, result.witness)}."
    w = result.witness
    variant: dict[str, Any] | None = None
    if isinstance(w, PopulationWitness):
        variant = {"name": "user-leaves", "remove_user": w.removed_user}
    elif isinstance(w, ResourceWitness):
        variant = {"name": "more-capacity", "capacity": dict(w.capacity_after)}
    elif isinstance(w, Lie):
        report = (w.shrunk or w).reported_demand
        variant = {"name": "lie", "misreport": {"user": w.user, "demand": {k: v for k, v in report.items() if v}}}
    if variant:
        case["variants"] = [variant]
    # replayed by 'fairalloc reproduce' (the violation is of the instance itself; the variant shows it)
    user = getattr(w, "user", None)
    focus = f" for user {user}" if user is not None and prop != "pareto_efficiency" else ""
    case["claims"] = [f"{mechanism} violates {prop}{focus}"]
    return case


def _sweep(task, trials, out, workers, dask_address, progress, desc, **options):
    """``run_sweep`` over trials ``0..trials-1``; ``options``: its stop, meta and follow-up arguments."""
    from fairalloc.analysis.sweep import run_sweep

    return run_sweep(
        task, range(trials), out, workers=workers, dask_address=dask_address, progress=progress, desc=desc, **options
    )


def falsify(
    mechanism,
    prop: str,
    *,
    space: InstanceSpace = InstanceSpace(),
    trials: int = 1000,
    seed: int = 0,
    budget: int = 200,
    method: str = "auto",
    out=None,
    workers: int | None = None,
    dask_address: str | None = None,
    progress: bool | None = None,
) -> FalsifyResult:
    """Search ``trials`` random instances for a violation of ``prop``; shrink the first one found."""
    from fairalloc.analysis.manipulation import check_seed

    for argument, value in (("trials", trials), ("budget", budget)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{argument}: expected a whole number, got {type(value).__name__}")
    if not isinstance(space, InstanceSpace):
        raise TypeError(f"space: expected an InstanceSpace, got {type(space).__name__}")
    check_seed(seed)
    if trials <= 0:
        raise FairallocError(f"trials: must be positive (got {trials})")
    if budget <= 0:
        raise FairallocError(f"budget: must be positive (got {budget})")
    mech = get(mechanism)
    (prop,) = property_names(prop)
    start = time.perf_counter()
    task = partial(falsify_trial, mechanism=mech, prop=prop, space=space, seed=seed, budget=budget, method=method)
    meta = {
        "command": "falsify",
        "mechanism": mech.name,
        "property": prop,
        "seed": seed,
        "budget": budget,
        "space": asdict(space),
        "method": method,
    }
    # one stop group: the trials below the first hit still run, so the violation reported is the
    # lowest-numbered one whatever the number of workers, and every trial up to it is checked
    results = _sweep(
        task,
        trials,
        out,
        workers,
        dask_address,
        progress,
        f"{mech.name} {prop}",
        stop_when=lambda r: r["violated"],
        stop_group=lambda t: 0,
        meta=meta,
    )
    return _conclude(mech, prop, results, seed, budget, method, start)


def _first_violation(results: list[dict]) -> dict | None:
    return min((r for r in results if r["violated"]), key=lambda r: r["trial"], default=None)


def _shrunk(mech, prop, first: dict, seed, budget, method) -> dict:
    """The first counterexample of a cell, shrunk, as JSON: its case, witness and check count (the
    same on a worker as here: the shrink is seeded by the trial)."""
    from fairalloc.io.cases import parse_case

    inst = parse_case(first["case"]).instance
    small, result, checks = _shrink(mech, prop, inst, budget=budget, method=method, seed=first["trial"], max_checks=400)
    source = f"fairalloc falsify -m {mech.name} -p {prop} --seed {seed} (trial {first['trial']}, shrunk)"
    return {
        "case": case_for(mech.name, prop, small, result, source),
        "witness": result.witness.to_dict(),
        "checks": checks,
    }


def _conclude(mech, prop, results, seed, budget, method, start, shrunk: dict | None = None) -> FalsifyResult:
    """A cell's verdict: 'holds on N instances', or its first counterexample shrunk (``shrunk``:
    done already, on a worker)."""
    first = _first_violation(results)
    skipped = sum(1 for r in results if not r.get("applicable", True))
    if first is None:
        return FalsifyResult(
            mech.name,
            prop,
            len(results),
            False,
            time.perf_counter() - start,
            summary=f"holds on {len(results) - skipped} instances",
            skipped=skipped,
        )
    shrunk = shrunk or _shrunk(mech, prop, first, seed, budget, method)
    witness = witness_from_dict(prop, shrunk["witness"])
    return FalsifyResult(
        mech.name,
        prop,
        len(results),
        True,
        time.perf_counter() - start,
        shrunk["case"],
        witness,
        f"VIOLATED: {describe_witness(prop, witness)}",
        first["trial"],
        shrunk["checks"],
        skipped,
    )


def _shrink_cell(c: int, *, cells, firsts, seed, budget, method) -> dict:
    mech, prop = cells[c]
    return _shrunk(mech, prop, firsts[c], seed, budget, method)


def table2(
    mechanisms=None,
    properties=None,
    *,
    space: InstanceSpace = InstanceSpace(),
    trials: int = 200,
    seed: int = 0,
    budget: int = 100,
    method: str = "auto",
    out=None,
    workers: int | None = None,
    dask_address: str | None = None,
    progress: bool | None = None,
) -> list[FalsifyResult]:
    """Every (mechanism, property) cell: 'holds on N instances' or a shrunk counterexample.

    One sweep over all cells (trial ``c * trials + t`` is trial ``t`` of cell ``c``), so the cores
    stay busy and an interrupted table resumes as a whole. A cell stops at its first counterexample,
    as :func:`falsify` does (the other cells go on): a violated cell reports the trials up to it,
    and its counterexample is the lowest-numbered one, the one a sweep of all its trials finds.
    """
    if trials <= 0:
        raise FairallocError(f"trials: must be positive (got {trials})")
    from fairalloc.core import registry

    mechs = [get(m) for m in (mechanisms or registry.available("static", families=False))]
    props = property_names(
        properties if isinstance(properties, (str, type(None))) else ",".join(properties), queues=space.queues
    )
    cells = [(m, p) for m in mechs for p in props]
    task = partial(_table_trial, cells=cells, trials=trials, space=space, seed=seed, budget=budget, method=method)
    meta = {
        "command": "table2",
        "cells": [[m.name, p] for m, p in cells],
        "trials": trials,
        "seed": seed,
        "budget": budget,
        "space": asdict(space),
        "method": method,
    }
    start = time.perf_counter()
    results = _sweep(
        task,
        len(cells) * trials,
        out,
        workers,
        dask_address,
        progress,
        "table2",
        stop_when=lambda r: r["violated"],
        stop_group=lambda t: t // trials,
        meta=meta,
        # each cell's first counterexample is shrunk while the sweep goes on: after it, the slowest
        # shrink (yunikorn-fair's strategy-proofness, 3.4 min) ran alone at the end
        followup=partial(_shrink_hit, cells=cells, trials=trials, seed=seed, budget=budget, method=method),
        followup_desc="shrinking",
        # strategy-proofness cells first: each trial solves its instance up to budget x users times
        # (the other properties a few times), and their shrinks are the longest follow-ups
        order=lambda t: (cells[t // trials][1] != "strategy_proofness", t),
    )
    by_cell: dict[int, list[dict]] = {}
    for r in results:
        by_cell.setdefault(r["trial"] // trials, []).append({**r, "trial": r["trial"] % trials})
    for c, rows in by_cell.items():  # trials a worker ran past a cell's first hit do not count
        if (first := _first_violation(rows)) is not None:
            by_cell[c] = [r for r in rows if r["trial"] <= first["trial"]]
    shrunk = _shrink_on_workers(cells, by_cell, seed, budget, method, workers, dask_address, progress)
    return [
        _conclude(m, p, by_cell.get(c, []), seed, budget, method, start, shrunk.get(c))
        for c, (m, p) in enumerate(cells)
    ]


def _shrink_on_workers(cells, by_cell, seed, budget, method, workers, dask_address, progress) -> dict[int, dict]:
    """Each violated cell's first counterexample, shrunk: by the sweep's follow-up, or, for a cell
    whose sweep had nothing left to run (resumed from its file), on the sweep's workers now
    (shrinking them one after the other here took as long as the whole sweep of a full table)."""
    from fairalloc.analysis.sweep import run_sweep

    firsts = {c: first for c in range(len(cells)) if (first := _first_violation(by_cell.get(c, []))) is not None}
    shrunk = {c: first["followup"] for c, first in firsts.items() if "followup" in first}
    firsts = {c: first for c, first in firsts.items() if c not in shrunk}
    if not firsts:
        return shrunk
    task = partial(_shrink_cell, cells=cells, firsts=firsts, seed=seed, budget=budget, method=method)
    done = run_sweep(
        task,
        sorted(firsts),
        None,
        workers=workers,
        dask_address=dask_address,
        progress=progress,
        desc="table2: shrinking",
    )
    return shrunk | {r["trial"]: r for r in done}


def _table_trial(trial: int, *, cells, trials, space, seed, budget, method) -> dict:
    mech, prop = cells[trial // trials]
    return falsify_trial(
        trial % trials, mechanism=mech, prop=prop, space=space, seed=seed, budget=budget, method=method
    )


def _shrink_hit(row: dict, *, cells, trials, seed, budget, method) -> dict:
    """A cell's first counterexample (a row of the table's sweep), shrunk: the sweep's follow-up."""
    mech, prop = cells[row["trial"] // trials]
    return _shrunk(mech, prop, {**row, "trial": row["trial"] % trials}, seed, budget, method)


__all__ = [
    "InstanceSpace",
    "FalsifyResult",
    "PROPERTIES",
    "falsify",
    "random_instance",
    "random_queue_instance",
    "shrink",
    "table2",
]
