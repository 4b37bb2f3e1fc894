"""Damaged, truncated, old and too-new streams: complete prefix, byte offsets, only PvdError."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pvdkit.ovd import codec
from pvdkit.ovd.tokenizer import CommandTable, decode_command, open_ovd, tokenize
from pvdkit.streams import MemoryStream
from pvdkit.synthetic import write_every_command
from pvdkit.types import Command, PvdError, PvdWarning

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


def _every_command() -> bytes:
    stream = MemoryStream()
    write_every_command(stream)
    return stream.getvalue()


EVERY = _every_command()
WHOLE = tokenize(EVERY)


def _s(text: bytes) -> bytes:
    return struct.pack("<H", len(text)) + text


def _check_invariants(data: bytes, table: CommandTable) -> None:
    """Structure every table must have, whatever the input."""
    n = len(table)
    if n:
        assert table.offset[0] == codec.HEADER_SIZE
        np.testing.assert_array_equal(table.offset[1:], table.end[:-1])
        assert table.end[-1] == table.valid_end
    else:
        assert table.valid_end == codec.HEADER_SIZE
    assert table.valid_end <= len(data)
    assert (table.error is None) == (table.valid_end == len(data))
    assert set(np.unique(table.kind)) <= {1} | set(range(3, 14))
    attr = np.isin(table.kind, [6, 7, 8])
    assert (table.data_offset[attr] + table.data_size[attr] == table.end[attr]).all()
    assert (table.depth[attr] >= 1).all()


def test_truncation_at_every_byte_offset_yields_exactly_the_complete_prefix():
    ends = WHOLE.end
    for cut in range(len(EVERY) + 1):
        data = EVERY[:cut]
        if cut < codec.HEADER_SIZE:
            with pytest.raises(PvdError, match="shorter than the 12-byte"):
                tokenize(data)
            continue
        table = tokenize(data, source_name="cut.ovd")
        n = int(np.searchsorted(ends, cut, side="right"))
        assert len(table) == n, cut
        np.testing.assert_array_equal(table.end, ends[:n])
        _check_invariants(data, table)
        if table.error is not None:
            assert table.truncated
            assert f"cut.ovd: truncated at byte offset {table.valid_end}" in table.error
            # A length damaged in a whole file reads the same: the message says both, and how
            # much follows the command's start.
            assert (f"{len(data) - table.valid_end:,} of them from its start: the file was cut short there, "
                    "or the command's length is damaged") in table.error
            with pytest.raises(PvdError, match=f"truncated command at byte offset {table.valid_end}"):
                codec.decode_command_at(data, table.valid_end, table.version)


def test_fixture_truncated_at_sampled_offsets():
    data = FIXTURE.read_bytes()
    whole = tokenize(data)
    rng = np.random.default_rng(7)
    cuts = np.concatenate([rng.integers(12, len(data), 150), whole.end[::997] - 1, whole.end[::991]])
    for cut in cuts.tolist():
        table = tokenize(data[:cut])
        n = int(np.searchsorted(whole.end, cut, side="right"))
        assert len(table) == n and table.valid_end == (whole.end[n - 1] if n else 12)
        assert (table.frame == whole.frame[:n]).all()


def _corrupt(data: bytes, edits: list[tuple[int, int]], cut: int | None) -> tuple[bytes, int]:
    raw = bytearray(data)
    first = len(raw)
    for pos, value in edits:
        pos %= len(raw)
        if raw[pos] != value:
            raw[pos] = value
            first = min(first, pos)
    if cut is not None:
        del raw[cut % (len(raw) + 1):]
        first = min(first, len(raw))
    return bytes(raw), first


EDITS = st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(0, 255)), min_size=1, max_size=8)


def _assert_survives(original: CommandTable, data: bytes, first_damage: int) -> None:
    try:
        table = tokenize(data, source_name="fuzz.ovd")
    except PvdError:
        assert first_damage < codec.HEADER_SIZE  # only a damaged header may raise
        return
    _check_invariants(data, table)
    intact = int(np.searchsorted(original.end, first_damage, side="right"))
    assert len(table) >= intact
    np.testing.assert_array_equal(table.end[:intact], original.end[:intact])
    for i in range(len(table)):
        decode_command(data, table, i)  # every row the tokenizer accepts decodes


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS, st.one_of(st.none(), st.integers(0, 1 << 30)))
def test_random_corruption_of_every_command_file(edits, cut):
    data, first = _corrupt(EVERY, edits, cut)
    _assert_survives(WHOLE, data, first)


FIXTURE_DATA = FIXTURE.read_bytes()
FIXTURE_TABLE = tokenize(FIXTURE_DATA)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS)
def test_random_corruption_of_fixture(edits):
    data, first = _corrupt(FIXTURE_DATA, [(12 + p % (len(FIXTURE_DATA) - 12), v) for p, v in edits], None)
    table = tokenize(data)
    _check_invariants(data, table)
    intact = int(np.searchsorted(FIXTURE_TABLE.end, first, side="right"))
    np.testing.assert_array_equal(table.end[:intact], FIXTURE_TABLE.end[:intact])


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (b"\x02", "unknown command code 2"),
        (b"\x00" * 40, "unknown command code 0"),
        (b"\xff", "unknown command code 255"),
        (struct.pack("<BIIHIH", 3, 1, 1, 77, 0, 0), "register_attribute with unknown data type 77"),
        (struct.pack("<BIIHH", 5, 1, 1, 14, 0), "register_unique_list_attribute with unknown data type 14"),
        (struct.pack("<BQQBI", 6, 1, 1, 0, 0), "set_attribute with an empty attribute path"),
    ],
)
def test_damage_is_reported_at_its_byte_offset(command, message):
    good = codec.RegisterClass(1, "A").encode()
    data = codec.encode_header() + good + command + good
    table = tokenize(data, source_name="bad.ovd")
    assert len(table) == 1 and not table.truncated
    assert table.error.startswith(f"bad.ovd: damaged at byte offset {12 + len(good)}: {message}")


@pytest.mark.parametrize(
    "tail",
    [
        struct.pack("<BQQBII", 6, 1, 1, 1, 5, 0xFFFFFFFF) + b"\0" * 64,  # 4 GB payload claimed
        struct.pack("<BQQB", 6, 1, 1, 255) + b"\0" * 100,  # 255 handles claimed
        struct.pack("<BIIH", 1, 1, 0, 0xFFFF) + b"x" * 10,  # 64 KB name claimed
        struct.pack("<BQH", 13, 1, 3) + b"abc" + struct.pack("<H", 9000),
    ],
)
def test_corrupt_lengths_are_truncation_without_allocation(tail):
    data = codec.encode_header() + codec.StartFrame(1, 1).encode() + tail
    table = tokenize(data, source_name="len.ovd")
    assert len(table) == 1 and table.truncated
    assert "len.ovd: truncated at byte offset 29" in table.error
    assert table.nbytes < 200


def test_version_0_2_stream_reads_register_class_without_base():
    data = b"".join([
        struct.pack("<III", 0, 2, 0),
        struct.pack("<BI", 1, 1) + _s(b"Body"),
        struct.pack("<BI", 1, 2) + _s(b"Wheel"),
        struct.pack("<BIIHI", 3, 1, 1, 8, 3) + _s(b"pos"),
        struct.pack("<BQIQ", 9, 0, 1, 77) + _s(b"car"),
        struct.pack("<BQQ", 11, 0, 5),
        struct.pack("<BQQBII3f", 6, 0, 77, 1, 1, 12, 1, 2, 3),
        struct.pack("<BQQ", 12, 0, 5),
    ])
    table = tokenize(data)
    assert table.version == (0, 2, 0) and table.error is None
    assert list(table.kind) == [1, 1, 3, 9, 11, 6, 12]
    assert decode_command(data, table, 1) == codec.RegisterClass(2, "Wheel", 0)
    assert decode_command(data, table, 5) == codec.SetAttribute(0, 77, (1,), struct.pack("<3f", 1, 2, 3))
    assert list(table.frame) == [-1, -1, -1, -1, 0, 0, 0]
    # The same bytes read with the 0.3 layout go wrong, so the version really selects the layout.
    assert tokenize(data[12:], version=(0, 3, 0)).error is not None


def test_version_0_3_stream_reads_base_class():
    data = b"".join([
        struct.pack("<III", 0, 3, 0),
        struct.pack("<BII", 1, 1, 0) + _s(b"Base"),
        struct.pack("<BII", 1, 2, 1) + _s(b"Derived"),
        struct.pack("<BIIH", 5, 2, 1, 11) + _s(b"kids"),
        struct.pack("<BQQBIIQ", 7, 0, 9, 1, 1, 8, 10),
        struct.pack("<BQQBIIQ", 8, 0, 9, 1, 1, 8, 10),
        struct.pack("<BQQ", 10, 0, 9),
    ])
    table = tokenize(data)
    assert table.version == (0, 3, 0) and table.error is None
    assert decode_command(data, table, 1) == codec.RegisterClass(2, "Derived", 1)
    assert table.counts()["remove_from_unique_list"] == 1


@pytest.mark.parametrize("version", [(0, 5, 0), (1, 0, 0), (0, 4, 0xFFFFFFFF)])
def test_newer_versions(version, tmp_path):
    data = struct.pack("<III", *version) + codec.StartFrame(1, 1).encode()
    if version[:2] == (0, 4):  # a newer patch keeps the layout: read
        assert len(tokenize(data)) == 1
        return
    with pytest.raises(PvdError, match=r"new\.ovd: OmniPVD stream version .* is newer"):
        tokenize(data, source_name="new.ovd")
    path = tmp_path / "new.ovd"
    path.write_bytes(data)
    with pytest.raises(PvdError, match="is newer"):
        open_ovd(path)
    with pytest.raises(PvdError, match="is newer"):
        tokenize(data[12:], version=version)


def test_bad_files_and_arguments_raise_pvd_error(tmp_path):
    (tmp_path / "empty.ovd").write_bytes(b"")
    (tmp_path / "short.ovd").write_bytes(b"\0" * 11)
    for name in ("empty.ovd", "short.ovd"):
        with pytest.raises(PvdError, match=f"{name}: .* shorter than the 12-byte"):
            open_ovd(tmp_path / name)
    with pytest.raises(PvdError, match=r"missing\.ovd: no such file"):
        open_ovd(tmp_path / "missing.ovd")
    with pytest.raises(PvdError, match=r": is a directory, expected an \.ovd or \.h5 recording"):
        open_ovd(tmp_path)
    with pytest.raises(PvdError, match="older than the oldest"):
        tokenize(struct.pack("<III", 0, 1, 0))
    with pytest.raises(PvdError, match="uint8"):
        tokenize(np.zeros(20, np.float64))
    with pytest.raises(PvdError, match="bytes-like"):
        tokenize("not bytes")
    with pytest.raises(PvdError, match="start_offset"):
        tokenize(EVERY, start_offset=len(EVERY) + 1)
    with pytest.raises(PvdError, match="three integers"):
        tokenize(EVERY[12:], version=(0, 4))
    with pytest.raises(PvdError, match="out of range"):
        decode_command(EVERY, WHOLE, len(WHOLE))


def test_damaged_file_warns_once_with_offset(tmp_path):
    raw = bytearray(EVERY)
    at = int(WHOLE.offset[50])
    raw[at] = 0x63
    path = tmp_path / "damaged.ovd"
    path.write_bytes(bytes(raw))
    expected = rf"damaged\.ovd: damaged at byte offset {at}: unknown command code 99"
    with pytest.warns(PvdWarning, match=expected):
        _, table = open_ovd(path)
    assert len(table) == 50


def test_headerless_continuation_matches(tmp_path):
    cont = tokenize(EVERY[12:], version=(0, 4, 0))
    np.testing.assert_array_equal(cont.offset + 12, WHOLE.offset)
    np.testing.assert_array_equal(cont.kind, WHOLE.kind)
    mid = int(WHOLE.offset[40])
    rest = tokenize(EVERY, start_offset=mid, version=WHOLE.version, start_frame=int(WHOLE.frame[39]))
    np.testing.assert_array_equal(rest.offset, WHOLE.offset[40:])
    np.testing.assert_array_equal(rest.frame, WHOLE.frame[40:])
    assert Command(int(rest.kind[0])) == Command(int(WHOLE.kind[40]))


def test_a_recording_survives_its_file_being_recorded_again(tmp_path):
    """A producer that records to the same path again (PhysX truncates and rewrites it) while a
    viewer or notebook holds the recording open: the open recording keeps its own bytes. (With
    the file memory-mapped, the next query died of SIGBUS; run in a child process so that a
    regression fails this test rather than killing the test run.)"""
    path, kept = tmp_path / "again.ovd", tmp_path / "kept.ovd"
    path.write_bytes(FIXTURE.read_bytes())
    kept.write_bytes(FIXTURE.read_bytes())
    code = f"""
import numpy as np
from pvdkit import Recording
rec = Recording.open({str(path)!r})
with open({str(path)!r}, "wb") as f:
    f.write(b"recorded again" * 10)
got = [rec.series(o, "lngForce").values for o in rec.objects_of_class("TireForce")]
ref = Recording.open({str(kept)!r})
want = [ref.series(o, "lngForce").values for o in ref.objects_of_class("TireForce")]
assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True)), "values changed"
print(len(got), sum(len(a) for a in got))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    objects, samples = map(int, done.stdout.split())
    assert objects == 16 and samples > 0
