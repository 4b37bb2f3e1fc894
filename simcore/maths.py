"""Quaternion, pose and small vector helpers: the one maths module of every simcore subsystem.

Quaternions are stored ``[x, y, z, w]`` (PhysX's ``PxQuat`` order) and poses as a position
``(3,)`` plus a quaternion ``(4,)`` (``PxTransform``). Every function broadcasts over leading
axes, so the same call rotates one vector or one vector per wheel: ``quat_rotate(q (n,4),
v (n,3)) -> (n,3)`` and ``quat_rotate(q (4,), v (n,3)) -> (n,3)`` both work. Inputs are never
modified; results are fresh float64 arrays.

Why one module: the wheel, suspension and tire code used to carry their own ``dot``,
``normalize`` and ``transform_point``, and the two ``normalize`` disagreed on tiny vectors.
Compiled kernels elsewhere (``simcore.wheel.helpers``) call :func:`qmul` / :func:`qrot`, the
numba scalar forms of the quaternion algebra, so the algebra is written once.
"""

from __future__ import annotations

import math

import numpy as np

from pvdkit.jit import njit

#: The identity rotation ``[0, 0, 0, 1]``. Read-only; copy before writing.
QUAT_IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])
QUAT_IDENTITY.setflags(write=False)


def _as_f64(a: np.ndarray | list[float] | tuple[float, ...]) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def quat_identity(n: int | None = None) -> np.ndarray:
    """The identity quaternion, shape (4,) or (n, 4) when ``n`` is given."""
    if n is None:
        return QUAT_IDENTITY.copy()
    q = np.zeros((n, 4))
    q[:, 3] = 1.0
    return q


# --- compiled kernels ---------------------------------------------------------------------------
# A vehicle's per-wheel arrays are tiny (4..20 rows), so numpy's per-call overhead dominates the
# quaternion algebra. These kernels take 2-d C-contiguous float64 inputs whose row counts are
# equal or 1 (broadcast) and write into ``out``; the public functions below route 1-d/2-d inputs
# here and anything of higher rank through equivalent numpy code.

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


@njit(**_JIT)
def qmul(ax, ay, az, aw, bx, by, bz, bw):  # pragma: no cover - compiled
    """Hamilton product ``a * b`` of two quaternions given by components (for compiled kernels)."""
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by + ay * bw + az * bx - ax * bz,
        aw * bz + az * bw + ax * by - ay * bx,
        aw * bw - ax * bx - ay * by - az * bz,
    )


@njit(**_JIT)
def qrot(qx, qy, qz, qw, vx, vy, vz):  # pragma: no cover - compiled
    """``v`` rotated by unit quaternion ``q``, by components: ``v + 2 w (u x v) + 2 u x (u x v)``."""
    tx = 2.0 * (qy * vz - qz * vy)
    ty = 2.0 * (qz * vx - qx * vz)
    tz = 2.0 * (qx * vy - qy * vx)
    return (
        vx + qw * tx + (qy * tz - qz * ty),
        vy + qw * ty + (qz * tx - qx * tz),
        vz + qw * tz + (qx * ty - qy * tx),
    )


@njit(**_JIT)
def _k_quat_multiply(a, b, out):  # pragma: no cover - compiled
    for n in range(out.shape[0]):
        i = n if a.shape[0] > 1 else 0
        j = n if b.shape[0] > 1 else 0
        out[n, 0], out[n, 1], out[n, 2], out[n, 3] = qmul(
            a[i, 0], a[i, 1], a[i, 2], a[i, 3], b[j, 0], b[j, 1], b[j, 2], b[j, 3]
        )


@njit(**_JIT)
def _k_quat_rotate(q, v, sign, out):  # pragma: no cover - compiled
    for n in range(out.shape[0]):
        i = n if q.shape[0] > 1 else 0
        j = n if v.shape[0] > 1 else 0
        out[n, 0], out[n, 1], out[n, 2] = qrot(
            sign * q[i, 0], sign * q[i, 1], sign * q[i, 2], q[i, 3], v[j, 0], v[j, 1], v[j, 2]
        )


@njit(**_JIT)
def _k_quat_from_axis_angle(axis, angle, out):  # pragma: no cover - compiled
    for n in range(out.shape[0]):
        i = n if axis.shape[0] > 1 else 0
        j = n if angle.shape[0] > 1 else 0
        half = 0.5 * angle[j]
        s = np.sin(half)
        out[n, 0] = axis[i, 0] * s
        out[n, 1] = axis[i, 1] * s
        out[n, 2] = axis[i, 2] * s
        out[n, 3] = np.cos(half)


@njit(**_JIT)
def _k_quat_normalize(q, out):  # pragma: no cover - compiled
    for n in range(out.shape[0]):
        x, y, z, w = q[n, 0], q[n, 1], q[n, 2], q[n, 3]
        norm = np.sqrt(x * x + y * y + z * z + w * w)
        if norm < 1e-300:
            out[n, 0] = 0.0
            out[n, 1] = 0.0
            out[n, 2] = 0.0
            out[n, 3] = 1.0
        else:
            out[n, 0] = x / norm
            out[n, 1] = y / norm
            out[n, 2] = z / norm
            out[n, 3] = w / norm


@njit(**_JIT)
def _k_cross(a, b, out):  # pragma: no cover - compiled
    for n in range(out.shape[0]):
        i = n if a.shape[0] > 1 else 0
        j = n if b.shape[0] > 1 else 0
        ax, ay, az = a[i, 0], a[i, 1], a[i, 2]
        bx, by, bz = b[j, 0], b[j, 1], b[j, 2]
        out[n, 0] = ay * bz - az * by
        out[n, 1] = az * bx - ax * bz
        out[n, 2] = ax * by - ay * bx


def _rows(x: np.ndarray, width: int) -> np.ndarray | None:
    """``x`` as a 2-d C-contiguous (m, width) float64 array, or None if it is not 1-d/2-d of that width."""
    if x.ndim == 1 and x.shape[0] == width:
        return np.ascontiguousarray(x, dtype=np.float64).reshape(1, width)
    if x.ndim == 2 and x.shape[1] == width:
        return np.ascontiguousarray(x, dtype=np.float64)
    return None


def _scalars(x: np.ndarray) -> np.ndarray | None:
    if x.ndim == 0:
        return np.ascontiguousarray(x, dtype=np.float64).reshape(1)
    if x.ndim == 1:
        return np.ascontiguousarray(x, dtype=np.float64)
    return None


def _out_rows(name: str, *counts: int) -> int:
    m = max(counts)
    for c in counts:
        if c != m and c != 1:
            raise ValueError(f"{name}: operands with {counts} rows do not broadcast")
    return m


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` (rotate by ``b`` first, then by ``a``), shapes (..., 4)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a2, b2 = _rows(a, 4), _rows(b, 4)
    if a2 is not None and b2 is not None:
        out = np.empty((_out_rows("quat_multiply", a2.shape[0], b2.shape[0]), 4))
        _k_quat_multiply(a2, b2, out)
        return out if (a.ndim == 2 or b.ndim == 2) else out[0]
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack(
        (
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by + ay * bw + az * bx - ax * bz,
            aw * bz + az * bw + ax * by - ay * bx,
            aw * bw - ax * bx - ay * by - az * bz,
        ),
        axis=-1,
    )


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    """Conjugate ``[-x, -y, -z, w]``; the inverse rotation for a unit quaternion."""
    out = np.array(q, dtype=np.float64)
    out[..., :3] *= -1.0
    return out


def _rotate(q: np.ndarray, v: np.ndarray, sign: float) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    q2, v2 = _rows(q, 4), _rows(v, 3)
    if q2 is not None and v2 is not None:
        out = np.empty((_out_rows("quat_rotate", q2.shape[0], v2.shape[0]), 3))
        _k_quat_rotate(q2, v2, sign, out)
        return out if (q.ndim == 2 or v.ndim == 2) else out[0]
    u = sign * q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vector(s) ``v`` (..., 3) by unit quaternion(s) ``q`` (..., 4): ``q v q*``.

    Uses ``v + 2 w (u x v) + 2 u x (u x v)`` with ``u = q.xyz`` — the same algebra as
    ``PxQuat::rotate`` but in float64.
    """
    return _rotate(q, v, 1.0)


def quat_rotate_inv(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vector(s) by the inverse of unit quaternion(s) ``q`` (``PxQuat::rotateInv``)."""
    return _rotate(q, v, -1.0)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x b`` over the last axis (..., 3), broadcasting like ``np.cross`` (faster on small arrays)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a2, b2 = _rows(a, 3), _rows(b, 3)
    if a2 is not None and b2 is not None:
        out = np.empty((_out_rows("cross", a2.shape[0], b2.shape[0]), 3))
        _k_cross(a2, b2, out)
        return out if (a.ndim == 2 or b.ndim == 2) else out[0]
    return np.cross(a, b)


def quat_from_axis_angle(axis: np.ndarray, angle: np.ndarray | float) -> np.ndarray:
    """Rotation of ``angle`` radians about unit ``axis`` (..., 3); result (..., 4).

    ``angle`` broadcasts against the leading axes of ``axis`` (e.g. one axis, n angles).
    The axis is not re-normalised: pass a unit vector, as ``PxQuat(angle, axis)`` expects.
    """
    axis = np.asarray(axis, dtype=np.float64)
    angle = np.asarray(angle, dtype=np.float64)
    ax2, an1 = _rows(axis, 3), _scalars(angle)
    if ax2 is not None and an1 is not None:
        out = np.empty((_out_rows("quat_from_axis_angle", ax2.shape[0], an1.shape[0]), 4))
        _k_quat_from_axis_angle(ax2, an1, out)
        return out if (axis.ndim == 2 or angle.ndim == 1) else out[0]
    half = 0.5 * angle
    s = np.sin(half)[..., None]
    c = np.cos(half)[..., None]
    xyz = axis * s
    w = np.broadcast_to(c, xyz.shape[:-1] + (1,))
    return np.concatenate((xyz, w), axis=-1)


def quat_to_axis_angle(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit axis (..., 3) and angle in [0, 2 pi) (...) of unit quaternion(s); axis +X for identity."""
    q = quat_normalize(q)
    w = np.clip(q[..., 3], -1.0, 1.0)
    angle = 2.0 * np.arccos(w)
    s = np.sqrt(np.maximum(1.0 - w * w, 0.0))
    small = s < 1e-12
    safe = np.where(small, 1.0, s)
    axis = q[..., :3] / safe[..., None]
    axis = np.where(small[..., None], np.array([1.0, 0.0, 0.0]), axis)
    return axis, angle


def quat_normalize(q: np.ndarray) -> np.ndarray:
    """Unit-length copy of quaternion(s) (..., 4). A zero quaternion becomes the identity."""
    q = np.asarray(q, dtype=np.float64)
    q2 = _rows(q, 4)
    if q2 is not None:
        out = np.empty(q2.shape)
        _k_quat_normalize(q2, out)
        return out if q.ndim == 2 else out[0]
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    zero = n < 1e-300
    out = q / np.where(zero, 1.0, n)
    if np.any(zero):
        out = np.where(zero, QUAT_IDENTITY, out)
    return out


def quat_integrate(q: np.ndarray, omega: np.ndarray, dt: float) -> np.ndarray:
    """Advance orientation(s) ``q`` by world-frame angular velocity ``omega`` (rad/time) over ``dt``.

    First-order update ``q + dt/2 * [omega, 0] * q`` followed by normalisation — the scheme
    Vehicle2's rigid body update uses (``PxVehicleRigidBodyUpdate``). Shapes (..., 4) and (..., 3).
    """
    q = _as_f64(q)
    omega = _as_f64(omega)
    wq = np.concatenate((omega, np.zeros(omega.shape[:-1] + (1,))), axis=-1)
    dq = quat_multiply(wq, q)
    return quat_normalize(q + (0.5 * dt) * dq)


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """3x3 rotation matrix (..., 3, 3) of unit quaternion(s) (..., 4); columns are the rotated axes."""
    q = _as_f64(q)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.stack(
        (
            1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
            2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
            2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy),
        ),
        axis=-1,
    )
    return m.reshape(q.shape[:-1] + (3, 3))


def quat_from_matrix(m: np.ndarray) -> np.ndarray:
    """Unit quaternion [x, y, z, w] of a 3x3 rotation matrix (one matrix; Shepperd's method)."""
    m = _as_f64(m).reshape(3, 3)
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2.0
        q = [0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2.0
        q = [(m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2.0
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s]
    out = np.array(q)
    if out[3] < 0.0:
        out = -out
    return quat_normalize(out)


def quat_get_basis(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rotated X, Y and Z unit axes of quaternion(s) (``PxQuat::getBasisVector0/1/2``)."""
    m = quat_to_matrix(q)
    return m[..., :, 0], m[..., :, 1], m[..., :, 2]


def quat_transform_frame(q: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """Re-express orientation(s) ``q`` in a frame rotated by 3x3 matrix ``rot``: ``R q R^T``.

    Used by ``transform_and_scale``: a pose's rotation expressed in a source frame maps to
    ``quat(rot) * q * quat(rot)^-1`` in the target frame.
    """
    r = quat_from_matrix(rot)
    return quat_multiply(quat_multiply(r, q), quat_conjugate(r))


# --- poses (position (..., 3), quaternion (..., 4)) -------------------------------------------


def pose_transform_point(pos: np.ndarray, quat: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Map point(s) from the pose's local frame to its parent: ``pos + quat.rotate(p)``."""
    return _as_f64(pos) + quat_rotate(quat, p)


def pose_inverse_transform_point(pos: np.ndarray, quat: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Map point(s) from the parent frame into the pose's local frame."""
    return quat_rotate_inv(quat, _as_f64(p) - _as_f64(pos))


def pose_multiply(
    pos_a: np.ndarray, quat_a: np.ndarray, pos_b: np.ndarray, quat_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Compose poses ``a * b`` (``b`` expressed in ``a``'s frame), like ``PxTransform::transform``."""
    return pos_a + quat_rotate(quat_a, pos_b), quat_multiply(quat_a, quat_b)


def pose_inverse(pos: np.ndarray, quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverse pose: ``(-q^-1 p, q^-1)``."""
    qc = quat_conjugate(quat)
    return -quat_rotate(qc, pos), qc


# --- small vector helpers ----------------------------------------------------------------------


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dot product over the last axis, (..., 3) x (..., 3) -> (...), broadcasting.

    Written out rather than ``einsum``: on a vehicle's 4-20 rows the per-call overhead is the cost.
    """
    a = _as_f64(a)
    b = _as_f64(b)
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def norm(a: np.ndarray) -> np.ndarray:
    """Euclidean length over the last axis."""
    return np.sqrt(dot(a, a))


def normalize(a: np.ndarray) -> np.ndarray:
    """Unit vector(s) along ``a`` (..., 3); a vector of length zero comes back as the zero vector.

    Exactly ``PxVec3::normalize`` / ``getNormalized``, which Vehicle2's tire and suspension code
    call: any length above zero is divided out, however small (no epsilon), and zero stays zero
    instead of becoming NaN. (A vector shorter than ~1e-154, whose squared length underflows to
    zero, comes back unchanged, as it does in PhysX's float32 below ~1e-19.)
    """
    a = _as_f64(a)
    length = np.sqrt(dot(a, a))
    return a / np.where(length > 0.0, length, 1.0)[..., None]


def project_on_plane(v: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Component of ``v`` orthogonal to unit normal ``n`` (both (..., 3))."""
    v = _as_f64(v)
    n = _as_f64(n)
    return v - dot(v, n)[..., None] * n


# --- immutable parameter arrays ----------------------------------------------------------------


def frozen_array(value: object, shape: tuple[int | None, ...] | None = None, name: str = "value",
                 dtype: type = np.float64) -> np.ndarray:
    """A read-only float64 (or ``dtype``) copy of ``value``, for the fields of frozen params.

    ``shape`` entries that are ``None`` accept any size; a mismatch raises ``ValueError`` naming
    ``name`` and both shapes, so a bad params field is reported where it is built.
    """
    a = np.array(value, dtype=dtype)
    if shape is not None:
        ok = a.ndim == len(shape) and all(s is None or s == d for s, d in zip(shape, a.shape, strict=True))
        if not ok:
            parts = ["n" if s is None else str(s) for s in shape]
            want = "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
            raise ValueError(f"{name}: expected an array of shape {want}, got shape {a.shape}")
    a.setflags(write=False)
    return a
