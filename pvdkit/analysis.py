"""Tidy tables of a recording for analysis: ``dataframe`` (pandas) and ``table`` (numpy only).

Why: the query model answers "the series of attribute X of object O", but an analysis wants
"X of every wheel of every vehicle, with time in seconds and names a person can read" — one
row per sample, in long ("tidy") form that pandas groups, pivots and plots directly. Writing
that by hand meant knowing that a vehicle is found through ``wheelAttachmentSet``, that PhysX
names four objects ``TireForce2``, and how frames map to seconds; :mod:`pvdkit.names` and
:attr:`Recording.time_base <pvdkit.recording.Recording.time_base>` know, so this module builds
on them and adds only the table shape.

Columns: ``time`` (simulated seconds, :meth:`Recording.seconds`; NaN when the recording does
not say), ``frame``, ``vehicle`` (its name, None outside every vehicle), ``wheel`` (the wheel's
position in its vehicle's wheel list; ``<NA>`` in pandas and :data:`NO_WHEEL` in numpy for
vehicle-level objects), ``object`` (the readable path ``pvdkit series`` prints), then the values:
one column per element, named as ``pvdkit series`` names them (``correctedRotationSpeed``,
``lngForce[0]`` … ``lngForce[2]``, ``lngForce[z]`` or ``|lngForce|`` for a selected element).

Rows: **one attribute** gives one row per recorded sample, exactly the rows of ``pvdkit series``
(so in PhysX's two-frames-per-step layout, where Vehicle2 writes its states in the first frame
of each step, a wheel state has one row per step, at the even frames, and ``time`` is that
step's end). **Several attributes** are merged on ``(frame, object)`` when they belong to one
class, else on ``(frame, vehicle, wheel)``: a row per frame in which any of them was set, each
holding the last sample of that frame (NaN / None where the attribute was not set in that
frame, or with ``hold=True`` the value in force, zero-order hold as :meth:`Series.at`). A
vehicle-level attribute (``EngineState.rotationSpeed``) merged with a per-wheel one is repeated
on each wheel's rows of its vehicle, and an object outside every vehicle (``PxScene``) on every
row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pvdkit.lazy import import_module
from pvdkit.names import (
    NORM,
    AttributeSpec,
    ObjectNames,
    Vehicle,
    Wheel,
    check_element,
    element_title,
    find_vehicle,
    names_of,
    resolve_spec,
    vehicles,
)
from pvdkit.recording import Class, Object, Series
from pvdkit.recording import Recording as QueryRecording
from pvdkit.types import PvdError

if TYPE_CHECKING:
    import pandas

__all__ = ["KEY_COLUMNS", "NO_WHEEL", "Recording", "Vehicle", "Wheel", "dataframe", "table", "vehicles"]

#: The columns before the values, in order.
KEY_COLUMNS = ("time", "frame", "vehicle", "wheel", "object")
#: ``wheel`` of a vehicle-level object in :func:`table` (pandas shows ``<NA>``).
NO_WHEEL = -1

ObjectSelector = str | int | Object | Wheel | Vehicle
VehicleSelector = str | Vehicle


@dataclass
class _Part:
    """One object's samples of one attribute: frames and one array per element."""

    obj: Object
    frames: np.ndarray
    columns: list[np.ndarray]


# ============================================================================================
# Public API
# ============================================================================================


def table(
    rec: QueryRecording,
    attributes: str | Sequence[str],
    *,
    vehicle: VehicleSelector | Sequence[VehicleSelector] | None = None,
    object: ObjectSelector | Sequence[ObjectSelector] | None = None,
    hold: bool = False,
) -> dict[str, np.ndarray]:
    """The tidy table of one or several ``Class.attribute[element]`` specs as numpy columns
    (see the module docstring): ``time`` float64, ``frame`` int64, ``vehicle`` / ``object``
    object arrays, ``wheel`` int64 (:data:`NO_WHEEL` for vehicle-level objects), then the values.

    ``vehicle``: only objects of these vehicles (names or :class:`Vehicle`); ``object``: only
    these objects, as ``pvdkit series --object`` takes them (a path, name, vehicle, wheel,
    ``pvdkit diff`` label or handle), or :class:`Object` / :class:`Wheel` / :class:`Vehicle`;
    ``hold``: fill a merged attribute not set in a row's frame with its value in force.
    :class:`PvdError` (one line) for an unknown class, attribute, vehicle or object.
    """
    specs = [_spec(rec, a) for a in ([attributes] if isinstance(attributes, str) else attributes)]
    if not specs:
        raise PvdError(f"{rec.source_name}: no attribute requested (give CLASS.ATTRIBUTE)")
    names = names_of(rec)
    keep = _vehicle_filter(rec, vehicle)
    # Merging, an object outside every vehicle (PxScene) stays under a vehicle filter: its
    # values hold for every vehicle's rows.
    parts = [_parts(rec, names, s, _objects(rec, names, s.cls, object, keep, len(specs) > 1)) for s in specs]
    values = [_value_columns(rec, s, p) for s, p in zip(specs, parts, strict=True)]
    titles = _titles(specs, [list(v) for v in values])
    if len(specs) == 1:
        return _single(rec, names, parts[0], titles[0], values[0])
    return _merged(rec, names, specs, parts, titles, values, hold)


def dataframe(
    rec: QueryRecording,
    attributes: str | Sequence[str],
    *,
    vehicle: VehicleSelector | Sequence[VehicleSelector] | None = None,
    object: ObjectSelector | Sequence[ObjectSelector] | None = None,
    hold: bool = False,
) -> pandas.DataFrame:
    """:func:`table` as a pandas DataFrame (``wheel`` a nullable ``Int64`` column, ``<NA>`` for
    vehicle-level objects). Needs the ``analysis`` extra; without pandas, one :class:`PvdError`
    line saying how to install it (:func:`table` gives the same columns without pandas)."""
    pd = import_module("pandas", extra="analysis", modules=("pandas",), what="pvdkit.analysis.dataframe")
    cols = table(rec, attributes, vehicle=vehicle, object=object, hold=hold)
    wheel = cols["wheel"]
    out = dict(cols)
    out["wheel"] = pd.arrays.IntegerArray(np.where(wheel < 0, 0, wheel).astype(np.int64), wheel < 0)
    return pd.DataFrame(out)


class Recording(QueryRecording):
    """The query model (:class:`pvdkit.recording.Recording`, opened the same way:
    ``Recording.open(path)``) plus vehicles and tidy tables as methods.

    Why a subclass here and not methods of the query model itself: vehicles and readable paths
    come from :mod:`pvdkit.names`, a layer above the query model (it uses ``pvdkit diff``'s
    object identities), and lower layers never import upper ones (``lint-imports``). The
    functions :func:`table`, :func:`dataframe` and :func:`vehicles` take any recording.
    """

    @property
    def vehicles(self) -> list[Vehicle]:
        """The recording's vehicles (:func:`pvdkit.names.vehicles`)."""
        return vehicles(self)

    def find_object(self, name_or_handle: str | int, frame: int | None = None) -> Object:
        """The object that text names as ``pvdkit series --object`` takes it — a path
        (``"sedan/wheel 3/TireSlipState"``), vehicle name, ``pvdkit diff`` label or object name —
        or that handle, so that :meth:`series`, :meth:`value_at` and :meth:`state_at` take what
        :meth:`table` does. :class:`PvdError` when nothing matches, or listing the paths when
        several objects share the name (PhysX names every vehicle's ``TireForce2`` alike: the
        query model would pick the first). A handle several lifetimes reuse: the one alive at
        ``frame``, as in the query model."""
        if isinstance(name_or_handle, str):
            try:
                int(name_or_handle, 0)
            except ValueError:
                return names_of(self).find(name_or_handle)
        return super().find_object(name_or_handle, frame)

    def table(
        self,
        attributes: str | Sequence[str],
        *,
        vehicle: VehicleSelector | Sequence[VehicleSelector] | None = None,
        object: ObjectSelector | Sequence[ObjectSelector] | None = None,
        hold: bool = False,
    ) -> dict[str, np.ndarray]:
        """:func:`table` of this recording."""
        return table(self, attributes, vehicle=vehicle, object=object, hold=hold)

    def dataframe(
        self,
        attributes: str | Sequence[str],
        *,
        vehicle: VehicleSelector | Sequence[VehicleSelector] | None = None,
        object: ObjectSelector | Sequence[ObjectSelector] | None = None,
        hold: bool = False,
    ) -> pandas.DataFrame:
        """:func:`dataframe` of this recording."""
        return dataframe(self, attributes, vehicle=vehicle, object=object, hold=hold)


# ============================================================================================
# Specs and objects
# ============================================================================================


def _spec(rec: QueryRecording, text: str) -> AttributeSpec:
    """``Class.attribute[element]`` resolved (:func:`pvdkit.names.resolve_spec`), refusing a
    unique list: a table holds values over time."""
    spec = resolve_spec(rec, text)
    if spec.leaf.kind == "unique_list":
        raise PvdError(f"{rec.source_name}: {spec.cls.name}.{spec.attr} is a unique list, not a value over "
                       "time; read it with Recording.series(obj, attribute).membership()")
    return spec


def _vehicle_filter(rec: QueryRecording, selected: Any) -> set[int] | None:
    """Indices of the selected vehicles (None: no filter): a name is a vehicle's whole name or
    the last part of it (:func:`pvdkit.names.find_vehicle`, as ``--vehicle`` and ``--object``);
    :class:`PvdError` for an unknown name, and for an empty list (a table of nothing)."""
    if selected is None:
        return None
    out: set[int] = set()
    many = isinstance(selected, Iterable) and not isinstance(selected, (str, Vehicle))
    chosen = list(selected) if many else [selected]
    if not chosen:
        raise PvdError(f"{rec.source_name}: vehicle= is an empty list; give vehicle names, or None for all")
    for s in chosen:
        if not isinstance(s, (str, Vehicle)):
            raise PvdError(f"{rec.source_name}: vehicle= takes a vehicle's name or a Vehicle (or a list of "
                           f"them), not {type(s).__name__} {s!r}")
        out.add(s.index if isinstance(s, Vehicle) else find_vehicle(rec, s).index)
    return out


def _objects(rec: QueryRecording, names: ObjectNames, cls: Class, selected: Any, keep: set[int] | None,
             keep_global: bool = False) -> list[Object]:
    """The objects of ``cls`` to read: all, or those ``selected`` stands for, in object order;
    only those of the ``keep`` vehicles when given (and, with ``keep_global``, those of none)."""
    if selected is None:
        found = rec.objects_of_class(cls)
    else:
        single = (str, int, np.integer, Object, Wheel, Vehicle)
        many = isinstance(selected, Iterable) and not isinstance(selected, single)
        items = list(selected) if many else [selected]
        picked: dict[int, Object] = {}
        for s in items:
            if isinstance(s, bool) or not isinstance(s, single):
                raise PvdError(f"{rec.source_name}: object= takes a path, name, handle, Object, Wheel or "
                               f"Vehicle (or a list of them), not {type(s).__name__} {s!r}")
            if isinstance(s, (int, np.integer)):  # a handle, as `pvdkit series --object 72` takes it
                hits = names.resolve(str(int(s)), cls)
            elif isinstance(s, str):
                hits = names.resolve(s, cls)
            elif isinstance(s, (Wheel, Vehicle)):
                hits = s.objects(cls)
            elif s.recording is not rec:
                raise PvdError(f"{rec.source_name}: object {s!r} belongs to another recording")
            else:
                hits = [s] if s.cls is not None and s.cls.is_a(cls) else []
            picked.update((o.index, o) for o in hits)
        found = [picked[i] for i in sorted(picked)]
    if keep is not None:
        owners = [names.owner(o)[0] for o in found]
        found = [o for o, v in zip(found, owners, strict=True)
                 if (v.index in keep if v is not None else keep_global)]
    return found


# ============================================================================================
# Values
# ============================================================================================


def _cells(v: Any) -> list[Any]:
    """One sample as a list of elements (flags as ``"a|b"``, as ``pvdkit series`` prints them)."""
    if isinstance(v, np.ndarray):
        return v.reshape(-1).tolist()
    if isinstance(v, np.generic):
        return [v.item()]
    if isinstance(v, (set, frozenset)):
        return ["|".join(sorted(v))]
    return [v]


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _element_columns(s: Series) -> list[np.ndarray]:
    """The samples of a series as one array per element (numeric arrays keep their dtype)."""
    v = s.values
    if isinstance(v, np.ndarray) and v.dtype != object:
        return [v] if v.ndim == 1 else [v[:, j] for j in range(v.shape[1])]
    rows = [_cells(x) for x in v]
    width = max((len(r) for r in rows), default=0)
    cols = []
    for j in range(width):
        col = [r[j] if j < len(r) else None for r in rows]
        if all(_is_number(x) or x is None for x in col):
            cols.append(np.array([np.nan if x is None else x for x in col], np.float64))
        else:
            cols.append(np.array(col, dtype=object))
    return cols


def _parts(rec: QueryRecording, names: ObjectNames, spec: AttributeSpec,
           objects: list[Object]) -> list[_Part]:
    """The samples of ``spec`` per object (objects without samples left out, as ``series`` does)."""
    out = []
    for o in objects:
        s = rec.series(o, spec.attr)
        if len(s):
            out.append(_Part(o, s.frames.astype(np.int64), _element_columns(s)))
    return out


def _value_columns(rec: QueryRecording, spec: AttributeSpec,
                   parts: list[_Part]) -> dict[str, list[np.ndarray]]:
    """Per output column of ``spec`` (its title as ``pvdkit series`` heads it) the per-part arrays;
    the element selector applied. :class:`PvdError` for an element no sample has, or the norm of
    values that are not numbers."""
    width = max((len(p.columns) for p in parts), default=0)
    # An object whose samples are shorter than another's: NaN for the elements it lacks.
    padded = [[p.columns[j] if j < len(p.columns) else np.full(len(p.frames), np.nan) for j in range(width)]
              for p in parts]
    what = f"{rec.source_name}: {spec.cls.name}.{spec.attr}"
    e = spec.element
    if e is None:
        if width <= 1 and spec.leaf.count <= 1:
            return {spec.attr: [c[0] if c else np.zeros(0) for c in padded]}
        return {f"{spec.attr}[{j}]": [c[j] for c in padded] for j in range(width)}
    if e == NORM:
        if any(col.dtype == object or col.dtype == bool for c in padded for col in c):
            raise PvdError(f"{what} is not numeric; it has no norm")
        return {f"|{spec.attr}|": [np.sqrt(sum(np.square(col.astype(np.float64)) for col in c))
                                   if c else np.zeros(0) for c in padded]}
    i = int(e)
    if parts:
        check_element(what, i, width)
    return {element_title(spec.attr, i, width): [c[i] for c in padded]}


def _titles(specs: list[AttributeSpec], columns: list[list[str]]) -> list[list[str]]:
    """Final value column names: as ``series`` heads them, prefixed with the class
    (``EngineState.rotationSpeed``) where two attributes, or a key column, would share a name."""
    seen: dict[str, int] = {}
    for cols in columns:
        for c in cols:
            seen[c] = seen.get(c, 0) + 1
    return [[f"{s.cls.name}.{c}" if seen[c] > 1 or c in KEY_COLUMNS else c for c in cols]
            for s, cols in zip(specs, columns, strict=True)]


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    """Concatenate per-part arrays; mixed kinds (numbers and None) become float or object."""
    if not arrays:
        return np.zeros(0, np.float64)
    try:
        return np.concatenate(arrays)
    except (TypeError, ValueError):  # e.g. str and float parts of a ragged attribute
        return np.concatenate([a.astype(object) for a in arrays])


def _seconds(rec: QueryRecording, frames: np.ndarray) -> np.ndarray:
    if not rec.time_base.known:
        return np.full(len(frames), np.nan)
    return np.asarray(rec.seconds(frames), np.float64)


def _keys(rec: QueryRecording, names: ObjectNames, objects: list[Object]) -> dict[str, np.ndarray]:
    """``vehicle``, ``wheel`` and ``object`` of each object."""
    owners = [names.owner(o) for o in objects]
    return {
        "vehicle": np.array([v.name if v is not None else None for v, _ in owners], dtype=object),
        "wheel": np.array([NO_WHEEL if w is None else w for _, w in owners], np.int64),
        "object": np.array([names.path(o) for o in objects], dtype=object),
    }


def _single(rec: QueryRecording, names: ObjectNames, parts: list[_Part], titles: list[str],
            values: dict[str, list[np.ndarray]]) -> dict[str, np.ndarray]:
    """One row per sample, ordered by frame then object (the rows of ``pvdkit series``)."""
    frames = np.concatenate([p.frames for p in parts]) if parts else np.zeros(0, np.int64)
    which = np.repeat(np.arange(len(parts)), [len(p.frames) for p in parts])
    order = np.lexsort((which, frames))
    keys = _keys(rec, names, [p.obj for p in parts])
    out = {"time": _seconds(rec, frames[order]), "frame": frames[order]}
    out.update({k: v[which[order]] for k, v in keys.items()})
    for title, arrays in zip(titles, values.values(), strict=True):
        out[title] = _concat(arrays)[order]
    return out


def _merged(rec: QueryRecording, names: ObjectNames, specs: list[AttributeSpec], parts: list[list[_Part]],
            titles: list[list[str]], values: list[dict[str, list[np.ndarray]]], hold: bool
            ) -> dict[str, np.ndarray]:
    """Several attributes on one row per (frame, key) (see the module docstring)."""
    by_object = len({s.cls.name for s in specs}) == 1

    def key(o: Object) -> tuple[int, int, int]:
        """(vehicle index, wheel, object index): -1 for "none"; object index only when merging by object."""
        v, w = names.owner(o)
        if by_object:
            return (v.index if v is not None else -1, NO_WHEEL if w is None else w, o.index)
        return (v.index if v is not None else -1, NO_WHEEL if w is None else w, -1)

    # Per spec: key → index of its part (one object per key, or the user must pick).
    sources: list[dict[tuple[int, int, int], int]] = []
    for s, ps in zip(specs, parts, strict=True):
        found: dict[tuple[int, int, int], int] = {}
        for j, p in enumerate(ps):
            k = key(p.obj)
            if k in found:
                a, b = names.path(ps[found[k]].obj), names.path(p.obj)
                raise PvdError(f"{rec.source_name}: {s.cls.name}.{s.attr}: several objects per row key "
                               f"({a!r}, {b!r} …); select one with object=")
            found[k] = j
        sources.append(found)
    all_keys = {k for found in sources for k in found}

    def ancestors(k: tuple[int, int, int]) -> list[tuple[int, int, int]]:
        """The key itself, its vehicle's and the global key, finest first (merging by key only)."""
        if by_object:
            return [k]
        out = [k]
        if k[1] != NO_WHEEL:
            out.append((k[0], NO_WHEEL, -1))
        if k[0] != -1:
            out.append((-1, NO_WHEEL, -1))
        return out

    # Row keys: every key no finer key covers (a vehicle's key drops out when its wheels have rows).
    covered = {a for k in all_keys for a in ancestors(k)[1:]}
    row_keys = sorted(k for k in all_keys if k not in covered)
    frames_out: list[np.ndarray] = []
    key_out: list[np.ndarray] = []
    cols_out: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in specs]  # (values, valid)
    for r, k in enumerate(row_keys):
        src = []
        for found in sources:
            j = next((found[a] for a in ancestors(k) if a in found), None)
            src.append(j)
        rf = np.unique(np.concatenate([parts[a][j].frames for a, j in enumerate(src) if j is not None]))
        frames_out.append(rf)
        key_out.append(np.full(len(rf), r, np.int64))
        for a, j in enumerate(src):
            if j is None:
                cols_out[a].append((np.zeros(len(rf), np.int64), np.zeros(len(rf), bool)))
                continue
            f = parts[a][j].frames
            idx = np.searchsorted(f, rf, "right") - 1  # the last sample at or before the frame
            ok = idx >= 0
            if not hold:
                ok &= f[np.maximum(idx, 0)] == rf
            cols_out[a].append((np.maximum(idx, 0), ok))
    frames = np.concatenate(frames_out) if frames_out else np.zeros(0, np.int64)
    rows = np.concatenate(key_out) if key_out else np.zeros(0, np.int64)
    order = np.lexsort((rows, frames))
    out: dict[str, np.ndarray] = {"time": _seconds(rec, frames[order]), "frame": frames[order]}
    vi = vehicles(rec)
    labels = []
    for k in row_keys:
        if by_object:
            labels.append(names.path(rec.objects[k[2]]))
        elif k[0] < 0:
            paths = {names.path(parts[a][found[k]].obj) for a, found in enumerate(sources) if k in found}
            labels.append(", ".join(sorted(paths)))
        else:
            labels.append(vi[k[0]].wheels[k[1]].path if k[1] != NO_WHEEL else vi[k[0]].name)
    out["vehicle"] = np.array([vi[k[0]].name if k[0] >= 0 else None for k in row_keys], dtype=object)[
        rows[order]] if row_keys else np.zeros(0, object)
    out["wheel"] = np.array([k[1] for k in row_keys], np.int64)[rows[order]] if row_keys else \
        np.zeros(0, np.int64)
    out["object"] = np.array(labels, dtype=object)[rows[order]] if row_keys else np.zeros(0, object)
    for a in range(len(specs)):
        for title, arrays in zip(titles[a], values[a].values(), strict=True):
            pieces = []
            for r, k in enumerate(row_keys):
                idx, ok = cols_out[a][r]
                j = next((sources[a][x] for x in ancestors(k) if x in sources[a]), None)
                taken = arrays[j][idx] if j is not None else np.zeros(len(idx), np.float64)
                pieces.append((taken, ok))
            out[title] = _fill(pieces)[order]
    return out


def _fill(pieces: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Concatenate (values, valid) pieces: missing → NaN for numbers (float64), None otherwise;
    the values' own dtype when nothing is missing."""
    if not pieces:
        return np.zeros(0, np.float64)
    valid = np.concatenate([ok for _, ok in pieces])
    present = [v[ok] for v, ok in pieces if ok.any()]
    kinds = {v.dtype.kind for v in present}
    if valid.all():
        return _concat([v for v, _ in pieces])
    if kinds <= {"f", "i", "u"}:
        out = np.full(len(valid), np.nan)
        out[valid] = np.concatenate([v[ok].astype(np.float64) for v, ok in pieces])
        return out
    obj = np.full(len(valid), None, dtype=object)
    obj[valid] = np.concatenate([v[ok].astype(object) for v, ok in pieces])
    return obj
