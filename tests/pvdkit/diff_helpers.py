"""Crafted recording pairs for the ``pvdkit diff`` tests, written with the OmniPVD writer.

One vehicle (root) with a unique list ``wheels`` of four Wheel objects, each holding an
object-handle attribute ``tireForce`` to its TireForce object. Every Wheel is named "Wheel"
and every TireForce "TireForce", so only the object graph tells them apart — as in PhysX
recordings, where names repeat. Values are analytic functions of (frame, wheel) so a test
knows exactly what it changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pvdkit.streams import OvdFileStream
from pvdkit.types import DataType
from pvdkit.writer import OmniPvdWriter

N_WHEELS = 4
CTX = 1


def t_of(frame: int) -> int:
    """Start timestamp of frame ``frame`` in the crafted recordings."""
    return 1000 + 10 * frame


def lng_force(frame: int, wheel: int) -> float:
    return float(np.float32(100.0 * (wheel + 1) + 3.0 * frame))


@dataclass
class Spec:
    """What to vary in a crafted recording (defaults: the reference content)."""

    frames: int = 20
    first_frame: int = 0  # logical frame of the first frame written (values and timestamps follow it)
    handle_base: int = 0x7F00_0000_0000
    handle_step: int = 0x100
    wheel_creation_order: tuple[int, ...] = (0, 1, 2, 3)
    perturb: dict[tuple[int, str, int], float] = field(default_factory=dict)  # (wheel, attr, frame) -> delta
    nan: set[tuple[int, int]] = field(default_factory=set)  # (wheel, frame): lngForce = NaN
    drop_tire: int | None = None  # wheel whose TireForce is never created
    extra_attribute: bool = False  # Wheel.temperature registered and set
    retype_rotation: bool = False  # Wheel.rotationSpeed registered as FLOAT64
    stop_rotation_after: int | None = None  # Wheel.rotationSpeed not set from this frame on
    swap_tires_at: int | None = None  # from this frame, wheel 0 and 1 point at each other's TireForce
    remove_wheel_at: int | None = None  # wheel 3 removed from the vehicle's list at this frame
    gear_change: tuple[int, int] | None = None  # (frame, gear) from frame on
    label: str = "sedan"
    mode_at: tuple[int, str] | None = None  # (frame, "eSPORT") from frame on
    mode_storage: type = int  # np.uint8 / np.uint16: PxFlags written in their storage width
    timestamps: list[int] | None = None
    message_at: dict[int, str] = field(default_factory=dict)  # frame -> RECORD_MESSAGE text


def write(path: str | Path, spec: Spec | None = None) -> Path:
    """Write the crafted recording ``spec`` to ``path`` (.ovd); returns the path."""
    s = spec or Spec()
    path = Path(path)
    w = OmniPvdWriter(OvdFileStream(path))
    mode_cls = w.register_class("DriveMode")
    modes = {"eECO": 0, "eNORMAL": 1, "eSPORT": 2}
    for name, v in modes.items():
        w.register_enum_value(mode_cls, name, v)
    veh_cls = w.register_class("Vehicle")
    wheel_cls = w.register_class("Wheel")
    tire_cls = w.register_class("TireForce")
    a_speed = w.register_attribute(veh_cls, "speed", DataType.FLOAT64, 1)
    a_pos = w.register_attribute(veh_cls, "position", DataType.FLOAT32, 3)
    a_gear = w.register_attribute(veh_cls, "gear", DataType.INT32, 1)
    a_label = w.register_attribute(veh_cls, "label", DataType.STRING, 1)
    a_mode = w.register_flags_attribute(veh_cls, "mode", mode_cls)
    a_wheels = w.register_unique_list_attribute(veh_cls, "wheels", DataType.OBJECT_HANDLE)
    a_rot = w.register_attribute(wheel_cls, "rotationSpeed",
                                 DataType.FLOAT64 if s.retype_rotation else DataType.FLOAT32, 1)
    a_tire = w.register_attribute(wheel_cls, "tireForce", DataType.OBJECT_HANDLE, 1)
    a_temp = w.register_attribute(wheel_cls, "temperature", DataType.FLOAT32, 1) if s.extra_attribute else 0
    a_lng = w.register_attribute(tire_cls, "lngForce", DataType.FLOAT32, 1)
    a_lat = w.register_attribute(tire_cls, "latForce", DataType.FLOAT32, 1)

    base, step = s.handle_base, s.handle_step
    veh = base + step
    wheels = [base + step * (10 + k) for k in range(N_WHEELS)]
    tires = [base + step * (20 + k) for k in range(N_WHEELS)]
    w.create_object(CTX, veh_cls, veh, "Vehicle")
    for k in s.wheel_creation_order:
        w.create_object(CTX, wheel_cls, wheels[k], "Wheel")
        if k != s.drop_tire:
            w.create_object(CTX, tire_cls, tires[k], "TireForce")
    for k in range(N_WHEELS):
        w.add_to_unique_list_attribute(CTX, veh, a_wheels, wheels[k])
        if k != s.drop_tire:
            w.set_attribute(CTX, wheels[k], a_tire, tires[k])
    w.set_attribute(CTX, veh, a_label, s.label)
    w.set_attribute(CTX, veh, a_mode, s.mode_storage(modes["eNORMAL"]))

    def value(wheel: int, attr: str, frame: int, v: float) -> float:
        return v + s.perturb.get((wheel, attr, frame), 0.0)

    logical = range(s.first_frame, s.first_frame + s.frames)
    stamps = s.timestamps or [t_of(f) for f in logical]
    for i, f in enumerate(logical):
        w.start_frame(CTX, stamps[i])
        w.set_attribute(CTX, veh, a_speed, value(-1, "speed", f, 0.5 * f))
        w.set_attribute(CTX, veh, a_pos, np.array([value(-1, "position", f, f), 0.5, -f], np.float32))
        gear = s.gear_change[1] if s.gear_change and f >= s.gear_change[0] else 1
        if i == 0 or (s.gear_change and f == s.gear_change[0]):
            w.set_attribute(CTX, veh, a_gear, gear)
        if s.mode_at and f == s.mode_at[0]:
            w.set_attribute(CTX, veh, a_mode, s.mode_storage(modes[s.mode_at[1]]))
        if s.remove_wheel_at is not None and f == s.remove_wheel_at:
            w.remove_from_unique_list_attribute(CTX, veh, a_wheels, wheels[3])
        if s.swap_tires_at is not None and f == s.swap_tires_at:
            w.set_attribute(CTX, wheels[0], a_tire, tires[1])
            w.set_attribute(CTX, wheels[1], a_tire, tires[0])
        for k in range(N_WHEELS):
            if s.stop_rotation_after is None or f < s.stop_rotation_after:
                w.set_attribute(CTX, wheels[k], a_rot, value(k, "rotationSpeed", f, 10.0 * k + f))
            if s.extra_attribute:
                w.set_attribute(CTX, wheels[k], a_temp, 20.0 + k)
            if k != s.drop_tire:
                lng = np.nan if (k, f) in s.nan else value(k, "lngForce", f, lng_force(f, k))
                w.set_attribute(CTX, tires[k], a_lng, lng)
                w.set_attribute(CTX, tires[k], a_lat, value(k, "latForce", f, -5.0 * k))
        if f in s.message_at:
            w.record_message(CTX, s.message_at[f], "simcore/tire.py", 42, 1, tire_cls)
        w.stop_frame(CTX, stamps[i])
    for k in range(N_WHEELS):
        if k != s.drop_tire:
            w.destroy_object(CTX, tires[k])
        w.destroy_object(CTX, wheels[k])
    w.destroy_object(CTX, veh)
    w.close()
    return path


def pair(tmp_path: Path, a: Spec | None = None, b: Spec | None = None) -> tuple[Path, Path]:
    """Write A and B into ``tmp_path``."""
    return write(tmp_path / "a.ovd", a), write(tmp_path / "b.ovd", b)


TIRE = "Vehicle/wheels[{k}]/tireForce"
#: The same TireForce as reports show it (pvdkit.names: vehicle, wheel, class).
TIRE_PATH = "Vehicle/wheel {k}/TireForce"
WHEEL = "Vehicle/wheels[{k}]"
