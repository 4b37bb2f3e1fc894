"""Messages panel: recorded messages (RECORD_MESSAGE) with their frame; double-click to go there."""

from __future__ import annotations

import bisect

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from viewer.model.session import RecordingSession
from viewer.model.workspace import Workspace
from viewer.widgets import theme

#: Most messages listed (the rest are counted in the header).
MAX_ROWS = 20000


class MessagesPanel(QWidget):
    """Table of frame, type, source location and text; messages of the current frame are marked."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.header = QLabel()
        self.header.setStyleSheet(f"color: {theme.DIM_TEXT}; font-size: 8pt;")
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Frame", "Type", "Where", "Message"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        h = self.table.horizontalHeader()
        for c in range(3):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.header)
        lay.addWidget(self.table, 1)
        self._frames: list[int] = []
        self._marked: list[int] = []
        self.table.cellDoubleClicked.connect(self._on_double)
        workspace.session_changed.connect(self._on_session)
        workspace.timeline.frame_changed.connect(self._on_frame)
        self._on_session(workspace.session)

    def _on_session(self, session: RecordingSession | None) -> None:
        self.table.setRowCount(0)
        self._frames = []
        self._marked = []
        if session is None:
            self.header.setText("")
            return
        msgs = session.recording.messages
        shown = msgs[:MAX_ROWS]
        self.header.setText(f"{len(msgs)} recorded message{'s' if len(msgs) != 1 else ''}"
                            + (f" (first {MAX_ROWS} listed)" if len(msgs) > MAX_ROWS else "")
                            + (" · double-click to go to its frame" if msgs else ""))
        self.table.setRowCount(len(shown))
        for r, m in enumerate(shown):
            where = f"{m.file}:{m.line}" if m.file else ""
            cells = [str(m.frame), str(m.type), where, m.message]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 0:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
            self._frames.append(m.frame)
        self._on_frame(self.workspace.timeline.frame)

    def _on_frame(self, frame: int) -> None:
        for r in self._marked:
            for c in range(4):
                self.table.item(r, c).setBackground(QBrush())
        # Messages are in file order, so their frames are sorted.
        lo, hi = bisect.bisect_left(self._frames, frame), bisect.bisect_right(self._frames, frame)
        self._marked = list(range(lo, hi))
        for r in self._marked:
            for c in range(4):
                self.table.item(r, c).setBackground(QBrush(QColor(theme.SET_HERE)))

    def _on_double(self, row: int, _col: int) -> None:
        if 0 <= row < len(self._frames):
            self.workspace.timeline.set_frame(max(self._frames[row], 0))
