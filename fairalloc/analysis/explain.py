"""Why a queue is entitled to what it gets: the constraints that bind, read off the computation.

``fairalloc explain`` answers the question operators ask of a production policy ("what is my
queue's fair share right now, and why?").  For every queue it gives the entitlement under the
policy, under DRF and H-DRF for contrast, the queue's usage and the gap, and sentences built from
the numbers, never from a template that could be wrong for the case:

* **what binds**: the queue's own request (it gets all it asks), its limit or a group's limit,
  its guarantee (it holds exactly its guarantee), a lending limit of its cohort, or the capacity of
  a resource that is all given out;
* **the dominant resource**: the resource of which it holds the largest share of the cluster;
* **who it shares the last unit with**: its siblings in the queue tree that nothing else bounds
  hold the same amount per unit of weight: of their dominant share (DRF-like policies) or of each
  resource separately (policies that split each resource by weight: Volcano, YARN);
* **the gap**: entitlement minus usage (owed when positive, above its share when negative);
* **what a reporter expected** (a case's ``user_expectation``), compared with the policy's answer:
  the same numbers, the same split scaled to the whole cluster, or a different split.

The checks use :data:`~fairalloc.core.tolerances.PROPERTY` relative to each resource's capacity.

Cost: one solve of the policy and one of each contrast mechanism, then O(n d m) for every node's
bundle, request and level (``n`` queues, ``d`` the depth of the tree, ``m`` resources, each computed
once), O(s log s) to sort each sibling set's levels and format what a sentence says of each sibling
once, and beyond that what the sentences say: a queue's peers are found by binary searches,
the first :data:`NAMED_PEERS` named (their strings joined, not remade) and the rest counted,
Kueue's lenders and lending limits are found once per cohort tree and resource and listed.  (The
sentences used to look every queue up with ``list.index`` and recompute each sibling's bundle for
each queue: cubic in the queues; then named every peer in every peer's sentence: quadratic in the
queues sharing one level, 5.7 MB of text for 1,000 flat queues under ``drf``.)  The contrast
solves are most of what is left on a tree whose policy solves in milliseconds: ``hdrf-fluid``
solves (or refuses) in seconds at 1,000 queues.

>>> from fairalloc.io.cases import load_case
>>> report = explain(load_case("report-volcano-1619"))
>>> report.queues["test"].why[0]
'Entitled to 5.455 cores of cpu, 0 bytes of memory under volcano-proportion.'
>>> "12 cores" in " ".join(report.queues["test"].why)
True
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from fairalloc.core import registry
from fairalloc.core.errors import FairallocError, unknown
from fairalloc.core.instance import Instance
from fairalloc.core.queues import queues_of, request
from fairalloc.core.tolerances import PROPERTY
from fairalloc.core.units import readable

#: the mechanisms every explanation shows beside the policy (the paper's fair shares)
CONTRAST = ("drf", "hdrf-fluid")
#: the policies that read lending limits (Kueue's ``lendingLimit``, KEP-1714): only they are explained by one
LENDING = ("kueue",)
#: the peers a sentence names, in file order; it counts the rest ("and 340 more")
NAMED_PEERS = 5
#: how a case's requests are read: as recorded, or every queue wanting more (the steady state)
DEMANDS = ("observed", "backlogged")


@dataclass
class QueueExplanation:
    """One queue's entitlement, usage, gap, the constraints that bind (``binding``: short tags such
    as ``request``, ``limit:cpu``, ``capacity:cpu``) and the sentences that say why."""

    name: str
    entitlement: dict[str, float]
    contrast: dict[str, dict[str, float] | None]
    usage: dict[str, float]
    gap: dict[str, float]
    binding: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)
    expected: dict[str, float] | None = None

    def to_dict(self) -> dict:
        out = {
            "entitlement": self.entitlement,
            "contrast": self.contrast,
            "usage": self.usage,
            "gap": self.gap,
            "binding": self.binding,
            "why": self.why,
        }
        if self.expected is not None:
            out["expected"] = self.expected
        return out


@dataclass
class Explanation:
    """Every explained queue of a case under one policy, plus sentences about the whole case."""

    policy: str
    case: str
    queues: dict[str, QueueExplanation]
    summary: list[str]
    units: dict[str, str]
    demand: str = "observed"

    def to_dict(self) -> dict:
        return {
            "policy": self.policy,
            "case": self.case,
            "demand": self.demand,
            "summary": self.summary,
            "units": self.units,
            "queues": {q: e.to_dict() for q, e in self.queues.items()},
        }


class _Facts:
    """The numbers every sentence is built from, computed once: each node's bundle, request, level
    and whether it is capped are kept per node (a queue's sentences read its siblings' and its
    groups'), so that explaining every queue costs the tree's size times its depth plus what the
    sentences say, not a pass over every queue for each sentence."""

    def __init__(self, inst: Instance, policy: str, bundles: np.ndarray, units: dict, expectation: dict, demand: str):
        self.inst, self.policy, self.units = inst, policy, units
        #: a backlogged request is what the queue may hold, not work it has: it never "binds" as a request
        self.backlogged = demand == "backlogged"
        self.expectation = expectation
        self.Q = queues_of(inst)
        self.users = list(inst.users)
        self.R = np.asarray(inst.capacity, dtype=float)
        self.req = request(inst)
        self.tol = PROPERTY * np.maximum(self.R, 1.0)
        # what is 0 of each queue's resource: the noise of the capacity, or of its request when
        # smaller (a queue asking for 1 cpu of 1e18 gets 1, not noise)
        self.noise = PROPERTY * np.maximum(np.where(self.req > 0, np.minimum(self.req, self.R), self.R), 1.0)
        self.A = self.quiet(bundles)
        self.per_resource = registry.get(policy).per_resource
        self.zero_unguaranteed = registry.get(policy).zero_unguaranteed
        self.G = self.Q.leaf_array("guarantee", self.users)
        self.L = self.Q.leaf_array("limit", self.users)
        self.U = self.Q.leaf_array("usage", self.users)
        self.active = self.req.sum(axis=1) > 0
        self.index = {u: i for i, u in enumerate(self.users)}
        self.total = self.A.sum(axis=0)
        wants = self.req > 0
        #: whether each queue gets all it asks for, and the resources all given out (whole rows at once)
        self.served = np.all((self.A >= self.req - self.tol) | ~wants, axis=1)
        self.exhausted = self.total >= self.R - self.tol
        #: each queue's dominant resource: of its entitlement, else of its request (none: no share > 0)
        rows = np.where(np.any(self.A, axis=1, keepdims=True), self.A, self.req)
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = np.where(self.R > 0, rows / self.R, 0.0)
        self.dominant = np.where(np.any(shares > 0, axis=1), np.argmax(shares, axis=1), -1)
        self._memo: dict[tuple, object] = {}

    def guaranteed(self, j: int) -> float:
        """What the guarantees of all queues add up to of resource ``j`` (once per resource)."""
        return self.once(("guarantees", j), lambda: np.nansum(self.G[:, j]))

    def once(self, key: tuple, compute):
        """``compute()``, once per ``key`` (a node's bundle, a sibling set's levels, ...)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def quiet(self, amounts: np.ndarray, i: int | None = None) -> np.ndarray:
        """``amounts`` (every queue's row, or queue ``i``'s) with what lies within the noise of 0 as
        0: a solver's 1e-11 cores of a 10-core cluster is no entitlement, and is not shown as one."""
        noise = self.noise if i is None else self.noise[i]
        return np.where(np.abs(amounts) <= noise, 0.0, amounts)

    def amount(self, j, v: float) -> str:  # j: an int or a numpy integer
        return readable(v, self.units.get(self.inst.resources[int(j)]))

    def amounts(self, row, only=None) -> str:
        js = [j for j in range(len(self.R)) if only is None or only[j]]
        return ", ".join(f"{self.amount(j, row[j])} of {self.inst.resources[j]}" for j in js) or "nothing"

    def _rows(self, node: str) -> list[int]:
        leaves = self.Q.leaves(node) if self.Q.is_group(node) else [node]
        return [self.index[u] for u in leaves]

    def node_bundle(self, node: str) -> np.ndarray:
        """A node's entitlement: a leaf's own, a group's leaves' sum (read-only, kept)."""
        return self.once(("bundle", node), lambda: _frozen(self.A[self._rows(node)].sum(axis=0)))

    def node_request(self, node: str) -> np.ndarray:
        return self.once(("request", node), lambda: _frozen(self.req[self._rows(node)].sum(axis=0)))

    def level(self, node: str, j: int | None) -> float:
        """A node's weighted share: of resource ``j`` (per-resource policies), else dominant."""
        return self.once(("level", node, j), lambda: self._level(node, j))

    def _level(self, node: str, j: int | None) -> float:
        B, w = self.node_bundle(node), self.Q.weight[node]
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = np.where(self.R > 0, B / self.R, 0.0)
        return float((B[j] if j is not None else shares.max(initial=0.0)) / w)

    def at_limit(self, node: str) -> np.ndarray | None:
        """The resources of which the node holds its limit (``None`` when none: most nodes)."""
        return self.once(("at_limit", node), lambda: self._at_limit(node))

    def _at_limit(self, node: str) -> np.ndarray | None:
        limit = self.Q.limit[node]
        held = np.isfinite(limit) & (self.node_bundle(node) >= limit - self.tol)
        return _frozen(held) if held.any() else None

    def capped(self, node: str) -> bool:
        """Whether the node's own request or limit stops it (it would not take more)."""
        return self.once(("capped", node), lambda: self._capped(node))

    def _capped(self, node: str) -> bool:
        B, req = self.node_bundle(node), self.node_request(node)
        wants = req > 0
        if not wants.any() or np.all(B[wants] >= req[wants] - self.tol[wants]):
            return True
        limit = self.Q.limit[node]
        return bool(np.any(np.isfinite(limit) & (B >= limit - self.tol) & wants))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def explain(
    case, policy: str | None = None, *, queue: str | None = None, method: str = "auto", demand: str | None = None
) -> Explanation:
    """Explain every queue of ``case`` (a :class:`~fairalloc.io.cases.Case` or an instance) under
    ``policy`` (default: the case's ``policy``, else ``drf``); ``queue`` explains one queue.
    ``demand``: ``observed`` (the requests as recorded), ``backlogged`` (every queue wants more: the
    steady entitlements), or ``None`` for what the case says (``demand:``, default ``observed``)."""
    inst, demand = _demanded(case, demand)
    units = dict(getattr(case, "units", {}) or {})
    expectation = dict(getattr(case, "user_expectation", {}) or {})
    policy = policy or getattr(case, "policy", None) or "drf"
    mech = registry.get(policy)
    if queue is not None and queue not in inst.users:
        raise FairallocError(f"queue: {unknown('queue', queue, inst.users)}")
    main = mech.allocate(inst, method)
    facts = _Facts(inst, mech.name, np.asarray(main.bundles, dtype=float), units, expectation, demand)
    contrast = {c: _contrast(c, inst, method) for c in CONTRAST if c != mech.name}
    contrast = {c: None if B is None else facts.quiet(B) for c, B in contrast.items()}
    names = [queue] if queue is not None else facts.users
    queues = {q: _explain_queue(facts, q, contrast, expectation.get(q)) for q in names}
    return Explanation(mech.name, inst.name, queues, _summary(facts, mech, demand), units, demand)


def _demanded(case, demand: str | None) -> tuple[Instance, str]:
    """The instance to explain and its demand reading."""
    if demand not in (None, *DEMANDS):
        raise FairallocError(f"demand: {unknown('demand', demand, DEMANDS)}")
    if hasattr(case, "demanded"):  # a loaded case; an Instance has no demand reading of its own
        return case.demanded(demand), demand or case.demand
    inst = case.instance if hasattr(case, "instance") else case
    return (inst.backlogged() if demand == "backlogged" else inst), demand or "observed"


def _contrast(name: str, inst: Instance, method: str) -> np.ndarray | None:
    try:
        return np.asarray(registry.get(name).allocate(inst, method).bundles, dtype=float)
    except FairallocError:  # e.g. a hierarchy the mechanism refuses: shown as not available
        return None


def _mapping(inst: Instance, row) -> dict[str, float]:
    return {r: float(v) for r, v in zip(inst.resources, row)}


def _explain_queue(f: _Facts, q: str, contrast: dict, expected: dict | None) -> QueueExplanation:
    i = f.index[q]
    A = f.A[i]
    out = QueueExplanation(
        name=q,
        entitlement=_mapping(f.inst, A),
        contrast={c: None if B is None else _mapping(f.inst, B[i]) for c, B in contrast.items()},
        usage=_mapping(f.inst, f.U[i]),
        gap=_mapping(f.inst, f.quiet(A - f.U[i], i)),
        expected=expected,
    )
    out.why.append(f"Entitled to {f.amounts(A)} under {f.policy}.")
    if not f.active[i]:
        out.binding.append("inactive")
        out.why.append(_inactive_sentence(f, i))
        return out
    for tag, sentence in [*_binding(f, i), *_sharing(f, q)]:
        if tag:
            out.binding.append(tag)
        out.why.append(sentence)
    out.why += _contrast_sentences(f, i, contrast)
    out.why += _gap_sentences(f, i)
    if expected is not None:
        out.why += _expectation_sentences(f, i, expected)
    return out


def _inactive_sentence(f: _Facts, i: int) -> str:
    if np.any(f.A[i] > f.tol):  # a steady share (yarn-fair-steady) counts every configured queue
        return (
            f"It has no request (no pending or running work), yet {f.policy} entitles it to this: the policy "
            "counts every configured queue, active or not."
        )
    return (
        "It has no request (no pending or running work), so the policy gives it nothing; with "
        "--demand backlogged, what it is entitled to when every queue wants more."
    )


def _binding(f: _Facts, i: int) -> list[tuple[str, str]]:
    """(tag, sentence) for every constraint that holds the queue where it is."""
    req, tol, res = f.req[i], f.tol, f.inst.resources
    wants = req > 0
    out: list[tuple[str, str]] = []
    if not f.backlogged and f.served[i]:
        return [("request", f"Its request binds: it gets all it asks for ({f.amounts(req, wants)}).")]
    out += _limits(f, i)
    out += _guarantees(f, i)
    total = f.total
    for j in np.flatnonzero(wants & f.exhausted):
        given = (
            f"the entitlements add up to {f.amount(j, total[j])}, more than its {f.amount(j, f.R[j])}"
            if total[j] > f.R[j] + tol[j]
            else f"all {f.amount(j, f.R[j])} are given out"
        )
        out.append((f"capacity:{res[j]}", f"The cluster's {res[j]} is the bottleneck: {given}."))
    out += _lending(f, i)
    if not out:
        out.append(("", "No limit, guarantee or exhausted resource holds it: it is below its request by its share."))
    return out


def _limits(f: _Facts, i: int) -> list[tuple[str, str]]:
    q, res = f.users[i], f.inst.resources
    out: list[tuple[str, str]] = []
    for node in [q, *reversed(f.Q.path(q))]:
        held = f.at_limit(node)
        if held is None:
            continue
        B = f.node_bundle(node)
        for j in np.flatnonzero(held & (f.req[i] > 0)):
            whose = "Its limit" if node == q else f"Its group {node}'s limit"
            tag = f"limit:{res[j]}" if node == q else f"group_limit:{node}:{res[j]}"
            out.append((tag, f"{whose} binds: {f.amount(j, B[j])} of {res[j]}, the most {node} may hold."))
    return out


def _guarantees(f: _Facts, i: int) -> list[tuple[str, str]]:
    A, req, res = f.A[i], f.req[i], f.inst.resources
    G = np.nan_to_num(f.G[i], nan=0.0) if f.zero_unguaranteed else f.G[i]
    out: list[tuple[str, str]] = []
    guaranteed = np.isfinite(G) & (G > 0) & (req > 0)
    if not guaranteed.any():
        return out
    # honoured as guarantee_honoured reads it: each resource, or the largest multiple of the request
    # within it, where a requested resource guaranteed 0 allows no multiple at all
    wants = req > 0
    value = float(np.min(A[wants] / req[wants]))
    # its own limit caps what it can be owed; no limit caps nothing, an unbounded request too (inf/inf)
    L = f.L[i][wants]
    capped = np.min(np.divide(L, req[wants], out=np.full_like(L, np.inf), where=np.isfinite(L)))
    given = np.isfinite(G) & wants
    multiple = min(1.0, float(np.min(G[given] / req[given])), float(capped))
    zero = np.flatnonzero(given & (G <= f.tol))
    short = guaranteed & (A < np.minimum(np.minimum(G, req), f.L[i]) - f.tol)
    if len(zero) and short.any():
        return [_zero_guarantee(f, i, G, zero)]
    for j in np.flatnonzero(guaranteed):
        if abs(A[j] - G[j]) <= f.tol[j]:
            total = f.guaranteed(int(j))
            room = (
                f"the guarantees of all queues take {f.amount(j, total)} of the {f.amount(j, f.R[j])}, so "
                "nothing is left to share beyond them"
                if total >= f.R[j] - f.tol[j]
                else "its weighted share alone would be smaller"
            )
            out.append(
                (f"guarantee:{res[j]}", f"It holds exactly its guarantee of {f.amount(j, G[j])} of {res[j]}: {room}.")
            )
        elif A[j] < min(G[j], req[j], f.L[i, j]) - f.tol[j]:
            if abs(value - multiple) <= PROPERTY * max(multiple, 1.0):
                out.append(
                    (
                        f"guarantee:{res[j]}",
                        f"It holds {f.amount(j, A[j])} of {res[j]}, less than its guarantee of {f.amount(j, G[j])}: "
                        f"its guarantee is honoured in the shape of its request ({multiple:.4g} of the request, "
                        "the largest multiple every guaranteed resource allows).",
                    )
                )
            elif value < multiple:
                out.append(
                    (
                        f"below_guarantee:{res[j]}",
                        f"It gets {f.amount(j, A[j])} of {res[j]}, less than its guarantee of "
                        f"{f.amount(j, G[j])}: {f.policy} does not honour the guarantee here.",
                    )
                )
    return out


def _zero_guarantee(f: _Facts, i: int, G: np.ndarray, zero: np.ndarray) -> tuple[str, str]:
    """The binding cause when a queue's request needs a resource it is guaranteed none of (``zero``):
    no whole unit of its request is guaranteed, so it is owed nothing below its other guarantees."""
    res = f.inst.resources
    none = "no nominal quota" if f.policy in LENDING else "a guarantee of 0"  # Kueue's word for it
    names = ", ".join(res[k] for k in zero)
    rest = np.isfinite(G) & (G > f.tol)
    covered = f"its guarantee of {f.amounts(G, rest)} covers" if rest.any() else "its guarantees cover"
    return (
        f"zero_guarantee:{res[zero[0]]}",
        f"Its request needs {names}, of which it has {none}, so {covered} none of its request: the {names} "
        f"it runs on can only be borrowed. The zero quota binds here, not {f.policy}.",
    )


def _lending(f: _Facts, i: int) -> list[tuple[str, str]]:
    """Kueue: what the queue borrows above its nominal quota, who has quota unused to lend, and the
    lending limits of its cohort when they cap what can be lent."""
    if f.policy not in LENDING:
        return []
    q, A, res = f.users[i], f.A[i], f.inst.resources
    out: list[tuple[str, str]] = []
    G = np.nan_to_num(f.G[i], nan=0.0)
    path = f.Q.path(q)
    for j in np.flatnonzero(A > G + f.tol):
        unused = [k for k in (_unused(f, path[0], int(j)) if path else []) if k != q]
        lenders = ", ".join(f"{k}'s {f.amount(j, f.Q.guarantee[k][j] - f.node_bundle(k)[j])}" for k in unused)
        out.append(
            (
                "",
                f"It borrows {f.amount(j, A[j] - G[j])} of {res[j]} above its nominal quota of {f.amount(j, G[j])}"
                + (f", from quota others leave unused ({lenders})." if lenders else "."),
            )
        )
        for node in reversed(path):
            capped = [k for k in _lending_capped(f, node, int(j)) if k != q]
            if capped:
                lent = sum(f.Q.lending_limit[k][j] for k in capped)
                out.append(
                    (
                        f"lending_limit:{node}:{res[j]}",
                        f"In {node}, the lending limits of {', '.join(capped)} let at most {f.amount(j, lent)} "
                        "of their quota be lent.",
                    )
                )
                break
    return out


def _unused(f: _Facts, root: str, j: int) -> list[str]:
    """The leaves under ``root`` holding less of ``j`` than their nominal quota, in user order (once
    per cohort tree and resource: every borrower of the tree names them)."""

    def compute() -> list[str]:
        tree = f.Q.leaves(root)
        rows = np.array([f.index[k] for k in tree], dtype=int)
        unused = np.nan_to_num(f.G[rows, j]) > f.A[rows, j] + f.tol[j]
        return [k for k, lends in zip(tree, unused) if lends]

    return f.once(("unused", root, j), compute)


def _lending_capped(f: _Facts, node: str, j: int) -> list[str]:
    """The leaves under ``node`` with a lending limit of ``j``, in user order (once per node)."""
    return f.once(("lending", node, j), lambda: [k for k in f.Q.leaves(node) if np.isfinite(f.Q.lending_limit[k][j])])


def _sharing(f: _Facts, q: str) -> list[tuple[str, str]]:
    """Who the queue (and each of its groups) shares the last unit with, from the leaf upwards."""
    out: list[tuple[str, str]] = []
    i = f.index[q]
    j_dom = _dominant(f, i)
    if j_dom is not None:
        j, share = j_dom
        out.append(("", f"Its dominant resource is {f.inst.resources[j]} ({share:.1%} of the cluster's)."))
    if f.capped(q):
        return out
    for node in [q, *reversed(f.Q.path(q))]:
        sentence = _peers(f, node, None if not f.per_resource or j_dom is None else j_dom[0])
        if sentence:
            out.append(("", sentence))
    return out


def _dominant(f: _Facts, i: int) -> tuple[int, float] | None:
    j = int(f.dominant[i])
    if j < 0:
        return None
    return j, float(f.A[i, j] / f.R[j]) if f.R[j] > 0 else 0.0


def _peers(f: _Facts, node: str, j: int | None) -> str:
    """A sentence naming the siblings of ``node`` that hold as much per unit of weight: the first
    :data:`NAMED_PEERS` in file order, and how many more (a level shared by hundreds of queues
    would otherwise name them all in every one of their sentences: output quadratic in the queues)."""
    mine = f.level(node, j)
    if mine <= 0:
        return ""
    siblings = _siblings(f, f.Q.parent[node], j)
    if not siblings.free or siblings.free == [node]:  # no sibling to share with (a chain of groups)
        return ""
    same, count = _level_peers(f, siblings, j, mine, siblings.position.get(node))
    if not count:
        return ""
    where = "the cluster" if f.Q.parent[node] is None else f"group {f.Q.parent[node]}"
    what = f"of {f.inst.resources[j]}" if j is not None else "of dominant share"
    more = f" and {count - len(same)} more" if count > len(same) else ""
    weights = ":".join([_short(f.Q.weight[node]), *(siblings.weights[k] for k in same)])
    held = ", ".join([f"{node} {_held(f, node, j)}", *(siblings.held[k] for k in same)])
    who = "It" if node in f.users else f"Its group {node}"
    return (
        f"{who} shares the last unit {what} in {where} with {', '.join(siblings.free[k] for k in same)}{more}: "
        f"they hold the same per unit of weight (weights {weights}{more and ':...'}: {held}{more and ', ...'})."
    )


class _Siblings(NamedTuple):
    """The requesting, uncapped children of a node (``free``, in file order) for one level: their
    positions sorted by level (``order``, NaN left out: it is near nothing), those levels, and what
    a sentence says of each (its weight, ``name amount``), each made once per sibling set;
    ``position``: each free child's position in ``free``."""

    free: list[str]
    order: list[int]
    levels: list[float]
    weights: list[str]
    held: list[str]
    position: dict[str, int]


def _siblings(f: _Facts, parent: str | None, j: int | None) -> _Siblings:
    return f.once(("peers", parent, j), lambda: _sibling_levels(f, parent, j))


def _level_peers(f: _Facts, siblings: _Siblings, j: int | None, mine: float, me: int | None) -> tuple[list[int], int]:
    """The first :data:`NAMED_PEERS` positions (in ``siblings.free``, ascending: file order) of the
    siblings whose level is within :data:`PROPERTY` of ``mine``, but position ``me`` (None: the
    node is not among them), and how many there are.  Levels are sorted once per sibling set, so a
    query costs binary searches, the few levels near the edges of the test, and a sort of the
    positions once per band (the queues at one level share it), in plain Python: most sibling sets
    are a few nodes, where numpy's per-call cost is the whole cost."""
    tol = PROPERTY * max(mine, 1e-12)
    if not math.isfinite(mine):  # no interval to search: every free sibling is tested
        found = [k for k, s in enumerate(siblings.free) if abs(f.level(s, j) - mine) <= tol and k != me]
        return found[:NAMED_PEERS], len(found)
    levels, order = siblings.levels, siblings.order
    # within half the test every level passes it, whatever the rounding; from there to twice the
    # test, the test itself decides: the same peers as testing every level of the sibling set
    lo, hi = bisect.bisect_left(levels, mine - 2 * tol), bisect.bisect_right(levels, mine + 2 * tol)
    inner_lo, inner_hi = bisect.bisect_left(levels, mine - tol / 2), bisect.bisect_right(levels, mine + tol / 2)
    edges = [order[k] for k in [*range(lo, inner_lo), *range(inner_hi, hi)] if abs(levels[k] - mine) <= tol]
    inner = f.once(("band", id(siblings), inner_lo, inner_hi), lambda: sorted(order[inner_lo:inner_hi]))
    first = [k for k in heapq.merge(inner[: NAMED_PEERS + 1], sorted(edges)) if k != me]
    return first[:NAMED_PEERS], inner_hi - inner_lo + len(edges) - (me is not None)


def _sibling_levels(f: _Facts, parent: str | None, j: int | None) -> _Siblings:
    free = [s for s in f.Q.children(parent) if f.node_request(s).any() and not f.capped(s)]
    pairs = sorted((f.level(s, j), k) for k, s in enumerate(free) if not np.isnan(f.level(s, j)))
    return _Siblings(
        free,
        [k for _, k in pairs],
        [v for v, _ in pairs],
        [_short(f.Q.weight[s]) for s in free],
        [f"{s} {_held(f, s, j)}" for s in free],
        {s: k for k, s in enumerate(free)},
    )


def _held(f: _Facts, node: str, j: int | None) -> str:
    B = f.node_bundle(node)
    if j is None:
        with np.errstate(divide="ignore", invalid="ignore"):
            j = int(np.argmax(np.where(f.R > 0, B / f.R, 0.0)))
    return f.amount(j, B[j])


def _short(w: float) -> str:
    return f"{w:g}"


def _contrast_sentences(f: _Facts, i: int, contrast: dict) -> list[str]:
    parts = []
    for name, B in contrast.items():
        if B is None:
            parts.append(f"{name} refuses this case")
        elif _differs(f, name, B)[i]:
            parts.append(f"{name} would give {f.amounts(B[i])}")
    if not parts:
        names = " and ".join("DRF" if c == "drf" else "H-DRF" for c in contrast)
        return [f"{names} give{'s' if len(contrast) == 1 else ''} the same."] if contrast else []
    return ["For contrast, " + "; ".join(parts) + "."]


def _differs(f: _Facts, name: str, B: np.ndarray) -> np.ndarray:
    """Which queues contrast mechanism ``name`` (bundles ``B``) gives other amounts (once per mechanism)."""
    return f.once(("differs", name), lambda: np.any(np.abs(B - f.A) > f.tol, axis=1))


def _gap_sentences(f: _Facts, i: int) -> list[str]:
    U, A = f.U[i], f.A[i]
    if not U.any():
        return []
    above = U > A + f.tol
    below = U < A - f.tol
    out = [f"It uses {f.amounts(U, U > 0)} now."]
    if above.any():
        out.append(
            f"That is {f.amounts(U - A, above)} above its entitlement: it runs on what others are entitled to, "
            "and the scheduler's actions (reclaim, preemption), not the fair share, decide how long."
        )
    if below.any():
        out.append(f"It is owed {f.amounts(A - U, below)}: the gap to its entitlement.")
    return out


def _expectation_sentences(f: _Facts, i: int, expected: dict[str, float]) -> list[str]:
    res = list(f.inst.resources)
    js = [res.index(r) for r in expected]
    E = np.array([expected[res[j]] for j in js])
    A = f.A[i, js]
    tol = f.tol[js]
    shown = ", ".join(f"{f.amount(j, e)} of {res[j]}" for j, e in zip(js, E))
    if np.all(np.abs(A - E) <= tol):
        said = f"The reporter expected {shown}: exactly what {f.policy} gives."
        if f.U[i].any() and np.any(np.abs(f.U[i, js] - E) > tol):
            said += " What they saw running is usage, not the entitlement (see the gap)."
        return [said]
    return [f"The reporter expected {shown}; {f.policy} gives {f.amounts(f.A[i], None)}.", *_why_differs(f, js)]


def _why_differs(f: _Facts, js: list[int]) -> list[str]:
    """Case-level reasons the reporter's numbers and the policy's differ, resource by resource."""
    out = []
    res = f.inst.resources
    expected = _expectations_matrix(f, js)
    for col, j in enumerate(js):
        E, A = expected[:, col], f.A[:, j]
        known = ~np.isnan(E)
        if not known.any():
            continue
        e_total, a_total = float(np.sum(E[known])), float(np.sum(A[known]))
        if a_total > e_total + f.tol[j]:
            ratio = A[known] / np.where(E[known] > 0, E[known], np.nan)
            same_split = np.nanmax(ratio) - np.nanmin(ratio) <= PROPERTY * np.nanmax(ratio)
            split = (
                f"the same split scaled by {a_total / e_total:.4g}"
                if same_split
                else "split " + ":".join(_short(round(a, 3)) for a in A[known])
            )
            out.append(
                f"The expectation gives out {f.amount(j, e_total)} of {res[j]}; {f.policy} gives out "
                f"{f.amount(j, a_total)} of the {f.amount(j, f.R[j])}: {split}."
            )
        elif a_total < e_total - f.tol[j]:
            out.append(
                f"The expectation gives out {f.amount(j, e_total)} of {res[j]}, more than the "
                f"{f.amount(j, a_total)} {f.policy} gives these queues."
            )
    return out


def _expectations_matrix(f: _Facts, js: list[int]) -> np.ndarray:
    return f.once(("expected", *js), lambda: _expected(f, js))


def _expected(f: _Facts, js: list[int]) -> np.ndarray:
    table = f.expectation
    out = np.full((len(f.users), len(js)), np.nan)
    for k, u in enumerate(f.users):
        for col, j in enumerate(js):
            v = table.get(u, {}).get(f.inst.resources[j])
            if v is not None:
                out[k, col] = v
    return out


def _summary(f: _Facts, mech, demand: str) -> list[str]:
    total = f.A.sum(axis=0)
    out = [f"{mech.name}: {mech.summary}.", _demand_sentence(f, demand)]
    out.append("Capacity: " + f.amounts(f.R) + "; entitlements add up to " + f.amounts(total) + ".")
    over = total > f.R + f.tol
    if over.any():
        out.append(
            f"The entitlements promise more than the cluster has ({f.amounts(total - f.R, over)} too much): "
            "guarantees are honoured after the weighted split."
        )
    return out


def _demand_sentence(f: _Facts, demand: str) -> str:
    if demand == "backlogged":
        return (
            "Demand: backlogged. Every queue is taken to want more than it can get (its request scaled up in its "
            "shape, all it may hold where it has none): these are the steady entitlements the configuration "
            "promises, not today's; --demand observed gives the answer for the recorded requests."
        )
    idle = (
        ""
        if f.active.any()
        else " No queue has one, so every entitlement is 0: --demand backlogged gives the steady ones."
    )
    return f"Demand: observed. Each queue's recorded request (pending and running work) bounds what it can get.{idle}"
