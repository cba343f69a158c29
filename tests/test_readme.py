"""The README runs as written: every ``$ fairalloc ...`` (and ``$ python ...``) line of its console
blocks is run in a fresh working directory and must exit 0 (2 where the README shows an error, a
first output line ``fairalloc: ...``), printing every output line the README shows (``...`` stands
for lines left out). Every ``python`` block runs as a script. So the README cannot drift."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent


@dataclass
class Command:
    line: int
    argv: list[str]
    shown: list[str] = field(default_factory=list)

    @property
    def expected_exit(self) -> int:
        return 2 if self.shown and self.shown[0].startswith("fairalloc: ") else 0


def _blocks(language: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of every fenced block of ``language``."""
    blocks, lines = [], README.read_text(encoding="utf-8").splitlines()
    k = 0
    while k < len(lines):
        if lines[k].strip() == f"```{language}":
            end = next(j for j in range(k + 1, len(lines)) if lines[j].strip() == "```")
            blocks.append((k + 2, lines[k + 1 : end]))
            k = end
        k += 1
    return blocks


def _commands(start: int, lines: list[str]) -> list[Command]:
    commands: list[Command] = []
    for offset, text in enumerate(lines):
        if text.startswith("$ "):
            commands.append(Command(start + offset, shlex.split(text[2:], comments=True)))
        elif commands and text.strip() != "...":
            commands[-1].shown.append(text.rstrip())
    return commands


CONSOLE = [(start, _commands(start, lines)) for start, lines in _blocks("console")]
PYTHON = _blocks("python")


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    program = {"fairalloc": str(BIN / "fairalloc"), "python": sys.executable}[argv[0]]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([program, *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_readme_has_examples_to_run():
    commands = [c for _, block in CONSOLE for c in block]
    assert len(commands) >= 20 and len(PYTHON) >= 2
    assert all(c.argv[0] in ("fairalloc", "python") for c in commands), [
        c.argv for c in commands if c.argv[0] not in ("fairalloc", "python")
    ]


def test_the_first_lines_are_the_two_commands():
    head = README.read_text(encoding="utf-8").splitlines()[:6]
    assert any(re.match(r"\s+make run\s+#", line) for line in head)
    assert any(re.match(r"\s+make test\s+#", line) for line in head)


@pytest.mark.parametrize("start, commands", CONSOLE, ids=[f"line-{s}" for s, _ in CONSOLE])
def test_console_block_runs_as_printed(start, commands, tmp_path):
    # the README's commands run from the checkout's root: give the fresh folder its example files
    (tmp_path / "paper_examples").symlink_to(ROOT / "paper_examples", target_is_directory=True)
    (tmp_path / "cases").symlink_to(ROOT / "cases", target_is_directory=True)
    for command in commands:  # in order, in one folder: a later line may read an earlier file
        done = _run(command.argv, tmp_path)
        where = f"README line {command.line}: $ {shlex.join(command.argv)}"
        assert done.returncode == command.expected_exit, f"{where}\nexit {done.returncode}\n{done.stderr[-2000:]}"
        printed = {line.rstrip() for line in (done.stdout + done.stderr).splitlines()}
        missing = [line for line in command.shown if line not in printed]
        assert not missing, (
            f"{where}\nshown in the README but not printed:\n"
            + "\n".join(missing)
            + "\n--- printed:\n"
            + done.stdout[-3000:]
        )


@pytest.mark.parametrize("start, lines", PYTHON, ids=[f"line-{s}" for s, _ in PYTHON])
def test_python_block_runs(start, lines, tmp_path):
    script = tmp_path / "example.py"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = _run(["python", str(script)], tmp_path)
    assert done.returncode == 0, f"README python block at line {start}:\n{done.stderr[-3000:]}"
