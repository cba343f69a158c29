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
:class:`Mechanism`) is skipped with a :class:`~fairalloc.errors.FairallocWarning`; the others load.

A *family* of mechanisms (alpha-fairness, FDS) is registered once and named with its parameters
after a colon: ``alpha-fair:2``, ``alpha-fair:inf``, ``fds:0.5:3``.  Such a class sets
``parameters`` (how they are written, for help texts) and implements :meth:`Mechanism.with_parameters`.
Families are left out of the "every mechanism" defaults, which would not know which member to use.
"""

from __future__ import annotations

import warnings
from importlib.metadata import entry_points

from .allocation import Allocation
from .backends import Program
from .errors import FairallocError, FairallocWarning, UnknownNameError, unknown
from .instance import Instance

METHODS = ("auto", "program", "fast")


class Mechanism:
    """Base class.  Subclasses set ``name`` and ``summary``, implement :meth:`program`, and
    :meth:`fast` where an exact fast algorithm exists."""

    name: str = ""
    summary: str = ""
    #: "static" mechanisms allocate once; "dynamic" ones allocate at every arrival
    kind: str = "static"
    #: for a family: how its parameters are written after the name (e.g. "ALPHA"); "" otherwise
    parameters: str = ""

    def with_parameters(self, text: str) -> "Mechanism":
        """The member of this family named ``<name>:<text>``."""
        raise UnknownNameError(f"mechanism: '{self.name}' takes no parameters (got '{self.name}:{text}')")

    @property
    def has_fast(self) -> bool:
        return type(self).fast is not Mechanism.fast

    @property
    def has_program(self) -> bool:
        return type(self).program is not Mechanism.program

    def program(self, instance: Instance) -> Program:
        raise FairallocError(f"--method: {self.name} has no declarative program; use --method fast")

    def fast(self, instance: Instance) -> Allocation:
        raise FairallocError(f"--method: {self.name} has no fast path; use --method program")

    def allocate(self, instance: Instance, method: str = "auto") -> Allocation:
        if method not in METHODS:
            raise UnknownNameError(f"--method: {unknown('method', method, METHODS)}")
        if method == "fast" or (method == "auto" and self.has_fast):
            return self.fast(instance)
        return self.program(instance).solve()

    def __repr__(self) -> str:
        return f"<mechanism {self.name}>"


_REGISTRY: dict[str, Mechanism] = {}
_entry_points_loaded = False


def register(name: str | None = None, *, replace: bool = False):
    """Class decorator (or function) adding a mechanism to the registry under ``name``."""
    def add(cls_or_obj):
        mech = cls_or_obj() if isinstance(cls_or_obj, type) else cls_or_obj
        key = name or mech.name
        if not key:
            raise FairallocError("register: a mechanism needs a name")
        if key in _REGISTRY and not replace:
            raise FairallocError(f"register: mechanism '{key}' exists already (pass replace=True)")
        mech.name = key
        _REGISTRY[key] = mech
        return cls_or_obj
    return add


def _load_builtins_and_plugins() -> None:
    global _entry_points_loaded
    from . import models  # noqa: F401  (registers the built-in mechanisms)
    if not _entry_points_loaded:
        _entry_points_loaded = True
        for ep in entry_points(group="fairalloc.mechanisms"):
            if ep.name in _REGISTRY:
                continue
            try:
                loaded = ep.load()
                if ep.name in _REGISTRY:                # its module registered it on import
                    continue
                mech = loaded() if isinstance(loaded, type) else loaded
                if not isinstance(mech, Mechanism):
                    raise TypeError(f"{type(mech).__name__} object is not a fairalloc.Mechanism")
                register(ep.name)(mech)
            except Exception as exc:  # a broken plug-in must take down neither the built-ins nor the others
                warnings.warn(f"fairalloc: plug-in skipped: entry point '{ep.name}' ({ep.value}) in group "
                              f"'fairalloc.mechanisms' failed: {type(exc).__name__}: {exc}",
                              FairallocWarning, stacklevel=3)


def get(name: str | Mechanism) -> Mechanism:
    """The mechanism registered as ``name`` (a :class:`Mechanism` is returned as is)."""
    if isinstance(name, Mechanism):
        return name
    _load_builtins_and_plugins()
    base, colon, parameters = name.partition(":")
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
    _load_builtins_and_plugins()
    mech = _REGISTRY.get(name)
    return mech if mech is not None and mech.parameters else None


def available(kind: str | None = None, *, families: bool = True) -> list[str]:
    """Names of registered mechanisms (optionally only ``"static"`` or ``"dynamic"`` ones; without
    the parametrised families when ``families=False``, as the "every mechanism" defaults use)."""
    _load_builtins_and_plugins()
    return [k for k, m in _REGISTRY.items() if (kind is None or m.kind == kind) and (families or not m.parameters)]
