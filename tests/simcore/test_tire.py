"""Tire: force model (linear range, saturation, camber, load sensitivity), friction graph, load filter,
slips, directions, contact speeds, camber angle, sticky-tire transitions, params."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.context import TireAxisStickyParams, TireSlipParams, TireStickyParams
from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Scale
from simcore.suspension.params import SuspensionParams
from simcore.suspension.states import SuspensionComplianceState
from simcore.tire.functions import (
    compute_filtered_load,
    compute_friction_multiplier,
    compute_lateral_stiffness,
    compute_tire_force_michigan,
    tire_camber_angles_update,
    tire_dirs_update,
    tire_forces_update,
    tire_grip_update,
    tire_slip_speeds_update,
    tire_slips_accounting_for_sticky_states,
    tire_slips_update,
    tire_sticky_constraints,
    tire_sticky_state_update,
)
from simcore.tire.helpers import acceleration_intent_compute, tire_sticky_state_reset
from simcore.tire.params import TireForceParams
from simcore.tire.states import (
    LATERAL,
    LONGITUDINAL,
    TireCamberState,
    TireDirectionState,
    TireForce,
    TireGripState,
    TireSlipState,
    TireSpeedState,
    TireStickyState,
)
from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState

IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])
REST_LOAD = 5628.7
TIRE = dict(
    lat_stiff_x=0.01,
    lat_stiff_y=118700.0,
    long_stiff=24525.0,
    camber_stiff=0.0,
    friction_vs_slip=[[0.0, 1.0], [0.1, 1.0], [1.0, 1.0]],
    rest_load=REST_LOAD,
    load_filter=[[0.0, 0.2308], [3.0, 3.0]],
)


def tires(n: int = 1, **overrides) -> TireForceParams:
    return TireForceParams.from_wheels([{**TIRE, **overrides}] * n)


def wheels(n: int = 1) -> WheelParams:
    return WheelParams.from_wheels(
        [dict(radius=0.35, half_width=0.15, mass=20.0, moi=1.2, damping_rate=0.25)] * n
    )


def suspension(n: int = 1) -> SuspensionParams:
    return SuspensionParams.from_wheels(
        [
            dict(
                suspension_attachment_pos=(1.3, 0.8, 0.0),
                suspension_travel_dir=(0, 0, -1),
                suspension_travel_dist=0.3,
            )
        ]
        * n
    )


def force(tire: TireForceParams, lng=0.0, lat=0.0, camber=0.0, friction=1.0, load=REST_LOAD):
    n = tire.nb_wheels
    return compute_tire_force_michigan(
        tire,
        np.full(n, friction),
        np.atleast_1d(lng),
        np.atleast_1d(lat),
        np.atleast_1d(camber),
        np.full(n, 0.35),
        np.full(n, load),
    )


# --- force model ---------------------------------------------------------------------------------


def test_zero_slip_gives_zero_force() -> None:
    out = force(tires(), 0.0, 0.0, 0.0)
    for a in out:
        np.testing.assert_array_equal(a, 0.0)
    # below the 1e-5 threshold the slips count as zero
    for a in force(tires(), 9e-6, -9e-6, 9e-6):
        np.testing.assert_array_equal(a, 0.0)


def test_small_longitudinal_slip_is_linear() -> None:
    s = 1e-3
    wheel_torque, f_lng, f_lat, _ = force(tires(), s, 0.0)
    np.testing.assert_allclose(f_lng, [24525.0 * s], rtol=2e-3)
    k = 24525.0 * s / REST_LOAD
    np.testing.assert_allclose(f_lng, [24525.0 * s * (1 - k / 3 + k * k / 27)], rtol=1e-12)  # exact f1
    np.testing.assert_array_equal(f_lat, 0.0)
    np.testing.assert_allclose(wheel_torque, -f_lng * 0.35)
    assert force(tires(), -s, 0.0)[1][0] == pytest.approx(-f_lng[0])


def test_small_lateral_slip_is_linear_and_opposes_slip() -> None:
    a = 2e-3
    _, f_lng, f_lat, moment = force(tires(), 0.0, a)
    np.testing.assert_allclose(f_lat, [-118700.0 * np.tan(a)], rtol=2e-2)
    np.testing.assert_array_equal(f_lng, 0.0)
    assert moment[0] > 0.0  # the aligning moment turns the wheel towards the slip


@pytest.mark.parametrize("s, a", [(2.0, 0.8), (-0.5, 0.3), (0.0, -1.2), (3.0, 0.0), (0.2, -0.5)])
def test_large_slips_saturate_at_friction_times_load(s: float, a: float) -> None:
    mu, load = 0.8, 4000.0
    _, f_lng, f_lat, moment = force(tires(), s, a, friction=mu, load=load)
    np.testing.assert_allclose(np.hypot(f_lng, f_lat), [mu * load], rtol=1e-12)
    assert np.sign(f_lng[0]) == np.sign(s) and np.sign(f_lat[0]) == -np.sign(a)
    k = np.hypot(118700.0 * np.tan(a), 24525.0 * s) / (mu * load)
    assert (
        k > 3.0
    )  # saturated regime; the aligning moment's shape polynomial is unclamped there (as in PhysX)
    m_bar = k - k**2 + k**3 / 3 - k**4 / 27
    assert np.sign(moment[0]) == np.sign(a * m_bar) or a == 0.0


def test_force_grows_monotonically_to_the_limit() -> None:
    s = np.linspace(1e-4, 1.0, 400).reshape(20, 20)
    t = tires(20)
    f = np.concatenate(
        [
            compute_tire_force_michigan(
                t, np.ones(20), row, np.zeros(20), np.zeros(20), np.full(20, 0.35), np.full(20, REST_LOAD)
            )[1]
            for row in s
        ]
    )
    assert np.all(np.diff(f) >= -1e-9)
    np.testing.assert_allclose(f[-1], REST_LOAD)
    k = 24525.0 * s.ravel() / REST_LOAD
    np.testing.assert_allclose(f[k >= 3.0], REST_LOAD, rtol=1e-12)  # saturated once K >= 3


def test_camber_thrust() -> None:
    t = tires(camber_stiff=5e4)
    g = 0.01
    _, f_lng, f_lat, _ = force(t, 0.0, 0.0, g)
    ca = 118700.0
    expected_t = np.tan(g * 5e4 / ca)
    k = ca * expected_t / REST_LOAD
    np.testing.assert_allclose(f_lat, [-ca * expected_t * (1 - k / 3 + k * k / 27)], rtol=1e-9)
    np.testing.assert_allclose(f_lat, [-5e4 * g], rtol=0.05)
    assert f_lng[0] == 0.0
    # no camber stiffness: camber makes no force
    np.testing.assert_array_equal(force(tires(), 0.0, 0.0, g)[2], 0.0)


def test_lateral_stiffness_vs_load() -> None:
    t = TireForceParams.from_wheels([{**TIRE, "lat_stiff_x": 2.0}, {**TIRE, "lat_stiff_x": 0.0}])
    loads = np.array([0.5 * REST_LOAD, 0.5 * REST_LOAD])
    k = 3 * 0.5 / 2.0
    np.testing.assert_allclose(
        compute_lateral_stiffness(t, loads), [118700.0 * (k - k * k / 3 + k**3 / 27), 118700.0]
    )
    # flat at and beyond lat_stiff_x normalised load
    np.testing.assert_allclose(compute_lateral_stiffness(t, np.array([2.0, 5.0]) * REST_LOAD), [118700.0] * 2)


def test_tire_forces_update_vectors_and_torques() -> None:
    t, w, susp = tires(), wheels(), suspension()
    comp = SuspensionComplianceState.default(1)
    comp.tire_force_app_point[:] = [0.0, 0.0, -0.5]
    dirs = TireDirectionState(np.array([[[1.0, 0, 0], [0, 1.0, 0]]]))
    grip = TireGripState(np.array([REST_LOAD]), np.array([1.0]))
    slips = TireSlipState(np.array([[0.05, 0.02]]))
    f = tire_forces_update(w, susp, t, comp, grip, dirs, slips, TireCamberState.default(1), IDENTITY)
    _, f_lng, f_lat, moment = force(t, 0.05, 0.02)
    np.testing.assert_allclose(f.lng_force, [[f_lng[0], 0, 0]])
    np.testing.assert_allclose(f.lat_force, [[0, f_lat[0], 0]])
    r = np.array([1.3, 0.8, -0.5])
    np.testing.assert_allclose(f.lng_torque[0], np.cross(r, f.lng_force[0]))
    np.testing.assert_allclose(f.lat_torque[0], np.cross(r, f.lat_force[0]))
    np.testing.assert_allclose(f.aligning_moment, moment)
    np.testing.assert_allclose(f.wheel_torque, -f_lng * 0.35)
    no_grip = tire_forces_update(
        w, susp, t, comp, TireGripState.default(1), dirs, slips, TireCamberState.default(1), IDENTITY
    )
    np.testing.assert_array_equal(no_grip.forces, 0.0)


# --- grip: friction graph and load filter ---------------------------------------------------------


def test_friction_vs_slip_interpolation() -> None:
    t = tires(6, friction_vs_slip=[[0.0, 1.0], [0.1, 1.2], [1.0, 0.8]])
    s = np.array([0.0, -0.05, 0.1, 0.55, 1.0, 3.0])
    np.testing.assert_allclose(compute_friction_multiplier(t, s), [1.0, 1.1, 1.2, 1.0, 0.8, 0.8])


def test_load_filter() -> None:
    t = tires(5, load_filter=[[0.0, 0.25], [2.0, 3.0]])
    normal = np.array([-100.0, 0.0, 1.0, 2.0, 5.0]) * REST_LOAD
    np.testing.assert_allclose(
        compute_filtered_load(t, normal), np.array([0.25, 0.25, 0.25 + 0.5 * 2.75, 3.0, 3.0]) * REST_LOAD
    )


def test_grip_update_off_ground_and_road_friction() -> None:
    t = tires(2, friction_vs_slip=[[0.0, 1.0], [0.1, 1.2], [1.0, 0.8]])
    slips = TireSlipState(np.array([[0.1, 0.0], [0.1, 0.0]]))
    g = tire_grip_update(t, np.array([0.7, 0.7]), np.array([True, False]), np.full(2, REST_LOAD), slips)
    np.testing.assert_allclose(g.friction, [0.7 * 1.2, 0.0])
    filtered = 0.2308 + 1.0 * (3.0 - 0.2308) / 3.0  # default filter maps normalised load 1 to this
    np.testing.assert_allclose(g.load, [REST_LOAD * filtered, 0.0])


# --- slips ---------------------------------------------------------------------------------------


def test_slips_active_and_passive_denominators() -> None:
    w = wheels(4)
    act = WheelActuationState.default(4)
    act.is_drive_applied[1] = True
    act.is_brake_applied[2] = True
    speeds = TireSpeedState(np.array([[10.0, 1.0], [0.05, 0.0], [-2.0, 0.0], [0.0, 0.0]]))
    omega = np.array([30.0, 10.0, 0.0, 0.0])
    sp = TireSlipParams()
    sl = tire_slips_update(w, sp, act, speeds, omega)
    np.testing.assert_allclose(
        sl.lng_slip,
        [(30 * 0.35 - 10) / (10 + 4.0), (3.5 - 0.05) / (0.05 + 0.1), (0 + 2.0) / (2.0 + 0.1), 0.0],
    )
    np.testing.assert_allclose(sl.lat_slip, [np.arctan(1.0 / (10.0 + 1.0)), 0.0, 0.0, 0.0])


def test_sticky_states_zero_the_slips() -> None:
    slips = TireSlipState(np.array([[0.3, 0.2], [0.3, 0.2]]))
    sticky = TireStickyState(np.zeros((2, 2)), np.array([[True, False], [False, True]]))
    np.testing.assert_array_equal(
        tire_slips_accounting_for_sticky_states(sticky, slips).slips, [[0.0, 0.2], [0.3, 0.0]]
    )


# --- directions, speeds, camber ------------------------------------------------------------------


def test_directions_follow_steer_and_ground() -> None:
    susp = suspension(3)
    comp = SuspensionComplianceState.default(3)
    steer = np.array([0.3, 0.0, 0.0])
    slope = np.array([np.sin(0.2), 0.0, np.cos(0.2)])  # uphill ahead
    normals = np.array([[0, 0, 1.0], slope, [0, 0, 1.0]])
    d = tire_dirs_update(DEFAULT_FRAME, susp, steer, normals, np.array([True, True, False]), comp, IDENTITY)
    np.testing.assert_allclose(d.lng_direction[0], [np.cos(0.3), np.sin(0.3), 0], atol=1e-15)
    np.testing.assert_allclose(d.lat_direction[0], [-np.sin(0.3), np.cos(0.3), 0], atol=1e-15)
    np.testing.assert_allclose(d.directions[1] @ slope, [0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(d.lng_direction[1], [np.cos(0.2), 0, -np.sin(0.2)], atol=1e-15)
    np.testing.assert_array_equal(d.directions[2], 0.0)


def test_contact_speeds_include_rotation_and_road_velocity() -> None:
    w, susp = wheels(1), suspension(1)
    dirs = TireDirectionState(np.array([[[1.0, 0, 0], [0, 1.0, 0]]]))
    omega_z = 0.5
    sp = tire_slip_speeds_update(
        DEFAULT_FRAME,
        w,
        susp,
        np.zeros(1),
        np.array([0.1]),
        dirs,
        np.zeros(3),
        IDENTITY,
        np.array([10.0, 0.0, 0.0]),
        np.array([0.0, 0.0, omega_z]),
        np.array([[1.0, 0.5, 0.0]]),
    )
    np.testing.assert_allclose(sp.lng_speed, [10.0 - omega_z * 0.8 - 1.0])
    np.testing.assert_allclose(sp.lat_speed, [omega_z * 1.3 - 0.5])
    # pitch rate acts through the contact point's height below the centre of mass
    sp2 = tire_slip_speeds_update(
        DEFAULT_FRAME,
        w,
        susp,
        np.zeros(1),
        np.array([0.1]),
        dirs,
        np.zeros(3),
        IDENTITY,
        np.zeros(3),
        np.array([0.0, 1.0, 0.0]),
        np.zeros((1, 3)),
    )
    contact_z = -(0.3 - 0.1) - 0.35
    np.testing.assert_allclose(sp2.lng_speed, [contact_z * 1.0])


def test_camber_angle_against_road() -> None:
    susp = suspension(3)
    comp = SuspensionComplianceState.default(3)
    comp.camber[1] = 0.04
    g = 0.1
    normals = np.array([[0.0, np.sin(g), np.cos(g)], [0, 0, 1.0], [0, 0, 1.0]])
    c = tire_camber_angles_update(
        DEFAULT_FRAME, susp, np.zeros(3), normals, np.array([True, True, False]), comp, IDENTITY
    )
    np.testing.assert_allclose(c.camber_angle, [g, 0.04, 0.0], atol=1e-15)


# --- sticky tire --------------------------------------------------------------------------------


def _sticky_step(prev, v_lng, v_lat, omega, act, dt=0.1, grip=1.0):
    n = len(np.atleast_1d(v_lng))
    speeds = TireSpeedState(np.column_stack([np.atleast_1d(v_lng), np.atleast_1d(v_lat)]).astype(float))
    g = TireGripState(np.full(n, REST_LOAD * grip), np.ones(n))
    return tire_sticky_state_update(
        wheels(n), TireStickyParams(), act, g, speeds, np.atleast_1d(omega), dt, prev
    )


def test_sticky_timers_activate_after_threshold_time() -> None:
    st = TireStickyState.default(1)
    act = WheelActuationState.default(1)
    for _ in range(10):
        st = _sticky_step(st, 0.1, 0.1, 0.1, act)
    np.testing.assert_allclose(st.low_speed_time, [[1.0, 1.0]])
    assert not st.active_status.any()  # 1.0 is not > 1.0
    st = _sticky_step(st, 0.1, 0.1, 0.1, act)
    np.testing.assert_array_equal(st.active_status, [[True, True]])
    # a fast lateral speed resets only the lateral timer
    st2 = _sticky_step(st, 0.1, 0.5, 0.1, act)
    np.testing.assert_array_equal(st2.active_status, [[True, False]])
    assert st2.low_speed_time[0, LATERAL] == 0.0 and st2.low_speed_time[0, LONGITUDINAL] > 1.0
    # a fast spinning wheel resets the longitudinal timer, and then lateral cannot be active
    st3 = _sticky_step(st, 0.1, 0.1, 1.0, act)
    np.testing.assert_array_equal(st3.active_status, [[False, False]])
    assert st3.low_speed_time[0, LONGITUDINAL] == 0.0 and st3.low_speed_time[0, LATERAL] > 1.0


def test_sticky_reset_by_any_driven_wheel_and_by_no_grip() -> None:
    st = TireStickyState(np.full((2, 2), 5.0), np.ones((2, 2), dtype=bool))
    act = WheelActuationState.default(2)
    act.is_drive_applied[1] = True  # the other wheel is driven
    out = _sticky_step(st, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], act)
    np.testing.assert_array_equal(out.low_speed_time, 0.0)
    assert not out.active_status.any()
    out = _sticky_step(st, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], WheelActuationState.default(2), grip=0.0)
    np.testing.assert_array_equal(out.low_speed_time, 0.0)
    assert not out.active_status.any()


def test_locked_braked_wheel_goes_sticky_at_once() -> None:
    act = WheelActuationState.default(2)
    act.is_brake_applied[0] = True  # brake intention is vehicle-wide
    out = _sticky_step(TireStickyState.default(2), [0.1, 0.1], [0.0, 0.0], [0.0, 0.3], act)
    np.testing.assert_array_equal(out.active_status, [[True, False], [False, False]])
    np.testing.assert_allclose(out.low_speed_time, [[0.1, 0.1], [0.1, 0.1]])


def test_sticky_custom_thresholds_from_context() -> None:
    params = TireStickyParams(TireAxisStickyParams(1.0, 0.05, 1.0), TireAxisStickyParams(1.0, 0.05, 0.1))
    speeds = TireSpeedState(np.array([[0.5, 0.5]]))
    g = TireGripState(np.array([REST_LOAD]), np.ones(1))
    out = tire_sticky_state_update(
        wheels(1),
        params,
        WheelActuationState.default(1),
        g,
        speeds,
        np.zeros(1),
        0.1,
        TireStickyState.default(1),
    )
    np.testing.assert_array_equal(out.active_status, [[True, True]])


def test_sticky_constraint_rows() -> None:
    susp = suspension(1)
    comp = SuspensionComplianceState.default(1)
    comp.tire_force_app_point[:] = [0.0, 0.0, -0.5]
    dirs = TireDirectionState(np.array([[[1.0, 0, 0], [0, 1.0, 0]]]))
    sticky = TireStickyState(np.zeros((1, 2)), np.array([[True, False]]))
    c = tire_sticky_constraints(susp, comp, dirs, sticky, TireStickyParams(), IDENTITY)
    np.testing.assert_array_equal(c.active, [[True, False]])
    np.testing.assert_allclose(c.linear[0], [[1.0, 0, 0], [0, 0, 0]])
    np.testing.assert_allclose(c.angular[0, 0], np.cross([1.3, 0.8, -0.5], [1.0, 0, 0]))
    np.testing.assert_allclose(c.damping, [[1.0, 0.0]])


def test_trailer_helpers() -> None:
    act = WheelActuationState.default(2)
    assert not acceleration_intent_compute(act)
    act.is_drive_applied[0] = True
    assert acceleration_intent_compute(act)
    towed = TireStickyState(np.ones((2, 2)), np.ones((2, 2), dtype=bool))
    tire_sticky_state_reset(False, towed)
    assert towed.active_status.all()
    tire_sticky_state_reset(True, towed)
    assert not towed.active_status.any() and not towed.low_speed_time.any()


# --- params and states ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("lat_stiff_x", -1.0, r"lat_stiff_x\[wheel 1\] must be greater than or equal to zero"),
        ("lat_stiff_y", 0.0, r"lat_stiff_y\[wheel 1\] must be greater than zero"),
        ("long_stiff", 0.0, r"long_stiff\[wheel 1\] must be greater than zero"),
        ("camber_stiff", -1.0, r"camber_stiff\[wheel 1\] must be greater than or equal"),
        ("rest_load", 0.0, r"rest_load\[wheel 1\] must be greater than zero"),
        (
            "load_filter",
            [[0.1, 0.2], [3.0, 3.0]],
            r"load_filter\[wheel 1\] must have load_filter\[0\]\[0\] == 0",
        ),
        (
            "load_filter",
            [[0.0, 0.2], [3.0, 0.0]],
            r"load_filter\[wheel 1\] must have load_filter\[1\]\[1\] > 0",
        ),
        (
            "friction_vs_slip",
            [[0.0, 1.0], [0.1, -1.0], [1.0, 1.0]],
            r"friction_vs_slip\[wheel 1\] must hold non-neg",
        ),
        (
            "friction_vs_slip",
            [[0.0, 1.0], [0.5, 1.0], [0.5, 1.0]],
            r"friction_vs_slip\[wheel 1\] slips must be strictly",
        ),
    ],
)
def test_tire_params_validation(field: str, value, message: str) -> None:
    p = TireForceParams.from_wheels([TIRE, {**TIRE, field: value}])
    with pytest.raises(ValueError, match=message):
        p.validate()
    tires(2).validate()


@pytest.mark.parametrize("trg", [Y_UP_Z_FORWARD, SAE_J670])
def test_tire_params_transform_and_scale(trg) -> None:
    p = tires(2, camber_stiff=100.0)
    cm = p.transform_and_scale(DEFAULT_FRAME, trg, Scale(1.0), Scale(100.0))
    np.testing.assert_allclose(cm.lat_stiff_y, 118700.0 * 100)
    np.testing.assert_allclose(cm.long_stiff, 24525.0 * 100)
    np.testing.assert_allclose(cm.camber_stiff, 1e4)
    np.testing.assert_allclose(cm.rest_load, REST_LOAD * 100)
    np.testing.assert_array_equal(cm.lat_stiff_x, p.lat_stiff_x)
    np.testing.assert_array_equal(cm.friction_vs_slip, p.friction_vs_slip)
    np.testing.assert_array_equal(cm.load_filter, p.load_filter)
    back = cm.transform_and_scale(trg, DEFAULT_FRAME, Scale(100.0), Scale(1.0))
    for f in ("lat_stiff_x", "lat_stiff_y", "long_stiff", "camber_stiff", "rest_load"):
        np.testing.assert_allclose(getattr(back, f), getattr(p, f), rtol=1e-14, err_msg=f)


def test_force_is_consistent_across_scales() -> None:
    """In centimetres forces (and stiffness, load) are x100; slips and friction are unchanged."""
    p = tires(1)
    cm = p.transform_and_scale(DEFAULT_FRAME, DEFAULT_FRAME, Scale(1.0), Scale(100.0))
    m = force(p, 0.07, 0.04, load=5000.0)
    c = compute_tire_force_michigan(
        cm,
        np.ones(1),
        np.array([0.07]),
        np.array([0.04]),
        np.zeros(1),
        np.full(1, 35.0),
        np.full(1, 500000.0),
    )
    for a, b in zip(m, c, strict=True):
        np.testing.assert_allclose(b, 100.0 * a if a is not m[0] else 1e4 * a, rtol=1e-12)


def test_tire_states_defaults_and_views() -> None:
    f = TireForce.default(3)
    assert f.forces.shape == (3, 2, 3) and f.torques.shape == (3, 2, 3)
    f.forces[:, LATERAL] = 1.0
    np.testing.assert_array_equal(f.lat_force, 1.0)
    f.set_to_default()
    np.testing.assert_array_equal(f.forces, 0.0)
    st = TireStickyState.zeros(2)
    assert st.active_status.dtype == bool
    assert set(st.as_dict()) == {"low_speed_time", "active_status"}
