"""Rigid body (Vehicle2 ``rigidBody/``): params, state, integration and the vehicle's velocity constraints."""

from simcore.rigid_body.constraints import (
    SuspensionLimitConstraintParams,
    SuspensionLimitDirection,
    VehicleConstraintState,
    solve_vehicle_constraints,
)
from simcore.rigid_body.functions import (
    integrate_pose,
    integrate_velocities,
    rigid_body_update,
    sum_forces_and_torques,
    total_load,
    world_inverse_inertia,
)
from simcore.rigid_body.params import RigidBodyParams
from simcore.rigid_body.states import RigidBodyState

__all__ = [
    "RigidBodyParams",
    "RigidBodyState",
    "SuspensionLimitConstraintParams",
    "SuspensionLimitDirection",
    "VehicleConstraintState",
    "integrate_pose",
    "integrate_velocities",
    "rigid_body_update",
    "solve_vehicle_constraints",
    "sum_forces_and_torques",
    "total_load",
    "world_inverse_inertia",
]
