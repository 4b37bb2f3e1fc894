"""A recording survives whatever stops its writer: SIGKILL, SIGTERM, Ctrl-C, a full disk.

These run ``pvdkit record`` as a real process and stop it from outside, as a user's kill, an OOM
killer or a full disk would. What must hold (issue "reliability", docs/recording-format.md):
the ``.h5`` opens with pvdkit and with h5py, says ``complete = false``, and holds every frame
simulated more than about one second before the stop.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from pvdkit.recording import Recording
from pvdkit.types import PvdWarning

#: Slack on top of the one-second commit interval: the progress line is drawn 10 times a second
#: and a commit of a second's frames takes a little time itself.
SLACK_S = 0.5
_PROGRESS = re.compile(rb"(\d+)/(\d+) steps")


class RecordProcess:
    """``pvdkit record`` in a child process, with the steps it reported and when."""

    def __init__(self, out: Path, *extra: str, duration: float = 3000.0) -> None:
        self.out = out
        self.proc = subprocess.Popen(
            # Pure Vehicle2: one frame per step, so frames and steps can be compared one to one.
            [sys.executable, "-m", "pvdkit", "record", "--pure-vehicle2", "--duration", str(duration), "-o",
             str(out), "--progress", *extra],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
        )
        self.progress: list[tuple[float, int]] = []
        self.stderr = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        while chunk := self.proc.stderr.read1(4096):
            now = time.monotonic()
            buf += chunk
            for m in _PROGRESS.finditer(chunk):
                self.progress.append((now, int(m.group(1))))
        self.stderr = buf

    def wait_for_steps(self, steps: int, timeout: float = 120.0) -> None:
        end = time.monotonic() + timeout
        while not self.progress or self.progress[-1][1] < steps:
            assert self.proc.poll() is None, self.stderr.decode(errors="replace")
            assert time.monotonic() < end, "the recording did not start"
            time.sleep(0.01)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self, sig: int) -> tuple[int, float]:
        """Send ``sig``; returns the exit status and the time it was sent."""
        t = time.monotonic()
        self.proc.send_signal(sig)
        status = self.proc.wait(timeout=60)
        self._reader.join(timeout=10)
        return status, t

    def steps_reported_before(self, t: float) -> int:
        return max((s for when, s in self.progress if when <= t), default=0)


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels(tmp_path_factory):
    """One short recording first, so that numba's cache holds every kernel a recording needs.

    Why: these tests time what a stop loses against the steps reported, and a process that
    compiles (a fresh cache: a new checkout, CI's base-install copy) spends its first seconds
    compiling the recording kernels after the first step while reporting steps."""
    out = tmp_path_factory.mktemp("warm") / "warm.h5"
    subprocess.run([sys.executable, "-m", "pvdkit", "record", "--pure-vehicle2", "--duration", "0.2",
                    "--quiet", "-o", str(out)], check=True, capture_output=True, timeout=600)


@pytest.fixture
def start_recording():
    """``start_recording(out, *args)`` → a :class:`RecordProcess`, killed at the end of the test."""
    started: list[RecordProcess] = []

    def start(out: Path, *extra: str, duration: float = 3000.0) -> RecordProcess:
        started.append(RecordProcess(out, *extra, duration=duration))
        return started[-1]

    yield start
    for run in started:
        run.kill()


def _h5py_open(path: Path) -> h5py.File:
    """Plain h5py, as docs/recording-format.md says: a file whose writer was killed is still
    marked open for writing by HDF5 and opens with ``swmr=True``."""
    try:
        return h5py.File(path, "r")
    except OSError as exc:
        assert "already open for write" in str(exc)
        return h5py.File(path, "r", swmr=True)


def _open_both(path: Path) -> tuple[Recording, dict]:
    with _h5py_open(path) as f:
        attrs = {k: f.attrs[k] for k in f.attrs}
        n_frames = f["frames"].shape[0]
    rec = Recording.open(path)
    assert n_frames >= len(rec.frames)
    return rec, attrs


def _assert_lost_at_most_a_second(run: RecordProcess, rec: Recording, stopped_at: float) -> None:
    must_have = run.steps_reported_before(stopped_at - 1.0 - SLACK_S)
    assert len(rec.frames) >= must_have, (len(rec.frames), must_have)
    # The wheels' state is there up to the end (a frame cut by a signal is closed as it is).
    wheel = rec.find_object("WheelRigidBody1dState0")
    frames, values = rec.series(wheel, "rotationSpeed")
    assert len(frames) and frames[-1] >= len(rec.frames) - 2
    assert np.all(np.isfinite(values))


@pytest.mark.parametrize("after_steps", [1, 300, 2500], ids=["first-frame", "early", "seconds-in"])
def test_sigkill_leaves_a_readable_recording(tmp_path, start_recording, after_steps):
    run = start_recording(tmp_path / "killed.h5")
    run.wait_for_steps(after_steps)
    time.sleep(0.05 if after_steps == 1 else 0.7)
    status, t = run.stop(signal.SIGKILL)
    assert status == -signal.SIGKILL
    rec, attrs = _open_both(run.out)
    assert not attrs["complete"]
    assert len(rec.frames) >= 1
    _assert_lost_at_most_a_second(run, rec, t)
    with pytest.warns(UserWarning, match="incomplete"):
        again = Recording.open(run.out)
    assert again.incomplete == "its writer has not closed it (still writing, or killed or crashed)"


@pytest.mark.parametrize(
    ("sig", "status", "name"), [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "SIGINT")]
)
def test_sigterm_and_sigint_close_the_file_with_the_reason(tmp_path, start_recording, sig, status, name):
    run = start_recording(tmp_path / "stopped.h5")
    run.wait_for_steps(600)
    got, t = run.stop(sig)
    assert got == status, run.stderr.decode(errors="replace")
    assert b"Traceback" not in run.stderr
    with h5py.File(run.out, "r") as f:  # closed cleanly: opens without SWMR too
        assert not f.attrs["complete"]
        assert name in f.attrs["interrupted"]
    rec = Recording.open(run.out)
    _assert_lost_at_most_a_second(run, rec, t)
    info = subprocess.run(
        [sys.executable, "-m", "pvdkit", "info", str(run.out)], capture_output=True, text=True
    )
    assert info.returncode == 0 and f"  incomplete: interrupted by {name}" in info.stdout


def _small_tmpfs(tmp_path: Path, size: str) -> Path:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()}); ENOSPC is injected below")
    return mount


@pytest.fixture
def tiny_disk(tmp_path, request):
    mount = _small_tmpfs(tmp_path, getattr(request, "param", "3m"))
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_full_disk_stops_with_one_line_and_a_readable_file(tiny_disk, start_recording):
    out = tiny_disk / "full.h5"
    run = start_recording(out, "--quiet")
    status = run.proc.wait(timeout=300)
    run._reader.join(timeout=10)
    err = run.stderr.decode(errors="replace").strip()
    assert status == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith("pvdkit: error: disk full writing") and str(out) in err
    with h5py.File(out, "r") as f:  # closed cleanly before the disk was full
        assert not f.attrs["complete"]
    rec = Recording.open(out)
    assert len(rec.frames) > 1000  # most of the 3 MB were used before stopping
    assert not [p for p in os.listdir(tiny_disk) if p.startswith(".")]  # no temporary files left


@pytest.mark.parametrize("tiny_disk", ["64m"], indirect=True)
def test_disk_filled_by_someone_else_mid_write(tiny_disk, start_recording):
    """The disk fills while HDF5 is writing (another process took the space): one line, exit 2,
    no crash of HDF5 at exit, and the recording up to its last commit."""
    out = tiny_disk / "race.h5"
    with open(tiny_disk / "filler", "wb", buffering=0) as filler:  # created while there is room
        run = start_recording(out, duration=30000.0)
        run.wait_for_steps(2000)
        time.sleep(1.5)  # a commit or two in
        filled_at = time.monotonic()
        try:
            while True:
                filler.write(b"\0" * 65536)
        except OSError:
            pass
    status = run.proc.wait(timeout=300)
    run._reader.join(timeout=10)
    err = run.stderr.decode(errors="replace")
    assert status == 2, err
    assert "disk full writing" in err and "Traceback" not in err
    rec, attrs = _open_both(out)
    assert not attrs["complete"]
    _assert_lost_at_most_a_second(run, rec, filled_at)


def test_injected_enospc_in_process(tmp_path, monkeypatch):
    """The same failure without a tmpfs: HDF5's flush fails with ENOSPC."""
    from pvdkit.h5 import writer as h5writer
    from pvdkit.types import PvdError
    from simcore.cli.record import record

    calls = {"n": 0}
    real_commit_row = h5writer.H5Writer._commit_row

    def failing_commit_row(self):
        calls["n"] += 1
        if calls["n"] == 3:  # the empty file and the first frame commit; the last commit fails
            raise RuntimeError("Unable to flush file (file write failed: errno = 28, error message = "
                               "'No space left on device')")
        real_commit_row(self)

    monkeypatch.setattr(h5writer.H5Writer, "_commit_row", failing_commit_row)
    out = tmp_path / "enospc.h5"
    with pytest.raises(PvdError, match=r"disk full writing .*enospc\.h5 after \d+ frames?;"):
        record(None, "accelerate", duration=2.0, out=out, physx=False)
    rec = Recording.open(out)
    assert len(rec.frames) >= 1


def test_commits_bound_what_a_reader_trusts(tmp_path):
    """Rows written after the last commit (a writer killed mid-batch) are not read."""
    from pvdkit.h5 import H5Stream

    data = (Path(__file__).parent.parent / "data" / "vehicles_short.ovd").read_bytes()
    live = tmp_path / "live.h5"
    s = H5Stream(live, flush_interval=1e9)
    s.write(data[:400_000])
    s.flush()
    committed = Recording.open(live)
    n_frames, n_sets = len(committed.frames), committed.counts()["set_attribute"]
    committed.close()
    # More frames, appended but never committed, as a writer killed between the two:
    s.write(data[400_000:700_000])
    indexed = s._index(s._take())
    s._writer.append_parts(indexed.parts)  # appended, not committed
    s._merge(indexed)
    s._writer.file.flush()
    shutil.copy(live, tmp_path / "killed.h5")
    s.close()
    killed = Recording.open(tmp_path / "killed.h5")
    assert len(killed.frames) == n_frames
    assert killed.counts()["set_attribute"] == n_sets
    full = Recording.open(live)
    assert len(full.frames) > n_frames


@pytest.mark.parametrize("last_row", ["zeros", "torn", "past_the_tables"])
def test_a_half_written_last_commit_falls_back_to_the_one_before(tmp_path, last_row):
    """A disk that fills during a commit can leave ``/log/commits`` one row longer with that
    row's bytes never written (zeros), torn, or pointing past the tables: the reader keeps to
    the commit before it instead of trusting none of the recording (seen on CI: 0 frames)."""
    from pvdkit.h5 import H5Stream

    data = (Path(__file__).parent.parent / "data" / "vehicles_short.ovd").read_bytes()
    live = tmp_path / "live.h5"
    s = H5Stream(live, flush_interval=1e9)
    s.write(data[:400_000])
    s.flush()
    f = s._writer.file  # the writer's own handle: the file is SWMR-locked to anyone else
    commits = f["log/commits"]
    good = commits[-1]
    bad = np.zeros(1, commits.dtype)
    if last_row == "torn":
        bad[0] = good
        bad[0]["frames"] = 0
    elif last_row == "past_the_tables":
        bad[0] = good
        bad[0]["log_kind"] = f["log/kind"].shape[0] + 1
    commits.resize((commits.shape[0] + 1,))
    commits[-1] = bad[0]
    f.flush()
    shutil.copy(live, tmp_path / "killed.h5")
    s.close()
    killed = Recording.open(tmp_path / "killed.h5")
    assert len(killed.frames) == int(good["frames"]) > 0
    assert killed.counts()["set_attribute"] > 0


def test_a_commit_log_none_of_whose_rows_fits_is_named(tmp_path):
    """When no row of ``/log/commits`` fits the tables (every row damaged), nothing can be
    trusted: the recording opened as empty with only the general "incomplete" warning, and
    convert wrote an empty file without a word. The warning now says why nothing is read."""
    from pvdkit.h5 import H5Stream

    data = (Path(__file__).parent.parent / "data" / "vehicles_short.ovd").read_bytes()
    live = tmp_path / "live.h5"
    s = H5Stream(live, flush_interval=1e9)
    s.write(data[:400_000])
    s.flush()
    f = s._writer.file
    commits = f["log/commits"]
    rows = commits[()]
    rows["frames"] = 10**9
    commits[...] = rows
    f.flush()
    shutil.copy(live, tmp_path / "killed.h5")
    s.close()
    with pytest.warns(PvdWarning, match=rf"none of the {len(rows)} rows of /log/commits fits its tables "
                                        r"\(a damaged commit log\), so no row can be trusted"):
        damaged = Recording.open(tmp_path / "killed.h5")
    assert len(damaged.frames) == 0
