"""The EngineDrive.json car as a full vehicle: neutral free-rev, automatic shifting up and down
with the autobox latency, the four-wheel limited slip with one axle on ice, the loader hook."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.drivetrain.engine_drive.batch import (
    EngineDrivetrainBatchComponent,
    FourWheelDriveDifferentialStateBatchComponent,
)
from simcore.drivetrain.engine_drive.components import (
    ComponentChain,
    EngineDrivetrainComponent,
    FourWheelDriveDifferentialStateComponent,
)
from simcore.drivetrain.engine_drive.params import ClutchAccuracyMode, ClutchParams
from simcore.drivetrain.engine_drive.vehicles import engine_drive_car, make_vehicle
from simcore.io.physx_json import load_physx_vehicle
from simcore.vehicle import Vehicle

DT = 1.0 / 30.0


@pytest.fixture(scope="module")
def rest_states():
    """The car's states at rest on the road after the brake pedal was held for 20 steps (as
    PhysX's snippets start), shared by every test of this module."""
    v = make_vehicle(engine_drive_car())
    v.commands.brake = 1.0
    v.run(20 * DT, DT)
    v.commands.release()
    return v.states


def _settled(params, rest_states) -> Vehicle:
    """A vehicle for ``params`` starting from a copy of the shared rest state."""
    v = make_vehicle(params)
    v.states = rest_states.copy()
    return v


def test_engine_car_loads_through_the_physx_loader() -> None:
    p = load_physx_vehicle(drivetrain="engine", differential="four_wheel")
    assert p.drivetrain == "engine"
    assert p.differential.center_bias == 1.3
    assert p.engine.peak_torque == 500.0 and p.gearbox.nb_ratios == 7
    v = make_vehicle(p)
    names = v.sequence.names()
    assert names.index("command_response") < names.index("actuation") < names.index("drivetrain")
    # the vehicle runs the compiled batch components; its reference sequence the per-vehicle ones
    assert isinstance(v.sequence.get("drivetrain"), EngineDrivetrainBatchComponent)
    assert isinstance(v.sequence.get("actuation").get("differential"),
                      FourWheelDriveDifferentialStateBatchComponent)
    reference = v.reference_sequence()
    assert reference.names() == names[: len(reference.names())]
    assert isinstance(reference.get("drivetrain"), EngineDrivetrainComponent)
    chain = reference.get("actuation")
    assert isinstance(chain, ComponentChain)
    assert isinstance(chain.get("differential"), FourWheelDriveDifferentialStateComponent)
    assert v.states.gearbox.current_gear == p.gearbox.neutral_gear + 1


def test_neutral_full_throttle_revs_to_max_omega_and_no_further(rest_states) -> None:
    v = _settled(engine_drive_car(), rest_states)
    p, s = v.params, v.states
    v.commands.gear = p.gearbox.neutral_gear  # manual gear command: neutral
    v.commands.throttle = 1.0
    speeds = []
    for _ in range(40):
        v.step(DT)
        speeds.append(s.engine.rotation_speed)
    assert s.gearbox.current_gear == p.gearbox.neutral_gear
    assert all(b >= a for a, b in zip(speeds, speeds[1:], strict=False))
    assert max(speeds) == p.engine.max_omega and speeds[-1] == p.engine.max_omega
    assert abs(v.forward_speed) < 0.05  # nothing reaches the wheels
    # Neutral: G = 0, so the slip (measured before each substep) is minus the engine speed.
    assert -p.engine.max_omega <= s.clutch_slip.clutch_slip < -0.95 * p.engine.max_omega


class _GearLog:
    def __init__(self) -> None:
        self.events: list[tuple[float, int, int]] = []  # (time, current, target) when either changes
        self.requests: list[tuple[float, int]] = []  # (time, new target) when a shift starts

    def __call__(self, v: Vehicle) -> None:
        g = v.states.gearbox
        last = self.events[-1] if self.events else None
        if last is None or (last[1], last[2]) != (g.current_gear, g.target_gear):
            if last is not None and g.target_gear != last[2]:
                self.requests.append((v.time, g.target_gear))
            self.events.append((v.time, g.current_gear, g.target_gear))


@pytest.fixture(scope="module")
def shift_run(rest_states) -> tuple[Vehicle, _GearLog, _GearLog, float, float]:
    """Full throttle from rest until top gear engages, then full brake until first gear.

    Returns (vehicle, up-phase log, down-phase log, time stopped, speed when top gear engaged).
    """
    v = _settled(engine_drive_car(), rest_states)
    top = v.params.gearbox.nb_ratios - 1
    first = v.params.gearbox.neutral_gear + 1
    up, down = _GearLog(), _GearLog()
    up(v)
    v.commands.throttle = 1.0
    while not (v.states.gearbox.current_gear == top) and v.time < 25.0:
        v.step(DT)
        up(v)
    top_speed = v.forward_speed
    v.commands.throttle = 0.0
    v.commands.brake = 1.0
    down(v)
    stopped_at = float("inf")
    while v.states.gearbox.current_gear != first and v.time < 45.0:
        v.step(DT)
        down(v)
        if stopped_at == float("inf") and abs(v.forward_speed) < 0.05:
            stopped_at = v.time
    return v, up, down, stopped_at, top_speed


def test_full_throttle_from_rest_shifts_up_in_order(shift_run) -> None:
    v, up, _, _, top_speed = shift_run
    gb = v.params.gearbox
    targets = [g for _, g in up.requests]
    assert targets == list(range(gb.neutral_gear + 2, gb.nb_ratios))
    assert up.events[-1][1:] == (gb.nb_ratios - 1, gb.nb_ratios - 1)
    # Each shift passes through neutral for the switch time.
    for t, g in up.requests:
        engaged = next(e for e in up.events if e[0] > t and e[1] == g)
        assert engaged[0] - t == pytest.approx(gb.switch_time, abs=2 * DT)
    assert top_speed > 20.0


def test_braking_to_a_stop_shifts_down_in_order(shift_run) -> None:
    v, _, down, stopped_at, _ = shift_run
    gb = v.params.gearbox
    targets = [g for _, g in down.requests]
    assert targets == list(range(gb.nb_ratios - 2, gb.neutral_gear, -1))
    assert stopped_at < down.requests[-1][0]
    assert v.states.gearbox.current_gear == gb.neutral_gear + 1


def test_no_autobox_shift_inside_the_latency_window(shift_run) -> None:
    v, up, down, _, _ = shift_run
    times = [t for t, _ in up.requests] + [t for t, _ in down.requests]
    gaps = np.diff(times)
    assert np.all(gaps > v.params.autobox.latency)
    assert gaps.min() < v.params.autobox.latency + 0.5  # the down-shifts at rest come right after it


class _AxleOnIce(Component):
    """Wraps the road query and puts the given wheels on ice (road friction ``mu``)."""

    def __init__(self, vehicle: Vehicle, inner: Component, wheels: tuple[int, ...], mu: float) -> None:
        self.vehicle, self.inner, self.wheels, self.mu = vehicle, inner, list(wheels), mu

    def update(self, dt: float, context: SimulationContext) -> bool:
        ok = self.inner.update(dt, context)
        self.vehicle.states.road_geometry.friction[self.wheels] = self.mu
        return ok


def _ice_run(params, rest_states, steps: int = 30) -> tuple[Vehicle, list[float]]:
    """Rolling at 15 m/s in second gear (a manual gear command), front axle on ice (mu 0.1), full
    throttle. (Below about 10 m/s the explicit tire torque makes the driven wheels of this car
    chatter at 90 substeps per second, as in Vehicle2, which would blur the differential.)"""
    v = _settled(params, rest_states)
    v.sequence.replace("road_geometry", _AxleOnIce(v, v.sequence.get("road_geometry"), (0, 1), 0.1))
    p, s = v.params, v.states
    speed, gear = 15.0, p.gearbox.neutral_gear + 2
    v.place(v.pos, linear_velocity=speed * v.frame.lng)
    s.wheel_rigid_body_1d.rotation_speed[:] = speed / p.wheel.radius
    s.gearbox.current_gear = s.gearbox.target_gear = gear
    v.commands.gear = gear
    s.engine.rotation_speed = speed / p.wheel.radius[0] * p.gearbox.ratio(gear) * p.gearbox.final_ratio
    v.commands.throttle = 1.0
    ratios = []
    for _ in range(steps):
        v.step(DT)
        w = np.abs(s.wheel_rigid_body_1d.rotation_speed)
        ratios.append((w[0] + w[1]) / (w[2] + w[3]))
    return v, ratios


def test_limited_slip_keeps_front_rear_ratio_within_centre_bias_on_ice(rest_states) -> None:
    lsd, ratios = _ice_run(engine_drive_car("four_wheel"), rest_states)
    d = lsd.params.differential
    assert max(ratios) <= d.center_bias + 1e-9
    assert ratios[-1] == pytest.approx(d.center_target, rel=1e-6)  # the icy axle is held at the target
    opened, open_ratios = _ice_run(engine_drive_car("multi_wheel"), rest_states)
    assert open_ratios[-1] > 1.5 * d.center_bias  # an open differential lets the icy axle spin up
    assert lsd.forward_speed > opened.forward_speed + 0.5  # and loses drive to the gripping axle


def test_vehicle2_exact_limited_slip_overshoots_between_updates(rest_states) -> None:
    """predict_breach=False is Vehicle2's start-of-update check: the icy axle can pass the bias
    in the update that breaches it before the constraint pulls it back."""
    p = engine_drive_car("four_wheel")
    exact = p.replace(differential=replace(p.differential, predict_breach=False))
    _, ratios = _ice_run(exact, rest_states, steps=20)
    assert max(ratios) > p.differential.center_bias
    assert max(ratios) < p.differential.center_bias + p.differential.rate * DT


def test_estimate_mode_tracks_best_possible_on_the_road(rest_states) -> None:
    """Same drive with 50 Gauss-Seidel sweeps and with LU: the trajectories match closely."""
    p = engine_drive_car()
    runs = []
    modes = (ClutchParams(ClutchAccuracyMode.BEST_POSSIBLE), ClutchParams(ClutchAccuracyMode.ESTIMATE, 50))
    for clutch in modes:
        v = _settled(p.replace(clutch=clutch), rest_states)
        v.commands.throttle = 1.0
        v.run(12 * DT, DT)
        runs.append((v.forward_speed, v.states.engine.rotation_speed))
    assert runs[1][0] == pytest.approx(runs[0][0], rel=1e-4)
    assert runs[1][1] == pytest.approx(runs[0][1], rel=1e-4)
