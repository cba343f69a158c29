"""``fairalloc.testing.check_mechanism``: the conformance battery passes for every built-in
mechanism, and fails, naming the check and showing the instance, for deliberately broken ones.

The broken mechanisms are defined here and never registered: the battery takes a
:class:`fairalloc.Mechanism` object as well as a name.
"""

import numpy as np
import pytest

import fairalloc
from fairalloc import Instance
from fairalloc.core.allocation import Allocation
from fairalloc.core.errors import CaseError
from fairalloc.engines.offers import OnlineMechanism, Scheduler
from fairalloc.testing import CHECKS, MechanismCheckError, check_mechanism, check_task_offers

#: interior-point programs (cvxpy) cost ~50 ms a solve: fewer examples keep the file fast
SLOW = {"ceei", "alpha-fair:2", "fds:0.5:3"}
#: members of the families the README uses
FAMILY_MEMBERS = ["alpha-fair:2", "alpha-fair:inf", "fds:0.5:3"]


@pytest.mark.parametrize("name", fairalloc.available(families=False) + FAMILY_MEMBERS)
def test_every_built_in_mechanism_passes(name):
    mech = fairalloc.get(name)
    report = check_mechanism(name, max_examples=4 if name in SLOW else 6)
    assert set(report.ran) | set(report.skipped) == set(CHECKS)
    assert not set(report.ran) & set(report.skipped)
    if mech.kind == "online":  # a scheduler over time: its task offers are all it has
        assert set(report.ran) == {"task_offers"} and report.ran["task_offers"] > 0
        return
    # every static face has task offers too (its own, or the generic adapter)
    assert report.ran.get("task_offers", 0) > 0
    assert report.ran["feasibility"] > 0 and report.ran["errors"] > 0  # not vacuous
    compared = mech.has_fast and mech.has_program and not getattr(mech, "program_differs", "")
    assert ("agreement" in report.ran) == compared
    assert ("scale_invariance" in report.ran) == (mech.scaling != "none")
    assert ("bounds" in report.ran) == (mech.kind == "static")
    assert report.mechanism == mech.name and str(report).startswith(mech.name)


def test_dynamic_mechanisms_say_what_they_skip():
    report = check_mechanism("ddrf", max_examples=3)
    assert "max_tasks" in report.skipped["bounds"]
    assert "scaling = 'none'" in report.skipped["scale_invariance"]
    assert "skipped  bounds" in str(report)


def test_only_the_methods_asked_for():
    report = check_mechanism(fairalloc.get("drf"), methods=["fast"], max_examples=3)
    assert report.methods == ("fast",)
    assert "needs both a fast path and a program" in report.skipped["agreement"]


# -- broken mechanisms -------------------------------------------------------------------------


def _drf(instance, bounded=True):
    """DRF's task counts (on the instance without its bounds when ``bounded`` is False)."""
    if not bounded:
        instance = Instance(instance.capacity, instance.demand, weights=instance.weights)
    return fairalloc.get("drf").fast(instance).tasks


class _Broken(fairalloc.Mechanism):
    name = "broken"

    def answer(self, instance, tasks):
        return Allocation(instance, np.asarray(tasks, dtype=float), self.name, "fast", "test")


class OverCapacity(_Broken):
    """Twice DRF, within every bound: over capacity wherever DRF saturates a resource."""

    def fast(self, instance):
        return self.answer(instance, np.minimum(2 * _drf(instance), instance.bounds()))


class Noisy(_Broken):
    """DRF scaled down by random noise drawn anew at every call: feasible, never the same twice."""

    rng = np.random.default_rng(0)

    def fast(self, instance):
        return self.answer(instance, _drf(instance) * self.rng.uniform(0.5, 0.9))


class IgnoresBounds(_Broken):
    """DRF computed as if nobody had ``max_tasks``."""

    def fast(self, instance):
        return self.answer(instance, _drf(instance, bounded=False))


class FastIsAsset(_Broken):
    """A DRF program with Asset Fairness as its "fast path"."""

    def program(self, instance):
        return fairalloc.get("drf").program(instance)

    def fast(self, instance):
        return self.answer(instance, fairalloc.get("asset").fast(instance).tasks)


class EqualTasks(_Broken):
    """Equal task counts, declared invariant to every user's task unit (they are not)."""

    scaling = "users"

    def fast(self, instance):
        t = np.min(
            instance.capacity / instance.demand.sum(axis=0), where=instance.demand.sum(axis=0) > 0, initial=np.inf
        )
        return self.answer(instance, np.minimum(t, instance.bounds()))


class IgnoresMethod(_Broken):
    """A plug-in that replaces ``allocate`` and never looks at ``method``."""

    def allocate(self, instance, method="auto"):
        return self.answer(instance, _drf(instance))


class RefusesEverything(_Broken):
    def fast(self, instance):
        raise CaseError("users: this mechanism takes no instance at all")


@pytest.mark.parametrize(
    "broken, check",
    [
        (OverCapacity, "feasibility"),
        (Noisy, "determinism"),
        (IgnoresBounds, "bounds"),
        (FastIsAsset, "agreement"),
        (EqualTasks, "scale_invariance"),
        (IgnoresMethod, "errors"),
        (RefusesEverything, "coverage"),
    ],
)
def test_a_broken_mechanism_fails_the_check_it_breaks(broken, check):
    with pytest.raises(MechanismCheckError) as failure:
        check_mechanism(broken(), max_examples=8)
    assert failure.value.check == check
    message = str(failure.value)
    assert message.startswith(f"check '{check}' failed")
    if check != "coverage":  # no instance broke it: none was answered
        assert failure.value.instance is not None
        assert "users=" in message and "capacity=" in message and "demand=" in message


def test_the_failing_instance_is_shrunk():
    """Hypothesis shrinks the instance that breaks the bounds (up to 5 users and 4 resources) to
    two users of one resource, one of them bounded."""
    with pytest.raises(MechanismCheckError) as failure:
        check_mechanism(IgnoresBounds(), max_examples=8)
    inst = failure.value.instance
    assert inst.n <= 2 and inst.m == 1 and np.isfinite(inst.max_tasks).any()
    assert "above her max_tasks" in str(failure.value)


def test_it_is_an_assertion_error_and_reproducible():
    messages = []
    for _ in range(2):
        with pytest.raises(AssertionError) as failure:
            check_mechanism(OverCapacity(), max_examples=6)
        messages.append(str(failure.value))
    assert messages[0] == messages[1]


def test_an_unknown_method_to_check_is_the_library_error():
    with pytest.raises(fairalloc.FairallocError, match="methods: unknown method 'fsat'; did you mean 'fast'"):
        check_mechanism("drf", methods=["fsat"])


@pytest.mark.parametrize("broken, check", [(OverCapacity, "feasibility"), (IgnoresBounds, "bounds")])
def test_feasibility_and_bounds_do_not_rely_on_the_certificate(monkeypatch, broken, check):
    """With the certificate switched off, the battery's own checks still catch the violation."""
    from fairalloc.core import registry

    monkeypatch.setattr(registry, "certify", lambda allocation, name=None: allocation)
    assert broken().allocate(Instance.from_arrays([1], [[1]], max_tasks=[0])) is not None  # no refusal now
    with pytest.raises(MechanismCheckError) as failure:
        check_mechanism(broken(), max_examples=8)
    assert failure.value.check == check


# -- broken task-offer faces ---------------------------------------------------------------------


class _Greedy(Scheduler):
    """Launches the earliest runnable job's next task on whatever node it is offered: fit unchecked."""

    name = "overfills"

    def pick(self, state, node):
        return state.first_job()


class _Lazy(Scheduler):
    """Declines every node."""

    name = "idles"

    def pick(self, state, node):
        return None


class Overfills(OnlineMechanism):
    name = "overfills"

    def offers(self):
        return _Greedy()


class Idles(OnlineMechanism):
    name = "idles"

    def offers(self):
        return _Lazy()


@pytest.mark.parametrize(
    "broken, found",
    [
        (
            Overfills,
            r"overfills launched task \d+ of job-\d+ on node \d of offers-0, where it does not fit \(free: cpu ",
        ),
        (Idles, r"idles left node 0 of offers-0 empty at t=\d+ while job-\d+ waited"),
    ],
)
def test_a_broken_face_fails_the_task_offers_check(broken, found):
    """The check of the task-offer face stands alone (a plug-in author sees it by name), and is the only
    one an online mechanism runs."""
    with pytest.raises(MechanismCheckError, match=found) as info:
        check_task_offers(broken())
    assert info.value.check == "task_offers"
    with pytest.raises(MechanismCheckError, match=found):
        check_mechanism(broken())
