"""Rigid body update (``PxVehicleRigidBodyUpdate``): sum the loads, integrate velocities and pose.

Integration scheme (as ``VhRigidBodyFunctions.cpp``): explicit Euler on the velocities with the
*current* orientation's world inverse inertia ``R diag(1/moi) R^T`` (no gyroscopic term), then
the position with the *new* linear velocity and the orientation with the first-order quaternion
update ``q += dt/2 [w, 0] q`` followed by normalisation (semi-implicit Euler).

Between the velocity and the pose integration the vehicle's velocity constraints (sticky tires,
suspension limits; see :mod:`simcore.rigid_body.constraints`) are applied — the job the PhysX
scene's solver does for a Vehicle2 vehicle backed by a PhysX actor.
"""

from __future__ import annotations

import numpy as np

from pvdkit.jit import njit
from simcore.maths import quat_to_matrix
from simcore.rigid_body.params import RigidBodyParams
from simcore.rigid_body.states import RigidBodyState


def world_inverse_inertia(quat: np.ndarray, inverse_moi: np.ndarray) -> np.ndarray:
    """3x3 inverse inertia tensor in the world frame, ``R diag(inverse_moi) R^T``."""
    r = quat_to_matrix(quat)
    return (r * inverse_moi) @ r.T


def sum_forces_and_torques(
    suspension_forces: np.ndarray,
    suspension_torques: np.ndarray,
    tire_forces: np.ndarray,
    tire_torques: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Total force (3,) and torque (3,) of all suspensions and tires.

    ``suspension_forces``/``torques`` (n, 3); ``tire_forces``/``torques`` (n, 2, 3) (longitudinal and
    lateral) or (n, 3). World frame; torques about the centre of mass.
    """
    force = suspension_forces.sum(axis=0) + tire_forces.reshape(-1, 3).sum(axis=0)
    torque = suspension_torques.sum(axis=0) + tire_torques.reshape(-1, 3).sum(axis=0)
    return force, torque


def integrate_velocities(
    params: RigidBodyParams, force: np.ndarray, torque: np.ndarray, dt: float, state: RigidBodyState
) -> None:
    """``v += F/m dt``; ``w += I_world^-1 tau dt`` (orientation at the start of the step). In place."""
    state.linear_velocity += force * (dt / params.mass)
    state.angular_velocity += world_inverse_inertia(state.quat, params.inverse_moi) @ (torque * dt)


def integrate_pose(dt: float, state: RigidBodyState) -> None:
    """``p += v dt``; ``q += dt/2 [w, 0] q``, normalised. In place."""
    _k_integrate_pose(dt, state.pos, state.quat, state.linear_velocity, state.angular_velocity)


@njit(cache=True, nogil=True)
def _k_integrate_pose(dt, pos, quat, lin, ang):  # pragma: no cover - compiled
    for k in range(3):
        pos[k] += lin[k] * dt
    wx, wy, wz = ang[0], ang[1], ang[2]
    qx, qy, qz, qw = quat[0], quat[1], quat[2], quat[3]
    h = 0.5 * dt
    # [w, 0] * q
    nx = qx + h * (qw * wx + wy * qz - wz * qy)
    ny = qy + h * (qw * wy + wz * qx - wx * qz)
    nz = qz + h * (qw * wz + wx * qy - wy * qx)
    nw = qw + h * (-wx * qx - wy * qy - wz * qz)
    norm = np.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
    quat[0] = nx / norm
    quat[1] = ny / norm
    quat[2] = nz / norm
    quat[3] = nw / norm


@njit(cache=True, nogil=True)
def _k_integrate_velocities(mass, inv_moi, susp_f, susp_t, tire_f, tire_t, extra_torque, gravity,
                            ext_f, ext_t, quat, lin, ang, dt, inv_inertia_out):  # pragma: no cover - compiled
    _k_integrate_velocities_into(mass, inv_moi, susp_f, susp_t, tire_f, tire_t, extra_torque, gravity,
                                 ext_f, ext_t, quat, lin, ang, dt, np.empty(3), np.empty(3), np.empty((3, 3)),
                                 inv_inertia_out)


@njit(cache=True, nogil=True, inline="always")
def _k_integrate_velocities_into(mass, inv_moi, susp_f, susp_t, tire_f, tire_t, extra_torque, gravity,
                                 ext_f, ext_t, quat, lin, ang, dt, force, torque, r,
                                 inv_inertia_out):  # pragma: no cover - compiled
    """Loads -> velocities of one body; ``force``, ``torque`` (3,) and ``r`` (3, 3) are scratch, so the
    batched kernel (:mod:`simcore.rigid_body.batch`) runs the same arithmetic without allocating
    (inlined: a call per vehicle would cost more than the arithmetic)."""
    for k in range(3):
        force[k] = 0.0
        torque[k] = 0.0
    for i in range(susp_f.shape[0]):
        for k in range(3):
            force[k] += susp_f[i, k] + tire_f[i, 0, k] + tire_f[i, 1, k]
            torque[k] += susp_t[i, k] + tire_t[i, 0, k] + tire_t[i, 1, k]
    for k in range(3):
        force[k] += gravity[k] * mass + ext_f[k]
        torque[k] += ext_t[k] + extra_torque[k]
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    r[0, 0] = 1 - 2 * (y * y + z * z)
    r[0, 1] = 2 * (x * y - w * z)
    r[0, 2] = 2 * (x * z + w * y)
    r[1, 0] = 2 * (x * y + w * z)
    r[1, 1] = 1 - 2 * (x * x + z * z)
    r[1, 2] = 2 * (y * z - w * x)
    r[2, 0] = 2 * (x * z - w * y)
    r[2, 1] = 2 * (y * z + w * x)
    r[2, 2] = 1 - 2 * (x * x + y * y)
    for a in range(3):
        for b in range(3):
            acc = 0.0
            for k in range(3):
                acc += r[a, k] * inv_moi[k] * r[b, k]
            inv_inertia_out[a, b] = acc
    for k in range(3):
        lin[k] += force[k] * (dt / mass)
    for a in range(3):
        acc = 0.0
        for b in range(3):
            acc += inv_inertia_out[a, b] * torque[b]
        ang[a] += acc * dt


def integrate_loads(
    params: RigidBodyParams,
    suspension_forces: np.ndarray,
    suspension_torques: np.ndarray,
    tire_forces: np.ndarray,
    tire_torques: np.ndarray,
    anti_roll_torque: np.ndarray | None,
    dt: float,
    gravity: np.ndarray,
    state: RigidBodyState,
) -> np.ndarray:
    """Sum all loads (:func:`total_load`) and integrate the velocities (:func:`integrate_velocities`)
    in one compiled pass; ``tire_forces``/``tire_torques`` are (n, 2, 3). Returns the world inverse
    inertia used (3, 3), which the constraint solver needs."""
    inv_inertia = np.empty((3, 3))
    extra = anti_roll_torque if anti_roll_torque is not None else _ZERO3
    _k_integrate_velocities(params.mass, params.inverse_moi, suspension_forces, suspension_torques,
                            tire_forces, tire_torques, extra, gravity, state.external_force,
                            state.external_torque, state.quat, state.linear_velocity, state.angular_velocity,
                            dt, inv_inertia)
    return inv_inertia


_ZERO3 = np.zeros(3)
_ZERO3.setflags(write=False)


def total_load(
    params: RigidBodyParams,
    suspension_forces: np.ndarray,
    suspension_torques: np.ndarray,
    tire_forces: np.ndarray,
    tire_torques: np.ndarray,
    anti_roll_torque: np.ndarray | None,
    gravity: np.ndarray,
    state: RigidBodyState,
) -> tuple[np.ndarray, np.ndarray]:
    """Force and torque on the body: suspensions + tires + gravity + external + anti-roll."""
    force, torque = sum_forces_and_torques(suspension_forces, suspension_torques, tire_forces, tire_torques)
    force = force + gravity * params.mass + state.external_force
    torque = torque + state.external_torque
    if anti_roll_torque is not None:
        torque = torque + anti_roll_torque
    return force, torque


def rigid_body_update(
    params: RigidBodyParams,
    suspension_forces: np.ndarray,
    suspension_torques: np.ndarray,
    tire_forces: np.ndarray,
    tire_torques: np.ndarray,
    anti_roll_torque: np.ndarray | None,
    dt: float,
    gravity: np.ndarray,
    state: RigidBodyState,
) -> RigidBodyState:
    """Vehicle2's rigid body update without constraints (``PxVehicleRigidBodyUpdate``): loads ->
    velocities -> pose; the external loads are reset afterwards. ``tire_forces``/``tire_torques`` are
    (n, 2, 3). Updates ``state`` in place and returns it."""
    integrate_loads(params, suspension_forces, suspension_torques, tire_forces, tire_torques,
                    anti_roll_torque, dt, gravity, state)
    integrate_pose(dt, state)
    state.external_force[:] = 0.0
    state.external_torque[:] = 0.0
    return state
