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
from pvdkit.types import PvdError
from viewer.model.compare import Comparison, ComparisonSet
from viewer.model.layout import Layout, Resolver, capture, check_curve, start_layout
from viewer.model.live import Growth, LiveFeed
from viewer.model.properties import PropertyModel
from viewer.model.selection import Selection
from viewer.model.series import CurveCache, Plot, PlotsModel, resolve_targets
from viewer.model.session import RecordingSession
from viewer.model.signals import Signal
from viewer.model.timeline import Timeline, assumed_timebase
from viewer.model.topdown import TopDownModel
from viewer.model.vehicles import Vehicle
from viewer.model.xy import xy_pairs


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
    ``comparison_changed``  ``comparison: Comparison | None``     comparison recordings were added or
                                                                 removed, or the sync mode or the
                                                                 reference changed (argument: the
                                                                 first comparison)
    ``topdown_changed``     (none)                               the top-down geometry was rebuilt
    ``grown``               ``growth: Growth``                   a live recording received frames or
                                                                 objects, or its stream ended
    ``live_changed``        ``feed: LiveFeed | None``             a live feed started or was closed
    ``xy_changed``          ``specs: tuple[str, str] | None``     the X–Y plot's specs changed
    ======================  ===================================  ===================================

    Parts: ``timeline``, ``selection``, ``plots`` (always present); ``session``, ``properties``,
    ``curves`` (present when a recording is open); ``compared`` (a
    :class:`~viewer.model.compare.ComparisonSet` of every recording compared with the open one,
    None when there is none), ``comparison`` (the first of them); ``topdown`` (built on first use);
    ``live`` (the :class:`~viewer.model.live.LiveFeed` the open recording grows from, or None).

    A live recording grows in place: :meth:`poll_live` (called from a timer) appends what
    arrived and updates every model over it — time base, vehicles, property and curve caches,
    comparisons — then emits ``grown``; plots, selection and the frame stay.
    """

    def __init__(self) -> None:
        self.session_changed = Signal("session_changed")
        self.comparison_changed = Signal("comparison_changed")
        self.topdown_changed = Signal("topdown_changed")
        self.grown = Signal("grown")
        self.live_changed = Signal("live_changed")
        self.xy_changed = Signal("xy_changed")
        #: What the X–Y panel plots: (x spec, y spec), kept with the plots in layouts.
        self.xy_specs: tuple[str, str] | None = None
        self.live: LiveFeed | None = None
        self.timeline = Timeline(assumed_timebase(0))
        self.selection = Selection()
        self.plots = PlotsModel()
        self.session: RecordingSession | None = None
        self.properties: PropertyModel | None = None
        self.curves: CurveCache | None = None
        self.compared: ComparisonSet | None = None
        self._topdown: TopDownModel | None = None
        self._topdown_compared: dict[int, TopDownModel] = {}

    # ------------------------------------------------------------------ recordings

    def set_session(self, session: RecordingSession | None) -> None:
        """Show ``session`` (None: nothing); clears plots, selection and comparison, and stops a
        live feed (what it received stays with its session until that is replaced)."""
        if self.live is not None and (session is None or session.recording is not self.live.recording):
            self.stop_live()
        old = self.session
        self.plots.clear()
        self.set_comparison(None)
        self.selection.clear()
        self.session = session
        self.properties = PropertyModel(session.recording, session) if session else None
        self.curves = CurveCache(session.recording) if session else None
        self._topdown = None
        self.timeline.set_timebase(session.timebase if session else assumed_timebase(0))
        self.session_changed.emit(session)
        if old is not None and old is not session:
            old.close()

    # ------------------------------------------------------------------ live recordings

    def set_live(self, feed: LiveFeed, follow: bool = True) -> RecordingSession:
        """Show ``feed``'s recording as it grows (start the feed yourself); ``follow``: the
        timeline follows the latest frame."""
        session = RecordingSession(feed.recording, feed.source_name)
        self.set_session(session)
        self.live = feed
        self.timeline.set_follow(follow)
        self.live_changed.emit(feed)
        return session

    def stop_live(self) -> None:
        """Stop receiving; the recording received so far stays shown."""
        feed, self.live = self.live, None
        if feed is not None:
            feed.stop()
            self.poll_live(feed)
            self.live_changed.emit(None)

    def poll_live(self, feed: LiveFeed | None = None) -> Growth | None:
        """Append what the live feed received since the last call and update every model;
        what grew (None: nothing)."""
        feed = feed or self.live
        if feed is None or self.session is None or self.session.recording is not feed.recording:
            return None
        growth = feed.drain()
        if growth is not None:
            self.grow(growth)
        return growth

    def grow(self, growth: Growth) -> None:
        """The open recording grew in place (a live feed's :meth:`~LiveFeed.drain`): bring the
        derived models up to date, then emit ``grown``."""
        session = self.session
        if session is None:
            return
        session.refresh(growth.structure_changed)
        if growth.structure_changed:
            self.plots.relabel(session.recording, session.vehicles)
        if self.properties is not None:
            self.properties.growing = True
        if self.curves is not None:
            self.curves.clear()
        if self.compared is not None:
            self.compared.refresh()
        self.timeline.extend(session.timebase)
        self.grown.emit(growth)

    def replace_session(self, session: RecordingSession, *, keep_previous: bool = False) -> None:
        """Show a newer state of the open recording (an ``.h5`` reopened as it is written, or
        its file reloaded after a new run): plots, selection (by path), comparisons and frame
        stay; following stays on. ``keep_previous``: the recording shown so far stays open as
        the first comparison (B, named "… (previous)"), to see what the new run changed."""
        old = self.session
        if old is None:
            self.set_session(session)
            return
        layout = self.layout()
        follow = self.timeline.follow
        frame = self.timeline.frame
        selected = old.path_of(self.selection.current) if self.selection.current is not None else None
        others = [c.b for c in self.comparisons]
        sync = self.compared.sync if self.compared is not None else "frame"
        self.compared = None  # keep the compared sessions open: they are shown again
        if keep_previous:
            for b in [b for b in others if b.path == old.path]:  # an older run of this file
                others.remove(b)
                b.close()
            self.session = None  # not closed by set_session: it is compared next
            old.label = f"{old.name} (previous)"
            others.insert(0, old)
        self.set_session(session)
        for b in others:
            self.add_comparison(b, sync)
        if selected is not None:
            obj = Resolver(session).find(selected)
            if obj is not None:
                self.select(obj)
        self.apply_layout(layout)
        self.timeline.set_frame(frame)
        if follow:
            self.timeline.set_follow(True)
        self.grown.emit(Growth(old.n_frames, session.n_frames, len(old.recording.objects),
                               len(session.recording.objects), reopened=True))

    @property
    def comparison(self) -> Comparison | None:
        """The first compared recording (B), or None."""
        return self.compared.members[0] if self.compared is not None and self.compared.members else None

    @property
    def comparisons(self) -> list[Comparison]:
        """Every compared recording (B, C, D …) with the open one."""
        return list(self.compared.members) if self.compared is not None else []

    def set_comparison(self, session_b: RecordingSession | None, sync: str = "frame") -> None:
        """Compare with ``session_b`` alone (None stops comparing)."""
        old = self.compared
        self.compared = None
        if session_b is None:
            if old is not None:
                self.comparison_changed.emit(None)
                for c in old.members:
                    c.b.close()
            return
        if self.session is None:
            raise ValueError("open a recording before choosing one to compare with")
        if old is not None:
            for c in old.members:
                c.b.close()
        self.add_comparison(session_b, sync)

    def add_comparison(self, session_b: RecordingSession, sync: str | None = None) -> Comparison:
        """Compare with one more recording (B, then C, D …); the first sets the sync mode."""
        if self.session is None:
            raise ValueError("open a recording before choosing one to compare with")
        if self.compared is None:
            self.compared = ComparisonSet(self.session, sync or "frame")
            self.compared.changed.connect(lambda: self.comparison_changed.emit(self.comparison))
        with self.compared.changed.blocked():
            c = self.compared.add(session_b)
        self.comparison_changed.emit(self.comparison)
        return c

    def set_sync(self, mode: str) -> None:
        """Match every compared recording's frames by ``"frame"`` or ``"time"``."""
        if self.compared is not None:
            self.compared.sync = mode

    def set_up_axis(self, setting: str) -> None:
        """Choose the top-down view's up axis ("auto", "x", "+y", "-z" …) and rebuild it."""
        if self.session is not None:
            self.session.set_up_axis(setting)
        self._topdown = None
        self._topdown_compared = {}
        self.topdown_changed.emit()

    def rebuild_topdown(self) -> None:
        """Build the top-down geometry again on next use (a live recording grew: its models
        show the frames they were built over until then; the view rebuilds them throttled)."""
        self._topdown = None
        self._topdown_compared = {}

    @property
    def topdown(self) -> TopDownModel | None:
        if self._topdown is None and self.session is not None:
            self._topdown = TopDownModel(self.session)
        return self._topdown

    @property
    def topdown_compared(self) -> list[TopDownModel]:
        """Top-down geometry of every compared recording (B, C, D …), in the main recording's
        ground plane; built on first use and kept while the comparison is."""
        if self.topdown is None:
            return []
        models = []
        for c in self.comparisons:
            m = self._topdown_compared.get(id(c.b))
            if m is None or m.session is not c.b:
                m = TopDownModel(c.b, self.topdown.ground)
            models.append(m)
        self._topdown_compared = {id(m.session): m for m in models}
        return models

    @property
    def topdown_b(self) -> TopDownModel | None:
        """Top-down geometry of the first comparison recording (see :attr:`topdown_compared`)."""
        models = self.topdown_compared
        return models[0] if models else None

    # ------------------------------------------------------------------ conveniences

    @property
    def current_vehicle(self) -> Vehicle | None:
        """The vehicle of the selected object (None if it belongs to none)."""
        if self.session is None:
            return None
        return self.session.vehicle_of(self.selection.current)[0]

    def select(self, obj: Object | None) -> None:
        self.selection.select(obj)

    # ------------------------------------------------------------------ layouts

    def show_start(self, vehicle: Vehicle | None = None) -> None:
        """The view a recording opens on: ``vehicle`` (default: the first) selected and its wheel
        speeds plotted, one curve per wheel, replacing the plots shown."""
        if self.session is None:
            return
        v = vehicle or (self.session.vehicles[0] if self.session.vehicles else None)
        if v is not None and (self.current_vehicle is not v):
            self.select(v.obj)
        self.apply_layout(start_layout(self.session, v))

    def set_xy(self, x_spec: str, y_spec: str) -> None:
        """Plot ``y_spec`` against ``x_spec`` in the X–Y panel (``Class.attribute[component]``)."""
        self.xy_specs = (x_spec, y_spec)
        self.xy_changed.emit(self.xy_specs)

    def layout(self) -> Layout:
        """The plots shown and the X–Y specs, as a :class:`~viewer.model.layout.Layout` (objects
        by readable path)."""
        if self.session is None:
            return Layout(xy=self.xy_specs)
        out = capture(self.plots.plots, self.session)
        out.xy = self.xy_specs
        return out

    def apply_layout(self, layout: Layout) -> list[str]:
        """Replace the plots by ``layout``'s panes; returns what could not be restored (one line
        each). A pane's curves are found by object path; a pane whose objects are not in this
        recording is made again from its ``spec`` for the selected (else the first) vehicle."""
        with self.plots.batch():  # one rebuild of the view, not one per plot
            shown = self.layout() if self.plots.plots else None
            problems = self._apply_layout(layout)
            if layout.panes and not self.plots.plots and shown is not None:
                # Nothing of it applies (a car's layout on a motorcycle): keep what was shown
                # rather than leave an empty plot area.
                self._apply_layout(shown)
                problems.append(f"nothing of the layout applies to {self.session.name}: the plots shown "
                                "are kept" if self.session is not None else "the plots shown are kept")
            return problems

    def _apply_layout(self, layout: Layout) -> list[str]:
        if layout.xy is not None:
            self.set_xy(*layout.xy)
        self.plots.clear()
        if self.session is None:
            return ["no recording is open"] if layout.panes else []
        problems: list[str] = []
        find = Resolver(self.session)
        vehicle = self.current_vehicle or (self.session.vehicles[0] if self.session.vehicles else None)
        for pane in layout.panes:
            found = []
            missing = []
            resolved = False
            for c in pane.curves:
                obj = find.find(c.object)
                if obj is None:
                    missing.append(c.object)
                    continue
                resolved = True
                try:
                    check_curve(self.session, obj, c.attribute, c.component)
                except PvdError as exc:
                    problems.append(f"{pane.title}: {exc}")
                    continue
                found.append((obj, c))
            if found and missing:  # the pane is shown with the curves it could find: say which are not
                problems.append(f"{pane.title}: {len(missing)} of its curves' objects are not in "
                                f"{self.session.name} ({', '.join(sorted(set(missing))[:3])}"
                                f"{', …' if len(set(missing)) > 3 else ''})")
            if found:
                plot = self.plots.add_plot(pane.title)
                plot.spec = pane.spec
                with self.plots.plot_changed.blocked():
                    for obj, c in found:
                        self.plots.add_curve(plot, obj, c.attribute, c.component, c.label or None)
                self.plots.plot_changed.emit(plot)
            elif pane.spec:
                try:
                    self.plot(pane.spec, vehicle=vehicle)
                except PvdError as exc:
                    problems.append(f"{pane.title}: {exc}")
            elif not resolved:
                problems.append(f"{pane.title}: none of its objects is in {self.session.name}")
        if layout.xy is not None and self.session is not None:
            try:
                xy_pairs(self.session, *layout.xy, vehicle=vehicle)
            except PvdError as exc:
                problems.append(f"X–Y {layout.xy[0]} against {layout.xy[1]}: {exc}")
        return problems

    def plot(self, spec: str, context: Object | None = None, vehicle: Vehicle | None = None,
             into: Plot | None = None) -> Plot:
        """Plot ``"CLASS.ATTRIBUTE[component]"`` for the selected object's vehicle (one curve per
        wheel for per-wheel classes) — see :func:`viewer.model.series.resolve_targets`."""
        if self.session is None:
            raise ValueError("no recording is open")
        ctx = context if context is not None else self.selection.current
        target = resolve_targets(self.session.recording, self.session.vehicles, spec, ctx, vehicle)
        return self.plots.add_target(target, into)
