"""Top-down view: every vehicle's chassis and wheels at the current frame, and its trajectory.

Drawn in the ground plane the model found (:class:`viewer.model.geometry.GroundPlane`), so a
Y-up PhysX scene and a Z-up simcore run both look down from above; the axis labels say which
world axes are shown. Click a vehicle to select it; "follow" keeps the selected one centred.

A fleet of hundreds of vehicles is drawn with a few items whatever its size: one path per
palette colour for the chassis, one for every wheel, one trail item per colour, and overlays for
the selected vehicle. Each frame rebuilds those paths from :meth:`TopDownModel.frame_at`
arrays, so scrubbing costs about the same for 1 vehicle as for 256.
"""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen
from PySide6.QtWidgets import (
    QCheckBox,
    QGraphicsItem,
    QGraphicsPathItem,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from pvdkit.recording import Object
from viewer.model.compare import LETTERS
from viewer.model.session import RecordingSession
from viewer.model.topdown import FleetFrame, TopDownModel, VehicleShape
from viewer.model.workspace import Workspace
from viewer.widgets import theme

#: With more vehicles than this, only the selected one is labelled (hundreds of names side by
#: side are unreadable, and each label is an item moved every frame).
MAX_LABELS = 16


#: Shortest interval between two rebuilds of a live recording's top-down view (ms): the
#: trajectories are recomputed over every frame received (and the interval grows with that).
GROW_REDRAW_MS = 1000


def polygons_path(polys: np.ndarray) -> QPainterPath:
    """One path of closed polygons ``(n, k, 2)`` (each closed by its last point), built from
    arrays in one call; filled with the winding rule so that touching polygons stay filled."""
    if not len(polys):
        return QPainterPath()
    k = polys.shape[1]
    connect = np.ones((len(polys), k), np.int32)
    connect[:, -1] = 0
    path = pg.arrayToQPath(polys[..., 0].ravel(), polys[..., 1].ravel(), connect=connect.ravel(),
                           finiteCheck=False)
    path.setFillRule(Qt.FillRule.WindingFill)
    return path


def _cosmetic(color: QColor, width: float, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
    pen = QPen(color, 0)
    pen.setCosmetic(True)
    pen.setWidthF(width)
    pen.setStyle(style)
    return pen


class _FleetItems:
    """The graphics items of one recording's vehicles (created once, reshaped every frame).

    Vehicle ``i`` has colour ``theme.curve_color(i)``; vehicles of one colour share a chassis
    path and a trail item. ``j``: which recording (0: the open one; 1, 2 …: compared recordings
    B, C …, drawn as outlines in their line style, as in the plots)."""

    def __init__(self, view: pg.ViewBox, model: TopDownModel, suffix: str = "", j: int = 0) -> None:
        self.view = view
        self.model = model
        self.ghost = j > 0
        self.j = j
        self.style = theme.compare_style(j)
        n = len(model.geometries)
        self.n_colors = min(n, len(theme.PALETTE))
        self.color_of = np.arange(n) % max(self.n_colors, 1)
        self.items: list[QGraphicsItem] = []
        self.trails: list[pg.PlotCurveItem] = []
        self.bodies: list[QGraphicsPathItem] = []
        for c in range(self.n_colors):
            color = theme.curve_color(c)
            members = np.flatnonzero(self.color_of == c)
            trajs = [model.trajectory(model.geometries[i]) for i in members]
            trajs = [t for t in trajs if len(t)]
            if trajs:
                xy = np.concatenate(trajs)
                connect = np.ones(len(xy), np.int32)
                connect[np.cumsum([len(t) for t in trajs]) - 1] = 0
                trail = pg.PlotCurveItem(xy[:, 0], xy[:, 1], connect=connect, pen=pg.mkPen(
                    QColor(color.red(), color.green(), color.blue(), 120), width=1, style=self.style))
                # The trail never changes while the cars move over it: paint it from a pixmap.
                trail.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
                self.trails.append(trail)
                self._add(trail)
            body = QGraphicsPathItem()
            fill = QColor(color)
            fill.setAlpha(0 if self.ghost else 70)
            body.setBrush(QBrush(fill))
            body.setPen(_cosmetic(color, 1.2, self.style))
            self.bodies.append(body)
            self._add(body)
        self.wheels = QGraphicsPathItem()
        self.wheels.setBrush(QBrush(QColor("#0e0f12")))
        self.wheels.setPen(_cosmetic(QColor("#b0b4bb"), 1.0))
        self._add(self.wheels)
        # The selected vehicle, drawn over the others.
        self.sel_body = QGraphicsPathItem()
        self.sel_wheels = QGraphicsPathItem()
        self.sel_wheels.setBrush(QBrush(QColor("#0e0f12")))
        self.sel_wheels.setPen(_cosmetic(QColor("#e8e8e8"), 1.0))
        self._add(self.sel_body)
        self._add(self.sel_wheels)
        names = [g.vehicle.name + suffix for g in model.geometries]
        self.names = names
        self.labels: list[pg.TextItem] = []
        if n <= MAX_LABELS:
            for nm in names:
                self.labels.append(self._label(nm))
        self.sel_label = self._label("") if n > MAX_LABELS else None
        self.selected: int | None = None
        self.frame: FleetFrame | None = None

    def _label(self, text: str) -> pg.TextItem:
        # A's names just above the cars' outlines; B's, C's … just below, one line further down
        # each, so that the recordings' cars at one place do not write their names over each
        # other. Placed from the centre, a name stood nearer the next car of a fleet 4 m apart.
        below = -1.1 * (self.j - 1)
        label = pg.TextItem(text, color=theme.DIM_TEXT if self.ghost else theme.TEXT,
                            anchor=(0.5, below) if self.ghost else (0.5, 1.0))
        self._add(label)
        return label

    def _add(self, item: QGraphicsItem) -> None:
        self.view.addItem(item)
        self.items.append(item)

    def remove(self) -> None:
        for it in self.items:
            self.view.removeItem(it)
        self.items = []

    def set_selected(self, index: int | None) -> None:
        """Highlight vehicle ``index`` (a geometry index; None: none)."""
        self.selected = index
        if index is not None:
            c = theme.curve_color(int(self.color_of[index]))
            fill = QColor(c)
            fill.setAlpha(0 if self.ghost else 150)
            self.sel_body.setBrush(QBrush(fill))
            self.sel_body.setPen(_cosmetic(c.lighter(140), 2.2, self.style))
            if self.sel_label is not None:
                self.sel_label.setText(self.names[index])
        if self.frame is not None:
            self.set_frame(self.frame)

    def set_frame(self, ff: FleetFrame) -> None:
        """Reshape every item for one frame of the model."""
        self.frame = ff
        shown = ff.present.copy()
        sel = self.selected
        if sel is not None:
            shown[sel] = False
        for c, body in enumerate(self.bodies):
            body.setPath(polygons_path(ff.outlines[shown & (self.color_of == c)]))
        wp = ff.wheel_present()
        self.wheels.setPath(polygons_path(ff.wheels[wp & shown[ff.wheel_vehicle]] if len(wp) else ff.wheels))
        on = sel is not None and bool(ff.present[sel])
        self.sel_body.setVisible(on)
        self.sel_wheels.setVisible(on)
        if on:
            self.sel_body.setPath(polygons_path(ff.outlines[sel:sel + 1]))
            self.sel_wheels.setPath(polygons_path(ff.wheels[ff.wheel_vehicle == sel]))
        for i, label in enumerate(self.labels):
            label.setVisible(bool(ff.present[i]))
            if ff.present[i]:
                label.setPos(*self._label_at(ff, i))
        if self.sel_label is not None:
            self.sel_label.setVisible(on)
            if on:
                self.sel_label.setPos(*self._label_at(ff, sel))

    def _label_at(self, ff: FleetFrame, i: int) -> tuple[float, float]:
        """Where vehicle ``i``'s name goes: above its outline (A), below it (B, C …)."""
        ys = ff.outlines[i, :, 1]
        return float(ff.centres[i, 0]), float(ys.min() if self.ghost else ys.max())


class TopDownView(QWidget):
    """The top-down view widget."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.plot = pg.PlotWidget()
        self.plot.setAspectLocked(True)
        self.plot.showGrid(x=True, y=True, alpha=theme.GRID_ALPHA)
        self.plot.hideButtons()
        self.follow = QCheckBox("follow selected")
        self.info = QLabel()
        self.info.setStyleSheet(f"color: {theme.DIM_TEXT}; font-size: 8pt;")
        # Long descriptions must not widen the dock: the label is clipped, the tooltip has it all.
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 0)
        bar.addWidget(self.info, 1)
        bar.addWidget(self.follow)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(bar)
        lay.addWidget(self.plot, 1)
        self.fleet: _FleetItems | None = None
        self.fleets_b: list[_FleetItems] = []  # compared recordings B, C …
        self._fitted: tuple[float, float, float, float] | None = None  # the view _fit set last
        self._selected: int | None = None
        self.frame: FleetFrame | None = None
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.follow.toggled.connect(lambda _on: self.set_frame(self.workspace.timeline.frame))
        workspace.session_changed.connect(self._on_session)
        workspace.topdown_changed.connect(lambda: self._on_session(self.workspace.session))
        workspace.timeline.frame_changed.connect(self.set_frame)
        workspace.selection.changed.connect(self._on_selection)
        workspace.comparison_changed.connect(lambda _c: self._on_session(self.workspace.session))
        # A live recording's trajectories are rebuilt at most once per GROW_REDRAW_MS.
        self._grow_timer = QTimer(self)
        self._grow_timer.setSingleShot(True)
        self._grow_timer.setInterval(GROW_REDRAW_MS)
        self._grow_timer.timeout.connect(self._on_grown)
        workspace.grown.connect(lambda _g: self._grow_timer.isActive() or self._grow_timer.start())
        self._on_session(workspace.session)

    @property
    def shapes(self) -> list[VehicleShape]:
        """The vehicles drawn at the current frame, one :class:`VehicleShape` each."""
        model = self.workspace.topdown
        if model is None or self.frame is None:
            return []
        return model.shapes(self.frame)

    def _on_grown(self) -> None:
        """Redraw a grown live recording; the view is fitted when its first vehicle shows, and
        again when a vehicle drove out of it while the view was still the fitted one (a view
        the user zoomed or panned stays). The rebuild reads every pose so far: the next one
        waits at least 20 times as long as this one took, so that it never takes more than 5 %
        of the time."""
        started = time.perf_counter()
        had = self.fleet is not None and bool(self.fleet.model.geometries)
        untouched = self._fitted is not None and self._fitted == self._view_range()
        self.workspace.rebuild_topdown()
        self._on_session(self.workspace.session, fit=not had)
        if had and untouched and self._outside_view():
            self._fit()
        took_ms = (time.perf_counter() - started) * 1e3
        self._grow_timer.setInterval(max(GROW_REDRAW_MS, int(20 * took_ms)))

    def _on_session(self, session: RecordingSession | None, fit: bool = True) -> None:
        for fleet in (self.fleet, *self.fleets_b):
            if fleet is not None:
                fleet.remove()
        self.fleet = None
        self.fleets_b = []
        self.frame = None
        model = self.workspace.topdown if session is not None else None
        if model is None:
            self.info.setText("")
            return
        vb = self.plot.getViewBox()
        g = model.ground
        self.plot.setLabel("bottom", f"{g.u} (m)")
        self.plot.setLabel("left", f"{g.v} (m)")
        self.info.setText(f"up {g.up} ({g.source}) · {len(model.geometries)} vehicle"
                          f"{'s' if len(model.geometries) != 1 else ''}")
        styles = ("dashed", "dotted", "dash-dotted", "dash-dot-dotted")
        for j, model_b in enumerate(self.workspace.topdown_compared, start=1):
            self.fleets_b.append(_FleetItems(vb, model_b, f" ({LETTERS[j % len(LETTERS)]})", j))
            style = styles[(j - 1) % len(styles)]
            self.info.setText(self.info.text() + f" · {style}: {model_b.session.name}")
        self.info.setToolTip(self.info.text())
        self.fleet = _FleetItems(vb, model)
        self._on_selection(self.workspace.selection.current)
        self.set_frame(self.workspace.timeline.frame)
        if fit:
            self._fit()

    @property
    def fleet_b(self) -> _FleetItems | None:
        """The first compared recording's items (None when not comparing)."""
        return self.fleets_b[0] if self.fleets_b else None

    def _fit(self) -> None:
        model = self.workspace.topdown
        if model is None:
            return
        pts = []
        if self.frame is not None and self.frame.present.any():
            pts.append(self.frame.outlines[self.frame.present].reshape(-1, 2))
        for m in (model, *self.workspace.topdown_compared):
            b = m.bounds() if m is not None else None
            if b is not None:
                pts.append(np.asarray(b))
        if not pts:
            return
        allp = np.concatenate(pts)
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        pad = max(float(np.max(hi - lo)) * 0.08, 2.0)
        self.plot.setRange(xRange=(lo[0] - pad, hi[0] + pad), yRange=(lo[1] - pad, hi[1] + pad), padding=0)
        self._fitted = self._view_range()

    def _view_range(self) -> tuple[float, float, float, float]:
        (x0, x1), (y0, y1) = self.plot.getViewBox().viewRange()
        return float(x0), float(x1), float(y0), float(y1)

    def _outside_view(self) -> bool:
        """True when a vehicle shown at the current frame is partly outside the view."""
        if self.frame is None or not self.frame.present.any():
            return False
        pts = self.frame.outlines[self.frame.present].reshape(-1, 2)
        x0, x1, y0, y1 = self._view_range()
        return bool(((pts[:, 0] < x0) | (pts[:, 0] > x1) | (pts[:, 1] < y0) | (pts[:, 1] > y1)).any())

    def set_frame(self, frame: int) -> None:
        model = self.workspace.topdown
        # A new recording resets the timeline before session_changed rebuilds the items: items
        # of the previous recording's vehicles must not be fed the new one's frames.
        if model is None or self.fleet is None or self.fleet.model is not model:
            return
        ff = model.frame_at(frame)
        self.frame = ff
        self.fleet.set_frame(ff)
        for fleet, comp in zip(self.fleets_b, self.workspace.comparisons, strict=False):
            fleet.set_frame(fleet.model.frame_at(comp.frame_b(frame)))
        sel = self._selected
        if self.follow.isChecked() and sel is not None and ff.present[sel]:
            vb = self.plot.getViewBox()
            (x0, x1), (y0, y1) = vb.viewRange()
            hw, hh = (x1 - x0) / 2, (y1 - y0) / 2
            cx, cy = float(ff.centres[sel, 0]), float(ff.centres[sel, 1])
            vb.setRange(xRange=(cx - hw, cx + hw), yRange=(cy - hh, cy + hh), padding=0)

    def _geometry_index(self, model: TopDownModel | None, vehicle_index: int | None) -> int | None:
        if model is None or vehicle_index is None:
            return None
        for i, geo in enumerate(model.geometries):
            if geo.vehicle.index == vehicle_index:
                return i
        return None

    def _on_selection(self, obj: Object | None) -> None:
        # The model drawn (a live recording's newer model is drawn on the next rebuild).
        model = self.fleet.model if self.fleet is not None else self.workspace.topdown
        session = self.workspace.session
        vi = None
        if model is not None and session is not None and obj is not None:
            v = session.vehicle_of(obj)[0]
            vi = v.index if v is not None else None
        self._selected = self._geometry_index(model, vi)
        if self.fleet is not None:
            self.fleet.set_selected(self._selected)
        for fleet in self.fleets_b:
            # The compared recording's vehicle with the same index (matched by position).
            fleet.set_selected(self._geometry_index(fleet.model, vi))

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton or self.frame is None:
            return
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        p: QPointF = vb.mapSceneToView(ev.scenePos())
        i = self.frame.vehicle_at((p.x(), p.y()))
        model = self.workspace.topdown
        if i is not None and model is not None:
            self.workspace.select(model.geometries[i].vehicle.obj)
