"""Rows of numbers for the HDF5 chunk tests (writing with ISA-L, reading with ISA-L)."""

from __future__ import annotations

import numpy as np

#: A table's row: fields of numbers, packed (as the recording's segments, frames …).
TABLE_ROW = np.dtype([("series", "<i8"), ("pool", "<i4"), ("n", "u1")])


def random_rows(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Values of ``dtype`` (fields filled one by one) in ``shape``, from ``rng``."""
    if dtype.fields is None:
        return (rng.normal(size=shape) * 1000).astype(dtype)
    rows = np.zeros(shape, dtype)
    for name in dtype.names:
        rows[name] = random_rows(rng, dtype.fields[name][0], shape)
    return rows
