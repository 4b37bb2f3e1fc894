"""Vehicles, wheels and object paths (``pvdkit.names``), and ``pvdkit series --object`` by name."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from pvdkit import cli
from pvdkit.identity import object_identities
from pvdkit.names import (
    NORM,
    find_vehicles,
    handle_attributes,
    handle_refs,
    names_of,
    parse_element,
    referenced,
    resolve_spec,
    split_element,
    vehicles,
)
from pvdkit.recording import Recording
from pvdkit.types import PvdError

DATA = Path(__file__).resolve().parents[1] / "data"
VEHICLES = [("/World/Basic", "direct drive"), ("/World/Raw", "raw drive"),
            ("/World/Standard", "engine drive"), ("/World/Tank", "tank drive")]


@pytest.fixture(scope="module", params=["vehicles_short.ovd", "dev_drive.h5"])
def physx(request) -> Recording:
    return Recording.open(DATA / request.param)


def test_physx_vehicles_are_named_after_their_actors(physx):
    vehicles = find_vehicles(physx)
    assert [(v.name, v.kind, v.nb_wheels) for v in vehicles] == [(n, k, 4) for n, k in VEHICLES]
    for v in vehicles:
        assert v.obj.cls.name == "Vehicle" and v.actor.cls.name == "PxRigidDynamic"
        assert physx.series(v.actor, "name").values[0] == v.name
        assert [w[0].cls.name for w in v.wheels] == ["WheelAttachment"] * 4
        assert [w[1].cls.name for w in v.wheels] == ["PhysXWheelAttachment"] * 4


def test_every_wheel_object_sits_under_its_vehicle_and_wheel(physx):
    names = names_of(physx)
    paths = [names.path(o) for o in physx.objects]
    assert len(set(paths)) == len(paths)  # a path names one object
    per_wheel = 0
    for o in physx.objects:
        m = re.fullmatch(r"(TireForce|SuspState|WheelRigidBody1dState|PhysXConstraintState)(\d)", o.name)
        if not m:
            continue
        vehicle, wheel = names.owner(o)
        assert vehicle is not None and wheel == int(m.group(2))
        assert names.path(o) == f"{vehicle.name}/wheel {wheel}/{o.cls.name}"
        per_wheel += 1
    assert per_wheel == 4 * 4 * 4
    engine = physx.objects_of_class("EngineState")
    assert [names.path(o) for o in engine] == ["/World/Standard/EngineState", "/World/Tank/EngineState"]
    brakes = [names.path(o) for o in physx.objects_of_class("BrakeResponseParams")
              if names.owner(o)[0].name == "/World/Basic"]
    assert brakes == ["/World/Basic/BrakeResponseParams#0", "/World/Basic/BrakeResponseParams#1"]
    assert names.path(physx.objects_of_class("PxScene")[0]) == "<PxScene>"  # outside every vehicle


def test_resolve_paths_vehicles_wheels_labels_and_handles(physx):
    names = names_of(physx)
    tire = physx.cls("TireForce")
    basic = names.resolve("/World/Basic", tire)
    assert [names.path(o) for o in basic] == [f"/World/Basic/wheel {k}/TireForce" for k in range(4)]
    (one,) = names.resolve("/World/Tank/wheel 1", tire)
    assert names.path(one) == "/World/Tank/wheel 1/TireForce" and one.name == "TireForce1"
    assert names.resolve("/World/Tank/wheel 1/TireForce", tire) == [one]
    assert names.resolve(hex(one.handle), tire) == [one] and names.resolve(str(one.handle), tire) == [one]
    # pvdkit diff's identity labels work too: Vehicle#0 is the first vehicle created.
    label = object_identities(physx)[basic[1].index].label
    assert label == "Vehicle#0/wheelAttachmentSet[1]/tireForce"
    assert names.resolve(label, tire) == [basic[1]] and names.identity(basic[1]) == label


@pytest.mark.parametrize(("text", "message"), [
    ("TireForce2", "'TireForce2' is ambiguous: 4 objects match: '/World/Basic/wheel 2/TireForce'"),
    ("Vehicle", "'Vehicle' is ambiguous: 4 objects match: '/World/Basic' (0x"),
    ("nobody", "no object 'nobody' (give a path or name as `pvdkit series` prints them, a vehicle name, "
               "a `pvdkit diff` label or a handle; its vehicles: /World/Basic, "),
    ("/World/Basic/wheel 9", "/World/Basic has no wheel 9: its wheels are 0 … 3"),
    ("Basic/wheel 9/TireForce", "/World/Basic has no wheel 9: its wheels are 0 … 3"),
    ("/World/Basic/RigidBodyState", "is a RigidBodyState, not a TireForce"),
])
def test_ambiguous_and_unknown_objects_are_errors(physx, text, message):
    with pytest.raises(PvdError) as err:
        names_of(physx).resolve(text, physx.cls("TireForce"))
    assert message in str(err.value)
    if "ambiguous" in message:  # every candidate is listed with its path
        for name, _ in VEHICLES:
            assert f"'{name}" in str(err.value)


def test_a_vehicle_by_the_last_part_of_its_name(physx):
    """PhysX names vehicles by their USD path; ``Standard`` is ``/World/Standard`` as
    ``pvdkit replay --vehicle`` takes it, with a wheel's number or side after it."""
    names = names_of(physx)
    tire = physx.cls("TireForce")
    assert names.resolve("Standard", tire) == names.resolve("/World/Standard", tire)
    assert names.resolve("Tank/wheel 1", tire) == names.resolve("/World/Tank/wheel 1", tire)
    assert names.resolve("Basic/rear-left", tire) == names.resolve("/World/Basic/rear-left", tire)
    assert names.find("Raw") is names.find("/World/Raw")
    with pytest.raises(PvdError, match="no object 'Sports'"):
        names.find("Sports")


def test_simcore_vehicles_in_both_layouts(tmp_path):
    from simcore.cli.record import record

    for physx in (True, False):
        path = tmp_path / f"s{physx}.h5"
        record("sedan", "accelerate", duration=0.05, out=path, physx=physx)
        rec = Recording.open(path)
        (v,) = find_vehicles(rec)
        # With the actor layer the actor carries the vehicle's name (as PhysX names actors after
        # their prims); a pure Vehicle2 recording names its Vehicle object so: the same name,
        # so that `--object sedan/wheel 2` finds the wheel in both layouts.
        name = "sedan"
        assert (v.name, v.kind, v.nb_wheels, v.actor is not None) == (name, "direct drive", 4, physx)
        names = names_of(rec)
        (w,) = names.resolve(f"{name}/wheel 2", rec.cls("WheelRigidBodyState"))
        assert w.name == "WheelRigidBody1dState2"


def test_fleet_vehicles_are_told_apart_by_name(tmp_path):
    from simcore.cli.record import record

    path = tmp_path / "fleet.h5"
    record("sedan", "accelerate", duration=0.05, out=path, vehicles=3, physx=False)
    rec = Recording.open(path)
    vehicles = find_vehicles(rec)
    assert len(vehicles) == 3 and len({v.name for v in vehicles}) == 3
    names = names_of(rec)
    for v in vehicles:
        objs = names.resolve(v.name, rec.cls("TireForce"))
        assert [names.owner(o) for o in objs] == [(v, k) for k in range(4)]


def test_series_object_filters_by_vehicle_and_wheel(capsys):
    fixture = str(DATA / "vehicles_short.ovd")
    speed = "WheelRigidBodyState.correctedRotationSpeed"
    assert cli.main(["series", fixture, speed, "--object", "/World/Raw", "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))[1:]
    assert {r[5] for r in rows} == {f"/World/Raw/wheel {k}/WheelRigidBodyState" for k in range(4)}
    assert {r[4] for r in rows} == {f"WheelRigidBody1dState{k}" for k in range(4)}
    assert cli.main(["series", fixture, speed, "--object", "WheelRigidBody1dState0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ambiguous" in err and "/World/Tank/wheel 0/WheelRigidBodyState" in err


def test_element_selectors_as_the_viewer_takes_them(capsys):
    assert [parse_element(t) for t in ("x", "Y", "[z]", "w", "2", "norm", "|v|", "")] == [0, 1, 2, 3, 2, NORM,
                                                                                         NORM, None]
    assert split_element("TireForce.lngForce[z]") == ("TireForce.lngForce", "z")
    assert split_element("Thing.pose.position.xyz[0]") == ("Thing.pose.position.xyz", "0")
    assert split_element("TireForce.lngForce") == ("TireForce.lngForce", None)
    with pytest.raises(PvdError, match="expected x, y, z, w"):
        parse_element("q")
    fixture = str(DATA / "vehicles_short.ovd")
    rows = {}
    for sel in ("", "[z]", "[2]", "[norm]"):
        assert cli.main(["series", fixture, f"TireForce.lngForce{sel}", "--object", "/World/Basic/wheel 0",
                         "--csv"]) == 0
        rows[sel] = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows["[z]"][0][-1] == "lngForce[z] [N]" and rows["[2]"][0][-1] == "lngForce[z] [N]"
    assert rows["[norm]"][0][-1] == "|lngForce| [N]"
    full = [[float(x) for x in r[6:9]] for r in rows[""][1:]]
    assert [float(r[6]) for r in rows["[z]"][1:]] == [v[2] for v in full]
    norms = [sum(x * x for x in v) ** 0.5 for v in full]
    assert [float(r[6]) for r in rows["[norm]"][1:]] == pytest.approx(norms)
    assert any(v[2] != 0 for v in full)


def test_a_pose_is_selected_by_position_and_rotation(capsys):
    """OmniPVD writes a PxTransform as q.xyzw then p.xyz: on a pose [y] is the position's y (the
    chassis height in PhysX's Y-up scene), [qw] the rotation's w, and a length means nothing."""
    assert [parse_element(t, 7, pose=True) for t in ("qx", "qy", "qz", "qw", "x", "y", "z", "6")] == \
        [0, 1, 2, 3, 4, 5, 6, 6]
    for bad, message in (("norm", "has no length"), ("w", r"rotation is \[qx\] … \[qw\]")):
        with pytest.raises(PvdError, match=message):
            parse_element(bad, 7, pose=True)
    fixture = str(DATA / "vehicles_short.ovd")
    rec = Recording.open(fixture)
    actor = names_of(rec).find("/World/Basic/PxRigidDynamic")
    poses = rec.series(actor, "globalPose").values
    columns = {}
    for sel in ("y", "qw"):
        assert cli.main(["series", fixture, f"PxRigidActor.globalPose[{sel}]", "--object", "/World/Basic",
                         "--csv"]) == 0
        rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
        columns[sel] = (rows[0][-1], [float(r[-1]) for r in rows[1:]])
    assert columns["y"][0] == "globalPose[y]" and columns["y"][1] == pytest.approx(poses[:, 5].tolist())
    assert columns["qw"][0] == "globalPose[qw]" and columns["qw"][1] == pytest.approx(poses[:, 3].tolist())
    assert min(columns["y"][1]) > 0.9  # the chassis above the ground: a height, not a quaternion's y
    for spec, message in (("PxRigidActor.globalPose[norm]", "has no length"),
                          ("TireForce.lngForce[w]", r"lngForce\[w\]: it has 3 elements \(x, y, z\)"),
                          ("TireForce.lngForce[qx]", "expected x, y, z, w")):
        assert cli.main(["series", fixture, spec]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and re.search(message, err), err


def test_handle_refs_answer_as_referenced(physx):
    """The bulk read of every object-handle series (what the vehicle walk follows) gives, per
    object and attribute, what one series read gives, attributes in class order."""
    refs = handle_refs(physx)
    checked = 0
    for o in physx.objects:
        for name, _ in handle_attributes(o):
            want = referenced(physx, o, name)
            assert refs.get(o.index, {}).get(name, []) == want, (o, name)
            checked += bool(want)
        got = list(refs.get(o.index, {}))
        assert got == [n for n, _ in handle_attributes(o) if n in got], o
    assert checked > 20


def test_vehicle_parts_and_wheel_parts_are_disjoint_and_are_the_owners(physx):
    names = names_of(physx)
    seen: set[int] = set()
    for v in find_vehicles(physx):
        assert v.wheel_lists == ("wheelAttachmentSet", "physxWheelAttachmentSet")
        assert v.actor in v.parts and v.obj not in v.parts
        assert [o.index for o in v.parts] == sorted(o.index for o in v.parts)
        assert {names.owner(o) for o in v.parts} == {(v, None)}
        for k, objs in enumerate(v.wheel_parts):
            assert set(v.wheels[k]) <= set(objs)  # the list members belong to their wheel
            assert [o.cls.name for o in objs].count("TireForce") == 1
            assert {names.owner(o) for o in objs} == {(v, k)}
        mine = [o.index for o in v.parts] + [o.index for objs in v.wheel_parts for o in objs]
        assert len(set(mine)) == len(mine) and not set(mine) & seen
        seen.update(mine)
    outside = [o for o in physx.objects if names.owner(o)[0] is None]
    assert outside and all(names.path(o) == names.identity(o) for o in outside)


def test_paths_of_vehicle_objects_need_no_identities(monkeypatch):
    """Owners and the paths of vehicles' objects come from the vehicle walk alone: a 28,000-
    object fleet names its vehicles' objects without the whole-graph identities of ``pvdkit diff``."""
    import pvdkit.names

    rec = Recording.open(DATA / "vehicles_short.ovd")

    def refuse(_rec):
        raise AssertionError("identities computed")

    monkeypatch.setattr(pvdkit.names, "object_identities", refuse)
    names = names_of(rec)
    tire = rec.objects_of_class("TireForce")[0]
    assert names.path(tire) == "/World/Basic/wheel 0/TireForce" and names.owner(tire)[1] == 0
    assert [v.path for v in vehicles(rec)[0].wheels] == [f"/World/Basic/wheel {k}" for k in range(4)]
    with pytest.raises(AssertionError, match="identities"):
        names.path(rec.objects_of_class("PxScene")[0])


def test_a_growing_recording_is_walked_again():
    """A live recording fed in pieces: vehicles, owners and paths follow what has arrived, and
    end equal to those of the whole file."""
    data = (DATA / "vehicles_short.ovd").read_bytes()
    whole = Recording.open(DATA / "vehicles_short.ovd")
    live = Recording.stream("pieces")
    counts = []
    for start in range(0, len(data), 40_000):
        live.feed(data[start:start + 40_000])
        counts.append(len(find_vehicles(live)))
        names = names_of(live)
        assert names.vehicles is find_vehicles(live)
        if counts[-1]:
            assert names.owner(names.vehicles[0].obj) == (names.vehicles[0], None)
    live.finish()
    assert counts[0] < 4 == counts[-1] and counts == sorted(counts)
    want, got = names_of(whole), names_of(live)
    assert [(v.name, v.kind, v.nb_wheels) for v in got.vehicles] == [(n, k, 4) for n, k in VEHICLES]
    assert [got.path(o) for o in live.objects] == [want.path(o) for o in whole.objects]


def test_a_subclass_builds_its_own_wheels():
    """``Vehicle.of`` builds an application's own vehicle and wheel views (the viewer's add
    labels and axes) over the same discovery."""
    from dataclasses import dataclass

    from pvdkit.names import Vehicle, Wheel

    @dataclass(eq=False, repr=False)
    class MyWheel(Wheel):
        label: str = "?"

    class MyVehicle(Vehicle):
        wheel_type = MyWheel

    rec = Recording.open(DATA / "vehicles_short.ovd")
    names = names_of(rec)
    mine = [MyVehicle.of(info, names) for info in names.vehicles]
    assert [v.name for v in mine] == [v.name for v in vehicles(rec)]
    w = mine[3].wheels[1]
    assert isinstance(w, MyWheel) and w.label == "?" and w.vehicle is mine[3]
    assert w.object("TireForce") is vehicles(rec)[3].wheels[1].object("TireForce")


def test_attribute_specs_resolve_against_the_recording():
    rec = Recording.open(DATA / "vehicles_short.ovd")
    spec = resolve_spec(rec, "TireForce.lngForce[z]")
    assert (spec.cls.name, spec.attr, spec.element, spec.leaf.name, spec.leaf.count) == (
        "TireForce", "lngForce", 2, "lngForce", 3)
    assert resolve_spec(rec, "WheelRigidBodyState.rotationSpeed").element is None
    # Each way to get it wrong says what to type instead.
    with pytest.raises(PvdError, match=r"no class 'TireFroce' \(in 'TireFroce.lngForce'\); did you mean T"):
        resolve_spec(rec, "TireFroce.lngForce")
    with pytest.raises(PvdError, match=r"class TireForce has no attribute 'lngForse'; did you mean lngForce"):
        resolve_spec(rec, "TireForce.lngForse")
    with pytest.raises(PvdError, match=r"got 'lngForce'; did you mean TireForce.lngForce\?"):
        resolve_spec(rec, "lngForce")
    with pytest.raises(PvdError, match=r"class TireForce has no attribute 'zzz'; it has: "):
        resolve_spec(rec, "TireForce.zzz")
