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
from viewer.model.bulk import prefetched, series_of
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
            s = series_of(rec, obj, n)
            if isinstance(s, Series) and isinstance(s.values, np.ndarray) and s.values.ndim == 2 \
                    and s.values.shape[1] == width and s.values.dtype.kind == "f" and len(s):
                return n, s
    return None


def pose_sources(vehicles: list[Vehicle]) -> list[tuple[Object | None, str]]:
    """(object, attribute) of every series :func:`pose_track` and the top-down wheels will
    likely read, to read them at once with :func:`~viewer.model.bulk.prefetched` (a fleet has
    ~5,000; one at a time they took a second from an ``.h5``). Candidates other than the
    chassis state are read on demand, as before."""
    out: list[tuple[Object | None, str]] = []
    for v in vehicles:
        rb = v.part("RigidBodyState") or v.obj
        names = rb.cls.paths if rb.cls is not None else {}
        out += [(rb, n) for n in POSITION_NAMES + ORIENTATION_NAMES + ("globalPose",) if n in names]
        for w in v.wheels:
            params, pose = w.part("WheelParams"), w.part("WheelLocalPoseState")
            out += [(params, "radius"), (params, "halfWidth"), (pose, "posInRbodyFrame"),
                    (pose, "quatInRbodyFrame")]
    return out


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
    with prefetched(rec, pose_sources(session.vehicles)):
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


@dataclass(eq=False)
class FleetFrame:
    """Every vehicle at one frame as arrays, in view coordinates (what the view draws with a few
    items however many vehicles there are). Vehicle ``i`` is ``TopDownModel.geometries[i]``.

    ``present`` (V,) — a valid pose at this frame; ``outlines`` (V, k, 2) closed chassis polygons;
    ``centres`` / ``headings`` (V, 2); ``wheels`` (W, 5, 2) closed wheel polygons of every
    vehicle, ``wheel_vehicle`` (W,) the vehicle of each. Rows of absent vehicles hold stale or
    zero values: mask with ``present``."""

    frame: int
    present: np.ndarray
    outlines: np.ndarray
    centres: np.ndarray
    headings: np.ndarray
    wheels: np.ndarray
    wheel_vehicle: np.ndarray

    def wheel_present(self) -> np.ndarray:
        """(W,) mask of the wheels of present vehicles."""
        return self.present[self.wheel_vehicle] if len(self.wheel_vehicle) else np.zeros(0, bool)

    def vehicle_at(self, point: tuple[float, float]) -> int | None:
        """The present vehicle whose chassis outline contains a view point (the last drawn wins,
        as on screen); None if none does. Crossing-number test over every outline at once."""
        if not len(self.present):
            return None
        x, y = float(point[0]), float(point[1])
        a = self.outlines
        b = np.roll(a, -1, axis=1)
        ya, yb = a[..., 1], b[..., 1]
        straddle = (ya > y) != (yb > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            xc = a[..., 0] + (y - ya) * (b[..., 0] - a[..., 0]) / (yb - ya)
        inside = (np.count_nonzero(straddle & (x < xc), axis=1) % 2 == 1) & self.present
        hits = np.flatnonzero(inside)
        return int(hits[-1]) if len(hits) else None


class _HeldSeries:
    """Many sample series (one per owner: a vehicle or a wheel) read at one frame with a single
    ``searchsorted``: keys ``owner × K + frame`` of all series concatenated, so the zero-order
    hold of every owner costs one numpy call instead of one Python call per owner.

    ``valid`` marks usable samples; a lookup falls back to the owner's last valid sample at or
    before the frame (a placeholder pose written after a real one is skipped, as
    :meth:`PoseTrack.index_at` does)."""

    def __init__(self, frames: list[np.ndarray], values: list[np.ndarray], width: int,
                 valid: list[np.ndarray] | None = None) -> None:
        n = len(frames)
        lengths = np.array([len(f) for f in frames], np.int64)
        self.owners = np.arange(n, dtype=np.int64)
        self.table: np.ndarray | None = None  # see tabulate
        self.start = np.zeros(n, np.int64)
        self.start[1:] = np.cumsum(lengths)[:-1]
        total = int(lengths.sum())
        if not total:
            self.fmin, self.k = 0, 2
            self.keys = np.zeros(0, np.int64)
            self.values = np.zeros((0, width))
            self.last_valid = np.zeros(0, np.int64)
            return
        allf = np.concatenate([np.asarray(f, np.int64) for f in frames])
        self.fmin = int(allf.min())
        self.k = int(allf.max()) - self.fmin + 2
        self.keys = np.repeat(self.owners, lengths) * self.k + (allf - self.fmin)
        self.values = np.concatenate([np.asarray(v, np.float64).reshape(len(v), -1)[:, :width]
                                      for v in values])
        ok = np.ones(total, bool) if valid is None else np.concatenate([np.asarray(v, bool) for v in valid])
        last = np.maximum.accumulate(np.where(ok, np.arange(total), -1))
        # A valid sample of an earlier owner is not this owner's.
        self.last_valid = np.where(last >= np.repeat(self.start, lengths), last, -1)

    def _lookup(self, offsets: np.ndarray) -> np.ndarray:
        """Index of the sample in force per (offset, owner), -1 where none: ``offsets`` (m,) of
        frames from ``fmin`` (clipped to -1 … k - 2) → (m, owners)."""
        j = np.searchsorted(self.keys, self.owners[None, :] * self.k + offsets[:, None], side="right") - 1
        return np.where(j >= self.start, self.last_valid[np.clip(j, 0, None)], -1)

    def tabulate(self, max_entries: int = 4_000_000) -> None:
        """Precompute the answer for every frame when the table is small (frames × owners ≤
        ``max_entries``): scrubbing then costs one row lookup instead of a search."""
        if len(self.keys) and (self.k - 1) * len(self.owners) <= max_entries:
            self.table = self._lookup(np.arange(self.k - 1, dtype=np.int64)).astype(np.int32)

    def at(self, frame: int) -> tuple[np.ndarray, np.ndarray]:
        """(index into ``values`` per owner, mask of owners with a valid sample at or before
        ``frame``); the index is 0 where the mask is False."""
        if not len(self.keys):
            return np.zeros(len(self.owners), np.int64), np.zeros(len(self.owners), bool)
        off = min(max(int(frame) - self.fmin, -1), self.k - 2)
        if off < 0:
            return np.zeros(len(self.owners), np.int64), np.zeros(len(self.owners), bool)
        idx = self.table[off] if self.table is not None else self._lookup(np.array([off]))[0]
        ok = idx >= 0
        return np.where(ok, idx, 0), ok


class TopDownModel:
    """Chassis and wheel outlines of every vehicle at a frame, and their trajectories."""

    def __init__(self, session: RecordingSession, ground: GroundPlane | None = None) -> None:
        """``ground``: draw in this ground plane instead of the session's own (a comparison
        recording is drawn in the main recording's plane)."""
        self.session = session
        self.ground = ground or session.ground
        #: Frames the model was built over (a live recording grows past them until rebuilt).
        self.n_frames = session.n_frames
        self.geometries: list[VehicleGeometry] = []
        rec = session.recording
        with prefetched(rec, pose_sources(session.vehicles)):
            for v in session.vehicles:
                track = pose_track(rec, v)
                if track is None or not track.valid.any():
                    continue
                axes = v.axes or _guess_axes(track, self.ground)
                self.geometries.append(self._geometry(rec, v, track, axes))
        self._trajectories: dict[int, np.ndarray] = {}
        self._build_tables()

    def _build_tables(self) -> None:
        """Stack every vehicle's pose track, outline and wheels into arrays for :meth:`frame_at`."""
        geos = self.geometries
        self._poses = _HeldSeries([g.track.frames for g in geos],
                                  [np.concatenate([g.track.pos, g.track.quat], axis=1) for g in geos], 7,
                                  [g.track.valid for g in geos])
        k = max((len(g.outline) for g in geos), default=0)
        # Outlines have one length (``_box`` with a nose); pad by repeating the closing point.
        padded = [np.concatenate([g.outline, np.repeat(g.outline[-1:], k - len(g.outline), 0)]) for g in geos]
        self._outline = np.stack(padded) if geos else np.zeros((0, 0, 3))
        self._lng = np.array([g.axes.lng.vector for g in geos]).reshape(-1, 3)
        wheels = [(gi, g, ws) for gi, g in enumerate(geos) for ws in g.wheels]
        self._wheel_vehicle = np.array([gi for gi, _, _ in wheels], np.int64)
        self._wheel_static = np.array([ws.position for _, _, ws in wheels], np.float64).reshape(-1, 3)
        boxes = [_box(g.axes.lng.vector, g.axes.lat.vector, ws.radius, -ws.radius, ws.half_width,
                      -ws.half_width) for _, g, ws in wheels]
        self._wheel_box = np.array(boxes).reshape(-1, 5, 3)
        empty = np.zeros(0, np.int32)

        def held(slot: str, width: int) -> _HeldSeries:
            series = [getattr(ws, slot) for _, _, ws in wheels]
            return _HeldSeries([s.frames if s is not None else empty for s in series],
                               [s.values if s is not None else np.zeros((0, width)) for s in series], width)

        self._wheel_pos = held("pos_series", 3)
        self._wheel_quat = held("quat_series", 4)
        for h in (self._poses, self._wheel_pos, self._wheel_quat):
            h.tabulate()

    def frame_at(self, frame: int) -> FleetFrame:
        """Every vehicle at ``frame`` as arrays (see :class:`FleetFrame`), computed for all
        vehicles and wheels at once: the cost hardly grows with the number of vehicles. A frame
        past those the model was built over shows its last one."""
        frame = min(int(frame), max(self.n_frames - 1, 0))
        g = self.ground
        idx, present = self._poses.at(frame)
        pq = self._poses.values[idx]
        p, q = pq[:, :3], pq[:, 3:7]
        outlines = g.project(p[:, None, :] + quat_rotate(q[:, None, :], self._outline))
        # Wheels: recorded local pose where there is one (an all-zero position is a placeholder),
        # else the static centre and no rotation.
        wv = self._wheel_vehicle
        wi, wok = self._wheel_pos.at(frame)
        c = self._wheel_pos.values[wi]
        centre = np.where((wok & np.any(c != 0, axis=1))[:, None], c, self._wheel_static)
        qi, qok = self._wheel_quat.at(frame)
        lq, qvalid = normalized_quats(self._wheel_quat.values[qi])
        lq = np.where((qok & qvalid)[:, None], lq, np.array([0.0, 0.0, 0.0, 1.0]))
        body = centre[:, None, :] + quat_rotate(lq[:, None, :], self._wheel_box)
        wheels = g.project(p[wv][:, None, :] + quat_rotate(q[wv][:, None, :], body))
        centres = g.project(p)
        h = g.project(quat_rotate(q, self._lng))
        n = np.linalg.norm(h, axis=-1, keepdims=True)
        headings = np.where(n > 1e-9, h / np.where(n > 1e-9, n, 1.0), np.array([1.0, 0.0]))
        k = self._outline.shape[1]
        return FleetFrame(int(frame), present, outlines.reshape(len(p), k, 2), centres.reshape(-1, 2),
                          headings.reshape(-1, 2), wheels.reshape(-1, 5, 2), wv)

    def shapes(self, ff: FleetFrame) -> list[VehicleShape]:
        """The vehicles of a :class:`FleetFrame` as one :class:`VehicleShape` each (present only)."""
        out = []
        for i in np.flatnonzero(ff.present).tolist():
            w = ff.wheels[ff.wheel_vehicle == i]
            out.append(VehicleShape(self.geometries[i].vehicle, ff.outlines[i], list(w), ff.centres[i],
                                    ff.headings[i]))
        return out

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
        return self.shapes(self.frame_at(frame))

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

