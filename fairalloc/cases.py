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
refused.  Every problem is a :class:`~fairalloc.errors.CaseError` whose message starts with the
exact field: ``users.B.demand.gpu: unknown resource 'gpu' (resources: cpu, mem)``.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import typing
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import CaseError, FairallocError, did_you_mean, unknown
from .instance import Instance

NonNegative = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
Positive = Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0)]


class UserSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    demand: dict[str, NonNegative]
    group: str | None = None          # hierarchies: the group this user belongs to
    weight: Positive | dict[str, Positive] | None = None
    max_tasks: NonNegative | None = None
    shared: Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0, le=1)] | None = None

    @field_validator("weight", mode="before")
    @classmethod
    def _weight_shape(cls, v):
        # one clear message instead of pydantic's two (number branch, mapping branch)
        if v is None or isinstance(v, dict):
            return v
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"must be a number or a mapping resource -> number (got {v!r})")
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"must be a finite number > 0 (got {v!r})")
        return v


class MisreportSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user: str | int
    demand: dict[str, NonNegative]


class NewUserSpec(UserSpec):
    name: str | int


class VariantSpec(BaseModel):
    """A derived scenario: exactly one change to the case's instance."""
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str | None = None
    misreport: MisreportSpec | None = None
    remove_user: str | int | None = None
    add_user: NewUserSpec | None = None
    capacity: dict[str, NonNegative] | None = None


VARIANT_KINDS = ("misreport", "remove_user", "add_user", "capacity")

Exact = int | float | str          # a number, or an exact value written as text: "100/31", "2.52"


class StepSpec(BaseModel):
    """Dynamic mechanisms: the level M and the task counts right after the k-th arrival."""
    model_config = ConfigDict(extra="forbid")
    k: Annotated[int, Field(strict=True, ge=1)]
    M: Exact | None = None
    tasks: dict[str, Exact] = {}


class ExpectSpec(BaseModel):
    """What a mechanism must compute on the case (or on one of its variants)."""
    model_config = ConfigDict(extra="forbid")
    mechanism: str
    variant: str | None = None
    method: str = "auto"
    tasks: dict[str, Exact] = {}
    prices: dict[str, Exact] = {}
    steps: list[StepSpec] = []
    #: relative tolerance: |computed - expected| <= tolerance * |expected| + abs_tolerance
    tolerance: Annotated[float, Field(strict=True, gt=0, lt=1e-2)] = 1e-6
    #: absolute tolerance, 0 unless the expectation states one (an expected 0 needs one, or exact 0)
    abs_tolerance: Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)] = 0.0
    note: str | None = None


class ClaimSpec(BaseModel):
    """A statement the properties engine checks: '<mechanism> satisfies|violates <property>'."""
    model_config = ConfigDict(extra="forbid")
    mechanism: str
    property: str
    holds: bool
    user: str | int | None = None          # check the property for this user
    variant: str | None = None
    budget: Annotated[int, Field(strict=True, gt=0)] = 300
    note: str | None = None
    #: a source states the opposite (that the property holds): where it says so. The case is then
    #: the counterexample, and reproduce reports the row as "claim does not hold".
    refutes: str | None = None


class ErratumSpec(BaseModel):
    """Where a source states a different number: what it says, where, and the true value."""
    model_config = ConfigDict(extra="forbid")
    where: str
    says: str
    value: str
    note: str | None = None


class GroupSpec(BaseModel):
    """A node of a hierarchy (H-DRF): its weight among its siblings and its parent group."""
    model_config = ConfigDict(extra="forbid")
    weight: Positive = 1.0
    parent: str | None = None


class CaseSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    source: str | None = None
    description: str | None = None
    resources: dict[str, NonNegative]
    users: dict[str, UserSpec]
    arrivals: list[str | int] | None = None   # arrival order (default: the order of 'users')
    groups: dict[str, GroupSpec] = {}         # hierarchies: internal nodes of the tree
    variants: list[VariantSpec] = []
    expect: list[ExpectSpec] = []
    claims: list[ClaimSpec | str] = []
    errata: list[ErratumSpec] = []

    @field_validator("resources", "users", mode="before")
    @classmethod
    def _names_are_text(cls, v):
        if not isinstance(v, dict):
            raise ValueError(f"must be a mapping name -> ... (got {type(v).__name__})")
        if not v:
            raise ValueError("must not be empty")
        for k in v:
            if isinstance(k, bool) or not isinstance(k, (str, int)) or str(k).strip() == "":
                raise ValueError(f"name {k!r} is not a valid name (use text or a whole number)")
        return {str(k): val for k, val in v.items()}


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
    expect: list[ExpectSpec] = field(default_factory=list, repr=False)
    claims: list[ClaimSpec] = field(default_factory=list, repr=False)
    errata: list[ErratumSpec] = field(default_factory=list, repr=False)

    def scenario(self, variant: str | None) -> Instance:
        """The case's instance, or the named variant of it."""
        return self.instance if variant is None else self.variants[variant]


# -- YAML ---------------------------------------------------------------------------------------

def _refuse_duplicate_keys(node, where: str, path: str = "", seen_nodes=None) -> None:
    """PyYAML keeps the last of two equal keys silently; a case with two users 'A' is an error."""
    seen_nodes = set() if seen_nodes is None else seen_nodes
    if id(node) in seen_nodes:              # aliases may share (or nest) nodes
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        lines: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
            field_name = f"{path}.{key}" if path else str(key)
            line = key_node.start_mark.line + 1
            if key in lines:
                raise CaseError(f"{field_name}: duplicate key (lines {lines[key]} and {line} of {where})")
            lines[key] = line
            _refuse_duplicate_keys(value_node, where, field_name, seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for k, item in enumerate(node.value):
            _refuse_duplicate_keys(item, where, f"{path}[{k}]", seen_nodes)


def _read_yaml(text: str, where: str) -> Any:
    """Parse with PyYAML's *safe* loader (no tag builds a Python object), refusing duplicate keys."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _refuse_duplicate_keys(node, where)
        return loader.construct_document(node)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        line = f"line {mark.line + 1}: " if mark else ""
        raise CaseError(f"{where}: {line}{exc.problem}; fairalloc files are plain data (tags that "
                        f"build Python objects are refused)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CaseError(f"{where}: not valid YAML: {problem}{line}") from None
    finally:
        loader.dispose()


# -- validation -----------------------------------------------------------------------------------

_BRANCH_TAGS = ("float", "constrained-float", "dict[", "function-")


def _model_at(loc) -> type[BaseModel]:
    """The schema model a location points into (to list its fields)."""
    model: Any = CaseSpec
    for part in loc:
        if isinstance(model, type) and issubclass(model, BaseModel) and part in model.model_fields:
            model = model.model_fields[part].annotation
        while not (isinstance(model, type) and issubclass(model, BaseModel)):
            args = [a for a in typing.get_args(model) if a is not type(None)]
            models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
            if models:
                model = models[0]
            elif args:
                model = args[-1]                # list[X] / dict[str, X]: the element type
            else:
                return CaseSpec
    return model


def _pydantic_message(exc: ValidationError) -> str:
    """One line for the most telling error: a misspelt field before the 'missing' it causes, and
    for a union (``weight``: number or mapping) the branch that matches what was written."""
    def wrong_branch(err) -> bool:          # the number branch of a union, given a mapping
        return isinstance(err.get("input"), dict) and any(
            str(p).startswith(("float", "constrained-float")) for p in err["loc"])

    errors = [e for e in exc.errors() if not wrong_branch(e)] or exc.errors()
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    err = errors[0]
    loc = ""
    for p in err["loc"]:
        if isinstance(p, int):
            loc += f"[{p}]"                 # list positions as variants[0]
        elif not str(p).startswith(_BRANCH_TAGS):
            loc += f".{p}" if loc else str(p)
    kind, msg = err["type"], err["msg"]
    if kind == "missing":
        return f"{loc}: required field is missing"
    if kind == "extra_forbidden":
        key = str(err["loc"][-1])
        fields = list(_model_at(err["loc"][:-1]).model_fields)
        close = difflib.get_close_matches(key, fields, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return f"{loc}: unknown field '{key}' (fields: {', '.join(fields)}){hint}"
    msg = msg.removeprefix("Value error, ")
    msg = msg[0].lower() + msg[1:]
    if "input" in err and kind != "value_error":
        msg += f" (got {err['input']!r})"
    return f"{loc}: {msg}"


def parse_case(data: Any, where: str = "case") -> Case:
    """Validate a case mapping (as read from YAML) and build its :class:`Case`."""
    if data is None:
        raise CaseError(f"{where}: empty file (a case needs 'resources' and 'users')")
    if not isinstance(data, dict):
        raise CaseError(f"{where}: a case must be a mapping with 'resources' and 'users' "
                        f"(got {type(data).__name__})")
    try:
        spec = CaseSpec.model_validate(data)
    except ValidationError as exc:
        raise CaseError(_pydantic_message(exc)) from None
    resources = list(spec.resources)
    known = set(resources)
    if spec.arrivals is not None:
        spec = spec.model_copy(update={"users": _in_arrival_order(spec.users, spec.arrivals)})

    def vector(mapping: dict[str, float], field_name: str, default: float) -> list[float]:
        for r in mapping:
            if r not in known:
                raise CaseError(f"{field_name}.{r}: {unknown('resource', r, resources)}")
        return [mapping.get(r, default) for r in resources]

    demand, weights, bounds, shared = [], [], [], []
    per_resource = any(isinstance(u.weight, dict) for u in spec.users.values())
    for name, user in spec.users.items():
        demand.append(vector(user.demand, f"users.{name}.demand", 0.0))
        if isinstance(user.weight, dict):
            weights.append(vector(user.weight, f"users.{name}.weight", 1.0))
        else:
            w = 1.0 if user.weight is None else user.weight
            weights.append([w] * len(resources) if per_resource else w)
        bounds.append(np.inf if user.max_tasks is None else user.max_tasks)
        shared.append(np.nan if user.shared is None else user.shared)
    name = spec.name or (Path(where).stem if where != "case" else "case")
    instance = Instance(list(spec.resources.values()), demand, resources=resources, users=list(spec.users),
                        weights=weights, max_tasks=bounds, shared=shared, name=name,
                        groups=_hierarchy(spec) if spec.groups else None)
    variants = {}
    for k, variant in enumerate(spec.variants):
        where_v = f"variants[{k}]"
        if variant.name in variants:
            raise CaseError(f"{where_v}.name: duplicate variant name '{variant.name}'")
        variants[variant.name] = _derive(instance, variant, where_v, vector)
    case = Case(name, instance, spec.source, spec.description, raw=data, variants=variants, expect=spec.expect,
                errata=spec.errata)
    _check_expectations(case)
    return dataclasses.replace(case, claims=[_claim(c, f"claims[{k}]", case) for k, c in enumerate(spec.claims)])


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
    for g in spec.groups:                    # walking up must reach the root
        seen, node = set(), g
        while node is not None:
            if node in seen:
                raise CaseError(f"groups.{g}.parent: the groups form a cycle")
            seen.add(node)
            node = parent[node]
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


CLAIM_TEXT = re.compile(r"^\s*(?P<mechanism>\S+)\s+(?P<verb>satisfies|violates)\s+(?P<property>\S+)"
                        r"(?:\s+for\s+user\s+(?P<user>\S+))?(?:\s+on\s+(?:variant\s+)?(?P<variant>\S+))?\s*$")


def parse_exact(value, where: str) -> Fraction | float:
    """A number as written in a case: ints and texts like "100/31" or "2.52" exactly (no eval)."""
    if isinstance(value, bool):
        raise CaseError(f"{where}: expected a number or a fraction like 100/31 (got {value!r})")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CaseError(f"{where}: must be finite (got {value})")
        return value
    try:
        return Fraction(value.strip() if isinstance(value, str) else value)
    except (ValueError, ZeroDivisionError, TypeError):
        raise CaseError(f"{where}: expected a number or a fraction like 100/31 (got {value!r})") from None


def _known(where: str, what: str, name, known) -> str:
    if str(name) not in known:
        raise CaseError(f"{where}: {unknown(what, name, known)}")
    return str(name)


def _known_mechanism(where: str, name) -> str:
    from . import registry
    try:
        registry.get(str(name))
    except FairallocError as exc:
        raise CaseError(f"{where}: {str(exc).split(': ', 1)[1]}") from None
    return str(name)


def _check_expectations(case: Case) -> None:
    from . import registry
    for k, e in enumerate(case.expect):
        where = f"expect[{k}]"
        _known_mechanism(f"{where}.mechanism", e.mechanism)
        if e.method not in registry.METHODS:
            raise CaseError(f"{where}.method: {unknown('method', e.method, registry.METHODS)}")
        if e.variant is not None:
            _known(f"{where}.variant", "variant", e.variant, list(case.variants))
        inst = case.scenario(e.variant)
        if not e.tasks and not e.prices and not e.steps:
            raise CaseError(f"{where}: expects nothing (give tasks, prices and/or steps)")
        for s_k, step in enumerate(e.steps):
            here = f"{where}.steps[{s_k}]"
            if step.k > inst.n:
                raise CaseError(f"{here}.k: step {step.k} but only {inst.n} users arrive")
            if step.M is not None:
                parse_exact(step.M, f"{here}.M")
            for u, v in step.tasks.items():
                _known(f"{here}.tasks.{u}", "user", u, inst.users[: step.k])
                parse_exact(v, f"{here}.tasks.{u}")
        for u, v in e.tasks.items():
            _known(f"{where}.tasks.{u}", "user", u, inst.users)
            parse_exact(v, f"{where}.tasks.{u}")
        for r, v in e.prices.items():
            _known(f"{where}.prices.{r}", "resource", r, inst.resources)
            parse_exact(v, f"{where}.prices.{r}")


def _claim(claim, where: str, case: Case) -> ClaimSpec:
    from . import registry
    from .properties import property_names
    if isinstance(claim, str):
        match = CLAIM_TEXT.match(claim)
        if not match:
            raise CaseError(f"{where}: cannot read claim {claim!r} (write '<mechanism> satisfies|violates "
                            f"<property> [for user U] [on variant V]')")
        parts = match.groupdict()
        claim = ClaimSpec(mechanism=parts["mechanism"], property=parts["property"],
                          holds=parts["verb"] == "satisfies", user=parts["user"], variant=parts["variant"])
    _known_mechanism(f"{where}.mechanism", claim.mechanism)
    if claim.refutes is not None and claim.holds:
        raise CaseError(f"{where}.refutes: a refuted claim is a counterexample, so it states 'holds: false'")
    try:
        (prop,) = property_names(claim.property, registry.get(claim.mechanism).kind == "dynamic")
    except FairallocError as exc:
        raise CaseError(f"{where}.property: {str(exc).split(': ', 1)[1]}") from None
    if claim.variant is not None:
        _known(f"{where}.variant", "variant", claim.variant, list(case.variants))
    if claim.user is not None:
        _known(f"{where}.user", "user", claim.user, case.scenario(claim.variant).users)
    return claim.model_copy(update={"property": prop, "user": None if claim.user is None else str(claim.user)})


def _derive(instance: Instance, variant: VariantSpec, where: str, vector) -> Instance:
    kinds = [k for k in VARIANT_KINDS if getattr(variant, k) is not None]
    if len(kinds) != 1:
        raise CaseError(f"{where}: a variant makes exactly one change ({' | '.join(VARIANT_KINDS)}); "
                        f"got {', '.join(kinds) or 'none'}")
    kind = kinds[0]

    def user(name, field_name):
        if str(name) not in instance.users:
            raise CaseError(f"{where}.{field_name}: {unknown('user', name, instance.users)}")
        return str(name)
    if kind == "misreport":
        return instance.with_demand(user(variant.misreport.user, "misreport.user"),
                                    vector(variant.misreport.demand, f"{where}.misreport.demand", 0.0))
    if kind == "remove_user":
        return instance.without_user(user(variant.remove_user, "remove_user"))
    if kind == "capacity":
        vector(variant.capacity, f"{where}.capacity", 0.0)      # names checked with their path
        return instance.with_capacity(variant.capacity)
    new = variant.add_user
    if str(new.name) in instance.users:
        raise CaseError(f"{where}.add_user.name: duplicate user '{new.name}'")
    weight = 1.0 if new.weight is None else (vector(new.weight, f"{where}.add_user.weight", 1.0)
                                              if isinstance(new.weight, dict) else new.weight)
    return instance.with_user(str(new.name), vector(new.demand, f"{where}.add_user.demand", 0.0), weight=weight,
                              max_tasks=np.inf if new.max_tasks is None else new.max_tasks,
                              shared=np.nan if new.shared is None else new.shared)


# -- files ----------------------------------------------------------------------------------------

def _library():
    return importlib_resources.files("fairalloc.case_library")


def bundled_cases() -> list[str]:
    """Names of the cases shipped with fairalloc (``cases/*.yaml``)."""
    return sorted(p.name[:-5] for p in _library().iterdir() if p.name.endswith(".yaml"))


def load_case(path_or_name: str | Path) -> Case:
    """Load a case from a YAML file, or a bundled case by name (see :func:`bundled_cases`)."""
    if not str(path_or_name).strip():
        raise CaseError("CASE: empty name (give a YAML file or a bundled case name)")
    path = Path(path_or_name)
    if not path.exists():
        candidate = _library() / (path.name if path.suffix == ".yaml" else f"{path.name}.yaml")
        if str(path_or_name) == path.name and candidate.is_file():
            text = candidate.read_text(encoding="utf-8")
            case = parse_case(_read_yaml(text, candidate.name), candidate.name)
            return dataclasses.replace(case, path=Path(str(candidate)))
        hint = did_you_mean(path.name.removesuffix(".yaml"), bundled_cases()) or " (see 'fairalloc cases')"
        raise CaseError(f"{path_or_name}: no such file, and no bundled case of that name{hint}")
    case = parse_case(read_yaml_file(path, "a case needs 'resources' and 'users'"), str(path))
    return dataclasses.replace(case, path=path)


def read_yaml_file(path: str | Path, needs: str) -> Any:
    """A YAML file's data, read safely (no object-building tags, no duplicate keys); every problem
    is one :class:`CaseError` line naming the file (``needs`` says what an empty file lacks)."""
    path = Path(path)
    if not path.exists():
        raise CaseError(f"{path}: no such file")
    if path.is_dir():
        raise CaseError(f"{path}: is a directory, not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CaseError(f"{path}: not a text file (expected YAML)") from None
    except OSError as exc:
        raise CaseError(f"{path}: cannot read: {exc.strerror}") from None
    if not text.strip():
        raise CaseError(f"{path}: empty file ({needs})")
    return _read_yaml(text, str(path))
