"""The motorcycle as a steppable model, its component, and its driving scenarios.

:class:`Motorcycle` is shaped like a :class:`~simcore.vehicle.Vehicle` (``params``, ``states``,
``sequence``, ``context``, ``step(dt)``) so that the PVD recorder attaches to it. Each step the
:class:`MotorcycleComponent` integrates the body (RK4 substeps of at most 2 ms), updates the
wheels, and writes the block's outputs: the 4x3 Translation and Rotation arrays and the light
vector (``states.pose``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from simcore.component import Component, ComponentSequence
from simcore.context import SimulationContext
from simcore.motorcycle.functions import (
    STOP_SPEED,
    SuspensionGeometry,
    derivatives,
    integrate,
    light_controls,
    pose_arrays,
    suspension_geometry,
)
from simcore.motorcycle.params import MotorcycleParams
from simcore.motorcycle.presets import motorcycle_preset
from simcore.motorcycle.states import MotorcycleCommands, MotorcycleStates


class MotorcycleComponent(Component):
    """Reads ``model.params`` and ``model.states.commands``; writes the body, wheel and pose states."""

    def __init__(self, model: Motorcycle) -> None:
        self.model = model
        self._params: MotorcycleParams | None = None
        self._geometry: SuspensionGeometry | None = None

    def geometry(self) -> SuspensionGeometry:
        """The suspension geometry of the current params (recomputed when they change)."""
        p = self.model.params
        if p is not self._params or self._geometry is None:
            self._geometry = suspension_geometry(p)
            self._params = p
        return self._geometry

    def update(self, dt: float, context: SimulationContext) -> bool:
        p = self.model.params
        g = self.geometry()
        s = self.model.states
        cmd = s.commands
        cmd.validate()
        b = s.body
        y = np.array([b.pos[0], b.pos[2], b.pitch, b.velocity[0], b.velocity[2], b.pitch_rate])
        y = integrate(p, g, y, cmd, dt)
        dy, f = derivatives(p, g, y, cmd)
        b.pos[:] = (y[0], 0.0, y[1])
        b.pitch = float(y[2])
        b.velocity[:] = (y[3], 0.0, y[4])
        b.pitch_rate = float(y[5])
        b.acceleration[:] = (dy[3], 0.0, dy[4])
        b.time += dt
        w = s.wheels
        w.suspension_length[:] = f.suspension_length
        w.compression[:] = f.compression
        w.compression_speed[:] = f.compression_speed
        w.suspension_force[:] = f.suspension_force
        w.normal_force[:] = f.normal_force
        w.longitudinal_force[:] = f.longitudinal_force
        w.brake_torque[:] = f.brake_torque
        w.drive_torque[:] = f.drive_torque
        w.locked[:] = f.locked
        w.in_contact[:] = f.in_contact
        rolling = f.in_contact & ~f.locked
        free_spin = np.where(f.locked, 0.0, w.rotation_speed)
        previous = w.rotation_speed.copy()
        w.rotation_speed[:] = np.where(rolling, y[3] / p.wheel_radius, free_spin)
        w.rotation_angle[:] += 0.5 * (previous + w.rotation_speed) * dt  # trapezoid: speed is smooth
        s.pose.translation[:], s.pose.rotation[:] = pose_arrays(g, p, b.pos, b.pitch, w.suspension_length,
                                                                w.rotation_angle)
        s.pose.lights[:] = light_controls(p, cmd)
        return True


class Motorcycle:
    """An in-plane motorcycle model: ``bike = Motorcycle("scooter"); bike.commands.front_brake = 0.5;
    bike.step(0.01)``. ``params`` may be a preset name or :class:`MotorcycleParams`."""

    def __init__(self, params: MotorcycleParams | str = "sports_bike",
                 context: SimulationContext | None = None) -> None:
        p = motorcycle_preset(params) if isinstance(params, str) else params
        p.validate()
        self._params = p
        self.context = context if context is not None else SimulationContext()
        self.states = MotorcycleStates()
        self.sequence = ComponentSequence()
        self.sequence.add(MotorcycleComponent(self), "motorcycle")
        self.time = 0.0
        self.place(0.0)

    @property
    def params(self) -> MotorcycleParams:
        """The bike's params; assign validated new ones to change them."""
        return self._params

    @params.setter
    def params(self, value: MotorcycleParams) -> None:
        value.validate()
        self._params = value

    @property
    def commands(self) -> MotorcycleCommands:
        """The rider's inputs (brakes, throttle, lights)."""
        return self.states.commands

    def place(self, speed: float = 0.0) -> None:
        """Put the bike at its design pose (static equilibrium) at the origin, rolling forwards at
        ``speed`` (m/s), and refresh the wheel and pose states (no time passes)."""
        b = self.states.body
        p = self._params
        b.pos[:] = (0.0, 0.0, -p.cg_height)
        b.pitch = 0.0
        b.velocity[:] = (speed, 0.0, 0.0)
        b.pitch_rate = 0.0
        b.acceleration[:] = 0.0
        w = self.states.wheels
        w.rotation_angle[:] = 0.0
        w.rotation_speed[:] = speed / p.wheel_radius
        component = self.sequence.get("motorcycle")
        assert isinstance(component, MotorcycleComponent)
        g = component.geometry()
        _, f = derivatives(p, g, np.array([0.0, -p.cg_height, 0.0, speed, 0.0, 0.0]), self.states.commands)
        w.suspension_length[:] = f.suspension_length
        w.compression[:] = f.compression
        w.suspension_force[:] = f.suspension_force
        w.normal_force[:] = f.normal_force
        w.in_contact[:] = f.in_contact
        self.states.pose.translation[:], self.states.pose.rotation[:] = pose_arrays(
            g, p, b.pos, b.pitch, w.suspension_length, w.rotation_angle)
        self.states.pose.lights[:] = light_controls(p, self.states.commands)

    def step(self, dt: float) -> bool:
        """Advance by ``dt`` (s, > 0) with the current commands."""
        if not dt > 0.0:
            raise ValueError(f"Motorcycle.step: dt must be greater than zero, got {dt!r}")
        ok = self.sequence.update(dt, self.context)
        self.time += dt
        return ok

    @property
    def forward_speed(self) -> float:
        """Velocity along X (m/s)."""
        return float(self.states.body.velocity[0])


# --------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MotorcycleScenario:
    """A rider schedule: ``initial_speed`` (m/s), ``duration`` (s) and ``drive(bike, t)`` setting the
    commands for the step starting at scenario time ``t``."""

    name: str
    description: str
    duration: float
    initial_speed: float
    drive: Callable[[Motorcycle, float], None]

    def run(self, bike: Motorcycle, dt: float, duration: float | None = None,
            after_step: Callable[[int], None] | None = None) -> int:
        """Place ``bike`` at the initial speed and step it; returns the number of steps."""
        total = self.duration if duration is None else float(duration)
        if not dt > 0.0 or not total > 0.0:
            raise ValueError(f"motorcycle scenario {self.name!r}: dt and duration must be > 0")
        steps = max(1, int(round(total / dt)))
        bike.place(self.initial_speed)
        for i in range(steps):
            self.drive(bike, i * dt)
            bike.step(dt)
            if after_step is not None:
                after_step(i)
        return steps


#: Brake test: coast for ``BRAKE_START`` s, squeeze both brakes to their levels over
#: ``BRAKE_RAMP`` s, hold until the bike stops, then release.
BRAKE_START = 0.5
BRAKE_RAMP = 0.2
BRAKE_LEVELS = (0.45, 0.15)


def _brake_test(bike: Motorcycle, t: float) -> None:
    c = bike.commands
    c.throttle = 0.0
    c.low_beam = True
    stopped = bike.forward_speed < STOP_SPEED and t > BRAKE_START
    if t < BRAKE_START or stopped:
        level = 0.0
    else:
        level = min(1.0, (t - BRAKE_START) / BRAKE_RAMP)
    c.front_brake = BRAKE_LEVELS[0] * level
    c.rear_brake = BRAKE_LEVELS[1] * level
    c.right_indicator = stopped  # pulling over once stopped


def _accelerate(bike: Motorcycle, t: float) -> None:
    c = bike.commands
    c.front_brake = c.rear_brake = 0.0
    c.throttle = min(1.0, t / 0.5)
    c.low_beam = True


#: Motorcycle scenarios by name.
MOTORCYCLE_SCENARIOS: dict[str, MotorcycleScenario] = {s.name: s for s in (
    MotorcycleScenario("brake-test", "from 25 m/s: coast 0.5 s, front brake to 45 % and rear to 15 % over "
                       "0.2 s until stopped, then release", 6.0, 25.0, _brake_test),
    MotorcycleScenario("accelerate", "from rest: throttle ramps to full over 0.5 s", 5.0, 0.0, _accelerate),
)}


def get_motorcycle_scenario(name: str) -> MotorcycleScenario:
    """The scenario called ``name``; ``ValueError`` listing the names if unknown."""
    try:
        return MOTORCYCLE_SCENARIOS[name]
    except KeyError:
        raise ValueError(f"unknown motorcycle scenario {name!r}; available: "
                         f"{', '.join(MOTORCYCLE_SCENARIOS)}") from None


@dataclass(frozen=True)
class MotorcycleTrace:
    """Samples after every step (index k = after step k+1): time (n,), translation (n, 4, 3),
    rotation (n, 4, 3), lights (n, 5), speed (n,), acceleration_x (n,), pitch (n,), normal_force
    (n, 2), longitudinal_force (n, 2), compression (n, 2), front_brake (n,), rear_brake (n,),
    locked (n, 2)."""

    time: np.ndarray
    translation: np.ndarray
    rotation: np.ndarray
    lights: np.ndarray
    speed: np.ndarray
    acceleration_x: np.ndarray
    pitch: np.ndarray
    normal_force: np.ndarray
    longitudinal_force: np.ndarray
    compression: np.ndarray
    front_brake: np.ndarray
    rear_brake: np.ndarray
    locked: np.ndarray


def run_scenario(bike: Motorcycle | str, scenario: str = "brake-test", dt: float = 0.01,
                 duration: float | None = None,
                 after_step: Callable[[int], None] | None = None) -> tuple[Motorcycle, MotorcycleTrace]:
    """Run a scenario on ``bike`` (a :class:`Motorcycle` or a preset name) and sample every step."""
    model = Motorcycle(bike) if isinstance(bike, str) else bike
    sc = get_motorcycle_scenario(scenario)
    rows: list[tuple] = []

    def sample(i: int) -> None:
        s = model.states
        rows.append((s.body.time, s.pose.translation.copy(), s.pose.rotation.copy(), s.pose.lights.copy(),
                     s.body.velocity[0], s.body.acceleration[0], s.body.pitch, s.wheels.normal_force.copy(),
                     s.wheels.longitudinal_force.copy(), s.wheels.compression.copy(), s.commands.front_brake,
                     s.commands.rear_brake, s.wheels.locked.copy()))
        if after_step is not None:
            after_step(i)

    sc.run(model, dt, duration, sample)
    cols = list(zip(*rows, strict=True))
    trace = MotorcycleTrace(*(np.array(c) for c in cols))
    if not math.isfinite(float(trace.speed[-1])):
        raise FloatingPointError(f"motorcycle scenario {scenario!r} diverged (dt={dt})")
    return model, trace
