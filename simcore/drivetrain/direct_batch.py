"""Batched direct drive: command responses, actuation flags and wheel spin of a whole fleet.

The batch counterparts of :class:`~simcore.drivetrain.direct_drive.DirectDriveCommandResponseComponent`,
:class:`~simcore.drivetrain.direct_drive.DirectDriveActuationStateComponent` and
:class:`~simcore.drivetrain.direct_drive.DirectDrivetrainComponent`: each update is one compiled
kernel over (vehicle, wheel) whose arithmetic mirrors the plain functions of
:mod:`simcore.drivetrain.direct_drive` operation by operation, so a fleet member's states equal
those of the same vehicle stepped alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pvdkit.jit import njit
from simcore.commands.batch import (
    RF_MAX,
    RF_MULT,
    brake_steer_response,
    longitudinal_speed,
    normalised_response,
    pack_command_responses,
    speed_axis,
)
from simcore.commands.states import DirectDriveGear
from simcore.component import Component
from simcore.context import SimulationContext

_JIT = {"cache": True, "nogil": True}

#: Channel of the throttle response after the brake, handbrake and steer channels.
THROTTLE = 3
_REVERSE = int(DirectDriveGear.REVERSE)
_NEUTRAL = int(DirectDriveGear.NEUTRAL)
_FORWARD = int(DirectDriveGear.FORWARD)

# Columns of the packed wheel params (n, nb_wheels, 2) of the drivetrain.
_W_MOI, _W_DAMPING = 0, 1


def _throttle_params(p: Any) -> Any:
    if p.direct_drive_throttle_response is None:
        raise ValueError("direct-drive batch: a vehicle has no direct_drive_throttle_response "
                         "(a batch shares one drivetrain kind)")
    return p.direct_drive_throttle_response


@njit(**_JIT)
def _k_command_response(resp_f, resp_i, ack, axis, lin_vel, quat, brakes, nb_brakes, steer, throttle, gear,
                        brake_out, steer_out, drive_out):  # pragma: no cover - compiled
    """Brake, steer (with Ackermann) and direct-drive throttle responses of every vehicle."""
    nb_wheels = drive_out.shape[1]
    for v in range(drive_out.shape[0]):
        speed = longitudinal_speed(axis, lin_vel, quat, v)
        brake_steer_response(v, resp_f, resp_i, ack, speed, brakes, nb_brakes, steer, brake_out, steer_out)
        g = gear[v]
        if g == _FORWARD:
            sign = 1.0
        elif g == _NEUTRAL:
            sign = 0.0
        elif g == _REVERSE:
            sign = -1.0
        else:
            raise ValueError("direct drive gear must be REVERSE (0), NEUTRAL (1) or FORWARD (2)")
        if sign == 0.0:
            for w in range(nb_wheels):
                drive_out[v, w] = 0.0
        else:
            scale = (normalised_response(resp_f, resp_i, v, np.int64(THROTTLE), throttle[v], speed)
                     * resp_f[v, THROTTLE, RF_MAX])
            for w in range(nb_wheels):
                drive_out[v, w] = sign * (scale * resp_f[v, THROTTLE, RF_MULT + w])


@njit(**_JIT)
def _k_actuation(brake, drive, is_brake_applied, is_drive_applied):  # pragma: no cover - compiled
    """A wheel is braked / driven when its brake / drive torque is non-zero."""
    for v in range(brake.shape[0]):
        for w in range(brake.shape[1]):
            is_brake_applied[v, w] = brake[v, w] != 0.0
            is_drive_applied[v, w] = drive[v, w] != 0.0


@njit(**_JIT)
def _k_drivetrain(
    wheel, is_brake_applied, brake, drive, tire_torque, dt, rotation_speed
):  # pragma: no cover - compiled
    """Implicitly damped spin update with the brake lock (``direct_drive_update``)."""
    for v in range(rotation_speed.shape[0]):
        for w in range(rotation_speed.shape[1]):
            omega = rotation_speed[v, w]
            torque = tire_torque[v, w] + drive[v, w] + -brake[v, w] * np.sign(omega)
            dt_over_moi = dt / wheel[v, w, _W_MOI]
            new = (omega + dt_over_moi * torque) / (1.0 + wheel[v, w, _W_DAMPING] * dt_over_moi)
            if is_brake_applied[v, w] and omega * new <= 0.0:
                new = 0.0
            rotation_speed[v, w] = new


class DirectDriveCommandResponseBatchComponent(Component):
    """Commands -> brake torque, drive torque and steer angle per wheel, for every vehicle.

    Reads ``commands``, ``direct_drive_transmission`` and ``rigid_body`` (forward speed); writes
    ``brake_command_response``, ``direct_drive_throttle_response`` and ``steer_command_response``.
    The brake/steer part is :func:`simcore.commands.batch.brake_steer_response`, inlined.
    """

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        s = fleet.states
        self._lin_vel = s.rigid_body.arrays["linear_velocity"]
        self._quat = s.rigid_body.arrays["quat"]
        c = s.commands.arrays
        self._brakes, self._nb_brakes = c["brakes"], c["nb_brakes"]
        self._steer, self._throttle = c["steer"], c["throttle"]
        self._gear = s.direct_drive_transmission.arrays["gear"]
        self._brake_out = s.brake_command_response.arrays["response"]
        self._steer_out = s.steer_command_response.arrays["response"]
        self._drive_out = s.direct_drive_throttle_response.arrays["response"]
        self.repack()

    def repack(self) -> None:
        """Pack brake, handbrake, steer, throttle (channels 0-3) and Ackermann params."""
        self.resp_f, self.resp_i, self.ack = pack_command_responses(
            self.fleet.params, self.fleet.nb_wheels, extra=(_throttle_params,))
        self.axis = speed_axis(self.fleet.frame)

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_command_response(self.resp_f, self.resp_i, self.ack, self.axis, self._lin_vel, self._quat,
                            self._brakes, self._nb_brakes, self._steer, self._throttle, self._gear,
                            self._brake_out, self._steer_out, self._drive_out)
        return True


class DirectDriveActuationBatchComponent(Component):
    """Which wheels have brake / drive torque, for every vehicle; writes ``wheel_actuation``."""

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        s = fleet.states
        self._brake = s.brake_command_response.arrays["response"]
        self._drive = s.direct_drive_throttle_response.arrays["response"]
        self._is_brake_applied = s.wheel_actuation.arrays["is_brake_applied"]
        self._is_drive_applied = s.wheel_actuation.arrays["is_drive_applied"]
        self.repack()

    def repack(self) -> None:
        """Nothing to pack: the flags depend on the responses only."""

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_actuation(self._brake, self._drive, self._is_brake_applied, self._is_drive_applied)
        return True


class DirectDrivetrainBatchComponent(Component):
    """Integrates every wheel's spin from tire, drive and brake torques (implicit damping, brake
    lock); writes ``wheel_rigid_body_1d.rotation_speed``."""

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        s = fleet.states
        self._is_brake_applied = s.wheel_actuation.arrays["is_brake_applied"]
        self._brake = s.brake_command_response.arrays["response"]
        self._drive = s.direct_drive_throttle_response.arrays["response"]
        self._tire_torque = s.tire_force.arrays["wheel_torque"]
        self._rotation_speed = s.wheel_rigid_body_1d.arrays["rotation_speed"]
        self.repack()

    def repack(self) -> None:
        """Pack each wheel's moment of inertia and damping rate, (n, nb_wheels, 2)."""
        self.wheel = np.stack([np.stack([p.wheel.moi, p.wheel.damping_rate], axis=-1)
                               for p in self.fleet.params]).astype(np.float64)

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_drivetrain(self.wheel, self._is_brake_applied, self._brake, self._drive, self._tire_torque,
                      float(dt), self._rotation_speed)
        return True


__all__ = [
    "DirectDriveActuationBatchComponent",
    "DirectDriveCommandResponseBatchComponent",
    "DirectDrivetrainBatchComponent",
]
