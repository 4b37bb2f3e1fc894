"""How far apart two float samples are: ``|a - b|``, around the circle for angles that wrap,
and up to sign for rotation quaternions (:data:`pvdkit.diff.tolerance.GEOMETRY_RULES`).

One home for both comparison paths (one series at a time in :mod:`pvdkit.diff.engine`, many
at once in :mod:`pvdkit.diff.bulk`) and the plots, so that a verdict, its max error and the
curve drawn agree.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_compared", "distances"]

#: Elements of a value holding its quaternion (x, y, z, w), at its start.
QUATERNION_WIDTH = 4


def as_compared(a: np.ndarray, b: np.ndarray, period: np.ndarray | float,
                quaternion: np.ndarray | bool) -> np.ndarray:
    """B's float64 rows ``(n, width)`` as they are compared with A's: a quaternion row takes
    the sign (q or −q, same rotation) nearer to A, and a periodic value is moved by whole
    periods to the one nearest A. ``period`` (0 = none) and ``quaternion`` are scalars or
    one per row. ``b`` itself is returned when neither applies."""
    n, width = b.shape
    quat = np.broadcast_to(np.asarray(quaternion, bool), (n,))
    per = np.broadcast_to(np.asarray(period, np.float64), (n,))
    flip = np.zeros(n, bool)
    if width >= QUATERNION_WIDTH and quat.any():
        qa, qb = a[:, :QUATERNION_WIDTH], b[:, :QUATERNION_WIDTH]
        with np.errstate(invalid="ignore", over="ignore"):
            same = np.abs(qa - qb).max(axis=1)
            opposite = np.abs(qa + qb).max(axis=1)
        flip = quat & (opposite < same)
    wraps = per > 0
    if not flip.any() and not wraps.any():
        return b
    out = b.copy()
    out[flip, :QUATERNION_WIDTH] = -out[flip, :QUATERNION_WIDTH]
    if wraps.any():
        p = per[wraps][:, None]
        with np.errstate(invalid="ignore", over="ignore"):
            turns = np.round((a[wraps] - out[wraps]) / p)
            moved = out[wraps] + turns * p
        # infinities and NaN stay as they were (inf - inf has no nearest turn)
        out[wraps] = np.where(np.isfinite(moved), moved, out[wraps])
    return out


def distances(a: np.ndarray, b: np.ndarray, period: np.ndarray | float,
              quaternion: np.ndarray | bool) -> tuple[np.ndarray, np.ndarray]:
    """``(|a - b'|, b')`` for float64 rows ``(n, width)``, with ``b'`` = :func:`as_compared`.
    Callers test ``a == b'`` too (equal infinities, whose difference is NaN)."""
    bc = as_compared(a, b, period, quaternion)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(a - bc), bc
