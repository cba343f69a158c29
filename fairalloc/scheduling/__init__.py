"""Scheduling: allocation in discrete tasks over time.

Belongs here: Algorithm 1 and machines (DRF paper, section 4.2 and Theorem 7), the
discrete-event cluster simulator, workloads and traces.  Imports: ``core``, ``engines``, ``io``
and ``fairalloc.models``; never ``analysis``, ``cli`` or ``explorer``.
"""

from fairalloc.scheduling.algorithm1 import DRFScheduler, Launch, Placement, fill_machines, table_1

__all__ = ["DRFScheduler", "Launch", "Placement", "fill_machines", "table_1"]
