"""Wheel component (``PxVehicleWheelComponent``): wiring only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.suspension.components import steer_angles
from simcore.wheel.functions import wheel_local_pose_update, wheel_rotation_angle_update

if TYPE_CHECKING:
    from simcore.vehicle import Vehicle


class WheelComponent(Component):
    """Wheel rotation angle (with low-speed blending) and wheel local pose.

    Reads ``params.wheel``, ``params.suspension``; ``states.steer_command_response``,
    ``states.wheel_actuation``, ``states.suspension`` (jounce), ``states.suspension_compliance``
    (camber, toe), ``states.tire_speed`` (longitudinal speed), ``states.wheel_rigid_body_1d``
    (rotation speed); ``context.frame``, ``context.threshold_forward_speed_for_wheel_angle_integration``.
    Writes (in place) ``states.wheel_rigid_body_1d`` (corrected rotation speed, rotation angle) and
    ``states.wheel_local_pose``. The rotation speed itself is integrated by the drivetrain.
    """

    def __init__(self, vehicle: Vehicle) -> None:
        self.vehicle = vehicle

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        n = p.suspension.nb_wheels
        spin = wheel_rotation_angle_update(
            p.wheel,
            s.wheel_actuation,
            s.suspension.jounce,
            s.tire_speed.lng_speed,
            context.threshold_forward_speed_for_wheel_angle_integration,
            dt,
            s.wheel_rigid_body_1d,
        )
        s.wheel_rigid_body_1d.assign(spin)
        pose = wheel_local_pose_update(
            context.frame,
            p.suspension,
            s.suspension.jounce,
            s.suspension_compliance.camber,
            s.suspension_compliance.toe,
            steer_angles(self.vehicle, n),
            spin.rotation_angle,
        )
        s.wheel_local_pose.assign(pose)
        return True
