"""Tire states (``PxVehicleTireStates.h``), struct of arrays with a leading wheel axis.

Quantities that Vehicle2 stores per planar direction keep that layout: axis 1 is indexed by
:data:`LONGITUDINAL` (0) and :data:`LATERAL` (1) (``PxVehicleTireDirectionModes``), the same
indices as ``SimulationContext.tire_sticky_params``. ``lng_*``/``lat_*`` properties are views.
Every state's default (``default(n)``, alias ``zeros(n)``, and ``set_to_default()``) is all zeros.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.wheel._soa import WheelStateMixin

#: Index of the longitudinal direction (``PxVehicleTireDirectionModes::eLONGITUDINAL``).
LONGITUDINAL = 0
#: Index of the lateral direction (``PxVehicleTireDirectionModes::eLATERAL``).
LATERAL = 1
NB_PLANAR_DIRECTIONS = 2


class _ZeroDefault(WheelStateMixin):
    def set_to_default(self) -> None:
        """Zero every field (``setToDefault``)."""
        for a in self.as_dict().values():
            a[...] = 0


@dataclass(eq=False)
class TireDirectionState(_ZeroDefault):
    """Tire axes projected on the road plane, world frame (``PxVehicleTireDirectionState``).

    ``directions`` (n, 2, 3): unit longitudinal (rolling) and lateral directions, including steer,
    toe and camber; zero when the wheel is off the ground. PVD: ``lngDir``, ``latDir``.
    """

    directions: np.ndarray

    @classmethod
    def default(cls, n: int) -> TireDirectionState:
        """``n`` wheels, zero directions."""
        return cls(np.zeros((n, NB_PLANAR_DIRECTIONS, 3)))

    zeros = default

    @property
    def lng_direction(self) -> np.ndarray:
        """(n, 3) longitudinal directions (view)."""
        return self.directions[:, LONGITUDINAL]

    @property
    def lat_direction(self) -> np.ndarray:
        """(n, 3) lateral directions (view)."""
        return self.directions[:, LATERAL]


@dataclass(eq=False)
class TireSpeedState(_ZeroDefault):
    """Rigid body velocity at the contact point along the tire axes (``PxVehicleTireSpeedState``).

    ``speed_states`` (n, 2) ``length / time``, relative to the road's velocity. PVD: ``lngSpeed``,
    ``latSpeed``.
    """

    speed_states: np.ndarray

    @classmethod
    def default(cls, n: int) -> TireSpeedState:
        """``n`` wheels, zero speeds."""
        return cls(np.zeros((n, NB_PLANAR_DIRECTIONS)))

    zeros = default

    @property
    def lng_speed(self) -> np.ndarray:
        """(n,) longitudinal speeds (view)."""
        return self.speed_states[:, LONGITUDINAL]

    @property
    def lat_speed(self) -> np.ndarray:
        """(n,) lateral speeds (view)."""
        return self.speed_states[:, LATERAL]


@dataclass(eq=False)
class TireSlipState(_ZeroDefault):
    """Longitudinal slip ratio and lateral slip angle (``PxVehicleTireSlipState``).

    ``slips`` (n, 2): [:, 0] dimensionless longitudinal slip, [:, 1] lateral slip angle in radians.
    PVD: ``lngSlip``, ``latSlip``.
    """

    slips: np.ndarray

    @classmethod
    def default(cls, n: int) -> TireSlipState:
        """``n`` wheels, zero slips."""
        return cls(np.zeros((n, NB_PLANAR_DIRECTIONS)))

    zeros = default

    @property
    def lng_slip(self) -> np.ndarray:
        """(n,) longitudinal slips (view)."""
        return self.slips[:, LONGITUDINAL]

    @property
    def lat_slip(self) -> np.ndarray:
        """(n,) lateral slips (view)."""
        return self.slips[:, LATERAL]


@dataclass(eq=False)
class TireGripState(_ZeroDefault):
    """Load and friction of each tire (``PxVehicleTireGripState``).

    ``load`` (n,) ``mass * length / time^2`` (filtered); ``friction`` (n,) = road friction x the
    friction-vs-slip multiplier. Both zero off the ground.
    """

    load: np.ndarray
    friction: np.ndarray

    @classmethod
    def default(cls, n: int) -> TireGripState:
        """``n`` wheels, zero load and friction."""
        return cls(np.zeros(n), np.zeros(n))

    zeros = default


@dataclass(eq=False)
class TireCamberState(_ZeroDefault):
    """Camber of each tire relative to the road plane (``PxVehicleTireCamberAngleState``; PVD
    ``TireCamberState.camberAngle``). ``camber_angle`` (n,) radians, zero off the ground."""

    camber_angle: np.ndarray

    @classmethod
    def default(cls, n: int) -> TireCamberState:
        """``n`` wheels, zero camber."""
        return cls(np.zeros(n))

    zeros = default


@dataclass(eq=False)
class TireStickyState(_ZeroDefault):
    """Low-speed "sticky tire" bookkeeping per axis (``PxVehicleTireStickyState``).

    - ``low_speed_time`` (n, 2) ``time``: how long the contact has been below the threshold speed.
    - ``active_status`` (n, 2) bool: the tire force along that axis is replaced by a velocity
      constraint (see :func:`simcore.tire.functions.tire_sticky_constraints`).

    PVD: ``lngStickyTimer``, ``lngStickyStatus``, ``latStickyTimer``, ``latStickyStatus``.
    """

    low_speed_time: np.ndarray
    active_status: np.ndarray

    @classmethod
    def default(cls, n: int) -> TireStickyState:
        """``n`` wheels, timers at zero, inactive."""
        return cls(np.zeros((n, NB_PLANAR_DIRECTIONS)), np.zeros((n, NB_PLANAR_DIRECTIONS), dtype=bool))

    zeros = default

    def set_to_default(self) -> None:
        """Timers zero and inactive."""
        self.low_speed_time[:] = 0.0
        self.active_status[:] = False


@dataclass(eq=False)
class TireForce(_ZeroDefault):
    """Tire forces and torques on the rigid body and the wheel (``PxVehicleTireForce``), world frame.

    - ``forces`` (n, 2, 3) ``mass * length / time^2``: longitudinal and lateral force vectors.
    - ``torques`` (n, 2, 3) ``mass * length^2 / time^2``: their torques about the centre of mass.
    - ``aligning_moment`` (n,) ``mass * length^2 / time^2``: for torque-driven steering.
    - ``wheel_torque`` (n,) ``mass * length^2 / time^2``: reaction of the longitudinal force on the
      wheel's spin (``-F_lng * radius``).

    PVD: ``lngForce``, ``lngTorque``, ``latForce``, ``latTorque``, ``aligningMoment``, ``wheelTorque``.
    """

    forces: np.ndarray
    torques: np.ndarray
    aligning_moment: np.ndarray
    wheel_torque: np.ndarray

    @classmethod
    def default(cls, n: int) -> TireForce:
        """``n`` wheels, zero forces."""
        return cls(
            np.zeros((n, NB_PLANAR_DIRECTIONS, 3)),
            np.zeros((n, NB_PLANAR_DIRECTIONS, 3)),
            np.zeros(n),
            np.zeros(n),
        )

    zeros = default

    @property
    def lng_force(self) -> np.ndarray:
        """(n, 3) longitudinal forces (view)."""
        return self.forces[:, LONGITUDINAL]

    @property
    def lat_force(self) -> np.ndarray:
        """(n, 3) lateral forces (view)."""
        return self.forces[:, LATERAL]

    @property
    def lng_torque(self) -> np.ndarray:
        """(n, 3) torques of the longitudinal forces (view)."""
        return self.torques[:, LONGITUDINAL]

    @property
    def lat_torque(self) -> np.ndarray:
        """(n, 3) torques of the lateral forces (view)."""
        return self.torques[:, LATERAL]


#: Vehicle2's name for :class:`TireCamberState`.
TireCamberAngleState = TireCamberState
