"""The explorer keeps every field of a case: opened and downloaded again, a case comes back the same.

Through the app's own endpoints (``GET /api/case/NAME`` or ``POST /api/upload``, then ``POST
/api/yaml``) for every bundled case and for two cases that use every field of the format
(``tests/data/every-field-*.yaml``); and, for generated instances, through the form functions.
The browser test repeats the round trip through the page's JavaScript.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairalloc.core.instance import Instance
from fairalloc.explorer import case_from_page, case_mapping, close_app, create_app, page_form
from fairalloc.io.cases import CaseSpec, bundled_cases, load_case, parse_case, read_yaml_text

DATA = Path(__file__).parent / "data"
EVERY_FIELD = sorted(DATA.glob("every-field-*.yaml"))


@pytest.fixture(scope="module")
def client():
    app = create_app()
    yield app.test_client()
    close_app(app)


def downloaded(client, form) -> object:
    response = client.post("/api/yaml", json={"case": form})
    assert response.status_code == 200, response.get_json()
    text = response.get_data(as_text=True)
    return parse_case(read_yaml_text(text, "downloaded.yaml"), "downloaded.yaml")


@pytest.mark.parametrize("name", bundled_cases())
def test_every_bundled_case_comes_back_the_same(client, name, same_case):
    form = client.get(f"/api/case/{name}").get_json()["case"]
    same_case(load_case(name), downloaded(client, json.loads(json.dumps(form))))


@pytest.mark.parametrize("path", EVERY_FIELD, ids=lambda p: p.stem)
def test_a_case_using_every_field_comes_back_the_same(client, path, same_case):
    answer = client.post("/api/upload", json={"text": path.read_text(), "filename": path.name}).get_json()
    assert answer["valid"], answer
    same_case(load_case(path), downloaded(client, answer["case"]))


def test_the_every_field_cases_use_every_field():
    """A field the format gains and these files do not use would go untested: name it here."""
    used: dict[str, set] = {"case": set(), "users": set(), "groups": set(), "variants": set()}
    for path in EVERY_FIELD:
        raw = load_case(path).raw
        used["case"] |= set(raw)
        for row in raw["users"].values():
            used["users"] |= set(row)
        for row in raw.get("groups", {}).values():
            used["groups"] |= set(row)
        for variant in raw.get("variants", []):
            used["variants"] |= set(variant)
    from fairalloc.io.cases import GroupSpec, UserSpec, VariantSpec

    assert used["case"] == set(CaseSpec.model_fields)
    assert used["users"] == set(UserSpec.model_fields)
    assert used["groups"] == set(GroupSpec.model_fields)
    assert used["variants"] == set(VariantSpec.model_fields)


def test_every_field_cases_hold_their_expectations():
    from fairalloc.analysis.reproduce import reproduce_case, summary

    for path in EVERY_FIELD:
        result = summary(reproduce_case(load_case(path)))
        assert result["mismatches"] == 0 and result["refuted_claims"] == 0 and result["reproduced"] >= 3, path


def test_per_resource_weights_keep_their_values(client):
    """A reported bug: weights {cpu: 2, mem: 1, gpu: 1} came back as 2 for every resource."""
    case = load_case(DATA / "every-field-tasks.yaml")
    form = page_form(case)
    assert form["users"][0]["weight"] == {"cpu": 2, "mem": 1, "gpu": 1}
    back = downloaded(client, form)
    np.testing.assert_array_equal(back.instance.weights[back.instance.user_index("A")], [2, 1, 1])


@st.composite
def instances(draw) -> Instance:
    n, m = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    number = st.floats(0.01, 1e3, allow_nan=False, allow_infinity=False)
    demand = [[draw(st.one_of(st.just(0.0), number)) for _ in range(m)] for _ in range(n)]
    for row in demand:
        if not any(row):
            row[0] = 1.0
    weights = draw(st.one_of(st.none(), st.lists(number, min_size=n, max_size=n)))
    bounds = draw(st.one_of(st.none(), st.lists(st.one_of(st.just(np.inf), number), min_size=n, max_size=n)))
    names = draw(
        st.lists(st.text("ab1 _-", min_size=1, max_size=4).filter(str.strip), min_size=n, max_size=n, unique=True)
    )
    capacity = [draw(number) for _ in range(m)]
    return Instance(
        capacity, demand, users=names, weights=weights, max_tasks=bounds, resources=[f"r{j}" for j in range(m)]
    )


@settings(max_examples=60, deadline=None)
@given(inst=instances())
def test_generated_instances_come_back_the_same(inst, same_case):
    case = parse_case(inst.to_dict())
    form = json.loads(json.dumps(page_form(case)))
    same_case(case, case_from_page(form))
    assert parse_case(case_mapping(form)).instance.to_dict() == case.instance.to_dict()
