"""Options the commands share, and their checks: every value a user gives is checked before any work
starts, and every path an option writes to before anything is computed."""

from __future__ import annotations

import os
from pathlib import Path

import click

from fairalloc.cli.render import yaml_doc
from fairalloc.core import limits, registry
from fairalloc.core.errors import FairallocError, did_you_mean, quoted, shown
from fairalloc.core.files import write_atomically


class Choice(click.Choice):
    """click's choice of option values, suggesting the closest one for a misspelt value."""

    def get_invalid_choice_message(self, value, ctx) -> str:
        message = super().get_invalid_choice_message(value, ctx)
        hint = did_you_mean(value, self.choices)
        return f"{message.rstrip('.')}{hint}" if hint else message


FORMATS = Choice(["table", "json", "yaml", "csv"])


def format_option(*choices: str, help: str | None = None):
    """``--format`` (python name ``fmt``): ``table`` first and the default."""
    return click.option(
        "--format", "fmt", type=Choice(["table", *choices]), default="table", show_default=True, help=help
    )


def policy_option():
    """``-m/--mechanism POLICY`` (python name ``policy``): the case's own policy by default."""
    return click.option(
        "-m",
        "--mechanism",
        "policy",
        metavar="POLICY",
        help="The policy (default: the case's 'policy', else drf). See 'fairalloc mechanisms'.",
    )


def method_option(help: str | None = None):
    return click.option("--method", type=Choice(registry.METHODS), default="auto", show_default=True, help=help)


def load_case(name):
    """:func:`fairalloc.io.cases.load_case`, looked up through ``fairalloc.cli`` so that a test
    replacing ``fairalloc.cli.load_case`` replaces it for every command."""
    import fairalloc.cli

    return fairalloc.cli.load_case(name)


def mechanisms(spec: str | None, default: list[str]) -> list[str]:
    names = default if not spec else [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise FairallocError("--mechanism: give at least one mechanism name")
    for name in names:
        registry.get(name)  # unknown names fail here, before any solving
    return names


def number_range(text: str, option: str) -> tuple[int, int]:
    """``"2..6"`` or ``"3"`` as (low, high)."""
    try:
        lo, _, hi = text.partition("..")
        low, high = int(lo), int(hi or lo)
    except ValueError:
        raise FairallocError(f"{option}: expected a number or a range like 2..6 (got {quoted(text)})") from None
    if low < 1 or high < low:
        raise FairallocError(f"{option}: need 1 <= low <= high (got {quoted(text)})")
    return low, high


def bounded_range(text: str, option: str, limit: int, name: str) -> tuple[int, int]:
    low, high = number_range(text, option)
    if high > limit:
        raise FairallocError(f"{option}: at most {limit} (got {high}; fairalloc.core.limits.{name})")
    return low, high


def bounded(value: int, option: str, limit: int, name: str, low: int = 1) -> int:
    if not low <= value <= limit:
        raise FairallocError(f"{option}: must be between {low} and {limit} (got {value}; fairalloc.core.limits.{name})")
    return value


def budget(value: int, option: str = "--budget") -> int:
    from fairalloc.analysis.manipulation import check_budget

    return check_budget(value, option)


def seed(value: int) -> int:
    return bounded(value, "--seed", limits.MAX_SEED, "MAX_SEED", low=0)


# -- paths an option writes to ---------------------------------------------------------------------


def output_path(path, option: str, *, folder: bool = False) -> Path:
    """``path`` for an option that writes, checked before any work starts: its folder exists and is
    writable, and the target is not a folder.  ``folder=True``: a folder to write into, which may
    be created: its last level only, or, for a relative path inside the working directory (no
    ``..``), with its missing parents (``--plot out/sim``).  Nothing is created here."""
    path = Path(path)
    try:
        parent = _folder_to_write(path, option) if folder else _file_to_write(path, option)
    except OSError as exc:  # a name too long, a loop of links, ...
        raise FairallocError(f"{option}: cannot use {shown(path)} ({exc.strerror or exc})") from None
    except ValueError as exc:  # a NUL byte
        raise FairallocError(f"{option}: cannot use {shown(path)} ({exc})") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise FairallocError(f"{option}: folder {shown(parent)} is not writable")
    return path


def _folder_to_write(path: Path, option: str) -> Path:
    """The existing folder a folder ``path`` will be created in (or ``path`` itself)."""
    if path.exists() and not path.is_dir():
        raise FairallocError(f"{option}: {shown(path)} is a file, not a folder")
    parent = path if path.exists() else path.parent
    if _inside_working_directory(path):
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
    return _existing_folder(parent, option)


def _file_to_write(path: Path, option: str) -> Path:
    if path.is_dir():
        raise FairallocError(f"{option}: {shown(path)} is a folder; give a file name")
    if path.exists() and not path.is_file():
        raise FairallocError(f"{option}: {shown(path)} exists and is not a regular file")
    return _existing_folder(path.parent, option)


def _existing_folder(parent: Path, option: str) -> Path:
    if not parent.exists():
        raise FairallocError(f"{option}: folder {shown(parent)} does not exist")
    if not parent.is_dir():
        raise FairallocError(f"{option}: {shown(parent)} is not a folder")
    return parent


def _inside_working_directory(path: Path) -> bool:
    return not path.is_absolute() and ".." not in path.parts


def make_folder(path: Path) -> None:
    """The folder an option names, created if missing (as :func:`output_path` allowed)."""
    try:
        path.mkdir(parents=_inside_working_directory(path), exist_ok=True)
    except OSError as exc:
        raise FairallocError(f"{shown(path)}: cannot create the folder ({exc.strerror or exc})") from None


def write_text(path: Path, text: str) -> None:
    write_atomically(path, lambda tmp: tmp.write_text(text))


def write_yaml(path: Path, data) -> None:
    """Write atomically: a half-written case never appears under the final name."""
    write_text(path, yaml_doc(data))


# -- the falsifier's engine and instance space ------------------------------------------------------

ENGINE_OPTIONS = [
    click.option("--workers", type=int, default=None, help="Local worker processes (default: all cores)."),
    click.option(
        "--dask",
        "dask_address",
        metavar="ADDRESS",
        help="Run the trials on a Dask cluster instead, e.g. tcp://scheduler:8786.",
    ),
    click.option(
        "--results",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Stream every finished trial to this JSON-lines file; rerunning with the same file "
        "resumes an interrupted run without redoing finished trials.",
    ),
    click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal)."),
]

SPACE_OPTIONS = [
    click.option("--users", default="2..6", show_default=True, help="Users per random instance (N or LOW..HIGH)."),
    click.option("--resources", default="2..4", show_default=True, help="Resources per random instance."),
    click.option("--zeros", is_flag=True, help="Allow zero demands (the DRF paper assumes positive demands)."),
    click.option("--weights", is_flag=True, help="Draw scalar user weights 1..4."),
    click.option("--bounds", is_flag=True, help="Give some users a max_tasks bound."),
    click.option(
        "--queues",
        is_flag=True,
        default=None,
        help="Random queue instances: requests, weights, guarantees, limits, groups (default when a "
        "mechanism is a production policy); all twelve properties by default.",
    ),
]


def engine_options(fn):
    for option in reversed(ENGINE_OPTIONS):
        fn = option(fn)
    return fn


def space_options(fn):
    for option in reversed(SPACE_OPTIONS):
        fn = option(fn)
    return fn


def space(users, resources, zeros, weights, bounds, queues=False):
    from fairalloc.analysis.falsify import InstanceSpace

    return InstanceSpace(
        bounded_range(users, "--users", limits.MAX_SPACE_USERS, "MAX_SPACE_USERS"),
        bounded_range(resources, "--resources", limits.MAX_SPACE_RESOURCES, "MAX_SPACE_RESOURCES"),
        zeros,
        weights,
        bounds,
        bool(queues),
    )


def queue_space(queues, names) -> bool:
    """``--queues``, or by default whether any of the mechanisms ``names`` is a production policy
    (:class:`~fairalloc.engines.queue_policy.QueuePolicy`): those run on queue instances."""
    from fairalloc.core import registry
    from fairalloc.engines.queue_policy import QueuePolicy

    if queues is not None:
        return bool(queues)
    return any(isinstance(registry.get(name), QueuePolicy) for name in names)


def engine_checks(workers, results, trials: int) -> None:
    """falsify / table2: workers, trials and the results file, before any trial runs."""
    if workers is not None:
        bounded(workers, "--workers", limits.MAX_WORKERS, "MAX_WORKERS")
    bounded(trials, "--trials", limits.MAX_TRIALS, "MAX_TRIALS")
    if results is not None:
        output_path(results, "--results")
