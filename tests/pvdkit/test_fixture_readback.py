"""The query model against ground truth: values PhysX's own API read back while recording.

``tests/data/vehicles_short.ovd`` was recorded by PhysX; ``vehicles_short_readback.csv`` holds,
per simulation step, what ovphysx's API returned (see ``tests/data/README.md``). PhysX writes two
frames per step; their start timestamps are the CSV's ``ovd_frame_vehicle`` (Vehicle2 state)
and ``ovd_frame_rigid`` (rigid-body results) columns.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from pvdkit.convert import convert
from pvdkit.recording import Recording

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURE = DATA / "vehicles_short.ovd"
WHEELS = ("FrontLeftWheel", "FrontRightWheel", "RearLeftWheel", "RearRightWheel")
VEHICLES = ("Basic", "Raw", "Standard", "Tank")


@pytest.fixture(scope="module")
def readback() -> dict[str, np.ndarray]:
    with open(DATA / "vehicles_short_readback.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    return {h: np.array([float(r[j]) for r in body]) for j, h in enumerate(header)}


@pytest.fixture(scope="module", params=["ovd", "h5"])
def rec(request, tmp_path_factory) -> Recording:
    if request.param == "ovd":
        r = Recording.open(FIXTURE)
    else:
        path = tmp_path_factory.mktemp("h5") / "vehicles_short.h5"
        convert(FIXTURE, path)
        r = Recording.open(path)
    yield r
    r.close()


def _frame_of_timestamp(rec: Recording, ts: float) -> int:
    hits = np.flatnonzero(rec.frames.start == int(ts))
    assert len(hits) == 1, f"timestamp {ts} is not the start of exactly one frame"
    return int(hits[0])


def _vehicles(rec: Recording) -> dict[str, tuple]:
    """Vehicle name (from the PhysX actor's name) → (vehicle, rigid actor, wheel attachments by index)."""
    out = {}
    last = len(rec.frames) - 1
    for v in rec.objects_of_class("Vehicle"):
        wrapper = rec.resolve(v.value_at("physxRigidActor", 0), 0)
        actor = rec.resolve(wrapper.value_at("rigidActor", 0), 0)
        name = actor.value_at("name", last)
        assert name.startswith("/World/")
        attachments = [rec.resolve(h, 0) for h in v.value_at("wheelAttachmentSet", 0)]
        by_index = {int(a.name.removeprefix("WheelAttachment")): a for a in attachments}
        out[name.removeprefix("/World/")] = (v, actor, by_index)
    return out


def test_four_vehicles_each_with_four_wheels(rec):
    vs = _vehicles(rec)
    assert sorted(vs) == sorted(VEHICLES)
    for _, actor, wheels in vs.values():
        assert actor.cls.name == "PxRigidDynamic" and actor.cls.is_a("PxRigidActor")
        assert sorted(wheels) == [0, 1, 2, 3]


def test_frames_are_two_per_step_with_the_recorded_timestamps(rec, readback):
    assert len(rec.frames) == 25
    np.testing.assert_array_equal(rec.frames.start, np.arange(1, 26))
    assert rec.frames.stopped.sum() == 24 and not rec.frames.stopped[-1]  # last frame never closed
    for step in range(12):
        assert _frame_of_timestamp(rec, readback["ovd_frame_vehicle"][step]) == 2 * step
        assert _frame_of_timestamp(rec, readback["ovd_frame_rigid"][step]) == 2 * step + 1


def test_corrected_rotation_speed_of_every_wheel_equals_readback(rec, readback):
    vs = _vehicles(rec)
    checked = 0
    for vname, (_, _, wheels) in vs.items():
        for k, wname in enumerate(WHEELS):
            state = rec.resolve(wheels[k].value_at("wheelRigidBody1dState", 0), 0)
            assert state.cls.name == "WheelRigidBodyState"
            series = rec.series(state, "correctedRotationSpeed")
            for step in range(12):
                frame = _frame_of_timestamp(rec, readback["ovd_frame_vehicle"][step])
                expected = np.float32(readback[f"{vname}.{wname}.rotationSpeed"][step])
                assert series.at(frame) == expected, (vname, wname, step)
                assert rec.value_at(state, "correctedRotationSpeed", frame) == expected
                checked += 1
    assert checked == 4 * 4 * 12


def test_chassis_pose_is_the_physx_actor_global_pose(rec, readback):
    """The readback pose is PxRigidActor.globalPose (quat xyzw, then position) at the rigid frame.

    Vehicle2's own RigidBodyState.pos is a different quantity (it does not match), which is why
    the actor's pose is the one to compare.
    """
    vs = _vehicles(rec)
    for vname, (v, actor, _) in vs.items():
        for step in range(12):
            frame = _frame_of_timestamp(rec, readback["ovd_frame_rigid"][step])
            pose = rec.value_at(actor, "globalPose", frame)
            assert pose.dtype == np.float32 and pose.shape == (7,)
            expected = [
                readback[f"{vname}.{c}"][step]
                for c in ("quat_x", "quat_y", "quat_z", "quat_w", "pos_x", "pos_y", "pos_z")
            ]
            np.testing.assert_array_equal(pose, np.float32(expected))
        rbs = rec.resolve(v.value_at("rigidBodyState", 0), 0)
        frame = _frame_of_timestamp(rec, readback["ovd_frame_rigid"][0])
        assert not np.allclose(
            rec.value_at(rbs, "pos", frame), [readback[f"{vname}.pos_{c}"][0] for c in "xyz"]
        )


def test_linear_velocity_and_engine_state(rec, readback):
    vs = _vehicles(rec)
    for vname, (v, actor, _) in vs.items():
        for step in range(12):
            frame = _frame_of_timestamp(rec, readback["ovd_frame_rigid"][step])
            vel = rec.value_at(actor, "linearVelocity", frame)
            np.testing.assert_array_equal(
                vel, np.float32([readback[f"{vname}.linvel_{c}"][step] for c in "xyz"])
            )
        if vname not in ("Standard", "Tank"):
            continue
        drivetrain = rec.resolve(v.value_at("engineDrivetrain", 0), 0)
        gearbox = rec.resolve(drivetrain.value_at("gearboxState", 0), 0)
        for step in range(12):
            frame = _frame_of_timestamp(rec, readback["ovd_frame_vehicle"][step])
            # README: the recorded gear is the readback gear + 1.
            assert gearbox.value_at("currentGear", frame) == readback[f"{vname}.currentGear"][step] + 1


def test_wheel_radius_of_every_wheel(rec):
    """Every wheel of the scene has radius 0.35 m and half width 0.075 m (vehicle_read_write.usda),
    set once per step: 13 samples per wheel, all equal."""
    vs = _vehicles(rec)
    n = 0
    for _, (_, _, wheels) in vs.items():
        for a in wheels.values():
            params = rec.resolve(a.value_at("wheelParams", 0), 0)
            frames, radius = rec.series(params, "radius")
            assert radius.dtype == np.float32 and len(radius) == 13
            np.testing.assert_array_equal(radius, np.float32(0.35))
            assert rec.value_at(params, "halfWidth", 24) == np.float32(0.075)
            n += 1
    assert n == 16
    assert len(rec.objects_of_class("WheelParams")) == 16


def test_rotation_angle_integrates_corrected_speed(rec, readback):
    """rotationAngle(step) - rotationAngle(step - 1) = correctedRotationSpeed(step) × dt, as in the
    readback; ties the two series of the same object together frame by frame."""
    vs = _vehicles(rec)
    dt = np.float32(1 / 60)
    v, _, wheels = vs["Basic"]
    state = rec.resolve(wheels[0].value_at("wheelRigidBody1dState", 0), 0)
    frames = [2 * s for s in range(12)]
    angle = np.array([rec.value_at(state, "rotationAngle", f) for f in frames])
    speed = np.array([rec.value_at(state, "correctedRotationSpeed", f) for f in frames])
    np.testing.assert_allclose(np.diff(angle), speed[1:] * dt, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(angle, np.float32(readback["Basic.FrontLeftWheel.rotationAngle"]), rtol=1e-6)
