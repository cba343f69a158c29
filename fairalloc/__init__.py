"""fairalloc: multi-resource fair allocation as declarative programs with fast exact paths.

>>> import fairalloc
>>> case = fairalloc.load_case("drf-section-4-1")
>>> fairalloc.solve(case, "drf").tasks.tolist()
[3.0, 2.0]

``import fairalloc`` imports none of the layers: each name below is imported from its module
when first used (``fairalloc --help`` needs none of them), and the built-in mechanisms register
at the first look-up of a mechanism (:data:`fairalloc.core.registry.BUILTINS`).
"""

from __future__ import annotations

import importlib
from importlib.util import find_spec as _find_spec
from typing import TYPE_CHECKING, Any

from fairalloc import _moved
from fairalloc.core.deferred import attributes as _attributes

if TYPE_CHECKING:
    from fairalloc.core.allocation import Allocation
    from fairalloc.core.backends import Program
    from fairalloc.core.errors import CaseError, FairallocError, SolverError, UnknownNameError
    from fairalloc.core.instance import Instance
    from fairalloc.core.registry import Mechanism, available, get, register
    from fairalloc.io.cases import bundled_cases, load_case, parse_case

#: the third-party packages the layers import as they load (checked here, imported when used)
_DEPENDENCIES = ("numpy", "scipy", "pulp", "networkx", "tabulate", "yaml", "pydantic")

try:
    for _linked in ("models", "case_library"):  # the links to the checkout's models/ and cases/
        if _find_spec(f"{__name__}.{_linked}") is None:
            raise ModuleNotFoundError(f"No module named '{__name__}.{_linked}'", name=f"{__name__}.{_linked}")
    for _dependency in _DEPENDENCIES:
        if _find_spec(_dependency) is None:
            raise ModuleNotFoundError(f"No module named '{_dependency}'", name=_dependency)
except ModuleNotFoundError as _missing:  # not installed: one clear line, no deep traceback
    raise ImportError(
        f"fairalloc is not installed in this Python ({_missing}); run 'make run' or 'pip install -e .' in the checkout"
    ) from None

_moved.install()  # old flat paths still import

__version__ = "0.1.0"

#: the public names, each imported from its module when first used
_HOMES = {
    "Allocation": "fairalloc.core.allocation",
    "Program": "fairalloc.core.backends",
    "CaseError": "fairalloc.core.errors",
    "FairallocError": "fairalloc.core.errors",
    "SolverError": "fairalloc.core.errors",
    "UnknownNameError": "fairalloc.core.errors",
    "Instance": "fairalloc.core.instance",
    "Mechanism": "fairalloc.core.registry",
    "available": "fairalloc.core.registry",
    "get": "fairalloc.core.registry",
    "register": "fairalloc.core.registry",
    "bundled_cases": "fairalloc.io.cases",
    "load_case": "fairalloc.io.cases",
    "parse_case": "fairalloc.io.cases",
}
_public = _attributes(__name__, _HOMES)


def __getattr__(name: str) -> Any:
    """A public name (imported from its module), or a subpackage (``fairalloc.models``)."""
    try:
        return _public(name)
    except AttributeError:
        if name.startswith("__") or _find_spec(f"{__name__}.{name}") is None:
            raise
    return importlib.import_module(f"{__name__}.{name}")


def solve(instance: Instance, mechanism: str | Mechanism = "drf", method: str = "auto") -> Allocation:
    """Allocate ``instance`` with a registered mechanism.

    ``instance``: an :class:`Instance`, a loaded case, or a case mapping (``{"resources": ...,
    "users": ...}``, read by :func:`parse_case` as a YAML file is).  ``method``: ``"auto"`` (the
    fast path where one exists), ``"program"`` or ``"fast"``.  An argument of the wrong type is a
    ``TypeError`` naming it; a value of the right type that cannot be used, a :class:`CaseError`.
    """
    from fairalloc.core.registry import get

    return get(mechanism).allocate(_instance(instance), method)


def program(instance: Instance, mechanism: str | Mechanism = "drf") -> Program:
    """The declarative program of ``mechanism`` on ``instance`` (as :func:`solve` takes it:
    inspect, export, then solve)."""
    from fairalloc.core.registry import get

    return get(mechanism).program(_instance(instance))


def _instance(value: object) -> Instance:
    """An instance or a case's, else :func:`fairalloc.io.cases.as_instance` (a case mapping, or a
    TypeError): the case parser is imported only then, so that solving an instance needs none."""
    from fairalloc.core.instance import Instance

    inner = getattr(value, "instance", value)
    if isinstance(inner, Instance):
        return inner
    from fairalloc.io.cases import as_instance

    return as_instance(value)


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
