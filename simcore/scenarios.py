"""Driving scenarios: reproducible command schedules for recordings, tests and benchmarks.

A :class:`Scenario` puts a vehicle in its starting state (:meth:`Scenario.setup`: at rest on the
road, or already rolling at ``initial_speed``) and sets its commands before every step from the
simulated time (:meth:`Scenario.drive`). Commands are those of
:class:`~simcore.vehicle.VehicleCommands` (throttle, brake, handbrake, steer, gear) and, for
tanks, the two track thrusts. Engine-drive vehicles are put in automatic gear when they have an
autobox, otherwise in first gear.

==================  =====  ==================================================================
name                time   what the driver does
==================  =====  ==================================================================
``idle``            2 s    nothing: the vehicle settles on its suspension
``accelerate``      5 s    full throttle, straight
``brake``           6 s    full throttle for 3 s, then full brake
``step-steer``      5 s    rolling at 15 m/s, light throttle; at 1 s the wheel steps to 0.3
``slalom``          8 s    rolling at 12 m/s, light throttle; steer 0.5 sin(pi t)
``handbrake-turn``  5 s    rolling at 15 m/s; at 1 s steer 0.6 and pull the handbrake for 1.5 s
``steer-ramp``      8 s    rolling at 20 m/s, light throttle; from 1 s the steer ramps up by 0.03/s
``tank-turn``       5 s    a tank spins on the spot: thrusts +1 / -1, full throttle
==================  =====  ==================================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pvdkit.types import PvdError

#: ``PxVehicleEngineDriveTransmissionCommandState::eAUTOMATIC_GEAR``.
AUTOMATIC_GEAR = 0xFF


class ScenarioError(PvdError, ValueError):
    """A scenario cannot run on this vehicle (the message says what the vehicle lacks).

    A user error, so a :class:`~pvdkit.types.PvdError` (``pvdkit record`` prints it as one
    line); also a ``ValueError``, as it always was."""


@dataclass(frozen=True)
class Commands:
    """What the driver sets at one instant: pedals and handbrake in [0, 1], steer in [-1, 1], and
    for a tank the two track thrusts in [-1, 1] (None: a vehicle without tracks)."""

    throttle: float = 0.0
    brake: float = 0.0
    handbrake: float = 0.0
    steer: float = 0.0
    thrusts: tuple[float, float] | None = None


@dataclass(frozen=True)
class Scenario:
    """A named command schedule. ``commands(t)`` gives the driver's inputs at simulated time ``t``
    (seconds since the scenario started); ``initial_speed`` (m/s, forward) the rolling start;
    ``needs_tank``: only for vehicles with tank tracks."""

    name: str
    description: str
    duration: float
    commands: Callable[[float], Commands]
    initial_speed: float = 0.0
    needs_tank: bool = False

    def check(self, vehicle: Any) -> None:
        """Raise :class:`ScenarioError` if the vehicle cannot drive this scenario."""
        if self.needs_tank and getattr(vehicle.states, "tank_drive_transmission", None) is None:
            raise ScenarioError(
                f"scenario {self.name!r} needs a tank: a vehicle with tank tracks and thrust commands "
                f"(a tank differential and vehicle.states.tank_drive_transmission); this vehicle has a "
                f"{vehicle.params.drivetrain!r} drivetrain without tracks")

    def setup(self, vehicle: Any) -> None:
        """Put ``vehicle`` at its start: on the road, level, at ``initial_speed``, in gear.

        ``vehicle`` may be a :class:`~simcore.fleet.Fleet`: every member starts so, side by side
        (``Fleet.place_on_road``'s spacing)."""
        self.check(vehicle)
        vehicle.place_on_road()
        for member in (vehicle if hasattr(vehicle, "n_vehicles") else (vehicle,)):
            _select_gear(member)
            if self.initial_speed:
                _roll(member, self.initial_speed)
        self.drive(vehicle, 0.0)

    def drive(self, vehicle: Any, t: float) -> None:
        """Set the commands for the step that starts at scenario time ``t`` (a fleet's every member)."""
        c = self.commands(t)
        cmd = vehicle.commands
        cmd.throttle = c.throttle
        cmd.brake = c.brake
        cmd.handbrake = c.handbrake
        cmd.steer = c.steer
        if c.thrusts is not None:
            vehicle.states.tank_drive_transmission.thrusts[:] = c.thrusts

    def run(self, vehicle: Any, dt: float, duration: float | None = None,
            after_step: Callable[[int], None] | None = None) -> int:
        """Set up and drive ``vehicle`` for ``duration`` (default: the scenario's) in steps of
        ``dt``; ``after_step(i)`` is called after step ``i``. Returns the number of steps."""
        if not dt > 0.0:
            raise ValueError(f"scenario {self.name!r}: dt must be positive, got {dt!r}")
        total = self.duration if duration is None else float(duration)
        if not total > 0.0:
            raise ValueError(f"scenario {self.name!r}: duration must be positive, got {duration!r}")
        steps = max(1, int(round(total / dt)))
        self.setup(vehicle)
        for i in range(steps):
            self.drive(vehicle, i * dt)
            vehicle.step(dt)
            if after_step is not None:
                after_step(i)
        return steps


def _select_gear(vehicle: Any) -> None:
    s = vehicle.states
    if getattr(s, "direct_drive_transmission", None) is not None:
        vehicle.commands.gear = "forward"
        return
    if all(getattr(s, n, None) is None for n in ("engine_drive_transmission", "tank_drive_transmission")):
        return
    p = vehicle.params
    if getattr(p, "autobox", None) is not None:
        vehicle.commands.gear = AUTOMATIC_GEAR
    elif getattr(p, "gearbox", None) is not None:
        vehicle.commands.gear = int(p.gearbox.neutral_gear) + 1


def _roll(vehicle: Any, speed: float) -> None:
    """Forward speed ``speed`` (m/s, scaled to the vehicle's length unit) with rolling wheels."""
    p = vehicle.params
    v = speed * p.scale.scale
    rb = vehicle.states.rigid_body
    vehicle.place(rb.pos.copy(), rb.quat.copy(), linear_velocity=v * p.frame.lng)
    wheels = vehicle.states.wheel_rigid_body_1d
    wheels.rotation_speed[:] = v / np.asarray(p.wheel.radius)
    wheels.corrected_rotation_speed[:] = wheels.rotation_speed
    engine = getattr(vehicle.states, "engine", None)
    gearbox = getattr(p, "gearbox", None)
    if engine is not None and gearbox is not None:
        ratio = float(gearbox.ratios[int(gearbox.neutral_gear) + 1]) * float(gearbox.final_ratio)
        engine.rotation_speed = min(float(np.mean(wheels.rotation_speed)) * ratio, float(p.engine.max_omega))


def _idle(t: float) -> Commands:
    return Commands()


def _accelerate(t: float) -> Commands:
    return Commands(throttle=1.0)


def _brake(t: float) -> Commands:
    return Commands(throttle=1.0) if t < 3.0 else Commands(brake=1.0)


def _step_steer(t: float) -> Commands:
    return Commands(throttle=0.2, steer=0.3 if t >= 1.0 else 0.0)


def _slalom(t: float) -> Commands:
    return Commands(throttle=0.25, steer=0.5 * math.sin(math.pi * t))


def _handbrake_turn(t: float) -> Commands:
    if 1.0 <= t < 2.5:
        return Commands(steer=0.6, handbrake=1.0)
    return Commands(throttle=0.2 if t < 1.0 else 0.0)


def _steer_ramp(t: float) -> Commands:
    # A slow ramp keeps the car near steady state at every instant: the understeer gradient is
    # the slope of (steer angle - L r / V) against the lateral acceleration (SAE J266, ISO 13674).
    return Commands(throttle=0.15, steer=0.03 * max(0.0, t - 1.0))


def _tank_turn(t: float) -> Commands:
    return Commands(throttle=1.0, thrusts=(1.0, -1.0))


#: Every scenario by name.
SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("idle", "no input: the vehicle settles on its suspension", 2.0, _idle),
    Scenario("accelerate", "full throttle, straight", 5.0, _accelerate),
    Scenario("brake", "full throttle for 3 s, then full brake", 6.0, _brake),
    Scenario("step-steer", "rolling at 15 m/s; at 1 s the steering steps to 0.3", 5.0, _step_steer,
             initial_speed=15.0),
    Scenario("slalom", "rolling at 12 m/s; steer 0.5 sin(pi t)", 8.0, _slalom, initial_speed=12.0),
    Scenario("handbrake-turn", "rolling at 15 m/s; steer 0.6 with the handbrake from 1 s to 2.5 s", 5.0,
             _handbrake_turn, initial_speed=15.0),
    Scenario("steer-ramp", "rolling at 20 m/s; from 1 s the steering ramps up by 0.03/s", 8.0, _steer_ramp,
             initial_speed=20.0),
    Scenario("tank-turn", "a tank spins on the spot: track thrusts +1 / -1 at full throttle", 5.0,
             _tank_turn, needs_tank=True),
)}

#: The scenario ``pvdkit record`` runs when none is named.
DEFAULT_SCENARIO = "accelerate"


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name``; :class:`ScenarioError` listing the names if unknown."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ScenarioError(f"unknown scenario {name!r}; available: {', '.join(SCENARIOS)}") from None
