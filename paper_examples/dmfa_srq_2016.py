"""Rerun the DMFA-SRQ paper's experiments (Zhang, Liu, Li, Zhang, Journal on Communications 2016, section 6).

Users with ``<CPU, memory>`` demands arrive in random order with random shared quantities
``q_i ~ Dirichlet(1, ..., 1)`` (uniform on the simplex: sum 1); each run is solved by DMFA-SRQ
(fast path, allocation after the last arrival) and by the static weighted-DRF optimum (Eq. 5,
weights ``q``), for every user count, ``--runs`` times. Demands come from Google cluster trace
2011 ``task_events`` files (``--trace``) or, by default, from the SYNTHETIC generator
:func:`fairalloc.scheduling.traces.synthetic_google_like` (shaped like the trace, but not the trace).

Writes into OUT (default ``out/dmfa_srq_2016``):

* ``fig3_4.png``: dominant share against shared quantity for 20 users sampled from one run
  (100 and 500 users when run; otherwise the two largest user counts), sorted by ``q``;
* ``fig5.png``: minimum dominant share by user count, both methods (mean, 5th-95th percentile);
* ``fig6.png``: sum of dominant shares; ``fig7_8.png``: CPU and memory utilisation;
* ``summary.md`` / ``summary.json``: per user count and method, the means (and spread) of every
  metric, the paired DMFA-SRQ / static comparisons and the invariants checked.

Deterministic: the same arguments give the same files (trials are seeded by
``(seed, users, run)``, whichever worker runs them). ``--results FILE`` streams the trials to a
JSON-lines file and resumes from it; more runs or user counts can be added to the same file.

    python paper_examples/dmfa_srq_2016.py [--out DIR] [--runs N] [--users 20,100,500] [--seed S]
        [--trace FILE ...] [--max-tasks K] [--results FILE] [--workers K | --dask ADDRESS]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from functools import partial
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from tabulate import tabulate  # noqa: E402

from fairalloc.analysis.sweep import run_sweep  # noqa: E402
from fairalloc.core.errors import FairallocError  # noqa: E402
from fairalloc.scheduling.traces import (
    RUN_STRIDE,
    SAMPLE_USERS,
    SYNTHETIC,
    dmfa_srq_trial,  # noqa: E402
    load_google_task_events,
    trial_id,
)

METHODS = [("dmfa", "DMFA-SRQ (dynamic)"), ("static", "weighted DRF (static, Eq. 5)")]
COLOURS = {"dmfa": "#4C72B0", "static": "#DD8452"}
METRICS = [
    ("min_share", "minimum dominant share"),
    ("min_weighted", "minimum of x_i / q_i"),
    ("sum_shares", "sum of dominant shares"),
    ("util_cpu", "CPU utilisation"),
    ("util_mem", "memory utilisation"),
]
TOL = 1e-9
FORMAT = "dmfa_srq_2016/2"  # in the results file's header: bump when a trial's content changes


# --------------------------------------------------------------------------- the sweep


def parse_users(text: str) -> list[int]:
    try:
        users = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not users or any(n < 1 for n in users) or len(set(users)) != len(users):
        raise argparse.ArgumentTypeError(f"expected distinct positive integers, got {text!r}")
    return sorted(users)


def run_trials(args) -> tuple[list[dict], dict]:
    if args.trace:
        rows = load_google_task_events(args.trace, max_tasks=args.max_tasks)
        if len(rows) < max(args.users):
            raise FairallocError(f"trace: {len(rows)} usable tasks, fewer than the {max(args.users)} users of a run")
        source = {
            "kind": "trace",
            "files": [Path(p).name for p in args.trace],
            "tasks": int(len(rows)),
            "sha256": hashlib.sha256(np.ascontiguousarray(rows).tobytes()).hexdigest(),
        }
    else:
        rows = None
        source = {
            "kind": "synthetic",
            "generator": "fairalloc.scheduling.traces.synthetic_google_like",
            "parameters": SYNTHETIC,
        }
    meta = {
        "format": FORMAT,
        "seed": args.seed,
        "demands": source,
        "shared": "dirichlet(1)",
        "sample_users": SAMPLE_USERS,
    }
    ids = [trial_id(n, run) for n in args.users for run in range(args.runs)]
    results = run_sweep(
        partial(dmfa_srq_trial, seed=args.seed, trace_rows=rows),
        ids,
        args.results,
        workers=args.workers,
        dask_address=args.dask,
        desc="dmfa-srq-2016",
        meta=meta,
    )
    return results, source


# --------------------------------------------------------------------------- the numbers


def _stats(values: np.ndarray) -> dict:
    return {
        "mean": float(values.mean()),
        "std": float(values.std()),
        "min": float(values.min()),
        "p5": float(np.percentile(values, 5)),
        "median": float(np.median(values)),
        "p95": float(np.percentile(values, 95)),
        "max": float(values.max()),
    }


def summarise(results: list[dict], users: list[int]) -> dict:
    per_n = {}
    for n in users:
        rs = [r for r in results if r["users"] == n]
        col = {k: np.array([r[k] for r in rs], dtype=float) for k in rs[0] if k not in ("sample", "source")}
        entry = {
            "runs": len(rs),
            "min_q": _stats(col["min_q"]),
            "final_M": _stats(col["final_M"]),
            "static_M": _stats(col["static_M"]),
        }
        for method, _ in METHODS:
            entry[method] = {metric: _stats(col[f"{method}_{metric}"]) for metric, _ in METRICS}
            entry[method]["discordant_pairs"] = _stats(col[f"{method}_discordant"])
        dyn, sta = col["dmfa_min_share"], col["static_min_share"]
        entry["paired"] = {
            "min_share_dmfa_below_static": float(np.mean(dyn < sta * (1 - 1e-12))),
            "min_share_ratio_dmfa_to_static": _stats(dyn / sta),
            "min_weighted_dmfa_below_static": float(
                np.mean(col["dmfa_min_weighted"] < col["static_min_weighted"] * (1 - 1e-9))
            ),
            "min_weighted_dmfa_above_static": float(
                np.mean(col["dmfa_min_weighted"] > col["static_min_weighted"] * (1 + 1e-9))
            ),
            "sum_shares_ratio_dmfa_to_static": _stats(col["dmfa_sum_shares"] / col["static_sum_shares"]),
            "util_cpu_difference": _stats(col["dmfa_util_cpu"] - col["static_util_cpu"]),
            "util_mem_difference": _stats(col["dmfa_util_mem"] - col["static_util_mem"]),
        }
        entry["monotone_in_q"] = {
            "runs_with_dmfa_nonmonotone_sample": float(np.mean(col["sample_decreases"] > 0)),
            "mean_sample_decreases": float(col["sample_decreases"].mean()),
            "runs_with_any_discordant_pair": float(np.mean(col["dmfa_discordant"] > 0)),
        }
        checks = {}
        for method, _ in METHODS:
            util = np.stack([col[f"{method}_util_cpu"], col[f"{method}_util_mem"]])
            checks[method] = {
                "sharing_incentive_min_slack": float(col[f"{method}_si_slack"].min()),
                "sharing_incentive_min_ratio": float(col[f"{method}_min_weighted"].min()),
                "min_share_at_least_min_q": bool(np.all(col[f"{method}_min_share"] >= col["min_q"] * (1 - TOL))),
                "utilization_in_0_1": bool(np.all((util >= 0) & (util <= 1 + TOL))),
                "a_resource_saturated_every_run": bool(np.all(util.max(axis=0) >= 1 - TOL)),
            }
        entry["checks"] = checks
        sample_run = next((r for r in rs if r["run"] == 0), None)
        entry["sample_run_0"] = sample_run["sample"] if sample_run else None
        per_n[str(n)] = entry
    return per_n


# --------------------------------------------------------------------------- the figures


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=130, metadata={"Software": None})
    plt.close(fig)
    return path


def _by_n(ax, summary: dict, users: list[int], metric: str, ylabel: str, *, log: bool = False) -> None:
    x = np.arange(len(users))
    for k, (method, label) in enumerate(METHODS):
        s = [summary[str(n)][method][metric] for n in users]
        mean = np.array([v["mean"] for v in s])
        lo, hi = np.array([v["p5"] for v in s]), np.array([v["p95"] for v in s])
        pos = x + (k - 0.5) * 0.22
        ax.errorbar(
            pos, mean, yerr=[mean - lo, hi - mean], fmt="o", ms=6, capsize=4, color=COLOURS[method], label=label
        )
        for px, v in zip(pos, mean):  # the value beside its marker, outside the pair
            ax.annotate(
                f"{v:.4g}",
                (px, v),
                textcoords="offset points",
                xytext=(7 if k else -7, 0),
                ha="left" if k else "right",
                va="center",
                fontsize=7,
                color=COLOURS[method],
            )
    ax.set_xticks(x, [str(n) for n in users])
    ax.set_xlim(-0.6, len(users) - 0.4)
    ax.set_xlabel("number of users")
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3, which="both" if log else "major")


def _footer(fig, first_line: str, source: dict) -> None:
    what = (
        "demands: SYNTHETIC (synthetic_google_like), not the Google trace"
        if source["kind"] == "synthetic"
        else f"demands: Google trace 2011 task_events ({source['tasks']} tasks)"
    )
    fig.text(
        0.5,
        0.01,
        f"{first_line}\nq ~ Dirichlet(1), random arrival order; {what}",
        ha="center",
        va="bottom",
        fontsize=7,
        color="0.35",
    )


def fig3_4(out: Path, summary: dict, users: list[int], source: dict) -> Path:
    shown = [n for n in (100, 500) if n in users] if {100, 500} <= set(users) else users[-2:]
    fig, axes = plt.subplots(1, len(shown), figsize=(max(6.4, 5.2 * len(shown)), 4.2), squeeze=False)
    for ax, n in zip(axes[0], shown):
        sample = np.array(summary[str(n)]["sample_run_0"])
        q, dyn, sta = sample[:, 0], sample[:, 1], sample[:, 2]
        ax.plot(q, sta, "--", color=COLOURS["static"], lw=1, label="weighted DRF (static): q M*")
        ax.plot(q, dyn, "o-", color=COLOURS["dmfa"], ms=4, lw=1, label="DMFA-SRQ")
        ax.plot(q, q, ":", color="0.5", lw=1, label="q (sharing incentive)")
        drops = np.flatnonzero(dyn[1:] < dyn[:-1] * (1 - 1e-12)) + 1
        if len(drops):
            ax.plot(q[drops], dyn[drops], "x", color="crimson", ms=8, label=f"decrease in q order ({len(drops)})")
        ax.set_title(f"{n} users: {len(q)} sampled users of run 0, sorted by q", fontsize=10)
        ax.set_xlabel("shared quantity q_i")
        ax.set_ylabel("dominant share x_i")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("Figs 3-4: dominant share against shared quantity", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    _footer(fig, "one run (run 0) per panel; dashed: the static optimum's q_i M*, proportional to q", source)
    return _save(fig, out / "fig3_4.png")


def fig_metric(out: Path, name: str, summary: dict, users: list[int], source: dict, panels, title: str) -> Path:
    fig, axes = plt.subplots(1, len(panels), figsize=(max(6.4, 5.2 * len(panels)), 4.2), squeeze=False)
    for ax, (metric, ylabel, log) in zip(axes[0], panels):
        _by_n(ax, summary, users, metric, ylabel, log=log)
        if metric.startswith("util"):
            ax.set_ylim(min(0.5, ax.get_ylim()[0]), 1.04)
    axes[0][0].legend(fontsize=8, loc="best")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    counts = ", ".join(f"{summary[str(n)]['runs']}" for n in users)
    _footer(fig, f"marker: mean over runs ({counts} runs); bar: 5th-95th percentile", source)
    return _save(fig, out / name)


# --------------------------------------------------------------------------- the report


def _g(v: float) -> str:
    return f"{v:.4g}"


def table_rows(summary: dict, users: list[int]) -> list[list[str]]:
    rows = []
    for n in users:
        for method, label in METHODS:
            s = summary[str(n)][method]
            rows.append([str(n), label.split(" (")[0]] + [_g(s[m]["mean"]) for m, _ in METRICS])
    return rows


def findings(summary: dict, users: list[int]) -> list[str]:
    """One bullet per finding of the paper's section 6: what it says, then the numbers here."""

    def per_n(fmt) -> str:
        return "; ".join(f"{n} users: {fmt(summary[str(n)])}" for n in users)

    return [
        "- Figs 3-4, paper: the dominant share is monotone non-decreasing in q. Here: share of runs whose "
        f"{SAMPLE_USERS}-user sample (sorted by q) has a decrease, and share of all user pairs ordered against q: "
        + per_n(
            lambda s: (
                f"{s['monotone_in_q']['runs_with_dmfa_nonmonotone_sample'] * 100:.1f} %, "
                f"{s['dmfa']['discordant_pairs']['mean'] * 100:.2f} %"
            )
        )
        + " (static weighted DRF: 0, its shares are proportional to q). THE PAPER'S CLAIM DOES NOT HOLD: "
        "it is not a property of DMFA-SRQ (counterexample: the bundled case dmfa-srq-shared-monotonicity, "
        "shares (0.3, 0.3, 0.4), final dominant shares (6/11, 6/11, 2/5); 'fairalloc reproduce' reports it "
        "as a refuted source claim).",
        "- Fig 5, paper: DMFA-SRQ's minimum dominant share is lower than weighted DRF's. Here: mean of "
        "min x_i, DMFA-SRQ / static, and share of runs where DMFA-SRQ is lower: "
        + per_n(
            lambda s: (
                f"{_g(s['dmfa']['min_share']['mean'])} / {_g(s['static']['min_share']['mean'])}, "
                f"{s['paired']['min_share_dmfa_below_static'] * 100:.1f} %"
            )
        )
        + ". Weighted by q (min x_i / q_i, what weighted DRF maximises): "
        + per_n(
            lambda s: (
                f"{_g(s['dmfa']['min_weighted']['mean'])} / {_g(s['static']['min_weighted']['mean'])}, "
                f"lower in {s['paired']['min_weighted_dmfa_below_static'] * 100:.1f} %"
                f", higher in {s['paired']['min_weighted_dmfa_above_static'] * 100:.1f} %"
            )
        )
        + ".",
        "- Fig 6, paper: the sums of dominant shares are close. Here: mean ratio DMFA-SRQ / static (min, max): "
        + per_n(
            lambda s: (
                f"{s['paired']['sum_shares_ratio_dmfa_to_static']['mean']:.4f} "
                f"({s['paired']['sum_shares_ratio_dmfa_to_static']['min']:.4f}, "
                f"{s['paired']['sum_shares_ratio_dmfa_to_static']['max']:.4f})"
            )
        )
        + ".",
        "- Figs 7-8, paper: CPU and memory utilisation are close, closer with more users. Here: mean "
        "difference DMFA-SRQ - static, CPU / memory: "
        + per_n(
            lambda s: (
                f"{s['paired']['util_cpu_difference']['mean']:+.4f} / {s['paired']['util_mem_difference']['mean']:+.4f}"
            )
        )
        + ".",
    ]


def write_summary(out: Path, summary: dict, users: list[int], args, source: dict) -> list[Path]:
    doc = {
        "paper": "Zhang, Liu, Li, Zhang, Journal on Communications 2016 (DMFA-SRQ), section 6",
        "seed": args.seed,
        "runs": args.runs,
        "users": users,
        "shared_quantities": "Dirichlet(1, ..., 1)",
        "demands": source,
        "per_users": summary,
    }
    js = out / "summary.json"
    js.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n")

    head = ["users", "method", *(label for _, label in METRICS)]
    lines = ["# DMFA-SRQ (JoC 2016) experiments, rerun", ""]
    if source["kind"] == "synthetic":
        lines += [
            "**Demands are SYNTHETIC** (`fairalloc.scheduling.traces.synthetic_google_like`: correlated log-normal "
            f"shaped like the Google 2011 trace's requests, parameters {json.dumps(SYNTHETIC)}), "
            "not the trace itself.",
            "",
        ]
    else:
        lines += [
            f"Demands: Google cluster trace 2011 task_events, {source['tasks']} usable tasks from "
            f"{len(source['files'])} file(s) (sha256 of the rows {source['sha256'][:16]}...).",
            "",
        ]
    lines += [
        f"{args.runs} runs per user count, seed {args.seed}; shared quantities q ~ Dirichlet(1) "
        "(uniform on the simplex), random arrival order. DMFA-SRQ: allocation after the last arrival; "
        "weighted DRF: the static optimum of Eq. 5. Means over runs:",
        "",
        tabulate(table_rows(summary, users), head, tablefmt="github"),
        "",
        "## Paired comparison (same run, DMFA-SRQ against weighted DRF)",
        "",
    ]
    rows = []
    for n in users:
        p, mono = summary[str(n)]["paired"], summary[str(n)]["monotone_in_q"]
        rows.append(
            [
                str(n),
                f"{p['min_share_dmfa_below_static'] * 100:.1f} %",
                f"{p['min_weighted_dmfa_below_static'] * 100:.1f} %",
                _g(p["min_share_ratio_dmfa_to_static"]["mean"]),
                _g(p["sum_shares_ratio_dmfa_to_static"]["mean"]),
                f"{p['util_cpu_difference']['mean']:+.4f}",
                f"{p['util_mem_difference']['mean']:+.4f}",
                f"{mono['runs_with_dmfa_nonmonotone_sample'] * 100:.1f} %",
                _g(summary[str(n)]["dmfa"]["discordant_pairs"]["mean"]),
            ]
        )
    lines += [
        tabulate(
            rows,
            [
                "users",
                "runs with DMFA min share < static",
                "runs with DMFA min x_i/q_i < static",
                "min share ratio (mean)",
                "sum ratio (mean)",
                "CPU util diff",
                "mem util diff",
                f"runs whose {SAMPLE_USERS}-user sample is not monotone in q",
                "discordant pairs (mean share)",
            ],
            tablefmt="github",
            disable_numparse=True,
        ),
        "",
        "## Invariants",
        "",
    ]
    rows = []
    for n in users:
        for method, label in METHODS:
            c = summary[str(n)]["checks"][method]
            rows.append(
                [
                    str(n),
                    label.split(" (")[0],
                    f"{c['sharing_incentive_min_slack']:.3g}",
                    f"{c['sharing_incentive_min_ratio']:.12g}",
                    "yes" if c["min_share_at_least_min_q"] else "NO",
                    "yes" if c["utilization_in_0_1"] else "NO",
                    "yes" if c["a_resource_saturated_every_run"] else "NO",
                ]
            )
    lines += [
        tabulate(
            rows,
            [
                "users",
                "method",
                "min over runs of min_i (x_i - q_i)",
                "min over runs of min_i x_i / q_i",
                "min share >= min q",
                "utilisation in [0, 1]",
                "a resource saturated in every run",
            ],
            tablefmt="github",
            disable_numparse=True,
        ),
        "",
        "## The paper's findings, measured",
        "",
        *findings(summary, users),
        "",
    ]
    md = out / "summary.md"
    md.write_text("\n".join(lines))
    return [js, md]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/dmfa_srq_2016", help="output folder (default: out/dmfa_srq_2016)")
    parser.add_argument("--runs", type=int, default=1000, help="runs per user count (default 1000)")
    parser.add_argument("--users", type=parse_users, default=[20, 100, 500], help="user counts (default 20,100,500)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--trace",
        nargs="+",
        metavar="FILE",
        help="Google 2011 task_events files (.csv or .csv.gz) instead of the synthetic generator",
    )
    parser.add_argument("--max-tasks", type=int, default=None, help="read at most this many tasks from --trace")
    parser.add_argument("--results", default=None, metavar="FILE", help="JSON-lines results file (resumable)")
    parser.add_argument("--workers", type=int, default=None, help="local workers (default: all cores)")
    parser.add_argument("--dask", default=None, metavar="ADDRESS", help="a Dask scheduler, e.g. tcp://host:8786")
    args = parser.parse_args(argv)
    if not 1 <= args.runs < RUN_STRIDE:
        parser.error(f"--runs must be in 1..{RUN_STRIDE - 1}")
    if args.seed < 0:
        parser.error("--seed must be >= 0")
    try:
        results, source = run_trials(args)
    except FairallocError as exc:
        print(f"dmfa_srq_2016: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    users = args.users
    summary = summarise(results, users)
    written = [
        fig3_4(out, summary, users, source),
        fig_metric(
            out,
            "fig5.png",
            summary,
            users,
            source,
            [("min_share", "min_i x_i (log scale)", True), ("min_weighted", "weighted: min_i x_i / q_i", False)],
            "Fig 5: minimum dominant share (left, as in the paper; right, weighted by q)",
        ),
        fig_metric(
            out,
            "fig6.png",
            summary,
            users,
            source,
            [("sum_shares", "sum of dominant shares", False)],
            "Fig 6: sum of dominant shares",
        ),
        fig_metric(
            out,
            "fig7_8.png",
            summary,
            users,
            source,
            [("util_cpu", "CPU utilisation", False), ("util_mem", "memory utilisation", False)],
            "Figs 7-8: CPU and memory utilisation",
        ),
        *write_summary(out, summary, users, args, source),
    ]
    for path in written:
        print(f"wrote {path}")
    print()
    print(tabulate(table_rows(summary, users), ["users", "method", *(label for _, label in METRICS)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
