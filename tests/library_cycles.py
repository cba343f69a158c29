"""The case library's ported scheduling cycles (cases with a ``cycle``): found by system and decided
by a mechanism's online form, for the per-scheduler cycle tests (tests/test_yarn_cycle.py,
tests/test_yunikorn_cycle.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

from fairalloc.engines.online import Admit, Decision, Preempt
from fairalloc.io.cases import load_case
from fairalloc.io.jobs import cycle_decisions

LIBRARY = Path(__file__).resolve().parents[1] / "fairalloc" / "case_library"


def cycle_cases(system: str) -> list[Path]:
    """The library's cases of ``system`` (their names' first word) that hold a cycle."""
    return sorted(p for p in LIBRARY.glob(f"{system}-*.yaml") if "cycle" in yaml.safe_load(p.read_text()))


def decided(decisions: list[Decision]) -> tuple[set[str], set[str]]:
    """The jobs admitted and the jobs preempted."""
    return {d.job for d in decisions if isinstance(d, Admit)}, {d.job for d in decisions if isinstance(d, Preempt)}


def check_as_upstream_asserts(path: Path, mechanism: str, test_file: str) -> None:
    """The case cites the upstream test file (Apache-2.0) and ``mechanism`` decides its cycle as each
    expectation says (the sets admitted and preempted)."""
    case = load_case(path)
    assert test_file in (case.source or "") and "Apache-2.0" in (case.source or "")
    admitted, preempted = decided(cycle_decisions(case, mechanism))
    for e in case.expect:
        assert admitted == set(e.admitted or []) and preempted == set(e.preempted or []), (admitted, preempted)
