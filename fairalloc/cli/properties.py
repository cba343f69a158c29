"""``fairalloc check``, ``verify``, ``falsify`` and ``table2``: properties, lies and counterexamples."""

from __future__ import annotations

from pathlib import Path

import click
from tabulate import tabulate

from fairalloc.cli.options import (
    budget as check_budget,
)
from fairalloc.cli.options import (
    engine_checks,
    engine_options,
    format_option,
    load_case,
    make_folder,
    method_option,
    output_path,
    queue_space,
    space,
    space_options,
    write_yaml,
)
from fairalloc.cli.options import (
    mechanisms as mechanism_names,
)
from fairalloc.cli.options import (
    seed as check_seed,
)
from fairalloc.cli.render import emit, json_doc, mark, yaml_doc
from fairalloc.core import limits, registry
from fairalloc.core.allocation import _fmt
from fairalloc.core.errors import FairallocError, unknown


@click.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanisms", metavar="M[,M...]", help="Mechanisms (default: drf).")
@click.option(
    "-p",
    "--property",
    "property",
    metavar="P[,P...]",
    help="Properties (default: all eight; all twelve on a queue case): sharing_incentive (si), "
    "strategy_proofness (sp), envy_freeness (ef), pareto_efficiency (pe), single_resource_fairness (srf), "
    "bottleneck_fairness (bf), population_monotonicity (pm), resource_monotonicity (rm), "
    "guarantee_honoured (gh), limit_respected (lr), no_overcommit (no), work_conserving (wc).",
)
@click.option("--variant", help="Check the named variant of the case instead of the case itself.")
@method_option()
@click.option(
    "--budget", type=int, default=500, show_default=True, help="Verifier evaluations per user for strategy-proofness."
)
@click.option("--seed", type=int, default=0, show_default=True)
@format_option("json")
def check(case, mechanisms, property, variant, method, budget, seed, fmt):
    """Check fairness properties of mechanisms on CASE, with witnesses for violations.

    \b
    Example:
      fairalloc check drf-theorem-1 -m asset,drf -p si
      fairalloc check drf-theorem-4 -m ceei -p sp --format json

    Pareto efficiency is decided by an LP; strategy-proofness by the manipulation verifier (a
    search within --budget, not a proof). CASE is a YAML file or a bundled case name.
    """
    from fairalloc.analysis.properties import check as run_checks
    from fairalloc.analysis.properties import property_names

    # the -p option's python name is the library's parameter name 'property': its messages show as --property
    names = mechanism_names(mechanisms, ["drf"])
    for name in names:
        property_names(property, registry.get(name).kind == "dynamic")
    check_budget(budget)
    check_seed(seed)
    loaded = load_case(case)
    instance = _variant(loaded, variant)
    reports = []
    for name in names:
        results = run_checks(
            name, loaded if variant is None else instance, property, method=method, budget=budget, seed=seed
        )
        reports.append(
            {
                "case": instance.name,
                "mechanism": name,
                "properties": {p: r.to_dict() for p, r in results.items()},
                "_results": results,
            }
        )
    if fmt == "json":
        emit(json_doc([{k: v for k, v in r.items() if k != "_results"} for r in reports]))
        return
    for r in reports:
        rows = [
            [p, mark(res), _margin(res.margin), res.summary() if not res.holds or not res.applicable else res.note]
            for p, res in r["_results"].items()
        ]
        emit(
            f"{r['mechanism']} on {r['case']}\n"
            + tabulate(rows, ["property", "holds", "margin", "witness / note"], disable_numparse=True)
            + "\n"
        )


def _variant(case, variant):
    if variant is None:
        return case.instance
    if variant not in case.variants:
        raise FairallocError(f"--variant: {unknown('variant', variant, case.variants)} of {case.name}")
    return case.variants[variant]


def _margin(v) -> str:
    return "" if v is None else f"{v:.4g}"


@click.command()
@click.argument("case")
@click.option("-m", "--mechanism", "mechanism_name", default="ceei", show_default=True, help="Mechanism to attack.")
@click.option("--user", "user_name", help="Only this user (default: every user).")
@click.option("--budget", type=int, default=2000, show_default=True, help="Mechanism evaluations per user.")
@click.option("--seed", type=int, default=0, show_default=True)
@method_option()
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the best profitable lie as a YAML case (with a 'misreport' variant).",
)
@format_option("json")
def verify(case, mechanism_name, user_name, budget, seed, method, out, fmt):
    """Search the reports that raise a user's true task count (strategy-proofness attack).

    \b
    Example:
      fairalloc verify drf-theorem-4 -m ceei --user 1 --budget 2000 --out lie.yaml

    Grid and random perturbations of the reported demand (least contended resources first),
    then a local pattern search, then the best lie rounded while its gain survives.
    """
    from fairalloc.analysis.manipulation import check_search
    from fairalloc.analysis.manipulation import verify as run_verify

    check_budget(budget)
    check_seed(seed)
    if out is not None:
        output_path(out, "--out")
    loaded = load_case(case)
    if user_name is not None:
        loaded.instance.user_index(user_name)
    check_search(loaded.instance, 1 if user_name is not None else loaded.instance.n, budget)
    result = run_verify(mechanism_name, loaded, user_name, budget=budget, seed=seed, method=method)
    if out is not None and result.witness is not None:
        write_yaml(out, result.witness)
    if fmt == "json":
        emit(json_doc(result.to_dict()))
        return
    emit(_lies(result) + (f"\nwrote {out}" if out is not None and result.witness is not None else ""))


def _lies(result) -> str:
    """The verifier's answer: a headline and one row per user searched."""
    rows = []
    for lie in result.lies:
        report = ", ".join(f"{k}={_fmt(v, 4)}" for k, v in lie.reported_demand.items())
        shrunk = lie.shrunk and ", ".join(f"{k}={_fmt(v, 4)}" for k, v in lie.shrunk["reported_demand"].items())
        rows.append(
            [
                lie.user,
                _fmt(lie.truthful_tasks, 4),
                _fmt(lie.manipulated_tasks, 4),
                _fmt(lie.gain, 4),
                f"{lie.relative_gain:.1%}" if lie.profitable and lie.relative_gain < float("inf") else "-",
                report if lie.profitable else "(truth)",
                shrunk or "",
                lie.evaluations,
            ]
        )
    return (
        f"{result.mechanism} on {result.case}: "
        + ("PROFITABLE LIE FOUND" if result.to_dict()["profitable"] else "no profitable lie found")
        + f" ({result.evaluations} evaluations"
        + (f", {result.evaluations_per_second:.0f}/s)\n" if result.seconds > 0 else ")\n")
        + tabulate(
            rows,
            ["user", "truthful", "manipulated", "gain", "relative", "best report", "rounded report", "evaluations"],
            disable_numparse=True,
        )
    )


@click.command()
@click.option("-m", "--mechanism", "mechanism_name", required=True, help="Mechanism to attack.")
@click.option("-p", "--property", "property", required=True, help="Property to break (name or abbreviation).")
@space_options
@click.option("--trials", type=int, default=1000, show_default=True, help="Random instances to try at most.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--budget", type=int, default=200, show_default=True, help="Verifier evaluations per user (sp).")
@method_option()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the shrunk counterexample case.")
@engine_options
@format_option("json")
def falsify(
    mechanism_name,
    property,
    users,
    resources,
    zeros,
    weights,
    bounds,
    queues,
    trials,
    seed,
    budget,
    method,
    out,
    workers,
    dask_address,
    results,
    progress,
    fmt,
):
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

    registry.get(mechanism_name)
    (prop,) = property_names(property)
    instances = space(users, resources, zeros, weights, bounds, queue_space(queues, [mechanism_name]))
    check_budget(budget), check_seed(seed)
    engine_checks(workers, results, trials)
    if out is not None:
        output_path(out, "--out")
    result = run_falsify(
        mechanism_name,
        prop,
        space=instances,
        trials=trials,
        seed=seed,
        budget=budget,
        method=method,
        out=results,
        workers=workers,
        dask_address=dask_address,
        progress=progress,
    )
    if out is not None and result.case is not None:
        write_yaml(out, result.case)
    if fmt == "json":
        emit(json_doc(result.to_dict()))
        return
    found = f"; the first violation is trial {result.first_trial}, counting from 0" if result.found else ""
    lines = [
        f"{result.mechanism} / {result.property}: {result.summary}  "
        f"({result.trials} trials checked{found}; {result.seconds:.1f} s)"
    ]
    if result.case is not None:
        lines += ["", yaml_doc(result.case).rstrip()]
        if out is not None:
            lines.append(f"wrote {out}")
    emit("\n".join(lines))


@click.command()
@click.option("-m", "--mechanism", "mechanisms", metavar="M[,M...]", help="Mechanisms (default: all static).")
@click.option(
    "-p",
    "--property",
    "property",
    metavar="P[,P...]",
    help="Properties (default: all eight; all twelve on queue instances).",
)
@space_options
@click.option("--trials", type=int, default=200, show_default=True, help="Random instances per cell.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--budget", type=int, default=100, show_default=True, help="Verifier evaluations per user (sp).")
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each cell's counterexample as a YAML case into this folder.",
)
@engine_options
@format_option("json")
def table2(
    mechanisms,
    property,
    users,
    resources,
    zeros,
    weights,
    bounds,
    queues,
    trials,
    seed,
    budget,
    out_dir,
    workers,
    dask_address,
    results,
    progress,
    fmt,
):
    """Empirical Table 2 of the DRF paper: properties x mechanisms.

    Each cell says "holds on N instances" or shows the shrunk counterexample found, for every
    registered static mechanism (yours included).  A cell stops at its first counterexample (the
    lowest-numbered trial that fails, however many workers), the others run every trial.  With
    --queues (the default when a mechanism is a production policy) the instances are random queue
    cases and the table has twelve rows.

    \b
    Example:
      fairalloc table2 -m drf,mesos-drf --queues --trials 20 --out-dir counterexamples
    """
    from fairalloc.analysis.falsify import table2 as run_table2
    from fairalloc.analysis.properties import property_names

    names = mechanism_names(mechanisms, registry.available("static", families=False))
    instances = space(users, resources, zeros, weights, bounds, queue_space(queues, names))
    chosen = property_names(property, queues=instances.queues)
    check_budget(budget), check_seed(seed)
    engine_checks(workers, results, trials)
    if len(names) * len(chosen) * trials > limits.MAX_TRIALS:
        raise FairallocError(
            f"--trials: {len(names)} mechanisms x {len(chosen)} properties x {trials} trials = "
            f"{len(names) * len(chosen) * trials} trials, above the limit of {limits.MAX_TRIALS} "
            f"(fairalloc.core.limits.MAX_TRIALS)"
        )
    if out_dir is not None:
        output_path(out_dir, "--out-dir", folder=True)
    cells = run_table2(
        names,
        chosen,
        space=instances,
        trials=trials,
        seed=seed,
        budget=budget,
        out=results,
        workers=workers,
        dask_address=dask_address,
        progress=progress,
    )
    if out_dir is not None:
        make_folder(out_dir)
        for cell in cells:
            if cell.case is not None:
                write_yaml(out_dir / f"{cell.case['name']}.yaml", cell.case)
    if fmt == "json":
        emit(json_doc([c.to_dict() for c in cells]))
        return
    grid = {(c.mechanism, c.property): c for c in cells}
    rows = [
        [
            p,
            *(
                ("Y  " if not grid[(m, p)].found else "no ") + grid[(m, p)].summary.replace("VIOLATED: ", "")
                for m in names
            ),
        ]
        for p in chosen
    ]
    emit(tabulate(rows, ["property", *names], disable_numparse=True, maxcolwidths=[None] + [48] * len(names)))
