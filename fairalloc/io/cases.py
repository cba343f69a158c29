"""YAML cases: safe loading, validation with field-path errors, the bundled case library.

A case file::

    name: drf-section-4-1
    source: >-
      Ghodsi et al., "Dominant Resource Fairness: Fair Allocation of Multiple Resource
      Types", USENIX NSDI 2011, section 4.1
    description: optional free text
    resources: {cpu: 9, mem: 18}
    users:
      A: {demand: {cpu: 1, mem: 4}}
      B: {demand: {cpu: 3, mem: 1}, weight: 1, max_tasks: 100, shared: 0.5}

Users are listed in arrival order.  ``demand`` leaves out resources the user does not need.
``weight`` is a number or a mapping per resource (missing resources weigh 1).  ``max_tasks``
bounds the user's tasks; ``shared`` is her DMFA-SRQ shared quantity in ``(0, 1]``.

Files are read with PyYAML's safe loader (no tag builds an object) and duplicate keys are
refused; plain data (no anchor, alias or tag) is built straight from libyaml's parser events
(:func:`_read_plain`), the rest through PyYAML's composer, with the same data and messages.
A JSON text (a ``.json`` case, or JSON wherever YAML is read) is YAML and reads as the same data,
through the standard library's C decoder when it is plain (:func:`_read_json`).
Every problem is a :class:`~fairalloc.core.errors.CaseError` whose message starts with the exact
field: ``users.B.demand.gpu: unknown resource 'gpu' (resources: cpu, mem)``.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import operator
import os
import re
import stat
import sys
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from fairalloc.core import limits
from fairalloc.core.errors import (
    CaseError,
    FairallocError,
    check_known,
    did_you_mean,
    excerpt,
    field_path,
    one_line,
    quoted,
    shown,
    unknown,
)
from fairalloc.core.instance import Instance
from fairalloc.core.queues import RESOURCE_FIELDS, Queues, check_depth
from fairalloc.io.jobs import cycle_state

NonNegative = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
Positive = Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0)]


def _name(value) -> str:
    """A resource, user, group or variant name as text: a number written as a name (``1``, ``2.5``)
    is the same name as its text, wherever it appears (a key or a value)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"name {excerpt(value)} is not valid (use text or a number)")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"name {value} is not valid (use text or a finite number)")
    text = str(value)
    if not text.strip():
        raise ValueError("a name must not be empty")
    if len(text) > limits.MAX_NAME_CHARS:
        raise ValueError(f"a name of {len(text):,} characters {excerpt(text)} (at most {limits.MAX_NAME_CHARS})")
    if not text.isprintable():
        raise ValueError(f"name {excerpt(text)} is not printable text on one line")
    return text


def _names(mapping):
    """The one place where the keys of every name -> value mapping of a case become text (``{1: 3}``
    demands of the resource named ``1``); two keys naming the same name are refused."""
    if not isinstance(mapping, dict):
        return mapping  # pydantic says it is not a mapping
    if _plain_names(mapping):
        return mapping  # texts _name keeps as they are: distinct keys, distinct names
    out = {}
    for key, value in mapping.items():
        name = _name(key)
        if name in out:
            raise ValueError(f"{quoted(name)} is given twice")
        out[name] = value
    return out


def _plain_names(mapping: dict) -> bool:
    """Whether every key of ``mapping`` is text that :func:`_name` keeps as it is.

    Why: pydantic calls :func:`_names` once per mapping of a case, 300,000 times for a 100,000-queue
    case, and a call of :func:`_name` per key was most of the validation.  The few names such mappings
    repeat (resources) are remembered under the limit they were checked against; any other mapping's
    keys are checked all at once, in C (type, blank, length, printable); a key that fails is read by
    :func:`_name`, whose message is the one it always was.  O(1) per remembered key."""
    seen = _SEEN_NAMES.setdefault(limits.MAX_NAME_CHARS, set())
    if seen.issuperset(mapping):
        return True
    if not (
        set(map(type, mapping)) == {str}
        and all(map(str.strip, mapping))
        and max(map(len, mapping)) <= limits.MAX_NAME_CHARS
        and "".join(mapping).isprintable()
    ):
        return False
    if len(mapping) <= _SEEN_FROM and len(seen) < _SEEN_AT_MOST:
        seen.update(mapping)
    return True


#: names :func:`_plain_names` found plain, by the ``MAX_NAME_CHARS`` they were checked against: those
#: of small mappings (a queue's resources), at most :data:`_SEEN_AT_MOST` of them
_SEEN_NAMES: dict[int, set[str]] = {}
_SEEN_FROM, _SEEN_AT_MOST = 16, 4096


#: a name: text, or a number read as its text
Name = Annotated[str, BeforeValidator(_name)]
T = typing.TypeVar("T")
#: a mapping from names (text, or numbers read as their text) to values; ``_names`` has made every
#: key a valid name already, so the keys are plain ``str`` (no second validator per key)
Names = Annotated[dict[str, T], BeforeValidator(_names)]


def _amount(value):
    """A queue's amount of a resource: a number, or a percentage of the resource's capacity."""
    if isinstance(value, str):
        if not PERCENT.match(value):
            raise ValueError(f'must be a number or a percentage of the capacity such as "50%" (got {excerpt(value)})')
        return value.strip()
    return value


PERCENT = re.compile(r"^\s*\d+(\.\d+)?\s*%\s*$")
#: an amount of a resource: a number >= 0, or "50%" of the resource's capacity
Amount = Annotated[NonNegative | str, BeforeValidator(_amount)]
Priority = Annotated[float, Field(strict=True, allow_inf_nan=False)]


#: every model of a case: unknown fields refused; validators built at the first validation
#: (``defer_build``), not at import: the case schema is built once, as one whole, when a case is read
_CONFIG = ConfigDict(extra="forbid", defer_build=True)


class QueueFields(BaseModel):
    """What production schedulers configure per queue or group (:mod:`fairalloc.core.queues`)."""

    model_config = _CONFIG
    priority: Priority | None = None
    guarantee: Names[Amount] | None = None  # minimum / nominal quota
    limit: Names[Amount] | None = None  # capability / maximum
    deserved: Names[Amount] | None = None  # Volcano capacity plug-in: the configured entitlement
    borrowing_limit: Names[Amount] | None = None  # Kueue: how far above its guarantee it may borrow
    lending_limit: Names[Amount] | None = None  # Kueue: how much of its guarantee others may borrow


class UserSpec(QueueFields):
    model_config = _CONFIG
    demand: Names[NonNegative] | None = None  # a paper case's per-task demand (required there)
    request: Names[NonNegative] | None = None  # a queue case's total outstanding demand
    usage: Names[NonNegative] | None = None  # a queue case: what the queue holds now
    group: Name | None = None  # hierarchies: the group this user belongs to
    weight: Positive | Names[Positive] | None = None
    max_tasks: NonNegative | None = None
    shared: Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0, le=1)] | None = None

    @field_validator("weight", mode="before")
    @classmethod
    def _weight_shape(cls, v):
        # one clear message instead of pydantic's two (number branch, mapping branch)
        if v is None or isinstance(v, dict):
            return v
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"must be a number or a mapping resource -> number (got {excerpt(v)})")
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"must be a finite number > 0 (got {excerpt(v)})")
        return v


#: the user fields that make a case a queue case
QUEUE_USER_FIELDS = ("request", "usage", *QueueFields.model_fields)


class MisreportSpec(BaseModel):
    model_config = _CONFIG
    user: Name
    demand: Names[NonNegative]


class NewUserSpec(UserSpec):
    name: Name


class VariantSpec(BaseModel):
    """A derived scenario: exactly one change to the case's instance."""

    model_config = _CONFIG
    name: Name
    description: str | None = None
    misreport: MisreportSpec | None = None
    remove_user: Name | None = None
    add_user: NewUserSpec | None = None
    capacity: Names[NonNegative] | None = None
    #: a queue case: new usage of some queues (``{queue: {resource: amount}}``)
    usage: Names[Names[NonNegative]] | None = None


VARIANT_KINDS = ("misreport", "remove_user", "add_user", "capacity", "usage")

Exact = int | float | str  # a number, or an exact value written as text: "100/31", "2.52"


class StepSpec(BaseModel):
    """Dynamic mechanisms: the level M and the task counts right after the k-th arrival."""

    model_config = _CONFIG
    k: Annotated[int, Field(strict=True, ge=1)]
    M: Exact | None = None
    tasks: Names[Exact] = {}


class ExpectSpec(BaseModel):
    """What a mechanism must compute on the case (or on one of its variants)."""

    model_config = _CONFIG
    mechanism: str
    variant: Name | None = None
    method: str = "auto"
    tasks: Names[Exact] = {}
    prices: Names[Exact] = {}
    steps: list[StepSpec] = []
    #: general bundles: ``{user: {resource: amount}}`` (a resource left out is not checked)
    allocation: Names[Names[Exact]] = {}
    #: a queue policy's share of each queue (or group) for the case's usage
    shares: Names[Exact] = {}
    #: a queue policy's order of the leaf queues for the case's usage
    order: list[Name] | None = None
    #: a production policy's scheduling cycle (the case's ``cycle``): the jobs it admits and preempts
    admitted: list[Name] | None = None
    preempted: list[Name] | None = None
    #: relative tolerance: |computed - expected| <= tolerance * |expected| + abs_tolerance
    tolerance: Annotated[float, Field(strict=True, gt=0, lt=1e-2)] = 1e-6
    #: absolute tolerance, 0 unless the expectation states one (an expected 0 needs one, or exact 0)
    abs_tolerance: Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)] = 0.0
    note: str | None = None


class JobSpec(BaseModel):
    """A job of a scheduling cycle or a workload (:class:`fairalloc.engines.online.Job`): ``pods``
    pods of ``request`` each for leaf queue ``queue``; ``min_pods``: a gang's fewest pods."""

    model_config = _CONFIG
    queue: Name
    request: Names[NonNegative]
    pods: Annotated[int, Field(strict=True, ge=1)] = 1
    min_pods: Annotated[int, Field(strict=True, ge=1)] | None = None
    priority: Priority = 0.0
    #: seconds from the start of the simulation (a cycle: when it entered its queue)
    submit: NonNegative = 0.0
    #: seconds of work when it runs uninterrupted (left out: it runs to the end)
    runtime: Positive | None = None


class RunningSpec(JobSpec):
    """A job already running at the cycle: since ``start``, with ``running_pods`` of its pods
    (all by default), on ``nodes`` (one per running pod) when the cycle has nodes."""

    start: NonNegative = 0.0
    running_pods: Annotated[int, Field(strict=True, ge=1)] | None = None
    nodes: list[Name] = []


class CycleSpec(BaseModel):
    """One scheduling cycle of a production policy (a ported scenario test): the jobs running and
    the jobs waiting at time ``now``, and the nodes (left out: the capacity is one pool)."""

    model_config = _CONFIG
    now: NonNegative = 0.0
    nodes: Names[Names[NonNegative]] | None = None
    running: Names[RunningSpec] = {}
    pending: Names[JobSpec] = {}


class ClaimSpec(BaseModel):
    """A statement the properties engine checks: '<mechanism> satisfies|violates <property>'."""

    model_config = _CONFIG
    mechanism: str
    property: str
    holds: bool
    user: Name | None = None  # check the property for this user
    variant: Name | None = None
    budget: Annotated[int, Field(strict=True, gt=0)] = 300
    note: str | None = None
    #: a source states the opposite (that the property holds): where it says so. The case is then
    #: the counterexample, and reproduce reports the row as "claim does not hold".
    refutes: str | None = None

    @field_validator("budget")
    @classmethod
    def _bounded_budget(cls, v):
        if v > limits.MAX_BUDGET:
            raise ValueError(f"{v:,} evaluations per user is more than fairalloc runs (at most {limits.MAX_BUDGET:,})")
        return v


class ErratumSpec(BaseModel):
    """Where a source states a different number: what it says, where, and the true value."""

    model_config = _CONFIG
    where: str
    says: str
    value: str
    note: str | None = None


class GroupSpec(QueueFields):
    """A node of a hierarchy (H-DRF, a cohort, a parent queue, a role): its weight among its
    siblings, its parent group, and in a queue case what the queue fields configure."""

    model_config = _CONFIG
    weight: Positive = 1.0
    parent: Name | None = None


class CaseSpec(BaseModel):
    model_config = _CONFIG
    name: str | None = None
    source: str | None = None
    description: str | None = None
    resources: Names[NonNegative]
    users: Names[UserSpec]
    arrivals: list[Name] | None = None  # arrival order (default: the order of 'users')
    groups: Names[GroupSpec] = {}  # hierarchies: internal nodes of the tree
    variants: list[VariantSpec] = []
    expect: list[ExpectSpec] = []
    claims: list[ClaimSpec | str] = []
    errata: list[ErratumSpec] = []
    #: the scheduler's policy (a mechanism name): what ``fairalloc explain`` and ``audit`` use by default
    policy: str | None = None
    #: what a resource's numbers count (``cores``, ``bytes``, ``MiB``, ...: fairalloc.core.units.UNITS)
    units: Names[str] = {}
    #: a queue case: what a reporter expected each queue to get (``{queue: {resource: amount}}``)
    user_expectation: Names[Names[Amount]] = {}
    #: a production policy's scheduling cycle: jobs running and waiting (fairalloc.io.jobs)
    cycle: CycleSpec | None = None
    #: the policy's own options beyond the queue fields (Kueue's preemption and queueing strategy,
    #: YARN's preemption timeouts, ...): checked by the policy's online form when it is built
    settings: dict[str, Any] = {}
    #: a queue case: ``observed`` (the requests as given) or ``backlogged`` (every queue wants more:
    #: the policy's steady state, what a configuration alone promises; :meth:`Instance.backlogged`)
    demand: Literal["observed", "backlogged"] = "observed"

    @field_validator("resources", "users", mode="before")
    @classmethod
    def _names_are_text(cls, v):
        if not isinstance(v, dict):
            raise ValueError(f"must be a mapping name -> ... (got {type(v).__name__})")
        if not v:
            raise ValueError("must not be empty")
        return v


@dataclass(frozen=True)
class Case:
    """A loaded case: its instance plus where it comes from and the raw mapping."""

    name: str
    instance: Instance
    source: str | None = None
    description: str | None = None
    path: Path | None = None
    raw: dict = field(default_factory=dict, repr=False)
    #: derived scenarios by name (a misreport, a user leaving or joining, new capacities)
    variants: dict[str, Instance] = field(default_factory=dict, repr=False)
    #: the scheduler's policy named by the case (``None``: not given)
    policy: str | None = None
    #: resource -> unit (``cores``, ``bytes``, ...; a resource left out has no unit)
    units: dict[str, str] = field(default_factory=dict)
    #: queue -> resource -> amount a reporter expected (queue cases of bug reports)
    user_expectation: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)
    #: ``observed`` or ``backlogged`` (then ``instance`` is the backlogged one, ``observed`` the requests as given)
    demand: str = "observed"
    observed: Instance | None = field(default=None, repr=False)
    expect: list[ExpectSpec] = field(default_factory=list, repr=False)
    claims: list[ClaimSpec] = field(default_factory=list, repr=False)
    errata: list[ErratumSpec] = field(default_factory=list, repr=False)
    #: the policy's own options (:attr:`CaseSpec.settings`)
    settings: dict[str, Any] = field(default_factory=dict, repr=False)
    #: the cluster at one scheduling cycle (a ``fairalloc.engines.online.ClusterState``), or ``None``
    cycle: Any = field(default=None, repr=False)

    def scenario(self, variant: str | None) -> Instance:
        """The case's instance, or the named variant of it."""
        return self.instance if variant is None else self.variants[variant]

    def demanded(self, demand: str | None) -> Instance:
        """The case's instance for ``demand`` (``observed`` or ``backlogged``; ``None``: as the case says)."""
        if demand is None or demand == self.demand:
            return self.instance
        if demand == "backlogged":
            return self.instance.backlogged()
        return self.observed if self.observed is not None else self.instance


# -- YAML ---------------------------------------------------------------------------------------


class _Refused(yaml.MarkedYAMLError):
    """A document fairalloc will not read (too deep, too many nodes, a number too long)."""


_CParser = getattr(getattr(yaml, "_yaml", None), "CParser", None)


# a base chosen at run time (libyaml's parser when PyYAML was built with it) is beyond a static checker
class _LibyamlLoader(Composer, _CParser or object, SafeConstructor, Resolver):  # type: ignore[misc]
    """libyaml's parser (C, twice as fast on a large case) under PyYAML's own composer: the composer
    stays Python so that :class:`CaseLoader` checks depth and size while the document is built
    (libyaml's composer recurses in C, where a deep document would overflow the stack)."""

    def __init__(self, stream):
        _CParser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)


class CaseLoader(_LibyamlLoader if _CParser is not None else yaml.SafeLoader):  # type: ignore[misc]  # as above
    """PyYAML's safe loader (no tag builds a Python object), reading numbers as YAML 1.2 does
    (``1e-9`` and ``1E+3`` are floats, not text), refusing integers of more than
    :data:`~fairalloc.core.limits.MAX_EXACT_DIGITS` digits and documents nested deeper than
    :data:`~fairalloc.core.limits.MAX_YAML_DEPTH` or of more than :data:`~fairalloc.core.limits.MAX_YAML_NODES`
    nodes while they are composed (before any recursion or object can blow up).  Case, workload and
    trace files are all read with it (:func:`read_yaml_file`).
    """

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = self._nodes = 0
        #: aliases composed: without any, the counts above are the expanded ones already
        self.aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
        self._depth += 1
        self._nodes += 1
        try:
            # both classes named: libyaml's check_event compares classes exactly, not by isinstance
            if self._depth > limits.MAX_YAML_DEPTH and self.check_event(
                yaml.SequenceStartEvent, yaml.MappingStartEvent
            ):
                raise _Refused(
                    problem=f"nested deeper than {limits.MAX_YAML_DEPTH} levels "
                    f"(fairalloc reads at most {limits.MAX_YAML_DEPTH})",
                    problem_mark=self.peek_event().start_mark,
                )
            if self._nodes > limits.MAX_YAML_NODES:
                raise _Refused(
                    problem=f"more than {limits.MAX_YAML_NODES:,} YAML nodes "
                    f"(fairalloc reads at most {limits.MAX_YAML_NODES:,} per file)",
                    problem_mark=self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node, deep=False):
        """PyYAML's, with a scalar its constructor cannot read (``2001-13-45`` resolved as a date,
        ``!!int x``) refused at its line instead of a Python exception."""
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, KeyError, AttributeError, TypeError, OverflowError) as exc:
            kind = str(node.tag).rpartition(":")[2]
            why = f" ({one_line(exc, 100)})" if isinstance(exc, ValueError) else ""  # the others say nothing
            raise _Refused(
                problem=f"{excerpt(node.value)} is not a valid {kind}{why}",
                problem_mark=node.start_mark,
            ) from None

    def construct_yaml_int(self, node):
        digits = len(node.value.replace("_", "").lstrip("+-"))
        if digits > limits.MAX_EXACT_DIGITS:  # Python refuses int() of 4300+ digits; far less is useful
            raise _Refused(
                problem=f"a number of {digits:,} digits (fairalloc reads at most {limits.MAX_EXACT_DIGITS})",
                problem_mark=node.start_mark,
            )
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node):
        """A float as written: one whose digits are not all zero but that float64 reads as 0
        (``1e-400``), or a finite one it reads as infinite (``1e400``), is refused here, where the
        line is known; afterwards it would be a silent 0 or an infinity."""
        value = super().construct_yaml_float(node)
        written = node.value.lower()
        mantissa = re.split("e", written)[0]
        vanished = value == 0 and re.search("[1-9]", mantissa)
        if vanished or (math.isinf(value) and "inf" not in written):
            raise _Refused(
                problem=f"the number {node.value[: limits.MAX_EXCERPT]} is beyond what a float holds "
                f"(it would read as {value})",
                problem_mark=node.start_mark,
            )
        return value


CaseLoader.add_constructor("tag:yaml.org,2002:int", CaseLoader.construct_yaml_int)
CaseLoader.add_constructor("tag:yaml.org,2002:float", CaseLoader.construct_yaml_float)
# YAML 1.2 floats: PyYAML (YAML 1.1) reads 1e-9 and 1.5e3 as text; the 1.1 forms stay as they are
CaseLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return node.value
    return []


def _line(node) -> str:
    return f"line {node.start_mark.line + 1}: " if node.start_mark is not None else ""


def _refuse_expansions(root, where: str) -> None:
    """Count the nodes and levels of the document with its aliases expanded, without expanding
    them: one pass over the composed graph, memoized per node (so a "billion laughs" document of a
    few hundred bytes is refused in microseconds), iterative (no recursion however deep)."""
    size: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, levels) once expanded
    entered: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            entered.discard(key)
            sizes = [size[id(c)] for c in _children(node)]
            nodes = 1 + sum(n for n, _ in sizes)
            levels = (not isinstance(node, yaml.ScalarNode)) + max((d for _, d in sizes), default=0)
            if nodes > limits.MAX_YAML_NODES:
                raise CaseError(
                    f"{where}: {_line(node)}expands to more than {limits.MAX_YAML_NODES:,} YAML "
                    f"nodes through its aliases (fairalloc reads at most "
                    f"{limits.MAX_YAML_NODES:,} per file)"
                )
            if levels > limits.MAX_YAML_DEPTH:
                raise CaseError(
                    f"{where}: {_line(node)}nested deeper than {limits.MAX_YAML_DEPTH} levels "
                    f"once its aliases are expanded (fairalloc reads at most {limits.MAX_YAML_DEPTH})"
                )
            size[key] = (nodes, levels)
            continue
        if key in size:
            continue
        if key in entered:
            raise CaseError(
                f"{where}: {_line(node)}an alias refers to a node that contains it "
                f"(a recursive structure; fairalloc files are plain data)"
            )
        entered.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)


def _key(loader, key_node):
    """What a key names: its text, or for a number the number's text (``0x1`` and ``1`` are both '1')."""
    if not isinstance(key_node, yaml.ScalarNode):
        return "?"
    if key_node.tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        value = loader.construct_object(key_node)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    return key_node.value


def _refuse_duplicate_keys(root, where: str, loader) -> None:
    """PyYAML keeps the last of two equal keys silently; a case with two users 'A' is an error."""
    seen_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, tuple[str | int, ...]]] = [(root, ())]  # iterative: no recursion however deep
    while stack:
        node, path = stack.pop()
        if id(node) in seen_nodes:  # aliases may share (or nest) nodes
            continue
        seen_nodes.add(id(node))
        below: list[tuple[yaml.Node, tuple[str | int, ...]]] = []
        if isinstance(node, yaml.MappingNode):
            lines: dict[str, int] = {}
            for key_node, value_node in node.value:
                key = _key(loader, key_node)
                line = key_node.start_mark.line + 1
                if key in lines:
                    raise CaseError(
                        f"{field_path(path + (key,))}: duplicate key (lines {lines[key]} and {line} of {where})"
                    )
                lines[key] = line
                below.append((value_node, path + (key,)))
        elif isinstance(node, yaml.SequenceNode):
            below = [(item, path + (k,)) for k, item in enumerate(node.value)]
        stack.extend(reversed(below))  # document order


def _construct(loader, node, where: str) -> Any:
    if loader.aliases:
        _refuse_expansions(node, where)
    _refuse_duplicate_keys(node, where, loader)
    return loader.construct_document(node)


def _read_yaml(text: str, where: str) -> Any:
    """Parse with :class:`CaseLoader` (PyYAML's *safe* loader), refusing duplicate keys, documents
    too deep or too large once their aliases are expanded, and recursive aliases; every problem is
    one :class:`CaseError` naming ``where`` (and the line)."""
    return _read_yaml_documents(text, where, single=True)


def read_yaml_documents(text: str, where: str) -> list[Any]:
    """Every document of a multi-document YAML text (``---`` between them; empty ones left out),
    read as safely as a case file (:func:`_read_yaml`)."""
    return [d for d in _read_yaml_documents(text, where, single=False) if d is not None]


def _read_yaml_documents(text: str, where: str, single: bool) -> Any:
    if _JSON_START.match(text):
        try:
            data = _read_json(text)
        except (_NotPlain, ValueError, RecursionError):  # not JSON, or beyond plain data: read as YAML
            pass
        else:
            return data if single else [data]
    if _CParser is not None:
        try:
            documents = _read_plain(text)
        except Exception:  # anything beyond plain data, or any refusal: the composer says it, as before
            pass
        else:
            if not single:
                return documents
            if len(documents) <= 1:
                return documents[0] if documents else None
    return _compose_documents(text, where, single)


#: where a JSON text starts (after a byte-order mark and white space): an object or an array
_JSON_START = re.compile(r"\ufeff?[ \t\r\n]*[{\[]")


def _read_json(text: str) -> Any:
    """The data of a JSON text (JSON is YAML: the same data :func:`_read_plain` builds from it),
    read by the standard library's C decoder, when the text stays within what fairalloc reads
    (:func:`_json_keys`) and has no duplicate key.  Anything else raises: ``ValueError`` for a text
    that is not JSON, :class:`_NotPlain` for one beyond plain data, and the YAML reader reads the
    text again, with its messages (a duplicate key's lines, a number's line).

    Why: libyaml's parser events cost about 10x ``json.load`` on a 100,000-queue JSON case.  The C
    decoder keeps the last of two equal keys silently, and an ``object_pairs_hook`` to see them
    costs 0.7x ``json.load`` more; instead the keys the text writes (its colons outside strings)
    are counted with the bounds and compared with the keys the objects kept (an ``object_hook``
    that adds their lengths, nearly free).  Cost: O(n) in the text's length, memory the data's
    plus a few byte masks of the text.
    """
    text = text.removeprefix("\ufeff")
    written = _json_keys(text)
    if written is None:
        raise _NotPlain
    kept = 0

    def counted(mapping: dict[str, Any]) -> dict[str, Any]:
        nonlocal kept
        kept += len(mapping)
        return mapping

    data = json.loads(text, object_hook=counted, parse_constant=_json_constant)
    if kept < written:  # an object kept fewer keys than it was written with: a duplicate key
        raise _NotPlain
    return data


def _json_constant(name: str) -> float:
    """``NaN``, ``Infinity``: Python's JSON extensions, which YAML reads as text."""
    raise _NotPlain


#: digits of a number the C decoder may read as :class:`CaseLoader` does: more (an integer longer
#: than fairalloc reads, a float mantissa that overflows) are the YAML reader's to refuse; with
#: exponents of at most two digits, every float read is finite and non-zero unless written as zero
_JSON_DIGITS = min(limits.MAX_EXACT_DIGITS, 300)
#: a ``\\uXXXX`` escape of half a surrogate pair (libyaml refuses every surrogate escape; a whole
#: pair, an emoji written by ``json.dumps``, is JSON's to read)
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F]"
)
#: a character YAML does not allow, or one of its line breaks beyond ASCII (in a string, JSON reads
#: the character, YAML folds it into a space)
_NOT_JSON_ONLY = re.compile(f"{yaml.reader.Reader.NON_PRINTABLE.pattern}|[\x85\u2028\u2029]")
_BRACKET = np.zeros(256, np.int8)
_BRACKET[[ord("{"), ord("[")]], _BRACKET[[ord("}"), ord("]")]] = 1, -1


def _json_keys(text: str) -> int | None:
    """The number of keys the JSON ``text`` writes (its colons outside strings), or ``None`` when
    it is nested deeper than :data:`~fairalloc.core.limits.MAX_YAML_DEPTH`, may have more than
    :data:`~fairalloc.core.limits.MAX_YAML_NODES` nodes (an upper bound: every node but the root is
    followed by ``,`` ``:`` or a closing bracket), has a run of more than :data:`_JSON_DIGITS`
    digits, an exponent of three digits or more, a lone surrogate escape (what the YAML reader
    refuses) or a character YAML does not allow or reads as a line break: a few vectorized passes
    over the bytes, no Python per character."""
    if "\x7f" in text or not text.isascii() and _NOT_JSON_ONLY.search(text):
        return None
    if "\\" in text:  # escapes: drop escaped backslashes, then escaped quotes (string bounds stay)
        if _LONE_SURROGATE.search(text):
            return None
        text = text.replace("\\\\", "").replace('\\"', "")
    data = np.frombuffer(text.encode("utf-8"), np.uint8)
    syntax = data[np.bitwise_xor.accumulate(data == ord('"')) == 0]  # outside strings (and closing quotes)
    keys, *ends = (int(np.count_nonzero(syntax == ord(c))) for c in ":,]}")
    steps = _BRACKET[syntax]
    depth = np.cumsum(steps[steps != 0], dtype=np.int32).max(initial=0)
    if depth > limits.MAX_YAML_DEPTH or keys + sum(ends) + 1 > limits.MAX_YAML_NODES:
        return None
    return keys if _json_numbers_bounded(data) else None


def _json_numbers_bounded(data: np.ndarray) -> bool:
    """No run of more than :data:`_JSON_DIGITS` digits in the bytes ``data``, and no run of three
    or more after ``e``, ``E`` or their sign (an exponent of three digits)."""
    digit = np.concatenate(([False], (data >= ord("0")) & (data <= ord("9")), [False]))
    edges = np.flatnonzero(digit[1:] != digit[:-1])
    starts, lengths = edges[::2], edges[1::2] - edges[::2]
    if lengths.max(initial=0) > _JSON_DIGITS:
        return False
    starts = starts[(lengths >= 3) & (starts >= 3)]  # a JSON text starts with a bracket
    signed = (data[starts - 1] == ord("+")) | (data[starts - 1] == ord("-"))
    e = starts - 1 - signed
    mantissa = data[e - 1]  # a digit or a point before the e: a number's ("queue-100" is a name's)
    in_number = ((mantissa >= ord("0")) & (mantissa <= ord("9"))) | (mantissa == ord("."))
    exponent = ((data[e] == ord("e")) | (data[e] == ord("E"))) & in_number
    return not exponent.any()


class _NotPlain(Exception):
    """What :func:`_read_plain` leaves to the composer: an anchor, an alias, a tag, a merge key, a
    key that is not a scalar, or what the composer refuses (a duplicate key, a document too deep or
    too large, a number out of range)."""


#: the tags :func:`_read_plain` builds; any other resolved tag (a merge key ``<<``, ``=``) is the composer's
_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp"))
_STR, _INT, _FLOAT = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
#: a decimal integer SafeConstructor reads as ``int(text)`` (no ``_``, base prefix, octal ``0`` or ``:``)
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")


def _read_plain(text: str) -> list[Any]:
    """Every document of ``text``, built straight from libyaml's parser events, when the text is
    plain data (what fairalloc, its importers and YAML dumpers write): no anchor, alias or tag.
    Anything else raises, and :func:`_compose_documents` reads the text again.

    Why: PyYAML's Python composer builds a node per scalar (and the checks then walk the nodes
    twice): reading a 100,000-queue case took 1.4x (flat) to 4x ``yaml.load`` with libyaml's
    ``CSafeLoader``, before the case was validated.  Measured alternatives: ``CSafeLoader`` itself
    with the checks in a constructor subclass composes in C, recursively (a deep document
    overflows the C stack, which is why :class:`CaseLoader` composes in Python) and still builds
    every node before PyYAML's generator-based constructor walks them; building the data straight
    from the events skips the nodes altogether and takes about half of ``CSafeLoader``'s time.
    Each event becomes its value at once, with :class:`CaseLoader`'s own resolver table and
    constructors, so the data is the same as the composer's; the composer's checks are made on the
    way (nesting and node counts, duplicate keys by :func:`_key`'s reading), and whatever they
    refuse is left to the composer, so every message is the composer's.  Cost: one pass over the
    events, O(1) per event, no recursion, memory the data's; the composer remains the reader of
    record for everything else (aliases above all, whose expansions it bounds) and refusals cost
    what they cost before.
    """
    loader = CaseLoader(text)
    try:
        get = loader.get_event
        get()  # the stream's start
        documents: list[Any] = []
        nodes = [0]  # counted over the whole stream, as CaseLoader.compose_node counts
        while not isinstance(get(), yaml.StreamEndEvent):  # a document's start
            documents.append(_plain_document(loader, get, nodes))
        return documents
    finally:
        loader.dispose()


def _plain_document(loader, get, nodes: list[int]) -> Any:
    """One document's data from its events (the document's start read), iteratively: a stack of the
    open mappings and sequences, each mapping with its keys as :func:`_key` reads them."""
    open_: list[list[Any]] = []  # [container, keys seen (mappings) or None, the pending key or _NO_KEY]
    root: Any = None
    while True:
        event = get()
        kind = type(event)
        if kind is yaml.ScalarEvent:
            value, text = _plain_scalar(loader, event)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if event.anchor is not None or event.tag is not None or len(open_) >= limits.MAX_YAML_DEPTH:
                raise _NotPlain
            value, text = ({} if kind is yaml.MappingStartEvent else []), None
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            open_.pop()
            continue
        elif kind is yaml.DocumentEndEvent:
            return root
        else:  # an alias
            raise _NotPlain
        nodes[0] += 1
        if nodes[0] > limits.MAX_YAML_NODES:
            raise _NotPlain
        if not open_:
            root = value
        else:
            _place(open_[-1], value, text)
        if text is None:
            open_.append([value, set() if kind is yaml.MappingStartEvent else None, _NO_KEY])


_NO_KEY = object()


def _place(frame: list[Any], value: Any, text: str | None) -> None:
    """``value`` into the open container ``frame``: a sequence's next item, a mapping's next key
    (``text``: the key as :func:`_key` reads it, ``None`` for a mapping or sequence) or its value."""
    container, seen, key = frame
    if seen is None:
        container.append(value)
    elif key is _NO_KEY:
        if text is None or text in seen:  # a complex key, or a duplicate: the composer's refusals
            raise _NotPlain
        seen.add(text)
        frame[2] = sys.intern(value) if type(value) is str else value  # request, cpu, ...: held once
    else:
        container[key] = value
        frame[2] = _NO_KEY


def _plain_scalar(loader, event) -> tuple[Any, str]:
    """A scalar's value as :class:`CaseLoader` constructs it, and its text as a key (:func:`_key`)."""
    if event.anchor is not None or event.tag is not None:
        raise _NotPlain
    text = event.value
    if not event.implicit[0]:  # quoted: text
        return text, text
    tag = loader.resolve(yaml.ScalarNode, text, event.implicit) if _WILDCARD or text[:1] in _RESOLVED else _STR
    if tag == _STR:
        return text, text
    if tag not in _PLAIN_TAGS:
        raise _NotPlain
    if tag == _INT and _DECIMAL.match(text) and len(text.lstrip("+-")) <= limits.MAX_EXACT_DIGITS:
        value = int(text)
    else:
        value = loader.yaml_constructors[tag](loader, yaml.ScalarNode(tag, text))
    return value, (str(value) if tag in (_INT, _FLOAT) and not isinstance(value, bool) else text)


#: the first characters for which CaseLoader's resolver may find a tag other than text (``name``,
#: ``q17``, ``cpu`` start with none of them: text at once); with a resolver for any first character
#: (none today) every scalar is resolved
_RESOLVED = frozenset(CaseLoader.yaml_implicit_resolvers)
_WILDCARD = None in _RESOLVED


def _compose_documents(text: str, where: str, single: bool) -> Any:
    loader = None
    try:
        loader = CaseLoader(text)
        if single:
            node = loader.get_single_node()
            return None if node is None else _construct(loader, node, where)
        documents = []
        while loader.check_node():
            documents.append(_construct(loader, loader.get_node(), where))
        return documents
    except _Refused as exc:
        mark = exc.problem_mark  # always set where fairalloc raises it
        line = f"line {mark.line + 1}: " if mark else ""
        raise CaseError(f"{where}: {line}{exc.problem}") from None
    except yaml.reader.ReaderError as exc:  # a control character (NUL, ...) in the text
        row = text.count("\n", 0, exc.position) + 1
        column = exc.position - text.rfind("\n", 0, exc.position)
        raise CaseError(
            f"{where}: not valid YAML: character #x{exc.character:04x} is not allowed "
            f"(a binary file?) at line {row}, column {column}"
        ) from None
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        line = f"line {mark.line + 1}: " if mark else ""
        tag = re.search(r"for the tag '([^']*)'", exc.problem or "")
        if tag:
            raise CaseError(
                f"{where}: {line}tag {excerpt(tag.group(1))} is refused; fairalloc files are plain "
                f"data (tags that build Python objects are refused)"
            ) from None
        raise CaseError(f"{where}: {line}{one_line(exc.problem, 200)}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CaseError(f"{where}: not valid YAML: {one_line(problem, 200)}{line}") from None
    except RecursionError:  # not expected (depth is bounded): still one line
        raise CaseError(f"{where}: nested too deeply for fairalloc to read") from None
    finally:
        if loader is not None:
            loader.dispose()


# -- validation -----------------------------------------------------------------------------------

_BRANCH_TAGS = ("float", "constrained-float", "dict[", "function-")
_MODEL_NAMES = {
    "UserSpec",
    "MisreportSpec",
    "NewUserSpec",
    "VariantSpec",
    "StepSpec",
    "ExpectSpec",
    "ClaimSpec",
    "ErratumSpec",
    "GroupSpec",
}  # union branches pydantic names in a location


def _model_at(loc, root: type[BaseModel] = CaseSpec) -> type[BaseModel]:
    """The schema model a location points into (to list its fields)."""
    model: Any = root
    for part in loc:
        if isinstance(model, type) and issubclass(model, BaseModel) and part in model.model_fields:
            model = model.model_fields[part].annotation
        while not (isinstance(model, type) and issubclass(model, BaseModel)):
            if typing.get_origin(model) is Annotated:
                model = typing.get_args(model)[0]
                continue
            args = [a for a in typing.get_args(model) if a is not type(None)]
            models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
            if models:
                model = models[0]
            elif args:
                model = args[-1]  # list[X] / dict[str, X]: the element type
            else:
                return root
    return model


def _pydantic_message(exc: ValidationError, root: type[BaseModel] | None = None) -> str:
    """One line for the most telling error: a misspelt field before the 'missing' it causes, and
    for a union (``weight``: number or mapping) the branch that matches what was written.  The
    offending input is quoted as a bounded :func:`~fairalloc.core.errors.excerpt`, and so is every key
    of the field path (an alias bomb or a megabyte of text never reaches the message).  ``root``: the
    schema validated (a case's by default; a workload file's has its own)."""

    def wrong_branch(err) -> bool:  # the number branch of a union given a mapping, or the
        given = err.get("input")  # text branch (a claim as text) given a mapping
        return isinstance(given, dict) and any(
            str(p).startswith(("float", "constrained-float")) or p == "str" for p in err["loc"]
        )

    errors = [e for e in exc.errors() if not wrong_branch(e)] or exc.errors()
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    err = errors[0]
    parts = [
        p
        for p in err["loc"]
        if isinstance(p, int)
        or not (str(p).startswith(_BRANCH_TAGS) or p in _MODEL_NAMES or p in ("str", "int", "[key]"))
    ]
    loc = field_path(parts)
    kind, msg = err["type"], err["msg"]
    if kind == "missing":
        return f"{loc}: required field is missing"
    if kind == "extra_forbidden":
        import difflib  # only for a message: not at every start

        key = shown(err["loc"][-1])
        fields = list(_model_at(err["loc"][:-1], root or CaseSpec).model_fields)
        close = difflib.get_close_matches(key, fields, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return f"{loc}: unknown field '{key}' (fields: {', '.join(fields)}){hint}"
    msg = one_line(msg.removeprefix("Value error, "), 300)
    msg = msg[0].lower() + msg[1:]
    if "input" in err and kind != "value_error":
        msg += f" (got {excerpt(err['input'])})"
    return f"{loc}: {msg}"


def parse_case(data: Any, where: str = "case") -> Case:
    """Validate a case mapping (as read from YAML) and build its :class:`Case`."""
    if not isinstance(where, str):
        raise TypeError(f"where: expected the name of the case's source (str), got {type(where).__name__}")
    if data is None:
        raise CaseError(f"{where}: empty file (a case needs 'resources' and 'users')")
    if not isinstance(data, dict):
        raise CaseError(f"{where}: a case must be a mapping with 'resources' and 'users' (got {type(data).__name__})")
    try:
        spec = CaseSpec.model_validate(data)
    except ValidationError as exc:
        raise CaseError(_pydantic_message(exc)) from None
    resources = list(spec.resources)
    known = set(resources)
    _refuse_too_many_cells(len(spec.users), len(resources), len(spec.variants))
    if spec.arrivals is not None:
        spec = spec.model_copy(update={"users": _in_arrival_order(spec.users, spec.arrivals)})

    def vector(mapping: dict[str, float], field_name: str, default: float) -> list[float]:
        for r in mapping:
            if r not in known:
                raise CaseError(f"{field_name}.{r}: {unknown('resource', r, resources)}")
        return [mapping.get(r, default) for r in resources]

    queue_case = _is_queue_case(spec)
    rows = _queue_rows(spec.users, resources, known) if queue_case else None
    demand, weights, bounds, shared = rows or _rows_one_by_one(spec, queue_case, vector)
    name = spec.name or (Path(where).stem if where != "case" else "case")
    instance = Instance(
        list(spec.resources.values()),
        demand,
        resources=resources,
        users=list(spec.users),
        weights=weights,
        max_tasks=bounds,
        shared=shared,
        name=name,
        groups=_hierarchy(spec) if spec.groups or any(u.group is not None for u in spec.users.values()) else None,
        queues=_queues(spec, vector) if queue_case else None,
    )
    observed = None
    if spec.demand == "backlogged":
        if not queue_case:
            raise CaseError("demand: backlogged is for queue cases (users with request, usage, guarantee, ...)")
        observed, instance = instance, instance.backlogged()
    variants = {}
    for k, variant in enumerate(spec.variants):
        where_v = f"variants[{k}]"
        if variant.name in variants:
            raise CaseError(f"{where_v}.name: duplicate variant name '{variant.name}'")
        variants[variant.name] = _derive(instance, variant, where_v, vector)
    case = Case(
        name,
        instance,
        spec.source,
        spec.description,
        raw=data,
        variants=variants,
        expect=spec.expect,
        errata=spec.errata,
        policy=None if spec.policy is None else _known_mechanism("policy", spec.policy),
        units=_units(spec, known, resources),
        user_expectation=_user_expectation(spec, instance, vector),
        demand=spec.demand,
        observed=observed,
        settings=spec.settings,
        cycle=None if spec.cycle is None else cycle_state(spec.cycle, instance, "cycle", spec.settings),
    )
    _check_expectations(case)
    return dataclasses.replace(case, claims=[_claim(c, f"claims[{k}]", case) for k, c in enumerate(spec.claims)])


def _rows_one_by_one(spec: CaseSpec, queue_case: bool, vector) -> tuple[list, list, list, list]:
    """The instance's rows (demand, weights, bounds, shared) user by user: the first wrong field raises."""
    demand: list[list[float]] = []
    weights: list[list[float] | float] = []  # per-resource rows, or one weight per user
    bounds: list[float] = []
    shared: list[float] = []
    per_resource = any(isinstance(u.weight, dict) for u in spec.users.values())
    for name, user in spec.users.items():
        if queue_case:
            row, bound = _request_row(name, user, vector)
            demand.append(row)
            bounds.append(bound)
        elif user.demand is None:
            raise CaseError(f"users.{name}.demand: required field is missing")
        else:
            demand.append(vector(user.demand, f"users.{name}.demand", 0.0))
        if isinstance(user.weight, dict):
            weights.append(vector(user.weight, f"users.{name}.weight", 1.0))
        else:
            w = 1.0 if user.weight is None else user.weight
            weights.append([w] * len(spec.resources) if per_resource else w)
        if not queue_case:
            bounds.append(np.inf if user.max_tasks is None else user.max_tasks)
        shared.append(np.nan if user.shared is None else user.shared)
    return demand, weights, bounds, shared


def _queue_rows(users: dict[str, UserSpec], resources: list[str], known: set[str]) -> tuple | None:
    """A queue case's rows (demand, weights, bounds, shared), as :func:`_rows_one_by_one` reads them,
    field by field over all queues; ``None`` when a queue gives a field a queue case does not take
    or names an unknown resource (the user-by-user read then names the first).

    Why: the user-by-user read made a few small lists and calls per queue, a third of loading a
    100,000-queue case after its validation.  O(n m) in list passes and one array per field."""
    specs = list(users.values())
    n, m = len(specs), len(resources)
    if list(itertools.chain.from_iterable(map(_NOT_IN_QUEUE_CASES, specs))).count(None) != 3 * n:
        return None
    at, requests = _mappings([u.request for u in specs])
    given = _amount_rows(requests, resources, known, 0.0)
    if given is None:
        return None
    demand = np.zeros((n, m))
    demand[at] = given
    weights = _weight_rows([u.weight for u in specs], resources, known)
    if weights is None:
        return None
    return demand, weights, (demand > 0).any(axis=1).astype(float), [np.nan] * n


#: the user fields a queue case refuses (:func:`_request_row` names the first)
_NOT_IN_QUEUE_CASES = operator.attrgetter("demand", "max_tasks", "shared")


def _weight_rows(given: list, resources: list[str], known: set[str]) -> list[float] | np.ndarray | None:
    """One weight per user, or a row per user where any weight is per resource (a number is then
    the same for every resource, a resource left out weighs 1); ``None`` for an unknown resource."""
    if not any(isinstance(w, dict) for w in given):
        return [1.0 if w is None else w for w in given]
    at, per_resource = _mappings(given)
    rows = _amount_rows(per_resource, resources, known, 1.0)
    if rows is None:
        return None
    out = np.array([1.0 if w is None or isinstance(w, dict) else w for w in given])[:, None].repeat(len(resources), 1)
    out[at] = rows
    return out


def _mappings(values: list) -> tuple[list[int], list[dict]]:
    """Where ``values`` are mappings (the others: not given, or a number), and those mappings."""
    mapping = list(map(isinstance, values, itertools.repeat(dict)))  # no Python per value
    return list(itertools.compress(range(len(values)), mapping)), list(itertools.compress(values, mapping))


def _amount_rows(mappings: list[dict], resources: list[str], known: set[str], missing: float, capacity=None):
    """``(len(mappings), m)``: each mapping's amounts as ``vector`` gives them (``missing`` where a
    resource is left out), from all mappings' keys and values at once; with ``capacity``, a
    percentage is read as its share of it (:func:`_plain_amounts`).  ``None`` when a mapping
    names an unknown resource.  O(total entries), no Python per entry but for a percentage."""
    column = dict(zip(resources, range(len(resources))))
    keys = list(itertools.chain.from_iterable(mappings))
    if not known.issuperset(keys):
        return None
    values = list(itertools.chain.from_iterable(map(dict.values, mappings)))
    if capacity is not None and str in set(map(type, values)):
        values = [_percent(v, capacity[r]) if isinstance(v, str) else v for r, v in zip(keys, values)]
    out = np.full((len(mappings), len(resources)), missing)
    row = np.repeat(np.arange(len(mappings)), list(map(len, mappings)))
    out[row, list(map(column.__getitem__, keys))] = np.array(values, dtype=float)
    return out


def _units(spec: CaseSpec, known: set, resources: list[str]) -> dict[str, str]:
    from fairalloc.core.units import UNITS

    for r, unit in spec.units.items():
        if r not in known:
            raise CaseError(f"units.{r}: {unknown('resource', r, resources)}")
        if unit not in UNITS:
            raise CaseError(f"units.{r}: {unknown('unit', unit, UNITS)}")
    return dict(spec.units)


def _user_expectation(spec: CaseSpec, instance: Instance, vector) -> dict[str, dict[str, float]]:
    out = {}
    for q, amounts in spec.user_expectation.items():
        check_known(f"user_expectation.{q}", "queue", q, instance.users)
        row = vector(
            _plain_amounts(amounts, dict(zip(instance.resources, instance.capacity))), f"user_expectation.{q}", np.nan
        )
        out[q] = {r: v for r, v in zip(instance.resources, row) if not np.isnan(v)}
    return out


def _plain_amounts(mapping: dict, capacity: dict) -> dict[str, float]:
    """Amounts with percentages read as shares of the capacity (an unknown resource is left for
    the caller to name)."""
    return {r: _percent(v, capacity.get(r, 0.0)) if isinstance(v, str) else v for r, v in mapping.items()}


def _percent(text: str, capacity: float) -> float:
    """A percentage ("50%") of ``capacity``."""
    return float(text.strip().rstrip("%")) / 100 * capacity


def _refuse_too_many_cells(n: int, m: int, variants: int) -> None:
    """A small file can name many users and many resources, each user demanding one of them: the
    instance is a dense users x resources array (and each variant a copy), so its size is bounded
    before anything is built."""
    cells = n * m
    if cells > limits.MAX_CASE_CELLS:
        raise CaseError(
            f"users: {n:,} users x {m:,} resources is {cells:,} demands; fairalloc builds at most "
            f"{limits.MAX_CASE_CELLS:,} per case"
        )
    if cells * (1 + variants) > limits.MAX_CASE_CELLS:
        raise CaseError(
            f"variants: {variants:,} variants of {n:,} users x {m:,} resources is "
            f"{cells * (1 + variants):,} demands; fairalloc builds at most "
            f"{limits.MAX_CASE_CELLS:,} per case (the case and its variants together)"
        )


def _is_queue_case(spec) -> bool:
    """A case is a queue case when a user or a group gives any queue field, or no user a demand."""
    if all(u.demand is None for u in spec.users.values()):
        return True
    return any(getattr(u, f) is not None for u in spec.users.values() for f in QUEUE_USER_FIELDS) or any(
        getattr(g, f) is not None for g in spec.groups.values() for f in QueueFields.model_fields
    )


def _request_row(name: str, user: UserSpec, vector) -> tuple[list[float], float]:
    """A queue's row: ``demand: request, max_tasks: 1`` (the Leontief reading), or an inactive
    queue's zero row with ``max_tasks: 0``."""
    for wrong in ("demand", "max_tasks", "shared"):
        if getattr(user, wrong) is not None:
            raise CaseError(
                f"users.{name}.{wrong}: a queue case gives each queue's request (and usage, guarantee, "
                f"limit, ...), not {wrong}; write request: {{...}}"
            )
    if user.request is None:
        return vector({}, f"users.{name}.request", 0.0), 0.0
    row = vector(user.request, f"users.{name}.request", 0.0)
    return row, (1.0 if any(v > 0 for v in row) else 0.0)


def _queues(spec, vector) -> Queues:
    """The queue configuration of every node, percentages read as shares of the capacity: field by
    field over all nodes (:func:`_queues_at_once`), or node by node where anything is not plainly
    right, which raises the first bad node's error as it always did."""
    queues = _queues_at_once(spec)
    return queues if queues is not None else _queues_one_by_one(spec, vector)


def _queues_at_once(spec) -> Queues | None:
    """:func:`_queues_one_by_one`'s configuration from a column per field over all nodes
    (:meth:`Queues.from_columns`), or ``None`` (an unknown resource, a value ``Queues.build`` refuses).

    Why: a mapping of eight fields per node for ``Queues.build`` to take apart again was a third of
    loading a 100,000-queue case after its validation.  O(n m) in list passes and one array per field."""
    capacity, known = dict(spec.resources), set(spec.resources)
    resources = list(spec.resources)
    # a row per node (a group's parent and no usage), then a column per field: one pass over the nodes
    groups = [tuple(getattr(g, f, None) for f in ("parent", *_NODE_FIELDS)) for g in spec.groups.values()]
    parent, weights, priority, *amounts = zip(*groups, *map(_USER_FIELDS, spec.users.values()))
    columns: dict[str, object] = {
        "parent": list(parent),
        "weight": [float(w) if isinstance(w, (int, float)) else 1.0 for w in weights],
        "priority": [0.0 if p is None else p for p in priority],
    }
    for (f, missing), values in zip(RESOURCE_FIELDS.items(), amounts):
        at, given = _mappings(list(values))
        rows = _amount_rows(given, resources, known, missing, capacity)
        if rows is None:
            return None
        columns[f] = (at, rows)
    return Queues.from_columns(resources, [*spec.groups, *spec.users], columns, list(spec.groups))


#: the fields of a node :func:`_queues_at_once` reads, after its parent (a user's ``group``)
_NODE_FIELDS = ("weight", "priority", *RESOURCE_FIELDS)
_USER_FIELDS = operator.attrgetter("group", *_NODE_FIELDS)


def _queues_one_by_one(spec, vector) -> Queues:
    """The queue configuration of every node, node by node: the first wrong node and field raises."""
    capacity = dict(spec.resources)  # once, not per node and field (100,000 queues: 600,000 copies)

    def amounts(mapping, where: str, missing: float):
        if mapping is None:
            return None
        return vector(_plain_amounts(mapping, capacity), where, missing)  # Queues.build makes the array

    nodes: dict[str, dict[str, object]] = {}
    for kind, table in (("groups", spec.groups), ("users", spec.users)):
        for name, node in table.items():
            entry: dict[str, object] = {"parent": node.parent if kind == "groups" else node.group}
            weight = node.weight if isinstance(node.weight, (int, float)) else None
            entry["weight"] = 1.0 if weight is None else float(weight)
            if node.priority is not None:
                entry["priority"] = node.priority
            for f, missing in RESOURCE_FIELDS.items():
                if f == "usage" and kind == "groups":
                    continue
                entry[f] = amounts(getattr(node, f), f"{kind}.{name}.{f}", missing)
            nodes[name] = entry
    return Queues.build(list(spec.resources), nodes, list(spec.groups))


def _hierarchy(spec) -> dict:
    """Parents and weights of every node; checks names and that the groups form a tree."""
    parent, weight = {}, {}
    for g, group in spec.groups.items():
        if g in spec.users:
            raise CaseError(f"groups.{g}: a group cannot have a user's name")
        if group.parent is not None and group.parent not in spec.groups:
            raise CaseError(f"groups.{g}.parent: {unknown('group', group.parent, spec.groups)}")
        parent[g], weight[g] = group.parent, group.weight
    for u, user in spec.users.items():
        if user.group is not None and user.group not in spec.groups:
            raise CaseError(f"users.{u}.group: {unknown('group', user.group, spec.groups)}")
        parent[u] = user.group
        weight[u] = user.weight if isinstance(user.weight, (int, float)) else 1.0
    check_depth({g: parent[g] for g in spec.groups}, "groups")  # walking up must reach the root, and soon
    return {"parent": parent, "weight": weight}


def _in_arrival_order(users: dict, arrivals: list) -> dict:
    order, seen = [], set()
    for k, name in enumerate(map(str, arrivals)):
        if name not in users:
            raise CaseError(f"arrivals[{k}]: {unknown('user', name, users)}")
        if name in seen:
            raise CaseError(f"arrivals[{k}]: user '{name}' arrives twice")
        seen.add(name)
        order.append(name)
    missing = [u for u in users if u not in seen]
    if missing:
        raise CaseError(f"arrivals: users {', '.join(missing)} never arrive (list every user once)")
    return {u: users[u] for u in order}


CLAIM_TEXT = re.compile(
    r"^\s*(?P<mechanism>\S+)\s+(?P<verb>satisfies|violates)\s+(?P<property>\S+)"
    r"(?:\s+for\s+user\s+(?P<user>\S+))?(?:\s+on\s+(?:variant\s+)?(?P<variant>\S+))?\s*$"
)


_EXPONENT = re.compile(r"[eE]\s*([-+]?[0-9][0-9_]*)")


def parse_exact(value, where: str) -> Fraction | float:
    """A number as written in a case: ints and texts like "100/31" or "2.52" exactly (no eval).

    Texts of more than :data:`~fairalloc.core.limits.MAX_EXACT_DIGITS` digits, and values outside the
    range fairalloc computes with (:data:`~fairalloc.core.limits.MIN_MAGNITUDE` to
    :data:`~fairalloc.core.limits.MAX_MAGNITUDE`, or 0), are refused before a Fraction is built (so
    ``'1e999999999'`` is one line, not a billion-digit number).
    """
    if isinstance(value, bool):
        raise CaseError(f"{where}: expected a number or a fraction like 100/31 (got {excerpt(value)})")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CaseError(f"{where}: must be finite (got {value})")
        return _in_range(value, value, where)
    if isinstance(value, str):
        text = value.strip()
        digits = sum(c.isdigit() for c in text)
        if digits > limits.MAX_EXACT_DIGITS:
            raise CaseError(
                f"{where}: a number of {digits:,} digits {excerpt(value)} (fairalloc reads at most "
                f"{limits.MAX_EXACT_DIGITS})"
            )
        exponent = _EXPONENT.search(text)
        if exponent and abs(int(exponent.group(1))) > 2 * limits.MAX_EXACT_DIGITS:
            # with at most MAX_EXACT_DIGITS digits before it, such an exponent puts any non-zero
            # value far outside [MIN_MAGNITUDE, MAX_MAGNITUDE]: refuse it (or read 0) without 10**exponent
            mantissa = text[: exponent.start()]
            if any(c.isdigit() for c in mantissa):  # else not a number: Fraction says so at once
                if mantissa.strip("+-0._"):
                    raise CaseError(f"{where}: {excerpt(value)} is {_RANGE}")
                text = mantissa  # 0e999999999 is 0
    try:
        number = Fraction(text if isinstance(value, str) else value)
    except (ValueError, ZeroDivisionError, TypeError):
        raise CaseError(f"{where}: expected a number or a fraction like 100/31 (got {excerpt(value)})") from None
    return _in_range(number, value, where)


_RANGE = (
    f"outside the range fairalloc computes with ({limits.MIN_MAGNITUDE:g} to "
    f"{limits.MAX_MAGNITUDE:g} for non-zero values)"
).replace("e+", "e")


def _in_range(number, value, where: str):
    low: float | Fraction = limits.MIN_MAGNITUDE
    high: float | Fraction = limits.MAX_MAGNITUDE
    if isinstance(number, Fraction):  # the bounds as written (1e-30), not their nearest doubles
        low, high = Fraction(repr(low)), Fraction(repr(high))
    if number != 0 and not low <= abs(number) <= high:
        raise CaseError(f"{where}: {excerpt(value)} is {_RANGE}")
    return number


def _known_mechanism(where: str, name) -> str:
    from fairalloc.core import registry

    try:
        registry.get(str(name))
    except FairallocError as exc:
        raise CaseError(f"{where}: {str(exc).split(': ', 1)[1]}") from None
    return str(name)


def _check_expectations(case: Case) -> None:
    from fairalloc.core import registry

    for k, e in enumerate(case.expect):
        where = f"expect[{k}]"
        _known_mechanism(f"{where}.mechanism", e.mechanism)
        if e.method not in registry.METHODS:
            raise CaseError(f"{where}.method: {unknown('method', e.method, registry.METHODS)}")
        if e.variant is not None:
            check_known(f"{where}.variant", "variant", e.variant, list(case.variants))
        inst = case.scenario(e.variant)
        decided = e.admitted is not None or e.preempted is not None
        if not (e.tasks or e.prices or e.steps or e.allocation or e.shares or e.order is not None or decided):
            raise CaseError(
                f"{where}: expects nothing (give tasks, prices, steps, allocation, shares, order, admitted "
                "and/or preempted)"
            )
        if decided:
            _check_cycle_expectations(e, where, case)
        _check_queue_expectations(e, where, inst)
        for s_k, step in enumerate(e.steps):
            here = f"{where}.steps[{s_k}]"
            if step.k > inst.n:
                raise CaseError(f"{here}.k: step {step.k} but only {inst.n} users arrive")
            if step.M is not None:
                parse_exact(step.M, f"{here}.M")
            for u, v in step.tasks.items():
                check_known(f"{here}.tasks.{u}", "user", u, inst.users[: step.k])
                parse_exact(v, f"{here}.tasks.{u}")
        for u, v in e.tasks.items():
            check_known(f"{where}.tasks.{u}", "user", u, inst.users)
            parse_exact(v, f"{where}.tasks.{u}")
        for r, v in e.prices.items():
            check_known(f"{where}.prices.{r}", "resource", r, inst.resources)
            parse_exact(v, f"{where}.prices.{r}")


def _check_cycle_expectations(e: ExpectSpec, where: str, case: Case) -> None:
    """``admitted`` names waiting jobs and ``preempted`` running ones of the case's ``cycle``."""
    if case.cycle is None:
        raise CaseError(f"{where}: admitted and preempted need the case's 'cycle' (the jobs running and waiting)")
    if e.variant is not None:
        raise CaseError(f"{where}.variant: a cycle's expectation is of the case itself, not of a variant")
    for field_name, what, names, known in (
        ("admitted", "waiting job", e.admitted, case.cycle.pending),
        ("preempted", "running job", e.preempted, case.cycle.running),
    ):
        for k, name in enumerate(names or ()):
            check_known(f"{where}.{field_name}[{k}]", what, name, known)


def _check_queue_expectations(e: ExpectSpec, where: str, inst: Instance) -> None:
    """Names and numbers of ``allocation``, ``shares`` and ``order``; ``shares`` and ``order``
    need a mechanism that says them (a production policy)."""
    from fairalloc.core import registry

    for u, row in e.allocation.items():
        check_known(f"{where}.allocation.{u}", "user", u, inst.users)
        for r, v in row.items():
            check_known(f"{where}.allocation.{u}.{r}", "resource", r, inst.resources)
            parse_exact(v, f"{where}.allocation.{u}.{r}")
    nodes = [*inst.users, *([] if inst.queues is None else inst.queues.groups)]
    for u, v in e.shares.items():
        check_known(f"{where}.shares.{u}", "queue", u, nodes)
        parse_exact(v, f"{where}.shares.{u}")
    for k, u in enumerate(e.order or []):
        check_known(f"{where}.order[{k}]", "queue", u, nodes)
    mech = registry.get(e.mechanism)
    for what, flag in (("shares", e.shares), ("order", e.order is not None)):
        if flag and not getattr(mech, f"has_{what}", False):
            raise CaseError(f"{where}.{what}: {e.mechanism} does not give {what} of queues for their usage")


def _claim(claim, where: str, case: Case) -> ClaimSpec:
    from fairalloc.core import registry
    from fairalloc.core.vocabulary import property_names

    if isinstance(claim, str):
        match = CLAIM_TEXT.match(claim)
        if not match:
            raise CaseError(
                f"{where}: cannot read claim {excerpt(claim)} (write '<mechanism> satisfies|violates "
                f"<property> [for user U] [on variant V]')"
            )
        parts = match.groupdict()
        claim = ClaimSpec(
            mechanism=parts["mechanism"],
            property=parts["property"],
            holds=parts["verb"] == "satisfies",
            user=parts["user"],
            variant=parts["variant"],
        )
    _known_mechanism(f"{where}.mechanism", claim.mechanism)
    if claim.refutes is not None and claim.holds:
        raise CaseError(f"{where}.refutes: a refuted claim is a counterexample, so it states 'holds: false'")
    try:
        (prop,) = property_names(claim.property, registry.get(claim.mechanism).kind == "dynamic")
    except FairallocError as exc:
        raise CaseError(f"{where}.property: {str(exc).split(': ', 1)[1]}") from None
    if claim.variant is not None:
        check_known(f"{where}.variant", "variant", claim.variant, list(case.variants))
    if claim.user is not None:
        check_known(f"{where}.user", "user", claim.user, case.scenario(claim.variant).users)
    return claim.model_copy(update={"property": prop, "user": None if claim.user is None else str(claim.user)})


def _derive(instance: Instance, variant: VariantSpec, where: str, vector) -> Instance:
    kinds = [k for k in VARIANT_KINDS if getattr(variant, k) is not None]
    if len(kinds) != 1:
        raise CaseError(
            f"{where}: a variant makes exactly one change ({' | '.join(VARIANT_KINDS)}); "
            f"got {', '.join(kinds) or 'none'}"
        )

    def user(name, field_name):
        if str(name) not in instance.users:
            raise CaseError(f"{where}.{field_name}: {unknown('user', name, instance.users)}")
        return str(name)

    # exactly one change is set (checked above): each test below narrows it from None
    if variant.misreport is not None:
        return instance.with_demand(
            user(variant.misreport.user, "misreport.user"),
            vector(variant.misreport.demand, f"{where}.misreport.demand", 0.0),
        )
    if variant.remove_user is not None:
        return instance.without_user(user(variant.remove_user, "remove_user"))
    if variant.capacity is not None:
        vector(variant.capacity, f"{where}.capacity", 0.0)  # names checked with their path
        return instance.with_capacity(variant.capacity)
    if variant.usage is not None:
        if instance.queues is None:
            raise CaseError(f"{where}.usage: only a queue case has usage")
        usage = {}
        for u, amounts in variant.usage.items():
            usage[user(u, f"usage.{u}")] = np.array(vector(amounts, f"{where}.usage.{u}", 0.0))
        return instance.with_queues(instance.queues.with_usage(usage))
    new = variant.add_user
    assert new is not None, f"{where}: a variant of none of the kinds {VARIANT_KINDS}"
    if str(new.name) in instance.users:
        raise CaseError(f"{where}.add_user.name: duplicate user '{new.name}'")
    weight = (
        1.0
        if new.weight is None
        else (vector(new.weight, f"{where}.add_user.weight", 1.0) if isinstance(new.weight, dict) else new.weight)
    )
    return instance.with_user(
        str(new.name),
        vector(new.demand, f"{where}.add_user.demand", 0.0),
        weight=weight,
        max_tasks=np.inf if new.max_tasks is None else new.max_tasks,
        shared=np.nan if new.shared is None else new.shared,
    )


# -- files ----------------------------------------------------------------------------------------


def _library():
    return importlib_resources.files("fairalloc.case_library")


def bundled_cases() -> list[str]:
    """Names of the cases shipped with fairalloc (``cases/*.yaml``)."""
    return sorted(p.name[:-5] for p in _library().iterdir() if p.name.endswith(".yaml"))


def load_bundled(name: str) -> Case:
    """A bundled case by its name (:func:`bundled_cases`), never a file of the working directory."""
    if name not in bundled_cases():
        raise CaseError(f"case: {unknown('bundled case', name, bundled_cases())}")
    return _bundled(_library() / f"{name}.yaml")


def _bundled(candidate) -> Case:
    case = _parse_file(_read_yaml(candidate.read_text(encoding="utf-8"), candidate.name), candidate.name)
    return dataclasses.replace(case, path=Path(str(candidate)))


def read_yaml_text(text: str, where: str) -> Any:
    """A YAML text's data, read as safely as a case file (:func:`read_yaml_file`): the text of a
    file uploaded to the explorer, ``where`` its name in messages."""
    if len(text.encode("utf-8", "surrogatepass")) > limits.MAX_FILE_BYTES:
        raise CaseError(f"{where}: larger than {limits.MAX_FILE_BYTES // 2**20} MiB")
    if not text.strip():
        raise CaseError(f"{where}: empty file (a case needs 'resources' and 'users')")
    return _read_yaml(text, _file(where))


def as_instance(value: object, argument: str = "instance") -> Instance:
    """What the Python API takes as an instance: an :class:`Instance`, a loaded :class:`Case` (or
    anything holding one as ``.instance``), or a case mapping, read by :func:`parse_case` as if it
    came from a YAML file (so a mapping gets the file's checks, and its errors)."""
    if isinstance(value, Instance):
        return value
    inner = getattr(value, "instance", None)
    if isinstance(inner, Instance):
        return inner
    if isinstance(value, Mapping):
        return parse_case(dict(value), argument).instance
    raise TypeError(
        f"{argument}: expected an Instance, a Case (fairalloc.load_case) or a case mapping "
        f"(resources, users, ...), got {type(value).__name__}"
    )


def load_case(path_or_name: str | Path) -> Case:
    """Load a case from a YAML (or JSON) file, or a bundled case by name (see :func:`bundled_cases`)."""
    if not isinstance(path_or_name, (str, os.PathLike)):
        raise TypeError(
            f"path_or_name: expected a file path (str or os.PathLike) or a bundled case name, "
            f"got {type(path_or_name).__name__}" + (" (decode bytes first)" if isinstance(path_or_name, bytes) else "")
        )
    if not str(path_or_name).strip():
        raise CaseError("CASE: empty name (give a YAML file or a bundled case name)")
    path = Path(path_or_name)
    try:
        exists = path.exists()
    except (OSError, ValueError):  # a name too long, a NUL byte: read_yaml_file says why
        exists = True
    if not exists:
        candidate = _library() / (path.name if path.suffix == ".yaml" else f"{path.name}.yaml")
        if str(path_or_name) == path.name and candidate.is_file():
            return _bundled(candidate)
        hint = did_you_mean(path.name.removesuffix(".yaml"), bundled_cases()) or " (see 'fairalloc cases')"
        raise CaseError(f"{_file(path_or_name)}: no such file, and no bundled case of that name{hint}")
    case = _parse_file(read_yaml_file(path, "a case needs 'resources' and 'users'"), _file(path))
    return dataclasses.replace(case, path=path)


def _parse_file(data, where: str) -> Case:
    """:func:`parse_case` naming the file in every message: ``users.A.group: ... (in my.yaml)``."""
    try:
        return parse_case(data, where)
    except CaseError as exc:
        text = str(exc)
        if text.startswith(f"{where}: "):
            raise
        raise CaseError(f"{text} (in {where})") from None


def _file(path) -> str:
    """A file name for a message: as given, escaped when it is not printable (a newline in it)."""
    text = str(path)
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


_CHUNK = 2**20


def read_text_file(path: str | Path, needs: str, expected: str = "YAML") -> str:
    """A text file's contents; every problem is one :class:`CaseError` line naming the file
    (``needs`` says what an empty file lacks, ``expected`` what a binary file should have been).

    A regular file larger than :data:`~fairalloc.core.limits.MAX_FILE_BYTES` is refused before it is
    read; a device, a pipe or a FIFO (``/dev/zero``, ``<(...)``) is read in chunks up to that many
    bytes and then refused, so no input makes fairalloc read without end.
    """
    path = Path(path)
    where = _file(path)
    too_large = too_large_message(where)
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise CaseError(f"{where}: is a directory, not a file")
        if stat.S_ISREG(info.st_mode) and info.st_size > limits.MAX_FILE_BYTES:
            raise CaseError(too_large)
        with path.open("rb") as stream:
            text = read_limited(stream, too_large).decode("utf-8")
    except CaseError:
        raise
    except FileNotFoundError:
        raise CaseError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise CaseError(f"{where}: is a directory, not a file") from None
    except UnicodeDecodeError:
        raise CaseError(f"{where}: not a text file (expected {expected})") from None
    except OSError as exc:
        raise CaseError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL byte in the name
        raise CaseError(f"{where}: cannot read: {one_line(exc, 200)}") from None
    if not text.strip():
        raise CaseError(f"{where}: empty file ({needs})")
    return text


class Readable(typing.Protocol):
    """What :func:`read_limited` reads: a binary file, a pipe, an HTTP answer."""

    def read(self, size: int, /) -> bytes: ...


def read_limited(stream: Readable, too_large: str) -> bytes:
    """The bytes of ``stream`` (a file, a pipe, standard input, an HTTP answer), read in chunks up
    to :data:`~fairalloc.core.limits.MAX_FILE_BYTES`; more than that is the :class:`CaseError`
    ``too_large``, so no input makes fairalloc read without end."""
    chunks, size = [], 0
    while size <= limits.MAX_FILE_BYTES:
        chunk = stream.read(min(_CHUNK, limits.MAX_FILE_BYTES + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limits.MAX_FILE_BYTES:  # a device or a pipe (or a file that grew meanwhile)
        raise CaseError(too_large)
    return b"".join(chunks)


def too_large_message(where: str) -> str:
    """The one line for an input larger than fairalloc reads."""
    return (
        f"{where}: larger than {limits.MAX_FILE_BYTES // 2**20} MiB (fairalloc reads case, workload "
        f"and trace files of at most {limits.MAX_FILE_BYTES // 2**20} MiB)"
    )


def read_yaml_file(path: str | Path, needs: str) -> Any:
    """A YAML file's data, read safely (no object-building tags, no duplicate keys); every problem
    is one :class:`CaseError` line naming the file (``needs`` says what an empty file lacks)."""
    return _read_yaml(read_text_file(path, needs), _file(path))
