"""The fairness notions, one module each (installed as ``fairalloc.models``).

Importing this package registers the built-in mechanisms.
"""

from . import asset, ceei, drf, utilitarian  # noqa: F401

__all__ = ["asset", "ceei", "drf", "utilitarian"]
