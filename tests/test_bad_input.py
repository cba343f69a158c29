"""Bad input never produces a traceback: one line on stderr naming the field, exit code 2.

Every case below is run through ``fairalloc.cli.main`` in-process (with ``capsys``), a selection
also through a real ``python -m fairalloc.cli`` subprocess, and every case-file problem also
through the Python API (``fairalloc.load_case``), which must raise :class:`fairalloc.CaseError`
and never a PyYAML / pydantic / numpy exception.

For each rejected input we require:

* exit code 2 and nothing on stdout;
* exactly one line on stderr, ``fairalloc: <field>: <problem>``, naming the offending field
  (``users.B.demand.gpu``, ``resources.cpu``, the file for file-level problems, the option for
  command-line problems) and the problem;
* no "Traceback", no warnings leaking onto stderr, and no file created (YAML tags that would
  run a command must not run it; ``model --write`` must not leave a file behind).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path

import numpy as np
import pydantic
import pytest
import yaml

import fairalloc
from fairalloc import CaseError, Instance
from fairalloc.cli import main
from fairalloc.testing import HANG

# -- case texts -----------------------------------------------------------------------------------

GOOD = """\
resources: {cpu: 9, mem: 18}
users:
  A: {demand: {cpu: 1, mem: 4}}
  B: {demand: {cpu: 3, mem: 1}}
"""


def case_text(resources: str = "{cpu: 9, mem: 18}", B: str = "{demand: {cpu: 3, mem: 1}}", extra: str = "") -> str:
    """The DRF example with ``resources`` and user B's spec replaced (user A is always fine)."""
    return f"resources: {resources}\nusers:\n  A: {{demand: {{cpu: 1, mem: 4}}}}\n  B: {B}\n{extra}"


def user_b(spec: str) -> str:
    """The DRF example with user B's spec replaced."""
    return case_text(B=spec)


# -- the table of bad inputs ----------------------------------------------------------------------


@dataclass(frozen=True)
class Bad:
    """One bad input.

    ``argv`` and ``field`` may use ``{case}`` (the case file written from ``text``) and
    ``{dir}`` (the scratch directory).  ``text`` may use ``{dir}`` too.  ``field`` is the field
    the message must name (or a tuple of acceptable ones); with ``prefix`` the line must be
    ``fairalloc: <field>: ...``, otherwise the field must merely appear.  ``problem`` is a
    case-insensitive regex the message must match.  ``forbidden`` are files (relative to the
    scratch directory) that must not exist afterwards.
    """

    id: str
    text: str | bytes | None
    field: str | tuple[str, ...]
    problem: str
    argv: tuple[str, ...] = ("solve", "{case}")
    prefix: bool = True
    mkdir: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    kind: str = "file"  # "file": the problem is in the case file (also run through load_case)
    notes: str = dc_field(default="", compare=False)


NONNEG = r">= ?0|greater than or equal to 0|negative"
POSITIVE = r"> ?0|greater than 0|positive"
FINITE_NAN = r"finite|\bnan\b"
FINITE_INF = r"finite|\binf"
NUMBER = r"number"
IN_0_1 = r"\(0, ?1\]|greater than 0|less than or equal to 1"

TAG_APPLY = '!!python/object/apply:os.system ["touch {dir}/pwned-apply"]\n'
# the classic PyYAML gadget: tuple(map(os.system, [...])) runs the command while constructing
TAG_NEW = (
    '!!python/object/new:tuple\n- !!python/object/new:map\n  - !!python/name:os.system\n  - ["touch {dir}/pwned-new"]\n'
)
TAG_NESTED = case_text(resources='{cpu: !!python/object/apply:os.system ["touch {dir}/pwned-nested"], mem: 18}')

BAD: list[Bad] = [
    # -- the file itself --------------------------------------------------------------------
    Bad("missing-file", None, "{dir}/missing.yaml", r"no such file", argv=("solve", "{dir}/missing.yaml")),
    Bad("directory", None, "{dir}/subdir", r"directory", argv=("solve", "{dir}/subdir"), mkdir=("subdir",)),
    Bad("empty-file", "", "{case}", r"empty"),
    Bad("whitespace-only", "  \n\t\n   \n", "{case}", r"empty"),
    Bad("not-yaml", "resources: [cpu: 9", "{case}", r"not valid yaml"),
    Bad("not-utf8", b"\xff\xfe\x00\x01resources", "{case}", r"not a text file|utf-?8|encoding"),
    Bad("top-level-list", "- resources\n- users\n", "{case}", r"mapping"),
    Bad("top-level-scalar", "42\n", "{case}", r"mapping"),
    Bad("top-level-string", "just some words\n", "{case}", r"mapping"),
    # -- YAML tags that would build Python objects (and run a command) ----------------------
    Bad("tag-object-apply", TAG_APPLY, "{case}", r"tag", forbidden=("pwned-apply",)),
    Bad("tag-object-new", TAG_NEW, "{case}", r"tag", forbidden=("pwned-new",)),
    Bad("tag-nested-in-capacity", TAG_NESTED, "{case}", r"tag", forbidden=("pwned-nested",)),
    # -- structure ----------------------------------------------------------------------------
    Bad("missing-resources", "users:\n  A: {demand: {cpu: 1}}\n", "resources", r"missing|required"),
    Bad("missing-users", "resources: {cpu: 9, mem: 18}\n", "users", r"missing|required"),
    Bad("empty-resources", case_text(resources="{}"), "resources", r"empty|at least one"),
    Bad("empty-users", "resources: {cpu: 9, mem: 18}\nusers: {}\n", "users", r"empty|at least one"),
    Bad("null-users", "resources: {cpu: 9, mem: 18}\nusers:\n", "users", r"mapping|empty|missing|required"),
    Bad("resources-as-list", "resources: [cpu, mem]\nusers:\n  A: {demand: {cpu: 1}}\n", "resources", r"mapping"),
    Bad(
        "unknown-top-level-typo",
        GOOD.replace("resources:", "resource:"),
        "resource",
        r"unknown field 'resource'",
        notes="typo of a required field",
    ),
    Bad("unknown-top-level-extra", GOOD + "descripton: typo\n", "descripton", r"unknown field 'descripton'"),
    Bad(
        "unknown-user-field-typo",
        user_b("{demnd: {cpu: 3, mem: 1}}"),
        "users.B.demnd",
        r"unknown field 'demnd'",
        notes="typo of a required field",
    ),
    Bad(
        "unknown-user-field-extra",
        user_b("{demand: {cpu: 3, mem: 1}, wieght: 2}"),
        "users.B.wieght",
        r"unknown field 'wieght'",
    ),
    Bad("demand-not-a-mapping", user_b("{demand: 5}"), "users.B.demand", r"dict|mapping"),
    # -- capacities ---------------------------------------------------------------------------
    Bad("capacity-negative", case_text(resources="{cpu: -9, mem: 18}"), "resources.cpu", NONNEG),
    Bad("capacity-nan", case_text(resources="{cpu: .nan, mem: 18}"), "resources.cpu", FINITE_NAN),
    Bad("capacity-inf", case_text(resources="{cpu: .inf, mem: 18}"), "resources.cpu", FINITE_INF),
    Bad("capacity-string", case_text(resources='{cpu: "9", mem: 18}'), "resources.cpu", NUMBER),
    Bad("capacity-bool", case_text(resources="{cpu: true, mem: 18}"), "resources.cpu", NUMBER),
    Bad("capacity-null", case_text(resources="{cpu: ~, mem: 18}"), "resources.cpu", NUMBER),
    # -- demands ------------------------------------------------------------------------------
    Bad("demand-negative", user_b("{demand: {cpu: -3, mem: 1}}"), "users.B.demand.cpu", NONNEG),
    Bad("demand-nan", user_b("{demand: {cpu: .nan, mem: 1}}"), "users.B.demand.cpu", FINITE_NAN),
    Bad("demand-inf", user_b("{demand: {cpu: .inf, mem: 1}}"), "users.B.demand.cpu", FINITE_INF),
    Bad("demand-string", user_b('{demand: {cpu: "3", mem: 1}}'), "users.B.demand.cpu", NUMBER),
    Bad("demand-bool", user_b("{demand: {cpu: true, mem: 1}}"), "users.B.demand.cpu", NUMBER),
    Bad("demand-all-zero", user_b("{demand: {cpu: 0, mem: 0}}"), "users.B.demand", r"zero"),
    Bad("demand-empty-mapping", user_b("{demand: {}}"), "users.B.demand", r"zero|empty"),
    Bad(
        "demand-unknown-resource",
        user_b("{demand: {cpu: 3, gpu: 1}}"),
        "users.B.demand.gpu",
        re.escape("unknown resource 'gpu'; did you mean 'cpu'? (resources: cpu, mem)"),
    ),
    # -- duplicates ---------------------------------------------------------------------------
    Bad("duplicate-user", GOOD + "  A: {demand: {cpu: 2, mem: 2}}\n", "users.A", r"duplicate"),
    Bad("duplicate-resource", case_text(resources="{cpu: 9, mem: 18, cpu: 4}"), "resources.cpu", r"duplicate"),
    Bad("duplicate-demand-key", user_b("{demand: {cpu: 3, mem: 1, cpu: 2}}"), "users.B.demand.cpu", r"duplicate"),
    # -- zero capacity ------------------------------------------------------------------------
    Bad(
        "zero-capacity-demanded",
        case_text(resources="{cpu: 9, mem: 18, gpu: 0}", B="{demand: {cpu: 3, gpu: 1}}"),
        ("users.B.demand.gpu", "resources.gpu"),
        r"zero capacity|capacity (of |is )?0",
    ),
    # -- weights, bounds, shares --------------------------------------------------------------
    Bad("weight-zero", user_b("{demand: {cpu: 3, mem: 1}, weight: 0}"), "users.B.weight", POSITIVE),
    Bad("weight-negative", user_b("{demand: {cpu: 3, mem: 1}, weight: -2}"), "users.B.weight", POSITIVE),
    Bad("weight-string", user_b('{demand: {cpu: 3, mem: 1}, weight: "2"}'), "users.B.weight", NUMBER),
    Bad("weight-bool", user_b("{demand: {cpu: 3, mem: 1}, weight: true}"), "users.B.weight", NUMBER),
    Bad(
        "weight-map-unknown-resource",
        user_b("{demand: {cpu: 3, mem: 1}, weight: {cpu: 2, gpu: 1}}"),
        "users.B.weight.gpu",
        re.escape("unknown resource 'gpu'"),
    ),
    Bad("weight-map-zero", user_b("{demand: {cpu: 3, mem: 1}, weight: {cpu: 0}}"), "users.B.weight.cpu", POSITIVE),
    Bad(
        "weight-map-negative",
        user_b("{demand: {cpu: 3, mem: 1}, weight: {cpu: 2, mem: -1}}"),
        "users.B.weight.mem",
        POSITIVE,
    ),
    Bad("weight-map-string", user_b('{demand: {cpu: 3, mem: 1}, weight: {cpu: "2"}}'), "users.B.weight.cpu", NUMBER),
    Bad("max-tasks-negative", user_b("{demand: {cpu: 3, mem: 1}, max_tasks: -1}"), "users.B.max_tasks", NONNEG),
    Bad("max-tasks-string", user_b('{demand: {cpu: 3, mem: 1}, max_tasks: "3"}'), "users.B.max_tasks", NUMBER),
    Bad("shared-zero", user_b("{demand: {cpu: 3, mem: 1}, shared: 0}"), "users.B.shared", IN_0_1),
    Bad("shared-negative", user_b("{demand: {cpu: 3, mem: 1}, shared: -0.5}"), "users.B.shared", IN_0_1),
    Bad("shared-above-one", user_b("{demand: {cpu: 3, mem: 1}, shared: 1.5}"), "users.B.shared", IN_0_1),
    Bad("shared-nan", user_b("{demand: {cpu: 3, mem: 1}, shared: .nan}"), "users.B.shared", FINITE_NAN + "|" + IN_0_1),
    # -- the other commands read cases the same way -------------------------------------------
    Bad(
        "compare-demand-unknown-resource",
        user_b("{demand: {cpu: 3, gpu: 1}}"),
        "users.B.demand.gpu",
        r"unknown resource 'gpu'",
        argv=("compare", "{case}"),
    ),
    Bad(
        "model-capacity-nan",
        case_text(resources="{cpu: .nan, mem: 18}"),
        "resources.cpu",
        FINITE_NAN,
        argv=("model", "{case}"),
    ),
    # -- command-line problems ------------------------------------------------------------------
    Bad(
        "unknown-mechanism",
        GOOD,
        ("mechanism", "--mechanism", "-m"),
        r"unknown mechanism 'nope'",
        argv=("solve", "{case}", "-m", "nope"),
        kind="command",
    ),
    Bad(
        "unknown-mechanism-in-list",
        GOOD,
        ("mechanism", "--mechanism", "-m"),
        r"unknown mechanism 'nope'",
        argv=("solve", "{case}", "-m", "drf,nope"),
        kind="command",
    ),
    Bad(
        "unknown-method",
        GOOD,
        "--method",
        r"'nope'",
        argv=("solve", "{case}", "--method", "nope"),
        prefix=False,
        kind="command",
    ),
    Bad(
        "model-write-unknown-extension",
        GOOD,
        "--write",
        r"\.xyz",
        argv=("model", "{case}", "--write", "{dir}/out.xyz"),
        forbidden=("out.xyz", "out.xyz.part"),
        kind="command",
    ),
    Bad(
        "model-ceei-write-lp",
        GOOD,
        "--write",
        r"convex|not an lp",
        argv=("model", "{case}", "-m", "ceei", "--write", "{dir}/out.lp"),
        forbidden=("out.lp", "out.lp.part", "out.round1.lp"),
        kind="command",
    ),
]

BY_ID = {b.id: b for b in BAD}
assert len(BY_ID) == len(BAD), "duplicate case ids"

# the ones also run in a real process (a traceback or a warning there goes straight to stderr)
SUBPROCESS_IDS = [
    "missing-file",
    "not-yaml",
    "tag-object-apply",
    "tag-object-new",
    "capacity-nan",
    "demand-unknown-resource",
    "duplicate-user",
    "unknown-mechanism",
    "unknown-method",
    "model-write-unknown-extension",
    "model-ceei-write-lp",
]


# -- helpers --------------------------------------------------------------------------------------


def materialize(bad: Bad, directory: Path, relative: bool = False) -> tuple[list[str], tuple[str, ...]]:
    """Write the case file (and directories) into ``directory``; return ``argv`` and the fields.

    With ``relative`` the paths on the command line are relative to ``directory`` (for running
    there with ``cwd=directory``); commands embedded in YAML tags always use absolute paths.
    """
    case = directory / f"{bad.id}.yaml"
    for d in bad.mkdir:
        (directory / d).mkdir()
    if isinstance(bad.text, bytes):
        case.write_bytes(bad.text)
    elif bad.text is not None:
        case.write_text(bad.text.replace("{dir}", str(directory)), encoding="utf-8")

    def fill(s: str) -> str:
        if relative:
            return s.replace("{case}", case.name).replace("{dir}/", "")
        return s.replace("{case}", str(case)).replace("{dir}", str(directory))

    fields = bad.field if isinstance(bad.field, tuple) else (bad.field,)
    return [fill(a) for a in bad.argv], tuple(fill(f) for f in fields)


def listing(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*")}


def check_rejected(bad: Bad, fields, rc, out: str, err: str, directory: Path, before: set[str]) -> None:
    """The assertions every rejected input must pass (in-process or in a subprocess)."""
    where = f"[{bad.id}] exit={rc!r} stdout={out!r} stderr={err!r}"
    assert "Traceback" not in err + out, where
    assert rc == 2, where
    assert out == "", where
    lines = err.splitlines()
    assert len(lines) == 1, f"stderr must be exactly one line; {where}"
    assert err.endswith("\n") and lines[0].strip(), where
    line = lines[0]
    assert line.startswith("fairalloc: "), where
    if bad.prefix:
        assert any(line.startswith(f"fairalloc: {f}: ") for f in fields), (
            f"the line must start with 'fairalloc: <field>: ' for a field in {fields}; {where}"
        )
    else:
        assert any(f in line for f in fields), f"the line must name one of {fields}; {where}"
    assert re.search(bad.problem, line, re.IGNORECASE), f"the problem must match /{bad.problem}/; {where}"
    for name in bad.forbidden:
        assert not (directory / name).exists(), f"{name} was created; {where}"
    assert listing(directory) == before, f"files were created: {sorted(listing(directory) - before)}; {where}"


def run_in_process(argv: list[str], capsys) -> tuple[int, str, str]:
    """``main(argv)`` with captured stdout/stderr.

    Warnings are recorded and appended to stderr as a real process would print them (pytest
    would otherwise swallow them into its warnings summary).
    """
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rc = main(argv)
        except BaseException as exc:  # noqa: BLE001 - any escape is a failure with the same report
            captured = capsys.readouterr()
            pytest.fail(
                f"main({argv!r}) raised {type(exc).__name__}: {exc} (stdout={captured.out!r}, stderr={captured.err!r})"
            )
    captured = capsys.readouterr()
    err = captured.err + "".join(
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line) for w in caught
    )
    return rc, captured.out, err


# -- the CLI, in-process --------------------------------------------------------------------------


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
def test_cli_rejects_bad_input(bad, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # anything written relative to the cwd lands here
    argv, fields = materialize(bad, tmp_path)
    before = listing(tmp_path)
    rc, out, err = run_in_process(argv, capsys)
    check_rejected(bad, fields, rc, out, err, tmp_path, before)


# -- the CLI, in a real process ----------------------------------------------------------------


@pytest.mark.parametrize("bad", [BY_ID[i] for i in SUBPROCESS_IDS], ids=SUBPROCESS_IDS)
def test_cli_rejects_bad_input_in_a_real_process(bad, tmp_path):
    argv, fields = materialize(bad, tmp_path)
    before = listing(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONWARNINGS",)}
    proc = subprocess.run(
        [sys.executable, "-m", "fairalloc.cli", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    check_rejected(bad, fields, proc.returncode, proc.stdout, proc.stderr, tmp_path, before)


# -- what must be accepted ------------------------------------------------------------------------


def test_zero_capacity_resource_nobody_demands_is_accepted(tmp_path, capsys):
    case = tmp_path / "zero-unused.yaml"
    case.write_text(case_text(resources="{cpu: 9, mem: 18, gpu: 0}"), encoding="utf-8")
    rc, out, err = run_in_process(["solve", str(case)], capsys)
    assert (rc, err) == (0, ""), f"exit={rc} stderr={err!r}"
    assert "gpu" in out


def test_the_good_case_is_accepted(tmp_path, capsys):
    """The base text the bad cases are made from is itself fine (so each case has one fault)."""
    for text in (GOOD, case_text()):
        case = tmp_path / "good.yaml"
        case.write_text(text, encoding="utf-8")
        rc, out, err = run_in_process(["solve", str(case)], capsys)
        assert (rc, err) == (0, ""), f"exit={rc} stderr={err!r}"
        assert out


def test_the_yaml_gadgets_really_run_under_an_unsafe_loader(tmp_path):
    """Control: the tag cases would create their file if the loader built objects, so 'the file
    was not created' in the tests above is not vacuous."""
    for bad_id, name in (
        ("tag-object-apply", "pwned-apply"),
        ("tag-object-new", "pwned-new"),
        ("tag-nested-in-capacity", "pwned-nested"),
    ):
        yaml.load(BY_ID[bad_id].text.replace("{dir}", str(tmp_path)), Loader=yaml.UnsafeLoader)  # noqa: S506
        assert (tmp_path / name).exists(), bad_id


# -- the Python API: load_case / parse_case -------------------------------------------------------

FILE_CASES = [
    b for b in BAD if b.kind == "file" and b.argv == ("solve", "{case}") or b.id in ("missing-file", "directory")
]


@pytest.mark.parametrize("bad", FILE_CASES, ids=[b.id for b in FILE_CASES])
def test_load_case_raises_case_error(bad, tmp_path):
    """``load_case`` raises CaseError (one line), never a yaml / pydantic / numpy exception.

    (Whether the message names the right field is checked by the CLI test above, which prints
    exactly ``str(error)``.)
    """
    argv, _ = materialize(bad, tmp_path)
    before = listing(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning instead of an error is a failure too
        try:
            fairalloc.load_case(argv[-1])
        except CaseError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"load_case raised {type(exc).__module__}.{type(exc).__name__}: {exc}")
        else:
            pytest.fail("load_case accepted the bad input")
    assert not isinstance(error, (yaml.YAMLError, pydantic.ValidationError))
    message = str(error)
    assert message and "\n" not in message, repr(message)
    for name in bad.forbidden:
        assert not (tmp_path / name).exists(), name
    assert listing(tmp_path) == before


PARSE_CASES = [
    ("list", [{"resources": {"cpu": 9}}], "case", r"mapping"),
    ("string", "resources: {cpu: 9}", "case", r"mapping"),
    (
        "capacity-nan-float",
        {"resources": {"cpu": float("nan")}, "users": {"A": {"demand": {"cpu": 1}}}},
        "resources.cpu",
        FINITE_NAN,
    ),
    (
        "capacity-numpy-array",
        {"resources": np.array([9.0]), "users": {"A": {"demand": {"cpu": 1}}}},
        "resources",
        r"mapping",
    ),
    (
        "demand-object",
        {"resources": {"cpu": 9}, "users": {"A": {"demand": {"cpu": object()}}}},
        "users.A.demand.cpu",
        NUMBER,
    ),
    ("user-name-none", {"resources": {"cpu": 9}, "users": {None: {"demand": {"cpu": 1}}}}, "users", r"name"),
    ("user-name-tuple", {"resources": {"cpu": 9}, "users": {("a", "b"): {"demand": {"cpu": 1}}}}, "users", r"name"),
]


@pytest.mark.parametrize("data, field, problem", [c[1:] for c in PARSE_CASES], ids=[c[0] for c in PARSE_CASES])
def test_parse_case_raises_case_error(data, field, problem):
    with pytest.raises(CaseError) as info:
        fairalloc.parse_case(data)
    message = str(info.value)
    assert not isinstance(info.value, pydantic.ValidationError)
    assert "\n" not in message, message
    assert message.startswith(f"{field}:"), message
    assert re.search(problem, message, re.IGNORECASE), message


# -- the Python API: Instance.from_arrays --------------------------------------------------------

R = ["cpu", "mem"]
U = ["A", "B"]
D = [[1, 4], [3, 1]]

ARRAY_CASES = [
    # wrong shapes
    ("capacity-2d", dict(capacity=[[9, 18]], demand=D), "resources", r"1-dimensional|shape"),
    ("capacity-scalar", dict(capacity=9, demand=D), "resources", r"1-dimensional|shape"),
    ("demand-1d", dict(capacity=[9, 18], demand=[1, 4]), "demand", r"2-dimensional|shape"),
    ("demand-3d", dict(capacity=[9, 18], demand=[D]), "demand", r"2-dimensional|shape"),
    ("demand-columns", dict(capacity=[9, 18], demand=[[1, 4, 5]]), "demand", r"columns|shape"),
    ("demand-ragged", dict(capacity=[9, 18], demand=[[1, 4], [3]]), "demand", r"number|shape|inhomogeneous"),
    ("demand-string", dict(capacity=[9, 18], demand=[[1, "x"]]), "demand", NUMBER),
    ("no-resources", dict(capacity=[], demand=np.zeros((1, 0))), "resources", r"at least one"),
    ("no-users", dict(capacity=[9, 18], demand=np.zeros((0, 2))), "users", r"at least one"),
    ("resource-names-count", dict(capacity=[9, 18], demand=D, resources=["cpu"]), "resources", r"names"),
    ("user-names-count", dict(capacity=[9, 18], demand=D, users=["A"]), "users", r"names"),
    (
        "resource-names-duplicate",
        dict(capacity=[9, 18], demand=D, resources=["cpu", "cpu"]),
        "resources.cpu",
        r"duplicate",
    ),
    ("user-names-duplicate", dict(capacity=[9, 18], demand=D, users=["A", "A"]), "users.A", r"duplicate"),
    ("weights-shape", dict(capacity=[9, 18], demand=D, weights=[1, 2, 3]), "weight", r"shape"),
    ("weights-shape-2d", dict(capacity=[9, 18], demand=D, weights=[[1, 2, 3], [1, 1, 1]]), "weight", r"shape"),
    ("max-tasks-shape", dict(capacity=[9, 18], demand=D, max_tasks=[1]), "max_tasks", r"expected 2"),
    ("shared-shape", dict(capacity=[9, 18], demand=D, shared=[0.5]), "shared", r"expected 2"),
    # NaN
    ("capacity-nan", dict(capacity=[np.nan, 18], demand=D, resources=R), "resources.cpu", FINITE_NAN),
    (
        "demand-nan",
        dict(capacity=[9, 18], demand=[[1, 4], [3, np.nan]], resources=R, users=U),
        "users.B.demand.mem",
        FINITE_NAN,
    ),
    ("weights-nan", dict(capacity=[9, 18], demand=D, users=U, weights=[1, np.nan]), "users.B.weight", FINITE_NAN),
    (
        "weights-per-resource-nan",
        dict(capacity=[9, 18], demand=D, resources=R, users=U, weights=[[1, 1], [1, np.nan]]),
        "users.B.weight.mem",
        FINITE_NAN,
    ),
    (
        "max-tasks-nan",
        dict(capacity=[9, 18], demand=D, users=U, max_tasks=[1, np.nan]),
        "users.B.max_tasks",
        r"nan|number",
    ),
    # infinite
    ("capacity-inf", dict(capacity=[np.inf, 18], demand=D, resources=R), "resources.cpu", FINITE_INF),
    (
        "demand-inf",
        dict(capacity=[9, 18], demand=[[1, 4], [np.inf, 1]], resources=R, users=U),
        "users.B.demand.cpu",
        FINITE_INF,
    ),
    # negative / zero
    ("capacity-negative", dict(capacity=[-9, 18], demand=D, resources=R), "resources.cpu", NONNEG),
    (
        "demand-negative",
        dict(capacity=[9, 18], demand=[[1, 4], [-3, 1]], resources=R, users=U),
        "users.B.demand.cpu",
        NONNEG,
    ),
    ("weights-negative", dict(capacity=[9, 18], demand=D, users=U, weights=[1, -1]), "users.B.weight", POSITIVE),
    ("weights-zero", dict(capacity=[9, 18], demand=D, users=U, weights=[1, 0]), "users.B.weight", POSITIVE),
    ("max-tasks-negative", dict(capacity=[9, 18], demand=D, users=U, max_tasks=[1, -1]), "users.B.max_tasks", NONNEG),
    ("shared-above-one", dict(capacity=[9, 18], demand=D, users=U, shared=[0.5, 2]), "users.B.shared", IN_0_1),
    ("demand-all-zero", dict(capacity=[9, 18], demand=[[1, 4], [0, 0]], users=U), "users.B.demand", r"zero"),
    (
        "zero-capacity-demanded",
        dict(capacity=[9, 0], demand=[[1, 0], [3, 1]], resources=["cpu", "gpu"], users=U),
        ("users.B.demand.gpu", "resources.gpu"),
        r"zero capacity",
    ),
]


@pytest.mark.parametrize("kwargs, field, problem", [c[1:] for c in ARRAY_CASES], ids=[c[0] for c in ARRAY_CASES])
def test_from_arrays_raises_case_error_naming_the_field(kwargs, field, problem):
    kwargs = dict(kwargs)
    capacity, demand = kwargs.pop("capacity"), kwargs.pop("demand")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. numpy's VisibleDeprecationWarning for ragged input
        try:
            Instance.from_arrays(capacity, demand, **kwargs)
        except CaseError as exc:
            message = str(exc)
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"from_arrays raised {type(exc).__module__}.{type(exc).__name__}: {exc}")
        else:
            pytest.fail("from_arrays accepted the bad input")
    fields = field if isinstance(field, tuple) else (field,)
    assert "\n" not in message, message
    assert any(message.startswith(f"{f}:") for f in fields), f"{message!r} does not start with one of {fields}"
    assert re.search(problem, message, re.IGNORECASE), f"{message!r} does not match /{problem}/"


def test_from_arrays_accepts_a_zero_capacity_resource_nobody_demands():
    inst = Instance.from_arrays([9, 0], [[1, 0], [3, 0]], resources=["cpu", "gpu"])
    assert inst.capacity.tolist() == [9.0, 0.0]
