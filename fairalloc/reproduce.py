"""Reproduce a case library: solve every variant, check every expectation and claim.

Each case may carry (see :mod:`fairalloc.cases`):

* ``expect``: task counts (and prices) a mechanism must compute on the case or on a variant,
  exact values such as ``100/31`` allowed, with a relative tolerance;
* ``claims``: statements for the properties engine, ``"ceei violates strategy_proofness for user
  1"``, ``"drf satisfies sharing_incentive on variant lie"``;
* ``errata``: where a source text states a different number, what it says and the true value.

:func:`reproduce` returns one row per check; a row's status is ``ok``, ``MISMATCH`` or
``erratum`` (a recorded slip of the source, for information).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction

from .cases import Case, bundled_cases, load_case, parse_exact
from .errors import FairallocError
from .properties import check_property, describe_witness
from .registry import get


@dataclass
class Row:
    case: str
    kind: str           # expect | claim | erratum
    claim: str
    source: str         # the value the case states (recomputed), or what the source text says
    computed: str
    status: str         # ok | MISMATCH | erratum

    def to_dict(self) -> dict:
        return asdict(self)


def _show(v) -> str:
    if isinstance(v, Fraction):
        return str(v) if v.denominator == 1 else f"{v} = {float(v):.6g}"
    return f"{v:.10g}"


def _expectation_rows(case: Case) -> list[Row]:
    rows = []
    for e in case.expect:
        alloc = get(e.mechanism).allocate(case.scenario(e.variant), e.method)
        on = f" on {e.variant}" if e.variant else ""
        checks = [("tasks", u, v, alloc[u]) for u, v in e.tasks.items()]
        for step in e.steps:
            if alloc.history is None:
                rows.append(Row(case.name, "expect", f"{e.mechanism}{on}: step {step.k}", "steps",
                                "not a dynamic mechanism", "MISMATCH"))
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
            index = {r: j for j, r in enumerate(alloc.instance.resources)}
            checks += [("price", r, v, float(alloc.prices[index[r]])) for r, v in e.prices.items()]
        for what, name, expected, computed in checks:
            target = parse_exact(expected, "expect")
            ok = abs(computed - float(target)) <= e.tolerance * max(1.0, abs(float(target)))
            rows.append(Row(case.name, "expect", f"{e.mechanism}{on}: {what} {name}".rstrip(), _show(target),
                            f"{computed:.10g}", "ok" if ok else "MISMATCH"))
    return rows


def _claim_rows(case: Case) -> list[Row]:
    rows = []
    for c in case.claims:
        scenario = case if c.variant is None else case.scenario(c.variant)
        result = check_property(c.mechanism, scenario, c.property, budget=c.budget, user=c.user)
        verb = "satisfies" if c.holds else "violates"
        text = f"{c.mechanism} {verb} {c.property}" + (f" for user {c.user}" if c.user else "") + \
            (f" on {c.variant}" if c.variant else "")
        if not result.applicable:
            computed, ok = f"n/a ({result.note})", False
        elif result.holds:
            computed, ok = "satisfies" + (f" (margin {result.margin:.4g})" if result.margin is not None else ""), \
                c.holds
        else:
            computed = "violates: " + describe_witness(c.property, result.witness)
            ok = not c.holds and (c.user is None or str((result.witness or {}).get("user")) == c.user)
        rows.append(Row(case.name, "claim", text, verb, computed, "ok" if ok else "MISMATCH"))
    return rows


def _errata_rows(case: Case) -> list[Row]:
    return [Row(case.name, "erratum", e.where + (f" ({e.note})" if e.note else ""), f"says {e.says}", e.value,
                "erratum") for e in case.errata]


def reproduce_case(case: Case) -> list[Row]:
    """Every expectation, claim and erratum of one case, as rows."""
    return _expectation_rows(case) + _claim_rows(case) + _errata_rows(case)


def reproduce(cases=None, progress=None) -> list[Row]:
    """Rows for the given cases (paths or bundled names; default: the whole bundled library)."""
    names = list(cases) if cases else bundled_cases()
    loaded = [load_case(c) for c in names]                       # bad cases fail before any work
    rows: list[Row] = []
    for case in (progress(loaded) if progress else loaded):
        rows += reproduce_case(case)
    if not rows:
        raise FairallocError("reproduce: the cases hold no expectations, claims or errata")
    return rows
