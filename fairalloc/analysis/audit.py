"""An audit of a policy on the user's own instance: every property, and every queue's best lie.

``fairalloc audit`` asks of one case what ``check`` and ``verify`` ask separately: each property of
the policy that applies (the DRF paper's eight, and on a queue case ``guarantee_honoured``,
``limit_respected``, ``no_overcommit``, ``work_conserving``), each NO with its witness in words; and
for every active queue the verifier's best misreported request (section 4 of docs/formulations.md),
said in the queue's own terms: what it would hold of the resource its lie helps most, instead of
what it holds when truthful, by asking for what instead of its request.  A lie found proves the
policy manipulable here; none found within the budget proves nothing.

>>> from fairalloc.io.cases import load_case
>>> report = audit(load_case("drf-theorem-4"), "ceei", budget=200)
>>> report.lies["1"].profitable
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from fairalloc.analysis.manipulation import VerifyResult, case_hints, check_budget, check_seed, search_lie, witness_case
from fairalloc.analysis.properties import check_one, check_work, searched
from fairalloc.analysis.results import Lie, PropertyResult
from fairalloc.core import registry
from fairalloc.core.queues import request
from fairalloc.core.tolerances import PROPERTY
from fairalloc.core.units import readable
from fairalloc.core.vocabulary import property_names


@dataclass
class QueueLie:
    """The best lie found for one queue, with the bundles it compares."""

    queue: str
    lie: Lie
    request: dict[str, float]
    truthful: dict[str, float]
    manipulated: dict[str, float]
    why: str

    @property
    def profitable(self) -> bool:
        return self.lie.profitable

    def to_dict(self) -> dict:
        report = (self.lie.shrunk or self.lie).reported_demand
        return {
            "profitable": self.profitable,
            "request": self.request,
            "report": dict(report),
            "truthful": self.truthful,
            "manipulated": self.manipulated,
            "gain": self.lie.gain if self.profitable else 0.0,
            "evaluations": self.lie.evaluations,
            "why": self.why,
        }


@dataclass
class AuditReport:
    """Every property's result and every active queue's best lie."""

    policy: str
    case: str
    properties: dict[str, PropertyResult]
    lies: dict[str, QueueLie]
    witness: dict | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        return {
            "policy": self.policy,
            "case": self.case,
            "properties": {
                name: {
                    "holds": r.holds if r.applicable else None,
                    "applicable": r.applicable,
                    "why": _property_words(r),
                    "witness": r.witness.to_dict() if r.witness is not None else None,
                }
                for name, r in self.properties.items()
            },
            "manipulation": {q: lie.to_dict() for q, lie in self.lies.items()},
        }


def _property_words(r: PropertyResult) -> str:
    if not r.applicable:
        return r.note or "does not apply here"
    if r.holds:
        return r.note or "holds"
    return r.witness.describe() if r.witness is not None else (r.note or "violated")


def audit(case, policy: str | None = None, *, budget: int = 300, seed: int = 0, method: str = "auto", progress=None):
    """Audit ``policy`` (default: the case's ``policy``, else ``drf``) on ``case`` (a loaded case or
    an instance); ``budget`` is the verifier's evaluations per queue; ``progress(step, steps)`` is
    called before each step (a property's check, then a queue's search) with the number of steps.

    Each active queue's lie is searched once, within ``budget``: strategy-proofness is read off
    those searches (the check searched every queue with the same seed and budget, and the audit
    then searched them all again), so the work is the properties' plus one search per queue."""
    inst = getattr(case, "instance", case)
    units = dict(getattr(case, "units", {}) or {})
    mech = registry.get(policy or getattr(case, "policy", None) or "drf")
    check_seed(seed)
    check_budget(budget)
    active = np.asarray(request(inst).any(axis=1), dtype=bool)
    names = property_names(None, mech.kind == "dynamic", queues=inst.queues is not None)
    if mech.kind != "dynamic":
        check_work(names, inst, budget=budget)  # every refusal before any work
    # a static policy's strategy-proofness is the queues' searches below (none active: not applicable)
    from_searches = mech.kind != "dynamic" and "strategy_proofness" in names and bool(active.any())
    steps = len(names) - from_searches + int(active.sum())
    step = _counter(progress, steps)
    properties = {}
    for name in names:
        if name != "strategy_proofness" or not from_searches:
            step(name)
            properties[name] = check_one(mech, inst, name, method=method, budget=budget, seed=seed, checked=True)
    truthful = np.asarray(mech.allocate(inst, method).bundles, dtype=float)
    hints = case_hints(inst)
    start = time.perf_counter()
    found: list[Lie] = []
    lies: dict[str, QueueLie] = {}
    for i, q in enumerate(inst.users):
        if active[i]:
            step(q)
        lie = search_lie(mech, inst, q, budget=budget, seed=seed, method=method, hints=hints.get(q, ()))
        found.append(lie)  # an idle queue's: at once, it runs nothing whatever it reports
        if not active[i]:
            continue
        # a queue reports its request; a paper case's user her demand per task
        lies[q] = _queue_lie(mech, inst, i, lie, truthful, inst.demand[i], units, method)
    if from_searches:
        result = VerifyResult(mech.name, inst.name, found, time.perf_counter() - start, seed, budget)
        properties["strategy_proofness"] = searched(result)
    properties = {n: properties[n] for n in names if n in properties}  # the check's order
    properties = {n: r for n, r in properties.items() if n != "strategy_proofness" or r.applicable}
    best = max((x for x in lies.values() if x.profitable), key=lambda x: x.lie.gain, default=None)
    witness = witness_case(inst, mech.name, best.lie) if best is not None else None
    return AuditReport(mech.name, inst.name, properties, lies, witness)


def _counter(progress, steps: int):
    """``step(name)``: tells ``progress`` (if any) that step ``name`` of ``steps`` starts."""

    def step(name: str) -> None:
        if progress is not None:
            progress(name, steps)

    return step


def _queue_lie(mech, inst, i: int, lie: Lie, truthful: np.ndarray, req: np.ndarray, units, method) -> QueueLie:
    res = list(inst.resources)
    mapping = lambda row: {r: float(v) for r, v in zip(res, row)}
    if not lie.profitable:
        words = (
            f"{inst.users[i]}: no profitable misreport found in {lie.evaluations} evaluations (a search, not a proof)"
        )
        return QueueLie(inst.users[i], lie, mapping(req), mapping(truthful[i]), mapping(truthful[i]), words)
    report = np.array([(lie.shrunk or lie).reported_demand.get(r, 0.0) for r in res])
    lied = np.asarray(mech.allocate(inst.with_demand(i, report), method).bundles, dtype=float)[i]
    words = _lie_words(inst.users[i], res, truthful[i], lied, req, report, units)
    words += f" (its true request served {lie.truthful_tasks:.4g} -> {(lie.shrunk or lie).manipulated_tasks:.4g})"
    return QueueLie(inst.users[i], lie, mapping(req), mapping(truthful[i]), mapping(lied), words)


def _lie_words(queue, res, truthful, lied, req, report, units) -> str:
    """ "team-a raises its entitlement of cpu from 20 to 34 by asking for 200 cpu instead of 30"."""
    amount = lambda j, v: readable(v, units.get(res[j]))
    with np.errstate(divide="ignore", invalid="ignore"):
        growth = np.where(lied > truthful + PROPERTY, (lied - truthful) / np.maximum(truthful, 1e-300), -np.inf)
        change = np.abs(report - req) / np.maximum(req, report).clip(min=1e-300)
    j, k = int(np.argmax(growth)), int(np.argmax(change))
    verb = "inflating" if report[k] > req[k] else "shrinking"
    return (
        f"{queue} raises its entitlement of {res[j]} from {amount(j, truthful[j])} to {amount(j, lied[j])} "
        f"by {verb} its request of {res[k]} from {amount(k, req[k])} to {amount(k, report[k])}"
    )
