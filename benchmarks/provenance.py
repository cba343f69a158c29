"""Where a benchmark's figures come from, recorded the same way by the scripts that use it: the
commit measured (``+changes`` when tracked files differ from it), the machine, the load average;
and the results file, written without dropping the figures of earlier runs kept in it.

    from provenance import commit, load_average, machine   # a script in benchmarks/ runs from here
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def commit(root: Path = ROOT) -> str:
    """The checkout's short commit, ``+changes`` when tracked files differ from it ("?" outside git)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True)
    except OSError:
        return "?"
    if head.returncode != 0:
        return "?"
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def load_average() -> list[float]:
    """The 1, 5 and 15-minute load averages, to two decimals (the key is ``load_average``, with its
    ``start`` and ``end``)."""
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}


def update_json(path: str, figures: dict, indent: int = 2) -> None:
    """Write ``figures`` into the JSON file at ``path``, keeping its other keys: the figures of
    earlier runs and passes that benchmarks/README.md cites, which writing the file anew would
    drop (an unreadable file is replaced)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        doc = {}
    doc.update(figures)
    with open(path, "w") as f:
        json.dump(doc, f, indent=indent)
