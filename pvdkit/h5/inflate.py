"""Read rows of shuffle + deflate datasets by inflating their stored chunks with ISA-L.

Why: reading a recording whole (``pvdkit diff`` reads every pool) spent most of its time in
h5py decompressing chunks with the zlib HDF5 was built with; ISA-L inflates the same zlib
streams two to three times faster. A chunk is read as stored (``read_direct_chunk``) and
decoded the way HDF5's own pipeline decodes it — inflate, then undo the shuffle — so the values
are those h5py reads. Only what that reproduces exactly is decoded here: datasets chunked along
rows only, filtered by exactly shuffle then deflate, of numbers (or fields of numbers) whose
file type is the one of their numpy type, and chunks stored with every filter applied (filter
mask 0) that inflate to exactly a chunk's bytes. Any other chunk is read by h5py, as before.

Which datasets suit is :func:`pvdkit.h5.layout.shuffled_deflated_rows`, the question the
writing side (:mod:`pvdkit.h5.chunks`) asks too. No numba here: reading a recording stays light.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
from isal import isal_zlib

from pvdkit.h5.layout import shuffled_deflated_rows

__all__ = ["ChunkDecoder", "read_rows"]

#: Reads of at least this many bytes inflate their chunks on several threads (smaller ones: a
#: thread hand-over costs more than it saves).
_PARALLEL_BYTES = 1 << 20
_executor: tuple[int, ThreadPoolExecutor] | None = None


def _pool() -> ThreadPoolExecutor:
    """The threads that inflate chunks: one per core, at most four (made on first use, and again
    in a forked child, which inherits the pool but none of its threads)."""
    global _executor
    if _executor is None or _executor[0] != os.getpid():
        pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)),
                                  thread_name_prefix="pvdkit-inflate")
        _executor = (os.getpid(), pool)
    return _executor[1]


class ChunkDecoder:
    """Decodes the stored chunks of one dataset (made by :meth:`of`, which says whether the
    dataset suits). ``rows``: rows per chunk; every stored chunk holds that many, the last one
    padded past the dataset's end."""

    def __init__(self, ds: h5py.Dataset) -> None:
        self.ds = ds
        self.dtype: np.dtype = ds.dtype
        self.rows = int(ds.chunks[0])
        self.row_shape = tuple(int(d) for d in ds.shape[1:])
        self.elements = self.rows * int(np.prod(self.row_shape, dtype=np.int64))
        self.nbytes = self.elements * self.dtype.itemsize

    @classmethod
    def of(cls, ds: h5py.Dataset) -> ChunkDecoder | None:
        """A decoder for ``ds``, or None when its chunks are not decoded here (h5py reads it)."""
        return cls(ds) if shuffled_deflated_rows(ds) else None

    def decode_into(self, filter_mask: int, stored: bytes, out: np.ndarray, first: int = 0) -> bool:
        """Write rows ``first .. first + len(out)`` of one stored chunk into ``out`` (C-contiguous,
        of the dataset's dtype and row shape); False, with ``out`` untouched, when the chunk is
        not a whole chunk stored through both filters (h5py then decodes it)."""
        if filter_mask != 0:
            return False
        try:
            d = isal_zlib.decompressobj()
            raw = d.decompress(stored, self.nbytes + 1)  # room to see the stream end, or a byte too many
        except Exception:  # a damaged stream: h5py reads it and reports the damage
            return False
        if len(raw) != self.nbytes or not d.eof:
            return False
        size = self.dtype.itemsize
        planes = np.frombuffer(raw, np.uint8).reshape(size, self.elements)
        per_row = self.elements // self.rows
        e0, e1 = first * per_row, (first + len(out)) * per_row
        dst = out.reshape(-1).view(np.uint8).reshape(-1, size)
        for b in range(size):  # byte b of every element is stored together, element after element
            dst[:, b] = planes[b, e0:e1]
        return True

    def read(self, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo:hi`` of the dataset: each chunk decoded here if it can be, else read by
        h5py (which raises what it raises for a damaged or missing chunk).

        The stored chunks are read one after the other (HDF5 is one lock) and inflated on the
        machine's cores (ISA-L and numpy's copies release the GIL): ``pvdkit diff`` of two 10 MB
        recordings spends most of its time here."""
        ds, rows = self.ds, self.rows
        out = np.empty((hi - lo, *self.row_shape), self.dtype)
        spans = [(k, max(lo, k * rows), min(hi, (k + 1) * rows)) for k in range(lo // rows, -(-hi // rows))]
        stored = [self.stored(k) for k, _, _ in spans]

        def decode(i: int) -> bool:
            k, a, b = spans[i]
            got = stored[i]
            return got is not None and self.decode_into(*got, out[a - lo:b - lo], a - k * rows)

        many = len(spans) > 1 and out.nbytes >= _PARALLEL_BYTES
        order = range(len(spans))
        done = list(_pool().map(decode, order)) if many else [decode(i) for i in order]
        for (_, a, b), ok in zip(spans, done, strict=True):
            if not ok:
                out[a - lo:b - lo] = ds[a:b]
        return out

    def stored(self, k: int) -> tuple[int, bytes] | None:
        """Filter mask and stored bytes of chunk ``k``; None when it is not stored (its rows
        read as fill values) or cannot be read as stored."""
        try:
            return self.ds.id.read_direct_chunk((k * self.rows,) + (0,) * len(self.row_shape))
        except Exception:  # h5py reads it (and says why it cannot)
            return None


def read_rows(ds: h5py.Dataset, lo: int, hi: int) -> np.ndarray | None:
    """Rows ``lo:hi`` of ``ds`` decoded chunk by chunk with ISA-L, None when ``ds`` does not
    suit (:meth:`ChunkDecoder.of`): the caller reads it with h5py."""
    decoder = ChunkDecoder.of(ds)
    return None if decoder is None else decoder.read(lo, hi)
