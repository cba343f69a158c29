"""paper_examples/drf_nsdi11.py writes the chart and the tables, the same files on every run."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "paper_examples" / "drf_nsdi11.py"
FILES = ["figure4.png", "figure4.svg", "section_4_1.md", "theorems.md", "theorems.csv", "table2.md", "table2.json"]


def run(out: Path) -> None:
    subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), "--trials", "12", "--workers", "2"],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_drf_nsdi11_regenerates_identical_files(tmp_path):
    run(tmp_path / "a")
    run(tmp_path / "b")
    for name in FILES:
        first, second = (tmp_path / "a" / name).read_bytes(), (tmp_path / "b" / name).read_bytes()
        assert first and first == second, name
    assert (tmp_path / "a" / "figure4.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "a" / "figure4.svg").read_bytes()
    theorems = (tmp_path / "a" / "theorems.md").read_text()
    assert "0 mismatches" in theorems and "100/31" in theorems and "48.39" in theorems
    section = (tmp_path / "a" / "section_4_1.md").read_text()
    assert all(v in section for v in ("63/25", "54/25", "45/11", "18/11"))
    table = (tmp_path / "a" / "table2.md").read_text()
    assert "DIFFERS FROM THE PAPER" not in table
