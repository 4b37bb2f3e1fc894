"""Steer response and Ackermann params (``PxVehicleSteerCommandResponseParams``,
``PxVehicleAckermannParams``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from simcore.axle import AxleDescription
from simcore.commands.params import CommandResponseParams
from simcore.frame import Frame, Scale


@dataclass(frozen=True, eq=False)
class SteerCommandResponseParams(CommandResponseParams):
    """Steer (yaw) angle per wheel at full lock: ``max_response * wheel_response_multipliers[wheel]``.

    max_response: radians; each ``|max_response * multiplier|`` must be <= pi. Multipliers (n,):
    dimensionless, 0 for wheels that do not steer. Angles do not change with frame or scale.
    """

    _LENGTH_POWER = 0

    def validate(self, axle_description: AxleDescription | None = None) -> None:
        super().validate(axle_description)
        angles = np.abs(self.max_response * self.wheel_response_multipliers)
        bad = np.flatnonzero(angles > np.pi)
        if bad.size:
            raise ValueError(
                f"SteerCommandResponseParams: max_response * wheel_response_multipliers[{bad[0]}] "
                f"(wheel {bad[0]}) must be in [-pi, pi], got {angles[bad[0]]}"
            )


@dataclass(frozen=True)
class AckermannParams:
    """One axle's Ackermann correction (``PxVehicleAckermannParams``).

    wheel_ids: (id of the wheel on the negative lateral side, id on the positive lateral side).
    wheel_base: length, > 0 — longitudinal distance to the reference (usually rear) axle.
    track_width: length, > 0 — distance between the two wheels. strength: [0, 1], 0 = both wheels
    take the same angle, 1 = the inner and outer angles share one turning centre.
    """

    wheel_ids: tuple[int, int] = (0, 1)
    wheel_base: float = 1.0
    track_width: float = 1.0
    strength: float = 1.0

    def __post_init__(self) -> None:
        ids = tuple(int(w) for w in self.wheel_ids)
        if len(ids) != 2:
            raise ValueError(f"AckermannParams.wheel_ids needs exactly 2 wheel ids, got {self.wheel_ids!r}")
        object.__setattr__(self, "wheel_ids", ids)

    def validate(self, axle_description: AxleDescription | None = None) -> None:
        """Raise ``ValueError`` for the cases ``PxVehicleAckermannParams::isValid`` rejects."""
        if not 0.0 <= self.strength <= 1.0:
            raise ValueError(f"AckermannParams.strength must be in [0, 1], got {self.strength}")
        if self.strength == 0.0:
            return
        n = axle_description.nb_wheels if axle_description is not None else None
        for k, w in enumerate(self.wheel_ids):
            if w < 0 or (n is not None and w >= n):
                raise ValueError(f"AckermannParams.wheel_ids[{k}]={w} is not a wheel of the vehicle")
        if self.wheel_ids[0] == self.wheel_ids[1]:
            raise ValueError("AckermannParams.wheel_ids must name two different wheels")
        if not self.wheel_base > 0.0:
            raise ValueError(f"AckermannParams.wheel_base must be > 0, got {self.wheel_base}")
        if not self.track_width > 0.0:
            raise ValueError(f"AckermannParams.track_width must be > 0, got {self.track_width}")

    def transform_and_scale(self, src_frame: Frame, trg_frame: Frame, src_scale: Scale,
                            trg_scale: Scale) -> AckermannParams:
        """Lengths scale; the wheel ids stay (they are defined by the lateral sign, which a frame
        change that keeps the vehicle's own axes does not flip)."""
        r = trg_scale.scale / src_scale.scale
        return replace(self, wheel_base=self.wheel_base * r, track_width=self.track_width * r)
