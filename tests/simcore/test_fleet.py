"""simcore.fleet: a batch of vehicles gives the states of the same vehicles run one by one.

The equivalence tests are the acceptance of the batched engine: heterogeneous vehicles (mass,
tire stiffness, wheel radius, gear ratios, torque) of every drivetrain kind, through every
scenario, against independent ``Vehicle`` runs, to 1e-12.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from simcore import Fleet, Scene
from simcore.drivetrain.engine_drive.vehicles import tank_params, truck_params
from simcore.limits import MAX_ENGINE_SPEED, MAX_WHEEL_SPEED, SimulationDiverged
from simcore.presets import load_preset
from simcore.scenarios import SCENARIOS
from simcore.vehicle import Vehicle, VehicleParams


def _vary(p: VehicleParams, k: int) -> VehicleParams:
    """Vehicle ``k`` of a batch: mass, tire stiffness, wheel radius, engine torque and gear
    ratios all differ between members (the topology does not)."""
    f = 1.0 + 0.15 * k
    changes = {
        "rigid_body": dataclasses.replace(p.rigid_body, mass=p.rigid_body.mass * f),
        "tire_force": dataclasses.replace(p.tire_force, long_stiff=p.tire_force.long_stiff / f),
        "wheel": dataclasses.replace(p.wheel, radius=p.wheel.radius * (1.0 + 0.03 * k)),
    }
    if p.engine is not None:
        changes["engine"] = dataclasses.replace(p.engine, peak_torque=p.engine.peak_torque * f)
        ratios = np.array(p.gearbox.ratios, dtype=np.float64)
        changes["gearbox"] = dataclasses.replace(p.gearbox, ratios=ratios * (1.0 + 0.05 * k))
    return p.replace(**changes)


TOPOLOGIES = {
    "sedan": lambda: load_preset("sedan"),
    "sedan_engine": lambda: load_preset("sedan_engine"),
    "sedan_engine_4wd": lambda: load_preset("sedan_engine_4wd"),
    "truck": lambda: truck_params(3),
    "tank": lambda: tank_params(10),
}


def _states_of(vehicle: Vehicle) -> dict[str, np.ndarray]:
    out = {}
    for name, state in vehicle.states.items():
        for field in dataclasses.fields(state):
            out[f"{name}.{field.name}"] = np.asarray(getattr(state, field.name), dtype=np.float64)
    return out


def _assert_same(fleet: Fleet, singles: list[Vehicle], label: str) -> None:
    for i, single in enumerate(singles):
        want = _states_of(single)
        have = _states_of(fleet[i])
        assert want.keys() == have.keys()
        for key, w in want.items():
            scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
            err = float(np.max(np.abs(have[key] - w), initial=0.0)) / scale
            assert err <= 1e-12, f"{label}: vehicle {i} {key} differs by {err:.3g} (relative)"


@pytest.mark.parametrize(("kind", "scenario"), [(k, name) for k in TOPOLOGIES for name, s in SCENARIOS.items()
                                                 if k == "tank" or not s.needs_tank])
def test_a_heterogeneous_batch_equals_its_vehicles_run_one_by_one(kind, scenario):
    s = SCENARIOS[scenario]
    params = [_vary(TOPOLOGIES[kind](), k) for k in range(3)]
    dt, steps = 1.0 / 60.0, 90
    singles = [Vehicle(p) for p in params]
    fleet = Fleet(params)
    for v in singles:
        s.setup(v)
    s.setup(fleet)  # side by side; put each where its single starts (the road is flat)
    fleet.states.rigid_body.pos[:] = [v.states.rigid_body.pos for v in singles]
    for i in range(steps):
        for v in (*singles, fleet):
            s.drive(v, i * dt)
            v.step(dt)
    _assert_same(fleet, singles, f"{kind}/{scenario}")


@pytest.mark.parametrize("kind", TOPOLOGIES)
def test_the_compiled_engine_follows_the_plain_numpy_reference(kind):
    """The kernels composed, step after step, against the per-vehicle reference components on a
    copy of the same vehicle: equal up to the rigid body's constraint solve, which rounds
    differently from numpy's lstsq (1e-12 per call; compounded over a second of driving)."""
    s = SCENARIOS["handbrake-turn" if kind != "tank" else "tank-turn"]
    compiled = Vehicle(_vary(TOPOLOGIES[kind](), 1))
    reference = Vehicle(compiled.params)
    reference.sequence = reference.reference_sequence()
    for v in (compiled, reference):
        s.setup(v)
    for i in range(60):
        for v in (compiled, reference):
            s.drive(v, i / 60.0)
            v.step(1.0 / 60.0)
    want, have = _states_of(reference), _states_of(compiled)
    for key, w in want.items():
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        assert float(np.max(np.abs(have[key] - w), initial=0.0)) / scale <= 1e-8, key


def test_a_fleet_member_is_a_view_of_the_batch():
    fleet = Fleet.from_preset("sedan", 3)
    member = fleet[1]
    member.commands.throttle = 0.4
    member.states.rigid_body.pos[:] = (1.0, 2.0, 3.0)
    assert fleet.commands.throttle.tolist() == [0.0, 0.4, 0.0]
    assert fleet.states.rigid_body.pos[1].tolist() == [1.0, 2.0, 3.0]
    fleet.states.wheel_rigid_body_1d.rotation_speed[2] = 7.0
    assert fleet[2].states.wheel_rigid_body_1d.rotation_speed.tolist() == [7.0] * 4
    snapshot = fleet[1].states.copy()  # a detached copy: no longer follows the batch
    fleet.states.rigid_body.pos[1] = 0.0
    assert snapshot.rigid_body.pos.tolist() == [1.0, 2.0, 3.0]


def test_commands_take_one_value_per_vehicle_and_are_range_checked():
    fleet = Fleet.from_preset("sedan", 3)
    fleet.commands.throttle = [0.1, 0.2, 0.3]
    fleet.commands.brake = 0.5
    fleet.commands.steer[:] = -0.25
    assert fleet.states.commands.throttle.tolist() == [0.1, 0.2, 0.3]
    assert fleet.states.commands.brakes[:, 0].tolist() == [0.5] * 3
    assert fleet[2].commands.steer == -0.25
    with pytest.raises(ValueError, match=r"throttle command of vehicle_001 must be in \[0.0, 1.0\]"):
        fleet.commands.throttle = [0.0, 1.5, 0.0]
    with pytest.raises(AttributeError, match="unknown command"):
        fleet.commands.clutchh = 1.0


def test_vehicles_of_different_topologies_need_a_scene():
    with pytest.raises(ValueError, match="vehicle 1 has another topology .*use simcore.fleet.Scene"):
        Fleet([load_preset("sedan"), load_preset("sedan_engine")])


def test_a_scene_steps_one_fleet_per_topology_and_equals_single_runs():
    sedan = load_preset("sedan")
    params = [sedan, truck_params(3, frame=sedan.frame), _vary(sedan, 1), tank_params(6).to(sedan.frame)]
    scene = Scene(params, names=["a", "b", "c", "d"])
    assert [len(f) for f in scene.fleets] == [2, 1, 1]
    scene.place_on_road(spacing=5.0)
    singles = [Vehicle(p) for p in params]
    for i, v in enumerate(singles):
        v.place_on_road(lat=(i - 1.5) * 5.0)
    for _ in range(30):
        for v in [*singles, *scene]:
            v.commands.throttle = 0.7
        for v in singles:
            v.step(1.0 / 60.0)
        scene.step(1.0 / 60.0)
    for i, v in enumerate(singles):
        np.testing.assert_allclose(scene[i].states.rigid_body.pos, v.states.rigid_body.pos,
                                   rtol=0, atol=1e-12)
    assert scene.fleets[0].names == ("a", "c")


def test_set_params_changes_one_member_only():
    fleet = Fleet.from_preset("sedan", 2)
    heavy = _vary(fleet.params[1], 3)
    fleet.set_params(1, heavy)
    fleet.place_on_road()
    single = Vehicle(heavy)
    single.place_on_road(lat=2.0)
    for _ in range(20):
        fleet.commands.throttle = 1.0
        single.commands.throttle = 1.0
        fleet.step(1.0 / 60.0)
        single.step(1.0 / 60.0)
    np.testing.assert_allclose(fleet.states.rigid_body.pos[1], single.states.rigid_body.pos,
                               rtol=0, atol=1e-12)
    assert not np.allclose(fleet.states.rigid_body.pos[0] - fleet.states.rigid_body.pos[1],
                           [0.0, 0.0, 0.0])


def test_a_diverging_member_is_named():
    fleet = Fleet.from_preset("sedan", 3, names=["a", "b", "c"])
    fleet.place_on_road()
    fleet.states.wheel_rigid_body_1d.rotation_speed[2, 1] = np.nan
    message = r"^c: simulation diverged at step 1: wheel 1 rotation_speed"
    with pytest.raises(SimulationDiverged, match=message):
        fleet.step(1.0 / 60.0)


@pytest.mark.parametrize("field", ["wheel_speed", "lin", "ang", "pos", "quat", "engine"])
def test_the_bounds_test_finds_the_first_vehicle_out_of_bounds(field):
    from simcore.fleet.fleet import _k_first_diverged

    n = 4
    arrays = {"wheel_speed": np.full((n, 4), 100.0), "lin": np.full((n, 3), 10.0),
              "ang": np.full((n, 3), 1.0), "pos": np.zeros((n, 3)),
              "quat": np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)), "engine": np.full(n, 500.0)}
    # The speed bounds squared, with the speeds exactly at them: still within bounds.
    limits = (MAX_WHEEL_SPEED, 3 * 10.0**2, 3 * 1.0**2, MAX_ENGINE_SPEED)
    assert _k_first_diverged(*arrays.values(), *limits) == -1
    assert _k_first_diverged(*list(arrays.values())[:-1], np.zeros(0), *limits) == -1
    for bad in (np.nan, np.inf, 1e9):
        broken = {k: v.copy() for k, v in arrays.items()}
        broken[field][2, ...] = bad if field not in ("pos", "quat") else np.nan
        broken[field][3, ...] = bad if field not in ("pos", "quat") else np.inf
        assert _k_first_diverged(*broken.values(), *limits) == 2, (field, bad)


def test_names_must_be_unique_and_one_per_vehicle():
    with pytest.raises(ValueError, match="'x' is given to more than one vehicle"):
        Fleet.from_preset("sedan", 2, names=["x", "x"])
    with pytest.raises(ValueError, match="1 names for 2 vehicles"):
        Fleet.from_preset("sedan", 2, names=["x"])
    assert Fleet.from_preset("sedan", 2).names == ("vehicle_000", "vehicle_001")


def test_fleet_record_writes_one_named_object_graph_per_vehicle(tmp_path):
    from pvdkit.recording import Recording
    from simcore.cli.record import open_writer

    fleet = Fleet.from_preset("sedan", 3, names=["red", "green", "blue"])
    fleet.place_on_road()
    with fleet.record(open_writer(tmp_path / "f.ovd", "test")):
        for _ in range(4):
            fleet.commands.throttle = [0.0, 0.5, 1.0]
            fleet.step(1.0 / 60.0)
    rec = Recording.open(tmp_path / "f.ovd")
    assert sorted(o.name for o in rec.objects_of_class("Vehicle")) == ["blue", "green", "red"]
    assert len(rec.frames) == 4
