"""The suspension, tire and wheel components wire ``vehicle.params``/``vehicle.states`` to the
functions and write the states in place (a minimal stand-in vehicle, no drivetrain)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from simcore.commands.states import CommandResponseState
from simcore.context import SimulationContext
from simcore.rigid_body.states import RigidBodyState
from simcore.road.states import RoadGeometryState
from simcore.suspension.components import SuspensionComponent
from simcore.suspension.functions import suspension_force_update
from simcore.suspension.params import (
    AntiRollBarParams,
    JounceCalculationType,
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.suspension.states import (
    AntiRollForce,
    SuspensionComplianceState,
    SuspensionForce,
    SuspensionState,
)
from simcore.tire.components import TireComponent
from simcore.tire.params import TireForceParams
from simcore.tire.states import (
    TireCamberState,
    TireDirectionState,
    TireForce,
    TireGripState,
    TireSlipState,
    TireSpeedState,
    TireStickyState,
)
from simcore.wheel.components import WheelComponent
from simcore.wheel.params import WheelParams
from simcore.wheel.states import WheelActuationState, WheelLocalPoseState, WheelRigidBody1dState

G = 9.81
MASS = 1600.0
ATTACH = [(1.3, 0.8, 0.0), (1.3, -0.8, 0.0), (-1.3, 0.8, 0.0), (-1.3, -0.8, 0.0)]


def make_vehicle(steer: float = 0.0) -> SimpleNamespace:
    n = 4
    params = SimpleNamespace(
        rigid_body=SimpleNamespace(mass=MASS),
        suspension_state_calculation=SuspensionStateCalculationParams(JounceCalculationType.SWEEP, False),
        wheel=WheelParams.from_wheels(
            [dict(radius=0.35, half_width=0.15, mass=20.0, moi=1.2, damping_rate=0.25)] * n
        ),
        suspension=SuspensionParams.from_wheels(
            [
                dict(
                    suspension_attachment_pos=a, suspension_travel_dir=(0, 0, -1), suspension_travel_dist=0.3
                )
                for a in ATTACH
            ]
        ),
        suspension_compliance=SuspensionComplianceParams.from_wheels(
            [dict(susp_force_app_point=[(0.0, (0, 0, -0.1))], tire_force_app_point=[(0.0, (0, 0, -0.2))])] * n
        ),
        suspension_force=SuspensionForceParams.from_wheels(
            [dict(stiffness=3e4, damping=3e3, sprung_mass=MASS / 4)] * n
        ),
        anti_roll_bars=(AntiRollBarParams(0, 1, 1e4),),
        tire_force=TireForceParams.from_wheels(
            [
                dict(
                    lat_stiff_x=2.0,
                    lat_stiff_y=6e4,
                    long_stiff=5e4,
                    camber_stiff=0.0,
                    friction_vs_slip=[[0.0, 1.0], [0.1, 1.0], [1.0, 1.0]],
                    rest_load=MASS / 4 * G,
                    load_filter=[[0.0, 0.0], [3.0, 3.0]],
                )
            ]
            * n
        ),
    )
    road = RoadGeometryState.default(n)
    road.plane[:] = [0.0, 0.0, 1.0, 0.0]
    road.friction[:] = 1.0
    road.hit_state[:] = True
    steer_state = CommandResponseState.default(n)
    steer_state.response[:2] = steer
    states = SimpleNamespace(
        rigid_body=RigidBodyState(),
        road_geometry=road,
        steer_command_response=steer_state,
        wheel_actuation=WheelActuationState.default(n),
        suspension=SuspensionState.default(n),
        suspension_compliance=SuspensionComplianceState.default(n),
        suspension_force=SuspensionForce.default(n),
        anti_roll_force=AntiRollForce.default(),
        tire_direction=TireDirectionState.default(n),
        tire_speed=TireSpeedState.default(n),
        tire_slip=TireSlipState.default(n),
        tire_grip=TireGripState.default(n),
        tire_camber=TireCamberState.default(n),
        tire_sticky=TireStickyState.default(n),
        tire_force=TireForce.default(n),
        wheel_rigid_body_1d=WheelRigidBody1dState.default(n),
        wheel_local_pose=WheelLocalPoseState.default(n),
    )
    return SimpleNamespace(params=params, states=states)


def test_components_write_states_in_place() -> None:
    v = make_vehicle(steer=0.2)
    sag = (MASS / 4) * G / 3e4
    v.states.rigid_body.pos[:] = [0.0, 0.0, 0.3 - sag + 0.35]  # every wheel at the static sag
    v.states.rigid_body.linear_velocity[:] = [5.0, 0.0, 0.0]
    v.states.wheel_rigid_body_1d.rotation_speed[:] = 5.0 / 0.35 * 1.02  # 2% wheel slip
    ctx = SimulationContext()
    ids = {k: id(a) for k, a in v.states.suspension.as_dict().items()}

    assert SuspensionComponent(v).update(1 / 60, ctx)
    s = v.states
    assert {k: id(a) for k, a in s.suspension.as_dict().items()} == ids  # same arrays, new values
    np.testing.assert_allclose(s.suspension.jounce, sag, rtol=1e-12)
    np.testing.assert_allclose(s.suspension_compliance.susp_force_app_point, np.tile([0, 0, -0.1], (4, 1)))
    np.testing.assert_allclose(s.suspension_force.normal_force, MASS / 4 * G, rtol=1e-9)
    np.testing.assert_array_equal(s.anti_roll_force.torque, 0.0)  # equal jounces

    assert TireComponent(v).update(1 / 60, ctx)
    np.testing.assert_allclose(s.tire_speed.lng_speed[2:], 5.0)
    np.testing.assert_allclose(s.tire_speed.lng_speed[:2], 5.0 * np.cos(0.2), rtol=1e-12)
    np.testing.assert_allclose(s.tire_slip.lng_slip[2:], (5.0 * 1.02 - 5.0) / (5.0 + 4.0))
    np.testing.assert_allclose(s.tire_grip.load, MASS / 4 * G, rtol=1e-9)
    assert np.all(s.tire_force.lng_force[2:, 0] > 0.0)  # driven-faster wheels push forward
    assert np.all(s.tire_force.lat_force[:2, 1] > 0.0)  # steered left while moving straight: pulled left
    np.testing.assert_allclose(
        s.tire_force.wheel_torque,
        -np.einsum("ij,ij->i", s.tire_force.lng_force, s.tire_direction.lng_direction) * 0.35,
    )

    assert WheelComponent(v).update(1 / 60, ctx)
    w = s.wheel_rigid_body_1d
    np.testing.assert_allclose(w.rotation_angle, w.corrected_rotation_speed / 60)
    np.testing.assert_allclose(s.wheel_local_pose.pos[2], [-1.3, 0.8, -(0.3 - sag)])


def test_suspension_component_reads_external_loads_and_anti_roll() -> None:
    v = make_vehicle()
    v.states.rigid_body.pos[:] = [0.0, 0.0, 0.5]
    v.states.rigid_body.quat[:] = [np.sin(0.01), 0.0, 0.0, np.cos(0.01)]  # small roll: left side up
    v.states.rigid_body.external_force[:] = [0.0, 0.0, -1000.0]
    ctx = SimulationContext()
    SuspensionComponent(v).update(1 / 60, ctx)
    s = v.states
    j = s.suspension.jounce
    assert j[1] > j[0]  # the right wheel is more compressed
    expected = suspension_force_update(
        v.params.suspension,
        v.params.suspension_force,
        s.road_geometry.plane[:, :3],
        s.suspension,
        s.suspension_compliance,
        s.rigid_body.quat,
        s.rigid_body.external_force,
        s.rigid_body.external_torque,
        ctx.gravity,
        MASS,
    )
    np.testing.assert_allclose(s.suspension_force.force, expected.force)
    assert s.anti_roll_force.torque[0] < 0.0  # rolls the more compressed right side (-Y) up


def test_components_without_steering_state() -> None:
    v = make_vehicle()
    v.states.steer_command_response = None
    v.states.rigid_body.pos[:] = [0.0, 0.0, 0.55]
    ctx = SimulationContext()
    for comp in (SuspensionComponent(v), TireComponent(v), WheelComponent(v)):
        assert comp.update(1 / 60, ctx)
    np.testing.assert_allclose(
        v.states.tire_direction.lng_direction, np.tile([1.0, 0, 0], (4, 1)), atol=1e-15
    )
