"""Plug-ins: mechanisms from entry points of the group ``fairalloc.mechanisms``.

A broken entry point is a :class:`~fairalloc.core.errors.FairallocWarning` naming it; the built-ins and
every other plug-in (before or after it) still load.  The tests replace ``entry_points`` in
:mod:`fairalloc.core.registry` by fakes and leave the registry as they found it (they run in any order).
"""

import numpy as np
import pytest

import fairalloc
from fairalloc import registry
from fairalloc.core.allocation import Allocation
from fairalloc.core.errors import FairallocWarning
from fairalloc.testing import run_cli


class FakeEntryPoint:
    """What ``importlib.metadata.entry_points`` yields: ``name``, ``value`` and ``load()``."""

    def __init__(self, name, value, load):
        self.name, self.value, self._load = name, value, load
        self.group = "fairalloc.mechanisms"
        self.loads = 0

    def load(self):
        self.loads += 1
        return self._load()


class EqualSplit(fairalloc.Mechanism):
    summary = "test plug-in: every user gets one task"

    def fast(self, instance):
        return Allocation(instance, np.ones(instance.n), self.name, "fast")


def missing_module():
    raise ModuleNotFoundError("No module named 'no_such_plugin'")


@pytest.fixture
def fake_plugins(monkeypatch):
    """Install fake entry points; afterwards restore the registry and its loaded flag exactly."""
    for name in registry._builtins():  # every built-in registered (their modules load on demand): in the snapshot
        registry._load_builtin(name)
    saved = dict(registry._REGISTRY)
    loaded = registry._entry_points_loaded
    calls = []

    def install(*eps):
        def fake_entry_points(**selection):
            calls.append(selection)
            return [ep for ep in eps if selection.get("group") in (None, ep.group)]

        monkeypatch.setattr(registry, "entry_points", fake_entry_points)
        monkeypatch.setattr(registry, "_entry_points_loaded", False)
        return calls

    yield install
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
    registry._entry_points_loaded = loaded


def test_a_broken_entry_point_warns_and_the_others_load(fake_plugins):
    before = FakeEntryPoint("plugin-before", "good_pkg.mod:EqualSplit", lambda: EqualSplit)
    broken = FakeEntryPoint("plugin-broken", "no_such_plugin.mod:Thing", missing_module)
    after = FakeEntryPoint("plugin-after", "other_pkg.mod:EqualSplit", lambda: EqualSplit)
    calls = fake_plugins(before, broken, after)
    with pytest.warns(FairallocWarning) as record:
        drf = fairalloc.get("drf")  # the first look-up loads the plug-ins
    assert calls == [{"group": "fairalloc.mechanisms"}]
    assert len(record) == 1
    message = str(record[0].message)
    assert "plugin-broken" in message and "no_such_plugin.mod:Thing" in message
    assert "ModuleNotFoundError" in message and "No module named 'no_such_plugin'" in message
    inst = fairalloc.Instance.from_arrays([9, 18], [[1, 4], [3, 1]], users=["A", "B"])
    assert fairalloc.solve(inst, drf).tasks.tolist() == [3, 2]
    for name in ("plugin-before", "plugin-after"):
        assert name in fairalloc.available()
        assert fairalloc.solve(inst, name).tasks.tolist() == [1, 1]
    assert "plugin-broken" not in fairalloc.available()
    with pytest.raises(fairalloc.UnknownNameError):
        fairalloc.get("plugin-broken")
    assert broken.loads == 1  # tried once, not at every look-up
    fairalloc.get("drf")
    assert broken.loads == 1 and len(calls) == 1


def test_an_entry_point_that_is_no_mechanism_warns(fake_plugins):
    odd = FakeEntryPoint("plugin-odd", "odd_pkg:VALUE", lambda: 42)
    good = FakeEntryPoint("plugin-good", "good_pkg:EqualSplit", lambda: EqualSplit)
    fake_plugins(odd, good)
    with pytest.warns(
        FairallocWarning,
        match=r"'plugin-odd' \(odd_pkg:VALUE\).*int object is not a "
        r"fairalloc\.Mechanism",
    ):
        names = fairalloc.available()
    assert "plugin-good" in names and "plugin-odd" not in names and "drf" in names


def test_the_cli_goes_on_past_a_broken_plugin(fake_plugins, capsys):
    fake_plugins(FakeEntryPoint("plugin-broken", "no_such_plugin:X", missing_module))
    code, out, err = run_cli(capsys, "solve", "drf-section-4-1", "-m", "drf")
    assert code == 0, err
    assert "A" in out and "B" in out
    # the CLI shows the library's warning as one line of its own
    warning = [line for line in err.splitlines() if "plugin-broken" in line]
    assert len(warning) == 1 and warning[0].startswith("fairalloc: warning: plug-in skipped"), err


def test_the_registry_is_left_as_it_was(fake_plugins):
    """The fixture restores what a test registered (the order of tests must not matter)."""
    before = set(registry._REGISTRY)
    fake_plugins(FakeEntryPoint("plugin-temp", "tmp:EqualSplit", lambda: EqualSplit))
    assert "plugin-temp" in fairalloc.available()
    assert set(registry._REGISTRY) == before | {"plugin-temp"}


def test_no_plugin_is_left_behind():
    """Runs after (or before) the others: never sees a fake plug-in."""
    assert not any(name.startswith("plugin-") for name in fairalloc.available())
