"""Chunks inflated with ISA-L (:mod:`pvdkit.h5.inflate`) read exactly as h5py reads them, and
whatever they do not suit falls back to h5py."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import h5py
import numpy as np
import pytest

from pvdkit.diff import compare_files
from pvdkit.diff.report import to_json
from pvdkit.h5.inflate import ChunkDecoder, read_rows
from tests.pvdkit.h5_helpers import TABLE_ROW, random_rows

DATA = Path(__file__).resolve().parents[1] / "data"

def _write(path: Path, name: str, data: np.ndarray, chunk_rows: int, **filters) -> None:
    filters = filters or {"compression": "gzip", "compression_opts": 4, "shuffle": True}
    with h5py.File(path, "a") as f:
        f.create_dataset(name, data=data, maxshape=(None, *data.shape[1:]),
                         chunks=(chunk_rows, *data.shape[1:]), **filters)


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize(("dtype", "width"), [
    ("u1", ()), ("<i4", ()), ("<f4", ()), ("<f8", ()), ("<u8", (2,)), ("<f4", (3,)), ("<u2", (7,)),
    (">i4", ()), (">f8", (2,)), (TABLE_ROW, ())])
@pytest.mark.parametrize("n", [1, 99, 100, 101, 1234])
def test_rows_read_as_h5py_reads_them(tmp_path, dtype, width, n):
    """Every dtype and row width, a partial last chunk (stored padded) or none, any row range."""
    dtype = np.dtype(dtype)
    path = tmp_path / "x.h5"
    _write(path, "d", random_rows(np.random.default_rng(n), dtype, (n, *width)), chunk_rows=100)
    with h5py.File(path, "r") as f:
        ds = f["d"]
        assert ChunkDecoder.of(ds) is not None
        for lo, hi in ((0, n), (0, 0), (n // 3, n), (1, max(1, n - 1)), (n - 1, n)):
            _same(read_rows(ds, lo, hi), ds[lo:hi])


@pytest.mark.parametrize("parallel_bytes", [0, 1 << 40])
def test_chunks_inflated_on_several_threads_read_as_on_one(tmp_path, monkeypatch, parallel_bytes):
    """Large reads inflate their chunks on the cores (ISA-L releases the GIL): every row lands
    where a one-thread read puts it, a chunk h5py must read (a skipped filter) included."""
    from pvdkit.h5 import inflate

    monkeypatch.setattr(inflate, "_PARALLEL_BYTES", parallel_bytes)
    data = random_rows(np.random.default_rng(5), np.dtype("<f4"), (20_000, 3))
    path = tmp_path / "x.h5"
    _write(path, "d", data, chunk_rows=512)
    with h5py.File(path, "r") as f:
        ds = f["d"]
        for lo, hi in ((0, 20_000), (700, 19_001), (511, 513)):
            _same(read_rows(ds, lo, hi), data[lo:hi])


def test_rows_past_a_resized_end_and_unwritten_chunks_read_as_h5py(tmp_path):
    """A dataset grown after writing: its last stored chunk's padding and chunks never written
    (fill values, read by h5py) give what h5py gives."""
    path = tmp_path / "x.h5"
    _write(path, "d", np.arange(150, dtype="<i4"), chunk_rows=100)
    with h5py.File(path, "a") as f:
        f["d"].resize((450,))
        f["d"][400:410] = 7
    with h5py.File(path, "r") as f:
        ds = f["d"]
        _same(read_rows(ds, 0, 450), ds[()])


@pytest.mark.parametrize("filters", [{}, {"compression": "gzip", "shuffle": False},
                                     {"compression": "gzip", "shuffle": True, "fletcher32": True},
                                     {"compression": "lzf", "shuffle": True}])
def test_other_pipelines_are_left_to_h5py(tmp_path, filters):
    path = tmp_path / "x.h5"
    data = np.arange(300, dtype="<f4")
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=data, chunks=(64,), **filters)
        f.create_dataset("contiguous", data=data)
        strings = np.array([b"a", b"bc"] * 50, dtype=h5py.string_dtype())
        f.create_dataset("strings", data=strings, chunks=(16,), compression="gzip", shuffle=True)
    with h5py.File(path, "r") as f:
        for name in ("d", "contiguous", "strings"):
            assert ChunkDecoder.of(f[name]) is None
            assert read_rows(f[name], 0, 10) is None


def _direct_chunk_file(path: Path, second: tuple[int, bytes]) -> np.ndarray:
    """A shuffle + deflate dataset of 3 chunks whose second is stored as ``second`` (filter
    mask, bytes); returns what h5py reads of the first and last chunks."""
    data = np.arange(300, dtype="<i4")
    _write(path, "d", data, chunk_rows=100)
    with h5py.File(path, "a") as f:
        mask, raw = second
        f["d"].id.write_direct_chunk((100,), raw, filter_mask=mask)
    return data


def test_a_chunk_stored_with_a_filter_skipped_is_read_by_h5py(tmp_path, monkeypatch):
    """Filter mask 1 = shuffle not applied: h5py decodes that chunk (deflate only), the
    others are inflated here."""
    path = tmp_path / "x.h5"
    second = np.arange(1000, 1100, dtype="<i4")
    data = _direct_chunk_file(path, (1, zlib.compress(second.tobytes())))
    data[100:200] = second
    calls = []
    real = ChunkDecoder.decode_into

    def spy(self, mask, stored, out, first=0):
        ok = real(self, mask, stored, out, first)
        calls.append((mask, ok))
        return ok

    monkeypatch.setattr(ChunkDecoder, "decode_into", spy)
    with h5py.File(path, "r") as f:
        got = read_rows(f["d"], 0, 300)
        _same(got, f["d"][()])
    _same(got, data)
    assert calls == [(0, True), (1, False), (0, True)]


@pytest.mark.parametrize("stored", [b"not a zlib stream", zlib.compress(b"\0" * 40),
                                    zlib.compress(b"\0" * 4000)])
def test_a_damaged_or_mis_sized_chunk_is_left_to_h5py(tmp_path, stored):
    """A chunk that does not inflate to exactly a chunk is not decoded here (``out`` untouched):
    h5py reads it and does what it does — an error, or its own reading of a short chunk."""
    path = tmp_path / "x.h5"
    data = _direct_chunk_file(path, (0, stored))
    with h5py.File(path, "r") as f:
        ds = f["d"]
        out = np.full(100, -1, "<i4")
        assert not ChunkDecoder.of(ds).decode_into(0, stored, out)
        assert (out == -1).all()
        try:
            ds[100:200]
        except OSError:
            with pytest.raises(OSError):
                read_rows(ds, 0, 300)
        else:  # HDF5 reads a short chunk with whatever memory follows it: only the others compare
            got = read_rows(ds, 0, 300)
            _same(got[:100], data[:100])
            _same(got[200:], data[200:])


def test_the_recordings_pools_and_tables_read_as_h5py(tmp_path):
    with h5py.File(DATA / "dev_drive.h5", "r") as f:
        datasets = []
        f.visititems(lambda _, o: datasets.append(o) if isinstance(o, h5py.Dataset) else None)
        decoded = 0
        for ds in datasets:
            got = read_rows(ds, 0, ds.shape[0])
            if got is not None:
                decoded += 1
                _same(got, ds[()])
        pools = [ds for ds in datasets if ds.name.startswith("/pools/")]
        assert pools and all(ChunkDecoder.of(ds) is not None for ds in pools)
        assert decoded > len(pools)  # numeric tables too


def _json(a: Path, b: Path) -> dict:
    import json

    d = json.loads(to_json(compare_files(str(a), str(b))))
    d.pop("seconds", None)
    return d


@pytest.mark.parametrize(("a", "b"), [("dev_drive.h5", "stop_go.h5"), ("stop_go.h5", "dev_drive.h5"),
                                      ("dev_drive.h5", "dev_drive.h5")])
def test_compare_files_gives_the_result_h5py_reads_give(a, b, monkeypatch):
    """``pvdkit diff`` of the fixtures: the same result whether the pools are inflated here or
    every read goes through h5py."""
    fast = _json(DATA / a, DATA / b)
    monkeypatch.setattr(ChunkDecoder, "of", classmethod(lambda cls, ds: None))
    assert _json(DATA / a, DATA / b) == fast


def test_compare_files_with_a_partner_sharing_some_chunks(tmp_path, monkeypatch):
    """B equal to A but for one pool chunk: B takes A's decoded chunks where the stored bytes
    are equal and inflates the other here; the result is the one h5py reads give."""
    a = tmp_path / "a.h5"
    b = tmp_path / "b.h5"
    shutil.copy(DATA / "dev_drive.h5", a)
    shutil.copy(DATA / "dev_drive.h5", b)
    with h5py.File(b, "a") as f:
        ds = f["pools/set_float32x1/values"]
        ds[40000:40010] = ds[40000:40010] + 1.0
    fast = _json(a, b)
    assert fast["equal"] is False
    monkeypatch.setattr(ChunkDecoder, "of", classmethod(lambda cls, ds: None))
    assert _json(a, b) == fast


def test_diff_of_h5_files_imports_neither_numba_nor_numpy_ma():
    """The ``.h5`` diff path stays light: no compiler, no masked arrays, no ``.ovd`` tokenizer."""
    code = ("import sys; from pvdkit.diff.cli import main; "
            f"main([{str(DATA / 'dev_drive.h5')!r}, {str(DATA / 'stop_go.h5')!r}, '--quiet']); "
            "print([m for m in ('numba', 'numpy.ma', 'pvdkit.ovd.tokenizer') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.stdout.strip().splitlines()[-1] == "[]", out
