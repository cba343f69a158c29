"""The generic online adapter (:class:`fairalloc.engines.online.Entitled`): any static mechanism
serves, at each cycle, the queue furthest below its entitlement; each cycle below is computed by
hand in its docstring."""

from __future__ import annotations

import numpy as np

import fairalloc
from fairalloc.engines.online import Admit, ClusterState, Entitled, Job, Running, online_policy, place, requested

CPU_MEM = dict(users=["a", "b"], resources=["cpu", "mem"])


def _state(jobs: list[Job], running: list[Running] = (), nodes=None, capacity=(10, 10)) -> ClusterState:
    inst = fairalloc.Instance(list(capacity), [[1, 1], [1, 1]], **CPU_MEM)
    pending = {j.name: j for j in jobs}
    return ClusterState(inst, 0.0, {r.job.name: r for r in running}, pending, dict.fromkeys(pending, 0.0), nodes)


def test_the_queue_furthest_below_its_entitlement_is_served_first():
    """a runs a1 (6 cpu) and asks a2 (2 cpu); b asks b1, b2 (2 cpu each). Requests a 8, b 4 cpu: DRF
    entitles a 6, b 4 (b capped at its request 4, a the rest 6). Held over entitled: a 6/6 = 1,
    b 0/4 = 0 -> b1 (b: 2/4 = 0.5 < 1) -> b2 (b: 4/4 = 1, a tie: a first in the case's order) -> a2
    needs 2 cpu, free is 10 - 6 - 4 = 0: a waits."""
    a1 = Job("a1", "a", (6, 0))
    jobs = [Job("a2", "a", (2, 0)), Job("b1", "b", (2, 0)), Job("b2", "b", (2, 0))]
    decisions = Entitled(fairalloc.get("drf")).decide(_state(jobs, [Running(a1, 1, 0.0)]))
    assert [d.job for d in decisions] == ["b1", "b2"]


def test_a_head_that_does_not_fit_blocks_its_queue_and_priority_picks_the_head():
    """a's waiting jobs: a1 (priority 0, 4 cpu), a2 (priority 5, 12 cpu: larger than the 10 free),
    a3 (priority 0, 1 cpu). The head is a2 (highest priority); it does not fit, so a waits whole
    (a1 and a3 are not served around it); b1 (1 cpu) is admitted."""
    jobs = [Job("a1", "a", (4, 0)), Job("a2", "a", (12, 0), priority=5), Job("a3", "a", (1, 0)), Job("b1", "b", (1, 0))]
    decisions = Entitled(fairalloc.get("drf")).decide(_state(jobs))
    assert [d.job for d in decisions] == ["b1"]


def test_a_gang_takes_the_pods_that_fit_and_nodes_are_first_fit():
    """Nodes n1 (3 cpu), n2 (4 cpu). g: 5 pods of 1 cpu, min_pods 2; a gang job admitted with the
    pods that fit the free capacity (7 cpu: all 5): n1, n1, n1, n2, n2 by first fit.  Then h: 3 pods
    of 1 cpu, whole: 2 cpu left on n2, so it waits."""
    nodes = {"n1": np.array([3.0, 10]), "n2": np.array([4.0, 10])}
    jobs = [Job("g", "a", (1, 0), pods=5, min_pods=2), Job("h", "b", (1, 0), pods=3)]
    decisions = Entitled(fairalloc.get("drf")).decide(_state(jobs, nodes=nodes, capacity=(7, 20)))
    assert decisions == [Admit("g", 5, ("n1", "n1", "n1", "n2", "n2"), decisions[0].why)]


def test_a_gang_below_its_min_pods_waits():
    """g: 4 pods of 3 cpu, min_pods 3, free 10 cpu: 3 pods fit (9 cpu) -> admitted with 3; g2 the
    same again: 1 cpu left, 0 pods -> waits."""
    jobs = [Job("g", "a", (3, 0), pods=4, min_pods=3), Job("g2", "b", (3, 0), pods=4, min_pods=3)]
    decisions = Entitled(fairalloc.get("drf")).decide(_state(jobs))
    assert [(d.job, d.pods) for d in decisions] == [("g", 3)]


def test_the_entitlement_is_computed_again_only_when_the_queues_with_work_change():
    calls = []
    drf = fairalloc.get("drf")

    class Counting:
        name = "drf"

        def allocate(self, inst):
            calls.append(inst.max_tasks)
            return drf.allocate(inst)

    policy = Entitled(Counting())  # type: ignore[arg-type]
    state = _state([Job("a1", "a", (1, 0))])
    policy.decide(state)
    policy.decide(state.after([Admit("a1")]))  # still only a has work
    assert len(calls) == 1
    policy.decide(_state([Job("a1", "a", (1, 0)), Job("b1", "b", (1, 0))]))
    assert len(calls) == 2


def test_the_requested_case_holds_running_and_waiting_work():
    a1 = Job("a1", "a", (2, 1), pods=2)
    state = _state([Job("a2", "a", (1, 0))], [Running(a1, 2, 0.0)])
    inst = requested(state)
    assert inst.demand.tolist() == [[5, 2], [0, 0]] and inst.max_tasks.tolist() == [1, 0]


def test_a_mechanism_without_online_form_gets_the_adapter():
    assert isinstance(online_policy(fairalloc.get("drf")), Entitled)


def test_place_is_first_fit_and_leaves_the_rooms_alone():
    rooms = {"n1": np.array([1.0]), "n2": np.array([2.0])}
    assert place(np.array([1.0]), 5, rooms) == ["n1", "n2", "n2"] and rooms["n1"][0] == 1.0


def test_a_dynamic_mechanism_allocates_among_the_queues_with_work():
    """ddrf takes no task bounds: among the queues with work only (a and c, in the case's order),
    each asking for more of its request's shape; the idle queue b is entitled to nothing, and a's
    and c's bundles are ddrf's own on the two-queue instance."""
    inst = fairalloc.Instance([8, 8], [[1, 1]] * 3, users=["a", "b", "c"], resources=["cpu", "mem"])
    jobs = {"a1": Job("a1", "a", (2, 1)), "c1": Job("c1", "c", (1, 2))}
    state = ClusterState(inst, pending=jobs, since=dict.fromkeys(jobs, 0.0))
    bundles = Entitled(fairalloc.get("ddrf")).bundles(state)
    two = fairalloc.Instance([8, 8], [[2, 1], [1, 2]], users=["a", "c"], resources=["cpu", "mem"])
    expected = fairalloc.get("ddrf").allocate(two).bundles
    assert np.allclose(bundles[[0, 2]], expected) and not bundles[1].any()


def test_dmfa_srq_online_shares_the_cluster_by_shared_quantity_else_weight():
    """DMFA-SRQ among the queues with work (a and c): they bring the cluster in proportion to the
    case's shared quantities (.5 and .3 of the three queues': 5/8 and 3/8 of the pool), or, where
    the case gives none, to their weights (3 and 1: 3/4 and 1/4)."""
    jobs = {"a1": Job("a1", "a", (2, 1)), "c1": Job("c1", "c", (1, 2))}
    two = dict(users=["a", "c"], resources=["cpu", "mem"])
    for given, pooled in (
        (dict(shared=[0.5, 0.2, 0.3]), dict(shared=[5 / 8, 3 / 8])),
        (dict(weights=[3, 1, 1]), dict(shared=[3 / 4, 1 / 4], weights=[3, 1])),
    ):
        inst = fairalloc.Instance([8, 8], [[1, 1]] * 3, users=["a", "b", "c"], resources=["cpu", "mem"], **given)
        state = ClusterState(inst, pending=jobs, since=dict.fromkeys(jobs, 0.0))
        bundles = Entitled(fairalloc.get("dmfa-srq")).bundles(state)
        alone = fairalloc.Instance([8, 8], [[2, 1], [1, 2]], **two, **pooled)
        assert np.allclose(bundles[[0, 2]], fairalloc.get("dmfa-srq").allocate(alone).bundles)
        assert not bundles[1].any()
    equal = Entitled(fairalloc.get("ddrf")).bundles(state)
    assert not np.allclose(bundles, equal)  # the weights moved the entitlement
