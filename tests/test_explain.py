"""``fairalloc explain``: the entitlement and the sentences saying why, checked against the numbers.

The two Volcano reports (cases/report-volcano-1619.yaml, -4165.yaml) are explained with the real
``proportion`` answer and the reason it differs from what the reporter expected; random queue cases
check that every tag the explanation gives is true of the allocation, and that DRF (which wastes
nothing) never leaves a queue below its request without naming what stops it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.analysis.explain import explain
from fairalloc.analysis.falsify import InstanceSpace, random_queue_instance
from fairalloc.analysis.properties import check_property
from fairalloc.cli import main
from fairalloc.core import registry
from fairalloc.core.errors import FairallocError
from fairalloc.core.queues import queues_of, request
from fairalloc.core.tolerances import PROPERTY
from fairalloc.io.cases import load_case, parse_case


def test_volcano_1619_the_split_the_reporter_expected_scaled_to_the_whole_cluster():
    report = explain(load_case("report-volcano-1619"))
    assert report.policy == "volcano-proportion"  # the case's policy, by default
    test = report.queues["test"]
    assert test.entitlement["cpu"] == pytest.approx(60 / 11, rel=1e-12)
    assert test.binding == ["capacity:cpu"]
    text = " ".join(test.why)
    assert "weights 5:5:1" in text and "with test1, default" in text
    assert "The reporter expected 5 cores of cpu" in text
    assert "The expectation gives out 11 cores of cpu" in text and "scaled by 1.091" in text


def test_volcano_4165_equal_thirds_as_expected_the_difference_is_usage():
    report = explain(load_case("report-volcano-4165"))
    a, c = report.queues["tenant-a"], report.queues["tenant-c"]
    assert a.entitlement["cpu"] == pytest.approx(25) and c.entitlement["cpu"] == pytest.approx(25)
    assert {"guarantee:cpu", "guarantee:memory"} <= set(a.binding)
    assert c.gap["cpu"] == pytest.approx(8) and a.gap["cpu"] == pytest.approx(-4)
    assert "exactly what volcano-proportion gives" in " ".join(c.why)
    assert "It is owed 8 cores of cpu" in " ".join(c.why)
    assert "4 cores of cpu, 3.906 GiB of memory above its entitlement" in " ".join(a.why)
    assert report.queues["default"].binding == ["inactive"]


def _case(users, groups=None, resources=None):
    data = {"resources": resources or {"cpu": 10, "mem": 20}, "users": users}
    if groups:
        data["groups"] = groups
    return parse_case(data)


def test_a_limit_a_group_limit_and_a_request_bind():
    case = _case(
        {
            "a": {"request": {"cpu": 8}, "limit": {"cpu": 3}},
            "b": {"request": {"cpu": 1}},
            "c": {"request": {"cpu": 8}, "group": "g"},
            "d": {"request": {"cpu": 8}, "group": "g"},
        },
        groups={"g": {"limit": {"cpu": 4}}},
    )
    report = explain(case, "drf")
    assert "limit:cpu" in report.queues["a"].binding
    assert report.queues["b"].binding == ["request"]
    assert "group_limit:g:cpu" in report.queues["c"].binding
    assert "Its group g's limit binds" in " ".join(report.queues["d"].why)


def test_lending_limits_are_named_when_a_queue_borrows():
    case = _case(
        {
            "a": {"request": {"cpu": 10}, "guarantee": {"cpu": 2}, "group": "cohort"},
            "b": {"request": {"cpu": 0.5}, "guarantee": {"cpu": 8}, "lending_limit": {"cpu": 3}, "group": "cohort"},
        },
        groups={"cohort": {}},
        resources={"cpu": 10},
    )
    e = explain(case, "kueue").queues["a"]
    assert e.entitlement["cpu"] > 2
    assert "lending_limit:cohort:cpu" in e.binding
    assert "the lending limits of b let at most 3" in " ".join(e.why)
    assert "It borrows" in " ".join(e.why) and "above its nominal quota of 2" in " ".join(e.why)


def test_json_has_the_issue_keys_and_one_queue_is_chosen(capsys):
    assert main(["explain", "report-volcano-4165", "--queue", "tenant-b", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["policy"] == "volcano-proportion"
    assert list(doc["queues"]) == ["tenant-b"]
    assert set(doc["queues"]["tenant-b"]) >= {"entitlement", "usage", "gap", "binding", "why"}
    assert doc["queues"]["tenant-b"]["entitlement"]["cpu"] == pytest.approx(25)


def test_table_and_one_line_errors(capsys):
    assert main(["explain", "report-volcano-1619", "-m", "drf"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("drf on report-volcano-1619") and "test1:" in out
    assert main(["explain", "report-volcano-1619", "--queue", "tset"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'test'" in err
    assert main(["explain", "report-volcano-1619", "-m", "volcano-proprtion"]) == 2
    assert "did you mean 'volcano-proportion'" in capsys.readouterr().err


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), policy=st.sampled_from(["drf", "volcano-proportion", "kueue", "mesos-drf"]))
def test_every_tag_is_true_of_the_allocation(seed, policy):
    inst = random_queue_instance(InstanceSpace(queues=True), "work_conserving", np.random.default_rng(seed))
    try:
        A = registry.get(policy).allocate(inst).bundles
    except FairallocError:  # a random case a policy refuses (guarantees beyond capacity): nothing to explain
        return
    report = explain(inst, policy)
    R, req, Q = np.asarray(inst.capacity), request(inst), queues_of(inst)
    tol = PROPERTY * np.maximum(R, 1.0)
    for i, q in enumerate(inst.users):
        e = report.queues[q]
        # the allocation's numbers, noise within the tolerance shown as 0
        assert all(abs(e.entitlement[r] - A[i, j]) <= tol[j] for j, r in enumerate(inst.resources))
        for tag in e.binding:
            kind, _, rest = tag.partition(":")
            j = inst.resources.index(rest.rsplit(":", 1)[-1]) if rest else None
            if kind == "request":
                assert np.all(A[i] >= req[i] - tol)
            elif kind == "limit":
                assert A[i, j] >= Q.limit[q][j] - tol[j]
            elif kind == "capacity":
                assert A[:, j].sum() >= R[j] - tol[j] and req[i, j] > 0
            elif kind == "guarantee":  # exactly the guarantee, or the largest multiple of the request within it
                G, wants = Q.guarantee[q], req[i] > 0
                multiple = min(
                    1.0, np.nanmin(np.where(wants, G, np.nan) / req[i]), np.min(Q.limit[q][wants] / req[i][wants])
                )
                x = np.min(A[i][wants] / req[i][wants])
                assert abs(A[i, j] - G[j]) <= tol[j] or x == pytest.approx(multiple, rel=1e-6)
            elif kind == "inactive":
                assert not req[i].any()
        short = any(t.startswith("below_guarantee") for t in e.binding)
        assert short == (check_property(registry.get(policy), inst, "guarantee_honoured", user=q).holds is False)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1))
def test_drf_never_leaves_a_queue_short_without_naming_why(seed):
    """DRF is work conserving: a queue below its request is stopped by its limit, a group's limit or
    an exhausted resource it asks for; the explanation must name one."""
    inst = random_queue_instance(InstanceSpace(queues=True), "work_conserving", np.random.default_rng(seed))
    try:
        report = explain(inst, "drf")
    except FairallocError:  # guarantees beyond capacity: drf refuses the case
        return
    for e in report.queues.values():
        assert e.binding, e.why


def test_kep_1714_story_3_imported_and_explained(tmp_path):
    """The issue's session: Kueue's hierarchical cohorts of KEP-1714 Story 3, imported from Kueue's own
    objects, explained with the story's numbers (150 / 150 between the cohorts, 30 / 30 / 90 in C1)."""
    from pathlib import Path

    from fairalloc.io.importers import import_files

    folder = Path(__file__).resolve().parent.parent / "cases" / "imported" / "kueue" / "kep-1714-story-3"
    files = [str(folder / f) for f in ("cohorts.yaml", "cluster-queues.yaml", "local-queues.yaml", "workloads.yaml")]
    case, _ = import_files(files, name="story")
    report = explain(parse_case(case))
    assert report.policy == "kueue"
    gpus = {q: e.entitlement["nvidia.com/gpu"] for q, e in report.queues.items()}
    assert gpus == pytest.approx({"cs-cq": 0, "1a": 30, "1b": 30, "1c": 90, "2a": 150})
    why = " ".join(report.queues["1c"].why)
    assert "weights 3:1:1: 1c 90, 1a 30, 1b 30" in why
    assert "Its group c1 shares the last unit of dominant share in group organization with c2" in why
    assert "(weights 1:1: c1 150, c2 150)" in why


def test_a_level_shared_by_many_queues_names_five_and_counts_the_rest():
    """Twelve equal queues of weight 1 ask 100 cpu each of 600: DRF gives each 50 (600 / 12), all
    at one level, so each shares the last unit with the 11 others.  The sentence names the first
    five in file order (itself left out) and counts the other six: naming all of them in every
    queue's sentence made the output quadratic in the queues."""
    users = {f"q{k}": {"request": {"cpu": 100}} for k in range(12)}
    report = explain(parse_case({"name": "level", "resources": {"cpu": 600}, "users": users}), "drf")
    sentence = next(s for s in report.queues["q0"].why if "shares the last unit" in s)
    assert "with q1, q2, q3, q4, q5 and 6 more:" in sentence
    assert "(weights 1:1:1:1:1:1:...: q0 50, q1 50, q2 50, q3 50, q4 50, q5 50, ...)" in sentence
    sentence = next(s for s in report.queues["q3"].why if "shares the last unit" in s)
    assert "with q0, q1, q2, q4, q5 and 6 more:" in sentence


@settings(max_examples=200, deadline=None)
@given(
    offsets=st.lists(st.sampled_from([0.0, 0.4, 0.5, 0.99, 1.0, 1.01, 1.5, 1.99, 2.0, 2.5, -0.5, -1.0, -1.01, -2.0]),
                     min_size=1, max_size=12),
    scale=st.sampled_from([1e-12, 1e-6, 1.0, 3.7, 1e9]),
)  # fmt: skip
def test_peers_at_the_edges_of_the_test_are_the_peers_of_testing_every_level(offsets, scale):
    """``_level_peers`` searches sorted levels (every level within half the test passes, those out
    to twice the test are tested): the same peers and count as testing every sibling, with levels
    placed on and around the edges of the test (offsets in units of the tolerance)."""
    from fairalloc.analysis import explain as ex

    mine = scale
    tol = PROPERTY * max(mine, 1e-12)
    levels = [mine, *(mine + o * tol for o in offsets)]
    free = [f"s{k}" for k in range(len(levels))]
    pairs = sorted((v, k) for k, v in enumerate(levels))
    position = {s: k for k, s in enumerate(free)}
    siblings = ex._Siblings(free, [k for _, k in pairs], [v for v, _ in pairs], [], [], position)

    class Facts:  # the one method _level_peers reads besides the sorted levels
        _memo: dict = {}
        once = ex._Facts.once

    want = [k for k in range(1, len(levels)) if abs(levels[k] - mine) <= tol]
    named, count = ex._level_peers(Facts(), siblings, None, mine, 0)
    assert (named, count) == (want[: ex.NAMED_PEERS], len(want))
