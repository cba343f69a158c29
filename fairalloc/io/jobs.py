"""Jobs as a case gives them: the ``cycle`` of a ported scenario test (the jobs running and waiting at
one scheduling cycle, the nodes, the policy's settings) read into a
:class:`~fairalloc.engines.online.ClusterState`, and that cycle decided by a mechanism.

A job names a leaf queue of the case and asks, per pod, amounts of the case's resources in the
case's units (the schema: :class:`fairalloc.io.cases.JobSpec` and
:class:`~fairalloc.io.cases.CycleSpec`, taken here as validated: the case module calls this one).
Every name is checked against the case (an unknown queue, resource or node suggests the closest),
and a pod that no node (or, without nodes, the capacity) could ever hold is refused, naming the job
and the resource.

Belongs here: reading jobs.  Imports: ``fairalloc.core`` and ``fairalloc.engines``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fairalloc.core.errors import CaseError, check_known
from fairalloc.core.instance import Instance
from fairalloc.core.registry import get
from fairalloc.engines.online import INF, ClusterState, Decision, Job, Running, fits, online_policy


def job_of(name: str, spec: Any, instance: Instance, where: str) -> Job:
    """The job ``name`` as ``spec`` gives it, its names checked against ``instance``'s."""
    leaves = instance.users if instance.queues is None else instance.queues.leaf_names
    check_known(f"{where}.queue", "queue", spec.queue, leaves)
    resources = list(instance.resources)
    for r in spec.request:
        check_known(f"{where}.request.{r}", "resource", r, resources)
    if spec.min_pods is not None and spec.min_pods > spec.pods:
        raise CaseError(f"{where}.min_pods: {spec.min_pods} is more than the job's {spec.pods} pods")
    return Job(
        name,
        spec.queue,
        tuple(float(spec.request.get(r, 0.0)) for r in resources),
        spec.pods,
        spec.min_pods,
        spec.priority,
        spec.submit,
        INF if spec.runtime is None else spec.runtime,
    )


def check_fits_somewhere(job: Job, rooms: Mapping[str, np.ndarray], resources: Sequence[str], where: str) -> None:
    """Refuse a job one of whose pods no room (a node, or the whole capacity) could ever hold."""
    request = np.asarray(job.request, float)
    if any(fits(request, room) for room in rooms.values()):
        return
    j = max(range(len(resources)), key=lambda k: request[k] - max(room[k] for room in rooms.values()))
    largest = max(room[j] for room in rooms.values())
    than = f"the capacity ({largest:g})" if list(rooms) == ["capacity"] else f"any node ({largest:g} at most)"
    raise CaseError(f"{where}.request.{resources[j]}: a pod of {request[j]:g} is larger than {than}")


def nodes_of(spec: Mapping[str, Mapping[str, float]], resources: Sequence[str], where: str) -> dict[str, np.ndarray]:
    """Nodes as a cycle or a workload gives them (``{node: {resource: amount}}``), as allocatable
    vectors over ``resources`` (a resource left out: 0)."""
    out = {}
    for node, amounts in spec.items():
        for r in amounts:
            check_known(f"{where}.{node}.{r}", "resource", r, list(resources))
        out[node] = np.array([float(amounts.get(r, 0.0)) for r in resources])
    return out


def cycle_state(spec: Any, instance: Instance, where: str, settings: Mapping[str, Any]) -> ClusterState:
    """The cluster at the cycle ``spec`` describes, for a policy with ``settings`` (the case's)."""
    resources = list(instance.resources)
    nodes = None if spec.nodes is None else nodes_of(spec.nodes, resources, f"{where}.nodes")
    rooms = nodes or {"capacity": np.asarray(instance.capacity, float)}
    running: dict[str, Running] = {}
    for name, run in spec.running.items():
        here = f"{where}.running.{name}"
        running[name] = _running(name, run, instance, here, nodes, spec.now)
        check_fits_somewhere(running[name].job, rooms, resources, here)
    pending: dict[str, Job] = {}
    for name, job_spec in spec.pending.items():
        here = f"{where}.pending.{name}"
        if name in running:
            raise CaseError(f"{here}: job '{name}' is also running (a job is running or waiting, not both)")
        if job_spec.submit > spec.now:
            raise CaseError(f"{here}.submit: {job_spec.submit:g} is after the cycle's time ({spec.now:g})")
        pending[name] = job_of(name, job_spec, instance, here)
        check_fits_somewhere(pending[name], rooms, resources, here)
    since = {name: job.submit for name, job in pending.items()}
    return ClusterState(instance, spec.now, running, pending, since, nodes, settings)


def _running(
    name: str, spec: Any, instance: Instance, where: str, nodes: Mapping[str, np.ndarray] | None, now: float
) -> Running:
    job = job_of(name, spec, instance, where)
    pods = job.pods if spec.running_pods is None else spec.running_pods
    if pods > job.pods or pods < job.least:
        raise CaseError(f"{where}.running_pods: {pods} pods running, but the job runs {job.least} to {job.pods}")
    if spec.start > now:
        raise CaseError(f"{where}.start: {spec.start:g} is after the cycle's time ({now:g})")
    if spec.nodes and nodes is None:
        raise CaseError(f"{where}.nodes: the cycle has no nodes (give cycle.nodes, or leave the job's nodes out)")
    if nodes is not None:
        if len(spec.nodes) != pods:
            raise CaseError(f"{where}.nodes: {len(spec.nodes)} nodes for {pods} running pods (one node per pod)")
        for k, node in enumerate(spec.nodes):
            check_known(f"{where}.nodes[{k}]", "node", node, list(nodes))
    return Running(job, pods, spec.start, tuple(spec.nodes))


def cycle_decisions(case: Any, mechanism: str) -> list[Decision]:
    """One scheduling cycle of ``case`` (its ``cycle``) decided by ``mechanism``'s online form with
    the case's settings."""
    if case.cycle is None:
        raise CaseError(f"{case.name}: the case has no 'cycle' (the jobs running and waiting) to decide")
    return online_policy(get(mechanism), case.cycle.settings).decide(case.cycle)


__all__ = ["check_fits_somewhere", "cycle_decisions", "cycle_state", "job_of", "nodes_of"]
