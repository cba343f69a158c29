"""The README's "Limits" section lists every bound of ``fairalloc.core.limits`` with its value."""

from __future__ import annotations

import re
from pathlib import Path

from fairalloc import limits

README = Path(__file__).resolve().parents[1] / "README.md"


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## Limits\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert match, "README.md has no '## Limits' section"
    return match.group(1)


def _bounds() -> dict[str, object]:
    return {k: v for k, v in vars(limits).items() if k.isupper() and not k.startswith("_")}


def test_every_limit_is_in_the_readme_with_its_value():
    section = _section()
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| ([^|]+?) \|", section, flags=re.M)}
    bounds = _bounds()
    assert len(bounds) >= 10
    missing = sorted(set(bounds) - set(rows))
    assert not missing, f"limits not in the README's Limits table: {missing}"
    unknown = sorted(set(rows) - set(bounds))
    assert not unknown, f"README rows naming no constant of fairalloc.core.limits: {unknown}"
    for name, value in bounds.items():
        shown = rows[name].replace(",", "").replace("\u202f", "").strip()
        assert _value(shown) == value, f"{name}: README says {rows[name]!r}, limits.py says {value!r}"


def _value(text: str):
    """``64 MiB`` -> 67108864, ``1e-30`` -> 1e-30, ``100000`` -> 100000."""
    units = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
    number, _, unit = text.partition(" ")
    value = float(number) if any(c in number for c in ".e") else int(number)
    return value * units[unit] if unit in units else value
