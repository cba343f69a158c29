"""``fairalloc simulate WORKLOAD --case CASE``: the job-workload mode (table, JSON, CSV, the
event log), and one line with exit code 2 for bad input, nothing written."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml

from fairalloc.cli import main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_bundled_example_replays_under_several_mechanisms(capsys, tmp_path):
    events = tmp_path / "events.csv"
    code, out, err = run(
        capsys, "simulate", "two-teams-day", "--case", "replay-two-teams", "--scheduler", "drf,kueue",
        "--format", "json", "--events", events, "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    runs = json.loads(out)
    assert [r["scheduler"] for r in runs] == ["drf", "kueue"]
    for r in runs:
        total = sum(q["submitted"] for q in r["queues"].values())
        done = sum(q["completed"] + q["running"] + q["waiting"] for q in r["queues"].values())
        assert total == done == 30
    rows = list(csv.DictReader(io.StringIO(events.read_text())))
    assert {r["scheduler"] for r in rows} == {"drf", "kueue"}
    assert sum(r["event"] == "submit" for r in rows) == 60 and rows[0]["cpu"] == "4"


def test_table_and_csv(capsys):
    code, out, _ = run(capsys, "simulate", "two-teams-day", "--case", "replay-two-teams", "--no-progress")
    assert code == 0 and "drf: ended at t=" in out and "team-b" in out  # the case has no policy: drf
    code, out, _ = run(capsys, "simulate", "two-teams-day", "--case", "replay-two-teams", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["queue"] for r in rows] == ["team-a", "team-b"] and rows[1]["submitted"] == "24"


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ({"queue": "team-c", "request": {"cpu": 1}}, "jobs.j.queue: unknown queue 'team-c'; did you mean"),
        ({"queue": "team-a", "request": {"cpu": 9}}, "jobs.j.request.cpu: a pod of 9 is larger than the capacity (8)"),
        ({"queue": "team-a", "request": {"cpu": 1}, "submit": -5}, "jobs.j.submit: input should be greater than"),
    ],
)
def test_bad_jobs_are_one_line_and_exit_2_with_nothing_written(capsys, tmp_path, job, message):
    workload = tmp_path / "w.yaml"
    workload.write_text(yaml.safe_dump({"jobs": {"j": job}}))
    events = tmp_path / "events.jsonl"
    code, out, err = run(capsys, "simulate", workload, "--case", "replay-two-teams", "--events", events)
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0] and f"(in {workload})" in lines[0], err
    assert not events.exists() and list(tmp_path.iterdir()) == [workload]


def test_events_without_a_case_and_csv_for_task_workloads_are_refused(capsys):
    code, _, err = run(capsys, "simulate", "drf-7.1", "--events", "x.csv")
    assert code == 2 and "--events: the event log is written for job workloads (give --case CASE)" in err
    code, _, err = run(capsys, "simulate", "drf-7.1", "--format", "csv")
    assert code == 2 and "--format: csv is written for job workloads" in err


def test_task_workload_options_are_refused_with_a_case(capsys):
    code, _, err = run(capsys, "simulate", "two-teams-day", "--case", "replay-two-teams", "--nodes", "4")
    assert code == 2 and "--nodes: an option of task workloads" in err


def test_the_help_example_names_bundled_inputs(capsys):
    code, out, _ = run(capsys, "simulate", "--help")
    assert code == 0 and "fairalloc simulate two-teams-day --case replay-two-teams" in out


@pytest.mark.parametrize("name", ["fifo", "slots:3", "quincy"])
def test_a_task_offer_scheduler_on_a_queue_case_is_one_line(capsys, name):
    """The task-offer schedulers (kind online) have no static allocation for the generic adapter to
    follow and no job-level form: one line saying where they run, not the static refusal."""
    code, out, err = run(capsys, "simulate", "two-teams-day", "--case", "replay-two-teams", "--scheduler", name)
    assert code == 2 and not out and err.count("\n") == 1, err
    assert f"mechanism: {name} schedules tasks offered node by node (a task workload, without --case)" in err
