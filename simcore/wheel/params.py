"""Wheel parameters (``PxVehicleWheelParams``), all wheels of a vehicle as a struct of arrays."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.frame import Frame, Scale, scale_ratio
from simcore.wheel._soa import check_same_wheel_count, freeze, per_wheel_records, require, wheel_array

_FIELDS = ("radius", "half_width", "mass", "moi", "damping_rate")


@dataclass(frozen=True, eq=False)
class WheelParams:
    """Radius, half-width, mass, moment of inertia and damping rate of each wheel (wheel + tire unit).

    Every field has shape (n_wheels,); arrays are read-only.

    - ``radius``: (0, inf), ``length``.
    - ``half_width``: (0, inf), ``length``.
    - ``mass``: (0, inf), ``mass``.
    - ``moi``: moment of inertia about the rolling axis, (0, inf), ``mass * length^2``.
    - ``damping_rate``: [0, inf), ``mass * length^2 / time`` (torque * time). The wheel rotation
      speed integration treats it implicitly (see :func:`simcore.wheel.functions.
      wheel_rotation_speed_damped_update`), so large values cannot flip the spin direction.
    """

    radius: np.ndarray
    half_width: np.ndarray
    mass: np.ndarray
    moi: np.ndarray
    damping_rate: np.ndarray

    def __post_init__(self) -> None:
        arrays = {f: wheel_array("WheelParams", f, getattr(self, f)) for f in _FIELDS}
        check_same_wheel_count("WheelParams", arrays)
        for f, a in arrays.items():
            object.__setattr__(self, f, freeze(a))

    @classmethod
    def from_wheels(cls, wheels: Sequence[Mapping[str, Any] | Any]) -> WheelParams:
        """Build from one dict (or object) per wheel keyed ``radius, half_width, mass, moi, damping_rate``."""
        return cls(**per_wheel_records("WheelParams", wheels, _FIELDS))

    @property
    def nb_wheels(self) -> int:
        """Number of wheels."""
        return int(self.radius.shape[0])

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field and wheel of the first value Vehicle2 would reject."""
        c = "WheelParams"
        require(c, "radius", self.radius > 0.0, "must be greater than zero", self.radius)
        require(c, "half_width", self.half_width > 0.0, "must be greater than zero", self.half_width)
        require(c, "mass", self.mass > 0.0, "must be greater than zero", self.mass)
        require(c, "moi", self.moi > 0.0, "must be greater than zero", self.moi)
        require(
            c,
            "damping_rate",
            self.damping_rate >= 0.0,
            "must be greater than or equal to zero",
            self.damping_rate,
        )

    def transform_and_scale(
        self, src_frame: Frame, trg_frame: Frame, src_scale: Scale, trg_scale: Scale
    ) -> WheelParams:
        """Same wheels in another length scale (lengths x s, moi and damping rate x s^2; frame-free)."""
        s = scale_ratio(src_scale, trg_scale)
        return WheelParams(
            radius=self.radius * s,
            half_width=self.half_width * s,
            mass=self.mass.copy(),
            moi=self.moi * (s * s),
            damping_rate=self.damping_rate * (s * s),
        )
