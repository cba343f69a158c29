"""Analysis: what is asked of an allocation once it exists.

Belongs here: valuing a bundle with a user's true demand, the static and dynamic properties, the
verifier (manipulation), the counterexample finder, the case-library reproduction, the
trade-off frontier and sweeps.  Imports: ``core``, ``engines``, ``io`` and ``fairalloc.models``;
never ``scheduling``, ``cli`` or ``explorer``.
"""
