"""Rigid body integration (Vehicle2's scheme) and the velocity-constraint solver."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.frame import DEFAULT_FRAME, Y_UP_Z_FORWARD, Scale
from simcore.maths import quat_from_axis_angle, quat_integrate, quat_normalize, quat_to_matrix
from simcore.rigid_body import (
    RigidBodyParams,
    RigidBodyState,
    VehicleConstraintState,
    integrate_velocities,
    rigid_body_update,
    solve_vehicle_constraints,
    total_load,
    world_inverse_inertia,
)

PARAMS = RigidBodyParams(1500.0, np.array([600.0, 2000.0, 2200.0]))


def _loads(rng: np.random.Generator, n: int = 4) -> tuple[np.ndarray, ...]:
    return (rng.normal(size=(n, 3)) * 1e3, rng.normal(size=(n, 3)) * 1e2, rng.normal(size=(n, 2, 3)) * 1e3,
            rng.normal(size=(n, 2, 3)) * 1e2)


def test_compiled_update_matches_the_reference_scheme() -> None:
    rng = np.random.default_rng(1)
    sf, st, tf, tt = _loads(rng)
    anti_roll = rng.normal(size=3) * 50
    g = np.array([0.0, 0.0, -9.81])
    state = RigidBodyState(pos=[1.0, 2.0, 0.5], quat=quat_normalize(rng.normal(size=4)),
                           linear_velocity=[3.0, -1.0, 0.2], angular_velocity=[0.1, -0.3, 0.5],
                           external_force=[10.0, 0.0, 0.0], external_torque=[0.0, 5.0, 0.0])
    ref = state.copy()
    dt = 0.01
    # reference: Euler velocities with the start orientation, then pose with the new velocities
    force, torque = total_load(PARAMS, sf, st, tf, tt, anti_roll, g, ref)
    integrate_velocities(PARAMS, force, torque, dt, ref)
    ref.pos += ref.linear_velocity * dt
    ref.quat[:] = quat_integrate(ref.quat, ref.angular_velocity, dt)
    rigid_body_update(PARAMS, sf, st, tf, tt, anti_roll, dt, g, state)
    for name in ("pos", "quat", "linear_velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(state, name), getattr(ref, name), rtol=1e-13, atol=1e-13)
    # external loads are consumed by one update
    np.testing.assert_array_equal(state.external_force, 0.0)
    np.testing.assert_array_equal(state.external_torque, 0.0)
    # the inverse inertia is R diag(1/moi) R^T
    r = quat_to_matrix(ref.quat)
    np.testing.assert_allclose(world_inverse_inertia(ref.quat, PARAMS.inverse_moi),
                               r @ np.diag(1 / PARAMS.moi) @ r.T)


def test_free_fall_is_semi_implicit_euler() -> None:
    state = RigidBodyState(pos=[0.0, 0.0, 10.0])
    z = np.zeros((4, 3))
    zz = np.zeros((4, 2, 3))
    g = np.array([0.0, 0.0, -10.0])
    dt, n = 0.1, 10
    for _ in range(n):
        rigid_body_update(PARAMS, z, z, zz, zz, None, dt, g, state)
    # v_k = -g k dt, x_n = x0 - g dt^2 n (n + 1) / 2
    assert state.linear_velocity[2] == pytest.approx(-10.0 * n * dt)
    assert state.pos[2] == pytest.approx(10.0 - 10.0 * dt * dt * n * (n + 1) / 2)


def test_torque_free_spin_about_a_principal_axis_is_kept() -> None:
    state = RigidBodyState(angular_velocity=[0.0, 0.0, 2.0])
    z = np.zeros((4, 3))
    zz = np.zeros((4, 2, 3))
    for _ in range(100):
        rigid_body_update(PARAMS, z, z, zz, zz, None, 0.01, np.zeros(3), state)
    np.testing.assert_allclose(state.angular_velocity, [0.0, 0.0, 2.0])
    expected = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), 2.0)
    np.testing.assert_allclose(state.quat, expected, atol=1e-3)


def test_params_transform_and_validate() -> None:
    p = PARAMS.transform_and_scale(DEFAULT_FRAME, Y_UP_Z_FORWARD, Scale(1.0), Scale(10.0))
    # X fwd -> Z fwd, Y lat -> X lat, Z up -> Y up
    np.testing.assert_allclose(p.moi, np.array([2000.0, 2200.0, 600.0]) * 100)
    assert p.mass == PARAMS.mass
    with pytest.raises(ValueError, match=r"moi\[1\]"):
        RigidBodyParams(1.0, [1.0, 0.0, 1.0]).validate()


def _sticky_row(state: VehicleConstraintState, wheel: int, axis: int, lin: np.ndarray, arm: np.ndarray,
                damping: float) -> None:
    state.tire_active_status[wheel, axis] = True
    state.tire_linears[wheel, axis] = lin
    state.tire_angulars[wheel, axis] = np.cross(arm, lin)
    state.tire_damping[wheel, axis] = damping


def test_single_sticky_row_is_an_implicit_damper() -> None:
    c = VehicleConstraintState.default(4)
    _sticky_row(c, 0, 0, np.array([1.0, 0.0, 0.0]), np.zeros(3), 2.0)
    v, w = np.array([3.0, 1.0, 0.0]), np.zeros(3)
    solve_vehicle_constraints(PARAMS.mass, np.diag(1 / PARAMS.moi), c, 0.05, v, w)
    np.testing.assert_allclose(v, [3.0 / (1.0 + 2.0 * 0.05), 1.0, 0.0])


def test_coupled_rows_and_one_sided_limit() -> None:
    inv_i = np.diag(1 / PARAMS.moi)
    c = VehicleConstraintState.default(4)
    arms = np.array([[1.3, 0.8, -0.5], [1.3, -0.8, -0.5], [-1.5, 0.8, -0.5], [-1.5, -0.8, -0.5]])
    for i, arm in enumerate(arms):
        _sticky_row(c, i, 0, np.array([1.0, 0.0, 0.0]), arm, 1e9)  # effectively rigid
        _sticky_row(c, i, 1, np.array([0.0, 1.0, 0.0]), arm, 1e9)
    v, w = np.array([0.5, -0.2, 0.0]), np.array([0.0, 0.0, 0.3])
    solve_vehicle_constraints(PARAMS.mass, inv_i, c, 0.01, v, w)
    contact = v + np.cross(w, arms)
    np.testing.assert_allclose(contact[:, :2], 0.0, atol=1e-6)
    # a suspension limit pushes only: penetration 1 cm is removed over one step, separation is free
    c = VehicleConstraintState.default(4)
    c.susp_active_status[0] = True
    c.susp_linear[0] = [0.0, 0.0, 1.0]
    c.susp_angular[0] = np.cross(arms[0], [0.0, 0.0, 1.0])
    c.susp_geometric_error[0] = -0.01
    v, w = np.array([0.0, 0.0, -0.5]), np.zeros(3)
    solve_vehicle_constraints(PARAMS.mass, inv_i, c, 0.01, v, w)
    assert (v + np.cross(w, arms[0]))[2] == pytest.approx(1.0)
    v, w = np.array([0.0, 0.0, 3.0]), np.zeros(3)
    solve_vehicle_constraints(PARAMS.mass, inv_i, c, 0.01, v, w)
    np.testing.assert_allclose(v, [0.0, 0.0, 3.0])
    np.testing.assert_allclose(w, 0.0)
