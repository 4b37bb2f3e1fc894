"""Tire component (``PxVehicleTireComponent``): wiring only.

By default the component hands the per-wheel arithmetic to one fused numba kernel
(:mod:`simcore.tire._fast`, ~40x faster on a 4-wheel car); ``use_fast_path = False`` runs the plain
functions of :mod:`simcore.tire.functions` instead. Both produce the same numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.suspension.components import steer_angles
from simcore.tire._fast import FusedTire, tire_update_fused
from simcore.tire.functions import (
    compute_tire_wheel_axes,
    tire_camber_from_axes,
    tire_dirs_from_axes,
    tire_forces_update,
    tire_grip_update,
    tire_slip_speeds_update,
    tire_slips_accounting_for_sticky_states,
    tire_slips_update,
    tire_sticky_state_update,
)
from simcore.wheel.helpers import is_wheel_on_ground

if TYPE_CHECKING:
    from simcore.vehicle import Vehicle


class TireComponent(Component):
    """Tire directions, contact speeds, slips, camber, grip, sticky state and forces, in Vehicle2's order.

    Reads ``params.wheel``, ``params.suspension``, ``params.tire_force``;
    ``states.steer_command_response``, ``states.rigid_body``, ``states.wheel_actuation``,
    ``states.road_geometry``, ``states.suspension``, ``states.suspension_compliance``,
    ``states.suspension_force`` (normal force = tire load), ``states.wheel_rigid_body_1d``
    (rotation speed); ``context.frame``, ``context.tire_slip_params``, ``context.tire_sticky_params``.
    Writes (in place) ``states.tire_direction``, ``states.tire_speed``, ``states.tire_slip`` (after
    zeroing sticky axes), ``states.tire_camber``, ``states.tire_grip``, ``states.tire_sticky``,
    ``states.tire_force``.
    """

    #: Run the fused compiled kernel (:mod:`simcore.tire._fast`); False runs the plain functions one
    #: after the other. Both give the same numbers; the kernel avoids numpy's per-call overhead.
    use_fast_path: bool = True

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle
        self._packed: FusedTire | None = None

    def update(self, dt: float, context: SimulationContext) -> bool:
        if self.use_fast_path:
            return self._update_fused(dt, context)
        return self._update_plain(dt, context)

    def _packed_params(self, context: SimulationContext) -> FusedTire:
        """The kernel's packed params, rebuilt only when a params object (immutable) is replaced."""
        p = self.vehicle.params
        key = (context.frame, p.wheel, p.suspension, p.tire_force, context.tire_slip_params,
               context.tire_sticky_params)
        packed = self._packed
        if packed is None or any(a is not b for a, b in zip(packed.key, key, strict=True)):
            packed = FusedTire.build(key, *key)
            self._packed = packed
        return packed

    def _update_fused(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        packed = self._packed_params(context)
        body = s.rigid_body
        road = s.road_geometry
        comp = s.suspension_compliance
        act = s.wheel_actuation
        grip, sticky, force = s.tire_grip, s.tire_sticky, s.tire_force
        tire_update_fused(
            packed,
            dt,
            steer_angles(self.vehicle, p.suspension.nb_wheels),
            road.plane,
            s.suspension.separation,
            s.suspension.jounce,
            comp.toe,
            comp.camber,
            comp.tire_force_app_point,
            s.wheel_rigid_body_1d.rotation_speed,
            body.pos,
            body.quat,
            body.linear_velocity,
            body.angular_velocity,
            road.velocity,
            road.friction,
            s.suspension_force.normal_force,
            act.is_brake_applied,
            act.is_drive_applied,
            (s.tire_direction.directions, s.tire_speed.speed_states, s.tire_slip.slips,
             s.tire_camber.camber_angle, grip.load, grip.friction, sticky.low_speed_time,
             sticky.active_status, force.forces, force.torques, force.aligning_moment, force.wheel_torque),
        )
        return True

    def _update_plain(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        n = p.suspension.nb_wheels
        frame = context.frame
        body = s.rigid_body
        road = s.road_geometry
        steer = steer_angles(self.vehicle, n)
        normal = road.plane[:, :3]
        on_ground = is_wheel_on_ground(s.suspension.separation)
        comp = s.suspension_compliance
        omega = s.wheel_rigid_body_1d.rotation_speed

        # tire_dirs_update and tire_camber_angles_update share the wheel axes: compute them once.
        lat_axis, lng_axis = compute_tire_wheel_axes(frame, p.suspension, steer, comp, body.quat)
        dirs = tire_dirs_from_axes(lat_axis, normal, on_ground)
        speeds = tire_slip_speeds_update(
            frame,
            p.wheel,
            p.suspension,
            steer,
            s.suspension.jounce,
            dirs,
            body.pos,
            body.quat,
            body.linear_velocity,
            body.angular_velocity,
            road.velocity,
        )
        slips = tire_slips_update(p.wheel, context.tire_slip_params, s.wheel_actuation, speeds, omega)
        camber = tire_camber_from_axes(lat_axis, lng_axis, normal, on_ground)
        grip = tire_grip_update(
            p.tire_force, road.friction, on_ground, s.suspension_force.normal_force, slips
        )
        sticky = tire_sticky_state_update(
            p.wheel, context.tire_sticky_params, s.wheel_actuation, grip, speeds, omega, dt, s.tire_sticky
        )
        slips = tire_slips_accounting_for_sticky_states(sticky, slips)
        forces = tire_forces_update(
            p.wheel, p.suspension, p.tire_force, comp, grip, dirs, slips, camber, body.quat
        )

        s.tire_direction.assign(dirs)
        s.tire_speed.assign(speeds)
        s.tire_slip.assign(slips)
        s.tire_camber.assign(camber)
        s.tire_grip.assign(grip)
        s.tire_sticky.assign(sticky)
        s.tire_force.assign(forces)
        return True
