"""Hostile workloads, cases and options for ``schedule`` / ``simulate`` and their library functions:
each is refused (or stopped) with one line ``fairalloc: <field>: ...`` and exit code 2, quickly and
in bounded memory (the bounds of ``fairalloc.core.limits``, section "discrete scheduling and simulation")."""

import os
import resource
import subprocess
import sys
import warnings

import numpy as np
import pytest

from fairalloc import limits
from fairalloc.cli import main
from fairalloc.core.errors import CaseError, FairallocError
from fairalloc.core.instance import Instance
from fairalloc.scheduling import DRFScheduler, fill_machines
from fairalloc.scheduling.simulator import simulate
from fairalloc.scheduling.workloads import Job, Task, Workload, validate
from fairalloc.testing import HANG

TINY_CASE = """resources: {cpu: 1, mem: 1}
users:
  A: {demand: {cpu: 1.0e-9, mem: 1.0e-9}}
  B: {demand: {cpu: 2.0e-9, mem: 1.0e-9}}
"""
JOB = "{{owner: {owner}, submit: 0, {extra}phases: {{map: {{count: {count}, cpu: 1, mem: 1, duration: {duration}}}}}}}"


def workload(nodes=1, jobs=None, horizon=None):
    jobs = jobs or [JOB.format(owner="a", extra="", count=1, duration=1)]
    text = f"nodes: {{count: {nodes}, cpu: 8, mem: 6}}\n" + (f"horizon: {horizon}\n" if horizon else "")
    return text + "jobs:\n" + "".join(f"  - {j}\n" for j in jobs)


def job(owner="a", count=1, duration=1, extra=""):
    return JOB.format(owner=owner, extra=extra, count=count, duration=duration)


# name -> (file name, file text, arguments after the file, text the one line must hold)
SCENARIOS = {
    # 1. Algorithm 1 on tiny tasks: bounded launches, with or without a trace
    "schedule-tiny-tasks-no-trace": ("tiny.yaml", TINY_CASE, ["schedule", "{f}", "--no-trace"], "users.A.demand"),
    "schedule-tiny-tasks-trace": (
        "tiny.yaml",
        TINY_CASE,
        ["schedule", "{f}", "--format", "json"],
        ("users.A.demand", "--trace"),
    ),
    "schedule-tiny-tasks-machines": (
        "tiny.yaml",
        TINY_CASE,
        ["schedule", "{f}", "--machines", "2x1,1", "--no-trace"],
        ("users.A.demand", "--trace"),
    ),
    # 2. sizes of a workload, checked when it is loaded
    "nodes-1e9": ("w.yaml", workload(nodes=1_000_000_000), ["simulate", "{f}"], "nodes.count"),
    "map-count-1e9": (
        "w.yaml",
        workload(jobs=[job(count=1_000_000_000)]),
        ["simulate", "{f}"],
        "jobs[0].phases.map.count",
    ),
    "map-count-float-1e9": (
        "w.yaml",
        workload(jobs=[job(count="1.0e+9")]),
        ["simulate", "{f}"],
        "jobs[0].phases.map.count",
    ),
    "total-tasks": (
        "w.yaml",
        workload(jobs=[job(count=limits.MAX_TASKS_PER_JOB)] * 3),
        ["simulate", "{f}"],
        "jobs[2].phases",
    ),
    "owners": (
        "w.csv",
        "job,user,submit,phase,cpu,mem,duration\n"
        + "".join(f"j{k},o{k},0,map,1,1,1\n" for k in range(limits.MAX_OWNERS + 1)),
        ["simulate", "{f}", "--nodes", "2"],
        f"jobs[{limits.MAX_OWNERS}] (j{limits.MAX_OWNERS}).owner",
    ),
    "events": (
        "w.yaml",
        workload(jobs=[job(count=1000, duration=10, extra="resubmit: true, ")], horizon=100000),
        ["simulate", "{f}"],
        "jobs[0] (job-0).resubmit: simulating this workload takes up to",
    ),
    "csv-nodes-1e9": (
        "w.csv",
        "job,user,submit,phase,cpu,mem,duration\nj,a,0,map,1,1,1\n",
        ["simulate", "{f}", "--nodes", "1000000000"],
        "--nodes",
    ),
    # 3. closed-loop resubmission of a job that takes no time
    "resubmit-1e-9": (
        "w.yaml",
        workload(jobs=[job(duration="1.0e-9", extra="resubmit: true, ")], horizon=600),
        ["simulate", "{f}"],
        "jobs[0] (job-0).resubmit",
    ),
    "resubmit-below-time-resolution": (
        "w.yaml",
        workload(jobs=[job(duration="1.0e-20", extra="resubmit: true, ")], horizon="1.0e+6"),
        ["simulate", "{f}"],
        ".resubmit",
    ),
    "duration-1e-40": (
        "w.yaml",
        workload(jobs=[job(duration="1.0e-40")]),
        ["simulate", "{f}"],
        "jobs[0].phases.map.duration",
    ),
    "horizon-1e300": ("w.yaml", workload(horizon="1.0e+300"), ["simulate", "{f}"], "horizon"),
    # 4. machines
    "machines-200000": (
        "tiny.yaml",
        TINY_CASE,
        ["schedule", "{f}", "--machines", "200000x1,1", "--no-trace"],
        "--machines",
    ),
    # 5. other loops an input can make long
    "quincy-large": (
        "w.yaml",
        workload(nodes=5000, jobs=[job(owner=f"o{k}") for k in range(30)]),
        ["simulate", "{f}", "--scheduler", "quincy"],
        "scheduler: quincy",
    ),
    "hdrf-deep-owner": (
        "w.yaml",
        workload(jobs=[job(owner="/".join(["g"] * 100))]),
        ["simulate", "{f}", "--scheduler", "hdrf"],
        "owner",
    ),
}


@pytest.mark.parametrize("name", list(SCENARIOS), ids=list(SCENARIOS))
def test_hostile_input_is_one_line_exit_2(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LAUNCHES", 10**6)  # the same code path, a tenth of the time
    fname, text, args, field = SCENARIOS[name]
    path = tmp_path / fname
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy (or other) warning reaches the user
        code = main([a.format(f=path) for a in args])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fairalloc: "), err
    fields = field if isinstance(field, tuple) else (field,)
    assert any(lines[0].startswith(f"fairalloc: {f}") or f"{f}" in lines[0] for f in fields), lines[0]


# --------------------------------------------------------------------------- library functions


def test_run_counts_stops_at_the_launch_limit(monkeypatch):
    monkeypatch.setattr(limits, "MAX_LAUNCHES", 10**6)
    inst = Instance.from_arrays([1.0, 1.0], [[1e-9, 1e-9], [2e-9, 1e-9]], users=["A", "B"])
    with pytest.raises(CaseError, match=r"^users\.A\.demand: Algorithm 1 makes more than"):
        DRFScheduler(inst).run_counts()


def test_run_trace_is_bounded_and_points_to_no_trace():
    inst = Instance.from_arrays([1.0, 1.0], [[1e-6, 1e-6], [2e-6, 1e-6]], users=["A", "B"])  # 750 000 launches
    with pytest.raises(CaseError, match=r"^--trace: .*--no-trace"):
        DRFScheduler(inst).run()
    assert DRFScheduler(inst).run_counts().sum() == 750_000  # counts only: within the limits


def test_fill_machines_refuses_too_many_machines_before_any_work():
    inst = Instance.from_arrays([5.0, 9.0], [[1, 4], [3, 1]])
    many = np.broadcast_to(np.array([5.0, 9.0]), (100_000_000, 2))  # no memory: a view
    with pytest.raises(CaseError, match=r"^--machines: 100000000 machines, more than"):
        fill_machines(inst, many)
    wide = Instance.from_arrays([1.0], np.ones((1000, 1)))
    with pytest.raises(CaseError, match=r"^--machines: .* users"):
        fill_machines(wide, np.ones((20_000, 1)))


def test_fill_machines_batched_counts_are_the_single_steps():
    rng = np.random.default_rng(3)
    inst = Instance.from_arrays([1.0, 1.0], rng.uniform(1e-4, 1e-3, (5, 2)))
    machines = np.array([[0.5, 0.4], [0.3, 0.6], [0.2, 0.2]])
    fast = fill_machines(inst, machines)
    slow = fill_machines(inst, machines, keep_trace=True)
    assert np.array_equal(fast.per_machine, slow.per_machine)
    assert np.array_equal(fast.dominant_shares, slow.dominant_shares)


def test_zero_capacity_resource_gives_no_numpy_warning():
    inst = Instance.from_arrays([10.0, 20.0, 0.0], [[1, 4, 0], [2, 1, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = DRFScheduler(inst)
        trace = s.run()
        assert trace and np.all(np.isfinite(s.s))
        p = fill_machines(inst, [[10, 10, 0], [10, 10, 0]], keep_trace=True)
        assert np.isfinite(p.max_task_share)


def test_simulation_samples_are_bounded():
    w = Workload(1, 8.0, 6.0, (Job("j", "a", 0.0, ((Task(1, 1, 1),),)),))
    with pytest.raises(CaseError, match=r"^samples: "):
        simulate(w, "drf", samples=10**9, progress=False)
    # a run far longer than estimated (over-committed slots slow tasks down): at most 2 * samples
    big = Workload(1, 8.0, 6.0, tuple(Job(f"j{k}", "a", 0.0, ((Task(8, 6, 1),) * 50,)) for k in range(20)))
    r = simulate(big, "slots:1000:oc", samples=10, progress=False)
    assert r.end_time > 100 and 10 <= len(r.samples["time"]) <= 21
    t = r.samples["time"]
    assert t == sorted(t) and len({round(b - a, 3) for a, b in zip(t, t[1:])}) == 1  # evenly spaced


def test_python_built_workloads_are_bounded_too():
    too_many = Workload(limits.MAX_NODES + 1, 8.0, 6.0, (Job("j", "a", 0.0, ((Task(1, 1, 1),),)),))
    with pytest.raises(CaseError, match=r"^nodes\.count: "):
        simulate(too_many, "drf", progress=False)
    loop = Workload(1, 8.0, 6.0, (Job("j", "a", 0.0, ((Task(1, 1, 1e-9),),), resubmit=True),), horizon=600.0)
    with pytest.raises(CaseError, match=r"^jobs\[0\] \(j\)\.resubmit: "):
        validate(loop)


def test_trace_and_sweep_sizes_are_bounded():
    from fairalloc.analysis.sweep import run_sweep
    from fairalloc.scheduling.traces import dmfa_srq_trial, load_google_task_events, synthetic_google_like, trial_id

    with pytest.raises(CaseError, match=r"^n: "):
        synthetic_google_like(10**12, np.random.default_rng(0))
    with pytest.raises(CaseError, match=r"^max_tasks: "):
        load_google_task_events("missing.csv", max_tasks=10**12)
    with pytest.raises(CaseError, match=r"^trial: "):
        dmfa_srq_trial(trial_id(10**7, 0))
    with pytest.raises(FairallocError, match=r"^trial_ids: "):
        run_sweep(len, range(10**12))


# --------------------------------------------------------------------------- bounded memory and time


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize("name", ["schedule-tiny-tasks-no-trace", "nodes-1e9", "map-count-1e9", "resubmit-1e-9"])
def test_hostile_input_in_bounded_memory(name, tmp_path):
    fname, text, args, field = SCENARIOS[name]
    path = tmp_path / fname
    path.write_text(text)
    env = dict(os.environ, PYTHONWARNINGS="error")
    proc = subprocess.run(
        [sys.executable, "-m", "fairalloc", *(a.format(f=path) for a in args)],
        capture_output=True,
        text=True,
        timeout=HANG,
        preexec_fn=_limit_memory,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"fairalloc: {field}"), proc.stderr
