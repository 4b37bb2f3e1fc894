"""PhysX vehicle JSON loader: the reference car, frames, and located error messages."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Scale
from simcore.io import PhysXJsonError, load_physx_vehicle
from simcore.io.physx_json import DATA_DIR
from simcore.presets import default_vehicle, load_preset


def test_reference_car_is_read_in_its_declared_frame() -> None:
    p = default_vehicle()
    assert p.frame == Y_UP_Z_FORWARD and p.scale.scale == 1.0
    assert p.nb_wheels == 4 and p.axle_description.axles == ((0, 1), (2, 3))
    assert p.rigid_body.mass == pytest.approx(2014.4000244140625)
    np.testing.assert_allclose(p.rigid_body.moi, [3200.0, 3414.0, 750.0])
    np.testing.assert_allclose(p.suspension.suspension_attachment_pos[0], [-0.795263, -0.107952, 1.26922],
                               atol=1e-6)
    np.testing.assert_allclose(p.suspension.suspension_travel_dir, np.tile([0.0, -1.0, 0.0], (4, 1)))
    np.testing.assert_allclose(p.suspension_force.sprung_mass.sum(), p.rigid_body.mass, rtol=1e-6)
    assert p.brake_command_response[0].max_response == 1875.0
    np.testing.assert_array_equal(p.brake_command_response[1].wheel_response_multipliers, [0, 0, 1, 1])
    assert p.steer_command_response.max_response == pytest.approx(0.5235990285873413)
    assert p.ackermann[0].wheel_ids == (0, 1) and p.ackermann[0].strength == 1.0
    t = p.direct_drive_throttle_response
    assert t is not None and t.max_response == 750.0 and len(t.nonlinear_response.tables) == 5
    np.testing.assert_allclose(p.suspension_compliance.tire_force_app_point.y[:, 0], [[0, 0, -0.11205]] * 4,
                               atol=1e-6)
    assert p.tire_force.friction_vs_slip.shape == (4, 3, 2)
    assert p.wheel.radius[0] == pytest.approx(0.3432520031929016)


def test_conversion_to_other_frames_and_scales() -> None:
    src = default_vehicle()
    x_fwd = default_vehicle(DEFAULT_FRAME)
    # Z forward / X lateral / Y up  ->  X forward / Y lateral / Z up: (x, y, z) -> (z, x, y)
    np.testing.assert_allclose(x_fwd.suspension.suspension_attachment_pos,
                               src.suspension.suspension_attachment_pos[:, [2, 0, 1]])
    np.testing.assert_allclose(x_fwd.rigid_body.moi, [750.0, 3200.0, 3414.0])
    np.testing.assert_allclose(x_fwd.suspension.suspension_travel_dir, np.tile([0.0, 0.0, -1.0], (4, 1)))
    sae = default_vehicle(SAE_J670)
    np.testing.assert_allclose(sae.suspension.suspension_travel_dir, np.tile([0.0, 0.0, 1.0], (4, 1)))
    cm = default_vehicle(DEFAULT_FRAME, scale=100.0)
    assert cm.scale == Scale(100.0)
    np.testing.assert_allclose(cm.wheel.radius, x_fwd.wheel.radius * 100)
    np.testing.assert_allclose(cm.wheel.moi, x_fwd.wheel.moi * 1e4)
    np.testing.assert_allclose(cm.rigid_body.moi, x_fwd.rigid_body.moi * 1e4)
    assert cm.brake_command_response[0].max_response == pytest.approx(1875.0 * 1e4)
    assert cm.ackermann[0].wheel_base == pytest.approx(x_fwd.ackermann[0].wheel_base * 100)
    np.testing.assert_allclose(cm.suspension_force.stiffness, x_fwd.suspension_force.stiffness)
    # and back again
    back = cm.to(Y_UP_Z_FORWARD, 1.0)
    np.testing.assert_allclose(back.suspension.suspension_attachment_pos,
                               src.suspension.suspension_attachment_pos, atol=1e-12)


def _write(tmp_path: Path, data: object, name: str = "Base.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.fixture()
def base_json() -> dict:
    return json.loads((DATA_DIR / "Base.json").read_text())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("RigidBodyParams"), r"RigidBodyParams: missing"),
        (lambda d: d["RigidBodyParams"].update(Mass="heavy"),
         r"RigidBodyParams.Mass: expected a finite number"),
        (lambda d: d["RigidBodyParams"].update(MOI=[1.0, 2.0]),
         r"RigidBodyParams.MOI: expected an array of 3"),
        (lambda d: d["WheelParams"][2].pop("Radius"), r"WheelParams\[2\].Radius: missing"),
        (lambda d: d["SuspensionParams"][1].update(WheelId=0),
         r"SuspensionParams\[1\].WheelId: wheel 0 appears"),
        (lambda d: d["SuspensionParams"][3].update(WheelId=7),
         r"SuspensionParams\[3\].WheelId: expected a wheel"),
        (lambda d: d["Frame"].update(VrtAxis=4), r"Frame: .*right-handed"),
        (lambda d: d["Frame"].update(LngAxis=9), r"Frame.LngAxis: expected an axis"),
        (lambda d: d["TireForceParams"][0].update(FrictionVsSlip=[[0, 1]]),
         r"TireForceParams\[0\].FrictionVsSlip"),
        (lambda d: d["SteerCommandResponseParams"].update(WheelResponseMultipliers=[1.0]),
         r"SteerCommandResponseParams.WheelResponseMultipliers: expected between 4"),
        (lambda d: d["WheelParams"][1].update(Radius=-1.0),
         r"WheelParams: WheelParams.radius\[wheel 1\]"),
        (lambda d: d["AckermannParams"].update(Strength=2.0), r"AckermannParams: .*strength"),
    ],
)
def test_errors_name_file_and_json_path(tmp_path: Path, base_json: dict, edit, message: str) -> None:
    edit(base_json)
    path = _write(tmp_path, base_json)
    with pytest.raises(PhysXJsonError, match=message) as info:
        load_physx_vehicle(path)
    assert str(path) in str(info.value)


def test_invalid_json_and_missing_file(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"AxleDescription": [')
    with pytest.raises(PhysXJsonError, match=r"line 1 column .*invalid JSON"):
        load_physx_vehicle(path)
    with pytest.raises(PhysXJsonError, match="cannot read"):
        load_physx_vehicle(tmp_path / "absent.json")


def test_direct_drive_file_errors(tmp_path: Path) -> None:
    dd = json.loads((DATA_DIR / "DirectDrive.json").read_text())
    dd["ThrottleCommandResponseParams"]["NonLinearResponse"][2]["Throttle"] = 0.1
    path = _write(tmp_path, dd, "DirectDrive.json")
    pattern = r"DirectDrive.json: ThrottleCommandResponseParams: .*tables\[2\]"
    with pytest.raises(PhysXJsonError, match=pattern):
        load_physx_vehicle(None, path)


def test_unknown_preset_and_drivetrain() -> None:
    with pytest.raises(ValueError, match="unknown preset"):
        load_preset("bus")
    with pytest.raises(ValueError, match="unknown drivetrain"):
        load_physx_vehicle(drivetrain="steam")
