"""The sweep engine: parallel results equal serial ones, resume after SIGKILL, errors, early stop.

The tasks are ``functools.partial``s of ``fairalloc.analysis.sweep.demo_trial``. Worker processes can
always import that function. They may not be able to import this test module under pytest's
importlib mode, which is why no task is defined here. Most tests share one local cluster
(``cluster`` fixture) and reach it through ``dask_address``, so the remote path is exercised
too. ``test_parallel_equals_serial`` starts its own cluster with ``workers=2``.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from functools import partial

import pytest

from fairalloc.analysis.sweep import TrialError, _chunks, _header, _SweepFile, demo_trial, read_results, run_sweep
from fairalloc.core.errors import FairallocError
from fairalloc.testing import HANG, dask_cluster


@pytest.fixture(scope="module")
def cluster():
    with dask_cluster() as address:
        yield address


def serial(ids, **kw) -> list[dict]:
    """The reference: the same trials run here in a plain loop, through the same JSON round trip."""
    return [json.loads(json.dumps({"trial": t, **demo_trial(t, **kw)})) for t in sorted(ids)]


def file_trials(path) -> Counter:
    """Trial ids of every line after the header. Every line must be complete, valid JSON."""
    lines = open(path, "rb").read().split(b"\n")
    assert lines[-1] == b"", "the file must end with a complete line"
    return Counter(json.loads(line)["trial"] for line in lines[1:-1])


def test_parallel_equals_serial(tmp_path):
    ids = list(range(60))[::-1]  # submitted out of order on purpose
    out = tmp_path / "out.jsonl"
    got = run_sweep(partial(demo_trial, seed=5), ids, out, workers=2, progress=False)
    assert got == serial(ids, seed=5)
    assert [r["trial"] for r in got] == sorted(ids)
    assert read_results(out) == got
    assert file_trials(out) == Counter(ids)


def test_resume_after_sigkill(tmp_path, cluster):
    total, seed, meta = 400, 11, {"seed": 11}
    out, calls = tmp_path / "out.jsonl", tmp_path / "calls"
    calls.mkdir()
    script = tmp_path / "sweep_script.py"
    script.write_text(
        textwrap.dedent(f"""
        import functools, sys
        from fairalloc.analysis.sweep import demo_trial, run_sweep
        if __name__ == "__main__":
            run_sweep(functools.partial(demo_trial, seed={seed}, sleep=0.015), range({total}), sys.argv[1],
                      workers=2, chunk_size=5, desc="kill-test", meta={meta!r}, progress=False)
    """)
    )
    proc = subprocess.Popen(
        [sys.executable, str(script), str(out)], start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + HANG  # a loaded machine may be slow to write 40 results
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") > 40:  # header + at least 40 results
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the sweep ended before the kill: {proc.communicate()}"
        os.killpg(proc.pid, signal.SIGKILL)  # the workers too
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    assert err == b"", err.decode()[-2000:]  # nothing on the terminal
    before = read_results(out)
    assert 40 <= len(before) < total, len(before)
    with open(out, "ab") as fh:  # as if killed in mid-write
        fh.write(b'{"trial": 399, "seed": 11, "us')
    prefix = out.read_bytes().rsplit(b"\n", 1)[0] + b"\n"

    got = run_sweep(
        partial(demo_trial, seed=seed, record=str(calls)),
        range(total),
        out,
        dask_address=cluster,
        desc="kill-test",
        meta=meta,
        progress=False,
    )

    assert got == serial(range(total), seed=seed)
    assert file_trials(out) == Counter(range(total))  # each trial exactly once
    assert out.read_bytes().startswith(prefix)  # old lines kept as they were
    called = Counter(int(name.split("-")[0]) for name in os.listdir(calls))
    assert sum(called.values()) == total - len(before)  # only the missing trials ran
    assert set(called) == set(range(total)) - {r["trial"] for r in before}
    # A finished file: nothing to run, so no cluster is contacted (this address is unreachable).
    assert (
        run_sweep(demo_trial, range(total), out, dask_address="tcp://127.0.0.1:1", desc="kill-test", meta=meta) == got
    )


def test_unreachable_scheduler_fails_fast():
    with pytest.raises(FairallocError) as err:  # not a wait for ever (the suite's hang detection would say so)
        run_sweep(demo_trial, range(3), dask_address="tcp://127.0.0.1:1", progress=False)
    assert str(err.value).startswith("--dask: cannot reach the Dask scheduler at tcp://127.0.0.1:1: ")
    assert "\n" not in str(err.value)


def test_stop_when_stops_early(tmp_path, cluster):
    out = tmp_path / "out.jsonl"
    hit = lambda r: r["trial"] == 5  # noqa: E731 (client side only)
    got = run_sweep(
        partial(demo_trial, sleep=0.005), range(2000), out, dask_address=cluster, stop_when=hit, progress=False
    )
    assert 5 in {r["trial"] for r in got}
    assert len(got) <= 400, len(got)  # at most the chunks in flight
    assert read_results(out) == got  # what finished was written
    # Resuming a search that already has its hit returns at once, without a cluster.
    assert (
        run_sweep(partial(demo_trial, sleep=0.005), range(2000), out, dask_address="tcp://127.0.0.1:1", stop_when=hit)
        == got
    )


def grouped(groups: int, size: int):
    """``(group of a trial, the serial results, each group's lowest hit, a sweep of them stopping at
    hits)`` for trials in groups of ``size`` (lambdas: the workers cannot import this module, so
    they are sent by value)."""
    group = lambda t: t // size  # noqa: E731
    hit = lambda r: r["users"] == 2 and r["resources"] == 2  # noqa: E731  (about 1 trial in 15)
    full = serial(range(groups * size), sleep=0)
    lowest = {
        g: min((r["trial"] for r in full if group(r["trial"]) == g and hit(r)), default=None) for g in range(groups)
    }
    assert all(t is not None for t in lowest.values())  # every group has a hit: the test checks something

    def sweep(out, address, **options) -> list[dict]:
        """The demo trials swept on ``address`` with those stops (``options``: more of run_sweep's)."""
        return run_sweep(
            partial(demo_trial, sleep=0.002),
            range(groups * size),
            out,
            dask_address=address,
            stop_when=hit,
            stop_group=group,
            progress=False,
            **options,
        )

    return group, full, lowest, sweep


def test_stop_group_stops_each_group_at_its_lowest_hit(tmp_path, cluster):
    """table2's early stop: a hit ends only its own group's trials above it; every group's lowest
    hit is the one a full sweep finds, on a cluster and again when resumed from the file."""
    groups, size = 8, 250
    group, full, lowest, sweep = grouped(groups, size)
    out = tmp_path / "out.jsonl"
    got = sweep(out, cluster, chunk_size=10)
    by_trial = {r["trial"]: r for r in full}
    assert all(r == by_trial[r["trial"]] for r in got)  # the same results as the serial reference
    for g, first in lowest.items():
        ran = {r["trial"] for r in got if group(r["trial"]) == g}
        assert set(range(g * size, first + 1)) <= ran  # every trial up to the lowest hit ran
    assert len(got) < groups * size / 2  # the rest of each group, bar the chunks in flight, did not
    assert read_results(out) == got
    # Resumed (here: with nothing left to run), the file alone settles every group: no cluster.
    again = sweep(out, "tcp://127.0.0.1:1")
    assert again == got


def test_stop_group_cancels_the_chunks_in_flight_that_a_hit_leaves_unwanted(tmp_path, cluster):
    """falsify's search is one stop group: every trial below the hit runs, and the chunks in flight
    above it are cancelled, not waited for (two workers, six chunks of 10 in flight, half a second
    each: without the cancel all six would come back, 60 trials)."""
    out = tmp_path / "out.jsonl"
    hit = lambda r: r["trial"] == 25  # noqa: E731 (client side only): in the third chunk
    got = run_sweep(
        partial(demo_trial, sleep=0.05),
        range(2000),
        out,
        dask_address=cluster,
        stop_when=hit,
        stop_group=lambda t: 0,
        chunk_size=10,
        progress=False,
    )
    trials = {r["trial"] for r in got}
    assert set(range(26)) <= trials
    assert len(got) < 60, sorted(trials)
    assert read_results(out) == got


def calls(record) -> Counter:
    """Trial ids of the calls the workers made (``demo_trial(..., record=...)``)."""
    return Counter(int(p.name.split("-")[0]) for p in record.iterdir())


def test_a_chunk_stops_at_its_own_hit(tmp_path, cluster):
    """The trials after a hit in the same chunk (same group) do not run: one chunk of 50 trials
    whose trial 3 is a hit makes 4 calls, not 50."""
    record = tmp_path / "calls"
    record.mkdir()
    got = run_sweep(
        partial(demo_trial, record=str(record)),
        range(50),
        None,
        dask_address=cluster,
        stop_when=lambda r: r["trial"] == 3,
        stop_group=lambda t: 0,
        chunk_size=50,
        progress=False,
    )
    assert [r["trial"] for r in got] == [0, 1, 2, 3]
    assert calls(record) == Counter(range(4))


def test_chunks_of_a_stopping_sweep_start_small_in_each_group():
    """Each group's chunks double from one trial (once timed, :func:`_chunks`), so the chunk
    running beside the one that finds the group's hit is short; without a stop (or with a chunk
    size given) chunks are fixed."""
    fast = lambda g: 0.001  # noqa: E731  (seconds per trial)
    grown = list(_chunks(list(range(400)), 50, lambda t: t // 200, grow=True, pace=fast))
    assert [len(c) for c in grown] == [1, 2, 4, 8, 16, 32, 50, 50, 37] * 2
    assert [t for c in grown for t in c] == list(range(400)) and all(len({t // 200 for t in c}) == 1 for c in grown)
    assert [len(c) for c in _chunks(list(range(120)), 50, None, grow=False)] == [50, 50, 20]
    gappy = _chunks([0, 1, 2, 3, 5, 6, 7, 9], 50, lambda t: t // 4, grow=True, pace=fast)
    assert list(gappy) == [[0], [1, 2], [3], [5], [6, 7], [9]]


def test_a_hit_at_the_first_trial_leaves_little_work_behind(tmp_path):
    """Group 0 (200 trials) has a hit at its first trial, group 1 (40) none. With the automatic
    chunk size (20 here), the other worker used to run a whole chunk of group 0 beside the hit, 20
    trials for nothing; the chunks now grow from one trial, so a few run. Counted when the sweep
    is over (group 1 ran to its end after them). On a cluster of its own: chunks other tests
    cancelled, still running on the shared one, would delay the hit and make the count vary."""
    record = tmp_path / "calls"
    record.mkdir()
    got = run_sweep(
        partial(demo_trial, sleep=0.2, record=str(record)),
        range(240),
        None,
        workers=2,
        stop_when=lambda r: r["trial"] == 0,
        stop_group=lambda t: t // 200,
        progress=False,
    )
    assert {r["trial"] for r in got} >= {0} | set(range(200, 240))
    wasted = sorted(t for t in calls(record) if 0 < t < 200)
    assert len(wasted) < 15, wasted


def test_each_groups_lowest_hit_is_followed_up_while_the_sweep_goes_on(tmp_path, cluster):
    """``followup(row)`` runs once per group, on its lowest hit (the one a full sweep finds), and
    its result comes back in that row only, not in the file; a failing one is named."""
    import operator

    groups, size = 4, 60
    _, _, lowest, sweep = grouped(groups, size)
    out = tmp_path / "out.jsonl"
    got = sweep(out, cluster, followup=operator.itemgetter("total_tasks"))
    followed = {r["trial"]: r["followup"] for r in got if "followup" in r}
    assert followed == {
        t: r["total_tasks"] for t, r in ((t, next(r for r in got if r["trial"] == t)) for t in lowest.values())
    }
    assert all("followup" not in r for r in read_results(out))
    with pytest.raises(TrialError, match=r"^the follow-up of trial \d+ failed: KeyError: 'nope'"):
        sweep(None, cluster, followup=operator.itemgetter("nope"))
    with pytest.raises(FairallocError, match="^followup: needs stop_when and stop_group"):
        run_sweep(demo_trial, range(3), stop_when=bool, followup=len)


def test_what_cannot_be_sent_to_the_workers_is_named_before_a_cluster_starts():
    import threading

    lock = threading.Lock()
    with pytest.raises(FairallocError, match=r"^stop_when: cannot be sent to the workers \(TypeError"):
        run_sweep(demo_trial, range(3), stop_when=lambda r: bool(lock), dask_address="tcp://127.0.0.1:1")
    with pytest.raises(FairallocError, match=r"^task: cannot be sent to the workers"):
        run_sweep(partial(demo_trial, seed=lock), range(3), dask_address="tcp://127.0.0.1:1")


def test_file_of_another_sweep_is_refused(tmp_path):
    out = tmp_path / "out.jsonl"
    assert run_sweep(demo_trial, [], out, desc="search", meta={"seed": 1}) == []  # header only
    content = out.read_bytes()
    for kw in ({"desc": "search", "meta": {"seed": 2}}, {"desc": "other", "meta": {"seed": 1}}):
        with pytest.raises(FairallocError, match="written by another sweep"):
            run_sweep(demo_trial, range(3), out, **kw)
    assert out.read_bytes() == content
    other = tmp_path / "notes.txt"  # not a sweep file: untouched
    other.write_text("my notes\n")
    with pytest.raises(FairallocError, match="not a sweep results file"):
        run_sweep(demo_trial, range(3), other)
    assert other.read_text() == "my notes\n"


def test_failing_trial_is_named(tmp_path, cluster):
    out = tmp_path / "out.jsonl"
    with pytest.raises(FairallocError) as err:
        run_sweep(partial(demo_trial, fail=[17]), range(40), out, dask_address=cluster, chunk_size=5, progress=False)
    assert isinstance(err.value, TrialError) and err.value.trial == 17
    message = str(err.value)
    assert message.startswith("trial 17 failed: ValueError: demo failure requested for trial 17")
    assert "\n" not in message and "ValueError: demo failure" in err.value.remote_traceback
    done = {r["trial"] for r in read_results(out)}
    assert {15, 16} <= done and 17 not in done  # its chunk's earlier trials kept


def test_file_repair_and_damage(tmp_path):
    """No cluster: the file logic on its own (truncated tail, damage, duplicates, the lock)."""
    header = _header("trials", None)
    path = tmp_path / "out.jsonl"
    good = json.dumps(header) + "\n" + '{"trial": 1, "x": 1}\n'
    path.write_text(good + '{"trial": 2, "x"')
    assert read_results(path) == [{"trial": 1, "x": 1}]
    _SweepFile(path, header).close()  # opening repairs the tail
    assert path.read_text() == good
    locked = _SweepFile(path, header)
    try:
        with pytest.raises(FairallocError, match="another sweep is writing"):
            _SweepFile(path, header)
    finally:
        locked.close()
    path.write_text(good + "garbage\n" + '{"trial": 3}\n')
    with pytest.raises(FairallocError, match="line 3 is not a trial result"):
        read_results(path)
    path.write_text(good + '{"trial": 1, "x": 1}\n')
    with pytest.raises(FairallocError, match="trial 1 appears twice"):
        read_results(path)
    path.write_text('{"sweep": "tri')  # killed while writing the header
    assert read_results(path) == []
    with pytest.raises(FairallocError, match="trial 3 appears twice"):
        run_sweep(demo_trial, [3, 4, 3])
    with pytest.raises(FairallocError, match="meta: not JSON-serialisable"):
        run_sweep(demo_trial, [], meta={"f": print})


def test_chunks_are_cut_to_about_a_second_once_a_groups_trials_are_timed():
    """A group whose trials take 0.4 s each gets chunks of 2 (1 s / 0.4 s); one of fast trials keeps
    doubling; one not timed yet goes a trial at a time (its chunks are cut before the first comes
    back): the chunk running beside a hit then wastes about a second."""
    slow = [len(c) for c in _chunks(list(range(12)), 50, lambda t: 0, grow=True, pace=lambda g: 0.4)]
    assert slow == [1, 2, 2, 2, 2, 2, 1]
    fast = [len(c) for c in _chunks(list(range(63)), 50, lambda t: 0, grow=True, pace=lambda g: 0.001)]
    assert fast == [1, 2, 4, 8, 16, 32]
    untimed = [len(c) for c in _chunks(list(range(5)), 50, lambda t: 0, grow=True, pace=lambda g: None)]
    assert untimed == [1, 1, 1, 1, 1]


def test_trials_go_out_in_the_order_asked_each_group_increasing(tmp_path, cluster):
    """``order`` changes when trials are sent, not what a sweep finds; an order that sends a group's
    trials out of order is refused (its lowest hit would no longer be the one a full sweep finds)."""
    size = 60
    group, full, lowest, sweep = grouped(4, size)
    backwards = sweep(None, cluster, order=lambda t: (-group(t), t))  # the last group first
    # every trial up to its group's lowest hit ran, with the serial result; those past it may have
    # (chunks in flight when the hit came), and none of them is a hit below the lowest
    upto = [r for r in full if r["trial"] <= lowest[group(r["trial"])]]
    assert [r for r in backwards if r["trial"] <= lowest[group(r["trial"])]] == upto
    with pytest.raises(FairallocError, match=r"^order: sends trial \d+ after trial \d+ of its stop group"):
        sweep(None, cluster, order=lambda t: -t)
    # without a stop, any order: the same results
    backwards = run_sweep(demo_trial, range(30), dask_address=cluster, order=lambda t: -t, progress=False)
    assert backwards == serial(range(30))


def test_the_schedulers_error_on_a_cancelled_chunk_is_not_printed():
    """A chunk a hit cancels while the scheduler gathers its result makes distributed log "Couldn't
    gather keys: {key: 'forgotten'}" at ERROR (seen at the end of a table2 run): the sweep drops
    that record, and only it, while it runs."""

    from fairalloc.analysis.sweep import _quiet_distributed

    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    logger = logging.getLogger("distributed.scheduler")
    handler = Keep()
    logger.addHandler(handler)
    try:
        with _quiet_distributed():
            logger.error("Couldn't gather keys: %s", {"fairalloc-sweep-1": "forgotten"})
            logger.error("Couldn't gather keys: %s", {"fairalloc-sweep-2": "memory"})
            logger.error("something else went wrong: %s", {"k": "forgotten"})
        logger.error("Couldn't gather keys: %s", {"fairalloc-sweep-3": "forgotten"})  # after the sweep
    finally:
        logger.removeHandler(handler)
    assert seen == [
        "Couldn't gather keys: {'fairalloc-sweep-2': 'memory'}",
        "something else went wrong: {'k': 'forgotten'}",
        "Couldn't gather keys: {'fairalloc-sweep-3': 'forgotten'}",
    ]
