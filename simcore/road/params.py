"""Road geometry query params (``PxVehiclePhysXRoadGeometryQueryParams``, without the PhysX filters)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from simcore.frame import Frame, Scale


class RoadGeometryQueryType(IntEnum):
    """``PxVehiclePhysXRoadGeometryQueryType``: how the ground under a wheel is found."""

    #: No query: the road geometry state is left as the user (or another component) wrote it.
    NONE = 0
    #: One ray per wheel from the top of the wheel at max compression to its bottom at max droop.
    RAYCAST = 1
    #: The wheel cylinder swept from max compression to max droop.
    SWEEP = 2


@dataclass(frozen=True)
class RoadGeometryQueryParams:
    """Which query the road geometry component runs. Vehicle2's snippets use RAYCAST."""

    road_geometry_query_type: RoadGeometryQueryType = RoadGeometryQueryType.RAYCAST

    def __post_init__(self) -> None:
        kind = RoadGeometryQueryType(self.road_geometry_query_type)
        object.__setattr__(self, "road_geometry_query_type", kind)

    def validate(self) -> None:
        """Always valid once constructed (the enum conversion rejects bad values)."""

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> RoadGeometryQueryParams:
        """Frame- and scale-free."""
        return self
