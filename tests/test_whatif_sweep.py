"""``fairalloc whatif --grid``: a grid of what-if settings swept on the sweep engine, one row per
run, checked against single ``whatif`` runs and entitlements derived by hand, resumed after a
SIGKILL of the process (as ``tests/test_sweep.py`` kills a sweep), and refused on a bad grid or
another grid's file.

Most tests share one local Dask cluster (``cluster``) through ``--dask``; the cross-check runs
with ``--workers`` and so starts its own."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from importlib import resources

import pytest
import yaml

from fairalloc.core import limits
from fairalloc.core.tolerances import PROPERTY
from fairalloc.io.cases import load_case
from fairalloc.scheduling.whatif import Alternative, parse_change, whatif
from fairalloc.testing import HANG, dask_cluster, run_cli

CASE, WORKLOAD = "replay-two-teams", "two-teams-day"
WEIGHT, GUARANTEE = "users.team-a.weight=1|3", "users.team-b.guarantee.cpu=2|4"


@pytest.fixture(scope="module")
def cluster():
    with dask_cluster() as address:
        yield address


def run(capsys, *argv):
    return run_cli(capsys, *map(str, argv))


def close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=PROPERTY, abs_tol=PROPERTY)


def same_queues(got: dict, expected: dict) -> bool:
    return got.keys() == expected.keys() and all(
        got[q].keys() == expected[q].keys() and all(close(got[q][m], v) for m, v in expected[q].items())
        for q in expected
    )


def file_trials(path) -> Counter:
    """Trial ids of every line after the header; every line complete JSON."""
    lines = open(path, "rb").read().split(b"\n")
    assert lines[-1] == b"", "the file must end with a complete line"
    return Counter(json.loads(line)["trial"] for line in lines[1:-1])


def test_grid_rows_are_single_whatif_runs(tmp_path, capsys):
    """2 x 2 points and the baseline under kueue and drf: 10 runs, ids in the order workload,
    scheduler, point (baseline first, the last --grid fastest).  Each row's queues are what
    ``whatif`` with that point's changes as one alternative gives (or its baseline).

    By hand, drf's entitlements (docs/formulations.md 9.1: guarantees first, then weighted DRF;
    the case: 8 cpus, guarantees of 4 cpus, requests a 7 and b 3 cpus, cpu the only requested
    resource).  Baseline (trial 5): b gets its 3 within its guarantee, a its 4 and the other 1:
    62.5% and 37.5%.  a's weight 3, b's guarantee 2 (trial 8): a 4 and b 2 first, then a's share
    3s against b's s: 8 x 3s + 8 x s = 8 cpus, s = 1/4, a 6 (>= 4, <= 7) and b 2 (>= 2): 75% and
    25%.  a's weight 3, b's guarantee 4 (trial 9): b's 3 are guaranteed again, 62.5% and 37.5%."""
    out = tmp_path / "rows.jsonl"
    argv = [CASE, WORKLOAD, "--grid", WEIGHT, "--grid", GUARANTEE, "--scheduler", "kueue,drf"]
    code, text, err = run(capsys, "whatif", *argv, "--out", out, "--workers", 2, "--no-progress", "--format", "json")
    assert code == 0, err
    rows = json.loads(text)
    assert [r["trial"] for r in rows] == list(range(10))
    assert [r["scheduler"] for r in rows] == ["kueue"] * 5 + ["drf"] * 5
    points = [{}, *({"users.team-a.weight": w, "users.team-b.guarantee.cpu": g} for w in "13" for g in "24")]
    assert [r["settings"] for r in rows] == points * 2
    case = load_case(CASE)
    for row in rows:
        changes = tuple(parse_change(f"{p}={v}") for p, v in row["settings"].items())
        name = "A" if changes else "baseline"
        single = whatif(case, WORKLOAD, [Alternative("A", changes)] if changes else [], [row["scheduler"]])
        assert row["workload"] == WORKLOAD
        assert same_queues(row["queues"], single.run(row["scheduler"], name).queues), row
    shares = {(r["trial"], q): v["entitlement_share"] for r in rows for q, v in r["queues"].items()}
    assert close(shares[5, "team-a"], 0.625) and close(shares[5, "team-b"], 0.375)
    assert close(shares[8, "team-a"], 0.75) and close(shares[8, "team-b"], 0.25)
    assert close(shares[9, "team-a"], 0.625) and close(shares[9, "team-b"], 0.375)
    assert len({json.dumps(r["queues"], sort_keys=True) for r in rows}) > 2  # the settings matter
    assert file_trials(out) == Counter(range(10))

    # a rerun runs nothing (no cluster: this address is unreachable) and reports every row again
    again = [*argv, "--out", out, "--dask", "tcp://127.0.0.1:1", "--format", "json"]
    code, text, err = run(capsys, "whatif", *again)
    assert code == 0, err
    assert json.loads(text) == rows
    # the table and the CSV: one line per run and queue
    code, text, _ = run(capsys, "whatif", *again[:-2], "--format", "csv")
    lines = text.splitlines()
    assert lines[0].split(",")[:7] == [
        "trial",
        "workload",
        "scheduler",
        "users.team-a.weight",
        "users.team-b.guarantee.cpu",
        "queue",
        "entitlement_share",
    ]
    assert len(lines) == 1 + 10 * 2 and lines[1].startswith("0,two-teams-day,kueue,(case),(case),team-a,0.5,")
    code, text, _ = run(capsys, "whatif", *again[:-2])
    assert code == 0 and text.startswith(f"{CASE}: 10 runs in {out}\n") and "(case)" in text


def test_several_workloads_one_row_per_run(tmp_path, capsys, cluster):
    """The bundled workload and a copy of it in a file: ids workload first, then the policy, then
    the point; the copy's rows are the bundled one's, named after its file."""
    copy = tmp_path / "copy.yaml"
    copy.write_text((resources.files("fairalloc.case_library.workloads") / f"{WORKLOAD}.yaml").read_text())
    argv = [CASE, WORKLOAD, copy, "--grid", WEIGHT, "--scheduler", "drf", "--out", tmp_path / "rows.jsonl"]
    code, text, err = run(capsys, "whatif", *argv, "--dask", cluster, "--format", "json")
    assert code == 0, err
    rows = json.loads(text)
    assert [(r["trial"], r["workload"]) for r in rows] == [(t, WORKLOAD if t < 3 else "copy") for t in range(6)]
    assert [r["settings"] for r in rows] == [{}, {"users.team-a.weight": "1"}, {"users.team-a.weight": "3"}] * 2
    for first, second in zip(rows[:3], rows[3:]):
        assert same_queues(second["queues"], first["queues"])


def slow_workload(path) -> None:
    """Enough jobs that one drf replay takes a fraction of a second: the kill finds the sweep running."""
    jobs = {
        f"j{k}": {
            "queue": "team-b" if k % 3 == 0 else "team-a",
            "request": {"cpu": 1 + k % 3, "memory": 2},
            "submit": 5 * k,
            "runtime": 60 + (37 * k) % 400,
        }
        for k in range(600)
    }
    path.write_text(yaml.safe_dump({"jobs": jobs}, sort_keys=False))


def test_resume_after_sigkill(tmp_path, cluster, capsys):
    """The CLI's sweep killed (``kill -9`` of its process group, the workers too) after its first
    rows, a torn last line added as if killed mid-write, then the same command run again: every
    row once, the old lines kept as they were, and the rows those of an uninterrupted sweep."""
    workload = tmp_path / "many-jobs.yaml"
    slow_workload(workload)
    grid = [CASE, workload, "--grid", "users.team-a.weight=1|2|3|4|5", "--grid", "users.team-b.guarantee.cpu=2|3|4|5"]
    argv = [*grid, "--scheduler", "drf", "--no-progress", "--format", "json"]
    total = 21
    out = tmp_path / "rows.jsonl"
    command = [sys.executable, "-m", "fairalloc", "whatif", *map(str, argv), "--out", str(out), "--workers", "1"]
    proc = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
    )
    try:
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") > 2:  # the header and a chunk's rows
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the sweep ended before the kill: {proc.communicate()}"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    assert err == b"", err.decode()[-2000:]
    before = file_trials(out)
    assert 1 <= len(before) < total and max(before.values()) == 1, before
    with open(out, "ab") as fh:
        fh.write(b'{"trial": 20, "workload": "many-jo')
    prefix = out.read_bytes().rsplit(b"\n", 1)[0] + b"\n"

    code, text, err = run(capsys, "whatif", *argv, "--out", out, "--dask", cluster)
    assert code == 0, err
    resumed = json.loads(text)
    assert file_trials(out) == Counter(range(total))  # each row exactly once
    assert out.read_bytes().startswith(prefix)

    whole = tmp_path / "whole.jsonl"
    code, text, err = run(capsys, "whatif", *argv, "--out", whole, "--dask", cluster)
    assert code == 0, err
    assert resumed == json.loads(text)
    assert len({json.dumps(r["queues"], sort_keys=True) for r in resumed}) > 2


def test_a_file_of_another_grid_is_refused(tmp_path, capsys, cluster):
    """Another value, axis or policy, or the same grid on an edited workload: refused, the file as it was."""
    workload = tmp_path / "day.yaml"
    workload.write_text((resources.files("fairalloc.case_library.workloads") / f"{WORKLOAD}.yaml").read_text())
    out = tmp_path / "rows.jsonl"
    engine = ["--out", out, "--dask", cluster]
    grid = [CASE, workload, "--grid", WEIGHT, "--scheduler", "drf"]
    assert run(capsys, "whatif", *grid, *engine)[0] == 0
    content = out.read_bytes()
    others = [
        [CASE, workload, "--grid", "users.team-a.weight=1|2", "--scheduler", "drf"],
        [CASE, workload, "--grid", WEIGHT, "--grid", "users.team-b.weight=1|2", "--scheduler", "drf"],
        [CASE, workload, "--grid", WEIGHT, "--scheduler", "kueue"],
        [CASE, WORKLOAD, "--grid", WEIGHT, "--scheduler", "drf"],
    ]
    for other in others:
        code, text, err = run(capsys, "whatif", *other, *engine)
        assert code == 2 and text == ""
        assert err.startswith(f"fairalloc: {out}: written by another sweep") and err.count("\n") == 1, err
    workload.write_text(workload.read_text().replace("runtime: 900", "runtime: 901", 1))
    code, _, err = run(capsys, "whatif", *grid, *engine)
    assert code == 2 and "written by another sweep" in err
    assert out.read_bytes() == content


BAD = [
    (["--grid", "users.team-a.wieght=1|2"], "users.team-a.wieght: unknown field 'wieght'; did you mean 'weight'?"),
    (["--grid", "users.team-c.weight=1|2"], "unknown queue 'team-c'"),
    (["--grid", "users.team-a.weight=1|{cpu: 2"], "--grid users.team-a.weight"),
    (["--grid", "users.team-a.weight=1|-2"], "users.team-a.weight=-2: users.team-a.weight: must be a finite number"),
    (["--grid", "users.team-a.weight="], "--grid users.team-a.weight: no values after '='"),
    (["--grid", "users.team-a.weight=1||2"], "an empty value between '|'"),
    (["--grid", "users.team-a.weight"], "--grid: expected PATH=V1|V2|..."),
    (["--grid", "users.team-a.weight=1|1"], "the value 1 is given twice"),
    (["--grid", "users.team-a.weight=1", "--grid", "users.team-a.weight=2"], "the path is given twice"),
    (["--grid", "scheduler=drf|kueue"], "the policies are --scheduler's"),
    (["--grid", "resources.cpu=16|2"], "resources.cpu=2: cycle.running.a-run.request.cpu: a pod of 6 is larger"),
    (
        [
            arg
            for k in range(2)
            for arg in ("--grid", f"users.team-{'ab'[k]}.weight=" + "|".join(str(v) for v in range(1, 102)))
        ],
        f"--grid: 10202 runs (1 workload(s) x 1 scheduler(s) x 10202 points with the baseline), more than the "
        f"{limits.MAX_WHATIF_RUNS:,} of one grid (fairalloc.core.limits.MAX_WHATIF_RUNS)",
    ),
    (["--grid", WEIGHT, "--set", "users.team-a.weight=2"], "--set: not with --grid"),
    (["--grid", WEIGHT, "--at", "0"], "--at: not with --grid"),
    (["--grid", WEIGHT, "--workers", "0"], "--workers: must be between 1 and 64"),
]


@pytest.mark.parametrize(("extra", "message"), BAD, ids=[m[:40] for _, m in BAD])
def test_bad_grids_are_one_line_before_anything_runs(tmp_path, capsys, extra, message):
    out = tmp_path / "rows.jsonl"
    code, text, err = run(capsys, "whatif", CASE, WORKLOAD, *extra, "--scheduler", "drf", "--out", out)
    assert code == 2 and text == "", err
    assert err.startswith("fairalloc: ") and err.count("\n") == 1, err
    assert message in err, err
    assert not out.exists()


def test_a_workload_is_read_against_every_point_before_anything_runs(tmp_path, capsys):
    """A job of 7 cpus fits the case's 8 and 16, not 6 (with team-b's guarantee down to 2 cpus, so
    that the guarantees fit 6): the last point is refused, no file written."""
    workload, out = tmp_path / "wide.yaml", tmp_path / "rows.jsonl"
    workload.write_text("jobs:\n  wide: {queue: team-a, request: {cpu: 7}, runtime: 10}\n")
    grid = ["--grid", "users.team-b.guarantee.cpu=2", "--grid", "resources.cpu=16|6"]
    code, text, err = run(capsys, "whatif", CASE, workload, *grid, "--out", out)
    assert code == 2 and text == "" and err.count("\n") == 1, err
    assert err.startswith("fairalloc: users.team-b.guarantee.cpu=2, resources.cpu=6: jobs.wide.request.cpu: "), err
    assert "wide.yaml" in err
    assert not out.exists()


def test_sweep_options_need_a_grid_and_a_grid_needs_out(tmp_path, capsys):
    code, _, err = run(capsys, "whatif", CASE, WORKLOAD, "--grid", WEIGHT)
    assert code == 2 and "--grid: give --out ROWS.jsonl" in err
    code, _, err = run(capsys, "whatif", CASE, WORKLOAD, "--set", "users.team-a.weight=2", "--out", tmp_path / "x")
    assert code == 2 and "--out: an option of a sweep (give --grid" in err
    code, _, err = run(capsys, "whatif", CASE, WORKLOAD, WORKLOAD, "--set", "users.team-a.weight=2")
    assert code == 2 and "WORKLOAD: 2 workloads need --grid" in err
    assert not (tmp_path / "x").exists()
