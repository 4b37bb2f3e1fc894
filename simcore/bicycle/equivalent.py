"""The linear bicycle model equivalent to a simcore (Vehicle2) vehicle, for cross-checks.

Same mass and yaw inertia, axle positions where the tires' lateral forces act, and each axle's
cornering stiffness from its tires' params at the static load: Vehicle2's lateral stiffness is
``lat_stiff_y * f1(3 (filtered load / rest_load) / lat_stiff_x)`` (``lat_stiff_y`` itself when
``lat_stiff_x`` is 0), and its tire model gives ``F_lat ~ -C tan(slip)`` for small slips. Vehicle2
measures the slip angle as ``atan(v_lat / (|v_lng| + min_lat_slip_denominator))``, so at speed V
an axle behaves like one of stiffness ``C V / (V + min_lat_slip_denominator)``: with
``slip_denominator=True`` (the default) the equivalent includes that factor.

Axle positions: a tire's forces act at its suspension attachment plus the compliance's tire force
application point (at the static jounce). That offset matters: PhysX's snippet sedan (simcore's
default car) declares ``TireForceAppPoint`` (0, 0, -0.112) in its Y-up, Z-forward frame — 0.112 m
*behind* each attachment, like an 11 cm pneumatic trail — which moves both axles' lateral forces
rearwards and adds understeer (K 0.0017 -> 0.0022 rad per m/s^2). ``force_points=False`` uses the
attachments (the wheel centres' longitudinal positions) instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.bicycle.params import BicycleParams


@dataclass(frozen=True)
class EquivalentBicycle:
    """The equivalent :class:`BicycleParams` and how they were obtained.

    ``static_load`` (n,): the suspension normal force per wheel at rest (sprung mass x g, N);
    ``tire_stiffness`` (n,): each tire's cornering stiffness at that load (N/rad);
    ``slip_factor``: V / (V + min_lat_slip_denominator) (1 when not applied); ``wheel_lng`` (n,):
    the longitudinal position used for each wheel (m ahead of the centre of mass)."""

    params: BicycleParams
    static_load: np.ndarray
    tire_stiffness: np.ndarray
    slip_factor: float
    wheel_lng: np.ndarray


def equivalent_bicycle(vehicle_params: Any, speed: float, context: Any = None,
                       slip_denominator: bool = True, force_points: bool = True) -> EquivalentBicycle:
    """The bicycle model of ``vehicle_params`` (a :class:`~simcore.vehicle.VehicleParams` with two or
    more axles: the first is the front, the others are averaged into the rear) at ``speed``
    (length / time). ``context``: the simulation context (gravity, slip params; default: the
    vehicle's default context)."""
    from simcore.tire.functions import compute_filtered_load, compute_lateral_stiffness
    from simcore.vehicle import default_context

    p = vehicle_params
    ctx = context if context is not None else default_context(p.frame, p.scale)
    axles = p.axle_description.axles
    if len(axles) < 2:
        raise ValueError("equivalent_bicycle: the vehicle needs at least two axles")
    frame = p.frame
    g = float(np.linalg.norm(ctx.gravity))
    load = np.asarray(p.suspension_force.sprung_mass, dtype=np.float64) * g
    points = np.array(p.suspension.suspension_attachment_pos, dtype=np.float64)
    if force_points:
        from simcore.maths import quat_rotate

        jounce = load / p.suspension_force.stiffness / p.suspension.suspension_travel_dist
        offset = p.suspension_compliance.tire_force_app_point.interpolate(np.clip(jounce, 0.0, 1.0))
        points = points + quat_rotate(p.suspension.suspension_attachment_quat, offset)
    lng = points @ frame.lng
    stiffness = compute_lateral_stiffness(p.tire_force, compute_filtered_load(p.tire_force, load))
    front = list(axles[0])
    rear = [w for axle in axles[1:] for w in axle]
    lf = float(np.mean(lng[front]))
    lr = -float(np.mean(lng[rear]))
    factor = speed / (speed + ctx.tire_slip_params.min_lat_slip_denominator) if slip_denominator else 1.0
    iz = float(p.rigid_body.moi @ np.abs(frame.vrt))
    cf = float(stiffness[front].sum()) * factor
    cr = float(stiffness[rear].sum()) * factor
    params = BicycleParams(mass=p.rigid_body.mass, iz=iz, lf=lf, lr=lr, cf=cf, cr=cr, speed=speed)
    return EquivalentBicycle(params, load, stiffness, factor, lng)


def front_steer_angle(vehicle_params: Any, steer: float, speed: float = 0.0) -> float:
    """The mean road-wheel angle (rad) of the first axle for a steer command, with the vehicle's
    steer response and Ackermann correction (what the bicycle model calls δ)."""
    from simcore.steering.functions import ackermann_steer_update, steer_command_response_update

    p = vehicle_params
    angles = steer_command_response_update(steer, speed, p.steer_command_response)
    angles = ackermann_steer_update(steer, p.steer_command_response, p.ackermann, angles.copy())
    return float(np.mean(angles[list(p.axle_description.axles[0])]))
