"""Live OmniPVD over TCP (issue 15): ingest throughput, frame latency, scrubbing while ingesting.

    QT_QPA_PLATFORM=offscreen python3 bench/bench_live.py [--repeat 3] [--scrubs 200]

The stream is PhysX's own ``dev_drive`` recording (``tests/data/dev_drive.h5`` rebuilt to its
``.ovd`` bytes: 30.7 MB, 961 frames, four vehicles), sent over loopback by a separate process
(so the sender does not share the receiver's interpreter) after PhysX's 8-byte preamble.

* **ingest into .h5**: ``pvdkit listen``'s path in process — :func:`pvdkit.listen.receive` into
  a :class:`~pvdkit.live.LiveRecorder` — with the sender going as fast as it can, on PhysX's
  stream and on a long synthetic vehicle-like one (``--long-mb``): the ingest rate (MB/s until
  every byte is tokenized, indexed, written and committed: what keeping up with a sender
  takes), the compaction into single-slice series that the close adds once at the end (a
  second run) and MB/s to the compacted file. Target ≥ 100 MB/s ingest (25× the 4-vehicle PhysX
  scene at 60 Hz, about 4 MB/s).
* **ingest into the viewer model**: the same into a :class:`viewer.model.live.TcpFeed` whose
  chunks a :class:`~viewer.model.workspace.Workspace` takes in every 20 ms, as the window's
  timer does (time base, vehicles, caches brought up to date): MB/s until every frame is in
  the model.
* **latency**: the sender paces the stream at 60 frames/s and notes when each frame's last
  byte left; the viewer window (offscreen, start view: wheel speeds plotted, properties, top-down
  view) notes when the model first holds every byte of that frame. Target ≤ 50 ms.
* **scrub while ingesting**: the window over the growing recording; time from
  ``Timeline.set_frame`` (random frames) through the repaint, idle (the stream paused) vs while
  10 MB/s arrive. Target: within 20 % of idle (median). Scrubbing back switches "follow
  latest" off, and then the window takes in new data every ``LIVE_POLL_BACK_MS``: the mean and
  p95 show what those few scrubs pay; the same run also measures taking it in at every tick.

The machine is noisy: each figure is best and median of ``--repeat`` runs, side by side.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import viewer.widgets.main_window as main_window  # noqa: E402
from pvdkit.h5 import h5_to_ovd_bytes  # noqa: E402
from pvdkit.listen import listen_socket, receive  # noqa: E402
from pvdkit.live import LiveRecorder, warm_up  # noqa: E402
from pvdkit.ovd.tokenizer import tokenize  # noqa: E402
from pvdkit.streams import OvdFileStream  # noqa: E402
from pvdkit.synthetic import write_large_recording  # noqa: E402
from pvdkit.types import Command  # noqa: E402

SOURCE = ROOT / "tests" / "data" / "dev_drive.h5"

#: The sender, in its own process: ``ADDRESS FILE MODE [ARG]``; MODE ``fast`` sends as fast as
#: it can, ``rate BYTES_PER_S FRACTION PAUSE`` paces the bytes and pauses PAUSE seconds after
#: FRACTION of them, ``frames ENDS_FILE FPS`` sends frame by frame and prints each frame's send
#: time (time.monotonic, the same clock in every process).
SENDER = textwrap.dedent("""
    import socket, sys, time
    import numpy as np
    host, port = sys.argv[1].rsplit(":", 1)
    data = open(sys.argv[2], "rb").read()
    mode = sys.argv[3]
    s = socket.create_connection((host, int(port)))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(bytes.fromhex("4c44564f01000000"))
    if mode == "fast":
        view = memoryview(data)
        for i in range(0, len(data), 1 << 20):
            s.sendall(view[i:i + (1 << 20)])
    elif mode == "rate":
        rate = float(sys.argv[4]); pause_at = int(float(sys.argv[5]) * len(data))
        pause = float(sys.argv[6]); piece = 16384; t0 = time.monotonic()
        for i in range(0, len(data), piece):
            if i <= pause_at < i + piece:
                s.sendall(data[i:pause_at])
                time.sleep(pause)
                s.sendall(data[pause_at:i + piece])
                t0 += pause
            else:
                s.sendall(data[i:i + piece])
            ahead = t0 + (i + piece) / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    else:
        ends = np.load(sys.argv[4]); fps = float(sys.argv[5]); start = 0; t0 = time.monotonic()
        out = []
        for k, end in enumerate(ends.tolist()):
            ahead = t0 + k / fps - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
            s.sendall(data[start:end])
            out.append(time.monotonic())
            start = end
        s.sendall(data[start:])
        print(" ".join(f"{t:.6f}" for t in out))
    s.close()
""")


def _sender(address: str, data_path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SENDER, address, str(data_path), *args],
                            stdout=subprocess.PIPE, text=True)


def _fmt(values: list[float], unit: str, digits: int = 1, higher: bool = False) -> str:
    """Best (the lowest, or with ``higher`` the highest) and median."""
    best = max(values) if higher else min(values)
    return f"best {best:.{digits}f} {unit}, median {statistics.median(values):.{digits}f} {unit}"


def ingest_h5(data_path: Path, tmp: Path, compact: bool) -> tuple[float, float]:
    """(seconds from the first byte to the last one received — tokenized, written, committed at
    least once a second —, seconds to close: the final commit and, with ``compact``, the
    compaction) for a fast local sender into a crash-safe .h5 through pvdkit listen's path."""
    server = listen_socket("127.0.0.1", 0)
    port = server.getsockname()[1]
    proc = _sender(f"127.0.0.1:{port}", data_path, "fast")
    conn, _ = server.accept()
    server.close()
    out = tmp / "ingest.h5"
    if out.exists():
        out.unlink()
    recorder = LiveRecorder(out, preamble=True, source_name="bench", compact=compact)
    with conn:
        receive(conn, recorder)
    streamed = time.monotonic()
    s = recorder.close()
    closed = time.monotonic()
    proc.wait()
    assert s.complete, s.reason
    return streamed - recorder.started, closed - streamed


def ingest_model(data_path: Path, size: int, n_frames: int, tmp: Path) -> float:
    """MB/s into the viewer's model: TcpFeed + Workspace.poll_live every 20 ms."""
    from viewer.model.live import TcpFeed
    from viewer.model.workspace import Workspace

    out = tmp / "model.h5"
    if out.exists():
        out.unlink()
    feed = TcpFeed("127.0.0.1:0", str(out))
    ws = Workspace()
    ws.set_live(feed)
    feed.start()
    proc = _sender(feed.address, data_path, "fast")
    t0 = None
    while feed.live or feed.running or ws.session.n_frames < n_frames:
        if feed.started is not None and t0 is None:
            t0 = feed.started
        ws.poll_live()
        if not feed.running and ws.poll_live() is None and not feed.live:
            break
        time.sleep(0.02)
    t1 = time.monotonic()
    proc.wait()
    assert ws.session.n_frames == n_frames, (ws.session.n_frames, n_frames, feed.reason)
    return size / 1e6 / (t1 - (t0 or feed.started))


class _Covered:
    """Wraps a LiveRecording's ``append`` to note when each stream byte reached the model."""

    def __init__(self, rec) -> None:
        self.times: list[tuple[float, int]] = []  # (monotonic, stream bytes covered)
        self._append = rec.append
        rec.append = self

    def __call__(self, chunk) -> None:
        self._append(chunk)
        self.times.append((time.monotonic(), chunk.offset + len(chunk.data)))


def _window(app, tmp: Path):
    from PySide6.QtCore import QSettings

    from viewer.widgets.main_window import MainWindow

    settings = QSettings(str(tmp / "viewer.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    win.ask_keep_live = lambda feed: ""
    win.resize(1600, 1000)
    win.show()
    app.processEvents()
    return win


def latency(app, data_path: Path, frame_ends: np.ndarray, tmp: Path, fps: float = 60.0) -> list[float]:
    """Per frame: ms from its last byte leaving the sender to the model holding it (window shown)."""
    win = _window(app, tmp)
    feed = win.listen("127.0.0.1:0")
    covered = _Covered(feed.recording)
    ends_file = tmp / "ends.npy"
    np.save(ends_file, frame_ends)
    proc = _sender(feed.address, data_path, "frames", str(ends_file), str(fps))
    while proc.poll() is None or feed.running or win._live_timer.isActive():
        app.processEvents()
        time.sleep(0.002)
    sent = np.array([float(t) for t in proc.stdout.read().split()])
    times = np.array([t for t, _ in covered.times])
    upto = np.array([b for _, b in covered.times], np.int64)
    # Stream offsets count the 12-byte header; the frame ends were taken on the same stream.
    first = np.searchsorted(upto, frame_ends, side="left")
    ok = first < len(times)
    lat = (times[first[ok]] - sent[: len(frame_ends)][ok]) * 1e3
    win.close()
    app.processEvents()
    return lat.tolist()


def scrubs(app, data_path: Path, tmp: Path, n: int, rate: float) -> tuple[list[float], list[float]]:
    """Scrub times (ms, set_frame through repaint) over the same frames: idle while the stream
    pauses after a third of it, then busy while the rest arrives at ``rate`` bytes/s."""
    win = _window(app, tmp)
    feed = win.listen("127.0.0.1:0")
    proc = _sender(feed.address, data_path, "rate", str(rate), "0.33", "4.0")
    ws = win.workspace
    rng = np.random.default_rng(1)

    def scrub() -> float:
        f = int(rng.integers(0, span))
        t0 = time.perf_counter()
        ws.timeline.set_frame(f)
        app.processEvents()
        return (time.perf_counter() - t0) * 1e3

    last, quiet = -1, time.monotonic()
    while time.monotonic() - quiet < 0.5 or not win.plots.panels:  # the pause has begun
        app.processEvents()
        if feed.bytes_received != last:
            last, quiet = feed.bytes_received, time.monotonic()
        time.sleep(0.005)
    for _ in range(30):
        app.processEvents()
    span = ws.session.n_frames
    idle = []
    while feed.bytes_received == last and len(idle) < n:
        idle.append(scrub())
    while feed.bytes_received == last:
        app.processEvents()
        time.sleep(0.002)
    busy = []
    while proc.poll() is None and len(busy) < n:
        busy.append(scrub())
    proc.wait()
    win.close()
    app.processEvents()
    return busy, idle


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scrubs", type=int, default=200)
    ap.add_argument("--long-mb", type=int, default=200, help="size of the synthetic long stream")
    args = ap.parse_args()
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    warm_up()
    data = h5_to_ovd_bytes(SOURCE)
    table = tokenize(np.frombuffer(data, np.uint8))
    frame_ends = table.end[table.kind == Command.STOP_FRAME].astype(np.int64)
    n_frames = int(np.count_nonzero(table.kind == Command.START_FRAME))
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        data_path = tmp / "dev_drive.ovd"
        data_path.write_bytes(data)
        long_path = tmp / "long.ovd"
        write_large_recording(OvdFileStream(long_path), args.long_mb << 20, vehicles=16)
        long_mb = long_path.stat().st_size / 1e6
        print(f"stream: {SOURCE.name} as .ovd, {len(data) / 1e6:.1f} MB, {n_frames} frames; and a "
              f"vehicle-like synthetic stream of {long_mb:.0f} MB (16 vehicles); load average "
              f"{os.getloadavg()[0]:.2f}")
        h5: dict[str, list[tuple[float, float, float]]] = {"dev_drive": [], "long": []}
        model_rates, lat_med, lat_p95, busy_med, idle_med = [], [], [], [], []
        busy_mean, idle_mean, busy_p95 = [], [], []
        every_tick_ratio = []
        for _ in range(args.repeat):
            for name, path in (("dev_drive", data_path), ("long", long_path)):
                streamed, closed = ingest_h5(path, tmp, compact=False)
                _, closed_compacted = ingest_h5(path, tmp, compact=True)
                h5[name].append((streamed, closed, closed_compacted - closed))
            model_rates.append(ingest_model(data_path, len(data), n_frames, tmp))
            lat = latency(app, data_path, frame_ends, tmp)
            lat_med.append(statistics.median(lat))
            lat_p95.append(float(np.percentile(lat, 95)))
            back_ms = main_window.LIVE_POLL_BACK_MS
            main_window.LIVE_POLL_BACK_MS = main_window.LIVE_POLL_MS  # as before: every tick
            busy, idle = scrubs(app, data_path, tmp, args.scrubs, 10e6)
            every_tick_ratio.append(statistics.median(busy) / statistics.median(idle))
            main_window.LIVE_POLL_BACK_MS = back_ms
            busy, idle = scrubs(app, data_path, tmp, args.scrubs, 10e6)
            busy_med.append(statistics.median(busy))
            idle_med.append(statistics.median(idle))
            busy_mean.append(statistics.fmean(busy))
            idle_mean.append(statistics.fmean(idle))
            busy_p95.append(float(np.percentile(busy, 95)))
    print("ingest into .h5 (pvdkit listen's path; a fast local sender):")
    for name, mb in (("dev_drive", len(data) / 1e6), ("long", long_mb)):
        ingest = [mb / (a + b) for a, b, _ in h5[name]]
        compaction = [c for _, _, c in h5[name]]
        whole = [mb / (a + b + c) for a, b, c in h5[name]]
        print(f"  {name:9s} {mb:6.1f} MB: ingest (tokenize, index, write, commit every byte) "
              f"{_fmt(ingest, 'MB/s', higher=True)}; compaction at close {_fmt(compaction, 's', 2)}; "
              f"to the compacted file {_fmt(whole, 'MB/s', higher=True)}")
    sustained = [long_mb / (a + b) for a, b, _ in h5["long"]]
    met = "met" if max(sustained) >= 100 else "NOT met"
    print(f"  target >= 100 MB/s ingest (the long stream): {met}")
    print(f"ingest into the viewer model (every 20 ms): {_fmt(model_rates, 'MB/s', higher=True)}")
    print(f"latency, frame's last byte -> in the model, 60 frames/s, window shown: median "
          f"{_fmt(lat_med, 'ms')}; p95 {_fmt(lat_p95, 'ms')}   target <= 50 ms: "
          f"{'met' if min(lat_med) <= 50 else 'NOT met'}")
    ratio = [b / i for b, i in zip(busy_med, idle_med, strict=True)]
    print(f"scrub (set_frame + repaint), median: idle {_fmt(idle_med, 'ms', 2)}; while 10 MB/s arrive "
          f"{_fmt(busy_med, 'ms', 2)}; ratio {_fmt(ratio, 'x', 2)}   target <= 1.2x: "
          f"{'met' if min(ratio) <= 1.2 else 'NOT met'}")
    mean_ratio = [b / i for b, i in zip(busy_mean, idle_mean, strict=True)]
    print(f"  mean: idle {_fmt(idle_mean, 'ms', 2)}; busy {_fmt(busy_mean, 'ms', 2)}; ratio "
          f"{_fmt(mean_ratio, 'x', 2)}; busy p95 {_fmt(busy_p95, 'ms', 2)} (the growth taken in "
          f"every {main_window.LIVE_POLL_BACK_MS} ms while scrubbed back lands in a few scrubs)")
    print(f"  before: new data taken in every {main_window.LIVE_POLL_MS} ms tick while scrubbed back, "
          f"median ratio {_fmt(every_tick_ratio, 'x', 2)}")


if __name__ == "__main__":
    main()
