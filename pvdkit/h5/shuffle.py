"""HDF5's shuffle filter as compiled kernels: byte *b* of every element of a chunk together.

Why: numpy shuffles by a transposed byte copy, ~31 µs per 128 KB chunk here; reading whole
elements and splitting them with shifts is ~3 µs, which made shuffling the largest cost of a
fleet recording's commit after deflate. Loaded when a :class:`pvdkit.h5.chunks.DirectChunks` is
made (a recording stream, which uses numba anyway), so that reading a recording never imports
the compiler.
"""

from __future__ import annotations

import numpy as np

from pvdkit.jit import njit

__all__ = ["shuffled"]


@njit(cache=True, nogil=True)
def _shuffle4(words, chunk_rows):
    out = np.zeros(4 * chunk_rows, np.uint8)
    for i in range(words.shape[0]):
        w = words[i]
        out[i] = w & 0xFF
        out[chunk_rows + i] = (w >> 8) & 0xFF
        out[2 * chunk_rows + i] = (w >> 16) & 0xFF
        out[3 * chunk_rows + i] = (w >> 24) & 0xFF
    return out


@njit(cache=True, nogil=True)
def _shuffle8(words, chunk_rows):
    out = np.zeros(8 * chunk_rows, np.uint8)
    for i in range(words.shape[0]):
        w = words[i]
        for b in range(8):
            out[b * chunk_rows + i] = (w >> (8 * b)) & 0xFF
    return out


@njit(cache=True, nogil=True)
def _shuffle_rows(rows, chunk_rows):
    n, size = rows.shape
    out = np.zeros(size * chunk_rows, np.uint8)
    for b in range(size):  # written in order, read at the row stride
        base = b * chunk_rows
        for i in range(n):
            out[base + i] = rows[i, b]
    return out


def shuffled(elements: np.ndarray, chunk_elements: int) -> np.ndarray:
    """The bytes HDF5's shuffle filter makes of a chunk of ``chunk_elements`` elements whose
    first are ``elements`` (1-D, contiguous, little-endian) and the rest zeros."""
    size = elements.dtype.itemsize
    if size == 1:  # nothing to shuffle: the chunk padded
        out = np.zeros(chunk_elements, np.uint8)
        out[: len(elements)] = elements.view(np.uint8)
        return out
    if size == 4:
        return _shuffle4(elements.view(np.uint32), chunk_elements)
    if size == 8:
        return _shuffle8(elements.view(np.uint64), chunk_elements)
    return _shuffle_rows(elements.view(np.uint8).reshape(-1, size), chunk_elements)
