"""`fairalloc simulate`: runs end to end for every scheduler, writes figures, refuses bad workloads."""

import json

import pytest
import yaml

from fairalloc.testing import run_cli as run


def test_7_2_comparison_runs_for_every_scheduler_and_writes_figures(capsys, tmp_path):
    schedulers = "drf,slots:3,slots:6,slots:4:oc,capacity:4,cpu-fair,fifo"
    code, out, err = run(
        capsys,
        "simulate",
        "drf-7.2",
        "--nodes",
        "8",
        "--scheduler",
        schedulers,
        "--plot",
        str(tmp_path),
        "--format",
        "json",
        "--no-progress",
    )
    assert code == 0, err
    results = json.loads(out)
    assert [r["scheduler"] for r in results] == schedulers.split(",")
    assert all(r["tasks_finished"] > 0 for r in results)
    drf = results[0]
    assert drf["fairness_error"] < min(r["fairness_error"] for r in results[1:4])
    assert (tmp_path / "utilisation.png").stat().st_size > 0 and (tmp_path / "dominant_shares.png").exists()


def job(phases):
    return {"name": "j", "owner": "u", "submit": 0, "phases": phases}


@pytest.mark.parametrize(
    "phases, message",
    [
        ({"map": {"count": 2, "cpu": 1, "mem": 1, "duration": -5}}, "duration"),
        ({"map": {"count": 2, "cpu": 100, "mem": 1, "duration": 5}}, "larger than every node"),
        ({"reduce": {"count": 1, "cpu": 1, "mem": 1, "duration": 5}}, "reduce"),
    ],
)
def test_bad_workloads_get_one_line(tmp_path, capsys, phases, message):
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump({"nodes": {"count": 2, "cpu": 8, "mem": 8}, "jobs": [job(phases)]}))
    code, out, err = run(capsys, "simulate", str(path), "--scheduler", "drf")
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_unknown_scheduler_and_workload(capsys):
    code, _, err = run(capsys, "simulate", "drf-7.2", "--scheduler", "drf,lottery")
    assert code == 2 and err.startswith("fairalloc: mechanism: unknown mechanism 'lottery'") and err.count("\n") == 1
    code, _, err = run(capsys, "simulate", "nope", "--scheduler", "drf")
    assert code == 2 and "neither a file nor a generated workload" in err


def test_a_class_with_no_completed_job_shows_a_dash(capsys):
    """On 4 nodes no large job of the 7.2 set-up finishes: its mean completion time is '-'."""
    from fairalloc.testing import run_cli

    code, out, err = run_cli(capsys, "simulate", "drf-7.2", "--nodes", "4", "--scheduler", "drf")
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("drf "))
    assert row.split()[1] == "0" and row.split()[3] == "-"
