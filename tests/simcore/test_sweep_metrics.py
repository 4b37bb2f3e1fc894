"""The sweep's built-in metrics on analytic cases: synthetic recordings written with pvdkit's writer
(a chassis whose motion is known in closed form), and simcore runs checked against their own
positions in both recording layouts."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.types import DataType
from pvdkit.writer import OmniPvdWriter
from simcore.cli.record import record
from simcore.sweep import METRICS, MetricError
from simcore.sweep import metrics as M

DT = 0.01
CTX = 1
F32, F64 = DataType.FLOAT32, DataType.FLOAT64
# PhysX's default frame, which the synthetic recordings use: lng +Z, lat +X, vrt +Y.
LNG, LAT, VRT = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])


def _yaw_quat(psi: np.ndarray) -> np.ndarray:
    """(n, 4) x, y, z, w: rotations by ``psi`` about the vertical (+Y)."""
    return np.stack([np.zeros_like(psi), np.sin(psi / 2), np.zeros_like(psi), np.cos(psi / 2)], axis=1)


def synthetic(
    t: np.ndarray,
    linvel: np.ndarray,
    *,
    psi: np.ndarray | None = None,
    yaw_rate: np.ndarray | None = None,
    brake: np.ndarray | None = None,
    steer: np.ndarray | None = None,
    wheel_base: float | None = None,
    jounce: np.ndarray | None = None,
    separation: np.ndarray | None = None,
    slips: tuple[np.ndarray, np.ndarray] | None = None,
    scale: float | None = None,
) -> Recording:
    """A recording of one chassis (``RigidBodyState`` every frame, the ``Simulation`` clock) and
    whatever per-wheel or command state is given, one frame per sample, timestamps in ns.
    Lengths are written × ``scale`` with a ``SimulationContext`` saying so."""
    n = len(t)
    k = 1.0 if scale is None else scale
    psi = np.zeros(n) if psi is None else psi
    yaw_rate = np.zeros(n) if yaw_rate is None else yaw_rate
    pos = np.concatenate(
        [[np.zeros(3)], np.cumsum(0.5 * (linvel[1:] + linvel[:-1]) * np.diff(t)[:, None], 0)]
    )
    stream = MemoryStream()
    w = OmniPvdWriter(stream)
    body = w.register_class("RigidBodyState")
    attrs = {
        name: w.register_attribute(body, name, F32, c)
        for name, c in (("pos", 3), ("quat", 4), ("linvel", 3), ("angvel", 3))
    }
    sim = w.register_class("Simulation")
    a_time = w.register_attribute(sim, "time", F64)
    extra: list[tuple[int, int, np.ndarray]] = []  # (object, attribute, values per frame)
    handle = 100

    def obj(cls_name: str, fields: dict[str, tuple[DataType, int, np.ndarray]], count: int = 1) -> None:
        nonlocal handle
        c = w.register_class(cls_name)
        ids = {f: w.register_attribute(c, f, dt, nb) for f, (dt, nb, _) in fields.items()}
        for i in range(count):
            handle += 1
            w.create_object(CTX, c, handle, f"{cls_name}{i}")
            for f, (_, _, values) in fields.items():
                extra.append((handle, ids[f], values[:, i] if count > 1 else values))

    if scale is not None:
        axes = w.register_class("VehicleAxes")
        for name, v in (("ePosX", 0), ("eNegX", 1), ("ePosY", 2), ("eNegY", 3), ("ePosZ", 4), ("eNegZ", 5)):
            w.register_enum_value(axes, name, v)
        c = w.register_class("SimulationContext")
        ax = [w.register_flags_attribute(c, name, axes) for name in ("lngAxis", "latAxis", "vrtAxis")]
        a_scale = w.register_attribute(c, "scale", F64)
        w.create_object(CTX, c, 50, "SimulationContext")
        for a, v in zip(ax, (4, 0, 2), strict=True):
            w.set_attribute(CTX, 50, a, np.uint32(v))
        w.set_attribute(CTX, 50, a_scale, np.float64(scale))
    if brake is not None:
        obj("DirectDriveCommandState", {"brakes": (F32, 2, np.stack([brake, np.zeros(n)], axis=1))})
    if steer is not None:
        obj("SteerResponseState", {"wheelStates0To3": (F32, 4, steer)})
    if jounce is not None:
        obj(
            "SuspensionState",
            {"jounce": (F32, 1, jounce * k), "separation": (F32, 1, separation * k)},
            count=jounce.shape[1],
        )
    if slips is not None:
        obj(
            "TireSlipState",
            {"lngSlip": (F32, 1, slips[0]), "latSlip": (F32, 1, slips[1])},
            count=slips[0].shape[1],
        )
    if wheel_base is not None:
        c = w.register_class("AckermannParams")
        a_wb = w.register_attribute(c, "wheelBase", F32)
        w.create_object(CTX, c, 60, "AckermannParams")
        w.set_attribute(CTX, 60, a_wb, np.float32(wheel_base * k))
    w.create_object(CTX, body, 1, "RigidBodyState")
    w.create_object(CTX, sim, 2, "Simulation")
    quat = _yaw_quat(psi)
    angvel = yaw_rate[:, None] * VRT
    for i in range(n):
        ts = int(round(t[i] * 1e9))
        w.start_frame(CTX, ts)
        for name, value in (
            ("pos", pos[i] * k),
            ("quat", quat[i]),
            ("linvel", linvel[i] * k),
            ("angvel", angvel[i]),
        ):
            w.set_attribute(CTX, 1, attrs[name], np.asarray(value, np.float32))
        w.set_attribute(CTX, 2, a_time, np.float64(t[i]))
        for o, a, values in extra:
            w.set_attribute(CTX, o, a, np.asarray(values[i], np.float32 if a != a_time else np.float64))
        w.stop_frame(CTX, ts)
    w.close()
    return Recording.open(stream.getvalue())


def _straight(t: np.ndarray, speed: np.ndarray) -> np.ndarray:
    return speed[:, None] * LNG


@pytest.mark.parametrize("scale", [None, 100.0])  # metres, and a vehicle described in centimetres
def test_stopping_distance_is_v0_squared_over_2a_for_a_constant_deceleration(scale):
    v0, a, onset = 20.0, 8.0, 1.0
    t = np.arange(1, 501) * DT
    speed = np.where(t <= onset, v0, np.maximum(v0 - a * (t - onset), 0.0))
    brake = (t > onset + 1e-9).astype(float)  # the first braked step ends one sample after onset
    rec = synthetic(t, _straight(t, speed), brake=brake, scale=scale)
    stop = 0.1
    assert M.stopping_distance(rec) == pytest.approx((v0**2 - stop**2) / (2 * a), rel=1e-5)
    assert M.stopping_distance(rec, stop_speed=0.5) == pytest.approx((v0**2 - 0.25) / (2 * a), rel=1e-5)
    assert M.final_speed(rec) == 0.0
    # The brake never comes: NaN (not a number that looks like a distance).
    assert math.isnan(M.stopping_distance(synthetic(t, _straight(t, np.full_like(t, v0)), brake=0 * t)))
    # No command state at all: the metric says what it lacks, unless told where braking starts.
    bare = synthetic(t, _straight(t, speed))
    with pytest.raises(MetricError, match="no DirectDriveCommandState"):
        M.stopping_distance(bare)
    assert M.stopping_distance(bare, start=onset) == pytest.approx((v0**2 - stop**2) / (2 * a), rel=1e-5)


def test_time_to_speed_interpolates_a_constant_acceleration():
    t = np.arange(1, 1001) * DT
    rec = synthetic(t, _straight(t, 3.0 * t))
    assert M.time_to_speed(rec) == pytest.approx(100 / 3.6 / 3.0, rel=1e-6)
    assert M.time_to_speed(rec, speed=15.0) == pytest.approx(5.0, rel=1e-6)
    assert math.isnan(M.time_to_speed(rec, speed=31.0))  # 30 m/s at the end
    assert M.final_speed(rec) == pytest.approx(30.0, rel=1e-6)


def test_a_steady_circle_gives_v_squared_over_r_and_the_yaw_rate_gain():
    v, radius, delta = 10.0, 50.0, 0.05
    t = np.arange(1, 401) * DT
    r = v / radius
    psi = r * t  # turning about +Y from +Z toward +X: toward the lateral axis
    forward = np.stack([np.sin(psi), np.zeros_like(psi), np.cos(psi)], axis=1)
    steer = np.tile([delta, delta, 0.0, 0.0], (len(t), 1))  # front wheels steer
    rec = synthetic(t, v * forward, psi=psi, yaw_rate=np.full_like(t, r), steer=steer)
    assert M.steady_state_lateral_accel(rec) == pytest.approx(v**2 / radius, rel=1e-4)
    assert M.max_lateral_accel(rec) == pytest.approx(v**2 / radius, rel=1e-3)
    assert M.yaw_rate_gain(rec) == pytest.approx(r / delta, rel=1e-6)
    # Mirrored (a right turn): the same magnitudes, negative lateral acceleration.
    mirrored = synthetic(t, v * forward * [-1, 1, 1], psi=-psi, yaw_rate=np.full_like(t, -r), steer=-steer)
    assert M.steady_state_lateral_accel(mirrored) == pytest.approx(-(v**2) / radius, rel=1e-4)
    assert M.yaw_rate_gain(mirrored) == pytest.approx(r / delta, rel=1e-6)


def test_the_understeer_gradient_of_a_steer_ramp_is_the_slope_it_was_built_with():
    v, wheel_base, k_us, ramp = 20.0, 2.8, 0.003, 0.06  # yaw rate grows 0.06 rad/s per second
    t = np.arange(1, 601) * DT
    r = ramp * t
    psi = 0.5 * ramp * t**2
    forward = np.stack([np.sin(psi), np.zeros_like(psi), np.cos(psi)], axis=1)
    ay = v * r  # no sideslip: the lateral acceleration of the path
    delta = wheel_base * r / v + k_us * ay
    steer = np.stack([delta, delta, 0 * t, 0 * t], axis=1)
    rec = synthetic(t, v * forward, psi=psi, yaw_rate=r, steer=steer, wheel_base=wheel_base)
    assert M.understeer_gradient(rec) == pytest.approx(k_us, rel=1e-3)
    neutral = synthetic(
        t,
        v * forward,
        psi=psi,
        yaw_rate=r,
        steer=steer - k_us * ay[:, None] * [1, 1, 0, 0],
        wheel_base=wheel_base,
    )
    assert M.understeer_gradient(neutral) == pytest.approx(0.0, abs=3e-6)
    with pytest.raises(MetricError, match="AckermannParams.wheelBase"):
        M.understeer_gradient(synthetic(t, v * forward, psi=psi, yaw_rate=r, steer=steer))


@pytest.mark.parametrize("scale", [None, 100.0])
def test_wheel_metrics_take_the_extremes_over_wheels_and_time(scale):
    t = np.arange(1, 401) * DT
    n = len(t)
    jounce = np.full((n, 4), 0.08)
    jounce[200, 2] = 0.12
    separation = np.zeros((n, 4))
    separation[(t > 2.0 + 1e-9) & (t <= 2.5 + 1e-9), 3] = 0.01  # wheel 3 in the air for 0.5 s
    separation[:20, :] = 0.05  # the drop onto the road, before `start`
    lng = np.zeros((n, 4))
    lat = np.zeros((n, 4))
    lng[100, 1], lat[300, 0] = -0.35, 0.12
    lng[5, 0] = 9.0  # at 0.06 s: the vehicle is not yet moving (speed < 1 m/s)
    speed = np.where(t < 0.5, 0.0, 10.0)
    rec = synthetic(
        t, _straight(t, speed), jounce=jounce, separation=separation, slips=(lng, lat), scale=scale
    )
    assert M.max_jounce(rec) == pytest.approx(0.12, rel=1e-6)
    assert M.max_jounce(rec, start=2.5) == pytest.approx(0.08, rel=1e-6)
    assert M.wheel_lift_off_time(rec) == pytest.approx(0.5, rel=1e-6)
    assert M.wheel_lift_off_time(rec, start=0.0) == pytest.approx(0.7, rel=1e-6)
    assert M.peak_long_slip(rec) == pytest.approx(0.35, rel=1e-6)
    assert M.peak_long_slip(rec, min_speed=0.0) == pytest.approx(9.0, rel=1e-6)
    assert M.peak_lat_slip(rec) == pytest.approx(0.12, rel=1e-6)


def test_every_metric_is_documented_with_its_unit():
    doc = M.__doc__ or ""
    for name, (fn, unit) in METRICS.items():
        assert name.split("_")[0] in doc and fn.__doc__, name
        assert unit
    assert set(METRICS) == {
        "stopping_distance",
        "time_to_speed",
        "max_lateral_accel",
        "steady_state_lateral_accel",
        "yaw_rate_gain",
        "understeer_gradient",
        "peak_long_slip",
        "peak_lat_slip",
        "max_jounce",
        "final_speed",
        "wheel_lift_off_time",
    }


def _user_metric(rec, level: float = 1.0, absolute: bool = False, label: str = "", extra=None) -> float:
    return 0.0


@pytest.mark.parametrize(
    ("name", "fn", "options", "message"),
    [
        ("time_to_speed", M.time_to_speed, {"speed": "fast"}, "speed must be a finite number, got 'fast'"),
        ("time_to_speed", M.time_to_speed, {"speed": True}, "option speed must be a finite number, got True"),
        ("time_to_speed", M.time_to_speed, {"speed": math.inf}, "option speed must be a finite number"),
        ("time_to_speed", M.time_to_speed, {"speed": 10**400}, "got an integer of about 401 digits"),
        # A built-in option whose default is None is a number all the same.
        ("stopping_distance", M.stopping_distance, {"start": "now"}, "option start must be a finite number"),
        ("mine", _user_metric, {"level": [1]}, "option level must be a finite number, got [1]"),
        ("mine", _user_metric, {"absolute": 1}, "option absolute must be true or false, got 1"),
        ("mine", _user_metric, {"label": 3}, "option label must be text, got 3"),
    ],
)
def test_metric_options_of_the_wrong_type_are_refused_before_any_run(name, fn, options, message):
    """A text where a number belongs passed the sweep file's check and then failed every run."""
    with pytest.raises(MetricError, match=re.escape(message)):
        M.check_options(name, fn, options)


def test_metric_options_of_the_right_type_pass():
    M.check_options("time_to_speed", M.time_to_speed, {"speed": 20, "start": 0.5})
    M.check_options("stopping_distance", M.stopping_distance, {"start": 3.0})
    M.check_options("mine", _user_metric, {"level": 2.5, "absolute": True, "label": "x", "extra": [1, "a"]})


@pytest.mark.parametrize("physx", [False, None])  # pure Vehicle2 (a frame per step), PhysX layout (two)
def test_on_a_simcore_brake_run_the_stopping_distance_is_the_distance_between_its_positions(tmp_path, physx):
    out = tmp_path / "brake.h5"
    record("sedan", "brake", duration=5.0, out=out, physx=physx)
    with Recording.open(out) as rec:
        tr = M.trace_of(rec)
        assert len(tr.t) == 300 and tr.t[0] == pytest.approx(1 / 60) and np.all(np.diff(tr.t) > 0)
        d = M.stopping_distance(rec)
        onset = 3.0
        assert tr.speed[np.searchsorted(tr.t, onset) - 1] > 10.0  # braking from speed
        stop = int(np.flatnonzero((tr.t > onset) & (tr.horizontal_speed <= 0.1))[0])
        start = int(np.searchsorted(tr.t, onset - 1e-9))
        travelled = np.linalg.norm((tr.pos[stop] - tr.pos[start]) * [1, 0, 1])  # straight line, road plane
        # The metric integrates the recorded speed; the positions are an independent record of
        # the same motion (the last, sticky-tire step to rest is where the two part most).
        assert d == pytest.approx(travelled, rel=0.02)
        assert abs(M.final_speed(rec)) < 0.1
