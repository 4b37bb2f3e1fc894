"""Tire functions (``VhTireFunctions.cpp``): directions, speeds, slips, camber, grip, sticky state, forces.

Pure and vectorised over the wheels of one vehicle. The force model is Vehicle2's default: the
Michigan / CarSimEd brush-like model with a friction circle (``computeTireForceMichiganModel``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simcore.context import TireSlipParams, TireStickyParams
from simcore.frame import Frame
from simcore.maths import cross, dot, normalize, quat_rotate
from simcore.maths import pose_transform_point as transform_point
from simcore.suspension.helpers import compute_suspension_raycast
from simcore.suspension.params import SuspensionParams
from simcore.suspension.states import SuspensionComplianceState
from simcore.tire.params import TireForceParams
from simcore.tire.states import (
    LATERAL,
    LONGITUDINAL,
    TireCamberState,
    TireDirectionState,
    TireForce,
    TireGripState,
    TireSlipState,
    TireSpeedState,
    TireStickyState,
)
from simcore.wheel.helpers import compute_wheel_orientation
from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState

#: Slips and camber smaller than this (in magnitude) are treated as exactly zero by the force model.
MINIMUM_SLIP_THRESHOLD = 1e-5


def compute_tire_wheel_axes(
    frame: Frame,
    suspension: SuspensionParams,
    steer: np.ndarray,
    compliance: SuspensionComplianceState,
    body_quat: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """World lateral and longitudinal axes (n, 3) of the wheels with steer, toe and camber.

    The rotation angle is ignored (a wheel is symmetric about its axle). Shared by
    :func:`tire_dirs_update` and :func:`tire_camber_angles_update`; a component can compute it once
    and call :func:`tire_dirs_from_axes` and :func:`tire_camber_from_axes`.
    """
    n = suspension.nb_wheels
    steer = np.broadcast_to(np.asarray(steer, dtype=np.float64), (n,))
    q = compute_wheel_orientation(frame, suspension, compliance.camber, compliance.toe, steer, body_quat)
    return quat_rotate(q, frame.lat), quat_rotate(q, frame.lng)


def tire_dirs_from_axes(
    lat_axis: np.ndarray, plane_normal: np.ndarray, on_ground: np.ndarray
) -> TireDirectionState:
    """Tire directions from the wheels' world lateral axes: ``lng = normalise(lat_axis x normal)``,
    ``lat = normalise(normal x lng)``; zero for wheels off the ground."""
    normal = np.asarray(plane_normal, dtype=np.float64)
    lng_raw = cross(lat_axis, normal)
    lat_raw = cross(normal, lng_raw)
    dirs = np.empty(lng_raw.shape[:1] + (2, 3))
    dirs[:, LONGITUDINAL] = normalize(lng_raw)
    dirs[:, LATERAL] = normalize(lat_raw)
    dirs[~np.asarray(on_ground, dtype=bool)] = 0.0
    return TireDirectionState(directions=dirs)


def tire_dirs_update(
    frame: Frame,
    suspension: SuspensionParams,
    steer: np.ndarray,
    plane_normal: np.ndarray,
    on_ground: np.ndarray,
    compliance: SuspensionComplianceState,
    body_quat: np.ndarray,
) -> TireDirectionState:
    """Tire longitudinal and lateral directions in the road plane (``PxVehicleTireDirsUpdate``).

    ``lng = normalise(wheel_lat x normal)``, ``lat = normalise(normal x lng)``, with the wheel's
    lateral axis including steer, toe and camber. Zero for wheels off the ground.
    """
    lat_axis, _ = compute_tire_wheel_axes(frame, suspension, steer, compliance, body_quat)
    return tire_dirs_from_axes(lat_axis, plane_normal, on_ground)


def tire_slip_speeds_update(
    frame: Frame,
    wheel: WheelParams,
    suspension: SuspensionParams,
    steer: np.ndarray,
    jounce: np.ndarray,
    directions: TireDirectionState,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
    linear_velocity: np.ndarray,
    angular_velocity: np.ndarray,
    road_velocity: np.ndarray,
) -> TireSpeedState:
    """Contact-point velocity along the tire directions (``PxVehicleTireSlipSpeedsUpdate``).

    The contact point is the wheel bottom at the current jounce, reached along the suspension
    raycast; its velocity is the rigid body's ``v + w x r`` minus the road's ``road_velocity`` (n, 3).
    """
    start, direction, length = compute_suspension_raycast(
        frame, wheel, suspension, steer, body_pos, body_quat
    )
    bottom = start + direction * (length - np.asarray(jounce, dtype=np.float64))[:, None]
    r = bottom - np.asarray(body_pos, dtype=np.float64)
    vel = (
        np.asarray(linear_velocity, dtype=np.float64)
        + cross(np.asarray(angular_velocity, dtype=np.float64), r)
        - np.asarray(road_velocity, dtype=np.float64)
    )
    speeds = np.einsum("nij,nj->ni", directions.directions, vel)
    return TireSpeedState(speed_states=speeds)


def compute_lateral_slip(
    lng_speed: np.ndarray, lat_speed: np.ndarray, min_lat_slip_denominator: float
) -> np.ndarray:
    """Slip angle ``atan(v_lat / (|v_lng| + min_denominator))`` in radians (n,)."""
    return np.arctan(np.asarray(lat_speed) / (np.abs(np.asarray(lng_speed)) + min_lat_slip_denominator))


def compute_longitudinal_slip(
    lng_speed: np.ndarray,
    rotation_speed: np.ndarray,
    radius: np.ndarray,
    min_passive_denominator: float,
    min_active_denominator: float,
    torque_applied: np.ndarray,
) -> np.ndarray:
    """Slip ratio ``(w r - v) / (|v| + d)`` (n,), zero when both speeds are exactly zero.

    ``d`` is the small active denominator where a drive or brake torque is applied (so a wheel
    starting from rest gets a large slip and a strong force) and the larger passive one elsewhere
    (so a free-rolling wheel near rest does not overshoot and oscillate).
    """
    v = np.asarray(lng_speed, dtype=np.float64)
    w = np.asarray(rotation_speed, dtype=np.float64)
    denominator = np.abs(v) + np.where(
        np.asarray(torque_applied, dtype=bool), min_active_denominator, min_passive_denominator
    )
    slip = (w * radius - v) / denominator
    return np.where((v == 0.0) & (w == 0.0), 0.0, slip)


def tire_slips_update(
    wheel: WheelParams,
    slip_params: TireSlipParams,
    actuation: WheelActuationState,
    speeds: TireSpeedState,
    rotation_speed: np.ndarray,
) -> TireSlipState:
    """Longitudinal slip ratio and lateral slip angle (``PxVehicleTireSlipsUpdate``, non-legacy)."""
    lng_speed = speeds.speed_states[:, LONGITUDINAL]
    lat_speed = speeds.speed_states[:, LATERAL]
    lat = compute_lateral_slip(lng_speed, lat_speed, slip_params.min_lat_slip_denominator)
    lng = compute_longitudinal_slip(
        lng_speed,
        rotation_speed,
        wheel.radius,
        slip_params.min_passive_long_slip_denominator,
        slip_params.min_active_long_slip_denominator,
        actuation.is_brake_applied | actuation.is_drive_applied,
    )
    return TireSlipState(slips=np.stack((lng, lat), axis=1))


def tire_camber_from_axes(
    lat_axis: np.ndarray, lng_axis: np.ndarray, plane_normal: np.ndarray, on_ground: np.ndarray
) -> TireCamberState:
    """Camber angle from the wheels' world lateral and longitudinal axes (see
    :func:`tire_camber_angles_update`)."""
    normal = np.asarray(plane_normal, dtype=np.float64)
    t = normalize(normal - lng_axis * dot(normal, lng_axis)[:, None])
    theta = np.arcsin(np.clip(dot(t, lat_axis), -1.0, 1.0))
    return TireCamberState(camber_angle=np.where(np.asarray(on_ground, dtype=bool), theta, 0.0))


def tire_camber_angles_update(
    frame: Frame,
    suspension: SuspensionParams,
    steer: np.ndarray,
    plane_normal: np.ndarray,
    on_ground: np.ndarray,
    compliance: SuspensionComplianceState,
    body_quat: np.ndarray,
) -> TireCamberState:
    """Camber of the wheel relative to the road (``PxVehicleTireCamberAnglesUpdate``).

    The ground normal is projected on the wheel's lateral-vertical plane; the angle between that
    projection and the wheel's vertical is ``asin(projection . wheel_lat)`` (positive when the
    normal leans towards the wheel's lateral axis). Zero off the ground.
    """
    lat_axis, lng_axis = compute_tire_wheel_axes(frame, suspension, steer, compliance, body_quat)
    return tire_camber_from_axes(lat_axis, lng_axis, plane_normal, on_ground)


def compute_filtered_load(tire: TireForceParams, normal_force: np.ndarray) -> np.ndarray:
    """Tire load (n,) after the load filter: ``rest_load * filter(normal_force / rest_load)``."""
    x = np.asarray(normal_force, dtype=np.float64) / tire.rest_load
    xmin, ymin = tire.load_filter[:, 0, 0], tire.load_filter[:, 0, 1]
    xmax, ymax = tire.load_filter[:, 1, 0], tire.load_filter[:, 1, 1]
    span = np.where(xmax > xmin, xmax - xmin, 1.0)
    mid = ymin + (x - xmin) * (ymax - ymin) / span
    filtered = np.where(x <= xmin, ymin, np.where(x >= xmax, ymax, mid))
    return tire.rest_load * filtered


def compute_friction_multiplier(tire: TireForceParams, lng_slip: np.ndarray) -> np.ndarray:
    """Friction multiplier (n,) at ``|lng_slip|`` from the 3-point friction-vs-slip graph."""
    s = np.abs(np.asarray(lng_slip, dtype=np.float64))
    g = tire.friction_vs_slip
    x0, y0, x1, y1, x2, y2 = g[:, 0, 0], g[:, 0, 1], g[:, 1, 0], g[:, 1, 1], g[:, 2, 0], g[:, 2, 1]
    d01 = np.where(x1 != x0, x1 - x0, 1.0)
    d12 = np.where(x2 != x1, x2 - x1, 1.0)
    first = y0 + (y1 - y0) * (s - x0) / d01
    second = y1 + (y2 - y1) * (s - x1) / d12
    return np.where(s < x1, first, np.where(s < x2, second, y2))


def tire_grip_update(
    tire: TireForceParams,
    friction_coefficient: np.ndarray,
    on_ground: np.ndarray,
    normal_force: np.ndarray,
    slips: TireSlipState,
) -> TireGripState:
    """Tire load (filtered suspension normal force) and friction (road friction x graph at the
    longitudinal slip) (``PxVehicleTireGripUpdate``). Zero off the ground."""
    on = np.asarray(on_ground, dtype=bool)
    load = compute_filtered_load(tire, normal_force)
    friction = np.asarray(friction_coefficient, dtype=np.float64) * compute_friction_multiplier(
        tire, slips.slips[:, LONGITUDINAL]
    )
    return TireGripState(load=np.where(on, load, 0.0), friction=np.where(on, friction, 0.0))


def tire_sticky_state_update(
    wheel: WheelParams,
    sticky_params: TireStickyParams,
    actuation: WheelActuationState,
    grip: TireGripState,
    speeds: TireSpeedState,
    rotation_speed: np.ndarray,
    dt: float,
    previous: TireStickyState,
) -> TireStickyState:
    """Advance the low-speed timers and decide which axes go sticky (``PxVehicleTireStickyStateUpdate``).

    Intentions are vehicle-wide: any wheel driven means "accelerate", any wheel braked means
    "brake". Longitudinal: the timer runs while ``|v_lng|`` and ``|w r|`` are below the threshold
    speed and nobody accelerates; the axis is sticky once the timer exceeds the threshold time, or
    at once when the wheel is locked (``w == 0``), braked and slow. Lateral: the timer runs while
    ``|v_lat|`` is below its threshold and nobody accelerates; sticky when it exceeds its threshold
    time while the longitudinal timer is running. A tire with no grip (``load * friction == 0``)
    resets both timers.
    """
    lng_p = sticky_params[LONGITUDINAL]
    lat_p = sticky_params[LATERAL]
    accelerate = bool(np.any(actuation.is_drive_applied))
    brake = bool(np.any(actuation.is_brake_applied))
    v_lng = speeds.speed_states[:, LONGITUDINAL]
    v_lat = speeds.speed_states[:, LATERAL]
    w = np.asarray(rotation_speed, dtype=np.float64)
    has_grip = grip.load * grip.friction != 0.0

    lng_slow = (np.abs(v_lng) < lng_p.threshold_speed) & (np.abs(w * wheel.radius) < lng_p.threshold_speed)
    lng_time = np.where(lng_slow & (not accelerate), previous.low_speed_time[:, LONGITUDINAL] + dt, 0.0)
    lng_timer_active = lng_time > 0.0
    lng_active = ((np.abs(v_lng) < lng_p.threshold_speed) & (w == 0.0) & brake) | (
        lng_time > lng_p.threshold_time
    )

    lat_slow = np.abs(v_lat) < lat_p.threshold_speed
    lat_time = np.where(lat_slow & (not accelerate), previous.low_speed_time[:, LATERAL] + dt, 0.0)
    lat_active = lng_timer_active & (lat_time > lat_p.threshold_time)

    times = np.where(has_grip[:, None], np.stack((lng_time, lat_time), axis=1), 0.0)
    active = has_grip[:, None] & np.stack((lng_active, lat_active), axis=1)
    return TireStickyState(low_speed_time=times, active_status=active)


def tire_slips_accounting_for_sticky_states(sticky: TireStickyState, slips: TireSlipState) -> TireSlipState:
    """Zero the slip of every sticky axis so the tire model adds no force there
    (``PxVehicleTireSlipsAccountingForStickyStatesUpdate``)."""
    return TireSlipState(slips=np.where(sticky.active_status, 0.0, slips.slips))


def _smoothing_1(k: np.ndarray) -> np.ndarray:
    """``min(1, K - K^2/3 + K^3/27)``: rises like a square root and reaches 1 at K = 3."""
    return np.minimum(1.0, k - k * k / 3.0 + k * k * k / 27.0)


def _smoothing_2(k: np.ndarray) -> np.ndarray:
    """``K - K^2 + K^3/3 - K^4/27``: aligning-moment shape, peaks near K = 0.75 and is 0 at K = 3.

    Not clamped beyond K = 3 (Vehicle2 leaves it so): at very large slips the polynomial, and so the
    aligning moment, grows large with the opposite sign. Nothing in the default sequence consumes it.
    """
    return k - k * k + k * k * k / 3.0 - k * k * k * k / 27.0


def compute_lateral_stiffness(tire: TireForceParams, load: np.ndarray) -> np.ndarray:
    """Lateral stiffness (n,) at ``load``: ``lat_stiff_y * f1(3 (load / rest_load) / lat_stiff_x)``,
    or ``lat_stiff_y`` when ``lat_stiff_x`` is 0."""
    normalised = np.asarray(load, dtype=np.float64) / tire.rest_load
    zero_x = tire.lat_stiff_x == 0.0
    ratio = normalised * 3.0 / np.where(zero_x, 1.0, tire.lat_stiff_x)
    return np.where(zero_x, tire.lat_stiff_y, tire.lat_stiff_y * _smoothing_1(ratio))


def compute_tire_force_michigan(
    tire: TireForceParams,
    friction: np.ndarray,
    lng_slip: np.ndarray,
    lat_slip: np.ndarray,
    camber: np.ndarray,
    radius: np.ndarray,
    load: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vehicle2's default tire model; returns ``(wheel_torque, lng_force, lat_force, aligning_moment)`` (n,).

    With lateral stiffness ``C_a`` (load dependent), longitudinal ``C_s`` and camber ``C_g``:
    ``T = tan(alpha + gamma C_g / C_a)``, ``K = sqrt((C_a T)^2 + (C_s s)^2) / (mu Fz)``,
    ``F = mu Fz f1(K)`` shared between the axes in proportion to ``s`` and ``nu T`` (friction
    circle; ``nu`` blends from ``C_a / C_s`` at small K to 1 at ``K >= 2 pi``). Small slips give
    ``F_lng ~ C_s s`` and ``F_lat ~ -C_a tan(alpha)``; large slips saturate at ``|F| = mu Fz``. The
    wheel receives ``-F_lng * radius``. Wheels with ``friction * load == 0`` get zeros.
    Float64 with exact 1/3 and 1/27 (PhysX uses the float32 constants 0.33333 and 0.037037).
    """
    friction = np.asarray(friction, dtype=np.float64)
    load = np.asarray(load, dtype=np.float64)

    def clamp(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return np.where(np.abs(x) >= MINIMUM_SLIP_THRESHOLD, x, 0.0)

    s = clamp(lng_slip)
    alpha = clamp(lat_slip)
    gamma = clamp(camber)
    lat_stiff = compute_lateral_stiffness(tire, load)
    long_stiff = tire.long_stiff
    camber_stiff = tire.camber_stiff

    grip = friction * load
    active = (grip != 0.0) & ~(
        (alpha * lat_stiff == 0.0) & (s * long_stiff == 0.0) & (gamma * camber_stiff == 0.0)
    )
    safe_grip = np.where(active, grip, 1.0)
    safe_lat_stiff = np.where(active & (lat_stiff != 0.0), lat_stiff, 1.0)

    t_eff = np.tan(alpha + gamma * camber_stiff / safe_lat_stiff)
    k = np.sqrt((lat_stiff * t_eff) ** 2 + (long_stiff * s) ** 2) / safe_grip
    f_bar = _smoothing_1(k)
    m_bar = _smoothing_2(k)
    ratio = lat_stiff / long_stiff
    nu = np.where(k <= 2.0 * np.pi, 0.5 * (1.0 + ratio - (1.0 - ratio) * np.cos(0.5 * k)), 1.0)
    denominator = np.sqrt(s * s + (nu * t_eff) ** 2)
    f_zero = safe_grip / np.where(active & (denominator > 0.0), denominator, 1.0)
    lng_force = np.where(active, s * f_bar * f_zero, 0.0)
    lat_force = np.where(active, -nu * t_eff * f_bar * f_zero, 0.0)
    pneumatic_trail = 1.0
    aligning = np.where(active, nu * pneumatic_trail * t_eff * m_bar * f_zero, 0.0)
    wheel_torque = -lng_force * np.asarray(radius, dtype=np.float64)
    return wheel_torque, lng_force, lat_force, aligning


def tire_forces_update(
    wheel: WheelParams,
    suspension: SuspensionParams,
    tire: TireForceParams,
    compliance: SuspensionComplianceState,
    grip: TireGripState,
    directions: TireDirectionState,
    slips: TireSlipState,
    camber: TireCamberState,
    body_quat: np.ndarray,
) -> TireForce:
    """Tire force vectors, their torques about the centre of mass, aligning moment and wheel torque
    (``PxVehicleTireForcesUpdate``). Forces act at the compliance tire force application point."""
    wheel_torque, f_lng, f_lat, aligning = compute_tire_force_michigan(
        tire,
        grip.friction,
        slips.slips[:, LONGITUDINAL],
        slips.slips[:, LATERAL],
        camber.camber_angle,
        wheel.radius,
        grip.load,
    )
    forces = directions.directions * np.stack((f_lng, f_lat), axis=1)[:, :, None]
    arm = quat_rotate(
        np.asarray(body_quat, dtype=np.float64),
        transform_point(
            suspension.suspension_attachment_pos,
            suspension.suspension_attachment_quat,
            compliance.tire_force_app_point,
        ),
    )
    torques = cross(arm[:, None, :], forces)
    return TireForce(forces=forces, torques=torques, aligning_moment=aligning, wheel_torque=wheel_torque)


class TireStickyConstraints(NamedTuple):
    """Velocity constraints replacing the tire force on sticky axes (the tire part of
    ``PxVehiclePhysXConstraintStatesUpdate``), for the rigid-body integrator to enforce.

    - ``active`` (n, 2) bool.
    - ``linear`` (n, 2, 3): unit constraint directions (the tire directions), world frame.
    - ``angular`` (n, 2, 3): ``arm x linear`` with ``arm`` the tire force application point relative
      to the centre of mass (world frame, not normalised) — the contact-point velocity along
      ``linear`` is ``linear . v + angular . w``.
    - ``damping`` (n, 2) ``1 / time``: the rate at which that velocity is driven to zero
      (``TireAxisStickyParams.damping``).

    Inactive rows are zero.
    """

    active: np.ndarray
    linear: np.ndarray
    angular: np.ndarray
    damping: np.ndarray


def tire_sticky_constraints(
    suspension: SuspensionParams,
    compliance: SuspensionComplianceState,
    directions: TireDirectionState,
    sticky: TireStickyState,
    sticky_params: TireStickyParams,
    body_quat: np.ndarray,
) -> TireStickyConstraints:
    """Constraint rows for the sticky tire axes (see :class:`TireStickyConstraints`)."""
    active = sticky.active_status.copy()
    arm = quat_rotate(
        np.asarray(body_quat, dtype=np.float64),
        transform_point(
            suspension.suspension_attachment_pos,
            suspension.suspension_attachment_quat,
            compliance.tire_force_app_point,
        ),
    )
    linear = np.where(active[:, :, None], directions.directions, 0.0)
    angular = np.where(active[:, :, None], cross(arm[:, None, :], directions.directions), 0.0)
    rates = np.array([sticky_params[LONGITUDINAL].damping, sticky_params[LATERAL].damping])
    damping = np.where(active, rates[None, :], 0.0)
    return TireStickyConstraints(active=active, linear=linear, angular=angular, damping=damping)
