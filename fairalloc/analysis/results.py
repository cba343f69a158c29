"""What a property check returns, and how its witness reads.

A :class:`PropertyResult` says whether a property holds, its margin (the smallest slack, in
tasks; negative when violated) and, when it fails, a *witness*: which user, which other user,
removed user, capacity change or lie, with the numbers before and after.

Witnesses are typed: one dataclass per property kind (:class:`EnvyWitness`, :class:`Lie`, ...),
each with ``to_dict()`` (the JSON shape), ``describe()`` (one terse line; :func:`describe_witness`
gives it for a witness or its dict), ``words()`` (one or two full sentences for a newcomer;
:func:`witness_words`) and ``variant()``: for a witness that is a change of the instance (a lie, a
user leaving, more capacity), the case-file variant that reproduces the violation
(:func:`witness_variant`); ``None`` for a statement about the allocation of the same instance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

from fairalloc.core.decimals import shortest
from fairalloc.core.tolerances import GAIN, NOISE


@dataclass
class PropertyResult:
    """Outcome of one property check."""

    name: str
    holds: bool
    margin: float | None = None
    witness: Witness | None = None
    applicable: bool = True
    note: str = ""
    evaluations: int = 0

    def __post_init__(self):
        # a property that holds has no negative slack: one within the tolerance is 0, not -1.1e-16
        if self.margin is not None and self.applicable:
            margin = float(self.margin)
            self.margin = max(margin, 0.0) if self.holds else margin
            if abs(self.margin) <= NOISE:
                self.margin = 0.0
        if isinstance(self.witness, dict) and (self.name in WITNESS_TYPES or "infeasible" in self.witness):
            # a witness given as its dict: typed here
            self.witness = witness_from_dict(self.name, self.witness)

    def to_dict(self) -> dict:
        """The JSON shape: every set field but the name, the witness as its ``to_dict()``."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "name" and value is not None and not (isinstance(value, str) and value == ""):
                out[f.name] = value.to_dict() if isinstance(value, Witness) else value
        out["holds"] = self.holds
        return out

    def summary(self) -> str:
        if not self.applicable:
            return f"n/a ({self.note})"
        if self.holds:
            return (
                "holds"
                + (f" (margin {self.margin:.4g})" if self.margin is not None else "")
                + (f"; {self.note}" if self.note else "")
            )
        return "VIOLATED: " + describe_witness(self.name, self.witness)

    def _html_row(self) -> list:
        from fairalloc.core.html import badge

        status = (
            badge("n/a", "grey")
            if not self.applicable
            else badge("holds", "green")
            if self.holds
            else badge("violated", "red")
        )
        margin = "" if self.margin is None or not self.applicable else f"{self.margin:.4g}"
        text = describe_witness(self.name, self.witness) if self.applicable and not self.holds else self.note
        return [self.name, status, margin, text]

    def _repr_html_(self) -> str:
        return _report_table([self])


class PropertyReport(dict):
    """What :func:`check` returns: ``{property name: PropertyResult}`` (a plain ``dict`` to every
    caller) that Jupyter shows as a table with a holds / violated / n/a badge per property."""

    def __init__(self, results=(), *, mechanism: str = "", instance: str = ""):
        super().__init__(results)
        self.mechanism = mechanism
        self.instance = instance

    def _repr_html_(self) -> str:
        caption = f"{self.mechanism} on {self.instance}" if self.mechanism else ""
        return _report_table(self.values(), caption)


def _report_table(results, caption: str = "") -> str:
    from fairalloc.core.html import table

    return table(
        ["property", "status", "margin", "witness / note"],
        [r._html_row() for r in results],
        caption=caption,
        align="llrl",
    )


# -- witnesses ----------------------------------------------------------------------------------------


# a dataclass itself (with no fields), so asdict and fields apply to every witness; eq=False: equality is the
# Mapping's (by to_dict items), so a witness equals the dict it replaces (the subclasses say eq=False too)
@dataclass(eq=False)
class Witness(Mapping):
    """Base of the typed witnesses: a dataclass per property kind, with :meth:`to_dict` (the JSON
    shape: its keys, in order) and :meth:`describe` (one readable line).

    The compatibility view: a witness is also a read-only mapping over its :meth:`to_dict` keys,
    so ``result.witness["user"]``, ``w.get("shrunk")``, ``"user" in w`` and ``w == {...}`` work as
    they did when witnesses were plain dicts.
    """

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        raise NotImplementedError

    def words(self) -> str:
        """One or two full sentences a newcomer understands, built from the fields only."""
        raise NotImplementedError

    def variant(self) -> dict | None:
        """The case-file variant (``variants:`` entry) whose instance reproduces the violation, or None
        when the witness is a statement about the allocation of the case's own instance."""
        return None

    @classmethod
    def from_dict(cls, data: dict) -> Witness:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})

    def __getitem__(self, key):
        return self.to_dict()[key]

    def __iter__(self):
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())


@dataclass(eq=False)
class SharingIncentiveWitness(Witness):
    """``x_i < u_i(R w_i / sum w)``: user ``user`` prefers her slice of a static partition."""

    user: str
    tasks: float
    fair_share_tasks: float
    fair_share_bundle: dict[str, float]

    def describe(self) -> str:
        return f"user {self.user} gets {self.tasks:.6g} tasks, her fair share runs {self.fair_share_tasks:.6g}"

    def words(self) -> str:
        return (
            f"User {self.user} gets {_n(self.tasks)} tasks, but her equal slice of the cluster (1/n of every "
            f"resource, weighted: {_bundle(self.fair_share_bundle)}) would run {_n(self.fair_share_tasks)}: "
            f"she would be better off with a static partition."
        )


@dataclass(eq=False)
class DynamicSharingIncentiveWitness(Witness):
    """At step ``step`` a user's dominant share is below her shared quantity."""

    step: int
    user: str
    dominant_share: float
    shared: float

    def describe(self) -> str:
        return (
            f"at step {self.step} user {self.user} has dominant share {self.dominant_share:.6g} < her shared "
            f"quantity {self.shared:.6g}"
        )

    def words(self) -> str:
        return (
            f"After {_arrivals(self.step)}, user {self.user} holds a dominant share of {_n(self.dominant_share)}, "
            f"less than the {_n(self.shared)} of every resource she brought: she would be better off alone."
        )


@dataclass(eq=False)
class EnvyWitness(Witness):
    """User ``user`` runs more tasks with ``envies``'s (weight-scaled) bundle than with her own."""

    user: str
    envies: str
    tasks: float
    tasks_from_other_bundle: float
    other_bundle: dict[str, float]

    def describe(self) -> str:
        return (
            f"user {self.user} ({self.tasks:.6g} tasks) could run {self.tasks_from_other_bundle:.6g} with "
            f"user {self.envies}'s bundle"
        )

    def words(self) -> str:
        return (
            f"User {self.user} would rather have {self.envies}'s bundle: {_n(self.tasks_from_other_bundle)} tasks "
            f"instead of {_n(self.tasks)}."
        )


@dataclass(eq=False)
class InfeasibleWitness(Witness):
    """The allocation uses more of ``infeasible`` than there is."""

    infeasible: str
    used: float
    capacity: float

    def describe(self) -> str:
        return f"resource {self.infeasible} over capacity ({self.used:.6g} > {self.capacity:.6g})"

    def words(self) -> str:
        return (
            f"The allocation is impossible: it hands out {_n(self.used)} {self.infeasible}, more than the "
            f"{_n(self.capacity)} the cluster has."
        )


@dataclass(eq=False)
class ParetoWitness(Witness):
    """A feasible ``improvement`` gives everyone as much and ``better_off`` more."""

    total_gain: float
    better_off: list[str]
    tasks: dict[str, float]
    improvement: dict[str, float]

    def describe(self) -> str:
        return f"users {', '.join(self.better_off)} can gain {self.total_gain:.6g} tasks in all, nobody losing"

    def words(self) -> str:
        return (
            f"The allocation wastes resources: {_users(self.better_off)} could run {_n(self.total_gain)} more "
            f"tasks in all without anyone running fewer."
        )


@dataclass(eq=False)
class SingleResourceWitness(Witness):
    """On one resource, ``user`` does not get her max-min fair task count."""

    resource: str
    user: str
    tasks: float
    max_min_fair_tasks: float
    allocation: dict[str, float]
    max_min_fair: dict[str, float]

    def describe(self) -> str:
        return f"user {self.user} gets {self.tasks:.6g}, max-min fair is {self.max_min_fair_tasks:.6g}"

    def words(self) -> str:
        return f"With {self.resource} the only resource, " + self._unfair()

    def _unfair(self) -> str:
        # the checker reports the largest gap either way: the user may get more than max-min, or less
        side = "fewer" if self.tasks < self.max_min_fair_tasks else "more"
        return (
            f"user {self.user} gets {_n(self.tasks)} tasks, {side} than the {_n(self.max_min_fair_tasks)} of the "
            f"max-min fair split of {self.resource} (as even as the users' weights and needs allow)."
        )


@dataclass(eq=False)
class BottleneckWitness(SingleResourceWitness):
    """On the common bottleneck ``resource``, ``user`` does not get her max-min fair task count."""

    def describe(self) -> str:
        return f"on common bottleneck {self.resource}: " + super().describe()

    def words(self) -> str:
        return f"Every user's dominant resource is {self.resource}, yet " + self._unfair()


@dataclass(eq=False)
class PopulationWitness(Witness):
    """Removing ``removed_user`` lowers ``user``'s task count."""

    removed_user: str
    user: str
    tasks_before: float
    tasks_after: float

    def describe(self) -> str:
        return (
            f"removing user {self.removed_user} lowers user {self.user} from {self.tasks_before:.6g} to "
            f"{self.tasks_after:.6g}"
        )

    def words(self) -> str:
        return (
            f"When user {self.removed_user} leaves, user {self.user} gets fewer tasks ({_n(self.tasks_after)} "
            f"instead of {_n(self.tasks_before)}), although more is left for everyone."
        )

    def variant(self) -> dict:
        return {"name": f"without-{self.removed_user}", "description": self.words(), "remove_user": self.removed_user}


@dataclass(eq=False)
class ResourceWitness(Witness):
    """``factor`` times the capacity of ``resource`` (or of ``"all"``) lowers ``user``'s task count."""

    resource: str
    factor: float
    capacity_before: dict[str, float]
    capacity_after: dict[str, float]
    user: str
    tasks_before: float
    tasks_after: float

    def describe(self) -> str:
        return (
            f"x{self.factor:g} capacity of {self.resource} lowers user {self.user} from {self.tasks_before:.6g} "
            f"to {self.tasks_after:.6g}"
        )

    def words(self) -> str:
        # the checker writes "all" for every resource scaled at once
        what = "every resource" if self.resource == "all" else self.resource
        return (
            f"With {_n(self.factor)}x the capacity of {what}, user {self.user} gets fewer tasks "
            f"({_n(self.tasks_after)} instead of {_n(self.tasks_before)})."
        )

    def variant(self) -> dict:
        return {
            "name": f"{self.resource}-x{_n(self.factor)}",
            "description": self.words(),
            "capacity": {r: shortest(v) for r, v in self.capacity_after.items()},
        }


@dataclass(eq=False)
class ShrunkLie(Witness):
    """The best lie rounded to a rounder report whose gain survives."""

    reported_demand: dict[str, float]
    manipulated_tasks: float
    gain: float
    rounding: str

    def words(self) -> str:
        return (
            f"The rounder report {_bundle(self.reported_demand)} ({self.rounding}) still runs "
            f"{_n(self.manipulated_tasks)} true tasks, a gain of {_n(self.gain)}."
        )


@dataclass(eq=False)
class Lie(Witness):
    """The best report found for one user (the verifier's answer, and the witness of a static
    strategy-proofness violation)."""

    user: str
    truthful_tasks: float
    manipulated_tasks: float
    reported_demand: dict[str, float]
    evaluations: int
    shrunk: ShrunkLie | None = None

    def __post_init__(self):
        if isinstance(self.shrunk, dict):
            self.shrunk = ShrunkLie.from_dict(self.shrunk)

    @property
    def gain(self) -> float:
        return self.manipulated_tasks - self.truthful_tasks

    @property
    def relative_gain(self) -> float:
        return self.gain / self.truthful_tasks if self.truthful_tasks > 0 else (math.inf if self.gain > 0 else 0.0)

    @property
    def profitable(self) -> bool:
        return self.gain > GAIN * max(1.0, abs(self.truthful_tasks))

    def to_dict(self) -> dict:
        out = {
            "user": self.user,
            "reported_demand": dict(self.reported_demand),
            "truthful_tasks": self.truthful_tasks,
            "manipulated_tasks": self.manipulated_tasks,
            "gain": self.gain,
            # null when undefined: a gain over a truthful count of 0 (JSON has no infinity)
            "relative_gain": finite_or_none(self.relative_gain),
            "evaluations": self.evaluations,
        }
        if self.shrunk:
            out["shrunk"] = self.shrunk.to_dict()
        return out

    def describe(self) -> str:
        lie = self.shrunk or self
        return (
            f"user {self.user} reporting {_demand_text(lie.reported_demand)} runs "
            f"{lie.manipulated_tasks:.6g} true tasks instead of {self.truthful_tasks:.6g}"
        )

    def words(self) -> str:
        lie = self.shrunk or self  # the rounder report, as describe() gives it
        return (
            f"User {self.user} gains by lying: reporting {_bundle(lie.reported_demand)} instead of her true "
            f"demand, she runs {_n(lie.manipulated_tasks)} true tasks instead of {_n(self.truthful_tasks)}."
        )

    def variant(self) -> dict:
        return _misreport(self.user, (self.shrunk or self).reported_demand, self.words())


@dataclass(eq=False)
class DynamicLieWitness(Witness):
    """A misreport at arrival that raises the user's true value at some later step."""

    user: str
    reported_demand: dict[str, float]
    gain_in_tasks_at_some_later_step: float

    def describe(self) -> str:
        return (
            f"user {self.user} reporting {_demand_text(self.reported_demand)} gains "
            f"{self.gain_in_tasks_at_some_later_step:.6g} true tasks at a later step"
        )

    def words(self) -> str:
        return (
            f"User {self.user} gains by lying on arrival: reporting {_bundle(self.reported_demand)} instead of "
            f"her true demand, she runs {_n(self.gain_in_tasks_at_some_later_step)} more true tasks at a later "
            f"arrival."
        )

    def variant(self) -> dict:
        return _misreport(self.user, self.reported_demand, self.words())


@dataclass(eq=False)
class IrreversibilityWitness(Witness):
    """When ``arrived`` arrives (step ``step``), ``user``'s dominant share drops."""

    step: int
    arrived: str
    user: str
    dominant_share_before: float
    dominant_share_after: float

    def describe(self) -> str:
        return (
            f"when user {self.arrived} arrives (step {self.step}) user {self.user} drops from "
            f"{self.dominant_share_before:.6g} to {self.dominant_share_after:.6g}"
        )

    def words(self) -> str:
        return (
            f"When user {self.arrived} arrives ({_ordinal(self.step)} arrival), user {self.user}'s dominant share "
            f"drops from {_n(self.dominant_share_before)} to {_n(self.dominant_share_after)}: part of what she "
            f"was given is taken back."
        )


@dataclass(eq=False)
class DynamicParetoWitness(Witness):
    """At step ``step`` the pool allows ``better_off`` more, nobody less."""

    step: int
    total_gain: float
    better_off: list[str]

    def describe(self) -> str:
        return (
            f"at step {self.step} users {', '.join(self.better_off)} can gain {self.total_gain:.6g} in all "
            f"within the pool"
        )

    def words(self) -> str:
        return (
            f"After {_arrivals(self.step)}, the pool wastes resources: {_users(self.better_off)} could hold "
            f"{_n(self.total_gain)} more dominant share in all without anyone holding less."
        )


@dataclass(eq=False)
class SharedMonotonicityWitness(Witness):
    """A larger shared quantity (``user``) ends with a smaller dominant share than ``other``'s."""

    step: int
    user: str
    shared: float
    dominant_share: float
    other: str
    other_shared: float
    other_dominant_share: float

    def describe(self) -> str:
        return (
            f"at step {self.step} user {self.user} (shared {self.shared:.6g}) has dominant share "
            f"{self.dominant_share:.6g} < {self.other_dominant_share:.6g} of user {self.other} "
            f"(shared {self.other_shared:.6g})"
        )

    def words(self) -> str:
        return (
            f"After {_arrivals(self.step)}, user {self.user} brought more to the pool than user {self.other} "
            f"({_n(self.shared)} of every resource against {_n(self.other_shared)}) but holds a smaller dominant "
            f"share ({_n(self.dominant_share)} against {_n(self.other_dominant_share)})."
        )


@dataclass(eq=False)
class DynamicEnvyWitness(Witness):
    """At step ``step`` ``user`` envies ``envies`` though the dynamic definition allows no envy."""

    step: int
    user: str
    envies: str
    dominant_share: float
    value_of_other_bundle: float
    other_arrived_first: bool

    def describe(self) -> str:
        return (
            f"at step {self.step} user {self.user} envies user {self.envies} "
            f"({self.value_of_other_bundle:.6g} > {self.dominant_share:.6g})"
        )

    def words(self) -> str:
        # envy is excused only of a user who arrived earlier and has received nothing since
        why = (
            f"{self.envies} arrived first but has received more since {self.user} arrived"
            if self.other_arrived_first
            else f"{self.envies} arrived after her"
        )
        return (
            f"After {_arrivals(self.step)}, user {self.user} would rather have {self.envies}'s bundle (scaled by "
            f"what each brought): worth a dominant share of {_n(self.value_of_other_bundle)} to her instead of "
            f"{_n(self.dominant_share)}, and {why}."
        )


@dataclass(eq=False)
class GuaranteeWitness(Witness):
    """Queue ``queue`` receives less of ``resource`` than ``min(guarantee, request)``."""

    queue: str
    resource: str
    guarantee: float
    request: float
    received: float

    def describe(self) -> str:
        return (
            f"queue {self.queue} receives {self.received:.6g} {self.resource}, below its guarantee "
            f"{self.guarantee:.6g} (request {self.request:.6g})"
        )

    def words(self) -> str:
        return (
            f"Queue {self.queue} receives {_n(self.received)} {self.resource}, below its guarantee of "
            f"{_n(self.guarantee)} (it requests {_n(self.request)})."
        )


@dataclass(eq=False)
class LimitWitness(Witness):
    """Node ``node`` (a leaf queue, or a group: its leaves together) receives more of ``resource``
    than its limit."""

    node: str
    resource: str
    limit: float
    received: float

    def describe(self) -> str:
        return f"{self.node} receives {self.received:.6g} {self.resource}, above its limit {self.limit:.6g}"

    def words(self) -> str:
        # the node is a leaf queue or a group (its queues together): the name alone fits both
        return f"The limit of {self.node} is {_n(self.limit)} {self.resource}, but it receives {_n(self.received)}."


@dataclass(eq=False)
class OvercommitWitness(Witness):
    """The bundles together promise more of ``resource`` than its capacity."""

    resource: str
    promised: float
    capacity: float

    def describe(self) -> str:
        return f"{self.promised:.6g} {self.resource} promised, capacity {self.capacity:.6g}"

    def words(self) -> str:
        return (
            f"The queues are promised {_n(self.promised)} {self.resource} in all, more than the "
            f"{_n(self.capacity)} the cluster has."
        )


@dataclass(eq=False)
class IdleWitness(Witness):
    """Queue ``queue`` has unmet request and every resource that stops it is idle (with room under
    its limits): ``idle`` maps those resources to their idle amounts."""

    queue: str
    tasks: float
    idle: dict[str, float]

    def describe(self) -> str:
        amounts = ", ".join(f"{v:.6g} {r}" for r, v in self.idle.items())
        return f"queue {self.queue} gets {self.tasks:.6g} of its request while {amounts} stay idle"

    def words(self) -> str:
        amounts = ", ".join(f"{_n(v)} {r}" for r, v in self.idle.items())
        return (
            f"Queue {self.queue} gets {_n(self.tasks)} of its request while {amounts} that it needs and may "
            f"still use stay idle: the policy is not work conserving."
        )


#: per property, ``(test on a witness dict, witness class)`` pairs, the first that passes wins
WITNESS_TYPES: dict[str, tuple] = {
    "sharing_incentive": (
        (lambda d: "tasks" in d, SharingIncentiveWitness),
        (lambda d: True, DynamicSharingIncentiveWitness),
    ),
    "envy_freeness": ((lambda d: True, EnvyWitness),),
    "pareto_efficiency": ((lambda d: True, ParetoWitness),),
    "single_resource_fairness": ((lambda d: True, SingleResourceWitness),),
    "bottleneck_fairness": ((lambda d: True, BottleneckWitness),),
    "population_monotonicity": ((lambda d: True, PopulationWitness),),
    "resource_monotonicity": ((lambda d: True, ResourceWitness),),
    "strategy_proofness": ((lambda d: "truthful_tasks" in d, Lie), (lambda d: True, DynamicLieWitness)),
    "irreversibility": ((lambda d: True, IrreversibilityWitness),),
    "dynamic_pareto_optimality": ((lambda d: True, DynamicParetoWitness),),
    "shared_monotonicity": ((lambda d: True, SharedMonotonicityWitness),),
    "dynamic_envy_freeness": ((lambda d: True, DynamicEnvyWitness),),
    "guarantee_honoured": ((lambda d: True, GuaranteeWitness),),
    "limit_respected": ((lambda d: True, LimitWitness),),
    "no_overcommit": ((lambda d: True, OvercommitWitness),),
    "work_conserving": ((lambda d: True, IdleWitness),),
}


def witness_from_dict(prop: str, data: dict) -> Witness:
    """The typed witness of property ``prop`` that ``data`` (its :meth:`~Witness.to_dict`) describes."""
    if "infeasible" in data:
        return InfeasibleWitness.from_dict(data)
    cls = next(cls for test, cls in WITNESS_TYPES[prop] if test(data))
    return cls.from_dict(data)


def describe_witness(prop: str, w: Witness | dict | None) -> str:
    """One readable line for a witness (a :class:`Witness`, or the dict of one)."""
    if not w:
        return ""
    if not isinstance(w, Witness):
        w = witness_from_dict(prop, w)
    return w.describe()


def witness_words(prop: str, w: Witness | dict | None) -> str:
    """One or two full sentences for a witness (a :class:`Witness`, or the dict of one)."""
    if not w:
        return ""
    if not isinstance(w, Witness):
        w = witness_from_dict(prop, w)
    return w.words()


def witness_variant(prop: str, w: Witness | dict | None) -> dict | None:
    """The case-file variant reproducing a witness (a :class:`Witness`, or the dict of one), or None."""
    if not w:
        return None
    if not isinstance(w, Witness):
        w = witness_from_dict(prop, w)
    return w.variant()


def finite_or_none(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _demand_text(demand: dict) -> str:
    return "<" + ", ".join(f"{k}: {v:.6g}" for k, v in demand.items()) + ">"


# -- words: numbers to 4 significant digits, whole sentences ---------------------------------------


def _n(value: float) -> str:
    return f"{value:.4g}"


def _bundle(amounts: dict) -> str:
    return "<" + ", ".join(f"{k}: {_n(v)}" for k, v in amounts.items()) + ">"


def _users(names: list[str]) -> str:
    return ("user " if len(names) == 1 else "users ") + ", ".join(names)


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _arrivals(k: int) -> str:
    return "the first arrival" if k == 1 else f"{k} arrivals"


def _misreport(user: str, report: dict, words: str) -> dict:
    """A ``misreport`` variant; zero amounts are left out, as a case file writes them
    (:func:`fairalloc.analysis.manipulation.witness_case`)."""
    demand = {r: shortest(v) for r, v in report.items() if v}
    return {"name": f"lie-{user}", "description": words, "misreport": {"user": user, "demand": demand}}
