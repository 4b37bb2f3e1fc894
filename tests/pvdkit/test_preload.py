"""``Recording.preload`` (bulk loading used by diff) changes speed, never data.

Every series of the PhysX fixture reads the same with and without preload, from .ovd and from
.h5, and with a partner file whose identical chunks are shared.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pvdkit.convert import convert
from pvdkit.recording import ListSeries, Recording

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "vehicles_short.ovd"


def _snapshot(rec: Recording) -> dict:
    out = {}
    for obj in rec.objects:
        for s in rec.all_series(obj):
            key = (obj.index, s.name)
            if isinstance(s, ListSeries):
                out[key] = (np.asarray(s.frames), np.asarray(s.added), list(s.items))
            else:
                raw = s.raw if isinstance(s.raw, np.ndarray) else np.concatenate([np.ravel(r) for r in s.raw])
                out[key] = (np.asarray(s.frames), np.asarray(raw))
    return out


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        for x, y in zip(a[key], b[key], strict=True):
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype and np.array_equal(x, y), key
            else:
                assert x == y, key


@pytest.fixture(scope="module")
def fixture_h5(tmp_path_factory):
    out = tmp_path_factory.mktemp("preload") / "vehicles_short.h5"
    convert(FIXTURE, out)
    return out


@pytest.mark.parametrize("kind", ["ovd", "h5"])
def test_preload_reads_the_same_samples(kind, fixture_h5):
    path = FIXTURE if kind == "ovd" else fixture_h5
    plain = _snapshot(Recording.open(path))
    rec = Recording.open(path)
    rec.preload()
    _assert_same(plain, _snapshot(rec))


def test_preload_with_a_partner_shares_chunks_without_changing_data(fixture_h5, tmp_path):
    other = tmp_path / "copy.h5"
    other.write_bytes(fixture_h5.read_bytes())
    a, b = Recording.open(fixture_h5), Recording.open(other)
    a.preload()
    b.preload(a)
    _assert_same(_snapshot(Recording.open(fixture_h5)), _snapshot(b))
