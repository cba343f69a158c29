"""The ``fairalloc`` command line.

Every user error (bad case, unknown name, solver failure) is one line on stderr and exit code 2;
``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import click
import yaml
from tabulate import tabulate

from . import registry
from .allocation import _fmt
from .cases import bundled_cases, load_case
from .errors import FairallocError

FORMATS = click.Choice(["table", "json", "yaml", "csv"])


def _mechanisms(spec: str | None, default: list[str]) -> list[str]:
    names = default if not spec else [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise FairallocError("--mechanism: give at least one mechanism name")
    for name in names:
        registry.get(name)          # unknown names fail here, before any solving
    return names


def _emit(text: str) -> None:
    click.echo(text.rstrip("\n"))


def _csv(allocations) -> str:
    buf = io.StringIO()
    resources = allocations[0].instance.resources
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["mechanism", "user", "tasks", "dominant_share", *resources])
    for a in allocations:
        for i, u in enumerate(a.instance.users):
            writer.writerow([a.mechanism, u, repr(float(a.tasks[i])), repr(float(a.dominant_shares[i])),
                             *(repr(float(v)) for v in a.bundles[i])])
    return buf.getvalue()


def _structured(allocations, fmt: str, exact: bool) -> str:
    data = [a.to_dict(exact=exact) for a in allocations]
    data = data[0] if len(data) == 1 else data
    if fmt == "json":
        return json.dumps(data, indent=2)
    return yaml.safe_dump(data, sort_keys=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="fairalloc")
@click.option("--debug", is_flag=True, help="Show full tracebacks instead of one-line errors.")
@click.pass_context
def cli(ctx, debug):
    """Multi-resource fair allocation: solve, compare and inspect DRF, Asset Fairness, CEEI, ...

    \b
    Quick start:
      fairalloc cases                           list the bundled paper cases
      fairalloc compare drf-section-4-1         DRF, Asset, CEEI, utilitarian side by side
      fairalloc solve drf-section-4-1 -m ceei --exact
      fairalloc model drf-section-4-1 -m drf --write drf.lp

    Every mechanism is a declarative program (a pulp LP or a cvxpy convex program) with a fast
    exact algorithm beside it where one exists. Choose with --method: fast, program, or auto
    (the fast path when there is one).
    """
    ctx.ensure_object(dict)["debug"] = debug


@cli.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanisms", metavar="M[,M...]",
              help="Mechanisms, comma-separated (default: drf). See 'fairalloc mechanisms'.")
@click.option("--method", type=click.Choice(registry.METHODS), default="auto", show_default=True,
              help="fast: the exact fast algorithm; program: the declarative LP / convex program.")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True, help="Output format.")
@click.option("--exact", is_flag=True, help="Also show task counts as verified exact fractions.")
def solve(case, mechanisms, method, fmt, exact):
    """Allocate CASE with one or more mechanisms.

    \b
    Example:
      fairalloc solve drf-section-4-1 -m drf,asset,ceei --exact
      fairalloc solve my.yaml -m ceei --method program --format json


    CASE is a YAML file or the name of a bundled case (list them with 'fairalloc cases').
    """
    names = _mechanisms(mechanisms, ["drf"])
    instance = load_case(case).instance
    allocations = [registry.get(n).allocate(instance, method) for n in names]
    if fmt == "table":
        _emit("\n\n".join(a.table(exact=exact) for a in allocations))
    elif fmt == "csv":
        _emit(_csv(allocations))
    else:
        _emit(_structured(allocations, fmt, exact))


@cli.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanisms", metavar="M[,M...]",
              help="Mechanisms to compare (default: every static mechanism).")
@click.option("--method", type=click.Choice(registry.METHODS), default="auto", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
@click.option("--exact", is_flag=True, help="Show verified exact fractions for task counts.")
def compare(case, mechanisms, method, fmt, exact):
    """Every static mechanism side by side on CASE (Figure 4 of the DRF paper, in numbers).

    Shows task counts with dominant shares, each user's bundle, and utilisation per resource.

    CASE is a YAML file or the name of a bundled case (list them with 'fairalloc cases').
    """
    names = _mechanisms(mechanisms, registry.available("static"))
    instance = load_case(case).instance
    allocs = [registry.get(n).allocate(instance, method) for n in names]
    if fmt != "table":
        _emit(_structured(allocs, fmt, exact))
        return

    def tasks_cell(a, i):
        shown = _fmt(a.tasks[i], 4)
        fraction = str(a.exact[i]) if exact and a.exact is not None else shown
        return f"{shown}{'' if fraction == shown else ' = ' + fraction} ({_fmt(a.dominant_shares[i], 4)})"
    rows = [[u, *(tasks_cell(a, i) for a in allocs)] for i, u in enumerate(instance.users)]
    parts = [f"{instance.name}: tasks (dominant share)", tabulate(rows, ["user", *names], disable_numparse=True)]
    bundle_rows = [[u, a.mechanism, *(_fmt(v, 4) for v in a.bundles[i])]
                   for i, u in enumerate(instance.users) for a in allocs]
    parts += ["", "bundles", tabulate(bundle_rows, ["user", "mechanism", *instance.resources], disable_numparse=True)]
    util_rows = [[r, _fmt(instance.capacity[j], 4), *(f"{a.utilization[j]:.1%}" for a in allocs)]
                 for j, r in enumerate(instance.resources)]
    parts += ["", "utilisation", tabulate(util_rows, ["resource", "capacity", *names], disable_numparse=True)]
    _emit("\n".join(parts))


@cli.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanism", default="drf", show_default=True, help="Mechanism.")
@click.option("--write", "target", type=click.Path(dir_okay=False, path_type=Path),
              help="Export to FILE: .lp or .mps (LPs; one file per round for sequences) or .txt.")
def model(case, mechanism, target):
    """Show or export the declarative program of a mechanism on CASE.

    Progressive-filling mechanisms (drf, asset) are a sequence of LPs, one per round; the rounds
    depend on the previous solutions, so the program is solved to list them all.

    CASE is a YAML file or the name of a bundled case (list them with 'fairalloc cases').
    """
    instance = load_case(case).instance
    program = registry.get(mechanism).program(instance)
    if target is not None:
        program.check_target(target)
    program.solve()
    if target is None:
        _emit(program.text())
        return
    for path in program.write(target):
        click.echo(f"wrote {path}")


@cli.command("cases")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def list_cases(fmt):
    """List the bundled cases (papers' worked examples and counterexamples)."""
    rows = []
    for name in bundled_cases():
        case = load_case(name)
        rows.append({"name": name, "users": case.instance.n, "resources": ", ".join(case.instance.resources),
                     "source": case.source or ""})
    if fmt == "json":
        _emit(json.dumps(rows, indent=2))
    else:
        _emit(tabulate(rows, headers="keys"))


@cli.command("mechanisms")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def list_mechanisms(fmt):
    """List registered mechanisms (built-ins and plug-ins) and their methods."""
    rows = []
    for name in registry.available():
        mech = registry.get(name)
        rows.append({"name": name, "kind": mech.kind, "fast path": "yes" if mech.has_fast else "no",
                     "summary": mech.summary})
    _emit(json.dumps(rows, indent=2) if fmt == "json" else tabulate(rows, headers="keys"))


def main(argv=None) -> int:
    """Entry point: one-line errors with exit code 2 (``--debug`` for tracebacks)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    try:
        cli.main(args=argv, prog_name="fairalloc", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("fairalloc: interrupted", err=True)
        return 130
    except click.UsageError as exc:
        if debug:
            raise
        click.echo(f"fairalloc: {exc.format_message()}", err=True)
        return 2
    except FairallocError as exc:
        if debug:
            raise
        click.echo(f"fairalloc: {exc}", err=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
