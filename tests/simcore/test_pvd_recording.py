"""simcore recording itself through PVD: object graph, values per step, params on change, bytes.

The reference for values is the Python API (``vehicle.states``) after each step; the reference
for the object graph is PhysX's own recording of a direct-drive vehicle
(``tests/data/vehicles_short.ovd``, vehicle ``/World/Basic``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pvdkit.ovd.codec import SetAttribute, encode_command, iter_decode
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.writer import OmniPvdWriter
from simcore.presets import load_preset
from simcore.pvd.graph import PvdGraphError
from simcore.pvd.recorder import PvdRecorder
from simcore.pvd.registry import register_schema
from simcore.pvd.schema import SCHEMA
from simcore.road.geometry import PlaneRoad
from simcore.scenarios import get_scenario
from simcore.vehicle import Vehicle

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"
DT = 1.0 / 60.0
STEPS = 8


def f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).astype(np.float32)


class Run:
    """A recorded run: the stream bytes and the Python API's states after every step."""

    def __init__(self, preset: str, scenario: str, steps: int = STEPS, timestamps: str = "ns") -> None:
        self.vehicle = Vehicle(load_preset(preset))
        self.stream = MemoryStream()
        self.recorder = PvdRecorder(OmniPvdWriter(self.stream), timestamps=timestamps)
        self.component = self.recorder.attach(self.vehicle)
        self.states = []
        self.times = []
        sc = get_scenario(scenario)
        sc.run(self.vehicle, DT, steps * DT, after_step=self._snapshot)
        self.recorder.close()
        self.data = self.stream.getvalue()
        self.rec = Recording.open(self.data)

    def _snapshot(self, i: int) -> None:
        self.states.append(self.vehicle.states.copy())
        self.times.append(self.vehicle.time)

    def series(self, obj_name: str, attribute: str) -> tuple[np.ndarray, np.ndarray]:
        s = self.rec.series(self.rec.find_object(obj_name), attribute)
        return np.asarray(s.frames), np.asarray(s.raw)


@pytest.fixture(scope="module")
def direct() -> Run:
    return Run("sedan", "step-steer")


@pytest.fixture(scope="module")
def engine() -> Run:
    return Run("sedan_engine", "accelerate", steps=6)


# --------------------------------------------------------------------------------------------
# Values: every wheel, every step, as the Python API reports them
# --------------------------------------------------------------------------------------------

# (object name pattern, attribute, value from the Python API's states for wheel w)
WHEEL_CHECKS = [
    ("WheelRigidBody1dState{w}", "rotationSpeed", lambda s, w: s.wheel_rigid_body_1d.rotation_speed[w]),
    ("WheelRigidBody1dState{w}", "correctedRotationSpeed",
     lambda s, w: s.wheel_rigid_body_1d.corrected_rotation_speed[w]),
    ("WheelRigidBody1dState{w}", "rotationAngle", lambda s, w: s.wheel_rigid_body_1d.rotation_angle[w]),
    ("WheelLocalPoseState{w}", "posInRbodyFrame", lambda s, w: s.wheel_local_pose.pos[w]),
    ("WheelLocalPoseState{w}", "quatInRbodyFrame", lambda s, w: s.wheel_local_pose.quat[w]),
    ("WheelActuationState{w}", "isDriveApplied", lambda s, w: s.wheel_actuation.is_drive_applied[w]),
    ("RoadGeometryState{w}", "plane", lambda s, w: s.road_geometry.plane[w]),
    ("RoadGeometryState{w}", "hitState", lambda s, w: s.road_geometry.hit_state[w]),
    ("SuspState{w}", "jounce", lambda s, w: s.suspension.jounce[w]),
    ("SuspState{w}", "jounceSpeed", lambda s, w: s.suspension.jounce_speed[w]),
    ("SuspForce{w}", "force", lambda s, w: s.suspension_force.force[w]),
    ("SuspForce{w}", "normalForce", lambda s, w: s.suspension_force.normal_force[w]),
    ("TireDirectionState{w}", "latDir", lambda s, w: s.tire_direction.directions[w, 1]),
    ("TireSpeedState{w}", "lngSpeed", lambda s, w: s.tire_speed.speed_states[w, 0]),
    ("TireSlipState{w}", "latSlip", lambda s, w: s.tire_slip.slips[w, 1]),
    ("TireStickyState{w}", "lngStickyTimer", lambda s, w: s.tire_sticky.low_speed_time[w, 0]),
    ("TireGripState{w}", "load", lambda s, w: s.tire_grip.load[w]),
    ("TireCamberState{w}", "camberAngle", lambda s, w: s.tire_camber.camber_angle[w]),
    ("TireForce{w}", "lngForce", lambda s, w: s.tire_force.forces[w, 0]),
    ("TireForce{w}", "latForce", lambda s, w: s.tire_force.forces[w, 1]),
    ("TireForce{w}", "wheelTorque", lambda s, w: s.tire_force.wheel_torque[w]),
    ("PhysXConstraintState{w}", "suspGeometricError", lambda s, w: s.constraints.susp_geometric_error[w]),
]

VEHICLE_CHECKS = [
    ("RigidBodyState", "pos", lambda s: s.rigid_body.pos),
    ("RigidBodyState", "quat", lambda s: s.rigid_body.quat),
    ("RigidBodyState", "linvel", lambda s: s.rigid_body.linear_velocity),
    ("RigidBodyState", "angvel", lambda s: s.rigid_body.angular_velocity),
    ("SteerCommandResponseStates", "wheelStates0To3", lambda s: s.steer_command_response.response[:4]),
    ("BrakeCommandResponseStates", "wheelStatess4To7", lambda s: np.zeros(4)),
    ("DirectDriveCommandState", "steer", lambda s: s.commands.steer),
    ("DirectDriveCommandState", "throttle", lambda s: s.commands.throttle),
    ("DirectDriveTransmissionCommandState", "gear", lambda s: s.direct_drive_transmission.gear),
    ("DirectDriveThrottleResponseState", "responseState0To3",
     lambda s: s.direct_drive_throttle_response.response),
    ("AntiRollTorque", "torque", lambda s: s.anti_roll_force.torque),
]


@pytest.mark.parametrize(("pattern", "attribute", "get"), WHEEL_CHECKS,
                         ids=[f"{p.split('{')[0]}.{a}" for p, a, _ in WHEEL_CHECKS])
def test_every_wheel_every_step_equals_python_api(direct, pattern, attribute, get):
    n = direct.vehicle.nb_wheels
    for w in range(n):
        frames, values = direct.series(pattern.format(w=w), attribute)
        np.testing.assert_array_equal(frames, np.arange(STEPS), err_msg=f"{pattern} {w}: a sample per frame")
        expected = np.array([np.asarray(get(s, w), dtype=np.float64) for s in direct.states])
        got = values.reshape(expected.shape)
        if expected.dtype == bool or attribute in ("hitState", "isDriveApplied"):
            np.testing.assert_array_equal(got, expected.astype(got.dtype), err_msg=f"{pattern} wheel {w}")
        else:
            np.testing.assert_array_equal(got, f32(expected), err_msg=f"{pattern} wheel {w} (float32 of API)")


@pytest.mark.parametrize(("name", "attribute", "get"), VEHICLE_CHECKS,
                         ids=[f"{n}.{a}" for n, a, _ in VEHICLE_CHECKS])
def test_vehicle_states_every_step_equal_python_api(direct, name, attribute, get):
    _, values = direct.series(name, attribute)
    expected = np.array([np.asarray(get(s), dtype=np.float64) for s in direct.states])
    np.testing.assert_array_equal(values.reshape(expected.shape), f32(expected).astype(values.dtype))


def test_the_scenario_really_moves_the_car(direct):
    """Guard against comparing zeros with zeros: the values recorded do change."""
    _, steer = direct.series("SteerCommandResponseStates", "wheelStates0To3")
    _, speed = direct.series("WheelRigidBody1dState0", "rotationSpeed")
    _, force = direct.series("TireForce0", "lngForce")
    assert speed.ravel()[0] > 40.0  # rolling at 15 m/s on 0.34 m wheels
    assert np.ptp(force[:, 0]) > 1.0 or np.ptp(force[:, 2]) > 1.0
    assert steer.shape == (STEPS, 4)


def test_frames_carry_the_simulated_time(direct):
    ts = direct.rec.frames.time(np.arange(len(direct.rec.frames)))
    np.testing.assert_array_equal(ts, np.round(np.array(direct.times) * 1e9).astype(np.int64))
    _, t = direct.series("Simulation", "time")
    np.testing.assert_array_equal(t, np.array(direct.times))
    _, step = direct.series("Simulation", "step")
    np.testing.assert_array_equal(step.ravel(), np.arange(1, STEPS + 1))


def test_frame_timestamps_can_follow_physx():
    run = Run("sedan", "idle", steps=3, timestamps="frame")
    np.testing.assert_array_equal(run.rec.frames.time(np.arange(3)), [1, 2, 3])


def test_engine_drive_values(engine):
    _, omega = engine.series("EngineState", "rotationSpeed")
    np.testing.assert_array_equal(omega.ravel(), f32([s.engine.rotation_speed for s in engine.states]))
    _, gear = engine.series("GearboxState", "currentGear")
    np.testing.assert_array_equal(gear.ravel(), [s.gearbox.current_gear for s in engine.states])
    _, target = engine.series("EngineDriveTransmissionCommandState", "targetGear")
    assert set(target.ravel()) == {255}  # the scenario drives in automatic
    ratios = engine.rec.find_object("GearboxParams").value_at("ratios", 0)
    p = engine.vehicle.params.gearbox
    np.testing.assert_array_equal(ratios[: len(p.ratios)], f32(p.ratios))
    assert np.all(ratios[len(p.ratios):] == np.finfo(np.float32).max)
    assert not engine.rec.objects_of_class("DirectDrivetrain")


# --------------------------------------------------------------------------------------------
# Object graph: PhysX's
# --------------------------------------------------------------------------------------------


#: Objects PhysX has because of its PhysX actor (no such thing in simcore): wheel shapes,
#: material frictions, query filter data, the actor, its steer state, and PhysX's scene objects.
PHYSX_ONLY = {"PhysXMaterialFriction", "PhysXRoadGeometryQueryFilterData", "PhysXRigidActor",
              "PhysXSteerState", "PhysXRoadGeomState", "PhysXWheelShape"}


def links(rec: Recording, root) -> set[tuple[str, str, str, str]]:
    """(owner name, attribute, target class, target name) reachable from ``root`` at the end,
    PhysX-actor objects left out."""
    frame = len(rec.frames) - 2
    out: set[tuple[str, str, str, str]] = set()
    todo, seen = [root], set()
    while todo:
        o = todo.pop()
        if o.handle in seen:
            continue
        seen.add(o.handle)
        for attribute, value in o.state_at(frame).items():
            a = o.cls.all_attributes().get(attribute) if o.cls is not None else None
            if a is None or a.data_type is None or a.data_type.name != "OBJECT_HANDLE":
                continue
            handles = value if isinstance(value, list) else [value]
            for h in handles:
                target = rec.resolve(int(h), frame) if h else None
                if target is None or target.cls.name in PHYSX_ONLY or target.cls.name.startswith("Px"):
                    continue
                out.add((o.name, attribute, target.cls.name, target.name))
                todo.append(target)
    return out


@pytest.fixture(scope="module")
def physx_links() -> set[tuple[str, str, str, str]]:
    rec = Recording.open(FIXTURE)
    return links(rec, rec.objects_of_class("Vehicle")[0])  # /World/Basic, direct drive


def test_object_graph_is_physx_graph(direct, physx_links):
    ours = links(direct.rec, direct.rec.objects_of_class("Vehicle")[0])
    # simcore's sedan also has Ackermann params and anti-roll torque, which /World/Basic lacks.
    extra = {e for e in ours - physx_links if e[2] in ("AckermannParams", "AntiRollForce")}
    assert len(extra) == 2
    assert ours - extra == physx_links
    assert len(ours) >= 100


def test_object_names_are_physx_names(direct):
    names = {o.name for o in direct.rec.objects}
    for n in ("Vehicle", "WheelAttachment3", "WheelRigidBody1dState0", "SuspParams2", "TireForce1",
              "BrakeComandResponseParams1", "SteerCommandResponseStates", "DirectDrivetrain",
              "PhysxWheelAttachment0", "PhysXSuspLimtConstraintParams3", "PhysxRoadGeomQryParams"):
        assert n in names, n
    handles = [o.handle for o in direct.rec.objects]
    assert len(set(handles)) == len(handles) and min(handles) == 1


def test_simcore_objects_link_the_recording(direct):
    sim = direct.rec.find_object("Simulation")
    state = sim.state_at(0)
    vehicle = direct.rec.objects_of_class("Vehicle")[0]
    assert state["vehicles"] == [vehicle.handle]
    road = direct.rec.resolve(state["roads"][0])
    assert road.cls.name == "PlaneRoad"
    p = direct.vehicle.road
    np.testing.assert_array_equal(road.value_at("normal", 0), p.normal)
    context = direct.rec.resolve(state["contexts"][0])
    np.testing.assert_array_equal(context.value_at("gravity", 0), direct.vehicle.context.gravity)
    assert context.value_at("lngAxis", 0) is not None


# --------------------------------------------------------------------------------------------
# Params on change, states every frame
# --------------------------------------------------------------------------------------------


def count_sets(data: bytes) -> dict[tuple[int, tuple[int, ...]], int]:
    out: dict[tuple[int, tuple[int, ...]], int] = {}
    for _, c in iter_decode(data):
        if isinstance(c, SetAttribute):
            out[(c.object, c.path)] = out.get((c.object, c.path), 0) + 1
    return out


def test_params_are_written_once_and_states_every_frame(direct):
    radius = direct.rec.series(direct.rec.find_object("WheelParams0"), "radius")
    assert len(radius) == 1
    assert float(radius.raw[0]) == pytest.approx(direct.vehicle.params.wheel.radius[0], rel=1e-7)
    jounce = direct.rec.series(direct.rec.find_object("SuspState0"), "jounce")
    assert len(jounce) == STEPS


def test_changed_params_are_written_again_and_only_the_changed_values():
    car = Vehicle(load_preset("sedan"))
    stream = MemoryStream()
    recorder = PvdRecorder(OmniPvdWriter(stream))
    recorder.attach(car)
    car.place_on_road()
    car.step(DT)
    car.step(DT)
    wheel = car.params.wheel
    new_wheel = replace(wheel, radius=wheel.radius * np.array([1.0, 1.1, 1.0, 1.0]))
    car.params = car.params.replace(wheel=new_wheel)
    car.step(DT)
    car.step(DT)
    recorder.close()
    rec = Recording.open(stream.getvalue())
    r1 = rec.series(rec.find_object("WheelParams1"), "radius")
    assert list(r1.frames) == [0, 2]
    assert float(r1.raw[1]) == pytest.approx(wheel.radius[1] * 1.1, rel=1e-6)
    assert len(rec.series(rec.find_object("WheelParams0"), "radius")) == 1
    assert len(rec.series(rec.find_object("WheelParams1"), "mass")) == 1


def test_payload_sizes_are_physx_sizes(direct):
    """PhysX writes 4 floats into the 3-element wheelAttachmentQuat and 1 float into the
    3-element normalForce / aligningMoment / wheelTorque; simcore writes the same."""
    rec = direct.rec
    sizes = {}
    for obj, attr in (("SuspParams0", "wheelAttachmentQuat"), ("SuspForce0", "normalForce"),
                      ("TireForce0", "aligningMoment"), ("TireForce0", "wheelTorque"),
                      ("DirectDriveCommandState", "brakes")):
        s = rec.series(rec.find_object(obj), attr)
        sizes[attr] = int(s.samples.sizes()[0])
    assert sizes == {"wheelAttachmentQuat": 16, "normalForce": 4, "aligningMoment": 4, "wheelTorque": 4,
                     "brakes": 8}


# --------------------------------------------------------------------------------------------
# Bytes
# --------------------------------------------------------------------------------------------


def test_stream_decodes_and_reencodes_to_the_same_bytes(direct):
    """Every command of a simcore recording decodes and encodes back to its exact bytes (the
    pre-encoded state blocks are well-formed commands)."""
    out = bytearray(direct.data[:12])
    for _, c in iter_decode(direct.data):
        out += encode_command(c)
    assert bytes(out) == direct.data


def test_state_block_matches_the_writers_own_encoding(direct):
    """A frame's state block holds exactly what OmniPvdWriter.set_attribute writes for the
    same values (raw payloads only where PhysX's payload size differs from its registration)."""
    block = bytes(direct.recorder._vehicles[id(direct.component)].states.buffer)
    ref = MemoryStream()
    w = OmniPvdWriter(ref)
    register_schema(w, SCHEMA)
    start = len(ref)
    raw = 0
    for _, c in iter_decode(direct.data[:12] + block):
        info = w.attribute_info(c.path[-1])
        values = np.frombuffer(c.data, dtype=info.data_type.numpy_dtype)
        if len(values) == info.nb_elements:
            w.set_attribute(c.context, c.object, c.path, values)
        else:
            w.set_attribute_bytes(c.context, c.object, c.path, c.data)
            raw += 1
    assert ref.getvalue()[start:] == block
    assert raw == 4 * 3  # normalForce, aligningMoment and wheelTorque of each wheel


# --------------------------------------------------------------------------------------------
# Several vehicles, errors
# --------------------------------------------------------------------------------------------


def test_two_vehicles_in_one_frame_share_road_and_context():
    params = load_preset("sedan")
    road = PlaneRoad.ground(params.frame)
    a, b = Vehicle(params, road=road), Vehicle(params, road=road, context=None)
    b.context = a.context
    stream = MemoryStream()
    recorder = PvdRecorder(OmniPvdWriter(stream))
    recorder.attach(a)
    recorder.attach(b)
    for k in range(3):
        with recorder.frame((k + 1) * DT):
            a.step(DT)
            b.step(DT)
    recorder.close()
    rec = Recording.open(stream.getvalue())
    assert len(rec.frames) == 3
    assert len(rec.objects_of_class("Vehicle")) == 2
    assert len(rec.objects_of_class("PlaneRoad")) == 1
    assert len(rec.objects_of_class("SimulationContext")) == 1
    sim = rec.find_object("Simulation").state_at(2)
    assert len(sim["vehicles"]) == 2 and len(sim["roads"]) == 1
    speeds = [rec.series(o, "rotationSpeed") for o in rec.objects_of_class("WheelRigidBodyState")]
    assert len(speeds) == 8 and all(len(s) == 3 for s in speeds)


def test_a_state_that_disappears_is_reported():
    car = Vehicle(load_preset("sedan"))
    recorder = PvdRecorder(OmniPvdWriter(MemoryStream()))
    component = recorder.attach(car)
    car.step(DT)
    car.states.tire_force = None
    with pytest.raises(PvdGraphError, match="TireForce: the vehicle's source became None"):
        component.update(DT, car.context)


def test_recorder_rejects_bad_settings_and_use_after_close():
    with pytest.raises(ValueError, match="timestamps must be one of"):
        PvdRecorder(OmniPvdWriter(MemoryStream()), timestamps="seconds")
    recorder = PvdRecorder(OmniPvdWriter(MemoryStream()))
    car = Vehicle(load_preset("sedan"))
    recorder.attach(car)
    car.step(DT)
    recorder.close()
    from pvdkit.types import PvdError

    with pytest.raises(PvdError, match="after close"):
        car.step(DT)


def test_anti_roll_bars_are_items_of_the_vehicle():
    from simcore.suspension.params import AntiRollBarParams

    params = load_preset("sedan")
    params = params.replace(anti_roll_bars=(AntiRollBarParams(0, 1, 1500.0), AntiRollBarParams(2, 3, 700.0)))
    car = Vehicle(params)
    stream = MemoryStream()
    with PvdRecorder(OmniPvdWriter(stream)) as recorder:
        recorder.attach(car)
        car.place_on_road()
        car.step(DT)
    rec = Recording.open(stream.getvalue())
    bars = {o.name: o for o in rec.objects_of_class("AntiRollParams")}
    assert set(bars) == {"AntiRollParams0", "AntiRollParams1"}
    second = bars["AntiRollParams1"]
    assert (second.value_at("wheel0", 0), second.value_at("wheel1", 0)) == (2, 3)
    assert bars["AntiRollParams0"].value_at("stiffness", 0) == 1500.0
    vehicle = rec.objects_of_class("Vehicle")[0]
    assert sorted(vehicle.value_at("antiRollSet", 0)) == sorted(o.handle for o in bars.values())


def test_two_vehicles_outside_a_shared_frame_are_reported():
    params = load_preset("sedan")
    a, b = Vehicle(params), Vehicle(params)
    from pvdkit.types import PvdError

    recorder = PvdRecorder(OmniPvdWriter(MemoryStream()))
    recorder.attach(a)
    recorder.attach(b)
    a.step(DT)
    with pytest.raises(PvdError, match="inside one `with recorder.frame"):
        b.step(DT)
