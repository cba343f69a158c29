"""Queues at operator scale (issue 36): each figure a ratio of timings taken in one process.

1. growth: each production policy at 10^2, 10^3, 10^4 and 10^5 queues, flat and six levels deep
   (``fairalloc.analysis.falsify.random_queue_tree``, solved with ``fairalloc.solve``): the growth
   exponent (least-squares slope of log time over log queues; target <= 1.2), at 10^4 queues the
   ratio to ``drf``'s solve of the same case, timed rep by rep beside it (target <= 5), and the
   peak memory of one solve (``tracemalloc``) at each size, with its own exponent (target <= 1.2:
   linear in the queues).
2. program: each policy that has a program against it (``method="program"``) on trees of up to 200
   queues: the largest difference of an entitlement, relative to its resource's capacity
   (target <= 1e-9).
3. explain: ``fairalloc.analysis.explain.explain`` at 1,000 queues against ``solve`` of the same
   policy (target <= 2), in one process and as the commands a user runs (``fairalloc explain CASE
   -m POLICY`` against ``fairalloc solve CASE -m POLICY``, the tree written as a case file).
4. yarn: importing and explaining a generated 10,000-queue YARN ``fair-scheduler.xml``
   (``import_case``, which loads what it imports, then ``explain``) against ``xml.etree.ElementTree.parse`` of it
   (target <= 5); beside it, the import alone against the parse (target <= 5) and ``explain`` of the
   imported case alone against ``solve`` of it (the explain target, <= 2).
5. read: ``fairalloc.load_case`` of a 100,000-queue YAML case against ``yaml.load`` with the C
   loader (target <= 3), and the peak memory of ``load_case`` against the file as Python objects
   (what ``yaml.load`` returns, held; target <= 3); the same case written as JSON, read
   (``read_yaml_file``) and loaded (``load_case``) against ``json.load`` (target <= 3).

Every measurement runs in a child process of this script, each timed call under a time cap
(``--cap`` seconds; the reps at a size stop once their seconds pass it): a size a policy refuses (a
bound of ``fairalloc/core/limits.py``) or whose call passes the cap is recorded as such and counts
as a missed target; a policy that passes the cap at one size is not run at the larger ones.
Before each timed solve, a fresh copy of the instance is made outside the timer (an instance caches
its per-task shares).  The cases are random but seeded (``SEED``).

    .venv/bin/python benchmarks/bench_queues.py --json benchmarks/results_queues.json   # up to 10^5
    .venv/bin/python benchmarks/bench_queues.py --quick        # sizes up to 10^3, smoke test
    .venv/bin/python benchmarks/bench_queues.py --only growth --policies kueue,drf --cap 30
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import math
import os
import pickle
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402
from provenance import commit, load_average, machine, update_json  # noqa: E402
from tabulate import tabulate  # noqa: E402

import fairalloc  # noqa: E402
from fairalloc.analysis.falsify import QUEUE_POLICIES  # noqa: E402

SEED = 20260036
POLICIES = QUEUE_POLICIES
DEPTHS = (0, 6)
SIZES = {"full": (100, 1_000, 10_000, 100_000), "quick": (100, 1_000)}
PROGRAM_SIZES = {"full": (10, 50, 200), "quick": (10, 50)}
EXPLAIN_QUEUES = 1_000
YARN_QUEUES = {"full": 10_000, "quick": 1_000}
READ_QUEUES = {"full": 100_000, "quick": 1_000}
RATIO_AT = 10_000  # the size of the ratio to drf
MAX_REPS = 5  # timed reps at a size, fewer once their seconds pass the cap
TARGETS = {
    "exponent": 1.2,
    "drf_ratio": 5.0,
    "memory_exponent": 1.2,
    "program": 1e-9,
    "explain": 2.0,
    "yarn": 5.0,
    "read": 3.0,
    "read_memory": 3.0,
}
SECTIONS = ("growth", "program", "explain", "yarn", "read")


# -- cases ----------------------------------------------------------------------------------------


def tree(queues: int, depth: int):
    """The first seeded draw of ``random_queue_tree`` that ``drf`` solves: a small draw may give its
    queues more guarantees than the capacity holds, which every policy refuses."""
    from fairalloc.analysis.falsify import random_queue_tree

    name = f"tree-{queues}-d{depth}"
    for draw in range(20):
        inst = random_queue_tree(np.random.default_rng([SEED, queues, depth, draw]), queues, depth=depth, name=name)
        try:
            fairalloc.solve(copy.deepcopy(inst), "drf")
        except fairalloc.FairallocError:
            continue
        return inst
    raise SystemExit(f"no draw of {queues} queues at depth {depth} that drf solves")


def case_path(folder: Path, queues: int, depth: int) -> Path:
    """The pickled tree of ``queues`` and ``depth``, built once for every child that needs it."""
    path = folder / f"tree-{queues}-d{depth}.pickle"
    if not path.exists():
        path.write_bytes(pickle.dumps(tree(queues, depth), protocol=pickle.HIGHEST_PROTOCOL))
    return path


def yarn_file(path: Path, queues: int) -> dict[str, str]:
    """A fair-scheduler.xml of ``queues`` leaf queues under about sqrt(queues) parents, each with a
    weight, minResources and maxResources; returns the capacity to import it with."""
    rng = np.random.default_rng([SEED, queues])
    parents = max(1, round(math.sqrt(queues)))
    lines = ['<?xml version="1.0"?>', "<allocations>"]
    for p in range(parents):
        lines.append(f'  <queue name="p{p}" type="parent">')
        lines.append(f"    <weight>{int(rng.integers(1, 4))}.0</weight>")
        for q in range(p, queues, parents):
            mb, cores = int(rng.integers(1, 64)) * 1024, int(rng.integers(1, 32))
            lines += [
                f'    <queue name="q{q}">',
                f"      <weight>{int(rng.integers(1, 5))}.0</weight>",
                f"      <minResources>{mb} mb,{cores} vcores</minResources>",
                f"      <maxResources>{4 * mb} mb,{4 * cores} vcores</maxResources>",
                "    </queue>",
            ]
        lines.append("  </queue>")
    lines.append("</allocations>")
    path.write_text("\n".join(lines) + "\n")
    return {"memory-mb": str(40 * 1024 * queues), "vcores": str(20 * queues)}


# -- timing in a child ----------------------------------------------------------------------------


class CapReached(Exception):
    pass


#: seconds one timed call may take in a child (``--cap``)
CAP = 120.0


def _alarm(signum, frame):
    raise CapReached


def _timed(fn, *args):
    """Wall-clock and CPU seconds of one call (``time.process_time``: this process, its threads
    included, and the processes it ran and waited for), stopped by :class:`CapReached` at ``CAP``
    wall-clock seconds."""
    gc.collect()
    gc.disable()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CAP)
    try:
        start, cpu = time.perf_counter(), _cpu()
        out = fn(*args)
        return time.perf_counter() - start, _cpu() - cpu, out
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        gc.enable()


def _cpu() -> float:
    children = os.times()
    return time.process_time() + children.children_user + children.children_system


def interleaved(fn, ref, make_arg, name: str) -> dict:
    """``fn`` against ``ref`` on fresh arguments (made outside the timer), rep by rep, while the
    reps' wall-clock seconds stay within the cap: the medians of each one's wall-clock seconds
    (``seconds``, ``<name>_seconds``) and CPU seconds (``cpu_seconds``, ``<name>_cpu_seconds``),
    and the fastest of each.  The figures are read from the CPU seconds: on a loaded machine a
    call of a few milliseconds spends most of its wall-clock time waiting for a core."""
    times: list[tuple[float, float]] = []
    refs: list[tuple[float, float]] = []
    while len(times) < MAX_REPS and sum(t[0] for t in times + refs) < CAP:
        refs.append(_timed(ref, make_arg())[:2])
        times.append(_timed(fn, make_arg())[:2])
    out: dict = {"reps": len(times)}
    for prefix, got in (("", times), (f"{name}_", refs)):
        wall, cpu = [t[0] for t in got], [t[1] for t in got]
        out[f"{prefix}seconds"], out[f"{prefix}cpu_seconds"] = statistics.median(wall), statistics.median(cpu)
        out[f"{prefix}min_seconds"] = min(wall)
    return out


def cpu_key(r: dict, prefix: str = "") -> str:
    """The key of a run's CPU seconds, or of its wall-clock seconds in a run measured before
    the benchmark read CPU time (``results_queues.json``'s baseline)."""
    return f"{prefix}cpu_seconds" if f"{prefix}cpu_seconds" in r else f"{prefix}seconds"


def peak_bytes(seconds: float, fn, *args) -> int | None:
    """The ``tracemalloc`` peak of one call (numpy's arrays included) beyond what was held before;
    ``None`` (not measured) when the call, about 3x slower traced, would pass the cap."""
    if 3 * seconds > CAP:
        return None
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        _timed(fn, *args)
        return tracemalloc.get_traced_memory()[1] - base
    except CapReached:
        return None
    finally:
        tracemalloc.stop()


def capped(work) -> dict:
    """``work()``'s figures, or what stopped it: a call over the cap, or a refusal (its first line)."""
    try:
        return {"status": "ok", **work()}
    except CapReached:
        return {"status": "time cap", "error": f"a call over the cap of {CAP:g} s"}
    except fairalloc.FairallocError as exc:
        return {"status": "refused", "error": str(exc).splitlines()[0][:300]}


def child_growth(opts) -> None:
    """One policy at one depth, size by size (one JSON line each), stopping at the first cap."""
    policy, depth = opts.policy, opts.depth
    warm = pickle.loads(Path(opts.cases, "tree-100-d0.pickle").read_bytes())
    fairalloc.solve(copy.deepcopy(warm), "drf")  # imports and first calls, outside the figures
    capped(lambda: {"warm": fairalloc.solve(copy.deepcopy(warm), policy) is not None})
    for n in opts.sizes:
        pristine = pickle.loads(Path(opts.cases, f"tree-{n}-d{depth}.pickle").read_bytes())

        def work(pristine=pristine):
            row = interleaved(
                lambda inst: fairalloc.solve(inst, policy), lambda inst: fairalloc.solve(inst, "drf"),
                lambda: copy.deepcopy(pristine), "drf",
            )  # fmt: skip
            inst = copy.deepcopy(pristine)
            row["memory_bytes"] = peak_bytes(row["seconds"], fairalloc.solve, inst, policy)
            return row

        row = {"policy": policy, "depth": depth, "queues": n, **capped(work)}
        print(json.dumps(row), flush=True)
        if row["status"] == "time cap":
            break


def child_program(opts) -> None:
    """Each size's tree, fast answer against the program, the largest difference over capacity; a
    tree that both refuse (with the same error class) agrees."""

    def bundles(inst, method: str):
        return np.asarray(fairalloc.solve(copy.deepcopy(inst), opts.policy, method=method).bundles, dtype=float)

    for depth in DEPTHS:
        for n in opts.sizes:
            inst = tree(n, depth)

            def work(inst=inst):
                try:
                    fast = bundles(inst, "auto")
                except fairalloc.FairallocError as refused:
                    try:
                        bundles(inst, "program")
                    except type(refused):
                        return {"difference": 0.0, "both_refuse": str(refused).splitlines()[0][:300]}
                    raise
                scale = np.where(inst.capacity > 0, inst.capacity, 1.0)
                return {"difference": float(np.max(np.abs(fast - bundles(inst, "program")) / scale, initial=0.0))}

            row = {"policy": opts.policy, "depth": depth, "queues": n, **capped(work)}
            print(json.dumps(row), flush=True)


def child_explain(opts) -> None:
    """``explain`` against ``solve`` of one policy on the tree of ``--sizes``' one size, in this
    process and as the commands (the tree written as a case file)."""
    import yaml

    from fairalloc.analysis.explain import explain

    (n,) = opts.sizes
    pristine = pickle.loads(Path(opts.cases, f"tree-{n}-d{opts.depth}.pickle").read_bytes())
    warm = pickle.loads(Path(opts.cases, "tree-100-d0.pickle").read_bytes())

    case = Path(opts.cases, f"case-{n}-d{opts.depth}.yaml")
    case.write_text(yaml.dump(pristine.to_dict(), Dumper=yaml.CSafeDumper, sort_keys=False))

    def work():
        explain(copy.deepcopy(warm), opts.policy)
        return interleaved(
            lambda inst: explain(inst, opts.policy), lambda inst: fairalloc.solve(inst, opts.policy),
            lambda: copy.deepcopy(pristine), "solve",
        )  # fmt: skip

    def commands():
        return interleaved(
            lambda path: command("explain", path, opts.policy), lambda path: command("solve", path, opts.policy),
            lambda: case, "solve",
        )  # fmt: skip

    out = {"policy": opts.policy, "depth": opts.depth, "queues": n, **explain_run(work, commands)}
    print(json.dumps(out), flush=True)


def explain_run(work, commands) -> dict:
    """In one process (``work``), then as the commands when that finished: each its own status (a
    command over the cap says so, and is not recorded as finished)."""
    out = capped(work)
    out["command"] = capped(commands) if out["status"] == "ok" else {"status": "not run"}
    return out


def command(verb: str, case: Path, policy: str) -> None:
    """``fairalloc VERB CASE -m POLICY`` as a user runs it, its table thrown away; its CPU time is
    a child's (``_timed`` reads the children's too)."""
    argv = [sys.executable, "-m", "fairalloc", verb, str(case), "-m", policy]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=Path(__file__).parent.parent)


def child_yarn(opts) -> None:
    """Import and explain of the generated allocation file against ``ElementTree.parse`` of it; and
    apart: the import alone against the parse (``import``), ``explain`` of the imported case alone
    against ``solve`` of it (``explain``, each on a fresh copy made outside the timer)."""
    import xml.etree.ElementTree as ET

    from fairalloc.analysis.explain import explain
    from fairalloc.io.importers import import_case

    (n,) = opts.sizes
    path = Path(opts.cases, f"fair-scheduler-{n}.xml")
    capacity = yarn_file(path, n)

    def import_only(p):
        return import_case([str(p)], capacity=capacity, name="yarn-bench")[1]

    def import_explain(p):
        return explain(import_only(p))

    def work():
        import_explain(Path(__file__).parent.parent / "cases/imported/yarn/allocation-file/fair-scheduler.xml")
        row = interleaved(import_explain, ET.parse, lambda: path, "parse")
        row["import"] = {**interleaved(import_only, ET.parse, lambda: path, "parse"), "status": "ok"}
        loaded = import_only(path)
        row["explain"] = {
            **interleaved(explain, fairalloc.solve, lambda: copy.deepcopy(loaded), "solve"),
            "status": "ok",
        }
        return row

    print(json.dumps({"queues": n, "bytes": path.stat().st_size, **capped(work)}), flush=True)


def child_read(opts) -> None:
    """``load_case`` of a YAML case against the C YAML loader, in time and in memory; the same
    case as JSON read (``read_yaml_file``) and loaded against ``json.load``."""
    import yaml

    (n,) = opts.sizes
    path = Path(opts.cases, f"case-{n}.yaml")
    pristine = pickle.loads(Path(opts.cases, f"tree-{n}-d0.pickle").read_bytes())
    path.write_text(yaml.dump(pristine.to_dict(), Dumper=yaml.CSafeDumper, sort_keys=False))
    json_path = Path(opts.cases, f"case-{n}.json")
    json_path.write_text(json.dumps(pristine.to_dict()))
    del pristine

    def c_load(p):
        with open(p) as fh:
            return yaml.load(fh, Loader=yaml.CSafeLoader)

    def json_load(p):
        with open(p, "rb") as fh:
            return json.load(fh)

    def read_json(p):
        return fairalloc.io.cases.read_yaml_file(p, "case")

    def work():
        fairalloc.load_case(Path(opts.cases, "tree-100.yaml"))
        row = interleaved(fairalloc.load_case, c_load, lambda: path, "yaml")
        for key, fn in (("json_read", read_json), ("json_load_case", fairalloc.load_case)):
            row[key] = {**interleaved(fn, json_load, lambda: json_path, "json"), "status": "ok"}
        gc.collect()
        tracemalloc.start()
        held = c_load(path)
        objects = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del held
        return {**row, "memory_bytes": peak_bytes(row["seconds"], fairalloc.load_case, path), "objects_bytes": objects}

    small = pickle.loads(Path(opts.cases, "tree-100-d0.pickle").read_bytes())
    Path(opts.cases, "tree-100.yaml").write_text(yaml.dump(small.to_dict(), Dumper=yaml.CSafeDumper))
    row = {"queues": n, "bytes": path.stat().st_size, "json_bytes": json_path.stat().st_size, **capped(work)}
    print(json.dumps(row), flush=True)


CHILDREN = {
    "growth": child_growth,
    "program": child_program,
    "explain": child_explain,
    "yarn": child_yarn,
    "read": child_read,
}


def run_child(section: str, cases: Path, cap: float, sizes, budget: float, **extra) -> list[dict]:
    """The child's JSON lines; what it printed before the whole budget ran out, the rest lost."""
    argv = [sys.executable, __file__, "--child", section, "--cases", str(cases), "--cap", str(cap)]
    argv += ["--sizes", ",".join(map(str, sizes))]
    for key, value in extra.items():
        argv += [f"--{key}", str(value)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=budget, check=False)
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err, code = f"killed after {budget:g} s", -9
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if code != 0:
        rows.append({"status": "failed", "error": (err.strip().splitlines() or ["?"])[-1][:300], **extra})
    return rows


# -- the parent: sections -------------------------------------------------------------------------


def exponent(points: list[tuple[int, float]]) -> float:
    """The least-squares slope of log value over log queues."""
    x, y = np.log([p[0] for p in points]), np.log([max(p[1], 1e-12) for p in points])
    return float(np.polyfit(x, y, 1)[0])


def growth_rows(runs: list[dict], sizes, policies, depths=DEPTHS) -> list[dict]:
    """Per policy and depth: the exponent of time (CPU seconds) and of memory (missed when a size
    did not finish) and the ratio to drf at RATIO_AT queues; each row names its ``policy``,
    ``depth`` and ``measure`` (time, memory, drf ratio) for benchmarks/table.py."""
    out = []
    for policy in policies:
        for depth in depths:
            mine = {r["queues"]: r for r in runs if r.get("policy") == policy and r.get("depth") == depth}
            done = [(n, mine[n]) for n in sizes if mine.get(n, {}).get("status") == "ok"]
            stopped = {n: mine[n]["status"] if n in mine else "not run" for n in sizes if (n, mine.get(n)) not in done}
            where = f"{policy}, {'flat' if depth == 0 else f'depth {depth}'}"
            keys = {"policy": policy, "depth": depth}
            for figure, key, target in (("time", None, "exponent"), ("memory", "memory_bytes", "memory_exponent")):
                points = [(n, r[key or cpu_key(r)]) for n, r in done if r.get(key or cpu_key(r)) is not None]
                value = exponent(points) if len(points) >= 2 else None
                span = f"{points[0][0]:,}-{points[-1][0]:,}" if points else "none"
                out.append(
                    row(
                        f"{where}: {figure} over queues ({span})",
                        f"growth exponent of {figure}",
                        "log-log slope",
                        value,
                        TARGETS[target],
                        complete=not stopped and len(points) == len(done),
                        note="; ".join([*map(_size_note, done), *(f"{n:,}: {s}" for n, s in stopped.items())]),
                        measure=figure,
                        queues=[n for n, _ in points],
                        **keys,
                    )
                )
            if RATIO_AT in sizes:
                r = mine.get(RATIO_AT, {"status": "not run"})
                ratio = timed_row(f"{where}: solve at {RATIO_AT:,} queues", r, "drf", "drf", "drf_ratio")
                out.append({**ratio, "measure": "drf ratio", **keys})
    return out


def timed_row(workload: str, r: dict, reference: str, ref: str, target: str, note: str = "") -> dict:
    """The row of a child's timing ``r`` (its CPU seconds against ``ref``'s), or of what stopped it."""
    if r.get("status") != "ok":
        return row(workload, r.get("status", "failed"), reference, None, TARGETS[target], note=r.get("error", ""))
    mine, theirs = r[cpu_key(r)], r[cpu_key(r, f"{ref}_")]
    clock = " CPU" if cpu_key(r) == "cpu_seconds" else ""
    figure, reference = f"{mine:.3g} s{clock}", f"{reference} {theirs:.3g} s{clock}"
    return row(workload, figure, reference, mine / theirs, TARGETS[target], note=note)


def _size_note(point: tuple[int, dict]) -> str:
    n, r = point
    memory = "memory not measured" if r["memory_bytes"] is None else f"{r['memory_bytes'] / 2**20:.3g} MiB"
    return f"{n:,}: {r[cpu_key(r)]:.3g} s, {memory}"


def row(workload, figure, reference, ratio, target, *, at_most=True, complete=True, note="", **keys) -> dict:
    """One figure beside its target; ``keys`` (policy, depth, ...) say what it is of."""
    met = ratio is not None and complete and (ratio <= target if at_most else ratio >= target)
    return {
        "workload": workload,
        "figure": figure,
        "reference": reference,
        "ratio": ratio,
        "target": f"{'<=' if at_most else '>='} {target:g}",
        "met": met,
        "note": note,
        **keys,
    }


def section_growth(args, cases: Path, sizes) -> tuple[list[dict], list[dict]]:
    depths = [int(d) for d in args.depths.split(",")]
    case_path(cases, 100, 0)  # the children's warm-up
    for n in sizes:
        for depth in depths:
            case_path(cases, n, depth)
    runs = []
    for policy in args.policies:
        for depth in depths:
            got = run_child(
                "growth", cases, args.cap, sizes, (4 * args.cap + 120) * len(sizes), policy=policy, depth=depth
            )
            if got and got[-1]["status"] == "failed":  # killed or crashed: at the first size it did not report
                reported = {r.get("queues") for r in got}
                got[-1]["queues"] = next((n for n in sizes if n not in reported), sizes[-1])
            for r in got:
                r.update(policy=policy, depth=depth)
                print(f"  {_line(r)}", flush=True)
            runs += got
    return growth_rows(runs, sizes, args.policies, depths), runs


def section_program(args, cases: Path, sizes) -> tuple[list[dict], list[dict]]:
    out, runs = [], []
    for policy in args.policies:
        if not fairalloc.get(policy).has_program:
            continue
        got = run_child(
            "program", cases, args.cap, sizes, (2 * args.cap + 30) * len(sizes) * len(DEPTHS), policy=policy
        )
        runs += got
        done = [r for r in got if r.get("status") == "ok"]
        bad = [r for r in got if r.get("status") != "ok"]
        worst = max((r["difference"] for r in done), default=None)
        note = "; ".join(f"{r.get('queues', '?')} queues depth {r.get('depth', '?')}: {r['status']}" for r in bad)
        refused = sum("both_refuse" in r for r in done)
        note = note or f"{len(done)} trees" + (f", {refused} refused by both alike" if refused else "")
        differs = getattr(fairalloc.get(policy), "program_differs", "")
        out.append(
            row(
                f"{policy}: fast against its program, trees of {min(sizes)}-{max(sizes)} queues",
                "largest difference / capacity",
                "method='program'",
                worst,
                TARGETS["program"],
                complete=not bad,
                note=f"{note}; by design: {differs}" if differs else note,
            )
        )
    return out, runs


def section_explain(args, cases: Path, n: int) -> tuple[list[dict], list[dict]]:
    runs = []
    for depth in DEPTHS:
        case_path(cases, 100, depth)
        case_path(cases, n, depth)
    for policy in args.policies:
        for depth in DEPTHS:
            got = run_child("explain", cases, args.cap, [n], 4 * args.cap + 120, policy=policy, depth=depth)
            runs += [{"policy": policy, "depth": depth, **(got[0] if got else {"status": "failed"})}]
    return explain_rows(runs, n), runs


def explain_rows(runs: list[dict], n: int) -> list[dict]:
    """A row per policy and depth of the explain section's runs, naming its ``policy`` and ``depth``."""
    out = []
    for r in runs:
        depth = "flat" if r["depth"] == 0 else f"depth {r['depth']}"
        where = f"explain {r['policy']}, {n:,} queues, {depth}"
        got = timed_row(where, r, "solve", "solve", "explain")
        out.append({**got, "policy": r["policy"], "depth": r["depth"]})
        command = r.get("command", {"status": "not run"})
        where = f"`fairalloc explain` of {r['policy']}, {n:,} queues, {depth} (whole command)"
        got = timed_row(where, command, "`fairalloc solve`", "solve", "explain")
        out.append({**got, "policy": r["policy"], "depth": r["depth"], "command": True})
    return out


def section_yarn(args, cases: Path, n: int) -> tuple[list[dict], list[dict]]:
    """The import + explain row, and beside it the import alone (against the parse, the same
    target) and explain alone (against solve of the imported case, the explain target)."""
    got = run_child("yarn", cases, args.cap, [n], 8 * args.cap + 180)
    r = got[0] if got else {"status": "failed"}
    note = f"{r['bytes'] / 2**20:.3g} MiB file" if "bytes" in r else ""
    return [
        timed_row(f"import + explain of a {n:,}-queue YARN fair-scheduler.xml", r, "xml.etree parse", "parse", "yarn",
                  note),
        timed_row(f"import of a {n:,}-queue YARN fair-scheduler.xml (alone)", r.get("import", r), "xml.etree parse",
                  "parse", "yarn", note),
        timed_row(f"explain of the {n:,} imported YARN queues (alone)", r.get("explain", r), "solve", "solve",
                  "explain", f"{note}; the explain target is set at {EXPLAIN_QUEUES:,} queues" if note else ""),
    ], got  # fmt: skip


def section_read(args, cases: Path, n: int) -> tuple[list[dict], list[dict]]:
    case_path(cases, 100, 0)
    case_path(cases, n, 0)
    got = run_child("read", cases, args.cap, [n], 4 * args.cap + 300)
    r = got[0] if got else {"status": "failed"}
    ok = r.get("status") == "ok" and r["memory_bytes"] is not None
    note = r.get("error", "") or (f"{r['bytes'] / 2**20:.3g} MiB file, flat" if "bytes" in r else "")
    json_note = r.get("error", "") or (f"{r['json_bytes'] / 2**20:.3g} MiB file, flat" if "json_bytes" in r else "")
    return [
        timed_row(f"load_case of {n:,} queues (YAML)", r, "yaml.load CSafeLoader", "yaml", "read", note),
        row(
            f"load_case of {n:,} queues: peak memory",
            f"{r['memory_bytes'] / 2**20:.3g} MiB" if ok else r.get("status", "failed").replace("ok", "not measured"),
            f"the file as Python objects {r['objects_bytes'] / 2**20:.3g} MiB" if ok else "the file as Python objects",
            r["memory_bytes"] / r["objects_bytes"] if ok else None,
            TARGETS["read_memory"],
            note=note,
        ),
        *(
            timed_row(f"{what} of {n:,} queues (JSON)", r.get(key, r), "json.load", "json", "read", json_note)
            for what, key in (("read", "json_read"), ("load_case", "json_load_case"))
        ),
    ], got


def _line(r: dict) -> str:
    figures = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items())
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 10^3: a smoke test")
    parser.add_argument("--json", metavar="FILE", help="write every figure to this JSON file")
    parser.add_argument("--strict", action="store_true", help="exit status 1 when a target is missed")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"sections, comma-separated ({', '.join(SECTIONS)})")
    parser.add_argument("--policies", default=",".join(POLICIES), help="policies, comma-separated (default: all nine)")
    parser.add_argument("--min-queues", type=int, help="leave out the growth sizes below this many queues")
    parser.add_argument("--max-queues", type=int, help="leave out the sizes above this many queues")
    parser.add_argument("--depths", default="0,6", help="depths of the growth section's trees (default 0,6)")
    parser.add_argument("--cap", type=float, default=None, help="seconds per size and policy (default 120, quick 20)")
    parser.add_argument("--child", choices=SECTIONS, help=argparse.SUPPRESS)
    parser.add_argument("--cases", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", help=argparse.SUPPRESS)
    parser.add_argument("--policy", help=argparse.SUPPRESS)
    parser.add_argument("--depth", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        global CAP
        CAP = args.cap
        args.sizes = [int(s) for s in args.sizes.split(",")]
        CHILDREN[args.child](args)
        return 0
    mode = "quick" if args.quick else "full"
    if args.min_queues:
        SIZES[mode] = tuple(n for n in SIZES[mode] if n >= args.min_queues)
    if args.max_queues:
        for sizes in (SIZES, PROGRAM_SIZES):
            sizes[mode] = tuple(n for n in sizes[mode] if n <= args.max_queues) or sizes[mode][:1]
        for one in (YARN_QUEUES, READ_QUEUES):
            one[mode] = min(one[mode], args.max_queues)
    args.cap = args.cap or (20.0 if args.quick else 120.0)
    args.policies = [fairalloc.get(p).name for p in args.policies.split(",")]  # an unknown name: one line
    sections = args.only.split(",")
    start_load = load_average()
    print(f"bench_queues ({mode}): commit {commit()}, load {start_load}, cap {args.cap:g} s", flush=True)
    rows, raw = [], {}
    with tempfile.TemporaryDirectory(prefix="bench-queues-") as tmp:
        cases = Path(tmp)
        steps = {
            "growth": lambda: section_growth(args, cases, SIZES[mode]),
            "program": lambda: section_program(args, cases, PROGRAM_SIZES[mode]),
            "explain": lambda: section_explain(args, cases, EXPLAIN_QUEUES),
            "yarn": lambda: section_yarn(args, cases, YARN_QUEUES[mode]),
            "read": lambda: section_read(args, cases, READ_QUEUES[mode]),
        }
        for section in SECTIONS:
            if section in sections:
                print(f"-- {section}", flush=True)
                got, raw[section] = steps[section]()
                rows += got
    table = [
        [r["workload"], r["figure"], r["reference"], "-" if r["ratio"] is None else f"{r['ratio']:.3g}", r["target"],
         "met" if r["met"] else "MISSED", r["note"]]
        for r in rows
    ]  # fmt: skip
    print(tabulate(table, ["workload", "figure", "reference", "ratio", "target", "", "note"], disable_numparse=True))
    missed = sum(not r["met"] for r in rows)
    print(f"{len(rows) - missed} of {len(rows)} targets met; load {start_load} -> {load_average()}")
    if args.json:
        figures = {
            "commit": commit(),
            # a file assembled from parts run side by side says so here (the baseline's does); one run
            # writes its own, so an earlier file's account is not left beside new figures
            "code_measured": f"fairalloc at {commit()}",
            "how": f"one run: benchmarks/bench_queues.py {' '.join(sys.argv[1:])}",
            "machine": machine(),
            "load_average": {"start": start_load, "end": load_average()},
            "mode": mode,
            "cap_seconds": args.cap,
            "targets": TARGETS,
            "rows": rows,
            "runs": raw,
        }
        update_json(args.json, figures)
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
