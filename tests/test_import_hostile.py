"""Any value of any field of a gallery file replaced by a value of the wrong shape gives either a
case or one ImportFailed line (exit 2 on the command line), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.core.errors import FairallocError
from fairalloc.io.importers import import_files
from fairalloc.testing import places, replaced

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported"
WRONG = [None, 1, "x", [], [1], {"a": 1}, True, -1, "1Gi", 1.5, {"cpu": "1"}, [{"name": 1}], "500m", ""]


def _examples() -> list[tuple[dict, list[tuple[str, object]]]]:
    out = []
    for expect in sorted(GALLERY.glob("*/*/expect.yaml")):
        spec = yaml.safe_load(expect.read_text())
        files = [expect.parent / f for f in spec["files"]]
        if any(f.suffix == ".xml" for f in files):
            continue  # XML is refused or read by defusedxml; its hostile cases are in test_importers.py
        loaded = []
        for f in files:
            text = f.read_text()
            fmt = "json" if text.lstrip()[:1] in "{[" else "yaml"
            loaded.append((fmt, json.loads(text) if fmt == "json" else list(yaml.safe_load_all(text))))
        out.append((spec, loaded))
    return out


EXAMPLES = _examples()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=st.sampled_from(range(len(EXAMPLES))), data=st.data())
def test_a_wrong_shape_anywhere_is_one_line(tmp_path, example, data):
    spec, loaded = EXAMPLES[example]
    docs = list(loaded)
    k = data.draw(st.sampled_from(range(len(docs))))
    fmt, value = docs[k]
    docs[k] = (fmt, replaced(value, data.draw(st.sampled_from(places(value))), data.draw(st.sampled_from(WRONG))))
    files = []
    for j, (fmt, value) in enumerate(docs):
        f = tmp_path / f"m{j}.{fmt}"
        f.write_text(json.dumps(value) if fmt == "json" else yaml.safe_dump_all(value))
        files.append(str(f))
    capacity = {r: str(v) for r, v in (spec.get("capacity") or {}).items()} or None
    try:
        import_files(files, system=spec["system"], capacity=capacity)
    except FairallocError as exc:
        assert "\n" not in str(exc)
