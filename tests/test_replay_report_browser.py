"""The replay report (``simulate --case --report FILE.html``) in real headless Chromium, offline:
opened from a file with every network request refused, its charts render with their axis titles
and the page reports no error.  Chromium as tests/test_explorer_browser.py finds (or installs) it."""

from __future__ import annotations

import pytest
import test_explorer_browser as explorer_page
from test_replay_charts import HOSTILE, hostile_run

from fairalloc.cli import main
from fairalloc.testing import HANG

#: the explorer page tests' Chromium (found or installed there), one per module
browser = explorer_page.browser


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "day.html"
    argv = ["simulate", "two-teams-day", "--case", "replay-two-teams", "--scheduler", "drf,kueue"]
    assert main([*argv, "--report", str(path), "--no-progress", "--format", "json"]) == 0
    return path


def _open(browser, path, runs: int, problems: list[str]):
    """The page offline, every chart of its ``runs`` drawn; what it reports goes to ``problems``."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, offline=True)
    # anything but the file itself is a request the page must not make
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
    page = context.new_page()
    page.set_default_timeout(int(HANG * 1000))
    page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
    page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("request", lambda r: None if r.url.startswith("file:") else problems.append(f"request {r.url}"))
    page.on("dialog", lambda d: problems.append(f"dialog {d.message}"))
    page.goto(path.as_uri())
    for run in range(runs):
        for kind in ("stacked", "usage", "waits", "preemptions"):
            page.locator(f"#{kind}-{run} .main-svg").first.wait_for(state="visible")
    return page


def test_the_report_draws_its_charts_offline(report, browser):
    problems: list[str] = []
    page = _open(browser, report, 2, problems)
    titles = page.locator(".g-xtitle, .g-ytitle").all_text_contents()
    assert {"time (s)", "wait (s)", "dominant share (%)", "victim's queue"} <= set(titles), titles
    assert page.locator("table").count() == 2
    page.context.close()
    assert problems == [], problems


def test_a_hostile_queue_name_is_text_not_markup(tmp_path, browser):
    assert hostile_run(tmp_path) == 0
    problems: list[str] = []
    page = _open(browser, tmp_path / "r.html", 1, problems)
    assert page.locator(".main-svg a").count() == 0  # no link made of the name
    assert HOSTILE in page.locator(".legendtext").all_text_contents()
    assert HOSTILE in page.locator("td").all_text_contents()
    page.context.close()
    assert problems == [], problems
