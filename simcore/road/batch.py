"""Batched road geometry query: :class:`~simcore.road.components.RoadGeometryQueryComponent` for
every vehicle of a fleet.

The fleet's vehicles share one road (``fleet.road``, read at every update as the reference reads
``vehicle.road``) and each has its own query type (``params.road_geometry_query``):

* on a :class:`~simcore.road.geometry.PlaneRoad` (exactly that class) one compiled kernel,
  :func:`_k_plane_query`, computes the query start of every wheel and intersects it with the
  plane: the arithmetic of :func:`~simcore.suspension.helpers.compute_suspension_raycast` /
  :func:`~simcore.suspension.helpers.compute_suspension_sweep`, then of
  :meth:`PlaneRoad.raycast <simcore.road.geometry.PlaneRoad.raycast>` /
  :meth:`PlaneRoad.sweep_wheels <simcore.road.geometry.PlaneRoad.sweep_wheels>`, then of
  :func:`~simcore.road.functions.road_geometry_query_update`;
* on any other road (:class:`~simcore.road.geometry.HeightfieldRoad`, a user's road, a subclass
  of ``PlaneRoad``) the road's own ``raycast`` is called once for all the raycasting vehicles'
  wheels and its ``sweep_wheels`` once for all the sweeping vehicles' wheels (``n_vehicles *
  n_wheels`` rows at most); compiled kernels compute the query geometry before the call
  (:func:`_k_query_geometry`) and write the states after it (:func:`_k_store_raycast`,
  :func:`_k_store_sweep`). Batched, though not compiled: the road's query is its own numpy code.

Both query types are supported; a vehicle whose query type is NONE keeps its road geometry state
untouched, as in the reference. The plane kernel agrees with the reference to rounding (numpy
forms the plane's dot products with BLAS, the kernel left to right); on other roads the road gets
the reference's inputs, stacked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pvdkit.jit import njit
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.maths import qrot
from simcore.road.geometry import PlaneRoad, RoadGeometry
from simcore.road.params import RoadGeometryQueryType
from simcore.suspension._fast import (
    G_HALF_WIDTH,
    G_RADIUS,
    G_TDIR,
    G_TDIST,
    GEOM_WIDTH,
    frame_axes,
    pack_geometry,
    wheel_pose,
)
from simcore.suspension.batch import ParamsWatch
from simcore.suspension.states import UNSPECIFIED_JOUNCE

_JIT = {"cache": True, "nogil": True}

_RAYCAST = int(RoadGeometryQueryType.RAYCAST)
_SWEEP = int(RoadGeometryQueryType.SWEEP)


# -------------------------------------------------------------------------------------- kernels


@njit(inline="always", **_JIT)
def _query_start(axes, signs, g, i, steer, b_pos, b_quat):  # pragma: no cover - compiled
    """World pose of wheel ``i`` at max compression (no compliance, no rotation) and its world travel
    direction: ``(px, py, pz, qx, qy, qz, qw, dx, dy, dz)``
    (``compute_wheel_pose_for_suspension_query`` and ``compute_suspension_direction``)."""
    px, py, pz, qx, qy, qz, qw = wheel_pose(
        axes, signs, g, i, UNSPECIFIED_JOUNCE, 0.0, steer + 0.0, 0.0, b_pos, b_quat
    )
    dx, dy, dz = qrot(
        b_quat[0], b_quat[1], b_quat[2], b_quat[3], g[i, G_TDIR], g[i, G_TDIR + 1], g[i, G_TDIR + 2]
    )
    return px, py, pz, qx, qy, qz, qw, dx, dy, dz


@njit(**_JIT)
def _k_plane_query(
    rows, kind, axes, signs, lat_axis, g, steer, b_pos, b_quat, road_plane, mu,
    plane_out, friction_out, velocity_out, hit_out,
):  # pragma: no cover - compiled
    """Road geometry of every wheel of vehicles ``rows`` on the plane ``road_plane``
    (``[nx, ny, nz, d]``, unit normal) with friction ``mu``; ``kind[v]`` is vehicle ``v``'s query
    type (1 raycast, 2 sweep). Writes plane, friction, zero velocity and the hit flag."""
    nx, ny, nz, d = road_plane[0], road_plane[1], road_plane[2], road_plane[3]
    for r in range(rows.shape[0]):
        v = rows[r]
        gv = g[v]
        for i in range(gv.shape[0]):
            px, py, pz, qx, qy, qz, qw, dx, dy, dz = _query_start(
                axes, signs, gv, i, steer[v, i], b_pos[v], b_quat[v]
            )
            radius = gv[i, G_RADIUS]
            travel = gv[i, G_TDIST]
            if kind[v] == 1:
                # compute_suspension_raycast, then PlaneRoad.raycast
                sx, sy, sz = px - dx * radius, py - dy * radius, pz - dz * radius
                length = travel + 2.0 * radius
                h0 = sx * nx + sy * ny + sz * nz + d
                rate = dx * nx + dy * ny + dz * nz
                t = -h0 / rate if rate < 0.0 else np.inf
                hit = rate < 0.0 and t > 0.0 and t <= length
                dist = t if hit else 0.0
                hx, hy, hz = sx + dx * dist, sy + dy * dist, sz + dz * dist
                if hit:
                    # summed as numpy's einsum sums a length-3 contraction ((x + z) + y)
                    plane_out[v, i, 0], plane_out[v, i, 1], plane_out[v, i, 2] = nx, ny, nz
                    plane_out[v, i, 3] = -((nx * hx + nz * hz) + ny * hy)
                    friction_out[v, i] = mu + 0.0
                else:
                    for c in range(4):
                        plane_out[v, i, c] = 0.0
                    friction_out[v, i] = 0.0
            else:
                # compute_suspension_sweep, then PlaneRoad.sweep_wheels
                lx, ly, lz = qrot(qx, qy, qz, qw, lat_axis[0], lat_axis[1], lat_axis[2])
                na = lx * nx + ly * ny + lz * nz
                reach = radius * np.sqrt(max(1.0 - na * na, 0.0)) + gv[i, G_HALF_WIDTH] * abs(na)
                clearance0 = px * nx + py * ny + pz * nz + d - reach
                clearance1 = clearance0 + travel * (dx * nx + dy * ny + dz * nz)
                # np.minimum propagates NaN, which then compares False
                lowest = clearance0 if clearance0 < clearance1 else clearance1
                if clearance0 != clearance0 or clearance1 != clearance1:
                    lowest = np.nan
                hit = lowest <= 0.0
                if hit:
                    plane_out[v, i, 0], plane_out[v, i, 1], plane_out[v, i, 2] = nx, ny, nz
                    plane_out[v, i, 3] = d
                    friction_out[v, i] = mu
                else:
                    for c in range(4):
                        plane_out[v, i, c] = 0.0
                    friction_out[v, i] = 0.0
            hit_out[v, i] = hit
            for c in range(3):
                velocity_out[v, i, c] = 0.0


@njit(**_JIT)
def _k_query_geometry(
    rows, sweep, axes, signs, lat_axis, g, steer, b_pos, b_quat, start, dirs, length, lat, radius, half_width,
):  # pragma: no cover - compiled
    """Query inputs of every wheel of vehicles ``rows``, flattened to ``r * n_wheels + i``.

    Raycast (``sweep`` False): ``start`` the wheel top at max compression, ``dirs`` the travel
    direction, ``length`` ``travel_dist + 2 radius`` (``compute_suspension_raycast``). Sweep: ``start``
    the wheel centre at max compression, ``lat`` its lateral axis, ``radius``, ``half_width``,
    ``length`` ``travel_dist`` (``compute_suspension_sweep`` and the reference's ``lat``).
    """
    k = 0
    for r in range(rows.shape[0]):
        v = rows[r]
        gv = g[v]
        for i in range(gv.shape[0]):
            px, py, pz, qx, qy, qz, qw, dx, dy, dz = _query_start(
                axes, signs, gv, i, steer[v, i], b_pos[v], b_quat[v]
            )
            rad = gv[i, G_RADIUS]
            dirs[k, 0], dirs[k, 1], dirs[k, 2] = dx, dy, dz
            if sweep:
                start[k, 0], start[k, 1], start[k, 2] = px, py, pz
                lat[k, 0], lat[k, 1], lat[k, 2] = qrot(qx, qy, qz, qw, lat_axis[0], lat_axis[1], lat_axis[2])
                radius[k] = rad
                half_width[k] = gv[i, G_HALF_WIDTH]
                length[k] = gv[i, G_TDIST]
            else:
                start[k, 0], start[k, 1], start[k, 2] = px - dx * rad, py - dy * rad, pz - dz * rad
                length[k] = gv[i, G_TDIST] + 2.0 * rad
            k += 1


@njit(**_JIT)
def _k_store_raycast(
    rows, hit, normal, position, friction, plane_out, friction_out, velocity_out, hit_out,
):  # pragma: no cover - compiled
    """Write ray hits (flattened as :func:`_k_query_geometry`) into the road geometry states: the
    plane through the hit point, or ``d = 0`` for a miss (``road_geometry_query_update``)."""
    n_wheels = plane_out.shape[1]
    for r in range(rows.shape[0]):
        v = rows[r]
        for i in range(n_wheels):
            k = r * n_wheels + i
            nx, ny, nz = normal[k, 0], normal[k, 1], normal[k, 2]
            plane_out[v, i, 0], plane_out[v, i, 1], plane_out[v, i, 2] = nx, ny, nz
            if hit[k]:
                plane_out[v, i, 3] = -((nx * position[k, 0] + nz * position[k, 2]) + ny * position[k, 1])
            else:
                plane_out[v, i, 3] = 0.0
            friction_out[v, i] = friction[k]
            hit_out[v, i] = hit[k]
            for c in range(3):
                velocity_out[v, i, c] = 0.0


@njit(**_JIT)
def _k_store_sweep(
    rows, hit, plane, friction, plane_out, friction_out, velocity_out, hit_out,
):  # pragma: no cover - compiled
    """Write sweep contacts (flattened as :func:`_k_query_geometry`) into the road geometry states."""
    n_wheels = plane_out.shape[1]
    for r in range(rows.shape[0]):
        v = rows[r]
        for i in range(n_wheels):
            k = r * n_wheels + i
            for c in range(4):
                plane_out[v, i, c] = plane[k, c]
            friction_out[v, i] = friction[k]
            hit_out[v, i] = hit[k]
            for c in range(3):
                velocity_out[v, i, c] = 0.0


# ------------------------------------------------------------------------------------ component


class RoadGeometryBatchComponent(Component):
    """Finds the ground plane and friction under every wheel of every vehicle.

    Reads ``fleet.road``; ``road_geometry_query``, ``wheel`` and ``suspension`` from
    ``fleet.params``; ``steer_command_response`` (optional: zero steer without it) and
    ``rigid_body`` from ``fleet.states``; ``fleet.frame``. Writes ``fleet.states.road_geometry``
    for every vehicle whose query type is not NONE.
    """

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        n, w = fleet.n_vehicles, fleet.nb_wheels
        s = fleet.states
        steer = s.get("steer_command_response")
        rb, out = s.rigid_body.arrays, s.road_geometry.arrays
        steer_angles = steer.arrays["response"] if steer is not None else np.zeros((n, w))
        self._inputs = (steer_angles, rb["pos"], rb["quat"])
        self._outputs = (out["plane"], out["friction"], out["velocity"], out["hit_state"])
        self.geometry = np.zeros((n, w, GEOM_WIDTH))
        self.kind = np.zeros(n, dtype=np.int64)
        self._watch = ParamsWatch(n)
        self._road: RoadGeometry | None = None
        self._plane = np.zeros(4)
        self._friction = 0.0
        self.repack()

    def repack(self) -> None:
        """Pack the wheel and suspension geometry and query type of every vehicle whose params object
        was replaced (all on the first call); sort the vehicles by query type."""
        frame = self.fleet.frame
        self._axes, self._signs = frame_axes(frame)
        self._lat_axis = np.ascontiguousarray(frame.lat, dtype=np.float64)
        built: dict[int, np.ndarray] = {}
        params = self.fleet.params
        for v in self._watch.replaced(params):
            p = params[v]
            g = built.get(id(p))
            if g is None:
                g = built[id(p)] = pack_geometry(p.wheel, p.suspension)
            self.geometry[v] = g
            self.kind[v] = int(p.road_geometry_query.road_geometry_query_type)
        self._active = np.flatnonzero(self.kind != int(RoadGeometryQueryType.NONE)).astype(np.int64)
        self._groups = [(False, np.flatnonzero(self.kind == _RAYCAST).astype(np.int64)),
                        (True, np.flatnonzero(self.kind == _SWEEP).astype(np.int64))]

    def update(self, dt: float, context: SimulationContext) -> bool:
        road = self.fleet.road
        if type(road) is PlaneRoad:
            if road is not self._road:
                self._plane = np.append(road.normal, road.d)
                self._friction = float(road.friction)
                self._road = road
            _k_plane_query(self._active, self.kind, self._axes, self._signs, self._lat_axis, self.geometry,
                           *self._inputs, self._plane, self._friction, *self._outputs)
            return True
        for sweep, rows in self._groups:
            if rows.shape[0]:
                self._query_road(road, sweep, rows)
        return True

    def _query_road(self, road: RoadGeometry, sweep: bool, rows: np.ndarray) -> None:
        """One call of ``road``'s own raycast or sweep for every wheel of vehicles ``rows``."""
        m = rows.shape[0] * self.fleet.nb_wheels
        start, dirs, lat = np.empty((m, 3)), np.empty((m, 3)), np.empty((m, 3))
        length, radius, half_width = np.empty(m), np.empty(m), np.empty(m)
        _k_query_geometry(rows, sweep, self._axes, self._signs, self._lat_axis, self.geometry, *self._inputs,
                          start, dirs, length, lat, radius, half_width)
        if sweep:
            hits = road.sweep_wheels(start, lat, radius, half_width, dirs, length)
            _k_store_sweep(rows, _as(hits.hit, np.bool_, m), _as(hits.plane, np.float64, m, 4),
                           _as(hits.friction, np.float64, m), *self._outputs)
        else:
            ray = road.raycast(start, dirs, length)
            _k_store_raycast(rows, _as(ray.hit, np.bool_, m), _as(ray.normal, np.float64, m, 3),
                             _as(ray.position, np.float64, m, 3), _as(ray.friction, np.float64, m),
                             *self._outputs)


def _as(a: np.ndarray, dtype: type, *shape: int) -> np.ndarray:
    """A road's result as a C-contiguous array of ``dtype`` broadcast to ``shape`` (as the
    reference's assignments into the states broadcast it)."""
    return np.ascontiguousarray(np.broadcast_to(np.asarray(a, dtype=dtype), shape))


__all__ = ["RoadGeometryBatchComponent"]
