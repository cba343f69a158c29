"""Every registered mechanism drives the simulator (issue 37, item 1): the old schedulers are mechanisms of
the ``online`` kind, ``simulate`` takes every name ``fairalloc mechanisms`` lists, and a static mechanism
without offers of its own is served by the generic adapters of :mod:`fairalloc.engines.offers`, whose
``drf`` is the old ``drf`` scheduler task for task on the DRF paper's set-ups."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

import fairalloc
from fairalloc.core.errors import FairallocError
from fairalloc.engines.offers import EntitlementOrder, OnlineMechanism, QueueOrder, offers_of
from fairalloc.models.drf import DRFOffers
from fairalloc.models.hdrf import HDRFOffers
from fairalloc.scheduling.simulator import simulate
from fairalloc.scheduling.workloads import Job, Task, Workload, drf_7_2
from fairalloc.testing import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_simulator_schedules import differences, schedule, setups  # noqa: E402

#: a member of every registered family, to run it
MEMBERS = {
    "alpha-fair": "alpha-fair:2",
    "alpha-tasks": "alpha-tasks:0.5",
    "fds": "fds:0.5:2",
    "slots": "slots:3",
    "capacity": "capacity:3",
}
ONLINE = {"mfs", "cpu-fair", "slots", "capacity", "fifo", "quincy"}


def runnable(name: str) -> str:
    return MEMBERS[name] if fairalloc.core.registry.family(name) else name


def test_every_family_has_a_member_here():
    families = {n for n in fairalloc.available() if fairalloc.core.registry.family(n)}
    assert families == set(MEMBERS)


@pytest.mark.parametrize("name", fairalloc.available())
def test_every_listed_name_simulates(name):
    """On a small 7.2 set-up every mechanism runs and launches tasks (``dmfa-srq`` too: its owners
    bring the cluster in proportion to their weights, ``engines.dynamic.pool_shares``)."""
    w = drf_7_2(nodes=2, horizon=60.0, tasks_per_job=8)
    r = simulate(w, runnable(name), record_tasks=True, progress=False)
    assert r.scheduler == runnable(name) and r.tasks_started > 0 and r.max_overcommit <= 1 + 1e-9


def test_the_cli_takes_every_name_fairalloc_mechanisms_lists(capsys):
    code, out, err = run_cli(capsys, "mechanisms", "--format", "json")
    listed = [row["name"] for row in json.loads(out)]
    names = [name.replace("K[:oc]", "2").split(":ALPHA")[0] for name in listed]
    names = [runnable(n.partition(":")[0]) if n.partition(":")[0] in MEMBERS else n for n in names]
    assert len(names) == len(fairalloc.available()) and "dmfa-srq" in names
    code, out, err = run_cli(
        capsys, "simulate", "drf-7.2", "--nodes", "2", "--scheduler", ",".join(names), "--no-progress"
    )
    assert code == 0 and err == ""
    assert [line.split()[0] for line in out.splitlines()[3:]] == names


def test_dmfa_srq_online_is_dynamic_drf_without_weights_and_follows_them_with():
    """The owners' shared quantities are their weights scaled to the cluster: with none given,
    DMFA-SRQ is dynamic DRF (equal ``q_i``) and launches ddrf's tasks; weighting one owner 3:1 gives
    her the larger entitlement, so the launches differ."""
    w = drf_7_2(nodes=2, horizon=60.0, tasks_per_job=8)
    dmfa, ddrf = (simulate(w, n, record_tasks=True, progress=False) for n in ("dmfa-srq", "ddrf"))
    assert dmfa.tasks == ddrf.tasks and dmfa.tasks_started > 0
    heavy = dataclasses.replace(w, group_weights={w.jobs[0].owner: 3.0})
    weighted = simulate(heavy, "dmfa-srq", record_tasks=True, progress=False)
    assert weighted.tasks != dmfa.tasks


def test_the_old_schedulers_are_online_mechanisms(capsys):
    assert set(fairalloc.available("online")) == ONLINE
    code, out, _ = run_cli(capsys, "mechanisms", "--format", "json")
    kinds = {row["name"]: row["kind"] for row in json.loads(out)}
    assert {n: k for n, k in kinds.items() if k == "online"} == {
        **{n: "online" for n in ONLINE - {"slots", "capacity"}},
        "slots:K[:oc]": "online",
        "capacity:K[:oc]": "online",
    }
    code, out, _ = run_cli(capsys, "mechanisms")
    assert any(line.split()[:3] == ["fifo", "online", "no"] and "simulate" in line for line in out.splitlines())
    # drf and hdrf keep their static answers and give their offer schedulers
    assert isinstance(fairalloc.get("drf").offers(), DRFOffers) and isinstance(
        fairalloc.get("hdrf").offers(), HDRFOffers
    )


@pytest.mark.parametrize("name", sorted(ONLINE))
def test_an_online_mechanism_has_no_static_answer(name, capsys):
    member = runnable(name)
    assert isinstance(fairalloc.get(member), OnlineMechanism)
    with pytest.raises(FairallocError, match=f"run it with 'fairalloc simulate WORKLOAD --scheduler {member}'$"):
        fairalloc.solve(fairalloc.load_case("drf-section-4-1"), member)
    code, out, err = run_cli(capsys, "solve", "drf-section-4-1", "-m", member)
    assert code == 2 and out == "" and err.count("\n") == 1 and "online scheduler" in err


def test_the_faces_the_adapters_give():
    assert isinstance(offers_of(fairalloc.get("asset")), EntitlementOrder)
    assert isinstance(offers_of(fairalloc.get("kueue")), QueueOrder)  # (QueuePolicy.order)
    assert isinstance(offers_of(fairalloc.get("drf")), DRFOffers)  # its own
    assert offers_of(fairalloc.get("slots:4:oc")).name == "slots:4:oc"


def generic_drf() -> EntitlementOrder:
    return EntitlementOrder(fairalloc.get("drf"))


def test_the_generic_adapter_under_drf_is_drf_on_the_7_2_set_up():
    """The DRF paper's section 7.2 set-up in full (48 nodes, 10 minutes, 6,608 tasks): the adapter's
    keys are the dominant shares divided by one entitlement (every owner demands CPU and memory, so
    DRF's entitlements share one dominant share), the order is ``drf``'s, and so is every task's
    job, node, start and end (EntitlementOrder's docstring: they could differ only where the division
    maps two different shares to one float; it does not happen here)."""
    w = drf_7_2()
    old, new = schedule(w, "drf"), schedule(w, generic_drf())
    assert len(old["tasks"]) == 6_608 and differences(new, old) == []


@pytest.mark.parametrize("setup", list(setups()))
def test_the_generic_adapter_under_drf_is_drf_on_the_pinned_set_ups(setup):
    w = setups()[setup][0]()
    assert differences(schedule(w, generic_drf()), schedule(w, "drf")) == []


def test_the_generic_adapter_serves_weighted_entitlements():
    """By hand: one node of 6 CPU / 6 GB, owners A (weight 2) and B each with 10 tasks <1 CPU, 1 GB>.
    Weighted DRF entitles A to 4 tasks (dominant share 4/6) and B to 2 (2/6). Offers: both at 0 (tie:
    A), then B (0 < 1/4), then A (1/4 < 1/2), then A again (tie at 1/2: A listed first), B (1/2 <
    3/4), A: A holds 4 tasks, B 2. ``drf`` (unweighted, as before) gives 3 and 3."""
    jobs = tuple(Job(f"{o}-job", o, 0.0, ((Task(1.0, 1.0, 100.0),) * 10,)) for o in ("A", "B"))
    w = Workload(1, 6.0, 6.0, jobs, "weighted", group_weights={"A": 2.0}, horizon=50.0)
    first = Counter(t.owner for t in simulate(w, generic_drf(), record_tasks=True).tasks)
    assert first == {"A": 4, "B": 2}
    assert Counter(t.owner for t in simulate(w, "drf", record_tasks=True).tasks) == {"A": 3, "B": 3}
    order = [t.owner for t in simulate(w, generic_drf(), record_tasks=True).tasks]
    assert order == ["A", "B", "A", "A", "B", "A"]


def test_the_queue_order_adapter_follows_the_sorter():
    """By hand, under ``mesos-drf``'s sorter (``DRFSorter::sort``: dominant share of usage, then name): one
    node of 4 CPU / 4 GB; A submits 8 tasks <1, 1> of 10 s at 0, B the same at 5. At 0 A alone waits
    and takes the node (4 tasks); at 10 A's four end and both hold 0: A (name), B (1/4 above 0), A
    and B tie at 1/4 (A), then B: two each."""
    jobs = (
        Job("a", "A", 0.0, ((Task(1.0, 1.0, 10.0),) * 8,)),
        Job("b", "B", 5.0, ((Task(1.0, 1.0, 10.0),) * 8,)),
    )
    w = Workload(1, 4.0, 4.0, jobs, "two", horizon=15.0)
    r = simulate(w, "mesos-drf", record_tasks=True)
    assert [(t.owner, t.start) for t in r.tasks] == [("A", 0.0)] * 4 + [("A", 10.0), ("B", 10.0)] * 2


class HalfDRF(fairalloc.Mechanism):
    """A plug-in (not registered): DRF's tasks for the first owner, half of them for the others."""

    name = "half-drf"

    def fast(self, instance):
        from fairalloc.core.allocation import Allocation

        tasks = fairalloc.get("drf").fast(instance).tasks.copy()
        tasks[1:] /= 2
        return Allocation(instance, tasks, self.name, "fast", "test")


def test_a_plug_in_drives_the_simulator_by_its_entitlements():
    """By hand: one node of 4 CPU / 4 GB, owners A and B with 8 tasks <1, 1> each at 0. HalfDRF entitles
    A to DRF's 2 tasks (dominant share 1/2) and B to 1 (1/4): keys d/e serve A, B (0 against 1/2), A
    (1/2 against 1), then A and B tie at 1 (A): A 3 tasks, B 1."""
    jobs = tuple(Job(f"{o}-job", o, 0.0, ((Task(1.0, 1.0, 100.0),) * 8,)) for o in ("A", "B"))
    w = Workload(1, 4.0, 4.0, jobs, "plug-in", horizon=50.0)
    r = simulate(w, HalfDRF(), record_tasks=True)
    assert r.scheduler == "half-drf" and [t.owner for t in r.tasks] == ["A", "B", "A", "A"]
