"""The ``.ovd`` byte layer: single-command codec and the fast whole-stream tokenizer."""

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

# The tokenizer compiles numba kernels; it is imported on first use so that code needing only
# the codec (HDF5 readers, the diff of .h5 files) starts without numba.
_TOKENIZER_NAMES = frozenset({
    "COUNT_KEYS", "NO_DATA_TYPE", "CommandTable", "decode_command", "frame_timestamps",
    "iter_commands", "open_ovd", "tokenize",
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
