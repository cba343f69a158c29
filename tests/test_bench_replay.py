"""benchmarks/bench_replay.py runs on a small workload and records its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fairalloc.testing import HANG

ROOT = Path(__file__).resolve().parent.parent


def test_a_small_run_records_events_ratio_and_provenance(tmp_path):
    out = tmp_path / "replay.json"
    argv = [sys.executable, "benchmarks/bench_replay.py", "--jobs", "300", "--nodes", "4", "--policy-jobs", "100"]
    argv += ["--json", str(out)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=HANG, check=False)
    assert proc.returncode == 0, proc.stderr
    run = json.loads(out.read_text())["runs"][0]
    assert run["jobs"] == 300 and run["events"] == run["heapq_events"] == 600  # every submission and end
    assert run["ratio"] > 0 and 0 < run["utilization"]["cpu"] <= 1
    policies = json.loads(out.read_text())["policies"]
    assert {r["mechanism"] for r in policies} == {"yarn-fair", "yunikorn-fair", "volcano-proportion", "mesos-drf"}
    assert all(r["jobs"] == 100 and r["events"] > 0 for r in policies)
