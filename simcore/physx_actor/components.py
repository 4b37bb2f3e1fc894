"""Batch components of the PhysX actor layer (Vehicle2's ``physxActor`` / ``physxConstraints``
components, and the chassis part of the PhysX scene's step).

* :class:`PhysXActorBeginBatchComponent` — ``physx_actor_begin`` (``PxVehiclePhysXActorBeginComponent``):
  wake a sleeping actor when a command asks for motion (``PxVehiclePhysxActorWakeup``); for a
  sleeping one zero the body and wheel speeds, set the engine to idle, drop its rows and skip its
  update (``PxVehiclePhysxActorSleepCheck``); otherwise read the actor's centre-of-mass pose and
  velocities into the rigid body state (``PxVehicleReadRigidBodyStateFromPhysXActor``).
* :class:`PhysXActorEndBatchComponent` — ``physx_actor_end``: hand the vehicle's velocities to the
  actor (``PxVehicleWriteRigidBodyStateToPhysXActor``), keep it awake while driven
  (``PxVehiclePhysxActorKeepAwakeCheck``), then step the actor as the PhysX scene does
  (:func:`~simcore.physx_actor.solver.chassis_step`: the rows solved once per step, after the
  vehicle update) and run its sleep counter.

A vehicle whose actor sleeps is skipped by PhysX (the begin component returns false); a batch
cannot skip a row, so the begin component keeps the sleeping rows and the end component puts them
back, leaving exactly what PhysX leaves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pvdkit.jit import njit
from simcore.commands.states import AUTOMATIC_GEAR
from simcore.component import Component
from simcore.context import SimulationContext
from simcore.maths import qmul, qrot
from simcore.physx_actor.params import PhysXActorParams
from simcore.physx_actor.solver import (
    A_ANG_DAMP,
    A_CPOS,
    A_CQUAT,
    A_GYRO,
    A_LIN_DAMP,
    A_MASS,
    A_MAX_ANG,
    A_MAX_LIN,
    A_MODE,
    A_MOI,
    A_POS_ITERS,
    A_SLEEP,
    A_VEL_ITERS,
    A_WAKE_RESET,
    ACTOR_WIDTH,
    WORK_WIDTH,
    chassis_step,
    update_wake_counter,
    work_rows,
)

_JIT = {"cache": True, "nogil": True}

#: ``PxVehiclePhysXSimulationContext::physxActorWakeCounterThreshold`` as a fraction of the reset value.
WAKE_COUNTER_THRESHOLD_FRACTION = 0.5


def pack_actor_params(params: Any) -> np.ndarray:
    """(ACTOR_WIDTH,) the actor params of one vehicle (its ``VehicleParams``), for the kernels."""
    a: PhysXActorParams = params.physx_actor
    out = np.zeros(ACTOR_WIDTH)
    out[A_CPOS:A_CPOS + 3] = a.cmass_local_pos
    out[A_CQUAT:A_CQUAT + 4] = a.cmass_local_quat
    out[A_LIN_DAMP], out[A_ANG_DAMP] = a.linear_damping, a.angular_damping
    out[A_MAX_LIN], out[A_MAX_ANG] = a.max_linear_velocity, a.max_angular_velocity
    out[A_GYRO] = 1.0 if a.gyroscopic else 0.0
    out[A_SLEEP], out[A_WAKE_RESET] = a.sleep_threshold, a.wake_counter_reset
    out[A_POS_ITERS], out[A_VEL_ITERS] = a.position_iterations, a.velocity_iterations
    out[A_MODE] = int(a.update_mode)
    out[A_MASS] = params.rigid_body.mass
    out[A_MOI:A_MOI + 3] = params.rigid_body.moi
    return out


def actor_pose_from_body(params: Any, pos: np.ndarray, quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The actor origin's pose for a centre-of-mass pose (``pose * inverse(cMassLocalPose)``)."""
    a: PhysXActorParams = params.physx_actor
    c = a.cmass_local_quat
    q = np.array(qmul(*quat, -c[0], -c[1], -c[2], c[3]))
    return np.asarray(pos, dtype=np.float64) - np.array(qrot(*q, *a.cmass_local_pos)), q


@njit(**_JIT)
def _k_begin(actor, idle_omega, neutral_gear, throttle, steer, cmd_gear, current_gear, target_gear,
             a_pos, a_quat, a_lin, a_ang, a_wake, a_sleeping, a_prev_steer, pos, quat, lin, ang, prev_lin,
             prev_ang, wheel_speed, wheel_corrected, t_active, s_active, engine_speed):  # pragma: no cover
    n_sleeping = 0
    for v in range(actor.shape[0]):
        # PxVehiclePhysxActorWakeup: a driver's intent to move wakes a sleeping actor.
        intent = throttle[v] != 0.0 or (not np.isnan(a_prev_steer[v]) and steer[v] != a_prev_steer[v])
        if not intent and neutral_gear[v] >= 0:
            want = cmd_gear[v]
            intent = current_gear[v] == target_gear[v] and (
                (want != AUTOMATIC_GEAR and target_gear[v] != want)
                or (want == AUTOMATIC_GEAR and current_gear[v] <= neutral_gear[v]))
        if a_sleeping[v] and intent:
            a_sleeping[v] = False
            a_wake[v] = actor[v, A_WAKE_RESET]
        a_prev_steer[v] = steer[v]
        if a_sleeping[v]:
            # PxVehiclePhysxActorSleepCheck: still, idle, no rows; the update is skipped.
            n_sleeping += 1
            for k in range(3):
                lin[v, k] = 0.0
                ang[v, k] = 0.0
                prev_lin[v, k] = 0.0
                prev_ang[v, k] = 0.0
            for w in range(wheel_speed.shape[1]):
                wheel_speed[v, w] = 0.0
                wheel_corrected[v, w] = 0.0
                t_active[v, w, 0] = False
                t_active[v, w, 1] = False
                s_active[v, w] = False
            if neutral_gear[v] >= 0:
                engine_speed[v] = idle_omega[v]
            continue
        # PxVehicleReadRigidBodyStateFromPhysXActor: the centre of mass is pose * cMassLocalPose.
        qx, qy, qz, qw = a_quat[v, 0], a_quat[v, 1], a_quat[v, 2], a_quat[v, 3]
        cx, cy, cz = qrot(qx, qy, qz, qw, actor[v, A_CPOS], actor[v, A_CPOS + 1], actor[v, A_CPOS + 2])
        pos[v, 0], pos[v, 1], pos[v, 2] = a_pos[v, 0] + cx, a_pos[v, 1] + cy, a_pos[v, 2] + cz
        quat[v, 0], quat[v, 1], quat[v, 2], quat[v, 3] = qmul(
            qx, qy, qz, qw, actor[v, A_CQUAT], actor[v, A_CQUAT + 1], actor[v, A_CQUAT + 2],
            actor[v, A_CQUAT + 3])
        for k in range(3):
            lin[v, k] = a_lin[v, k]
            ang[v, k] = a_ang[v, k]
            prev_lin[v, k] = a_lin[v, k]
            prev_ang[v, k] = a_ang[v, k]
    return n_sleeping


@njit(**_JIT)
def _k_end(actor, wheel_energy, dt, throttle, current_gear, target_gear, prev_lin, prev_ang, lin, ang,
           t_active, t_linears, t_angulars, t_damping, s_active, s_linear, s_angular, s_error, s_restitution,
           a_pos, a_quat, a_lin, a_ang, a_wake, a_sleeping, lin_sum, ang_sum, work, iw):  # pragma: no cover
    for v in range(actor.shape[0]):
        if a_sleeping[v]:
            continue  # PhysX does not move a sleeping actor (and writes nothing to it)
        reset = actor[v, A_WAKE_RESET]
        # PxVehiclePhysxActorKeepAwakeCheck: driven or spinning wheels keep the actor awake.
        if a_wake[v] < 0.5 * reset:
            keep = throttle[v] > 0.0 or current_gear[v] != target_gear[v]
            for w in range(wheel_energy.shape[1]):
                keep = keep or wheel_energy[v, w] > actor[v, A_SLEEP]
            if keep:
                a_wake[v] = reset
        chassis_step(actor[v], dt, prev_lin[v], prev_ang[v], lin[v], ang[v], t_active[v], t_linears[v],
                     t_angulars[v], t_damping[v], s_active[v], s_linear[v], s_angular[v], s_error[v],
                     s_restitution[v], a_pos[v], a_quat[v], a_lin[v], a_ang[v], work, iw)
        # The scene's sleep counter: a nearly still actor runs its wake counter down and sleeps.
        a_wake[v] = update_wake_counter(actor[v], dt, a_wake[v], a_quat[v], a_lin[v], a_ang[v], lin_sum[v],
                                        ang_sum[v])
        if a_wake[v] == 0.0:
            a_sleeping[v] = True
            for k in range(3):
                a_lin[v, k] = 0.0
                a_ang[v, k] = 0.0
                lin_sum[v, k] = 0.0
                ang_sum[v, k] = 0.0


class _SleepingRows:
    """The states of vehicles whose actor sleeps, kept by the begin component for the end one."""

    def __init__(self) -> None:
        self.rows: np.ndarray | None = None
        self.saved: Any = None


class PhysXActorBeginBatchComponent(Component):
    """``physx_actor_begin`` for a fleet (see the module docstring)."""

    def __init__(self, fleet: Any) -> None:
        self.fleet = fleet
        self.sleeping = _SleepingRows()
        s = fleet.states
        n = len(fleet)
        a, rb, c = s.physx_actor.arrays, s.rigid_body.arrays, s.constraints.arrays
        transmission = s.get("engine_drive_transmission") or s.get("tank_drive_transmission")
        gearbox, engine = s.get("gearbox"), s.get("engine")
        self._commands = s.commands.arrays
        gears = ((transmission.arrays["target_gear"], gearbox.arrays["current_gear"],
                  gearbox.arrays["target_gear"]) if gearbox is not None and transmission is not None
                 else (np.zeros(n, np.int64),) * 3)
        self._gears = gears
        self._states = (a["pos"], a["quat"], a["linear_velocity"], a["angular_velocity"], a["wake_counter"],
                        a["is_sleeping"], a["previous_steer"], rb["pos"], rb["quat"], rb["linear_velocity"],
                        rb["angular_velocity"], rb["previous_linear_velocity"],
                        rb["previous_angular_velocity"],
                        s.wheel_rigid_body_1d.arrays["rotation_speed"],
                        s.wheel_rigid_body_1d.arrays["corrected_rotation_speed"], c["tire_active_status"],
                        c["susp_active_status"],
                        engine.arrays["rotation_speed"] if engine is not None else np.zeros(n))
        self.repack()

    def repack(self) -> None:
        params = self.fleet.params
        self._actor = np.stack([pack_actor_params(p) for p in params])
        self._idle = np.array([p.engine.idle_omega if p.engine is not None else 0.0 for p in params])
        self._neutral = np.array([p.gearbox.neutral_gear if p.gearbox is not None else -1 for p in params],
                                 dtype=np.int64)

    def update(self, dt: float, context: SimulationContext) -> bool:
        cmd = self._commands
        n_sleeping = _k_begin(self._actor, self._idle, self._neutral, cmd["throttle"], cmd["steer"],
                              *self._gears, *self._states)
        if n_sleeping:
            rows = np.flatnonzero(self.fleet.states.physx_actor.arrays["is_sleeping"])
            self.sleeping.rows = rows
            self.sleeping.saved = self.fleet.states.save_rows(rows)
        else:
            self.sleeping.rows = None
        return True


class PhysXActorEndBatchComponent(Component):
    """``physx_actor_end`` for a fleet (see the module docstring)."""

    def __init__(self, fleet: Any, begin: PhysXActorBeginBatchComponent) -> None:
        self.fleet = fleet
        self.begin = begin
        s = fleet.states
        a, rb, c = s.physx_actor.arrays, s.rigid_body.arrays, s.constraints.arrays
        gearbox = s.get("gearbox")
        n = len(fleet)
        self._gears = ((gearbox.arrays["current_gear"], gearbox.arrays["target_gear"]) if gearbox is not None
                       else (np.zeros(n, np.int64),) * 2)
        self._throttle = s.commands.arrays["throttle"]
        self._wheel_speed = s.wheel_rigid_body_1d.arrays["corrected_rotation_speed"]
        self._states = (rb["previous_linear_velocity"], rb["previous_angular_velocity"],
                        rb["linear_velocity"], rb["angular_velocity"], c["tire_active_status"],
                        c["tire_linears"], c["tire_angulars"], c["tire_damping"], c["susp_active_status"],
                        c["susp_linear"], c["susp_angular"], c["susp_geometric_error"], c["restitution"],
                        a["pos"], a["quat"], a["linear_velocity"], a["angular_velocity"], a["wake_counter"],
                        a["is_sleeping"], a["sleep_linear_sum"], a["sleep_angular_sum"])
        self._work = np.zeros((work_rows(fleet.nb_wheels), WORK_WIDTH))
        self._iw = np.zeros((3, 3))
        self.repack()

    def repack(self) -> None:
        params = self.fleet.params
        self._actor = np.stack([pack_actor_params(p) for p in params])
        # Normalised wheel energy factor: 0.5 moi / mass per wheel (PxVehiclePhysxActorKeepAwakeCheck).
        self._wheel_factor = np.stack([0.5 * p.wheel.moi / p.wheel.mass for p in params])

    def update(self, dt: float, context: SimulationContext) -> bool:
        sleeping = self.begin.sleeping
        if sleeping.rows is not None:  # PhysX skipped these vehicles' update: undo what ran
            self.fleet.states.restore_rows(sleeping.rows, sleeping.saved)
        energy = self._wheel_factor * self._wheel_speed * self._wheel_speed
        _k_end(self._actor, energy, dt, self._throttle, *self._gears, *self._states, self._work, self._iw)
        return True
