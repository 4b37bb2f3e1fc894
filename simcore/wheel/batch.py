"""Batched wheel component: rotation angle and wheel local pose of a whole fleet, one kernel call.

The batch counterpart of :class:`~simcore.wheel.components.WheelComponent`. The angle update
mirrors :func:`simcore.wheel.functions.wheel_rotation_angle_update` operation by operation and the
pose is the compiled wheel-pose chain of :func:`simcore.suspension._fast.wheel_pose` (the one the
reference :func:`~simcore.wheel.helpers.compute_wheel_local_pose` computes), with the identity
body pose.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pvdkit.jit import njit
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.suspension._fast import G_RADIUS, frame_axes, pack_geometry, wheel_pose

_JIT = {"cache": True, "nogil": True}
_TWO_PI = 2.0 * np.pi
_ORIGIN = np.zeros(3)
_IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


@njit(**_JIT)
def _k_wheel(
    geometry, axes, signs, origin, identity, threshold, dt, is_brake_applied, is_drive_applied, jounce,
    speed_states, steer, toe, camber, rotation_speed, corrected_rotation_speed, rotation_angle, pos, quat,
):  # pragma: no cover - compiled
    """Low-speed blended angle advance (wrapped by whole turns), then the local pose of each wheel."""
    two_pi = _TWO_PI
    for v in range(rotation_speed.shape[0]):
        g = geometry[v]
        for w in range(rotation_speed.shape[1]):
            omega = rotation_speed[v, w]
            lng_speed = speed_states[v, w, 0]
            abs_v = abs(lng_speed)
            corrected = omega
            if threshold > 0.0:
                if (jounce[v, w] > 0.0 and not is_brake_applied[v, w] and not is_drive_applied[v, w]
                        and abs_v < threshold):
                    alpha = abs_v / threshold
                    corrected = (lng_speed / g[w, G_RADIUS]) * (1.0 - alpha) + omega * alpha
            angle = rotation_angle[v, w] + corrected * dt
            angle = angle - np.trunc(angle / two_pi) * two_pi
            corrected_rotation_speed[v, w] = corrected
            rotation_angle[v, w] = angle
            yaw = steer[v, w] + toe[v, w]
            px, py, pz, qx, qy, qz, qw = wheel_pose(
                axes, signs, g, w, jounce[v, w], camber[v, w], yaw, angle, origin, identity
            )
            pos[v, w, 0], pos[v, w, 1], pos[v, w, 2] = px, py, pz
            quat[v, w, 0], quat[v, w, 1], quat[v, w, 2], quat[v, w, 3] = qx, qy, qz, qw


class WheelBatchComponent(Component):
    """Wheel rotation angle (low-speed blending) and wheel local pose for every vehicle.

    Reads ``params.wheel`` (radius), ``params.suspension``; ``steer_command_response``,
    ``wheel_actuation``, ``suspension`` (jounce), ``suspension_compliance`` (camber, toe),
    ``tire_speed`` (longitudinal speed) and ``wheel_rigid_body_1d`` (rotation speed). Writes
    ``wheel_rigid_body_1d`` (corrected rotation speed, rotation angle) and ``wheel_local_pose``.
    """

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        s = fleet.states
        self._is_brake_applied = s.wheel_actuation.arrays["is_brake_applied"]
        self._is_drive_applied = s.wheel_actuation.arrays["is_drive_applied"]
        self._jounce = s.suspension.arrays["jounce"]
        self._speed_states = s.tire_speed.arrays["speed_states"]
        steer = s.get("steer_command_response")
        self._steer = (steer.arrays["response"] if steer is not None
                       else np.zeros((fleet.n_vehicles, fleet.nb_wheels)))
        self._toe = s.suspension_compliance.arrays["toe"]
        self._camber = s.suspension_compliance.arrays["camber"]
        body = s.wheel_rigid_body_1d.arrays
        self._rotation_speed = body["rotation_speed"]
        self._corrected = body["corrected_rotation_speed"]
        self._angle = body["rotation_angle"]
        self._pos = s.wheel_local_pose.arrays["pos"]
        self._quat = s.wheel_local_pose.arrays["quat"]
        self.repack()

    def repack(self) -> None:
        """Pack each vehicle's suspension geometry and wheel radii, (n, nb_wheels, GEOM_WIDTH)."""
        self.geometry = np.stack([pack_geometry(p.wheel, p.suspension) for p in self.fleet.params])
        self.axes, self.signs = frame_axes(self.fleet.frame)

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_wheel(self.geometry, self.axes, self.signs, _ORIGIN, _IDENTITY,
                 float(context.threshold_forward_speed_for_wheel_angle_integration), float(dt),
                 self._is_brake_applied, self._is_drive_applied, self._jounce, self._speed_states,
                 self._steer, self._toe, self._camber, self._rotation_speed, self._corrected, self._angle,
                 self._pos, self._quat)
        return True


__all__ = ["WheelBatchComponent"]
