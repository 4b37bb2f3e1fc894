"""Direct drive (Vehicle2's direct drivetrain): a torque per wheel straight from the throttle.

No engine, gearbox or clutch: ``drive torque = gear sign * response(throttle, speed)``, with
forward/neutral/reverse giving +1/0/-1 (``PxVehicleDirectDriveThrottleCommandResponseUpdate``).
Each wheel's spin is integrated from drive, brake and tire torques with implicit damping and a
brake lock (``PxVehicleDirectDriveUpdate``):

    w' = (w + dt/I (T_tire + T_drive - T_brake sign(w))) / (1 + c dt / I)

and ``w' = 0`` if a brake is applied and ``w * w' <= 0`` (the brake would reverse the spin).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from simcore.braking.functions import brake_command_response_update
from simcore.braking.params import BrakeCommandResponseParams
from simcore.commands.functions import nonlinear_response
from simcore.commands.params import CommandResponseParams
from simcore.commands.states import DirectDriveGear
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.steering.functions import ackermann_steer_update, steer_command_response_update
from simcore.steering.params import AckermannParams, SteerCommandResponseParams
from simcore.wheel.functions import (
    apply_brake_lock,
    brake_torque_opposing_spin,
    wheel_rotation_speed_damped_update,
)
from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState, WheelRigidBody1dState

if TYPE_CHECKING:
    from simcore.vehicle import Vehicle

_GEAR_SIGN = {int(DirectDriveGear.REVERSE): -1.0, int(DirectDriveGear.NEUTRAL): 0.0,
              int(DirectDriveGear.FORWARD): 1.0}


@dataclass(frozen=True, eq=False)
class DirectDriveThrottleCommandResponseParams(CommandResponseParams):
    """Drive torque per wheel at full throttle: ``max_response * wheel_response_multipliers[wheel]``.

    max_response: finite, torque (``mass * length^2 / time^2``). Multipliers (n,): finite. The
    optional nonlinear table shapes the response with command and speed.
    """

    _LENGTH_POWER = 2


def gear_sign(gear: int) -> float:
    """+1 forward, 0 neutral, -1 reverse; ``ValueError`` for anything else."""
    try:
        return _GEAR_SIGN[int(gear)]
    except KeyError:
        raise ValueError(
            f"direct drive gear must be REVERSE (0), NEUTRAL (1) or FORWARD (2), got {gear!r}"
        ) from None


def direct_drive_throttle_command_response_update(
    throttle: float, gear: int, longitudinal_speed: float, params: DirectDriveThrottleCommandResponseParams
) -> np.ndarray:
    """Drive torque per wheel (n,) for the throttle in the given gear."""
    sign = gear_sign(gear)
    if sign == 0.0:
        return np.zeros(params.nb_wheels)
    return sign * nonlinear_response(throttle, longitudinal_speed, params)


def direct_drive_actuation_state_update(
    brake_torque: np.ndarray, drive_torque: np.ndarray, out: WheelActuationState
) -> WheelActuationState:
    """Flag wheels with a non-zero brake or drive torque (``PxVehicleDirectDriveActuationStateUpdate``)."""
    out.is_brake_applied[:] = brake_torque != 0.0
    out.is_drive_applied[:] = drive_torque != 0.0
    return out


def direct_drive_update(
    wheel: WheelParams,
    actuation: WheelActuationState,
    brake_torque: np.ndarray,
    drive_torque: np.ndarray,
    tire_wheel_torque: np.ndarray,
    dt: float,
    state: WheelRigidBody1dState,
) -> WheelRigidBody1dState:
    """Integrate every wheel's spin over ``dt`` (``PxVehicleDirectDriveUpdate``), in place.

    Torques (n,) in ``mass * length^2 / time^2``: ``brake_torque`` >= 0 (opposes the spin),
    ``drive_torque`` signed, ``tire_wheel_torque`` the tire's reaction. Returns ``state``.
    """
    w = state.rotation_speed
    torque = tire_wheel_torque + drive_torque + brake_torque_opposing_spin(brake_torque, w)
    new = wheel_rotation_speed_damped_update(wheel.moi, wheel.damping_rate, w, torque, dt)
    state.rotation_speed[:] = apply_brake_lock(w, new, actuation.is_brake_applied)
    return state


def direct_drive_command_response_update(
    commands_brakes: np.ndarray,
    nb_brakes: int,
    throttle: float,
    steer: float,
    gear: int,
    longitudinal_speed: float,
    brake_params: Sequence[BrakeCommandResponseParams],
    throttle_params: DirectDriveThrottleCommandResponseParams,
    steer_params: SteerCommandResponseParams,
    ackermann_params: Sequence[AckermannParams],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Brake torques, drive torques and steer angles per wheel, each (n,)
    (``PxVehicleDirectDriveCommandResponseComponent::update``)."""
    brake = brake_command_response_update(commands_brakes, nb_brakes, longitudinal_speed, brake_params)
    drive = direct_drive_throttle_command_response_update(throttle, gear, longitudinal_speed, throttle_params)
    steer_angles = steer_command_response_update(steer, longitudinal_speed, steer_params)
    if ackermann_params:
        ackermann_steer_update(steer, steer_params, ackermann_params, steer_angles)
    return brake, drive, steer_angles


# --- components ------------------------------------------------------------------------------


class DirectDriveCommandResponseComponent(Component):
    """Commands -> per-wheel brake torque, drive torque and steer angle (with Ackermann).

    Reads ``states.commands``, ``states.direct_drive_transmission``, ``states.rigid_body`` (forward
    speed) and the brake/throttle/steer/Ackermann params; writes
    ``states.brake_command_response``, ``states.direct_drive_throttle_response``,
    ``states.steer_command_response``.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        c = s.commands
        speed = s.rigid_body.longitudinal_speed(context.frame)
        brake, drive, steer = direct_drive_command_response_update(
            c.brakes, c.nb_brakes, c.throttle, c.steer, s.direct_drive_transmission.gear, speed,
            p.brake_command_response, p.direct_drive_throttle_response, p.steer_command_response, p.ackermann,
        )
        s.brake_command_response.response[:] = brake
        s.direct_drive_throttle_response.response[:] = drive
        s.steer_command_response.response[:] = steer
        return True


class DirectDriveActuationStateComponent(Component):
    """Which wheels have brake / drive torque (``PxVehicleDirectDriveActuationStateComponent``).

    Reads the brake and throttle responses; writes ``states.wheel_actuation``.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        s = self.vehicle.states
        direct_drive_actuation_state_update(s.brake_command_response.response,
                                            s.direct_drive_throttle_response.response, s.wheel_actuation)
        return True


class DirectDrivetrainComponent(Component):
    """Integrates the wheel spins (``PxVehicleDirectDrivetrainComponent``).

    Reads ``params.wheel``, the brake and throttle responses, ``states.wheel_actuation`` and
    ``states.tire_force.wheel_torque``; writes ``states.wheel_rigid_body_1d.rotation_speed``.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        direct_drive_update(p.wheel, s.wheel_actuation, s.brake_command_response.response,
                            s.direct_drive_throttle_response.response, s.tire_force.wheel_torque, dt,
                            s.wheel_rigid_body_1d)
        return True
