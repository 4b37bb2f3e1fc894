"""Suspension: jounce/separation, spring force, static sag, expansion limit, compliance, anti-roll,
sprung masses, params validation and frame/scale round trips."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.frame import DEFAULT_FRAME, SAE_J670, Y_UP_Z_FORWARD, Axis, Scale, transform_direction
from simcore.maths import quat_from_axis_angle, quat_rotate
from simcore.suspension.functions import (
    anti_roll_force_update,
    compute_jounce_and_separation,
    intersect_cylinder_plane,
    intersect_ray_plane,
    suspension_compliance_update,
    suspension_force_update,
    suspension_state_update,
)
from simcore.suspension.helpers import (
    compute_sprung_masses,
    compute_suspension_raycast,
    compute_suspension_sweep,
)
from simcore.suspension.params import (
    AntiRollBarParams,
    ComplianceTable,
    JounceCalculationType,
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.suspension.states import (
    NO_INTERSECTION_SEPARATION,
    UNSPECIFIED_JOUNCE,
    SuspensionComplianceState,
    SuspensionState,
)
from simcore.wheel.params import WheelParams

G = 9.81
IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])
ORIGIN = np.zeros(3)
RAYCAST = SuspensionStateCalculationParams(JounceCalculationType.RAYCAST, False)
SWEEP = SuspensionStateCalculationParams(JounceCalculationType.SWEEP, False)

TRAVEL = 0.3
RADIUS = 0.35
HALF_WIDTH = 0.15


def make_wheels(n: int = 1) -> WheelParams:
    return WheelParams.from_wheels(
        [dict(radius=RADIUS, half_width=HALF_WIDTH, mass=20.0, moi=1.2, damping_rate=0.25)] * n
    )


def make_suspension(attachments: list[tuple[float, float, float]]) -> SuspensionParams:
    return SuspensionParams.from_wheels(
        [
            dict(
                suspension_attachment_pos=a,
                suspension_travel_dir=(0.0, 0.0, -1.0),
                suspension_travel_dist=TRAVEL,
            )
            for a in attachments
        ]
    )


def flat_plane(n: int, height: float) -> np.ndarray:
    """Plane z = height for every wheel: normal +Z, d = -height."""
    return np.tile([0.0, 0.0, 1.0, -height], (n, 1))


def ground_height_for_jounce(jounce: float) -> float:
    """Ground z that puts a wheel attached at z=0 (travel -Z) at the given jounce."""
    return -(TRAVEL - jounce) - RADIUS


# --- jounce and separation ---------------------------------------------------------------------


@pytest.mark.parametrize("calc", [RAYCAST, SWEEP], ids=["raycast", "sweep"])
def test_separation_states_on_flat_ground(calc: SuspensionStateCalculationParams) -> None:
    wheel, susp = make_wheels(3), make_suspension([(0, 0, 0)] * 3)
    # in range (jounce 0.1), bump stop (ground 0.1 above max compression), in the air (0.2 below max droop)
    heights = np.array(
        [
            ground_height_for_jounce(0.1),
            ground_height_for_jounce(TRAVEL) + 0.1,
            ground_height_for_jounce(0.0) - 0.2,
        ]
    )
    plane = np.column_stack([np.zeros((3, 2)), np.ones(3), -heights])
    st = suspension_state_update(
        wheel,
        susp,
        calc,
        np.full(3, 3e4),
        np.full(3, 3e3),
        np.zeros(3),
        plane,
        np.ones(3, bool),
        ORIGIN,
        IDENTITY,
        0.01,
        DEFAULT_FRAME,
        np.array([0, 0, -G]),
        SuspensionState.default(3),
    )
    np.testing.assert_allclose(st.jounce, [0.1, TRAVEL, 0.0], atol=1e-12)
    assert st.separation[0] == 0.0
    np.testing.assert_allclose(st.separation[1], -0.1, atol=1e-12)  # penetration along the normal
    assert st.separation[2] == NO_INTERSECTION_SEPARATION > 0.0
    np.testing.assert_array_equal(st.jounce_speed, 0.0)  # first update after "unspecified"


def test_no_hit_means_in_air_with_zero_jounce() -> None:
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    prev = SuspensionState.default(1, jounce=0.2, separation=0.0)
    st = suspension_state_update(
        wheel,
        susp,
        RAYCAST,
        [3e4],
        [3e3],
        [0.0],
        flat_plane(1, -0.4),
        [False],
        ORIGIN,
        IDENTITY,
        0.01,
        DEFAULT_FRAME,
        np.array([0, 0, -G]),
        prev,
    )
    assert st.jounce[0] == 0.0 and st.jounce_speed[0] == 0.0
    assert st.separation[0] == NO_INTERSECTION_SEPARATION


def test_jounce_speed_is_finite_difference() -> None:
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    prev = SuspensionState.default(1, jounce=0.10, separation=0.0)
    st = suspension_state_update(
        wheel,
        susp,
        RAYCAST,
        [3e4],
        [3e3],
        [0.0],
        flat_plane(1, ground_height_for_jounce(0.13)),
        [True],
        ORIGIN,
        IDENTITY,
        0.02,
        DEFAULT_FRAME,
        np.array([0, 0, -G]),
        prev,
    )
    np.testing.assert_allclose(st.jounce_speed, [(0.13 - 0.10) / 0.02])


def test_jounce_and_separation_cases_table() -> None:
    # columns: depth, dir.n, travel, previous -> expected jounce, separation
    cases = [
        (-0.1, -1.0, 0.3, 0.0, 0.1, 0.0),  # in range
        (-0.5, -1.0, 0.3, 0.0, 0.3, -0.2),  # beyond max compression: depth*(delta-travel)/delta
        (-0.1, 1.0, 0.3, 0.0, 0.0, -0.1),  # would need to extend beyond droop
        (0.2, -1.0, 0.3, 0.0, 0.0, NO_INTERSECTION_SEPARATION),  # in the air
        (-0.1, 0.0, 0.3, 0.12, 0.12, -0.1),  # travel parallel to the plane: keep previous jounce
        (-0.1, 0.0, 0.3, UNSPECIFIED_JOUNCE, 0.3, -0.1),  # ... or max compression if unspecified
        (0.1, 0.0, 0.3, 0.12, 0.0, NO_INTERSECTION_SEPARATION),
    ]
    a = np.array(cases)
    j, s = compute_jounce_and_separation(a[:, 0], a[:, 1], a[:, 2], a[:, 3])
    np.testing.assert_allclose(j, a[:, 4], atol=1e-15)
    np.testing.assert_allclose(s, a[:, 5], atol=1e-15)


def test_raycast_and_sweep_agree_on_flat_ground_and_sweep_sees_the_tilt() -> None:
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    plane = flat_plane(1, ground_height_for_jounce(0.12))
    args = (DEFAULT_FRAME, wheel, susp, [0.0], plane, ORIGIN, IDENTITY, np.array([UNSPECIFIED_JOUNCE]))
    _, j_ray, _ = intersect_ray_plane(*args)
    _, j_sweep, _ = intersect_cylinder_plane(*args)
    np.testing.assert_allclose(j_ray, [0.12], atol=1e-12)
    np.testing.assert_allclose(j_sweep, [0.12], atol=1e-12)


@pytest.mark.parametrize("tilt_axis", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.6, 0.8, 0.0)])
def test_sweep_is_exact_against_sampled_cylinder(tilt_axis: tuple[float, float, float]) -> None:
    """The sweep jounce puts the deepest point of the wheel cylinder exactly on a tilted plane."""
    wheel, susp = make_wheels(1), make_suspension([(0.2, -0.1, 0.0)])
    axis = np.array(tilt_axis) / np.linalg.norm(tilt_axis)
    normal = quat_from_axis_angle(axis, 0.25)

    n = quat_rotate(normal, np.array([0.0, 0.0, 1.0]))
    point = np.array([0.2, -0.1, -0.55])  # a point on the ground under the wheel
    plane = np.array([[*n, -n @ point]])
    _, j, sep = intersect_cylinder_plane(
        DEFAULT_FRAME, wheel, susp, [0.0], plane, ORIGIN, IDENTITY, np.array([UNSPECIFIED_JOUNCE])
    )
    assert sep[0] == 0.0 and 0.0 < j[0] < TRAVEL
    centre = np.array([0.2, -0.1, -(TRAVEL - j[0])])
    # sample the two rims: wheel axis +Y, disc in the XZ plane
    t = np.linspace(0.0, 2 * np.pi, 20001)
    rim = np.stack([np.cos(t), np.zeros_like(t), np.sin(t)], axis=1) * RADIUS
    pts = np.concatenate([centre + rim + [0, HALF_WIDTH, 0], centre + rim - [0, HALF_WIDTH, 0]])
    dist = pts @ n + plane[0, 3]
    assert abs(dist.min()) < 1e-6  # touching, not penetrating nor floating
    _, j_ray, _ = intersect_ray_plane(
        DEFAULT_FRAME, wheel, susp, [0.0], plane, ORIGIN, IDENTITY, np.array([UNSPECIFIED_JOUNCE])
    )
    assert j[0] > j_ray[0]  # the ray misses the lower disc edge on a tilted road


def test_sweep_with_road_normal_along_wheel_axis() -> None:
    """Degenerate case: only a disc face can touch; Vehicle2's closed form applies."""
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    plane = np.array([[0.0, 1.0, 0.0, 0.5]])  # wall y = -0.5, wheel axis +Y, centre at y=0
    _, j, sep = intersect_cylinder_plane(
        DEFAULT_FRAME, wheel, susp, [0.0], plane, ORIGIN, IDENTITY, np.array([UNSPECIFIED_JOUNCE])
    )
    # travel direction is parallel to the wall: no hit, depth = d - halfWidth - sign*wheel_d = 0.35 > 0
    assert j[0] == 0.0 and sep[0] == NO_INTERSECTION_SEPARATION


# --- force and static sag ----------------------------------------------------------------------


@pytest.mark.parametrize("calc", [RAYCAST, SWEEP], ids=["raycast", "sweep"])
def test_static_sag_force_balances_weight(calc: SuspensionStateCalculationParams) -> None:
    mass, k = 450.0, 26000.0
    sag = mass * G / k
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    force_params = SuspensionForceParams.from_wheels([dict(stiffness=k, damping=3000.0, sprung_mass=mass)])
    plane = flat_plane(1, ground_height_for_jounce(sag))
    prev = SuspensionState.default(1, jounce=sag, separation=0.0)
    st = suspension_state_update(
        wheel,
        susp,
        calc,
        force_params.stiffness,
        force_params.damping,
        [0.0],
        plane,
        [True],
        ORIGIN,
        IDENTITY,
        1 / 60,
        DEFAULT_FRAME,
        np.array([0, 0, -G]),
        prev,
    )
    np.testing.assert_allclose(st.jounce, [sag], rtol=1e-12)
    np.testing.assert_allclose(st.jounce_speed, [0.0], atol=1e-9)
    comp = SuspensionComplianceState.default(1)
    f = suspension_force_update(
        susp, force_params, plane[:, :3], st, comp, IDENTITY, ORIGIN, ORIGIN, np.array([0, 0, -G]), mass
    )
    np.testing.assert_allclose(f.force, [[0.0, 0.0, mass * G]], rtol=1e-9)
    np.testing.assert_allclose(f.normal_force, [mass * G], rtol=1e-9)


def test_quarter_car_settles_at_static_sag() -> None:
    """Integrate a sprung mass on one suspension: jounce converges to m g / k (within 1%)."""
    mass, k, c = 500.0, 30000.0, 4000.0
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    fp = SuspensionForceParams.from_wheels([dict(stiffness=k, damping=c, sprung_mass=mass)])
    plane = flat_plane(1, 0.0)
    g = np.array([0.0, 0.0, -G])
    z, vz, dt = TRAVEL + RADIUS + 0.05, 0.0, 1 / 60  # start in the air
    st = SuspensionState.default(1)
    comp = SuspensionComplianceState.default(1)
    for _ in range(300):
        pos = np.array([0.0, 0.0, z])
        st = suspension_state_update(
            wheel,
            susp,
            SWEEP,
            fp.stiffness,
            fp.damping,
            [0.0],
            plane,
            [True],
            pos,
            IDENTITY,
            dt,
            DEFAULT_FRAME,
            g,
            st,
        )
        f = suspension_force_update(susp, fp, plane[:, :3], st, comp, IDENTITY, ORIGIN, ORIGIN, g, mass)
        vz += (f.force[0, 2] / mass - G) * dt
        z += vz * dt
    np.testing.assert_allclose(st.jounce[0], mass * G / k, rtol=0.01)
    assert abs(vz) < 1e-3


def test_no_force_in_air_and_force_along_normal_with_torque() -> None:
    susp = make_suspension([(1.2, 0.8, 0.0), (1.2, -0.8, 0.0)])
    fp = SuspensionForceParams.from_wheels([dict(stiffness=3e4, damping=0.0, sprung_mass=400.0)] * 2)
    st = SuspensionState(
        jounce=np.array([0.1, 0.1]),
        jounce_speed=np.zeros(2),
        separation=np.array([0.0, NO_INTERSECTION_SEPARATION]),
    )
    comp = SuspensionComplianceState.default(2)
    comp.susp_force_app_point[:] = [0.0, 0.0, -0.2]
    f = suspension_force_update(
        susp,
        fp,
        np.tile([0.0, 0.0, 1.0], (2, 1)),
        st,
        comp,
        IDENTITY,
        ORIGIN,
        ORIGIN,
        np.array([0, 0, -G]),
        1600.0,
    )
    np.testing.assert_allclose(f.force[0], [0.0, 0.0, 3e4 * 0.1])
    np.testing.assert_array_equal(f.force[1], 0.0)
    assert f.normal_force[1] == 0.0
    np.testing.assert_allclose(f.torque[0], np.cross([1.2, 0.8, -0.2], [0.0, 0.0, 3e3]))


def test_damping_adds_to_spring_force() -> None:
    susp = make_suspension([(0, 0, 0)])
    fp = SuspensionForceParams.from_wheels([dict(stiffness=2e4, damping=1500.0, sprung_mass=300.0)])
    st = SuspensionState(np.array([0.1]), np.array([0.4]), np.array([0.0]))
    f = suspension_force_update(
        susp,
        fp,
        [[0.0, 0.0, 1.0]],
        st,
        SuspensionComplianceState.default(1),
        IDENTITY,
        ORIGIN,
        ORIGIN,
        np.array([0, 0, -G]),
        300.0,
    )
    np.testing.assert_allclose(f.normal_force, [2e4 * 0.1 + 1500.0 * 0.4])


def test_collision_force_cancels_load_the_spring_cannot_carry() -> None:
    """Tilted travel direction on flat ground: the spring's normal component plus the cancelled
    perpendicular part of the wheel's weight share."""
    susp = SuspensionParams.from_wheels(
        [
            dict(
                suspension_attachment_pos=(0, 0, 0),
                suspension_travel_dir=(np.sin(0.3), 0.0, -np.cos(0.3)),
                suspension_travel_dist=TRAVEL,
            )
        ]
    )
    fp = SuspensionForceParams.from_wheels([dict(stiffness=2e4, damping=0.0, sprung_mass=250.0)])
    st = SuspensionState(np.array([0.1]), np.array([0.0]), np.array([0.0]))
    f = suspension_force_update(
        susp,
        fp,
        [[0.0, 0.0, 1.0]],
        st,
        SuspensionComplianceState.default(1),
        IDENTITY,
        ORIGIN,
        ORIGIN,
        np.array([0, 0, -G]),
        1000.0,
    )
    d = np.array([np.sin(0.3), 0.0, -np.cos(0.3)])
    share = np.array([0.0, 0.0, -G * 250.0])
    perp = share - d * (d @ share)
    expected = 2e4 * 0.1 * np.cos(0.3) - perp[2]
    np.testing.assert_allclose(f.normal_force, [expected])


# --- expansion velocity limit -------------------------------------------------------------------


def test_expansion_velocity_limit_clamps_a_sudden_drop() -> None:
    k, c, dt = 3e4, 2e3, 1 / 60
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    calc = SuspensionStateCalculationParams(JounceCalculationType.RAYCAST, True)
    prev = SuspensionState(np.array([0.2]), np.array([0.0]), np.array([0.0]))
    plane = flat_plane(1, ground_height_for_jounce(0.0) + 0.01)  # ground dropped: target jounce 0.01
    st = suspension_state_update(
        wheel,
        susp,
        calc,
        [k],
        [c],
        [0.0],
        plane,
        [True],
        ORIGIN,
        IDENTITY,
        dt,
        DEFAULT_FRAME,
        np.array([0, 0, -G]),
        prev,
    )
    vel = 0.2 * k / 20.0 * dt  # spring on the wheel mass, previous jounce speed 0
    threshold = vel + G * dt  # gravity helps along the travel direction
    assert (0.01 - 0.2) / dt < -threshold  # requested expansion is too fast
    np.testing.assert_allclose(st.jounce, [0.2 - vel * dt])
    np.testing.assert_allclose(st.jounce_speed, [-vel])
    np.testing.assert_allclose(st.separation, [(0.2 - vel * dt) - 0.01])  # now in the air
    unlimited = suspension_state_update(
        wheel,
        susp,
        RAYCAST,
        [k],
        [c],
        [0.0],
        plane,
        [True],
        ORIGIN,
        IDENTITY,
        dt,
        DEFAULT_FRAME,
        np.array([0, 0, -G]),
        prev,
    )
    np.testing.assert_allclose(unlimited.jounce, [0.01])


def test_expansion_velocity_limit_when_road_is_lost() -> None:
    k, c, dt = 3e4, 2e3, 1 / 60
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    calc = SuspensionStateCalculationParams(JounceCalculationType.SWEEP, True)
    prev = SuspensionState(np.array([0.2]), np.array([-0.5]), np.array([0.0]))
    st = suspension_state_update(
        wheel,
        susp,
        calc,
        [k],
        [c],
        [0.0],
        np.zeros((1, 4)),
        [False],
        ORIGIN,
        IDENTITY,
        dt,
        DEFAULT_FRAME,
        np.array([0, 0, -G]),
        prev,
    )
    vel = 0.2 * k / 20.0 * dt + 0.5
    vel = max(0.0, vel + (-0.5) * c / 20.0 * dt)
    np.testing.assert_allclose(st.jounce, [0.2 - vel * dt])
    np.testing.assert_allclose(st.jounce_speed, [-vel])
    np.testing.assert_allclose(st.separation, [0.2 - vel * dt])


def test_expansion_limit_does_not_touch_compression() -> None:
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    calc = SuspensionStateCalculationParams(JounceCalculationType.RAYCAST, True)
    prev = SuspensionState(np.array([0.05]), np.array([0.0]), np.array([0.0]))
    st = suspension_state_update(
        wheel,
        susp,
        calc,
        [3e4],
        [2e3],
        [0.0],
        flat_plane(1, ground_height_for_jounce(0.2)),
        [True],
        ORIGIN,
        IDENTITY,
        0.01,
        DEFAULT_FRAME,
        np.array([0, 0, -G]),
        prev,
    )
    np.testing.assert_allclose(st.jounce, [0.2])
    np.testing.assert_allclose(st.jounce_speed, [15.0])


# --- compliance ----------------------------------------------------------------------------------


def test_compliance_table_interpolation_rules() -> None:
    t = ComplianceTable.from_points(
        [
            [],  # no points: 0
            [(0.5, 0.3)],  # one point: constant
            [(0.2, 1.0), (0.6, 3.0)],
            [(0.0, 0.0), (0.5, 1.0), (1.0, -1.0)],
            [(0.0, 0.0), (0.5, 1.0), (1.0, -1.0)],
            [(0.2, 1.0), (0.6, 3.0)],
            [(0.2, 1.0), (0.6, 3.0)],
        ],
        vector=False,
    )
    r = np.array([0.9, 0.0, 0.4, 0.75, 1.0, 0.1, 0.8])
    np.testing.assert_allclose(t.interpolate(r), [0.0, 0.3, 2.0, 0.0, -1.0, 1.0, 3.0])


def test_compliance_update_uses_normalised_jounce_and_vectors() -> None:
    susp = make_suspension([(0, 0, 0)] * 2)
    comp = SuspensionComplianceParams.from_wheels(
        [
            dict(
                wheel_toe_angle=[(0.0, 0.0), (1.0, 0.02)],
                wheel_camber_angle=[(0.0, -0.01), (1.0, 0.03)],
                susp_force_app_point=[(0.0, (0, 0, -0.1)), (1.0, (0, 0, -0.3))],
                tire_force_app_point=[(0.5, (0.1, 0.0, -0.2))],
            ),
            {},
        ]
    )
    comp.validate()
    st = suspension_compliance_update(susp, comp, np.array([0.15, 0.15]))  # r = 0.5
    np.testing.assert_allclose(st.toe, [0.01, 0.0])
    np.testing.assert_allclose(st.camber, [0.01, 0.0])
    np.testing.assert_allclose(st.susp_force_app_point, [[0, 0, -0.2], [0, 0, 0]])
    np.testing.assert_allclose(st.tire_force_app_point, [[0.1, 0.0, -0.2], [0, 0, 0]])


@pytest.mark.parametrize(
    "points, message",
    [
        ([(0.5, 0.1), (0.4, 0.2)], r"wheel_toe_angle\[wheel 1\] x values must be strictly increasing"),
        ([(0.5, 0.1), (1.5, 0.2)], r"wheel_toe_angle\[wheel 1\] must be points \(x, y\) with x in \[0, 1\]"),
        ([(0.5, 4.0)], r"wheel_toe_angle\[wheel 1\] must be points \(x, y\) with y in"),
    ],
)
def test_compliance_validation_names_graph_and_wheel(points: list, message: str) -> None:
    comp = SuspensionComplianceParams.from_wheels([{}, dict(wheel_toe_angle=points)])
    with pytest.raises(ValueError, match=message):
        comp.validate()


def test_compliance_table_rejects_four_points() -> None:
    with pytest.raises(ValueError, match=r"wheel 0.*at most 3 points"):
        ComplianceTable.from_points([[(0, 0), (0.2, 0), (0.4, 0), (0.6, 0)]], vector=False)


# --- anti-roll bars ------------------------------------------------------------------------------


def test_anti_roll_torque_matches_hand_computation() -> None:
    att = [(1.0, 0.8, 0.0), (1.0, -0.8, 0.0), (-1.0, 0.8, 0.0), (-1.0, -0.8, 0.0)]
    susp = make_suspension(att)
    app = np.tile([0.0, 0.0, -0.1], (4, 1))
    bar = AntiRollBarParams(0, 1, 1e4)
    jounce = np.array([0.15, 0.05, 0.1, 0.1])
    t = anti_roll_force_update(susp, (bar, AntiRollBarParams(2, 3, 5e3)), jounce, app, IDENTITY).torque
    f = (0.15 - 0.05) * 1e4
    down = np.array([0.0, 0.0, -1.0])
    expected = np.cross([1.0, 0.8, -0.1], -f * down) + np.cross([1.0, -0.8, -0.1], f * down)
    np.testing.assert_allclose(t, expected)
    assert expected[0] > 0.0  # rolls the more compressed left (+Y) side up


def test_anti_roll_with_wheels_in_air() -> None:
    susp = make_suspension([(1.0, 0.8, 0.0), (1.0, -0.8, 0.0)])
    app = np.zeros((2, 3))
    bar = (AntiRollBarParams(0, 1, 1e4),)
    t = anti_roll_force_update(susp, bar, np.array([0.1, 0.0]), app, IDENTITY).torque
    np.testing.assert_allclose(t, np.cross([1.0, 0.8, 0.0], [0.0, 0.0, 1e3]))  # only wheel 0 pushed
    np.testing.assert_array_equal(anti_roll_force_update(susp, bar, np.zeros(2), app, IDENTITY).torque, 0.0)
    zero = (AntiRollBarParams(0, 1, 0.0),)
    np.testing.assert_array_equal(
        anti_roll_force_update(susp, zero, np.array([0.1, 0.0]), app, IDENTITY).torque, 0
    )


def test_anti_roll_torque_rotates_with_body() -> None:
    susp = make_suspension([(1.0, 0.8, 0.0), (1.0, -0.8, 0.0)])
    bar = (AntiRollBarParams(0, 1, 1e4),)
    jounce = np.array([0.2, 0.1])
    q = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), np.pi / 2)
    t_body = anti_roll_force_update(susp, bar, jounce, np.zeros((2, 3)), IDENTITY).torque
    t_world = anti_roll_force_update(susp, bar, jounce, np.zeros((2, 3)), q).torque
    np.testing.assert_allclose(t_world, [-t_body[1], t_body[0], t_body[2]], atol=1e-9)


def test_anti_roll_validation() -> None:
    with pytest.raises(ValueError, match="wheel0 and wheel1 must differ"):
        AntiRollBarParams(1, 1, 10.0).validate(4)
    with pytest.raises(ValueError, match=r"wheel1 = 7 is not a wheel"):
        AntiRollBarParams(0, 7, 10.0).validate(4)
    with pytest.raises(ValueError, match="stiffness must be finite"):
        AntiRollBarParams(0, 1, np.inf).validate()


# --- sprung masses -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "coords",
    [
        [(0.0, 0.0, 0.3)],
        [(1.4, 0.0, 0.2), (-1.1, 0.0, 0.1)],
        [(1.3, 0.0, 0.0), (-1.2, 0.7, 0.0), (-1.2, -0.9, 0.0)],
        [(1.27, 0.8, -0.1), (1.27, -0.8, -0.1), (-1.59, 0.8, -0.1), (-1.59, -0.8, -0.1)],
        [(2.0, 0.9, 0), (2.0, -0.9, 0), (0.1, 0.9, 0), (0.1, -0.9, 0), (-1.8, 0.9, 0), (-1.8, -0.9, 0)],
    ],
)
def test_sprung_masses_put_mass_centre_at_origin(coords: list) -> None:
    x = np.array(coords, dtype=float)
    m = compute_sprung_masses(x, 1500.0, Axis.NEG_Z)
    np.testing.assert_allclose(m.sum(), 1500.0)
    np.testing.assert_allclose((m[:, None] * x)[:, :2].sum(axis=0), 0.0, atol=1e-8)


def test_sprung_masses_known_values() -> None:
    # front axle 1.27 ahead, rear 1.59 behind: lever rule, split evenly left/right
    x = np.array([(1.27, 0.8, 0), (1.27, -0.8, 0), (-1.59, 0.8, 0), (-1.59, -0.8, 0)])
    m = compute_sprung_masses(x, 2000.0, Axis.NEG_Z)
    front = 2000.0 * 1.59 / (1.27 + 1.59) / 2
    np.testing.assert_allclose(m, [front, front, 1000.0 - front, 1000.0 - front])
    # Y-up frame (PhysX snippet car): the vertical coordinate is ignored
    xy = np.array([(0.8, -0.1, 1.27), (-0.8, -0.2, 1.27), (0.8, 0.0, -1.59), (-0.8, 0.3, -1.59)])
    np.testing.assert_allclose(compute_sprung_masses(xy, 2000.0, Axis.NEG_Y), m)


def test_sprung_masses_degenerate_layouts() -> None:
    with pytest.raises(ValueError, match="coincide"):
        compute_sprung_masses(np.array([(1.0, 0.0, 0.0), (1.0, 0.0, 2.0)]), 100.0, Axis.NEG_Z)
    with pytest.raises(ValueError, match="collinear"):
        compute_sprung_masses(np.array([(1.0, 0.0, 0), (2.0, 0.0, 0), (3.0, 0.0, 0)]), 100.0, Axis.NEG_Z)
    with pytest.raises(ValueError, match="total_mass"):
        compute_sprung_masses(np.zeros((1, 3)), 0.0, Axis.NEG_Z)


# --- query helpers -------------------------------------------------------------------------------


def test_raycast_and_sweep_queries_span_the_travel() -> None:
    wheel, susp = make_wheels(1), make_suspension([(1.0, 0.5, 0.2)])
    pos = np.array([10.0, 0.0, 1.0])
    start, d, length = compute_suspension_raycast(DEFAULT_FRAME, wheel, susp, [0.0], pos, IDENTITY)
    np.testing.assert_allclose(start, [[11.0, 0.5, 1.2 + RADIUS]])
    np.testing.assert_allclose(d, [[0, 0, -1]])
    np.testing.assert_allclose(length, [TRAVEL + 2 * RADIUS])
    p, q, d2, dist = compute_suspension_sweep(DEFAULT_FRAME, susp, [0.3], pos, IDENTITY)
    np.testing.assert_allclose(p, [[11.0, 0.5, 1.2]])
    np.testing.assert_allclose(q, [quat_from_axis_angle(np.array([0, 0, 1.0]), 0.3)], atol=1e-15)
    np.testing.assert_allclose(dist, [TRAVEL])


# --- params: validation and frames ---------------------------------------------------------------


def test_suspension_params_validation_messages() -> None:
    good = dict(
        suspension_attachment_pos=(0, 0, 0), suspension_travel_dir=(0, 0, -1), suspension_travel_dist=0.2
    )
    SuspensionParams.from_wheels([good]).validate()
    with pytest.raises(ValueError, match=r"suspension_travel_dist\[wheel 1\] must be greater than zero"):
        SuspensionParams.from_wheels([good, {**good, "suspension_travel_dist": 0.0}]).validate()
    with pytest.raises(ValueError, match=r"suspension_travel_dir\[wheel 0\] must be a unit vector"):
        SuspensionParams.from_wheels([{**good, "suspension_travel_dir": (0, 0, -2)}]).validate()
    with pytest.raises(ValueError, match=r"suspension_attachment_quat\[wheel 0\] must be a unit quaternion"):
        SuspensionParams.from_wheels([{**good, "suspension_attachment_quat": (0, 0, 0, 2)}]).validate()
    with pytest.raises(
        ValueError, match=r"SuspensionParams.from_wheels: wheel 0 has no field 'suspension_travel_dist'"
    ):
        SuspensionParams.from_wheels(
            [dict(suspension_attachment_pos=(0, 0, 0), suspension_travel_dir=(0, 0, -1))]
        )
    with pytest.raises(ValueError, match=r"expected shape \(n_wheels, 3\)"):
        SuspensionParams.from_wheels([{**good, "suspension_attachment_pos": (0, 0)}])


def test_force_params_validation_messages() -> None:
    with pytest.raises(
        ValueError, match=r"SuspensionForceParams.damping\[wheel 1\] must be greater than or equal"
    ):
        SuspensionForceParams([1.0, 1.0], [0.0, -1.0], [1.0, 1.0]).validate()
    with pytest.raises(ValueError, match=r"stiffness\[wheel 0\] must be greater than zero"):
        SuspensionForceParams([0.0], [0.0], [1.0]).validate()
    with pytest.raises(ValueError, match=r"sprung_mass\[wheel 0\]"):
        SuspensionForceParams([1.0], [0.0], [0.0]).validate()
    with pytest.raises(ValueError, match="same number of wheels"):
        SuspensionForceParams([1.0, 2.0], [0.0], [1.0])


def test_state_calculation_params() -> None:
    assert (
        SuspensionStateCalculationParams(1).suspension_jounce_calculation_type is JounceCalculationType.SWEEP
    )
    with pytest.raises(ValueError, match="must be 0 \\(RAYCAST\\) or 1 \\(SWEEP\\)"):
        SuspensionStateCalculationParams(5)
    p = SuspensionStateCalculationParams(0, True)
    assert p.transform_and_scale(DEFAULT_FRAME, Y_UP_Z_FORWARD, Scale(1), Scale(100)) == p


def _sample_suspension() -> SuspensionParams:
    q = quat_from_axis_angle(np.array([0.0, 0.6, 0.8]), 0.2)
    return SuspensionParams.from_wheels(
        [
            dict(
                suspension_attachment_pos=(1.3, 0.8, -0.1),
                suspension_attachment_quat=q,
                suspension_travel_dir=(0.0, 0.1, -1.0) / np.linalg.norm([0.0, 0.1, -1.0]),
                suspension_travel_dist=0.25,
                wheel_attachment_pos=(0.0, 0.05, 0.0),
                wheel_attachment_quat=IDENTITY,
            ),
            dict(
                suspension_attachment_pos=(-1.5, -0.8, -0.1),
                suspension_travel_dir=(0, 0, -1),
                suspension_travel_dist=0.2,
            ),
        ]
    )


@pytest.mark.parametrize("trg", [Y_UP_Z_FORWARD, SAE_J670], ids=["y_up_z_fwd", "sae_j670"])
def test_suspension_params_frame_round_trip(trg) -> None:
    p = _sample_suspension()
    t = p.transform_and_scale(DEFAULT_FRAME, trg, Scale(1.0), Scale(100.0))
    np.testing.assert_allclose(
        t.suspension_travel_dir, transform_direction(DEFAULT_FRAME, trg, p.suspension_travel_dir)
    )
    np.testing.assert_allclose(t.suspension_travel_dist, 100.0 * p.suspension_travel_dist)
    back = t.transform_and_scale(trg, DEFAULT_FRAME, Scale(100.0), Scale(1.0))
    for f in (
        "suspension_attachment_pos",
        "suspension_travel_dir",
        "suspension_travel_dist",
        "wheel_attachment_pos",
    ):
        np.testing.assert_allclose(getattr(back, f), getattr(p, f), atol=1e-13, err_msg=f)
    for f in ("suspension_attachment_quat", "wheel_attachment_quat"):
        a, b = getattr(back, f), getattr(p, f)
        np.testing.assert_allclose(np.abs(np.einsum("ij,ij->i", a, b)), 1.0, atol=1e-12, err_msg=f)


def test_suspension_params_specific_frame_values() -> None:
    p = make_suspension([(1.0, 2.0, 3.0)])
    t = p.transform_and_scale(DEFAULT_FRAME, Y_UP_Z_FORWARD, Scale(1.0), Scale(100.0))
    # default (lng=X, lat=Y, vrt=Z) -> (lng=Z, lat=X, vrt=Y); lengths x100
    np.testing.assert_allclose(t.suspension_attachment_pos, [[200.0, 300.0, 100.0]])
    np.testing.assert_allclose(t.suspension_travel_dir, [[0.0, -1.0, 0.0]])
    np.testing.assert_allclose(t.suspension_travel_dist, [TRAVEL * 100.0])


def test_suspension_pose_rotation_round_trip_is_consistent_with_vectors() -> None:
    """A rotated attachment maps vectors the same way before and after the frame change."""
    p = _sample_suspension()
    t = p.transform_and_scale(DEFAULT_FRAME, Y_UP_Z_FORWARD, Scale(1.0), Scale(1.0))

    v = np.array([0.3, -0.2, 0.9])
    lhs = quat_rotate(t.suspension_attachment_quat[0], transform_direction(DEFAULT_FRAME, Y_UP_Z_FORWARD, v))
    rhs = transform_direction(DEFAULT_FRAME, Y_UP_Z_FORWARD, quat_rotate(p.suspension_attachment_quat[0], v))
    np.testing.assert_allclose(lhs, rhs, atol=1e-12)


def test_compliance_and_force_params_scale() -> None:
    comp = SuspensionComplianceParams.from_wheels(
        [
            dict(
                wheel_camber_angle=[(0.0, 0.01)],
                susp_force_app_point=[(0.0, (0.1, 0.2, 0.3)), (1.0, (0, 0, -0.1))],
                tire_force_app_point=[(0.3, (0.0, 0.0, -0.2))],
            )
        ]
    )
    cm = comp.transform_and_scale(DEFAULT_FRAME, Y_UP_Z_FORWARD, Scale(1.0), Scale(100.0))
    np.testing.assert_allclose(cm.susp_force_app_point.y[0, :2], [[20.0, 30.0, 10.0], [0.0, -10.0, 0.0]])
    np.testing.assert_allclose(cm.tire_force_app_point.y[0, 0], [0.0, -20.0, 0.0])
    np.testing.assert_array_equal(cm.wheel_camber_angle.y, comp.wheel_camber_angle.y)
    np.testing.assert_array_equal(cm.susp_force_app_point.x, comp.susp_force_app_point.x)
    back = cm.transform_and_scale(Y_UP_Z_FORWARD, DEFAULT_FRAME, Scale(100.0), Scale(1.0))
    for f in ("susp_force_app_point", "tire_force_app_point", "wheel_camber_angle", "wheel_toe_angle"):
        np.testing.assert_allclose(getattr(back, f).y, getattr(comp, f).y, atol=1e-15, err_msg=f)
    fp = SuspensionForceParams([3e4], [3e3], [400.0])
    fcm = fp.transform_and_scale(DEFAULT_FRAME, SAE_J670, Scale(1.0), Scale(100.0))
    np.testing.assert_array_equal(fcm.stiffness, fp.stiffness)  # mass/time^2: no length
    bar = AntiRollBarParams(0, 1, 5e3)
    assert bar.transform_and_scale(DEFAULT_FRAME, SAE_J670, Scale(1.0), Scale(100.0)) == bar


def test_static_sag_is_scale_invariant_in_centimetres() -> None:
    """The same quarter car in cm: jounce x100, force x100 (mass*length/time^2)."""
    mass, k = 450.0, 26000.0
    wheel, susp = make_wheels(1), make_suspension([(0, 0, 0)])
    fp = SuspensionForceParams([k], [0.0], [mass])
    s1, s100 = Scale(1.0), Scale(100.0)
    wheel_cm = wheel.transform_and_scale(DEFAULT_FRAME, DEFAULT_FRAME, s1, s100)
    susp_cm = susp.transform_and_scale(DEFAULT_FRAME, DEFAULT_FRAME, s1, s100)
    fp_cm = fp.transform_and_scale(DEFAULT_FRAME, DEFAULT_FRAME, s1, s100)
    h = ground_height_for_jounce(0.1)
    results = []
    for w, s, f, scale in ((wheel, susp, fp, 1.0), (wheel_cm, susp_cm, fp_cm, 100.0)):
        st = suspension_state_update(
            w,
            s,
            SWEEP,
            f.stiffness,
            f.damping,
            [0.0],
            flat_plane(1, h * scale),
            [True],
            ORIGIN,
            IDENTITY,
            0.01,
            DEFAULT_FRAME,
            np.array([0, 0, -G * scale]),
            SuspensionState.default(1),
        )
        force = suspension_force_update(
            s,
            f,
            [[0, 0, 1.0]],
            st,
            SuspensionComplianceState.default(1),
            IDENTITY,
            ORIGIN,
            ORIGIN,
            np.array([0, 0, -G * scale]),
            mass,
        )
        results.append((st.jounce[0], force.normal_force[0]))
    np.testing.assert_allclose(results[1][0], 100.0 * results[0][0], rtol=1e-12)
    np.testing.assert_allclose(results[1][1], 100.0 * results[0][1], rtol=1e-12)


def test_states_default_copy_assign() -> None:
    st = SuspensionState.default(3)
    assert np.all(st.jounce == UNSPECIFIED_JOUNCE) and st.nb_wheels == 3
    other = SuspensionState(np.ones(3), np.full(3, 2.0), np.zeros(3))
    arr = st.jounce
    st.assign(other)
    assert st.jounce is arr and np.all(arr == 1.0)
    c = st.copy()
    c.jounce[0] = 5.0
    assert st.jounce[0] == 1.0
    st.set_to_default()
    assert np.all(st.jounce == UNSPECIFIED_JOUNCE) and np.all(st.jounce_speed == 0.0)
    assert set(SuspensionComplianceState.default(2).as_dict()) == {
        "toe",
        "camber",
        "tire_force_app_point",
        "susp_force_app_point",
    }
