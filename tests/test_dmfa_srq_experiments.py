"""paper_examples/dmfa_srq_2016.py: the same files on every run, resumable from its results file,
and every trial satisfies what must hold (sharing incentive, utilisation in [0, 1], a saturated
resource at the end, the static optimum proportional to q and at least DMFA-SRQ's weighted minimum)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from fairalloc.analysis.sweep import read_results
from fairalloc.scheduling.traces import decode_trial

SCRIPT = Path(__file__).resolve().parent.parent / "paper_examples" / "dmfa_srq_2016.py"
FILES = ["fig3_4.png", "fig5.png", "fig6.png", "fig7_8.png", "summary.md", "summary.json"]
TOL = 1e-9


def run(out: Path, *extra: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--out",
            str(out),
            "--runs",
            "6",
            "--users",
            "5,20",
            "--workers",
            "2",
            "--seed",
            "3",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def check_trial(r: dict) -> None:
    n, run_ = decode_trial(r["trial"])
    assert (r["users"], r["run"]) == (n, run_)
    for method in ("dmfa", "static"):
        assert r[f"{method}_si_slack"] >= -TOL * r["min_q"]  # x_i >= q_i
        assert r[f"{method}_min_weighted"] >= 1 - TOL  # the same, as min x_i / q_i
        assert r[f"{method}_min_share"] >= r["min_q"] * (1 - TOL)
        assert r[f"{method}_sum_shares"] >= 1 - TOL  # sum x_i >= sum q_i = 1
        util = np.array([r[f"{method}_util_cpu"], r[f"{method}_util_mem"]])
        assert np.all(util >= 0) and np.all(util <= 1 + TOL)
        assert util.max() >= 1 - TOL  # a resource is used up
    assert r["static_discordant"] == 0.0  # Eq. 5: x_i = q_i M*
    assert r["dmfa_min_weighted"] <= r["static_min_weighted"] * (1 + TOL)  # M^n <= M*
    assert abs(r["static_min_weighted"] - r["static_M"]) <= TOL * r["static_M"]
    assert abs(r["dmfa_min_weighted"] - r["final_M"]) <= TOL * r["final_M"]


def test_script_is_deterministic_resumable_and_sound(tmp_path):
    first = run(tmp_path / "a", "--results", str(tmp_path / "a.jsonl"))
    run(tmp_path / "b", "--results", str(tmp_path / "b.jsonl"))
    for name in FILES:
        a, b = (tmp_path / "a" / name).read_bytes(), (tmp_path / "b" / name).read_bytes()
        assert a and a == b, name
    for name in FILES[:4]:
        assert (tmp_path / "a" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "weighted DRF" in first.stdout and "DMFA-SRQ" in first.stdout

    results = read_results(tmp_path / "a.jsonl")
    assert sorted((r["users"], r["run"]) for r in results) == [(n, k) for n in (5, 20) for k in range(6)]
    for r in results:
        check_trial(r)
    assert read_results(tmp_path / "b.jsonl") == results

    # a finished results file: nothing runs again and the files come out the same
    before = (tmp_path / "a.jsonl").read_bytes()
    run(tmp_path / "c", "--results", str(tmp_path / "a.jsonl"))
    assert (tmp_path / "a.jsonl").read_bytes() == before
    for name in FILES:
        assert (tmp_path / "c" / name).read_bytes() == (tmp_path / "a" / name).read_bytes(), name

    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["runs"] == 6 and summary["users"] == [5, 20] and summary["demands"]["kind"] == "synthetic"
    for n in ("5", "20"):
        entry = summary["per_users"][n]
        assert entry["runs"] == 6
        for method in ("dmfa", "static"):
            c = entry["checks"][method]
            assert c["sharing_incentive_min_ratio"] >= 1 - TOL
            assert c["min_share_at_least_min_q"] and c["utilization_in_0_1"] and c["a_resource_saturated_every_run"]
            s = entry[method]
            for metric in ("util_cpu", "util_mem"):
                assert 0 <= s[metric]["min"] <= s[metric]["mean"] <= s[metric]["max"] <= 1 + TOL
            assert s["min_share"]["min"] >= entry["min_q"]["min"] * (1 - TOL)
        sample = np.array(entry["sample_run_0"])
        assert sample.shape == (min(20, int(n)), 4)
        assert np.all(np.diff(sample[:, 0]) >= 0)  # sorted by q
        assert np.all(sample[:, 1] >= sample[:, 0] * (1 - TOL))  # DMFA-SRQ: x_i >= q_i
        assert np.allclose(sample[:, 2] / sample[:, 0], sample[0, 2] / sample[0, 0])  # static: x_i = q_i M*
    text = (tmp_path / "a" / "summary.md").read_text()
    assert "SYNTHETIC" in text and "| NO " not in text
    assert "THE PAPER'S CLAIM DOES NOT HOLD" in text and "dmfa-srq-shared-monotonicity" in text


def test_script_on_a_task_events_file(tmp_path):
    rng = np.random.default_rng(0)
    lines = []
    for job in range(3):
        for task in range(12):
            cpu, mem = rng.uniform(0.01, 0.3, 2)
            lines.append(f"{job * 1000},,{600000 + job},{task},,0,user{job},0,0,{cpu:.5f},{mem:.5f},0.001,0")
            lines.append(f"{job * 1000 + 5},,{600000 + job},{task},77,1,user{job},0,0,{cpu:.5f},{mem:.5f},0.001,0")
    trace = tmp_path / "part-00000-of-00500.csv"
    trace.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--out",
            str(tmp_path / "t"),
            "--runs",
            "3",
            "--users",
            "5,20",
            "--workers",
            "1",
            "--trace",
            str(trace),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert summary["demands"]["kind"] == "trace" and summary["demands"]["tasks"] == 36
    assert "Google cluster trace 2011" in (tmp_path / "t" / "summary.md").read_text()

    bad = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--out",
            str(tmp_path / "u"),
            "--runs",
            "2",
            "--users",
            "50",
            "--trace",
            str(trace),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert bad.returncode == 2 and "36 usable tasks, fewer than the 50 users" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
