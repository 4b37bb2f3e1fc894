"""The main window: docks for objects, properties, top-down view and messages around the plots,
the timeline along the bottom, menus, recent files, drag and drop, background loading."""

from __future__ import annotations

import os
import sys
import time

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QSizePolicy,
    QToolBar,
    QWidget,
)

from pvdkit import outputs
from pvdkit.h5.reader import WRITER_OPEN
from pvdkit.types import PvdError
from viewer.model.layout import Layout
from viewer.model.live import H5FileWatch, LiveFeed, OvdFileFeed, TcpFeed, being_written
from viewer.model.session import RecordingSession, file_stamp
from viewer.model.workspace import RecentFiles, Workspace
from viewer.widgets import theme
from viewer.widgets.differences import DifferencesPanel
from viewer.widgets.loader import RecordingLoader
from viewer.widgets.messages import MessagesPanel
from viewer.widgets.object_tree import ObjectTree
from viewer.widgets.plots import PlotStack
from viewer.widgets.property_view import PropertyView
from viewer.widgets.timeline_bar import TimelineBar
from viewer.widgets.topdown import TopDownView
from viewer.widgets.xy import XYPanel

RECORDING_FILTER = "Recordings (*.ovd *.h5 *.hdf5);;All files (*)"
RECORDING_EXTENSIONS = (".ovd", ".h5", ".hdf5")
LAYOUT_FILTER = "Viewer layouts (*.json);;All files (*)"
#: Settings key of the user's plot layout, restored when a recording opens.
LAYOUT_KEY = "plotLayout"
#: Settings key of the last address listened on (File ▸ Listen…).
LISTEN_KEY = "listenAddress"
#: PhysX's usual OmniPVD port, offered by File ▸ Listen… the first time.
DEFAULT_LISTEN = "5425"
#: How often a live feed's received chunks are taken into the view (ms): well under the 50 ms
#: from a frame's last byte to its appearance that ``bench/bench_live.py`` measures.
LIVE_POLL_MS = 20
#: ... but only this often (ms) while the view shows an earlier frame ("follow latest" off):
#: there new data only lengthens the timeline and the plots, and taking it in 50 times a second
#: would slow every scrub through what already arrived.
LIVE_POLL_BACK_MS = 200
#: How often an .h5 being written is checked for new commits (ms; its writer commits ≤ 1/s).
H5_WATCH_MS = 500
#: How often the file shown is checked for a new run written over it (ms; one stat call).
DISK_CHECK_MS = 1000


def damage_of(session: RecordingSession) -> str | None:
    """What the status bar says of a damaged or unfinished recording (None: intact, or an .h5
    still being written, which the window follows): a truncated .ovd opened showing the frames
    before the damage, and only a warning on stderr said that the rest was missing."""
    rec = session.recording
    if rec.error is None or rec.incomplete == WRITER_OPEN and being_written(session.path, rec):
        return None
    text = " ".join(rec.error.split()).removeprefix(f"{session.path}: ")
    return f"damaged, what follows the damage is missing: {text}"


class MainWindow(QMainWindow):
    """The viewer window over one :class:`~viewer.model.workspace.Workspace`.

    ``settings`` stores recent files and the user's plot layout (default: the user's
    ``pvdkit/viewer`` settings; tests and headless renders pass a throw-away one). With
    ``start_view`` an opened recording shows the user's last plot layout, else its first vehicle
    with the wheel speeds plotted; without it, no plots.
    """

    def __init__(self, workspace: Workspace | None = None, settings: QSettings | None = None,
                 up_axis: str = "auto", sync: str = "frame", start_view: bool = True) -> None:
        super().__init__()
        self.sync = sync
        self.start_view = start_view
        #: The start view shown because the user's layout did not apply (as JSON), until changed.
        self._start_layout: str | None = None
        self.workspace = workspace or Workspace()
        self.settings = settings if settings is not None else QSettings("pvdkit", "viewer")
        self.up_axis = up_axis
        self.recent = RecentFiles(self._stored_recent())
        self._loaders: list[RecordingLoader] = []
        self._pending_compare: str | None = None
        self.error_box: QMessageBox | None = None
        self.setWindowTitle("pvdkit viewer")
        self.setAcceptDrops(True)
        self.setDockNestingEnabled(True)

        ws = self.workspace
        self.plots = PlotStack(ws)
        self.setCentralWidget(self.plots)
        self.objects = ObjectTree(ws)
        self.properties = PropertyView(ws)
        self.topdown = TopDownView(ws)
        self.messages = MessagesPanel(ws)
        self.differences = DifferencesPanel(ws)
        self.xy = XYPanel(ws)
        self.plots.window_changed.connect(self.xy.set_window)
        self.timeline = TimelineBar(ws)
        left, right = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea
        self.objects_dock = self._dock("Objects", self.objects, left)
        self.properties_dock = self._dock("Properties", self.properties, right)
        self.topdown_dock = self._dock("Top-down", self.topdown, right)
        self.messages_dock = self._dock("Messages", self.messages, right)
        self.differences_dock = self._dock("Differences", self.differences, right)
        self.xy_dock = self._dock("X–Y", self.xy, right)
        self.splitDockWidget(self.properties_dock, self.topdown_dock, Qt.Orientation.Vertical)
        self.tabifyDockWidget(self.topdown_dock, self.xy_dock)
        self.tabifyDockWidget(self.xy_dock, self.messages_dock)
        self.tabifyDockWidget(self.messages_dock, self.differences_dock)
        self.topdown_dock.raise_()
        bar = QToolBar("Timeline")
        bar.setObjectName("timeline")
        bar.setMovable(False)
        bar.addWidget(self.timeline)
        self.addToolBar(Qt.ToolBarArea.BottomToolBarArea, bar)

        self.status_label = QLabel("Open a recording: File ▸ Open, or drop a .ovd / .h5 file here")
        # A long message is cut at the window's edge rather than widening the window.
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(260)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)

        self._live_timer = QTimer(self)
        self._live_timer.setInterval(LIVE_POLL_MS)
        self._live_timer.timeout.connect(self._poll_live)
        self._live_status_at = 0
        self._live_drained_at = 0
        self._h5_watch: H5FileWatch | None = None
        self._follow_next = False
        self._h5_timer = QTimer(self)
        self._h5_timer.setInterval(H5_WATCH_MS)
        self._h5_timer.timeout.connect(self._poll_h5)
        # A new run written to the file shown is pointed out (F5 shows it), not loaded unasked.
        self._disk_timer = QTimer(self)
        self._disk_timer.setInterval(DISK_CHECK_MS)
        self._disk_timer.timeout.connect(self.check_disk)
        self._disk_timer.start()
        self._disk_noted: tuple[int, int] | None = None
        #: ``ask_keep_live(feed)`` → a path to save a temporary live recording to, "" to discard
        #: it, None to cancel what would drop it. Tests and scripts replace the dialog.
        self.ask_keep_live = self._ask_keep_live

        self._build_menus()
        self.properties.status.connect(self.show_status)
        ws.grown.connect(self._on_grown)
        ws.session_changed.connect(self._on_session)
        ws.comparison_changed.connect(lambda _c: self._update_title())
        self.resize(1600, 1000)
        self.resizeDocks([self.objects_dock, self.properties_dock], [340, 470], Qt.Orientation.Horizontal)
        self.resizeDocks([self.properties_dock, self.topdown_dock], [560, 360], Qt.Orientation.Vertical)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        d = QDockWidget(title, self)
        d.setObjectName(title.lower())
        d.setWidget(widget)
        d.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                      | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                      | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, d)
        return d

    # ------------------------------------------------------------------ menus and keys

    def _action(self, menu, text: str, slot,
                shortcut: str | QKeySequence.StandardKey | None = None) -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        act.triggered.connect(slot)
        menu.addAction(act)
        self.addAction(act)
        return act

    def _build_menus(self) -> None:
        ws = self.workspace
        tl = ws.timeline
        m = self.menuBar().addMenu("&File")
        self._action(m, "&Open…", self._open_dialog, QKeySequence.StandardKey.Open)
        self._action(m, "&Compare with…", lambda: self._open_dialog(compare=True), "Ctrl+Shift+O")
        self.add_compare_action = self._action(m, "Compare with one &more…",
                                               lambda: self._open_dialog(compare=True, more=True))
        self.stop_compare_action = self._action(m, "Stop comparing", lambda: ws.set_comparison(None))
        self.recent_menu = m.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._action(m, "Re&load", self.reload, "F5")
        self._action(m, "Reload, compare with the &previous run", lambda: self.reload(keep_previous=True),
                     "Shift+F5")
        m.addSeparator()
        self._action(m, "&Listen for PhysX…", self._listen_dialog, "Ctrl+L")
        self.stop_live_action = self._action(m, "S&top live", self.stop_live)
        self.save_live_action = self._action(m, "Sa&ve live recording…", self._save_live_dialog)
        self.stop_live_action.setEnabled(False)
        self.save_live_action.setEnabled(False)
        m.addSeparator()
        self._action(m, "Save &layout…", self._save_layout_dialog)
        self._action(m, "Load la&yout…", self._load_layout_dialog)
        m.addSeparator()
        self._action(m, "Save &screenshot…", self._screenshot_dialog, "Ctrl+Shift+S")
        m.addSeparator()
        self._action(m, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        g = self.menuBar().addMenu("&Go")
        self._action(g, "Play / pause", tl.toggle, "Space")
        self._action(g, "Next frame", lambda: tl.step(1), "Right")
        self._action(g, "Previous frame", lambda: tl.step(-1), "Left")
        self._action(g, "10 frames forward", lambda: tl.step(10), "Shift+Right")
        self._action(g, "10 frames back", lambda: tl.step(-10), "Shift+Left")
        self._action(g, "First frame", tl.home, "Home")
        self._action(g, "Last frame", tl.end, "End")
        self._action(g, "Jump to frame or time…", self._focus_jump, "Ctrl+G")
        g.addSeparator()
        self.back_action = self._action(g, "Back", ws.selection.back, "Alt+Left")
        self.forward_action = self._action(g, "Forward", ws.selection.forward, "Alt+Right")
        self._action(g, "Find object…", self._focus_filter, QKeySequence.StandardKey.Find)

        v = self.menuBar().addMenu("&View")
        self._action(v, "Start view (wheel speeds)", lambda: ws.show_start(ws.current_vehicle))
        self._action(v, "Plots: the whole recording", self.plots.show_all, "Ctrl+0")
        x = v.addMenu("Plot x axis")
        for label, value in (("time [s]", "time"), ("frame", "frame")):
            act = QAction(label, self)
            act.triggered.connect(lambda _c=False, val=value: self.plots.set_x_axis(val))
            x.addAction(act)
        v.addSeparator()
        for dock in (self.objects_dock, self.properties_dock, self.topdown_dock, self.xy_dock,
                     self.messages_dock, self.differences_dock):
            v.addAction(dock.toggleViewAction())
        up = v.addMenu("Top-down up axis")
        for label, value in (("auto (from the recording)", "auto"), ("+X", "+x"), ("+Y", "+y"), ("+Z", "+z")):
            act = QAction(label, self)
            act.setCheckable(True)
            act.setChecked(value == self.up_axis)
            act.triggered.connect(lambda _c=False, val=value: self.set_up_axis(val))
            up.addAction(act)
        self._up_actions = up.actions()

        h = self.menuBar().addMenu("&Help")
        self._action(h, "Keyboard shortcuts", self._show_keys)

    def _focus_jump(self) -> None:
        self.timeline.jump.setFocus()
        self.timeline.jump.selectAll()

    def _focus_filter(self) -> None:
        self.objects_dock.show()
        self.objects.filter.setFocus()
        self.objects.filter.selectAll()

    def _show_keys(self) -> None:
        QMessageBox.information(self, "Keyboard shortcuts", (
            "Space  play / pause\n←/→  previous / next frame (Shift: 10 frames)\n"
            "Home / End  first / last frame\n"
            "Ctrl+G  jump to a frame or time (120, 1.5s, 250ms)\nAlt+←/→  back / forward through selections\n"
            "Ctrl+F  filter objects\nCtrl+O  open · Ctrl+Shift+O  compare with a second recording\n"
            "F5  reload the file (a new run) · Shift+F5  reload and compare with the previous run\n\n"
            "Plots: drag to pan, wheel to zoom time, click to seek, drag the cursor line to scrub;\n"
            "Ctrl+wheel / Ctrl+drag (or wheel / drag on the value axis) zoom and pan y,\n"
            "double-click fits y to the data again; Ctrl+0 shows the whole recording."))

    def set_up_axis(self, value: str) -> None:
        """Choose the top-down view's up axis ("auto" reads it from the recording)."""
        self.up_axis = value
        for act in self._up_actions:
            act.setChecked(act.text().lower().startswith(value.lstrip("+")) if value != "auto"
                           else act.text().startswith("auto"))
        self.workspace.set_up_axis(value)

    # ------------------------------------------------------------------ opening

    def _stored_recent(self) -> list[str]:
        v = self.settings.value("recentFiles", [])
        if isinstance(v, str):
            return [v]
        return [str(p) for p in v] if v else []

    def _remember(self, path: str) -> None:
        self.recent.add(path)
        self.settings.setValue("recentFiles", self.recent.paths)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = self.recent.existing()
        if not paths:
            act = self.recent_menu.addAction("(none)")
            act.setEnabled(False)
        for p in paths:
            act = self.recent_menu.addAction(os.path.basename(p))
            act.setToolTip(p)
            act.setStatusTip(p)
            act.triggered.connect(lambda _c=False, path=p: self.open_file(path))

    def _open_dialog(self, compare: bool = False, more: bool = False) -> None:
        start = os.path.dirname(self.recent.paths[0]) if self.recent.paths else os.getcwd()
        path, _ = QFileDialog.getOpenFileName(self, "Compare with" if compare else "Open recording",
                                              start, RECORDING_FILTER)
        if path:
            self.open_file(path, compare=compare, more=more)

    def open_file(self, path: str, *, compare: bool = False, wait: bool = False,
                  more: bool = True, follow: bool = False) -> RecordingLoader | None:
        """Open ``path`` (as a comparison recording with ``compare``) on a worker thread.

        A comparison recording is added to those compared already (B, C, D …); with
        ``more=False`` it replaces them. ``wait=True`` opens it on this thread and returns when it
        is shown (scripts, headless rendering, tests); errors are then raised as
        :class:`~pvdkit.types.PvdError`. An ``.h5`` still being written (modified in the last
        seconds, its writer has not closed it) is followed as it grows; ``follow`` follows an
        ``.ovd`` (which carries no sign of being finished) or any unfinished ``.h5``.
        """
        if compare and self.workspace.session is None:
            if self._loaders:
                self._pending_compare = path
                return None
            compare = False
        if not compare:
            if not self.release_live():
                return None
            if self._h5_watch is not None and self._h5_watch.path != path:
                self._stop_h5_watch()
            if follow and path.lower().endswith(".ovd"):
                self.follow_file(path)
                return None
            self._follow_next = follow
        if wait:
            session = RecordingSession.open(path, up_axis=self.up_axis)
            self._loaded(session, path, compare, more)
            return None
        loader = RecordingLoader(path, self.up_axis, self)
        loader.progress.connect(self._on_progress)
        loader.loaded.connect(lambda s: self._finish(loader, s, path, compare, more))
        loader.failed.connect(lambda msg: self._failed(loader, msg, path))
        self._loaders.append(loader)
        self.progress.setRange(0, 0)
        self.progress.setFormat("")
        self.progress.show()
        self.show_status(f"Opening {path} …")
        loader.start()
        return loader

    def reload(self, keep_previous: bool = False, wait: bool = False) -> RecordingLoader | None:
        """Open the shown recording's file again — a simulation run once more to the same path —
        and show it in place: plots, selection, comparisons and frame stay. ``keep_previous``:
        the run shown so far stays open as comparison B, "… (previous)", to see what changed.
        ``wait`` as in :meth:`open_file`."""
        ws = self.workspace
        session = ws.session
        if session is None or ws.live is not None or not os.path.isfile(session.path):
            what = ("nothing to reload: no recording is open" if session is None else
                    f"nothing to reload: {session.name} is live" if ws.live is not None else
                    f"cannot reload {session.path}: the file is gone")
            self.show_status(what, error=session is not None)
            return None
        path = session.path
        # Kept open as B, the run shown would hand its view of the file to the new open.
        snapshot = keep_previous and path.lower().endswith((".h5", ".hdf5"))
        if wait:
            session = RecordingSession.open(path, up_axis=self.up_axis, snapshot=snapshot)
            self._reloaded(session, keep_previous)
            return None
        loader = RecordingLoader(path, self.up_axis, self, snapshot=snapshot)
        loader.progress.connect(self._on_progress)
        loader.loaded.connect(lambda s: self._finish_reload(loader, s, keep_previous))
        loader.failed.connect(lambda msg: self._failed(loader, msg, path))
        self._loaders.append(loader)
        self.progress.setRange(0, 0)
        self.progress.show()
        self.show_status(f"Reloading {path} …")
        loader.start()
        return loader

    def _finish_reload(self, loader: RecordingLoader, session: RecordingSession, keep_previous: bool) -> None:
        self._loaders.remove(loader)
        if not self._loaders:
            self.progress.hide()
        self._reloaded(session, keep_previous)

    def _reloaded(self, session: RecordingSession, keep_previous: bool) -> None:
        ws = self.workspace
        before = ws.session.n_frames if ws.session is not None else 0
        ws.replace_session(session, keep_previous=keep_previous)
        self._update_title()
        self.show_status(f"Reloaded {session.name}: {session.n_frames} frames (were {before})"
                         + (", compared with the previous run" if keep_previous else ""))

    def _on_progress(self, fraction: float, text: str) -> None:
        if fraction < 0:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 100)
            self.progress.setValue(int(fraction * 100))
        self.progress.setFormat(text)
        self.status_label.setText(text)

    def _finish(self, loader: RecordingLoader, session: RecordingSession, path: str, compare: bool,
                more: bool = True) -> None:
        self._loaders.remove(loader)
        if not self._loaders:
            self.progress.hide()
        self._loaded(session, path, compare, more)
        if self._pending_compare and not compare:
            p, self._pending_compare = self._pending_compare, None
            self.open_file(p, compare=True)

    def _failed(self, loader: RecordingLoader, message: str, path: str) -> None:
        self._loaders.remove(loader)
        if not self._loaders:
            self.progress.hide()
        if not os.path.exists(path):  # gone; one that fails to read (being rewritten?) stays listed
            self.recent.remove(path)
            self.settings.setValue("recentFiles", self.recent.paths)
        first = message.splitlines()[0]
        self.show_status(first, error=True)
        if self.isVisible():
            # Not exec(): a modal loop here would stall scripts and tests waiting for the load.
            box = QMessageBox(QMessageBox.Icon.Warning, "Cannot open recording", first, parent=self)
            if message != first:
                box.setDetailedText(message)
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()
            self.error_box = box

    def _loaded(self, session: RecordingSession, path: str, compare: bool, more: bool = True) -> None:
        self._remember(path)
        ws = self.workspace
        if compare:
            if more and ws.compared is not None:
                ws.add_comparison(session)
            else:
                ws.set_comparison(session, self.sync)
            damage = damage_of(session)
            self.show_status(f"Comparing with {session.name} ({session.n_frames} frames, opened in "
                             f"{session.open_seconds:.2f} s)" + (f" · {damage}" if damage else ""),
                             error=damage is not None, detail=damage and session.recording.error)
        elif self._h5_watch is not None and self._h5_watch.path == path and ws.session is not None:
            ws.replace_session(session)  # a newer state of the .h5 being written
            self._h5_watch.seen(session.recording, session.file_stamp)  # done: _poll_h5 stops it
        else:
            self.save_user_layout()
            ws.set_session(session)
            follow, self._follow_next = self._follow_next, False
            # An .ovd carries no sign of being finished: it is followed only when asked
            # (open_file(follow=True) → follow_file), never because it is recent.
            if path.lower().endswith((".h5", ".hdf5")) and being_written(path, session.recording,
                                                                         recently=not follow):
                self._start_h5_watch(path, session)

    def wait_for_loaders(self) -> None:
        """Block until every background load finished and was shown (tests, scripts)."""
        from PySide6.QtWidgets import QApplication

        while self._loaders:
            for ld in list(self._loaders):
                ld.wait(50)
                ld.deliver()
            QApplication.processEvents()

    # ------------------------------------------------------------------ live recordings

    def listen(self, address: str, save: str | None = None) -> TcpFeed | None:
        """Listen on ``[HOST:]PORT`` for PhysX's OmniPVD stream and show it as it arrives,
        recording it into ``save`` (else a temporary ``.h5``, offered on close). Raises
        :class:`PvdError` for a bad address, a port in use or a bad output path; None when the
        user kept the previous live recording open (cancelled)."""
        if not self.release_live():
            return None
        self._stop_h5_watch()
        feed = TcpFeed(address, save)
        self.settings.setValue(LISTEN_KEY, address)
        self._start_live(feed)
        self.show_status(f"listening on {feed.address} for PhysX's OmniPVD stream"
                         + (f" -> {save}" if save else ""))
        return feed

    def follow_file(self, path: str) -> OvdFileFeed:
        """Show an ``.ovd`` that is still being written, following its growth."""
        outputs.require_input(path)
        self._remember(path)
        feed = OvdFileFeed(path)
        self._start_live(feed)
        return feed

    def _start_live(self, feed: LiveFeed) -> None:
        self.save_user_layout()
        self.workspace.set_live(feed)
        feed.start()
        self._live_timer.start()
        self.stop_live_action.setEnabled(True)
        self.save_live_action.setEnabled(isinstance(feed, TcpFeed))
        self._update_title()

    def stop_live(self) -> None:
        """Stop receiving; what arrived stays shown (and, listening, can still be saved)."""
        feed = self.workspace.live
        if feed is None:
            return
        feed.stop()
        self._poll_live()
        self.stop_live_action.setEnabled(False)

    def _poll_live(self) -> None:
        ws = self.workspace
        feed = ws.live
        if feed is None:
            self._live_timer.stop()
            return
        now = self._live_clock()
        if not ws.timeline.follow and feed.running and now - self._live_drained_at < LIVE_POLL_BACK_MS:
            return
        self._live_drained_at = now
        growth = ws.poll_live()
        ended = not feed.live and not feed.running and growth is None
        if ended or now - self._live_status_at >= 250 or (growth is not None and growth.ended):
            self._live_status_at = now
            self.show_status(feed.status_text(), error=feed.state == "lost")
        if ended:
            self._live_timer.stop()
            self.stop_live_action.setEnabled(False)
            self._update_title()

    @staticmethod
    def _live_clock() -> int:
        return int(time.monotonic() * 1000)

    def _on_grown(self, growth) -> None:
        """The first vehicles of a live recording arrived: show the start view then."""
        ws = self.workspace
        if growth.structure_changed and ws.session is not None and ws.session.vehicles:
            if ws.selection.current is None:
                ws.select(ws.session.vehicles[0].obj)
            if self.start_view and not ws.plots.plots:
                self._restore_user_layout()

    def release_live(self, interrupted: str | None = None) -> bool:
        """Before the live recording is replaced: stop it and, when it lives in a temporary file,
        ask whether to keep it. False when the user cancelled. ``interrupted``: a signal's name
        (Ctrl-C, SIGTERM): nobody can be asked, so the recording is closed with ``complete =
        false`` and ``interrupted by SIGTERM``, and a temporary one stays, its path on stderr."""
        feed = self.workspace.live
        if feed is None:
            return True
        if interrupted is not None:
            feed.stop(reason=f"interrupted by {interrupted}")
            if isinstance(feed, TcpFeed) and feed.temporary and feed.recorded:
                print(f"pvdkit view: interrupted by {interrupted}; what {feed.peer or feed.source_name} "
                      f"sent is kept in {feed.path}", file=sys.stderr)
        elif isinstance(feed, TcpFeed) and feed.temporary:
            feed.stop()
            if feed.recorded:
                answer = self.ask_keep_live(feed)
                if answer is None:
                    return False
                if answer:
                    try:
                        feed.save_as(answer)
                    except PvdError as exc:
                        self.show_status(str(exc), error=True)
                        return False
            feed.discard()
        self.workspace.stop_live()
        self._live_timer.stop()
        self.stop_live_action.setEnabled(False)
        self.save_live_action.setEnabled(False)
        return True

    def interrupt(self, signal_name: str) -> None:
        """Ctrl-C or SIGTERM: close without asking anything (see :meth:`release_live`)."""
        self.release_live(interrupted=signal_name)
        self.close()

    def save_live(self, path: str) -> str:
        """Keep the live recording received from PhysX as ``path`` (``.h5`` or ``.ovd``); the
        stream is stopped first."""
        feed = self.workspace.live
        if not isinstance(feed, TcpFeed):
            raise PvdError("no live recording from PhysX to save")
        if not feed.temporary:
            raise PvdError(f"the live recording is already being saved to {feed.path}")
        saved = feed.save_as(path)
        self._poll_live()
        self.show_status(f"saved the live recording as {saved}")
        return saved

    def _ask_keep_live(self, feed: TcpFeed) -> str | None:
        box = QMessageBox(QMessageBox.Icon.Question, "Keep the live recording?",
                          f"Save what was received from {feed.peer or feed.source_name}?", parent=self)
        box.setStandardButtons(QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                               | QMessageBox.StandardButton.Cancel)
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Cancel:
            return None
        if answer == QMessageBox.StandardButton.Discard:
            return ""
        path, _ = QFileDialog.getSaveFileName(self, "Save live recording", "live.h5", RECORDING_FILTER)
        return path or None

    def _listen_dialog(self) -> None:
        last = str(self.settings.value(LISTEN_KEY, DEFAULT_LISTEN) or DEFAULT_LISTEN)
        text, ok = QInputDialog.getText(self, "Listen for PhysX",
                                        "Listen for PhysX's OmniPVD stream on [HOST:]PORT:", text=last)
        if ok and text.strip():
            try:
                self.listen(text.strip())
            except PvdError as exc:
                self.show_status(str(exc), error=True)

    def _save_live_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save live recording", "live.h5", RECORDING_FILTER)
        if path:
            try:
                self.save_live(path)
            except PvdError as exc:
                self.show_status(str(exc), error=True)

    def _start_h5_watch(self, path: str, session: RecordingSession) -> None:
        self._h5_watch = H5FileWatch(path)
        self._h5_watch.seen(session.recording, session.file_stamp)
        self._h5_timer.start()
        self.timeline.follow_button.show()
        self.workspace.timeline.set_follow(True)
        self.show_status(f"following {session.name} as it is written ({session.n_frames} frames)")

    def _stop_h5_watch(self) -> None:
        self._h5_watch = None
        self._h5_timer.stop()

    def _poll_h5(self) -> None:
        watch = self._h5_watch
        if watch is None or self._loaders:
            return
        if watch.changed():
            self._read_followed(watch.path)
        elif watch.finished():
            self._stop_h5_watch()

    def _read_followed(self, path: str) -> None:
        """Read the ``.h5`` being followed again, as a snapshot of its bytes: the session shown
        holds the file open, and HDF5 gives a second open in this process that first view of it
        (the window showed 161 frames of a file grown to 2,485 until its writer closed it)."""
        loader = RecordingLoader(path, self.up_axis, self, snapshot=True)
        loader.loaded.connect(lambda s: self._finish(loader, s, path, False))
        loader.failed.connect(lambda msg: self._follow_failed(loader, msg, path))
        self._loaders.append(loader)
        loader.start()

    def _follow_failed(self, loader: RecordingLoader, message: str, path: str) -> None:
        """A look at the file being followed failed (its writer never paused, a torn read): the
        state shown stays, the next change tries again."""
        self._loaders.remove(loader)
        if not self._loaders:
            self.progress.hide()
        self.show_status(f"following {os.path.basename(path)}: {message.splitlines()[0]}; trying again")

    def check_disk(self) -> bool:
        """Whether the file of the recording shown changed on disk since it was read (a new run
        to the same path); says so once in the status bar, with how to see it. Not for a live
        recording or an ``.h5`` being followed, which show their growth themselves."""
        ws = self.workspace
        session = ws.session
        if session is None or session.file_stamp is None or ws.live is not None or self._h5_watch is not None:
            return False
        stamp = file_stamp(session.path)
        if stamp is None or stamp == session.file_stamp:
            return False
        if stamp != self._disk_noted and not self._loaders:
            self._disk_noted = stamp
            self.show_status(f"{session.name} changed on disk (a new run?): F5 shows it, Shift+F5 compares "
                             "it with the run shown")
        return True

    # ------------------------------------------------------------------ session shown

    def _on_session(self, session: RecordingSession | None) -> None:
        self._update_title()
        if session is None:
            return
        rec = session.recording
        tb = session.timebase
        damage = damage_of(session)
        self.show_status(
            f"{session.name} · {session.n_frames} frames · {len(rec.objects)} objects · "
            f"{len(session.vehicles)} vehicle{'s' if len(session.vehicles) != 1 else ''} · time: {tb.source}"
            f" · opened in {session.open_seconds:.2f} s" + (f" · {damage}" if damage else ""),
            error=damage is not None, detail=damage and rec.error)
        if session.vehicles:
            self.workspace.select(session.vehicles[0].obj)
        if self.start_view:
            self._restore_user_layout()

    # ------------------------------------------------------------------ plot layouts

    def user_layout(self) -> Layout | None:
        """The layout stored in the user's settings (None: none, or unreadable)."""
        text = self.settings.value(LAYOUT_KEY, "")
        if not text:
            return None
        try:
            return Layout.from_json(str(text), "stored layout")
        except PvdError:
            return None

    def save_user_layout(self) -> None:
        """Remember the plots shown as the user's layout (on close and before another recording)."""
        ws = self.workspace
        if ws.session is None or not self.start_view:
            return
        shown = ws.layout().to_json()
        if shown != self._start_layout:  # an untouched start view never replaces the user's layout
            self.settings.setValue(LAYOUT_KEY, shown)

    def _restore_user_layout(self) -> None:
        ws = self.workspace
        layout = self.user_layout()
        if layout is not None and layout.panes:
            ws.apply_layout(layout)
        self._start_layout = None
        if not ws.plots.plots:
            # The user's layout does not apply (a motorcycle after cars): the recording's start
            # view, which opening the next car must not save in the layout's place.
            ws.show_start(ws.current_vehicle)
            self._start_layout = ws.layout().to_json()

    def save_layout(self, path: str) -> None:
        """Write the plots shown to a layout file (JSON, objects by readable path)."""
        with outputs.replacing(path, "layout") as tmp, open(tmp, "w", encoding="utf-8") as f:
            f.write(self.workspace.layout().to_json())

    def load_layout(self, path: str) -> list[str]:
        """Show the plots of a layout file; returns what could not be restored. Raises
        :class:`PvdError` for a file that is not a layout."""
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise PvdError(f"{path}: cannot read it ({exc})") from None
        problems = self.workspace.apply_layout(Layout.from_json(text, os.path.basename(path)))
        self.show_status(("Layout loaded with problems: " + "; ".join(problems)) if problems
                         else f"Layout {os.path.basename(path)} loaded", error=bool(problems))
        return problems

    def _save_layout_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save layout", "layout.json", LAYOUT_FILTER)
        if path:
            try:
                self.save_layout(path)
            except PvdError as exc:
                self.show_status(str(exc), error=True)

    def _load_layout_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load layout", os.getcwd(), LAYOUT_FILTER)
        if path:
            try:
                self.load_layout(path)
            except PvdError as exc:
                self.show_status(str(exc), error=True)

    def _update_title(self) -> None:
        ws = self.workspace
        title = "pvdkit viewer"
        if ws.session is not None:
            title = f"{ws.session.name} — {title}"
        if ws.comparisons:
            others = ", ".join(c.b.name for c in ws.comparisons)
            title = f"{ws.session.name} vs {others} — pvdkit viewer"
        self.setWindowTitle(title)
        self.stop_compare_action.setEnabled(ws.comparison is not None)
        self.add_compare_action.setEnabled(ws.session is not None)

    def show_status(self, text: str, error: bool = False, detail: str | None = None) -> None:
        """One line in the status bar (red for an error); ``detail``: its tooltip, for a line
        the window is too narrow to show whole."""
        self.status_label.setStyleSheet(f"color: {theme.ERROR}" if error else "")
        self.status_label.setText(text)
        self.status_label.setToolTip(detail or "")

    # ------------------------------------------------------------------ screenshots

    def save_screenshot(self, path: str) -> None:
        """Render the window into an image file (format from the extension)."""
        img = self.grab()
        if not img.save(path):
            from pvdkit.types import PvdError

            raise PvdError(f"cannot write screenshot {path} (unknown image format or unwritable)")

    def _screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save screenshot", "viewer.png", "PNG images (*.png)")
        if path:
            self.save_screenshot(path)

    # ------------------------------------------------------------------ drag and drop, close

    @staticmethod
    def _paths(ev) -> list[str]:
        md = ev.mimeData()
        if not md.hasUrls():
            return []
        return [u.toLocalFile() for u in md.urls()
                if u.isLocalFile() and u.toLocalFile().lower().endswith(RECORDING_EXTENSIONS)]

    def dragEnterEvent(self, ev) -> None:
        if self._paths(ev):
            ev.acceptProposedAction()
        else:
            ev.ignore()

    def dropEvent(self, ev) -> None:
        paths = self._paths(ev)
        if not paths:
            ev.ignore()
            return
        ev.acceptProposedAction()
        ctrl = bool(ev.modifiers() & Qt.KeyboardModifier.ControlModifier)
        compare = ctrl and self.workspace.session is not None
        self.open_file(paths[0], compare=compare)
        if len(paths) > 1:
            self.open_file(paths[1], compare=True)

    def closeEvent(self, ev) -> None:
        if not self.release_live():
            ev.ignore()
            return
        self._stop_h5_watch()
        for ld in list(self._loaders):
            ld.wait()
        self.settings.setValue("recentFiles", self.recent.paths)
        self.save_user_layout()
        super().closeEvent(ev)
