"""The comparison engine of ``pvdkit diff``: schema, objects, frames and every attribute series.

How one attribute of one matched object is compared (vectorised over the whole series, no
Python per sample):

1. Each side's sample frames are mapped to *comparison frames* (frame indices of A; B's
   frames are mapped by index, or by timestamp with ``align="time"``), clipped to the frame
   window's start (zero-order hold: a value set before the window is the value at its start)
   and reduced to the last sample per frame (the value in force when the frame ends).
2. Both are aligned on the union of their frames: at every frame of the union each side holds
   its last value at or before it, or nothing when not yet set.
3. A frame differs when exactly one side holds a value (missing data is a difference) or
   when the values differ: floats beyond ``atol + rtol·|b|`` (NaN only equals NaN with
   ``nan_equal``), anything else exactly — integers, enums and flags by value, strings by
   text, object references by the *identity* of the object they point to
   (:mod:`pvdkit.identity`), unique lists as the ordered list of their members.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pvdkit.diff.distance import as_compared, distances
from pvdkit.diff.result import (
    DIFFERENT,
    EQUAL,
    ONLY_IN_A,
    ONLY_IN_B,
    RETYPED,
    DiffOptions,
    DiffResult,
    FrameWindow,
    Note,
    ObjectChange,
    SchemaChange,
    SeriesDiff,
    VehicleScope,
)
from pvdkit.diff.tolerance import Tolerance
from pvdkit.identity import (
    HandleResolver,
    Matching,
    ObjectIdentity,
    match_objects,
    object_identities,
    sorted_unique,
)
from pvdkit.memory import cyclic_gc_paused
from pvdkit.recording import Attribute, Class, ListSeries, Recording, Series
from pvdkit.types import DataType, PvdError, PvdWarning

__all__ = ["Aligned", "Comparison", "compare", "compare_files", "compare_schema"]

_FLOAT_TYPES = (DataType.FLOAT32, DataType.FLOAT64)
_RECORDING = "<recording>"


# ============================================================================================
# Schema
# ============================================================================================


def _attr_signature(a: Attribute) -> str:
    """What an attribute is, as text: equal text ⇔ same type (for ``attribute_retyped``)."""
    if a.kind == "value":
        dt = a.data_type.name if a.data_type is not None else "?"
        return f"{dt}x{a.count}" if a.count else f"{dt}[variable]"
    if a.kind == "flags":
        return f"flags of {a.enum_class.name if a.enum_class else '?'}"
    if a.kind == "class":
        return f"class {a.attribute_class.name if a.attribute_class else '?'}"
    if a.kind == "unique_list":
        return f"unique list of {a.data_type.name if a.data_type is not None else '?'}"
    return f"enum value {a.value}"


def compare_schema(a: Recording, b: Recording) -> list[SchemaChange]:
    """Classes added/removed (by name), base classes changed, attributes added/removed/retyped,
    enum values added/removed/changed."""
    out: list[SchemaChange] = []
    ca, cb = a.classes, b.classes
    for name in ca:
        if name not in cb:
            out.append(SchemaChange("class_removed", name, a=_class_text(ca[name])))
    for name in cb:
        if name not in ca:
            out.append(SchemaChange("class_added", name, b=_class_text(cb[name])))
    for name, x in ca.items():
        y = cb.get(name)
        if y is None:
            continue
        bx, by = (x.base.name if x.base else None), (y.base.name if y.base else None)
        if bx != by:
            out.append(SchemaChange("base_changed", name, a=str(bx), b=str(by)))
        for an, aa in x.attributes.items():
            ab = y.attributes.get(an)
            if ab is None:
                out.append(SchemaChange("attribute_removed", name, an, a=_attr_signature(aa)))
            elif _attr_signature(aa) != _attr_signature(ab):
                out.append(SchemaChange("attribute_retyped", name, an, _attr_signature(aa),
                                        _attr_signature(ab)))
        for an, ab in y.attributes.items():
            if an not in x.attributes:
                out.append(SchemaChange("attribute_added", name, an, b=_attr_signature(ab)))
        for vn, va in x.enum_values.items():
            vb = y.enum_values.get(vn)
            if vb is None:
                out.append(SchemaChange("enum_value_removed", name, vn, a=str(va)))
            elif vb != va:
                out.append(SchemaChange("enum_value_changed", name, vn, str(va), str(vb)))
        for vn, vb in y.enum_values.items():
            if vn not in x.enum_values:
                out.append(SchemaChange("enum_value_added", name, vn, b=str(vb)))
    return out


def _class_text(c: Class) -> str:
    base = f" : {c.base.name}" if c.base else ""
    return f"class{base}, {len(c.attributes)} attributes" + (f", {len(c.enum_values)} enum values"
                                                            if c.enum_values else "")


# ============================================================================================
# Series preparation
# ============================================================================================


@dataclass
class _Prepared:
    """One side of one series, ready to compare: comparison frames and values by kind.

    ``values``: 2-D array ``(n, width)`` for numeric, bytes and reference kinds (``lengths``
    gives each sample's element count when they vary), 1-D int64 codes for lists, 1-D object
    array for strings.
    """

    kind: str
    signature: str
    frames: np.ndarray  # int64 comparison frames (non-decreasing)
    values: Any
    lengths: np.ndarray | None
    series: Series | ListSeries | None  # None for pseudo attributes (frame timestamps)


def _kind_of(attr: Attribute | None, family: int) -> tuple[str, str]:
    """(kind, type signature) of a series' attribute."""
    if attr is None:
        return ("list" if family == ListSeries.family else "bytes"), "unregistered"
    sig = _attr_signature(attr)
    if family == ListSeries.family:  # ADD/REMOVE commands, even on an attribute registered plain
        return "list", sig
    if attr.kind == "unique_list":  # SET commands on a unique-list attribute: a stream breaking
        return "bytes", sig        # its own registration; compared as the bytes it wrote
    if attr.kind == "flags":
        ec = attr.enum_class
        return ("flags" if ec is not None and ec.is_flags else "enum"), sig
    dt = attr.data_type
    if dt == DataType.STRING:
        return "string", sig
    if dt == DataType.OBJECT_HANDLE:
        return "reference", sig
    if dt in _FLOAT_TYPES:
        return "float", sig
    if dt is None:
        return "bytes", sig
    return "int", sig


def _bytes_matrix(samples) -> tuple[np.ndarray, np.ndarray | None]:
    if samples.fixed is not None:
        return samples.fixed, None
    return _pad([samples.flat[samples.offsets[i]:samples.offsets[i + 1]] for i in range(len(samples))],
                np.dtype(np.uint8))


def _pad(rows: list[np.ndarray], dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Variable-length samples as a zero-padded matrix plus their lengths."""
    n = len(rows)
    lengths = np.fromiter((len(r) for r in rows), np.int64, n)
    width = int(lengths.max()) if n else 0
    out = np.zeros((n, width), dtype)
    if n and width:
        flat = np.concatenate(rows).astype(dtype, copy=False)
        starts = np.cumsum(lengths) - lengths
        r = np.repeat(np.arange(n), lengths)
        c = np.arange(len(flat)) - np.repeat(starts, lengths)
        out[r, c] = flat
    return out, lengths


def _matrix(raw: Any, samples) -> tuple[np.ndarray, np.ndarray | None]:
    """Typed ``(n, width)`` matrix (+ lengths when samples vary in size) of a Series' raw form."""
    if isinstance(raw, np.ndarray):
        return (raw[:, None] if raw.ndim == 1 else raw), None
    dtypes = {r.dtype for r in raw}
    if len(dtypes) > 1:  # some samples not a whole number of elements: compare their bytes
        return _bytes_matrix(samples)
    return _pad(raw, dtypes.pop() if dtypes else np.dtype(np.uint8))


# ============================================================================================
# Alignment and comparison kernels
# ============================================================================================


def _zoh(frames: np.ndarray, lo: int | None, hi: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(frames, sample index) of the value in force at the end of each frame with samples,
    frames before ``lo`` moved to ``lo`` (held values), frames from ``hi`` on dropped."""
    f = frames if lo is None else np.maximum(frames, lo)
    n = len(f)
    if n == 0:
        return f, np.zeros(0, np.int64)
    last = np.ones(n, bool)
    last[:-1] = f[1:] != f[:-1]
    idx = np.flatnonzero(last)
    fr = f[idx]
    if hi is not None:
        keep = fr < hi
        idx, fr = idx[keep], fr[keep]
    return fr, idx


def _align(fa: np.ndarray, fb: np.ndarray, lo: int | None, hi: int | None, end_a: int | None = None,
           end_b: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Union grid of both sides' frames and, per grid frame, each side's sample index (-1 = unset).

    ``end_a``/``end_b``: the first comparison frame a side does not have (its recording ended).
    Where the other side wrote values from there on, this side holds nothing (missing data);
    a value both sides set earlier and never changed stays comparable.
    """
    ga, ia = _zoh(fa, lo, hi)
    gb, ib = _zoh(fb, lo, hi)
    grid = sorted_unique(np.concatenate((ga, gb)))  # np.union1d
    ja = np.searchsorted(ga, grid, side="right") - 1
    jb = np.searchsorted(gb, grid, side="right") - 1
    xa = np.where(ja >= 0, ia[np.maximum(ja, 0)] if len(ia) else -1, -1)
    xb = np.where(jb >= 0, ib[np.maximum(jb, 0)] if len(ib) else -1, -1)
    if end_a is not None:
        xa[grid >= end_a] = -1
    if end_b is not None:
        xb[grid >= end_b] = -1
    return grid, xa, xb


@dataclass
class _Outcome:
    row_ok: np.ndarray  # per frame where both sides hold a value
    max_abs: float | None = None
    max_rel: float | None = None
    component: int = 0


def _widen(m: np.ndarray, width: int) -> np.ndarray:
    if m.shape[1] == width:
        return m
    out = np.zeros((m.shape[0], width), m.dtype)
    out[:, :m.shape[1]] = m
    return out


def _compare_matrix(va: np.ndarray, la: np.ndarray | None, vb: np.ndarray, lb: np.ndarray | None,
                    xa: np.ndarray, xb: np.ndarray, tol: Tolerance, is_float: bool,
                    numeric: bool) -> _Outcome:
    """Compare rows ``va[xa]`` and ``vb[xb]`` element by element (floats with tolerance)."""
    a, b = va[xa], vb[xb]
    m = len(xa)
    if a.dtype != b.dtype:
        # Same attribute type, other storage width (PhysX writes PxFlags as u8/u16/u32): compare
        # the numbers.
        if a.dtype.kind not in "iuf" or b.dtype.kind not in "iuf":
            return _Outcome(np.zeros(m, bool))
        common = np.result_type(a.dtype, b.dtype)
        a, b = a.astype(common), b.astype(common)
    na = la[xa] if la is not None else np.full(m, a.shape[1], np.int64)
    nb = lb[xb] if lb is not None else np.full(m, b.shape[1], np.int64)
    width = max(a.shape[1], b.shape[1])
    a, b = _widen(a, width), _widen(b, width)
    valid = np.arange(width)[None, :] < np.minimum(na, nb)[:, None]
    len_ok = na == nb
    if not numeric:
        return _Outcome(((a == b) | ~valid).all(axis=1) & len_ok)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if is_float and not tol.plain:
            d, bf = distances(af, bf, tol.period, tol.quaternion)
        else:
            d = np.abs(af - bf)
        absb = np.abs(bf)
        if is_float:
            ok = (d <= tol.atol + tol.rtol * absb) | (af == bf)
            if tol.nan_equal:
                ok |= np.isnan(af) & np.isnan(bf)
        else:
            ok = a == b
        row_ok = (ok | ~valid).all(axis=1) & len_ok
        fin = valid & np.isfinite(d)
        if not fin.any():
            return _Outcome(row_ok)
        dm = np.where(fin, d, -1.0)
        flat = int(np.argmax(dm))
        max_abs = float(dm.reshape(-1)[flat])
        nz = fin & (absb > 0)
        rel = float(np.max(d[nz] / absb[nz])) if nz.any() else 0.0
        if (fin & (absb == 0) & (d > 0)).any():
            rel = math.inf
    return _Outcome(row_ok, max_abs, rel, flat % width if width else 0)


# ============================================================================================
# The comparison
# ============================================================================================


@dataclass
class Aligned:
    """One element of one series on the comparison grid, for plots: ``a``/``b`` are NaN where
    a side holds no value; ``band`` the tolerance ``atol + rtol·|b|`` at each frame."""

    frames: np.ndarray
    times: np.ndarray
    a: np.ndarray
    b: np.ndarray
    band: np.ndarray
    component: int


class Comparison:
    """Compares two open recordings; :meth:`run` gives the :class:`DiffResult`.

    Kept as an object (rather than one function) so that reports needing the data again —
    plots — can ask for aligned series (:meth:`aligned`) without a second matching pass.
    """

    def __init__(self, a: Recording, b: Recording, options: DiffOptions | None = None,
                 name_a: str | None = None, name_b: str | None = None, *, bulk: bool = True) -> None:
        self.a, self.b = a, b
        #: Compare the series of all object pairs at once (:mod:`pvdkit.diff.bulk`); False: one
        #: object pair at a time (the reference the bulk path is tested against).
        self.bulk = bulk
        self.options = options or DiffOptions()
        if self.options.align not in ("index", "time"):
            raise PvdError(f"align must be 'index' or 'time', got {self.options.align!r}")
        self.name_a = name_a or a.source_name
        self.name_b = name_b or b.source_name
        self.window: FrameWindow = self.options.frames
        self._list_codes: dict[tuple, int] = {}
        self._kinds: dict[tuple[int, int], tuple[str, str]] = {}
        self._list_values: list[tuple] = []
        self.fmap_b = self._frame_map()
        # First comparison frame each side lacks (values end there).
        self.end_a = len(a.frames)
        nb = len(b.frames)
        self.end_b = nb if self.fmap_b is None else (int(self.fmap_b[-1]) + 1 if nb else 0)
        self.resolver_a, self.resolver_b = HandleResolver(a), HandleResolver(b)
        ids_a, ids_b = object_identities(a, self.resolver_a), object_identities(b, self.resolver_b)
        #: With ``options.vehicle``: per object of A / B, whether it is the compared vehicle's.
        self.in_scope_a: np.ndarray | None = None
        self.in_scope_b: np.ndarray | None = None
        self.vehicle_a = self.vehicle_b = ""
        scope = self.options.vehicle
        if scope is not None:
            self.vehicle_a, self.in_scope_a, ids_a = _vehicle_scope(a, ids_a, scope.a, "A")
            self.vehicle_b, self.in_scope_b, ids_b = _vehicle_scope(b, ids_b, scope.b, "B")
        self.matching: Matching = match_objects(ids_a, ids_b)

    # ------------------------------------------------------------------ frames

    def _frame_map(self) -> np.ndarray | None:
        """B frame → comparison frame (None = by index)."""
        if self.options.align == "index":
            return None
        sa, sb = self.a.frames.start.astype(np.uint64), self.b.frames.start.astype(np.uint64)
        if len(sa) > 1 and (np.diff(sa.astype(np.float64)) < 0).any():
            raise PvdError(f"{self.name_a}: frame timestamps decrease, so frames cannot be aligned by time "
                           "(use --align index)")
        return np.searchsorted(sa, sb, side="left").astype(np.int64)

    def _map_b(self, frames: np.ndarray) -> np.ndarray:
        f = frames.astype(np.int64)
        if self.fmap_b is None or not len(f):
            return f
        ok = f >= 0
        out = f.copy()
        out[ok] = self.fmap_b[np.minimum(f[ok], len(self.fmap_b) - 1)]
        return out

    def frame_time(self, frame: int | None) -> int | None:
        """Start timestamp of a comparison frame (A's, else B's by index), None for set-up."""
        if frame is None or frame < 0:
            return None
        if frame < len(self.a.frames):
            return int(self.a.frames.start[frame])
        if self.fmap_b is None and frame < len(self.b.frames):
            return int(self.b.frames.start[frame])
        return None

    # ------------------------------------------------------------------ run

    def run(self) -> DiffResult:
        t0 = time.perf_counter()
        res = DiffResult(self.name_a, self.name_b, self.options, frames_a=len(self.a.frames),
                         frames_b=len(self.b.frames), vehicle_a=self.vehicle_a, vehicle_b=self.vehicle_b)
        if self.end_a != self.end_b:
            res.ended_at = min(self.end_a, self.end_b)
            res.ended_side = "A" if self.end_a < self.end_b else "B"
        for side, rec, name in (("A", self.a, self.name_a), ("B", self.b, self.name_b)):
            if rec.error:
                res.notes.append(Note("damaged", f"{side} ({name}) is damaged, data after the damage is "
                                                 f"missing: {rec.error}"))
        if self.options.schema and self.options.tolerances.schema:
            res.schema = compare_schema(self.a, self.b)
        self._frames(res)
        self._objects(res)
        self._few_matched(res)
        self._unused_rules(res)
        self._messages(res)
        self._first_seconds(res)
        self._paths(res)
        res.seconds = time.perf_counter() - t0
        return res

    @staticmethod
    def _few_matched(res: DiffResult) -> None:
        """Say so when most objects have no counterpart. Why: the object lists then tell how the
        two producers differ, not what changed — the usual cause is two object layouts (a
        simcore run with the PhysX actor layer against a pure Vehicle2 golden), not a change."""
        only_a, only_b = len(res.objects_only_a), len(res.objects_only_b)
        if only_a + only_b > max(res.objects_matched, 10):
            res.notes.append(Note(
                "few_matched", f"only {res.objects_matched} objects have a counterpart, {only_a} of A's and "
                f"{only_b} of B's have none: are A and B recordings of the same scene, vehicles and object "
                "layout? (pvdkit record with and without --pure-vehicle2 records different object graphs)",
                difference=False))

    def _unused_rules(self, res: DiffResult) -> None:
        """A note per config rule that matches no attribute of A or B (and per ``ignore_unmatched``
        glob that matches no class). Why: a typo in a rule meant to tighten a tolerance
        (``RigidBodyState.pose.p`` for ``pos``) would otherwise leave CI as loose as before, silently."""
        tol = self.options.tolerances
        if not (tol.rules or tol.ignore_unmatched):
            return
        import difflib

        classes = {c.name: c for rec in (self.a, self.b) for c in rec.classes.values()}
        attributes = [f"{name}.{path}" for name, c in classes.items() for path in (*c.paths, "<lifetime>")]
        attributes += ["<frame>.start", "<frame>.stop", f"{_RECORDING}.<messages>"]
        for pattern in tol.unmatched_patterns(attributes):
            close = difflib.get_close_matches(pattern, attributes, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else " (rules match Class.attribute)"
            res.notes.append(Note("unused_rule", f"{tol.source or 'tolerances'}: rule {pattern!r} matches no "
                                                 f"attribute of A or B{hint}", difference=False))
        for glob in tol.unmatched_class_globs(list(classes)):
            close = difflib.get_close_matches(glob, list(classes), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            res.notes.append(Note("unused_rule", f"{tol.source or 'tolerances'}: ignore_unmatched {glob!r} "
                                                 f"matches no class of A or B{hint}", difference=False))

    def _paths(self, res: DiffResult) -> None:
        """The path people know each reported object by (:mod:`pvdkit.names`:
        ``/World/Standard/wheel 1/TireForce`` where the identity label reads
        ``Vehicle#2/wheelAttachmentSet[1]/tireForce``), A's, else B's: for the differing series
        and the objects without counterpart, the rows the reports list."""
        rows = [sd for sd in res.series if sd.status != EQUAL and (sd.index_a >= 0 or sd.index_b >= 0)]
        if not rows and not res.objects_only_a and not res.objects_only_b:
            return
        from pvdkit.names import names_of

        names: dict[str, Any] = {}

        def path(side: str, index: int) -> str:
            if side not in names:
                names[side] = names_of(self.a if side == "a" else self.b)
            rec = self.a if side == "a" else self.b
            return names[side].path(rec.objects[index])

        for sd in rows:
            sd.path = path("a", sd.index_a) if sd.index_a >= 0 else path("b", sd.index_b)
        for change in (*res.objects_only_a, *res.objects_only_b):
            if change.index >= 0:
                change.path = path(change.side, change.index)

    def _first_seconds(self, res: DiffResult) -> None:
        """Simulated seconds of each first divergence: A's time base, else B's where frames are
        matched by index (a frame only B has); None where neither recording says."""
        diverging = [sd for sd in res.series if sd.first_frame is not None and sd.first_frame >= 0]
        if not diverging:
            return
        sides = (self.a, self.b) if self.fmap_b is None else (self.a,)
        bases = [(len(rec.frames), rec.time_base) for rec in sides if rec.time_base.known]
        for sd in diverging:
            for n, tb in bases:
                if sd.first_frame < n:
                    sd.first_seconds = float(tb.seconds_of(sd.first_frame))
                    break

    def _frames(self, res: DiffResult) -> None:
        na, nb = len(self.a.frames), len(self.b.frames)
        w = self.window
        lo, hi = w.start or 0, w.stop
        in_a = max(0, min(na, hi if hi is not None else na) - lo)
        in_b = max(0, min(nb, hi if hi is not None else nb) - lo)
        if self.fmap_b is None:
            if in_a != in_b:
                whole = w.start in (None, 0) and w.stop is None
                res.notes.append(Note("frame_count", f"A has {na} frames, B has {nb}" if whole else
                                      f"A has {in_a} frames in window {w}, B has {in_b} "
                                      f"(A {na} frames in all, B {nb})"))
        else:
            sa, sb = self.a.frames.start, self.b.frames.start
            def in_window(f: np.ndarray) -> np.ndarray:
                return (f >= lo) & (f < (hi if hi is not None else np.iinfo(np.int64).max))

            in_w_a = in_window(np.arange(na))
            in_w_b = in_window(self.fmap_b)
            only_a = int(np.count_nonzero(~np.isin(sa, sb) & in_w_a))
            only_b = int(np.count_nonzero(~np.isin(sb, sa) & in_w_b))
            if only_a or only_b:
                res.notes.append(Note("frame_times", f"{only_a} frame timestamps only in A, {only_b} only "
                                                     f"in B in window {w} (frames aligned by time)"))
        fa_, fb_ = self.a.frames, self.b.frames
        for attr in ("start", "stop"):
            tol = self.options.tolerances.for_attribute(("<frame>",), attr)
            if tol.ignore:
                res.ignored += 1
                continue
            ma = np.arange(na) if attr == "start" else np.flatnonzero(fa_.stopped)
            mb = np.arange(nb) if attr == "start" else np.flatnonzero(fb_.stopped)
            va, vb = getattr(fa_, attr)[ma], getattr(fb_, attr)[mb]
            pa = _Prepared("int", "UINT64x1", ma.astype(np.int64), va[:, None], None, None)
            pb = _Prepared("int", "UINT64x1", self._map_b(mb), vb[:, None], None, None)
            sd = self._compare_prepared(pa, pb, "<frame>", "<frame>", attr, tol)
            if sd is not None:
                res.series.append(sd)

    def _objects(self, res: DiffResult) -> None:
        m = self.matching
        for side, only, rec, ids, out, scope in (
                ("a", m.only_a, self.a, m.ids_a, res.objects_only_a, self.in_scope_a),
                ("b", m.only_b, self.b, m.ids_b, res.objects_only_b, self.in_scope_b)):
            for i in only if scope is None else [i for i in only if scope[i]]:
                o = rec.objects[i]
                created, destroyed = self._life(o, side)
                if self._alive_in_window(created, destroyed):
                    idt = ids[i]
                    if self.options.tolerances.unmatched_ignored(idt.classes):
                        res.unmatched_ignored += 1
                        continue
                    out.append(ObjectChange(side, idt.label, idt.cls, o.name, created, destroyed, index=i))
        live: list[tuple[int, int]] = []
        lifetimes: list[SeriesDiff | None] = []
        objs_a, objs_b = self.a.objects, self.b.objects
        whole = self.window.start is None and self.window.stop is None  # every object is in it
        tol_of = self.options.tolerances.for_attribute
        pairs = m.pairs if self.in_scope_a is None else [(i, j) for i, j in m.pairs if self.in_scope_a[i]]
        for i, j in pairs:
            oa, ob = objs_a[i], objs_b[j]
            la = (oa.created, oa.destroyed)
            lb = self._life(ob, "b") if self.fmap_b is not None else (ob.created, ob.destroyed)
            if not (whole or self._alive_in_window(*la) or self._alive_in_window(*lb)):
                continue
            res.objects_matched += 1
            idt = m.ids_a[i]
            tol = tol_of(idt.classes, "<lifetime>")
            if tol.ignore:
                res.ignored += 1
                lifetimes.append(None)
            elif whole and la == lb:  # equal, as _lifetime finds (nothing to clip)
                lifetimes.append(SeriesDiff(idt.label, idt.cls, "<lifetime>", "lifetime", EQUAL, tol,
                                            compared=1, index_a=i, index_b=j))
            else:
                life = self._lifetime(idt.label, idt.cls, la, lb, tol)
                if life is not None:
                    life.index_a, life.index_b = i, j
                lifetimes.append(life)
            live.append((i, j))
        if self.bulk:
            from pvdkit.diff.bulk import compare_pairs

            per_pair, ignored = compare_pairs(self, live)
        else:
            per_pair = [[] for _ in live]
            ignored = sum(self._object_series(out, i, j) for out, (i, j) in zip(per_pair, live, strict=True))
        res.ignored += ignored
        for life, series in zip(lifetimes, per_pair, strict=True):
            if life is not None:
                res.series.append(life)
            res.series.extend(series)

    def _life(self, o, side: str) -> tuple[int, int | None]:
        c, d = o.created, o.destroyed
        if side == "b" and self.fmap_b is not None:
            c = int(self._map_b(np.array([c]))[0])
            d = None if d is None else int(self._map_b(np.array([d]))[0])
        return c, d

    def _alive_in_window(self, created: int, destroyed: int | None) -> bool:
        w = self.window
        return ((w.stop is None or created < w.stop)
                and (w.start is None or destroyed is None or destroyed >= w.start))

    def _lifetime(self, label: str, cls: str, la: tuple[int, int | None], lb: tuple[int, int | None],
                  tol: Tolerance) -> SeriesDiff:
        w = self.window

        def clip(life: tuple[int, int | None]) -> tuple[int, int | None]:
            c, d = life
            if w.start is not None:
                c = max(c, w.start)
            if w.stop is not None and (d is None or d >= w.stop):
                d = None
            return c, d

        ca, cb = clip(la), clip(lb)
        sd = SeriesDiff(label, cls, "<lifetime>", "lifetime", EQUAL, tol, compared=1)
        if ca != cb:
            first = min(ca[0], cb[0]) if ca[0] != cb[0] else min(x for x in (ca[1], cb[1]) if x is not None)
            sd.status, sd.differing, sd.first_frame = DIFFERENT, 1, first
            sd.first_time = self.frame_time(first)
            sd.a_value, sd.b_value = _life_text(la), _life_text(lb)
        return sd

    def _messages(self, res: DiffResult) -> None:
        tol = self.options.tolerances.for_attribute((_RECORDING,), "<messages>")
        if tol.ignore:
            res.ignored += 1
            return

        def rows(rec: Recording, side: str) -> list[tuple]:
            out = []
            for msg in rec.messages:
                f = msg.frame if side == "a" else int(self._map_b(np.array([msg.frame]))[0])
                if self.window.contains(f) or (self.window.start is None and f < 0):
                    cls = rec.classes_by_handle.get(msg.class_handle)
                    out.append((f, msg.type, msg.message, msg.file, msg.line, cls.name if cls else None))
            return out

        ra, rb = rows(self.a, "a"), rows(self.b, "b")
        if not ra and not rb:
            return
        sd = SeriesDiff(_RECORDING, _RECORDING, "<messages>", "message", EQUAL, tol,
                        compared=max(len(ra), len(rb)))
        for k in range(max(len(ra), len(rb))):
            x = ra[k] if k < len(ra) else None
            y = rb[k] if k < len(rb) else None
            if x != y:
                first = min(v[0] for v in (x, y) if v is not None)
                sd.status, sd.first_frame, sd.first_time = DIFFERENT, first, self.frame_time(first)
                sd.differing = (sum(1 for p, q in zip(ra[k:], rb[k:], strict=False) if p != q)
                                + abs(len(ra) - len(rb)))
                sd.a_value = _msg_text(x)
                sd.b_value = _msg_text(y)
                break
        res.series.append(sd)

    # ------------------------------------------------------------------ series of one object pair

    def tolerance_of(self, classes: tuple[str, ...], name: str) -> Tolerance:
        """The tolerance of attribute ``name`` of objects of ``classes`` (class, then bases): a
        PxTransform (7 floats, :func:`pvdkit.names.is_pose`, as ``series`` and the viewer read
        it) compares its rotation up to sign, whatever it is called."""
        from pvdkit.names import is_pose

        pose = False
        for rec in (self.a, self.b):
            cls = rec.classes.get(classes[0]) if classes else None
            chain = cls.paths.get(name) if cls is not None else None
            if chain:
                pose = is_pose(chain[-1])
                break
        return self.options.tolerances.for_attribute(classes, name, pose=pose)

    def _object_series(self, out: list[SeriesDiff], i: int, j: int) -> int:
        """Compare every series of the object pair (i, j) one by one into ``out``; returns how
        many were ignored. (:mod:`pvdkit.diff.bulk` does the same for all pairs at once.)"""
        oa, ob = self.a.objects[i], self.b.objects[j]
        idt = self.matching.ids_a[i]
        sa = {(s.name, s.family): s for s in self.a.all_series(oa)}
        sb = {(s.name, s.family): s for s in self.b.all_series(ob)}
        ignored = 0
        for key in list(sa) + [k for k in sb if k not in sa]:
            name = key[0]
            tol = self.tolerance_of(idt.classes, name)
            if tol.ignore:
                ignored += 1
                continue
            sd = self._series_pair(sa.get(key), sb.get(key), idt.label, idt.cls, name, tol)
            if sd is not None:
                sd.index_a, sd.index_b = i, j
                out.append(sd)
        return ignored

    def _series_pair(self, x: Series | ListSeries | None, y: Series | ListSeries | None, label: str,
                     cls: str, name: str, tol: Tolerance) -> SeriesDiff | None:
        """The comparison of one attribute of one object pair (None: nothing in the window)."""
        if x is not None and y is not None:
            sd = self._identical(x, y, label, cls, name, tol)
            if sd is not None:
                return sd if sd.compared else None
        pa = self._prepare(x, "a") if x is not None else None
        pb = self._prepare(y, "b") if y is not None else None
        return self._compare_prepared(pa, pb, label, cls, name, tol)

    def _identical(self, x: Series | ListSeries, y: Series | ListSeries, label: str, cls: str, name: str,
                   tol: Tolerance) -> SeriesDiff | None:
        """Fast path for the common CI case: byte-identical samples at the same frames are
        equal without aligning (not for references and lists, whose meaning depends on the
        object graph, nor for floats holding NaN unless ``nan_equal``). None = not decided."""
        if self.fmap_b is not None or not isinstance(x, Series) or not isinstance(y, Series):
            return None
        kind, sig = self._kind(x)
        if kind in ("reference", "list") or self._kind(y) != (kind, sig):
            return None
        fx, fy = x.samples.fixed, y.samples.fixed
        if (fx is None or fy is None or fx.shape != fy.shape or x.frames.shape != y.frames.shape
                or not (x.frames == y.frames).all() or not (fx == fy).all()):
            return None
        if kind == "float" and not tol.nan_equal:
            raw = x.raw
            if not isinstance(raw, np.ndarray) or raw.dtype.kind != "f" or np.isnan(raw).any():
                return None
        fr = x.frames
        if self.window.start is None and self.window.stop is None:
            n = int(np.count_nonzero(fr[1:] != fr[:-1])) + 1 if len(fr) else 0
        else:
            n = len(_zoh(fr.astype(np.int64), self.window.start, self.window.stop)[0])
        numeric = kind in ("float", "int")
        return SeriesDiff(label, cls, name, kind, EQUAL, tol, compared=n,
                          max_abs=0.0 if numeric and n else None, max_rel=0.0 if numeric and n else None)

    def _kind(self, s: Series | ListSeries) -> tuple[str, str]:
        key = (id(s.attribute), s.family)
        hit = self._kinds.get(key)
        if hit is None:
            hit = self._kinds[key] = _kind_of(s.attribute, s.family)
        return hit

    def _prepare(self, s: Series | ListSeries, side: str) -> _Prepared:
        kind, sig = self._kind(s)
        frames = s.frames.astype(np.int64) if side == "a" else self._map_b(s.frames)
        if kind == "list":
            assert isinstance(s, ListSeries)
            return _Prepared(kind, sig, frames, self._list_snapshots(s, side), None, s)
        assert isinstance(s, Series)
        if kind == "string":
            return _Prepared(kind, sig, frames, np.array(s.values, dtype=object).reshape(-1, 1), None, s)
        if kind == "bytes":
            v, ln = _bytes_matrix(s.samples)
            return _Prepared(kind, sig, frames, v, ln, s)
        v, ln = _matrix(s.raw, s.samples)
        if kind == "reference":
            if v.dtype != np.uint64:
                v, ln = _bytes_matrix(s.samples)
                return _Prepared("bytes", sig, frames, v, ln, s)
            resolver = self.resolver_a if side == "a" else self.resolver_b
            objs = resolver.resolve(v, s.frames.astype(np.int64)[:, None])
            v = self.matching.reference_codes(side, objs)
        elif kind == "float" and v.dtype.kind != "f":
            kind = "bytes"
        return _Prepared(kind, sig, frames, v, ln, s)

    def _list_snapshots(self, s: ListSeries, side: str) -> np.ndarray:
        """Per change, the code of the list's members after it (``(n, 1)`` int64)."""
        n = len(s)
        items = s.items
        if isinstance(items, np.ndarray) and items.dtype == np.uint64 and items.ndim == 1:
            resolver = self.resolver_a if side == "a" else self.resolver_b
            keys = self.matching.reference_codes(side, resolver.resolve(items, s.frames)).tolist()
            keys = [("ref", k) for k in keys]
        elif isinstance(items, np.ndarray):
            keys = [("v", r.tobytes()) for r in items.reshape(n, items.size // n)] if n else []
        else:
            keys = [("v", it if isinstance(it, str) else bytes(np.asarray(it).view(np.uint8)))
                    for it in items]
        state: dict[Any, None] = {}
        codes = np.empty(n, np.int64)
        added = s.added.tolist()
        for k in range(n):
            key = keys[k]
            state.pop(key, None)
            if added[k]:
                state[key] = None
            snap = tuple(state)
            c = self._list_codes.get(snap)
            if c is None:
                c = self._list_codes[snap] = len(self._list_values)
                self._list_values.append(snap)
            codes[k] = c
        return codes[:, None]

    def _compare_prepared(self, pa: _Prepared | None, pb: _Prepared | None, label: str, cls: str,
                          name: str, tol: Tolerance) -> SeriesDiff | None:
        w = self.window
        lo, hi = w.start, w.stop
        if pa is None or pb is None:
            p = pa if pa is not None else pb
            assert p is not None
            fr, _ = _zoh(p.frames, lo, hi)
            if not len(fr):
                return None
            first = int(fr[0])
            sd = SeriesDiff(label, cls, name, p.kind, ONLY_IN_A if pa is not None else ONLY_IN_B, tol,
                            compared=len(fr), differing=len(fr), first_frame=first,
                            first_time=self.frame_time(first))
            val = self._text(p, int(_zoh(p.frames, lo, hi)[1][0]), "a" if pa is not None else "b")
            sd.a_value, sd.b_value = (val, "unset") if pa is not None else ("unset", val)
            return sd
        grid, xa, xb = _align(pa.frames, pb.frames, lo, hi, self.end_a, self.end_b)
        if not len(grid):
            return None
        kind = pa.kind
        sd = SeriesDiff(label, cls, name, kind, EQUAL, tol, compared=len(grid))
        if pa.signature != pb.signature or pa.kind != pb.kind:
            sd.status = RETYPED
            sd.differing = len(grid)
            sd.first_frame = int(grid[0])
            sd.first_time = self.frame_time(sd.first_frame)
            sd.a_value, sd.b_value = pa.signature, pb.signature
            if pa.kind != pb.kind:
                sd.kind = f"{pa.kind}/{pb.kind}"
            return sd
        both = (xa >= 0) & (xb >= 0)
        row_ok = np.zeros(len(grid), bool)
        sel = np.flatnonzero(both)
        if len(sel):
            if kind == "string":
                out = _Outcome((pa.values[xa[sel], 0] == pb.values[xb[sel], 0]).astype(bool))
            else:
                out = _compare_matrix(pa.values, pa.lengths, pb.values, pb.lengths, xa[sel], xb[sel], tol,
                                      is_float=kind == "float", numeric=kind in ("float", "int"))
            row_ok[sel] = out.row_ok
            sd.max_abs, sd.max_rel, sd.component = out.max_abs, out.max_rel, out.component
        bad = np.flatnonzero(~row_ok)
        if len(bad):
            k = int(bad[0])
            sd.status = DIFFERENT
            sd.differing = len(bad)
            sd.first_frame = int(grid[k])
            sd.first_time = self.frame_time(sd.first_frame)
            f = int(grid[k])
            sd.a_value = "none (A ended)" if f >= self.end_a else self._text(pa, int(xa[k]), "a")
            sd.b_value = "none (B ended)" if f >= self.end_b else self._text(pb, int(xb[k]), "b")
        return sd

    # ------------------------------------------------------------------ value text

    def _text(self, p: _Prepared, i: int, side: str) -> str:
        if i < 0:
            return "unset"
        if p.kind == "list":
            members = self._list_values[int(p.values[i, 0])]
            return "[" + ", ".join(self._member_text(m) for m in members) + "]"
        if p.kind == "string":
            return repr(p.values[i, 0])
        if p.kind == "reference":
            n = p.lengths[i] if p.lengths is not None else p.values.shape[1]
            labels = [self.matching.label_of_code(int(c)) for c in p.values[i, :n]]
            return labels[0] if len(labels) == 1 else "[" + ", ".join(labels) + "]"
        if p.kind in ("enum", "flags") and p.series is not None:
            v = p.series.values[i]
            if isinstance(v, frozenset):
                return "{" + ", ".join(sorted(v)) + "}" if v else "{}"
            return str(v)
        n = p.lengths[i] if p.lengths is not None else p.values.shape[1]
        row = p.values[i, :n]
        if p.kind == "bytes":
            return "0x" + row.tobytes().hex() if len(row) else "b''"
        vals = [str(v) for v in row]  # numpy scalars print their shortest round-trip form
        return vals[0] if len(vals) == 1 and p.lengths is None else "[" + ", ".join(vals) + "]"

    def _member_text(self, m: tuple) -> str:
        tag, v = m
        if tag == "ref":
            return self.matching.label_of_code(v)
        return repr(v) if isinstance(v, str) else "0x" + v.hex()

    # ------------------------------------------------------------------ plots

    def aligned(self, sd: SeriesDiff) -> Aligned | None:
        """The numeric series ``sd`` (float or int kind) of both sides on the comparison grid,
        element ``sd.component``; None for other kinds or pseudo attributes."""
        if sd.kind not in ("float", "int") or (sd.index_a < 0 and sd.index_b < 0):
            return None
        pa = pb = None
        if sd.index_a >= 0 and sd.status != ONLY_IN_B:
            s = self._series_named(self.a, sd.index_a, sd.attribute)
            pa = self._prepare(s, "a") if s is not None else None
        if sd.index_b >= 0 and sd.status != ONLY_IN_A:
            s = self._series_named(self.b, sd.index_b, sd.attribute)
            pb = self._prepare(s, "b") if s is not None else None
        empty = _Prepared(sd.kind, "", np.zeros(0, np.int64), np.zeros((0, 1)), None, None)
        pa, pb = pa or empty, pb or empty
        grid, xa, xb = _align(pa.frames, pb.frames, self.window.start, self.window.stop, self.end_a,
                              self.end_b)

        def column(p: _Prepared, x: np.ndarray) -> np.ndarray:
            out = np.full(len(x), np.nan)
            ok = x >= 0
            if ok.any() and p.values.shape[1] > sd.component:
                vals = p.values[x[ok], sd.component].astype(np.float64)
                if p.lengths is not None:
                    vals[p.lengths[x[ok]] <= sd.component] = np.nan
                out[ok] = vals
            return out

        a, b = column(pa, xa), column(pb, xb)
        tol = sd.tolerance
        if sd.kind == "float" and not tol.plain:
            b = self._b_as_compared(pa, xa, pb, xb, a, b, tol, sd.component)
        band = tol.atol + tol.rtol * np.abs(b)
        times = np.array([t if t is not None else np.nan for t in map(self.frame_time, grid.tolist())],
                         np.float64)
        return Aligned(grid, times, a, b, band, sd.component)

    @staticmethod
    def _b_as_compared(pa: _Prepared, xa: np.ndarray, pb: _Prepared, xb: np.ndarray, a: np.ndarray,
                       b: np.ndarray, tol: Tolerance, component: int) -> np.ndarray:
        """B's element ``component`` as it was compared with A's (moved by whole periods, a
        quaternion's sign chosen per frame), so that the plot's A − B is the difference judged."""
        both = np.flatnonzero((xa >= 0) & (xb >= 0))
        width = min(pa.values.shape[1], pb.values.shape[1])
        if not len(both) or component >= width:
            return b
        rows_a = pa.values[xa[both], :width].astype(np.float64)
        rows_b = pb.values[xb[both], :width].astype(np.float64)
        out = b.copy()
        out[both] = as_compared(rows_a, rows_b, tol.period, tol.quaternion)[:, component]
        return out

    @staticmethod
    def _series_named(rec: Recording, index: int, name: str) -> Series | None:
        for s in rec.all_series(rec.objects[index]):
            if s.name == name and isinstance(s, Series):
                return s
        return None


def _vehicle_scope(rec: Recording, ids: list[ObjectIdentity], name: str,
                   side: str) -> tuple[str, np.ndarray, list[ObjectIdentity]]:
    """The vehicle ``name`` of ``rec`` (its whole name), which objects are its
    (:meth:`pvdkit.names.Vehicle.objects`), and identities that pair them with the other
    vehicle's by their path under the vehicle (``wheel 1/TireForce``; the vehicle itself ``""``).
    The other objects keep their identities, apart: they are not compared, but references to
    them (a shared scene, a material) still compare as equal when their identities are."""
    from pvdkit.names import find_vehicle, names_of

    try:
        vehicle = find_vehicle(rec, name)
    except PvdError as exc:
        raise PvdError(f"--vehicle: {side}: {exc}") from None
    paths = names_of(rec)
    in_scope = np.zeros(len(ids), bool)
    scoped = [replace(idt, key=("<other>", idt.key)) for idt in ids]
    for o in vehicle.objects():
        in_scope[o.index] = True
        scoped[o.index] = replace(ids[o.index], key=("<vehicle>", paths.path(o).removeprefix(vehicle.name)))
    return vehicle.name, in_scope, scoped


def _life_text(life: tuple[int, int | None]) -> str:
    c, d = life
    return f"created {c}, destroyed {d if d is not None else 'never'}"


def _msg_text(m: tuple | None) -> str:
    if m is None:
        return "none"
    f, typ, text, file, line, cls = m
    return f"frame {f}: {text!r} ({file}:{line}, type {typ}{', ' + cls if cls else ''})"


# ============================================================================================
# Entry points
# ============================================================================================


def compare(a: Recording, b: Recording, options: DiffOptions | None = None) -> DiffResult:
    """Compare two open recordings (A is the candidate, B the reference)."""
    return Comparison(a, b, options).run()


def open_recording(path: str, side: str) -> tuple[Recording, list[str]]:
    """Open a recording for diffing: :class:`PvdError` naming the side when it cannot be read;
    damage warnings are returned (the damage itself is reported as a difference)."""
    from pvdkit.outputs import require_input

    require_input(path, label=side)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PvdWarning)
        try:
            rec = Recording.open(path)
        except PvdError as exc:
            raise PvdError(f"{side}: {exc}") from None
        except OSError as exc:
            raise PvdError(f"{side}: cannot read {path}: {exc.strerror or exc}") from None
    return rec, [str(w.message) for w in caught if issubclass(w.category, PvdWarning)]


def same_bytes(a: str | os.PathLike, b: str | os.PathLike, block: int = 1 << 20) -> bool:
    """True when ``a`` and ``b`` are the same file or hold the same bytes (False when either
    cannot be read: opening it then says why)."""
    try:
        sa, sb = os.stat(a), os.stat(b)
        if (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino):
            return True
        if sa.st_size != sb.st_size:
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(block), fb.read(block)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def compare_files(a: str, b: str, options: DiffOptions | None = None, *, atol: float | None = None,
                  rtol: float | None = None, nan_equal: bool | None = None, config: str | None = None,
                  frames: str | FrameWindow | None = None, align: str | None = None,
                  vehicle: str | VehicleScope | None = None, plots: str | None = None,
                  max_plots: int = 8) -> DiffResult:
    """Compare recordings ``a`` and ``b`` (``.ovd`` or ``.h5``, any mix) and return the result.

    Either pass ``options`` or the keyword shortcuts (``config`` is a TOML tolerance file;
    ``atol``/``rtol``/``nan_equal`` override its defaults; ``frames`` a window such as
    ``"100:200"``; ``vehicle`` one vehicle compared alone, ``"Standard"`` or ``"NAME_A=NAME_B"``,
    :class:`VehicleScope`). ``plots``: a directory that receives PNG plots of the ``max_plots`` most
    diverging numeric series. Raises :class:`PvdError` when a file cannot be read or the
    inputs are not comparable; ``result.exit_status`` is 0 (equal) or 1 (different).
    """
    from pvdkit.diff.tolerance import ToleranceConfig

    if options is None:
        tc = ToleranceConfig.load(config) if config else ToleranceConfig()
        tc = tc.with_defaults(atol=atol, rtol=rtol, nan_equal=nan_equal)
        window = frames if isinstance(frames, FrameWindow) else FrameWindow.parse(frames)
        scope = VehicleScope.parse(vehicle) if isinstance(vehicle, str) else vehicle
        options = DiffOptions(tc, window, align or "index", vehicle=scope)
    with cyclic_gc_paused():
        return _compare_files(a, b, options, plots, max_plots)


def _compare_files(a: str, b: str, options: DiffOptions, plots: str | None, max_plots: int) -> DiffResult:
    ra, _ = open_recording(str(a), "A")
    try:
        # Byte-identical files (CI comparing a run with its own baseline) are one recording read
        # once and compared with itself: the same report, half the reading and decoding.
        rb = ra if same_bytes(a, b) else open_recording(str(b), "B")[0]
    except PvdError:
        ra.close()
        raise
    try:
        # Every series is read: one bulk read per file (B reuses A's HDF5 chunks stored the same).
        ra.preload()
        if rb is not ra:
            rb.preload(ra)
        cmp = Comparison(ra, rb, options, str(a), str(b))
        res = cmp.run()
        if plots:
            from pvdkit.diff.plot import write_plots

            write_plots(cmp, res, plots, max_plots)
        return res
    finally:
        ra.close()
        if rb is not ra:
            rb.close()
