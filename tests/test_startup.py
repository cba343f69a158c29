"""The command line starts at once (issue 18): what a run does not need, it does not import.

``fairalloc --help`` imports no command module (nor numpy): the group lists the commands from
its table (:data:`fairalloc.cli.COMMANDS`), whose short help must be each command's own.  A
mechanism's module is imported at the first look-up of its name
(:data:`fairalloc.models.MECHANISMS`, which must name what the modules register), and the
solvers' packages (pulp, cvxpy, scipy, networkx) only when a program is built.  Each run is
checked in a fresh Python; the times themselves are for ``benchmarks/bench_startup.py``, never
asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

import fairalloc
from fairalloc.cli import COMMANDS, cli
from fairalloc.core import registry
from fairalloc.testing import HANG

ROOT = Path(__file__).resolve().parent.parent
#: packages no start-up of the command line or of a DRF solve needs
HEAVY = ("cvxpy", "pulp", "scipy", "networkx", "plotly", "dask", "distributed", "markdown", "hypothesis", "tqdm")
#: what ``fairalloc --help`` does not need either
LIBRARY = ("numpy", "yaml", "pydantic", "tabulate", "importlib.metadata", "fairalloc.core.registry")

PROBE = """
import json, sys
{setup}
with open(sys.argv[1], "w") as f:
    json.dump(sorted(sys.modules), f)
"""


def modules_after(tmp_path: Path, setup: str) -> set[str]:
    """The modules a fresh Python holds after running ``setup`` (with this checkout first on the path)."""
    out = tmp_path / "modules.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(setup=setup), str(out)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(out.read_text()))


def cli_run(*argv: str) -> str:
    return f"from fairalloc.cli import main\nassert main({list(argv)!r}) == 0"


def test_help_imports_no_command_and_no_library(tmp_path):
    loaded = modules_after(tmp_path, cli_run("--help"))
    assert not loaded & {*HEAVY, *LIBRARY}
    assert not [m for m in loaded if m.startswith(("fairalloc.cli.", "fairalloc.models", "fairalloc.io"))]


def test_solve_drf_imports_no_solver_and_no_other_mechanism(tmp_path):
    loaded = modules_after(tmp_path, cli_run("solve", "drf-section-4-1"))
    assert not loaded & set(HEAVY)
    # the case's expectations name other mechanisms (their names are checked); the rest stay out
    assert not loaded & {"fairalloc.models.hdrf", "fairalloc.models.kueue", "fairalloc.engines.hierarchy"}
    assert not [m for m in loaded if m.startswith(("fairalloc.cli.properties", "fairalloc.analysis"))]


def test_the_api_solves_drf_without_solvers_or_case_parsing(tmp_path):
    setup = (
        "import fairalloc\n"
        "inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]])\n"
        "assert fairalloc.solve(inst, 'drf').tasks.tolist() == [3, 2]"
    )
    loaded = modules_after(tmp_path, setup)
    assert not loaded & {*HEAVY, "pydantic", "yaml", "tabulate"}
    assert not [m for m in loaded if m.startswith("fairalloc.models.") and m != "fairalloc.models.drf"]


def test_a_program_imports_its_solver_when_built(tmp_path):
    setup = (
        "import sys, fairalloc\n"
        "inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]])\n"
        "assert 'pulp' not in sys.modules\n"
        "assert fairalloc.solve(inst, 'drf', method='program').tasks.round(6).tolist() == [3, 2]"
    )
    assert "pulp" in modules_after(tmp_path, setup)


def test_deferred_imports_at_the_first_attribute(tmp_path):
    setup = (
        "from fairalloc.core.deferred import deferred\n"
        "colorsys = deferred('colorsys')\n"
        "assert 'colorsys' not in sys.modules and 'not imported' not in repr(colorsys)\n"
        "assert colorsys.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)\n"
        "assert '(imported)' in repr(colorsys)"
    )
    assert "colorsys" in modules_after(tmp_path, setup)


def test_the_case_schema_is_built_once_when_a_case_is_read(tmp_path):
    """Importing the case module builds no validator; a flat case builds the case schema as one
    whole (and the claim model, for its claims written as text), no model of its own for the parts
    it does not use (queue fields, groups)."""
    setup = (
        "import fairalloc.io.cases as cases\n"
        "def built():\n"
        "    models = [m for m in vars(cases).values() if isinstance(m, type) and issubclass(m, cases.BaseModel)]\n"
        "    return {m.__name__ for m in models if m.__pydantic_complete__}\n"
        "assert built() == set(), built()\n"
        f"{cli_run('solve', 'drf-section-4-1')}\n"
        "assert built() == {'CaseSpec', 'ClaimSpec'}, built()"
    )
    modules_after(tmp_path, setup)


# -- the tables that stand in for what is not imported ---------------------------------------------


def loaded(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None, name
    return command


def test_the_command_table_names_every_command_and_its_short_help():
    for name, (where, short_help) in COMMANDS.items():
        command = loaded(name)
        module, _, attribute = where.partition(":")
        assert command is getattr(__import__(module, fromlist=[attribute]), attribute)
        for limit in (20, 45, 60, 80, 10_000):  # as click shortens it for any terminal width
            assert click.Command(name, help=short_help).get_short_help_str(limit) == command.get_short_help_str(
                limit
            ), f"fairalloc.cli.COMMANDS['{name}']: the short help is not the first sentence of {where}'s docstring"
    assert sorted(COMMANDS) == cli.list_commands(click.Context(cli))


def test_help_lists_what_the_loaded_commands_say(tmp_path):
    """``--help`` from the table (a fresh process) is ``--help`` with every command imported."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    fresh = subprocess.run(
        [sys.executable, "-m", "fairalloc", "--help"], env=env, capture_output=True, text=True, timeout=HANG
    )
    assert fresh.returncode == 0, fresh.stderr
    for name in COMMANDS:
        loaded(name)
    ctx = click.Context(cli, info_name="fairalloc", max_content_width=100)
    formatter = ctx.make_formatter()
    cli.format_commands(ctx, formatter)
    listing = formatter.getvalue()
    assert listing.strip() and listing in fresh.stdout


def test_the_mechanism_table_is_what_the_modules_register(tmp_path):
    setup = (
        "import importlib, json, pkgutil\n"
        "import fairalloc.models as models\n"
        "from fairalloc.core import registry\n"
        "for module in dict.fromkeys(models.MECHANISMS.values()):  # in the table's order\n"
        "    importlib.import_module(f'fairalloc.models.{module}')\n"
        "for info in pkgutil.iter_modules(models.__path__):  # then any module the table leaves out\n"
        "    importlib.import_module(f'fairalloc.models.{info.name}')\n"
        "print(json.dumps({k: type(m).__module__ for k, m in registry._REGISTRY.items()}))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", setup],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert proc.returncode == 0, proc.stderr
    registered = json.loads(proc.stdout)
    table = {name: f"fairalloc.models.{module}" for name, module in registry._builtins().items()}
    assert registered == table
    assert list(registered) == list(table)  # the table's order is the order the modules register in


def test_available_lists_the_built_ins_in_the_tables_order():
    assert fairalloc.available()[: len(registry._builtins())] == list(registry._builtins())


def test_the_package_names_resolve_to_their_modules():
    for name in fairalloc.__all__:
        value = getattr(fairalloc, name)
        if name in ("solve", "program"):  # the package's own
            assert value.__module__ == "fairalloc", name
        else:
            assert value is getattr(sys.modules[fairalloc._HOMES[name]], name), name
    assert fairalloc.models.drf.__name__ == "fairalloc.models.drf"
    assert not hasattr(fairalloc, "no_such_name")
    with pytest.raises(AttributeError, match="no_such_name"):
        fairalloc.models.no_such_name  # noqa: B018
