"""simcore's OmniPVD recording: PhysX Vehicle2's schema declared once, and the PVD component.

``PvdRecorder(writer).attach(vehicle)`` records a vehicle (see :mod:`simcore.pvd.recorder`);
the schema is :data:`simcore.pvd.schema.SCHEMA` (see ``docs/pvd-schema.md``).
"""

from simcore.pvd.components import FleetPvdComponent, PvdComponent
from simcore.pvd.graph import PvdGraphError
from simcore.pvd.recorder import PvdRecorder
from simcore.pvd.schema import SCHEMA

__all__ = ["SCHEMA", "FleetPvdComponent", "PvdComponent", "PvdGraphError", "PvdRecorder"]
