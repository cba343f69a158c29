"""yarn-capacity: the YARN Capacity Scheduler's fixed point, its order and used capacities, and the
importer of capacity-scheduler.xml and of the Capacity Scheduler's REST answer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairalloc
from fairalloc.analysis.reproduce import reproduce_case
from fairalloc.core.queues import Queues
from fairalloc.io.cases import parse_case
from fairalloc.io.importers import import_files
from fairalloc.io.importers.common import ImportFailed
from fairalloc.models.yarn_capacity import YarnCapacity, capacity_tree, fixed_point, level_fill, within
from fairalloc.testing import run_cli

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted(ROOT.joinpath("cases").glob("yarn-capacity-*.yaml"))
SLS = ROOT / "cases" / "imported" / "yarn" / "capacity-scheduler-sls" / "capacity-scheduler.xml"
PREFIX = "yarn.scheduler.capacity."


def test_every_ported_case_reproduces():
    """TestParentQueue's asserted used capacities and orders (9 states, 28 checked values)."""
    rows = [row for path in CASES for row in reproduce_case(fairalloc.load_case(path))]
    assert len(CASES) >= 9 and len(rows) >= 28
    assert all(r.status == "ok" for r in rows), [r for r in rows if r.status != "ok"]


def test_a_wrong_order_is_caught(tmp_path):
    text = ROOT.joinpath("cases", "yarn-capacity-single-level-queues-2.yaml").read_text()
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(text.replace("order: [b, a]", "order: [a, b]"))
    statuses = [r.status for r in reproduce_case(fairalloc.load_case(wrong))]
    assert statuses.count("MISMATCH") == 1


def _instance(capacity, leaves, groups=None):
    """One resource (memory-mb); ``leaves``: ``{name: (request or None, spec)}``; ``groups``: ``{name: spec}``."""
    groups = groups or {}
    users = list(leaves)
    demand = [[leaves[u][0] or 0.0] for u in users]
    bound = [1.0 if leaves[u][0] else 0.0 for u in users]
    nodes = {**groups, **{u: leaves[u][1] for u in users}}
    q = Queues.build(["memory-mb"], nodes, list(groups))
    return fairalloc.Instance([capacity], demand, users=users, resources=["memory-mb"], max_tasks=bound, queues=q)


def _memory(inst):
    return dict(zip(inst.users, fairalloc.solve(inst, "yarn-capacity").bundles[:, 0].tolist(), strict=True))


# -- the fixed point, by hand -------------------------------------------------------------------
def test_elasticity_down_a_tree():
    """A (40%: a1, a2 at 20% each) and B (60%, maximum 70%) on 100 units.  a1 asks 100, a2 5, b 100: at the root
    A and B both reach used capacity 1 (40 and 60, below their caps 100 and 70); inside A, a2 stops at its 5
    (used capacity 1/4) and a1 takes the other 35.  When b asks only 30, A takes the 70 left: a1 65."""
    groups = {"A": {"guarantee": [40]}, "B": {"guarantee": [60], "limit": [70]}}
    leaves = {"a1": (100, {"parent": "A", "guarantee": [20]}), "a2": (5, {"parent": "A", "guarantee": [20]})}
    inst = _instance(100, {**leaves, "b": (100, {"parent": "B", "guarantee": [60]})}, groups)
    assert _memory(inst) == pytest.approx({"a1": 35, "a2": 5, "b": 60})
    inst = _instance(100, {**leaves, "b": (30, {"parent": "B", "guarantee": [60]})}, groups)
    assert _memory(inst) == pytest.approx({"a1": 65, "a2": 5, "b": 30})


def test_the_maximum_caps_a_queue_and_the_rest_stays_idle():
    """b (capacity 50%, maximum 60%) alone asks for everything: it stops at 60, 40 stay idle."""
    inst = _instance(100, {"a": (None, {"guarantee": [50]}), "b": (100, {"guarantee": [50], "limit": [60]})})
    assert _memory(inst) == pytest.approx({"a": 0, "b": 60})


def test_zero_capacity_queues_take_what_the_others_leave():
    """a and b (50% each) are capped at 30 and 60; z and y (capacity 0), served after them, split the 10 left
    equally (PriorityQueueComparator: capacity 0 last, then least absolute used capacity)."""
    leaves = {
        "a": (30, {"guarantee": [50]}),
        "b": (100, {"guarantee": [50], "limit": [60]}),
        "z": (100, {}),
        "y": (100, {}),
    }
    assert _memory(_instance(100, leaves)) == pytest.approx({"a": 30, "b": 60, "z": 5, "y": 5})
    assert level_fill([0.0, 0.0], [1.0, 100.0], 10.0) == [1.0, 9.0]


def test_order_and_used_capacity_of_a_zero_capacity_queue():
    leaves = {"a": (1, {"guarantee": [50], "usage": [60]}), "z": (1, {"usage": [5]}), "y": (1, {})}
    inst = _instance(100, leaves)
    shares = YarnCapacity().shares(inst)
    assert shares["a"] == pytest.approx(1.2) and shares["z"] == pytest.approx(0.05) and shares["y"] == 0
    # a, above its capacity, still comes first; then y (nothing used) before z (5 of the cluster's 100)
    assert YarnCapacity().order(inst) == ["a", "y", "z"]


def test_bundles_follow_the_request_and_only_memory_counts():
    """DefaultResourceCalculator: memory alone decides; a queue's vcores come with its memory, in the proportion
    of its request, even past the cluster's vcores (the calculator never looks at them)."""
    q = Queues.build(["memory-mb", "vcores"], {"a": {"guarantee": [50, 5]}, "b": {"guarantee": [50, 5]}}, [])
    inst = fairalloc.Instance(
        [100, 10], [[100, 20], [10, 1]], users=["a", "b"], max_tasks=[1, 1], resources=["memory-mb", "vcores"], queues=q
    )
    bundles = fairalloc.solve(inst, "yarn-capacity").bundles
    assert bundles.ravel().tolist() == pytest.approx([90, 18, 10, 1])  # 19 vcores promised of 10


# -- an independent computation: assigning containers one by one ----------------------------------
def _simulate(inst, container: float) -> dict[str, float]:
    """The Capacity Scheduler's loop, container by container: from the root, the child that can still take a
    container within its limit (and its parent's) first by capacity (0 last), then least used capacity (capacity
    0: absolute used capacity), then larger capacity, down to a leaf with a request left."""
    tree = capacity_tree(inst)
    q = tree.q
    want = {u: float(inst.demand[i, 0] * inst.bounds()[i]) for i, u in enumerate(inst.users)}
    used = dict.fromkeys(q.parent, 0.0)
    limit = {v: float(q.limit[v][0]) for v in q.parent}

    def fits(v: str) -> bool:
        if used[v] + container > min(limit[v], tree.total) + 1e-9:
            return False
        if not q.is_group(v):
            return used[v] + container <= want[v] + 1e-9
        return any(fits(c) for c in q.children(v))

    def key(v: str):
        g = tree.guarantee[v]
        return (g <= 0, used[v] / (g if g > 0 else tree.total), -g)

    while sum(used[c] for c in q.children(None)) + container <= tree.total + 1e-9:
        options = [c for c in q.children(None) if fits(c)]
        if not options:
            break
        node = min(options, key=key)
        path = [node]
        while q.is_group(node):
            node = min((c for c in q.children(node) if fits(c)), key=key)
            path.append(node)
        for v in path:
            used[v] += container
    return {u: used[u] for u in inst.users}


@st.composite
def trees(draw):
    """Capacity Scheduler trees: siblings' capacities add up to their parent's (in whole units of 1/8 of it),
    maxima at least the capacity, some queues of capacity 0, requests or none."""
    total = 64.0 * draw(st.integers(1, 4))
    groups: dict[str, dict] = {}
    leaves: dict[str, tuple] = {}

    def split(parent, share, cap, depth, prefix):
        k = draw(st.integers(1, 3))
        eighths = draw(st.lists(st.integers(0, 8), min_size=k, max_size=k))
        norm = sum(eighths) or 1
        for i, e in enumerate(eighths):
            name = f"{prefix}{i}"
            g = share * e / norm
            top = draw(st.sampled_from([None, 0.5, 0.75, 1.0]))
            lim = cap if top is None else max(g, cap * top)
            spec = {"parent": parent, "guarantee": [g], "limit": [lim]}
            if depth < 2 and draw(st.booleans()):
                groups[name] = spec
                split(name, g, lim, depth + 1, name + ".")
            else:
                spec = {"parent": spec.pop("parent"), **spec}
                request = draw(st.one_of(st.none(), st.integers(1, int(total)).map(float)))
                leaves[name] = (request, spec)

    split(None, total, total, 0, "q")
    return total, leaves, groups


def _fixed(inst):
    return fixed_point(capacity_tree(inst))


@settings(max_examples=60, deadline=None)
@given(trees())
def test_properties_of_the_fixed_point(tree):
    total, leaves, groups = tree
    inst = _instance(total, leaves, groups)
    t = capacity_tree(inst)
    memory = _fixed(inst)
    assert within(t, memory)  # every queue within its maximum and its request, children within their parent
    tops = sum(memory[c] for c in t.q.children(None))
    assert tops <= total * (1 + 1e-12)
    assert tops == pytest.approx(min(total, sum(t.cap[c] for c in t.q.children(None))))  # nothing idle if wanted
    for u, (request, spec) in leaves.items():
        g = spec["guarantee"][0]
        if request is not None:  # a guarantee is kept: at least min(capacity, request)
            assert memory[u] >= min(g, request) - 1e-9 * total, (u, memory[u], g, request)
        else:
            assert memory[u] == 0
    bundles = fairalloc.solve(inst, "yarn-capacity").bundles[:, 0]
    assert bundles.tolist() == pytest.approx([memory[u] for u in inst.users])


@settings(max_examples=25, deadline=None)
@given(trees())
def test_the_exact_levels_are_the_programs(tree):
    """The breakpoint computation and the LP rounds (method="program") agree to the solver's precision."""
    inst = _instance(*tree)
    fast = fairalloc.solve(inst, "yarn-capacity", method="fast").bundles
    program = fairalloc.solve(inst, "yarn-capacity", method="program")
    assert program.method == "program" and program.info["lps"] >= 1
    assert np.allclose(fast, program.bundles, rtol=1e-7, atol=1e-7 * tree[0])


def test_the_program_is_readable_before_it_is_solved():
    inst = fairalloc.load_case("yarn-capacity-multi-level-queues-3").instance
    program = fairalloc.program(inst, "yarn-capacity")
    assert program.pending and [t for t, _ in program.models] == ["root round 1"]
    assert "used_capacity_a" in program.text() and "capacity_memory_mb" in program.text()
    assert program.solve().bundles[:, 0].tolist() == pytest.approx([1024] * 7)  # every request fits
    assert "c111 round 1" in [t for t, _ in program.models]
    assert any("pool_memory_mb" in str(lp) for _, lp in program.models)
    # the children of capacity 0 have LPs of their own, after their siblings'
    inst = _instance(100, {"a": (30, {"guarantee": [50]}), "b": (90, {"guarantee": [50]}), "z": (100, {})})
    program = fairalloc.program(inst, "yarn-capacity")
    assert program.solve().bundles[:, 0].tolist() == pytest.approx([30, 70, 0])
    program = fairalloc.program(_instance(100, {"a": (30, {"guarantee": [50]}), "z": (100, {})}), "yarn-capacity")
    assert program.solve().bundles[:, 0].tolist() == pytest.approx([30, 70])
    assert "root capacity 0 round 1" in [t for t, _ in program.models]


@settings(max_examples=30, deadline=None)
@given(trees())
def test_the_fixed_point_is_where_container_assignment_ends(tree):
    """Containers of 1/16 unit: every leaf ends within two containers of the fluid fixed point (a queue stops
    up to one container short of a cap or of its parent's share)."""
    total, leaves, groups = tree
    inst = _instance(total, leaves, groups)
    container = 1 / 16
    simulated = _simulate(inst, container)
    memory = _fixed(inst)
    slack = 2 * container + 1e-9 * total
    for u in inst.users:
        assert abs(simulated[u] - memory[u]) <= slack, (u, simulated[u], memory[u])


# -- the importer ------------------------------------------------------------------------------------
def _xml(tmp_path, props: dict[str, str], name="capacity-scheduler.xml") -> str:
    body = "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in props.items())
    path = tmp_path / name
    path.write_text(f"<?xml version='1.0'?><configuration>{body}</configuration>")
    return str(path)


def _with_requests(case: dict, requests: dict[str, float]) -> dict:
    """The imported configuration with work: these requests as recorded (the import, with none, is backlogged)."""
    assert case.pop("demand") == "backlogged"
    for u, r in requests.items():
        case["users"][u]["request"] = {"memory-mb": r}
    return case


def test_user_limit_factor_caps_a_single_user_queue():
    """The SLS configuration keeps user-limit-factor 1: sls_queue_1 alone stops at its 25% although its maximum
    is 100% (UsersManager.computeUserLimit: capacity x user-limit-factor)."""
    case, warnings = import_files([str(SLS)], capacity={"memory-mb": "102400", "vcores": "100"})
    assert warnings == []
    inst = parse_case(_with_requests(case, {"root.sls_queue_1": 102400, "root.sls_queue_3": 10240})).instance
    assert _memory(inst) == pytest.approx({"root.sls_queue_1": 25600, "root.sls_queue_2": 0, "root.sls_queue_3": 10240})


def test_a_larger_user_limit_factor_lets_the_queue_grow(tmp_path):
    props = {
        f"{PREFIX}root.queues": "a,b",
        f"{PREFIX}root.a.capacity": "25",
        f"{PREFIX}root.a.user-limit-factor": "4",
        f"{PREFIX}root.b.capacity": "75",
        f"{PREFIX}root.b.maximum-capacity": "80",
        f"{PREFIX}root.b.user-limit-factor": "-1",
    }
    case, warnings = import_files([_xml(tmp_path, props)], capacity={"memory-mb": "1000", "vcores": "10"})
    assert warnings == []
    assert case["users"]["root.a"]["limit"] == {"memory-mb": "100%", "vcores": "100%"}  # min(100%, 4 x 25%)
    assert case["users"]["root.b"]["limit"] == {"memory-mb": "80%", "vcores": "80%"}  # -1: no user limit
    inst = parse_case(_with_requests(case, {"root.a": 1000, "root.b": 100})).instance
    assert _memory(inst) == pytest.approx({"root.a": 900, "root.b": 100})


def test_nested_percentages_weights_and_absolute_resources(tmp_path):
    props = {
        f"{PREFIX}root.queues": "prod, dev",
        f"{PREFIX}root.prod.capacity": "40",
        f"{PREFIX}root.prod.maximum-capacity": "50",
        f"{PREFIX}root.prod.queues": "etl,adhoc",
        f"{PREFIX}root.prod.etl.capacity": "3w",
        f"{PREFIX}root.prod.adhoc.capacity": "1w",
        f"{PREFIX}root.prod.etl.maximum-capacity": "50",
        f"{PREFIX}root.dev.capacity": "60",
        f"{PREFIX}root.dev.queues": "x",
        f"{PREFIX}root.dev.x.capacity": "100",
        f"{PREFIX}root.dev.x.user-limit-factor": "2",
    }
    case, warnings = import_files([_xml(tmp_path, props)], capacity={"memory-mb": "1000", "vcores": "10"})
    assert warnings == []
    users, groups = case["users"], case["groups"]
    assert groups["root.prod"]["guarantee"]["memory-mb"] == "40%" and groups["root.prod"]["limit"]["vcores"] == "50%"
    assert users["root.prod.etl"]["guarantee"]["memory-mb"] == "30%"  # 3/4 of 40%
    assert users["root.prod.etl"]["limit"]["memory-mb"] == "25%"  # 50% of prod's 50%; user limit 1 x 30% is more
    assert users["root.prod.adhoc"]["limit"]["memory-mb"] == "10%"  # one user: 1 x its 10%
    assert users["root.dev.x"]["limit"]["memory-mb"] == "100%"  # min(100%, 2 x 60%)
    absolute = {
        f"{PREFIX}root.queues": "a",
        f"{PREFIX}root.a.capacity": "[memory=2048,vcores=2]",
        f"{PREFIX}root.a.maximum-capacity": "[memory=4096,vcores=4]",
        f"{PREFIX}root.a.user-limit-factor": "1.5",
    }
    case, _ = import_files([_xml(tmp_path, absolute, "abs.xml")], capacity={"memory-mb": "8192", "vcores": "8"})
    assert case["users"]["root.a"]["guarantee"] == {"memory-mb": 2048, "vcores": 2}
    assert case["users"]["root.a"]["limit"] == {"memory-mb": 3072, "vcores": 3}


def test_what_is_not_modelled_is_warned_about(tmp_path):
    props = {
        f"{PREFIX}resource-calculator": "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
        f"{PREFIX}root.queues": "a,b",
        f"{PREFIX}root.a.capacity": "50",
        f"{PREFIX}root.a.priority": "2",
        f"{PREFIX}root.a.minimum-user-limit-percent": "25",
        f"{PREFIX}root.a.acl_submit_applications": "*",
        f"{PREFIX}root.b.capacity": "40",
        f"{PREFIX}root.b.state": "STOPPED",
        f"{PREFIX}root.b.accessible-node-labels.gpu.capacity": "100",
        f"{PREFIX}root.b.frobnicate": "1",
        f"{PREFIX}node-locality-delay": "40",
        f"{PREFIX}mystery": "1",
    }
    path = _xml(tmp_path, props)
    _, warnings = import_files([path], capacity={"memory-mb": "100", "vcores": "10"})
    expected = [
        "queue root: queues: the children's capacities add up to 90%",
        "queue root.b: state: STOPPED: read as a running queue",
        "queue root.a: minimum-user-limit-percent: one user per leaf queue: does not bind",
        "scheduler: yarn.scheduler.capacity.resource-calculator: DominantResourceCalculator: fairalloc compares",
        "queue root.a: priority: queue priorities (priority-utilization ordering) are not modelled",
        "queue root.b: accessible-node-labels.gpu.capacity: node labels are not modelled",
        "queue root.b: frobnicate: not a queue property fairalloc knows: not read",
        "scheduler: yarn.scheduler.capacity.mystery: not a Capacity Scheduler property fairalloc knows",
    ]
    for text in expected:
        assert any(text in w and w.startswith(path) for w in warnings), (text, warnings)
    assert len(warnings) == len(expected), warnings


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"root.a.capacity": "lots"}, "queue root.a: capacity: 'lots' is not a number"),
        ({"root.a.capacity": "150"}, "queue root.a: capacity: 150 is above 100%"),
        ({"root.a.maximum-capacity": "[memory=1"}, "queue root.a: maximum-capacity: '[memory=1' has no closing ']'"),
        ({"root.a.user-limit-factor": "-3"}, "queue root.a: user-limit-factor: '-3' is negative"),
    ],
)
def test_bad_values_are_one_line(tmp_path, props, message):
    path = _xml(tmp_path, {f"{PREFIX}root.queues": "a", **{PREFIX + k: v for k, v in props.items()}})
    with pytest.raises(ImportFailed) as exc:
        import_files([path], capacity={"memory-mb": "100", "vcores": "10"})
    assert str(exc.value) == f"{path}: {message}"


def test_the_command_line_refuses_bad_values_in_one_line(tmp_path, capsys):
    path = _xml(tmp_path, {f"{PREFIX}root.queues": "a", f"{PREFIX}root.a.maximum-capacity": "most"})
    target = tmp_path / "c.yaml"
    code, out, err = run_cli(capsys, "import", path, "--capacity", "memory-mb=100,vcores=10", "--out", str(target))
    assert code == 2 and out == "" and not target.exists()
    assert err.strip() == f"fairalloc: {path}: queue root.a: maximum-capacity: 'most' is not a number"


def test_fair_and_capacity_files_are_not_mixed(tmp_path):
    fair = tmp_path / "fair-scheduler.xml"
    fair.write_text("<allocations><queue name='a'/></allocations>")
    cs = _xml(tmp_path, {f"{PREFIX}root.queues": "a", f"{PREFIX}root.a.capacity": "100"})
    with pytest.raises(ImportFailed, match="import them apart"):
        import_files([str(fair), cs])


def _rest(queues) -> dict:
    info = {"type": "capacityScheduler", "capacity": 100.0, "queueName": "root", "queues": {"queue": queues}}
    return {"scheduler": {"schedulerInfo": info}}


def _leaf(name, absolute, used, pending=None, **extra):
    q = {
        "queueName": name,
        "type": "capacitySchedulerLeafQueueInfo",
        "absoluteCapacity": absolute,
        "absoluteMaxCapacity": 100.0,
        "resourcesUsed": {"memory": used, "vCores": 1},
        "userLimitFactor": 1.0,
        "userLimit": 100,
        **extra,
    }
    if pending is not None:
        row = {"partitionName": "", "used": {"memory": used}, "pending": {"memory": pending, "vCores": 1}}
        q["resources"] = {"resourceUsagesByPartition": [row]}
    return q


def test_rest_pending_resources_make_the_request(tmp_path):
    path = tmp_path / "scheduler.json"
    queues = [_leaf("a", 30.0, 2048, 4096, userLimitFactor=3.0), _leaf("b", 70.0, 1024, 0)]
    path.write_text(json.dumps(_rest(queues)))
    case, warnings = import_files([str(path)], capacity={"memory-mb": "10240", "vcores": "10"})
    assert warnings == [] and case["policy"] == "yarn-capacity"
    a = case["users"]["root.a"]
    assert a["request"] == {"memory-mb": 6144, "vcores": 2} and a["usage"] == {"memory-mb": 2048, "vcores": 1}
    assert a["guarantee"]["memory-mb"] == "30%" and a["limit"]["memory-mb"] == "90%"  # 3 x 30%
    inst = parse_case(case).instance
    assert _memory(inst) == pytest.approx({"root.a": 6144, "root.b": 1024})
    assert YarnCapacity().order(inst) == ["root.b", "root.a"]  # b: 1024 of 7168 used, a: 2048 of 3072


def test_rest_xml_answer(tmp_path):
    path = tmp_path / "scheduler.xml"
    path.write_text(
        "<scheduler><schedulerInfo xmlns:xsi='http://www.w3.org/2001/XMLSchema-instance' xsi:type='capacityScheduler'>"
        "<capacity>100.0</capacity><queueName>root</queueName><queues>"
        "<queue xsi:type='capacitySchedulerLeafQueueInfo'><queueName>a</queueName><absoluteCapacity>100.0"
        "</absoluteCapacity><absoluteMaxCapacity>100.0</absoluteMaxCapacity><state>STOPPED</state>"
        "<resourcesUsed><memory>512</memory><vCores>1</vCores></resourcesUsed></queue>"
        "</queues></schedulerInfo></scheduler>"
    )
    case, warnings = import_files([str(path)], capacity={"memory-mb": "1024", "vcores": "4"})
    assert case["policy"] == "yarn-capacity" and case["users"]["root.a"]["usage"] == {"memory-mb": 512, "vcores": 1}
    assert warnings == [f"{path}: queue root.a: state: STOPPED: read as a running queue"]
