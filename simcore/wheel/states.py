"""Wheel states (``PxVehicleWheelStates.h``): actuation flags, 1-d rigid body, local pose.

Struct of arrays with a leading wheel axis. ``default(n)`` (alias ``zeros(n)``) allocates ``n``
wheels at Vehicle2's ``setToDefault`` values; ``set_to_default()`` resets in place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.wheel._soa import WheelStateMixin


@dataclass(eq=False)
class WheelActuationState(WheelStateMixin):
    """Whether a brake or drive torque acts on each wheel (``PxVehicleWheelActuationState``).

    The tire slip denominators, sticky-tire timers and the low-speed rotation-angle blending all
    branch on these flags. Default: both False.

    - ``is_brake_applied``: (n,) bool.
    - ``is_drive_applied``: (n,) bool.
    """

    is_brake_applied: np.ndarray
    is_drive_applied: np.ndarray

    @classmethod
    def default(cls, n: int) -> WheelActuationState:
        """``n`` wheels with neither brake nor drive applied."""
        return cls(np.zeros(n, dtype=bool), np.zeros(n, dtype=bool))

    zeros = default

    def set_to_default(self) -> None:
        """Both flags False for every wheel."""
        self.is_brake_applied[:] = False
        self.is_drive_applied[:] = False


@dataclass(eq=False)
class WheelRigidBody1dState(WheelStateMixin):
    """Spin of each wheel about its lateral axis (``PxVehicleWheelRigidBody1dState``; PVD
    ``WheelRigidBodyState``).

    - ``rotation_speed``: (n,) ``radians / time``; integrated by the drivetrain (direct or engine).
    - ``corrected_rotation_speed``: (n,) ``radians / time``; the speed actually used to advance the
      angle, blended towards the rolling speed at low forward speed (see
      :func:`simcore.wheel.functions.wheel_rotation_angle_update`).
    - ``rotation_angle``: (n,) radians in (-2 pi, 2 pi); for rendering only.
    """

    rotation_speed: np.ndarray
    corrected_rotation_speed: np.ndarray
    rotation_angle: np.ndarray

    @classmethod
    def default(cls, n: int) -> WheelRigidBody1dState:
        """``n`` wheels at rest with zero angle."""
        return cls(np.zeros(n), np.zeros(n), np.zeros(n))

    zeros = default

    def set_to_default(self) -> None:
        """Zero speed, corrected speed and angle."""
        self.rotation_speed[:] = 0.0
        self.corrected_rotation_speed[:] = 0.0
        self.rotation_angle[:] = 0.0


@dataclass(eq=False)
class WheelLocalPoseState(WheelStateMixin):
    """Pose of each wheel in the rigid body frame (``PxVehicleWheelLocalPose``; PVD
    ``WheelLocalPoseState.posInRbodyFrame/quatInRbodyFrame``).

    - ``pos``: (n, 3) ``length``, rigid body frame.
    - ``quat``: (n, 4) [x, y, z, w], rigid body frame. Default identity.
    """

    pos: np.ndarray
    quat: np.ndarray

    @classmethod
    def default(cls, n: int) -> WheelLocalPoseState:
        """``n`` identity poses."""
        q = np.zeros((n, 4))
        q[:, 3] = 1.0
        return cls(np.zeros((n, 3)), q)

    zeros = default

    def set_to_default(self) -> None:
        """Identity pose for every wheel."""
        self.pos[:] = 0.0
        self.quat[:] = (0.0, 0.0, 0.0, 1.0)
