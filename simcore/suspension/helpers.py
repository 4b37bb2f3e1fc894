"""Suspension helpers (``PxVehicleSuspensionHelpers``): query geometry and sprung masses.

The road-geometry query (simcore.road) uses :func:`compute_suspension_raycast` or
:func:`compute_suspension_sweep` to know where to look for the ground under each wheel.
"""

from __future__ import annotations

import numpy as np

from simcore.frame import Axis, Frame
from simcore.limits import MAX_NB_WHEELS
from simcore.maths import quat_rotate
from simcore.suspension.params import SuspensionParams
from simcore.suspension.states import UNSPECIFIED_JOUNCE
from simcore.wheel.helpers import compute_wheel_pose
from simcore.wheel.params import WheelParams

#: Determinant below which the sprung-mass system counts as singular (Vehicle2's threshold).
SPRUNG_MASS_DETERMINANT_THRESHOLD = 1e-6


def compute_suspension_direction(suspension: SuspensionParams, body_quat: np.ndarray) -> np.ndarray:
    """Travel directions (n, 3) in the world frame (``PxVehicleComputeSuspensionDirection``)."""
    return quat_rotate(np.asarray(body_quat, dtype=np.float64), suspension.suspension_travel_dir)


def compute_wheel_pose_for_suspension_query(
    frame: Frame, suspension: SuspensionParams, steer: np.ndarray, body_pos: np.ndarray, body_quat: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """World wheel poses at maximum compression with zero compliance and rotation (query start)."""
    n = suspension.nb_wheels
    return compute_wheel_pose(
        frame,
        suspension,
        np.full(n, UNSPECIFIED_JOUNCE),
        np.zeros(n),
        np.zeros(n),
        np.broadcast_to(np.asarray(steer, dtype=np.float64), (n,)),
        body_pos,
        body_quat,
    )


def compute_suspension_raycast(
    frame: Frame,
    wheel: WheelParams,
    suspension: SuspensionParams,
    steer: np.ndarray,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ray per wheel from the wheel top at max compression to the wheel bottom at max droop.

    Returns ``start`` (n, 3), unit ``direction`` (n, 3) and ``length`` (n,) = travel_dist + 2 radius
    (``PxVehicleComputeSuspensionRaycast``).
    """
    pos, _ = compute_wheel_pose_for_suspension_query(frame, suspension, steer, body_pos, body_quat)
    direction = compute_suspension_direction(suspension, body_quat)
    start = pos - direction * wheel.radius[:, None]
    return start, direction, suspension.suspension_travel_dist + 2.0 * wheel.radius


def compute_suspension_sweep(
    frame: Frame, suspension: SuspensionParams, steer: np.ndarray, body_pos: np.ndarray, body_quat: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Wheel-cylinder sweep per wheel from max compression to max droop.

    Returns start position (n, 3), start quaternion (n, 4), unit direction (n, 3) and length (n,) =
    travel_dist (``PxVehicleComputeSuspensionSweep``).
    """
    pos, quat = compute_wheel_pose_for_suspension_query(frame, suspension, steer, body_pos, body_quat)
    direction = compute_suspension_direction(suspension, body_quat)
    return pos, quat, direction, suspension.suspension_travel_dist.copy()


def compute_sprung_masses(
    coordinates: np.ndarray, total_mass: float, gravity_direction: Axis | int
) -> np.ndarray:
    """Split ``total_mass`` over the springs so their mass centre is the rigid body's centre of mass.

    ``PxVehicleComputeSprungMasses``. ``coordinates`` (n, 3) are the sprung-mass positions (usually
    the suspension attachments) in the rigid body frame, whose origin is the centre of mass;
    ``gravity_direction`` is the axis gravity acts along (its sign is irrelevant). One mass takes
    everything; two and three masses are solved exactly; four or more take the solution of least
    variance about ``total_mass / n`` (Lagrange multipliers), as Vehicle2 does. Only the coordinates
    perpendicular to gravity matter. Raises ``ValueError`` when the layout is degenerate (e.g. all
    points on one line through a non-centred point).
    """
    x = np.asarray(coordinates, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"compute_sprung_masses: coordinates must have shape (n, 3), got {x.shape}")
    n = x.shape[0]
    if not 1 <= n <= MAX_NB_WHEELS:
        raise ValueError(
            f"compute_sprung_masses: number of sprung masses must be in [1, {MAX_NB_WHEELS}], got {n}"
        )
    if not total_mass > 0.0:
        raise ValueError(f"compute_sprung_masses: total_mass must be greater than zero, got {total_mass}")
    g = Axis(gravity_direction).value // 2  # 0: X, 1: Y, 2: Z
    d0, d1 = (g + 1) % 3, (g + 2) % 3

    if n == 1:
        return np.array([float(total_mass)])
    if n == 2:
        flat = x.copy()
        flat[:, g] = 0.0
        w = flat[1] - flat[0]
        length = np.linalg.norm(w)
        if length > 0.0:
            w = w / length
        # Project the centre of mass (origin) on the line through both points.
        p = flat[0] + w * np.dot(-flat[0], w)
        r0 = np.dot(flat[0] - p, w)
        r1 = np.dot(flat[1] - p, w)
        if abs(r0 - r1) <= SPRUNG_MASS_DETERMINANT_THRESHOLD:
            raise ValueError(
                "compute_sprung_masses: the two sprung masses coincide in the plane normal to gravity"
            )
        m0 = total_mass * r1 / (r1 - r0)
        return np.array([m0, total_mass - m0])
    if n == 3:
        a = np.vstack((x[:, d0], x[:, d1], np.ones(3)))
        b = np.array([0.0, 0.0, float(total_mass)])
        if abs(np.linalg.det(a)) <= SPRUNG_MASS_DETERMINANT_THRESHOLD:
            raise ValueError(
                "compute_sprung_masses: the three sprung masses are collinear in the plane normal to gravity"
            )
        return np.linalg.solve(a, b)
    # n >= 4: minimise sum (m_i - M/n)^2 subject to sum m_i x_i = 0, sum m_i z_i = 0, sum m_i = M.
    size = n + 3
    a = np.zeros((size, size))
    b = np.zeros(size)
    a[0, :n] = x[:, d0]
    a[1, :n] = x[:, d1]
    a[2, :n] = 1.0
    b[2] = total_mass
    rows = np.arange(n) + 3
    a[rows, np.arange(n)] = 2.0
    a[rows, n] = x[:, d0]
    a[rows, n + 1] = x[:, d1]
    a[rows, n + 2] = 1.0
    b[3:] = 2.0 * total_mass / n
    if abs(np.linalg.det(a)) <= SPRUNG_MASS_DETERMINANT_THRESHOLD:
        raise ValueError("compute_sprung_masses: the sprung-mass layout is degenerate (collinear points)")
    return np.linalg.solve(a, b)[:n]
