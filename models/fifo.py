"""First in, first out on offers (``fifo``): jobs in submit order, strict head of line.

Only the earliest job with a runnable task is considered; if its next task does not fit the offered
node, nothing is launched there (Hadoop's default FIFO scheduler, the baseline every fair scheduler is
compared with). A scheduler of task offers only (kind ``online``).
"""

from __future__ import annotations

from fairalloc.core.registry import register
from fairalloc.engines.offers import OnlineMechanism, Scheduler


class FIFO(Scheduler):
    name = "fifo"
    reads_tallies = False

    def pick(self, state, node):
        state.steps += 1
        job = state.first_job()
        return job if job is not None and state.fits(node, job.next_task()) else None


@register("fifo")
class FIFOMechanism(OnlineMechanism):
    summary = "first in, first out: the earliest job's next task, or nothing (strict head of line)"
    about = "No fairness at all: a large job at the head holds back every owner behind it."
    section = "8"

    def offers(self):
        return FIFO()


__all__ = ["FIFO", "FIFOMechanism"]
