"""Jupyter: the HTML tables of instances, allocations and property reports, and the example
notebook paper_examples/explore_tradeoffs.ipynb executed end to end in a kernel of this very
interpreter (kernel spec written to a temporary directory, so no user-level spec interferes)."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import fairalloc
from fairalloc import properties
from fairalloc.analysis.properties import PropertyReport, PropertyResult
from fairalloc.core.html import MAX_ROWS

NOTEBOOK = Path(__file__).resolve().parents[1] / "paper_examples" / "explore_tradeoffs.ipynb"
RED, GREEN, GREY = "#cf222e", "#1a7f37", "#6e7781"


def first_columns(html: str) -> dict[str, str]:
    """{row header: first data cell} of every row of a fairalloc HTML table."""
    return dict(re.findall(r"<tr><th[^>]*>([^<]*)</th><td[^>]*>([^<]*)</td>", html))


def counts_hidden(html: str) -> str:
    return re.sub(r"\d[\d,]*( more)? users|\(\d[\d,]* in all\)", "#", html)


def body_rows(html: str) -> int:
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    return body.count("<tr>")


# -- Instance ----------------------------------------------------------------------------------


def test_instance_html_has_demands_capacity_weights_and_bounds():
    inst = fairalloc.Instance.from_arrays(
        [9, 18],
        [[1, 4], [3, 1]],
        resources=["cpu", "mem"],
        users=["A", "B"],
        weights=[2, 1],
        max_tasks=[5, np.inf],
        name="small",
    )
    html = inst._repr_html_()
    assert "small: 2 users x 2 resources" in html
    for header in ("cpu", "mem", "weight", "max_tasks"):
        assert f">{header}</th>" in html
    assert "shared" not in html  # optional columns only when present
    row_a = html.split(">A</th>")[1].split("</tr>")[0]
    assert re.findall(r">([^<]+)</td>", row_a) == ["1", "4", "2", "5"]
    row_b = html.split(">B</th>")[1].split("</tr>")[0]
    assert re.findall(r">([^<]+)</td>", row_b) == ["3", "1", "1", "∞"]
    capacity = html.split("<tfoot>")[1]
    assert ">capacity</th>" in capacity and ">9</td>" in capacity and ">18</td>" in capacity


def test_case_instance_without_options_has_no_option_columns():
    html = fairalloc.load_case("drf-section-4-1").instance._repr_html_()
    assert "weight" not in html and "max_tasks" not in html
    assert body_rows(html) == 2 and "more users" not in html


# -- Allocation --------------------------------------------------------------------------------


def test_allocation_html_has_tasks_shares_bundles_utilisation_and_caption():
    alloc = fairalloc.solve(fairalloc.load_case("drf-section-4-1"), "drf")
    html = alloc._repr_html_()
    assert "<pre>" not in html and html.startswith("<table")
    assert "drf on drf-section-4-1 (method fast, solver numpy progressive filling)" in html
    assert first_columns(html)["A"] == "3" and first_columns(html)["B"] == "2"
    row_a = html.split(">A</th>")[1].split("</tr>")[0]
    assert re.findall(r">([^<]+)</td>", row_a) == ["3", "0.6667", "3", "12"]  # tasks, share, cpu, mem
    assert ">bundle</th>" in html
    foot = html.split("<tfoot>")[1]
    assert re.findall(r">([^<]+)</td>", foot.split(">utilisation</th>")[1]) == ["100.0% (saturated)", "77.8%"]
    assert "price" not in html


def test_ceei_allocation_html_shows_prices():
    html = fairalloc.solve(fairalloc.load_case("drf-section-4-1"), "ceei")._repr_html_()
    price = html.split(">price</th>")[1].split("</tr>")[0]
    assert re.findall(r">([^<]+)</td>", price) == ["0.2", "0.0111"]
    assert first_columns(html)["A"] == "4.0909"


def test_weighted_allocation_html_has_the_weighted_share():
    inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], weights=[2, 1])
    html = fairalloc.solve(inst, "drf")._repr_html_()
    assert ">weighted share</th>" in html


# -- property reports --------------------------------------------------------------------------


def test_check_returns_a_property_report_that_is_a_dict():
    report = properties.check("asset", fairalloc.load_case("drf-theorem-1"), ["si", "ef", "srf"])
    assert isinstance(report, PropertyReport) and isinstance(report, dict)
    assert "PropertyReport" in properties.__all__
    assert list(report) == ["sharing_incentive", "envy_freeness", "single_resource_fairness"]
    assert all(isinstance(r, PropertyResult) for r in report.values())
    assert report.mechanism == "asset" and report.instance == "drf-theorem-1"
    assert dict(report) == {k: report[k] for k in report}


def test_property_report_html_has_badges_margins_and_witnesses():
    report = properties.check("asset", fairalloc.load_case("drf-theorem-1"), ["si", "ef", "srf"])
    html = report._repr_html_()
    assert "asset on drf-theorem-1" in html
    assert body_rows(html) == 3
    si = html.split(">sharing_incentive</th>")[1].split("</tr>")[0]
    assert RED in si and ">violated</span>" in si and ">-3</td>" in si
    assert "user 2 gets 12 tasks, her fair share runs 15" in si
    ef = html.split(">envy_freeness</th>")[1].split("</tr>")[0]
    assert GREEN in ef and ">holds</span>" in ef
    srf = html.split(">single_resource_fairness</th>")[1].split("</tr>")[0]
    assert GREY in srf and ">n/a</span>" in srf and "2 resources" in srf


def test_property_result_html_is_one_row():
    result = properties.check_property("asset", fairalloc.load_case("drf-theorem-1"), "si")
    html = result._repr_html_()
    assert body_rows(html) == 1 and ">violated</span>" in html and "fair share runs 15" in html


# -- escaping and truncation -------------------------------------------------------------------


def test_user_and_resource_names_are_escaped():
    evil = "<b>x</b>"
    inst = fairalloc.Instance.from_arrays(
        [30, 30], [[1, 3], [1, 1]], users=["a&b", evil], resources=["cpu", "<i>mem</i>"], name="<script>"
    )
    alloc = fairalloc.solve(inst, "asset")
    report = properties.check("asset", inst, ["si"])
    for html in (inst._repr_html_(), alloc._repr_html_(), report._repr_html_()):
        assert "<b>" not in html and "<i>" not in html and "<script>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in inst._repr_html_() and "&lt;i&gt;mem&lt;/i&gt;" in alloc._repr_html_()
    assert "a&amp;b" in alloc._repr_html_()
    assert "user &lt;b&gt;x&lt;/b&gt; gets 12 tasks" in report._repr_html_()  # names inside witnesses


def test_large_instances_are_truncated_without_building_every_row():
    rng = np.random.default_rng(0)
    n = 100_000
    inst = fairalloc.Instance.from_arrays(np.full(4, 1e4), rng.uniform(0.1, 1, (n, 4)), max_tasks=np.full(n, 7.0))
    html = inst._repr_html_()
    assert body_rows(html) == MAX_ROWS + 1  # 20 users and the "more" row
    assert f"{n - MAX_ROWS:,} more users ({n:,} in all)" in html
    assert ">20</th>" in html and ">21</th>" not in html
    assert inst._users is None  # the 10^5 default names were never made
    small = fairalloc.Instance.from_arrays(np.full(4, 1e4), inst.demand[:1000], max_tasks=np.full(1000, 7.0))
    assert counts_hidden(html) == counts_hidden(small._repr_html_())  # the same table but for the counts

    alloc = fairalloc.solve(inst, "drf")
    html = alloc._repr_html_()
    assert body_rows(html) == MAX_ROWS + 1 and f"{n - MAX_ROWS:,} more users" in html
    assert "bundles" not in alloc.__dict__  # no (n, m) bundle array for a display
    assert inst._users is None


# -- the example notebook ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook run in a fresh kernel of ``sys.executable``, from a scratch directory."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    tmp = tmp_path_factory.mktemp("notebook")
    write_kernel_spec(tmp / "kernels" / "python3")  # argv: [sys.executable, -m, ipykernel_launcher]
    km = KernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp / "kernels")]))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    client = nbclient.NotebookClient(
        nb, km=km, timeout=600, allow_errors=False, resources={"metadata": {"path": str(tmp)}}
    )
    # with a kernel manager passed in, nbclient leaves the kernel and its client's sockets open
    # unless asked (garbage-collected in a later test, the sockets warned there)
    client.execute(cleanup_kc=True)
    return nb


def outputs(nb, mime: str) -> list[str]:
    return [
        str(o["data"][mime])
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if o.get("data", {}).get(mime) is not None
    ]


def html_with(nb, text: str) -> str:
    """The one HTML output containing ``text``."""
    (html,) = [h for h in outputs(nb, "text/html") if text in h]
    return html


def allocation_in(nb, mechanism: str, case: str) -> dict[str, str]:
    """{user: tasks} of the allocation table captioned 'MECHANISM on CASE (method ...'."""
    return first_columns(html_with(nb, f">{mechanism} on {case} (method"))


def report_in(nb, mechanism: str, case: str) -> str:
    return html_with(nb, f">{mechanism} on {case}</caption>")


def test_notebook_runs_end_to_end_in_this_interpreter(executed):
    errors = [
        o for cell in executed.cells if cell.cell_type == "code" for o in cell.outputs if o.output_type == "error"
    ]
    assert errors == []
    assert executed.cells[-1].outputs[0]["text"].strip() == sys.executable


def test_notebook_shows_the_instance_and_the_four_allocations(executed):
    inst = html_with(executed, "drf-section-4-1: 2 users x 2 resources")
    assert ">capacity</th>" in inst and ">18</td>" in inst
    case = "drf-section-4-1"
    assert allocation_in(executed, "drf", case) == {"A": "3", "B": "2", "utilisation": ""}
    assert allocation_in(executed, "asset", case) == {"A": "2.52", "B": "2.16", "utilisation": ""}
    assert allocation_in(executed, "ceei", case) == {"A": "4.0909", "B": "1.6364", "utilisation": "", "price": ""}
    alpha = allocation_in(executed, "alpha-fair:2", case)  # 3 (sqrt 2 + 1) / (sqrt 2 + 1/2) ...
    assert (alpha["A"], alpha["B"]) == ("3.7279", "1.7574")


def test_notebook_property_reports_show_theorem_1(executed):
    asset = report_in(executed, "asset", "drf-theorem-1")
    si = asset.split(">sharing_incentive</th>")[1].split("</tr>")[0]
    assert ">violated</span>" in si and "user 2 gets 12 tasks, her fair share runs 15" in si
    drf = report_in(executed, "drf", "drf-theorem-1")
    assert ">violated</span>" not in drf and drf.count(">holds</span>") == 3
    section = report_in(executed, "asset", "drf-section-4-1")
    assert body_rows(section) == 8  # all eight properties


def test_notebook_walks_the_frontier_and_plots_it(executed):
    (frontier,) = [t for t in outputs(executed, "text/plain") if t.startswith("[('alpha=0'")]
    assert "('alpha=2', 1.4142, 0.5858" in frontier and "('alpha=inf', 1.3333, 0.6667, 1.0)" in frontier
    assert len(outputs(executed, "image/png")) == 1


def test_notebook_is_stored_without_outputs():
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
    assert nb.metadata.kernelspec.name == "python3"
