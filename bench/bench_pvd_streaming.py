"""What streaming a simcore vehicle through PVD costs: time per step and bytes per vehicle-step.

Runs the default car through the slalom scenario (steering, so every state moves) without a
recorder, then recording into memory (.ovd bytes), an .ovd file and an HDF5 recording. Prints the
simulation's own cost per step, the recorder's cost per step (timed inside the PVD component,
and as the difference of whole runs), their ratio, and the bytes each vehicle-step adds to the
.ovd and to the .h5 (measured between two run lengths, so fixed costs such as the schema and the
HDF5 metadata do not count).

Targets (issue 5): streaming adds at most 1x the simulation's own cost per step (PhysX's own
recording costs about 10x its simulation step); at most 4 KB per vehicle-step in HDF5 (PhysX
writes about 15.9 KB per vehicle-step to .ovd, resending unchanged params every step).

    python3 bench/bench_pvd_streaming.py [--steps N] [--dt S]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from pvdkit.h5 import H5Stream
from pvdkit.streams import MemoryStream, OvdFileStream
from pvdkit.writer import OmniPvdWriter
from simcore.presets import default_vehicle
from simcore.pvd.recorder import PvdRecorder
from simcore.scenarios import get_scenario
from simcore.vehicle import Vehicle

SCENARIO = "slalom"


def run(steps: int, dt: float, stream=None) -> dict[str, float]:
    """Drive ``steps`` steps; with ``stream``, record into it. Returns timings (s per step)."""
    car = Vehicle(default_vehicle())
    spent = [0.0]
    recorder = None
    if stream is not None:
        recorder = PvdRecorder(OmniPvdWriter(stream))
        component = recorder.attach(car)
        inner = component.update

        def timed(step_dt, context):
            t = time.perf_counter()
            ok = inner(step_dt, context)
            spent[0] += time.perf_counter() - t
            return ok

        component.update = timed
    sc = get_scenario(SCENARIO)
    sc.setup(car)
    car.step(dt)  # warm-up: first-call costs (imports, compilation, schema, object graph)
    spent[0] = 0.0
    start = time.perf_counter()
    for i in range(steps):
        sc.drive(car, (i + 1) * dt)
        car.step(dt)
    total = time.perf_counter() - start
    if recorder is not None:
        t = time.perf_counter()
        recorder.close()
        spent_close = time.perf_counter() - t
    else:
        spent_close = 0.0
    return {"step": total / steps, "pvd": spent[0] / steps, "close": spent_close}


def file_size(kind: str, steps: int, dt: float, folder: Path) -> tuple[int, float]:
    path = folder / f"bench_{kind}_{steps}.{kind}"
    # As `pvdkit record` writes them: HDF5 append-only, without compaction on close.
    stream = OvdFileStream(path) if kind == "ovd" else H5Stream(path, compact=False)
    t = run(steps, dt, stream)
    return os.path.getsize(path), t["pvd"] + t["close"] / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=240, help="steps per run (default 240 = 4 s at 60 Hz)")
    ap.add_argument("--dt", type=float, default=1.0 / 60.0)
    args = ap.parse_args()
    n, dt = args.steps, args.dt

    print(f"default car, scenario {SCENARIO!r}, {n} steps of {dt * 1e3:.2f} ms (3 substeps)")
    bare = run(n, dt)
    mem = run(n, dt, MemoryStream())
    sim = bare["step"]
    print(f"  simulation alone            {sim * 1e3:8.3f} ms / step")
    print(f"  simulation + PVD (memory)   {mem['step'] * 1e3:8.3f} ms / step")
    print(f"  PVD component (timed)       {mem['pvd'] * 1e3:8.3f} ms / step  "
          f"= {mem['pvd'] / sim:.3f} x the simulation")
    print(f"  difference of whole runs    {(mem['step'] - sim) * 1e3:8.3f} ms / step  "
          f"= {(mem['step'] - sim) / sim:+.3f} x (noise included)")

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sizes = {}
        for kind in ("ovd", "h5"):
            small, _ = file_size(kind, n // 2, dt, folder)
            big, cost = file_size(kind, n, dt, folder)
            per_step = (big - small) / (n - n // 2)
            sizes[kind] = per_step
            print(f"  .{kind:<3} {big / 1024:9.1f} KB for {n} steps: {per_step:8.0f} B / vehicle-step "
                  f"(incremental), recorder {cost * 1e3:.3f} ms / step incl. close")

    ok_time = mem["pvd"] <= sim
    ok_size = sizes["h5"] <= 4096
    print(f"target streaming <= 1x simulation:   {'PASS' if ok_time else 'FAIL'} ({mem['pvd'] / sim:.3f} x)")
    print(f"target <= 4 KB / vehicle-step (.h5): {'PASS' if ok_size else 'FAIL'} ({sizes['h5']:.0f} B)")
    print(f"PhysX for comparison: ~15.9 KB / vehicle-step (.ovd); ours {sizes['ovd'] / 1024:.1f} KB (.ovd)")


if __name__ == "__main__":
    main()
