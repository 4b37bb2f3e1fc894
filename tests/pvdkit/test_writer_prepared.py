"""OmniPvdWriter's prepared path: commands encoded once, values filled in place, one write per
frame — byte for byte what ``set_attribute`` / ``set_attribute_bytes`` write one by one."""

from __future__ import annotations

import numpy as np
import pytest

from pvdkit.h5 import H5Stream
from pvdkit.h5.rebuild import h5_to_ovd_bytes
from pvdkit.ovd import iter_decode
from pvdkit.ovd.codec import SetAttribute
from pvdkit.streams import MemoryStream
from pvdkit.types import DataType, PvdError
from pvdkit.writer import OmniPvdWriter, PreparedAttributes, PreparedColumn


def _schema(w: OmniPvdWriter) -> dict[str, object]:
    """A small schema touching every value kind the prepared path serves."""
    color = w.register_class("Color")
    w.register_enum_value(color, "red", 1)
    body = w.register_class("Body")
    pose = w.register_class("Pose")
    wheel = w.register_class("Wheel")
    h = {
        "pos": w.register_attribute(body, "pos", DataType.FLOAT32, 3),
        "mass": w.register_attribute(body, "mass", DataType.FLOAT64),
        "gear": w.register_attribute(body, "gear", DataType.UINT32),
        "link": w.register_attribute(body, "link", DataType.OBJECT_HANDLE),
        "flags": w.register_flags_attribute(body, "color", color),
        "tilt": w.register_attribute(body, "tilt", DataType.INT16, 2),
        "speed": w.register_attribute(wheel, "speed", DataType.FLOAT32),
        "force": w.register_attribute(wheel, "force", DataType.FLOAT32, 3),  # PhysX writes 1 float
        "name": w.register_attribute(body, "name", DataType.STRING),
        "list": w.register_unique_list_attribute(body, "set", DataType.OBJECT_HANDLE),
    }
    q = w.register_attribute(pose, "q", DataType.FLOAT32, 4)
    h["pose_q"] = (w.register_class_attribute(body, "pose", pose), q)
    return h


BODIES = np.array([10, 11, 12], np.uint64)
WHEELS = np.array([20, 21, 22, 23], np.uint64)


def _columns(h: dict[str, object]) -> list[PreparedColumn]:
    return [
        PreparedColumn(BODIES, h["pos"]),
        PreparedColumn(BODIES, h["mass"]),
        PreparedColumn(BODIES, h["gear"]),
        PreparedColumn(BODIES, h["link"]),
        PreparedColumn(BODIES, h["flags"]),
        PreparedColumn(BODIES, h["tilt"]),
        PreparedColumn(BODIES, h["pose_q"]),
        PreparedColumn(WHEELS, h["speed"]),
        PreparedColumn(WHEELS, h["force"], 1),
    ]


def _frame_values(rng: np.random.Generator) -> list[np.ndarray]:
    return [
        rng.normal(size=(3, 3)),
        rng.normal(size=(3, 1)),
        rng.integers(0, 7, (3, 1)),
        rng.integers(1, 1 << 40, (3, 1)),
        rng.integers(0, 2, (3, 1)),
        rng.integers(-300, 300, (3, 2)),
        rng.normal(size=(3, 4)),
        rng.normal(size=(4, 1)),
        rng.normal(size=(4, 1)),
    ]


def _one_by_one(w: OmniPvdWriter, h: dict[str, object], values: list[np.ndarray]) -> None:
    """The reference: every value through the typed call (the raw one where the payload size
    differs from the registration, as ``set_attribute`` would refuse it)."""
    for col, vals in zip(_columns(h), values, strict=True):
        for obj, v in zip(col.objects, vals, strict=True):
            if col.count is None:
                w.set_attribute(1, int(obj), col.attribute, v.astype(w.attribute_info(
                    col.attribute if isinstance(col.attribute, int) else col.attribute[-1]
                ).data_type.numpy_dtype))
            else:
                w.set_attribute_bytes(1, int(obj), col.attribute, np.asarray(v, "<f4").tobytes())


def test_prepared_frames_are_the_bytes_of_set_attribute_one_by_one():
    ref, got = MemoryStream(), MemoryStream()
    wr, wg = OmniPvdWriter(ref), OmniPvdWriter(got)
    hr, hg = _schema(wr), _schema(wg)
    block = wg.prepare_attributes(1, _columns(hg))
    assert isinstance(block, PreparedAttributes)
    assert block.nb_commands == 7 * 3 + 2 * 4 and len(block) == 9
    rng = np.random.default_rng(7)
    for t in range(1, 6):
        values = _frame_values(rng)
        wr.start_frame(1, t)
        _one_by_one(wr, hr, values)
        wr.stop_frame(1, t)
        wg.start_frame(1, t)
        for view, v in zip(block.views, values, strict=True):
            view[...] = v
        wg.write_prepared(block)
        wg.stop_frame(1, t)
    assert got.getvalue() == ref.getvalue()
    assert wg.bytes_written == len(got.getvalue())
    sets = [c for _, c in iter_decode(got.getvalue()) if isinstance(c, SetAttribute)]
    assert len(sets) == 5 * block.nb_commands
    assert {len(c.path) for c in sets} == {1, 2}


def test_a_block_can_be_the_first_thing_written_and_carries_the_header():
    """Registration normally precedes it, but the writer owns the header either way."""
    s = MemoryStream()
    w = OmniPvdWriter(s)
    h = _schema(w)
    assert s.getvalue()[:12] == bytes.fromhex("000000000400000000000000")
    block = w.prepare_attributes(5, [(WHEELS, h["speed"])])
    block.view(0, (4,))[:] = [1, 2, 3, 4]
    start = len(s.getvalue())
    w.write_prepared(block)
    cmds = [c for off, c in iter_decode(s.getvalue()) if off >= start]
    assert [(c.context, c.object, c.data) for c in cmds] == [
        (5, int(o), np.float32(v).tobytes()) for o, v in zip(WHEELS, [1, 2, 3, 4], strict=True)]


def test_views_take_the_producers_shape_and_share_the_block():
    w = OmniPvdWriter(MemoryStream())
    h = _schema(w)
    objects = np.arange(1, 7, dtype=np.uint64)  # 2 vehicles x 3 wheels
    block = w.prepare_attributes(1, [(objects, h["force"], 3), (objects[:2], h["pos"])])
    v = block.view(0, (2, 3, 3))
    v[...] = np.arange(18).reshape(2, 3, 3)
    np.testing.assert_array_equal(block.views[0], np.arange(18).reshape(6, 3))
    assert np.shares_memory(v, block.views[0])
    assert block.view(1, (2, 3)).base is not None
    one = w.prepare_attributes(1, [(objects[:1], h["pos"])])
    one.view(0, (3,))[:] = [1.5, 2.5, 3.5]  # one object: the value's own shape
    np.testing.assert_array_equal(one.views[0], [[1.5, 2.5, 3.5]])
    with pytest.raises(PvdError, match=r"shape \(4, 3\) does not split into 6 objects × 3"):
        block.view(0, (4, 3))
    assert block.views[0].dtype == np.dtype("<f4")
    assert bytes(block.buffer) == bytes(block.buffer)  # read-only snapshot of the bytes
    with pytest.raises(TypeError):
        block.buffer[0] = 1


def test_values_lie_end_to_end_and_encode_as_they_were():
    """``payload`` is every value end to end in command order; ``encoded_with`` a copy of it
    gives the bytes the block wrote then, whatever the values are now."""
    w = OmniPvdWriter(MemoryStream())
    h = _schema(w)
    objects = np.arange(1, 4, dtype=np.uint64)
    block = w.prepare_attributes(1, [(objects, h["force"], 3), (objects[:2], h["pos"])])
    block.views[0][...] = np.arange(9).reshape(3, 3)
    block.views[1][...] = -1.0
    expected = np.concatenate([np.arange(9, dtype="<f4"), np.full(6, -1.0, "<f4")])
    np.testing.assert_array_equal(block.payload.view("<f4"), expected)
    assert not block.payload.flags.writeable
    then, then_bytes = block.payload.copy(), bytes(block.buffer)
    block.views[0][...] = 7.0
    assert block.encoded_with(then) == then_bytes != bytes(block.buffer)


def test_prepare_checks_as_set_attribute_checks():
    w = OmniPvdWriter(MemoryStream())
    h = _schema(w)
    with pytest.raises(PvdError, match="not registered"):
        w.prepare_attributes(1, [(BODIES, 999)])
    with pytest.raises(PvdError, match="unique-list"):
        w.prepare_attributes(1, [(BODIES, h["list"])])
    with pytest.raises(PvdError, match="needs a fixed count"):
        w.prepare_attributes(1, [(BODIES, h["name"])])  # STRING: variable length
    with pytest.raises(PvdError, match="positive"):
        w.prepare_attributes(1, [([0, 1], h["pos"])])
    with pytest.raises(PvdError, match="context"):
        w.prepare_attributes(-1, [(BODIES, h["pos"])])
    named = w.prepare_attributes(1, [(BODIES[:1], h["name"], 3)])  # fixed-size string payloads
    named.views[0][0] = np.frombuffer(b"abc", np.uint8)
    other = OmniPvdWriter(MemoryStream())
    _schema(other)
    with pytest.raises(PvdError, match="not prepared by this writer"):
        other.write_prepared(named)
    w.close()
    with pytest.raises(PvdError, match="after close"):
        w.write_prepared(named)


def test_empty_block_writes_nothing():
    s = MemoryStream()
    w = OmniPvdWriter(s)
    h = _schema(w)
    n = len(s.getvalue())
    block = w.prepare_attributes(1, [(np.zeros(0, np.uint64), h["pos"])])
    w.write_prepared(block)
    assert len(s.getvalue()) == n and block.nb_commands == 0


def test_prepared_frames_into_h5_rebuild_to_the_same_bytes(tmp_path):
    """H5Stream tokenizes what it receives; a prepared block is ordinary commands to it."""
    mem = MemoryStream()
    path = tmp_path / "p.h5"
    writers = [OmniPvdWriter(mem), OmniPvdWriter(H5Stream(path, compact=False))]
    blocks = []
    for w in writers:
        h = _schema(w)
        blocks.append(w.prepare_attributes(1, _columns(h)))
    rng = np.random.default_rng(3)
    for t in range(1, 30):
        values = _frame_values(rng)
        for w, block in zip(writers, blocks, strict=True):
            w.start_frame(1, t)
            for view, v in zip(block.views, values, strict=True):
                view[...] = v
            w.write_prepared(block)
            w.stop_frame(1, t)
    for w in writers:
        w.close()
    assert h5_to_ovd_bytes(path) == mem.getvalue()
