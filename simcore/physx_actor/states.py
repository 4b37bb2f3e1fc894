"""State of the chassis as a PhysX rigid actor (what ``PxRigidDynamic`` holds between steps)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np


@dataclass(eq=False)
class PhysXActorState:
    """The chassis actor between steps, as PhysX keeps it.

    - ``pos`` (3,), ``quat`` (4,) [x, y, z, w]: ``globalPose`` of the actor *origin* (the centre of
      mass is ``globalPose * cMassLocalPose``).
    - ``linear_velocity`` (3,) of the centre of mass, ``angular_velocity`` (3,), world frame.
    - ``wake_counter`` (time): counts down while the actor is nearly still; at 0 it sleeps.
    - ``is_sleeping``: a sleeping actor is not moved by the scene and the vehicle update is skipped
      (``PxVehiclePhysxActorSleepCheck``) until a command wakes it.
    - ``previous_steer``: the steer command of the last update (``PxVehiclePhysXSteerState``); NaN
      until the first update (``PX_VEHICLE_UNSPECIFIED_STEER_STATE``).
    - ``sleep_linear_sum``, ``sleep_angular_sum`` (3,): PhysX's sleep filter, the velocities (angular
      in the body frame) summed over the steps since the wake counter fell below half its reset
      value; their energy decides whether the actor is still moving.
    """

    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))
    linear_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    wake_counter: float = 0.4
    is_sleeping: bool = False
    previous_steer: float = float("nan")
    sleep_linear_sum: np.ndarray = field(default_factory=lambda: np.zeros(3))
    sleep_angular_sum: np.ndarray = field(default_factory=lambda: np.zeros(3))

    @classmethod
    def default(cls, n: int | None = None) -> PhysXActorState:
        """At the origin, at rest, awake (``n`` ignored: one actor per vehicle)."""
        return cls()

    def set_to_default(self) -> None:
        self.pos[:] = 0.0
        self.quat[:] = (0.0, 0.0, 0.0, 1.0)
        self.linear_velocity[:] = 0.0
        self.angular_velocity[:] = 0.0
        self.wake_counter = 0.4
        self.is_sleeping = False
        self.previous_steer = float("nan")
        self.sleep_linear_sum[:] = 0.0
        self.sleep_angular_sum[:] = 0.0

    def as_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def copy(self) -> PhysXActorState:
        return PhysXActorState(self.pos.copy(), self.quat.copy(), self.linear_velocity.copy(),
                               self.angular_velocity.copy(), float(self.wake_counter), bool(self.is_sleeping),
                               float(self.previous_steer), self.sleep_linear_sum.copy(),
                               self.sleep_angular_sum.copy())
