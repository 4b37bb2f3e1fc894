"""Timeline bar: slider over frames, frame / time display, transport buttons, speed, jump box."""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QPoint, Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSlider,
    QStyle,
    QToolButton,
    QToolTip,
    QWidget,
)

from viewer.model.compare import LETTERS, Comparison
from viewer.model.workspace import Workspace
from viewer.widgets import theme

#: Playback timer period in milliseconds (about 60 updates per second).
TICK_MS = 15


class TimelineBar(QWidget):
    """Transport controls bound to the workspace timeline.

    Keys (installed by the main window for the whole window): ←/→ step, Home/End, Space
    play/pause. Playback is driven by a Qt timer that feeds elapsed wall-clock time to
    :meth:`viewer.model.timeline.Timeline.tick`, so ×1 is real time.
    """

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        tl = workspace.timeline

        style = self.style()
        sp = QStyle.StandardPixmap

        def button(icon: QStyle.StandardPixmap, tip: str, slot) -> QToolButton:
            b = QToolButton()
            b.setIcon(style.standardIcon(icon))
            b.setToolTip(tip)
            b.setAutoRaise(True)
            b.clicked.connect(slot)
            return b

        self._play_icon = style.standardIcon(sp.SP_MediaPlay)
        self._pause_icon = style.standardIcon(sp.SP_MediaPause)
        self.home_button = button(sp.SP_MediaSkipBackward, "First frame (Home)", tl.home)
        self.prev_button = button(sp.SP_MediaSeekBackward, "Previous frame (←)", lambda: tl.step(-1))
        self.play_button = button(sp.SP_MediaPlay, "Play / pause (Space)", tl.toggle)
        self.next_button = button(sp.SP_MediaSeekForward, "Next frame (→)", lambda: tl.step(1))
        self.end_button = button(sp.SP_MediaSkipForward, "Last frame (End)", tl.end)
        self.follow_button = QToolButton()
        self.follow_button.setText("● follow latest")
        self.follow_button.setCheckable(True)
        self.follow_button.setAutoRaise(True)
        self.follow_button.setToolTip("Live: show each new frame as it arrives (scrubbing back "
                                      "switches it off)")
        self.follow_button.toggled.connect(tl.set_follow)
        self.follow_button.hide()
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setMinimum(0)
        self.slider.setMaximum(0)
        self.slider.setPageStep(10)
        self.slider.setTracking(True)
        self.frame_label = QLabel()
        self.frame_label.setFont(theme.mono_font(9))
        self.frame_label.setMinimumWidth(250)
        self.compare_label = QLabel()
        self.compare_label.setFont(theme.mono_font(9))
        self.compare_label.setStyleSheet(f"color: {theme.DIM_TEXT}")
        self.speed = QComboBox()
        for s in tl.SPEEDS:
            self.speed.addItem(f"×{s:g}", s)
        self.speed.setCurrentIndex(list(tl.SPEEDS).index(1.0))
        self.speed.setToolTip("Playback speed (×1 = real time)")
        self.jump = QLineEdit()
        self.jump.setPlaceholderText("go to frame or time (120, 1.5s)")
        self.jump.setMaximumWidth(210)
        self.jump.setClearButtonEnabled(True)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 2, 6, 2)
        lay.setSpacing(4)
        for w in (self.home_button, self.prev_button, self.play_button, self.next_button, self.end_button):
            lay.addWidget(w)
        lay.addWidget(self.follow_button)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.frame_label)
        lay.addWidget(self.compare_label)
        lay.addWidget(self.speed)
        lay.addWidget(self.jump)
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._clock = QElapsedTimer()
        self._timer.timeout.connect(self._tick)
        self.slider.valueChanged.connect(tl.set_frame)
        self.speed.currentIndexChanged.connect(lambda i: tl.set_speed(float(self.speed.itemData(i))))
        self.jump.returnPressed.connect(self._on_jump)
        tl.frame_changed.connect(self._on_frame)
        tl.reset.connect(self._on_reset)
        tl.extended.connect(self._on_reset)
        tl.follow_changed.connect(self._on_follow)
        workspace.live_changed.connect(self._on_live)
        tl.playing_changed.connect(self._on_playing)
        workspace.comparison_changed.connect(self._on_comparison)
        self._on_reset(tl.n_frames)

    # ------------------------------------------------------------------ model → view

    def _on_reset(self, n_frames: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setMaximum(max(n_frames - 1, 0))
        self.slider.setPageStep(max(n_frames // 20, 1))
        self.slider.setValue(self.workspace.timeline.frame)
        self.slider.blockSignals(False)
        tb = self.workspace.timeline.timebase
        self.frame_label.setToolTip(f"time from {tb.source}" + ("" if tb.exact else " (not recorded)"))
        self._on_frame(self.workspace.timeline.frame)

    def _on_follow(self, on: bool) -> None:
        self.follow_button.blockSignals(True)
        self.follow_button.setChecked(on)
        self.follow_button.blockSignals(False)

    def _on_live(self, feed) -> None:
        """The follow button shows while a recording grows (and stays for what it received)."""
        if feed is not None:
            self.follow_button.show()

    def _on_frame(self, frame: int) -> None:
        tl = self.workspace.timeline
        if self.slider.value() != frame:
            self.slider.blockSignals(True)
            self.slider.setValue(frame)
            self.slider.blockSignals(False)
        approx = "" if tl.timebase.exact else "≈"
        self.frame_label.setText(f"frame {frame:>{len(str(tl.last_frame))}} / {tl.last_frame}"
                                 f"   t {approx}= {tl.time:.4f} s")
        comps = self.workspace.comparisons
        if comps:  # every compared recording's frame shown with this one (B, C, D …)
            self.compare_label.setText("  ".join(f"{LETTERS[j]}: frame {c.frame_b(frame)}"
                                                 for j, c in enumerate(comps, start=1)))

    def _on_playing(self, playing: bool) -> None:
        self.play_button.setIcon(self._pause_icon if playing else self._play_icon)
        if playing:
            self._clock.start()
            self._timer.start()
        else:
            self._timer.stop()

    def _on_comparison(self, comparison: Comparison | None) -> None:
        self.compare_label.setVisible(comparison is not None)
        if comparison is not None:
            comps = self.workspace.comparisons
            names = ", ".join(f"{LETTERS[j]}: {c.b.name}" for j, c in enumerate(comps, start=1))
            self.compare_label.setToolTip(f"the frame each compared recording shows ({names}; synced by "
                                          f"{comparison.sync})")
            self._on_frame(self.workspace.timeline.frame)

    # ------------------------------------------------------------------ view → model

    def _tick(self) -> None:
        ms = self._clock.restart()
        self.workspace.timeline.tick(ms / 1000.0)

    def _on_jump(self) -> None:
        try:
            self.workspace.timeline.jump(self.jump.text())
        except ValueError as exc:
            self.jump.setStyleSheet(f"border: 1px solid {theme.ERROR};")
            self.jump.setToolTip(str(exc))
            # Shown at once, below the box: a red border alone does not say why.
            QToolTip.showText(self.jump.mapToGlobal(QPoint(0, self.jump.height())), str(exc), self.jump)
            return
        self.jump.setStyleSheet("")
        self.jump.setToolTip("")
        self.jump.clear()
