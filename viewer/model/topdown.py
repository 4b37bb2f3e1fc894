"""Geometry of the top-down view: which way is up, chassis and wheel outlines, trajectories.

Frame-agnostic by construction: PhysX's sample scenes are Y-up with Z forward, simcore's default
is Z-up with X forward, and a user setting may force either. :func:`detect_ground` reads the up
axis from the recording (gravity, road plane normal, or the axis along which the vehicles move
least) and the view draws the two other axes so that it looks down from above.

Poses come from the recorded chassis state (``RigidBodyState.pos``/``quat``, the centre-of-mass
frame in which PhysX records wheel local poses) or, for other producers, from position /
orientation attributes of the vehicle; wheels from ``WheelLocalPoseState`` (pose in the
rigid-body frame, steer and camber included) and ``WheelParams`` (radius, half width).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from pvdkit.recording import Object, Recording, Series
from viewer.model.geometry import (
    Axis,
    BodyAxes,
    GroundPlane,
    axis_from_name,
    dominant_axis,
    normalized_quats,
    quat_rotate,
)
from viewer.model.vehicles import Vehicle, first_value

if TYPE_CHECKING:
    from viewer.model.session import RecordingSession

#: Attribute names read as a position (3 floats) and an orientation quaternion (4 floats).
POSITION_NAMES = ("pos", "position", "globalPosition", "p")
ORIENTATION_NAMES = ("quat", "orientation", "rotation", "globalOrientation", "q")
#: Attributes holding gravity (world frame) and ground-plane normals: (class, attribute).
GRAVITY_SOURCES = (("PxScene", "gravity"), ("SimulationContext", "gravity"), ("Scene", "gravity"))
NORMAL_SOURCES = (("PlaneRoad", "normal"), ("RoadGeometryState", "plane"))
#: Most points drawn for one trajectory (longer ones are thinned evenly).
MAX_TRAJECTORY_POINTS = 20000


# ---------------------------------------------------------------------------------------------
# Poses
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class PoseTrack:
    """A vehicle's chassis pose at every recorded sample: ``frames`` (n,), ``pos`` (n, 3),
    ``quat`` (n, 4, unit), ``valid`` (n,) — False for placeholder poses (zero quaternion)."""

    frames: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    valid: np.ndarray
    source: str

    def index_at(self, frame: int) -> int:
        """Index of the last valid sample at or before ``frame`` (-1 if none)."""
        i = int(np.searchsorted(self.frames, frame, side="right")) - 1
        while i >= 0 and not self.valid[i]:
            i -= 1
        return i


def _float_series(rec: Recording, obj: Object, names: tuple[str, ...], width: int
                  ) -> tuple[str, Series] | None:
    if obj.cls is None:
        return None
    for n in names:
        if n in obj.cls.paths:
            s = rec.series(obj, n)
            if isinstance(s, Series) and isinstance(s.values, np.ndarray) and s.values.ndim == 2 \
                    and s.values.shape[1] == width and s.values.dtype.kind == "f" and len(s):
                return n, s
    return None


def _zoh(frames_src: np.ndarray, values: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values of a series held at ``frames`` (and a mask of frames where it was already set)."""
    idx = np.searchsorted(frames_src, frames, side="right") - 1
    return values[np.clip(idx, 0, None)], idx >= 0


def pose_track(rec: Recording, v: Vehicle) -> PoseTrack | None:
    """The chassis pose track of a vehicle, or None when the recording has no pose for it."""
    candidates: list[Object] = []
    rb = v.part("RigidBodyState")
    if rb is not None:
        candidates.append(rb)
    candidates.append(v.obj)
    candidates.extend(o for objs in v.parts.values() for o in objs if o is not rb)
    for obj in candidates:
        p = _float_series(rec, obj, POSITION_NAMES, 3)
        q = _float_series(rec, obj, ORIENTATION_NAMES, 4)
        if p is not None:
            pname, ps = p
            frames = ps.frames
            pos = ps.values.astype(np.float64)
            if q is not None:
                if np.array_equal(q[1].frames, frames):
                    # Written together (one state object): pair sample by sample, so that a
                    # placeholder written in the same frame as the first real pose stays apart.
                    quat, have = q[1].values, np.ones(len(frames), bool)
                else:
                    quat, have = _zoh(q[1].frames, q[1].values, frames)
                quat, valid = normalized_quats(quat)
                valid &= have
            else:
                quat, valid = normalized_quats(np.tile([0.0, 0.0, 0.0, 1.0], (len(frames), 1)))
            name = obj.cls.name if obj.cls else "?"
            src = f"{name}.{pname}" + (f" / {name}.{q[0]}" if q else "")
            # Only the last sample of a frame is ever in force (an earlier one in the same frame
            # is an initial value overwritten before the frame ended).
            last = np.append(frames[1:] != frames[:-1], True)
            valid = valid & np.all(np.isfinite(pos), axis=1)
            return PoseTrack(frames[last], pos[last], quat[last], valid[last], src)
    for obj in candidates:
        t = _float_series(rec, obj, ("globalPose",), 7)
        if t is not None:
            vals = t[1].values.astype(np.float64)
            quat, valid = normalized_quats(vals[:, :4])
            fr = t[1].frames
            last = np.append(fr[1:] != fr[:-1], True)
            return PoseTrack(fr[last], vals[last, 4:7], quat[last], valid[last], f"{obj.cls.name}.globalPose")
    return None


# ---------------------------------------------------------------------------------------------
# Up axis
# ---------------------------------------------------------------------------------------------


def detect_ground(session: RecordingSession, setting: str = "auto") -> GroundPlane:
    """The ground plane: ``setting`` ("x", "+y", "-z" …) if not "auto"; else up is opposite to the
    recorded gravity, else along a recorded road-plane normal, else the axis along which the
    vehicles moved least; +Z when nothing tells."""
    if setting and setting.lower() != "auto":
        ax = axis_from_name(setting)
        if ax is None:
            raise ValueError(f"up axis setting {setting!r}: expected auto, x, y, z, +x … -z")
        return GroundPlane(ax, "setting")
    rec = session.recording
    for cname, attr in GRAVITY_SOURCES:
        for o in _objects(rec, cname):
            g = first_value(rec, o, attr)
            ax = dominant_axis(-np.asarray(g, np.float64)) if g is not None else None
            if ax is not None:
                return GroundPlane(ax, f"gravity, {cname}.{attr}")
    for cname, attr in NORMAL_SOURCES:
        for o in _objects(rec, cname):
            n = first_value(rec, o, attr)
            ax = dominant_axis(np.asarray(n, np.float64)[:3]) if n is not None else None
            if ax is not None:
                return GroundPlane(ax, f"road normal, {cname}.{attr}")
    spans = []
    for v in session.vehicles:
        tr = pose_track(rec, v)
        if tr is not None and tr.valid.sum() >= 2:
            spans.append(np.ptp(tr.pos[tr.valid], axis=0))
    if spans:
        total = np.sum(spans, axis=0)
        if np.count_nonzero(total > 1e-9) >= 2:
            return GroundPlane(Axis(int(np.argmin(total)), 1), "least vehicle motion")
    return GroundPlane(Axis(2, 1), "default (+Z)")


def _objects(rec: Recording, cname: str) -> list[Object]:
    return rec.objects_of_class(cname) if cname in rec.classes else []


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class WheelSource:
    """Where one wheel's pose and size are recorded."""

    position: np.ndarray  # static fallback centre in the rigid-body frame
    radius: float
    half_width: float
    pos_series: Series | None = None
    quat_series: Series | None = None


@dataclass(eq=False)
class VehicleGeometry:
    """Static description of how to draw one vehicle."""

    vehicle: Vehicle
    track: PoseTrack
    axes: BodyAxes
    wheels: list[WheelSource] = field(default_factory=list)
    outline: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))  # body-frame polygon


@dataclass(eq=False)
class VehicleShape:
    """A vehicle at one frame, in view coordinates: closed chassis ``outline`` (k, 2), one closed
    polygon per wheel (5, 2), chassis ``centre`` (2,) and unit ``heading`` (2,)."""

    vehicle: Vehicle
    outline: np.ndarray
    wheels: list[np.ndarray]
    centre: np.ndarray
    heading: np.ndarray


def _box(lng_axis: np.ndarray, lat_axis: np.ndarray, front: float, rear: float, left: float,
         right: float, nose: float = 0.0) -> np.ndarray:
    """A closed body-frame polygon (rear-right → front-right → nose → front-left → rear-left)."""
    pts = [rear * lng_axis + right * lat_axis, front * lng_axis + right * lat_axis]
    if nose > 0:
        pts.append((front + nose) * lng_axis + 0.5 * (left + right) * lat_axis)
    pts += [front * lng_axis + left * lat_axis, rear * lng_axis + left * lat_axis]
    pts.append(pts[0])
    return np.asarray(pts)


def _guess_axes(track: PoseTrack, ground: GroundPlane) -> BodyAxes:
    """Body axes of a vehicle without wheel geometry: up from the ground plane (the body assumed
    level), forward the body axis along which it mostly moved."""
    up = ground.up
    fwd: Axis | None = None
    ok = np.flatnonzero(track.valid)
    if len(ok) >= 2:
        d = np.diff(track.pos[ok], axis=0)
        # Motion rotated into the body frame (inverse rotation: conjugate quaternion).
        conj = track.quat[ok[1:]] * np.array([-1.0, -1.0, -1.0, 1.0])
        local = quat_rotate(conj, d)
        local[:, up.index] = 0.0
        fwd = dominant_axis(np.abs(local).sum(axis=0))
        if fwd is not None:
            fwd = Axis(fwd.index, 1)
    if fwd is None or fwd.index == up.index:
        fwd = ground.u
    lat = dominant_axis(np.cross(up.vector, fwd.vector))
    assert lat is not None
    return BodyAxes(fwd, lat, up, "guessed from motion")


class TopDownModel:
    """Chassis and wheel outlines of every vehicle at a frame, and their trajectories."""

    def __init__(self, session: RecordingSession, ground: GroundPlane | None = None) -> None:
        """``ground``: draw in this ground plane instead of the session's own (a comparison
        recording is drawn in the main recording's plane)."""
        self.session = session
        self.ground = ground or session.ground
        self.geometries: list[VehicleGeometry] = []
        rec = session.recording
        for v in session.vehicles:
            track = pose_track(rec, v)
            if track is None or not track.valid.any():
                continue
            axes = v.axes or _guess_axes(track, self.ground)
            self.geometries.append(self._geometry(rec, v, track, axes))
        self._trajectories: dict[int, np.ndarray] = {}

    @staticmethod
    def _geometry(rec: Recording, v: Vehicle, track: PoseTrack, axes: BodyAxes) -> VehicleGeometry:
        lng, lat = axes.lng.vector, axes.lat.vector
        wheels = []
        for w in v.wheels:
            if w.position is None:
                continue
            params = w.part("WheelParams")
            radius = first_value(rec, params, "radius")
            half = first_value(rec, params, "halfWidth")
            ws = WheelSource(np.asarray(w.position, np.float64),
                             float(radius) if isinstance(radius, float) and radius > 0 else 0.35,
                             float(half) if isinstance(half, float) and half > 0 else 0.1)
            pose = w.part("WheelLocalPoseState")
            if pose is not None and pose.cls is not None:
                for attr, width, slot in (("posInRbodyFrame", 3, "pos_series"),
                                          ("quatInRbodyFrame", 4, "quat_series")):
                    f = _float_series(rec, pose, (attr,), width)
                    if f is not None:
                        setattr(ws, slot, f[1])
            wheels.append(ws)
        if wheels:
            pts = np.asarray([ws.position for ws in wheels])
            r = max(ws.radius for ws in wheels)
            hw = max(ws.half_width for ws in wheels)
            lngs, lats = pts @ lng, pts @ lat
            front, rear = float(lngs.max()) + 1.25 * r, float(lngs.min()) - 1.25 * r
            left, right = float(lats.max()) - hw, float(lats.min()) + hw
            if left - right < 0.5:
                left, right = left + 0.4, right - 0.4
            outline = _box(lng, lat, front, rear, left, right, nose=0.12 * (front - rear))
        else:
            outline = _box(lng, lat, 2.2, -2.2, 0.9, -0.9, nose=0.5)
        return VehicleGeometry(v, track, axes, wheels, outline)

    def shapes_at(self, frame: int) -> list[VehicleShape]:
        """Every vehicle with a valid pose at ``frame``, as view-space polygons."""
        out = []
        g = self.ground
        for geo in self.geometries:
            i = geo.track.index_at(frame)
            if i < 0:
                continue
            p, q = geo.track.pos[i], geo.track.quat[i]
            outline = g.project(p + quat_rotate(q, geo.outline))
            wheels = []
            lng, lat = geo.axes.lng.vector, geo.axes.lat.vector
            for ws in geo.wheels:
                centre = ws.position
                if ws.pos_series is not None:
                    c = ws.pos_series.at(frame)
                    if c is not None and np.any(c):
                        centre = np.asarray(c, np.float64)
                lq = np.array([0.0, 0.0, 0.0, 1.0])
                if ws.quat_series is not None:
                    qq = ws.quat_series.at(frame)
                    if qq is not None:
                        nq, ok = normalized_quats(np.asarray(qq, np.float64))
                        if ok:
                            lq = nq
                local = _box(lng, lat, ws.radius, -ws.radius, ws.half_width, -ws.half_width)
                body = centre + quat_rotate(lq, local)
                wheels.append(g.project(p + quat_rotate(q, body)))
            centre2 = g.project(p)
            h = g.project(quat_rotate(q, lng))
            n = float(np.linalg.norm(h))
            heading = h / n if n > 1e-9 else np.array([1.0, 0.0])
            out.append(VehicleShape(geo.vehicle, outline, wheels, centre2, heading))
        return out

    def trajectory(self, geo: VehicleGeometry) -> np.ndarray:
        """The chassis path (n, 2) over the whole recording, thinned to
        :data:`MAX_TRAJECTORY_POINTS`."""
        key = geo.vehicle.index
        t = self._trajectories.get(key)
        if t is None:
            pts = geo.track.pos[geo.track.valid]
            if len(pts) > MAX_TRAJECTORY_POINTS:
                idx = np.linspace(0, len(pts) - 1, MAX_TRAJECTORY_POINTS).astype(np.int64)
                pts = pts[idx]
            t = self.ground.project(pts)
            self._trajectories[key] = t
        return t

    def bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(min, max) view corners of every trajectory, or None with no vehicle."""
        tr = [self.trajectory(g) for g in self.geometries]
        tr = [t for t in tr if len(t)]
        if not tr:
            return None
        allp = np.concatenate(tr)
        return allp.min(axis=0), allp.max(axis=0)

