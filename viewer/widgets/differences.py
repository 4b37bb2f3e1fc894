"""Differences panel: what differs between A and a compared recording, by first divergence.

*Find differences* runs :func:`viewer.model.differences.find_differences` on A and the recording
chosen in the box (B, C …), exactly or within the tolerance typed (as ``pvdkit diff`` takes it:
``rtol=0.02 atol=1e-6`` or a ``--config`` TOML — simcore's replay against PhysX wants
``simcore/replay/physx_diff.toml``) over the frames typed (``1:``, ``100:200``: ``--frames``);
*numbers only* hides lifetimes, lists, references and strings. A double-click on a row selects
the attribute's object, plots the attribute (for a vehicle's or a wheel's object: on every
wheel, as the plot box does) and goes to the frame where it first diverges.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pvdkit.types import PvdError
from viewer.model.compare import LETTERS
from viewer.model.differences import PLOTTABLE, Difference, Differences, find_differences, parse_tolerance
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
        self.tolerance = QLineEdit()
        self.tolerance.setPlaceholderText("exact · rtol=0.02 atol=1e-6 · or a pvdkit diff .toml")
        self.tolerance.setToolTip("how far values may differ and still count as equal, as pvdkit diff's "
                                  "--rtol / --atol / --config take it")
        self.tolerance.returnPressed.connect(self.find)
        self.frames = QLineEdit()
        self.frames.setPlaceholderText("all frames")
        self.frames.setMaximumWidth(90)
        self.frames.setToolTip("the frames compared, as pvdkit diff --frames takes them: 1: (from frame 1, "
                               "as pvdkit replay suggests), 100:200, :500")
        self.frames.returnPressed.connect(self.find)
        self.numbers_only = QCheckBox("numbers only")
        self.numbers_only.setToolTip("list only attributes holding numbers over time (not lifetimes, "
                                     "lists, references or strings)")
        self.numbers_only.setChecked(False)
        self.numbers_only.toggled.connect(lambda _on: self._refill())
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
        second = QHBoxLayout()
        second.addWidget(QLabel("tolerance"))
        second.addWidget(self.tolerance, 1)
        second.addWidget(QLabel("frames"))
        second.addWidget(self.frames)
        second.addWidget(self.numbers_only)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addLayout(second)
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
        try:
            tolerance = parse_tolerance(self.tolerance.text())
        except PvdError as exc:
            self.header.setText(str(exc))
            return None
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            diffs = find_differences(ws.session, comp.b, comp.sync, tolerance, self.frames.text())
        except PvdError as exc:
            self.header.setText(str(exc))
            return None
        finally:
            QApplication.restoreOverrideCursor()
        self.differences = diffs
        self._fill(diffs)
        return diffs

    def _refill(self) -> None:
        if self.differences is not None:
            self._fill(self.differences)

    @property
    def rows(self) -> list[Difference]:
        """The differences listed (all found, or with *numbers only* the plottable ones)."""
        if self.differences is None:
            return []
        rows = self.differences.rows
        return [d for d in rows if d.kind in PLOTTABLE] if self.numbers_only.isChecked() else rows

    def _fill(self, diffs: Differences) -> None:
        rows = self.rows
        hidden = len(diffs.rows) - len(rows)
        self.header.setText(diffs.summary + (f"; {hidden} not numbers, not listed" if hidden else "")
                            + (" · double-click a row to plot it at its first divergence" if rows else ""))
        self.table.setRowCount(len(rows))
        for r, d in enumerate(rows):
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
        rows = self.rows
        if not 0 <= row < len(rows):
            return
        d = rows[row]
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
