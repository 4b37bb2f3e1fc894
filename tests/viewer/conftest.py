"""Viewer tests run offscreen: the platform is chosen before anything imports Qt."""

from __future__ import annotations

import csv
import os
from pathlib import Path

os.environ["QT_QPA_PLATFORM"] = "offscreen"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURE = DATA / "vehicles_short.ovd"
READBACK = DATA / "vehicles_short_readback.csv"

#: PhysX writes two PVD frames per step: the Vehicle2 state of step i is frame 2i (0-based).
VEHICLE_NAMES = ("Basic", "Standard", "Tank", "Raw")
WHEEL_NAMES = ("FrontLeftWheel", "FrontRightWheel", "RearLeftWheel", "RearRightWheel")


@pytest.fixture(scope="session")
def readback() -> dict[str, np.ndarray]:
    """The fixture's readback CSV (values read through PhysX's own API), by column."""
    with open(READBACK, newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


@pytest.fixture(scope="session")
def fixture_session():
    """The PhysX fixture opened once (model-layer tests must not close it)."""
    from viewer.model.session import RecordingSession

    return RecordingSession.open(FIXTURE)


def write_recording(path: Path, frames: int, step_ns: int, *, scale: float = 1.0, up: str = "z") -> Path:
    """A tiny recording: one object ``probe`` whose ``value`` is its frame timestamp in seconds × scale,
    and one vehicle (``Vehicle.wheels`` → 2 ``Wheel`` objects) driving along the ground at 10 m/s
    with ``up`` the vertical axis (no gravity recorded, so the viewer must infer it)."""
    from pvdkit.streams import OvdFileStream
    from pvdkit.types import DataType
    from pvdkit.writer import OmniPvdWriter

    w = OmniPvdWriter(OvdFileStream(path))
    probe = w.register_class("Probe")
    value = w.register_attribute(probe, "value", DataType.FLOAT64, 1)
    veh = w.register_class("Vehicle")
    pos = w.register_attribute(veh, "position", DataType.FLOAT32, 3)
    quat = w.register_attribute(veh, "orientation", DataType.FLOAT32, 4)
    wheels = w.register_unique_list_attribute(veh, "wheels", DataType.OBJECT_HANDLE)
    wheel = w.register_class("Wheel")
    speed = w.register_attribute(wheel, "rotationSpeed", DataType.FLOAT32, 1)
    ctx = 1
    w.create_object(ctx, probe, 0x10, "probe")
    w.create_object(ctx, veh, 0x20, "car")
    for k in range(2):
        w.create_object(ctx, wheel, 0x30 + k, f"car/wheel{k}")
        w.add_to_unique_list_attribute(ctx, 0x20, wheels, 0x30 + k)
    up_i = "xyz".index(up)
    fwd_i = (up_i + 1) % 3
    for f in range(frames):
        t = (f + 1) * step_ns * 1e-9
        w.start_frame(ctx, (f + 1) * step_ns)
        w.set_attribute(ctx, 0x10, value, t * scale)
        p = np.zeros(3, np.float32)
        p[fwd_i] = 10.0 * t
        p[up_i] = 0.5
        p[(up_i + 2) % 3] = 0.01 * np.sin(t)
        w.set_attribute(ctx, 0x20, pos, p)
        w.set_attribute(ctx, 0x20, quat, np.array([0, 0, 0, 1], np.float32))
        for k in range(2):
            w.set_attribute(ctx, 0x30 + k, speed, np.float32(10 * k + f))
        w.stop_frame(ctx, (f + 1) * step_ns)
    w.close()
    return path


def close_windows(made: list) -> None:
    """Destroy a test's windows (their plots, menus and actions) at its end, after their loaders:
    left to a later garbage collection, PySide deletes them during the next test, and a loader
    thread emitting its progress then can deadlock with that deletion (seen once in CI: ~QObject
    waiting for a mutex the emitting thread held while it waited for the GIL)."""
    import gc

    from PySide6.QtWidgets import QApplication

    for win in made:
        win.wait_for_loaders()
        win.close()
    made.clear()
    gc.collect()
    QApplication.processEvents()
