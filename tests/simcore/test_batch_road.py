"""The batched road geometry query equals the single-vehicle query on every vehicle.

:class:`~simcore.road.batch.RoadGeometryBatchComponent` answers a plane road with a compiled kernel
(equal to :class:`~simcore.road.components.RoadGeometryQueryComponent` to rounding: numpy forms
the plane's dot products with BLAS) and any other road with one call of the road's own query per
query type over all the wheels (the road gets the reference's inputs, stacked). Both query types,
NONE (state untouched), user roads, a replaced road or params, and a fleet trajectory through the
three batch components (road, suspension, tire) are checked here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from simcore.fleet import Fleet
from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Frame
from simcore.maths import normalize, quat_from_axis_angle, quat_multiply
from simcore.presets import default_vehicle
from simcore.road import (
    HeightfieldRoad,
    HeightfieldSurface,
    PlaneRoad,
    RayHits,
    RoadGeometry,
    RoadGeometryQueryParams,
    RoadGeometryQueryType,
)
from simcore.road.batch import RoadGeometryBatchComponent
from simcore.road.components import RoadGeometryQueryComponent
from simcore.suspension.batch import SuspensionBatchComponent
from simcore.tire.batch import TireBatchComponent
from simcore.vehicle import Vehicle, VehicleParams
from tests.simcore.test_batch_suspension import assert_rows_equal, fleet_and_singles

RAY, SWEEP, NONE = RoadGeometryQueryType.RAYCAST, RoadGeometryQueryType.SWEEP, RoadGeometryQueryType.NONE
#: Plane-road kernel vs numpy reference: lengths of order 1 agree to a few ulps.
PLANE_ATOL = 1e-13
STATE = ("road_geometry",)


class CountingRoad(RoadGeometry):
    """A user road (not a PlaneRoad) that forwards to ``inner`` and records each query's size."""

    def __init__(self, inner: RoadGeometry) -> None:
        self.inner = inner
        self.calls: list[tuple[str, int]] = []

    def raycast(self, origins: np.ndarray, directions: np.ndarray, max_distance: np.ndarray) -> RayHits:
        self.calls.append(("raycast", len(origins)))
        return self.inner.raycast(origins, directions, max_distance)

    def sweep_wheels(self, centres, lateral_axes, radius, half_width, directions, distance):  # noqa: ANN001, ANN201
        self.calls.append(("sweep", len(centres)))
        return self.inner.sweep_wheels(centres, lateral_axes, radius, half_width, directions, distance)

    def transform_and_scale(self, src_frame, trg_frame, src_scale, trg_scale):  # noqa: ANN001, ANN201
        return CountingRoad(self.inner.transform_and_scale(src_frame, trg_frame, src_scale, trg_scale))


class WavyRoad(RoadGeometry):
    """A user road with only a raycast: ``vrt`` height ``0.04 sin(lng)`` (ray marching, vectorised)."""

    def __init__(self, frame: Frame) -> None:
        self.frame = frame

    def _height(self, p: np.ndarray) -> np.ndarray:
        return p @ self.frame.vrt - 0.04 * np.sin(p @ self.frame.lng)

    def raycast(self, origins: np.ndarray, directions: np.ndarray, max_distance: np.ndarray) -> RayHits:
        t = np.linspace(0.0, 1.0, 2001)[None, :] * max_distance[:, None]
        h = self._height((origins[:, None, :] + directions[:, None, :] * t[..., None]).reshape(-1, 3))
        h = h.reshape(t.shape)
        first = np.argmax(h <= 0.0, axis=1)
        hit = (h[np.arange(len(t)), first] <= 0.0) & (h[:, 0] > 0.0)
        dist = np.where(hit, t[np.arange(len(t)), first], 0.0)
        pos = origins + directions * dist[:, None]
        slope = 0.04 * np.cos(pos @ self.frame.lng)
        normal = normalize(self.frame.vrt[None, :] - slope[:, None] * self.frame.lng[None, :])
        return RayHits(hit, dist, pos, np.where(hit[:, None], normal, 0.0), np.where(hit, 0.9, 0.0))

    def transform_and_scale(self, src_frame, trg_frame, src_scale, trg_scale):  # noqa: ANN001, ANN201
        raise NotImplementedError


class LiftedPlane(PlaneRoad):
    """A subclass of PlaneRoad: not the exact class, so the batch asks its own query."""


def _heightfield(frame: Frame, surface: HeightfieldSurface) -> HeightfieldRoad:
    rng = np.random.default_rng(9)
    origin = frame.compute_translation(-10.0, -7.0, 0.0)
    heights = rng.normal(0.0, 0.04, (40, 30))
    return HeightfieldRoad(heights, 0.5, 0.5, origin=origin, frame=frame, surface=surface)


def _params(frame: Frame, kind: RoadGeometryQueryType) -> VehicleParams:
    return default_vehicle(frame).replace(road_geometry_query=RoadGeometryQueryParams(kind))


def _kinds(frame: Frame, kinds: Sequence[RoadGeometryQueryType]) -> list[VehicleParams]:
    by_kind = {k: _params(frame, k) for k in set(kinds)}
    return [by_kind[k] for k in kinds]


def _situation(v: Vehicle, rng: np.random.Generator) -> None:
    """Somewhere over the road, tilted and steered, some wheels out of reach; a road geometry state
    that NONE must leave alone."""
    f = v.frame
    v.place(f.compute_translation(rng.uniform(-3.0, 3.0), rng.uniform(-3.0, 3.0), rng.uniform(0.35, 0.75)))
    tilt = quat_from_axis_angle(normalize(rng.normal(size=3)), rng.uniform(-0.2, 0.2))
    v.states.rigid_body.quat[:] = quat_multiply(quat_from_axis_angle(f.vrt, rng.uniform(-np.pi, np.pi)), tilt)
    v.states.steer_command_response.response[:] = rng.uniform(-0.5, 0.5, v.nb_wheels)
    v.states.road_geometry.plane[:] = rng.normal(size=(v.nb_wheels, 4))
    v.states.road_geometry.velocity[:] = 1.0


def _query_both(fleet, singles: Sequence[Vehicle], batch: RoadGeometryBatchComponent, what: str,
                atol: float) -> None:
    assert batch.update(0.01, fleet.context)
    for v in singles:
        assert RoadGeometryQueryComponent(v).update(0.01, v.context)
    assert_rows_equal(fleet, singles, STATE, what, atol=atol)


@pytest.mark.parametrize("frame", [DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670], ids=["xyz", "yup", "sae"])
def test_plane_roads_equal_the_reference_query(frame) -> None:
    """Tilted planes; raycast, sweep and NONE mixed in one fleet."""
    rng = np.random.default_rng(1)
    params = _kinds(frame, [RAY, SWEEP, NONE] * 3)
    hits = 0
    for seed in range(8):
        normal = frame.vrt + rng.normal(0.0, 0.15, 3)
        road = PlaneRoad.through_point(frame.vrt * rng.uniform(-0.1, 0.1), normal, rng.uniform(0.3, 1.2))
        fleet, singles = fleet_and_singles(params, _situation, seed, road=road)
        _query_both(fleet, singles, RoadGeometryBatchComponent(fleet), f"seed {seed}", PLANE_ATOL)
        hits += int(fleet.states.road_geometry.hit_state.sum())
    assert 0 < hits < 8 * 6 * 4  # some wheels find the plane, some are out of reach


@pytest.mark.parametrize("surface", list(HeightfieldSurface), ids=lambda s: s.value)
def test_a_heightfield_is_queried_once_per_query_type_for_all_wheels(surface) -> None:
    frame = Y_UP_Z_FORWARD
    field = CountingRoad(_heightfield(frame, surface))
    fleet, singles = fleet_and_singles(_kinds(frame, [RAY, SWEEP, RAY, NONE, RAY, SWEEP]), _situation, 0,
                                       road=field)
    batch = RoadGeometryBatchComponent(fleet)
    field.calls.clear()
    batch.update(0.01, fleet.context)
    assert field.calls == [("raycast", 3 * 4), ("sweep", 2 * 4)]
    _query_both(fleet, singles, batch, surface.value, atol=1e-12)
    assert fleet.states.road_geometry.hit_state.any()


@pytest.mark.parametrize("road", ["wavy", "plane_subclass"])
def test_user_roads_are_asked_their_own_query(road) -> None:
    frame = DEFAULT_FRAME
    inner = WavyRoad(frame) if road == "wavy" else LiftedPlane(frame.vrt, -0.05, 0.6)
    counting = CountingRoad(inner)
    fleet, singles = fleet_and_singles(_kinds(frame, [RAY, SWEEP, SWEEP, RAY]), _situation, 3, road=counting)
    batch = RoadGeometryBatchComponent(fleet)
    counting.calls.clear()
    batch.update(0.01, fleet.context)
    assert counting.calls == [("raycast", 2 * 4), ("sweep", 2 * 4)]
    _query_both(fleet, singles, batch, road, atol=1e-12)
    assert fleet.states.road_geometry.hit_state.any()


def test_a_replaced_road_and_replaced_params_are_followed() -> None:
    frame = DEFAULT_FRAME
    fleet, singles = fleet_and_singles(_kinds(frame, [RAY, RAY, RAY]), _situation, 5)
    batch = RoadGeometryBatchComponent(fleet)
    fleet.sequence.replace("road_geometry", batch)
    _query_both(fleet, singles, batch, "flat", PLANE_ATOL)
    field = _heightfield(frame, HeightfieldSurface.BILINEAR)
    fleet.road = field
    for v in singles:
        v.road = field
    _query_both(fleet, singles, batch, "heightfield", 1e-12)
    tilted = PlaneRoad(np.array([0.05, 0.0, 1.0]), 0.1, 0.7)
    fleet.road = tilted
    fleet.set_params(2, _params(frame, SWEEP))  # the fleet calls repack() on its sequence's components
    for v in singles:
        v.road = tilted
    singles[2].params = _params(frame, SWEEP)
    _query_both(fleet, singles, batch, "tilted plane, one vehicle sweeping", PLANE_ATOL)


def test_a_fleet_trajectory_through_the_batch_components_follows_single_vehicles() -> None:
    """Road, suspension and tire batched in a fleet's sequence; two seconds of driving over a
    heightfield stay with standalone vehicles."""
    frame = DEFAULT_FRAME
    field = _heightfield(frame, HeightfieldSurface.TRIANGLES)
    params = _kinds(frame, [RAY, SWEEP, SWEEP])
    fleet = Fleet(params, road=field)
    for name, make in (("road_geometry", RoadGeometryBatchComponent),
                       ("suspension", SuspensionBatchComponent), ("tire", TireBatchComponent)):
        fleet.sequence.replace(name, make(fleet))
    singles = [Vehicle(p, road=field) for p in params]
    for i, v in enumerate(singles):
        for target in (v, fleet[i]):
            target.place_on_road(lng=-8.0 + 2.0 * i, lat=-2.0 + 2.0 * i, clearance=-0.1, speed=6.0)
    dt = 1.0 / 60.0
    for i in range(120):
        throttle, brake, steer = (0.5 if i < 60 else 0.0), (0.0 if i < 60 else 0.6), 0.4 * np.sin(i / 15.0)
        fleet.commands.throttle[:], fleet.commands.brake[:], fleet.commands.steer[:] = throttle, brake, steer
        for v in singles:
            v.commands.set(throttle=throttle, brake=brake, steer=steer)
            v.step(dt)
        fleet.step(dt)
    names = [name for name, state in singles[0].states.items() if hasattr(state, "as_dict")]
    assert_rows_equal(fleet, singles, names, "after 2 s", atol=1e-9, rtol=1e-9)
    travelled = fleet.states.rigid_body.pos @ frame.lng - (-8.0 + 2.0 * np.arange(3))
    assert np.all(travelled > 5.0), travelled
    assert fleet.states.road_geometry.hit_state.all()  # still on the heightfield
