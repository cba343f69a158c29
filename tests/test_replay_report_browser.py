"""The replay report (``simulate --case --report FILE.html``) in real headless Chromium, offline:
opened from a file with every network request refused, its charts render with their axis titles
and the page reports no error.  Chromium as tests/test_explorer_browser.py finds (or installs) it."""

from __future__ import annotations

import pytest
from test_explorer_browser import chromium

from fairalloc.cli import main
from fairalloc.testing import CHROMIUM_FLAGS, HANG


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "day.html"
    argv = ["simulate", "two-teams-day", "--case", "replay-two-teams", "--scheduler", "drf,kueue"]
    assert main([*argv, "--report", str(path), "--no-progress", "--format", "json"]) == 0
    return path


def test_the_report_draws_its_charts_offline(report, capsys):
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 800}, offline=True)
        # anything but the file itself is a request the page must not make
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
        page = context.new_page()
        page.set_default_timeout(int(HANG * 1000))
        page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
        page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("request", lambda r: None if r.url.startswith("file:") else problems.append(f"request {r.url}"))
        page.goto(report.as_uri())
        for run in (0, 1):
            for kind in ("stacked", "usage", "waits", "preemptions"):
                chart = page.locator(f"#{kind}-{run} .main-svg").first
                chart.wait_for(state="visible")
        titles = page.locator(".g-xtitle, .g-ytitle").all_text_contents()
        tables = page.locator("table").count()
        browser.close()
    assert problems == [], problems
    assert {"time (s)", "wait (s)", "dominant share (%)", "victim's queue"} <= set(titles), titles
    assert tables == 2
