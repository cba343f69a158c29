"""``fairalloc tradeoff`` and ``explore``: the fairness / efficiency frontier, in a table and in the browser."""

from __future__ import annotations

from pathlib import Path

import click
from tabulate import tabulate

from fairalloc.cli.options import (
    Choice,
    format_option,
    load_case,
    method_option,
    output_path,
)
from fairalloc.cli.options import (
    budget as check_budget,
)
from fairalloc.cli.options import (
    mechanisms as mechanism_names,
)
from fairalloc.cli.render import emit, json_doc, mark
from fairalloc.core.allocation import _fmt
from fairalloc.core.errors import FairallocError, quoted


@click.command()
@click.argument("case")
@click.option(
    "--alphas",
    default="0,0.5,1,2,5,inf",
    show_default=True,
    metavar="A[,A...]",
    help="Points of the alpha-fair family: 0 utilitarian, 1 CEEI, inf DRF (max-min).",
)
@click.option(
    "--on",
    type=Choice(["shares", "tasks"]),
    default="shares",
    show_default=True,
    help="Alpha-fairness of dominant shares (alpha-fair) or of task counts (alpha-tasks).",
)
@click.option(
    "--references",
    default="drf,ceei,asset,utilitarian",
    show_default=True,
    metavar="M[,M...]",
    help="Mechanisms marked beside the family ('' for none).",
)
@click.option(
    "--properties",
    "property",
    default="all",
    show_default=True,
    metavar="P[,P...]",
    help="Properties checked at every point ('all', 'none', or names; see 'fairalloc check --help').",
)
@click.option("--budget", default=200, show_default=True, help="Verifier evaluations per user (strategy-proofness).")
@method_option()
@click.option(
    "--plot",
    "plot_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the frontier figure to FILE (.png, .svg or .pdf).",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
@format_option("json")
def tradeoff(case, alphas, on, references, property, budget, method, plot_file, progress, fmt):
    """Walk the fairness / efficiency frontier of CASE along the alpha-fair family.

    For every alpha (and DRF, CEEI, Asset, utilitarian beside them): the allocation, efficiency
    (sum of dominant shares, utilisation, total tasks), fairness (smallest weighted dominant
    share, Jain's index, envious users) and which properties hold.

    \b
    Example:
      fairalloc tradeoff drf-section-4-1
      fairalloc tradeoff drf-section-4-1 --alphas 0,1,2,5,10,inf --plot frontier.png
      fairalloc tradeoff my.yaml --on tasks --properties none --format json

    CASE is a YAML file or the name of a bundled case (list them with 'fairalloc cases').
    """
    from fairalloc.analysis.tradeoff import frontier, parse_alphas, plot_frontier
    from fairalloc.core.progress import progress_bar

    chosen = parse_alphas(alphas)
    refs = mechanism_names(references, []) if references.strip() else []
    # python name 'property', as the library's messages call it: they show as --properties
    wanted = {"all": None, "none": ""}.get(property.strip(), property)
    if plot_file is not None and plot_file.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise FairallocError(f"--plot: unknown figure format {quoted(plot_file.suffix)} (use .png, .svg or .pdf)")
    check_budget(budget)
    if plot_file is not None:
        output_path(plot_file, "--plot")
    loaded = load_case(case)
    bar = progress_bar(total=len(chosen) + len(refs), unit="point", desc="tradeoff", progress=progress)
    with bar:
        points = frontier(
            loaded,
            chosen,
            on=on,
            references=refs,
            properties=wanted,
            method=method,
            budget=budget,
            progress=lambda p: bar.update(),
        )
    if plot_file is not None:  # written whole or not at all
        plot_frontier(points, plot_file, title=f"{loaded.instance.name}: fairness / efficiency")
    if fmt == "json":
        emit(json_doc([p.to_dict() for p in points]))
        return
    emit(frontier_table(loaded.instance, points, on) + (f"\n\nwrote {plot_file}" if plot_file is not None else ""))


def frontier_table(inst, points, on: str) -> str:
    """The frontier's measures and properties per point, then each point's task counts."""
    from fairalloc.analysis.properties import PROPERTIES

    checked = [name for name in PROPERTIES if points and name in points[0].properties]
    abbreviations = {name: "".join(w[0] for w in name.split("_")).upper() for name in checked}
    head = [
        "point",
        "sum dom. share",
        *(f"util. {r}" for r in inst.resources),
        "tasks",
        "min share",
        "Jain",
        "envious",
        *abbreviations.values(),
    ]
    rows = [
        [
            p.label,
            _fmt(p.metrics["total_dominant_share"], 4),
            *(f"{v:.1%}" for v in p.metrics["utilization"].values()),
            _fmt(p.metrics["total_tasks"], 4),
            _fmt(p.metrics["min_dominant_share"], 4),
            _fmt(p.metrics["jain_index"], 4),
            "-" if p.metrics["envious_users"] is None else len(p.metrics["envious_users"]),
            *(mark(p.properties[name]) for name in checked),
        ]
        for p in points
    ]
    alloc_rows = [[p.label, *(_fmt(v, 4) for v in p.allocation.tasks)] for p in points]
    parts = [
        f"{inst.name}: fairness / efficiency ({'dominant shares' if on == 'shares' else 'task counts'})",
        tabulate(rows, head, disable_numparse=True),
    ]
    if checked:
        parts.append(
            "properties: "
            + ", ".join(f"{a} {n}" for n, a in abbreviations.items())
            + "  (yes / NO / n/a; 'fairalloc check CASE -m M' shows witnesses)"
        )
    parts += ["", "tasks per user", tabulate(alloc_rows, ["point", *inst.users], disable_numparse=True)]
    return "\n".join(parts)


@click.command()
@click.argument("case", required=False)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (the default keeps the page on this machine).",
)
@click.option("--port", default=8050, show_default=True, help="Port (0: any free port).")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="A further host name the page may be reached by (repeatable); any other name is refused.",
)
@click.option(
    "--open/--no-open",
    "open_browser",
    default=False,
    show_default=True,
    help="Open the page in the default web browser.",
)
@click.option(
    "--workload",
    metavar="W",
    help="A job workload file (or a bundled workload's name) the page's Replay panel replays against CASE.",
)
def explore(case, host, port, allow_hosts, open_browser, workload):
    """Explore a case in the browser: edit it and watch allocations, properties and lies move.

    \b
    The page (docs/explorer.md) shows, at every edit:
      - the allocation of each ticked mechanism (any registered one; two lines and a docs link
        each) per resource, as in Figure 4 of the DRF paper, with the numbers and measures;
      - every property, each failure with its witness in words, loadable as a variant;
      - the alpha-fair frontier (hover a point for its allocation, click it to load it);
      - a manipulation probe: one user's reported demand and what it buys her; the best lie;
      - arrival-by-arrival playback of dmfa-srq and ddrf, and the tree of a hierarchy;
      - with --workload, a replay of the jobs under a scheduler: usage against entitlement and
        guarantee over time, waits, preemptions (the charts of 'simulate --report').
    Every field of a case file is shown and editable, and the download gives the case back.

    \b
    Example:
      fairalloc explore drf-section-4-1            then open http://127.0.0.1:8050/
      fairalloc explore my.yaml --port 9000 --open
      fairalloc explore replay-two-teams --workload two-teams-day

    CASE (optional) is a YAML file or the name of a bundled case; the page can switch to any
    bundled case or open a file you pick. The server listens on 127.0.0.1 unless --host says
    otherwise, and answers only to its own address (and --allow-host names).
    """
    from fairalloc.explorer import serve, start_workload

    if not 0 <= port <= 65535:
        raise FairallocError(f"--port: must be between 0 and 65535 (got {port})")
    host = checked_host(host)
    if workload is not None and case is None:
        raise FairallocError(
            "--workload: give the queue CASE it is replayed against (fairalloc explore CASE --workload W)"
        )
    if case is not None:
        loaded = load_case(case)  # a bad case or workload fails here, in one line, before serving
        if workload is not None:
            start_workload(workload, loaded)
    serve(case, host, port, open_browser, tuple(allow_hosts), workload)


def checked_host(host: str) -> str:
    """An IP address or a host name that resolves; one clear line otherwise (before serving)."""
    import ipaddress
    import re
    import socket

    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(bare)
        return bare
    except ValueError:
        pass
    if re.fullmatch(r"[0-9.]+", bare):
        raise FairallocError(f"--host: {quoted(host)} is not a valid IP address")
    label = r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
    if len(bare) > 253 or not re.fullmatch(rf"{label}(\.{label})*\.?", bare):
        raise FairallocError(f"--host: {quoted(host)} is neither an IP address nor a host name")
    try:
        socket.getaddrinfo(bare, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise FairallocError(
            f"--host: cannot resolve {quoted(host)} ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    return bare
