"""Road geometry: plane and heightfield raycasts and wheel sweeps, frames, the per-wheel query."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Scale
from simcore.maths import normalize
from simcore.presets import default_vehicle
from simcore.road import HeightfieldRoad, PlaneRoad, RoadGeometryQueryType, RoadGeometryState
from simcore.road.functions import road_geometry_query_update


def test_plane_raycast_is_exact_and_one_sided() -> None:
    n = normalize(np.array([0.2, -0.1, 1.0]))
    road = PlaneRoad.through_point([1.0, 2.0, 0.5], n, friction=0.8)
    o = np.array([[0.0, 0.0, 3.0], [0.0, 0.0, -3.0], [0.0, 0.0, 3.0], [0.0, 0.0, 3.0]])
    d = np.array([[0.0, 0.0, -1.0], [0.0, 0.0, -1.0], [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    hits = road.raycast(o, d, np.array([10.0, 10.0, 10.0, 0.5]))
    # only the first ray: the second starts inside, the third points away, the fourth is too short
    np.testing.assert_array_equal(hits.hit, [True, False, False, False])
    assert road.signed_distance(hits.position[0]) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(hits.normal[0], n)
    assert hits.friction[0] == 0.8


def test_plane_sweep_matches_brute_force_lowest_point() -> None:
    rng = np.random.default_rng(3)
    road = PlaneRoad(normalize(np.array([0.3, 0.4, 1.0])), 0.2)
    for _ in range(20):
        lat = normalize(rng.normal(size=3))
        centre = rng.normal(size=3) * 0.3 + np.array([0.0, 0.0, 0.6])
        r, h, travel = 0.35, 0.15, 0.25
        down = np.array([0.0, 0.0, -1.0])
        # brute force: dense points on the cylinder, lowest clearance along the sweep
        u = normalize(np.cross(lat, [1.0, 0.0, 0.0]) if abs(lat[0]) < 0.9 else np.cross(lat, [0.0, 1.0, 0.0]))
        w = np.cross(lat, u)
        th = np.linspace(0, 2 * np.pi, 721)
        side = np.linspace(-h, h, 41)
        pts = (centre + side[:, None, None] * lat + r * (np.cos(th)[None, :, None] * u
                                                         + np.sin(th)[None, :, None] * w)).reshape(-1, 3)
        lowest = road.signed_distance(pts).min()
        reach = lowest + travel * (down @ road.normal)
        sweep = road.sweep_wheels(centre[None], lat[None], np.array([r]), np.array([h]), down[None],
                                  np.array([travel]))
        if abs(min(lowest, reach)) > 1e-3:  # away from the tangent case the answers agree
            assert bool(sweep.hit[0]) == (min(lowest, reach) <= 0.0)
        if sweep.hit[0]:
            np.testing.assert_allclose(sweep.plane[0], road.plane)


def _bump_field(surface: str) -> HeightfieldRoad:
    h = np.zeros((11, 6))
    h[5, :] = 0.3  # a ridge across the road at row 5
    return HeightfieldRoad(h, row_spacing=0.5, column_spacing=1.0, origin=np.array([-1.0, -2.5, 0.1]),
                           surface=surface)


def test_heightfield_triangles_raycast_is_exact() -> None:
    hf = _bump_field("triangles")
    # points over the ridge's rising side: height = 0.1 + 0.3 * (x - x4) / 0.5 with x4 = -1 + 4*0.5
    xs = np.array([1.05, 1.2, 1.45, 1.55, 1.9])
    o = np.stack((xs, np.full(5, 0.3), np.full(5, 5.0)), axis=1)
    hits = hf.raycast(o, np.tile([0.0, 0.0, -1.0], (5, 1)), np.full(5, 10.0))
    expected = 0.1 + np.where(xs < 1.5, 0.3 * (xs - 1.0) / 0.5, 0.3 * (2.0 - xs) / 0.5)
    np.testing.assert_allclose(hits.position[:, 2], expected, atol=1e-12)
    slope = 0.3 / 0.5
    np.testing.assert_allclose(hits.normal[0], normalize(np.array([-slope, 0.0, 1.0])), atol=1e-12)
    np.testing.assert_allclose(hits.normal[3], normalize(np.array([slope, 0.0, 1.0])), atol=1e-12)
    # a slanted ray finds the first crossing, and outside the grid there is nothing
    slant = hf.raycast(np.array([[-0.5, 0.0, 0.6]]), normalize(np.array([[1.0, 0.0, -0.2]])),
                       np.array([10.0]))
    assert slant.hit[0] and slant.position[0, 0] < 1.5
    off = hf.raycast(np.array([[10.0, 0.0, 1.0]]), np.array([[0.0, 0.0, -1.0]]), np.array([10.0]))
    assert not off.hit[0]


def test_heightfield_bilinear_matches_height_function() -> None:
    rng = np.random.default_rng(5)
    h = rng.uniform(0.0, 0.4, size=(6, 7))
    hf = HeightfieldRoad(h, 0.7, 0.9, surface="bilinear")
    xy = rng.uniform([0.0, 0.0], [0.7 * 5, 0.9 * 6], size=(30, 2))
    o = np.column_stack((xy, np.full(30, 3.0)))
    hits = hf.raycast(o, np.tile([0.0, 0.0, -1.0], (30, 1)), np.full(30, 5.0))
    height, inside = hf.height_at(o)
    assert hits.hit.all() and inside.all()
    np.testing.assert_allclose(hits.position[:, 2], height, atol=1e-10)
    # the normal is perpendicular to the surface: finite differences of the height
    eps = 1e-6
    dx = (hf.height_at(o + [eps, 0, 0])[0] - hf.height_at(o - [eps, 0, 0])[0]) / (2 * eps)
    dy = (hf.height_at(o + [0, eps, 0])[0] - hf.height_at(o - [0, eps, 0])[0]) / (2 * eps)
    np.testing.assert_allclose(hits.normal, normalize(np.column_stack((-dx, -dy, np.ones(30)))), atol=1e-6)


def test_heightfield_in_other_frames_and_scales_is_the_same_terrain() -> None:
    hf = _bump_field("triangles")
    o = np.array([[1.2, 0.3, 5.0], [0.2, -1.0, 5.0]])
    d = np.tile([0.0, 0.0, -1.0], (2, 1))
    base = hf.raycast(o, d, np.full(2, 10.0))
    for frame, scale in ((Y_UP_Z_FORWARD, 1.0), (SAE_J670, 1.0), (DEFAULT_FRAME, 100.0)):
        moved = hf.transform_and_scale(DEFAULT_FRAME, frame, Scale(1.0), Scale(scale))
        rot = frame.matrix @ DEFAULT_FRAME.matrix.T
        hits = moved.raycast((o @ rot.T) * scale, d @ rot.T, np.full(2, 10.0 * scale))
        np.testing.assert_allclose(hits.position, (base.position @ rot.T) * scale, atol=1e-9 * scale)
        np.testing.assert_allclose(hits.normal, base.normal @ rot.T, atol=1e-12)


def test_sampled_heightfield_sweep_finds_the_ridge_before_the_centre_reaches_it() -> None:
    hf = _bump_field("triangles")
    lat = np.array([[0.0, 1.0, 0.0]])
    down = np.array([[0.0, 0.0, -1.0]])
    # wheel centre 0.35 before the ridge top, low enough that its front touches the slope
    sweep = hf.sweep_wheels(np.array([[1.15, 0.0, 0.75]]), lat, np.array([0.35]), np.array([0.1]), down,
                            np.array([0.3]))
    ray = hf.raycast(np.array([[1.15, 0.0, 0.75]]), down, np.array([0.3 + 0.35]))
    assert sweep.hit[0]
    # the contact plane is the slope (tilted), and it lies above the point under the centre
    assert sweep.plane[0, 0] < -0.1
    assert -(sweep.plane[0, 3] + sweep.plane[0, 0] * 1.15) / sweep.plane[0, 2] > ray.position[0, 2]


@pytest.mark.parametrize("kind", [RoadGeometryQueryType.RAYCAST, RoadGeometryQueryType.SWEEP])
def test_query_finds_the_ground_plane_under_every_wheel(kind: RoadGeometryQueryType) -> None:
    params = default_vehicle(DEFAULT_FRAME)
    road = PlaneRoad.ground(DEFAULT_FRAME, height=0.05, friction=0.7)
    out = RoadGeometryState.default(4)
    body_pos = np.array([0.0, 0.0, 0.55])
    quat = np.array([0.0, 0.0, 0.0, 1.0])
    road_geometry_query_update(road, kind, DEFAULT_FRAME, params.wheel, params.suspension, np.zeros(4),
                               body_pos, quat, out)
    assert out.hit_state.all()
    np.testing.assert_allclose(out.plane, np.tile([0.0, 0.0, 1.0, -0.05], (4, 1)), atol=1e-12)
    np.testing.assert_allclose(out.friction, 0.7)
    # lift the car out of reach: nothing found
    road_geometry_query_update(road, kind, DEFAULT_FRAME, params.wheel, params.suspension, np.zeros(4),
                               body_pos + [0.0, 0.0, 2.0], quat, out)
    assert not out.hit_state.any()
    np.testing.assert_array_equal(out.plane, 0.0)


def test_road_params_are_validated() -> None:
    with pytest.raises(ValueError, match="friction"):
        PlaneRoad(friction=-1.0)
    with pytest.raises(ValueError, match="2x2"):
        HeightfieldRoad(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="row_spacing"):
        HeightfieldRoad(np.zeros((3, 3)), row_spacing=0.0)
