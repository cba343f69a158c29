"""Dominant Resource Fairness (DRF).

Ghodsi, Zaharia, Hindman, Konwinski, Shenker, Stoica, "Dominant Resource Fairness: Fair
Allocation of Multiple Resource Types", USENIX NSDI 2011, section 4 and Appendix A
(docs/formulations.md section 1).

DRF is max-min fairness (leximin) on dominant shares.  User ``i`` with per-task demand ``D_i``
and ``x_i`` tasks has dominant share ``s_i = x_i * max_j D_ij / (R_j w_ij)``: a weighted, linear
key, so DRF is progressive filling on it (:mod:`fairalloc.engines.maxmin`)::

    leximin_x  ( x_i * k_i )_i    k_i = max_j D_ij / (R_j w_ij)
    s.t.       sum_i x_i D_ij <= R_j,   0 <= x_i <= T_i

Generalisations: zero demands (a user is not stopped by a resource she does not use), scalar or
per-resource weights (section 4.3), task bounds ``T_i`` (the excess goes to the others), and a
queue case's guarantees and limits (issue 15): ``g_i <= x_i <= u_i`` with ``g_i`` the largest
multiple of the request within the queue's guarantee and ``u_i`` within its limit, both at most
``T_i`` (:func:`fairalloc.engines.maxmin.queue_task_bounds`); a user starts at ``g_i`` and grows
once the water level reaches her share there.  Guarantees needing more than a capacity are
refused.  The groups of a queue case are not read (``hdrf-fluid`` is the tree version).
Properties (Table 2): sharing incentive, strategy-proofness, envy-freeness, Pareto efficiency,
single-resource and bottleneck fairness, population monotonicity (strictly positive demands);
not resource monotonicity.

Section 4.1: 9 CPUs, 18 GB, A = <1 CPU, 4 GB>, B = <3 CPU, 1 GB> gives A 3 tasks, B 2 tasks.

>>> import fairalloc
>>> inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], users=["A", "B"])
>>> fairalloc.solve(inst, "drf").tasks.tolist()
[3.0, 2.0]
"""

from __future__ import annotations

from fairalloc.core.registry import register
from fairalloc.engines.maxmin import MaxMinMechanism
from fairalloc.engines.offers import OwnerOrder


@register("drf")
class DRF(MaxMinMechanism):
    summary = "Dominant Resource Fairness: max-min on (weighted) dominant shares"
    about = "Sharing incentive, strategy-proof, envy-free and Pareto efficient; not resource monotonic."
    section = "1"
    share_name = "weighted dominant share"
    #: max-min of k_i x_i: k_i x_i is the same in any unit of a resource or of a task
    scaling = "users"

    def key(self, instance):
        if instance.weights is None:
            return instance.per_task_dominant_share  # one pass: max_j D_ij / R_j
        if instance.weights.ndim == 1:
            return instance.per_task_dominant_share / instance.weights
        return (instance.share_per_task / instance.weights).max(axis=1)

    def exact_key(self, ex):
        return [max(ex.D[i][j] / (ex.R[j] * ex.W[i][j]) for j in range(ex.m) if ex.R[j] > 0) for i in range(ex.n)]

    def offers(self) -> DRFOffers:
        """DRF's task-offer face: Algorithm 1 on the simulator's offers (owners unweighted)."""
        return DRFOffers()


class DRFOffers(OwnerOrder):
    """DRF on offers (section 4.2's Algorithm 1, as Mesos makes them): a node to the owner with the lowest
    dominant share (over the whole cluster) whose next task fits it; ties to the owner listed first."""

    name = "drf"
    reads_tallies = False  # (its keys: what each owner holds)

    def bind(self, state):
        super().bind(state)
        self.key = state.dominant_share  # (one call less per launch and finish)
        self.drf_key = not self.more_resources

    def key(self, u):
        return self.state.dominant_share(u)


__all__ = ["DRF", "DRFOffers"]
