"""Engine-drive params: the EngineDrive.json reader, validation messages, frames and scale."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from simcore.drivetrain.engine_drive.functions import engine_damping_rate, engine_drive_torque
from simcore.drivetrain.engine_drive.loader import (
    EngineDriveFormatError,
    engine_drivetrain_params_from_dict,
    read_engine_drivetrain_params,
)
from simcore.drivetrain.engine_drive.params import (
    AutoboxParams,
    ClutchAccuracyMode,
    ClutchParams,
    EngineParams,
    FourWheelDriveDifferentialParams,
    GearboxParams,
    MultiWheelDriveDifferentialParams,
    TankDriveDifferentialParams,
    TankDriveModel,
)
from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Scale

DATA = Path(__file__).resolve().parents[2] / "simcore" / "data" / "EngineDrive.json"
RAW = json.loads(DATA.read_text())


def test_reference_file_values() -> None:
    p = read_engine_drivetrain_params(nb_wheels=4)
    e = p.engine
    assert (e.peak_torque, e.moi, e.max_omega, e.idle_omega) == (500.0, 1.0, 600.0, 0.0)
    np.testing.assert_array_equal(p.engine.torque_curve, [[0.0, 1.0], [0.33, 1.0], [1.0, 1.0]])
    assert (p.engine.damping_rate_full_throttle, p.engine.damping_rate_zero_throttle_clutch_engaged,
            p.engine.damping_rate_zero_throttle_clutch_disengaged) == (0.15, 2.0, 0.35)
    np.testing.assert_array_equal(p.gearbox.ratios, [-4.0, 0.0, 4.0, 2.0, 1.5, 1.1, 1.0])
    assert (p.gearbox.neutral_gear, p.gearbox.final_ratio, p.gearbox.switch_time) == (1, 4.0, 0.5)
    ab = p.autobox
    assert (ab.latency, ab.up_ratio(1), ab.up_ratio(3), ab.down_ratio(2)) == (2.0, 0.15, 0.65, 0.5)
    assert p.clutch_command_response.max_response == 10.0
    assert p.clutch.accuracy_mode == ClutchAccuracyMode.BEST_POSSIBLE and p.clutch.estimate_iterations == 5
    four = p.four_wheel_differential
    assert (four.front_wheel_ids, four.rear_wheel_ids, four.center_bias, four.center_target, four.rate) == (
        (0, 1), (2, 3), 1.3, 1.29, 10.0)
    assert p.tank_differential.tracks == ((0, 2), (1, 3))
    assert p.tank_differential.thrust_id_per_track == (0, 1)
    assert p.tank_differential.drive_model == TankDriveModel.SPECIAL
    assert p.differential("tank") is p.tank_differential
    # PVD-facing derived views of the tank tracks.
    t = p.tank_differential
    assert (t.nb_tracks, t.nb_wheels_per_track, t.track_to_wheel_ids, t.wheel_ids_in_track_order) == (
        2, (2, 2), (0, 2), (0, 2, 1, 3))


def test_reader_trims_physx_twenty_entry_arrays() -> None:
    data = copy.deepcopy(RAW)
    data["MultiWheelDifferentialParams"]["TorqueRatios"] += [0.0] * 16
    data["MultiWheelDifferentialParams"]["AveWheelSpeedRatios"] += [0.0] * 16
    p = engine_drivetrain_params_from_dict(data, "x.json", nb_wheels=4)
    assert p.multi_wheel_differential.nb_wheels == 4
    data["MultiWheelDifferentialParams"]["TorqueRatios"][7] = 0.1
    with pytest.raises(EngineDriveFormatError,
                       match=r"x\.json: MultiWheelDifferentialParams\.TorqueRatios: expected zeros after"):
        engine_drivetrain_params_from_dict(data, "x.json", nb_wheels=4)


def _mutated(path: tuple[str | int, ...], value: object) -> dict:
    data = copy.deepcopy(RAW)
    node = data
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


@pytest.mark.parametrize(("path", "value", "message"), [
    (("EngineParams",), KeyError, r"car\.json: EngineParams: missing"),
    (("EngineParams", "MOI"), "heavy",
     r"car\.json: EngineParams\.MOI: expected a finite number, got 'heavy'"),
    (("EngineParams", "TorqueCurve", 1), [0.3], r"EngineParams\.TorqueCurve\[1\]: expected an \[x, y\] pair"),
    (("GearboxParams", "NeutralGear"), 1.5, r"GearboxParams\.NeutralGear: expected an integer"),
    (("GearboxParams", "Ratios", 3), 5.0,
     r"GearboxParams\.ratios: forward gear ratios must decrease; ratios\[3\]=5\.0"),
    (("ClutchParams", "AccuracyMode"), 3, r"ClutchParams\.AccuracyMode: expected 0 \(estimate\)"),
    (("FourWheelDifferentialParams", "FrontWheelIds"), [0], r"FrontWheelIds: expected exactly two wheel ids"),
    (("TankDifferentialParams", "TankTracks"), [[0, 2], [2, 3]], r"wheel 2 is on track 0 and track 1"),
    (("TankDifferentialParams", "TankDriveModel"), "hover",
     r"TankDriveModel: expected 'standard' or 'special'"),
    (("AutoboxParams", "UpRatios", 2), 1.5, r"car\.json: AutoboxParams\.up_ratios\[2\] must be in \[0, 1\]"),
    (("MultiWheelDifferentialParams", "AveWheelSpeedRatios"), [0.5, 0.5, 0.5, 0.5],
     r"ave_wheel_speed_ratios must sum to 1"),
])
def test_reader_errors_name_file_path_and_expectation(path: tuple, value: object, message: str) -> None:
    with pytest.raises(EngineDriveFormatError, match=message):
        engine_drivetrain_params_from_dict(_mutated(path, value), "car.json", nb_wheels=4)


def test_reader_reports_json_syntax_position(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text('{\n  "EngineParams": {,\n}')
    with pytest.raises(EngineDriveFormatError, match=r"bad\.json: line 2 column 20: invalid JSON"):
        read_engine_drivetrain_params(f)


def test_reader_accepts_tank_extensions() -> None:
    data = _mutated(("TankDifferentialParams", "TankDriveModel"), "Standard")
    data["TankDifferentialParams"]["ThrustIdPerTrack"] = [1, 0]
    p = engine_drivetrain_params_from_dict(data, nb_wheels=4)
    assert p.tank_differential.drive_model == TankDriveModel.STANDARD
    assert p.tank_differential.thrust_id_per_track == (1, 0)


def _engine(**kw: object) -> EngineParams:
    base = dict(torque_curve=[[0.0, 1.0]], moi=1.0, peak_torque=500.0, idle_omega=0.0, max_omega=600.0,
                damping_rate_full_throttle=0.15, damping_rate_zero_throttle_clutch_engaged=2.0,
                damping_rate_zero_throttle_clutch_disengaged=0.35)
    base.update(kw)
    return EngineParams(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(("factory", "message"), [
    (lambda: _engine(torque_curve=[[i / 9, 1.0] for i in range(9)]), r"torque_curve has 9 points; at most 8"),
    (lambda: _engine(torque_curve=[[0.5, 1.0], [0.5, 0.8]]), r"point 1 \(x=0.5\) does not exceed point 0"),
    (lambda: _engine(moi=0.0), r"EngineParams\.moi must be greater than zero"),
    (lambda: _engine(peak_torque=-1.0), r"EngineParams\.peak_torque must be >= 0"),
    (lambda: _engine(idle_omega=700.0), r"idle_omega \(700.0\) must not exceed max_omega"),
    (lambda: GearboxParams([-4.0, 0.0, 4.0], 1, 0.0, 0.5), r"final_ratio must be greater than zero"),
    (lambda: GearboxParams([4.0, 0.0, 4.0], 1, 4.0, 0.5), r"ratios\[0\] is a reverse gear and must be < 0"),
    (lambda: GearboxParams([-4.0, 0.1, 4.0], 1, 4.0, 0.5), r"ratios\[1\] is the neutral gear and must be 0"),
    (lambda: GearboxParams([-4.0, 0.0, 4.0], 3, 4.0, 0.5), r"neutral_gear must be an index in 0..2"),
    (lambda: GearboxParams([-4.0, 0.0] + [4.0 - 0.1 * i for i in range(31)], 1, 4.0, 0.5),
     r"ratios must hold 1..32 gears, got 33"),
    (lambda: AutoboxParams([0.5, 0.5, -0.1], [0.5] * 3, 1.0), r"up_ratios\[2\] must be in \[0, 1\]"),
    (lambda: ClutchParams(ClutchAccuracyMode.ESTIMATE, 0), r"estimate_iterations must be greater than zero"),
    (lambda: MultiWheelDriveDifferentialParams([0.5, 1.5], [0.5, 0.5]),
     r"torque_ratios\[1\] \(wheel 1\) must be in \[-1, 1\]"),
    (lambda: MultiWheelDriveDifferentialParams([0.5, 0.5, 0.5], [0.5, 0.5]),
     r"ave_wheel_speed_ratios has 2 entries but torque_ratios has 3"),
    (lambda: MultiWheelDriveDifferentialParams(np.full(21, 1 / 21), np.full(21, 1 / 21)),
     r"torque_ratios must have 1..20 entries"),
    (lambda: FourWheelDriveDifferentialParams(np.full(4, 0.25), np.full(4, 0.25), center_bias=1.3,
                                              center_target=1.4, rate=1.0),
     r"center_target must lie in \(1, center_bias=1.3\)"),
    (lambda: FourWheelDriveDifferentialParams([0.5, 0.5, 0.0, 0.0], [0.5, 0.5, 0, 0], rear_bias=1.3,
                                              rear_target=1.2, rate=1.0),
     r"rear_bias is enabled but wheel 2 is not connected"),
    (lambda: FourWheelDriveDifferentialParams(np.full(4, 0.25), np.full(4, 0.25), front_bias=0.5),
     r"front_bias must be 0 \(off\), 1 \(locked\) or greater than 1"),
    (lambda: TankDriveDifferentialParams(np.full(4, 0.25), np.full(4, 0.25), tracks=((0, 1), (2, 5))),
     r"tracks\[1\] names wheel 5, which is not a wheel 0..3"),
    (lambda: TankDriveDifferentialParams(np.full(4, 0.25), np.full(4, 0.25), tracks=((0, 1), (2, 3)),
                                         thrust_id_per_track=(0, 2)),
     r"thrust_id_per_track\[1\] must be 0 or 1"),
])
def test_validate_names_field_and_expectation(factory, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory().validate()


def test_tank_drive_model_parse() -> None:
    assert TankDriveModel.parse("special") == TankDriveModel.SPECIAL
    assert TankDriveModel.parse(0) == TankDriveModel.STANDARD
    with pytest.raises(ValueError, match="'standard' or 'special'"):
        TankDriveModel.parse("sport")


def test_locked_differential_is_valid() -> None:
    FourWheelDriveDifferentialParams(np.full(4, 0.25), np.full(4, 0.25), center_bias=1.0, center_target=1.0,
                                     rate=5.0).validate()


@pytest.mark.parametrize("frame", [DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670])
def test_centimetres_scale_torques_and_inertias_by_ten_thousand(frame) -> None:
    p = read_engine_drivetrain_params(nb_wheels=4)
    cm = p.transform_and_scale(Y_UP_Z_FORWARD, frame, Scale(1.0), Scale(100.0))
    assert cm.engine.moi == pytest.approx(1e4 * p.engine.moi)
    assert cm.engine.peak_torque == pytest.approx(1e4 * p.engine.peak_torque)
    assert cm.engine.damping_rate_zero_throttle_clutch_engaged == pytest.approx(2e4)
    assert cm.clutch_command_response.max_response == pytest.approx(1e5)
    assert cm.engine.max_omega == p.engine.max_omega  # angular speeds do not scale
    np.testing.assert_array_equal(cm.gearbox.ratios, p.gearbox.ratios)
    assert cm.tank_differential.tracks == p.tank_differential.tracks
    # Angular accelerations are scale free: torque / moi and damping / moi are unchanged.
    for throttle in (0.0, 0.4, 1.0):
        a_m = (engine_drive_torque(p.engine, 300.0, throttle)
               - engine_damping_rate(p.engine, p.gearbox, 2, 1.0, throttle) * 300.0) / p.engine.moi
        a_cm = (engine_drive_torque(cm.engine, 300.0, throttle)
                - engine_damping_rate(cm.engine, cm.gearbox, 2, 1.0, throttle) * 300.0) / cm.engine.moi
        assert a_cm == pytest.approx(a_m, rel=1e-12)
    back = cm.transform_and_scale(frame, Y_UP_Z_FORWARD, Scale(100.0), Scale(1.0))
    assert back.engine.moi == pytest.approx(p.engine.moi)
