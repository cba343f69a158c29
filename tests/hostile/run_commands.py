"""Run every fairalloc command that reads one file, in this process, and report each outcome.

Used by ``tests/test_hostile_corpus.py`` in a subprocess with memory and time limits: one Python
start per file instead of one per command.  Prints one JSON object per line on stdout: a
``{"start": argv}`` line before each command (so a hang names its command) and a result line
after it (``argv``, ``code``, ``stdout``, ``stderr``).  Usage::

    python run_commands.py case|workload FILE
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

from fairalloc import registry
from fairalloc.cli import main

OUTPUT_CHARS = 20_000          # of each stream kept in the report


def case_commands(path: str) -> list[list[str]]:
    """Every command that reads a case; each mechanism and method on its own for ``solve``."""
    mechanisms = registry.available(families=False) + ["alpha-fair:2", "alpha-fair:inf", "fds:0.5:3"]
    commands = [["solve", path, "-m", m, "--method", method, "--format", "json"]
                for m in mechanisms for method in ("auto", "program")
                if method == "auto" or registry.get(m).has_program]
    commands += [
        ["solve", path, "-m", "drf", "--exact"],
        ["compare", path], ["compare", path, "--format", "json"],
        ["model", path, "-m", "drf"], ["model", path, "-m", "ceei"],
        ["check", path, "--budget", "20"],
        ["reproduce", path],
        ["schedule", path, "--no-trace"],
        ["tradeoff", path, "--budget", "10", "--format", "json"],
    ]
    return commands


def workload_commands(path: str) -> list[list[str]]:
    return [["simulate", path], ["simulate", path, "--format", "json"]]


def run(argv: list[str]) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:                # main() should return, never exit
            code = f"SystemExit({exc.code})"
        except BaseException as exc:             # noqa: BLE001 - an escaped exception is the finding
            code = f"raised {type(exc).__name__}: {str(exc)[:200]}"
    return {"argv": argv, "code": code, "stdout": out.getvalue()[:OUTPUT_CHARS],
            "stderr": err.getvalue()[:OUTPUT_CHARS]}


def report(record: dict) -> None:
    sys.__stdout__.write(json.dumps(record) + "\n")
    sys.__stdout__.flush()


if __name__ == "__main__":
    kind, path = sys.argv[1], sys.argv[2]
    for argv in (case_commands if kind == "case" else workload_commands)(path):
        report({"start": argv})
        report(run(argv))
