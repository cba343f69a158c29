"""Allocations: task counts per user and every view derived from them.

Only ``tasks`` is stored; bundles, dominant shares and utilisation are computed on first use, so
an allocation of a million users costs one vector until someone asks for more.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any, SupportsFloat

import numpy as np
from numpy.typing import NDArray

from fairalloc.core.deferred import deferred
from fairalloc.core.instance import Instance
from fairalloc.core.tolerances import SATURATION

if TYPE_CHECKING:
    import tabulate as tables

    from fairalloc.core.exact import ExactInstance
else:
    tables = deferred("tabulate")

#: above this many users the JSON form leaves the per-arrival steps out (they grow as n^2)
STEPS_IN_JSON = 2000


@dataclass(frozen=True, eq=False)
class Allocation:
    """The outcome of a mechanism on an instance.

    ``tasks[i]`` is ``x_i``; user ``i`` receives the bundle ``x_i * D_i``.  ``method`` is
    ``"fast"`` or ``"program"``, ``solver`` names what computed it, ``prices`` holds CEEI's
    market-clearing prices (one per resource) when the mechanism has them, ``info`` any further
    metadata (rounds, objective, status).
    """

    instance: Instance
    tasks: NDArray[np.float64]
    mechanism: str
    method: str
    solver: str = "numpy"
    prices: NDArray[np.float64] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    #: exact verifier: (the instance's numbers as fractions, candidate Fractions) -> bool; set by
    #: the mechanism
    certify: Callable[[ExactInstance, list[Fraction]], bool] | None = field(default=None, repr=False)
    #: dynamic mechanisms: the allocation after every arrival (:class:`fairalloc.analysis.dynamic_properties.History`)
    history: Any = field(default=None, repr=False)
    #: per-resource policies: the ``(n, m)`` bundles themselves, not proportional to the demand
    #: (:meth:`from_bundles`); ``None`` when the bundles are ``x_i D_i``
    amounts: NDArray[np.float64] | None = field(default=None, repr=False)
    #: a production policy's entitlement: what it promises each queue, which may promise more than
    #: the capacity (guarantees beyond it); the certificate then leaves capacity to the
    #: ``no_overcommit`` property instead of refusing the answer
    entitlement: bool = False

    def __post_init__(self) -> None:
        self.tasks.flags.writeable = False
        if self.amounts is not None:
            self.amounts.flags.writeable = False

    @classmethod
    def from_bundles(
        cls,
        instance: Instance,
        bundles: NDArray[np.float64],
        mechanism: str,
        method: str,
        solver: str = "numpy",
        info: dict[str, Any] | None = None,
        *,
        entitlement: bool = False,
    ) -> Allocation:
        """An allocation of general bundles (an amount per user per resource, as per-resource
        policies give).  Its ``tasks`` are the bundles' Leontief values for the demands, capped by
        the task bounds: in a queue case, the fraction of its request each queue receives."""
        A = np.array(bundles, dtype=float)
        x = leontief_values(instance, A)
        return cls(instance, x, mechanism, method, solver, info=info or {}, amounts=A, entitlement=entitlement)

    # -- views ----------------------------------------------------------------------------
    @cached_property
    def bundles(self) -> NDArray[np.float64]:
        """``(n, m)``: ``A_i = x_i D_i`` (or the general bundles of :meth:`from_bundles`)."""
        if self.amounts is not None:
            return self.amounts
        return self.tasks[:, None] * self.instance.demand

    def _bundle_shares(self) -> NDArray[np.float64]:
        cap = self.instance.capacity
        return np.divide(self.bundles, cap, out=np.zeros_like(self.bundles), where=cap > 0)

    @cached_property
    def dominant_shares(self) -> NDArray[np.float64]:
        """``s_i = x_i * max_j D_ij / R_j`` (unweighted; ``max_j A_ij / R_j`` for general bundles)."""
        if self.amounts is not None:
            top: NDArray[np.float64] = self._bundle_shares().max(axis=1)
            return top
        return self.tasks * self.instance.per_task_dominant_share

    @cached_property
    def weighted_dominant_shares(self) -> NDArray[np.float64]:
        """``max_j (A_ij / R_j) / w_ij``: what weighted DRF equalises."""
        inst = self.instance
        if inst.weights is None:
            return self.dominant_shares
        if self.amounts is not None:
            weighted: NDArray[np.float64] = (self._bundle_shares() / inst.weight_matrix()).max(axis=1)
            return weighted
        per_weight: NDArray[np.float64] = (inst.share_per_task / inst.weight_matrix()).max(axis=1)
        return self.tasks * per_weight

    @cached_property
    def used(self) -> NDArray[np.float64]:
        """``sum_i x_i D_ij`` per resource."""
        if self.amounts is not None:
            total: NDArray[np.float64] = self.amounts.sum(axis=0)
            return total
        return self.tasks @ self.instance.demand

    @cached_property
    def utilization(self) -> NDArray[np.float64]:
        cap = self.instance.capacity
        return np.divide(self.used, cap, out=np.zeros_like(self.used), where=cap > 0)

    @cached_property
    def saturated(self) -> NDArray[np.bool_]:
        """Boolean mask of resources used up (to the saturation tolerance)."""
        cap = self.instance.capacity
        return (cap > 0) & (self.used >= cap * (1 - SATURATION))

    def __getitem__(self, user: str | int) -> float:
        """Task count of a user by name: ``alloc["A"]``."""
        return float(self.tasks[self.instance.user_index(user)])

    # -- exact form -----------------------------------------------------------------------
    @cached_property
    def exact(self) -> list[Fraction] | None:
        """The allocation as exact fractions, or ``None`` when none could be verified.

        Candidates are the closest fractions with small denominators; they are accepted only
        if the mechanism's exact certificate holds for them in rational arithmetic on the
        instance's own numbers (a guess that fails the certificate is dropped).
        """
        from fairalloc.core.exact import recover

        return recover(self)

    # -- output ---------------------------------------------------------------------------
    def to_dict(self, exact: bool = False) -> dict[str, Any]:
        """The JSON contract: case, mechanism, users{tasks, dominant_share, allocation}, resources.

        Never NaN or infinity (not JSON): an allocation returned by a mechanism is certified finite
        (:mod:`fairalloc.core.certificate`); any other number that is not finite (an ``info`` value
        such as the Nash welfare ``-inf`` of a user with no task) is written as ``null``.
        """
        inst = self.instance
        fractions = self.exact if exact else None
        users: dict[str, dict[str, Any]] = {}
        with np.errstate(all="ignore"):
            shares, bundles = self.dominant_shares, self.bundles
            weighted = self.weighted_dominant_shares if inst.weighted else None
            used, utilization = self.used, self.utilization
        for i, u in enumerate(inst.users):
            entry: dict[str, Any] = {"tasks": _finite(self.tasks[i]), "dominant_share": _finite(shares[i])}
            if weighted is not None:
                entry["weighted_dominant_share"] = _finite(weighted[i])
            entry["allocation"] = {r: _finite(bundles[i, j]) for j, r in enumerate(inst.resources)}
            if fractions is not None:
                entry["tasks_exact"] = str(fractions[i])
            users[u] = entry
        resources: dict[str, dict[str, Any]] = {}
        for j, r in enumerate(inst.resources):
            resources[r] = {
                "capacity": _finite(inst.capacity[j]),
                "used": _finite(used[j]),
                "utilization": _finite(utilization[j]),
                "saturated": bool(self.saturated[j]),
            }
            if self.prices is not None:
                resources[r]["price"] = _finite(self.prices[j])
        out: dict[str, Any] = {
            "case": inst.name,
            "mechanism": self.mechanism,
            "method": self.method,
            "solver": self.solver,
            "users": users,
            "resources": resources,
        }
        if self.entitlement:  # a policy's promise, which may exceed the capacity (no_overcommit)
            out["entitlement"] = True
        if exact:
            out["exact"] = fractions is not None
        if self.info:
            out["info"] = {k: _plain(v) for k, v in self.info.items()}
        if self.history is not None and inst.n <= STEPS_IN_JSON:
            out["steps"] = self.history.step_dicts()
        return out

    def table(self, exact: bool = False, digits: int = 4, units: Mapping[str, str] | None = None) -> str:
        """Two readable tables: users (tasks, shares, bundle) and resources (use, saturation);
        amounts of a resource with a unit in ``units`` are shown in it (``64 GiB``)."""
        inst = self.instance
        amount = _amount_formatter(inst.resources, units or {}, digits)
        fractions = self.exact if exact else None
        # a queue case: a queue's tasks are the fraction of its request it receives
        who, tasks = ("queue", "of request") if inst.queues is not None else ("user", "tasks")
        head = [who, tasks] + (["exact"] if exact else []) + ["dominant share"]
        head += ["weighted share"] if inst.weighted else []
        head += list(inst.resources)
        rows = []
        for i, u in enumerate(inst.users):
            row = [u, _fmt(self.tasks[i], digits)]
            if exact:
                row.append(str(fractions[i]) if fractions is not None else "n/a")
            row.append(_fmt(self.dominant_shares[i], digits))
            if inst.weighted:
                row.append(_fmt(self.weighted_dominant_shares[i], digits))
            row += [amount(j, v) for j, v in enumerate(self.bundles[i])]
            rows.append(row)
        res_head = ["resource", "capacity", "used", "utilization", "saturated"] + (
            ["price"] if self.prices is not None else []
        )
        res_rows = []
        for j, r in enumerate(inst.resources):
            row = [
                r,
                amount(j, inst.capacity[j]),
                amount(j, self.used[j]),
                f"{self.utilization[j]:.1%}",
                "yes" if self.saturated[j] else "",
            ]
            if self.prices is not None:
                row.append(_fmt(self.prices[j], digits))
            res_rows.append(row)
        title = f"{self.mechanism} on {inst.name} ({self.method}, {self.solver})"
        if exact and fractions is None:
            title += "  [no exact rational form could be verified]"
        return "\n".join(
            [
                title,
                tables.tabulate(rows, head, disable_numparse=True),
                "",
                tables.tabulate(res_rows, res_head, disable_numparse=True),
            ]
        )

    def step_table(self, digits: int = 4, max_users: int = 12) -> str:
        """Dynamic mechanisms: one row per arrival (M, the pool, every user's tasks, what binds)."""
        users = self.instance.users[:max_users]
        rows = []
        for step in self.history.step_rows(users=max_users):
            row = [step["k"], step["arrived"], _fmt(step.get("M", float("nan")), digits), _fmt(step["pool"], digits)]
            row += [_fmt(step["tasks"][u], digits) if u in step["tasks"] else "" for u in users]
            row.append(", ".join(step.get("binding", [])))
            rows.append(row)
        more = f" (first {max_users} users)" if self.instance.n > max_users else ""
        return f"{self.mechanism} on {self.instance.name}: tasks after each arrival{more}\n" + tables.tabulate(
            rows, ["k", "arrived", "M", "pool", *users, "binding"], disable_numparse=True
        )

    def _repr_html_(self, digits: int = 4) -> str:
        """Jupyter: users (tasks, dominant share, bundle per resource; the first users only),
        a utilisation row and the prices when the mechanism has them, captioned with mechanism, method and solver."""
        from fairalloc.core.html import first_users, shown, table

        inst = self.instance
        k, more = shown(inst.n)
        head = ["user", "tasks", "dominant share"] + (["weighted share"] if inst.weighted else [])
        # only the rows shown, not (n, m)
        bundles = self.amounts[:k] if self.amounts is not None else self.tasks[:k, None] * inst.demand[:k]
        rows = []
        for i, u in enumerate(first_users(inst, k)):
            row = [u, _fmt(self.tasks[i], digits), _fmt(self.dominant_shares[i], digits)]
            if inst.weighted:
                row.append(_fmt(self.weighted_dominant_shares[i], digits))
            rows.append(row + [_fmt(v, digits) for v in bundles[i]])
        pad = [""] * (len(head) - 1)
        foot = [
            [
                "utilisation",
                *pad,
                *(f"{u:.1%}" + (" (saturated)" if s else "") for u, s in zip(self.utilization, self.saturated)),
            ]
        ]
        if self.prices is not None:
            foot.append(["price", *pad, *(_fmt(p, digits) for p in self.prices)])
        caption = f"{self.mechanism} on {inst.name} (method {self.method}, solver {self.solver})"
        groups = [("", len(head)), ("bundle", inst.m)]
        return table(head + list(inst.resources), rows, caption=caption, foot=foot, more=more, groups=groups)

    def __repr__(self) -> str:
        shown = ", ".join(f"{u}={self.tasks[i]:.6g}" for i, u in enumerate(self.instance.users[:6]))
        more = ", ..." if self.instance.n > 6 else ""
        return f"Allocation({self.mechanism}: {shown}{more})"


def leontief_values(instance: Instance, bundles: NDArray[np.float64]) -> NDArray[np.float64]:
    """``min(T_i, min_{j: D_ij > 0} A_ij / D_ij)`` per user: the tasks her bundle runs (0 for a
    user demanding nothing, an inactive queue)."""
    D = instance.demand
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(D > 0, bundles / np.where(D > 0, D, 1.0), np.inf).min(axis=1)
    ratio = np.where(np.isfinite(ratio), ratio, 0.0)
    return np.minimum(np.maximum(ratio, 0.0), instance.bounds())


def _fmt(v: float, digits: int) -> str:
    v = float(v)
    if v == 0:
        return "0"
    text = f"{v:.{digits}f}".rstrip("0").rstrip(".")
    return text if text not in ("", "0", "-0") else f"{v:.{digits}g}"  # 1e-09 is not 0


def _amount_formatter(resources: Sequence[str], units: Mapping[str, str], digits: int) -> Callable[[int, float], str]:
    """How a table shows an amount of resource ``j``: in its unit when it has one, else as a number."""
    from fairalloc.core.units import readable

    def amount(j: int, v: float) -> str:
        unit = units.get(resources[j])
        return _fmt(v, digits) if unit is None else readable(v, unit, digits)

    return amount


def _finite(v: SupportsFloat) -> float | None:
    """``float(v)``, or ``None`` (JSON ``null``) for NaN and infinities."""
    f = float(v)
    return f if math.isfinite(f) else None


def _plain(v: object) -> object:
    if isinstance(v, np.ndarray):
        return [_plain(e) for e in v.tolist()]
    if isinstance(v, np.integer):
        return v.item()
    if isinstance(v, (float, np.floating)):
        return _finite(v)
    if isinstance(v, (list, tuple)):
        return [_plain(e) for e in v]
    if isinstance(v, dict):
        return {k: _plain(e) for k, e in v.items()}
    return v
