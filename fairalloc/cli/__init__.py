"""The ``fairalloc`` command line.

Every user error (bad case, unknown name, solver failure) is one line on stderr and exit code 2;
``--debug`` shows the traceback instead.

Belongs here: one module per command group and one renderer (tables, JSON); a command only
parses its options, calls the library and renders.  Imports: any layer below; nothing imports
the command line.
"""

from __future__ import annotations

import csv
import io
import os
import sys
import textwrap
import warnings
from pathlib import Path

import click
import yaml
from tabulate import tabulate

from fairalloc.core import registry
from fairalloc.core.allocation import _fmt
from fairalloc.io.cases import bundled_cases, load_case
from fairalloc.core.decimals import json_text, plain
from fairalloc.core.errors import FairallocError, FairallocWarning, did_you_mean, one_line, quoted, shown, unknown
from fairalloc.core.files import write_atomically
from fairalloc.core import limits



class Choice(click.Choice):
    """click's choice of option values, suggesting the closest one for a misspelt value."""

    def get_invalid_choice_message(self, value, ctx) -> str:
        message = super().get_invalid_choice_message(value, ctx)
        hint = did_you_mean(value, self.choices)
        return f"{message.rstrip('.')}{hint}" if hint else message


FORMATS = Choice(["table", "json", "yaml", "csv"])


def _mechanisms(spec: str | None, default: list[str]) -> list[str]:
    names = default if not spec else [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise FairallocError("--mechanism: give at least one mechanism name")
    for name in names:
        registry.get(name)          # unknown names fail here, before any solving
    return names


def _json(data) -> str:
    """A JSON document as fairalloc prints it: numbers as the shortest decimals (docs/json.md)."""
    return json_text(data, indent=2)


def _yaml(data) -> str:
    return yaml.safe_dump(plain(data), sort_keys=False, allow_unicode=True)


def _emit(text: str) -> None:
    click.echo(text.rstrip("\n"))


def _csv(allocations) -> str:
    buf = io.StringIO()
    resources = allocations[0].instance.resources
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["mechanism", "user", "tasks", "dominant_share", *resources])
    for a in allocations:
        for i, u in enumerate(a.instance.users):
            writer.writerow([a.mechanism, u, *plain([a.tasks[i], a.dominant_shares[i], *a.bundles[i]])])
    return buf.getvalue()


def _structured(allocations, fmt: str, exact: bool) -> str:
    data = [a.to_dict(exact=exact) for a in allocations]      # always a list: one object per mechanism
    return _json(data) if fmt == "json" else _yaml(data)


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
      fairalloc tradeoff drf-section-4-1        from utilitarian (alpha 0) to DRF (alpha inf)
      fairalloc explore drf-section-4-1         the same, interactively, in the browser

    Every mechanism is a declarative program (a pulp LP or a cvxpy convex program) with a fast
    exact algorithm beside it where one exists. Choose with --method: fast, program, or auto
    (the fast path when there is one).
    """
    ctx.ensure_object(dict)["debug"] = debug


@cli.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanisms", metavar="M[,M...]",
              help="Mechanisms, comma-separated (default: drf). See 'fairalloc mechanisms'.")
@click.option("--method", type=Choice(registry.METHODS), default="auto", show_default=True,
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
        _emit("\n\n".join(a.table(exact=exact) + ("\n\n" + a.step_table() if a.history is not None else "")
                           for a in allocations))
    elif fmt == "csv":
        _emit(_csv(allocations))
    else:
        _emit(_structured(allocations, fmt, exact))


@cli.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanisms", metavar="M[,M...]",
              help="Mechanisms to compare (default: every static mechanism).")
@click.option("--method", type=Choice(registry.METHODS), default="auto", show_default=True)
@click.option("--format", "fmt", type=Choice(["table", "json", "yaml"]), default="table", show_default=True)
@click.option("--exact", is_flag=True, help="Show verified exact fractions for task counts.")
def compare(case, mechanisms, method, fmt, exact):
    """Every static mechanism side by side on CASE (Figure 4 of the DRF paper, in numbers).

    Shows task counts with dominant shares, each user's bundle, and utilisation per resource.

    CASE is a YAML file or the name of a bundled case (list them with 'fairalloc cases').
    """
    names = _mechanisms(mechanisms, registry.available("static", families=False))
    instance = load_case(case).instance
    allocs = _allocate_all(names, instance, method, every=mechanisms is None)
    names = [a.mechanism for a in allocs]
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
    if target is not None:
        _output_path(target, "--write")
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
@click.argument("name", required=False)
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
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
        _emit(_json(case.raw) if fmt == "json" else _case_view(case))
        return
    rows = []
    for name in bundled_cases():
        case = load_case(name)
        rows.append({"name": name, "users": case.instance.n, "resources": ", ".join(case.instance.resources),
                     "source": case.source or ""})
    if fmt == "json":
        _emit(_json(rows))
    else:
        _emit(tabulate([list(r.values()) for r in rows], list(rows[0]), disable_numparse=True,
                       maxcolwidths=[None, None, 16, 72]) + "\n\n'fairalloc cases NAME' shows one case.")


def _case_view(case) -> str:
    """One case for a reader: where it comes from, the instance, and everything it claims."""
    inst, raw = case.instance, case.raw
    parts = [f"{case.name}", f"source: {case.source or '(none)'}"]
    if case.description:
        parts.append(textwrap.fill(" ".join(case.description.split()), 100))
    users = raw["users"]
    extra = [k for k in ("weight", "max_tasks", "shared", "group") if any(k in (u or {}) for u in users.values())]
    rows = [[u, *(_fmt(v, 6) for v in inst.demand[i]), *(_one_line(users[u].get(k, "")) for k in extra)]
            for i, u in enumerate(inst.users)]
    parts += ["", tabulate(rows, ["user", *(f"{r} per task" for r in inst.resources), *extra], disable_numparse=True),
              "capacity: " + ", ".join(f"{r} {_fmt(c, 6)}" for r, c in zip(inst.resources, inst.capacity))]
    sections = [("groups", [f"{g}: {_one_line(spec)}" for g, spec in raw.get("groups", {}).items()]),
                ("variants", [f"{v['name']}: " + (v.get("description") or _one_line({k: w for k, w in v.items()
                                                                                    if k != "name"}))
                              for v in raw.get("variants", [])]),
                ("expectations", [_one_line(e) for e in raw.get("expect", [])]),
                ("claims", [_one_line(c) for c in raw.get("claims", [])]),
                ("errata", [f"{e['where']}: says {e['says']}; true value {e['value']}" for e in raw.get("errata", [])])]
    for title, lines in sections:
        if lines:
            parts += ["", f"{title}:", *(f"  - {line}" for line in lines)]
    return "\n".join(parts)


def _one_line(value) -> str:
    """A YAML value on one line, as the case file writes it."""
    if isinstance(value, str):
        return value
    return yaml.safe_dump(value, default_flow_style=True, width=10**6, sort_keys=False).strip()


@cli.command("mechanisms")
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
def list_mechanisms(fmt):
    """List registered mechanisms (built-ins and plug-ins) and their methods."""
    rows = []
    for name in registry.available():
        mech = registry.family(name) or registry.get(name)
        rows.append({"name": f"{name}:{mech.parameters}" if mech.parameters else name, "kind": mech.kind,
                     "program": mech.has_program, "fast_path": mech.has_fast,
                     "auto": "fast path" if mech.has_fast else "program", "summary": mech.summary})
    if fmt == "json":
        _emit(_json(rows))
        return
    yes = {True: "yes", False: "no"}
    _emit(tabulate([[r["name"], r["kind"], yes[r["program"]], yes[r["fast_path"]], r["auto"], r["summary"]]
                    for r in rows], ["name", "kind", "program", "fast path", "--method auto", "summary"],
                   disable_numparse=True))


# -- properties, verifier, falsifier ---------------------------------------------------------------

def _range(text: str, option: str) -> tuple[int, int]:
    """``"2..6"`` or ``"3"`` as (low, high)."""
    try:
        lo, _, hi = text.partition("..")
        low, high = int(lo), int(hi or lo)
    except ValueError:
        raise FairallocError(f"{option}: expected a number or a range like 2..6 (got {quoted(text)})") from None
    if low < 1 or high < low:
        raise FairallocError(f"{option}: need 1 <= low <= high (got {quoted(text)})")
    return low, high


def _bounded_range(text: str, option: str, limit: int, name: str) -> tuple[int, int]:
    low, high = _range(text, option)
    if high > limit:
        raise FairallocError(f"{option}: at most {limit} (got {high}; fairalloc.core.limits.{name})")
    return low, high


def _output_path(path, option: str, *, folder: bool = False) -> Path:
    """``path`` for an option that writes, checked before any work starts: its folder exists and is
    writable, and the target is not a folder.  ``folder=True``: a folder to write into, which may
    be created: its last level only, or, for a relative path inside the working directory (no
    ``..``), with its missing parents (``--plot out/sim``).  Nothing is created here."""
    path = Path(path)
    try:
        if folder:
            if path.exists() and not path.is_dir():
                raise FairallocError(f"{option}: {shown(path)} is a file, not a folder")
            parent = path if path.exists() else path.parent
            if _inside_working_directory(path):
                while not parent.exists() and parent != parent.parent:
                    parent = parent.parent
        else:
            if path.is_dir():
                raise FairallocError(f"{option}: {shown(path)} is a folder; give a file name")
            if path.exists() and not path.is_file():
                raise FairallocError(f"{option}: {shown(path)} exists and is not a regular file")
            parent = path.parent
        if not parent.exists():
            raise FairallocError(f"{option}: folder {shown(parent)} does not exist")
        if not parent.is_dir():
            raise FairallocError(f"{option}: {shown(parent)} is not a folder")
    except OSError as exc:              # a name too long, a loop of links, ...
        raise FairallocError(f"{option}: cannot use {shown(path)} ({exc.strerror or exc})") from None
    except ValueError as exc:           # a NUL byte
        raise FairallocError(f"{option}: cannot use {shown(path)} ({exc})") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise FairallocError(f"{option}: folder {shown(parent)} is not writable")
    return path


def _inside_working_directory(path: Path) -> bool:
    return not path.is_absolute() and ".." not in path.parts


def _make_folder(path: Path) -> None:
    """The folder an option names, created if missing (as :func:`_output_path` allowed)."""
    try:
        path.mkdir(parents=_inside_working_directory(path), exist_ok=True)
    except OSError as exc:
        raise FairallocError(f"{shown(path)}: cannot create the folder ({exc.strerror or exc})") from None


def _write_text(path: Path, text: str) -> None:
    write_atomically(path, lambda tmp: tmp.write_text(text))


def _write_yaml(path: Path, data) -> None:
    """Write atomically: a half-written case never appears under the final name."""
    _write_text(path, _yaml(data))


def _budget(value: int, option: str = "--budget") -> int:
    from fairalloc.analysis.manipulation import check_budget
    return check_budget(value, option)


def _bounded(value: int, option: str, limit: int, name: str, low: int = 1) -> int:
    if not low <= value <= limit:
        raise FairallocError(f"{option}: must be between {low} and {limit} (got {value}; fairalloc.core.limits.{name})")
    return value


def _seed(value: int) -> int:
    return _bounded(value, "--seed", limits.MAX_SEED, "MAX_SEED", low=0)


def _fmt_margin(v) -> str:
    return "" if v is None else f"{v:.4g}"


ENGINE_OPTIONS = [
    click.option("--workers", type=int, default=None, help="Local worker processes (default: all cores)."),
    click.option("--dask", "dask_address", metavar="ADDRESS",
                 help="Run the trials on a Dask cluster instead, e.g. tcp://scheduler:8786."),
    click.option("--results", type=click.Path(dir_okay=False, path_type=Path),
                 help="Stream every finished trial to this JSON-lines file; rerunning with the same file "
                      "resumes an interrupted run without redoing finished trials."),
    click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal)."),
]


def _engine(fn):
    for option in reversed(ENGINE_OPTIONS):
        fn = option(fn)
    return fn


def _space_options(fn):
    for option in reversed([
        click.option("--users", default="2..6", show_default=True, help="Users per random instance (N or LOW..HIGH)."),
        click.option("--resources", default="2..4", show_default=True, help="Resources per random instance."),
        click.option("--zeros", is_flag=True, help="Allow zero demands (the DRF paper assumes positive demands)."),
        click.option("--weights", is_flag=True, help="Draw scalar user weights 1..4."),
        click.option("--bounds", is_flag=True, help="Give some users a max_tasks bound."),
    ]):
        fn = option(fn)
    return fn


def _space(users, resources, zeros, weights, bounds):
    from fairalloc.analysis.falsify import InstanceSpace
    return InstanceSpace(_bounded_range(users, "--users", limits.MAX_SPACE_USERS, "MAX_SPACE_USERS"),
                         _bounded_range(resources, "--resources", limits.MAX_SPACE_RESOURCES, "MAX_SPACE_RESOURCES"),
                         zeros, weights, bounds)


def _engine_checks(workers, results, trials: int) -> None:
    """falsify / table2: workers, trials and the results file, before any trial runs."""
    if workers is not None:
        _bounded(workers, "--workers", limits.MAX_WORKERS, "MAX_WORKERS")
    _bounded(trials, "--trials", limits.MAX_TRIALS, "MAX_TRIALS")
    if results is not None:
        _output_path(results, "--results")


@cli.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanisms", metavar="M[,M...]", help="Mechanisms (default: drf).")
@click.option("-p", "--property", "props", metavar="P[,P...]",
              help="Properties (default: all eight): sharing_incentive (si), strategy_proofness (sp), "
                   "envy_freeness (ef), pareto_efficiency (pe), single_resource_fairness (srf), "
                   "bottleneck_fairness (bf), population_monotonicity (pm), resource_monotonicity (rm).")
@click.option("--variant", help="Check the named variant of the case instead of the case itself.")
@click.option("--method", type=Choice(registry.METHODS), default="auto", show_default=True)
@click.option("--budget", type=int, default=500, show_default=True,
              help="Verifier evaluations per user for strategy-proofness.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
def check(case, mechanisms, props, variant, method, budget, seed, fmt):
    """Check fairness properties of mechanisms on CASE, with witnesses for violations.

    \b
    Example:
      fairalloc check drf-theorem-1 -m asset,drf -p si
      fairalloc check drf-theorem-4 -m ceei -p sp --format json

    Pareto efficiency is decided by an LP; strategy-proofness by the manipulation verifier (a
    search within --budget, not a proof). CASE is a YAML file or a bundled case name.
    """
    from fairalloc.analysis.properties import check as run_checks, property_names
    names = _mechanisms(mechanisms, ["drf"])
    for name in names:
        property_names(props, registry.get(name).kind == "dynamic")
    _budget(budget)
    _seed(seed)
    loaded = load_case(case)
    instance = _variant(loaded, variant)
    reports = []
    for name in names:
        results = run_checks(name, loaded if variant is None else instance, props, method=method, budget=budget,
                             seed=seed)
        reports.append({"case": instance.name, "mechanism": name,
                        "properties": {p: r.to_dict() for p, r in results.items()}, "_results": results})
    if fmt == "json":
        data = [{k: v for k, v in r.items() if k != "_results"} for r in reports]
        _emit(_json(data))
        return
    for r in reports:
        rows = [[p, "n/a" if not res.applicable else ("yes" if res.holds else "NO"), _fmt_margin(res.margin),
                 res.summary() if not res.holds or not res.applicable else res.note]
                for p, res in r["_results"].items()]
        _emit(f"{r['mechanism']} on {r['case']}\n" + tabulate(rows, ["property", "holds", "margin", "witness / note"],
                                                               disable_numparse=True) + "\n")


def _variant(case, variant):
    if variant is None:
        return case.instance
    if variant not in case.variants:
        raise FairallocError(f"--variant: {unknown('variant', variant, case.variants)} of {case.name}")
    return case.variants[variant]


@cli.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanism", default="ceei", show_default=True, help="Mechanism to attack.")
@click.option("--user", help="Only this user (default: every user).")
@click.option("--budget", type=int, default=2000, show_default=True, help="Mechanism evaluations per user.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--method", type=Choice(registry.METHODS), default="auto", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the best profitable lie as a YAML case (with a 'misreport' variant).")
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
def verify(case, mechanism, user, budget, seed, method, out, fmt):
    """Search the reports that raise a user's true task count (strategy-proofness attack).

    \b
    Example:
      fairalloc verify drf-theorem-4 -m ceei --user 1 --budget 2000 --out lie.yaml

    Grid and random perturbations of the reported demand (least contended resources first),
    then a local pattern search, then the best lie rounded while its gain survives.
    """
    from fairalloc.analysis.manipulation import check_search, verify as run_verify
    _budget(budget)
    _seed(seed)
    if out is not None:
        _output_path(out, "--out")
    loaded = load_case(case)
    if user is not None:
        loaded.instance.user_index(user)
    check_search(loaded.instance, 1 if user is not None else loaded.instance.n, budget)
    result = run_verify(mechanism, loaded, user, budget=budget, seed=seed, method=method)
    if out is not None and result.witness is not None:
        _write_yaml(out, result.witness)
    if fmt == "json":
        _emit(_json(result.to_dict()))
        return
    rows = []
    for lie in result.lies:
        report = ", ".join(f"{k}={_fmt(v, 4)}" for k, v in lie.reported_demand.items())
        shrunk = lie.shrunk and ", ".join(f"{k}={_fmt(v, 4)}" for k, v in lie.shrunk["reported_demand"].items())
        rows.append([lie.user, _fmt(lie.truthful_tasks, 4), _fmt(lie.manipulated_tasks, 4), _fmt(lie.gain, 4),
                     f"{lie.relative_gain:.1%}" if lie.profitable and lie.relative_gain < float("inf") else "-",
                     report if lie.profitable else "(truth)",
                     shrunk or "", lie.evaluations])
    _emit(f"{result.mechanism} on {result.case}: "
          + ("PROFITABLE LIE FOUND" if result.to_dict()["profitable"] else "no profitable lie found")
          + f" ({result.evaluations} evaluations"
          + (f", {result.evaluations_per_second:.0f}/s)\n" if result.seconds > 0 else ")\n")
          + tabulate(rows, ["user", "truthful", "manipulated", "gain", "relative", "best report", "rounded report",
                            "evaluations"], disable_numparse=True)
          + (f"\nwrote {out}" if out is not None and result.witness is not None else ""))


@cli.command()
@click.option("-m", "--mechanism", "mechanism", required=True, help="Mechanism to attack.")
@click.option("-p", "--property", "prop", required=True, help="Property to break (name or abbreviation).")
@_space_options
@click.option("--trials", type=int, default=1000, show_default=True, help="Random instances to try at most.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--budget", type=int, default=200, show_default=True, help="Verifier evaluations per user (sp).")
@click.option("--method", type=Choice(registry.METHODS), default="auto", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the shrunk counterexample case.")
@_engine
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
def falsify(mechanism, prop, users, resources, zeros, weights, bounds, trials, seed, budget, method, out,
            workers, dask_address, results, progress, fmt):
    """Find an instance on which MECHANISM violates PROPERTY, shrink it, and write it as a case.

    \b
    Example:
      fairalloc falsify -m asset -p sharing_incentive --out asset-si.yaml
      fairalloc falsify -m drf -p sp --trials 5000 --results drf-sp.jsonl

    Trials run in parallel on all cores (or a Dask cluster with --dask) and stop at the first
    violation; the counterexample is shrunk to fewer users, resources and small integers.
    """
    from fairalloc.analysis.falsify import falsify as run_falsify
    from fairalloc.analysis.properties import property_names
    registry.get(mechanism)
    (prop,) = property_names(prop)
    space = _space(users, resources, zeros, weights, bounds)
    _budget(budget), _seed(seed)
    _engine_checks(workers, results, trials)
    if out is not None:
        _output_path(out, "--out")
    result = run_falsify(mechanism, prop, space=space, trials=trials, seed=seed, budget=budget, method=method,
                         out=results, workers=workers, dask_address=dask_address, progress=progress)
    if out is not None and result.case is not None:
        _write_yaml(out, result.case)
    if fmt == "json":
        _emit(_json(result.to_dict()))
        return
    found = f"; the first violation is trial {result.first_trial}, counting from 0" if result.found else ""
    lines = [f"{result.mechanism} / {result.property}: {result.summary}  "
             f"({result.trials} trials checked{found}; {result.seconds:.1f} s)"]
    if result.case is not None:
        lines += ["", _yaml(result.case).rstrip()]
        if out is not None:
            lines.append(f"wrote {out}")
    _emit("\n".join(lines))


@cli.command()
@click.option("-m", "--mechanism", "mechanisms", metavar="M[,M...]", help="Mechanisms (default: all static).")
@click.option("-p", "--property", "props", metavar="P[,P...]", help="Properties (default: all eight).")
@_space_options
@click.option("--trials", type=int, default=200, show_default=True, help="Random instances per cell.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--budget", type=int, default=100, show_default=True, help="Verifier evaluations per user (sp).")
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write each cell's counterexample as a YAML case into this folder.")
@_engine
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
def table2(mechanisms, props, users, resources, zeros, weights, bounds, trials, seed, budget, out_dir, workers,
           dask_address, results, progress, fmt):
    """Empirical Table 2 of the DRF paper: properties x mechanisms.

    Each cell says "holds on N instances" or shows the shrunk counterexample found, for every
    registered static mechanism (yours included).
    """
    from fairalloc.analysis.falsify import table2 as run_table2
    from fairalloc.analysis.properties import property_names
    names = _mechanisms(mechanisms, registry.available("static", families=False))
    chosen = property_names(props)
    space = _space(users, resources, zeros, weights, bounds)
    _budget(budget), _seed(seed)
    _engine_checks(workers, results, trials)
    if len(names) * len(chosen) * trials > limits.MAX_TRIALS:
        raise FairallocError(f"--trials: {len(names)} mechanisms x {len(chosen)} properties x {trials} trials = "
                             f"{len(names) * len(chosen) * trials} trials, above the limit of {limits.MAX_TRIALS} "
                             f"(fairalloc.core.limits.MAX_TRIALS)")
    if out_dir is not None:
        _output_path(out_dir, "--out-dir", folder=True)
    cells = run_table2(names, chosen, space=space, trials=trials, seed=seed, budget=budget, out=results,
                       workers=workers, dask_address=dask_address, progress=progress)
    if out_dir is not None:
        _make_folder(out_dir)
        for cell in cells:
            if cell.case is not None:
                _write_yaml(out_dir / f"{cell.case['name']}.yaml", cell.case)
    if fmt == "json":
        _emit(_json([c.to_dict() for c in cells]))
        return
    grid = {(c.mechanism, c.property): c for c in cells}
    rows = [[p, *(("Y  " if not grid[(m, p)].found else "no ") + grid[(m, p)].summary.replace("VIOLATED: ", "")
                  for m in names)] for p in chosen]
    _emit(tabulate(rows, ["property", *names], disable_numparse=True, maxcolwidths=[None] + [48] * len(names)))


@cli.command()
@click.argument("cases", nargs=-1)
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
@click.option("--all-rows/--mismatches-only", default=True, show_default=True,
              help="Show every row, or only the rows that did not reproduce.")
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
    from tqdm import tqdm

    from fairalloc.analysis.reproduce import reproduce as run_reproduce, summary, summary_line
    rows = run_reproduce(cases, progress=lambda loaded: tqdm(loaded, unit="case", desc="reproduce", file=sys.stderr,
                                                             disable=None, leave=False))
    bad = [r for r in rows if r.status == "MISMATCH"]
    if fmt == "json":
        _emit(_json({"rows": [r.to_dict() for r in rows], **summary(rows)}))
    else:
        shown = rows if all_rows else bad
        _emit(tabulate([[r.case, r.claim, r.source, r.computed, r.status] for r in shown],
                       ["case", "claim", "source value", "computed value", "status"], disable_numparse=True,
                       maxcolwidths=[None, 52, 30, 52, None]))
        _emit("\n" + summary_line(rows))
    if bad:
        raise click.exceptions.Exit(1)


def _machines(specs: tuple[str, ...], m: int):
    """``--machines 3x4,8`` (three machines of 4 and 8) or ``--machines 9,18``; repeatable."""
    import numpy as np
    out = []
    for spec in specs:
        count, _, caps = spec.rpartition("x")
        try:
            values = [float(v) for v in caps.split(",")]
            copies = int(count) if count else 1
        except ValueError:
            raise FairallocError(f"--machines: cannot read {quoted(spec)} (write e.g. 3x4,8 for three machines of 4 "
                                 f"and 8)") from None
        if len(values) != m or copies < 1 or any(not (v >= 0 and np.isfinite(v)) for v in values):
            raise FairallocError(f"--machines: {quoted(spec)} needs {m} non-negative capacities and a positive count")
        if len(out) + copies > limits.MAX_MACHINES:
            raise FairallocError(f"--machines: at most {limits.MAX_MACHINES} machines in all (got at least "
                                 f"{len(out) + copies}; fairalloc.core.limits.MAX_MACHINES)")
        out += [values] * copies
    return np.array(out)


@cli.command()
@click.argument("case")
@click.option("--machines", multiple=True, metavar="[Nx]C1,C2,...",
              help="Machines instead of one pool, e.g. --machines 3x4,8 --machines 5,10 (Theorem 7 placement).")
@click.option("--policy", type=Choice(["stop", "skip"]), default="stop", show_default=True,
              help="stop: Algorithm 1's pseudo-code (stop at the first task that does not fit); "
                   "skip: go on with users whose tasks still fit.")
@click.option("--trace/--no-trace", default=True, show_default=True, help="Print every decision (Table 1).")
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
def schedule(case, machines, policy, trace, fmt):
    """Discrete DRF: Algorithm 1 of the DRF paper, decision by decision (Table 1), or on machines.

    \b
    Example:
      fairalloc schedule drf-section-4-1                 the rows of Table 1
      fairalloc schedule drf-section-4-1 --machines 2x5,9

    Each decision launches the next task of the user with the lowest dominant share (ties: the
    larger next task first, then the earlier user). CASE is a YAML file or a bundled case name.
    """
    from fairalloc.scheduling.algorithm1 import DRFScheduler, fill_machines, table_1
    instance = load_case(case).instance
    if machines:
        placement = fill_machines(instance, _machines(machines, instance.m), keep_trace=trace)
        launches = placement.trace
        summary = {"tasks": dict(zip(instance.users, placement.tasks.tolist())),
                   "per_machine": [dict(zip(instance.users, row.tolist())) for row in placement.per_machine],
                   "dominant_shares": dict(zip(instance.users, placement.dominant_shares.tolist())),
                   "theorem_7_bound": placement.max_task_share,
                   "largest_gap": float(placement.dominant_shares.max() - placement.dominant_shares.min())}
    else:
        scheduler = DRFScheduler(instance, policy=policy)
        launches = scheduler.run() if trace else scheduler.run_counts()     # --no-trace keeps counts only
        summary = {"tasks": dict(zip(instance.users, scheduler.launched.tolist())),
                   "dominant_shares": dict(zip(instance.users, scheduler.s.tolist()))}
    if fmt == "json":
        _emit(_json({"case": instance.name, "policy": policy, **summary,
                     "trace": [vars(launch) for launch in launches] if trace else None}))
        return
    parts = []
    if trace:
        head, rows = table_1(launches, instance)
        if machines:
            head, rows = ["machine", *head], [[launch.machine + 1, *row] for launch, row in zip(launches, rows)]
        parts.append(tabulate(rows, head, disable_numparse=True))
    parts.append("tasks: " + ", ".join(f"{u} {t}" for u, t in summary["tasks"].items()))
    if machines:
        parts.append(f"largest gap between dominant shares {summary['largest_gap']:.4g} <= max-task share "
                     f"{summary['theorem_7_bound']:.4g} (Theorem 7)")
    _emit("\n".join(parts))


GENERATED_WORKLOADS = ("drf-7.1", "drf-7.2", "mfs-small", "mfs-large", "mfs-mixed")


def _workload(source: str, nodes: int | None, node_size: tuple[float, float]):
    from fairalloc.scheduling import workloads
    generators = {"drf-7.1": workloads.drf_7_1, "drf-7.2": workloads.drf_7_2,
                  "mfs-small": lambda **kw: workloads.mfs_workload("small", **kw),
                  "mfs-large": lambda **kw: workloads.mfs_workload("large", **kw),
                  "mfs-mixed": lambda **kw: workloads.mfs_workload("mixed", **kw)}
    if source in generators:
        return generators[source](**({} if nodes is None else {"nodes": nodes}))
    path = Path(source)
    if path.suffix.lower() == ".csv":
        if nodes is None:
            raise FairallocError("--nodes: a CSV workload needs --nodes and --node-size (CPU,GB)")
        return workloads.load_csv(path, nodes=nodes, node_cpu=node_size[0], node_mem=node_size[1])
    if not path.exists() and path.suffix == "":
        raise FairallocError(f"WORKLOAD: '{source}' is neither a file nor a generated workload "
                             f"({', '.join(GENERATED_WORKLOADS)})")
    return workloads.load_yaml(path)


@cli.command()
@click.argument("workload")
@click.option("--scheduler", "schedulers", default="drf,slots:4,cpu-fair,fifo", show_default=True,
              metavar="S[,S...]", help="drf, mfs (two-level DRF), hdrf (H-DRF over owner paths 'group/user'), "
                                       "slots:K (K slots per node), capacity:K, cpu-fair, fifo, quincy (min-cost "
                                       "flow; small clusters); ':oc' after slots / capacity / cpu-fair lets nodes "
                                       "be over-committed.")
@click.option("--nodes", type=int, help="Nodes (generated workloads: override; CSV workloads: required).")
@click.option("--node-size", default="8,6", show_default=True, metavar="CPU,GB", help="Node size for CSV workloads.")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write utilisation and dominant-share figures (PNG) into this folder.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
def simulate(workload, schedulers, nodes, node_size, plot_dir, progress, fmt):
    """Replay a cluster workload under DRF and slot-based schedulers (discrete-event simulation).

    \b
    Example:
      fairalloc simulate drf-7.2 --scheduler drf,slots:3,slots:6,cpu-fair --plot out/sim
      fairalloc simulate my-workload.yaml --format json

    WORKLOAD is a YAML or CSV file (see fairalloc.scheduling.workloads) or a generated set-up: drf-7.1, drf-7.2
    (the DRF paper's section 7 experiments), mfs-small, mfs-large, mfs-mixed (the MFS paper's sets).
    """
    from fairalloc.scheduling.simulator import make_scheduler, simulate as run
    try:
        size = tuple(float(v) for v in node_size.split(","))
    except ValueError:
        size = ()
    if len(size) != 2 or not all(v > 0 for v in size):
        raise FairallocError(f"--node-size: expected CPU,GB with two positive numbers (got '{node_size}')")
    names = [s.strip() for s in schedulers.split(",") if s.strip()]
    for name in names:
        make_scheduler(name)                      # unknown names fail before any simulation
    if nodes is not None:
        _bounded(nodes, "--nodes", limits.MAX_NODES, "MAX_NODES")
    if plot_dir is not None:
        _output_path(plot_dir, "--plot", folder=True)
    w = _workload(workload, nodes, size)
    results = [run(w, name, progress=progress) for name in names]
    if plot_dir is not None:
        _plot_simulation(results, plot_dir)
    if fmt == "json":
        _emit(_json([r.to_dict() for r in results]))
        return
    classes = sorted({c for r in results for c in r.completed})
    head = ["scheduler", *(f"jobs done ({c or 'all'})" for c in classes),
            *(f"mean JCT s ({c or 'all'})" for c in classes), "cpu util.", "mem util.", "fairness error"]
    rows = [[r.scheduler, *(r.completed.get(c, 0) for c in classes),
             *(_seconds(r.mean_completion_time.get(c)) for c in classes),
             f"{r.utilization['cpu']:.1%}", f"{r.utilization['mem']:.1%}", f"{r.fairness_error:.4f}"] for r in results]
    _emit(f"{w.name}: {w.nodes} nodes, {len(w.jobs)} jobs\n" + tabulate(rows, head, disable_numparse=True)
          + (f"\nwrote figures into {plot_dir}" if plot_dir is not None else ""))


def _seconds(value) -> str:
    """A mean completion time, or '-' when no job of that class completed."""
    return "-" if value is None else f"{value:.1f}"


def _plot_simulation(results, folder: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    _make_folder(folder)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for r in results:
        axes[0].plot(r.samples["time"], r.samples["cpu"], label=r.scheduler)
        axes[1].plot(r.samples["time"], r.samples["mem"], label=r.scheduler)
    for ax, title in zip(axes, ("CPU", "memory")):
        ax.set_title(f"{title} utilisation"), ax.set_xlabel("time (s)"), ax.set_ylim(0, 1.05), ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    write_atomically(folder / "utilisation.png",
                      lambda tmp: fig.savefig(tmp, format="png", dpi=120, metadata={"Software": None}))
    plt.close(fig)
    fig, axes = plt.subplots(1, len(results), figsize=(4 * len(results), 3.4), squeeze=False)
    for ax, r in zip(axes[0], results):
        for owner, values in sorted(r.samples["shares"].items()):
            ax.plot(r.samples["time"], values, label=owner)
        ax.set_title(f"{r.scheduler}: dominant shares"), ax.set_xlabel("time (s)"), ax.set_ylim(0, 1), ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    write_atomically(folder / "dominant_shares.png",
                      lambda tmp: fig.savefig(tmp, format="png", dpi=120, metadata={"Software": None}))
    plt.close(fig)


@cli.command()
@click.argument("case")
@click.option("--alphas", default="0,0.5,1,2,5,inf", show_default=True, metavar="A[,A...]",
              help="Points of the alpha-fair family: 0 utilitarian, 1 CEEI, inf DRF (max-min).")
@click.option("--on", type=Choice(["shares", "tasks"]), default="shares", show_default=True,
              help="Alpha-fairness of dominant shares (alpha-fair) or of task counts (alpha-tasks).")
@click.option("--references", default="drf,ceei,asset,utilitarian", show_default=True, metavar="M[,M...]",
              help="Mechanisms marked beside the family ('' for none).")
@click.option("--properties", "props", default="all", show_default=True, metavar="P[,P...]",
              help="Properties checked at every point ('all', 'none', or names; see 'fairalloc check --help').")
@click.option("--budget", default=200, show_default=True, help="Verifier evaluations per user (strategy-proofness).")
@click.option("--method", type=Choice(registry.METHODS), default="auto", show_default=True)
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the frontier figure to FILE (.png, .svg or .pdf).")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
@click.option("--format", "fmt", type=Choice(["table", "json"]), default="table", show_default=True)
def tradeoff(case, alphas, on, references, props, budget, method, plot_file, progress, fmt):
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
    from tqdm import tqdm

    from fairalloc.analysis.properties import PROPERTIES
    from fairalloc.analysis.tradeoff import frontier, parse_alphas, plot_frontier
    chosen = parse_alphas(alphas)
    refs = _mechanisms(references, []) if references.strip() else []
    wanted = {"all": None, "none": ""}.get(props.strip(), props)
    if plot_file is not None and plot_file.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise FairallocError(f"--plot: unknown figure format {quoted(plot_file.suffix)} (use .png, .svg or .pdf)")
    _budget(budget)
    if plot_file is not None:
        _output_path(plot_file, "--plot")
    loaded = load_case(case)
    bar = tqdm(total=len(chosen) + len(refs), unit="point", disable=not progress if progress is not None else None,
               file=sys.stderr, desc="tradeoff")
    with bar:
        points = frontier(loaded, chosen, on=on, references=refs, properties=wanted, method=method, budget=budget,
                          progress=lambda p: bar.update())
    if plot_file is not None:                   # nothing half-written
        write_atomically(plot_file, lambda tmp: plot_frontier(points, tmp, title=f"{loaded.instance.name}: "
                                                                             f"fairness / efficiency"),
                          suffix=plot_file.suffix)
    if fmt == "json":
        _emit(_json([p.to_dict() for p in points]))
        return
    inst = loaded.instance
    checked = [name for name in PROPERTIES if points and name in points[0].properties]
    abbreviations = {name: "".join(w[0] for w in name.split("_")).upper() for name in checked}
    head = ["point", "sum dom. share", *(f"util. {r}" for r in inst.resources), "tasks", "min share", "Jain",
            "envious", *abbreviations.values()]
    rows = [[p.label, _fmt(p.metrics["total_dominant_share"], 4),
             *(f"{v:.1%}" for v in p.metrics["utilization"].values()), _fmt(p.metrics["total_tasks"], 4),
             _fmt(p.metrics["min_dominant_share"], 4), _fmt(p.metrics["jain_index"], 4),
             "-" if p.metrics["envious_users"] is None else len(p.metrics["envious_users"]),
             *(_mark(p.properties[name]) for name in checked)] for p in points]
    alloc_rows = [[p.label, *(_fmt(v, 4) for v in p.allocation.tasks)] for p in points]
    parts = [f"{inst.name}: fairness / efficiency ({'dominant shares' if on == 'shares' else 'task counts'})",
             tabulate(rows, head, disable_numparse=True)]
    if checked:
        parts.append("properties: " + ", ".join(f"{a} {n}" for n, a in abbreviations.items())
                     + "  (yes / NO / n/a; 'fairalloc check CASE -m M' shows witnesses)")
    parts += ["", "tasks per user", tabulate(alloc_rows, ["point", *inst.users], disable_numparse=True)]
    if plot_file is not None:
        parts.append(f"\nwrote {plot_file}")
    _emit("\n".join(parts))


@cli.command()
@click.argument("case", required=False)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (the default keeps the page on this machine).")
@click.option("--port", default=8050, show_default=True, help="Port (0: any free port).")
@click.option("--open/--no-open", "open_browser", default=False, show_default=True,
              help="Open the page in the default web browser.")
def explore(case, host, port, open_browser):
    """Explore fairness trade-offs in the browser: edit an instance and watch allocations move.

    \b
    The page shows, at every edit:
      - allocations of DRF, Asset, CEEI, utilitarian and alpha-fair (slider) per resource,
        as in Figure 4 of the DRF paper, with the numbers and efficiency / fairness measures;
      - property badges (click one for its witness), the alpha-fair frontier with the current point;
      - a manipulation probe: change one user's reported demand and see her true gain;
      - arrival-by-arrival playback of the dynamic mechanisms (dmfa-srq, ddrf);
      - a button that downloads the instance as a YAML case.

    \b
    Example:
      fairalloc explore drf-section-4-1            then open http://127.0.0.1:8050/
      fairalloc explore my.yaml --port 9000 --open

    CASE (optional) is a YAML file or the name of a bundled case; the page can switch cases.
    """
    from fairalloc.explorer import serve
    if not 0 <= port <= 65535:
        raise FairallocError(f"--port: must be between 0 and 65535 (got {port})")
    host = _host(host)
    if case is not None:
        load_case(case)                 # a bad case fails here, in one line, before serving
    serve(case, host, port, open_browser)


def _host(host: str) -> str:
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
        raise FairallocError(f"--host: cannot resolve {quoted(host)} ({getattr(exc, 'strerror', None) or exc})") \
            from None
    return bare


def _allocate_all(names: list[str], instance, method: str, every: bool) -> list:
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


def _mark(result) -> str:
    return "n/a" if not result.applicable else ("yes" if result.holds else "NO")


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning fairalloc gives its user, as one line; numpy's floating-point RuntimeWarnings
    (``divide by zero encountered in ...``) are not for the user: every result they could touch
    is checked (feasibility, property tolerances) before it is shown."""
    text = str(message)
    if issubclass(category, RuntimeWarning) and "encountered in" in text:
        return
    click.echo(f"fairalloc: warning: {one_line(text)}", err=True)


def main(argv=None) -> int:
    """Entry point: one-line errors with exit code 2 (``--debug`` for tracebacks)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    try:
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = _show_warning
                warnings.filterwarnings("ignore", message=".*encountered in", category=RuntimeWarning)
            code = cli.main(args=argv, prog_name="fairalloc", standalone_mode=False)
        if isinstance(code, int):           # click hands back a command's Exit code here
            return code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("fairalloc: interrupted", err=True)
        return 130
    except click.UsageError as exc:
        if debug:
            raise
        click.echo(f"fairalloc: {one_line(exc.format_message())}", err=True)
        return 2
    except FairallocError as exc:
        if debug:
            raise
        click.echo(f"fairalloc: {one_line(exc)}", err=True)
        return 2
    except (RecursionError, MemoryError) as exc:
        if debug:
            raise
        what = "nested too deeply" if isinstance(exc, RecursionError) else "input too large"
        click.echo(f"fairalloc: {' '.join(argv[:1]) or 'input'}: {what} ({type(exc).__name__})", err=True)
        return 2
    except BrokenPipeError:             # 'fairalloc ... | head': the reader left; nothing to say
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 141
    except OSError as exc:
        if debug:
            raise
        where = shown(exc.filename) if getattr(exc, "filename", None) else "output"
        click.echo(f"fairalloc: {where}: {exc.strerror or exc}", err=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
