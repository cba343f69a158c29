"""Mesos' allocation cycle at the level of jobs (:mod:`fairalloc.models.mesos_cycle`): the ported
upstream scenarios, and hand-computed cycles (each computed in its docstring)."""

from __future__ import annotations

import pytest
import yaml

import fairalloc
from fairalloc.core.errors import CaseError
from fairalloc.engines.online import Admit, online_policy
from fairalloc.io.cases import parse_case
from fairalloc.io.jobs import cycle_decisions

LIBRARY = [n for n in fairalloc.bundled_cases() if n.startswith("mesos-") and fairalloc.load_case(n).cycle is not None]


@pytest.mark.parametrize("name", LIBRARY)
def test_the_ported_scenarios_hold(name):
    case = fairalloc.load_case(name)
    decisions = cycle_decisions(case, "mesos-drf")
    for e in case.expect:
        assert {d.job for d in decisions if isinstance(d, Admit)} == set(e.admitted or [])
        assert not [d for d in decisions if not isinstance(d, Admit)]  # Mesos never preempts


def _case(users: dict, pending: dict, running: dict | None = None, nodes=None, settings=None):
    data = {
        "name": "t",
        "resources": {"cpu": 10, "mem": 40},
        "users": users,
        "cycle": {"pending": pending, "running": running or {}, **({"nodes": nodes} if nodes else {})},
        **({"settings": settings} if settings else {}),
    }
    return parse_case(yaml.safe_load(yaml.safe_dump(data)))


def _admitted(case):
    return [(d.job, d.pods) for d in cycle_decisions(case, "mesos-drf")]


def test_an_unused_guarantee_is_held_back():
    """The module's worked example: a guaranteed 6 cpus, b runs 4 without guarantee; a1, b1 ask 3
    each. requiredHeadroom 6, available 6. Stage 1: a1 (guaranteed part 3: required 3, available
    3). Stage 2: b's offer is shrunk to the surplus 3 - 3 = 0: b1 waits."""
    case = _case(
        {"a": {"guarantee": {"cpu": 6}, "request": {"cpu": 3}}, "b": {"request": {"cpu": 3}}},
        {"a1": {"queue": "a", "request": {"cpu": 3}}, "b1": {"queue": "b", "request": {"cpu": 3}}},
        {"b0": {"queue": "b", "request": {"cpu": 4}}},
    )
    assert _admitted(case) == [("a1", 1)]


def test_roles_are_offered_in_the_drf_sorters_order_and_limits_cap_them():
    """No quota. a runs 4 cpus (share 0.4), b runs 1 (0.1): b is offered first. b1 (5 cpus) fits
    (free 5) -> b1; then a1 (1 cpu) finds nothing left. With a limit of 5 cpus on b, b1 would
    take b to 6: its offer is shrunk to 4, so b1 waits and a1 runs."""
    users = {"a": {"request": {"cpu": 1}}, "b": {"request": {"cpu": 1}}}
    pending = {"a1": {"queue": "a", "request": {"cpu": 1}}, "b1": {"queue": "b", "request": {"cpu": 5}}}
    running = {"a0": {"queue": "a", "request": {"cpu": 4}}, "b0": {"queue": "b", "request": {"cpu": 1}}}
    assert _admitted(_case(users, pending, running)) == [("b1", 1)]
    users["b"]["limit"] = {"cpu": 5}
    assert _admitted(_case(users, pending, running)) == [("a1", 1)]


def test_a_task_group_is_launched_on_one_agent():
    """Agents n1, n2 of 3 cpus. g: 4 pods of 1 cpu, min_pods 2: from n1's offer 3 pods (the most
    it holds). h: 2 pods of 2 cpus, whole: n1 has 0 left, n2 offers 3, one pod only -> h waits."""
    nodes = {"n1": {"cpu": 3, "mem": 20}, "n2": {"cpu": 3, "mem": 20}}
    users = {"a": {"request": {"cpu": 1}}, "b": {"request": {"cpu": 1}}}
    pending = {
        "g": {"queue": "a", "request": {"cpu": 1}, "pods": 4, "min_pods": 2},
        "h": {"queue": "b", "request": {"cpu": 2}, "pods": 2},
    }
    decisions = cycle_decisions(_case(users, pending, nodes=nodes), "mesos-drf")
    assert decisions == [Admit("g", 3, ("n1", "n1", "n1"), decisions[0].why)]


def test_a_setting_is_refused_with_one_line():
    with pytest.raises(CaseError, match=r"^settings\.queueing: unknown setting 'queueing'"):
        online_policy(fairalloc.get("mesos-drf"), {"queueing": "StrictFIFO"})
