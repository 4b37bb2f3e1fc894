"""Clutch linear solvers: LU with full pivoting vs Gauss-Seidel vs numpy, on the real clutch system."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.axle import AxleDescription
from simcore.drivetrain.engine_drive.functions import (
    clutch_system,
    multi_wheel_differential_state_update,
    solve_clutch_system,
    tank_differential_state_update,
)
from simcore.drivetrain.engine_drive.helpers import gauss_seidel_solve, lu_decompose_full_pivot, lu_solve
from simcore.drivetrain.engine_drive.loader import read_engine_drivetrain_params
from simcore.drivetrain.engine_drive.params import ClutchAccuracyMode, ClutchParams

AGREEMENT = 1e-6

CAR_AXLES = AxleDescription([[0, 1], [2, 3]])
WHEEL_MOI = np.full(4, 1.17169)
WHEEL_DAMPING = np.full(4, 0.25)


def _car_system(gear: int, dt: float, wheel_speeds: np.ndarray, engine_speed: float,
                tire_torques: np.ndarray, brakes: np.ndarray | None = None):
    p = read_engine_drivetrain_params(nb_wheels=4)
    diff = multi_wheel_differential_state_update(CAR_AXLES, p.multi_wheel_differential)
    g = p.gearbox.ratio(gear) * p.gearbox.final_ratio
    return clutch_system(WHEEL_MOI, WHEEL_DAMPING, wheel_speeds, np.zeros(4) if brakes is None else brakes,
                         tire_torques, diff, p.engine.moi, engine_speed, 450.0, 0.15,
                         p.clutch_command_response.max_response, g, dt)


@pytest.mark.parametrize("seed", range(6))
def test_lu_full_pivot_matches_numpy_on_random_systems(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 2 + seed * 3
    a = rng.normal(size=(n, n))
    a[0, 0] = 0.0  # no pivoting would divide by zero here
    b = rng.normal(size=n)
    dec = lu_decompose_full_pivot(a)
    x = lu_solve(dec, b)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10, atol=1e-10)
    assert dec.determinant == pytest.approx(np.linalg.det(a), rel=1e-9)


def test_lu_picks_the_largest_pivot_first() -> None:
    a = np.array([[1.0, 2.0, 0.0], [0.5, 0.0, 9.0], [3.0, 1.0, 1.0]])
    dec = lu_decompose_full_pivot(a)
    assert (dec.row_pivots[0], dec.col_pivots[0]) == (1, 2)
    assert dec.lu[0, 0] == 9.0


def test_lu_singular_matrix_raises() -> None:
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    dec = lu_decompose_full_pivot(a)
    assert dec.determinant == 0.0
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        lu_solve(dec, np.ones(2))


@pytest.mark.parametrize("gear", [2, 3, 6])
def test_lu_and_gauss_seidel_agree_on_the_clutch_solve(gear: int) -> None:
    """Same system, two solvers: enough Gauss-Seidel sweeps reach the LU answer within 1e-6."""
    w = np.array([30.0, 31.0, 29.5, 30.2])
    system = _car_system(gear, 1.0 / 180.0, w, 250.0, np.array([-120.0, -110.0, -90.0, -95.0]))
    exact = solve_clutch_system(system, ClutchParams(ClutchAccuracyMode.BEST_POSSIBLE))
    np.testing.assert_allclose(system.matrix @ exact, system.rhs, rtol=0, atol=1e-10)
    estimate = solve_clutch_system(system, ClutchParams(ClutchAccuracyMode.ESTIMATE, 200))
    assert np.max(np.abs(estimate - exact)) <= AGREEMENT


def test_gauss_seidel_converges_monotonically() -> None:
    """Error to the exact solution never grows with more sweeps, and shrinks overall."""
    w = np.array([10.0, 12.0, 9.0, 11.0])
    system = _car_system(2, 1.0 / 60.0, w, 400.0, np.array([-300.0, -250.0, -50.0, -80.0]))
    exact = lu_solve(lu_decompose_full_pivot(system.matrix), system.rhs)
    errors = []
    for iterations in range(1, 31):
        x, done, _ = gauss_seidel_solve(system.matrix, system.rhs, system.initial, iterations, tolerance=0.0)
        assert done == iterations
        errors.append(float(np.max(np.abs(x - exact))))
    assert all(e1 <= e0 * (1 + 1e-12) for e0, e1 in zip(errors, errors[1:], strict=False))
    assert errors[-1] < 1e-3 * errors[0]


def test_gauss_seidel_stops_at_tolerance() -> None:
    system = _car_system(3, 1.0 / 180.0, np.full(4, 20.0), 200.0, np.zeros(4))
    x, done, err = gauss_seidel_solve(system.matrix, system.rhs, system.initial, 1000)
    assert done < 1000 and err <= 1e-20


def test_constrained_solve_keeps_tracks_rigid_and_is_least_squares() -> None:
    """Tank: wheels on one track end with speeds in the inverse ratio of their radii; the reduced
    unknowns satisfy the normal equations of the over-determined system."""
    from simcore.drivetrain.engine_drive.functions import constraint_reduction
    from simcore.drivetrain.engine_drive.params import TankDriveDifferentialParams

    n = 6
    axles = AxleDescription([[0, 1], [2, 3], [4, 5]])
    radii = np.array([0.4, 0.4, 0.5, 0.5, 0.4, 0.4])
    diff_params = TankDriveDifferentialParams(np.full(n, 1 / n), np.full(n, 1 / n),
                                              tracks=((0, 2, 4), (1, 3, 5)))
    diff, groups = tank_differential_state_update(axles, radii, diff_params, 1.0, 0.5)
    system = clutch_system(np.full(n, 1.5), np.full(n, 0.25), np.array([5, 6, 4, 7, 5.5, 6.5]),
                           np.zeros(n), np.array([-40, -20, -60, -10, -30, -25.0]), diff, 1.0, 300.0,
                           400.0, 0.15, 10.0, 16.0, 1.0 / 60.0)
    for mode in ClutchAccuracyMode:
        x = solve_clutch_system(system, ClutchParams(mode, 3), groups)
        wheels = np.empty(n)
        wheels[system.connected] = x[:n]
        for track in diff_params.tracks:
            contact = wheels[list(track)] * radii[list(track)]
            np.testing.assert_allclose(contact, contact[0], rtol=1e-12)
    c = constraint_reduction(system.connected, groups)
    a = system.matrix @ c
    z = np.linalg.lstsq(a, system.rhs, rcond=None)[0]
    np.testing.assert_allclose(x, c @ z, rtol=1e-9, atol=1e-9)
