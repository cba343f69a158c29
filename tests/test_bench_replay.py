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


def _week(tmp_path: Path, jobs: int, budget: float) -> dict:
    out = tmp_path / f"week-{jobs}.json"
    argv = [sys.executable, "benchmarks/bench_replay.py", "--sections", "week", "--week-jobs", str(jobs)]
    argv += ["--week-budget", str(budget), "--json", str(out)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=HANG, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_the_week_replays_each_policy_from_its_jsonl_file_and_renders(tmp_path):
    """A small week: every production policy finishes every submission and end of its workload
    (loaded back from the JSON Lines file it was written to, whose arrivals span about 7 days), and
    with a budget of 0 CPU seconds every replay is stopped at its first cycle, the row saying where;
    the README table renders both (benchmarks/table.py)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_replay
    import table

    done = _week(tmp_path, 60, 600)
    week = done["week"]
    assert "commit_measured" in done["week_measured"]
    assert [r["mechanism"] for r in week["rows"]] == list(bench_replay.WEEK_POLICIES)
    assert set(week["files"]) == {"kueue", "queues"} and all(6 < f["days"] < 8 for f in week["files"].values())
    for r in week["rows"]:
        assert r["finished"] and r["jobs"] == 60 and r["events"] >= r["total_events"] == 120, r
        assert r["file_bytes"] == week["files"]["kueue" if r["mechanism"].startswith("kueue") else "queues"]["bytes"]
        assert r["ratio"] > 1 and r["rss_growth_mb"] >= 0
    rows = table.week(week)
    assert len(rows) == 8 and all("CPU s for the week" in row[1] for row in rows)
    assert all(row[4] == "reported (<= 10 min is for 10^6 jobs)" for row in rows)  # 60 jobs: no verdict
    million = table.week(week | {"jobs": table.WEEK_JOBS})
    assert [row[4] for row in million] == ["<= 10 min: met"] * 8  # each finished within seconds
    stopped = _week(tmp_path, 300, 0)["week"]
    for r in stopped["rows"]:
        assert not r["finished"] and 1 <= r["events"] < r["total_events"] == 600, r
        assert r["projected_cpu_seconds"] >= r["cpu_seconds"] - 1  # the rate measured, over every event
    figures = [row[1] for row in table.week(stopped)]
    assert all(f.startswith("stopped at day ") and "projected" in f for f in figures), figures
    verdicts = [row[4] for row in table.week(stopped | {"jobs": table.WEEK_JOBS})]
    assert all(v.endswith(" (projected)") for v in verdicts), verdicts


def test_a_week_a_limit_refuses_is_a_row_with_where_it_got(tmp_path, monkeypatch):
    """A replay refused on the way (here a stand-in raising a FairallocError after two events) is
    the row of where it got and its rate until then, with the refusal's message, not a lost run."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_replay
    import table

    from fairalloc.core.errors import FairallocError

    def refused(instance, jobs, mechanism, *, log, **_):
        for j in jobs[:2]:
            log.write(j.submit, "submit", j, j.pods)
        raise FairallocError("too many steps (MAX_REPLAY_STEPS)")

    monkeypatch.setattr(bench_replay, "replay", refused)
    instance = bench_replay.week_case("mesos-drf", 0)[0]
    file = bench_replay.write_week(tmp_path / "w.jsonl", instance, 40, 0)
    row = bench_replay.week_measure("mesos-drf", 0, file, 600)
    assert row["refused"] == "too many steps (MAX_REPLAY_STEPS)" and not row["finished"]
    assert row["events"] == 2 and row["total_events"] == 80 and row["days_reached"] >= 0
    week = {"jobs": 40, "days": 7.0, "queues": 100, "target_cpu_seconds": 600.0, "rows": [row]}
    assert table.week(week)[0][1].startswith("refused (too many steps (MAX_REPLAY_STEPS)) at day ")
