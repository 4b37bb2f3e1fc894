"""Generated recordings for tests and benchmarks, written through the public writer API.

* :func:`write_every_command` — a small stream that uses every command, all 14 data types,
  inheritance, class attributes reached through multi-handle paths, unique lists (add and
  remove), messages, two contexts and destroyed objects. The reference input for round trips.
* :func:`write_large_recording` — a vehicle-like recording of a requested size (vehicles and
  wheels × float state attributes × frames) made with the bulk path; for throughput benchmarks
  and large-file tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvdkit.streams import WriteStream
from pvdkit.types import DataType
from pvdkit.writer import FrameBlock, OmniPvdWriter

#: Context handles used by :func:`write_every_command`.
EVERY_COMMAND_CONTEXTS = (1, 0x5555_0000_0000_0001)


def write_every_command(stream: WriteStream, *, close: bool = True) -> dict[str, int]:
    """Write a small recording that exercises every command and data type; returns its handles.

    The returned dict maps readable names (``"class.Thing"``, ``"attr.Thing.i8"``,
    ``"object.thing_a"`` …) to handles so tests can look values up. The stream is closed at the
    end unless ``close=False``.
    """
    h: dict[str, int] = {}
    w = OmniPvdWriter(stream)
    ctx, ctx2 = EVERY_COMMAND_CONTEXTS

    # An enum (its values are REGISTER_ATTRIBUTE with type ENUM_VALUE) and a class hierarchy.
    h["class.Color"] = color = w.register_class("Color")
    for name, value in (("eRED", 1), ("eGREEN", 2), ("eBLUE", 4), ("eALL", 0xFFFFFFFF)):
        h[f"enum.Color.{name}"] = w.register_enum_value(color, name, value)
    h["class.Base"] = base = w.register_class("Base")
    h["attr.Base.name"] = w.register_attribute(base, "name", DataType.STRING, 1)
    h["class.Thing"] = thing = w.register_class("Thing", base)
    h["class.Vec3"] = vec3 = w.register_class("Vec3")
    h["attr.Vec3.xyz"] = w.register_attribute(vec3, "xyz", DataType.FLOAT32, 3)
    h["class.Pose"] = pose = w.register_class("Pose")
    h["attr.Pose.position"] = w.register_class_attribute(pose, "position", vec3)
    h["attr.Pose.yaw"] = w.register_attribute(pose, "yaw", DataType.FLOAT64, 1)

    # One plain attribute per settable data type, varied element counts (0 = variable).
    plain = {
        "i8": (DataType.INT8, 2), "i16": (DataType.INT16, 1), "i32": (DataType.INT32, 3),
        "i64": (DataType.INT64, 1), "u8": (DataType.UINT8, 4), "u16": (DataType.UINT16, 1),
        "u32": (DataType.UINT32, 0), "u64": (DataType.UINT64, 1), "f32": (DataType.FLOAT32, 4),
        "f64": (DataType.FLOAT64, 2), "label": (DataType.STRING, 1),
        "target": (DataType.OBJECT_HANDLE, 1),
    }
    for name, (dtype, count) in plain.items():
        h[f"attr.Thing.{name}"] = w.register_attribute(thing, name, dtype, count)
    h["attr.Thing.colors"] = w.register_flags_attribute(thing, "colors", color)
    h["attr.Thing.pose"] = w.register_class_attribute(thing, "pose", pose)
    h["attr.Thing.children"] = w.register_unique_list_attribute(thing, "children", DataType.OBJECT_HANDLE)
    h["attr.Thing.tags"] = w.register_unique_list_attribute(thing, "tags", DataType.STRING)

    a, b, c = 0x7F00_0000_1000, 0x7F00_0000_2000, 0x7F00_0000_3000
    h["object.thing_a"], h["object.thing_b"], h["object.base_c"] = a, b, c
    w.create_object(ctx, thing, a, "thing_a")
    w.create_object(ctx, thing, b, "Thing β ünïcode")
    w.create_object(ctx2, base, c, None)
    w.set_attribute(ctx, a, h["attr.Base.name"], "first thing")
    w.set_attribute(ctx2, c, h["attr.Base.name"], b"raw \xff bytes")

    path_xyz = [h["attr.Thing.pose"], h["attr.Pose.position"], h["attr.Vec3.xyz"]]
    path_yaw = [h["attr.Thing.pose"], h["attr.Pose.yaw"]]
    for frame in range(3):
        w.start_frame(ctx, 1000 + frame)
        w.set_attribute(ctx, a, h["attr.Thing.i8"], [-128 + frame, 127])
        w.set_attribute(ctx, a, h["attr.Thing.i16"], -32768 + frame)
        w.set_attribute(ctx, a, h["attr.Thing.i32"], np.array([frame, -frame, 2**31 - 1]))
        w.set_attribute(ctx, a, h["attr.Thing.i64"], -(2**63) + frame)
        w.set_attribute(ctx, a, h["attr.Thing.u8"], np.arange(4, dtype=np.uint8) + frame)
        w.set_attribute(ctx, a, h["attr.Thing.u16"], 65535 - frame)
        w.set_attribute(ctx, a, h["attr.Thing.u32"], list(range(frame)))  # variable length, may be empty
        w.set_attribute(ctx, a, h["attr.Thing.u64"], 2**64 - 1 - frame)
        w.set_attribute(ctx, a, h["attr.Thing.f32"], np.array([0.5, -1.25, np.inf, frame], np.float32))
        w.set_attribute(ctx, a, h["attr.Thing.f64"], (np.pi * frame, -0.0))
        w.set_attribute(ctx, a, h["attr.Thing.label"], f"frame {frame}")
        w.set_attribute(ctx, a, h["attr.Thing.target"], b if frame % 2 else c)
        w.set_attribute(ctx, a, h["attr.Thing.colors"], 1 << frame)
        w.set_attribute(ctx, b, h["attr.Thing.colors"], np.uint8(3))  # PxFlags with u8 storage
        w.set_attribute(ctx, a, path_xyz, [frame, frame + 0.5, -frame])
        w.set_attribute(ctx, b, path_yaw, 0.1 * frame)
        w.set_attribute_batch(ctx, [a, b], h["attr.Thing.f64"], np.full((2, 2), frame, np.float64))
        if frame == 0:
            w.add_to_unique_list_attribute(ctx, a, h["attr.Thing.children"], b)
            w.add_to_unique_list_attribute(ctx, a, h["attr.Thing.children"], c)
            w.add_to_unique_list_attribute(ctx, a, h["attr.Thing.tags"], "red")
        if frame == 1:
            w.remove_from_unique_list_attribute(ctx, a, h["attr.Thing.children"], b)
            w.remove_from_unique_list_attribute(ctx, a, h["attr.Thing.tags"], "red")
            w.record_message(ctx, "wheel slipped", "simcore/tire.py", 42, 2, thing)
            w.record_message(ctx, "", "", 0, 0)
        w.stop_frame(ctx, 1000 + frame)
        w.start_frame(ctx2, 50 + frame)
        w.stop_frame(ctx2, 51 + frame)
    w.destroy_object(ctx, b)
    w.destroy_object(ctx2, c)
    w.flush()
    if close:
        w.close()
    return h


@dataclass(frozen=True)
class LargeRecordingInfo:
    """What :func:`write_large_recording` wrote."""

    bytes_written: int
    frames: int
    vehicles: int
    wheels: int
    set_attribute_commands: int
    vehicle_handles: np.ndarray
    wheel_handles: np.ndarray


def write_large_recording(
    stream: WriteStream,
    target_bytes: int,
    *,
    vehicles: int = 16,
    wheels_per_vehicle: int = 4,
    frames_per_call: int = 256,
    seed: int = 0,
    close: bool = True,
) -> LargeRecordingInfo:
    """A vehicle-like recording of at least ``target_bytes``, written with the bulk path.

    Classes ``Vehicle`` (pose, velocities, engine speed, gear) and ``Wheel`` (rotation speed and
    angle, steer angle, jounce, tire force); parameters (mass, radius) set once; then frames at
    60 Hz (timestamps in microseconds) until the stream reaches ``target_bytes``; wheels are
    destroyed, then vehicles. Values are smooth functions of time plus seeded noise.
    """
    rng = np.random.default_rng(seed)
    w = OmniPvdWriter(stream)
    ctx = 1
    veh_cls = w.register_class("Vehicle")
    wheel_cls = w.register_class("Wheel")
    v_attr = {
        "position": w.register_attribute(veh_cls, "position", DataType.FLOAT32, 3),
        "orientation": w.register_attribute(veh_cls, "orientation", DataType.FLOAT32, 4),
        "linearVelocity": w.register_attribute(veh_cls, "linearVelocity", DataType.FLOAT32, 3),
        "angularVelocity": w.register_attribute(veh_cls, "angularVelocity", DataType.FLOAT32, 3),
        "engineSpeed": w.register_attribute(veh_cls, "engineSpeed", DataType.FLOAT32, 1),
        "gear": w.register_attribute(veh_cls, "gear", DataType.INT32, 1),
    }
    mass = w.register_attribute(veh_cls, "mass", DataType.FLOAT32, 1)
    wheels_attr = w.register_unique_list_attribute(veh_cls, "wheels", DataType.OBJECT_HANDLE)
    w_attr = {
        "rotationSpeed": w.register_attribute(wheel_cls, "rotationSpeed", DataType.FLOAT32, 1),
        "rotationAngle": w.register_attribute(wheel_cls, "rotationAngle", DataType.FLOAT32, 1),
        "steerAngle": w.register_attribute(wheel_cls, "steerAngle", DataType.FLOAT32, 1),
        "jounce": w.register_attribute(wheel_cls, "jounce", DataType.FLOAT32, 1),
        "tireForce": w.register_attribute(wheel_cls, "tireForce", DataType.FLOAT32, 3),
    }
    radius = w.register_attribute(wheel_cls, "radius", DataType.FLOAT32, 1)

    veh = np.arange(1, vehicles + 1, dtype=np.uint64) * np.uint64(0x1000) + np.uint64(0x7F00_0000_0000)
    nw = vehicles * wheels_per_vehicle
    whl = np.arange(1, nw + 1, dtype=np.uint64) * np.uint64(0x100) + np.uint64(0x7E00_0000_0000)
    for i, v in enumerate(veh):
        w.create_object(ctx, veh_cls, int(v), f"/World/Vehicle{i}")
        for k in range(wheels_per_vehicle):
            handle = int(whl[i * wheels_per_vehicle + k])
            w.create_object(ctx, wheel_cls, handle, f"/World/Vehicle{i}/Wheel{k}")
            w.add_to_unique_list_attribute(ctx, int(v), wheels_attr, handle)
    w.set_attribute_batch(ctx, veh, mass, rng.uniform(1200, 2500, vehicles).astype(np.float32))
    w.set_attribute_batch(ctx, whl, radius, np.full(nw, 0.35, np.float32))

    frames = 0
    frame_bytes = 0
    phase_v = rng.uniform(0, 2 * np.pi, vehicles)[None, :]
    phase_w = rng.uniform(0, 2 * np.pi, nw)[None, :]
    while w.bytes_written < target_bytes:
        # One frame first to learn the frame size, then chunks that stop near the target.
        remaining = target_bytes - w.bytes_written
        n = 1 if not frame_bytes else min(frames_per_call, -(-remaining // frame_bytes))
        before = w.bytes_written
        f = np.arange(frames, frames + n)
        t = (f / 60.0)[:, None]
        sv, sw = np.sin(t + phase_v), np.sin(3 * t + phase_w)
        z = np.zeros_like(sv)
        noise = rng.standard_normal((len(f), vehicles, 3)).astype(np.float32) * 0.01
        half = 0.5 * 0.1 * sv
        vehicle_cols = {
            v_attr["position"]: np.stack([10 * sv, 0.5 + z, 20 * t + z], -1) + noise,
            v_attr["orientation"]: np.stack([z, np.sin(half), z, np.cos(half)], -1),
            v_attr["linearVelocity"]: np.stack([10 * np.cos(t + phase_v), z, 20 + z], -1),
            v_attr["angularVelocity"]: np.stack([z, 0.1 * np.cos(t + phase_v), z], -1),
            v_attr["engineSpeed"]: 300 + 100 * sv,
            v_attr["gear"]: (2 + np.rint(sv)).astype(np.int32),
        }
        wheel_cols = {
            w_attr["rotationSpeed"]: 57 + 5 * sw,
            w_attr["rotationAngle"]: np.mod(57 * t + phase_w, 2 * np.pi),
            w_attr["steerAngle"]: 0.2 * sw,
            w_attr["jounce"]: 0.1 + 0.02 * sw,
            w_attr["tireForce"]: np.stack([100 * sw, 4000 + 50 * sw, 500 * sw], -1),
        }
        w.write_frames(ctx, f * 16667, [FrameBlock(veh, vehicle_cols), FrameBlock(whl, wheel_cols)])
        frames += n
        frame_bytes = (w.bytes_written - before) // n
    for handle in whl:
        w.destroy_object(ctx, int(handle))
    for handle in veh:
        w.destroy_object(ctx, int(handle))
    w.flush()
    if close:
        w.close()
    return LargeRecordingInfo(
        bytes_written=w.bytes_written, frames=frames, vehicles=vehicles, wheels=nw,
        set_attribute_commands=frames * (vehicles * len(v_attr) + nw * len(w_attr)) + vehicles + nw,
        vehicle_handles=veh, wheel_handles=whl,
    )
