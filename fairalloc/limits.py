"""Every bound on the work one input can cause, in one place.

A file, an option or a request that would pass one of these bounds is refused with one line
(exit code 2) before the work starts, or the work stops at the bound with a clear error; nothing
runs without limit.  The README's "Limits" section lists each bound, its value and what happens
beyond it (``tests/test_limits_documented.py`` keeps the two in step).
"""

# -- input files and messages ---------------------------------------------------------------------
#: a case, workload or trace file larger than this is refused before it is parsed (devices and
#: pipes are read up to this many bytes and then refused)
MAX_FILE_BYTES = 64 * 2**20
#: mappings and lists nested deeper than this are refused (deeper YAML only comes from generators)
MAX_YAML_DEPTH = 64
#: nodes of a YAML document once its aliases are expanded ("billion laughs" documents are refused)
MAX_YAML_NODES = 1_000_000
#: characters of an offending value quoted in an error message
MAX_EXCERPT = 60

# -- numbers --------------------------------------------------------------------------------------
#: every non-zero capacity, demand, weight and task bound lies within [MIN_MAGNITUDE, MAX_MAGNITUDE]:
#: beyond, float64 loses digits (subnormals) or a product overflows
MIN_MAGNITUDE = 1e-30
MAX_MAGNITUDE = 1e30
#: within one user, largest / smallest non-zero per-task share (demand / capacity); beyond, the
#: smaller share is below what float64 resolves beside the larger one in a sum
MAX_SHARE_RATIO = 1e12
#: largest / smallest weight in an instance
MAX_WEIGHT_RATIO = 1e12
#: digits of an exact number written as text ("100/31", "2.52e3"), its exponent included
MAX_EXACT_DIGITS = 200

# -- searches and parallel work (checks, verifier, falsifier, claims) -----------------------------
#: evaluations per user of a manipulation search (--budget, a claim's budget)
MAX_BUDGET = 100_000
#: worker processes of falsify / table2 (--workers)
MAX_WORKERS = 64
