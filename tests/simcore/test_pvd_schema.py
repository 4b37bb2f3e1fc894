"""simcore's Vehicle2 PVD schema against the schema PhysX itself registered in a real recording.

``tests/data/vehicles_short.ovd`` was recorded by PhysX (OmniPVD 0.4.0). The classes it registers
from ``RigidBodyParams`` to ``Vehicle`` are Vehicle2's complete schema; simcore must register
exactly those — names, base classes, attribute names (typos included), data types, element
counts, enum classes and values — in the same order, so that the handles match up to an offset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from pvdkit.ovd.codec import (
    RegisterAttribute,
    RegisterClass,
    RegisterEnumValue,
    RegisterFlagsAttribute,
    RegisterUniqueListAttribute,
    StopFrame,
    iter_decode,
)
from pvdkit.streams import MemoryStream
from pvdkit.writer import OmniPvdWriter
from simcore.pvd.registry import register_schema
from simcore.pvd.schema import (
    SCHEMA,
    SIMCORE_CLASSES,
    VEHICLE2_CLASSES,
    DataType,
    Role,
    Schema,
    Scope,
)

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURE = DATA / "vehicles_short.ovd"
SCHEMA_JSON = DATA / "vehicle2_schema.json"


@dataclass
class Registered:
    """Registrations of a stream: classes in order, each with its attributes in order."""

    classes: list[dict]  # {"handle", "name", "base", "attributes": [ {...} ]}

    def index(self, name: str) -> int:
        return next(i for i, c in enumerate(self.classes) if c["name"] == name)


def registrations(data: bytes) -> Registered:
    classes: dict[int, dict] = {}
    order: list[dict] = []
    for _, cmd in iter_decode(data):
        if isinstance(cmd, StopFrame):
            break  # PhysX registers everything in its first frame; so does simcore
        if isinstance(cmd, RegisterClass):
            c = {"handle": cmd.class_handle, "name": cmd.name,
                 "base": classes[cmd.base_class]["name"] if cmd.base_class else None, "attributes": []}
            classes[cmd.class_handle] = c
            order.append(c)
        elif isinstance(cmd, RegisterEnumValue):
            classes[cmd.class_handle]["attributes"].append(
                {"handle": cmd.attribute_handle, "name": cmd.name, "kind": "enum_value", "value": cmd.value})
        elif isinstance(cmd, RegisterFlagsAttribute):
            classes[cmd.class_handle]["attributes"].append(
                {"handle": cmd.attribute_handle, "name": cmd.name, "kind": "flags",
                 "enum_class": classes[cmd.enum_class_handle]["name"]})
        elif isinstance(cmd, RegisterAttribute):
            classes[cmd.class_handle]["attributes"].append(
                {"handle": cmd.attribute_handle, "name": cmd.name, "kind": "plain",
                 "type": cmd.data_type.name, "count": cmd.nb_elements})
        elif isinstance(cmd, RegisterUniqueListAttribute):
            classes[cmd.class_handle]["attributes"].append(
                {"handle": cmd.attribute_handle, "name": cmd.name, "kind": "unique_list",
                 "type": cmd.data_type.name})
    return Registered(order)


def without_handles(classes: list[dict]) -> list[dict]:
    return [{"name": c["name"], "base": c["base"],
             "attributes": [{k: v for k, v in a.items() if k not in ("handle", "written_sizes")}
                            for a in c["attributes"]]} for c in classes]


@pytest.fixture(scope="module")
def physx() -> Registered:
    return registrations(FIXTURE.read_bytes())


@pytest.fixture(scope="module")
def physx_vehicle2(physx: Registered) -> list[dict]:
    first = physx.index("RigidBodyParams")
    last = physx.index("Vehicle")
    return physx.classes[first:last + 1]


def register(schema: Schema) -> tuple[Registered, bytes]:
    stream = MemoryStream()
    writer = OmniPvdWriter(stream)
    register_schema(writer, schema)
    return registrations(stream.getvalue()), stream.getvalue()


@pytest.fixture(scope="module")
def simcore_vehicle2() -> Registered:
    return register(Schema(VEHICLE2_CLASSES))[0]


def test_vehicle2_classes_are_physx_classes(physx_vehicle2, simcore_vehicle2):
    ours = without_handles(simcore_vehicle2.classes)
    theirs = without_handles(physx_vehicle2)
    assert [c["name"] for c in ours] == [c["name"] for c in theirs]
    for mine, ref in zip(ours, theirs, strict=True):
        assert mine == ref, f"class {ref['name']} differs from PhysX's registration"


def test_vehicle2_handles_match_physx_up_to_an_offset(physx_vehicle2, simcore_vehicle2):
    class_offset = physx_vehicle2[0]["handle"] - simcore_vehicle2.classes[0]["handle"]
    attr_offset = (physx_vehicle2[0]["attributes"][0]["handle"]
                   - simcore_vehicle2.classes[0]["attributes"][0]["handle"])
    assert class_offset == 95 and attr_offset == 587
    for mine, ref in zip(simcore_vehicle2.classes, physx_vehicle2, strict=True):
        assert mine["handle"] + class_offset == ref["handle"], ref["name"]
        for a, b in zip(mine["attributes"], ref["attributes"], strict=True):
            assert a["handle"] + attr_offset == b["handle"], f"{ref['name']}.{b['name']}"


def test_physx_quirks_are_kept(simcore_vehicle2):
    by_name = {c["name"]: {a["name"]: a for a in c["attributes"]} for c in simcore_vehicle2.classes}
    assert "wheelStatess4To7" in by_name["SteerResponseState"]
    assert "wheelLocalPosetate" in by_name["WheelAttachment"]
    assert "dampingRateFullThrottleAH" in by_name["EngineParams"]
    assert "MaxResponse" in by_name["ClutchResponseParams"]
    assert by_name["SuspensionParams"]["wheelAttachmentQuat"]["count"] == 3
    assert by_name["TireForce"]["aligningMoment"]["count"] == 3
    assert [a["value"] for a in by_name["PhysXRoadGeometryQueryFlag"].values()][-2:] == [64, 64]
    assert [(n, a["value"]) for n, a in by_name["DirectDriveGear"].items()] == [
        ("reverse", 0), ("neutral", 1), ("forward", 2)]
    assert by_name["TankDiffParams"]["wheelIdsInTrackOrder"]["count"] == 0
    bases = {c["name"]: c["base"] for c in simcore_vehicle2.classes}
    assert bases["TankDriveTransmissionCommandState"] == "EngineDriveTransmissionCommandState"
    assert bases["FourWheelDiffParams"] == bases["TankDiffParams"] == "MultiWheelDiffParams"


def test_json_copy_of_the_physx_schema_is_faithful(physx):
    """tests/data/vehicle2_schema.json (the schema as data, with PhysX's payload sizes) is the
    recording's registration, command for command."""
    saved = json.loads(SCHEMA_JSON.read_text())
    assert saved["version"] == [0, 4, 0]
    assert without_handles(saved["classes"]) == without_handles(physx.classes)
    assert [c["handle"] for c in saved["classes"]] == [c["handle"] for c in physx.classes]


def test_full_schema_registers_simcore_classes_after_vehicle2(physx_vehicle2):
    regs, data = register(SCHEMA)
    names = [c["name"] for c in regs.classes]
    n = len(physx_vehicle2)
    assert names[:n] == [c["name"] for c in physx_vehicle2]
    own = names[n:]
    for decl in SIMCORE_CLASSES:
        assert decl.name in own
    assert "VehicleAxes" in own and "HeightfieldSurface" in own
    assert len(set(names)) == len(names), "a class name is registered twice"
    # Registration is deterministic: the same bytes every time.
    assert register(SCHEMA)[1] == data


def test_every_recorded_attribute_has_an_accessor():
    for decl in SCHEMA.object_classes():
        for owner, a in decl.all_attrs():
            if a.is_link:
                continue
            if decl.scope != Scope.NONE:
                assert a.get is not None, f"{owner.name}.{a.name} is recorded but has no accessor"
            if a.dtype == DataType.FLAGS_WORD:
                assert a.enum is not None, f"{owner.name}.{a.name}"


def test_declared_links_name_declared_classes():
    for decl in SCHEMA.walk():
        for _, a in decl.all_attrs():
            for target in a.links:
                assert target in SCHEMA, f"{decl.name}.{a.name} links to unknown class {target!r}"
                assert a.dtype == DataType.OBJECT_HANDLE


def test_roles_match_physx_naming():
    for decl in SCHEMA.object_classes():
        if decl.origin != "physx" or decl.role == Role.GRAPH:
            continue
        if decl.name.endswith("Params"):
            assert decl.role == Role.PARAMS, decl.name
        if decl.name.endswith("State"):
            assert decl.role == Role.STATE, decl.name


def test_schema_rejects_two_classes_with_one_name():
    from simcore.pvd.schema import ClassDecl

    with pytest.raises(ValueError, match="two different classes named 'Vehicle'"):
        Schema(VEHICLE2_CLASSES + (ClassDecl("Vehicle"),))
