"""Configuration-only cases: the steady entitlements when every queue is backlogged (issue 34).

An operator's files usually hold a configuration and no work (a ``fair-scheduler.xml``, a set of
ClusterQueues, a ``queues.yaml``).  ``fairalloc import`` then writes ``demand: backlogged`` and
every command answers "what is each queue entitled to when every queue wants more"
(:meth:`Instance.backlogged`); ``--demand observed`` keeps the recorded-demand answer a flag away.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairalloc.cli import main
from fairalloc.core import registry
from fairalloc.core.errors import CaseError
from fairalloc.core.queues import active
from fairalloc.core.tolerances import PROPERTY
from fairalloc.io.cases import load_case, parse_case

ROOT = Path(__file__).resolve().parent.parent
ALLOCATION_FILE = ROOT / "cases" / "imported" / "yarn" / "allocation-file" / "fair-scheduler.xml"


def _run(capsys, *args: str) -> _Result:
    return _Result(capsys, args)


class _Result:
    def __init__(self, capsys, args):
        self.exit_code = main(list(args))
        self.output, self.err = capsys.readouterr()


def test_explain_of_a_fair_scheduler_xml_alone_gives_the_steady_shares(tmp_path, capsys):
    """The FairScheduler documentation's example allocation file, nothing else (cluster: 100000 MiB,
    32 vcores given with --capacity, as the file names none).  By hand, memory (every maxResources
    gives 0 vcores, so vcores are 0 everywhere):

    * root's children: sample_queue (weight 2, min 10000, max 90000) and secondary_group_queue
      (weight 3, type parent with no configured child: one queue standing for those created under
      it; max 40000 from queueMaxResourcesDefault).  2r + 3r = 100000 gives r = 20000, 3r = 60000
      above 40000: secondary keeps 40000, sample_queue the other 60000.
    * sample_queue's two children (weight 1 each, maxima 40000, sub-queue min 5000): 30000 each.
    """
    case = tmp_path / "fair.yaml"
    imported = _run(
        capsys, "import", str(ALLOCATION_FILE), "--capacity", "memory-mb=100000,vcores=32", "--out", str(case)
    )
    assert imported.exit_code == 0, imported.output
    assert "demand: backlogged" in case.read_text()
    assert "every queue is taken as backlogged" in imported.output  # the summary says so too
    result = _run(capsys, "explain", str(case), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["demand"] == "backlogged"
    got = {q: e["entitlement"]["memory-mb"] for q, e in report["queues"].items()}
    assert got == pytest.approx(
        {
            "root.sample_queue.sample_sub_queue": 30000,
            "root.sample_queue.sample_reservable_queue": 30000,
            "root.secondary_group_queue": 40000,
        }
    )
    assert all(e["entitlement"]["vcores"] == 0 for e in report["queues"].values())
    assert "steady entitlements" in " ".join(report["summary"])
    for q, e in report["queues"].items():  # no sentence of an inactive queue beside a non-zero entitlement
        assert "inactive" not in e["binding"] and "no request" not in " ".join(e["why"]), q
    # the same under the policy's own steady fair share, computed without any demand at all
    steady = json.loads(_run(capsys, "explain", str(case), "-m", "yarn-fair-steady", "--format", "json").output)
    assert {q: e["entitlement"]["memory-mb"] for q, e in steady["queues"].items()} == pytest.approx(got)


def test_the_observed_answer_is_a_flag_away(tmp_path, capsys):
    case = tmp_path / "fair.yaml"
    _run(capsys, "import", str(ALLOCATION_FILE), "--capacity", "memory-mb=100000,vcores=32", "--out", str(case))
    report = json.loads(_run(capsys, "explain", str(case), "--demand", "observed", "--format", "json").output)
    assert report["demand"] == "observed"
    assert all(v == 0 for e in report["queues"].values() for v in e["entitlement"].values())
    assert all(e["binding"] == ["inactive"] for e in report["queues"].values())
    assert "No queue has one, so every entitlement is 0" in " ".join(report["summary"])
    table = _run(capsys, "explain", str(case), "--demand", "observed").output
    assert "--demand backlogged" in table
    # a steady policy entitles idle queues all the same: said so, not "gives it nothing"
    steady = json.loads(
        _run(capsys, "explain", str(case), "--demand", "observed", "-m", "yarn-fair-steady", "--format", "json").output
    )
    sub = steady["queues"]["root.sample_queue.sample_sub_queue"]
    assert sub["entitlement"]["memory-mb"] == pytest.approx(30000)
    assert "yet yarn-fair-steady entitles it to this" in sub["why"][1] and "nothing" not in " ".join(sub["why"])


def test_a_case_with_requests_stays_observed_and_can_be_read_backlogged():
    case = load_case("report-volcano-4165")
    assert case.demand == "observed" and case.observed is None
    backlogged = case.demanded("backlogged")
    assert active(backlogged).all() and not active(case.instance).all()
    assert case.demanded("observed") is case.instance


def test_demand_is_checked_where_it_is_written(capsys):
    queues = {"resources": {"cpu": 4}, "users": {"a": {"weight": 1}}}
    with pytest.raises(CaseError, match="demand"):
        parse_case({**queues, "demand": "steady"})
    paper = {"resources": {"cpu": 4}, "users": {"a": {"demand": {"cpu": 1}}}}
    with pytest.raises(CaseError, match="demand: backlogged is for queue cases"):
        parse_case({**paper, "demand": "backlogged"})
    case = parse_case({**queues, "demand": "backlogged"})
    assert case.instance.demand.tolist() == [[4.0]] and case.observed is not None
    assert _run(capsys, "explain", "report-volcano-4165", "--demand", "backlog").exit_code == 2


@pytest.mark.parametrize("path", sorted(glob.glob(str(ROOT / "cases" / "yarn-*.yaml"))), ids=lambda p: Path(p).stem)
def test_yarn_fair_of_the_backlogged_case_is_the_steady_fair_share(path):
    """Two independent computations of one number: the instantaneous fair share (FSQueue demand
    capped, active queues only) of every queue backlogged, and Hadoop's steady fair share
    (``computeSteadyShares``, which reads no demand) of the case as it is."""
    inst = load_case(path).instance
    backlogged = registry.get("yarn-fair").allocate(inst.backlogged()).bundles
    steady = registry.get("yarn-fair-steady").allocate(inst).bundles
    assert np.allclose(backlogged, steady, rtol=PROPERTY, atol=PROPERTY * inst.capacity.max())


@settings(max_examples=60, deadline=None)
@given(
    capacity=st.lists(st.integers(1, 100), min_size=2, max_size=3),
    rows=st.lists(st.lists(st.integers(0, 20), min_size=3, max_size=3), min_size=1, max_size=5),
    limits=st.lists(st.one_of(st.none(), st.integers(0, 50)), min_size=5, max_size=5),
    # not yarn-fair: in YARN demand never enters the fair share (models/yarn_fair.py)
    mechanism=st.sampled_from(["drf", "asset", "ceei", "volcano-proportion", "hdrf-fluid", "mesos-drf"]),
)
def test_every_queue_wants_more_than_any_policy_gives(capacity, rows, limits, mechanism):
    """A backlogged row has dominant share 1 (or is all the queue may hold): every queue is
    active, keeps the shape of its request, and no policy gives it more than its backlogged row."""
    names = [f"r{j}" for j in range(len(capacity))]
    users = {}
    for i, row in enumerate(rows):
        spec: dict = {"request": {r: v for r, v in zip(names, row) if v}} if any(row[: len(names)]) else {}
        if limits[i] is not None:
            spec["limit"] = {names[0]: limits[i]}
        users[f"q{i}"] = spec
    case = parse_case({"resources": dict(zip(names, capacity)), "users": users, "demand": "backlogged"})
    b, observed = case.instance, case.observed
    reachable = (b.demand > 0).any(axis=1)
    assert np.array_equal(active(b), reachable)  # all but a queue whose limits let it hold nothing
    with np.errstate(divide="ignore", invalid="ignore"):
        top = (observed.demand / observed.capacity).max(axis=1)
    for i in np.flatnonzero(top > 0):  # the shape of a request is kept, scaled to dominant share 1
        assert np.allclose(b.demand[i] * top[i], observed.demand[i])
        assert np.isclose((b.demand[i] / b.capacity).max(), 1.0)
    bundles = registry.get(mechanism).allocate(b).bundles
    assert np.all(bundles <= b.demand + PROPERTY * b.capacity)
