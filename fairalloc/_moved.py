"""Old import paths of modules that moved into the layers keep working.

Until 0.1 the package was flat (``fairalloc.properties``, ``fairalloc.simulator``, ...).  Code
written against those paths still imports: each old name resolves to the very module object of
its new home (``fairalloc.simulator is fairalloc.scheduling.simulator``), so monkeypatching
through either name patches the same thing.  New code should use the new paths.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

#: old module name (under ``fairalloc``) -> its home in the layers
MOVED = {
    "allocation": "core.allocation",
    "backends": "core.backends",
    "certificate": "core.certificate",
    "decimals": "core.decimals",
    "errors": "core.errors",
    "exact": "core.exact",
    "files": "core.files",
    "html": "core.html",
    "instance": "core.instance",
    "limits": "core.limits",
    "registry": "core.registry",
    "tolerances": "core.tolerances",
    "dual_newton": "engines.dual_newton",
    "filling": "engines.filling",
    "hierarchy": "engines.hierarchy",
    "maxmin": "engines.maxmin",
    "cases": "io.cases",
    "dynamic": "analysis.dynamic_properties",
    "falsify": "analysis.falsify",
    "manipulation": "analysis.manipulation",
    "properties": "analysis.properties",
    "reproduce": "analysis.reproduce",
    "sweep": "analysis.sweep",
    "tradeoff": "analysis.tradeoff",
    "simulator": "scheduling.simulator",
    "traces": "scheduling.traces",
    "workloads": "scheduling.workloads",
}


class _Alias:
    """A meta path finder and loader (by protocol: ``importlib.abc`` would cost every start
    the import of ``importlib.resources``)."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, leaf = fullname.rpartition(".")
        if package != "fairalloc" or leaf not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(f"fairalloc.{MOVED[spec.name.rpartition('.')[2]]}")
        sys.modules[spec.name] = module
        return module

    def exec_module(self, module):
        pass  # the module ran once, under its new name


def install() -> None:
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.append(_Alias())
