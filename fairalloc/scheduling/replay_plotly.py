"""A job replay's charts as plotly figures: pure data (``data``, ``layout``, ``config``), built once
here from :func:`fairalloc.scheduling.replay_charts.chart_data` and drawn as given by both pages
that show them, the report of ``simulate --report`` and the explorer's Replay panel
(``Plotly.newPlot(element, figure)``).

Per run: the queues' usage stacked, each queue's usage against its entitlement and guarantee
(dominant shares of the capacity in %; the amounts per resource on a second axis, hidden until
picked in the legend), the wait to admission of each queue's admissions, and the preemption
timeline (victim's queue over time, marker size by the job-seconds lost, one trace per preemptor's
queue).  Every axis has its title with its unit (``chart_data``'s ``titles``).

Names are the user's text: plotly reads ``<b>``, ``<a href>`` and entities in its texts, so
every name is escaped (:func:`text`) and shown as given.

Belongs here: the job-level simulator's statistics over time.  Imports: nothing of fairalloc.
"""

from __future__ import annotations

from typing import Any

#: the figures of one run, in the order the pages show them
KINDS = ("stacked", "usage", "waits", "preemptions")
#: plotly's options for every figure: no logo, sized to its element
CONFIG = {"displaylogo": False, "responsive": True}
_LEGEND = {"orientation": "h", "y": -0.3}
_STEPS = {"shape": "hv"}


def text(name: Any) -> str:
    """A name as plotly shows text as given: its markup characters escaped."""
    return str(name).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def figures(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The four figures of one run's chart data, by :data:`KINDS`."""
    made = {"stacked": _stacked, "usage": _usage, "waits": _waits, "preemptions": _preemptions}
    return {kind: {**made[kind](run), "config": CONFIG} for kind in KINDS}


def _time_share_axes(run: dict[str, Any]) -> dict[str, Any]:
    return {
        "xaxis": {"title": {"text": run["titles"]["time"]}},
        "yaxis": {"title": {"text": run["titles"]["share"]}, "rangemode": "tozero"},
        "legend": _LEGEND,
    }


def _line(name: str, x: list, y: list, **more: Any) -> dict[str, Any]:
    """A trace drawn as a line (a step line with ``line=_STEPS``), named as given."""
    return {"x": x, "y": y, "name": text(name), "mode": "lines", **more}


def _stacked(run: dict[str, Any]) -> dict[str, Any]:
    stacked = run["stacked"]
    data = [_line(q, stacked["time"], v, stackgroup="u", line=_STEPS) for q, v in stacked["usage_share"].items()]
    return {"data": data, "layout": {"title": {"text": "usage of the queues, stacked"}, **_time_share_axes(run)}}


def _usage(run: dict[str, Any]) -> dict[str, Any]:
    data: list[dict[str, Any]] = []
    for q, s in run["queues"].items():
        data.append(_line(f"{q} usage", s["time"], s["usage_share"], line=_STEPS))
        data.append(_line(f"{q} entitlement", s["time"], s["entitlement_share"], line={**_STEPS, "dash": "dash"}))
        if s["guarantee_share"] is not None:
            g = s["guarantee_share"]
            data.append(_line(f"{q} guarantee", [0, run["end"]], [g, g], line={"dash": "dot"}))
        # the amounts per resource, on the right axis, shown when picked in the legend
        data.extend(
            _line(f"{q} {r}", s["time"], v, line=_STEPS, yaxis="y2", visible="legendonly")
            for r, v in s["usage"].items()
        )
    amounts = {"title": {"text": run["titles"]["amount"]}, "overlaying": "y", "side": "right", "rangemode": "tozero"}
    layout = {"title": {"text": "usage against entitlement and guarantee"}, **_time_share_axes(run), "yaxis2": amounts}
    return {"data": data, "layout": layout}


def _waits(run: dict[str, Any]) -> dict[str, Any]:
    data = [{"x": s["waits"], "name": text(q), "type": "box", "boxpoints": "all"} for q, s in run["queues"].items()]
    layout = {
        "title": {"text": "wait to admission, per admission"},
        "xaxis": {"title": {"text": run["titles"]["wait"]}},
        "yaxis": {"title": {"text": "queue"}},
    }
    return {"data": data, "layout": layout}


def _preemptions(run: dict[str, Any]) -> dict[str, Any]:
    by: dict[str, list[dict[str, Any]]] = {}
    for p in run["preemptions"]:
        by.setdefault(p["preemptor_queue"] or "(unknown)", []).append(p)
    data = [
        {
            "x": [p["time"] for p in ps],
            "y": [text(p["victim_queue"]) for p in ps],
            "name": text(f"for {q}"),
            "mode": "markers",
            "type": "scatter",
            "text": [text(f"{p['victim']}: {p['lost_job_seconds']:g} job-s lost") for p in ps],
            "marker": {"size": [6 + 4 * min(p["lost_job_seconds"] / 3600, 4) for p in ps]},
        }
        for q, ps in by.items()
    ]
    none = {"text": "no preemptions", "showarrow": False, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}
    layout = {
        "title": {"text": f"preemptions ({len(run['preemptions'])})"},
        "annotations": [] if run["preemptions"] else [none],
        "xaxis": {"title": {"text": run["titles"]["time"]}, "range": [0, run["end"]]},
        "yaxis": {
            "title": {"text": "victim's queue"},
            "type": "category",
            "categoryarray": [text(q) for q in run["queues"]],
        },
    }
    return {"data": data, "layout": layout}


__all__ = ["CONFIG", "KINDS", "figures", "text"]
