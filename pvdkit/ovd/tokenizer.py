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

import mmap
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit, prange

from pvdkit.outputs import open_input
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
#: The columns the scan writes (the others are derived from them on first use).
_STORED = (
    "kind", "offset", "frame", "context", "object", "attribute", "depth", "data_size", "data_type",
)


def payload_offsets(kind: np.ndarray, offset: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """``data_offset`` of rows with these ``kind``/``offset``/``depth`` (see :class:`CommandTable`)."""
    attr = (kind >= Command.SET_ATTRIBUTE) & (kind <= Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE)
    return np.where(attr, offset + 22 + 4 * depth.astype(np.int64), 0)


# --------------------------------------------------------------------------------------------
# Compiled scan
# --------------------------------------------------------------------------------------------


# Byte reads index with unsigned positions: numba then skips its negative-index fix-up, which
# lets LLVM merge the byte loads of a little-endian integer into one load (3-4x faster fills).
@njit(cache=True, inline="always")
def _byte(b, p):
    return np.int64(b[np.uint64(p)])


@njit(cache=True, inline="always")
def _ub(b, q, k):
    """Byte ``q + k`` (q unsigned) shifted to its place ``k`` in a little-endian integer."""
    return np.uint64(b[q + np.uint64(k)]) << np.uint64(8 * k)


@njit(cache=True, inline="always")
def _u16(b, p):
    q = np.uint64(p)
    return np.int64(_ub(b, q, 0) | _ub(b, q, 1))


@njit(cache=True, inline="always")
def _u32(b, p):
    q = np.uint64(p)
    return np.int64(_ub(b, q, 0) | _ub(b, q, 1) | _ub(b, q, 2) | _ub(b, q, 3))


@njit(cache=True, inline="always")
def _u64(b, p):
    q = np.uint64(p)
    return (_ub(b, q, 0) | _ub(b, q, 1) | _ub(b, q, 2) | _ub(b, q, 3)
            | _ub(b, q, 4) | _ub(b, q, 5) | _ub(b, q, 6) | _ub(b, q, 7))


@njit(cache=True, inline="always")
def _command_end(b, pos, size, base_len):
    """Validate the command starting at ``pos`` (``size`` = bytes available).

    Returns (status, code, end, data_type); ``end`` and ``data_type`` are meaningful only when
    status is 0. With :func:`_command_fields`, the one place that knows the command layouts:
    the tokenizer's passes and the index builder's fused pass (:mod:`pvdkit.recording`) share
    them.
    """
    c = _byte(b, pos)
    p = pos + 1
    dt = 0xFFFF
    e = pos
    status = 0
    if c == 6 or c == 7 or c == 8:
        if p + 17 > size:
            status = 1
        else:
            d = _byte(b, p + 16)
            if d == 0:
                status = 4
            else:
                q = p + 17 + 4 * d
                if q + 4 > size:
                    status = 1
                else:
                    e = q + 4 + _u32(b, q)
    elif c == 1:
        q = p + base_len
        if q + 2 > size:
            status = 1
        else:
            e = q + 2 + _u16(b, q)
    elif c == 3:
        if p + 16 > size:
            status = 1
        else:
            dt = _u16(b, p + 8)
            if dt > 13:
                status = 3
            else:
                e = p + 16 + _u16(b, p + 14)
    elif c == 4:
        if p + 14 > size:
            status = 1
        else:
            e = p + 14 + _u16(b, p + 12)
    elif c == 5:
        if p + 12 > size:
            status = 1
        else:
            dt = _u16(b, p + 8)
            if dt > 13:
                status = 3
            else:
                e = p + 12 + _u16(b, p + 10)
    elif c == 9:
        if p + 22 > size:
            status = 1
        else:
            e = p + 22 + _u16(b, p + 20)
    elif c == 10 or c == 11 or c == 12:
        e = p + 16
    elif c == 13:
        q = p + 8
        if q + 2 > size:
            status = 1
        else:
            q = q + 2 + _u16(b, q)
            if q + 2 > size:
                status = 1
            else:
                e = q + 2 + _u16(b, q) + 12
    else:
        status = 2
    if status == 0 and e > size:
        status = 1
    return status, c, e, dt


@njit(cache=True, inline="always")
def _command_fields(b, pos, c):
    """(context, object, attribute, depth, data size) of a command :func:`_command_end` accepted;
    zeros where the command has no such field (see :class:`CommandTable`)."""
    p = pos + 1
    ctx = np.uint64(0)
    ob = np.uint64(0)
    at = 0
    dp = 0
    nb = 0
    if c == 6 or c == 7 or c == 8:
        ctx = _u64(b, p)
        ob = _u64(b, p + 8)
        dp = _byte(b, p + 16)
        q = p + 17 + 4 * dp
        at = _u32(b, q - 4)
        nb = _u32(b, q)
    elif c == 9:
        ctx = _u64(b, p)
        ob = _u64(b, p + 12)
    elif c >= 10:
        ctx = _u64(b, p)
        if c == 10:
            ob = _u64(b, p + 8)
    return ctx, ob, at, dp, nb


@njit(cache=True)
def _scan(b, pos, has_base, start_frame, row0, max_rows, fill, kind, offset, frame, context, obj,
          attribute, depth, data_size, data_type, ck_pos, ck_frame, ck_every):
    """Walk at most ``max_rows`` commands from ``pos``, numbering rows from ``row0``.

    With ``fill`` each row is written to the (stored) columns; without, only counted, and every
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
        status, c, e, dt = _command_end(b, pos, size, base_len)
        if status != 0:
            break
        if c == 11:
            fr += 1
        if fill:
            ctx, ob, at, dp, nb = _command_fields(b, pos, c)
            kind[n] = c
            offset[n] = pos
            frame[n] = fr
            context[n] = ctx
            obj[n] = ob
            attribute[n] = at
            depth[n] = dp
            data_size[n] = nb
            data_type[n] = dt
        n += 1
        pos = e
    return n, pos, status


@njit(cache=True, parallel=True)
def _fill_parallel(b, has_base, n, ck_pos, ck_frame, ck_every, kind, offset, frame, context, obj,
                   attribute, depth, data_size, data_type):
    """Fill rows 0..n-1 chunk by chunk, each chunk from its checkpoint, on all cores."""
    chunks = (n + ck_every - 1) // ck_every
    for k in prange(chunks):
        row0 = k * ck_every
        _scan(b, ck_pos[k], has_base, ck_frame[k], row0, min(ck_every, n - row0), True, kind, offset,
              frame, context, obj, attribute, depth, data_size, data_type, ck_pos, ck_frame, ck_every)


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
            truncated=self.status == _TRUNCATED, source_name=self.source_name,
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
    max_rows = (len(data) - pos) // _MIN_COMMAND_BYTES + 1
    ck_pos = np.empty(max_rows // _CHUNK + 1, np.int64)
    ck_frame = np.empty(max_rows // _CHUNK + 1, np.int64)
    empty = empty_columns(0)
    n, valid_end, status = _scan(data, pos, base, start_frame, 0, max_rows, False, *empty.values(),
                                 ck_pos, ck_frame, _CHUNK)
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
        _fill_parallel(sc.data, sc.has_base, n, sc.ck_pos, sc.ck_frame, _CHUNK, *cols.values())
    elif n:
        _scan(sc.data, sc.pos, sc.has_base, start_frame, 0, n, True, *cols.values(), sc.ck_pos,
              sc.ck_frame, _CHUNK)
    return sc.table(cols)


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


def map_file(path: str | os.PathLike) -> np.ndarray:
    """The bytes of a file as a read-only uint8 array backed by a memory map (no copy; files
    shorter than a header are read). Raises :class:`PvdError` for an unreadable file or one
    that is not a regular file (a device, FIFO or directory has no length to map)."""
    name = os.fspath(path)
    with open_input(name) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size < HEADER_SIZE:
                raw: object = f.read(HEADER_SIZE)
            else:
                raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise PvdError(f"cannot read {name}: {exc.strerror or exc}") from None
    return as_byte_array(raw)


def open_ovd(path: str | os.PathLike) -> tuple[np.ndarray, CommandTable]:
    """Memory-map an ``.ovd`` file and tokenize it: ``(bytes as uint8 array, table)``.

    The array is backed by the map, so memory stays bounded by the table's columns. Damage is
    reported with a :class:`~pvdkit.types.PvdWarning` (and in ``table.error``); an unreadable
    file or header raises :class:`PvdError`.
    """
    name = os.fspath(path)
    buffer = map_file(name)
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
