"""Equations of the in-plane motorcycle: suspension geometry, contact forces, rigid-body motion,
pose arrays and lights (pure functions).

Model (SAE J670 axes, X forward, Z down, pitch about +Y positive nose up):

* one rigid body (bike + rider) with three degrees of freedom in the X-Z plane: x, z, pitch;
* two massless wheel assemblies on level ground, each joined to the body by a prismatic
  suspension — the front along the fork axis (raked by ``rake`` from the vertical), the rear
  vertical — with a linear spring, a linear damper and a bump stop. A wheel touches the ground
  when the suspension is shorter than its free length; then its centre is at wheel-radius height;
* at each contact the ground pushes with a normal force N and a longitudinal force F_x. Because
  the wheel assembly is massless and slides only along its axis, the ground force G = (F_x, -N)
  balances the spring along that axis, G . d = -S (d: unit axis towards the wheel), so
  N = (S + F_x d_x) / d_z. The body receives G at the contact point;
* F_x: drive torque / R minus brake torque / R (brake force fading linearly to 0 below
  :data:`STOP_SPEED` so the bike stops instead of reversing), minus rolling resistance
  ``crr N``, limited to ``friction N`` — at the limit the braked wheel locks and slides;
* aerodynamic drag ``0.5 rho CdA u |u|`` at the centre of mass; gravity.

The wheels roll without slip unless locked, so their spin is kinematic (u / R).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from simcore.motorcycle.params import FRONT, REAR, MotorcycleParams
from simcore.motorcycle.states import MotorcycleCommands

#: Forward speed (m/s) below which brake force and rolling resistance fade linearly to zero.
STOP_SPEED = 0.1
#: Longest internal integration step (s): steps are split into RK4 substeps no longer than this.
#: The stiffest motion, a wheel on its bump stop, has |lambda| h < 0.5 at this step for the presets.
MAX_SUBSTEP = 0.005


@dataclass(frozen=True)
class SuspensionGeometry:
    """Body-frame (x forward, z down, from the centre of mass) suspension geometry at pitch 0.

    ``attachment`` (2, 2): steering head / rear shock top (x, z); ``axis`` (2, 2): unit direction
    from the attachment to the wheel centre (x, z); ``design_wheel_centre`` (2, 2): wheel centres
    at the design pose."""

    attachment: np.ndarray
    axis: np.ndarray
    design_wheel_centre: np.ndarray


def suspension_geometry(p: MotorcycleParams) -> SuspensionGeometry:
    """The geometry implied by the params' design pose (wheel centres at wheel-radius height)."""
    h = p.cg_height
    centre = np.array([[p.cg_to_front_axle, h - p.wheel_radius[FRONT]],
                       [-p.cg_to_rear_axle, h - p.wheel_radius[REAR]]])
    axis = np.array([[math.sin(p.rake), math.cos(p.rake)], [0.0, 1.0]])
    attachment = centre - p.suspension_length[:, None] * axis
    return SuspensionGeometry(attachment, axis, centre)


def body_to_world(pitch: float, v: np.ndarray) -> np.ndarray:
    """Rotate body-frame (x, z) vectors (..., 2) by ``pitch`` about +Y into the world frame."""
    c, s = math.cos(pitch), math.sin(pitch)
    v = np.asarray(v, dtype=np.float64)
    return np.stack([v[..., 0] * c + v[..., 1] * s, -v[..., 0] * s + v[..., 1] * c], axis=-1)


class ContactForces(NamedTuple):
    """Per-wheel results of :func:`contact_forces` (arrays (2,)) and the body's force and moment."""

    suspension_length: np.ndarray
    compression: np.ndarray
    compression_speed: np.ndarray
    suspension_force: np.ndarray
    normal_force: np.ndarray
    longitudinal_force: np.ndarray
    brake_torque: np.ndarray
    drive_torque: np.ndarray
    locked: np.ndarray
    in_contact: np.ndarray
    force_x: float
    force_z: float
    moment_y: float


def contact_forces(p: MotorcycleParams, g: SuspensionGeometry, z: float, pitch: float, u: float, w: float,
                   q: float, cmd: MotorcycleCommands) -> ContactForces:
    """Suspension and ground forces on the body at a given state (see the module docstring).

    ``z``: centre-of-mass Z (negative above ground); ``u``, ``w``: velocity X, Z; ``q``: pitch rate.
    Returns per-wheel values and the resulting force (X, Z, on the body, gravity and drag excluded)
    and pitch moment about the centre of mass."""
    c, s_ = math.cos(pitch), math.sin(pitch)
    keys = ("length", "comp", "comp_speed", "spring", "normal", "fx", "brake", "drive")
    out = {k: [0.0, 0.0] for k in keys}
    locked = [False, False]
    contact = [False, False]
    fade = max(-1.0, min(1.0, u / STOP_SPEED))
    fx_sum = fz_sum = m_sum = 0.0
    brake_cmd = (cmd.front_brake, cmd.rear_brake)
    for i in (FRONT, REAR):
        ax, az = g.attachment[i]
        dx_b, dz_b = g.axis[i]
        awx, awz = ax * c + az * s_, -ax * s_ + az * c
        dwx, dwz = dx_b * c + dz_b * s_, -dx_b * s_ + dz_b * c
        radius = float(p.wheel_radius[i])
        free = float(p.free_length[i])
        brake = brake_cmd[i] * float(p.max_brake_torque[i])
        drive = cmd.throttle * p.max_drive_torque if i == REAR else 0.0
        out["brake"][i], out["drive"][i] = brake, drive
        length = free
        if dwz > 1e-6:
            length = (-radius - (z + awz)) / dwz
        if not (dwz > 1e-6 and length < free):
            out["length"][i] = free
            continue
        comp = free - length
        length_rate = -((w - q * awx) + length * (-q * dwx)) / dwz
        comp_rate = -length_rate
        k = float(p.spring_stiffness[i])
        spring = k * comp + float(p.damping[i]) * comp_rate
        travel = float(p.suspension_travel[i])
        if comp > travel:
            spring += k * p.bump_stop_factor * (comp - travel)
        spring = max(spring, 0.0)
        f0 = (drive - brake * fade) / radius
        kappa = p.rolling_resistance * fade
        normal = (spring + f0 * dwx) / (dwz + kappa * dwx)
        fx = f0 - kappa * normal
        if normal <= 0.0:
            normal, fx = 0.0, 0.0
        elif abs(fx) > p.friction * normal:
            sign = 1.0 if fx > 0.0 else -1.0
            normal = spring / (dwz - sign * p.friction * dwx)
            fx = sign * p.friction * normal
            locked[i] = sign < 0.0 and brake > 0.0
        contact[i] = True
        rx = awx + length * dwx  # contact point relative to the centre of mass (world)
        rz = -z
        fx_sum += fx
        fz_sum -= normal
        m_sum += rz * fx + rx * normal
        out["length"][i], out["comp"][i], out["comp_speed"][i] = length, comp, comp_rate
        out["spring"][i], out["normal"][i], out["fx"][i] = spring, normal, fx
    return ContactForces(
        np.array(out["length"]), np.array(out["comp"]), np.array(out["comp_speed"]), np.array(out["spring"]),
        np.array(out["normal"]), np.array(out["fx"]), np.array(out["brake"]), np.array(out["drive"]),
        np.array(locked), np.array(contact), fx_sum, fz_sum, m_sum)


def derivatives(p: MotorcycleParams, g: SuspensionGeometry, y: np.ndarray,
                cmd: MotorcycleCommands) -> tuple[np.ndarray, ContactForces]:
    """d/dt of y = (x, z, pitch, u, w, q) and the contact forces at y."""
    _, z, pitch, u, w, q = (float(v) for v in y)
    f = contact_forces(p, g, z, pitch, u, w, q, cmd)
    drag = -0.5 * p.air_density * p.drag_area * u * abs(u)
    du = (f.force_x + drag) / p.mass
    dw = f.force_z / p.mass + p.gravity
    dq = f.moment_y / p.pitch_inertia
    return np.array([u, w, q, du, dw, dq]), f


def rk4_step(p: MotorcycleParams, g: SuspensionGeometry, y: np.ndarray, cmd: MotorcycleCommands,
             dt: float) -> np.ndarray:
    """One classical Runge-Kutta step of length ``dt`` with the commands held."""
    k1, _ = derivatives(p, g, y, cmd)
    k2, _ = derivatives(p, g, y + 0.5 * dt * k1, cmd)
    k3, _ = derivatives(p, g, y + 0.5 * dt * k2, cmd)
    k4, _ = derivatives(p, g, y + dt * k3, cmd)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def integrate(p: MotorcycleParams, g: SuspensionGeometry, y: np.ndarray, cmd: MotorcycleCommands,
              dt: float) -> np.ndarray:
    """Advance y by ``dt`` in RK4 substeps of at most :data:`MAX_SUBSTEP`."""
    n = max(1, math.ceil(dt / MAX_SUBSTEP - 1e-9))
    h = dt / n
    for _ in range(n):
        y = rk4_step(p, g, y, cmd, h)
    return y


def pose_arrays(g: SuspensionGeometry, p: MotorcycleParams, pos: np.ndarray, pitch: float,
                suspension_length: np.ndarray, rotation_angle: np.ndarray,
                steer: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The block's (4, 3) Translation and Rotation arrays (see
    :class:`~simcore.motorcycle.states.MotorcyclePose`).

    Row 0: the centre of mass in the inertial SAE frame and (roll 0, pitch, yaw 0). Row 1: the
    handlebar — fixed on the steering head in this in-plane model, so no translation; yaw = steer.
    Rows 2, 3: the wheel centres' displacement from their design positions along the suspension
    axes, in vehicle axes (compression moves a wheel up: negative Z), and the wheel spin as a
    rotation about the vehicle's Y axis — negative for a wheel rolling forwards (right-hand rule
    about +Y, which points right)."""
    translation = np.zeros((4, 3))
    rotation = np.zeros((4, 3))
    translation[0] = pos
    rotation[0, 1] = pitch
    rotation[1, 2] = steer
    delta = (np.asarray(suspension_length) - p.suspension_length)[:, None] * g.axis  # (2, 2) x, z
    translation[2, [0, 2]] = delta[FRONT]
    translation[3, [0, 2]] = delta[REAR]
    rotation[2, 1] = -float(rotation_angle[FRONT])
    rotation[3, 1] = -float(rotation_angle[REAR])
    return translation, rotation


def light_controls(p: MotorcycleParams, cmd: MotorcycleCommands) -> np.ndarray:
    """The block's 1x5 light vector (high beam, low beam, brake, left, right) as uint8 0/1; the
    brake light is on while either brake command exceeds ``brake_light_threshold``."""
    braking = max(cmd.front_brake, cmd.rear_brake) > p.brake_light_threshold
    return np.array([cmd.high_beam, cmd.low_beam, braking, cmd.left_indicator, cmd.right_indicator],
                    dtype=np.uint8)


def braking_pitch_estimate(p: MotorcycleParams, deceleration: float, front_share: float) -> float:
    """Closed-form pitch (rad, negative = nose down) in steady braking at ``deceleration`` (m/s^2,
    > 0) on level ground, for small angles, with drag and rolling resistance neglected;
    ``front_share``: the front wheel's share of the braking force.

    Load transfer dN = m a h / L moves from the rear to the front. The fork's axial force
    S = N cos(rake) + |F_xf| sin(rake) grows by dN cos(rake) + |dF_xf| sin(rake) (the braking force
    also pushes a raked fork in: brake dive), so the fork shortens by that over k_f and the front
    wheel rises towards the body by that times cos(rake); the rear spring extends by dN / k_r.
    With both wheel centres held at wheel-radius height, the body pitches by the difference of
    the two over the wheelbase (the lever arm is the wheelbase, not the distance between the
    suspension attachments, because the raked fork turns with the body)."""
    total = p.mass * deceleration
    dn = total * p.cg_height / p.wheelbase
    ds_front = dn * math.cos(p.rake) + front_share * total * math.sin(p.rake)
    rise_front = ds_front / p.spring_stiffness[FRONT] * math.cos(p.rake)
    drop_rear = dn / p.spring_stiffness[REAR]
    return -(rise_front + drop_rear) / p.wheelbase
