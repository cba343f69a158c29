"""Engines: the algorithms several mechanisms share.

Belongs here: progressive filling, the max-min LP sequence, the dual Newton method, the dynamic
(DMFA-SRQ) threshold step and the one discrete DRF / H-DRF engine over a group tree.  A
mechanism in ``models/`` is a few lines over one of these.  Imports: ``fairalloc.core`` only.
"""
