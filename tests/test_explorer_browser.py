"""End to end in real headless Chromium: the explorer page, driven as a person would.

Chromium is Debian's package.  When it is missing and the tests run as root it is installed
(``apt-get update`` first); under ``CI=true`` this test never skips.  Playwright (the pip package,
whose driver ships in the wheel) drives the system browser through ``executable_path``; no
browser is downloaded.  Set ``FAIRALLOC_SCREENSHOTS=DIR`` to keep the screenshots.
"""

import fcntl
import os
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

import fairalloc
from fairalloc.analysis.manipulation import probe
from fairalloc.explorer import create_app

LAUNCH_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-extensions",
    "--no-first-run",
]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.geteuid() == 0:
        # two xdist workers may both get here: one installs, the other waits on the lock
        with open("/tmp/fairalloc-chromium-install.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not shutil.which("chromium"):
                env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
                for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]):
                    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
                    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}"
        found = shutil.which("chromium")
        assert found, "apt-get installed chromium but it is not on PATH"
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true: the browser test must run, but chromium is missing and we are not root to install it")
    pytest.skip("Debian's chromium is not installed and we are not root to install it (apt-get install chromium)")


@pytest.fixture(scope="module")
def server():
    from werkzeug.serving import make_server

    srv = make_server("127.0.0.1", 0, create_app("drf-section-4-1"), threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}/"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=LAUNCH_FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        yield page
        browser.close()


def shoot(page, tmp_path, name):
    folder = Path(os.environ.get("FAIRALLOC_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
    assert (folder / f"{name}.png").stat().st_size > 20_000


def cell(page, mechanism, user):
    return page.locator(f'td.tasks[data-mech="{mechanism}"][data-user="{user}"]')


def shown(value) -> str:
    """How the page prints a number (4 decimals, trailing zeros dropped)."""
    return format(round(float(value), 4), "g") if float(value) != int(value) else str(int(value))


def demand_box(page, user_index, resource_index):
    return page.locator(f'input[data-kind="demand"][data-index="{user_index}"][data-resource="{resource_index}"]')


def expect_text(page, locator, text, timeout=30_000):
    from playwright.sync_api import expect

    expect(locator).to_have_text(text, timeout=timeout)


def test_explorer_end_to_end(page, server, tmp_path):
    from playwright.sync_api import expect

    page.goto(server + "?case=drf-section-4-1")
    # the paper's numbers: DRF 3 and 2, alpha-fair(2) 3.7279 and 1.7574 (docs/formulations.md section 5)
    expect_text(page, cell(page, "drf", "A"), "3")
    expect_text(page, cell(page, "drf", "B"), "2")
    expect_text(page, cell(page, "alpha-fair:2", "A"), "3.7279")
    expect_text(page, cell(page, "ceei", "B"), "1.6364")
    expect(page.locator("#chart svg")).to_be_visible()
    expect(page.locator("#frontier svg")).to_be_visible(timeout=30_000)
    expect(page.locator(".badge.violated")).to_have_count(1, timeout=30_000)  # DRF: resource monotonicity
    shoot(page, tmp_path, "1-initial")

    # B's tasks now need <1 CPU, 1 GB>: DRF equalises 2x/9 = y/9 with both resources full: 3 and 6
    demand_box(page, 1, 0).fill("1")
    expect_text(page, cell(page, "drf", "B"), "6")
    expect_text(page, cell(page, "drf", "A"), "3")
    changed = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [1, 1]], users=["A", "B"], resources=["cpu", "mem"])
    for mech in ("asset", "ceei", "alpha-fair:2"):
        tasks = fairalloc.solve(changed, mech).tasks
        expect_text(page, cell(page, mech, "A"), shown(tasks[0]))
        expect_text(page, cell(page, mech, "B"), shown(tasks[1]))
    # the alpha slider: infinity is DRF
    page.locator("#alpha-slider").fill("9")
    expect_text(page, cell(page, "alpha-fair:inf", "B"), "6")
    page.locator("#alpha-slider").fill("4")
    expect_text(page, cell(page, "alpha-fair:2", "B"), shown(fairalloc.solve(changed, "alpha-fair:2").tasks[1]))

    # manipulation probe: A reports twice her memory under CEEI
    page.select_option("#probe-mechanism", "ceei")
    page.select_option("#probe-user", "A")
    page.locator('#probe-report input[data-report="1"]').fill("8")
    lie = probe("ceei", changed, "A", {"cpu": 1, "mem": 8})
    expect_text(page, page.locator('[data-probe="truthful"]'), shown(lie.truthful_tasks))
    expect_text(page, page.locator('[data-probe="reported"]'), shown(lie.manipulated_tasks))
    page.click("#probe-search")
    expect(page.locator("#probe-best")).to_contain_text("evaluations", timeout=60_000)
    shoot(page, tmp_path, "2-probe")

    # bad input: a message in the page, and the server goes on
    demand_box(page, 1, 0).fill("-3")
    expect(page.locator("#message")).to_have_text(
        "users.B.demand.cpu: input should be greater than or equal to 0 (got -3)", timeout=30_000
    )
    shoot(page, tmp_path, "3-negative-demand")
    demand_box(page, 1, 0).fill("3")
    page.locator('input[data-kind="user-name"][data-index="1"]').fill("")
    expect(page.locator("#message")).to_have_text("users[1].name: must not be empty", timeout=30_000)
    shoot(page, tmp_path, "4-empty-name")
    page.locator('input[data-kind="user-name"][data-index="1"]').fill("B")
    expect(page.locator("#message")).to_be_hidden(timeout=30_000)
    expect_text(page, cell(page, "drf", "B"), "2")  # back to the paper's instance, served again
    assert page.errors == []


def test_yaml_download_from_the_page(page, server, tmp_path):
    page.goto(server + "?case=drf-theorem-1")
    from playwright.sync_api import expect

    expect(page.locator("td.tasks").first).to_be_visible(timeout=30_000)
    with page.expect_download() as info:
        page.click("#download-yaml")
    target = tmp_path / "case.yaml"
    info.value.save_as(str(target))
    case = fairalloc.load_case(str(target))
    np.testing.assert_array_equal(case.instance.demand, fairalloc.load_case("drf-theorem-1").instance.demand)
