"""``fairalloc whatif CASE WORKLOAD --set PATH=VALUE``: a queue case changed and replayed beside the
case as it is (:mod:`fairalloc.scheduling.whatif`), and when a submitted job would start."""

from __future__ import annotations

import csv
import io
import math
import string
from pathlib import Path

import click
from tabulate import tabulate

from fairalloc.cli.options import ENGINE_OPTIONS, bounded, format_option, load_case, mechanisms, output_path
from fairalloc.cli.render import emit, json_doc
from fairalloc.core import limits
from fairalloc.core.decimals import shortest
from fairalloc.core.errors import FairallocError

#: how the table names each measure
LABELS = {
    "entitlement_share": "entitlement share",
    "wait_mean": "mean wait (s)",
    "wait_p95": "p95 wait (s)",
    "completed": "completed",
    "preemptions": "preemptions",
    "lost_job_seconds": "lost work (job-s)",
}


WORKERS, DASK, _, PROGRESS = ENGINE_OPTIONS


@click.command()
@click.argument("case")
@click.argument("workloads", nargs=-1, required=True, metavar="WORKLOAD [WORKLOAD...]")
@click.option(
    "--set", "sets", multiple=True, metavar="PATH=VALUE", help="One change of alternative A (repeat: all together)."
)
@click.option(
    "--alt",
    "alts",
    multiple=True,
    metavar="'PATH=VALUE,...'",
    help="One more alternative: its changes separated by commas (repeat for more; named B, C, ...).",
)
@click.option("--scheduler", "schedulers", metavar="NAMES", help="Policies, comma-separated (default: the case's).")
@click.option("--submit", "job_file", metavar="JOB.yaml", help="A job (as a workload gives one): when would it start?")
@click.option("--at", "at", type=float, metavar="TIME", help="Its submit time in seconds (default: the job's submit).")
@click.option(
    "--grid",
    "grids",
    multiple=True,
    metavar="'PATH=V1|V2|...'",
    help="A sweep: every combination of the values (repeat per path), one row per run, into --out.",
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="--grid's rows (JSON lines; resumable).")
@WORKERS
@DASK
@PROGRESS
@format_option("json", "csv", help="Output format.")
def whatif(case, workloads, sets, alts, schedulers, job_file, at, grids, out, workers, dask_address, progress, fmt):
    """What if CASE were configured otherwise: WORKLOAD replayed on the change beside the case.

    \b
    Examples (bundled files):
      fairalloc whatif replay-two-teams two-teams-day --set users.team-a.limit.cpu=4 --scheduler yarn-fair,drf
      fairalloc whatif replay-two-teams two-teams-day --scheduler kueue --set 'groups={org: {}}' \\
          --set users.team-a.group=org --set users.team-b.group=org --alt scheduler=drf
      fairalloc whatif replay-two-teams two-teams-day --scheduler kueue --at 600 --format json \\
          --submit 'probe: {queue: team-b, request: {cpu: 1, memory: 2}, runtime: 300}'

    PATH is the case's YAML keys joined by dots (users.team-a.weight, users.research.lending_limit.gpu,
    settings.cluster_queues.team-a.preemption.reclaim_within_cohort; 'scheduler' is the case's
    policy); VALUE is YAML (3, Any, '{cpu: 4}', null). The --set changes form alternative A, each
    --alt one more. Every alternative is replayed under each scheduler beside the case unchanged:
    per queue the entitlement share, mean and p95 wait, jobs completed, preemptions and lost work,
    their differences, and sentences for the largest changes. With --submit (job.yaml:
    'my-job: {queue: team-a, request: {cpu: 2}, runtime: 600}') every run also predicts when that
    job starts, its place in its queue at submit, and what it waited for last (docs/whatif.md).

    A sweep instead of alternatives: each --grid 'PATH=V1|V2|...' is an axis (values split at '|'
    outside brackets and quotes), and every combination of the axes' values, plus the case as it
    is, is replayed on each WORKLOAD under each scheduler: one row per run (the per-queue measures)
    streamed to --out ROWS.jsonl, in parallel (--workers, or a Dask cluster with --dask). Rerun the
    same command to resume: only the rows the file lacks run; a file of another grid is refused.
    The summary (a line per run and queue) is read back from the file.
    """
    from fairalloc.scheduling import whatif as scenarios

    sweep_options = {"--out": out, "--workers": workers, "--dask": dask_address, "--progress": progress}
    if grids:
        refused = {"--set": sets, "--alt": alts, "--submit": job_file, "--at": at}
        _sweep(case, workloads, grids, schedulers, sweep_options, fmt, refused)
        return
    given = next((name for name, value in sweep_options.items() if value is not None), None)
    if given is not None:
        raise FairallocError(f"{given}: an option of a sweep (give --grid PATH=V1|V2|...)")
    if len(workloads) > 1:
        raise FairallocError(f"WORKLOAD: {len(workloads)} workloads need --grid (one row per run)")
    workload = workloads[0]
    if at is not None and job_file is None:
        raise FairallocError("--at: the submit time of --submit's job (give --submit JOB.yaml)")
    if at is not None and not (math.isfinite(at) and at >= 0):
        raise FairallocError(f"--at: a time in seconds >= 0 (got {at:g})")
    names = iter(string.ascii_uppercase)
    alternatives = []
    if sets:
        alternatives.append(scenarios.Alternative(next(names), tuple(scenarios.parse_change(s) for s in sets)))
    for text in alts:
        name = next(names, None)
        if name is None:
            raise FairallocError("--alt: at most 26 alternatives")
        alternatives.append(scenarios.parse_alternative(text, name))
    if not alternatives and job_file is None:
        raise FairallocError("--set: give a change (--set PATH=VALUE or --alt), or a job to place (--submit)")
    submit = None if job_file is None else _job(job_file, at)
    loaded = load_case(case)
    chosen = mechanisms(schedulers, [loaded.policy or "drf"]) if schedulers else None
    report = scenarios.whatif(loaded, workload, alternatives, chosen, submit)
    if fmt == "json":
        emit(json_doc(report.to_dict()))
    elif fmt == "csv":
        emit(_csv(report))
    else:
        emit(_table(report))


def _job(given: str, at: float | None):
    """``--submit``'s job: a file, or (no file of that name, and a mapping's colon in it) the job
    itself as YAML, ``'probe: {queue: team-a, request: {cpu: 2}}'``, named ``--submit``."""
    from fairalloc.io.cases import _file, read_yaml_file, read_yaml_text
    from fairalloc.scheduling.whatif import read_job

    if ":" in given and not Path(given).exists():
        name, spec = read_job(read_yaml_text(given, "--submit"), "--submit")
    else:
        name, spec = read_job(read_yaml_file(given, "a job needs 'queue' and 'request'"), _file(given))
    return name, spec if at is None else spec.model_copy(update={"submit": at})


def _table(report) -> str:
    parts = [f"{report.workload} on {report.case}"]
    parts += [f"  {a.name}: {a.label}" for a in report.alternatives]
    for s in dict.fromkeys(r.scheduler for r in report.runs if r.alternative == "baseline"):
        mine = [c for c in report.comparisons if c.scheduler == s]
        parts.append(f"\n{s}: baseline" + (" and each alternative" if mine else ""))
        parts.append(_side_by_side(report.run(s, "baseline"), mine))
        for c in mine:
            parts += [f"  {c.alternative}: {line}" for line in c.sentences] or [f"  {c.alternative}: no change."]
    predictions = [r for r in report.runs if r.prediction is not None]
    if predictions:
        p0 = predictions[0].prediction
        parts.append(f"\nJob {p0.job} ({p0.queue}, submitted at t={p0.submit:g}):")
        parts += [f"  {r.scheduler}, {r.alternative}: {_predicted(r.prediction)}" for r in predictions]
    return "\n".join(parts)


def _side_by_side(base, comparisons) -> str:
    """The baseline's measures per queue, then each alternative's and its change."""
    header = ["queue", "measure", "baseline"]
    for c in comparisons:
        under = "" if c.run_scheduler == base.scheduler else f" ({c.run_scheduler})"
        header += [f"{c.alternative}{under}", "change"]
    rows = []
    for q, measures in base.queues.items():
        for k, m in enumerate(LABELS):
            row = [q if k == 0 else "", LABELS[m], _cell(measures[m], m)]
            for c in comparisons:
                cell = c.queues[q][m]
                row += [_cell(cell["value"], m), _cell(cell["change"], m, signed=True)]
            rows.append(row)
    return tabulate(rows, header, disable_numparse=True)


def _predicted(p) -> str:
    from fairalloc.scheduling.whatif import duration

    start = "not within the workload" if p.start is None else f"starts at t={p.start:g} (waits {duration(p.wait)})"
    text = f"{start}; position {p.position} in {p.queue} at submit"
    if p.last_wait is not None:
        text += f"; at t={p.last_wait:g} it waited for: " + "; ".join(why for _, why in p.waited_for)
    return text


def _cell(v, measure: str, signed: bool = False) -> str:
    if v is None:
        return "-"
    if measure == "entitlement_share":
        return f"{v:+.1%}" if signed else f"{v:.1%}"
    return f"{v:+.4g}" if signed else f"{v:.4g}"


def _csv(report) -> str:
    """One row per scheduler, alternative (``baseline`` first), queue and measure; ``run_scheduler``:
    the policy the alternative ran under (its own when it sets one)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["scheduler", "alternative", "run_scheduler", "queue", "measure", "value", "change"])
    for s in dict.fromkeys(r.scheduler for r in report.runs if r.alternative == "baseline"):
        base = report.run(s, "baseline")
        rows = [(base, {q: {m: {"value": v} for m, v in row.items()} for q, row in base.queues.items()})]
        rows += [(report.run(c.run_scheduler, c.alternative), c.queues) for c in report.comparisons if c.scheduler == s]
        for run, queues in rows:
            lead = [s, run.alternative, run.scheduler]
            for q, row in queues.items():
                writer.writerows([*lead, q, m, _plain(row[m]["value"]), _plain(row[m].get("change"))] for m in LABELS)
            p = run.prediction
            if p is not None:
                writer.writerow([*lead, p.queue, "job_start", _plain(p.start), ""])
                writer.writerow([*lead, p.queue, "job_position", _plain(p.position), ""])
    return out.getvalue()


def _sweep(case, workloads, grids, schedulers, options, fmt, refused) -> None:
    """``--grid``: every input checked, then the runs missing from ``--out`` swept into it; the
    summary is read back from the file, so a resumed sweep reports every row."""
    from fairalloc.scheduling import whatif_sweep

    given = next((name for name, value in refused.items() if value not in (None, ())), None)
    if given is not None:
        raise FairallocError(f"{given}: not with --grid (a sweep's rows are the grid's points and the baseline)")
    if options["--out"] is None:
        raise FairallocError("--grid: give --out ROWS.jsonl (one row per run; rerun the same command to resume)")
    out = output_path(options["--out"], "--out")
    if options["--workers"] is not None:
        bounded(options["--workers"], "--workers", limits.MAX_WORKERS, "MAX_WORKERS")
    axes = [whatif_sweep.parse_axis(text) for text in grids]
    loaded = load_case(case)
    chosen = mechanisms(schedulers, [loaded.policy or "drf"]) if schedulers else None
    g = whatif_sweep.grid(loaded, list(workloads), chosen, axes)
    rows = _swept(g, out, options)
    if fmt == "json":
        emit(json_doc(rows))
    elif fmt == "csv":
        header, body = _summary(g, rows, list(LABELS), _plain)
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows([header, *body])
        emit(text.getvalue())
    else:
        header, body = _summary(g, rows, list(LABELS.values()), _cell)
        title = f"{loaded.name}: {len(rows)} runs in {out}"
        emit(title + "\n" + tabulate(body, header, disable_numparse=True))


def _swept(g, out: Path, options) -> list[dict]:
    """Run every row of ``g`` missing from ``out``, then all of them, read back from the file (a
    resumed sweep reports the rows of its earlier runs too), by trial id."""
    from functools import partial

    from fairalloc.analysis.sweep import read_results, run_sweep
    from fairalloc.scheduling.whatif_sweep import DESC, grid_trial

    task = partial(grid_trial, g=g)
    workers, dask_address, progress = options["--workers"], options["--dask"], options["--progress"]
    run_sweep(
        task,
        range(g.runs),
        out,
        workers=workers,
        dask_address=dask_address,
        progress=progress,
        desc=DESC,
        meta=g.meta(),
    )
    return [r for r in read_results(out) if r["trial"] < g.runs]


#: a sweep's summary: the setting of a baseline row (the case's own value)
AS_IN_CASE = "(case)"


def _summary(g, rows, measures: list[str], cell) -> tuple[list[str], list[list[str]]]:
    """One line per run and queue: the run's workload, policy and settings, then the queue's measures."""
    paths = [a.path for a in g.axes]
    header = ["trial", "workload", "scheduler", *paths, "queue", *measures]
    body = []
    for row in rows:
        lead = [str(row["trial"]), row["workload"], row["scheduler"]]
        lead += [row["settings"].get(p, AS_IN_CASE) for p in paths]
        body += [[*lead, q, *(cell(values[m], m) for m in LABELS)] for q, values in row["queues"].items()]
    return header, body


def _plain(v, measure: str | None = None) -> str:
    return "" if v is None else str(shortest(v)) if isinstance(v, float) else str(v)


__all__ = ["whatif"]
