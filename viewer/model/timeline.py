"""Frames and time: the time base of a recording and the timeline (current frame, playback).

Frames are the unit of truth (the viewer is precise about frames: PhysX writes two PVD frames per
simulation step, and both must be reachable). Time is derived per frame by :func:`detect_timebase`
from whatever the recording offers, because producers disagree on what a frame timestamp means:

* simcore and pvdkit's synthetic files stamp frames with a clock (nanoseconds, microseconds);
* PhysX stamps frames with a counter (1, 2, 3 …) and records the step length separately in
  ``PxScene.elapsedTime``; simcore records ``Simulation.time`` — :attr:`Recording.time_base`
  reads both and is tried first (both frames of a step map to the end of that step);
* anything else falls back to an assumed rate (flagged ``exact=False``), so playback still works.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from pvdkit.recording import TIME_SLACK, Recording
from viewer.model.signals import Signal

#: Frame rate assumed when a recording gives no usable time (frames per second).
DEFAULT_RATE = 60.0

#: Attributes holding a step length in seconds, tried in order on a counter-stamped recording:
#: (class name, attribute name).
STEP_ATTRIBUTES = (("PxScene", "elapsedTime"), ("Simulation", "dt"), ("Scene", "elapsedTime"))

#: Timestamp units tried on clock-stamped recordings, with the plausible step range each implies:
#: (name, seconds per unit). A step of 0.2 ms … 0.5 s is accepted.
_UNITS = (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0))
_MIN_STEP, _MAX_STEP = 2e-4, 0.5


@dataclass(frozen=True)
class TimeBase:
    """Simulated time of every frame.

    ``seconds[f]`` is the time of frame ``f`` (non-decreasing; equal for frames of one step);
    ``source`` says where it came from (shown in the UI), ``exact`` is False when the rate was
    assumed.
    """

    seconds: np.ndarray  # float64, one per frame
    source: str
    exact: bool = True

    def __len__(self) -> int:
        return len(self.seconds)

    def time_of(self, frame: int) -> float:
        """Time of ``frame`` in seconds (clamped into the recording; 0.0 when it has no frames)."""
        if not len(self.seconds):
            return 0.0
        return float(self.seconds[min(max(frame, 0), len(self.seconds) - 1)])

    def frame_at(self, seconds: float | np.ndarray) -> int | np.ndarray:
        """The frame in force at a time: the last frame whose time is at or before it (0 when the
        time is before the first frame). Vectorised over arrays.

        Times within :data:`~pvdkit.recording.TIME_SLACK` of a frame step after a frame's time
        count as that frame's, so a typed ``0.7s`` finds the frame stamped 0.70000001
        (accumulated float steps), as ``pvdkit``'s own time base does.
        """
        tol = TIME_SLACK * self.mean_step
        idx = np.searchsorted(self.seconds, np.asarray(seconds, np.float64) + tol, side="right") - 1
        idx = np.clip(idx, 0, max(len(self.seconds) - 1, 0))
        return int(idx) if np.ndim(idx) == 0 else idx

    def matching_frames(self, other: TimeBase, other_frames: np.ndarray) -> np.ndarray:
        """This recording's frames shown with ``other``'s ``other_frames`` when two recordings are
        synchronised by time: the frame at the same time *and* at the same place among the frames
        that share it — PhysX writes two frames per step, both at the step's end, so frame 10 of
        a recording goes with frame 10 of its copy, not with 11 (the last frame at that time).
        Where no frame of this recording has that time: the frame in force then (:meth:`frame_at`)."""
        of = np.clip(np.asarray(other_frames, np.int64), 0, max(len(other.seconds) - 1, 0))
        if not len(self.seconds) or not len(other.seconds):
            return np.zeros(of.shape, np.int64)
        t = other.seconds[of]
        # Place among the frames sharing the time: 0 for the first frame of a step, 1 for the next.
        rank = of - np.searchsorted(other.seconds, t - TIME_SLACK * other.mean_step, side="left")
        tol = TIME_SLACK * self.mean_step
        first = np.searchsorted(self.seconds, t - tol, side="left")
        in_force = np.asarray(self.frame_at(t), np.int64)
        shared = first <= in_force  # this recording has frames at that time: first … in_force
        return np.where(shared, np.minimum(first + rank, in_force), in_force)

    @property
    def duration(self) -> float:
        """Time from the first to the last frame, in seconds."""
        return float(self.seconds[-1] - self.seconds[0]) if len(self.seconds) else 0.0

    @property
    def mean_step(self) -> float:
        """Mean time between consecutive frames (1 / :data:`DEFAULT_RATE` when unknown)."""
        n = len(self.seconds)
        if n < 2 or self.duration <= 0:
            return 1.0 / DEFAULT_RATE
        return self.duration / (n - 1)


def assumed_timebase(n_frames: int, rate: float = DEFAULT_RATE) -> TimeBase:
    """Frame ``f`` at ``f / rate`` seconds (when the recording says nothing usable about time)."""
    return TimeBase(np.arange(n_frames, dtype=np.float64) / rate, f"assumed {rate:g} frames/s", exact=False)


def detect_timebase(rec: Recording) -> TimeBase:
    """The time base of a recording (see the module docstring for the rules, tried in order)."""
    n = len(rec.frames)
    if n == 0:
        return TimeBase(np.zeros(0), "no frames", exact=False)
    # The recording's own answer first (pvdkit reads PhysX's PxScene.elapsedTime and simcore's
    # Simulation.time): frame timestamps can mislead — simcore in PhysX's layout stamps the two
    # frames of a step 1 ns apart, which reads as a millisecond clock.
    known = _recorded_seconds(rec)
    if known is not None:
        return known
    start = rec.frames.start.astype(np.float64)
    steps = np.diff(start)
    counter = n < 2 or bool(np.all(steps == 1.0))
    if not counter and np.all(steps >= 0):
        positive = steps[steps > 0]
        if len(positive):
            median = float(np.median(positive))
            for unit, scale in _UNITS:
                if _MIN_STEP <= median * scale <= _MAX_STEP:
                    return TimeBase(start * scale, f"frame timestamps ({unit})")
    for cls_name, attr in STEP_ATTRIBUTES:
        tb = _cumulative_steps(rec, cls_name, attr, n)
        if tb is not None:
            return tb
    return assumed_timebase(n)


def _recorded_seconds(rec: Recording) -> TimeBase | None:
    """:attr:`Recording.time_base` when the recording maps its frames to seconds, else None."""
    tb = rec.time_base
    if not tb.known or tb.seconds is None or len(tb.seconds) != len(rec.frames):
        return None
    seconds = np.maximum.accumulate(np.asarray(tb.seconds, np.float64))
    return TimeBase(seconds, tb.source)


def _cumulative_steps(rec: Recording, cls_name: str, attr: str, n: int) -> TimeBase | None:
    """Time as the running sum of a step-length attribute set once per simulation step."""
    if cls_name not in rec.classes:
        return None
    objs = rec.objects_of_class(cls_name)
    if not objs:
        return None
    cls = objs[0].cls
    if cls is None or attr not in cls.paths:
        return None
    frames, values = rec.series(objs[0], attr)
    if not len(frames) or not isinstance(values, np.ndarray) or values.ndim != 1:
        return None
    dt = values.astype(np.float64)
    if not np.all(np.isfinite(dt)) or np.any(dt < 0) or not (_MIN_STEP <= float(np.median(dt)) <= _MAX_STEP):
        return None
    # Sum of every step recorded at or before each frame.
    per_frame = np.zeros(n, np.float64)
    np.add.at(per_frame, np.clip(frames, 0, n - 1), dt)
    return TimeBase(np.cumsum(per_frame), f"running sum of {cls_name}.{attr}")


_JUMP = re.compile(
    r"^\s*(?:(?P<t>t\s*=?\s*)?(?P<num>[-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?)\s*(?P<unit>ms|s)?\s*)$",
    re.IGNORECASE)


def parse_jump(text: str, timebase: TimeBase) -> int:
    """The frame a "jump to" entry means: ``"120"`` is frame 120 and ``"-1"`` the last frame
    (negative numbers count from the end, as ``pvdkit view --frame``); ``"1.5s"``, ``"t=1.5"``
    or ``"250ms"`` is the frame in force at that time. Raises ValueError with the accepted forms,
    or with the recording's frames or times when the entry lies outside them (never a silent
    jump to the nearest end)."""
    forms = "enter a frame number (120, -1 for the last) or a time (1.5s, 250ms, t=1.5)"
    m = _JUMP.match(text)
    if not m:
        raise ValueError(f"cannot read {text!r}: {forms}")
    num = float(m.group("num"))
    if not math.isfinite(num):
        raise ValueError(f"cannot read {text!r}: the number is too large; {forms}")
    unit = (m.group("unit") or "").lower()
    n = len(timebase)
    if m.group("t") or unit:
        seconds = num / 1000.0 if unit == "ms" else num
        if n and not (timebase.seconds[0] - 0.5 * timebase.mean_step <= seconds
                      <= timebase.seconds[-1] + timebase.mean_step):
            raise ValueError(f"{text.strip()}: the recording runs from {timebase.seconds[0]:g} s to "
                             f"{timebase.seconds[-1]:g} s")
        return int(timebase.frame_at(seconds))
    if num != int(num):
        raise ValueError(f"{text!r}: a frame number must be whole (write 1.5s for a time)")
    frame = int(num)
    if not -n <= frame < n:
        raise ValueError(f"frame {frame}: the recording has frames 0 … {n - 1} (-1: the last)" if n
                         else f"frame {frame}: the recording has no frames")
    return frame % n


class Timeline:
    """The current frame and playback state, shared by every view.

    Signals:

    ====================  ==================  =============================================
    signal                arguments           emitted when
    ====================  ==================  =============================================
    ``frame_changed``     ``frame: int``      the current frame changed
    ``playing_changed``   ``playing: bool``   playback started or stopped
    ``speed_changed``     ``speed: float``    the playback speed factor changed
    ``reset``             ``n_frames: int``   a new time base was installed (new recording)
    ``extended``          ``n_frames: int``   the recording grew (live); the frame is kept
    ``follow_changed``    ``follow: bool``    "follow latest" was switched on or off
    ====================  ==================  =============================================

    Playback runs on simulated time: :meth:`tick` advances it by the wall-clock time since the
    last tick × :attr:`speed` and shows the frame in force at that time, so ×1 is real time
    whatever the frame rate, and frames of one step (same time) are passed over together.
    """

    SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)

    def __init__(self, timebase: TimeBase | None = None) -> None:
        self.frame_changed = Signal("frame_changed")
        self.playing_changed = Signal("playing_changed")
        self.speed_changed = Signal("speed_changed")
        self.reset = Signal("reset")
        self.extended = Signal("extended")
        self.follow_changed = Signal("follow_changed")
        self._follow = False
        self.timebase = timebase if timebase is not None else assumed_timebase(0)
        self._frame = 0
        self._playing = False
        self._speed = 1.0
        self._play_time = 0.0
        self.loop = False

    # ------------------------------------------------------------------ state

    @property
    def n_frames(self) -> int:
        return len(self.timebase)

    @property
    def frame(self) -> int:
        """The current frame (0 … n_frames-1; 0 for an empty recording)."""
        return self._frame

    @property
    def last_frame(self) -> int:
        return max(self.n_frames - 1, 0)

    @property
    def time(self) -> float:
        """Time of the current frame in seconds."""
        return self.timebase.time_of(self._frame)

    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def follow(self) -> bool:
        """Whether the current frame follows the last frame as a live recording grows."""
        return self._follow

    def set_follow(self, on: bool) -> None:
        if bool(on) != self._follow:
            self._follow = bool(on)
            self.follow_changed.emit(self._follow)
        if self._follow:
            self.set_frame(self.last_frame)

    def extend(self, timebase: TimeBase) -> None:
        """Install the time base of a recording that grew: the frame stays (or, following,
        moves to the new last frame)."""
        self.timebase = timebase
        self.extended.emit(self.n_frames)
        if self._frame > self.last_frame:
            self._frame = self.last_frame
            self.frame_changed.emit(self._frame)
        if self._follow:
            self._set(self.last_frame)

    def set_timebase(self, timebase: TimeBase) -> None:
        """Install the time base of a newly opened recording; goes to frame 0, stops and stops
        following."""
        if self._follow:
            self._follow = False
            self.follow_changed.emit(False)
        self.timebase = timebase
        self._frame = 0
        self._play_time = timebase.time_of(0)
        if self._playing:
            self._playing = False
            self.playing_changed.emit(False)
        self.reset.emit(self.n_frames)
        self.frame_changed.emit(0)

    # ------------------------------------------------------------------ navigation

    def set_frame(self, frame: int) -> int:
        """Go to ``frame`` (clamped into the recording); returns the frame now current. Any
        frame but the last switches :attr:`follow` off."""
        f = self._set(frame)
        if self._follow and f != self.last_frame:
            self._follow = False
            self.follow_changed.emit(False)
        return f

    def _set(self, frame: int) -> int:
        f = min(max(int(frame), 0), self.last_frame)
        if f != self._frame:
            self._frame = f
            self._play_time = self.timebase.time_of(f)
            self.frame_changed.emit(f)
        return f

    def step(self, n: int = 1) -> int:
        """Move ``n`` frames forward (negative: back)."""
        return self.set_frame(self._frame + n)

    def home(self) -> int:
        return self.set_frame(0)

    def end(self) -> int:
        return self.set_frame(self.last_frame)

    def seek_time(self, seconds: float) -> int:
        """Go to the frame in force at ``seconds``."""
        return self.set_frame(int(self.timebase.frame_at(seconds)))

    def jump(self, text: str) -> int:
        """Go to a frame or time typed by the user (see :func:`parse_jump`)."""
        return self.set_frame(parse_jump(text, self.timebase))

    # ------------------------------------------------------------------ playback

    def set_speed(self, speed: float) -> None:
        if not (math.isfinite(speed) and speed > 0):
            raise ValueError(f"playback speed must be a positive number, got {speed!r}")
        if speed != self._speed:
            self._speed = float(speed)
            self.speed_changed.emit(self._speed)

    def play(self) -> None:
        if self._playing or self.n_frames < 2:
            return
        if self._frame >= self.last_frame and not self.loop:
            self.set_frame(0)
        self._play_time = self.timebase.time_of(self._frame)
        self._playing = True
        self.playing_changed.emit(True)

    def pause(self) -> None:
        if self._playing:
            self._playing = False
            self.playing_changed.emit(False)

    def toggle(self) -> None:
        """Space bar: play if paused, pause if playing."""
        if self._playing:
            self.pause()
        else:
            self.play()

    def tick(self, wall_seconds: float) -> int:
        """Advance playback by ``wall_seconds`` of wall-clock time (called by a UI timer).

        Shows the frame in force at the new playback time; at the end it stops, or with
        :attr:`loop` set, starts again from frame 0 on the next tick.
        """
        if not self._playing:
            return self._frame
        if self._frame >= self.last_frame and self.loop:
            self._play_time = self.timebase.time_of(0)
            return self.set_frame(0)
        self._play_time += max(wall_seconds, 0.0) * self._speed
        target = int(self.timebase.frame_at(self._play_time))
        if target > self._frame:
            keep = self._play_time
            self.set_frame(target)
            self._play_time = keep
        if self._frame >= self.last_frame and not self.loop:
            self.pause()
        return self._frame
