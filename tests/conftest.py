"""Hypothesis profiles.

``dev`` (the default): Hypothesis' number of examples, new ones on every run (after the failing
ones of earlier runs, kept in .hypothesis/).  ``ci`` (``CI=true``): four times as many, and
derandomized: every run of the same code draws the same examples, so a CI result is
reproducible (no example database is read or written).  Neither has a deadline or the too_slow
health check: timings on a loaded 2-core machine say nothing about correctness.
"""

import os

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
