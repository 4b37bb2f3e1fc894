"""Batches of vehicles stepped together by compiled kernels over (vehicle, wheel).

A :class:`~simcore.fleet.fleet.Fleet` holds N vehicles that share a topology (wheel count,
drivetrain kind) and may differ in every param value. Its states are Vehicle2's states with a
leading vehicle axis (:mod:`simcore.fleet.states`); its component sequence has the same named
entries as a :class:`~simcore.vehicle.Vehicle`'s, each a *batch component*:

.. code-block:: python

    class XBatchComponent(Component):
        def __init__(self, fleet): ...      # asks the fleet for the data it uses, calls repack()
        def repack(self): ...               # packs fleet.params (one per vehicle) into stacked arrays
        def update(self, dt, context): ...  # one compiled kernel call over the whole batch

A batch component reads ``fleet.params`` (tuple of VehicleParams), ``fleet.states``
(:class:`~simcore.fleet.states.FleetStates`), ``fleet.road``, ``fleet.context``,
``fleet.n_vehicles``, ``fleet.nb_wheels`` and ``fleet.frame``; it keeps references to the state
arrays (never rebound) and writes its results in place.
"""

from simcore.fleet.fleet import Fleet, FleetCommands, Scene, topology
from simcore.fleet.states import FleetStates, StateBatch

__all__ = ["Fleet", "FleetCommands", "FleetStates", "Scene", "StateBatch", "topology"]
