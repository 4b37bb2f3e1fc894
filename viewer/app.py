"""Start the viewer: interactive window, or a headless render saved to an image.

Qt is imported here (not in :mod:`viewer.cli`) so that ``pvdkit --help`` stays fast.

Before the first ``QApplication`` is created, :func:`display_problem` checks that Qt's
platform plugin can start: Qt itself cannot report a missing display or a missing system
library — it aborts the process (exit status 134) with a message about plugins. The
``offscreen`` and ``minimal`` platforms always work; ``xcb`` (X11) needs ``$DISPLAY``, a
reachable X server and the libraries of :data:`XCB_LIBRARIES`; ``wayland`` needs
``$WAYLAND_DISPLAY``. A problem is one :class:`~pvdkit.types.PvdError` line saying what is
missing (for libraries: the Debian / Ubuntu packages to install).
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pvdkit import outputs
from pvdkit.types import PvdError

#: Platforms that need no display server and no system libraries beyond Qt's own.
HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal", "minimalegl", "vnc", "linuxfb", "eglfs",
                                "vkkhrdisplay"})

#: Libraries QtGui needs on Linux, whatever the platform -> Debian 12 / Ubuntu package.
QT_GUI_LIBRARIES = {
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libX11.so.6": "libx11-6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libxkbcommon.so.0": "libxkbcommon0",
}

#: Libraries Qt's xcb (X11) platform plugin loads -> Debian 12 / Ubuntu package. A stock
#: Debian image with a desktop usually lacks only ``libxcb-icccm4`` and ``libxcb-keysyms1``.
XCB_LIBRARIES = {
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}

#: Libraries Qt's wayland platform plugin loads -> Debian 12 / Ubuntu package.
WAYLAND_LIBRARIES = {
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
}

_NO_DISPLAY = ("no display to open a window on: set DISPLAY (X11) or WAYLAND_DISPLAY, or render "
               "offscreen with --screenshot OUT.png and QT_QPA_PLATFORM=offscreen")


@dataclass
class ViewOptions:
    """What ``pvdkit view`` was asked to do (see :func:`viewer.cli.configure`)."""

    files: list[str] = field(default_factory=list)
    compare: list[str] = field(default_factory=list)
    sync: str = "frame"
    screenshot: str | None = None
    object: str | None = None
    plots: list[str] = field(default_factory=list)
    frame: int | None = None
    size: tuple[int, int] = (1600, 1000)
    up_axis: str = "auto"
    layout: str | None = None
    x_axis: str = "time"
    listen: str | None = None
    save: str | None = None
    follow: bool = False
    xy: tuple[str, str] | None = None

    @property
    def compared(self) -> list[str]:
        """Every recording to compare with the first: the other files, then ``--compare``."""
        return self.files[1:] + list(self.compare)


# --------------------------------------------------------------------------------------------
# Can Qt start?
# --------------------------------------------------------------------------------------------


def _load(name: str) -> None:
    ctypes.CDLL(name)


def _missing(libraries: Mapping[str, str], load: Callable[[str], None]) -> list[str]:
    missing = []
    for lib in libraries:
        try:
            load(lib)
        except OSError:
            missing.append(lib)
    return missing


def _packages_hint(missing: list[str], table: Mapping[str, str], what: str) -> str:
    packages = sorted({table[m] for m in missing if m in table})
    install = f"; install them with: sudo apt-get install {' '.join(packages)}" if packages else ""
    return (f"{what} cannot load {', '.join(missing)}{install} (Debian / Ubuntu package names; see "
            "README, 'Viewer on Linux'), or render offscreen with --screenshot OUT.png and "
            "QT_QPA_PLATFORM=offscreen")


def _x_server_problem(display: str) -> str | None:
    """None if an X server answers on ``display``, else why not (libxcb's own connect)."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return None  # reported as a missing library
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    conn = xcb.xcb_connect(display.encode(), None)
    try:
        failed = xcb.xcb_connection_has_error(conn)
    finally:
        xcb.xcb_disconnect(conn)
    if failed:
        return (f"cannot connect to the X server of DISPLAY={display!r}; start one, fix DISPLAY, or "
                "render offscreen with --screenshot OUT.png and QT_QPA_PLATFORM=offscreen")
    return None


def _platforms(environ: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt will try, in order (``QT_QPA_PLATFORM`` may list several)."""
    spec = environ.get("QT_QPA_PLATFORM", "").strip()
    if spec:
        return [p.split(":", 1)[0].strip().lower() for p in spec.split(";") if p.strip()]
    if sys.platform != "linux":
        return ["native"]
    return ["wayland", "xcb"] if environ.get("WAYLAND_DISPLAY") else ["xcb"]


def display_problem(environ: Mapping[str, str] | None = None,
                    load: Callable[[str], None] = _load,
                    x_server: Callable[[str], str | None] = _x_server_problem) -> str | None:
    """None when Qt can start a GUI with ``environ`` (default ``os.environ``), else one line
    saying what is missing. ``load`` (loads a shared library by soname, raising OSError) and
    ``x_server`` (why an X display does not answer, or None) are replaceable for tests."""
    env = os.environ if environ is None else environ
    platforms = _platforms(env)
    if any(p in HEADLESS_PLATFORMS or p == "native" for p in platforms):
        return None if sys.platform != "linux" else _gui_problem(load)
    problems = []
    for p in platforms:
        if p == "xcb":
            problem = _xcb_problem(env, load, x_server)
        elif p == "wayland":
            problem = _wayland_problem(env, load)
        else:
            return _gui_problem(load)  # a platform we do not know how to check: let Qt try
        if problem is None:
            return _gui_problem(load)
        problems.append(problem)
    return problems[-1] if problems else None


def _gui_problem(load: Callable[[str], None]) -> str | None:
    missing = _missing(QT_GUI_LIBRARIES, load)
    return _packages_hint(missing, QT_GUI_LIBRARIES, "Qt") if missing else None


def _xcb_problem(env: Mapping[str, str], load: Callable[[str], None],
                 x_server: Callable[[str], str | None]) -> str | None:
    display = env.get("DISPLAY", "")
    if not display:
        return _NO_DISPLAY
    missing = _missing(QT_GUI_LIBRARIES, load) + _missing(XCB_LIBRARIES, load)
    if missing:
        return _packages_hint(missing, {**QT_GUI_LIBRARIES, **XCB_LIBRARIES},
                              "Qt's X11 platform plugin (xcb)")
    return x_server(display)


def _wayland_problem(env: Mapping[str, str], load: Callable[[str], None]) -> str | None:
    name = env.get("WAYLAND_DISPLAY", "")
    if not name:
        return _NO_DISPLAY
    socket = name if os.path.isabs(name) else os.path.join(env.get("XDG_RUNTIME_DIR", ""), name)
    if not os.path.exists(socket):
        return (f"no Wayland compositor at WAYLAND_DISPLAY={name!r} ({socket} does not exist); "
                "or render offscreen with --screenshot OUT.png and QT_QPA_PLATFORM=offscreen")
    missing = _missing(QT_GUI_LIBRARIES, load) + _missing(WAYLAND_LIBRARIES, load)
    if missing:
        return _packages_hint(missing, {**QT_GUI_LIBRARIES, **WAYLAND_LIBRARIES},
                              "Qt's Wayland platform plugin")
    return None


def _import_qt():
    """``QApplication``; a missing system library of QtGui becomes one line naming its package."""
    try:
        from PySide6.QtWidgets import QApplication
    except ImportError as exc:
        lib = re.search(r"(lib[\w.+-]+\.so[\w.]*)", str(exc))
        if lib and lib.group(1) in QT_GUI_LIBRARIES:
            raise PvdError(_packages_hint([lib.group(1)], QT_GUI_LIBRARIES, "Qt")) from None
        raise
    return QApplication


# --------------------------------------------------------------------------------------------
# Application
# --------------------------------------------------------------------------------------------


def _application(offscreen: bool):
    """The QApplication (created once; offscreen when rendering without a display). Raises
    :class:`PvdError` when Qt could not start (see :func:`display_problem`)."""
    if offscreen and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    QApplication = _import_qt()  # noqa: N806 - a class

    app = QApplication.instance()
    if app is None:
        problem = display_problem()
        if problem is not None:
            raise PvdError(f"view: {problem}")
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
    assert options.screenshot is not None
    outputs.check_output(options.screenshot, "--screenshot")
    _require_inputs(options)
    app = _application(offscreen=True)
    _check_image_format(options.screenshot)
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
        shot = options.screenshot
        with outputs.replacing(shot, "--screenshot") as tmp:
            try:
                win.save_screenshot(tmp)
            except PvdError:
                raise PvdError(f"--screenshot {shot}: cannot write the image") from None
        win.close()
        win.deleteLater()
        app.processEvents()
    return options.screenshot


def apply_options(win, options: ViewOptions) -> None:
    """Open files synchronously and apply ``--object``, ``--layout``, ``--plot``, ``--xy``,
    ``--frame`` and ``--x-axis`` to a window. Without ``--layout`` and ``--plot`` the window shows
    its start view (the selected object's vehicle — the first vehicle by default — with its wheel
    speeds)."""
    from viewer.model.series import PlotError

    win.open_file(options.files[0], wait=True)
    for other in options.compared:
        win.open_file(other, compare=True, wait=True)
    ws = win.workspace
    win.plots.set_x_axis(options.x_axis)
    if options.object:
        ws.select(ws.session.find(options.object))
        if not options.plots and not options.layout:
            ws.show_start(ws.current_vehicle)
    if options.plots or options.layout:
        ws.plots.clear()
    if options.layout:
        layout = read_layout(options.layout)
        problems = ws.apply_layout(layout)
        if layout.panes and not ws.plots.plots:
            raise PvdError(f"--layout {options.layout}: nothing of it applies to {ws.session.name}: "
                           + "; ".join(problems))
        for p in problems:
            print(f"pvdkit view: --layout {options.layout}: {p}", file=sys.stderr)
    for spec in options.plots:
        try:
            ws.plot(spec)
        except PlotError as exc:
            raise PvdError(f"--plot {spec}: {exc}") from None
    if options.xy is not None:
        if not win.xy.plot(*options.xy):
            raise PvdError(f"--xy {' '.join(options.xy)}: {win.xy.status.text()}")
        win.xy_dock.raise_()
    if options.frame is not None:
        n = ws.timeline.n_frames
        if not -n <= options.frame < n:
            raise PvdError(f"--frame {options.frame}: the recording has frames 0 … {n - 1}")
        ws.timeline.set_frame(options.frame % n)


def read_layout(path: str):
    """A layout file (:class:`viewer.model.layout.Layout`); :class:`PvdError` for a bad one."""
    from viewer.model.layout import Layout

    outputs.require_input(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise PvdError(f"--layout {path}: cannot read it ({exc})") from None
    return Layout.from_json(text, f"--layout {path}")


def run(options: ViewOptions) -> int:
    """Headless render when ``screenshot`` is set, else the interactive window; exit status."""
    if options.screenshot:
        path = render(options)
        print(f"pvdkit view: saved {path}")
        return 0
    _require_inputs(options)
    app = _application(offscreen=False)
    from viewer.model.live import being_written
    from viewer.widgets.main_window import MainWindow

    win = MainWindow(up_axis=options.up_axis, sync=options.sync)
    win.resize(*options.size)
    win.show()
    # Before anything that can take long: listening compiles the stream kernels on a first run
    # (seconds), and a SIGTERM meanwhile killed the viewer, its recording left as if crashed.
    received = _close_on_signals(win)
    if options.listen is not None:
        win.listen(options.listen, options.save)
    elif options.follow or (options.files and options.files[0].lower().endswith(".ovd")
                            and being_written(options.files[0]) and not _view_options_given(options)):
        # An .ovd carries no sign of being finished: one modified in the last seconds is
        # taken to be still written, and followed (as an unfinished .h5 always is).
        win.open_file(options.files[0], follow=True)
        for other in options.compared:
            win.open_file(other, compare=True)
    elif options.files:
        if _view_options_given(options):
            apply_options(win, options)
        else:
            win.open_file(options.files[0])
            for other in options.compared:
                win.open_file(other, compare=True)
    # A signal handled before the event loop runs closed the window already: its quit() came
    # before exec() and would be lost, leaving the loop running with nothing to show.
    status = 0 if received else int(app.exec())
    return {"SIGINT": 130, "SIGTERM": 143}.get(received[0], status) if received else status


#: How often Qt's event loop hands Python control, so that it runs its signal handlers (ms).
SIGNAL_POLL_MS = 200


def _close_on_signals(win) -> list[str]:
    """Ctrl-C and SIGTERM close the window as an interruption (:meth:`MainWindow.interrupt`: a
    live recording is closed, not left as if killed). Python runs signal handlers only when it
    has control, and Qt's event loop is C++: a timer hands it control. Returns the list that
    receives the signal's name."""
    import signal

    from PySide6.QtCore import QTimer

    received: list[str] = []

    def on_signal(signum: int, _frame: object) -> None:
        if not received:
            received.append(signal.Signals(signum).name)
            win.interrupt(received[0])

    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, on_signal)
    timer = QTimer(win)
    timer.timeout.connect(lambda: None)
    timer.start(SIGNAL_POLL_MS)
    return received


def _view_options_given(options: ViewOptions) -> bool:
    return bool(options.object or options.plots or options.frame is not None or options.layout
                or options.xy or options.x_axis != "time")


def _require_inputs(options: ViewOptions) -> None:
    for f in options.files + list(options.compare):
        outputs.require_input(f)
    if options.layout:  # a layout is no recording: said so, with the option that named it
        outputs.require_input(options.layout, "a layout file (.json)", label="--layout")


def _check_image_format(path: str) -> None:
    """Refuse an image extension Qt cannot write before rendering anything."""
    from PySide6.QtGui import QImageWriter

    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    known = sorted(bytes(f.data()).decode() for f in QImageWriter.supportedImageFormats())
    if suffix not in known:
        raise PvdError(f"--screenshot {path}: unknown image format {suffix or '(no extension)'!r}; "
                       f"use one of: {', '.join(known)}")
