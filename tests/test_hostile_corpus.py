"""The hostile corpus (issue 13): files made to break fairalloc, run through every command that reads them.

``tests/hostile/cases/`` and ``tests/hostile/workloads/`` hold case files and workloads that a
fuzzing pass found to hang fairalloc, exhaust its memory, print a traceback or give a silent wrong
answer, and more of the same kind (``tests/hostile/README.md`` says what each one is).  A file
named ``refused-*`` must be refused by every command: exit code 2 and exactly one line on stderr,
``fairalloc: ...``, nothing on stdout.  A file named ``answer-*`` is valid but extreme: every
command either answers (exit 0; on stderr at most ``fairalloc: warning: ...`` lines) with an
allocation that passes an independent feasibility check here, or refuses it in one line.

Each file runs in its own Python process (``tests/hostile/run_commands.py`` runs every command in
it) under an address-space limit (``resource.setrlimit``) and a time limit, so a hang or a memory
blow-up fails the test instead of the machine.
"""

from __future__ import annotations

import json
import math
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from fairalloc.core.tolerances import FEASIBILITY

HERE = Path(__file__).parent / "hostile"
MEMORY = 3 << 30  # bytes of address space per file (numpy + cvxpy + HiGHS need ~1 GiB)
SECONDS = 300  # for all commands on one file: a hang detector on a loaded 2-core machine


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _corpus(kind: str) -> list[Path]:
    return sorted((HERE / f"{kind}s").glob("*.yaml"))


def _run(kind: str, path: Path) -> list[dict]:
    """The result records of every command on ``path`` (fails naming the command that hung)."""
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / "run_commands.py"), kind, path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=SECONDS,
            preexec_fn=_limit_memory,
        )
        lines, crashed = done.stdout.splitlines(), done.returncode != 0 and done.stderr[-2000:]
    except subprocess.TimeoutExpired as exc:
        lines = (exc.stdout or b"").decode().splitlines()
        crashed = f"no end within {SECONDS} s"
    records = [json.loads(line) for line in lines]
    if crashed:
        started = [r["start"] for r in records if "start" in r]
        pytest.fail(f"{path.name}: the run died during {started[-1] if started else 'start-up'}: {crashed}")
    return [r for r in records if "start" not in r]


#: a progress line (fairalloc.core.progress), which work over 10 s prints when stderr is piped
PROGRESS_LINE = re.compile(r"^[\w :.-]+: +\d+%\|[#0-9 ]*\| \d+/\d+ \[")


def _one_line(record: dict) -> str | None:
    """Why ``record`` is not a clean refusal (exit 2, one ``fairalloc:`` line), or None."""
    lines = record["stderr"].splitlines()
    if record["code"] != 2:
        return f"exit {record['code']}"
    if len(lines) != 1 or not lines[0].startswith("fairalloc: "):
        return f"stderr is not one 'fairalloc:' line: {record['stderr'][:300]!r}"
    if record["stdout"]:
        return f"printed to stdout: {record['stdout'][:200]!r}"
    return None


def _infeasible(allocation: dict) -> str | None:
    """An independent check of one JSON allocation: finite, non-negative, within capacity."""
    for user, entry in allocation["users"].items():
        x = entry["tasks"]
        if not (isinstance(x, (int, float)) and math.isfinite(x) and x >= -FEASIBILITY):
            return f"user {user}: tasks {x!r}"
    for name, r in allocation["resources"].items():
        # a policy's entitlement may promise beyond capacity (YARN's truncation): the JSON says so
        if not (r["used"] <= r["capacity"] * (1 + 1e-6) or allocation.get("entitlement")):
            return f"resource {name}: used {r['used']!r} of capacity {r['capacity']!r}"
    return None


def _problem(record: dict) -> str | None:
    """Why ``record`` (of an ``answer-*`` file) is neither a clean refusal nor a certified answer."""
    if record["code"] == 2:
        return _one_line(record)
    if record["code"] != 0:
        return f"exit {record['code']}"
    noise = [
        line
        for line in record["stderr"].splitlines()
        if not line.startswith("fairalloc: warning: ") and not PROGRESS_LINE.match(line)
    ]
    if noise:
        return f"exit 0 with stderr {record['stderr'][:300]!r}"
    if record["argv"][0] == "solve" and "json" in record["argv"]:
        text = record["stdout"]
        try:
            data = json.loads(text, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
        except json.JSONDecodeError as exc:
            return f"invalid JSON ({exc}): {text[:200]!r}"
        return next(filter(None, map(_infeasible, data)), None)
    return None


@pytest.mark.slow
@pytest.mark.parametrize("path", _corpus("case"), ids=lambda p: p.stem)
def test_every_command_on_a_hostile_case(path):
    records = _run("case", path)
    assert records, f"{path.name}: no command ran"
    judge = (lambda r: _one_line(r)) if path.name.startswith("refused-") else _problem
    failures = [f"{' '.join(r['argv'])}: {why}" for r in records if (why := judge(r))]
    assert not failures, f"{path.name}:\n" + "\n".join(failures)


@pytest.mark.slow
@pytest.mark.parametrize("path", _corpus("workload"), ids=lambda p: p.stem)
def test_every_command_on_a_hostile_workload(path):
    records = _run("workload", path)
    assert records, f"{path.name}: no command ran"
    failures = [f"{' '.join(r['argv'])}: {why}" for r in records if (why := _one_line(r))]
    assert not failures, f"{path.name}:\n" + "\n".join(failures)


def test_the_corpus_is_there():
    """An empty glob would pass every test above vacuously."""
    cases, workloads = _corpus("case"), _corpus("workload")
    assert len(cases) >= 20 and len(workloads) >= 4
    assert all(p.name.startswith(("refused-", "answer-")) for p in cases + workloads)
    assert any(p.name.startswith("answer-") for p in cases)
