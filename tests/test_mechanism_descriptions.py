"""Every registered mechanism reads in two lines and points to its documentation.

``summary`` says what a mechanism computes, ``about`` what it promises or how it differs from DRF
(the explorer shows both), and ``section`` is the section of docs/formulations.md that explains it:
a heading there must carry that number, so renumbering the document fails here, not in a reader's
browser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fairalloc.core import registry

FORMULATIONS = Path(__file__).resolve().parents[1] / "docs" / "formulations.md"
HEADINGS = [line for line in FORMULATIONS.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
#: a line of the explorer's mechanism list: long enough for a sentence, short enough for one line
MAX_CHARS = 160

NAMES = registry.available()


def mechanism(name: str) -> registry.Mechanism:
    # a family (alpha-fair) is only reachable through family(): get() wants a member's parameters
    return registry.family(name) or registry.get(name)


def one_line(text: str) -> bool:
    return bool(text.strip()) and "\n" not in text and len(text) <= MAX_CHARS


def test_every_built_in_is_listed():
    assert {"drf", "asset", "ceei", "alpha-fair", "fds", "ddrf", "hdrf-fluid", "kueue"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_summary_and_about_are_two_distinct_lines(name):
    mech = mechanism(name)
    assert one_line(mech.summary), f"{name}: summary {mech.summary!r}"
    assert one_line(mech.about), f"{name}: about {mech.about!r}"
    summary, about = mech.summary.strip().lower(), mech.about.strip().lower()
    # the second line adds something: not the summary again, nor a piece of it
    assert about != summary and about not in summary and summary not in about, name


def has_heading(section: str) -> bool:
    """A heading numbered ``section``: "## 1. Dominant ..." or "### 9.2 Volcano ..." (the number
    followed by ". " or " ", so "1" is not found in "### 1.1 Definition")."""
    heading = re.compile(rf"^#+ {re.escape(section)}\.? ")
    return any(heading.match(line) for line in HEADINGS)


def test_has_heading_tells_sections_apart():
    assert has_heading("1") and has_heading("9.2") and has_heading("4.2")
    assert not has_heading("9.12") and not has_heading("11") and not has_heading("1.1.1")


@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_section_names_a_heading_of_the_formulations(name):
    section = mechanism(name).section
    assert re.fullmatch(r"\d+(\.\d+)*", section), f"{name}: section {section!r} is not a section number"
    assert has_heading(section), (
        f"{name}: no heading '## {section}. ...' or '### {section} ...' in docs/formulations.md"
    )


def test_a_plug_in_needs_neither():
    """The base class leaves both empty, so a plug-in that sets neither still registers."""
    assert registry.Mechanism.about == "" and registry.Mechanism.section == ""
