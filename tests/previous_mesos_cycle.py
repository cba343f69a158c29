"""fairalloc.models.mesos_cycle at commit f2f0d7d, kept verbatim as the oracle for the faster cycle
(the straightforward one, reading every queue's guarantee again at every cycle).  Its docstring then:

Apache Mesos' allocation cycle at the level of jobs: offers by the DRF sorter, quota first, quota
headroom held back, no preemption.

Source read: apache/mesos at commit c1b42f79d157aa900be5cbb0c1023f1479962aa7 (2024-08-23), Apache-2.0:

* ``src/master/allocator/mesos/hierarchical.cpp``, ``HierarchicalAllocatorProcess::__generateOffers``:
  one allocation cycle walks the agents twice.  *Stage 1*: on each agent, the roles in
  ``roleSorter->sort()`` order (sorted once per agent) that have a quota guarantee not yet consumed
  and frameworks are offered ``guaranteesOffering`` (the agent's available scalars shrunk to the
  unsatisfied guarantee, ``shrinkResources``) plus ``additionalScalarOffering`` (the rest, shrunk to
  the quota limit left, ``quotaLimits - rolesConsumedQuota``, and to the surplus headroom
  ``availableHeadroom - requiredHeadroom``).  *Stage 2*: on each agent, every role in sort order is
  offered what is available, shrunk to its limit left and to the surplus headroom.
  ``requiredHeadroom = sum over top-level roles of (guarantee - consumed quota)^+`` and
  ``availableHeadroom = total - allocated``; an offer consumes quota, takes what its guarantee
  part used off ``requiredHeadroom`` and all of it off ``availableHeadroom``;
* ``src/master/allocator/mesos/sorter/drf/sorter.cpp``, ``DRFSorter::sort`` and
  ``DRFSorter::calculateShare``: the roles by weighted dominant share of their subtree's allocation,
  then allocation count, then name (:func:`sorted_roles`, by which ``MesosDRF.order`` sorts too);
* ``include/mesos/mesos.proto``, ``Offer.Operation.LaunchGroup`` and ``TaskGroupInfo``: a task
  group is launched from one offer, on one agent, "atomically".

The job-level reading (fairalloc's; Mesos allocates resources to frameworks, which launch tasks):

* a leaf queue is a role and each waiting job a framework of it asking for one task group: the job
  is launched whole (a gang with ``min_pods``: the most pods the offer holds, at least
  ``min_pods``) from one offer, on one node (without nodes: the capacity is one agent);
* a role's waiting jobs are offered in the order they entered the queue (the framework sorter of a
  role sorts frameworks by their own dominant share, 0 for all waiting ones; fairalloc breaks that
  tie by arrival, where Mesos' sorter breaks it by allocation count and framework id);
* a framework accepts the offer exactly when its job fits it and launches only the job: the rest
  of the offer goes back to the agent at once (a decline without a refusal filter), so what the job
  does not use is offered on;
* quota is the queue's ``guarantee`` and ``limit``; a role's consumed quota is its subtree's usage
  (Mesos also counts reservations; none here).  Stage 1 serves a leaf's own guarantee; the required
  headroom sums the top-level queues' guarantees (Mesos sets quota on top-level roles only); the
  limit left is the tightest over the leaf and its groups;
* nothing is ever preempted: the allocator only offers (revocation and inverse offers are for
  maintenance, not fairness); ``wake`` is never needed;
* not modelled: agent order (Mesos shuffles the agents, ``std::random_shuffle``; fairalloc takes
  them in the order given), refusal filters, ``min_allocatable_resources``, reservations, revocable
  and shared resources.

Worked example (docs/online.md): cpu 10, a guaranteed 6 cpus and running nothing, b running 4 cpus
without guarantee; a waits for a1 (3 cpus), b for b1 (3 cpus).  requiredHeadroom = 6, available
6.  Stage 1: a is below its guarantee: a1 takes 3 of its guaranteed cpus (required 3, available 3).
Stage 2: b's offer is shrunk to the surplus 3 - 3 = 0, so b1 waits: a's unused guarantee is held.

Belongs here: the Mesos allocator's online rules.  Imports: ``fairalloc.core`` and ``fairalloc.engines``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fairalloc.core.queues import Queues, queues_of
from fairalloc.core.tolerances import FIT
from fairalloc.engines.online import Admit, ClusterState, Decision, Job, check_settings, pods_fitting

#: the Mesos online form has no options of its own
SETTINGS: dict[str, str] = {}


def sorted_roles(
    q: Queues,
    capacity: np.ndarray,
    usage: Callable[[str], np.ndarray],
    active: Mapping[str, bool],
    allocations: Mapping[str, int],
) -> list[str]:
    """The active leaves in ``DRFSorter::sort``'s order: at every node its children by weighted
    dominant share of ``usage(child)`` (a subtree's), then by ``allocations`` (a group's default: its
    leaves' total), then by name; shared by :meth:`~fairalloc.models.mesos_drf.MesosDRF.order` and the online form."""

    def count(v: str) -> float:
        if v in allocations:
            return allocations[v]
        return sum(allocations.get(u, 0) for u in q.leaves(v)) if q.is_group(v) else 0

    def listed(node: str | None) -> list[str]:
        kids = [c for c in q.children(node) if q.is_group(c) or active.get(c, False)]  # inactive: not sorted
        key = {c: (role_share(usage(c), capacity, q.weight[c]), count(c), c) for c in kids}
        out: list[str] = []
        for c in sorted(kids, key=key.__getitem__):
            out += listed(c) if q.is_group(c) else [c]
        return out

    return listed(None)


def role_share(usage: np.ndarray, capacity: np.ndarray, weight: float) -> float:
    """``DRFSorter::calculateShare``: the weighted dominant share of ``usage`` over the resources
    the cluster has."""
    on = capacity > 0
    return float(np.max(usage[on] / capacity[on], initial=0.0)) / weight


class MesosCycle:
    """One allocation cycle of the Mesos allocator per :meth:`decide` (the module's rules)."""

    name = "mesos-drf"

    def __init__(self, settings: Mapping[str, Any]):
        check_settings(settings, SETTINGS, "settings")
        #: admissions per leaf over the run (``Allocation::count``, the sorter's tie-break)
        self.allocations: dict[str, int] = {}

    def wake(self, state: ClusterState) -> float | None:
        return None

    def decide(self, state: ClusterState) -> list[Decision]:
        cycle = _Cycle(state, self.allocations)
        for stage in (1, 2):
            for node in cycle.agents:
                cycle.offer_agent(node, stage)
        return cycle.decisions


class _Cycle:
    """``__generateOffers`` over one state: the agents' free room, the roles' usage, the headroom."""

    def __init__(self, state: ClusterState, allocations: dict[str, int]):
        self.state, self.allocations = state, allocations
        self.q: Queues = queues_of(state.case)
        self.R = state.capacity
        self.usage = state.usage()
        self.free_nodes = state.free_on_nodes() if state.nodes is not None else {"": state.free()}
        self.agents = list(self.free_nodes)
        self.waiting: dict[str, list[Job]] = {}
        for job in state.pending.values():
            self.waiting.setdefault(job.queue, []).append(job)
        m = len(self.R)
        self.guarantee = {v: np.nan_to_num(np.asarray(self.q.guarantee[v], float), nan=0.0) for v in self.q.parent}
        top = self.q.children(None)
        self.required = sum(
            (np.maximum(self.guarantee[v] - self._subtree(v), 0.0) for v in top),
            start=np.zeros(m),
        )
        self.available = self.R - sum(self.usage.values(), start=np.zeros(m))
        self.decisions: list[Decision] = []

    def _subtree(self, v: str) -> np.ndarray:
        if not self.q.is_group(v):
            return self.usage[v]
        return sum((self.usage[u] for u in self.q.leaves(v)), start=np.zeros(len(self.R)))

    def _limit_left(self, leaf: str) -> np.ndarray:
        """The quota limit left, the tightest over the leaf and its groups."""
        left = np.asarray(self.q.limit[leaf], float) - self.usage[leaf]
        for group in self.q.path(leaf):
            left = np.minimum(left, np.asarray(self.q.limit[group], float) - self._subtree(group))
        return left

    def sorted(self) -> list[str]:
        active = {leaf: bool(self.waiting.get(leaf)) for leaf in self.state.case.users}
        return sorted_roles(self.q, self.R, self._subtree, active, self.allocations)

    def offer_agent(self, node: str, stage: int) -> None:
        for role in self.sorted():  # roleSorter->sort(), once per agent and stage
            if not (self.free_nodes[node] > FIT).any():
                return  # nothing left on this agent
            unsatisfied = np.maximum(self.guarantee[role] - self.usage[role], 0.0)
            if stage == 1 and not (unsatisfied > FIT).any():
                continue  # no guarantee, or consumed
            for job in list(self.waiting.get(role, [])):
                offer, guaranteed = self._offer(node, role, unsatisfied if stage == 1 else None)
                pods = _pods(job, offer, self.free_nodes[node])
                if pods is None:
                    continue
                self._launch(node, role, job, pods, guaranteed)
                unsatisfied = np.maximum(unsatisfied - job.total(pods), 0.0)
                if stage == 1 and not (unsatisfied > FIT).any():
                    break

    def _offer(self, node: str, role: str, unsatisfied: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """What the agent offers the role (stage 1 with ``unsatisfied``), and its guaranteed part."""
        available = np.maximum(self.free_nodes[node], 0.0)
        guaranteed = np.zeros_like(available) if unsatisfied is None else np.minimum(available, unsatisfied)
        additional = np.minimum(available - guaranteed, np.maximum(self._limit_left(role) - guaranteed, 0.0))
        if (self.required > FIT).any():
            additional = np.minimum(additional, np.maximum(self.available - self.required, 0.0))
        return guaranteed + additional, guaranteed

    def _launch(self, node: str, role: str, job: Job, pods: int, guaranteed: np.ndarray) -> None:
        used = job.total(pods)
        self.free_nodes[node] = self.free_nodes[node] - used
        self.usage[role] = self.usage[role] + used
        self.required = np.maximum(self.required - np.minimum(used, guaranteed), 0.0)
        self.available = self.available - used
        self.waiting[role].remove(job)
        self.allocations[role] = self.allocations.get(role, 0) + 1
        nodes = (node,) * pods if node else ()
        stage = "its quota guarantee" if (guaranteed > FIT).any() else "the DRF sorter's order"
        self.decisions.append(Admit(job.name, pods, nodes, f"offered to role {role} by {stage}"))


def _pods(job: Job, offer: np.ndarray, agent: np.ndarray) -> int | None:
    """The pods of ``job`` one offer holds on one agent: all of them, or a gang's most (at least
    ``min_pods``); ``None`` when fewer."""
    pods = pods_fitting(job, np.minimum(offer, agent))
    return pods if pods >= job.least else None


__all__ = ["SETTINGS", "MesosCycle", "role_share", "sorted_roles"]
