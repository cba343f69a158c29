"""``fairalloc simulate WORKLOAD --case CASE --plot DIR --report FILE.html``: a job replay's charts
(:mod:`fairalloc.scheduling.replay_charts`) as PNG and SVG figures, and as one self-contained HTML
page (plotly.js inlined from the installed ``plotly`` package, as the explorer serves it: no
network).

Per run (one per ``--scheduler``): each queue's usage against its entitlement and guarantee over
time (dominant shares of the capacity, in %; on top the queues' usage stacked), the wait-time
distribution of each queue's admissions, and the preemption timeline (victim's queue over time,
marker area by the job-seconds lost, colour by the preemptor's queue).  docs/charts.md says what
each chart reads.  The page's plotly figures are :mod:`fairalloc.scheduling.replay_plotly`'s, which
the explorer's Replay panel draws too.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path
from typing import Any

from fairalloc.cli.options import make_folder
from fairalloc.core.files import write_atomically
from fairalloc.scheduling.replay_plotly import KINDS as FIGURES
from fairalloc.scheduling.replay_plotly import figures

KINDS = ("usage", "waits", "preemptions")


def file_stem(scheduler: str) -> str:
    """A scheduler's name as a file name's start (``slots:4`` -> ``slots_4``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", scheduler)


def plot_runs(charts: list[dict[str, Any]], folder: Path) -> list[Path]:
    """Each run's three figures, PNG and SVG, into ``folder``; the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    make_folder(folder)
    written = []
    # names are shown as given (a queue named '$x$' is no formula); an SVG's titles stay text
    with matplotlib.pyplot.rc_context({"text.parse_math": False, "svg.fonttype": "none"}):
        for c in charts:
            for kind, draw in zip(KINDS, (_usage_figure, _waits_figure, _preemptions_figure)):
                fig = draw(c)
                fig.tight_layout()
                for fmt in ("png", "svg"):
                    path = folder / f"{file_stem(c['scheduler'])}-{kind}.{fmt}"
                    _save(fig, path, fmt)
                    written.append(path)
                matplotlib.pyplot.close(fig)
    return written


def _save(fig, path: Path, fmt: str) -> None:
    metadata = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
    write_atomically(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=120, metadata=metadata), suffix=f".{fmt}")


def _usage_figure(c: dict[str, Any]):
    import matplotlib.pyplot as plt
    import numpy as np

    queues, stacked = c["queues"], c["stacked"]
    fig, axes = plt.subplots(len(queues) + 1, 1, figsize=(9, 2.2 * (len(queues) + 1)), sharex=True, squeeze=False)
    below = np.zeros(len(stacked["time"]))
    top = axes[0][0]
    for q, shares in stacked["usage_share"].items():
        level = below + np.asarray(shares)
        top.fill_between(stacked["time"], below, level, step="post", label=q, alpha=0.7)
        below = level
    top.set_title(f"{c['scheduler']}: usage of the queues, stacked (dominant share of the capacity)")
    top.legend(fontsize=7, loc="upper right")
    for ax, (q, s) in zip(axes[1:, 0], queues.items()):
        ax.step(s["time"], s["usage_share"], where="post", label="usage")
        ax.step(s["time"], s["entitlement_share"], where="post", linestyle="--", label="entitlement")
        if s["guarantee_share"] is not None:
            ax.axhline(s["guarantee_share"], color="grey", linestyle=":", label="guarantee")
        ax.set_title(q, fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    for ax in axes[:, 0]:
        ax.set_ylabel(c["titles"]["share"])
        ax.set_ylim(0, None)
        ax.grid(alpha=0.3)
    axes[-1][0].set_xlabel(c["titles"]["time"])
    return fig


def _waits_figure(c: dict[str, Any]):
    import matplotlib.pyplot as plt

    queues = c["queues"]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * len(queues) + 2), 4))
    ax.boxplot([s["waits"] or [float("nan")] for s in queues.values()])  # vertical: no version's keyword
    ax.set_xticks(range(1, len(queues) + 1), list(queues))
    ax.set_title(f"{c['scheduler']}: wait from entering the queue to admission, per admission")
    ax.set_xlabel("queue")
    ax.set_ylabel(c["titles"]["wait"])
    ax.grid(alpha=0.3)
    return fig


def _preemptions_figure(c: dict[str, Any]):
    import matplotlib.pyplot as plt

    queues = list(c["queues"])
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(queues) + 1.8))
    by: dict[str, list[dict]] = {}
    for p in c["preemptions"]:
        by.setdefault(p["preemptor_queue"] or "(unknown)", []).append(p)
    for preemptor, ps in by.items():
        sizes = [20 + 80 * min(p["lost_job_seconds"] / 3600.0, 4.0) for p in ps]
        ax.scatter([p["time"] for p in ps], [queues.index(p["victim_queue"]) for p in ps], s=sizes, label=preemptor)
    if by:
        ax.legend(title="preempted for", fontsize=7)
    else:
        ax.text(0.5, 0.5, "no preemptions", transform=ax.transAxes, ha="center", va="center")
    ax.set_yticks(range(len(queues)), queues)
    ax.set_ylim(-0.5, len(queues) - 0.5)  # a queue's marks clear of the frame
    ax.set_xlim(0, max(c["end"], 1e-9))
    ax.set_title(f"{c['scheduler']}: preemptions (marker area: job-seconds lost)")
    ax.set_xlabel(c["titles"]["time"])
    ax.set_ylabel("victim's queue")
    ax.grid(alpha=0.3)
    return fig


# -- the HTML report ------------------------------------------------------------------------------

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:1em 2em}}table{{border-collapse:collapse;font-size:90%}}
td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}th:first-child,td:first-child{{text-align:left}}
.chart{{width:100%;min-height:360px}}</style>
<script>{plotly}</script></head><body><h1>{title}</h1>
{sections}
<script type="application/json" id="charts">{data}</script>
<script type="application/json" id="figures">{figures}</script>
<script>{draw}</script></body></html>
"""

#: the columns of the per-queue table (the replay's statistics)
TABLE = (
    ("submitted", "submitted"),
    ("completed", "completed"),
    ("waiting", "waiting at the end"),
    ("wait_mean", "wait mean (s)"),
    ("wait_p95", "wait p95 (s)"),
    ("preemptions", "preemptions"),
    ("lost_job_seconds", "job-s lost"),
    ("usage_share", "usage (%)"),
    ("entitlement_share", "entitlement (%)"),
    ("entitlement_gap", "entitlement gap (%)"),
    ("guarantee_gap", "guarantee gap (%)"),
)
_PERCENT = {"usage_share", "entitlement_share", "entitlement_gap", "guarantee_gap"}

#: each run's figures (:func:`fairalloc.scheduling.replay_plotly.figures`) drawn as given
_DRAW = """
const runs = JSON.parse(document.getElementById("figures").textContent);
runs.forEach((figures, k) => {
  for (const [kind, figure] of Object.entries(figures)) Plotly.newPlot(kind + "-" + k, figure);
});
"""


def report_html(charts: list[dict[str, Any]], title: str) -> str:
    """One page: per run the per-queue table and its four interactive charts, the data and the
    figures embedded as JSON, plotly.js inlined."""
    from fairalloc.explorer.docs import plotly_bundle

    sections = "\n".join(_section(k, c) for k, c in enumerate(charts))
    return _PAGE.format(
        title=escape(title),
        plotly=plotly_bundle().read_text(encoding="utf-8"),
        sections=sections,
        data=_embedded(charts),
        figures=_embedded([figures(c) for c in charts]),
        draw=_DRAW,
    )


def _embedded(value) -> str:
    """JSON for a script element: standard JSON that never ends its script early."""
    return json.dumps(value, allow_nan=False).replace("</", "<\\/")


def _section(k: int, c: dict[str, Any]) -> str:
    head = "".join(f"<th>{escape(label)}</th>" for _, label in TABLE)
    rows = "".join(
        f"<tr><td>{escape(q)}</td>" + "".join(f"<td>{_cell(key, row.get(key))}</td>" for key, _ in TABLE) + "</tr>"
        for q, row in c["table"].items()
    )
    charts = "".join(f'<div class="chart" id="{kind}-{k}"></div>' for kind in FIGURES)
    return (
        f"<h2>{escape(c['scheduler'])} on {escape(c['workload'])}</h2>"
        f"<table><tr><th>queue</th>{head}</tr>{rows}</table>{charts}"
    )


def _cell(key: str, value) -> str:
    if value is None:
        return "-"
    if key in _PERCENT:
        return f"{100 * value:.3g}"
    return f"{value:.4g}" if isinstance(value, float) else escape(str(value))


def write_report(charts: list[dict[str, Any]], path: Path, title: str) -> None:
    """The page, written to a temporary file and renamed."""
    text = report_html(charts, title)
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


__all__ = ["file_stem", "plot_runs", "report_html", "write_report"]
