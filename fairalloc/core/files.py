"""Files fairalloc writes: whole or not at all.

Every file a command or :meth:`fairalloc.core.backends.Program.write` writes goes through
:func:`write_atomically`: a fresh temporary file beside the target, created exclusively (never
through a link planted there), written, flushed to disk, then renamed over the target. A failed
write (a full disk, an error half-way through a figure), a ``kill -9`` or a power cut never leaves
a half-written file under the name the user gave, and of two processes writing the same name the
last rename wins whole.  What a kill can leave is the hidden temporary file,
``.NAME.HOST-PID.*.part``; the next write of ``NAME`` removes those of processes of this host that
are gone (never one of a live process or of another host sharing the folder).

Sweep results (:mod:`fairalloc.analysis.sweep`) are the one other writer: an append stream,
locked, each line synced, a cut-short last line dropped on resume.
"""

from __future__ import annotations

import contextlib
import glob
import os
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

from fairalloc.core.errors import FairallocError, shown


def write_atomically(path: Path | str, write: Callable[[Path], object], suffix: str = "") -> None:
    """``write(tmp)`` to a fresh temporary file, sync it, then rename it to ``path``; on failure
    ``tmp`` is removed, ``path`` is untouched and an :class:`OSError` becomes one
    :class:`~fairalloc.core.errors.FairallocError` line naming ``path``.
    ``suffix``: kept at the end of the temporary name (a figure's format is read from it)."""
    path = Path(path)
    _remove_abandoned(path)
    try:
        # O_CREAT | O_EXCL under a random name: a link planted at a guessable name is never followed;
        # the name is cut so that a target of the longest allowed name still has a temporary name
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=_prefix(path) + _OWNER, suffix=".part" + suffix)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    tmp = Path(name)
    try:
        try:
            write(tmp)  # callers write by path (write_text, savefig, writeLP): the same file as fd
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a new file is 0666 less the umask
            os.fsync(fd)  # the data is on disk before the name points at it
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _cannot_write(path, exc) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)  # the rename itself survives a power cut


#: who writes a temporary file: this host and process (hostname cut to stay within a name's length)
_OWNER = f"{socket.gethostname()[:40]}-{os.getpid()}."


def _prefix(path: Path) -> str:
    return f".{path.name[:100]}."


def _remove_abandoned(path: Path) -> None:
    """Remove the temporary files of ``path`` that a killed process of this host left: their owner's
    pid is in the name, and a pid that no process has is a writer that will never rename its file."""
    host = _OWNER.rsplit("-", 1)[0]
    with contextlib.suppress(OSError):
        for tmp in path.parent.glob(glob.escape(_prefix(path)) + "*.part*"):
            owner = tmp.name[len(_prefix(path)) :].split(".", 1)[0]
            name, _, pid = owner.rpartition("-")
            if name == host and pid.isdigit() and not _alive(int(pid)):
                tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another user's process, or a pid we cannot ask about: leave its file
    return True


def fsync_directory(folder: Path | str) -> None:
    """Sync ``folder``'s entries to disk where the platform allows (not on Windows)."""
    with contextlib.suppress(OSError, AttributeError):
        dfd = os.open(os.path.abspath(folder), os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _umask() -> int:
    """The process's umask: read from ``/proc`` where it is (Linux), so no other thread ever
    creates a file under a changed umask; else set and restored."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        status = Path("/proc/self/status").read_text(encoding="ascii")
        return int(next(line for line in status.splitlines() if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _cannot_write(path: Path, exc: OSError) -> FairallocError:
    return FairallocError(f"{shown(path)}: cannot write ({exc.strerror or exc})")
