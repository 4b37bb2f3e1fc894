"""The viewer's whole state in one Qt-free object: the open recording and every shared model.

Widgets receive a :class:`Workspace`, connect to its signals and to those of its parts
(:class:`~viewer.model.timeline.Timeline`, :class:`~viewer.model.selection.Selection`,
:class:`~viewer.model.series.PlotsModel`) and draw; they never hold state the others need.
Opening another recording keeps these objects and resets them, so connections stay valid.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from pvdkit.recording import Object
from viewer.model.compare import Comparison
from viewer.model.properties import PropertyModel
from viewer.model.selection import Selection
from viewer.model.series import CurveCache, Plot, PlotsModel, resolve_targets
from viewer.model.session import RecordingSession
from viewer.model.signals import Signal
from viewer.model.timeline import Timeline, assumed_timebase
from viewer.model.topdown import TopDownModel
from viewer.model.vehicles import Vehicle


class RecentFiles:
    """Most recently opened files, newest first, without duplicates, at most ``limit``."""

    def __init__(self, paths: Iterable[str] = (), limit: int = 10) -> None:
        self.limit = limit
        self.paths: list[str] = []
        for p in reversed(list(paths)):
            self.add(p)

    def add(self, path: str) -> None:
        p = os.path.abspath(path)
        if p in self.paths:
            self.paths.remove(p)
        self.paths.insert(0, p)
        del self.paths[self.limit:]

    def remove(self, path: str) -> None:
        p = os.path.abspath(path)
        if p in self.paths:
            self.paths.remove(p)

    def existing(self) -> list[str]:
        """The entries whose file still exists."""
        return [p for p in self.paths if os.path.exists(p)]


class Workspace:
    """The open recording, the comparison recording and the shared models.

    Signals:

    ======================  ===================================  ===================================
    signal                  arguments                            emitted when
    ======================  ===================================  ===================================
    ``session_changed``     ``session: RecordingSession | None``  a recording was opened (or closed)
    ``comparison_changed``  ``comparison: Comparison | None``     a comparison recording was set
    ``topdown_changed``     (none)                               the top-down geometry was rebuilt
    ======================  ===================================  ===================================

    Parts: ``timeline``, ``selection``, ``plots`` (always present); ``session``, ``properties``,
    ``curves``, ``comparison`` (present when a recording / comparison is open); ``topdown``
    (built on first use).
    """

    def __init__(self) -> None:
        self.session_changed = Signal("session_changed")
        self.comparison_changed = Signal("comparison_changed")
        self.topdown_changed = Signal("topdown_changed")
        self.timeline = Timeline(assumed_timebase(0))
        self.selection = Selection()
        self.plots = PlotsModel()
        self.session: RecordingSession | None = None
        self.properties: PropertyModel | None = None
        self.curves: CurveCache | None = None
        self.comparison: Comparison | None = None
        self._topdown: TopDownModel | None = None
        self._topdown_b: TopDownModel | None = None

    # ------------------------------------------------------------------ recordings

    def set_session(self, session: RecordingSession | None) -> None:
        """Show ``session`` (None: nothing); clears plots, selection and comparison."""
        old = self.session
        self.plots.clear()
        self.set_comparison(None)
        self.selection.clear()
        self.session = session
        self.properties = PropertyModel(session.recording) if session else None
        self.curves = CurveCache(session.recording) if session else None
        self._topdown = None
        self.timeline.set_timebase(session.timebase if session else assumed_timebase(0))
        self.session_changed.emit(session)
        if old is not None and old is not session:
            old.close()

    def set_comparison(self, session_b: RecordingSession | None, sync: str = "frame") -> None:
        """Compare with ``session_b`` (None stops comparing)."""
        if session_b is None:
            if self.comparison is not None:
                old = self.comparison
                self.comparison = None
                self.comparison_changed.emit(None)
                old.b.close()
            return
        if self.session is None:
            raise ValueError("open a recording before choosing one to compare with")
        self.comparison = Comparison(self.session, session_b, sync)
        self.comparison_changed.emit(self.comparison)

    def set_up_axis(self, setting: str) -> None:
        """Choose the top-down view's up axis ("auto", "x", "+y", "-z" …) and rebuild it."""
        if self.session is not None:
            self.session.set_up_axis(setting)
        self._topdown = None
        self._topdown_b = None
        self.topdown_changed.emit()

    @property
    def topdown(self) -> TopDownModel | None:
        if self._topdown is None and self.session is not None:
            self._topdown = TopDownModel(self.session)
        return self._topdown

    @property
    def topdown_b(self) -> TopDownModel | None:
        """Top-down geometry of the comparison recording, in the main recording's ground plane."""
        if self.comparison is None or self.topdown is None:
            return None
        if self._topdown_b is None or self._topdown_b.session is not self.comparison.b:
            self._topdown_b = TopDownModel(self.comparison.b, self.topdown.ground)
        return self._topdown_b

    # ------------------------------------------------------------------ conveniences

    @property
    def current_vehicle(self) -> Vehicle | None:
        """The vehicle of the selected object (None if it belongs to none)."""
        if self.session is None:
            return None
        return self.session.vehicle_of(self.selection.current)[0]

    def select(self, obj: Object | None) -> None:
        self.selection.select(obj)

    def plot(self, spec: str, context: Object | None = None, vehicle: Vehicle | None = None,
             into: Plot | None = None) -> Plot:
        """Plot ``"CLASS.ATTRIBUTE[component]"`` for the selected object's vehicle (one curve per
        wheel for per-wheel classes) — see :func:`viewer.model.series.resolve_targets`."""
        if self.session is None:
            raise ValueError("no recording is open")
        ctx = context if context is not None else self.selection.current
        target = resolve_targets(self.session.recording, self.session.vehicles, spec, ctx, vehicle)
        return self.plots.add_target(target, into)
