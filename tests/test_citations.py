"""Citations a reader can follow.

* No text file of the project names a source paper by the file name it had in the working
  notes (``NNN_<16 hex digits>.txt``): a user of fairalloc does not have those files, so
  everything cites the bibliographic reference instead.
* Every bundled case says where its numbers come from (``source``), even when they were
  constructed for fairalloc.
* Every reference to a section of docs/formulations.md points to a section that exists there,
  and code and cases spell the path out (``docs/formulations.md``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import fairalloc
from fairalloc.io.cases import bundled_cases

ROOT = Path(__file__).resolve().parents[1]
FORMULATIONS = ROOT / "docs" / "formulations.md"

#: where citations live (README.md included: it is the first page a user reads)
SCANNED = ["cases", "models", "fairalloc", "paper_examples", "docs", "README.md"]
#: code and case files, which must cite the documentation by its path in the repository
CODE = ["cases", "models", "fairalloc", "paper_examples"]
SKIPPED_DIRS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache"}

PAPER_FILE = re.compile(r"[0-9]{3}_[0-9a-f]{16}\.txt")
# "formulations.md section 6", "formulations.md sections 3 and 5", "formulations.md sections 1, 3
# and 5", also across a line break (docstrings and YAML wrap)
SECTION_REF = re.compile(r"(\S*)formulations\.md,?\s+sections?\s+(\d+(?:(?:\s*,\s*|\s+and\s+|\s+to\s+)\d+)*)")
HEADING = re.compile(r"^## (\d+)\.", re.M)


def text_files(entries) -> list[Path]:
    """The text files under ``entries`` (files or directories of the repository)."""
    out = []
    for entry in entries:
        path = ROOT / entry
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in candidates:
            if SKIPPED_DIRS & set(p.relative_to(ROOT).parts) or p.suffix in {".pyc", ".png", ".svg"}:
                continue
            data = p.read_bytes()
            if b"\0" in data:
                continue
            out.append(p)
    return out


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def where(path: Path, text: str, offset: int) -> str:
    return f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, offset) + 1}"


def test_the_scanned_places_exist():
    for entry in SCANNED:
        assert (ROOT / entry).exists(), entry
    assert FORMULATIONS.is_file()
    assert len(text_files(SCANNED)) > 50


@pytest.mark.parametrize("entry", SCANNED)
def test_no_paper_file_names(entry):
    found = [
        f"{where(p, text, m.start())}: {m.group(0)}"
        for p in text_files([entry])
        for text in [read(p)]
        for m in PAPER_FILE.finditer(text)
    ]
    assert not found, (
        "cite the bibliographic reference (authors, title, venue, year), not the file name "
        "of the working notes:\n" + "\n".join(found)
    )


@pytest.mark.parametrize("name", bundled_cases())
def test_every_bundled_case_has_a_source(name):
    case = fairalloc.load_case(name)
    assert isinstance(case.source, str) and case.source.strip(), f"case {name}: empty source"


def test_every_case_file_in_the_repository_is_bundled():
    in_repo = sorted(p.stem for p in (ROOT / "cases").glob("*.yaml"))
    assert in_repo == bundled_cases()


def sections() -> set[int]:
    return {int(n) for n in HEADING.findall(read(FORMULATIONS))}


def test_formulations_keeps_its_numbering():
    assert sections() == set(range(11)), "docs/formulations.md must keep sections 0 to 10 (cited as such)"


def test_section_references_exist():
    known = sections()
    bad = []
    for p in text_files(SCANNED):
        text = read(p)
        for m in SECTION_REF.finditer(text):
            numbers = [int(n) for n in re.findall(r"\d+", m.group(2))]
            if " to " in m.group(2):
                low, high = numbers[0], numbers[-1]
                numbers = list(range(low, high + 1))
            missing = [n for n in numbers if n not in known]
            if missing:
                bad.append(f"{where(p, text, m.start())}: {' '.join(m.group(0).split())} (no section {missing})")
    assert not bad, "references to sections docs/formulations.md does not have:\n" + "\n".join(bad)


def test_code_and_cases_cite_the_documentation_by_its_path():
    bare = []
    for p in text_files(CODE):
        text = read(p)
        for m in SECTION_REF.finditer(text):
            if not m.group(1).endswith("docs/"):
                bare.append(f"{where(p, text, m.start())}: {' '.join(m.group(0).split())}")
    assert not bare, "write docs/formulations.md, the path a reader can open:\n" + "\n".join(bare)
