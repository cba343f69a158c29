"""The benchmark scripts run: each one's ``--help`` (its imports, ``provenance`` included), and the
quickest real run of those that record where their figures come from.

``make bench`` takes over an hour, so a script broken by a change elsewhere would otherwise be
found only then.  Nothing here times anything or asserts a figure: the figures are the scripts'
to report (the guide: speed is measured in ``benchmarks/``, never in tests).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fairalloc.testing import HANG

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("bench_*.py"))


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_every_benchmark_is_here():
    assert len(SCRIPTS) >= 12 and "bench_table2.py" in SCRIPTS, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmarks_help_runs(script):
    proc = _run(f"benchmarks/{script}", "--help", timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout


def _provenance(data: dict, commit: str) -> None:
    start, end = data["load_average"]["start"], data["load_average"]["end"]
    assert len(start) == 3 and len(end) == 3 and all(isinstance(x, float) for x in start + end)
    if (ROOT / ".git").exists():  # a git checkout (CI's clean clone is one): the commit measured
        assert commit not in ("", "?"), commit


def test_the_startup_benchmark_records_its_commit_and_load(tmp_path):
    out = tmp_path / "startup.json"
    proc = _run("benchmarks/bench_startup.py", "--rounds", "1", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    _provenance(data, data["current"]["commit"])
    assert {r["command"] for r in data["current"]["rows"]} >= {"fairalloc --help"}


def test_the_simulator_benchmark_records_its_commit_and_load(tmp_path):
    out = tmp_path / "simulator.json"
    proc = _run("benchmarks/bench_simulator.py", "--tasks", "2000", "--slots-tasks", "0", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    _provenance(data, data["commit_measured"])
    assert "ratio" in proc.stdout


def test_the_queues_benchmark_records_every_section_and_what_stopped_it(tmp_path):
    """Its --quick on one policy: every section runs (a size over the cap is a row that says so)."""
    out = tmp_path / "queues.json"
    argv = ["--quick", "--policies", "yarn-capacity", "--cap", "5", "--json", str(out)]
    proc = _run("benchmarks/bench_queues.py", *argv, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    _provenance(data, data["commit"])
    assert set(data["runs"]) == {"growth", "program", "explain", "yarn", "read"}
    assert {r["status"] for section in data["runs"].values() for r in section} <= {"ok", "time cap", "refused"}
    workloads = [r["workload"] for r in data["rows"]]
    assert any(w.startswith("yarn-capacity, depth 6: time over queues") for w in workloads), workloads
    assert any(w.startswith("load_case of 1,000 queues") for w in workloads), workloads
    assert "target" in proc.stdout


def test_an_explain_command_over_the_cap_is_a_row_saying_so():
    """The commands' timing over the cap is recorded as such (it was recorded "ok" without its
    seconds, and the rows then failed on the missing figure)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import bench_queues

    def over():
        raise bench_queues.CapReached

    run = bench_queues.explain_run(lambda: {"seconds": 1.0, "cpu_seconds": 1.0, "solve_cpu_seconds": 0.5}, over)
    assert run["status"] == "ok" and run["command"]["status"] == "time cap"
    rows = bench_queues.explain_rows([{"policy": "drf", "depth": 0, **run}], 1000)
    assert [r["figure"] for r in rows][1] == "time cap" and not rows[1]["met"]
