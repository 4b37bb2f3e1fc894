"""Drivetrains (Vehicle2 ``drivetrain/``): direct drive here; the engine drive in ``engine_drive``."""

from simcore.drivetrain.direct_drive import (
    DirectDriveActuationStateComponent,
    DirectDriveCommandResponseComponent,
    DirectDriveThrottleCommandResponseParams,
    DirectDrivetrainComponent,
    direct_drive_actuation_state_update,
    direct_drive_command_response_update,
    direct_drive_throttle_command_response_update,
    direct_drive_update,
    gear_sign,
)

__all__ = [
    "DirectDriveActuationStateComponent",
    "DirectDriveCommandResponseComponent",
    "DirectDriveThrottleCommandResponseParams",
    "DirectDrivetrainComponent",
    "direct_drive_actuation_state_update",
    "direct_drive_command_response_update",
    "direct_drive_throttle_command_response_update",
    "direct_drive_update",
    "gear_sign",
]
