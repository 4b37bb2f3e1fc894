"""Rigid body state (``PxVehicleRigidBodyState``): pose and velocities of the vehicle body."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from simcore.frame import Frame
from simcore.maths import quat_rotate


def _identity_quat() -> np.ndarray:
    return np.array([0.0, 0.0, 0.0, 1.0])


@dataclass(eq=False)
class RigidBodyState:
    """World-frame state of the body's centre of mass. Every field is a small float64 array.

    - ``pos`` (3,) ``length``; ``quat`` (4,) [x, y, z, w] (PVD ``pos``, ``quat``).
    - ``linear_velocity`` (3,) ``length / time``; ``angular_velocity`` (3,) ``radians / time``.
    - ``previous_linear_velocity``, ``previous_angular_velocity`` (3,): the velocities at the start of
      the current step, kept by :class:`~simcore.rigid_body.components.RigidBodyBeginComponent`
      (Vehicle2 copies them when it reads the PhysX actor; PVD ``prevLinvel``/``prevAngvel``).
    - ``external_force`` (3,) ``mass * length / time^2`` and ``external_torque`` (3,): applied by the
      next rigid body update, then reset to zero (so with substeps they act in one substep only,
      as in Vehicle2). Gravity is not included: it comes from the simulation context.
    """

    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=_identity_quat)
    linear_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    previous_linear_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    previous_angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    external_force: np.ndarray = field(default_factory=lambda: np.zeros(3))
    external_torque: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self) -> None:
        for f in fields(self):
            a = np.array(getattr(self, f.name), dtype=np.float64)
            want = (4,) if f.name == "quat" else (3,)
            if a.shape != want:
                raise ValueError(f"RigidBodyState.{f.name}: expected shape {want}, got {a.shape}")
            setattr(self, f.name, a)

    @classmethod
    def default(cls, n: int | None = None) -> RigidBodyState:
        """Identity pose at rest (``n`` accepted for symmetry with per-wheel states and ignored)."""
        return cls()

    zeros = default

    def set_to_default(self) -> None:
        """Identity pose, zero velocities and external loads (``setToDefault``)."""
        self.pos[:] = 0.0
        self.quat[:] = (0.0, 0.0, 0.0, 1.0)
        for name in ("linear_velocity", "angular_velocity", "previous_linear_velocity",
                     "previous_angular_velocity", "external_force", "external_torque"):
            getattr(self, name)[:] = 0.0

    def as_dict(self) -> dict[str, np.ndarray]:
        """Field name -> array (views)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def copy(self) -> RigidBodyState:
        """Deep copy."""
        return RigidBodyState(**{k: v.copy() for k, v in self.as_dict().items()})

    def assign(self, other: RigidBodyState) -> RigidBodyState:
        """Copy ``other``'s values into this state in place."""
        for k, v in self.as_dict().items():
            v[...] = getattr(other, k)
        return self

    def longitudinal_speed(self, frame: Frame) -> float:
        """Velocity along the body's forward axis (``getLongitudinalSpeed``), ``length / time``."""
        return float(self.linear_velocity @ quat_rotate(self.quat, frame.lng))

    def lateral_speed(self, frame: Frame) -> float:
        """Velocity along the body's lateral axis (``getLateralSpeed``)."""
        return float(self.linear_velocity @ quat_rotate(self.quat, frame.lat))

    def vertical_speed(self, frame: Frame) -> float:
        """Velocity along the body's vertical axis (``getVerticalSpeed``)."""
        return float(self.linear_velocity @ quat_rotate(self.quat, frame.vrt))
