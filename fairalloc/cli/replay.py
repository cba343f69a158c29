"""``fairalloc simulate WORKLOAD --case CASE``: a job workload replayed against a queue case under
registered mechanisms' online forms (:mod:`fairalloc.scheduling.replay`).

The job-workload mode of ``simulate``: ``--case`` selects it (the command's other mode replays
task workloads of the paper simulator), so one command replays both kinds and ``--scheduler``
names what shares in each.  Here a scheduler is a registered mechanism, as ``solve`` names it
(the scheduler's own online rules where it has them, the generic adapter otherwise); left out,
the case's ``policy`` (else ``drf``).  ``--plot DIR`` and ``--report FILE.html`` draw each run's
queues over time (:mod:`fairalloc.scheduling.replay_charts`, :mod:`fairalloc.cli.replay_figures`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from fairalloc.cli.options import load_case, mechanisms, output_path
from fairalloc.cli.render import emit, json_doc
from fairalloc.core.decimals import shortest
from fairalloc.core.errors import FairallocError
from fairalloc.core.files import write_atomically


@dataclass(frozen=True)
class Charts:
    """What to draw of the runs: ``plot``, a folder for the figures; ``report``, the HTML page."""

    plot: Path | None = None
    report: str | None = None

    def wanted(self) -> bool:
        return self.plot is not None or self.report is not None

    def check(self) -> None:
        """The paths, before any work starts."""
        if self.plot is not None:
            output_path(self.plot, "--plot", folder=True)
        if self.report is not None:
            output_path(self.report, "--report")


def simulate_jobs(
    workload: str, case_name: str, schedulers: str | None, events, progress, fmt: str, charts: Charts = Charts()
) -> None:
    """The job-workload mode of ``simulate`` (the hook in :mod:`fairalloc.cli.cluster` calls this)."""
    from fairalloc.core.registry import get
    from fairalloc.io.job_workloads import load_job_workload

    if case_name is None:
        raise FairallocError("--events: the event log is written for job workloads (give --case CASE)")
    case = load_case(case_name)
    names = mechanisms(schedulers, [case.policy or "drf"])
    if events is not None:
        output_path(events, "--events")
    charts.check()
    w = load_job_workload(workload, case.instance)
    results: list = []
    drawn: list = []
    if events is None:
        results = [_run(case, w, get(name), None, progress, charts, drawn) for name in names]
    else:
        path = Path(events)
        fmt_events = "csv" if path.suffix.lower() == ".csv" else "jsonl"

        def write(tmp: Path) -> None:
            from fairalloc.scheduling.replay import EventLog

            with tmp.open("w", encoding="utf-8", newline="") as stream:
                log = EventLog(stream, case.instance.resources, fmt_events)
                results.extend(_run(case, w, get(name), log, progress, charts, drawn) for name in names)

        write_atomically(path, write)
    title = f"{w.name} on {case.name}: {len(w.jobs)} jobs"
    _draw(charts, drawn, title)
    wrote = [f"events in {events}"] if events else []
    wrote += [f"figures in {charts.plot}"] if charts.plot is not None else []
    wrote += [f"report in {charts.report}"] if charts.report is not None else []
    _emit(results, fmt, ", ".join([title, *wrote]))


def _draw(charts: Charts, drawn: list, title: str) -> None:
    from fairalloc.cli.replay_figures import plot_runs, write_report

    if charts.plot is not None:
        plot_runs(drawn, charts.plot)
    if charts.report is not None:
        write_report(drawn, Path(charts.report), title)


def _run(case, w, mechanism, log, progress, charts: Charts, drawn: list):
    """One replay; with charts wanted, its chart data appended to ``drawn``."""
    from fairalloc.core.progress import progress_bar
    from fairalloc.scheduling.replay import replay
    from fairalloc.scheduling.replay_charts import charted_replay

    if log is not None:
        log.scheduler = mechanism.name
    bar = progress_bar(total=len(w.jobs), unit="job", desc=f"simulate {mechanism.name}", progress=progress, leave=False)
    options = dict(settings=case.settings, nodes=w.nodes, log=log, workload=w.name, progress=bar.update)
    try:
        if not charts.wanted():
            return replay(case.instance, w.jobs, mechanism, **options)
        result, data = charted_replay(case.instance, w.jobs, mechanism, **options)
    finally:
        bar.close()
    drawn.append(data)
    return result


COLUMNS = (
    "queue",
    "submitted",
    "completed",
    "running",
    "waiting",
    "wait_mean",
    "wait_p50",
    "wait_p95",
    "wait_max",
    "preemptions",
    "lost_job_seconds",
    "usage_share",
    "entitlement_share",
    "entitlement_gap",
    "guarantee_gap",
)


def _rows(result) -> list[list]:
    return [[getattr(q, c) for c in COLUMNS] for q in result.queues]


def _emit(results, fmt: str, title: str) -> None:
    if fmt == "json":
        emit(json_doc([r.to_dict() for r in results]))
        return
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["scheduler", *COLUMNS])
        for r in results:
            writer.writerows([r.scheduler, *(_csv(v) for v in row)] for row in _rows(r))
        emit(out.getvalue())
        return
    parts = [title]
    for r in results:
        util = ", ".join(f"{k} {v:.1%}" for k, v in r.utilization.items())
        parts.append(
            f"\n{r.scheduler}: ended at t={r.end:g}, {r.cycles} cycles, {r.decisions} decisions; utilization {util}"
        )
        parts.append(tabulate([[_cell(v) for v in row] for row in _rows(r)], list(COLUMNS), disable_numparse=True))
    emit("\n".join(parts))


def _cell(v) -> str:
    if v is None:
        return "-"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _csv(v) -> str:
    return "" if v is None else str(shortest(v)) if isinstance(v, float) else str(v)


def refuse_job_options(given: dict) -> None:
    """The task simulator's options mean nothing to a job workload (its nodes are in the file)."""
    for option, value in given.items():
        if value is not None:
            raise FairallocError(f"{option}: an option of task workloads; a job workload gives its nodes in its file")


def refuse_task_options(fmt: str, report: str | None = None) -> None:
    """``--format csv`` and ``--report`` belong to the job-workload mode."""
    if fmt == "csv":
        raise FairallocError("--format: csv is written for job workloads (with --case); use table or json")
    if report is not None:
        raise FairallocError("--report: the HTML report is written for job workloads (give --case CASE)")


__all__ = ["Charts", "refuse_job_options", "refuse_task_options", "simulate_jobs"]
