"""Wheel functions (``VhWheelFunctions.cpp``): rotation angle, local pose, and the damped spin update.

The rotation *speed* of the wheels is integrated by the drivetrain (direct drive in
``simcore.drivetrain.direct_drive``, engine drive in the engine-drive solver) because drive, brake
and tire torques meet there. :func:`wheel_rotation_speed_damped_update` and
:func:`apply_brake_lock` are the per-wheel pieces of Vehicle2's direct-drive wheel update, offered
so both drivetrains can share them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simcore.frame import Frame
from simcore.wheel.helpers import compute_wheel_local_pose
from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState, WheelLocalPoseState, WheelRigidBody1dState

if TYPE_CHECKING:
    from simcore.suspension.params import SuspensionParams

_TWO_PI = 2.0 * np.pi


def wheel_rotation_angle_update(
    wheel: WheelParams,
    actuation: WheelActuationState,
    jounce: np.ndarray,
    lng_speed: np.ndarray,
    threshold_forward_speed: float,
    dt: float,
    state: WheelRigidBody1dState,
) -> WheelRigidBody1dState:
    """Advance the rotation angle; store the speed used as ``corrected_rotation_speed``
    (``PxVehicleWheelRotationAngleUpdate``).

    At low forward speed the tire model can make the spin oscillate, so for a wheel that touches
    the ground (``jounce > 0``), has neither brake nor drive applied and whose tire longitudinal
    speed ``|v|`` is below ``threshold_forward_speed``, the speed used is the blend
    ``(v / radius) (1 - a) + rotation_speed a`` with ``a = |v| / threshold``. The angle is then wrapped
    into (-2 pi, 2 pi) by removing whole turns (truncation towards zero, as Vehicle2 does).
    ``rotation_speed`` is copied unchanged.
    """
    jounce = np.asarray(jounce, dtype=np.float64)
    lng_speed = np.asarray(lng_speed, dtype=np.float64)
    omega = state.rotation_speed
    abs_v = np.abs(lng_speed)
    blend = (
        (jounce > 0.0)
        & ~actuation.is_brake_applied
        & ~actuation.is_drive_applied
        & (abs_v < threshold_forward_speed)
    )
    if threshold_forward_speed > 0.0:
        alpha = abs_v / threshold_forward_speed
        blended = (lng_speed / wheel.radius) * (1.0 - alpha) + omega * alpha
        corrected = np.where(blend, blended, omega)
    else:
        corrected = omega.copy()
    angle = state.rotation_angle + corrected * dt
    angle = angle - np.trunc(angle / _TWO_PI) * _TWO_PI
    return WheelRigidBody1dState(
        rotation_speed=omega.copy(), corrected_rotation_speed=corrected, rotation_angle=angle
    )


def wheel_local_pose_update(
    frame: Frame,
    suspension: SuspensionParams,
    jounce: np.ndarray,
    camber: np.ndarray,
    toe: np.ndarray,
    steer: np.ndarray,
    rotation_angle: np.ndarray,
) -> WheelLocalPoseState:
    """Wheel poses in the rigid body frame from jounce, compliance, steer and rotation
    (``PxVehicleComputeWheelLocalPose``); see :mod:`simcore.wheel.helpers` for the frame chain."""
    pos, quat = compute_wheel_local_pose(frame, suspension, jounce, camber, toe, steer, rotation_angle)
    return WheelLocalPoseState(pos=pos, quat=quat)


def wheel_rotation_speed_damped_update(
    moi: np.ndarray, damping_rate: np.ndarray, rotation_speed: np.ndarray, torque: np.ndarray, dt: float
) -> np.ndarray:
    """One step of ``I dw/dt = torque - c w`` with the damping taken implicitly (Vehicle2's scheme).

    ``w' = (w + dt/I * torque) / (1 + c dt / I)`` — explicit in the applied ``torque`` (drive + brake +
    tire, ``mass * length^2 / time^2``), implicit in the damping, so any damping rate decays the spin
    monotonically: with no torque, ``w_k = w_0 / (1 + c dt / I)^k``. Shapes (n,).
    """
    dt_over_moi = dt / np.asarray(moi, dtype=np.float64)
    return (
        np.asarray(rotation_speed, dtype=np.float64) + dt_over_moi * np.asarray(torque, dtype=np.float64)
    ) / (1.0 + np.asarray(damping_rate, dtype=np.float64) * dt_over_moi)


def brake_torque_opposing_spin(brake_torque: np.ndarray, rotation_speed: np.ndarray) -> np.ndarray:
    """The brake torque as applied: ``-|brake| sign(w)`` (zero on a wheel at rest), as Vehicle2 does."""
    return -np.asarray(brake_torque, dtype=np.float64) * np.sign(np.asarray(rotation_speed, dtype=np.float64))


def apply_brake_lock(
    previous_speed: np.ndarray, new_speed: np.ndarray, is_brake_applied: np.ndarray
) -> np.ndarray:
    """Lock braked wheels whose spin would reverse or stop: zero where ``brake and w_prev * w_new <= 0``.

    Without this the explicit brake torque would make a braked wheel chatter around zero speed.
    """
    prev = np.asarray(previous_speed, dtype=np.float64)
    new = np.asarray(new_speed, dtype=np.float64)
    return np.where(np.asarray(is_brake_applied, dtype=bool) & (prev * new <= 0.0), 0.0, new)
