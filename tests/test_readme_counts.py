"""The README's table of ported scheduling cycles is counted again from the case library: per
scheduler, the bundled cases with a ``cycle:`` (named ``<system>-...``), the upstream test files
their ``source:`` lines name, and the tests in each file (named, or counted), so the table cannot
go stale when a scenario is ported or dropped."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

import fairalloc
from fairalloc.io.cases import bundled_cases

README = Path(__file__).resolve().parent.parent / "README.md"
HEADING = "**The schedulers' scheduling cycles, as cases.**"
#: the table's scheduler column -> the case-name prefix of that system's library cases
SYSTEMS = {
    "Kueue": "kueue",
    "Volcano": "volcano",
    "YARN FairScheduler": "yarn",
    "YuniKorn": "yunikorn",
    "Mesos": "mesos",
}
ENTRY = re.compile(r"`([^`]+\.(?:go|java|cpp))` \(([^)]*)\)")


def _table() -> dict[str, tuple[str, int]]:
    """The README table's rows after ``HEADING``: scheduler -> (files cell, count)."""
    lines = README.read_text(encoding="utf-8").split(HEADING, 1)[1].splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("| scheduler |"))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        name, files, count = (cell.strip() for cell in line.strip("|").split("|"))
        rows[name] = (files, int(count))
    return rows


def _ported(prefix: str) -> tuple[int, dict[str, set[str]]]:
    """The library's cycle cases of one system: how many, and per upstream file (its base name)
    the tests their sources name (``repository, path, test ...``)."""
    count, tests = 0, defaultdict(set)
    for name in bundled_cases():
        case = fairalloc.load_case(name)
        if not name.startswith(f"{prefix}-") or case.cycle is None:
            continue
        count += 1
        fields = [f.strip() for f in (case.source or "").split(",")]
        assert len(fields) >= 3, f"{name}: source names no repository, file and test: {case.source!r}"
        tests[Path(fields[1]).name].add(fields[2].split()[0])
    return count, tests


def test_the_table_has_one_row_per_scheduler_with_cycles():
    assert set(_table()) == set(SYSTEMS)
    others = {n.split("-")[0] for n in bundled_cases() if fairalloc.load_case(n).cycle is not None}
    assert others - set(SYSTEMS.values()) <= {"replay"}  # fairalloc's own example, not a port


@pytest.mark.parametrize("scheduler", sorted(SYSTEMS))
def test_the_counts_files_and_tests_are_the_librarys(scheduler):
    files, count = _table()[scheduler]
    ported, tests = _ported(SYSTEMS[scheduler])
    assert count == ported, f"README says {count} {scheduler} cycle cases; the library has {ported}"
    shown = dict(ENTRY.findall(files))
    assert set(shown) == set(tests), (scheduler, sorted(tests))
    for file, listed in shown.items():
        counted = re.fullmatch(r"(\d+) tests?", listed)
        if counted:
            assert int(counted.group(1)) == len(tests[file]), (file, sorted(tests[file]))
        else:
            assert set(re.findall(r"`([^`]+)`", listed)) == tests[file], (file, sorted(tests[file]))
