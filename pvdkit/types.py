"""OmniPVD's vocabulary: command codes, data types and handle widths.

These numbers are the wire values of PhysX's ``physx/pvdruntime`` (``OmniPvdCommands.h`` and
``OmniPvdDefines.h``); every other module of pvdkit names them through this one place.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

#: The stream version pvdkit writes (the version PhysX 5.x writes).
OVD_VERSION = (0, 4, 0)
#: The first 8 bytes of every HDF5 file (an ``.h5`` recording): how a file is told to be one
#: whatever its name.
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
#: The oldest stream version pvdkit reads. Before 0.3 ``register_class`` had no base-class handle.
OVD_OLDEST_READABLE_VERSION = (0, 2, 0)

#: ``OMNI_PVD_INVALID_HANDLE``: 0 is never a valid class, attribute or object handle.
INVALID_HANDLE = 0


class Command(IntEnum):
    """``OmniPvdCommand::Enum``: the first byte (u8) of every command in a stream."""

    INVALID = 0
    REGISTER_CLASS = 1
    REGISTER_ENUM = 2  # reserved by PhysX; enum values travel as REGISTER_ATTRIBUTE with type ENUM_VALUE
    REGISTER_ATTRIBUTE = 3
    REGISTER_CLASS_ATTRIBUTE = 4
    REGISTER_UNIQUE_LIST_ATTRIBUTE = 5
    SET_ATTRIBUTE = 6
    ADD_TO_UNIQUE_LIST_ATTRIBUTE = 7
    REMOVE_FROM_UNIQUE_LIST_ATTRIBUTE = 8
    CREATE_OBJECT = 9
    DESTROY_OBJECT = 10
    START_FRAME = 11
    STOP_FRAME = 12
    RECORD_MESSAGE = 13


class DataType(IntEnum):
    """``OmniPvdDataType::Enum``: the type of an attribute's elements (u16 on the wire)."""

    INT8 = 0
    INT16 = 1
    INT32 = 2
    INT64 = 3
    UINT8 = 4
    UINT16 = 5
    UINT32 = 6
    UINT64 = 7
    FLOAT32 = 8
    FLOAT64 = 9
    STRING = 10
    OBJECT_HANDLE = 11
    ENUM_VALUE = 12
    FLAGS_WORD = 13

    @property
    def size(self) -> int:
        """Bytes per element; 0 for STRING, whose length is the payload's length."""
        return _SIZES[self]

    @property
    def numpy_dtype(self) -> np.dtype:
        """Little-endian numpy dtype of one element (``uint8`` bytes for STRING)."""
        return _DTYPES[self]


_SIZES = {
    DataType.INT8: 1, DataType.INT16: 2, DataType.INT32: 4, DataType.INT64: 8,
    DataType.UINT8: 1, DataType.UINT16: 2, DataType.UINT32: 4, DataType.UINT64: 8,
    DataType.FLOAT32: 4, DataType.FLOAT64: 8, DataType.STRING: 0,
    DataType.OBJECT_HANDLE: 8, DataType.ENUM_VALUE: 4, DataType.FLAGS_WORD: 4,
}
_DTYPES = {
    DataType.INT8: np.dtype("<i1"), DataType.INT16: np.dtype("<i2"), DataType.INT32: np.dtype("<i4"),
    DataType.INT64: np.dtype("<i8"), DataType.UINT8: np.dtype("<u1"), DataType.UINT16: np.dtype("<u2"),
    DataType.UINT32: np.dtype("<u4"), DataType.UINT64: np.dtype("<u8"), DataType.FLOAT32: np.dtype("<f4"),
    DataType.FLOAT64: np.dtype("<f8"), DataType.STRING: np.dtype("<u1"),
    DataType.OBJECT_HANDLE: np.dtype("<u8"), DataType.ENUM_VALUE: np.dtype("<u4"),
    DataType.FLAGS_WORD: np.dtype("<u4"),
}


class PvdError(Exception):
    """The one exception type pvdkit raises for bad input: unreadable, damaged or mismatched data.

    The message names the file (when there is one), the position (byte offset, command index or
    field) and what was expected.
    """


class PvdWarning(UserWarning):
    """Warned (not raised) when pvdkit reads what it can of a damaged or truncated stream.

    The message names the source and the byte offset of the damage; everything before it was read.
    """
