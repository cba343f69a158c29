"""``fairalloc whatif``: a case changed and replayed beside the case as it is, checked against waits
and preemptions derived by hand, and a submitted job's predicted start against the full replay."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
import yaml

from fairalloc.cli import main
from fairalloc.core.tolerances import PROPERTY
from fairalloc.io.cases import load_case
from fairalloc.scheduling.whatif import Alternative, parse_alternative, parse_change, read_job, whatif

#: three Kueue ClusterQueues of one cohort, 2 cpus of nominal quota each, on 6 cpus
CASE = {
    "name": "three-queues",
    "resources": {"cpu": 6},
    "policy": "kueue",
    "groups": {"org": {}},
    "users": {q: {"group": "org", "guarantee": {"cpu": 2}, "request": {"cpu": 6}} for q in "abc"},
}
#: ten jobs of one pod each
JOBS = {
    "a1": {"queue": "a", "request": {"cpu": 2}, "submit": 0, "runtime": 100},
    "a2": {"queue": "a", "request": {"cpu": 2}, "submit": 1, "runtime": 100},
    "a3": {"queue": "a", "request": {"cpu": 2}, "submit": 2, "runtime": 100},
    "b1": {"queue": "b", "request": {"cpu": 2}, "submit": 10, "runtime": 50},
    "c1": {"queue": "c", "request": {"cpu": 2}, "submit": 20, "runtime": 50},
    "b2": {"queue": "b", "request": {"cpu": 4}, "submit": 200, "runtime": 30},
    "c2": {"queue": "c", "request": {"cpu": 2}, "submit": 200, "runtime": 30},
    "a4": {"queue": "a", "request": {"cpu": 2}, "submit": 210, "runtime": 30},
    "b3": {"queue": "b", "request": {"cpu": 2}, "submit": 300, "runtime": 10},
    "c3": {"queue": "c", "request": {"cpu": 2}, "submit": 300, "runtime": 10},
}
RECLAIM = "settings.cluster_queues.b.preemption.reclaim_within_cohort=Any"


def close(a, b) -> bool:
    return math.isclose(a, b, rel_tol=PROPERTY, abs_tol=PROPERTY)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path):
    case, workload = tmp_path / "three-queues.yaml", tmp_path / "ten-jobs.yaml"
    case.write_text(yaml.safe_dump(CASE, sort_keys=False))
    workload.write_text(yaml.safe_dump({"jobs": JOBS}, sort_keys=False))
    return case, workload


def test_three_queues_by_hand(files):
    """Baseline (Kueue's defaults: BestEffortFIFO, no preemption).  a1, a2, a3 start at 0, 1, 2
    (a borrows b's and c's unused quota: 6 cpus).  b1 (t=10) and c1 (t=20) find no free cpu and
    wait; a1 ends at 100 and b1 starts (no queue borrows with it, b1 is older than c1), a2 ends at
    101 and c1 starts, a3 ends at 102.  At 200 c2 and b2 (4 cpus) start together, a4 (t=210) waits
    for their end at 230; b3 and c3 start at 300.  Waits: a 0, 0, 0, 20 (mean 5, p95 17: numpy's
    linear percentile, 0 + 0.85 x 20); b 90, 0, 0 (mean 30, p95 0.9 x 90 = 81); c 81, 0, 0 (mean
    27, p95 72.9).  No preemption.

    With b's reclaimWithinCohort Any: b1 at t=10 asks within b's nominal quota, so it reclaims from
    a, which borrows: the victim is the most recently admitted, a3 (started at 2: 8 job-seconds
    lost); b1 starts in the next cycle at 10.  c1 (no reclaim) waits; b1 ends at 60 and c1 starts
    (it does not borrow; a3 would), a1 ends at 100 and a3 starts again (wait 90 from its
    preemption at 10), ending at 200 as b2 and c2 start.  The rest is as before.  Waits: a 0, 0, 0,
    90, 20 (mean 22, p95 20 + 0.8 x 70 = 76); b 0, 0, 0; c 40, 0, 0 (mean 13.33, p95 36).  One
    preemption, in a.  Static entitlements: nominal 2 of 6 for every queue (each requests 6), a
    third, unchanged by the setting."""
    case, workload = files
    report = whatif(load_case(case), workload, [parse_alternative(RECLAIM, "A")])
    expected = {
        "baseline": {"a": (5, 17, 0, 0), "b": (30, 81, 0, 0), "c": (27, 72.9, 0, 0)},
        "A": {"a": (22, 76, 1, 8), "b": (0, 0, 0, 0), "c": (40 / 3, 36, 0, 0)},
    }
    for alternative, queues in expected.items():
        got = report.run("kueue", alternative).queues
        for q, (mean, p95, preemptions, lost) in queues.items():
            assert close(got[q]["wait_mean"], mean) and close(got[q]["wait_p95"], p95), (alternative, q, got[q])
            assert got[q]["preemptions"] == preemptions and close(got[q]["lost_job_seconds"], lost)
            assert got[q]["completed"] == {"a": 4, "b": 3, "c": 3}[q]
            assert close(got[q]["entitlement_share"], 1 / 3)
    (comparison,) = report.comparisons
    assert close(comparison.queues["b"]["wait_p95"]["change"], -81)
    assert comparison.queues["a"]["preemptions"] == {"baseline": 0, "value": 1, "change": 1}
    assert (
        comparison.sentences[0]
        == "The preemptions in a rise from 0 to 1; its average usage share rose from 35.5% to 36.3%."
    )


def test_a_submitted_job_by_hand(files):
    """Job x (c, 2 cpus, 10 s) submitted at t=20 (after c1, submitted then too): second in c's
    queue, behind c1.  Baseline: c1 starts at 101, when a2 ends; x then finds no free cpu (its last
    waiting cycle, at 101: capacity) and starts at 102, when a3 ends."""
    case, workload = files
    submit = read_job({"x": {"queue": "c", "request": {"cpu": 2}, "runtime": 10, "submit": 20}}, "x.yaml")
    (run_,) = whatif(load_case(case), workload, [], None, submit).runs
    p = run_.prediction
    assert (p.start, p.position, p.ahead, p.last_wait) == (102, 2, ["c1"], 101)
    assert p.waited_for == [("capacity", "cluster capacity: cpu needs 2, 0 free")]


def _started(capsys, tmp_path, case, jobs: dict, schedulers: str) -> dict[str, float | None]:
    """Each scheduler's first admission of job ``probe`` in 'simulate''s event log of ``jobs``."""
    full, events = tmp_path / "full.yaml", tmp_path / "events.csv"
    full.write_text(yaml.safe_dump({"jobs": jobs}, sort_keys=False))
    code, _, err = run(capsys, "simulate", full, "--case", case, "--scheduler", schedulers, "--events", events)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(events.read_text())))
    return {
        s: next(
            (float(r["time"]) for r in rows if (r["scheduler"], r["job"], r["event"]) == (s, "probe", "admit")), None
        )
        for s in schedulers.split(",")
    }


def _predicted(capsys, tmp_path, argv: list, job: dict, at: float) -> dict[tuple[str, str], float | None]:
    job_file = tmp_path / "probe.yaml"
    job_file.write_text(yaml.safe_dump({"probe": job}))
    code, out, err = run(capsys, "whatif", *argv, "--submit", job_file, "--at", at, "--format", "json")
    assert code == 0, err
    return {(r["scheduler"], r["alternative"]): r["submitted"]["start"] for r in json.loads(out)["runs"]}


def test_the_predicted_start_is_the_start_in_the_full_replay(capsys, tmp_path):
    """Cross-check on the bundled files: the job added to the workload (after the jobs submitted at
    the same time) and replayed by 'simulate' first starts when 'whatif --submit' predicts, under
    each scheduler (one of them never starts it: Kueue, team-a's nominal 4 cpus against 6)."""
    from importlib import resources

    schedulers, at = "drf,kueue,volcano-capacity", 650
    job = {"queue": "team-a", "request": {"cpu": 2, "memory": 4}, "pods": 3, "runtime": 300}
    predicted = _predicted(capsys, tmp_path, ["replay-two-teams", "two-teams-day", "--scheduler", schedulers], job, at)
    text = (resources.files("fairalloc.case_library.workloads") / "two-teams-day.yaml").read_text()
    jobs = {**yaml.safe_load(text)["jobs"], "probe": {**job, "submit": at}}
    started = _started(capsys, tmp_path, "replay-two-teams", jobs, schedulers)
    assert started == {s: predicted[s, "baseline"] for s in schedulers.split(",")}
    assert started["kueue"] is None and started["drf"] is not None


def test_the_predicted_start_under_a_change_is_the_start_in_the_changed_replay(capsys, tmp_path, files):
    """The same cross-check for an alternative: the case written with the change replays to the
    start predicted for the alternative.  By hand (test_a_submitted_job_by_hand's job, at 20): with
    b reclaiming, b1 runs from 10 to 60 (a3 preempted); at 60 c1 starts (within c's nominal quota,
    before a3, which would borrow).  At 100 a1 ends: a3 and x would both borrow 2 cpus, at equal
    priority, and a3 is the older (Kueue orders by creation time, kept after a preemption): a3
    starts.  At 101 a2 ends and x starts."""
    case, workload = files
    job = {"queue": "c", "request": {"cpu": 2}, "runtime": 10}
    predicted = _predicted(capsys, tmp_path, [case, workload, "--set", RECLAIM], job, 20)
    changed = tmp_path / "changed.yaml"
    reclaim = {"cluster_queues": {"b": {"preemption": {"reclaim_within_cohort": "Any"}}}}
    changed.write_text(yaml.safe_dump({**CASE, "settings": reclaim}, sort_keys=False))
    jobs = {**JOBS, "probe": {**job, "submit": 20}}
    assert _started(capsys, tmp_path, case, jobs, "kueue") == {"kueue": predicted["kueue", "baseline"]}
    assert _started(capsys, tmp_path, changed, jobs, "kueue") == {"kueue": predicted["kueue", "A"]}
    assert (predicted["kueue", "baseline"], predicted["kueue", "A"]) == (102, 101)


def test_the_cli_on_bundled_files(capsys):
    argv = ["whatif", "replay-two-teams", "two-teams-day", "--set", "users.team-a.limit={cpu: 4, memory: 16}"]
    code, out, err = run(capsys, *argv, "--alt", "scheduler=kueue", "--scheduler", "drf,volcano-capacity")
    assert code == 0, err
    assert "drf: baseline and each alternative" in out and "B (kueue)" in out and "A: users.team-a.limit=" in out
    assert "team-a's mean wait" in out or "team-a's p95 wait" in out
    code, out, err = run(capsys, *argv, "--format", "json")
    doc = json.loads(out)
    assert doc["alternatives"] == {"A": ["users.team-a.limit={cpu: 4, memory: 16}"]}
    assert [(r["scheduler"], r["alternative"]) for r in doc["runs"]] == [("drf", "baseline"), ("drf", "A")]
    (c,) = doc["comparisons"]
    for q in c["queues"].values():
        for m in q.values():
            assert m["change"] is None or close(m["change"], m["value"] - m["baseline"])
    code, out, err = run(capsys, *argv, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["alternative"] for r in rows} == {"baseline", "A"} and len(rows) == 2 * 2 * 6


def test_a_job_that_never_starts(capsys, tmp_path):
    """Kueue without a cohort: team-a's nominal 4 cpus never hold a job of 6 (it cannot borrow), so
    it is not within the workload.  The case sets no limit, so the rule names no quota: the policy
    held it back, and its queue would be above its guarantee with it (0 + 6 cpus against 4)."""
    job = tmp_path / "big.yaml"
    job.write_text("queue: team-a\nrequest: {cpu: 2}\npods: 3\nruntime: 600\n")
    code, out, err = run(
        capsys, "whatif", "replay-two-teams", "two-teams-day", "--submit", job, "--at", 650, "--scheduler", "kueue"
    )
    assert code == 0, err
    assert "kueue, baseline: not within the workload; position 2 in team-a at submit" in out
    assert (
        "held it back by its own rule (its queue above its guarantee with it: cpu 0 held, 6 with it, guarantee 4)"
        in out
    )
    assert "big (team-a, submitted at t=650)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--set", "users.tema-a.weight=3"],
            "users.tema-a.weight=3: users.tema-a: unknown queue 'tema-a'; did you mean 'team-a'",
        ),
        (["--set", "users.team-a.wieght=3"], "users.team-a.wieght: unknown field 'wieght'; did you mean 'weight'?"),
        (["--set", "users.team-a.guarantee.gpu=1"], "users.team-a.guarantee.gpu: unknown resource 'gpu'"),
        (["--set", "polcy=kueue"], "polcy: unknown field 'polcy'; did you mean 'policy'?"),
        (
            ["--set", "users.team-a.weight=-1"],
            "users.team-a.weight=-1: users.team-a.weight: must be a finite number > 0",
        ),
        (["--set", "scheduler=drff"], "scheduler=drff: policy: unknown mechanism 'drff'; did you mean 'drf'"),
        (["--set", "users.team-a.weight"], "--set: expected PATH=VALUE"),
        (["--set", "users.team-a.weight="], "--set users.team-a.weight: no value after '='"),
        (["--set", "users.team-a.guarantee.cpu.x=1"], "users.team-a.guarantee.cpu is 4 (int), not a mapping"),
        (
            [
                "--set",
                "settings.cluster_queues.team-a.preemption.reclaim_within_cohort=Sometimes",
                "--scheduler",
                "kueue",
            ],
            "=Sometimes: settings.cluster_queues.team-a.preemption.reclaim_within_cohort: unknown value 'Sometimes'",
        ),
        (
            ["--alt", "settings.cluster_queus={}", "--scheduler", "kueue"],
            "settings.cluster_queus={}: settings.cluster_queus: unknown setting",
        ),
        (["--set", "users.team-a\n.weight=2"], "--set: expected PATH=VALUE"),
        (
            ["--submit", "train-1: {queue: team-a, request: {cpu: 1}}"],
            "the workload two-teams-day has a job named 'train-1'",
        ),
        (["--submit", "j: {queue: team-c, request: {cpu: 1}}"], "--submit j.queue: unknown queue 'team-c'"),
        (["--submit", "j: {queue: team-a, request: {cpu: 1}}", "--at", "-1"], "--at: a time in seconds >= 0"),
        (["--at", "5"], "--at: the submit time of --submit's job"),
        ([], "--set: give a change"),
    ],
)
def test_bad_changes_are_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, "whatif", "replay-two-teams", "two-teams-day", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert message in err, err


def test_changes_are_read_as_yaml():
    assert parse_change("users.a.weight=3").value == 3
    assert parse_change("scheduler=kueue").path == ("policy",)
    alt = parse_alternative("users.a.guarantee={cpu: 4, memory: 8},users.a.weight=2", "A")
    assert isinstance(alt, Alternative) and [c.value for c in alt.changes] == [{"cpu": 4, "memory": 8}, 2]


def test_the_help_examples_run_on_bundled_files(capsys):
    import shlex

    code, out, _ = run(capsys, "whatif", "--help")
    text = out.replace("\\\n", " ")  # an example's continuation lines
    examples = [line.strip() for line in text.splitlines() if line.strip().startswith("fairalloc whatif ")]
    assert len(examples) == 3
    for example in examples:
        code, out, err = run(capsys, *shlex.split(example)[1:])
        assert code == 0 and out and not err, (example, err)
    assert json.loads(out)["runs"][0]["submitted"]["job"] == "probe"


def test_a_failure_on_an_alternative_names_it(capsys):
    """Guarantees beyond the capacity: drf's adapter refuses them, named behind the change."""
    code, out, err = run(
        capsys,
        "whatif",
        "replay-two-teams",
        "two-teams-day",
        "--set",
        "users.team-a.guarantee.cpu=6",
        "--scheduler",
        "drf",
    )
    assert code == 2 and out == "" and err.startswith("fairalloc: users.team-a.guarantee.cpu=6 (under drf): guarantee:")


def test_what_it_waited_for_preemption_and_quota(tmp_path, files):
    """Two more of the rule's reasons, by hand.  With b reclaiming (RECLAIM), job x of b submitted
    at t=5 asks within b's nominal quota while a borrows 4 cpus: the first cycle at 5 preempts a3 (the
    most recently admitted) for it and does not admit it (Kueue admits a preemptor in a later
    cycle); that is its last waiting cycle, and after the preemption 2 cpus are free: a preemption in
    progress, nothing else.  The next cycle at 5 admits it: no wait.

    With a's borrowing limit 0 (its quota: nominal 2) and one job a1 of 2 cpus from 0 to 100, job y
    of a submitted at 1 finds 4 cpus free but a's quota full: it waits for that quota (2, held 2,
    needs 2) until a1 ends at 100."""
    case, workload = files
    x = read_job({"x": {"queue": "b", "request": {"cpu": 2}, "runtime": 10, "submit": 5}}, "x.yaml")
    report = whatif(load_case(case), workload, [parse_alternative(RECLAIM, "A")], None, x)
    p = report.run("kueue", "A").prediction
    assert (p.start, p.last_wait, p.position) == (5, 5, 1)
    assert p.waited_for == [("preemption", "a preemption in progress for it (1 preempted: a3)")]
    one = tmp_path / "one-job.yaml"
    one.write_text(yaml.safe_dump({"jobs": {"a1": JOBS["a1"]}}))
    y = read_job({"y": {"queue": "a", "request": {"cpu": 2}, "runtime": 10, "submit": 1}}, "y.yaml")
    no_borrowing = parse_alternative("users.a.borrowing_limit={cpu: 0}", "A")
    p = whatif(load_case(case), one, [no_borrowing], None, y).run("kueue", "A").prediction
    assert (p.start, p.last_wait, p.position, p.ahead) == (100, 1, 1, [])
    assert p.waited_for == [("quota", "the quota of a: cpu quota 2, holds 2, needs 2")]


def test_what_it_waited_for_jobs_ahead(files):
    """The rule read off one cycle's state, by hand: in a, a5 (4 cpus, priority 1) and y (2 cpus,
    priority 0) wait, a1 runs (2 cpus of 6): y fits the 4 free cpus and no quota is set (no limit,
    no borrowing limit), but its queue serves a5 first (higher priority): ahead, second in a."""
    from fairalloc.engines.online import ClusterState, Job, Running
    from fairalloc.scheduling.whatif import _Watch

    case, _ = files
    inst = load_case(case).instance
    a1, a5 = Job("a1", "a", (2.0,), runtime=100), Job("a5", "a", (4.0,), priority=1, submit=1)
    y = Job("y", "a", (2.0,), submit=1)
    state = ClusterState(inst, 1, {"a1": Running(a1, 1, 0)}, {"y": y, "a5": a5}, {"y": 1, "a5": 1})
    watch = _Watch(y)
    watch(state, [])
    p = watch.prediction
    assert (p.start, p.position, p.ahead, p.last_wait) == (None, 2, ["a5"], 1)
    assert p.waited_for == [("ahead", "1 job(s) of a served before it (first: a5)")]
