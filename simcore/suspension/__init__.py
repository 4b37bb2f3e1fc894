"""Suspension subsystem (Vehicle2 ``suspension/``), one module per role as in Vehicle2's headers:

- :mod:`simcore.suspension.params`: :class:`SuspensionParams`, :class:`SuspensionStateCalculationParams`
  (:class:`JounceCalculationType`), :class:`SuspensionComplianceParams` (:class:`ComplianceTable`),
  :class:`SuspensionForceParams`, :class:`AntiRollBarParams`
- :mod:`simcore.suspension.states`: :class:`SuspensionState`, :class:`SuspensionComplianceState`,
  :class:`SuspensionForce`, :class:`AntiRollForce`
- :mod:`simcore.suspension.helpers`: ``compute_sprung_masses``, ``compute_suspension_raycast``,
  ``compute_suspension_sweep``, ``compute_suspension_direction``
- :mod:`simcore.suspension.functions`: ``suspension_state_update``, ``suspension_compliance_update``,
  ``suspension_force_update``, ``anti_roll_force_update``
- :mod:`simcore.suspension.components`: ``SuspensionComponent``

The package re-exports params and states only (see :mod:`simcore.wheel`).
"""

from simcore.suspension.params import (
    AntiRollBarParams,
    AntiRollForceParams,
    ComplianceTable,
    JounceCalculationType,
    SuspensionComplianceParams,
    SuspensionForceParams,
    SuspensionParams,
    SuspensionStateCalculationParams,
)
from simcore.suspension.states import (
    NO_INTERSECTION_SEPARATION,
    UNSPECIFIED_JOUNCE,
    UNSPECIFIED_SEPARATION,
    AntiRollForce,
    AntiRollTorque,
    SuspensionComplianceState,
    SuspensionForce,
    SuspensionState,
)

__all__ = [
    "NO_INTERSECTION_SEPARATION",
    "UNSPECIFIED_JOUNCE",
    "UNSPECIFIED_SEPARATION",
    "AntiRollBarParams",
    "AntiRollForce",
    "AntiRollForceParams",
    "AntiRollTorque",
    "ComplianceTable",
    "JounceCalculationType",
    "SuspensionComplianceParams",
    "SuspensionComplianceState",
    "SuspensionForce",
    "SuspensionForceParams",
    "SuspensionParams",
    "SuspensionState",
    "SuspensionStateCalculationParams",
]
