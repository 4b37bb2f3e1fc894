"""Stingray vehicle descriptions: the SJSON parser and the ``.physics`` -> simcore mapping.

::

    from simcore.stingray import load_physics_vehicle
    tank = load_physics_vehicle("simcore/data/tank.physics")   # StingrayVehicle
    vehicle = tank.make_vehicle()                              # a simcore Vehicle on the road

See ``docs/stingray.md`` for the property-by-property mapping. The shipped examples are
:data:`EXAMPLE_CAR` (``4wheel.physics``) and :data:`EXAMPLE_TANK` (``tank.physics``).
"""

from pathlib import Path

from simcore.stingray.physics import (
    DEFAULTS,
    STINGRAY_FRAME,
    Shape,
    StingrayError,
    StingrayPhysicsFile,
    StingrayVehicle,
    StingrayWarning,
    WheelInfo,
    load_physics,
    load_physics_vehicle,
    physics_from_sjson,
)
from simcore.stingray.sjson import SjsonArray, SjsonError, SjsonObject, SjsonWarning, load, loads, plain
from simcore.stingray.smoothing import (
    DriverInputComponent,
    DriverInputParams,
    InputSmoothingParams,
    InputSmoothingState,
    SmoothedVehicleCommands,
    install_driver_inputs,
)

_DATA = Path(__file__).resolve().parent.parent / "data"
#: The shipped example car and tank.
EXAMPLE_CAR = _DATA / "4wheel.physics"
EXAMPLE_TANK = _DATA / "tank.physics"

__all__ = [
    "DEFAULTS", "EXAMPLE_CAR", "EXAMPLE_TANK", "STINGRAY_FRAME", "DriverInputComponent", "DriverInputParams",
    "InputSmoothingParams", "InputSmoothingState", "Shape", "SjsonArray", "SjsonError", "SjsonObject",
    "SjsonWarning", "SmoothedVehicleCommands", "StingrayError", "StingrayPhysicsFile", "StingrayVehicle",
    "StingrayWarning", "WheelInfo", "install_driver_inputs", "load", "load_physics", "load_physics_vehicle",
    "loads", "physics_from_sjson", "plain",
]
