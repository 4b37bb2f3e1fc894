"""Object tree: vehicles (wheels grouped under their vehicle) and classes → objects, filterable."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QHeaderView,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QTreeWidgetItemIterator,
    QVBoxLayout,
    QWidget,
)

from pvdkit.recording import Object
from viewer.model.session import RecordingSession, TreeNode, lifetime_text, object_tree
from viewer.model.workspace import Workspace
from viewer.widgets import theme

OBJECT_ROLE = Qt.ItemDataRole.UserRole + 1
#: How often the Frames column of a growing live recording is brought up to date (ms).
FRAMES_REFRESH_MS = 1000
#: Index into ``ObjectTree._lazy`` of a row whose children are not built yet.
LAZY_ROLE = Qt.ItemDataRole.UserRole + 2


class ObjectTree(QWidget):
    """Filter box over a three-column tree (object, handle, frames alive).

    Clicking an object selects it in the workspace; a selection made elsewhere (a reference
    followed in the property view, back / forward) is shown here without being re-recorded.

    Rows under a vehicle or a class are built when that row is first expanded (or one of its
    objects is selected): a 256-vehicle fleet has 45,000 rows, which took seconds to build
    up front, while only the vehicle and class rows are visible.
    """

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: vehicle, wheel, class, attribute, name or handle")
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
        self.tree.setColumnWidth(1, 70)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addWidget(self.filter)
        lay.addWidget(self.tree)
        self._items: dict[int, QTreeWidgetItem] = {}
        # Rows not built yet: (tree node, its row, built?) and object index → its lazy row.
        self._lazy: list[tuple[TreeNode, QTreeWidgetItem, bool]] = []
        self._where: dict[int, int] = {}
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(150)
        self._debounce.timeout.connect(self.rebuild)
        self.filter.textChanged.connect(lambda _t: self._debounce.start())
        self.tree.currentItemChanged.connect(self._on_current)
        self.tree.itemExpanded.connect(self._populate)
        workspace.session_changed.connect(self._on_session)
        workspace.selection.changed.connect(self._on_selection)
        workspace.grown.connect(self._on_grown)
        self._frames_timer = QTimer(self)
        self._frames_timer.setSingleShot(True)
        self._frames_timer.setInterval(FRAMES_REFRESH_MS)
        self._frames_timer.timeout.connect(self._refresh_frames)

    # ------------------------------------------------------------------ building

    def _on_session(self, session: RecordingSession | None) -> None:
        self.filter.blockSignals(True)
        self.filter.clear()
        self.filter.blockSignals(False)
        self.rebuild()

    def _on_grown(self, growth) -> None:
        """A live recording gained objects: rebuild (debounced, like typing in the filter);
        gained frames: the Frames column follows (once a second)."""
        if growth.structure_changed:
            self._debounce.start()
        elif not self._frames_timer.isActive():
            self._frames_timer.start()

    def _refresh_frames(self) -> None:
        """Rows of objects still alive run to the recording's new last frame (they stayed at
        the frame the tree was built at: 0–60 beside a property view at 0–1428)."""
        session = self.workspace.session
        if session is None:
            return
        objects, last = session.recording.objects, session.last_frame
        it = QTreeWidgetItemIterator(self.tree)
        while it.value() is not None:
            item = it.value()
            index = item.data(0, OBJECT_ROLE)
            if index is not None and index < len(objects) and objects[index].destroyed is None:
                item.setText(1, lifetime_text(objects[index], last))
            it += 1

    def rebuild(self) -> None:
        """Rebuild the tree for the current filter text."""
        self.tree.blockSignals(True)
        self.tree.clear()
        self._items.clear()
        self._lazy.clear()
        self._where.clear()
        session = self.workspace.session
        if session is not None:
            text = self.filter.text()
            roots = object_tree(session, text)
            for node in roots:
                item = self._make(node, lazy=True)
                self.tree.addTopLevelItem(item)
                item.setExpanded(True)
                if text:
                    for i in range(item.childCount()):
                        self._expand_all(item.child(i), 2)
        self.tree.blockSignals(False)
        self._on_selection(self.workspace.selection.current)

    def _make(self, node: TreeNode, lazy: bool = False, prefer: bool = False) -> QTreeWidgetItem:
        """The row of ``node`` and its subtree; ``lazy``: a section whose rows get their
        children on first expansion. ``prefer``: this row is where its object is shown
        (the Vehicles section, rather than the object's class)."""
        item = self._row(node, prefer)
        if not lazy:
            for child in node.children:
                item.addChild(self._make(child, prefer=prefer))
            return item
        in_vehicles = node.kind == "section" and node.label == "Vehicles"
        for child in node.children:
            row = self._row(child, in_vehicles)
            if child.children:
                k = len(self._lazy)
                self._lazy.append((child, row, False))
                row.setData(0, LAZY_ROLE, k)
                row.addChild(QTreeWidgetItem(["…"]))  # the expand arrow until built
                for n in child.walk():
                    if n.obj is not None and n is not child:
                        self._where.setdefault(n.obj.index, k)
            item.addChild(row)
        return item

    def _row(self, node: TreeNode, prefer: bool) -> QTreeWidgetItem:
        """One row, without children."""
        label = node.label
        if node.kind in ("class", "section") and node.count:
            label = f"{node.label}  ({node.count})"
        item = QTreeWidgetItem([label, node.lifetime, node.handle])
        if node.obj is not None:
            item.setData(0, OBJECT_ROLE, node.obj.index)
            if prefer:
                self._items[node.obj.index] = item
            else:
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
        return item

    def _populate(self, item: QTreeWidgetItem) -> None:
        """Build the children of a lazy row (on expansion)."""
        k = item.data(0, LAZY_ROLE)
        if k is None or self._lazy[int(k)][2]:
            return
        node, row, _ = self._lazy[int(k)]
        self._lazy[int(k)] = (node, row, True)
        prefer = node.kind in ("vehicle", "wheel", "group")
        row.takeChildren()
        row.addChildren([self._make(c, prefer=prefer) for c in node.children])

    def _expand(self, item: QTreeWidgetItem) -> None:
        self._populate(item)  # signals may be blocked: build before expanding
        item.setExpanded(True)

    def _expand_all(self, item: QTreeWidgetItem, depth: int) -> None:
        if depth <= 0:
            return
        self._expand(item)
        for i in range(item.childCount()):
            self._expand_all(item.child(i), depth - 1)

    # ------------------------------------------------------------------ selection

    def item_of(self, obj: Object) -> QTreeWidgetItem | None:
        """The row showing ``obj`` (built now if it was waiting under a collapsed row)."""
        k = self._where.get(obj.index)
        if k is not None and not self._lazy[k][2]:
            self._populate(self._lazy[k][1])
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
                self._expand(item)  # a vehicle: show its wheels
            self.tree.scrollToItem(item)
        self.tree.blockSignals(False)
