"""What the explorer computes: one function per answer, each a function of its request alone.

Every view takes the request's JSON body and a ``progress(done, total, what)`` callable, and
returns a JSON-able dict.  The bodies are validated first (:func:`validated`: pydantic models,
one line naming the field for any mistake), the case form by :func:`~fairalloc.explorer.form.case_from_page`.
The views run in the explorer's worker processes (:mod:`fairalloc.explorer.workers`), which is
why they are plain functions of plain data.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fairalloc.core import registry
from fairalloc.core.errors import CaseError, FairallocError, excerpt, one_line, unknown
from fairalloc.core.instance import Instance
from fairalloc.core.limits import MAX_EXPLORER_BUDGET, MAX_EXPLORER_MECHANISMS
from fairalloc.engines.online import replays_jobs
from fairalloc.explorer.form import case_from_page, check_workload_jobs
from fairalloc.io.cases import Case

#: mechanisms the page ticks on a new case without a policy (hierarchies add hdrf, queues hdrf-fluid)
DEFAULT_MECHANISMS = ("drf", "asset", "ceei")
ALPHA_FAMILIES = {"shares": "alpha-fair", "tasks": "alpha-tasks"}
#: the mechanisms the frontier marks unless the request names others
REFERENCES = ("drf", "ceei", "asset", "utilitarian")


# -- requests ---------------------------------------------------------------------------------------
class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    case: dict[str, Any]
    #: a variant of the case (its ``variants``) to compute on instead of the case itself
    variant: str | None = None


Budget = Annotated[int, Field(ge=1, le=MAX_EXPLORER_BUDGET)]
Alpha = Annotated[float, Field(ge=0)] | Literal["inf"] | None


class SolveOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    mechanisms: Annotated[list[str], Field(max_length=MAX_EXPLORER_MECHANISMS)] = list(DEFAULT_MECHANISMS)
    alpha: Alpha = None
    on: Literal["shares", "tasks"] = "shares"
    #: recover exact values (fractions) where the mechanism certifies them: the page asks for them
    #: on small cases only, for recovering them costs most of a solve on 50 users
    exact: bool = True


class SolveRequest(_Request, SolveOptions):
    pass


class CheckRequest(_Request):
    #: and if the case is valid, its allocations (what ``solve`` answers): one request per edit
    solve: SolveOptions | None = None


class PropertiesRequest(_Request):
    mechanism: str = "drf"
    budget: Budget = 150


class FrontierRequest(_Request):
    alpha: Alpha = None
    on: Literal["shares", "tasks"] = "shares"
    #: the mechanisms marked beside the family (static ones; dynamic ones are left out)
    mechanisms: Annotated[list[str], Field(max_length=MAX_EXPLORER_MECHANISMS)] = list(REFERENCES)


class ProbeRequest(_Request):
    mechanism: str = "drf"
    user: str
    report: dict[str, Any] = {}
    search: bool = False
    budget: Budget = 300


class PlaybackRequest(_Request):
    mechanism: str = "dmfa-srq"


class TreeRequest(_Request):
    mechanism: str = "hdrf"


class ReplayRequest(_Request):
    #: a job workload as its file's mapping (``jobs``, optionally ``nodes``; :func:`workload_form`)
    workload: dict[str, Any]
    workload_name: str = "workload"
    #: a scheduler as ``simulate --case`` names it; left out, the case's policy (else drf)
    scheduler: str | None = None


def validated(model: type[BaseModel], body: Any) -> Any:
    """The request as ``model``; a mistake is one :class:`FairallocError` line naming the field."""
    if not isinstance(body, dict):
        raise FairallocError(f"request: the body must be a JSON object (got {excerpt(body)})")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        err = exc.errors()[0]
        # union branches ('constrained-float', "literal['inf']") are pydantic's, not the request's
        where = ".".join(str(p) for p in err["loc"] if isinstance(p, int) or re.fullmatch(r"\w+", p)) or "request"
        if err["type"] == "extra_forbidden":
            return _refuse(f"{where}: {unknown('field', err['loc'][-1], model.model_fields)}")
        got = f" (got {excerpt(err['input'])})" if "input" in err else ""
        return _refuse(f"{where}: {one_line(err['msg'][0].lower() + err['msg'][1:], 200)}{got}")


def _refuse(message: str):
    raise FairallocError(message)


def scenario(request: _Request) -> tuple[Case, Instance]:
    """The request's case, and the instance to compute on (the case's, or its named variant's)."""
    case = case_from_page(request.case)
    if request.variant is None:
        return case, case.instance
    if request.variant not in case.variants:
        raise CaseError(f"variant: {unknown('variant', request.variant, case.variants)}")
    return case, case.variants[request.variant]


def _mechanism(name: str, kind: str | None = None) -> registry.Mechanism:
    mech = registry.get(name)
    if kind is not None and mech.kind != kind:
        raise FairallocError(
            f"mechanism: '{name}' is {mech.kind}; this view takes a {kind} mechanism "
            f"({', '.join(registry.available(kind, families=False))})"
        )
    return mech


def _floats(names, values) -> dict[str, float]:
    return {n: float(v) for n, v in zip(names, values)}


# -- the case: what the page can show of it ------------------------------------------------------------
def check(body, progress=None) -> dict:
    """Whether the case is valid, and if so what it allows: a queue case, a hierarchy, its
    variants, which dynamic mechanisms can play it back (and why not), its policy; and with
    ``solve``, its allocations (``solved``, as :func:`solve` answers).

    An invalid case is an answer here (``valid: false`` and the one-line ``error``), not a failed
    request: the page asks this first, on every edit."""
    request = validated(CheckRequest, body)
    try:
        case, inst = scenario(request)
    except CaseError as exc:
        return {"valid": False, "error": one_line(exc)}
    for name in [] if request.solve is None else request.solve.mechanisms:
        _mechanism(name)  # an unknown name is the request's mistake, not the case's
    dynamic: dict[str, str | None] = {}
    for name in registry.available("dynamic", families=False):
        try:
            registry.get(name).allocate(inst)
            dynamic[name] = None
        except FairallocError as exc:
            dynamic[name] = one_line(exc)
    return {
        "valid": True,
        "solved": None if request.solve is None else _solved(case, inst, request.solve, request.variant),
        "name": case.name,
        "queues": inst.queues is not None,
        "hierarchy": bool(inst.groups) or (inst.queues is not None and bool(inst.queues.groups)),
        "users": inst.users,
        "resources": inst.resources,
        "variants": list(case.variants),
        "policy": case.policy,
        "dynamic": dynamic,
    }


# -- allocations -----------------------------------------------------------------------------------------
def alpha_member(alpha, on: str) -> str:
    """The alpha-fair family member the slider names (``alpha-fair:2``, ``alpha-tasks:inf``)."""
    text = "inf" if alpha == "inf" or (isinstance(alpha, float) and math.isinf(alpha)) else f"{alpha:g}"
    return f"{ALPHA_FAMILIES[on]}:{text}"


def allocation_view(allocation, units: dict[str, str], exact: bool = True) -> dict:
    """One allocation as the page shows it: tasks (a queue's fraction of its request), dominant
    shares, bundles per resource, prices, exact values where known (and asked for), the measures."""
    from fairalloc.analysis.tradeoff import measures

    inst = allocation.instance
    fractions = allocation.exact if exact else None
    return {
        "mechanism": allocation.mechanism,
        "method": allocation.method,
        "solver": allocation.solver,
        "tasks": _floats(inst.users, allocation.tasks),
        "exact": None if fractions is None else dict(zip(inst.users, map(str, fractions))),
        "dominant_shares": _floats(inst.users, allocation.dominant_shares),
        "bundles": {u: _floats(inst.resources, allocation.bundles[i]) for i, u in enumerate(inst.users)},
        "prices": None if allocation.prices is None else _floats(inst.resources, allocation.prices),
        "measures": measures(allocation),
        "units": units,
    }


def solve(body, progress=None) -> dict:
    """The allocations of the ticked mechanisms (and the slider's alpha-fair member). A mechanism
    that cannot allocate this case says why in its own result; the others are still shown."""
    request = validated(SolveRequest, body)
    case, inst = scenario(request)
    return _solved(case, inst, request, request.variant)


def _solved(case: Case, inst: Instance, options: SolveOptions, variant: str | None) -> dict:
    names = list(dict.fromkeys(options.mechanisms))
    if options.alpha is not None:
        names.append(alpha_member(options.alpha, options.on))
    results = []
    for name in names:
        mech = _mechanism(name)
        if mech.kind == "dynamic":
            results.append({"mechanism": name, "dynamic": True})
            continue
        try:
            results.append(allocation_view(mech.allocate(inst), case.units, options.exact))
        except FairallocError as exc:
            results.append({"mechanism": name, "error": one_line(exc)})
    return {"case": case.name, "variant": variant, "results": results}


# -- properties, frontier, probe ------------------------------------------------------------------------
def properties(body, progress=None) -> dict:
    """Every property of the mechanism on the case, one at a time (``progress`` after each), each
    NO with its witness in words and, where the witness is a changed case, that change as a variant."""
    from fairalloc.analysis.manipulation import check_search
    from fairalloc.analysis.properties import check_one, check_work, property_names
    from fairalloc.analysis.results import witness_variant, witness_words

    request = validated(PropertiesRequest, body)
    _, inst = scenario(request)
    mech = _mechanism(request.mechanism)
    names = property_names(None, mech.kind == "dynamic", queues=inst.queues is not None)
    # every user's lies are searched: bounded before any work (dynamic ones search too)
    check_search(inst, inst.n, request.budget, "strategy_proofness", "MAX_EXPLORER_SEARCH_WORK", hint=_LOWER)
    if mech.kind != "dynamic":
        check_work(names, inst, budget=request.budget)
    out = []
    for k, name in enumerate(names):
        if progress is not None:
            progress(k, len(names), name)
        r = check_one(mech, inst, name, budget=request.budget, checked=True)
        violated = r.applicable and not r.holds
        out.append(
            {
                "name": name,
                "holds": r.holds,
                "applicable": r.applicable,
                "margin": r.margin,
                "note": r.note,
                "text": witness_words(name, r.witness) if violated else r.summary(),
                "witness": r.witness.to_dict() if r.witness else None,
                "variant": witness_variant(name, r.witness) if violated else None,
            }
        )
    return {"mechanism": mech.name, "variant": request.variant, "properties": out}


_LOWER = "lower the verifier budget or use fewer users"


def frontier(body, progress=None) -> dict:
    """The alpha-fair frontier (each point with its allocation), the reference mechanisms, and the
    slider's point; ``progress`` after each point."""
    from fairalloc.analysis.tradeoff import DEFAULT_ALPHAS
    from fairalloc.analysis.tradeoff import frontier as walk

    request = validated(FrontierRequest, body)
    _, inst = scenario(request)
    alphas = list(DEFAULT_ALPHAS)
    current = None if request.alpha is None else (math.inf if request.alpha == "inf" else float(request.alpha))
    if current is not None and current not in alphas:
        alphas.append(current)
    references = [n for n in dict.fromkeys(request.mechanisms) if _mechanism(n).kind == "static"]
    total = len(alphas) + len(references)
    done = []

    def step(point):
        done.append(point)
        if progress is not None:
            progress(len(done), total, point.label)

    points = walk(inst, alphas, on=request.on, references=references, progress=step)
    keys = ("total_dominant_share", "min_dominant_share", "jain_index", "total_tasks")
    return {
        "on": request.on,
        "points": [
            {
                "label": p.label,
                "mechanism": p.mechanism,
                "alpha": None if p.alpha is None else ("inf" if math.isinf(p.alpha) else p.alpha),
                "current": p.alpha is not None and p.alpha == current,
                "tasks": _floats(inst.users, p.allocation.tasks),
                "dominant_shares": _floats(inst.users, p.allocation.dominant_shares),
                **{k: p.metrics[k] for k in keys},
            }
            for p in points
        ],
    }


def probe(body, progress=None) -> dict:
    """One user's reported demand and what it buys her, valued with her true demand; with
    ``search``, the best lie the verifier finds (``progress`` per evaluation)."""
    from fairalloc.analysis.manipulation import best_lie, check_search
    from fairalloc.analysis.manipulation import probe as try_report
    from fairalloc.analysis.results import witness_variant, witness_words
    from fairalloc.io.cases import parse_case

    request = validated(ProbeRequest, body)
    _, inst = scenario(request)
    mech = _mechanism(request.mechanism, "static")
    if request.user not in inst.users:
        raise CaseError(f"user: {unknown('user', request.user, inst.users)}")
    checked = {"resources": {r: 1.0 for r in inst.resources}, "users": {request.user: {"demand": request.report}}}
    try:  # the report is validated as a demand of the case would be, under its own field name
        parse_case(checked, where="report")
    except CaseError as exc:
        raise CaseError(str(exc).replace(f"users.{request.user}.demand", "report", 1)) from None
    lie = try_report(mech, inst, request.user, request.report)
    out = {"mechanism": mech.name, "user": request.user, "variant": request.variant, **lie.to_dict()}
    if request.search:
        check_search(inst, 1, request.budget, "verify", "MAX_EXPLORER_SEARCH_WORK", hint=_LOWER)
        tick = (lambda done, total: progress(done, total, "evaluations")) if progress is not None else None
        best = best_lie(mech, inst, request.user, budget=request.budget, progress=tick)
        out["best"] = {
            **best.to_dict(),
            "profitable": best.profitable,
            "text": witness_words("strategy_proofness", best) if best.profitable else "",
            "variant": witness_variant("strategy_proofness", best) if best.profitable else None,
        }
    return out


# -- dynamic mechanisms and hierarchies ---------------------------------------------------------------
def playback(body, progress=None) -> dict:
    """A dynamic mechanism arrival by arrival: after each arrival, every present user's tasks and
    dominant share, the level ``M`` and the resources that bind."""
    request = validated(PlaybackRequest, body)
    _, inst = scenario(request)
    mech = _mechanism(request.mechanism, "dynamic")
    history = mech.allocate(inst).history
    return {"mechanism": mech.name, "variant": request.variant, "users": inst.users, "steps": history.step_dicts()}


def tree(body, progress=None) -> dict:
    """The hierarchy of the case (groups and users): each node's weight, the share of the cluster
    its weights entitle it to (its weight over its siblings', down the tree), and the dominant
    share the mechanism gives it (a group: its users' together)."""
    request = validated(TreeRequest, body)
    _, inst = scenario(request)
    parent, weight = _hierarchy(inst)
    received: dict[str, float] = dict.fromkeys(parent, 0.0)
    error = None
    try:
        allocation = _mechanism(request.mechanism, "static").allocate(inst)
        for u, share in zip(inst.users, allocation.dominant_shares):
            node: str | None = u
            while node is not None:
                received[node] += float(share)
                node = parent[node]
    except FairallocError as exc:
        error = one_line(exc)
    siblings: dict[str | None, float] = {}
    for node, up in parent.items():
        siblings[up] = siblings.get(up, 0.0) + weight[node]
    entitled: dict[str, float] = {}
    for node in parent:  # down from the root: the parent's entitlement times this node's slice
        chain, up = [], node
        while up is not None:
            chain.append(up)
            up = parent[up]
        entitled[node] = float(np.prod([weight[c] / siblings[parent[c]] for c in chain]))
    return {
        "mechanism": request.mechanism,
        "error": error,
        "nodes": [
            {
                "name": node,
                "parent": parent[node],
                "user": node in inst.users,
                "weight": weight[node],
                "entitled": entitled[node],
                "received": received[node],
            }
            for node in parent
        ],
    }


def _hierarchy(inst: Instance) -> tuple[dict[str, str | None], dict[str, float]]:
    """Parent and weight of every node (users and groups); a flat case is users under the root."""
    if inst.queues is not None:
        q = inst.queues
        nodes = [*q.groups, *inst.users]
        return {n: q.parent[n] for n in nodes}, {n: float(q.weight[n]) for n in nodes}
    if inst.groups:
        return dict(inst.groups["parent"]), {n: float(w) for n, w in inst.groups["weight"].items()}
    weights = np.ones(inst.n) if inst.weights is None else np.asarray(inst.weights, dtype=float).reshape(inst.n, -1)
    return dict.fromkeys(inst.users), {u: float(weights[i].max()) for i, u in enumerate(inst.users)}


# -- a job workload replayed ---------------------------------------------------------------------------
def replay_schedulers() -> list[str]:
    """The schedulers a job workload is replayed under, as ``simulate --case`` takes them: every
    registered mechanism but those that schedule tasks offered node by node (families left out)."""
    names = registry.available(families=False)
    return [n for n in names if replays_jobs(registry.get(n))]


def workload_bounds(body: dict) -> None:
    """Refuse a workload of more jobs than the explorer replays, counted before it is read."""
    workload = body.get("workload")
    jobs = workload.get("jobs") if isinstance(workload, dict) else None
    if isinstance(jobs, dict):
        check_workload_jobs(len(jobs), "workload.jobs")


def replay(body, progress=None) -> dict:
    """The workload replayed against the case under the scheduler: its chart data (the series, the
    preemptions, the per-queue table) and its figures, as ``simulate --report`` draws them;
    ``progress`` as jobs finish."""
    from fairalloc.io.job_workloads import parse_job_workload
    from fairalloc.scheduling.replay_charts import charted_replay
    from fairalloc.scheduling.replay_plotly import figures

    request = validated(ReplayRequest, body)
    workload_bounds(body)
    case, inst = scenario(request)
    mech = _mechanism(request.scheduler or case.policy or "drf")
    try:
        workload = parse_job_workload(request.workload, inst, request.workload_name)
    except CaseError as exc:
        raise CaseError(f"workload {request.workload_name}: {one_line(exc)}") from None
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress(done[0], len(workload.jobs), "jobs")

    _, charts = charted_replay(
        inst, workload.jobs, mech, settings=case.settings, nodes=workload.nodes, workload=workload.name, progress=tick
    )
    return {"scheduler": mech.name, "variant": request.variant, "charts": charts, "figures": figures(charts)}


#: the views by the name the app routes them under
VIEWS = {
    "check": check,
    "solve": solve,
    "properties": properties,
    "frontier": frontier,
    "probe": probe,
    "playback": playback,
    "tree": tree,
    "replay": replay,
}

__all__ = ["VIEWS", "alpha_member", "allocation_view", "replay_schedulers", "validated", "workload_bounds"]
