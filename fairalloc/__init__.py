"""fairalloc: multi-resource fair allocation as declarative programs with fast exact paths.

>>> import fairalloc
>>> case = fairalloc.load_case("drf-section-4-1")
>>> fairalloc.solve(case, "drf").tasks.tolist()
[3.0, 2.0]
"""

try:
    from importlib.util import find_spec as _find_spec

    from fairalloc import _moved
    from fairalloc.core.allocation import Allocation
    from fairalloc.core.backends import Program
    from fairalloc.core.errors import CaseError, FairallocError, SolverError, UnknownNameError
    from fairalloc.core.instance import Instance
    from fairalloc.core.registry import Mechanism, available, get, register
    from fairalloc.io.cases import bundled_cases, load_case, parse_case

    for _linked in ("models", "case_library"):  # the links to the checkout's models/ and cases/
        if _find_spec(f"{__name__}.{_linked}") is None:
            raise ModuleNotFoundError(f"No module named '{__name__}.{_linked}'", name=f"{__name__}.{_linked}")
    from fairalloc import models as _models  # noqa: F401  (the built-in mechanisms register on import)
except ModuleNotFoundError as _missing:  # not installed: one clear line, no deep traceback
    _packaged = (f"{__name__}.models", f"{__name__}.case_library")
    if (_missing.name or "").partition(".")[0] == __name__ and _missing.name not in _packaged:
        raise  # a module of fairalloc itself is missing: a bug
    raise ImportError(
        f"fairalloc is not installed in this Python ({_missing}); run 'make run' or 'pip install -e .' in the checkout"
    ) from None

_moved.install()  # old flat paths still import

__version__ = "0.1.0"


def solve(instance: Instance, mechanism: str | Mechanism = "drf", method: str = "auto") -> Allocation:
    """Allocate ``instance`` (an :class:`Instance` or a loaded case) with a registered mechanism.

    ``method``: ``"auto"`` (the fast path where one exists), ``"program"`` or ``"fast"``.
    """
    return get(mechanism).allocate(getattr(instance, "instance", instance), method)


def program(instance: Instance, mechanism: str | Mechanism = "drf") -> Program:
    """The declarative program of ``mechanism`` on ``instance`` (inspect, export, then solve)."""
    return get(mechanism).program(getattr(instance, "instance", instance))


__all__ = [
    "Allocation",
    "CaseError",
    "FairallocError",
    "Instance",
    "Mechanism",
    "Program",
    "SolverError",
    "UnknownNameError",
    "available",
    "bundled_cases",
    "get",
    "load_case",
    "parse_case",
    "program",
    "register",
    "solve",
]
