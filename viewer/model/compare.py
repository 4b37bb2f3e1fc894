"""Comparing recordings: match objects, map frames, overlay curves and take differences.

Two runs of one scene (before / after a change, simcore vs PhysX) rarely share handles, so an
object of recording A is matched in B by its place in the vehicle graph (same vehicle — by name,
else by position —, same wheel, same class), else by class and name. Frames are matched by
number or by simulated time (:attr:`Comparison.sync`); by time, B's frame for A's frame ``f`` is
the last frame of B at or before A's time of ``f``.

A difference is taken only on A's frames that B has too (:meth:`Comparison.common_frames`): by
frame, frames below the shorter recording's length; by time, A's frames whose time lies within
B's recorded time span. Past the end of the shorter recording a zero-order hold would keep
subtracting B's last value, which reads as a real divergence.

Several recordings (B, C, D …) are compared with A at once through :class:`ComparisonSet`: one
:class:`Comparison` per recording, all placed on A's frame axis, and differences taken against a
chosen reference R, as ``R − X`` for every other recording X: with A the reference (the
default) that is ``A − B``, ``A − C`` …; with B, ``B − A``, ``B − C`` ….
"""

from __future__ import annotations

import numpy as np

from pvdkit.recording import Object
from viewer.model.downsample import zoh_values
from viewer.model.series import CurveCache, CurveData, CurveKey
from viewer.model.session import RecordingSession
from viewer.model.signals import Signal
from viewer.model.vehicles import Vehicle

SYNC_MODES = ("frame", "time")


class Comparison:
    """Recording ``b`` compared with the main recording ``a``.

    Signals:

    ==================  =================  ===============================
    signal              arguments          emitted when
    ==================  =================  ===============================
    ``sync_changed``    ``mode: str``      frames are now matched by ...
    ==================  =================  ===============================
    """

    def __init__(self, a: RecordingSession, b: RecordingSession, sync: str = "frame") -> None:
        self.a = a
        self.b = b
        self.sync_changed = Signal("sync_changed")
        self._sync = "frame"
        self.sync = sync
        self.cache_a = CurveCache(a.recording)
        self.cache_b = CurveCache(b.recording)
        self._vehicle_map = self._match_vehicles(a.vehicles, b.vehicles)

    def refresh(self) -> None:
        """A (live) grew: forget A's curves and match the vehicles again."""
        self.cache_a.clear()
        self._vehicle_map = self._match_vehicles(self.a.vehicles, self.b.vehicles)

    @property
    def sync(self) -> str:
        """``"frame"`` (frame numbers) or ``"time"`` (simulated time)."""
        return self._sync

    @sync.setter
    def sync(self, mode: str) -> None:
        if mode not in SYNC_MODES:
            raise ValueError(f"sync mode {mode!r}: expected one of {', '.join(SYNC_MODES)}")
        if mode != self._sync:
            self._sync = mode
            self.sync_changed.emit(mode)

    # ------------------------------------------------------------------ frames

    def frame_b(self, frame_a: int) -> int:
        """B's frame shown with A's ``frame_a``."""
        return int(self.frames_b(np.asarray([frame_a]))[0])

    def frames_b(self, frames_a: np.ndarray) -> np.ndarray:
        """B's frames for an array of A's frames (clamped into B)."""
        nb = self.b.n_frames
        fa = np.asarray(frames_a, np.int64)
        if self._sync == "frame":
            return np.clip(fa, 0, max(nb - 1, 0))
        return self.b.timebase.matching_frames(self.a.timebase, fa)

    def a_position_of_b(self, frames_b: np.ndarray) -> np.ndarray:
        """Where B's frames fall on A's frame axis (for drawing B's samples over A's)."""
        fb = np.asarray(frames_b, np.int64)
        if self._sync == "frame":
            return fb
        return self.a.timebase.matching_frames(self.b.timebase, fb)

    def common_frames(self) -> np.ndarray:
        """A's frames at which B has a frame too (see the module docstring): by frame the first
        ``min(len(A), len(B))``, by time those within B's first and last frame's time."""
        na, nb = self.a.n_frames, self.b.n_frames
        if self._sync == "frame" or not nb:
            return np.arange(min(na, nb), dtype=np.int64)
        sa, sb = self.a.timebase.seconds, self.b.timebase.seconds
        tol = 1e-3 * self.b.timebase.mean_step
        ok = (sa >= sb[0] - tol) & (sa <= sb[-1] + tol)
        return np.flatnonzero(ok).astype(np.int64)

    def values_on_a(self, key: CurveKey, frames_a: np.ndarray) -> np.ndarray | None:
        """B's values of A's curve ``key`` at A's ``frames_a`` (B at its matched frames);
        None when B has no counterpart."""
        kb = self.counterpart_key(key)
        if kb is None:
            return None
        db = self.cache_b.get(kb)
        return zoh_values(db.frames, db.values, self.frames_b(frames_a))

    # ------------------------------------------------------------------ objects

    @staticmethod
    def _match_vehicles(va: list[Vehicle], vb: list[Vehicle]) -> dict[int, Vehicle]:
        by_name = {v.name: v for v in vb}
        out: dict[int, Vehicle] = {}
        for v in va:
            m = by_name.get(v.name)
            if m is None and v.index < len(vb):
                m = vb[v.index]
            if m is not None:
                out[v.index] = m
        return out

    def counterpart(self, obj: Object) -> Object | None:
        """The object of B that plays ``obj``'s role in A (None when B has none)."""
        va, wa = self.a.vehicle_of(obj)
        cname = obj.cls.name if obj.cls else None
        if va is not None:
            vb = self._vehicle_map.get(va.index)
            if vb is not None:
                if obj is va.obj:
                    return vb.obj
                if wa is not None:
                    if wa.index < len(vb.wheels) and cname is not None:
                        wb = vb.wheels[wa.index]
                        if obj is wa.root:
                            return wb.root
                        return _same_slot(obj, wa.parts.get(cname, []), wb.parts.get(cname, []))
                elif cname is not None:
                    return _same_slot(obj, va.parts.get(cname, []), vb.parts.get(cname, []))
        if cname is None or cname not in self.b.recording.classes:
            return None
        same_a = [o for o in self.a.recording.objects_of_class(cname, derived=False) if o.name == obj.name]
        same_b = [o for o in self.b.recording.objects_of_class(cname, derived=False) if o.name == obj.name]
        return _same_slot(obj, same_a, same_b)

    def counterpart_key(self, key: CurveKey) -> CurveKey | None:
        ob = self.counterpart(self.a.recording.objects[key.object_index])
        if ob is None or ob.cls is None or key.attribute not in ob.cls.paths:
            return None
        return CurveKey(ob.index, key.attribute, key.component)

    # ------------------------------------------------------------------ curves

    def overlay(self, key: CurveKey) -> CurveData | None:
        """B's curve for A's curve ``key``, with its frames placed on A's frame axis."""
        kb = self.counterpart_key(key)
        if kb is None:
            return None
        d = self.cache_b.get(kb)
        x = self.a_position_of_b(d.frames)
        order = np.argsort(x, kind="stable")
        x, values = x[order], np.asarray(d.values, np.float64)[order]
        # B ends before A: its last value is not held to A's end (a flat line, and a legend
        # value, where B has no frames); a NaN after B's last frame ends the step curve there.
        nb = self.b.n_frames
        end = int(self.a_position_of_b(np.array([nb - 1]))[0]) + 1 if nb else 0
        if len(x) and end < self.a.n_frames and end > x[-1]:
            x, values = np.append(x, end), np.append(values, np.nan)
        return CurveData(x, values)

    def difference(self, key: CurveKey) -> CurveData | None:
        """A − B on A's frames that B has too (:meth:`common_frames`; B taken at its matched
        frame), as a step curve ending with NaN after the last common frame so the hold stops
        there; None when B has no counterpart."""
        kb = self.counterpart_key(key)
        if kb is None:
            return None
        frames = self.common_frames()
        da = self.cache_a.get(key)
        b = self.values_on_a(key, frames)
        assert b is not None
        return step_difference(frames, zoh_values(da.frames, da.values, frames) - b, self.a.n_frames)


def step_difference(frames: np.ndarray, diff: np.ndarray, n_frames: int) -> CurveData:
    """A difference sampled on ``frames`` as a step curve: only the frames where it changes, a
    NaN where a run of common frames breaks off (so nothing is held across a gap or past the
    end), and NaN before the first common frame."""
    if not len(frames):
        return CurveData(np.zeros(0, np.int64), np.zeros(0, np.float64))
    # Mark gaps: a frame after a common frame that is not itself common.
    gap_after = np.flatnonzero(np.diff(frames) > 1)
    ends = frames[gap_after] + 1
    if frames[-1] + 1 < n_frames:
        ends = np.append(ends, frames[-1] + 1)
    all_frames = np.concatenate((frames, ends))
    all_values = np.concatenate((diff, np.full(len(ends), np.nan)))
    order = np.argsort(all_frames, kind="stable")
    f, v = all_frames[order], all_values[order]
    same = (v[1:] == v[:-1]) | (np.isnan(v[1:]) & np.isnan(v[:-1]))
    keep = np.concatenate(([True], ~same))
    return CurveData(f[keep], v[keep])


#: Letters naming the compared recordings: A is the main one.
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class ComparisonSet:
    """Recordings B, C, D … compared with the main recording A at once.

    ``members[i]`` compares A with recording ``i + 1``; recording 0 is A. Differences are
    ``reference − recording j`` on A's frame axis, on the frames both have.

    Signals:

    =====================  ==================  ===============================================
    signal                 arguments           emitted when
    =====================  ==================  ===============================================
    ``changed``            (none)              a recording was added or removed, or the sync
                                               mode or the reference changed
    =====================  ==================  ===============================================
    """

    def __init__(self, a: RecordingSession, sync: str = "frame") -> None:
        self.a = a
        self.members: list[Comparison] = []
        self.changed = Signal("changed")
        self._sync = sync
        self._reference = 0

    def __len__(self) -> int:
        """Number of recordings, A included."""
        return 1 + len(self.members)

    def add(self, b: RecordingSession) -> Comparison:
        c = Comparison(self.a, b, self._sync)
        self.members.append(c)
        self.changed.emit()
        return c

    def refresh(self) -> None:
        """The main recording A grew (live): every comparison sees its new frames."""
        for c in self.members:
            c.refresh()

    def session(self, j: int) -> RecordingSession:
        return self.a if j == 0 else self.members[j - 1].b

    def label(self, j: int) -> str:
        """``"B: run_b.h5"``."""
        return f"{LETTERS[j % len(LETTERS)]}: {self.session(j).name}"

    @property
    def sync(self) -> str:
        return self._sync

    @sync.setter
    def sync(self, mode: str) -> None:
        for c in self.members:
            c.sync = mode  # validates
        if mode not in SYNC_MODES:
            raise ValueError(f"sync mode {mode!r}: expected one of {', '.join(SYNC_MODES)}")
        if mode != self._sync:
            self._sync = mode
            self.changed.emit()

    @property
    def reference(self) -> int:
        """The recording differences are taken against (0 = A)."""
        return self._reference

    @reference.setter
    def reference(self, j: int) -> None:
        if not 0 <= j < len(self):
            raise ValueError(f"reference {j}: expected 0 … {len(self) - 1}")
        if j != self._reference:
            self._reference = j
            self.changed.emit()

    def common_frames(self, j: int) -> np.ndarray:
        """A's frames at which recordings ``j`` and the reference both have a frame."""
        frames = np.arange(self.a.n_frames, dtype=np.int64)
        for k in {j, self._reference} - {0}:
            frames = np.intersect1d(frames, self.members[k - 1].common_frames(), assume_unique=True)
        return frames

    def values_on_a(self, key: CurveKey, j: int, frames_a: np.ndarray) -> np.ndarray | None:
        """Recording ``j``'s values of A's curve ``key`` at A's ``frames_a`` (None: no counterpart)."""
        if j == 0:
            d = self.members[0].cache_a.get(key) if self.members else None
            if d is None:
                return None
            return zoh_values(d.frames, d.values, frames_a)
        return self.members[j - 1].values_on_a(key, frames_a)

    def difference(self, key: CurveKey, j: int) -> CurveData | None:
        """The reference − recording ``j`` for A's curve ``key`` (``A − B`` by default), on A's
        frame axis and only where both have frames; None for the reference itself or without a
        counterpart."""
        if j == self._reference or not self.members:
            return None
        frames = self.common_frames(j)
        x = self.values_on_a(key, j, frames)
        r = self.values_on_a(key, self._reference, frames)
        if x is None or r is None:
            return None
        return step_difference(frames, r - x, self.a.n_frames)


def _same_slot(obj: Object, group_a: list[Object], group_b: list[Object]) -> Object | None:
    """The object of ``group_b`` at ``obj``'s position in ``group_a``."""
    for i, o in enumerate(group_a):
        if o is obj:
            return group_b[i] if i < len(group_b) else None
    return None
