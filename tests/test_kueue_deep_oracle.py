"""``kueue`` against its previous implementation on deep trees of 30 to 50 queues (issue 36).

tests/test_fast_kueue.py holds the fast filling to tests/previous_kueue.py on drawn trees, but six
deep only up to 8 queues: the previous implementation's nested searches take 10 s to minutes of
CPU on a deeper 50-queue tree.  Its answers on seeded trees of 30 to 50 queues, two to six levels
of cohorts deep, were computed once by tests/make_kueue_oracle.py and are kept in
tests/data/kueue_oracle/; each test reads one tree back as drawn and asks today's ``kueue``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from frozen_trees import as_drawn

from fairalloc.core.errors import FairallocError
from fairalloc.io.cases import parse_case
from fairalloc.models.kueue import Kueue
from fairalloc.testing import close

ORACLE = Path(__file__).parent / "data" / "kueue_oracle"
FILES = sorted(ORACLE.glob("*.json"))
#: relative agreement with the previous answer (floor 1), as the other oracle tests
SAME = 1e-9


def test_the_kept_answers_span_the_depths():
    depths = {json.loads(p.read_text())["case"]["name"].split("-")[2] for p in FILES}
    assert len(FILES) >= 14 and depths == {"2", "3", "4", "5", "6"}, (len(FILES), depths)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_kueue_gives_the_previous_answer_on_a_deep_tree(path):
    record = json.loads(path.read_text())
    inst = as_drawn(parse_case(record["case"]).instance)
    previous = record["previous"]
    if "refused" in previous:
        with pytest.raises(FairallocError) as refusal:
            Kueue().entitlement(inst)
        assert type(refusal.value).__name__ == previous["refused"]
        return
    bundles, _ = Kueue().entitlement(inst)
    assert close(bundles, np.array(previous["bundles"]), SAME), np.max(np.abs(bundles - previous["bundles"]))
