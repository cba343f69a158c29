"""fairalloc.scheduling.traces: the Google 2011 task_events loader on a small file in the trace's exact schema,
its one-line errors, the synthetic generator, the DMFA-SRQ instance and trial, and the trace-scale replay."""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fairalloc
from fairalloc.core.errors import CaseError, UnknownNameError
from fairalloc.scheduling.traces import (
    REPLAY_COLUMNS,
    TASK_EVENTS_COLUMNS,
    decode_trial,
    dmfa_instance,
    dmfa_srq_trial,
    load_google_task_events,
    replay_arrivals,
    synthetic_google_like,
    trial_id,
)

# timestamp, missing info, job ID, task index, machine ID, event type, user, scheduling class, priority,
# CPU request, memory request, disk space request, different machine restrictions
# event types: 0 SUBMIT, 1 SCHEDULE, 2 EVICT, 3 FAIL, 4 FINISH, 5 KILL, 6 LOST, 7/8 UPDATE
LINES = [
    "0,2,3418309,0,,0,70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=,3,9,0.125,0.07446,0.0004244,0",  # A: job 3418309 task 0
    "0,2,3418309,1,,0,70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=,3,9,0.125,0.07446,0.0004244,0",  # B: task 1
    "5611824441,,3418309,0,4155527081,1,70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=,3,9,0.125,0.07446,0.0004244,0",  # schedule
    "5612000000,,3418309,0,4155527081,2,70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=,3,9,0.125,0.07446,0.0004244,0",  # evict
    "5612100000,,3418309,0,,0,70s3v5qRyCO/1PCdI6fVXnrW8FU/w+5CKRSa72xgcIo=,3,9,0.25,0.1,0.0004244,0",  # resubmit of A: dup
    "5612200000,,6251639646,0,,0,fJYeclskJqPWsAT6TX/r9X5OiIZpSEb2PBGliYAOMxM=,0,2,0.0125,,0,0",  # memory missing
    "5612300000,,6251639646,0,,0,fJYeclskJqPWsAT6TX/r9X5OiIZpSEb2PBGliYAOMxM=,0,2,0.0125,0.0159,0,0",  # C: first usable
    "5612400000,,6251639646,1,,0,fJYeclskJqPWsAT6TX/r9X5OiIZpSEb2PBGliYAOMxM=,0,2,0,0.0159,0,0",  # CPU 0: dropped
    "5612500000,,6251639646,2,,4,fJYeclskJqPWsAT6TX/r9X5OiIZpSEb2PBGliYAOMxM=,0,2,0.03,0.02,0,0",  # finish, not submit
    "5612600000,,6251639647,0,,0,fJYeclskJqPWsAT6TX/r9X5OiIZpSEb2PBGliYAOMxM=,1,0,0.0625,0.03174,0,1",  # D
    "5612700000,,6251639647,0,123,5,fJYeclskJqPWsAT6TX/r9X5OiIZpSEb2PBGliYAOMxM=,1,0,0.0625,0.03174,0,1",  # kill
    "5612800000,,6251639647,0,,8,fJYeclskJqPWsAT6TX/r9X5OiIZpSEb2PBGliYAOMxM=,1,0,0.07,0.04,0,1",  # update
]
EXPECTED = [[0.125, 0.07446], [0.125, 0.07446], [0.0125, 0.0159], [0.0625, 0.03174]]


@pytest.fixture
def trace(tmp_path):
    assert all(len(line.split(",")) == len(TASK_EVENTS_COLUMNS) == 13 for line in LINES)
    path = tmp_path / "part-00000-of-00500.csv"
    path.write_text("\n".join(LINES) + "\n")
    gz = tmp_path / "part-00000-of-00500.csv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
    return path, gz


def test_loader_keeps_first_usable_submit_per_task(trace):
    path, gz = trace
    rows = load_google_task_events(path)
    assert rows.shape == (4, 2) and rows.dtype == float
    assert rows.tolist() == EXPECTED
    assert load_google_task_events(str(gz)).tolist() == EXPECTED  # gzip, path as str
    assert load_google_task_events([gz]).tolist() == EXPECTED  # a list of one


def test_loader_deduplicates_across_files_and_stops_at_max_tasks(trace, tmp_path):
    path, gz = trace
    assert load_google_task_events([path, gz]).tolist() == EXPECTED  # the same tasks twice
    other = tmp_path / "part-00001-of-00500.csv"
    other.write_text("6000000000,,7000000001,0,,0,u,0,0,0.5,0.25,0,0\n")
    assert load_google_task_events([gz, other]).tolist() == EXPECTED + [[0.5, 0.25]]
    assert load_google_task_events([path, other], max_tasks=2).tolist() == EXPECTED[:2]
    with pytest.raises(CaseError, match="max_tasks: must be a positive integer"):
        load_google_task_events(path, max_tasks=0)


def one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text
    return text


def test_loader_errors(trace, tmp_path):
    path, gz = trace
    with pytest.raises(CaseError) as e:
        load_google_task_events(tmp_path / "nope.csv.gz")
    assert one_line(e).endswith("nope.csv.gz: no such file")

    short = tmp_path / "short.csv"
    short.write_text(LINES[0] + "\n" + ",".join(LINES[1].split(",")[:12]) + "\n")
    with pytest.raises(CaseError) as e:
        load_google_task_events(short)
    assert "short.csv, line 2: 12 columns, expected 13" in one_line(e)

    bad = tmp_path / "bad.csv"
    bad.write_text(LINES[0] + "\n" + LINES[1].replace("0.125", "half") + "\n")
    with pytest.raises(CaseError) as e:
        load_google_task_events(bad)
    assert "bad.csv, line 2: CPU request 'half' is not a number" in one_line(e)

    bad.write_text(LINES[0].replace("0.07446", "nan") + "\n")
    with pytest.raises(CaseError, match="line 1: memory request 'nan' is not a number"):
        load_google_task_events(bad)

    bad.write_text(LINES[0].replace(",0,70s3", ",SUBMIT,70s3") + "\n")
    with pytest.raises(CaseError, match="line 1: event type 'SUBMIT' is not an integer"):
        load_google_task_events(bad)

    unusable = tmp_path / "unusable.csv"
    unusable.write_text("\n".join(LINES[i] for i in (2, 3, 5, 7, 8, 10)) + "\n")
    with pytest.raises(CaseError) as e:
        load_google_task_events(unusable)
    assert "unusable.csv: no usable task" in one_line(e)

    damaged = tmp_path / "damaged.csv.gz"
    damaged.write_bytes(gz.read_bytes()[:40])
    with pytest.raises(CaseError) as e:
        load_google_task_events(damaged)
    assert "damaged.csv.gz: damaged gzip file" in one_line(e)

    with pytest.raises(CaseError, match="is a directory"):
        load_google_task_events(tmp_path)
    with pytest.raises(CaseError, match="no task_events file given"):
        load_google_task_events([])


def test_synthetic_generator_shape_range_determinism():
    a = synthetic_google_like(5000, np.random.default_rng(7))
    assert a.shape == (5000, 2) and a.dtype == float
    assert np.all(a > 0) and np.all(a <= 1)
    assert np.array_equal(a, synthetic_google_like(5000, np.random.default_rng(7)))
    assert not np.array_equal(a, synthetic_google_like(5000, np.random.default_rng(8)))
    median = np.median(a, axis=0)
    assert np.all(median < 0.05)  # most tasks are small...
    assert np.all(np.percentile(a, 99.5, axis=0) > 10 * median)  # ...with a heavy right tail
    assert np.corrcoef(np.log(a).T)[0, 1] > 0.3  # CPU and memory correlated
    assert synthetic_google_like(0, np.random.default_rng(0)).shape == (0, 2)
    assert "SYNTHETIC" in synthetic_google_like.__doc__ and "NOT the trace" in synthetic_google_like.__doc__


def test_dmfa_instance_and_trial():
    inst = dmfa_instance([[0.5, 0.25], [0.1, 0.2]], [0.7, 0.3], "two")
    assert inst.resources == ("cpu", "mem") and inst.users == ("1", "2") and inst.name == "two"
    assert inst.capacity.tolist() == [1.0, 1.0] and inst.shared.tolist() == [0.7, 0.3]
    with pytest.raises(CaseError, match=r"expected an \(n, 2\) array"):
        dmfa_instance([[1, 2, 3]], [1.0], "three resources")

    assert decode_trial(trial_id(100, 42)) == (100, 42)
    r = dmfa_srq_trial(trial_id(30, 0), seed=1)
    assert r == dmfa_srq_trial(trial_id(30, 0), seed=1)
    assert r["users"] == 30 and r["source"] == "synthetic" and len(r["sample"]) == 20
    qs = [row[0] for row in r["sample"]]
    assert qs == sorted(qs)
    static = np.array([row[2] for row in r["sample"]])
    assert np.allclose(static / np.array(qs), r["static_M"])  # Eq. 5 is proportional to q
    assert r["static_discordant"] == 0.0
    assert "sample" not in dmfa_srq_trial(trial_id(30, 1), seed=1)
    rows = np.array(EXPECTED * 10)
    t = dmfa_srq_trial(trial_id(8, 3), seed=1, trace_rows=rows)
    assert t["source"] == "trace" and t["dmfa_si_slack"] >= -1e-12
    with pytest.raises(CaseError, match="fewer than the 50 users"):
        dmfa_srq_trial(trial_id(50, 0), trace_rows=rows)


# -- 4 resources, and the trace-scale replay -------------------------------------------------------------------

REPLAY = Path(__file__).resolve().parent.parent / "paper_examples" / "dmfa_srq_replay.py"


def test_loader_reads_the_disk_request_too(trace):
    path, _ = trace
    rows = load_google_task_events(path, resources=("cpu", "mem", "disk"))
    assert rows.tolist() == [row + [0.0004244] for row in EXPECTED[:2]]  # C and D ask for no disk: not kept
    assert load_google_task_events(path, resources=("disk",)).tolist() == [[0.0004244], [0.0004244]]
    with pytest.raises(UnknownNameError, match="unknown request 'dsk'; did you mean 'disk'"):
        load_google_task_events(path, resources=("cpu", "dsk"))


def test_synthetic_columns_beyond_two_leave_the_first_two_alone():
    two = synthetic_google_like(3000, np.random.default_rng(5))
    four = synthetic_google_like(3000, np.random.default_rng(5), 4)
    assert four.shape == (3000, 4) and np.array_equal(four[:, :2], two)
    assert np.all(four > 0) and np.all(four <= 1) and np.all(np.median(four, axis=0) < 0.05)
    assert np.all(np.corrcoef(np.log(four).T)[0, 1:] > 0.3)  # each correlated with CPU
    with pytest.raises(CaseError, match="resources: between 1 and 4"):
        synthetic_google_like(10, np.random.default_rng(0), 5)


def test_replay_streams_what_the_mechanism_computes(tmp_path):
    rng = np.random.default_rng(11)
    n = 700
    demands, q = synthetic_google_like(n, rng, 3), rng.dirichlet(np.ones(n))
    out = tmp_path / "replay.csv"
    summary = replay_arrivals(demands, q, out, resources=("cpu", "mem", "disk"), progress=False)
    inst = fairalloc.Instance.from_arrays(np.ones(3), demands, resources=["cpu", "mem", "disk"], shared=q)
    history = fairalloc.solve(inst, "dmfa-srq").history  # the rows must be what solve computes, unrounded
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == n and list(rows[0])[:7] == list(REPLAY_COLUMNS)
    assert [float(r["M"]) for r in rows] == history.M.tolist()  # written exactly (shortest repr)
    assert [[float(r[f"util_{j}"]) for j in ("cpu", "mem", "disk")] for r in rows] == history.used.tolist()
    assert [r["binding"].split() for r in rows] == [[inst.resources[j] for j in b] for b in history.binding]
    shares = np.array([float(r["dominant_share"]) for r in rows])
    assert np.allclose(shares, [history.x_at(k)[k - 1] for k in range(1, n + 1)], rtol=1e-12, atol=0)
    assert summary["arrivals"] == n and summary["final_M"] == history.M[-1]
    assert summary["sharing_incentive_slack"] >= -1e-12  # M^k >= 1 at every arrival
    assert not list(tmp_path.glob("*.part"))


def run_replay(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPLAY), *args], capture_output=True, text=True, timeout=300)


def test_replay_script_on_synthetic_arrivals_and_on_a_task_events_file(trace, tmp_path):
    done = run_replay("--arrivals", "3000", "--out", str(tmp_path / "s.csv"), "--format", "json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["arrivals"] == 3000 and summary["resources"] == ["cpu", "mem", "disk", "net"]
    assert "SYNTHETIC" in summary["source"] and summary["final_M"] >= 1
    assert len((tmp_path / "s.csv").read_text().splitlines()) == 3001
    path, gz = trace
    done = run_replay("--trace", str(path), str(gz), "--resources", "cpu,mem,disk", "--out", str(tmp_path / "t.csv"))
    assert done.returncode == 0, done.stderr
    assert "Google cluster trace 2011" in done.stdout and "arrivals                 2" in done.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--resources", "cpu,gpu"], "--resources: the synthetic generator's columns are, in order, cpu,mem,disk,net"),
        (["--arrivals", "0"], "--arrivals: must be at least 1"),
        (["--trace", "nope.csv"], "nope.csv: no such file"),
    ],
)
def test_replay_script_bad_input_is_one_line(tmp_path, args, message):
    done = run_replay(*args, "--out", str(tmp_path / "x.csv"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert not (tmp_path / "x.csv").exists()
