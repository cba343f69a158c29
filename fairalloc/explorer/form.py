"""The explorer page's form of a case, and back: every field of a case file, nothing lost.

The page edits a case as this *form*: the case file's own fields and spellings, with the three
tables whose order matters (resources, users, groups) as lists of rows, because a JSON object
keyed by names would lose their order in the browser (JavaScript sorts integer-like keys first)::

    {"name": ..., "source": ..., "description": ..., "policy": ..., "demand": ...,
     "resources": [{"name": "cpu", "capacity": 9, "unit": "cores"}, ...],
     "users": [{"name": "A", "demand": {"cpu": 1}, "weight": 2 | {"cpu": 2}, "max_tasks": ...,
                "shared": ..., "group": ..., "request": {...}, "usage": {...}, "priority": ...,
                "guarantee": {...}, "limit": {...}, "borrowing_limit": {...}, "lending_limit": {...},
                "user_expectation": {...}}, ...],
     "arrivals": ["B", "A"] | null,
     "groups": [{"name": "org", "parent": ..., "weight": ..., "priority": ..., "guarantee": {...}, ...}],
     "variants": [...], "expect": [...], "claims": [...], "errata": [...]}

A resource's ``unit`` is the file's ``units`` entry and a user's ``user_expectation`` the file's
``user_expectation`` entry, kept on their rows so that renaming or removing the row carries them.
``variants``, ``expect``, ``claims`` and ``errata`` are kept as the file writes them.

:func:`page_form` writes the form of a loaded case; :func:`case_mapping` writes a form back as the
case file's mapping (in the order of the file format), which :func:`fairalloc.io.cases.parse_case`
validates.  A value the page could not read as a number is sent as its text, so that the case
validation names the field and what is wrong with it.  The round trip is exact: for every case,
``parse_case(case_mapping(page_form(case)))`` is the same case (``tests/test_explorer_form.py``).

A job workload (``explore CASE --workload W``) is carried as its file's mapping (:func:`workload_form`:
``nodes`` and ``jobs`` by name, each job's fields as a workload file spells them), which the page
sends back with the case it edits to replay the one against the other.
"""

from __future__ import annotations

import json
from typing import Any

from fairalloc.core.errors import CaseError, FairallocError, excerpt, unknown
from fairalloc.core.limits import (
    MAX_EXPLORER_GROUPS,
    MAX_EXPLORER_RESOURCES,
    MAX_EXPLORER_USERS,
    MAX_EXPLORER_WORKLOAD_JOBS,
    MAX_REQUEST_BYTES,
)
from fairalloc.io.cases import Case, CaseSpec, parse_case
from fairalloc.io.job_workloads import JobWorkload, job_spec, load_job_workload

#: the case file's top-level text fields
TEXT_FIELDS = ("name", "source", "description", "policy", "demand")
#: fields of a user row, as the case file spells them (``name`` is the row's key in the file)
USER_FIELDS = (
    "demand",
    "request",
    "usage",
    "weight",
    "max_tasks",
    "shared",
    "group",
    "priority",
    "guarantee",
    "limit",
    "deserved",
    "borrowing_limit",
    "lending_limit",
    "user_expectation",
)
#: fields of a group row
GROUP_FIELDS = ("parent", "weight", "priority", "guarantee", "limit", "deserved", "borrowing_limit", "lending_limit")
#: lists the file holds and the page keeps as written
KEPT_FIELDS = ("variants", "expect", "claims", "errata")
#: mappings the page carries as the file holds them, with no box to edit them: a policy's settings,
#: a scheduling cycle (the jobs running and waiting)
CARRIED_FIELDS = ("settings", "cycle")
_FORM_FIELDS = (*TEXT_FIELDS, "resources", "users", "arrivals", "groups", *KEPT_FIELDS, *CARRIED_FIELDS)
_TABLES = {
    "resources": (("capacity", "unit"), MAX_EXPLORER_RESOURCES),
    "users": (USER_FIELDS, MAX_EXPLORER_USERS),
    "groups": (GROUP_FIELDS, MAX_EXPLORER_GROUPS),
}


def check_table_size(table: str, count: int) -> None:
    """Refuse ``count`` rows of ``table`` (resources, users, groups) beyond the explorer's limit."""
    limit = _TABLES[table][1]
    if count > limit:
        raise CaseError(
            f"{table}: the explorer takes at most {limit} {table} (got {count}; "
            f"fairalloc.core.limits.MAX_EXPLORER_{table.upper()}); use the command line for larger cases"
        )


# -- a case -> its form ----------------------------------------------------------------------------
def page_form(case: Case) -> dict[str, Any]:
    """The form of a loaded case: its file's fields as written (validated, names as text)."""
    raw = case.raw or case.instance.to_dict()
    spec = CaseSpec.model_validate(raw).model_dump(exclude_unset=True, mode="json")
    units = spec.get("units", {})
    expectation = spec.get("user_expectation", {})
    form: dict[str, Any] = {key: spec.get(key) for key in TEXT_FIELDS}
    form["name"] = case.name
    form["resources"] = [
        {"name": r, "capacity": c, **({"unit": units[r]} if r in units else {})} for r, c in spec["resources"].items()
    ]
    form["users"] = [
        {"name": u, **row, **({"user_expectation": expectation[u]} if u in expectation else {})}
        for u, row in spec["users"].items()
    ]
    form["arrivals"] = spec.get("arrivals")
    form["groups"] = [{"name": g, **row} for g, row in spec.get("groups", {}).items()]
    for key in KEPT_FIELDS:
        form[key] = spec.get(key, [])
    form |= {key: spec[key] for key in CARRIED_FIELDS if key in spec}
    return form


# -- a form -> the case file's mapping --------------------------------------------------------------
def _given(value: Any) -> bool:
    """A field the page left empty (a blank box, an empty mapping) is not written."""
    return value is not None and value != "" and value != {}


def _compact(value: Any) -> Any:
    """A per-resource mapping without its blank cells (a blank demand is no demand)."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None and v != ""}
    return value


def _rows(form: dict, table: str) -> list[dict]:
    rows = form.get(table) if table != "groups" else (form.get(table) or [])
    fields = _TABLES[table][0]
    if not isinstance(rows, list):
        raise CaseError(f"{table}: expected a list of rows (got {excerpt(rows)})")
    check_table_size(table, len(rows))
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            raise CaseError(f"{table}[{k}]: expected an object with a name (got {excerpt(row)})")
        for key in row:
            if key != "name" and key not in fields:
                raise CaseError(f"{table}[{k}].{key}: {unknown('field', key, ('name', *fields))}")
    return rows


def _names(rows: list[dict], table: str) -> list[str]:
    """Row names as text, none empty, none twice (a mapping would merge two rows silently)."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for k, row in enumerate(rows):
        value = row.get("name")
        name = "" if value is None or isinstance(value, (dict, list, bool)) else str(value)
        if not name.strip():  # a name is kept as written ('1 ' is not '1'), but blank is no name
            raise CaseError(f"{table}[{k}].name: must not be empty")
        if name in seen:
            raise CaseError(f"{table}[{k}].name: duplicate name '{name}' (also {table}[{seen[name]}])")
        seen[name] = k
        names.append(name)
    return names


def case_mapping(form: Any) -> dict[str, Any]:
    """The case file's mapping of a form (fields in the file format's order; blanks left out).

    Only the form's own structure is checked here (rows, names, field names); the values are the
    case schema's to judge (:func:`fairalloc.io.cases.parse_case`).
    """
    if not isinstance(form, dict):
        raise CaseError(f"case: expected an object with 'resources' and 'users' (got {excerpt(form)})")
    for key in form:
        if key not in _FORM_FIELDS:
            raise CaseError(f"case.{key}: {unknown('field', key, _FORM_FIELDS)}")
    resources, users, groups = (_rows(form, t) for t in ("resources", "users", "groups"))
    if not resources:
        raise CaseError("resources: give at least one resource")
    if not users:
        raise CaseError("users: give at least one user")
    out: dict[str, Any] = {k: form[k] for k in TEXT_FIELDS if _given(form.get(k))}
    resource_names = _names(resources, "resources")
    units = {r: row["unit"] for r, row in zip(resource_names, resources) if _given(row.get("unit"))}
    if units:
        out["units"] = units
    out["resources"] = {r: row.get("capacity") for r, row in zip(resource_names, resources)}
    out["users"] = {}
    expectation = {}
    for name, row in zip(_names(users, "users"), users):
        fields = {k: _compact(row[k]) for k in USER_FIELDS if k in row}
        if _given(fields.get("user_expectation")):
            expectation[name] = fields["user_expectation"]
        out["users"][name] = {k: v for k, v in fields.items() if k != "user_expectation" and _given(v)}
    if form.get("arrivals") is not None:
        out["arrivals"] = form["arrivals"]
    if groups:
        out["groups"] = {
            g: {k: _compact(row[k]) for k in GROUP_FIELDS if k in row and _given(_compact(row[k]))}
            for g, row in zip(_names(groups, "groups"), groups)
        }
    if expectation:
        out["user_expectation"] = expectation
    for key in (*KEPT_FIELDS, *CARRIED_FIELDS):
        if form.get(key):
            out[key] = form[key]
    return out


def case_from_page(form: Any) -> Case:
    """The validated :class:`Case` of a form (every problem one :class:`CaseError` naming the field)."""
    return parse_case(case_mapping(form), where="page")


# -- a job workload ----------------------------------------------------------------------------------------
def check_workload_jobs(count: int, where: str) -> None:
    """Refuse a workload of more jobs than the explorer replays (``where``: the file or the field)."""
    if count > MAX_EXPLORER_WORKLOAD_JOBS:
        raise FairallocError(
            f"{where}: {count:,} jobs; the explorer replays at most {MAX_EXPLORER_WORKLOAD_JOBS:,} "
            f"(fairalloc.core.limits.MAX_EXPLORER_WORKLOAD_JOBS); for more use "
            f"'fairalloc simulate WORKLOAD --case CASE --report FILE.html'"
        )


def workload_form(workload: JobWorkload, resources: list[str]) -> dict[str, Any]:
    """A read workload as its file's mapping (jobs in submit order, zero requests and an endless
    run time left out): what the page sends back, read again against the case it edits."""
    form: dict[str, Any] = {"jobs": {job.name: job_spec(job, resources) for job in workload.jobs}}
    if workload.nodes is not None:
        form["nodes"] = {n: dict(zip(resources, map(float, room))) for n, room in workload.nodes.items()}
    return form


def start_workload(path: str, case: Case) -> dict[str, Any]:
    """The workload file ``path`` (or a bundled workload's name) as the page opens it beside
    ``case``: its name, its form and its jobs; refused in one line naming the file when it is not
    a workload of the case, has more jobs than the explorer replays, or would not fit in the
    page's request with the case."""
    workload = load_job_workload(path, case.instance)
    check_workload_jobs(len(workload.jobs), str(path))
    form = workload_form(workload, list(case.instance.resources))
    request = {"case": page_form(case), "workload": form, "workload_name": workload.name, "scheduler": ""}
    size = len(json.dumps(request, separators=(",", ":")).encode()) + 256  # the scheduler's name, a variant's
    if size > MAX_REQUEST_BYTES:
        raise FairallocError(
            f"{path}: the page's replay request with this workload and case would take about {size:,} bytes; "
            f"the explorer takes at most {MAX_REQUEST_BYTES:,} (fairalloc.core.limits.MAX_REQUEST_BYTES)"
        )
    return {"name": workload.name, "form": form, "jobs": len(workload.jobs)}


__all__ = [
    "GROUP_FIELDS",
    "KEPT_FIELDS",
    "USER_FIELDS",
    "case_from_page",
    "case_mapping",
    "check_workload_jobs",
    "page_form",
    "start_workload",
    "workload_form",
]
