"""``fairalloc solve``, ``compare``, ``model`` and ``mechanisms``: allocations and the programs behind them."""

from __future__ import annotations

import warnings
from pathlib import Path

import click
from tabulate import tabulate

from fairalloc.cli.options import format_option, load_case, method_option, output_path
from fairalloc.cli.options import mechanisms as mechanism_names
from fairalloc.cli.render import csv_doc, emit, json_doc, structured
from fairalloc.core import registry
from fairalloc.core.allocation import _fmt
from fairalloc.core.errors import FairallocError, FairallocWarning


@click.command()
@click.argument("case")
@click.option(
    "-m",
    "--mechanism",
    "mechanisms",
    metavar="M[,M...]",
    help="Mechanisms, comma-separated (default: drf). See 'fairalloc mechanisms'.",
)
@method_option("fast: the exact fast algorithm; program: the declarative LP / convex program.")
@format_option("json", "yaml", "csv", help="Output format.")
@click.option("--exact", is_flag=True, help="Also show task counts as verified exact fractions.")
def solve(case, mechanisms, method, fmt, exact):
    """Allocate CASE with one or more mechanisms.

    \b
    Example:
      fairalloc solve drf-section-4-1 -m drf,asset,ceei --exact
      fairalloc solve my.yaml -m ceei --method program --format json


    CASE is a YAML file or the name of a bundled case (list them with 'fairalloc cases').
    """
    names = mechanism_names(mechanisms, ["drf"])
    loaded = load_case(case)
    allocations = [registry.get(n).allocate(loaded.instance, method) for n in names]
    if fmt == "table":
        emit(
            "\n\n".join(
                a.table(exact=exact, units=loaded.units) + ("\n\n" + a.step_table() if a.history is not None else "")
                for a in allocations
            )
        )
    elif fmt == "csv":
        emit(csv_doc(allocations))
    else:
        emit(structured(allocations, fmt, exact))


@click.command()
@click.argument("case")
@click.option(
    "-m",
    "--mechanism",
    "mechanisms",
    metavar="M[,M...]",
    help="Mechanisms to compare (default: every static mechanism).",
)
@method_option()
@format_option("json", "yaml")
@click.option("--exact", is_flag=True, help="Show verified exact fractions for task counts.")
def compare(case, mechanisms, method, fmt, exact):
    """Every static mechanism side by side on CASE (Figure 4 of the DRF paper, in numbers).

    Shows task counts with dominant shares, each user's bundle, and utilisation per resource.

    CASE is a YAML file or the name of a bundled case (list them with 'fairalloc cases').
    """
    names = mechanism_names(mechanisms, registry.available("static", families=False))
    instance = load_case(case).instance
    allocs = allocate_all(names, instance, method, every=mechanisms is None)
    if fmt != "table":
        emit(structured(allocs, fmt, exact))
        return
    emit(comparison(instance, allocs, exact))


def comparison(instance, allocs, exact: bool) -> str:
    """Task counts (dominant shares), bundles and utilisation of ``allocs``, side by side."""
    names = [a.mechanism for a in allocs]

    def tasks_cell(a, i):
        shown = _fmt(a.tasks[i], 4)
        fraction = str(a.exact[i]) if exact and a.exact is not None else shown
        return f"{shown}{'' if fraction == shown else ' = ' + fraction} ({_fmt(a.dominant_shares[i], 4)})"

    rows = [[u, *(tasks_cell(a, i) for a in allocs)] for i, u in enumerate(instance.users)]
    parts = [f"{instance.name}: tasks (dominant share)", tabulate(rows, ["user", *names], disable_numparse=True)]
    bundle_rows = [
        [u, a.mechanism, *(_fmt(v, 4) for v in a.bundles[i])] for i, u in enumerate(instance.users) for a in allocs
    ]
    parts += ["", "bundles", tabulate(bundle_rows, ["user", "mechanism", *instance.resources], disable_numparse=True)]
    util_rows = [
        [r, _fmt(instance.capacity[j], 4), *(f"{a.utilization[j]:.1%}" for a in allocs)]
        for j, r in enumerate(instance.resources)
    ]
    parts += ["", "utilisation", tabulate(util_rows, ["resource", "capacity", *names], disable_numparse=True)]
    return "\n".join(parts)


def allocate_all(names: list[str], instance, method: str, every: bool) -> list:
    """The allocations of ``names``.  Over the default "every mechanism" set, a mechanism that
    refuses the instance (H-DRF's launch limit, a solver in numerical trouble) is left out with
    a one-line warning, so the others are still compared; one the user named is an error."""
    allocs = []
    for name in names:
        try:
            allocs.append(registry.get(name).allocate(instance, method))
        except FairallocError as refused:
            if not every:
                raise
            warnings.warn(f"{name} left out: {refused}", FairallocWarning, stacklevel=2)
    if not allocs:
        raise FairallocError(f"compare: every mechanism refused {instance.name} (see the warnings)")
    return allocs


@click.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanism_name", default="drf", show_default=True, help="Mechanism.")
@click.option(
    "--write",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Export to FILE: .lp or .mps (LPs; one file per round for sequences) or .txt.",
)
def model(case, mechanism_name, path):
    """Show or export the declarative program of a mechanism on CASE.

    Progressive-filling mechanisms (drf, asset) are a sequence of LPs, one per round; the rounds
    depend on the previous solutions, so the program is solved to list them all.

    CASE is a YAML file or the name of a bundled case (list them with 'fairalloc cases').
    """
    if path is not None:
        output_path(path, "--write")
    instance = load_case(case).instance
    program = registry.get(mechanism_name).program(instance)
    if path is not None:  # the program's messages name its parameter 'path': shown as --write
        program.check_target(path)
    program.solve()
    if path is None:
        emit(program.text())
        return
    for written in program.write(path):
        click.echo(f"wrote {written}")


@click.command("mechanisms")
@format_option("json")
def list_mechanisms(fmt):
    """List registered mechanisms (built-ins and plug-ins) and their methods."""
    rows = []
    for name in registry.available():
        mech = registry.family(name) or registry.get(name)
        rows.append(
            {
                "name": f"{name}:{mech.parameters}" if mech.parameters else name,
                "kind": mech.kind,
                "program": mech.has_program,
                "fast_path": mech.has_fast,
                "auto": "simulate" if mech.kind == "online" else "fast path" if mech.has_fast else "program",
                "summary": mech.summary,
            }
        )
    if fmt == "json":
        emit(json_doc(rows))
        return
    yes = {True: "yes", False: "no"}
    emit(
        tabulate(
            [[r["name"], r["kind"], yes[r["program"]], yes[r["fast_path"]], r["auto"], r["summary"]] for r in rows],
            ["name", "kind", "program", "fast path", "--method auto", "summary"],
            disable_numparse=True,
        )
    )
