"""Writes tests/data/kueue_oracle/: the previous implementation's answers (tests/previous_kueue.py)
on seeded random trees of 30 to 50 queues, two to six levels of cohorts deep, for
tests/test_kueue_deep_oracle.py.  The previous implementation's nested searches take 10 s to
minutes of CPU on such a tree, too slow for a Hypothesis test (tests/test_fast_kueue.py draws deep
trees of at most 8 queues); the answers are computed here once and kept.  Not collected by pytest.

    .venv/bin/python tests/make_kueue_oracle.py [SEEDS] [CAP_SECONDS] [SEED ...]   # from the repository root

(the seeds ``0 .. SEEDS-1``, or only the SEEDs listed after the cap)

Each file holds the tree (``Instance.to_dict()``, read back by tests/frozen_trees.py's way), and
the previous answer (its bundles, or the class of its refusal); a tree whose answer passes the cap
is left out and said so.  Six-deep trees need a cap well above the default: seeds 15 and 54 (32
and 35 queues, one resource) took 394 and 356 s of CPU (``make_kueue_oracle.py`` with a cap of
2,700 s of wall time: ``make_kueue_oracle.py 0 2700 15 54``).
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import previous_kueue  # noqa: E402

from fairalloc.analysis.falsify import random_queue_tree  # noqa: E402
from fairalloc.core.errors import FairallocError  # noqa: E402

OUT = Path(__file__).parent / "data" / "kueue_oracle"


class _Cap(Exception):
    pass


def _alarm(*_) -> None:
    raise _Cap


def tree(seed: int):
    """The seeded tree: 30-50 queues, 2-6 levels, 1-3 resources, every other one over-promising."""
    rng = np.random.default_rng([36, seed])
    n, depth, m = int(rng.integers(30, 51)), int(rng.integers(2, 7)), int(rng.integers(1, 4))
    name = f"tree-{n}-{depth}-{m}-s{seed}"
    return random_queue_tree(np.random.default_rng([36, seed, 1]), n, depth, m, name, bool(seed % 2))


def main(seeds: int = 40, cap: int = 300, *only: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGALRM, _alarm)
    for seed in only or range(seeds):
        inst = tree(seed)
        start = time.process_time()
        signal.alarm(cap)
        try:
            bundles, _ = previous_kueue.Kueue().entitlement(inst)
            answer: dict = {"bundles": bundles.tolist()}
        except FairallocError as exc:
            answer = {"refused": type(exc).__name__}
        except _Cap:
            print(f"seed {seed}: {inst.name} over {cap} s, left out", flush=True)
            continue
        finally:
            signal.alarm(0)
        record = {"seed": seed, "case": inst.to_dict(), "previous": answer,
                  "previous_cpu_seconds": round(time.process_time() - start, 1)}  # fmt: skip
        (OUT / f"{inst.name}.json").write_text(json.dumps(record, default=float) + "\n")
        print(f"seed {seed}: {inst.name} {record['previous_cpu_seconds']} s", flush=True)


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
