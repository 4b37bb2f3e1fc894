"""Wheel pose helpers (``PxVehicleWheelHelpers.h``, ``PxVehicleComputeRotation``).

The wheel frame chain, in the rigid body frame, is::

    [suspension attachment moved along the travel direction by (travel_dist - jounce)]
      * rotation(camber about lng, steer + toe about vrt)
      * wheel attachment
      * rotation(rotation_angle about lat)

Every function is vectorised over wheels: per-wheel inputs have a leading wheel axis, the rigid
body pose is one position (3,) and one quaternion (4,).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pvdkit.jit import njit
from simcore.frame import Frame
from simcore.maths import qmul, qrot
from simcore.suspension.states import UNSPECIFIED_JOUNCE

if TYPE_CHECKING:
    from simcore.suspension.params import SuspensionParams


def _half_angle(angle: np.ndarray | float) -> tuple[np.ndarray | float, np.ndarray | float]:
    """cos and sin of half the angle; exact (1, 0) for a scalar zero so callers can skip work."""
    if isinstance(angle, float) and angle == 0.0:
        return 1.0, 0.0
    half = 0.5 * np.asarray(angle, dtype=np.float64)
    return np.cos(half), np.sin(half)


def compute_rotation(
    frame: Frame, roll: np.ndarray | float, pitch: np.ndarray | float, yaw: np.ndarray | float
) -> np.ndarray:
    """Quaternion ``yaw(vrt) * roll(lng) * pitch(lat)`` (``PxVehicleComputeRotation``), shape (..., 4).

    Roll is about the frame's longitudinal axis, pitch about its lateral axis, yaw about its
    vertical axis, all in radians; arrays broadcast. Closed form rather than three quaternion
    products: the three axes are the frame's orthonormal right-handed basis, so the product is the
    usual Euler-angle quaternion in (lng, lat, vrt) coordinates with its vector part mapped to the
    world by the frame matrix.
    """
    cr, sr = _half_angle(roll)
    cp, sp = _half_angle(pitch)
    cy, sy = _half_angle(yaw)
    x = cy * sr * cp - sy * cr * sp  # along lng
    y = cy * cr * sp + sy * sr * cp  # along lat
    z = sy * cr * cp + cy * sr * sp  # along vrt
    w = cy * cr * cp - sy * sr * sp
    out = np.empty(np.shape(w) + (4,))
    # Each frame axis is a signed world basis vector (Axis: index = value // 2, odd = negative).
    for axis, comp in ((frame.lng_axis, x), (frame.lat_axis, y), (frame.vrt_axis, z)):
        out[..., int(axis) // 2] = -comp if int(axis) % 2 else comp
    out[..., 3] = w
    return out


@njit(cache=True, nogil=True)
def _k_wheel_pose(
    axes,
    signs,
    s_pos,
    s_quat,
    t_dir,
    t_dist,
    w_pos,
    w_quat,
    jounce,
    camber,
    yaw,
    rot,
    b_pos,
    b_quat,
    out_pos,
    out_quat,
):  # pragma: no cover - compiled
    """The pose chain of every wheel (see the module docstring), optionally times the body pose."""
    unspecified = 3.4028234663852886e38
    bx, by, bz, bw = b_quat[0], b_quat[1], b_quat[2], b_quat[3]
    for i in range(out_pos.shape[0]):
        # rotation(camber about lng, 0, yaw about vrt) = yaw * roll, in (lng, lat, vrt) coordinates
        cr, sr = np.cos(0.5 * camber[i]), np.sin(0.5 * camber[i])
        cy, sy = np.cos(0.5 * yaw[i]), np.sin(0.5 * yaw[i])
        f = np.zeros(3)
        f[axes[0]] += signs[0] * cy * sr
        f[axes[1]] += signs[1] * sy * sr
        f[axes[2]] += signs[2] * sy * cr
        sx, sy_, sz, sw = qmul(
            s_quat[i, 0], s_quat[i, 1], s_quat[i, 2], s_quat[i, 3], f[0], f[1], f[2], cy * cr
        )
        # rotation(0, rotation angle about lat, 0)
        cp, sp = np.cos(0.5 * rot[i]), np.sin(0.5 * rot[i])
        g = np.zeros(3)
        g[axes[1]] = signs[1] * sp
        wx, wy, wz, ww = qmul(w_quat[i, 0], w_quat[i, 1], w_quat[i, 2], w_quat[i, 3], g[0], g[1], g[2], cp)
        qx, qy, qz, qw = qmul(sx, sy_, sz, sw, wx, wy, wz, ww)
        dist = t_dist[i] - jounce[i] if jounce[i] != unspecified else 0.0
        ox, oy, oz = qrot(sx, sy_, sz, sw, w_pos[i, 0], w_pos[i, 1], w_pos[i, 2])
        px = s_pos[i, 0] + t_dir[i, 0] * dist + ox
        py = s_pos[i, 1] + t_dir[i, 1] * dist + oy
        pz = s_pos[i, 2] + t_dir[i, 2] * dist + oz
        px, py, pz = qrot(bx, by, bz, bw, px, py, pz)
        out_pos[i, 0] = b_pos[0] + px
        out_pos[i, 1] = b_pos[1] + py
        out_pos[i, 2] = b_pos[2] + pz
        out_quat[i, 0], out_quat[i, 1], out_quat[i, 2], out_quat[i, 3] = qmul(bx, by, bz, bw, qx, qy, qz, qw)


_ORIGIN = np.zeros(3)
_IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


def _per_wheel(values: np.ndarray | float, n: int) -> np.ndarray:
    return np.ascontiguousarray(np.broadcast_to(np.asarray(values, dtype=np.float64), (n,)))


def _pose(
    frame: Frame,
    suspension: SuspensionParams,
    jounce: np.ndarray | float,
    camber: np.ndarray | float,
    yaw: np.ndarray | float,
    rotation_angle: np.ndarray | float,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    n = suspension.nb_wheels
    axes = np.array([int(frame.lng_axis) // 2, int(frame.lat_axis) // 2, int(frame.vrt_axis) // 2])
    signs = np.array([-1.0 if int(a) % 2 else 1.0 for a in (frame.lng_axis, frame.lat_axis, frame.vrt_axis)])
    pos = np.empty((n, 3))
    quat = np.empty((n, 4))
    _k_wheel_pose(
        axes,
        signs,
        suspension.suspension_attachment_pos,
        suspension.suspension_attachment_quat,
        suspension.suspension_travel_dir,
        suspension.suspension_travel_dist,
        suspension.wheel_attachment_pos,
        suspension.wheel_attachment_quat,
        _per_wheel(jounce, n),
        _per_wheel(camber, n),
        _per_wheel(yaw, n),
        _per_wheel(rotation_angle, n),
        np.ascontiguousarray(body_pos, dtype=np.float64),
        np.ascontiguousarray(body_quat, dtype=np.float64),
        pos,
        quat,
    )
    return pos, quat


def compute_wheel_local_orientation(
    frame: Frame,
    suspension: SuspensionParams,
    camber: np.ndarray,
    toe: np.ndarray,
    steer: np.ndarray,
    rotation_angle: np.ndarray | float = 0.0,
) -> np.ndarray:
    """Wheel quaternions (n, 4) in the rigid body frame (``PxVehicleComputeWheelLocalOrientation``)."""
    yaw = np.asarray(steer, dtype=np.float64) + np.asarray(toe, dtype=np.float64)
    return _pose(frame, suspension, UNSPECIFIED_JOUNCE, camber, yaw, rotation_angle, _ORIGIN, _IDENTITY)[1]


def compute_wheel_orientation(
    frame: Frame,
    suspension: SuspensionParams,
    camber: np.ndarray,
    toe: np.ndarray,
    steer: np.ndarray,
    body_quat: np.ndarray,
    rotation_angle: np.ndarray | float = 0.0,
) -> np.ndarray:
    """Wheel quaternions (n, 4) in the world frame (``PxVehicleComputeWheelOrientation``)."""
    yaw = np.asarray(steer, dtype=np.float64) + np.asarray(toe, dtype=np.float64)
    return _pose(frame, suspension, UNSPECIFIED_JOUNCE, camber, yaw, rotation_angle, _ORIGIN, body_quat)[1]


def suspension_extension(suspension: SuspensionParams, jounce: np.ndarray) -> np.ndarray:
    """Distance (n,) from the max-compression pose along the travel direction: ``travel_dist - jounce``.

    An unspecified jounce (:data:`UNSPECIFIED_JOUNCE`) means "no state yet" and places the wheel at
    maximum compression (zero extension), as Vehicle2 does.
    """
    jounce = np.asarray(jounce, dtype=np.float64)
    return np.where(jounce != UNSPECIFIED_JOUNCE, suspension.suspension_travel_dist - jounce, 0.0)


def compute_wheel_local_pose(
    frame: Frame,
    suspension: SuspensionParams,
    jounce: np.ndarray,
    camber: np.ndarray,
    toe: np.ndarray,
    steer: np.ndarray,
    rotation_angle: np.ndarray | float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Wheel positions (n, 3) and quaternions (n, 4), rigid body frame (``PxVehicleComputeWheelLocalPose``).

    ``jounce`` (n,) in ``length``; ``camber``, ``toe``, ``steer``, ``rotation_angle`` (n,) radians.
    """
    yaw = np.asarray(steer, dtype=np.float64) + np.asarray(toe, dtype=np.float64)
    return _pose(frame, suspension, jounce, camber, yaw, rotation_angle, _ORIGIN, _IDENTITY)


def compute_wheel_pose(
    frame: Frame,
    suspension: SuspensionParams,
    jounce: np.ndarray,
    camber: np.ndarray,
    toe: np.ndarray,
    steer: np.ndarray,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
    rotation_angle: np.ndarray | float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Wheel positions (n, 3) and quaternions (n, 4) in the world frame (``PxVehicleComputeWheelPose``)."""
    yaw = np.asarray(steer, dtype=np.float64) + np.asarray(toe, dtype=np.float64)
    return _pose(frame, suspension, jounce, camber, yaw, rotation_angle, body_pos, body_quat)


def is_wheel_on_ground(separation: np.ndarray) -> np.ndarray:
    """True where the suspension can place the wheel on the ground: ``separation <= 0``
    (``PxVehicleIsWheelOnGround``). Bump-stop penetration (negative separation) counts as on ground."""
    return np.asarray(separation) <= 0.0
