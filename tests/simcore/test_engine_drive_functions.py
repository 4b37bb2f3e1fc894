"""Engine-drive pure functions: engine torque and damping, gearbox timing, autobox decisions,
differential splits and constraint groups, actuation, and the engine + wheel update."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.axle import AxleDescription
from simcore.commands.states import AUTOMATIC_GEAR
from simcore.drivetrain.engine_drive.functions import (
    autobox_update,
    clutch_command_response_linear_update,
    clutch_strength,
    engine_damping_rate,
    engine_drive_actuation_state_update,
    engine_drive_torque,
    engine_drivetrain_update,
    four_wheel_differential_state_update,
    gear_command_response_update,
    gear_ratio,
    gearbox_update,
    multi_wheel_differential_state_update,
    tank_differential_state_update,
    tank_thrust_command_response,
)
from simcore.drivetrain.engine_drive.helpers import float32_timer_add
from simcore.drivetrain.engine_drive.loader import read_engine_drivetrain_params
from simcore.drivetrain.engine_drive.params import (
    FOUR_WHEEL_DIFFERENTIAL_MAXIMUM_STRENGTH,
    AutoboxParams,
    ClutchCommandResponseParams,
    ClutchParams,
    EngineParams,
    FourWheelDriveDifferentialParams,
    GearboxParams,
    MultiWheelDriveDifferentialParams,
    TankDriveDifferentialParams,
    TankDriveModel,
)
from simcore.drivetrain.engine_drive.states import (
    GEAR_SWITCH_INITIATED,
    NO_GEAR_SWITCH_PENDING,
    UNSPECIFIED_TIME_SINCE_LAST_SHIFT,
    AutoboxState,
    ClutchCommandResponseState,
    GearboxState,
)

CAR = read_engine_drivetrain_params(nb_wheels=4)
AXLES = AxleDescription([[0, 1], [2, 3]])
NEUTRAL, FIRST = CAR.gearbox.neutral_gear, CAR.gearbox.neutral_gear + 1


def _engine(**kw: object) -> EngineParams:
    base = dict(torque_curve=[[0.0, 0.8], [0.33, 1.0], [1.0, 0.7]], moi=1.0, peak_torque=500.0,
                idle_omega=0.0, max_omega=600.0, damping_rate_full_throttle=0.15,
                damping_rate_zero_throttle_clutch_engaged=2.0,
                damping_rate_zero_throttle_clutch_disengaged=0.35)
    base.update(kw)
    return EngineParams(**base)  # type: ignore[arg-type]


# --- engine -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("speed", "expected"), [
    (0.0, 0.8), (-10.0, 0.8), (0.165 * 600, 0.9), (0.33 * 600, 1.0), (600.0, 0.7), (900.0, 0.7),
    ((0.33 + 0.67 / 2) * 600, 0.85),
])
def test_engine_torque_follows_the_normalised_curve(speed: float, expected: float) -> None:
    e = _engine()
    assert engine_drive_torque(e, speed, 1.0) == pytest.approx(500.0 * expected)
    assert engine_drive_torque(e, speed, 0.4) == pytest.approx(0.4 * 500.0 * expected)


def test_engine_torque_curve_edge_cases() -> None:
    assert engine_drive_torque(_engine(torque_curve=np.zeros((0, 2))), 100.0, 1.0) == 0.0
    assert engine_drive_torque(_engine(torque_curve=[[0.5, 0.6]]), 10.0, 1.0) == pytest.approx(300.0)


def test_engine_damping_interpolates_clutch_and_throttle() -> None:
    e, gb = _engine(), CAR.gearbox
    # Neutral counts as clutch disengaged whatever the pedal says.
    assert engine_damping_rate(e, gb, NEUTRAL, 1.0, 0.0) == pytest.approx(0.35)
    assert engine_damping_rate(e, gb, FIRST, 1.0, 0.0) == pytest.approx(2.0)
    assert engine_damping_rate(e, gb, FIRST, 0.0, 0.0) == pytest.approx(0.35)
    assert engine_damping_rate(e, gb, FIRST, 0.5, 0.0) == pytest.approx(0.5 * (2.0 + 0.35))
    assert engine_damping_rate(e, gb, FIRST, 1.0, 1.0) == pytest.approx(0.15)
    assert engine_damping_rate(e, gb, FIRST, 1.0, 0.25) == pytest.approx(2.0 + 0.25 * (0.15 - 2.0))


def test_clutch_response_strength_and_gearing() -> None:
    resp = clutch_command_response_linear_update(0.25, ClutchCommandResponseParams(10.0))
    assert (resp.normalised_command_response, resp.command_response) == (0.75, 7.5)
    assert clutch_strength(7.5, CAR.gearbox, FIRST) == 7.5
    assert clutch_strength(7.5, CAR.gearbox, NEUTRAL) == 0.0
    assert gear_ratio(CAR.gearbox, FIRST) == 16.0
    assert gear_ratio(CAR.gearbox, 0) == -16.0


def _neutral_run(engine: EngineParams, throttle: float, steps: int, dt: float) -> list[float]:
    """Engine alone: neutral gear, car wheels at rest with no tire torque."""
    diff = multi_wheel_differential_state_update(AXLES, CAR.multi_wheel_differential)
    resp = clutch_command_response_linear_update(0.0, CAR.clutch_command_response)
    wheels, speed, out = np.zeros(4), 0.0, []
    for _ in range(steps):
        res = engine_drivetrain_update(
            AXLES, np.full(4, 1.17), np.full(4, 0.25), engine, ClutchParams(), CAR.gearbox, np.zeros(4),
            np.zeros(4, dtype=bool), np.zeros(4), NEUTRAL, throttle, resp, diff, None, dt, wheels, speed)
        np.testing.assert_array_equal(res.wheel_rotation_speeds, 0.0)
        wheels, speed = res.wheel_rotation_speeds, res.engine_rotation_speed
        out.append(speed)
    return out


def test_neutral_full_throttle_revs_to_max_omega_and_no_further() -> None:
    e, dt = CAR.engine, 1.0 / 60.0
    speeds = _neutral_run(e, 1.0, 240, dt)
    # First step is backward Euler on I dw/dt = T - c w.
    h = dt / e.moi
    assert speeds[0] == pytest.approx(h * e.peak_torque / (1.0 + h * e.damping_rate_full_throttle))
    assert all(b >= a for a, b in zip(speeds, speeds[1:], strict=False))
    assert max(speeds) == e.max_omega
    assert speeds[-1] == e.max_omega
    assert speeds.index(e.max_omega) < 120


def test_neutral_part_throttle_settles_where_torque_meets_damping() -> None:
    """Below the rev limit the engine settles at T / c (flat curve): 50 / 0.33 rad/s."""
    e = CAR.engine
    speeds = _neutral_run(e, 0.1, 900, 0.1)
    c = 0.35 + (0.15 - 0.35) * 0.1
    assert speeds[-1] == pytest.approx(50.0 / c, rel=1e-6)
    assert speeds[-1] < e.max_omega


def test_clutch_coupling_conserves_geared_momentum_and_closes_the_slip() -> None:
    """No damping, torque or brake: implicit Euler keeps I_e w_e + sum I_i w_i / G exactly."""
    e = _engine(damping_rate_full_throttle=0.0, damping_rate_zero_throttle_clutch_engaged=0.0,
                damping_rate_zero_throttle_clutch_disengaged=0.0)
    diff = multi_wheel_differential_state_update(AXLES, CAR.multi_wheel_differential)
    resp = clutch_command_response_linear_update(0.0, CAR.clutch_command_response)
    moi = np.array([1.0, 1.2, 1.4, 1.6])
    wheels, speed = np.array([1.0, 2.0, 3.0, 4.0]), 300.0
    g = gear_ratio(CAR.gearbox, FIRST)
    momentum0 = e.moi * speed + float(moi @ wheels) / g
    slips = []
    for _ in range(30):
        res = engine_drivetrain_update(AXLES, moi, np.zeros(4), e, ClutchParams(), CAR.gearbox, np.zeros(4),
                                       np.zeros(4, dtype=bool), np.zeros(4), FIRST, 0.0, resp, diff, None,
                                       1.0 / 60.0, wheels, speed)
        wheels, speed = res.wheel_rotation_speeds, res.engine_rotation_speed
        slips.append(abs(res.clutch_slip))
        assert e.moi * speed + float(moi @ wheels) / g == pytest.approx(momentum0, rel=1e-12)
    assert slips[0] == pytest.approx(abs(g * 2.5 - 300.0))
    assert slips[-1] < 1e-3 * slips[0]


def test_brake_locks_connected_and_undriven_wheels() -> None:
    diff = multi_wheel_differential_state_update(
        AXLES, MultiWheelDriveDifferentialParams([0.0, 0.0, 0.5, 0.5], [0.0, 0.0, 0.5, 0.5]))
    resp = clutch_command_response_linear_update(0.0, CAR.clutch_command_response)
    wheels = np.array([0.5, 0.5, 0.5, 0.5])
    brake = np.full(4, 5000.0)
    res = engine_drivetrain_update(AXLES, np.full(4, 1.17), np.full(4, 0.25), CAR.engine, ClutchParams(),
                                   CAR.gearbox, brake, np.ones(4, dtype=bool), np.zeros(4), FIRST, 0.0, resp,
                                   diff, None, 1.0 / 60.0, wheels, 20.0)
    np.testing.assert_array_equal(res.wheel_rotation_speeds, 0.0)


def test_undriven_wheels_spin_down_under_their_damping() -> None:
    diff = multi_wheel_differential_state_update(
        AXLES, MultiWheelDriveDifferentialParams([0.0, 0.0, 0.5, 0.5], [0.0, 0.0, 0.5, 0.5]))
    resp = clutch_command_response_linear_update(0.0, CAR.clutch_command_response)
    dt, moi, damp = 0.01, 1.17, 0.25
    res = engine_drivetrain_update(AXLES, np.full(4, moi), np.full(4, damp), CAR.engine, ClutchParams(),
                                   CAR.gearbox, np.zeros(4), np.zeros(4, dtype=bool), np.zeros(4), NEUTRAL,
                                   0.0, resp, diff, None, dt, np.full(4, 10.0), 0.0)
    expected = 10.0 / (1.0 + damp * dt / moi)
    np.testing.assert_allclose(res.wheel_rotation_speeds[:2], expected, rtol=1e-14)


# --- gearbox ----------------------------------------------------------------------------------


def test_gear_shift_goes_through_neutral_for_switch_time() -> None:
    gb = GearboxParams([-4.0, 0.0, 4.0, 2.0], neutral_gear=1, final_ratio=4.0, switch_time=0.25)
    state = GearboxState(current_gear=2, target_gear=2)
    gear_command_response_update(3, gb, state, out=state)
    assert (state.current_gear, state.target_gear, state.gear_switch_time) == (1, 3, GEAR_SWITCH_INITIATED)
    # A second request while shifting is ignored.
    gear_command_response_update(0, gb, state, out=state)
    assert state.target_gear == 3
    timeline = []
    for _ in range(5):
        gearbox_update(gb, 0.1, state, out=state)
        timeline.append((state.current_gear, round(state.gear_switch_time, 6)))
    done = (3, NO_GEAR_SWITCH_PENDING)
    assert timeline == [(1, 0.0), (1, 0.1), (1, 0.2), done, done]
    # The timer adds as Vehicle2's float32 PxReal does (so shifts land on PhysX's step).
    assert state.gear_switch_time == NO_GEAR_SWITCH_PENDING
    assert clutch_strength(10.0, gb, 1) == 0.0  # nothing transmitted mid-shift


def test_shift_timers_add_in_float32_as_physx() -> None:
    """120 steps of PhysX's float32 1/60 s reach 1.9999988 s (PhysX's recorded
    timeSinceLastShift), not 2.0000001 s as float64 would: the 2 s autobox latency is crossed one
    step later, on PhysX's step."""
    dt = float(np.float32(1 / 60))
    t64, t32 = 0.0, 0.0
    for _ in range(120):
        t64 += dt
        t32 = float32_timer_add(t32, dt)
    assert t64 > 2.0 > t32
    assert t32 == pytest.approx(1.9999988, abs=1e-7)


def test_gear_command_ignores_current_and_invalid_gears() -> None:
    gb = CAR.gearbox
    state = GearboxState(current_gear=3, target_gear=3)
    for cmd in (3, gb.nb_ratios, AUTOMATIC_GEAR):
        new = gear_command_response_update(cmd, gb, state)
        assert (new.current_gear, new.target_gear, new.gear_switch_time) == (3, 3, NO_GEAR_SWITCH_PENDING)
    assert state.current_gear == 3  # input untouched when no out is given


def test_zero_switch_time_engages_on_the_next_update() -> None:
    gb = GearboxParams([-4.0, 0.0, 4.0, 2.0], neutral_gear=1, final_ratio=4.0, switch_time=0.0)
    state = gear_command_response_update(3, gb, GearboxState(2, 2))
    gearbox_update(gb, 0.01, state, out=state)  # 0 > 0 is false: still neutral
    assert state.current_gear == 1
    gearbox_update(gb, 0.01, state, out=state)
    assert state.current_gear == 3


# --- autobox ----------------------------------------------------------------------------------


def _autobox(speed: float, gear: int, state: AutoboxState, command: int = AUTOMATIC_GEAR,
             target: int | None = None, dt: float = 0.1, throttle: float = 1.0):
    gs = GearboxState(gear, gear if target is None else target)
    return autobox_update(CAR.engine, CAR.gearbox, CAR.autobox, speed, gs, dt, command, state, throttle)


def test_autobox_manual_command_passes_through_and_resets() -> None:
    res = _autobox(590.0, 3, AutoboxState(1.0, True), command=4)
    assert (res.target_gear_command, res.throttle) == (4, 1.0)
    assert res.state.time_since_last_shift == UNSPECIFIED_TIME_SINCE_LAST_SHIFT
    assert not res.state.active_autobox_gear_shift


@pytest.mark.parametrize("gear", [0, 1])
def test_autobox_from_neutral_or_reverse_selects_first(gear: int) -> None:
    res = _autobox(0.0, gear, AutoboxState(0.0, False))
    assert (res.target_gear_command, res.throttle) == (FIRST, 0.0)
    assert res.state.time_since_last_shift == 0.0 and res.state.active_autobox_gear_shift


def test_autobox_shift_up_down_and_latency() -> None:
    latency = CAR.autobox.latency
    up = CAR.autobox.up_ratio(3) * CAR.engine.max_omega
    down = CAR.autobox.down_ratio(3) * CAR.engine.max_omega
    # Over the up ratio and past the latency: shift up, throttle cut, timer restarted.
    res = _autobox(up + 1.0, 3, AutoboxState(latency + 0.01, False))
    assert (res.target_gear_command, res.throttle, res.state.time_since_last_shift) == (4, 0.0, 0.0)
    # Same revs inside the latency window: hold the gear, advance the timer.
    res = _autobox(up + 1.0, 3, AutoboxState(latency, False), dt=0.1)
    assert (res.target_gear_command, res.throttle) == (3, 1.0)
    assert res.state.time_since_last_shift == pytest.approx(latency + 0.1)
    # Under the down ratio: shift down.
    res = _autobox(down - 1.0, 3, AutoboxState(latency + 0.01, False))
    assert res.target_gear_command == 2
    # Between the ratios: hold.
    res = _autobox(0.5 * (up + down), 3, AutoboxState(latency + 0.01, False))
    assert (res.target_gear_command, res.throttle) == (3, 1.0)


def test_autobox_limits_top_and_first_gear() -> None:
    top = CAR.gearbox.nb_ratios - 1
    assert _autobox(599.0, top, AutoboxState(10.0, False)).target_gear_command == top
    assert _autobox(1.0, FIRST, AutoboxState(10.0, False)).target_gear_command == FIRST


def test_autobox_cuts_throttle_while_its_shift_runs() -> None:
    res = _autobox(300.0, NEUTRAL, AutoboxState(0.2, True), target=4, dt=0.1)
    assert (res.target_gear_command, res.throttle) == (4, 0.0)
    assert res.state.time_since_last_shift == pytest.approx(0.3)
    # Shift completed: flag cleared, throttle passes.
    res = _autobox(300.0, 4, AutoboxState(0.6, True), dt=0.1)
    assert not res.state.active_autobox_gear_shift and res.throttle == 1.0


def test_autobox_params_pad_missing_gears_with_zero() -> None:
    ab = AutoboxParams([0.5, 0.6], [0.1], 1.0)
    assert (ab.up_ratio(1), ab.up_ratio(5), ab.down_ratio(1)) == (0.6, 0.0, 0.0)


# --- differentials ----------------------------------------------------------------------------


def test_multi_wheel_differential_connects_nonzero_ratios_in_axle_order() -> None:
    axles = AxleDescription([[2, 3], [0, 1]])
    params = MultiWheelDriveDifferentialParams([0.3, 0.3, 0.0, -0.4], [0.5, 0.5, 0.0, 0.0])
    diff = multi_wheel_differential_state_update(axles, params)
    assert diff.nb_connected_wheels == 3
    np.testing.assert_array_equal(diff.connected_wheels, [3, 0, 1, -1])
    np.testing.assert_array_equal(diff.torque_ratios_all_wheels, [0.3, 0.3, 0.0, -0.4])
    np.testing.assert_array_equal(diff.ave_wheel_speed_contribution_all_wheels, [0.5, 0.5, 0.0, 0.0])


def _lsd(**kw: object) -> FourWheelDriveDifferentialParams:
    base = dict(torque_ratios=np.full(4, 0.25), ave_wheel_speed_ratios=np.full(4, 0.25),
                front_wheel_ids=(0, 1), rear_wheel_ids=(2, 3), front_bias=1.3, front_target=1.29,
                rear_bias=1.3, rear_target=1.29, center_bias=1.3, center_target=1.29, rate=10.0)
    base.update(kw)
    return FourWheelDriveDifferentialParams(**base)  # type: ignore[arg-type]


def test_lsd_within_bias_adds_no_constraint() -> None:
    diff, groups = four_wheel_differential_state_update(AXLES, _lsd(), np.array([10, 12, 11, 9.0]), 0.01)
    assert groups.nb_groups == 0 and diff.nb_connected_wheels == 4


def test_lsd_centre_breach_ties_all_four_wheels_to_the_rate_limited_target() -> None:
    w = np.array([20.0, 21.0, 10.0, 10.5])  # front twice as fast as rear, pairs within bias
    dt, p = 0.01, _lsd()
    _, groups = four_wheel_differential_state_update(AXLES, p, w, dt)
    assert groups.nb_groups == 1
    np.testing.assert_array_equal(groups.group, [0, 0, 0, 0])
    m = groups.multiplier
    ratio = (w[0] + w[1]) / (w[2] + w[3])
    target = ratio - p.rate * dt
    assert (m[0] + m[1]) / (m[2] + m[3]) == pytest.approx(target)  # front / rear pulled towards 1.29
    assert m[1] / m[0] == pytest.approx(w[1] / w[0])  # pair ratios kept
    assert m[3] / m[2] == pytest.approx(w[3] / w[2])
    # Instantaneous strength jumps straight to the target.
    _, groups = four_wheel_differential_state_update(
        AXLES, _lsd(rate=FOUR_WHEEL_DIFFERENTIAL_MAXIMUM_STRENGTH), w, dt)
    m = groups.multiplier
    assert (m[0] + m[1]) / (m[2] + m[3]) == pytest.approx(1.29)


def test_lsd_pair_breach_groups_only_that_axle() -> None:
    w = np.array([10.0, 20.0, 15.0, 15.0])
    _, groups = four_wheel_differential_state_update(AXLES, _lsd(center_bias=0.0), w, 0.01)
    assert groups.nb_groups == 1
    np.testing.assert_array_equal(groups.group, [0, 0, -1, -1])
    assert groups.multiplier[1] == pytest.approx(2.0 - 10.0 * 0.01)


def test_lsd_ignores_wheels_turning_opposite_ways_or_zero_rate() -> None:
    w = np.array([10.0, -20.0, 1.0, 1.0])
    params = _lsd(center_bias=0.0, rear_bias=0.0)
    assert four_wheel_differential_state_update(AXLES, params, w, 0.01)[1].nb_groups == 0
    w = np.array([20.0, 21.0, 1.0, 1.0])
    assert four_wheel_differential_state_update(AXLES, _lsd(rate=0.0), w, 0.01)[1].nb_groups == 0


def test_lsd_centre_only_keeps_front_pair_ratio() -> None:
    """Front/rear bias off, centre on: the centre group must not stop the second front wheel."""
    w = np.array([20.0, 22.0, 10.0, 10.0])
    _, groups = four_wheel_differential_state_update(
        AXLES, _lsd(front_bias=0.0, rear_bias=0.0), w, 0.01)
    assert groups.multiplier[1] == pytest.approx(1.1)


def test_tank_differential_scales_torque_by_thrust_and_ties_tracks() -> None:
    axles = AxleDescription([[0, 1], [2, 3], [4, 5]])
    radii = np.array([0.3, 0.3, 0.4, 0.4, 0.3, 0.3])
    params = TankDriveDifferentialParams([0.25, 0.25, 0.0, 0.0, 0.25, 0.25], [0.25, 0.25, 0, 0, 0.25, 0.25],
                                         tracks=((0, 2, 4), (1, 3, 5)))
    diff, groups = tank_differential_state_update(axles, radii, params, 1.0, -0.5)
    np.testing.assert_allclose(diff.torque_ratios_all_wheels, [0.25, -0.125, 0.0, 0.0, 0.25, -0.125])
    assert diff.nb_connected_wheels == 6  # idlers 2, 3 ride on their tracks
    np.testing.assert_array_equal(diff.ave_wheel_speed_contribution_all_wheels,
                                  [0.25, 0.25, 0, 0, 0.25, 0.25])
    assert groups.nb_groups == 2
    np.testing.assert_array_equal(groups.group, [0, 1, 0, 1, 0, 1])
    np.testing.assert_allclose(groups.multiplier, [1.0, 1.0, 0.75, 0.75, 1.0, 1.0])


@pytest.mark.parametrize(("model", "thrusts", "expected"), [
    (TankDriveModel.SPECIAL, (1.0, -1.0), (1.0, -1.0)),
    (TankDriveModel.SPECIAL, (2.0, -3.0), (1.0, -1.0)),
    (TankDriveModel.STANDARD, (1.0, -1.0), (1.0, 0.0)),
    (TankDriveModel.STANDARD, (-0.5, 0.5), (0.0, 0.5)),
])
def test_tank_drive_models(model: TankDriveModel, thrusts: tuple[float, float],
                           expected: tuple[float, float]) -> None:
    assert tank_thrust_command_response(thrusts, model) == expected


def test_actuation_flags() -> None:
    brakes = np.array([0.0, 100.0, 0.0, 0.0])
    ratios = np.array([0.5, 0.5, 0.0, 0.0])
    braked, driven = engine_drive_actuation_state_update(brakes, 1.0, 10.0, ratios)
    np.testing.assert_array_equal(braked, [False, True, False, False])
    np.testing.assert_array_equal(driven, [True, False, False, False])
    for throttle, k in ((0.0, 10.0), (1.0, 0.0)):
        assert not engine_drive_actuation_state_update(brakes, throttle, k, ratios)[1].any()


def test_clutch_state_default_and_copy() -> None:
    s = ClutchCommandResponseState(0.5, 5.0)
    c = s.copy()
    s.set_to_default()
    assert (c.normalised_command_response, c.command_response) == (0.5, 5.0)
    assert (s.normalised_command_response, s.command_response) == (0.0, 0.0)


def test_lsd_predicted_breach_uses_target_from_current_ratio() -> None:
    now = np.array([10.0, 10.0, 10.0, 10.0])
    predicted = np.array([20.0, 20.0, 10.0, 10.0])
    _, groups = four_wheel_differential_state_update(AXLES, _lsd(), now, 0.01,
                                                     predicted_wheel_rotation_speeds=predicted)
    m = groups.multiplier
    assert groups.nb_groups == 1
    assert (m[0] + m[1]) / (m[2] + m[3]) == pytest.approx(1.29)  # max(1.29, 1.0 - rate * dt)
    # From rest there is no current ratio to rate-limit from: the target applies directly.
    _, groups = four_wheel_differential_state_update(AXLES, _lsd(), np.zeros(4), 0.01,
                                                     predicted_wheel_rotation_speeds=predicted)
    m = groups.multiplier
    assert (m[0] + m[1]) / (m[2] + m[3]) == pytest.approx(1.29)


def _icy_front_update(limited_slip: FourWheelDriveDifferentialParams | None):
    """One drivetrain update at full throttle, front tires giving almost no reaction torque."""
    p = _lsd()
    diff, _ = four_wheel_differential_state_update(AXLES, p, np.full(4, 20.0), 1 / 30)
    resp = clutch_command_response_linear_update(0.0, CAR.clutch_command_response)
    tire = np.array([-20.0, -20.0, -600.0, -600.0])
    return engine_drivetrain_update(
        AXLES, np.full(4, 1.17), np.full(4, 0.25), CAR.engine, ClutchParams(), CAR.gearbox, np.zeros(4),
        np.zeros(4, dtype=bool), tire, FIRST, 1.0, resp, diff, None, 1 / 30, np.full(4, 20.0), 320.0,
        limited_slip=limited_slip)


def test_drivetrain_limited_slip_holds_the_predicted_breach() -> None:
    free = _icy_front_update(None)
    w = free.wheel_rotation_speeds
    assert (w[0] + w[1]) / (w[2] + w[3]) > 1.3
    held = _icy_front_update(_lsd())
    assert held.wheel_rotation_speeds[2] > w[2] + 1.0  # torque goes to the gripping axle
    w = held.wheel_rotation_speeds
    assert (w[0] + w[1]) / (w[2] + w[3]) == pytest.approx(1.29, rel=1e-9)
    assert held.constraint_groups is not None and held.constraint_groups.nb_groups == 1
