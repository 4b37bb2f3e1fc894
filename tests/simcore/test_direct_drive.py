"""Direct-drive wheel spin update (``PxVehicleDirectDriveUpdate``): torques, implicit damping, brake lock."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.drivetrain.direct_drive import direct_drive_actuation_state_update, direct_drive_update
from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState, WheelRigidBody1dState

WHEELS = WheelParams(radius=np.full(3, 0.35), half_width=np.full(3, 0.1), mass=np.full(3, 20.0),
                     moi=np.array([1.0, 2.0, 1.5]), damping_rate=np.array([0.25, 0.0, 5.0]))


def _step(w0: np.ndarray, brake: np.ndarray, drive: np.ndarray, tire: np.ndarray, dt: float) -> np.ndarray:
    act = direct_drive_actuation_state_update(brake, drive, WheelActuationState.default(3))
    state = WheelRigidBody1dState(np.array(w0, dtype=np.float64), np.zeros(3), np.zeros(3))
    return direct_drive_update(WHEELS, act, brake, drive, tire, dt, state).rotation_speed


def test_closed_form_with_drive_tire_and_damping() -> None:
    w0 = np.array([10.0, -4.0, 3.0])
    drive = np.array([100.0, 0.0, -20.0])
    tire = np.array([-30.0, 12.0, 0.0])
    dt = 0.01
    got = _step(w0, np.zeros(3), drive, tire, dt)
    expected = (w0 + dt / WHEELS.moi * (drive + tire)) / (1.0 + WHEELS.damping_rate * dt / WHEELS.moi)
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_brake_opposes_spin_and_locks_instead_of_reversing() -> None:
    dt = 0.01
    # a weak brake slows the wheel (torque against the spin, either sign)
    got = _step(np.array([10.0, -10.0, 0.0]), np.array([50.0, 50.0, 0.0]), np.zeros(3), np.zeros(3), dt)
    assert 0.0 < got[0] < 10.0 and -10.0 < got[1] < 0.0
    assert got[0] == pytest.approx((10.0 - dt * 50.0) / (1.0 + 0.25 * dt))
    # a strong brake would reverse the spin: the wheel locks at zero
    got = _step(np.array([1.0, -1.0, 0.5]), np.array([5000.0, 5000.0, 5000.0]), np.zeros(3), np.zeros(3), dt)
    np.testing.assert_array_equal(got, 0.0)
    # a braked wheel at rest stays at rest even against a tire torque
    got = _step(np.zeros(3), np.full(3, 100.0), np.zeros(3), np.array([50.0, -50.0, 0.0]), dt)
    np.testing.assert_array_equal(got, 0.0)


def test_actuation_flags() -> None:
    act = direct_drive_actuation_state_update(np.array([0.0, 5.0, 0.0]), np.array([1.0, 0.0, 0.0]),
                                              WheelActuationState.default(3))
    np.testing.assert_array_equal(act.is_brake_applied, [False, True, False])
    np.testing.assert_array_equal(act.is_drive_applied, [True, False, False])
