"""What a replay's charts show, recorded as it runs (:func:`fairalloc.scheduling.replay.replay`'s
``watch``): per queue its usage over time, its entitlement and guarantee, the wait of every
admission, and every preemption.

The series are the replay's own statistics over time, not a second model of them:

* *usage*: what the queue's running jobs hold, per resource (:meth:`ClusterState.usage` after the
  instant's last cycle, i.e. what holds until the next event); its dominant share of the capacity;
* *entitlement*: the replay's, as its time average in :class:`~fairalloc.scheduling.replay.QueueReport`
  integrates it (the mechanism's allocation of the queues' work, solved after each instant's
  cycles); it is read off the replay's tables, which the state the watch is shown is a view of
  (``state.tallies``), one instant late: at an instant's first cycle they still hold the entitlement
  set after the previous instant, which is the one that held in between;
* *guarantee*: the case's per queue (``queues.guarantee``, what is not given is 0), constant;
* *waits*: per admission, from entering the queue (submitted, or preempted and back) to admission,
  read off the decisions as the replay applies them (``state.since``);
* *preemptions*: time, the victim and its queue, the preemptor's queue (``Preempt.by``'s), and the
  job-seconds lost (the victim's run since its start, as the replay counts them).

Memory: usage and entitlement are kept as step changes (a point only where a queue's usage or
entitlement changes), at most ``points`` per queue.  When a queue reaches that many, consecutive
pairs of closed steps are merged into one step starting where the first did, whose value is
their time-weighted mean (the last, open step is kept as it is): the series' integral, hence the
time averages the report prints, is unchanged; a merged series loses the short peaks it averaged.
Waits are one float per admission, as the replay keeps them for its percentiles; preemptions one
small record each.

Belongs here: the job-level simulator's statistics over time.  Imports: ``core``, ``engines``, the replay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairalloc.core.instance import Instance
from fairalloc.engines.online import Admit, ClusterState, Decision, Preempt, dominant_shares
from fairalloc.scheduling.replay import guarantees, replay

#: the default bound on the points kept per queue
POINTS = 2000
#: replays longer than this are charted in hours
HOURS_FROM = 2 * 3600.0


@dataclass
class Steps:
    """One queue's step series: ``values[k]`` (usage then entitlement, per resource) holds from
    ``times[k]`` to ``times[k + 1]`` (the last to the replay's end)."""

    times: list[float] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)

    def add(self, t: float, value: np.ndarray, points: int) -> None:
        if self.values and np.array_equal(self.values[-1], value):
            return
        if self.times and self.times[-1] == t:
            self.values[-1] = value
            return
        self.times.append(t)
        self.values.append(value)
        if len(self.times) > points:
            self._merge()

    def _merge(self) -> None:
        """Halve the closed steps: each pair becomes one step of their time-weighted mean."""
        t = np.asarray(self.times)
        v = np.asarray(self.values)
        closed = (len(t) - 1) // 2 * 2  # the pairs whose both ends are known; the open step stays
        widths = np.diff(t[: closed + 1])[:, None]
        sums = (v[:closed] * widths).reshape(closed // 2, 2, -1).sum(axis=1)
        spans = widths.reshape(closed // 2, 2).sum(axis=1)[:, None]
        self.times = [*t[:closed:2].tolist(), *t[closed:].tolist()]
        self.values = [*(sums / spans), *v[closed:]]


@dataclass(frozen=True)
class Preemption:
    time: float
    victim: str
    victim_queue: str
    preemptor_queue: str | None
    lost_job_seconds: float


class Recorder:
    """The watch that records the charts of a replay on ``instance`` (``replay(instance, ...,
    watch=recorder)``, then :meth:`close` with the run's end)."""

    def __init__(self, instance: Instance, points: int = POINTS):
        if points < 2:
            raise ValueError("points: at least 2 per queue")
        self.points = points
        self.queues, self.resources = tuple(instance.users), tuple(instance.resources)
        self.capacity = np.asarray(instance.capacity, float)
        self.guarantee = guarantees(instance)  # the replay's own reading of the case
        n, m = len(self.queues), len(self.resources)
        self.steps = [Steps() for _ in range(n)]
        for s in self.steps:
            s.add(0.0, np.zeros(2 * m), points)
        self.waits: list[list[float]] = [[] for _ in range(n)]
        self.preemptions: list[Preemption] = []
        self.end = 0.0
        self._now: float | None = None
        self._usage: np.ndarray | None = None
        self._tallies: Any = None

    def __call__(self, state: ClusterState, decisions: list[Decision]) -> None:
        self._tallies = state.tallies  # type: ignore[attr-defined]  # the replay's tables (a view of them)
        if state.now != self._now:
            self._flush()
            self._now = state.now
        if decisions:
            self._decided(state, decisions)
        else:  # the instant's last cycle decides nothing: what the queues hold until the next event
            usage = state.usage()
            self._usage = np.array([usage[q] for q in self.queues])

    def close(self, end: float) -> None:
        """The run ended at ``end``: the last instant's step is recorded."""
        self._flush()
        self.end = end

    def _flush(self) -> None:
        if self._now is None or self._usage is None:
            return
        entitled = np.asarray(self._tallies.E, float)
        for i, s in enumerate(self.steps):
            s.add(self._now, np.concatenate([self._usage[i], entitled[i]]), self.points)

    def _decided(self, state: ClusterState, decisions: list[Decision]) -> None:
        index = {q: i for i, q in enumerate(self.queues)}
        for d in decisions:
            if isinstance(d, Admit):
                job = state.pending.get(d.job)
                if job is not None:
                    self.waits[index[job.queue]].append(state.now - state.since[d.job])
            elif isinstance(d, Preempt) and d.job in state.running:
                run = state.running[d.job]
                by = state.pending.get(d.by)
                self.preemptions.append(
                    Preemption(state.now, d.job, run.job.queue, None if by is None else by.queue, state.now - run.start)
                )

    # -- what the charts read ------------------------------------------------------------------
    def series(self, queue: str) -> dict[str, Any]:
        """``queue``'s steps up to the end: times, usage and entitlement per resource and as dominant
        shares of the capacity, the guarantee (per resource and share, or ``None``), its waits."""
        i, m = self.queues.index(queue), len(self.resources)
        s = self.steps[i]
        values = np.asarray(s.values)
        times = [*s.times, self.end]  # the last step drawn to the end
        values = np.vstack([values, values[-1:]])
        usage, entitled = values[:, :m], values[:, m:]
        g = None if self.guarantee is None else self.guarantee[i]
        return {
            "time": times,
            "usage": dict(zip(self.resources, usage.T.tolist())),
            "usage_share": dominant_shares(usage, self.capacity).tolist(),
            "entitlement": dict(zip(self.resources, entitled.T.tolist())),
            "entitlement_share": dominant_shares(entitled, self.capacity).tolist(),
            "guarantee": None if g is None else dict(zip(self.resources, g.tolist())),
            "guarantee_share": None if g is None else float(dominant_shares(g[None, :], self.capacity)[0]),
            "waits": list(self.waits[i]),
        }

    def time_average(self, queue: str) -> tuple[np.ndarray, np.ndarray]:
        """``queue``'s time-average usage and entitlement over the run, per resource, from its steps
        (what :class:`~fairalloc.scheduling.replay.QueueReport` reports, computed again)."""
        s, m = self.steps[self.queues.index(queue)], len(self.resources)
        widths = np.diff([*s.times, self.end])[:, None]
        total = (np.asarray(s.values) * widths).sum(axis=0) / (self.end if self.end > 0 else 1.0)
        return total[:m], total[m:]


def time_unit(end: float) -> tuple[str, float]:
    """The charts' time unit for a run ending at ``end``: seconds, or hours past :data:`HOURS_FROM`."""
    return ("h", 3600.0) if math.isfinite(end) and end >= HOURS_FROM else ("s", 1.0)


def chart_data(result: Any, recorder: Recorder) -> dict[str, Any]:
    """One run's charts as plain data (what the figures draw and the report embeds): per queue
    the series (times in the chart's unit, shares in %), the preemptions, and the per-queue table."""
    unit, scale = time_unit(recorder.end)
    queues = {}
    for q in recorder.queues:
        s = recorder.series(q)
        s["time"] = [t / scale for t in s["time"]]
        s["waits"] = [w / scale for w in s["waits"]]
        for key in ("usage_share", "entitlement_share"):
            s[key] = [100.0 * v for v in s[key]]
        if s["guarantee_share"] is not None:
            s["guarantee_share"] *= 100.0
        queues[q] = s
    return {
        "stacked": _stacked(queues),
        "scheduler": result.scheduler,
        "workload": result.workload,
        "end": recorder.end / scale,
        "unit": unit,
        "titles": {  # the axes' titles, with their units, as every chart of the run writes them
            "time": f"time ({unit})",
            "wait": f"wait ({unit})",
            "share": "dominant share (%)",
            "amount": "amount (the case's units)",
        },
        "resources": list(recorder.resources),
        "queues": queues,
        "preemptions": [{**vars(p), "time": p.time / scale} for p in recorder.preemptions],
        "table": result.to_dict()["queues"],
    }


def charted_replay(instance: Instance, jobs: list, mechanism: Any, **options: Any) -> tuple[Any, dict[str, Any]]:
    """``replay(instance, jobs, mechanism, **options)`` recorded: its result and its chart data
    (:func:`chart_data`), as the explorer's Replay panel shows them."""
    recorder = Recorder(instance)
    result = replay(instance, jobs, mechanism, watch=recorder, **options)
    recorder.close(result.end)
    return result, chart_data(result, recorder)


def _stacked(queues: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The queues' usage shares on one time grid (the union of their step times), so that they
    stack: ``time``, and per queue its share at each time."""
    grid = sorted({t for s in queues.values() for t in s["time"]})
    shares = {}
    for q, s in queues.items():
        at = np.searchsorted(s["time"], grid, side="right") - 1
        shares[q] = np.asarray(s["usage_share"])[at].tolist()
    return {"time": grid, "usage_share": shares}


__all__ = ["POINTS", "Preemption", "Recorder", "Steps", "chart_data", "charted_replay", "time_unit"]
