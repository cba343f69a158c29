"""Asset Fairness.

Ghodsi, Zaharia, Hindman, Konwinski, Shenker, Stoica, "Dominant Resource Fairness: Fair
Allocation of Multiple Resource Types", USENIX NSDI 2011, section 5.1 (docs/formulations.md
section 2).  Every resource is an asset worth its share of the pool; a user's *aggregate* share
is ``a_i = x_i * sum_j D_ij / (R_j w_ij)``, and Asset Fairness is max-min (leximin) on it,
computed by the same progressive filling as DRF (:mod:`fairalloc.engines.maxmin`)::

    leximin_x  ( x_i * k_i )_i    k_i = sum_j D_ij / (R_j w_ij)
    s.t.       sum_i x_i D_ij <= R_j,   0 <= x_i <= T_i

Properties (Table 2): strategy-proof, envy-free, Pareto efficient, single-resource fair,
population monotone; it violates sharing incentive (Theorem 1), bottleneck fairness (Theorem 2)
and resource monotonicity (Theorem 3).

Section 4.1 example: ``6x = 7y`` with the CPU constraint binding gives ``x = 2.52, y = 2.16``
(``63/25, 54/25``).

>>> import fairalloc
>>> inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], users=["A", "B"])
>>> [str(v) for v in fairalloc.solve(inst, "asset").exact]
['63/25', '54/25']
"""

from __future__ import annotations

import numpy as np

from fairalloc.core.registry import register
from fairalloc.engines.maxmin import MaxMinMechanism


@register("asset")
class AssetFairness(MaxMinMechanism):
    summary = "Asset Fairness: max-min on the (weighted) sum of resource shares"
    about = (
        "Strategy-proof, envy-free, Pareto efficient, population monotonic; unlike DRF, no sharing incentive "
        "or bottleneck fairness."
    )
    section = "2"
    share_name = "weighted aggregate share"
    #: max-min of sum_j x_i D_ij / (R_j w_ij): the same in any unit of a resource or of a task
    scaling = "users"

    def key(self, instance):
        if instance.weights is None or instance.weights.ndim == 1:
            total = instance.share_rows(np.sum)
            return total if instance.weights is None else total / instance.weights
        return (instance.share_per_task / instance.weights).sum(axis=1)

    def exact_key(self, ex):
        return [sum(ex.D[i][j] / (ex.R[j] * ex.W[i][j]) for j in range(ex.m) if ex.R[j] > 0) for i in range(ex.n)]
