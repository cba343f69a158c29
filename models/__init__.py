"""The fairness notions, one module each (installed as ``fairalloc.models``).

Each module registers its mechanisms when it is imported.  Importing this package imports none of
them: :data:`MECHANISMS` names each built-in mechanism's module, in the order tables show them
(DRF, then the two alternatives the DRF paper compares it with, then the efficiency end, then the
families between them: alpha-fairness, FDS; the schedulers of tasks over time last), and the
registry imports a module at the first look-up of one of its names
(:data:`fairalloc.core.registry.BUILTINS`), so that solving with DRF imports DRF's module alone.
``fairalloc.models.drf`` works without importing it first.

Belongs here: one file per fairness notion or policy, read like its paper or its scheduler's
source, each a few lines over an engine.  Imports: ``fairalloc.core`` and ``fairalloc.engines``
only.
"""

import importlib
from types import ModuleType

#: every built-in mechanism -> the module of this package that registers it, in display order
#: (tests/test_startup.py checks it against what the modules register)
MECHANISMS = {
    "drf": "drf",
    "asset": "asset",
    "ceei": "ceei",
    "utilitarian": "utilitarian",
    "alpha-fair": "alpha_fair",
    "alpha-tasks": "alpha_fair",
    "fds": "alpha_fair",
    "dmfa-srq": "dmfa_srq",
    "ddrf": "dmfa_srq",
    "hdrf": "hdrf",
    "hdrf-naive": "hdrf",
    "hdrf-collapsed": "hdrf",
    "hdrf-fluid": "hdrf_fluid",
    "mesos-drf": "mesos_drf",
    "yarn-fair": "yarn_fair",
    "yarn-fair-steady": "yarn_fair",
    "yarn-capacity": "yarn_capacity",
    "volcano-proportion": "volcano_proportion",
    "volcano-capacity": "volcano_capacity",
    "yunikorn-fair": "yunikorn_fair",
    "kueue": "kueue",
    "mfs": "mfs",
    "cpu-fair": "cpu_fair",
    "slots": "slots",
    "capacity": "slots",
    "fifo": "fifo",
    "quincy": "quincy",
}

__all__ = sorted(set(MECHANISMS.values()))


def __getattr__(name: str) -> ModuleType:
    """A module of this package not imported yet (``fairalloc.models.drf``)."""
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
