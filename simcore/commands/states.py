"""Driver command states (``PxVehicleCommandState`` and the transmission command states).

These hold what the driver asks for this step; command-response components turn them into
per-wheel torques and angles. Plain numbers and small arrays, so every field can be recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from simcore.wheel._soa import WheelStateMixin


@dataclass
class CommandState:
    """``PxVehicleCommandState``.

    brakes: (2,) in [0, 1] — brakes[0] is the brake pedal, brakes[1] the handbrake, paired with
    ``VehicleParams.brake_command_response[0/1]``. nb_brakes: how many brake channels are read
    (2 by default; Vehicle2's snippets use 1 or 2). throttle: in [0, 1]. steer: in [-1, 1],
    positive turns towards the frame's positive lateral axis (left in the default frame).
    """

    brakes: np.ndarray = field(default_factory=lambda: np.zeros(2))
    nb_brakes: int = 2
    throttle: float = 0.0
    steer: float = 0.0

    def set_to_default(self) -> None:
        """All commands released (Vehicle2's ``setToDefault`` zeroes ``nbBrakes`` too; we keep 2
        channels so a handbrake set later is not silently ignored)."""
        self.brakes = np.zeros(2)
        self.nb_brakes = 2
        self.throttle = 0.0
        self.steer = 0.0

    @property
    def brake(self) -> float:
        """The brake pedal, ``brakes[0]``."""
        return float(self.brakes[0])

    @brake.setter
    def brake(self, value: float) -> None:
        self.brakes[0] = value

    @property
    def handbrake(self) -> float:
        """The handbrake, ``brakes[1]``."""
        return float(self.brakes[1])

    @handbrake.setter
    def handbrake(self, value: float) -> None:
        self.brakes[1] = value


class DirectDriveGear(IntEnum):
    """``PxVehicleDirectDriveTransmissionCommandState::Enum``: the sign applied to drive torque."""

    REVERSE = 0
    NEUTRAL = 1
    FORWARD = 2


@dataclass
class DirectDriveTransmissionCommandState:
    """``PxVehicleDirectDriveTransmissionCommandState``: reverse, neutral or forward.

    Vehicle2's default (zeroed memory) is REVERSE; we default to FORWARD, which is what every
    snippet sets right after initialisation.
    """

    gear: int = int(DirectDriveGear.FORWARD)

    def set_to_default(self) -> None:
        self.gear = int(DirectDriveGear.FORWARD)


#: ``PxVehicleEngineDriveTransmissionCommandState::eAUTOMATIC_GEAR``
AUTOMATIC_GEAR = 0xFF


@dataclass
class EngineDriveTransmissionCommandState:
    """``PxVehicleEngineDriveTransmissionCommandState``.

    clutch: in [0, 1], 1 = pedal fully pressed (engine decoupled). target_gear: gear index in
    the gearbox's ratio table, or :data:`AUTOMATIC_GEAR` for the autobox.
    """

    clutch: float = 0.0
    target_gear: int = 0

    def set_to_default(self) -> None:
        self.clutch = 0.0
        self.target_gear = 0


@dataclass
class TankDriveTransmissionCommandState(EngineDriveTransmissionCommandState):
    """``PxVehicleTankDriveTransmissionCommandState``: thrusts (2,) in [-1, 1], one per track group."""

    thrusts: np.ndarray = field(default_factory=lambda: np.zeros(2))

    def set_to_default(self) -> None:
        super().set_to_default()
        self.thrusts = np.zeros(2)


@dataclass(eq=False)
class CommandResponseState(WheelStateMixin):
    """A command's response per wheel (Vehicle2 keeps a bare ``PxReal`` array per command).

    ``response`` (n,): brake torque (``mass * length^2 / time^2``, >= 0) for the brake state, drive
    torque (signed by gear) for the direct-drive throttle state, steer angle (radians) for the
    steer state. PVD records it as ``wheelStates0To3``... on the ``*CommandResponseStates`` class.
    """

    response: np.ndarray

    @classmethod
    def default(cls, n: int) -> CommandResponseState:
        """``n`` wheels with zero response."""
        return cls(np.zeros(n))

    zeros = default

    def set_to_default(self) -> None:
        """Zero response."""
        self.response[:] = 0.0

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        """``np.asarray(state)`` is the response array (the bare per-wheel array Vehicle2 keeps)."""
        return np.asarray(self.response, dtype=dtype)  # type: ignore[call-overload]
