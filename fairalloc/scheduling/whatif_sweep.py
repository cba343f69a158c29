"""What-if sweeps: a grid of changes to a queue case, each point replayed on one or more job
workloads under each policy, one row per run: the grid, its checks and its task (:func:`grid_trial`),
which ``fairalloc whatif --grid`` gives the sweep engine (:func:`fairalloc.analysis.sweep.run_sweep`:
in parallel, streamed to a JSON-lines file, resumable after a kill; ``analysis`` and ``scheduling``
do not import each other, so the command joins them).

An axis is ``PATH=V1|V2|...``: ``PATH`` as a what-if change gives it
(:func:`fairalloc.scheduling.whatif.parse_change`), each value read as YAML, the values split at the
``|`` outside brackets and quotes.  The grid is the product of the axes' values, in the order given,
plus the baseline (the case unchanged); a run is a point under one policy on one workload, and its
trial id is its place in ``workloads x schedulers x (baseline, points...)``: the same grid gives
the same ids, so a resumed sweep runs only the rows its file lacks.  The policy is not an axis
(``--scheduler`` names them); a file written for another grid, case or workload is refused (the
file's header holds all three, the inputs by their digests).

A row is ``{trial, workload, scheduler, settings, queues}``: ``settings`` maps each axis's path to
its value as given (``{}`` for the baseline), ``queues`` the per-queue measures of the run as
:func:`fairalloc.scheduling.whatif.whatif` computes them (its plan and run, not a copy).

Every point's changed case, each workload read against it and each policy's settings are checked
before the first run, as ``whatif`` checks its alternatives (a workload once per distinct queues,
resources, capacity and settings); the number of runs is bounded by
:data:`fairalloc.core.limits.MAX_WHATIF_RUNS`, a grid's runs, before any point is built.

Belongs here: beside :mod:`fairalloc.scheduling.whatif`, whose runs it repeats.
Imports: ``core`` and the what-if.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairalloc.core import limits, registry
from fairalloc.core.errors import CaseError, excerpt
from fairalloc.scheduling.whatif import (
    ALIASES,
    BASELINE,
    Alternative,
    Change,
    Run,
    _Plan,
    _top_level_parts,
    altered,
    parse_change,
)

#: the header's ``sweep`` of a what-if sweep's file (and its progress bar's label)
DESC = "whatif"


@dataclass(frozen=True)
class Axis:
    """One ``--grid``: ``path`` (as given) and its changes, one per value, in the order given."""

    path: str
    changes: tuple[Change, ...]

    @property
    def values(self) -> list[str]:
        return [_value(c) for c in self.changes]


def _value(change: Change) -> str:
    """A change's value as given (on one line)."""
    return change.text.partition("=")[2]


def parse_axis(text: str, option: str = "--grid") -> Axis:
    """``PATH=V1|V2|...`` as an :class:`Axis`; an empty value, a value given twice or the policy
    (``--scheduler`` names those) is one line."""
    path, equals, values = text.partition("=")
    path = path.strip()
    if not equals or not path:
        raise CaseError(f"{option}: expected PATH=V1|V2|... such as users.team-a.weight=1|2|4 (got {excerpt(text)})")
    parts = [v.strip() for v in _top_level_parts(values, "|")]
    if not any(parts):
        raise CaseError(f"{option} {path}: no values after '=' (V1|V2|...)")
    if not all(parts):
        raise CaseError(f"{option} {path}: an empty value between '|' in {excerpt(values)}")
    changes = tuple(parse_change(f"{path}={v}", option) for v in parts)
    if changes[0].path == (ALIASES["scheduler"],):
        raise CaseError(f"{option} {path}: the policies are --scheduler's (--scheduler a,b), not a grid's")
    seen = [_value(c) for c in changes]
    twice = next((t for k, t in enumerate(seen) if t in seen[:k]), None)
    if twice is not None:
        raise CaseError(f"{option} {path}: the value {twice} is given twice")
    return Axis(path, changes)


@dataclass(frozen=True)
class Grid:
    """The runs of a what-if sweep: ``case`` (a loaded case) changed at each point of ``axes``,
    replayed on each of ``workloads`` (as given) under each of ``schedulers``."""

    case: Any
    workloads: tuple[str, ...]
    schedulers: tuple[str, ...]
    axes: tuple[Axis, ...]

    @property
    def points(self) -> int:
        """The baseline and the product of the axes' values."""
        return 1 + math.prod(len(a.changes) for a in self.axes)

    @property
    def runs(self) -> int:
        return len(self.workloads) * len(self.schedulers) * self.points

    def point(self, k: int) -> Alternative:
        """Point ``k``: 0 is the baseline, then the product in the order the axes and values are
        given (the last axis varies fastest)."""
        if k == 0:
            return Alternative(BASELINE, ())
        changes, rest = [], k - 1
        for axis in reversed(self.axes):
            rest, at = divmod(rest, len(axis.changes))
            changes.append(axis.changes[at])
        return Alternative(f"point {k}", tuple(reversed(changes)))

    def run_of(self, trial: int) -> tuple[str, str, Alternative]:
        """The workload, policy and point of run ``trial``."""
        rest, k = divmod(trial, self.points)
        w, s = divmod(rest, len(self.schedulers))
        return self.workloads[w], self.schedulers[s], self.point(k)

    def meta(self) -> dict[str, Any]:
        """What the file's header holds: a file of another grid, case or workload is refused."""
        return {
            "case": self.case.name,
            "case_sha256": _digest(json.dumps(self.case.raw, sort_keys=True, default=str).encode()),
            "workloads": [[w, _workload_digest(w)] for w in self.workloads],
            "schedulers": list(self.schedulers),
            "grid": [[a.path, a.values] for a in self.axes],
        }


def grid(case, workloads: list[str], schedulers: list[str] | None, axes: list[Axis]) -> Grid:
    """The grid, checked before anything runs: its size against :data:`~fairalloc.core.limits.MAX_WHATIF_RUNS`,
    then every point's changed case, each workload read against it and each policy's settings."""
    if not axes:
        raise CaseError("--grid: give at least one PATH=V1|V2|...")
    paths = [a.changes[0].path for a in axes]
    twice = next((a.path for k, a in enumerate(axes) if paths[k] in paths[:k]), None)
    if twice is not None:
        raise CaseError(f"--grid {twice}: the path is given twice; give its values in one --grid")
    names = [registry.get(s).name for s in (schedulers or [case.policy or "drf"])]
    out = Grid(case, tuple(_resolved(w) for w in workloads), tuple(names), tuple(axes))
    if out.runs > limits.MAX_WHATIF_RUNS:
        raise CaseError(
            f"--grid: {out.runs} runs ({len(workloads)} workload(s) x {len(names)} scheduler(s) x {out.points} "
            f"points with the baseline), more than the {limits.MAX_WHATIF_RUNS:,} of one grid "
            f"(fairalloc.core.limits.MAX_WHATIF_RUNS); give fewer values"
        )
    read: set[tuple] = set()
    for k in range(out.points):
        plan = _plan(out, out.point(k), names)  # the changed case read: a wrong value fails here
        if (key := _read_key(plan.case)) not in read:
            read.add(key)
            for w in out.workloads:
                plan.read(w, None)
    return out


def _read_key(case) -> tuple:
    """What reading a workload against ``case`` and building its policies depends on: its queues,
    resources and capacity (:func:`~fairalloc.io.job_workloads.parse_job_workload`) and its
    settings.  A grid of weights reads each workload once, not once per point (a workload of 600
    jobs takes some 25 ms to read)."""
    inst = case.instance
    leaves = inst.users if inst.queues is None else inst.queues.leaf_names
    settings = json.dumps(case.settings, sort_keys=True, default=str)
    return tuple(leaves), tuple(inst.resources), tuple(float(c) for c in inst.capacity), settings


def _resolved(workload: str) -> str:
    """A workload file as an absolute path (workers may run elsewhere); a bundled name as it is."""
    path = Path(workload)
    return str(path.resolve()) if path.exists() else workload


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _workload_digest(workload: str) -> str | None:
    """A file's digest (``None``: a bundled workload, fixed by fairalloc's version)."""
    path = Path(workload)
    return _digest(path.read_bytes()) if path.is_file() else None


def _plan(g: Grid, alternative: Alternative, schedulers: list[str]) -> _Plan:
    changed = altered(g.case, alternative) if alternative.changes else g.case
    return _Plan(alternative.name, changed, alternative.label, schedulers)


def run_point(g: Grid, trial: int) -> Run:
    """Run ``trial`` of ``g``: its point's changed case replayed on its workload under its policy,
    as :func:`~fairalloc.scheduling.whatif.whatif` replays an alternative."""
    workload, scheduler, point = g.run_of(trial)
    plan = _plan(g, point, [scheduler])
    plan.read(workload, None)
    return plan.run(scheduler)


def grid_trial(trial: int, g: Grid) -> dict[str, Any]:
    """The sweep's task: the row of run ``trial``."""
    workload, scheduler, point = g.run_of(trial)
    run = run_point(g, trial)
    settings = dict(zip([a.path for a in g.axes], [_value(c) for c in point.changes]))
    return {"workload": _shown(workload), "scheduler": scheduler, "settings": settings, "queues": run.queues}


def _shown(workload: str) -> str:
    """A workload as the row names it: its file's stem, or its bundled name."""
    return Path(workload).stem if Path(workload).is_absolute() else workload


__all__ = ["Axis", "DESC", "Grid", "grid", "grid_trial", "parse_axis", "run_point"]
