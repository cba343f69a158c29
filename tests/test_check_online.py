"""``fairalloc.testing.check_online``: the job-level online face of a mechanism checked on
generated cycles; a policy that breaks a rule is caught, naming the check."""

from __future__ import annotations

import pytest

import fairalloc
from fairalloc.engines.online import Admit, Preempt
from fairalloc.testing import MechanismCheckError, check_online


@pytest.mark.parametrize("name", ["drf", "mesos-drf", "asset"])
def test_built_in_online_faces_pass(name):
    report = check_online(name, max_examples=25)
    assert report.ran["online_decisions"] > 0 and not report.skipped


class _Broken:
    """A mechanism whose online form breaks one rule (``how``)."""

    def __init__(self, how: str):
        self.how, self.name = how, f"broken-{how}"
        self.inner = fairalloc.get("drf")

    def allocate(self, inst, method="auto"):
        return self.inner.allocate(inst, method)

    def online(self, settings):
        how = self.how

        class Policy:
            calls = [0]

            def wake(self, state):
                return state.now - 1 if how == "wake" else None

            def decide(self, state):
                if how == "greedy":  # admits every waiting job, fits or not
                    return [Admit(j) for j in state.pending]
                if how == "ghost":
                    return [Preempt("nobody", by="x")] if state.pending else []
                if how == "mutate" and state.pending:
                    state.pending.pop(next(iter(state.pending)))  # type: ignore[attr-defined]
                return []

        return Policy()


@pytest.mark.parametrize(
    ("how", "check"),
    [
        ("greedy", "online_decisions"),
        ("ghost", "online_decisions"),
        ("mutate", "online_state_untouched"),
        ("wake", "online_wake"),
    ],
)
def test_a_broken_policy_is_caught(monkeypatch, how, check):
    broken = _Broken(how)
    monkeypatch.setattr(fairalloc.core.registry, "get", lambda m: broken if m is broken else fairalloc.get(m))
    with pytest.raises(MechanismCheckError) as err:
        check_online(broken, max_examples=40)
    assert err.value.check == check, str(err.value)
