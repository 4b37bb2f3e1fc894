"""Driver commands and their per-wheel responses (Vehicle2 ``commands/``)."""

from simcore.commands.functions import linear_response, nonlinear_response, normalised_response
from simcore.commands.params import (
    CommandNonLinearResponseParams,
    CommandResponseParams,
    CommandValueResponseTable,
)
from simcore.commands.states import (
    AUTOMATIC_GEAR,
    CommandResponseState,
    CommandState,
    DirectDriveGear,
    DirectDriveTransmissionCommandState,
    EngineDriveTransmissionCommandState,
    TankDriveTransmissionCommandState,
)

__all__ = [
    "AUTOMATIC_GEAR",
    "CommandNonLinearResponseParams",
    "CommandResponseParams",
    "CommandResponseState",
    "CommandState",
    "CommandValueResponseTable",
    "DirectDriveGear",
    "DirectDriveTransmissionCommandState",
    "EngineDriveTransmissionCommandState",
    "TankDriveTransmissionCommandState",
    "linear_response",
    "nonlinear_response",
    "normalised_response",
]
