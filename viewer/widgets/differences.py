"""Differences panel: what differs between A and a compared recording, by first divergence.

*Find differences* runs :func:`viewer.model.differences.find_differences` on A and the recording
chosen in the box (B, C …); a double-click on a row selects the attribute's object, plots the
attribute (for a vehicle's or a wheel's object: on every wheel, as the plot box does) and goes
to the frame where it first diverges.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pvdkit.types import PvdError
from viewer.model.compare import LETTERS
from viewer.model.differences import Differences, find_differences
from viewer.model.properties import format_number
from viewer.model.workspace import Workspace
from viewer.widgets import theme

COLUMNS = ["Frame", "Time [s]", "Object", "Attribute", "Differ / frames", "max |A − B|", "A", "B"]


class DifferencesPanel(QWidget):
    """Table of the attributes that differ between A and a compared recording."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.differences: Differences | None = None
        self.against = QComboBox()
        self.against.setToolTip("the compared recording to find A's differences against")
        self.find_button = QPushButton("Find differences")
        self.find_button.setToolTip("compare every attribute of every matched object, as pvdkit diff does")
        self.find_button.clicked.connect(self.find)
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setStyleSheet(f"color: {theme.DIM_TEXT}; font-size: 8pt;")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        h = self.table.horizontalHeader()
        for c in range(len(COLUMNS)):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        top = QHBoxLayout()
        top.addWidget(QLabel("A against"))
        top.addWidget(self.against, 1)
        top.addWidget(self.find_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.header)
        lay.addWidget(self.table, 1)
        self.table.cellDoubleClicked.connect(lambda row, _col: self.go_to(row))
        workspace.comparison_changed.connect(lambda _c: self._on_comparison())
        workspace.session_changed.connect(lambda _s: self._on_comparison())
        self._on_comparison()

    def _on_comparison(self) -> None:
        """The compared recordings changed: the list made before no longer applies."""
        ws = self.workspace
        self.differences = None
        self.table.setRowCount(0)
        self.against.clear()
        for j, c in enumerate(ws.comparisons, start=1):
            self.against.addItem(f"{LETTERS[j]}: {c.b.name}", j - 1)
        has = bool(ws.comparisons)
        self.against.setEnabled(has)
        self.find_button.setEnabled(has)
        self.header.setText(
            "Find differences lists every attribute that differs between A and the recording chosen, "
            "by first divergence; double-click one to plot it there." if has else
            "Compare with a recording (File ▸ Compare with…) to list what differs.")

    def find(self) -> Differences | None:
        """Compare A with the recording chosen and list what differs (None: nothing to compare)."""
        ws = self.workspace
        comps = ws.comparisons
        i = self.against.currentData()
        if ws.session is None or not comps or i is None or not 0 <= i < len(comps):
            return None
        if ws.live is not None and ws.live.running:
            self.header.setText("A is still receiving: stop it (File ▸ Stop live) to list what differs")
            return None
        comp = comps[i]
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            diffs = find_differences(ws.session, comp.b, comp.sync)
        except PvdError as exc:
            self.header.setText(str(exc))
            return None
        finally:
            QApplication.restoreOverrideCursor()
        self.differences = diffs
        self._fill(diffs)
        return diffs

    def _fill(self, diffs: Differences) -> None:
        self.header.setText(diffs.summary + (" · double-click a row to plot it at its first divergence"
                                             if diffs.rows else ""))
        self.table.setRowCount(len(diffs.rows))
        for r, d in enumerate(diffs.rows):
            cells = [
                "" if d.first_frame is None else str(d.first_frame),
                "" if d.first_time is None else f"{d.first_time:.4f}",
                d.path,
                d.attribute,
                f"{d.differing} / {d.compared}",
                "" if d.max_abs is None else format_number(d.max_abs),
                d.a_value or "",
                d.b_value or "",
            ]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c in (0, 1, 4, 5):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == 3:
                    item.setToolTip(f"{d.spec} ({d.kind}, {d.status})")
                self.table.setItem(r, c, item)

    def go_to(self, row: int) -> None:
        """Select row ``row``'s object, plot its attribute and go to its first divergence."""
        if self.differences is None or not 0 <= row < len(self.differences.rows):
            return
        d = self.differences.rows[row]
        ws = self.workspace
        if d.object is not None:
            ws.select(d.object)
        shown = d.object is not None and any(
            p.spec.split("[")[0] == d.spec and any(c.key.object_index == d.object.index for c in p.curves)
            for p in ws.plots.plots)
        if d.plottable and not shown:  # a plot showing it already is enough
            try:
                ws.plot(d.spec, context=d.object)
            except PvdError as exc:
                self.header.setText(str(exc))
        if d.first_frame is not None:
            ws.timeline.set_frame(max(d.first_frame, 0))
