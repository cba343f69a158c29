"""Files fairalloc writes: whole or not at all.

Every file a command or :meth:`fairalloc.core.backends.Program.write` writes goes through
:func:`write_atomically`, so a failed write (a full disk, an error half-way through a figure)
never leaves a half-written file under the name the user gave.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fairalloc.core.errors import FairallocError, shown


def write_atomically(path: Path | str, write: Callable[[Path], object], suffix: str = "") -> None:
    """``write(tmp)`` then rename ``tmp`` to ``path``; on failure ``tmp`` is removed and an
    :class:`OSError` becomes one :class:`~fairalloc.core.errors.FairallocError` line naming ``path``.
    ``suffix``: kept at the end of the temporary name (a figure's format is read from it)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".part" + suffix)
    try:
        write(tmp)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise FairallocError(f"{shown(path)}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
