"""Road geometry (Vehicle2 ``roadGeometry/`` + ``physxRoadGeometry/``): planes, heightfields, queries."""

from simcore.road.geometry import (
    HeightfieldRoad,
    HeightfieldSurface,
    PlaneRoad,
    RayHits,
    RoadGeometry,
    SweepHits,
)
from simcore.road.params import RoadGeometryQueryParams, RoadGeometryQueryType
from simcore.road.states import RoadGeometryState

__all__ = [
    "HeightfieldRoad",
    "HeightfieldSurface",
    "PlaneRoad",
    "RayHits",
    "RoadGeometry",
    "RoadGeometryQueryParams",
    "RoadGeometryQueryType",
    "RoadGeometryState",
    "SweepHits",
]
