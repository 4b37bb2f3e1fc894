"""Bulk reads used to open recordings fast: ``Recording.sample_blocks_of`` gives what series-by-
series loads give, from ``.ovd`` and ``.h5``, preloaded or not; ``prefetched`` series equal
``rec.series``. (``pvdkit.names.handle_refs``, the vehicle graph's bulk read: tests/pvdkit/test_names.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pvdkit.recording import Recording
from viewer.model.bulk import prefetched, series_of
from viewer.model.topdown import pose_sources
from viewer.model.vehicles import find_vehicles

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


@pytest.fixture(scope="module")
def h5_copy(tmp_path_factory) -> Path:
    """The PhysX fixture converted to .h5."""
    from pvdkit.convert import convert

    out = tmp_path_factory.mktemp("bulk") / "vehicles_short.h5"
    convert(str(FIXTURE), str(out))
    return out


def _sources(h5_copy: Path) -> list[tuple[str, Path, bool]]:
    return [(f"{p.suffix} {'preloaded' if pre else 'lazy'}", p, pre)
            for p in (FIXTURE, h5_copy) for pre in (False, True)]


def test_sample_blocks_of_matches_series_by_series(h5_copy):
    for what, path, pre in _sources(h5_copy):
        with Recording.open(path) as rec:
            if pre:
                rec.preload()
            n = len(rec.series_table())
            sids = np.random.default_rng(0).permutation(n)[: max(n // 2, 1)]
            blocks = rec.sample_blocks_of(sids)
            assert len(blocks.block) == len(sids) == len(blocks.count), what
            held = 0
            for k, sid in enumerate(sids.tolist()):
                ref = rec.data.load_samples(sid)
                assert blocks.count[k] == len(ref), (what, sid)
                if blocks.block[k] < 0:  # not held: variable-size or empty
                    assert ref.fixed is None or not len(ref), (what, sid)
                    continue
                held += 1
                got = blocks.samples(k)
                assert np.array_equal(got.frames, ref.frames), (what, sid)
                assert np.array_equal(got.fixed, ref.fixed), (what, sid)
                assert (got.ops is None) == (ref.ops is None), (what, sid)
                if ref.ops is not None:
                    assert np.array_equal(got.ops, ref.ops), (what, sid)
            assert held > len(sids) // 2, what
            empty = rec.sample_blocks_of(np.zeros(0, np.int64))
            assert len(empty.block) == 0


def test_prefetched_series_equal_recording_series(h5_copy):
    with Recording.open(h5_copy) as rec:
        vehicles = find_vehicles(rec)
        pairs = [(o, a) for o, a in pose_sources(vehicles) if o is not None and a in o.cls.paths]
        assert len(pairs) >= 4 * 16
        with prefetched(rec, pairs):
            for o, a in pairs:
                got, want = series_of(rec, o, a), rec.series(o, a)
                assert np.array_equal(got.frames, want.frames), (o, a)
                assert np.array_equal(np.asarray(got.values), np.asarray(want.values)), (o, a)
        o, a = pairs[0]
        assert series_of(rec, o, a) is rec.series(o, a)  # nothing held after the block
