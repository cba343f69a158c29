"""The properties of policies with guarantees and limits (issue 15 item 5): guarantee_honoured,
limit_respected, no_overcommit and work_conserving, general bundles in the checkers and the
verifier, random queue instances and Table 2 on them."""

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.analysis.falsify import InstanceSpace, random_queue_instance, table2
from fairalloc.analysis.manipulation import search_lie
from fairalloc.analysis.properties import PROPERTIES, check, check_property, property_names
from fairalloc.analysis.results import GuaranteeWitness, IdleWitness, LimitWitness, OvercommitWitness
from fairalloc.core.queues import Queues, request
from fairalloc.engines.queue_policy import QueuePolicy
from fairalloc.io.cases import parse_case
from fairalloc.testing import run_cli

QUEUES = ("guarantee_honoured", "limit_respected", "no_overcommit", "work_conserving")


class Proportional(QueuePolicy):
    """Each resource split in proportion to the requests, capped by them (a per-resource policy
    that rewards over-reporting); ``mode`` breaks one promise on purpose."""

    name, summary = "test-proportional", "per-resource split in proportion to the requests (tests)"

    def __init__(self, mode: str = ""):
        self.mode = mode

    def entitlement(self, instance):
        r = request(instance)
        total = r.sum(axis=0)
        A = r * np.minimum(1.0, np.divide(instance.capacity, total, out=np.ones_like(total), where=total > 0))
        if self.mode == "short":  # queue a gets half of what the split gives it
            A[0] /= 2
        elif self.mode == "full":  # every queue gets its whole request: limits and capacity ignored
            A = r.copy()
        elif self.mode == "idle":  # a quarter of the cpu split stays idle
            A[:, 0] *= 0.75
        return A, {}


def queue_instance(requests, capacity=(10, 20), guarantee=None, limit=None, groups=None, weights=None):
    """A flat (or one-level) queue instance over cpu and memory, as a loaded queue case is built."""
    users = [chr(ord("a") + i) for i in range(len(requests))]
    nodes = {g: dict(spec) for g, spec in (groups or {}).items()}
    for i, u in enumerate(users):
        node = {"weight": 1.0 if weights is None else weights[i]}
        for field, values in (("guarantee", guarantee), ("limit", limit)):
            if values is not None and values[i] is not None:
                node[field] = np.array(values[i], dtype=float)
        if groups:
            node["parent"] = next((g for g, spec in groups.items() if u in spec.get("members", ())), None)
        nodes[u] = node
    for spec in nodes.values():
        spec.pop("members", None)
    return fairalloc.Instance(
        list(capacity),
        requests,
        resources=["cpu", "memory"],
        users=users,
        weights=weights,
        max_tasks=[1.0 if any(r) else 0.0 for r in requests],
        queues=Queues.build(["cpu", "memory"], nodes, list(groups or {})),
    )


CONTENDED = [[6, 6], [6, 6]]  # 12 cpu asked of 10: each queue gets 5 cpu, 6 memory


def test_the_four_properties_are_named_and_resolved():
    assert PROPERTIES[8:] == QUEUES
    assert property_names("gh,lr,no,wc") == list(QUEUES)
    assert len(property_names(None)) == 8 and len(property_names(None, queues=True)) == 12


def test_guarantee_honoured_holds_and_fails_with_the_queue_and_resource():
    inst = queue_instance(CONTENDED, guarantee=[[4, np.nan], None])
    held = check_property(Proportional(), inst, "guarantee_honoured")
    assert held.holds and held.margin == pytest.approx(1.0)  # 5 cpu received, 4 guaranteed
    broken = check_property(Proportional("short"), inst, "guarantee_honoured")
    assert not broken.holds and broken.margin == pytest.approx(-1.5)
    assert broken.witness == GuaranteeWitness("a", "cpu", 4.0, 6.0, 2.5)
    assert "queue a receives 2.5 cpu, below its guarantee 4 (request 6)" in broken.summary()
    # a queue asking for less than its guarantee is owed its request only
    small = queue_instance([[2, 2], [6, 6]], guarantee=[[8, 8], None])
    assert check_property(Proportional(), small, "gh").holds
    # Leontief reading: a queue running the largest multiple of its request within its guarantee is
    # served (memory beyond what 10 cpu let it use is worth nothing to it)
    shaped = queue_instance([[11, 1], [1, 1]], capacity=(10, 7), guarantee=[[10, 7], None])
    assert fairalloc.solve(shaped, "drf").tasks[0] == pytest.approx(10 / 11)
    assert check_property("drf", shaped, "gh").holds
    free = check_property(Proportional("short"), queue_instance(CONTENDED), "gh")
    assert free.holds and free.margin == 0 and free.note == "no guarantees"


def test_limit_respected_for_queues_and_groups():
    leaf = queue_instance(CONTENDED, limit=[[5, 6], None])
    assert check_property(Proportional(), leaf, "limit_respected").holds  # a gets exactly 5 cpu and 6 memory
    broken = check_property(Proportional("full"), leaf, "lr")
    assert not broken.holds and broken.witness == LimitWitness("a", "cpu", 5.0, 6.0)
    groups = {"org": {"parent": None, "limit": np.array([8.0, np.inf]), "members": ("a", "b")}}
    grouped = queue_instance(CONTENDED, groups=groups)
    tree = check_property(Proportional(), grouped, "lr")  # 5 + 5 cpu in a group limited to 8
    assert not tree.holds and tree.witness == LimitWitness("org", "cpu", 8.0, 10.0) and tree.margin == -2
    assert "org receives 10 cpu, above its limit 8" in tree.summary()
    free = check_property(Proportional("full"), queue_instance(CONTENDED), "lr")
    assert free.holds and free.note == "no limits"


def test_no_overcommit_lets_an_entitlement_through_and_flags_it():
    inst = queue_instance(CONTENDED)
    assert check_property(Proportional(), inst, "no_overcommit").holds
    over = fairalloc.solve(inst, Proportional("full"))  # the certificate lets an entitlement promise more
    assert over.entitlement and over.bundles[:, 0].sum() == 12
    broken = check_property(Proportional("full"), inst, "no")
    assert not broken.holds and broken.witness == OvercommitWitness("cpu", 12.0, 10.0) and broken.margin == -2


def test_work_conserving_catches_an_idle_resource_a_queue_asks_for():
    inst = queue_instance(CONTENDED)
    assert check_property(Proportional(), inst, "work_conserving").holds
    broken = check_property(Proportional("idle"), inst, "wc")
    assert not broken.holds
    assert broken.witness == IdleWitness("a", 0.625, {"cpu": 2.5})  # 3.75 of 6 cpu; 2.5 cpu idle
    assert broken.margin == pytest.approx(-0.375)  # the tasks it could still run: all it still asks for
    # idle capacity a queue may not take (its limit) is no waste
    capped = queue_instance(CONTENDED, limit=[[3.75, np.inf], [3.75, np.inf]])
    assert check_property(Proportional("idle"), capped, "wc").holds
    # a queue whose request is met wastes nothing, whatever stays idle
    assert check_property(Proportional(), queue_instance([[2, 2], [3, 3]]), "wc").holds


def test_paper_mechanisms_keep_their_numbers_and_hold_the_new_properties():
    t5 = fairalloc.load_case("drf-theorem-5")
    pm = check_property("ceei", t5, "pm")
    assert pm.witness["tasks_after"] == pytest.approx(100 / 21)
    report = check("drf", t5, list(QUEUES))
    assert all(r.holds for r in report.values())
    assert len(check("drf", t5, "si")) == 1 and len(check("asset", fairalloc.load_case("drf-theorem-1"))) == 8


def test_drf_on_a_queue_case_computes_every_property():
    inst = queue_instance([[6, 2], [2, 6], [0, 0]], guarantee=[None, [1, 1], None])
    report = check("drf", inst, budget=40)
    assert list(report) == list(PROPERTIES)
    assert report["population_monotonicity"].applicable and report["population_monotonicity"].holds
    assert report["envy_freeness"].holds and report["pareto_efficiency"].holds
    assert report["no_overcommit"].holds and report["work_conserving"].holds


def test_envy_compares_general_bundles():
    # b asks for memory only: the split gives a 5 cpu and 4 memory, b 8 memory
    inst = queue_instance([[6, 6], [0, 12]], capacity=(5, 12))
    assert fairalloc.solve(inst, Proportional()).bundles.tolist() == [[5.0, 4.0], [0.0, 8.0]]
    assert check_property(Proportional(), inst, "ef").holds  # b values a's bundle at 4/12 < 8/12
    # a gets half its split (2.5 cpu, 3 memory) and envies b's bundle itself (5 cpu, 6 memory), not
    # b's Leontief part of it (5, 5)
    envy = check_property(Proportional("short"), queue_instance(CONTENDED), "ef")
    assert not envy.holds and (envy.witness.user, envy.witness.envies) == ("a", "b")
    assert envy.witness.other_bundle == {"cpu": 5.0, "memory": 6.0}
    assert envy.witness.tasks == pytest.approx(2.5 / 6) and envy.witness.tasks_from_other_bundle == pytest.approx(5 / 6)


def test_the_verifier_values_the_bundle_a_lie_buys():
    inst = queue_instance(CONTENDED)
    lie = search_lie(Proportional(), inst, "a", budget=200)
    # over-reporting cpu buys a larger slice of it; valued with a's true request
    assert lie.profitable and lie.truthful_tasks == pytest.approx(5 / 6)
    assert lie.reported_demand["cpu"] > 6 and lie.manipulated_tasks <= 1 + 1e-9
    bought = fairalloc.solve(inst.with_demand("a", [lie.reported_demand[r] for r in inst.resources]), Proportional())
    assert lie.manipulated_tasks == pytest.approx(min(bought.bundles[0] / inst.demand[0]))
    sp = check_property(Proportional(), inst, "sp", budget=200)
    assert not sp.holds and sp.witness.user in ("a", "b")
    assert not search_lie(Proportional(), queue_instance([[6, 6], [6, 6], [0, 0]]), "c", budget=50).profitable


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["work_conserving", "bottleneck_fairness", "single_resource_fairness"]))
def test_random_queue_instances_round_trip_through_yaml(seed, prop):
    inst = random_queue_instance(InstanceSpace(queues=True), prop, np.random.default_rng(seed), name="r")
    text = yaml.safe_dump(inst.to_dict(), sort_keys=False)
    back = parse_case(yaml.safe_load(text)).instance
    assert back.to_dict() == inst.to_dict() and back.groups == inst.groups
    assert np.array_equal(back.demand, inst.demand) and np.array_equal(back.bounds(), inst.bounds())
    assert 2 <= inst.n <= 6 and (inst.m == 1) == (prop == "single_resource_fairness") and inst.m <= 3
    q = inst.queues
    for v in q.parent:  # a limit is never below a guarantee
        assert not np.any(q.limit[v] < np.nan_to_num(q.guarantee[v], nan=-np.inf))


def test_the_space_draws_what_schedulers_configure():
    space, rng = InstanceSpace(queues=True), np.random.default_rng(7)
    draws = [random_queue_instance(space, "work_conserving", rng) for _ in range(200)]
    guarantees = [np.nansum(d.queues.leaf_array("guarantee", d.users), axis=0) for d in draws]
    assert sum(bool(d.queues.groups) for d in draws) > 30
    assert sum(bool((d.bounds() == 0).any()) for d in draws) > 20
    assert 0 < sum(bool((g > d.capacity).any()) for g, d in zip(guarantees, draws)) < 100
    assert sum(bool(np.isfinite(d.queues.leaf_array("borrowing_limit", d.users)).any()) for d in draws) > 10


def test_shrinking_a_queue_case_keeps_its_configuration():
    groups = {"org": {"parent": None, "limit": np.array([8.0, np.inf]), "members": ("a", "b")}}
    inst = queue_instance([[6, 6], [6, 6], [3, 3]], (12, 24), groups=groups, guarantee=[[5, 1], None, None])
    small, result, _ = fairalloc.analysis.falsify.shrink(Proportional(), "limit_respected", inst, budget=20)
    assert not result.holds and small.queues is not None
    assert set(small.queues.leaf_names) == set(small.users)
    # smaller capacities, never below the guarantees they held
    assert np.all(np.nansum(small.queues.leaf_array("guarantee", small.users), axis=0) <= small.capacity)
    case = parse_case(small.to_dict())
    assert case.instance.queues.limit["org"][0] == 8.0 and case.instance.resources[0] == "cpu"
    assert not check_property(Proportional(), case, "limit_respected").holds


def test_table2_on_queue_instances_finds_and_writes_queue_cases(tmp_path, capsys):
    cells = table2(
        [Proportional()], "no_overcommit,gh", space=InstanceSpace(queues=True), trials=5, workers=1, progress=False
    )
    assert [c.found for c in cells] == [False, True]  # the split ignores guarantees
    assert cells[1].case["users"] and any("guarantee" in u for u in cells[1].case["users"].values())
    # the CLI with --queues: each shrunk counterexample is written as a queue case that loads and still fails
    code, out, err = run_cli(
        capsys,
        *("table2", "-m", "mesos-drf", "-p", "wc,sp", "--queues", "--trials", "6", "--budget", "60"),
        *("--workers", "1", "--no-progress", "--out-dir", str(tmp_path)),
    )
    assert code == 0, err
    written = sorted(tmp_path.glob("*.yaml"))
    assert written and all(p.name.startswith("mesos-drf-violates-") for p in written), out
    for path in written:
        raw = yaml.safe_load(path.read_text())
        assert not any("demand" in spec for spec in raw["users"].values())  # a queue case: requests
        case = fairalloc.load_case(str(path))
        assert case.instance.queues is not None
        claim = case.claims[0]
        assert not claim.holds
        assert not check_property(claim.mechanism, case, claim.property, budget=100).holds
