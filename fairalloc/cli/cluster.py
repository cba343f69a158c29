"""``fairalloc schedule`` and ``simulate``: Algorithm 1 decision by decision, and cluster workloads replayed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
from tabulate import tabulate

from fairalloc.cli.options import Choice, bounded, format_option, load_case, make_folder, output_path
from fairalloc.cli.render import emit, json_doc
from fairalloc.core import limits
from fairalloc.core.errors import FairallocError, quoted
from fairalloc.core.files import write_atomically


def machines_from(specs: tuple[str, ...], m: int):
    """``--machines 3x4,8`` (three machines of 4 and 8) or ``--machines 9,18``; repeatable."""
    import numpy as np

    out: list[list[float]] = []
    for spec in specs:
        count, _, caps = spec.rpartition("x")
        try:
            values = [float(v) for v in caps.split(",")]
            copies = int(count) if count else 1
        except ValueError:
            raise FairallocError(
                f"--machines: cannot read {quoted(spec)} (write e.g. 3x4,8 for three machines of 4 and 8)"
            ) from None
        if len(values) != m or copies < 1 or any(not (v >= 0 and np.isfinite(v)) for v in values):
            raise FairallocError(f"--machines: {quoted(spec)} needs {m} non-negative capacities and a positive count")
        if len(out) + copies > limits.MAX_MACHINES:
            raise FairallocError(
                f"--machines: at most {limits.MAX_MACHINES} machines in all (got at least "
                f"{len(out) + copies}; fairalloc.core.limits.MAX_MACHINES)"
            )
        out += [values] * copies
    return np.array(out)


@click.command()
@click.argument("case")
@click.option(
    "--machines",
    multiple=True,
    metavar="[Nx]C1,C2,...",
    help="Machines instead of one pool, e.g. --machines 3x4,8 --machines 5,10 (Theorem 7 placement).",
)
@click.option(
    "--policy",
    type=Choice(["stop", "skip"]),
    default="stop",
    show_default=True,
    help="stop: Algorithm 1's pseudo-code (stop at the first task that does not fit); "
    "skip: go on with users whose tasks still fit.",
)
@click.option("--trace/--no-trace", default=True, show_default=True, help="Print every decision (Table 1).")
@format_option("json")
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
        placement = fill_machines(instance, machines_from(machines, instance.m), keep_trace=trace)
        launches = placement.trace
        summary = {
            "tasks": dict(zip(instance.users, placement.tasks.tolist())),
            "per_machine": [dict(zip(instance.users, row.tolist())) for row in placement.per_machine],
            "dominant_shares": dict(zip(instance.users, placement.dominant_shares.tolist())),
            "theorem_7_bound": placement.max_task_share,
            "largest_gap": float(placement.dominant_shares.max() - placement.dominant_shares.min()),
        }
    else:
        scheduler = DRFScheduler(instance, policy=policy)
        launches = scheduler.run() if trace else scheduler.run_counts()  # --no-trace keeps counts only
        summary = {
            "tasks": dict(zip(instance.users, scheduler.launched.tolist())),
            "dominant_shares": dict(zip(instance.users, scheduler.s.tolist())),
        }
    if fmt == "json":
        emit(
            json_doc(
                {
                    "case": instance.name,
                    "policy": policy,
                    **summary,
                    "trace": [vars(launch) for launch in launches] if trace else None,
                }
            )
        )
        return
    parts = []
    if trace:
        head, rows = table_1(launches, instance)
        if machines:
            head, rows = ["machine", *head], [[launch.machine + 1, *row] for launch, row in zip(launches, rows)]
        parts.append(tabulate(rows, head, disable_numparse=True))
    parts.append("tasks: " + ", ".join(f"{u} {t}" for u, t in summary["tasks"].items()))
    if machines:
        parts.append(
            f"largest gap between dominant shares {summary['largest_gap']:.4g} <= max-task share "
            f"{summary['theorem_7_bound']:.4g} (Theorem 7)"
        )
    emit("\n".join(parts))


GENERATED_WORKLOADS = ("drf-7.1", "drf-7.2", "mfs-small", "mfs-large", "mfs-mixed")


def workload_from(source: str, nodes: int | None, node_size: tuple[float, float]):
    """A generated set-up by name, or a CSV / YAML workload file."""
    from fairalloc.scheduling import workloads

    generators: dict[str, Callable[..., workloads.Workload]] = {
        "drf-7.1": workloads.drf_7_1,
        "drf-7.2": workloads.drf_7_2,
        "mfs-small": lambda **kw: workloads.mfs_workload("small", **kw),
        "mfs-large": lambda **kw: workloads.mfs_workload("large", **kw),
        "mfs-mixed": lambda **kw: workloads.mfs_workload("mixed", **kw),
    }
    if source in generators:
        return generators[source](**({} if nodes is None else {"nodes": nodes}))
    path = Path(source)
    if path.suffix.lower() == ".csv":
        if nodes is None:
            raise FairallocError("--nodes: a CSV workload needs --nodes and --node-size (CPU,GB)")
        return workloads.load_csv(path, nodes=nodes, node_cpu=node_size[0], node_mem=node_size[1])
    if not path.exists() and path.suffix == "":
        raise FairallocError(
            f"WORKLOAD: '{source}' is neither a file nor a generated workload ({', '.join(GENERATED_WORKLOADS)})"
        )
    return workloads.load_yaml(path)


def _node_size(text: str) -> tuple[float, float]:
    try:
        size = tuple(float(v) for v in text.split(","))
    except ValueError:
        size = ()
    if len(size) != 2 or not all(v > 0 for v in size):
        raise FairallocError(f"--node-size: expected CPU,GB with two positive numbers (got '{text}')")
    return size


@click.command()
@click.argument("workload")
@click.option(
    "--scheduler",
    "schedulers",
    default="drf,slots:4,cpu-fair,fifo",
    show_default=True,
    metavar="S[,S...]",
    help="Mechanisms, by the names 'fairalloc mechanisms' lists: drf, mfs (two-level DRF), hdrf (H-DRF "
    "over owner paths 'group/user'), slots:K (K slots per node), capacity:K, cpu-fair, fifo, quincy "
    "(min-cost flow; small clusters); ':oc' after slots / capacity / cpu-fair lets nodes be "
    "over-committed. Any other mechanism serves the owner furthest below its entitlement (or in "
    "its own queue order).",
)
@click.option("--nodes", "node_count", type=int, help="Nodes (generated workloads: override; CSV workloads: required).")
@click.option("--node-size", default="8,6", show_default=True, metavar="CPU,GB", help="Node size for CSV workloads.")
@click.option(
    "--plot",
    "plot_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write figures into this folder: utilisation and dominant shares (PNG); with --case, per run each "
    "queue's usage against its entitlement and guarantee, the waits and the preemptions (PNG and SVG).",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
@click.option("--case", "case_name", metavar="CASE", help="A queue case: replay WORKLOAD's jobs against it (below).")
@click.option("--events", type=click.Path(dir_okay=False), help="With --case: write the event log to this file.")
@click.option(
    "--report",
    type=click.Path(dir_okay=False),
    metavar="FILE.html",
    help="With --case: one self-contained HTML page of the runs' charts and per-queue tables (works offline).",
)
@format_option("json", "csv")
@click.pass_context
def simulate(ctx, workload, schedulers, node_count, node_size, plot_dir, progress, case_name, events, report, fmt):
    """Replay a cluster workload under any mechanisms' task offers (discrete-event simulation).

    \b
    Example:
      fairalloc simulate drf-7.2 --scheduler drf,slots:3,slots:6,cpu-fair --plot out/sim
      fairalloc simulate my-workload.yaml --format json

    WORKLOAD is a YAML or CSV file (see fairalloc.scheduling.workloads) or a generated set-up: drf-7.1, drf-7.2
    (the DRF paper's section 7 experiments), mfs-small, mfs-large, mfs-mixed (the MFS paper's sets).

    \b
    With --case: a queue case's jobs over time, under registered mechanisms' online forms:
      fairalloc simulate two-teams-day --case replay-two-teams --scheduler drf,mesos-drf
      fairalloc simulate jobs.yaml --case cluster.yaml --events events.csv --format csv
      fairalloc simulate two-teams-day --case replay-two-teams --plot out/charts --report out/day.html

    WORKLOAD is then a YAML or JSON file {nodes: optional, jobs: {NAME: {queue, request, pods,
    min_pods, priority, submit, runtime}}}, a JSON Lines file (.jsonl: the header, then one
    {NAME: {...}} job a line; a million jobs) or a bundled workload; --scheduler names mechanisms
    (default: the case's policy, else drf); --events writes the event log (CSV for a .csv name,
    else JSON lines); --plot and --report draw each run's queues over time (docs/charts.md).
    """
    from fairalloc.cli import replay as jobs

    if case_name is not None or events is not None:
        chosen = ctx.get_parameter_source("schedulers") != click.core.ParameterSource.DEFAULT
        jobs.refuse_job_options({"--nodes": node_count})
        charts = jobs.Charts(plot_dir, report)
        return jobs.simulate_jobs(workload, case_name, schedulers if chosen else None, events, progress, fmt, charts)
    jobs.refuse_task_options(fmt, report)
    from fairalloc.scheduling.simulator import scheduler_of
    from fairalloc.scheduling.simulator import simulate as run

    size = _node_size(node_size)
    names = [s.strip() for s in schedulers.split(",") if s.strip()]
    for name in names:
        scheduler_of(name)  # unknown names fail before any simulation
    if node_count is not None:
        bounded(node_count, "--nodes", limits.MAX_NODES, "MAX_NODES")
    if plot_dir is not None:
        output_path(plot_dir, "--plot", folder=True)
    w = workload_from(workload, node_count, size)
    results = [run(w, name, progress=progress) for name in names]
    if plot_dir is not None:
        plot_simulation(results, plot_dir)
    if fmt == "json":
        emit(json_doc([r.to_dict() for r in results]))
        return
    emit(
        f"{w.name}: {w.nodes} nodes, {len(w.jobs)} jobs\n"
        + _simulation_table(results)
        + (f"\nwrote figures into {plot_dir}" if plot_dir is not None else "")
    )


def _simulation_table(results) -> str:
    classes = sorted({c for r in results for c in r.completed})
    resources = list(dict.fromkeys(k for r in results for k in r.utilization))  # cpu, mem, then gpu, ...
    head = [
        "scheduler",
        *(f"jobs done ({c or 'all'})" for c in classes),
        *(f"mean JCT s ({c or 'all'})" for c in classes),
        *(f"{k} util." for k in resources),
        "fairness error",
    ]
    rows = [
        [
            r.scheduler,
            *(r.completed.get(c, 0) for c in classes),
            *(_seconds(r.mean_completion_time.get(c)) for c in classes),
            *(f"{r.utilization.get(k, 0.0):.1%}" for k in resources),
            f"{r.fairness_error:.4f}",
        ]
        for r in results
    ]
    return tabulate(rows, head, disable_numparse=True)


def _seconds(value) -> str:
    """A mean completion time, or '-' when no job of that class completed."""
    return "-" if value is None else f"{value:.1f}"


def plot_simulation(results, folder: Path) -> None:
    """Utilisation over time, and each scheduler's dominant shares over time, as PNG files in ``folder``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    make_folder(folder)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for r in results:
        axes[0].plot(r.samples["time"], r.samples["cpu"], label=r.scheduler)
        axes[1].plot(r.samples["time"], r.samples["mem"], label=r.scheduler)
    for ax, title in zip(axes, ("CPU", "memory")):
        ax.set_title(f"{title} utilisation"), ax.set_xlabel("time (s)"), ax.set_ylim(0, 1.05), ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    _save(fig, folder / "utilisation.png")
    fig, axes = plt.subplots(1, len(results), figsize=(4 * len(results), 3.4), squeeze=False)
    for ax, r in zip(axes[0], results):
        for owner, values in sorted(r.samples["shares"].items()):
            ax.plot(r.samples["time"], values, label=owner)
        ax.set_title(f"{r.scheduler}: dominant shares"), ax.set_xlabel("time (s)")
        ax.set_ylim(0, 1), ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    _save(fig, folder / "dominant_shares.png")


def _save(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    write_atomically(path, lambda tmp: fig.savefig(tmp, format="png", dpi=120, metadata={"Software": None}))
    plt.close(fig)
