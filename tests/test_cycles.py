"""A case's ``cycle`` (the jobs running and waiting at one scheduling cycle) read into the state a
policy decides on (:mod:`fairalloc.io.jobs`, :mod:`fairalloc.engines.online`): what it holds, and
one clear line for each kind of bad input."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from fairalloc.core.errors import CaseError
from fairalloc.engines.online import Admit, Preempt
from fairalloc.io.cases import parse_case

CASE = """
name: two-queues
resources: {cpu: 10, memory: 40}
groups: {cohort: {parent: null}}
users:
  a: {group: cohort, guarantee: {cpu: 5, memory: 20}, request: {cpu: 1}}
  b: {group: cohort, guarantee: {cpu: 5, memory: 20}, request: {cpu: 1}}
cycle:
  now: 5
  nodes: {n1: {cpu: 6, memory: 20}, n2: {cpu: 4, memory: 20}}
  running:
    r1: {queue: a, request: {cpu: 2, memory: 1}, pods: 2, start: 1, nodes: [n1, n2]}
  pending:
    p1: {queue: b, request: {cpu: 3}, submit: 2, priority: 7}
    p2: {queue: a, request: {cpu: 1}, pods: 4, min_pods: 2, submit: 4}
"""


def _case(**changes):
    data = yaml.safe_load(CASE)
    for path, value in changes.items():
        *above, last = path.split("/")
        node = data
        for key in above:
            node = node[key]
        node[last] = value
    return parse_case(data)


def test_the_cycle_holds_what_the_case_says():
    state = _case().cycle
    assert state.now == 5 and list(state.running) == ["r1"] and list(state.pending) == ["p1", "p2"]
    assert np.allclose(state.usage()["a"], [4, 2]) and np.allclose(state.usage()["b"], [0, 0])
    assert np.allclose(state.free(), [6, 38])
    free = state.free_on_nodes()
    assert np.allclose(free["n1"], [4, 19]) and np.allclose(free["n2"], [2, 19])
    assert [j.name for j in state.waiting("a")] == ["p2"] and state.pending["p2"].least == 2
    assert state.since == {"p1": 2.0, "p2": 4.0} and state.pending["p1"].priority == 7


def test_after_preempts_and_admits_at_the_same_instant():
    state = _case().cycle
    after = state.after([Preempt("r1", by="p1"), Admit("p1")])
    assert list(after.running) == ["p1"] and list(after.pending) == ["p2", "r1"]
    assert after.since["r1"] == 5 and after.running["p1"].start == 5
    assert np.allclose(after.usage()["b"], [3, 0]) and list(state.running) == ["r1"]  # the state itself unchanged


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("cycle/pending/p1/queue", "bb", "cycle.pending.p1.queue: unknown queue 'bb'; did you mean 'b'?"),
        ("cycle/pending/p1/request", {"cpus": 1}, "cycle.pending.p1.request.cpus: unknown resource 'cpus'"),
        ("cycle/pending/p1/request", {"cpu": 7}, "cycle.pending.p1.request.cpu: a pod of 7 is larger than any node"),
        ("cycle/pending/p1/submit", -1, "cycle.pending.p1.submit: input should be greater than or equal to 0"),
        ("cycle/pending/p1/submit", 6, "cycle.pending.p1.submit: 6 is after the cycle's time (5)"),
        ("cycle/pending/p2/min_pods", 5, "cycle.pending.p2.min_pods: 5 is more than the job's 4 pods"),
        ("cycle/running/r1/nodes", ["n1"], "cycle.running.r1.nodes: 1 nodes for 2 running pods"),
        ("cycle/running/r1/nodes", ["n1", "n3"], "cycle.running.r1.nodes[1]: unknown node 'n3'"),
        ("cycle/running/r1/start", 9, "cycle.running.r1.start: 9 is after the cycle's time (5)"),
        ("cycle/pending/r1", {"queue": "a", "request": {"cpu": 1}}, "cycle.pending.r1: job 'r1' is also running"),
        ("expect", [{"mechanism": "kueue", "admitted": ["p3"]}], "expect[0].admitted[0]: unknown waiting job 'p3'"),
        ("expect", [{"mechanism": "kueue", "preempted": ["p1"]}], "expect[0].preempted[0]: unknown running job 'p1'"),
    ],
)
def test_bad_input_is_one_line_naming_the_field(path, value, message):
    with pytest.raises(CaseError) as err:
        _case(**{path: value})
    assert str(err.value).startswith(message) and "\n" not in str(err.value), str(err.value)


def test_without_nodes_a_pod_larger_than_the_capacity_is_refused():
    data = yaml.safe_load(CASE)
    del data["cycle"]["nodes"], data["cycle"]["running"]["r1"]["nodes"]
    data["cycle"]["pending"]["p1"]["request"] = {"memory": 41}
    message = r"cycle.pending.p1.request.memory: a pod of 41 is larger than the capacity \(40\)"
    with pytest.raises(CaseError, match=message):
        parse_case(data)


def test_an_expected_decision_needs_a_cycle():
    data = yaml.safe_load(CASE)
    del data["cycle"]
    data["expect"] = [{"mechanism": "kueue", "admitted": []}]
    with pytest.raises(CaseError, match=r"expect\[0\]: admitted and preempted need the case's 'cycle'"):
        parse_case(data)
