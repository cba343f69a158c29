"""The ``fairalloc`` command line.

Every user error (bad case, unknown name, solver failure) is one line on stderr and exit code 2;
``--debug`` shows the traceback instead.  Library messages name the Python API's parameters
(``method: ...``); :func:`fairalloc.cli.render.translate` shows them as the running command's
flags (``--method: ...``).

Belongs here: one module per command group and one renderer (tables, JSON); a command only
parses its options, calls the library and renders.  This module holds the click group and
:func:`main`; ``options`` the options commands share; ``render`` what is printed; the
commands by group: ``allocate`` (solve, compare, model, mechanisms), ``cases`` (cases,
reproduce), ``properties`` (check, verify, falsify, table2), ``cluster`` (schedule, simulate),
``frontier`` (tradeoff, explore), ``imports`` (import), ``explain`` (explain), ``audit`` (audit).
A command's module is imported when the command runs (:data:`COMMANDS`), so ``fairalloc --help``
imports none of them, nor numpy.
Imports: any layer below; nothing imports the command line.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
import warnings
from typing import TYPE_CHECKING

import click

from fairalloc.core.deferred import attributes
from fairalloc.core.errors import FairallocError, shown

if TYPE_CHECKING:
    from fairalloc.cli.cluster import GENERATED_WORKLOADS
    from fairalloc.cli.options import FORMATS, Choice
    from fairalloc.cli.options import make_folder as _make_folder  # noqa: F401  (old names)
    from fairalloc.cli.options import output_path as _output_path  # noqa: F401  (old names)
    from fairalloc.io.cases import load_case  # the commands look it up here (tests replace it)

__all__ = ["cli", "main", "load_case", "Choice", "FORMATS", "GENERATED_WORKLOADS"]

__getattr__ = attributes(
    __name__,
    {
        "load_case": "fairalloc.io.cases",  # the commands look it up here (tests replace it)
        "Choice": "fairalloc.cli.options",
        "FORMATS": "fairalloc.cli.options",
        "_make_folder": "fairalloc.cli.options:make_folder",  # old names
        "_output_path": "fairalloc.cli.options:output_path",
        "GENERATED_WORKLOADS": "fairalloc.cli.cluster",
    },
)

#: every command: its name -> ("module:function", its short help).  The short help is the first
#: sentence of the command's docstring, written here too so that ``--help`` lists the commands
#: without importing them (tests/test_startup.py checks that the two agree).
COMMANDS: dict[str, tuple[str, str]] = {
    "solve": ("fairalloc.cli.allocate:solve", "Allocate CASE with one or more mechanisms."),
    "compare": (
        "fairalloc.cli.allocate:compare",
        "Every static mechanism side by side on CASE (Figure 4 of the DRF paper, in numbers).",
    ),
    "model": ("fairalloc.cli.allocate:model", "Show or export the declarative program of a mechanism on CASE."),
    "cases": (
        "fairalloc.cli.cases:list_cases",
        "List the bundled cases (papers' worked examples and counterexamples), or show one.",
    ),
    "mechanisms": (
        "fairalloc.cli.allocate:list_mechanisms",
        "List registered mechanisms (built-ins and plug-ins) and their methods.",
    ),
    "check": (
        "fairalloc.cli.properties:check",
        "Check fairness properties of mechanisms on CASE, with witnesses for violations.",
    ),
    "verify": (
        "fairalloc.cli.properties:verify",
        "Search the reports that raise a user's true task count (strategy-proofness attack).",
    ),
    "falsify": (
        "fairalloc.cli.properties:falsify",
        "Find an instance on which MECHANISM violates PROPERTY, shrink it, and write it as a case.",
    ),
    "table2": ("fairalloc.cli.properties:table2", "Empirical Table 2 of the DRF paper: properties x mechanisms."),
    "reproduce": (
        "fairalloc.cli.cases:reproduce",
        "Reproduce the papers' numbers and claims from the case library (default: every bundled case).",
    ),
    "schedule": (
        "fairalloc.cli.cluster:schedule",
        "Discrete DRF: Algorithm 1 of the DRF paper, decision by decision (Table 1), or on machines.",
    ),
    "simulate": (
        "fairalloc.cli.cluster:simulate",
        "Replay a cluster workload under any mechanisms' task offers (discrete-event simulation).",
    ),
    "tradeoff": (
        "fairalloc.cli.frontier:tradeoff",
        "Walk the fairness / efficiency frontier of CASE along the alpha-fair family.",
    ),
    "explore": (
        "fairalloc.cli.frontier:explore",
        "Explore a case in the browser: edit it and watch allocations, properties and lies move.",
    ),
    "import": (
        "fairalloc.cli.imports:import_command",
        "Read a scheduler's configuration (Volcano, Kueue, YARN, YuniKorn, Mesos, Kubernetes) as a case.",
    ),
    "explain": ("fairalloc.cli.explain:explain", "What each queue of CASE is entitled to under a policy, and why."),
    "audit": (
        "fairalloc.cli.audit:audit",
        "Check every property of a policy on CASE and search each queue's most profitable lie.",
    ),
    "whatif": (
        "fairalloc.cli.whatif:whatif",
        "What if CASE were configured otherwise: WORKLOAD replayed on the change beside the case.",
    ),
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when the command is looked up (click's
    documented lazy-loading pattern); its help lists every command from :data:`COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, _, name = COMMANDS[cmd_name][0].partition(":")
            command = getattr(importlib.import_module(module), name)
            if not isinstance(command, click.Command) or command.name != cmd_name:
                raise TypeError(f"{COMMANDS[cmd_name][0]} is not the command '{cmd_name}'")
            self.add_command(command)
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as unknown:  # suggest from every command, not the loaded ones
            raise click.exceptions.NoSuchCommand(
                unknown.command_name, possibilities=self.list_commands(ctx), ctx=ctx
            ) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own listing, but the short help of a command not loaded comes from the table
        (through a stand-in command, so that click shortens it as it would the real one's)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name) or click.Command(name, help=COMMANDS[name][1])
            if not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="fairalloc")
@click.option("--debug", is_flag=True, help="Show full tracebacks instead of one-line errors.")
@click.pass_context
def cli(ctx, debug):
    """Multi-resource fair allocation: solve, compare and inspect DRF, Asset Fairness, CEEI, ...

    \b
    Quick start:
      fairalloc cases                           list the bundled paper cases
      fairalloc compare drf-section-4-1         DRF, Asset, CEEI, utilitarian side by side
      fairalloc solve drf-section-4-1 -m ceei --exact
      fairalloc model drf-section-4-1 -m drf --write drf.lp
      fairalloc tradeoff drf-section-4-1        from utilitarian (alpha 0) to DRF (alpha inf)
      fairalloc explore drf-section-4-1         the same, interactively, in the browser
      fairalloc import queues.yaml --out my.yaml  a scheduler's own files as a case
      fairalloc explain my.yaml                 each queue's entitlement, and why
      fairalloc audit my.yaml                   every property, and each queue's best lie

    Every mechanism is a declarative program (a pulp LP or a cvxpy convex program) with a fast
    exact algorithm beside it where one exists. Choose with --method: fast, program, or auto
    (the fast path when there is one).
    """
    state = ctx.ensure_object(dict)
    state["debug"] = debug
    # main() shows a library error in the words of this command's flags
    state["command"] = cli.get_command(ctx, ctx.invoked_subcommand) if ctx.invoked_subcommand else None


def main(argv=None) -> int:
    """Entry point: one-line errors with exit code 2 (``--debug`` for tracebacks)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    state: dict = {}
    try:
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = lambda *args, **kwargs: _render().show_warning(
                    *args, **kwargs, command=state.get("command")
                )
                warnings.filterwarnings("ignore", message=".*encountered in", category=RuntimeWarning)
            code = cli.main(args=argv, prog_name="fairalloc", standalone_mode=False, obj=state)
        if isinstance(code, int):  # click hands back a command's Exit code here
            return code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("fairalloc: interrupted", err=True)
        return 130
    except BrokenPipeError:  # 'fairalloc ... | head': the reader left; nothing to say
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 141
    except (click.UsageError, FairallocError, RecursionError, MemoryError, OSError) as exc:
        if debug:
            raise
        _fail(exc, argv, state.get("command"))
        return 2
    return 0


def _render() -> types.ModuleType:
    """:mod:`fairalloc.cli.render` (imported when there is something to show: it needs numpy)."""
    from fairalloc.cli import render

    return render


def _fail(
    exc: click.UsageError | FairallocError | RecursionError | MemoryError | OSError,
    argv: list[str],
    command: click.Command | None,
) -> None:
    """The one line a user error shows on stderr (for the errors :func:`main` catches)."""
    render = _render()
    if isinstance(exc, click.UsageError):
        render.error(exc.format_message())
    elif isinstance(exc, FairallocError):
        render.error(exc, command)
    elif isinstance(exc, (RecursionError, MemoryError)):
        what = "nested too deeply" if isinstance(exc, RecursionError) else "input too large"
        render.error(f"{' '.join(argv[:1]) or 'input'}: {what} ({type(exc).__name__})")
    else:
        where = shown(exc.filename) if getattr(exc, "filename", None) else "output"
        render.error(f"{where}: {exc.strerror or exc}")


if __name__ == "__main__":
    sys.exit(main())
