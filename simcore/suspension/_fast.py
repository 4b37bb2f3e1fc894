"""Fused compiled kernel behind :class:`~simcore.suspension.components.SuspensionComponent`.

A vehicle has 4-20 wheels, so the plain functions of :mod:`simcore.suspension.functions` spend
their time in numpy's per-call overhead (dozens of tiny array operations per update), not in the
arithmetic. :func:`_fused_batch` does the same per-wheel arithmetic — jounce (raycast or
sweep), the expansion-velocity limit, compliance, spring force and anti-roll torque — in one
numba loop over every vehicle and wheel of a batch and writes the results straight into the
states.

The arithmetic mirrors the plain functions operation by operation (same operand order, no fast
math), so the results are the plain functions' results to the last bit on the same machine;
``tests/simcore/test_suspension_fast_path.py`` checks that against the plain functions.
The wheel-pose chain, quaternion product and rotation are those of :mod:`simcore.wheel.helpers`
and :mod:`simcore.maths` (``PxQuat`` algebra in float64).

One kernel behind both the fleet (:mod:`simcore.suspension.batch`) and a vehicle alone
(:func:`suspension_update_fused`, run as a batch of one by :func:`_fused_one`), so a fleet's
vehicle and a single vehicle get the same bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pvdkit.jit import njit
from simcore.frame import Frame
from simcore.maths import qmul, qrot
from simcore.suspension.params import (
    AntiRollBarParams,
    ComplianceTable,
    JounceCalculationType,
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.suspension.states import NO_INTERSECTION_SEPARATION, UNSPECIFIED_JOUNCE
from simcore.wheel.params import WheelParams

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}

# Columns of the packed per-wheel geometry array (n, GEOM_WIDTH) built by :func:`pack_geometry`.
G_SPOS, G_SQUAT, G_TDIR, G_TDIST, G_WPOS, G_WQUAT = 0, 3, 7, 10, 11, 14
G_RADIUS, G_HALF_WIDTH, G_MASS, G_STIFF, G_DAMP, G_SPRUNG = 18, 19, 20, 21, 22, 23
GEOM_WIDTH = 24


@njit(inline="always", **_JIT)
def attachment_point(g, i, px, py, pz):  # pragma: no cover - compiled
    """Point ``p`` of wheel ``i``'s suspension frame in the body frame: ``pos + quat.rotate(p)``."""
    ox, oy, oz = qrot(g[i, G_SQUAT], g[i, G_SQUAT + 1], g[i, G_SQUAT + 2], g[i, G_SQUAT + 3], px, py, pz)
    return g[i, G_SPOS] + ox, g[i, G_SPOS + 1] + oy, g[i, G_SPOS + 2] + oz


@njit(**_JIT)
def _scatter(axes, lng, lat, vrt):  # pragma: no cover - compiled
    """World (x, y, z) of a vector given by its (lng, lat, vrt) components (``axes``: their world
    indices; signs already applied). Each component is added to 0.0, as a scatter-add would."""
    x = y = z = 0.0
    for k in range(3):
        v = lng if k == 0 else (lat if k == 1 else vrt)
        a = axes[k]
        if a == 0:
            x += v
        elif a == 1:
            y += v
        else:
            z += v
    return x, y, z


@njit(**_JIT)
def _half_angle(angle):  # pragma: no cover - compiled
    """``(cos(angle / 2), sin(angle / 2))``, without the two calls for a zero angle (most wheel
    angles in a pose are: no camber, no steer, no rotation). Exact: cos(±0) = 1, sin(±0) = ±0."""
    h = 0.5 * angle
    if h == 0.0:
        return 1.0, h
    return np.cos(h), np.sin(h)


@njit(inline="always", **_JIT)
def wheel_pose(axes, signs, g, i, jounce, camber, yaw, rot, b_pos, b_quat):  # pragma: no cover - compiled
    """World pose ``(px, py, pz, qx, qy, qz, qw)`` of wheel ``i`` (the chain of :mod:`simcore.wheel.helpers`).

    ``g`` is the packed geometry (:func:`pack_geometry`); ``jounce`` may be ``UNSPECIFIED_JOUNCE``
    (wheel at max compression).
    """
    unspecified = UNSPECIFIED_JOUNCE
    bx, by, bz, bw = b_quat[0], b_quat[1], b_quat[2], b_quat[3]
    cr, sr = _half_angle(camber)
    cy, sy = _half_angle(yaw)
    fx, fy, fz = _scatter(axes, signs[0] * cy * sr, signs[1] * sy * sr, signs[2] * sy * cr)
    sx, sy_, sz, sw = qmul(
        g[i, G_SQUAT], g[i, G_SQUAT + 1], g[i, G_SQUAT + 2], g[i, G_SQUAT + 3], fx, fy, fz, cy * cr
    )
    cp, sp = _half_angle(rot)
    hx, hy, hz = _scatter(axes, 0.0, signs[1] * sp, 0.0)
    wx, wy, wz, ww = qmul(
        g[i, G_WQUAT], g[i, G_WQUAT + 1], g[i, G_WQUAT + 2], g[i, G_WQUAT + 3], hx, hy, hz, cp
    )
    qx, qy, qz, qw = qmul(sx, sy_, sz, sw, wx, wy, wz, ww)
    dist = g[i, G_TDIST] - jounce if jounce != unspecified else 0.0
    ox, oy, oz = qrot(sx, sy_, sz, sw, g[i, G_WPOS], g[i, G_WPOS + 1], g[i, G_WPOS + 2])
    px = g[i, G_SPOS] + g[i, G_TDIR] * dist + ox
    py = g[i, G_SPOS + 1] + g[i, G_TDIR + 1] * dist + oy
    pz = g[i, G_SPOS + 2] + g[i, G_TDIR + 2] * dist + oz
    px, py, pz = qrot(bx, by, bz, bw, px, py, pz)
    ox, oy, oz, ow = qmul(bx, by, bz, bw, qx, qy, qz, qw)
    return b_pos[0] + px, b_pos[1] + py, b_pos[2] + pz, ox, oy, oz, ow


@njit(**_JIT)
def _jounce_and_separation(depth, k, travel, prev):  # pragma: no cover - compiled
    """Scalar form of :func:`simcore.suspension.functions.compute_jounce_and_separation`."""
    unspecified = UNSPECIFIED_JOUNCE
    not_perp = k != 0.0
    delta = depth / (k if not_perp else 1.0)
    safe_delta = delta if delta != 0.0 else 1.0
    overlap = not_perp and depth <= 0.0
    in_range = overlap and delta > 0.0 and delta <= travel
    beyond_compression = overlap and delta > travel
    jounce = 0.0
    separation = NO_INTERSECTION_SEPARATION
    if in_range:
        jounce = delta
        separation = 0.0
    elif beyond_compression:
        jounce = travel
        separation = depth * (delta - travel) / safe_delta
    elif overlap:
        separation = depth
    elif not not_perp and depth < 0.0:
        jounce = prev if prev != unspecified else travel
        separation = depth
    return jounce, separation


@njit(**_JIT)
def _lookup(x, y, nb, w, r, c):  # pragma: no cover - compiled
    """Component ``c`` of compliance table (x, y (n, 3, m), nb) of wheel ``w`` at normalised jounce ``r``."""
    k = nb[w]
    if k == 0:
        return 0.0
    if r < x[w, 0]:
        return y[w, 0, c]
    for i in range(1, 3):
        if k > i and r >= x[w, i - 1] and r < x[w, i]:
            t = (r - x[w, i - 1]) / (x[w, i] - x[w, i - 1])
            return y[w, i - 1, c] + (y[w, i, c] - y[w, i - 1, c]) * t
    return y[w, k - 1, c]


@njit(inline="always", **_JIT)
def _sweep_depth(axes, signs, lat_axis, g, i, steer, plane, b_pos, b_quat, dx_, dy_, dz_):  # pragma: no cover
    """Depth of wheel ``i``'s cylinder (at max droop) in its plane: scalar ``intersect_cylinder_plane``."""
    unspecified = UNSPECIFIED_JOUNCE
    sx, sy, sz, qx, qy, qz, qw = wheel_pose(
        axes, signs, g, i, unspecified, 0.0, steer + 0.0, 0.0, b_pos, b_quat
    )
    travel = g[i, G_TDIST]
    cx = sx + dx_ * travel
    cy = sy + dy_ * travel
    cz = sz + dz_ * travel
    lx, ly, lz = qrot(qx, qy, qz, qw, lat_axis[0], lat_axis[1], lat_axis[2])
    wheel_d = -(lx * cx + ly * cy + lz * cz)
    nx, ny, nz, plane_d = plane[i, 0], plane[i, 1], plane[i, 2], plane[i, 3]
    # line where the wheel's mid-plane meets the road plane (simcore.suspension.functions._intersect_planes)
    d1, d2 = wheel_d, plane_d
    ex = ly * nz - lz * ny
    ey = lz * nx - lx * nz
    ez = lx * ny - ly * nx
    ex2, ey2, ez2 = ex * ex, ey * ey, ez * ez
    case_z = ez2 > ey2 and ez2 > ex2 and ez2 > 0.0
    case_y = not case_z and ey2 > ex2 and ey2 > 0.0
    case_x = not case_z and not case_y and ex2 > 0.0
    ok = case_z or case_y or case_x
    vx = vy = vz = 0.0
    if case_z:
        vx = (ly * d2 - ny * d1) / ez
        vy = (nx * d1 - lx * d2) / ez
    elif case_y:
        vx = -(lz * d2 - nz * d1) / ey
        vz = -(nx * d1 - lx * d2) / ey
    elif case_x:
        vy = (lz * d2 - nz * d1) / ex
        vz = (ny * d1 - ly * d2) / ex
    length = np.sqrt(ex2 + ey2 + ez2)
    div = length if ok else 1.0
    wx, wy, wz = ex / div, ey / div, ez / div
    nl = nx * lx + ny * ly + nz * lz
    sign_dot = 1.0 if nl > 0.0 else (-1.0 if nl < 0.0 else (0.0 if nl == 0.0 else nl))
    t = (cx - vx) * wx + (cy - vy) * wy + (cz - vz) * wz
    clx = vx + wx * t
    cly = vy + wy * t
    clz = vz + wz * t
    centre_dist = nx * cx + ny * cy + nz * cz + plane_d
    if centre_dist >= 0.0:
        tx, ty, tz = clx - cx, cly - cy, clz - cz
    else:
        tx, ty, tz = cx - clx, cy - cly, cz - clz
    tl = np.sqrt(tx * tx + ty * ty + tz * tz)
    tl = tl if tl > 0.0 else 1.0
    radius = g[i, G_RADIUS]
    rx = cx + tx / tl * radius
    ry = cy + ty / tl * radius
    rz = cz + tz / tl * radius
    off = sign_dot * g[i, G_HALF_WIDTH]
    px, py, pz = rx - lx * off, ry - ly * off, rz - lz * off
    if ok:
        return nx * px + ny * py + nz * pz + plane_d
    return plane_d - g[i, G_HALF_WIDTH] - sign_dot * wheel_d


@njit(**_JIT)
def _fused_batch(
    mode, limit, axes, signs, lat_axis, g, steer, plane, hit, b_pos, b_quat, gravity, ext_force, ext_torque,
    dt, vehicle_mass, tables_x, tables_nb, toe_y, camber_y, tfa_y, sfa_y, bars_w, bars_k, nb_bars,
    jounce, jounce_speed, separation, toe, camber, tfa, sfa, force, torque, normal_force, arb,
):  # pragma: no cover - compiled
    """The fused suspension update of every vehicle of a batch: each per-vehicle argument with a
    leading vehicle axis (the frame's ``axes``/``signs``/``lat_axis``, ``gravity`` and ``dt`` are
    shared). Vehicle ``v`` uses the first ``nb_bars[v]`` rows of its (padded) anti-roll bar arrays.

    The vehicle loop is inside the kernel, not a call per vehicle: a compiled call with thirty
    array arguments costs about 700 ns in reference counting alone, more than the arithmetic of
    a vehicle's four wheels."""
    unspecified = UNSPECIFIED_JOUNCE
    no_sep = NO_INTERSECTION_SEPARATION
    gx, gy, gz = gravity[0], gravity[1], gravity[2]
    for v in range(jounce.shape[0]):
        bx, by, bz, bw = b_quat[v, 0], b_quat[v, 1], b_quat[v, 2], b_quat[v, 3]
        body_mass = vehicle_mass[v]
        elx = gx * body_mass + ext_force[v, 0]
        ely = gy * body_mass + ext_force[v, 1]
        elz = gz * body_mass + ext_force[v, 2]
        etx, ety, etz = ext_torque[v, 0], ext_torque[v, 1], ext_torque[v, 2]
        for i in range(jounce.shape[1]):
            dx, dy, dz = qrot(bx, by, bz, bw, g[v, i, G_TDIR], g[v, i, G_TDIR + 1], g[v, i, G_TDIR + 2])
            travel = g[v, i, G_TDIST]
            prev_j = jounce[v, i]
            prev_v = jounce_speed[v, i]
            nx, ny, nz = plane[v, i, 0], plane[v, i, 1], plane[v, i, 2]
            # --- jounce and separation (suspension_state_update) ---
            if mode[v] == 0:
                pose = wheel_pose(axes, signs, g[v], i, 0.0, 0.0, steer[v, i] + 0.0, 0.0, b_pos[v], b_quat[v])
                px, py, pz = pose[0], pose[1], pose[2]
                k = dx * nx + dy * ny + dz * nz
                sgn = 1.0 if k < 0.0 else (-1.0 if k > 0.0 else 0.0)
                offset = sgn * g[v, i, G_RADIUS]
                rx, ry, rz = px + dx * offset, py + dy * offset, pz + dz * offset
                depth = nx * rx + ny * ry + nz * rz + plane[v, i, 3]
            else:
                depth = _sweep_depth(axes, signs, lat_axis, g[v], i, steer[v, i], plane[v], b_pos[v],
                                     b_quat[v], dx, dy, dz)
                k = nx * dx + ny * dy + nz * dz
            j, s = _jounce_and_separation(depth, k, travel, prev_j)
            specified = prev_j != unspecified
            h = hit[v, i]
            jn = j if h else 0.0
            sep = s if h else no_sep
            safe_prev = prev_j if specified else 0.0
            speed = (jn - safe_prev) / dt if (h and specified) else 0.0
            if limit[v]:
                no_hit_apply = (not h) and specified and safe_prev > 0.0
                apply = no_hit_apply or (h and speed < 0.0)
                requested = -safe_prev / dt if no_hit_apply else speed
                pj = safe_prev if apply else 0.0
                pv = prev_v if apply else 0.0
                mass = g[v, i, G_MASS]
                vel_spring = pj * g[v, i, G_STIFF] / mass * dt
                vel_damping = pv * g[v, i, G_DAMP] / mass * dt
                vel = vel_spring - pv
                tmp = vel + vel_damping
                if vel >= 0.0:
                    vel = tmp if not tmp < 0.0 else 0.0
                else:
                    vel = tmp if not tmp > 0.0 else 0.0
                g_along = dx * gx + dy * gy + dz * gz
                threshold = vel + g_along * dt if (h and g_along > 0.0) else vel
                if apply and requested < -threshold:
                    clamped_jounce = pj - vel * dt
                    if sep >= 0.0:
                        sep = clamped_jounce - jn
                    jn = clamped_jounce
                    speed = -vel
            jounce[v, i] = jn
            jounce_speed[v, i] = speed
            separation[v, i] = sep
            # --- compliance at the normalised jounce ---
            r = jn / travel
            toe[v, i] = _lookup(tables_x[v, 0], toe_y[v], tables_nb[v, 0], i, r, np.int64(0))
            camber[v, i] = _lookup(tables_x[v, 1], camber_y[v], tables_nb[v, 1], i, r, np.int64(0))
            for c in range(3):
                tfa[v, i, c] = _lookup(tables_x[v, 2], tfa_y[v], tables_nb[v, 2], i, r, c)
                sfa[v, i, c] = _lookup(tables_x[v, 3], sfa_y[v], tables_nb[v, 3], i, r, c)
            # --- spring force along the ground normal (suspension_force_update) ---
            on = sep <= 0.0
            jg = jn if on else 0.0
            vg = speed if on else 0.0
            f = -(jg * g[v, i, G_STIFF] + vg * g[v, i, G_DAMP])
            magnitude = nx * (dx * f) + ny * (dy * f) + nz * (dz * f)
            cx, cy, cz = qrot(bx, by, bz, bw, g[v, i, G_SPOS], g[v, i, G_SPOS + 1], g[v, i, G_SPOS + 2])
            dist_sq = cx * cx + cy * cy + cz * cz
            if dist_sq > 0.0:
                ax = (ety * cz - etz * cy) / dist_sq
                ay = (etz * cx - etx * cz) / dist_sq
                az = (etx * cy - ety * cx) / dist_sq
            else:
                ax = ay = az = 0.0
            share = g[v, i, G_SPRUNG] / body_mass
            ex, ey, ez = (elx + ax) * share, (ely + ay) * share, (elz + az) * share
            if nx * ex + ny * ey + nz * ez < 0.0:
                along = dx * ex + dy * ey + dz * ez
                colx, coly, colz = ex - dx * along, ey - dy * along, ez - dz * along
                magnitude = magnitude + -(nx * colx + ny * coly + nz * colz)
            else:
                magnitude = magnitude + 0.0
            magnitude = magnitude if on else 0.0
            fx, fy, fz = nx * magnitude, ny * magnitude, nz * magnitude
            ax, ay, az = attachment_point(g[v], i, sfa[v, i, 0], sfa[v, i, 1], sfa[v, i, 2])
            mx, my, mz = qrot(bx, by, bz, bw, ax, ay, az)
            force[v, i, 0], force[v, i, 1], force[v, i, 2] = fx, fy, fz
            torque[v, i, 0] = my * fz - mz * fy
            torque[v, i, 1] = mz * fx - mx * fz
            torque[v, i, 2] = mx * fy - my * fx
            normal_force[v, i] = magnitude
        # --- anti-roll bars (anti_roll_force_update), summed in the body frame then rotated ---
        if nb_bars[v] > 0:
            tbx = tby = tbz = 0.0
            for b in range(nb_bars[v]):
                kb = bars_k[v, b]
                if kb == 0.0:
                    continue
                w0, w1 = bars_w[v, b, 0], bars_w[v, b, 1]
                in_air0 = jounce[v, w0] == 0.0
                in_air1 = jounce[v, w1] == 0.0
                if in_air0 and in_air1:
                    continue
                m = (jounce[v, w0] - jounce[v, w1]) * kb
                for side in range(2):
                    w = w0 if side == 0 else w1
                    fm = -m if side == 0 else m
                    if (in_air0 if side == 0 else in_air1):
                        continue
                    fx, fy, fz = g[v, w, G_TDIR] * fm, g[v, w, G_TDIR + 1] * fm, g[v, w, G_TDIR + 2] * fm
                    mx, my, mz = attachment_point(g[v], w, sfa[v, w, 0], sfa[v, w, 1], sfa[v, w, 2])
                    tbx += my * fz - mz * fy
                    tby += mz * fx - mx * fz
                    tbz += mx * fy - my * fx
            arb[v, 0], arb[v, 1], arb[v, 2] = qrot(bx, by, bz, bw, tbx, tby, tbz)


@njit(**_JIT)
def _fused_one(
    mode, limit, axes, signs, lat_axis, g, steer, plane, hit, b_pos, b_quat, gravity, ext_force, ext_torque,
    dt, vehicle_mass, tables_x, tables_nb, toe_y, camber_y, tfa_y, sfa_y, bars_w, bars_k,
    jounce, jounce_speed, separation, toe, camber, tfa, sfa, force, torque, normal_force, arb,
):  # pragma: no cover - compiled
    """:func:`_fused_batch` on one vehicle: its arrays as a batch of one (views, no copies)."""
    _fused_batch(
        np.full(1, mode), np.full(1, limit), axes, signs, lat_axis, g[None], steer[None], plane[None],
        hit[None], b_pos[None], b_quat[None], gravity, ext_force[None], ext_torque[None], dt,
        np.full(1, vehicle_mass),
        tables_x[None], tables_nb[None], toe_y[None], camber_y[None], tfa_y[None], sfa_y[None], bars_w[None],
        bars_k[None], np.full(1, bars_k.shape[0]), jounce[None], jounce_speed[None], separation[None],
        toe[None], camber[None], tfa[None], sfa[None], force[None], torque[None], normal_force[None],
        arb[None],
    )


def frame_axes(frame: Frame) -> tuple[np.ndarray, np.ndarray]:
    """World index (3,) int64 and sign (3,) of the frame's lng, lat and vrt axes."""
    axes = np.array([int(a) // 2 for a in (frame.lng_axis, frame.lat_axis, frame.vrt_axis)], dtype=np.int64)
    signs = np.array([-1.0 if int(a) % 2 else 1.0 for a in (frame.lng_axis, frame.lat_axis, frame.vrt_axis)])
    return axes, signs


def pack_geometry(
    wheel: WheelParams, suspension: SuspensionParams, force: SuspensionForceParams | None = None
) -> np.ndarray:
    """Per-wheel suspension geometry, wheel and spring params packed as columns (n, GEOM_WIDTH)."""
    n = suspension.nb_wheels
    g = np.zeros((n, GEOM_WIDTH))
    g[:, G_SPOS:G_SPOS + 3] = suspension.suspension_attachment_pos
    g[:, G_SQUAT:G_SQUAT + 4] = suspension.suspension_attachment_quat
    g[:, G_TDIR:G_TDIR + 3] = suspension.suspension_travel_dir
    g[:, G_TDIST] = suspension.suspension_travel_dist
    g[:, G_WPOS:G_WPOS + 3] = suspension.wheel_attachment_pos
    g[:, G_WQUAT:G_WQUAT + 4] = suspension.wheel_attachment_quat
    g[:, G_RADIUS] = wheel.radius
    g[:, G_HALF_WIDTH] = wheel.half_width
    g[:, G_MASS] = wheel.mass
    if force is not None:
        g[:, G_STIFF] = force.stiffness
        g[:, G_DAMP] = force.damping
        g[:, G_SPRUNG] = force.sprung_mass
    return g


def _table_y(table: ComplianceTable) -> np.ndarray:
    y = np.asarray(table.y, dtype=np.float64)
    return np.ascontiguousarray(y if y.ndim == 3 else y[:, :, None])


@dataclass(frozen=True)
class FusedSuspension:
    """Everything constant the fused kernel needs, packed once per params set (params are immutable)."""

    key: tuple[object, ...]
    mode: int
    limit: bool
    axes: np.ndarray
    signs: np.ndarray
    lat_axis: np.ndarray
    geometry: np.ndarray
    tables_x: np.ndarray
    tables_nb: np.ndarray
    toe_y: np.ndarray
    camber_y: np.ndarray
    tfa_y: np.ndarray
    sfa_y: np.ndarray
    bars_w: np.ndarray
    bars_k: np.ndarray

    @classmethod
    def build(
        cls,
        key: tuple[object, ...],
        frame: Frame,
        wheel: WheelParams,
        suspension: SuspensionParams,
        calc: SuspensionStateCalculationParams,
        compliance: SuspensionComplianceParams,
        force: SuspensionForceParams,
        bars: Sequence[AntiRollBarParams],
    ) -> FusedSuspension:
        axes, signs = frame_axes(frame)
        tables = (compliance.wheel_toe_angle, compliance.wheel_camber_angle,
                  compliance.tire_force_app_point, compliance.susp_force_app_point)
        return cls(
            key=key,
            mode=0 if calc.suspension_jounce_calculation_type == JounceCalculationType.RAYCAST else 1,
            limit=bool(calc.limit_suspension_expansion_velocity),
            axes=axes,
            signs=signs,
            lat_axis=np.ascontiguousarray(frame.lat, dtype=np.float64),
            geometry=pack_geometry(wheel, suspension, force),
            tables_x=np.ascontiguousarray(np.stack([t.x for t in tables]), dtype=np.float64),
            tables_nb=np.ascontiguousarray(np.stack([t.nb_points for t in tables]), dtype=np.int64),
            toe_y=_table_y(tables[0]),
            camber_y=_table_y(tables[1]),
            tfa_y=_table_y(tables[2]),
            sfa_y=_table_y(tables[3]),
            bars_w=np.array([[b.wheel0, b.wheel1] for b in bars], dtype=np.int64).reshape(-1, 2),
            bars_k=np.array([b.stiffness for b in bars], dtype=np.float64),
        )


def _f64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def suspension_update_fused(
    packed: FusedSuspension,
    steer: np.ndarray,
    plane: np.ndarray,
    hit_state: np.ndarray,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
    gravity: np.ndarray,
    external_force: np.ndarray,
    external_torque: np.ndarray,
    vehicle_mass: float,
    dt: float,
    out: tuple[np.ndarray, ...],
) -> None:
    """Run the fused suspension update; ``out`` holds the state arrays written in place:
    ``(jounce, jounce_speed, separation, toe, camber, tire_force_app_point, susp_force_app_point,
    force, torque, normal_force, anti_roll_torque)`` (``jounce`` and ``jounce_speed`` also carry the
    previous state in). Equals, per wheel, ``suspension_state_update`` then
    ``suspension_compliance_update``, ``suspension_force_update`` and ``anti_roll_force_update``.
    """
    _fused_one(
        packed.mode, packed.limit, packed.axes, packed.signs, packed.lat_axis, packed.geometry,
        _f64(steer), _f64(plane), np.ascontiguousarray(hit_state, dtype=np.bool_), _f64(body_pos),
        _f64(body_quat), _f64(gravity), _f64(external_force), _f64(external_torque), float(dt),
        float(vehicle_mass), packed.tables_x, packed.tables_nb, packed.toe_y, packed.camber_y, packed.tfa_y,
        packed.sfa_y, packed.bars_w, packed.bars_k, *out,
    )


__all__ = [
    "FusedSuspension",
    "attachment_point",
    "frame_axes",
    "pack_geometry",
    "qmul",
    "qrot",
    "suspension_update_fused",
    "wheel_pose",
]
