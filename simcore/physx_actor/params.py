"""Params of the PhysX actor layer: the chassis as a PhysX rigid actor, and how Omni PhysX steps it.

In PhysX a Vehicle2 vehicle's chassis is a ``PxRigidDynamic``. Each step Vehicle2 reads the
actor's pose and velocities (``PxVehiclePhysXActorBeginComponent``), runs its own update, writes
the resulting velocities back (``PxVehiclePhysXActorEndComponent``) and hands its sticky-tire and
suspension-limit rows to the scene's solver as a ``PxConstraint``
(``PxVehiclePhysXConstraintComponent``); the *scene* then damps, solves and integrates the actor.
These params describe that actor and that solve, with PhysX's names and defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum

import numpy as np

from simcore.frame import Frame, Scale, frame_to_frame_matrix, scale_ratio
from simcore.maths import frozen_array


class PhysXActorUpdateMode(IntEnum):
    """``PxVehiclePhysXActorUpdateMode``: how the vehicle's velocities reach the actor.

    ``APPLY_VELOCITY`` sets the actor's velocities (what Omni PhysX's vehicles and PhysX's
    recordings do); ``APPLY_ACCELERATION`` adds ``(v_end - v_start) / dt`` as an acceleration, which
    the TGS solver spreads over its position iterations (``eENABLE_EXTERNAL_FORCES_EVERY_ITERATION``).
    """

    APPLY_VELOCITY = 0
    APPLY_ACCELERATION = 1


@dataclass(frozen=True, eq=False)
class PhysXActorParams:
    """The chassis ``PxRigidDynamic`` and its share of the scene's solve.

    - ``cmass_local_pos`` (3,) ``length``, ``cmass_local_quat`` (4,): ``cMassLocalPose``, the centre of
      mass in the actor's frame. Vehicle2's rigid body state is the centre of mass; the actor's
      ``globalPose`` is the actor origin (PhysX's sample vehicles: (0, -0.25, 0)).
    - ``linear_damping``, ``angular_damping`` (1/time): the actor's velocity damping, applied by the
      scene as ``v *= max(0, 1 - damping dt)`` (PhysX defaults 0 and 0.05).
    - ``max_linear_velocity``, ``max_angular_velocity``: the actor's speed clamps (PhysX: 1e16, 100).
    - ``gyroscopic``: ``eENABLE_GYROSCOPIC_FORCES`` (on for Omni PhysX vehicles).
    - ``sleep_threshold`` (length^2/time^2, mass-normalised kinetic energy): below it the wake
      counter runs down and the actor falls asleep; 0 never sleeps (PhysX default 5e-5 * speed
      scale^2, i.e. 0.005 with a 10 m/s tolerance speed; Omni PhysX's vehicles record 0).
    - ``wake_counter_reset`` (time): ``PxSceneDesc::wakeCounterResetValue`` (0.4 s).
    - ``position_iterations``, ``velocity_iterations``: the actor's solver iteration counts (Omni
      PhysX vehicles: 16 and 1). With TGS every position iteration is a sub-step of ``dt / n``.
    - ``update_mode``: :class:`PhysXActorUpdateMode`.
    """

    cmass_local_pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    cmass_local_quat: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))
    linear_damping: float = 0.0
    angular_damping: float = 0.05
    max_linear_velocity: float = 1e16
    max_angular_velocity: float = 100.0
    gyroscopic: bool = True
    sleep_threshold: float = 0.005
    wake_counter_reset: float = 0.4
    position_iterations: int = 16
    velocity_iterations: int = 1
    update_mode: PhysXActorUpdateMode = PhysXActorUpdateMode.APPLY_VELOCITY

    def __post_init__(self) -> None:
        object.__setattr__(self, "cmass_local_pos",
                           frozen_array(self.cmass_local_pos, (3,), "PhysXActorParams.cmass_local_pos"))
        q = np.asarray(self.cmass_local_quat, dtype=np.float64)
        norm = float(np.linalg.norm(q)) if q.shape == (4,) else 0.0
        object.__setattr__(self, "cmass_local_quat", frozen_array(q / norm if norm > 0.0 else q, (4,),
                                                                  "PhysXActorParams.cmass_local_quat"))
        for name in ("linear_damping", "angular_damping", "max_linear_velocity", "max_angular_velocity",
                     "sleep_threshold", "wake_counter_reset"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "gyroscopic", bool(self.gyroscopic))
        object.__setattr__(self, "position_iterations", int(self.position_iterations))
        object.__setattr__(self, "velocity_iterations", int(self.velocity_iterations))
        object.__setattr__(self, "update_mode", PhysXActorUpdateMode(self.update_mode))

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field unless every value is in PhysX's accepted range."""
        if not np.isfinite(self.cmass_local_pos).all():
            raise ValueError("PhysXActorParams.cmass_local_pos must be finite")
        if not abs(float(np.linalg.norm(self.cmass_local_quat)) - 1.0) < 1e-6:
            raise ValueError("PhysXActorParams.cmass_local_quat must be a unit quaternion")
        for name in ("linear_damping", "angular_damping", "sleep_threshold", "wake_counter_reset"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"PhysXActorParams.{name} must be >= 0, got {getattr(self, name)}")
        for name in ("max_linear_velocity", "max_angular_velocity"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"PhysXActorParams.{name} must be > 0, got {getattr(self, name)}")
        if not 1 <= self.position_iterations <= 255:
            raise ValueError(f"PhysXActorParams.position_iterations must be in [1, 255], got "
                             f"{self.position_iterations}")
        if not 0 <= self.velocity_iterations <= 255:
            raise ValueError(f"PhysXActorParams.velocity_iterations must be in [0, 255], got "
                             f"{self.velocity_iterations}")

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> PhysXActorParams:
        """The centre-of-mass offset follows the axes and the length unit; the sleep threshold
        (a squared speed) scales with length^2."""
        m = frame_to_frame_matrix(src_frame, trg_frame)
        s = scale_ratio(src_scale, trg_scale)
        q = self.cmass_local_quat
        axis = m @ q[:3] * (1.0 if np.linalg.det(m) > 0 else -1.0)
        return replace(self, cmass_local_pos=m @ self.cmass_local_pos * s,
                       cmass_local_quat=np.array([*axis, q[3]]),
                       max_linear_velocity=self.max_linear_velocity * s,
                       sleep_threshold=self.sleep_threshold * s * s)


@dataclass(frozen=True)
class SubstepRule:
    """How many substeps the vehicle update takes, by forward speed (Omni PhysX's vehicle rule).

    Below ``threshold_forward_speed`` (length/time, |forward speed| of the body at the start of the
    step) the substep group runs ``low_forward_speed_substeps`` times, else
    ``high_forward_speed_substeps``. Omni PhysX's defaults (3, 1, 5 m/s) fit PhysX's recordings; a
    fixed count or another threshold fits them clearly worse.
    """

    low_forward_speed_substeps: int = 3
    high_forward_speed_substeps: int = 1
    threshold_forward_speed: float = 5.0

    def validate(self) -> None:
        for name in ("low_forward_speed_substeps", "high_forward_speed_substeps"):
            if not 1 <= getattr(self, name) <= 255:
                raise ValueError(f"SubstepRule.{name} must be in [1, 255], got {getattr(self, name)}")
        if not self.threshold_forward_speed >= 0.0:
            raise ValueError(f"SubstepRule.threshold_forward_speed must be >= 0, got "
                             f"{self.threshold_forward_speed}")

    def substeps(self, forward_speed: np.ndarray) -> np.ndarray:
        """Substep count per vehicle for these forward speeds."""
        slow = np.abs(np.asarray(forward_speed, dtype=np.float64)) < self.threshold_forward_speed
        return np.where(slow, self.low_forward_speed_substeps, self.high_forward_speed_substeps)

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> SubstepRule:
        return replace(self, threshold_forward_speed=self.threshold_forward_speed
                       * scale_ratio(src_scale, trg_scale))
