"""Cross-check against a real PhysX recording (tests/data/vehicles_short.ovd, /World/Basic).

The Basic vehicle is a direct-drive car in a Y-up, Z-forward scene (gravity 10, dt 1/60,
throttle 0.5). Its Vehicle2 params are read from the recording (through pvdkit's reader) into
simcore's params classes, then, frame by frame, simcore's functions are fed the recorded
inputs and must give the recorded outputs:

* command responses (brake, throttle, steer) and the wheel actuation flags;
* the road geometry query against the scene's ground plane (y = 0, friction 0.75);
* the wheel local poses from the recorded jounce, compliance, steer and rotation angle;
* the suspension spring-damper force from the recorded jounce and jounce speed;
* the tire forces from the recorded slips, load, friction and directions.

A whole step is not compared: PhysX integrates the chassis with its own solver (including the
suspension-limit constraint, active at the recording's start) and the substep count is not in
the recording. Tolerances are float32-level.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pvdkit.recording import Recording
from simcore.axle import AxleDescription
from simcore.braking import BrakeCommandResponseParams
from simcore.drivetrain.direct_drive import (
    DirectDriveThrottleCommandResponseParams,
    direct_drive_actuation_state_update,
    direct_drive_command_response_update,
)
from simcore.frame import Y_UP_Z_FORWARD
from simcore.rigid_body import RigidBodyParams
from simcore.road import PlaneRoad, RoadGeometryQueryType, RoadGeometryState
from simcore.road.functions import road_geometry_query_update
from simcore.steering import SteerCommandResponseParams
from simcore.suspension.functions import suspension_force_update
from simcore.suspension.params import (
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.suspension.states import SuspensionComplianceState, SuspensionState
from simcore.tire.functions import compute_tire_force_michigan
from simcore.tire.params import TireForceParams
from simcore.vehicle import VehicleParams
from simcore.wheel.functions import wheel_local_pose_update
from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState

OVD = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"
# PhysX writes two frames per step (docs/ovd-format.md, "Frames and steps in PhysX recordings"):
# frame 2i holds the Vehicle2 state of step i, frame 2i+1 the PhysX actor results of that step.
STEP_FRAMES = [2 * i for i in range(12)]
GRAVITY = np.array([0.0, -10.0, 0.0])


class Basic:
    """The recorded /World/Basic vehicle: params and per-frame states."""

    def __init__(self, rec: Any) -> None:
        self.rec = rec
        # Four vehicles; Basic is the direct-drive one with brake and steer responses.
        self.vehicle = next(
            v for v in rec.objects_of_class("Vehicle")
            if v.state_at(0)["directDrivetrain"] is not None and v.state_at(0)["brakeResponseParamsSet"]
        )

    def obj(self, handle: int, frame: int) -> dict[str, Any]:
        return self.rec.resolve(int(handle), frame).state_at(frame)

    def top(self, frame: int) -> dict[str, Any]:
        return self.vehicle.state_at(frame)

    def wheels(self, frame: int, key: str) -> list[dict[str, Any]]:
        return [self.obj(self.obj(h, frame)[key], frame) for h in self.top(frame)["wheelAttachmentSet"]]

    def drivetrain(self, frame: int, key: str) -> dict[str, Any]:
        return self.obj(self.obj(self.top(frame)["directDrivetrain"], frame)[key], frame)

    def params(self) -> VehicleParams:
        f = STEP_FRAMES[0]
        top = self.top(f)
        rb = self.obj(top["rigidBodyParams"], f)
        calc = self.obj(top["suspStateCalcParams"], f)
        steer = self.obj(top["steerResponseParams"], f)
        throttle = self.drivetrain(f, "throttleResponseParams")
        brakes = [self.obj(h, f) for h in top["brakeResponseParamsSet"]]
        susp = self.wheels(f, "suspParams")
        comp = self.wheels(f, "suspComplianceParams")
        force = self.wheels(f, "suspForceParams")
        tire = self.wheels(f, "tireParams")
        wheel = self.wheels(f, "wheelParams")

        def table(values: np.ndarray, vector: bool) -> list[tuple[float, Any]]:
            step = 4 if vector else 2
            rows = np.asarray(values, dtype=np.float64).reshape(3, step)
            return [(r[0], r[1:] if vector else r[1]) for r in rows if r[0] >= 0.0]  # x = -1: unused

        suspension = SuspensionParams.from_wheels([
            {"suspension_attachment_pos": w["suspAttachmentPos"],
             "suspension_attachment_quat": w["suspAttachmentQuat"],
             "suspension_travel_dir": w["suspDir"], "suspension_travel_dist": w["suspTravelDist"],
             "wheel_attachment_pos": w["wheelAttachmentPos"],
             "wheel_attachment_quat": w["wheelAttachmentQuat"]} for w in susp])
        compliance = SuspensionComplianceParams.from_wheels([
            {"wheel_toe_angle": table(w["toeAngle"], False),
             "wheel_camber_angle": table(w["camberAngle"], False),
             "susp_force_app_point": table(w["suspForceAppPoint"], True),
             "tire_force_app_point": table(w["tireForceAppPoint"], True)} for w in comp])
        susp_force = SuspensionForceParams.from_wheels([
            {"stiffness": w["stiffness"], "damping": w["damping"], "sprung_mass": w["sprungMass"]}
            for w in force])
        tire_force = TireForceParams.from_wheels([
            {"lat_stiff_x": w["latStiffX"], "lat_stiff_y": w["latStiffY"], "long_stiff": w["longStiff"],
             "camber_stiff": w["camberStiff"], "friction_vs_slip": np.reshape(w["frictionVsSlip"], (3, 2)),
             "rest_load": w["restLoad"], "load_filter": np.reshape(w["loadFilter"], (2, 2))} for w in tire])
        wheels = WheelParams.from_wheels([
            {"radius": w["radius"], "half_width": w["halfWidth"], "mass": w["mass"], "moi": w["moi"],
             "damping_rate": w["dampingRate"]} for w in wheel])
        return VehicleParams(
            axle_description=AxleDescription([[0, 1], [2, 3]]),
            rigid_body=RigidBodyParams(rb["mass"], rb["moi"]),
            suspension_state_calculation=SuspensionStateCalculationParams(
                0 if calc["suspJounceCalculationType"] == "raycast" else 1),
            suspension=suspension,
            suspension_compliance=compliance,
            suspension_force=susp_force,
            tire_force=tire_force,
            wheel=wheels,
            brake_command_response=tuple(
                BrakeCommandResponseParams(b["maxResponse"], b["wheelMultipliers0To3"]) for b in brakes),
            steer_command_response=SteerCommandResponseParams(steer["maxResponse"],
                                                              steer["wheelMultipliers0To3"]),
            direct_drive_throttle_response=DirectDriveThrottleCommandResponseParams(
                throttle["maxResponse"], throttle["wheelMultipliers0To3"]),
            frame=Y_UP_Z_FORWARD,
        )


@pytest.fixture(scope="module")
def basic() -> Basic:
    return Basic(Recording.open(OVD))


@pytest.fixture(scope="module")
def params(basic: Basic) -> VehicleParams:
    p = basic.params()
    p.validate()
    return p


def _column(rows: list[dict[str, Any]], key: str) -> np.ndarray:
    return np.array([r[key] for r in rows], dtype=np.float64)


def test_recorded_params_load_into_simcore(params: VehicleParams) -> None:
    assert params.rigid_body.mass == 1800.0
    np.testing.assert_allclose(params.suspension.suspension_travel_dir, np.tile([0.0, -1.0, 0.0], (4, 1)))
    assert params.direct_drive_throttle_response is not None
    multipliers = params.direct_drive_throttle_response.wheel_response_multipliers
    np.testing.assert_allclose(multipliers, [0.5, 0.5, 0.0, 0.0])


def test_command_responses_and_actuation(basic: Basic, params: VehicleParams) -> None:
    for f in STEP_FRAMES:
        cmd = basic.drivetrain(f, "commandState")
        gear_name = basic.drivetrain(f, "transmissionCommandState")["gear"]
        gear = {"reverse": 0, "neutral": 1, "forward": 2}[gear_name]
        rb = basic.obj(basic.top(f)["rigidBodyState"], f)
        speed = float(np.asarray(rb["linvel"]) @ Y_UP_Z_FORWARD.lng)
        assert params.direct_drive_throttle_response is not None
        brake, drive, steer = direct_drive_command_response_update(
            cmd["brakes"], 2, cmd["throttle"], cmd["steer"], gear, speed, params.brake_command_response,
            params.direct_drive_throttle_response, params.steer_command_response, params.ackermann)
        np.testing.assert_allclose(drive, basic.drivetrain(f, "throttleResponseState")["responseState0To3"])
        np.testing.assert_allclose(brake, basic.obj(basic.top(f)["brakeResponseState"], f)["wheelStates0To3"])
        np.testing.assert_allclose(steer, basic.obj(basic.top(f)["steerResponseState"], f)["wheelStates0To3"])
        act = direct_drive_actuation_state_update(brake, drive, WheelActuationState.default(4))
        rec_act = basic.wheels(f, "wheelActuationState")
        drive_flags = [a["isDriveApplied"] for a in rec_act]  # PhysX's WheelStateBool → bool
        brake_flags = [a["isBrakeApplied"] for a in rec_act]
        assert all(type(x) is bool for x in drive_flags + brake_flags)
        np.testing.assert_array_equal(act.is_drive_applied, drive_flags)
        np.testing.assert_array_equal(act.is_brake_applied, brake_flags)


def test_road_geometry_query_finds_the_recorded_plane(basic: Basic, params: VehicleParams) -> None:
    ground = PlaneRoad(np.array([0.0, 1.0, 0.0]), 0.0, friction=0.75)
    out = RoadGeometryState.default(4)
    for f in STEP_FRAMES:
        rb = basic.obj(basic.top(f)["rigidBodyState"], f)
        road_geometry_query_update(ground, RoadGeometryQueryType.RAYCAST, Y_UP_Z_FORWARD, params.wheel,
                                   params.suspension, np.zeros(4), np.asarray(rb["pos"], dtype=np.float64),
                                   np.asarray(rb["quat"], dtype=np.float64), out)
        rec = basic.wheels(f, "roadGeomState")
        np.testing.assert_array_equal(out.hit_state, [r["hitState"] for r in rec])
        np.testing.assert_allclose(out.plane, _column(rec, "plane"), atol=1e-6)
        np.testing.assert_allclose(out.friction, _column(rec, "friction"))


def test_wheel_local_poses(basic: Basic, params: VehicleParams) -> None:
    for f in STEP_FRAMES:
        susp = basic.wheels(f, "suspState")
        comp = basic.wheels(f, "suspComplianceState")
        spin = basic.wheels(f, "wheelRigidBody1dState")
        steer = basic.obj(basic.top(f)["steerResponseState"], f)["wheelStates0To3"]
        pose = wheel_local_pose_update(Y_UP_Z_FORWARD, params.suspension, _column(susp, "jounce"),
                                       _column(comp, "camber"), _column(comp, "toe"),
                                       np.asarray(steer, dtype=np.float64), _column(spin, "rotationAngle"))
        rec = basic.wheels(f, "wheelLocalPosetate")  # PhysX's spelling
        np.testing.assert_allclose(pose.pos, _column(rec, "posInRbodyFrame"), atol=2e-6)
        np.testing.assert_allclose(pose.quat, _column(rec, "quatInRbodyFrame"), atol=2e-6)


def test_suspension_and_tire_forces_from_recorded_inputs(basic: Basic, params: VehicleParams) -> None:
    for f in STEP_FRAMES:
        susp = basic.wheels(f, "suspState")
        comp = basic.wheels(f, "suspComplianceState")
        road = basic.wheels(f, "roadGeomState")
        rb = basic.obj(basic.top(f)["rigidBodyState"], f)
        state = SuspensionState(_column(susp, "jounce"), _column(susp, "jounceSpeed"),
                                _column(susp, "separation"))
        compliance = SuspensionComplianceState(_column(comp, "toe"), _column(comp, "camber"),
                                               _column(comp, "tireForceAppPoint"),
                                               _column(comp, "suspForceAppPoint"))
        quat = np.asarray(rb["quat"], dtype=np.float64)
        force = suspension_force_update(params.suspension, params.suspension_force,
                                        _column(road, "plane")[:, :3], state, compliance, quat,
                                        np.asarray(rb["extForce"], dtype=np.float64),
                                        np.asarray(rb["extTorque"], dtype=np.float64), GRAVITY,
                                        params.rigid_body.mass)
        rec_force = basic.wheels(f, "suspForce")
        np.testing.assert_allclose(force.normal_force, _column(rec_force, "normalForce"), rtol=1e-5,
                                   atol=1e-2)
        np.testing.assert_allclose(force.force, _column(rec_force, "force"), rtol=1e-5, atol=1e-2)

        slip = basic.wheels(f, "tireSlipState")
        grip = basic.wheels(f, "tireGripState")
        camber = basic.wheels(f, "tireCamberState")
        wheel_torque, f_lng, f_lat, _ = compute_tire_force_michigan(
            params.tire_force, _column(grip, "friction"), _column(slip, "lngSlip"), _column(slip, "latSlip"),
            _column(camber, "camberAngle"), params.wheel.radius, _column(grip, "load"))
        rec_tire = basic.wheels(f, "tireForce")
        dirs = basic.wheels(f, "tireDirectionState")
        lng = np.einsum("ij,ij->i", _column(rec_tire, "lngForce"), _column(dirs, "lngDir"))
        lat = np.einsum("ij,ij->i", _column(rec_tire, "latForce"), _column(dirs, "latDir"))
        np.testing.assert_allclose(f_lng, lng, rtol=1e-4, atol=1e-2)
        np.testing.assert_allclose(f_lat, lat, rtol=1e-4, atol=1e-2)
        np.testing.assert_allclose(wheel_torque, _column(rec_tire, "wheelTorque"), rtol=1e-4,
                                   atol=1e-2)
