"""Reading a PhysX recording's object graph with errors that name the file, vehicle and attribute.

Why a layer of its own: a recording missing one object or attribute must fail with one line
a user can act on (``dev_drive.h5: /World/Tank: EngineParams.peakTorque: not set by frame 0``)
instead of a ``KeyError`` or ``IndexError`` deep inside the params builder. Every read of the
builders goes through :class:`Source`, which also does the per-step sampling (zero-order hold at
many frames in one ``searchsorted``) that keeps building a whole run fast.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from pvdkit.recording import ListSeries, Object, Recording, Series
from pvdkit.types import PvdError

#: ``PX_MAX_F32``: PhysX's filler for unused slots (wheel multipliers, gear ratios, torque curve).
PX_MAX_F32 = float(np.finfo(np.float32).max)
#: Values at or above this are PhysX's "unused" filler (float32 max read back as float64).
UNUSED = 0.5 * PX_MAX_F32


class RecordingError(ValueError):
    """One line naming the recording, the object (vehicle) and attribute, and what was expected."""


_TRUE = frozenset({"true", "1", "etrue", "yes"})
_FALSE = frozenset({"false", "0", "efalse", "no"})


def _one_bool(value: Any) -> bool:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _TRUE:
            return True
        if key in _FALSE:
            return False
    elif isinstance(value, int | np.integer) and int(value) in (0, 1):
        return bool(value)
    elif isinstance(value, frozenset | set):  # a flags decode of a bool enum: {'True'} or {}
        return any(_one_bool(v) for v in value) if value else False
    raise ValueError(f"not a boolean: {value!r}")


def _as_bool(value: Any) -> Any:
    """A recorded boolean as ``bool`` (arrays elementwise): accepts bool, numpy bool, 0/1 and the
    strings 'True'/'False' — the reader returns PhysX's bool enums as names today and real
    booleans later, and replay code must not care which."""
    if isinstance(value, np.ndarray) and value.dtype != object:
        if value.dtype == np.bool_:
            return value.copy()
        if np.issubdtype(value.dtype, np.integer) and np.all((value == 0) | (value == 1)):
            return value.astype(bool)
    if isinstance(value, np.ndarray | list | tuple):
        arr = np.asarray(value, dtype=object)
        return np.array([_one_bool(v) for v in arr.reshape(-1)], dtype=bool).reshape(arr.shape)
    return _one_bool(value)


def _word(v: Any) -> int | None:
    """One raw enum/flags sample as an int (PhysX writes 1, 2, 4 or 8-byte words)."""
    if isinstance(v, np.ndarray):
        b = np.ascontiguousarray(v).view(np.uint8).tobytes()
        return int.from_bytes(b, "little") if len(b) in (1, 2, 4, 8) else None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


_INDEX = re.compile(r"(\d+)$")


def _is_handle(value: Any) -> bool:
    """True for one object handle; a payload of another size than 8 bytes reads as its bytes."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    """A value for an error message: a payload of bytes as its size."""
    if isinstance(value, np.ndarray):
        return f"a payload of {value.nbytes} bytes"
    return repr(value)


class Source:
    """One recording plus the name used in error messages; every read raises RecordingError."""

    def __init__(self, rec: Recording, name: str) -> None:
        self.rec = rec
        self.name = name

    # ------------------------------------------------------------------ errors

    def error(self, vehicle: str, where: str, expected: str) -> RecordingError:
        """A RecordingError ``file: vehicle: where: expected`` on one line."""
        text = f"{self.name}: {vehicle}: {where}: {expected}"
        return RecordingError(" ".join(text.split()))

    @staticmethod
    def where(obj: Object | None, attr: str) -> str:
        cls = obj.cls.name if obj is not None and obj.cls is not None else "?"
        return f"{cls}.{attr}"

    # ------------------------------------------------------------------ single values

    def series(self, obj: Object, attr: str, vehicle: str) -> Series | ListSeries:
        """The series of ``attr`` (RecordingError if the class has no such attribute)."""
        try:
            return obj.series(attr)
        except PvdError:
            raise self.error(vehicle, self.where(obj, attr),
                             "an attribute the recording's class does not have") from None

    def value(self, obj: Object, attr: str, frame: int, vehicle: str) -> Any:
        """The value in force at ``frame``; RecordingError if it was never set by then."""
        s = self.series(obj, attr, vehicle)
        v = s.at(frame)
        if v is None:
            raise self.error(vehicle, self.where(obj, attr), f"not set by frame {frame}")
        return v

    def maybe(self, obj: Object, attr: str, frame: int) -> Any:
        """The value at ``frame`` or None (attribute absent or never set)."""
        try:
            return obj.series(attr).at(frame)
        except PvdError:
            return None

    def raw(self, obj: Object, attr: str, frame: int, vehicle: str) -> int:
        """An enum or flags attribute as its number (names of PhysX's enums can be ambiguous:
        ``DirectionSpecifier`` registers ``geomNormalDir`` for both 1 and 2)."""
        s = self.series(obj, attr, vehicle)
        i = s.index_at(frame) if isinstance(s, Series) else -1
        if i < 0:
            raise self.error(vehicle, self.where(obj, attr), f"not set by frame {frame}")
        word = _word(s.raw[i])
        if word is None:
            raise self.error(vehicle, self.where(obj, attr), "an enum word of 1, 2, 4 or 8 bytes")
        return word

    def floats(self, obj: Object, attr: str, frame: int, vehicle: str, size: int | None = None) -> np.ndarray:
        """A numeric attribute as float64 (1-d), optionally of exactly ``size`` elements."""
        v = self.value(obj, attr, frame, vehicle)
        try:
            a = np.asarray(v, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise self.error(vehicle, self.where(obj, attr), f"numbers, got {v!r}") from None
        if size is not None and a.shape[0] != size:
            raise self.error(vehicle, self.where(obj, attr), f"{size} numbers, got {a.shape[0]}")
        return a

    def number(self, obj: Object, attr: str, frame: int, vehicle: str) -> float:
        """A scalar numeric attribute."""
        return float(self.floats(obj, attr, frame, vehicle, 1)[0])

    def integer(self, obj: Object, attr: str, frame: int, vehicle: str) -> int:
        """A scalar integer attribute."""
        return int(self.floats(obj, attr, frame, vehicle, 1)[0])

    def chunks(self, obj: Object, names: Sequence[str], frame: int, vehicle: str, n: int) -> np.ndarray:
        """A per-wheel array PhysX writes in chunks of four (``...0To3`` … ``...16To19``), cut to
        the vehicle's ``n`` wheels."""
        parts = [self.floats(obj, a, frame, vehicle) for a in names[: (n + 3) // 4]]
        return np.concatenate(parts)[:n]

    # ------------------------------------------------------------------ links

    def link(self, obj: Object, attr: str, frame: int, vehicle: str) -> Object:
        """The object an object-handle attribute points at (RecordingError if unset or dangling)."""
        h = self.value(obj, attr, frame, vehicle)
        target = self.rec.resolve(int(h), frame) if _is_handle(h) and h else None
        if target is None:
            raise self.error(vehicle, self.where(obj, attr),
                             f"a handle of a recorded object, got {_shown(h)}")
        return target

    def maybe_link(self, obj: Object, attr: str, frame: int) -> Object | None:
        """The linked object, or None when the attribute is absent, unset or 0 (or holds no
        handle: a payload of another size than 8 bytes)."""
        h = self.maybe(obj, attr, frame)
        return self.rec.resolve(int(h), frame) if _is_handle(h) and h else None

    def links(self, obj: Object, attr: str, frame: int, vehicle: str) -> list[Object]:
        """The objects of a unique list, in the index order of their names (``WheelAttachment2``
        is wheel 2) when every name ends in a distinct index 0..n-1, else in list order."""
        members = self.value(obj, attr, frame, vehicle)
        out = []
        for h in members:
            target = self.rec.resolve(int(h), frame)
            if target is None:
                raise self.error(vehicle, self.where(obj, attr), f"handles of recorded objects, got {h!r}")
            out.append(target)
        found = [_INDEX.search(o.name or "") for o in out]
        if all(found):
            idx = [int(m.group(1)) for m in found if m]
            if sorted(idx) == list(range(len(out))):
                out = [o for _, o in sorted(zip(idx, out, strict=True), key=lambda p: p[0])]
        return out

    # ------------------------------------------------------------------ per-step samples

    def samples(self, obj: Object, attr: str, frames: np.ndarray, vehicle: str) -> Any:
        """The value in force at each of ``frames`` (zero-order hold): a numeric array with a
        leading frame axis, or an object array for names and flags."""
        s = self.series(obj, attr, vehicle)
        if not isinstance(s, Series):
            raise self.error(vehicle, self.where(obj, attr), "a plain attribute, got a unique list")
        idx = np.searchsorted(s.frames, frames, side="right") - 1
        if len(idx) and idx[0] < 0:
            first = int(s.frames[0]) if len(s) else None
            raise self.error(vehicle, self.where(obj, attr),
                             f"set by frame {int(frames[0])} (first set at frame {first})")
        values = s.values
        if isinstance(values, np.ndarray):
            return values[idx]
        picked = np.empty(len(idx), dtype=object)
        for k, i in enumerate(idx.tolist()):
            picked[k] = values[i]
        try:  # variable-length numeric samples that happen to have one length: one array
            return np.stack([np.asarray(v, dtype=np.float64) for v in picked]) if len(picked) else picked
        except (TypeError, ValueError):
            return picked

    def sample_floats(self, obj: Object, attr: str, frames: np.ndarray, vehicle: str,
                      size: int | None = None) -> np.ndarray:
        """Per-frame numeric samples as float64: ``(frames,)`` for scalars (``size`` None or 1),
        ``(frames, size)`` for vectors."""
        v = self.samples(obj, attr, frames, vehicle)
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            raise self.error(vehicle, self.where(obj, attr), "numbers") from None
        a = a.reshape(len(frames), -1)
        if size is not None and a.shape[1] != size:
            raise self.error(vehicle, self.where(obj, attr), f"{size} numbers per sample, got {a.shape[1]}")
        return a[:, 0] if size in (None, 1) and a.shape[1] == 1 else a

    def sample_raw(self, obj: Object, attr: str, frames: np.ndarray, vehicle: str) -> np.ndarray:
        """Per-frame enum numbers (int64) of an enum or flags attribute."""
        s = self.series(obj, attr, vehicle)
        idx = np.searchsorted(s.frames, frames, side="right") - 1
        if len(idx) and idx[0] < 0:
            raise self.error(vehicle, self.where(obj, attr), f"set by frame {int(frames[0])}")
        raw = s.raw
        if isinstance(raw, np.ndarray) and raw.ndim == 1:
            return raw[idx].astype(np.int64)
        words = [_word(raw[i]) for i in idx.tolist()]
        if any(w is None for w in words):
            raise self.error(vehicle, self.where(obj, attr), "an enum word of 1, 2, 4 or 8 bytes per sample")
        return np.array(words, dtype=np.int64)

    def sample_bools(self, obj: Object, attr: str, frames: np.ndarray, vehicle: str) -> np.ndarray:
        """Per-frame booleans (see :func:`_as_bool`)."""
        v = self.samples(obj, attr, frames, vehicle)
        try:
            return np.asarray(_as_bool(v), dtype=bool).reshape(len(frames))
        except ValueError as exc:
            raise self.error(vehicle, self.where(obj, attr), f"booleans ({exc})") from None

    def sample_chunks(self, obj: Object, names: Sequence[str], frames: np.ndarray, vehicle: str,
                      n: int) -> np.ndarray:
        """Per-frame per-wheel arrays written in chunks of four, ``(frames, n)``."""
        parts = [self.sample_floats(obj, a, frames, vehicle, 4) for a in names[: (n + 3) // 4]]
        return np.concatenate(parts, axis=1)[:, :n]
