"""Built-in vehicles. The reference car is PhysX's snippet sedan (``simcore/data/Base.json`` +
``DirectDrive.json``): 2014 kg, four wheels, direct drive, steering on the front axle with
Ackermann correction. Its files declare a Y-up, Z-forward frame in metres."""

from __future__ import annotations

from simcore.frame import Frame, Scale
from simcore.io.physx_json import load_physx_vehicle
from simcore.vehicle import VehicleParams

#: Preset name -> (drivetrain kind, reader options).
PRESETS: dict[str, tuple[str, dict[str, str]]] = {
    "sedan": ("direct", {}),
    "sedan_direct": ("direct", {}),
    "sedan_engine": ("engine", {"differential": "multi_wheel"}),
    "sedan_engine_4wd": ("engine", {"differential": "four_wheel"}),
}


def load_preset(
    name: str = "sedan", frame: Frame | None = None, scale: Scale | float | None = None
) -> VehicleParams:
    """Params of a built-in vehicle (see :data:`PRESETS`), optionally converted to ``frame``/``scale``.

    Without ``frame``/``scale`` the params stay in the data's own frame (Y up, Z forward, metres).
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; available: {sorted(PRESETS)}")
    kind, options = PRESETS[name]
    return load_physx_vehicle(drivetrain=kind, frame=frame, scale=scale, **options)


def default_vehicle(frame: Frame | None = None, scale: Scale | float | None = None) -> VehicleParams:
    """The reference direct-drive sedan (PhysX's snippet car), in ``frame``/``scale`` if given."""
    return load_preset("sedan", frame, scale)
