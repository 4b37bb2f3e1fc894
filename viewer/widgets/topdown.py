"""Top-down view: every vehicle's chassis and wheels at the current frame, and its trajectory.

Drawn in the ground plane the model found (:class:`viewer.model.geometry.GroundPlane`), so a
Y-up PhysX scene and a Z-up simcore run both look down from above; the axis labels say which
world axes are shown. Click a vehicle to select it; "follow" keeps the selected one centred.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import (
    QCheckBox,
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsPolygonItem,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from pvdkit.recording import Object
from viewer.model.session import RecordingSession
from viewer.model.topdown import VehicleShape
from viewer.model.workspace import Workspace
from viewer.widgets import theme


def _polygon(points: np.ndarray) -> QPolygonF:
    return QPolygonF([QPointF(float(x), float(y)) for x, y in points])


class _VehicleItems:
    """Graphics items of one vehicle (created once, moved every frame)."""

    def __init__(self, view: pg.ViewBox, color: QColor, trajectory: np.ndarray, name: str,
                 ghost: bool = False) -> None:
        self.color = color
        self.ghost = ghost  # the comparison recording: dashed trail, outline only
        trail_pen = pg.mkPen(QColor(color.red(), color.green(), color.blue(), 120), width=1,
                             style=Qt.PenStyle.DashLine if ghost else Qt.PenStyle.SolidLine)
        self.trail = pg.PlotCurveItem(trajectory[:, 0], trajectory[:, 1], pen=trail_pen)
        # The trail never changes while the car moves over it: paint it from a pixmap.
        self.trail.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.body = QGraphicsPolygonItem()
        self.wheels = QGraphicsPathItem()
        self.wheels.setBrush(QBrush(QColor("#0e0f12")))
        self.label = pg.TextItem(name, color=theme.DIM_TEXT if ghost else theme.TEXT,
                                 anchor=(0.5, -0.6) if ghost else (0.5, 1.6))
        for it in (self.trail, self.body, self.wheels, self.label):
            view.addItem(it)
        self.set_selected(False)

    def set_selected(self, on: bool) -> None:
        c = QColor(self.color)
        fill = QColor(c)
        fill.setAlpha(0 if self.ghost else 150 if on else 70)
        self.body.setBrush(QBrush(fill))
        pen = QPen(c.lighter(140) if on else c, 0)
        pen.setCosmetic(True)
        pen.setWidthF(2.2 if on else 1.2)
        if self.ghost:
            pen.setStyle(Qt.PenStyle.DashLine)
        self.body.setPen(pen)
        wpen = QPen(QColor("#e8e8e8") if on else QColor("#b0b4bb"))
        wpen.setCosmetic(True)
        self.wheels.setPen(wpen)

    def set_shape(self, shape: VehicleShape | None) -> None:
        visible = shape is not None
        for it in (self.body, self.wheels, self.label):
            it.setVisible(visible)
        if shape is None:
            return
        self.body.setPolygon(_polygon(shape.outline))
        path = QPainterPath()
        for w in shape.wheels:
            path.addPolygon(_polygon(w))
        self.wheels.setPath(path)
        self.label.setPos(float(shape.centre[0]), float(shape.centre[1]))


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
        self._items: list[_VehicleItems] = []
        self._items_b: list[_VehicleItems] = []
        self._selected: int | None = None
        self.shapes: list[VehicleShape] = []
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.follow.toggled.connect(lambda _on: self.set_frame(self.workspace.timeline.frame))
        workspace.session_changed.connect(self._on_session)
        workspace.topdown_changed.connect(lambda: self._on_session(self.workspace.session))
        workspace.timeline.frame_changed.connect(self.set_frame)
        workspace.selection.changed.connect(self._on_selection)
        workspace.comparison_changed.connect(lambda _c: self._on_session(self.workspace.session))
        self._on_session(workspace.session)

    def _on_session(self, session: RecordingSession | None) -> None:
        vb = self.plot.getViewBox()
        for items in self._items + self._items_b:
            for it in (items.trail, items.body, items.wheels, items.label):
                vb.removeItem(it)
        self._items = []
        self._items_b = []
        self.shapes = []
        model = self.workspace.topdown if session is not None else None
        if model is None:
            self.info.setText("")
            return
        g = model.ground
        self.plot.setLabel("bottom", f"{g.u} (m)")
        self.plot.setLabel("left", f"{g.v} (m)")
        self.info.setText(f"up {g.up} ({g.source}) · {len(model.geometries)} vehicle"
                          f"{'s' if len(model.geometries) != 1 else ''}")
        model_b = self.workspace.topdown_b
        if model_b is not None:
            for i, geo in enumerate(model_b.geometries):
                self._items_b.append(_VehicleItems(vb, theme.curve_color(i), model_b.trajectory(geo),
                                                   f"{geo.vehicle.name} (B)", ghost=True))
            self.info.setText(self.info.text() + f" · dashed: {model_b.session.name}")
        self.info.setToolTip(self.info.text())
        for i, geo in enumerate(model.geometries):
            items = _VehicleItems(vb, theme.curve_color(i), model.trajectory(geo), geo.vehicle.name)
            self._items.append(items)
        self.set_frame(self.workspace.timeline.frame)
        self._fit()
        self._on_selection(self.workspace.selection.current)

    def _fit(self) -> None:
        model = self.workspace.topdown
        if model is None:
            return
        pts = [s.outline for s in self.shapes]
        for m in (model, self.workspace.topdown_b):
            b = m.bounds() if m is not None else None
            if b is not None:
                pts.append(np.asarray(b))
        if not pts:
            return
        allp = np.concatenate(pts)
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        pad = max(float(np.max(hi - lo)) * 0.08, 2.0)
        self.plot.setRange(xRange=(lo[0] - pad, hi[0] + pad), yRange=(lo[1] - pad, hi[1] + pad), padding=0)

    def set_frame(self, frame: int) -> None:
        model = self.workspace.topdown
        if model is None or not self._items:
            return
        shapes = model.shapes_at(frame)
        by_vehicle = {s.vehicle.index: s for s in shapes}
        self.shapes = shapes
        for geo, items in zip(model.geometries, self._items, strict=True):
            items.set_shape(by_vehicle.get(geo.vehicle.index))
        model_b, comp = self.workspace.topdown_b, self.workspace.comparison
        if model_b is not None and comp is not None and self._items_b:
            shapes_b = {s.vehicle.index: s for s in model_b.shapes_at(comp.frame_b(frame))}
            for geo, items in zip(model_b.geometries, self._items_b, strict=True):
                items.set_shape(shapes_b.get(geo.vehicle.index))
        if self.follow.isChecked() and self._selected is not None:
            s = by_vehicle.get(self._selected)
            if s is not None:
                vb = self.plot.getViewBox()
                (x0, x1), (y0, y1) = vb.viewRange()
                hw, hh = (x1 - x0) / 2, (y1 - y0) / 2
                cx, cy = float(s.centre[0]), float(s.centre[1])
                vb.setRange(xRange=(cx - hw, cx + hw), yRange=(cy - hh, cy + hh), padding=0)

    def _on_selection(self, obj: Object | None) -> None:
        model = self.workspace.topdown
        session = self.workspace.session
        self._selected = None
        if model is not None and session is not None and obj is not None:
            v = session.vehicle_of(obj)[0]
            self._selected = v.index if v is not None else None
        if model is None:
            return
        for geo, items in zip(model.geometries, self._items, strict=True):
            items.set_selected(geo.vehicle.index == self._selected)
        model_b = self.workspace.topdown_b
        if model_b is not None:
            for geo, items in zip(model_b.geometries, self._items_b, strict=True):
                items.set_selected(geo.vehicle.index == self._selected)

    def _on_click(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        p = vb.mapSceneToView(ev.scenePos())
        pt = QPointF(p.x(), p.y())
        for s in self.shapes:
            if _polygon(s.outline).containsPoint(pt, Qt.FillRule.OddEvenFill):
                self.workspace.select(s.vehicle.obj)
                return
