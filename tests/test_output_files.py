"""Files fairalloc writes (fairalloc/core/files.py, issue 35): a fresh temporary file created
exclusively beside the target, synced, renamed over it.

A link planted where the temporary file used to be (``OUT.part``) or at a guessable name is never
followed; ``kill -9`` of a real ``fairalloc import --out`` at any moment leaves under the target
name either the old file or the whole new one (a hidden ``.OUT.*.part`` may be left beside it,
never a half-file under the name); two processes writing the same ``--out`` leave one of the two
whole outputs.  Nothing asserts on elapsed time: the kill delays are fractions of a measured run,
and every wait has a generous timeout.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from fairalloc.core import files
from fairalloc.core.errors import FairallocError
from fairalloc.core.files import write_atomically
from fairalloc.io.cases import parse_case

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 600  # seconds for one import on a busy machine; never a measure of speed
QUEUES = 4000  # a Volcano file of this many queues: an output of about 300 KB


def _volcano(path: Path, queues: int, weight_step: int) -> Path:
    """A Volcano file of ``queues`` Queue objects (weights 1..7, capabilities of 4..8 cpus)."""
    docs = (
        f"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: queue-{i:05d}\n"
        f"spec:\n  weight: {1 + (i * weight_step) % 7}\n  capability: {{cpu: {4 + i % 5}, memory: {8 + i % 3}Gi}}\n"
        for i in range(queues)
    )
    path.write_text("".join(docs))
    return path


def _import(source: Path, out: str = "big.yaml") -> list[str]:
    return [
        sys.executable,
        "-m",
        "fairalloc",
        "import",
        source.name,
        "--capacity",
        "cpu=1000,memory=4000Gi",
        "--out",
        out,
    ]


def _start(folder: Path, argv: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _reference(folder: Path, source: Path, out: str) -> tuple[bytes, float]:
    """The whole output of one uninterrupted import, and how long the run took (to spread the kills)."""
    start = time.monotonic()
    proc = _start(folder, _import(source, out))
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err.decode()
    return (folder / out).read_bytes(), time.monotonic() - start


def _loads(data: bytes) -> None:
    """Whatever fairalloc writes passes its own case loader."""
    parse_case(yaml.safe_load(data.decode()), "big.yaml")


def _strays(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f".{name}.*.part"))


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A folder with a large Volcano file and the whole output of its import."""
    folder = tmp_path_factory.mktemp("big")
    source = _volcano(folder / "queues.yaml", QUEUES, 1)
    new, seconds = _reference(folder, source, "big.yaml")  # the case is named after the file
    _loads(new)
    return folder, source, new, seconds


OLD = b"resources: {cpu: 1}\nusers:\n  a: {demand: {cpu: 1}}\n"


def test_kill_9_leaves_the_old_file_or_the_whole_new_one(big):
    """SIGKILL at fractions of a whole run (start-up, reading, solving, writing), and at moments
    after the temporary file appears (mid-write, syncing, renaming): the target is the old bytes or
    the whole new output, never anything else; a stray temporary file is hidden, never the target.
    (By hand, killed as the temporary file appears: 4 runs out of 4 left the old target and a
    hidden ``.big.yaml.*.part`` of 0 or all 306,034 bytes.)"""
    folder, source, new, seconds = big
    target = folder / "big.yaml"
    outcomes = []
    moments = [
        *((seconds * f, False) for f in (0.3, 0.6, 0.8, 0.9, 0.95, 1.0)),
        *((d, True) for d in (0, 1e-3, 5e-3, 0.02)),
    ]
    target.write_bytes(OLD)
    # the folder is the module's: another test may have left its own source file there
    visible = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    for delay, after_temp in moments:
        target.write_bytes(OLD)
        for stray in _strays(folder, "big.yaml"):
            stray.unlink()
        proc = _start(folder, _import(source))
        try:
            _wait_then_kill(proc, folder, delay, after_temp)
        finally:
            proc.kill()
            proc.wait(timeout=TIMEOUT)
        data = target.read_bytes()
        where = f"killed {delay} s after {'the temporary file appeared' if after_temp else 'the start'}"
        assert data in (OLD, new), f"{where}: {len(data)} bytes under the target, neither old nor new"
        _loads(data)
        outcomes.append("old" if data == OLD else "new")
        for stray in _strays(folder, "big.yaml"):  # what a kill may leave: hidden, never the target
            assert stray.name.startswith(".big.yaml.") and stray.name.endswith(".part"), where
        assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == visible, where
    assert "old" in outcomes, outcomes  # the early kills landed before the rename


def _wait_then_kill(proc: subprocess.Popen, folder: Path, delay: float, after_temp: bool) -> None:
    """SIGKILL ``proc`` ``delay`` seconds after its start, or after its temporary file appears."""
    deadline = time.monotonic() + TIMEOUT
    while after_temp and proc.poll() is None and not _strays(folder, "big.yaml"):
        assert time.monotonic() < deadline, "the import never started writing"
        time.sleep(0.0005)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)


def test_two_processes_writing_the_same_out_leave_one_whole_output(big):
    """Two imports of different files into one ``--out`` at once: the result is byte for byte
    one of the two outputs (each wrote its own temporary file; the last rename won)."""
    folder, source, _, _ = big
    other = _volcano(folder / "other.yaml", QUEUES, 3)
    # each output alone, under the shared name (the case is named after it)
    new_here, _ = _reference(folder, source, "shared.yaml")
    other_new, _ = _reference(folder, other, "shared.yaml")
    (folder / "shared.yaml").unlink()
    assert new_here != other_new
    for _ in range(2):
        procs = [_start(folder, _import(s, "shared.yaml")) for s in (source, other)]
        for proc in procs:
            _, err = proc.communicate(timeout=TIMEOUT)
            assert proc.returncode == 0, err.decode()
        data = (folder / "shared.yaml").read_bytes()
        assert data in (new_here, other_new), f"{len(data)} bytes: a mixture of the two outputs"
        _loads(data)
        assert not _strays(folder, "shared.yaml")
        (folder / "shared.yaml").unlink()


@pytest.mark.parametrize("planted", ["out.yaml.part", ".out.yaml.part", ".out.yaml..part"])
def test_a_link_at_the_old_or_a_guessable_temporary_name_is_never_followed(tmp_path, planted):
    """A symlink where the temporary file used to go (``OUT.part``) or at a name an attacker would
    guess: the import writes its output and the link's target is unchanged."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / planted).symlink_to(victim)
    source = _volcano(tmp_path / "queues.yaml", 3, 1)
    proc = _start(tmp_path, _import(source, "out.yaml"))
    _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err.decode()
    assert victim.read_text() == "precious\n"
    _loads((tmp_path / "out.yaml").read_bytes())
    assert (tmp_path / planted).is_symlink()  # left alone, not written through
    assert [p.name for p in _strays(tmp_path, "out.yaml") if p.name != planted] == []


def test_a_link_at_the_drawn_temporary_name_is_skipped(tmp_path, monkeypatch):
    """Even a link at exactly the name drawn for the temporary file is not followed: the file is
    created with O_CREAT | O_EXCL, which fails on any existing name (a link included), and the
    next name is drawn."""
    names = iter(["planted", "fresh"])
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / f".out.txt.{files._OWNER}planted.part").symlink_to(victim)
    used = []
    write_atomically(tmp_path / "out.txt", lambda tmp: used.append(tmp.name) or tmp.write_text("new\n"))
    assert used == [f".out.txt.{files._OWNER}fresh.part"]
    assert victim.read_text() == "precious\n"
    assert (tmp_path / "out.txt").read_text() == "new\n"


def test_the_temporary_files_of_killed_writers_are_removed_by_the_next_write(tmp_path):
    """What a ``kill -9`` leaves (``.NAME.HOST-PID.*.part``) is removed by the next write of NAME
    when its process is gone; the file of a live process, or of another host sharing the folder,
    is left alone."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = files._OWNER.rsplit("-", 1)[0]
    dead = tmp_path / f".out.txt.{host}-{int(gone.stdout)}.abc.part"
    live = tmp_path / f".out.txt.{files._OWNER}def.part"
    elsewhere = tmp_path / f".out.txt.otherhost-{int(gone.stdout)}.ghi.part"
    for stray in (dead, live, elsewhere):
        stray.write_text("half")
    write_atomically(tmp_path / "out.txt", lambda tmp: tmp.write_text("new\n"))
    assert not dead.exists()
    assert live.exists() and elsewhere.exists()
    assert (tmp_path / "out.txt").read_text() == "new\n"


def test_a_new_file_has_the_mode_the_umask_gives(tmp_path):
    """mkstemp makes 0600; the output gets what a file created normally would: 0666 less the umask."""
    old = os.umask(0o027)
    try:
        write_atomically(tmp_path / "out.txt", lambda tmp: tmp.write_text("x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == 0o640


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")

    def half(tmp: Path) -> None:
        tmp.write_text("half")
        raise ValueError("a figure failed half-way")

    with pytest.raises(ValueError, match="half-way"):
        write_atomically(target, half)
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_an_os_error_is_one_line_naming_the_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a short path: the message shows it whole
    with pytest.raises(FairallocError, match=r"^missing/out\.txt: cannot write \(No such file or directory\)$"):
        write_atomically("missing/out.txt", lambda tmp: tmp.write_text("x"))

    def full(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(FairallocError, match=r"^out\.txt: cannot write \(No space left on device\)$"):
        write_atomically("out.txt", full)
    assert list(tmp_path.iterdir()) == []


def test_the_suffix_ends_the_temporary_name(tmp_path, section_4_1):
    """A figure's format is read from the name matplotlib is given: an SVG target is SVG."""
    from fairalloc.analysis.tradeoff import frontier, plot_frontier

    names = []
    write_atomically(tmp_path / "f.svg", lambda tmp: names.append(tmp.name) or tmp.write_text(""), suffix=".svg")
    assert names[0].startswith(".f.svg.") and names[0].endswith(".part.svg")
    plot_frontier(frontier(section_4_1, [0, "inf"], references=["drf"]), tmp_path / "frontier.svg")
    assert (tmp_path / "frontier.svg").read_text().lstrip().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.svg", "frontier.svg"]


def test_the_data_is_synced_before_the_rename_and_the_folder_after(tmp_path, monkeypatch):
    """The order that makes a power cut safe: fsync of the file, the rename, fsync of the folder."""
    import fairalloc.core.files as files

    calls = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append(("fsync", "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else os.fstat(fd).st_size))
        real_fsync(fd)

    def replace(src, dst) -> None:
        calls.append(("replace", Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)
    write_atomically(tmp_path / "out.txt", lambda tmp: tmp.write_text("12345"))
    assert calls == [("fsync", 5), ("replace", "out.txt"), ("fsync", "folder")]


def test_a_target_of_the_longest_name_still_gets_a_temporary_file(tmp_path):
    """The temporary name holds at most 100 characters of the target's: 255 is the usual limit."""
    target = tmp_path / ("n" * 250 + ".yaml")
    write_atomically(target, lambda tmp: tmp.write_text("x"))
    assert target.read_text() == "x" and [p.name for p in tmp_path.iterdir()] == [target.name]
