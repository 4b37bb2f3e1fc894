"""Whole chunks deflated by ISA-L (:mod:`pvdkit.h5.chunks`): the file any HDF5 reader expects."""

from __future__ import annotations

import zlib

import h5py
import numpy as np
import pytest

from pvdkit.h5.chunks import DirectChunks
from tests.pvdkit.h5_helpers import TABLE_ROW, random_rows


def _dataset(f: h5py.File, name: str, dtype, width: tuple[int, ...] = (), chunk_rows: int = 100, **comp):
    comp = comp or {"compression": "gzip", "compression_opts": 1, "shuffle": True}
    return f.create_dataset(name, shape=(0, *width), maxshape=(None, *width), dtype=dtype,
                            chunks=(chunk_rows, *width), **comp)


@pytest.mark.parametrize(("dtype", "width"), [("<f4", ()), ("<f4", (3,)), ("u1", ()), ("<i4", ()),
                                               ("<u8", (2,)), ("<f8", ()), (TABLE_ROW, ())])
def test_appends_read_back_as_written_by_any_reader(tmp_path, dtype, width):
    """Pieces of every size — inside one chunk, filling it exactly, spanning several — read
    back through HDF5's own filters (shuffle + deflate) as the rows appended, in SWMR mode too."""
    rng = np.random.default_rng(7)
    path = tmp_path / "x.h5"
    chunks = DirectChunks(1)
    expected = []
    with h5py.File(path, "w", libver=("v110", "v110")) as f:
        ds = _dataset(f, "v", dtype, width)
        f.swmr_mode = True
        for n in (0, 1, 37, 62, 100, 250, 3, 297):
            rows = random_rows(rng, np.dtype(dtype), (n, *width))
            assert chunks.append(ds, rows) == sum(len(e) for e in expected)
            expected.append(rows)
            f.flush()
            with h5py.File(path, "r", swmr=True) as reader:  # complete after every append
                np.testing.assert_array_equal(reader["v"][()], np.concatenate(expected))
    with h5py.File(path, "r") as f:
        ds = f["v"]
        assert (ds.compression, ds.shuffle, ds.chunks[0]) == ("gzip", True, 100)
        np.testing.assert_array_equal(ds[()], np.concatenate(expected))


def test_chunks_compressed_on_several_threads_are_the_chunks_of_one(tmp_path):
    """``workers > 1`` (a commit the caller waits for) stores byte for byte what one thread
    stores, chunk for chunk in order, and lets its threads go on close."""
    rng = np.random.default_rng(3)
    pieces = [random_rows(rng, np.dtype("<f4"), (n, 3)) for n in (950, 40, 1210, 7)]
    stored = {}
    for workers in (1, 3):
        chunks = DirectChunks(1)
        chunks.workers = workers
        with h5py.File(tmp_path / f"w{workers}.h5", "w") as f:
            ds = _dataset(f, "v", "<f4", (3,))
            for rows in pieces:
                chunks.append(ds, rows)
            n_chunks = ds.shape[0] // 100 + 1
            stored[workers] = [ds.id.read_direct_chunk((k * 100, 0))[1] for k in range(n_chunks)]
            np.testing.assert_array_equal(ds[()], np.concatenate(pieces))
        chunks.close()
        assert chunks._pool is None
    assert stored[1] == stored[3]


def test_a_dataset_begun_by_h5py_is_continued(tmp_path):
    """A partial last chunk this appender did not write (a reopened file) is read back first."""
    path = tmp_path / "x.h5"
    first, then = np.arange(130, dtype="<i4"), np.arange(130, 400, dtype="<i4")
    with h5py.File(path, "w") as f:
        ds = _dataset(f, "v", "<i4")
        ds.resize(130, axis=0)
        ds[:] = first
    with h5py.File(path, "r+") as f:
        assert DirectChunks(1).append(f["v"], then) == 130
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["v"][()], np.arange(400))


def test_a_chunk_is_shuffled_then_deflated():
    """Byte k of every element together, then a zlib stream (what HDF5's filters undo)."""
    rows = np.array([1.5, -2.25, 3.0], "<f4")
    stored = DirectChunks(1).compress(rows, 4)
    planes = np.frombuffer(zlib.decompress(stored), np.uint8).reshape(4, 4)  # (byte, element)
    np.testing.assert_array_equal(planes.T.copy().view("<f4").ravel(), [1.5, -2.25, 3.0, 0.0])


def test_only_plain_numeric_shuffle_deflate_datasets_suit(tmp_path):
    with h5py.File(tmp_path / "x.h5", "w") as f:
        assert DirectChunks.suits(_dataset(f, "ok", "<f4", (3,)))
        assert DirectChunks.suits(_dataset(f, "fields", np.dtype([("a", "<i4"), ("b", "<f8")])))
        assert not DirectChunks.suits(_dataset(f, "text", h5py.string_dtype()))
        assert not DirectChunks.suits(_dataset(f, "fields_with_text", np.dtype([("a", "<i4"),
                                                                                ("s", h5py.string_dtype())])))
        assert not DirectChunks.suits(_dataset(f, "array_field", np.dtype([("a", "<i4", (2,))])))
        assert not DirectChunks.suits(_dataset(f, "big_endian", ">f4"))
        assert not DirectChunks.suits(_dataset(f, "lzf", "<f4", compression="lzf", shuffle=True))
        assert not DirectChunks.suits(_dataset(f, "no_shuffle", "<f4", compression="gzip"))
        assert not DirectChunks.suits(f.create_dataset("contiguous", data=np.zeros(4, "<f4")))


@pytest.mark.parametrize(("gzip_level", "isal_level"), [(None, 1), (0, 0), (1, 1), (3, 3), (4, 3), (9, 3)])
def test_gzip_levels_map_onto_isal_levels(gzip_level, isal_level):
    assert DirectChunks(gzip_level).level == isal_level


def test_a_recording_stream_writes_its_pools_as_direct_chunks(tmp_path, monkeypatch):
    """``H5Stream`` (what ``pvdkit record`` writes) takes this path, over many commits, and the
    file rebuilds the stream's ``.ovd`` byte for byte."""
    from pvdkit.h5.rebuild import h5_to_ovd_bytes
    from pvdkit.h5.stream import H5Stream
    from pvdkit.streams import OvdFileStream
    from pvdkit.synthetic import write_large_recording

    chunked = []
    real_append = DirectChunks.append
    monkeypatch.setattr(DirectChunks, "append", lambda self, ds, rows: chunked.append(ds.name)
                        or real_append(self, ds, rows))
    h5, ovd = tmp_path / "rec.h5", tmp_path / "rec.ovd"
    write_large_recording(H5Stream(h5, compact=False, flush_interval=0.0), 2 << 20, vehicles=4)
    write_large_recording(OvdFileStream(ovd), 2 << 20, vehicles=4)
    with h5py.File(h5, "r") as f:
        assert len(f["log/commits"]) > 3  # chunks continued across commits
    assert {"/log/series", "/log/kind", "/pools/set_float32x3/values", "/segments", "/frames"} <= set(chunked)
    assert h5_to_ovd_bytes(h5) == ovd.read_bytes()


@pytest.mark.parametrize("dtype", ["u1", "<u2", "<i4", "<f4", "<u8", "<f8", "V28"])
@pytest.mark.parametrize("n", [0, 1, 77, 128])
def test_shuffled_is_hdf5s_shuffle_of_the_padded_chunk(dtype, n):
    """The compiled shuffles (4- and 8-byte words, and rows of any size: a table's rows) give
    byte *b* of element *i* at ``b * chunk + i``, zeros past the elements given."""
    from pvdkit.h5.shuffle import shuffled

    rng = np.random.default_rng(n)
    elements = rng.integers(0, 256, n * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype)
    padded = np.zeros(128, dtype)
    padded[:n] = elements
    expected = padded.view(np.uint8).reshape(128, -1).T.reshape(-1)
    np.testing.assert_array_equal(shuffled(elements, 128), expected)


@pytest.mark.parametrize(("size", "stride", "first"), [(4, 40, [0, 8, 36]), (12, 48, [4, 20]),
                                                      (4, 41, [0, 9]), (3, 40, [1, 5]), (16, 32, [])])
def test_gather_frames_is_gather_fixed_of_every_frame(size, stride, first):
    """A block's columns through ``k`` frames (word copies when aligned, bytes otherwise) are
    the payloads at ``first[c] + f * stride``, column after column."""
    from pvdkit.index.kernels import gather_fixed, gather_frames

    k = 5
    buf = np.random.default_rng(size).integers(0, 256, k * stride, dtype=np.uint8)
    first = np.asarray(first, np.int64)
    offsets = (first[:, None] + np.arange(k)[None, :] * stride).reshape(-1)
    expected = gather_fixed(buf, offsets, size)
    np.testing.assert_array_equal(gather_frames(buf, first, stride, k, size), expected)


@pytest.mark.parametrize("row", [5, 130])  # in a full chunk, in the kept last chunk
def test_rows_changed_in_place_survive_the_next_append(tmp_path, row):
    """A frame's stop arrives after its row was appended; the change, made through h5py, is
    not lost when the next append rewrites the last chunk."""
    path = tmp_path / "x.h5"
    chunks = DirectChunks(1)
    with h5py.File(path, "w") as f:
        ds = _dataset(f, "v", "<i4")
        chunks.append(ds, np.arange(150, dtype="<i4"))
        ds[row] = -1
        chunks.forget(ds)
        chunks.append(ds, np.arange(150, 260, dtype="<i4"))
        f.flush()
    expected = np.arange(260)
    expected[row] = -1
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["v"][()], expected)


def test_a_frame_stopped_in_a_later_commit_keeps_its_stop(tmp_path):
    """End to end: a frame started in one commit and stopped in the next (the writer updates
    its row in place) reads back stopped, with its stop time."""
    from pvdkit.h5.stream import H5Stream
    from pvdkit.recording import Recording
    from pvdkit.types import DataType
    from pvdkit.writer import OmniPvdWriter

    path = tmp_path / "rec.h5"
    stream = H5Stream(path, compact=False, background=False)
    w = OmniPvdWriter(stream)
    cls = w.register_class("Body")
    attr = w.register_attribute(cls, "x", DataType.FLOAT32, 1)
    w.create_object(1, cls, 7, "body")
    for frame in range(5):
        w.start_frame(1, 1000 * frame)
        w.set_attribute(1, 7, attr, np.float32(frame))
        stream.flush()  # the frame's row is committed before its stop
        w.stop_frame(1, 1000 * frame + 500)
    w.close()
    with h5py.File(path, "r") as f:
        frames = f["frames"][()]
    assert len(frames) >= 5
    assert frames["stopped"][:5].all()
    np.testing.assert_array_equal(frames["stop"][:5], [1000 * k + 500 for k in range(5)])
    Recording.open(path).close()


@pytest.mark.parametrize(("n", "at"), [(5, [0, 0, 2, 5, 5]), (0, [0, 0]), (4, []), (3, [1]), (6, [6])])
def test_insert_rows_is_numpys_insert(n, at):
    """A block's pool rows with the batch's other samples joined in: as ``np.insert`` places
    them (before row ``at[j]``, several at one place in order, at the end for ``n``)."""
    from pvdkit.index.kernels import insert_rows

    rng = np.random.default_rng(n)
    base = rng.integers(0, 256, (n, 12), dtype=np.uint8)
    extra = rng.integers(0, 256, (len(at), 12), dtype=np.uint8)
    at = np.asarray(at, np.int64)
    np.testing.assert_array_equal(insert_rows(base, at, extra), np.insert(base, at, extra, axis=0))
