"""Look of the viewer: a dark Fusion palette, matching pyqtgraph colours and the curve palette.

One place for colours so that the object tree, property view, plots and top-down view agree
(the same wheel has the same colour in every plot and in the top-down view).
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

BACKGROUND = "#1d2026"
PANEL = "#252931"
BASE = "#1a1c21"
TEXT = "#d7dae0"
DIM_TEXT = "#8a919c"
ACCENT = "#4e9cf5"
GRID_ALPHA = 0.18
#: Rows whose value was written in the current frame.
SET_HERE = "#3a3320"
SET_HERE_TEXT = "#ffd479"
LINK = "#6cb2ff"
CURSOR = "#ffd479"
ERROR = "#ff6b6b"

#: Curve colours (bright on dark, distinguishable): curve i of a plot uses PALETTE[i % len].
PALETTE = ("#4e9cf5", "#f5a142", "#5cc97b", "#ef5b5b", "#b48cf2", "#42c9c9", "#f2d14e", "#f27ec2",
           "#9aa5b1", "#8bd450", "#ff8c69", "#7aa7ff")


#: Line styles of compared recordings B, C, D … (A is solid), in plots and the top-down view.
COMPARE_STYLES = (Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine,
                  Qt.PenStyle.DashDotDotLine)


def compare_style(j: int) -> Qt.PenStyle:
    """Line style of recording ``j`` (0 = A, solid)."""
    return Qt.PenStyle.SolidLine if j == 0 else COMPARE_STYLES[(j - 1) % len(COMPARE_STYLES)]


def curve_color(i: int) -> QColor:
    return QColor(PALETTE[i % len(PALETTE)])


def apply(app: QApplication) -> None:
    """Install the Fusion style with a dark palette and configure pyqtgraph to match."""
    app.setStyle("Fusion")
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: PANEL, QPalette.ColorRole.WindowText: TEXT,
        QPalette.ColorRole.Base: BASE, QPalette.ColorRole.AlternateBase: "#20232a",
        QPalette.ColorRole.ToolTipBase: PANEL, QPalette.ColorRole.ToolTipText: TEXT,
        QPalette.ColorRole.Text: TEXT, QPalette.ColorRole.Button: "#2d323b",
        QPalette.ColorRole.ButtonText: TEXT, QPalette.ColorRole.BrightText: "#ffffff",
        QPalette.ColorRole.Highlight: "#2f5d94", QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: LINK, QPalette.ColorRole.PlaceholderText: DIM_TEXT,
        QPalette.ColorRole.Mid: "#3a3f4a", QPalette.ColorRole.Dark: "#15171b",
    }
    for role, color in roles.items():
        pal.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(DIM_TEXT))
    app.setPalette(pal)
    font = QFont("DejaVu Sans", 9)
    app.setFont(font)
    app.setStyleSheet(
        f"QToolTip {{ color: {TEXT}; background: {PANEL}; border: 1px solid #3a3f4a; }}"
        "QDockWidget::title { background: #2b2f38; padding: 4px 6px; }"
        "QTreeView, QTableView { border: none; }"
        f"QStatusBar {{ color: {DIM_TEXT}; }}"
    )
    pg.setConfigOptions(background=BACKGROUND, foreground=DIM_TEXT, antialias=True)


def mono_font(size: int = 9) -> QFont:
    f = QFont("DejaVu Sans Mono", size)
    f.setStyleHint(QFont.StyleHint.Monospace)
    return f
