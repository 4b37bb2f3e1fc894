"""Quaternion and vector helpers: compiled fast paths agree with the algebra, broadcasting works."""

from __future__ import annotations

import numpy as np
import pytest

from simcore import maths as M


def _np_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product written out independently (scalar-first textbook form, reordered)."""
    aw, av = a[..., 3], a[..., :3]
    bw, bv = b[..., 3], b[..., :3]
    w = aw * bw - np.einsum("...i,...i->...", av, bv)
    v = aw[..., None] * bv + bw[..., None] * av + np.cross(av, bv)
    return np.concatenate((v, w[..., None]), axis=-1)


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


def test_multiply_matches_reference_for_all_shapes(rng: np.random.Generator) -> None:
    a = M.quat_normalize(rng.normal(size=(6, 4)))
    b = M.quat_normalize(rng.normal(size=(6, 4)))
    np.testing.assert_allclose(M.quat_multiply(a, b), _np_mul(a, b), atol=1e-15)
    np.testing.assert_allclose(M.quat_multiply(a[2], b), _np_mul(a[2], b), atol=1e-15)
    np.testing.assert_allclose(M.quat_multiply(a, b[3]), _np_mul(a, b[3]), atol=1e-15)
    assert M.quat_multiply(a[0], b[0]).shape == (4,)
    # rank-3 input goes through the numpy path
    np.testing.assert_allclose(M.quat_multiply(a.reshape(2, 3, 4), b.reshape(2, 3, 4)),
                               _np_mul(a, b).reshape(2, 3, 4), atol=1e-15)
    with pytest.raises(ValueError, match="broadcast"):
        M.quat_multiply(a, b[:4])


def test_rotate_matches_matrix_and_inverse(rng: np.random.Generator) -> None:
    q = M.quat_normalize(rng.normal(size=(5, 4)))
    v = rng.normal(size=(5, 3))
    r = M.quat_to_matrix(q)
    np.testing.assert_allclose(M.quat_rotate(q, v), np.einsum("nij,nj->ni", r, v), atol=1e-14)
    np.testing.assert_allclose(M.quat_rotate_inv(q, M.quat_rotate(q, v)), v, atol=1e-14)
    np.testing.assert_allclose(M.quat_rotate(q[1], v), v @ r[1].T, atol=1e-14)
    # q v q* equals the product form
    qv = np.concatenate((v, np.zeros((5, 1))), axis=1)
    np.testing.assert_allclose(M.quat_multiply(M.quat_multiply(q, qv), M.quat_conjugate(q))[:, :3],
                               M.quat_rotate(q, v), atol=1e-14)


def test_axis_angle_round_trip_and_known_rotation() -> None:
    q = M.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 2)
    np.testing.assert_allclose(M.quat_rotate(q, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], atol=1e-15)
    angles = np.array([0.1, -0.4, 2.0])
    qs = M.quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), angles)
    assert qs.shape == (3, 4)
    axis, angle = M.quat_to_axis_angle(qs)
    np.testing.assert_allclose(np.where(axis[:, 0] > 0, angle, -angle), angles, atol=1e-12)
    np.testing.assert_allclose(M.quat_from_matrix(M.quat_to_matrix(qs[2])), qs[2], atol=1e-12)


def test_normalise_and_integrate() -> None:
    np.testing.assert_array_equal(M.quat_normalize(np.zeros(4)), [0, 0, 0, 1])
    np.testing.assert_allclose(np.linalg.norm(M.quat_normalize([[1.0, 2, 3, 4]]), axis=1), 1.0)
    # first-order integration of a constant spin converges to the exact rotation
    omega = np.array([0.0, 0.0, 2.0])
    q = M.quat_identity()
    n = 2000
    for _ in range(n):
        q = M.quat_integrate(q, omega, 1.0 / n)
    exact = M.quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), 2.0)
    np.testing.assert_allclose(q, exact, atol=2e-3)


def test_cross_and_pose_helpers(rng: np.random.Generator) -> None:
    a, b = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(M.cross(a, b), np.cross(a, b), atol=1e-15)
    np.testing.assert_allclose(M.cross(a[0], b), np.cross(a[0], b), atol=1e-15)
    pos, q = rng.normal(size=3), M.quat_normalize(rng.normal(size=4))
    p = rng.normal(size=(4, 3))
    np.testing.assert_allclose(M.pose_inverse_transform_point(pos, q, M.pose_transform_point(pos, q, p)), p,
                               atol=1e-14)
    ipos, iq = M.pose_inverse(pos, q)
    cpos, cq = M.pose_multiply(pos, q, ipos, iq)
    np.testing.assert_allclose(cpos, 0.0, atol=1e-14)
    np.testing.assert_allclose(np.abs(cq), [0, 0, 0, 1], atol=1e-14)


def test_dot_and_norm_broadcast(rng: np.random.Generator) -> None:
    a, b = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    np.testing.assert_allclose(M.dot(a, b), np.einsum("ij,ij->i", a, b), atol=1e-15)
    np.testing.assert_allclose(M.dot(a[1], b), b @ a[1], atol=1e-15)
    assert M.dot([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == 32.0
    np.testing.assert_allclose(M.norm(a), np.linalg.norm(a, axis=1), atol=1e-15)
    np.testing.assert_allclose(M.dot(M.project_on_plane(a, M.normalize(b)), b), 0.0, atol=1e-14)


def test_normalize_is_physx_normalize(rng: np.random.Generator) -> None:
    """``PxVec3::normalize``: any non-zero length is divided out (no epsilon); zero stays zero."""
    v = rng.normal(size=(6, 3))
    np.testing.assert_allclose(np.linalg.norm(M.normalize(v), axis=1), 1.0, atol=1e-15)
    tiny = np.array([[3e-13, 0.0, 4e-13], [0.0, 0.0, 0.0], [1e-100, 0.0, 0.0], [np.nan, 0.0, 0.0]])
    out = M.normalize(tiny)
    np.testing.assert_allclose(out[0], [0.6, 0.0, 0.8], atol=1e-15)  # tiny but not zero: a unit vector
    np.testing.assert_array_equal(out[1], 0.0)  # zero in, zero out (not NaN)
    np.testing.assert_array_equal(out[2], [1.0, 0.0, 0.0])
    assert np.isnan(out[3, 0])  # NaN is not hidden
    np.testing.assert_array_equal(M.normalize(np.zeros(3)), 0.0)
    assert M.normalize(v.reshape(2, 3, 3)).shape == (2, 3, 3)


def test_scalar_kernels_are_the_array_algebra(rng: np.random.Generator) -> None:
    """``qmul`` / ``qrot`` (what compiled kernels inline) give the public functions' bits."""
    q = M.quat_normalize(rng.normal(size=(2, 4)))
    v = rng.normal(size=3)
    assert M.qmul(*q[0], *q[1]) == tuple(M.quat_multiply(q[0], q[1]))
    assert M.qrot(*q[0], *v) == tuple(M.quat_rotate(q[0], v))
    assert M.qrot(*M.quat_conjugate(q[0]), *v) == tuple(M.quat_rotate_inv(q[0], v))


def test_frozen_array_names_bad_shapes() -> None:
    a = M.frozen_array([1.0, 2.0], (None,), "X.field")
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 3.0
    with pytest.raises(ValueError, match=r"X.field: expected an array of shape \(3,\), got shape \(2,\)"):
        M.frozen_array([1.0, 2.0], (3,), "X.field")
