"""The package's layers (README "Layout"): imports point down, and no module imports itself back.

Every ``import`` in ``fairalloc/`` and ``models/`` is read with :mod:`ast`, those inside functions
too (a lazy import is still a dependency), and checked against the layer order

    core < engines < models, io < analysis, scheduling < cli, explorer, testing, the package itself

A module may import its own subpackage and any lower layer; ``analysis`` and ``scheduling`` (and
``models`` and ``io``) sit side by side and do not import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
RANK = {
    "core": 0,
    "engines": 1,
    "models": 2,
    "io": 2,
    "analysis": 3,
    "scheduling": 3,
    "cli": 4,
    "explorer": 4,
    "testing": 4,
    "_moved": 4,
    "__init__": 4,
    "__main__": 4,
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / "fairalloc").rglob("*.py")) + sorted((ROOT / "models").glob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[0] == "models":
            parts = ("fairalloc", *parts)
        elif parts[1] in {"models", "case_library"}:  # the links to models/ and cases/
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _package(module: str) -> str:
    """The layer a module belongs to: its subpackage, or the top-level module's own name."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    if parts[1] in RANK and (len(parts) > 2 or f"fairalloc.{parts[1]}" in MODULES):
        return parts[1]
    raise AssertionError(f"{module}: not in any layer; add its subpackage to RANK and to the README")


def _target(importer: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The fairalloc modules one import statement depends on."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: resolve against the importer
            here = importer.split(".")
            if MODULES[importer].name != "__init__.py":
                here = here[:-1]
            here = here[: len(here) - (node.level - 1)]
            base = ".".join(here + ([base] if base else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    return [n for n in names if n == "fairalloc" or n.startswith("fairalloc.")]


def _edges() -> list[tuple[str, str, int]]:
    edges = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges += [(module, target, node.lineno) for target in _target(module, node)]
    return edges


EDGES = _edges()


def test_every_import_names_a_module_file():
    """Inside the package, old flat paths (``fairalloc.properties``) are for users, not for us."""
    bad = [f"{MODULES[a].relative_to(ROOT)}:{line} imports {b}" for a, b, line in EDGES if b not in MODULES]
    assert not bad, "\n".join(bad)


def test_imports_point_down_the_layers():
    bad = []
    for a, b, line in EDGES:
        if b not in MODULES:
            continue
        la, lb = _package(a), _package(b)
        if la != lb and RANK[lb] >= RANK[la] and RANK[la] < 4:
            bad.append(f"{MODULES[a].relative_to(ROOT)}:{line}: {la} imports {lb} ({b})")
    assert not bad, "\n".join(bad)


def test_no_import_cycles():
    graph = nx.DiGraph((a, b) for a, b, _ in EDGES if b in MODULES and a != b)
    # a subpackage's __init__ re-exporting its own modules is not a cycle of ideas
    graph.remove_edges_from([(a, b) for a, b in list(graph.edges) if b.startswith(a + ".")])
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, "\n".join(" -> ".join([*c, c[0]]) for c in cycles[:10])


@pytest.mark.parametrize("package", sorted(p for p in RANK if (ROOT / "fairalloc" / p / "__init__.py").exists()))
def test_each_layer_says_what_belongs_there(package):
    doc = ast.get_docstring(ast.parse((ROOT / "fairalloc" / package / "__init__.py").read_text()))
    assert doc and "Belongs here" in doc and "Imports" in doc, (
        f"fairalloc/{package}/__init__.py: say what "
        "belongs in this layer ('Belongs here: ...') and what it may import ('Imports: ...')"
    )


def test_a_layer_violation_is_caught(tmp_path):
    """The checker itself can fail: an upward import in a core module is reported."""
    fake = ast.parse("from fairalloc.analysis.properties import check\n").body[0]
    targets = _target("fairalloc.core.instance", fake)
    assert targets == ["fairalloc.analysis.properties"]
    assert RANK[_package(targets[0])] > RANK[_package("fairalloc.core.instance")]


@pytest.mark.parametrize("old", sorted(__import__("fairalloc._moved", fromlist=["MOVED"]).MOVED))
def test_old_flat_paths_import_the_same_module(old):
    """Code written against the flat layout (``fairalloc.properties``) keeps working."""
    import importlib

    from fairalloc._moved import MOVED

    assert importlib.import_module(f"fairalloc.{old}") is importlib.import_module(f"fairalloc.{MOVED[old]}")


def test_the_readme_names_import_where_the_readme_says():
    import fairalloc
    from fairalloc.manipulation import verify
    from fairalloc.properties import check
    from fairalloc.scheduling import DRFScheduler
    from fairalloc.testing import check_mechanism

    assert all(callable(f) for f in (verify, check, DRFScheduler, check_mechanism))
    for name in ("solve", "load_case", "Instance", "program", "register", "Mechanism", "parse_case"):
        assert hasattr(fairalloc, name), name
