"""MFS: the two-level DRF of "A Multi-resource Fair Scheduler of Hadoop" on offers (``mfs``).

Owners are groups of jobs (docs/formulations.md section 7.5): groups in increasing weighted dominant
share, inside a group its jobs in increasing weighted dominant share; the first job whose next task
fits the offered node gets it. A scheduler of task offers only (kind ``online``).
"""

from __future__ import annotations

from fairalloc.core.registry import register
from fairalloc.engines.offers import OnlineMechanism, OwnerOrder, Scheduler


class MFS(OwnerOrder):
    """The MFS paper's two-level DRF: groups (owners) by weighted dominant share (the engine's descent),
    then the group's jobs by weighted dominant share; the first job whose next task fits the node
    gets it (if none does, the next group is tried).

    A job's share counts every resource, from the simulator's per-job totals of its running tasks
    (``job.cpu``, ``job.mem`` and ``job.extra`` for GPUs and the other resources)."""

    name = "mfs"

    def bind(self, state):
        Scheduler.bind(self, state)
        weights = state.workload.group_weights or {}
        self._build(weights=[weights.get(o, 1.0) for o in state.owners])
        self.extra = len(state.resources) > 2

    def key(self, u):
        return self.state.dominant_share(u) / self.weight[u]

    def group_share(self, u: int) -> float:
        return self.key(u)

    def job_share(self, job) -> float:
        st = self.state
        share = max(job.cpu / st.total_cpu, job.mem / st.total_mem)
        if self.extra:
            share = max([share, *(a / st.total[k] for k, a in job.extra.items())])
        return share / job.spec.weight

    def pick(self, state, node):
        taken = []

        def fits(u):
            jobs = state.user_jobs[u]
            state.steps += len(jobs)
            for job in sorted((j for j in jobs.values() if j.runnable()), key=lambda j: (self.job_share(j), j.id)):
                if state.fits(node, job.next_task()):
                    taken.append(job)
                    return True
            return False

        if not self.waiting:
            return None
        u = self.engine.pick(fits)
        state.steps += self.engine.passed
        if u is None:
            return None
        return taken[0]


@register("mfs")
class MFSMechanism(OnlineMechanism):
    summary = "MFS: two-level DRF of Hadoop's multi-resource fair scheduler (groups, then their jobs)"
    about = "DRF among groups of jobs, then among a group's jobs; no static answer, only task offers."
    section = "7.5"

    def offers(self):
        return MFS()


__all__ = ["MFS", "MFSMechanism"]
