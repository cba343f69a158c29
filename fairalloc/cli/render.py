"""What the command line prints: tables, JSON, YAML, CSV, and the one-line errors and warnings.

Library messages speak the Python API (``method: drf has no fast path; use method='program'``);
:func:`translate` is the one place that turns them into the running command's flags
(``--method: drf has no fast path; use --method program``).
"""

from __future__ import annotations

import csv
import io
import re

import click
import yaml

from fairalloc.core.decimals import json_text, plain
from fairalloc.core.errors import one_line


def emit(text: str) -> None:
    click.echo(text.rstrip("\n"))


def json_doc(data) -> str:
    """A JSON document as fairalloc prints it: numbers as the shortest decimals (docs/json.md)."""
    return json_text(data, indent=2)


def yaml_doc(data) -> str:
    """``data`` as YAML, written by PyYAML's safe dumper; by libyaml's emitter when the two write
    the same text (:func:`_same_in_libyaml`), ten times faster on an imported 10,000-queue case."""
    data = plain(data)
    dumper = _CSafeDumper if _CSafeDumper is not None and _same_in_libyaml(data) else yaml.SafeDumper
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True)


_CSafeDumper = getattr(yaml, "CSafeDumper", None)


def _same_in_libyaml(data) -> bool:
    """Whether libyaml's emitter writes ``data`` as PyYAML's does: a mapping or sequence at the top
    (a lone scalar ends with ``...`` in one only) whose texts are printable ASCII (line breaks,
    other characters and surrogates are escaped or folded differently) and whose keys are texts of
    1 to 127 characters (an empty or longer key is written as a complex ``? key`` by PyYAML only).
    One pass over the data, iterative."""
    if not isinstance(data, (dict, list)):
        return False
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in item:
                if not (isinstance(key, str) and 0 < len(key) < 128 and key.isascii() and key.isprintable()):
                    return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and not (item.isascii() and item.isprintable()):
            return False
    return True


def csv_doc(allocations) -> str:
    """One row per mechanism and user: tasks, dominant share and bundle."""
    buf = io.StringIO()
    resources = allocations[0].instance.resources
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["mechanism", "user", "tasks", "dominant_share", *resources])
    for a in allocations:
        for i, u in enumerate(a.instance.users):
            writer.writerow([a.mechanism, u, *plain([a.tasks[i], a.dominant_shares[i], *a.bundles[i]])])
    return buf.getvalue()


def structured(allocations, fmt: str, exact: bool) -> str:
    data = [a.to_dict(exact=exact) for a in allocations]  # always a list: one object per mechanism
    return json_doc(data) if fmt == "json" else yaml_doc(data)


def mark(result) -> str:
    """A property result in a table cell."""
    return "n/a" if not result.applicable else ("yes" if result.holds else "NO")


# -- errors and warnings ---------------------------------------------------------------------------


def flags(command: click.Command | None) -> dict[str, str]:
    """The running command's options by python parameter name (``fmt``: ``--format``): the names
    library messages use when a command passes its options on under their own names.  An option
    whose flag is also a field of the data a message may be about (a mechanism, a user, a
    workload's nodes) has another python name (``mechanism_name``), so that message keeps it."""
    names = {}
    for param in getattr(command, "params", ()):
        long = [o for o in param.opts if o.startswith("--")] if isinstance(param, click.Option) else []
        if long and param.name:
            names[param.name] = long[0]
    return names


_VALUE = r"""'([^']*)'|"([^"]*)"|(-?\d[\d.eE+-]*)\b"""


def translate(message: str, command: click.Command | None) -> str:
    """``message`` in the words of ``command``'s flags: a leading ``name:`` becomes ``--flag:`` and
    ``name='value'`` becomes ``--flag value`` when ``name`` is one of its options.  A parameter
    the command has no option for is left in the API's words: no flag is invented."""
    known = flags(command)
    if not known:
        return message
    head = re.match(r"([A-Za-z_][\w-]*):(?=\s|$)", message)
    if head and head.group(1) in known:
        message = known[head.group(1)] + message[head.end(1) :]

    def value(match: re.Match) -> str:
        flag = known.get(match.group(1))
        if flag is None:
            return match.group(0)
        shown = next(v for v in match.groups()[1:] if v is not None)
        return f"{flag} {shown}"

    return re.sub(rf"(?<![\w.-])([A-Za-z_]\w*)=(?:{_VALUE})", value, message)


def error(exc, command: click.Command | None = None) -> None:
    """A user error as the command line shows it: one line on stderr, in the command's flags."""
    click.echo(f"fairalloc: {one_line(translate(str(exc), command))}", err=True)


def show_warning(message, category, filename, lineno, file=None, line=None, *, command=None) -> None:
    """A warning fairalloc gives its user, as one line (in ``command``'s flags); numpy's
    floating-point RuntimeWarnings (``divide by zero encountered in ...``) are not for the user:
    every result they could touch is checked (feasibility, property tolerances) before it is shown."""
    text = str(message)
    if issubclass(category, RuntimeWarning) and "encountered in" in text:
        return
    click.echo(f"fairalloc: warning: {one_line(translate(text, command))}", err=True)
