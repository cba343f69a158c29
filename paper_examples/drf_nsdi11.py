"""Regenerate the DRF paper's examples (Ghodsi et al., NSDI 2011) from fairalloc.

Writes into OUT (default ``out/drf_nsdi11``):

* ``figure4.png`` / ``figure4.svg``: the section 4.1 comparison in the style of Figure 4: for DRF,
  Asset Fairness and CEEI, each resource's share taken by user A and user B;
* ``section_4_1.md``: the three allocations (tasks, exact fractions, bundles, dominant shares);
* ``theorems.md`` / ``theorems.csv``: Theorems 1-6, every number and claim of the theorem cases
  recomputed (``fairalloc reproduce`` rows), with the slips of the source texts;
* ``table2.md`` / ``table2.json``: an empirical Table 2 from the properties engine (random
  instances; each cell "holds on N instances" or the shrunk counterexample).

Deterministic: running it twice gives the same files.

    python paper_examples/drf_nsdi11.py [--out DIR] [--trials N] [--seed S] [--workers K]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tabulate import tabulate  # noqa: E402

import fairalloc  # noqa: E402
from fairalloc.analysis.falsify import table2  # noqa: E402
from fairalloc.analysis.reproduce import reproduce  # noqa: E402

MECHANISMS = [("drf", "DRF"), ("asset", "Asset Fairness"), ("ceei", "CEEI")]
THEOREMS = [f"drf-theorem-{k}" for k in range(1, 7)]
COLOURS = {"A": "#4C72B0", "B": "#DD8452"}


def figure_4(out: Path) -> list[Path]:
    case = fairalloc.load_case("drf-section-4-1")
    inst = case.instance
    plt.rcParams.update({"svg.hashsalt": "fairalloc", "font.size": 10})
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.6), sharey=True)
    for ax, (name, title) in zip(axes, MECHANISMS):
        alloc = fairalloc.solve(inst, name)
        shares = alloc.bundles / inst.capacity * 100  # % of each resource, per user
        bottom = [0.0] * inst.m
        for i, user in enumerate(inst.users):
            bars = ax.bar(
                ["CPU", "Memory"],
                shares[i],
                bottom=bottom,
                color=COLOURS[user],
                width=0.6,
                edgecolor="black",
                linewidth=0.6,
                label=f"User {user}",
            )
            for bar, value, base in zip(bars, shares[i], bottom):
                if value > 4:
                    ax.text(
                        bar.get_x() + bar.get_width() / 2,
                        base + value / 2,
                        f"{value:.0f}%",
                        ha="center",
                        va="center",
                        color="white",
                        fontsize=9,
                        fontweight="bold",
                    )
            bottom = [b + v for b, v in zip(bottom, shares[i])]
        exact = ", ".join(f"{u}: {v}" for u, v in zip(inst.users, alloc.exact))
        ax.set_title(f"{title}\n(tasks {exact})", fontsize=10)
        ax.set_ylim(0, 100)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("share of the resource (%)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=9, frameon=False)
    fig.suptitle("Section 4.1: 9 CPUs, 18 GB; A = <1 CPU, 4 GB>, B = <3 CPUs, 1 GB>", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    paths = [out / "figure4.png", out / "figure4.svg"]
    fig.savefig(paths[0], dpi=150, metadata={"Software": None})
    fig.savefig(paths[1], metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return paths


def section_4_1(out: Path) -> Path:
    inst = fairalloc.load_case("drf-section-4-1").instance
    rows = []
    for name, title in MECHANISMS:
        alloc = fairalloc.solve(inst, name)
        for i, user in enumerate(inst.users):
            rows.append(
                [
                    title,
                    user,
                    f"{alloc.tasks[i]:.4f}",
                    str(alloc.exact[i]),
                    "<" + ", ".join(f"{v:.2f}" for v in alloc.bundles[i]) + ">",
                    f"{alloc.dominant_shares[i]:.4f}",
                ]
            )
    path = out / "section_4_1.md"
    path.write_text(
        "# Section 4.1: DRF, Asset Fairness and CEEI\n\n"
        + tabulate(
            rows, ["mechanism", "user", "tasks", "exact", "bundle <CPU, GB>", "dominant share"], tablefmt="github"
        )
        + "\n"
    )
    return path


def theorems(out: Path) -> list[Path]:
    rows = reproduce(THEOREMS)
    head = ["case", "kind", "claim", "source value", "computed value", "status"]
    table = [[r.case, r.kind, r.claim, r.source, r.computed, r.status] for r in rows]
    md = out / "theorems.md"
    md.write_text(
        "# Theorems 1-6: every number and claim recomputed\n\n"
        + tabulate(table, head, tablefmt="github")
        + f"\n\n{sum(r.status == 'ok' for r in rows)} reproduced, "
        f"{sum(r.status == 'erratum' for r in rows)} errata of the sources, "
        f"{sum(r.status == 'MISMATCH' for r in rows)} mismatches.\n"
    )
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(head)
    writer.writerows(table)
    path = out / "theorems.csv"
    path.write_text(buf.getvalue())
    return [md, path]


def empirical_table_2(out: Path, trials: int, seed: int, workers: int | None) -> list[Path]:
    cells = table2(["drf", "asset", "ceei"], trials=trials, seed=seed, budget=100, workers=workers, progress=None)
    paper = {
        ("asset", "sharing_incentive"),
        ("asset", "bottleneck_fairness"),
        ("asset", "resource_monotonicity"),
        ("ceei", "strategy_proofness"),
        ("ceei", "population_monotonicity"),
        ("ceei", "resource_monotonicity"),
        ("drf", "resource_monotonicity"),
    }
    grid = {(c.mechanism, c.property): c for c in cells}
    props = list(dict.fromkeys(c.property for c in cells))
    rows = []
    for p in props:
        row = [p]
        for m, _ in MECHANISMS:
            cell = grid[(m, p)]
            agrees = cell.found == ((m, p) in paper)
            row.append(
                ("no: " if cell.found else "Y: ")
                + cell.summary.replace("VIOLATED: ", "")
                + ("" if agrees else "  (DIFFERS FROM THE PAPER)")
            )
        rows.append(row)
    md = out / "table2.md"
    md.write_text(
        f"# Empirical Table 2 ({trials} random instances per cell, seed {seed})\n\n"
        + tabulate(rows, ["property", *(t for _, t in MECHANISMS)], tablefmt="github")
        + "\n"
    )
    js = out / "table2.json"
    js.write_text(
        json.dumps([{k: v for k, v in c.to_dict().items() if k != "seconds"} for c in cells], indent=2) + "\n"
    )
    return [md, js]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/drf_nsdi11", help="output folder (default: out/drf_nsdi11)")
    parser.add_argument("--trials", type=int, default=100, help="random instances per Table 2 cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None, help="local workers (default: all cores)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = [
        *figure_4(out),
        section_4_1(out),
        *theorems(out),
        *empirical_table_2(out, args.trials, args.seed, args.workers),
    ]
    for path in written:
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
