"""``fairalloc explain``: each queue's entitlement under a policy, and why."""

from __future__ import annotations

import click
from tabulate import tabulate

from fairalloc.analysis.explain import DEMANDS
from fairalloc.analysis.explain import explain as explain_case
from fairalloc.cli.options import Choice, format_option, load_case, method_option, policy_option
from fairalloc.cli.render import emit, json_doc, yaml_doc
from fairalloc.core.units import readable


@click.command()
@click.argument("case")
@policy_option()
@click.option("--queue", metavar="NAME", help="Explain this queue only (default: every queue).")
@click.option(
    "--demand",
    type=Choice(list(DEMANDS)),
    help="observed: the recorded requests; backlogged: every queue wants more, the steady entitlements "
    "(default: what the case says, 'demand:'; an imported configuration without requests says backlogged).",
)
@method_option()
@format_option("json", "yaml", help="Output format.")
def explain(case, policy, queue, demand, method, fmt):
    """What each queue of CASE is entitled to under a policy, and why.

    \b
    Example:
      fairalloc explain report-volcano-4165
      fairalloc explain my-cluster.yaml -m kueue --queue team-a
      fairalloc explain my-cluster.yaml --format json
      fairalloc explain fair-scheduler.yaml --demand observed

    For every queue: its entitlement under the policy (the scheduler the case names with 'policy:',
    as 'fairalloc import' writes it), under DRF and H-DRF for contrast, its usage and the gap, and
    sentences built from the computation: which constraint binds (its request, its limit, its
    guarantee, a lending limit, an exhausted resource), its dominant resource, and which queues it
    shares the last unit with.

    A case of configuration alone (no queue has a request) is explained as backlogged: what each queue
    is entitled to when every queue wants more, the policy's steady state.
    """
    loaded = load_case(case)
    report = explain_case(loaded, policy, queue=queue, method=method, demand=demand)
    if fmt == "json":
        emit(json_doc(report.to_dict()))
    elif fmt == "yaml":
        emit(yaml_doc(report.to_dict()))
    else:
        emit(table(report))


def table(report) -> str:
    """The queues side by side, then each queue's sentences."""
    units = report.units
    contrast = next(iter(report.queues.values())).contrast if report.queues else {}
    head = ["queue", report.policy, *contrast, "usage", "gap", "binding"]
    rows = []
    for q, e in report.queues.items():
        cells = [_bundle(e.entitlement, units)]
        cells += [_bundle(b, units) if b is not None else "refused" for b in e.contrast.values()]
        rows.append([q, *cells, _bundle(e.usage, units), _bundle(e.gap, units), ", ".join(e.binding)])
    parts = [f"{report.policy} on {report.case}", *report.summary, "", tabulate(rows, head, disable_numparse=True)]
    for q, e in report.queues.items():
        parts += ["", f"{q}:", *(f"  {line}" for line in e.why)]
    return "\n".join(parts)


def _bundle(amounts: dict[str, float], units: dict[str, str]) -> str:
    shown = [f"{r} {readable(v, units.get(r))}" for r, v in amounts.items() if abs(v) > 0]
    return ", ".join(shown) or "0"
