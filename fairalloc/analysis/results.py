"""What a property check returns, and how its witness reads.

A :class:`PropertyResult` says whether a property holds, its margin (the smallest slack, in
tasks; negative when violated) and, when it fails, a *witness*: which user, which other user,
removed user, capacity change or lie, with the numbers before and after.
:func:`describe_witness` turns a witness into one line a person can read.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from fairalloc.core.tolerances import NOISE


@dataclass
class PropertyResult:
    """Outcome of one property check."""

    name: str
    holds: bool
    margin: float | None = None
    witness: dict | None = None
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

    def to_dict(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if v not in (None, "") and k != "name"}
        out["holds"] = self.holds
        return out

    def summary(self) -> str:
        if not self.applicable:
            return f"n/a ({self.note})"
        if self.holds:
            return "holds" + (f" (margin {self.margin:.4g})" if self.margin is not None else "") + \
                (f"; {self.note}" if self.note else "")
        return "VIOLATED: " + describe_witness(self.name, self.witness)

    def _html_row(self) -> list:
        from fairalloc.core.html import badge
        status = badge("n/a", "grey") if not self.applicable else \
            badge("holds", "green") if self.holds else badge("violated", "red")
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
    return table(["property", "status", "margin", "witness / note"], [r._html_row() for r in results],
                 caption=caption, align="llrl")


def describe_witness(prop: str, w: dict | None) -> str:
    """One readable line for a witness."""
    if not w:
        return ""
    if "infeasible" in w:
        return f"resource {w['infeasible']} over capacity ({w['used']:.6g} > {w['capacity']:.6g})"
    texts = {
        "sharing_incentive": lambda: f"user {w['user']} gets {w['tasks']:.6g} tasks, her fair share runs "
                                     f"{w['fair_share_tasks']:.6g}" if "tasks" in w else
        f"at step {w['step']} user {w['user']} has dominant share {w['dominant_share']:.6g} < her shared "
        f"quantity {w['shared']:.6g}",
        "envy_freeness": lambda: f"user {w['user']} ({w['tasks']:.6g} tasks) could run "
                                 f"{w['tasks_from_other_bundle']:.6g} with user {w['envies']}'s bundle",
        "pareto_efficiency": lambda: f"users {', '.join(w['better_off'])} can gain {w['total_gain']:.6g} tasks "
                                     f"in all, nobody losing",
        "single_resource_fairness": lambda: f"user {w['user']} gets {w['tasks']:.6g}, max-min fair is "
                                            f"{w['max_min_fair_tasks']:.6g}",
        "bottleneck_fairness": lambda: f"on common bottleneck {w['resource']}: user {w['user']} gets "
                                       f"{w['tasks']:.6g}, max-min fair is {w['max_min_fair_tasks']:.6g}",
        "population_monotonicity": lambda: f"removing user {w['removed_user']} lowers user {w['user']} from "
                                           f"{w['tasks_before']:.6g} to {w['tasks_after']:.6g}",
        "resource_monotonicity": lambda: f"x{w['factor']:g} capacity of {w['resource']} lowers user {w['user']} "
                                         f"from {w['tasks_before']:.6g} to {w['tasks_after']:.6g}",
        "strategy_proofness": lambda: _lie_text(w) if "truthful_tasks" in w else
        f"user {w['user']} reporting {_demand_text(w['reported_demand'])} gains "
        f"{w['gain_in_tasks_at_some_later_step']:.6g} true tasks at a later step",
        "irreversibility": lambda: f"when user {w['arrived']} arrives (step {w['step']}) user {w['user']} drops from "
                                   f"{w['dominant_share_before']:.6g} to {w['dominant_share_after']:.6g}",
        "dynamic_pareto_optimality": lambda: f"at step {w['step']} users {', '.join(w['better_off'])} can gain "
                                             f"{w['total_gain']:.6g} in all within the pool",
        "shared_monotonicity": lambda: f"at step {w['step']} user {w['user']} (shared {w['shared']:.6g}) has "
                                       f"dominant share {w['dominant_share']:.6g} < {w['other_dominant_share']:.6g}"
                                       f" of user {w['other']} (shared {w['other_shared']:.6g})",
        "dynamic_envy_freeness": lambda: f"at step {w['step']} user {w['user']} envies user {w['envies']} "
                                         f"({w['value_of_other_bundle']:.6g} > {w['dominant_share']:.6g})",
    }
    return texts[prop]()


def _lie_text(w: dict) -> str:
    lie = w.get("shrunk") or w
    return (f"user {w['user']} reporting {_demand_text(lie['reported_demand'])} runs "
            f"{lie['manipulated_tasks']:.6g} true tasks instead of {w['truthful_tasks']:.6g}")


def _demand_text(demand: dict) -> str:
    return "<" + ", ".join(f"{k}: {v:.6g}" for k, v in demand.items()) + ">"
