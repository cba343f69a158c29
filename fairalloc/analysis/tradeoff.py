"""The fairness / efficiency frontier: walk the alpha-fair family, mark the named mechanisms.

For every alpha (``alpha-fair:ALPHA`` on dominant shares, or ``alpha-tasks:ALPHA`` on task
counts) and every reference mechanism (DRF, CEEI, Asset Fairness, utilitarian by default) a
:class:`Point` holds the allocation and its measures:

* efficiency: the sum of dominant shares, utilisation per resource, the total number of tasks;
* fairness: the smallest weighted dominant share, Jain's index of the weighted dominant shares
  ``(sum s)^2 / (n sum s^2)``, the users who envy another's bundle (``None``, null in JSON, when
  the instance has more user pairs than :data:`~fairalloc.core.limits.MAX_PAIRWISE_CELLS` allows);
* which properties hold (the checkers of :mod:`fairalloc.analysis.properties`, with their witnesses).

>>> import fairalloc
>>> inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], users=["A", "B"])
>>> [(p.label, round(p.metrics["total_dominant_share"], 4)) for p in frontier(inst, [0, 2, "inf"], references=[])]
[('alpha=0', 1.4545), ('alpha=2', 1.4142), ('alpha=inf', 1.3333)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from fairalloc.analysis.properties import (
    PropertyResult,
    check,
    check_work,
    envious_users,
    pairwise_cells,
    property_names,
)
from fairalloc.core import limits
from fairalloc.core.allocation import Allocation
from fairalloc.core.errors import FairallocError, unknown
from fairalloc.core.files import write_atomically
from fairalloc.core.instance import Instance
from fairalloc.core.registry import Mechanism

DEFAULT_ALPHAS = (0.0, 0.5, 1.0, 2.0, 5.0, math.inf)
REFERENCES = ("drf", "ceei", "asset", "utilitarian")
FAMILIES = {"shares": "alpha-fair", "tasks": "alpha-tasks"}


@dataclass
class Point:
    """One allocation on (or beside) the frontier."""

    label: str
    mechanism: str
    alpha: float | None
    allocation: Allocation
    metrics: dict
    properties: dict[str, PropertyResult] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "label": self.label,
            "mechanism": self.mechanism,
            "alpha": None if self.alpha is None else ("inf" if math.isinf(self.alpha) else self.alpha),
            "tasks": dict(zip(self.allocation.instance.users, map(float, self.allocation.tasks))),
            **self.metrics,
            "properties": {k: v.to_dict() for k, v in self.properties.items()},
        }


def parse_alphas(text) -> list[float]:
    """``"0,0.5,1,2,5,inf"`` (or a list of numbers and ``"inf"``) -> sorted floats; one clear error
    naming ``alphas`` otherwise."""
    alphas = []
    for part in (str(p).strip() for p in (text.split(",") if isinstance(text, str) else text)):
        if not part:
            continue
        try:
            value = math.inf if part.lower() in ("inf", "infinity") else float(part)
        except ValueError:
            raise FairallocError(f"alphas: '{part}' is not a number (write e.g. 0,0.5,1,2,5,inf)") from None
        if math.isnan(value) or value < 0:
            raise FairallocError(f"alphas: alpha must be >= 0 (got {part})")
        alphas.append(value)
    if not alphas:
        raise FairallocError("alphas: give at least one alpha (e.g. 0,1,inf)")
    if len(set(alphas)) > limits.MAX_ALPHAS:
        raise FairallocError(
            f"alphas: at most {limits.MAX_ALPHAS} alphas (got {len(set(alphas))}; fairalloc.core.limits.MAX_ALPHAS)"
        )
    return sorted(set(alphas))


def alpha_label(alpha: float) -> str:
    return "alpha=inf" if math.isinf(alpha) else f"alpha={alpha:g}"


def measures(allocation: Allocation) -> dict:
    """Efficiency and fairness measures of one allocation (see the module docstring)."""
    inst = allocation.instance
    shares = allocation.weighted_dominant_shares
    total = float(shares.sum())
    squares = float(shares @ shares)
    envious: list[str] | None
    if inst.weights is not None and inst.weights.ndim != 1:
        envious = []
    elif pairwise_cells(inst) > limits.MAX_PAIRWISE_CELLS:
        envious = None  # too many pairs to compare: not computed (null in JSON)
    else:
        envious = envious_users(inst, allocation.tasks)
    return {
        "total_dominant_share": float(allocation.dominant_shares.sum()),
        "total_tasks": float(allocation.tasks.sum()),
        "utilization": dict(zip(inst.resources, map(float, allocation.utilization))),
        "min_dominant_share": float(shares.min()) if shares.size else 0.0,
        "jain_index": total * total / (inst.n * squares) if squares > 0 else 1.0,
        "envious_users": envious,
    }


def frontier(
    instance,
    alphas=DEFAULT_ALPHAS,
    *,
    on: str = "shares",
    references=REFERENCES,
    properties: str | list[str] | None = "",
    method: str = "auto",
    budget: int = 200,
    progress=None,
) -> list[Point]:
    """Points of the alpha-fair family on ``instance`` (then the reference mechanisms).

    ``references``: mechanisms (registered names or :class:`~fairalloc.core.registry.Mechanism`
    objects), resolved with the family members before any point is solved.
    ``properties``: names (or a comma-separated string) to check at every point; ``""`` none,
    ``None`` all of them.  ``progress``: a callable called with each finished point.
    """
    from fairalloc.core import registry

    inst: Instance = getattr(instance, "instance", instance)
    if on not in FAMILIES:
        raise FairallocError(f"on: {unknown('utility', on, FAMILIES)}")
    wanted = (
        []
        if properties == ""
        else property_names(properties if isinstance(properties, (str, type(None))) else ",".join(properties))
    )
    plan: list[tuple[str, Mechanism, float | None]] = [
        (alpha_label(a), registry.get(f"{FAMILIES[on]}:{a}"), a) for a in parse_alphas(alphas)
    ]
    plan += [(ref if isinstance(ref, str) else ref.name, registry.get(ref), None) for ref in references]
    if wanted:
        check_work(wanted, inst, budget=budget)  # refused before any point is solved
    points = []
    for label, mech, alpha in plan:
        allocation = mech.allocate(inst, method)
        checked = check(mech, instance, wanted, method=method, budget=budget) if wanted else {}
        points.append(Point(label, allocation.mechanism, alpha, allocation, measures(allocation), checked))
        if progress is not None:
            progress(points[-1])
    return points


def plot_frontier(points: list[Point], target=None, *, current: Point | None = None, title: str = ""):
    """Efficiency (sum of dominant shares) against fairness (smallest weighted dominant share,
    and Jain's index): the alpha points joined in order, the reference mechanisms marked.

    ``target``: a file name (``.png``, ``.svg``, ``.pdf``; written whole or not at all) or None
    for the matplotlib figure.
    """
    from matplotlib.figure import Figure  # no pyplot: no global state, safe in the explorer's threads

    fig = Figure(figsize=(10, 4.2), layout="constrained")
    axes = fig.subplots(1, 2)
    family = [p for p in points if p.alpha is not None]
    others = [p for p in points if p.alpha is None]
    markers = dict(zip(REFERENCES, ("s", "D", "^", "v")))
    for ax, key, name in zip(
        axes,
        ("min_dominant_share", "jain_index"),
        ("smallest weighted dominant share", "Jain's index of weighted dominant shares"),
    ):
        xs = [p.metrics["total_dominant_share"] for p in family]
        ys = [p.metrics[key] for p in family]
        ax.plot(xs, ys, "-o", color="tab:blue", label="alpha-fair", zorder=2)
        labels: dict[tuple, list[str]] = {}  # alphas that land on the same point share a label
        for p, x, y in zip(family, xs, ys):
            labels.setdefault((round(x, 6), round(y, 6)), []).append(p.label.removeprefix("alpha="))
        for (x, y), alphas in labels.items():
            ax.annotate(
                "α=" + ", ".join(alphas),
                (x, y),
                textcoords="offset points",
                xytext=(6, 4),
                fontsize=8,
                color="tab:blue",
            )
        for p in others:
            ax.scatter(
                p.metrics["total_dominant_share"],
                p.metrics[key],
                marker=markers.get(p.label, "P"),
                s=70,
                label=p.label,
                zorder=3,
                edgecolor="black",
                linewidth=0.6,
            )
        if current is not None:
            ax.scatter(
                current.metrics["total_dominant_share"],
                current.metrics[key],
                marker="*",
                s=260,
                color="gold",
                edgecolor="black",
                label=f"current ({current.label})",
                zorder=4,
            )
        ax.set_xlabel("efficiency: sum of dominant shares")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="best")
    if title:
        fig.suptitle(title)
    if target is None:
        return fig
    target = Path(target)
    write_atomically(target, fig.savefig, suffix=target.suffix)  # the format is read from the suffix
    return target


__all__ = ["DEFAULT_ALPHAS", "Point", "frontier", "measures", "parse_alphas", "plot_frontier"]
