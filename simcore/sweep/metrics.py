"""Metrics of one recorded run: a number per run for a sweep's summary table.

Why from the recording and not from the live simulation: a metric then means the same thing on
a sweep's run, on a ``pvdkit record`` file made by hand and on a PhysX recording, and a metric
added later can be computed on old runs (``pvdkit sweep --resume`` re-scores recordings that
exist). Every metric is a function ``metric(rec: Recording, **options) -> float``; a user's own
is named ``"module:function"`` in the sweep file and has the same signature.

The built-in metrics read the first vehicle of the recording through :class:`Trace`, which
finds its chassis state in either of simcore's layouts (pure Vehicle2: one frame per step;
PhysX layout: two frames per step, ``RigidBodyState`` in the even ones) and maps frames to
seconds. Quantities are SI: lengths are divided by the recorded ``SimulationContext.scale`` (a
vehicle described in centimetres still reports metres). NaN means "did not happen in this run"
(the car never stopped, never reached the speed); :class:`MetricError` means the recording
lacks what the metric needs (no brake command, no Ackermann wheel base).

========================  ===========  ========================================================
metric                    unit         definition (options and defaults in brackets)
========================  ===========  ========================================================
stopping_distance         m            horizontal path length from the start of the first braked
                                       step to where the horizontal speed first falls to
                                       ``stop_speed`` [0.1 m/s]
time_to_speed             s            first time the forward speed reaches ``speed``
                                       [27.78 m/s = 100 km/h], interpolated between samples
max_lateral_accel         m/s²         max |a_y| for t ≥ ``start`` [0 s]
steady_state_lateral_     m/s²         mean a_y over the last ``window`` [1 s] (signed: + toward
accel                                  the vehicle's lateral axis)
yaw_rate_gain             1/s          mean yaw rate / mean road-wheel steer angle of the steered
                                       wheels over the last ``window`` [1 s]
understeer_gradient       rad/(m/s²)   slope K of a least-squares fit δ − L·r/V = K·a_y + c over
                                       the samples with ``min_accel`` ≤ |a_y| ≤ ``max_accel``
                                       [0.5, 4 m/s²] and V ≥ ``min_speed`` [5 m/s] (a steer ramp)
peak_long_slip            1            max |longitudinal slip| over wheels, t ≥ ``start``, speed
                                       ≥ ``min_speed`` [0 s, 1 m/s]
peak_lat_slip             rad          max |lateral slip angle| over wheels, same window
max_jounce                m            max suspension jounce (compression from full droop) over
                                       wheels, t ≥ ``start`` [0 s]
final_speed               m/s          forward speed at the last sample
wheel_lift_off_time       s            time with at least one wheel in the air (suspension
                                       separation > 0), t ≥ ``start`` [0.5 s: the drop onto the
                                       road is not a lift-off]
========================  ===========  ========================================================

a_y is the chassis acceleration (central differences of the recorded velocity) along the body's
lateral axis; r the angular velocity about the body's vertical axis; V the forward speed;
δ the mean road-wheel steer angle of the wheels with a non-zero angle; L the Ackermann wheel
base. With the body axes right-handed (lng × lat = vrt, PhysX's default frame) a turn toward
the lateral axis has positive δ, r and a_y.
"""

from __future__ import annotations

import importlib
import inspect
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pvdkit.recording import ListSeries, Object, Recording
from pvdkit.types import PvdError

__all__ = ["METRICS", "MetricError", "Trace", "resolve_metric", "trace_of"]

#: Vehicle2's axis enum (``PxVehicleAxes``) → unit vector.
_AXES = {0: (1, 0, 0), 1: (-1, 0, 0), 2: (0, 1, 0), 3: (0, -1, 0), 4: (0, 0, 1), 5: (0, 0, -1)}
#: PhysX's default frame (lng +Z, lat +X, vrt +Y) when a recording has no SimulationContext.
_DEFAULT_AXES = (4, 0, 2)


class MetricError(PvdError, ValueError):
    """A metric cannot be computed on this recording (it lacks the state the metric reads), or a
    metric is named or configured wrongly (unknown name, unknown option)."""


# --------------------------------------------------------------------------------------------
# The first vehicle of a recording, as arrays
# --------------------------------------------------------------------------------------------


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` (3,) by unit quaternions ``q`` (n, 4) in PhysX's (x, y, z, w) order."""
    u, w = q[:, :3], q[:, 3:4]
    uv = np.cross(u, v)
    return v + 2.0 * w * uv + 2.0 * np.cross(u, uv)


@dataclass
class Trace:
    """The chassis of a recording's first vehicle, one row per recorded state sample.

    ``t`` (n,) s; ``pos``, ``linvel``, ``angvel`` (n, 3) in the world frame, lengths in metres;
    ``quat`` (n, 4) x, y, z, w; ``lng``, ``lat``, ``vrt`` (3,) the vehicle frame's axes. Per-wheel
    series (:meth:`wheel_series`) and the steer angles are read when a metric asks for them.
    """

    rec: Recording
    t: np.ndarray
    pos: np.ndarray
    quat: np.ndarray
    linvel: np.ndarray
    angvel: np.ndarray
    lng: np.ndarray
    lat: np.ndarray
    vrt: np.ndarray
    scale: float
    vehicle: Object | None
    _time_of: Callable[[np.ndarray], np.ndarray]
    _cache: dict[str, Any] = field(default_factory=dict)

    # ---- chassis quantities (cached: several metrics share them)

    def _cached(self, key: str, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def forward(self) -> np.ndarray:
        """(n, 3) the body's longitudinal axis in the world."""
        return self._cached("forward", lambda: _rotate(self.quat, self.lng))

    @property
    def lateral(self) -> np.ndarray:
        """(n, 3) the body's lateral axis in the world."""
        return self._cached("lateral", lambda: _rotate(self.quat, self.lat))

    @property
    def up(self) -> np.ndarray:
        """(n, 3) the body's vertical axis in the world."""
        return self._cached("up", lambda: _rotate(self.quat, self.vrt))

    @property
    def speed(self) -> np.ndarray:
        """(n,) forward speed, m/s (negative when reversing)."""
        return self._cached("speed", lambda: np.einsum("ij,ij->i", self.linvel, self.forward))

    @property
    def horizontal_speed(self) -> np.ndarray:
        """(n,) speed in the road plane (the world plane normal to the frame's vertical), m/s."""

        def make() -> np.ndarray:
            v = self.linvel - np.outer(self.linvel @ self.vrt, self.vrt)
            return np.linalg.norm(v, axis=1)

        return self._cached("hspeed", make)

    @property
    def yaw_rate(self) -> np.ndarray:
        """(n,) angular velocity about the body's vertical axis, rad/s."""
        hand = float(np.sign(np.dot(np.cross(self.lng, self.lat), self.vrt))) or 1.0
        return self._cached("yaw", lambda: hand * np.einsum("ij,ij->i", self.angvel, self.up))

    @property
    def lateral_accel(self) -> np.ndarray:
        """(n,) chassis acceleration along the body's lateral axis, m/s² (central differences)."""

        def make() -> np.ndarray:
            if len(self.t) < 2:
                return np.zeros(len(self.t))
            acc = np.gradient(self.linvel, self.t, axis=0)
            return np.einsum("ij,ij->i", acc, self.lateral)

        return self._cached("ay", make)

    # ---- other objects of the vehicle

    def link(self, obj: Object | None, attribute: str) -> list[Object]:
        """The objects an object-handle attribute (or unique list) of ``obj`` points at."""
        if obj is None or obj.cls is None or attribute not in obj.cls.paths:
            return []
        s = self.rec.series(obj, attribute)
        items = s.items if isinstance(s, ListSeries) else s.values
        out: list[Object] = []
        for h, f in zip(np.asarray(items).tolist(), s.frames.tolist(), strict=False):
            o = self.rec.resolve(int(h), int(f)) if h else None
            if o is not None and o not in out:
                out.append(o)
        return out

    def part(self, path: tuple[str, ...], cls: str) -> Object | None:
        """The object at ``path`` (link names) from the vehicle, else the first of class ``cls``."""
        objs = [self.vehicle] if self.vehicle is not None else []
        for name in path:
            objs = [o for parent in objs for o in self.link(parent, name)]
        if objs:
            return objs[0]
        found = _objects(self.rec, cls)
        return found[0] if found else None

    def wheels(self, link: str, cls: str) -> list[Object]:
        """Each wheel's object of one kind (``suspState``, ``tireSlipState`` …), in wheel order."""

        def make() -> list[Object]:
            attachments = self.link(self.vehicle, "wheelAttachmentSet") if self.vehicle is not None else []
            if attachments:
                return [o for a in attachments for o in self.link(a, link)[:1]]
            return _objects(self.rec, cls)

        return self._cached(f"wheels:{link}", make)

    def wheel_series(self, link: str, cls: str, attribute: str) -> np.ndarray:
        """(n, wheels) one float attribute of every wheel at this trace's sample times (each wheel
        series held at the chassis sample frames, zero-order hold)."""

        def make() -> np.ndarray:
            objs = self.wheels(link, cls)
            if not objs:
                raise MetricError(f"{self.rec.source_name}: no {cls} objects (needed for {cls}.{attribute})")
            cols = [self.at_samples(self.rec.series(o, attribute)) for o in objs]
            return np.stack(cols, axis=1)

        return self._cached(f"wheel:{cls}.{attribute}", make)

    def at_samples(self, series: Any, column: int = 0) -> np.ndarray:
        """A series' values held (zero-order hold) at this trace's sample frames; NaN before its
        first sample."""
        frames = np.asarray(series.frames, np.int64)
        values = np.asarray(series.values, np.float64)
        if values.ndim == 2:
            values = values[:, column]
        i = np.searchsorted(frames, self._frames, side="right") - 1
        out = np.full(len(self._frames), np.nan)
        ok = i >= 0
        out[ok] = values[i[ok]]
        return out

    @property
    def _frames(self) -> np.ndarray:
        return self._cache["frames"]

    @property
    def steer_angles(self) -> np.ndarray:
        """(n, wheels) road-wheel steer angle of each wheel, rad (``SteerResponseState``)."""

        def make() -> np.ndarray:
            obj = self.part(("steerResponseState",), "SteerResponseState")
            if obj is None:
                raise MetricError(
                    f"{self.rec.source_name}: no SteerResponseState (the road-wheel steer angles)"
                )
            nb = len(self.wheels("suspState", "SuspensionState")) or 4
            chunks = (
                "wheelStates0To3",
                "wheelStatess4To7",
                "wheelStates8To11",
                "wheelStates12To15",
                "wheelStates16To19",
            )
            cols = []
            for k, name in enumerate(chunks[: (nb + 3) // 4]):
                s = self.rec.series(obj, name)
                cols += [self.at_samples(s, j) for j in range(min(4, nb - 4 * k))]
            return np.stack(cols, axis=1)

        return self._cached("steer", make)

    def window(self, start: float) -> np.ndarray:
        """Boolean mask of the samples at or after ``start`` seconds."""
        return self.t >= float(start) - 1e-9


def _objects(rec: Recording, cls: str) -> list[Object]:
    try:
        return rec.objects_of_class(cls)
    except PvdError:  # the class is not registered in this recording
        return []


_TRACES: weakref.WeakKeyDictionary[Recording, Trace] = weakref.WeakKeyDictionary()


def trace_of(rec: Recording) -> Trace:
    """The :class:`Trace` of the first vehicle of ``rec`` (built once per recording)."""
    tr = _TRACES.get(rec)
    if tr is None:
        tr = _build_trace(rec)
        _TRACES[rec] = tr
    return tr


def _build_trace(rec: Recording) -> Trace:
    vehicles = _objects(rec, "Vehicle")
    vehicle = vehicles[0] if vehicles else None
    body = None
    if vehicle is not None and vehicle.cls is not None and "rigidBodyState" in vehicle.cls.paths:
        s = rec.series(vehicle, "rigidBodyState")
        handles = np.asarray(s.values).tolist()
        body = rec.resolve(int(handles[0]), int(s.frames[0])) if handles else None
    if body is None:
        bodies = _objects(rec, "RigidBodyState")
        if not bodies:
            raise MetricError(
                f"{rec.source_name}: no RigidBodyState object (the chassis state the built-in metrics read)"
            )
        body = bodies[0]
    cols = {name: rec.series(body, name) for name in ("pos", "quat", "linvel", "angvel")}
    frames = np.asarray(cols["linvel"].frames, np.int64)
    if not len(frames):
        raise MetricError(f"{rec.source_name}: RigidBodyState.linvel has no samples")

    def hold(series: Any, width: int) -> np.ndarray:
        v = np.asarray(series.values, np.float64).reshape(len(series.frames), -1)[:, :width]
        i = np.searchsorted(np.asarray(series.frames, np.int64), frames, side="right") - 1
        return v[np.maximum(i, 0)]

    ctx = _objects(rec, "SimulationContext")
    axes, scale = _DEFAULT_AXES, 1.0
    if ctx:
        c = ctx[0]
        axes = tuple(
            int(np.asarray(rec.series(c, n).raw).reshape(-1)[0]) if len(rec.series(c, n)) else d
            for n, d in zip(("lngAxis", "latAxis", "vrtAxis"), _DEFAULT_AXES, strict=True)
        )
        sc = rec.series(c, "scale")
        scale = float(np.asarray(sc.values).reshape(-1)[0]) if len(sc) else 1.0
    unit = [np.asarray(_AXES[a], np.float64) for a in axes]

    def time_of(f: np.ndarray) -> np.ndarray:
        sims = _objects(rec, "Simulation")
        if sims and "time" in (sims[0].cls.paths if sims[0].cls else {}):
            st = rec.series(sims[0], "time")
            if len(st):
                sf = np.asarray(st.frames, np.int64)
                i = np.searchsorted(sf, f, side="right") - 1
                return np.where(i >= 0, np.asarray(st.values, np.float64).reshape(-1)[np.maximum(i, 0)], 0.0)
        # No simulation clock: the frame timestamps, which simcore writes in nanoseconds.
        return np.asarray(rec.frames.time(f), np.float64) * 1e-9

    t = time_of(frames)
    quat = hold(cols["quat"], 4)
    norms = np.linalg.norm(quat, axis=1, keepdims=True)
    quat = np.where(norms > 0, quat / np.where(norms > 0, norms, 1.0), np.array([0.0, 0.0, 0.0, 1.0]))
    tr = Trace(
        rec,
        t,
        hold(cols["pos"], 3) / scale,
        quat,
        hold(cols["linvel"], 3) / scale,
        hold(cols["angvel"], 3),
        unit[0],
        unit[1],
        unit[2],
        scale,
        vehicle,
        time_of,
    )
    tr._cache["frames"] = frames
    return tr


def frame_time(rec: Recording, frame: int) -> float:
    """Seconds of one frame of ``rec`` (the simulation clock, else the ns timestamp)."""
    if frame < 0:
        return 0.0
    return float(trace_of(rec)._time_of(np.asarray([frame], np.int64))[0])


# --------------------------------------------------------------------------------------------
# Built-in metrics
# --------------------------------------------------------------------------------------------


def _crossing(t: np.ndarray, y: np.ndarray, level: float, mask: np.ndarray, rising: bool) -> float:
    """First time after the masked start where ``y`` crosses ``level`` (linear interpolation)."""
    idx = np.flatnonzero(mask)
    if not len(idx):
        return math.nan
    seg_t, seg_y = t[idx[0] :], y[idx[0] :]
    hit = np.flatnonzero(seg_y >= level if rising else seg_y <= level)
    if not len(hit):
        return math.nan
    k = int(hit[0])
    if k == 0:
        return float(seg_t[0])
    y0, y1, t0, t1 = seg_y[k - 1], seg_y[k], seg_t[k - 1], seg_t[k]
    return float(t0 + (level - y0) * (t1 - t0) / (y1 - y0)) if y1 != y0 else float(t1)


def _brake_onset(tr: Trace) -> float:
    cmd = tr.part(("directDrivetrain", "commandState"), "DirectDriveCommandState") or tr.part(
        ("engineDrivetrain", "commandState"), "EngineDriveCommandState"
    )
    if cmd is None:
        raise MetricError(
            f"{tr.rec.source_name}: no DirectDriveCommandState / EngineDriveCommandState "
            "(the brake command that starts stopping_distance); give start = <s>"
        )
    brake = tr.at_samples(tr.rec.series(cmd, "brakes"), 0)
    on = np.flatnonzero(brake > 0)
    if not len(on):
        return math.nan
    k = int(on[0])
    # The command recorded with a sample drove the step that ended there: braking starts at the
    # previous sample (the state the first braked step started from).
    return float(tr.t[k - 1]) if k > 0 else 0.0


def stopping_distance(rec: Recording, stop_speed: float = 0.1, start: float | None = None) -> float:
    """Horizontal path length (m) from brake onset (or ``start`` s) until the horizontal speed
    first falls to ``stop_speed`` (m/s); NaN if the vehicle never brakes or never stops."""
    tr = trace_of(rec)
    t0 = _brake_onset(tr) if start is None else float(start)
    if math.isnan(t0):
        return math.nan
    v = tr.horizontal_speed
    t_stop = _crossing(tr.t, v, stop_speed, tr.window(t0), rising=False)
    if math.isnan(t_stop):
        return math.nan
    # Trapezoids over the samples inside [t0, t_stop], the speed interpolated at both ends.
    inside = (tr.t > t0) & (tr.t < t_stop)
    ts = np.concatenate(([t0], tr.t[inside], [t_stop]))
    vs = np.interp(ts, tr.t, v)
    return float(np.sum(0.5 * (vs[1:] + vs[:-1]) * np.diff(ts)))


def time_to_speed(rec: Recording, speed: float = 100.0 / 3.6, start: float = 0.0) -> float:
    """First time (s, simulation clock) at or after ``start`` the forward speed reaches ``speed``
    (m/s), interpolated between samples; NaN if it never does."""
    tr = trace_of(rec)
    return _crossing(tr.t, tr.speed, float(speed), tr.window(start), rising=True)


def max_lateral_accel(rec: Recording, start: float = 0.0) -> float:
    """Largest |lateral acceleration| (m/s²) at or after ``start`` s."""
    tr = trace_of(rec)
    a = np.abs(tr.lateral_accel[tr.window(start)])
    return float(a.max()) if len(a) else math.nan


def _last(tr: Trace, window: float) -> np.ndarray:
    return tr.window(float(tr.t[-1]) - float(window))


def steady_state_lateral_accel(rec: Recording, window: float = 1.0) -> float:
    """Mean lateral acceleration (m/s², signed) over the last ``window`` seconds."""
    tr = trace_of(rec)
    return float(np.mean(tr.lateral_accel[_last(tr, window)]))


def _road_wheel_angle(tr: Trace) -> np.ndarray:
    """(n,) mean steer angle of the wheels that steer (rad); NaN where none does."""
    steer = tr.steer_angles
    steered = np.abs(steer) > 1e-9
    count = steered.sum(axis=1)
    total = np.where(steered, steer, 0.0).sum(axis=1)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def yaw_rate_gain(rec: Recording, window: float = 1.0) -> float:
    """Steady-state yaw rate / road-wheel steer angle (1/s) over the last ``window`` seconds;
    NaN when the wheels are straight."""
    tr = trace_of(rec)
    m = _last(tr, window)
    delta = _road_wheel_angle(tr)[m]
    if not len(delta) or np.isnan(delta).any() or abs(float(np.mean(delta))) < 1e-6:
        return math.nan
    return float(np.mean(tr.yaw_rate[m]) / np.mean(delta))


def understeer_gradient(
    rec: Recording, min_accel: float = 0.5, max_accel: float = 4.0, min_speed: float = 5.0
) -> float:
    """Understeer gradient K (rad/(m/s²)) from a steer ramp: the slope of δ − L·r/V against
    a_y over the quasi-steady samples in the accel band; NaN with fewer than 3 such samples."""
    tr = trace_of(rec)
    ack = tr.part(("ackermannParams",), "AckermannParams")
    if ack is None or not len(rec.series(ack, "wheelBase")):
        raise MetricError(
            f"{rec.source_name}: no AckermannParams.wheelBase (the wheel base L of understeer_gradient)"
        )
    wheel_base = float(np.asarray(rec.series(ack, "wheelBase").values).reshape(-1)[0]) / tr.scale
    delta, r, v, ay = _road_wheel_angle(tr), tr.yaw_rate, tr.speed, tr.lateral_accel
    use = (np.abs(ay) >= min_accel) & (np.abs(ay) <= max_accel) & (v >= min_speed) & ~np.isnan(delta)
    if use.sum() < 3:
        return math.nan
    y = delta[use] - wheel_base * r[use] / v[use]
    slope, _ = np.polyfit(ay[use], y, 1)
    return float(slope)


def peak_long_slip(rec: Recording, start: float = 0.0, min_speed: float = 1.0) -> float:
    """Largest |longitudinal slip| (dimensionless) of any wheel at or after ``start`` s, while the
    vehicle moves at ``min_speed`` m/s or more (slip is ill-defined at rest)."""
    tr = trace_of(rec)
    s = tr.wheel_series("tireSlipState", "TireSlipState", "lngSlip")
    m = tr.window(start) & (tr.horizontal_speed >= min_speed)
    return float(np.nanmax(np.abs(s[m]))) if m.any() else math.nan


def peak_lat_slip(rec: Recording, start: float = 0.0, min_speed: float = 1.0) -> float:
    """Largest |lateral slip angle| (rad) of any wheel, same window as :func:`peak_long_slip`."""
    tr = trace_of(rec)
    s = tr.wheel_series("tireSlipState", "TireSlipState", "latSlip")
    m = tr.window(start) & (tr.horizontal_speed >= min_speed)
    return float(np.nanmax(np.abs(s[m]))) if m.any() else math.nan


def max_jounce(rec: Recording, start: float = 0.0) -> float:
    """Largest suspension jounce (m: compression from full droop) of any wheel at or after
    ``start`` s."""
    tr = trace_of(rec)
    j = tr.wheel_series("suspState", "SuspensionState", "jounce")[tr.window(start)]
    return float(np.nanmax(j)) / tr.scale if len(j) else math.nan


def final_speed(rec: Recording) -> float:
    """Forward speed (m/s) at the last recorded sample."""
    return float(trace_of(rec).speed[-1])


def wheel_lift_off_time(rec: Recording, start: float = 0.5) -> float:
    """Seconds at or after ``start`` during which at least one wheel is in the air (suspension
    separation > 0); each sample counts for the interval since the previous one."""
    tr = trace_of(rec)
    sep = tr.wheel_series("suspState", "SuspensionState", "separation")
    airborne = (sep > 0).any(axis=1)
    dt = np.diff(tr.t, prepend=tr.t[0] - (tr.t[1] - tr.t[0] if len(tr.t) > 1 else 0.0))
    m = tr.window(start)
    return float(np.sum(dt[m & airborne]))


#: Every built-in metric by name, with its unit.
METRICS: dict[str, tuple[Callable[..., float], str]] = {
    "stopping_distance": (stopping_distance, "m"),
    "time_to_speed": (time_to_speed, "s"),
    "max_lateral_accel": (max_lateral_accel, "m/s^2"),
    "steady_state_lateral_accel": (steady_state_lateral_accel, "m/s^2"),
    "yaw_rate_gain": (yaw_rate_gain, "1/s"),
    "understeer_gradient": (understeer_gradient, "rad/(m/s^2)"),
    "peak_long_slip": (peak_long_slip, "1"),
    "peak_lat_slip": (peak_lat_slip, "rad"),
    "max_jounce": (max_jounce, "m"),
    "final_speed": (final_speed, "m/s"),
    "wheel_lift_off_time": (wheel_lift_off_time, "s"),
}


def resolve_metric(name: str) -> Callable[..., float]:
    """The function of a built-in metric name or of ``"module:function"`` (imported here)."""
    if name in METRICS:
        return METRICS[name][0]
    module, sep, attr = name.partition(":")
    if not sep or not module or not attr:
        raise MetricError(
            f'unknown metric {name!r}: a built-in name ({", ".join(METRICS)}) or "module:function"'
        )
    if module.startswith("."):
        raise MetricError(
            f"metric {name!r}: {module!r} is a relative module name; give the module's full dotted "
            "name (as `import` on the Python path takes it)"
        )
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            raise MetricError(f"metric {name!r}: no module {module!r} on the Python path") from None
        raise
    except SyntaxError as exc:  # the user's module does not compile: where, not a traceback
        raise MetricError(
            f"metric {name!r}: module {module!r} does not compile: {exc.filename}, line {exc.lineno}: "
            f"{exc.msg}"
        ) from None
    fn = getattr(mod, attr, None)
    if not callable(fn):
        raise MetricError(f"metric {name!r}: module {module!r} has no function {attr!r}")
    return fn


def check_options(name: str, fn: Callable[..., float], options: dict[str, Any]) -> None:
    """:class:`MetricError` unless ``fn(rec, **options)`` binds (names the bad option) and each
    option has the type of its default: a number where the default is a number (every option of
    the built-in metrics, whatever their default: a finite one), true / false where it is a bool,
    text where it is text. Another option without a default (or a default of None) takes any
    value."""
    from pvdkit.terminal import shown

    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature, e.g. max
        raise MetricError(
            f"metric {name!r}: {fn!r} has no readable signature; a metric is a Python function "
            "metric(rec, **options) -> float"
        ) from None
    try:
        signature.bind(None, **options)
    except TypeError as exc:
        params = [p for p in list(signature.parameters)[1:]]
        raise MetricError(f"metric {name!r}: {exc} (its options: {', '.join(params) or 'none'})") from None
    builtin = any(fn is f for f, _ in METRICS.values())
    for option, value in options.items():
        param = signature.parameters.get(option)
        default = param.default if param is not None else inspect.Parameter.empty
        expected = "a finite number" if builtin else _option_kind(default)
        if expected is not None and not _is_kind(value, expected):
            raise MetricError(f"metric {name!r}: option {option} must be {expected}, got {shown(value)}")


def _option_kind(default: Any) -> str | None:
    """What an option whose default is ``default`` must be, in words; None: anything."""
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, int | float):
        return "a finite number"
    if isinstance(default, str):
        return "text"
    return None


def _is_kind(value: Any, kind: str) -> bool:
    if kind == "true or false":
        return isinstance(value, bool)
    if kind == "text":
        return isinstance(value, str)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too big for a float
        return False
