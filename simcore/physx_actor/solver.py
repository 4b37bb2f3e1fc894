"""The chassis part of ``PxScene::simulate``: PhysX's TGS solve of the vehicle's constraint rows,
then the actor's damping, gyroscopic term, integration and sleep counter.

Vehicle2 gives PhysX one ``PxConstraint`` per four wheels (``vehicleConstraintSolverPrep``):
suspension-limit rows (hard, one-sided, along the road normal, geometric error = the negative
separation) first, then the longitudinal, then the lateral sticky-tire rows (acceleration springs
with zero stiffness and damping ``c``). PhysX's TGS solver (the scene's ``solverType`` in every
PhysX vehicle recording) runs them as follows, and so does :func:`chassis_step` (the references are
PhysX's ``DyTGSDynamics.cpp``, ``DyTGSContactPrep.cpp``, ``DyCpuGpu1dConstraint.h`` and
``DyBodyCoreIntegrator.h``):

1. unconstrained velocity: ``v *= max(0, 1 - linear_damping dt)`` (angular alike), speed clamps,
   then the gyroscopic term (momentum-conserving, ``copyToSolverBodyDataStep``);
2. ``position_iterations`` sub-steps of ``h = dt / n``: each solves every row once (Gauss-Seidel,
   in Vehicle2's row order) and integrates the pose with the current velocity. A hard row targets
   ``J v = -erp (error + J dx) / h`` (``erp = 0.5 * 2 / sqrt(n)``, the bias clamped at ``0.75 / dt``),
   its accumulated impulse kept >= 0; a sticky row applies ``-a / (1 + a) J v / (J M^-1 J^T)``
   with ``a = h c`` (so a lone row decays as ``(1 + h c)^-n``);
3. ``velocity_iterations`` passes with the bias removed and the springs off: the hard rows then
   take back the velocity they added to correct the penetration. So a suspension-limit violation
   moves the chassis (position) without launching it (velocity) — what PhysX's recordings show;
4. the world inverse inertia stays that of the start pose (as PhysX's ``sqrtInvInertia``).

Given PhysX's recorded rows and velocities, this reproduces PhysX's actor pose and velocities to
float32 rounding (``tests/simcore/test_physx_actor.py``). The function is plain Python over
float64 arrays — readable as the reference — and compiled by numba for the batch.
"""

from __future__ import annotations

import math

import numpy as np

from pvdkit.jit import njit
from simcore.maths import qmul, qrot

_JIT = {"cache": True, "nogil": True}

# Per-vehicle actor params packed by the batch components (n, ACTOR_WIDTH).
A_CPOS, A_CQUAT = 0, 3
A_LIN_DAMP, A_ANG_DAMP, A_MAX_LIN, A_MAX_ANG, A_GYRO = 7, 8, 9, 10, 11
A_SLEEP, A_WAKE_RESET, A_POS_ITERS, A_VEL_ITERS, A_MODE = 12, 13, 14, 15, 16
A_MASS, A_MOI = 17, 18
ACTOR_WIDTH = 21

#: Row kinds in the work array.
_HARD, _SPRING = 0, 1
# Work row layout: linear (3), angular (3), kind, damping or geometric error, restitution,
# unit response, accumulated impulse, spring velocity multiplier.
_W_LIN, _W_ANG, _W_KIND, _W_PARAM, _W_REST, _W_RESP, _W_IMP, _W_VM = 0, 3, 6, 7, 8, 9, 10, 11
WORK_WIDTH = 12


def work_rows(nb_wheels: int) -> int:
    """Rows of the solver's scratch: up to three per wheel (limit, longitudinal, lateral)."""
    return 3 * nb_wheels


@njit(cache=True, nogil=True, inline="always")
def _apply(work, r, df, inv_mass, iw, v, w):  # pragma: no cover - compiled
    """Apply impulse ``df`` of row ``r`` to the body's velocities."""
    for k in range(3):
        v[k] += work[r, _W_LIN + k] * df * inv_mass
    for k in range(3):
        acc = 0.0
        for j in range(3):
            acc += iw[k, j] * work[r, _W_ANG + j]
        w[k] += acc * df


@njit(cache=True, nogil=True, inline="always")
def _row_speed(work, r, v, w):  # pragma: no cover - compiled
    s = 0.0
    for k in range(3):
        s += work[r, _W_LIN + k] * v[k] + work[r, _W_ANG + k] * w[k]
    return s


@njit(**_JIT)
def chassis_step(actor, dt, start_lin, start_ang, end_lin, end_ang, t_active, t_linears, t_angulars,
                 t_damping, s_active, s_linear, s_angular, s_error, s_restitution, pos, quat, lin, ang,
                 work, iw):  # pragma: no cover - compiled
    """One scene step of one chassis actor; writes ``pos``/``quat`` (actor origin) and ``lin``/``ang``.

    ``start_*``: the actor's velocities before the vehicle update; ``end_*``: the vehicle's
    velocities after it (what ``PxVehicleWriteRigidBodyStateToPhysXActor`` hands over). Rows as in
    :class:`~simcore.rigid_body.constraints.VehicleConstraintState`. ``work`` (3 W, WORK_WIDTH) and
    ``iw`` (3, 3) are scratch.
    """
    mass = actor[A_MASS]
    inv_mass = 1.0 / mass
    n_pos = int(actor[A_POS_ITERS])
    n_vel = int(actor[A_VEL_ITERS])
    h = dt / n_pos
    # The centre-of-mass pose: the solver body is the centre of mass.
    cx, cy, cz = qrot(quat[0], quat[1], quat[2], quat[3], actor[A_CPOS], actor[A_CPOS + 1], actor[A_CPOS + 2])
    px, py, pz = pos[0] + cx, pos[1] + cy, pos[2] + cz
    qx, qy, qz, qw = qmul(quat[0], quat[1], quat[2], quat[3], actor[A_CQUAT], actor[A_CQUAT + 1],
                          actor[A_CQUAT + 2], actor[A_CQUAT + 3])
    v = np.empty(3)
    w = np.empty(3)
    acc_lin = np.zeros(3)
    acc_ang = np.zeros(3)
    if int(actor[A_MODE]) == 0:  # APPLY_VELOCITY
        for k in range(3):
            v[k] = end_lin[k]
            w[k] = end_ang[k]
    else:  # APPLY_ACCELERATION: spread over the position iterations
        for k in range(3):
            v[k] = start_lin[k]
            w[k] = start_ang[k]
            acc_lin[k] = (end_lin[k] - start_lin[k]) / dt
            acc_ang[k] = (end_ang[k] - start_ang[k]) / dt
    # 1. damping, clamps, gyroscopic term.
    lin_mul = max(0.0, 1.0 - actor[A_LIN_DAMP] * dt)
    ang_mul = max(0.0, 1.0 - actor[A_ANG_DAMP] * dt)
    for k in range(3):
        v[k] *= lin_mul
        w[k] *= ang_mul
    vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    if vv > actor[A_MAX_LIN] ** 2:
        s = math.sqrt(actor[A_MAX_LIN] ** 2 / vv)
        for k in range(3):
            v[k] *= s
    ww = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    if ww > actor[A_MAX_ANG] ** 2:
        s = math.sqrt(actor[A_MAX_ANG] ** 2 / ww)
        for k in range(3):
            w[k] *= s
    i0, i1, i2 = actor[A_MOI], actor[A_MOI + 1], actor[A_MOI + 2]
    if actor[A_GYRO] != 0.0:
        lx, ly, lz = qrot(-qx, -qy, -qz, qw, w[0], w[1], w[2])  # body-frame angular velocity
        mx, my, mz = i0 * lx, i1 * ly, i2 * lz
        # torque = -(w x I w): one explicit step, rescaled to keep |I w| (PhysX's form).
        nx = mx - (ly * mz - lz * my) * dt
        ny = my - (lz * mx - lx * mz) * dt
        nz = mz - (lx * my - ly * mx) * dt
        dn = math.sqrt(nx * nx + ny * ny + nz * nz)
        ratio = math.sqrt(mx * mx + my * my + mz * mz) / dn if dn > 0.0 else 0.0
        dx, dy, dz = qrot(qx, qy, qz, qw, nx * ratio / i0 - lx, ny * ratio / i1 - ly, nz * ratio / i2 - lz)
        w[0] += dx
        w[1] += dy
        w[2] += dz
    # World inverse inertia at the start pose: R diag(1 / I) R^T.
    for a in range(3):
        ex, ey, ez = qrot(qx, qy, qz, qw, 1.0 if a == 0 else 0.0, 1.0 if a == 1 else 0.0,
                          1.0 if a == 2 else 0.0)
        inv = 1.0 / (i0 if a == 0 else (i1 if a == 1 else i2))
        col = (ex, ey, ez)
        for r in range(3):
            for c in range(3):
                if a == 0:
                    iw[r, c] = 0.0
                iw[r, c] += col[r] * col[c] * inv
    # 2. the rows, in Vehicle2's order: suspension limits, longitudinal, lateral sticky tires.
    n_rows = 0
    nb_wheels = s_active.shape[0]
    for wh in range(nb_wheels):
        if s_active[wh]:
            for k in range(3):
                work[n_rows, _W_LIN + k] = s_linear[wh, k]
                work[n_rows, _W_ANG + k] = s_angular[wh, k]
            work[n_rows, _W_KIND] = _HARD
            work[n_rows, _W_PARAM] = s_error[wh]
            work[n_rows, _W_REST] = s_restitution[wh]
            n_rows += 1
    for d in range(2):
        for wh in range(nb_wheels):
            if t_active[wh, d]:
                for k in range(3):
                    work[n_rows, _W_LIN + k] = t_linears[wh, d, k]
                    work[n_rows, _W_ANG + k] = t_angulars[wh, d, k]
                work[n_rows, _W_KIND] = _SPRING
                work[n_rows, _W_PARAM] = t_damping[wh, d]
                work[n_rows, _W_REST] = 0.0
                n_rows += 1
    for r in range(n_rows):
        resp = 0.0
        for k in range(3):
            resp += work[r, _W_LIN + k] * work[r, _W_LIN + k] * inv_mass
            acc = 0.0
            for j in range(3):
                acc += iw[k, j] * work[r, _W_ANG + j]
            resp += work[r, _W_ANG + k] * acc
        work[r, _W_RESP] = resp
        work[r, _W_IMP] = 0.0
        if work[r, _W_KIND] == _SPRING:
            a = h * work[r, _W_PARAM]
            work[r, _W_VM] = -a / (1.0 + a) / resp if resp > 0.0 else 0.0
        elif work[r, _W_REST] > 0.0:
            # Restitution: bounce at the approach speed (PhysX's computeBounceVelocity, with
            # Vehicle2's velocityThreshold = -FLT_MAX) instead of correcting the error.
            approach = _row_speed(work, r, v, w)
            work[r, _W_VM] = -work[r, _W_REST] * approach if approach < 0.0 else 0.0
        else:
            work[r, _W_VM] = 0.0
    erp = 0.5 * 2.0 * math.sqrt(1.0 / n_pos)  # PhysX: 0.5 * biasCoefficient, 2 sqrt(1 / n)
    max_bias = 0.75 / dt  # eANGULAR_CONSTRAINT rows: 0.75 / simDt
    dlx, dly, dlz = 0.0, 0.0, 0.0  # accumulated linear motion
    dax, day, daz = 0.0, 0.0, 0.0  # accumulated angular motion
    for _ in range(n_pos):
        for k in range(3):
            v[k] += acc_lin[k] * h
            w[k] += acc_ang[k] * h
        for r in range(n_rows):
            speed = _row_speed(work, r, v, w)
            if work[r, _W_KIND] == _SPRING:
                new = work[r, _W_IMP] + work[r, _W_VM] * speed
            else:
                if work[r, _W_VM] != 0.0:  # bouncing: no bias
                    target = work[r, _W_VM]
                else:
                    moved = (work[r, _W_LIN] * dlx + work[r, _W_LIN + 1] * dly + work[r, _W_LIN + 2] * dlz
                             + work[r, _W_ANG] * dax + work[r, _W_ANG + 1] * day + work[r, _W_ANG + 2] * daz)
                    target = min(-erp / h * (work[r, _W_PARAM] + moved), max_bias)
                resp = work[r, _W_RESP]
                new = max(work[r, _W_IMP] + (target - speed) / resp, 0.0) if resp > 0.0 else 0.0
            df = new - work[r, _W_IMP]
            work[r, _W_IMP] = new
            _apply(work, r, df, inv_mass, iw, v, w)
        # integrate the sub-step (closed-form quaternion step, as integrateCoreStep)
        px += v[0] * h
        py += v[1] * h
        pz += v[2] * h
        dlx += v[0] * h
        dly += v[1] * h
        dlz += v[2] * h
        dax += w[0] * h
        day += w[1] * h
        daz += w[2] * h
        wn = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
        if wn != 0.0:
            half = 0.5 * h * wn
            s = math.sin(half) / wn
            c = math.cos(half)
            rx, ry, rz, rw = qmul(w[0] * s, w[1] * s, w[2] * s, 0.0, qx, qy, qz, qw)
            rx += qx * c
            ry += qy * c
            rz += qz * c
            rw += qw * c
            norm = math.sqrt(rx * rx + ry * ry + rz * rz + rw * rw)
            qx, qy, qz, qw = rx / norm, ry / norm, rz / norm, rw / norm
    # 3. velocity iterations: bias removed, springs off.
    for _ in range(n_vel):
        for r in range(n_rows):
            if work[r, _W_KIND] == _SPRING:
                continue
            resp = work[r, _W_RESP]
            if not resp > 0.0:
                continue
            target = work[r, _W_VM]  # the bounce target, or 0
            new = max(work[r, _W_IMP] + (target - _row_speed(work, r, v, w)) / resp, 0.0)
            df = new - work[r, _W_IMP]
            work[r, _W_IMP] = new
            _apply(work, r, df, inv_mass, iw, v, w)
    # The actor origin: centre-of-mass pose * inverse(cMassLocalPose).
    ax, ay, az, aw = qmul(qx, qy, qz, qw, -actor[A_CQUAT], -actor[A_CQUAT + 1], -actor[A_CQUAT + 2],
                          actor[A_CQUAT + 3])
    ox, oy, oz = qrot(ax, ay, az, aw, actor[A_CPOS], actor[A_CPOS + 1], actor[A_CPOS + 2])
    pos[0], pos[1], pos[2] = px - ox, py - oy, pz - oz
    quat[0], quat[1], quat[2], quat[3] = ax, ay, az, aw
    for k in range(3):
        lin[k] = v[k]
        ang[k] = w[k]


#: PhysX's sleep logic resets the wake counter to multiples of this (``DySleep.cpp``: 20 * 0.02 s),
#: whatever the scene's ``wakeCounterResetValue``.
WAKE_COUNTER_RESET_TIME = 0.4
#: Interactions PhysX counts for a vehicle's actor in its sleep check (attached constraints and
#: shape pairs, ``numCountedInteractions``): the vehicle's own constraint. Its cluster factor
#: 1 + 1 scales the sleep threshold and adds one ``dt`` to the reset counter: PhysX records
#: 0.41667 s, not 0.4 s, after a reset at 60 Hz.
VEHICLE_COUNTED_INTERACTIONS = 1


@njit(cache=True, nogil=True)
def update_wake_counter(actor, dt, wake_counter, quat, lin, ang, lin_sum, ang_sum):  # pragma: no cover
    """PhysX's sleep filter (``updateWakeCounter``, no stabilization): the counter runs down by
    ``dt``; once below half the reset time the velocities are summed, and while the summed motion's
    mass-normalised kinetic energy reaches the threshold (``sleep_threshold`` times the cluster
    factor ``c`` = 1 + counted interactions) the counter is set back to
    ``min(energy / threshold, 2) * 0.2 + dt (c - 1)`` s (0.4 s + dt for a zero threshold: never
    asleep). Returns the new counter; the actor sleeps at 0."""
    reset = WAKE_COUNTER_RESET_TIME
    cluster = 1.0 + VEHICLE_COUNTED_INTERACTIONS
    if wake_counter < 0.5 * reset or wake_counter < dt:
        qx, qy, qz, qw = qmul(quat[0], quat[1], quat[2], quat[3], actor[A_CQUAT], actor[A_CQUAT + 1],
                              actor[A_CQUAT + 2], actor[A_CQUAT + 3])
        bx, by, bz = qrot(-qx, -qy, -qz, qw, ang[0], ang[1], ang[2])
        for k in range(3):
            lin_sum[k] += lin[k]
        ang_sum[0] += bx
        ang_sum[1] += by
        ang_sum[2] += bz
        angular = (actor[A_MOI] * ang_sum[0] ** 2 + actor[A_MOI + 1] * ang_sum[1] ** 2
                   + actor[A_MOI + 2] * ang_sum[2] ** 2) / actor[A_MASS]
        energy = 0.5 * (angular + lin_sum[0] ** 2 + lin_sum[1] ** 2 + lin_sum[2] ** 2)
        threshold = cluster * actor[A_SLEEP]
        if energy >= threshold:
            for k in range(3):
                lin_sum[k] = 0.0
                ang_sum[k] = 0.0
            factor = 2.0 if threshold == 0.0 else min(energy / threshold, 2.0)
            return factor * 0.5 * reset + dt * (cluster - 1.0)
    return max(wake_counter - dt, 0.0)
