"""Helpers for testing mechanisms: hypothesis strategies for instances, agreement checks, and
:func:`check_mechanism`, the conformance battery a plug-in author runs on her mechanism (as
scikit-learn's ``check_estimator``).  Instances are generated and failures shrunk by Hypothesis
(MacIver, Hatfield-Dodds et al., "Hypothesis: A new approach to property-based testing", Journal of
Open Source Software 4(43), 2019).  For the importers' tests, a valid document with one field given
a value of the wrong type (:func:`places`, :func:`replaced`, :func:`wrong_values`) and the one check
such a document must pass (:func:`assert_imports_or_one_line`).

Useful for your own mechanisms too::

    from hypothesis import given
    from fairalloc.testing import instances, assert_same_tasks

    @given(instances())
    def test_my_mechanism(inst):
        assert_same_tasks(solve(inst, "mine", method="fast"), solve(inst, "mine", method="program"))

Requires ``hypothesis`` (the ``dev`` extra).
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairalloc.core.errors import FairallocError, SolverError, UnknownNameError, unknown
from fairalloc.core.instance import Instance
from fairalloc.core.tolerances import AGREEMENT, FEASIBILITY, NOISE
from fairalloc.engines.offers import Scheduler

#: seconds after which a test's subprocess, socket or server counts as hung: generous, since no test
#: measures speed (``benchmarks/`` does) and a loaded machine may be many times slower than an idle one
HANG = 600.0


@st.composite
def instances(
    draw,
    max_users: int = 5,
    max_resources: int = 4,
    *,
    zeros: bool = True,
    weights: str | None = "any",
    bounds: bool = True,
    max_demand: int = 10,
    shared: bool = False,
) -> Instance:
    """Small instances with integer data.

    ``zeros``: demands may contain zeros (never a whole row).  ``weights``: ``None`` (none),
    ``"scalar"`` or ``"any"`` (scalar or per resource).  ``bounds``: some users get ``max_tasks``.
    ``shared``: every user gets a DMFA-SRQ shared quantity (they sum to 1).
    """
    n = draw(st.integers(1, max_users))
    m = draw(st.integers(1, max_resources))
    low = 0 if zeros else 1
    demand = np.array(
        draw(st.lists(st.lists(st.integers(low, max_demand), min_size=m, max_size=m), min_size=n, max_size=n)),
        dtype=float,
    )
    for i in np.flatnonzero(~(demand > 0).any(axis=1)):  # every user demands something
        demand[i, draw(st.integers(0, m - 1))] = draw(st.integers(1, max_demand))
    capacity = np.array(draw(st.lists(st.integers(1, 60), min_size=m, max_size=m)), dtype=float)
    w = None
    if weights is not None and draw(st.booleans()):
        per_resource = weights == "any" and m > 1 and draw(st.booleans())
        shape = (n, m) if per_resource else (n,)
        w = np.array(
            draw(st.lists(st.integers(1, 4), min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))), dtype=float
        ).reshape(shape)
    T = None
    if bounds and draw(st.booleans()):
        T = np.array([draw(st.one_of(st.just(np.inf), st.integers(0, 12).map(float))) for _ in range(n)])
    q = None
    if shared:
        k = np.array(draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), dtype=float)
        q = k / k.sum()
    return Instance(capacity, demand, weights=w, max_tasks=T, shared=q, name="hypothesis")


@st.composite
def queue_trees(draw, max_queues: int = 50, max_depth: int = 6, max_resources: int = 3, min_depth: int = 0) -> Instance:
    """Random queue trees of 1..``max_queues`` queues under ``min_depth``..``max_depth`` levels of
    groups, with weights, guarantees, limits and Kueue's borrowing and lending limits
    (:func:`fairalloc.analysis.falsify.random_queue_tree`, drawn from a seed Hypothesis shrinks);
    half of them may promise guarantees beyond the capacity, which some policies refuse."""
    from fairalloc.analysis.falsify import random_queue_tree  # the analysis layer, only when drawn

    n = draw(st.integers(1, max_queues))
    depth = draw(st.integers(min_depth, max_depth))
    m = draw(st.integers(1, max_resources))
    seed = draw(st.integers(0, 2**32 - 1))
    more = draw(st.booleans())
    return random_queue_tree(np.random.default_rng(seed), n, depth, m, f"tree-{n}-{depth}-{m}-{seed}", more)


def close(a, b, tol: float = AGREEMENT) -> bool:
    """Elementwise ``|a - b| <= tol * max(1, |a|, |b|)``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))))


def assert_same_tasks(first, second, tol: float = AGREEMENT) -> None:
    """Two allocations give every user the same task count (relative ``tol``, floor 1)."""
    if not close(first.tasks, second.tasks, tol):
        diff = np.abs(first.tasks - second.tasks)
        i = int(np.argmax(diff))
        raise AssertionError(
            f"{first.mechanism}: {first.method} and {second.method} differ for user "
            f"{first.instance.users[i]}: {first.tasks[i]!r} vs {second.tasks[i]!r}\n"
            f"{first.tasks}\n{second.tasks}\ninstance: {first.instance.to_dict()}"
        )


def solved_or_refused(instance: Instance, mechanism: str, method: str = "auto"):
    """``solve``'s allocation, or the :class:`FairallocError` it refused ``instance`` with: what an
    oracle test compares, answer with answer and refusal with refusal."""
    from fairalloc import solve  # the package's entry point: loaded when a test asks, not at import

    try:
        return solve(instance, mechanism, method=method)
    except FairallocError as refused:
        return refused


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Run the ``fairalloc`` command in-process; return (exit code, stdout, stderr).

    ``capsys`` is pytest's fixture capturing the two streams.
    """
    from fairalloc.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@contextlib.contextmanager
def dask_cluster() -> Iterator[str]:
    """A local Dask cluster of two single-threaded worker processes, quiet, for a module of sweep
    tests to share through ``dask_address``; yields its scheduler's address."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    ) as local:
        yield local.scheduler_address


# -- a document with one field of the wrong type ---------------------------------------------------


def places(document: Any) -> list[tuple]:
    """Every place in a nested dict/list ``document``: the path (keys and list indices) to each field
    and item, a parent before its children; the document itself (the empty path) is not one of them.

    >>> places({"spec": {"containers": [{"name": "c"}]}, "kind": "Pod"})
    [('spec',), ('spec', 'containers'), ('spec', 'containers', 0), ('spec', 'containers', 0, 'name'), ('kind',)]
    >>> places("text")
    []
    """
    if isinstance(document, dict):
        items: Iterable = document.items()
    elif isinstance(document, list):
        items = enumerate(document)
    else:
        return []
    out: list[tuple] = []
    for key, value in items:
        out += [(key,), *((key, *below) for below in places(value))]
    return out


def replaced(document: Any, path: Sequence, value: Any) -> Any:
    """A deep copy of ``document`` with the field at ``path`` (as :func:`places` gives it) set to
    ``value``; ``document`` is left as it was, and the empty path is the whole document.

    >>> pod = {"spec": {"containers": [{"name": "c"}]}}
    >>> replaced(pod, ("spec", "containers", 0), None)
    {'spec': {'containers': [None]}}
    >>> pod
    {'spec': {'containers': [{'name': 'c'}]}}
    """
    if not path:
        return value
    out = copy.deepcopy(document)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return out


def wrong_values(
    *samples: Any, keys: Sequence[str] = (), amounts: bool = True, alphabet: st.SearchStrategy[str] | None = None
) -> st.SearchStrategy[Any]:
    """Values a field of a JSON or YAML document may be given in place of its own, of every type:
    ``None``, true and false, integers (negative ones too), finite floats, text (of ``alphabet``'s
    characters, by default any), lists (empty, holding ``None`` or an empty mapping) and mappings,
    and ``samples``, drawn as they are (the texts and objects a system's files hold: a state, a
    quantity with its unit, a resource map).  A mapping's keys are drawn from ``keys`` if given, else
    are any short text; its values are lists only when not ``amounts``, so that a mapping in a
    resource map's place names no resource (the capacity given may lack it).

    >>> from hypothesis import find
    >>> find(wrong_values("Running"), lambda v: isinstance(v, list) and None in v)
    [None]
    >>> find(wrong_values(keys=["resource"], amounts=False), lambda v: isinstance(v, dict) and len(v) > 0)
    {'resource': []}
    """
    text = st.characters() if alphabet is None else alphabet
    scalars = (
        st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    )
    inner = st.none() | st.integers(0, 9) | st.text(text, max_size=3)
    held = (inner | st.lists(inner, max_size=1)) if amounts else st.lists(inner, max_size=1)
    out: st.SearchStrategy[Any] = st.one_of(
        scalars,
        st.text(text, max_size=8),
        st.lists(inner | st.just({}), max_size=3),
        st.dictionaries(st.sampled_from(list(keys)) if keys else st.text(text, max_size=4), held, max_size=3),
    )
    return out | st.sampled_from(samples) if samples else out


def assert_imports_or_one_line(paths: Sequence[str], named: Callable[[str], bool] | None = None, **options) -> None:
    """Import the files ``paths`` (:func:`fairalloc.io.importers.import_files` with ``options``):
    either the case passes the case loader (:func:`fairalloc.io.cases.parse_case`), or the import is
    refused in one :class:`ImportFailed` line that ``named`` accepts (by default: one starting with a
    file's name).  Any other exception is no answer: it is raised as it is.

    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = str(Path(folder.name) / "queues.yaml")
    >>> queues = "partitions: [{name: default, queues: [{name: root, queues: %s}]}]"
    >>> _ = Path(path).write_text(queues % "[{name: a, resources: {guaranteed: {vcore: 2}}}]")
    >>> assert_imports_or_one_line([path], system="yunikorn", capacity={"vcore": "8"})
    >>> _ = Path(path).write_text(queues % "x")
    >>> assert_imports_or_one_line([path], system="yunikorn", capacity={"vcore": "8"})
    >>> assert_imports_or_one_line([path], named=lambda line: False, system="yunikorn")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: .../queues.yaml: queue root: queues: must be a list (got 'x')
    >>> folder.cleanup()
    """
    from fairalloc.io.cases import parse_case
    from fairalloc.io.importers import ImportFailed, import_files

    try:
        case, _ = import_files(list(paths), **options)
    except ImportFailed as refused:
        line = str(refused)
        accepted = named(line) if named is not None else line.startswith(tuple(paths))
        if "\n" in line or not accepted:
            raise AssertionError(line) from None
    else:
        parse_case(case)


# -- the conformance battery ---------------------------------------------------------------------

#: the checks of :func:`check_mechanism`, in the order they run
CHECKS = (
    "feasibility",
    "bounds",
    "determinism",
    "degenerate_input",
    "agreement",
    "json_round_trip",
    "errors",
    "scale_invariance",
    "task_offers",
)

#: How the built-ins' fast path and program are compared (as tests/test_static_mechanisms.py and
#: tests/test_alpha_fair.py do): a tolerance, and the task counts or an ``info`` entry where the
#: tasks are not unique (an LP's optimal vertex: compare the welfare).  A plug-in declares its own
#: with the attributes ``agreement_tolerance`` and ``agreement_on`` (or the keywords of
#: :func:`check_mechanism`); one whose program is by design not its fast path's answer (YARN's
#: water level beside its truncating search) says why in ``program_differs``, and the check is
#: skipped with that reason.
BUILT_IN_AGREEMENT = {
    "ceei": (1e-4, "tasks"),
    "utilitarian": (AGREEMENT, "welfare"),
    "alpha-fair": (1e-3, "tasks"),
    "alpha-tasks": (1e-3, "tasks"),
    "fds": (1e-3, "tasks"),
}


class MechanismCheckError(AssertionError):
    """A mechanism failed a check of :func:`check_mechanism`; ``check`` names it and the message
    shows the (shrunk) instance that broke it."""

    def __init__(self, check: str, message: str, instance: Instance | None = None):
        self.check, self.instance = check, instance
        shown = f"\n  instance: {describe(instance)}" if instance is not None else ""
        super().__init__(f"check '{check}' failed: {message}{shown}")


@dataclass
class CheckReport:
    """What :func:`check_mechanism` did: ``ran`` maps each check run to the number of generated
    instances the mechanism answered (the others it refused with a clean :class:`FairallocError`;
    for ``task_offers``, the tasks its face launched), ``skipped`` each check not run to the reason."""

    mechanism: str
    methods: tuple[str, ...]
    ran: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        head = (
            f"{self.mechanism} (methods {', '.join(self.methods)}): {len(self.ran)} checks passed, "
            f"{len(self.skipped)} skipped"
        )
        lines = [head]
        lines += [f"  passed   {name} ({n} instances answered)" for name, n in self.ran.items()]
        lines += [f"  skipped  {name}: {why}" for name, why in self.skipped.items()]
        return "\n".join(lines)


def describe(instance: Instance) -> str:
    """``users=..., capacity=..., demand=...`` (and weights, max_tasks, shared when given): one line."""
    parts = [
        f"users={list(instance.users)}",
        f"capacity={instance.capacity.tolist()}",
        f"demand={instance.demand.tolist()}",
    ]
    for name in ("weights", "max_tasks", "shared"):
        value = getattr(instance, name)
        if value is not None:
            parts.append(f"{name}={value.tolist()}")
    return ", ".join(parts)


def check_mechanism(
    mechanism,
    *,
    methods=None,
    max_examples: int = 20,
    instances=None,
    agreement_tolerance: float | None = None,
    agreement_on: str | None = None,
) -> CheckReport:
    """Run the conformance battery on ``mechanism`` (a registered name or a :class:`Mechanism`),
    as scikit-learn's ``check_estimator`` does for estimators; :class:`MechanismCheckError` (an
    ``AssertionError``) names the first failing check and shows the instance, shrunk by hypothesis.

    On generated instances (``instances``: a hypothesis strategy; by default :func:`instances`,
    with shared quantities and no bounds for a dynamic mechanism), for each of ``methods``
    ("fast" and/or "program"; default: those the mechanism has):

    * ``feasibility``: the answer is finite, ``>= 0`` and within capacity (a :class:`SolverError`
      of the certificate, which refuses infeasible answers, is this check failing);
    * ``bounds``: no user gets more than her ``max_tasks`` (tested on the raw answer too);
    * ``determinism``: two calls give the same tasks (:data:`AGREEMENT`);
    * ``degenerate_input``: a zero-capacity resource nobody demands, a user demanding one resource
      only, a user with ``max_tasks`` 0: an answer, or a clean :class:`FairallocError`;
    * ``agreement``: the fast path and the program agree (``agreement_tolerance`` on the tasks, or
      on ``info[agreement_on]``; defaults: the mechanism's attributes of those names, else
      :data:`BUILT_IN_AGREEMENT`, else :data:`AGREEMENT` on the tasks);
    * ``json_round_trip``: ``Allocation.to_dict()`` as JSON text loads back to the same numbers;
    * ``errors``: an unknown method, and a method the mechanism does not have, raise a
      :class:`FairallocError`;
    * ``scale_invariance``: per :attr:`Mechanism.scaling`, scaling a resource (capacity and
      demands) changes no task count, and scaling a user's demands by ``c`` (her bound by
      ``1 / c``) divides her task count by ``c`` and changes nobody else's;
    * ``task_offers``: the task-offer face (:func:`check_task_offers`), the only check of an
      ``online`` mechanism (it has no static allocation); a face that refuses the set-ups with a
      clean :class:`FairallocError` (a mechanism that needs what a workload does not say) is skipped
      with its reason.

    Checks that do not apply (no program, ``scaling = "none"``, a dynamic mechanism's absent task
    bounds) are skipped, with the reason, in the returned :class:`CheckReport`.  Reproducible:
    hypothesis runs derandomised with ``max_examples`` examples per check.
    """
    from fairalloc.core.registry import get

    mech = get(mechanism)
    spec = _Spec(mech, methods, agreement_tolerance, agreement_on)
    strategy = instances if instances is not None else _default_instances(mech)
    report = CheckReport(mech.name, spec.methods)
    config = _config(max_examples)
    for name in CHECKS:
        why = _skip_reason(name, spec)
        if why:
            report.skipped[name] = why
            continue
        if name == "task_offers":
            try:
                report.ran[name] = check_task_offers(mech)
            except FairallocError as refused:
                report.skipped[name] = f"the face refuses the set-ups: {refused}"
            continue
        body, drawn = _BODIES[name]
        report.ran[name] = _run(body, spec, _draw(drawn, strategy), config)
    if not any(n for name, n in report.ran.items() if name != "errors"):  # "errors" solves nothing
        raise MechanismCheckError(
            "coverage",
            f"{mech.name} refused every generated instance; pass a strategy "
            f"that makes instances it accepts as instances=",
        )
    return report


def check_task_offers(mechanism, workloads=None) -> int:
    """The task-offer face of ``mechanism`` (its ``offers()``, or the generic adapter of
    :func:`fairalloc.engines.offers.offers_of`) on small set-ups (``workloads``; default
    :func:`offer_workloads`): it launches only tasks that fit, and it does not idle while work fits.
    Returns the number of tasks launched; a failure is a :class:`MechanismCheckError` of the check
    ``task_offers`` naming the set-up, the job and the node.

    * *fits*: every task it picks fits the offered node's free room in each resource the face
      checks (``check_cpu`` / ``check_mem``: CPU and memory unless over-committed; every other
      resource always), and takes a free slot where the face has ``slots``;
    * *no idling*: at every instant a job arrives or a task ends, once the offers are made, no node
      stands empty while a task of a submitted job waits that fits an empty node (the set-ups'
      single-phase jobs, every task of which fits an empty node, would be left waiting by nothing
      but the face).
    """
    from fairalloc.core.registry import get
    from fairalloc.engines.offers import offers_of
    from fairalloc.scheduling.simulator import simulate

    mech = get(mechanism)
    launched = 0
    for w in workloads if workloads is not None else offer_workloads():
        run = simulate(w, _Watched(offers_of(mech), w.name), record_tasks=True, progress=False)
        _no_idling(mech.name, w, run.tasks)
        launched += run.tasks_started
    return launched


def offer_workloads():
    """Three small set-ups of single-phase jobs (seeded): 2 or 3 nodes of 4 CPU / 8 GB, 3 owners, 8
    jobs of 1 to 4 tasks of 1 to 4 CPU and 1 to 8 GB, submitted over 10 seconds, lasting 1 to 5."""
    import random

    from fairalloc.scheduling.workloads import Job, Task, Workload, validate

    out = []
    for seed in range(3):
        rng = random.Random(seed)
        jobs = tuple(
            Job(
                f"job-{k}",
                f"owner-{rng.randint(0, 2)}",
                float(rng.randint(0, 10)),
                (
                    tuple(
                        Task(rng.randint(1, 4), rng.randint(1, 8), rng.randint(1, 5)) for _ in range(rng.randint(1, 4))
                    ),
                ),
            )
            for k in range(8)
        )
        out.append(validate(Workload(2 + seed % 2, 4.0, 8.0, jobs, f"offers-{seed}")))
    return out


class _Watched(Scheduler):
    """A task-offer face with each of its picks checked (:func:`check_task_offers`)."""

    reads_tallies = True  # (the slots used, for the check)

    def __init__(self, face, setup: str):
        self.face, self.setup, self.name = face, setup, face.name
        self.reads_tallies = True
        self.check_cpu, self.check_mem, self.slots = face.check_cpu, face.check_mem, face.slots

    def bind(self, state) -> None:
        self.face.bind(state)
        self.slots = self.face.slots  # (a face may set it when bound)

    def changed(self, u: int) -> None:
        self.face.changed(u)

    def idle(self) -> bool:
        return bool(self.face.idle())

    def pick(self, state, node: int):
        job = self.face.pick(state, node)
        if job is None:
            return None
        task = job.next_task()
        full = self.slots is not None and state.slots_used[node] >= self.slots
        if full or not state.fits(node, task, self.face.check_cpu, self.face.check_mem):
            free = ", ".join(f"{r} {v:g}" for r, v in zip(state.resources, state.free_vector(node)))
            slots = f"; {state.slots_used[node]} of {self.slots} slots used" if self.slots is not None else ""
            raise MechanismCheckError(
                "task_offers",
                f"{self.name} launched task {job.next} of {job.name} on node {node} of {self.setup}, where it "
                f"does not fit (free: {free}{slots})",
            )
        return job


def _no_idling(name: str, w, records) -> None:
    """No node empty after the offers of an instant while a submitted job's task waits (every task of
    ``w`` fits an empty node)."""
    instants = sorted({j.submit for j in w.jobs} | {r.end for r in records})
    started = {(r.job, r.index): r.start for r in records}
    for t in instants:
        busy = {r.node for r in records if r.start <= t < r.end}
        waiting = [
            j.name
            for j in w.jobs
            if j.submit <= t and any(started.get((j.name, k), float("inf")) > t for k in range(len(j.phases[0])))
        ]
        if waiting and len(busy) < w.nodes:
            raise MechanismCheckError(
                "task_offers",
                f"{name} left node {min(set(range(w.nodes)) - busy)} of {w.name} empty at t={t:g} while "
                f"{waiting[0]} waited with a task that fits it",
            )


# -- the job-level online face ---------------------------------------------------------------------


@st.composite
def cycles(draw, max_queues: int = 3, max_jobs: int = 6, nodes: bool | None = None) -> dict:
    """Small scheduling cycles as case data (a flat queue case with a ``cycle``): queues with or
    without guarantees and limits, jobs running (that fit together) and waiting, gangs, priorities,
    and (``nodes``: always, never, or ``None``: either) two nodes splitting the capacity."""
    from fairalloc.engines.online import place

    res = ["cpu", "mem"][: draw(st.integers(1, 2))]
    cap = {r: draw(st.integers(4, 12)) for r in res}
    queues = [f"q{k}" for k in range(draw(st.integers(1, max_queues)))]
    users = {}
    for q in queues:
        spec: dict = {"request": {res[0]: 1}}
        if draw(st.booleans()):
            spec["guarantee"] = {r: draw(st.integers(0, cap[r] // len(queues))) for r in res}
        if draw(st.booleans()):
            spec["limit"] = {r: cap[r] for r in res}
        users[q] = spec
    split = draw(st.booleans()) if nodes is None else nodes
    halves = {"n1": {r: cap[r] // 2 for r in res}, "n2": {r: cap[r] - cap[r] // 2 for r in res}}
    rooms = {n: np.array([float(v[r]) for r in res]) for n, v in halves.items()}
    free = np.array([float(cap[r]) for r in res])
    running: dict = {}
    pending: dict = {}
    for k in range(draw(st.integers(0, max_jobs))):
        pods = draw(st.integers(1, 3))
        job = {
            "queue": draw(st.sampled_from(queues)),
            "request": {r: draw(st.integers(0, max(1, cap[r] // 4))) for r in res},
            "pods": pods,
            "priority": draw(st.integers(0, 2)),
        }
        if pods > 1 and draw(st.booleans()):
            job["min_pods"] = draw(st.integers(1, pods))
        request = np.array([float(job["request"][r]) for r in res])
        on = place(request, pods, rooms) if split else []
        fits = (request * pods <= free).all() and (not split or len(on) == pods)
        if fits and draw(st.booleans()):
            free -= request * pods
            for node in on:
                rooms[node] -= request
            running[f"r{k}"] = {**job, **({"nodes": on} if split else {})}
        elif (request <= np.array([float(min(h[r] for h in halves.values())) for r in res])).all():
            pending[f"p{k}"] = job
    cycle: dict = {"now": 1, "running": running, "pending": pending}
    if split:
        cycle["nodes"] = halves
    return {"name": "cycle", "resources": cap, "users": users, "cycle": cycle}


def check_online(
    mechanism, *, policy_settings: dict | None = None, max_examples: int = 30, strategy=None
) -> CheckReport:
    """Check ``mechanism``'s job-level online face (its ``online`` form, or the generic adapter) on
    generated scheduling cycles (``strategy``: case data with a ``cycle``, by default
    :func:`cycles`); :class:`MechanismCheckError` names the failing check and shows the cycle:

    * ``online_decisions``: every decision is an admission of a waiting job (its pods between
      ``min_pods`` and its pods, within the free capacity and, with nodes, one node per pod with
      room) or a preemption of a running job, applied in order as the replay applies them
      (:func:`fairalloc.scheduling.replay.check_decisions`);
    * ``online_state_untouched``: the state is as it was after the cycle (a policy reads it only);
    * ``online_determinism``: a fresh policy decides the same cycle the same way;
    * ``online_wake``: ``wake`` is ``None`` or a time not before the cycle's.

    Separate from :func:`check_mechanism` (the static face): a mechanism is checked on both."""
    from fairalloc.core.registry import get
    from fairalloc.engines.online import online_policy
    from fairalloc.io.cases import parse_case
    from fairalloc.scheduling.replay import check_decisions

    mech = get(mechanism)
    report = CheckReport(mech.name, ("online",))
    answered = [0]
    config = _config(max_examples)

    @config
    @given(strategy if strategy is not None else cycles())
    def run(data):
        state = parse_case(data).cycle
        before = (dict(state.running), dict(state.pending), dict(state.since))
        try:
            decisions = online_policy(mech, policy_settings).decide(state)
        except FairallocError:
            return  # a clean refusal of the cycle (a case the policy does not take)
        shown = f"\n  cycle: {data['cycle']}\n  users: {data['users']}\n  decisions: {decisions}"
        try:
            check_decisions(state, decisions, mech.name)
        except FairallocError as exc:
            raise MechanismCheckError("online_decisions", f"{exc}{shown}") from None
        if (dict(state.running), dict(state.pending), dict(state.since)) != before:
            raise MechanismCheckError("online_state_untouched", f"the policy changed the state it was shown{shown}")
        if online_policy(mech, policy_settings).decide(state) != decisions:
            raise MechanismCheckError("online_determinism", f"a fresh policy decided otherwise{shown}")
        wake = online_policy(mech, policy_settings).wake(state)
        if wake is not None and not wake >= state.now:
            raise MechanismCheckError("online_wake", f"wake() gave {wake!r}, before the cycle's time{shown}")
        answered[0] += 1

    run()
    for name in ("online_decisions", "online_state_untouched", "online_determinism", "online_wake"):
        report.ran[name] = answered[0]
    if not answered[0]:
        raise MechanismCheckError("coverage", f"{mech.name} refused every generated cycle; pass strategy=")
    return report


# -- the battery's parts ---------------------------------------------------------------------------


def _config(max_examples: int):
    """Hypothesis as the batteries run it: reproducible (derandomised, no database), no deadline."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )


class _Spec:
    """The mechanism and how to check it."""

    def __init__(self, mech, methods, tolerance, on):
        from fairalloc.core.registry import METHODS

        self.mech = mech
        has = {"fast": mech.has_fast, "program": mech.has_program}
        self.methods = tuple(methods) if methods is not None else tuple(m for m in ("fast", "program") if has[m])
        for method in self.methods:
            if method not in METHODS:
                raise UnknownNameError(f"methods: {unknown('method', method, METHODS)}")
        base = mech.name.partition(":")[0]
        default = BUILT_IN_AGREEMENT.get(base, (AGREEMENT, "tasks"))
        if getattr(mech, "alpha", None) == 0:  # the LP end of the alpha family: no unique vertex
            default = (AGREEMENT, "welfare")
        self.tolerance = tolerance if tolerance is not None else getattr(mech, "agreement_tolerance", default[0])
        self.on = on if on is not None else getattr(mech, "agreement_on", default[1])


def _default_instances(mech):
    if mech.kind == "dynamic":  # arrivals without bounds, and the shared quantities DMFA-SRQ needs
        return instances(zeros=False, bounds=False, weights=None, shared=True)
    return instances()


def _skip_reason(name: str, spec: _Spec) -> str:
    mech = spec.mech
    if mech.kind == "online" and name != "task_offers":
        return "an online scheduler has no static allocation (its face is task offers)"
    if name == "bounds" and mech.kind == "dynamic":
        return "dynamic mechanisms take no max_tasks (an instance with bounds is refused)"
    if name == "agreement" and not {"fast", "program"} <= set(spec.methods):
        return f"needs both a fast path and a program (checked: {', '.join(spec.methods) or 'none'})"
    differs: str = getattr(mech, "program_differs", "") or ""
    if name == "agreement" and differs:
        return f"the program is not the fast path's answer: {differs}"
    if name == "scale_invariance" and mech.scaling == "none":
        return "the mechanism declares scaling = 'none' (no invariance)"
    return ""


def _draw(drawn: str, strategy):
    """What a check's body is given: an instance, or an instance with a user, a resource and a factor."""
    if drawn == "instance":
        return strategy
    return st.tuples(strategy, st.integers(0, 63), st.integers(0, 63), st.sampled_from([2.0, 0.25, 8.0]))


def _run(body, spec, strategy, config) -> int:
    answered = [0]

    @config
    @given(strategy)
    def run(drawn):
        answered[0] += bool(body(spec, drawn))

    run()
    return answered[0]


def _answer(spec, instance, method, check):
    """The certified allocation, or None for a clean refusal; a certificate's refusal and a crash
    are failures (of ``feasibility`` / ``bounds``, and of ``check``)."""
    from fairalloc.core.allocation import Allocation

    try:
        alloc = spec.mech.allocate(instance, method)
    except SolverError as refused:
        _raise_violation(spec, instance, method, _raw(spec.mech, instance, method))
        raise MechanismCheckError("feasibility", f"{spec.mech.name} ({method}): {refused}", instance) from None
    except FairallocError:
        return None
    except Exception as exc:
        raise MechanismCheckError(
            check, f"{spec.mech.name} ({method}): crashed with {type(exc).__name__}: {exc}", instance
        ) from exc
    if not isinstance(alloc, Allocation):
        raise MechanismCheckError(
            check, f"{spec.mech.name} ({method}): returned {type(alloc).__name__}, not an Allocation", instance
        )
    return alloc


def _raw(mech, instance, method):
    """The mechanism's answer before the certificate: its own ``allocate``, or its fast path or program."""
    own = getattr(type(mech).allocate, "__wrapped__", None)
    try:
        with np.errstate(all="ignore"):
            if own is not None:
                return own(mech, instance, method)
            fast = method == "fast" or (method == "auto" and mech.has_fast)
            return mech.fast(instance) if fast else mech.program(instance).solve()
    except (FairallocError, ArithmeticError, ValueError):  # no answer to diagnose: the refusal stands
        return None


def _violation(instance: Instance, tasks, alloc=None) -> tuple[str, str] | None:
    """``(check, what)`` for the first constraint ``tasks`` breaks, or None; written afresh,
    independently of :mod:`fairalloc.core.certificate`.  General bundles (``alloc.amounts``) are
    summed as they are; a policy's entitlement may promise beyond capacity."""
    x = np.asarray(tasks, dtype=float)
    if x.shape != (instance.n,):
        return "feasibility", f"{x.shape} task counts for {instance.n} users"
    if not np.all(np.isfinite(x)):
        return "feasibility", f"task counts not finite: {x.tolist()}"
    T = instance.bounds()
    scale = np.maximum(1.0, np.abs(x))
    if np.any(x < -FEASIBILITY * scale):
        return "feasibility", f"a task count below 0: {x.tolist()}"
    over = np.isfinite(T) & (x > T + FEASIBILITY * np.maximum(1.0, T))
    if over.any():
        i = int(np.argmax(over))
        return "bounds", f"user {instance.users[i]} gets {x[i]:.6g} tasks, above her max_tasks {T[i]:.6g}"
    if getattr(alloc, "entitlement", False):  # a policy's promise may exceed capacity: no_overcommit says so
        return None
    amounts = getattr(alloc, "amounts", None)
    used = np.clip(x, 0, None) @ instance.demand if amounts is None else np.clip(amounts, 0, None).sum(axis=0)
    R = instance.capacity
    bad = used > R * (1 + FEASIBILITY)  # nothing at all of a resource of capacity 0
    if bad.any():
        j = int(np.argmax(bad))
        return "feasibility", f"resource {instance.resources[j]} used {used[j]:.6g} of capacity {R[j]:.6g}"
    return None


def _raise_violation(spec, instance, method, alloc) -> None:
    found = None if alloc is None else _violation(instance, getattr(alloc, "tasks", None), alloc)
    if found is not None:
        check, what = found
        raise MechanismCheckError(check, f"{spec.mech.name} ({method}): {what}", instance)


def _feasible(spec, instance) -> bool:
    answered = False
    for method in spec.methods:
        alloc = _answer(spec, instance, method, "feasibility")
        if alloc is not None:
            _raise_violation(spec, instance, method, alloc)
            answered = True
    return answered


def _bounded(spec, instance) -> bool:
    """The bounds of the drawn instances are checked by the feasibility run, whose draws may bind
    none; here the first user with a demand is also bounded to 0 tasks, a bound every mechanism that
    reads bounds keeps and one that ignores them breaks whatever the draw."""
    first = int(np.argmax((instance.demand > 0).any(axis=1)))
    return _feasible(spec, instance.with_max_tasks(first, 0.0))


def _deterministic(spec, instance) -> bool:
    answered = False
    for method in spec.methods:
        first = _answer(spec, instance, method, "determinism")
        second = _answer(spec, instance, method, "determinism")
        if (first is None) != (second is None):
            raise MechanismCheckError("determinism", f"{method}: answered once and refused once", instance)
        if first is not None and not close(first.tasks, second.tasks, AGREEMENT):
            raise MechanismCheckError(
                "determinism",
                f"{spec.mech.name} ({method}): two calls gave {first.tasks.tolist()} and {second.tasks.tolist()}",
                instance,
            )
        answered |= first is not None
    return answered


def _degenerate(spec, drawn) -> bool:
    instance, user, resource, _ = drawn
    single = np.zeros(instance.m)
    single[resource % instance.m] = 1.0 + user % 5
    variants = [
        lambda: instance.with_resource("zero-capacity", 0.0),
        lambda: _with_user(instance, "one-resource", single),
        lambda: _with_user(instance, "max-tasks-0", np.ones(instance.m), max_tasks=0.0),
    ]
    answered = False
    for make in variants:
        try:
            variant = make()
        except FairallocError:  # the instance itself is refused (a dynamic one with a bound)
            continue
        try:
            answered |= _feasible(spec, variant)
        except MechanismCheckError as failed:
            raise MechanismCheckError("degenerate_input", f"({failed.check}) {failed.args[0]}", variant) from None
    return answered


def _with_user(instance: Instance, name: str, demand, max_tasks=np.inf) -> Instance:
    """:meth:`Instance.with_user`, the shared quantities (if any) renormalised to sum to 1."""
    q = None if instance.shared is None else float(np.mean(instance.shared))
    variant = instance.with_user(name, demand, max_tasks=max_tasks, **({} if q is None else {"shared": q}))
    if q is None:
        return variant
    assert variant.shared is not None, "_with_user: a user added with a shared quantity keeps them all"
    return Instance(
        variant.capacity,
        variant.demand,
        resources=variant.resources,
        users=variant.users,
        weights=variant.weights,
        max_tasks=variant.max_tasks,
        shared=variant.shared / variant.shared.sum(),
        name=variant.name,
        groups=variant.groups,
    )


def _agree(spec, instance) -> bool:
    fast = _answer(spec, instance, "fast", "agreement")
    program = _answer(spec, instance, "program", "agreement")
    if fast is None and program is None:
        return False
    if (fast is None) != (program is None):
        which = "fast" if fast is None else "program"
        raise MechanismCheckError("agreement", f"the {which} path refused an instance the other answered", instance)
    a, b = _compared(spec, fast), _compared(spec, program)
    if not close(a, b, spec.tolerance):
        raise MechanismCheckError(
            "agreement",
            f"{spec.mech.name}: fast {spec.on} {np.round(a, 9).tolist()} vs program "
            f"{np.round(b, 9).tolist()} (tolerance {spec.tolerance:g})",
            instance,
        )
    return True


def _compared(spec, alloc):
    if spec.on == "tasks":
        return alloc.tasks
    return np.asarray(alloc.info[spec.on], dtype=float)


def _json(spec, instance) -> bool:
    import json

    from fairalloc.core.decimals import json_text

    answered = False
    for method in spec.methods:
        alloc = _answer(spec, instance, method, "json_round_trip")
        if alloc is None:
            continue
        try:
            data = json.loads(json_text(alloc.to_dict(), indent=2))
            tasks = [data["users"][u]["tasks"] for u in instance.users]
            capacity = [data["resources"][r]["capacity"] for r in instance.resources]
        except (TypeError, ValueError, KeyError) as exc:
            raise MechanismCheckError("json_round_trip", f"{method}: {type(exc).__name__}: {exc}", instance) from exc
        if not (close(tasks, alloc.tasks, NOISE) and close(capacity, instance.capacity, NOISE)):
            raise MechanismCheckError(
                "json_round_trip", f"{method}: tasks {alloc.tasks.tolist()} came back as {tasks}", instance
            )
        answered = True
    return answered


def _errors(spec, instance) -> bool:
    mech = spec.mech
    attempts = [("an unknown method", "no-such-method")]
    attempts += [
        (f"method {m!r}, which it does not have", m)
        for m, has in (("fast", mech.has_fast), ("program", mech.has_program))
        if not has
    ]
    for what, method in attempts:
        try:
            mech.allocate(instance, method)
        except FairallocError:
            continue
        except Exception as exc:
            raise MechanismCheckError(
                "errors", f"{what} raised {type(exc).__name__} ({exc}), not a FairallocError", instance
            ) from exc
        raise MechanismCheckError("errors", f"{what} raised no error", instance)
    return True


def _scaled(spec, drawn) -> bool:
    instance, user, resource, c = drawn
    checks = [("resource", resource % instance.m)]
    if spec.mech.scaling == "users":
        checks.append(("user", user % instance.n))
    name = {"resource": instance.resources, "user": instance.users}
    answered = False
    for method in spec.methods:
        base = _answer(spec, instance, method, "scale_invariance")
        if base is None:
            continue
        for what, k in checks:
            variant, expected = _rescaled(instance, base.tasks, what, k, c)
            alloc = _answer(spec, variant, method, "scale_invariance")
            if alloc is None:
                raise MechanismCheckError(
                    "scale_invariance",
                    f"{spec.mech.name} ({method}): refused the instance with {what} {name[what][k]} scaled by {c:g}",
                    instance,
                )
            same = (
                close(alloc.tasks, expected, spec.tolerance)
                if spec.on == "tasks"
                else close(_compared(spec, alloc), _compared(spec, base), spec.tolerance)
            )
            if not same:
                got = alloc.tasks if spec.on == "tasks" else _compared(spec, alloc)
                want = expected if spec.on == "tasks" else _compared(spec, base)
                raise MechanismCheckError(
                    "scale_invariance",
                    f"{spec.mech.name} ({method}): with {what} "
                    f"{name[what][k]} scaled by {c:g} "
                    f"(scaling = {spec.mech.scaling!r}), {spec.on} {np.asarray(got).tolist()}, "
                    f"expected {np.asarray(want).tolist()}",
                    instance,
                )
        answered = True
    return answered


def _rescaled(instance: Instance, tasks, what: str, k: int, c: float):
    """The instance with resource ``k`` (or user ``k``'s task) measured in a unit ``c`` times
    smaller, and the task counts the same allocation has there."""
    R, D, T = instance.capacity.copy(), instance.demand.copy(), instance.max_tasks
    expected = np.array(tasks, dtype=float)
    if what == "resource":
        R[k] *= c
        D[:, k] *= c
    else:
        D[k] *= c
        expected[k] /= c
        if T is not None:
            T = T.copy()
            T[k] /= c
    variant = Instance(
        R,
        D,
        resources=instance.resources,
        users=instance.users,
        weights=instance.weights,
        max_tasks=T,
        shared=instance.shared,
        name=instance.name,
        groups=instance.groups,
    )
    return variant, expected


_BODIES = {
    "feasibility": (_feasible, "instance"),
    "bounds": (_bounded, "instance"),
    "determinism": (_deterministic, "instance"),
    "degenerate_input": (_degenerate, "tuple"),
    "agreement": (_agree, "instance"),
    "json_round_trip": (_json, "instance"),
    "errors": (_errors, "instance"),
    "scale_invariance": (_scaled, "tuple"),
}


#: how the tests and the explorer's benchmark start Debian's headless Chromium: no sandbox (root in a
#: container), no GPU, and none of its background connections (refused on a closed network)
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-extensions",
    "--no-first-run",
]
