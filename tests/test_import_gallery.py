"""The gallery of real configurations (cases/imported/<system>/<example>/): each imported as
``fairalloc import`` would, checked against its ``expect.yaml``: the system detected, the warnings
given, the extracted numbers, and the entitlements under the named policies.

An ``expect.yaml`` records where its files come from (repository, commit, paths, licence) and
where its expected numbers come from (``note``); every system has at least two examples.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fairalloc.core import registry
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import SYSTEMS, import_files

GALLERY = Path(__file__).resolve().parent.parent / "cases" / "imported"
EXAMPLES = sorted(p.parent for p in GALLERY.glob("*/*/expect.yaml"))


def _id(folder: Path) -> str:
    return f"{folder.parent.name}/{folder.name}"


def _expect(folder: Path) -> dict:
    return yaml.safe_load((folder / "expect.yaml").read_text())


def _imported(folder: Path):
    spec = _expect(folder)
    capacity = {r: str(v) for r, v in (spec.get("capacity") or {}).items()} or None
    files = [str(folder / f) for f in spec["files"]]
    return spec, *import_files(files, capacity=capacity, name=folder.name)


def _subset(expected, actual, where: str) -> None:
    """Every key of ``expected`` is in ``actual`` with an equal value (numbers to 1e-9 relative)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected a mapping, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}: {key} missing (has {sorted(actual)})"
            _subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, (int, float)) and not isinstance(expected, bool):
        assert actual == pytest.approx(expected, rel=1e-9, abs=1e-12), where
    else:
        assert actual == expected, where


def test_every_system_has_two_examples_with_their_sources():
    by_system = {s: [e for e in EXAMPLES if e.parent.name == s] for s in SYSTEMS}
    assert all(len(found) >= 2 for found in by_system.values()), {s: len(f) for s, f in by_system.items()}
    for folder in EXAMPLES:
        source = _expect(folder)["source"]
        assert {"repository", "paths", "licence"} <= set(source), _id(folder)
        assert _expect(folder).get("note"), f"{_id(folder)}: say where the expected numbers come from"
        for name in _expect(folder)["files"]:
            assert (folder / name).is_file(), f"{_id(folder)}: {name} missing"


@pytest.mark.parametrize("folder", EXAMPLES, ids=_id)
def test_import_detects_the_system_and_extracts_the_numbers(folder):
    spec, case, warnings = _imported(folder)
    assert case["source"].startswith(f"imported by 'fairalloc import' ({spec['system']})")
    expected_warnings = spec.get("warnings") or []
    for text in expected_warnings:
        assert any(text in w for w in warnings), f"no warning contains {text!r}: {warnings}"
    assert len(warnings) == len(expected_warnings), warnings
    _subset(spec.get("case") or {}, case, "case")
    parse_case(case)  # the written case loads


@pytest.mark.parametrize("folder", [f for f in EXAMPLES if _expect(f).get("entitlements")], ids=_id)
def test_entitlements_of_the_imported_case(folder):
    spec, case, _ = _imported(folder)
    inst = parse_case(case).instance
    for mechanism, queues in spec["entitlements"].items():
        bundles = registry.get(mechanism).allocate(inst).bundles
        for queue, amounts in queues.items():
            i = inst.users.index(queue)
            for resource, amount in amounts.items():
                got = bundles[i, inst.resources.index(resource)]
                assert got == pytest.approx(amount, rel=1e-6, abs=1e-9), f"{mechanism}: {queue}.{resource}"
