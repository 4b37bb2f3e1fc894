"""Replaying real PhysX recordings: their vehicles rebuilt as simcore params, with the recorded
per-step commands and states to drive and check simcore against (see :mod:`.recorded`)."""

from simcore.replay.recorded import (
    RecordedActor,
    RecordedRun,
    RecordedScene,
    RecordedVehicle,
    RecordingError,
    vehicles_from_recording,
)

__all__ = [
    "RecordedActor",
    "RecordedRun",
    "RecordedScene",
    "RecordedVehicle",
    "RecordingError",
    "vehicles_from_recording",
]
