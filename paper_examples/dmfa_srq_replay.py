"""Replay a Google-trace-scale arrival sequence through DMFA-SRQ (Zhang, Liu, Li, Zhang, Journal on
Communications 2016; the data set of its section 6 is the Google cluster trace 2011, about 670k
tasks) and stream one CSV row per arrival.

Each task of the trace is a user arriving with its requests as per-task demands (fractions of one
machine; capacity 1 per resource) and a shared quantity ``q ~ Dirichlet(1, ..., 1)``; the
mechanism's fast path (amortised ``O(m)`` per arrival) solves every arrival. Demands come from
Google cluster trace 2011 ``task_events`` files (``--trace``, in file order, first usable SUBMIT
per task) or, by default, from the SYNTHETIC generator
:func:`fairalloc.scheduling.traces.synthetic_google_like` with 4 resources (cpu, mem and two
synthetic columns named disk and net; shaped like the trace, but not the trace).

Row ``k`` of OUT (default ``out/dmfa_srq_replay.csv``): ``k, user, q, M, pool, dominant_share,
tasks`` of the arrival (on arrival), ``util_<resource>`` after it, and the resources that bind.
A summary (time to solve and to write, the last M, the sharing-incentive slack, the final
utilisation) goes to stdout as a table, or as JSON with ``--format json``.

    python paper_examples/dmfa_srq_replay.py                       # 670,000 synthetic arrivals x 4
    python paper_examples/dmfa_srq_replay.py --arrivals 20000 --out /tmp/replay.csv
    python paper_examples/dmfa_srq_replay.py --trace part-00000-of-00500.csv.gz --resources cpu,mem,disk
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from tabulate import tabulate

from fairalloc.core.errors import FairallocError
from fairalloc.scheduling.traces import (
    REQUESTS,
    SYNTHETIC_RESOURCES,
    load_google_task_events,
    replay_arrivals,
    synthetic_google_like,
)

TRACE_ARRIVALS = 670_000  # about the tasks of the Google cluster trace 2011 the paper replays


def parse_resources(text: str) -> tuple[str, ...]:
    names = tuple(v.strip() for v in text.split(",") if v.strip())
    if not names or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"expected distinct comma-separated names, got {text!r}")
    return names


def demands_and_shares(args) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], str]:
    rng = np.random.default_rng(args.seed)
    if args.trace:
        resources = args.resources or ("cpu", "mem")
        demands = load_google_task_events(args.trace, max_tasks=args.max_tasks, resources=resources)
        source = f"Google cluster trace 2011 task_events ({len(args.trace)} file(s))"
    else:
        resources = args.resources or SYNTHETIC_RESOURCES
        unknown = [r for r in resources if r not in SYNTHETIC_RESOURCES]
        if unknown or resources != SYNTHETIC_RESOURCES[: len(resources)]:
            raise FairallocError(
                f"--resources: the synthetic generator's columns are, in order, {','.join(SYNTHETIC_RESOURCES)} "
                f"(got {','.join(resources)}); pick a prefix, or read --trace files"
            )
        demands = synthetic_google_like(args.arrivals, rng, len(resources))
        source = "SYNTHETIC, shaped like the Google 2011 trace (not the trace)"
    q = rng.dirichlet(np.ones(len(demands)))
    while (q <= 0).any():  # a gamma variate underflowing to 0: vanishingly rare
        q = rng.dirichlet(np.ones(len(demands)))
    return demands, q, resources, source


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__
    )
    parser.add_argument("--arrivals", type=int, default=TRACE_ARRIVALS, help="synthetic arrivals (default 670000)")
    parser.add_argument(
        "--resources",
        type=parse_resources,
        default=None,
        help=f"comma-separated; synthetic: a prefix of {','.join(SYNTHETIC_RESOURCES)} (default all 4); "
        f"--trace: of {','.join(REQUESTS)} (default cpu,mem)",
    )
    parser.add_argument("--trace", nargs="+", default=None, metavar="FILE", help="Google 2011 task_events files")
    parser.add_argument("--max-tasks", type=int, default=None, help="read at most this many tasks from --trace")
    parser.add_argument("--mechanism", choices=["dmfa-srq", "ddrf"], default="dmfa-srq")
    parser.add_argument("--seed", type=int, default=0, help="seeds the demands (synthetic) and the shares")
    parser.add_argument("--out", default="out/dmfa_srq_replay.csv", help="the CSV of rows per arrival")
    parser.add_argument("--format", choices=["table", "json"], default="table", help="the summary on stdout")
    parser.add_argument("--no-progress", dest="progress", action="store_false", default=None)
    args = parser.parse_args(argv)
    try:
        if args.arrivals < 1:
            raise FairallocError(f"--arrivals: must be at least 1 (got {args.arrivals})")
        demands, q, resources, source = demands_and_shares(args)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        summary = replay_arrivals(
            demands, q, args.out, resources=resources, mechanism=args.mechanism, progress=args.progress
        )
    except FairallocError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary["source"] = source
    if args.format == "json":
        print(json.dumps(summary, indent=2))
    else:
        rows = [[key, value] for key, value in summary.items() if key != "utilization"]
        rows += [[f"utilization {r}", f"{v:.4%}"] for r, v in summary["utilization"].items()]
        print(tabulate(rows, ["replay", ""], disable_numparse=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
