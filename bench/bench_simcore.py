"""Steps per second of one simcore vehicle, with the time spent in each component.

Runs the reference car (PhysX's snippet sedan, direct drive, default sequence with 3 substeps)
on a flat plane at 60 Hz through a throttle + steer manoeuvre, after a warm-up that triggers any
compilation. Each component of the sequence is wrapped in a timer (the wrappers cost a little;
the untimed rate is measured separately). Prints a table; ``--json`` prints the figures as JSON.

    python3 bench/bench_simcore.py [--steps 600] [--substeps 3] [--heightfield] [--json]

The untimed rate is the best of three runs (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.frame import DEFAULT_FRAME
from simcore.presets import default_vehicle
from simcore.road import HeightfieldRoad, PlaneRoad, RoadGeometry
from simcore.vehicle import Vehicle


class TimedComponent(Component):
    """Wraps a component and accumulates the CPU time of its updates."""

    def __init__(self, inner: Component) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.calls = 0

    def update(self, dt: float, context: SimulationContext) -> bool:
        t0 = time.perf_counter()
        ok = self.inner.update(dt, context)
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        return ok


def _road(heightfield: bool) -> RoadGeometry:
    if not heightfield:
        return PlaneRoad.ground(DEFAULT_FRAME)
    x = np.arange(-20.0, 200.0, 0.25)
    rng = np.random.default_rng(0)
    heights = 0.02 * rng.standard_normal((x.size, 81))
    return HeightfieldRoad(heights, 0.25, 0.25, origin=np.array([-20.0, -10.0, 0.0]))


def _drive(v: Vehicle, steps: int, dt: float) -> None:
    for i in range(steps):
        v.commands.throttle = 0.6 if (i // 120) % 2 == 0 else 0.2
        v.commands.steer = 0.2 * np.sin(i * dt)
        v.step(dt)


def run(steps: int, substeps: int, heightfield: bool, repeats: int = 3) -> dict[str, object]:
    dt = 1.0 / 60.0
    params = default_vehicle(DEFAULT_FRAME)

    untimed = float("inf")
    for _ in range(repeats):  # best of a few runs: the machine may be shared
        plain = Vehicle(params, road=_road(heightfield), nb_substeps=substeps)
        plain.place_on_road(clearance=-0.16, speed=10.0)
        _drive(plain, 30, dt)  # warm-up (numba caches, first-call allocations)
        t0 = time.perf_counter()
        _drive(plain, steps, dt)
        untimed = min(untimed, time.perf_counter() - t0)

    timed = Vehicle(params, road=_road(heightfield), nb_substeps=substeps)
    timed.place_on_road(clearance=-0.16, speed=10.0)
    wrappers: dict[str, TimedComponent] = {}
    for entry in timed.sequence.entries():
        w = TimedComponent(entry.component)
        timed.sequence.replace(entry.index, w)
        wrappers[entry.name] = w
    _drive(timed, 30, dt)
    for w in wrappers.values():
        w.seconds, w.calls = 0.0, 0
    t0 = time.perf_counter()
    _drive(timed, steps, dt)
    total = time.perf_counter() - t0

    breakdown = {
        name: {"ms_per_step": 1e3 * w.seconds / steps, "calls_per_step": w.calls / steps,
               "share": w.seconds / total}
        for name, w in wrappers.items()
    }
    return {
        "steps": steps,
        "substeps": substeps,
        "road": "heightfield" if heightfield else "plane",
        "steps_per_second": steps / untimed,
        "ms_per_step": 1e3 * untimed / steps,
        "realtime_factor_at_60hz": steps / untimed / 60.0,
        "components": breakdown,
        "sequence_overhead_ms_per_step": 1e3 * (total - sum(w.seconds for w in wrappers.values())) / steps,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--substeps", type=int, default=3)
    parser.add_argument("--heightfield", action="store_true", help="drive on a rough heightfield instead")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.steps, args.substeps, args.heightfield)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"simcore, reference car, {result['road']}, dt=1/60 s, {args.substeps} substeps, "
          f"{args.steps} steps")
    print(f"  {result['steps_per_second']:.1f} steps/s  ({result['ms_per_step']:.2f} ms/step, "
          f"{result['realtime_factor_at_60hz']:.2f}x real time)")
    print(f"  {'component':<18}{'ms/step':>10}{'calls/step':>12}{'share':>8}")
    for name, row in result["components"].items():  # type: ignore[union-attr]
        print(f"  {name:<18}{row['ms_per_step']:>10.3f}{row['calls_per_step']:>12.0f}"
              f"{100 * row['share']:>7.1f}%")
    print(f"  {'(sequence)':<18}{result['sequence_overhead_ms_per_step']:>10.3f}")


if __name__ == "__main__":
    main()
