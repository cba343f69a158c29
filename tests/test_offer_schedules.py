"""Every name the simulator took before its schedulers became registered mechanisms (issue 37) keeps its
schedule: each task's job, phase, index, node, start and end on the paper set-ups, against
``tests/data/offer_schedules.json.gz``.

The reference was written before that change, at the commit it records (``commit``), with
``python tests/test_offer_schedules.py``: every old scheduler name (``drf``, ``mfs``, ``hdrf``,
``cpu-fair``, ``cpu-fair:oc``, ``slots:K``, ``slots:K:oc``, ``capacity:K``, ``capacity:K:oc``, ``fifo``,
``quincy``; K as the examples use it) on every set-up of :mod:`test_simulator_schedules` (that file pins
the examples' own pairs since issue 18; this one every name on every set-up). Compared as there:
integers and names exactly, times within the file's rounding plus the agreement tolerance.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_simulator_schedules import differences, schedule, setups  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tests" / "data" / "offer_schedules.json.gz"
#: every scheduler name the simulator took before issue 37, K as the paper examples use it
NAMES = (
    *("drf", "mfs", "hdrf", "cpu-fair", "cpu-fair:oc", "slots:3", "slots:6:oc"),
    *("capacity:4", "capacity:13:oc", "fifo", "quincy"),
)


@pytest.fixture(scope="module")
def reference() -> dict:
    with gzip.open(REFERENCE, "rt") as f:
        ref: dict = json.load(f)
    return ref


def test_the_reference_predates_the_change(reference):
    assert reference["commit"].startswith("ce5563f") and len(reference["commit"]) == 40
    assert set(reference["schedules"]) == set(setups())
    assert all(set(runs) == set(NAMES) for runs in reference["schedules"].values())


@pytest.mark.parametrize("setup", list(setups()))
@pytest.mark.parametrize("name", NAMES)
def test_every_old_name_keeps_its_schedule(setup, name, reference):
    now = schedule(setups()[setup][0](), name)
    assert differences(now, reference["schedules"][setup][name]) == [], (setup, name)


def write_reference() -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    data = {
        "commit": head.stdout.strip(),
        "schedules": {setup: {s: schedule(make(), s) for s in NAMES} for setup, (make, _) in setups().items()},
    }
    with gzip.GzipFile(REFERENCE, "wb", mtime=0) as f:
        f.write(json.dumps(data, separators=(",", ":")).encode())


if __name__ == "__main__":
    write_reference()
