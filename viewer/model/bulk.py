"""Many series read at once, for the steps that open a recording.

Why: a 256-car fleet has ~28,000 objects; finding the vehicles and building the top-down view
asked for ~35,000 series one at a time, and from an ``.h5`` each costs an HDF5 slice per stored
segment (~100 µs), so opening took seconds more than indexing the file. Here the series a step
will need are read together with :meth:`pvdkit.recording.Recording.sample_blocks_of` (of each
pool only the chunks that hold them) and handed out as ordinary :class:`Series` while the step
runs (:func:`prefetched`); :func:`series_of` answers from them, or asks the recording.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from pvdkit.index.tables import FAMILY_LIST, FAMILY_SET, SampleBlocks, Samples
from pvdkit.recording import ListSeries, Object, Recording, Series

_PATH_IDS: weakref.WeakKeyDictionary[Recording, dict[tuple[int, ...], int]] = weakref.WeakKeyDictionary()
_HELD: weakref.WeakKeyDictionary[Recording, dict[tuple[int, str], Series | ListSeries]] = \
    weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def path_id(rec: Recording, obj: Object, attribute: str) -> tuple[int, int] | None:
    """(path id, family) of a class attribute of ``obj`` as the series table stores it; None
    when the object's class has no such attribute or no series was ever stored on that path."""
    chain = obj.cls.paths.get(attribute) if obj.cls is not None else None
    if chain is None:
        return None
    ids = _PATH_IDS.get(rec)
    if ids is None:
        ids = {p: i for i, p in enumerate(rec.data.paths)}
        _PATH_IDS[rec] = ids
    pid = ids.get(tuple(a.handle for a in chain))
    if pid is None:
        return None
    return pid, FAMILY_LIST if chain[-1].kind == "unique_list" else FAMILY_SET


def split_blocks(blocks: SampleBlocks) -> dict[int, Samples]:
    """The :class:`Samples` of every series held in ``blocks`` (by series position), gathered
    with one fancy index per block instead of one per series."""
    out: dict[int, Samples] = {}
    for b in range(len(blocks.raw)):
        ks = np.flatnonzero(blocks.block == b)
        if not len(ks):
            continue
        rows = blocks.rows(ks)
        frames, raw = blocks.frames[b][rows], blocks.raw[b][rows]
        ops = blocks.ops[b][rows] if blocks.ops[b] is not None else None
        ends = np.cumsum(blocks.count[ks]).tolist()
        start = 0
        for k, end in zip(ks.tolist(), ends, strict=True):
            out[k] = Samples(frames[start:end], fixed=raw[start:end],
                             ops=ops[start:end] if ops is not None else None)
            start = end
    return out


@contextmanager
def prefetched(rec: Recording, pairs: Iterable[tuple[Object | None, str]]) -> Iterator[None]:
    """Read the series of every (object, attribute) in ``pairs`` at once and let
    :func:`series_of` answer from them until the block ends (then they are dropped: the
    callers keep what they need, nothing stays cached for the recording's lifetime).
    Pairs whose object is None or lacks the attribute are skipped."""
    want: dict[tuple[int, str], tuple[Object, int, int]] = {}
    for obj, attr in pairs:
        if obj is None:
            continue
        pf = path_id(rec, obj, attr)
        if pf is not None:
            want.setdefault((obj.index, attr), (obj, pf[0], pf[1]))
    with _LOCK:
        mine = rec not in _HELD
        held = _HELD.setdefault(rec, {})
    try:
        keys = [k for k in want if k not in held]
        if keys:
            vals = [want[k] for k in keys]
            sids = rec.series_ids(np.array([o.index for o, _, _ in vals], np.int64),
                                  np.array([p for _, p, _ in vals], np.int64),
                                  np.array([f for _, _, f in vals], np.int64))
            found = np.flatnonzero(sids >= 0)
            samples = split_blocks(rec.sample_blocks_of(sids[found]))
            for j, smp in samples.items():
                i = int(found[j])
                obj, _, fam = vals[i]
                attr = keys[i][1]
                chain = obj.cls.paths[attr]
                held[keys[i]] = (ListSeries if fam == FAMILY_LIST else Series)(rec, obj, chain, attr, smp)
        yield
    finally:
        if mine:
            with _LOCK:
                _HELD.pop(rec, None)


def series_of(rec: Recording, obj: Object, attribute: str) -> Series | ListSeries:
    """``rec.series(obj, attribute)``, from the series :func:`prefetched` read when it has it."""
    held = _HELD.get(rec)
    if held is not None:
        s = held.get((obj.index, attribute))
        if s is not None:
            return s
    return rec.series(obj, attribute)
