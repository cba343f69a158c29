"""The CLI's outputs and contracts, the Python API, the registry and plug-ins, program export."""

import json

import numpy as np
import pytest
import yaml

import fairalloc
from fairalloc import registry
from fairalloc.testing import close
from fairalloc.testing import run_cli as run


def test_solve_json_contract(capsys):
    code, out, err = run(capsys, "solve", "drf-section-4-1", "--format", "json")
    assert code == 0 and err == ""
    (data,) = json.loads(out)  # a list with one object per mechanism, always
    assert data["case"] == "drf-section-4-1" and data["mechanism"] == "drf"
    assert data["users"]["A"]["tasks"] == pytest.approx(3.0)
    assert data["users"]["A"]["dominant_share"] == pytest.approx(2 / 3)
    assert data["users"]["A"]["allocation"] == pytest.approx({"cpu": 3.0, "mem": 12.0})
    assert data["resources"]["cpu"] == {
        "capacity": 9.0,
        "used": pytest.approx(9.0),
        "utilization": pytest.approx(1.0),
        "saturated": True,
    }


def test_solve_several_mechanisms_gives_a_list_and_exact_fractions(capsys):
    code, out, _ = run(capsys, "solve", "drf-section-4-1", "-m", "drf,asset,ceei", "--format", "json", "--exact")
    data = json.loads(out)
    assert [d["mechanism"] for d in data] == ["drf", "asset", "ceei"]
    assert [data[2]["users"][u]["tasks_exact"] for u in "AB"] == ["45/11", "18/11"]
    assert [data[1]["users"][u]["tasks_exact"] for u in "AB"] == ["63/25", "54/25"]
    assert data[2]["resources"]["cpu"]["price"] == pytest.approx(0.2)


def test_solve_table_shows_the_section_4_1_numbers(capsys):
    code, out, _ = run(capsys, "solve", "drf-section-4-1", "-m", "drf,asset,ceei", "--exact")
    assert code == 0
    for text in ("63/25", "54/25", "45/11", "18/11", "2.52", "2.16", "4.0909", "1.6364"):
        assert text in out


@pytest.mark.parametrize("fmt", ["yaml", "csv"])
def test_other_formats_parse(capsys, fmt):
    code, out, _ = run(capsys, "solve", "drf-section-4-1", "-m", "drf,ceei", "--format", fmt)
    assert code == 0
    if fmt == "yaml":
        assert yaml.safe_load(out)[1]["users"]["B"]["tasks"] == pytest.approx(18 / 11)
    else:
        rows = [line.split(",") for line in out.strip().splitlines()]
        assert rows[0] == ["mechanism", "user", "tasks", "dominant_share", "cpu", "mem"]
        assert len(rows) == 5 and float(rows[1][2]) == 3.0


def test_compare_lists_every_static_mechanism(capsys):
    code, out, _ = run(capsys, "compare", "drf-section-4-1", "--format", "json")
    assert [d["mechanism"] for d in json.loads(out)] == registry.available("static", families=False)
    code, out, _ = run(capsys, "compare", "drf-section-4-1")
    assert "utilisation" in out and "bundles" in out


def test_model_shows_and_writes_the_programs(capsys, tmp_path):
    code, out, _ = run(capsys, "model", "drf-section-4-1", "-m", "asset")
    assert code == 0 and "capacity_cpu" in out and "share_B" in out
    code, out, _ = run(capsys, "model", "zero-demands-population-monotonicity", "--write", str(tmp_path / "drf.lp"))
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["drf.round1.lp", "drf.round2.lp"]  # users 1, 3 freeze, then user 2
    assert "Maximize" in (tmp_path / "drf.round2.lp").read_text()
    code, out, _ = run(capsys, "model", "drf-section-4-1", "-m", "utilitarian", "--write", str(tmp_path / "u.mps"))
    assert (tmp_path / "u.mps").read_text().startswith("*SENSE:Maximize")
    code, out, _ = run(capsys, "model", "drf-section-4-1", "-m", "ceei", "--write", str(tmp_path / "c.txt"))
    assert "log" in (tmp_path / "c.txt").read_text()


def test_cases_and_mechanisms_listings(capsys):
    code, out, _ = run(capsys, "cases", "--format", "json")
    names = [c["name"] for c in json.loads(out)]
    assert "drf-section-4-1" in names and names == fairalloc.bundled_cases()
    code, out, _ = run(capsys, "mechanisms")
    assert all(name in out for name in ("drf", "asset", "ceei", "utilitarian"))


def test_help_teaches(capsys):
    for argv in (["--help"], ["solve", "--help"], ["compare", "--help"], ["model", "--help"], ["cases", "--help"]):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "Usage:" in out
    assert "fairalloc compare drf-section-4-1" in run(capsys, "--help")[1]


# -- registry and plug-ins ------------------------------------------------------------------------


class HalfDRF(fairalloc.Mechanism):
    """A toy plug-in: DRF's allocation, halved (tests only)."""

    summary = "half of DRF"

    def fast(self, instance):
        drf = fairalloc.solve(instance, "drf")
        return fairalloc.Allocation(instance, drf.tasks / 2, self.name, "fast")


def test_register_decorator_makes_a_mechanism_usable_everywhere(capsys):
    fairalloc.register("half-drf", replace=True)(HalfDRF)
    try:
        assert "half-drf" in fairalloc.available()
        assert fairalloc.solve(fairalloc.load_case("drf-section-4-1"), "half-drf").tasks.tolist() == [1.5, 1.0]
        code, out, _ = run(capsys, "solve", "drf-section-4-1", "-m", "half-drf", "--format", "json")
        assert json.loads(out)[0]["users"]["B"]["tasks"] == 1.0
        with pytest.raises(fairalloc.FairallocError, match="exists already"):
            fairalloc.register("half-drf")(HalfDRF)
        with pytest.raises(fairalloc.FairallocError, match="no fast path|no declarative program"):
            fairalloc.get("half-drf").allocate(fairalloc.load_case("drf-section-4-1").instance, "program")
    finally:
        registry._REGISTRY.pop("half-drf", None)


def test_entry_point_group_loads_plugins(monkeypatch):
    from importlib.metadata import EntryPoint

    ep = EntryPoint(name="half-drf-ep", value=f"{__name__}:HalfDRF", group="fairalloc.mechanisms")
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep] if group == "fairalloc.mechanisms" else [])
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    try:
        assert fairalloc.get("half-drf-ep").summary == "half of DRF"
    finally:
        registry._REGISTRY.pop("half-drf-ep", None)


def test_unknown_names_list_the_known_ones():
    with pytest.raises(fairalloc.UnknownNameError, match="unknown mechanism 'dfr'; did you mean 'drf'\\?$"):
        fairalloc.get("dfr")
    with pytest.raises(fairalloc.UnknownNameError, match=r"unknown mechanism 'xyz' \(mechanisms: drf, asset, ceei"):
        fairalloc.get("xyz")
    inst = fairalloc.load_case("drf-section-4-1").instance
    with pytest.raises(fairalloc.UnknownNameError, match="users: A, B"):
        inst.user_index("C")
    with pytest.raises(fairalloc.UnknownNameError, match=r"^method: unknown method 'magic'"):
        fairalloc.solve(inst, "drf", method="magic")


# -- instances ------------------------------------------------------------------------------------


def test_instances_are_immutable_and_derived_instances_are_new():
    inst = fairalloc.load_case("drf-section-4-1").instance
    with pytest.raises(ValueError):
        inst.demand[0, 0] = 5
    lie = inst.with_demand("A", {"cpu": 2, "mem": 4})
    assert lie.demand[0].tolist() == [2, 4] and inst.demand[0].tolist() == [1, 4]
    assert inst.without_user("A").users == ("B",)
    joined = inst.with_user("C", {"cpu": 1}, weight=2, max_tasks=3)
    assert joined.users == ("A", "B", "C") and joined.weights.tolist() == [1, 1, 2]
    assert joined.max_tasks.tolist() == [np.inf, np.inf, 3]
    assert inst.with_capacity({"mem": 36}).capacity.tolist() == [9, 36]
    more = inst.with_resource("gpu", 4, demand=[0, 1])
    assert more.resources == ("cpu", "mem", "gpu") and more.demand[:, 2].tolist() == [0, 1]
    # DRF is not resource monotone: with twice the memory A's dominant share per task drops to
    # 1/9 (CPU and memory tie), so x = 3y and CPU binds at y = 3/2: B falls from 2 to 3/2
    assert close(fairalloc.solve(inst.with_capacity({"mem": 36}), "drf").tasks, [4.5, 1.5])


def test_round_trip_through_a_case_mapping():
    inst = fairalloc.Instance.from_arrays(
        [9, 18],
        [[1, 4], [3, 1]],
        resources=["cpu", "mem"],
        users=["A", "B"],
        weights=[[1, 2], [1, 1]],
        max_tasks=[5, np.inf],
        shared=[0.5, 0.5],
    )
    again = fairalloc.parse_case(inst.to_dict()).instance
    for attr in ("capacity", "demand", "weights", "max_tasks", "shared"):
        assert np.array_equal(getattr(inst, attr), getattr(again, attr))
    assert again.users == inst.users and again.resources == inst.resources


def test_allocation_views():
    alloc = fairalloc.solve(fairalloc.load_case("drf-section-4-1"), "ceei")
    assert alloc["A"] == pytest.approx(45 / 11)
    assert "45/11" in alloc.table(exact=True) and "price" in alloc.table()
    assert "<table" in alloc._repr_html_() and "4.0909" in alloc._repr_html_()
    assert alloc.info["newton_iterations"] >= 1
