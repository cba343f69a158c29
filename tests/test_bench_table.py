"""README.md's performance table is what ``benchmarks/results_*.json`` give (issue 36).

``benchmarks/table.py`` writes the table between its markers from every results file; here its
``--check`` holds the committed README to the committed JSON, so neither is changed without the
other.  On a copy of the benchmarks folder and the README: a changed figure is found stale and
rewritten into its row, and a results file no renderer knows is named.  Nothing is timed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _table(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(root / "benchmarks" / "table.py"), *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _copy(tmp_path: Path) -> Path:
    (tmp_path / "benchmarks").mkdir()
    for path in [*(ROOT / "benchmarks").glob("*.json"), ROOT / "benchmarks" / "table.py"]:
        shutil.copy(path, tmp_path / "benchmarks" / path.name)
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    return tmp_path


def test_the_readmes_table_is_what_the_results_files_give():
    proc = _table(ROOT, "--check")
    assert proc.returncode == 0, proc.stderr + "\n(run: .venv/bin/python benchmarks/table.py)"


def test_a_changed_figure_is_found_stale_and_written_into_its_row(tmp_path):
    root = _copy(tmp_path)
    path = root / "benchmarks" / "results_table2.json"
    figures = json.loads(path.read_text())
    figures["seconds"], figures["met"] = 654.3, False
    path.write_text(json.dumps(figures))
    assert _table(root, "--check").returncode == 1
    assert _table(root).returncode == 0
    (line,) = [x for x in (root / "README.md").read_text().splitlines() if "(`bench_table2.py`)" in x]
    assert "| 654.3 s (" in line and line.endswith("| < 5 min: **missed** |"), line
    assert _table(root, "--check").returncode == 0
    outside = (root / "README.md").read_text().split("<!-- bench-table -->")[0]
    assert outside == (ROOT / "README.md").read_text().split("<!-- bench-table -->")[0]


def test_the_queues_rows_say_each_figure_beside_its_target():
    """drf, flat, in the baseline: exponents 1.13 and 0.938 against 1.2, ratio 0.88 against 5."""
    table = _table(ROOT, "--print").stdout.splitlines()
    (line,) = [x for x in table if x.startswith("| `drf` at 10^2-10^5 queues, flat")]
    figures = json.loads((ROOT / "benchmarks" / "results_queues.json").read_text())["rows"]
    drf = [r for r in figures if r.get("policy") == "drf" and r.get("depth") == 0 and "measure" in r]
    assert [r["measure"] for r in drf] == ["time", "memory", "drf ratio"]
    assert f"exponent of time {drf[0]['ratio']:.3g}, of memory {drf[1]['ratio']:.3g}" in line
    verdicts = " / ".join("met" if r["met"] else "**missed**" for r in drf)
    assert line.endswith(f"| {drf[2]['ratio']:.3g} | <= 1.2 / <= 1.2 / <= 5: {verdicts} |"), line


def test_a_results_file_without_a_renderer_is_named(tmp_path):
    root = _copy(tmp_path)
    (root / "benchmarks" / "results_new.json").write_text("{}")
    proc = _table(root, "--check")
    assert proc.returncode == 2 and "no renderer for results_new.json" in proc.stderr, proc.stderr
