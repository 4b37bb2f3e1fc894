"""Which batch component runs each entry of a fleet's sequence.

Every built-in part has a batch component (one compiled kernel over the fleet). A part without
one — a user's drivetrain plug-in — runs its per-vehicle component on each member in turn
(:class:`~simcore.fleet.fleet.MemberSteps`): correct, but at the per-vehicle cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simcore.component import Component
from simcore.drivetrain.direct_drive import (
    DirectDriveActuationStateComponent,
    DirectDriveCommandResponseComponent,
    DirectDrivetrainComponent,
)
from simcore.rigid_body.components import (
    RigidBodyBeginComponent,
    RigidBodyComponent,
    VehicleConstraintComponent,
)
from simcore.road.components import RoadGeometryQueryComponent
from simcore.suspension.components import SuspensionComponent
from simcore.tire.components import TireComponent
from simcore.vehicle import drivetrain_plugin
from simcore.wheel.components import WheelComponent

if TYPE_CHECKING:
    from simcore.fleet.fleet import Fleet


def batch_components(fleet: Fleet) -> dict[str, Component]:
    """Name -> component for the default sequence of ``fleet``."""
    from simcore.fleet.fleet import MemberSteps

    def members(make: Any) -> Component:
        return MemberSteps(fleet, make)

    plugin = drivetrain_plugin(fleet.drivetrain)
    per_vehicle: dict[str, Any] = {
        "rigid_body_begin": RigidBodyBeginComponent,
        "road_geometry": RoadGeometryQueryComponent,
        "suspension": SuspensionComponent,
        "tire": TireComponent,
        "constraints": VehicleConstraintComponent,
        "rigid_body": RigidBodyComponent,
        "wheel": WheelComponent,
    }
    if fleet.drivetrain == "direct":
        per_vehicle |= {"command_response": DirectDriveCommandResponseComponent,
                        "actuation": DirectDriveActuationStateComponent,
                        "drivetrain": DirectDrivetrainComponent}
    else:
        per_vehicle |= {name: (lambda v, k=k: plugin.make_components(v)[k])
                        for k, name in enumerate(("command_response", "actuation", "drivetrain"))}
    return {name: members(make) for name, make in per_vehicle.items()}
