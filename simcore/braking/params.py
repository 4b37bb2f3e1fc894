"""Brake command response params (``PxVehicleBrakeCommandResponseParams``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.axle import AxleDescription
from simcore.commands.params import CommandResponseParams


@dataclass(frozen=True, eq=False)
class BrakeCommandResponseParams(CommandResponseParams):
    """Brake torque per wheel at full pedal: ``max_response * wheel_response_multipliers[wheel]``.

    max_response: >= 0, torque (mass * length^2 / time^2). Multipliers: (n,), >= 0.
    A vehicle has two: index 0 the brake pedal, index 1 the handbrake.
    """

    _LENGTH_POWER = 2

    def validate(self, axle_description: AxleDescription | None = None) -> None:
        super().validate(axle_description)
        if self.max_response < 0.0:
            raise ValueError(f"BrakeCommandResponseParams.max_response must be >= 0, got {self.max_response}")
        bad = np.flatnonzero(self.wheel_response_multipliers < 0.0)
        if bad.size:
            raise ValueError(
                f"BrakeCommandResponseParams.wheel_response_multipliers[{bad[0]}] (wheel {bad[0]}) "
                "must be >= 0, "
                f"got {self.wheel_response_multipliers[bad[0]]}"
            )
