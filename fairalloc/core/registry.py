"""The mechanism interface and the registry of mechanisms.

A mechanism has a ``name``, builds its declarative ``program(instance)`` and returns
``allocate(instance, method="auto" | "program" | "fast")``.  Every tool of fairalloc (the CLI,
and later properties, the verifier, the explorer) takes a registered mechanism by name, so a
mechanism a user registers gets all of them.

Register your own with the decorator::

    @fairalloc.register("my-drf")
    class MyDRF(fairalloc.Mechanism):
        summary = "DRF that ..."
        def program(self, instance): ...

or, from an installed package, with an entry point in the group ``fairalloc.mechanisms``
(``my-drf = mypkg.module:MyDRF``).  An entry point that fails to load (or does not give a
:class:`Mechanism`) is skipped with a :class:`~fairalloc.core.errors.FairallocWarning`; the others load.

A *family* of mechanisms (alpha-fairness, FDS) is registered once and named with its parameters
after a colon: ``alpha-fair:2``, ``alpha-fair:inf``, ``fds:0.5:3``.  Such a class sets
``parameters`` (how they are written, for help texts) and implements :meth:`Mechanism.with_parameters`.
Families are left out of the "every mechanism" defaults, which would not know which member to use.

Every mechanism also drives the simulator (``fairalloc simulate --scheduler NAME``) by its task-offer
face: its own ``offers()`` where it has one, else a generic adapter (:mod:`fairalloc.engines.offers`).
Schedulers with offers and no static answer (``fifo``, ``slots:K``, ...) are of the ``online`` kind.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import warnings
import weakref
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

from fairalloc.core.allocation import Allocation
from fairalloc.core.backends import Program
from fairalloc.core.certificate import certify
from fairalloc.core.errors import CaseError, FairallocError, FairallocWarning, SolverError, UnknownNameError, unknown
from fairalloc.core.instance import Instance

METHODS = ("auto", "program", "fast")
#: what a mechanism is (``Mechanism.kind``): allocates once, at every arrival, or schedules tasks over time
KINDS = ("static", "dynamic", "online")
#: how :meth:`Mechanism.allocate` may rescale an instance before solving it (``Mechanism.scaling``)
SCALINGS = ("none", "resources", "users")

#: the ``allocate`` functions that certify their answer (``Mechanism.allocate`` and the wrappers
#: :meth:`Mechanism.__init_subclass__` puts around a subclass's own), so none is wrapped twice
_CERTIFYING: weakref.WeakSet[Callable[..., Allocation]] = weakref.WeakSet()


class Mechanism:
    """Base class.  Subclasses set ``name`` and ``summary``, implement :meth:`program`, and
    :meth:`fast` where an exact fast algorithm exists."""

    name: str = ""
    summary: str = ""
    #: a second line for readers (the explorer): what it promises, or how it differs from DRF, in plain words
    about: str = ""
    #: the number of the section of docs/formulations.md that explains it ("1", "9.2"); "" for a plug-in
    section: str = ""
    #: "static" mechanisms allocate once; "dynamic" ones allocate at every arrival; "online" ones are
    #: schedulers of tasks over time with no static answer (their face: ``offers()``, fairalloc.engines.offers)
    kind: str = "static"
    #: for a family: how its parameters are written after the name (e.g. "ALPHA"); "" otherwise
    parameters: str = ""
    #: the units the mechanism's answer does not depend on, so that :meth:`allocate` solves the
    #: program on a well-scaled copy of the instance (:func:`scaled_instance`) and maps the
    #: answer back: ``"resources"`` (every resource measured in units of its capacity: prices
    #: become ``p_j R_j``), ``"users"`` (that, and every user's task measured in units of her
    #: per-task dominant share: ``x_i = x'_i / mu_i``), or ``"none"`` (the default: a plug-in's
    #: invariance is not known).  Solvers drop or mistreat coefficients far from 1 (HiGHS ignores
    #: matrix entries below 1e-9): an instance spanning 1e-18 .. 1e9 is solved wrong unscaled.
    scaling: str = "none"
    #: solve the fast path on the scaled instance too (a fast path that is itself an LP solver)
    scale_fast: bool = False
    #: the mechanism allocates to a queue case's inactive queues itself (else it never sees them)
    takes_inactive: bool = False
    #: the mechanism divides each resource separately by weight (Volcano, YARN), not one dominant
    #: share per user: ``fairalloc explain`` then compares queues resource by resource
    per_resource: bool = False
    #: a resource a queue names no guarantee of is guaranteed 0 (Kueue: a resource without
    #: ``nominalQuota`` is one it may only borrow), not left unguaranteed: ``guarantee_honoured`` and
    #: ``fairalloc explain`` then owe such a queue no multiple of a request that needs it
    zero_unguaranteed: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("allocate")
        if own is not None and own not in _CERTIFYING:
            # a subclass (a plug-in) that replaces allocate is certified all the same
            @functools.wraps(own)
            def allocate(
                self: Mechanism, instance: Instance, method: str = "auto", *args: Any, **kwargs: Any
            ) -> Allocation:
                return certify(own(self, instance, method, *args, **kwargs), self.name)

            _CERTIFYING.add(allocate)
            setattr(cls, "allocate", allocate)  # noqa: B010 (replacing a method: mypy refuses an assignment)

    def with_parameters(self, text: str) -> Mechanism:
        """The member of this family named ``<name>:<text>``."""
        raise UnknownNameError(f"mechanism: '{self.name}' takes no parameters (got '{self.name}:{text}')")

    @property
    def has_fast(self) -> bool:
        return type(self).fast is not Mechanism.fast

    @property
    def has_program(self) -> bool:
        return type(self).program is not Mechanism.program

    def refuse(self, instance: Instance) -> None:
        """Raise :class:`~fairalloc.core.errors.CaseError` if the mechanism refuses ``instance``
        (checked by :meth:`allocate` first, in the case's own units, before any rescaling)."""

    def program(self, instance: Instance) -> Program:
        raise FairallocError(f"method: {self.name} has no declarative program; use method='fast'")

    def fast(self, instance: Instance) -> Allocation:
        raise FairallocError(f"method: {self.name} has no fast path; use method='program'")

    def allocate(self, instance: Instance, method: str = "auto") -> Allocation:
        """The allocation by ``method``; certified (:func:`fairalloc.core.certificate.certify`) before
        it is returned: an answer violating a constraint is a :class:`SolverError`, never returned.

        ``auto`` takes the fast path where there is one; when it ends in a :class:`SolverError`
        (numerical trouble) and there is a program, the program's answer is returned, with the
        fast path's message in ``info["fast_path_failed"]``.

        The program (and a fast path with ``scale_fast``) is solved on the instance rescaled as
        :attr:`scaling` declares, and the answer mapped back.  Floating-point exceptions (an
        overflow on an extreme instance) raise no warning: what they spoil is not finite, and
        the certificate refuses it.
        """
        if not isinstance(method, str):
            raise TypeError(f"method: expected one of {', '.join(METHODS)} (str), got {type(method).__name__}")
        if method not in METHODS:
            raise UnknownNameError(f"method: {unknown('method', method, METHODS)}")
        self.refuse(instance)
        if instance.queues is not None and not self.takes_inactive:
            idle: np.ndarray = ~np.asarray((instance.demand > 0).any(axis=1))
            if idle.all():  # nobody asks for anything
                return certify(Allocation(instance, np.zeros(instance.n), self.name, method, "none"), self.name)
            if idle.any():  # inactive queues receive nothing: the others are the instance
                return certify(_padded(self.allocate(instance.only(~idle), method), instance, ~idle), self.name)
        fast = method == "fast" or (method == "auto" and self.has_fast)
        if method == "auto" and fast and self.has_program:
            try:
                return self._certified(instance, fast=True)
            except SolverError as trouble:  # numerical trouble on the fast path: the program decides
                allocation = self._certified(instance, fast=False)
                allocation.info["fast_path_failed"] = str(trouble)
                return allocation
        return self._certified(instance, fast)

    def _certified(self, instance: Instance, fast: bool) -> Allocation:
        how = self.scaling if (not fast or self.scale_fast) else "none"
        with np.errstate(all="ignore"):
            if how == "none":
                allocation = self.fast(instance) if fast else self.program(instance).solve()
            else:
                scaled, resource_unit, task_unit = scaled_instance(instance, how, self.name)
                answer = self.fast(scaled) if fast else self.program(scaled).solve()
                if not isinstance(answer, Allocation):
                    return certify(answer, self.name)
                tasks = np.asarray(answer.tasks, dtype=float) / task_unit
                prices = None if answer.prices is None else np.asarray(answer.prices, dtype=float) / resource_unit
                allocation = self.unscaled(instance, answer, tasks, prices)
        return certify(allocation, self.name)

    def unscaled(
        self, instance: Instance, scaled: Allocation, tasks: np.ndarray, prices: np.ndarray | None
    ) -> Allocation:
        """The allocation ``scaled`` (solved on the rescaled instance) on ``instance``, with its
        ``tasks`` and ``prices`` mapped back already.  The default keeps ``info`` as it is
        (quantities invariant under the scaling); a mechanism reporting a unit-dependent number
        overrides this to recompute it."""
        history = scaled.history
        # a dataclass instance (not a dataclass type) recording the steps: its instance is this one
        if dataclasses.is_dataclass(history) and not isinstance(history, type) and hasattr(history, "mu"):
            history = dataclasses.replace(history, instance=instance, mu=instance.per_task_dominant_share)
        return Allocation(
            instance,
            tasks,
            scaled.mechanism,
            scaled.method,
            scaled.solver,
            prices=prices,
            info=dict(scaled.info),
            certify=scaled.certify,
            history=history,
        )

    def __repr__(self) -> str:
        return f"<mechanism {self.name}>"


_CERTIFYING.add(Mechanism.allocate)


def _padded(allocation: Allocation, instance: Instance, keep: np.ndarray) -> Allocation:
    """An allocation of ``instance.only(keep)`` on ``instance``: nothing for the others."""
    tasks = np.zeros(instance.n)
    tasks[keep] = allocation.tasks
    amounts = None
    if allocation.amounts is not None:
        amounts = np.zeros((instance.n, instance.m))
        amounts[keep] = allocation.amounts
    return dataclasses.replace(allocation, instance=instance, tasks=tasks, amounts=amounts, certify=None)


def scaled_instance(instance: Instance, how: str, name: str = "mechanism") -> tuple[Instance, np.ndarray, np.ndarray]:
    """``(scaled, resource_unit, task_unit)``: ``instance`` with every resource measured in units
    of its capacity (``R'_j = 1``, ``D'_ij = D_ij / R_j``; a resource of capacity 0 is left as
    it is) and, for ``how == "users"``, every user's task in units of her per-task dominant share
    (``D''_i = D'_i / mu_i``, ``T''_i = mu_i T_i``, so ``x_i = x''_i / mu_i``).  Weights, shared
    quantities, groups and names are unchanged.  A price per unit of scaled resource ``j`` is
    ``p_j R_j``: divide by ``resource_unit``; divide scaled tasks by ``task_unit``.

    Refused with :class:`SolverError` when the scaled numbers leave float range (only an
    instance built through the Python API beyond the case limits can do that)."""
    if how not in SCALINGS:
        raise FairallocError(f"{name}: scaling must be one of {', '.join(SCALINGS)} (got '{how}')")
    R, D = instance.capacity, instance.demand
    resource_unit = np.where(R > 0, R, 1.0)
    task_unit = np.ones(instance.n)
    with np.errstate(all="ignore"):
        D = D / resource_unit
        T = instance.max_tasks
        if how == "users":
            task_unit = D.max(axis=1)
            D = D / task_unit[:, None]
            if T is not None:
                T = np.where(T > 0, T * task_unit, 0.0)
    if not (
        np.all(np.isfinite(D))
        and np.array_equal(D > 0, instance.demand > 0)
        and np.all(np.isfinite(task_unit) & (task_unit > 0))
    ):
        raise SolverError(
            f"{name}: the instance spans more orders of magnitude than float64 holds once its "
            f"demands are measured in shares of capacity; the answer would not be trusted"
        )
    scaled = Instance(
        np.where(R > 0, 1.0, 0.0),
        D,
        resources=instance.resources,
        users=instance._users,
        weights=instance.weights,
        max_tasks=T,
        shared=instance.shared,
        name=instance.name,
        validate=False,
        groups=instance.groups,
        queues=None if instance.queues is None else instance.queues.scaled(resource_unit),
    )
    return scaled, resource_unit, task_unit


def entry_points(*, group: str) -> Iterable[Any]:
    """:func:`importlib.metadata.entry_points` of ``group`` (a tenth of a second to import, so
    imported at the first look-up of a mechanism; tests replace this function)."""
    from importlib.metadata import entry_points as installed

    return installed(group=group)


_REGISTRY: dict[str, Mechanism] = {}
_entry_points_loaded = False
#: the package of the built-in mechanisms.  Its ``MECHANISMS`` maps each built-in name to the
#: module (in the package) that registers it when imported, in display order.  A module is
#: imported (by name, like a plug-in) at the first look-up of one of its names, every one for
#: :func:`available`, so that solving with DRF imports DRF's module alone and ``fairalloc --help``
#: none
BUILTINS = "fairalloc.models"


def _builtins() -> dict[str, str]:
    """Built-in name -> its module in :data:`BUILTINS`, in display order."""
    table: dict[str, str] = importlib.import_module(BUILTINS).MECHANISMS
    return table


def _load_builtin(name: str) -> None:
    """Import the module that registers the built-in mechanism ``name``, unless it is registered."""
    if name not in _REGISTRY and name in _builtins():
        importlib.import_module(f"{BUILTINS}.{_builtins()[name]}")


_Registered = TypeVar("_Registered", bound="type[Mechanism] | Mechanism")


def refuse_beyond(count: int, what: str, mechanism: str, most: int, limit: str) -> None:
    """One line naming the limit when an instance has more ``what`` (``count``) than ``mechanism``
    allocates in reasonable time (its work grows faster than its users: refused before any)."""
    if count > most:
        raise CaseError(
            f"users: {count:,} {what}; {mechanism} allocates at most {most:,} in reasonable time "
            f"(fairalloc.core.limits.{limit})"
        )


def register(name: str | None = None, *, replace: bool = False) -> Callable[[_Registered], _Registered]:
    """Class decorator (or function) adding a mechanism to the registry under ``name``."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name: expected a mechanism name (str) or None, got {type(name).__name__}")

    def add(cls_or_obj: _Registered) -> _Registered:
        if not (
            isinstance(cls_or_obj, Mechanism) or isinstance(cls_or_obj, type) and issubclass(cls_or_obj, Mechanism)
        ):
            raise TypeError(f"register: expected a Mechanism subclass or instance, got {type(cls_or_obj).__name__}")
        mech = cls_or_obj() if isinstance(cls_or_obj, type) else cls_or_obj
        key = name or mech.name
        if not key:
            raise FairallocError("register: a mechanism needs a name")
        _load_builtin(key)  # a built-in of that name exists, imported or not: it comes first
        if key in _REGISTRY and not replace:
            raise FairallocError(f"register: mechanism '{key}' exists already (pass replace=True)")
        mech.name = key
        _REGISTRY[key] = mech
        return cls_or_obj

    return add


def _load_plugins() -> None:
    global _entry_points_loaded
    if not _entry_points_loaded:
        _entry_points_loaded = True
        for ep in entry_points(group="fairalloc.mechanisms"):
            if ep.name in _REGISTRY or ep.name in _builtins():  # a built-in name stays the built-in
                continue
            try:
                loaded = ep.load()
                if ep.name in _REGISTRY:  # its module registered it on import
                    continue
                mech = loaded() if isinstance(loaded, type) else loaded
                if not isinstance(mech, Mechanism):
                    raise TypeError(f"{type(mech).__name__} object is not a fairalloc.Mechanism")
                register(ep.name)(mech)
            except Exception as exc:  # a broken plug-in must take down neither the built-ins nor the others
                warnings.warn(
                    f"plug-in skipped: entry point '{ep.name}' ({ep.value}) in group "
                    f"'fairalloc.mechanisms' failed: {type(exc).__name__}: {exc}",
                    FairallocWarning,
                    stacklevel=3,
                )


def get(name: str | Mechanism) -> Mechanism:
    """The mechanism registered as ``name`` (a :class:`Mechanism` is returned as is)."""
    if isinstance(name, Mechanism):
        return name
    if not isinstance(name, str):
        raise TypeError(f"mechanism: expected a mechanism name (str) or a Mechanism, got {type(name).__name__}")
    _load_plugins()
    base, colon, parameters = name.partition(":")
    _load_builtin(base)
    try:
        mech = _REGISTRY[base]
    except KeyError:
        raise UnknownNameError(f"mechanism: {unknown('mechanism', name, available())}") from None
    if colon:
        return mech.with_parameters(parameters)
    if mech.parameters:
        raise UnknownNameError(f"mechanism: '{base}' is a family; name a member as {base}:{mech.parameters}")
    return mech


def family(name: str) -> Mechanism | None:
    """The registered family ``name`` (``alpha-fair``, ``fds``), or None if it is not one."""
    _load_plugins()
    _load_builtin(name)
    mech = _REGISTRY.get(name)
    return mech if mech is not None and mech.parameters else None


def available(kind: str | None = None, *, families: bool = True) -> list[str]:
    """Names of registered mechanisms (optionally only those of one of :data:`KINDS`; without the
    parametrised families when ``families=False``, as the "every mechanism" defaults use)."""
    if kind is not None and not isinstance(kind, str):
        raise TypeError(f"kind: expected one of {', '.join(map(repr, KINDS))} or None, got {type(kind).__name__}")
    if kind not in (None, *KINDS):
        raise UnknownNameError(f"kind: {unknown('kind', kind, KINDS)}")
    _load_plugins()
    builtins = _builtins()
    for name in builtins:
        _load_builtin(name)
    order = {name: i for i, name in enumerate(builtins)}  # the built-ins first, however imported
    names = sorted(_REGISTRY, key=lambda k: order.get(k, len(order)))
    return [
        k for k in names if (kind is None or _REGISTRY[k].kind == kind) and (families or not _REGISTRY[k].parameters)
    ]
