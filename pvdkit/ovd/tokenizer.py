"""Index a whole OmniPVD stream into numpy columns, one row per command, with a compiled loop.

Why columns: a 1 GB recording holds tens of millions of commands; one Python object each would
cost gigabytes and minutes. :func:`tokenize` instead runs a compiled (numba) loop twice over the
bytes — once to count the complete commands, once to fill preallocated arrays (in parallel for
large inputs) — and returns a :class:`CommandTable` of fixed-width columns (56 bytes per
command). Values stay in the buffer; ``data_offset``/``data_size`` point at them, and
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

import mmap
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from pvdkit.ovd.codec import (
    HEADER_SIZE,
    DecodedCommand,
    Version,
    check_version,
    decode_command_at,
    decode_header,
    has_base_class,
)
from pvdkit.types import Command, DataType, PvdError, PvdWarning

#: Rows between fill checkpoints (the unit of parallel work).
_CHUNK = 1 << 16
#: Below this many rows the fill runs on the calling thread only (thread start-up would dominate).
_PARALLEL_MIN_ROWS = 4 * _CHUNK
#: Shortest possible command: register_class of a 0.2 stream with an empty name.
_MIN_COMMAND_BYTES = 7

#: ``CommandTable.data_type`` of rows that register no data type.
NO_DATA_TYPE = 0xFFFF

# Status codes of the compiled scan.
_OK = 0
_TRUNCATED = 1
_UNKNOWN_COMMAND = 2
_BAD_DATA_TYPE = 3
_EMPTY_PATH = 4

#: Keys of :meth:`CommandTable.counts`, in the order ``pvdkit info`` prints them.
COUNT_KEYS = (
    "register_class", "register_attribute", "register_enum", "register_flags",
    "register_class_attribute", "register_unique_list_attribute", "set_attribute",
    "add_to_unique_list", "remove_from_unique_list", "create_object", "destroy_object",
    "start_frame", "stop_frame", "record_message",
)


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
    end: np.ndarray
    frame: np.ndarray
    context: np.ndarray
    object: np.ndarray
    attribute: np.ndarray
    depth: np.ndarray
    data_offset: np.ndarray
    data_size: np.ndarray
    data_type: np.ndarray
    valid_end: int
    error: str | None = None
    truncated: bool = False
    source_name: str = "<memory>"
    start_frame: int = -1

    def __len__(self) -> int:
        return len(self.kind)

    @property
    def last_frame(self) -> int:
        """Frame index of the last row (``start_frame`` when empty): pass it on to continue."""
        return int(self.frame[-1]) if len(self.frame) else self.start_frame

    @property
    def nbytes(self) -> int:
        """Memory held by the columns (bytes)."""
        return sum(getattr(self, name).nbytes for name in _COLUMNS)

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
        c = {
            "register_class": per_kind[Command.REGISTER_CLASS],
            "register_attribute": len(reg) - n_enum - n_flags,
            "register_enum": n_enum,
            "register_flags": n_flags,
            "register_class_attribute": per_kind[Command.REGISTER_CLASS_ATTRIBUTE],
            "register_unique_list_attribute": per_kind[Command.REGISTER_UNIQUE_LIST_ATTRIBUTE],
            "set_attribute": per_kind[Command.SET_ATTRIBUTE],
            "add_to_unique_list": per_kind[Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE],
            "remove_from_unique_list": per_kind[Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE],
            "create_object": per_kind[Command.CREATE_OBJECT],
            "destroy_object": per_kind[Command.DESTROY_OBJECT],
            "start_frame": per_kind[Command.START_FRAME],
            "stop_frame": per_kind[Command.STOP_FRAME],
            "record_message": per_kind[Command.RECORD_MESSAGE],
        }
        return {k: int(c[k]) for k in COUNT_KEYS}

    def rows(self, *kinds: Command | int) -> np.ndarray:
        """Row indices (int64) of the commands of the given kinds, in stream order."""
        return np.flatnonzero(np.isin(self.kind, np.asarray(kinds, dtype=np.uint8)))


_COLUMNS = (
    "kind", "offset", "end", "frame", "context", "object", "attribute", "depth",
    "data_offset", "data_size", "data_type",
)


# --------------------------------------------------------------------------------------------
# Compiled scan
# --------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _u16(b, p):
    return np.int64(b[p]) | (np.int64(b[p + 1]) << 8)


@njit(cache=True, inline="always")
def _u32(b, p):
    return (np.int64(b[p]) | (np.int64(b[p + 1]) << 8) | (np.int64(b[p + 2]) << 16)
            | (np.int64(b[p + 3]) << 24))


@njit(cache=True, inline="always")
def _u64(b, p):
    return np.uint64(_u32(b, p)) | (np.uint64(_u32(b, p + 4)) << np.uint64(32))


@njit(cache=True)
def _scan(b, pos, has_base, start_frame, row0, max_rows, fill, kind, offset, end, frame, context, obj,
          attribute, depth, data_offset, data_size, data_type, ck_pos, ck_frame, ck_every):
    """Walk at most ``max_rows`` commands from ``pos``, numbering rows from ``row0``.

    With ``fill`` each row is written to the columns; without, only counted, and every
    ``ck_every``-th row's start position and preceding frame index are recorded as checkpoints
    from which the fill can start in parallel. Returns (next row, end position, status).
    """
    size = b.shape[0]
    n = row0
    stop = row0 + max_rows
    fr = start_frame
    status = 0
    base_len = 8 if has_base else 4
    while pos < size and n < stop:
        if not fill and n % ck_every == 0:
            ck_pos[n // ck_every] = pos
            ck_frame[n // ck_every] = fr
        c = b[pos]
        p = pos + 1
        ctx = np.uint64(0)
        ob = np.uint64(0)
        dt = 0xFFFF
        e = pos
        if c == 6 or c == 7 or c == 8:
            if p + 17 > size:
                status = 1
                break
            dp = np.int64(b[p + 16])
            if dp == 0:
                status = 4
                break
            q = p + 17 + 4 * dp
            if q + 4 > size:
                status = 1
                break
            nbytes = _u32(b, q)
            e = q + 4 + nbytes
            if e > size:
                status = 1
                break
            if fill:
                context[n] = _u64(b, p)
                obj[n] = _u64(b, p + 8)
                attribute[n] = _u32(b, q - 4)
                depth[n] = dp
                data_offset[n] = q + 4
                data_size[n] = nbytes
        elif c == 1:
            q = p + base_len
            if q + 2 > size:
                status = 1
                break
            e = q + 2 + _u16(b, q)
        elif c == 3:
            if p + 16 > size:
                status = 1
                break
            dt = _u16(b, p + 8)
            if dt > 13:
                status = 3
                break
            e = p + 16 + _u16(b, p + 14)
        elif c == 4:
            if p + 14 > size:
                status = 1
                break
            e = p + 14 + _u16(b, p + 12)
        elif c == 5:
            if p + 12 > size:
                status = 1
                break
            dt = _u16(b, p + 8)
            if dt > 13:
                status = 3
                break
            e = p + 12 + _u16(b, p + 10)
        elif c == 9:
            if p + 22 > size:
                status = 1
                break
            e = p + 22 + _u16(b, p + 20)
            if fill:
                ctx = _u64(b, p)
                ob = _u64(b, p + 12)
        elif c == 10 or c == 11 or c == 12:
            e = p + 16
            if e > size:
                status = 1
                break
            if fill:
                ctx = _u64(b, p)
                if c == 10:
                    ob = _u64(b, p + 8)
        elif c == 13:
            q = p + 8
            if q + 2 > size:
                status = 1
                break
            q = q + 2 + _u16(b, q)
            if q + 2 > size:
                status = 1
                break
            e = q + 2 + _u16(b, q) + 12
            if fill:
                ctx = _u64(b, p)
        else:
            status = 2
            break
        if e > size:
            status = 1
            break
        if c == 11:
            fr += 1
        if fill:
            kind[n] = c
            offset[n] = pos
            end[n] = e
            frame[n] = fr
            data_type[n] = dt
            if c < 6 or c > 8:
                context[n] = ctx
                obj[n] = ob
        n += 1
        pos = e
    return n, pos, status


@njit(cache=True, parallel=True)
def _fill_parallel(b, has_base, n, ck_pos, ck_frame, ck_every, kind, offset, end, frame, context, obj,
                   attribute, depth, data_offset, data_size, data_type):
    """Fill rows 0..n-1 chunk by chunk, each chunk from its checkpoint, on all cores."""
    chunks = (n + ck_every - 1) // ck_every
    for k in prange(chunks):
        row0 = k * ck_every
        _scan(b, ck_pos[k], has_base, ck_frame[k], row0, min(ck_every, n - row0), True, kind, offset,
              end, frame, context, obj, attribute, depth, data_offset, data_size, data_type,
              ck_pos, ck_frame, ck_every)


def _empty_columns(n: int) -> dict[str, np.ndarray]:
    return {
        "kind": np.zeros(n, np.uint8),
        "offset": np.zeros(n, np.int64),
        "end": np.zeros(n, np.int64),
        "frame": np.zeros(n, np.int32),
        "context": np.zeros(n, np.uint64),
        "object": np.zeros(n, np.uint64),
        "attribute": np.zeros(n, np.uint32),
        "depth": np.zeros(n, np.uint8),
        "data_offset": np.zeros(n, np.int64),
        "data_size": np.zeros(n, np.uint32),
        "data_type": np.zeros(n, np.uint16),
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
    # Pass 1 counts complete commands and drops a checkpoint every _CHUNK rows; pass 2 fills
    # preallocated columns from the checkpoints in parallel. Checkpoint arrays are sized for the
    # most rows the bytes could hold (shortest command: 7 bytes), so no corrupt length can
    # make anything allocate more than the input justifies.
    max_rows = (len(data) - pos) // _MIN_COMMAND_BYTES + 1
    ck_pos = np.empty(max_rows // _CHUNK + 1, np.int64)
    ck_frame = np.empty(max_rows // _CHUNK + 1, np.int64)
    empty = _empty_columns(0)
    n, valid_end, status = _scan(data, pos, base, start_frame, 0, max_rows, False, *empty.values(),
                                 ck_pos, ck_frame, _CHUNK)
    cols = _empty_columns(n)
    if n > _PARALLEL_MIN_ROWS:
        _fill_parallel(data, base, n, ck_pos, ck_frame, _CHUNK, *cols.values())
    elif n:
        _scan(data, pos, base, start_frame, 0, n, True, *cols.values(), ck_pos, ck_frame, _CHUNK)
    return CommandTable(
        version=version, **cols, valid_end=int(valid_end),
        error=_describe(status, data, int(valid_end), source_name),
        truncated=status == _TRUNCATED, source_name=source_name, start_frame=start_frame,
    )


def _describe(status: int, data: np.ndarray, at: int, source_name: str) -> str | None:
    if status == _OK:
        return None
    code = int(data[at])
    if status == _TRUNCATED:
        what = Command(code).name.lower() if code in Command._value2member_map_ else str(code)
        return (f"{source_name}: truncated at byte offset {at}: the {what} command starting there "
                f"runs past the end of the data ({len(data)} bytes); every command before it was read")
    if status == _UNKNOWN_COMMAND:
        return (f"{source_name}: damaged at byte offset {at}: unknown command code {code} "
                f"(expected 1 or 3..13); every command before it was read")
    if status == _BAD_DATA_TYPE:
        return (f"{source_name}: damaged at byte offset {at}: {Command(code).name.lower()} with "
                f"unknown data type {int(data[at + 9]) | int(data[at + 10]) << 8} (expected 0..13); "
                "every command before it was read")
    return (f"{source_name}: damaged at byte offset {at}: {Command(code).name.lower()} with an "
            "empty attribute path (depth 0); every command before it was read")


def open_ovd(path: str | os.PathLike) -> tuple[np.ndarray, CommandTable]:
    """Memory-map an ``.ovd`` file and tokenize it: ``(bytes as uint8 array, table)``.

    The array is backed by the map, so memory stays bounded by the table's columns. Damage is
    reported with a :class:`~pvdkit.types.PvdWarning` (and in ``table.error``); an unreadable
    file or header raises :class:`PvdError`.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < HEADER_SIZE:
                raw: object = f.read()
            else:
                raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise PvdError(f"cannot open {name}: {exc.strerror or exc}") from None
    buffer = as_byte_array(raw)
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
    return gather_u64(buffer, table.offset[rows] + 9)


def attribute_payload(buffer, table: CommandTable, i: int) -> memoryview:
    """The raw payload bytes of attribute row ``i`` (a view into the buffer, no copy)."""
    start = int(table.data_offset[i])
    return memoryview(as_byte_array(buffer))[start:start + int(table.data_size[i])]
