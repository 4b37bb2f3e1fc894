"""Static road geometry the wheels query: an infinite plane and a heightfield.

Vehicle2 queries a PhysX scene with a raycast or a cylinder sweep per wheel and keeps only a
local plane and a friction value (``PxVehiclePhysXRoadGeometryQueryUpdate``). Without a PhysX
scene, these classes answer the same two questions:

* :meth:`RoadGeometry.raycast` — first hit of rays (vectorised over rays): distance, point,
  surface normal, friction.
* :meth:`RoadGeometry.sweep_wheels` — first contact of wheel cylinders moved along the
  suspension direction: the contact plane and friction. Exact for :class:`PlaneRoad`; for
  :class:`HeightfieldRoad` the cylinder is represented by points on its lower half (three
  circles: both rims and the mid-plane, 13 points each), each cast along the sweep direction.

Geometry is solid below the surface: a ray that starts underneath sees no surface (Vehicle2
also rejects hits at distance zero), and a cylinder that starts overlapping the plane counts as
touching it (Vehicle2 then re-sweeps from outside and finds the same plane).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from typing import Self

import numpy as np

from pvdkit.jit import njit
from simcore.frame import DEFAULT_FRAME, Frame, Scale, frame_to_frame_matrix, scale_ratio, transform_vector
from simcore.maths import frozen_array, normalize


@dataclass
class RayHits:
    """Results of :meth:`RoadGeometry.raycast` for m rays (misses have zero distance/normal)."""

    hit: np.ndarray  #: (m,) bool
    distance: np.ndarray  #: (m,) length along the ray
    position: np.ndarray  #: (m, 3) world point
    normal: np.ndarray  #: (m, 3) unit surface normal, pointing out of the solid
    friction: np.ndarray  #: (m,) friction at the hit


@dataclass
class SweepHits:
    """Results of :meth:`RoadGeometry.sweep_wheels` for n wheels."""

    hit: np.ndarray  #: (n,) bool
    plane: np.ndarray  #: (n, 4) contact plane [nx, ny, nz, d]; zero where no hit
    friction: np.ndarray  #: (n,)


class RoadGeometry(ABC):
    """A static road. Subclasses give a raycast; the sweep defaults to point-sampled rays."""

    #: Points per circle and circles across the width used by the sampled sweep.
    SWEEP_POINTS_PER_CIRCLE = 13

    @abstractmethod
    def raycast(self, origins: np.ndarray, directions: np.ndarray, max_distance: np.ndarray) -> RayHits:
        """First surface hit of each ray ``origins[i] + t * directions[i]``, ``0 < t <= max_distance[i]``.

        ``origins``, ``directions`` (m, 3) world frame (directions unit length); ``max_distance`` (m,).
        """

    @abstractmethod
    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> Self:
        """The same road expressed in another frame and length scale."""

    def sweep_wheels(
        self,
        centres: np.ndarray,
        lateral_axes: np.ndarray,
        radius: np.ndarray,
        half_width: np.ndarray,
        directions: np.ndarray,
        distance: np.ndarray,
    ) -> SweepHits:
        """First contact of wheel cylinders swept from ``centres`` along ``directions`` by ``distance``.

        Cylinders: axis ``lateral_axes`` (n, 3) unit, ``radius`` and ``half_width`` (n,). Sampled:
        points on the lower half of the wheel (facing the sweep direction) are lifted back by one
        radius and cast; the earliest hit gives the contact point and normal. Hits closer than the
        start (initial overlap) are kept, as Vehicle2 keeps them.
        """
        centres = np.asarray(centres, dtype=np.float64)
        n = centres.shape[0]
        lat = normalize(lateral_axes)
        down = normalize(directions - np.einsum("ij,ij->i", directions, lat)[:, None] * lat)
        fwd = np.cross(lat, down)
        k = self.SWEEP_POINTS_PER_CIRCLE
        theta = np.linspace(-0.5 * np.pi, 0.5 * np.pi, k)
        widths = np.array([-1.0, 0.0, 1.0])
        # (n, 3 circles, k points, 3)
        rim = np.cos(theta)[None, :, None] * down[:, None, :] + np.sin(theta)[None, :, None] * fwd[:, None, :]
        pts = (centres[:, None, None, :]
               + (widths[None, :, None, None] * half_width[:, None, None, None]) * lat[:, None, None, :]
               + radius[:, None, None, None] * rim[:, None, :, :])
        m = 3 * k
        pts = pts.reshape(n * m, 3)
        dirs = np.repeat(directions, m, axis=0)
        lift = np.repeat(radius, m)
        reach = np.repeat(distance, m) + lift
        hits = self.raycast(pts - dirs * lift[:, None], dirs, reach)
        dist = np.where(hits.hit, hits.distance, np.inf).reshape(n, m)
        best = np.argmin(dist, axis=1)
        rows = np.arange(n) * m + best
        hit = np.isfinite(dist[np.arange(n), best])
        normal = np.where(hit[:, None], hits.normal[rows], 0.0)
        pos = hits.position[rows]
        plane = np.zeros((n, 4))
        plane[:, :3] = normal
        plane[:, 3] = np.where(hit, -np.einsum("ij,ij->i", normal, pos), 0.0)
        return SweepHits(hit, plane, np.where(hit, hits.friction[rows], 0.0))


@dataclass(frozen=True, eq=False)
class PlaneRoad(RoadGeometry):
    """An infinite plane ``normal . x + d = 0`` with the solid below it (any orientation).

    normal: (3,) world frame, normalised on construction. d: ``length``. friction: >= 0.
    """

    normal: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    d: float = 0.0
    friction: float = 1.0

    def __post_init__(self) -> None:
        nrm = np.asarray(self.normal, dtype=np.float64).reshape(3)
        length = float(np.linalg.norm(nrm))
        if not length > 0.0:
            raise ValueError("PlaneRoad.normal must be a non-zero vector")
        object.__setattr__(self, "normal", frozen_array(nrm / length, (3,), "PlaneRoad.normal"))
        object.__setattr__(self, "d", float(self.d) / length)
        self.validate()

    @classmethod
    def through_point(cls, point: np.ndarray, normal: np.ndarray, friction: float = 1.0) -> PlaneRoad:
        """The plane through ``point`` with the given ``normal``."""
        nrm = np.asarray(normal, dtype=np.float64)
        nrm = nrm / np.linalg.norm(nrm)
        return cls(nrm, -float(nrm @ np.asarray(point, dtype=np.float64)), friction)

    @classmethod
    def ground(cls, frame: Frame = DEFAULT_FRAME, height: float = 0.0, friction: float = 1.0) -> PlaneRoad:
        """Flat ground perpendicular to the frame's vertical axis at ``height`` along it."""
        return cls(frame.vrt, -height, friction)

    def validate(self) -> None:
        """Raise ``ValueError`` on a negative or non-finite friction."""
        if not (np.isfinite(self.friction) and self.friction >= 0.0):
            raise ValueError(f"PlaneRoad.friction must be finite and >= 0, got {self.friction}")

    @property
    def plane(self) -> np.ndarray:
        """``[nx, ny, nz, d]``."""
        return np.append(self.normal, self.d)

    def signed_distance(self, points: np.ndarray) -> np.ndarray:
        """Height of points above the plane (negative inside the solid), ``length``."""
        return np.asarray(points, dtype=np.float64) @ self.normal + self.d

    def raycast(self, origins: np.ndarray, directions: np.ndarray, max_distance: np.ndarray) -> RayHits:
        origins = np.asarray(origins, dtype=np.float64)
        directions = np.asarray(directions, dtype=np.float64)
        m = origins.shape[0]
        h0 = origins @ self.normal + self.d
        rate = directions @ self.normal
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(rate < 0.0, -h0 / np.where(rate < 0.0, rate, -1.0), np.inf)
        hit = (rate < 0.0) & (t > 0.0) & (t <= max_distance)
        dist = np.where(hit, t, 0.0)
        pos = origins + directions * dist[:, None]
        normal = np.where(hit[:, None], self.normal, 0.0)
        return RayHits(hit, dist, pos, normal, np.where(hit, self.friction, 0.0) + np.zeros(m))

    def sweep_wheels(
        self,
        centres: np.ndarray,
        lateral_axes: np.ndarray,
        radius: np.ndarray,
        half_width: np.ndarray,
        directions: np.ndarray,
        distance: np.ndarray,
    ) -> SweepHits:
        """Exact: the lowest point of the cylinder (relative to the plane) along the sweep.

        A cylinder's deepest point below a plane lies ``r * sqrt(1 - (n.a)^2) + h * |n.a|`` under
        its centre, so the sweep reaches the plane iff that clearance is <= 0 at the start or the
        end of the sweep; the contact plane is the road plane itself.
        """
        centres = np.asarray(centres, dtype=np.float64)
        na = np.asarray(lateral_axes, dtype=np.float64) @ self.normal
        reach = radius * np.sqrt(np.maximum(1.0 - na * na, 0.0)) + half_width * np.abs(na)
        clearance0 = centres @ self.normal + self.d - reach
        clearance1 = clearance0 + distance * (np.asarray(directions, dtype=np.float64) @ self.normal)
        hit = np.minimum(clearance0, clearance1) <= 0.0
        plane = np.where(hit[:, None], self.plane, 0.0)
        return SweepHits(hit, plane, np.where(hit, self.friction, 0.0))

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> PlaneRoad:
        rot = frame_to_frame_matrix(src_frame, trg_frame)
        return PlaneRoad(rot @ self.normal, self.d * scale_ratio(src_scale, trg_scale), self.friction)


class HeightfieldSurface(Enum):
    """How a heightfield is interpolated between its samples."""

    #: Two flat triangles per cell, split along the (i, j)-(i+1, j+1) diagonal, as PhysX tessellates.
    TRIANGLES = "triangles"
    #: Bilinear patches: smooth heights, normals from the patch gradient.
    BILINEAR = "bilinear"


@dataclass(frozen=True, eq=False)
class HeightfieldRoad(RoadGeometry):
    """A grid of heights laid out in a vehicle frame: rows along ``frame.lng``, columns along
    ``frame.lat``, heights along ``frame.vrt`` ("up").

    heights: (rows, cols) ``length``, rows >= 2 and cols >= 2; sample (i, j) sits at
    ``origin + i * row_spacing * lng + j * column_spacing * lat + heights[i, j] * vrt``.
    row_spacing, column_spacing: ``length`` > 0. origin: (3,) world. friction: >= 0.
    Outside the grid there is no ground.
    """

    heights: np.ndarray
    row_spacing: float = 1.0
    column_spacing: float = 1.0
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3))
    frame: Frame = DEFAULT_FRAME
    friction: float = 1.0
    surface: HeightfieldSurface = HeightfieldSurface.TRIANGLES

    def __post_init__(self) -> None:
        heights = frozen_array(self.heights, (None, None), "HeightfieldRoad.heights")
        object.__setattr__(self, "heights", heights)
        object.__setattr__(self, "origin", frozen_array(self.origin, (3,), "HeightfieldRoad.origin"))
        object.__setattr__(self, "row_spacing", float(self.row_spacing))
        object.__setattr__(self, "column_spacing", float(self.column_spacing))
        object.__setattr__(self, "surface", HeightfieldSurface(self.surface))
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` naming the bad field."""
        r, c = self.heights.shape
        if r < 2 or c < 2:
            raise ValueError(f"HeightfieldRoad.heights needs at least 2x2 samples, got {r}x{c}")
        if not np.all(np.isfinite(self.heights)):
            raise ValueError("HeightfieldRoad.heights must all be finite")
        for name in ("row_spacing", "column_spacing"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"HeightfieldRoad.{name} must be > 0, got {getattr(self, name)}")
        if not (np.isfinite(self.friction) and self.friction >= 0.0):
            raise ValueError(f"HeightfieldRoad.friction must be finite and >= 0, got {self.friction}")

    # --- coordinates ---------------------------------------------------------------------------

    def _to_grid(self, points: np.ndarray) -> np.ndarray:
        """World points (..., 3) -> (row index u, column index v, height h) (..., 3), fractional."""
        rel = np.asarray(points, dtype=np.float64) - self.origin
        f = self.frame.matrix  # columns lng, lat, vrt
        local = rel @ f
        return local / np.array([self.row_spacing, self.column_spacing, 1.0])

    def _dirs_to_grid(self, d: np.ndarray) -> np.ndarray:
        local = np.asarray(d, dtype=np.float64) @ self.frame.matrix
        return local / np.array([self.row_spacing, self.column_spacing, 1.0])

    def _normal_to_world(self, gu: np.ndarray, gv: np.ndarray) -> np.ndarray:
        """World normal of a surface with height gradients dh/du, dh/dv (per grid index)."""
        local = np.stack((-gu / self.row_spacing, -gv / self.column_spacing, np.ones_like(gu)), axis=-1)
        return normalize(local @ self.frame.matrix.T)

    def height_at(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Surface height (along ``frame.vrt`` from the origin) under world points (..., 3) and a
        mask of points inside the grid. Heights outside the grid are NaN."""
        g = self._to_grid(points)
        u, v = g[..., 0], g[..., 1]
        h, inside, _, _ = self._surface(u, v)
        return np.where(inside, h, np.nan), inside

    def _surface(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Height and its gradients (per index) at fractional grid coordinates."""
        rows, cols = self.heights.shape
        inside = (u >= 0.0) & (u <= rows - 1) & (v >= 0.0) & (v <= cols - 1)
        i = np.clip(np.floor(u).astype(np.intp), 0, rows - 2)
        j = np.clip(np.floor(v).astype(np.intp), 0, cols - 2)
        a = np.clip(u - i, 0.0, 1.0)
        b = np.clip(v - j, 0.0, 1.0)
        H = self.heights
        h00, h10, h01, h11 = H[i, j], H[i + 1, j], H[i, j + 1], H[i + 1, j + 1]
        if self.surface is HeightfieldSurface.BILINEAR:
            h = h00 + (h10 - h00) * a + (h01 - h00) * b + (h00 - h10 - h01 + h11) * a * b
            gu = (h10 - h00) + (h00 - h10 - h01 + h11) * b
            gv = (h01 - h00) + (h00 - h10 - h01 + h11) * a
        else:
            lower = a >= b  # triangle (00, 10, 11)
            gu = np.where(lower, h10 - h00, h11 - h01)
            gv = np.where(lower, h11 - h10, h01 - h00)
            h = h00 + gu * a + gv * b
        return h, inside, gu, gv

    # --- queries -------------------------------------------------------------------------------

    def raycast(self, origins: np.ndarray, directions: np.ndarray, max_distance: np.ndarray) -> RayHits:
        """Exact first hit against the triangles or bilinear patches of the cells the ray crosses.

        Candidate cells are those in the bounding box of the ray's footprint on the grid, so the
        cost grows with how far a ray travels horizontally (a few cells for suspension rays).
        """
        origins = np.asarray(origins, dtype=np.float64)
        directions = np.asarray(directions, dtype=np.float64)
        max_distance = np.asarray(max_distance, dtype=np.float64)
        m = origins.shape[0]
        o = self._to_grid(origins)
        d = self._dirs_to_grid(directions)
        e = o + d * max_distance[:, None]
        if self.surface is HeightfieldSurface.TRIANGLES:
            t_best = np.empty(m)
            _k_ray_triangles(o, d, max_distance, self.heights, t_best)
        else:
            t_best = self._ray_bilinear_cells(o, d, e, max_distance)
        hit = np.isfinite(t_best)
        dist = np.where(hit, t_best, 0.0)
        pos = origins + directions * dist[:, None]
        g = o + d * dist[:, None]
        _, _, gu, gv = self._surface(g[:, 0], g[:, 1])
        normal = np.where(hit[:, None], self._normal_to_world(gu, gv), 0.0)
        return RayHits(hit, dist, pos, normal, np.where(hit, self.friction, 0.0))

    def _ray_bilinear_cells(self, o: np.ndarray, d: np.ndarray, e: np.ndarray,
                            max_distance: np.ndarray) -> np.ndarray:
        """First crossing (m,) of each ray with the bilinear patches of the cells in the bounding box
        of its footprint on the grid (inf where none)."""
        m = o.shape[0]
        if m == 0:
            return np.zeros(0)
        rows, cols = self.heights.shape
        i0 = np.clip(np.floor(np.minimum(o[:, 0], e[:, 0])).astype(np.intp), 0, rows - 2)
        i1 = np.clip(np.floor(np.maximum(o[:, 0], e[:, 0])).astype(np.intp), 0, rows - 2)
        j0 = np.clip(np.floor(np.minimum(o[:, 1], e[:, 1])).astype(np.intp), 0, cols - 2)
        j1 = np.clip(np.floor(np.maximum(o[:, 1], e[:, 1])).astype(np.intp), 0, cols - 2)
        di, dj = np.meshgrid(np.arange(int(np.max(i1 - i0)) + 1), np.arange(int(np.max(j1 - j0)) + 1),
                             indexing="ij")
        ci = i0[:, None] + di.reshape(1, -1)  # (m, c)
        cj = j0[:, None] + dj.reshape(1, -1)
        valid = (ci <= i1[:, None]) & (cj <= j1[:, None])
        t = self._ray_bilinear(o, d, np.minimum(ci, rows - 2), np.minimum(cj, cols - 2))
        t = np.where(valid[:, :, None], t, np.inf)
        t = np.where((t > 0.0) & (t <= max_distance[:, None, None]), t, np.inf)
        return np.min(t.reshape(m, -1), axis=1)

    def _ray_bilinear(self, o: np.ndarray, d: np.ndarray, ci: np.ndarray, cj: np.ndarray) -> np.ndarray:
        """Ray parameter of the (up to two) crossings of each candidate bilinear patch, (m, c, 2)."""
        H = self.heights
        h00, h10, h01, h11 = H[ci, cj], H[ci + 1, cj], H[ci, cj + 1], H[ci + 1, cj + 1]
        c1, c2, c3 = h10 - h00, h01 - h00, h00 - h10 - h01 + h11
        a0 = o[:, None, 0] - ci
        b0 = o[:, None, 1] - cj
        au = np.broadcast_to(d[:, None, 0], a0.shape)
        bv = np.broadcast_to(d[:, None, 1], a0.shape)
        z0 = o[:, None, 2]
        zd = d[:, None, 2]
        # f(t) = ray height - patch height = A t^2 + B t + C
        A = -c3 * au * bv
        B = zd - c1 * au - c2 * bv - c3 * (a0 * bv + au * b0)
        C = z0 - h00 - c1 * a0 - c2 * b0 - c3 * a0 * b0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            small = np.abs(A) < 1e-12 * (np.abs(B) + 1e-300)
            disc = B * B - 4.0 * A * C
            sq = np.sqrt(np.where(disc >= 0.0, disc, np.nan))
            # numerically stable quadratic roots
            q = -0.5 * (B + np.copysign(sq, B))
            r1 = np.where(small, -C / B, q / A)
            r2 = np.where(small, np.inf, C / q)
            roots = np.stack((r1, r2), axis=-1)
            roots = np.where(np.isfinite(roots), roots, np.inf)
            finite = np.where(np.isfinite(roots), roots, 0.0)
            a = a0[..., None] + au[..., None] * finite
            b = b0[..., None] + bv[..., None] * finite
            # Only crossings from above (ray height decreasing relative to the surface) count.
            slope = 2.0 * A[..., None] * finite + B[..., None]
        eps = 1e-9
        ok = np.isfinite(roots) & (a >= -eps) & (a <= 1 + eps) & (b >= -eps) & (b <= 1 + eps)
        ok &= slope < 0.0
        return np.where(ok, roots, np.inf)

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> HeightfieldRoad:
        """Same terrain in another world frame and scale: the grid's own axes map with the frame
        change (a heightfield laid out in ``src_frame``'s vehicle axes comes out laid out in
        ``trg_frame``'s)."""
        s = scale_ratio(src_scale, trg_scale)
        rot = frame_to_frame_matrix(src_frame, trg_frame)
        lng = rot @ self.frame.lng
        lat = rot @ self.frame.lat
        vrt = rot @ self.frame.vrt
        new_frame = Frame(_axis_of(lng), _axis_of(lat), _axis_of(vrt))
        return HeightfieldRoad(
            heights=self.heights * s,
            row_spacing=self.row_spacing * s,
            column_spacing=self.column_spacing * s,
            origin=transform_vector(src_frame, trg_frame, src_scale, trg_scale, self.origin),
            frame=new_frame,
            friction=self.friction,
            surface=self.surface,
        )


def _axis_of(v: np.ndarray) -> int:
    """Index of the signed world axis equal to unit vector ``v`` (for frame mapping)."""
    k = int(np.argmax(np.abs(v)))
    return 2 * k + (1 if v[k] < 0 else 0)


@njit(cache=True, nogil=True)
def _k_ray_triangles(o, d, max_distance, heights, t_out):  # pragma: no cover - compiled
    """First hit parameter of each ray (grid coordinates: row index, column index, height) with the
    two triangles (00, 10, 11) and (00, 11, 01) of every cell in the bounding box of its footprint
    (Moller-Trumbore; the parameter is invariant under the grid's anisotropic scaling)."""
    rows, cols = heights.shape
    eps = 1e-12
    for r in range(o.shape[0]):
        ox, oy, oz = o[r, 0], o[r, 1], o[r, 2]
        dx, dy, dz = d[r, 0], d[r, 1], d[r, 2]
        tmax = max_distance[r]
        ex, ey = ox + dx * tmax, oy + dy * tmax
        i0 = min(max(int(np.floor(min(ox, ex))), 0), rows - 2)
        i1 = min(max(int(np.floor(max(ox, ex))), 0), rows - 2)
        j0 = min(max(int(np.floor(min(oy, ey))), 0), cols - 2)
        j1 = min(max(int(np.floor(max(oy, ey))), 0), cols - 2)
        best = np.inf
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                ax, ay, az = float(i), float(j), heights[i, j]
                for tri in range(2):
                    if tri == 0:
                        bx, by, bz = i + 1.0, float(j), heights[i + 1, j]
                        cx, cy, cz = i + 1.0, j + 1.0, heights[i + 1, j + 1]
                    else:
                        bx, by, bz = i + 1.0, j + 1.0, heights[i + 1, j + 1]
                        cx, cy, cz = float(i), j + 1.0, heights[i, j + 1]
                    e1x, e1y, e1z = bx - ax, by - ay, bz - az
                    e2x, e2y, e2z = cx - ax, cy - ay, cz - az
                    px, py, pz = dy * e2z - dz * e2y, dz * e2x - dx * e2z, dx * e2y - dy * e2x
                    det = e1x * px + e1y * py + e1z * pz
                    if abs(det) < 1e-300:
                        continue
                    inv = 1.0 / det
                    sx, sy, sz = ox - ax, oy - ay, oz - az
                    u = (sx * px + sy * py + sz * pz) * inv
                    if u < -eps or u > 1.0 + eps:
                        continue
                    qx, qy, qz = sy * e1z - sz * e1y, sz * e1x - sx * e1z, sx * e1y - sy * e1x
                    v = (dx * qx + dy * qy + dz * qz) * inv
                    if v < -eps or u + v > 1.0 + eps:
                        continue
                    t = (e2x * qx + e2y * qy + e2z * qz) * inv
                    if 0.0 < t <= tmax and t < best:
                        best = t
        t_out[r] = best
