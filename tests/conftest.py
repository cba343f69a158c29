"""Hypothesis profiles.

``dev`` (the default): Hypothesis' number of examples, new ones on every run (after the failing
ones of earlier runs, kept in .hypothesis/).  ``ci`` (``CI=true``): four times as many, and
derandomized: every run of the same code draws the same examples, so a CI result is
reproducible (no example database is read or written).  Neither has a deadline or the too_slow
health check: timings on a loaded 2-core machine say nothing about correctness.
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import fairalloc

settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", settings.get_profile("dev"), max_examples=480, derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "dev")


def pytest_terminal_summary(terminalreporter, config):
    """The seed of the random test order (pytest-randomly), also under -q, which hides the header:
    ``--randomly-seed=N`` reruns the same order (``-p no:randomly``: the file order)."""
    seed = getattr(config.option, "randomly_seed", None)
    if seed is not None and config.pluginmanager.hasplugin("randomly"):
        terminalreporter.write_line(f"test order: --randomly-seed={seed}")


@pytest.fixture(scope="session")
def section_4_1() -> fairalloc.Instance:
    """The DRF paper's running example (Ghodsi et al., NSDI 2011, section 4.1): 9 CPUs and 18 GB,
    user A's tasks need <1 CPU, 4 GB>, user B's <3 CPUs, 1 GB>; DRF gives A 3 tasks and B 2.
    Instances are immutable, so one per session serves every test."""
    return fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], resources=["cpu", "mem"], users=["A", "B"])


def _spec(case) -> dict:
    """What a case file says, as the schema reads it (numbers as numbers, names as text)."""
    from fairalloc.io.cases import CaseSpec

    out = CaseSpec.model_validate(case.raw).model_dump()
    out.pop("name")  # a file without a name takes its file's; the page writes that name out
    return out


def assert_same_case(before, after) -> None:
    assert after.name == before.name
    assert _spec(after) == _spec(before)
    # orders matter (arrivals, hierarchy listing, columns) and dict equality ignores them
    for key in ("resources", "users", "groups"):
        assert list(_spec(after)[key]) == list(_spec(before)[key]), key
    a, b = before.instance, after.instance
    assert (a.users, a.resources) == (b.users, b.resources)
    for field in ("capacity", "demand", "weights", "max_tasks", "shared"):
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None) == (y is None), field
        if x is not None:
            np.testing.assert_array_equal(x, y, err_msg=field)  # exactly: the numbers are the file's
    assert a.to_dict() == b.to_dict() and a.groups == b.groups
    assert list(after.variants) == list(before.variants)
    for name, variant in before.variants.items():
        assert after.variants[name].to_dict() == variant.to_dict()
    assert (after.policy, after.units, after.user_expectation, after.settings) == (
        before.policy,
        before.units,
        before.user_expectation,
        before.settings,
    )


@pytest.fixture(scope="session")
def same_case():
    """``same_case(before, after)`` asserts two loaded cases are the same case: what their files
    say (as the schema reads it, in order), their instances to the last bit, their variants,
    policy, units and expectations (the explorer's round trip must change nothing)."""
    return assert_same_case
