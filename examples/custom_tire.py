"""Replace Vehicle2's tire model with your own, without touching simcore (cf. PhysX's
``snippetvehiclecustomtire``).

The custom component keeps Vehicle2's tire kinematics — contact directions, contact speeds,
slips, load, friction and the sticky-tire logic — by running simcore's compiled tire component,
and swaps only the force law: a *linear tire with a friction circle*

    F_lng =  C_lng * load * slip_lng
    F_lat = -C_lat * load * slip_lat               (slip_lat: slip angle, radians)
    (F_lng, F_lat) scaled down onto the circle |F| <= friction * load

with the cornering coefficients given per unit load (dimensionless per unit slip / per radian).

Components work on a whole batch: the arrays it reads and writes have a leading vehicle axis
(``(n_vehicles, n_wheels, …)``), so one component serves a fleet of 1,000 cars as well as a
single :class:`~simcore.vehicle.Vehicle` (a fleet of one, ``vehicle.fleet``). It is dropped
into a sequence by name::

    vehicle.sequence.replace("tire", LinearTireComponent(vehicle.fleet))
    fleet.sequence.replace("tire", LinearTireComponent(fleet))

Run ``python3 examples/custom_tire.py`` to drive the reference car, and a small fleet with
several cornering stiffnesses, with it.
"""

from __future__ import annotations

import numpy as np

from simcore.component import Component
from simcore.context import SimulationContext
from simcore.fleet import Fleet
from simcore.frame import DEFAULT_FRAME
from simcore.maths import quat_rotate
from simcore.presets import default_vehicle
from simcore.tire.batch import TireBatchComponent
from simcore.vehicle import Vehicle


def linear_friction_circle_forces(
    lng_slip: np.ndarray, lat_slip: np.ndarray, load: np.ndarray, friction: np.ndarray,
    c_lng: float | np.ndarray, c_lat: float | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Longitudinal and lateral force magnitudes of the linear tire, capped by the friction circle
    (any shape: one value per wheel, with or without a vehicle axis)."""
    f_lng = c_lng * load * lng_slip
    f_lat = -c_lat * load * lat_slip
    limit = friction * load
    magnitude = np.hypot(f_lng, f_lat)
    scale = np.where(magnitude > limit, limit / np.where(magnitude > 0.0, magnitude, 1.0), 1.0)
    return f_lng * scale, f_lat * scale


class LinearTireComponent(Component):
    """Vehicle2 tire kinematics + a linear friction-circle force law, over a whole batch.

    Writes the same states as simcore's tire component, so every other component (wheel spin,
    rigid body, sticky constraints) works with it unchanged. ``c_lng`` / ``c_lat`` may be one
    value for the batch or one per vehicle.
    """

    def __init__(self, fleet: Fleet, c_lng: float | np.ndarray = 12.0,
                 c_lat: float | np.ndarray = 10.0) -> None:
        self.fleet = fleet
        self.kinematics = TireBatchComponent(fleet)  # directions, speeds, slips, grip, sticky state
        self.c_lng = np.broadcast_to(np.asarray(c_lng, dtype=np.float64), (fleet.n_vehicles,))[:, None]
        self.c_lat = np.broadcast_to(np.asarray(c_lat, dtype=np.float64), (fleet.n_vehicles,))[:, None]
        self.repack()

    def repack(self) -> None:
        """Per-wheel geometry of every vehicle (its params may change between steps)."""
        self.kinematics.repack()
        params = self.fleet.params
        self._attachment_pos = np.stack([p.suspension.suspension_attachment_pos for p in params])
        self._attachment_quat = np.stack([p.suspension.suspension_attachment_quat for p in params])
        self._radius = np.stack([p.wheel.radius for p in params])

    def update(self, dt: float, context: SimulationContext) -> bool:
        self.kinematics.update(dt, context)  # Vehicle2's kinematics (and its own forces, replaced below)
        s = self.fleet.states
        slips, grip = s.tire_slip.slips, s.tire_grip
        f_lng, f_lat = linear_friction_circle_forces(slips[..., 0], slips[..., 1], grip.load, grip.friction,
                                                     self.c_lng, self.c_lat)
        # --- the custom part: our own forces along the tire directions ------------------------
        forces = s.tire_direction.directions * np.stack((f_lng, f_lat), axis=-1)[..., None]
        # the lever arm: the tire force application point, in the world frame, from the body
        app_point = s.suspension_compliance.tire_force_app_point
        local = self._attachment_pos + quat_rotate(self._attachment_quat, app_point)
        arm = quat_rotate(s.rigid_body.quat[:, None, :], local)
        s.tire_force.forces[...] = forces
        s.tire_force.torques[...] = np.cross(arm[:, :, None, :], forces)
        s.tire_force.aligning_moment[...] = 0.0
        s.tire_force.wheel_torque[...] = -f_lng * self._radius
        return True


def main(duration: float = 4.0, dt: float = 1.0 / 60.0) -> Vehicle:
    """Drive the reference car with the linear tire: accelerate from 10 m/s and turn left."""
    vehicle = Vehicle(default_vehicle(DEFAULT_FRAME))
    vehicle.sequence.replace("tire", LinearTireComponent(vehicle.fleet))
    vehicle.place_on_road(clearance=-0.16, speed=10.0)
    vehicle.commands.set(throttle=0.6, steer=0.15)
    vehicle.run(duration, dt)
    return vehicle


def fleet_demo(n: int = 5, duration: float = 4.0, dt: float = 1.0 / 60.0) -> Fleet:
    """``n`` cars with lateral coefficients from 5 to 15 through the same turn, side by side."""
    fleet = Fleet.from_preset("sedan", n, frame=DEFAULT_FRAME)
    fleet.sequence.replace("tire", LinearTireComponent(fleet, c_lat=np.linspace(5.0, 15.0, n)))
    fleet.place_on_road(spacing=6.0, clearance=-0.16, speed=10.0)
    fleet.commands.throttle = 0.6
    fleet.commands.steer = 0.15
    fleet.run(duration, dt)
    return fleet


if __name__ == "__main__":
    v = main()
    print(v.sequence.describe())
    print(f"t = {v.time:.2f} s, position {np.round(v.pos, 2).tolist()}, "
          f"forward speed {v.forward_speed:.2f} m/s, yaw rate {v.yaw_rate:.3f} rad/s")
    f = fleet_demo()
    yaw = [member.yaw_rate for member in f]
    print("fleet: lateral coefficient 5 … 15 -> yaw rate", np.round(yaw, 3).tolist())
