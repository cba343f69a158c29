"""``fairalloc audit``: every property of a policy on one case, and every queue's best lie."""

from __future__ import annotations

from pathlib import Path

import click
from tabulate import tabulate

from fairalloc.cli.options import budget as check_budget
from fairalloc.cli.options import format_option, load_case, method_option, output_path, policy_option, write_yaml
from fairalloc.cli.options import seed as check_seed
from fairalloc.cli.render import emit, json_doc


@click.command()
@click.argument("case")
@policy_option()
@click.option("--budget", type=int, default=300, show_default=True, help="Verifier evaluations per queue.")
@click.option("--seed", type=int, default=0, show_default=True)
@method_option()
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the most profitable lie found as a replayable YAML case (a 'misreport' variant).",
)
@format_option("json", help="Output format.")
def audit(case, policy, budget, seed, method, out, fmt):
    """Check every property of a policy on CASE and search each queue's most profitable lie.

    \b
    Example:
      fairalloc audit report-volcano-4165
      fairalloc audit my-cluster.yaml -m kueue --budget 1000 --out lie.yaml
      fairalloc verify lie.yaml -m kueue        replays the lie

    Properties: the DRF paper's eight and, on a queue case, guarantee_honoured, limit_respected,
    no_overcommit and work_conserving, each NO with its witness in words. Then, for every active
    queue, the verifier's best misreported request within --budget evaluations: a lie found proves
    the policy manipulable on this case; none found is not a proof of the opposite.
    """
    from fairalloc.analysis.audit import audit as run_audit
    from fairalloc.core.progress import progress_bar

    check_budget(budget)
    check_seed(seed)
    if out is not None:
        output_path(out, "--out")
    loaded = load_case(case)
    bar = progress_bar(total=None, unit="step", desc="audit", leave=False)

    def step(name: str, steps: int) -> None:  # a property's check or a queue's search starts
        bar.total = steps
        bar.set_postfix_str(name, refresh=False)
        bar.update(1)

    with bar:
        report = run_audit(loaded, policy, budget=budget, seed=seed, method=method, progress=step)
    wrote = out is not None and report.witness is not None
    if wrote:
        write_yaml(out, report.witness)
    if fmt == "json":
        emit(json_doc({**report.to_dict(), "out": str(out) if wrote else None}))
        return
    said = f"\n\nwrote {out}" if wrote else "\n\nno profitable lie found: nothing written" if out else ""
    emit(table(report) + said)


def table(report) -> str:
    """The properties, then the lies, in words."""
    rows = []
    for name, r in report.properties.items():
        mark = "n/a" if not r.applicable else ("yes" if r.holds else "NO")
        words = report.to_dict()["properties"][name]["why"]
        rows.append([name, mark, words if mark != "yes" else ""])
    lies = [[q, "yes" if lie.profitable else "no", lie.why] for q, lie in report.lies.items()]
    lie_table = (
        tabulate(lies, ["queue", "lie found", "best misreport"], disable_numparse=True)
        if lies
        else "no queue has a request: no misreport to search"
    )
    return "\n".join(
        [
            f"{report.policy} on {report.case}",
            tabulate(rows, ["property", "holds", "witness"], disable_numparse=True),
            "",
            lie_table,
        ]
    )
