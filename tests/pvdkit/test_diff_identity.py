"""Object identities of ``pvdkit diff`` (graph paths, lifetimes, handle reuse) and the PNG encoder."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from pvdkit.diff.identity import NULL, UNRESOLVED, HandleResolver, match_objects, object_identities
from pvdkit.diff.plot import Canvas, decode_png, encode_png
from pvdkit.recording import Recording
from pvdkit.streams import MemoryStream
from pvdkit.types import DataType
from pvdkit.writer import OmniPvdWriter

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


def _reuse_recording(first: int = 0x500, parent: int = 0x900) -> Recording:
    """Handle ``first`` names two lifetimes (destroyed in frame 1, created again in frame 2);
    the parent's reference points at the first, then at the second; two roots share a name."""
    ms = MemoryStream()
    w = OmniPvdWriter(ms)
    p_cls, x_cls = w.register_class("P"), w.register_class("X")
    ref = w.register_attribute(p_cls, "ref", DataType.OBJECT_HANDLE, 1)
    pair = w.register_attribute(p_cls, "pair", DataType.OBJECT_HANDLE, 2)
    w.create_object(1, p_cls, parent, "root")
    w.create_object(1, p_cls, parent + 1, "root")
    w.create_object(1, x_cls, first, "x")
    w.create_object(1, x_cls, first + 1, "y")
    w.set_attribute(1, parent, pair, [first + 1, 0])
    for f in range(4):
        w.start_frame(1, f)
        if f == 0:
            w.set_attribute(1, parent, ref, first)
        if f == 1:
            w.destroy_object(1, first)
        if f == 2:
            w.create_object(1, x_cls, first, "x")
            w.set_attribute(1, parent, ref, first)
        if f == 3:
            w.set_attribute(1, parent + 1, ref, 0xDEAD)
        w.stop_frame(1, f)
    w.close()
    return Recording.open(ms.getvalue())


def test_handle_resolver_follows_lifetimes():
    rec = _reuse_recording()
    r = HandleResolver(rec)
    x1, x2 = [o.index for o in rec.objects if o.name == "x"]
    handles = np.array([0x500, 0x500, 0x500, 0, 0xDEAD, 0x501], np.uint64)
    frames = np.array([-1, 1, 2, 0, 0, 0])
    expected = [x1, x1, x2, NULL, UNRESOLVED, rec.find_object("y").index]
    assert r.resolve(handles, frames).tolist() == expected  # few values: the scalar path
    many = r.resolve(np.tile(handles, 20).reshape(12, 10), np.tile(frames, 20).reshape(12, 10))
    assert many.shape == (12, 10) and many.reshape(-1).tolist() == expected * 20  # the vectorised path
    # same answers as the query model's scalar resolve
    for h in (0x500, 0x501, 0x900):
        for f in (-1, 0, 1, 2, 3):
            assert int(r.resolve(np.array([h], np.uint64), f)[0]) == rec.resolve(h, f).index


def test_identities_from_graph_paths_and_ordinals():
    rec = _reuse_recording()
    ids = object_identities(rec)
    labels = {o.index: ids[o.index].label for o in rec.objects}
    x1, x2 = [o.index for o in rec.objects if o.name == "x"]
    assert labels[x1] == "root#0/ref" and labels[x2] == "root#0/ref~1"  # reference changed over time
    assert labels[rec.find_object("y").index] == "root#0/pair.0"  # element 0 of a handle array
    roots = [labels[o.index] for o in rec.objects if o.name == "root"]
    assert roots == ["root#0", "root#1"]  # same class and name: creation order
    assert len({i.key for i in ids}) == len(ids)
    assert ids[x1].depth == 1 and ids[x1].classes == ("X",)


def test_identities_do_not_depend_on_handles():
    a, b = _reuse_recording(), _reuse_recording(first=0x7777_0000, parent=0x10)
    m = match_objects(object_identities(a), object_identities(b))
    assert len(m.pairs) == len(a.objects) and not m.only_a and not m.only_b
    assert [(i, j) for i, j in m.pairs] == [(i, i) for i in range(len(a.objects))]
    codes = m.reference_codes("b", np.array([0, NULL, UNRESOLVED]))
    assert codes.tolist() == [0, NULL, UNRESOLVED]


def test_physx_fixture_identities():
    """PhysX names its four vehicles and their components alike; the graph tells them apart."""
    rec = Recording.open(FIXTURE)
    ids = object_identities(rec)
    assert len({i.key for i in ids}) == len(ids) == 528
    by_label = {i.label: i for i in ids}
    tire = by_label["Vehicle#2/wheelAttachmentSet[1]/tireForce"]
    assert tire.cls == "TireForce" and tire.depth == 2
    assert sum(1 for i in ids if i.cls == "Vehicle" and i.depth == 0) == 4
    # every TireForce hangs under a wheel attachment of a vehicle
    tires = [i for i in ids if i.cls == "TireForce"]
    assert len(tires) == 16 and all("/wheelAttachmentSet[" in i.label for i in tires)


# ------------------------------------------------------------------------------- PNG


def test_png_bytes_are_standard():
    img = np.zeros((2, 3, 3), np.uint8)
    img[0, 0] = (255, 0, 0)
    img[1, 2] = (1, 2, 3)
    data = encode_png(img)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    n, tag = struct.unpack(">I4s", data[8:16])
    assert (n, tag) == (13, b"IHDR")
    assert struct.unpack(">IIBBBBB", data[16:29]) == (3, 2, 8, 2, 0, 0, 0)
    assert struct.unpack(">I", data[29:33])[0] == zlib.crc32(data[12:29])
    n, tag = struct.unpack(">I4s", data[33:41])
    raw = zlib.decompress(data[41:41 + n])
    assert raw == b"\x00" + img[0].tobytes() + b"\x00" + img[1].tobytes()
    assert data.endswith(struct.pack(">I4s", 0, b"IEND") + struct.pack(">I", zlib.crc32(b"IEND")))
    assert np.array_equal(decode_png(data), img)
    bad = bytearray(data)
    bad[20] ^= 1
    with pytest.raises(ValueError, match="CRC"):
        decode_png(bytes(bad))


def test_canvas_steps_hold_values_between_samples():
    cv = Canvas(20, 10)
    cv.steps(0, 0, 20, 10, np.array([0, 10]), np.array([8.0, 2.0]), (0, 0, 0), end=19)
    on = np.all(cv.img == 0, axis=2)
    assert on[7:9, 1:10].all() and not on[2, 1:9].any()  # held at row 8 until column 10
    assert on[2:9, 10].all()  # the step
    assert on[1:3, 11:20].all() and not on[8, 12:20].any()  # then held at row 2
    cv.text(0, 0, "A?", (255, 0, 0))
    assert np.all(cv.img[0, 1] == (255, 0, 0))  # top of the "A" glyph (.###.)
