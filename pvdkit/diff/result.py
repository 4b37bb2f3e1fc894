"""What ``pvdkit diff`` found: plain dataclasses, JSON-ready through ``to_dict``.

Everything a report shows is here, so the text table, the JSON, the JUnit XML and a Python
test all read the same facts. Frames are *comparison frames*: frame indices of recording A
(by index alignment these are also B's); ``-1`` is the set-up before the first frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import Any

from pvdkit.diff.tolerance import Tolerance, ToleranceConfig
from pvdkit.types import PvdError

__all__ = ["DiffOptions", "DiffResult", "FrameWindow", "Note", "ObjectChange", "SchemaChange", "SeriesDiff",
           "VehicleScope"]

#: Series statuses. "only_in_a": the attribute has data in A and none in B (missing data).
EQUAL, DIFFERENT, ONLY_IN_A, ONLY_IN_B, RETYPED = "equal", "different", "only_in_a", "only_in_b", "retyped"


#: Largest frame number a window may name: recordings number their frames in int32.
MAX_FRAME = 2**31 - 1


@dataclass(frozen=True)
class FrameWindow:
    """Comparison frames ``[start, stop)`` (None = open end), like a Python slice of frame
    numbers; values set before ``start`` are compared as held at ``start`` (zero-order hold)."""

    start: int | None = None
    stop: int | None = None

    @staticmethod
    def parse(text: str | None) -> FrameWindow:
        """``"A:B"``, ``"A:"``, ``":B"`` or ``"K"`` (the single frame K) → window."""
        if text is None or text.strip() in ("", ":"):
            return FrameWindow()
        t = text.strip()
        try:
            if ":" not in t:
                k = int(t)
                w = FrameWindow(k, k + 1)
            else:
                a, b = t.split(":", 1)
                w = FrameWindow(int(a) if a.strip() else None, int(b) if b.strip() else None)
        except ValueError:
            raise PvdError(f"--frames {text!r}: expected START:STOP with integer frame numbers "
                           "(either may be omitted), e.g. 100:200 or 250:") from None
        return w.validate()

    def validate(self) -> FrameWindow:
        """Raise :class:`PvdError` for negative frames or an empty window; returns self."""
        for v, end in ((self.start, 0), (self.stop, 1)):  # STOP is one past the last frame
            if v is not None and v < 0:
                raise PvdError(f"--frames: frame numbers are >= 0 (0 is the first frame), got {v}")
            if v is not None and v > MAX_FRAME + end:  # no recording has more frames (they are int32)
                raise PvdError(f"--frames: frame numbers are at most {MAX_FRAME:,}, got {str(v - end)[:40]}")
        if self.start is not None and self.stop is not None and self.stop <= self.start:
            raise PvdError(f"--frames {self.start}:{self.stop}: empty window (STOP must exceed START)")
        return self

    def contains(self, frame: int) -> bool:
        return (self.start is None or frame >= self.start) and (self.stop is None or frame < self.stop)

    def __str__(self) -> str:
        if self.start is None and self.stop is None:
            return "all"
        return f"{'' if self.start is None else self.start}:{'' if self.stop is None else self.stop}"


@dataclass(frozen=True)
class VehicleScope:
    """Compare one vehicle of each recording and nothing else (``--vehicle``): ``a`` in A with
    ``b`` in B, each a vehicle's whole name or the last part of it (``Standard`` for
    ``/World/Standard``). Why: a replay of one vehicle of a PhysX scene, or one car of a fleet,
    is checked against that vehicle alone; the objects of both vehicles are paired by their
    path under the vehicle (``wheel 1/TireForce``), not by position among the scene's vehicles."""

    a: str
    b: str

    @staticmethod
    def parse(text: str | None) -> VehicleScope | None:
        """``"NAME"`` (the same name on both sides) or ``"NAME_A=NAME_B"``; None for None."""
        if text is None:
            return None
        a, sep, b = text.partition("=")
        a, b = a.strip(), (b if sep else a).strip()
        if not a or not b:
            raise PvdError(f"--vehicle {text!r}: expected a vehicle name (Standard, /World/Standard) "
                           "or NAME_IN_A=NAME_IN_B")
        return VehicleScope(a, b)

    def __str__(self) -> str:
        return self.a if self.a == self.b else f"{self.a}={self.b}"


@dataclass(frozen=True)
class DiffOptions:
    """How to compare: tolerances, frame window, frame alignment (``"index"`` or ``"time"``),
    and the one vehicle compared (None: every object)."""

    tolerances: ToleranceConfig = ToleranceConfig()
    frames: FrameWindow = FrameWindow()
    align: str = "index"
    schema: bool = True
    vehicle: VehicleScope | None = None


@dataclass
class SchemaChange:
    """A difference of the registered schema: ``kind`` is one of ``class_added``,
    ``class_removed``, ``base_changed``, ``attribute_added``, ``attribute_removed``,
    ``attribute_retyped``, ``enum_value_added``, ``enum_value_removed``, ``enum_value_changed``
    (added = in B only). ``a``/``b`` describe each side."""

    kind: str
    cls: str
    attribute: str | None = None
    a: str | None = None
    b: str | None = None

    def describe(self) -> str:
        what = f"{self.cls}.{self.attribute}" if self.attribute else self.cls
        if self.kind.endswith("_added"):
            return f"{self.kind.replace('_', ' ')}: {what} ({self.b}) only in B"
        if self.kind.endswith("_removed"):
            return f"{self.kind.replace('_', ' ')}: {what} ({self.a}) only in A"
        return f"{self.kind.replace('_', ' ')}: {what}: A {self.a}, B {self.b}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "class": self.cls, "attribute": self.attribute, "a": self.a, "b": self.b}


@dataclass
class ObjectChange:
    """An object of one recording with no counterpart in the other (``side`` "a" = missing in B)."""

    side: str
    label: str
    cls: str
    name: str
    created: int
    destroyed: int | None
    #: The object's index in its recording, and its path for people (``pvdkit.names``).
    index: int = field(default=-1, repr=False)
    path: str | None = None

    @property
    def shown(self) -> str:
        """How reports name the object: its path, else its identity label."""
        return self.path or self.label

    def to_dict(self) -> dict[str, Any]:
        return {"side": self.side, "object": self.label, "path": self.path, "class": self.cls,
                "name": self.name, "created": self.created, "destroyed": self.destroyed}


@dataclass
class Note:
    """A recording-level fact: ``difference`` True when it makes the recordings differ
    (damaged file, frame count), False for information."""

    kind: str
    message: str
    difference: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "difference": self.difference}


@dataclass
class SeriesDiff:
    """The comparison of one attribute of one matched object over the frame window.

    ``kind``: float, int, enum, flags, string, reference, list, bytes, lifetime, frame or
    message. ``compared``: frames where at least one side has a value; ``differing``: frames
    where they differ (one side unset counts). ``first_frame``/``first_time``: the first
    differing comparison frame, its start timestamp (the producer's number: nanoseconds, PhysX's
    frame counter) and ``first_seconds`` its simulated seconds (None when neither recording
    says, :class:`pvdkit.recording.TimeBase`); ``a_value``/``b_value``: the values
    there (text). ``max_abs``/``max_rel``: largest |a − b| and |a − b| / |b| over every frame
    where both sides hold finite numbers (numeric kinds only; within tolerance too).
    ``component``: element index of ``max_abs`` (for plots).
    """

    object: str
    cls: str
    attribute: str
    kind: str
    status: str
    tolerance: Tolerance
    compared: int = 0
    differing: int = 0
    first_frame: int | None = None
    first_time: int | None = None
    a_value: str | None = None
    b_value: str | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    component: int = 0
    index_a: int = field(default=-1, repr=False)
    index_b: int = field(default=-1, repr=False)
    # Last: the bulk comparison builds these positionally, up to index_b.
    first_seconds: float | None = None
    #: The object's path for people (``/World/Standard/wheel 1/TireForce``, :mod:`pvdkit.names`),
    #: set for the rows the reports list (differing ones); ``object`` is its identity label.
    path: str | None = None

    @property
    def shown(self) -> str:
        """How reports name the object: its path, else its identity label."""
        return self.path or self.object

    @property
    def is_different(self) -> bool:
        return self.status != EQUAL

    @property
    def test_name(self) -> str:
        """``Class.attribute``: how JUnit and tolerance globs name it."""
        return f"{self.cls}.{self.attribute}"

    def sort_key(self) -> tuple:
        ff = self.first_frame if self.first_frame is not None else math.inf
        return (ff, self.object, self.attribute)

    def to_dict(self) -> dict[str, Any]:
        return {
            "object": self.object, "path": self.path, "class": self.cls, "attribute": self.attribute,
            "kind": self.kind,
            "status": self.status, "frames_compared": self.compared, "frames_differing": self.differing,
            "first_divergence_frame": self.first_frame, "first_divergence_time": self.first_time,
            "first_divergence_seconds": self.first_seconds,
            "a": self.a_value, "b": self.b_value, "max_abs_error": _finite(self.max_abs),
            "max_rel_error": _finite(self.max_rel), "component": self.component,
            "tolerance": self.tolerance.to_dict(),
        }


def _finite(x: float | None) -> float | str | None:
    """JSON has no inf/nan: give them as strings."""
    if x is None or math.isfinite(x):
        return x
    return str(x)


_STATUS = attrgetter("status")


@dataclass
class DiffResult:
    """Everything one comparison found (see the module docstring); ``exit_status`` is what the
    CLI returns: 0 equal within tolerance, 1 different."""

    a: str
    b: str
    options: DiffOptions
    frames_a: int = 0
    frames_b: int = 0
    objects_matched: int = 0
    schema: list[SchemaChange] = field(default_factory=list)
    objects_only_a: list[ObjectChange] = field(default_factory=list)
    objects_only_b: list[ObjectChange] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    series: list[SeriesDiff] = field(default_factory=list)
    ignored: int = 0
    #: Objects on one side only whose class the config lets be so (``ignore_unmatched``).
    unmatched_ignored: int = 0
    seconds: float = 0.0
    #: With ``options.vehicle``: the whole names of the vehicles compared, in A and in B.
    vehicle_a: str = ""
    vehicle_b: str = ""
    #: When one recording ends before the other: the first comparison frame it lacks, and which
    #: it is ("A" or "B"); None / "" when both end together.
    ended_at: int | None = None
    ended_side: str = ""

    def split_at_end(self) -> tuple[list[SeriesDiff], list[SeriesDiff]]:
        """The differing series (by first divergence) in two: those that differ while both
        recordings run, and those whose first divergence is at or after :attr:`ended_at` — they
        differ only in that the longer recording goes on writing them (missing data in the
        shorter one), which the frame-count note already says once; reports list them as one line."""
        diff = self.differing_series
        if self.ended_at is None:
            return diff, []
        end = self.ended_at
        after = [s.first_frame is not None and s.first_frame >= end for s in diff]
        return ([s for s, a in zip(diff, after, strict=True) if not a],
                [s for s, a in zip(diff, after, strict=True) if a])

    @property
    def after_end_series(self) -> list[SeriesDiff]:
        """The second part of :meth:`split_at_end`."""
        return self.split_at_end()[1]

    @property
    def differing_series(self) -> list[SeriesDiff]:
        """Series that differ, sorted by first divergence (then object, attribute)."""
        return sorted(self._differing(), key=SeriesDiff.sort_key)

    def _differing(self) -> list[SeriesDiff]:
        """The series that differ, in result order (statuses read in C: a fleet has 160,000)."""
        return list(compress(self.series, map(EQUAL.__ne__, map(_STATUS, self.series))))

    @property
    def equal(self) -> bool:
        """True when nothing differs: schema, objects, recording notes and every series."""
        return not (self.schema or self.objects_only_a or self.objects_only_b
                    or any(n.difference for n in self.notes)
                    or any(map(EQUAL.__ne__, map(_STATUS, self.series))))

    @property
    def exit_status(self) -> int:
        return 0 if self.equal else 1

    @property
    def first_divergence(self) -> SeriesDiff | None:
        """The earliest differing series (None when every series is equal)."""
        d = self.differing_series
        return d[0] if d else None

    def find(self, attribute: str, object: str | None = None) -> list[SeriesDiff]:
        """Series diffs whose ``Class.attribute`` or attribute equals ``attribute`` (and whose
        object label equals ``object`` when given)."""
        return [s for s in self.series if (s.attribute == attribute or s.test_name == attribute)
                and (object is None or s.object == object)]

    def summary(self) -> dict[str, Any]:
        diff = self._differing()
        return {
            "equal": self.equal,
            "frames_a": self.frames_a, "frames_b": self.frames_b,
            "objects_matched": self.objects_matched, "objects_missing_in_b": len(self.objects_only_a),
            "objects_extra_in_b": len(self.objects_only_b), "schema_changes": len(self.schema),
            "attributes_compared": len(self.series), "attributes_differing": len(diff),
            "attributes_ignored": self.ignored, "objects_unmatched_ignored": self.unmatched_ignored,
            "first_divergence_frame": min((s.first_frame for s in diff if s.first_frame is not None),
                                          default=None),
            "attributes_differing_only_after_end": len(self.after_end_series),
        }

    def to_dict(self, *, include_equal: bool = False) -> dict[str, Any]:
        """JSON-ready dict; ``include_equal`` also lists series that are equal."""
        series = self.series if include_equal else self.differing_series
        return {
            "a": self.a, "b": self.b, "equal": self.equal, "exit_status": self.exit_status,
            "options": {"frames": str(self.options.frames), "align": self.options.align,
                        "vehicle": None if self.options.vehicle is None else
                        {"a": self.vehicle_a, "b": self.vehicle_b},
                        "tolerances": self.options.tolerances.to_dict()},
            "summary": self.summary(),
            "notes": [n.to_dict() for n in self.notes],
            "schema": [c.to_dict() for c in self.schema],
            "objects": {"missing_in_b": [o.to_dict() for o in self.objects_only_a],
                        "extra_in_b": [o.to_dict() for o in self.objects_only_b]},
            "series": [s.to_dict() for s in series],
            "seconds": round(self.seconds, 4),
        }
