"""The PhysX layout: with the actor layer on, simcore records what a PhysX recording holds —
two frames per step, the chassis as a ``PxRigidDynamic`` registered as PhysX registers it, and
the Vehicle's PhysX links — so that the two compare object by object."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import simcore
from pvdkit.h5 import H5Stream
from pvdkit.recording import Class, Recording
from pvdkit.streams import OvdFileStream
from pvdkit.writer import OmniPvdWriter
from simcore.physx_actor import PhysXActorParams, SubstepRule
from simcore.presets import load_preset
from simcore.pvd.recorder import PvdRecorder
from simcore.pvd.schema import PHYSX_SCHEMA, PX_MAX_F32, Role, Scope
from simcore.vehicle import Vehicle, default_context

DATA = Path(__file__).resolve().parents[1] / "data"
PHYSX_OVD = DATA / "vehicles_short.ovd"
DT = 1 / 60
STEPS = 30
NAME = "/World/Standard"

#: PhysX classes written in the PhysX layout (and their bases / link targets).
PHYSX_CLASSES = ("PxActor", "PxRigidActor", "PxRigidBody", "PxRigidDynamic", "PhysXRigidActor",
                 "PhysXSteerState", "PhysXMaterialFriction", "PhysXWheelAttachment", "PhysXConstraintState",
                 "PhysXSuspLimitConstraintParams", "Vehicle")
#: Attributes of the written classes that simcore leaves out (no source: shapes, bounds, CCD …).
LEFT_OUT = {"shapes", "worldBounds", "dominance", "ownerClient", "environmentID", "minCCDAdvanceCoefficient",
            "maxDepenetrationVelocity", "maxContactImpulse", "contactSlopCoefficient", "force", "torque",
            "stabilizationThreshold", "rigidDynamicLockFlags", "contactReportThreshold", "material"}


def _params() -> Any:
    p = load_preset("sedan")  # Y up: PhysX's sample vehicles' centre of mass is 0.25 below the origin
    return p.replace(physx_actor=PhysXActorParams(cmass_local_pos=[0, -0.25, 0]))


def _context(p: Any) -> Any:
    return replace(default_context(p.frame, p.scale), substep_rule=SubstepRule())


def _record(path: Path, stream: Any) -> tuple[Recording, list[Any], list[Any], Path]:
    p = _params()
    v = Vehicle(p, context=_context(p))
    actors, bodies = [], []
    with PvdRecorder(OmniPvdWriter(stream), timestamps="frame") as rec:
        rec.attach(v, vehicle_name=NAME)
        v.place_on_road()
        v.commands.throttle = 0.5
        for i in range(STEPS):
            v.commands.steer = 0.3 if i >= 15 else 0.0
            v.step(DT)
            actors.append(v.states.physx_actor.copy())
            rb = v.states.rigid_body
            bodies.append({k: np.array(getattr(rb, k)) for k in ("pos", "quat", "linear_velocity")})
    return Recording.open(path), actors, bodies, path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``kind -> (recording, actor state per step, rigid body per step, path)``."""
    d = tmp_path_factory.mktemp("physx_layout")
    ovd, h5 = d / "actor.ovd", d / "actor.h5"
    return {"ovd": _record(ovd, OvdFileStream(str(ovd))),
            "h5": _record(h5, H5Stream(str(h5), compact=False))}


@pytest.fixture(scope="module")
def physx() -> Recording:
    return Recording.open(PHYSX_OVD)


def _by_name(rec: Recording) -> dict[str, Class]:
    return {c.name: c for c in rec.classes.values()}


@pytest.mark.parametrize("kind", ["ovd", "h5"])
def test_two_frames_per_step_with_physx_counters(recorded: dict, kind: str) -> None:
    rec = recorded[kind][0]
    assert len(rec.frames) == 2 * STEPS
    np.testing.assert_array_equal(rec.frames.time(np.arange(2 * STEPS)), np.arange(1, 2 * STEPS + 1))


@pytest.mark.parametrize("kind", ["ovd", "h5"])
def test_actor_after_the_solve_and_vehicle2_state_before(recorded: dict, kind: str) -> None:
    rec, actors, bodies, _ = recorded[kind]
    (actor,) = rec.objects_of_class("PxRigidDynamic")
    (body,) = rec.objects_of_class("RigidBodyState")
    for i in range(STEPS):
        s = actor.state_at(2 * i + 1)
        assert s["name"] == NAME
        a = actors[i]
        np.testing.assert_allclose(s["globalPose"], np.concatenate([a.quat, a.pos]), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(s["linearVelocity"], a.linear_velocity, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(s["angularVelocity"], a.angular_velocity, rtol=1e-6, atol=1e-6)
        assert s["isSleeping"] == int(a.is_sleeping)
        np.testing.assert_allclose(s["wakeCounter"], a.wake_counter, rtol=1e-6)
        b = body.state_at(2 * i)
        np.testing.assert_allclose(b["pos"], bodies[i]["pos"], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(b["quat"], bodies[i]["quat"], rtol=1e-6, atol=1e-6)
        # Frame 2i: the velocity Vehicle2 hands the actor before PhysX's solve, as PhysX records it.
        np.testing.assert_allclose(actor.state_at(2 * i)["linearVelocity"], bodies[i]["linear_velocity"],
                                   rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(b["linvel"], bodies[i]["linear_velocity"], rtol=1e-6, atol=1e-6)
    # The pose is the scene's result (frame 2i+1); the params are set when the actor is made.
    assert actor.state_at(0)["globalPose"] is None
    s = actor.state_at(0)
    p = _params()
    assert s["type"] == "eRIGID_DYNAMIC" and s["flags"] == {"eDISABLE_GRAVITY"}
    assert s["rigidBodyFlags"] == {"eENABLE_GYROSCOPIC_FORCES"}
    np.testing.assert_allclose(s["cMassLocalPose"], [0, 0, 0, 1, 0, -0.25, 0])
    np.testing.assert_allclose(s["mass"], p.rigid_body.mass, rtol=1e-6)
    np.testing.assert_allclose(s["massSpaceInertiaTensor"], p.rigid_body.moi, rtol=1e-6)
    assert (s["positionIterations"], s["velocityIterations"]) == (16, 1)
    np.testing.assert_allclose(s["angularDamping"], 0.05, rtol=1e-6)
    # Params are written once (they do not change), the pose every step.
    assert len(actor.series("mass")) == 1 and len(actor.series("globalPose")) == STEPS


@pytest.mark.parametrize("kind", ["ovd", "h5"])
def test_vehicle_links_to_its_actor_and_physx_states(recorded: dict, kind: str) -> None:
    rec, actors, _, _ = recorded[kind]
    (vehicle,) = rec.objects_of_class("Vehicle")
    assert vehicle.name == "Vehicle"  # as PhysX names it; the actor carries the vehicle's name
    f = 2 * STEPS - 1
    links = vehicle.state_at(f)
    rigid = rec.resolve(links["physxRigidActor"], f)
    assert rigid.cls.name == "PhysXRigidActor"
    actor = rec.resolve(rigid.state_at(f)["rigidActor"], f)
    assert actor.cls.name == "PxRigidDynamic" and actor.state_at(f)["name"] == NAME
    steer = rec.resolve(links["physxSteerState"], f)
    np.testing.assert_allclose(steer.state_at(0)["previousSteerCommand"], actors[0].previous_steer)
    np.testing.assert_allclose(steer.state_at(f - 1)["previousSteerCommand"], 0.3, rtol=1e-6)
    attachments = [rec.resolve(h, f) for h in links["physxWheelAttachmentSet"]]
    assert len(attachments) == 4
    for i, att in enumerate(attachments):
        s = att.state_at(f)
        (friction,) = [rec.resolve(h, f) for h in s["physXMaterialFrictions"]]
        assert friction.name == f"PhysxMaterialFriction{i}_0"
        assert friction.state_at(f)["friction"] > 0
        assert rec.resolve(s["physxConstraintState"], f).cls.name == "PhysXConstraintState"
        assert rec.resolve(s["physxConstraintParams"], f).cls.name == "PhysXSuspLimitConstraintParams"


def test_registration_equals_physx(recorded: dict, physx: Recording) -> None:
    ours, theirs = _by_name(recorded["ovd"][0]), _by_name(physx)
    for name in PHYSX_CLASSES:
        a, b = ours[name], theirs[name]
        assert (a.base.name if a.base else None) == (b.base.name if b.base else None), name
        assert list(a.attributes) == list(b.attributes), name
        for attr_name, x in a.attributes.items():
            y = b.attributes[attr_name]
            assert (x.kind, x.data_type, x.count) == (y.kind, y.data_type, y.count), f"{name}.{attr_name}"
            if x.enum_class is not None or y.enum_class is not None:
                assert x.enum_class.name == y.enum_class.name
                assert x.enum_class.enum_values == y.enum_class.enum_values, f"{name}.{attr_name}"


def test_every_written_attribute_has_an_accessor() -> None:
    for decl in PHYSX_SCHEMA.object_classes():
        for owner, a in decl.all_attrs():
            if a.is_link or decl.scope == Scope.NONE:
                continue
            assert a.get is not None or a.name in LEFT_OUT, f"{owner.name}.{a.name}"
            assert decl.role_of(a) in (Role.PARAMS, Role.STATE)


def test_unspecified_steer_before_the_first_update() -> None:
    from simcore.pvd.schema import PHYSX_STEER_STATE

    class S:
        previous_steer = np.array([np.nan, 0.25])

    np.testing.assert_array_equal(PHYSX_STEER_STATE.attrs[0].get(S()), [PX_MAX_F32, 0.25])


def test_fleet_has_one_named_actor_per_member(tmp_path: Path) -> None:
    p = _params()
    names = ["/World/A", "/World/B", "/World/C"]
    fleet = simcore.Fleet([p, p, p], context=_context(p), names=names)
    path = tmp_path / "fleet.ovd"
    with PvdRecorder(OmniPvdWriter(OvdFileStream(str(path)))) as rec:
        component = rec.attach(fleet)
        fleet.place_on_road()
        fleet.commands.throttle = np.array([0.2, 0.5, 0.8])
        poses = []
        for _ in range(6):
            fleet.step(DT)
            a = fleet.states.physx_actor
            poses.append(np.concatenate([a.quat, a.pos], axis=-1).copy())
        _, block = rec.fleet_record(component)
        assert block.per_vehicle == []
        scene = rec._fleets[id(component)].scene_states
        assert scene is not None and scene.per_vehicle == []
    r = Recording.open(path)
    assert len(r.frames) == 12
    t = r.frames.time(np.arange(4))
    assert t[1] == t[0] + 1 and t[2] == round(2 * DT * 1e9)  # the scene frame: the step's time + 1 ns
    actors = {o.state_at(1)["name"]: o for o in r.objects_of_class("PxRigidDynamic")}
    assert sorted(actors) == sorted(names)
    for k, name in enumerate(names):
        last = actors[name].state_at(11)["globalPose"]
        np.testing.assert_allclose(last, poses[-1][k], rtol=1e-6, atol=1e-6)
    linked = []
    for v in r.objects_of_class("Vehicle"):
        assert v.name == "Vehicle"
        rigid = r.resolve(v.state_at(0)["physxRigidActor"], 0)
        linked.append(r.resolve(rigid.state_at(0)["rigidActor"], 0).state_at(1)["name"])
    assert linked == names  # each member's Vehicle links to its own, named actor


def test_without_the_actor_layer_one_frame_per_step(tmp_path: Path) -> None:
    p = load_preset("sedan")
    v = Vehicle(p)
    path = tmp_path / "plain.ovd"
    with PvdRecorder(OmniPvdWriter(OvdFileStream(str(path)))) as rec:
        rec.attach(v)
        v.place_on_road()
        for _ in range(3):
            v.step(DT)
        assert rec.physx_layout is False
    r = Recording.open(path)
    assert len(r.frames) == 3
    assert "PxRigidDynamic" not in _by_name(r)
    assert r.objects_of_class("PhysXRigidActor") == [] and r.objects_of_class("PhysXSteerState") == []


def test_diff(recorded: dict) -> None:
    from pvdkit.diff import compare_files, format_text

    ovd, h5 = recorded["ovd"][3], recorded["h5"][3]
    for a, b in ((ovd, ovd), (ovd, h5)):
        same = compare_files(str(a), str(b))
        assert same.equal, format_text(same)
    against_physx = compare_files(str(PHYSX_OVD), str(ovd))  # runs; PhysX's scene differs
    assert not against_physx.equal
    assert "PxRigidDynamic" in format_text(against_physx)


@pytest.mark.parametrize("kind", ["ovd", "h5"])
def test_physics_root_lists_the_actors_as_physx_does(recorded: dict, kind: str) -> None:
    """PxPhysics (name '') lists the chassis actors in ``rigidDynamics`` and the Vehicle objects
    are roots (not listed by Simulation): the graph paths of a PhysX recording, so that
    ``pvdkit diff`` pairs the objects."""
    rec = recorded[kind][0]
    (physics,) = rec.objects_of_class("PxPhysics")
    assert physics.name == ""
    (actor,) = rec.objects_of_class("PxRigidDynamic")
    assert list(physics.state_at(0)["rigidDynamics"]) == [actor.handle]
    (sim,) = rec.objects_of_class("Simulation")
    assert not sim.state_at(0).get("vehicles")


def test_actor_order_follows_the_compared_scene(tmp_path: Path) -> None:
    p = _params()
    fleet = simcore.Fleet([p, p, p], context=_context(p), names=["/World/A", "/World/B", "/World/C"])
    path = tmp_path / "order.ovd"
    with PvdRecorder(OmniPvdWriter(OvdFileStream(str(path))), actor_order=["/World/C", "/World/A"]) as rec:
        rec.attach_fleet(fleet)
        fleet.place_on_road()
        fleet.step(DT)
    r = Recording.open(path)
    (physics,) = r.objects_of_class("PxPhysics")
    names = [r.resolve(h, 1).state_at(1)["name"] for h in physics.state_at(1)["rigidDynamics"]]
    assert names == ["/World/C", "/World/A", "/World/B"]


def test_fleet_hands_each_member_s_velocity_to_its_actor_in_the_vehicle_frame(tmp_path: Path) -> None:
    p = _params()
    names = ["/World/A", "/World/B"]
    fleet = simcore.Fleet([p, p], context=_context(p), names=names)
    path = tmp_path / "handover.ovd"
    with PvdRecorder(OmniPvdWriter(OvdFileStream(str(path)))) as rec:
        rec.attach_fleet(fleet)
        fleet.place_on_road(speed=np.array([3.0, 7.0]))
        for _ in range(3):
            fleet.step(DT)
        before = fleet.states.rigid_body.linear_velocity.copy()
    r = Recording.open(path)
    actors = {o.state_at(1)["name"]: o for o in r.objects_of_class("PxRigidDynamic")}
    for k, name in enumerate(names):
        handed = actors[name].state_at(4)["linearVelocity"]  # frame 2i of the last step
        np.testing.assert_allclose(handed, before[k], rtol=1e-6, atol=1e-6)
