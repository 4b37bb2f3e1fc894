"""simcore.replay.vehicles_from_recording on real PhysX recordings (tests/data/dev_drive.h5,
tests/data/vehicles_short.ovd).

The recordings were made by PhysX itself (``/work/shared/fixtures/ovd/README.md``, copied into
tests/data/README.md's scene description): four Vehicle2 vehicles (/World/Basic direct drive,
/World/Standard engine + autobox, /World/Tank tank differential, /World/Raw per-wheel torques),
Y-up, +Z forward, gravity 10, ground plane y = 0 with tire friction 0.75, dt 1/60. What is
checked: params rebuilt from the recording validate and equal what PhysX recorded (paddings
undone); the per-step commands follow the documented drive profile; states and the chassis
actor round-trip against the values ovphysx's own API read back (``*_readback.csv``).
"""

from __future__ import annotations

import csv
import json
from dataclasses import fields, is_dataclass
from pathlib import Path

import numpy as np
import pytest

from pvdkit.recording import Recording
from pvdkit.streams import OvdFileStream
from pvdkit.synthetic import write_every_command
from simcore.drivetrain.engine_drive.params import (
    ClutchAccuracyMode,
    MultiWheelDriveDifferentialParams,
    TankDriveDifferentialParams,
)
from simcore.frame import Y_UP_Z_FORWARD
from simcore.replay import RecordedRun, RecordingError, vehicles_from_recording
from simcore.replay.recorded_source import PX_MAX_F32, _as_bool
from simcore.rigid_body.constraints import SuspensionLimitDirection
from simcore.vehicle import VehicleStates

DATA = Path(__file__).resolve().parents[1] / "data"
DEV_DRIVE = DATA / "dev_drive.h5"
DEV_READBACK = DATA / "dev_drive_readback.csv"
SHORT = DATA / "vehicles_short.ovd"
SHORT_READBACK = DATA / "vehicles_short_readback.csv"
ENGINE_JSON = Path(__file__).resolve().parents[2] / "simcore" / "data" / "EngineDrive.json"

NAMES = {"/World/Basic": "direct", "/World/Standard": "engine", "/World/Tank": "tank", "/World/Raw": "raw"}
WHEELS = ("FrontLeftWheel", "FrontRightWheel", "RearLeftWheel", "RearRightWheel")
F32 = 2e-7  # relative float32 precision


@pytest.fixture(scope="module")
def run() -> RecordedRun:
    return vehicles_from_recording(DEV_DRIVE)


def _readback(path: Path) -> dict[str, np.ndarray]:
    """The readback CSV as column name -> float64 array (one row per step)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


@pytest.fixture(scope="module")
def readback() -> dict[str, np.ndarray]:
    return _readback(DEV_READBACK)


def _profile(n: int = 480) -> dict[str, np.ndarray]:
    """The README's drive profile of dev_drive, per step."""
    i = np.arange(n)
    return {
        "accel": np.select([i < 90, i < 180, i < 240, i < 330, i < 390],
                           [0.7 * i / 90, 0.8, 0.0, 0.0, 1.0], 0.2),
        "brake0": np.where((i >= 240) & (i < 330), 0.6, 0.0),
        "brake1": np.where(i >= 390, 1.0, 0.0),
        "steer": np.select([i < 90, i < 180, i < 390], [0.0, -0.4, 0.0], 0.3),
        "thrust0": np.where((i >= 90) & (i < 180), 0.6, 1.0),
    }


# --------------------------------------------------------------------------------------------
# Vehicles, scene, params
# --------------------------------------------------------------------------------------------


def test_finds_every_vehicle_with_its_kind_and_valid_params(run: RecordedRun) -> None:
    assert {v.name: v.kind for v in run.vehicles} == NAMES
    for v in run.vehicles:
        v.params.validate()
        assert v.params.frame == Y_UP_Z_FORWARD
        assert v.params.axle_description.axles == ((0, 1), (2, 3))
        assert v.params.drivetrain == ("engine" if v.kind in ("engine", "tank") else "direct")
    assert run.vehicle("Tank") is run.vehicle("/World/Tank")


def test_scene_and_physical_values(run: RecordedRun) -> None:
    scene = run.scene
    assert scene.frame == Y_UP_Z_FORWARD
    np.testing.assert_array_equal(scene.gravity, [0.0, -10.0, 0.0])
    np.testing.assert_allclose(scene.road.normal, [0.0, 1.0, 0.0], atol=1e-6)
    assert abs(scene.road.d) < 1e-6
    assert scene.road.friction == pytest.approx(0.75)
    assert scene.dt == pytest.approx(1.0 / 60.0, rel=F32)
    assert scene.nb_steps == 480
    assert scene.solver_type == "eTGS"
    for v in run.vehicles:
        assert v.params.rigid_body.mass == 1800.0
        assert v.actor.name == v.name
        assert v.actor.mass == 1800.0
        np.testing.assert_allclose(v.actor.inertia, v.params.rigid_body.moi)
        np.testing.assert_allclose(v.actor.cmass_local_pos, [0.0, -0.25, 0.0])
        np.testing.assert_allclose(v.actor.cmass_local_quat, [0.0, 0.0, 0.0, 1.0])
        assert v.actor.angular_damping == pytest.approx(0.05, rel=F32)
        assert v.actor.linear_damping == 0.0
        assert v.actor.disable_gravity and v.actor.gyroscopic
        assert v.actor.wake_counter_reset == pytest.approx(0.4, rel=F32)
        assert (v.actor.position_iterations, v.actor.velocity_iterations) == (16, 1)
        assert v.sticky_damping == (200.0, 20.0)
        assert v.suspension_limit.restitution == 0.0
        assert v.suspension_limit.direction == SuspensionLimitDirection.ROAD_GEOMETRY_NORMAL
        assert v.params.suspension_limit_constraint == v.suspension_limit
        np.testing.assert_allclose(v.params.suspension.suspension_travel_dir,
                                   np.tile([0.0, -1.0, 0.0], (4, 1)))


def test_direct_drive_params(run: RecordedRun) -> None:
    p = run.vehicle("Basic").params
    assert p.direct_drive_throttle_response is not None
    assert p.direct_drive_throttle_response.max_response == 500.0
    np.testing.assert_array_equal(p.direct_drive_throttle_response.wheel_response_multipliers,
                                  [0.5, 0.5, 0, 0])
    brake, handbrake = p.brake_command_response
    assert (brake.max_response, handbrake.max_response) == (3600.0, 3000.0)
    np.testing.assert_array_equal(brake.wheel_response_multipliers, [1, 1, 1, 1])  # padding (float max) cut
    np.testing.assert_array_equal(handbrake.wheel_response_multipliers, [0, 0, 1, 1])
    assert p.steer_command_response.max_response == pytest.approx(0.554264, rel=F32)
    np.testing.assert_array_equal(p.steer_command_response.wheel_response_multipliers, [1, 1, 0, 0])
    # Compliance tables: the rows with x = -1 are PhysX's unused points.
    assert p.suspension_compliance.susp_force_app_point.nb_points.tolist() == [1, 1, 1, 1]
    assert p.suspension_compliance.wheel_toe_angle.nb_points.tolist() == [0, 0, 0, 0]


def test_engine_params_unpadded_and_equal_to_the_recording(run: RecordedRun) -> None:
    ref = json.loads(ENGINE_JSON.read_text())
    rec = Recording.open(DEV_DRIVE)
    engine = rec.objects_of_class("EngineParams")[0]
    recorded_curve = np.asarray(engine.value_at("torqueCurve", 0), np.float64)
    for name in ("Standard", "Tank"):
        p = run.vehicle(name).params
        # The scene's engine: the recorded curve (8 pairs, unused ones at float max) unpadded.
        np.testing.assert_allclose(p.engine.torque_curve, [[0.0, 0.8], [0.33, 1.0], [1.0, 0.8]], rtol=F32)
        np.testing.assert_array_equal(p.engine.torque_curve.reshape(-1), recorded_curve[:6])
        assert np.all(recorded_curve[6:] == np.float32(PX_MAX_F32))
        assert p.engine.peak_torque == 1000.0
        # What this scene shares with PhysX's reference EngineDrive.json.
        e = ref["EngineParams"]
        assert p.engine.moi == e["MOI"]
        assert (p.engine.idle_omega, p.engine.max_omega) == (e["IdleOmega"], e["MaxOmega"])
        assert p.engine.damping_rate_full_throttle == pytest.approx(e["DampingRateFullThrottle"], rel=F32)
        assert p.engine.damping_rate_zero_throttle_clutch_engaged == e["DampingRateZeroThrottleClutchEngaged"]
        assert p.engine.damping_rate_zero_throttle_clutch_disengaged == pytest.approx(
            e["DampingRateZeroThrottleClutchDisengaged"], rel=F32)
        g = ref["GearboxParams"]
        np.testing.assert_allclose(p.gearbox.ratios, g["Ratios"], rtol=F32)  # 7 of the 32 recorded
        assert p.gearbox.neutral_gear == g["NeutralGear"]
        assert (p.gearbox.final_ratio, p.gearbox.switch_time) == (g["FinalRatio"], g["SwitchTime"])
        assert p.autobox.latency == ref["AutoboxParams"]["Latency"]
        np.testing.assert_allclose(p.autobox.up_ratios, [0, 0, 0.65, 0.65, 0.65, 0.65, 0], rtol=F32)
        np.testing.assert_allclose(p.autobox.down_ratios, [0, 0, 0, 0.5, 0.5, 0.5, 0.5], rtol=F32)
        assert p.clutch_command_response.max_response == ref["ClutchCommandResponseParams"]["MaxResponse"]
        assert p.clutch.accuracy_mode == ClutchAccuracyMode.BEST_POSSIBLE
    standard = run.vehicle("Standard").params.differential
    assert type(standard) is MultiWheelDriveDifferentialParams
    np.testing.assert_array_equal(standard.torque_ratios, [0.5, 0.5, 0.0, 0.0])
    tank = run.vehicle("Tank").params.differential
    assert isinstance(tank, TankDriveDifferentialParams)
    # trackToWheelIds [0, 2] are offsets into wheelIdsInTrackOrder [0, 2, 1, 3].
    assert tank.tracks == ((0, 2), (1, 3))
    assert tank.tracks == tuple(tuple(t) for t in ref["TankDifferentialParams"]["TankTracks"])
    assert tank.thrust_id_per_track == (0, 1)
    np.testing.assert_array_equal(tank.torque_ratios, ref["TankDifferentialParams"]["TorqueRatios"])


# --------------------------------------------------------------------------------------------
# Per-step commands and responses
# --------------------------------------------------------------------------------------------


def test_commands_follow_the_drive_profile(run: RecordedRun) -> None:
    prof = _profile()
    for v in run.vehicles:
        if v.kind == "raw":
            assert v.commands == {}
            continue
        c = v.commands["commands"]
        assert c["throttle"].shape == (480,)
        np.testing.assert_allclose(c["throttle"], prof["accel"], atol=F32)
        np.testing.assert_allclose(c["brakes"], np.stack([prof["brake0"], prof["brake1"]], 1), atol=F32)
        np.testing.assert_allclose(c["steer"], prof["steer"], atol=F32)
        np.testing.assert_array_equal(c["nb_brakes"], 2)
        assert not v.responses
    gear = run.vehicle("Basic").commands["direct_drive_transmission"]["gear"]
    np.testing.assert_array_equal(gear, 2)  # DirectDriveGear.FORWARD
    standard = run.vehicle("Standard").commands["engine_drive_transmission"]
    np.testing.assert_array_equal(standard["target_gear"], 255)  # automatic
    np.testing.assert_array_equal(standard["clutch"], 0.0)
    tank = run.vehicle("Tank").commands["tank_drive_transmission"]
    np.testing.assert_array_equal(tank["target_gear"], 255)
    np.testing.assert_allclose(tank["thrusts"], np.stack([prof["thrust0"], np.ones(480)], 1), atol=F32)


def test_raw_vehicle_responses(run: RecordedRun) -> None:
    raw = run.vehicle("Raw")
    prof = _profile()
    r = raw.responses
    assert {k: a.shape for k, a in r.items()} == {"brake": (480, 4), "drive": (480, 4), "steer": (480, 4)}
    front = np.array([1.0, 1.0])
    np.testing.assert_allclose(r["drive"][:, :2], 250.0 * np.outer(prof["accel"], front), rtol=F32, atol=1e-5)
    np.testing.assert_array_equal(r["drive"][:, 2:], 0.0)
    brake = 3600.0 * prof["brake0"][:, None] + 3000.0 * prof["brake1"][:, None] * np.array([0, 0, 1, 1])
    np.testing.assert_allclose(r["brake"], brake, rtol=F32)
    steer = 0.554264 * np.outer(prof["steer"], front)
    np.testing.assert_allclose(r["steer"][:, :2], steer, rtol=F32, atol=1e-7)
    np.testing.assert_array_equal(r["steer"][:, 2:], 0.0)
    # The synthetic command-response params validate and can produce every recorded response.
    p = raw.params
    p.validate()
    assert p.direct_drive_throttle_response is not None
    assert p.direct_drive_throttle_response.max_response >= r["drive"].max()
    assert p.brake_command_response[0].max_response >= r["brake"].max()
    assert p.steer_command_response.max_response >= np.abs(r["steer"]).max()


# --------------------------------------------------------------------------------------------
# States and actor against PhysX's own readback
# --------------------------------------------------------------------------------------------


def test_states_round_trip_the_readback(run: RecordedRun, readback: dict[str, np.ndarray]) -> None:
    for v in run.vehicles:
        s = v.name.rsplit("/", 1)[-1]
        spin = v.states["wheel_rigid_body_1d"]
        for w, wheel in enumerate(WHEELS):
            # ovphysx's rotationSpeed is Vehicle2's correctedRotationSpeed.
            np.testing.assert_allclose(spin["corrected_rotation_speed"][:, w],
                                       readback[f"{s}.{wheel}.rotationSpeed"], rtol=F32, atol=1e-6)
            np.testing.assert_allclose(spin["rotation_angle"][:, w], readback[f"{s}.{wheel}.rotationAngle"],
                                       rtol=F32, atol=1e-6)
            np.testing.assert_allclose(v.states["suspension"]["jounce"][:, w],
                                       readback[f"{s}.{wheel}.suspensionJounce"], atol=1e-6)
            np.testing.assert_allclose(v.states["steer_command_response"]["response"][:, w],
                                       readback[f"{s}.{wheel}.wheelSteerAngle"], atol=1e-6)
        if v.kind in ("engine", "tank"):
            gear = v.states["gearbox"]
            # simcore's gear numbers index the ratio table (0 reverse, 1 neutral); ovphysx's are one less.
            np.testing.assert_array_equal(gear["current_gear"] - 1, readback[f"{s}.currentGear"])
            np.testing.assert_array_equal(gear["target_gear"] - 1, readback[f"{s}.targetGear"])
            np.testing.assert_allclose(v.states["engine"]["rotation_speed"],
                                       readback[f"{s}.engineRotationSpeed"], rtol=F32)
        for step in (0, 1, 100, 250, 479):
            pos, quat, linvel, angvel = v.actor_at(step)
            np.testing.assert_allclose(pos, [readback[f"{s}.pos_{c}"][step] for c in "xyz"], atol=1e-6)
            np.testing.assert_allclose(quat, [readback[f"{s}.quat_{c}"][step] for c in "xyzw"], atol=1e-6)
            np.testing.assert_allclose(linvel, [readback[f"{s}.linvel_{c}"][step] for c in "xyz"], atol=1e-6)
            assert angvel.shape == (3,)
    # The Standard car shifts up through gears 1 and 2 (ratio-table indices 2, 3) on this drive.
    assert set(np.unique(run.vehicle("Standard").states["gearbox"]["current_gear"]).tolist()) >= {2, 3}


def test_states_at_reads_frame_2i_and_actor_at_frame_2i_plus_1(run: RecordedRun) -> None:
    rec = Recording.open(DEV_DRIVE)
    tank = run.vehicle("Tank")
    vehicle = next(o for o in rec.objects_of_class("Vehicle") if o.handle == tank.handle)
    rb = rec.resolve(vehicle.value_at("rigidBodyState", 0), 0)
    actor = rec.resolve(rec.resolve(vehicle.value_at("physxRigidActor", 0), 0).value_at("rigidActor", 0), 0)
    for step in (3, 200):
        states = tank.states_at(step)
        rigid = states["rigid_body"]
        np.testing.assert_array_equal(rigid["linear_velocity"], rb.value_at("linvel", 2 * step))
        np.testing.assert_array_equal(rigid["pos"], rb.value_at("pos", 2 * step))
        pose = np.asarray(actor.value_at("globalPose", 2 * step + 1), np.float64)
        pos, quat, linvel, _ = tank.actor_at(step)
        np.testing.assert_array_equal(pos, pose[4:])
        np.testing.assert_array_equal(quat, pose[:4])
        np.testing.assert_array_equal(linvel, actor.value_at("linearVelocity", 2 * step + 1))
    # states_at returns copies: editing one leaves the recording's arrays alone.
    s = tank.states_at(5)
    s["engine"]["rotation_speed"][...] = -1.0
    assert tank.states_at(5)["engine"]["rotation_speed"] != -1.0
    with pytest.raises(RecordingError, match="step 480 out of range"):
        tank.states_at(480)


def test_states_use_simcore_names_and_shapes(run: RecordedRun) -> None:
    for v in run.vehicles:
        default = VehicleStates.for_params(v.params)
        recorded = v.states_at(7)
        expected = {"rigid_body", "wheel_actuation", "wheel_rigid_body_1d", "wheel_local_pose",
                    "road_geometry", "suspension", "suspension_compliance", "suspension_force",
                    "tire_direction", "tire_speed", "tire_slip", "tire_sticky", "tire_grip", "tire_camber",
                    "tire_force", "constraints", "brake_command_response", "steer_command_response"}
        assert expected <= set(recorded)
        for name, values in recorded.items():
            state = getattr(default, name)
            assert state is not None, f"{v.name}: {name} is not a state of this vehicle in simcore"
            names = {f.name for f in fields(state)} if is_dataclass(state) else set()
            for field_name, value in values.items():
                assert field_name in names, f"{v.name}: {name}.{field_name} is not a simcore field"
                want = np.shape(getattr(state, field_name))
                assert value.shape == want, f"{v.name}: {name}.{field_name} {value.shape} != {want}"
                if np.asarray(getattr(state, field_name)).dtype == bool:
                    assert value.dtype == bool


# --------------------------------------------------------------------------------------------
# vehicles_short.ovd, names, errors
# --------------------------------------------------------------------------------------------


def test_vehicles_short_ovd() -> None:
    run = vehicles_from_recording(SHORT, names=["Basic", "/World/Standard"])
    assert [v.name for v in run.vehicles] == ["/World/Basic", "/World/Standard"]
    assert run.scene.nb_steps == 12
    readback = _readback(SHORT_READBACK)
    for v in run.vehicles:
        np.testing.assert_allclose(v.commands["commands"]["throttle"], 0.5)
        s = v.name.rsplit("/", 1)[-1]
        for w, wheel in enumerate(WHEELS):
            np.testing.assert_allclose(v.states["wheel_rigid_body_1d"]["corrected_rotation_speed"][:, w],
                                       readback[f"{s}.{wheel}.rotationSpeed"], rtol=F32, atol=1e-6)
        np.testing.assert_allclose(v.actor_pos[:, 1], readback[f"{s}.pos_y"], atol=1e-6)


def test_unknown_names_name_the_known_vehicles(run: RecordedRun) -> None:
    known = r"\(its vehicles: /World/Basic.*/World/Tank"
    with pytest.raises(RecordingError, match=r"dev_drive\.h5: no vehicle '/World/Truck' " + known):
        vehicles_from_recording(DEV_DRIVE, names=["/World/Truck"])
    with pytest.raises(RecordingError, match="no vehicle 'Truck'.*/World/Raw"):
        run.vehicle("Truck")


def test_a_recording_without_vehicles(tmp_path: Path) -> None:
    path = tmp_path / "no_vehicles.ovd"
    write_every_command(OvdFileStream(path))
    # neither vehicles nor a PhysX scene: what it lacks first is PhysX's scene
    with pytest.raises(RecordingError, match=r"no_vehicles\.ovd: not a recording made by PhysX") as info:
        vehicles_from_recording(path)
    assert "\n" not in str(info.value)


def test_a_missing_file() -> None:
    with pytest.raises(RecordingError, match="missing.h5"):
        vehicles_from_recording(DATA / "missing.h5")


def test_as_bool_accepts_every_spelling() -> None:
    for value in (True, np.bool_(True), "True", "true", 1, np.uint8(1)):
        assert _as_bool(value) is True
    for value in (False, np.bool_(False), "False", 0, np.int64(0)):
        assert _as_bool(value) is False
    np.testing.assert_array_equal(_as_bool(np.array(["True", "False"], dtype=object)), [True, False])
    np.testing.assert_array_equal(_as_bool(np.array([1, 0], dtype=np.uint32)), [True, False])
    np.testing.assert_array_equal(_as_bool(np.array([True, False])), [True, False])
    with pytest.raises(ValueError):
        _as_bool("maybe")


def test_a_handle_payload_of_another_size_is_one_line(tmp_path: Path) -> None:
    """A WheelAttachment.suspState written with 9 bytes (payload sizes may differ from the
    registration) read as an array of bytes and ended in 'truth value of an array' (a fuzzed
    PhysX recording); it is now a RecordingError naming the attribute and the payload."""
    from dataclasses import replace

    from pvdkit.ovd import codec

    data = (DATA / "vehicles_short.ovd").read_bytes()
    with Recording.open(DATA / "vehicles_short.ovd") as rec:
        susp = rec.cls("WheelAttachment").attributes["suspState"].handle
    out, patched = [codec.encode_header(codec.decode_header(data))], False
    for _, command in codec.iter_decode(data):
        if not patched and isinstance(command, codec.SetAttribute) and command.attribute == susp:
            command, patched = replace(command, data=command.data + b"\x00"), True
        out.append(command.encode())
    path = tmp_path / "handle9.ovd"
    path.write_bytes(b"".join(out))
    message = r"handle9\.ovd: /World/\w+: WheelAttachment\.suspState: a handle of a recorded object"
    with pytest.raises(RecordingError, match=message + ", got a payload of 9 bytes"):
        vehicles_from_recording(path)
