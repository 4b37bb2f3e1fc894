"""Reading vehicle descriptions (PhysX's JSON format)."""

from simcore.io.physx_json import (
    DRIVETRAIN_READERS,
    PhysXJsonError,
    base_params_from_dict,
    direct_drive_params_from_dict,
    load_physx_vehicle,
)

__all__ = [
    "DRIVETRAIN_READERS",
    "PhysXJsonError",
    "base_params_from_dict",
    "direct_drive_params_from_dict",
    "load_physx_vehicle",
]
