"""The unit table of the Vehicle2 schema (``pvdkit.units``) and units in ``pvdkit series`` headers."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from pvdkit import cli
from pvdkit.recording import Recording
from pvdkit.types import DataType
from pvdkit.units import UNITS, unit_label, unit_of

DATA = Path(__file__).resolve().parents[1] / "data"
#: Every unit text the table may use: a misspelt unit ("rad/sec", "Nm") fails here.
VOCABULARY = {"1", "m", "m²", "m/s", "m/s²", "m²/s²", "rad", "rad/s", "rad·s²/m", "s", "1/s", "kg", "kg·m²",
              "N", "N/m", "N·s/m", "N/rad", "N·m", "N·m·s"}


def _declared() -> dict[tuple[str, str], DataType]:
    """(class, attribute) → data type of every attribute PhysX's and simcore's schemas register."""
    from simcore.bicycle.pvd import BICYCLE_SCHEMA
    from simcore.motorcycle.pvd import MOTORCYCLE_SCHEMA
    from simcore.pvd.schema import PHYSX_SCHEMA, SCHEMA

    out = {}
    for schema in (SCHEMA, PHYSX_SCHEMA, BICYCLE_SCHEMA, MOTORCYCLE_SCHEMA):
        for cls in schema.walk():
            for owner, a in cls.all_attrs():
                out[owner.name, a.name] = a.dtype
    rec = Recording.open(DATA / "vehicles_short.ovd")  # PhysX's own registrations (PxScene …)
    for c in rec.classes.values():
        for name, a in c.attributes.items():
            if a.data_type is not None:
                out.setdefault((c.name, name), a.data_type)
    return out


def test_every_entry_names_a_real_floating_point_attribute():
    declared = _declared()
    missing = [k for k in UNITS if k not in declared]
    assert not missing, f"units for attributes no schema registers: {missing}"
    not_real = [k for k in UNITS if declared[k] not in (DataType.FLOAT32, DataType.FLOAT64)]
    assert not not_real, f"units on attributes that hold no quantity: {not_real}"
    assert set(UNITS.values()) <= VOCABULARY


@pytest.mark.parametrize(("cls", "attr", "unit"), [
    ("WheelRigidBodyState", "correctedRotationSpeed", "rad/s"),
    ("WheelRigidBodyState", "rotationAngle", "rad"),
    ("BicycleBodyState", "yawRate", "rad/s"),  # simcore's bicycle model and motorcycle had none
    ("BicycleModelAnalysis", "understeerGradient", "rad·s²/m"),
    ("MotorcycleBodyState", "pitch", "rad"),
    ("MotorcycleWheelParams", "springStiffness", "N/m"),
    ("TireForce", "lngForce", "N"),
    ("TireForce", "wheelTorque", "N·m"),
    ("TireSlipState", "latSlip", "rad"),
    ("TireSlipState", "lngSlip", "1"),
    ("SuspensionState", "jounce", "m"),
    ("SuspensionForceParams", "stiffness", "N/m"),
    ("EngineParams", "peakTorque", "N·m"),
    ("EngineParams", "moi", "kg·m²"),
    ("EngineParams", "dampingRateFullThrottleAH", "N·m·s"),
    ("RigidBodyParams", "mass", "kg"),
    ("GearboxState", "switchTime", "s"),
    ("RigidBodyState", "linvel", "m/s"),
    ("SteerResponseParams", "maxResponse", "rad"),
    ("BrakeResponseParams", "maxResponse", "N·m"),
    ("PxScene", "elapsedTime", "s"),
])
def test_units_from_vehicle2s_documentation(cls, attr, unit):
    assert unit_of(cls, attr) == unit


def test_no_unit_where_there_is_no_quantity():
    assert unit_of("WheelActuationState", "isBrakeApplied") is None  # a bool
    assert unit_of("GearboxState", "currentGear") is None  # a gear number
    assert unit_of("Vehicle", "wheelAttachmentSet") is None  # object handles
    assert unit_of("RoadGeometryState", "plane") is None  # (normal, d): mixed units
    assert unit_of("Nonsense", "speed") is None


def test_inherited_attributes_find_their_units_through_the_class_chain():
    rec = Recording.open(DATA / "vehicles_short.ovd")
    assert unit_of(rec.cls("PxRigidDynamic"), "linearVelocity") == "m/s"  # declared by PxRigidBody
    assert unit_of(rec.cls("PxRigidDynamic"), "wakeCounter") == "s"
    assert unit_of("TankDiffParams", "torqueRatios0To3") is None  # by name alone: no chain
    assert unit_label("jounce", "m") == "jounce [m]" and unit_label("gear", None) == "gear"


def test_series_headers_carry_units(capsys):
    fixture = str(DATA / "dev_drive.h5")
    wheel = "/World/Tank/wheel 1"
    assert cli.main(["series", fixture, "TireForce.lngForce[z]", "--object", wheel, "--csv"]) == 0
    assert next(csv.reader(io.StringIO(capsys.readouterr().out)))[-1] == "lngForce[z] [N]"
    assert cli.main(["series", fixture, "TankDiffParams.torqueRatios0To3", "--csv"]) == 0
    header = next(csv.reader(io.StringIO(capsys.readouterr().out)))
    # inherited from MultiWheelDiffParams
    assert header[-4:] == [f"torqueRatios0To3[{i}] [1]" for i in range(4)]
    assert cli.main(["series", fixture, "GearboxState.currentGear", "--csv"]) == 0
    assert next(csv.reader(io.StringIO(capsys.readouterr().out)))[-1] == "currentGear"
