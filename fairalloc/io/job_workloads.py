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

This module is named apart from :mod:`fairalloc.scheduling.workloads` (the task workloads of the
paper simulator, which has its own phases and owners): these are a queue case's jobs.

Belongs here: reading job workloads.  Imports: ``fairalloc.core``, ``fairalloc.engines`` and this layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, did_you_mean
from fairalloc.core.instance import Instance
from fairalloc.engines.online import Job
from fairalloc.io.cases import (
    _CONFIG,
    JobSpec,
    Names,
    NonNegative,
    _file,
    _pydantic_message,
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
    try:
        spec = WorkloadSpec.model_validate(data)
    except ValidationError as exc:
        raise CaseError(_pydantic_message(exc, WorkloadSpec)) from None
    resources = list(instance.resources)
    nodes = None if spec.nodes is None else nodes_of(spec.nodes, resources, "nodes")
    rooms = nodes or {"capacity": np.asarray(instance.capacity, float)}
    jobs = []
    for job_name, job_spec in spec.jobs.items():
        here = f"jobs.{job_name}"
        job = job_of(job_name, job_spec, instance, here)
        check_fits_somewhere(job, rooms, resources, here)
        jobs.append(job)
    jobs.sort(key=lambda j: j.submit)  # stable: the file's order among jobs submitted together
    return JobWorkload(name, jobs, nodes)


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


__all__ = ["JobWorkload", "WorkloadSpec", "bundled_workloads", "load_job_workload", "parse_job_workload"]
