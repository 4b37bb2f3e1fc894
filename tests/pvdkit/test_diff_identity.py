"""Object identities of ``pvdkit diff`` (graph paths, lifetimes, handle reuse)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pvdkit.identity import NULL, UNRESOLVED, HandleResolver, match_objects, object_identities
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
