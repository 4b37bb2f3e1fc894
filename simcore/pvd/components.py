"""The PVD components (``PxVehiclePVDComponent``): the last, optional step of a vehicle's or a
fleet's update."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simcore.component import Component
from simcore.context import SimulationContext

if TYPE_CHECKING:
    from simcore.pvd.recorder import PvdRecorder


class PvdComponent(Component):
    """Records its vehicle into a :class:`~simcore.pvd.recorder.PvdRecorder` once per update.

    Put it last in the sequence (``recorder.attach(vehicle)`` does) so that a frame holds the
    states at the end of the step. ``time`` is the vehicle's simulated time (s), advanced by the
    ``dt`` of each update; it is the frame's time unless the recorder's frame says otherwise.
    """

    def __init__(self, vehicle: Any, recorder: PvdRecorder, vehicle_name: str | None = None) -> None:
        self.vehicle = vehicle
        self.recorder = recorder
        #: Name of the vehicle's ``Vehicle`` object and PhysX actor (None: ``Vehicle``).
        self.vehicle_name = vehicle_name
        self.time = float(getattr(vehicle, "time", 0.0))

    def update(self, dt: float, context: SimulationContext) -> bool:
        self.time += dt
        self.recorder.record(self, dt)
        return True


class FleetPvdComponent(Component):
    """Records every member of its fleet into a :class:`~simcore.pvd.recorder.PvdRecorder` once
    per fleet update: one frame, N vehicles (``recorder.attach_fleet(fleet)`` puts it last).

    ``time`` is the fleet's simulated time (s), advanced by the ``dt`` of each update.
    """

    def __init__(self, fleet: Any, recorder: PvdRecorder) -> None:
        self.fleet = fleet
        self.recorder = recorder
        self.time = float(getattr(fleet, "time", 0.0))

    def update(self, dt: float, context: SimulationContext) -> bool:
        self.time += dt
        self.recorder.record_fleet(self, dt)
        return True
