"""One reader of object-handle references (:func:`pvdkit.identity.handle_references`) for
``pvdkit diff``'s identities and :mod:`pvdkit.names`' vehicle walk: both follow the same graph,
read from the object-handle series only, and it is the graph the query model describes series by
series. Also :meth:`Recording.objects_of_class` (grouped by class once) against a plain scan."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pvdkit import identity
from pvdkit.identity import handle_references, object_identities, reference_series
from pvdkit.names import handle_attributes, handle_refs, referenced
from pvdkit.recording import ListSeries, Recording
from tests.pvdkit.test_diff_identity import _reuse_recording

DATA = Path(__file__).resolve().parents[1] / "data"
N = 8


@pytest.fixture(scope="module")
def fleet_path(tmp_path_factory) -> Path:
    """Eight sedans for 0.3 s, recorded by simcore to .h5 (PhysX's Vehicle2 layout)."""
    from simcore.cli.record import record

    out = tmp_path_factory.mktemp("refs") / "fleet.h5"
    record("sedan", "accelerate", duration=0.3, out=out, vehicles=N)
    return out


def _oracle(rec: Recording, obj, attribute: str) -> list[int]:
    """What ``obj.attribute`` ever pointed at, through the query model one sample at a time:
    list items added, or a handle (each element of an array of handles) resolved at its sample's
    frame; each object once, in order of first reference; null and unknown handles skipped."""
    s = rec.series(obj, attribute)
    if isinstance(s, ListSeries):
        rows = [[int(h)] for h, added in zip(s.items, s.added, strict=True) if added]
        frames = [int(f) for f, added in zip(s.frames, s.added, strict=True) if added]
    else:
        raw = s.raw
        rows = [np.atleast_1d(r).tolist() for r in raw] if len(s) else []
        frames = s.frames.tolist()
    out: list[int] = []
    for row, f in zip(rows, frames, strict=True):
        for h in row:
            t = rec.resolve(int(h), f) if h else None
            if t is not None and t.index not in out:
                out.append(t.index)
    return out


def _recordings(fleet_path: Path) -> list[Recording]:
    return [Recording.open(DATA / "vehicles_short.ovd"), Recording.open(fleet_path), _reuse_recording()]


def test_names_and_diff_read_the_same_references(fleet_path):
    """Per object and object-handle attribute, ``handle_refs`` (the vehicle walk), ``referenced``
    and the edges ``pvdkit diff``'s identities follow are what the query model gives sample by
    sample (less the object itself for names)."""
    for rec in _recordings(fleet_path):
        refs = handle_refs(rec)
        edges = identity._edges(rec, identity.HandleResolver(rec))
        checked = 0
        for o in rec.objects:
            for name, _ in handle_attributes(o):
                want = _oracle(rec, o, name)
                got = [t.index for t in refs.get(o.index, {}).get(name, [])]
                assert got == [t for t in want if t != o.index], (rec.source_name, o, name)
                assert [t.index for t in referenced(rec, o, name)] == got, (o, name)
                followed = [child for attr, _, _, child, _ in edges[o.index] if attr == name]
                assert sorted(set(followed)) == sorted(want), (o, name)
                checked += bool(want)
        assert checked >= 2


def test_reference_reader_follows_arrays_and_lifetimes():
    """An array of handles and a reference whose handle names a new lifetime: the vehicle walk
    follows them as the identities do (``root#0/pair.0``, ``root#0/ref~1``)."""
    rec = _reuse_recording()
    x1, x2 = [o.index for o in rec.objects if o.name == "x"]
    y = rec.find_object("y").index
    refs = handle_refs(rec)
    root = rec.objects[0]
    assert {n: [t.index for t in ts] for n, ts in refs[root.index].items()} == {"ref": [x1, x2], "pair": [y]}
    labels = [i.label for i in object_identities(rec)]
    assert labels[x2] == "root#0/ref~1" and labels[y] == "root#0/pair.0"


def test_references_read_only_the_handle_series(fleet_path, monkeypatch):
    """The reader asks the storage for the object-handle series alone (not every sample of the
    file: 16 s on a 256-car fleet's .h5), once per recording; identities and names share it."""
    rec = Recording.open(fleet_path)
    asked: list[np.ndarray] = []
    real = Recording.sample_blocks_of

    def spy(self, sids):
        asked.append(np.asarray(sids))
        return real(self, sids)

    def refuse(self):
        raise AssertionError("every series read")

    monkeypatch.setattr(Recording, "sample_blocks", refuse)
    monkeypatch.setattr(Recording, "sample_blocks_of", spy)
    want = reference_series(rec)
    st = rec.series_table()
    assert 0 < len(want) < len(st) / 2
    names = {rec.path_name(p) for p in np.unique(st.path[want]).tolist()}
    assert {"wheelAttachmentSet", "tireForce", "rigidBodyState"} <= names
    ids = object_identities(rec)
    vehicles = [o for o in rec.objects if o.cls is not None and o.cls.name == "Vehicle"]
    assert len(vehicles) == N and len(handle_refs(rec)[vehicles[0].index]["wheelAttachmentSet"]) == 4
    assert len(asked) == 1 and np.array_equal(np.sort(asked[0]), np.sort(want))
    assert handle_references(rec) is handle_references(rec)  # kept per recording
    assert len({i.key for i in ids}) == len(ids)


def test_objects_of_class_is_a_scan_of_the_objects(fleet_path):
    for rec in _recordings(fleet_path)[:2]:
        for c in rec.classes.values():
            scan = [o for o in rec.objects if o.cls is not None and o.cls.is_a(c)]
            assert rec.objects_of_class(c) == scan == rec.objects_of_class(c.name)
            assert rec.objects_of_class(c, derived=False) == [o for o in rec.objects if o.cls is c]
    assert len(rec.objects_of_class("TireForce")) == 4 * N


def test_objects_of_class_follows_a_growing_recording():
    """A live recording that gains objects is grouped again."""
    data = (DATA / "vehicles_short.ovd").read_bytes()
    live = Recording.stream()
    half = len(data) // 3
    live.feed(data[:half])
    early = len(live.objects_of_class("TireForce"))
    live.feed(data[half:])
    full = Recording.open(DATA / "vehicles_short.ovd")
    assert [o.index for o in live.objects_of_class("TireForce")] == \
        [o.index for o in full.objects_of_class("TireForce")]
    assert early <= len(full.objects_of_class("TireForce")) == 16
