"""``fairalloc import``: a scheduler's own configuration files in, a queue case out."""

from __future__ import annotations

import warnings

import click
from tabulate import tabulate

from fairalloc.cli.options import Choice, format_option, output_path, write_yaml
from fairalloc.cli.render import emit, json_doc, yaml_doc
from fairalloc.core.errors import FairallocError, FairallocWarning, quoted
from fairalloc.io.importers import SYSTEMS, import_files


def capacity_option(text: str | None) -> dict[str, str] | None:
    """``cpu=64,memory=256Gi`` as ``{resource: text}`` (converted once the case's units are known)."""
    if not text:
        return None
    out: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise FairallocError(
                f"--capacity: expected resource=amount pairs like cpu=64,memory=256Gi (got {quoted(part)})"
            )
        out[name.strip()] = value.strip()
    return out


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--from", "system", type=Choice(list(SYSTEMS)), help="The system the files come from (default: detected)."
)
@click.option(
    "--capacity",
    metavar="R=N[,R=N...]",
    help="The cluster's resources when the files give none (or to override them): a number in the "
    "case's unit, or a Kubernetes quantity such as 256Gi.",
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the case to this YAML file.")
@click.option("--name", help="The case's name (default: the --out file's or the first file's stem).")
@format_option("json", "yaml", help="What to print: a summary table (the case itself without --out), JSON or YAML.")
def import_command(files, system, capacity, out, name, fmt):
    """Read a scheduler's configuration (Volcano, Kueue, YARN, YuniKorn, Mesos, Kubernetes) as a case.

    \b
    Example:
      fairalloc import cohorts.yaml cluster-queues.yaml --out team.yaml
      fairalloc explain team.yaml --queue team-a
      fairalloc import fair-scheduler.xml nodes.json --from yarn --format json
      fairalloc import queues.yaml --capacity vcore=64000,memory=256Gi

    FILES are the system's own files: Kubernetes objects (multi-document YAML, 'kubectl get ... -o
    json' lists, ConfigMaps that hold the configuration), YARN's fair-scheduler.xml or
    capacity-scheduler.xml, REST answers of the YARN ResourceManager (FairScheduler or Capacity
    Scheduler), the YuniKorn scheduler or the Mesos master. Capacity comes from Node
    objects or node lists when given, else from the configuration, else from --capacity.
    Anything not understood is a warning naming the file, the object and the field.
    """
    target = output_path(out, "--out") if out else None
    stem = name or (target.stem if target else None)
    case, found = import_files(list(files), system=system, capacity=capacity_option(capacity), name=stem)
    for line in found:
        warnings.warn(line, FairallocWarning, stacklevel=1)
    if target is not None:
        write_yaml(target, case)
    if fmt == "json":
        emit(json_doc({"case": case, "warnings": found, "out": str(target) if target else None}))
    elif fmt == "yaml" or target is None:
        emit(yaml_doc(case))
    else:
        emit(summary(case) + f"\n\nwrote {target}")


def summary(case: dict) -> str:
    """The imported queues at a glance: one row per group and queue."""
    resources = list(case["resources"])
    rows = []
    for kind, table in (("group", case.get("groups", {})), ("queue", case["users"])):
        for node, spec in table.items():
            parent = spec.get("parent", spec.get("group", ""))
            cells = [_amounts(spec.get(f), resources) for f in ("guarantee", "limit", "request", "usage")]
            rows.append([node, kind, parent or "", spec.get("weight", 1), *cells])
    title = f"{case['name']}: {len(case['users'])} queues, policy {case.get('policy', 'drf')}; capacity " + ", ".join(
        f"{r} {v}" for r, v in case["resources"].items()
    )
    head = ["name", "kind", "parent", "weight", "guarantee", "limit", "request", "usage"]
    return title + "\n" + tabulate(rows, head, disable_numparse=True)


def _amounts(mapping: dict | None, resources: list[str]) -> str:
    if not mapping:
        return ""
    return ", ".join(f"{r} {mapping[r]}" for r in resources if r in mapping)
