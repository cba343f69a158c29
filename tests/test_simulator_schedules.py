"""The simulator's schedules on the paper set-ups are pinned: every task's job, phase, index, node,
start and end under each scheduler, against ``tests/data/simulator_schedules.json.gz``.

The reference was written by the simulator as it was before issue 18's speed-ups (commit 1ea22ea),
with ``python tests/test_simulator_schedules.py`` (times rounded to 1e-6 s); a change that makes the
simulator faster must leave it valid. Integers and names compare exactly, times within the file's
rounding plus :data:`~fairalloc.core.tolerances.AGREEMENT` relative, never at the last bit. Regenerate
it only for a deliberate change of schedules, and say why in the commit.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from fairalloc.core.tolerances import AGREEMENT
from fairalloc.scheduling.simulator import SimState, simulate
from fairalloc.scheduling.workloads import drf_7_1, drf_7_2, load_yaml, mfs_workload

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tests" / "data" / "simulator_schedules.json.gz"
ROUNDING = 1e-6  # the file's times are rounded to this


def setups() -> dict:
    """name -> (workload maker, schedulers): the paper examples' set-ups in their quick sizes
    (``paper_examples/drf_nsdi11_experiments.py --quick``, ``mfs_hadoop.py --quick``) and the GPU
    example, each under the schedulers the examples compare plus hdrf, fifo and quincy."""
    return {
        "drf-7.1": (lambda: drf_7_1(nodes=8, period=60.0), ["drf", "hdrf", "fifo", "slots:4:oc"]),
        "drf-7.2": (
            lambda: drf_7_2(nodes=8, horizon=300.0, tasks_per_job=20),
            ["drf", "slots:3", "slots:6", "cpu-fair", "slots:3:oc", "slots:6:oc", "cpu-fair:oc"]
            + ["capacity:4", "mfs", "quincy"],
        ),
        "mfs-mixed": (lambda: mfs_workload("mixed", nodes=5), ["mfs", "drf", "capacity:13:oc"]),
        "gpu-two-pools": (
            lambda: load_yaml(ROOT / "paper_examples" / "workloads" / "gpu-two-pools.yaml"),
            ["drf", "hdrf", "mfs", "fifo"],
        ),
    }


def schedule(workload, scheduler: str) -> dict:
    """What the reference keeps of one run: the counters and every task in launch order as
    ``[job, phase, index, node, start, end]``."""
    r = simulate(workload, scheduler, record_tasks=True, progress=False)
    return {
        "events": r.events,
        "tasks_started": r.tasks_started,
        "tasks_finished": r.tasks_finished,
        "cancelled": r.cancelled,
        "completed": r.completed,
        "end_time": round(r.end_time, 6),
        "tasks": [[t.job, t.phase, t.index, t.node, round(t.start, 6), round(t.end, 6)] for t in r.tasks],
    }


def close(a: float, b: float) -> bool:
    return abs(a - b) <= ROUNDING + AGREEMENT * abs(b)


def differences(now: dict, ref: dict) -> list[str]:
    """Where ``now`` departs from ``ref`` (both as :func:`schedule` gives them): the counters, then the
    first task that differs (empty: the same schedule)."""
    out = [k for k in ("events", "tasks_started", "tasks_finished", "cancelled", "completed") if now[k] != ref[k]]
    if not close(now["end_time"], ref["end_time"]):
        out.append("end_time")
    if len(now["tasks"]) != len(ref["tasks"]):
        out.append(f"{len(now['tasks'])} tasks instead of {len(ref['tasks'])}")
    for k, (a, b) in enumerate(zip(now["tasks"], ref["tasks"])):
        if a[:4] != b[:4] or not (close(a[4], b[4]) and close(a[5], b[5])):
            out.append(f"task {k}: {a} instead of {b}")
            break
    return out


@pytest.fixture(scope="module")
def reference() -> dict:
    with gzip.open(REFERENCE, "rt") as f:
        ref: dict = json.load(f)
    return ref


CASES = [(name, s) for name, (_, schedulers) in setups().items() for s in schedulers]


@pytest.mark.parametrize("name", list(setups()))
def test_schedules_unchanged(name, reference):
    make, schedulers = setups()[name]
    w = make()
    for s in schedulers:
        assert differences(schedule(w, s), reference[name][s]) == [], (name, s)


def test_a_changed_order_is_caught(reference, monkeypatch):
    """Serving each owner's latest runnable job instead of her earliest changes the mfs set-up's
    schedule under drf, and the comparison says where."""

    def latest_job(self, u):
        return next((j for j in reversed(self.user_jobs[u].values()) if j.runnable()), None)

    monkeypatch.setattr(SimState, "next_job", latest_job)
    found = differences(schedule(setups()["mfs-mixed"][0](), "drf"), reference["mfs-mixed"]["drf"])
    assert found and any(d.startswith("task ") for d in found)


def test_the_comparison_is_not_at_the_last_bit(reference):
    ref = reference["drf-7.2"]["drf"]
    now = json.loads(json.dumps(ref))
    now["tasks"][3][4] += 1e-9  # within the rounding: the same
    assert differences(now, ref) == []
    now["tasks"][3][4] += 1e-3  # a start a millisecond off: caught
    now["tasks"][5][3] += 1  # and another node
    assert differences(now, ref) == [f"task 3: {now['tasks'][3]} instead of {ref['tasks'][3]}"]


def write_reference() -> None:
    data = {name: {s: schedule(make(), s) for s in schedulers} for name, (make, schedulers) in setups().items()}
    with gzip.GzipFile(REFERENCE, "wb", mtime=0) as f:
        f.write(json.dumps(data, separators=(",", ":")).encode())


if __name__ == "__main__":
    write_reference()
