"""``pvdkit record --vehicles N [--spacing M] [--vary PARAM=LO:HI]``: a fleet in one recording."""

from __future__ import annotations

import numpy as np
import pytest

from pvdkit.cli import main
from pvdkit.recording import Recording
from simcore.cli.record import record

DT = 1.0 / 60.0


def test_a_fleet_recording_holds_every_vehicle_by_name(tmp_path, capsys):
    out = tmp_path / "fleet.h5"
    assert main(["record", "sedan", "--vehicles", "3", "--spacing", "5", "--duration", str(4 * DT),
                 "-o", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "vehicles:      3" in text and "µs per vehicle-step" in text
    rec = Recording.open(out)
    # PhysX's layout (the default): the Vehicle objects are named "Vehicle", each chassis actor
    # carries its vehicle's name.
    assert [o.name for o in rec.objects_of_class("Vehicle")] == ["Vehicle"] * 3
    names = sorted(o.state_at(1)["name"] for o in rec.objects_of_class("PxRigidDynamic"))
    assert names == ["vehicle_000", "vehicle_001", "vehicle_002"]
    pure = tmp_path / "pure.h5"
    assert main(["record", "sedan", "--vehicles", "3", "--duration", str(2 * DT), "-o", str(pure), "--quiet",
                 "--pure-vehicle2"]) == 0
    names = sorted(o.name for o in Recording.open(pure).objects_of_class("Vehicle"))
    assert names == ["vehicle_000", "vehicle_001", "vehicle_002"]


def test_the_cost_per_vehicle_step_leaves_out_the_first_step(tmp_path):
    """The first step creates every vehicle's object graph (most of a short fleet run): the
    summary gives it apart, and the cost per vehicle-step over the steps after it."""
    from simcore.cli.record import RecordSummary

    s = RecordSummary(tmp_path / "x.h5", "sedan", "accelerate", steps=11, frames=11, objects=10,
                      file_size=1, wall_time=2.0, simulated_time=11 * DT, vehicles=4, first_step_time=1.2)
    assert s.us_per_vehicle_step == pytest.approx(1e6 * 0.8 / (10 * 4))
    assert "the first step, which creates the object graphs: 1.20 s" in s.format()
    one = RecordSummary(tmp_path / "x.h5", "sedan", "accelerate", steps=1, frames=1, objects=10,
                        file_size=1, wall_time=0.5, simulated_time=DT, first_step_time=0.5)
    assert one.us_per_vehicle_step == pytest.approx(5e5) and "first step" not in one.format()
    summary = record("sedan", None, duration=3 * DT, out=tmp_path / "f.h5", vehicles=2)
    assert 0 < summary.first_step_time < summary.wall_time


def test_vary_spreads_one_param_linearly(tmp_path):
    out = tmp_path / "vary.ovd"
    summary = record("sedan", "accelerate", duration=10 * DT, out=out, vehicles=3,
                     vary="rigid_body.mass=1500:2500")
    assert summary.vehicles == 3
    rec = Recording.open(out)
    masses = [rec.value_at(o, "mass", len(rec.frames) - 1)
              for o in rec.objects_of_class("RigidBodyParams")]
    assert np.allclose(sorted(float(m) for m in masses), [1500.0, 2000.0, 2500.0])


@pytest.mark.parametrize(("argv", "message"), [
    (["--vehicles", "0"], "--vehicles must be a whole number in 1..65536, got 0"),
    (["--vehicles", "2", "--spacing", "-1"], "--spacing must be a distance >= 0"),
    (["--vehicles", "2", "--vary", "rigid_body.mass"], "expected PARAM=LO:HI"),
    (["--vehicles", "2", "--vary", "rigid_body.masss=1:2"], "RigidBodyParams has no field 'masss'"),
    (["--vehicles", "2", "--vary", "rigid_body.mass=-5:1"],
     r"--vary rigid_body.mass=-5:1: vehicle 0 \(rigid_body"),
    (["motorcycle", "--vehicles", "2"], "the motorcycle model runs one vehicle at a time"),
    (["--vary", "rigid_body.mass=1500:2500"], r"over a fleet; give --vehicles N"),
])
def test_bad_fleet_arguments_are_one_line(argv, message, tmp_path, capsys):
    if argv[0] != "motorcycle":
        argv = ["sedan", *argv]
    assert main(["record", *argv, "--duration", str(2 * DT), "-o", str(tmp_path / "x.h5"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    import re

    assert re.search(message, err), err
    assert not (tmp_path / "x.h5").exists()
