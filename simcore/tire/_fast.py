"""Fused compiled kernel behind :class:`~simcore.tire.components.TireComponent` and the fleet's
:class:`~simcore.tire.batch.TireBatchComponent`.

The plain functions of :mod:`simcore.tire.functions` run dozens of numpy operations on arrays of
4-20 rows per update, so numpy's per-call overhead, not arithmetic, sets their cost.
:func:`_fused_batch` does the same per-wheel arithmetic — tire directions, contact speeds, slips,
camber, grip, sticky state and the Michigan force model — in one numba loop over every vehicle
and wheel of a batch and writes the results straight into the tire states.

Every expression mirrors the plain functions operation by operation (same operand order, no
fast math), so on one machine the results equal the plain functions' to the last bit;
``tests/simcore/test_tire_fast_path.py`` checks that.

One kernel behind both: a single vehicle (:func:`tire_update_fused`) is run as a batch of one
(:func:`_fused_one`), so a fleet's vehicle and a vehicle alone get the same bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pvdkit.jit import njit
from simcore.context import TireSlipParams, TireStickyParams
from simcore.frame import Frame
from simcore.maths import qrot
from simcore.suspension._fast import (
    G_RADIUS,
    G_TDIR,
    G_TDIST,
    attachment_point,
    frame_axes,
    pack_geometry,
)
from simcore.suspension._fast import wheel_pose as _wheel_pose
from simcore.suspension.params import SuspensionParams
from simcore.suspension.states import UNSPECIFIED_JOUNCE
from simcore.tire.functions import MINIMUM_SLIP_THRESHOLD
from simcore.tire.params import TireForceParams
from simcore.wheel.params import WheelParams

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}

# Columns of the packed tire params (n, TIRE_WIDTH).
T_LSX, T_LSY, T_LONG, T_CAMBER, T_REST = 0, 1, 2, 3, 4
T_LF = 5  # load filter xmin, ymin, xmax, ymax
T_FVS = 9  # friction vs slip x0, y0, x1, y1, x2, y2
TIRE_WIDTH = 15
# Scalars (SCALARS_WIDTH,): slip denominators, then sticky threshold speed/time (lng, lat).
S_MIN_LAT, S_MIN_PASSIVE, S_MIN_ACTIVE, S_LNG_SPEED, S_LNG_TIME, S_LAT_SPEED, S_LAT_TIME = range(7)
SCALARS_WIDTH = 7


@njit(**_JIT)
def _smoothing_1(k):  # pragma: no cover - compiled
    x = k - k * k / 3.0 + k * k * k / 27.0
    return 1.0 if x > 1.0 else x


@njit(**_JIT)
def _clamp_slip(x):  # pragma: no cover - compiled
    return x if abs(x) >= MINIMUM_SLIP_THRESHOLD else 0.0


@njit(**_JIT)
def _normalize(x, y, z):  # pragma: no cover - compiled
    length = np.sqrt(x * x + y * y + z * z)
    d = length if length > 0.0 else 1.0
    return x / d, y / d, z / d


@njit(**_JIT)
def _fused_batch(
    axes, signs, frame_axes_world, g, t, sc, dt,
    steer, plane, separation, jounce, comp_toe, comp_camber, tfa, omega, body_pos, body_quat, linear_velocity,
    angular_velocity, road_velocity, road_friction, normal_force, brake_applied, drive_applied,
    directions, speeds, slips, camber_out, load_out, friction_out, sticky_time, sticky_active,
    forces, torques, aligning_out, wheel_torque_out,
):  # pragma: no cover - compiled
    """The fused tire update of every vehicle of a batch: each per-vehicle argument with a leading
    vehicle axis (the frame's ``axes``/``signs``/``frame_axes_world`` and ``dt`` are shared).

    The vehicle loop is inside the kernel, not a call per vehicle: a compiled call with thirty
    array arguments costs about 700 ns in reference counting alone, more than the arithmetic of
    a vehicle's four wheels."""
    unspecified = UNSPECIFIED_JOUNCE
    two_pi = 2.0 * np.pi
    lat_x, lat_y, lat_z = frame_axes_world[0, 0], frame_axes_world[0, 1], frame_axes_world[0, 2]
    lng_x, lng_y, lng_z = frame_axes_world[1, 0], frame_axes_world[1, 1], frame_axes_world[1, 2]
    origin = np.zeros(3)
    n = steer.shape[1]
    for v in range(steer.shape[0]):
        b_pos = body_pos[v]
        b_quat = body_quat[v]
        bx, by, bz, bw = b_quat[0], b_quat[1], b_quat[2], b_quat[3]
        lvx, lvy, lvz = linear_velocity[v, 0], linear_velocity[v, 1], linear_velocity[v, 2]
        avx, avy, avz = angular_velocity[v, 0], angular_velocity[v, 1], angular_velocity[v, 2]
        accelerate = False
        brake = False
        for i in range(n):
            accelerate = accelerate or drive_applied[v, i]
            brake = brake or brake_applied[v, i]
        for i in range(n):
            nx, ny, nz = plane[v, i, 0], plane[v, i, 1], plane[v, i, 2]
            on = separation[v, i] <= 0.0
            # --- wheel axes with steer, toe and camber (compute_tire_wheel_axes) ---
            # The contact point below needs the pose without toe and camber; with no compliance (+0.0
            # toe and camber) the two poses have the same orientation to the bit, so one call serves.
            no_compliance = (comp_camber[v, i] == 0.0 and math.copysign(1.0, comp_camber[v, i]) > 0.0
                             and comp_toe[v, i] == 0.0 and math.copysign(1.0, comp_toe[v, i]) > 0.0)
            if no_compliance:
                pose = _wheel_pose(axes, signs, g[v], i, unspecified, 0.0, steer[v, i] + 0.0, 0.0, b_pos,
                                   b_quat)
                qx, qy, qz, qw = pose[3], pose[4], pose[5], pose[6]
            else:
                _, _, _, qx, qy, qz, qw = _wheel_pose(
                    axes, signs, g[v], i, unspecified, comp_camber[v, i], steer[v, i] + comp_toe[v, i], 0.0,
                    origin, b_quat,
                )
            ltx, lty, ltz = qrot(qx, qy, qz, qw, lat_x, lat_y, lat_z)
            lgx, lgy, lgz = qrot(qx, qy, qz, qw, lng_x, lng_y, lng_z)
            # --- directions (tire_dirs_from_axes) ---
            rx = lty * nz - ltz * ny
            ry = ltz * nx - ltx * nz
            rz = ltx * ny - lty * nx
            ux = ny * rz - nz * ry
            uy = nz * rx - nx * rz
            uz = nx * ry - ny * rx
            if on:
                d0x, d0y, d0z = _normalize(rx, ry, rz)
                d1x, d1y, d1z = _normalize(ux, uy, uz)
            else:
                d0x = d0y = d0z = d1x = d1y = d1z = 0.0
            directions[v, i, 0, 0], directions[v, i, 0, 1], directions[v, i, 0, 2] = d0x, d0y, d0z
            directions[v, i, 1, 0], directions[v, i, 1, 1], directions[v, i, 1, 2] = d1x, d1y, d1z
            # --- contact-point speeds (tire_slip_speeds_update) ---
            if not no_compliance:
                pose = _wheel_pose(axes, signs, g[v], i, unspecified, 0.0, steer[v, i] + 0.0, 0.0, b_pos,
                                   b_quat)
            px, py, pz = pose[0], pose[1], pose[2]
            dx, dy, dz = qrot(bx, by, bz, bw, g[v, i, G_TDIR], g[v, i, G_TDIR + 1], g[v, i, G_TDIR + 2])
            radius = g[v, i, G_RADIUS]
            sx, sy, sz = px - dx * radius, py - dy * radius, pz - dz * radius
            extend = g[v, i, G_TDIST] + 2.0 * radius - jounce[v, i]
            cx = sx + dx * extend - b_pos[0]
            cy = sy + dy * extend - b_pos[1]
            cz = sz + dz * extend - b_pos[2]
            vx = lvx + (avy * cz - avz * cy) - road_velocity[v, i, 0]
            vy = lvy + (avz * cx - avx * cz) - road_velocity[v, i, 1]
            vz = lvz + (avx * cy - avy * cx) - road_velocity[v, i, 2]
            # Summed as numpy's einsum sums a length-3 contraction ((x + z) + y), to match the plain
            # function to the bit.
            v_lng = (d0x * vx + d0z * vz) + d0y * vy
            v_lat = (d1x * vx + d1z * vz) + d1y * vy
            speeds[v, i, 0] = v_lng
            speeds[v, i, 1] = v_lat
            # --- slips (tire_slips_update) ---
            lat_slip = np.arctan(v_lat / (abs(v_lng) + sc[v, S_MIN_LAT]))
            w = omega[v, i]
            torque_applied = brake_applied[v, i] or drive_applied[v, i]
            denominator = abs(v_lng) + (sc[v, S_MIN_ACTIVE] if torque_applied else sc[v, S_MIN_PASSIVE])
            lng_slip = (w * radius - v_lng) / denominator
            if v_lng == 0.0 and w == 0.0:
                lng_slip = 0.0
            # --- camber (tire_camber_from_axes) ---
            nd = nx * lgx + ny * lgy + nz * lgz
            ex, ey, ez = _normalize(nx - lgx * nd, ny - lgy * nd, nz - lgz * nd)
            sin_camber = ex * ltx + ey * lty + ez * ltz
            sin_camber = -1.0 if sin_camber < -1.0 else (1.0 if sin_camber > 1.0 else sin_camber)
            camber = np.arcsin(sin_camber) if on else 0.0
            camber_out[v, i] = camber
            # --- grip (tire_grip_update) ---
            rest = t[v, i, T_REST]
            x = normal_force[v, i] / rest
            xmin, ymin, xmax, ymax = t[v, i, T_LF], t[v, i, T_LF + 1], t[v, i, T_LF + 2], t[v, i, T_LF + 3]
            span = xmax - xmin if xmax > xmin else 1.0
            if x <= xmin:
                filtered = ymin
            elif x >= xmax:
                filtered = ymax
            else:
                filtered = ymin + (x - xmin) * (ymax - ymin) / span
            load = rest * filtered if on else 0.0
            s = abs(lng_slip)
            x0, y0, x1, y1 = t[v, i, T_FVS], t[v, i, T_FVS + 1], t[v, i, T_FVS + 2], t[v, i, T_FVS + 3]
            x2, y2 = t[v, i, T_FVS + 4], t[v, i, T_FVS + 5]
            if s < x1:
                multiplier = y0 + (y1 - y0) * (s - x0) / (x1 - x0 if x1 != x0 else 1.0)
            elif s < x2:
                multiplier = y1 + (y2 - y1) * (s - x1) / (x2 - x1 if x2 != x1 else 1.0)
            else:
                multiplier = y2
            friction = road_friction[v, i] * multiplier if on else 0.0
            load_out[v, i] = load
            friction_out[v, i] = friction
            # --- sticky state (tire_sticky_state_update) ---
            has_grip = load * friction != 0.0
            lng_ts = sc[v, S_LNG_SPEED]
            lng_slow = abs(v_lng) < lng_ts and abs(w * radius) < lng_ts
            lng_time = sticky_time[v, i, 0] + dt if (lng_slow and not accelerate) else 0.0
            lng_active = (abs(v_lng) < lng_ts and w == 0.0 and brake) or lng_time > sc[v, S_LNG_TIME]
            lat_slow = abs(v_lat) < sc[v, S_LAT_SPEED]
            lat_time = sticky_time[v, i, 1] + dt if (lat_slow and not accelerate) else 0.0
            lat_active = lng_time > 0.0 and lat_time > sc[v, S_LAT_TIME]
            sticky_time[v, i, 0] = lng_time if has_grip else 0.0
            sticky_time[v, i, 1] = lat_time if has_grip else 0.0
            lng_active = has_grip and lng_active
            lat_active = has_grip and lat_active
            sticky_active[v, i, 0] = lng_active
            sticky_active[v, i, 1] = lat_active
            # --- slips without the sticky axes (tire_slips_accounting_for_sticky_states) ---
            if lng_active:
                lng_slip = 0.0
            if lat_active:
                lat_slip = 0.0
            slips[v, i, 0] = lng_slip
            slips[v, i, 1] = lat_slip
            # --- Michigan force model (compute_tire_force_michigan) ---
            s = _clamp_slip(lng_slip)
            alpha = _clamp_slip(lat_slip)
            gamma = _clamp_slip(camber)
            lsx, lsy = t[v, i, T_LSX], t[v, i, T_LSY]
            long_stiff, camber_stiff = t[v, i, T_LONG], t[v, i, T_CAMBER]
            if lsx == 0.0:
                lat_stiff = lsy
            else:
                lat_stiff = lsy * _smoothing_1(load / rest * 3.0 / lsx)
            grip = friction * load
            active = grip != 0.0 and not (
                alpha * lat_stiff == 0.0 and s * long_stiff == 0.0 and gamma * camber_stiff == 0.0
            )
            if active:
                safe_lat_stiff = lat_stiff if lat_stiff != 0.0 else 1.0
                t_eff = np.tan(alpha + gamma * camber_stiff / safe_lat_stiff)
                a = lat_stiff * t_eff
                b = long_stiff * s
                k = np.sqrt(a * a + b * b) / grip
                f_bar = _smoothing_1(k)
                m_bar = k - k * k + k * k * k / 3.0 - k * k * k * k / 27.0
                ratio = lat_stiff / long_stiff
                nu = 0.5 * (1.0 + ratio - (1.0 - ratio) * np.cos(0.5 * k)) if k <= two_pi else 1.0
                c = nu * t_eff
                denominator = np.sqrt(s * s + c * c)
                f_zero = grip / (denominator if denominator > 0.0 else 1.0)
                lng_force = s * f_bar * f_zero
                lat_force = -nu * t_eff * f_bar * f_zero
                aligning = nu * 1.0 * t_eff * m_bar * f_zero
            else:
                lng_force = lat_force = aligning = 0.0
            aligning_out[v, i] = aligning
            wheel_torque_out[v, i] = -lng_force * radius
            # --- force vectors and their torques (tire_forces_update) ---
            ax, ay, az = attachment_point(g[v], i, tfa[v, i, 0], tfa[v, i, 1], tfa[v, i, 2])
            mx, my, mz = qrot(bx, by, bz, bw, ax, ay, az)
            for d in range(2):
                f = lng_force if d == 0 else lat_force
                fx = directions[v, i, d, 0] * f
                fy = directions[v, i, d, 1] * f
                fz = directions[v, i, d, 2] * f
                forces[v, i, d, 0], forces[v, i, d, 1], forces[v, i, d, 2] = fx, fy, fz
                torques[v, i, d, 0] = my * fz - mz * fy
                torques[v, i, d, 1] = mz * fx - mx * fz
                torques[v, i, d, 2] = mx * fy - my * fx


@njit(**_JIT)
def _fused_one(
    axes, signs, frame_axes_world, g, t, sc, dt,
    steer, plane, separation, jounce, comp_toe, comp_camber, tfa, omega, body_pos, body_quat, linear_velocity,
    angular_velocity, road_velocity, road_friction, normal_force, brake_applied, drive_applied,
    directions, speeds, slips, camber_out, load_out, friction_out, sticky_time, sticky_active,
    forces, torques, aligning_out, wheel_torque_out,
):  # pragma: no cover - compiled
    """:func:`_fused_batch` on one vehicle: its arrays as a batch of one (views, no copies)."""
    _fused_batch(
        axes, signs, frame_axes_world, g[None], t[None], sc[None], dt,
        steer[None], plane[None], separation[None], jounce[None], comp_toe[None], comp_camber[None],
        tfa[None], omega[None], body_pos[None], body_quat[None], linear_velocity[None],
        angular_velocity[None], road_velocity[None], road_friction[None], normal_force[None],
        brake_applied[None], drive_applied[None], directions[None], speeds[None], slips[None],
        camber_out[None], load_out[None], friction_out[None], sticky_time[None], sticky_active[None],
        forces[None], torques[None], aligning_out[None], wheel_torque_out[None],
    )


@dataclass(frozen=True)
class FusedTire:
    """Everything constant the fused tire kernel needs, packed once per params set."""

    key: tuple[object, ...]
    axes: np.ndarray
    signs: np.ndarray
    frame_axes_world: np.ndarray
    geometry: np.ndarray
    tire: np.ndarray
    scalars: np.ndarray

    @classmethod
    def build(
        cls,
        key: tuple[object, ...],
        frame: Frame,
        wheel: WheelParams,
        suspension: SuspensionParams,
        tire: TireForceParams,
        slip_params: TireSlipParams,
        sticky_params: TireStickyParams,
    ) -> FusedTire:
        axes, signs = frame_axes(frame)
        n = tire.nb_wheels
        t = np.zeros((n, TIRE_WIDTH))
        t[:, T_LSX] = tire.lat_stiff_x
        t[:, T_LSY] = tire.lat_stiff_y
        t[:, T_LONG] = tire.long_stiff
        t[:, T_CAMBER] = tire.camber_stiff
        t[:, T_REST] = tire.rest_load
        t[:, T_LF:T_LF + 4] = np.asarray(tire.load_filter, dtype=np.float64).reshape(n, 4)
        t[:, T_FVS:T_FVS + 6] = np.asarray(tire.friction_vs_slip, dtype=np.float64).reshape(n, 6)
        scalars = np.zeros(SCALARS_WIDTH)
        scalars[S_MIN_LAT] = slip_params.min_lat_slip_denominator
        scalars[S_MIN_PASSIVE] = slip_params.min_passive_long_slip_denominator
        scalars[S_MIN_ACTIVE] = slip_params.min_active_long_slip_denominator
        scalars[S_LNG_SPEED] = sticky_params.longitudinal.threshold_speed
        scalars[S_LNG_TIME] = sticky_params.longitudinal.threshold_time
        scalars[S_LAT_SPEED] = sticky_params.lateral.threshold_speed
        scalars[S_LAT_TIME] = sticky_params.lateral.threshold_time
        return cls(
            key=key,
            axes=axes,
            signs=signs,
            frame_axes_world=np.ascontiguousarray(np.stack((frame.lat, frame.lng)), dtype=np.float64),
            geometry=pack_geometry(wheel, suspension),
            tire=t,
            scalars=scalars,
        )


def _f64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def tire_update_fused(
    packed: FusedTire,
    dt: float,
    steer: np.ndarray,
    plane: np.ndarray,
    separation: np.ndarray,
    jounce: np.ndarray,
    toe: np.ndarray,
    camber: np.ndarray,
    tire_force_app_point: np.ndarray,
    rotation_speed: np.ndarray,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
    linear_velocity: np.ndarray,
    angular_velocity: np.ndarray,
    road_velocity: np.ndarray,
    road_friction: np.ndarray,
    normal_force: np.ndarray,
    brake_applied: np.ndarray,
    drive_applied: np.ndarray,
    out: tuple[np.ndarray, ...],
) -> None:
    """Run the fused tire update; ``out`` holds the state arrays written in place:
    ``(directions, speed_states, slips, camber_angle, load, friction, low_speed_time (previous timers
    in), active_status, forces, torques, aligning_moment, wheel_torque)``. Equals, per wheel, the
    plain sequence of :class:`~simcore.tire.components.TireComponent` (directions, speeds, slips,
    camber, grip, sticky state, sticky slips, forces).
    """
    _fused_one(
        packed.axes, packed.signs, packed.frame_axes_world, packed.geometry, packed.tire, packed.scalars,
        float(dt), _f64(steer), _f64(plane), _f64(separation), _f64(jounce), _f64(toe), _f64(camber),
        _f64(tire_force_app_point), _f64(rotation_speed), _f64(body_pos), _f64(body_quat),
        _f64(linear_velocity), _f64(angular_velocity), _f64(road_velocity), _f64(road_friction),
        _f64(normal_force), np.ascontiguousarray(brake_applied, dtype=np.bool_),
        np.ascontiguousarray(drive_applied, dtype=np.bool_), *out,
    )


__all__ = ["FusedTire", "tire_update_fused"]
