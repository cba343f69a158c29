"""Public cluster traces as job workloads (:mod:`fairalloc.io.job_workloads`), and a generator that
stands in for them offline.

Three schemas are read, every column by the name its schema document gives it:

* Google cluster trace 2011 ``task_events`` (clusterdata-2011-2; C. Reiss, J. Wilkes, "Google
  cluster-usage traces: format + schema", version 2.1, linked from ClusterData2011_2.md of
  github.com/google/cluster-data at 1960ff54be434122ce8663d9a2a5e57f5036d782; data and document
  CC-BY 4.0): headerless CSV, the 13 columns of
  :data:`fairalloc.scheduling.traces.TASK_EVENTS_COLUMNS`; event types SUBMIT 0, SCHEDULE 1,
  EVICT 2, FAIL 3, FINISH 4, KILL 5, LOST 6, UPDATE_PENDING 7, UPDATE_RUNNING 8; timestamps in
  microseconds; CPU and memory requests normalised to the largest machine.
* Google cluster trace 2019 ``collection_events`` and ``instance_events`` (clusterdata-2019;
  "Google cluster-usage traces v3", linked from ClusterData2019.md, and the schema
  ``clusterdata_trace_format_v3.proto`` messages ``CollectionEvent`` and ``InstanceEvent``, same
  repository and commit, CC-BY 4.0): the tables are published in BigQuery, read here as its
  newline-delimited JSON export (one object per line, the proto's field names, ``resource_request``
  nested as ``{cpus, memory}`` in normalised units, 64-bit integers as text or numbers); enum
  ``EventType`` SUBMIT 0, QUEUE 1, ENABLE 2, SCHEDULE 3, EVICT 4, FAIL 5, FINISH 6, KILL 7, LOST 8,
  UPDATE_PENDING 9, UPDATE_RUNNING 10; ``collection_type`` JOB 0, ALLOC_SET 1.  A line with an
  ``instance_index`` is an instance event, any other a collection event, so both tables can be
  given in any order.
* Alibaba cluster-trace-v2018 ``batch_task`` (github.com/alibaba/clusterdata at
  7a6c496e4f4b6ce6150be8f881cb051bf2abff42, cluster-trace-v2018/schema.txt "batch task" and
  trace_2018.md; the repository states no licence for the 2018 trace, so no row of it is copied
  here): headerless CSV, the 9 columns of
  :data:`fairalloc.scheduling.workloads.ALIBABA_BATCH_TASK_COLUMNS`; ``plan_cpu`` in 1/100 core,
  ``plan_mem`` normalised to ``[0, 100]``; times in seconds from the start of the trace.

What a job is (:func:`trace_workload`):

* Google (both): a job ID's (a collection's) tasks.  ``submit``: its first SUBMIT event.  A
  task's run goes from a SCHEDULE to the next EVICT, FAIL, FINISH or KILL; the job's ``runtime``
  is its longest task run, its ``pods`` the tasks with a run, its per-pod ``request`` the largest
  CPU and memory request any of those tasks asked for (as the trace gives them, normalised),
  its ``priority`` the largest the rows give.  2019 alloc sets (collection_type 1) are not jobs.
* Alibaba: a ``job_name``'s tasks with status Terminated or Failed (those ran and ended); each
  task is ``instance_num`` pods of ``plan_cpu / 100`` cores and ``plan_mem`` (normalised) each;
  the job's ``pods`` are their sum, its per-pod request the largest of its tasks',
  ``submit`` its first ``start_time`` (``batch_task`` has no submit time) and ``runtime`` its
  last ``end_time`` less that (its DAG's stages run one after another).

Times are shifted so that the first job is submitted at 0.  The queue (``queue_by``): the user
(Google; 2019 reads it from ``collection_events``), the collection name (2019), the priority band
(Google: :func:`priority_band`), the task type (of the job's first row) or the job (Alibaba);
``queue_map`` then maps those names to the case's queues.  A row, task or job that lacks what a
job needs is left out and counted: one warning per kind, with how many and where the first was,
never a guessed value.

The generator (:func:`generate_trace_jobs`) draws a workload shaped like a trace's published
marginals, for when the trace is not at hand; it is NOT the trace (see its docstring).

Belongs here: trace adapters to job workloads.  Imports: ``core``, ``io`` and this layer.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fairalloc.core import limits
from fairalloc.core.decimals import plain
from fairalloc.core.errors import CaseError, check_known, excerpt
from fairalloc.core.instance import Instance
from fairalloc.io.cases import read_yaml_file
from fairalloc.io.importers.common import Notes
from fairalloc.io.job_workloads import parse_job_workload
from fairalloc.scheduling.traces import (
    TASK_EVENTS_COLUMNS,
    _LineBudget,
    _number,
    _open_text,
    _reading,
    synthetic_google_like,
    table_rows,
)
from fairalloc.scheduling.workloads import ALIBABA_BATCH_TASK_COLUMNS

__all__ = [
    "KINDS",
    "QUEUE_BY",
    "RESOURCES",
    "SHAPES",
    "TraceJobs",
    "generate_trace_jobs",
    "priority_band",
    "read_trace_jobs",
    "trace_workload",
]

#: the trace schemas read, and for each the names a queue may be taken from (the first: the default)
QUEUE_BY = {
    "google-2011": ("user", "priority-band"),
    "google-2019": ("user", "collection-name", "priority-band"),
    "alibaba-2018": ("task-type", "job"),
}
KINDS = tuple(QUEUE_BY)
#: the resources of the jobs written, in order: CPU and memory
RESOURCES = ("cpu", "memory")
#: event codes by schema: SUBMIT, SCHEDULE, and the events that end a run
_EVENTS = {
    "google-2011": (0, 1, frozenset({2, 3, 4, 5})),
    "google-2019": (0, 3, frozenset({4, 5, 6, 7})),
}
#: the timestamp the Google traces give events after the trace's end (2**63 - 1 microseconds)
_AFTER_TRACE = 2**63 - 1
_MICROSECONDS = 1e6


#: the priority bands of :func:`priority_band`, by their highest priority; above them, monitoring
_BANDS = {
    "google-2011": ((1, "free"), (8, "middle"), (11, "production")),
    "google-2019": ((99, "free"), (109, "other"), (115, "best-effort-batch"), (119, "mid"), (359, "production")),
}


def priority_band(kind: str, priority: int) -> str:
    """The band of a Google priority.  2011 (ClusterData2011_2.md): 0-1 ``free``, 9-11
    ``production``, 12 ``monitoring``, the others ``middle``.  2019 ("Google cluster-usage traces
    v3", on priorities; Tirmazi et al., EuroSys 2020, section 2): up to 99 ``free``, 110-115
    ``best-effort-batch``, 116-119 ``mid``, 120-359 ``production``, 360 and above ``monitoring``;
    100-109, which no tier names, ``other``.

    >>> priority_band("google-2011", 10), priority_band("google-2019", 112)
    ('production', 'best-effort-batch')
    """
    for top, band in _BANDS[kind]:
        if priority <= top:
            return band
    return "monitoring"


@dataclass(frozen=True)
class TraceJobs:
    """A trace read as a job workload: ``data`` in the workload file format (``{"jobs": ...}``,
    what :func:`fairalloc.io.job_workloads.parse_job_workload` reads) and the ``warnings``: one
    line per kind of row, task or job left out."""

    data: dict
    warnings: list[str] = field(default_factory=list)


class _Skipped:
    """What was left out, by kind: how many, and where the first was."""

    def __init__(self) -> None:
        self.kinds: dict[str, list] = {}

    def count(self, kind: str, where: str) -> None:
        self.kinds.setdefault(kind, [0, where])[0] += 1

    def lines(self) -> list[str]:
        notes = Notes()
        for kind, (n, where) in self.kinds.items():
            notes.warn(where, "", "", f"{kind}: {n:,} left out, the first at this line")
        return notes.warnings


@dataclass
class _Job:
    where: str
    submit: int | None = None
    priority: int | None = None
    key: dict[str, str] = field(default_factory=dict)  # queue_by -> name
    tasks: list[int] = field(default_factory=list)  # the numbers of its tasks in _Events
    alloc_set: bool = False


# --------------------------------------------------------------------------- Google: events to jobs


class _Events:
    """The jobs of a Google trace, and every task's SCHEDULE and end events kept in compact arrays
    (task number, time in microseconds, code): the 20 million lines fairalloc reads at most
    (:data:`~fairalloc.core.limits.MAX_TRACE_LINES`) would take gigabytes as Python tuples."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.jobs: dict[str, _Job] = {}
        self.numbers: dict[tuple[str, str], int] = {}
        self.requests: list[list[float]] = []  # per task: the largest CPU and memory request
        self.wheres: list[str] = []  # per task: its first row
        self.task, self.time, self.code = array("q"), array("q"), array("b")

    def job(self, name: str, where: str, time: int, code: int) -> _Job:
        """The job ``name``, its first SUBMIT noted (a time after the trace's end is none)."""
        j = self.jobs.setdefault(name, _Job(where))
        if code == _EVENTS[self.kind][0] and time != _AFTER_TRACE:
            j.submit = time if j.submit is None else min(j.submit, time)
        return j

    def event(self, job: str, task: str, where: str, time: int, code: int) -> int:
        """Note event ``code`` at ``time`` of task ``task`` of ``job``; the task's number."""
        j = self.job(job, where, time, code)
        k = self.numbers.get((job, task))
        if k is None:
            k = self.numbers[(job, task)] = len(self.requests)
            self.requests.append([0.0, 0.0])
            self.wheres.append(where)
            j.tasks.append(k)
        _, schedule, ends = _EVENTS[self.kind]
        if code == schedule or code in ends:
            self.task.append(k)
            self.time.append(time)
            self.code.append(code)
        return k

    def request(self, k: int, cpu: Any, memory: Any, where: str) -> None:
        for r, (value, what) in enumerate(((cpu, "CPU request"), (memory, "memory request"))):
            if value is not None and value != "":
                self.requests[k][r] = max(self.requests[k][r], _number(str(value), what, where))

    def longest_runs(self) -> list[int]:
        """Each task's longest run in microseconds (0: none): a SCHEDULE to the next event that
        ends a run, in time order whatever the rows' order (at one instant SCHEDULE first: its
        code is the smaller in both schemas)."""
        _, schedule, ends = _EVENTS[self.kind]
        task, time, code = (
            np.frombuffer(a, dtype=t) for a, t in ((self.task, np.int64), (self.time, np.int64), (self.code, np.int8))
        )
        order = np.lexsort((code, time, task))
        longest = [0] * len(self.requests)
        current, start = -1, None
        for k, t, c in zip(task[order].tolist(), time[order].tolist(), code[order].tolist()):
            if k != current:
                current, start = k, None
            if c == schedule:
                start = t if start is None else start
            elif start is not None:
                if t != _AFTER_TRACE:
                    longest[k] = max(longest[k], t - start)
                start = None
        return longest

    def jobs_found(self, skipped: _Skipped) -> dict[str, dict]:
        """Each job the events give whole, by job ID: its first SUBMIT, longest run (seconds),
        pods, largest request, priority and queue keys."""
        runs = self.longest_runs()
        out: dict[str, dict] = {}
        for name, j in self.jobs.items():
            if j.alloc_set:
                skipped.count("an alloc set, not a job (collection_type 1)", j.where)
                continue
            if j.submit is None:
                skipped.count("a job without a SUBMIT event", j.where)
                continue
            longest, pods, request = 0, 0, [0.0, 0.0]
            for k in j.tasks:
                if runs[k] <= 0:
                    skipped.count("a task without a run (a SCHEDULE, then EVICT, FAIL, FINISH or KILL)", self.wheres[k])
                    continue
                if min(self.requests[k]) <= 0:
                    skipped.count("a task without a CPU and a memory request", self.wheres[k])
                    continue
                longest, pods = max(longest, runs[k]), pods + 1
                request = [max(a, b) for a, b in zip(request, self.requests[k])]
            if pods == 0:
                skipped.count("a job none of whose tasks ran with a request", j.where)
                continue
            out[name] = {
                "submit": j.submit / _MICROSECONDS,
                "runtime": longest / _MICROSECONDS,
                "pods": pods,
                "request": request,
                "priority": j.priority or 0,
                "key": j.key,
                "where": j.where,
            }
        return out


def _read_google_2011(paths: list[Path], skipped: _Skipped) -> dict[str, dict]:
    events = _Events("google-2011")
    column = {name: k for k, name in enumerate(TASK_EVENTS_COLUMNS)}
    for where, f in table_rows(paths, TASK_EVENTS_COLUMNS, "Google 2011 task_events"):
        texts = {name: f[column[name]] for name in ("timestamp", "job ID", "task index", "event type")}
        missing = next((name for name, text in texts.items() if not text), None)
        if missing:
            skipped.count(f"a row without {missing}", where)
            continue
        time, code = _whole(texts["timestamp"], "timestamp", where), _whole(texts["event type"], "event type", where)
        task = events.event(texts["job ID"], texts["task index"], where, time, code)
        events.request(task, f[column["CPU request"]], f[column["memory request"]], where)
        j = events.jobs[texts["job ID"]]
        if f[column["user"]]:
            j.key["user"] = f[column["user"]]
        if f[column["priority"]]:
            _note_priority(j, _whole(f[column["priority"]], "priority", where))
    return events.jobs_found(skipped)


def _read_google_2019(paths: list[Path], skipped: _Skipped) -> dict[str, dict]:
    events = _Events("google-2019")
    for where, row in _json_rows(paths):
        missing = next((name for name in ("time", "type", "collection_id") if row.get(name) in (None, "")), None)
        if missing:
            skipped.count(f"a row without {missing}", where)
            continue
        time, code, job = (
            _whole(row["time"], "time", where),
            _whole(row["type"], "type", where),
            str(row["collection_id"]),
        )
        if "instance_index" in row:
            if row["instance_index"] in (None, ""):
                skipped.count("a row without instance_index", where)
                continue
            task = events.event(job, str(row["instance_index"]), where, time, code)
            request = row.get("resource_request")
            if isinstance(request, dict):
                events.request(task, request.get("cpus"), request.get("memory"), where)
        j = events.job(job, where, time, code)
        for field_name, key in (("user", "user"), ("collection_name", "collection-name")):
            if row.get(field_name) not in (None, ""):
                j.key[key] = str(row[field_name])
        if row.get("collection_type") not in (None, ""):
            j.alloc_set = _whole(row["collection_type"], "collection_type", where) == 1
        if row.get("priority") not in (None, ""):
            _note_priority(j, _whole(row["priority"], "priority", where))
    return events.jobs_found(skipped)


def _note_priority(job: _Job, priority: int) -> None:
    job.priority = priority if job.priority is None else max(job.priority, priority)


def _whole(value: Any, what: str, where: str) -> int:
    """An integral field (a time, an event type, a priority): an integer or its text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    try:
        return int(text)
    except ValueError:
        raise CaseError(f"{where}: {what} {excerpt(text)} is not an integer") from None


def _json_rows(paths: list[Path]) -> Iterator[tuple[str, dict]]:
    """The objects of newline-delimited JSON files (a BigQuery export), with where each is."""
    budget = _LineBudget(paths[0])
    for path in paths:
        budget.next_file(path)
        stream = _open_text(path)
        with _reading(budget=budget, hint=" (is this a BigQuery JSON export?)"), stream:
            for lineno, line in enumerate(stream, start=1):
                budget.tick(lineno)
                if not line.strip():
                    continue
                where = f"{path}, line {lineno}"
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise CaseError(f"{where}: not JSON ({excerpt(str(exc))})") from None
                if not isinstance(row, dict):
                    raise CaseError(f"{where}: a row must be a JSON object (got {type(row).__name__})")
                yield where, row


# --------------------------------------------------------------------------- Alibaba


def _read_alibaba_2018(paths: list[Path], skipped: _Skipped) -> dict[str, dict]:
    column = {name: k for k, name in enumerate(ALIBABA_BATCH_TASK_COLUMNS)}
    needed = ("instance_num", "job_name", "task_type", "status", "start_time", "end_time", "plan_cpu", "plan_mem")
    out: dict[str, dict] = {}
    for where, f in table_rows(paths, ALIBABA_BATCH_TASK_COLUMNS, "batch_task"):
        row = {name: f[column[name]] for name in needed}
        if row["status"] not in ("Terminated", "Failed"):
            skipped.count(f"a task with status {excerpt(row['status'])}, not Terminated or Failed", where)
            continue
        missing = next((name for name in needed if not row[name]), None)
        if missing:
            skipped.count(f"a row without {missing}", where)
            continue
        start, end = _number(row["start_time"], "start_time", where), _number(row["end_time"], "end_time", where)
        pods = _number(row["instance_num"], "instance_num", where)
        request = [_number(row["plan_cpu"], "plan_cpu", where) / 100.0, _number(row["plan_mem"], "plan_mem", where)]
        if end <= start:
            skipped.count("a task whose end_time is not after its start_time", where)
            continue
        if min(request) <= 0 or pods < 1 or not pods.is_integer():
            skipped.count("a task without a positive plan_cpu, plan_mem and whole instance_num", where)
            continue
        name = row["job_name"]
        j = out.setdefault(name, {"start": start, "end": end, "pods": 0, "request": request, "where": where})
        j["start"], j["end"] = min(j["start"], start), max(j["end"], end)
        j["pods"] += int(pods)
        j["request"] = [max(a, b) for a, b in zip(j["request"], request)]
        j["key"] = {"job": name, "task-type": j.get("key", {}).get("task-type", row["task_type"])}
    for j in out.values():
        j.update(submit=j["start"], runtime=j["end"] - j["start"], priority=0)
    return out


# --------------------------------------------------------------------------- the workload


def read_trace_jobs(
    kind: str,
    paths: Sequence[str | Path] | str | Path,
    *,
    queue_by: str | None = None,
    queue_map: Mapping[str, str] | str | Path | None = None,
) -> TraceJobs:
    """The jobs of trace files ``paths`` of schema ``kind`` (:data:`KINDS`), as a workload mapping
    (jobs in submit order, the first at 0), not yet checked against a case; see the module doc."""
    check_known("trace", "trace kind", kind, KINDS)
    queue_by = queue_by or QUEUE_BY[kind][0]
    check_known("queue_by", "queue key", queue_by, QUEUE_BY[kind])
    files = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if not files:
        raise CaseError(f"trace: no {kind} file given")
    mapping = _queue_map(queue_map)
    skipped = _Skipped()
    reader = {"google-2011": _read_google_2011, "google-2019": _read_google_2019, "alibaba-2018": _read_alibaba_2018}
    found = reader[kind](files, skipped)
    jobs = _queued(kind, found, queue_by, mapping, skipped)
    if not jobs:
        raise CaseError(f"{files[0]}: no job with what a job needs ({'; '.join(skipped.lines()) or 'no rows'})")
    if len(jobs) > limits.MAX_WORKLOAD_JOBS:
        raise CaseError(
            f"{files[0]}: {len(jobs):,} jobs; fairalloc replays at most {limits.MAX_WORKLOAD_JOBS:,} "
            "(MAX_WORKLOAD_JOBS); cut the files first (e.g. with head)"
        )
    start = min(j["submit"] for j in jobs.values())
    order = sorted(jobs, key=lambda name: (jobs[name]["submit"], name))
    data = {"jobs": {name: _spec(jobs[name], start) for name in order}}
    return TraceJobs(plain(data), skipped.lines())


def _queued(kind: str, found: dict, queue_by: str, mapping: Mapping[str, str] | None, skipped: _Skipped) -> dict:
    """The jobs with a queue (and few enough pods); the others counted."""
    jobs = {}
    for name, j in found.items():
        if queue_by == "priority-band":
            key: str | None = priority_band(kind, j["priority"])
        else:
            key = j["key"].get(queue_by)
        if key is None:
            skipped.count(f"a job without a {queue_by}", j["where"])
            continue
        queue = key if mapping is None else mapping.get(key)
        if queue is None:
            skipped.count(f"a job whose {queue_by} is not in the queue map", j["where"])
            continue
        if j["pods"] > limits.MAX_JOB_PODS:
            skipped.count(f"a job of more than {limits.MAX_JOB_PODS:,} pods (MAX_JOB_PODS)", j["where"])
            continue
        jobs[name] = {**j, "queue": queue}
    return jobs


def _spec(j: dict, start: float) -> dict:
    spec = {
        "queue": j["queue"],
        "request": dict(zip(RESOURCES, j["request"])),
        "pods": j["pods"],
        "submit": j["submit"] - start,
        "runtime": j["runtime"],
    }
    if j["priority"]:
        spec["priority"] = j["priority"]
    return spec


def _queue_map(queue_map: Mapping[str, str] | str | Path | None) -> dict[str, str] | None:
    """The user (or other key) to queue mapping, given or read from a YAML or JSON file."""
    if queue_map is None:
        return None
    where = "queue_map"
    if isinstance(queue_map, (str, Path)):
        where = str(queue_map)
        queue_map = read_yaml_file(queue_map, "a queue map needs name: queue lines")
    if not isinstance(queue_map, Mapping) or not all(
        isinstance(v, (str, int)) and not isinstance(v, bool) for v in queue_map.values()
    ):
        raise CaseError(f"{where}: a queue map is a mapping of names to queue names (got {excerpt(queue_map)})")
    return {str(k): str(v) for k, v in queue_map.items()}


def trace_workload(
    kind: str,
    paths: Sequence[str | Path] | str | Path,
    *,
    queue_by: str | None = None,
    queue_map: Mapping[str, str] | str | Path | None = None,
    case: Instance | None = None,
) -> TraceJobs:
    """:func:`read_trace_jobs`, checked against ``case`` (its queues and resources, every pod
    fitting its capacity) when one is given, as :func:`~fairalloc.io.job_workloads.parse_job_workload`
    checks a workload file: what the CLI's ``import --trace KIND FILE --jobs OUT --case CASE``
    writes.  Writing it is the caller's."""
    found = read_trace_jobs(kind, paths, queue_by=queue_by, queue_map=queue_map)
    if case is not None:
        parse_job_workload(found.data, case, f"{kind} trace")
    return found


# --------------------------------------------------------------------------- the offline stand-in

#: the generator's parameters per shape; see :func:`generate_trace_jobs` for where each comes from
SHAPES: dict[str, dict[str, float]] = {
    "google-2019": {
        "mean_interarrival": 10.0,
        "diurnal_amplitude": 0.3,
        "single_pod": 0.6,
        "pods_alpha": 1.1,
        "max_pods": 1000,
        "runtime_median": 300.0,
        "runtime_sigma": 2.0,
        "runtime_max": 29 * 86400.0,
    },
    "alibaba-2018": {
        "mean_interarrival": 5.0,
        "diurnal_amplitude": 0.4,
        "single_pod": 0.2,
        "pods_alpha": 0.9,
        "max_pods": 5000,
        "runtime_median": 60.0,
        "runtime_sigma": 1.5,
        "runtime_max": 8 * 86400.0,
        "cpu_median": 0.5,
        "cpu_sigma": 0.7,
        "memory_median": 0.4,
        "memory_sigma": 0.8,
    },
}
_DAY = 86400.0


def generate_trace_jobs(
    n: int, queues: Sequence[str], seed: int, shape: str = "google-2019", *, mean_interarrival: float | None = None
) -> dict:
    """SYNTHETIC: ``n`` jobs shaped like a trace's published marginals, spread over ``queues``; NOT
    the trace.  A workload mapping (as :func:`read_trace_jobs` gives), deterministic for ``seed``.

    The parameters (:data:`SHAPES`) are chosen by hand to match the shapes the papers report, not
    fitted to the traces; results obtained with them are not trace results:

    * arrivals: a Poisson process of mean inter-arrival ``mean_interarrival`` seconds (10 and 5:
      chosen for a cluster of a few dozen machines, not the trace cells' rates of thousands of
      machines; pass another to load a case's cluster more or less) whose rate varies over the
      day as ``1 + diurnal_amplitude * sin(2 pi t / 86400)`` (drawn by thinning): the daily cycle
      of submissions the analyses report (Reiss et al., SoCC 2012, for Google 2011; Lu et al.,
      IEEE BigData 2017, for Alibaba's batch jobs);
    * sizes: a share ``single_pod`` of single-task jobs, the others ``2 + floor(X)`` tasks with
      ``X`` Lomax (Pareto II) of shape ``pods_alpha``, capped at ``max_pods``: most jobs small and
      a few huge (Reiss et al.; Tirmazi et al., EuroSys 2020, section 5: the top 1% of jobs use
      over 99% of the resources); Alibaba's batch tasks have more instances, hence its smaller
      ``single_pod``;
    * run times: log-normal with median ``runtime_median`` seconds and log standard deviation
      ``runtime_sigma`` (mean ``median * exp(sigma^2 / 2)``: heavy-tailed, most jobs short and a
      few running for days), at least 1 s and at most ``runtime_max`` (the trace's length: 29 days
      of 2011-2, 31 of 2019 cut to 29 for both Google shapes, 8 days of Alibaba 2018);
    * per-pod requests: Google, normalised to the largest machine as the traces give them, from
      :func:`fairalloc.scheduling.traces.synthetic_google_like` (its own parameters and sources);
      Alibaba, ``cpu`` in cores and ``memory`` normalised to ``[0, 100]`` as ``batch_task``'s
      ``plan_cpu / 100`` and ``plan_mem``, log-normal with the medians and sigmas of
      :data:`SHAPES` (half a core, 0.4 units: the half-core and one-core plans most of its tasks
      ask), clipped to ``[0.01, 96]`` cores and ``[0.001, 100]``;
    * queues: job ``k`` goes to a queue drawn with weights ``1 / rank`` over ``queues`` in the
      given order (a few users submit most jobs, as the traces' users do).

    >>> w = generate_trace_jobs(3, ["a", "b"], seed=1)
    >>> sorted(w["jobs"]) == ["job-1", "job-2", "job-3"] and w == generate_trace_jobs(3, ["a", "b"], seed=1)
    True
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= limits.MAX_WORKLOAD_JOBS:
        raise CaseError(f"n: a number of jobs from 1 to {limits.MAX_WORKLOAD_JOBS:,} (got {excerpt(n)})")
    check_known("shape", "trace shape", shape, SHAPES)
    queues = [str(q) for q in queues]
    if not queues:
        raise CaseError("queues: at least one queue")
    p = SHAPES[shape]
    rng = np.random.default_rng([int(seed), KINDS.index(shape)])
    gap = p["mean_interarrival"] if mean_interarrival is None else mean_interarrival
    if isinstance(gap, bool) or not isinstance(gap, (int, float)) or not 0 < gap < math.inf:
        raise CaseError(f"mean_interarrival: a positive number of seconds (got {excerpt(gap)})")
    submits = _diurnal_arrivals(rng, int(n), float(gap), p["diurnal_amplitude"])
    tails = 2 + np.floor(rng.pareto(p["pods_alpha"], n))
    pods = np.where(rng.random(n) < p["single_pod"], 1, np.minimum(tails, p["max_pods"])).astype(int)
    runtime = np.exp(np.log(p["runtime_median"]) + p["runtime_sigma"] * rng.standard_normal(n))
    runtime = np.clip(np.round(runtime, 3), 1.0, p["runtime_max"])
    requests = _requests(rng, int(n), shape, p)
    weights = 1.0 / np.arange(1, len(queues) + 1)
    picks = rng.choice(len(queues), size=n, p=weights / weights.sum())
    jobs = {
        f"job-{k + 1}": {
            "queue": queues[picks[k]],
            "request": dict(zip(RESOURCES, requests[k])),
            "pods": int(pods[k]),
            "submit": round(float(submits[k]), 3),
            "runtime": float(runtime[k]),
        }
        for k in range(n)
    }
    return plain({"jobs": jobs})


def _diurnal_arrivals(rng: np.random.Generator, n: int, mean: float, amplitude: float) -> np.ndarray:
    """``n`` arrival times (the first at 0) of a Poisson process whose rate is ``(1 + amplitude *
    sin(2 pi t / day)) / mean``, drawn by thinning a process of the peak rate."""
    peak = (1 + amplitude) / mean
    times: list[float] = []
    t = 0.0
    while len(times) < n:
        gaps = rng.exponential(1 / peak, 2 * (n - len(times)) + 16)
        for gap, u in zip(gaps, rng.random(len(gaps))):
            t += gap
            if u * (1 + amplitude) <= 1 + amplitude * math.sin(2 * math.pi * t / _DAY):
                times.append(t)
                if len(times) == n:
                    break
    return np.asarray(times) - times[0]


def _requests(rng: np.random.Generator, n: int, shape: str, p: Mapping[str, float]) -> np.ndarray:
    if shape == "google-2019":
        return synthetic_google_like(n, rng)
    z = rng.standard_normal((n, 2))
    cpu = np.clip(np.exp(np.log(p["cpu_median"]) + p["cpu_sigma"] * z[:, 0]), 0.01, 96.0)
    memory = np.clip(np.exp(np.log(p["memory_median"]) + p["memory_sigma"] * z[:, 1]), 0.001, 100.0)
    return np.round(np.column_stack([cpu, memory]), 4)
