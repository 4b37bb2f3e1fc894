"""Rigid body components: step bookkeeping, velocity constraints and the body integration."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.maths import quat_rotate
from simcore.rigid_body.constraints import (
    force_application_arms,
    solve_vehicle_constraints,
    suspension_limit_constraint_update,
)
from simcore.rigid_body.functions import integrate_loads, integrate_pose
from simcore.tire.functions import tire_sticky_constraints

if TYPE_CHECKING:
    from simcore.vehicle import Vehicle


class RigidBodyBeginComponent(Component):
    """Keeps the body velocities at the start of the step as ``previous_*_velocity``.

    Stands where Vehicle2's ``PxVehiclePhysXActorBeginComponent`` reads the actor state (and sets
    the previous velocities). Writes ``states.rigid_body.previous_linear/angular_velocity``.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        rb = self.vehicle.states.rigid_body
        rb.previous_linear_velocity[:] = rb.linear_velocity
        rb.previous_angular_velocity[:] = rb.angular_velocity
        return True


class VehicleConstraintComponent(Component):
    """Builds the sticky-tire and suspension-limit rows (``PxVehiclePhysXConstraintComponent``).

    Reads ``params.suspension``, ``params.suspension_limit_constraint``, ``states.suspension``,
    ``states.suspension_compliance``, ``states.road_geometry``, ``states.tire_direction``,
    ``states.tire_sticky``, ``states.rigid_body`` and the context's sticky params; writes
    ``states.constraints``. The rows are enforced by :class:`RigidBodyComponent`.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        out = s.constraints
        separation = s.suspension.separation
        if not s.tire_sticky.active_status.any() and not (separation < 0.0).any():
            if out.tire_active_status.any() or out.susp_active_status.any():
                out.set_to_default()
            return True
        quat = s.rigid_body.quat
        sticky = tire_sticky_constraints(p.suspension, s.suspension_compliance, s.tire_direction,
                                         s.tire_sticky, context.tire_sticky_params, quat)
        out.tire_active_status[:] = sticky.active
        out.tire_linears[:] = sticky.linear
        out.tire_angulars[:] = sticky.angular
        out.tire_damping[:] = sticky.damping
        # Every wheel's row, active or not: PhysX resets the rows before setting the active ones.
        susp = p.suspension
        arm = force_application_arms(susp.suspension_attachment_pos, susp.suspension_attachment_quat,
                                     s.suspension_compliance.tire_force_app_point, quat)
        suspension_limit_constraint_update(p.suspension_limit_constraint, separation,
                                           s.road_geometry.plane[:, :3],
                                           quat_rotate(quat, susp.suspension_travel_dir), arm, out)
        return True


class RigidBodyComponent(Component):
    """Integrates the body (``PxVehicleRigidBodyComponent`` + the PhysX solver's vehicle rows).

    Sums ``states.suspension_force``, ``states.tire_force``, ``states.anti_roll_force`` (when the
    vehicle has anti-roll bars), gravity and the external loads; integrates the velocities,
    enforces ``states.constraints``, integrates the pose and resets the external loads.
    Writes ``states.rigid_body``. With ``solve_constraints=False`` (the PhysX actor layer, where the
    scene solves the rows once per step after the vehicle update) the rows are left alone.
    """

    def __init__(self, vehicle: Vehicle, solve_constraints: bool = True) -> None:
        self.vehicle = vehicle
        self.solve_constraints = solve_constraints

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        rb = s.rigid_body
        anti_roll = s.anti_roll_force.torque if p.anti_roll_bars else None
        force = s.suspension_force
        inv_inertia = integrate_loads(p.rigid_body, force.force, force.torque, s.tire_force.forces,
                                      s.tire_force.torques, anti_roll, dt, context.gravity, rb)
        if self.solve_constraints:
            solve_vehicle_constraints(p.rigid_body.mass, inv_inertia, s.constraints, dt,
                                      rb.linear_velocity, rb.angular_velocity)
        integrate_pose(dt, rb)
        rb.external_force[:] = 0.0
        rb.external_torque[:] = 0.0
        return True


__all__ = ["RigidBodyBeginComponent", "RigidBodyComponent", "VehicleConstraintComponent"]
