"""The PhysX actor layer: the chassis as a PhysX rigid actor, stepped the way PhysX steps it.

Off by default (a pure Vehicle2 vehicle: the rows are solved inside every substep by simcore's
own rigid body). Set ``VehicleParams.physx_actor`` (and usually ``SimulationContext.substep_rule``)
to run a vehicle as PhysX + Omni PhysX run it: see :mod:`simcore.physx_actor.components` and
:mod:`simcore.physx_actor.solver`, and ``docs/simcore.md`` ("The PhysX actor layer").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from simcore.physx_actor.params import PhysXActorParams, PhysXActorUpdateMode, SubstepRule
from simcore.physx_actor.states import PhysXActorState

#: Omni PhysX's sticky-tire constraint damping (longitudinal, lateral), 1/time, as PhysX's
#: recordings show it (Vehicle2's own defaults, 1.0 / 0.1, are for scenes without PhysX).
OMNI_STICKY_DAMPING = (200.0, 20.0)


def physx_setup(params: Any, actor: PhysXActorParams | None = None,
                context: Any = None) -> tuple[Any, Any]:
    """``params`` with a chassis actor (default :class:`PhysXActorParams`, its centre of mass at the
    actor origin) and a context (default: Vehicle2's in the params' frame) with Omni PhysX's substep
    rule and sticky-tire damping: a vehicle set up as PhysX + Omni PhysX run one."""
    from simcore.context import TireAxisStickyParams, TireStickyParams
    from simcore.vehicle import default_context

    base = context if context is not None else default_context(params.frame, params.scale)
    s = base.tire_sticky_params
    lng, lat = OMNI_STICKY_DAMPING
    context = replace(
        base, substep_rule=SubstepRule(threshold_forward_speed=SubstepRule().threshold_forward_speed
                                       * params.scale.scale),
        tire_sticky_params=TireStickyParams(
            TireAxisStickyParams(s.longitudinal.threshold_speed, s.longitudinal.threshold_time, lng),
            TireAxisStickyParams(s.lateral.threshold_speed, s.lateral.threshold_time, lat)))
    return params.replace(physx_actor=actor if actor is not None else PhysXActorParams()), context


__all__ = ["OMNI_STICKY_DAMPING", "PhysXActorParams", "PhysXActorState", "PhysXActorUpdateMode",
           "SubstepRule", "physx_setup"]
