"""PNG plots of the most diverging series of a comparison (``pvdkit diff --plots DIR``).

Each plot: title (object, attribute, element), top panel A (blue) and B (orange) over the
comparison frames, bottom panel A − B with the tolerance band ``±(atol + rtol·|b|)`` shaded,
and a red dashed marker at the first divergence in both panels. Values hold between samples
(zero-order hold, drawn as steps), as in the comparison. Drawn by :mod:`pvdkit.plots`
(matplotlib, the ``plots`` extra); this module only says what each plot shows.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from pvdkit import plots
from pvdkit.diff.report import at_time
from pvdkit.terminal import printable
from pvdkit.units import unit_label, unit_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from pvdkit.diff.engine import Comparison
    from pvdkit.diff.result import DiffResult, SeriesDiff

__all__ = ["plot_rank", "plot_series", "write_plots"]


def plot_series(frames: np.ndarray, a: np.ndarray, b: np.ndarray, band: np.ndarray, *, title: str,
                subtitle: str = "", first_frame: int | None = None, width: int = 960,
                height: int = 640, quantity: str = "value", unit: str | None = None) -> Figure:
    """The figure of one comparison: A and B over ``frames`` (NaN = unset), A − B with the band
    ``±band``, a dashed marker at ``first_frame``; ``width`` x ``height`` pixels. The y axes
    name ``quantity`` and ``unit`` (:mod:`pvdkit.units`) when known."""
    fig, (top, bottom) = plots.figure(width, height, rows=2, height_ratios=(3, 2), sharex=True)
    f = np.asarray(frames, dtype=np.float64)
    a, b = _finite_or_nan(a), _finite_or_nan(b)
    d = a - b
    fig.suptitle(_fit(title, 110), x=0.01, ha="left", fontsize=12, fontweight="bold", parse_math=False)
    if subtitle:
        top.set_title(_fit(subtitle, 170), loc="left", fontsize=8, color="#5a5a5a", parse_math=False)
    top.step(f, b, where="post", color=plots.ORANGE, linewidth=1.6, label="B")
    top.step(f, a, where="post", color=plots.BLUE, linewidth=1.6, label="A")  # A on top where equal
    top.set_ylabel(unit_label(quantity, unit))
    limits = _limits(d, band, -band)
    if limits is not None:
        bottom.set_ylim(*limits)
    # An infinite band (no tolerance) fills the panel rather than stretching its limits.
    shown = np.minimum(np.asarray(band, dtype=np.float64), 10.0 * _span(limits))
    bottom.fill_between(f, -shown, shown, step="post", color=plots.BAND, linewidth=0, label="tolerance")
    bottom.axhline(0.0, color=plots.GREY, linewidth=0.8)
    bottom.step(f, d, where="post", color=plots.BLACK, linewidth=1.2, label="A − B")
    bottom.set_ylabel(unit_label("A − B", unit))
    bottom.set_xlabel("frame")
    if len(f):
        lo, hi = float(f.min()), float(f.max())
        bottom.set_xlim(lo, hi if hi > lo else lo + 1.0)
    bottom.locator_params(axis="x", integer=True)
    if first_frame is not None:
        for ax in (top, bottom):
            ax.axvline(first_frame, color=plots.RED, linestyle="--", linewidth=1.5, label="first divergence")
    entries = _legend_entries(top, bottom)
    order = [x for x in _LEGEND if x in entries]
    fig.legend([entries[x] for x in order], order, loc="outside lower center", ncols=len(order),
               frameon=False, fontsize=9)
    return fig


_LEGEND = ("A", "B", "A − B", "tolerance", "first divergence")


def _finite_or_nan(v: np.ndarray) -> np.ndarray:
    """Values to draw: ±inf become gaps (NaN), like unset values."""
    v = np.asarray(v, dtype=np.float64)
    return np.where(np.isfinite(v), v, np.nan)


def _limits(*arrays: np.ndarray) -> tuple[float, float] | None:
    """y range covering the finite values of ``arrays``, padded 6 %; None when there are none."""
    vals = np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in arrays])
    vals = vals[np.isfinite(vals)]
    if not len(vals):
        return None
    lo, hi = float(vals.min()), float(vals.max())
    pad = (hi - lo) * 0.06 if hi > lo else max(abs(lo) * 0.05, 1e-12)
    return lo - pad, hi + pad


def _span(limits: tuple[float, float] | None) -> float:
    return 1.0 if limits is None else max(abs(limits[0]), abs(limits[1]), 1e-300)


def _legend_entries(*axes: Axes) -> dict[str, Any]:
    """Label -> legend handle over ``axes`` (the marker, drawn in both panels, once)."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, h)
    return entries


def _fit(text: str, n: int) -> str:
    return text if len(text) <= n else text[:max(n - 1, 1)] + "…"


def plot_rank(s: SeriesDiff) -> tuple:
    """Sort key of "most diverging": largest relative error, then absolute, then earliest."""
    rel = s.max_rel if s.max_rel is not None else -1.0
    ab = s.max_abs if s.max_abs is not None else -1.0
    ff = s.first_frame if s.first_frame is not None else math.inf
    return (-rel, -ab, ff)


def write_plots(cmp: Comparison, res: DiffResult, directory: str | os.PathLike, limit: int = 8) -> list[str]:
    """Write PNG plots of the ``limit`` most diverging numeric series (float and int kinds)
    into ``directory`` (created if missing; its parent folder must exist) and return the file
    paths. Each file is written atomically (:mod:`pvdkit.outputs`). Needs the ``plots`` extra
    (matplotlib); without it, one :class:`~pvdkit.types.PvdError` line names it."""
    cands = sorted((s for s in res.differing_series if s.kind in ("float", "int")), key=plot_rank)
    return [os.fspath(p) for p in plots.write_pngs(directory, _figures(cmp, res, cands[:max(limit, 0)]))]


def _figures(cmp: Comparison, res: DiffResult, series: list[SeriesDiff]) -> Iterator[tuple[str, Figure]]:
    """(file name, figure) of each series worth a plot, numbered by rank, built one at a time."""
    for rank, s in enumerate(series, 1):
        al = cmp.aligned(s)
        if al is None or not len(al.frames):
            continue
        comp = f"[{al.component}]" if s.component or _width(cmp, s) > 1 else ""
        ft = at_time(s)
        err = f"max|a-b| {s.max_abs:.4g}" if s.max_abs is not None else s.status
        sub = (f"A {os.path.basename(res.a)}  B {os.path.basename(res.b)}  first divergence: frame "
               f"{s.first_frame}{ft}  {err}  {s.tolerance.describe()}")
        title = printable(f"{s.shown}.{s.attribute}{comp}  ({s.cls})")  # matplotlib takes no raw bytes
        cls = cmp.a.classes.get(s.cls) or cmp.b.classes.get(s.cls)
        quantity = printable(f"{s.attribute.rsplit('.', 1)[-1]}{comp}")
        fig = plot_series(al.frames, al.a, al.b, al.band, title=title, subtitle=printable(sub),
                          first_frame=s.first_frame, quantity=quantity,
                          unit=unit_of(cls, s.attribute) if cls is not None else None)
        yield f"{rank:02d}_{_slug(f'{s.object}.{s.attribute}')}.png", fig


def _width(cmp: Comparison, s: SeriesDiff) -> int:
    rec, idx = (cmp.a, s.index_a) if s.index_a >= 0 else (cmp.b, s.index_b)
    for x in rec.all_series(rec.objects[idx]):
        if x.name == s.attribute:
            raw = getattr(x, "raw", None)
            return raw.shape[1] if isinstance(raw, np.ndarray) and raw.ndim == 2 else 1
    return 1


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:120] or "series"
