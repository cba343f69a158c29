"""Progress of long work on stderr: a bar on a terminal, a line at most every 10 s when piped.

Every long command (``table2``, ``falsify``, ``check`` with strategy-proofness, ``reproduce``,
``audit``, ``tradeoff``, ``simulate``, the sweeps and the paper examples) reports through
:func:`progress_bar`, so they all behave alike:

* on a terminal, a tqdm bar redrawn in place;
* piped or redirected (``fairalloc table2 | cat``, a CI log), one line per
  :data:`LINE_EVERY` seconds at most, the first after that long and one at the end, each with
  the count, the rate and the time left:
  ``table2:  40%|####      | 3200/8000 [00:21<00:31, 150trial/s]`` (work shorter than
  :data:`LINE_EVERY` says nothing);
* with ``progress=False`` (``--no-progress``), nothing.

tqdm draws both (Casper da Costa-Luis et al., tqdm, doi:10.5281/zenodo.595120): piped, its
carriage-return redraws are written out as lines.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

#: seconds between two progress lines when stderr is not a terminal
LINE_EVERY = 10.0


class _Lines:
    """A stream that turns tqdm's in-place redraws (``\\r`` + the bar) into whole lines, once
    the work has lasted :data:`LINE_EVERY` seconds."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.start = time.monotonic()

    def write(self, text: str) -> int:
        line = text.replace("\r", "").rstrip()
        if line and time.monotonic() - self.start >= LINE_EVERY:
            self.stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def on_terminal(stream: Any = None) -> bool:
    stream = sys.stderr if stream is None else stream
    return bool(getattr(stream, "isatty", None) and stream.isatty())


def progress_bar(
    iterable: Any = None,
    *,
    total: int | None = None,
    desc: str = "",
    unit: str = "it",
    progress: bool | None = None,
    **kwargs: Any,
) -> Any:
    """A tqdm bar on stderr, or progress lines when stderr is not a terminal (see the module).

    ``progress``: True or False to force the bar on or off; None (the default) for a bar on a
    terminal and lines elsewhere.  Other keyword arguments go to tqdm (``initial``, ``leave``).
    """
    from tqdm import tqdm

    if progress is False:
        return tqdm(iterable, total=total, disable=True)
    if on_terminal():
        return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, **kwargs)
    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        file=_Lines(sys.stderr),
        mininterval=LINE_EVERY,
        maxinterval=LINE_EVERY,
        ncols=80,
        ascii=True,
        **{k: v for k, v in kwargs.items() if k != "leave"},
    )


__all__ = ["LINE_EVERY", "on_terminal", "progress_bar"]
