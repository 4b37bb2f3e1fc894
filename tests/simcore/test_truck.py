"""Three-axle truck: axle loads at rest, straight running and turning under engine drive."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.drivetrain.engine_drive.vehicles import make_vehicle, truck_params
from simcore.vehicle import Vehicle

DT = 1.0 / 30.0
G = 9.81


@pytest.fixture(scope="module")
def parked() -> Vehicle:
    """The truck after 2 s at rest with the brake held."""
    v = make_vehicle(truck_params())
    v.commands.brake = 1.0
    v.run(60 * DT, DT)
    return v


def test_truck_layout() -> None:
    p = truck_params()
    assert p.nb_wheels == 6 and p.axle_description.nb_axles == 3
    np.testing.assert_allclose(p.differential.torque_ratios, [0, 0, 0.25, 0.25, 0.25, 0.25])
    assert p.steer_command_response.wheel_response_multipliers.tolist() == [1, 1, 0, 0, 0, 0]
    assert truck_params(nb_axles=4).nb_wheels == 8
    with pytest.raises(ValueError, match="at least 3 axles"):
        truck_params(nb_axles=2)


def test_axle_loads_sum_to_the_weight_at_rest(parked: Vehicle) -> None:
    p, s = parked.params, parked.states
    loads = s.suspension_force.normal_force
    axle_loads = [loads[list(axle)].sum() for axle in p.axle_description.axles]
    weight = p.rigid_body.mass * G
    assert sum(axle_loads) == pytest.approx(weight, rel=0.01)
    # Each axle carries its sprung masses (the least-variance split Vehicle2 computes).
    sprung = p.suspension_force.sprung_mass
    for axle, load in zip(p.axle_description.axles, axle_loads, strict=True):
        assert load == pytest.approx(sprung[list(axle)].sum() * G, rel=0.02)
    assert abs(parked.forward_speed) < 0.01


def test_truck_drives_straight_then_turns(parked: Vehicle) -> None:
    v = make_vehicle(truck_params())
    v.states = parked.states.copy()
    v.commands.release()
    v.commands.throttle = 0.6
    start = v.pos.copy()
    v.run(60 * DT, DT)
    travelled = v.pos - start
    assert v.forward_speed > 2.5
    assert travelled[0] > 2.5  # default frame: +X forward
    assert abs(travelled[1]) < 0.01 * travelled[0]
    assert abs(v.yaw_rate) < 1e-3
    w = v.states.wheel_rigid_body_1d.rotation_speed
    assert np.all(w > 0.0)
    np.testing.assert_allclose(w[0], w[1], rtol=1e-6)  # left and right agree on a straight run
    v.commands.steer = 0.3
    v.run(45 * DT, DT)
    assert v.yaw_rate > 0.1  # positive steer turns left (towards +Y)
    assert v.pos[1] > start[1] + 0.5
    # Roughly the kinematic yaw rate v * delta / wheel base of the bicycle model.
    p = v.params
    wheel_base = p.ackermann[0].wheel_base
    delta = 0.3 * p.steer_command_response.max_response
    assert v.yaw_rate == pytest.approx(v.forward_speed * np.tan(delta) / wheel_base, rel=0.35)
