"""PNG charts: the one plotting module for every PNG the project writes (``--plots``).

Why matplotlib: the project used to draw its charts twice by hand (a 5x7 pixel font, a line
rasteriser and a PNG encoder in ``pvdkit.diff.plot`` and again in ``simcore.bicycle``), ~600
lines that gave upper-case labels, no units, no Greek and ticks of their own. matplotlib is the
field's standard: axes, tick labels, real text, legends, step curves and shaded bands come for
free and look like every other engineering plot, and a chart is a dozen lines of its API.

Why the Figure API on the Agg backend: :func:`figure` makes a plain :class:`Figure` with its
own :class:`FigureCanvasAgg` — no pyplot, so no global figure registry or backend switch, no
display server, nothing left open; a figure is garbage once written.

Why an extra (``pvdkit[plots]``): only ``--plots`` needs it, so a CI job that only diffs
installs numpy, h5py and numba. Nothing here imports matplotlib until a figure is made; then a
missing matplotlib is one :class:`~pvdkit.types.PvdError` line naming the extra (:func:`require`).

Files are written atomically through :mod:`pvdkit.outputs`, like every pvdkit output.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pvdkit import outputs
from pvdkit.lazy import import_module

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["BAND", "BLACK", "BLUE", "DPI", "GREEN", "GREY", "ORANGE", "RED", "figure", "png_bytes", "require",
           "write_png", "write_pngs"]

#: Pixels per inch of every figure: sizes are given in pixels and the PNG has exactly those.
DPI = 100

# matplotlib's default ("tab10") colours, named so that callers say which series is which.
BLUE, ORANGE, GREEN, RED = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"
GREY, BLACK = "#969696", "#000000"
#: Fill of a tolerance band.
BAND = "#fad7d7"

_EXTRA = {"extra": "plots", "modules": ("matplotlib",), "what": "--plots"}


def _backend() -> tuple[Any, Any]:
    """matplotlib's ``Figure`` and ``FigureCanvasAgg`` classes; PvdError naming the extra if missing."""
    fig_mod = import_module("matplotlib.figure", **_EXTRA)
    agg = import_module("matplotlib.backends.backend_agg", **_EXTRA)
    return fig_mod.Figure, agg.FigureCanvasAgg


def require() -> None:
    """Raise the one-line :class:`~pvdkit.types.PvdError` now if matplotlib is not installed —
    for a caller that wants to fail before long work rather than at its first plot."""
    _backend()


def figure(width: int = 900, height: int = 560, *, rows: int = 1,
           height_ratios: Sequence[float] | None = None, sharex: bool = False) -> tuple[Figure, list[Axes]]:
    """A ``width`` x ``height`` pixel figure with ``rows`` stacked axes (grid on), on an Agg canvas.

    The layout is matplotlib's constrained layout, so titles, labels and an ``"outside ..."``
    legend never overlap the axes.
    """
    figure_cls, canvas_cls = _backend()
    fig = figure_cls(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")
    canvas_cls(fig)
    axes = fig.subplots(rows, 1, sharex=sharex, squeeze=False, height_ratios=height_ratios)[:, 0]
    for ax in axes:
        ax.grid(True, color="#e1e1e1", linewidth=0.8)
        ax.set_axisbelow(True)
    return fig, list(axes)


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes (exactly its pixel size; no "Software" tag, so the bytes depend
    only on the drawing and matplotlib's version)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def write_png(fig: Figure, path: str | os.PathLike) -> Path:
    """Write ``fig`` to ``path`` atomically (:func:`pvdkit.outputs.write_bytes`; its folder
    must exist) and return the path."""
    outputs.write_bytes(path, png_bytes(fig), "plot")
    return Path(path)


def write_pngs(directory: str | os.PathLike, figures: Iterable[tuple[str, Figure]]) -> list[Path]:
    """Write each ``(file name, figure)`` into ``directory`` and return the paths.

    matplotlib is checked first, so a missing extra fails before anything is created; then the
    folder is created if missing (its parent must exist: :func:`pvdkit.outputs.output_folder`).
    ``figures`` may be a generator: each figure is built, written and dropped in turn.
    """
    require()
    out = outputs.output_folder(directory, "plot folder")
    return [write_png(fig, out / name) for name, fig in figures]
