"""Hypothesis profiles: CI (CI=true) runs four times the examples of a developer's run."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=480, deadline=None, suppress_health_check=[HealthCheck.too_slow])
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")
