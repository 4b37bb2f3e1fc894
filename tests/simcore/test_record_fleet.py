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
