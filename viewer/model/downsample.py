"""Clip-to-view and min-max downsampling of zero-order-hold (step) curves.

A recorded value holds until the next sample, so a curve is a staircase, and at screen resolution
a pixel column must show every value the staircase takes inside it — or a one-frame spike (the
kind of bug people open the viewer for) disappears when zoomed out. :func:`step_points` therefore
keeps, per pixel column, the value entering the column and the minimum, maximum and last sample
inside it (four points, one vertical stroke), and only the samples in view: the cost follows the
visible samples and the plot width, and a 1M-sample curve draws about 4 × width points.
"""

from __future__ import annotations

import math

import numpy as np

from pvdkit.jit import njit


def _int_bound(x: float, dtype: np.dtype) -> np.generic:
    info = np.iinfo(dtype)
    return dtype.type(min(max(math.floor(x), info.min), info.max))


def visible_range(frames: np.ndarray, x0: float, x1: float) -> tuple[int, int]:
    """Sample index range ``[i0, i1)`` that draws ``[x0, x1]``: the sample in force at ``x0``
    (the last one at or before it) through the last sample at or before ``x1``."""
    n = len(frames)
    if frames.dtype.kind in "iu":
        # Same answer for integer frames, and no float copy of the whole array for the compare.
        x0, x1 = _int_bound(x0, frames.dtype), _int_bound(x1, frames.dtype)
    i0 = max(int(np.searchsorted(frames, x0, side="right")) - 1, 0)
    i1 = min(int(np.searchsorted(frames, x1, side="right")), n)
    return i0, max(i1, min(i0 + 1, n))


@njit(cache=True)
def _buckets(f, v, x0, scale, width):
    """One pass over the visible samples: per non-empty pixel column, the x of its first sample,
    the value entering it, and the min, max and last value inside it."""
    n = f.shape[0]
    xf = np.empty(width, np.float64)
    entering = np.empty(width, np.float64)
    mins = np.empty(width, np.float64)
    maxs = np.empty(width, np.float64)
    lasts = np.empty(width, np.float64)
    k = -1
    prev_b = -1
    lo = 0.0
    hi = 0.0
    for i in range(n):
        b = int((f[i] - x0) * scale)
        if b < 0:
            b = 0
        if b >= width:
            b = width - 1
        y = v[i]
        if b != prev_b:
            if k >= 0:
                mins[k] = lo
                maxs[k] = hi
                lasts[k] = v[i - 1]
            k += 1
            xf[k] = f[i]
            entering[k] = y if k == 0 else v[i - 1]
            lo = y
            hi = y
            prev_b = b
        else:
            lo = min(lo, y)
            hi = max(hi, y)
    mins[k] = lo
    maxs[k] = hi
    lasts[k] = v[n - 1]
    k += 1
    return xf[:k], entering[:k], mins[:k], maxs[:k], lasts[:k]


def step_points(frames: np.ndarray, values: np.ndarray, x0: float, x1: float, width_px: int,
                hold_until: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Polyline ``(xs, ys)`` drawing the step curve of ``(frames, values)`` over ``[x0, x1]``.

    ``frames`` must be sorted (non-decreasing). With at most 2 samples per pixel the staircase is
    exact (two points per sample); otherwise samples are bucketed by pixel column and each column
    keeps (entering value, min, max, last) at the x of its first sample. The last value is held
    to ``min(x1, hold_until)`` (``hold_until``: the recording's last frame; None = ``x1``).
    """
    frames = np.asarray(frames)
    values = np.asarray(values, np.float64)
    if len(frames) != len(values):
        raise ValueError(f"frames ({len(frames)}) and values ({len(values)}) differ in length")
    if not len(frames) or not x1 > x0:
        return np.zeros(0), np.zeros(0)
    width_px = max(int(width_px), 1)
    i0, i1 = visible_range(frames, x0, x1)
    f = frames[i0:i1]
    v = values[i0:i1]
    end = x1 if hold_until is None else min(x1, hold_until)
    end = max(end, float(f[-1]))
    if len(f) <= 2 * width_px:
        xs = np.repeat(f.astype(np.float64), 2)[1:]
        ys = np.repeat(v, 2)[:-1]
        xs = np.append(xs, end)
        ys = np.append(ys, v[-1])
        xs[0] = max(xs[0], x0)
        return xs, ys
    xf, entering, mins, maxs, lasts = _buckets(f, v, float(x0), width_px / (x1 - x0), width_px)
    xf[0] = max(xf[0], x0)
    xs = np.append(np.repeat(xf, 4), end)
    ys = np.append(np.stack([entering, mins, maxs, lasts], axis=1).reshape(-1), lasts[-1])
    return xs, ys


def zoh_values(frames: np.ndarray, values: np.ndarray, at: np.ndarray, fill: float = np.nan) -> np.ndarray:
    """Values in force at each frame of ``at`` (zero-order hold); ``fill`` before the first sample."""
    idx = np.searchsorted(frames, at, side="right") - 1
    out = np.asarray(values, np.float64)[np.clip(idx, 0, None)] if len(values) else np.full(len(at), fill)
    return np.where(idx >= 0, out, fill)
