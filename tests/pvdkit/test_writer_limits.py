"""What ``OmniPvdWriter`` refuses so that PhysX's own ``OmniPvdReader`` can read every stream back:
names and messages over 2,047 bytes or with a NUL, and stream versions newer than 0.4.0."""

from __future__ import annotations

import struct

import pytest

from pvdkit import cli
from pvdkit.ovd.codec import (
    CreateObject,
    RecordMessage,
    RegisterAttribute,
    RegisterClass,
    SetAttribute,
    StartFrame,
    StopFrame,
    encode_header,
)
from pvdkit.streams import MemoryStream
from pvdkit.types import DataType, PvdError
from pvdkit.writer import MAX_READER_STRING_BYTES, OmniPvdWriter

LONG = "n" * (MAX_READER_STRING_BYTES + 1)
LONGEST = "n" * MAX_READER_STRING_BYTES


def _writer() -> tuple[OmniPvdWriter, int]:
    w = OmniPvdWriter(MemoryStream())
    return w, w.register_class("Vehicle")


REGISTRATIONS = {
    "class": lambda w, c, name: w.register_class(name),
    "attribute": lambda w, c, name: w.register_attribute(c, name, DataType.FLOAT32, 1),
    "enum value": lambda w, c, name: w.register_enum_value(c, name, 1),
    "flags": lambda w, c, name: w.register_flags_attribute(c, name, c),
    "class attribute": lambda w, c, name: w.register_class_attribute(c, name, c),
    "unique list": lambda w, c, name: w.register_unique_list_attribute(c, name, DataType.OBJECT_HANDLE),
    "object": lambda w, c, name: w.create_object(0, c, 7, name),
    "message": lambda w, c, name: w.record_message(0, name, "file.cpp", 1, 0),
    "message file": lambda w, c, name: w.record_message(0, "text", name, 1, 0),
}


@pytest.mark.parametrize("kind", list(REGISTRATIONS))
def test_names_and_messages_over_2047_bytes_are_refused(kind):
    w, c = _writer()
    before = w.bytes_written
    with pytest.raises(PvdError, match=r"2,048 bytes long \(UTF-8\); PhysX's OmniPvdReader reads at most "
                                       r"2,047"):
        REGISTRATIONS[kind](w, c, LONG)
    assert w.bytes_written == before  # nothing of the refused command was written
    REGISTRATIONS[kind](w, c, LONGEST)  # the longest the reader takes is fine


@pytest.mark.parametrize("kind", list(REGISTRATIONS))
def test_names_and_messages_with_a_nul_are_refused(kind):
    w, c = _writer()
    with pytest.raises(PvdError, match="NUL byte at offset 3; PhysX's OmniPvdReader would cut it there"):
        REGISTRATIONS[kind](w, c, "abc\x00def")


def test_the_limit_counts_utf8_bytes_not_characters():
    w, c = _writer()
    with pytest.raises(PvdError, match="2,048 bytes long"):
        w.register_class("é" * 1024)  # 1,024 characters, 2,048 bytes
    w.register_class("é" * 1023 + "x")  # 2,047 bytes


def test_string_attribute_values_are_payloads_not_names():
    w, c = _writer()
    a = w.register_attribute(c, "name", DataType.STRING, 0)
    w.create_object(0, c, 1, "o")
    w.set_attribute(0, 1, a, b"/World/Basic\x00")  # PhysX itself includes the NUL
    w.set_attribute(0, 1, a, "x" * 5000)


@pytest.mark.parametrize("version", [(0, 4, 1), (0, 5, 0), (1, 0, 0)])
def test_versions_newer_than_physx_reads_are_refused(version):
    with pytest.raises(PvdError, match=r"is newer than 0\.4\.0, the newest PhysX's OmniPvdReader reads"):
        OmniPvdWriter(MemoryStream(), version=version)


@pytest.mark.parametrize("version", [(0, 1, 9), (0, 0, 0)])
def test_versions_older_than_pvdkit_reads_are_refused(version):
    with pytest.raises(PvdError, match=r"older than 0\.2\.0"):
        OmniPvdWriter(MemoryStream(), version=version)


@pytest.mark.parametrize("version", [(0, 2, 0), (0, 3, 0), (0, 3, 7), (0, 4, 0)])
def test_versions_pvdkit_reads_are_written(version):
    s = MemoryStream()
    OmniPvdWriter(s, version=version).register_class("A")
    assert s.getvalue()[:12] == struct.pack("<III", *version)


@pytest.mark.parametrize("version", [(0, 4), "0.4.0", (0, "x", 0)])
def test_malformed_versions_are_refused(version):
    with pytest.raises(PvdError, match="three integers"):
        OmniPvdWriter(MemoryStream(), version=version)


# ------------------------------------------------------------------------------------------
# A stream from elsewhere (not written by OmniPvdWriter) with NULs in its names
# ------------------------------------------------------------------------------------------


def _stream_with_nul_names() -> bytes:
    """PhysX writes ``char*`` names verbatim, so a producer can put a NUL inside one; pvdkit
    must convert such a stream losslessly (the byte-identical ``.ovd → .h5 → .ovd`` promise)."""
    cmds = [
        RegisterClass(1, "Vehicle\x00v2", 0),
        RegisterAttribute(1, 1, DataType.FLOAT32, 1, "speed\x00raw"),
        CreateObject(0, 1, 42, "car\x00#1"),
        StartFrame(0, 1),
        SetAttribute(0, 42, (1,), struct.pack("<f", 3.5)),
        RecordMessage(0, "hello\x00world", "src\x00.cpp", 7, 1, 1),
        StopFrame(0, 1),
    ]
    return encode_header((0, 4, 0)) + b"".join(c.encode((0, 4, 0)) for c in cmds)


def test_convert_name_with_nul_round_trips(tmp_path, capsys):
    # Fails until the HDF5 writer stores names holding NUL bytes (h5py's variable-length strings
    # refuse them: "VLEN strings do not support embedded NULLs").
    src = tmp_path / "nul.ovd"
    src.write_bytes(_stream_with_nul_names())
    h5, back = tmp_path / "nul.h5", tmp_path / "back.ovd"
    assert cli.main(["convert", str(src), str(h5)]) == 0, capsys.readouterr().err
    assert cli.main(["convert", str(h5), str(back)]) == 0, capsys.readouterr().err
    assert back.read_bytes() == src.read_bytes()
