"""The units a case's resources are counted in, and amounts shown in them for people.

A case may say what its numbers mean (``units: {cpu: cores, memory: bytes}``); imported cases always
do.  The numbers stay as they are for computing and in JSON; tables show them readably:

>>> readable(68719476736, "bytes"), readable(2500, "millicores"), readable(4096, "MiB")
('64 GiB', '2.5 cores', '4 GiB')
>>> readable(1, "cores"), readable(3, "count"), readable(1.5, None)
('1 core', '3', '1.5')
"""

from __future__ import annotations

import math

#: the units a case may name, and each one's size in its family's base unit (bytes, cores, 1)
SIZES: dict[str, tuple[str, float]] = {
    "cores": ("cores", 1.0),
    "millicores": ("cores", 1e-3),
    "bytes": ("bytes", 1.0),
    "KiB": ("bytes", 2.0**10),
    "MiB": ("bytes", 2.0**20),
    "GiB": ("bytes", 2.0**30),
    "MB": ("bytes", 1e6),
    "GB": ("bytes", 1e9),
    "count": ("count", 1.0),
}
UNITS = tuple(SIZES)
_BINARY = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_DECIMAL = ("bytes", "kB", "MB", "GB", "TB", "PB", "EB")


def _number(v: float, digits: int = 4) -> str:
    """At most ``digits`` significant digits, no trailing zeros, no exponent below 1e15."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    places = max(digits - 1 - math.floor(math.log10(abs(v))), 0)
    text = f"{round(v, places):.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def readable(amount: float, unit: str | None, digits: int = 4) -> str:
    """``amount`` of ``unit`` for a person: bytes in the largest binary (or, for MB and GB, decimal)
    unit that keeps it at least 1, cpu in cores; a count or an amount without unit as a number."""
    if unit is None or unit not in SIZES:
        return _number(float(amount), digits)
    family, size = SIZES[unit]
    value = float(amount) * size
    if family == "cores":
        return f"{_number(value, digits)} core" + ("" if value == 1 else "s")
    if family == "count":
        return _number(value, digits)
    names, step = (_DECIMAL, 1000.0) if unit in ("MB", "GB") else (_BINARY, 1024.0)
    k = 0
    while k + 1 < len(names) and abs(value) >= step ** (k + 1):
        k += 1
    return f"{_number(value / step**k, digits)} {names[k]}"
