"""Modules imported when first used, so that ``fairalloc --help`` and the fast paths start at once.

pulp, cvxpy, scipy and networkx each take a tenth of a second or more to import, and most runs
need none of them (DRF's fast path builds no LP).  A module that needs one only to build a
program writes::

    if TYPE_CHECKING:
        import pulp
    else:
        pulp = deferred("pulp")

and uses ``pulp.LpProblem`` as before: the first attribute looked up imports the module; type
checkers see the real one.  Nothing enters ``sys.modules`` until then.

A package that re-exports names from heavier modules (``fairalloc.Instance``) gives itself a
``__getattr__ = attributes(__name__, {"Instance": "fairalloc.core.instance", ...})``: each name is
imported from its home the first time it is asked for.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


class deferred:  # noqa: N801  (read as a module name at its call sites)
    """Stands for the module ``name`` and imports it on the first attribute looked up."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<deferred module {self._name!r}{' (imported)' if self._module is not None else ''}>"


def attributes(module: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A ``__getattr__`` (PEP 562) for the module ``module``: the name ``n`` of ``homes`` is the
    attribute of the module ``homes[n]`` (``"module:attribute"`` where the names differ),
    imported when first asked for and then kept in ``module`` (so that monkeypatching it works
    as for any attribute)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, attribute = home.partition(":")
        value = getattr(importlib.import_module(where), attribute or name)
        setattr(sys.modules[module], name, value)
        return value

    return __getattr__
