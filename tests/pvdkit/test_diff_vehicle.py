"""``pvdkit diff --vehicle``: one vehicle of each recording compared alone, on PhysX's own
four-vehicle recording."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pvdkit.diff import VehicleScope, compare_files
from pvdkit.names import vehicle_named, vehicles
from pvdkit.ovd.tokenizer import open_ovd
from pvdkit.recording import Recording
from pvdkit.types import Command, PvdError

PHYSX = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


@pytest.fixture(scope="module")
def perturbed(tmp_path_factory) -> Path:
    """PhysX's recording with one value of /World/Basic's wheel 1 (its rotation speed at frame 16)
    changed by +1 rad/s: a byte patch of the payload."""
    out = tmp_path_factory.mktemp("vehicle") / "basic_changed.ovd"
    shutil.copyfile(PHYSX, out)
    with Recording.open(PHYSX) as rec:
        basic = next(v for v in vehicles(rec) if v.name == "/World/Basic")
        state = basic.wheels[1].object("WheelRigidBodyState")
        handle, attr = state.handle, rec.cls("WheelRigidBodyState").attributes["rotationSpeed"].handle
    buf, table = open_ovd(PHYSX)
    rows = np.flatnonzero((table.kind == Command.SET_ATTRIBUTE) & (table.object == handle)
                          & (table.attribute == attr) & (table.frame == 16))
    offset = int(table.data_offset[rows[0]])
    value = np.frombuffer(bytes(buf[offset:offset + 4]), "<f4")[0]
    del buf, table
    with open(out, "r+b") as f:
        f.seek(offset)
        f.write(np.float32(value + 1.0).tobytes())
    return out


def _objects_of(name: str) -> int:
    with Recording.open(PHYSX) as rec:
        return len(next(v for v in vehicles(rec) if v.name == name).objects())


def test_only_the_named_vehicle_is_compared(perturbed: Path) -> None:
    whole = compare_files(str(perturbed), str(PHYSX))
    basic = compare_files(str(perturbed), str(PHYSX), vehicle="Basic")
    tank = compare_files(str(perturbed), str(PHYSX), vehicle="/World/Tank")
    assert [(s.path, s.attribute, s.first_frame) for s in whole.differing_series] == [
        ("/World/Basic/wheel 1/WheelRigidBodyState", "rotationSpeed", 16)]
    assert [(s.path, s.attribute, s.first_frame, s.max_abs) for s in basic.differing_series] == [
        ("/World/Basic/wheel 1/WheelRigidBodyState", "rotationSpeed", 16, pytest.approx(1.0, abs=1e-6))]
    assert tank.equal and tank.exit_status == 0 and not whole.equal
    # Each compares its vehicle's objects and nothing else: no scene, no other vehicle.
    assert basic.objects_matched == _objects_of("/World/Basic")
    assert tank.objects_matched == _objects_of("/World/Tank") < whole.objects_matched
    assert (basic.vehicle_a, basic.vehicle_b) == ("/World/Basic", "/World/Basic")
    assert whole.vehicle_a == "" and whole.options.vehicle is None


def test_two_vehicles_pair_their_objects_by_path_under_the_vehicle() -> None:
    """Standard (engine drive) against Tank (engine drive, tank differential): their wheels and
    engine pair up by path; what only one has is listed under its own vehicle's name."""
    res = compare_files(str(PHYSX), str(PHYSX), vehicle="Standard=Tank")
    assert (res.vehicle_a, res.vehicle_b) == ("/World/Standard", "/World/Tank")
    assert res.objects_matched > 100 and not res.equal
    assert all(o.path.startswith("/World/Standard") for o in res.objects_only_a)
    assert all(o.path.startswith("/World/Tank") for o in res.objects_only_b)
    assert {o.path for o in res.objects_only_b} == {"/World/Tank/TankDiffParams",
                                                    "/World/Tank/TankDriveTransmissionCommandState"}
    paths = {s.path for s in res.series}
    assert "/World/Standard/wheel 3/TireForce" in paths and "/World/Standard/EngineState" in paths
    # The names tell the chassis apart: the actor's name differs, and only that vehicle's.
    names = [s for s in res.differing_series if s.attribute == "name"]
    assert [(s.path, s.a_value, s.b_value) for s in names] == [
        ("/World/Standard/PxRigidDynamic", "'/World/Standard'", "'/World/Tank'")]


def _diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pvdkit", "diff", *args], capture_output=True, text=True,
                          timeout=120)


def test_command_line_and_json(perturbed: Path, tmp_path: Path) -> None:
    report = tmp_path / "diff.json"
    out = _diff(str(perturbed), str(PHYSX), "--vehicle", "Basic", "--json", str(report))
    assert out.returncode == 1, out.stderr
    assert "vehicle: /World/Basic (only its objects are compared)" in out.stdout
    assert "/World/Basic/wheel 1/WheelRigidBodyState" in out.stdout
    data = json.loads(report.read_text())
    assert data["options"]["vehicle"] == {"a": "/World/Basic", "b": "/World/Basic"}
    assert [row["path"] for row in data["series"]] == ["/World/Basic/wheel 1/WheelRigidBodyState"]
    for arg, expected in (("Nope", "pvdkit diff: error: --vehicle: A: "),
                          ("=Tank", "pvdkit diff: error: --vehicle '=Tank': expected a vehicle name")):
        bad = _diff(str(perturbed), str(PHYSX), "--vehicle", arg)
        assert bad.returncode == 2 and bad.stderr.startswith(expected), bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1
    nope = _diff(str(perturbed), str(PHYSX), "--vehicle", "Nope")
    assert ("no vehicle 'Nope' (its vehicles: /World/Basic, /World/Raw, /World/Standard, /World/Tank)"
            in nope.stderr)


def test_vehicle_names_whole_or_by_their_last_part() -> None:
    names = ["/World/Basic", "/World/Tank", "/Garage/Car", "/Road/Car"]
    assert vehicle_named("/World/Tank", names) == 1 and vehicle_named("Tank", names) == 1
    assert vehicle_named("Car", names) is None  # two end so: ambiguous, never the first
    assert vehicle_named("/Road/Car", names) == 3 and vehicle_named("World", names) is None
    assert VehicleScope.parse("Basic") == VehicleScope("Basic", "Basic")
    assert VehicleScope.parse(" A = B ") == VehicleScope("A", "B") and str(VehicleScope("A", "B")) == "A=B"
    assert VehicleScope.parse(None) is None
    with pytest.raises(PvdError, match="NAME_IN_A=NAME_IN_B"):
        VehicleScope.parse("A=")
