"""Which batch component runs each entry of a fleet's sequence.

Every built-in part has a batch component (one compiled kernel over the fleet). A drivetrain
plug-in without ``make_batch_components`` (a user's own) runs its per-vehicle components on each
member in turn (:class:`~simcore.fleet.fleet.MemberSteps`): correct, at the per-vehicle cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simcore.component import Component
from simcore.rigid_body.batch import (
    RigidBodyBatchComponent,
    RigidBodyBeginBatchComponent,
    VehicleConstraintBatchComponent,
)
from simcore.road.batch import RoadGeometryBatchComponent
from simcore.suspension.batch import SuspensionBatchComponent
from simcore.tire.batch import TireBatchComponent
from simcore.vehicle import drivetrain_plugin
from simcore.wheel.batch import WheelBatchComponent

if TYPE_CHECKING:
    from simcore.fleet.fleet import Fleet

#: The drivetrain plug-in's three entries, in the order its factories return them.
DRIVETRAIN_ENTRIES = ("command_response", "actuation", "drivetrain")


def batch_components(fleet: Fleet | Any) -> dict[str, Component]:
    """Name -> component for the default sequence of ``fleet``."""
    from simcore.fleet.fleet import MemberSteps

    actor = fleet.params[0].physx_actor is not None
    parts: dict[str, Component] = {
        "road_geometry": RoadGeometryBatchComponent(fleet),
        "suspension": SuspensionBatchComponent(fleet),
        "tire": TireBatchComponent(fleet),
        "constraints": VehicleConstraintBatchComponent(fleet),
        # With the PhysX actor layer the scene solves the rows once per step, after the update.
        "rigid_body": RigidBodyBatchComponent(fleet, solve_constraints=not actor),
        "wheel": WheelBatchComponent(fleet),
    }
    if actor:
        from simcore.physx_actor.components import PhysXActorBeginBatchComponent, PhysXActorEndBatchComponent

        begin = PhysXActorBeginBatchComponent(fleet)
        parts |= {"physx_actor_begin": begin, "physx_actor_end": PhysXActorEndBatchComponent(fleet, begin)}
    else:
        parts["rigid_body_begin"] = RigidBodyBeginBatchComponent(fleet)
    plugin = drivetrain_plugin(fleet.drivetrain)
    if plugin.make_batch_components is not None:
        parts |= dict(zip(DRIVETRAIN_ENTRIES, plugin.make_batch_components(fleet), strict=True))
    else:
        for k, name in enumerate(DRIVETRAIN_ENTRIES):
            parts[name] = MemberSteps(fleet, lambda v, k=k: plugin.make_components(v)[k])
    return parts
