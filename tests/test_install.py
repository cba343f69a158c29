"""Packaging: ``pip install -e .`` and ``pip install .`` of the checkout print no warning, the
editable install is a plain path entry (no import hook), a non-editable install holds real files
(models, the case library, the explorer's static files), and importing fairalloc from a checkout
in a Python that lacks its dependencies fails with one clear line.

Each install goes into its own ``--prefix`` under ``tmp_path``, from a copy of the checkout, with
this venv's pip and setuptools (``--no-build-isolation --no-index``: nothing is downloaded), so
the file takes seconds.  pip runs the same build hooks as for ``make test``'s install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: what a build reads: the package (with its links to models/, cases/ and docs/), their targets, metadata
SOURCES = ("pyproject.toml", "README.md", "fairalloc", "models", "cases", "docs")
LINKS = {"models": "models", "case_library": "cases"}  # fairalloc/<name> -> ../<target>
VENV_SITE = sysconfig.get_paths()["purelib"]
MESSAGE = (
    "ImportError: fairalloc is not installed in this Python (No module named '{}'); "
    "run 'make run' or 'pip install -e .' in the checkout"
)


def checkout_copy(dest: Path) -> Path:
    """The files of the checkout a build reads, links kept as links (as ``git clone`` makes them)."""
    dest.mkdir()
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(
                src, dest / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
            )
        else:
            shutil.copy2(src, dest / name)
    return dest


def fairalloc_in_this_venv() -> list[str]:
    return sorted(name for name in os.listdir(VENV_SITE) if "fairalloc" in name.lower())


def pip_install(tmp_path: Path, *args: str) -> tuple[Path, str]:
    """``pip install`` of a fresh copy of the checkout into a new prefix: (its site-packages, pip's output).

    ``--ignore-installed``: without it pip would first uninstall this venv's own fairalloc."""
    source = checkout_copy(tmp_path / "checkout")
    prefix = tmp_path / "prefix"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    ours = fairalloc_in_this_venv()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--ignore-installed",
            "--no-warn-script-location",
            "--prefix",
            str(prefix),
            *args,
            str(source),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    assert fairalloc_in_this_venv() == ours, output
    assert proc.returncode == 0, output
    site = Path(sysconfig.get_paths(vars={"base": str(prefix), "platbase": str(prefix)})["purelib"])
    assert site.is_dir(), output
    return site, output


def warnings_in(output: str) -> list[str]:
    return [line for line in output.splitlines() if "warn" in line.lower() or "deprecat" in line.lower()]


def run_isolated(code: str, before=(), sitedirs=(), after=(), cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``code`` in this interpreter with ``-I -S``: no site-packages, no .pth file, no PYTHON*
    variable; ``sys.path`` is ``before``, the standard library, ``sitedirs`` (their .pth files
    processed, as for an installed site-packages), then ``after``."""
    setup = (
        f"import site, sys\nsys.path[:0] = {[str(p) for p in before]!r}\n"
        f"for d in {[str(p) for p in sitedirs]!r}: site.addsitedir(d)\n"
        f"sys.path += {[str(p) for p in after]!r}\n"
    )
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", setup + code], capture_output=True, text=True, cwd=cwd or ROOT, timeout=300
    )


SMOKE = """
import importlib.resources, fairalloc
print(fairalloc.__file__)
print(fairalloc.solve(fairalloc.load_case("drf-section-4-1"), "drf").tasks.tolist())
print(len(fairalloc.bundled_cases()))
print(sorted(p.name for p in importlib.resources.files("fairalloc.explorer").joinpath("static").iterdir()))
"""


def smoke(tmp_path: Path, **path) -> str:
    """An installed fairalloc solves a bundled case and finds every case and static file; the
    ``__init__.py`` it was imported from."""
    proc = run_isolated(SMOKE, cwd=tmp_path, **path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1:] == [
        "[3.0, 2.0]",
        str(len(list((ROOT / "cases").glob("*.yaml")))),
        str(sorted(p.name for p in (ROOT / "fairalloc" / "explorer" / "static").iterdir())),
    ]
    return lines[0]


def test_the_links_are_in_the_checkout():
    """fairalloc/models and fairalloc/case_library are symlinks to the top-level folders (a clone
    with core.symlinks=false would turn them into text files, and nothing would import)."""
    for name, target in LINKS.items():
        link = ROOT / "fairalloc" / name
        assert link.is_symlink() and os.readlink(link) == f"../{target}", link
        assert link.resolve() == (ROOT / target).resolve()
    docs = ROOT / "fairalloc" / "explorer" / "static" / "docs"  # the pages the explorer serves
    assert docs.is_symlink() and os.readlink(docs) == "../../../docs" and (docs / "explorer.md").is_file()


def test_editable_install_is_a_plain_path_entry_without_warnings(tmp_path):
    site, output = pip_install(tmp_path, "--editable")
    assert warnings_in(output) == [], output
    # setuptools' simple strategy: one .pth line naming the checkout, no import-hook module
    pth = list(site.glob("__editable__*fairalloc*.pth"))
    assert len(pth) == 1 and pth[0].read_text().strip() == str(tmp_path / "checkout"), sorted(os.listdir(site))
    assert not list(site.glob("__editable__*finder*")), sorted(os.listdir(site))
    # the copy is what is imported (the .pth processed as site does it)
    assert smoke(tmp_path, sitedirs=[site], after=[VENV_SITE]) == str(
        tmp_path / "checkout" / "fairalloc" / "__init__.py"
    )


def test_wheel_install_holds_real_files_without_warnings(tmp_path):
    site, output = pip_install(tmp_path)
    assert warnings_in(output) == [], output
    package = site / "fairalloc"
    assert [p for p in package.rglob("*") if p.is_symlink()] == []
    for name, target in LINKS.items():
        shipped = {p.name for p in (package / name).iterdir() if p.suffix in (".py", ".yaml")}
        assert shipped == {p.name for p in (ROOT / target).iterdir() if p.suffix in (".py", ".yaml")}, name
    assert smoke(tmp_path, before=[site, VENV_SITE]) == str(package / "__init__.py")


def one_clear_line(proc: subprocess.CompletedProcess, missing: str) -> None:
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[-1] == MESSAGE.format(missing), proc.stderr
    # the traceback shows the import statement and the guard, no frame from deep inside
    frames = [line for line in lines if line.lstrip().startswith("File ")]
    assert len(frames) == 2 and "<string>" in frames[0] and f"fairalloc{os.sep}__init__.py" in frames[1], proc.stderr


def test_import_without_the_dependencies_is_one_clear_line():
    """The checkout on sys.path of a Python without numpy & co (no site-packages at all)."""
    proc = run_isolated("import fairalloc", before=[ROOT])
    assert "No module named '" in proc.stderr, proc.stderr
    missing = proc.stderr.strip().splitlines()[-1].split("No module named '")[1].split("'")[0]
    assert missing and "." not in missing and missing != "fairalloc", proc.stderr
    one_clear_line(proc, missing)


@pytest.mark.parametrize("name", sorted(LINKS))
def test_import_without_a_linked_folder_is_one_clear_line(tmp_path, name):
    """The dependencies are there but fairalloc/<name> is not (a copy that lost the link)."""
    copy = checkout_copy(tmp_path / "checkout")
    (copy / "fairalloc" / name).unlink()
    one_clear_line(run_isolated("import fairalloc", before=[copy, VENV_SITE]), f"fairalloc.{name}")
