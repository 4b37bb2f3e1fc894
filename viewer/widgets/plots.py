"""Stacked plots with linked x axes, a frame cursor synced with the timeline, and comparisons.

Each :class:`~viewer.model.series.Plot` of the workspace becomes a :class:`PlotPanel`: step
curves drawn from :func:`viewer.model.downsample.step_points` (clipped to the view and min-max
downsampled per pixel column, recomputed when the visible range or width changes, never when
only the frame changes), a vertical cursor at the current frame (drag it or click anywhere in a
plot to seek), and a legend that reads every curve's value at the cursor. With comparison
recordings open (B, C, D …), each curve gets a dashed / dotted overlay per recording and,
optionally, a panel below with each recording's difference to the chosen reference (A − B by
default), only where both recordings have frames. The x axis is time in seconds (ticks at round
times, placed at the frames that reach them) or frame numbers; the value axis shows the curves'
unit (:mod:`pvdkit.units`) and, for gears and enums, the values' names.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QFileDialog,
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from pvdkit.types import DataType
from pvdkit.units import unit_of
from viewer.model.compare import LETTERS, Comparison
from viewer.model.downsample import step_points
from viewer.model.properties import format_number
from viewer.model.series import Curve, CurveData, Plot, PlotError, curves_csv
from viewer.model.session import RecordingSession
from viewer.model.values import ValueNames
from viewer.model.workspace import Workspace
from viewer.widgets import theme
from viewer.widgets.property_view import CURVE_MIME

LEFT_AXIS_WIDTH = 74
X_AXIS_MODES = ("time", "frame")


class FrameTimeAxis(pg.AxisItem):
    """The shared x axis: curves are drawn against frame numbers, and in ``time`` mode the ticks
    are placed at round seconds (at the first frame reaching that time) and labelled in seconds.

    Why not plot against seconds: PhysX writes two frames per step at one time, and both must
    stay reachable with the cursor; the frame axis keeps them apart, the ticks read as time.
    """

    def __init__(self, stack: PlotStack) -> None:
        super().__init__("bottom")
        self.stack = stack

    def _table(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(distinct times, first frame of each), or None in frame mode / without time."""
        if self.stack.x_axis != "time":
            return None
        return self.stack.time_table()

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 - pyqtgraph's names
        table = self._table()
        if table is None:
            return super().tickValues(minVal, maxVal, size)
        times, first = table
        t0, t1 = np.interp([minVal, maxVal], first, times)
        if not t1 > t0:
            return super().tickValues(minVal, maxVal, size)
        out = []
        for spacing, values in super().tickValues(t0, t1, size):
            out.append((spacing, list(np.interp(np.asarray(values, np.float64), times, first))))
        return out

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's name
        table = self._table()
        if table is None:
            return super().tickStrings(values, scale, spacing)
        times, first = table
        seconds = np.interp(np.asarray(values, np.float64), first, times)
        decimals = max(0, int(-math.floor(math.log10(spacing)))) if spacing > 0 else 3
        return [f"{t:.{decimals}f}" for t in seconds]

    def refresh(self) -> None:
        """Redraw the ticks after the mode or the time base changed."""
        self.picture = None
        self.update()


#: Widest a legend's title may make the legend (px) when its rows are narrower.
TITLE_ROOM = 480


class CurveLegend(pg.GraphicsWidgetAnchor, pg.GraphicsWidget):
    """Legend that also reads out each curve's value at the cursor.

    Painted in one pass (no child label items), so updating every value on a frame change is
    one ``update()`` call whatever the number of curves. Drag it to move it.
    """

    def __init__(self) -> None:
        pg.GraphicsWidget.__init__(self)
        pg.GraphicsWidgetAnchor.__init__(self)
        self.setZValue(100)
        self.title = ""
        self.rows: list[tuple[str, QColor, bool]] = []  # label, colour, dashed
        self.values: list[str] = []
        self.font = QFont("DejaVu Sans", 8)
        self.mono = theme.mono_font(8)
        self._fm = QFontMetrics(self.font)
        self._fmm = QFontMetrics(self.mono)
        self._label_w = 0
        self._line = self._fm.height()
        self._value_w = self._fmm.horizontalAdvance("-0.000000e+00")
        self._static: QPixmap | None = None
        self._value_pens: list[QPen] = []

    def set_rows(self, title: str, rows: list[tuple[str, QColor, bool]]) -> None:
        self.title = title
        self.rows = rows
        self.values = [""] * len(rows)
        self._label_w = max([self._fm.horizontalAdvance(r[0]) for r in rows] + [0])
        self._line = max(self._fm.height(), self._fmm.height())
        bold = QFont(self.font)
        bold.setBold(True)
        rows_w = 22 + self._label_w + 10 + self._value_w
        # A title longer than the rows (the attribute, then every compared file's name) is cut
        # with "…": at its full width the legend outgrew the plot and hid the values.
        room = max(rows_w, TITLE_ROOM)
        bold_fm = QFontMetrics(bold)
        if bold_fm.horizontalAdvance(title) > room:
            title = bold_fm.elidedText(title, Qt.TextElideMode.ElideRight, room)
            self.title = title
        title_w = bold_fm.horizontalAdvance(title) + 12
        w = max(rows_w, title_w) + 12
        h = self._line * (len(rows) + (1 if title else 0)) + 8
        self.setMinimumSize(w, h)
        self.setMaximumSize(w, h)
        self.resize(w, h)
        self._static = self._render_static(w, h, bold)
        self._value_pens = [QPen(QColor(c).lighter(125)) for _, c, _ in rows]
        self.update()

    def _render_static(self, w: float, h: float, bold: QFont) -> QPixmap:
        """Background, title, line samples and labels: drawn once per set of rows, so a frame
        change only draws the values."""
        ratio = QGuiApplication.primaryScreen().devicePixelRatio() if QGuiApplication.primaryScreen() else 1.0
        pm = QPixmap(int(np.ceil(w * ratio)), int(np.ceil(h * ratio)))
        pm.setDevicePixelRatio(ratio)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setPen(QPen(QColor(255, 255, 255, 30)))
        p.setBrush(QColor(22, 24, 29, 215))
        p.drawRoundedRect(QRectF(0.5, 0.5, w - 1, h - 1), 4, 4)
        line = self._line
        y = 4
        if self.title:
            p.setFont(bold)
            p.setPen(QColor(theme.TEXT))
            p.drawText(QRectF(6, y, w - 12, line), Qt.AlignmentFlag.AlignVCenter, self.title)
            y += line
        p.setFont(self.font)
        for label, color, dashed in self.rows:
            pen = QPen(color, 2)
            if dashed:
                pen.setStyle(Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.drawLine(QPointF(6, y + line / 2), QPointF(22, y + line / 2))
            p.setPen(QColor(theme.TEXT))
            p.drawText(QRectF(28, y, self._label_w + 4, line), Qt.AlignmentFlag.AlignVCenter, label)
            y += line
        p.end()
        return pm

    def set_values(self, values: list[str]) -> None:
        self.values = values
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self.size().width(), self.size().height())

    def paint(self, p: QPainter, *args) -> None:
        if self._static is None:
            return
        p.drawPixmap(QPointF(0, 0), self._static)
        line = self._line
        x = self.size().width() - 6 - self._value_w
        y = 4 + (line if self.title else 0)
        p.setFont(self.mono)
        align = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight
        for pen, text in zip(self._value_pens, self.values, strict=False):
            p.setPen(pen)
            p.drawText(QRectF(x, y, self._value_w, line), align, text)
            y += line

    def mouseDragEvent(self, ev) -> None:
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self.autoAnchor(self.pos() + (ev.pos() - ev.lastPos()))


class CurveLayer(pg.GraphicsObject):
    """Every curve of one plot, painted in one pass and from one cached pixmap.

    Moving the frame cursor repaints a strip of every plot. Stroking each curve again for it
    costs about 2 ms per dense 5000-point curve (0.4 s for 200 curves); so the layer is cached
    in device pixels (``DeviceCoordinateCache``) and stroked again only when its curves, the
    zoom or the size change. One pixmap per plot, not per curve: per-curve pixmaps would
    overflow Qt's pixmap cache with many curves and be re-rendered all the time. Pens are one
    pixel wide: wider ones go through Qt's general stroker, some fifty times slower on dense
    step curves.
    """

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[tuple[QPainterPath, QPen]] = []
        self._rect = QRectF()
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def set_curves(self, curves: list[tuple[np.ndarray, np.ndarray, QPen]]) -> None:
        """Replace the drawn curves: (xs, ys, pen) polylines in data coordinates."""
        self.prepareGeometryChange()
        self.paths = []
        rect = QRectF()
        for xs, ys, pen in curves:
            if len(xs) < 2:
                continue
            path = pg.arrayToQPath(xs, ys, connect="finite")
            self.paths.append((path, pen))
            rect = rect.united(path.boundingRect())
        self._rect = rect
        self.update()

    def boundingRect(self) -> QRectF:
        if not self.paths:
            return QRectF()
        # Grow by a few pixels so that flat curves (zero height) and pen widths are covered.
        px = self.pixelLength(pg.Point(1, 0)) or 0.0
        py = self.pixelLength(pg.Point(0, 1)) or 0.0
        return self._rect.adjusted(-3 * px, -3 * py, 3 * px, 3 * py)

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()

    def paint(self, p: QPainter, *args) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        for path, pen in self.paths:
            p.setPen(pen)
            p.drawPath(path)


class _Overlay:
    """A compared recording's twin of a curve: its own data and its place on A's frame axis."""

    def __init__(self, j: int, comparison: Comparison, b_data: CurveData | None, on_a: CurveData,
                 pen: QPen) -> None:
        self.j = j
        self.comparison = comparison
        self.b_data = b_data  # on the compared recording's own frames
        self.on_a = on_a  # placed on A's frame axis
        self.pen = pen


class _Drawn:
    """One curve as drawn: model curve, its data and pen, value names; its overlays and
    differences in comparisons."""

    def __init__(self, curve: Curve, data: CurveData | None, pen: QPen) -> None:
        self.curve = curve
        self.data = data
        self.pen = pen
        self.names: ValueNames | None = None
        self.overlays: list[_Overlay] = []
        self.diffs: list[tuple[int, CurveData, QPen]] = []  # (recording, recording − reference, pen)

    @property
    def overlay(self) -> CurveData | None:
        """The first compared recording's curve on A's frame axis (None when not comparing)."""
        return self.overlays[0].on_a if self.overlays else None

    @property
    def diff(self) -> CurveData | None:
        """The first difference shown (A − B by default)."""
        return self.diffs[0][1] if self.diffs else None

    def text(self, v: float) -> str:
        if math.isnan(v):  # no value there (before the first sample, after a recording ended)
            return "—"
        named = self.names.text(v) if self.names is not None else None
        return named if named is not None else _fmt(v)


def shade(color: QColor, j: int) -> QColor:
    """Recording ``j``'s shade of a curve colour (A as is, B, C … darker)."""
    return color if j == 0 else color.darker(110 + 20 * (j - 1))


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "—"
    return format_number(v)


class TimeViewBox(pg.ViewBox):
    """A plot's view: x is the stack's shared time axis (the wheel zooms it, a drag pans it);
    y is fitted to the visible points by :meth:`PlotPanel.redraw` until the user takes it —
    the wheel or a drag on the value axis, or with Ctrl held in the plot — to look closely at
    small values (a limit cycle of a few rad/s on a 100 rad/s wheel speed). A double-click in
    the plot, or *Fit y to the data* in its menu, hands y back."""

    def __init__(self) -> None:
        super().__init__()
        #: The user zoomed or panned y: redraw() keeps their range.
        self.y_manual = False

    def _axis(self, ev, axis: int | None) -> int:
        """The one axis a wheel or drag moves: the axis under the mouse, else y with Ctrl, x."""
        if axis is None:
            axis = 1 if ev.modifiers() & Qt.KeyboardModifier.ControlModifier else 0
        if axis == 1:
            self.y_manual = True
        return axis

    def wheelEvent(self, ev, axis=None) -> None:  # noqa: N802 - Qt's name
        super().wheelEvent(ev, self._axis(ev, axis))

    def mouseDragEvent(self, ev, axis=None) -> None:  # noqa: N802 - Qt's name
        super().mouseDragEvent(ev, self._axis(ev, axis))


class PlotPanel:
    """One plot of the stack (and its difference panel when comparing)."""

    def __init__(self, stack: PlotStack, plot: Plot, row: int) -> None:
        self.stack = stack
        self.plot = plot
        ws = stack.workspace
        self.item: pg.PlotItem = stack.canvas.addPlot(row=row, col=0, viewBox=TimeViewBox(),
                                                      axisItems={"bottom": FrameTimeAxis(stack)})
        self._style(self.item)
        self.cursor = self._cursor(self.item)
        self.legend = CurveLegend()
        self.legend.setParentItem(self.item.getViewBox())
        self.legend.anchor((0, 0), (0, 0), offset=(8, 6))
        self.diff_item: pg.PlotItem | None = None
        self.diff_cursor: pg.InfiniteLine | None = None
        self.diff_legend: CurveLegend | None = None
        self.drawn: list[_Drawn] = []
        self.layer = CurveLayer()
        self.item.addItem(self.layer)
        self.diff_layer: CurveLayer | None = None
        compared = ws.compared
        for c in plot.curves:
            color = theme.curve_color(c.color)
            d = _Drawn(c, self._data(c), pg.mkPen(color, width=1))
            if ws.properties is not None and c.key.component is None and ws.session is not None:
                d.names = ws.properties.value_names(ws.session.recording.objects[c.key.object_index],
                                                    c.key.attribute)
            for j, comp in enumerate(compared.members if compared is not None else [], start=1):
                kb = comp.counterpart_key(c.key)
                on_a = comp.overlay(c.key)
                if on_a is None:
                    continue
                pen = pg.mkPen(shade(color, j), width=1, style=theme.compare_style(j))
                b_data = comp.cache_b.get(kb) if kb is not None else None
                d.overlays.append(_Overlay(j, comp, b_data, on_a, pen))
            self.drawn.append(d)
        self.unit = self._unit()
        self.names = self._common_names()
        if compared is not None and compared.members and stack.show_difference:
            self.diff_item = stack.canvas.addPlot(row=row + 1, col=0, viewBox=TimeViewBox(),
                                                  axisItems={"bottom": FrameTimeAxis(stack)})
            self._style(self.diff_item)
            self.diff_item.setMaximumHeight(140)
            self.diff_cursor = self._cursor(self.diff_item)
            self.diff_legend = CurveLegend()
            self.diff_legend.setParentItem(self.diff_item.getViewBox())
            self.diff_legend.anchor((0, 0), (0, 0), offset=(8, 6))
            self.diff_layer = CurveLayer()
            self.diff_item.addItem(self.diff_layer)
            ref = compared.reference
            many = len(compared) > 2 or ref != 0
            rows = []
            for d in self.drawn:
                color = theme.curve_color(d.curve.color)
                for j in range(len(compared)):
                    diff = compared.difference(d.curve.key, j)
                    if diff is None:
                        continue
                    d.diffs.append((j, diff, pg.mkPen(color, width=1, style=theme.compare_style(j))))
                    label = f"{d.curve.label} ({LETTERS[ref]} − {LETTERS[j]})" if many else d.curve.label
                    rows.append((label, color, j != 0))
            title = (f"Δ A − B  ({compared.members[0].b.name}, by {compared.sync})" if not many else
                     f"Δ {compared.label(ref)} − others  (by {compared.sync})")
            self.diff_legend.set_rows(title, rows)
            if self.unit:
                self.diff_item.setLabel("left", f"Δ [{self.unit}]", color=theme.DIM_TEXT)
        rows = []
        for d in self.drawn:
            color = theme.curve_color(d.curve.color)
            rows.append((d.curve.label, color, False))
            for ov in d.overlays:
                rows.append((f"{d.curve.label} ({LETTERS[ov.j]})", shade(color, ov.j), True))
        title = plot.title + (f"  [{self.unit}]" if self.unit else "")
        if compared is not None and compared.members and any(d.overlays for d in self.drawn):
            # which file each letter of the dashed curves is (with three or more, (B) and (C) alone
            # left the reader to find out)
            title += "   vs " + ", ".join(compared.label(j) for j in range(1, len(compared)))
        self.legend.set_rows(title, rows)
        if self.unit:
            self.item.setLabel("left", f"[{self.unit}]", color=theme.DIM_TEXT)
        self._remove_action = QAction("Remove this plot", self.item.getViewBox().menu)
        self._remove_action.triggered.connect(lambda: ws.plots.remove_plot(plot))
        self.item.getViewBox().menu.addAction(self._remove_action)
        self._actions = [self._remove_action]  # kept alive with the panel
        for text, slot in (("Copy the data in view as CSV", self.copy_csv),
                           ("Save the data in view as CSV…", self._save_csv_dialog)):
            act = QAction(text, self.item.getViewBox().menu)
            act.triggered.connect(slot)
            self.item.getViewBox().menu.addAction(act)
            self._actions.append(act)
        for vb in (item.getViewBox() for item in self.items()):
            fit = QAction("Fit y to the data", vb.menu)
            fit.triggered.connect(lambda _c=False, v=vb: self.fit_y(v))
            vb.menu.addAction(fit)
            self._actions.append(fit)

    def csv_text(self) -> str:
        """The plot's curves at every frame in view, as CSV (:func:`viewer.model.series.curves_csv`):
        each curve, its twins in the compared recordings (on A's frames, as drawn) and the
        differences the panel below shows; titles as in the legends, with the unit."""
        ws = self.stack.workspace
        n = ws.session.n_frames if ws.session is not None else 0
        x0, x1 = self.item.getViewBox().viewRange()[0]
        frames = np.arange(max(math.ceil(x0), 0), min(math.floor(x1), n - 1) + 1, dtype=np.int64)
        unit = f" [{self.unit}]" if self.unit else ""
        columns: list[tuple[str, CurveData]] = []
        for d in self.drawn:
            if d.data is not None:
                columns.append((f"{d.curve.label}{unit}", d.data))
            columns += [(f"{d.curve.label} ({LETTERS[ov.j]}){unit}", ov.on_a) for ov in d.overlays]
        compared = ws.compared
        if compared is not None:
            ref = LETTERS[compared.reference]
            for d in self.drawn:
                columns += [(f"{d.curve.label} ({ref} − {LETTERS[j]}){unit}", data) for j, data, _ in d.diffs]
        tb = ws.timeline.timebase
        seconds = tb.seconds[frames] if len(tb.seconds) == n and n else None
        return curves_csv(frames, seconds, columns)

    def copy_csv(self) -> None:
        text = self.csv_text()
        QGuiApplication.clipboard().setText(text)
        self.stack.status(f"copied {self.plot.title}: {text.count(chr(10)) - 1} frames as CSV", error=False)

    def save_csv(self, path: str) -> bool:
        """Write :meth:`csv_text` to ``path``; False (said in the status bar) when it cannot."""
        try:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(self.csv_text())
        except OSError as exc:
            self.stack.status(f"cannot write {path}: {exc.strerror or exc}")
            return False
        self.stack.status(f"saved {self.plot.title} to {path}", error=False)
        return True

    def _save_csv_dialog(self) -> None:
        # The title names the vehicle by its path (/World/Basic): no folders in the file's name.
        name = re.sub(r'[/\\:*?"<>|]+', "_", self.plot.title).strip(" ._") or "plot"
        path, _ = QFileDialog.getSaveFileName(None, "Save plot data", f"{name}.csv", "CSV (*.csv)")
        if path:
            self.save_csv(path)

    def fit_y(self, vb: pg.ViewBox) -> None:
        """Hand ``vb``'s y back to the fit to the visible points (after a manual zoom)."""
        if isinstance(vb, TimeViewBox) and vb.y_manual:
            vb.y_manual = False
            self.stack.redraw()

    def refresh_data(self) -> bool:
        """A live recording grew: fetch every curve (and its comparisons) again into the same
        items. False when that is not enough (a difference appeared or vanished): rebuild."""
        compared = self.stack.workspace.compared
        for d in self.drawn:
            d.data = self._data(d.curve)
            for ov in d.overlays:
                on_a = ov.comparison.overlay(d.curve.key)
                if on_a is None:
                    return False
                ov.on_a = on_a
            diffs = []
            for j, _, pen in d.diffs:
                diff = compared.difference(d.curve.key, j) if compared is not None else None
                if diff is None:
                    return False
                diffs.append((j, diff, pen))
            d.diffs = diffs
        return True

    def _unit(self) -> str:
        """The unit every curve shares ("" when they differ or have none)."""
        ws = self.stack.workspace
        if ws.session is None:
            return ""
        units: set[str | None] = set()
        for d in self.drawn:
            obj = ws.session.recording.objects[d.curve.key.object_index]
            units.add(unit_of(obj.cls, d.curve.key.attribute) if obj.cls is not None else None)
        return (units.pop() or "") if len(units) == 1 else ""

    def _common_names(self) -> ValueNames | None:
        """Value names every curve shares (gears, one enum): the value axis then reads them."""
        kinds = {d.names for d in self.drawn}
        return kinds.pop() if len(kinds) == 1 else None

    # ------------------------------------------------------------------ construction helpers

    def _data(self, c: Curve) -> CurveData | None:
        ws = self.stack.workspace
        try:
            return ws.curves.get(c.key) if ws.curves is not None else None
        except PlotError as exc:
            self.stack.status(str(exc))
            return None

    def _style(self, item: pg.PlotItem) -> None:
        item.showGrid(x=True, y=True, alpha=theme.GRID_ALPHA)
        item.getAxis("left").setWidth(LEFT_AXIS_WIDTH)
        # Values as recorded: no "(x0.001)" rescaling beside the unit label.
        item.getAxis("left").enableAutoSIPrefix(False)
        item.setMenuEnabled(True)
        item.hideButtons()
        vb = item.getViewBox()
        vb.setMouseMode(pg.ViewBox.PanMode)
        # x: shared frame axis; y: fitted to the visible points by redraw() (until the user
        # takes it, see TimeViewBox), not by pyqtgraph's auto-range, which would re-fit (and
        # invalidate every cached curve) each time the frame cursor moves.
        vb.setMouseEnabled(x=True, y=True)
        vb.disableAutoRange()
        for name in ("left", "bottom"):
            ax = item.getAxis(name)
            ax.setTextPen(pg.mkPen(theme.DIM_TEXT))
            ax.setPen(pg.mkPen("#3a3f4a"))
            # Axes and grid change with the range only; the cursor strip repaints from a pixmap.
            ax.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def _cursor(self, item: pg.PlotItem) -> pg.InfiniteLine:
        line = pg.InfiniteLine(pos=0, angle=90, movable=True,
                               pen=pg.mkPen(theme.CURSOR, width=1.2),
                               hoverPen=pg.mkPen(theme.CURSOR, width=3))
        line.setZValue(50)
        item.addItem(line, ignoreBounds=True)
        line.sigDragged.connect(lambda ln: self.stack.workspace.timeline.set_frame(int(round(ln.value()))))
        return line

    def items(self) -> list[pg.PlotItem]:
        return [self.item] + ([self.diff_item] if self.diff_item is not None else [])

    # ------------------------------------------------------------------ drawing

    def redraw(self, x0: float, x1: float, hold_until: float) -> None:
        """Recompute the visible points of every curve for the range and current width."""
        width = max(int(self.item.getViewBox().width()), 50)
        ranges: dict[int, list[float]] = {}
        main: list[tuple[np.ndarray, np.ndarray, QPen]] = []
        diff: list[tuple[np.ndarray, np.ndarray, QPen]] = []
        for d in self.drawn:
            parts = [(ov.on_a, ov.pen, main, self.item) for ov in d.overlays]
            parts.append((d.data, d.pen, main, self.item))
            parts += [(data, pen, diff, self.diff_item) for _, data, pen in d.diffs]
            for data, pen, out, target in parts:
                if data is None or pen is None or target is None:
                    continue
                xs, ys = step_points(data.frames, data.values, x0, x1, width, hold_until)
                out.append((xs, ys, pen))
                finite = ys[np.isfinite(ys)]
                if len(finite):
                    r = ranges.setdefault(id(target), [np.inf, -np.inf])
                    r[0] = min(r[0], float(finite.min()))
                    r[1] = max(r[1], float(finite.max()))
        self.layer.set_curves(main)
        if self.diff_layer is not None:
            self.diff_layer.set_curves(diff)
        for target in self.items():
            lo, hi = ranges.get(id(target), (np.inf, -np.inf))
            if not np.isfinite(lo) or getattr(target.getViewBox(), "y_manual", False):
                continue
            pad = 0.06 * (hi - lo) if hi > lo else max(abs(hi) * 0.05, 1e-9)
            if target is self.item and self.names is not None:
                pad = max(pad, 0.3)
            target.getViewBox().setYRange(lo - pad, hi + pad, padding=0)
        if self.names is not None:
            lo, hi = self.item.getViewBox().viewRange()[1]
            ticks = self.names.ticks(lo, hi)
            self.item.getAxis("left").setTicks([ticks] if ticks else None)

    def set_frame(self, frame: int) -> None:
        """Move the cursors and read every curve at ``frame``."""
        self.cursor.setValue(frame)
        values = []
        for d in self.drawn:
            values.append(d.text(d.data.value_at(frame)) if d.data is not None else "n/a")
            # Each twin as drawn: "—" once its recording has ended, not its last value held.
            values += [d.text(ov.on_a.value_at(frame)) if ov.b_data is not None else "n/a"
                       for ov in d.overlays]
        self.legend.set_values(values)
        if self.diff_item is not None and self.diff_cursor is not None and self.diff_legend is not None:
            self.diff_cursor.setValue(frame)
            self.diff_legend.set_values([_fmt(data.value_at(frame))
                                         for d in self.drawn for _, data, _ in d.diffs])

    def cursor_values(self) -> list[float]:
        """Each A curve's value at the cursor (what the legend shows), for tests and tools."""
        f = int(round(self.cursor.value()))
        return [d.data.value_at(f) if d.data is not None else float("nan") for d in self.drawn]


class _Canvas(pg.GraphicsLayoutWidget):
    """The plot area; accepts attributes dragged from the property view."""

    def __init__(self, stack: PlotStack) -> None:
        super().__init__()
        self.stack = stack
        self.setAcceptDrops(True)

    def dragEnterEvent(self, ev) -> None:
        if ev.mimeData().hasFormat(CURVE_MIME):
            ev.acceptProposedAction()
        else:
            ev.ignore()

    def dragMoveEvent(self, ev) -> None:
        if ev.mimeData().hasFormat(CURVE_MIME):
            ev.acceptProposedAction()
        else:
            ev.ignore()

    def dropEvent(self, ev) -> None:
        if not ev.mimeData().hasFormat(CURVE_MIME):
            ev.ignore()
            return
        spec = json.loads(bytes(ev.mimeData().data(CURVE_MIME)).decode())
        scene_pos = self.mapToScene(ev.position().toPoint())
        self.stack.drop_curve(spec, scene_pos)
        ev.acceptProposedAction()


#: Shortest interval between two redraws of a live recording's curves (ms).
GROW_REDRAW_MS = 250


def _shrinkable(box: QComboBox, characters: int) -> None:
    """Let ``box`` shrink to about ``characters`` characters (its text elided) when the bar is
    narrow, instead of squeezing the attribute field beside it to nothing."""
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # the whole text when there is room
    box.setMinimumWidth(characters * box.fontMetrics().averageCharWidth() + 28)  # room for the arrow


class PlotStack(QWidget):
    """The plot toolbar and the stack of plot panels."""

    #: The frames in view changed (first, last; both None when no plot is shown): the X–Y
    #: panel shows the points of those frames.
    window_changed = Signal(object, object)

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.show_difference = True
        #: "time" (ticks in seconds) or "frame" (frame numbers) on the shared x axis.
        self.x_axis = "time"
        self._time_table: tuple[object, tuple[np.ndarray, np.ndarray] | None] | None = None
        self.attribute = QLineEdit()
        self.attribute.setPlaceholderText("Class.attribute to plot, e.g. TireForce.lngForce[z]  (Enter)")
        self.attribute.setMinimumWidth(140)  # the vehicle box beside it shrinks (and elides) first
        self._names = QStringListModel(self)
        self.completer = attribute_completer(self._names, self)
        self.attribute.setCompleter(self.completer)
        self.vehicle = QComboBox()
        self.vehicle.setToolTip("Whose objects to plot: the selected object's vehicle (one curve per wheel), "
                                "a given vehicle, or every object of the class")
        _shrinkable(self.vehicle, 8)
        self.plot_button = QPushButton("Plot")
        self.clear_button = QPushButton("Clear")
        self.diff_box = QCheckBox("Δ A−B")
        self.diff_box.setChecked(True)
        self.diff_box.setToolTip("Show the difference to the comparison recording under each plot")
        self.sync_box = QComboBox()
        self.sync_box.addItem("sync by frame", "frame")
        self.sync_box.addItem("sync by time", "time")
        self.reference_box = QComboBox()
        self.reference_box.setToolTip("Differences are taken against this recording")
        self.x_box = QComboBox()
        self.x_box.addItem("x: time [s]", "time")
        self.x_box.addItem("x: frame", "frame")
        self.x_box.setToolTip("The x axis: simulated time in seconds, or frame numbers")
        self.message = QLabel()
        # Wrapped, and no say in the window's width: a long error (a file path and the
        # suggestions) widened the central area and squeezed the docks, for good.
        self.message.setWordWrap(True)
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 4, 4, 0)
        bar.addWidget(self.attribute, 3)
        bar.addWidget(QLabel("for"))
        bar.addWidget(self.vehicle, 1)
        bar.addWidget(self.plot_button)
        bar.addWidget(self.clear_button)
        bar.addWidget(self.x_box)
        # The comparison's controls get a row of their own, shown while comparing: on one row
        # beside a docked window's panels they squeezed the attribute field to nothing.
        self.compare_bar = QWidget()
        compare_row = QHBoxLayout(self.compare_bar)
        compare_row.setContentsMargins(4, 0, 4, 0)
        compare_row.addWidget(self.diff_box)
        compare_row.addWidget(self.reference_box)
        compare_row.addWidget(self.sync_box)
        compare_row.addStretch(1)
        self.compare_bar.hide()
        self.canvas = _Canvas(self)
        self.canvas.ci.setSpacing(2)
        self.canvas.ci.setContentsMargins(2, 2, 8, 2)
        self.placeholder = QLabel("Plot an attribute: type Class.attribute above, double-click a number "
                                  "in the property view, or drag it here.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)  # a narrow window wraps it instead of growing
        self.placeholder.setStyleSheet(f"color: {theme.DIM_TEXT}; background: {theme.BACKGROUND};")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(bar)
        lay.addWidget(self.compare_bar)
        lay.addWidget(self.message)
        lay.addWidget(self.canvas, 1)
        lay.addWidget(self.placeholder, 1)
        self.message.hide()
        self.panels: list[PlotPanel] = []
        self.master: pg.PlotItem | None = None
        self._range: tuple[float, float] | None = None
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(0)
        self._redraw_timer.timeout.connect(self.redraw)
        # A live recording grows many times a second: its curves are fetched again at most
        # every GROW_REDRAW_MS (and then only the grown data, from the workspace's caches).
        self._grow_timer = QTimer(self)
        self._grow_timer.setSingleShot(True)
        self._grow_timer.setInterval(GROW_REDRAW_MS)
        self._grow_timer.timeout.connect(self._apply_growth)
        self._shown_last = 0
        self._names_stale = False
        self._x_label_shown = ""  # the x axis label rebuild() set last
        self.attribute.returnPressed.connect(self._on_plot)
        self.plot_button.clicked.connect(self._on_plot)
        self.clear_button.clicked.connect(workspace.plots.clear)
        self.diff_box.toggled.connect(self._on_diff_toggled)
        self.sync_box.currentIndexChanged.connect(self._on_sync)
        self.reference_box.currentIndexChanged.connect(self._on_reference)
        self.x_box.currentIndexChanged.connect(lambda i: self.set_x_axis(self.x_box.itemData(i)))
        self.canvas.scene().sigMouseClicked.connect(self._on_click)
        workspace.plots.plot_added.connect(lambda _p: self.rebuild())
        workspace.plots.plot_removed.connect(lambda _p: self.rebuild())
        workspace.plots.plot_changed.connect(lambda _p: self.rebuild())
        workspace.plots.plots_replaced.connect(self.rebuild)
        workspace.timeline.frame_changed.connect(self.set_frame)
        workspace.session_changed.connect(self._on_session)
        workspace.comparison_changed.connect(self._on_comparison)
        workspace.grown.connect(self._on_grown)
        self._on_comparison(None)
        self._on_session(None)

    # ------------------------------------------------------------------ model → view

    def _on_session(self, session: RecordingSession | None) -> None:
        self._range = None
        self.vehicle.clear()
        self.vehicle.addItem("selected vehicle", "selected")
        names: list[str] = []
        if session is not None:
            for v in session.vehicles:
                self.vehicle.addItem(v.name, v.index)
            self.vehicle.addItem("every object of the class", "all")
            names = numeric_attribute_names(session)
        self._names.setStringList(names)
        self.rebuild()

    def _on_grown(self, growth) -> None:
        self._names_stale = self._names_stale or growth.structure_changed
        if not self._grow_timer.isActive():
            self._grow_timer.start()

    def _apply_growth(self) -> None:
        """Show what a live recording received: the x range keeps its start and, when it ended
        at the last frame, stretches (or, zoomed in, slides) to the new last frame."""
        session = self.workspace.session
        if session is None:
            return
        # New objects (a vehicle's actor, which names it; its wheels' positions, which give
        # their sides) or a clock first heard of change the panels' titles, legends and x label.
        relabel = self._names_stale or (self.master is not None and self._x_label_shown != self.x_label())
        if self._names_stale:
            self._names_stale = False
            current = self.vehicle.currentData()
            self.vehicle.blockSignals(True)
            self.vehicle.clear()
            self.vehicle.addItem("selected vehicle", "selected")
            for v in session.vehicles:
                self.vehicle.addItem(v.name, v.index)
            self.vehicle.addItem("every object of the class", "all")
            i = self.vehicle.findData(current)
            self.vehicle.setCurrentIndex(max(i, 0))
            self.vehicle.blockSignals(False)
            self._names.setStringList(numeric_attribute_names(session))
        last = float(max(session.n_frames - 1, 1))
        if self.master is None:
            self.rebuild()
            return
        x0, x1 = self.master.getViewBox().viewRange()[0]
        if relabel or not all(panel.refresh_data() for panel in self.panels):
            following = x1 >= self._shown_last - 0.5
            self.rebuild()
            if following and self.master is not None:  # the view still ends at the last frame
                self.master.setXRange(x0 + (last - x1 if x0 > 0.5 else 0.0), last, padding=0)
            return
        if x1 >= self._shown_last - 0.5:  # the view reached the end: keep showing it
            if x0 > 0.5:
                x0 += last - x1
            self.master.setXRange(x0, last, padding=0)  # redraws (sigXRangeChanged)
        self._shown_last = last
        self.redraw()
        self.set_frame(self.workspace.timeline.frame)

    def _on_comparison(self, comparison: Comparison | None) -> None:
        self.compare_bar.setVisible(comparison is not None)
        compared = self.workspace.compared
        self.reference_box.setVisible(compared is not None and len(compared) > 1)
        self.reference_box.blockSignals(True)
        self.reference_box.clear()
        if compared is not None:
            for j in range(len(compared)):
                self.reference_box.addItem(f"Δ against {compared.label(j)}", j)
            self.reference_box.setCurrentIndex(compared.reference)
        self.reference_box.blockSignals(False)
        if comparison is not None:
            self.sync_box.blockSignals(True)
            self.sync_box.setCurrentIndex(0 if comparison.sync == "frame" else 1)
            self.sync_box.blockSignals(False)
        self.rebuild()

    def time_table(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(distinct times, the first frame at each) of the open recording, for the time axis;
        None without at least two distinct times."""
        tb = self.workspace.timeline.timebase
        if self._time_table is None or self._time_table[0] is not tb:
            table = None
            if len(tb.seconds) >= 2:
                times, first = np.unique(tb.seconds, return_index=True)
                if len(times) >= 2:
                    table = (times, first.astype(np.float64))
            self._time_table = (tb, table)
        return self._time_table[1]

    def set_x_axis(self, mode: str) -> None:
        """Label the x axis in seconds (``"time"``) or frame numbers (``"frame"``)."""
        if mode not in X_AXIS_MODES:
            raise ValueError(f"x axis {mode!r}: expected one of {', '.join(X_AXIS_MODES)}")
        self.x_axis = mode
        self.x_box.blockSignals(True)
        self.x_box.setCurrentIndex(X_AXIS_MODES.index(mode))
        self.x_box.blockSignals(False)
        self.rebuild()

    def x_label(self) -> str:
        return "time [s]" if self.x_axis == "time" and self.time_table() is not None else "frame"

    def rebuild(self) -> None:
        """Recreate the panels from the plots model (after plots or comparison changed)."""
        if self.master is not None:
            self._range = tuple(self.master.getViewBox().viewRange()[0])
        self.canvas.clear()
        self.panels = []
        self.master = None
        row = 0
        for plot in self.workspace.plots.plots:
            panel = PlotPanel(self, plot, row)
            if self.master is None:
                self.master = panel.item
                panel.item.getViewBox().sigXRangeChanged.connect(lambda *_a: self._redraw_timer.start())
                panel.item.getViewBox().sigResized.connect(lambda *_a: self._redraw_timer.start())
            self.panels.append(panel)
            row += 2
        for i, panel in enumerate(self.panels):
            last = i == len(self.panels) - 1
            for item in panel.items():
                if item is not self.master:
                    item.setXLink(self.master)
                is_bottom = last and item is panel.items()[-1]
                ax = item.getAxis("bottom")
                ax.setStyle(showValues=is_bottom)
                if not is_bottom:
                    ax.setHeight(8)
            if last:
                self._x_label_shown = self.x_label()
                panel.items()[-1].setLabel("bottom", self._x_label_shown, color=theme.DIM_TEXT)
        has = bool(self.panels)
        self.canvas.setVisible(has)
        self.placeholder.setVisible(not has)
        if not has:
            self.window_changed.emit(None, None)
        if has:
            session = self.workspace.session
            n = session.n_frames if session else 1
            x0, x1 = self._range if self._range is not None else (0.0, max(n - 1, 1))
            self.master.setXRange(x0, x1, padding=0)
            self._shown_last = float(max(n - 1, 1))
            self.redraw()
            self.set_frame(self.workspace.timeline.frame)

    def show_all(self) -> None:
        """Zoom out to the whole recording, every value axis fitted to its data again."""
        if self.master is None:
            return
        for panel in self.panels:
            for item in panel.items():
                vb = item.getViewBox()
                if isinstance(vb, TimeViewBox):
                    vb.y_manual = False
        session = self.workspace.session
        n = session.n_frames if session else 1
        self.master.setXRange(0.0, float(max(n - 1, 1)), padding=0)
        self.redraw()

    def frame_window(self) -> tuple[int, int] | None:
        """The first and last frame in view in the time plots (None when no plot is shown)."""
        if self.master is None:
            return None
        x0, x1 = self.master.getViewBox().viewRange()[0]
        return math.ceil(x0), math.floor(x1)

    def redraw(self) -> None:
        """Recompute visible points of every curve (after a range or size change)."""
        if self.master is None:
            self.window_changed.emit(None, None)
            return
        x0, x1 = self.master.getViewBox().viewRange()[0]
        session = self.workspace.session
        hold = float(max(session.n_frames - 1, 0)) if session else x1
        for panel in self.panels:
            panel.redraw(x0, x1, hold)
        self.window_changed.emit(math.ceil(x0), math.floor(x1))

    def set_frame(self, frame: int) -> None:
        for panel in self.panels:
            panel.set_frame(frame)

    def status(self, text: str, *, error: bool = True) -> None:
        """A line above the plots: an error (red) or, with ``error=False``, a plain note."""
        self.message.setStyleSheet(f"color: {theme.ERROR}" if error else "")
        self.message.setText(text)
        self.message.setVisible(bool(text))

    # ------------------------------------------------------------------ view → model

    def _on_plot(self) -> None:
        spec = self.attribute.text().strip()
        if not spec:
            return
        ws = self.workspace
        choice = self.vehicle.currentData()
        vehicle = None
        context = ws.selection.current
        if isinstance(choice, int) and ws.session is not None:
            vehicle = ws.session.vehicles[choice]
        elif choice == "all":
            context = None
        try:
            if context is None and vehicle is None:
                self._plot_all(spec)
            else:
                ws.plot(spec, context=context, vehicle=vehicle)
        except (PlotError, ValueError) as exc:
            self.status(str(exc))
            return
        self.status("")

    def _plot_all(self, spec: str) -> None:
        from viewer.model.series import resolve_targets

        ws = self.workspace
        if ws.session is None:
            raise ValueError("no recording is open")
        target = resolve_targets(ws.session.recording, ws.session.vehicles, spec, None, None)
        ws.plots.add_target(target)

    def _on_diff_toggled(self, on: bool) -> None:
        self.show_difference = on
        self.rebuild()

    def _on_sync(self, index: int) -> None:
        if self.workspace.compared is not None:
            self.workspace.set_sync(self.sync_box.itemData(index))
            self.workspace.timeline.frame_changed.emit(self.workspace.timeline.frame)

    def _on_reference(self, index: int) -> None:
        compared = self.workspace.compared
        if compared is not None and index >= 0:
            compared.reference = int(self.reference_box.itemData(index))

    def panel_at(self, scene_pos: QPointF) -> PlotPanel | None:
        for panel in self.panels:
            for item in panel.items():
                if item.getViewBox().sceneBoundingRect().contains(scene_pos):
                    return panel
        return None

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        panel = self.panel_at(ev.scenePos())
        if panel is None:
            return
        if ev.double():  # y back to the fit to the data, in the plot clicked
            for item in panel.items():
                if item.getViewBox().sceneBoundingRect().contains(ev.scenePos()):
                    panel.fit_y(item.getViewBox())
            return
        x = panel.item.getViewBox().mapSceneToView(ev.scenePos()).x()
        self.workspace.timeline.set_frame(int(round(x)))

    def drop_curve(self, spec: dict, scene_pos: QPointF | None = None) -> None:
        """Add a dragged attribute to the plot under ``scene_pos`` (a new plot elsewhere)."""
        ws = self.workspace
        if ws.session is None:
            return
        obj = ws.session.recording.objects[int(spec["object"])]
        panel = self.panel_at(scene_pos) if scene_pos is not None else None
        try:
            plot = panel.plot if panel is not None else ws.plots.add_plot(spec["label"])
            ws.plots.add_curve(plot, obj, spec["attribute"], spec["component"], spec["label"])
        except PlotError as exc:
            self.status(str(exc))


def attribute_completer(names: QStringListModel, parent: QWidget) -> QCompleter:
    """Completes ``Class.attribute`` specs from ``names``: any case, matching anywhere in the
    name (``lngsl`` finds ``TireSlipState.lngSlip``)."""
    completer = QCompleter(names, parent)
    completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    completer.setFilterMode(Qt.MatchFlag.MatchContains)
    return completer


def numeric_attribute_names(session: RecordingSession) -> list[str]:
    """``Class.attribute`` of every numeric attribute of every class that has objects."""
    rec = session.recording
    seen: set[str] = set()
    names = []
    used = {o.cls.name for o in rec.objects if o.cls is not None}
    for cname in sorted(used):
        cls = rec.classes.get(cname)
        if cls is None:
            continue
        for path, chain in cls.paths.items():
            a = chain[-1]
            numeric = a.kind == "value" and a.data_type not in (DataType.STRING, DataType.OBJECT_HANDLE)
            if a.kind == "flags" or numeric:
                key = f"{cname}.{path}"
                if key not in seen:
                    seen.add(key)
                    names.append(key)
    return names

