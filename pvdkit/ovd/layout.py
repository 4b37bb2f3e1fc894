"""The byte layout of every OmniPVD command: codes, field offsets, structs and record dtypes.

Why one module: the layout is PhysX's wire format, and every pvdkit piece that reads or writes
bytes — the single-command codec (:mod:`pvdkit.ovd.codec`), the compiled readers and writers
(:mod:`pvdkit.ovd.kernels`, which the tokenizer and the index builder inline; their numpy
counterpart :func:`attribute_payloads` for the cached index), the writer's
bulk paths (:mod:`pvdkit.writer`) and the HDF5 → ``.ovd`` rebuild — takes it from here instead
of spelling offsets and formats itself. Pure Python and numpy (no numba), so the writer and the
HDF5 readers import it without loading the compiler.

The integer constants are plain ``int`` globals on purpose: numba folds them into the compiled
code like literals (they are wire values and never change; a changed constant would need the
numba caches of the kernels that use them cleared). Layout (little endian; ``docs/ovd-format.md``):
a 12-byte header of three u32, then commands, each a u8 command code and its fields.
"""

from __future__ import annotations

import struct

import numpy as np

from pvdkit.types import Command, DataType

# --------------------------------------------------------------------------------------------
# Command codes (the first byte of a command), as ints that compiled code folds
# --------------------------------------------------------------------------------------------

CMD_REGISTER_CLASS = int(Command.REGISTER_CLASS)
CMD_REGISTER_ATTRIBUTE = int(Command.REGISTER_ATTRIBUTE)
CMD_REGISTER_CLASS_ATTRIBUTE = int(Command.REGISTER_CLASS_ATTRIBUTE)
CMD_REGISTER_UNIQUE_LIST_ATTRIBUTE = int(Command.REGISTER_UNIQUE_LIST_ATTRIBUTE)
CMD_SET_ATTRIBUTE = int(Command.SET_ATTRIBUTE)
CMD_ADD_TO_UNIQUE_LIST = int(Command.ADD_TO_UNIQUE_LIST_ATTRIBUTE)
CMD_REMOVE_FROM_UNIQUE_LIST = int(Command.REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE)
CMD_CREATE_OBJECT = int(Command.CREATE_OBJECT)
CMD_DESTROY_OBJECT = int(Command.DESTROY_OBJECT)
CMD_START_FRAME = int(Command.START_FRAME)
CMD_STOP_FRAME = int(Command.STOP_FRAME)
CMD_RECORD_MESSAGE = int(Command.RECORD_MESSAGE)
#: Largest wire data type (FLAGS_WORD); a larger one is damage.
MAX_DATA_TYPE = int(DataType.FLAGS_WORD)

# --------------------------------------------------------------------------------------------
# Sizes and limits
# --------------------------------------------------------------------------------------------

#: Bytes in the stream header (three u32 version numbers).
HEADER_SIZE = 12
#: Longest string a u16 length prefix can describe.
MAX_STRING_BYTES = 0xFFFF
#: Most handles an attribute path can hold (its length is a u8).
MAX_PATH_DEPTH = 0xFF
#: Largest payload a u32 byte count can describe.
MAX_DATA_BYTES = 0xFFFFFFFF
#: Shortest possible command: register_class of a 0.2 stream with an empty name.
MIN_COMMAND_BYTES = 7

# --------------------------------------------------------------------------------------------
# Field offsets from the command byte
# --------------------------------------------------------------------------------------------

# SET_ATTRIBUTE, ADD_TO_UNIQUE_LIST, REMOVE_FROM_UNIQUE_LIST: u8 code, u64 context, u64 object,
# u8 depth, depth × u32 handles (outermost first; the last is the attribute), u32 size, payload.
ATTR_CONTEXT = 1
ATTR_OBJECT = 9
ATTR_DEPTH = 17
ATTR_PATH = 18
#: Bytes of an attribute command besides its path handles and payload (code to size field).
ATTR_FIXED_BYTES = 22
# CREATE_OBJECT: u8 code, u64 context, u32 class, u64 object, u16 name length, name.
CREATE_CONTEXT = 1
CREATE_CLASS = 9
CREATE_OBJECT = 13
CREATE_NAME_LENGTH = 21
CREATE_NAME = 23
# DESTROY_OBJECT (context, object), START_FRAME / STOP_FRAME (context, timestamp): a *pair*.
PAIR_FIRST = 1
PAIR_SECOND = 9
PAIR_BYTES = 17
# REGISTER_ATTRIBUTE and REGISTER_UNIQUE_LIST_ATTRIBUTE: u8 code, u32 class, u32 attribute,
# u16 data type, …
REGISTER_DATA_TYPE = 9

# --------------------------------------------------------------------------------------------
# Structs of the Python encoders and decoders
# --------------------------------------------------------------------------------------------

HEADER = struct.Struct("<III")
U16 = struct.Struct("<H")
U32 = struct.Struct("<I")
REG_CLASS = struct.Struct("<BII")  # code, class, base
REG_CLASS_OLD = struct.Struct("<BI")  # code, class (before 0.3)
REG_ATTR = struct.Struct("<BIIHI")  # code, class, attr, type, nbElements | enum value | enum class
REG_CLASS_ATTR = struct.Struct("<BIII")  # code, class, attr, class-attribute class
REG_LIST = struct.Struct("<BIIH")  # code, class, attr, type
ATTR_HEAD = struct.Struct("<BQQ")  # code, context, object (the path and size follow)
CREATE = struct.Struct("<BQIQ")  # code, context, class, object (the name follows)
PAIR = struct.Struct("<BQQ")  # destroy (context, object), start/stop frame (context, time)
MSG_HEAD = struct.Struct("<BQ")  # code, context
MSG_TAIL = struct.Struct("<III")  # line, type, class handle


def encode_path(path: tuple[int, ...] | list[int]) -> bytes:
    """The depth byte and u32 handles of an attribute path (what follows :data:`ATTR_HEAD`)."""
    return struct.pack(f"<B{len(path)}I", len(path), *path)


# --------------------------------------------------------------------------------------------
# Record dtypes of the bulk (numpy) encoders
# --------------------------------------------------------------------------------------------

#: One pair command (DESTROY_OBJECT, START_FRAME, STOP_FRAME) as a packed numpy record.
PAIR_DTYPE = np.dtype({"names": ["cmd", "a", "b"], "formats": ["u1", "<u8", "<u8"],
                       "offsets": [0, PAIR_FIRST, PAIR_SECOND], "itemsize": PAIR_BYTES})


def attribute_dtype(depth: int, value_dtype: np.dtype, count: int) -> np.dtype:
    """Packed record of one attribute command (SET_ATTRIBUTE …) with a fixed path depth and
    ``count`` × ``value_dtype`` payload: fields ``cmd``, ``ctx``, ``obj``, ``depth``, ``path``,
    ``size``, ``data``."""
    q = ATTR_PATH + 4 * depth
    return np.dtype({
        "names": ["cmd", "ctx", "obj", "depth", "path", "size", "data"],
        "formats": ["u1", "<u8", "<u8", "u1", ("<u4", (depth,)), "<u4", (value_dtype, (count,))],
        "offsets": [0, ATTR_CONTEXT, ATTR_OBJECT, ATTR_DEPTH, ATTR_PATH, q, q + 4],
        "itemsize": q + 4 + count * value_dtype.itemsize,
    })


def payload_offsets(kind: np.ndarray, offset: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Payload position (int64) of the attribute commands among rows with these command
    ``kind`` / ``offset`` / path ``depth``; 0 for every other command."""
    attr = (kind >= CMD_SET_ATTRIBUTE) & (kind <= CMD_REMOVE_FROM_UNIQUE_LIST)
    return np.where(attr, offset + ATTR_FIXED_BYTES + 4 * depth.astype(np.int64), 0)


def attribute_payloads(buf: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Command code (uint8), payload position (int64) and payload size (int64) of the attribute
    commands (SET / ADD_TO / REMOVE_FROM) that start at ``offsets`` of the stream bytes ``buf``,
    read with numpy (for callers that have their offsets but no tokenizer table: the cached
    index, :mod:`pvdkit.index.cache`)."""
    offsets = np.asarray(offsets, np.int64)
    kind = buf[offsets]
    size_at = offsets + ATTR_PATH + 4 * buf[offsets + ATTR_DEPTH].astype(np.int64)
    size = buf[size_at[:, None] + np.arange(4)].copy().view("<u4").reshape(-1).astype(np.int64)
    return kind, size_at + 4, size


# --------------------------------------------------------------------------------------------
# Command counts (``pvdkit info``)
# --------------------------------------------------------------------------------------------

#: ``data_type`` of index rows that register no data type.
NO_DATA_TYPE = 0xFFFF

#: Keys of command counts, in the order ``pvdkit info`` prints them.
COUNT_KEYS = (
    "register_class", "register_attribute", "register_enum", "register_flags",
    "register_class_attribute", "register_unique_list_attribute", "set_attribute",
    "add_to_unique_list", "remove_from_unique_list", "create_object", "destroy_object",
    "start_frame", "stop_frame", "record_message",
)


def command_counts(per_kind: np.ndarray, n_attribute: int, n_enum: int, n_flags: int) -> dict[str, int]:
    """Counts under :data:`COUNT_KEYS` from commands per code (``per_kind``) and the split of
    REGISTER_ATTRIBUTE by wire data type: plain attributes, enum values and flags attributes."""
    c = {
        "register_class": per_kind[CMD_REGISTER_CLASS],
        "register_attribute": n_attribute,
        "register_enum": n_enum,
        "register_flags": n_flags,
        "register_class_attribute": per_kind[CMD_REGISTER_CLASS_ATTRIBUTE],
        "register_unique_list_attribute": per_kind[CMD_REGISTER_UNIQUE_LIST_ATTRIBUTE],
        "set_attribute": per_kind[CMD_SET_ATTRIBUTE],
        "add_to_unique_list": per_kind[CMD_ADD_TO_UNIQUE_LIST],
        "remove_from_unique_list": per_kind[CMD_REMOVE_FROM_UNIQUE_LIST],
        "create_object": per_kind[CMD_CREATE_OBJECT],
        "destroy_object": per_kind[CMD_DESTROY_OBJECT],
        "start_frame": per_kind[CMD_START_FRAME],
        "stop_frame": per_kind[CMD_STOP_FRAME],
        "record_message": per_kind[CMD_RECORD_MESSAGE],
    }
    return {k: int(c[k]) for k in COUNT_KEYS}
