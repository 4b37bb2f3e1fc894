"""Property view: every attribute of the selected object at the current frame.

Values follow the zero-order hold of the query model; rows whose value was written in this very
frame are highlighted; object handles and unique lists of handles are links (click to follow,
back / forward to return); long arrays are paged; numeric rows can be dragged onto a plot,
double-clicked to plot, or plotted for every wheel of the vehicle from the context menu.
"""

from __future__ import annotations

import html
import json

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pvdkit.names import POSE_WIDTH
from pvdkit.recording import Object
from viewer.model.properties import PropertyRow, element_texts, pages
from viewer.model.series import NORM, PlotError, component_label, curve_title
from viewer.model.session import lifetime_text
from viewer.model.workspace import Workspace
from viewer.widgets import theme

#: MIME type of a dragged attribute: JSON {"object": index, "attribute": name, "component": c}.
CURVE_MIME = "application/x-pvdkit-curve"

ROW_ROLE = Qt.ItemDataRole.UserRole + 1  # attribute name (top-level rows)
TARGET_ROLE = Qt.ItemDataRole.UserRole + 2  # object index a link points at
COMPONENT_ROLE = Qt.ItemDataRole.UserRole + 3  # element index of an element row
PAGE_ROLE = Qt.ItemDataRole.UserRole + 4  # (start, stop) of a page row


class _Tree(QTreeWidget):
    """The tree, with drag support for plottable rows."""

    def __init__(self, view: PropertyView) -> None:
        super().__init__()
        self._view = view

    def mimeTypes(self) -> list[str]:
        return [CURVE_MIME]

    def mimeData(self, items) -> QMimeData:
        md = QMimeData()
        if items:
            spec = self._view.curve_spec(items[0])
            if spec is not None:
                md.setData(CURVE_MIME, json.dumps(spec).encode())
                md.setText(spec["label"])
        return md


class PropertyView(QWidget):
    """Attribute / value / type tree of the selected object at the current frame.

    Qt signals: ``status(str)`` — a message for the status bar (e.g. why something cannot be
    plotted).
    """

    status = Signal(str)

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.back_button = QToolButton()
        self.back_button.setText("◀")
        self.back_button.setToolTip("Back (Alt+Left)")
        self.forward_button = QToolButton()
        self.forward_button.setText("▶")
        self.forward_button.setToolTip("Forward (Alt+Right)")
        self.title = QLabel("No object selected")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.back_button)
        top.addWidget(self.forward_button)
        top.addWidget(self.title, 1)
        self.tree = _Tree(self)
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["Attribute", "Value", "Unit", "Type"])
        self.tree.setUniformRowHeights(True)
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QTreeWidget.DragDropMode.DragOnly)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setColumnWidth(0, 165)
        self.hint = QLabel(f"<span style='background:{theme.SET_HERE}; color:{theme.SET_HERE_TEXT}'>"
                           "&nbsp;highlighted&nbsp;</span> = written in this frame · "
                           f"<span style='color:{theme.LINK}'>links</span> follow references · "
                           "drag numbers onto a plot")
        self.hint.setStyleSheet(f"color: {theme.DIM_TEXT}; font-size: 8pt;")
        self.hint.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addWidget(self.tree, 1)
        lay.addWidget(self.hint)
        self._obj: Object | None = None
        self._items: list[QTreeWidgetItem] = []
        self._rows: list[PropertyRow] = []
        self._link_font = QFont(self.tree.font())
        self._link_font.setUnderline(True)
        self._bold = QFont(self.tree.font())
        self._bold.setBold(True)
        self._plain = QFont(self.tree.font())
        self.back_button.clicked.connect(workspace.selection.back)
        self.forward_button.clicked.connect(workspace.selection.forward)
        self.tree.itemClicked.connect(self._on_click)
        self.tree.itemDoubleClicked.connect(self._on_double_click)
        self.tree.itemExpanded.connect(self._on_expand)
        self.tree.customContextMenuRequested.connect(self._on_menu)
        workspace.selection.changed.connect(self.show_object)
        workspace.selection.history_changed.connect(self._on_history)
        workspace.timeline.frame_changed.connect(self.refresh)
        workspace.session_changed.connect(lambda _s: self.show_object(None))
        workspace.grown.connect(self._on_grown)
        self._on_history(False, False)

    # ------------------------------------------------------------------ public (also for tests)

    @property
    def object(self) -> Object | None:
        return self._obj

    def row_item(self, name: str) -> QTreeWidgetItem | None:
        for item in self._items:
            if item.data(0, ROW_ROLE) == name:
                return item
        return None

    def value_text(self, name: str) -> str:
        """The text the view shows for attribute ``name`` (KeyError if there is no such row)."""
        item = self.row_item(name)
        if item is None:
            raise KeyError(name)
        return item.text(1)

    def unit_text(self, name: str) -> str:
        """The unit the view shows for attribute ``name`` ("" without one; KeyError: no such row)."""
        item = self.row_item(name)
        if item is None:
            raise KeyError(name)
        return item.text(2)

    def is_highlighted(self, name: str) -> bool:
        """True when the row of ``name`` is marked as written in the current frame."""
        item = self.row_item(name)
        return item is not None and item.data(1, Qt.ItemDataRole.UserRole) is True

    # ------------------------------------------------------------------ building

    def show_object(self, obj: Object | None) -> None:
        """Show every attribute of ``obj`` (None: nothing) at the current frame."""
        self._obj = obj
        self.tree.clear()
        self._items = []
        self._rows = []
        ws = self.workspace
        if obj is None or ws.session is None or ws.properties is None:
            self.title.setText(f"<span style='color:{theme.DIM_TEXT}'>No object selected</span>")
            return
        self.title.setText(self._title_html(obj))
        frame = ws.timeline.frame
        rows = ws.properties.rows(obj, frame)
        self.tree.setUpdatesEnabled(False)
        for row in rows:
            item = QTreeWidgetItem([row.name, "", row.unit, row.type_text])
            item.setData(0, ROW_ROLE, row.name)
            item.setForeground(2, QBrush(QColor(theme.DIM_TEXT)))
            item.setForeground(3, QBrush(QColor(theme.DIM_TEXT)))
            self._items.append(item)
            self.tree.addTopLevelItem(item)
            self._apply(item, row, None, frame)
        self._rows = rows
        self.tree.setUpdatesEnabled(True)

    def _title_html(self, obj: Object) -> str:
        ws = self.workspace
        cname = obj.cls.name if obj.cls else "implicit object"
        name = obj.name or "(unnamed)"
        v, w = ws.session.vehicle_of(obj) if ws.session else (None, None)
        where = ""
        if v is not None and v.obj is not obj:
            where = f" · {w.label + ' of ' if w else ''}{v.name}"
        path = ws.session.path_of(obj) if ws.session else ""
        if v is not None and v.obj is obj and v.name != path:  # a vehicle's path is its name: said once
            where = f" · vehicle {v.name}"
        life = f"frames {lifetime_text(obj, ws.session.last_frame)}" if ws.session else ""
        path = html.escape(path)
        return (f"<b>{html.escape(name)}</b> <span style='color:{theme.DIM_TEXT}'>{cname} · "
                f"0x{obj.handle:x} · {life}{html.escape(where)}<br>{path}</span>")

    def _on_grown(self, _growth) -> None:
        """A live recording grew: new lifetimes in the title; new values at the current frame
        when it is the last (following, the frame change has refreshed them already)."""
        ws = self.workspace
        if self._obj is not None and ws.session is not None:
            self.title.setText(self._title_html(self._obj))
            if not ws.timeline.follow and ws.timeline.frame >= ws.timeline.last_frame - 1:
                self.refresh()

    def refresh(self, frame: int | None = None) -> None:
        """Update values for the current frame (rows keep their place; only changes are drawn)."""
        ws = self.workspace
        if self._obj is None or ws.properties is None:
            return
        f = ws.timeline.frame if frame is None else frame
        rows = ws.properties.rows(self._obj, f)
        if len(rows) != len(self._rows):  # a live recording added series to the object
            self.show_object(self._obj)
            return
        for item, new, old in zip(self._items, rows, self._rows, strict=True):
            self._apply(item, new, old, f)
        self._rows = rows

    def _apply(self, item: QTreeWidgetItem, row: PropertyRow, old: PropertyRow | None, frame: int) -> None:
        if old is None or old.text != row.text or old.kind != row.kind:
            item.setText(1, row.text)
            is_link = row.kind == "ref" and len(row.refs) == 1 and row.refs[0][1] is not None
            item.setData(1, TARGET_ROLE, row.refs[0][1].index if is_link else None)
            item.setFont(1, self._link_font if is_link else self._plain)
            item.setForeground(1, QBrush(QColor(theme.LINK if is_link else theme.TEXT)))
            item.setToolTip(1, row.text if len(row.text) > 40 else "")
        if old is None or old.set_here != row.set_here:
            brush = QBrush(QColor(theme.SET_HERE)) if row.set_here else QBrush()
            for c in range(4):
                item.setBackground(c, brush)
            item.setData(1, Qt.ItemDataRole.UserRole, row.set_here)
            if row.set_here and item.data(1, TARGET_ROLE) is None:
                item.setForeground(1, QBrush(QColor(theme.SET_HERE_TEXT)))
            elif item.data(1, TARGET_ROLE) is None:
                item.setForeground(1, QBrush(QColor(theme.TEXT)))
        # Each setter notifies the view (a relayout): only what changed is set again, so a
        # scrub costs the changed values, not every row.
        if old is None or old.set_frame != row.set_frame or old.name != row.name:
            when = "never set" if row.set_frame is None else (
                "set before the first frame" if row.set_frame < 0 else f"set in frame {row.set_frame}")
            item.setToolTip(0, f"{row.name}: {when}")
        plottable = row.plottable or row.kind == "number"
        drag = Qt.ItemFlag.ItemIsDragEnabled
        flags = item.flags() | drag if plottable else item.flags() & ~drag
        if flags != item.flags():
            item.setFlags(flags)
        self._children(item, row, old, frame)

    def _children(self, item: QTreeWidgetItem, row: PropertyRow, old: PropertyRow | None, frame: int) -> None:
        if row.kind in ("list", "ref") and (len(row.refs) > 1 or row.kind == "list"):
            labels = [r[0] for r in row.refs]
            if old is None or [r[0] for r in old.refs] != labels or old.kind != row.kind:
                item.takeChildren()
                for i, (label, target) in enumerate(row.refs):
                    child = QTreeWidgetItem([f"[{i}]", label, ""])
                    if target is not None:
                        child.setData(1, TARGET_ROLE, target.index)
                        child.setFont(1, self._link_font)
                        child.setForeground(1, QBrush(QColor(theme.LINK)))
                    item.addChild(child)
            return
        if row.kind == "vector" and row.elements is not None:
            n = row.n_elements
            if item.childCount() != n:
                item.takeChildren()
                for i in range(n):
                    child = QTreeWidgetItem([component_label(i, n), "", ""])
                    child.setData(0, COMPONENT_ROLE, i)
                    child.setFlags(child.flags() | Qt.ItemFlag.ItemIsDragEnabled)
                    item.addChild(child)
            if item.isExpanded() or old is None:
                for i, (_, text) in enumerate(element_texts(row.elements, 0, n)):
                    item.child(i).setText(1, text)
            return
        if row.kind == "array" and row.elements is not None:
            n = row.n_elements
            if old is None or old.n_elements != n or old.kind != "array":
                item.takeChildren()
                for a, b in pages(n):
                    page = QTreeWidgetItem([f"[{a}…{b - 1}]", "", ""])
                    page.setData(0, PAGE_ROLE, (a, b))
                    page.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
                    page.setForeground(0, QBrush(QColor(theme.DIM_TEXT)))
                    item.addChild(page)
            if item.isExpanded():
                for i in range(item.childCount()):
                    page = item.child(i)
                    if page.isExpanded():
                        self._fill_page(page, row)
            return
        if item.childCount() and row.kind not in ("vector", "array", "list", "ref"):
            item.takeChildren()

    def _fill_page(self, page: QTreeWidgetItem, row: PropertyRow) -> None:
        a, b = page.data(0, PAGE_ROLE)
        texts = element_texts(row.elements, a, b)
        if page.childCount() != len(texts):
            page.takeChildren()
            for label, _ in texts:
                child = QTreeWidgetItem([label, "", ""])
                child.setData(0, COMPONENT_ROLE, int(label.strip("[]")))
                child.setFlags(child.flags() | Qt.ItemFlag.ItemIsDragEnabled)
                page.addChild(child)
        for i, (_, text) in enumerate(texts):
            page.child(i).setText(1, text)

    def _row_of(self, item: QTreeWidgetItem) -> tuple[QTreeWidgetItem, PropertyRow] | None:
        top = item
        while top.parent() is not None:
            top = top.parent()
        try:
            i = self._items.index(top)
        except ValueError:
            return None
        return top, self._rows[i]

    def _on_expand(self, item: QTreeWidgetItem) -> None:
        found = self._row_of(item)
        if found is None:
            return
        top, row = found
        if item.data(0, PAGE_ROLE) is not None:
            self._fill_page(item, row)
        elif item is top and row.kind == "vector" and row.elements is not None:
            for i, (_, text) in enumerate(element_texts(row.elements, 0, row.n_elements)):
                item.child(i).setText(1, text)

    def _on_history(self, can_back: bool, can_forward: bool) -> None:
        self.back_button.setEnabled(can_back)
        self.forward_button.setEnabled(can_forward)

    # ------------------------------------------------------------------ interaction

    def _on_click(self, item: QTreeWidgetItem, column: int) -> None:
        idx = item.data(1, TARGET_ROLE)
        if column == 1 and idx is not None and self.workspace.session is not None:
            self.workspace.select(self.workspace.session.recording.objects[int(idx)])

    def follow(self, name: str, index: int = 0) -> Object | None:
        """Follow the reference of row ``name`` (item ``index`` of a list); returns the target."""
        item = self.row_item(name)
        if item is None:
            raise KeyError(name)
        link = item if item.childCount() == 0 or item.data(1, TARGET_ROLE) is not None else item.child(index)
        self._on_click(link, 1)
        return self.workspace.selection.current

    def curve_spec(self, item: QTreeWidgetItem) -> dict | None:
        """What plotting this row means: object, attribute, component and a label (or None)."""
        found = self._row_of(item)
        if found is None or self._obj is None:
            return None
        top, row = found
        comp = item.data(0, COMPONENT_ROLE)
        if comp is None:
            if row.kind == "number":
                comp = None
            elif row.plottable and row.kind in ("vector", "array") and row.n_elements != POSE_WIDTH:
                comp = NORM if row.n_elements > 1 else None  # a pose has no length: drag an element
            else:
                return None
        obj = self._obj
        label = curve_title(f"{obj.name or hex(obj.handle)}.{row.name}", comp, row.n_elements or 3)
        return {"object": obj.index, "attribute": row.name, "component": comp, "label": label}

    def _on_double_click(self, item: QTreeWidgetItem, column: int) -> None:
        if item.data(1, TARGET_ROLE) is not None:
            return
        spec = self.curve_spec(item)
        if spec is not None:
            self.plot_spec(spec)

    def plot_spec(self, spec: dict, per_wheel: bool = False) -> None:
        """Plot a row (in a new plot); ``per_wheel``: the same attribute on every wheel."""
        ws = self.workspace
        if ws.session is None:
            return
        obj = ws.session.recording.objects[spec["object"]]
        try:
            if per_wheel and obj.cls is not None:
                comp = spec["component"]
                suffix = "" if comp is None else f"[{comp}]"
                ws.plot(f"{obj.cls.name}.{spec['attribute']}{suffix}", context=obj)
            else:
                plot = ws.plots.add_plot(spec["label"])
                ws.plots.add_curve(plot, obj, spec["attribute"], spec["component"], spec["label"])
        except PlotError as exc:
            self.status.emit(str(exc))

    def _on_menu(self, pos) -> None:
        item = self.tree.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        spec = self.curve_spec(item)
        ws = self.workspace
        if spec is not None:
            act = QAction(f"Plot {spec['label']}", menu)
            act.triggered.connect(lambda: self.plot_spec(spec))
            menu.addAction(act)
            v, w = ws.session.vehicle_of(self._obj) if ws.session and self._obj else (None, None)
            if v is not None and w is not None:
                act = QAction(f"Plot for every wheel of {v.name}", menu)
                act.triggered.connect(lambda: self.plot_spec(spec, per_wheel=True))
                menu.addAction(act)
        idx = item.data(1, TARGET_ROLE)
        if idx is not None:
            act = QAction("Go to referenced object", menu)
            act.triggered.connect(lambda: self._on_click(item, 1))
            menu.addAction(act)
        act = QAction("Copy value", menu)
        act.triggered.connect(lambda: QGuiApplication.clipboard().setText(item.text(1)))
        menu.addAction(act)
        menu.exec(self.tree.viewport().mapToGlobal(pos))
