"""The names of the fairness properties, as users write them.

Case files (claims), the command line and the checkers all accept full names, initials
(``si``, ``ef``, ``dpo``) or unambiguous prefixes; :func:`property_names` resolves them.  The
checkers live in :mod:`fairalloc.analysis.properties` and
:mod:`fairalloc.analysis.dynamic_properties`, which hold themselves equal to these lists.
"""

from __future__ import annotations

from fairalloc.core.errors import UnknownNameError, unknown

#: the properties of static mechanisms in the DRF paper (section 3): the default list on a paper case
PAPER_PROPERTIES = (
    "sharing_incentive",
    "strategy_proofness",
    "envy_freeness",
    "pareto_efficiency",
    "single_resource_fairness",
    "bottleneck_fairness",
    "population_monotonicity",
    "resource_monotonicity",
)

#: the promises of policies with guarantees and limits (issue 15): what production schedulers owe a queue
QUEUE_PROPERTIES = (
    "guarantee_honoured",
    "limit_respected",
    "no_overcommit",
    "work_conserving",
)

#: every property of static mechanisms; all twelve are the default list on a queue case
PROPERTIES = PAPER_PROPERTIES + QUEUE_PROPERTIES

#: the properties of dynamic mechanisms (DMFA-SRQ paper, section 3; Dynamic DRF)
DYNAMIC_PROPERTIES = (
    "sharing_incentive",
    "strategy_proofness",
    "dynamic_pareto_optimality",
    "dynamic_envy_freeness",
    "irreversibility",
    "shared_monotonicity",
)


def property_names(spec: str | None, dynamic: bool = False, queues: bool = False) -> list[str]:
    """``"si,ef"``-style lists: full names, initials or unambiguous prefixes; ``None`` means the
    default list: the DRF paper's eight, or all twelve for a queue case (``queues``).

    ``dynamic``: the properties of dynamic mechanisms (dpo, si, def, sp, irreversibility).

    >>> property_names("gh,lr,no,wc")
    ['guarantee_honoured', 'limit_respected', 'no_overcommit', 'work_conserving']
    >>> len(property_names(None)), len(property_names(None, queues=True))
    (8, 12)
    """
    if spec is not None and not isinstance(spec, str):
        raise TypeError(f"property: expected property names (str, as 'si,ef'), got {type(spec).__name__}")
    known = DYNAMIC_PROPERTIES if dynamic else PROPERTIES
    if not spec:
        return list(DYNAMIC_PROPERTIES if dynamic else PROPERTIES if queues else PAPER_PROPERTIES)
    names = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        matches = (
            [p for p in known if p == part]
            or [p for p in known if "".join(w[0] for w in p.split("_")) == part]
            or [p for p in known if p.startswith(part)]
        )
        if len(matches) > 1:
            raise UnknownNameError(f"property: '{part}' is ambiguous (it could be {', '.join(matches)})")
        if not matches:
            other, kind = (PROPERTIES, "static") if dynamic else (DYNAMIC_PROPERTIES, "dynamic")
            why = f"; '{part}' is a property of {kind} mechanisms" if part in other else ""
            raise UnknownNameError(f"property: {unknown('property', part, known, 'properties')}{why}")
        names.append(matches[0])
    return names
