"""Programs you can read before solving: ``fairalloc.program`` returns built models named after the
users and resources, and solving them is a separate step that gives ``solve(..., method="program")``'s
allocation.  :func:`fairalloc.core.backends.lp_name` turns any name into a legal, unique LP name.
"""

import re

import cvxpy as cp
import pulp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc import Instance
from fairalloc.core import registry
from fairalloc.core.backends import _LP_KEYWORDS, lp_name, lp_names
from fairalloc.testing import close

#: Users whose names an LP file cannot hold as written (a space, a '-', a leading digit, Greek).
USERS = ["user 1", "a-b", "1abc", "α"]
RESOURCES = ["cpu (cores)", "mem"]
DEMAND = [[1, 4], [3, 1], [2, 3], [1, 1]]
INSTANCE = Instance.from_arrays([9, 18], DEMAND, users=USERS, resources=RESOURCES)
#: DMFA-SRQ needs shared quantities; DDRF ignores them
SHARED = Instance.from_arrays([9, 18], DEMAND, users=USERS, resources=RESOURCES, shared=[0.4, 0.3, 0.2, 0.1])
LP_USER_NAMES = ["tasks_user_1", "tasks_a_b", "tasks_1abc", "tasks_u3b1"]

#: Every registered mechanism with a program; families at their ends and in between.
MEMBERS = {
    "alpha-fair": ["alpha-fair:0", "alpha-fair:1", "alpha-fair:2", "alpha-fair:inf"],
    "alpha-tasks": ["alpha-tasks:0.5", "alpha-tasks:inf"],
    "fds": ["fds:0.5:2"],
}
#: cvxpy programs are solved to Clarabel's tolerances; solve() works on a rescaled instance
CONVEX_TOLERANCE = 1e-4
LEGAL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def with_programs() -> list[str]:
    names = []
    for name in registry.available():
        mech = registry._REGISTRY[name]
        if mech.has_program:
            names += MEMBERS.get(name, [name])
    return names


def instance_for(name: str) -> Instance:
    return SHARED if registry.get(name).kind == "dynamic" else INSTANCE


def test_every_mechanism_with_a_program_is_covered():
    names = with_programs()
    assert {"drf", "asset", "ceei", "utilitarian", "dmfa-srq", "ddrf"} <= set(names)
    assert all(name in names for members in MEMBERS.values() for name in members)


@pytest.mark.parametrize("name", with_programs())
def test_the_model_is_built_before_solving(name):
    program = fairalloc.program(instance_for(name), name)
    assert program.allocation is None and program.models
    for _, model in program.models:
        if isinstance(model, pulp.LpProblem):
            assert model.status == pulp.LpStatusNotSolved
            variables = [v.name for v in model.variables()]
            constraints = [c.name for c in model.constraints()]
            assert LP_USER_NAMES[0] in {v.replace("level_", "tasks_") for v in variables}
            assert model.objective is not None and constraints
            # named after a resource (yarn-capacity's only resource is memory: mem here)
            assert any(c.startswith(("capacity_cpu", "pool_cpu", "capacity_mem", "pool_mem")) for c in constraints)
            assert all(legal(v) for v in variables + constraints)
        else:
            assert isinstance(model, cp.Problem) and model.status is None and model.constraints
            assert [v.name() for v in model.variables()] == ["tasks"]
    if program.is_convex:
        assert all(user in program.description for user in USERS)
    else:
        assert LP_USER_NAMES[0] in program.text().replace("level_", "tasks_")


@pytest.mark.parametrize("name", with_programs())
def test_solving_it_gives_the_allocation_of_solve(name):
    inst = instance_for(name)
    program = fairalloc.program(inst, name)
    built = len(program.models)
    tasks = program.solve().tasks
    expected = fairalloc.solve(inst, name, method="program").tasks
    assert close(tasks, expected, CONVEX_TOLERANCE if program.is_convex else 1e-7), (tasks, expected)
    assert program.solve().tasks is tasks  # solved once
    assert len(program.models) >= built and not program.pending


def test_every_lp_names_every_user_and_resource():
    models = dict(fairalloc.program(INSTANCE, "utilitarian").models)
    lp = models["LP"]
    assert sorted(v.name for v in lp.variables()) == sorted(LP_USER_NAMES)
    assert [c.name for c in lp.constraints()] == ["capacity_cpu__cores_", "capacity_mem"]


def test_a_sequence_builds_its_later_rounds_as_it_is_solved(tmp_path):
    # DRF on this case: users 1 and 3 freeze in round 1 (r1 saturates), user 2 in round 2
    case = fairalloc.load_case("zero-demands-population-monotonicity")
    program = fairalloc.program(case, "drf")
    assert [title for title, _ in program.models] == ["round 1"] and program.pending
    assert "later rounds are built" in repr(program) and "later rounds are built" in program.text()
    assert [p.name for p in program.write(tmp_path / "early.lp")] == ["early.round1.lp"]
    first = (tmp_path / "early.round1.lp").read_text()
    assert "round1_level" in first and "capacity_r1" in first and "share_1" in first
    program.solve()
    assert [title for title, _ in program.models] == ["round 1", "round 2"] and not program.pending
    assert "solved" in repr(program) and "later rounds" not in program.text()
    assert [p.name for p in program.write(tmp_path / "drf.lp")] == ["drf.round1.lp", "drf.round2.lp"]
    second = (tmp_path / "drf.round2.lp").read_text()
    assert "round2_level" in second and "share_2" in second and "share_1" not in second


def test_the_exported_lp_reads_back_with_its_names(tmp_path):
    """The names are legal for an LP reader: HiGHS reads the file back with the same names."""
    highspy = pytest.importorskip("highspy")
    from fairalloc.core.backends import _quiet_highs_banner

    _quiet_highs_banner()
    program = fairalloc.program(INSTANCE, "asset")
    (path,) = program.write(tmp_path / "asset.lp")
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    assert highs.readModel(str(path)) == highspy.HighsStatus.kOk
    lp = highs.getLp()
    assert sorted(lp.col_names_) == sorted(["round1_level", *LP_USER_NAMES])
    assert "capacity_cpu__cores_" in lp.row_names_ and "share_u3b1" in lp.row_names_


def test_write_names_the_api_parameter(tmp_path):
    program = fairalloc.program(INSTANCE, "ceei")
    with pytest.raises(fairalloc.FairallocError, match=r"^path: ceei is a convex program"):
        program.write(tmp_path / "c.lp")
    with pytest.raises(fairalloc.FairallocError, match=r"^path: unknown format '\.xyz'"):
        program.write(tmp_path / "c.xyz")
    assert not list(tmp_path.iterdir())


# -- lp_name ------------------------------------------------------------------------------------


def legal(name: str) -> bool:
    """What an LP reader takes: no character pulp rewrites, no leading digit, no keyword, no
    ``e1`` (a number), at most 255 characters."""
    return (
        bool(LEGAL.fullmatch(name))
        and len(name) <= 255
        and name.lower() not in _LP_KEYWORDS
        and not re.match(r"[eE][0-9eE]", name)
        and pulp.LpProblem().add_variable(name).name == name
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("tasks_user 1", "tasks_user_1"),
        ("a-b", "a_b"),
        ("1abc", "_1abc"),
        ("", "_"),
        ("+-*/", "____"),
        ("inf", "_inf"),
        ("e1", "_e1"),
        ("é", "e"),
        ("α", "u3b1"),
        ("x[0]<=1", "x_0___1"),
        ("a_b", "a_b"),
    ],
)
def test_lp_name_examples(text, expected):
    assert lp_name(text) == expected and legal(expected)


def test_lp_name_disambiguates_collisions():
    taken: set[str] = set()
    assert [lp_name(t, taken) for t in ("a_b", "a b", "a-b", "a b")] == ["a_b", "a_b_2", "a_b_3", "a_b_4"]
    # a name legal as written keeps itself whatever its place
    assert lp_names("tasks", ["a b", "a_b", "a-b"]) == ["tasks_a_b_2", "tasks_a_b", "tasks_a_b_3"]
    assert lp_names("tasks", ["α", "β", ""]) == ["tasks_u3b1", "tasks_u3b2", "tasks_"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_lp_name_is_legal_and_stable(text):
    name = lp_name(text)
    assert legal(name)
    assert lp_name(name) == name  # a legal name is its own image
    if legal(text) and len(text) <= 200:
        assert name == text


HOSTILE = st.sampled_from(["a b", "a_b", "a-b", "1abc", "", " ", "α", "é", "e", "inf", "x" * 300, "x" * 301])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(), HOSTILE), unique=True, max_size=12))
def test_lp_names_are_legal_and_unique(texts):
    names = lp_names("tasks", texts)
    assert len(set(names)) == len(names) == len(texts)
    assert all(legal(name) for name in names)
    taken: set[str] = set()
    one_by_one = [lp_name(t, taken) for t in texts]
    assert len(set(one_by_one)) == len(texts) and taken == set(one_by_one)
    for text, name in zip(texts, names):  # legal as written: kept
        if legal(f"tasks_{text}") and len(text) < 190:
            assert name == f"tasks_{text}"
