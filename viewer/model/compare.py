"""Comparing two recordings: match objects, map frames, overlay curves and take differences.

Two runs of one scene (before / after a change, simcore vs PhysX) rarely share handles, so an
object of recording A is matched in B by its place in the vehicle graph (same vehicle — by name,
else by position —, same wheel, same class), else by class and name. Frames are matched by
number or by simulated time (:attr:`Comparison.sync`); by time, B's frame for A's frame ``f`` is
the last frame of B at or before A's time of ``f``.
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
        seconds = self.a.timebase.seconds[np.clip(fa, 0, max(self.a.n_frames - 1, 0))]
        return np.asarray(self.b.timebase.frame_at(seconds), np.int64)

    def a_position_of_b(self, frames_b: np.ndarray) -> np.ndarray:
        """Where B's frames fall on A's frame axis (for drawing B's samples over A's)."""
        fb = np.asarray(frames_b, np.int64)
        if self._sync == "frame":
            return fb
        seconds = self.b.timebase.seconds[np.clip(fb, 0, max(self.b.n_frames - 1, 0))]
        return np.asarray(self.a.timebase.frame_at(seconds), np.int64)

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
        return CurveData(x[order], d.values[order])

    def difference(self, key: CurveKey) -> CurveData | None:
        """A − B on every frame of A (B taken at its matched frame), stored as a step curve
        (only the frames where the difference changes); None when B has no counterpart."""
        kb = self.counterpart_key(key)
        if kb is None:
            return None
        da, db = self.cache_a.get(key), self.cache_b.get(kb)
        frames = np.arange(self.a.n_frames, dtype=np.int64)
        a = zoh_values(da.frames, da.values, frames)
        diff = a - zoh_values(db.frames, db.values, self.frames_b(frames))
        if not len(diff):
            return CurveData(frames, diff)
        same = (diff[1:] == diff[:-1]) | (np.isnan(diff[1:]) & np.isnan(diff[:-1]))
        keep = np.concatenate(([True], ~same))
        return CurveData(frames[keep], diff[keep])


def _same_slot(obj: Object, group_a: list[Object], group_b: list[Object]) -> Object | None:
    """The object of ``group_b`` at ``obj``'s position in ``group_a``."""
    for i, o in enumerate(group_a):
        if o is obj:
            return group_b[i] if i < len(group_b) else None
    return None
