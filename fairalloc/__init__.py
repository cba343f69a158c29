"""fairalloc: multi-resource fair allocation as declarative programs with fast exact paths.

>>> import fairalloc
>>> case = fairalloc.load_case("drf-section-4-1")
>>> fairalloc.solve(case, "drf").tasks.tolist()
[3.0, 2.0]
"""

from .allocation import Allocation
from .backends import Program
from .cases import bundled_cases, load_case, parse_case
from .errors import CaseError, FairallocError, SolverError, UnknownNameError
from .instance import Instance
from .registry import Mechanism, available, get, register

__version__ = "0.1.0"


def solve(instance: Instance, mechanism: str | Mechanism = "drf", method: str = "auto") -> Allocation:
    """Allocate ``instance`` (an :class:`Instance` or a loaded case) with a registered mechanism.

    ``method``: ``"auto"`` (the fast path where one exists), ``"program"`` or ``"fast"``.
    """
    return get(mechanism).allocate(getattr(instance, "instance", instance), method)


def program(instance: Instance, mechanism: str | Mechanism = "drf") -> Program:
    """The declarative program of ``mechanism`` on ``instance`` (inspect, export, then solve)."""
    return get(mechanism).program(getattr(instance, "instance", instance))


__all__ = ["Allocation", "CaseError", "FairallocError", "Instance", "Mechanism", "Program", "SolverError",
           "UnknownNameError", "available", "bundled_cases", "get", "load_case", "parse_case", "program",
           "register", "solve"]
