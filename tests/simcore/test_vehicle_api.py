"""The Python API of a vehicle: building, commands, params/states access, sequence editing, errors."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.commands.states import DirectDriveGear
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.frame import DEFAULT_FRAME, Y_UP_Z_FORWARD
from simcore.presets import default_vehicle
from simcore.road import PlaneRoad
from simcore.vehicle import DEFAULT_NB_SUBSTEPS, Vehicle, VehicleParams, default_context

EXPECTED_SEQUENCE = ["rigid_body_begin", "command_response", "actuation", "road_geometry", "suspension",
                     "tire", "constraints", "drivetrain", "rigid_body", "wheel"]


@pytest.fixture(scope="module")
def params() -> VehicleParams:
    return default_vehicle(DEFAULT_FRAME)


def test_default_sequence_layout(params: VehicleParams) -> None:
    v = Vehicle(params)
    assert v.sequence.names() == EXPECTED_SEQUENCE
    divisors = {e.name: e.dt_divisor for e in v.sequence.entries()}
    inner = {"suspension", "tire", "constraints", "drivetrain", "rigid_body"}
    assert all(divisors[n] == (DEFAULT_NB_SUBSTEPS if n in inner else 1) for n in EXPECTED_SEQUENCE)


def test_commands_write_through_to_states(params: VehicleParams) -> None:
    v = Vehicle(params)
    v.commands.set(throttle=0.4, brake=0.2, handbrake=1.0, steer=-0.5)
    c = v.states.commands
    assert (c.throttle, c.steer) == (0.4, -0.5)
    np.testing.assert_array_equal(c.brakes, [0.2, 1.0])
    v.commands.gear = "reverse"
    assert v.states.direct_drive_transmission.gear == DirectDriveGear.REVERSE == v.commands.gear
    v.commands.gear = DirectDriveGear.NEUTRAL
    assert v.commands.gear == 1
    bad_commands = ({"throttle": 1.5}, {"steer": -2.0}, {"brake": -0.1}, {"gear": "park"}, {"gear": 7},
                    {"clutch": 1})
    for bad in bad_commands:
        with pytest.raises((ValueError, AttributeError)):
            v.commands.set(**bad)
    v.commands.release()
    assert v.commands.throttle == 0.0 and v.commands.brake == 0.0 and v.commands.steer == 0.0


def test_reverse_gear_drives_backwards(params: VehicleParams) -> None:
    v = Vehicle(params, nb_substeps=6)
    v.place_on_road(clearance=-0.16)
    v.commands.set(gear="reverse", throttle=1.0)
    v.run(0.5, 1 / 60)
    assert v.forward_speed < -0.5
    np.testing.assert_array_less(v.states.direct_drive_throttle_response.response[:2], 0.0)


def test_params_are_replaceable_and_immutable(params: VehicleParams) -> None:
    v = Vehicle(params)
    with pytest.raises(ValueError, match="read-only"):
        v.params.wheel.radius[0] = 1.0
    f = params.suspension_force
    softer = params.replace(suspension_force=type(f)(f.stiffness * 0.5, f.damping, f.sprung_mass))
    v.params = softer
    assert v.params.suspension_force.stiffness[0] == pytest.approx(0.5 * params.suspension_force.stiffness[0])
    with pytest.raises(ValueError, match="wheels"):
        v.params = params.replace(axle_description=type(params.axle_description)([[0, 1, 2, 3, 4]]))


def test_context_and_frame_must_agree(params: VehicleParams) -> None:
    with pytest.raises(ValueError, match="transform_and_scale"):
        Vehicle(params, context=default_context(Y_UP_Z_FORWARD))
    ctx = default_context(DEFAULT_FRAME)
    np.testing.assert_allclose(ctx.gravity, [0.0, 0.0, -9.81])
    cm = default_context(DEFAULT_FRAME, params.scale.__class__(100.0))
    np.testing.assert_allclose(cm.gravity, [0.0, 0.0, -981.0])
    assert cm.tire_slip_params.min_passive_long_slip_denominator == pytest.approx(400.0)


def test_invalid_params_are_rejected_with_the_field(params: VehicleParams) -> None:
    with pytest.raises(ValueError, match="direct_drive_throttle_response"):
        Vehicle(params.replace(direct_drive_throttle_response=None))
    with pytest.raises(ValueError, match="brake_command_response needs 2"):
        Vehicle(params.replace(brake_command_response=params.brake_command_response[:1]))


def test_states_copy_is_a_snapshot(params: VehicleParams) -> None:
    v = Vehicle(params)
    v.place_on_road(speed=5.0)
    snap = v.states.copy()
    v.run(0.1, 1 / 60)
    assert snap.rigid_body.pos[0] == pytest.approx(0.0)
    assert v.pos[0] > 0.3
    assert snap.wheel_rigid_body_1d.rotation_speed[0] == pytest.approx(5.0 / params.wheel.radius[0])
    names = dict(v.states.items())
    assert "engine" not in names and "direct_drive_throttle_response" in names


def test_place_on_road_puts_wheels_on_the_ground(params: VehicleParams) -> None:
    road = PlaneRoad.ground(DEFAULT_FRAME, height=1.5)
    v = Vehicle(params, road=road)
    v.place_on_road(lng=3.0, lat=-1.0)
    assert v.pos[0] == 3.0 and v.pos[1] == -1.0
    v.step(1 / 60)
    # just touching at max droop: no compression yet, every wheel found the ground
    assert v.states.road_geometry.hit_state.all()
    np.testing.assert_allclose(v.states.suspension.jounce, 0.0, atol=5e-3)


def test_a_component_can_abort_the_step(params: VehicleParams) -> None:
    class Freeze(Component):
        def update(self, dt: float, context: SimulationContext) -> bool:
            return False

    v = Vehicle(params)
    v.place_on_road(speed=10.0)
    v.sequence.replace("road_geometry", Freeze())
    before = v.pos.copy()
    assert v.step(1 / 60) is False
    np.testing.assert_array_equal(v.pos, before)
