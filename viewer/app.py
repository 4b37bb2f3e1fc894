"""Start the viewer: interactive window, or a headless render saved to an image.

Qt is imported here (not in :mod:`viewer.cli`) so that ``pvdkit --help`` stays fast.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass, field

from pvdkit.types import PvdError


@dataclass
class ViewOptions:
    """What ``pvdkit view`` was asked to do (see :func:`viewer.cli.configure`)."""

    files: list[str] = field(default_factory=list)
    compare: str | None = None
    sync: str = "frame"
    screenshot: str | None = None
    object: str | None = None
    plots: list[str] = field(default_factory=list)
    frame: int | None = None
    size: tuple[int, int] = (1600, 1000)
    up_axis: str = "auto"


def _application(offscreen: bool):
    """The QApplication (created once; offscreen when rendering without a display)."""
    if offscreen and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName("pvdkit viewer")
        app.setOrganizationName("pvdkit")
    from viewer.widgets import theme

    theme.apply(app)
    return app


def render(options: ViewOptions) -> str:
    """Open the files, apply ``object`` / ``plots`` / ``frame``, render the main window offscreen
    into ``options.screenshot`` and return its path. Raises :class:`PvdError` for bad input."""
    if not options.files:
        raise PvdError("--screenshot needs a recording to show")
    for f in options.files + ([options.compare] if options.compare else []):
        if not os.path.exists(f):
            raise PvdError(f"{f}: no such file")
    app = _application(offscreen=True)
    from PySide6.QtCore import QLoggingCategory

    # The offscreen platform warns (uncategorised) that it ignores window size hints; silence
    # uncategorised warnings while rendering only. (Not a Python message handler: PySide's
    # qInstallMessageHandler can crash the interpreter at exit when handlers are swapped.)
    QLoggingCategory.setFilterRules("default.warning=false")
    try:
        return _render(app, options)
    finally:
        QLoggingCategory.setFilterRules("")


def _render(app, options: ViewOptions) -> str:
    from PySide6.QtCore import QSettings

    from viewer.widgets.main_window import MainWindow

    with tempfile.TemporaryDirectory() as tmp:
        settings = QSettings(os.path.join(tmp, "viewer.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings, up_axis=options.up_axis, sync=options.sync)
        win.resize(*options.size)
        apply_options(win, options)
        win.show()
        for _ in range(5):
            app.processEvents()
        win.plots.redraw()
        app.processEvents()
        win.save_screenshot(options.screenshot)
        win.close()
        win.deleteLater()
        app.processEvents()
    return options.screenshot


def apply_options(win, options: ViewOptions) -> None:
    """Open files synchronously and apply ``--object``, ``--plot`` and ``--frame`` to a window."""
    from viewer.model.series import PlotError

    win.open_file(options.files[0], wait=True)
    compare = options.compare or (options.files[1] if len(options.files) > 1 else None)
    if compare:
        win.open_file(compare, compare=True, wait=True)
    ws = win.workspace
    if options.object:
        ws.select(ws.session.find(options.object))
    for spec in options.plots:
        try:
            ws.plot(spec)
        except PlotError as exc:
            raise PvdError(f"--plot {spec}: {exc}") from None
    if options.frame is not None:
        n = ws.timeline.n_frames
        if not -n <= options.frame < n:
            raise PvdError(f"--frame {options.frame}: the recording has frames 0 … {n - 1}")
        ws.timeline.set_frame(options.frame % n)


def run(options: ViewOptions) -> int:
    """Headless render when ``screenshot`` is set, else the interactive window; exit status."""
    if options.screenshot:
        path = render(options)
        print(f"pvdkit view: saved {path}")
        return 0
    for f in options.files + ([options.compare] if options.compare else []):
        if not os.path.exists(f):
            raise PvdError(f"{f}: no such file")
    app = _application(offscreen=False)
    from viewer.widgets.main_window import MainWindow

    win = MainWindow(up_axis=options.up_axis, sync=options.sync)
    win.resize(*options.size)
    win.show()
    if options.files:
        if options.object or options.plots or options.frame is not None:
            apply_options(win, options)
        else:
            win.open_file(options.files[0])
            compare = options.compare or (options.files[1] if len(options.files) > 1 else None)
            if compare:
                win.open_file(compare, compare=True)
    return int(app.exec())
