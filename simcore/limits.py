"""Hard limits of the simulation core, the same as PhysX Vehicle2's ``PxVehicleLimits``."""

MAX_NB_WHEELS = 20
MAX_NB_AXLES = MAX_NB_WHEELS
#: ``PxVehicleComponentSequenceLimits``
MAX_NB_COMPONENTS = 64
MAX_NB_SUBGROUPS = 16
