"""Suspension functions (``VhSuspensionFunctions.cpp``): jounce, compliance, spring force, anti-roll torque.

All functions are pure and vectorised over the wheels of one vehicle. The road under each wheel is
a plane ``(n, 4)`` = ``[nx, ny, nz, d]`` with ``n . x + d = 0`` on the surface (the
``RoadGeometryState.plane`` written by the road query); the rigid body pose is ``body_pos`` (3,) and
``body_quat`` (4,) with its origin at the centre of mass.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simcore.frame import Frame
from simcore.maths import cross, dot, normalize, quat_rotate
from simcore.maths import pose_transform_point as transform_point
from simcore.suspension.helpers import compute_suspension_direction, compute_wheel_pose_for_suspension_query
from simcore.suspension.params import (
    AntiRollBarParams,
    JounceCalculationType,
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.suspension.states import (
    NO_INTERSECTION_SEPARATION,
    UNSPECIFIED_JOUNCE,
    AntiRollForce,
    SuspensionComplianceState,
    SuspensionForce,
    SuspensionState,
)
from simcore.wheel.helpers import compute_wheel_pose, is_wheel_on_ground
from simcore.wheel.params import WheelParams


def compute_jounce_and_separation(
    depth: np.ndarray, susp_dir_dot_normal: np.ndarray, travel_dist: np.ndarray, previous_jounce: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Jounce and separation (n,) from the depth of the wheel's reference point at max droop.

    ``depth`` is the signed distance of the wheel point closest to (or deepest in) the plane, at
    zero jounce (negative = penetrating). Moving the wheel by ``depth / (dir . normal)`` along the
    travel direction places it on the plane; if that lies within [0, travel_dist] the wheel is on
    the ground (separation 0), beyond max compression it penetrates (negative separation, bump
    stop), and with no overlap at max droop it is in the air (separation ``FLT_MIN``). When the
    travel direction is parallel to the plane no jounce change helps: the previous jounce is kept
    (or max compression if unspecified).
    """
    depth = np.asarray(depth, dtype=np.float64)
    k = np.asarray(susp_dir_dot_normal, dtype=np.float64)
    travel = np.asarray(travel_dist, dtype=np.float64)
    prev = np.asarray(previous_jounce, dtype=np.float64)
    not_perp = k != 0.0
    delta = depth / np.where(not_perp, k, 1.0)
    safe_delta = np.where(delta != 0.0, delta, 1.0)

    overlap = not_perp & (depth <= 0.0)
    in_range = overlap & (delta > 0.0) & (delta <= travel)
    beyond_compression = overlap & (delta > travel)
    beyond_droop = overlap & ~in_range & ~beyond_compression
    perp_overlap = ~not_perp & (depth < 0.0)

    jounce = np.zeros_like(depth)
    separation = np.full_like(depth, NO_INTERSECTION_SEPARATION)
    jounce = np.where(in_range, delta, jounce)
    separation = np.where(in_range, 0.0, separation)
    jounce = np.where(beyond_compression, travel, jounce)
    separation = np.where(beyond_compression, depth * (delta - travel) / safe_delta, separation)
    separation = np.where(beyond_droop, depth, separation)
    jounce = np.where(perp_overlap, np.where(prev != UNSPECIFIED_JOUNCE, prev, travel), jounce)
    separation = np.where(perp_overlap, depth, separation)
    return jounce, separation


def intersect_ray_plane(
    frame: Frame,
    wheel: WheelParams,
    suspension: SuspensionParams,
    steer: np.ndarray,
    plane: np.ndarray,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
    previous_jounce: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Raycast jounce: world travel directions (n, 3), jounce (n,), separation (n,).

    The wheel is placed at max droop; its reference point is the rim point along the travel
    direction (the bottom when the travel direction points into the plane, the top when it points
    out of it), and the jounce is how far that point must move along the travel direction to
    reach the plane.
    """
    n = suspension.nb_wheels
    steer = np.broadcast_to(np.asarray(steer, dtype=np.float64), (n,))
    wheel_pos, _ = compute_wheel_pose(
        frame, suspension, np.zeros(n), np.zeros(n), np.zeros(n), steer, body_pos, body_quat
    )
    susp_dir = compute_suspension_direction(suspension, body_quat)
    normal = plane[:, :3]
    k = dot(susp_dir, normal)
    offset = np.where(k < 0.0, 1.0, np.where(k > 0.0, -1.0, 0.0)) * wheel.radius
    ref = wheel_pos + susp_dir * offset[:, None]
    depth = dot(normal, ref) + plane[:, 3]
    jounce, separation = compute_jounce_and_separation(
        depth, k, suspension.suspension_travel_dist, previous_jounce
    )
    return susp_dir, jounce, separation


def _intersect_planes(
    n1: np.ndarray, d1: np.ndarray, n2: np.ndarray, d2: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Line of intersection of two planes per wheel: a point (n, 3), unit direction (n, 3), success (n,).

    The point is found on the coordinate plane most perpendicular to the line (as Vehicle2 does).
    """
    dx = n1[:, 1] * n2[:, 2] - n1[:, 2] * n2[:, 1]
    dy = n1[:, 2] * n2[:, 0] - n1[:, 0] * n2[:, 2]
    dz = n1[:, 0] * n2[:, 1] - n1[:, 1] * n2[:, 0]
    dx2, dy2, dz2 = dx * dx, dy * dy, dz * dz
    case_z = (dz2 > dy2) & (dz2 > dx2) & (dz2 > 0.0)
    case_y = ~case_z & (dy2 > dx2) & (dy2 > 0.0)
    case_x = ~case_z & ~case_y & (dx2 > 0.0)
    ok = case_z | case_y | case_x
    sx = np.where(dx != 0.0, dx, 1.0)
    sy = np.where(dy != 0.0, dy, 1.0)
    sz = np.where(dz != 0.0, dz, 1.0)
    p = np.zeros_like(n1)
    p[:, 0] = np.where(
        case_z,
        (n1[:, 1] * d2 - n2[:, 1] * d1) / sz,
        np.where(case_y, -(n1[:, 2] * d2 - n2[:, 2] * d1) / sy, 0.0),
    )
    p[:, 1] = np.where(
        case_z,
        (n2[:, 0] * d1 - n1[:, 0] * d2) / sz,
        np.where(case_x, (n1[:, 2] * d2 - n2[:, 2] * d1) / sx, 0.0),
    )
    p[:, 2] = np.where(
        case_y,
        -(n2[:, 0] * d1 - n1[:, 0] * d2) / sy,
        np.where(case_x, (n2[:, 1] * d1 - n1[:, 1] * d2) / sx, 0.0),
    )
    length = np.sqrt(dx2 + dy2 + dz2)
    w = np.stack((dx, dy, dz), axis=1) / np.where(ok, length, 1.0)[:, None]
    return p, w, ok


def intersect_cylinder_plane(
    frame: Frame,
    wheel: WheelParams,
    suspension: SuspensionParams,
    steer: np.ndarray,
    plane: np.ndarray,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
    previous_jounce: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sweep jounce: world travel directions (n, 3), jounce (n,), separation (n,).

    The wheel is a cylinder (radius, half-width) at max droop. Its deepest point against the plane
    is the rim point towards the line where the wheel's mid-plane meets the road plane, pushed to
    the inner or outer disc, whichever is lower. Exact for a plane, unlike the raycast which ignores
    the width and the road's tilt across the wheel.
    """
    n = suspension.nb_wheels
    steer = np.broadcast_to(np.asarray(steer, dtype=np.float64), (n,))
    start_pos, start_quat = compute_wheel_pose_for_suspension_query(
        frame, suspension, steer, body_pos, body_quat
    )
    susp_dir = compute_suspension_direction(suspension, body_quat)
    centre = start_pos + susp_dir * suspension.suspension_travel_dist[:, None]
    lat = quat_rotate(start_quat, frame.lat)
    wheel_d = -dot(lat, centre)
    normal = plane[:, :3]
    plane_d = plane[:, 3]

    v, w, ok = _intersect_planes(lat, wheel_d, normal, plane_d)
    sign_dot = np.sign(dot(normal, lat))

    t = dot(centre - v, w)
    closest = v + w * t[:, None]
    centre_dist = dot(normal, centre) + plane_d
    towards = np.where((centre_dist >= 0.0)[:, None], closest - centre, centre - closest)
    rim = centre + normalize(towards) * wheel.radius[:, None]
    deepest = rim - lat * (sign_dot * wheel.half_width)[:, None]
    depth_ok = dot(normal, deepest) + plane_d
    # Road normal parallel to the wheel axis: only the disc faces can touch.
    depth_parallel = plane_d - wheel.half_width - sign_dot * wheel_d
    depth = np.where(ok, depth_ok, depth_parallel)

    k = dot(normal, susp_dir)
    jounce, separation = compute_jounce_and_separation(
        depth, k, suspension.suspension_travel_dist, previous_jounce
    )
    return susp_dir, jounce, separation


def limit_suspension_expansion_velocity(
    jounce_speed: np.ndarray,
    previous_jounce_speed: np.ndarray,
    previous_jounce: np.ndarray,
    stiffness: np.ndarray,
    damping: np.ndarray,
    susp_dir_world: np.ndarray,
    wheel_mass: np.ndarray,
    dt: float,
    gravity: np.ndarray,
    has_ground_hit: np.ndarray,
    jounce: np.ndarray,
    separation: np.ndarray,
    apply: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Clamp expansion to what the spring and damper can achieve on the wheel mass within ``dt``.

    For wheels flagged in ``apply`` (all expanding, ``jounce_speed < 0``): the extension speed the
    previous spring force (and damping, never flipping the sign) gives the wheel mass, plus gravity
    along the travel direction when the ground was hit, is the limit. If the requested expansion is
    faster, the wheel only extends by that speed times ``dt`` and is treated as in the air.
    Returns updated ``(jounce, jounce_speed, separation, clamped)``; ``clamped`` (n,) flags the
    wheels whose expansion was limited (the others keep their input values).
    """
    prev_j = np.where(apply, previous_jounce, 0.0)
    prev_v = np.where(apply, previous_jounce_speed, 0.0)
    vel_spring = prev_j * stiffness / wheel_mass * dt
    vel_damping = prev_v * damping / wheel_mass * dt
    vel = vel_spring - prev_v
    tmp = vel + vel_damping
    vel = np.where(vel >= 0.0, np.maximum(0.0, tmp), np.minimum(0.0, tmp))
    g_along = dot(susp_dir_world, np.asarray(gravity, dtype=np.float64))
    threshold = np.where(has_ground_hit & (g_along > 0.0), vel + g_along * dt, vel)
    clamp = apply & (jounce_speed < -threshold)
    clamped_jounce = prev_j - vel * dt
    new_sep = np.where(clamp & (separation >= 0.0), clamped_jounce - jounce, separation)
    new_jounce = np.where(clamp, clamped_jounce, jounce)
    new_speed = np.where(clamp, -vel, jounce_speed)
    return new_jounce, new_speed, new_sep, clamp


def suspension_state_update(
    wheel: WheelParams,
    suspension: SuspensionParams,
    calc: SuspensionStateCalculationParams,
    stiffness: np.ndarray,
    damping: np.ndarray,
    steer: np.ndarray,
    plane: np.ndarray,
    hit_state: np.ndarray,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
    dt: float,
    frame: Frame,
    gravity: np.ndarray,
    previous: SuspensionState,
) -> SuspensionState:
    """New jounce, jounce speed and separation of every wheel (``PxVehicleSuspensionStateUpdate``).

    ``stiffness``/``damping`` (n,) are only used by the expansion-velocity limit. Wheels without a
    road hit (``hit_state`` False) get zero jounce and ``FLT_MIN`` separation (in the air). The jounce
    speed is the finite difference against ``previous.jounce`` (zero if it was unspecified).
    """
    n = suspension.nb_wheels
    plane = np.asarray(plane, dtype=np.float64).reshape(n, 4)
    hit = np.asarray(hit_state, dtype=bool).reshape(n)
    prev_j = previous.jounce
    prev_v = previous.jounce_speed
    if calc.suspension_jounce_calculation_type == JounceCalculationType.RAYCAST:
        susp_dir, j, s = intersect_ray_plane(
            frame, wheel, suspension, steer, plane, body_pos, body_quat, prev_j
        )
    else:
        susp_dir, j, s = intersect_cylinder_plane(
            frame, wheel, suspension, steer, plane, body_pos, body_quat, prev_j
        )
    specified = prev_j != UNSPECIFIED_JOUNCE
    jounce = np.where(hit, j, 0.0)
    separation = np.where(hit, s, NO_INTERSECTION_SEPARATION)
    safe_prev = np.where(specified, prev_j, 0.0)
    jounce_speed = np.where(hit & specified, (jounce - safe_prev) / dt, 0.0)

    if calc.limit_suspension_expansion_velocity:
        no_hit_apply = ~hit & specified & (safe_prev > 0.0)
        hit_apply = hit & (jounce_speed < 0.0)
        requested = np.where(no_hit_apply, -safe_prev / dt, jounce_speed)
        jounce, limited_speed, separation, clamped = limit_suspension_expansion_velocity(
            requested,
            prev_v,
            safe_prev,
            np.asarray(stiffness, dtype=np.float64),
            np.asarray(damping, dtype=np.float64),
            susp_dir,
            wheel.mass,
            dt,
            gravity,
            hit,
            jounce,
            separation,
            no_hit_apply | hit_apply,
        )
        # A wheel that lost the road keeps zero jounce speed unless the limit kicked in.
        jounce_speed = np.where(clamped, limited_speed, jounce_speed)
    return SuspensionState(jounce=jounce, jounce_speed=jounce_speed, separation=separation)


def suspension_compliance_update(
    suspension: SuspensionParams, compliance: SuspensionComplianceParams, jounce: np.ndarray
) -> SuspensionComplianceState:
    """Toe, camber and force application points at the current normalised jounce
    (``PxVehicleSuspensionComplianceUpdate``)."""
    r = np.asarray(jounce, dtype=np.float64) / suspension.suspension_travel_dist
    return SuspensionComplianceState(
        toe=compliance.wheel_toe_angle.interpolate(r),
        camber=compliance.wheel_camber_angle.interpolate(r),
        tire_force_app_point=compliance.tire_force_app_point.interpolate(r),
        susp_force_app_point=compliance.susp_force_app_point.interpolate(r),
    )


def suspension_force_update(
    suspension: SuspensionParams,
    force_params: SuspensionForceParams,
    plane_normal: np.ndarray,
    state: SuspensionState,
    compliance: SuspensionComplianceState,
    body_quat: np.ndarray,
    external_force: np.ndarray,
    external_torque: np.ndarray,
    gravity: np.ndarray,
    vehicle_mass: float,
) -> SuspensionForce:
    """Spring-damper force along the ground normal and its torque (``PxVehicleSuspensionForceUpdate``).

    Only wheels on the ground (separation <= 0) push. The spring-damper force
    ``-(k jounce + c jounce_speed)`` acts along the world travel direction and only its component
    along the ground normal is kept. When the wheel's share (``sprung_mass / vehicle_mass``) of the
    external load (gravity, ``external_force``, and ``external_torque`` converted to a force at the
    attachment) pushes into the ground, the part of it perpendicular to the travel direction -
    which the spring cannot resist - is also cancelled along the normal (a "collision" force).
    ``external_force``/``external_torque`` (3,) are the rigid body's, world frame.
    """
    n = suspension.nb_wheels
    normal = np.asarray(plane_normal, dtype=np.float64).reshape(n, 3)
    body_quat = np.asarray(body_quat, dtype=np.float64)
    on_ground = is_wheel_on_ground(state.separation)
    jounce = np.where(on_ground, state.jounce, 0.0)
    jounce_speed = np.where(on_ground, state.jounce_speed, 0.0)

    susp_dir = compute_suspension_direction(suspension, body_quat)
    spring = susp_dir * (-(jounce * force_params.stiffness + jounce_speed * force_params.damping))[:, None]
    magnitude = dot(normal, spring)

    com_to_susp = quat_rotate(body_quat, suspension.suspension_attachment_pos)
    ext_lin = np.asarray(gravity, dtype=np.float64) * vehicle_mass + np.asarray(
        external_force, dtype=np.float64
    )
    dist_sq = dot(com_to_susp, com_to_susp)
    ext_ang = (
        cross(np.asarray(external_torque, dtype=np.float64), com_to_susp)
        / np.where(dist_sq > 0.0, dist_sq, 1.0)[:, None]
    )
    ext_ang = np.where((dist_sq > 0.0)[:, None], ext_ang, 0.0)
    ext_susp = (ext_lin + ext_ang) * (force_params.sprung_mass / vehicle_mass)[:, None]
    pushes_into_ground = dot(normal, ext_susp) < 0.0
    collision = ext_susp - susp_dir * dot(susp_dir, ext_susp)[:, None]
    magnitude = magnitude + np.where(pushes_into_ground, -dot(normal, collision), 0.0)
    magnitude = np.where(on_ground, magnitude, 0.0)

    force = normal * magnitude[:, None]
    arm = quat_rotate(
        body_quat,
        transform_point(
            suspension.suspension_attachment_pos,
            suspension.suspension_attachment_quat,
            compliance.susp_force_app_point,
        ),
    )
    torque = cross(arm, force)
    return SuspensionForce(force=force, torque=torque, normal_force=magnitude)


def anti_roll_force_update(
    suspension: SuspensionParams,
    anti_roll_bars: Sequence[AntiRollBarParams],
    jounce: np.ndarray,
    susp_force_app_point: np.ndarray,
    body_quat: np.ndarray,
) -> AntiRollForce:
    """Summed anti-roll torque (world frame) of all bars (``PxVehicleAntiRollForceUpdate``).

    A bar with stiffness k between wheels 0 and 1 makes the force ``k (jounce0 - jounce1)``, applied
    along each wheel's travel direction (negative on wheel 0, positive on wheel 1) at its suspension
    force application point. A wheel with zero jounce (in the air) gets no force; if both are in the
    air the bar does nothing.
    """
    jounce = np.asarray(jounce, dtype=np.float64)
    body_quat = np.asarray(body_quat, dtype=np.float64)
    torque_body = np.zeros(3)
    for bar in anti_roll_bars:
        if bar.stiffness == 0.0:
            continue
        w0, w1 = bar.wheel0, bar.wheel1
        in_air0 = jounce[w0] == 0.0
        in_air1 = jounce[w1] == 0.0
        if in_air0 and in_air1:
            continue
        magnitude = (jounce[w0] - jounce[w1]) * bar.stiffness
        for w, f, in_air in ((w0, -magnitude, in_air0), (w1, magnitude, in_air1)):
            if in_air:
                continue
            force = suspension.suspension_travel_dir[w] * f
            arm = transform_point(
                suspension.suspension_attachment_pos[w],
                suspension.suspension_attachment_quat[w],
                np.asarray(susp_force_app_point, dtype=np.float64)[w],
            )
            torque_body += cross(arm, force)
    return AntiRollForce(torque=quat_rotate(body_quat, torque_body))
