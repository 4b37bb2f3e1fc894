"""Vehicle grouping, property rows and top-down geometry on the real PhysX fixture and on
small recordings written for the purpose (other shapes, other up axes)."""

from __future__ import annotations

import numpy as np
import pytest

from pvdkit.types import PvdError
from tests.viewer.conftest import VEHICLE_NAMES, WHEEL_NAMES, write_recording
from viewer.model.geometry import Axis, GroundPlane, axis_from_name, quat_multiply, quat_rotate
from viewer.model.properties import PropertyModel, element_texts, format_number, pages
from viewer.model.session import RecordingSession, object_tree
from viewer.model.topdown import TopDownModel, detect_ground


def test_fixture_vehicles_are_found_with_names_wheels_and_parts(fixture_session):
    vs = fixture_session.vehicles
    assert sorted(v.name for v in vs) == sorted(f"/World/{n}" for n in VEHICLE_NAMES)
    for v in vs:
        assert len(v.wheels) == 4
        assert v.wheel_lists[0] == "wheelAttachmentSet"
        assert [w.label for w in v.wheels] == [
            "wheel 0 · front-left", "wheel 1 · front-right", "wheel 2 · rear-left", "wheel 3 · rear-right"]
        # Each wheel owns exactly one object of each per-wheel class, and no object twice.
        seen = set()
        for i, w in enumerate(v.wheels):
            assert w.root.cls.name == "WheelAttachment"
            for cname in ("WheelParams", "WheelRigidBodyState", "SuspensionState", "TireForce",
                          "PhysXWheelAttachment"):
                objs = w.parts[cname]
                assert len(objs) == 1, (v.name, i, cname)
            ids = {o.index for o in w.objects()}
            assert not ids & seen
            seen |= ids
            # PhysX names a wheel's objects with the wheel's index.
            assert w.part("TireForce").name == f"TireForce{i}"
        assert v.part("RigidBodyState") is not None
        assert v.part("PxRigidDynamic").value_at("name", 0) == v.name
        assert (v.part("EngineState") is not None) == (v.name in ("/World/Standard", "/World/Tank"))
        # README: Y-up, +Z forward, so left is +X.
        assert (str(v.axes.lng), str(v.axes.lat), str(v.axes.vrt)) == ("+Z", "+X", "+Y")


def test_vehicle_of_and_find(fixture_session):
    s = fixture_session
    basic = s.vehicle_named("/World/Basic")
    tire = basic.wheels[2].part("TireForce")
    assert s.vehicle_of(tire) == (basic, basic.wheels[2])
    assert s.vehicle_of(basic.part("RigidBodyState")) == (basic, None)
    assert s.vehicle_of(basic.obj) == (basic, None)
    scene = s.recording.objects_of_class("PxScene")[0]
    assert s.vehicle_of(scene) == (None, None)
    assert s.find("/World/Basic") is basic.obj
    assert s.find(hex(tire.handle)) is tire
    with pytest.raises(PvdError, match="no object '/World/Nope'"):
        s.find("/World/Nope")
    assert s.find("/World/Basic/wheel 2/TireForce") is tire
    # A name four vehicles share is refused, listing where each is (never a silent first pick).
    with pytest.raises(PvdError, match=r"'TireForce2' is ambiguous: 4 objects match: '/World/Basic/wheel 2/"
                                       r"TireForce' .*'/World/Tank/wheel 2/TireForce'"):
        s.find("TireForce2")
    assert "wheel 2 · rear-left of /World/Basic" in s.describe(tire)


def test_object_tree_groups_wheels_under_vehicles_and_filters(fixture_session):
    roots = object_tree(fixture_session)
    assert [r.label for r in roots] == ["Vehicles", "Classes"]
    basic = next(n for n in roots[0].children if n.label == "/World/Basic")
    assert [c.label for c in basic.children] == ["chassis & drivetrain"] + [
        f"wheel {i} · {p}" for i, p in enumerate(("front-left", "front-right", "rear-left", "rear-right"))]
    wheel0 = basic.children[1]
    assert any(n.obj is not None and n.obj.name == "TireForce0" for n in wheel0.children)
    classes = {c.label: c for c in roots[1].children}
    assert classes["TireForce"].count == 16 and len(classes["TireForce"].children) == 16
    # Filter: only matching objects remain, under their vehicle and class.
    roots = object_tree(fixture_session, "tireforce2")
    names = [n.obj.name for r in roots for n in r.walk() if n.kind == "object"]
    assert names and all(n == "TireForce2" for n in names)
    roots = object_tree(fixture_session, "rear-right")
    wheels = [n for n in roots[0].walk() if n.kind == "wheel"]
    assert len(wheels) == 4 and all(w.label.endswith("rear-right") for w in wheels)
    capped = object_tree(fixture_session, max_children=5)
    tf = next(c for c in capped[1].children if c.label == "TireForce")
    assert tf.children[-1].kind == "more" and tf.hidden == 11


def test_synthetic_vehicle_shape_from_a_plain_wheel_list(tmp_path):
    s = RecordingSession.open(write_recording(tmp_path / "z.ovd", 20, 10_000_000, up="z"))
    (v,) = s.vehicles
    assert v.name == "car" and [w.root.name for w in v.wheels] == ["car/wheel0", "car/wheel1"]
    assert [w.label for w in v.wheels] == ["wheel 0 · wheel0", "wheel 1 · wheel1"]
    assert v.wheel_objects("Wheel")[1][1].name == "car/wheel1"


def test_property_rows_follow_zero_order_hold_and_mark_frames_written(fixture_session, readback):
    pm = PropertyModel(fixture_session.recording)
    basic = fixture_session.vehicle_named("/World/Basic")
    for i, wname in enumerate(WHEEL_NAMES):
        state = basic.wheels[i].part("WheelRigidBodyState")
        for step in (0, 5, 11):
            rows = {r.name: r for r in pm.rows(state, 2 * step)}
            r = rows["correctedRotationSpeed"]
            expected = readback[f"Basic.{wname}.rotationSpeed"][step]
            assert r.kind == "number" and r.text == format_number(np.float32(expected).item())
            assert r.set_here and r.set_frame == 2 * step
            # The rigid-body frame after it writes no wheel state: same value, not highlighted.
            nxt = {x.name: x for x in pm.rows(state, 2 * step + 1)}["correctedRotationSpeed"]
            assert nxt.text == r.text and not nxt.set_here and nxt.set_frame == 2 * step


def test_property_rows_kinds_references_enums_flags(fixture_session):
    rec = fixture_session.recording
    pm = PropertyModel(rec)
    basic = fixture_session.vehicle_named("/World/Basic")
    rows = {r.name: r for r in pm.rows(basic.obj, 3)}
    ref = rows["rigidBodyState"]
    assert ref.kind == "ref" and ref.refs[0][1] is basic.part("RigidBodyState")
    lst = rows["wheelAttachmentSet"]
    assert lst.kind == "list" and [t for _, t in lst.refs] == [w.root for w in basic.wheels]
    assert rows["ackermannParams"].kind == "unset" and rows["ackermannParams"].text == "—"
    actor = {r.name: r for r in pm.rows(basic.part("PxRigidDynamic"), 3)}
    assert actor["type"].kind == "enum" and actor["type"].text == "eRIGID_DYNAMIC"
    assert actor["flags"].kind == "flags" and actor["flags"].text == "eDISABLE_GRAVITY"
    assert actor["name"].text == "'/World/Basic'"
    assert actor["globalPose"].kind == "array" and actor["globalPose"].n_elements == 7
    assert actor["mass"].text == "1800" and actor["mass"].type_text == "float32"
    assert actor["linearVelocity"].kind == "vector" and actor["linearVelocity"].type_text == "float32×3"
    wheel = {r.name: r for r in pm.rows(basic.wheels[0].part("WheelActuationState"), 3)}
    brake = wheel["isBrakeApplied"]  # a PhysX boolean (enum class WheelStateBool): True / False
    assert (brake.kind, brake.text, brake.type_text) == ("enum", "False", "enum WheelStateBool")
    assert wheel["isDriveApplied"].text == "True"
    assert pages(70, 32) == [(0, 32), (32, 64), (64, 70)]
    assert element_texts(np.array([1.5, 2.0, 3.25]), 1, 3) == [("[1]", "2"), ("[2]", "3.25")]


def test_geometry_helpers():
    assert axis_from_name("ePosY") == Axis(1, 1) and axis_from_name("eNegZ") == Axis(2, -1)
    assert axis_from_name("-x") == Axis(0, -1) and axis_from_name("up") is None
    q90z = np.array([0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)])
    np.testing.assert_allclose(quat_rotate(q90z, [1, 0, 0]), [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(quat_rotate(quat_multiply(q90z, q90z), [1, 0, 0]), [-1, 0, 0], atol=1e-12)
    for up in (Axis(0), Axis(1), Axis(2), Axis(2, -1)):
        g = GroundPlane(up, "t")
        # Looking down from above: screen right × screen up = world up (never a mirror image).
        np.testing.assert_array_equal(np.cross(g.u.vector, g.v.vector), up.vector)


def test_topdown_physx_fixture_y_up(fixture_session):
    td = TopDownModel(fixture_session)
    assert str(td.ground.up) == "+Y" and "gravity" in td.ground.source
    shapes = {s.vehicle.name: s for s in td.shapes_at(23)}
    assert len(shapes) == 4
    rec = fixture_session.recording
    for name, s in shapes.items():
        v = fixture_session.vehicle_named(name)
        pos = rec.value_at(v.part("RigidBodyState"), "pos", 23)
        np.testing.assert_allclose(s.centre, [pos[2], pos[0]], atol=1e-6)  # view = (Z, X)
        assert s.heading[0] > 0.99  # +Z forward points right
        front = np.mean([s.wheels[i].mean(axis=0) for i in (0, 1)], axis=0)
        rear = np.mean([s.wheels[i].mean(axis=0) for i in (2, 3)], axis=0)
        assert front[0] - rear[0] == pytest.approx(3.2, abs=0.01)  # wheelbase from posInRbodyFrame
        left = s.wheels[0][:-1].mean(axis=0)
        right = s.wheels[1][:-1].mean(axis=0)
        assert left[1] - right[1] == pytest.approx(1.6, abs=0.01)  # track; left is +X = screen up
    traj = td.trajectory(td.geometries[0])
    assert len(traj) == 12 and np.ptp(traj[:, 1]) < 0.1  # no jump from a placeholder pose


def test_topdown_z_up_recording_without_gravity(tmp_path):
    s = RecordingSession.open(write_recording(tmp_path / "z.ovd", 50, 10_000_000, up="z"))
    assert str(s.ground.up) == "+Z" and s.ground.source == "least vehicle motion"
    td = TopDownModel(s)
    (shape,) = td.shapes_at(49)
    assert shape.centre[0] == pytest.approx(10 * 0.5, abs=1e-5)  # moved along X = screen right
    assert shape.heading[0] == pytest.approx(1.0)
    y = RecordingSession.open(write_recording(tmp_path / "y.ovd", 50, 10_000_000, up="y"))
    assert str(y.ground.up) == "+Y"
    assert str(detect_ground(y, "z").up) == "+Z"
    with pytest.raises(ValueError, match="up axis"):
        detect_ground(y, "sideways")
