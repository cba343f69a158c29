"""A job replay's charts: the recorded series against hand values and against the replay's own
time averages (:mod:`fairalloc.scheduling.replay_charts`), the bounded merge, and the files
``simulate --case --plot DIR --report FILE.html`` writes (:mod:`fairalloc.cli.replay_figures`)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest
import yaml
from PIL import Image
from test_replay import Toy

import fairalloc
from fairalloc.cli import main
from fairalloc.cli.replay_figures import plot_runs, report_html
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.engines.online import Job
from fairalloc.explorer.docs import plotly_bundle
from fairalloc.io.cases import parse_case
from fairalloc.scheduling.replay import replay
from fairalloc.scheduling.replay_charts import Recorder, Steps, chart_data, time_unit

CASE = parse_case(
    {
        "name": "two-queues",
        "resources": {"cpu": 4, "memory": 8},
        "users": {
            "a": {"guarantee": {"cpu": 2, "memory": 4}, "request": {"cpu": 1}},
            "b": {"guarantee": {"cpu": 1}, "request": {"cpu": 1}},
        },
    }
)


def _record(instance, jobs, mechanism, points=1000):
    recorder = Recorder(instance, points)
    result = replay(instance, jobs, mechanism, watch=recorder)
    recorder.close(result.end)
    return result, recorder


def _close(got, want):
    assert np.allclose(got, want, rtol=AGREEMENT, atol=AGREEMENT), (got, want)


def test_two_queues_usage_and_entitlement_steps_by_hand():
    """Capacity 4 cpu, 8 memory; drf's generic online adapter (it never preempts).
    a1 (a, 2 cpu 2 mem, t 0, 10 s); b1 (b, 1 cpu 4 mem, t 5, 10 s); a2 (a, 3 cpu 1 mem, t 5, 5 s).
    t=0: a1 runs.  t=5: b (holding 0) is served first, b1 fits (free 1 cpu 2 mem left); a2 (3 cpu)
    does not and waits.  t=10: a1 ends, a2 runs (waited 5 s).  t=15: both end.
    Usage: a (2,2) 50% on [0,10), (3,1) 75% on [10,15); b 0 on [0,5), (1,4) 50% on [5,15).
    Entitlement (solved again only when the queues with work change): t=0 a alone asks (2,2) and
    gets it, 50%.  t=5 a asks a1+a2 = (5,3), dominant 5/4 per unit; b asks (1,4), 4/8 per unit: DRF
    raises s = 1.25 t_a = 0.5 t_b; b is whole (t_b = 1) at s = 0.5, then a grows until cpu binds:
    5 t_a + 1 = 4, t_a = 0.6, a (3, 1.8) 75%, b (1,4) 50%; at t=10 the same queues have work (no
    change); at t=15 none: 0.  Guarantees: a max(2/4, 4/8) = 50%, b 1/4 = 25%.
    Time averages: a usage cpu (2*10 + 3*5)/15 = 35/15, memory (2*10 + 1*5)/15 = 25/15."""
    jobs = [Job("a1", "a", (2, 2), runtime=10), Job("b1", "b", (1, 4), submit=5, runtime=10)]
    jobs.append(Job("a2", "a", (3, 1), submit=5, runtime=5))
    result, rec = _record(CASE.instance, jobs, fairalloc.get("drf"))
    a, b = rec.series("a"), rec.series("b")
    _close(a["time"], [0, 5, 10, 15, 15])
    _close(a["usage_share"], [0.5, 0.5, 0.75, 0, 0])
    _close(a["usage"]["memory"], [2, 2, 1, 0, 0])
    _close(a["entitlement_share"], [0.5, 0.75, 0.75, 0, 0])
    _close(a["entitlement"]["memory"], [2, 1.8, 1.8, 0, 0])
    _close(b["time"], [0, 5, 15, 15])
    _close(b["usage_share"], [0, 0.5, 0, 0])
    _close(b["entitlement_share"], [0, 0.5, 0, 0])
    assert (a["guarantee_share"], b["guarantee_share"]) == (0.5, 0.25)
    assert (a["waits"], b["waits"]) == ([0, 5], [0])
    usage, entitled = rec.time_average("a")
    _close(usage, [35 / 15, 25 / 15])
    for q in result.queues:  # the steps integrate to the replay's own time averages
        usage, entitled = rec.time_average(q.queue)
        _close(usage, list(q.usage.values()))
        _close(entitled, list(q.entitlement.values()))
    assert rec.preemptions == []
    stacked = chart_data(result, rec)["stacked"]  # both on the union of their step times, in %
    _close(stacked["time"], [0, 5, 10, 15])
    _close(stacked["usage_share"]["a"], [50, 50, 75, 0])
    _close(stacked["usage_share"]["b"], [0, 50, 50, 0])


def test_a_preemption_is_recorded_with_its_queues_and_lost_work():
    """test_replay's preempting toy: lo (a, 10 cpu, 10 s) runs at 0, hi (b, prio 5, 2 s) arrives
    at 4 and preempts it: 4 job-seconds lost; hi waits 0, lo waits 0 then 2 (back at 4, runs at 6)."""
    inst = fairalloc.Instance([10, 10], [[1, 1], [1, 1]], users=["a", "b"], resources=["cpu", "mem"])
    jobs = [Job("lo", "a", (10, 0), runtime=10), Job("hi", "b", (10, 0), priority=5, submit=4, runtime=2)]
    result, rec = _record(inst, jobs, Toy())
    [p] = rec.preemptions
    assert (p.time, p.victim, p.victim_queue, p.preemptor_queue, p.lost_job_seconds) == (4, "lo", "a", "b", 4)
    assert rec.waits == [[0, 2], [0]]
    _close(rec.series("a")["usage"]["cpu"], [10, 0, 10, 0, 0])  # 0-4, 4-6 (hi runs), 6-16, then done
    data = json.loads(json.dumps(chart_data(result, rec)))
    assert data["preemptions"] == [
        {"time": 4, "victim": "lo", "victim_queue": "a", "preemptor_queue": "b", "lost_job_seconds": 4}
    ]
    assert data["unit"] == "s" and data["queues"]["a"]["usage_share"][0] == 100


def test_a_preemption_is_drawn_and_embedded(tmp_path):
    """The toy's preemption (above) on the timeline figure, coloured by the preemptor's queue, and
    in the report's data."""
    inst = fairalloc.Instance([10, 10], [[1, 1], [1, 1]], users=["a", "b"], resources=["cpu", "mem"])
    jobs = [Job("lo", "a", (10, 0), runtime=10), Job("hi", "b", (10, 0), priority=5, submit=4, runtime=2)]
    data = chart_data(*_record(inst, jobs, Toy()))
    plot_runs([data], tmp_path)
    svg = ET.parse(tmp_path / "toy-priority-preemptions.svg")
    texts = {"".join(t.itertext()).strip() for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"preempted for", "b", "time (s)", "victim's queue"} <= texts and "no preemptions" not in texts
    parsed = _Sources()
    parsed.feed(report_html([data], "toy"))
    [embedded] = [json.loads(text) for key, text in parsed.scripts if key == "charts"]
    assert embedded[0]["preemptions"] == data["preemptions"]


def test_merging_keeps_at_most_the_bound_and_the_integral():
    """Steps of random values at random times, at most 7 points kept: pairs of closed steps merge
    into their time-weighted mean, so the integral to the end is the one of all the steps."""
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.uniform(0.1, 3.0, 200))
    values = rng.uniform(0, 5, (200, 3))
    s = Steps()
    for t, v in zip(times, values):
        s.add(float(t), v, points=7)
        assert len(s.times) <= 7
    end = times[-1] + 1.0
    want = (values * np.diff([*times, end])[:, None]).sum(axis=0)
    got = (np.asarray(s.values) * np.diff([*s.times, end])[:, None]).sum(axis=0)
    _close(got, want)
    assert s.times[0] == times[0] and s.times[-1] == times[-1] and np.array_equal(s.values[-1], values[-1])


def test_a_bounded_recording_of_a_day_keeps_the_replays_averages():
    """The bundled day of two teams (team-b's usage and entitlement change 33 times) recorded with at most 8
    points per queue: the merged steps still integrate to the replay's time averages."""
    from fairalloc.io.cases import load_case
    from fairalloc.io.job_workloads import load_job_workload

    case = load_case("replay-two-teams")
    w = load_job_workload("two-teams-day", case.instance)
    result, rec = _record(case.instance, w.jobs, fairalloc.get("drf"), points=8)
    assert max(len(s.times) for s in rec.steps) <= 8
    assert len(_record(case.instance, w.jobs, fairalloc.get("drf"))[1].steps[1].times) == 33  # unbounded: all
    for q in result.queues:
        usage, entitled = rec.time_average(q.queue)
        _close(usage, list(q.usage.values()))
        _close(entitled, list(q.entitlement.values()))


def test_time_unit():
    assert time_unit(7199.0) == ("s", 1.0) and time_unit(7200.0) == ("h", 3600.0)


def test_a_run_of_hours_is_charted_in_hours():
    """One job of 1 cpu (of 4) for 3 h from t 0: a holds 25% on [0, 3 h), then nothing."""
    result, rec = _record(CASE.instance, [Job("j", "a", (1, 0), runtime=3 * 3600)], fairalloc.get("drf"))
    data = chart_data(result, rec)
    a = data["queues"]["a"]
    assert (data["unit"], data["titles"]["time"], data["end"]) == ("h", "time (h)", 3)
    _close(a["time"], [0, 3, 3])
    _close(a["usage_share"], [25, 0, 0])
    assert a["waits"] == [0]


def test_an_empty_workload_draws_its_queues_at_zero(capsys, tmp_path):
    (tmp_path / "w.yaml").write_text("jobs: {}\n")
    argv = ["simulate", tmp_path / "w.yaml", "--case", "replay-two-teams", "--report", tmp_path / "r.html"]
    code, _, err = run(capsys, *argv, "--plot", tmp_path / "figs", "--no-progress")
    assert code == 0 and err == ""
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '"team-a": {"time": [0.0, 0.0]' in page and len(list((tmp_path / "figs").iterdir())) == 6


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


class _Sources(HTMLParser):
    """A page's script and link tags, and the text of its scripts."""

    def __init__(self):
        super().__init__()
        self.attrs: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in: dict | None = None

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "link", "img", "iframe"):
            self.attrs.append((tag, dict(attrs)))
        self._in = dict(attrs) if tag == "script" else None

    def handle_data(self, data):
        if self._in is not None:
            self.scripts.append((self._in.get("id"), data))

    def handle_endtag(self, tag):
        self._in = None


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """The bundled day of two teams under drf and kueue, drawn and reported once."""
    out = tmp_path_factory.mktemp("charts")
    code = main(
        ["simulate", "two-teams-day", "--case", "replay-two-teams", "--scheduler", "drf,kueue", "--no-progress",
         "--plot", str(out / "figs"), "--report", str(out / "day.html"), "--format", "json"]
    )  # fmt: skip
    assert code == 0
    return out


def test_the_figures_are_valid_png_and_svg_with_axis_titles(drawn):
    for scheduler in ("drf", "kueue"):
        for kind, titles in [
            ("usage", ["time (s)", "dominant share (%)"]),
            ("waits", ["wait (s)", "queue"]),
            ("preemptions", ["time (s)", "victim's queue", "no preemptions"]),
        ]:
            with Image.open(drawn / "figs" / f"{scheduler}-{kind}.png") as image:
                image.verify()
                assert image.format == "PNG"
            svg = ET.parse(drawn / "figs" / f"{scheduler}-{kind}.svg")
            texts = {"".join(t.itertext()).strip() for t in svg.iter("{http://www.w3.org/2000/svg}text")}
            assert set(titles) <= texts, (kind, texts)
    assert not [p for p in (drawn / "figs").iterdir() if ".part" in p.name]


def test_the_report_is_self_contained_with_the_plotly_bundle_and_the_data(drawn, capsys):
    page = (drawn / "day.html").read_text(encoding="utf-8")
    parsed = _Sources()
    parsed.feed(page)
    for tag, attrs in parsed.attrs:
        assert not attrs.get("src") and not attrs.get("href"), (tag, attrs)  # nothing fetched
    bundle = plotly_bundle().read_text(encoding="utf-8")
    assert any(text == bundle for _, text in parsed.scripts)
    [data] = [json.loads(text) for key, text in parsed.scripts if key == "charts"]
    assert [r["scheduler"] for r in data] == ["drf", "kueue"]
    code, out, _ = run(capsys, "simulate", "two-teams-day", "--case", "replay-two-teams", "--format", "json")
    [drf] = json.loads(out)
    for q, row in drf["queues"].items():  # the table is the run's statistics (JSON prints them shortest)
        table = data[0]["table"][q]
        assert [table[k] for k in ("submitted", "completed", "preemptions")] == [row["submitted"], row["completed"], 0]
        _close(
            [table[k] for k in ("wait_mean", "usage_share", "entitlement_gap")],
            [row["wait_mean"], row["usage_share"], row["entitlement_gap"]],
        )
    for q, s in data[0]["queues"].items():  # and the series integrate to its time averages (in %)
        widths = np.diff(s["time"])
        cpu = widths @ np.asarray(s["usage"]["cpu"][:-1]) / data[0]["end"]
        _close(cpu, drf["queues"][q]["usage"]["cpu"])
    assert data[0]["titles"] == {
        "time": "time (s)",
        "wait": "wait (s)",
        "share": "dominant share (%)",
        "amount": "amount (the case's units)",
    }


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--plot", "FILE"], "Invalid value for '--plot': Directory 'FILE' is a file"),
        (["--report", "missing/day.html"], "--report: folder missing does not exist"),
        (["--report", "."], "--report"),
    ],
)
def test_bad_paths_are_one_line_exit_2_nothing_written(capsys, tmp_path, monkeypatch, option, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("x")
    argv = ["simulate", "two-teams-day", "--case", "replay-two-teams", "--events", "e.jsonl"]
    code, out, err = run(capsys, *argv, *option)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


def test_report_without_a_case_is_refused(capsys, tmp_path):
    code, out, err = run(capsys, "simulate", "drf-7.1", "--report", tmp_path / "r.html")
    assert code == 2 and "--report: the HTML report is written for job workloads" in err
    assert list(tmp_path.iterdir()) == []


#: a queue name that is markup to plotly, a formula to matplotlib and the end of a script to HTML
HOSTILE = '$\\frac$ <a href="javascript:alert(1)">x</a></script>'


def hostile_run(tmp_path):
    """One job of a queue named :data:`HOSTILE`, replayed with --plot and --report into ``tmp_path``."""
    case = {"name": "hostile", "resources": {"cpu": 8}, "users": {HOSTILE: {"request": {"cpu": 1}}, "b": {}}}
    (tmp_path / "case.yaml").write_text(yaml.safe_dump(case))
    (tmp_path / "w.yaml").write_text(yaml.safe_dump({"jobs": {"j": {"queue": HOSTILE, "request": {"cpu": 1}}}}))
    argv = ["simulate", tmp_path / "w.yaml", "--case", tmp_path / "case.yaml", "--no-progress"]
    return main([str(a) for a in [*argv, "--plot", tmp_path / "figs", "--report", tmp_path / "r.html"]])


def test_a_hostile_queue_name_is_drawn_as_given(tmp_path, capsys):
    assert hostile_run(tmp_path) == 0
    svg = ET.parse(tmp_path / "figs" / "drf-usage.svg")
    assert HOSTILE in {"".join(t.itertext()).strip() for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    parsed = _Sources()
    parsed.feed((tmp_path / "r.html").read_text(encoding="utf-8"))
    [data] = [json.loads(text) for key, text in parsed.scripts if key == "charts"]
    assert list(data[0]["queues"]) == [HOSTILE, "b"]
