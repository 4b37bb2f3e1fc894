"""Tire subsystem (Vehicle2 ``tire/``), one module per role as in Vehicle2's headers:

- :mod:`simcore.tire.params`: :class:`TireForceParams`
- :mod:`simcore.tire.states`: :class:`TireDirectionState`, :class:`TireSpeedState`,
  :class:`TireSlipState`, :class:`TireGripState`, :class:`TireCamberState`, :class:`TireStickyState`,
  :class:`TireForce` (per-direction arrays indexed by :data:`LONGITUDINAL` = 0, :data:`LATERAL` = 1)
- :mod:`simcore.tire.functions`: ``tire_dirs_update``, ``tire_slip_speeds_update``, ``tire_slips_update``,
  ``tire_camber_angles_update``, ``tire_grip_update``, ``tire_sticky_state_update``,
  ``tire_slips_accounting_for_sticky_states``, ``tire_forces_update``, ``compute_tire_force_michigan``,
  ``tire_sticky_constraints``
- :mod:`simcore.tire.helpers`: ``acceleration_intent_compute``, ``tire_sticky_state_reset``
- :mod:`simcore.tire.components`: ``TireComponent``

The package re-exports params and states only (see :mod:`simcore.wheel`).
"""

from simcore.tire.params import TireForceParams
from simcore.tire.states import (
    LATERAL,
    LONGITUDINAL,
    TireCamberAngleState,
    TireCamberState,
    TireDirectionState,
    TireForce,
    TireGripState,
    TireSlipState,
    TireSpeedState,
    TireStickyState,
)

__all__ = [
    "LATERAL",
    "LONGITUDINAL",
    "TireCamberAngleState",
    "TireCamberState",
    "TireDirectionState",
    "TireForce",
    "TireForceParams",
    "TireGripState",
    "TireSlipState",
    "TireSpeedState",
    "TireStickyState",
]
