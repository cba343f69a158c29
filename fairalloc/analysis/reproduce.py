"""Reproduce a case library: solve every variant, check every expectation and claim.

Each case may carry (see :mod:`fairalloc.io.cases`):

* ``expect``: task counts (and prices) a mechanism must compute on the case or on a variant,
  exact values such as ``100/31`` allowed, with a relative tolerance;
* ``claims``: statements for the properties engine, ``"ceei violates strategy_proofness for user
  1"``, ``"drf satisfies sharing_incentive on variant lie"``; a claim with ``refutes: WHERE`` says
  that a source claims the property holds and this case is the counterexample;
* ``errata``: where a source text states a different number, what it says and the true value;
* ``admitted`` / ``preempted`` (with the case's ``cycle``): the jobs a production policy's scheduling
  cycle admits and preempts (:func:`fairalloc.io.jobs.cycle_decisions`), compared as sets; a
  mismatch says which jobs are missing and which were not expected.

:func:`reproduce` returns one row per check; a row's status is ``ok``, ``MISMATCH``, ``erratum``
(a recorded slip of the source, for information) or ``claim does not hold`` (a source's claim,
refuted by the case's counterexample; ``MISMATCH`` if the counterexample fails to refute it).
Expectations compare relatively: ``|computed - expected| <= tolerance * |expected|`` plus an
``abs_tolerance`` only where the expectation states one, so a 1 % error is caught at any scale.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction

from fairalloc.analysis.properties import check_property
from fairalloc.analysis.results import describe_witness
from fairalloc.core.errors import FairallocError
from fairalloc.core.registry import get
from fairalloc.engines.online import Admit, Preempt
from fairalloc.io.cases import Case, bundled_cases, load_case, parse_exact
from fairalloc.io.jobs import cycle_decisions

#: the status of a source's claim that this case refutes (with its counterexample)
REFUTED = "claim does not hold"


@dataclass
class Row:
    case: str
    kind: str  # expect | claim | refuted claim | erratum
    claim: str
    source: str  # the value the case states (recomputed), or what the source text says
    computed: str
    status: str  # ok | MISMATCH | erratum | claim does not hold

    def to_dict(self) -> dict:
        return asdict(self)


def _show(v) -> str:
    if isinstance(v, Fraction):
        return str(v) if v.denominator == 1 else f"{v} = {float(v):.10g}"
    return f"{v:.10g}"


def matches(computed: float, expected, tolerance: float, abs_tolerance: float = 0.0) -> bool:
    """``|computed - expected| <= tolerance * |expected| + abs_tolerance``: relative, so a 1 % error
    is caught at every magnitude (below 1 too); absolute only where an expectation states it."""
    return abs(computed - float(expected)) <= tolerance * abs(float(expected)) + abs_tolerance


def _expectation_rows(case: Case) -> list[Row]:
    rows: list[Row] = []
    for e in case.expect:
        on = f" on {e.variant}" if e.variant else ""
        checks = _usage_checks(case, e, on, rows)
        rows += _cycle_rows(case, e)
        if not (e.tasks or e.prices or e.steps or e.allocation):
            rows += _rows(case, e, on, checks)
            continue
        alloc = get(e.mechanism).allocate(case.scenario(e.variant), e.method)
        checks += [("tasks", u, v, alloc[u]) for u, v in e.tasks.items()]
        index = {r: j for j, r in enumerate(alloc.instance.resources)}
        checks += [
            (f"allocation {u}", r, v, float(alloc.bundles[alloc.instance.user_index(u), index[r]]))
            for u, row in e.allocation.items()
            for r, v in row.items()
        ]
        for step in e.steps:
            if alloc.history is None:
                rows.append(
                    Row(
                        case.name,
                        "expect",
                        f"{e.mechanism}{on}: step {step.k}",
                        "steps",
                        "not a dynamic mechanism",
                        "MISMATCH",
                    )
                )
                continue
            x = alloc.history.x_at(step.k) / alloc.history.mu[: step.k]
            users = alloc.instance.users
            if step.M is not None:
                checks.append((f"step {step.k}: M", "", step.M, float(alloc.history.M[step.k - 1])))
            checks += [(f"step {step.k}: tasks", u, v, float(x[users.index(u)])) for u, v in step.tasks.items()]
        if e.prices:
            if alloc.prices is None:
                rows.append(Row(case.name, "expect", f"{e.mechanism}{on}: prices", "prices", "no prices", "MISMATCH"))
                continue
            checks += [("price", r, v, float(alloc.prices[index[r]])) for r, v in e.prices.items()]
        rows += _rows(case, e, on, checks)
    return rows


def _rows(case: Case, e, on: str, checks: list) -> list[Row]:
    rows = []
    for what, name, expected, computed in checks:
        target = parse_exact(expected, "expect")
        ok = matches(computed, target, e.tolerance, e.abs_tolerance)
        rows.append(
            Row(
                case.name,
                "expect",
                f"{e.mechanism}{on}: {what} {name}".rstrip(),
                _show(target),
                f"{computed:.10g}",
                "ok" if ok else "MISMATCH",
            )
        )
    return rows


def _usage_checks(case: Case, e, on: str, rows: list[Row]) -> list:
    """A production policy's shares of usage become checks; its order is one row of its own."""
    if not e.shares and e.order is None:
        return []
    policy = get(e.mechanism)
    instance = case.scenario(e.variant)
    checks = []
    if e.shares:
        shares = policy.shares(instance)  # type: ignore[attr-defined]  # checked when the case loaded
        checks = [("share", u, v, float(shares[u])) for u, v in e.shares.items()]
    if e.order is not None:
        order = list(policy.order(instance))  # type: ignore[attr-defined]
        want = [str(u) for u in e.order]
        ok = order[: len(want)] == want if len(want) < len(order) else order == want
        rows.append(
            Row(case.name, "expect", f"{e.mechanism}{on}: order", ", ".join(want), ", ".join(order), _status(ok))
        )
    return checks


def _cycle_rows(case: Case, e) -> list[Row]:
    """A production policy's scheduling cycle (the case's ``cycle``): the jobs it admits and those
    it preempts, each compared as a set with the expectation (order is the policy's, not checked)."""
    if e.admitted is None and e.preempted is None:
        return []
    decisions = cycle_decisions(case, e.mechanism)
    made = {
        "admitted": {d.job for d in decisions if isinstance(d, Admit)},
        "preempted": {d.job for d in decisions if isinstance(d, Preempt)},
    }
    rows = []
    for what in ("admitted", "preempted"):
        want = getattr(e, what)
        if want is None:
            continue
        want, got = {str(j) for j in want}, made[what]
        shown = ", ".join(sorted(got)) or "none"
        if want != got:
            missing, extra = sorted(want - got), sorted(got - want)
            shown += (
                " ("
                + "; ".join(
                    part
                    for part in (
                        f"missing {', '.join(missing)}" if missing else "",
                        f"not expected {', '.join(extra)}" if extra else "",
                    )
                    if part
                )
                + ")"
            )
        rows.append(
            Row(
                case.name,
                "expect",
                f"{e.mechanism}: cycle {what}",
                ", ".join(sorted(want)) or "none",
                shown,
                _status(want == got),
            )
        )
    return rows


def _status(ok: bool) -> str:
    return "ok" if ok else "MISMATCH"


def _claim_rows(case: Case) -> list[Row]:
    rows = []
    for c in case.claims:
        scenario = case if c.variant is None else case.scenario(c.variant)
        result = check_property(c.mechanism, scenario, c.property, budget=c.budget, user=c.user)
        verb = "satisfies" if c.holds else "violates"
        scope = (f" for user {c.user}" if c.user else "") + (f" on {c.variant}" if c.variant else "")
        text = f"{c.mechanism} {verb} {c.property}{scope}"
        if not result.applicable:
            computed, ok = f"n/a ({result.note})", False
        elif result.holds:
            computed, ok = (
                "satisfies" + (f" (margin {result.margin:.4g})" if result.margin is not None else ""),
                c.holds,
            )
        else:
            computed = "violates: " + describe_witness(c.property, result.witness)
            ok = not c.holds and (c.user is None or str(getattr(result.witness, "user", None)) == c.user)
        if c.refutes is not None:  # a source's claim, and this case its counterexample
            rows.append(
                Row(
                    case.name,
                    "refuted claim",
                    f"{c.mechanism} satisfies {c.property}{scope}",
                    f"{c.refutes}: holds",
                    computed,
                    REFUTED if ok else "MISMATCH",
                )
            )
            continue
        rows.append(Row(case.name, "claim", text, verb, computed, "ok" if ok else "MISMATCH"))
    return rows


def _errata_rows(case: Case) -> list[Row]:
    return [
        Row(case.name, "erratum", e.where + (f" ({e.note})" if e.note else ""), f"says {e.says}", e.value, "erratum")
        for e in case.errata
    ]


def reproduce_case(case: Case) -> list[Row]:
    """Every expectation, claim and erratum of one case, as rows."""
    return _expectation_rows(case) + _claim_rows(case) + _errata_rows(case)


def summary(rows: list[Row]) -> dict:
    """Counts of a reproduction: rows, cases, reproduced, errata, refuted claims, mismatches."""
    count = {status: sum(r.status == status for r in rows) for status in ("MISMATCH", "erratum", REFUTED)}
    return {
        "checked": len(rows),
        "cases": len({r.case for r in rows}),
        "reproduced": len(rows) - count["MISMATCH"],
        "errata": count["erratum"],
        "refuted_claims": count[REFUTED],
        "mismatches": count["MISMATCH"],
    }


def summary_line(rows: list[Row]) -> str:
    """``255 rows from 22 cases: 255 reproduced (7 errata of the sources, 1 source claim refuted), 0 mismatches``"""
    s = summary(rows)
    return (
        f"{_count(s['checked'], 'row', 'rows')} from {_count(s['cases'], 'case', 'cases')}: "
        f"{s['reproduced']} reproduced ({_count(s['errata'], 'erratum', 'errata')} of the sources, "
        f"{_count(s['refuted_claims'], 'source claim', 'source claims')} refuted), "
        f"{_count(s['mismatches'], 'mismatch', 'mismatches')}"
    )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def reproduce(cases=None, progress=None) -> list[Row]:
    """Rows for the given cases (paths or bundled names; default: the whole bundled library)."""
    names = list(cases) if cases else bundled_cases()
    loaded = [load_case(c) for c in names]  # bad cases fail before any work
    rows: list[Row] = []
    for case in progress(loaded) if progress else loaded:
        rows += reproduce_case(case)
    if not rows:
        raise FairallocError("reproduce: the cases hold no expectations, claims or errata")
    return rows
