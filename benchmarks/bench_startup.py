"""Start-up benchmark: how long the command line takes to start, as ratios to what it cannot avoid.

Targets: ``fairalloc --help`` within 1.5x of ``python -c "import numpy"`` (issue 18), and a small
``fairalloc solve drf-section-4-1`` within 1.5x of the *floor* (issue 36, replacing issue 18's
2.5x of ``import numpy``): a Python process that imports the third-party packages a ``solve`` of
a case file cannot do without (numpy, click parses the command line, PyYAML reads the case,
pydantic validates it, tabulate lays out its tables), reads the same case file with them
(``yaml.safe_load``, a pydantic model of its resources and users) and prints its users' demands
and the capacities as two tables: the work of reading and printing a case, with no fairness
computed.  Each command runs in a fresh Python process (this interpreter; ``-m fairalloc`` for
the command line, which is what the ``fairalloc`` script runs), timed from before the process is
started to after it has exited, its output discarded.  The commands are interleaved round by
round, so load from other processes hits all of them alike; one untimed round first writes the
byte-code caches (as an installed package has them, even where ``PYTHONDONTWRITEBYTECODE`` is
set). Ratios are of medians (and of the fastest runs, ``from min``) over the same rounds, and of
the median CPU time (user + system), which a shared machine disturbs less, each to the row's
``reference``.  Also reported, without a target: the Python API,
``import fairalloc; fairalloc.solve(fairalloc.load_case(...), "drf")``, and those packages
imported alone (to ``import numpy``).

``--previous DIR`` also times a second checkout of fairalloc (the commit before the change, from
``git worktree add /tmp/fairalloc-base <commit>``) in the same rounds, so that the before and
after figures are taken under the same load; they are written under ``"previous"`` (without
``--previous``, the ``"previous"`` figures already in the ``--json`` file are kept, with the date
of the run that took them).

    .venv/bin/python benchmarks/bench_startup.py                  # 15 rounds
    .venv/bin/python benchmarks/bench_startup.py --quick          # 5 rounds
    .venv/bin/python benchmarks/bench_startup.py --json benchmarks/results_startup.json
    .venv/bin/python benchmarks/bench_startup.py --previous /tmp/fairalloc-base --json ...

A missed target prints ``TARGET MISSED``; the exit status stays 0 (``--strict``: 1).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from provenance import commit, load_average, machine

ROOT = Path(__file__).resolve().parent.parent
CASE = "drf-section-4-1"
BASELINE = ("import numpy", ["-c", "import numpy"], None, None)
#: the floor of a ``solve`` of a case file: its packages read the case and print it as tables
READ_AND_PRINT = """
import sys
import click, numpy, tabulate, yaml
from pydantic import BaseModel, ConfigDict

class User(BaseModel):
    model_config = ConfigDict(extra="allow")
    demand: dict[str, float]

class Case(BaseModel):
    model_config = ConfigDict(extra="allow")
    resources: dict[str, float]
    users: dict[str, User]

with open(sys.argv[1], encoding="utf-8") as f:
    case = Case.model_validate(yaml.safe_load(f))
demand = numpy.array([[u.demand[r] for r in case.resources] for u in case.users.values()])
click.echo(tabulate.tabulate([[u, *row] for u, row in zip(case.users, demand.tolist())], ["user", *case.resources]))
click.echo(tabulate.tabulate(list(case.resources.items()), ["resource", "capacity"]))
"""
FLOOR = (
    "floor: numpy, click, yaml, pydantic, tabulate read and print the case",
    ["-c", READ_AND_PRINT, f"cases/{CASE}.yaml"],
    None,
    None,
)
#: (row, arguments to Python, target ratio or None, reference row: None for ``import numpy``)
COMMANDS = [
    ("fairalloc --help", ["-m", "fairalloc", "--help"], 1.5, None),
    (f"fairalloc solve {CASE}", ["-m", "fairalloc", "solve", CASE], 1.5, FLOOR[0]),
    (
        f"python: fairalloc.solve({CASE}, drf)",
        ["-c", f"import fairalloc; fairalloc.solve(fairalloc.load_case({CASE!r}), 'drf')"],
        None,
        None,
    ),
    (
        "import numpy, click, yaml, pydantic, tabulate",
        ["-c", "import numpy, click, yaml, tabulate; from pydantic import BaseModel"],
        None,
        None,
    ),
]


def run(args: list[str], root: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of ``python args`` with ``root`` first on the path: wall from starting
    the process to its exit, CPU its user and system time.  Byte-code caches are written (as an
    installed package has them) even where ``PYTHONDONTWRITEBYTECODE`` is set."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} (in {root}) failed:\n{proc.stderr.decode()}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(roots: dict[str, Path], rounds: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """``{checkout: {row: [(wall, CPU) per round]}}``, every command of every checkout in each round."""
    jobs = [(key, root, row, args) for key, root in roots.items() for row, args, *_ in [BASELINE, FLOOR, *COMMANDS]]
    times: dict[str, dict[str, list[tuple[float, float]]]] = {key: {} for key in roots}
    for _key, root, _row, args in jobs:  # untimed: byte-code caches, disk cache
        run(args, root)
    for i in range(rounds):
        for key, root, row, args in jobs:
            times[key].setdefault(row, []).append(run(args, root))
        print(f"round {i + 1}/{rounds}", file=sys.stderr)
    return times


def figures(times: dict[str, list[tuple[float, float]]]) -> dict:
    """Each row's medians, and its ratios to its reference row (``import numpy`` or the floor)."""
    rows = []
    for row, _args, target, reference in [BASELINE, FLOOR, *COMMANDS]:
        ref = reference or BASELINE[0]
        wall, base = [w for w, _ in times[row]], [w for w, _ in times[ref]]
        cpu, base_cpu = (statistics.median(c for _, c in times[r]) for r in (row, ref))
        ratio = statistics.median(wall) / statistics.median(base)
        rows.append(
            {
                "command": row,
                "reference": ref,
                "median_s": round(statistics.median(wall), 4),
                "min_s": round(min(wall), 4),
                "cpu_s": round(cpu, 4),
                "ratio": round(ratio, 3),
                "ratio_from_min": round(min(wall) / min(base), 3),
                "cpu_ratio": round(cpu / base_cpu, 3),
                "target": target,
                "met": None if target is None else ratio <= target,
            }
        )
    return {"rows": rows}


def show(title: str, result: dict) -> None:
    print(f"\n{title}")
    head = f"{'median s':>9} {'min s':>7} {'ratio':>6} {'(from min)':>10} {'CPU s':>6} {'CPU ratio':>9}"
    print(f"{'command':70} {head}  target (ratio to)")
    for r in result["rows"]:
        target = "" if r["target"] is None else f"<= {r['target']}" + ("" if r["met"] else "  TARGET MISSED")
        wall = f"{r['median_s']:9.3f} {r['min_s']:7.3f} {r['ratio']:6.2f} {r['ratio_from_min']:10.2f}"
        to = "" if r["reference"] == r["command"] else f" ({r['reference'].split(':')[0]})"
        print(f"{r['command']:70} {wall} {r['cpu_s']:6.3f} {r['cpu_ratio']:9.2f}  {target}{to}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5 rounds: a smoke test")
    ap.add_argument("--rounds", type=int, help="timed rounds (default 15, 5 with --quick)")
    ap.add_argument("--previous", metavar="DIR", type=Path, help="also time this checkout (before the change)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--strict", action="store_true", help="exit status 1 when a target is missed")
    args = ap.parse_args()
    rounds = args.rounds or (5 if args.quick else 15)
    roots = {"current": ROOT}
    if args.previous:
        roots["previous"] = args.previous.resolve()
    load = load_average()
    times = measure(roots, rounds)
    out: dict = {
        "benchmark": "startup",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "load_average": {"start": load, "end": load_average()},
        "rounds": rounds,
    }
    for key, root in roots.items():
        out[key] = {"commit": commit(root), **figures(times[key])}
        show(f"{key} ({out[key]['commit']}), {rounds} rounds:", out[key])
    print(f"\nload average: {out['load_average']['start']} at the start, {out['load_average']['end']} at the end")
    if args.json:
        path = Path(args.json)
        if "previous" not in out and path.exists():  # the before figures of an earlier run stay, with its date
            earlier = json.loads(path.read_text())
            if "previous" in earlier:
                out["previous"] = {**earlier["previous"], "from_run_of": earlier.get("date")}
        path.write_text(json.dumps(out, indent=2) + "\n")
    missed = [r for r in out["current"]["rows"] if r["met"] is False]
    if args.strict and missed:
        sys.exit(1)


if __name__ == "__main__":
    main()
