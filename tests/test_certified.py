"""No answer without a certificate: every allocation leaving the library is feasible, or an error.

* badly scaled instances (numbers over 1e-12 .. 1e12, zeros, weights over 1e-6 .. 1e6, bounds)
  for every registered mechanism and every method it has: a certified answer (re-checked here,
  independently) or a clean :class:`FairallocError`; never another exception, NaN or warning;
* the fuzz instance that gave silent wrong answers (memory at 10^8 % of capacity): program and
  fast path agree once the programs are solved on the scaled instance;
* a mechanism returning an over-capacity allocation (a test double) is refused with the
  constraint named;
* the dual Newton line search is bounded, and a NaN in it is an error at once.
"""

import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc import Allocation, FairallocError, Instance, SolverError, dual_newton
from fairalloc.core.registry import _REGISTRY
from fairalloc.core.tolerances import AGREEMENT
from fairalloc.testing import assert_same_tasks, close

#: a member of every family next to the plain mechanisms
FAMILY_MEMBERS = ["alpha-fair:2", "alpha-fair:0", "alpha-tasks:0.5", "alpha-tasks:inf", "fds:0.5:2"]
MECHANISMS = fairalloc.available(families=False) + FAMILY_MEMBERS

SCALED = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def magnitude(low, high):
    return st.floats(low, high).map(lambda e: float(10.0**e))


@st.composite
def badly_scaled(draw) -> Instance:
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    dense = draw(st.booleans())  # no zeros: the dynamic mechanisms run
    capacity = np.array([draw(magnitude(-12, 12)) for _ in range(m)])
    if m > 1 and not dense and draw(st.booleans()):
        capacity[draw(st.integers(0, m - 1))] = 0.0  # a resource nobody may demand
    demand = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            if capacity[j] > 0 and (dense or draw(st.integers(0, 3))):
                demand[i, j] = draw(magnitude(-12, 12))
        if not demand[i].any():
            j = int(np.flatnonzero(capacity > 0)[0])
            demand[i, j] = draw(magnitude(-12, 12))
    weights = np.array([draw(magnitude(-6, 6)) for _ in range(n)]) if draw(st.booleans()) else None
    bounds = None
    if draw(st.booleans()):
        bounds = np.array([draw(st.one_of(st.just(np.inf), st.just(0.0), magnitude(-3, 9))) for _ in range(n)])
    shared = None
    if draw(st.booleans()):
        q = np.array([draw(st.floats(0.05, 1)) for _ in range(n)])
        shared = q / q.sum()
    # the Python API may build what a case file would refuse: the library must stay clean there
    return Instance(capacity, demand, weights=weights, max_tasks=bounds, shared=shared, name="scaled", validate=False)


def independently_feasible(alloc: Allocation) -> None:
    inst = alloc.instance
    x = np.asarray(alloc.tasks, dtype=float)
    assert x.shape == (inst.n,)
    assert np.all(np.isfinite(x)), x
    assert np.all(x >= 0), x
    if alloc.amounts is not None:  # general bundles: finite, >= 0, and the tasks are their Leontief values
        assert np.all(np.isfinite(alloc.amounts)) and np.all(alloc.amounts >= 0)
    used = x @ inst.demand if alloc.amounts is None else alloc.amounts.sum(axis=0)
    # a policy's entitlement may promise beyond capacity (YARN's truncation does): no_overcommit says so
    assert alloc.entitlement or np.all(used <= inst.capacity * (1 + 1e-6)), (used, inst.capacity)
    assert np.all(x <= inst.bounds() * (1 + 1e-6)), (x, inst.bounds())
    if alloc.prices is not None:
        assert np.all(np.isfinite(alloc.prices))
    text = json.dumps(alloc.to_dict(exact=inst.n <= 4), allow_nan=False)  # no NaN or inf in the JSON
    assert text


def methods(mechanism) -> list[str]:
    mech = fairalloc.get(mechanism)
    return [m for m, has in (("fast", mech.has_fast), ("program", mech.has_program)) if has]


@pytest.mark.parametrize("mechanism", MECHANISMS)
@SCALED
@given(inst=badly_scaled())
def test_badly_scaled_instances_give_certified_answers_or_clean_errors(mechanism, inst):
    for method in methods(mechanism):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:  # a loop that never ends is caught by the suite's hang detection (pytest-timeout)
                alloc = fairalloc.solve(inst, mechanism, method)
            except FairallocError as exc:
                text = str(exc)
                assert text and "\n" not in text and "nan" not in text.split(":")[0]
                continue
            independently_feasible(alloc)


# -- the fuzz instance: memory at 100,000,000 % of capacity before ---------------------------------

FUZZ = Instance.from_arrays(
    [1e9, 1e-9], [[1e-9, 1e-18], [1e9, 1e-9], [1, 1e-12]], resources=["cpu", "mem"], users=["A", "B", "C"]
)
#: Clarabel's interior point pins CEEI's task counts to about 1e-6 here (the log objective is flat
#: to first order: a gap of 1e-10 leaves the tasks sqrt(1e-10) apart); its welfare agrees to AGREEMENT
CEEI_PROGRAM_TASKS_TOL = 1e-5


@pytest.mark.parametrize("mechanism", ["drf", "asset"])
def test_fuzz_program_equals_fast(mechanism):
    fast = fairalloc.solve(FUZZ, mechanism, "fast")
    program = fairalloc.solve(FUZZ, mechanism, "program")
    assert_same_tasks(fast, program, AGREEMENT)
    for alloc in (fast, program):
        independently_feasible(alloc)


def test_fuzz_ceei_program_reaches_the_optimum():
    fast = fairalloc.solve(FUZZ, "ceei", "fast")
    program = fairalloc.solve(FUZZ, "ceei", "program")
    assert abs(fast.info["nash_welfare"] - 24.33518424992422) < 1e-9
    assert close(program.info["nash_welfare"], fast.info["nash_welfare"], AGREEMENT)  # not 17.4
    assert np.allclose(program.tasks, fast.tasks, rtol=CEEI_PROGRAM_TASKS_TOL, atol=0)
    assert np.allclose(program.prices, fast.prices, rtol=CEEI_PROGRAM_TASKS_TOL, atol=1e-9)
    for alloc in (fast, program):
        independently_feasible(alloc)


@pytest.mark.parametrize("method", ["fast", "program"])
def test_fuzz_utilitarian_within_capacity(method):
    alloc = fairalloc.solve(FUZZ, "utilitarian", method)
    independently_feasible(alloc)
    assert close(alloc.info["welfare"], 1.0, AGREEMENT)  # A alone fills memory: share 1
    assert alloc.utilization.max() <= 1 + 1e-9


# -- a mechanism that breaks a constraint is refused ------------------------------------------------


class _OverCapacity(fairalloc.Mechanism):
    summary = "test double: five times the memory there is"

    def fast(self, instance):
        tasks = np.array([5.0 / instance.demand[0, 1], 0.0])
        return Allocation(instance, tasks, self.name, "fast", "test double")


class _OwnAllocate(fairalloc.Mechanism):
    """A plug-in replacing allocate itself is certified all the same."""

    summary = "test double: NaN tasks from its own allocate"

    def allocate(self, instance, method="auto"):
        return Allocation(instance, np.full(instance.n, np.nan), self.name, "fast", "test double")


@pytest.fixture
def doubles():
    fairalloc.register("test-over-capacity", replace=True)(_OverCapacity)
    fairalloc.register("test-own-allocate", replace=True)(_OwnAllocate)
    yield
    for name in ("test-over-capacity", "test-own-allocate"):
        _REGISTRY.pop(name, None)


SMALL = Instance.from_arrays([9, 1], [[1, 1], [3, 0.5]], resources=["cpu", "mem"], users=["A", "B"])


def test_over_capacity_allocation_is_refused(doubles):
    with pytest.raises(SolverError) as info:
        fairalloc.solve(SMALL, "test-over-capacity")
    assert str(info.value) == (
        "test-over-capacity (fast, test double): resource mem used 5 of capacity 1 (500%); the answer is not trusted"
    )


def test_own_allocate_is_certified(doubles):
    with pytest.raises(SolverError, match=r"test-own-allocate \(fast, test double\): user A has nan tasks"):
        fairalloc.solve(SMALL, "test-own-allocate")


def test_noise_within_tolerance_is_clipped():
    from fairalloc.core.certificate import certify

    alloc = Allocation(SMALL, np.array([-1e-15, 2.0]), "x", "fast", "test")
    assert certify(alloc).tasks.tolist() == [0.0, 2.0]
    with pytest.raises(SolverError, match="user A has -0.1 tasks"):
        certify(Allocation(SMALL, np.array([-0.1, 2.0]), "x", "fast", "test"))
    bounded = Instance.from_arrays([9, 1], [[1, 1], [3, 0.5]], max_tasks=[1, np.inf])
    with pytest.raises(SolverError, match="above her max_tasks 1"):
        certify(Allocation(bounded, np.array([1.5, 0.0]), "x", "fast", "test"))


# -- the dual Newton loops are bounded --------------------------------------------------------------


def test_line_search_nan_is_an_error_at_once(monkeypatch):
    monkeypatch.setattr(dual_newton._Dual, "change", lambda self, s, x, dp: (np.nan, np.nan, s + self.D @ dp))
    with pytest.raises(SolverError, match="not a finite number"):  # at once: not after the iteration bound
        dual_newton.alpha_fair_dual([[1, 4], [3, 1]], [9, 18], [1, 1], [1, 1], [np.inf, np.inf], 2.0)


def test_line_search_is_bounded(monkeypatch):
    # the dual never falls and never settles in rounding: the search halves until its bound
    monkeypatch.setattr(dual_newton._Dual, "change", lambda self, s, x, dp: (1.0, 0.0, s + self.D @ dp))
    monkeypatch.setattr(dual_newton, "LINE_SEARCH_STEPS", 5)
    with pytest.raises(SolverError, match="found no step in 5 halvings"):
        dual_newton.alpha_fair_dual([[1, 4], [3, 1]], [9, 18], [1, 1], [1, 1], [np.inf, np.inf], 2.0)


def test_extreme_instances_end_quickly():
    """Values near 1e308 and 1e-320 (beyond what a case file accepts) once looped for ever."""
    for R, D in (([1e-320, 1.0], [[1e-320, 1.0], [1e-320, 0.5]]), ([1e308, 1.0], [[1e308, 1.0], [1.0, 1e-300]])):
        inst = Instance(R, D, validate=False)
        for method in ("fast", "program"):
            with warnings.catch_warnings():  # they once looped for ever: the hang detection would fire
                warnings.simplefilter("error")
                try:
                    independently_feasible(fairalloc.solve(inst, "ceei", method))
                except FairallocError:
                    pass


def test_hdrf_tiny_demand_refused_quickly():
    inst = Instance.from_arrays([1], [[1e-8]], users=["A"], resources=["cpu"])
    with pytest.raises(FairallocError, match=r"launch limit, fairalloc.core.limits.MAX_HDRF_LAUNCHES"):
        fairalloc.solve(inst, "hdrf")


# -- wide but accepted magnitudes: an answer, not just a clean error ------------------------------


def wide_instances(count: int = 12, weighted: bool = True) -> list[Instance]:
    """Capacities over 12 orders of magnitude, per-task shares over 4, weights over 4: within what
    a case file accepts, so every mechanism must answer (the hypothesis test above also accepts a
    clean error, which alone could pass vacuously)."""
    rng = np.random.default_rng(7)
    out = []
    for _ in range(count):
        n, m = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        capacity = 10.0 ** rng.uniform(-6, 6, m)
        demand = 10.0 ** rng.uniform(-4, 0, (n, m)) * capacity
        q = rng.uniform(0.1, 1, n)
        out.append(
            Instance(capacity, demand, weights=10.0 ** rng.uniform(-2, 2, n) if weighted else None, shared=q / q.sum())
        )
    return out


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_wide_accepted_instances_are_answered(mechanism):
    weighted = not mechanism.startswith("fds")  # FDS is defined on unweighted shares
    for inst in wide_instances(weighted=weighted):
        answers = {method: fairalloc.solve(inst, mechanism, method) for method in methods(mechanism)}
        for alloc in answers.values():
            independently_feasible(alloc)
        if mechanism in ("drf", "asset") and len(answers) == 2:
            assert_same_tasks(answers["fast"], answers["program"], AGREEMENT)


def test_exact_form_of_a_nan_allocation_is_none_not_a_crash():
    """`solve --exact` on a NaN result crashed (issue 13). A case can no longer produce one (1e-320
    is refused when loaded, and allocate certifies), but an Allocation built by hand still can."""
    inst = Instance.from_arrays([1.0, 1.0], [[1.0, 1.0], [1.0, 0.5]])
    alloc = Allocation(inst, np.array([np.nan, 1.0]), "drf", "fast")
    assert alloc.exact is None
    assert "no exact rational form" in alloc.table(exact=True)


TASK_VALUES = st.one_of(
    st.floats(0, 50),
    st.sampled_from([0.0, -0.0, -1e-12, -1.0, np.nan, np.inf, -np.inf, 1e300, 1e-320]),
)


@st.composite
def allocations(draw):
    """Small allocations near and beyond every edge the certificate tests: capacity (exactly at,
    within and past the tolerance), bounds, zero capacities, signs, non-finite numbers."""
    n, m = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    D = rng.integers(0, 5, (n, m)).astype(float)
    D[D.sum(axis=1) == 0, 0] = 1.0
    R = rng.integers(1, 40, m).astype(float)
    if draw(st.booleans()) and m > 1:  # a resource of zero capacity nobody demands
        R[-1] = 0.0
        D[:, -1] = 0.0
        D[D.sum(axis=1) == 0, 0] = 1.0
    T = rng.choice([np.inf, 1.0, 3.0, 7.5], n) if draw(st.booleans()) else None
    inst = Instance(R, D, max_tasks=T)
    x = np.array([draw(TASK_VALUES) for _ in range(n)])
    if draw(st.booleans()):  # the filling's answer, then nudged around the capacity's edge
        x = fairalloc.solve(inst, "drf").tasks * draw(st.sampled_from([1.0, 1 + 1e-8, 1 + 1e-7, 1 + 2e-7, 1.1]))
    dtype = draw(st.sampled_from([float, np.float32, int]))
    with np.errstate(all="ignore"):
        tasks = x.astype(dtype) if dtype is not int else np.nan_to_num(x, posinf=9, neginf=-9).astype(int)
    return Allocation(inst, tasks, "test", "fast", "hand")


@settings(max_examples=400, deadline=None, derandomize=True)
@given(allocations())
def test_the_plain_float_certificate_decides_as_the_whole_one(allocation):
    """A small allocation is first certified in plain floats (the verifier's path, issue 18); the
    whole numpy check, asked directly, gives the same answer: the same object passed as it is, a
    copy with the same clipped tasks, or the same error."""
    from fairalloc.core import certificate

    def outcome(plain):
        original = certificate._passes_plainly
        certificate._passes_plainly = original if plain else (lambda allocation: False)
        try:
            out = certificate.certify(allocation)
        except SolverError as refused:
            return "refused", str(refused)
        finally:
            certificate._passes_plainly = original
        return out is allocation, np.asarray(out.tasks).tolist()

    with np.errstate(all="ignore"):
        assert outcome(True) == outcome(False)
