"""Core: the data and the contract every other layer builds on.

Belongs here: :class:`Instance` and :class:`Allocation`, the error hierarchy, tolerances and
limits, exact fractions, the :class:`Mechanism` interface and its registry, and
:class:`Program` (pulp / cvxpy: solver choice, statuses to errors, export), the certificate every
allocation passes.  Imports: the standard library and third-party packages only, never another
fairalloc layer.
"""
