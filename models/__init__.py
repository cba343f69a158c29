"""The fairness notions, one module each (installed as ``fairalloc.models``).

Importing this package registers the built-in mechanisms, in the order tables show them: DRF,
then the two alternatives the DRF paper compares it with, then the efficiency end.
"""

from . import drf  # noqa: I001  (registration order is display order)
from . import asset
from . import ceei
from . import utilitarian
from . import dmfa_srq
from . import hdrf

__all__ = ["asset", "ceei", "dmfa_srq", "drf", "hdrf", "utilitarian"]
