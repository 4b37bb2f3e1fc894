"""Rigid body params (``PxVehicleRigidBodyParams``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.frame import Frame, Scale, frame_to_frame_matrix, scale_ratio
from simcore.maths import frozen_array


@dataclass(frozen=True, eq=False)
class RigidBodyParams:
    """Mass and principal moments of inertia of the vehicle body.

    mass: > 0, ``mass``. moi: (3,) > 0, ``mass * length^2``, about the body's x, y, z axes (the body
    frame is the centre-of-mass frame, aligned with the world axes at identity orientation, so the
    entries follow the vehicle frame: e.g. in a Y-up Z-forward frame ``moi[1]`` is the yaw inertia).
    """

    mass: float
    moi: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "moi", frozen_array(self.moi, (3,), "RigidBodyParams.moi"))

    def validate(self) -> None:
        """Raise ``ValueError`` unless mass and every moment are > 0 (``isValid``)."""
        if not self.mass > 0.0:
            raise ValueError(f"RigidBodyParams.mass must be greater than zero, got {self.mass}")
        bad = np.flatnonzero(~(self.moi > 0.0))
        if bad.size:
            k = int(bad[0])
            raise ValueError(f"RigidBodyParams.moi[{k}] must be greater than zero, got {self.moi[k]}")

    @property
    def inverse_moi(self) -> np.ndarray:
        """(3,) reciprocals of :attr:`moi`."""
        return 1.0 / self.moi

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> RigidBodyParams:
        """Moments permute with the axes (absolute values) and scale with length^2; mass is unchanged."""
        s = scale_ratio(src_scale, trg_scale)
        moi = np.abs(frame_to_frame_matrix(src_frame, trg_frame) @ self.moi) * (s * s)
        return RigidBodyParams(self.mass, moi)
