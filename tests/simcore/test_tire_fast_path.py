"""The tire component's fused kernel equals the plain tire functions.

``TireComponent`` runs :mod:`simcore.tire._fast` by default and the plain functions of
:mod:`simcore.tire.functions` with ``use_fast_path = False``. The kernel mirrors every plain
operation in the same order, so on one machine the results are identical; the comparison allows
1e-12 (relative to each field's scale) only because the plain functions take ``tan``/``arctan``/
``arcsin``/``cos`` from numpy and the kernel from numba, and numpy may use its own SIMD versions of
those on some CPUs. Booleans must match exactly. Inputs are randomised over the regimes the tire
functions distinguish (on/off ground, sticky axes, locked and driven wheels, load-filter clamps,
all three friction-graph segments, zero grip, camber stiffness, road velocity).
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Frame
from simcore.maths import quat_from_axis_angle, quat_multiply
from simcore.presets import default_vehicle
from simcore.tire.components import TireComponent
from simcore.tire.params import TireForceParams
from simcore.vehicle import Vehicle, VehicleParams

STATES = (
    "tire_direction", "tire_speed", "tire_slip", "tire_camber", "tire_grip", "tire_sticky", "tire_force"
)


def _params(frame: Frame) -> VehicleParams:
    p = default_vehicle(frame)
    t = p.tire_force
    n = p.nb_wheels
    tire = TireForceParams(
        lat_stiff_x=np.where(np.arange(n) == 3, 0.0, t.lat_stiff_x),  # one load-independent tire
        lat_stiff_y=t.lat_stiff_y,
        long_stiff=t.long_stiff,
        camber_stiff=np.full(n, 5000.0),
        friction_vs_slip=np.tile([[0.0, 1.0], [0.1, 1.2], [1.0, 0.8]], (n, 1, 1)),
        rest_load=t.rest_load,
        load_filter=np.tile([[0.0, 0.2], [2.5, 2.2]], (n, 1, 1)),
    )
    return p.replace(tire_force=tire)


def _randomise(v: Vehicle, rng: np.random.Generator) -> None:
    p, s, f = v.params, v.states, v.frame
    n = v.nb_wheels
    v.place_on_road(clearance=-0.1)
    tilt = quat_from_axis_angle(f.lng, rng.uniform(-0.2, 0.2))
    s.rigid_body.quat[:] = quat_multiply(quat_from_axis_angle(f.vrt, rng.uniform(-np.pi, np.pi)), tilt)
    slow = rng.random() < 0.4  # near standstill: sticky timers run
    speed = rng.uniform(0.0, 0.15) if slow else rng.uniform(-5.0, 25.0)
    s.rigid_body.linear_velocity[:] = speed * f.lng + rng.normal(0.0, 0.05 if slow else 1.0, 3)
    s.rigid_body.angular_velocity[:] = rng.normal(0.0, 0.02 if slow else 0.5, 3)
    s.steer_command_response.response[:] = rng.uniform(-0.5, 0.5, n)
    normals = f.vrt + rng.normal(0.0, 0.1, (n, 3))
    s.road_geometry.plane[:, :3] = normals / np.linalg.norm(normals, axis=1)[:, None]
    s.road_geometry.plane[:, 3] = rng.normal(0.0, 0.1, n)
    s.road_geometry.friction[:] = rng.uniform(0.3, 1.2, n) * (rng.random(n) < 0.9)
    s.road_geometry.velocity[:] = rng.normal(0.0, 0.5, (n, 3)) * (rng.random() < 0.3)
    s.suspension.jounce[:] = rng.uniform(0.0, 1.0, n) * p.suspension.suspension_travel_dist
    s.suspension.separation[:] = np.where(rng.random(n) < 0.8, rng.uniform(-0.01, 0.0, n), 0.01)
    s.suspension_compliance.toe[:] = rng.normal(0.0, 0.01, n)
    s.suspension_compliance.camber[:] = rng.normal(0.0, 0.05, n)
    s.suspension_compliance.tire_force_app_point[:] = rng.normal(0.0, 0.1, (n, 3))
    s.suspension_force.normal_force[:] = rng.uniform(-0.2, 3.0, n) * p.tire_force.rest_load
    omega = speed / p.wheel.radius * rng.uniform(0.0, 2.5, n)
    omega[rng.random(n) < 0.2] = 0.0  # locked wheels
    s.wheel_rigid_body_1d.rotation_speed[:] = omega
    s.wheel_actuation.is_brake_applied[:] = rng.random(n) < 0.3
    s.wheel_actuation.is_drive_applied[:] = rng.random(n) < (0.1 if slow else 0.4)
    s.tire_sticky.low_speed_time[:] = rng.uniform(0.0, 1.5, (n, 2))


def _run_both(params: VehicleParams, seed: int, dt: float) -> tuple[dict, dict]:
    results = []
    for fast in (False, True):
        v = Vehicle(params)
        _randomise(v, np.random.default_rng(seed))
        comp = TireComponent(v)
        comp.use_fast_path = fast
        assert comp.update(dt, v.context)
        results.append({name: {k: a.copy() for k, a in getattr(v.states, name).as_dict().items()}
                        for name in STATES})
    return results[0], results[1]


def _assert_same(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    if expected.dtype == bool:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12 * scale, err_msg=what)


@pytest.mark.parametrize("frame", [DEFAULT_FRAME, Y_UP_Z_FORWARD, SAE_J670], ids=["xyz", "yup", "sae"])
def test_fused_tire_update_equals_plain_functions(frame) -> None:
    params = _params(frame)
    for seed in range(40):
        plain, fused = _run_both(params, seed, dt=1.0 / 180.0)
        for name in STATES:
            for field, expected in plain[name].items():
                _assert_same(fused[name][field], expected, f"seed {seed}: {name}.{field}")


def test_random_inputs_reach_every_regime() -> None:
    """The randomised situations above cover what the tire functions treat differently."""
    params = _params(DEFAULT_FRAME)
    seen = dict.fromkeys(("off_ground", "lng_sticky", "lat_sticky", "no_grip", "filter_low", "filter_high",
                          "graph_rise", "graph_fall", "graph_flat", "saturated"), 0)
    rest = params.tire_force.rest_load
    for seed in range(40):
        v = Vehicle(params)
        _randomise(v, np.random.default_rng(seed))
        s = v.states
        on = s.suspension.separation <= 0.0
        x = s.suspension_force.normal_force / rest
        TireComponent(v).update(1.0 / 180.0, v.context)
        slip = np.abs(s.tire_slip.lng_slip[on & ~s.tire_sticky.active_status[:, 0]])
        seen["off_ground"] += int(np.sum(~on))
        seen["lng_sticky"] += int(np.sum(s.tire_sticky.active_status[:, 0]))
        seen["lat_sticky"] += int(np.sum(s.tire_sticky.active_status[:, 1]))
        seen["no_grip"] += int(np.sum(on & (s.tire_grip.load * s.tire_grip.friction == 0.0)))
        seen["filter_low"] += int(np.sum(on & (x <= 0.0)))
        seen["filter_high"] += int(np.sum(on & (x >= 2.5)))
        seen["graph_rise"] += int(np.sum((slip > 0.0) & (slip < 0.1)))
        seen["graph_fall"] += int(np.sum((slip >= 0.1) & (slip < 1.0)))
        seen["graph_flat"] += int(np.sum(slip >= 1.0))
        force = np.hypot(np.linalg.norm(s.tire_force.lng_force, axis=1),
                         np.linalg.norm(s.tire_force.lat_force, axis=1))
        seen["saturated"] += int(np.sum(np.isclose(force, s.tire_grip.load * s.tire_grip.friction, rtol=1e-6)
                                        & (force > 0.0)))
    assert all(count > 0 for count in seen.values()), seen


def test_sticky_timers_carry_over_between_updates() -> None:
    """The kernel reads the previous timers from the state it overwrites: repeated updates of a
    vehicle at rest accumulate time exactly like the plain functions."""
    params = _params(DEFAULT_FRAME)
    timers = []
    for fast in (False, True):
        v = Vehicle(params)
        v.place_on_road(clearance=-0.1)
        s = v.states
        s.road_geometry.plane[:, :3] = v.frame.vrt
        s.road_geometry.friction[:] = 1.0
        s.suspension.separation[:] = 0.0
        s.suspension.jounce[:] = 0.05
        s.suspension_force.normal_force[:] = params.tire_force.rest_load
        comp = TireComponent(v)
        comp.use_fast_path = fast
        for _ in range(200):
            comp.update(1.0 / 180.0, v.context)
        timers.append((s.tire_sticky.low_speed_time.copy(), s.tire_sticky.active_status.copy()))
    np.testing.assert_array_equal(timers[1][0], timers[0][0])
    np.testing.assert_array_equal(timers[1][1], timers[0][1])
    np.testing.assert_allclose(timers[0][0], 200.0 / 180.0, rtol=1e-12)
    assert timers[0][1].all()  # past both threshold times: every axis sticky
