"""Vehicle-level acceptance tests of issue 3 on the reference car (PhysX's snippet sedan).

Stability note used below: with no drive or brake torque, a wheel's spin follows
``I dw/dt = -R F(slip)`` with ``slip = (w R - v) / (|v| + 4 m/s)`` (Vehicle2's passive slip
denominator), i.e. a stiffness of ``k R^2 / (4 I) ~ 617 /s`` for this car. Vehicle2's explicit
update is stable only for substeps shorter than ``2 / 617 s ~ 3.2 ms``; at 60 Hz with the snippet's
3 substeps the wheels of a car at rest limit-cycle (PhysX does the same — see the recording's
wheel speeds). Tests that start from rest therefore use 6 substeps, and tests at speed (where the
denominator is ``|v|``) use the default layout.
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore.commands.params import CommandNonLinearResponseParams
from simcore.drivetrain.direct_drive import DirectDriveThrottleCommandResponseParams
from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Axis, Frame, frame_to_frame_matrix
from simcore.maths import quat_transform_frame
from simcore.presets import default_vehicle
from simcore.road import HeightfieldRoad, PlaneRoad
from simcore.suspension.helpers import compute_sprung_masses
from simcore.suspension.params import SuspensionComplianceParams, SuspensionForceParams
from simcore.vehicle import Vehicle, VehicleParams

G = 9.81
DT = 1.0 / 60.0


@pytest.fixture(scope="module")
def params() -> VehicleParams:
    return default_vehicle(DEFAULT_FRAME)


def test_settles_to_static_sag_and_sticks(params: VehicleParams) -> None:
    """No input on a flat plane: jounce -> sprung mass * g / stiffness (±1%), speed -> 0, drift < 1 cm / 10 s.

    The data's sprung masses put the centre of mass 1 cm left of the body origin; recompute them for
    the body's real centre of mass, and apply the forces at the suspension attachments, so that each
    spring carries exactly its sprung mass.
    """
    susp = params.suspension
    sprung = compute_sprung_masses(susp.suspension_attachment_pos, params.rigid_body.mass, Axis.NEG_Z)
    force = params.suspension_force
    p = params.replace(suspension_compliance=SuspensionComplianceParams.zero(4),
                       suspension_force=SuspensionForceParams(force.stiffness, force.damping, sprung))
    v = Vehicle(p, nb_substeps=6)
    v.place_on_road()
    v.run(3.0, DT)
    assert v.states.tire_sticky.active_status.all(), "every tire should be in the sticky regime at rest"
    expected = p.suspension_force.sprung_mass * G / p.suspension_force.stiffness
    np.testing.assert_allclose(v.states.suspension.jounce, expected, rtol=0.01)
    # Sticky tires replace the tire forces, so the wheel-spin instability is gone: coarser steps do.
    v.sequence.set_substeps(1, 1)
    start = v.pos.copy()
    v.run(10.0, 2 * DT)
    drift = float(np.linalg.norm((v.pos - start)[:2]))
    assert drift < 0.01
    assert np.linalg.norm(v.states.rigid_body.linear_velocity) < 1e-3
    assert np.linalg.norm(v.states.rigid_body.angular_velocity) < 1e-3
    np.testing.assert_allclose(v.states.suspension.jounce, expected, rtol=0.01)


def test_reference_compliance_carries_the_weight(params: VehicleParams) -> None:
    """With the reference car's force application points (11 cm behind the attachments) the springs
    still carry the whole weight, the front ones more than their sprung mass."""
    v = Vehicle(params, nb_substeps=6)
    v.place_on_road()
    v.run(2.0, DT)
    spring = params.suspension_force.stiffness * v.states.suspension.jounce
    assert spring.sum() == pytest.approx(params.rigid_body.mass * G, rel=0.01)
    sprung = params.suspension_force.sprung_mass * G
    assert (spring[:2] > sprung[:2]).all() and (spring[2:] < sprung[2:]).all()


def _trajectory(frame: Frame, scale: float, steps: int = 60) -> np.ndarray:
    """A throttle + steer manoeuvre from 10 m/s, recorded in the default frame and metres."""
    p = default_vehicle(frame, scale)
    v = Vehicle(p, nb_substeps=4)
    v.place_on_road(clearance=-0.16 * scale, speed=10.0 * scale)
    v.commands.set(throttle=0.5, steer=0.3)
    rot = frame_to_frame_matrix(frame, DEFAULT_FRAME)
    rows = []
    for _ in range(steps):
        v.step(DT)
        rb = v.states.rigid_body
        rows.append(np.concatenate((
            rot @ rb.pos / scale, quat_transform_frame(rb.quat, rot), rot @ rb.linear_velocity / scale,
            rot @ rb.angular_velocity, v.states.wheel_rigid_body_1d.rotation_speed,
            v.states.suspension.jounce / scale, v.states.steer_command_response.response,
        )))
    return np.array(rows)


def test_same_trajectory_in_every_frame_and_scale() -> None:
    ref = _trajectory(DEFAULT_FRAME, 1.0)
    assert ref[-1, 0] > 9.0 and ref[-1, 1] > 1.5  # it went forward and turned left
    for frame, scale in ((Y_UP_Z_FORWARD, 1.0), (SAE_J670, 1.0), (DEFAULT_FRAME, 100.0)):
        other = _trajectory(frame, scale)
        err = np.abs(other - ref) / np.maximum(np.abs(ref), 1e-2)
        assert err.max() <= 1e-4, f"{frame} scale {scale}: max relative difference {err.max():.3g}"


def test_one_step_with_four_substeps_equals_four_steps(params: VehicleParams) -> None:
    """The commands, road query and wheel angle sit outside the substep group; on a flat road with a
    speed-independent command response they give the same inputs, so the dynamics must agree."""
    a = Vehicle(params, nb_substeps=4)
    b = Vehicle(params, nb_substeps=1)
    for v in (a, b):
        v.place_on_road(clearance=-0.16, speed=10.0)
        v.commands.set(throttle=0.3, steer=0.2)
    for _ in range(40):
        a.step(DT)
        for _ in range(4):
            b.step(DT / 4)
    for name in ("pos", "quat", "linear_velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(a.states.rigid_body, name), getattr(b.states.rigid_body, name),
                                   rtol=1e-9, atol=1e-9, err_msg=name)
    np.testing.assert_allclose(a.states.wheel_rigid_body_1d.rotation_speed,
                               b.states.wheel_rigid_body_1d.rotation_speed, rtol=1e-9)
    np.testing.assert_allclose(a.states.suspension.jounce, b.states.suspension.jounce, rtol=1e-9)
    np.testing.assert_allclose(a.states.tire_force.forces, b.states.tire_force.forces, rtol=1e-7, atol=1e-6)
    assert a.pos[0] > 5.0


def test_full_throttle_speed_rises_to_a_plateau(params: VehicleParams) -> None:
    """Full throttle with a torque that fades between 12 and 16 m/s: the speed climbs, then levels off
    just below 16 m/s (no aerodynamic drag in Vehicle2: the response table sets the top speed)."""
    fade = CommandNonLinearResponseParams.from_pairs([(1.0, [[0.0, 1.0], [12.0, 1.0], [16.0, 0.0]])])
    p = params.replace(direct_drive_throttle_response=DirectDriveThrottleCommandResponseParams(
        750.0, np.ones(4), fade))
    v = Vehicle(p)
    v.place_on_road(clearance=-0.16, speed=10.0)
    v.commands.throttle = 1.0
    speeds = [v.forward_speed]
    for _ in range(12):
        v.run(0.5, DT)
        speeds.append(v.forward_speed)
    assert all(b > a for a, b in zip(speeds[:5], speeds[1:6], strict=True))
    assert 15.0 < speeds[-1] < 16.0
    assert abs(speeds[-1] - speeds[-3]) < 0.005 * speeds[-1]


def test_braking_distance_from_20_mps(params: VehicleParams) -> None:
    v = Vehicle(params, road=PlaneRoad.ground(DEFAULT_FRAME, friction=1.0))
    v.place_on_road(clearance=-0.16, speed=20.0)
    v.run(0.25, DT)
    start, v0 = v.pos.copy(), v.forward_speed
    v.commands.brake = 1.0
    while v.forward_speed > 0.01 and v.time < 10.0:
        v.step(DT)
    distance = float(np.linalg.norm((v.pos - start)[:2]))
    assert distance == pytest.approx(v0**2 / (2.0 * 1.0 * G), rel=0.10)
    assert v.states.wheel_actuation.is_brake_applied.all()


@pytest.mark.parametrize("steer", [0.1, -0.1])
def test_step_steer_settles_to_steady_yaw_rate(params: VehicleParams, steer: float) -> None:
    v = Vehicle(params)
    v.place_on_road(clearance=-0.16, speed=15.0)
    v.run(0.25, DT)
    v.commands.steer = steer
    rates = []
    for _ in range(int(2.25 / DT)):
        v.step(DT)
        rates.append(v.yaw_rate)
    last = np.array(rates[-60:])
    assert np.sign(last.mean()) == np.sign(steer)
    assert (last.max() - last.min()) < 0.03 * abs(last.mean())
    # understeer: below the kinematic (no-slip) yaw rate v * tan(mean steer) / wheel base
    mean_angle = abs(v.states.steer_command_response.response[:2].mean())
    kinematic = v.forward_speed * np.tan(mean_angle) / params.ackermann[0].wheel_base
    assert 0.5 * kinematic < abs(last.mean()) < kinematic


def test_heightfield_bump_compresses_front_before_rear(params: VehicleParams) -> None:
    x = np.arange(-5.0, 30.0, 0.25)
    bump = np.where(np.abs(x - 8.0) < 0.5, 0.04 * (1.0 + np.cos(np.pi * (x - 8.0) / 0.5)), 0.0)
    heights = np.repeat(bump[:, None], 41, axis=1)
    road = HeightfieldRoad(heights, 0.25, 0.25, origin=np.array([-5.0, -5.0, 0.0]), frame=DEFAULT_FRAME)
    v = Vehicle(params, road=road)
    v.place_on_road(clearance=-0.16, speed=5.0)
    speed = v.forward_speed
    front, rear, times = [], [], []
    for _ in range(int(2.5 / DT)):
        v.step(DT)
        times.append(v.time)
        front.append(v.states.suspension.jounce[:2].mean())
        rear.append(v.states.suspension.jounce[2:].mean())
    t_front = times[int(np.argmax(front))]
    t_rear = times[int(np.argmax(rear))]
    assert max(front) > min(front[:10]) + 0.02  # the bump really compressed the springs
    assert t_front < t_rear
    attach = params.suspension.suspension_attachment_pos
    axle_gap = attach[0, 0] - attach[2, 0]
    assert t_rear - t_front == pytest.approx(axle_gap / speed, rel=0.25)
