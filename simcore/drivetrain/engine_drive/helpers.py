"""Dense linear solvers for the clutch system (``VhDrivetrainHelpers.cpp``).

The engine drivetrain integrates the engine and every connected wheel implicitly, which couples
them into one small dense system ``M w = b`` (at most 21 unknowns: 20 wheels + the engine).
Vehicle2 solves it either exactly, by LU decomposition with full pivoting
(``PxVehicleMatrixNNLUSolver``), or approximately with a few Gauss-Seidel sweeps
(``PxVehicleMatrixNGaussSeidelSolver``). Both are implemented here over float64 numpy arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pvdkit.jit import njit

#: Default convergence tolerance of :func:`gauss_seidel_solve` on the relative squared residual.
#: Vehicle2 passes 1e-10, i.e. a relative residual of 1e-5, about what float32 can resolve; in
#: float64 we stop at a relative residual of 1e-10 so that enough sweeps reach the LU answer.
GAUSS_SEIDEL_TOLERANCE = 1e-20


@njit(cache=True, nogil=True)
def float32_timer_add(timer: float, dt: float) -> float:
    """``timer + dt`` as Vehicle2 adds them: both ``PxReal`` (float32). The autobox latency and
    the gear switch time are crossed by a timer summed step after step; in float64 the 120 adds
    of 1/60 s that reach PhysX's 1.9999988 s reach 2.0000001 s, so a shift would come one step
    earlier than in PhysX. Rounding the sum to float32 (exact: one rounding of an exact float64
    sum of two float32 values) keeps the shift on PhysX's step."""
    return float(np.float32(np.float32(timer) + np.float32(dt)))


class LUDecomposition(NamedTuple):
    """``P A Q = L U`` of a square matrix, from :func:`lu_decompose_full_pivot`.

    - ``lu``: (n, n); strictly-lower part is L (unit diagonal implied), upper part U.
    - ``row_pivots``, ``col_pivots``: (n-1,) int; step k swapped row k with ``row_pivots[k]`` and
      column k with ``col_pivots[k]``.
    - ``determinant``: det(A); 0 means singular.
    """

    lu: np.ndarray
    row_pivots: np.ndarray
    col_pivots: np.ndarray
    determinant: float


# --- compiled kernels ---------------------------------------------------------------------------
# The systems are tiny (5 unknowns for a car, at most 21), so numpy's per-call overhead would
# dominate a vectorised elimination; these loops are compiled instead (as simcore.maths does).

_JIT = {"cache": True, "nogil": True}


@njit(**_JIT)
def _k_lu_decompose(lu, row_p, col_p):  # pragma: no cover - compiled
    return _k_lu_decompose_n(lu, row_p, col_p, lu.shape[0])


# The ``_n`` kernels work on the leading n x n block of larger buffers, so that a batched kernel
# can reuse one scratch buffer for every vehicle without slicing views.
@njit(**_JIT)
def _k_lu_decompose_n(lu, row_p, col_p, n):  # pragma: no cover - compiled
    det = 1.0
    for k in range(n - 1):
        # Largest remaining entry; scanning column by column keeps Vehicle2's tie-breaking.
        best, pr, pc = 0.0, k, k
        for c in range(k, n):
            for r in range(k, n):
                v = abs(lu[r, c])
                if v > best:
                    best, pr, pc = v, r, c
        row_p[k] = pr
        if pr != k:
            det = -det
            for c in range(n):
                tmp = lu[pr, c]
                lu[pr, c] = lu[k, c]
                lu[k, c] = tmp
        col_p[k] = pc
        if pc != k:
            det = -det
            for r in range(n):
                tmp = lu[r, pc]
                lu[r, pc] = lu[r, k]
                lu[r, k] = tmp
        pivot = lu[k, k]
        det *= pivot
        if pivot != 0.0:
            for r in range(k + 1, n):
                f = lu[r, k] / pivot
                lu[r, k] = f
                for c in range(k + 1, n):
                    lu[r, c] -= f * lu[k, c]
    return det * lu[n - 1, n - 1]


@njit(**_JIT)
def _k_lu_solve(lu, row_p, col_p, x):  # pragma: no cover - compiled
    _k_lu_solve_n(lu, row_p, col_p, x, lu.shape[0])


@njit(**_JIT)
def _k_lu_solve_n(lu, row_p, col_p, x, n):  # pragma: no cover - compiled
    for i in range(n - 1):
        p = row_p[i]
        if p != i:
            tmp = x[i]
            x[i] = x[p]
            x[p] = tmp
    for r in range(1, n):
        acc = x[r]
        for i in range(r):
            acc -= lu[r, i] * x[i]
        x[r] = acc
    for r in range(n - 1, -1, -1):
        acc = x[r]
        for i in range(r + 1, n):
            acc -= lu[r, i] * x[i]
        x[r] = acc / lu[r, r]
    for i in range(n - 2, -1, -1):
        q = col_p[i]
        if q != i:
            tmp = x[i]
            x[i] = x[q]
            x[q] = tmp


@njit(**_JIT)
def _k_gauss_seidel(a, b, x, max_iterations, tolerance):  # pragma: no cover - compiled
    return _k_gauss_seidel_n(a, b, x, max_iterations, tolerance, a.shape[0])


@njit(**_JIT)
def _k_gauss_seidel_n(a, b, x, max_iterations, tolerance, n):  # pragma: no cover - compiled
    b_len2 = 0.0
    for i in range(n):
        b_len2 += b[i] * b[i]
    it = 0
    error = np.inf
    while it < max_iterations and error > tolerance:
        for i in range(n):
            acc = b[i]
            for j in range(n):
                if j != i:
                    acc -= a[i, j] * x[j]
            x[i] = acc / a[i, i]
        r_len2 = 0.0
        for i in range(n):
            e = -b[i]
            for j in range(n):
                e += a[i, j] * x[j]
            r_len2 += e * e
        error = r_len2 / (b_len2 + 1e-10)
        it += 1
    return it, error


@njit(**_JIT)
def _k_normal_equations(m, c, b, a, ata, atb):  # pragma: no cover - compiled
    _k_normal_equations_n(m, c, b, a, ata, atb, c.shape[0], c.shape[1])


@njit(**_JIT)
def _k_normal_equations_n(m, c, b, a, ata, atb, n, k):  # pragma: no cover - compiled
    for i in range(n):
        for r in range(k):
            acc = 0.0
            for j in range(n):
                acc += m[i, j] * c[j, r]
            a[i, r] = acc
    for r in range(k):
        for s in range(k):
            acc = 0.0
            for i in range(n):
                acc += a[i, r] * a[i, s]
            ata[r, s] = acc
        acc = 0.0
        for i in range(n):
            acc += a[i, r] * b[i]
        atb[r] = acc


@njit(**_JIT)
def _k_weighted_sum(values, weights, ids, count):  # pragma: no cover - compiled
    acc = 0.0
    for i in range(count):
        j = ids[i]
        acc += values[j] * weights[j]
    return acc


def lu_decompose_full_pivot(a: np.ndarray) -> LUDecomposition:
    """LU-decompose square ``a`` choosing, at each step, the largest remaining entry as pivot.

    Full pivoting (rows and columns) keeps the elimination stable even when the clutch couples
    very different inertias (a 1 kg m^2 engine against a geared heavy wheel set). Ties pick the
    first maximum scanning column by column, as Vehicle2 does. ``a`` is not modified.
    """
    lu = np.array(a, dtype=np.float64, order="C")
    n = lu.shape[0]
    if lu.ndim != 2 or lu.shape[1] != n or n == 0:
        raise ValueError(f"lu_decompose_full_pivot: expected a non-empty square matrix, got shape {lu.shape}")
    row_p = np.zeros(max(n - 1, 0), dtype=np.int64)
    col_p = np.zeros(max(n - 1, 0), dtype=np.int64)
    det = _k_lu_decompose(lu, row_p, col_p)
    return LUDecomposition(lu, row_p, col_p, float(det))


def lu_solve(dec: LUDecomposition, b: np.ndarray) -> np.ndarray:
    """Solve ``A x = b`` from the decomposition of ``A``; a new (n,) array.

    Raises ``numpy.linalg.LinAlgError`` if ``A`` is singular (determinant 0) or ``b`` has the
    wrong length (Vehicle2 returns zeros in that case; callers here decide what to keep).
    """
    n = dec.lu.shape[0]
    x = np.array(b, dtype=np.float64)
    if x.shape != (n,):
        raise np.linalg.LinAlgError(f"lu_solve: right-hand side has shape {x.shape}, expected ({n},)")
    if dec.determinant == 0.0:
        raise np.linalg.LinAlgError("lu_solve: the matrix is singular")
    _k_lu_solve(dec.lu, dec.row_pivots, dec.col_pivots, x)
    return x


def gauss_seidel_solve(a: np.ndarray, b: np.ndarray, x0: np.ndarray, max_iterations: int,
                       tolerance: float = GAUSS_SEIDEL_TOLERANCE) -> tuple[np.ndarray, int, float]:
    """Approximate ``A x = b`` by Gauss-Seidel sweeps from the guess ``x0``.

    Sweeps until ``max_iterations`` is reached or the relative squared residual
    ``|A x - b|^2 / (|b|^2 + 1e-10)`` falls to ``tolerance`` or below (Vehicle2's stopping rule).
    Starting from the previous speeds makes a handful of sweeps enough in steady driving.

    Returns ``(x, iterations_done, relative_squared_residual)``; ``x0`` is not modified.
    """
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    x = np.array(x0, dtype=np.float64)
    it, error = _k_gauss_seidel(a, b, x, int(max_iterations), float(tolerance))
    return x, int(it), float(error)


def normal_equations(m: np.ndarray, c: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(A^T A, A^T b)`` with ``A = m @ c``: the least-squares system of ``m (c z) = b``.

    Summed in plain index order by compiled loops rather than BLAS, whose blocking and fused
    multiply-adds depend on the machine; the batched engine drive shares this kernel, so both
    paths get the same bits.
    """
    m = np.ascontiguousarray(m, dtype=np.float64)
    c = np.ascontiguousarray(c, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    k = c.shape[1]
    a = np.empty((m.shape[0], k))
    ata = np.empty((k, k))
    atb = np.empty(k)
    _k_normal_equations(m, c, b, a, ata, atb)
    return ata, atb


def weighted_sum(values: np.ndarray, weights: np.ndarray, ids: np.ndarray) -> float:
    """``sum(values[j] * weights[j] for j in ids)`` in index order (the average wheel speed at the
    clutch), independent of BLAS as :func:`normal_equations`."""
    ids = np.asarray(ids, dtype=np.int64)
    return float(_k_weighted_sum(np.asarray(values, dtype=np.float64), np.asarray(weights, dtype=np.float64),
                                 ids, ids.shape[0]))
