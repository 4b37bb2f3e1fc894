"""Road geometry query (``PxVehiclePhysXRoadGeometryQueryUpdate`` without a PhysX scene).

For every wheel, the query starts at the wheel pose at maximum compression (steer applied, no
compliance, no rotation) and looks along the suspension travel direction in the world frame:

* RAYCAST: from the top of the wheel (``centre - dir * radius``) over ``travel_dist + 2 radius``;
  the hit plane goes through the hit point with the surface normal.
* SWEEP: the wheel cylinder from max compression over ``travel_dist``; the plane is the contact
  plane (for a :class:`~simcore.road.geometry.PlaneRoad`, the road plane itself).

The result is a local plane + friction per wheel in a
:class:`~simcore.road.states.RoadGeometryState`; the suspension then computes the jounce from
that plane (by its own raycast or sweep rule), exactly as in Vehicle2.
"""

from __future__ import annotations

import numpy as np

from simcore.frame import Frame
from simcore.maths import quat_rotate
from simcore.road.geometry import RoadGeometry
from simcore.road.params import RoadGeometryQueryType
from simcore.road.states import RoadGeometryState
from simcore.suspension.helpers import compute_suspension_raycast, compute_suspension_sweep
from simcore.suspension.params import SuspensionParams
from simcore.wheel.params import WheelParams


def road_geometry_query_update(
    road: RoadGeometry,
    query_type: RoadGeometryQueryType,
    frame: Frame,
    wheel: WheelParams,
    suspension: SuspensionParams,
    steer: np.ndarray,
    body_pos: np.ndarray,
    body_quat: np.ndarray,
    out: RoadGeometryState,
) -> RoadGeometryState:
    """Fill ``out`` with the plane, friction, velocity and hit flag under each wheel; return it."""
    if query_type == RoadGeometryQueryType.NONE:
        return out
    if query_type == RoadGeometryQueryType.RAYCAST:
        start, dirs, length = compute_suspension_raycast(frame, wheel, suspension, steer, body_pos, body_quat)
        hits = road.raycast(start, dirs, length)
        out.hit_state[:] = hits.hit
        out.plane[:, :3] = hits.normal
        out.plane[:, 3] = np.where(hits.hit, -np.einsum("ij,ij->i", hits.normal, hits.position), 0.0)
        out.friction[:] = hits.friction
    else:
        centres, quats, dirs, length = compute_suspension_sweep(frame, suspension, steer, body_pos, body_quat)
        lat = quat_rotate(quats, frame.lat)
        sweep = road.sweep_wheels(centres, lat, wheel.radius, wheel.half_width, dirs, length)
        out.hit_state[:] = sweep.hit
        out.plane[:] = sweep.plane
        out.friction[:] = sweep.friction
    out.velocity[:] = 0.0
    return out
