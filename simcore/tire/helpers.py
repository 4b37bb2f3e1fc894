"""Tire helpers (``PxVehicleTireHelpers``): sticky-state hand-over for jointed vehicles (trailers)."""

from __future__ import annotations

import numpy as np

from simcore.tire.states import TireStickyState
from simcore.wheel.states import WheelActuationState


def acceleration_intent_compute(powered_actuation: WheelActuationState) -> bool:
    """True if any wheel of the powered vehicle is driven (``PxVehicleAccelerationIntentCompute``)."""
    return bool(np.any(powered_actuation.is_drive_applied))


def tire_sticky_state_reset(
    powered_vehicle_intends_to_accelerate: bool, towed_sticky: TireStickyState
) -> None:
    """Release the towed vehicle's sticky tires when the tractor wants to move
    (``PxVehicleTireStickyStateReset``); otherwise a parked trailer would hold the tractor back.

    Modifies ``towed_sticky`` in place.
    """
    if powered_vehicle_intends_to_accelerate:
        towed_sticky.set_to_default()
