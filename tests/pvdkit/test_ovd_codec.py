"""Single-command codec: byte layouts against hand-packed bytes, decode inverse, fixture round trip."""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pvdkit.ovd import codec
from pvdkit.ovd.codec import (
    AddToUniqueList,
    CreateObject,
    DestroyObject,
    RecordMessage,
    RegisterAttribute,
    RegisterClass,
    RegisterClassAttribute,
    RegisterEnumValue,
    RegisterFlagsAttribute,
    RegisterUniqueListAttribute,
    RemoveFromUniqueList,
    SetAttribute,
    StartFrame,
    StopFrame,
    decode_command_at,
    decode_header,
    decode_value,
    encode_header,
    iter_decode,
)
from pvdkit.types import DataType, PvdError

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


def _s(text: bytes) -> bytes:
    return struct.pack("<H", len(text)) + text


# (command, expected bytes) — expected assembled by hand from the layouts in OmniPvdWriterImpl.cpp.
CASES = [
    (RegisterClass(7, "PxActor", 3), struct.pack("<BII", 1, 7, 3) + _s(b"PxActor")),
    (RegisterAttribute(7, 12, DataType.FLOAT32, 3, "pos"),
     struct.pack("<BIIHI", 3, 7, 12, 8, 3) + _s(b"pos")),
    (RegisterEnumValue(2, 5, 0x80000001, "eX"), struct.pack("<BIIHI", 3, 2, 5, 12, 0x80000001) + _s(b"eX")),
    (RegisterFlagsAttribute(7, 13, 2, "flags"), struct.pack("<BIIHI", 3, 7, 13, 13, 2) + _s(b"flags")),
    (RegisterClassAttribute(7, 14, 9, "pose"), struct.pack("<BIII", 4, 7, 14, 9) + _s(b"pose")),
    (RegisterUniqueListAttribute(7, 15, DataType.OBJECT_HANDLE, "shapes"),
     struct.pack("<BIIH", 5, 7, 15, 11) + _s(b"shapes")),
    (SetAttribute(1, 2**64 - 1, (14, 3), b"\x01\x02\x03"),
     struct.pack("<BQQB2II", 6, 1, 2**64 - 1, 2, 14, 3, 3) + b"\x01\x02\x03"),
    (AddToUniqueList(1, 99, (15,), struct.pack("<Q", 5)),
     struct.pack("<BQQBII", 7, 1, 99, 1, 15, 8) + struct.pack("<Q", 5)),
    (RemoveFromUniqueList(1, 99, (15,), b""), struct.pack("<BQQBII", 8, 1, 99, 1, 15, 0)),
    (CreateObject(4, 7, 0xABCDEF, "chassis"), struct.pack("<BQIQ", 9, 4, 7, 0xABCDEF) + _s(b"chassis")),
    (CreateObject(4, 7, 1, ""), struct.pack("<BQIQH", 9, 4, 7, 1, 0)),
    (DestroyObject(4, 0xABCDEF), struct.pack("<BQQ", 10, 4, 0xABCDEF)),
    (StartFrame(4, 123456789), struct.pack("<BQQ", 11, 4, 123456789)),
    (StopFrame(4, 123456790), struct.pack("<BQQ", 12, 4, 123456790)),
    (RecordMessage(4, "hello", "a.cpp", 10, 2, 7),
     struct.pack("<BQ", 13, 4) + _s(b"hello") + _s(b"a.cpp") + struct.pack("<III", 10, 2, 7)),
    (RegisterClass(1, "Wheel ü", 0), struct.pack("<BII", 1, 1, 0) + _s("Wheel ü".encode())),
]


@pytest.mark.parametrize(("command", "expected"), CASES, ids=[type(c).__name__ for c, _ in CASES])
def test_encode_matches_hand_packed_bytes_and_decodes_back(command, expected):
    assert command.encode() == expected
    decoded, end = decode_command_at(b"\xee" + expected + b"\xff", 1)
    assert decoded == command
    assert end == 1 + len(expected)


def test_register_class_before_version_0_3_has_no_base_class():
    old = RegisterClass(3, "Old").encode((0, 2, 0))
    assert old == struct.pack("<BI", 1, 3) + _s(b"Old")
    assert decode_command_at(old, 0, (0, 2, 5)) == (RegisterClass(3, "Old", 0), len(old))
    with pytest.raises(PvdError, match="no base classes"):
        RegisterClass(3, "Old", base_class=1).encode((0, 2, 0))


def test_header_and_version_checks():
    assert encode_header() == struct.pack("<III", 0, 4, 0)
    assert decode_header(struct.pack("<III", 0, 3, 0)) == (0, 3, 0)
    assert decode_header(struct.pack("<III", 0, 4, 7)) == (0, 4, 7)  # newer patch: same layout
    for too_new in ((0, 5, 0), (1, 0, 0)):
        with pytest.raises(PvdError, match="newer than the newest version pvdkit reads"):
            decode_header(struct.pack("<III", *too_new), "x.ovd")
    with pytest.raises(PvdError, match="older than the oldest"):
        decode_header(struct.pack("<III", 0, 1, 0))
    with pytest.raises(PvdError, match="shorter than the 12-byte"):
        decode_header(b"\0" * 11, "short.ovd")


def test_names_keep_arbitrary_bytes():
    raw = struct.pack("<BII", 1, 1, 0) + _s(b"bad \xff\xfe name\x00")
    cmd, _ = decode_command_at(raw, 0)
    assert cmd.encode() == raw


def test_string_length_limit():
    with pytest.raises(PvdError, match="at most 65535"):
        RegisterClass(1, "x" * 65536).encode()
    assert len(RegisterClass(1, "x" * 65535).encode()) == 9 + 2 + 65535


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x02" + b"\0" * 20, "unknown command code 2"),
        (b"\x00", "unknown command code 0"),
        (b"\x0e", "unknown command code 14"),
        (struct.pack("<BIIHIH", 3, 1, 1, 14, 0, 0), "unknown data type 14"),
        (struct.pack("<BIIHH", 5, 1, 1, 99, 0), "unknown data type 99"),
        (struct.pack("<BQQBI", 6, 1, 1, 0, 0), "empty attribute path"),
        (struct.pack("<BQ", 11, 1), "truncated command at byte offset 0"),
        (struct.pack("<BQQBII", 6, 1, 1, 1, 1, 0xFFFFFFFF), "truncated"),
    ],
)
def test_decode_rejects_damage_with_offset(data, message):
    with pytest.raises(PvdError, match=message):
        decode_command_at(data, 0, source_name="f.ovd")


@pytest.mark.parametrize("dt", [t for t in DataType if t != DataType.STRING])
def test_decode_value_all_numeric_types(dt):
    values = np.array([0, 1, 2], dtype=dt.numpy_dtype)
    out = decode_value(values.tobytes(), dt)
    assert out.dtype == dt.numpy_dtype
    np.testing.assert_array_equal(out, values)


def test_decode_value_string_and_bad_size():
    assert decode_value("wheel ü".encode(), DataType.STRING) == "wheel ü"
    with pytest.raises(PvdError, match="not a whole number"):
        decode_value(b"\0" * 5, DataType.FLOAT32)


def test_fixture_decodes_and_reencodes_byte_for_byte():
    data = FIXTURE.read_bytes()
    commands = [c for _, c in iter_decode(data, str(FIXTURE))]
    kinds = Counter(type(c).__name__ for c in commands)
    assert kinds == {
        "RegisterClass": 172, "RegisterAttribute": 644, "RegisterEnumValue": 174,
        "RegisterFlagsAttribute": 48, "RegisterUniqueListAttribute": 37, "SetAttribute": 24005,
        "AddToUniqueList": 100, "CreateObject": 528, "DestroyObject": 483, "StartFrame": 25,
        "StopFrame": 24,
    }
    rebuilt = codec.encode_header(decode_header(data)) + b"".join(c.encode() for c in commands)
    assert rebuilt == data


def test_fixture_handles_are_numbered_like_physx():
    """Classes count 1, 2, … and all attribute kinds share one counter 1, 2, …, in stream order."""
    commands = [c for _, c in iter_decode(FIXTURE.read_bytes())]
    classes = [c.class_handle for c in commands if isinstance(c, RegisterClass)]
    attributes = [c.attribute_handle for c in commands if hasattr(c, "attribute_handle")]
    assert classes == list(range(1, 173))
    assert attributes == list(range(1, 644 + 174 + 48 + 37 + 1))
