"""The viewer shows recordings as they grow (issue 15): PhysX's stream over TCP, an ``.ovd`` or
an ``.h5`` still being written. Streams are sent over loopback in small, randomly sized pieces
at a throttled rate, as PhysX sends them, with disconnects in the middle of a command."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from pvdkit.live import PREAMBLE
from pvdkit.ovd.tokenizer import tokenize
from pvdkit.recording import Recording
from pvdkit.types import Command, PvdError, PvdWarning
from tests.pvdkit.test_listen import _cut_inside_command, send
from viewer.model.live import H5FileWatch, OvdFileFeed, TcpFeed, being_written
from viewer.model.timeline import Timeline, assumed_timebase
from viewer.model.workspace import Workspace

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURE = DATA / "vehicles_short.ovd"


@pytest.fixture(scope="module")
def stream() -> bytes:
    return FIXTURE.read_bytes()


@pytest.fixture(scope="module")
def whole(stream):
    return tokenize(np.frombuffer(stream, np.uint8))


def _open(path) -> Recording:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PvdWarning)
        return Recording.open(path)


def _prefix(stream: bytes, end: int, tmp_path: Path) -> Recording:
    """The recording the first ``end`` bytes of the stream hold (read as a cut file)."""
    p = tmp_path / f"prefix_{end}.ovd"
    p.write_bytes(stream[:end])
    return _open(p)


def _sender(port: int, data: bytes, **kw) -> threading.Thread:
    t = threading.Thread(target=send, args=(port, PREAMBLE + data), kwargs=kw, daemon=True)
    t.start()
    return t


def _send_rest(sock: socket.socket, data: bytes, rate: float) -> None:
    """Send ``data`` on an open connection in 2,000-byte pieces at about ``rate`` bytes/s, then close."""
    start = time.monotonic()
    for i in range(0, len(data), 2000):
        sock.sendall(data[i:i + 2000])
        ahead = start + (i + 2000) / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
    sock.close()


def _live(tmp_path: Path, save: str | None = "live.h5") -> tuple[Workspace, TcpFeed]:
    """A workspace showing a started TcpFeed on a free port (recording into ``tmp_path/save``)."""
    feed = TcpFeed("127.0.0.1:0", str(tmp_path / save) if save else None)
    ws = Workspace()
    ws.set_live(feed)
    feed.start()
    return ws, feed


def _poll_until_frames(ws: Workspace, n: int, timeout: float = 30.0) -> None:
    """Poll as the viewer's timer does until the recording has ``n`` frames."""
    deadline = time.monotonic() + timeout
    while len(ws.session.recording.frames) < n and time.monotonic() < deadline:
        ws.poll_live()
        time.sleep(0.02)
    assert len(ws.session.recording.frames) >= n


def _poll_until_done(ws: Workspace, feed, timeout: float = 60.0) -> list[int]:
    """Poll as the viewer's timer does; the frame count seen after each poll that grew."""
    seen = []
    deadline = time.monotonic() + timeout
    while (feed.live or feed.running) and time.monotonic() < deadline:
        g = ws.poll_live()
        if g is not None:
            seen.append(len(ws.session.recording.frames))
        time.sleep(0.02)
    g = ws.poll_live()
    if g is not None:
        seen.append(len(ws.session.recording.frames))
    assert not feed.running, "the feed did not end"
    return seen


# --------------------------------------------------------------------------------------------
# The model: a workspace over a TCP feed
# --------------------------------------------------------------------------------------------


def test_a_throttled_stream_cut_mid_command_grows_the_model_and_keeps_every_complete_frame(
        tmp_path, stream, whole):
    cut = _cut_inside_command(whole, 0.6)
    out = tmp_path / "live.h5"
    ws, feed = _live(tmp_path, out.name)
    sender = _sender(feed.port, stream[:cut], seed=3, max_piece=3000, rate=600e3)
    seen = _poll_until_done(ws, feed)
    sender.join(5)

    # The frame count grew while the data arrived, step by step, never backwards.
    assert len(set(seen)) >= 4, seen
    assert seen == sorted(seen)
    # The disconnect leaves everything received in place, with its reason.
    expected = _prefix(stream, cut, tmp_path)
    rec = ws.session.recording
    assert feed.state == "lost" and "ended inside a command" in feed.reason
    assert rec.incomplete == feed.reason
    assert len(rec.frames) == len(expected.frames) > 0
    assert len(rec.objects) == len(expected.objects)
    # The timeline followed the latest frame; vehicles were found as they appeared.
    assert ws.timeline.follow and ws.timeline.frame == ws.timeline.last_frame == len(expected.frames) - 1
    from viewer.model.vehicles import find_vehicles

    names = [v.name for v in ws.session.vehicles]
    assert names == [v.name for v in find_vehicles(expected)] and len(names) == 4
    # The recording kept on disk holds every complete frame, with the same values.
    saved = _open(out)
    assert saved.incomplete is not None and "ended inside a command" in saved.incomplete
    assert len(saved.frames) == len(expected.frames)
    for name in ("WheelRigidBodyState", "RigidBodyState"):
        o_live = [o for o in rec.objects if o.cls and o.cls.name == name][0]
        o_saved = saved.find_object(str(o_live.handle))
        attr = next(iter(o_live.cls.paths))
        a, b = rec.series(o_live, attr), saved.series(o_saved, attr)
        np.testing.assert_array_equal(a.frames, b.frames)
        np.testing.assert_array_equal(a.values, b.values)


def test_a_clean_end_is_complete_and_equal_to_the_file(tmp_path, stream):
    out = tmp_path / "live.ovd"
    ws, feed = _live(tmp_path, out.name)
    _sender(feed.port, stream, seed=5, max_piece=20000, rate=20e6)
    _poll_until_done(ws, feed)
    assert feed.state == "ended" and feed.reason is None
    assert out.read_bytes() == stream
    ref = _open(FIXTURE)
    rec = ws.session.recording
    assert len(rec.frames) == len(ref.frames) and len(rec.objects) == len(ref.objects)
    assert "ended the stream" in feed.status_text()


def test_a_silent_peer_does_not_hold_the_one_connection_the_viewer_takes(tmp_path, stream, monkeypatch):
    """The viewer takes one connection: a peer that connected and said nothing, or a few bytes
    and then nothing, held it, so PhysX could not connect (as pvdkit listen's fuzzing finds). A
    peer without PhysX's preamble and header is dropped after FIRST_BYTES_SECONDS and the next
    connection is recorded."""
    import viewer.model.live as live

    monkeypatch.setattr(live, "FIRST_BYTES_SECONDS", 0.5)
    out = tmp_path / "live.ovd"
    ws, feed = _live(tmp_path, out.name)
    with socket.create_connection(("127.0.0.1", feed.port)) as probe:  # half a preamble, then nothing
        probe.sendall(PREAMBLE[:4])
        time.sleep(0.1)
        _sender(feed.port, stream, seed=9, max_piece=20000, rate=20e6)  # queued behind it
        _poll_until_done(ws, feed)
    assert feed.state == "ended" and out.read_bytes() == stream


def test_scrubbing_back_stops_following_and_the_frame_stays_while_data_arrives(tmp_path, stream):
    ws, feed = _live(tmp_path)
    _sender(feed.port, stream, seed=7, max_piece=2000, rate=500e3)
    _poll_until_frames(ws, 6)
    ws.timeline.set_frame(2)  # the user scrubs back
    assert not ws.timeline.follow
    _poll_until_done(ws, feed)
    assert ws.timeline.frame == 2
    assert ws.timeline.n_frames == len(ws.session.recording.frames) > 6
    ws.timeline.set_follow(True)
    assert ws.timeline.frame == ws.timeline.last_frame


def test_a_saved_recording_compared_with_a_live_one_follows_its_growth(tmp_path, stream):
    from viewer.model.session import RecordingSession

    ws, feed = _live(tmp_path)
    _sender(feed.port, stream, seed=9, max_piece=2000, rate=400e3)
    _poll_until_frames(ws, 5)
    ws.add_comparison(RecordingSession.open(FIXTURE))
    comp = ws.comparison
    before = len(comp.common_frames())
    wheel = ws.session.vehicles[0].wheels[0].parts["WheelRigidBodyState"][0]
    ws.plot("WheelRigidBodyState.rotationSpeed", context=wheel)
    key = ws.plots.plots[-1].curves[0].key
    _poll_until_done(ws, feed)
    n = len(ws.session.recording.frames)
    assert before < len(comp.common_frames()) == n  # A grew; B, the same run, is whole
    diff = comp.difference(key)
    assert diff is not None and len(diff.frames) > 0
    assert np.all(diff.values[np.isfinite(diff.values)] == 0)  # the same bytes: no difference


def test_a_connection_that_is_not_physx_ends_the_feed_with_one_line(tmp_path):
    ws, feed = _live(tmp_path, "x.h5")
    with socket.create_connection(("127.0.0.1", feed.port)) as s:
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
    _poll_until_done(ws, feed)
    assert feed.state == "lost" and "not PhysX's OmniPVD preamble" in feed.reason
    assert "\n" not in feed.reason
    assert not (tmp_path / "x.h5").exists()


def test_stop_keeps_what_arrived_and_a_temporary_recording_can_be_saved(tmp_path, stream):
    ws, feed = _live(tmp_path, None)
    assert feed.temporary
    sock = send(feed.port, PREAMBLE + stream[: len(stream) // 2], keep_open=True)
    deadline = time.monotonic() + 30
    while len(ws.session.recording.frames) < 3 and time.monotonic() < deadline:
        ws.poll_live()
        time.sleep(0.02)
    ws.stop_live()
    sock.close()
    assert feed.state == "stopped"
    frames = len(ws.session.recording.frames)
    assert frames >= 3
    saved = feed.save_as(str(tmp_path / "kept.h5"))
    assert not feed.temporary and os.path.exists(saved)
    rec = _open(saved)
    assert rec.incomplete == "stopped in the viewer"
    assert len(rec.frames) >= frames - 1  # the frame open at the stop may be cut
    feed2 = TcpFeed("127.0.0.1:0")
    tmp = Path(feed2.path).parent
    feed2.discard()
    assert not tmp.exists()


def test_a_port_in_use_and_a_bad_address_are_errors_at_once(tmp_path):
    feed = TcpFeed("127.0.0.1:0", str(tmp_path / "a.h5"))
    try:
        with pytest.raises(PvdError, match="cannot listen"):
            TcpFeed(f"127.0.0.1:{feed.port}", str(tmp_path / "b.h5"))
    finally:
        feed.discard()
    with pytest.raises(PvdError, match="expected \\[HOST:\\]PORT"):
        TcpFeed("127.0.0.1:http")
    with pytest.raises(PvdError, match="folder"):
        TcpFeed("127.0.0.1:0", str(tmp_path / "missing" / "a.h5"))


# --------------------------------------------------------------------------------------------
# Files still being written
# --------------------------------------------------------------------------------------------


def test_an_ovd_being_written_is_followed_as_it_grows(tmp_path, stream, whole):
    path = tmp_path / "growing.ovd"
    frames_at = np.flatnonzero(whole.kind == Command.STOP_FRAME)
    ends = [int(whole.end[frames_at[k]]) for k in (2, 8, 14)] + [len(stream)]
    path.write_bytes(stream[: ends[0]])
    assert being_written(str(path))
    assert not being_written(str(path), now=time.time() + 60)
    feed = OvdFileFeed(str(path))
    ws = Workspace()
    ws.set_live(feed)
    feed.start()
    counts = []
    try:
        for end in ends[1:]:
            deadline = time.monotonic() + 10
            while len(ws.session.recording.frames) < 1 and time.monotonic() < deadline:
                ws.poll_live()
                time.sleep(0.02)
            counts.append(len(ws.session.recording.frames))
            with open(path, "ab") as f:
                f.write(stream[path.stat().st_size:end])
            deadline = time.monotonic() + 10
            while len(ws.session.recording.frames) == counts[-1] and time.monotonic() < deadline:
                ws.poll_live()
                time.sleep(0.02)
        deadline = time.monotonic() + 10
        ref = _open(FIXTURE)
        while len(ws.session.recording.frames) < len(ref.frames) and time.monotonic() < deadline:
            ws.poll_live()
            time.sleep(0.02)
        assert feed.state == "following"
        assert counts == sorted(counts) and len(set(counts)) == 3
        assert len(ws.session.recording.frames) == len(ref.frames)
        # A file rewritten shorter stops the follower, keeping what was read.
        path.write_bytes(stream[:100])
        deadline = time.monotonic() + 10
        while feed.running and time.monotonic() < deadline:
            time.sleep(0.02)
        ws.poll_live()
        assert feed.state == "lost" and "truncated or rewritten" in feed.reason
        assert len(ws.session.recording.frames) == len(ref.frames)
    finally:
        ws.stop_live()


def _growing_h5(tmp_path: Path, stream: bytes, whole, frames: int = 4):
    """An ``.h5`` being written (a crash-safe H5Stream, committed) holding the first ``frames``
    frames of the stream; returns (path, the stream, end offsets of every frame)."""
    from pvdkit.h5.stream import H5Stream

    path = tmp_path / "growing.h5"
    ends = whole.end[np.flatnonzero(whole.kind == Command.STOP_FRAME)].astype(np.int64)
    # Commits written before frame_end() returns: the test reads the file between writes, in the
    # writer's own process (see _read_watched).
    h5 = H5Stream(str(path), flush_interval=0.0, compact=False, background=False)
    h5.write(stream[: int(ends[frames - 1])])
    h5.frame_end()
    return path, h5, ends


def _read_watched(watch: H5FileWatch, path: Path, *, stamp=None) -> Recording:
    """Read the file as the window does: its stamp first, then the read, then ``seen``. (A
    reader in the writer's own process must let go of the file before the writer goes on: one
    HDF5 library holds one file open once. Across processes, SWMR lets both.)"""
    stamp = watch.stamp() if stamp is None else stamp
    rec = _open(path)
    rec.close()
    watch.seen(rec, stamp)
    return rec


def test_an_h5_being_written_is_watched_until_its_writer_closes_it(tmp_path, stream, whole):
    path, h5, ends = _growing_h5(tmp_path, stream, whole)
    watch = H5FileWatch(str(path))
    rec = _read_watched(watch, path)
    assert being_written(str(path), rec)
    assert not watch.done and not watch.changed()
    time.sleep(0.01)
    h5.write(stream[int(ends[3]): int(ends[9])])
    h5.frame_end()
    assert watch.changed()
    assert len(_read_watched(watch, path).frames) > len(rec.frames)
    h5.write(stream[int(ends[9]):])
    h5.close()
    done = _read_watched(watch, path)
    assert watch.done and not watch.changed()
    assert not being_written(str(path), done)


def test_a_write_landing_while_the_h5_is_read_is_not_missed(tmp_path, stream, whole, monkeypatch):
    """The writer closes the file between the watch's stamp and the read that follows: the
    stamp (taken first) differs from the file, so the watch reads it again and sees it done.
    A change stat cannot see (same size, same timestamp tick) gets one more look after a
    quiet spell, and only one."""
    from viewer.model import live

    monkeypatch.setattr(live, "QUIET_SECONDS", 0.05)
    path, h5, ends = _growing_h5(tmp_path, stream, whole)
    watch = H5FileWatch(str(path))
    before = watch.stamp()
    rec = _open(path)
    rec.close()
    time.sleep(0.01)
    h5.write(stream[int(ends[3]):])
    h5.close()  # lands after the stamp, before the window hears of the read
    watch.seen(rec, before)
    assert not watch.done and watch.changed()
    _read_watched(watch, path)
    assert watch.done and not watch.changed()

    quiet = H5FileWatch(str(path))
    quiet.seen(rec, quiet.stamp())  # as if the close had left stat unchanged
    assert not quiet.changed()
    time.sleep(0.06)
    assert quiet.changed()  # the one more look
    quiet.seen(rec, quiet.stamp())  # still unfinished, unchanged: no endless re-reading
    time.sleep(0.06)
    assert not quiet.changed()


# --------------------------------------------------------------------------------------------
# Timeline
# --------------------------------------------------------------------------------------------


def test_timeline_extend_keeps_the_frame_and_follow_moves_to_the_last():
    tl = Timeline(assumed_timebase(10))
    tl.set_frame(4)
    got = []
    tl.extended.connect(got.append)
    tl.extend(assumed_timebase(20))
    assert tl.frame == 4 and got == [20]
    tl.set_follow(True)
    assert tl.frame == 19
    tl.extend(assumed_timebase(30))
    assert tl.frame == 29 and tl.follow
    tl.end()
    assert tl.follow
    tl.step(-1)
    assert not tl.follow
    tl.set_follow(True)
    tl.set_timebase(assumed_timebase(5))  # another recording: not followed
    assert not tl.follow and tl.frame == 0


# --------------------------------------------------------------------------------------------
# The window
# --------------------------------------------------------------------------------------------


def test_the_window_shows_a_live_stream_growing_and_offers_to_keep_it(qtbot, tmp_path, stream, whole):
    from PySide6.QtCore import QSettings

    from viewer.widgets.main_window import MainWindow

    settings = QSettings(str(tmp_path / "viewer.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    asked = []
    win.ask_keep_live = lambda feed: asked.append(feed) or str(tmp_path / "kept.h5")
    feed = win.listen("127.0.0.1:0")
    assert feed is not None and not win.timeline.follow_button.isHidden()
    assert win.timeline.follow_button.isChecked()
    cut = _cut_inside_command(whole, 0.7)
    first = _cut_inside_command(whole, 0.3)
    slider_max = []

    def grown():
        slider_max.append(win.timeline.slider.maximum())
        return not feed.running and not win._live_timer.isActive()

    # A first part, shown before the rest comes: on a loaded machine the window's first refresh
    # (the object graph, the start view) can outlast a whole stream sent at once.
    sock = send(feed.port, PREAMBLE + stream[:first], seed=11, max_piece=2500, rate=500e3, keep_open=True)
    qtbot.waitUntil(lambda: grown() or win.timeline.slider.maximum() > 0, timeout=60_000)
    threading.Thread(target=_send_rest, args=(sock, stream[first:cut], 500e3), daemon=True).start()
    qtbot.waitUntil(grown, timeout=60_000)
    expected = _prefix(stream, cut, tmp_path)
    ws = win.workspace
    assert len(ws.session.recording.frames) == len(expected.frames)
    assert len(set(slider_max)) >= 3  # the timeline grew in steps while data arrived
    assert win.timeline.slider.maximum() == len(expected.frames) - 1
    assert win.timeline.slider.value() == win.timeline.slider.maximum()
    # The start view appeared once the vehicles did: first vehicle, wheel speeds plotted.
    assert ws.current_vehicle is not None and ws.current_vehicle.name == "/World/Basic"
    qtbot.waitUntil(lambda: bool(win.plots.panels), timeout=5_000)
    # The curves grew with the recording (fetched again into the same plot items).
    last = ws.timeline.last_frame
    qtbot.waitUntil(lambda: win.plots.panels[0].drawn[0].data.frames[-1] >= last - 2, timeout=5_000)
    # the x axis says what its ticks count once the clock arrived (it kept "frame" over seconds)
    bottom = win.plots.panels[-1].items()[-1].getAxis("bottom")
    qtbot.waitUntil(lambda: bottom.labelText == "time [s]" or win.plots.panels[-1].items()[-1]
                    .getAxis("bottom").labelText == "time [s]", timeout=5_000)
    assert win.objects.tree.topLevelItemCount() >= 1
    assert "ended inside a command" in win.status_label.text()
    # Scrubbing back while stopped, then closing: the temporary recording is offered and kept.
    ws.timeline.set_frame(1)
    assert not win.timeline.follow_button.isChecked()
    win.close()
    assert asked == [feed]
    kept = _open(tmp_path / "kept.h5")
    assert len(kept.frames) == len(expected.frames)


def test_while_scrubbing_back_new_data_is_taken_in_five_times_a_second(qtbot, tmp_path, stream):
    """Following, every 20 ms tick takes in what arrived; on an earlier frame the window takes
    it in only every LIVE_POLL_BACK_MS (it only lengthens the timeline there), so scrubbing is
    not slowed by 50 appends a second — and the stream's end is still seen at once."""
    from PySide6.QtCore import QSettings

    from viewer.widgets import main_window
    from viewer.widgets.main_window import LIVE_POLL_BACK_MS, MainWindow

    settings = QSettings(str(tmp_path / "viewer.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.ask_keep_live = lambda feed: ""
    feed = win.listen("127.0.0.1:0")
    sender = _sender(feed.port, stream, seed=3, max_piece=4000, rate=200e3)
    qtbot.waitUntil(lambda: len(win.workspace.session.recording.frames) >= 3, timeout=30_000)
    win._live_timer.stop()  # ticks by hand, on a clock of our own
    clock = [10_000_000]
    win._live_clock = lambda: clock[0]
    ws = win.workspace
    drains = []
    poll = ws.poll_live
    ws.poll_live = lambda: drains.append(clock[0]) or poll()

    def tick(n: int) -> None:
        for _ in range(n):
            clock[0] += main_window.LIVE_POLL_MS
            win._poll_live()

    tick(5)
    assert len(drains) == 5  # following: every tick
    ws.timeline.set_frame(1)
    assert not ws.timeline.follow
    drains.clear()
    tick(50)  # one second
    assert 4 <= len(drains) <= 6 and min(np.diff(drains)) >= LIVE_POLL_BACK_MS
    assert ws.timeline.frame == 1
    ws.timeline.set_follow(True)
    drains.clear()
    tick(5)
    assert len(drains) == 5
    ws.timeline.set_frame(1)
    sender.join(30)
    qtbot.waitUntil(lambda: not feed.running, timeout=30_000)
    drains.clear()
    tick(1)  # a feed that ended is taken in at the next tick, whatever the frame shown
    assert len(drains) == 1 and len(ws.session.recording.frames) == len(_open(FIXTURE).frames)
    del ws.poll_live  # (the instance attribute's cycle crashed PySide at close)
    win.close()


def test_cancelling_the_keep_question_keeps_the_window_open(qtbot, tmp_path, stream):
    from PySide6.QtCore import QSettings

    from viewer.widgets.main_window import MainWindow

    settings = QSettings(str(tmp_path / "viewer.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    win.ask_keep_live = lambda feed: None
    feed = win.listen("127.0.0.1:0")
    _sender(feed.port, stream, seed=2, max_piece=50000, rate=50e6)
    qtbot.waitUntil(lambda: not feed.running and not win._live_timer.isActive(), timeout=60_000)
    assert not win.close()
    assert win.isVisible() and win.workspace.live is feed
    win.ask_keep_live = lambda feed: ""  # discard
    tmp = Path(feed.path).parent
    assert win.close()
    assert not tmp.exists()


def test_view_listen_arguments_are_checked_in_one_line(tmp_path):
    import argparse

    from viewer import cli

    def run(*argv):
        p = argparse.ArgumentParser()
        cli.configure(p)
        return cli.run(p.parse_args(list(argv)))

    with pytest.raises(PvdError, match="--save records a live stream: use it with --listen"):
        run("--save", str(tmp_path / "x.h5"))
    with pytest.raises(PvdError, match="--listen shows PhysX's live stream"):
        run("--listen", "5425", str(FIXTURE))
    with pytest.raises(PvdError, match="bad address"):
        run("--listen", "host:port")
    with pytest.raises(PvdError, match="unknown output format"):
        run("--listen", "0", "--save", str(tmp_path / "x.txt"))
    with pytest.raises(PvdError, match="cannot be combined with --screenshot"):
        run("--listen", "0", "--screenshot", str(tmp_path / "x.png"))
    with pytest.raises(PvdError, match="--follow needs a recording"):
        run("--follow")


def test_a_fixture_copy_is_not_taken_for_a_growing_file(tmp_path):
    p = tmp_path / "old.ovd"
    shutil.copy(FIXTURE, p)
    os.utime(p, (time.time() - 3600, time.time() - 3600))
    assert not being_written(str(p))
    assert being_written(str(p), recently=False)


_WRITER = """
import sys, time
from pvdkit.live import LiveRecorder
data = open(sys.argv[1], "rb").read()
rec = LiveRecorder(sys.argv[2], flush_interval=0.5)
step = len(data) // 100
for k, i in enumerate(range(0, len(data), step)):
    rec.feed(data[i:i + step])
    rec.poll()
    time.sleep(0.02)
    if k in (10, 50):
        rec.poll()  # a commit: what was fed is in the file
        print("started" if k == 10 else "half", flush=True)
        sys.stdin.readline()  # the test looks at the file, then lets the writer go on
rec.close()
"""


def test_the_window_follows_an_h5_another_process_is_writing(qtbot, tmp_path):
    import subprocess
    import sys

    from PySide6.QtCore import QSettings

    from pvdkit.convert import convert
    from viewer.widgets.main_window import MainWindow

    out = tmp_path / "growing.h5"
    source = tmp_path / "dev_drive.ovd"  # 30 MB: commits the first open's view misses
    convert(DATA / "dev_drive.h5", source)
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(source), str(out)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "started"
        settings = QSettings(str(tmp_path / "viewer.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings)
        qtbot.addWidget(win)
        win.open_file(str(out), wait=True)
        first = win.workspace.session.n_frames
        assert win._h5_watch is not None and not win.timeline.follow_button.isHidden()
        writer.stdin.write("go\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "half"
        # it grows on screen while its writer still has it open (HDF5 gave a second open in
        # this process the first one's view: 161 frames shown of a file grown to 2,485)
        qtbot.waitUntil(lambda: win.workspace.session.n_frames > first, timeout=60_000)
        assert win._h5_watch is not None and writer.poll() is None
        writer.stdin.write("go\n")
        writer.stdin.flush()
        qtbot.waitUntil(lambda: win._h5_watch is None, timeout=60_000)  # the writer closed it
        assert writer.wait(30) == 0
    finally:
        writer.kill()
    ref = _open(source)
    ws = win.workspace
    assert first < ws.session.n_frames == len(ref.frames)
    assert ws.session.recording.incomplete is None
    assert ws.timeline.frame == ws.timeline.last_frame  # it followed the latest frame
    assert ws.current_vehicle is not None and ws.current_vehicle.name == "/World/Basic"
    assert not win.check_disk()  # the state shown is the file's last: no "changed on disk"


def test_differences_wait_for_a_live_recording_to_stop(qtbot, tmp_path):
    from viewer.model.session import RecordingSession
    from viewer.widgets.differences import DifferencesPanel

    ws, feed = _live(tmp_path)
    try:
        ws.add_comparison(RecordingSession.open(FIXTURE))
        panel = DifferencesPanel(ws)
        qtbot.addWidget(panel)
        assert panel.find_button.isEnabled()
        assert panel.find() is None and "still receiving" in panel.header.text()
    finally:
        feed.stop()


def test_a_lost_stream_names_its_peer_once():
    """The recorder's reasons start with the peer (its source name); the status bar said
    "127.0.0.1:51950: 127.0.0.1:51950: the stream ended …"."""
    from viewer.model.live import TcpFeed

    feed = TcpFeed("127.0.0.1:0")
    try:
        feed.peer, feed.state = "127.0.0.1:51950", "lost"
        feed.reason = "127.0.0.1:51950: the stream ended inside a command at byte offset 12 (3 bytes)"
        assert feed.status_text().startswith("127.0.0.1:51950: the stream ended inside a command")
        feed.reason = "stopped by an error: disk full"
        assert feed.status_text().startswith("127.0.0.1:51950: stopped by an error: disk full; kept ")
    finally:
        feed.stop()
        feed.discard()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_signal_while_the_viewer_starts_closes_it(tmp_path):
    """Its handlers were installed after listening, which on a first run compiles the stream
    kernels for seconds: a SIGTERM then killed the viewer outright (status -15). And a signal
    handled before the event loop ran left it running for ever (the window's quit came first)."""
    import signal
    import subprocess
    import sys

    port = _free_port()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path), "TMPDIR": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cold")}
    env.pop("PVDKIT_CACHE_DIR", None)
    env.pop("NUMBA_CACHE_DIR", None)
    viewer = subprocess.Popen([sys.executable, "-m", "pvdkit", "view", "--listen", f"127.0.0.1:{port}"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:  # bound: listening has begun, compiling may still go on
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert viewer.poll() is None and time.monotonic() < deadline, viewer.communicate()
                time.sleep(0.05)
        viewer.send_signal(signal.SIGTERM)
        out, err = viewer.communicate(timeout=60)
    finally:
        if viewer.poll() is None:
            viewer.kill()
    assert viewer.returncode == 143, err
    assert "Traceback" not in err and "Exception in thread" not in err, err


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_closes_the_live_viewer_keeping_what_arrived(tmp_path, stream, signame):
    """SIGTERM (what `timeout` and a logout send) killed the viewer with its live recording
    left as if it had crashed, and Ctrl-C printed KeyboardInterrupt tracebacks while the window
    stayed open. Now both close it: a --save recording ends complete = false with the signal
    as the reason, a temporary one is kept and its path printed, exit 143 / 130."""
    import signal
    import subprocess
    import sys

    port = _free_port()
    save = tmp_path / "saved.h5"
    args = [sys.executable, "-m", "pvdkit", "view", "--listen", f"127.0.0.1:{port}"]
    if signame == "SIGTERM":
        args += ["--save", str(save)]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    viewer = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:  # the viewer binds its port once Qt and the window are up
            try:
                conn = send(port, PREAMBLE + stream[: len(stream) // 2], keep_open=True)
                break
            except OSError:
                assert viewer.poll() is None and time.monotonic() < deadline, viewer.communicate()
                time.sleep(0.2)
        # Received: its recording exists (a first run compiles the stream kernels for seconds
        # first, and a signal then found no recording to keep) …
        while not any(p.stat().st_size for p in tmp_path.rglob("*.h5")):
            assert viewer.poll() is None and time.monotonic() < deadline, viewer.communicate()
            time.sleep(0.2)
        time.sleep(2.0)  # … parsed and committed (a commit within a second of a pause)
        viewer.send_signal(getattr(signal, signame))
        out, err = viewer.communicate(timeout=60)
    finally:
        if viewer.poll() is None:
            viewer.kill()
    conn.close()
    assert viewer.returncode == {"SIGTERM": 143, "SIGINT": 130}[signame], err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    if signame == "SIGTERM":
        path = save
    else:
        (line,) = [x for x in err.splitlines() if "is kept in" in x]
        path = Path(line.rsplit(" is kept in ", 1)[1])
        assert line.startswith("pvdkit view: interrupted by SIGINT; what 127.0.0.1:")
    rec = _open(path)
    assert len(rec.frames) > 0
    assert rec.incomplete == f"interrupted by {signame}"


def _window_listening(qtbot, tmp_path):
    """A main window listening on a free port (its live recording not kept on close)."""
    from PySide6.QtCore import QSettings

    from viewer.widgets.main_window import MainWindow

    win = MainWindow(settings=QSettings(str(tmp_path / "viewer.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.ask_keep_live = lambda feed: None
    return win, win.listen("127.0.0.1:0")


def _frame_offsets(data: bytes) -> list[int]:
    """Byte offset of every START_FRAME of a stream: cut there, a piece ends with whole frames."""
    table = tokenize(np.frombuffer(data, np.uint8))
    return table.offset[table.kind == Command.START_FRAME].astype(int).tolist()


def test_a_live_plot_made_before_the_clock_arrived_labels_its_axis_in_seconds_after(qtbot, tmp_path, stream,
                                                                                     whole):
    """A plot made while only PhysX's first frame had arrived (no PxScene.elapsedTime yet) ran
    on frames; once the clock arrives its ticks turn to seconds, and so must its label (it kept
    "frame" under ticks in seconds: a live audit)."""
    win, feed = _window_listening(qtbot, tmp_path)
    before_clock = _frame_offsets(stream)[1]  # the setup and frame 0: no elapsedTime yet
    sock = send(feed.port, PREAMBLE + stream[:before_clock], keep_open=True)
    ws = win.workspace
    qtbot.waitUntil(lambda: ws.session is not None and ws.session.n_frames >= 1 and bool(ws.session.vehicles),
                    timeout=60_000)
    ws.plot("WheelRigidBodyState.rotationSpeed")
    qtbot.waitUntil(lambda: bool(win.plots.panels), timeout=5_000)

    def label() -> str:
        return win.plots.panels[-1].items()[-1].getAxis("bottom").labelText

    assert label() == "frame"
    _send_rest(sock, stream[before_clock:], 2e6)
    qtbot.waitUntil(lambda: not feed.running and not win._live_timer.isActive(), timeout=60_000)
    qtbot.waitUntil(lambda: label() == "time [s]", timeout=5_000)


def test_the_object_tree_frames_column_grows_with_a_live_recording(qtbot, tmp_path):
    """Past PhysX's first frames no object is created until the end: the tree, built then,
    showed 0–60 beside a property view at 0–1428 (a live audit). Its Frames column now runs to
    the recording's last frame as the stream grows, without a rebuild."""
    from pvdkit.convert import convert

    source = tmp_path / "dev_drive.ovd"
    convert(DATA / "dev_drive.h5", source)
    data = source.read_bytes()
    starts = _frame_offsets(data)
    win, feed = _window_listening(qtbot, tmp_path)
    ws = win.workspace
    sock = send(feed.port, PREAMBLE + data[: starts[100]], rate=50e6, keep_open=True)
    qtbot.waitUntil(lambda: ws.session is not None and ws.session.n_frames >= 100, timeout=60_000)
    basic = ws.session.vehicle_named("/World/Basic")

    def frames_shown() -> str | None:
        item = win.objects.item_of(basic.obj)
        return item.text(1) if item is not None else None

    qtbot.waitUntil(lambda: frames_shown() is not None, timeout=5_000)
    sock.sendall(data[starts[100]: starts[400]])
    qtbot.waitUntil(lambda: ws.session.n_frames >= 400, timeout=60_000)
    qtbot.waitUntil(lambda: frames_shown() == f"0–{ws.session.last_frame}", timeout=5_000)
    sock.close()
    qtbot.waitUntil(lambda: not feed.running and not win._live_timer.isActive(), timeout=60_000)


def _car_in_view(win) -> bool:
    ff = win.topdown.frame
    if ff is None or not ff.present.any():
        return False
    pts = ff.outlines[ff.present].reshape(-1, 2)
    (x0, x1), (y0, y1) = win.topdown.plot.getViewBox().viewRange()
    return bool(((pts[:, 0] >= x0) & (pts[:, 0] <= x1) & (pts[:, 1] >= y0) & (pts[:, 1] <= y1)).all())


@pytest.mark.parametrize("zoomed", [False, True])
def test_the_top_down_view_follows_a_live_car_out_of_its_first_fit(qtbot, tmp_path, zoomed):
    """A car driving at 10 m/s left the top-down view fitted to where it started (a live
    audit: two cars drifted off-screen). The view is fitted again while it is the fitted one; a
    view the user zoomed or panned stays where they put it."""
    from tests.viewer.conftest import write_recording

    data = write_recording(tmp_path / "car.ovd", 400, 10_000_000).read_bytes()  # 4 s: 40 m
    starts = _frame_offsets(data)
    win, feed = _window_listening(qtbot, tmp_path)
    ws = win.workspace
    sock = send(feed.port, PREAMBLE + data[: starts[20]], keep_open=True)
    qtbot.waitUntil(lambda: ws.session is not None and ws.session.n_frames >= 20 and _car_in_view(win),
                    timeout=60_000)
    if zoomed:
        vb = win.topdown.plot.getViewBox()
        vb.scaleBy((0.5, 0.5))
        zoomed_range = vb.viewRange()
    sock.sendall(data[starts[20]:])
    sock.close()
    qtbot.waitUntil(lambda: not feed.running and not win._live_timer.isActive(), timeout=60_000)
    qtbot.wait(1_000)  # the top-down redraw of a grown recording is throttled
    win.topdown._on_grown()  # the last one, now
    if zoomed:
        assert win.topdown.plot.getViewBox().viewRange() == zoomed_range
    else:
        assert _car_in_view(win)
