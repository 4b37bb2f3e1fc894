"""X–Y panel: one attribute against another, per wheel (a tire's force against its slip).

Type two ``Class.attribute[component]`` specs (completed from the recording) and press *Plot*:
one point cloud per wheel of the selected vehicle, in the time plots' colours, each point a frame
where the y attribute was written, with a ring on the point of the current frame. Only the frames
the time plots show are drawn (zoom them to one manoeuvre), unless *only frames in view* is off;
selecting another vehicle plots its wheels; compared recordings add their points in darker
shades, their rings at their matched frames.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QStringListModel
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pvdkit.types import PvdError
from viewer.model.compare import LETTERS, Comparison
from viewer.model.session import RecordingSession
from viewer.model.vehicles import Vehicle
from viewer.model.workspace import Workspace
from viewer.model.xy import XYCurve, XYPair, xy_curve, xy_pairs
from viewer.widgets import theme
from viewer.widgets.plots import attribute_completer, numeric_attribute_names, shade

#: Points drawn at most per curve (every n-th beyond it: a cloud, not a trace).
MAX_POINTS = 20000


class XYPanel(QWidget):
    """An X–Y scatter of two attributes of the selected vehicle, per wheel."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.x_edit = QLineEdit()
        self.x_edit.setPlaceholderText("x, e.g. TireSlipState.lngSlip")
        self.y_edit = QLineEdit()
        self.y_edit.setPlaceholderText("y, e.g. TireForce.lngForce[z]")
        self._names = QStringListModel()
        for edit in (self.x_edit, self.y_edit):
            edit.setCompleter(attribute_completer(self._names, self))
            edit.returnPressed.connect(self.plot_specs)
        self.plot_button = QPushButton("Plot")
        self.plot_button.clicked.connect(self.plot_specs)
        self.in_view = QCheckBox("only frames in view")
        self.in_view.setToolTip("draw the points of the frames the time plots show (zoom them to a "
                                "manoeuvre to see it alone); off: every frame")
        self.in_view.setChecked(True)
        self.in_view.toggled.connect(lambda _on: self.set_window(*(self._window or (None, None))))
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setStyleSheet(f"color: {theme.DIM_TEXT}; font-size: 8pt;")
        self.view = pg.PlotWidget()
        self.view.showGrid(x=True, y=True, alpha=theme.GRID_ALPHA)
        self.legend = self.view.addLegend(offset=(8, 6), labelTextSize="7pt", verSpacing=-8)
        top = QHBoxLayout()
        top.addWidget(self.x_edit, 1)
        top.addWidget(QLabel("against"))
        top.addWidget(self.y_edit, 1)
        top.addWidget(self.plot_button)
        top.addWidget(self.in_view)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.status)
        lay.addWidget(self.view, 1)
        #: What is drawn: per recording shown (0 = A, then B, C …) its curves and ring items.
        self.curves: list[tuple[int, list[XYCurve | None], pg.ScatterPlotItem]] = []
        self._points: list[tuple[int, XYCurve, pg.ScatterPlotItem]] = []
        self._window: tuple[int, int] | None = None
        self._title: tuple[str, str] | None = None
        self._n_shown = 0
        workspace.session_changed.connect(self._on_session)
        workspace.comparison_changed.connect(lambda _c: self._redo())
        workspace.timeline.frame_changed.connect(self._on_frame)
        workspace.selection.changed.connect(lambda *_a: self._on_selection())
        workspace.xy_changed.connect(lambda _specs: self._redo())
        self._vehicle: Vehicle | None = None
        self._on_session(workspace.session)

    def _on_session(self, session: RecordingSession | None) -> None:
        self._names.setStringList(numeric_attribute_names(session) if session is not None else [])
        self._redo()

    def _on_selection(self) -> None:
        """Another vehicle selected: its wheels' curves replace the last one's."""
        if self.workspace.xy_specs is not None and self.workspace.current_vehicle is not self._vehicle:
            self._redo()

    def _redo(self) -> None:
        """Draw the workspace's X–Y specs (set anew, or the recording or its comparisons changed)."""
        specs = self.workspace.xy_specs
        if specs is not None and self.workspace.session is not None:
            self._draw(*specs)
        else:
            self.clear()

    def clear(self) -> None:
        self.view.clear()
        self.legend.clear()
        self.curves = []
        self._points = []
        self._title = None
        self._n_shown = 0

    def plot_specs(self) -> None:
        x, y = self.x_edit.text().strip(), self.y_edit.text().strip()
        if x and y:
            self.plot(x, y)

    def plot(self, x_spec: str, y_spec: str) -> list[XYCurve]:
        """Plot ``y_spec`` against ``x_spec`` for the selected vehicle (the workspace keeps the
        specs: layouts save them); A's curves (empty, with the reason in the status line, when
        the specs cannot be plotted)."""
        self.workspace.set_xy(x_spec, y_spec)
        return [c for j, curves, _r in self.curves if j == 0 for c in curves if c is not None]

    def _draw(self, x_spec: str, y_spec: str) -> list[XYCurve]:
        ws = self.workspace
        self.clear()
        self.x_edit.setText(x_spec)
        self.y_edit.setText(y_spec)
        if ws.session is None or ws.curves is None:
            return []
        self._vehicle = ws.current_vehicle
        try:
            x_title, y_title, pairs = xy_pairs(ws.session, x_spec, y_spec, ws.selection.current,
                                               ws.current_vehicle)
            mine = [xy_curve(p.label, ws.curves.get(p.x), ws.curves.get(p.y)) for p in pairs]
        except PvdError as exc:
            self.status.setText(str(exc))
            return []
        self.view.setLabel("bottom", x_title)
        self.view.setLabel("left", y_title)
        shown: list[tuple[int, list[XYCurve | None], Comparison | None]] = [(0, list(mine), None)]
        for j, comp in enumerate(ws.comparisons, start=1):
            shown.append((j, self._counterparts(comp, pairs), comp))
        for j, curves, _comp in shown:
            for i, c in enumerate(curves):
                if c is None:
                    continue
                item = pg.ScatterPlotItem(size=3 if j == 0 else 2, pen=None,
                                          brush=pg.mkBrush(shade(theme.curve_color(i), j)))
                item.setOpacity(0.8 if j == 0 else 0.6)
                self.view.addItem(item)
                self._points.append((j, c, item))
                if j == 0:  # B's shades need no entries of their own (said in the status line)
                    self.legend.addItem(item, c.label)
        self._show_points()
        for j, curves, _comp in shown:
            rings = pg.ScatterPlotItem(size=11, brush=None, symbol="o")
            rings.setZValue(10)
            self.view.addItem(rings)
            self.curves.append((j, curves, rings))
        others = ", ".join(f"{LETTERS[j]} darker" for j, _c, _comp in shown[1:])
        self._title = (f"{y_title} against {x_title}: {len(mine)} curve{'s' if len(mine) != 1 else ''}",
                       "rings: the current frame" + (f"; {others}" if others else ""))
        self._say()
        self._on_frame(ws.timeline.frame)
        return mine

    # ------------------------------------------------------------------ the frames shown

    def set_window(self, first: int | None, last: int | None) -> None:
        """The time plots show frames ``first .. last`` (None: no plot): with *only frames in
        view* on, the points of those frames alone are drawn (A's frames; B's matched to them)."""
        self._window = None if first is None or last is None else (int(first), int(last))
        if self._points:
            self._show_points()
            self._say()

    def points_shown(self) -> list[tuple[int, str, np.ndarray, np.ndarray]]:
        """What is drawn: ``(recording, label, x, y)`` per curve (recording 0 = A, 1 = B …)."""
        out = []
        for j, c, item in self._points:
            x, y = item.getData()
            out.append((j, c.label, np.asarray(x), np.asarray(y)))
        return out

    def _frames_shown(self) -> tuple[int, int] | None:
        return self._window if self.in_view.isChecked() else None

    def _show_points(self) -> None:
        window = self._frames_shown()
        comps = self.workspace.comparisons
        self._n_shown = 0
        for j, c, item in self._points:
            keep = slice(None)
            if window is not None:
                lo, hi = window
                if j > 0 and j - 1 < len(comps):
                    lo, hi = (int(f) for f in comps[j - 1].frames_b(np.array([lo, hi])))
                a, b = np.searchsorted(c.frames, [lo, hi + 1])
                keep = slice(int(a), int(b))
            x, y = c.x[keep], c.y[keep]
            step = max(1, len(x) // MAX_POINTS)
            item.setData(x[::step], y[::step])
            if j == 0:
                self._n_shown += len(x)

    def _say(self) -> None:
        if self._title is None:
            return
        window = self._frames_shown()
        where = f"frames {window[0]}–{window[1]} (the time plots' view)" if window else "every frame"
        head, tail = self._title
        self.status.setText(f"{head}, {self._n_shown} points of {where} (one per frame where y was written); "
                            f"{tail}")

    def _counterparts(self, comp: Comparison, pairs: list[XYPair]) -> list[XYCurve | None]:
        """B's curve for each of A's pairs (None where B has no counterpart)."""
        out: list[XYCurve | None] = []
        for p in pairs:
            kx, ky = comp.counterpart_key(p.x), comp.counterpart_key(p.y)
            if kx is None or ky is None:
                out.append(None)
                continue
            try:
                out.append(xy_curve(p.label, comp.cache_b.get(kx), comp.cache_b.get(ky)))
            except PvdError:
                out.append(None)
        return out

    def _on_frame(self, frame: int) -> None:
        comps = self.workspace.comparisons
        for j, curves, rings in self.curves:
            f = frame if j == 0 else comps[j - 1].frame_b(frame) if j - 1 < len(comps) else None
            spots = []
            for i, c in enumerate(curves):
                p = c.at(f) if c is not None and f is not None else None
                if p is not None:
                    spots.append({"pos": p, "pen": pg.mkPen(shade(theme.curve_color(i), j), width=2)})
            rings.setData(spots)
