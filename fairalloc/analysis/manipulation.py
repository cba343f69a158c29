"""The manipulation verifier: search the reports ``D'_i`` that maximise a user's *true* tasks.

A lie is judged by what it buys: user ``i`` reports ``D'_i``, the mechanism gives her ``x'_i``
tasks of the reported demand, i.e. the bundle ``x'_i D'_i``, and that bundle is worth
``u_i(x'_i D'_i)`` tasks of her true demand (Leontief, capped by her bound).  A per-resource
policy gives a general bundle instead (``allocation.bundles[i]`` of the lie's allocation, not
``x'_i D'_i``): it is valued the same way, with the Leontief utility of her true request.  On a
queue case the report is the queue's ``request`` (its demand row); its guarantee, limit and the
rest of the queue configuration are configuration, not reports, and stay as they are.  An
inactive queue (no request) has nothing to lie about and is not searched.

The search, per user and under an evaluation budget (every mechanism call counts):

1. global moves (half of the budget): each resource scaled alone on a grid, least contended
   resources first; the least contended resources inflated together (the intuition of the CEEI
   proof: claim more of an under-used resource); resources she does not need switched on; random
   log-normal perturbations of the whole vector;
2. local optimisation: a pattern search in log space from the best points, halving its step
   until it stalls or the budget is spent;
3. shrinking: the best lie is rounded (simple ratios to the true demand, then few significant
   digits) to the roundest report whose gain survives (at least half of the best gain).

Deterministic for a given seed.

>>> import fairalloc
>>> theorem_4 = fairalloc.Instance.from_arrays([100, 100], [[16, 1], [1, 2]])
>>> lie = verify("ceei", theorem_4, user="1", budget=300).best
>>> lie.profitable, round(lie.truthful_tasks, 4), lie.manipulated_tasks > 4.1
(True, 3.2258, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from fairalloc.analysis.results import Lie, ShrunkLie, finite_or_none
from fairalloc.analysis.valuation import leontief
from fairalloc.core.decimals import shortest
from fairalloc.core.errors import FairallocError, excerpt
from fairalloc.core.instance import Instance
from fairalloc.core.registry import Mechanism, get
from fairalloc.core.tolerances import GAIN

#: scale factors tried on one resource at a time, most telling first
GRID = (2.0, 4.0, 8.0, 1.5, 0.5, 16.0, 1.25, 0.8, 0.25, 3.0)
#: amounts (in units of the user's dominant share per task) tried on resources she does not need
SWITCH_ON = (0.1, 0.5, 1.0, 0.25, 2.0)


@dataclass
class VerifyResult:
    """The verifier's answer: the best lie per user; ``witness`` is the YAML case of the best
    profitable one (see :func:`witness_case`)."""

    mechanism: str
    case: str
    lies: list[Lie]
    seconds: float
    seed: int
    budget: int
    witness: dict | None = field(default=None, repr=False)

    @property
    def evaluations(self) -> int:
        return sum(lie.evaluations for lie in self.lies)

    @property
    def best(self) -> Lie | None:
        return max(self.lies, key=lambda lie: lie.gain, default=None)

    @property
    def evaluations_per_second(self) -> float:
        return self.evaluations / self.seconds if self.seconds > 0 else float("inf")

    def to_dict(self) -> dict:
        best = self.best
        return {
            "mechanism": self.mechanism,
            "case": self.case,
            "best": best.to_dict() if best else None,
            "profitable": bool(best and best.profitable),
            "users": {lie.user: lie.to_dict() for lie in self.lies},
            "evaluations": self.evaluations,
            # null when the search was too fast to time
            "evaluations_per_second": finite_or_none(self.evaluations_per_second),
            "seconds": self.seconds,
            "seed": self.seed,
            "budget_per_user": self.budget,
            "witness_case": self.witness,
        }


class _BudgetSpent(Exception):
    pass


class _Search:
    """Evaluations of one user's reports, cached, counted and capped."""

    def __init__(self, mechanism, instance: Instance, i: int, budget: int, method: str, evaluate=None, progress=None):
        self.mechanism, self.instance, self.i, self.budget, self.method = mechanism, instance, i, budget, method
        self.evaluate = evaluate or self.true_tasks
        self.progress = progress  # called with (evaluations, budget) after each evaluation
        self.cache: dict[tuple, float] = {}
        self.evaluations = 0
        self.best: tuple[float, np.ndarray | None] = (-np.inf, None)
        self.stop_above = np.inf  # end the search once a value exceeds this

    def true_tasks(self, report: np.ndarray) -> float:
        """What the report buys (``x'_i D'_i``, or the policy's general bundle), valued with the true demand."""
        if not (self.instance.demand[self.i] > 0).any():  # an inactive queue runs nothing
            return 0.0
        allocation = self.mechanism.allocate(self.instance.with_demand(self.i, report), self.method)
        if allocation.amounts is not None:
            return leontief(self.instance, self.i, allocation.amounts[self.i])
        return leontief(self.instance, self.i, allocation.tasks[self.i] * report)

    def value(self, report: np.ndarray, *, extra: bool = False) -> float:
        report = np.maximum(report, 0.0)
        key = tuple(np.round(report, 12))
        if key in self.cache:
            return self.cache[key]
        if self.evaluations >= self.budget and not extra:
            raise _BudgetSpent
        self.evaluations += 1
        if self.progress is not None:
            self.progress(self.evaluations, self.budget)
        try:
            value = self.evaluate(report)
        except FairallocError:  # an impossible report (e.g. a zero-capacity resource)
            value = -np.inf
        self.cache[key] = value
        if value > self.best[0]:
            self.best = (value, report.copy())
        if value > self.stop_above:
            raise _BudgetSpent
        return value


def _global_moves(
    search: _Search, truth: np.ndarray, utilization: np.ndarray, rng: np.random.Generator, limit: int
) -> None:
    inst, i = search.instance, search.i
    unit = inst.capacity * inst.per_task_dominant_share[i]  # one dominant share's worth of each resource
    order = np.argsort(utilization, kind="stable")  # least contended first
    for j in order:
        for f in GRID if truth[j] > 0 else SWITCH_ON:
            d = truth.copy()
            d[j] = truth[j] * f if truth[j] > 0 else unit[j] * f
            if search.evaluations >= limit:
                return
            search.value(d)
    for k in range(2, inst.m + 1):  # the k least contended together
        for f in (2.0, 4.0, 8.0):
            d = truth.copy()
            idx = order[:k]
            d[idx] = np.where(truth[idx] > 0, truth[idx] * f, unit[idx] * f / 4)
            if search.evaluations >= limit:
                return
            search.value(d)
    while search.evaluations < limit:
        d = truth * np.exp(rng.normal(0.0, 0.7, inst.m))
        off = truth == 0
        switch = off & (rng.random(inst.m) < 0.3)
        d[switch] = unit[switch] * rng.uniform(0.05, 1.5, int(switch.sum()))
        before = search.evaluations
        search.value(d)
        if search.evaluations == before:  # cached: the space is small, stop sampling
            break


def _pattern_search(search: _Search, start: np.ndarray, step: float = 0.5, min_step: float = 1e-4) -> None:
    """Coordinate pattern search on log(report) over the resources the report uses."""
    point, best = start.copy(), search.value(start)
    active = np.flatnonzero(point > 0)
    while step >= min_step:
        improved = False
        for j in active:
            for direction in (1.0, -1.0):
                trial = point.copy()
                trial[j] *= np.exp(direction * step)
                v = search.value(trial)
                if v > best:
                    point, best, improved = trial, v, True
                    break
        if not improved:
            step /= 2


def _round_report(report: np.ndarray, truth: np.ndarray, level: tuple[str, int]) -> np.ndarray:
    kind, k = level
    if kind == "ratio":  # simple fractions of the true demand where she has one
        ratio = np.array(
            [
                float(Fraction(r).limit_denominator(k)) if t > 0 else 0.0
                for r, t in zip(np.divide(report, truth, out=np.zeros_like(report), where=truth > 0), truth)
            ]
        )
        return np.where(truth > 0, truth * ratio, _significant(report, 1))
    return _significant(report, k)


def _significant(values: np.ndarray, digits: int) -> np.ndarray:
    out = np.zeros_like(values)
    nz = values > 0
    exponent = np.floor(np.log10(values[nz]))
    scale = 10.0 ** (exponent - digits + 1)
    out[nz] = np.round(values[nz] / scale) * scale
    return out


ROUNDING = (("sig", 1), ("ratio", 1), ("ratio", 2), ("sig", 2), ("ratio", 4), ("ratio", 10), ("sig", 3))


def probe(mechanism, instance: Instance, user, report, *, method: str = "auto") -> Lie:
    """What one given report (``{resource: amount}`` or a vector) is worth to ``user``: her true
    tasks when truthful and when she reports ``report`` (the bundle it buys, valued with her true
    demand).  The explorer's manipulation probe."""
    i = instance.user_index(user)
    if isinstance(report, dict):
        report = [float(report.get(r, 0.0)) for r in instance.resources]
    report = np.asarray(report, dtype=float)
    search = _Search(get(mechanism), instance, i, 2, method)
    return Lie(
        instance.users[i],
        search.true_tasks(instance.demand[i].copy()),
        search.true_tasks(report),
        _as_mapping(instance, report),
        2,
    )


def best_lie(
    mechanism,
    instance: Instance,
    user,
    *,
    budget: int = 2000,
    seed: int = 0,
    method: str = "auto",
    hints=(),
    first_profit: bool = False,
    evaluate=None,
    progress=None,
) -> Lie:
    """Search one user's reports (see the module docstring) within ``budget`` evaluations.

    ``mechanism``: a registered name or a :class:`~fairalloc.core.registry.Mechanism`.
    ``hints``: reports (``{resource: amount}``) to try first; ``first_profit``: stop at the first
    profitable lie (enough to show a violation, as when shrinking a counterexample).
    ``evaluate(report) -> float``: what a report is worth to the user (default: her true tasks
    under the static mechanism; dynamic mechanisms pass her best gain over later steps).
    ``progress(evaluations, budget)`` is called after each evaluation (the explorer streams it).
    """
    return search_lie(
        get(mechanism),
        instance,
        user,
        budget=budget,
        seed=seed,
        method=method,
        hints=hints,
        first_profit=first_profit,
        evaluate=evaluate,
        progress=progress,
    )


def search_lie(
    mech: Mechanism,
    instance: Instance,
    user,
    *,
    budget: int = 2000,
    seed: int = 0,
    method: str = "auto",
    hints=(),
    first_profit: bool = False,
    evaluate=None,
    progress=None,
) -> Lie:
    """:func:`best_lie` for a resolved mechanism (the form the checkers and the finder call)."""
    i = instance.user_index(user)
    truth = instance.demand[i].copy()
    if not (truth > 0).any():  # an inactive queue: it runs nothing, whatever it reports
        return Lie(instance.users[i], 0.0, 0.0, _as_mapping(instance, truth), 0)
    search = _Search(mech, instance, i, max(1, budget), method, evaluate, progress)
    rng = np.random.default_rng([seed, i])
    truthful = search.value(truth)
    if first_profit:
        search.stop_above = truthful + GAIN * max(1.0, abs(truthful))
    utilization = mech.allocate(instance, method).utilization
    try:
        for hint in hints:
            search.value(np.array([float(hint.get(r, 0.0)) for r in instance.resources]))
        _global_moves(search, truth, utilization, rng, limit=max(2, budget // 2))
        tried = set()
        while search.evaluations < search.budget:
            ranked = sorted(search.cache.items(), key=lambda kv: -kv[1])
            start = next((np.array(k) for k, _ in ranked if k not in tried), None)
            if start is None:
                break
            tried.add(tuple(start))
            _pattern_search(search, start)
    except _BudgetSpent:
        pass
    value, report = search.best
    if report is None or value <= truthful:
        value, report = truthful, truth
    lie = Lie(instance.users[i], float(truthful), float(value), _as_mapping(instance, report), search.evaluations)
    if lie.profitable and not first_profit:
        lie.shrunk = _shrink(search, report, truth, truthful, value - truthful)
    return lie


def _shrink(search: _Search, report: np.ndarray, truth: np.ndarray, truthful: float, gain: float) -> ShrunkLie | None:
    for level in ROUNDING:
        rounded = _round_report(report, truth, level)
        if not np.any(rounded > 0):
            continue
        value = search.value(rounded, extra=True)
        if value - truthful >= 0.5 * gain and value - truthful > GAIN * max(1.0, truthful):
            return ShrunkLie(
                _as_mapping(search.instance, rounded), float(value), float(value - truthful), f"{level[0]} {level[1]}"
            )
    return None


def _as_mapping(instance: Instance, report: np.ndarray) -> dict[str, float]:
    return {r: float(v) for r, v in zip(instance.resources, report)}


def case_hints(case) -> dict[str, list[dict]]:
    """The reports a case's ``misreport`` variants make, by user (tried first by the verifier)."""
    hints: dict[str, list[dict]] = {}
    for variant in getattr(case, "raw", {}).get("variants", []) or []:
        lie = variant.get("misreport")
        if lie:
            hints.setdefault(str(lie["user"]), []).append(lie["demand"])
    return hints


def check_seed(seed: object) -> int:
    """A random seed of the Python API: a whole number in ``0..MAX_SEED``, or one clear error."""
    from fairalloc.core.limits import MAX_SEED

    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed: expected a whole number in 0..{MAX_SEED}, got {type(seed).__name__}")
    if not 0 <= seed <= MAX_SEED:
        raise FairallocError(f"seed: must lie in 0..{MAX_SEED} (got {seed}; fairalloc.core.limits.MAX_SEED)")
    return int(seed)


def check_budget(budget, option: str = "--budget") -> int:
    """A search budget: a whole number of evaluations in ``1..MAX_BUDGET``, or one clear error."""
    from fairalloc.core.limits import MAX_BUDGET

    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
        raise FairallocError(f"{option}: must be a whole number of evaluations (got {excerpt(budget)})")
    if budget <= 0:
        raise FairallocError(f"{option}: must be a positive number of evaluations (got {budget})")
    if budget > MAX_BUDGET:
        raise FairallocError(
            f"{option}: at most {MAX_BUDGET} evaluations per user (got {budget}; fairalloc.core.limits.MAX_BUDGET)"
        )
    return int(budget)


def check_search(
    instance: Instance,
    users: int,
    budget: int,
    what: str = "verify",
    limit: str = "MAX_SEARCH_WORK",
    hint: str | None = None,
) -> None:
    """Refuse a search whose work, ``users`` attacked x ``budget`` evaluations x the users every
    evaluation solves, is above :data:`~fairalloc.core.limits.MAX_SEARCH_WORK` (or the named limit),
    before it starts; ``hint`` says what to change (default: the command-line options)."""
    from fairalloc.core import limits

    check_budget(budget)
    bound = getattr(limits, limit)
    work = users * budget * instance.n
    if work > bound:
        raise FairallocError(
            f"{what}: {users} user{'s' if users != 1 else ''} attacked x {budget} evaluations x {instance.n} users "
            f"per evaluation = {work:.3g}, above the limit of {bound:.3g} (fairalloc.core.limits.{limit}); "
            + (
                hint
                or "attack one user (--user) or lower --budget" + ("" if what == "verify" else f", or leave {what} out")
            )
        )


def verify(
    mechanism,
    instance: Instance,
    user=None,
    *,
    budget: int = 2000,
    seed: int = 0,
    method: str = "auto",
    hints: dict[str, list[dict]] | None = None,
) -> VerifyResult:
    """Search profitable lies for ``user`` (or every user); ``budget`` is evaluations per user.

    ``mechanism``: a registered name or a :class:`~fairalloc.core.registry.Mechanism`.
    ``instance`` may be a loaded case: its ``misreport`` variants are then tried first.
    """
    from fairalloc.io.cases import as_instance

    check_budget(budget)
    check_seed(seed)
    if not isinstance(getattr(instance, "instance", instance), Instance):  # a case mapping, or a wrong type
        instance = as_instance(instance)
    return search_lies(get(mechanism), instance, user, budget=budget, seed=seed, method=method, hints=hints)


def search_lies(
    mech: Mechanism,
    instance: Instance,
    user=None,
    *,
    budget: int = 2000,
    seed: int = 0,
    method: str = "auto",
    hints: dict[str, list[dict]] | None = None,
) -> VerifyResult:
    """:func:`verify` for a resolved mechanism (the form the strategy-proofness checker calls)."""
    check_budget(budget)
    hints = case_hints(instance) if hints is None else hints
    instance = getattr(instance, "instance", instance)
    users = instance.users if user is None else [instance.users[instance.user_index(user)]]
    check_search(instance, len(users), budget)
    start = time.perf_counter()
    lies = [
        search_lie(mech, instance, u, budget=budget, seed=seed, method=method, hints=hints.get(u, ())) for u in users
    ]
    result = VerifyResult(mech.name, instance.name, lies, time.perf_counter() - start, seed, budget)
    best = result.best
    if best is not None and best.profitable:
        result.witness = witness_case(instance, mech.name, best)
    return result


def witness_case(instance: Instance, mechanism: str, lie: Lie) -> dict:
    """The instance as a YAML case with the lie as a ``misreport`` variant."""
    report = (lie.shrunk or lie).reported_demand
    value = (lie.shrunk or lie).manipulated_tasks
    case = instance.to_dict()
    case = {
        "name": f"{instance.name}-{mechanism}-lie-user-{lie.user}",
        "source": f"found by fairalloc verify -m {mechanism} on {instance.name}",
        **case,
    }
    case["description"] = (
        f"{mechanism} is not strategy-proof here: user {lie.user} runs "
        f"{lie.truthful_tasks:.6g} tasks when truthful and {value:.6g} true tasks when she "
        f"reports the demand of variant 'lie' (found by fairalloc verify)."
    )
    case["variants"] = [
        {"name": "lie", "misreport": {"user": lie.user, "demand": {k: shortest(v) for k, v in report.items() if v}}}
    ]
    # replayed by 'fairalloc reproduce': the verifier tries the case's misreport first
    case["claims"] = [f"{mechanism} violates strategy_proofness for user {lie.user}"]
    return case
