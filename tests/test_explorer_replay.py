"""The explorer's Replay panel (``fairalloc explore CASE --workload W``): the replay view is the
computation ``simulate --report`` embeds (the same series, table and figures), checked against
the hand replay of tests/test_whatif.py; the start answer carries the workload; a workload above
the explorer's bound is a 400 before any worker; a bad ``--workload`` is one line, exit 2."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
import yaml
from test_whatif import CASE, JOBS

from fairalloc.cli import main
from fairalloc.core.limits import MAX_EXPLORER_WORKLOAD_JOBS
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.explorer import close_app, create_app, page_form, start_workload
from fairalloc.explorer.views import replay
from fairalloc.io.cases import load_case

#: the what-if test's three Kueue queues with b's reclaimWithinCohort Any: one preemption
RECLAIM = {**CASE, "settings": {"cluster_queues": {"b": {"preemption": {"reclaim_within_cohort": "Any"}}}}}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replay")
    case, workload = folder / "three-queues.yaml", folder / "ten-jobs.yaml"
    case.write_text(yaml.safe_dump(RECLAIM, sort_keys=False))
    workload.write_text(yaml.safe_dump({"jobs": JOBS}, sort_keys=False))
    return case, workload


def request_of(case_path, workload_path, **more) -> dict:
    """The body the page sends: the case as the page holds it, the workload as /api/start gives it."""
    case = load_case(case_path)
    start = start_workload(str(workload_path), case)
    return {"case": page_form(case), "workload": start["form"], "workload_name": start["name"], **more}


class _Scripts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.data: dict[str, str] = {}
        self._in = None

    def handle_starttag(self, tag, attrs):
        self._in = dict(attrs).get("id") if tag == "script" else None

    def handle_data(self, data):
        if self._in:
            self.data[self._in] = data

    def handle_endtag(self, tag):
        self._in = None


def test_the_view_is_what_the_report_embeds_and_the_hand_replay(files, tmp_path):
    """tests/test_whatif.py's hand replay with reclaim: a3 (queue a, started at 2) is preempted at
    t=10 for b1 (8 job-seconds lost); waits a 0, 0, 0, 90, 20 (mean 22), b 0, 0, 0, c 40, 0, 0
    (mean 40/3).  The view's chart data and figures equal those ``simulate --report`` embeds for the
    same run, to the last bit (one computation: the same recorder, the same figure builder)."""
    case, workload = files
    report = tmp_path / "r.html"
    argv = ["simulate", workload, "--case", case, "--scheduler", "kueue", "--report", report, "--format", "json"]
    assert main([*map(str, argv), "--no-progress"]) == 0
    scripts = _Scripts()
    scripts.feed(report.read_text(encoding="utf-8"))
    [charts], [figures] = json.loads(scripts.data["charts"]), json.loads(scripts.data["figures"])

    answer = json.loads(json.dumps(replay(request_of(case, workload))))  # the policy: kueue, the case's
    assert answer["scheduler"] == "kueue"
    assert answer["charts"] == charts and answer["figures"] == figures
    assert charts["preemptions"] == [
        {"time": 10, "victim": "a3", "victim_queue": "a", "preemptor_queue": "b", "lost_job_seconds": 8}
    ]
    table = charts["table"]
    assert [table[q]["completed"] for q in "abc"] == [4, 3, 3] and table["a"]["preemptions"] == 1
    assert table["a"]["wait_mean"] == pytest.approx(22, rel=AGREEMENT)
    assert table["c"]["wait_mean"] == pytest.approx(40 / 3, rel=AGREEMENT)
    assert sorted(charts["queues"]["a"]["waits"]) == pytest.approx([0, 0, 0, 20, 90], abs=AGREEMENT)
    titles = {
        k: (f["layout"]["xaxis"]["title"]["text"], f["layout"]["yaxis"]["title"]["text"]) for k, f in figures.items()
    }
    assert titles == {
        "stacked": ("time (s)", "dominant share (%)"),
        "usage": ("time (s)", "dominant share (%)"),
        "waits": ("wait (s)", "queue"),
        "preemptions": ("time (s)", "victim's queue"),
    }


def test_the_view_follows_the_scheduler_and_the_edited_case(files):
    case, workload = files
    drf = replay(request_of(case, workload, scheduler="drf"))
    assert drf["scheduler"] == "drf" and drf["charts"]["preemptions"] == []  # the generic adapter never preempts
    body = request_of(case, workload)
    body["case"]["users"][0]["name"] = "a-renamed"  # the workload's queue 'a' is no longer the case's
    with pytest.raises(Exception, match=r"workload ten-jobs: jobs\.a1\.queue: unknown queue 'a'"):
        replay(body)


@pytest.fixture(scope="module")
def client(files):
    case, workload = files
    app = create_app(str(case), workload=str(workload))
    yield app.test_client()
    close_app(app)


def test_the_start_answer_carries_the_workload_and_the_schedulers(client):
    start = client.get("/api/start").get_json()
    w = start["workload"]
    assert (w["name"], w["jobs"], sorted(w["form"]["jobs"])) == ("ten-jobs", 10, sorted(JOBS))
    assert w["form"]["jobs"]["a1"] == {"queue": "a", "request": {"cpu": 2}, "pods": 1, "priority": 0, "submit": 0,
                                       "runtime": 100}  # fmt: skip
    assert {"drf", "kueue", "yunikorn-fair"} <= set(w["schedulers"]) and "fifo" not in w["schedulers"]
    assert create_app("drf-section-4-1").test_client().get("/api/start").get_json()["workload"] is None


def test_the_replay_route_streams_progress_then_the_view(client, files):
    case, workload = files
    body = request_of(case, workload, scheduler="kueue")
    response = client.post("/api/replay", json=body, headers={"Accept": "application/x-ndjson"})
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    assert response.status_code == 200 and "result" in lines[-1], lines[-1]
    assert lines[-1]["result"] == json.loads(json.dumps(replay(body)))


def test_a_workload_above_the_explorers_bound_is_a_400_before_any_worker(client, files):
    case, workload = files
    body = request_of(case, workload)
    job = body["workload"]["jobs"]["a1"]
    body["workload"]["jobs"] = {f"j{k}": job for k in range(MAX_EXPLORER_WORKLOAD_JOBS + 1)}
    for accept in ("application/json", "application/x-ndjson"):
        response = client.post("/api/replay", json=body, headers={"Accept": accept})
        error = response.get_json()["error"]
        assert response.status_code == 400 and "\n" not in error, (response.status_code, error)
        assert error == (
            f"workload.jobs: {MAX_EXPLORER_WORKLOAD_JOBS + 1:,} jobs; the explorer replays at most "
            f"{MAX_EXPLORER_WORKLOAD_JOBS:,} (fairalloc.core.limits.MAX_EXPLORER_WORKLOAD_JOBS); for more use "
            "'fairalloc simulate WORKLOAD --case CASE --report FILE.html'"
        )


def test_an_unknown_scheduler_is_a_400_naming_the_closest(client, files):
    case, workload = files
    response = client.post("/api/replay", json=request_of(case, workload, scheduler="kueu"))
    assert response.status_code == 400 and "kueue" in response.get_json()["error"]


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ("no-such-workload", "no-such-workload: no such file, and no bundled workload of that name"),
        ("two-teams-day", "jobs.train-1.queue: unknown queue 'team-a'"),
        ("BIG", f"{MAX_EXPLORER_WORKLOAD_JOBS + 1:,} jobs; the explorer replays at most"),
    ],
)
def test_a_bad_workload_flag_is_one_line_exit_2_before_serving(capsys, files, tmp_path, workload, message):
    case, _ = files
    if workload == "BIG":
        jobs = {f"j{k}": {"queue": "a", "request": {"cpu": 1}} for k in range(MAX_EXPLORER_WORKLOAD_JOBS + 1)}
        workload = tmp_path / "big.yaml"
        workload.write_text(yaml.safe_dump({"jobs": jobs}))
    code, out, err = run_cli(capsys, "explore", case, "--workload", workload, "--port", "0")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err, err


def test_a_workload_needs_its_case(capsys):
    code, _, err = run_cli(capsys, "explore", "--workload", "two-teams-day")
    assert code == 2 and "--workload: give the queue CASE it is replayed against" in err
