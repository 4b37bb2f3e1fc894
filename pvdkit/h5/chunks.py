"""Append rows to a recording's chunked datasets by writing whole compressed chunks.

Why: HDF5 compresses a chunk inside its flush, one chunk at a time, with the zlib it was built
with; recording 256 vehicles that was ~11 µs per vehicle-step, three times the simulation.
ISA-L's deflate (the ``isal`` package) writes the same standard zlib stream about seven times
faster, and HDF5's direct chunk write stores it as it is. The file is unchanged for every
reader (h5py, ``h5diff``, HDF5 itself): each chunk is what the dataset's own filters — shuffle,
then deflate — decode. Datasets of numbers take this path (the pools, the command log and the
numeric tables: nearly all of a recording's bytes); tables with strings keep h5py's writes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
from isal import isal_zlib

from pvdkit.h5.layout import shuffled_deflated_rows

__all__ = ["DirectChunks"]

#: ISA-L's deflate levels; a gzip level above the last maps to it.
ISAL_LEVELS = range(isal_zlib.ISAL_BEST_SPEED, isal_zlib.ISAL_BEST_COMPRESSION + 1)


class DirectChunks:
    """Appends rows to shuffle + deflate datasets (:meth:`suits`), compressing with ISA-L.

    Every append leaves the file complete: full chunks are written once; the last, partial
    chunk is written padded and kept in memory, to be written again, longer, by the next append
    (the rows past the dataset's end are never read). ``level``: a gzip level, 0-9, clamped to
    ISA-L's 0-3.
    """

    def __init__(self, level: int | None) -> None:
        self.level = min(max(int(level if level is not None else 1), ISAL_LEVELS.start), ISAL_LEVELS.stop - 1)
        #: Threads compressing an append's full chunks side by side (ISA-L and the shuffle let go
        #: of the GIL). Why not always: a recording's commits run beside the simulation, which
        #: needs the other core; a commit the caller waits for (the last, at close) may use both.
        self.workers = 1
        self._pool: ThreadPoolExecutor | None = None
        self._pool_workers = 0
        self._tails: dict[str, np.ndarray] = {}  # dataset name -> rows of its partial last chunk
        self._taken: dict[str, bool] = {}  # dataset name -> whether it suits (asked of h5py once)
        from pvdkit.h5.shuffle import shuffled  # numba: a recording stream has loaded it already

        self._shuffled = shuffled

    def takes(self, ds: h5py.Dataset) -> bool:
        """Whether appends to ``ds`` go through here (:meth:`suits`, decided once per dataset)."""
        taken = self._taken.get(ds.name)
        if taken is None:
            taken = self._taken[ds.name] = self.suits(ds)
        return taken

    @staticmethod
    def suits(ds: h5py.Dataset) -> bool:
        """Whether ``ds`` is appended here: rows of numbers through exactly shuffle then deflate
        (:func:`~pvdkit.h5.layout.shuffled_deflated_rows`), little-endian as the recording's
        own datasets are."""
        dt = ds.dtype
        elements = [dt.fields[n][0] for n in dt.names] if dt.names else [dt]
        return all(e.byteorder in "<=|" for e in elements) and shuffled_deflated_rows(ds)

    def append(self, ds: h5py.Dataset, rows: np.ndarray) -> int:
        """Append ``rows`` to ``ds`` (which :meth:`suits`); returns the first new row's index."""
        n0 = ds.shape[0]
        if not len(rows):
            return n0
        step = ds.chunks[0]
        tail = self._tails.get(ds.name)
        if tail is None or n0 - len(tail) != n0 // step * step:  # not ours: read it back
            tail = ds[n0 // step * step : n0]
        start = n0 - len(tail)
        rows = np.asarray(rows, ds.dtype).reshape(len(rows), *ds.shape[1:])
        ds.resize(n0 + len(rows), axis=0)
        zeros = (0,) * (ds.ndim - 1)
        head = step - len(tail)  # the rows that complete the tail's chunk
        if len(tail):
            first = np.concatenate([tail, rows[:head]])
            ds.id.write_direct_chunk((start, *zeros), self.compress(first, step))
            start, rows = start + step, rows[head:]
            if not len(rows):
                self._tails[ds.name] = first if len(first) < step else first[:0]
                return n0
        starts = range(0, len(rows), step)
        if self.workers > 1 and len(starts) > 1:
            if self._pool is None or self._pool_workers != self.workers:
                self.close()
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="pvdkit-deflate")
                self._pool_workers = self.workers
            chunks = self._pool.map(lambda lo: self.compress(rows[lo : lo + step], step), starts)
        else:
            chunks = (self.compress(rows[lo : lo + step], step) for lo in starts)
        for lo, chunk in zip(starts, chunks, strict=True):
            ds.id.write_direct_chunk((start + lo, *zeros), chunk)
        kept = len(rows) % step
        self._tails[ds.name] = rows[len(rows) - kept :].copy() if kept else rows[:0]
        return n0

    def close(self) -> None:
        """Let the compressing threads go (idempotent)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def forget(self, ds: h5py.Dataset) -> None:
        """Drop what is kept of ``ds``'s last chunk: call after rows of ``ds`` were changed in
        place through h5py. The next append reads the chunk back (h5py sees its own change)
        and its direct write replaces the cached chunk, which HDF5 then drops unwritten."""
        self._tails.pop(ds.name, None)

    def compress(self, rows: np.ndarray, chunk_rows: int) -> bytes:
        """One chunk's stored bytes: ``rows`` padded with zeros to ``chunk_rows``, shuffled
        (byte *k* of every element together, as HDF5's shuffle filter does), deflated."""
        elements = np.ascontiguousarray(rows).reshape(-1)
        per_row = elements.size // len(rows) if len(rows) else 1
        return isal_zlib.compress(self._shuffled(elements, chunk_rows * per_row), self.level)
