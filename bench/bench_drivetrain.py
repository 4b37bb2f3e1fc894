"""Engine-drive benchmark: steps per second of the EngineDrive.json car, the 3-axle truck and a
10-wheel tank at full throttle, the share of each sequence entry, and the clutch solvers alone.

Run: ``python3 bench/bench_drivetrain.py [--steps N] [--dt DT] [--substeps K]``. Prints figures
and ratios only; nothing is asserted (timings belong here, not in the tests).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np

from simcore.axle import AxleDescription
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.drivetrain.engine_drive.functions import (
    clutch_system,
    multi_wheel_differential_state_update,
    solve_clutch_system,
)
from simcore.drivetrain.engine_drive.loader import read_engine_drivetrain_params
from simcore.drivetrain.engine_drive.params import ClutchAccuracyMode, ClutchParams
from simcore.drivetrain.engine_drive.vehicles import engine_drive_car, make_vehicle, tank_params, truck_params
from simcore.vehicle import Vehicle


class _Timed(Component):
    """Wraps a component and accumulates its wall time."""

    def __init__(self, inner: Component, name: str, totals: dict[str, float]) -> None:
        self.inner, self.name, self.totals = inner, name, totals

    def update(self, dt: float, context: SimulationContext) -> bool:
        t0 = time.perf_counter()
        ok = self.inner.update(dt, context)
        self.totals[self.name] += time.perf_counter() - t0
        return ok


def _prepare(vehicle: Vehicle, dt: float) -> None:
    vehicle.commands.brake = 1.0
    vehicle.run(10 * dt, dt)
    vehicle.commands.release()
    vehicle.commands.throttle = 1.0
    tank = vehicle.states.tank_drive_transmission
    if tank is not None:
        tank.thrusts[:] = (1.0, 0.8)


def bench_vehicle(name: str, vehicle: Vehicle, steps: int, dt: float) -> float:
    """Print steps/s and the per-entry breakdown; return steps/s."""
    _prepare(vehicle, dt)
    t0 = time.perf_counter()
    for _ in range(steps):
        vehicle.step(dt)
    elapsed = time.perf_counter() - t0
    rate = steps / elapsed

    totals: dict[str, float] = defaultdict(float)
    for name_i in vehicle.sequence.names():
        vehicle.sequence.replace(name_i, _Timed(vehicle.sequence.get(name_i), name_i, totals))
    t1 = time.perf_counter()
    for _ in range(steps):
        vehicle.step(dt)
    timed = time.perf_counter() - t1
    print(f"\n{name}: {vehicle.nb_wheels} wheels, {rate:8.1f} steps/s ({1e3 / rate:6.2f} ms/step), "
          f"v = {vehicle.forward_speed:5.1f} m/s, gear {vehicle.states.gearbox.current_gear}")
    for entry, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"    {entry:18s} {1e3 * seconds / steps:7.3f} ms/step  {100 * seconds / timed:5.1f} %")
    return rate


def bench_solvers(repeats: int) -> None:
    """The clutch solve alone on the car's 5x5 system: LU (best possible) vs Gauss-Seidel."""
    p = read_engine_drivetrain_params(nb_wheels=4)
    axles = AxleDescription([[0, 1], [2, 3]])
    diff = multi_wheel_differential_state_update(axles, p.multi_wheel_differential)
    speeds = np.array([30.0, 31.0, 29.5, 30.2])
    tire_torques = np.array([-120.0, -110.0, -90.0, -95.0])
    system = clutch_system(np.full(4, 1.17), np.full(4, 0.25), speeds, np.zeros(4), tire_torques, diff,
                           1.0, 250.0, 450.0, 0.15, 10.0, 16.0, 1.0 / 180.0)
    exact = solve_clutch_system(system, ClutchParams(ClutchAccuracyMode.BEST_POSSIBLE))
    print("\nclutch solve, 5 unknowns (car, 2nd gear):")
    base = None
    for label, params in (("LU full pivot", ClutchParams(ClutchAccuracyMode.BEST_POSSIBLE)),
                          ("Gauss-Seidel x5", ClutchParams(ClutchAccuracyMode.ESTIMATE, 5)),
                          ("Gauss-Seidel x20", ClutchParams(ClutchAccuracyMode.ESTIMATE, 20))):
        t0 = time.perf_counter()
        for _ in range(repeats):
            x = solve_clutch_system(system, params)
        us = 1e6 * (time.perf_counter() - t0) / repeats
        base = us if base is None else base
        print(f"    {label:18s} {us:8.1f} us/solve  x{us / base:4.2f} of LU   max |x - LU| = "
              f"{np.max(np.abs(x - exact)):.2e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--dt", type=float, default=1.0 / 60.0)
    ap.add_argument("--substeps", type=int, default=3)
    args = ap.parse_args()
    print(f"dt = {args.dt:.4f} s, {args.substeps} substeps, {args.steps} timed steps per vehicle")
    car = bench_vehicle("EngineDrive.json car", make_vehicle(engine_drive_car(), nb_substeps=args.substeps),
                        args.steps, args.dt)
    truck = bench_vehicle("3-axle truck", make_vehicle(truck_params(), nb_substeps=args.substeps),
                          args.steps, args.dt)
    tank = bench_vehicle("10-wheel tank", make_vehicle(tank_params(10), nb_substeps=args.substeps),
                         args.steps, args.dt)
    print(f"\nratios: truck / car = {truck / car:.2f}, tank / car = {tank / car:.2f} (steps/s)")
    bench_solvers(2000)


if __name__ == "__main__":
    main()
