"""Object tree: vehicles (wheels grouped under their vehicle) and classes → objects, filterable."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QHeaderView, QLineEdit, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from pvdkit.recording import Object
from viewer.model.session import RecordingSession, TreeNode, object_tree
from viewer.model.workspace import Workspace
from viewer.widgets import theme

OBJECT_ROLE = Qt.ItemDataRole.UserRole + 1


class ObjectTree(QWidget):
    """Filter box over a three-column tree (object, handle, frames alive).

    Clicking an object selects it in the workspace; a selection made elsewhere (a reference
    followed in the property view, back / forward) is shown here without being re-recorded.
    """

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: vehicle, wheel, class, name or handle")
        self.filter.setClearButtonEnabled(True)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Object", "Frames", "Handle"])
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        self.tree.setColumnWidth(0, 200)
        self.tree.setColumnWidth(1, 58)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addWidget(self.filter)
        lay.addWidget(self.tree)
        self._items: dict[int, QTreeWidgetItem] = {}
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(150)
        self._debounce.timeout.connect(self.rebuild)
        self.filter.textChanged.connect(lambda _t: self._debounce.start())
        self.tree.currentItemChanged.connect(self._on_current)
        workspace.session_changed.connect(self._on_session)
        workspace.selection.changed.connect(self._on_selection)

    # ------------------------------------------------------------------ building

    def _on_session(self, session: RecordingSession | None) -> None:
        self.filter.blockSignals(True)
        self.filter.clear()
        self.filter.blockSignals(False)
        self.rebuild()

    def rebuild(self) -> None:
        """Rebuild the tree for the current filter text."""
        self.tree.blockSignals(True)
        self.tree.clear()
        self._items.clear()
        session = self.workspace.session
        if session is not None:
            text = self.filter.text()
            roots = object_tree(session, text)
            for node in roots:
                item = self._make(node)
                self.tree.addTopLevelItem(item)
                item.setExpanded(True)
                if node.label == "Vehicles" and len(node.children) <= 8:
                    for i in range(item.childCount()):
                        item.child(i).setExpanded(bool(text))
                if text:
                    self._expand_all(item, 3)
        self.tree.blockSignals(False)
        self._on_selection(self.workspace.selection.current)

    def _make(self, node: TreeNode) -> QTreeWidgetItem:
        label = node.label
        if node.kind in ("class", "section") and node.count:
            label = f"{node.label}  ({node.count})"
        item = QTreeWidgetItem([label, node.lifetime, node.handle])
        if node.obj is not None:
            item.setData(0, OBJECT_ROLE, node.obj.index)
            self._items.setdefault(node.obj.index, item)
            item.setToolTip(0, self.workspace.session.describe(node.obj) if self.workspace.session else "")
        font = QFont(item.font(0))
        if node.kind in ("section", "vehicle"):
            font.setBold(True)
        if node.kind == "wheel":
            item.setForeground(0, QBrush(QColor(theme.ACCENT)))
        if node.kind in ("more", "group"):
            font.setItalic(True)
            item.setForeground(0, QBrush(QColor(theme.DIM_TEXT)))
        item.setFont(0, font)
        for c in (1, 2):
            item.setForeground(c, QBrush(QColor(theme.DIM_TEXT)))
        for child in node.children:
            item.addChild(self._make(child))
        return item

    @staticmethod
    def _expand_all(item: QTreeWidgetItem, depth: int) -> None:
        if depth <= 0:
            return
        item.setExpanded(True)
        for i in range(item.childCount()):
            ObjectTree._expand_all(item.child(i), depth - 1)

    # ------------------------------------------------------------------ selection

    def item_of(self, obj: Object) -> QTreeWidgetItem | None:
        return self._items.get(obj.index)

    def _on_current(self, current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        if current is None or self.workspace.session is None:
            return
        idx = current.data(0, OBJECT_ROLE)
        if idx is None:
            return
        obj = self.workspace.session.recording.objects[int(idx)]
        if obj is not self.workspace.selection.current:
            self.workspace.select(obj)

    def _on_selection(self, obj: Object | None) -> None:
        item = self.item_of(obj) if obj is not None else None
        self.tree.blockSignals(True)
        if item is None:
            self.tree.setCurrentItem(None)
        else:
            self.tree.setCurrentItem(item)
            if item.childCount() and self.workspace.session is not None \
                    and self.workspace.session.vehicle_of(obj)[0] is not None \
                    and self.workspace.session.vehicle_of(obj)[0].obj is obj:
                item.setExpanded(True)  # a vehicle: show its wheels
            self.tree.scrollToItem(item)
        self.tree.blockSignals(False)
