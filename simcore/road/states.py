"""Road geometry state (``PxVehicleRoadGeometryState``): the ground each wheel stands on this step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.wheel._soa import WheelStateMixin


@dataclass(eq=False)
class RoadGeometryState(WheelStateMixin):
    """The local ground plane under each wheel, found by the road geometry query.

    - ``plane`` (n, 4) ``[nx, ny, nz, d]``: unit normal (world frame) and offset (``length``) with
      ``n . x + d = 0`` on the ground and ``> 0`` above it (``PxPlane``).
    - ``friction`` (n,) dimensionless, >= 0: road friction multiplied into the tire's grip.
    - ``velocity`` (n, 3) ``length / time``: velocity of the road at the contact (PVD ``hitVelocity``);
      zero for the static roads of :mod:`simcore.road.geometry`.
    - ``hit_state`` (n,) bool: False when no ground was found within the suspension's reach (the
      wheel is in the air and ``plane``/``friction`` are zero).

    Default (``setToDefault``): everything zero, no hit.
    """

    plane: np.ndarray
    friction: np.ndarray
    velocity: np.ndarray
    hit_state: np.ndarray

    @classmethod
    def default(cls, n: int) -> RoadGeometryState:
        """``n`` wheels with no ground found."""
        return cls(np.zeros((n, 4)), np.zeros(n), np.zeros((n, 3)), np.zeros(n, dtype=bool))

    zeros = default

    def set_to_default(self) -> None:
        """No ground under any wheel."""
        self.plane[:] = 0.0
        self.friction[:] = 0.0
        self.velocity[:] = 0.0
        self.hit_state[:] = False

    @property
    def normal(self) -> np.ndarray:
        """View of the plane normals, (n, 3)."""
        return self.plane[:, :3]

    @property
    def hit_velocity(self) -> np.ndarray:
        """Alias of :attr:`velocity` under its PVD name ``hitVelocity``."""
        return self.velocity
