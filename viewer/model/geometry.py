"""Small 3-D helpers for poses as OmniPVD recordings store them, and frame-agnostic axes
(:class:`Axis` and :class:`BodyAxes` live in :mod:`pvdkit.wheels`, which labels wheels with them).

Quaternions are ``(x, y, z, w)`` (PhysX ``PxQuat`` order). Nothing here assumes an up axis:
recordings made by PhysX's samples are Y-up with Z forward, simcore's default is Z-up with X
forward, and the viewer learns which from the recording itself (see :mod:`viewer.model.topdown`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvdkit.wheels import AXIS_LETTERS, Axis, BodyAxes, axis_from_name, dominant_axis

__all__ = ["AXIS_LETTERS", "Axis", "BodyAxes", "GroundPlane", "axis_from_name", "dominant_axis",
           "normalized_quats", "quat_multiply", "quat_rotate"]

def normalized_quats(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit quaternions ``(..., 4)`` and a mask of the valid ones (a zero or non-finite
    quaternion — e.g. a state recorded before the first step — is invalid and becomes identity)."""
    q = np.asarray(q, np.float64)
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    valid = (norm[..., 0] > 1e-6) & np.all(np.isfinite(q), axis=-1)
    out = np.where(valid[..., None], q / np.where(norm > 1e-6, norm, 1.0), np.array([0.0, 0.0, 0.0, 1.0]))
    return out, valid


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v (..., 3)`` by unit quaternions ``q (..., 4)`` (broadcasting)."""
    q = np.asarray(q, np.float64)
    v = np.asarray(v, np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * _cross(u, v)
    return v + w * t + _cross(u, t)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` over the last axis, written out: the top-down view rotates every vehicle's
    points every frame, and np.cross's axis handling costs more than the arithmetic."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` (rotate by ``b`` first, then ``a``)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ], axis=-1)


@dataclass(frozen=True)
class GroundPlane:
    """How world positions map onto the top-down view: ``up`` is the world's vertical axis,
    ``u`` / ``v`` the screen's right / up directions, chosen so that ``u × v = up`` (a view from
    above, not a mirror image). ``source`` says how ``up`` was found."""

    up: Axis
    source: str

    @property
    def u(self) -> Axis:
        return Axis((self.up.index + 1) % 3, 1)

    @property
    def v(self) -> Axis:
        return Axis((self.up.index + 2) % 3, self.up.sign)

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points ``(..., 3)`` → view coordinates ``(..., 2)``."""
        p = np.asarray(points, np.float64)
        return np.stack([p[..., self.u.index] * self.u.sign, p[..., self.v.index] * self.v.sign], axis=-1)

    def height(self, points: np.ndarray) -> np.ndarray:
        """Height of world points above the origin along ``up``."""
        return np.asarray(points, np.float64)[..., self.up.index] * self.up.sign
