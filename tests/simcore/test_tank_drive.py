"""Tank: tracks keep their wheels together, unequal thrust turns, Stingray's drive models."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.drivetrain.engine_drive.params import TankDriveModel
from simcore.drivetrain.engine_drive.vehicles import make_vehicle, tank_params
from simcore.vehicle import Vehicle

DT = 1.0 / 30.0
NB_WHEELS = 10
RIGHT, LEFT = np.arange(0, NB_WHEELS, 2), np.arange(1, NB_WHEELS, 2)


@pytest.fixture(scope="module")
def settled() -> Vehicle:
    """A 10-wheel tank settled on its suspension with both track brakes on."""
    v = make_vehicle(tank_params(NB_WHEELS))
    v.commands.brake = 1.0
    v.commands.handbrake = 1.0  # brake channel 1 = left track
    v.run(20 * DT, DT)
    return v


def _drive(settled: Vehicle, model: str, thrusts: tuple[float, float], steps: int = 45):
    """Run from the settled state at full throttle; return the vehicle and per-step track spreads."""
    v = make_vehicle(tank_params(NB_WHEELS, model))
    v.states = settled.states.copy()
    v.commands.release()
    v.commands.throttle = 1.0
    v.states.tank_drive_transmission.thrusts[:] = thrusts
    spread = []
    for _ in range(steps):
        v.step(DT)
        w = v.states.wheel_rigid_body_1d.rotation_speed
        spread.append(max(np.ptp(w[RIGHT]), np.ptp(w[LEFT])))
    return v, spread


def _heading_change(v: Vehicle) -> float:
    """Yaw angle about +Z (default frame) from the body quaternion."""
    x, y, z, w = v.quat
    return float(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


def test_tank_drive_model_is_recorded_in_params() -> None:
    assert tank_params(4, "standard").differential.drive_model == TankDriveModel.STANDARD
    assert tank_params(4).differential.tracks == ((0, 2), (1, 3))


def test_unequal_thrust_turns_towards_the_slower_track(settled: Vehicle) -> None:
    v, spread = _drive(settled, "special", (1.0, 0.5))
    assert max(spread) == 0.0  # every wheel of a track turns at the track's speed, every step
    w = v.states.wheel_rigid_body_1d.rotation_speed
    assert w[RIGHT[0]] > w[LEFT[0]] > 0.0
    assert v.forward_speed > 2.0
    assert _heading_change(v) > 0.01 and v.yaw_rate > 0.0  # turning left, towards the slow track
    assert v.pos[1] > 0.0
    mirrored, _ = _drive(settled, "special", (0.5, 1.0))
    assert _heading_change(mirrored) == pytest.approx(-_heading_change(v), rel=0.05)


def test_special_model_reverses_a_track_and_pivots(settled: Vehicle) -> None:
    v, spread = _drive(settled, "special", (1.0, -1.0))
    assert max(spread) == 0.0
    w = v.states.wheel_rigid_body_1d.rotation_speed
    assert w[RIGHT[0]] > 1.0 and w[LEFT[0]] < -1.0
    assert abs(v.forward_speed) < 0.2  # turns on the spot
    assert v.yaw_rate > 0.3


def test_standard_model_ignores_negative_thrust(settled: Vehicle) -> None:
    v, _ = _drive(settled, "standard", (1.0, -1.0))
    np.testing.assert_array_equal(v.states.differential.torque_ratios_all_wheels[LEFT], 0.0)
    assert np.all(v.states.differential.torque_ratios_all_wheels[RIGHT] > 0.0)
    assert np.all(v.states.wheel_rigid_body_1d.rotation_speed >= 0.0)  # no track runs backwards
    assert v.forward_speed > 1.0 and v.yaw_rate > 0.0


def test_full_reverse_thrust_special_reverses_standard_stays(settled: Vehicle) -> None:
    special, _ = _drive(settled, "special", (-1.0, -1.0), steps=40)
    standard, _ = _drive(settled, "standard", (-1.0, -1.0), steps=40)
    assert special.forward_speed < -2.0
    assert abs(special.yaw_rate) < 1e-3
    assert abs(standard.forward_speed) < 0.05
    np.testing.assert_array_equal(standard.states.differential.torque_ratios_all_wheels, 0.0)
    assert np.allclose(standard.states.wheel_rigid_body_1d.rotation_speed, 0.0, atol=0.1)


def test_twenty_wheel_tank_runs_and_twenty_one_is_refused() -> None:
    v = make_vehicle(tank_params(20))
    v.commands.throttle = 1.0
    v.states.tank_drive_transmission.thrusts[:] = (1.0, 1.0)
    v.run(12 * DT, DT)
    w = v.states.wheel_rigid_body_1d.rotation_speed
    assert v.nb_wheels == 20 and np.all(np.isfinite(w))
    assert np.ptp(w[0::2]) == 0.0 and np.ptp(w[1::2]) == 0.0
    assert v.forward_speed > 0.0
    with pytest.raises(ValueError, match="nb_wheels must be even and in 4..20, got 21"):
        tank_params(21)
    with pytest.raises(ValueError, match="11 axles make 22 wheels; at most 20 wheels"):
        from simcore.drivetrain.engine_drive.vehicles import multi_axle_params
        multi_axle_params([float(i) for i in range(11)], 2.0, mass=1000.0, moi=[1, 1, 1], wheel_radius=0.3,
                          wheel_mass=20.0, wheel_moi=1.0)
    from simcore.axle import AxleDescription
    with pytest.raises(ValueError, match="AxleDescription has 21 wheels; Vehicle2 supports at most 20"):
        AxleDescription([[2 * i, 2 * i + 1] for i in range(10)] + [[20]])
