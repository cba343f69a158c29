"""What the explorer serves besides its page: the documentation, and the chart library.

The page links each mechanism to its section of ``docs/formulations.md``; the explorer serves the
``docs/`` pages rendered to HTML (Python-Markdown, headings with anchors), so the links work
offline.  The charts are drawn in the browser by plotly.js, served from the ``plotly`` package's
own copy (no CDN).
"""

from __future__ import annotations

import functools
import re
from html import escape
from importlib import resources
from pathlib import Path

DOCS = Path(__file__).with_name("static") / "docs"
_PAGE = re.compile(r"^[A-Za-z0-9_-]+$")
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;line-height:1.5;color:#222}"
    "pre,code{background:#f4f5f7}pre{padding:.6rem;overflow-x:auto}table{border-collapse:collapse}"
    "td,th{border:1px solid #ddd;padding:2px 6px}h1,h2,h3{line-height:1.2}"
)


def plotly_bundle() -> Path:
    """plotly.js as the ``plotly`` Python package ships it (``package_data/plotly.min.js``)."""
    return Path(str(resources.files("plotly") / "package_data" / "plotly.min.js"))


def _pages() -> dict[str, Path]:
    return {p.stem: p for p in DOCS.glob("*.md")}


def _slugify(text: str) -> str:
    from markdown.extensions.toc import slugify

    return slugify(text, "-")


@functools.lru_cache(maxsize=16)
def page_html(name: str) -> str | None:
    """``docs/NAME.md`` as a standalone HTML page, or None when there is no such page."""
    import markdown

    page = _pages().get(name) if _PAGE.match(name) else None
    if page is None:
        return None
    body = markdown.markdown(
        page.read_text(encoding="utf-8"),
        extensions=["toc", "tables", "fenced_code"],
        extension_configs={"toc": {"slugify": lambda text, sep: _slugify(text)}},
    )
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(name)} - fairalloc</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{_STYLE}</style></head>'
        f"<body>{body}</body></html>"
    )


@functools.lru_cache(maxsize=64)
def anchor_of_section(name: str, section: str) -> str | None:
    """The anchor of the heading of section ``section`` ("1", "9.2") of ``docs/NAME.md``."""
    page = _pages().get(name)
    if page is None or not section:
        return None
    heading = re.compile(rf"^#+\s+{re.escape(section)}[.\s]\s*(.*)$")
    for line in page.read_text(encoding="utf-8").splitlines():
        if heading.match(line):
            return _slugify(line.lstrip("#").strip())
    return None


__all__ = ["anchor_of_section", "page_html", "plotly_bundle"]
