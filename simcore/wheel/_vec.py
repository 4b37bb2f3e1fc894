"""Small-array vector helpers for the wheel, suspension and tire functions.

A vehicle's per-wheel arrays have 4-20 rows, so per-call overhead dominates: cross products and
quaternion products/rotations come from :mod:`simcore.maths` (compiled kernels); ``dot``,
``normalize`` and the closed-form frame rotation below avoid generic numpy helpers
(``einsum``, ``linalg.norm``, ``stack``) for the same reason.
"""

from __future__ import annotations

import numpy as np

from simcore.frame import Frame
from simcore.maths import cross, quat_multiply, quat_rotate

__all__ = ["cross", "dot", "frame_rotation", "normalize", "quat_multiply", "quat_rotate", "transform_point"]


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dot product over the last axis."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def normalize(a: np.ndarray) -> np.ndarray:
    """Unit vectors along ``a`` (..., 3); zero vectors stay zero (as ``PxVec3::normalize`` leaves them)."""
    a = np.asarray(a, dtype=np.float64)
    length = np.sqrt(dot(a, a))
    return a / np.where(length > 0.0, length, 1.0)[..., None]


def transform_point(pos: np.ndarray, quat: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Map points ``p`` from a pose's local frame to its parent: ``pos + quat.rotate(p)``."""
    return np.asarray(pos, dtype=np.float64) + quat_rotate(quat, p)


def _half_angle(angle: np.ndarray | float) -> tuple[np.ndarray | float, np.ndarray | float]:
    """cos and sin of half the angle; exact (1, 0) for a scalar zero so callers can skip work."""
    if isinstance(angle, float) and angle == 0.0:
        return 1.0, 0.0
    half = 0.5 * np.asarray(angle, dtype=np.float64)
    return np.cos(half), np.sin(half)


def frame_rotation(
    frame: Frame, roll: np.ndarray | float, pitch: np.ndarray | float, yaw: np.ndarray | float
) -> np.ndarray:
    """``yaw(vrt) * roll(lng) * pitch(lat)`` as quaternions (..., 4), in closed form.

    The three axes are the frame's orthonormal right-handed basis, so the product is the usual
    Euler-angle quaternion in (lng, lat, vrt) coordinates with its vector part mapped to the world
    by the frame matrix.
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
