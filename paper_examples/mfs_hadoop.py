"""The MFS paper's comparison ("A Multi-resource Fair Scheduler of Hadoop") in fairalloc's simulator.

MFS (``mfs``: two-level DRF, user groups then their jobs) against the slot-based Hadoop Fair
Scheduler (``slots:K``) and Capacity Scheduler (``capacity:K``) with K slots per node (the paper:
13 to 17), on the paper's small, large and mixed job sets
(:func:`fairalloc.scheduling.workloads.mfs_workload`, all jobs submitted at time 0). ``drf`` (DRF over
owners, jobs FIFO inside an owner) is shown as a reference.

Metrics (the paper's): throughput = jobs completed per unit time converted to jobs per ten
minutes (``jobs / makespan * 600``), also the number actually done by 600 s, and the mean job
completion time. Slot schedulers run twice: launching only where a task fits (default) and
over-committing (``:oc``: slots only, as Hadoop's slot schedulers, which do not see CPU or
memory; tasks on an over-committed node run slower).

Writes into OUT (default ``out/mfs_hadoop``): ``mfs_throughput.png``, ``mfs_completion_time.png``,
``summary.md``. Deterministic. ``--quick``: fewer nodes and slot counts (for tests).

    python paper_examples/mfs_hadoop.py [--out DIR] [--quick]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from tabulate import tabulate  # noqa: E402

from fairalloc.scheduling.simulator import simulate  # noqa: E402
from fairalloc.scheduling.workloads import mfs_workload  # noqa: E402

KINDS = ["small", "large", "mixed"]
TEN_MINUTES = 600.0


def config(quick: bool) -> dict:
    return {"nodes": 5, "slots": [13, 17]} if quick else {"nodes": 10, "slots": [13, 15, 17]}


def scheduler_names(slots) -> list[str]:
    names = ["mfs", "drf"]
    for family in ("slots", "capacity"):
        for oc in ("", ":oc"):
            names += [f"{family}:{k}{oc}" for k in slots]
    return names


def label(name: str) -> str:
    parts = name.split(":")
    if parts[0] == "slots":
        return f"Fair {parts[1]}" + (" oc" if len(parts) == 3 else "")
    if parts[0] == "capacity":
        return f"Capacity {parts[1]}" + (" oc" if len(parts) == 3 else "")
    return name.upper()


def measure(kind: str, name: str, nodes: int) -> dict:
    w = mfs_workload(kind, nodes=nodes)
    r = simulate(w, name, record_tasks=True, progress=False)
    finish: dict[str, float] = {}
    for t in r.tasks:
        finish[t.job] = max(finish.get(t.job, 0.0), t.end)
    submit = {j.name: j.submit for j in w.jobs}
    jct = [finish[j] - submit[j] for j in finish]
    done = sum(r.completed.values())
    return {
        "scheduler": name,
        "jobs": len(w.jobs),
        "done": done,
        "makespan": r.end_time,
        "throughput": done / r.end_time * TEN_MINUTES,
        "done_by_600": sum(f <= TEN_MINUTES + 1e-9 for f in finish.values()),
        "mean_jct": float(np.mean(jct)),
        "by_class": {c: v for c, v in r.mean_completion_time.items()},
        "max_load": r.max_overcommit,
        "cpu": r.utilization["cpu"],
        "mem": r.utilization["mem"],
    }


def charts(results: dict, names: list[str], out: Path) -> list[Path]:
    paths = []
    colours = {"mfs": "#C44E52", "drf": "#8172B2"}
    for fname, key, ylabel in (
        ("mfs_throughput.png", "throughput", "jobs per 10 minutes"),
        ("mfs_completion_time.png", "mean_jct", "mean job completion time (s)"),
    ):
        fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
        for ax, kind in zip(axes, KINDS):
            vals = [results[kind][n][key] for n in names]
            cols = [colours.get(n, "#4C72B0" if n.startswith("slots") else "#55A868") for n in names]
            hatches = ["//" if n.endswith(":oc") else "" for n in names]
            bars = ax.bar(range(len(names)), vals, color=cols, edgecolor="black", linewidth=0.5)
            for b, h, v in zip(bars, hatches, vals):
                b.set_hatch(h)
                ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.0f}", ha="center", va="bottom", fontsize=6)
            ax.set_xticks(range(len(names)), [label(n) for n in names], rotation=70, fontsize=7)
            ax.set_title(f"{kind} jobs"), ax.set_ylabel(ylabel), ax.grid(axis="y", alpha=0.3)
        fig.suptitle(f"MFS vs Fair (slots) vs Capacity: {ylabel} (hatched: over-commit)", fontsize=10)
        fig.tight_layout()
        path = out / fname
        fig.savefig(path, dpi=110, metadata={"Software": None})
        plt.close(fig)
        paths.append(path)
    return paths


def summary(results: dict, names: list[str], cfg: dict, quick: bool) -> list[str]:
    lines = [
        "# MFS (two-level DRF) vs Hadoop Fair and Capacity schedulers in fairalloc's simulator",
        "",
        f"Mode: {'quick' if quick else 'full'}. `mfs_workload(kind, nodes={cfg['nodes']})`: nodes of 16 CPU / "
        "32 GB, all jobs at time 0, task durations 10-30 s (maps) and 20-60 s (reduces), our choices. "
        f"Slots per node K in {cfg['slots']}. Throughput is the paper's: jobs / makespan * 600 "
        "(jobs per ten minutes); 'done by 600 s' counts jobs actually finished by then. "
        "Generated by `paper_examples/mfs_hadoop.py`; deterministic.",
        "",
    ]
    head = [
        "scheduler",
        "jobs done",
        "throughput (jobs/10 min)",
        "done by 600 s",
        "mean JCT (s)",
        "makespan (s)",
        "cpu util.",
        "mem util.",
        "max node load",
    ]
    for kind in KINDS:
        rs = results[kind]
        rows = [
            [
                n,
                r["done"],
                f"{r['throughput']:.1f}",
                r["done_by_600"],
                f"{r['mean_jct']:.1f}",
                f"{r['makespan']:.1f}",
                f"{100 * r['cpu']:.1f}%",
                f"{100 * r['mem']:.1f}%",
                f"{r['max_load']:.2f}",
            ]
            for n, r in rs.items()
        ]
        lines += [f"## {kind} workload ({rs['mfs']['jobs']} jobs)", "", tabulate(rows, head, tablefmt="github"), ""]
    lines += [
        "## The paper's finding against these numbers",
        "",
        "Paper: MFS has a higher throughput and a lower mean job completion time than the Fair "
        "and the Capacity Scheduler on the small, large and mixed workloads.",
        "",
        "| workload | baselines | MFS throughput vs best baseline | MFS mean JCT vs best baseline | verdict |",
        "|---|---|---|---|---|",
    ]
    n_ok = n_all = 0
    for kind in KINDS:
        rs = results[kind]
        m = rs["mfs"]
        for fam, fam_label in (("slots", "Fair"), ("capacity", "Capacity")):
            for oc, oc_label in (("", "fits only"), (":oc", "over-commit")):
                base = [n for n in names if n.startswith(fam + ":") and n.endswith(":oc") == bool(oc)]
                best_tp = max(base, key=lambda n: rs[n]["throughput"])
                best_jct = min(base, key=lambda n: rs[n]["mean_jct"])
                tp_ok = m["throughput"] > rs[best_tp]["throughput"] + 1e-9
                jct_ok = m["mean_jct"] < rs[best_jct]["mean_jct"] - 1e-9
                n_ok += tp_ok + jct_ok
                n_all += 2
                v = (
                    "**reproduces**"
                    if tp_ok and jct_ok
                    else "**partly** (throughput)"
                    if tp_ok
                    else "**partly** (JCT)"
                    if jct_ok
                    else "**does not reproduce**"
                )
                lines.append(
                    f"| {kind} | {fam_label} K={','.join(str(k) for k in cfg['slots'])}, {oc_label} | "
                    f"{m['throughput']:.2f} vs {rs[best_tp]['throughput']:.2f} ({best_tp}) | "
                    f"{m['mean_jct']:.1f} s vs {rs[best_jct]['mean_jct']:.1f} s ({best_jct}) | {v} |"
                )
    lines += [
        "",
        f"Overall: MFS is strictly better in {n_ok} of {n_all} (metric, workload, baseline) comparisons.",
        "",
        "Reading: with strict fitting the slot counts 13-17 hardly bind on 16-core nodes whose tasks take "
        "1-2 CPUs, so Fair, Capacity and DRF pack nodes almost identically and throughput (set by the "
        "makespan of a batch submitted at once) is within a few per cent for every scheduler. With equal "
        "queue capacities the Capacity Scheduler orders queues by running slots exactly as the Fair "
        "Scheduler orders users, so their rows coincide. MFS shares each group's "
        "allocation among all its jobs (job-level DRF), while the other schedulers run a group's jobs "
        "FIFO; with every job submitted at time 0 that is processor sharing against FIFO, which raises "
        "the mean completion time. Over-committing slot schedulers slow tasks down on crowded nodes, "
        "which is where MFS (and DRF) gain. The paper's Hadoop measurements include effects this model "
        "leaves out (locality, task start-up, swapping, stragglers).",
        "",
    ]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("out/mfs_hadoop"))
    ap.add_argument("--quick", action="store_true", help="fewer nodes and slot counts (for tests)")
    args = ap.parse_args(argv)
    cfg = config(args.quick)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    names = scheduler_names(cfg["slots"])
    results = {kind: {n: measure(kind, n, cfg["nodes"]) for n in names} for kind in KINDS}
    files = charts(results, names, out)
    text = summary(results, names, cfg, args.quick)
    (out / "summary.md").write_text("\n".join(text), encoding="utf-8")
    files.append(out / "summary.md")
    print("\n".join(text))
    print("wrote " + ", ".join(str(p) for p in files))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
