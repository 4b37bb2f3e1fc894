"""The ``.ovd`` byte layer: the command layout, the single-command codec and the fast tokenizer.

:mod:`pvdkit.ovd.layout` owns every command's byte layout (codes, offsets, structs, record
dtypes); :mod:`pvdkit.ovd.codec` encodes and decodes one command; :mod:`pvdkit.ovd.kernels`
holds the compiled readers and writers of the layout; :mod:`pvdkit.ovd.tokenizer` indexes a
whole stream into columns. This package imports nothing of pvdkit but :mod:`pvdkit.types` and
:mod:`pvdkit.outputs` (``docs/architecture.md``).
"""

from pvdkit.ovd.codec import (
    HEADER_SIZE,
    AddToUniqueList,
    CreateObject,
    DecodedCommand,
    DestroyObject,
    RecordMessage,
    RegisterAttribute,
    RegisterClass,
    RegisterClassAttribute,
    RegisterEnumValue,
    RegisterFlagsAttribute,
    RegisterUniqueListAttribute,
    RemoveFromUniqueList,
    SetAttribute,
    StartFrame,
    StopFrame,
    decode_command_at,
    decode_header,
    decode_value,
    encode_command,
    encode_header,
    iter_decode,
)
from pvdkit.ovd.layout import COUNT_KEYS, NO_DATA_TYPE

# The tokenizer compiles numba kernels; it is imported on first use so that code needing only
# the codec (HDF5 readers, the diff of .h5 files) starts without numba.
_TOKENIZER_NAMES = frozenset({
    "CommandTable", "decode_command", "frame_timestamps", "iter_commands", "open_ovd", "tokenize",
})


def __getattr__(name: str):
    if name in _TOKENIZER_NAMES:
        from pvdkit.ovd import tokenizer

        return getattr(tokenizer, name)
    raise AttributeError(f"module 'pvdkit.ovd' has no attribute {name!r}")


__all__ = [
    "COUNT_KEYS", "HEADER_SIZE", "NO_DATA_TYPE", "AddToUniqueList", "CommandTable", "CreateObject",
    "DecodedCommand", "DestroyObject", "RecordMessage", "RegisterAttribute", "RegisterClass",
    "RegisterClassAttribute", "RegisterEnumValue", "RegisterFlagsAttribute",
    "RegisterUniqueListAttribute", "RemoveFromUniqueList", "SetAttribute", "StartFrame", "StopFrame",
    "decode_command", "decode_command_at", "decode_header", "decode_value", "encode_command",
    "encode_header", "frame_timestamps", "iter_commands", "iter_decode", "open_ovd", "tokenize",
]
