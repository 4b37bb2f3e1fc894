"""Index a whole OmniPVD stream into numpy columns, one row per command, with a compiled loop.

Why columns: a 1 GB recording holds tens of millions of commands; one Python object each would
cost gigabytes and minutes. :func:`tokenize` instead runs a compiled (numba) loop twice over the
bytes — once to count the complete commands, once to fill preallocated arrays (in parallel for
large inputs) — and returns a :class:`CommandTable` of fixed-width columns (40 bytes per
command; ``end`` and ``data_offset`` follow from the others and are computed on first use).
Values stay in the buffer; ``data_offset``/``data_size`` point at them, and
:func:`decode_command` turns any single row into a :mod:`pvdkit.ovd.codec` dataclass when a
caller needs the full command.

Damage never raises: the table holds every complete command before it, ``valid_end`` is where
the last complete command ends and ``error`` names the source and byte offset. Only a missing,
unreadable or too-new header raises :class:`~pvdkit.types.PvdError`.

Incremental use (a stream arriving in pieces, e.g. the HDF5 recorder): tokenize what has arrived;
keep ``buffer[table.valid_end:]`` (an incomplete last command is reported with
``truncated=True``); when more bytes arrive, tokenize ``tail + new_bytes`` with
``version=table.version`` (no header expected) and ``start_frame=table.last_frame``. Offsets in
each table are relative to the buffer passed to that call.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pvdkit.outputs import open_input
from pvdkit.ovd import kernels
from pvdkit.ovd.codec import (
    DecodedCommand,
    Version,
    check_version,
    decode_command_at,
    decode_header,
    has_base_class,
)
from pvdkit.ovd.layout import (
    COUNT_KEYS,
    HEADER_SIZE,
    MIN_COMMAND_BYTES,
    NO_DATA_TYPE,
    PAIR_SECOND,
    REGISTER_DATA_TYPE,
    command_counts,
    payload_offsets,
)
from pvdkit.types import Command, DataType, PvdError, PvdWarning

__all__ = [
    "COUNT_KEYS", "NO_DATA_TYPE", "CommandTable", "Scan", "as_byte_array", "attribute_payload",
    "count_commands", "decode_command", "empty_columns", "frame_timestamps", "gather_u32", "gather_u64",
    "iter_commands", "open_ovd", "payload_offsets", "read_file", "tokenize",
]

#: Rows between fill checkpoints (the unit of parallel work).
_CHUNK = 1 << 16
#: Below this many rows the fill runs on the calling thread only (thread start-up would dominate).
_PARALLEL_MIN_ROWS = 4 * _CHUNK


@dataclass(eq=False)
class CommandTable:
    """One row per complete command of a stream, in stream order, as numpy columns.

    Offsets are byte positions in the buffer that was tokenized. Columns:

    ``kind`` (uint8)
        The :class:`~pvdkit.types.Command` code.
    ``offset`` / ``end`` (int64)
        Position of the command byte, and one past the command's last byte.
    ``frame`` (int32)
        Number of START_FRAME rows at or before this row, minus 1, plus ``start_frame + 1``:
        a START_FRAME row carries its own new frame index; rows before any frame are -1.
    ``context`` (uint64)
        The context handle of every command that has one (attribute commands, create/destroy,
        start/stop frame, record_message); 0 for registrations.
    ``object`` (uint64)
        The object handle of attribute commands and create/destroy; 0 elsewhere.
    ``attribute`` (uint32), ``depth`` (uint8)
        For SET / ADD_TO / REMOVE_FROM rows: the last handle of the attribute path and the
        number of handles (the handles are u32s at ``offset + 18``); 0 elsewhere.
    ``data_offset`` (int64), ``data_size`` (uint32)
        For SET / ADD_TO / REMOVE_FROM rows: where the payload starts and its length; 0 elsewhere.
    ``data_type`` (uint16)
        For REGISTER_ATTRIBUTE rows the wire data type (ENUM_VALUE = an enum value, FLAGS_WORD =
        a flags attribute), for REGISTER_UNIQUE_LIST_ATTRIBUTE rows the item type;
        :data:`NO_DATA_TYPE` elsewhere.

    ``valid_end`` is where the last complete command ends; ``error`` is None for an intact
    stream, else a message naming ``source_name`` and the byte offset of the damage;
    ``truncated`` is True when the stream merely stops inside a command (more bytes may
    complete it), False for other damage (an unknown command code or impossible field).
    """

    version: Version
    kind: np.ndarray
    offset: np.ndarray
    frame: np.ndarray
    context: np.ndarray
    object: np.ndarray
    attribute: np.ndarray
    depth: np.ndarray
    data_size: np.ndarray
    data_type: np.ndarray
    valid_end: int
    error: str | None = None
    truncated: bool = False
    source_name: str = "<memory>"
    start_frame: int = -1

    def __len__(self) -> int:
        return len(self.kind)

    @cached_property
    def end(self) -> np.ndarray:
        """One past each command's last byte (int64): commands are contiguous, so this is the
        next row's ``offset`` and, for the last row, ``valid_end`` (derived on first use rather
        than written by the scan: a whole column less to fill when opening a file)."""
        out = np.empty(len(self.offset), np.int64)
        if len(out):
            out[:-1] = self.offset[1:]
            out[-1] = self.valid_end
        return out

    @cached_property
    def data_offset(self) -> np.ndarray:
        """Payload position (int64) of SET / ADD_TO / REMOVE_FROM rows, 0 elsewhere: the payload
        follows the command byte, two u64 handles, the depth byte, ``depth`` u32 handles and the
        u32 size (derived on first use, see ``end``)."""
        return payload_offsets(self.kind, self.offset, self.depth)

    @property
    def last_frame(self) -> int:
        """Frame index of the last row (``start_frame`` when empty): pass it on to continue."""
        return int(self.frame[-1]) if len(self.frame) else self.start_frame

    @property
    def nbytes(self) -> int:
        """Memory held by the columns (bytes; ``end``/``data_offset`` once they were used)."""
        held = [name for name in _COLUMNS if name in _STORED or name in self.__dict__]
        return sum(getattr(self, name).nbytes for name in held)

    def counts(self) -> dict[str, int]:
        """Commands per kind under the keys of :data:`COUNT_KEYS` (``pvdkit info``'s keys).

        REGISTER_ATTRIBUTE rows split three ways by their wire data type: plain attributes
        (``register_attribute``), enum values (``register_enum``) and flags attributes
        (``register_flags``).
        """
        per_kind = np.bincount(self.kind, minlength=int(Command.RECORD_MESSAGE) + 1)
        reg = self.data_type[self.kind == Command.REGISTER_ATTRIBUTE]
        n_enum = int(np.count_nonzero(reg == DataType.ENUM_VALUE))
        n_flags = int(np.count_nonzero(reg == DataType.FLAGS_WORD))
        return command_counts(per_kind, len(reg) - n_enum - n_flags, n_enum, n_flags)

    def rows(self, *kinds: Command | int) -> np.ndarray:
        """Row indices (int64) of the commands of the given kinds, in stream order."""
        return np.flatnonzero(np.isin(self.kind, np.asarray(kinds, dtype=np.uint8)))


_COLUMNS = (
    "kind", "offset", "end", "frame", "context", "object", "attribute", "depth",
    "data_offset", "data_size", "data_type",
)
#: The columns the scan writes (the others are derived from them on first use).
_STORED = (
    "kind", "offset", "frame", "context", "object", "attribute", "depth", "data_size", "data_type",
)


def empty_columns(n: int) -> dict[str, np.ndarray]:
    """Uninitialised stored columns for ``n`` rows (every row of every column gets written)."""
    return {
        "kind": np.empty(n, np.uint8),
        "offset": np.empty(n, np.int64),
        "frame": np.empty(n, np.int32),
        "context": np.empty(n, np.uint64),
        "object": np.empty(n, np.uint64),
        "attribute": np.empty(n, np.uint32),
        "depth": np.empty(n, np.uint8),
        "data_size": np.empty(n, np.uint32),
        "data_type": np.empty(n, np.uint16),
    }


def as_byte_array(buffer) -> np.ndarray:
    """A 1-D uint8 numpy view of any bytes-like object, uint8 array or mmap (no copy)."""
    if isinstance(buffer, np.ndarray):
        if buffer.dtype != np.uint8 or buffer.ndim != 1:
            raise PvdError(f"expected a 1-D uint8 array of stream bytes, got {buffer.dtype} "
                           f"with shape {buffer.shape}")
        return np.ascontiguousarray(buffer)
    try:
        return np.frombuffer(buffer, dtype=np.uint8)
    except (TypeError, ValueError) as exc:
        raise PvdError(f"expected bytes-like stream data, got {type(buffer).__name__}: {exc}") from None


@dataclass
class Scan:
    """What the counting pass found (see :func:`count_commands`): the stream's ``version``, its
    bytes as ``data``, where the first command starts (``pos``), whether REGISTER_CLASS carries
    a base class (``has_base``), the number of complete commands ``n``, ``valid_end``, the
    compiled scan's ``status`` and the fill checkpoints ``ck_pos``/``ck_frame``.
    """

    version: Version
    data: np.ndarray
    pos: int
    has_base: bool
    start_frame: int
    n: int
    valid_end: int
    status: int
    ck_pos: np.ndarray
    ck_frame: np.ndarray
    source_name: str

    def table(self, cols: dict[str, np.ndarray]) -> CommandTable:
        """The :class:`CommandTable` of these commands with the filled stored ``cols``."""
        return CommandTable(
            version=self.version, **cols, valid_end=self.valid_end,
            error=_describe(self.status, self.data, self.valid_end, self.source_name),
            truncated=self.status == kernels.TRUNCATED, source_name=self.source_name,
            start_frame=self.start_frame,
        )


def count_commands(
    buffer,
    *,
    source_name: str = "<memory>",
    start_offset: int = 0,
    start_frame: int = -1,
    version: Version | None = None,
) -> Scan:
    """The first pass of :func:`tokenize` (same arguments): read the header, count the complete
    commands and find the damage, without filling any column (for callers that fill their own)."""
    data = as_byte_array(buffer)
    if not 0 <= start_offset <= len(data):
        raise PvdError(f"{source_name}: start_offset {start_offset} outside the {len(data)}-byte buffer")
    if version is None:
        version = decode_header(data, source_name, start_offset)
        pos = start_offset + HEADER_SIZE
    else:
        version = check_version(version, source_name)
        pos = start_offset
    base = has_base_class(version)
    # Checkpoint arrays are sized for the most rows the bytes could hold (shortest command:
    # 7 bytes), so no corrupt length can make anything allocate more than the input justifies.
    max_rows = (len(data) - pos) // MIN_COMMAND_BYTES + 1
    ck_pos = np.empty(max_rows // _CHUNK + 1, np.int64)
    ck_frame = np.empty(max_rows // _CHUNK + 1, np.int64)
    empty = tuple(empty_columns(0).values())
    n, valid_end, status = kernels.scan(data, pos, base, start_frame, 0, max_rows, False, empty, ck_pos,
                                        ck_frame, _CHUNK)
    return Scan(version, data, pos, base, start_frame, int(n), int(valid_end), int(status), ck_pos,
                ck_frame, source_name)


def tokenize(
    buffer,
    *,
    source_name: str = "<memory>",
    start_offset: int = 0,
    start_frame: int = -1,
    version: Version | None = None,
) -> CommandTable:
    """Index every complete command of an OmniPVD stream (see :class:`CommandTable`).

    ``buffer``: bytes, bytearray, memoryview, mmap or 1-D uint8 array. With ``version=None``
    the 12-byte header is read at ``start_offset`` and commands follow it; with a ``version``
    the buffer is a headerless continuation whose first command starts at ``start_offset``
    (see the module docstring). ``start_frame`` is the frame index in force before the first
    command (-1 at the start of a stream). Raises :class:`PvdError` only for a missing, short or
    unsupported header (or a bad argument); damage is reported in the table.
    """
    # Pass 1 counts complete commands and drops a checkpoint every _CHUNK rows; pass 2 fills
    # preallocated columns from the checkpoints in parallel.
    sc = count_commands(buffer, source_name=source_name, start_offset=start_offset,
                        start_frame=start_frame, version=version)
    n = sc.n
    cols = empty_columns(n)
    if n > _PARALLEL_MIN_ROWS:
        kernels.fill_parallel(sc.data, sc.has_base, n, sc.ck_pos, sc.ck_frame, _CHUNK, tuple(cols.values()))
    elif n:
        kernels.scan(sc.data, sc.pos, sc.has_base, start_frame, 0, n, True, tuple(cols.values()), sc.ck_pos,
                     sc.ck_frame, _CHUNK)
    return sc.table(cols)


def _describe(status: int, data: np.ndarray, at: int, source_name: str) -> str | None:
    if status == kernels.OK:
        return None
    code = int(data[at])
    if status == kernels.TRUNCATED:
        what = Command(code).name.lower() if code in Command._value2member_map_ else str(code)
        # A file cut short and a length field damaged in a whole file look alike here: both are
        # named, with how much follows (a few bytes: cut short; most of a file: a bad length).
        return (f"{source_name}: truncated at byte offset {at}: the {what} command starting there "
                f"runs past the end of the data ({len(data)} bytes, {len(data) - at:,} of them from its "
                "start: the file was cut short there, or the command's length is damaged); every "
                "command before it was read")
    if status == kernels.UNKNOWN_COMMAND:
        return (f"{source_name}: damaged at byte offset {at}: unknown command code {code} "
                f"(expected 1 or 3..13); every command before it was read")
    if status == kernels.BAD_DATA_TYPE:
        dt = int(data[at + REGISTER_DATA_TYPE]) | int(data[at + REGISTER_DATA_TYPE + 1]) << 8
        return (f"{source_name}: damaged at byte offset {at}: {Command(code).name.lower()} with "
                f"unknown data type {dt} (expected 0..13); every command before it was read")
    return (f"{source_name}: damaged at byte offset {at}: {Command(code).name.lower()} with an "
            "empty attribute path (depth 0); every command before it was read")


def read_file(path: str | os.PathLike) -> np.ndarray:
    """The bytes of a file, read into memory of this process, as a read-only uint8 array.
    Raises :class:`PvdError` for an unreadable file or one that is not a regular file.

    Why not a memory map (which costs no copy): a mapped file that another process truncates —
    a producer recording again to the same path, as PhysX's ``fopen(path, "wb")`` does — kills
    a process touching the lost pages with SIGBUS (a viewer, a notebook kernel), and one it
    rewrites changes the bytes under an index made of the old ones, silently. A read takes its
    own copy: a file that shrinks meanwhile reads as a truncated stream (everything before the
    cut, and a warning), and nothing written later reaches it. The copy costs the file's size
    in memory, about as much again as its index (a few ms per 30 MB from the page cache).
    """
    name = os.fspath(path)
    with open_input(name) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            buf = np.empty(size, np.uint8)
            view, got = memoryview(buf), 0
            while got < size:  # one read(2) returns at most ~2 GB
                n = f.readinto(view[got:])
                if not n:
                    break  # the file shrank meanwhile: what was there
                got += n
        except OSError as exc:
            raise PvdError(f"cannot read {name}: {exc.strerror or exc}") from None
    out = buf[:got]
    out.flags.writeable = False
    return out


def open_ovd(path: str | os.PathLike) -> tuple[np.ndarray, CommandTable]:
    """Read an ``.ovd`` file (:func:`read_file`) and tokenize it: ``(bytes as uint8 array, table)``.

    Damage is reported with a :class:`~pvdkit.types.PvdWarning` (and in ``table.error``); an
    unreadable file or header raises :class:`PvdError`.
    """
    name = os.fspath(path)
    buffer = read_file(name)
    table = tokenize(buffer, source_name=name)
    if table.error is not None:
        warnings.warn(table.error, PvdWarning, stacklevel=2)
    return buffer, table


# --------------------------------------------------------------------------------------------
# Row access
# --------------------------------------------------------------------------------------------


def decode_command(buffer, table: CommandTable, i: int) -> DecodedCommand:
    """The full command of row ``i`` as a :mod:`pvdkit.ovd.codec` dataclass (path, names, data)."""
    n = len(table)
    if not -n <= i < n:
        raise PvdError(f"{table.source_name}: command index {i} out of range (0..{n - 1})")
    command, _ = decode_command_at(
        as_byte_array(buffer), int(table.offset[i]), table.version, table.source_name
    )
    return command


def iter_commands(
    buffer, table: CommandTable, rows: np.ndarray | range | None = None
) -> Iterator[DecodedCommand]:
    """Decode rows one by one (all rows by default): for dumps and small files, not bulk work."""
    data = as_byte_array(buffer)
    for i in range(len(table)) if rows is None else rows:
        yield decode_command_at(data, int(table.offset[i]), table.version, table.source_name)[0]


def gather_u64(buffer, offsets: np.ndarray) -> np.ndarray:
    """Little-endian u64 values at the given byte offsets (vectorised; offsets must be in range)."""
    data = as_byte_array(buffer)
    idx = np.asarray(offsets, dtype=np.int64)[:, None] + np.arange(8)
    return data[idx].copy().view("<u8").reshape(-1)


def gather_u32(buffer, offsets: np.ndarray) -> np.ndarray:
    """Little-endian u32 values at the given byte offsets (vectorised; offsets must be in range)."""
    data = as_byte_array(buffer)
    idx = np.asarray(offsets, dtype=np.int64)[:, None] + np.arange(4)
    return data[idx].copy().view("<u4").reshape(-1)


def frame_timestamps(buffer, table: CommandTable, kind: Command = Command.START_FRAME) -> np.ndarray:
    """Timestamps (uint64) of all START_FRAME rows (or STOP_FRAME with ``kind``), in order."""
    rows = table.rows(kind)
    return gather_u64(buffer, table.offset[rows] + PAIR_SECOND)


def attribute_payload(buffer, table: CommandTable, i: int) -> memoryview:
    """The raw payload bytes of attribute row ``i`` (a view into the buffer, no copy)."""
    start = int(table.data_offset[i])
    return memoryview(as_byte_array(buffer))[start:start + int(table.data_size[i])]
