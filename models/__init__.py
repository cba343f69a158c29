"""The fairness notions, one module each (installed as ``fairalloc.models``).

Importing this package registers the built-in mechanisms, in the order tables show them: DRF,
then the two alternatives the DRF paper compares it with, then the efficiency end, then the
families between them (alpha-fairness, FDS).

Belongs here: one file per fairness notion or policy, read like its paper or its scheduler's
source, each a few lines over an engine.  Imports: ``fairalloc.core`` and ``fairalloc.engines``
only.
"""

from . import drf  # noqa: I001  (registration order is display order)
from . import asset
from . import ceei
from . import utilitarian
from . import alpha_fair
from . import dmfa_srq
from . import hdrf
from . import hdrf_fluid
from . import mesos_drf
from . import yarn_fair
from . import volcano_proportion
from . import yunikorn_fair
from . import kueue

__all__ = [
    "alpha_fair",
    "asset",
    "ceei",
    "dmfa_srq",
    "drf",
    "hdrf",
    "hdrf_fluid",
    "kueue",
    "mesos_drf",
    "utilitarian",
    "volcano_proportion",
    "yarn_fair",
    "yunikorn_fair",
]
