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
Imports: any layer below; nothing imports the command line.
"""

from __future__ import annotations

import os
import sys
import warnings

import click

from fairalloc.cli import render
from fairalloc.cli.allocate import compare, list_mechanisms, model, solve
from fairalloc.cli.audit import audit
from fairalloc.cli.cases import list_cases, reproduce
from fairalloc.cli.cluster import GENERATED_WORKLOADS, schedule, simulate
from fairalloc.cli.explain import explain
from fairalloc.cli.frontier import explore, tradeoff
from fairalloc.cli.imports import import_command
from fairalloc.cli.options import FORMATS, Choice
from fairalloc.cli.options import make_folder as _make_folder  # noqa: F401  (old names)
from fairalloc.cli.options import output_path as _output_path  # noqa: F401  (old names)
from fairalloc.cli.properties import check, falsify, table2, verify
from fairalloc.core.errors import FairallocError, shown
from fairalloc.io.cases import load_case  # the commands look it up here (tests replace it)

__all__ = ["cli", "main", "load_case", "Choice", "FORMATS", "GENERATED_WORKLOADS"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


for _command in (
    solve,
    compare,
    model,
    list_cases,
    list_mechanisms,
    check,
    verify,
    falsify,
    table2,
    reproduce,
    schedule,
    simulate,
    tradeoff,
    explore,
    import_command,
    explain,
    audit,
):
    cli.add_command(_command)


def main(argv=None) -> int:
    """Entry point: one-line errors with exit code 2 (``--debug`` for tracebacks)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    state: dict = {}
    try:
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = lambda *args, **kwargs: render.show_warning(
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


def _fail(
    exc: click.UsageError | FairallocError | RecursionError | MemoryError | OSError,
    argv: list[str],
    command: click.Command | None,
) -> None:
    """The one line a user error shows on stderr (for the errors :func:`main` catches)."""
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
