"""Recording a fleet: one frame per fleet step, N Vehicle2 object graphs, params on change per
vehicle, every state of every vehicle written by one assignment per (class, attribute).

The reference is the single-vehicle recorder run over each member (``fleet[i]``, a Vehicle
whose states are the fleet's rows): apart from the ``Vehicle`` objects' names and the order of
commands inside a frame, the two recordings must hold the same commands, byte for byte.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from pvdkit.ovd import iter_decode
from pvdkit.ovd.codec import AddToUniqueList, CreateObject, SetAttribute, StartFrame, StopFrame
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.writer import OmniPvdWriter
from simcore.cli.record import load_vehicle_params
from simcore.fleet.fleet import Fleet
from simcore.fleet.states import FleetStates
from simcore.presets import load_preset
from simcore.pvd.components import FleetPvdComponent, PvdComponent
from simcore.pvd.graph import PvdGraphError
from simcore.pvd.recorder import PvdRecorder
from simcore.pvd.schema import SCHEMA, Role
from simcore.road.geometry import PlaneRoad
from simcore.vehicle import Vehicle, default_context

DT = 1.0 / 60.0


def _vary(params, k: int):
    """Vehicle ``k``'s params: same topology, other mass and tire stiffness."""
    rb = replace(params.rigid_body, mass=params.rigid_body.mass * (1.0 + 0.1 * k))
    tire = replace(params.tire_force, long_stiff=params.tire_force.long_stiff * (1.0 - 0.05 * k))
    return params.replace(rigid_body=rb, tire_force=tire)


def _frames(data: bytes, vehicle_names: set[str]) -> list[tuple]:
    """Per frame: timestamps, the set of creates (Vehicle names blanked), list adds and sets."""
    out: list[tuple] = []
    creates, adds, sets, start = set(), set(), {}, None
    for _, c in iter_decode(data):
        if isinstance(c, CreateObject):
            creates.add((c.class_handle, c.object, "<vehicle>" if c.name in vehicle_names else c.name))
        elif isinstance(c, AddToUniqueList):
            adds.add((c.object, c.path, c.data))
        elif isinstance(c, SetAttribute):
            key = (c.object, c.path)
            assert key not in sets, f"{key} set twice in one frame"
            sets[key] = c.data
        elif isinstance(c, StartFrame):
            start = c.timestamp
        elif isinstance(c, StopFrame):
            out.append((start, c.timestamp, frozenset(creates), frozenset(adds), sets))
            creates, adds, sets = set(), set(), {}
    return out


def _fleet_and_members(fleet: Fleet, steps: int,
                       drive) -> tuple[bytes, bytes, PvdRecorder, FleetPvdComponent]:
    batch, single = MemoryStream(), MemoryStream()
    rb = PvdRecorder(OmniPvdWriter(batch))
    component = rb.attach_fleet(fleet)
    rs = PvdRecorder(OmniPvdWriter(single))
    members = [PvdComponent(fleet[i], rs) for i in range(len(fleet))]
    for k in range(steps):
        drive(fleet, k)
        fleet.step(DT)
        with rs.frame(fleet.time):
            for m in members:
                rs.record(m, DT)
    rb.close()
    rs.close()
    return batch.getvalue(), single.getvalue(), rb, component


def _steer(fleet: Fleet, k: int) -> None:
    n = len(fleet)
    fleet.commands.throttle[:] = np.linspace(0.3, 0.9, n)
    fleet.commands.steer[:] = 0.3 * np.sin(0.2 * k + np.arange(n))


@pytest.mark.parametrize("preset", ["sedan", "sedan_engine"])
def test_fleet_frames_hold_what_each_member_recorded_alone_holds(preset):
    base = load_preset(preset)
    fleet = Fleet([_vary(base, k) for k in range(3)])
    fleet.place_on_road()
    batch, single, recorder, component = _fleet_and_members(fleet, 6, _steer)
    names = set(fleet.names) | {"Vehicle"}
    fb, fs = _frames(batch, names), _frames(single, names)
    assert len(fb) == len(fs) == 6
    for k, (a, b) in enumerate(zip(fb, fs, strict=True)):
        assert a[:4] == b[:4], f"frame {k}: timestamps, objects or links differ"
        assert a[4].keys() == b[4].keys(), f"frame {k}: different (object, attribute) sets"
        diff = [key for key in a[4] if a[4][key] != b[4][key]]
        assert not diff, f"frame {k}: {len(diff)} values differ, e.g. {diff[:3]}"
    graphs, block = recorder.fleet_record(component)
    assert block.per_vehicle == []  # every accessor ran once for the whole fleet
    assert len(graphs) == 3
    # Every state value of every vehicle is in every frame (params only in the first).
    assert len(fb[1][4]) == block.nb_commands + 3  # + the Simulation clock (time, dt, step)


def test_vehicle_objects_carry_the_fleet_names_and_the_states_are_the_rows():
    fleet = Fleet.from_preset("sedan", 3, names=["/cars/a", "/cars/b", "/cars/c"])
    fleet.place_on_road(spacing=5.0)
    stream = MemoryStream()
    recorder = PvdRecorder(OmniPvdWriter(stream))
    component = recorder.attach(fleet)  # attach recognises a fleet
    assert isinstance(component, FleetPvdComponent)
    pos = []
    for k in range(4):
        _steer(fleet, k)
        fleet.step(DT)
        pos.append(fleet.states.rigid_body.pos.copy())
    recorder.close()
    rec = Recording.open(stream.getvalue())
    assert sorted(o.name for o in rec.objects_of_class("Vehicle")) == ["/cars/a", "/cars/b", "/cars/c"]
    assert len(rec.objects_of_class("WheelRigidBodyState")) == 12
    assert len(rec.objects_of_class("PlaneRoad")) == 1 and len(rec.objects_of_class("SimulationContext")) == 1
    assert len(rec.find_object("Simulation").state_at(3)["vehicles"]) == 3
    graphs, _ = recorder.fleet_record(component)
    for i, graph in enumerate(graphs):
        handle = int(graph.get("RigidBodyState")[0].handles[0])
        obj = next(o for o in rec.objects_of_class("RigidBodyState") if o.handle == handle)
        s = rec.series(obj, "pos")
        np.testing.assert_array_equal(np.asarray(s.raw), np.asarray(pos)[:, i].astype(np.float32))
    assert [float(t) for t in rec.frames.time(np.arange(4))] == [round((k + 1) * DT * 1e9) for k in range(4)]


def _set_counts(data: bytes) -> list[Counter]:
    frames: list[Counter] = []
    for _, c in iter_decode(data):
        if isinstance(c, StartFrame):
            frames.append(Counter())
        elif isinstance(c, SetAttribute) and frames:
            frames[-1][(c.object, c.path)] += 1
    return frames


def test_params_are_written_per_vehicle_when_that_vehicle_changes():
    fleet = Fleet.from_preset("sedan", 3)
    fleet.place_on_road()
    stream = MemoryStream()
    recorder = PvdRecorder(OmniPvdWriter(stream))
    component = recorder.attach_fleet(fleet)
    fleet.step(DT)
    fleet.step(DT)
    p = fleet.params[1]
    new_radius = p.wheel.radius * np.array([1.0, 1.1, 1.0, 1.0])
    fleet.set_params(1, p.replace(wheel=replace(p.wheel, radius=new_radius)))
    fleet.step(DT)
    fleet.step(DT)
    recorder.close()
    graphs, _ = recorder.fleet_record(component)
    h = recorder.handles
    radius = (h.attr(SCHEMA["WheelParams"], "radius"),)
    mass = (h.attr(SCHEMA["WheelParams"], "mass"),)
    counts = _set_counts(stream.getvalue())
    wheels = [graph.get("WheelParams")[0].handles for graph in graphs]
    assert all(counts[0][(int(o), radius)] == 1 for ws in wheels for o in ws)  # first frame: all
    assert all(counts[k][(int(o), radius)] == 0 for k in (1, 3) for ws in wheels for o in ws)
    changed = {(int(o), radius) for o in wheels[1][1:2]}  # vehicle 1's wheel 1 only
    written = {key for key in counts[2] if key[1] in (radius, mass) and counts[2][key]}
    assert written == changed


def _shim_fleet(params, n: int) -> SimpleNamespace:
    """The least a fleet needs to be recorded: params, FleetStates, a sequence (here unused)."""
    states = FleetStates.stack([Vehicle(params).states for _ in range(n)])
    sequence = SimpleNamespace(add=lambda component, name: None)
    return SimpleNamespace(params=(params,) * n, states=states, sequence=sequence,
                           road=PlaneRoad.ground(params.frame),
                           context=default_context(params.frame, params.scale))


@pytest.mark.parametrize("vehicle", ["sedan", "sedan_engine", "sedan_engine_4wd", "truck", "tank"])
def test_every_vehicle2_state_accessor_runs_once_for_the_whole_fleet(vehicle):
    params = load_preset(vehicle) if vehicle.startswith("sedan") else load_vehicle_params(vehicle)[0]
    fleet = _shim_fleet(params, 4)
    rng = np.random.default_rng(1)
    for _, batch in fleet.states.items():
        for _, arr in batch.items():
            if arr.dtype.kind == "f":
                arr[...] = rng.normal(size=arr.shape)
    stream = MemoryStream()
    recorder = PvdRecorder(OmniPvdWriter(stream))
    component = recorder.attach_fleet(fleet)
    component.update(DT, None)
    graphs, block = recorder.fleet_record(component)
    assert block.per_vehicle == []
    # ... and what it wrote for vehicle 2 is what the single-vehicle recorder writes for it.
    alone = MemoryStream()
    single = PvdRecorder(OmniPvdWriter(alone))
    member = SimpleNamespace(params=params, states=_member_states(fleet.states, 2),
                             road=fleet.road, context=fleet.context, time=0.0)
    member_component = PvdComponent(member, single)
    with single.frame(DT):
        single.record(member_component, DT)
    single.close()
    recorder.close()
    to_single: dict[int, int] = {}
    for gf, gs in zip(graphs[2], single.vehicle_graph(member_component), strict=True):
        assert gf.decl is gs.decl
        if gf.owner and gf.decl.role == Role.STATE:
            to_single.update(zip(map(int, gf.handles), map(int, gs.handles), strict=True))
    ours = {(to_single[o], path): data for (o, path), data in _frames(stream.getvalue(), set())[0][4].items()
            if o in to_single}
    targets = set(to_single.values())
    theirs = {key: data for key, data in _frames(alone.getvalue(), set())[0][4].items() if key[0] in targets}
    assert len(ours) == block.nb_commands // 4
    assert ours == theirs


def _member_states(states: FleetStates, i: int) -> SimpleNamespace:
    return SimpleNamespace(**{name: batch.member(i) for name, batch in states.items()})


def test_a_fleet_needs_distinct_names_and_a_sequence():
    params = load_preset("sedan")
    fleet = _shim_fleet(params, 2)
    fleet.names = ("a", "a")
    recorder = PvdRecorder(OmniPvdWriter(MemoryStream()))
    component = recorder.attach_fleet(fleet)
    with pytest.raises(PvdGraphError, match="2 distinct names"):
        component.update(DT, None)
    with pytest.raises(PvdGraphError, match="no component sequence"):
        PvdRecorder(OmniPvdWriter(MemoryStream())).attach_fleet(SimpleNamespace(params=(params,)))
