"""Numbers as fairalloc writes them to JSON and YAML: the shortest decimal that the computed value
rounds to, within float noise (:data:`~fairalloc.core.tolerances.NOISE_ULPS` units in the last place).

Arithmetic leaves noise in the last bits (``0.1 * 6 = 0.6000000000000001``); Python's ``repr`` is
the shortest decimal of *that* double, noise included. :func:`shortest` drops the noise, so a case
written by ``fairalloc verify --out`` says ``gpu: 0.6``, and reads back within a few ulps of the
value computed.

>>> shortest(0.1 * 6), shortest(4.0), shortest(1 / 3), shortest(2.499998750000625e-06)
(0.6, 4, 0.3333333333333333, 2.499998750000625e-06)
>>> plain({"x": [0.30000000000000004, 2.0], "ok": True})
{'x': [0.3, 2], 'ok': True}

JSON has no NaN and no infinity: :func:`json_text` refuses them (naming where they are) rather
than write the non-standard tokens ``NaN`` / ``Infinity``; a value that may be missing is written
as ``null`` by the code that builds the document, which says so.
"""

from __future__ import annotations

import math
from typing import Any, SupportsFloat, TypeVar

import numpy as np

from fairalloc.core.tolerances import NOISE_ULPS

_Data = TypeVar("_Data")


def shortest(value: SupportsFloat) -> int | float:
    """An integral value as ``int``, else the shortest decimal within float noise of ``value``."""
    v = float(value)
    if not math.isfinite(v):
        return v
    if v.is_integer() and abs(v) < 2**53:
        return int(v)
    noise = NOISE_ULPS * math.ulp(v)
    for digits in range(1, 17):
        candidate = float(f"{v:.{digits}g}")
        if abs(candidate - v) <= noise:
            return int(candidate) if candidate.is_integer() and abs(candidate) < 2**53 else candidate
    return v


def plain(data: object) -> Any:
    """``data`` with numpy scalars and arrays as Python values and every float :func:`shortest`."""
    if isinstance(data, dict):
        return {k: plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [plain(v) for v in data]
    if isinstance(data, np.ndarray):
        return plain(data.tolist())
    if isinstance(data, (bool, np.bool_)):
        return bool(data)
    if isinstance(data, (float, np.floating)):
        return shortest(data)
    if isinstance(data, np.integer):
        return int(data)
    return data


def finite(data: _Data, where: str = "output") -> _Data:
    """``data`` unchanged, or a :class:`~fairalloc.core.errors.FairallocError` naming the first NaN or
    infinity in it (``output.users.A.gain: not a finite number (inf)``)."""
    from fairalloc.core.errors import FairallocError, shown

    stack: list[tuple[str, object]] = [(where, data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{path}.{shown(k)}", v) for k, v in reversed(list(value.items())))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{path}[{k}]", v) for k, v in reversed(list(enumerate(value))))
        elif isinstance(value, (float, np.floating)) and not math.isfinite(value):
            raise FairallocError(f"{path}: not a finite number ({float(value)}); JSON has no NaN or infinity")
    return data


def json_text(data: object, **options: Any) -> str:
    """``data`` as standard JSON (:func:`plain` numbers; never ``NaN`` or ``Infinity``)."""
    import json

    return json.dumps(finite(plain(data)), allow_nan=False, **options)
