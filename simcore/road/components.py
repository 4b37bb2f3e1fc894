"""Road geometry query component (``PxVehiclePhysXRoadGeometrySceneQueryComponent``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.road.functions import road_geometry_query_update

if TYPE_CHECKING:
    from simcore.vehicle import Vehicle


class RoadGeometryQueryComponent(Component):
    """Finds the ground plane and friction under every wheel.

    Reads ``vehicle.road``, ``params.road_geometry_query``, ``params.wheel``, ``params.suspension``,
    ``states.steer_command_response``, ``states.rigid_body``; writes ``states.road_geometry``.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        v = self.vehicle
        p, s = v.params, v.states
        road_geometry_query_update(
            v.road, p.road_geometry_query.road_geometry_query_type, context.frame, p.wheel, p.suspension,
            s.steer_command_response.response, s.rigid_body.pos, s.rigid_body.quat, s.road_geometry,
        )
        return True
