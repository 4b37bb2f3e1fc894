"""In-plane motorcycle: static pose, braking pitch and load transfer, SAE pose arrays, lights, PVD."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.writer import OmniPvdWriter
from simcore.frame import SAE_J670, Scale
from simcore.motorcycle import (
    FRONT,
    PRESETS,
    REAR,
    Motorcycle,
    braking_pitch_estimate,
    motorcycle_preset,
    run_scenario,
    suspension_geometry,
)
from simcore.motorcycle import functions as mf
from simcore.motorcycle.pvd import record_motorcycle
from simcore.motorcycle.simulation import BRAKE_LEVELS, BRAKE_START


@pytest.fixture(scope="module")
def brake_runs() -> dict:
    return {name: run_scenario(name, "brake-test", dt=0.01) for name in PRESETS}


@pytest.mark.parametrize("name", list(PRESETS))
def test_design_pose_is_the_static_equilibrium(name: str) -> None:
    bike = Motorcycle(name)
    p = bike.params
    for _ in range(100):
        bike.step(0.01)
    s = bike.states
    np.testing.assert_allclose(s.wheels.normal_force, p.static_loads, rtol=1e-9)
    a, b = p.cg_to_front_axle, p.cg_to_rear_axle
    w = p.mass * p.gravity
    assert p.static_loads.tolist() == pytest.approx([w * b / p.wheelbase, w * a / p.wheelbase])
    assert abs(s.body.pitch) < 1e-12 and s.body.pos[2] == pytest.approx(-p.cg_height, abs=1e-12)
    np.testing.assert_allclose(s.pose.translation[1:], 0.0, atol=1e-12)  # components at design positions
    np.testing.assert_allclose(s.wheels.compression / p.suspension_travel, 0.3, rtol=1e-9)  # 30 % sag


def test_pose_arrays_are_sae_j670(brake_runs: dict) -> None:
    bike, tr = brake_runs["sports_bike"]
    p = bike.params
    t, rot = tr.translation, tr.rotation
    assert t.shape[1:] == (4, 3) and rot.shape[1:] == (4, 3)
    # Row 0: the centre of mass in the inertial frame, Z down: above the ground means negative Z.
    assert np.all(t[:, 0, 2] < 0.0) and t[0, 0, 2] == pytest.approx(-p.cg_height, abs=2e-3)
    assert np.all(np.diff(t[:, 0, 0]) >= -1e-12) and t[-1, 0, 0] > 40.0  # X forward grows
    np.testing.assert_allclose(t[:, :, 1], 0.0)  # in-plane: no Y motion
    np.testing.assert_allclose(rot[:, 0, [0, 2]], 0.0)  # no roll, no yaw
    np.testing.assert_allclose(t[:, 1], 0.0)  # the handlebar rides on the steering head
    # Wheels roll forwards: a negative rotation about +Y (right), angle x radius = distance rolled.
    rolled = t[-1, 0, 0] - 0.0
    assert rot[-1, 2, 1] < 0.0 and rot[-1, 3, 1] < 0.0
    assert -rot[-1, 2, 1] * p.wheel_radius[FRONT] == pytest.approx(rolled, rel=2e-3)
    # Braking compresses the fork: the front wheel moves up (-Z) and back (-X) along the rake.
    k = int(np.argmin(abs(tr.time - 2.0)))
    front = t[k, 2]
    assert front[2] < -0.01 and front[0] < 0.0
    assert front[0] / front[2] == pytest.approx(math.tan(p.rake), rel=1e-9)
    assert t[k, 3, 2] > 0.005 and t[k, 3, 0] == 0.0  # the unloaded rear extends (+Z)


@pytest.mark.parametrize("name", list(PRESETS))
def test_pitch_and_load_transfer_under_braking(brake_runs: dict, name: str) -> None:
    bike, tr = brake_runs[name]
    p = bike.params
    k = int(np.argmin(abs(tr.time - 2.0)))  # steady braking, suspension settled
    decel = -tr.acceleration_x[k]
    assert 4.0 < decel < 9.0
    assert tr.pitch[k] < 0.0  # nose down
    fx = tr.longitudinal_force[k]
    share = fx[FRONT] / fx.sum()
    estimate = braking_pitch_estimate(p, decel, share)
    assert tr.pitch[k] == pytest.approx(estimate, rel=0.04), (math.degrees(tr.pitch[k]),
                                                              math.degrees(estimate))
    # load transfer m a h / L (the pitched geometry — contact points moved back, centre of mass
    # lowered — and drag make a few per cent of difference)
    dn = tr.normal_force[k] - p.static_loads
    assert dn[FRONT] == pytest.approx(p.mass * decel * p.cg_height / p.wheelbase, rel=0.05)
    assert dn.sum() == pytest.approx(0.0, abs=0.01 * p.mass * p.gravity)
    # braking forces follow the torques while no wheel locks
    assert not tr.locked[k].any()
    levels = np.array(BRAKE_LEVELS)
    np.testing.assert_allclose(-fx, levels * p.max_brake_torque / p.wheel_radius
                               + p.rolling_resistance * tr.normal_force[k], rtol=1e-6)


def test_stops_without_reversing_and_lights(brake_runs: dict) -> None:
    for bike, tr in brake_runs.values():
        assert tr.speed.min() > -1e-3 and tr.speed[-1] < 0.05
        braking = (tr.front_brake > bike.params.brake_light_threshold) | (
            tr.rear_brake > bike.params.brake_light_threshold)
        assert braking.any() and (~braking).any()
        np.testing.assert_array_equal(tr.lights[:, 2], braking.astype(np.uint8))  # brake light
        assert np.all(tr.lights[:, 1] == 1) and np.all(tr.lights[:, 0] == 0)  # low beam on, high off
        stopped = (tr.time > BRAKE_START + 0.5) & (tr.speed < 0.1)
        stopped = np.r_[False, stopped[:-1]]  # the rider reacts at the start of the next step
        assert stopped.any() and np.all(tr.lights[stopped, 4] == 1)
        assert np.all(tr.lights[tr.time < 1.0, 4] == 0)
        assert tr.lights.dtype == np.uint8


def test_excess_rear_brake_locks_the_wheel() -> None:
    bike = Motorcycle("sports_bike")
    bike.place(20.0)
    bike.commands.front_brake = 0.5
    bike.commands.rear_brake = 1.0
    for _ in range(80):
        bike.step(0.01)
    w = bike.states.wheels
    p = bike.params
    assert w.locked[REAR] and not w.locked[FRONT]
    assert w.rotation_speed[REAR] == 0.0
    assert w.rotation_speed[FRONT] == pytest.approx(bike.forward_speed / p.wheel_radius[FRONT])
    assert w.longitudinal_force[REAR] == pytest.approx(-p.friction * w.normal_force[REAR], rel=1e-9)


def test_acceleration_squats_the_bike() -> None:
    bike, tr = run_scenario("scooter", "accelerate", dt=0.02, duration=2.0)
    assert tr.speed[-1] > 5.0 and tr.acceleration_x[-1] > 0.5
    assert tr.pitch[-1] > 0.0  # nose up under drive: load moves to the rear
    assert tr.normal_force[-1, REAR] > bike.params.static_loads[REAR]
    np.testing.assert_array_equal(tr.lights[:, 2], 0)


def test_fork_geometry_and_contact_closed_form() -> None:
    p = motorcycle_preset("Sports bike")
    g = suspension_geometry(p)
    np.testing.assert_allclose(g.axis[FRONT], [math.sin(p.rake), math.cos(p.rake)])
    np.testing.assert_allclose(g.design_wheel_centre[FRONT],
                               [p.cg_to_front_axle, p.cg_height - p.wheel_radius[0]])
    # With a braking force the fork carries S = N cos(rake) + |Fx| sin(rake): N follows from S.
    cmd = Motorcycle(p).commands
    cmd.front_brake = 0.5
    f = mf.contact_forces(p, g, -p.cg_height, 0.0, 10.0, 0.0, 0.0, cmd)
    n, fx = f.normal_force[FRONT], f.longitudinal_force[FRONT]
    assert f.suspension_force[FRONT] == pytest.approx(n * math.cos(p.rake) - fx * math.sin(p.rake), rel=1e-12)
    lifted = mf.contact_forces(p, g, -p.cg_height - 0.5, 0.0, 10.0, 0.0, 0.0, cmd)
    assert not lifted.in_contact.any() and lifted.force_z == 0.0


def constant_braking(bike: Motorcycle, speed: float, dt: float, steps: int) -> np.ndarray:
    """Pitch after each step of braking (front 0.4, rear 0.1) from ``speed``."""
    bike.place(speed)
    bike.commands.front_brake, bike.commands.rear_brake = 0.4, 0.1
    out = []
    for _ in range(steps):
        bike.step(dt)
        out.append((bike.states.body.pitch, bike.states.body.pos[0], bike.states.body.pos[2]))
    return np.array(out)


def test_integration_converges(monkeypatch: pytest.MonkeyPatch) -> None:
    coarse = constant_braking(Motorcycle("motor_bike"), 20.0, 0.02, 75)
    fine = constant_braking(Motorcycle("motor_bike"), 20.0, 0.005, 300)[3::4]
    monkeypatch.setattr(mf, "MAX_SUBSTEP", 0.0005)
    finest = constant_braking(Motorcycle("motor_bike"), 20.0, 0.02, 75)
    np.testing.assert_allclose(coarse, fine, rtol=1e-12, atol=1e-12)  # same 5 ms substeps either way
    # RK4 at 5 ms vs 0.5 ms: within 1e-5 rad of pitch, 1e-5 relative in distance (the brake starts as a step,
    # a kink that limits the order right after it)
    np.testing.assert_allclose(coarse, finest, rtol=1e-5, atol=1e-5)


def test_scaled_bike_is_the_same_bike() -> None:
    p = motorcycle_preset("scooter")
    cm = p.transform_and_scale(SAE_J670, SAE_J670, Scale(1.0), Scale(100.0))
    a = constant_braking(Motorcycle(p), 15.0, 0.02, 60)
    b = constant_braking(Motorcycle(cm), 1500.0, 0.02, 60)
    np.testing.assert_allclose(b[:, 0], a[:, 0], rtol=1e-6, atol=1e-12)  # angles do not scale
    np.testing.assert_allclose(b[:, 1:], 100.0 * a[:, 1:], rtol=1e-6)


def test_bad_params_and_commands() -> None:
    with pytest.raises(ValueError, match="unknown motorcycle type"):
        motorcycle_preset("tricycle")
    with pytest.raises(ValueError, match=r"wheel_radius\[1\] \(rear\)"):
        motorcycle_preset().replace(wheel_radius=np.array([0.3, 0.0])).validate()
    with pytest.raises(ValueError, match="rake"):
        Motorcycle(motorcycle_preset().replace(rake=1.2))
    bike = Motorcycle()
    bike.commands.front_brake = 1.5
    with pytest.raises(ValueError, match="front_brake must be in"):
        bike.step(0.01)


def test_pvd_recording_holds_the_block_inputs() -> None:
    stream = MemoryStream()
    trace, recorder = record_motorcycle(OmniPvdWriter(stream), "scooter", "brake-test", dt=0.02, duration=2.0)
    assert recorder.frames == 100
    rec = Recording.open(stream.getvalue())
    pose = rec.objects_of_class("MotorcyclePose")[0]
    translation = rec.series(pose, "translation").values.reshape(-1, 4, 3)
    np.testing.assert_array_equal(translation, trace.translation)
    lights = rec.series(pose, "lights").values
    assert lights.dtype == np.uint8 and lights.tolist() == trace.lights.tolist()
    body = rec.objects_of_class("MotorcycleBodyState")[0]
    assert rec.value_at(body, "pos", 99)[2] < 0.0
    wheels = rec.objects_of_class("MotorcycleWheelState")
    assert [o.name for o in wheels] == ["MotorcycleWheelState0", "MotorcycleWheelState1"]
    params = rec.objects_of_class("MotorcycleParams")[0].state_at(0)
    assert params["type"] == "scooter" and params["mass"] == 200.0
    assert rec.objects_of_class("Motorcycle")[0].state_at(0)["pose"] == pose.handle
