"""Microseconds per vehicle-step of a simcore Fleet, against the per-vehicle engine, in one run.

The default sedan (direct drive, 3 substeps, dt = 1/60 s) on a flat plane, throttle 0.6 and a
slow steer sine, N = 1, 16, 64, 256, 1024 vehicles side by side. For each N:

* ``fleet``: ``Fleet.step`` (one compiled kernel per component over the batch), single-threaded;
* ``per-vehicle``: the previous engine — N vehicles with plain per-vehicle states stepped one
  after another through the per-vehicle components (the plain-numpy reference with the old
  fused suspension and tire kernels) — at N = 1 and 16 (the same cost per vehicle at any N);
* first, one ``Vehicle`` through the single-vehicle API (``vehicle.step``), a fleet of one;
* ``+h5`` / ``+ovd``: what recording every param and state of every vehicle each frame adds,
  per vehicle-step, in steady state (after the first frames, which create every vehicle's
  object graph), and the file's growth in bytes per vehicle-step. ``+h5`` is ``pvdkit
  record``'s stream, whose commits are written on a second thread while the fleet steps on,
  its pools and command log deflated by ISA-L as whole chunks (:mod:`pvdkit.h5.chunks`);
  ``+h5 (1 thr)`` the same stream with every commit written in the stepping thread
  (``H5Stream(background=False)``); ``+h5 (before)`` ``pvdkit record``'s stream with every
  chunk deflated by HDF5's own zlib filter, as before ISA-L — the engine of the session before,
  in the same run;
* ``deflate floor``: what compressing the recorded values alone costs per vehicle-step — ISA-L
  at the recording's level, one thread, over the byte-shuffled ``values`` of every pool of the
  ``+h5`` file, timed without HDF5 or any other work. A ``.h5`` that plain h5py and ``h5diff``
  read is deflate-compressed (the values are ~2 KB per vehicle-step raw, the file must stay
  under 500 B), so no such recording adds less than this.

Each figure is the best and the median of ``--repeats`` timed runs after a warm-up (compilation
and caches excluded): the machine is shared and noisy, so compare within one run.

    python3 bench/bench_batch.py [--sizes 1,16,64,256,1024] [--seconds 1.0] [--repeats 5] [--json]

Targets (issue 13, this 2-core machine, one thread): N = 256 <= 6 us, N = 1024 <= 4 us per
vehicle-step; one vehicle <= 60 us per step; .h5 recording at N = 256 adds <= 1x the
simulation cost and <= 500 B per vehicle-step.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numba
import numpy as np

from simcore.fleet.fleet import Fleet
from simcore.presets import load_preset
from simcore.vehicle import Vehicle, VehicleStates

DT = 1.0 / 60.0


def _drive_fleet(fleet: Fleet, k: int) -> None:
    fleet.commands.throttle[:] = 0.6
    fleet.commands.steer[:] = 0.2 * np.sin(k * DT)


def _timed(run: Callable[[int], None], steps: int, repeats: int) -> list[float]:
    """Seconds per step of ``repeats`` runs of ``steps`` steps each."""
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        run(steps)
        out.append((time.perf_counter() - t) / steps)
    return out


def _steps_for(seconds: float, per_step: float) -> int:
    return max(3, int(seconds / max(per_step, 1e-9)))


def bench_fleet(n: int, seconds: float, repeats: int) -> list[float]:
    """Seconds per fleet step (``n`` vehicles)."""
    fleet = Fleet.from_preset("sedan", n)
    fleet.place_on_road()
    counter = [0]

    def run(steps: int) -> None:
        for _ in range(steps):
            _drive_fleet(fleet, counter[0])
            fleet.step(DT)
            counter[0] += 1

    run(5)  # warm-up: kernels compiled / loaded from the cache
    probe = _timed(run, 3, 1)[0]
    return _timed(run, _steps_for(seconds, probe), repeats)


def bench_per_vehicle(n: int, seconds: float, repeats: int) -> list[float]:
    """Seconds per step of ``n`` separate Vehicles, the previous engine."""
    params = load_preset("sedan")
    # Plain per-vehicle states (not views of a batch) and the per-vehicle components: exactly the
    # engine before fleets.
    cars = [Vehicle(params, states=VehicleStates.for_params(params)) for _ in range(n)]
    for i, car in enumerate(cars):
        car.place_on_road(lat=4.0 * i)
    counter = [0]

    def run(steps: int) -> None:
        for _ in range(steps):
            for car in cars:
                car.commands.throttle = 0.6
                car.commands.steer = 0.2 * float(np.sin(counter[0] * DT))
                car.step(DT)
            counter[0] += 1

    run(3)
    probe = _timed(run, 2, 1)[0]
    return _timed(run, _steps_for(seconds, probe), repeats)


def bench_vehicle(seconds: float, repeats: int) -> list[float]:
    """Seconds per ``Vehicle.step`` of one vehicle through the single-vehicle API (a fleet of one)."""
    car = Vehicle(load_preset("sedan"))
    car.place_on_road()
    counter = [0]

    def run(steps: int) -> None:
        for _ in range(steps):
            car.commands.throttle = 0.6
            car.commands.steer = 0.2 * float(np.sin(counter[0] * DT))
            car.step(DT)
            counter[0] += 1

    run(5)
    probe = _timed(run, 3, 1)[0]
    return _timed(run, _steps_for(seconds, probe), repeats)


def bench_recording(n: int, suffix: str, seconds: float, repeats: int, engine: str = "record"
                    ) -> tuple[list[float], float]:
    """Seconds per recorded fleet step and file bytes per vehicle-step, for ``.h5`` or ``.ovd``;
    ``engine`` (``.h5`` only): ``record`` as ``pvdkit record`` writes, ``1thr`` every commit in
    the stepping thread, ``before`` as ``record`` with HDF5's own deflate (see the module
    docstring).

    Steady state: each run records :data:`SETUP_FRAMES` frames first (the object graphs of every
    vehicle, the params, the first commit), untimed, then times the frames that follow and the
    close. Bytes per vehicle-step are the growth over a run that stops after the setup frames."""
    from pvdkit.h5.stream import H5Stream
    from pvdkit.writer import OmniPvdWriter
    from simcore.cli.record import open_writer
    from simcore.pvd.recorder import PvdRecorder

    per_step: list[float] = []
    sizes: list[float] = []
    floors: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, _with_hdf5_deflate(engine == "before"):
        base = 0
        for r in range(repeats + 1):  # run 0: setup frames only (warm-up, and the size baseline)
            fleet = Fleet.from_preset("sedan", n)
            fleet.place_on_road()
            path = Path(tmp) / f"fleet{r}{suffix}"
            writer = open_writer(path, "bench_batch") if engine != "1thr" or suffix != ".h5" else \
                OmniPvdWriter(H5Stream(path, compact=False, background=False))
            recorder = PvdRecorder(writer)
            recorder.attach_fleet(fleet)
            for k in range(SETUP_FRAMES):
                _drive_fleet(fleet, k)
                fleet.step(DT)
            steps = 0 if r == 0 else _steps_for(seconds, per_step[-1] if per_step else 0.02 * n / 256)
            t = time.perf_counter()
            for k in range(steps):
                _drive_fleet(fleet, SETUP_FRAMES + k)
                fleet.step(DT)
            recorder.close()
            wall = time.perf_counter() - t
            if r == 0:
                base = os.path.getsize(path)
            else:
                per_step.append(wall / steps)
                sizes.append((os.path.getsize(path) - base) / (steps * n))
                if suffix == ".h5":
                    floors.append(_deflate_seconds(path) / ((SETUP_FRAMES + steps) * n))
            os.unlink(path)
    return per_step, statistics.median(sizes), floors


def _deflate_seconds(path: Path) -> float:
    """Seconds ISA-L's deflate takes, at the recording's level and in this thread, to compress
    the byte-shuffled ``values`` of every pool of the ``.h5`` file at ``path``, in pieces of
    HDF5's chunk size (shuffling and everything else untimed)."""
    import h5py
    from isal import isal_zlib

    from pvdkit.h5.chunks import DirectChunks
    from pvdkit.h5.stream import RECORDING_GZIP_LEVEL

    level = DirectChunks(RECORDING_GZIP_LEVEL).level
    pieces: list[bytes] = []
    with h5py.File(path, "r") as f:
        for pool in f["pools"].values():
            values = pool["values"][()]
            if not len(values):
                continue
            rows = pool["values"].chunks[0]
            item = values.dtype.itemsize
            for lo in range(0, len(values), rows):
                part = np.ascontiguousarray(values[lo:lo + rows]).view(np.uint8).reshape(-1, item)
                pieces.append(np.ascontiguousarray(part.T).tobytes())
    t = time.perf_counter()
    for piece in pieces:
        isal_zlib.compress(piece, level)
    return time.perf_counter() - t


@contextlib.contextmanager
def _with_hdf5_deflate(active: bool) -> Iterator[None]:
    """While active, the ``.h5`` writer leaves every chunk to HDF5's own deflate filter, as
    before :class:`pvdkit.h5.chunks.DirectChunks`."""
    from pvdkit.h5.chunks import DirectChunks

    suits = vars(DirectChunks)["suits"]  # the staticmethod itself, restored as it was
    if active:
        DirectChunks.suits = staticmethod(lambda ds: False)  # type: ignore[method-assign]
    try:
        yield
    finally:
        DirectChunks.suits = suits  # type: ignore[method-assign]


#: Frames recorded before timing a recording (object graphs, params, first commit).
SETUP_FRAMES = 3


def _us(seconds_per_step: list[float], n: int) -> tuple[float, float]:
    per_vehicle = [1e6 * s / n for s in seconds_per_step]
    return min(per_vehicle), statistics.median(per_vehicle)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,16,64,256,1024", help="fleet sizes, comma-separated")
    ap.add_argument("--seconds", type=float, default=1.0, help="wall time per timed run")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per figure (best and median)")
    ap.add_argument("--no-recording", action="store_true", help="skip the .h5 / .ovd columns")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    numba.set_num_threads(1)
    sizes = [int(x) for x in args.sizes.split(",")]
    one = _us(bench_vehicle(args.seconds, args.repeats), 1)
    if not args.json:
        print(f"one Vehicle (vehicle.step, commands through vehicle.commands): "
              f"{one[0]:.1f} / {one[1]:.1f} us per step, best / median (target <= 60)")
    rows = []
    for n in sizes:
        row: dict[str, object] = {"n": n, "fleet_us": _us(bench_fleet(n, args.seconds, args.repeats), n)}
        if n in (1, 16):
            row["per_vehicle_us"] = _us(bench_per_vehicle(n, args.seconds, args.repeats), n)
        if not args.no_recording:
            for key, suffix, engine in (("h5", ".h5", "record"), ("h5_1thr", ".h5", "1thr"),
                                        ("h5_before", ".h5", "before"), ("ovd", ".ovd", "record")):
                times, size, floors = bench_recording(n, suffix, args.seconds, args.repeats, engine)
                row[f"{key}_us"] = _us(times, n)
                row[f"{key}_bytes"] = size
                if engine == "record" and floors:
                    row["deflate_floor_us"] = (1e6 * min(floors), 1e6 * statistics.median(floors))
        rows.append(row)
        if not args.json:
            _print_row(row, header=len(rows) == 1)
    if args.json:
        print(json.dumps({"vehicle_us": one, "fleets": rows}, indent=2))


def _print_row(row: dict[str, object], header: bool) -> None:
    if header:
        print("simcore Fleet, default sedan, dt 1/60 s, 3 substeps, one thread; "
              "us per vehicle-step, best / median")
        print(f"{'N':>6}  {'fleet':>15}  {'per-vehicle':>15}  {'speed-up':>8}  "
              f"{'+h5 (record)':>15}  {'h5 B/vs':>8}  {'deflate floor':>13}  "
              f"{'+h5 (1 thr)':>15}  {'B/vs':>8}  "
              f"{'+h5 (before)':>15}  {'B/vs':>8}  {'+ovd (record)':>15}  {'ovd B/vs':>8}")
    n = row["n"]
    fb, fm = row["fleet_us"]  # type: ignore[misc]
    pv = row.get("per_vehicle_us")
    pv_text = f"{pv[0]:7.1f} / {pv[1]:6.1f}" if pv else ""  # type: ignore[index]
    ratio = f"{pv[0] / fb:7.1f}x" if pv else ""  # type: ignore[index]
    cols = [f"{n:>6}", f"{fb:7.2f} / {fm:6.2f}", f"{pv_text:>15}", f"{ratio:>8}"]
    for kind in ("h5", "h5_1thr", "h5_before", "ovd"):
        if f"{kind}_us" in row:
            rb, rm = row[f"{kind}_us"]  # type: ignore[misc]
            cols += [f"{rb - fb:+7.2f} / {rm - fm:+6.2f}", f"{row[f'{kind}_bytes']:8.0f}"]
            if kind == "h5":
                gb, gm = row.get("deflate_floor_us", (float("nan"), float("nan")))  # type: ignore[misc]
                cols.append(f"{gb:5.2f} / {gm:5.2f}")
    print("  ".join(cols), flush=True)


if __name__ == "__main__":
    main()
