"""``fairalloc import``: a scheduler's own configuration files in, a queue case out."""

from __future__ import annotations

import re
import warnings

import click
from tabulate import tabulate

from fairalloc.cli.options import Choice, format_option, output_path, write_text, write_yaml
from fairalloc.cli.render import emit, json_doc, yaml_doc
from fairalloc.core.errors import CaseError, FairallocError, FairallocWarning, quoted
from fairalloc.io.importers import SYSTEMS, import_files
from fairalloc.io.importers.common import BACKLOGGED
from fairalloc.io.importers.live import TIMEOUT, Connection, Live


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
        name = name.strip()
        if name in out:  # never a silent choice between two amounts
            raise FairallocError(f"--capacity: {name} is given twice ({name}={out[name]} and {part}): give it once")
        out[name] = value.strip()
    return out


def live_options(urls, kube, context, kubeconfig, timeout, insecure, ca_file, token) -> Live | None:
    """What ``--url`` and ``--kube`` ask to read (``--context`` or ``--kubeconfig`` alone imply ``--kube``)."""
    kube = kube or context is not None or kubeconfig is not None
    if not urls and not kube:
        return None
    if not timeout > 0:
        raise FairallocError(f"--timeout: must be a number of seconds > 0 (got {timeout:g})")
    connection = Connection(timeout=timeout, insecure=insecure, ca_file=ca_file, token=token)
    return Live(urls=tuple(urls), kube=kube, context=context, kubeconfig=kubeconfig, connection=connection)


@click.command("import")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--from", "system", type=Choice(list(SYSTEMS)), help="The system the files come from (default: detected)."
)
@click.option(
    "--capacity",
    metavar="R=N[,R=N...]",
    help="The cluster's resources when the files give none (or to override them): a bare number is "
    "read in the case's unit of the resource (cores for cpu, vcores and vcore, bytes for Kubernetes "
    "memory, MiB for YARN memory-mb and Mesos mem), a Kubernetes quantity (16000m, 64Gi, 64G) is "
    "converted to it; the case's description says how each was read. Without it every capacity the "
    "files state is read (node lists and Node objects, Mesos agents, YARN's cluster metrics, "
    "YuniKorn's partitions, a root queue's maximum); where two disagree a warning names both, and "
    "the nodes count before the totals a scheduler reports (derived from them), the totals before a "
    "root maximum (YuniKorn sets root's maximum to its nodes' total).",
)
@click.option("--out", type=click.Path(dir_okay=False), help="Write the case to this YAML file.")
@click.option(
    "--name",
    help="The case's name (default: the --out file's or the first file's stem; stdin for -; the first URL's host; "
    "the --context or kubernetes).",
)
@format_option("json", "yaml", help="What to print: a summary table (the case itself without --out), JSON or YAML.")
@click.option(
    "--url",
    "urls",
    multiple=True,
    metavar="URL",
    help="Read a live YARN ResourceManager, YuniKorn scheduler or Mesos master at this base URL (repeatable).",
)
@click.option("--kube", is_flag=True, help="Read the Kubernetes cluster of the kubeconfig's current context.")
@click.option("--context", metavar="NAME", help="With --kube: the kubeconfig context to read (implies --kube).")
@click.option(
    "--kubeconfig", metavar="FILE", help="With --kube: the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."
)
@click.option(
    "--timeout",
    type=float,
    default=TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="How long one request to a server may take.",
)
@click.option("--insecure", is_flag=True, help="Do not check the server's TLS certificate.")
@click.option(
    "--ca-file",
    type=click.Path(exists=True, dir_okay=False),
    help="Check the server's TLS certificate against this CA file.",
)
@click.option(
    "--jobs",
    metavar="OUT.yaml",
    help="Also read what ran (Pods, Kueue Workloads, Volcano Jobs and PodGroups with their status times) "
    "and write it to this file as a job workload for 'fairalloc simulate', checked against --case or, "
    "without it, against the case imported from the same files (see docs/records.md); a .jsonl file is "
    "written as JSON Lines, one job a line (for workloads beyond what a YAML file holds).",
)
@click.option(
    "--case",
    "case_name",
    metavar="CASE",
    help="With --jobs: the queue case the workload is for (default: the case imported from the files).",
)
@click.option(
    "--window-end",
    metavar="TIME",
    help="With --jobs: when the records were taken (RFC 3339, like 2024-03-19T21:00:00Z): a job still "
    "running runs until then (default: the latest submit, start or finish of the records).",
)
@click.option(
    "--runtime",
    type=float,
    metavar="SECONDS",
    help="With --jobs: the run time of a job that has not finished: one still running runs this long "
    "from its start, one still waiting is replayed with it (without it a waiting job is left out).",
)
@click.option(
    "--trace",
    type=Choice(["google-2011", "google-2019", "alibaba-2018"]),
    help="With --jobs and --case: FILES are a public trace's tables (Google 2011 task_events, Google 2019 "
    "collection_events and instance_events, Alibaba 2018 batch_task) read as a job workload (docs/traces.md).",
)
@click.option(
    "--queue-by",
    metavar="KEY",
    help="With --trace: what names a job's queue (google-2011: user or priority-band; google-2019: user, "
    "collection-name or priority-band; alibaba-2018: task-type or job; default: the first).",
)
@click.option(
    "--queue-map",
    type=click.Path(exists=True, dir_okay=False),
    help="With --trace: a YAML or JSON mapping {trace value: queue} applied after --queue-by.",
)
@click.option(
    "--token",
    envvar="FAIRALLOC_TOKEN",
    metavar="TOKEN",
    help="A bearer token sent to the servers (default: $FAIRALLOC_TOKEN; --kube: the kubeconfig's).",
)
def import_command(files, system, capacity, out, name, fmt, urls, kube, context, kubeconfig, **options):
    """Read a scheduler's configuration (Volcano, Kueue, YARN, YuniKorn, Mesos, Kubernetes) as a case.

    From files, standard input (-) or a live cluster (--url, --kube).

    \b
    Example:
      fairalloc import cohorts.yaml cluster-queues.yaml --out team.yaml
      fairalloc explain team.yaml --queue team-a
      fairalloc import fair-scheduler.xml nodes.json --from yarn --format json
      fairalloc import queues.yaml --capacity vcore=64,memory=256Gi
      kubectl get nodes,pods,clusterqueues,cohorts,localqueues,workloads -A -o json | fairalloc import -
      curl -s http://rm:8088/ws/v1/cluster/scheduler | fairalloc import - --out yarn.yaml
      fairalloc import --url http://rm:8088 --out yarn.yaml
      fairalloc import --url http://yunikorn-service:9080 --timeout 10
      fairalloc import --url https://rm:8090 --ca-file ca.pem --token "$(cat token)"
      fairalloc import --url http://mesos-master:5050 --from mesos --format json
      fairalloc import --kube --context prod --out prod.yaml
      kubectl get localqueues,workloads -A -o json > records.json
      fairalloc import queues.yaml records.json --jobs week.yaml --out team.yaml --window-end 2024-03-20T00:00:00Z
      fairalloc simulate week.yaml --case team.yaml --scheduler kueue
      fairalloc import --trace alibaba-2018 batch_task.csv --jobs day.yaml --case team.yaml

    FILES are the system's own files (- reads standard input): Kubernetes objects (multi-document
    YAML, 'kubectl get ... -o json' lists, ConfigMaps that hold the configuration), YARN's
    fair-scheduler.xml or capacity-scheduler.xml, REST answers of the YARN ResourceManager
    (FairScheduler or Capacity Scheduler), the YuniKorn scheduler or the Mesos master. --jobs writes
    the records of what ran among the files (Pods, Kueue Workloads, Volcano Jobs and PodGroups) as a
    job workload to replay. --url fetches those REST answers from the running system (told by which
    endpoint answers, or --from); --kube lists nodes, pods and the scheduler's objects (Volcano or
    Kueue) through the kubeconfig. Capacity comes from Node objects or node lists when given, else
    from the configuration, else from --capacity. Anything not understood is a warning naming the
    file (or URL), the object and the field.
    """
    jobs = {k: options.pop(k) for k in ("jobs", "case_name", "window_end", "runtime")}
    trace = {k: options.pop(k) for k in ("trace", "queue_by", "queue_map")}
    if trace["trace"] is not None:
        return import_trace(list(files), fmt, **trace, **jobs)
    for option in ("queue_by", "queue_map"):
        if trace[option] is not None:
            raise FairallocError(f"--{option.replace('_', '-')}: only with --trace KIND")
    live = live_options(urls, kube, context, kubeconfig, **options)
    if not files and live is None:
        raise FairallocError("nothing to import: give FILES, - (standard input), --url or --kube")
    if jobs["jobs"] is not None:
        if live is not None:
            raise FairallocError("--jobs: reads FILES (or -), not --url or --kube: save the objects first")
        return import_jobs(list(files), system, capacity_option(capacity), out, name, fmt, **jobs)
    for option, given in jobs.items():
        if given is not None:
            raise FairallocError(f"--{option.removesuffix('_name').replace('_', '-')}: only with --jobs OUT.yaml")
    target = output_path(out, "--out") if out else None
    stem = name or (target.stem if target else None)
    case, found = import_files(list(files), system=system, capacity=capacity_option(capacity), name=stem, live=live)
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


def import_jobs(files, system, capacity, out, name, fmt, *, jobs, case_name, window_end, runtime) -> None:
    """``--jobs``: the records among ``files`` as a workload checked against ``case_name`` (else the
    case imported from the same files, also written to ``--out`` when given); nothing is written
    unless both read."""
    from fairalloc.cli.options import load_case
    from fairalloc.io.importers import import_case
    from fairalloc.io.importers.common import Notes, read_documents
    from fairalloc.io.importers.records import checked_workload, parse_time

    if runtime is not None and not 0 < runtime < float("inf"):
        raise FairallocError(f"--runtime: must be a number of seconds > 0 (got {runtime:g})")
    end = None if window_end is None else parse_time(window_end, "--window-end")
    if out and case_name is not None:
        raise FairallocError("--out: with --case the case is given, not imported; leave --out or --case out")
    target, case_target = output_path(jobs, "--jobs"), output_path(out, "--out") if out else None
    if case_target is not None and case_target.resolve() == target.resolve():
        raise FairallocError(f"--jobs and --out name the same file ({target}): the workload and the case are two files")
    documents = read_documents(files)
    found: list[str] = []
    case: dict = {}
    if case_name is not None:
        instance, against = load_case(case_name).instance, f"case {case_name}"
    else:
        stem = name or (case_target.stem if case_target else None)
        case, loaded, found = import_case(files, system=system, capacity=capacity, name=stem, documents=documents)
        instance, against = loaded.instance, f"the case imported from the same files ({case['name']})"
    notes = Notes()
    workload, origin = checked_workload(documents, instance, notes, window_end=end, runtime=runtime)
    found = [*found, *notes.warnings]
    for line in found:
        warnings.warn(line, FairallocWarning, stacklevel=1)
    header = (
        f"# Jobs read by 'fairalloc import --jobs' from {', '.join(files)}, checked against {against}.\n"
        f"# Times are seconds from {origin.isoformat().replace('+00:00', 'Z')}, the earliest submit "
        "(metadata.creationTimestamp) of the jobs written.\n"
    )
    if case_target is not None:
        write_yaml(case_target, case)
    also = f" and the case to {case_target}" if out else ""
    write_jobs(target, header, workload, found, fmt, also)


def write_jobs(target, header: str, workload: dict, found: list[str], fmt: str, also: str = "") -> None:
    """Write a checked workload and say so: how many jobs, where, with its warnings (``--format
    json``: as data).  A ``.jsonl`` target is written line by line (JSON has no comments: the
    ``header`` lines are YAML's); a YAML one only when the loader reads it back (its size and
    nodes), since the workload was checked as data, not as the text written."""
    from fairalloc.core.files import write_atomically
    from fairalloc.io.job_workloads import JSONL, check_yaml_readable, jsonl_lines

    try:
        if target.suffix == JSONL:
            lines = jsonl_lines(workload)
            write_atomically(target, lambda tmp: _write_lines(tmp, lines))
        else:
            text = header + yaml_doc(workload)
            check_yaml_readable(workload, text)
            write_text(target, text)
    except CaseError as exc:
        raise FairallocError(f"--jobs {target}: {exc}") from None
    n = len(workload["jobs"])
    if fmt == "json":
        emit(json_doc({"jobs": n, "warnings": found, "out": str(target)}))
    else:
        emit(f"wrote {n} jobs to {target}{also}" + f" ({len(found)} warnings)" * bool(found))


def _write_lines(path, lines) -> None:
    with open(path, "w", encoding="ascii") as stream:
        stream.writelines(lines)


def import_trace(files, fmt, *, trace, queue_by, queue_map, jobs, case_name, window_end, runtime) -> None:
    """``--trace KIND``: a public trace's tables as a workload for ``--case``, checked before it
    is written (:func:`fairalloc.scheduling.trace_jobs.trace_workload`)."""
    from fairalloc.cli.options import load_case
    from fairalloc.scheduling.trace_jobs import trace_workload

    if jobs is None or case_name is None:
        raise FairallocError("--trace: give --jobs OUT.yaml and --case CASE (a trace names no queues of its own)")
    for option, given in (("--window-end", window_end), ("--runtime", runtime)):
        if given is not None:
            raise FairallocError(f"{option}: for records (--jobs without --trace); a trace gives every run time")
    if not files or "-" in files:
        raise FairallocError("--trace: give the trace's files by path (standard input is not read)")
    target = output_path(jobs, "--jobs")
    found = trace_workload(trace, files, queue_by=queue_by, queue_map=queue_map, case=load_case(case_name).instance)
    for line in found.warnings:
        warnings.warn(line, FairallocWarning, stacklevel=1)
    read = f"# Jobs read by 'fairalloc import --trace {trace}' from {', '.join(files)},\n"
    header = read + f"# checked against {case_name}.\n"
    write_jobs(target, header, found.data, found.warnings, fmt)


#: rows of the summary table: an operator's 10,000 queues are in the written case, not on the screen
SUMMARY_ROWS = 40


def summary(case: dict) -> str:
    """The imported queues at a glance: one row per group and queue, the first :data:`SUMMARY_ROWS`."""
    resources = list(case["resources"])
    tables = (("group", case.get("groups", {})), ("queue", case["users"]))
    # deserved (Volcano's capacity plug-in) only when some queue has one: other systems keep their columns
    fields = ["guarantee", "limit", "deserved", "request", "usage"]
    if not any("deserved" in spec for _, table in tables for spec in table.values()):
        fields.remove("deserved")
    rows = []
    for kind, table in tables:
        for node, spec in table.items():
            parent = spec.get("parent", spec.get("group", ""))
            cells = [_amounts(spec.get(f), resources) for f in fields]
            rows.append([node, kind, parent or "", spec.get("weight", 1), *cells])
    title = f"{case['name']}: {len(case['users'])} queues, policy {case.get('policy', 'drf')}; capacity " + ", ".join(
        f"{r} {v}{_unit(case, r)}" for r, v in case["resources"].items()
    )
    title += "".join(f"\n  {sentence}" for sentence in _capacity_said(case))
    head = ["name", "kind", "parent", "weight", *fields]
    if case.get("demand") == "backlogged":
        title += "\n  " + BACKLOGGED
    more = len(rows) - SUMMARY_ROWS
    table = tabulate(rows[:SUMMARY_ROWS] if more > 0 else rows, head, disable_numparse=True)
    return (
        title + "\n" + table + (f"\n... and {more:,} more groups and queues (all are in the case)" if more > 0 else "")
    )


def _amounts(mapping: dict | None, resources: list[str]) -> str:
    if not mapping:
        return ""
    return ", ".join(f"{r} {mapping[r]}" for r in resources if r in mapping)


def _unit(case: dict, resource: str) -> str:
    """`` cores`` after an amount of cores: the case's unit of ``resource`` (nothing for a count)."""
    unit = case.get("units", {}).get(resource, "count")
    return "" if unit == "count" else f" {unit}"


def _capacity_said(case: dict) -> list[str]:
    """The description's sentences on the capacity: where it comes from, how --capacity was read."""
    return [s for s in re.split(r"(?<=\.)\s+", case.get("description", "")) if s.startswith("Capacity")]
