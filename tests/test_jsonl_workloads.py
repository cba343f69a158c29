"""Job workloads as JSON Lines (:mod:`fairalloc.io.job_workloads`, ``.jsonl``): the header line, then
one job a line, read streamed by the YAML file's rules, with messages naming the file and the line;
written by ``import --jobs OUT.jsonl`` and read wherever a workload is (simulate, whatif, the sweep).

The second computation is the YAML file: the same jobs written both ways load equal."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from test_job_workloads import CASE
from test_job_workloads import WORKLOAD as YAML_WORKLOAD

from fairalloc.cli.render import yaml_doc
from fairalloc.core import limits
from fairalloc.core.errors import CaseError
from fairalloc.io.cases import parse_case, read_yaml_file
from fairalloc.io.job_workloads import _yaml_nodes, check_yaml_readable, jsonl_lines, load_job_workload
from fairalloc.scheduling.trace_jobs import trace_workload
from fairalloc.testing import run_cli as run

WORKLOAD = yaml.safe_load(YAML_WORKLOAD)

LINES = "".join(jsonl_lines(WORKLOAD)).splitlines()


def written(tmp_path: Path, lines: list[str], name: str = "w.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(CaseError) as err:
        load_job_workload(path, CASE)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{path}: "), text
    return text


def test_the_header_then_one_job_a_line():
    """The file as written: the nodes, then the jobs in the file's order, each ``{name: job}``."""
    assert json.loads(LINES[0]) == {"nodes": WORKLOAD["nodes"]}
    assert [json.loads(line) for line in LINES[1:]] == [{k: v} for k, v in WORKLOAD["jobs"].items()]


def test_jsonl_reads_as_the_yaml_file(tmp_path):
    yaml_file = tmp_path / "w.yaml"
    yaml_file.write_text(yaml_doc(WORKLOAD))
    from_jsonl, from_yaml = load_job_workload(written(tmp_path, LINES), CASE), load_job_workload(yaml_file, CASE)
    assert [j.name for j in from_jsonl.jobs] == ["early", "also-early", "late"]
    assert from_jsonl.jobs == from_yaml.jobs and from_jsonl.name == from_yaml.name == "w"
    assert from_jsonl.nodes is not None and from_yaml.nodes is not None
    assert {k: v.tolist() for k, v in from_jsonl.nodes.items()} == {k: v.tolist() for k, v in from_yaml.nodes.items()}


NAMES = st.text("abcxyz-0123456789", min_size=1, max_size=8)
AMOUNTS = st.one_of(st.integers(0, 4), st.floats(1e-3, 4, allow_nan=False))
TIMES = st.one_of(st.integers(0, 10**6), st.floats(0, 1e6, allow_nan=False))


@st.composite
def workloads(draw) -> dict:
    jobs = {}
    for name in draw(st.lists(NAMES, unique=True, max_size=12)):
        job = {"queue": draw(st.sampled_from(["team-a", "team-b"])), "request": {"cpu": draw(AMOUNTS)}}
        if draw(st.booleans()):
            job["request"]["memory"] = draw(AMOUNTS)
        pods = draw(st.integers(1, 5))
        optional = {
            "pods": pods,
            "min_pods": draw(st.integers(1, pods)),
            "priority": draw(st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False)),
            "submit": draw(TIMES),
            "runtime": draw(st.floats(1e-3, 1e6, allow_nan=False)),
        }
        job.update({k: v for k, v in optional.items() if draw(st.booleans())})
        if "min_pods" in job:  # a gang's fewest pods are among its pods
            job["pods"] = pods
        jobs[name] = job
    nodes = draw(st.none() | st.just({"n1": {"cpu": 5, "memory": 20}, "n2": {"cpu": 4.5, "memory": 30}}))
    return {"jobs": jobs} if nodes is None else {"nodes": nodes, "jobs": jobs}


@settings(max_examples=60, deadline=None)
@given(workloads())
def test_round_trip_the_same_jobs_as_yaml_and_as_jsonl_load_equal(workload):
    """Whatever the two writers of ``import --jobs`` write from one workload loads as the same jobs
    and nodes (numbers written as :func:`~fairalloc.core.decimals.plain` makes them, both ways)."""
    with tempfile.TemporaryDirectory() as folder:
        yaml_file, jsonl_file = Path(folder) / "w.yaml", Path(folder) / "w.jsonl"
        yaml_file.write_text(yaml_doc(workload))
        jsonl_file.write_text("".join(jsonl_lines(workload)))
        from_yaml, from_jsonl = load_job_workload(yaml_file, CASE), load_job_workload(jsonl_file, CASE)
    assert from_jsonl.jobs == from_yaml.jobs and len(from_jsonl.jobs) == len(workload["jobs"])
    shown = {k: v.tolist() for k, v in (from_jsonl.nodes or {}).items()}
    assert shown == {k: v.tolist() for k, v in (from_yaml.nodes or {}).items()}


@pytest.mark.parametrize(
    ("line", "old", "new", "message"),
    [
        (3, "team-b", "team-c", "line 3: jobs.early.queue: unknown queue 'team-c'; did you mean 'team-b' or 'team-a'?"),
        (
            2,
            '{"cpu": 2}',
            '{"cpu": 7}',
            "line 2: jobs.late.request.cpu: a pod of 7 is larger than any node (6 at most)",
        ),
        (2, '"submit": 30', '"submit": -1', "line 2: jobs.late.submit: input should be greater than or equal to 0"),
        (4, '"submit"', '"submitt"', "line 4: jobs.also-early.submitt: unknown field 'submitt'"),
        (1, '"cpu": 6', '"cpus": 6', "line 1: nodes.n1.cpus: unknown resource 'cpus'; did you mean 'cpu'?"),
        (3, '"pods": 3', '"pods": 3, "pods": 4', "early.pods: duplicate key"),
        (3, '"pods": 3', f'"pods": {limits.MAX_JOB_PODS + 1}', "line 3: jobs.early.pods: 100,001 pods; a replayed job"),
        (2, "}}", "}", "line 2: not valid YAML"),
    ],
)
def test_a_bad_line_is_one_line_naming_the_file_the_line_and_the_field(tmp_path, line, old, new, message):
    lines = list(LINES)
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path = written(tmp_path, lines)
    text = refusal(path)
    assert message in text and f"line {line}" in text, text


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([], "empty file (a workload in JSON Lines needs its header line, then one job a line)"),
        (LINES[1:], "line 1: a job (late) where the header belongs"),
        (['{"jobs": {}}', *LINES[1:]], "line 1: jobs: the header leaves the jobs out"),
        (["[]"], "line 1: the first line is the header, an object like {} (got list)"),
        ([*LINES[:2], "", *LINES[2:]], "line 3: blank (JSON Lines has one object on every line)"),
        ([*LINES, LINES[1]], "line 5: jobs.late: a second job of that name (the first is on line 2)"),
        ([*LINES[:2], "[" + LINES[2] + "]"], "line 3: one job a line, as"),
        ([LINES[0], LINES[1][:-1] + ', "x": {"queue": "team-a", "request": {}}}'], "line 2: one job a line"),
    ],
)
def test_a_file_of_the_wrong_shape_is_one_line(tmp_path, lines, message):
    assert message in refusal(written(tmp_path, lines))


def test_a_header_alone_is_a_workload_without_jobs(tmp_path):
    w = load_job_workload(written(tmp_path, ["{}"]), CASE)
    assert w.jobs == [] and w.nodes is None


def test_beyond_max_workload_jobs_refused_at_the_line_that_passes_it(tmp_path, monkeypatch):
    """With the limit at 2, the third job's line (line 4) is refused; the line after it, not JSON
    at all, is never read (the file is streamed, not parsed whole)."""
    monkeypatch.setattr(limits, "MAX_WORKLOAD_JOBS", 2)
    text = refusal(written(tmp_path, [*LINES, "not json {"]))
    assert "line 4: jobs: more than 2 jobs; fairalloc replays at most 2 (MAX_WORKLOAD_JOBS)" in text


def test_a_line_longer_than_a_file_may_be_is_refused(tmp_path, monkeypatch):
    path = written(tmp_path, LINES)
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", len(LINES[2]))
    assert "line 3: longer than" in refusal(path)


def test_no_such_file_and_a_folder(tmp_path):
    assert refusal(tmp_path / "gone.jsonl").endswith("gone.jsonl: no such file")
    (tmp_path / "dir.jsonl").mkdir()
    assert refusal(tmp_path / "dir.jsonl").endswith("is a directory, not a file")


def test_a_batch_beyond_plain_json_is_read_line_by_line_as_yaml(tmp_path):
    """A line the JSON decoder leaves to the YAML reader (a flow mapping without quotes) reads as the
    same job, in its place, beside plain lines of the same batch."""
    lines = [*LINES[:2], "{early: {queue: team-b, request: {cpu: 1, memory: 2}, pods: 3, min_pods: 2, "
             "submit: 0, runtime: 5, priority: 2}}", LINES[3]]  # fmt: skip
    assert (
        load_job_workload(written(tmp_path, lines), CASE).jobs
        == load_job_workload(written(tmp_path, LINES, "plain.jsonl"), CASE).jobs
    )


# -- the YAML writer refuses what the YAML loader refuses ---------------------------------------------


def test_the_yaml_node_count_is_the_loaders(tmp_path, monkeypatch):
    """:func:`check_yaml_readable` counts the nodes the loader counts: at that many the file reads
    and passes, at one fewer both refuse."""
    text = yaml_doc(WORKLOAD)
    path = tmp_path / "w.yaml"
    path.write_text(text)
    nodes = _yaml_nodes(WORKLOAD)
    monkeypatch.setattr(limits, "MAX_YAML_NODES", nodes)
    check_yaml_readable(WORKLOAD, text)
    read_yaml_file(path, "jobs")
    monkeypatch.setattr(limits, "MAX_YAML_NODES", nodes - 1)
    with pytest.raises(CaseError, match=r"3 jobs are more than .* YAML nodes .*write them to a \.jsonl file"):
        check_yaml_readable(WORKLOAD, text)
    with pytest.raises(CaseError, match="YAML nodes"):
        read_yaml_file(path, "jobs")


TRACES = Path(__file__).parent / "data" / "traces"


@pytest.fixture
def trace_case(tmp_path) -> Path:
    case = tmp_path / "case.yaml"
    queues = {q: {"guarantee": {"cpu": 1, "memory": 1}, "request": {"cpu": 1}} for q in ("alice", "bob")}
    case.write_text(yaml.safe_dump({"name": "trace-case", "resources": {"cpu": 2, "memory": 2}, "users": queues}))
    return case


def _import_trace(capsys, out: Path, case: Path) -> tuple[int, str, str]:
    trace = str(TRACES / "google-2011-task_events.csv")
    return run(capsys, "import", "--trace", "google-2011", trace, "--jobs", str(out), "--case", str(case))


def test_import_jobs_jsonl_writes_what_simulate_replays_as_the_yaml(capsys, tmp_path, trace_case):
    """``import --trace ... --jobs OUT.jsonl`` writes the jobs ``--jobs OUT.yaml`` writes, and
    ``simulate`` replays both to the same report."""
    (tmp_path / "y").mkdir()
    as_yaml, as_jsonl = tmp_path / "y" / "jobs.yaml", tmp_path / "jobs.jsonl"
    for out in (as_yaml, as_jsonl):
        code, printed, err = _import_trace(capsys, out, trace_case)
        assert code == 0 and printed.startswith("wrote ") and str(out) in printed, err
    lines = as_jsonl.read_text().splitlines()
    assert json.loads(lines[0]) == {} and len(lines) > 2
    assert {k: v for line in lines[1:] for k, v in json.loads(line).items()} == yaml.safe_load(as_yaml.read_text())[
        "jobs"
    ]
    reports = []
    for out in (as_yaml, as_jsonl):
        code, printed, err = run(
            capsys, "simulate", str(out), "--case", str(trace_case), "--scheduler", "drf,mesos-drf", "--format", "json"
        )
        assert code == 0, err
        reports.append(json.loads(printed))
    assert reports[0] == reports[1]


def test_import_jobs_yaml_beyond_the_loader_is_refused_and_nothing_written(capsys, tmp_path, trace_case, monkeypatch):
    """With MAX_YAML_NODES one below the trace's workload (and above its case), ``--jobs OUT.yaml``
    is one line pointing at ``.jsonl``, exit 2, nothing written; ``--jobs OUT.jsonl`` writes."""
    instance = parse_case(yaml.safe_load(trace_case.read_text())).instance
    nodes = _yaml_nodes(trace_workload("google-2011", [TRACES / "google-2011-task_events.csv"], case=instance).data)
    assert nodes - 1 > _yaml_nodes(yaml.safe_load(trace_case.read_text()))
    monkeypatch.setattr(limits, "MAX_YAML_NODES", nodes - 1)
    out = tmp_path / "jobs.yaml"
    code, _, err = _import_trace(capsys, out, trace_case)
    lines = [line for line in err.splitlines() if not line.startswith("fairalloc: warning:")]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err and not out.exists()
    assert f"--jobs {out}: " in lines[0] and f"more than {nodes - 1:,} YAML nodes" in lines[0] and ".jsonl" in lines[0]
    code, _, err = _import_trace(capsys, tmp_path / "jobs.jsonl", trace_case)
    assert code == 0, err


def test_whatif_and_the_grid_read_jsonl(capsys, tmp_path):
    """The bundled day as JSON Lines: ``whatif`` and ``whatif --grid`` give what they give on the
    bundled YAML (the grid's rows name the workload by its stem, the same)."""
    day = read_yaml_file(Path(__file__).parents[1] / "fairalloc/case_library/workloads/two-teams-day.yaml", "jobs")
    jsonl = tmp_path / "two-teams-day.jsonl"
    jsonl.write_text("".join(jsonl_lines(day)))
    change = ["--set", "users.team-a.limit.cpu=4", "--scheduler", "yarn-fair", "--format", "json"]
    outs = [run(capsys, "whatif", "replay-two-teams", w, *change) for w in ("two-teams-day", str(jsonl))]
    assert outs[0][0] == outs[1][0] == 0, outs
    assert json.loads(outs[0][1])["alternatives"] == json.loads(outs[1][1])["alternatives"]
    rows = []
    for k, w in enumerate(("two-teams-day", str(jsonl))):
        out = tmp_path / f"rows{k}.jsonl"
        grid = ["--grid", "users.team-a.weight=1|2", "--scheduler", "drf", "--out", str(out), "--workers", "1"]
        code, _, err = run(capsys, "whatif", "replay-two-teams", w, *grid)
        assert code == 0, err
        rows.append([json.loads(line) for line in out.read_text().splitlines()])
    assert [r.get("queues") for r in rows[0]] == [r.get("queues") for r in rows[1]] and rows[0]


def test_simulate_refuses_a_bad_line_in_one_line_with_exit_2(capsys, tmp_path, trace_case):
    lines = [
        {},
        {"j1": {"queue": "alice", "request": {"cpu": 1}, "runtime": 5}},
        {"j2": {"queue": "carol", "request": {}}},
    ]
    path = written(tmp_path, [json.dumps(line) for line in lines])
    code, out, err = run(capsys, "simulate", str(path), "--case", str(trace_case), "--scheduler", "drf")
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: line 3: jobs.j2.queue: unknown queue 'carol'" in err, err
