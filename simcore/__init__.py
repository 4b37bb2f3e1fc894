"""simcore: a vehicle simulation core in numpy with PhysX Vehicle2 architecture and equations."""

from typing import Any

#: Names importable from ``simcore`` itself, loaded on first use (``import simcore`` stays cheap).
_LAZY = {
    "Vehicle": "simcore.vehicle",
    "VehicleParams": "simcore.vehicle",
    "Fleet": "simcore.fleet.fleet",
    "Scene": "simcore.fleet.fleet",
    "load_preset": "simcore.presets",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'simcore' has no attribute {name!r}")
