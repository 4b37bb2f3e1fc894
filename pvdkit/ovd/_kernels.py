"""Compiled (numba) readers and writers of the command layout (:mod:`pvdkit.ovd.layout`).

Use them through :mod:`pvdkit.ovd.kernels` (``kernels.scan``, ``from pvdkit.ovd.kernels import
command_end``), which loads this module — and numba — on first use only.

Why here: :func:`command_end` and :func:`command_fields` are the only compiled code that knows
where a command's fields are; the tokenizer's passes (:func:`scan`, :func:`fill_parallel`,
below) and the index builder's fused pass (:mod:`pvdkit.index.kernels`) inline them, and
:func:`store_row` writes the index columns of a row for both. :func:`emit_commands` writes
attribute commands field by field for the HDF5 → ``.ovd`` rebuild.

The tokenizer's passes live in this module too because numba's cache does not follow inlined
functions into other files: a cached caller keeps the code of the helpers it was compiled
with. Kept in one file, a change here recompiles the tokenizer. The index builder's kernels
(another file) must have their cache cleared (``rm -r ~/.cache/pvdkit/numba``, see
:mod:`pvdkit.jit`) after a change of the helpers here.

Every kernel releases the GIL (``nogil``): the live viewer tokenizes and indexes on its
receive thread while the GUI thread draws.

Index columns travel as one tuple ``cols`` in :data:`pvdkit.ovd.tokenizer.empty_columns`
order: kind, offset, frame, context, object, attribute, depth, data_size, data_type.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from pvdkit.jit import njit
from pvdkit.ovd.kernels import BAD_DATA_TYPE, EMPTY_PATH, OK, TRUNCATED, UNKNOWN_COMMAND
from pvdkit.ovd.layout import (
    ATTR_DEPTH,
    ATTR_OBJECT,
    ATTR_PATH,
    CMD_ADD_TO_UNIQUE_LIST,
    CMD_CREATE_OBJECT,
    CMD_DESTROY_OBJECT,
    CMD_RECORD_MESSAGE,
    CMD_REGISTER_ATTRIBUTE,
    CMD_REGISTER_CLASS,
    CMD_REGISTER_CLASS_ATTRIBUTE,
    CMD_REGISTER_UNIQUE_LIST_ATTRIBUTE,
    CMD_REMOVE_FROM_UNIQUE_LIST,
    CMD_SET_ATTRIBUTE,
    CMD_START_FRAME,
    CMD_STOP_FRAME,
    CREATE_OBJECT,
    MAX_DATA_TYPE,
    NO_DATA_TYPE,
    PAIR_BYTES,
)

__all__ = [
    "command_end", "command_fields", "emit_commands", "fill_parallel", "is_attribute_command", "read_u8",
    "read_u16", "read_u32", "read_u64", "scan", "store_row",
]

# Byte reads index with unsigned positions: numba then skips its negative-index fix-up, which
# lets LLVM merge the byte loads of a little-endian integer into one load (3-4x faster fills).
# Each reader is one expression (no helper per byte): numba inlines these into every caller,
# and inlining a helper per byte made the tokenizer and the index pass take twice as long to
# compile for the same machine code.
@njit(cache=True, inline="always")
def read_u8(b, p):
    return np.int64(b[np.uint64(p)])


@njit(cache=True, inline="always")
def read_u16(b, p):
    q = np.uint64(p)
    return np.int64(np.uint64(b[q]) | (np.uint64(b[q + np.uint64(1)]) << np.uint64(8)))


@njit(cache=True, inline="always")
def read_u32(b, p):
    q = np.uint64(p)
    return np.int64(np.uint64(b[q]) | (np.uint64(b[q + np.uint64(1)]) << np.uint64(8))
                    | (np.uint64(b[q + np.uint64(2)]) << np.uint64(16))
                    | (np.uint64(b[q + np.uint64(3)]) << np.uint64(24)))


@njit(cache=True, inline="always")
def read_u64(b, p):
    q = np.uint64(p)
    lo = (np.uint64(b[q]) | (np.uint64(b[q + np.uint64(1)]) << np.uint64(8))
          | (np.uint64(b[q + np.uint64(2)]) << np.uint64(16))
          | (np.uint64(b[q + np.uint64(3)]) << np.uint64(24)))
    hi = (np.uint64(b[q + np.uint64(4)]) | (np.uint64(b[q + np.uint64(5)]) << np.uint64(8))
          | (np.uint64(b[q + np.uint64(6)]) << np.uint64(16))
          | (np.uint64(b[q + np.uint64(7)]) << np.uint64(24)))
    return lo | (hi << np.uint64(32))


@njit(cache=True, inline="always")
def is_attribute_command(c):
    """SET_ATTRIBUTE, ADD_TO_UNIQUE_LIST or REMOVE_FROM_UNIQUE_LIST."""
    return c == CMD_SET_ATTRIBUTE or c == CMD_ADD_TO_UNIQUE_LIST or c == CMD_REMOVE_FROM_UNIQUE_LIST


@njit(cache=True, inline="always")
def command_end(b, pos, size, base_len):
    """Validate the command starting at ``pos`` (``size`` = bytes available; ``base_len`` = 8
    when REGISTER_CLASS carries a base class, else 4).

    Returns (status, code, end, data_type); ``end`` and ``data_type`` are meaningful only when
    status is :data:`OK`.
    """
    c = read_u8(b, pos)
    p = pos + 1
    dt = NO_DATA_TYPE
    e = pos
    status = OK
    if is_attribute_command(c):
        if p + 17 > size:
            status = TRUNCATED
        else:
            d = read_u8(b, pos + ATTR_DEPTH)
            if d == 0:
                status = EMPTY_PATH
            else:
                q = pos + ATTR_PATH + 4 * d
                if q + 4 > size:
                    status = TRUNCATED
                else:
                    e = q + 4 + read_u32(b, q)
    elif c == CMD_REGISTER_CLASS:
        q = p + base_len
        if q + 2 > size:
            status = TRUNCATED
        else:
            e = q + 2 + read_u16(b, q)
    elif c == CMD_REGISTER_ATTRIBUTE or c == CMD_REGISTER_UNIQUE_LIST_ATTRIBUTE:
        # u32 class, u32 attribute, u16 data type, (u32 count | enum value | enum class), name
        q = p + (14 if c == CMD_REGISTER_ATTRIBUTE else 10)  # the name's u16 length
        if q + 2 > size:
            status = TRUNCATED
        else:
            dt = read_u16(b, p + 8)
            if dt > MAX_DATA_TYPE:
                status = BAD_DATA_TYPE
            else:
                e = q + 2 + read_u16(b, q)
    elif c == CMD_REGISTER_CLASS_ATTRIBUTE:
        if p + 14 > size:
            status = TRUNCATED
        else:
            e = p + 14 + read_u16(b, p + 12)
    elif c == CMD_CREATE_OBJECT:
        if p + 22 > size:
            status = TRUNCATED
        else:
            e = p + 22 + read_u16(b, p + 20)
    elif c == CMD_DESTROY_OBJECT or c == CMD_START_FRAME or c == CMD_STOP_FRAME:
        e = pos + PAIR_BYTES
    elif c == CMD_RECORD_MESSAGE:
        q = p + 8
        if q + 2 > size:
            status = TRUNCATED
        else:
            q = q + 2 + read_u16(b, q)
            if q + 2 > size:
                status = TRUNCATED
            else:
                e = q + 2 + read_u16(b, q) + 12
    else:
        status = UNKNOWN_COMMAND
    if status == OK and e > size:
        status = TRUNCATED
    return status, c, e, dt


@njit(cache=True, inline="always")
def command_fields(b, pos, c):
    """(context, object, attribute, depth, data size) of a command :func:`command_end` accepted;
    zeros where the command has no such field (see :class:`pvdkit.ovd.tokenizer.CommandTable`)."""
    p = pos + 1
    ctx = np.uint64(0)
    ob = np.uint64(0)
    at = 0
    dp = 0
    nb = 0
    if is_attribute_command(c):
        ctx = read_u64(b, p)
        ob = read_u64(b, pos + ATTR_OBJECT)
        dp = read_u8(b, pos + ATTR_DEPTH)
        q = pos + ATTR_PATH + 4 * dp
        at = read_u32(b, q - 4)
        nb = read_u32(b, q)
    elif c == CMD_CREATE_OBJECT:
        ctx = read_u64(b, p)
        ob = read_u64(b, pos + CREATE_OBJECT)
    elif c >= CMD_DESTROY_OBJECT:
        ctx = read_u64(b, p)
        if c == CMD_DESTROY_OBJECT:
            ob = read_u64(b, p + 8)
    return ctx, ob, at, dp, nb


@njit(cache=True, inline="always")
def store_row(cols, r, c, pos, fr, ctx, ob, at, dp, nb, dt):
    """Write row ``r`` of the index columns ``cols`` (see the module docstring)."""
    kind, offset, frame, context, obj, attribute, depth, data_size, data_type = cols
    kind[r] = c
    offset[r] = pos
    frame[r] = fr
    context[r] = ctx
    obj[r] = ob
    attribute[r] = at
    depth[r] = dp
    data_size[r] = nb
    data_type[r] = dt


@njit(cache=True, nogil=True)
def scan(b, pos, has_base, start_frame, row0, max_rows, fill, cols, ck_pos, ck_frame, ck_every):
    """Walk at most ``max_rows`` commands from ``pos``, numbering rows from ``row0``.

    With ``fill`` each row is written to the columns ``cols``; without, only counted, and
    every ``ck_every``-th row's start position and preceding frame index are recorded as
    checkpoints from which the fill can start in parallel. Returns (next row, end position,
    status).
    """
    size = b.shape[0]
    n = row0
    stop = row0 + max_rows
    fr = start_frame
    status = OK
    base_len = 8 if has_base else 4
    while pos < size and n < stop:
        if not fill and n % ck_every == 0:
            ck_pos[n // ck_every] = pos
            ck_frame[n // ck_every] = fr
        status, c, e, dt = command_end(b, pos, size, base_len)
        if status != OK:
            break
        if c == CMD_START_FRAME:
            fr += 1
        if fill:
            ctx, ob, at, dp, nb = command_fields(b, pos, c)
            store_row(cols, n, c, pos, fr, ctx, ob, at, dp, nb, dt)
        n += 1
        pos = e
    return n, pos, status


@njit(cache=True, nogil=True, parallel=True)
def fill_parallel(b, has_base, n, ck_pos, ck_frame, ck_every, cols):
    """Fill rows 0..n-1 chunk by chunk, each chunk from its checkpoint, on all cores."""
    chunks = (n + ck_every - 1) // ck_every
    for k in prange(chunks):
        row0 = k * ck_every
        scan(b, ck_pos[k], has_base, ck_frame[k], row0, min(ck_every, n - row0), True, cols, ck_pos,
             ck_frame, ck_every)


@njit(cache=True, nogil=True)
def emit_commands(out, cmd_off, kinds, is_attr, rec_src, rec_off, rec_len, a_idx, a_ctx, a_obj, a_path_start,
                  a_depth, path_flat, a_data_off, a_data_len, data_flat):
    """Write every command at ``cmd_off``: attribute commands field by field (``a_*[a_idx[i]]``:
    context, object, path ``path_flat[a_path_start:][:a_depth]``, payload
    ``data_flat[a_data_off:][:a_data_len]``), others by copying their pre-encoded record
    (``rec_src[rec_off:rec_off+rec_len]``)."""
    for i in range(kinds.shape[0]):
        o = cmd_off[i]
        if is_attr[i]:
            j = a_idx[i]
            out[o] = kinds[i]
            c = a_ctx[j]
            ob = a_obj[j]
            for b in range(8):
                out[o + 1 + b] = (c >> np.uint64(8 * b)) & np.uint64(0xFF)
                out[o + ATTR_OBJECT + b] = (ob >> np.uint64(8 * b)) & np.uint64(0xFF)
            d = a_depth[j]
            out[o + ATTR_DEPTH] = d
            q = o + ATTR_PATH
            ps = a_path_start[j]
            for h in range(d):
                v = path_flat[ps + h]
                for b in range(4):
                    out[q + b] = (v >> np.uint32(8 * b)) & np.uint32(0xFF)
                q += 4
            n = a_data_len[j]
            for b in range(4):
                out[q + b] = (n >> (8 * b)) & 0xFF
            q += 4
            s = a_data_off[j]
            for b in range(n):
                out[q + b] = data_flat[s + b]
        else:
            s = rec_off[i]
            for b in range(rec_len[i]):
                out[o + b] = rec_src[s + b]
