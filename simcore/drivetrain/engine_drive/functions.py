"""Engine-drive functions (``VhDrivetrainFunctions.cpp``, ``PxVehicleDrivetrainHelpers.h``).

Pure functions: inputs first, new values out; functions that produce a state take an optional
``out`` state to write into (it may be the input state itself, for in-place updates). Per-wheel
arrays are float64 of shape (n_wheels,) indexed by wheel id.

The update of one engine-drive step, in Vehicle2's order:

1. command response: :func:`autobox_update` (may pick the target gear and cut the throttle),
   :func:`gear_command_response_update` (starts a shift: neutral until ``switch_time`` passes),
   :func:`clutch_command_response_linear_update`,
   :func:`engine_drive_throttle_command_response_linear_update`;
2. differential: :func:`multi_wheel_differential_state_update`,
   :func:`four_wheel_differential_state_update` or :func:`tank_differential_state_update`;
3. :func:`engine_drive_actuation_state_update`;
4. per substep: :func:`gearbox_update` then :func:`engine_drivetrain_update`, which solves the
   engine and connected wheel speeds implicitly through the clutch (:func:`clutch_system`,
   :func:`solve_clutch_system`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from simcore.axle import AxleDescription
from simcore.commands.states import AUTOMATIC_GEAR
from simcore.drivetrain.engine_drive.helpers import (
    float32_timer_add,
    gauss_seidel_solve,
    lu_decompose_full_pivot,
    lu_solve,
    normal_equations,
    weighted_sum,
)
from simcore.drivetrain.engine_drive.params import (
    AutoboxParams,
    ClutchAccuracyMode,
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
    DifferentialState,
    GearboxState,
    WheelConstraintGroupState,
)
from simcore.wheel.functions import (
    apply_brake_lock,
    brake_torque_opposing_spin,
    wheel_rotation_speed_damped_update,
)

# ----------------------------------------------------------------------------------------------
# Command responses
# ----------------------------------------------------------------------------------------------


def clutch_command_response_linear_update(
    clutch_command: float, params: ClutchCommandResponseParams, out: ClutchCommandResponseState | None = None
) -> ClutchCommandResponseState:
    """Clutch strength from the pedal (``PxVehicleClutchCommandResponseLinearUpdate``).

    ``clutch_command`` in [0, 1] with 1 = pedal pressed (decoupled): normalised response
    ``1 - clutch`` and strength ``(1 - clutch) * max_response``.
    """
    out = ClutchCommandResponseState() if out is None else out
    out.normalised_command_response = 1.0 - clutch_command
    out.command_response = (1.0 - clutch_command) * params.max_response
    return out


def engine_drive_throttle_command_response_linear_update(throttle: float) -> float:
    """Throttle response = throttle command (``PxVehicleEngineDriveThrottleCommandResponseLinearUpdate``)."""
    return float(throttle)


def tank_thrust_command_response(
    thrusts: np.ndarray | tuple[float, float], model: TankDriveModel
) -> tuple[float, float]:
    """The two thrusts the tank differential applies, under Stingray's tank drive model.

    SPECIAL passes each thrust through, clamped to [-1, 1] (forwards and backwards, Vehicle2's own
    range). STANDARD lets tracks drive forwards only: a negative thrust counts as 0, so the
    track gets no engine torque (it is then turned by its brake or the other track).
    """
    lo = 0.0 if model == TankDriveModel.STANDARD else -1.0
    t0 = min(max(float(thrusts[0]), lo), 1.0)
    t1 = min(max(float(thrusts[1]), lo), 1.0)
    return t0, t1


def gear_command_response_update(
    target_gear_command: int, gearbox_params: GearboxParams, gearbox_state: GearboxState,
    out: GearboxState | None = None,
) -> GearboxState:
    """Start a shift if the command asks for another gear (``PxVehicleGearCommandResponseUpdate``).

    Only when no shift is under way and the command is a valid gear other than the current one:
    the gearbox drops to neutral, remembers the target and flags the shift as just initiated
    (:data:`GEAR_SWITCH_INITIATED`); :func:`gearbox_update` completes it after ``switch_time``.
    """
    out = gearbox_state.copy() if out is None else out
    if out is not gearbox_state:
        out.assign(gearbox_state)
    if (gearbox_state.current_gear == gearbox_state.target_gear
            and target_gear_command != gearbox_state.current_gear
            and 0 <= target_gear_command < gearbox_params.nb_ratios):
        out.current_gear = gearbox_params.neutral_gear
        out.target_gear = int(target_gear_command)
        out.gear_switch_time = GEAR_SWITCH_INITIATED
    return out


class AutoboxUpdate(NamedTuple):
    """Result of :func:`autobox_update`: the gear command and throttle to use this step, and the
    new autobox state."""

    target_gear_command: int
    throttle: float
    state: AutoboxState


def autobox_update(
    engine_params: EngineParams, gearbox_params: GearboxParams, autobox_params: AutoboxParams,
    engine_rotation_speed: float, gearbox_state: GearboxState, dt: float,
    target_gear_command: int, autobox_state: AutoboxState, throttle: float,
    out: AutoboxState | None = None,
) -> AutoboxUpdate:
    """Automatic gear choice (``PxVehicleAutoBoxUpdate``).

    Acts only when ``target_gear_command`` is :data:`~simcore.commands.states.AUTOMATIC_GEAR`
    (otherwise the autobox state is reset and the command passes through). Then:

    - while a shift it started is under way, the throttle is cut to 0;
    - with no shift under way: from neutral or reverse it shifts to first gear at once; else,
      once more than ``latency`` has passed since its last shift, it shifts up when
      ``engine speed / max_omega > up_ratios[gear]`` (not from the top gear) and down when it is
      ``< down_ratios[gear]`` (not below first gear), cutting the throttle for this step and
      restarting its timer. Otherwise its timer advances by ``dt``.
    """
    out = autobox_state.copy() if out is None else out
    if out is not autobox_state:
        out.assign(autobox_state)
    if target_gear_command != AUTOMATIC_GEAR:
        out.active_autobox_gear_shift = False
        out.time_since_last_shift = UNSPECIFIED_TIME_SINCE_LAST_SHIFT
        return AutoboxUpdate(int(target_gear_command), throttle, out)

    current, target = gearbox_state.current_gear, gearbox_state.target_gear
    command = target
    if out.active_autobox_gear_shift and current == target:
        out.active_autobox_gear_shift = False
    if out.active_autobox_gear_shift and current != target:
        throttle = 0.0

    if current != target:
        out.time_since_last_shift = float32_timer_add(out.time_since_last_shift, dt)
        return AutoboxUpdate(command, throttle, out)

    neutral, nb = gearbox_params.neutral_gear, gearbox_params.nb_ratios
    if current <= neutral and neutral + 1 < nb:
        # Drive selected while in neutral or reverse: go to first gear.
        return AutoboxUpdate(neutral + 1, 0.0, _autobox_shifted(out))
    if out.time_since_last_shift > autobox_params.latency:
        ratio = engine_rotation_speed / engine_params.max_omega
        if ratio > autobox_params.up_ratio(current) and current + 1 < nb:
            command, throttle = current + 1, 0.0
            _autobox_shifted(out)
        # Checked after the up-shift, as Vehicle2 does: a down-shift request wins.
        if ratio < autobox_params.down_ratio(current) and current > neutral + 1:
            command, throttle = current - 1, 0.0
            _autobox_shifted(out)
    else:
        out.time_since_last_shift = float32_timer_add(out.time_since_last_shift, dt)
    return AutoboxUpdate(command, throttle, out)


def _autobox_shifted(state: AutoboxState) -> AutoboxState:
    state.time_since_last_shift = 0.0
    state.active_autobox_gear_shift = True
    return state


def gearbox_update(gearbox_params: GearboxParams, dt: float, gearbox_state: GearboxState,
                   out: GearboxState | None = None) -> GearboxState:
    """Advance a shift under way (``PxVehicleGearboxUpdate``).

    A just-initiated shift starts its timer at 0 (this update's ``dt`` is not counted, as in
    Vehicle2); later updates add ``dt``; once the timer exceeds ``switch_time`` the target gear
    engages and the timer returns to :data:`NO_GEAR_SWITCH_PENDING`.
    """
    out = gearbox_state.copy() if out is None else out
    if out is not gearbox_state:
        out.assign(gearbox_state)
    if out.target_gear != out.current_gear:
        if out.gear_switch_time == GEAR_SWITCH_INITIATED:
            out.gear_switch_time = 0.0
        else:
            out.gear_switch_time = float32_timer_add(out.gear_switch_time, dt)
        if out.gear_switch_time > gearbox_params.switch_time:
            out.current_gear = out.target_gear
            out.gear_switch_time = NO_GEAR_SWITCH_PENDING
    return out


# ----------------------------------------------------------------------------------------------
# Engine, clutch and gearing
# ----------------------------------------------------------------------------------------------


def clutch_strength(clutch_response: float, gearbox_params: GearboxParams, current_gear: int) -> float:
    """Clutch strength K (``PxVehicleClutchStrengthCompute``): the clutch response, or 0 in neutral.

    A shift under way sits in neutral, so nothing is transmitted until it completes.
    """
    return clutch_response if current_gear != gearbox_params.neutral_gear else 0.0


def gear_ratio(gearbox_params: GearboxParams, current_gear: int) -> float:
    """``ratios[current_gear] * final_ratio`` (``PxVehicleGearRatioCompute``)."""
    return gearbox_params.ratio(current_gear) * gearbox_params.final_ratio


def engine_drive_torque(engine_params: EngineParams, engine_rotation_speed: float, throttle: float) -> float:
    """Engine torque ``throttle * peak_torque * torque_curve(speed / max_omega)``
    (``PxVehicleEngineDriveTorqueCompute``), ``mass * length^2 / time^2``."""
    normalised = engine_rotation_speed / engine_params.max_omega
    return throttle * engine_params.peak_torque * engine_params.normalised_torque(normalised)


def engine_damping_rate(engine_params: EngineParams, gearbox_params: GearboxParams, current_gear: int,
                        clutch_normalised_response: float, throttle: float) -> float:
    """Engine damping rate (``PxVehicleEngineDampingRateCompute``), ``mass * length^2 / time``.

    The zero-throttle rate runs from *clutch engaged* (normalised clutch response 1) to *clutch
    disengaged* (0, and always in neutral); the throttle then blends it towards the full-throttle
    rate.
    """
    k = clutch_normalised_response if current_gear != gearbox_params.neutral_gear else 0.0
    engaged = engine_params.damping_rate_zero_throttle_clutch_engaged
    disengaged = engine_params.damping_rate_zero_throttle_clutch_disengaged
    zero_throttle = engaged + (1.0 - k) * (disengaged - engaged)
    return zero_throttle + (engine_params.damping_rate_full_throttle - zero_throttle) * throttle


# ----------------------------------------------------------------------------------------------
# Differentials
# ----------------------------------------------------------------------------------------------


def _open_differential(axle_description: AxleDescription, params: MultiWheelDriveDifferentialParams,
                       out: DifferentialState | None) -> DifferentialState:
    n = params.nb_wheels
    out = DifferentialState.default(n) if out is None else out
    out.set_to_default()
    order = np.asarray(axle_description.wheel_ids_in_axle_order, dtype=np.int64)
    connected = order[params.torque_ratios[order] != 0.0]
    m = connected.shape[0]
    out.connected_wheels[:m] = connected
    out.nb_connected_wheels = m
    out.torque_ratios_all_wheels[connected] = params.torque_ratios[connected]
    out.ave_wheel_speed_contribution_all_wheels[connected] = params.ave_wheel_speed_ratios[connected]
    return out


def multi_wheel_differential_state_update(
    axle_description: AxleDescription, params: MultiWheelDriveDifferentialParams,
    out: DifferentialState | None = None,
) -> DifferentialState:
    """Open differential (``PxVehicleDifferentialStateUpdate`` for multi-wheel drive).

    Wheels with a non-zero torque ratio are connected (in axle order) and receive their fixed
    ``torque_ratios`` share; their speeds are averaged at the clutch with
    ``ave_wheel_speed_ratios``. Note: Vehicle2 copies the *average speed* ratios into the torque
    ratios here; we use ``torque_ratios`` as documented by both (identical in PhysX's data).
    """
    return _open_differential(axle_description, params, out)


def _sign(x: float) -> float:
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


def four_wheel_differential_state_update(
    axle_description: AxleDescription, params: FourWheelDriveDifferentialParams,
    wheel_rotation_speeds: np.ndarray, dt: float,
    out: DifferentialState | None = None, out_groups: WheelConstraintGroupState | None = None,
    predicted_wheel_rotation_speeds: np.ndarray | None = None,
) -> tuple[DifferentialState, WheelConstraintGroupState]:
    """Limited-slip differential (``PxVehicleDifferentialStateUpdate`` for four-wheel drive).

    Starts from the open split of :func:`multi_wheel_differential_state_update`. For each enabled
    pair (front wheels, rear wheels) and for front-sum vs rear-sum, when all the wheels involved
    turn the same way and the speed ratio (larger / smaller) exceeds its bias, it adds a wheel
    constraint group that pulls the ratio to ``max(target, ratio - rate * dt)``. A breached
    centre bias ties all four wheels in one group (front and rear pair ratios kept at their
    current values or their own targets); otherwise breached front / rear pairs get a group each.
    (Where a pair's own bias is disabled Vehicle2 leaves its current ratio at 0, which would hold
    one wheel still inside the centre group; we use the pair's current speed ratio instead.)

    ``predicted_wheel_rotation_speeds`` (optional, (n,)): check the biases on these speeds (the
    end-of-update speeds a free solve predicts) instead, still rate-limiting the target from the
    current ratio (or using the target itself when the current speeds give no ratio, e.g. at
    rest). See :func:`engine_drivetrain_update`'s ``limited_slip``.

    Returns ``(differential_state, constraint_groups)``.
    """
    diff = _open_differential(axle_description, params, out)
    n = params.nb_wheels
    groups = WheelConstraintGroupState.default(n) if out_groups is None else out_groups
    groups.set_to_default()
    if params.front_bias == 0.0 and params.rear_bias == 0.0 and params.center_bias == 0.0:
        return diff, groups
    if params.rate == 0.0:
        return diff, groups
    now = wheel_rotation_speeds
    check = now if predicted_wheel_rotation_speeds is None else predicted_wheel_rotation_speeds
    inst = params.instantaneous

    def target_ratio(target: float, base: float | None, ratio: float) -> float:
        if predicted_wheel_rotation_speeds is None:
            base = ratio
        if inst or base is None:
            return target
        return max(target, base - params.rate * dt)

    def pair(bias: float, target: float, ids: tuple[int, int]) -> tuple[bool, float, float]:
        # (breached, target multiplier of the second wheel, its current speed ratio)
        ok, a0, a1 = _same_sign_magnitudes(check, ids)
        if not ok:
            return False, 0.0, 0.0
        if bias < 1.0:
            return False, 0.0, a1 / a0
        ratio = max(a0, a1) / min(a0, a1)
        base_ok, b0, b1 = _same_sign_magnitudes(now, ids)
        t = target_ratio(target, max(b0, b1) / min(b0, b1) if base_ok else None, ratio)
        return ratio > bias, (1.0 / t if a0 > a1 else t), a1 / a0

    front_breached, t_front, r_front = pair(params.front_bias, params.front_target, params.front_wheel_ids)
    rear_breached, t_rear, r_rear = pair(params.rear_bias, params.rear_target, params.rear_wheel_ids)

    centre_breached, t_centre = False, 0.0
    ids4 = params.front_wheel_ids + params.rear_wheel_ids
    if params.center_bias >= 1.0:
        ok, front_sum, rear_sum = _axle_sums(check, ids4)
        if ok:
            ratio = max(front_sum, rear_sum) / min(front_sum, rear_sum)
            centre_breached = ratio > params.center_bias
            base_ok, bf, br = _axle_sums(now, ids4)
            t = target_ratio(params.center_target, max(bf, br) / min(bf, br) if base_ok else None, ratio)
            t_centre = 1.0 / t if front_sum > rear_sum else t

    if centre_breached:
        f = t_front if front_breached else r_front
        r = t_rear if rear_breached else r_rear
        k = t_centre * (1.0 + f) / (1.0 + r)
        groups.add_constraint_group(np.array(ids4), np.array([1.0, f, k, r * k]))
    else:
        if front_breached:
            groups.add_constraint_group(np.array(params.front_wheel_ids), np.array([1.0, t_front]))
        if rear_breached:
            groups.add_constraint_group(np.array(params.rear_wheel_ids), np.array([1.0, t_rear]))
    return diff, groups


def _same_sign_magnitudes(w: np.ndarray, ids: tuple[int, int]) -> tuple[bool, float, float]:
    """(both turn the same non-zero way, |w[ids[0]]|, |w[ids[1]]|)."""
    w0, w1 = float(w[ids[0]]), float(w[ids[1]])
    if w0 == 0.0 or _sign(w0) != _sign(w1):
        return False, 0.0, 0.0
    return True, abs(w0), abs(w1)


def _axle_sums(w: np.ndarray, ids4: tuple[int, ...]) -> tuple[bool, float, float]:
    """(all four turn the same non-zero way, front |w| sum, rear |w| sum)."""
    w4 = [float(w[i]) for i in ids4]
    s0 = _sign(w4[0])
    if w4[0] == 0.0 or any(_sign(x) != s0 for x in w4[1:]):
        return False, 0.0, 0.0
    return True, abs(w4[0]) + abs(w4[1]), abs(w4[2]) + abs(w4[3])


def tank_differential_state_update(
    axle_description: AxleDescription, wheel_radii: np.ndarray, params: TankDriveDifferentialParams,
    thrust0: float, thrust1: float,
    out: DifferentialState | None = None, out_groups: WheelConstraintGroupState | None = None,
) -> tuple[DifferentialState, WheelConstraintGroupState]:
    """Tank differential (``PxVehicleDifferentialStateUpdate`` for tank drive).

    A wheel on a track and connected to the differential gets ``torque_ratio * thrust`` of its
    track's thrust controller; one connected but on no track gets its plain ratio; one on a track
    but not connected is still treated as connected with a zero ratio, so the solve keeps it
    tied to its track. Every track of two or more wheels becomes a constraint group in which
    wheel j turns at ``radius[first] / radius[j]`` times the first wheel's speed: all wheels of
    a track have the same contact-patch speed. Apply :func:`tank_thrust_command_response` to the
    commands first for Stingray's drive models.

    Returns ``(differential_state, constraint_groups)``.
    """
    n = params.nb_wheels
    diff = DifferentialState.default(n) if out is None else out
    groups = WheelConstraintGroupState.default(n) if out_groups is None else out_groups
    diff.set_to_default()
    groups.set_to_default()
    track_of = np.full(n, -1, dtype=np.int64)
    thrust_of = np.zeros(n)
    thrusts = (thrust0, thrust1)
    for i, track in enumerate(params.tracks):
        track_of[list(track)] = i
        thrust_of[list(track)] = thrusts[params.thrust_id_per_track[i]]
    order = np.asarray(axle_description.wheel_ids_in_axle_order, dtype=np.int64)
    tr = params.torque_ratios[order]
    on_track = track_of[order] >= 0
    connected_mask = (tr != 0.0) | on_track
    connected = order[connected_mask]
    m = connected.shape[0]
    diff.connected_wheels[:m] = connected
    diff.nb_connected_wheels = m
    ratios = np.where(on_track, tr * thrust_of[order], tr)
    diff.torque_ratios_all_wheels[order] = np.where(connected_mask, ratios, 0.0)
    diff.ave_wheel_speed_contribution_all_wheels[order] = np.where(
        tr != 0.0, params.ave_wheel_speed_ratios[order], 0.0)
    radii = np.asarray(wheel_radii, dtype=np.float64)
    for track in params.tracks:
        if len(track) >= 2:
            ids = np.asarray(track, dtype=np.int64)
            groups.add_constraint_group(ids, radii[ids[0]] / radii[ids])
    return diff, groups


# ----------------------------------------------------------------------------------------------
# Actuation and the engine + wheel solve
# ----------------------------------------------------------------------------------------------


def engine_drive_actuation_state_update(
    brake_responses: np.ndarray, throttle: float, clutch_strength_value: float, torque_ratios: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Which wheels are braked / driven (``PxVehicleEngineDriveActuationStateUpdate``).

    A wheel is driven when it is unbraked, the clutch transmits (K != 0), the differential gives
    it torque and the throttle is non-zero. The tire slip and sticky-tire logic read these
    flags. Returns ``(is_brake_applied, is_drive_applied)``, bool arrays of shape (n,).
    """
    braked = np.asarray(brake_responses) != 0.0
    drive_possible = clutch_strength_value != 0.0 and throttle != 0.0
    driven = (~braked) & (np.asarray(torque_ratios) != 0.0) if drive_possible else np.zeros_like(braked)
    return braked, driven


class ClutchSystem(NamedTuple):
    """The implicit engine + connected wheels system ``matrix @ w(t+dt) = rhs`` of one update.

    Unknown ``k < m`` is the speed of wheel ``connected[k]``, unknown ``m`` the engine speed.
    ``initial`` holds the current speeds (the Gauss-Seidel starting guess).
    """

    matrix: np.ndarray
    rhs: np.ndarray
    initial: np.ndarray
    connected: np.ndarray


def clutch_system(
    wheel_moi: np.ndarray, wheel_damping_rate: np.ndarray, wheel_rotation_speeds: np.ndarray,
    brake_responses: np.ndarray, tire_wheel_torques: np.ndarray, diff_state: DifferentialState,
    engine_moi: float, engine_rotation_speed: float, engine_torque: float, engine_damping: float,
    clutch_strength_value: float, gear_ratio_value: float, dt: float,
) -> ClutchSystem:
    """Assemble the clutch-coupled system of ``PxVehicleEngineDrivetrainUpdate``.

    With K the clutch strength, G the gear ratio, and for connected wheel i its torque share
    R_i = |ratio_i|, gearing sign g_i = sign(ratio_i) and average-speed weight a_i, the clutch
    torque is ``K (G sum_j a_j g_j w_j - w_e)``. Wheel i receives ``G R_i g_i`` times it plus its
    brake torque (``-sign(w_i) * brake``) and tire torque and loses ``damping_i w_i``; the engine
    receives its drive torque minus the clutch torque and loses ``engine_damping w_e``. Backward
    Euler on every speed gives, per unknown, with h_i = dt / moi_i:

    - wheel row: ``(1 + h_i d_i) w_i + h_i K G^2 R_i g_i sum_j a_j g_j w_j - h_i K G R_i g_i w_e
      = w_i(t) + h_i (brake_i + tire_i)``
    - engine row: ``-h_e K G sum_j a_j g_j w_j + (1 + h_e (K + c_e)) w_e = w_e(t) + h_e T_e``.
    """
    connected = diff_state.connected()
    m = connected.shape[0]
    w = wheel_rotation_speeds[connected]
    tr = diff_state.torque_ratios_all_wheels[connected]
    r = np.abs(tr)
    g = np.sign(tr)
    a = diff_state.ave_wheel_speed_contribution_all_wheels[connected]
    h = dt / wheel_moi[connected]
    k, gr = clutch_strength_value, gear_ratio_value
    ag = a * g
    matrix = np.empty((m + 1, m + 1))
    rg = r * g
    matrix[:m, :m] = np.outer(h * (k * gr * gr) * rg, ag)
    matrix[np.arange(m), np.arange(m)] += 1.0 + h * wheel_damping_rate[connected]
    matrix[:m, m] = -h * (k * gr) * rg
    h_e = dt / engine_moi
    matrix[m, :m] = -h_e * k * gr * ag
    matrix[m, m] = 1.0 + h_e * (k + engine_damping)
    rhs = np.empty(m + 1)
    brake = brake_torque_opposing_spin(brake_responses[connected], w)
    rhs[:m] = w + h * (brake + tire_wheel_torques[connected])
    rhs[m] = engine_rotation_speed + h_e * engine_torque
    initial = np.append(w, engine_rotation_speed)
    return ClutchSystem(matrix, rhs, initial, connected)


def constraint_reduction(connected: np.ndarray, groups: WheelConstraintGroupState) -> np.ndarray:
    """Matrix C with ``w = C z`` mapping reduced unknowns to (connected wheels..., engine).

    Reduced unknowns are: each connected wheel in no group (in connected order), then one per
    constraint group (the speed of its reference wheel), then the engine. Shape (m+1, N).
    """
    m = connected.shape[0]
    group_of = groups.group[connected]
    free = np.flatnonzero(group_of < 0)
    nf, ng = free.shape[0], groups.nb_groups
    c = np.zeros((m + 1, nf + ng + 1))
    c[free, np.arange(nf)] = 1.0
    in_group = np.flatnonzero(group_of >= 0)
    c[in_group, nf + group_of[in_group]] = groups.multiplier[connected[in_group]]
    c[m, nf + ng] = 1.0
    return c


def solve_clutch_system(system: ClutchSystem, clutch_params: ClutchParams,
                        groups: WheelConstraintGroupState | None = None) -> np.ndarray:
    """New speeds (connected wheels..., engine), shape (m+1,).

    Without constraint groups: LU with full pivoting (BEST_POSSIBLE) or ``estimate_iterations``
    Gauss-Seidel sweeps from the current speeds (ESTIMATE). With groups, as Vehicle2, the
    constrained speeds ``w = C z`` make the system over-determined; it is solved in the least
    squares sense through the normal equations ``(A^T A) z = A^T b`` with ``A = M C``, by LU in
    either mode. A singular system keeps the current speeds.
    """
    try:
        if groups is not None and groups.nb_groups > 0:
            c = constraint_reduction(system.connected, groups)
            ata, atb = normal_equations(system.matrix, c, system.rhs)
            z = lu_solve(lu_decompose_full_pivot(ata), atb)
            return c @ z
        if clutch_params.accuracy_mode == ClutchAccuracyMode.BEST_POSSIBLE:
            return lu_solve(lu_decompose_full_pivot(system.matrix), system.rhs)
    except np.linalg.LinAlgError:
        return system.initial.copy()
    x, _, _ = gauss_seidel_solve(system.matrix, system.rhs, system.initial, clutch_params.estimate_iterations)
    return x


class EngineDrivetrainResult(NamedTuple):
    """Result of :func:`engine_drivetrain_update`: new (n,) wheel speeds, engine speed, the clutch
    slip measured before the update and the constraint groups the solve applied (or None)."""

    wheel_rotation_speeds: np.ndarray
    engine_rotation_speed: float
    clutch_slip: float
    constraint_groups: WheelConstraintGroupState | None = None


def engine_drivetrain_update(
    axle_description: AxleDescription, wheel_moi: np.ndarray, wheel_damping_rate: np.ndarray,
    engine_params: EngineParams, clutch_params: ClutchParams, gearbox_params: GearboxParams,
    brake_responses: np.ndarray, is_brake_applied: np.ndarray, tire_wheel_torques: np.ndarray,
    current_gear: int, throttle: float, clutch_response: ClutchCommandResponseState,
    diff_state: DifferentialState, constraint_groups: WheelConstraintGroupState | None, dt: float,
    wheel_rotation_speeds: np.ndarray, engine_rotation_speed: float,
    limited_slip: FourWheelDriveDifferentialParams | None = None,
) -> EngineDrivetrainResult:
    """Integrate engine and wheel speeds over ``dt`` (``PxVehicleEngineDrivetrainUpdate``).

    Connected wheels and the engine are solved together (:func:`clutch_system`,
    :func:`solve_clutch_system`); afterwards a braked connected wheel whose speed changed sign
    (or reached 0) is locked at 0, and the engine speed is clamped to [idle_omega, max_omega] —
    Vehicle2's cheap stand-ins for brake and rev-limit constraints. Wheels not connected to the
    differential are integrated on their own with no drive torque, as a direct-drive wheel.
    Arrays are (n,) by wheel id; inputs are not modified.

    ``limited_slip``: a four-wheel differential whose biases are checked on the *predicted*
    speeds. Vehicle2 decides the limited-slip constraints from the speeds at the start of the
    update, so a wheel on ice can overshoot the bias by a whole update's spin-up and the rate
    limit then needs many updates to pull it back. With ``limited_slip`` the system is solved
    free first (with ``constraint_groups`` ignored); if the predicted speeds breach a bias, the
    constraint groups of :func:`four_wheel_differential_state_update` for those speeds are added
    and the system is solved again, so the ratios stay within their biases.
    """
    k = clutch_strength(clutch_response.command_response, gearbox_params, current_gear)
    g = gear_ratio(gearbox_params, current_gear)
    torque = engine_drive_torque(engine_params, engine_rotation_speed, throttle)
    damping = engine_damping_rate(engine_params, gearbox_params, current_gear,
                                  clutch_response.normalised_command_response, throttle)
    connected = diff_state.connected()
    slip = g * weighted_sum(wheel_rotation_speeds, diff_state.ave_wheel_speed_contribution_all_wheels,
                            connected) - engine_rotation_speed

    system = clutch_system(wheel_moi, wheel_damping_rate, wheel_rotation_speeds, brake_responses,
                           tire_wheel_torques, diff_state, engine_params.moi, engine_rotation_speed,
                           torque, damping, k, g, dt)
    m = connected.shape[0]
    if limited_slip is None:
        groups = constraint_groups
        result = solve_clutch_system(system, clutch_params, groups)
    else:
        result = solve_clutch_system(system, clutch_params, None)
        predicted = np.array(wheel_rotation_speeds, dtype=np.float64)
        predicted[connected] = result[:m]
        _, groups = four_wheel_differential_state_update(
            axle_description, limited_slip, wheel_rotation_speeds, dt, out_groups=constraint_groups,
            predicted_wheel_rotation_speeds=predicted)
        if groups.nb_groups > 0:
            result = solve_clutch_system(system, clutch_params, groups)
    old = system.initial[:m]
    wheels = apply_brake_lock(old, result[:m], is_brake_applied[connected])
    engine = min(max(float(result[m]), engine_params.idle_omega), engine_params.max_omega)

    new_speeds = np.array(wheel_rotation_speeds, dtype=np.float64)
    new_speeds[connected] = wheels
    undriven = np.ones(new_speeds.shape[0], dtype=bool)
    undriven[connected] = False
    if undriven.any():
        ids = np.asarray(axle_description.wheel_ids_in_axle_order, dtype=np.int64)
        ids = ids[undriven[ids]]
        w = wheel_rotation_speeds[ids]
        torque = tire_wheel_torques[ids] + brake_torque_opposing_spin(brake_responses[ids], w)
        new = wheel_rotation_speed_damped_update(wheel_moi[ids], wheel_damping_rate[ids], w, torque, dt)
        new_speeds[ids] = apply_brake_lock(w, new, is_brake_applied[ids])
    return EngineDrivetrainResult(new_speeds, engine, slip, groups)
