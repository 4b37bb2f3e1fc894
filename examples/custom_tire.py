"""Replace Vehicle2's tire model with your own, without touching simcore (cf. PhysX's
``snippetvehiclecustomtire``).

The custom component keeps Vehicle2's tire kinematics — contact directions, contact speeds,
slips, load, friction and the sticky-tire logic — by calling simcore's tire functions, and swaps
only the force law: a *linear tire with a friction circle*

    F_lng =  C_lng * load * slip_lng
    F_lat = -C_lat * load * slip_lat               (slip_lat: slip angle, radians)
    (F_lng, F_lat) scaled down onto the circle |F| <= friction * load

with the cornering coefficients given per unit load (dimensionless per unit slip / per radian).
The component is dropped into a vehicle's sequence by name::

    vehicle.sequence.replace("tire", LinearTireComponent(vehicle))

Run ``python3 examples/custom_tire.py`` to drive the reference car with it.
"""

from __future__ import annotations

import numpy as np

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.frame import DEFAULT_FRAME
from simcore.maths import cross, pose_transform_point, quat_rotate
from simcore.presets import default_vehicle
from simcore.tire.functions import (
    tire_camber_angles_update,
    tire_dirs_update,
    tire_grip_update,
    tire_slip_speeds_update,
    tire_slips_accounting_for_sticky_states,
    tire_slips_update,
    tire_sticky_state_update,
)
from simcore.tire.states import TireForce
from simcore.vehicle import Vehicle


def linear_friction_circle_forces(
    lng_slip: np.ndarray, lat_slip: np.ndarray, load: np.ndarray, friction: np.ndarray,
    c_lng: float, c_lat: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Longitudinal and lateral force magnitudes (n,) of the linear tire, capped by the friction circle."""
    f_lng = c_lng * load * lng_slip
    f_lat = -c_lat * load * lat_slip
    limit = friction * load
    magnitude = np.hypot(f_lng, f_lat)
    scale = np.where(magnitude > limit, limit / np.where(magnitude > 0.0, magnitude, 1.0), 1.0)
    return f_lng * scale, f_lat * scale


class LinearTireComponent(Component):
    """Vehicle2 tire kinematics + a linear friction-circle force law.

    Reads and writes the same states as :class:`simcore.tire.components.TireComponent`, so every
    other component (wheel spin, rigid body, sticky constraints) works with it unchanged.
    """

    def __init__(self, vehicle: Vehicle, c_lng: float = 12.0, c_lat: float = 10.0) -> None:
        self.vehicle = vehicle
        self.c_lng = c_lng
        self.c_lat = c_lat

    def update(self, dt: float, context: SimulationContext) -> bool:
        p, s = self.vehicle.params, self.vehicle.states
        body, road, comp = s.rigid_body, s.road_geometry, s.suspension_compliance
        steer = s.steer_command_response.response
        normal = road.plane[:, :3]
        on_ground = s.suspension.separation <= 0.0
        omega = s.wheel_rigid_body_1d.rotation_speed

        frame, act = context.frame, s.wheel_actuation
        dirs = tire_dirs_update(frame, p.suspension, steer, normal, on_ground, comp, body.quat)
        speeds = tire_slip_speeds_update(frame, p.wheel, p.suspension, steer, s.suspension.jounce, dirs,
                                         body.pos, body.quat, body.linear_velocity, body.angular_velocity,
                                         road.velocity)
        slips = tire_slips_update(p.wheel, context.tire_slip_params, act, speeds, omega)
        camber = tire_camber_angles_update(frame, p.suspension, steer, normal, on_ground, comp, body.quat)
        load = s.suspension_force.normal_force
        grip = tire_grip_update(p.tire_force, road.friction, on_ground, load, slips)
        sticky = tire_sticky_state_update(p.wheel, context.tire_sticky_params, act, grip, speeds, omega, dt,
                                          s.tire_sticky)
        slips = tire_slips_accounting_for_sticky_states(sticky, slips)

        # --- the custom part: our own force law ------------------------------------------------
        f_lng, f_lat = linear_friction_circle_forces(slips.lng_slip, slips.lat_slip, grip.load, grip.friction,
                                                     self.c_lng, self.c_lat)
        forces = dirs.directions * np.stack((f_lng, f_lat), axis=1)[:, :, None]
        arm = quat_rotate(body.quat, pose_transform_point(p.suspension.suspension_attachment_pos,
                                                          p.suspension.suspension_attachment_quat,
                                                          comp.tire_force_app_point))
        torques = cross(np.repeat(arm, 2, axis=0), forces.reshape(-1, 3)).reshape(forces.shape)
        force = TireForce(forces=forces, torques=torques, aligning_moment=np.zeros_like(f_lng),
                          wheel_torque=-f_lng * p.wheel.radius)

        s.tire_direction.assign(dirs)
        s.tire_speed.assign(speeds)
        s.tire_slip.assign(slips)
        s.tire_camber.assign(camber)
        s.tire_grip.assign(grip)
        s.tire_sticky.assign(sticky)
        s.tire_force.assign(force)
        return True


def main(duration: float = 4.0, dt: float = 1.0 / 60.0) -> Vehicle:
    """Drive the reference car with the linear tire: accelerate from 10 m/s and turn left."""
    vehicle = Vehicle(default_vehicle(DEFAULT_FRAME))
    vehicle.sequence.replace("tire", LinearTireComponent(vehicle))
    vehicle.place_on_road(clearance=-0.16, speed=10.0)
    vehicle.commands.set(throttle=0.6, steer=0.15)
    vehicle.run(duration, dt)
    return vehicle


if __name__ == "__main__":
    v = main()
    print(v.sequence.describe())
    print(f"t = {v.time:.2f} s, position {np.round(v.pos, 2).tolist()}, "
          f"forward speed {v.forward_speed:.2f} m/s, yaw rate {v.yaw_rate:.3f} rad/s")
