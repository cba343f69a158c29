"""``fairalloc cases`` and ``reproduce``: the case library, one case for a reader, the papers' numbers."""

from __future__ import annotations

import textwrap

import click
import yaml
from tabulate import tabulate

from fairalloc.cli.options import format_option, load_case
from fairalloc.cli.render import emit, json_doc
from fairalloc.core.allocation import _fmt
from fairalloc.io.cases import bundled_cases


@click.command("cases")
@click.argument("name", required=False)
@format_option("json")
def list_cases(name, fmt):
    """List the bundled cases (papers' worked examples and counterexamples), or show one.

    \b
    Example:
      fairalloc cases                           every bundled case, with its source
      fairalloc cases drf-theorem-4             one case: source, users, variants, expectations, errata
      fairalloc cases my.yaml --format json     a case file as validated data

    NAME is a bundled case name or a YAML file.
    """
    if name is not None:
        case = load_case(name)
        emit(json_doc(case.raw) if fmt == "json" else case_view(case))
        return
    rows = []
    for name in bundled_cases():
        case = load_case(name)
        rows.append(
            {
                "name": name,
                "users": case.instance.n,
                "resources": ", ".join(case.instance.resources),
                "source": case.source or "",
            }
        )
    if fmt == "json":
        emit(json_doc(rows))
    else:
        emit(
            tabulate(
                [list(r.values()) for r in rows],
                list(rows[0]),
                disable_numparse=True,
                maxcolwidths=[None, None, 16, 72],
            )
            + "\n\n'fairalloc cases NAME' shows one case."
        )


def case_view(case) -> str:
    """One case for a reader: where it comes from, the instance, and everything it claims."""
    inst, raw = case.instance, case.raw
    parts = [f"{case.name}", f"source: {case.source or '(none)'}"]
    if case.description:
        parts.append(textwrap.fill(" ".join(case.description.split()), 100))
    users = raw["users"]
    extra = [k for k in ("weight", "max_tasks", "shared", "group") if any(k in (u or {}) for u in users.values())]
    rows = [
        [u, *(_fmt(v, 6) for v in inst.demand[i]), *(one_line(users[u].get(k, "")) for k in extra)]
        for i, u in enumerate(inst.users)
    ]
    parts += [
        "",
        tabulate(rows, ["user", *(f"{r} per task" for r in inst.resources), *extra], disable_numparse=True),
        "capacity: " + ", ".join(f"{r} {_fmt(c, 6)}" for r, c in zip(inst.resources, inst.capacity)),
    ]
    for title, lines in _claims(raw):
        if lines:
            parts += ["", f"{title}:", *(f"  - {line}" for line in lines)]
    return "\n".join(parts)


def _claims(raw) -> list[tuple[str, list[str]]]:
    """The sections of a case after its instance: groups, variants, expectations, claims, errata."""

    def variant(v) -> str:
        return f"{v['name']}: " + (v.get("description") or one_line({k: w for k, w in v.items() if k != "name"}))

    return [
        ("groups", [f"{g}: {one_line(spec)}" for g, spec in raw.get("groups", {}).items()]),
        ("variants", [variant(v) for v in raw.get("variants", [])]),
        ("expectations", [one_line(e) for e in raw.get("expect", [])]),
        ("claims", [one_line(c) for c in raw.get("claims", [])]),
        ("errata", [f"{e['where']}: says {e['says']}; true value {e['value']}" for e in raw.get("errata", [])]),
    ]


def one_line(value) -> str:
    """A YAML value on one line, as the case file writes it."""
    if isinstance(value, str):
        return value
    return yaml.safe_dump(value, default_flow_style=True, width=10**6, sort_keys=False).strip()


@click.command()
@click.argument("cases", nargs=-1)
@format_option("json")
@click.option(
    "--all-rows/--mismatches-only",
    default=True,
    show_default=True,
    help="Show every row, or only the rows that did not reproduce.",
)
def reproduce(cases, fmt, all_rows):
    """Reproduce the papers' numbers and claims from the case library (default: every bundled case).

    \b
    Example:
      fairalloc reproduce                       the whole bundled library
      fairalloc reproduce drf-theorem-4 my.yaml
    Every expectation (task counts, prices; exact values such as 100/31 allowed), every claim
    ("ceei violates strategy_proofness for user 1") and every recorded erratum of the source
    texts is one row. Exit code 1 if anything does not reproduce.
    """
    from fairalloc.analysis.reproduce import reproduce as run_reproduce
    from fairalloc.analysis.reproduce import summary, summary_line
    from fairalloc.core.progress import progress_bar

    rows = run_reproduce(
        cases,
        progress=lambda loaded: progress_bar(loaded, unit="case", desc="reproduce", leave=False),
    )
    bad = [r for r in rows if r.status == "MISMATCH"]
    if fmt == "json":
        emit(json_doc({"rows": [r.to_dict() for r in rows], **summary(rows)}))
    else:
        shown = rows if all_rows else bad
        emit(
            tabulate(
                [[r.case, r.claim, r.source, r.computed, r.status] for r in shown],
                ["case", "claim", "source value", "computed value", "status"],
                disable_numparse=True,
                maxcolwidths=[None, 52, 30, 52, None],
            )
        )
        emit("\n" + summary_line(rows))
    if bad:
        raise click.exceptions.Exit(1)
