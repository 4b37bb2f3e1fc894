"""Wheel: params, damped spin integration (closed form), rotation angle blending, local pose chain."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Frame, Scale
from simcore.maths import quat_from_axis_angle, quat_multiply, quat_normalize, quat_rotate
from simcore.suspension.params import SuspensionParams
from simcore.suspension.states import UNSPECIFIED_JOUNCE
from simcore.wheel.functions import (
    apply_brake_lock,
    brake_torque_opposing_spin,
    wheel_local_pose_update,
    wheel_rotation_angle_update,
    wheel_rotation_speed_damped_update,
)
from simcore.wheel.helpers import (
    compute_rotation,
    compute_wheel_local_pose,
    compute_wheel_pose,
    is_wheel_on_ground,
)
from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState, WheelLocalPoseState, WheelRigidBody1dState

IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


def wheels(n: int = 1, **overrides: float) -> WheelParams:
    base = dict(radius=0.35, half_width=0.15, mass=20.0, moi=1.2, damping_rate=0.25)
    base.update(overrides)
    return WheelParams.from_wheels([base] * n)


# --- params --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("radius", 0.0, "must be greater than zero"),
        ("half_width", -1.0, "must be greater than zero"),
        ("mass", 0.0, "must be greater than zero"),
        ("moi", 0.0, "must be greater than zero"),
        ("damping_rate", -0.1, "must be greater than or equal to zero"),
    ],
)
def test_wheel_params_validation_names_field_and_wheel(field: str, value: float, message: str) -> None:
    good = dict(radius=0.35, half_width=0.15, mass=20.0, moi=1.2, damping_rate=0.25)
    p = WheelParams.from_wheels([good, good, {**good, field: value}])
    with pytest.raises(ValueError, match=rf"WheelParams\.{field}\[wheel 2\] {message}, got {value}"):
        p.validate()


def test_wheel_params_are_immutable_and_shape_checked() -> None:
    p = wheels(2)
    with pytest.raises(ValueError):
        p.radius[0] = 1.0
    with pytest.raises(ValueError, match="same number of wheels"):
        WheelParams([0.3, 0.3], [0.1], [1.0, 1.0], [1.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=r"WheelParams.radius: expected shape \(n_wheels\)"):
        WheelParams([[0.3]], [0.1], [1.0], [1.0], [0.0])
    with pytest.raises(ValueError, match="number of wheels must be in"):
        WheelParams(np.ones(21), np.ones(21), np.ones(21), np.ones(21), np.ones(21))


@pytest.mark.parametrize("trg_frame", [DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670])
def test_wheel_params_transform_and_scale(trg_frame: Frame) -> None:
    p = wheels(2, radius=0.34, moi=1.17, damping_rate=0.25)
    cm = p.transform_and_scale(DEFAULT_FRAME, trg_frame, Scale(1.0), Scale(100.0))
    np.testing.assert_allclose(cm.radius, 34.0)
    np.testing.assert_allclose(cm.half_width, 15.0)
    np.testing.assert_allclose(cm.mass, 20.0)
    np.testing.assert_allclose(cm.moi, 1.17e4)
    np.testing.assert_allclose(cm.damping_rate, 0.25e4)
    back = cm.transform_and_scale(trg_frame, DEFAULT_FRAME, Scale(100.0), Scale(1.0))
    for f in ("radius", "half_width", "mass", "moi", "damping_rate"):
        np.testing.assert_allclose(getattr(back, f), getattr(p, f), rtol=1e-14, err_msg=f)


# --- damped spin integration --------------------------------------------------------------------


def test_spin_down_matches_closed_form_of_implicit_damping() -> None:
    moi, c, dt, w0, n = 1.2, 0.25, 1 / 60, 50.0, 600
    w = np.array([w0])
    for _ in range(n):
        w = wheel_rotation_speed_damped_update([moi], [c], w, [0.0], dt)
    expected = w0 / (1.0 + c * dt / moi) ** n
    np.testing.assert_allclose(w, [expected], rtol=1e-12)
    explicit = w0 * (1.0 - c * dt / moi) ** n
    assert abs(expected - explicit) > 1e-3  # the test tells implicit from explicit Euler
    np.testing.assert_allclose(w, [w0 * np.exp(-c * n * dt / moi)], rtol=0.01)  # and both approach the ODE


def test_huge_damping_never_flips_spin() -> None:
    w = wheel_rotation_speed_damped_update([1.0], [1e6], np.array([10.0]), [0.0], 0.1)
    assert 0.0 < w[0] < 1e-3


def test_damped_update_with_torque_reaches_steady_state() -> None:
    # steady state w = T / c
    w = np.zeros(1)
    for _ in range(2000):
        w = wheel_rotation_speed_damped_update([1.0], [2.0], w, [10.0], 0.05)
    np.testing.assert_allclose(w, [5.0], rtol=1e-9)


def test_brake_opposes_spin_and_locks() -> None:
    np.testing.assert_array_equal(
        brake_torque_opposing_spin([100.0, 100.0, 100.0], [5.0, -5.0, 0.0]), [-100, 100, 0]
    )
    prev = np.array([1.0, 1.0, 1.0, -2.0])
    new = np.array([-0.5, 0.5, -0.5, 0.0])
    braked = np.array([True, True, False, True])
    np.testing.assert_array_equal(apply_brake_lock(prev, new, braked), [0.0, 0.5, -0.5, 0.0])


# --- rotation angle -----------------------------------------------------------------------------


def test_rotation_angle_blends_towards_rolling_at_low_speed() -> None:
    p = wheels(5)
    act = WheelActuationState.default(5)
    act.is_brake_applied[2] = True
    act.is_drive_applied[3] = True
    state = WheelRigidBody1dState.default(5)
    state.rotation_speed[:] = 10.0
    jounce = np.array([0.1, 0.1, 0.1, 0.1, 0.0])  # wheel 4 in the air
    v = np.full(5, 2.0)
    out = wheel_rotation_angle_update(p, act, jounce, v, 5.0, 0.01, state)
    a = 2.0 / 5.0
    blended = (2.0 / 0.35) * (1 - a) + 10.0 * a
    np.testing.assert_allclose(out.corrected_rotation_speed, [blended, blended, 10.0, 10.0, 10.0])
    np.testing.assert_allclose(out.rotation_angle, out.corrected_rotation_speed * 0.01)
    np.testing.assert_array_equal(out.rotation_speed, 10.0)
    fast = wheel_rotation_angle_update(p, act, jounce, np.full(5, -6.0), 5.0, 0.01, state)
    np.testing.assert_array_equal(fast.corrected_rotation_speed, 10.0)


def test_rotation_angle_wraps_by_truncation() -> None:
    p = wheels(2)
    state = WheelRigidBody1dState(np.array([100.0, -100.0]), np.zeros(2), np.array([6.0, -6.0]))
    out = wheel_rotation_angle_update(
        p, WheelActuationState.default(2), np.zeros(2), np.zeros(2), 5.0, 0.01, state
    )
    raw = np.array([7.0, -7.0])
    np.testing.assert_allclose(out.rotation_angle, raw - np.trunc(raw / (2 * np.pi)) * 2 * np.pi)
    assert out.rotation_angle[0] > 0 > out.rotation_angle[1]
    zero_threshold = wheel_rotation_angle_update(
        p, WheelActuationState.default(2), np.ones(2), np.zeros(2), 0.0, 0.01, state
    )
    np.testing.assert_array_equal(zero_threshold.corrected_rotation_speed, [100.0, -100.0])


# --- pose chain ----------------------------------------------------------------------------------


def test_compute_rotation_axes_follow_the_frame() -> None:
    for frame in (DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670):
        yaw = compute_rotation(frame, 0.0, 0.0, np.pi / 2)
        np.testing.assert_allclose(quat_rotate(yaw, frame.lng), frame.lat, atol=1e-15)
        roll = compute_rotation(frame, np.pi / 2, 0.0, 0.0)
        np.testing.assert_allclose(quat_rotate(roll, frame.lat), frame.vrt, atol=1e-15)
        pitch = compute_rotation(frame, 0.0, np.pi / 2, 0.0)
        np.testing.assert_allclose(quat_rotate(pitch, frame.vrt), frame.lng, atol=1e-15)
        both = compute_rotation(frame, 0.3, 0.0, 0.5)  # yaw applied after roll
        ref = quat_rotate(
            quat_from_axis_angle(frame.vrt, 0.5), quat_rotate(quat_from_axis_angle(frame.lng, 0.3), frame.lat)
        )
        np.testing.assert_allclose(quat_rotate(both, frame.lat), ref, atol=1e-15)


def _suspension(frame: Frame) -> SuspensionParams:
    m = frame.matrix
    return SuspensionParams.from_wheels(
        [
            dict(
                suspension_attachment_pos=m @ [1.3, 0.8, -0.1],
                suspension_travel_dir=-frame.vrt,
                suspension_travel_dist=0.3,
                wheel_attachment_pos=m @ [0.0, 0.05, 0.0],
            ),
        ]
    )


@pytest.mark.parametrize("frame", [DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670], ids=["default", "y_up", "sae"])
def test_local_pose_chain(frame: Frame) -> None:
    m = frame.matrix
    susp = _suspension(frame)
    # jounce 0.1: 0.2 below the attachment; steer 0.4 turns the wheel offset (0, 0.05, 0) about vrt
    pos, quat = compute_wheel_local_pose(
        frame, susp, np.array([0.1]), np.zeros(1), np.zeros(1), np.array([0.4]), np.array([0.7])
    )
    offset = np.array([-0.05 * np.sin(0.4), 0.05 * np.cos(0.4), 0.0])
    np.testing.assert_allclose(pos, [m @ ([1.3, 0.8, -0.3] + offset)], atol=1e-15)
    # the wheel axle (lat) turns with steer and is unaffected by the spin angle
    np.testing.assert_allclose(
        quat_rotate(quat, frame.lat)[0], m @ [-np.sin(0.4), np.cos(0.4), 0.0], atol=1e-15
    )
    # spin about the axle: forward turns towards "down" for positive rotation about lat (right-hand rule)
    spin_only = compute_wheel_local_pose(
        frame, susp, np.array([0.1]), np.zeros(1), np.zeros(1), np.zeros(1), np.array([np.pi / 2])
    )[1]
    np.testing.assert_allclose(quat_rotate(spin_only, frame.lng)[0], -frame.vrt, atol=1e-15)
    # camber rolls the axle about lng; toe adds to steer
    cam = compute_wheel_local_pose(
        frame, susp, np.array([0.1]), np.array([0.05]), np.array([0.02]), np.array([0.1]), np.zeros(1)
    )[1]
    ref = compute_rotation(frame, 0.05, 0.0, 0.12)
    np.testing.assert_allclose(np.abs(cam @ ref), 1.0, atol=1e-14)


def test_unspecified_jounce_means_max_compression_and_world_pose() -> None:
    susp = _suspension(DEFAULT_FRAME)
    pos, _ = compute_wheel_local_pose(DEFAULT_FRAME, susp, np.array([UNSPECIFIED_JOUNCE]), 0, 0, np.zeros(1))
    np.testing.assert_allclose(pos, [[1.3, 0.85, -0.1]])
    body_q = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi)
    wpos, wq = compute_wheel_pose(
        DEFAULT_FRAME, susp, np.array([0.3]), 0, 0, np.zeros(1), np.array([5.0, 0, 1]), body_q
    )
    np.testing.assert_allclose(wpos, [[5.0 - 1.3, -0.85, 0.9]], atol=1e-14)
    np.testing.assert_allclose(np.abs(wq @ body_q), [1.0])


def test_local_pose_update_and_states() -> None:
    susp = _suspension(DEFAULT_FRAME)
    st = wheel_local_pose_update(
        DEFAULT_FRAME, susp, np.array([0.3]), np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1)
    )
    assert isinstance(st, WheelLocalPoseState)
    np.testing.assert_allclose(st.pos, [[1.3, 0.85, -0.1]])
    np.testing.assert_allclose(st.quat, [IDENTITY])
    d = WheelLocalPoseState.default(3)
    np.testing.assert_array_equal(d.quat, np.tile(IDENTITY, (3, 1)))
    d.assign(WheelLocalPoseState(np.ones((3, 3)), np.tile([0, 0, 1.0, 0], (3, 1))))
    d.set_to_default()
    np.testing.assert_array_equal(d.quat, np.tile(IDENTITY, (3, 1)))
    assert set(WheelRigidBody1dState.default(2).as_dict()) == {
        "rotation_speed",
        "corrected_rotation_speed",
        "rotation_angle",
    }
    assert WheelActuationState.zeros(4).is_brake_applied.dtype == bool


def test_is_wheel_on_ground() -> None:
    np.testing.assert_array_equal(
        is_wheel_on_ground(np.array([0.0, -0.1, 1e-38, 0.5])), [True, True, False, False]
    )


@pytest.mark.parametrize("frame", [DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670], ids=["default", "y_up", "sae"])
def test_pose_chain_matches_transform_composition(frame: Frame) -> None:
    """The compiled pose chain equals composing Vehicle2's four transforms with generic quaternion maths."""
    rng = np.random.default_rng(7)
    n = 5
    susp = SuspensionParams(
        suspension_attachment_pos=rng.normal(size=(n, 3)),
        suspension_attachment_quat=quat_normalize(rng.normal(size=(n, 4))),
        suspension_travel_dir=-np.tile(frame.vrt, (n, 1)),
        suspension_travel_dist=rng.uniform(0.1, 0.4, n),
        wheel_attachment_pos=rng.normal(scale=0.1, size=(n, 3)),
        wheel_attachment_quat=quat_normalize(rng.normal(size=(n, 4))),
    )
    jounce = rng.uniform(0.0, 0.1, n)
    jounce[0] = UNSPECIFIED_JOUNCE
    camber, toe, steer, angle = rng.normal(scale=0.3, size=(4, n))
    body_pos, body_q = rng.normal(size=3), quat_normalize(rng.normal(size=4))

    def rot(axis: np.ndarray, a: np.ndarray) -> np.ndarray:
        return quat_from_axis_angle(np.tile(axis, (n, 1)), a)

    dist = np.where(jounce == UNSPECIFIED_JOUNCE, 0.0, susp.suspension_travel_dist - jounce)
    q1 = quat_multiply(
        susp.suspension_attachment_quat, quat_multiply(rot(frame.vrt, steer + toe), rot(frame.lng, camber))
    )
    p1 = susp.suspension_attachment_pos + susp.suspension_travel_dir * dist[:, None]
    q2 = quat_multiply(susp.wheel_attachment_quat, rot(frame.lat, angle))
    ref_pos = p1 + quat_rotate(q1, susp.wheel_attachment_pos)
    ref_quat = quat_multiply(q1, q2)
    pos, quat = compute_wheel_local_pose(frame, susp, jounce, camber, toe, steer, angle)
    np.testing.assert_allclose(pos, ref_pos, atol=1e-14)
    np.testing.assert_allclose(quat, ref_quat, atol=1e-14)
    wpos, wquat = compute_wheel_pose(frame, susp, jounce, camber, toe, steer, body_pos, body_q, angle)
    np.testing.assert_allclose(wpos, body_pos + quat_rotate(body_q, ref_pos), atol=1e-14)
    np.testing.assert_allclose(wquat, quat_multiply(body_q, ref_quat), atol=1e-14)
