"""Suspension states (``PxVehicleSuspensionStates.h``), struct of arrays with a leading wheel axis.

``default(n)`` (alias ``zeros(n)``) allocates ``n`` wheels at Vehicle2's ``setToDefault`` values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.wheel._soa import WheelStateMixin

#: ``PX_VEHICLE_UNSPECIFIED_JOUNCE`` (``PX_MAX_F32``): "no jounce computed yet". The first update
#: after it reports zero jounce speed instead of differentiating against a meaningless value.
UNSPECIFIED_JOUNCE = float(np.finfo(np.float32).max)
#: ``PX_VEHICLE_UNSPECIFIED_SEPARATION`` (``PX_MAX_F32``).
UNSPECIFIED_SEPARATION = float(np.finfo(np.float32).max)
#: Separation written when the wheel does not reach the ground (``FLT_MIN``: tiny but positive, so
#: the wheel counts as in the air).
NO_INTERSECTION_SEPARATION = float(np.finfo(np.float32).tiny)


@dataclass(eq=False)
class SuspensionState(WheelStateMixin):
    """Compression of each suspension (``PxVehicleSuspensionState``).

    - ``jounce`` (n,) ``length`` in [0, travel_dist]: 0 at max droop (no spring force), travel_dist at
      max compression. :data:`UNSPECIFIED_JOUNCE` before the first update.
    - ``jounce_speed`` (n,) ``length / time``: rate of change of jounce (positive = compressing).
    - ``separation`` (n,) ``length``: 0 when the travel range can place the wheel on the ground;
      negative when the wheel penetrates the ground even at the travel limit (bump stop: the
      penetration along the ground normal); positive when the wheel is in the air.
    """

    jounce: np.ndarray
    jounce_speed: np.ndarray
    separation: np.ndarray

    @classmethod
    def default(
        cls, n: int, jounce: float = UNSPECIFIED_JOUNCE, separation: float = UNSPECIFIED_SEPARATION
    ) -> SuspensionState:
        """``n`` wheels with the given jounce/separation (Vehicle2 default: unspecified) and zero speed."""
        return cls(np.full(n, jounce), np.zeros(n), np.full(n, separation))

    zeros = default

    def set_to_default(
        self, jounce: float = UNSPECIFIED_JOUNCE, separation: float = UNSPECIFIED_SEPARATION
    ) -> None:
        """Reset in place (``setToDefault``)."""
        self.jounce[:] = jounce
        self.jounce_speed[:] = 0.0
        self.separation[:] = separation


@dataclass(eq=False)
class SuspensionComplianceState(WheelStateMixin):
    """Toe, camber and force application points from compliance (``PxVehicleSuspensionComplianceState``).

    All in the suspension frame. ``toe`` (n,) and ``camber`` (n,) radians; ``tire_force_app_point``
    (n, 3) and ``susp_force_app_point`` (n, 3) ``length``, offsets from the suspension attachment.
    Default: all zero.
    """

    toe: np.ndarray
    camber: np.ndarray
    tire_force_app_point: np.ndarray
    susp_force_app_point: np.ndarray

    @classmethod
    def default(cls, n: int) -> SuspensionComplianceState:
        """``n`` wheels with zero compliance."""
        return cls(np.zeros(n), np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3)))

    zeros = default

    def set_to_default(self) -> None:
        """Zero every field."""
        for a in self.as_dict().values():
            a[...] = 0.0


@dataclass(eq=False)
class SuspensionForce(WheelStateMixin):
    """Force and torque of each suspension on the rigid body (``PxVehicleSuspensionForce``), world frame.

    - ``force`` (n, 3) ``mass * length / time^2``, along the ground normal.
    - ``torque`` (n, 3) ``mass * length^2 / time^2``, about the rigid body's centre of mass.
    - ``normal_force`` (n,) ``mass * length / time^2``: the force's component along the ground normal;
      the tire model uses it as the tire load.
    """

    force: np.ndarray
    torque: np.ndarray
    normal_force: np.ndarray

    @classmethod
    def default(cls, n: int) -> SuspensionForce:
        """``n`` wheels with zero force."""
        return cls(np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(n))

    zeros = default

    def set_to_default(self) -> None:
        """Zero every field."""
        for a in self.as_dict().values():
            a[...] = 0.0


@dataclass(eq=False)
class AntiRollForce:
    """Summed torque of all anti-roll bars on the rigid body (``PxVehicleAntiRollTorque``; PVD
    ``AntiRollForce.torque``). ``torque`` (3,) ``mass * length^2 / time^2``, world frame. No wheel axis.
    """

    torque: np.ndarray

    @classmethod
    def default(cls, n: int | None = None) -> AntiRollForce:
        """Zero torque (``n`` is accepted for symmetry with per-wheel states and ignored)."""
        return cls(np.zeros(3))

    zeros = default

    def set_to_default(self) -> None:
        """Zero torque."""
        self.torque[:] = 0.0

    def copy(self) -> AntiRollForce:
        """Deep copy."""
        return AntiRollForce(self.torque.copy())

    def assign(self, other: AntiRollForce) -> AntiRollForce:
        """Copy ``other``'s torque into this state in place."""
        self.torque[:] = other.torque
        return self

    def as_dict(self) -> dict[str, np.ndarray]:
        """Field name -> array."""
        return {"torque": self.torque}


#: Vehicle2's name for :class:`AntiRollForce`.
AntiRollTorque = AntiRollForce
