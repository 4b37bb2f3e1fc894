"""Re-simulate a PhysX recording in simcore and measure where the two part.

Each recorded vehicle becomes a simcore vehicle with the PhysX actor layer on (the chassis as
PhysX's rigid actor, the rows solved once per step by the scene, Omni PhysX's substep rule, the
recorded sticky-tire damping), on the recorded ground, under the recorded gravity. Two modes:

* ``open-loop``: start from the recorded state before ``from_step`` and drive with the recorded
  commands only — how far simcore's trajectory stays on PhysX's;
* ``one-step``: before every step set simcore's whole state (Vehicle2 states and the actor) to the
  recorded one (teacher forcing) — the equations alone, free of drift.

A vehicle without drivetrain commands (kind ``raw``) is driven by its recorded per-wheel brake and
drive torques and steer angles in place of the command-response component.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from simcore.component import Component
from simcore.context import SimulationContext, TireAxisStickyParams, TireStickyParams
from simcore.fleet.fleet import Fleet
from simcore.physx_actor import PhysXActorParams, SubstepRule
from simcore.physx_actor.params import PhysXActorUpdateMode
from simcore.replay.recorded import RecordedRun, RecordedVehicle, RecordingError
from simcore.vehicle import default_context

MODES = ("open-loop", "one-step")

#: Quantities compared per vehicle (see :func:`quantity_series`).
QUANTITIES = ("wheel_speed", "engine_speed", "jounce", "tire_force", "chassis_speed", "chassis_position")


@dataclass
class ReplayVehicle:
    """A recorded vehicle and the simcore fleet-of-one that re-simulates it."""

    recorded: RecordedVehicle
    fleet: Fleet
    #: step -> simulated quantity arrays, filled by :func:`replay`.
    simulated: dict[str, list[np.ndarray]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.recorded.name

    @property
    def vehicle(self) -> Any:
        return self.fleet[0]


def actor_params(rv: RecordedVehicle) -> PhysXActorParams:
    """The recorded chassis actor as simcore's :class:`~simcore.physx_actor.PhysXActorParams`."""
    a = rv.actor
    return PhysXActorParams(
        cmass_local_pos=a.cmass_local_pos, cmass_local_quat=a.cmass_local_quat,
        linear_damping=a.linear_damping, angular_damping=a.angular_damping,
        max_linear_velocity=a.max_linear_velocity, max_angular_velocity=a.max_angular_velocity,
        gyroscopic=a.gyroscopic, sleep_threshold=a.sleep_threshold, wake_counter_reset=a.wake_counter_reset,
        position_iterations=a.position_iterations, velocity_iterations=a.velocity_iterations,
        update_mode=PhysXActorUpdateMode.APPLY_VELOCITY)


def replay_context(run: RecordedRun, rv: RecordedVehicle) -> SimulationContext:
    """Gravity and frame of the recorded scene, the recorded sticky damping, Omni PhysX's
    substep rule; everything else Vehicle2's defaults (PhysX does not record them)."""
    base = default_context(run.scene.frame)
    sticky = base.tire_sticky_params
    lng, lat = rv.sticky_damping
    return replace(base, gravity=np.asarray(run.scene.gravity, dtype=np.float64),
                   tire_sticky_params=TireStickyParams(
                       TireAxisStickyParams(sticky.longitudinal.threshold_speed,
                                            sticky.longitudinal.threshold_time, lng),
                       TireAxisStickyParams(sticky.lateral.threshold_speed,
                                            sticky.lateral.threshold_time, lat)),
                   substep_rule=SubstepRule())


class RecordedResponses(Component):
    """In place of ``command_response`` for a vehicle without drivetrain commands: each step's
    recorded per-wheel brake torque, drive torque and steer angle."""

    def __init__(self, vehicle: Any, responses: dict[str, np.ndarray]) -> None:
        self.vehicle = vehicle
        self.responses = responses
        self.step = 0

    def update(self, dt: float, context: SimulationContext) -> bool:
        s, i = self.vehicle.states, self.step
        s.brake_command_response.response = self.responses["brake"][i]
        s.steer_command_response.response = self.responses["steer"][i]
        s.direct_drive_throttle_response.response = self.responses["drive"][i]
        return True


def with_scene_overrides(run: RecordedRun, gravity: Sequence[float] | None = None,
                         friction: float | None = None) -> RecordedRun:
    """``run`` with the recorded gravity (a world vector) or ground friction replaced: to ask
    what PhysX's vehicles would have done on another surface or planet."""
    scene = run.scene
    if gravity is not None:
        g = np.asarray(gravity, dtype=np.float64)
        if g.shape != (3,) or not np.isfinite(g).all():
            raise RecordingError(f"--gravity must be three finite numbers X,Y,Z, got {gravity!r}")
        scene = replace(scene, gravity=g)
    if friction is not None:
        if not (np.isfinite(friction) and friction >= 0.0):
            raise RecordingError(f"--friction must be a finite number >= 0, got {friction!r}")
        road = scene.road
        scene = replace(scene, road=type(road)(road.normal, road.d, friction=float(friction)))
    return replace(run, scene=scene)


def build(run: RecordedRun, names: Sequence[str] | None = None) -> list[ReplayVehicle]:
    """A simcore vehicle (a fleet of one, named as recorded) for each recorded vehicle."""
    chosen = run.vehicles if names is None else [run.vehicle(n) for n in names]
    out = []
    for rv in chosen:
        params = rv.params.replace(physx_actor=actor_params(rv),
                                   suspension_limit_constraint=rv.suspension_limit)
        fleet = Fleet([params], run.scene.road, replay_context(run, rv), names=[rv.name])
        out.append(ReplayVehicle(rv, fleet))
    return out


def _assign(states: Any, values: dict[str, dict[str, np.ndarray]]) -> None:
    for name, fields in values.items():
        target = getattr(states, name, None)
        if target is None:
            continue
        for f, value in fields.items():
            setattr(target, f, value)


def _set_actor(rv: RecordedVehicle, states: Any, step: int) -> None:
    """The actor as PhysX left it before ``step`` (the recorded result of ``step - 1``)."""
    actor = states.physx_actor
    if step == 0:
        pose = rv.initial_pose
        actor.pos, actor.quat = pose[4:], pose[:4]
        actor.linear_velocity = rv.states["rigid_body"]["previous_linear_velocity"][0]
        actor.angular_velocity = rv.states["rigid_body"]["previous_angular_velocity"][0]
    else:
        actor.pos, actor.quat, actor.linear_velocity, actor.angular_velocity = rv.actor_at(step - 1)
    actor.is_sleeping = False
    actor.wake_counter = rv.actor.wake_counter_reset


def _set_state(rv: RecordedVehicle, vehicle: Any, step: int) -> None:
    """simcore's state = PhysX's before ``step``: the Vehicle2 states after step - 1 and the actor."""
    if step > 0:
        _assign(vehicle.states, rv.states_at(step - 1))
        steer = rv.states.get("commands", {}).get("steer")
        previous = float(steer[step - 1]) if steer is not None else float("nan")
        vehicle.states.physx_actor.previous_steer = previous
    _set_actor(rv, vehicle.states, step)


def _set_commands(rv: RecordedVehicle, vehicle: Any, step: int) -> None:
    _assign(vehicle.states, {name: {f: a[step] for f, a in fields.items()}
                             for name, fields in rv.commands.items()})


def quantity_series(states: Any) -> dict[str, np.ndarray]:
    """The compared quantities of one simcore vehicle after a step (copies)."""
    out = {
        "wheel_speed": np.array(states.wheel_rigid_body_1d.rotation_speed, dtype=np.float64),
        "jounce": np.array(states.suspension.jounce, dtype=np.float64),
        "tire_force": np.array(states.tire_force.forces, dtype=np.float64).reshape(-1),
        "chassis_speed": np.array([np.linalg.norm(states.physx_actor.linear_velocity)]),
        "chassis_position": np.array(states.physx_actor.pos, dtype=np.float64),
        "sticky": np.array(states.tire_sticky.active_status, dtype=bool).reshape(-1),
    }
    if states.engine is not None:
        out["engine_speed"] = np.array([float(states.engine.rotation_speed)])
        out["gear"] = np.array([int(states.gearbox.current_gear)])
    return out


def recorded_series(rv: RecordedVehicle) -> dict[str, np.ndarray]:
    """The same quantities as recorded by PhysX, (steps, k) arrays."""
    s = rv.states
    n = rv.nb_steps
    out = {
        "wheel_speed": s["wheel_rigid_body_1d"]["rotation_speed"],
        "jounce": s["suspension"]["jounce"],
        "tire_force": s["tire_force"]["forces"].reshape(n, -1),
        "chassis_speed": np.linalg.norm(rv.actor_linvel, axis=1)[:, None],
        "chassis_position": rv.actor_pos,
        "sticky": s["tire_sticky"]["active_status"].reshape(n, -1),
    }
    if "engine" in s:
        out["engine_speed"] = np.asarray(s["engine"]["rotation_speed"], dtype=np.float64).reshape(n, 1)
        out["gear"] = np.asarray(s["gearbox"]["current_gear"]).reshape(n, 1)
    return out


def replay(run: RecordedRun, mode: str = "open-loop", from_step: int = 0, names: Sequence[str] | None = None,
           after_step: Callable[[int, list[ReplayVehicle]], None] | None = None,
           vehicles: list[ReplayVehicle] | None = None,
           around_step: Callable[[], AbstractContextManager[Any]] = nullcontext) -> list[ReplayVehicle]:
    """Re-simulate ``run`` (see the module docstring); returns the vehicles with their simulated
    quantities per step (``simulated[q]`` has one entry per step from ``from_step``).
    ``around_step()`` wraps each step of all vehicles (a recorder's ``frame``: one frame per step)."""
    if mode not in MODES:
        raise RecordingError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    n = run.scene.nb_steps
    if not 0 <= from_step < n:
        raise RecordingError(f"--from {from_step} is outside the recording's steps 0..{n - 1}")
    todo = vehicles if vehicles is not None else build(run, names)
    dt = run.scene.dt
    for rep in todo:
        rv, v = rep.recorded, rep.vehicle
        if rv.kind == "raw":
            rep.responses = RecordedResponses(v, rv.responses)
            rep.fleet.sequence.replace("command_response", rep.responses)
        _set_state(rv, v, from_step)
        rep.simulated = {}
    for step in range(from_step, n):
        with around_step():
            for rep in todo:
                rv, v = rep.recorded, rep.vehicle
                if mode == "one-step" and step > from_step:
                    _set_state(rv, v, step)
                _set_commands(rv, v, step)
                if rv.kind == "raw":
                    rep.responses.step = step
                rep.fleet.step(dt)
                for q, value in quantity_series(v.states).items():
                    rep.simulated.setdefault(q, []).append(value)
        if after_step is not None:
            after_step(step, todo)
    return todo
