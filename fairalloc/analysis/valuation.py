"""Valuing a bundle with a user's true demand.

Bundles are always valued with the Leontief utility of the user's *true* demand, capped by her
task bound: ``u_i(B) = min(T_i, min_{j: D_ij > 0} B_j / D_ij)`` (DRF paper, section 2).  The
properties, the dynamic properties and the verifier all value bundles here, so none of them
needs another.
"""

from __future__ import annotations

import numpy as np

from fairalloc.core.instance import Instance
from fairalloc.core.tolerances import PROPERTY


def leontief(instance: Instance, i: int, bundle: np.ndarray) -> float:
    """Tasks user ``i`` can run from ``bundle`` with her true demand (capped by ``max_tasks``)."""
    d = instance.demand[i]
    need = d > 0
    value = float(np.min(bundle[need] / d[need]))
    return min(value, float(instance.bounds()[i]))


def tolerance(*values) -> float:
    """Absolute slack allowed when comparing task counts of this magnitude."""
    return PROPERTY * max([1.0, *(abs(float(v)) for v in values)])
