"""Library messages name the Python API's parameters (``method: ... use method='program'``); the
command line shows them in the running command's flags (``--method: ... use --method program``),
and never invents a flag for a parameter the command does not have (``fairalloc model`` has no
``--method``)."""

import click
import pytest

import fairalloc
from fairalloc.cli import cli
from fairalloc.cli.render import translate
from fairalloc.core.errors import FairallocError
from fairalloc.testing import run_cli as run

SECTION_4_1 = "drf-section-4-1"


def command(name: str) -> click.Command:
    """The command ``name`` (the group imports its module when it is first looked up)."""
    found = cli.get_command(click.Context(cli), name)
    assert found is not None, name
    return found


def only_error(code, out, err) -> str:
    assert code == 2 and out == "", (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- the Python API speaks its parameters ----------------------------------------------------------


def test_the_api_names_its_parameter_and_no_flag():
    inst = fairalloc.load_case(SECTION_4_1).instance
    with pytest.raises(FairallocError) as raised:
        fairalloc.solve(inst, "fds:2:-1", method="fast")
    assert str(raised.value) == "method: fds:2:-1 has no fast path; use method='program'"
    with pytest.raises(FairallocError) as raised:
        fairalloc.solve(inst, "hdrf", method="program")
    assert str(raised.value) == "method: hdrf has no declarative program; use method='fast'"
    with pytest.raises(fairalloc.UnknownNameError) as raised:
        fairalloc.solve(inst, "drf", method="magic")
    assert str(raised.value).startswith("method: unknown method 'magic'") and "--" not in str(raised.value)


# -- the command line shows its flags --------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["solve", SECTION_4_1, "-m", "fds:2:-1", "--method", "fast"],
            "fairalloc: --method: fds:2:-1 has no fast path; use --method program",
        ),
        (
            ["solve", SECTION_4_1, "-m", "hdrf", "--method", "program"],
            "fairalloc: --method: hdrf has no declarative program; use --method fast",
        ),
        (
            ["compare", SECTION_4_1, "-m", "drf,fds:2:-1", "--method", "fast"],
            "fairalloc: --method: fds:2:-1 has no fast path; use --method program",
        ),
    ],
)
def test_solve_shows_the_method_parameter_as_its_flag(capsys, argv, line):
    assert only_error(*run(capsys, *argv)) == line


def test_model_has_no_method_flag_and_none_is_suggested(capsys):
    line = only_error(*run(capsys, "model", SECTION_4_1, "-m", "hdrf"))
    assert line == "fairalloc: method: hdrf has no declarative program; use method='fast'"
    assert "--method" not in line


def test_a_property_shows_as_the_property_flag(capsys):
    line = only_error(*run(capsys, "check", SECTION_4_1, "-p", "zz"))
    assert line.startswith("fairalloc: --property: unknown property 'zz'")
    line = only_error(*run(capsys, "tradeoff", SECTION_4_1, "--properties", "zz"))
    assert line.startswith("fairalloc: --properties: unknown property 'zz'")


# -- the translation rule --------------------------------------------------------------------------


@click.command()
@click.argument("case")
@click.option("--format", "fmt")
@click.option("-n", "--count", "count", type=int)
@click.option("-q", "quiet", is_flag=True)
def example(case, fmt, count, quiet):
    """A command to translate messages for."""


@pytest.mark.parametrize(
    "message, shown",
    [
        ("fmt: unknown format 'x'", "--format: unknown format 'x'"),
        ("count: too many; use count=5 or fmt='json'", "--count: too many; use --count 5 or --format json"),
        ("method: no fast path; use method='program'", "method: no fast path; use method='program'"),
        ("case: not a case", "case: not a case"),  # an argument has no flag
        ("quiet: no long flag", "quiet: no long flag"),  # -q only: nothing to call it
        ("users.count: must be positive", "users.count: must be positive"),
        ("--count: already a flag", "--count: already a flag"),
        ("fmt:x is not a field", "fmt:x is not a field"),
        ("see a.count='3' and x_count=4", "see a.count='3' and x_count=4"),
    ],
)
def test_translate(message, shown):
    assert translate(message, example) == shown


def test_without_a_command_nothing_is_translated():
    assert translate("method: use method='fast'", None) == "method: use method='fast'"


def test_every_command_offers_its_options_to_the_translation():
    """The explorer's server names its parameters ``host`` and ``port``; ``explore`` shows its flags."""
    explore = command("explore")
    assert (
        translate("port: cannot listen on 127.0.0.1 port 1 (in use)", explore)
        == "--port: cannot listen on 127.0.0.1 port 1 (in use)"
    )
    assert translate("host: cannot listen on x (no)", explore) == "--host: cannot listen on x (no)"
    assert translate("path: unknown format '.x'", command("model")) == "--write: unknown format '.x'"


def test_warnings_are_translated_too(capsys):
    from fairalloc.cli.render import show_warning
    from fairalloc.core.errors import FairallocWarning

    show_warning(
        "x left out: method: x has no fast path; use method='program'",
        FairallocWarning,
        "f.py",
        1,
        command=command("compare"),
    )
    assert (
        capsys.readouterr().err == "fairalloc: warning: x left out: method: x has no fast path; use --method program\n"
    )
