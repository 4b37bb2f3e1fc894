"""The query model: classes, objects, frames and per-attribute time series of any recording.

Why this shape: a viewer or a diff asks "what was attribute X of object O at frame F" millions of
times and "give me the whole curve of X" a few times. So a recording is indexed once into numpy
columns (no Python object per command or per sample), samples of one (object, attribute path)
are grouped into a *series* (their frame numbers plus their values), and every point query is a
binary search in one series (zero-order hold: the last value set at or before the frame).

Open any recording with :meth:`Recording.open` (``.ovd`` or ``.h5``, a path or in-memory bytes)::

    rec = Recording.open("tests/data/vehicles_short.ovd")
    wheel = rec.objects_of_class("WheelRigidBodyState")[0]
    frames, speed = rec.series(wheel, "correctedRotationSpeed")   # int32 frames, float32 values
    rec.value_at(wheel, "correctedRotationSpeed", 3)               # zero-order hold at frame 3
    wheel.state_at(3)                                              # every attribute at frame 3

Enums decode to their names (``'eRIGID_DYNAMIC'``), except PhysX's booleans (an enum class of
exactly ``False`` = 0, ``True`` = 1, :attr:`Class.is_bool`), which decode to ``bool``;
:attr:`Series.names` / :meth:`Series.name_at` give the names of any enum.

Frames are numbered 0, 1, 2 … in file order (the n-th START_FRAME is frame n-1); commands before
the first START_FRAME belong to frame -1 and are visible from frame 0 on.

Object lifetimes: PhysX reuses object handles (they are pointers) once an object is destroyed, so
every CREATE_OBJECT starts a new :class:`Object` (a *lifetime*); attribute commands belong to the
latest lifetime of their handle created at or before them. An attribute command on a handle
that was never created makes an *implicit* object (class unknown) so that no data is dropped.

The index is built below this layer (:mod:`pvdkit.index`): by the ``.ovd`` indexer
(:class:`~pvdkit.index.builder.IndexBuilder`) or read back by a storage backend
(:mod:`pvdkit.h5`); this module sees only the tables of :class:`~pvdkit.index.tables.RecordingData`.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from pvdkit.index.tables import (
    FAMILY_LIST,
    FAMILY_SET,
    NEVER,
    AttributeRegistration,
    FrameTable,
    Message,
    RecordingData,
    SampleBlocks,
    Samples,
    SeriesTable,
    _ranges,
)
from pvdkit.ovd.codec import (
    RegisterAttribute,
    RegisterClass,
    RegisterClassAttribute,
    RegisterEnumValue,
    RegisterFlagsAttribute,
    RegisterUniqueListAttribute,
    check_ovd_header,
    is_ovd_header,
)
from pvdkit.types import HDF5_SIGNATURE, Command, DataType, PvdError, PvdWarning

if TYPE_CHECKING:
    from pvdkit.index.stream import BytesLike, Chunk

__all__ = [
    "NEVER",
    "Attribute",
    "Class",
    "Frames",
    "ListSeries",
    "LiveRecording",
    "Message",
    "Object",
    "Recording",
    "RecordingData",
    "Series",
    "TimeBase",
]

#: Most class attributes one attribute path of :attr:`Class.paths` goes through (deeper nesting
#: is not expanded; OmniPVD itself allows 255 handles per path).
MAX_CLASS_NESTING = 16
#: Work :attr:`Class.paths` may do for all the classes of one recording together, in
#: characters of the dotted names it builds plus 16 per attribute visited below a class
#: attribute: at least ``MIN_PATH_WORK``, else ``PATH_WORK_PER_BYTE`` × the bytes of the
#: recording's attribute registrations (the budget grows with the file, so it never cuts a real
#: schema short, and no file makes it build more than that). Per recording, not per class: 1,500
#: classes of 100 bytes each, each holding a class attribute of one deep tree, spent a million
#: units each (24 s for a 160 kB file).
MIN_PATH_WORK = 1 << 20
PATH_WORK_PER_BYTE = 16
#: Most classes in a base-class chain (:attr:`Class.mro`): PhysX's are about 5 deep; a longer
#: chain in a file is cut there, as a cycle is, so that walking it stays cheap.
MAX_BASE_DEPTH = 64
#: Longest dotted name of an attribute path (:attr:`Series.name`, :meth:`Recording.state_at`
#: keys); a longer one (up to 255 names of up to 64 KB each) is named by its handles ("9/10").
MAX_PATH_NAME = 1024
#: The values of an enum class that decodes to Python bools (:attr:`Class.is_bool`): PhysX
#: Vehicle2 registers each of its booleans as such a class (``WheelStateBool`` …).
BOOL_ENUM_VALUES = {"False": 0, "True": 1}

# ============================================================================================
# Registry model: classes and attributes
# ============================================================================================


@dataclass(eq=False)
class Attribute:
    """A registered attribute of a class.

    ``kind`` is ``"value"`` (``count`` × ``data_type``; count 0 = variable length), ``"flags"``
    (a FLAGS_WORD whose bits or value name members of ``enum_class``), ``"class"`` (a nested
    instance of ``attribute_class``, reached by a path), ``"unique_list"`` (a set of
    ``data_type`` items) or ``"enum_value"`` (one named value of an enum class, ``value``).
    """

    handle: int
    name: str
    owner: Class
    kind: str
    data_type: DataType | None
    count: int
    enum_class: Class | None = None
    attribute_class: Class | None = None
    value: int | None = None

    def __repr__(self) -> str:
        what = {
            "value": f"{self.data_type.name if self.data_type is not None else '?'}×{self.count}",
            "flags": f"flags of {self.enum_class.name if self.enum_class else '?'}",
            "class": f"class {self.attribute_class.name if self.attribute_class else '?'}",
            "unique_list": f"unique list of {self.data_type.name if self.data_type is not None else '?'}",
            "enum_value": f"= {self.value}",
        }[self.kind]
        return f"<Attribute {self.owner.name}.{self.name} #{self.handle} {what}>"


@dataclass(eq=False)
class Class:
    """A registered class: name, handle, base class, own attributes and (for enums) values.

    ``path_work`` is what is left of the work :attr:`paths` may do (see :data:`MIN_PATH_WORK`),
    one counter shared by every class of a recording: :func:`build_registry` sets it from the
    size of the recording's registrations.
    """

    handle: int
    name: str
    base: Class | None = None
    attributes: dict[str, Attribute] = field(default_factory=dict)
    enum_values: dict[str, int] = field(default_factory=dict)
    path_work: list[int] = field(default_factory=lambda: [MIN_PATH_WORK], repr=False)

    def __repr__(self) -> str:
        base = f" : {self.base.name}" if self.base else ""
        return f"<Class {self.name}{base} #{self.handle}>"

    @property
    def mro(self) -> list[Class]:
        """This class, then its base, its base's base … (cycles in bad input are cut, and a
        chain longer than :data:`MAX_BASE_DEPTH` classes)."""
        chain, seen, c = [], set(), self
        while c is not None and c.handle not in seen and len(chain) < MAX_BASE_DEPTH:
            chain.append(c)
            seen.add(c.handle)
            c = c.base
        return chain

    def is_a(self, other: Class | str) -> bool:
        """True when this class is ``other`` or derives from it (by name or Class)."""
        name = other if isinstance(other, str) else other.name
        return any(c.name == name for c in self.mro)

    def all_attributes(self) -> dict[str, Attribute]:
        """Own and inherited attributes (base classes first), enum values excluded."""
        out: dict[str, Attribute] = {}
        for c in reversed(self.mro):
            for name, a in c.attributes.items():
                out[name] = a
        return out

    @cached_property
    def paths(self) -> dict[str, tuple[Attribute, ...]]:
        """Every settable attribute path, by dotted name: class attributes are expanded.

        A class attribute ``pose`` of class ``Transform`` (attributes ``p``, ``q``) gives
        ``"pose.p"`` and ``"pose.q"``; plain, flags and unique-list attributes give themselves.

        Bounds, so that a hostile file cannot make this explode (k class attributes per level
        would otherwise give k^depth paths): a class attribute whose class is already being
        expanded on the way down (a class containing itself, directly or through a cycle — no
        C++ struct can) is not expanded; nesting stops at :data:`MAX_CLASS_NESTING` class
        attributes; and the expansion of class attributes stops once the recording's classes
        together spent ``path_work`` (characters of the names built + 16 per attribute visited;
        at least :data:`MIN_PATH_WORK`, else :data:`PATH_WORK_PER_BYTE` × the bytes of the
        recording's registrations), which PhysX schemas stay far below. A class's own plain
        attributes are always listed, before any class attribute is expanded. Data written
        through a path left out here is still read: it shows in :meth:`Recording.state_at` and
        :meth:`Recording.series` finds it by name.
        """
        out: dict[str, tuple[Attribute, ...]] = {}
        self._expand(out, "", (), (self,), self.path_work, {})
        return out

    def _expand(
        self,
        out: dict[str, tuple[Attribute, ...]],
        prefix: str,
        chain: tuple[Attribute, ...],
        stack: tuple[Class, ...],
        work: list[int],
        own: dict[int, dict[str, Attribute]],
    ) -> None:
        """Add this class's paths under ``prefix``/``chain``; ``stack`` = classes being expanded,
        ``work`` = the work left (see :attr:`paths`; shared by the whole expansion), ``own``
        caches all_attributes."""
        attrs = own.get(id(self))
        if attrs is None:
            attrs = own[id(self)] = self.all_attributes()
        # Plain attributes first, then class attributes: a deep class attribute listed first
        # spent the budget before a sibling such as "x" was named ("class C1 has no attribute x").
        for name, a in attrs.items():
            if a.kind == "class":
                continue
            if chain:  # a class's own attributes are free: as many as its registrations
                cost = 16 + len(prefix) + len(name)
                if work[0] < cost:
                    work[0] = 0
                    return
                work[0] -= cost
            path = (*chain, a)
            key = prefix + name
            if chain and len(key) > MAX_PATH_NAME:  # the name Series gives it: its handles
                key = "/".join(str(x.handle) for x in path)
            out[key] = path
        for name, a in attrs.items():
            if a.kind != "class":
                continue
            cost = 16 + len(prefix) + len(name)
            if work[0] < cost:
                work[0] = 0
                return
            work[0] -= cost
            sub = a.attribute_class
            if sub is None or len(chain) >= MAX_CLASS_NESTING or any(sub is c for c in stack):
                continue
            sub._expand(out, f"{prefix}{name}.", (*chain, a), (*stack, sub), work, own)

    @cached_property
    def is_flags(self) -> bool:
        """True for an enum class whose values are bits: decoded as a set of names, not one name.

        OmniPVD registers enums and flags the same way (a FLAGS_WORD attribute naming an enum
        class), so pvdkit tells them apart by the values: flags have no 0 value, and every value
        is a single bit or a mask of at least two of the class's bits (``eALL``). ``PxActorType``
        (0, 1, 2 …) is an enum, ``PxActorFlag`` (1, 2, 4, 8) flags.
        """
        vals = set(self.enum_values.values())
        if not vals or 0 in vals:
            return False
        bits = {v for v in vals if v & (v - 1) == 0}
        if not bits:
            return False
        all_bits = 0
        for v in bits:
            all_bits |= v
        return all(bin(v & all_bits).count("1") >= 2 for v in vals - bits)

    @cached_property
    def is_bool(self) -> bool:
        """True for an enum class whose values are exactly ``False`` = 0 and ``True`` = 1 (names
        case-sensitive, as PhysX writes them): its attributes decode to ``bool``, not to the names
        ``'True'`` / ``'False'``, which are both truthy. Any other class (``Maybe`` = 2 added, other
        spellings) keeps decoding to names. The one place this rule lives.
        """
        return self.enum_values == BOOL_ENUM_VALUES


def build_registry(
    regs: Sequence[RegisterClass | AttributeRegistration], source_name: str
) -> tuple[dict[int, Class], dict[int, Attribute]]:
    """Classes and attributes (by handle) from registration commands in stream order."""
    classes: dict[int, Class] = {}
    attrs: dict[int, Attribute] = {}
    pending_base: list[tuple[Class, int]] = []
    late: list[tuple[Attribute, int, str]] = []

    def owner(h: int, what: str) -> Class:
        c = classes.get(h)
        if c is None:  # attribute of a class never registered: keep it under a placeholder
            c = classes[h] = Class(h, f"<unregistered class {h}>")
        return c

    for r in regs:
        if isinstance(r, RegisterClass):
            c = classes.get(r.class_handle)
            if c is None:
                c = classes[r.class_handle] = Class(r.class_handle, r.name)
            else:
                c.name = r.name
            if r.base_class:
                pending_base.append((c, r.base_class))
        elif isinstance(r, RegisterEnumValue):
            c = owner(r.class_handle, "enum value")
            c.enum_values[r.name] = r.value
            attrs[r.attribute_handle] = Attribute(
                r.attribute_handle, r.name, c, "enum_value", DataType.ENUM_VALUE, 1, value=r.value
            )
        elif isinstance(r, RegisterFlagsAttribute):
            c = owner(r.class_handle, "flags attribute")
            a = Attribute(r.attribute_handle, r.name, c, "flags", DataType.FLAGS_WORD, 1)
            late.append((a, r.enum_class_handle, "enum"))
            c.attributes[r.name] = attrs[r.attribute_handle] = a
        elif isinstance(r, RegisterClassAttribute):
            c = owner(r.class_handle, "class attribute")
            a = Attribute(r.attribute_handle, r.name, c, "class", None, 0)
            late.append((a, r.class_attribute_handle, "nested"))
            c.attributes[r.name] = attrs[r.attribute_handle] = a
        elif isinstance(r, RegisterUniqueListAttribute):
            c = owner(r.class_handle, "unique list attribute")
            c.attributes[r.name] = attrs[r.attribute_handle] = Attribute(
                r.attribute_handle, r.name, c, "unique_list", r.data_type, 1
            )
        elif isinstance(r, RegisterAttribute):
            c = owner(r.class_handle, "attribute")
            c.attributes[r.name] = attrs[r.attribute_handle] = Attribute(
                r.attribute_handle, r.name, c, "value", r.data_type, r.nb_elements
            )
    for c, b in pending_base:
        c.base = classes.get(b)
    for a, h, what in late:
        if what == "enum":
            a.enum_class = classes.get(h)
        else:
            a.attribute_class = classes.get(h)
    size = sum(17 + len(a.name) for a in attrs.values())  # the bytes of their registrations
    work = [max(MIN_PATH_WORK, PATH_WORK_PER_BYTE * size)]  # one budget for all the classes
    for c in classes.values():
        c.path_work = work
    return classes, attrs


# ============================================================================================
# Objects, frames, series
# ============================================================================================


class Object:
    """One lifetime of an object: handle, name, class, context, creation and destruction frame.

    ``created`` is the frame of its CREATE_OBJECT (-1 = before the first frame; for implicit
    objects the frame of their first attribute command), ``destroyed`` the frame of its
    DESTROY_OBJECT or None. ``cls`` is None for implicit objects (never created in the stream).
    """

    __slots__ = ("_rec", "index", "handle", "name", "cls", "context", "created", "destroyed")

    def __init__(
        self,
        rec: Recording,
        index: int,
        handle: int,
        name: str,
        cls: Class | None,
        context: int,
        created: int,
        destroyed: int | None,
    ) -> None:
        self._rec = rec
        self.index = index
        self.handle = handle
        self.name = name
        self.cls = cls
        self.context = context
        self.created = created
        self.destroyed = destroyed

    def __repr__(self) -> str:
        cname = self.cls.name if self.cls else "?"
        name = f" {self.name!r}" if self.name else ""
        end = "end" if self.destroyed is None else self.destroyed
        return f"<Object {cname}{name} 0x{self.handle:x} frames {self.created}..{end}>"

    @property
    def recording(self) -> Recording:
        return self._rec

    @property
    def implicit(self) -> bool:
        """True for an object that was used but never created in the stream."""
        return self.cls is None

    def alive_at(self, frame: int) -> bool:
        """True when the object existed during ``frame`` (created at or before, destroyed at or after)."""
        return self.created <= frame and (self.destroyed is None or frame <= self.destroyed)

    def attribute_names(self) -> list[str]:
        """Dotted names of the attributes that have data for this object."""
        return self._rec._attribute_names(self)

    def series(self, attribute: str | Attribute | Sequence[Attribute | int]) -> Series | ListSeries:
        """The time series of one attribute (see :meth:`Recording.series`)."""
        return self._rec.series(self, attribute)

    def value_at(self, attribute: str | Attribute | Sequence[Attribute | int], frame: int) -> Any:
        """The value of ``attribute`` at ``frame`` (zero-order hold); None if not yet set."""
        return self._rec.value_at(self, attribute, frame)

    def state_at(self, frame: int) -> dict[str, Any]:
        """Every attribute of the object at ``frame`` (dotted name → value; None if not yet set)."""
        return self._rec.state_at(self, frame)

    def __getitem__(self, attribute: str) -> Series | ListSeries:
        return self.series(attribute)


def _names_a_file(source: object) -> bool:
    """True for bytes that are the name of an existing file (Recording.open(b"x.ovd"))."""
    if not isinstance(source, bytes) or len(source) > 4096:
        return False
    try:
        return os.path.isfile(os.fsdecode(source))
    except (ValueError, OSError):  # a NUL byte, a name too long: data, not a name
        return False


def _frame_number(frame: Any) -> int:
    """``frame`` as an int; :class:`PvdError` for a number that is no frame number (1.5 is easy to
    mistake for seconds, and int() would quietly take frame 1)."""
    if isinstance(frame, bool) or not isinstance(frame, int | np.integer | float | np.floating):
        raise PvdError(f"frame {frame!r}: expected a frame number (an integer)")
    if isinstance(frame, float | np.floating) and not float(frame).is_integer():
        raise PvdError(f"frame {frame!r} is not a frame number; for a time in seconds use "
                       f"recording.time_base.frame_at({frame!r})")
    return int(frame)


def _check_frames(frames: Any, count: int) -> None:
    """:class:`PvdError` for a frame number outside -1 (the set-up) … ``count`` - 1."""
    f = np.asarray(frames)
    if f.dtype.kind not in "iuf" or isinstance(frames, bool):  # text, None, objects, True (frame 1?)
        raise PvdError(f"frames must be frame numbers (integers), got {str(frames)[:40]!r}")
    if f.size and f.dtype.kind == "f" and not np.all(np.mod(f, 1) == 0):
        raise PvdError(f"frames must be frame numbers (integers), got {frames!r}")
    if f.size and (f.min() < -1 or f.max() >= count):
        bad = int(f.max()) if f.max() >= count else int(f.min())
        raise PvdError(f"frame {bad} is outside the recording's frames -1 (set-up) … {count - 1}")


class Frames:
    """The frames of a recording: numpy columns indexed by frame number (0 … len-1).

    ``start``/``stop`` are the producer's timestamps (PhysX: a frame counter); ``stopped`` is
    False for a frame that was never closed (``stop`` is then 0).
    """

    def __init__(self, table: FrameTable, time_base: Callable[[], TimeBase] | None = None) -> None:
        self.context = table.context
        self.start = table.start
        self.stop = table.stop
        self.stopped = table.stopped
        self.command = table.command
        self._time_base = time_base

    def __len__(self) -> int:
        return len(self.start)

    def __getitem__(self, i: int) -> dict[str, int | None]:
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"frame {i} out of range (recording has {n} frames)")
        return {
            "index": i % n,
            "context": int(self.context[i]),
            "start": int(self.start[i]),
            "stop": int(self.stop[i]) if self.stopped[i] else None,
        }

    def __iter__(self) -> Iterator[dict[str, int | None]]:
        return (self[i] for i in range(len(self)))

    def time(self, frames: np.ndarray | int) -> np.ndarray | int:
        """Start timestamps of frame numbers (frame -1, before any frame, maps to 0)."""
        f = np.asarray(frames)
        t = np.where(f >= 0, self.start[np.clip(f, 0, max(len(self) - 1, 0))] if len(self) else 0, 0)
        return int(t) if np.ndim(frames) == 0 else t.astype(np.uint64)

    def seconds(self, frames: np.ndarray | int) -> np.ndarray | float:
        """Simulated seconds of frame numbers (see :class:`TimeBase`; frame -1 maps to 0.0);
        :class:`PvdError` for a recording whose time base is unknown."""
        if self._time_base is None:
            raise PvdError("these frames belong to no recording: no time base")
        _check_frames(frames, len(self))
        return self._time_base().seconds_of(frames)


#: Where a recording says how long its steps are, in the order tried: PhysX's scene writes the
#: step's dt as ``PxScene.elapsedTime`` (in the second of its two frames per step); simcore writes
#: the simulated time at the end of each step as ``Simulation.time``.
TIME_SOURCES = (("PxScene", "elapsedTime"), ("Simulation", "time"))


@dataclass(frozen=True, eq=False)
class TimeBase:
    """How a recording's frames map to simulated seconds.

    Why: frame timestamps are the producer's numbers — PhysX counts frames (two per simulation
    step), simcore writes nanoseconds or, on request, PhysX's counter — so a timestamp alone
    says nothing about seconds. The step length is recorded elsewhere, and that is what this
    reads (:data:`TIME_SOURCES`):

    * ``source == "PxScene.elapsedTime"`` (a PhysX recording): each sample is one step's dt, written
      in the step's last frame; the frames of step *k* (after the previous sample, up to this
      one) map to the end of that step, ``sum(dt[0..k])``.
    * ``source == "Simulation.time"`` (simcore): the time at the end of each step, held until the
      next sample (with PhysX's layout the step's second frame keeps the step's time).
    * ``source == ""``: unknown; :attr:`seconds` is None and :meth:`seconds_of` raises.

    Frame -1 (commands before the first frame) maps to 0.0 s; frames after the last sample keep
    the last time. ``timestamps`` tells what ``Frames.start`` counts: ``"ns"``, ``"frame
    counter"`` (1, 2, 3 …) or ``"unknown"``. ``step_dt`` is the median step (s), ``steps`` the
    steps recorded, ``frames_per_step`` 2 in PhysX's layout and 1 otherwise.
    """

    source: str
    timestamps: str
    seconds: np.ndarray | None
    step_dt: float | None = None
    steps: int = 0
    frames_per_step: int | None = None
    #: A time source that was recorded but holds no clock (NaN, infinite, negative steps or a
    #: time running backwards): named in :attr:`description`, not used.
    unusable: str = ""

    @property
    def known(self) -> bool:
        """True when frames map to seconds."""
        return self.seconds is not None

    @property
    def duration(self) -> float | None:
        """Simulated seconds from the start to the end of the last recorded step (None if unknown)."""
        if self.seconds is None:
            return None
        return float(self.seconds[-1]) if len(self.seconds) else 0.0

    @property
    def step_rate(self) -> float | None:
        """Simulation steps per simulated second (Hz), from the median step."""
        return 1.0 / self.step_dt if self.step_dt else None

    @property
    def frame_rate(self) -> float | None:
        """Recorded frames per simulated second (Hz): the step rate × frames per step."""
        rate = self.step_rate
        return rate * self.frames_per_step if rate is not None and self.frames_per_step else None

    @property
    def description(self) -> str:
        """One line for people: where the seconds come from, or why there are none."""
        if self.seconds is None and self.unusable:
            return (f"frame timestamps: {self.timestamps} (the producer's numbers); {self.unusable} holds no "
                    "clock (NaN, infinite, negative or decreasing values), so they map to no seconds")
        if self.seconds is None:
            return (f"frame timestamps: {self.timestamps} (the producer's numbers); the recording has no "
                    "PxScene.elapsedTime or Simulation.time that maps them to seconds")
        return f"seconds from {self.source}; frame timestamps: {self.timestamps}"

    def __repr__(self) -> str:
        if self.seconds is None:
            return f"<TimeBase unknown: {self.description}>"
        n = len(self.seconds)
        span = f"{float(self.seconds[0]):g} … {float(self.seconds[-1]):g} s" if n else "no frames"
        step = f", steps of {self.step_dt * 1e3:g} ms" if self.step_dt else ""
        return (f"<TimeBase {n} frames, {span}{step}, {self.frames_per_step} frame(s) per step; "
                f"{self.description}>")

    def frame_at(self, seconds: float) -> int:
        """The last frame whose simulated time is at or before ``seconds`` (-1: before the first
        frame, the set-up); :class:`PvdError` if unknown. Frames share a time (PhysX's two
        per step): the later one, where the step is complete. A time within
        :data:`TIME_SLACK` of a frame step after a frame's time is that frame's: PhysX sums float32
        steps, so its step 59 ends at 1.0000000522 s, and ``frame_at(1.0)`` means that step."""
        if self.seconds is None:
            raise PvdError(f"no time in seconds: {self.description}")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float | np.integer | np.floating):
            raise PvdError(f"seconds must be a number, got {type(seconds).__name__} {str(seconds)[:40]!r}")
        try:
            t = float(seconds)
        except OverflowError:
            t = math.inf
        if not math.isfinite(t):
            raise PvdError(f"seconds must be a finite number, got {str(seconds)[:40]}")
        slack = TIME_SLACK * self.step_dt / (self.frames_per_step or 1) if self.step_dt else 0.0
        return int(np.searchsorted(self.seconds, t + slack, "right")) - 1

    def seconds_of(self, frames: np.ndarray | int) -> np.ndarray | float:
        """Seconds of frame numbers (an int gives a float); :class:`PvdError` if unknown."""
        if self.seconds is None:
            raise PvdError(f"no time in seconds: {self.description}")
        f = np.asarray(frames, np.int64)
        if not len(self.seconds):
            out = np.zeros(f.shape, np.float64)
        else:
            out = np.where(f >= 0, self.seconds[np.clip(f, 0, len(self.seconds) - 1)], 0.0)
        return float(out) if np.ndim(frames) == 0 else out


#: How close (a fraction of a frame step) a time may be after a frame's time and still be that
#: frame's: recorded clocks are sums of float32 steps, a little off after a few steps (PhysX at
#: 60 Hz: 6.6e-10 s per step, a hundredth of a frame step after some 2 hours).
TIME_SLACK = 0.01


def _timestamp_kind(frames: Frames, sample_frames: np.ndarray, seconds: np.ndarray | None) -> str:
    """What the frame timestamps count: PhysX's counter 1, 2, 3 …, or nanoseconds of ``seconds``."""
    n = len(frames)
    if n and np.array_equal(frames.start.astype(np.int64), np.arange(1, n + 1)):
        return "frame counter"
    ok = sample_frames[(sample_frames >= 0) & (sample_frames < n)]
    if seconds is not None and len(ok):
        with np.errstate(over="ignore", invalid="ignore"):  # a clock beyond 1e299 s: no nanoseconds
            ns = np.round(seconds[ok] * 1e9)
        if np.all(np.abs(frames.start[ok].astype(np.float64) - ns) <= 1.0):
            return "ns"
    return "unknown"


def _time_base(rec: Recording) -> TimeBase:
    """Read the recording's step lengths (see :class:`TimeBase`)."""
    n = len(rec.frames)
    at = np.arange(n, dtype=np.int64)
    unusable = ""
    for cls_name, attr in TIME_SOURCES:
        if cls_name not in rec.classes:
            continue
        for o in rec.objects_of_class(cls_name, derived=False):
            if o.cls is None or attr not in o.cls.paths:
                continue
            s = rec.series(o, attr)
            if not isinstance(s, Series) or not len(s) or not isinstance(s.raw, np.ndarray) \
                    or s.raw.ndim != 1:
                continue
            values = s.raw.astype(np.float64)
            fr = s.frames.astype(np.int64)
            steps = values if attr == "elapsedTime" else np.diff(values)
            if not np.isfinite(values).all() or (steps < 0).any():  # no clock: try the next source
                unusable = unusable or f"{cls_name}.{attr}"
                continue
            if attr == "elapsedTime":  # one step's dt each, in the step's last frame
                ends = np.cumsum(values)
                seconds = ends[np.minimum(np.searchsorted(fr, at, "left"), len(ends) - 1)]
                dts = values
            else:  # the time at the end of each step, held
                k = np.searchsorted(fr, at, "right") - 1
                seconds = np.where(k >= 0, values[np.maximum(k, 0)], 0.0)
                dts = np.diff(np.concatenate([[0.0], values]))
            if len(fr) > 1:
                per_step = round((fr[-1] - fr[0]) / (len(fr) - 1))
            elif attr == "elapsedTime":  # one step, whose dt is written in its last frame
                per_step = int(fr[0]) + 1
            else:  # one step, whose time is written in its first frame and held to the end
                per_step = n - int(fr[0])
            return TimeBase(f"{cls_name}.{attr}", _timestamp_kind(rec.frames, fr, seconds), seconds,
                            _median(dts) if len(dts) else None, len(values), max(int(per_step), 1))
    return TimeBase("", _timestamp_kind(rec.frames, np.zeros(0, np.int64), None), None, unusable=unusable)


def _median(x: np.ndarray) -> float:
    """``np.median`` without its import of ``numpy.ma`` (~10 ms a ``pvdkit diff`` process would
    pay for one number); NaN when ``x`` holds one."""
    s = np.sort(x)
    if np.isnan(s[-1]):
        return float("nan")
    n = len(s)
    return float((s[(n - 1) // 2] + s[n // 2]) / 2)


def _decode_kind(attr: Attribute | None) -> tuple[str, np.dtype | None]:
    """How values of ``attr`` decode: (kind, element dtype). A flags attribute whose enum class
    was never registered decodes to plain numbers (``"word"``)."""
    if attr is None:
        return "bytes", None
    dt = attr.data_type
    if attr.kind == "flags":
        cls = attr.enum_class
        if cls is None:
            return "word", None
        return ("flags" if cls.is_flags else "enum"), None
    if dt is None:
        return "bytes", None
    if dt == DataType.STRING:
        return "string", None
    if dt == DataType.OBJECT_HANDLE:
        return "handle", dt.numpy_dtype
    return "numeric", dt.numpy_dtype


def _typed(samples: Samples, dtype: np.dtype | None, *, uint_by_size: bool = False):
    """Samples as a typed array ``(n, k)`` (or ``(n,)`` when k == 1), or a list when ragged."""
    if samples.fixed is not None:
        raw = samples.fixed
        size = raw.shape[1]
        if uint_by_size and size in (1, 2, 4, 8):
            dtype = np.dtype(f"<u{size}")
        if dtype is None or size % dtype.itemsize:
            return raw
        arr = raw.view(dtype) if raw.flags.c_contiguous else np.ascontiguousarray(raw).view(dtype)
        return arr[:, 0] if arr.shape[1] == 1 else arr
    out = []
    for i in range(len(samples)):
        b = samples.flat[samples.offsets[i] : samples.offsets[i + 1]]
        d = dtype
        if uint_by_size and len(b) in (1, 2, 4, 8):
            d = np.dtype(f"<u{len(b)}")
        out.append(b.view(d) if d is not None and len(b) % d.itemsize == 0 else b)
    return out


#: Payload sizes of an enum or flags word: PhysX writes ``PxFlags`` storage types (1, 2 or 4
#: bytes), enums as u32, and 64-bit masks. Anything else is no word (a damaged file).
WORD_SIZES = (1, 2, 4, 8)
#: Names shown per set bit of a flags word (PhysX registers at most two values per bit, e.g.
#: ``eBATCH_QUERY_LEGACY_BEHAVIOUR`` = ``eDISABLE_HARDCODED_FILTER`` = 64); more are ignored so
#: that decoding stays proportional to the samples.
MAX_NAMES_PER_BIT = 8


def _words(raw, what: str) -> list[int | str]:
    """Each sample of an enum/flags series as one unsigned int, whatever width (1, 2, 4 or 8
    bytes) it was written in; any other size gives the marker ``"<invalid WHAT: N bytes>"``
    (never a big integer: those cost quadratic time to decode and cannot be printed)."""
    if isinstance(raw, np.ndarray) and raw.ndim == 1:
        return raw.tolist()
    out: list[int | str] = []
    for v in raw:
        b = np.ascontiguousarray(v).view(np.uint8)
        if b.nbytes in WORD_SIZES:
            out.append(int.from_bytes(b.tobytes(), "little"))
        else:
            out.append(f"<invalid {what}: {b.nbytes} bytes>")
    return out


def _text(raw: bytes) -> str:
    """A STRING payload as text: UTF-8 (undecodable bytes kept as surrogates), the C terminator
    PhysX writes (``"/World/Tank\\0"``) dropped."""
    return raw.decode("utf-8", "surrogateescape").rstrip("\x00")


class Series:
    """The values one object's attribute took over time (SET_ATTRIBUTE commands).

    ``frames`` (int32, non-decreasing) is the frame of each sample; ``values`` the decoded
    values: numeric → array ``(n, k)`` or ``(n,)`` when each sample is one element (k is the
    elements actually written, which PhysX sometimes makes differ from the registered count);
    variable-length samples → a list of 1-D arrays; object handles → uint64 array (resolve
    with :meth:`Recording.resolve`); enums → array of names, except booleans (an enum class of
    exactly ``False`` = 0, ``True`` = 1, :attr:`Class.is_bool`) → numpy bool array; flags →
    list of frozensets of names (unknown bits as hex strings); an enum/flags payload that is
    not a 1, 2, 4 or 8-byte word → the string ``"<invalid flags: N bytes>"`` (or ``enum``) for
    that sample (a boolean series with a sample that is no word or not 0/1 is an object array:
    bools, and that sample's marker or number as text, ``'2'``);
    flags of an enum class never registered → the numbers; strings → list of str (trailing NULs
    dropped). ``raw`` is the undecoded numeric form, :attr:`names` the enum names (booleans
    too). Unpacks as ``frames, values = series``.
    """

    family = FAMILY_SET

    def __init__(
        self, rec: Recording, obj: Object, path: tuple[Attribute, ...] | None, name: str, samples: Samples
    ) -> None:
        self.recording = rec
        self.object = obj
        self.path = path
        self.name = name
        self.attribute = path[-1] if path else None
        self.frames = samples.frames
        self.samples = samples
        self._kind, self._dtype = _decode_kind(self.attribute)

    def __repr__(self) -> str:
        return f"<Series {self.object.name or hex(self.object.handle)}.{self.name} ({len(self)} samples)>"

    def __len__(self) -> int:
        return len(self.frames)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.frames, self.values))

    @cached_property
    def raw(self):
        """Numeric form: element values (enums and flags as unsigned ints, strings as bytes)."""
        return _typed(self.samples, self._dtype, uint_by_size=self._kind in ("enum", "flags", "word"))

    @cached_property
    def values(self):
        """Decoded values (see the class docstring)."""
        raw = self.raw
        if self._kind == "string":
            return [_text(bytes(r)) for r in raw]
        if self._kind == "enum":
            if not self.attribute.enum_class.is_bool:
                return self.names
            if not len(raw):
                return np.zeros(0, bool)
            if isinstance(raw, np.ndarray) and raw.ndim == 1 and not (raw > 1).any():
                return raw.astype(bool)
            # Mixed word widths, or a damaged sample (it keeps its number or marker as text).
            decoded = [{"False": False, "True": True}.get(n, n) for n in self.names]
            return np.array(decoded, dtype=bool if all(isinstance(v, bool) for v in decoded) else object)
        if self._kind == "flags":
            words = _words(raw, "flags")
            decoded = {v: v if isinstance(v, str) else self._flag_names(v) for v in set(words)}
            return [decoded[v] for v in words]
        if self._kind == "word":
            if isinstance(raw, np.ndarray) and raw.ndim == 1:
                return raw
            return np.array(_words(raw, "flags"), dtype=object)
        return raw

    @cached_property
    def names(self) -> np.ndarray:
        """The enum name of each sample (object array of str), booleans included (``'True'``);
        a value the class does not name as its number (``'7'``), a payload that is no word as
        ``"<invalid enum: N bytes>"``. :class:`PvdError` for an attribute that is not an enum."""
        if self._kind != "enum":
            raise PvdError(f"{self.name} is not an enum attribute")
        names = {v: k for k, v in reversed(list(self.attribute.enum_class.enum_values.items()))}
        words = _words(self.raw, "enum")
        table = {v: v if isinstance(v, str) else names.get(v, str(v)) for v in set(words)}
        return np.array([table[v] for v in words], dtype=object)

    def name_at(self, frame: int, default: Any = None) -> Any:
        """The enum name in force at ``frame`` (``'True'`` where :meth:`at` gives ``True``),
        ``default`` before the first sample."""
        i = self.index_at(frame)
        return default if i < 0 else self.names[i]

    @cached_property
    def _flag_table(self) -> dict[int, tuple[str, ...]]:
        """Names of each single-bit value of the enum class (aliases kept, a few per bit)."""
        table: dict[int, list[str]] = {}
        for k, v in self.attribute.enum_class.enum_values.items():
            if v and v & (v - 1) == 0:
                names = table.setdefault(v, [])
                if len(names) < MAX_NAMES_PER_BIT:
                    names.append(k)
        return {bit: tuple(names) for bit, names in table.items()}

    def _flag_names(self, word: int) -> frozenset[str]:
        """Names of the set bits of a word of at most 64 bits; unknown bits as hex strings."""
        names: list[str] = []
        rest = word
        while rest:
            bit = rest & -rest
            rest ^= bit
            known = self._flag_table.get(bit)
            if known:
                names.extend(known)
            else:
                names.append(hex(bit))
        return frozenset(names)

    @property
    def times(self) -> np.ndarray:
        """Start timestamp of the frame of each sample (0 for samples before the first frame)."""
        return self.recording.frames.time(self.frames)

    @property
    def seconds(self) -> np.ndarray:
        """Simulated seconds of each sample's frame (:attr:`Recording.time_base`); :class:`PvdError`
        when the recording does not say how its frames map to seconds."""
        return np.asarray(self.recording.seconds(self.frames), np.float64)

    @cached_property
    def _frames64(self) -> np.ndarray:
        # int64 so that searchsorted with a Python int does not convert the whole array per call
        return self.frames.astype(np.int64)

    def index_at(self, frame: int) -> int:
        """Index of the sample in force at ``frame`` (the last at or before it), -1 if none."""
        return int(self._frames64.searchsorted(_frame_number(frame), "right")) - 1

    def at(self, frame: int, default: Any = None) -> Any:
        """The value in force at ``frame`` (zero-order hold), ``default`` before the first sample."""
        i = self.index_at(frame)
        if i < 0:
            return default
        return self._value(i)

    def _value(self, i: int) -> Any:
        k = self._kind
        if k in ("numeric", "handle", "bytes"):
            v = self.raw[i]
            return v.item() if isinstance(v, np.generic) else v
        if k == "string":
            return _text(self.samples.payload(i))
        v = self.values[i]
        return v.item() if isinstance(v, np.generic) else v


class ListSeries:
    """Membership changes of one object's unique-list attribute (ADD / REMOVE commands).

    ``frames`` is the frame of each change, ``added`` True for an add and False for a remove,
    ``items`` the item of each change (object handles as uint64, else like :class:`Series`
    values). :meth:`members_at` gives the members in force at a frame, in order of addition.
    """

    family = FAMILY_LIST

    def __init__(
        self, rec: Recording, obj: Object, path: tuple[Attribute, ...] | None, name: str, samples: Samples
    ) -> None:
        self.recording = rec
        self.object = obj
        self.path = path
        self.name = name
        self.attribute = path[-1] if path else None
        self.frames = samples.frames
        self.samples = samples
        # No samples may come without ops (an .h5 series with no segment rows): no changes, then.
        ops = samples.ops if samples.ops is not None else np.zeros(len(samples.frames), np.uint8)
        self.added = ops == Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE
        self._kind, self._dtype = _decode_kind(self.attribute)

    def __repr__(self) -> str:
        return f"<ListSeries {self.object.name or hex(self.object.handle)}.{self.name} ({len(self)} changes)>"

    def __len__(self) -> int:
        return len(self.frames)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.frames, self.added, self.items))

    @cached_property
    def items(self):
        """The item of each change (uint64 handles, numbers, or str for string lists)."""
        if self._kind == "string":
            return [_text(self.samples.payload(i)) for i in range(len(self))]
        return _typed(self.samples, self._dtype)

    def members_at(self, frame: int) -> list[Any]:
        """Members at ``frame``: items whose last change at or before it is an add, oldest first."""
        n = int(self.frames.astype(np.int64).searchsorted(_frame_number(frame), "right"))
        items = self.items
        if isinstance(items, np.ndarray) and items.ndim == 1:
            part = items[:n][::-1]
            uniq, first = np.unique(part, return_index=True)
            last = n - 1 - first  # index of the latest change of each item
            keep = self.added[last]
            sel = np.argsort(last[keep], kind="stable")
            return [v.item() for v in uniq[keep][sel]]
        state: dict[Any, bool] = {}
        for i in range(n):
            it = items[i]
            key = it.tobytes() if isinstance(it, np.ndarray) else it
            state.pop(key, None)
            if self.added[i]:
                state[key] = it
        return list(state.values())

    def at(self, frame: int, default: Any = None) -> list[Any]:
        """Same as :meth:`members_at` (the list's value at ``frame``)."""
        return self.members_at(frame)

    def membership(self) -> list[tuple[int, list[Any]]]:
        """(frame, members) after the last change of every frame that changed the list."""
        change_frames = np.unique(self.frames)
        return [(int(f), self.members_at(int(f))) for f in change_frames]


# ============================================================================================
# Recording
# ============================================================================================



class Recording:
    """The query model of one recording (see the module docstring).

    Build with :meth:`open`; attributes: ``version``, ``source_name``, ``classes`` (name →
    :class:`Class`), ``objects`` (every lifetime, in order of appearance), ``frames``
    (:class:`Frames`), ``messages`` (:class:`Message` list), ``error`` (damage description or
    None), ``incomplete`` (why a recording whose writer did not finish stopped, or
    None). Use as a context manager to release an HDF5 file.
    """

    def __init__(self, data: RecordingData) -> None:
        self._data = data
        self.version = data.version
        self.source_name = data.source_name
        self.error = data.error
        self.incomplete = data.incomplete
        self._classes_by_handle, self._attributes = build_registry(data.registrations, data.source_name)
        self.classes: dict[str, Class] = {}
        for c in self._classes_by_handle.values():
            self.classes.setdefault(c.name, c)
        self.frames = Frames(data.frames, lambda: self.time_base)
        self.messages = data.messages
        ot = data.objects
        destroyed = [None if d == NEVER else int(d) for d in ot.destroyed.tolist()]
        self.objects: list[Object] = [
            Object(self, i, h, nm, self._classes_by_handle.get(c) if c else None, cx, cr, de)
            for i, (h, nm, c, cx, cr, de) in enumerate(
                zip(
                    ot.handle.tolist(),
                    ot.name,
                    ot.cls.tolist(),
                    ot.context.tolist(),
                    ot.created.tolist(),
                    destroyed,
                    strict=True,
                )
            )
        ]
        self._paths = data.paths
        st = data.series
        n_paths = max(len(self._paths), 1)
        self._series_key = (st.object.astype(np.int64) * n_paths + st.path) * 2 + st.family
        self._series_order = np.argsort(self._series_key, kind="stable")
        self._series_sorted = self._series_key[self._series_order]
        self._n_paths = n_paths
        self._cache: dict[int, Series | ListSeries] = {}
        self._path_ids: dict[tuple[int, ...], int] = {p: i for i, p in enumerate(self._paths)}
        self._handle_lifetimes: dict[int, list[int]] | None = None
        self._blocks: SampleBlocks | None = None
        self._by_class: tuple[int, dict[int, np.ndarray]] | None = None

    # ---------------------------------------------------------------- opening

    @classmethod
    def open(
        cls,
        source: str | os.PathLike | bytes | bytearray | memoryview | np.ndarray,
        *,
        source_name: str | None = None,
    ) -> Recording:
        """Open an ``.ovd`` or ``.h5`` recording from a path, or an ``.ovd`` / HDF5 image in memory.

        The format is told by the first bytes (HDF5 signature), else by the extension. A damaged
        or truncated ``.ovd`` opens with a :class:`~pvdkit.types.PvdWarning` and holds every
        command before the damage. Raises :class:`PvdError` for a missing or unreadable file,
        or a path that is not a regular file (device, FIFO, directory).
        """
        if isinstance(source, (bytes, bytearray, memoryview, np.ndarray)):
            from pvdkit.ovd.tokenizer import as_byte_array

            buf = as_byte_array(source)
            name = source_name or "<memory>"
            if bytes(buf[:8]) == HDF5_SIGNATURE:
                from pvdkit.h5.reader import open_h5_data

                return cls(open_h5_data(bytes(buf), name))
            try:
                check_ovd_header(bytes(buf[:12]), name)
            except PvdError as exc:
                if _names_a_file(source):
                    raise PvdError(f"{exc}; bytes are read as the recording itself: for the file "
                                   f"{os.fsdecode(source)!r}, pass its name as a str or Path") from None
                raise
        else:
            from pvdkit.outputs import open_input

            name = os.fspath(source)
            with open_input(name) as f:
                try:
                    head = f.read(12)
                except OSError as exc:
                    raise PvdError(f"cannot read {name}: {exc.strerror or exc}") from None
            if head[:8] == HDF5_SIGNATURE:
                from pvdkit.h5.reader import open_h5_data

                h5_data = open_h5_data(name, source_name or name)
                if h5_data.error is not None:  # damaged source, or a writer that did not finish
                    warnings.warn(h5_data.error, PvdWarning, stacklevel=2)
                return cls(h5_data)
            if name.lower().endswith((".h5", ".hdf5")) and not is_ovd_header(head):
                raise PvdError(f"{name}: not an HDF5 file (the first 8 bytes are not the HDF5 signature) "
                               "nor an .ovd stream")
            check_ovd_header(head, name)
            from pvdkit.ovd.tokenizer import read_file

            buf = read_file(name)
        # The .ovd indexer is imported here: opening an .h5 recording does not need it.
        from pvdkit.index.builder import read_ovd_data

        data = read_ovd_data(buf, source_name=name)
        if data.error is not None:
            warnings.warn(data.error, PvdWarning, stacklevel=2)
        return cls(data)

    @staticmethod
    def stream(source_name: str = "<stream>") -> LiveRecording:
        """An empty recording to be fed an ``.ovd`` stream as it arrives (:class:`LiveRecording`:
        ``feed(bytes)``); it answers every query of this class over what it received so far."""
        return LiveRecording(source_name)

    def preload(self, other: Recording | None = None) -> None:
        """Read the samples of every series into memory in bulk, for tools that will read them
        all (``pvdkit diff``, converters): an HDF5 recording is read with one read per pool
        dataset instead of one per series segment, an ``.ovd`` gathered in one pass over the
        stream. ``other``: a recording that this one will be compared with (its HDF5 chunks
        stored byte-identically in both files are then copied, not decompressed again).
        Costs the memory of the decoded samples; later series queries only slice.
        """
        self._data.preload(other._data if other is not None else None)

    def close(self) -> None:
        """Release the underlying file (HDF5) or buffer; queries already made stay valid."""
        self._data.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"<Recording {self.source_name}: {len(self.classes)} classes, {len(self.objects)} objects, "
            f"{len(self.frames)} frames>"
        )

    # ---------------------------------------------------------------- time

    @cached_property
    def time_base(self) -> TimeBase:
        """How frames map to simulated seconds (:class:`TimeBase`: PhysX's ``PxScene.elapsedTime``,
        simcore's ``Simulation.time``, or unknown); read once, on first use."""
        return _time_base(self)

    def seconds(self, frames: np.ndarray | int) -> np.ndarray | float:
        """Simulated seconds of frame numbers (``rec.seconds(series.frames)``); :class:`PvdError`
        when :attr:`time_base` is unknown or a frame is not one of the recording's."""
        _check_frames(frames, len(self.frames))
        return self.time_base.seconds_of(frames)

    # ---------------------------------------------------------------- registry

    @property
    def data(self) -> RecordingData:
        """The numpy tables behind this recording (for writers and converters)."""
        return self._data

    def counts(self) -> dict[str, int]:
        """Commands per kind (the keys ``pvdkit info`` prints)."""
        return dict(self._data.counts())

    def cls(self, name_or_handle: str | int) -> Class:
        """The class of that name (or handle); :class:`PvdError` if there is none."""
        c = (
            self._classes_by_handle.get(name_or_handle)
            if isinstance(name_or_handle, int)
            else self.classes.get(name_or_handle)
        )
        if c is None:
            hint = ""
            if isinstance(name_or_handle, str):
                import difflib

                close = difflib.get_close_matches(name_or_handle, list(self.classes), n=3, cutoff=0.7)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise PvdError(f"{self.source_name}: no class {name_or_handle!r}{hint}")
        return c

    def attribute(self, handle: int) -> Attribute:
        """The attribute registered with ``handle``."""
        a = self._attributes.get(handle)
        if a is None:
            raise PvdError(f"{self.source_name}: no attribute with handle {handle}")
        return a

    @property
    def classes_by_handle(self) -> dict[int, Class]:
        """Every registered class by handle (``classes`` is by name)."""
        return dict(self._classes_by_handle)

    @property
    def attributes(self) -> dict[int, Attribute]:
        """Every registered attribute (including enum values) by handle."""
        return dict(self._attributes)

    # ---------------------------------------------------------------- objects

    def objects_of_class(self, cls: str | Class, *, derived: bool = True) -> list[Object]:
        """Objects (lifetimes) of a class, in order of creation; ``derived`` includes subclasses.

        The objects are grouped by class handle once (numpy, over the object table's class
        column; again when a live recording gained objects), so a call tests only the few
        classes that have objects, not every object: a viewer asks per vehicle of a
        28,000-object fleet."""
        c = self.cls(cls) if isinstance(cls, str) else cls
        groups = self._class_groups()
        by_handle = self._classes_by_handle
        if derived:
            found = [idx for h, idx in groups.items() if (k := by_handle.get(h)) is not None and k.is_a(c)]
        else:
            found = [groups[c.handle]] if by_handle.get(c.handle) is c and c.handle in groups else []
        if not found:
            return []
        idx = found[0] if len(found) == 1 else np.sort(np.concatenate(found))
        objects = self.objects
        return [objects[i] for i in idx.tolist()]

    def _class_groups(self) -> dict[int, np.ndarray]:
        """Class handle → indices of its objects (ascending), implicit objects (0) left out."""
        n = len(self.objects)
        if self._by_class is None or self._by_class[0] != n:
            col = self._data.objects.cls[:n]
            order = np.argsort(col, kind="stable")
            handles, starts = np.unique(col[order], return_index=True)
            parts = np.split(order, starts[1:]) if n else []
            groups = {h: part for h, part in zip(handles.tolist(), parts, strict=True) if h}
            self._by_class = (n, groups)
        return self._by_class[1]

    def objects_at(self, frame: int) -> list[Object]:
        """Objects that existed during ``frame`` (see :meth:`Object.alive_at`), in creation order."""
        ot = self._data.objects
        alive = (ot.created <= frame) & (ot.destroyed >= frame)
        return [self.objects[i] for i in np.flatnonzero(alive).tolist()]

    def find_object(self, name_or_handle: str | int, frame: int | None = None) -> Object:
        """The object of that name or handle (decimal or 0x-hex string also accepted).

        With several matches (handle reused, duplicate names) the one alive at ``frame`` is
        chosen, else the first. :class:`PvdError` if none matches.
        """
        if isinstance(name_or_handle, bool) or not isinstance(name_or_handle, str | int | np.integer):
            raise PvdError(f"{self.source_name}: an object is named by its name or handle, not by "
                           f"{type(name_or_handle).__name__} {name_or_handle!r}")
        if isinstance(name_or_handle, np.integer):
            name_or_handle = int(name_or_handle)
        cands: list[Object] = []
        if isinstance(name_or_handle, str):
            cands = [o for o in self.objects if o.name == name_or_handle]
            if not cands:
                try:
                    name_or_handle = int(name_or_handle, 0)
                except ValueError:
                    pass
        if not cands and isinstance(name_or_handle, int):
            cands = [self.objects[i] for i in self._lifetimes_of(name_or_handle)]
        if not cands:
            raise PvdError(f"{self.source_name}: no object named or with handle {name_or_handle!r}")
        if frame is not None:
            alive = [o for o in cands if o.alive_at(frame)]
            if alive:
                return alive[-1]
        return cands[0]

    def _lifetimes_of(self, handle: int) -> list[int]:
        if self._handle_lifetimes is None:
            m: dict[int, list[int]] = {}
            for o in self.objects:
                m.setdefault(o.handle, []).append(o.index)
            self._handle_lifetimes = m
        return self._handle_lifetimes.get(int(handle), [])

    def resolve(self, handle: int, frame: int | None = None) -> Object | None:
        """The object a handle value refers to at ``frame`` (the latest lifetime created at or
        before it; any lifetime if ``frame`` is None); None for 0 or unknown handles."""
        lives = self._lifetimes_of(int(handle))
        if not lives:
            return None
        if frame is None:
            return self.objects[lives[-1]]
        best = None
        for i in lives:
            if self.objects[i].created <= frame:
                best = self.objects[i]
        return best if best is not None else self.objects[lives[0]]

    # ---------------------------------------------------------------- series

    def _path_of(
        self, obj: Object, attribute: str | Attribute | Sequence[Attribute | int]
    ) -> tuple[tuple[int, ...], tuple[Attribute, ...] | None, str]:
        if isinstance(attribute, str):
            chain = obj.cls.paths.get(attribute) if obj.cls is not None else None
            if chain is not None:
                return tuple(a.handle for a in chain), chain, attribute
            # A series the object has under that name: a path Class.paths does not expand, or
            # an unregistered one (named by its handles, "3/4"), as state_at names them.
            for sid in self.series_ids_of(obj).tolist():
                pid = int(self._data.series.path[sid])
                found, name = self._path_name(pid)
                if name == attribute:
                    return self._paths[pid], found, attribute
            if obj.cls is not None:
                known = ", ".join(sorted(obj.cls.paths)[:12])
                has = f"it has: {known}{' …' if len(obj.cls.paths) > 12 else ''}" if known else "it has none"
                raise PvdError(f"{self.source_name}: class {obj.cls.name} has no attribute {attribute!r} "
                               f"({has})")
            # implicit object: match registered attribute names
            for pid, p in enumerate(self._paths):
                chain, name = self._path_name(pid)
                if chain is not None and name == attribute:
                    return p, chain, attribute
            raise PvdError(f"{self.source_name}: object 0x{obj.handle:x} has no attribute {attribute!r}")
        if isinstance(attribute, Attribute):
            attribute = (attribute,)
        handles = tuple(a.handle if isinstance(a, Attribute) else int(a) for a in attribute)
        chain = tuple(self._attributes.get(h) for h in handles)
        if None in chain:
            return handles, None, "/".join(str(h) for h in handles)
        return handles, chain, _dotted(chain, handles)  # type: ignore[arg-type]

    def _sid(self, obj: Object, handles: tuple[int, ...], family: int) -> int:
        pid = self._path_ids.get(handles)
        if pid is None:
            return -1
        key = (obj.index * self._n_paths + pid) * 2 + family
        j = int(self._series_sorted.searchsorted(key))
        if j < len(self._series_sorted) and self._series_sorted[j] == key:
            return int(self._series_order[j])
        return -1

    def series(
        self, obj: Object | str | int, attribute: str | Attribute | Sequence[Attribute | int]
    ) -> Series | ListSeries:
        """The time series of one attribute (dotted path name, Attribute, or handle path) of an
        object (Object, name or handle). Unique-list attributes give a :class:`ListSeries`.
        An attribute that was never set gives an empty series; an unknown name raises
        :class:`PvdError`.
        """
        if not isinstance(obj, Object):
            obj = self.find_object(obj)
        handles, chain, name = self._path_of(obj, attribute)
        family = FAMILY_LIST if chain and chain[-1].kind == "unique_list" else FAMILY_SET
        sid = self._sid(obj, handles, family)
        if sid < 0 and chain is None:
            sid = self._sid(obj, handles, FAMILY_LIST)
            family = FAMILY_LIST if sid >= 0 else family
        return self._series_by_id(sid, obj, chain, name, family)

    def _series_by_id(self, sid: int, obj: Object, chain, name: str, family: int) -> Series | ListSeries:
        if sid >= 0 and sid in self._cache:
            return self._cache[sid]
        if sid >= 0:
            samples = self._data.load_samples(sid)
        else:
            samples = Samples(
                np.zeros(0, np.int32),
                fixed=np.zeros((0, 0), np.uint8),
                ops=np.zeros(0, np.uint8) if family == FAMILY_LIST else None,
            )
        s = (ListSeries if family == FAMILY_LIST else Series)(self, obj, chain, name, samples)
        if sid >= 0:
            if len(self._cache) > 4096:
                self._cache.pop(next(iter(self._cache)))
            self._cache[sid] = s
        return s

    def series_ids(self, objects: np.ndarray, paths: np.ndarray, family: np.ndarray) -> np.ndarray:
        """Ids of the series (object index, path id, family) of each element, -1 where the
        object has no such series (vectorised :meth:`series` look-up, for bulk tools)."""
        key = (np.asarray(objects, np.int64) * self._n_paths + np.asarray(paths, np.int64)) * 2 + np.asarray(
            family, np.int64)
        j = np.minimum(np.searchsorted(self._series_sorted, key), max(len(self._series_sorted) - 1, 0))
        if not len(self._series_sorted):
            return np.full(len(key), -1, np.int64)
        return np.where(self._series_sorted[j] == key, self._series_order[j], -1).astype(np.int64)

    def series_by_id(self, sid: int) -> Series | ListSeries:
        """The series of row ``sid`` of :meth:`series_table` (for bulk tools)."""
        st = self._data.series
        chain, name = self._path_name(int(st.path[sid]))
        return self._series_by_id(sid, self.objects[int(st.object[sid])], chain, name, int(st.family[sid]))

    def sample_blocks(self) -> SampleBlocks:
        """The samples of every series at once (:class:`~pvdkit.index.tables.SampleBlocks`),
        for tools that read them all: after :meth:`preload` an HDF5 recording gives them in one
        gather per pool; other sources are gathered here, one block per sample size."""
        if self._blocks is None:
            self._blocks = self._data.sample_blocks() or self._gather_blocks()
        return self._blocks

    def _gather_blocks(self) -> SampleBlocks:
        n = len(self._data.series)
        block = np.full(n, -1, np.int32)
        start = np.zeros(n, np.int64)
        count = np.zeros(n, np.int64)
        parts: dict[tuple[int, bool], list[tuple[int, Samples]]] = {}
        for sid in range(n):
            smp = self._data.load_samples(sid)
            if smp.fixed is not None and len(smp):
                parts.setdefault((smp.fixed.shape[1], smp.ops is not None), []).append((sid, smp))
        frames, raw, ops = [], [], []
        for b, ((size, listy), items) in enumerate(parts.items()):
            sids = np.array([sid for sid, _ in items], np.int64)
            lens = np.array([len(smp) for _, smp in items], np.int64)
            block[sids], count[sids] = b, lens
            start[sids] = np.cumsum(lens) - lens
            frames.append(np.concatenate([smp.frames for _, smp in items]).astype(np.int32, copy=False))
            # Rows given, not -1: a series of empty payloads has size 0 (legal: a variable-length
            # attribute set to no elements), and reshape cannot infer rows of 0 bytes.
            fixed = np.concatenate([smp.fixed for _, smp in items]).reshape(int(lens.sum()), size)
            raw.append(np.ascontiguousarray(fixed))
            ops.append(np.concatenate([smp.ops for _, smp in items]).astype(np.uint8) if listy else None)
        # One segment per held series (an empty one for the others).
        return SampleBlocks(frames, raw, ops, block, count, np.arange(n + 1, dtype=np.int64), start, count)

    def sample_blocks_of(self, sids: np.ndarray) -> SampleBlocks:
        """The samples of the series ``sids`` at once, as :class:`SampleBlocks` whose series ``k``
        is ``sids[k]`` (``block[k]`` -1: not held, read it with :meth:`series_by_id`).

        For tools that need many series but not the whole file (the viewer opening a 256-car
        fleet reads ~30,000 object-handle series and ~5,000 poses): series by series costs an
        HDF5 slice per segment (~100 µs a series), :meth:`preload` decodes every pool. An HDF5
        recording reads, per pool, only the chunks holding these series' rows (one read per run
        of adjacent chunks); a preloaded recording is sliced; other sources read series by series.
        """
        sids = np.asarray(sids, np.int64).reshape(-1)
        n = len(sids)
        full = self._blocks or self._data.sample_blocks()
        if full is not None:
            nseg = full.first[sids + 1] - full.first[sids]
            segs = _ranges(full.first[sids], nseg)
            first = np.concatenate([[0], np.cumsum(nseg)]).astype(np.int64)
            return SampleBlocks(full.frames, full.raw, full.ops, full.block[sids], full.count[sids], first,
                                full.seg_start[segs], full.seg_count[segs])
        h5 = getattr(self._data.load_samples, "__self__", None)  # the HDF5 reader's sample access
        if not all(hasattr(h5, a) for a in ("seg", "seg_first", "pools", "src")):
            per = [self._data.load_samples(int(s)) for s in sids.tolist()]
            count = np.array([len(s) for s in per], np.int64)
            groups: dict[tuple[int, bool], list[int]] = {}
            for k, s in enumerate(per):
                if s.fixed is not None and len(s):
                    groups.setdefault((s.fixed.shape[1], s.ops is not None), []).append(k)
            block = np.full(n, -1, np.int32)
            start = np.zeros(n, np.int64)
            frames, raw, ops = [], [], []
            for b, ((size, listy), ks) in enumerate(groups.items()):
                block[ks] = b
                start[ks] = np.cumsum(count[ks]) - count[ks]
                frames.append(np.concatenate([per[k].frames for k in ks]).astype(np.int32, copy=False))
                rows = int(count[ks].sum())  # not -1: rows of 0-byte payloads cannot be inferred
                fixed = np.concatenate([per[k].fixed for k in ks]).reshape(rows, size)
                raw.append(np.ascontiguousarray(fixed))
                ops.append(np.concatenate([per[k].ops for k in ks]).astype(np.uint8) if listy else None)
            held = block >= 0
            first = np.concatenate([[0], np.cumsum(held)]).astype(np.int64)
            return SampleBlocks(frames, raw, ops, block, count, first, start[held], count[held])

        def take(ds: Any, rows: np.ndarray) -> np.ndarray:
            """Rows of a pool dataset (or of its preloaded array), reading whole chunk runs."""
            if isinstance(ds, np.ndarray) or not len(rows):
                return np.asarray(ds[rows]) if len(rows) else np.zeros((0,) + ds.shape[1:], ds.dtype)
            order = np.argsort(rows, kind="stable")
            srt = rows[order]
            ch = max(ds.chunks[0] if ds.chunks else ds.shape[0], 1)
            ids = np.unique(srt // ch)
            cut = np.flatnonzero(np.diff(ids) != 1) + 1
            out = np.empty((len(rows),) + ds.shape[1:], ds.dtype)
            for run in np.split(ids, cut):  # rows of these chunks, first to last needed
                a, b = np.searchsorted(srt, [int(run[0]) * ch, (int(run[-1]) + 1) * ch])
                lo, hi = int(srt[a]), int(srt[b - 1]) + 1
                out[order[a:b]] = h5.src.read(ds, lo, hi)[srt[a:b] - lo]
            return out

        seg, seg_first = h5.seg, np.asarray(h5.seg_first, np.int64)
        nseg = seg_first[sids + 1] - seg_first[sids]
        segs = _ranges(seg_first[sids], nseg)
        owner = np.repeat(np.arange(n, dtype=np.int64), nseg)
        pool = seg["pool"][segs].astype(np.int64)
        seg_count = seg["count"][segs].astype(np.int64)
        count = np.bincount(owner, weights=seg_count, minlength=n).astype(np.int64)
        lo_pool = np.full(n, np.iinfo(np.int64).max)
        hi_pool = np.full(n, -1, np.int64)
        np.minimum.at(lo_pool, owner, pool)
        np.maximum.at(hi_pool, owner, pool)
        fixed = np.array([h5.pools[p].starts is None for p in range(len(h5.pools))] + [False], bool)
        held = (lo_pool == hi_pool) & (count > 0) & fixed[np.where(hi_pool >= 0, hi_pool, -1)]
        keep = held[owner]
        block = np.full(n, -1, np.int32)
        seg_start = np.zeros(len(segs), np.int64)
        frames, raw, ops = [], [], []
        for b, p in enumerate(np.unique(pool[keep]).tolist()):
            m = keep & (pool == p)
            block[held & (hi_pool == p)] = b
            seg_start[m] = np.cumsum(seg_count[m]) - seg_count[m]
            rows = _ranges(seg["start"][segs[m]], seg_count[m])
            cur = h5.pools[p]
            vals = take(cur.values, rows)
            vals = np.ascontiguousarray(vals.astype(vals.dtype.newbyteorder("<"), copy=False))
            size = vals.dtype.itemsize * int(np.prod(vals.shape[1:]))
            raw.append(vals.view(np.uint8).reshape(len(rows), size))
            frames.append(take(cur.frames, rows).astype(np.int32, copy=False))
            ops.append(take(cur.ops, rows).astype(np.uint8, copy=False) if cur.ops is not None else None)
        first = np.concatenate([[0], np.cumsum(np.where(held, nseg, 0))]).astype(np.int64)
        return SampleBlocks(frames, raw, ops, block, count, first, seg_start[keep], seg_count[keep])

    def series_ids_of(self, obj: Object) -> np.ndarray:
        """Ids of every series of an object (for bulk tools)."""
        lo = obj.index * self._n_paths * 2
        a = np.searchsorted(self._series_sorted, lo)
        b = np.searchsorted(self._series_sorted, lo + self._n_paths * 2)
        return self._series_order[a:b]

    def _path_name(self, pid: int) -> tuple[tuple[Attribute, ...] | None, str]:
        p = self._paths[pid]
        chain = tuple(self._attributes.get(h) for h in p)
        if None in chain:
            return None, "/".join(str(h) for h in p)
        return chain, _dotted(chain, p)  # type: ignore[arg-type]

    def _attribute_names(self, obj: Object) -> list[str]:
        return [self._path_name(int(self._data.series.path[s]))[1] for s in self.series_ids_of(obj)]

    def all_series(self, obj: Object) -> list[Series | ListSeries]:
        """Every series with data for ``obj`` (set and unique-list)."""
        out = []
        for s in self.series_ids_of(obj):
            chain, name = self._path_name(int(self._data.series.path[s]))
            out.append(self._series_by_id(int(s), obj, chain, name, int(self._data.series.family[s])))
        return out

    def value_at(
        self, obj: Object | str | int, attribute: str | Attribute | Sequence[Attribute | int], frame: int
    ) -> Any:
        """Value of an attribute at ``frame``: the last value set at or before it (zero-order
        hold, binary search); None if not yet set. Unique lists give their members.
        :class:`PvdError` for a frame the recording does not have (a value held beyond the last
        frame would hide a frame number mixed up with a timestamp or a step)."""
        _check_frames(_frame_number(frame), len(self.frames))
        return self.series(obj, attribute).at(frame)

    def state_at(self, obj: Object | str | int, frame: int) -> dict[str, Any]:
        """Every attribute of an object at ``frame``: its class's attribute paths (inherited and
        nested included; None where not yet set) plus any other series the object has.
        :class:`PvdError` for a frame the recording does not have."""
        _check_frames(_frame_number(frame), len(self.frames))
        if not isinstance(obj, Object):
            obj = self.find_object(obj, frame)
        out: dict[str, Any] = {}
        if obj.cls is not None:
            for name, chain in obj.cls.paths.items():
                out[name] = [] if chain[-1].kind == "unique_list" else None
        for s in self.all_series(obj):
            out[s.name] = s.at(frame)
        return out

    def series_table(self) -> SeriesTable:
        """One row per series: object lifetime, path id, family, context, sample count."""
        return self._data.series

    def path_name(self, path_id: int) -> str:
        """Dotted attribute name of a path id of :meth:`series_table`."""
        return self._path_name(path_id)[1]


def _dotted(chain: tuple[Attribute, ...], handles: tuple[int, ...]) -> str:
    """The dotted name of a path ("pose.position.xyz"), or its handles ("9/10") when that name
    would be longer than :data:`MAX_PATH_NAME` (255 names of 64 KB would make 16 MB names)."""
    if len(chain) == 1:
        return chain[0].name
    if sum(len(a.name) for a in chain) + len(chain) - 1 > MAX_PATH_NAME:
        return "/".join(str(h) for h in handles)
    return ".".join(a.name for a in chain)


# ============================================================================================
# A recording that grows as its stream arrives
# ============================================================================================


def _series_key(obj: int, pid: int, family: int) -> int:
    return (obj << 33) | (pid << 1) | family


class LiveRecording(Recording):
    """A :class:`Recording` fed an ``.ovd`` stream in pieces (:meth:`feed`), or chunks already
    parsed elsewhere (:meth:`append`), that answers every query over what it received so far.

    Why: the listener, the viewer and users' own tools watch a running simulation through one
    model. A piece costs time in proportion to its bytes (:class:`~pvdkit.index.stream.StreamParser`
    tokenizes only it, :class:`~pvdkit.index.growing.GrowingIndex` appends it); nothing received
    earlier is parsed or indexed again. Ids of objects, paths and series equal those of
    :meth:`Recording.open` on the same bytes.

    Growing in place: ``objects`` gains lifetimes (``destroyed`` is set when the destroy
    arrives), ``frames`` is replaced by one holding the new frames, ``time_base`` is read again
    on next use. A :class:`Series` already returned keeps the samples it had; ask again for
    the new ones. New class registrations rebuild the registry (objects are given the new
    :class:`Class` objects). Damage (``error``) stops the growth: everything before it stays.
    :meth:`snapshot` gives a plain :class:`Recording` that later pieces leave unchanged.
    """

    def __init__(self, source_name: str = "<stream>") -> None:
        from pvdkit.index.growing import GrowingIndex
        from pvdkit.index.stream import StreamParser

        self.parser = StreamParser(source_name)
        self._index = GrowingIndex(source_name)
        super().__init__(self._index.data())
        self._sid_of: dict[int, int] = {}
        self._object_sids: dict[int, list[int]] = {}
        self._handle_lifetimes = {}

    @property
    def bytes_received(self) -> int:
        """Stream bytes fed to :meth:`feed` (header included)."""
        return self.parser.bytes_received

    @property
    def series_count(self) -> int:
        """Series (object, attribute) received so far: it grows when an attribute is written
        for the first time, which is how links between objects (a vehicle's wheels) arrive."""
        return len(self._sid_of)

    def feed(self, data: BytesLike) -> Chunk | None:
        """Take the next bytes of the stream (any split); the commands they completed, now in
        the model (None if none). :class:`~pvdkit.types.PvdError` for a header that is not
        OmniPVD's; damage sets ``error`` and the rest of the stream is ignored."""
        chunk = self.parser.feed(data)
        if chunk is not None:
            self.append(chunk)
        if self.parser.error is not None:
            self.error = self._index.error = self.parser.error
            self._data.error = self.error
        return chunk

    def append(self, chunk: Chunk) -> None:
        """Add the commands of a chunk parsed elsewhere (e.g. returned by
        :meth:`pvdkit.live.LiveRecorder.feed`: one parse serves the file and the model). Chunks
        must come in stream order, each once."""
        table = chunk.table
        if table.error is not None and not table.truncated and self._index.error is None:
            end = table.valid_end  # name the damage by its stream offset, as the parser does
            self._index.error = table.error.replace(f"offset {end}", f"offset {chunk.offset + end}", 1)
        batch = self._index.append(chunk.data, table) if len(table) else None
        self._grow(batch)

    def finish(self) -> str | None:
        """The stream ended: why it cannot be whole (damage, or a command cut at the end; also
        kept in ``incomplete``), None when it ended after a complete command."""
        reason = self.parser.finish()
        if reason is not None and reason != self.error:
            self.incomplete = self._data.incomplete = reason
        return reason

    def snapshot(self) -> Recording:
        """A plain :class:`Recording` of what was received so far, unchanged by later pieces
        (copies objects', frames' and series' columns; sample bytes are shared)."""
        data = self._index.frozen()
        data.incomplete = self.incomplete
        return Recording(data)

    def _grow(self, batch) -> None:
        """Bring the query model up to date with one appended chunk (O(what it added))."""
        d = self._index.data()
        d.incomplete = self.incomplete
        self._data = d
        self.version = d.version
        self.error = d.error
        if batch is None:
            return
        if batch.registrations:
            self._classes_by_handle, self._attributes = build_registry(d.registrations, self.source_name)
            self.classes = {}
            for c in self._classes_by_handle.values():
                self.classes.setdefault(c.name, c)
            for o, h in zip(self.objects, d.objects.cls.tolist(), strict=False):
                o.cls = self._classes_by_handle.get(h) if h else None
        new = batch.objects
        for j, (h, nm, c, cx, cr) in enumerate(zip(new.handle.tolist(), new.name, new.cls.tolist(),
                                                   new.context.tolist(), new.created.tolist(), strict=True)):
            i = batch.object0 + j
            de = int(d.objects.destroyed[i])
            self.objects.append(Object(self, i, h, nm, self._classes_by_handle.get(c) if c else None, cx, cr,
                                       None if de == NEVER else de))
            self._handle_lifetimes.setdefault(h, []).append(i)
        upd = batch.destroyed_updates
        for i, f in zip(upd["object"].tolist(), upd["frame"].tolist(), strict=True):
            self.objects[i].destroyed = f
        self.frames = Frames(d.frames, lambda: self.time_base)
        self.__dict__.pop("time_base", None)
        self.messages = d.messages
        self._paths = d.paths
        for pid in range(batch.path0, batch.path0 + len(batch.paths)):
            self._path_ids[self._paths[pid]] = pid
        self._n_paths = max(len(self._paths), 1)
        st = batch.series
        keys = zip(st.object.tolist(), st.path.tolist(), st.family.tolist(), strict=True)
        for j, (o, p, f) in enumerate(keys):
            sid = batch.series0 + j
            self._sid_of[_series_key(o, p, f)] = sid
            self._object_sids.setdefault(o, []).append(sid)
        if len(batch.attr_rows) or len(st):
            self._cache.clear()  # cached series are missing this chunk's samples
        self._blocks = None

    def _sid(self, obj: Object, handles: tuple[int, ...], family: int) -> int:
        pid = self._path_ids.get(handles)
        return -1 if pid is None else self._sid_of.get(_series_key(obj.index, pid, family), -1)

    def series_ids(self, objects: np.ndarray, paths: np.ndarray, family: np.ndarray) -> np.ndarray:
        """Ids of the series (object index, path id, family) of each element, -1 where none
        (a dictionary look-up each: the sorted keys of :class:`Recording` would be re-sorted
        with every chunk)."""
        get = self._sid_of.get
        return np.array([get(_series_key(o, p, f), -1) for o, p, f in zip(
            np.asarray(objects, np.int64).tolist(), np.asarray(paths, np.int64).tolist(),
            np.asarray(family, np.int64).tolist(), strict=True)], np.int64)

    def series_ids_of(self, obj: Object) -> np.ndarray:
        """Ids of every series of an object, ordered by (path id, family) as in :class:`Recording`."""
        sids = np.asarray(self._object_sids.get(obj.index, []), np.int64)
        st = self._data.series
        return sids[np.argsort(st.path[sids].astype(np.int64) * 2 + st.family[sids], kind="stable")]
