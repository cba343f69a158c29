"""Every numerical tolerance of fairalloc, in one place.

All comparisons are relative to the natural scale (a capacity, a task count), so instances in
any unit behave alike.
"""

#: A resource counts as saturated when its use reaches ``(1 - SATURATION) * capacity``.
SATURATION = 1e-9
#: Feasibility slack accepted from a solver (relative to capacity / bound).
FEASIBILITY = 1e-7
#: Two allocations are the same when every task count agrees to this (relative, floor 1).
AGREEMENT = 1e-7
#: Largest denominator tried when recovering an exact rational allocation.
MAX_DENOMINATOR = 10**6
#: Above this many users no exact rational form is attempted (Fraction arithmetic is O(n m)).
EXACT_MAX_USERS = 2000
#: A property is violated when a task count misses its bound by more than this (relative, floor 1).
PROPERTY = 1e-6
#: Differences below this (absolute, in tasks or shares) are floating-point noise: a margin of
#: -1.1e-16 prints as 0.
NOISE = 1e-12
#: yunikorn-fair's filling: two shares within this (relative, floor 1) are one level.  Equal shares
#: computed over different subtrees differ in their last bits (sums in another order), and which
#: group's jump comes first must not follow them.
LEVEL_TIE = 1e-12
#: Numbers written to JSON and YAML are the shortest decimal within this many units in the last
#: place of the computed double: 0.6000000000000001 (one ulp above 0.6) is written 0.6.
NOISE_ULPS = 2
#: Discrete schedulers (Algorithm 1, H-DRF): a task fits while the use stays within
#: ``(1 + FIT) * capacity`` (a sum of whole tasks may overshoot a capacity it equals by a few ulps).
FIT = 1e-12
#: A lie is profitable when it raises the liar's true task count by more than this (relative, floor 1).
GAIN = 1e-7
#: The dynamic threshold step (DMFA-SRQ, DDRF): a resource's free room within this many roundings
#: of the numbers it was computed from is a tie with the resource that binds, hence zero.
ROOM_ULPS = 16
#: kueue's piecewise linear functions of a level: a step between two knots within this many
#: roundings of the knot is a jump, not a ramp (knots meant equal, read off different sums, part
#: in their last bits, and a ramp that narrow has a slope of 1e15 whose cancellation in a running
#: sum of slopes loses a tenth of the others).
KNOT_ULPS = 16
#: The dynamic threshold step: every level ``M^k`` agrees with the exact rational level to this
#: (relative), whatever the shares (a step's rounding is a few units of ``eps M^k``, not ``eps Q / q``).
DYNAMIC_STEP = 1e-12
