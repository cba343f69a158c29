"""What if: a queue case changed field by field, each change replayed on a job workload beside the
case as it is, and when a job submitted at some time would start.

A change is ``PATH=VALUE``: ``PATH`` addresses the case's YAML by its keys joined with dots
(``users.team-a.weight``, ``users.research.lending_limit.gpu``,
``settings.cluster_queues.team-a.preemption.reclaim_within_cohort``; ``scheduler`` is the case's
``policy``), ``VALUE`` is read as YAML (``3``, ``Any``, ``{cpu: 4, memory: 8}``, ``null`` to clear a
field).  A key the case's schema knows is checked where it is given: a top-level field, a queue or
group name, a queue's field, a resource of a quota; an unknown one suggests the closest.  A missing
mapping on the way is created (``lending_limit`` of a queue that had none); the policy's ``settings``
are the policy's to check (its online form refuses an unknown setting, suggesting the closest).
The altered case is read by :func:`fairalloc.io.cases.parse_case`, so a wrong value is that reader's
one line, behind the change that caused it.

An alternative is one or more changes taken together.  Every alternative is replayed
(:func:`fairalloc.scheduling.replay.replay`) under each scheduler beside the baseline (the case
unchanged) under the same scheduler; an alternative that sets the policy runs under its policy.
Per queue the comparison gives the entitlement share (the dominant share of the policy's static
allocation of the case: what ``fairalloc explain`` prints), the mean and p95 wait, the jobs
completed, the preemptions and the work they lost, each with its difference from the baseline, and
sentences for the largest relative changes (:data:`SENTENCES` of them, each naming what else
changed in that queue where the runs show it: its average usage share, its entitlement share).

A submitted job (``submit``) is added to the workload at its submit time, after the workload's jobs
of that instant, and every run reports (:class:`Prediction`) when it first starts (``None``: not
within the workload: the replay ended with it waiting), its position in its queue at submit (the
order the queue serves its jobs, highest priority then earliest entry, in the cycle of its
submission before that cycle's decisions), and what it waited for at its last waiting cycle (the
last cycle at which it waited and was not admitted, read in the state that cycle's decisions leave),
each that holds, in this order:

* ``preemption``: jobs were preempted to make room for it since it entered its queue, and it still
  waits (a preemption in progress for it);
* ``capacity``: its pods (a gang's fewest) do not fit the free capacity (or, with nodes, the nodes'
  free room, first fit);
* ``quota``: its queue, or a group above it, would hold more than its limit (the smallest ``limit``),
  or more than its guarantee plus its borrowing limit where one is set, with the job admitted;
* ``ahead``: jobs of its queue that the queue serves before it (higher priority, or the same
  priority and entered earlier) still wait;
* ``policy``: none of these: the policy served other queues or held the job back by its own rule
  (its share, a fair-sharing order).

Belongs here: comparing replays (beside the replay: ``analysis`` does not import ``scheduling``).
Imports: ``core``, ``engines``, ``io`` and the replay.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from fairalloc.core import registry
from fairalloc.core.errors import CaseError, FairallocError, excerpt, field_path, one_line, unknown
from fairalloc.core.tolerances import PROPERTY
from fairalloc.engines.online import Admit, ClusterState, Decision, Job, Preempt, dominant_shares, fits, online_policy
from fairalloc.engines.online import place as place_pods
from fairalloc.io.cases import CaseSpec, GroupSpec, JobSpec, UserSpec, _pydantic_message, parse_case, read_yaml_text
from fairalloc.io.job_workloads import JobWorkload, load_job_workload
from fairalloc.io.jobs import check_fits_somewhere, job_of
from fairalloc.scheduling.replay import ReplayResult, guarantee, replay

#: the measures compared per queue, in the order they are shown
MEASURES = ("entitlement_share", "wait_mean", "wait_p95", "completed", "preemptions", "lost_job_seconds")
#: per queue beside the measures, what the sentences add: the average usage share, the jobs still
#: waiting at the end (waits are over the jobs admitted: a job that never starts has none)
CONTEXT = ("usage_share", "waiting")
#: how many sentences describe one alternative's largest changes
SENTENCES = 3
#: the fields of a queue or group whose values are per resource
PER_RESOURCE = ("guarantee", "limit", "deserved", "borrowing_limit", "lending_limit", "request", "usage", "demand")
#: ``PATH`` aliases: the key they stand for in the case
ALIASES = {"scheduler": "policy"}
#: why a job waited, in the order they are checked
REASONS = ("preemption", "capacity", "quota", "ahead", "policy")
BASELINE = "baseline"


@dataclass(frozen=True)
class Change:
    """``path`` set to ``value`` (``text``: as given, ``PATH=VALUE``)."""

    path: tuple[str, ...]
    value: Any
    text: str


@dataclass(frozen=True)
class Alternative:
    """Changes taken together, named ``name`` in reports."""

    name: str
    changes: tuple[Change, ...]

    @property
    def label(self) -> str:
        return ", ".join(c.text for c in self.changes)


def parse_change(text: str, option: str = "--set") -> Change:
    """``PATH=VALUE`` as a :class:`Change` (``VALUE`` read as YAML)."""
    path_text, equals, value_text = text.partition("=")
    path_text = path_text.strip()
    parts = path_text.split(".")
    if not equals or not path_text.isprintable() or any(not p.strip() for p in parts):
        raise CaseError(f"{option}: expected PATH=VALUE such as users.team-a.weight=3 (got {excerpt(text)})")
    if not value_text.strip():
        raise CaseError(f"{option} {path_text}: no value after '=' (write null to clear a field)")
    value = read_yaml_text(value_text, f"{option} {path_text}")
    path = tuple(p.strip() for p in parts)
    # as messages and tables show it: on one line
    shown_as = one_line(f"{path_text}={value_text.strip()}")
    return Change((ALIASES.get(path[0], path[0]), *path[1:]), value, shown_as)


def parse_alternative(text: str, name: str, option: str = "--alt") -> Alternative:
    """``PATH=VALUE,PATH=VALUE``: changes split at the commas outside brackets and quotes (a YAML
    flow mapping such as ``{cpu: 4, memory: 8}`` stays one value)."""
    return Alternative(name, tuple(parse_change(part, option) for part in _top_level_parts(text)))


def _top_level_parts(text: str, sep: str = ",") -> list[str]:
    """``text`` split at each ``sep`` outside brackets and quotes (``--grid`` splits at ``|``)."""
    parts, depth, quote, start = [], 0, "", 0
    for k, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    return parts


def altered(case, alternative: Alternative):
    """``case`` (a loaded :class:`~fairalloc.io.cases.Case`) with ``alternative``'s changes, read
    again by :func:`~fairalloc.io.cases.parse_case`; a wrong change is one line naming it."""
    data = copy.deepcopy(case.raw)
    for change in alternative.changes:
        _set(data, change)
    where = case.path.name if case.path is not None else case.name
    with _behind(alternative.label):
        out = parse_case(data, where)
    return dataclasses.replace(out, path=case.path)


def _set(data: dict, change: Change) -> None:
    node: Any = data
    for depth, key in enumerate(change.path):
        if not isinstance(node, dict):
            shape = type(node).__name__
            raise CaseError(
                f"{change.text}: {field_path(change.path[:depth])} is {excerpt(node)} ({shape}), not a mapping; "
                f"set {field_path(change.path[:depth])} whole"
            )
        known = _known_keys(data, change.path[:depth])
        if known is not None and key not in known[1]:
            raise CaseError(
                f"{change.text}: {field_path(change.path[: depth + 1])}: {unknown(known[0], key, known[1])}"
            )
        if depth == len(change.path) - 1:
            node[key] = change.value
        else:
            if node.get(key) is None:
                node[key] = {}
            node = node[key]


def _known_keys(data: dict, prefix: tuple[str, ...]) -> tuple[str, list[str]] | None:
    """What a key below ``prefix`` names and the names it may take (``None``: not checked here)."""
    users, groups = data.get("users") or {}, data.get("groups") or {}
    if not prefix:
        return "field", [*CaseSpec.model_fields, *ALIASES]
    if prefix in (("users",), ("groups",)):
        return ("queue", list(users)) if prefix[0] == "users" else ("group", list(groups))
    if len(prefix) == 2 and prefix[0] in ("users", "groups"):
        return "field", list((UserSpec if prefix[0] == "users" else GroupSpec).model_fields)
    if len(prefix) == 3 and prefix[0] in ("users", "groups") and prefix[2] in (*PER_RESOURCE, "weight"):
        return "resource", list(data.get("resources") or {})
    return None


def sets_policy(alternative: Alternative) -> bool:
    return any(c.path == ("policy",) for c in alternative.changes)


# -- a submitted job ----------------------------------------------------------------------------


def read_job(data: Any, where: str) -> tuple[str, JobSpec]:
    """A job file's job: one job as a workload gives it (``NAME: {queue, request, ...}``), or the
    job's fields alone (named after the file)."""
    named = isinstance(data, dict) and "queue" not in data and len(data) == 1
    name, spec = next(iter(data.items())) if named else (Path(where).stem, data)
    if not isinstance(spec, dict):
        raise CaseError(f"{where}: a job is a mapping with 'queue' and 'request' (got {type(spec).__name__})")
    try:
        return str(name), JobSpec.model_validate(spec)
    except ValidationError as exc:
        field_at = f"{name}." if named else ""
        raise CaseError(f"{where}: {field_at}{_pydantic_message(exc, JobSpec)}") from None


@dataclass
class Prediction:
    """When a submitted job starts in one run, and why it waited (the rule: the module's docstring)."""

    job: str
    queue: str
    submit: float
    start: float | None = None
    #: its place in its queue's order at submit (1: first), and the jobs served before it then
    position: int | None = None
    ahead: list[str] = field(default_factory=list)
    #: when it last waited (the cycle's time) and what it waited for: ``(reason, sentence)`` pairs
    last_wait: float | None = None
    waited_for: list[tuple[str, str]] = field(default_factory=list)

    @property
    def wait(self) -> float | None:
        return None if self.start is None else self.start - self.submit

    def to_dict(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "queue": self.queue,
            "submit": self.submit,
            "start": self.start,
            "wait": self.wait,
            "position": self.position,
            "ahead": self.ahead,
            "last_wait": self.last_wait,
            "waited_for": [{"reason": r, "why": w} for r, w in self.waited_for],
        }


class _Watch:
    """Reads one job's wait off the replay's cycles (``replay(..., watch=...)``)."""

    def __init__(self, job: Job):
        self.job = job
        self.prediction = Prediction(job.name, job.queue, job.submit)
        self.victims: list[tuple[float, str]] = []  # (when, job) preempted for it

    def __call__(self, state: ClusterState, decisions: list[Decision]) -> None:
        p, name = self.prediction, self.job.name
        if p.start is not None or name not in state.pending:
            return
        if p.position is None:
            p.ahead = _ahead(state, self.job)
            p.position = len(p.ahead) + 1
        self.victims += [(state.now, d.job) for d in decisions if isinstance(d, Preempt) and d.by == name]
        if any(isinstance(d, Admit) and d.job == name for d in decisions):
            p.start = state.now
            return
        after = state.after(decisions) if decisions else state
        p.last_wait, p.waited_for = state.now, _reasons(after, self.job, self.victims)


def _ahead(state: ClusterState, job: Job) -> list[str]:
    out = []
    for other in state.served(job.queue):
        if other.name == job.name:
            break
        out.append(other.name)
    return out


def _reasons(state: ClusterState, job: Job, victims: list[tuple[float, str]]) -> list[tuple[str, str]]:
    since = state.since.get(job.name, job.submit)
    out = []
    mine = [v for t, v in victims if t >= since]
    if mine:
        out.append(("preemption", f"a preemption in progress for it ({len(mine)} preempted: {', '.join(mine[:3])})"))
    out += _capacity(state, job)
    out += _quota(state, job)
    ahead = _ahead(state, job)
    if ahead:
        out.append(("ahead", f"{len(ahead)} job(s) of {job.queue} served before it (first: {ahead[0]})"))
    return out or [("policy", "the policy served other queues or held it back by its own rule" + _held(state, job))]


def _held(state: ClusterState, job: Job) -> str:
    """What its queue holds beside its guarantee, where the job would take it above (a clue to the
    policy's rule, read off the state)."""
    queues = state.case.queues
    if queues is None:
        return ""
    given = guarantee(queues, job.queue)
    held = state.usage()[job.queue]
    with_it = held + job.total(job.least)
    parts = [
        f"{r} {held[j]:g} held, {with_it[j]:g} with it, guarantee {given[j]:g}"
        for j, r in enumerate(state.resources)
        if not fits(with_it[j], given[j])
    ]
    return f" (its queue above its guarantee with it: {'; '.join(parts)})" if parts else ""


def _capacity(state: ClusterState, job: Job) -> list[tuple[str, str]]:
    need, free = job.total(job.least), state.free()
    short = [
        f"{r} needs {need[j]:g}, {max(free[j], 0.0):g} free"
        for j, r in enumerate(state.resources)
        if not fits(need[j], free[j])
    ]
    if short:
        return [("capacity", "cluster capacity: " + "; ".join(short))]
    if (
        state.nodes is not None
        and len(place_pods(np.asarray(job.request, float), job.least, state.free_on_nodes())) < job.least
    ):
        return [("capacity", f"cluster capacity: no first-fit room for {job.least} pod(s) on the nodes")]
    return []


def _quota(state: ClusterState, job: Job) -> list[tuple[str, str]]:
    queues = state.case.queues
    if queues is None:
        return []
    usage = state.usage()
    need = job.total(job.least)
    out = []
    for node in [job.queue, *reversed(queues.path(job.queue))]:
        held = sum((usage[leaf] for leaf in queues.leaves(node) if leaf in usage), np.zeros(len(need)))
        given = guarantee(queues, node)
        borrowing = np.asarray(queues.borrowing_limit[node], float)
        quota = np.minimum(np.asarray(queues.limit[node], float), given + borrowing)
        over = [j for j in range(len(need)) if np.isfinite(quota[j]) and not fits(held[j] + need[j], quota[j])]
        if over:
            parts = "; ".join(
                f"{state.resources[j]} quota {quota[j]:g}, holds {held[j]:g}, needs {need[j]:g}" for j in over
            )
            out.append(("quota", f"the quota of {node}: {parts}"))
    return out


# -- the runs and their comparison ----------------------------------------------------------------


@dataclass
class Run:
    """One replay: ``alternative`` (``baseline``: the case as it is) under ``scheduler``; per queue
    the measures of :data:`MEASURES` and the average usage share (what the sentences name)."""

    scheduler: str
    alternative: str
    result: ReplayResult
    queues: dict[str, dict[str, float | None]]
    prediction: Prediction | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler,
            "alternative": self.alternative,
            "end": self.result.end,
            "queues": self.queues,
            "submitted": None if self.prediction is None else self.prediction.to_dict(),
        }


@dataclass
class Comparison:
    """An alternative's run beside the baseline's under one scheduler: per queue and measure
    ``{baseline, value, change}`` (``change`` ``None`` where either side is), and sentences."""

    scheduler: str
    alternative: str
    run_scheduler: str
    queues: dict[str, dict[str, dict[str, float | None]]]
    sentences: list[str]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class WhatIf:
    """Every run and every comparison of :func:`whatif`."""

    case: str
    workload: str
    alternatives: list[Alternative]
    runs: list[Run]
    comparisons: list[Comparison]

    def run(self, scheduler: str, alternative: str) -> Run:
        return next(r for r in self.runs if (r.scheduler, r.alternative) == (scheduler, alternative))

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "workload": self.workload,
            "alternatives": {a.name: [c.text for c in a.changes] for a in self.alternatives},
            "runs": [r.to_dict() for r in self.runs],
            "comparisons": [c.to_dict() for c in self.comparisons],
        }


def whatif(
    case,
    workload: str | Path,
    alternatives: Sequence[Alternative] = (),
    schedulers: Sequence[str] | None = None,
    submit: tuple[str, JobSpec] | None = None,
) -> WhatIf:
    """Replay ``workload`` on ``case`` and on each alternative under each of ``schedulers``
    (default: the case's policy, else ``drf``), with the job ``submit`` (``(name, spec)``) added;
    every input is checked before the first replay."""
    names = [registry.get(s).name for s in (schedulers or [case.policy or "drf"])]
    plans = [_Plan(BASELINE, case, "", names)]
    for a in alternatives:
        changed = altered(case, a)
        plans.append(_Plan(a.name, changed, a.label, [changed.policy or "drf"] if sets_policy(a) else names))
    for plan in plans:
        plan.read(workload, submit)
    runs = {(s, plan.name): plan.run(s) for plan in plans for s in plan.schedulers}
    comparisons = [
        _compare(runs[s, BASELINE], runs[s if s in plan.schedulers else plan.schedulers[0], plan.name])
        for s in names
        for plan in plans[1:]
    ]
    return WhatIf(case.name, plans[0].workload.name, list(alternatives), list(runs.values()), comparisons)


@contextlib.contextmanager
def _behind(changes: str) -> Iterator[None]:
    """A failure named behind the alternative's changes (``""``: the baseline, as it is)."""
    try:
        yield
    except FairallocError as exc:
        if not changes:
            raise
        raise type(exc)(f"{changes}: {one_line(exc)}") from None


@dataclass
class _Plan:
    """The case of one alternative (``changes``: as given, ``""`` for the baseline), the policies it
    runs under, and the workload (and submitted job) read against it."""

    name: str
    case: Any
    changes: str
    schedulers: list[str]
    workload: Any = None
    job: Job | None = None

    def read(self, workload: str | Path, submit: tuple[str, JobSpec] | None) -> None:
        """The workload and the job read, and each policy's online form built on the case's
        settings: an unknown setting fails here, before any replay."""
        with _behind(self.changes):
            self.workload = load_job_workload(workload, self.case.instance)
            self.job = None if submit is None else _submitted(submit, self.case, self.workload)
            for s in self.schedulers:
                online_policy(registry.get(s), self.case.settings)

    def run(self, scheduler: str) -> Run:
        """The replay under ``scheduler``; a policy that fails on a changed case (a quota it
        cannot hold, a decision the replay refuses) is named behind the changes."""
        with _behind(f"{self.changes} (under {scheduler})" if self.changes else ""):
            return _run(scheduler, self.name, self.case, self.workload, self.job)


def _submitted(submit: tuple[str, JobSpec], case, w: JobWorkload) -> Job:
    name, spec = submit
    if any(j.name == name for j in w.jobs):
        raise CaseError(f"--submit: the workload {w.name} has a job named '{name}' already; rename the job")
    job = job_of(name, spec, case.instance, f"--submit {name}")
    rooms = w.nodes or {"capacity": np.asarray(case.instance.capacity, float)}
    check_fits_somewhere(job, rooms, list(case.instance.resources), f"--submit {name}")
    return job


def _run(scheduler: str, label: str, case, w: JobWorkload, job: Job | None) -> Run:
    mechanism = registry.get(scheduler)
    watch = None if job is None else _Watch(job)
    jobs = w.jobs if job is None else sorted([*w.jobs, job], key=lambda j: j.submit)
    result = replay(case.instance, jobs, mechanism, settings=case.settings, nodes=w.nodes, workload=w.name, watch=watch)
    shares = entitlement_shares(case, scheduler)
    queues = {}
    for q in result.queues:
        row: dict[str, float | None] = {m: getattr(q, m, None) for m in MEASURES if m != "entitlement_share"}
        queues[q.queue] = {"entitlement_share": shares.get(q.queue), **row, **{m: getattr(q, m) for m in CONTEXT}}
    return Run(scheduler, label, result, queues, None if watch is None else watch.prediction)


def entitlement_shares(case, scheduler: str) -> dict[str, float]:
    """Each queue's dominant share of the capacity in the policy's static allocation of the case
    (its entitlement now, as ``fairalloc explain`` gives it)."""
    inst = case.instance
    bundles = np.asarray(registry.get(scheduler).allocate(inst).bundles, float)
    return dict(zip(inst.users, dominant_shares(bundles, np.asarray(inst.capacity, float)).tolist()))


def _compare(base: Run, other: Run) -> Comparison:
    queues: dict[str, dict[str, dict[str, float | None]]] = {}
    for q, row in base.queues.items():
        theirs = other.queues.get(q, {})
        queues[q] = {}
        for m in (*MEASURES, *CONTEXT):
            a, b = row.get(m), theirs.get(m)
            queues[q][m] = {"baseline": a, "value": b, "change": None if a is None or b is None else b - a}
    return Comparison(base.scheduler, other.alternative, other.scheduler, queues, _sentences(queues))


#: how a sentence names a measure of queue ``{q}``, what its values are, and whether it is plural
_PHRASES = {
    "wait_p95": ("{q}'s p95 wait", "duration", False),
    "wait_mean": ("{q}'s mean wait", "duration", False),
    "completed": ("The jobs {q} completed", "count", True),
    "preemptions": ("The preemptions in {q}", "count", True),
    "lost_job_seconds": ("The work {q} lost to preemptions", "duration", False),
    "entitlement_share": ("{q}'s entitlement share", "share", False),
}


def _sentences(queues: dict[str, dict[str, dict[str, float | None]]]) -> list[str]:
    """The :data:`SENTENCES` largest relative changes, in words; what else moved in the queue is
    added where the runs show it (its average usage share)."""
    found = []
    for q, row in queues.items():
        for m in MEASURES:
            a, b = row[m]["baseline"], row[m]["value"]
            if a is None or b is None or _same(a, b):
                continue
            found.append((abs(b - a) / max(abs(a), abs(b)), q, m, a, b))
    found.sort(key=lambda f: -f[0])  # stable: queue order, then MEASURES order among equal changes
    out: list[str] = []
    said: set[tuple[str, bool]] = set()
    for _, q, m, a, b in found:
        if len(out) == SENTENCES or (q, m.startswith("wait")) in said:
            continue  # one sentence for a queue's waits: the largest of its mean and p95 changes
        said.add((q, m.startswith("wait")))
        what, kind, plural = _PHRASES[m]
        verb = ("rise" if b > a else "fall") + ("" if plural else "s")
        text = f"{what.format(q=q)} {verb} from {_words(a, kind)} to {_words(b, kind)}"
        out.append(text + ("" if m == "entitlement_share" else _context(queues[q])) + ".")
    return out


def _context(row: dict[str, dict[str, float | None]]) -> str:
    """What else the runs show of the queue: its average usage share and its jobs still waiting at
    the end, where they changed."""
    text = ""
    ua, ub = row["usage_share"]["baseline"], row["usage_share"]["value"]
    if ua is not None and ub is not None and not _same(ua, ub):
        moved = "rose" if ub > ua else "fell"
        text += f"; its average usage share {moved} from {_words(ua, 'share')} to {_words(ub, 'share')}"
    wa, wb = row["waiting"]["baseline"], row["waiting"]["value"]
    if wa is not None and wb is not None and wa != wb:
        text += f"; {wa:g} of its jobs still waited at the end before, {wb:g} now (waits count started jobs)"
    return text


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=PROPERTY, abs_tol=PROPERTY)


def _words(value: float, kind: str) -> str:
    if kind == "share":
        return f"{value:.0%}" if abs(value - round(value, 2)) < PROPERTY else f"{value:.1%}"
    if kind == "count":
        return f"{value:g}"
    return duration(value)


def duration(seconds: float) -> str:
    """``45 s``, ``4 min``, ``2.5 h``: a time span as an operator reads it."""
    if seconds < 120:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


__all__ = [
    "Alternative",
    "Change",
    "Comparison",
    "MEASURES",
    "Prediction",
    "REASONS",
    "Run",
    "WhatIf",
    "altered",
    "duration",
    "entitlement_shares",
    "parse_alternative",
    "parse_change",
    "read_job",
    "whatif",
]
