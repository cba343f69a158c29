"""A plain ``ClusterState``'s sums (what each queue holds, the free room, each node's room) are added
in Python floats: bit for bit the numpy sums they replaced (each job's ``request * pods``, then
added in admission order), on amounts that are not whole (0.1, 1/3, a trace's 0.02499 and 0.0625),
and a request shorter than the resources broadcast as numpy did."""

from __future__ import annotations

import random

import numpy as np
import pytest

import fairalloc
from fairalloc.engines.online import ClusterState, Job, Running

AMOUNTS = [0.1, 0.0625, 0.02499, 1.3, 2.0, 1 / 3, 0.0]


def _numpy_sums(state: ClusterState):
    """The sums as numpy added them (the methods before)."""
    free, usage = state.capacity.copy(), {q: np.zeros(len(state.resources)) for q in state.case.users}
    rooms = {k: np.asarray(v, float).copy() for k, v in state.nodes.items()}
    for run in state.running.values():
        free -= run.usage
        usage[run.job.queue] = usage[run.job.queue] + run.usage
        for node in run.nodes:
            rooms[node] -= run.job.request
    return free, usage, rooms


def _state(seed: int, width: int = 3) -> ClusterState:
    rng = random.Random(seed)
    inst = fairalloc.Instance([97.3, 211.7, 5.5], [[1, 1, 1]] * 3, users=["a", "b", "c"], resources=["x", "y", "z"])
    running = {}
    for k in range(rng.randint(0, 80)):
        job = Job(f"j{k}", rng.choice("abc"), tuple(rng.choice(AMOUNTS) for _ in range(width)), rng.randint(1, 5))
        pods = rng.randint(1, job.pods)
        running[job.name] = Running(job, pods, 0.0, tuple(rng.choice(["n1", "n2"]) for _ in range(pods)))
    nodes = {"n1": np.array([50.1, 100.3, 3.3]), "n2": np.array([47.2, 111.4, 2.2])}
    return ClusterState(inst, running=running, nodes=nodes)


@pytest.mark.parametrize("width", [3, 1], ids=["per-resource", "broadcast"])
@pytest.mark.parametrize("seed", range(40))
def test_the_sums_are_numpys_bit_for_bit(seed, width):
    state = _state(seed, width)
    free, usage, rooms = _numpy_sums(state)
    assert state.free().tobytes() == free.tobytes()
    got = state.usage()
    assert list(got) == list(usage) and all(got[q].tobytes() == usage[q].tobytes() for q in usage)
    got_rooms = state.free_on_nodes()
    assert list(got_rooms) == list(rooms) and all(got_rooms[k].tobytes() == rooms[k].tobytes() for k in rooms)


def test_a_request_of_the_wrong_length_is_refused_as_numpy_refused():
    state = _state(3)
    job = Job("odd", "a", (1.0, 2.0), 1)
    odd = ClusterState(state.case, running={"odd": Running(job, 1, 0.0)})
    with pytest.raises(ValueError):
        odd.free()
