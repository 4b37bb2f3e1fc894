"""Physical sanity of vehicles: absurd params are refused by ``VehicleParams.validate`` (naming
file, field and wheel), and a simulation that blows up stops with one line naming the step,
the object and the attribute (``simcore.limits``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from simcore.frame import Scale
from simcore.io.physx_json import DATA_DIR, PhysXJsonError, load_physx_vehicle
from simcore.limits import (
    MAX_BODY_SPEED,
    MAX_WHEEL_SPEED,
    ParamBoundsError,
    SimulationDiverged,
    check_param_bounds,
    check_vehicle_states,
)
from simcore.presets import PRESETS, default_vehicle, load_preset
from simcore.vehicle import Vehicle

# ------------------------------------------------------------------------------------ params


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_within_bounds(name):
    check_param_bounds(load_preset(name))


def test_engine_drive_vehicles_are_within_bounds():
    from simcore.drivetrain.engine_drive.vehicles import tank_params, truck_params

    check_param_bounds(tank_params())
    check_param_bounds(truck_params())


def test_bounds_follow_the_length_scale():
    cm = default_vehicle(scale=100.0)  # radii of 34 cm, moments of inertia in kg cm^2
    cm.validate()
    assert float(cm.wheel.radius[0]) > 10.0  # beyond the bound in metres, fine in centimetres
    with pytest.raises(ParamBoundsError, match=r"WheelParams\.radius of wheel 1 = 2000 is physically absurd"):
        replace(cm, wheel=replace(cm.wheel, radius=np.array([34.0, 2000.0, 34.0, 34.0]))).validate()


def _with(params, part: str, **values):
    return replace(params, **{part: replace(getattr(params, part), **values)})


@pytest.mark.parametrize("part, field, values, message", [
    ("wheel", "radius", [0.34, 0.34, 1e9, 0.34],
     r"WheelParams\.radius of wheel 2 = 1e\+09 m is physically absurd: simcore accepts magnitudes up to "
     r"10 m"),
    ("rigid_body", "mass", 1e30, r"RigidBodyParams\.mass = 1e\+30 kg is physically absurd"),
    ("rigid_body", "moi", [3200.0, 1e15, 750.0], r"RigidBodyParams\.moi\[1\] = 1e\+15 kg m\^2"),
    ("wheel", "moi", [1.0, 1.0, 1.0, 1e12], r"WheelParams\.moi of wheel 3"),
    ("suspension_force", "stiffness", [1e12, 3e4, 3e4, 3e4], r"SuspensionForceParams\.stiffness of wheel 0"),
    ("tire_force", "long_stiff", [1e20] * 4, r"TireForceParams\.long_stiff of wheel 0 = 1e\+20 N"),
    ("suspension", "suspension_travel_dist", [0.2, 0.2, 0.2, 1e6], r"suspension_travel_dist of wheel 3"),
    # tiny inertias: their inverses overflowed the integration (a ZeroDivisionError in the first step)
    ("rigid_body", "moi", [1e-300] * 3, r"RigidBodyParams\.moi\[0\] = 1e-300 kg m\^2 is physically absurd: "
                                        r"simcore accepts magnitudes from 1e-06 to 1e\+10 kg m\^2"),
    ("wheel", "mass", [1e-320, 20.0, 20.0, 20.0], r"WheelParams\.mass of wheel 0 = 9\.99989e-321 kg"),
])
def test_absurd_params_are_refused_naming_field_and_wheel(part, field, values, message):
    params = default_vehicle()
    bad = _with(params, part, **{field: np.asarray(values, dtype=np.float64) if isinstance(values, list)
                                 else values})
    with pytest.raises(ParamBoundsError, match=message) as info:
        bad.validate()
    assert info.value.part == part and isinstance(info.value, ValueError)
    with pytest.raises(ParamBoundsError):
        Vehicle(bad)


def test_engine_torque_is_bounded():
    params = load_preset("sedan_engine")
    with pytest.raises(ParamBoundsError, match=r"EngineParams\.peak_torque = 1e\+12 N m"):
        _with(params, "engine", peak_torque=1e12).validate()


def _vehicle_folder(tmp_path: Path, edit_base=None, edit_drive=None) -> Path:
    folder = tmp_path / "car"
    folder.mkdir()
    base = json.loads((DATA_DIR / "Base.json").read_text())
    drive = json.loads((DATA_DIR / "DirectDrive.json").read_text())
    if edit_base:
        edit_base(base)
    if edit_drive:
        edit_drive(drive)
    (folder / "Base.json").write_text(json.dumps(base))
    (folder / "DirectDrive.json").write_text(json.dumps(drive))
    return folder


def test_a_file_with_absurd_values_is_refused_naming_file_and_field(tmp_path):
    def radius(d):
        d["WheelParams"][2]["Radius"] = 1e9

    folder = _vehicle_folder(tmp_path, radius)
    with pytest.raises(PhysXJsonError, match=rf"^{folder}/Base\.json: WheelParams: WheelParams\.radius of "
                                             r"wheel 2 = 1e\+09 m is physically absurd"):
        load_physx_vehicle(folder / "Base.json", folder / "DirectDrive.json")


def test_a_drivetrain_file_with_absurd_torque_is_named(tmp_path):
    def torque(d):
        d["ThrottleCommandResponseParams"]["MaxResponse"] = 1e20

    folder = _vehicle_folder(tmp_path, edit_drive=torque)
    with pytest.raises(PhysXJsonError, match=rf"^{folder}/DirectDrive\.json: ThrottleCommandResponseParams: "
                                             r".*max_response = 1e\+20 N m"):
        load_physx_vehicle(folder / "Base.json", folder / "DirectDrive.json")


def test_mass_1e30_through_the_cli_is_one_line(tmp_path, capsys):
    from pvdkit.cli import main

    def mass(d):
        d["RigidBodyParams"]["Mass"] = 1e30

    folder = _vehicle_folder(tmp_path, mass)
    assert main(["record", str(folder), "--quiet", "-o", str(tmp_path / "x.h5")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Base.json: RigidBodyParams: RigidBodyParams.mass = 1e+30 kg" in err
    assert not (tmp_path / "x.h5").exists()


# ---------------------------------------------------------------------------- JSON files


def test_deeply_nested_json_is_one_line_naming_the_file(tmp_path):
    folder = tmp_path / "deep"
    folder.mkdir()
    (folder / "Base.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(PhysXJsonError, match=rf"^{folder}/Base\.json: JSON nested too deeply"):
        load_physx_vehicle(folder / "Base.json")


def test_non_utf8_json_names_the_file(tmp_path):
    path = tmp_path / "Base.json"
    path.write_bytes(b'{\n  "name": "\xff\xfe"\n}')
    with pytest.raises(PhysXJsonError, match=rf"^{path}: line 2: not UTF-8 text \(byte 0xff at offset 13\)"):
        load_physx_vehicle(path)


def test_engine_drive_file_errors_name_the_file(tmp_path):
    from simcore.drivetrain.engine_drive.loader import EngineDriveFormatError, read_engine_drivetrain_params

    bad = tmp_path / "EngineDrive.json"
    bad.write_bytes(b"\xff")
    with pytest.raises(EngineDriveFormatError, match=rf"^{bad}: line 1: not UTF-8 text"):
        read_engine_drivetrain_params(bad)
    bad.write_text("{" * 50_000)
    with pytest.raises(EngineDriveFormatError, match=rf"^{bad}: "):
        read_engine_drivetrain_params(bad)


def test_numbers_too_large_for_a_float_are_one_line_in_every_vehicle_file(tmp_path):
    """JSON and SJSON integers are unbounded; a 400-digit one made the finiteness checks raise
    OverflowError, and infinity or 1e308 in an integer field (a gear, an iteration count)
    overflowed int() or the kernels' C ints (fuzzing finds)."""
    from simcore.drivetrain.engine_drive.loader import EngineDriveFormatError, read_engine_drivetrain_params
    from simcore.stingray import load_physics
    from simcore.stingray.sjson import SjsonError

    def huge_mass(d):
        d["RigidBodyParams"]["Mass"] = 10**400

    folder = _vehicle_folder(tmp_path, huge_mass)
    with pytest.raises(PhysXJsonError, match=r"RigidBodyParams\.Mass: expected a finite number, got 1000"):
        load_physx_vehicle(folder / "Base.json", folder / "DirectDrive.json")
    engine = json.loads((DATA_DIR / "EngineDrive.json").read_text())
    for field, value in (("NeutralGear", float("inf")), ("NeutralGear", 10**400)):
        engine["GearboxParams"][field] = value
        bad = tmp_path / "EngineDrive.json"
        bad.write_text(json.dumps(engine))
        expected = r"GearboxParams\.NeutralGear: expected an integer of magnitude at most 2147483647"
        with pytest.raises(EngineDriveFormatError, match=expected):
            read_engine_drivetrain_params(bad)
    physics = (DATA_DIR / "4wheel.physics").read_text()
    assert "mass = " in physics
    hostile = tmp_path / "huge.physics"
    hostile.write_text(physics.replace("mass = ", "mass = 1" + "0" * 400 + " // ", 1))
    with pytest.raises(SjsonError, match=r"huge\.physics:\d+:\d+: .*expected a number, got 1000"):
        load_physics(hostile)


# ---------------------------------------------------------------------------- divergence


def _rocket_params():
    """A tiny, light car with a huge drive torque: its wheels spin up beyond any physical speed."""
    p = default_vehicle()
    p = _with(p, "rigid_body", mass=1.0)
    p = _with(p, "wheel", moi=np.full(4, 1e-3), mass=np.full(4, 0.1))
    return _with(p, "direct_drive_throttle_response", max_response=1e6)


def test_exploding_wheels_stop_with_step_object_and_attribute():
    from simcore.scenarios import get_scenario

    car = Vehicle(_rocket_params())
    with pytest.raises(SimulationDiverged) as info:
        get_scenario("accelerate").run(car, 1 / 60)
    exc = info.value
    assert exc.step == car.steps >= 1 and abs(exc.value) > MAX_WHEEL_SPEED and exc.limit == MAX_WHEEL_SPEED
    assert str(exc).startswith(f"simulation diverged at step {exc.step}: wheel ")
    assert " rotation_speed = " in str(exc) and str(exc).endswith("rad/s (limit 1e+05)")
    assert "\n" not in str(exc) and isinstance(exc, ValueError)


def test_non_finite_states_stop_the_run():
    car = Vehicle(default_vehicle())
    car.place_on_road()
    car.step(1 / 60)
    car.states.rigid_body.linear_velocity[:] = np.nan
    with pytest.raises(SimulationDiverged, match=r"^simulation diverged at step 7: rigid body "
                                                 r"\|linear_velocity\| = nan m/s \(must be finite\)$"):
        check_vehicle_states(car.states, 1.0, 7)
    with pytest.raises(SimulationDiverged, match=r"^simulation diverged at step 2: .* = nan .*finite\)$"):
        car.step(1 / 60)  # the NaN has spread to the wheels by the end of the step


def test_body_speed_bound_and_opt_out():
    car = Vehicle(default_vehicle())
    car.place_on_road(speed=2 * MAX_BODY_SPEED)
    with pytest.raises(SimulationDiverged, match=r"at step 1: .*(rotation_speed|linear_velocity)"):
        car.step(1 / 60)
    car = Vehicle(default_vehicle())
    car.check_divergence = False
    car.place_on_road(speed=2 * MAX_BODY_SPEED)
    car.step(1 / 60)  # no check: the caller asked for raw numbers


def test_recording_keeps_the_frames_up_to_the_divergence(tmp_path):
    from pvdkit.recording import Recording
    from simcore.cli.record import record

    out = tmp_path / "rocket.ovd"
    with pytest.raises(SimulationDiverged) as info:
        record(_rocket_params(), "accelerate", out=out)
    with Recording.open(out) as rec:
        # every step up to and including the diverged one, two frames each (PhysX's layout)
        assert len(rec.frames) == 2 * info.value.step


def test_a_cm_scale_vehicle_does_not_trip_the_speed_bounds():
    car = Vehicle(default_vehicle(scale=Scale(100.0)))
    car.place_on_road(speed=30.0 * 100.0)  # 30 m/s in cm/s
    for _ in range(10):
        car.step(1 / 60)
    assert car.steps == 10


def test_the_length_scale_is_bounded():
    """The bounds scale with the length unit, so the unit itself is bounded (1e308 overflowed
    scale ** 2 with a traceback)."""
    params = default_vehicle()
    for scale in (1e308, 1e-9):
        bad = replace(params, scale=replace(params.scale, scale=scale))
        with pytest.raises(ParamBoundsError, match=r"Scale\.scale = .* is outside 0\.001 … 1e\+06"):
            bad.validate()


def test_every_float_param_must_fit_the_float32_it_is_recorded_in():
    """PVD records params as float32 (PhysX's PxReal): a param without a physical bound of its
    own (a brake multiplier, a friction table) at 1e308 was recorded as inf with a numpy warning
    only (fuzzing find). Any float param must be finite and fit float32."""
    params = default_vehicle()
    brake = params.brake_command_response[0]
    huge = replace(brake, wheel_response_multipliers=np.full_like(brake.wheel_response_multipliers, 1e308))
    bad = replace(params, brake_command_response=(huge, *params.brake_command_response[1:]))
    with pytest.raises(ParamBoundsError, match=r"wheel_response_multipliers\[0\] = 1e\+308 does not fit the "
                                               r"float32 PVD records params in"):
        bad.validate()
    tiny = replace(brake, wheel_response_multipliers=np.full_like(brake.wheel_response_multipliers, 1e-50))
    with pytest.raises(ParamBoundsError, match=r"= 1e-50 does not fit .* \(magnitudes from 1\.4e-45"):
        replace(params, brake_command_response=(tiny, *params.brake_command_response[1:])).validate()
