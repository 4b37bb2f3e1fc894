"""The index tables: what the ``.ovd`` indexer and every storage backend fill, and the query
model reads.

Why a layer of their own: a recording is indexed once into numpy columns (no Python object per
command or per sample). The ``.ovd`` indexer (:class:`pvdkit.index.builder.IndexBuilder`)
produces :class:`Batch` es of these tables; a storage backend (:mod:`pvdkit.h5`) writes
batches and reads its files back into :class:`RecordingData`; the query model
(:mod:`pvdkit.recording`) is built on :class:`RecordingData` alone, whatever the source. No
numba and no h5py here: importing the tables costs only numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pvdkit.ovd import codec
from pvdkit.ovd.codec import RegisterClass, Version

if TYPE_CHECKING:
    from pvdkit.ovd.tokenizer import CommandTable

__all__ = [
    "FAMILY_LIST", "FAMILY_SET", "NEVER", "AttributeRegistration", "Batch", "FrameTable", "Message",
    "ObjectTable", "RecordingData", "SampleBlocks", "Samples", "SeriesTable",
]

#: ``destroyed`` frame of an object that is never destroyed (in the numpy tables).
NEVER = np.iinfo(np.int32).max

#: Series families: values set by SET_ATTRIBUTE, or unique-list membership changes.
FAMILY_SET = 0
FAMILY_LIST = 1

AttributeRegistration = (
    codec.RegisterAttribute
    | codec.RegisterEnumValue
    | codec.RegisterFlagsAttribute
    | codec.RegisterClassAttribute
    | codec.RegisterUniqueListAttribute
)


@dataclass
class ObjectTable:
    """One row per object lifetime, in order of appearance (creation, or first use if implicit).

    ``cls`` is 0 and ``create_command`` -1 for implicit objects; ``destroyed`` is :data:`NEVER`
    and ``destroy_command`` -1 while the object lives.
    """

    handle: np.ndarray  # uint64
    cls: np.ndarray  # uint32 class handle
    context: np.ndarray  # uint64
    name: list[str]
    created: np.ndarray  # int32 frame
    destroyed: np.ndarray  # int32 frame or NEVER
    create_command: np.ndarray  # int64 command index, -1 = implicit
    destroy_command: np.ndarray  # int64, -1 = alive

    @staticmethod
    def empty() -> ObjectTable:
        return ObjectTable(
            np.zeros(0, np.uint64),
            np.zeros(0, np.uint32),
            np.zeros(0, np.uint64),
            [],
            np.zeros(0, np.int32),
            np.zeros(0, np.int32),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
        )

    def __len__(self) -> int:
        return len(self.handle)


@dataclass
class FrameTable:
    """One row per START_FRAME: its context and timestamps (``stop`` valid where ``stopped``)."""

    context: np.ndarray  # uint64
    start: np.ndarray  # uint64
    stop: np.ndarray  # uint64
    stopped: np.ndarray  # bool
    command: np.ndarray  # int64 index of the START_FRAME command

    def __len__(self) -> int:
        return len(self.context)


@dataclass
class SeriesTable:
    """One row per series: a (object lifetime, attribute path, family) with its sample count.

    ``context`` is the context of the series' first command (later commands with another context
    are kept as exceptions by the HDF5 format); ``family`` is :data:`FAMILY_SET` or
    :data:`FAMILY_LIST`.
    """

    object: np.ndarray  # int64 lifetime index
    path: np.ndarray  # int32 path id
    family: np.ndarray  # uint8
    context: np.ndarray  # uint64
    count: np.ndarray  # int64 number of samples

    def __len__(self) -> int:
        return len(self.object)


@dataclass(frozen=True)
class Message:
    """A RECORD_MESSAGE: text, source location, type and the frame it was recorded in."""

    context: int
    message: str
    file: str
    line: int
    type: int
    class_handle: int
    frame: int
    command: int


@dataclass
class Samples:
    """Raw samples of one series as bytes: fixed-size ``(n, size)`` or ragged ``flat``/``offsets``.

    ``ops`` holds the command code of each sample of a unique-list series (7 add, 8 remove).
    """

    frames: np.ndarray  # int32
    fixed: np.ndarray | None = None  # (n, size) uint8
    flat: np.ndarray | None = None  # uint8
    offsets: np.ndarray | None = None  # int64 (n + 1)
    ops: np.ndarray | None = None  # uint8

    def __len__(self) -> int:
        return len(self.frames)

    def payload(self, i: int) -> bytes:
        """Raw bytes of sample ``i``."""
        if self.fixed is not None:
            return self.fixed[i].tobytes()
        return self.flat[self.offsets[i] : self.offsets[i + 1]].tobytes()

    def sizes(self) -> np.ndarray:
        """Payload size in bytes of each sample."""
        if self.fixed is not None:
            return np.full(len(self.frames), self.fixed.shape[1], np.int64)
        return np.diff(self.offsets)

    @staticmethod
    def concat(parts: Sequence[Samples]) -> Samples:
        """Join consecutive pieces of one series (e.g. HDF5 segments) in order."""
        if len(parts) == 1:
            return parts[0]
        frames = np.concatenate([p.frames for p in parts]) if parts else np.zeros(0, np.int32)
        ops = np.concatenate([p.ops for p in parts]) if parts and parts[0].ops is not None else None
        widths = {p.fixed.shape[1] if p.fixed is not None else -1 for p in parts}
        if parts and len(widths) == 1 and -1 not in widths:
            return Samples(frames, fixed=np.concatenate([p.fixed for p in parts]), ops=ops)
        flats, offs, base = [], [np.zeros(1, np.int64)], 0
        for p in parts:
            if p.fixed is not None:
                flats.append(p.fixed.reshape(-1))
                o = np.arange(1, len(p.frames) + 1, dtype=np.int64) * p.fixed.shape[1]
            else:
                flats.append(p.flat)
                o = p.offsets[1:]
            offs.append(o + base)
            base += len(flats[-1])
        flat = np.concatenate(flats) if flats else np.zeros(0, np.uint8)
        return Samples(frames, flat=flat, offsets=np.concatenate(offs), ops=ops)


@dataclass
class SampleBlocks:
    """The fixed-size samples of every series at once, for tools that compare or scan whole
    recordings (``pvdkit diff``): asking :class:`Samples` series by series costs a Python call
    (and for HDF5 a slice per segment) per series, which dominates on recordings of many objects.

    A block holds samples of one size: ``frames[b]`` (int32), ``raw[b]`` (``(n, size)`` uint8,
    C-contiguous) and ``ops[b]`` (uint8 command codes of a unique-list block, else None); for
    HDF5 a block is a pool as stored (no copy). Series ``s`` is the rows of its segments
    ``first[s] : first[s + 1]`` in order: rows ``seg_start[k] : seg_start[k] + seg_count[k]`` of
    block ``block[s]``. ``block[s]`` is -1 for a series not held here (variable-size samples,
    samples of several sizes, no samples): read it with ``load_samples``.
    """

    frames: list[np.ndarray]
    raw: list[np.ndarray]
    ops: list[np.ndarray | None]
    block: np.ndarray  # int32 per series
    count: np.ndarray  # int64 samples per series
    first: np.ndarray  # int64 per series + 1: its first segment
    seg_start: np.ndarray  # int64 per segment
    seg_count: np.ndarray  # int64 per segment

    def rows(self, sids: np.ndarray) -> np.ndarray:
        """Block rows of the samples of series ``sids`` (all held in one block), series after series."""
        segs = _ranges(self.first[sids], self.first[sids + 1] - self.first[sids])
        return _ranges(self.seg_start[segs], self.seg_count[segs])

    def samples(self, sid: int) -> Samples:
        """The :class:`Samples` of series ``sid`` (held in a block)."""
        b = int(self.block[sid])
        rows = self.rows(np.array([sid]))
        ops = self.ops[b]
        return Samples(self.frames[b][rows], fixed=self.raw[b][rows],
                       ops=ops[rows] if ops is not None else None)


def _ranges(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(start[k], start[k] + count[k])`` (int64)."""
    start, count = np.asarray(start, np.int64), np.asarray(count, np.int64)
    ends = np.cumsum(count)
    n = int(ends[-1]) if len(ends) else 0
    return np.arange(n, dtype=np.int64) + np.repeat(start - (ends - count), count)


@dataclass
class RecordingData:
    """Everything a :class:`Recording` needs from a source, in numpy tables.

    ``load_samples(series_id)`` returns the :class:`Samples` of one series; ``counts()`` the
    command counts under the keys of :data:`pvdkit.ovd.COUNT_KEYS`. ``preload(other)`` reads
    the samples of every series into memory in bulk, so that later ``load_samples`` calls only
    slice (``other``: the data of a recording about to be compared with this one, which a
    source may use to skip work, e.g. HDF5 chunks stored identically in both files).
    """

    version: Version
    source_name: str
    registrations: list[RegisterClass | AttributeRegistration]
    objects: ObjectTable
    frames: FrameTable
    messages: list[Message]
    paths: list[tuple[int, ...]]
    series: SeriesTable
    counts: Callable[[], dict[str, int]]
    load_samples: Callable[[int], Samples]
    error: str | None = None
    #: Why the recording is incomplete (its writer was interrupted or killed); None when whole.
    incomplete: str | None = None
    close: Callable[[], None] = lambda: None
    n_commands: int = 0
    preload: Callable[[RecordingData | None], None] = lambda other=None: None
    #: The :class:`SampleBlocks` of a preloaded source that can give them without a call per
    #: series (HDF5); None otherwise (:meth:`pvdkit.recording.Recording.sample_blocks` then
    #: builds them from ``load_samples``).
    sample_blocks: Callable[[], SampleBlocks | None] = lambda: None


@dataclass
class Batch:
    """What one piece of a stream adds to the index (all indices global).

    Rows are the commands of ``table`` (a tokenizer table over ``buffer``); ``row0`` is the global
    index of its first command. Attribute commands are ``attr_rows`` (local row indices) with
    their series ids ``attr_series``; ``context_exceptions`` lists (global command index,
    context) of attribute commands whose context differs from their series' context.
    """

    row0: int
    buffer: np.ndarray
    table: CommandTable
    registrations: list[tuple[int, RegisterClass | AttributeRegistration]]
    objects: ObjectTable  # new lifetimes
    object0: int  # index of the first new lifetime
    destroys: dict[str, np.ndarray]  # context, handle, object, command, frame
    destroyed_updates: dict[str, np.ndarray]  # object, frame, command (lifetimes ended here)
    frames: FrameTable  # new frames (stop filled when it arrived in this batch)
    frame0: int
    stops: dict[str, np.ndarray]  # context, time, frame, command
    stop_updates: dict[str, np.ndarray]  # frame, time (earlier frames stopped here)
    messages: list[Message]
    paths: list[tuple[int, ...]]  # new paths
    path0: int
    series: SeriesTable  # new series (count = samples in this batch)
    series0: int
    attr_rows: np.ndarray
    attr_series: np.ndarray
    context_exceptions: tuple[np.ndarray, np.ndarray]

    @property
    def series_counts(self) -> np.ndarray:
        """Samples added per series id in this batch (every id below ``series0 + len(series)``).

        Counted when asked (merging a stream's batches): a small batch of a stream with 131k
        series would otherwise carry a 1 MB array for a handful of samples."""
        return np.bincount(self.attr_series, minlength=self.series0 + len(self.series))
