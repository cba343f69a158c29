"""The simulator's ``drf``, ``hdrf`` and ``mfs`` take their decisions from the one discrete engine
(:class:`fairalloc.engines.discrete.DiscreteEngine`): on a flat owner tree ``hdrf`` is ``drf`` decision
for decision; on two node pools with GPUs all three launch only where every resource fits; ``mfs``
counts a job's GPUs in its dominant share; none keeps a private heap."""

from __future__ import annotations

import inspect
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fairalloc.engines import offers
from fairalloc.models import drf, hdrf, mfs
from fairalloc.scheduling.simulator import simulate
from fairalloc.scheduling.workloads import Job, Task, Workload, load_yaml, parse_workload, validate

GPU_EXAMPLE = Path(__file__).resolve().parents[1] / "paper_examples" / "workloads" / "gpu-two-pools.yaml"

task = st.builds(Task, st.integers(1, 4).map(float), st.integers(1, 6).map(float), st.integers(1, 30).map(float))
job = st.tuples(st.sampled_from("abcd"), st.integers(0, 40), st.lists(task, min_size=1, max_size=8))


@settings(max_examples=25, deadline=None)
@given(jobs=st.lists(job, min_size=1, max_size=8), nodes=st.integers(1, 3))
def test_hdrf_on_a_flat_tree_is_drf(jobs, nodes):
    w = validate(
        Workload(
            nodes,
            8.0,
            12.0,
            tuple(Job(f"j{k}", owner, float(submit), (tuple(tasks),)) for k, (owner, submit, tasks) in enumerate(jobs)),
        )
    )
    drf, hdrf = simulate(w, "drf", record_tasks=True), simulate(w, "hdrf", record_tasks=True)
    assert drf.tasks == hdrf.tasks and drf.tasks_started == sum(len(t) for _, _, t in jobs)


def test_gpu_pools_every_resource_fits_and_gpu_tasks_stay_on_the_gpu_node():
    w = load_yaml(GPU_EXAMPLE)
    for name in ("drf", "hdrf", "mfs"):
        r = simulate(w, name, record_tasks=True)
        assert r.max_overcommit <= 1 + 1e-9 and r.tasks_started == 16
        vision = [t for t in r.tasks if t.owner == "vision"]
        assert {t.node for t in vision} == {0} and all(t.extra == {"gpu": 1.0} for t in vision)
        assert max(t.end for t in vision) == 400.0  # two at a time: four waves


def test_mfs_counts_a_jobs_gpus_in_its_share():
    """One group, node <16 CPU, 16 GB, 2 GPUs>: job g's task <1, 1, 1 GPU> makes its share 1/2 (GPUs),
    so job c (<1, 1>, share k/16) gets 8 tasks before g's second (ties to g, submitted first); counting
    CPU and memory only, g's share would be 1/16 and the two would alternate."""
    w = parse_workload(
        {
            "nodes": [{"count": 1, "resources": {"cpu": 16, "mem": 16, "gpu": 2}}],
            "jobs": [
                {
                    "name": "g",
                    "owner": "A",
                    "submit": 0,
                    "phases": {"map": {"count": 2, "duration": 10, "resources": {"cpu": 1, "mem": 1, "gpu": 1}}},
                },
                {
                    "name": "c",
                    "owner": "A",
                    "submit": 0,
                    "phases": {"map": {"count": 20, "cpu": 1, "mem": 1, "duration": 10}},
                },
            ],
        }
    )
    first = [t.job for t in simulate(w, "mfs", record_tasks=True).tasks if t.start == 0]
    assert first == ["g"] + ["c"] * 8 + ["g"] + ["c"] * 6


def test_hdrf_group_keys_count_every_resource():
    """Groups G (owner G/g, tasks <1, 1, 1 GPU>) and C (owner C/c, tasks <1, 1>) on one node <16, 16, 2 GPUs>:
    G's share is its GPU share, 1/2 after one task, so C gets 8 tasks before g's second (ties to G, listed
    first); with CPU and memory only G's share would be 1/16 and the two would alternate."""
    w = parse_workload(
        {
            "nodes": [{"count": 1, "resources": {"cpu": 16, "mem": 16, "gpu": 2}}],
            "jobs": [
                {
                    "name": "g",
                    "owner": "G/g",
                    "submit": 0,
                    "phases": {"map": {"count": 2, "duration": 10, "resources": {"cpu": 1, "mem": 1, "gpu": 1}}},
                },
                {
                    "name": "c",
                    "owner": "C/c",
                    "submit": 0,
                    "phases": {"map": {"count": 20, "cpu": 1, "mem": 1, "duration": 10}},
                },
            ],
        }
    )
    first = [t.job for t in simulate(w, "hdrf", record_tasks=True).tasks if t.start == 0]
    assert first == ["g"] + ["c"] * 8 + ["g"] + ["c"] * 6


def test_no_private_heaps_left():
    for cls in (offers.OwnerOrder, drf.DRFOffers, hdrf.HDRFOffers, mfs.MFS):
        source = inspect.getsource(cls)
        assert "heapq" not in source and "DiscreteEngine" in inspect.getsource(offers.OwnerOrder)
    assert issubclass(hdrf.HDRFOffers, offers.OwnerOrder) and issubclass(mfs.MFS, offers.OwnerOrder)
    assert not hasattr(offers, "_first_taker") and not hasattr(offers, "heapq")
