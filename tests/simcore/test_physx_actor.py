"""The PhysX actor layer: the chassis solve against PhysX's own recording, analytic cases,
substep-rule equivalence and the parked car coming to rest."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from simcore.fleet import Fleet
from simcore.physx_actor import PhysXActorParams, SubstepRule, physx_setup
from simcore.physx_actor.components import pack_actor_params
from simcore.physx_actor.solver import WORK_WIDTH, chassis_step, work_rows
from simcore.presets import load_preset
from simcore.replay import vehicles_from_recording
from simcore.vehicle import Vehicle, default_context

DEV_DRIVE = Path(__file__).resolve().parents[1] / "data" / "dev_drive.h5"


def _step(actor_params, params, start, end, rows=None, pos=None, quat=None, dt=1 / 60, nw=4):
    actor = pack_actor_params(params.replace(physx_actor=actor_params))
    pos = np.zeros(3) if pos is None else np.array(pos, float)
    quat = np.array([0, 0, 0, 1.0]) if quat is None else np.array(quat, float)
    r = rows or {}
    t_active = r.get("t_active", np.zeros((nw, 2), bool))
    args = (t_active, r.get("t_linears", np.zeros((nw, 2, 3))), r.get("t_angulars", np.zeros((nw, 2, 3))),
            r.get("t_damping", np.zeros((nw, 2))), r.get("s_active", np.zeros(nw, bool)),
            r.get("s_linear", np.zeros((nw, 3))), r.get("s_angular", np.zeros((nw, 3))),
            r.get("s_error", np.zeros(nw)), r.get("s_restitution", np.zeros(nw)))
    lin, ang = np.zeros(3), np.zeros(3)
    chassis_step(actor, dt, start[0], start[1], np.asarray(end[0], float), np.asarray(end[1], float), *args,
                 pos, quat, lin, ang, np.zeros((work_rows(nw), WORK_WIDTH)), np.zeros((3, 3)))
    return pos, quat, lin, ang


@pytest.fixture(scope="module")
def sedan():
    return load_preset("sedan")


def test_chassis_step_reproduces_physx_from_its_recorded_rows() -> None:
    """Given PhysX's recorded rows and the velocities Vehicle2 handed over, the scene step gives
    PhysX's recorded actor pose and velocities to float32 rounding, on all four vehicles, over
    480 steps that include the initial suspension-limit correction and the sticky-tire stops."""
    run = vehicles_from_recording(DEV_DRIVE)
    for rv in run.vehicles:
        params = rv.params.replace(physx_actor=PhysXActorParams(
            cmass_local_pos=rv.actor.cmass_local_pos, cmass_local_quat=rv.actor.cmass_local_quat,
            angular_damping=rv.actor.angular_damping, max_angular_velocity=rv.actor.max_angular_velocity,
            gyroscopic=rv.actor.gyroscopic, position_iterations=rv.actor.position_iterations,
            velocity_iterations=rv.actor.velocity_iterations))
        actor = pack_actor_params(params)
        rb, c = rv.states["rigid_body"], rv.states["constraints"]
        work, iw = np.zeros((work_rows(4), WORK_WIDTH)), np.zeros((3, 3))
        assert c["susp_active_status"][0].all() and c["tire_active_status"].any()
        for i in range(1, rv.nb_steps):
            pos, quat, _, _ = rv.actor_at(i - 1)
            lin, ang = np.zeros(3), np.zeros(3)
            chassis_step(actor, run.scene.dt, rb["previous_linear_velocity"][i],
                         rb["previous_angular_velocity"][i],
                         rb["linear_velocity"][i], rb["angular_velocity"][i], c["tire_active_status"][i],
                         c["tire_linears"][i], c["tire_angulars"][i], c["tire_damping"][i],
                         c["susp_active_status"][i], c["susp_linear"][i], c["susp_angular"][i],
                         c["susp_geometric_error"][i], c["restitution"][i], pos, quat, lin, ang, work, iw)
            want = rv.actor_at(i)
            np.testing.assert_allclose(pos, want[0], atol=5e-5, err_msg=f"{rv.name} step {i}")
            np.testing.assert_allclose(quat, want[1], atol=1e-6, err_msg=f"{rv.name} step {i}")
            np.testing.assert_allclose(lin, want[2], atol=1e-6, err_msg=f"{rv.name} step {i}")
            np.testing.assert_allclose(ang, want[3], atol=2e-6, err_msg=f"{rv.name} step {i}")


def test_free_body_moves_with_its_velocity(sedan) -> None:
    a = PhysXActorParams(angular_damping=0.0, gyroscopic=False)
    dt = 0.02
    start = (np.zeros(3), np.zeros(3))
    pos, quat, lin, ang = _step(a, sedan, start, ([1.0, 2.0, 3.0], [0.0, 0.0, 0.5]), dt=dt)
    np.testing.assert_allclose(lin, [1, 2, 3])
    np.testing.assert_allclose(pos, [dt, 2 * dt, 3 * dt], rtol=1e-12)
    np.testing.assert_allclose(quat, [0, 0, np.sin(0.25 * dt), np.cos(0.25 * dt)], atol=1e-12)


def test_acceleration_mode_spreads_the_change_over_the_position_iterations(sedan) -> None:
    """APPLY_ACCELERATION hands the actor (v_end - v_start) / dt, which TGS adds one sub-step at a
    time: the end velocity is the same, the pose moves by the sub-step velocities' mean."""
    from simcore.physx_actor import PhysXActorUpdateMode

    n, dt = 16, 1 / 60
    a = PhysXActorParams(angular_damping=0.0, gyroscopic=False, position_iterations=n,
                         update_mode=PhysXActorUpdateMode.APPLY_ACCELERATION)
    v0, v1 = np.array([1.0, 0.0, 0.0]), np.array([3.0, 0.0, 0.0])
    pos, _, lin, _ = _step(a, sedan, (v0, np.zeros(3)), (v1, np.zeros(3)), dt=dt)
    np.testing.assert_allclose(lin, v1, rtol=1e-12)
    h = dt / n
    expected = sum(v0[0] + (v1[0] - v0[0]) / dt * h * k for k in range(1, n + 1)) * h
    assert pos[0] == pytest.approx(expected, rel=1e-12)
    velocity_mode = PhysXActorParams(angular_damping=0.0, gyroscopic=False, position_iterations=n)
    pos_v, _, _, _ = _step(velocity_mode, sedan, (v0, np.zeros(3)), (v1, np.zeros(3)), dt=dt)
    assert pos_v[0] == pytest.approx(v1[0] * dt) and pos[0] < pos_v[0]


def test_speed_clamps(sedan) -> None:
    a = PhysXActorParams(angular_damping=0.0, gyroscopic=False, max_angular_velocity=5.0,
                         max_linear_velocity=10.0)
    _, _, lin, ang = _step(a, sedan, (np.zeros(3), np.zeros(3)), ([30.0, 40.0, 0.0], [0.0, 20.0, 0.0]))
    np.testing.assert_allclose(lin, [6.0, 8.0, 0.0], rtol=1e-12)
    np.testing.assert_allclose(ang, [0.0, 5.0, 0.0], rtol=1e-12)


def test_angular_damping_is_physx_explicit_factor(sedan) -> None:
    a = PhysXActorParams(angular_damping=0.05, gyroscopic=False)
    _, _, _, ang = _step(a, sedan, (np.zeros(3), np.zeros(3)), (np.zeros(3), [0.0, 2.0, 0.0]))
    np.testing.assert_allclose(ang, [0, 2 * (1 - 0.05 / 60), 0], rtol=1e-12)


def test_gyroscopic_term_keeps_angular_momentum_magnitude(sedan) -> None:
    a = PhysXActorParams(angular_damping=0.0, gyroscopic=True, position_iterations=1, velocity_iterations=0)
    w0 = np.array([3.0, 1.0, -2.0])
    _, _, _, w1 = _step(a, sedan, (np.zeros(3), np.zeros(3)), (np.zeros(3), w0))
    moi = sedan.rigid_body.moi
    assert np.linalg.norm(moi * w1) == pytest.approx(np.linalg.norm(moi * w0), rel=1e-12)
    assert not np.allclose(w1, w0)  # the body's axes are not all equal: the spin precesses


@pytest.mark.parametrize("iterations", [1, 4, 16])
def test_lone_sticky_row_decays_as_implicit_damping_per_iteration(sedan, iterations) -> None:
    """An acceleration spring of damping c through the centre of mass: TGS applies it once per
    position iteration, so the row's speed falls by (1 + c h)^-n, h = dt / n."""
    a = PhysXActorParams(angular_damping=0.0, gyroscopic=False, position_iterations=iterations)
    rows = {"t_active": np.array([[True, False]] + [[False, False]] * 3),
            "t_linears": np.zeros((4, 2, 3)), "t_damping": np.zeros((4, 2))}
    rows["t_linears"][0, 0] = [1.0, 0.0, 0.0]
    rows["t_damping"][0, 0] = 200.0
    dt = 1 / 60
    _, _, lin, _ = _step(a, sedan, (np.zeros(3), np.zeros(3)), ([2.0, 0.5, 0.0], np.zeros(3)), rows, dt=dt)
    assert lin[0] == pytest.approx(2.0 * (1 + 200.0 * dt / iterations) ** -iterations, rel=1e-12)
    assert lin[1] == pytest.approx(0.5)


def test_suspension_limit_moves_the_body_without_launching_it(sedan) -> None:
    """A penetration is corrected in position (most of it over the 16 iterations) while the
    velocity iteration takes back the velocity the correction added."""
    a = PhysXActorParams(angular_damping=0.0, gyroscopic=False)
    up = sedan.frame.vrt.astype(float)
    rows = {"s_active": np.array([True, False, False, False]), "s_linear": np.zeros((4, 3)),
            "s_error": np.array([-0.1, 0, 0, 0])}
    rows["s_linear"][0] = up
    pos, _, lin, _ = _step(a, sedan, (np.zeros(3), np.zeros(3)), (np.zeros(3), np.zeros(3)), rows)
    lift = float(pos @ up)
    assert 0.09 < lift <= 0.1
    assert abs(float(lin @ up)) < 1e-9


def test_substep_rule_in_a_fleet_equals_each_vehicle_alone(sedan) -> None:
    """Vehicles wanting different substep counts (one fast, one slow) step exactly as alone."""
    params, context = physx_setup(sedan, PhysXActorParams(sleep_threshold=0.0))
    speeds = [2.0, 12.0]
    fleet = Fleet([params, params], context=context)
    fleet.place_on_road(speed=np.array(speeds))
    alone = []
    for s in speeds:
        v = Vehicle(params, context=context)
        v.place_on_road(lat=0.0, speed=s)
        alone.append(v)
    fleet.commands.throttle[:] = 0.3
    for v in alone:
        v.commands.throttle = 0.3
    for _ in range(30):
        fleet.step(1 / 60)
        for v in alone:
            v.step(1 / 60)
    for i, v in enumerate(alone):
        np.testing.assert_allclose(fleet.states.wheel_rigid_body_1d.rotation_speed[i],
                                   v.states.wheel_rigid_body_1d.rotation_speed, rtol=1e-12)
        np.testing.assert_allclose(fleet.states.physx_actor.linear_velocity[i],
                                   v.states.physx_actor.linear_velocity, rtol=1e-12, atol=1e-12)
    assert SubstepRule().substeps(np.array(speeds)).tolist() == [3, 1]


def test_parked_car_comes_to_rest_with_the_actor_layer(sedan) -> None:
    """The acceptance case: idle on flat ground, no brake. Within 3 s the chassis speed is below
    1 mm/s and the wheels below 0.01 rad/s (the actor falls asleep, as PhysX's do)."""
    params, context = physx_setup(sedan)
    v = Vehicle(params, context=context)
    v.place_on_road()
    for _ in range(180):
        v.step(1 / 60)
    assert np.linalg.norm(v.states.physx_actor.linear_velocity) < 1e-3
    assert np.abs(v.states.wheel_rigid_body_1d.rotation_speed).max() < 0.01
    assert v.states.physx_actor.is_sleeping
    v.commands.throttle = 0.5  # a command wakes it
    for _ in range(30):
        v.step(1 / 60)
    assert not v.states.physx_actor.is_sleeping and v.forward_speed > 0.1


def test_pure_vehicle2_car_creeps(sedan) -> None:
    """Without the actor layer the same car never settles: no drive torque is applied, but the
    wheels keep a limit cycle (the stiff explicit spin update, docs/simcore.md) fast enough
    (|omega r| > the threshold speed) that the longitudinal sticky timer never starts."""
    v = Vehicle(sedan)
    v.place_on_road()
    for _ in range(360):
        v.step(1 / 60)
    assert np.linalg.norm(v.states.rigid_body.linear_velocity) > 0.01
    assert np.abs(v.states.wheel_rigid_body_1d.rotation_speed).max() > 1.0
    assert not v.states.wheel_actuation.is_drive_applied.any()
    assert (v.states.tire_sticky.low_speed_time[:, 0] == 0).all()
    assert not v.states.tire_sticky.active_status.any()


def _full_throttle_jumps(params, context, nb_substeps: int = 3) -> np.ndarray:
    """Step-to-step changes of the wheel speeds over 5 s of full throttle from rest (the
    ``accelerate`` scenario of ``pvdkit record``)."""
    v = Vehicle(params, context=context, nb_substeps=nb_substeps)
    v.place_on_road()
    v.commands.throttle = 1.0
    speeds = []
    for _ in range(300):
        v.step(1 / 60)
        speeds.append(v.states.wheel_rigid_body_1d.rotation_speed.copy())
    return np.abs(np.diff(np.array(speeds), axis=0))


def test_one_substep_at_speed_lets_driven_wheels_chatter(sedan) -> None:
    """Omni PhysX's rule drops to one substep above 5 m/s; with 750 N m on every wheel the
    explicit spin update then jumps by several rad/s per step (PhysX's direct-drive car does the
    same, docs/simcore.md), while the snippets' fixed 3 substeps stay smooth."""
    params, context = physx_setup(sedan)
    omni = _full_throttle_jumps(params, context)
    fixed = _full_throttle_jumps(params, replace(context, substep_rule=None), nb_substeps=3)
    assert np.median(omni) > 3.0
    assert np.median(fixed) < 0.5
    assert np.median(omni) > 10 * np.median(fixed)


def test_actor_params_are_validated() -> None:
    with pytest.raises(ValueError, match="position_iterations"):
        PhysXActorParams(position_iterations=0).validate()
    with pytest.raises(ValueError, match="angular_damping"):
        PhysXActorParams(angular_damping=-1).validate()
    with pytest.raises(ValueError, match="low_forward_speed_substeps"):
        replace(default_context(), substep_rule=SubstepRule(0, 1, 5.0)).validate()
