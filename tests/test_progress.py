"""Long work reports its progress on stderr: a bar on a terminal, whole lines when piped (at most
every ``LINE_EVERY`` seconds, none for work shorter than that), nothing with ``--no-progress``."""

import io

import pytest

from fairalloc.core import progress
from fairalloc.testing import run_cli


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def every_line(monkeypatch):
    monkeypatch.setattr(progress, "LINE_EVERY", 0.0)


def test_piped_progress_is_whole_lines_with_the_time_left(monkeypatch, every_line):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    for _ in progress.progress_bar(range(5), desc="work", unit="step"):
        pass
    lines = err.getvalue().splitlines()
    assert "\r" not in err.getvalue() and lines
    assert lines[-1].startswith("work: 100%") and "5/5" in lines[-1] and "step/s" in lines[-1]


def test_short_work_piped_says_nothing(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    for _ in progress.progress_bar(range(5), desc="work"):
        pass
    assert err.getvalue() == ""  # under LINE_EVERY (10 s): no line at all


def test_a_terminal_gets_a_bar_and_no_progress_gets_nothing(monkeypatch, every_line):
    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    for _ in progress.progress_bar(range(3), desc="work"):
        pass
    assert "\r" in err.getvalue() and "work: 100%" in err.getvalue()
    quiet = io.StringIO()
    monkeypatch.setattr("sys.stderr", quiet)
    for _ in progress.progress_bar(range(3), desc="work", progress=False):
        pass
    assert quiet.getvalue() == ""


def test_follow_ups_still_running_after_the_last_trial_get_their_own_bar(capsys, every_line):
    """A slow follow-up (table2: a shrink) can run for minutes after the last trial; the trials'
    bar ends, and the follow-ups' bar says what is still running."""
    from functools import partial

    from fairalloc.analysis.sweep import demo_followup, demo_trial, run_sweep

    got = run_sweep(
        demo_trial,
        range(6),
        None,
        workers=1,
        desc="demo",
        stop_when=lambda r: r["trial"] == 2,
        stop_group=lambda t: 0,
        followup=partial(demo_followup, sleep=1.0),
        followup_desc="shrinking",
    )
    assert [r.get("followup") for r in got] == [None, None, {"trial": 2, "total_tasks": 2 * got[2]["total_tasks"]}]
    lines = capsys.readouterr().err.splitlines()
    trials = [k for k, line in enumerate(lines) if line.startswith("demo: 100%")]
    tail = [k for k, line in enumerate(lines) if line.startswith("demo: shrinking: 100%") and "1/1" in line]
    assert trials and tail and trials[-1] < tail[0], lines


def test_table2_piped_shows_progress_lines_on_stderr(capsys, every_line):
    """``fairalloc table2 ... | cat``: stdout is the table, stderr the sweep's lines (and the
    shrinking's, for the counterexamples still being shrunk when every trial is in)."""
    code, out, err = run_cli(capsys, "table2", "--trials", "2", "-m", "drf,asset", "-p", "si,sp", "--workers", "1")
    assert code == 0 and "sharing_incentive" in out
    lines = err.splitlines()
    # tqdm shows a rate as trial/s, or as s/trial when a trial takes over a second (a loaded machine)
    assert any(line.startswith("table2: 100%") and ("trial/s" in line or "s/trial" in line) for line in lines), err
    assert "her fair share" in out and all(line.startswith("table2: ") for line in lines), (out, err)
    assert "\r" not in err
