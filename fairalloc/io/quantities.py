"""Quantities as schedulers write them: Kubernetes quantities and YARN resource strings.

* **Kubernetes** (``k8s.io/apimachinery/pkg/api/resource/quantity.go``, the grammar in the comment
  above ``type Quantity``): a signed decimal number followed by a binary-SI suffix (``Ki Mi Gi Ti
  Pi Ei``, powers of 1024), a decimal-SI suffix (``n u m k M G T P E``, powers of 1000) or a
  decimal exponent (``e3``, ``E-2``).  ``500m`` cpu is half a core, ``4Gi`` is 4294967296 bytes and
  ``4G`` 4000000000.  The text is checked against that grammar here and converted by the
  Kubernetes Python client's own parser (``kubernetes.utils.quantity.parse_quantity``), exactly,
  in :class:`~decimal.Decimal`: the client's parser alone would also take ``NaN``, ``1_000`` or
  `` 1 `` (it hands the number to ``Decimal``).
* **YARN** (apache/hadoop, ``FairSchedulerConfiguration.parseResourceConfigValue``): the
  FairScheduler's three syntaxes, ``"1024 mb, 2 vcores"``, ``"memory-mb=4096, vcores=1"`` (any
  resource type, a value may carry a unit: ``memory-mb=4Gi``) and percentages (``"50.0%"`` of every
  resource, ``"50% memory, 25% cpu"``, ``"memory-mb=50%, vcores=25%"``).  Memory is in MiB (YARN's
  ``mb``: ``ResourceInformation.MEMORY_MB`` has the unit ``Mi``), vcores in cores.

>>> parse_kube("500m", "cpu"), parse_kube("4Gi", "memory"), parse_kube("1e3", "cpu")
(Decimal('0.5'), Decimal('4294967296'), Decimal('1000'))
>>> format_kube(parse_kube("1536Mi", "memory"), binary=True), format_kube(Decimal("0.25"))
('1536Mi', '250m')
>>> parse_yarn_resources("1024 mb, 2 vcores", "minResources")
{'memory-mb': Decimal('1024'), 'vcores': Decimal('2')}
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal

from fairalloc.core.errors import CaseError, excerpt
from fairalloc.core.limits import MAX_EXACT_DIGITS, MAX_MAGNITUDE, MIN_MAGNITUDE

__all__ = [
    "QuantityError",
    "Percent",
    "number",
    "bounded",
    "parse_kube",
    "format_kube",
    "parse_yarn_resources",
    "tidy",
    "MEMORY",
    "VCORES",
]


class QuantityError(CaseError):
    """A quantity that is not in its system's syntax; the message starts with where it was read."""


#: a plain decimal number, as every system writes one (``12``, ``0.5``, ``2.5e3``): no ``NaN``,
#: ``Infinity``, ``1_000`` or hexadecimal, which Python's ``Decimal`` and ``float`` would take
_PLAIN = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: bits of an integer of MAX_EXACT_DIGITS decimal digits (log2(10) < 3.33)
_MAX_BITS = int(MAX_EXACT_DIGITS * 3.33)
_SMALLEST, _LARGEST = Decimal(repr(MIN_MAGNITUDE)), Decimal(repr(MAX_MAGNITUDE))


def number(value: object, where: str, *, negative: bool = False, whole: bool = False) -> Decimal:
    """The one gate of every number an importer reads (quantities, weights, counts, priorities):
    ``value`` (a YAML or JSON number, or its text) exactly, or one :class:`QuantityError` line at
    ``where`` (file: object: field).  Refused before any arithmetic: ``NaN``, ``Infinity``, ``sNaN``,
    text that is not a plain decimal, more than MAX_EXACT_DIGITS characters or digits (Python's
    ``int`` refuses 4300), an exponent beyond 2 * MAX_EXACT_DIGITS; then a non-zero magnitude
    outside [MIN_MAGNITUDE, MAX_MAGNITUDE] (what the case loader accepts), a negative number unless
    ``negative``, a fraction when ``whole``.

    >>> number("2.5e3", "w"), number(7, "w"), number(0.1, "w")
    (Decimal('2.5E+3'), Decimal('7'), Decimal('0.1'))
    >>> number("NaN", "f: Queue/a: spec.weight")
    Traceback (most recent call last):
    fairalloc.io.quantities.QuantityError: f: Queue/a: spec.weight: 'NaN' is not a number
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        raise QuantityError(f"{where}: {excerpt(value)} is not a number")
    if isinstance(value, int):
        if value.bit_length() > _MAX_BITS:
            raise QuantityError(f"{where}: a number of more than {MAX_EXACT_DIGITS} digits is out of range")
        amount = Decimal(value)
    elif isinstance(value, float):
        amount = Decimal(repr(value))  # as YAML wrote it (0.1 is 0.1); nan and inf are refused below
    elif isinstance(value, str):
        amount = _plain(value, where)
    else:
        amount = value
    return bounded(amount, where, value, negative=negative, whole=whole)


def _plain(value: str, where: str) -> Decimal:
    text = value.strip()
    if len(text) > MAX_EXACT_DIGITS:
        raise QuantityError(f"{where}: a number of more than {MAX_EXACT_DIGITS} characters is out of range")
    if not _PLAIN.fullmatch(text):
        raise QuantityError(f"{where}: {excerpt(value)} is not a number")
    return Decimal(text)


def bounded(amount: Decimal, where: str, value: object, *, negative: bool = False, whole: bool = False) -> Decimal:
    """``amount`` (read from ``value``) if it is within the bounds of :func:`number`; comparisons
    only, so that no exponent can overflow or take time."""
    if not amount.is_finite():
        raise QuantityError(f"{where}: {excerpt(value)} is not a finite number")
    sign, digits, exponent = amount.as_tuple()
    if len(digits) > MAX_EXACT_DIGITS or abs(int(exponent)) > 2 * MAX_EXACT_DIGITS:
        raise QuantityError(f"{where}: {excerpt(value)} is out of range (more than {MAX_EXACT_DIGITS} digits)")
    size = amount.copy_abs()
    if size and not _SMALLEST <= size <= _LARGEST:
        raise QuantityError(
            f"{where}: {excerpt(value)} is out of range (fairalloc reads non-zero numbers of magnitude "
            f"{MIN_MAGNITUDE:g} to {MAX_MAGNITUDE:g})"
        )
    if sign and size and not negative:
        raise QuantityError(f"{where}: {excerpt(value)} is negative")
    if whole and amount != amount.to_integral_value():
        raise QuantityError(f"{where}: {excerpt(value)} is not a whole number")
    return amount


#: Kubernetes' grammar: <signedNumber><suffix> (the exponent's number is an integer in practice)
_KUBE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|([eE][+-]?\d+))?")
_BINARY = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki")
_DECIMAL = (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3), ("", 0), ("m", -3), ("u", -6), ("n", -9))


def parse_kube(value: str | int | float | Decimal, where: str, *, negative: bool = False) -> Decimal:
    """A Kubernetes quantity, exactly (YAML numbers are taken as written: ``0.1`` is ``0.1``).
    A negative amount is refused unless ``negative``."""
    bad = f"{where}: {excerpt(value)} is not a Kubernetes quantity (like 500m, 4Gi or 2)"
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        raise QuantityError(bad)
    if not isinstance(value, str):
        return tidy(number(value, where, negative=negative))  # a YAML number: the gate alone
    text = value.strip()
    if len(text) > MAX_EXACT_DIGITS:  # before the client's parser: its exponents are unbounded
        raise QuantityError(f"{where}: a quantity of more than {MAX_EXACT_DIGITS} characters is out of range")
    match = _KUBE.fullmatch(text)
    if not match:
        raise QuantityError(bad)
    if match.group(1) and abs(int(match.group(1)[1:])) > 2 * MAX_EXACT_DIGITS:
        raise QuantityError(f"{where}: {excerpt(value)} is out of range (its exponent)")
    from kubernetes.utils.quantity import parse_quantity  # the client takes half a second to import

    try:
        amount = parse_quantity(text)
    except (ValueError, ArithmeticError):
        raise QuantityError(bad) from None
    return tidy(bounded(amount, where, value, negative=negative))


def tidy(amount: Decimal) -> Decimal:
    """``amount`` written plainly: a whole number without exponent or trailing zeros (``1E+3`` and
    ``1536.0`` are ``1000`` and ``1536``), a fraction without trailing zeros; no negative zero."""
    if amount == amount.to_integral_value() and amount.adjusted() <= 2 * MAX_EXACT_DIGITS:
        return Decimal(int(amount))  # exact at any number of digits (quantize stops at 28)
    return (amount + 0).normalize()


def format_kube(amount: Decimal, binary: bool = False) -> str:
    """``amount`` in Kubernetes' shortest exact form: the largest suffix that leaves a whole number
    (``binary``: a power of 1024 first), else the number as it is.  ``parse_kube`` inverts it."""
    from kubernetes.utils.quantity import format_quantity

    amount = Decimal(amount)
    if amount == 0:
        return "0"
    if binary and amount == amount.to_integral_value():
        for k, suffix in enumerate(_BINARY):
            if amount % (Decimal(1024) ** (6 - k)) == 0:
                return format_quantity(amount, suffix, quantize=Decimal(1))
    for suffix, exponent in _DECIMAL:
        scaled = amount.scaleb(-exponent)
        if scaled == scaled.to_integral_value():
            return format(scaled.to_integral_value(), "f") + suffix
    return format(amount, "f")


@dataclass(frozen=True)
class Percent:
    """A share of something (the cluster's resources in YARN), written ``"50%"`` in a case."""

    value: Decimal

    def __str__(self) -> str:
        return f"{format(self.value.normalize(), 'f')}%"


MEMORY, VCORES = "memory-mb", "vcores"
_NUMBER = r"(\d+(?:\.\d+)?)"
_OLD = {MEMORY: re.compile(_NUMBER + r"\s*mb\b", re.I), VCORES: re.compile(_NUMBER + r"\s*vcores?\b", re.I)}
#: the old syntax as written almost always: memory then cores, whole numbers, a comma between
_OLD_BOTH = re.compile(r"(\d+)\s*mb\s*,\s*(\d+)\s*vcores?", re.I)
_OLD_PERCENT = {
    MEMORY: re.compile(_NUMBER + r"\s*%\s*memory\b", re.I),
    VCORES: re.compile(_NUMBER + r"\s*%\s*(?:cpu|vcores?)\b", re.I),
}
#: one share of every resource (``50%``)
_SHARE = re.compile(_NUMBER + r"\s*%")
#: a pair of the newer syntax (``memory-mb=4Gi``, ``vcores=50%``)
_PAIR = re.compile(r"([A-Za-z][\w./-]*)\s*=\s*" + _NUMBER + r"\s*(%|[A-Za-z]*)")
#: YARN unit suffixes (UnitsConversionUtil.KNOWN_UNITS) in bytes, for memory-mb values (kept in MiB)
_BYTES = {
    **{u: Decimal(1024) ** (k + 1) for k, u in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi"))},
    **{u: Decimal(1000) ** (k + 1) for k, u in enumerate(("k", "M", "G", "T", "P"))},
}


def parse_yarn_resources(text: str, where: str) -> dict[str, Decimal | Percent]:
    """A YARN FairScheduler resource string in any of its three syntaxes (module docstring)."""
    if not isinstance(text, str) or not text.strip():
        raise QuantityError(f"{where}: {excerpt(text)} is not a YARN resource string (like '1024 mb, 2 vcores')")
    value = text.strip()
    both = _OLD_BOTH.fullmatch(value)
    if both:  # the usual "1024 mb, 2 vcores": what _OLD's patterns find in it, found at once
        return {
            MEMORY: _resource_amount(both[1], f"{where}: {MEMORY}"),
            VCORES: _resource_amount(both[2], f"{where}: {VCORES}"),
        }
    if "=" in value:
        return _yarn_new(value, where)
    whole = _SHARE.fullmatch(value) if "%" in value else None
    if whole:
        share = Percent(tidy(number(whole.group(1), where)))
        return {MEMORY: share, VCORES: share}
    if "%" in value:
        return {name: Percent(_one(pattern, value, name, where)) for name, pattern in _OLD_PERCENT.items()}
    return {name: _one(pattern, value, name, where) for name, pattern in _OLD.items()}


def _one(pattern: re.Pattern[str], text: str, name: str, where: str) -> Decimal:
    found = pattern.findall(text)
    if len(found) != 1:
        what = "missing" if not found else "given twice"
        raise QuantityError(f"{where}: {excerpt(text)}: {name} is {what} (YARN writes '1024 mb, 2 vcores')")
    return _resource_amount(found[0], f"{where}: {name}")


#: a whole number of this many digits or fewer is below MAX_MAGNITUDE, so within every bound of the gate
_WHOLE_DIGITS = int(math.log10(MAX_MAGNITUDE))


def _resource_amount(text: str, where: str) -> Decimal:
    """A resource string's number (the text ``_NUMBER`` found), exactly and tidy: a whole number of
    at most ``_WHOLE_DIGITS`` digits, what allocation files write almost always, straight (it is
    within every bound of :func:`number`, and its ``Decimal``, exponent 0 and no leading zero, is what
    ``tidy`` makes of it); any other through the gate.  A file of 10,000 queues holds 40,000."""
    if text.isdecimal() and len(text) <= _WHOLE_DIGITS:
        return Decimal(text)
    return tidy(number(text, where))


def _yarn_new(text: str, where: str) -> dict[str, Decimal | Percent]:
    """``name=value[unit]`` pairs, comma-separated; a value may be a percentage."""
    out: dict[str, Decimal | Percent] = {}
    for part in (p.strip() for p in text.split(",")):
        match = _PAIR.fullmatch(part)
        if not match:
            raise QuantityError(f"{where}: {excerpt(part)} is not name=value (YARN writes 'memory-mb=4096, vcores=1')")
        name, unit = match.group(1), match.group(3)
        amount = _resource_amount(match.group(2), f"{where}: {name}")
        if name in out:
            raise QuantityError(f"{where}: {name} is given twice in {excerpt(text)}")
        if unit == "%":
            out[name] = Percent(amount)
        elif unit == "":
            out[name] = amount  # a resource's own unit (MiB for memory-mb)
        elif name == MEMORY and unit in _BYTES:
            out[name] = tidy(amount * _BYTES[unit] / _BYTES["Mi"])
        else:
            raise QuantityError(f"{where}: {name}={amount}{unit}: unit {unit!r} is not one fairalloc converts")
    return out
