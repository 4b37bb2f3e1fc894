"""Compiled engine drive (and tank drive) for a batch of vehicles: one kernel call per component.

The batched counterparts of :mod:`simcore.drivetrain.engine_drive.components`, for a fleet of
vehicles sharing one topology (wheel count, differential kind) but differing in any param value:

1. :class:`EngineDriveCommandResponseBatchComponent` — brakes and steer (the shared
   :mod:`simcore.commands.batch` building blocks, inline), autobox, gear, clutch and throttle;
2. a differential component (:func:`differential_state_batch_component`): open multi-wheel,
   four-wheel limited slip or tank tracks;
3. :class:`EngineDriveActuationStateBatchComponent`;
4. :class:`EngineDrivetrainBatchComponent` in the substep group: gearbox timer, then the implicit
   engine + connected wheels solve through the clutch (LU with full pivoting or Gauss-Seidel, the
   constrained least squares for tank tracks and engaged limited slip).

:func:`engine_batch_components` gives (command response, differential + actuation chain,
drivetrain) for the three slots of the default sequence, as the plug-in's ``make_components``.

Params are packed at :meth:`repack` into a few arrays with a leading vehicle axis whose shapes
depend only on the topology (torque curves padded to 8 points, gear tables to 32 gears):

* ``pf`` (n, PF_WIDTH) float64 and ``pi`` (n, PI_WIDTH) int64: engine, gearbox, autobox, clutch,
  limited-slip and tank values per vehicle (columns ``PF_*`` / ``PI_*``);
* ``wf`` (n, nb_wheels, WF_WIDTH) float64 and ``wi`` (n, nb_wheels, WI_WIDTH) int64: per-wheel
  inertia, damping, differential ratios, axle order and tank tracks (columns ``WF_*`` / ``WI_*``).

The wheel constraint groups are working data, not a :class:`~simcore.vehicle.VehicleStates`
field; the differential and drivetrain components share one batch of them
(:func:`constraint_group_batch`). The arithmetic mirrors :mod:`~simcore.drivetrain.engine_drive.functions`
operation by operation and calls the same compiled solvers (:mod:`~simcore.drivetrain.engine_drive.helpers`),
so each vehicle's result equals its per-vehicle reference to the last bit.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from pvdkit.jit import njit
from simcore.commands.batch import (
    brake_steer_response,
    longitudinal_speed,
    pack_command_responses,
    speed_axis,
)
from simcore.commands.states import AUTOMATIC_GEAR
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.drivetrain.engine_drive.components import ComponentChain
from simcore.drivetrain.engine_drive.helpers import (
    GAUSS_SEIDEL_TOLERANCE,
    _k_gauss_seidel_n,
    _k_lu_decompose_n,
    _k_lu_solve_n,
    _k_normal_equations_n,
    _k_weighted_sum,
    float32_timer_add,
)
from simcore.drivetrain.engine_drive.params import (
    MAX_NB_ENGINE_TORQUE_CURVE_ENTRIES,
    MAX_NB_GEARS,
    ClutchAccuracyMode,
    FourWheelDriveDifferentialParams,
    MultiWheelDriveDifferentialParams,
    TankDriveDifferentialParams,
    TankDriveModel,
)
from simcore.drivetrain.engine_drive.states import (
    GEAR_SWITCH_INITIATED,
    NO_GEAR_SWITCH_PENDING,
    UNSPECIFIED_TIME_SINCE_LAST_SHIFT,
    WheelConstraintGroupState,
)
from simcore.fleet.states import StateBatch

_JIT = {"cache": True, "nogil": True}

# --- packed params ---------------------------------------------------------------------------

# pf columns (per vehicle, float64).
PF_ENGINE_MOI, PF_PEAK_TORQUE, PF_IDLE_OMEGA, PF_MAX_OMEGA = 0, 1, 2, 3
PF_DAMPING_FULL, PF_DAMPING_ENGAGED, PF_DAMPING_DISENGAGED = 4, 5, 6
PF_FINAL_RATIO, PF_SWITCH_TIME, PF_LATENCY, PF_CLUTCH_MAX_RESPONSE = 7, 8, 9, 10
PF_FRONT_BIAS, PF_FRONT_TARGET, PF_REAR_BIAS, PF_REAR_TARGET = 11, 12, 13, 14
PF_CENTER_BIAS, PF_CENTER_TARGET, PF_RATE = 15, 16, 17
PF_TANK_MIN_THRUST = 18
PF_CURVE_X = 19
PF_CURVE_Y = PF_CURVE_X + MAX_NB_ENGINE_TORQUE_CURVE_ENTRIES
PF_RATIOS = PF_CURVE_Y + MAX_NB_ENGINE_TORQUE_CURVE_ENTRIES
PF_UP_RATIOS = PF_RATIOS + MAX_NB_GEARS
PF_DOWN_RATIOS = PF_UP_RATIOS + MAX_NB_GEARS
PF_WIDTH = PF_DOWN_RATIOS + MAX_NB_GEARS

# pi columns (per vehicle, int64).
PI_CURVE_COUNT, PI_NB_RATIOS, PI_NEUTRAL_GEAR, PI_HAS_AUTOBOX = 0, 1, 2, 3
PI_ESTIMATE, PI_ESTIMATE_ITERATIONS = 4, 5
PI_FRONT_W0, PI_FRONT_W1, PI_REAR_W0, PI_REAR_W1 = 6, 7, 8, 9
PI_PREDICT_BREACH, PI_INSTANTANEOUS, PI_TANK_NB_GROUPS = 10, 11, 12
PI_WIDTH = 13

# wf columns (per wheel, float64).
WF_MOI, WF_DAMPING, WF_TORQUE_RATIO, WF_AVE_RATIO, WF_TRACK_MULTIPLIER = 0, 1, 2, 3, 4
WF_WIDTH = 5

# wi columns (per wheel, int64). WI_AXLE_ORDER's row k is the k-th wheel id in axle order.
WI_AXLE_ORDER, WI_TRACK, WI_THRUST_ID, WI_TRACK_GROUP = 0, 1, 2, 3
WI_WIDTH = 4

#: Largest clutch system: every wheel and the engine.
_NB_UNKNOWNS_MAX_EXTRA = 1


def pack_engine_params(params: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(pf, pi, wf, wi)`` for a batch of engine-drive :class:`~simcore.vehicle.VehicleParams`
    (see the module docstring). Raises ``ValueError`` if the wheel counts differ."""
    n = len(params)
    nb_wheels = params[0].nb_wheels
    pf = np.zeros((n, PF_WIDTH))
    pi = np.zeros((n, PI_WIDTH), dtype=np.int64)
    wf = np.zeros((n, nb_wheels, WF_WIDTH))
    wi = np.full((n, nb_wheels, WI_WIDTH), -1, dtype=np.int64)
    for v, p in enumerate(params):
        if p.nb_wheels != nb_wheels:
            raise ValueError(f"pack_engine_params: vehicle {v} has {p.nb_wheels} wheels, vehicle 0 has "
                             f"{nb_wheels}")
        e, g, a, d = p.engine, p.gearbox, p.autobox, p.differential
        pf[v, :PF_CLUTCH_MAX_RESPONSE + 1] = (
            e.moi, e.peak_torque, e.idle_omega, e.max_omega, e.damping_rate_full_throttle,
            e.damping_rate_zero_throttle_clutch_engaged, e.damping_rate_zero_throttle_clutch_disengaged,
            g.final_ratio, g.switch_time, a.latency if a is not None else 0.0,
            p.clutch_command_response.max_response)
        k = e.torque_curve.shape[0]
        pf[v, PF_CURVE_X:PF_CURVE_X + k] = e.torque_curve[:, 0]
        pf[v, PF_CURVE_Y:PF_CURVE_Y + k] = e.torque_curve[:, 1]
        pf[v, PF_RATIOS:PF_RATIOS + g.nb_ratios] = g.ratios
        pi[v, PI_CURVE_COUNT] = k
        pi[v, PI_NB_RATIOS] = g.nb_ratios
        pi[v, PI_NEUTRAL_GEAR] = g.neutral_gear
        if a is not None:
            pi[v, PI_HAS_AUTOBOX] = 1
            # AutoboxParams.up_ratio / down_ratio: 0 beyond the stored entries.
            pf[v, PF_UP_RATIOS:PF_UP_RATIOS + a.up_ratios.shape[0]] = a.up_ratios
            pf[v, PF_DOWN_RATIOS:PF_DOWN_RATIOS + a.down_ratios.shape[0]] = a.down_ratios
        pi[v, PI_ESTIMATE] = int(p.clutch.accuracy_mode == ClutchAccuracyMode.ESTIMATE)
        pi[v, PI_ESTIMATE_ITERATIONS] = int(p.clutch.estimate_iterations)
        wf[v, :, WF_MOI] = p.wheel.moi
        wf[v, :, WF_DAMPING] = p.wheel.damping_rate
        wf[v, :, WF_TORQUE_RATIO] = d.torque_ratios
        wf[v, :, WF_AVE_RATIO] = d.ave_wheel_speed_ratios
        order = p.axle_description.wheel_ids_in_axle_order
        wi[v, :len(order), WI_AXLE_ORDER] = order
        if isinstance(d, FourWheelDriveDifferentialParams):
            pf[v, PF_FRONT_BIAS:PF_RATE + 1] = (d.front_bias, d.front_target, d.rear_bias, d.rear_target,
                                                d.center_bias, d.center_target, d.rate)
            pi[v, PI_FRONT_W0:PI_REAR_W1 + 1] = d.front_wheel_ids + d.rear_wheel_ids
            pi[v, PI_PREDICT_BREACH] = int(d.predict_breach)
            pi[v, PI_INSTANTANEOUS] = int(d.instantaneous)
        if isinstance(d, TankDriveDifferentialParams):
            pf[v, PF_TANK_MIN_THRUST] = 0.0 if d.drive_model == TankDriveModel.STANDARD else -1.0
            radii = p.wheel.radius
            nb_groups = 0
            for t, track in enumerate(d.tracks):
                ids = list(track)
                wi[v, ids, WI_TRACK] = t
                wi[v, ids, WI_THRUST_ID] = d.thrust_id_per_track[t]
                if len(ids) >= 2:
                    # tank_differential_state_update's group: radius[first] / radius[j].
                    wi[v, ids, WI_TRACK_GROUP] = nb_groups
                    wf[v, ids, WF_TRACK_MULTIPLIER] = radii[ids[0]] / radii[np.asarray(ids)]
                    nb_groups += 1
            pi[v, PI_TANK_NB_GROUPS] = nb_groups
    return pf, pi, wf, wi


_GROUP_BATCHES: weakref.WeakKeyDictionary[Any, StateBatch] = weakref.WeakKeyDictionary()


def constraint_group_batch(fleet: Any) -> StateBatch:
    """The fleet's wheel constraint groups (``WheelConstraintGroupState`` per vehicle).

    ``fleet.states.wheel_constraint_group`` if the fleet holds one, else one batch per fleet
    states object, created on first use and shared by every component asking for it (the
    differential writes the groups, the drivetrain reads and, with limited slip, rewrites them).
    """
    groups = fleet.states.get("wheel_constraint_group")
    if groups is not None:
        return groups
    groups = _GROUP_BATCHES.get(fleet.states)
    if groups is None or groups.n_vehicles != fleet.n_vehicles:
        groups = StateBatch.stack([WheelConstraintGroupState.default(fleet.nb_wheels)
                                   for _ in range(fleet.n_vehicles)])
        _GROUP_BATCHES[fleet.states] = groups
    return groups


def _transmission(fleet: Any) -> StateBatch:
    tank = fleet.states.get("tank_drive_transmission")
    return tank if tank is not None else fleet.states.engine_drive_transmission


# --- compiled kernels ------------------------------------------------------------------------


@njit(**_JIT)
def _sign(x):  # pragma: no cover - compiled
    """``np.sign`` of a float (0 for 0 and NaN)."""
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return 0.0


@njit(**_JIT)
def _py_max(a, b):  # pragma: no cover - compiled
    """Python's ``max(a, b)``: ``a`` unless ``b > a``."""
    return b if b > a else a


@njit(**_JIT)
def _py_min(a, b):  # pragma: no cover - compiled
    """Python's ``min(a, b)``: ``a`` unless ``b < a``."""
    return b if b < a else a


@njit(**_JIT)
def _curve(pf, count, v, x):  # pragma: no cover - compiled
    """``EngineParams.normalised_torque(x)`` of vehicle ``v``'s packed torque curve."""
    if count == 0:
        return 0.0
    if count == 1 or x < pf[v, PF_CURVE_X]:
        return pf[v, PF_CURVE_Y]
    for i in range(1, count):
        if x < pf[v, PF_CURVE_X + i]:
            x0 = pf[v, PF_CURVE_X + i - 1]
            y0 = pf[v, PF_CURVE_Y + i - 1]
            return y0 + (pf[v, PF_CURVE_Y + i] - y0) * (x - x0) / (pf[v, PF_CURVE_X + i] - x0)
    return pf[v, PF_CURVE_Y + count - 1]


@njit(**_JIT)
def _k_command_response(resp_f, resp_i, ack, axis, lin_vel, quat, brakes, nb_brakes, steer, brake_out,
                        steer_out, pf, pi, throttle, target_gear, clutch, engine_speed, current_gear,
                        gearbox_target, switch_time, autobox_time, autobox_active, clutch_normalised,
                        clutch_response, throttle_response, dt):  # pragma: no cover - compiled
    """EngineDriveCommandResponseComponent.update for every vehicle (autobox, brakes, gear, clutch,
    throttle, steer)."""
    for v in range(brake_out.shape[0]):
        thr = throttle[v]
        target = target_gear[v]
        cur = current_gear[v]
        tgt = gearbox_target[v]
        if pi[v, PI_HAS_AUTOBOX] != 0:
            # autobox_update
            if target != AUTOMATIC_GEAR:
                autobox_active[v] = False
                autobox_time[v] = UNSPECIFIED_TIME_SINCE_LAST_SHIFT
            else:
                command = tgt
                if autobox_active[v] and cur == tgt:
                    autobox_active[v] = False
                if autobox_active[v] and cur != tgt:
                    thr = 0.0
                neutral = pi[v, PI_NEUTRAL_GEAR]
                nb = pi[v, PI_NB_RATIOS]
                if cur != tgt:
                    autobox_time[v] = float32_timer_add(autobox_time[v], dt)
                elif cur <= neutral and neutral + 1 < nb:
                    command = neutral + 1
                    thr = 0.0
                    autobox_time[v] = 0.0
                    autobox_active[v] = True
                elif autobox_time[v] > pf[v, PF_LATENCY]:
                    ratio = engine_speed[v] / pf[v, PF_MAX_OMEGA]
                    if ratio > pf[v, PF_UP_RATIOS + cur] and cur + 1 < nb:
                        command = cur + 1
                        thr = 0.0
                        autobox_time[v] = 0.0
                        autobox_active[v] = True
                    if ratio < pf[v, PF_DOWN_RATIOS + cur] and cur > neutral + 1:
                        command = cur - 1
                        thr = 0.0
                        autobox_time[v] = 0.0
                        autobox_active[v] = True
                else:
                    autobox_time[v] = float32_timer_add(autobox_time[v], dt)
                target = command
        elif target == AUTOMATIC_GEAR:
            target = tgt
        speed = longitudinal_speed(axis, lin_vel, quat, v)
        brake_steer_response(v, resp_f, resp_i, ack, speed, brakes, nb_brakes, steer, brake_out, steer_out)
        # gear_command_response_update
        if cur == tgt and target != cur and 0 <= target < pi[v, PI_NB_RATIOS]:
            current_gear[v] = pi[v, PI_NEUTRAL_GEAR]
            gearbox_target[v] = target
            switch_time[v] = GEAR_SWITCH_INITIATED
        # clutch_command_response_linear_update, throttle response
        c = clutch[v]
        clutch_normalised[v] = 1.0 - c
        clutch_response[v] = (1.0 - c) * pf[v, PF_CLUTCH_MAX_RESPONSE]
        throttle_response[v] = thr


@njit(**_JIT)
def _clear_differential(v, connected, torque_ratios, ave_ratios):  # pragma: no cover - compiled
    """Vehicle ``v``'s differential state back to "no wheel connected" before it is rebuilt."""
    for j in range(connected.shape[1]):
        connected[v, j] = -1
        torque_ratios[v, j] = 0.0
        ave_ratios[v, j] = 0.0


@njit(**_JIT)
def _open_differential(wf, wi, v, connected, nb_connected, torque_ratios, ave_ratios):  # pragma: no cover
    """``_open_differential``: wheels with a non-zero torque ratio, in axle order."""
    nb_wheels = connected.shape[1]
    _clear_differential(v, connected, torque_ratios, ave_ratios)
    m = 0
    for k in range(nb_wheels):
        j = wi[v, k, WI_AXLE_ORDER]
        if j < 0:
            continue
        t = wf[v, j, WF_TORQUE_RATIO]
        if t != 0.0:
            connected[v, m] = j
            m += 1
            torque_ratios[v, j] = t
            ave_ratios[v, j] = wf[v, j, WF_AVE_RATIO]
    nb_connected[v] = m


@njit(**_JIT)
def _clear_groups(v, group, multiplier, nb_groups):  # pragma: no cover - compiled
    for j in range(group.shape[1]):
        group[v, j] = -1
        multiplier[v, j] = 0.0
    nb_groups[v] = 0


@njit(**_JIT)
def _same_sign_magnitudes(w, i0, i1):  # pragma: no cover - compiled
    w0 = w[i0]
    w1 = w[i1]
    if w0 == 0.0 or _sign(w0) != _sign(w1):
        return False, 0.0, 0.0
    return True, abs(w0), abs(w1)


@njit(**_JIT)
def _axle_sums(w, f0, f1, r0, r1):  # pragma: no cover - compiled
    w0 = w[f0]
    s0 = _sign(w0)
    if w0 == 0.0 or _sign(w[f1]) != s0 or _sign(w[r0]) != s0 or _sign(w[r1]) != s0:
        return False, 0.0, 0.0
    return True, abs(w0) + abs(w[f1]), abs(w[r0]) + abs(w[r1])


@njit(**_JIT)
def _target_ratio(target, base_ok, base, ratio, predicted, inst, rate, dt):  # pragma: no cover - compiled
    if not predicted:
        return target if inst else _py_max(target, ratio - rate * dt)
    if inst or not base_ok:
        return target
    return _py_max(target, base - rate * dt)


@njit(**_JIT)
def _pair(check, now, i0, i1, bias, target, predicted, inst, rate, dt):  # pragma: no cover - compiled
    """(breached, target multiplier of the second wheel, its current speed ratio)."""
    ok, a0, a1 = _same_sign_magnitudes(check, i0, i1)
    if not ok:
        return False, 0.0, 0.0
    if bias < 1.0:
        return False, 0.0, a1 / a0
    ratio = _py_max(a0, a1) / _py_min(a0, a1)
    base_ok, b0, b1 = _same_sign_magnitudes(now, i0, i1)
    base = _py_max(b0, b1) / _py_min(b0, b1) if base_ok else 0.0
    t = _target_ratio(target, base_ok, base, ratio, predicted, inst, rate, dt)
    return ratio > bias, (1.0 / t if a0 > a1 else t), a1 / a0


@njit(**_JIT)
def _limited_slip_groups(pf, pi, v, now, check, predicted, dt, group, multiplier,
                         nb_groups):  # pragma: no cover - compiled
    """The constraint groups of ``four_wheel_differential_state_update`` for vehicle ``v``."""
    _clear_groups(v, group, multiplier, nb_groups)
    fb, rb, cb = pf[v, PF_FRONT_BIAS], pf[v, PF_REAR_BIAS], pf[v, PF_CENTER_BIAS]
    rate = pf[v, PF_RATE]
    if fb == 0.0 and rb == 0.0 and cb == 0.0:
        return
    if rate == 0.0:
        return
    inst = pi[v, PI_INSTANTANEOUS] != 0
    f0, f1, r0, r1 = pi[v, PI_FRONT_W0], pi[v, PI_FRONT_W1], pi[v, PI_REAR_W0], pi[v, PI_REAR_W1]
    front_breached, t_front, r_front = _pair(check, now, f0, f1, fb, pf[v, PF_FRONT_TARGET], predicted, inst,
                                             rate, dt)
    rear_breached, t_rear, r_rear = _pair(check, now, r0, r1, rb, pf[v, PF_REAR_TARGET], predicted, inst,
                                          rate, dt)
    centre_breached = False
    t_centre = 0.0
    if cb >= 1.0:
        ok, front_sum, rear_sum = _axle_sums(check, f0, f1, r0, r1)
        if ok:
            ratio = _py_max(front_sum, rear_sum) / _py_min(front_sum, rear_sum)
            centre_breached = ratio > cb
            base_ok, bf, br = _axle_sums(now, f0, f1, r0, r1)
            base = _py_max(bf, br) / _py_min(bf, br) if base_ok else 0.0
            t = _target_ratio(pf[v, PF_CENTER_TARGET], base_ok, base, ratio, predicted, inst, rate, dt)
            t_centre = 1.0 / t if front_sum > rear_sum else t
    if centre_breached:
        f = t_front if front_breached else r_front
        r = t_rear if rear_breached else r_rear
        k = t_centre * (1.0 + f) / (1.0 + r)
        group[v, f0] = 0
        group[v, f1] = 0
        group[v, r0] = 0
        group[v, r1] = 0
        multiplier[v, f0] = 1.0
        multiplier[v, f1] = f
        multiplier[v, r0] = k
        multiplier[v, r1] = r * k
        nb_groups[v] = 1
    else:
        g = 0
        if front_breached:
            group[v, f0] = g
            group[v, f1] = g
            multiplier[v, f0] = 1.0
            multiplier[v, f1] = t_front
            g += 1
        if rear_breached:
            group[v, r0] = g
            group[v, r1] = g
            multiplier[v, r0] = 1.0
            multiplier[v, r1] = t_rear
            g += 1
        nb_groups[v] = g


@njit(**_JIT)
def _k_multi_wheel_differential(wf, wi, connected, nb_connected, torque_ratios, ave_ratios, group, multiplier,
                                nb_groups):  # pragma: no cover - compiled
    for v in range(connected.shape[0]):
        _open_differential(wf, wi, v, connected, nb_connected, torque_ratios, ave_ratios)
        _clear_groups(v, group, multiplier, nb_groups)


@njit(**_JIT)
def _k_four_wheel_differential(pf, pi, wf, wi, wheel_speed, dt, connected, nb_connected, torque_ratios,
                               ave_ratios, group, multiplier, nb_groups):  # pragma: no cover - compiled
    for v in range(connected.shape[0]):
        _open_differential(wf, wi, v, connected, nb_connected, torque_ratios, ave_ratios)
        w = wheel_speed[v]
        _limited_slip_groups(pf, pi, v, w, w, False, dt, group, multiplier, nb_groups)


@njit(**_JIT)
def _k_tank_differential(pf, pi, wf, wi, thrusts, connected, nb_connected, torque_ratios, ave_ratios, group,
                         multiplier, nb_groups):  # pragma: no cover - compiled
    nb_wheels = connected.shape[1]
    for v in range(connected.shape[0]):
        # tank_thrust_command_response
        lo = pf[v, PF_TANK_MIN_THRUST]
        t0 = _py_min(_py_max(thrusts[v, 0], lo), 1.0)
        t1 = _py_min(_py_max(thrusts[v, 1], lo), 1.0)
        _clear_differential(v, connected, torque_ratios, ave_ratios)
        m = 0
        for k in range(nb_wheels):
            j = wi[v, k, WI_AXLE_ORDER]
            if j < 0:
                continue
            tr = wf[v, j, WF_TORQUE_RATIO]
            on_track = wi[v, j, WI_TRACK] >= 0
            if tr != 0.0 or on_track:
                connected[v, m] = j
                m += 1
                if on_track:
                    torque_ratios[v, j] = tr * (t0 if wi[v, j, WI_THRUST_ID] == 0 else t1)
                else:
                    torque_ratios[v, j] = tr
            if tr != 0.0:
                ave_ratios[v, j] = wf[v, j, WF_AVE_RATIO]
        nb_connected[v] = m
        for j in range(nb_wheels):
            g = wi[v, j, WI_TRACK_GROUP]
            group[v, j] = g
            multiplier[v, j] = wf[v, j, WF_TRACK_MULTIPLIER] if g >= 0 else 0.0
        nb_groups[v] = pi[v, PI_TANK_NB_GROUPS]


@njit(**_JIT)
def _k_actuation(pi, brake, throttle_response, clutch_response, current_gear, torque_ratios, is_brake,
                 is_drive):  # pragma: no cover - compiled
    for v in range(brake.shape[0]):
        k = clutch_response[v] if current_gear[v] != pi[v, PI_NEUTRAL_GEAR] else 0.0
        drive_possible = k != 0.0 and throttle_response[v] != 0.0
        for j in range(brake.shape[1]):
            braked = brake[v, j] != 0.0
            is_brake[v, j] = braked
            is_drive[v, j] = drive_possible and not braked and torque_ratios[v, j] != 0.0


@njit(**_JIT)
def _solve(mat, rhs, init, n, estimate, iterations, grouped, cmat, nr, lu, row_p, col_p, a, ata, atb, x
           ):  # pragma: no cover - compiled
    """``solve_clutch_system`` into ``x[:n]``: least squares over ``cmat[:n, :nr]`` if ``grouped``,
    else LU (full pivoting) or Gauss-Seidel; a singular system keeps ``init``."""
    if grouped:
        _k_normal_equations_n(mat, cmat, rhs, a, ata, atb, n, nr)
        for i in range(nr):
            for j in range(nr):
                lu[i, j] = ata[i, j]
        det = _k_lu_decompose_n(lu, row_p, col_p, nr)
        if det == 0.0:
            for i in range(n):
                x[i] = init[i]
            return
        _k_lu_solve_n(lu, row_p, col_p, atb, nr)
        for i in range(n):
            acc = 0.0
            for r in range(nr):
                acc += cmat[i, r] * atb[r]
            x[i] = acc
        return
    for i in range(n):
        x[i] = init[i]
    if estimate:
        _k_gauss_seidel_n(mat, rhs, x, iterations, GAUSS_SEIDEL_TOLERANCE, n)
        return
    for i in range(n):
        for j in range(n):
            lu[i, j] = mat[i, j]
    det = _k_lu_decompose_n(lu, row_p, col_p, n)
    if det == 0.0:
        return
    for i in range(n):
        x[i] = rhs[i]
    _k_lu_solve_n(lu, row_p, col_p, x, n)


@njit(**_JIT)
def _reduction(cmat, conn, m, group, multiplier, nb_groups, v):  # pragma: no cover - compiled
    """``constraint_reduction`` into ``cmat``; returns the number of reduced unknowns."""
    nf = 0
    for i in range(m):
        if group[v, conn[i]] < 0:
            nf += 1
    nr = nf + nb_groups[v] + 1
    for i in range(m + 1):
        for r in range(nr):
            cmat[i, r] = 0.0
    f = 0
    for i in range(m):
        j = conn[i]
        g = group[v, j]
        if g < 0:
            cmat[i, f] = 1.0
            f += 1
        else:
            cmat[i, nf + g] = multiplier[v, j]
    cmat[m, nr - 1] = 1.0
    return nr


@njit(**_JIT)
def _k_drivetrain(pf, pi, wf, wi, dt, current_gear, gearbox_target, switch_time, throttle_response,
                  clutch_normalised, clutch_response, connected, nb_connected, torque_ratios, ave_ratios,
                  group, multiplier, nb_groups, brake, is_brake, tire_torque, wheel_speed, engine_speed,
                  clutch_slip):  # pragma: no cover - compiled
    """EngineDrivetrainComponent.update for every vehicle: gearbox_update, engine_drivetrain_update."""
    nv, nb_wheels = wheel_speed.shape
    size = nb_wheels + _NB_UNKNOWNS_MAX_EXTRA
    mat = np.empty((size, size))
    lu = np.empty((size, size))
    cmat = np.empty((size, size))
    a = np.empty((size, size))
    ata = np.empty((size, size))
    rhs = np.empty(size)
    init = np.empty(size)
    x = np.empty(size)
    atb = np.empty(size)
    h = np.empty(size)
    rg = np.empty(size)
    ag = np.empty(size)
    row_p = np.empty(size, dtype=np.int64)
    col_p = np.empty(size, dtype=np.int64)
    predicted = np.empty(nb_wheels)
    is_connected = np.empty(nb_wheels, dtype=np.bool_)
    for v in range(nv):
        # gearbox_update
        cur = current_gear[v]
        if gearbox_target[v] != cur:
            if switch_time[v] == GEAR_SWITCH_INITIATED:
                switch_time[v] = 0.0
            else:
                switch_time[v] = float32_timer_add(switch_time[v], dt)
            if switch_time[v] > pf[v, PF_SWITCH_TIME]:
                cur = gearbox_target[v]
                current_gear[v] = cur
                switch_time[v] = NO_GEAR_SWITCH_PENDING
        # engine_drivetrain_update
        in_gear = cur != pi[v, PI_NEUTRAL_GEAR]
        k = clutch_response[v] if in_gear else 0.0
        gr = pf[v, PF_RATIOS + cur] * pf[v, PF_FINAL_RATIO]
        we = engine_speed[v]
        thr = throttle_response[v]
        max_omega = pf[v, PF_MAX_OMEGA]
        torque = thr * pf[v, PF_PEAK_TORQUE] * _curve(pf, pi[v, PI_CURVE_COUNT], v, we / max_omega)
        kn = clutch_normalised[v] if in_gear else 0.0
        engaged = pf[v, PF_DAMPING_ENGAGED]
        zero_throttle = engaged + (1.0 - kn) * (pf[v, PF_DAMPING_DISENGAGED] - engaged)
        damping = zero_throttle + (pf[v, PF_DAMPING_FULL] - zero_throttle) * thr
        conn = connected[v]
        m = nb_connected[v]
        w = wheel_speed[v]
        clutch_slip[v] = gr * _k_weighted_sum(w, ave_ratios[v], conn, m) - we
        # clutch_system
        kgg = k * gr * gr
        kg = k * gr
        for i in range(m):
            j = conn[i]
            tr = torque_ratios[v, j]
            s = _sign(tr)
            rg[i] = abs(tr) * s
            ag[i] = ave_ratios[v, j] * s
            h[i] = dt / wf[v, j, WF_MOI]
        for i in range(m):
            u = h[i] * kgg * rg[i]
            for jj in range(m):
                mat[i, jj] = u * ag[jj]
            j = conn[i]
            mat[i, i] += 1.0 + h[i] * wf[v, j, WF_DAMPING]
            mat[i, m] = -h[i] * kg * rg[i]
            wi_ = w[j]
            rhs[i] = wi_ + h[i] * (-brake[v, j] * _sign(wi_) + tire_torque[v, j])
            init[i] = wi_
        h_e = dt / pf[v, PF_ENGINE_MOI]
        c_e = -h_e * k * gr
        for jj in range(m):
            mat[m, jj] = c_e * ag[jj]
        mat[m, m] = 1.0 + h_e * (k + damping)
        rhs[m] = we + h_e * torque
        init[m] = we
        n = m + 1
        # solve_clutch_system
        estimate = pi[v, PI_ESTIMATE] != 0
        iterations = pi[v, PI_ESTIMATE_ITERATIONS]
        # Flags and counts go in as np.bool_ / np.int64, never as the literals False, 0, True: a
        # literal argument compiles another specialization of _solve and of its solvers.
        if pi[v, PI_PREDICT_BREACH] == 0:
            nr = np.int64(0)
            grouped = nb_groups[v] > 0
            if grouped:
                nr = _reduction(cmat, conn, m, group, multiplier, nb_groups, v)
            _solve(mat, rhs, init, n, estimate, iterations, grouped, cmat, nr, lu, row_p, col_p, a, ata, atb,
                   x)
        else:
            _solve(mat, rhs, init, n, estimate, iterations, np.bool_(False), cmat, np.int64(0), lu, row_p,
                   col_p, a, ata, atb, x)
            for j in range(nb_wheels):
                predicted[j] = w[j]
            for i in range(m):
                predicted[conn[i]] = x[i]
            _limited_slip_groups(pf, pi, v, w, predicted, True, dt, group, multiplier, nb_groups)
            if nb_groups[v] > 0:
                nr = _reduction(cmat, conn, m, group, multiplier, nb_groups, v)
                _solve(mat, rhs, init, n, estimate, iterations, np.bool_(True), cmat, nr, lu, row_p, col_p, a,
                       ata, atb, x)
        # apply_brake_lock on the connected wheels, engine speed clamp
        for j in range(nb_wheels):
            is_connected[j] = False
        for i in range(m):
            j = conn[i]
            is_connected[j] = True
            new = x[i]
            if is_brake[v, j] and init[i] * new <= 0.0:
                new = 0.0
            w[j] = new
        engine_speed[v] = _py_min(_py_max(x[m], pf[v, PF_IDLE_OMEGA]), max_omega)
        # Wheels not on the differential: damped spin with tire and brake torque only.
        for kk in range(nb_wheels):
            j = wi[v, kk, WI_AXLE_ORDER]
            if j < 0 or is_connected[j]:
                continue
            w0 = w[j]
            t = tire_torque[v, j] + -brake[v, j] * _sign(w0)
            dt_over_moi = dt / wf[v, j, WF_MOI]
            new = (w0 + dt_over_moi * t) / (1.0 + wf[v, j, WF_DAMPING] * dt_over_moi)
            if is_brake[v, j] and w0 * new <= 0.0:
                new = 0.0
            w[j] = new


# --- components ------------------------------------------------------------------------------


class EngineDriveCommandResponseBatchComponent(Component):
    """Commands -> brake torques, steer angles, gear shift, clutch strength and throttle for the
    whole fleet (``EngineDriveCommandResponseComponent``), one kernel call.

    The brake and steer part is :mod:`simcore.commands.batch`'s, inline; the autobox acts where a
    vehicle has one and its target gear command is ``AUTOMATIC_GEAR``.
    """

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        s = fleet.states
        tx = _transmission(fleet)
        clutch = s.clutch_command_response.arrays
        self._states = (
            s.rigid_body.arrays["linear_velocity"], s.rigid_body.arrays["quat"], s.commands.arrays["brakes"],
            s.commands.arrays["nb_brakes"], s.commands.arrays["steer"],
            s.brake_command_response.arrays["response"], s.steer_command_response.arrays["response"])
        self._engine_states = (
            s.commands.arrays["throttle"], tx.arrays["target_gear"], tx.arrays["clutch"],
            s.engine.arrays["rotation_speed"], s.gearbox.arrays["current_gear"],
            s.gearbox.arrays["target_gear"], s.gearbox.arrays["gear_switch_time"],
            s.autobox.arrays["time_since_last_shift"], s.autobox.arrays["active_autobox_gear_shift"],
            clutch["normalised_command_response"], clutch["command_response"],
            s.throttle_command_response.arrays["command_response"])
        self.repack()

    def repack(self) -> None:
        """Pack brake, steer, Ackermann, engine, gearbox, autobox and clutch params."""
        self.resp_f, self.resp_i, self.ack = pack_command_responses(self.fleet.params, self.fleet.nb_wheels)
        self.axis = speed_axis(self.fleet.frame)
        self.pf, self.pi, self.wf, self.wi = pack_engine_params(self.fleet.params)

    def update(self, dt: float, context: SimulationContext) -> bool:
        lin_vel, quat, brakes, nb_brakes, steer, brake_out, steer_out = self._states
        _k_command_response(self.resp_f, self.resp_i, self.ack, self.axis, lin_vel, quat, brakes, nb_brakes,
                            steer, brake_out, steer_out, self.pf, self.pi, *self._engine_states, dt)
        return True


class _DifferentialBatchBase(Component):
    """Shared wiring of the differential batch components."""

    def __init__(self, fleet: Any, groups: StateBatch | None = None) -> None:
        self.fleet = fleet
        d = fleet.states.differential
        g = constraint_group_batch(fleet) if groups is None else groups
        self.groups = g
        self._diff = (d.arrays["connected_wheels"], d.arrays["nb_connected_wheels"],
                      d.arrays["torque_ratios_all_wheels"],
                      d.arrays["ave_wheel_speed_contribution_all_wheels"],
                      g.arrays["group"], g.arrays["multiplier"], g.arrays["nb_groups"])
        self.repack()

    def repack(self) -> None:
        """Pack the differential (and wheel) params of every vehicle."""
        self.pf, self.pi, self.wf, self.wi = pack_engine_params(self.fleet.params)


class MultiWheelDriveDifferentialStateBatchComponent(_DifferentialBatchBase):
    """Open differential split for the fleet (``MultiWheelDriveDifferentialStateComponent``); clears
    the constraint groups."""

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_multi_wheel_differential(self.wf, self.wi, *self._diff)
        return True


class FourWheelDriveDifferentialStateBatchComponent(_DifferentialBatchBase):
    """Limited-slip split and constraint groups for the fleet
    (``FourWheelDriveDifferentialStateComponent``)."""

    def __init__(self, fleet: Any, groups: StateBatch | None = None) -> None:
        self._wheel_speed = fleet.states.wheel_rigid_body_1d.arrays["rotation_speed"]
        super().__init__(fleet, groups)

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_four_wheel_differential(self.pf, self.pi, self.wf, self.wi, self._wheel_speed, dt, *self._diff)
        return True


class TankDriveDifferentialStateBatchComponent(_DifferentialBatchBase):
    """Tank split and track constraints for the fleet (``TankDriveDifferentialStateComponent``),
    thrusts through each tank's drive model first."""

    def __init__(self, fleet: Any, groups: StateBatch | None = None) -> None:
        self._thrusts = fleet.states.tank_drive_transmission.arrays["thrusts"]
        super().__init__(fleet, groups)

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_tank_differential(self.pf, self.pi, self.wf, self.wi, self._thrusts, *self._diff)
        return True


def differential_state_batch_component(fleet: Any, groups: StateBatch | None = None) -> Component:
    """The differential batch component matching the fleet's differential type."""
    d = fleet.params[0].differential
    if isinstance(d, TankDriveDifferentialParams):
        return TankDriveDifferentialStateBatchComponent(fleet, groups)
    if isinstance(d, FourWheelDriveDifferentialParams):
        return FourWheelDriveDifferentialStateBatchComponent(fleet, groups)
    if isinstance(d, MultiWheelDriveDifferentialParams):
        return MultiWheelDriveDifferentialStateBatchComponent(fleet, groups)
    raise TypeError(f"params.differential must be a differential params object, got {type(d).__name__}")


class EngineDriveActuationStateBatchComponent(Component):
    """Brake / drive flags per wheel for the fleet (``EngineDriveActuationStateComponent``)."""

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        s = fleet.states
        self._states = (
            s.brake_command_response.arrays["response"],
            s.throttle_command_response.arrays["command_response"],
            s.clutch_command_response.arrays["command_response"], s.gearbox.arrays["current_gear"],
            s.differential.arrays["torque_ratios_all_wheels"], s.wheel_actuation.arrays["is_brake_applied"],
            s.wheel_actuation.arrays["is_drive_applied"])
        self.repack()

    def repack(self) -> None:
        """Pack the gearbox's neutral gear of every vehicle."""
        self.pf, self.pi, self.wf, self.wi = pack_engine_params(self.fleet.params)

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_actuation(self.pi, *self._states)
        return True


class EngineDrivetrainBatchComponent(Component):
    """Gearbox timer, then engine and wheel speeds through clutch, gears and differential for the
    fleet (``EngineDrivetrainComponent``), one kernel call per substep.

    Writes ``gearbox``, ``wheel_rigid_body_1d.rotation_speed``, ``engine``, ``clutch_slip`` and, for
    a four-wheel differential with ``predict_breach``, the constraint groups it applied.
    """

    def __init__(self, fleet: Any, groups: StateBatch | None = None) -> None:
        self.fleet = fleet
        s = fleet.states
        g = constraint_group_batch(fleet) if groups is None else groups
        self.groups = g
        d = s.differential
        self._states = (
            s.gearbox.arrays["current_gear"], s.gearbox.arrays["target_gear"],
            s.gearbox.arrays["gear_switch_time"], s.throttle_command_response.arrays["command_response"],
            s.clutch_command_response.arrays["normalised_command_response"],
            s.clutch_command_response.arrays["command_response"], d.arrays["connected_wheels"],
            d.arrays["nb_connected_wheels"], d.arrays["torque_ratios_all_wheels"],
            d.arrays["ave_wheel_speed_contribution_all_wheels"], g.arrays["group"], g.arrays["multiplier"],
            g.arrays["nb_groups"], s.brake_command_response.arrays["response"],
            s.wheel_actuation.arrays["is_brake_applied"], s.tire_force.arrays["wheel_torque"],
            s.wheel_rigid_body_1d.arrays["rotation_speed"], s.engine.arrays["rotation_speed"],
            s.clutch_slip.arrays["clutch_slip"])
        self.repack()

    def repack(self) -> None:
        """Pack engine, gearbox, clutch, differential and wheel params of every vehicle."""
        self.pf, self.pi, self.wf, self.wi = pack_engine_params(self.fleet.params)

    def update(self, dt: float, context: SimulationContext) -> bool:
        _k_drivetrain(self.pf, self.pi, self.wf, self.wi, dt, *self._states)
        return True


def engine_batch_components(fleet: Any) -> tuple[Component, Component, Component]:
    """(command response, differential + actuation chain, drivetrain) for the fleet's default
    sequence, in the slots the engine-drive plug-in's ``make_components`` fills."""
    groups = constraint_group_batch(fleet)
    chain = ComponentChain([("differential", differential_state_batch_component(fleet, groups)),
                            ("actuation", EngineDriveActuationStateBatchComponent(fleet))])
    return (EngineDriveCommandResponseBatchComponent(fleet), chain,
            EngineDrivetrainBatchComponent(fleet, groups))
