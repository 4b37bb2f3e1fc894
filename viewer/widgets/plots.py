"""Stacked plots with linked x axes, a frame cursor synced with the timeline, and comparisons.

Each :class:`~viewer.model.series.Plot` of the workspace becomes a :class:`PlotPanel`: step
curves drawn from :func:`viewer.model.downsample.step_points` (clipped to the view and min-max
downsampled per pixel column, recomputed when the visible range or width changes, never when
only the frame changes), a vertical cursor at the current frame (drag it or click anywhere in a
plot to seek), and a legend that reads every curve's value at the cursor. With a comparison
recording open, each curve gets a dashed overlay from recording B and, optionally, a panel
below with the difference A − B.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QStringListModel, Qt, QTimer
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
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pvdkit.types import DataType
from viewer.model.compare import Comparison
from viewer.model.downsample import step_points
from viewer.model.properties import format_number
from viewer.model.series import Curve, CurveData, Plot, PlotError
from viewer.model.session import RecordingSession
from viewer.model.workspace import Workspace
from viewer.widgets import theme
from viewer.widgets.property_view import CURVE_MIME

LEFT_AXIS_WIDTH = 62


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
        title_w = QFontMetrics(bold).horizontalAdvance(title) + 12
        w = max(22 + self._label_w + 10 + self._value_w, title_w) + 12
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


class _Drawn:
    """One curve as drawn: model curve, its data and pen; the same for B and A−B."""

    def __init__(self, curve: Curve, data: CurveData | None, pen: QPen) -> None:
        self.curve = curve
        self.data = data
        self.pen = pen
        self.b_data: CurveData | None = None  # B's curve on B's own frames
        self.overlay: CurveData | None = None  # B's curve placed on A's frame axis
        self.overlay_pen: QPen | None = None
        self.diff: CurveData | None = None


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "—"
    return format_number(v)


class PlotPanel:
    """One plot of the stack (and its difference panel when comparing)."""

    def __init__(self, stack: PlotStack, plot: Plot, row: int) -> None:
        self.stack = stack
        self.plot = plot
        ws = stack.workspace
        self.item: pg.PlotItem = stack.canvas.addPlot(row=row, col=0)
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
        comp: Comparison | None = ws.comparison
        for c in plot.curves:
            color = theme.curve_color(c.color)
            d = _Drawn(c, self._data(c), pg.mkPen(color, width=1))
            if comp is not None:
                kb = comp.counterpart_key(c.key)
                d.b_data = comp.cache_b.get(kb) if kb is not None else None
                d.overlay = comp.overlay(c.key)
                d.overlay_pen = pg.mkPen(color.darker(110), width=1, style=Qt.PenStyle.DashLine)
            self.drawn.append(d)
        if comp is not None and stack.show_difference:
            self.diff_item = stack.canvas.addPlot(row=row + 1, col=0)
            self._style(self.diff_item)
            self.diff_item.setMaximumHeight(140)
            self.diff_cursor = self._cursor(self.diff_item)
            self.diff_legend = CurveLegend()
            self.diff_legend.setParentItem(self.diff_item.getViewBox())
            self.diff_legend.anchor((0, 0), (0, 0), offset=(8, 6))
            self.diff_layer = CurveLayer()
            self.diff_item.addItem(self.diff_layer)
            rows = []
            for d in self.drawn:
                d.diff = comp.difference(d.curve.key)
                if d.diff is not None:
                    rows.append((d.curve.label, theme.curve_color(d.curve.color), False))
            self.diff_legend.set_rows(f"Δ A − B  ({comp.b.name}, by {comp.sync})", rows)
        rows = []
        for d in self.drawn:
            color = theme.curve_color(d.curve.color)
            rows.append((d.curve.label, color, False))
            if d.overlay is not None:
                rows.append((f"{d.curve.label} (B)", color.darker(110), True))
        self.legend.set_rows(plot.title, rows)
        self._remove_action = QAction("Remove this plot", self.item.getViewBox().menu)
        self._remove_action.triggered.connect(lambda: ws.plots.remove_plot(plot))
        self.item.getViewBox().menu.addAction(self._remove_action)

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
        item.setMenuEnabled(True)
        item.hideButtons()
        vb = item.getViewBox()
        vb.setMouseMode(pg.ViewBox.PanMode)
        # x: shared frame axis (wheel zooms time only); y: fitted to the visible points by
        # redraw(), not by pyqtgraph's auto-range, which would re-fit (and invalidate every
        # cached curve) each time the frame cursor moves.
        vb.setMouseEnabled(x=True, y=False)
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
            for data, pen, out, target in ((d.overlay, d.overlay_pen, main, self.item),
                                           (d.data, d.pen, main, self.item),
                                           (d.diff, d.pen, diff, self.diff_item)):
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
            if not np.isfinite(lo):
                continue
            pad = 0.06 * (hi - lo) if hi > lo else max(abs(hi) * 0.05, 1e-9)
            target.getViewBox().setYRange(lo - pad, hi + pad, padding=0)

    def set_frame(self, frame: int) -> None:
        """Move the cursors and read every curve at ``frame``."""
        self.cursor.setValue(frame)
        comp = self.stack.workspace.comparison
        values = []
        fb = comp.frame_b(frame) if comp is not None else frame
        for d in self.drawn:
            values.append(_fmt(d.data.value_at(frame)) if d.data is not None else "n/a")
            if d.overlay is not None and d.b_data is not None:
                values.append(_fmt(d.b_data.value_at(fb)))
        self.legend.set_values(values)
        if self.diff_item is not None and self.diff_cursor is not None and self.diff_legend is not None:
            self.diff_cursor.setValue(frame)
            self.diff_legend.set_values([_fmt(d.diff.value_at(frame))
                                         for d in self.drawn if d.diff is not None])

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


class PlotStack(QWidget):
    """The plot toolbar and the stack of plot panels."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.show_difference = True
        self.attribute = QLineEdit()
        self.attribute.setPlaceholderText("Class.attribute to plot, e.g. TireForce.lngForce[z]  (Enter)")
        self._names = QStringListModel(self)
        self.completer = QCompleter(self._names, self)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.attribute.setCompleter(self.completer)
        self.vehicle = QComboBox()
        self.vehicle.setToolTip("Whose objects to plot: the selected object's vehicle (one curve per wheel), "
                                "a given vehicle, or every object of the class")
        self.vehicle.setMinimumWidth(150)
        self.plot_button = QPushButton("Plot")
        self.clear_button = QPushButton("Clear")
        self.diff_box = QCheckBox("Δ A−B")
        self.diff_box.setChecked(True)
        self.diff_box.setToolTip("Show the difference to the comparison recording under each plot")
        self.sync_box = QComboBox()
        self.sync_box.addItem("sync by frame", "frame")
        self.sync_box.addItem("sync by time", "time")
        self.message = QLabel()
        self.message.setStyleSheet(f"color: {theme.ERROR}")
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 4, 4, 0)
        bar.addWidget(self.attribute, 3)
        bar.addWidget(QLabel("for"))
        bar.addWidget(self.vehicle, 1)
        bar.addWidget(self.plot_button)
        bar.addWidget(self.clear_button)
        bar.addWidget(self.diff_box)
        bar.addWidget(self.sync_box)
        self.canvas = _Canvas(self)
        self.canvas.ci.setSpacing(2)
        self.canvas.ci.setContentsMargins(2, 2, 8, 2)
        self.placeholder = QLabel("Plot an attribute: type Class.attribute above, double-click a number "
                                  "in the property view, or drag it here.")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet(f"color: {theme.DIM_TEXT}; background: {theme.BACKGROUND};")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(bar)
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
        self.attribute.returnPressed.connect(self._on_plot)
        self.plot_button.clicked.connect(self._on_plot)
        self.clear_button.clicked.connect(workspace.plots.clear)
        self.diff_box.toggled.connect(self._on_diff_toggled)
        self.sync_box.currentIndexChanged.connect(self._on_sync)
        self.canvas.scene().sigMouseClicked.connect(self._on_click)
        workspace.plots.plot_added.connect(lambda _p: self.rebuild())
        workspace.plots.plot_removed.connect(lambda _p: self.rebuild())
        workspace.plots.plot_changed.connect(lambda _p: self.rebuild())
        workspace.timeline.frame_changed.connect(self.set_frame)
        workspace.session_changed.connect(self._on_session)
        workspace.comparison_changed.connect(self._on_comparison)
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

    def _on_comparison(self, comparison: Comparison | None) -> None:
        self.diff_box.setVisible(comparison is not None)
        self.sync_box.setVisible(comparison is not None)
        if comparison is not None:
            self.sync_box.blockSignals(True)
            self.sync_box.setCurrentIndex(0 if comparison.sync == "frame" else 1)
            self.sync_box.blockSignals(False)
            comparison.sync_changed.connect(lambda _m: self.rebuild())
        self.rebuild()

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
                panel.items()[-1].setLabel("bottom", "frame")
        has = bool(self.panels)
        self.canvas.setVisible(has)
        self.placeholder.setVisible(not has)
        if has:
            session = self.workspace.session
            n = session.n_frames if session else 1
            x0, x1 = self._range if self._range is not None else (0.0, max(n - 1, 1))
            self.master.setXRange(x0, x1, padding=0)
            self.redraw()
            self.set_frame(self.workspace.timeline.frame)

    def redraw(self) -> None:
        """Recompute visible points of every curve (after a range or size change)."""
        if self.master is None:
            return
        x0, x1 = self.master.getViewBox().viewRange()[0]
        session = self.workspace.session
        hold = float(max(session.n_frames - 1, 0)) if session else x1
        for panel in self.panels:
            panel.redraw(x0, x1, hold)

    def set_frame(self, frame: int) -> None:
        for panel in self.panels:
            panel.set_frame(frame)

    def status(self, text: str) -> None:
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
        comp = self.workspace.comparison
        if comp is not None:
            comp.sync = self.sync_box.itemData(index)
            self.workspace.timeline.frame_changed.emit(self.workspace.timeline.frame)

    def panel_at(self, scene_pos: QPointF) -> PlotPanel | None:
        for panel in self.panels:
            for item in panel.items():
                if item.getViewBox().sceneBoundingRect().contains(scene_pos):
                    return panel
        return None

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton or ev.double():
            return
        panel = self.panel_at(ev.scenePos())
        if panel is None:
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

