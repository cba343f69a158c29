"""The explorer's Replay panel in real headless Chromium (``explore CASE --workload W``), at the
widths of a laptop and a phone: the case's policy is the scheduler offered first, Run replays the
workload, and the four charts are drawn with their axis titles, the preemption timeline with its
one preemption (tests/test_whatif.py's hand replay), beside the per-queue table, in a layout that
fits; the page reports no error.  Chromium as tests/test_explorer_browser.py finds (or installs)
it; under ``CI=true`` this never skips."""

from __future__ import annotations

import threading

import pytest
import test_explorer_browser as explorer_page
import test_explorer_replay
from test_explorer_browser import TIMEOUT, assert_layout, shoot

from fairalloc.explorer import close_app, make_server
from fairalloc.testing import HANG

#: the explorer page's fixtures: one Chromium, and a fresh page at each width that fails the test on
#: any error the page reports (they open this module's server); the hand replay's case and workload
browser, page, files = explorer_page.browser, explorer_page.page, test_explorer_replay.files


@pytest.fixture(scope="module")
def server(files):
    case, workload = files
    srv = make_server(str(case), "127.0.0.1", 0, workload=str(workload), slow_seconds=HANG, wait_seconds=HANG)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.port}/"
    srv.shutdown()
    srv.server_close()
    close_app(srv.app)


def test_run_draws_the_three_charts_with_their_axis_titles(page):
    from playwright.sync_api import expect

    page.goto(page.base)
    page.wait_for_selector("body[data-painted]", state="attached")
    expect(page.locator("#replay-panel")).to_be_visible()
    expect(page.locator("#replay-about")).to_contain_text("ten-jobs: 10 jobs")
    expect(page.locator("#replay-scheduler")).to_have_value("kueue", timeout=TIMEOUT)  # the case's policy
    page.click("#replay-run")
    page.wait_for_selector('#replay-panel[data-state="done"]', state="attached")
    for kind in ("stacked", "usage", "waits", "preemptions"):
        page.locator(f"#replay-{kind} .main-svg").first.wait_for(state="visible")
    titles = set(page.locator("#replay-panel .g-xtitle, #replay-panel .g-ytitle").all_text_contents())
    assert {"time (s)", "wait (s)", "dominant share (%)", "queue", "victim's queue"} <= titles, titles
    assert page.locator("#replay-preemptions .scatterlayer .point").count() == 1  # a3, for b1, at t=10
    expect(page.locator("#replay-status")).to_have_text("kueue on ten-jobs: 1 preemption, ended at 310 s")
    rows = page.locator("#replay-table tr").all_inner_texts()
    assert [r.split("\t")[0] for r in rows] == ["queue", "a", "b", "c"]
    # a: the hand replay's 4 jobs, 5 waits (a3 waits again after its preemption), 8 job-seconds lost
    assert rows[1].split("\t")[1:] == ["4", "4", "22", "76", "1", "8"], rows[1]
    assert_layout(page)
    shoot(page, "explorer-replay")
