"""``pvdkit record`` and :func:`simcore.cli.record.record`: recordings a user can read back.

The acceptance checks of issue 5 that go through the pvdkit toolchain live here: ``pvdkit
series`` on a simcore recording gives, for every wheel and step, what the Python API reported;
a simcore ``.ovd`` converts to ``.h5`` and back byte for byte; recording straight into ``.h5``
holds the same values as recording into ``.ovd``.
"""

from __future__ import annotations

import csv
import io
import os
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from pvdkit.cli import main, series_rows
from pvdkit.convert import convert
from pvdkit.recording import Recording
from simcore.cli.record import RecordError, load_vehicle_params, record
from simcore.presets import load_preset
from simcore.scenarios import get_scenario
from simcore.vehicle import Vehicle

DT = 1.0 / 60.0
STEPS = 5
DATA = Path(__file__).resolve().parents[2] / "simcore" / "data"


@pytest.fixture(scope="module")
def ovd(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "slalom.ovd"
    # Pure Vehicle2, as the Python API's Vehicle(params) it is compared with.
    summary = record("sedan", "slalom", duration=STEPS * DT, out=path, physx=False)
    assert summary.path == path
    return path


@pytest.fixture(scope="module")
def api_states():
    """What the Python API reports after each step of the same run."""
    car = Vehicle(load_preset("sedan"))
    out = []
    get_scenario("slalom").run(car, DT, STEPS * DT, after_step=lambda i: out.append(car.states.copy()))
    return out


def test_summary_describes_the_file(ovd):
    s = record("sedan", "idle", duration=3 * DT, out=ovd.with_name("idle.ovd"))
    # The default: the PhysX actor layer, recorded in PhysX's layout (two frames per step; the
    # chassis actor, PxPhysics and the PhysX links add 8 objects).
    assert (s.steps, s.frames, s.objects) == (3, 6, 120)
    pure = record("sedan", "idle", duration=3 * DT, out=ovd.with_name("idle_pure.ovd"), physx=False)
    assert (pure.steps, pure.frames, pure.objects) == (3, 3, 112)
    assert s.file_size == s.path.stat().st_size > 10_000
    assert s.simulated_time == pytest.approx(3 * DT)
    assert s.wall_time > 0 and s.realtime_factor == pytest.approx(s.simulated_time / s.wall_time)
    text = s.format()
    for word in ("frames:", "objects:", "file size:", "wall time:", "sim / wall:"):
        assert word in text


def test_series_cli_gives_the_api_values_for_every_wheel(ovd, api_states):
    header, rows = series_rows(str(ovd), "WheelRigidBodyState.correctedRotationSpeed")
    assert header == ["frame", "time [s]", "timestamp", "handle", "name", "path",
                      "correctedRotationSpeed [rad/s]"]
    rec = Recording.open(ovd)
    wheel_of = {o.handle: int(o.name.removeprefix("WheelRigidBody1dState"))
                for o in rec.objects_of_class("WheelRigidBodyState")}
    got = np.zeros((STEPS, 4))
    seconds, stamps = {}, {}
    for frame, t, stamp, handle, _name, path, value in rows:
        got[frame, wheel_of[handle]] = value
        seconds[frame], stamps[frame] = t, stamp
        assert path == f"sedan/wheel {wheel_of[handle]}/WheelRigidBodyState"
    want = np.array([s.wheel_rigid_body_1d.corrected_rotation_speed for s in api_states])
    np.testing.assert_array_equal(got, want.astype(np.float32))
    assert [stamps[f] for f in range(STEPS)] == [round((f + 1) * DT * 1e9) for f in range(STEPS)]
    np.testing.assert_allclose([seconds[f] for f in range(STEPS)], [(f + 1) * DT for f in range(STEPS)],
                               rtol=0, atol=1e-12)
    assert len(rows) == 4 * STEPS


def test_series_cli_csv_for_one_object(ovd, api_states, capsys):
    assert main(["series", str(ovd), "TireForce.latForce", "--object", "TireForce2", "--csv"]) == 0
    table = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert table[0][6:] == ["latForce[0] [N]", "latForce[1] [N]", "latForce[2] [N]"]
    got = np.array([[float(x) for x in r[6:]] for r in table[1:]])
    want = np.array([s.tire_force.forces[2, 1] for s in api_states]).astype(np.float32)
    np.testing.assert_array_equal(got.astype(np.float32), want)
    assert np.abs(want).max() > 1.0


def test_ovd_to_h5_and_back_is_byte_identical(ovd, tmp_path):
    h5 = tmp_path / "slalom.h5"
    back = tmp_path / "slalom_back.ovd"
    convert(ovd, h5)
    convert(h5, back)
    assert back.read_bytes() == ovd.read_bytes()


def test_recording_straight_into_h5_holds_the_ovd_bytes(ovd, tmp_path):
    h5 = tmp_path / "direct.h5"
    record("sedan", "slalom", duration=STEPS * DT, out=h5, physx=False)
    back = tmp_path / "direct_back.ovd"
    convert(h5, back)
    assert back.read_bytes() == ovd.read_bytes()  # the simulation and the recording are deterministic


def test_a_deterministic_run_recorded_twice_gives_byte_identical_h5_files(tmp_path):
    """What a CI job compares with its baseline: the file names differ, the bytes do not (the
    file says what wrote it, not its own name), so ``pvdkit diff`` reads it once."""
    import h5py

    from pvdkit.diff.engine import same_bytes

    first, second = tmp_path / "run.h5", tmp_path / "golden.h5"
    for out in (first, second):
        record("sedan", "slalom", duration=STEPS * DT, out=out, physx=False)
    assert first.read_bytes() == second.read_bytes() and same_bytes(first, second)
    with h5py.File(first) as f:
        assert f.attrs["source"] == "pvdkit record sedan_slalom"


def test_cli_records_and_prints_a_summary(tmp_path, capsys):
    out = tmp_path / "brake.ovd"
    assert main(["record", "sedan", "--scenario", "brake", "--duration", str(2 * DT), "--substeps", "2",
                 "-o", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert f"-> {out}" in text and "frames:        4" in text  # PhysX's layout: two frames per step
    rec = Recording.open(out)
    assert len(rec.frames) == 4 and len(rec.objects_of_class("Vehicle")) == 1


def test_cli_without_output_writes_into_recordings(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["record", "--duration", str(DT), "--quiet"]) == 0
    assert (tmp_path / "recordings" / "default_accelerate.h5").is_file()
    assert "default / accelerate" in capsys.readouterr().out


def test_cli_progress_bar_goes_to_stderr_on_a_terminal_only(tmp_path, capsys, monkeypatch):
    """A CI log or a pipe would keep every redraw of the bar: it is drawn on a terminal only."""
    assert main(["record", "--duration", str(2 * DT), "-o", str(tmp_path / "p.ovd")]) == 0
    assert "steps" not in capsys.readouterr().err  # captured: not a terminal
    import simcore.cli.record as record_cli

    assert main(["record", "--duration", str(2 * DT), "-o", str(tmp_path / "p.ovd"), "--progress"]) == 0
    assert "100% 2/2 steps" in capsys.readouterr().err  # asked for
    monkeypatch.setattr(record_cli, "on_terminal", lambda stream=None: True)
    assert main(["record", "--duration", str(2 * DT), "-o", str(tmp_path / "p.ovd")]) == 0
    err = capsys.readouterr().err
    assert "100% 2/2 steps" in err


def test_tank_turn_records_a_tank(tmp_path):
    s = record("tank", "tank-turn", duration=3 * DT, out=tmp_path / "tank.ovd")
    rec = Recording.open(s.path)
    tx = rec.objects_of_class("TankDriveTransmissionCommandState")
    assert len(tx) == 1 and tx[0].name == "TankDriveTransmissionCommandState"
    np.testing.assert_array_equal(tx[0].value_at("thrusts", 2), [1.0, -1.0])
    assert tx[0].value_at("targetGear", 2) == 255  # inherited from EngineDriveTransmissionCommandState
    diff = rec.objects_of_class("TankDiffParams")[0]
    assert diff.value_at("nbTracks", 0) == 2
    assert len(rec.objects_of_class("WheelAttachment")) == 10


def test_vehicle_file_loads_like_the_preset():
    params, label = load_vehicle_params(DATA / "Base.json")
    preset = load_preset("sedan")
    assert label == "data"
    np.testing.assert_array_equal(params.wheel.radius, preset.wheel.radius)
    assert params.drivetrain == "direct"


@pytest.mark.parametrize(("argv", "message"), [
    (["record", "no_such_car"], "neither a preset"),
    (["record", "--scenario", "tank-turn"], "needs a tank"),
    (["record", "--dt", "0"], "--dt must be a time step in seconds in [1e-06, 1], got 0.0"),
    (["record", "--dt", "1e-300"], "--dt must be a time step in seconds in [1e-06, 1], got 1e-300"),
    (["record", "--dt", "2"], "--dt must be a time step in seconds in [1e-06, 1]"),
    (["record", "--dt", "nan"], "--dt must be a time step"),
    (["record", "--duration", "-1"], "--duration must be a positive"),
    (["record", "--duration", "inf"], "--duration must be a positive, finite number of seconds, got inf"),
    (["record", "--duration", "nan"], "--duration must be a positive"),
    (["record", "--duration", "1e300"], "at most 10,000,000 steps are run"),
    (["record", "--substeps", "0"], "--substeps must be an integer in 1..1000"),
    (["record", "--substeps", "100000"], "--substeps must be an integer in 1..1000"),
    (["record", "-o", "out.txt"], "must end in .ovd or .h5"),
    (["record", "-o", "no/such/folder/x.ovd"], "does not exist"),
    (["record", "--scenario", "drift"], "invalid choice"),
])
def test_cli_bad_input_is_one_line_and_status_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with redirect_stdout(io.StringIO()):
        assert main(argv + ["--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and err.startswith("pvdkit: error:") and "\n" not in err
    assert not list(tmp_path.rglob("*.ovd")) and not list(tmp_path.rglob("*.txt"))


def test_library_rejects_unknown_scenario():
    with pytest.raises(RecordError, match="unknown scenario 'drift'; available: idle, accelerate"):
        record("sedan", "drift", out="x.ovd")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"duration": float("inf")}, "--duration must be a positive, finite number"),
    ({"duration": 1e300}, "at most 10,000,000 steps"),
    ({"dt": 1e-300}, "--dt must be a time step in seconds in [1e-06, 1]"),
    ({"dt": True}, "--dt must be a time step"),
    ({"substeps": float("inf")}, "--substeps must be an integer in 1..1000"),
])
@pytest.mark.parametrize("vehicle", ["sedan", "motorcycle"])
def test_library_rejects_absurd_time_arguments_before_anything_is_written(vehicle, kwargs, message, tmp_path):
    out = tmp_path / "x.h5"
    with pytest.raises(RecordError) as info:
        record(vehicle, out=out, **kwargs)
    assert message in str(info.value)
    assert not out.exists()


@pytest.mark.parametrize(("content", "message"), [
    ("[" * 100_000 + "]" * 100_000, "Base.json: JSON nested too deeply"),
    (b'{"AxleDescription": "\xff"}', "Base.json: line 1: not UTF-8 text"),
])
def test_unreadable_vehicle_json_names_the_file(content, message, tmp_path, capsys):
    folder = tmp_path / "car"
    folder.mkdir()
    base = folder / "Base.json"
    base.write_bytes(content if isinstance(content, bytes) else content.encode())
    (folder / "DirectDrive.json").write_text("{}")
    assert main(["record", str(folder), "--quiet", "-o", str(tmp_path / "x.h5")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{base}: " in err and message in err and "Traceback" not in err


def test_user_errors_of_the_simulation_are_pvd_errors_and_still_value_errors():
    from pvdkit.types import PvdError
    from simcore.limits import ParamBoundsError, ParamsError, SimulationDiverged
    from simcore.scenarios import ScenarioError

    for cls in (RecordError, ScenarioError, SimulationDiverged, ParamsError, ParamBoundsError):
        assert issubclass(cls, PvdError) and issubclass(cls, ValueError), cls


def test_a_bug_in_the_simulation_keeps_its_traceback(monkeypatch, tmp_path):
    """Only user errors become one line: a ValueError from a bug must not read as bad input."""
    import simcore.cli.record as record_cli

    def broken(*args, **kwargs):
        raise ValueError("operands could not be broadcast together")

    monkeypatch.setattr(record_cli, "record", broken)
    with pytest.raises(ValueError, match="broadcast"):
        main(["record", "--quiet", "-o", str(tmp_path / "x.h5")])


def test_a_diverging_simulation_is_one_line(monkeypatch, tmp_path, capsys):
    import simcore.cli.record as record_cli
    from simcore.limits import SimulationDiverged

    def diverges(*args, **kwargs):
        raise SimulationDiverged(12, "wheel 0 rotation_speed", 1e12, 1e5, "rad/s")

    monkeypatch.setattr(record_cli, "record", diverges)
    assert main(["record", "--quiet", "-o", str(tmp_path / "x.h5")]) == 2
    assert capsys.readouterr().err == ("pvdkit: error: record: simulation diverged at step 12: "
                                       "wheel 0 rotation_speed = 1e+12 rad/s (limit 1e+05)\n")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda text: text.replace("enabled = true", "enabled = false", 1), "car.physics: no enabled vehicle"),
    (lambda text: "vehicles = [", "car.physics:1:"),
])
def test_unusable_physics_files_are_one_line(edit, message, tmp_path, capsys):
    physics = tmp_path / "car.physics"
    physics.write_text(edit((DATA / "4wheel.physics").read_text()))
    assert main(["record", str(physics), "--quiet", "-o", str(tmp_path / "x.h5")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_default_is_a_vehicle_name_and_errors_list_every_vehicle(tmp_path):
    from simcore.cli.record import RecordError, load_vehicle_params, vehicle_names

    params, label = load_vehicle_params("default")
    assert label == "default" and params.nb_wheels == 4
    with pytest.raises(RecordError) as err:
        load_vehicle_params("nosuch")
    for name in ("default", "sedan", "tank", "truck", "motorcycle", "scooter"):
        assert name in vehicle_names() and name in str(err.value)


def test_vehicle_folder_names_the_vehicle_and_its_drivetrain_file_picks_the_kind(
        tmp_path, monkeypatch, capsys) -> None:
    """Base.json typed from inside its folder is named after the folder (not ""); a folder with
    both drivetrain files records direct drive and says so; naming EngineDrive.json picks the
    engine drive, under its own name so that its runs do not overwrite the direct drive's."""
    folder = tmp_path / "mycar"
    folder.mkdir()
    for f in ("Base.json", "DirectDrive.json", "EngineDrive.json"):
        (folder / f).write_bytes((DATA / f).read_bytes())
    monkeypatch.chdir(folder)
    params, label = load_vehicle_params("Base.json")
    assert (label, params.drivetrain) == ("mycar", "direct")
    err = capsys.readouterr().err
    assert "this folder holds both DirectDrive.json and EngineDrive.json: recording direct drive" in err
    params, label = load_vehicle_params(".")
    assert label == "mycar"
    capsys.readouterr()
    params, label = load_vehicle_params("EngineDrive.json")
    assert (label, params.drivetrain) == ("mycar_engine", "engine")
    params, label = load_vehicle_params(folder / "DirectDrive.json")
    assert (label, params.drivetrain) == ("mycar", "direct")
    (folder / "DirectDrive.json").unlink()
    params, label = load_vehicle_params(folder)
    assert (label, params.drivetrain) == ("mycar", "engine")
    assert capsys.readouterr().err == ""
    (folder / "Base.json").unlink()
    with pytest.raises(RecordError, match=r"'EngineDrive.json': no Base.json in '\.' \(a PhysX vehicle"):
        load_vehicle_params("EngineDrive.json")
    with pytest.raises(RecordError, match="no Base.json in"):  # it said "neither a preset nor …"
        load_vehicle_params(folder)
    (folder / "Base.json").write_bytes((DATA / "Base.json").read_bytes())
    (folder / "EngineDrive.json").unlink()
    os.mkfifo(folder / "EngineDrive.json")  # it said "no DirectDrive.json or EngineDrive.json beside it"
    with pytest.raises(RecordError, match=r"EngineDrive.json: is not a regular file \(a FIFO or pipe\)"):
        load_vehicle_params(folder)


def test_set_changes_params_of_the_recorded_vehicle(tmp_path):
    """--set PARAM=VALUE (repeatable) changes the vehicle before it runs, one number or one per
    wheel; the recording holds the new params and the physics follows (a heavier car gains less
    speed under the same drive torque); bad paths, values and vehicles are one line."""
    base = record("sedan", "brake", duration=1.0, out=tmp_path / "base.h5", physx=False)
    heavy = record("sedan", "brake", duration=1.0, out=tmp_path / "heavy.h5", physx=False,
                   settings=["rigid_body.mass=3000", "wheel.radius=0.35,0.35,0.36,0.36"])
    with Recording.open(base.path) as a, Recording.open(heavy.path) as b:
        assert a.objects_of_class("RigidBodyParams")[0].value_at("mass", 0) == pytest.approx(2014.4, abs=0.1)
        assert b.objects_of_class("RigidBodyParams")[0].value_at("mass", 0) == 3000.0
        radii = [o.value_at("radius", 0) for o in b.objects_of_class("WheelParams")]
        np.testing.assert_allclose(radii, [0.35, 0.35, 0.36, 0.36], rtol=1e-6)
        speeds = [r.objects_of_class("RigidBodyState")[0].series("linvel").values for r in (a, b)]
        gain = [np.linalg.norm(v[-1]) - np.linalg.norm(v[0]) for v in speeds]
        assert 0 < gain[1] < 0.8 * gain[0]  # the first second is at full throttle: more mass, less speed
    for settings, message in (
        (["rigid_body.mas=5"], "--set rigid_body.mas=5: param path 'rigid_body.mas': RigidBodyParams has no "
                               "field 'mas'"),
        (["mass"], "--set 'mass': expected PARAM=VALUE"),
        (["wheel.radius=1,2"], "--set wheel.radius=1,2: param path 'wheel.radius': expected one number or "
                               "shape \\(4,\\)"),
        (["rigid_body.mass=-5"], "--set rigid_body.mass=-5: RigidBodyParams.mass must be greater than zero"),
    ):
        with pytest.raises(RecordError, match=message):
            record("sedan", "brake", duration=0.1, out=tmp_path / "bad.h5", settings=settings)
    with pytest.raises(RecordError, match="--set: the motorcycle model is not a Vehicle2 vehicle"):
        record("motorcycle", duration=0.1, out=tmp_path / "bad.h5", settings=["a=1"])
    # which value would win is a guess (--vary replaced the --set value silently): refused
    with pytest.raises(RecordError, match="--set rigid_body.mass: given twice"):
        record("sedan", duration=0.1, out=tmp_path / "bad.h5",
               settings=["rigid_body.mass=1", "rigid_body.mass=2"])
    with pytest.raises(RecordError, match="--set rigid_body.mass and --vary rigid_body.mass=1:2: the same"):
        record("sedan", duration=0.1, out=tmp_path / "bad.h5", vehicles=2, vary="rigid_body.mass=1:2",
               settings=["rigid_body.mass=9999"])


def test_a_failure_in_the_run_is_not_masked_by_closing_the_recording(tmp_path, monkeypatch):
    """An exception in the first step left an .h5 without a header; closing it raised "nothing
    was recorded", which replaced the real error. The error in flight propagates, and the
    closing failure is added to it as a note."""
    from simcore import scenarios

    def explode(*_args, **_kwargs):
        raise ZeroDivisionError("division by zero in the first step")

    monkeypatch.setattr(scenarios.Scenario, "run", explode)
    with pytest.raises(ZeroDivisionError, match="first step") as info:
        record("sedan", "brake", duration=0.1, out=tmp_path / "x.h5")
    assert any("nothing was recorded" in note for note in getattr(info.value, "__notes__", []))


def test_vary_refuses_the_scale_and_frame_a_fleet_shares(tmp_path):
    for vary in ("scale.scale=100:100", "frame.lng_axis=0:1"):
        with pytest.raises(RecordError, match="share one length scale and one frame"):
            record("sedan", "brake", duration=0.1, out=tmp_path / "x.h5", vehicles=2, vary=vary)
