"""What the property view shows: every attribute of an object at a frame, formatted.

Qt-free so that it can be tested and timed alone. Values follow the query model's zero-order hold
(the last value set at or before the frame); a row knows whether its value was set in this very
frame (the view highlights it) and in which frame the value in force was set. Long arrays are
split into pages so that a 10 000-element attribute costs one row until it is expanded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pvdkit.recording import Attribute, ListSeries, Object, Recording, Series
from pvdkit.types import DataType
from pvdkit.units import unit_of

if TYPE_CHECKING:
    from viewer.model.session import RecordingSession
    from viewer.model.values import ValueNames

#: Arrays with at most this many elements are shown inline; longer ones get pages.
INLINE_ELEMENTS = 6
#: Elements per page of a long array.
PAGE_SIZE = 32


@dataclass(eq=False)
class PropertyRow:
    """One attribute of an object at one frame.

    ``kind``: ``number``, ``vector`` (a few numbers, inline), ``array`` (paged), ``string``,
    ``enum``, ``flags``, ``ref`` (an object handle), ``list`` (a unique list), ``bytes`` or
    ``unset`` (no value yet at this frame). ``refs`` holds (label, object) for references;
    ``elements`` the numbers of a vector or array; ``set_here`` is True when a sample was written
    in this very frame and ``set_frame`` is the frame of the sample in force (None if unset);
    ``unit`` the quantity's unit (:mod:`pvdkit.units`, "" when it has none or is unknown).
    """

    name: str
    kind: str
    text: str
    type_text: str
    set_here: bool = False
    set_frame: int | None = None
    refs: list[tuple[str, Object | None]] = field(default_factory=list)
    elements: np.ndarray | None = None
    plottable: bool = False
    unit: str = ""

    @property
    def n_elements(self) -> int:
        return 0 if self.elements is None else int(np.size(self.elements))


def format_number(v: Any) -> str:
    """Numbers as a debugger shows them: integers exactly, floats with 6 significant digits."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = float(v)
    if f == 0.0:
        return "0"
    return f"{f:.6g}"


def format_vector(values: np.ndarray) -> str:
    return "(" + ", ".join(format_number(x) for x in np.asarray(values).reshape(-1)) + ")"


def type_text(attr: Attribute | None, value: Any = None) -> str:
    """Short type description: ``float32×3``, ``handle``, ``enum PxActorType``, ``list of handles``."""
    if attr is None:
        return "?"
    if attr.kind == "flags":
        cls = attr.enum_class
        what = "flags" if cls is not None and cls.is_flags else "enum"
        return f"{what} {cls.name if cls else '?'}"
    dt = attr.data_type
    if attr.kind == "unique_list":
        if dt == DataType.OBJECT_HANDLE:
            return "list of handles"
        return f"list of {dt.name.lower() if dt else '?'}"
    if dt == DataType.OBJECT_HANDLE:
        return "handle"
    if dt == DataType.STRING:
        return "string"
    base = dt.name.lower() if dt is not None else "?"
    n = attr.count
    if isinstance(value, np.ndarray):
        n = value.size
    return base if n == 1 else f"{base}×{n if n else 'n'}"


def ref_label(rec: Recording, handle: int, frame: int,
              path_of: Callable[[Object], str] | None = None) -> tuple[str, Object | None]:
    """How a handle value reads in the view, and the object it points at (None if unknown/null).

    With ``path_of`` the target reads by its readable path (``/World/Basic/wheel 1/TireForce``:
    a handle like ``0x5572…`` says nothing to a person); else by its name and handle."""
    if handle == 0:
        return "null", None
    target = rec.resolve(handle, frame)
    if target is None:
        return f"0x{handle:x} (not in recording)", None
    if path_of is not None:
        return path_of(target), target
    cname = target.cls.name if target.cls else "?"
    return f"{target.name or cname} · 0x{handle:x}", target


def pages(n: int, size: int = PAGE_SIZE) -> list[tuple[int, int]]:
    """(start, stop) of each page of an ``n``-element array."""
    return [(a, min(a + size, n)) for a in range(0, n, size)]


def element_texts(elements: np.ndarray, start: int, stop: int) -> list[tuple[str, str]]:
    """(``"[i]"``, value text) for the elements of one page."""
    flat = np.asarray(elements).reshape(-1)
    return [(f"[{i}]", format_number(flat[i])) for i in range(start, min(stop, len(flat)))]


class PropertyModel:
    """Rows of the property view; keeps each object's series so a frame change is only lookups."""

    def __init__(self, recording: Recording, session: RecordingSession | None = None) -> None:
        self.recording = recording
        #: With a session, handles read as readable paths and gears / enums by name.
        self.session = session
        self._series: dict[int, list[tuple[str, Series | ListSeries]]] = {}
        self._names: dict[tuple[int, str], ValueNames | None] = {}
        #: Set for a live recording: an object's series, fetched when the recording had N
        #: frames, are complete below frame N - 1 (the last may still be arriving) and are
        #: fetched again for a later frame; earlier frames, scrubbed back to, reuse them.
        self.growing = False
        self._complete_below: dict[int, int] = {}

    def _path(self, obj: Object) -> str:
        assert self.session is not None
        return self.session.path_of(obj)

    def value_names(self, obj: Object, name: str) -> ValueNames | None:
        """Names of the values of attribute ``name`` of ``obj`` (gears, enums; None: numbers)."""
        if self.session is None:
            return None
        key = (obj.index, name)
        if key not in self._names:
            from viewer.model.values import value_names

            self._names[key] = value_names(self.session, obj, name)
        return self._names[key]

    def series_of(self, obj: Object) -> list[tuple[str, Series | ListSeries]]:
        """(name, series) of every attribute: the class's attribute paths in registration order
        (inherited first), then any other series the object has."""
        got = self._series.get(obj.index)
        if got is None:
            self._complete_below[obj.index] = len(self.recording.frames) - 1 if self.growing else 1 << 62
            rec = self.recording
            got = []
            names: set[str] = set()
            if obj.cls is not None:
                for name in obj.cls.paths:
                    got.append((name, rec.series(obj, name)))
                    names.add(name)
            for s in rec.all_series(obj):
                if s.name not in names:
                    got.append((s.name, s))
                    names.add(s.name)
            if len(self._series) > 256:
                self._series.pop(next(iter(self._series)))
            self._series[obj.index] = got
        return got

    def rows(self, obj: Object, frame: int) -> list[PropertyRow]:
        """Every attribute of ``obj`` at ``frame``."""
        if frame >= self._complete_below.get(obj.index, 1 << 62):
            self._series.pop(obj.index, None)
        return [self.row(name, s, frame, obj) for name, s in self.series_of(obj)]

    def row(self, name: str, s: Series | ListSeries, frame: int, obj: Object | None = None) -> PropertyRow:
        row = self._row(name, s, frame, obj)
        if obj is not None and obj.cls is not None:
            row.unit = unit_of(obj.cls, name) or ""
        if obj is not None and row.kind == "number":
            names = self.value_names(obj, name)
            text = names.text(float(row.text)) if names is not None else None
            if text is not None:
                row.text = text
        return row

    def _row(self, name: str, s: Series | ListSeries, frame: int, obj: Object | None) -> PropertyRow:
        rec = self.recording
        path_of = self._path if self.session is not None else None
        attr = s.attribute
        i = int(np.searchsorted(s.frames, frame, side="right")) - 1
        if i < 0:
            return PropertyRow(name, "unset", "—", type_text(attr))
        set_frame = int(s.frames[i])
        here = set_frame == frame
        if isinstance(s, ListSeries):
            members = s.members_at(frame)
            # A list changed in this frame if any add/remove happened in it.
            if attr is not None and attr.data_type == DataType.OBJECT_HANDLE:
                refs = [ref_label(rec, int(h), frame, path_of) for h in members]
                return PropertyRow(name, "list", f"{len(members)} item{'s' if len(members) != 1 else ''}",
                                   type_text(attr), here, set_frame, refs=refs)
            text = ", ".join(str(m) for m in members[:16]) + (" …" if len(members) > 16 else "")
            return PropertyRow(name, "list", f"[{len(members)}] {text}", type_text(attr), here, set_frame)
        value = s.values[i]
        if isinstance(value, np.generic):
            value = value.item()
        tt = type_text(attr, value if isinstance(value, np.ndarray) else np.zeros(1))
        if attr is not None and attr.kind == "flags":
            if isinstance(value, frozenset):
                text = " | ".join(sorted(value)) if value else "(none)"
                return PropertyRow(name, "flags", text, tt, here, set_frame)
            return PropertyRow(name, "enum", str(value), tt, here, set_frame)
        if attr is not None and attr.data_type == DataType.OBJECT_HANDLE:
            handles = np.asarray(value, np.uint64).reshape(-1)
            refs = [ref_label(rec, int(h), frame, path_of) for h in handles]
            text = refs[0][0] if len(refs) == 1 else f"{len(refs)} handles"
            return PropertyRow(name, "ref", text, tt, here, set_frame, refs=refs)
        if isinstance(value, str):
            return PropertyRow(name, "string", repr(value) if value else "''", tt, here, set_frame)
        if isinstance(value, np.ndarray):
            if value.dtype == np.uint8 and (attr is None or attr.data_type is None):
                return PropertyRow(name, "bytes", value.tobytes().hex(" "), tt, here, set_frame)
            n = value.size
            if n <= INLINE_ELEMENTS:
                return PropertyRow(name, "vector", format_vector(value), tt, here, set_frame,
                                   elements=value, plottable=value.dtype.kind in "iuf")
            head = ", ".join(format_number(x) for x in value.reshape(-1)[:4])
            return PropertyRow(name, "array", f"[{n}] {head}, …", tt, here, set_frame, elements=value,
                               plottable=value.dtype.kind in "iuf")
        if isinstance(value, (int, float, np.integer, np.floating)):
            return PropertyRow(name, "number", format_number(value), tt, here, set_frame, plottable=True)
        return PropertyRow(name, "bytes", repr(value), tt, here, set_frame)


def rows_by_name(rows: Sequence[PropertyRow]) -> dict[str, PropertyRow]:
    return {r.name: r for r in rows}
