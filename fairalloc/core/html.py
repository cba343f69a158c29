"""HTML tables for Jupyter: the ``_repr_html_`` of instances, allocations and property reports.

One small builder, so the three displays look alike: a caption, a header (optionally with a
spanning group row), one row per user or property with the name as a row header, a "... more"
row when the rows were truncated, and footer rows (capacity, utilisation, prices).  Every cell is
escaped with :func:`html.escape` unless it is :class:`Markup` built here (a badge).

>>> print(table(["user", "tasks"], [["<b>x</b>", "3"]], caption="drf"))  # doctest: +NORMALIZE_WHITESPACE
<table class="fairalloc" style="border-collapse: collapse"><caption style="text-align: left">drf</caption>
<thead><tr><th style="text-align: left">user</th><th style="text-align: right">tasks</th></tr></thead>
<tbody><tr><th style="text-align: left">&lt;b&gt;x&lt;/b&gt;</th><td style="text-align: right">3</td></tr></tbody>
</table>
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import SupportsFloat

#: users shown before a table is cut short (the rest are counted, never built)
MAX_ROWS = 20

_LEFT = ' style="text-align: left"'
_RIGHT = ' style="text-align: right"'
_BADGE = (
    "display: inline-block; padding: 1px 8px; border-radius: 9px; color: white; "
    "font-size: 0.85em; font-weight: bold; background: {}"
)
COLOURS = {"green": "#1a7f37", "red": "#cf222e", "grey": "#6e7781"}


class Markup(str):
    """Text that already is HTML (built here), so :func:`table` does not escape it again."""


def badge(text: str, colour: str) -> Markup:
    """A coloured pill (inline CSS, so it survives notebooks rendered without our styles)."""
    return Markup(f'<span style="{_BADGE.format(COLOURS[colour])}">{escape(text)}</span>')


def _cell(tag: str, value: object, style: str, span: int = 1) -> str:
    text = value if isinstance(value, Markup) else escape(str(value))
    colspan = f' colspan="{span}"' if span > 1 else ""
    return f"<{tag}{colspan}{style}>{text}</{tag}>"


def _align(align: str, k: int) -> str:
    return _LEFT if k < len(align) and align[k] == "l" else _RIGHT


def _row(values: Sequence[object], align: str) -> str:
    """The first cell is the row header."""
    cells = [_cell("th" if k == 0 else "td", v, _align(align, k)) for k, v in enumerate(values)]
    return "<tr>" + "".join(cells) + "</tr>"


def table(
    head: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    caption: str = "",
    foot: Iterable[Sequence[object]] = (),
    more: str = "",
    groups: Sequence[tuple[str, int]] = (),
    align: str = "l",
) -> str:
    """An HTML table.

    ``groups``: an optional header row above ``head`` as ``(label, columns spanned)`` pairs;
    ``more``: a note on a row of its own after the body (what was left out); ``foot``: rows in
    ``<tfoot>``; ``align``: ``"l"`` or ``"r"`` per column (text left, numbers right; columns
    past its end are numbers).
    """
    parts = ['<table class="fairalloc" style="border-collapse: collapse">']
    if caption:
        parts.append(f"<caption{_LEFT}>{escape(caption)}</caption>")
    parts.append("\n<thead>")
    if groups:
        parts.append(
            "<tr>"
            + "".join(_cell("th", label, ' style="text-align: center"', span) for label, span in groups)
            + "</tr>"
        )
    parts.append(
        "<tr>" + "".join(_cell("th", h, _align(align, k)) for k, h in enumerate(head)) + "</tr></thead>\n<tbody>"
    )
    parts.extend(_row(r, align) for r in rows)
    if more:
        parts.append("<tr>" + _cell("td", more, ' style="text-align: left; font-style: italic"', len(head)) + "</tr>")
    parts.append("</tbody>")
    footer = list(foot)
    if footer:
        parts.append("\n<tfoot>" + "".join(_row(r, "l") for r in footer) + "</tfoot>")
    parts.append("\n</table>")
    return "".join(parts)


def shown(count: int, noun: str = "users", limit: int = MAX_ROWS) -> tuple[int, str]:
    """How many rows to show, and the note on what was left out (``""`` if nothing was)."""
    if count <= limit:
        return count, ""
    return limit, f"... {count - limit:,} more {noun} ({count:,} in all)"


def first_users(instance: object, k: int) -> list[str]:
    """The names of the first ``k`` users, without generating a million default names."""
    names = getattr(instance, "_users", None)
    return list(names[:k]) if names is not None else [str(i + 1) for i in range(k)]


def number(value: SupportsFloat | str, digits: int = 6) -> str:
    """An input number as written in a case (``inf`` as the infinity sign)."""
    real = float(value)
    return "∞" if real == float("inf") else f"{real:.{digits}g}"


__all__ = ["MAX_ROWS", "Markup", "badge", "first_users", "number", "shown", "table"]
