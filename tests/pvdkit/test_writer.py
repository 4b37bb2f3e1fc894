"""OmniPvdWriter: PhysX's bytes and handle numbering for every call, value checks, bulk paths."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from pvdkit.ovd import iter_decode, tokenize
from pvdkit.ovd.codec import SetAttribute, encode_header
from pvdkit.streams import MemoryStream, OvdFileStream, WriteStream
from pvdkit.types import DataType, PvdError
from pvdkit.writer import AttributeKind, FrameBlock, OmniPvdWriter

HEADER = struct.pack("<III", 0, 4, 0)


def _s(text: bytes) -> bytes:
    return struct.pack("<H", len(text)) + text


class Recorder:
    """A writer on a memory stream plus "bytes written by the last call"."""

    def __init__(self, **kw):
        self.stream = MemoryStream()
        self.w = OmniPvdWriter(self.stream, **kw)
        self._mark = 0

    def last(self) -> bytes:
        data = self.stream.getvalue()
        out, self._mark = data[self._mark:], len(data)
        return out


@pytest.fixture
def rec():
    r = Recorder()
    return r


def test_header_precedes_the_first_command_only(rec):
    assert rec.stream.getvalue() == b""
    assert rec.w.register_class("A") == 1
    assert rec.last() == HEADER + struct.pack("<BII", 1, 1, 0) + _s(b"A")
    assert rec.w.register_class("B", 1) == 2
    assert rec.last() == struct.pack("<BII", 1, 2, 1) + _s(b"B")


def test_writer_that_writes_nothing_writes_no_header():
    s = MemoryStream()
    with OmniPvdWriter(s):
        pass
    assert s.getvalue() == b"" and s.closed


def test_every_command_matches_hand_assembled_bytes(rec):
    w = rec.w
    enum = w.register_class("Color")
    rec.last()
    assert w.register_enum_value(enum, "eRED", 1) == 1
    assert rec.last() == struct.pack("<BIIHI", 3, enum, 1, 12, 1) + _s(b"eRED")
    body = w.register_class("Body")
    assert rec.last() == struct.pack("<BII", 1, 2, 0) + _s(b"Body")
    assert w.register_attribute(body, "pos", DataType.FLOAT32, 3) == 2
    assert rec.last() == struct.pack("<BIIHI", 3, body, 2, 8, 3) + _s(b"pos")
    assert w.register_flags_attribute(body, "colors", enum) == 3
    assert rec.last() == struct.pack("<BIIHI", 3, body, 3, 13, enum) + _s(b"colors")
    vec = w.register_class("Vec")
    rec.last()
    assert w.register_attribute(vec, "v", DataType.FLOAT64, 2) == 4
    rec.last()
    assert w.register_class_attribute(body, "offset", vec) == 5
    assert rec.last() == struct.pack("<BIII", 4, body, 5, vec) + _s(b"offset")
    assert w.register_unique_list_attribute(body, "kids", DataType.OBJECT_HANDLE) == 6
    assert rec.last() == struct.pack("<BIIH", 5, body, 6, 11) + _s(b"kids")

    w.create_object(7, body, 0xDEAD, "car")
    assert rec.last() == struct.pack("<BQIQ", 9, 7, body, 0xDEAD) + _s(b"car")
    w.create_object(7, body, 0xBEEF, None)
    assert rec.last() == struct.pack("<BQIQH", 9, 7, body, 0xBEEF, 0)
    w.start_frame(7, 100)
    assert rec.last() == struct.pack("<BQQ", 11, 7, 100)
    w.set_attribute(7, 0xDEAD, 2, np.array([1.0, 2.0, 3.0]))
    assert rec.last() == struct.pack("<BQQBII3f", 6, 7, 0xDEAD, 1, 2, 12, 1.0, 2.0, 3.0)
    w.set_attribute(7, 0xDEAD, [5, 4], [0.5, -2])
    assert rec.last() == struct.pack("<BQQB2II2d", 6, 7, 0xDEAD, 2, 5, 4, 16, 0.5, -2.0)
    w.set_attribute(7, 0xDEAD, 3, 5)
    assert rec.last() == struct.pack("<BQQBIII", 6, 7, 0xDEAD, 1, 3, 4, 5)
    w.add_to_unique_list_attribute(7, 0xDEAD, 6, 0xBEEF)
    assert rec.last() == struct.pack("<BQQBIIQ", 7, 7, 0xDEAD, 1, 6, 8, 0xBEEF)
    w.remove_from_unique_list_attribute(7, 0xDEAD, 6, 0xBEEF)
    assert rec.last() == struct.pack("<BQQBIIQ", 8, 7, 0xDEAD, 1, 6, 8, 0xBEEF)
    w.set_attribute_bytes(7, 0xDEAD, 2, b"\x01\x02")
    assert rec.last() == struct.pack("<BQQBII", 6, 7, 0xDEAD, 1, 2, 2) + b"\x01\x02"
    w.record_message(7, "slip", "tire.py", 12, 3, body)
    assert rec.last() == struct.pack("<BQ", 13, 7) + _s(b"slip") + _s(b"tire.py") + struct.pack(
        "<III", 12, 3, body)
    w.record_message(7, None, None, 0, 0)
    assert rec.last() == struct.pack("<BQHHIII", 13, 7, 0, 0, 0, 0, 0)
    w.stop_frame(7, 101)
    assert rec.last() == struct.pack("<BQQ", 12, 7, 101)
    w.destroy_object(7, 0xDEAD)
    assert rec.last() == struct.pack("<BQQ", 10, 7, 0xDEAD)


def test_string_attribute_bytes(rec):
    c = rec.w.register_class("A")
    a = rec.w.register_attribute(c, "name", DataType.STRING, 1)
    rec.last()
    rec.w.set_attribute(0, 1, a, "wheel ü")
    payload = "wheel ü".encode()
    assert rec.last() == struct.pack("<BQQBII", 6, 0, 1, 1, a, len(payload)) + payload
    rec.w.set_attribute(0, 1, a, b"/World/Basic\x00")  # PhysX includes the NUL
    assert rec.last().endswith(b"/World/Basic\x00")


@pytest.mark.parametrize("dt", list(DataType))
def test_all_fourteen_data_types_encode_little_endian(dt):
    r = Recorder()
    w = r.w
    enum = w.register_class("E")
    c = w.register_class("C")
    if dt == DataType.ENUM_VALUE:
        h = w.register_enum_value(enum, "eV", 0x01020304)
        assert r.last()[-(2 + 2 + 4 + 2):] == struct.pack("<HIH", 12, 0x01020304, 2) + b"eV"
        assert w.attribute_info(h).kind == AttributeKind.ENUM_VALUE
        return
    if dt == DataType.FLAGS_WORD:
        h = w.register_flags_attribute(c, "f", enum)
        values, expected = 0x0A0B0C0D, struct.pack("<I", 0x0A0B0C0D)
    elif dt == DataType.STRING:
        h = w.register_attribute(c, "s", dt, 1)
        values, expected = "abc", b"abc"
    else:
        h = w.register_attribute(c, "x", dt, 2)
        values = np.array([1, 2], dtype=dt.numpy_dtype)
        expected = values.astype(dt.numpy_dtype.newbyteorder("<")).tobytes()
    r.last()
    w.set_attribute(1, 2, h, values)
    assert r.last() == struct.pack("<BQQBII", 6, 1, 2, 1, h, len(expected)) + expected


def test_handles_count_like_physx_with_one_shared_attribute_counter(rec):
    w = rec.w
    e = w.register_class("E")
    a = w.register_class("A", e)
    assert (e, a) == (1, 2)
    got = [
        w.register_enum_value(e, "x", 1),
        w.register_attribute(a, "p", DataType.INT32, 1),
        w.register_flags_attribute(a, "f", e),
        w.register_class_attribute(a, "c", e),
        w.register_unique_list_attribute(a, "l", DataType.UINT8),
        w.register_attribute(a, "q", DataType.INT8, 0),
    ]
    assert got == [1, 2, 3, 4, 5, 6]
    assert w.register_class("B") == 3


def test_value_conversion_and_errors(rec):
    w = rec.w
    c = w.register_class("Car")
    i8 = w.register_attribute(c, "gear", DataType.INT8, 2)
    f32 = w.register_attribute(c, "pos", DataType.FLOAT32, 3)
    u64 = w.register_attribute(c, "ptr", DataType.UINT64, 1)
    var = w.register_attribute(c, "ids", DataType.UINT32, 0)
    rec.last()
    w.set_attribute(0, 1, i8, [1.0, -2.0])  # integral floats convert exactly
    assert rec.last()[-2:] == struct.pack("<bb", 1, -2)
    w.set_attribute(0, 1, u64, 2**64 - 1)
    assert rec.last()[-8:] == b"\xff" * 8
    w.set_attribute(0, 1, var, [])
    assert rec.last()[-4:] == struct.pack("<I", 0)
    w.set_attribute(0, 1, var, np.arange(5))
    assert rec.last()[-20:] == np.arange(5, dtype="<u4").tobytes()
    w.set_attribute(0, 1, f32, np.float64([[1], [2], [3]]))  # any shape with 3 elements
    assert rec.last()[-12:] == struct.pack("<3f", 1, 2, 3)

    with pytest.raises(PvdError, match=r"Car\.pos expects 3 × FLOAT32, got 2 values"):
        w.set_attribute(0, 1, f32, [1, 2])
    with pytest.raises(PvdError, match=r"Car\.gear .*range 1\.\.300 does not fit INT8"):
        w.set_attribute(0, 1, i8, [1, 300])
    with pytest.raises(PvdError, match=r"does not convert exactly to INT8"):
        w.set_attribute(0, 1, i8, [1.5, 2])
    with pytest.raises(PvdError, match=r"Car\.ptr .* does not fit"):
        w.set_attribute(0, 1, u64, -1)
    with pytest.raises(PvdError, match="set_attribute_bytes"):
        w.set_attribute(0, 1, f32, b"\0" * 12)
    with pytest.raises(PvdError, match="expects 3 × FLOAT32, got str"):
        w.set_attribute(0, 1, f32, "1 2 3")
    with pytest.raises(PvdError, match="does not convert exactly"):
        w.set_attribute(0, 1, f32, ["a", "b", "c"])
    with pytest.raises(PvdError, match="attribute handle 99 is not registered"):
        w.set_attribute(0, 1, 99, 1.0)
    assert rec.last() == b""  # nothing was written by the failed calls


def test_flags_keep_numpy_storage_width(rec):
    w = rec.w
    e = w.register_class("Flag")
    c = w.register_class("Shape")
    f = w.register_flags_attribute(c, "flags", e)
    rec.last()
    w.set_attribute(0, 1, f, np.uint8(5))
    assert rec.last()[-5:] == struct.pack("<IB", 1, 5)
    w.set_attribute(0, 1, f, np.uint16(5))
    assert rec.last()[-6:] == struct.pack("<IH", 2, 5)
    w.set_attribute(0, 1, f, 5)
    assert rec.last()[-8:] == struct.pack("<II", 4, 5)


def test_paths_through_class_attributes(rec):
    w = rec.w
    vec = w.register_class("Vec3")
    xyz = w.register_attribute(vec, "xyz", DataType.FLOAT32, 3)
    pose = w.register_class("Pose")
    pos = w.register_class_attribute(pose, "position", vec)
    yaw = w.register_attribute(pose, "yaw", DataType.FLOAT64, 1)
    base = w.register_class("Base")
    inner = w.register_class_attribute(base, "pose", pose)
    derived = w.register_class("Derived", base)
    lst = w.register_unique_list_attribute(derived, "l", DataType.UINT8)
    rec.last()
    w.set_attribute(3, 9, [inner, pos, xyz], (1, 2, 3))
    assert rec.last() == struct.pack("<BQQB3II3f", 6, 3, 9, 3, inner, pos, xyz, 12, 1, 2, 3)
    with pytest.raises(PvdError, match=r"Base\.pose\.position\.xyz expects 3 × FLOAT32, got 1 value"):
        w.set_attribute(3, 9, [inner, pos, xyz], 1.0)
    with pytest.raises(PvdError, match=r"\(class attribute\) cannot be set"):
        w.set_attribute(3, 9, [inner, pos], 1.0)
    with pytest.raises(PvdError, match="'yaw' \\(attribute\\) is not a class attribute"):
        w.set_attribute(3, 9, [yaw, xyz], 1.0)
    with pytest.raises(PvdError, match="'yaw' belongs to class 'Pose', not to 'Vec3'"):
        w.set_attribute(3, 9, [inner, pos, yaw], 1.0)
    with pytest.raises(PvdError, match="use add_to/remove_from_unique_list_attribute"):
        w.set_attribute(3, 9, lst, 1)
    with pytest.raises(PvdError, match="not a unique-list attribute"):
        w.add_to_unique_list_attribute(3, 9, xyz, 1)
    with pytest.raises(PvdError, match="1..255 handles"):
        w.set_attribute(3, 9, [], 1)


def test_registration_errors(rec):
    w = rec.w
    c = w.register_class("C")
    with pytest.raises(PvdError, match="base class handle 5 is not registered"):
        w.register_class("D", 5)
    with pytest.raises(PvdError, match="register_enum_value"):
        w.register_attribute(c, "e", DataType.ENUM_VALUE, 1)
    with pytest.raises(PvdError, match="register_flags_attribute"):
        w.register_attribute(c, "f", DataType.FLAGS_WORD, 1)
    with pytest.raises(PvdError, match="unknown data type 20"):
        w.register_attribute(c, "x", 20, 1)
    with pytest.raises(PvdError, match="class handle 9 is not a registered class"):
        w.register_attribute(9, "x", DataType.INT8, 1)
    with pytest.raises(PvdError, match="enum class handle 9"):
        w.register_flags_attribute(c, "x", 9)
    with pytest.raises(PvdError, match="object handle must be an integer in 1"):
        w.create_object(0, c, 0, "zero")
    with pytest.raises(PvdError, match="start_frame"):
        w.start_frame(-1, 0)
    # Failed registrations consume no handle (PhysX never sees them).
    assert w.register_attribute(c, "ok", DataType.INT8, 1) == 1
    assert w.register_class("D") == 2


def test_old_stream_versions():
    r = Recorder(version=(0, 2, 0))
    r.w.register_class("A")
    assert r.last() == struct.pack("<III", 0, 2, 0) + struct.pack("<BI", 1, 1) + _s(b"A")
    with pytest.raises(PvdError, match="no base classes"):
        r.w.register_class("B", 1)
    with pytest.raises(PvdError, match="no messages"):
        r.w.record_message(0, "m", "f", 1, 1)
    r3 = Recorder(version=(0, 3, 0))
    r3.w.register_class("A")
    assert r3.last() == struct.pack("<III", 0, 3, 0) + struct.pack("<BII", 1, 1, 0) + _s(b"A")
    with pytest.raises(PvdError, match="newer than"):
        OmniPvdWriter(MemoryStream(), version=(0, 5, 0))


def _loop_equivalent(w: OmniPvdWriter, ctx, ts, blocks):
    for f, t in enumerate(ts):
        w.start_frame(ctx, t)
        for objects, cols in blocks:
            for i, o in enumerate(objects):
                for attr, values in cols.items():
                    w.set_attribute(ctx, o, attr, np.asarray(values)[f, i])
        w.stop_frame(ctx, t)


def _two_class_writer():
    s = MemoryStream()
    w = OmniPvdWriter(s)
    car = w.register_class("Car")
    pos = w.register_attribute(car, "pos", DataType.FLOAT32, 3)
    gear = w.register_attribute(car, "gear", DataType.INT32, 1)
    wheel = w.register_class("Wheel")
    vec = w.register_class("Vec")
    v = w.register_attribute(vec, "v", DataType.FLOAT64, 2)
    nested = w.register_class_attribute(wheel, "slip", vec)
    return s, w, pos, gear, [nested, v]


def test_batch_and_frames_equal_the_per_command_loop():
    rng = np.random.default_rng(1)
    cars, wheels = np.array([11, 12], np.uint64), np.array([21, 22, 23])
    ts = [5, 6, 7]
    values = {
        "pos": rng.standard_normal((3, 2, 3)).astype(np.float32),
        "gear": rng.integers(-1, 6, (3, 2)),
        "slip": rng.standard_normal((3, 3, 2)),
    }
    s1, w1, pos, gear, slip = _two_class_writer()
    _loop_equivalent(w1, 4, ts, [(cars, {pos: values["pos"], gear: values["gear"]}),
                                 (wheels, {tuple(slip): values["slip"]})])
    for o, p in zip(cars, values["pos"][0], strict=True):
        w1.set_attribute(4, o, pos, p)

    s2, w2, pos, gear, slip = _two_class_writer()
    w2.write_frames(4, ts, [FrameBlock(cars, {pos: values["pos"], gear: values["gear"]}),
                            (wheels, {tuple(slip): values["slip"]})], chunk_bytes=200)
    w2.set_attribute_batch(4, cars, pos, values["pos"][0])
    assert s2.getvalue() == s1.getvalue()
    assert w2.bytes_written == len(s2.getvalue())


def test_batch_errors():
    s, w, pos, gear, slip = _two_class_writer()
    with pytest.raises(PvdError, match=r"Car\.pos expects 3 × FLOAT32, got 2 per object"):
        w.set_attribute_batch(0, [1, 2], pos, np.zeros((2, 2)))
    with pytest.raises(PvdError, match=r"values of shape \(3, 3\) do not match \(2,\)"):
        w.set_attribute_batch(0, [1, 2], pos, np.zeros((3, 3)))
    with pytest.raises(PvdError, match="positive"):
        w.set_attribute_batch(0, [0, 2], gear, [1, 2])
    with pytest.raises(PvdError, match="stop timestamps"):
        w.write_frames(0, [1, 2], [], stop_timestamps=[1])
    w.set_attribute_batch(0, [1, 2], gear, [1.0, 2.0])
    (_, a), (_, b) = list(iter_decode(s.getvalue()))[-2:]
    assert a == SetAttribute(0, 1, (gear,), struct.pack("<i", 1))
    assert b == SetAttribute(0, 2, (gear,), struct.pack("<i", 2))


def test_streams_and_context_manager(tmp_path):
    path = tmp_path / "rec.ovd"
    fs = OvdFileStream(path)
    assert isinstance(fs, WriteStream) and isinstance(MemoryStream(), WriteStream)
    with OmniPvdWriter(fs) as w:
        c = w.register_class("A")
        w.create_object(1, c, 2, "a")
    assert fs.closed
    assert path.read_bytes()[:12] == HEADER
    assert fs.bytes_written == path.stat().st_size
    assert tokenize(path.read_bytes()).counts()["create_object"] == 1
    with pytest.raises(PvdError, match="after close"):
        w.register_class("B")
    with pytest.raises(PvdError, match="write after the stream was closed"):
        fs.write(b"x")
    fs.close()  # idempotent
    with pytest.raises(PvdError, match="cannot create"):
        OvdFileStream(tmp_path / "missing-dir" / "x.ovd")


def test_a_file_stream_hands_its_bytes_over_as_it_goes(tmp_path, monkeypatch):
    """pvdkit record -o X.ovd killed before its first command (kernels compiling) left 0 bytes,
    and a kill later lost up to the 1 MiB buffer: the header goes to disk at once, the rest at
    least every flush_interval."""
    import pvdkit.streams as streams

    clock = [100.0]
    monkeypatch.setattr(streams.time, "monotonic", lambda: clock[0])
    path = tmp_path / "x.ovd"
    w = OmniPvdWriter(OvdFileStream(path, flush_interval=1.0))
    w.start()
    assert path.read_bytes() == encode_header(w.version)  # an empty recording, not 0 bytes
    cls = w.register_class("Thing")
    assert path.stat().st_size == 12  # buffered: less than a second since the last hand-over
    clock[0] += 1.5
    w.register_attribute(cls, "x", DataType.FLOAT32, 1)
    assert path.stat().st_size == w.bytes_written  # handed over: a kill now loses nothing
    w.close()
    unbuffered = tmp_path / "y.ovd"
    plain = OmniPvdWriter(OvdFileStream(unbuffered))
    plain.start()
    assert unbuffered.stat().st_size == 0  # no interval: nothing before the buffer fills
    plain.close()
    assert unbuffered.read_bytes() == encode_header(plain.version)
