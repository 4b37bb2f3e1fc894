"""States of the linear bicycle model: the body (β, r, heading, position) and the two axles."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class BicycleBodyState:
    """The body's motion in the ground plane (x forward, y left, z up; yaw counter-clockwise).

    - ``sideslip``: β, angle from the body's forward axis to the velocity of the centre of mass,
      positive to the left, rad.
    - ``yaw_rate``: r = dψ/dt, positive counter-clockwise seen from above, rad / time.
    - ``yaw``: heading ψ of the forward axis from the ground x axis, rad.
    - ``pos``: (2,) ground position (x, y) of the centre of mass, ``length``.
    - ``steer``: front-wheel steer angle δ applied during the last step, positive to the left, rad.
    - ``lateral_acceleration``: a_y = V (dβ/dt + r), the centripetal acceleration along the body's
      left axis, ``length / time^2``.
    - ``time``: simulated time since the start, ``time``.
    """

    sideslip: float = 0.0
    yaw_rate: float = 0.0
    yaw: float = 0.0
    pos: np.ndarray = field(default_factory=lambda: np.zeros(2))
    steer: float = 0.0
    lateral_acceleration: float = 0.0
    time: float = 0.0

    def set_to_default(self) -> None:
        """Straight-line motion at the origin, heading along x, at time 0."""
        self.sideslip = self.yaw_rate = self.yaw = self.steer = self.lateral_acceleration = 0.0
        self.time = 0.0
        self.pos[:] = 0.0

    @property
    def state_vector(self) -> np.ndarray:
        """(β, r, ψ): the linear states the exact discretisation advances."""
        return np.array([self.sideslip, self.yaw_rate, self.yaw])


@dataclass
class BicycleAxleState:
    """Per-axle values, struct of arrays with a leading axle axis (2,): 0 front, 1 rear.

    - ``slip_angle``: α, angle from the axle's velocity to its wheel plane, positive when the tire
      pushes the car to the left (α_f = δ − β − lf r / V, α_r = −β + lr r / V), rad.
    - ``lateral_force``: F_y = C α, along the wheel's left axis (body left axis for small δ),
      ``mass * length / time^2``.
    - ``steer``: steer angle of the axle (δ front, 0 rear), rad.
    """

    slip_angle: np.ndarray = field(default_factory=lambda: np.zeros(2))
    lateral_force: np.ndarray = field(default_factory=lambda: np.zeros(2))
    steer: np.ndarray = field(default_factory=lambda: np.zeros(2))

    def set_to_default(self) -> None:
        """No slip, no force, wheels straight."""
        self.slip_angle[:] = 0.0
        self.lateral_force[:] = 0.0
        self.steer[:] = 0.0


@dataclass
class BicycleStates:
    """Every state of a :class:`~simcore.bicycle.simulation.BicycleModel`."""

    body: BicycleBodyState = field(default_factory=BicycleBodyState)
    axles: BicycleAxleState = field(default_factory=BicycleAxleState)

    def set_to_default(self) -> None:
        """Reset the body and the axles."""
        self.body.set_to_default()
        self.axles.set_to_default()
