"""Equations of the linear bicycle model (pure functions).

Conventions (ISO 8855, also Vehicle2's default frame): x forward, y left, z up; yaw rate r and
heading ψ positive counter-clockwise seen from above; steer δ positive to the left; sideslip β
positive when the centre of mass moves to the left of the body's forward axis. Axle slip angles
are defined so that a positive slip angle gives a positive (leftward) force, F_y = C α:

    α_f = δ − β − lf r / V          α_r = −β + lr r / V

Newton in the body's lateral direction and Euler about the vertical axis, linearised for small
angles (cos δ ≈ 1, v_y ≈ V β), with V constant:

    m V (dβ/dt + r) = F_yf + F_yr
    I_z dr/dt      = lf F_yf − lr F_yr

which gives the state-space form x' = A x + B δ with x = (β, r):

    dβ/dt = −(Cf + Cr)/(m V) β − (1 + (lf Cf − lr Cr)/(m V²)) r + Cf/(m V) δ
    dr/dt = −(lf Cf − lr Cr)/I_z β − (lf² Cf + lr² Cr)/(I_z V) r + lf Cf/I_z δ

The derivation, and how it differs from the seed's teaching page, is in ``docs/bicycle.md``.
"""

from __future__ import annotations

import math

import numpy as np

from simcore.bicycle.params import BicycleParams

_PADE_ORDER = 6


def state_space(p: BicycleParams) -> tuple[np.ndarray, np.ndarray]:
    """``(A, B)`` of x' = A x + B δ for x = (β, r): A (2, 2) in 1/time, B (2,) in 1/time."""
    m, v = p.mass, p.speed
    a = np.array([
        [-(p.cf + p.cr) / (m * v), -1.0 - (p.lf * p.cf - p.lr * p.cr) / (m * v * v)],
        [-(p.lf * p.cf - p.lr * p.cr) / p.iz, -(p.lf ** 2 * p.cf + p.lr ** 2 * p.cr) / (p.iz * v)],
    ])
    b = np.array([p.cf / (m * v), p.lf * p.cf / p.iz])
    return a, b


def slip_angles(p: BicycleParams, sideslip: float | np.ndarray, yaw_rate: float | np.ndarray,
                steer: float | np.ndarray) -> np.ndarray:
    """(α_f, α_r) stacked on the first axis (rad); inputs broadcast."""
    beta = np.asarray(sideslip, dtype=np.float64)
    r = np.asarray(yaw_rate, dtype=np.float64)
    front = np.asarray(steer, dtype=np.float64) - beta - p.lf * r / p.speed
    rear = -beta + p.lr * r / p.speed
    return np.stack(np.broadcast_arrays(front, rear))


def lateral_forces(p: BicycleParams, slip: np.ndarray) -> np.ndarray:
    """Axle lateral forces F_y = C α for slip angles stacked (front, rear) on the first axis."""
    slip = np.asarray(slip, dtype=np.float64)
    c = np.array([p.cf, p.cr]).reshape((2,) + (1,) * (slip.ndim - 1))
    return c * slip


def derivatives(p: BicycleParams, sideslip: float | np.ndarray, yaw_rate: float | np.ndarray,
                steer: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dβ/dt, dr/dt) from the force and moment balance (written from the forces, not from A, so
    that tests can check the state-space matrices against it)."""
    f = lateral_forces(p, slip_angles(p, sideslip, yaw_rate, steer))
    dbeta = (f[0] + f[1]) / (p.mass * p.speed) - np.asarray(yaw_rate, dtype=np.float64)
    dr = (p.lf * f[0] - p.lr * f[1]) / p.iz
    return dbeta, dr


def lateral_acceleration(p: BicycleParams, sideslip: float | np.ndarray, yaw_rate: float | np.ndarray,
                         steer: float | np.ndarray) -> np.ndarray:
    """a_y = (F_yf + F_yr) / m = V (dβ/dt + r), ``length / time^2``, positive to the left."""
    f = lateral_forces(p, slip_angles(p, sideslip, yaw_rate, steer))
    return (f[0] + f[1]) / p.mass


def expm(m: np.ndarray) -> np.ndarray:
    """Matrix exponential by scaling and squaring with a degree-6 Padé approximant.

    The matrix is scaled by 2^-s until its infinity norm is at most 1/2, where the Padé error is
    below 1e-16 relative, then squared s times: accurate to rounding for the small, well-scaled
    matrices of this model (no SciPy needed)."""
    m = np.asarray(m, dtype=np.float64)
    norm = float(np.max(np.sum(np.abs(m), axis=1))) if m.size else 0.0
    s = max(0, int(math.ceil(math.log2(norm / 0.5)))) if norm > 0.5 else 0
    x = m / (2.0 ** s)
    n = np.eye(m.shape[0])
    d = np.eye(m.shape[0])
    term = np.eye(m.shape[0])
    p = _PADE_ORDER
    for k in range(1, p + 1):
        c = math.factorial(2 * p - k) * math.factorial(p) / (
            math.factorial(2 * p) * math.factorial(k) * math.factorial(p - k))
        term = term @ x
        n = n + c * term
        d = d + (c if k % 2 == 0 else -c) * term
    e = np.linalg.solve(d, n)
    for _ in range(s):
        e = e @ e
    return e


def discretize(p: BicycleParams, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact zero-order-hold discretisation of (β, r, ψ) over a step ``dt``: ``(Φ (3, 3), Γ (3,))``
    with z[k+1] = Φ z[k] + Γ δ[k] when δ is held constant during the step.

    The heading ψ (dψ/dt = r) is part of the linear system, so it is advanced exactly too. Computed
    as the exponential of the augmented matrix [[A3, B3], [0, 0]] dt, which also covers a singular
    A (a vehicle exactly at its critical speed)."""
    if not dt > 0.0:
        raise ValueError(f"bicycle discretize: dt must be greater than zero, got {dt!r}")
    a, b = state_space(p)
    m = np.zeros((4, 4))
    m[:2, :2] = a
    m[2, 1] = 1.0
    m[:2, 3] = b
    e = expm(m * dt)
    return e[:3, :3], e[:3, 3]


def advance_position(pos: np.ndarray, course0: float, course1: float, speed: float, dt: float) -> np.ndarray:
    """Ground position after a step in which the course angle (ψ + β) went from ``course0`` to
    ``course1`` at a constant rate and the speed stayed ``speed``: exact for an arc."""
    half = 0.5 * (course1 - course0)
    sinc = math.sin(half) / half if abs(half) > 1e-9 else 1.0 - half * half / 6.0
    mid = 0.5 * (course0 + course1)
    dist = speed * dt * sinc
    return np.asarray(pos, dtype=np.float64) + dist * np.array([math.cos(mid), math.sin(mid)])
