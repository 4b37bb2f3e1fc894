"""Tokenizer: exact counts on the PhysX fixture, columns vs the reference decoder, CSV ground
truth, incremental continuation, large generated files."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import numpy as np
import pytest

from pvdkit.ovd import codec
from pvdkit.ovd.tokenizer import (
    NO_DATA_TYPE,
    CommandTable,
    decode_command,
    frame_timestamps,
    iter_commands,
    open_ovd,
    tokenize,
)
from pvdkit.streams import MemoryStream
from pvdkit.synthetic import EVERY_COMMAND_CONTEXTS, write_every_command, write_large_recording
from pvdkit.types import Command

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURE = DATA / "vehicles_short.ovd"


@pytest.fixture(scope="module")
def fixture_table():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an intact file warns nothing
        return open_ovd(FIXTURE)


@pytest.fixture(scope="module")
def every_command() -> bytes:
    stream = MemoryStream()
    write_every_command(stream)
    return stream.getvalue()


def test_fixture_counts_are_exactly_nvidias(fixture_table):
    buffer, table = fixture_table
    assert table.version == (0, 4, 0)
    assert table.error is None and not table.truncated
    assert table.valid_end == len(buffer) == FIXTURE.stat().st_size
    assert table.counts() == {
        "register_class": 172, "register_attribute": 644, "register_enum": 174,
        "register_flags": 48, "register_class_attribute": 0, "register_unique_list_attribute": 37,
        "set_attribute": 24005, "add_to_unique_list": 100, "remove_from_unique_list": 0,
        "create_object": 528, "destroy_object": 483, "start_frame": 25, "stop_frame": 24,
        "record_message": 0,
    }
    assert len(table) == sum(table.counts().values())


def _check_against_reference(buffer: bytes, table: CommandTable) -> None:
    """Every column of every row agrees with the independent pure-Python decoder."""
    reference = list(codec.iter_decode(buffer))
    assert len(table) == len(reference)
    attr_kinds = codec.SetAttribute | codec.AddToUniqueList | codec.RemoveFromUniqueList
    type_of = {
        codec.RegisterAttribute: lambda c: c.data_type,
        codec.RegisterEnumValue: lambda c: 12,
        codec.RegisterFlagsAttribute: lambda c: 13,
        codec.RegisterUniqueListAttribute: lambda c: c.data_type,
    }
    expected: dict[str, list[int]] = {k: [] for k in (
        "kind", "offset", "end", "frame", "context", "object", "attribute", "depth", "data_offset",
        "data_size", "data_type")}
    frame = -1
    for i, (offset, cmd) in enumerate(reference):
        frame += cmd.command == Command.START_FRAME
        is_attr = isinstance(cmd, attr_kinds)
        end = reference[i + 1][0] if i + 1 < len(reference) else len(buffer)
        row = {
            "kind": cmd.command, "offset": offset, "end": end, "frame": frame,
            "context": getattr(cmd, "context", 0), "object": getattr(cmd, "object", 0),
            "attribute": cmd.path[-1] if is_attr else 0, "depth": len(cmd.path) if is_attr else 0,
            "data_offset": end - len(cmd.data) if is_attr else 0,
            "data_size": len(cmd.data) if is_attr else 0,
            "data_type": type_of.get(type(cmd), lambda c: NO_DATA_TYPE)(cmd),
        }
        for k, v in row.items():
            expected[k].append(int(v))
        if is_attr and len(cmd.path) > 1:  # the path itself sits at offset + 18
            assert tuple(np.frombuffer(buffer, "<u4", len(cmd.path), offset + 18)) == cmd.path
    for name, values in expected.items():
        column = getattr(table, name)
        np.testing.assert_array_equal(column, np.array(values, dtype=column.dtype), err_msg=name)
    step = max(1, len(reference) // 500)
    for i in range(0, len(reference), step):
        assert decode_command(buffer, table, i) == reference[i][1]


def test_fixture_columns_match_reference_decoder(fixture_table):
    buffer, table = fixture_table
    _check_against_reference(bytes(buffer), table)


def test_every_command_file_columns_match_reference_decoder(every_command):
    table = tokenize(every_command)
    assert table.error is None
    counts = table.counts()
    assert all(counts[k] > 0 for k in counts), counts
    _check_against_reference(every_command, table)
    assert set(table.context[table.kind == Command.START_FRAME]) == set(EVERY_COMMAND_CONTEXTS)
    assert table.depth.max() == 3
    assert list(iter_commands(every_command, table, range(3))) == [
        decode_command(every_command, table, i) for i in range(3)]


def test_frame_column_and_timestamps(every_command):
    table = tokenize(every_command)
    starts = table.rows(Command.START_FRAME)
    assert list(table.frame[starts]) == list(range(len(starts)))
    assert (table.frame[: starts[0]] == -1).all()
    assert np.all(np.diff(table.frame) >= 0)
    assert list(frame_timestamps(every_command, table)) == [1000, 50, 1001, 51, 1002, 52]
    assert list(frame_timestamps(every_command, table, Command.STOP_FRAME)) == [1000, 51, 1001, 52, 1002, 53]
    assert table.last_frame == 5


def _tokenize_in_pieces(data: bytes, cuts: list[int]) -> tuple[list[tuple[int, CommandTable]], bytes]:
    """The documented continuation protocol: keep the tail, pass version and last frame on."""
    pending, base, version, frame, parts = b"", 0, None, -1, []
    for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True):
        pending += data[a:b]
        if version is None:
            if len(pending) < codec.HEADER_SIZE:
                continue
            table = tokenize(pending)
        else:
            table = tokenize(pending, version=version, start_frame=frame)
        assert table.truncated == (table.valid_end < len(pending))
        assert (table.error is None) == (table.valid_end == len(pending))
        parts.append((base, table))
        version, frame = table.version, table.last_frame
        base += table.valid_end
        pending = pending[table.valid_end:]
    return parts, pending


@pytest.mark.parametrize("seed", range(4))
def test_incremental_tokenizing_equals_whole(every_command, seed):
    whole = tokenize(every_command)
    rng = np.random.default_rng(seed)
    cuts = sorted(set(rng.integers(1, len(every_command), 40).tolist()))
    parts, pending = _tokenize_in_pieces(every_command, cuts)
    assert pending == b""
    for name in ("kind", "end", "offset", "data_offset"):
        got = np.concatenate([getattr(t, name) + (base if name != "kind" else 0) for base, t in parts])
        expected = getattr(whole, name)
        if name == "data_offset":  # 0 on non-attribute rows stays 0
            got = np.where(expected == 0, 0, got)
        np.testing.assert_array_equal(got, expected, err_msg=name)
    for name in ("frame", "context", "object", "attribute", "depth", "data_size", "data_type"):
        got = np.concatenate([getattr(t, name) for _, t in parts])
        np.testing.assert_array_equal(got, getattr(whole, name), err_msg=name)


def test_open_ovd_warns_on_damage_and_keeps_prefix(tmp_path):
    data = FIXTURE.read_bytes()
    _, whole = open_ovd(FIXTURE)
    cut = int(whole.offset[10000]) + 5
    path = tmp_path / "cut.ovd"
    path.write_bytes(data[:cut])
    with pytest.warns(Warning, match=rf"cut\.ovd: truncated at byte offset {whole.offset[10000]}"):
        _, table = open_ovd(path)
    assert len(table) == 10000 and table.truncated
    np.testing.assert_array_equal(table.offset, whole.offset[:10000])


# -------------------------------------------------------------------- ground truth from PhysX


class _Fixture:
    """Navigates the fixture's object graph with the table's columns (as the query model will)."""

    def __init__(self, buffer, table: CommandTable):
        self.buffer, self.t = buffer, table
        reg = table.rows(Command.REGISTER_CLASS, Command.REGISTER_ATTRIBUTE,
                         Command.REGISTER_CLASS_ATTRIBUTE, Command.REGISTER_UNIQUE_LIST_ATTRIBUTE)
        self.classes, self.attributes = {}, {}
        for i in reg:
            c = decode_command(buffer, table, i)
            if isinstance(c, codec.RegisterClass):
                self.classes[c.name] = c.class_handle
            else:
                self.attributes[(c.class_handle, c.name)] = c.attribute_handle

    def attr(self, cls: str, name: str) -> int:
        return self.attributes[(self.classes[cls], name)]

    def rows(self, attr: int, obj: int | None = None, kind=Command.SET_ATTRIBUTE) -> np.ndarray:
        mask = (self.t.kind == kind) & (self.t.attribute == attr)
        if obj is not None:
            mask &= self.t.object == obj
        return np.flatnonzero(mask)

    def payload(self, i: int) -> bytes:
        a = int(self.t.data_offset[i])
        return bytes(self.buffer[a:a + int(self.t.data_size[i])])

    def handle_value(self, i: int) -> int:
        return int.from_bytes(self.payload(i), "little")

    def objects_pointing_to(self, attr: int, target: int) -> set[int]:
        return {int(self.t.object[i]) for i in self.rows(attr) if self.handle_value(i) == target}

    def vehicle(self, prim: str) -> int:
        (actor,) = [int(self.t.object[i]) for i in self.rows(self.attr("PxActor", "name"))
                    if self.payload(i) == prim.encode() + b"\0"]
        (physx_actor,) = self.objects_pointing_to(self.attr("PhysXRigidActor", "rigidActor"), actor)
        (veh,) = self.objects_pointing_to(self.attr("Vehicle", "physxRigidActor"), physx_actor)
        return veh

    def wheel_states(self, veh: int) -> list[int]:
        attachments = [self.handle_value(i) for i in self.rows(
            self.attr("Vehicle", "wheelAttachmentSet"), veh, Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE)]
        link = self.attr("WheelAttachment", "wheelRigidBody1dState")
        return [self.handle_value(self.rows(link, a)[-1]) for a in attachments]

    def float_at_frame(self, attr: int, obj: int, frame: int) -> float:
        rows = self.rows(attr, obj)
        rows = rows[self.t.frame[rows] <= frame]
        return float(np.frombuffer(self.payload(rows[-1]), "<f4")[0])


@pytest.mark.parametrize("vehicle", ["Basic", "Standard", "Tank", "Raw"])
def test_fixture_wheel_speeds_equal_physx_readback(fixture_table, vehicle):
    """WheelRigidBodyState.correctedRotationSpeed per step == readback rotationSpeed (README)."""
    buffer, table = fixture_table
    fx = _Fixture(buffer, table)
    states = fx.wheel_states(fx.vehicle(f"/World/{vehicle}"))
    assert len(states) == 4
    speed = fx.attr("WheelRigidBodyState", "correctedRotationSpeed")
    start_times = frame_timestamps(buffer, table)
    with open(DATA / "vehicles_short_readback.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 12
    for row in rows:
        (frame,) = np.flatnonzero(start_times == int(row["ovd_frame_vehicle"]))
        for k, wheel in enumerate(("FrontLeft", "FrontRight", "RearLeft", "RearRight")):
            expected = np.float32(float(row[f"{vehicle}.{wheel}Wheel.rotationSpeed"]))
            got = fx.float_at_frame(speed, states[k], int(frame))
            assert got == expected, (row["step"], wheel, got, expected)


def test_fixture_wheel_radius(fixture_table):
    """Each vehicle's four wheels reach WheelParams objects whose radius is the scene's 0.35 m."""
    buffer, table = fixture_table
    fx = _Fixture(buffer, table)
    radius = fx.attr("WheelParams", "radius")
    params_link = fx.attr("WheelAttachment", "wheelParams")
    add = Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE
    seen = set()
    for vehicle in ("Basic", "Standard", "Tank", "Raw"):
        veh = fx.vehicle(f"/World/{vehicle}")
        attachment_set = fx.attr("Vehicle", "wheelAttachmentSet")
        attachments = [fx.handle_value(i) for i in fx.rows(attachment_set, veh, add)]
        for a in attachments:
            params = fx.handle_value(fx.rows(params_link, a)[-1])
            values = {fx.payload(i) for i in fx.rows(radius, params)}
            assert values == {np.float32(0.35).tobytes()}, (vehicle, a)
            seen.add(params)
    assert len(seen) == 16


# ----------------------------------------------------------------------------- large files


def test_large_generated_recording(tmp_path):
    path = tmp_path / "large.ovd"
    from pvdkit.streams import OvdFileStream

    info = write_large_recording(OvdFileStream(path), 3_000_000, vehicles=4)
    assert path.stat().st_size == info.bytes_written >= 3_000_000
    assert info.bytes_written < 3_000_000 + 40_000  # stops within a frame of the target
    buffer, table = open_ovd(path)
    counts = table.counts()
    assert counts["set_attribute"] == info.set_attribute_commands
    assert counts["start_frame"] == counts["stop_frame"] == info.frames
    assert counts["create_object"] == counts["destroy_object"] == 4 + 16
    assert counts["add_to_unique_list"] == 16
    assert table.nbytes < 60 * len(table)  # bounded: fixed-width columns only
    # Frames are monotonic and every frame holds the same number of set_attribute commands.
    sets = table.kind == Command.SET_ATTRIBUTE
    per_frame = np.bincount(table.frame[sets & (table.frame >= 0)])
    assert (per_frame == 4 * 6 + 16 * 5).all()
    # Parameters set before the first frame: 4 masses in the generator's range, then 16 radii.
    params = np.flatnonzero(sets & (table.frame == -1))
    assert len(params) == 4 + 16
    data = np.asarray(buffer)
    values = np.array([data[table.data_offset[i]:table.data_offset[i] + 4].view("<f4")[0] for i in params])
    assert ((values[:4] >= 1200) & (values[:4] <= 2500)).all()
    assert (values[4:] == np.float32(0.35)).all()


@pytest.mark.parametrize("chunk", [1, 5, 64])
def test_parallel_fill_equals_serial(monkeypatch, fixture_table, every_command, chunk):
    """Large files fill from checkpoints in parallel; force that path on small inputs."""
    from pvdkit.ovd import tokenizer

    buffer, serial = fixture_table
    truncated = every_command[:-7]
    serial_cut = tokenize(truncated)
    monkeypatch.setattr(tokenizer, "_CHUNK", chunk)
    monkeypatch.setattr(tokenizer, "_PARALLEL_MIN_ROWS", 0)
    for data, expected in ((buffer, serial), (truncated, serial_cut)):
        table = tokenize(data)
        for name in ("kind", "offset", "end", "frame", "context", "object", "attribute", "depth",
                     "data_offset", "data_size", "data_type"):
            np.testing.assert_array_equal(getattr(table, name), getattr(expected, name), err_msg=name)
        assert (table.valid_end, table.error) == (expected.valid_end, expected.error)
