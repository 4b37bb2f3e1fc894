"""`pvdkit record` dispatches Stingray `.physics` files and the motorcycle to their own models."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

from pvdkit.cli import main
from pvdkit.recording import Recording


def _physics(name: str) -> str:
    return str(resources.files("simcore") / "data" / name)


def test_record_a_stingray_car_brings_its_engine_and_moves(tmp_path, capsys):
    out = tmp_path / "car.ovd"
    status = main(["record", _physics("4wheel.physics"), "--scenario", "accelerate",
                   "--duration", "1", "-o", str(out), "--quiet"])
    assert status == 0, capsys.readouterr().err
    rec = Recording.open(out)
    assert rec.objects_of_class("EngineState"), "a .physics car records an engine drivetrain"
    (body,) = rec.objects_of_class("RigidBodyState")
    frames, linvel = body.series("linvel")
    assert len(frames) == 60
    assert np.linalg.norm(linvel[-1]) > 0.5, "full throttle for 1 s must move the car"


def test_record_motorcycle_brake_test_lights_the_brake_lamp(tmp_path, capsys):
    out = tmp_path / "bike.h5"
    status = main(["record", "motorcycle", "--scenario", "brake-test", "-o", str(out), "--quiet"])
    assert status == 0, capsys.readouterr().err
    assert "brake-test" in capsys.readouterr().out
    rec = Recording.open(out)
    (commands,) = rec.objects_of_class("MotorcycleCommandState")
    (pose,) = rec.objects_of_class("MotorcyclePose")
    frames, front_brake = commands.series("frontBrake")
    pose_frames, lights = pose.series("lights")
    assert np.array_equal(frames, pose_frames)
    braking = front_brake > 0
    assert braking.any() and (~braking).any()
    # lights = [high beam, low beam, brake, left, right]: the brake lamp is on exactly while braking.
    assert np.array_equal(lights[:, 2] == 1, braking)
    assert main(["info", str(out)]) == 0
    assert "  Motorcycle  motorcycle  2 wheels" in capsys.readouterr().out  # its kind, not "unknown"


def test_motorcycle_rejects_a_car_scenario(tmp_path, capsys):
    status = main(["record", "scooter", "--scenario", "slalom", "-o", str(tmp_path / "x.h5")])
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert "not a motorcycle scenario" in err and "\n" not in err


@pytest.mark.parametrize("bad", ["nope.physics", "missing_dir/Base.json"])
def test_unknown_vehicle_files_are_one_line_errors(bad, tmp_path, capsys):
    status = main(["record", str(tmp_path / bad), "-o", str(tmp_path / "x.h5"), "--quiet"])
    assert status == 2
    assert capsys.readouterr().err.count("\n") == 1
