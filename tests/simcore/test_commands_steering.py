"""Command responses, brake channels, steer response and Ackermann geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simcore.braking import BrakeCommandResponseParams, brake_command_response_update
from simcore.commands import CommandNonLinearResponseParams, normalised_response
from simcore.drivetrain.direct_drive import (
    DirectDriveThrottleCommandResponseParams,
    direct_drive_throttle_command_response_update,
)
from simcore.frame import DEFAULT_FRAME, Scale
from simcore.steering import (
    AckermannParams,
    SteerCommandResponseParams,
    ackermann_steer_update,
    steer_command_response_update,
)

WHEEL_BASE = 2.863
TRACK = 1.551


def _steer(
    strength: float, max_angle: float = 0.5
) -> tuple[SteerCommandResponseParams, tuple[AckermannParams]]:
    steer = SteerCommandResponseParams(max_angle, np.array([1.0, 1.0, 0.0, 0.0]))
    ack = AckermannParams((0, 1), WHEEL_BASE, TRACK, strength)
    return steer, (ack,)


def _angles(steer_cmd: float, strength: float) -> np.ndarray:
    steer, ack = _steer(strength)
    out = steer_command_response_update(steer_cmd, 10.0, steer)
    return ackermann_steer_update(steer_cmd, steer, ack, out)


@pytest.mark.parametrize("cmd", [0.05, 0.3, 0.7, 1.0])
def test_full_ackermann_shares_one_turning_centre(cmd: float) -> None:
    a = _angles(cmd, 1.0)
    outer, inner = a[0], a[1]  # positive steer turns towards +lateral: wheel 1 (positive side) is inner
    assert inner == pytest.approx(cmd * 0.5)
    assert inner > outer > 0.0
    assert 1.0 / math.tan(outer) - 1.0 / math.tan(inner) == pytest.approx(TRACK / WHEEL_BASE, rel=1e-12)
    np.testing.assert_array_equal(a[2:], 0.0)


@pytest.mark.parametrize("cmd", [-0.05, -0.6, -1.0])
def test_negative_steer_mirrors(cmd: float) -> None:
    a = _angles(cmd, 1.0)
    mirror = _angles(-cmd, 1.0)
    assert a[0] == pytest.approx(-mirror[1])
    assert a[1] == pytest.approx(-mirror[0])
    inner, outer = -a[0], -a[1]  # now wheel 0 (negative lateral side) is inner
    assert 1.0 / math.tan(outer) - 1.0 / math.tan(inner) == pytest.approx(TRACK / WHEEL_BASE, rel=1e-12)


def test_zero_strength_gives_equal_angles_and_partial_strength_interpolates() -> None:
    a0 = _angles(0.4, 0.0)
    assert a0[0] == a0[1] == pytest.approx(0.2)
    a1 = _angles(0.4, 1.0)
    ah = _angles(0.4, 0.5)
    assert ah[1] == pytest.approx(0.2)
    assert ah[0] == pytest.approx(0.5 * (a0[0] + a1[0]))


def test_steer_response_is_linear_without_table() -> None:
    steer, _ = _steer(1.0, max_angle=0.6)
    np.testing.assert_allclose(steer_command_response_update(-0.5, 30.0, steer), [-0.3, -0.3, 0.0, 0.0])
    np.testing.assert_array_equal(steer_command_response_update(0.0, 30.0, steer), 0.0)


def test_brake_channels_sum_per_wheel() -> None:
    brake = BrakeCommandResponseParams(1000.0, np.array([1.0, 1.0, 0.5, 0.5]))
    hand = BrakeCommandResponseParams(4000.0, np.array([0.0, 0.0, 1.0, 1.0]))
    np.testing.assert_allclose(brake_command_response_update([0.5, 1.0], 2, 0.0, (brake, hand)),
                               [500.0, 500.0, 4250.0, 4250.0])
    np.testing.assert_allclose(brake_command_response_update([0.5, 1.0], 1, 0.0, (brake, hand)),
                               [500.0, 500.0, 250.0, 250.0])
    with pytest.raises(ValueError, match="nb_brakes=3"):
        brake_command_response_update([0.5, 1.0, 0.0], 3, 0.0, (brake, hand))


def test_nonlinear_throttle_table_of_the_reference_car() -> None:
    table = CommandNonLinearResponseParams.from_pairs([
        (0.0, [[0.0, 0.0], [20.0, 0.0], [60.0, 0.0]]),
        (0.25, [[0.0, 0.25], [20.0, 0.25], [60.0, 0.0]]),
        (0.5, [[0.0, 0.5], [20.0, 0.5], [60.0, 0.0]]),
        (1.0, [[1.0, 1.0], [20.0, 1.0], [60.0, 0.0]]),
    ])
    table.validate()
    assert normalised_response(0.5, 10.0, table) == pytest.approx(0.5)
    assert normalised_response(0.5, 40.0, table) == pytest.approx(0.25)  # halfway down the fade
    assert normalised_response(0.75, 40.0, table) == pytest.approx(0.375)  # between 0.5 and 1.0 rows
    assert normalised_response(1.0, 70.0, table) == 0.0
    assert normalised_response(1.0, 0.0, table) == 1.0  # clamped below the first speed
    throttle = DirectDriveThrottleCommandResponseParams(750.0, np.ones(4), table)
    np.testing.assert_allclose(direct_drive_throttle_command_response_update(1.0, 2, 10.0, throttle), 750.0)
    np.testing.assert_allclose(direct_drive_throttle_command_response_update(1.0, 0, 10.0, throttle), -750.0)
    np.testing.assert_allclose(direct_drive_throttle_command_response_update(1.0, 1, 10.0, throttle), 0.0)
    with pytest.raises(ValueError, match="gear"):
        direct_drive_throttle_command_response_update(1.0, 5, 10.0, throttle)
    # speeds scale with length: in centimetres the fade happens at 2000..6000 cm/s
    cm = throttle.transform_and_scale(DEFAULT_FRAME, DEFAULT_FRAME, Scale(1.0), Scale(100.0))
    assert cm.max_response == pytest.approx(750.0 * 1e4)
    assert normalised_response(0.5, 4000.0, cm.nonlinear_response) == pytest.approx(0.25)


def test_invalid_params_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"wheel_response_multipliers\[2\] \(wheel 2\)"):
        BrakeCommandResponseParams(10.0, np.array([1.0, 1.0, -1.0])).validate()
    with pytest.raises(ValueError, match="strength"):
        AckermannParams((0, 1), 1.0, 1.0, 1.5).validate()
    with pytest.raises(ValueError, match=r"\[-pi, pi\]"):
        SteerCommandResponseParams(4.0, np.ones(2)).validate()
    bad = CommandNonLinearResponseParams.from_pairs([(0.5, [[0, 0.1]]), (0.2, [[0, 0.1]])])
    with pytest.raises(ValueError, match=r"tables\[1\].command_value must be greater"):
        bad.validate()
