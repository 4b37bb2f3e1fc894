"""Benchmark the viewer: open time, UI stalls while indexing, scrub latency, memory, downsampling.

Usage: ``python3 bench/bench_viewer.py [--mb 40] [--wheels 20] [--plots 10] [--scrubs 300]
[--file recording.h5]``

Generates a ~40 MB ``.ovd`` with :func:`pvdkit.synthetic.write_large_recording` (one vehicle with
``--wheels`` wheels, so a per-wheel plot has one curve per wheel) — or measures ``--file``, e.g. a
fleet (``pvdkit record sedan --vehicles 256 --duration 5 -o fleet.h5``), with the first vehicle
selected and per-wheel plots of its Vehicle2 classes — then, offscreen:

* open time: :meth:`RecordingSession.open` (index + vehicle graph + time base) in a fresh process
  (numba cache load included) and again warm, in MB/s;
* UI stall: the longest gap between ticks of a 5 ms UI timer while the window opens the file on
  its worker thread (the compiled index loops hold the GIL while they run);
* scrub latency with ``--plots`` plots × ``--wheels`` curves: time from ``Timeline.set_frame`` to
  the property view, every plot cursor and legend read-out, the top-down view and the slider
  updated (the model signal returns), and to the window repainted (events processed);
  target < 16 ms;
* scrub rate: frames per second when stepping the timeline one frame at a time (→ key) with all
  of the above live, each step updated and repainted (best and median of ``--rounds`` passes);
* what is shown: vehicles in the object tree and vehicles drawn in the top-down view;
* memory: process RSS after opening, after plotting, and after every scrub (must stay flat: no
  Python object per sample);
* min-max step downsampling of a 1M-sample curve, and the redraw of every curve after a zoom.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from pvdkit.streams import OvdFileStream  # noqa: E402
from pvdkit.synthetic import write_large_recording  # noqa: E402

FRESH_OPEN = """
import os, sys, time
sys.path.insert(0, {root!r})
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
t0 = time.perf_counter()
from viewer.model.session import RecordingSession
t1 = time.perf_counter()
r0 = rss()
s = RecordingSession.open({path!r})
t2 = time.perf_counter()
r1 = rss()
warm = []
for _ in range(3):
    t = time.perf_counter()
    RecordingSession.open({path!r}).close()
    warm.append(time.perf_counter() - t)
print(t1 - t0, t2 - t1, min(warm), r0, r1)
"""


def rss_mb() -> float:
    """Resident set size of this process (MB), from /proc."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=40.0, help="size of the generated .ovd (MB)")
    ap.add_argument("--wheels", type=int, default=20, help="wheels of the vehicle (curves per plot)")
    ap.add_argument("--plots", type=int, default=10, help="number of stacked plots")
    ap.add_argument("--scrubs", type=int, default=300, help="frame changes to time")
    ap.add_argument("--keep", type=Path, help="write the file here instead of a temp dir")
    ap.add_argument("--file", type=Path, help="measure this recording instead of a generated one")
    ap.add_argument("--steps", type=int, default=120, help="one-frame steps per scrub-rate pass")
    ap.add_argument("--rounds", type=int, default=5, help="scrub-rate passes")
    args = ap.parse_args()

    if args.file is not None:
        size = args.file.stat().st_size
        print(f"{args.file}: {size / 1e6:.1f} MB")
        run(args.file, size, args)
        return

    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / "bench_viewer.ovd"
        t = time.perf_counter()
        info = write_large_recording(OvdFileStream(path), int(args.mb * 1e6), vehicles=1,
                                     wheels_per_vehicle=args.wheels)
        size = path.stat().st_size
        print(f"generated {size / 1e6:.1f} MB in {time.perf_counter() - t:.1f} s: {info.frames} frames, "
              f"1 vehicle × {info.wheels} wheels, {info.set_attribute_commands:,} set_attribute commands")
        run(path, size, args)


def run(path: Path, size: int, args: argparse.Namespace) -> None:
    # ---- open in a fresh process, then warm
    out = subprocess.run([sys.executable, "-c", FRESH_OPEN.format(root=str(ROOT), path=str(path))],
                         capture_output=True, text=True, check=True).stdout.split()
    imp, cold, warm, r0, r1 = (float(x) for x in out)
    print(f"open (index + vehicles + time base), fresh process: {cold:.2f} s = {size / 1e6 / cold:.0f} MB/s "
          f"(numba cache load included; import viewer.model: {imp:.2f} s)")
    print(f"open warm (best of 3):                               {warm:.2f} s = {size / 1e6 / warm:.0f} MB/s")
    print(f"memory of the open recording (RSS, no window): +{r1 - r0:.0f} MB "
          f"for the {size / 1e6:.0f} MB file")

    # ---- the window
    from PySide6.QtCore import QElapsedTimer, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from viewer.widgets import theme
    from viewer.widgets.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    theme.apply(app)
    rss0 = rss_mb()
    # Settings of this run only: a stored layout from a run before would be restored at open.
    settings_dir = tempfile.TemporaryDirectory(prefix="bench_viewer_")
    settings = QSettings(str(Path(settings_dir.name) / "viewer.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    win.resize(1600, 1000)
    win.show()
    app.processEvents()

    # ---- UI responsiveness while the worker indexes the file
    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.nsecsElapsed()]

    def tick() -> None:
        now = clock.nsecsElapsed()
        gaps.append((now - last[0]) / 1e6)
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    t = time.perf_counter()
    win.open_file(str(path))
    while win._loaders:
        app.processEvents()
        time.sleep(0.001)
    bg = time.perf_counter() - t
    timer.stop()
    print(f"background open in the window (first in this process): {bg:.2f} s; a 5 ms UI timer ticked "
          f"{len(gaps)} times, longest stall {max(gaps):.0f} ms (GIL held by compiled index loops)")

    ws = win.workspace
    rss_open = rss_mb()
    vehicle = ws.session.vehicles[0]
    tree_vehicles = _tree_vehicles(win)
    drawn = len(win.topdown.shapes)
    print(f"shown: {len(ws.session.vehicles)} vehicles found, {tree_vehicles} in the object tree, "
          f"{drawn} drawn in the top-down view")
    ws.select(vehicle.obj)
    app.processEvents()
    if "Wheel" in ws.session.recording.classes:
        specs = ["Wheel.rotationSpeed", "Wheel.rotationAngle", "Wheel.steerAngle", "Wheel.jounce",
                 "Wheel.tireForce[x]", "Wheel.tireForce[y]", "Wheel.tireForce[z]", "Wheel.tireForce[norm]"]
    else:  # PhysX Vehicle2 schema (pvdkit record, PhysX)
        specs = ["WheelRigidBodyState.rotationSpeed", "WheelRigidBodyState.rotationAngle",
                 "WheelRigidBodyState.correctedRotationSpeed", "SuspensionState.jounce",
                 "TireForce.lngForce[x]", "TireForce.latForce[y]", "SuspensionForce.force[z]",
                 "TireForce.lngForce[norm]"]
    specs = (specs * ((args.plots + len(specs) - 1) // len(specs)))[: args.plots]
    t = time.perf_counter()
    with ws.plots.plot_added.blocked():
        for s in specs:
            ws.plot(s)
    win.plots.rebuild()
    app.processEvents()
    build = time.perf_counter() - t
    n_curves = sum(len(p.drawn) for p in win.plots.panels)
    print(f"{len(win.plots.panels)} plots × {n_curves // max(len(win.plots.panels), 1)} curves "
          f"({n_curves} curves, {ws.session.n_frames} samples each) built and drawn in {build:.2f} s")
    rss_plot = rss_mb()

    # ---- scrub latency
    rng = np.random.default_rng(0)
    frames = rng.integers(0, ws.session.n_frames, args.scrubs)
    model_ms, paint_ms, rss_trace = [], [], []
    for i, f in enumerate(frames):
        t0 = time.perf_counter()
        ws.timeline.set_frame(int(f))
        t1 = time.perf_counter()
        app.processEvents()
        t2 = time.perf_counter()
        model_ms.append((t1 - t0) * 1e3)
        paint_ms.append((t2 - t0) * 1e3)
        if i % 50 == 0:
            rss_trace.append(rss_mb())
    panel = win.plots.panels[0]
    ok = panel.cursor.value() == frames[-1] and win.properties.object is vehicle.obj
    print(f"scrub latency ({args.scrubs} random frames, property view + {len(win.plots.panels)} cursors and "
          f"{n_curves} read-outs + top-down + slider):")
    for label, ms in (("views updated:      ", model_ms), ("updated + repainted:", paint_ms)):
        print(f"  {label} median {statistics.median(ms):6.2f} ms   p95 {pct(ms, 95):6.2f} ms   "
              f"max {max(ms):6.2f} ms (first frame: {ms[0]:.1f} ms)")
    target = statistics.median(model_ms) < 16
    print(f"  target < 16 ms (views updated, median): {'met' if target else 'NOT met'}; "
          f"cursor check {'ok' if ok else 'FAILED'}")

    # ---- scrub rate: one-frame steps, each updated and repainted
    tl = ws.timeline
    span = min(args.steps, max(tl.n_frames - 1, 1))
    rates = []
    for _ in range(args.rounds):
        tl.set_frame(0)
        app.processEvents()
        t = time.perf_counter()
        for _ in range(span):
            tl.step(1)
            app.processEvents()
        rates.append(span / (time.perf_counter() - t))
    print(f"scrub rate (→ one frame at a time, {span} steps × {args.rounds}, all views live, repainted): "
          f"best {max(rates):.0f} frames/s, median {statistics.median(rates):.0f} frames/s "
          f"({', '.join(f'{r:.0f}' for r in rates)})")

    # ---- zoom: every curve clipped and downsampled again
    vb = win.plots.master.getViewBox()
    n = ws.session.n_frames
    zoom_ms = []
    for a, b in ((0, n - 1), (n // 4, n // 2), (n // 3, n // 3 + 200), (0, n - 1)):
        t = time.perf_counter()
        vb.setXRange(a, b, padding=0)
        win.plots.redraw()
        zoom_ms.append((time.perf_counter() - t) * 1e3)
    print(f"zoom/pan: re-clip and downsample all {n_curves} curves: {statistics.median(zoom_ms):.1f} ms "
          f"median ({', '.join(f'{z:.0f}' for z in zoom_ms)} ms; painted afterwards)")

    print(f"memory (RSS): {rss0:.0f} MB with Qt loaded, {rss_open:.0f} MB with the recording shown, "
          f"{rss_plot:.0f} MB with {n_curves} curves (curve cache {ws.curves.nbytes / 1e6:.1f} MB), "
          f"{rss_trace[0]:.0f} → {rss_trace[-1]:.0f} MB over {args.scrubs} scrubs")

    # ---- downsampling alone, 1M samples
    from viewer.model.downsample import step_points

    f = np.arange(1_000_000, dtype=np.int32)
    v = np.sin(f / 3000.0) + rng.normal(0, 0.01, len(f))
    step_points(f, v, 0, 999_999, 1500)
    full = min(_timed(lambda: step_points(f, v, 0, 999_999, 1500)) for _ in range(5))
    zoomed = min(_timed(lambda: step_points(f, v, 400_000, 401_000, 1500)) for _ in range(5))
    xs, _ = step_points(f, v, 0, 999_999, 1500)
    print(f"1M-sample step curve, 1500 px: full view {full * 1e3:.1f} ms → {len(xs)} points; "
          f"zoomed to 1000 samples {zoomed * 1e3:.2f} ms")
    win.close()


def _tree_vehicles(win) -> int:
    """Rows under the object tree's "Vehicles" section."""
    tree = win.objects.tree
    for i in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(i)
        if item.text(0).startswith("Vehicles"):
            return item.childCount()
    return 0


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
