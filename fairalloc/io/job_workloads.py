"""Job workloads: the jobs a queue case's cluster receives over time, for the replay of a policy's
scheduling cycles (:mod:`fairalloc.scheduling.replay`).

A workload file (YAML or JSON) gives the jobs by name, each as a scheduling cycle's job is given
(:class:`fairalloc.io.cases.JobSpec`: its queue, per-pod request, pods, a gang's ``min_pods``,
priority, submit time and run time), and optionally the nodes; the queue case (tree, guarantees,
limits, the policy's ``settings``) is given separately, so one workload replays against the
configurations one compares::

    nodes: {n1: {cpu: 8, memory: 32}, n2: {cpu: 8, memory: 32}}   # optional: else one pool
    jobs:
      train-1: {queue: team-a, request: {cpu: 2, memory: 4}, pods: 3, submit: 0, runtime: 600}
      eval-1:  {queue: team-b, request: {cpu: 1}, submit: 30, runtime: 60, priority: 5}

Every job is read by :func:`fairalloc.io.jobs.job_of` and :func:`~fairalloc.io.jobs.check_fits_somewhere`
(the rules of a case's ``cycle``), so a bad job is one line naming the file, the job and the field:
an unknown queue (with the closest known), a pod larger than any node, a negative time.  A workload
beyond :data:`~fairalloc.core.limits.MAX_WORKLOAD_JOBS` jobs, :data:`~fairalloc.core.limits.MAX_JOB_PODS`
pods in one job or :data:`~fairalloc.core.limits.MAX_NODES` nodes is refused before any job is read.

A workload beyond what a YAML file holds (MAX_FILE_BYTES and MAX_YAML_NODES bind at some 570,000
jobs) is written as JSON Lines (``.jsonl``): the first line the header, every field but the jobs
(``{}`` without nodes), then one job a line in the YAML file's shape, read the same way, streamed::

    {"nodes": {"n1": {"cpu": 8, "memory": 32}, "n2": {"cpu": 8, "memory": 32}}}
    {"train-1": {"queue": "team-a", "request": {"cpu": 2, "memory": 4}, "pods": 3, "submit": 0, "runtime": 600}}
    {"eval-1": {"queue": "team-b", "request": {"cpu": 1}, "submit": 30, "runtime": 60, "priority": 5}}

Its messages name the line (``week.jsonl: line 7: jobs.eval-1.queue: unknown queue ...``); its
jobs are counted as they are read, refused at the line past MAX_WORKLOAD_JOBS.

This module is named apart from :mod:`fairalloc.scheduling.workloads` (the task workloads of the
paper simulator, which has its own phases and owners): these are a queue case's jobs.

Belongs here: reading job workloads.  Imports: ``fairalloc.core``, ``fairalloc.engines`` and this layer.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from pydantic import BaseModel, ValidationError

from fairalloc.core import limits
from fairalloc.core.decimals import json_text
from fairalloc.core.errors import CaseError, did_you_mean
from fairalloc.core.instance import Instance
from fairalloc.engines.online import Job
from fairalloc.io.cases import (
    _CONFIG,
    JobSpec,
    Names,
    NonNegative,
    _file,
    _json_constant,
    _json_keys,
    _NotPlain,
    _pydantic_message,
    _read_yaml,
    read_yaml_file,
    read_yaml_text,
)
from fairalloc.io.jobs import check_fits_somewhere, job_of, nodes_of


class WorkloadSpec(BaseModel):
    """A job workload file: the nodes (left out: the case's capacity is one pool) and the jobs."""

    model_config = _CONFIG
    nodes: Names[Names[NonNegative]] | None = None
    jobs: Names[JobSpec]


@dataclass(frozen=True)
class JobWorkload:
    """A workload read against a case: its jobs in submit order (the file's order among equal
    times) and its nodes (``None``: one pool, the case's capacity)."""

    name: str
    jobs: list[Job]
    nodes: dict[str, np.ndarray] | None = None


def bundled_workloads() -> list[str]:
    """Names of the job workloads shipped with fairalloc (``cases/workloads/*.yaml``)."""
    return sorted(p.name[:-5] for p in _workloads().iterdir() if p.name.endswith(".yaml"))


def _workloads():
    return importlib_resources.files("fairalloc.case_library.workloads")


def load_job_workload(path: str | Path, instance: Instance) -> JobWorkload:
    """The workload file at ``path`` (or a bundled workload by name) read against ``instance`` (the
    queue case); every message names the file."""
    where = _file(path)
    if Path(path).suffix == JSONL:
        return _read_jsonl(Path(path), instance, where)
    if not Path(path).exists() and str(path) in bundled_workloads():
        text = (_workloads() / f"{path}.yaml").read_text(encoding="utf-8")
        data = read_yaml_text(text, f"{path}.yaml")
    elif not Path(path).exists() and Path(path).suffix == "":
        hint = did_you_mean(str(path), bundled_workloads()) or f" (bundled: {', '.join(bundled_workloads())})"
        raise CaseError(f"{where}: no such file, and no bundled workload of that name{hint}")
    else:
        data = read_yaml_file(path, "a workload needs 'jobs'")
    try:
        return parse_job_workload(data, instance, Path(path).stem)
    except CaseError as exc:
        text = str(exc)
        raise CaseError(text if text.startswith(f"{where}: ") else f"{text} (in {where})") from None


def parse_job_workload(data: Any, instance: Instance, name: str = "workload") -> JobWorkload:
    """A workload mapping (as read from YAML) read against ``instance``."""
    if not isinstance(data, dict):
        raise CaseError(f"{name}: a workload must be a mapping with 'jobs' (got {type(data).__name__})")
    _refuse_beyond_limits(data)
    spec = _validated(data)
    reader = _Reader.of(spec, instance)
    return reader.workload(name, [reader.job(job_name, job_spec) for job_name, job_spec in spec.jobs.items()])


def _validated(data: dict) -> WorkloadSpec:
    try:
        return WorkloadSpec.model_validate(data)
    except ValidationError as exc:
        raise CaseError(_pydantic_message(exc, WorkloadSpec)) from None


@dataclass(frozen=True)
class _Reader:
    """What reading a job needs, whichever file format it came in: the case, its resources and
    where a pod may go (the nodes, else the capacity as one pool)."""

    instance: Instance
    resources: list[str]
    nodes: dict[str, np.ndarray] | None
    rooms: dict[str, np.ndarray]

    @classmethod
    def of(cls, spec: WorkloadSpec, instance: Instance) -> _Reader:
        resources = list(instance.resources)
        nodes = None if spec.nodes is None else nodes_of(spec.nodes, resources, "nodes")
        return cls(instance, resources, nodes, nodes or {"capacity": np.asarray(instance.capacity, float)})

    def job(self, name: str, spec: JobSpec) -> Job:
        """One job read by the rules of a case's ``cycle`` (every field named ``jobs.NAME.FIELD``)."""
        here = f"jobs.{name}"
        job = job_of(name, spec, self.instance, here)
        check_fits_somewhere(job, self.rooms, self.resources, here)
        return job

    def workload(self, name: str, jobs: list[Job]) -> JobWorkload:
        jobs.sort(key=lambda j: j.submit)  # stable: the file's order among jobs submitted together
        return JobWorkload(name, jobs, self.nodes)


def _refuse_beyond_limits(data: dict) -> None:
    """Count before reading: a workload too large to replay is refused before any job is built."""
    jobs, nodes = data.get("jobs"), data.get("nodes")
    if isinstance(jobs, dict) and len(jobs) > limits.MAX_WORKLOAD_JOBS:
        raise CaseError(
            f"jobs: {len(jobs):,} jobs; fairalloc replays at most {limits.MAX_WORKLOAD_JOBS:,} (MAX_WORKLOAD_JOBS)"
        )
    if isinstance(nodes, dict) and len(nodes) > limits.MAX_NODES:
        raise CaseError(f"nodes: {len(nodes):,} nodes; fairalloc replays at most {limits.MAX_NODES:,} (MAX_NODES)")
    for name, job in (jobs or {}).items() if isinstance(jobs, dict) else ():
        pods = job.get("pods") if isinstance(job, dict) else None
        if isinstance(pods, int) and pods > limits.MAX_JOB_PODS:
            raise CaseError(
                f"jobs.{name}.pods: {pods:,} pods; a replayed job has at most {limits.MAX_JOB_PODS:,} (MAX_JOB_PODS)"
            )


# -- JSON Lines ------------------------------------------------------------------------------------

#: the suffix of a workload in JSON Lines: the header line, then one job a line
JSONL = ".jsonl"
#: lines of a JSON Lines workload whose text is checked in one vectorized pass (:func:`_json_lines`)
_BATCH = 2048


def _read_jsonl(path: Path, instance: Instance, where: str) -> JobWorkload:
    """A workload in JSON Lines, streamed: the header (the fields of a workload file but its jobs),
    then one job a line, ``{"NAME": {"queue": ..., ...}}``, each validated and read as a job of a
    YAML file is (:class:`_Reader`); every message names the file and the line.

    No whole-file limit: what is held is the jobs read, bounded by MAX_WORKLOAD_JOBS (refused at the
    line that passes it); each line is parsed whole, so a line is bounded as a file is
    (MAX_FILE_BYTES), and a blank line is refused (no run of lines without a job)."""
    reader: _Reader | None = None
    jobs: list[Job] = []
    first: dict[str, int] = {}  # a job's name: the line that gave it
    with _opened(path, where) as stream:
        for n, data in _jsonl_data(stream, where):
            try:
                if reader is None:
                    reader = _Reader.of(_header(data), instance)
                else:
                    jobs.append(_line_job(data, reader, first, n))
            except CaseError as exc:
                raise CaseError(f"{where}: line {n}: {exc}") from None
    if reader is None:
        raise CaseError(f"{where}: empty file (a workload in JSON Lines needs its header line, then one job a line)")
    return reader.workload(path.stem, jobs)


def _header(data: Any) -> WorkloadSpec:
    """The first line: every field of a workload file but ``jobs`` (``{}`` when there are no nodes)."""
    if not isinstance(data, dict):
        raise CaseError(f"the first line is the header, an object like {{}} (got {type(data).__name__})")
    if "jobs" in data:
        raise CaseError("jobs: the header leaves the jobs out; they follow it, one a line")
    unknown = [k for k in data if k not in WorkloadSpec.model_fields]
    if unknown and isinstance(data[unknown[0]], dict) and "queue" in data[unknown[0]]:
        raise CaseError(
            f'a job ({unknown[0]}) where the header belongs: the first line is {{}} or {{"nodes": {{...}}}}, '
            "then one job a line"
        )
    _refuse_beyond_limits(data)
    return _validated({**data, "jobs": {}})


def _line_job(data: Any, reader: _Reader, first: dict[str, int], n: int) -> Job:
    """The job of line ``n``: counted (MAX_WORKLOAD_JOBS) and named once in the file, then read as
    a YAML file's ``jobs`` entry of one job, with its messages."""
    if not isinstance(data, dict) or len(data) != 1:
        got = f"{len(data)} keys" if isinstance(data, dict) else type(data).__name__
        raise CaseError(f'one job a line, as {{"NAME": {{"queue": ...}}}} (got {got})')
    if len(first) >= limits.MAX_WORKLOAD_JOBS:
        raise CaseError(
            f"jobs: more than {limits.MAX_WORKLOAD_JOBS:,} jobs; fairalloc replays at most "
            f"{limits.MAX_WORKLOAD_JOBS:,} (MAX_WORKLOAD_JOBS)"
        )
    (name,) = data
    if (line := first.setdefault(name, n)) != n:
        raise CaseError(f"jobs.{name}: a second job of that name (the first is on line {line})")
    _refuse_beyond_limits({"jobs": data})
    ((name, spec),) = _validated({"jobs": data}).jobs.items()
    return reader.job(name, spec)


@contextmanager
def _opened(path: Path, where: str) -> Iterator[BinaryIO]:
    if path.is_dir():
        raise CaseError(f"{where}: is a directory, not a file")
    try:
        stream = path.open("rb")
    except FileNotFoundError:
        raise CaseError(f"{where}: no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise CaseError(f"{where}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    with stream:
        yield stream


def _jsonl_data(stream: BinaryIO, where: str) -> Iterator[tuple[int, Any]]:
    """Each line's number and data, read in batches of :data:`_BATCH` lines."""
    lines = _lines(stream, where)
    while batch := list(itertools.islice(lines, _BATCH)):
        plain = _json_lines([text for _, text in batch])
        # beyond plain JSON somewhere: each line as YAML, with its messages, once the lines before it are read
        data = plain if plain is not None else (_line_as_yaml(text, f"{where}: line {n}") for n, text in batch)
        yield from zip((n for n, _ in batch), data)


def _line_as_yaml(text: str, where: str) -> Any:
    """A line read as YAML, its message led by the file and the line (``where``)."""
    try:
        return _read_yaml(text, where)
    except CaseError as exc:
        message = str(exc)
        raise CaseError(message if message.startswith(f"{where}: ") else f"{where}: {message}") from None


def _lines(stream: BinaryIO, where: str) -> Iterator[tuple[int, str]]:
    """Each line's number and text, at most MAX_FILE_BYTES each (the first without a byte-order mark)."""
    for n in itertools.count(1):
        raw = stream.readline(limits.MAX_FILE_BYTES + 1)
        if not raw:
            return
        if len(raw) > limits.MAX_FILE_BYTES:
            raise CaseError(
                f"{where}: line {n}: longer than {limits.MAX_FILE_BYTES // 2**20} MiB (a line is read whole)"
            )
        try:
            text = raw.decode("utf-8").removeprefix("\ufeff" * (n == 1)).removesuffix("\n").removesuffix("\r")
        except UnicodeDecodeError:
            raise CaseError(f"{where}: line {n}: not UTF-8 text (expected JSON Lines)") from None
        if not text.strip():
            raise CaseError(f"{where}: line {n}: blank (JSON Lines has one object on every line)")
        yield n, text


def _json_lines(texts: list[str]) -> list[Any] | None:
    """The data of each line by the standard library's C decoder, when the lines together pass the
    checks of the JSON reading of every file (:func:`fairalloc.io.cases._read_json`) and no object
    repeats a key, else ``None``.

    Why a batch: those checks are vectorized passes whose fixed cost (some 70 microseconds) is the
    whole cost on one line.  Over lines that each parse as JSON they hold for every line when they
    hold for the batch: each line is balanced, so the batch is as deep as its deepest line, and the
    bounds on digits and characters are per position."""
    if _json_keys("\n".join(texts)) is None:
        return None
    try:
        return [json.loads(text, object_pairs_hook=_unique, parse_constant=_json_constant) for text in texts]
    except (_NotPlain, ValueError, RecursionError):
        return None


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's mapping; a repeated key is the YAML reader's to name (with its lines)."""
    mapping = dict(pairs)
    if len(mapping) < len(pairs):
        raise _NotPlain
    return mapping


def job_spec(job: Job, resources: Sequence[str]) -> dict[str, Any]:
    """One job as a workload file spells it (what the reader reads back as ``job``): zero requests,
    no ``min_pods`` and an endless run time left out."""
    spec: dict[str, Any] = {"queue": job.queue, "request": {r: a for r, a in zip(resources, job.request) if a}}
    spec.update(pods=job.pods, priority=job.priority, submit=job.submit)
    if job.min_pods is not None:
        spec["min_pods"] = job.min_pods
    if math.isfinite(job.runtime):
        spec["runtime"] = job.runtime
    return spec


def jsonl_lines(workload: dict) -> Iterator[str]:
    """A checked workload mapping (what :func:`parse_job_workload` read) as the lines of its JSON
    Lines file, each ending in a newline: what the loader reads back as the same jobs (every line
    standard JSON of plain numbers, ASCII, and within MAX_FILE_BYTES, else refused here)."""
    header = {k: v for k, v in workload.items() if k != "jobs"}
    entries = itertools.chain([header], ({name: job} for name, job in workload["jobs"].items()))
    for n, entry in enumerate(entries, 1):
        line = json_text(entry) + "\n"
        if len(line) > limits.MAX_FILE_BYTES:
            raise CaseError(f"line {n}: longer than {limits.MAX_FILE_BYTES // 2**20} MiB, more than the loader reads")
        yield line


def check_yaml_readable(workload: dict, text: str) -> None:
    """``text``, the YAML of a checked ``workload``, is what the loader reads back: at most
    MAX_FILE_BYTES and MAX_YAML_NODES nodes (beyond, one line pointing at JSON Lines)."""
    jobs = f"{len(workload['jobs']):,} jobs"
    if len(text.encode("utf-8")) > limits.MAX_FILE_BYTES:
        too = f"more than {limits.MAX_FILE_BYTES // 2**20} MiB of YAML (MAX_FILE_BYTES)"
    elif _yaml_nodes(workload) > limits.MAX_YAML_NODES:
        too = f"more than {limits.MAX_YAML_NODES:,} YAML nodes (MAX_YAML_NODES)"
    else:
        return
    raise CaseError(f"{jobs} are {too}, more than the loader reads; write them to a {JSONL} file (JSON Lines)")


def _yaml_nodes(data: Any) -> int:
    """The nodes the YAML composer counts in ``data`` (each key, value and collection), counted up
    to one past MAX_YAML_NODES."""
    count, stack = 0, [data]
    while stack and count <= limits.MAX_YAML_NODES:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            count += len(node)  # the keys: scalars
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


__all__ = [
    "JSONL",
    "JobWorkload",
    "WorkloadSpec",
    "bundled_workloads",
    "check_yaml_readable",
    "job_spec",
    "jsonl_lines",
    "load_job_workload",
    "parse_job_workload",
]
